package javabench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

/**
 * The atomic counter and double barrier rows of curatorbench -atomic,
 * Curator 5.4's side: one Curator client (one session) per contending
 * client or member, on a thread each.
 *
 * <p>Usage: {@code CountersBench <connectString> <path> <clients> <n> <phase>}:
 * <pre>
 *   increment  clients DistributedAtomicLongs on path (one per thread, threads
 *              per client as the 6th argument, 1 by default; RetryNTimes(10, 1 ms)
 *              as the optimistic policy, no promotion) each increment n
 *              times, trying again until each succeeds, after an unmeasured
 *              tenth as many; prints increments per second and the final
 *              value read back
 *   barrier    clients DistributedDoubleBarrier members for clients members
 *              go through n rounds, round i on path/r&lt;i&gt; (a barrier of its
 *              own, so no round sees another's ready node): enter, leave;
 *              after an unmeasured round, prints the mean round time
 * </pre>
 * It prints one JSON line, {@code {"increments_per_sec":..,"final":..,"round_ms":..}}
 * (0 for what the phase does not measure), and exits 0; diagnostics go to stderr.
 */
public final class CountersBench {
    public static void main(String[] args) throws Exception {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: CountersBench <connectString> <path> <clients> <n> <increment|barrier> [threads per client]");
            System.exit(2);
        }
        int perClient = args.length == 6 ? Integer.parseInt(args[5]) : 1;
        String connect = args[0];
        String path = args[1];
        int clients = Integer.parseInt(args[2]);
        int n = Integer.parseInt(args[3]);
        String phase = args[4];
        List<CuratorFramework> cs = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients * perClient);
        try {
            for (int i = 0; i < clients; i++) {
                CuratorFramework c = CuratorFrameworkFactory.builder()
                        .connectString(connect)
                        .sessionTimeoutMs(30000)
                        .connectionTimeoutMs(15000)
                        .retryPolicy(new ExponentialBackoffRetry(50, 10))
                        .build();
                c.start();
                if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("not connected to " + connect + " within 60s");
                }
                cs.add(c);
            }
            double perSec = 0, roundMs = 0;
            long fin = 0;
            if (phase.equals("increment")) {
                increments(pool, cs, path, Math.max(n / 10, 1), perClient);
                long t0 = System.nanoTime();
                increments(pool, cs, path, n, perClient);
                long t1 = System.nanoTime();
                perSec = (double) clients * n / ((t1 - t0) / 1e9);
                AtomicValue<Long> v = new DistributedAtomicLong(cs.get(0), path, new RetryNTimes(10, 1)).get();
                if (!v.succeeded()) {
                    throw new IllegalStateException("cannot read the counter back");
                }
                fin = v.postValue();
            } else if (phase.equals("barrier")) {
                rounds(pool, cs, path, "w", 1);
                long t0 = System.nanoTime();
                rounds(pool, cs, path, "r", n);
                long t1 = System.nanoTime();
                roundMs = (t1 - t0) / 1e6 / n;
            } else {
                throw new IllegalArgumentException("phase " + phase + ": increment or barrier");
            }
            System.out.printf(Locale.ROOT, "{\"increments_per_sec\":%.3f,\"final\":%d,\"round_ms\":%.3f}%n",
                    perSec, fin, roundMs);
            System.out.flush();
        } finally {
            pool.shutdownNow();
            for (CuratorFramework c : cs) {
                c.close();
            }
        }
    }

    /**
     * Each client increments n times, by perClient threads (each with a
     * DistributedAtomicLong of its own), each increment tried until it
     * succeeds.
     */
    private static void increments(ExecutorService pool, List<CuratorFramework> cs, String path, int n, int perClient)
            throws Exception {
        CyclicBarrier start = new CyclicBarrier(cs.size() * perClient);
        List<Future<?>> done = new ArrayList<>();
        for (CuratorFramework c : cs) {
            for (int t = 0; t < perClient; t++) {
                int mine = n / perClient + (t < n % perClient ? 1 : 0);
                done.add(pool.submit(() -> {
                    DistributedAtomicLong l = new DistributedAtomicLong(c, path, new RetryNTimes(10, 1));
                    start.await();
                    for (int i = 0; i < mine; i++) {
                        while (!l.increment().succeeded()) {
                            // contention outlasted the policy: try again
                        }
                    }
                    return null;
                }));
            }
        }
        for (Future<?> f : done) {
            f.get();
        }
    }

    /** Every member goes through n rounds, round i on path/prefix+i. */
    private static void rounds(ExecutorService pool, List<CuratorFramework> cs, String path, String prefix, int n)
            throws Exception {
        List<Future<?>> done = new ArrayList<>();
        for (CuratorFramework c : cs) {
            done.add(pool.submit(() -> {
                for (int i = 0; i < n; i++) {
                    DistributedDoubleBarrier b = new DistributedDoubleBarrier(c, path + "/" + prefix + i, cs.size());
                    if (!b.enter(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("enter timed out");
                    }
                    if (!b.leave(60, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("leave timed out");
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
    }
}
