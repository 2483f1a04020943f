package javabench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Closed-loop lock benchmark for Apache Curator recipes.
 *
 * <p>Usage: {@code Bench <connectString> <path> <mutex|read|write|semv2|election>
 * <clients> <maxLeases> <holdMillis> [threadsPerClient]}.
 *
 * <p>Starts one CuratorFramework client and one thread per simulated client
 * (threadsPerClient threads, each with a recipe instance of its own, sharing
 * each client when given);
 * every thread loops acquire, hold for holdMillis (0: release at once), release
 * on the same path as fast as it can. Once every client is connected and the
 * threads run (the warm-up, not recorded) it prints {@code READY}. The caller
 * then drives the phases with one command per line on stdin, each answered
 * with {@code AT <phase> <processCpuNanos> <cycles>}: the JVM's process CPU
 * time (OperatingSystemMXBean) at the switch and the cycles completed in the
 * phase that ended:
 *
 * <pre>
 *   measure   start the measured period
 *   count     end it; the loop goes on unmeasured (the caller counts requests)
 *   stop      end the run
 * </pre>
 *
 * <p>A cycle counts in the measured period if it both started and finished
 * inside it. Latency is the time from calling acquire to holding the lock;
 * in the election mode (a LeaderLatch per cycle: start, await, hold, close)
 * it is the fail-over, from the previous leader's call to close to the
 * return of this leader's await.
 * After stop it prints one JSON object on stdout; diagnostics go to stderr.
 * Exit status 0 on success.
 */
public final class Bench {
    private static final int WARMUP = 0;
    private static final int MEASURE = 1;
    private static final int COUNT = 2;
    private static final int STOP = 3;
    /** Upper bound for a single acquire, so a broken ensemble cannot hang the run. */
    private static final long ACQUIRE_TIMEOUT_MS = 60_000;

    private static volatile int phase = WARMUP;
    /** Cycles completed since the last phase switch. */
    private static final AtomicLong completed = new AtomicLong();
    private static long holdNanos;
    /** Election mode: System.nanoTime() when the last leader called close; 0 before the first. */
    private static final AtomicLong lastResign = new AtomicLong();

    private interface Op {
        /** Acquires, releases and returns the acquire latency in nanoseconds. */
        long run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6 && args.length != 7) {
            System.err.println("usage: Bench <connectString> <path> <mutex|read|write|semv2|election> "
                    + "<clients> <maxLeases> <holdMillis> [threadsPerClient]");
            System.exit(2);
        }
        String connectString = args[0];
        String path = args[1];
        String workload = args[2];
        int clients = Integer.parseInt(args[3]);
        int maxLeases = Integer.parseInt(args[4]);
        double holdMillis = Double.parseDouble(args[5]);
        int perClient = args.length == 7 ? Integer.parseInt(args[6]) : 1;
        if (clients < 1 || maxLeases < 1 || holdMillis < 0 || perClient < 1) {
            System.err.println("invalid arguments: need clients>=1, maxLeases>=1, holdMillis>=0");
            System.exit(2);
        }
        holdNanos = (long) (holdMillis * 1e6);
        switch (workload) {
            case "mutex": case "read": case "write": case "semv2": case "election":
                break;
            default:
                System.err.println("unknown workload " + workload + " (want mutex, read, write, semv2 or election)");
                System.exit(2);
        }

        List<CuratorFramework> frameworks = new ArrayList<>();
        int status = 1;
        try {
            for (int i = 0; i < clients; i++) {
                CuratorFramework c = CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .sessionTimeoutMs(30_000)
                        .connectionTimeoutMs(15_000)
                        .retryPolicy(new ExponentialBackoffRetry(100, 3))
                        .build();
                frameworks.add(c);
                c.start();
            }
            for (CuratorFramework c : frameworks) {
                if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("could not connect to " + connectString);
                }
            }
            status = run(frameworks, path, workload, clients * perClient, perClient, maxLeases);
        } catch (Throwable e) {
            System.err.println("bench failed: " + e);
            e.printStackTrace(System.err);
        } finally {
            for (CuratorFramework c : frameworks) {
                c.close();
            }
        }
        System.out.flush();
        System.exit(status);
    }

    private static int run(List<CuratorFramework> frameworks, String path, String workload, int clients,
            int perClient, int maxLeases) throws Exception {
        // clients is the number of worker threads here: perClient of
        // them share each Curator client, each with a recipe of its own.
        Op[] ops = new Op[clients];
        for (int i = 0; i < clients; i++) {
            ops[i] = newOp(frameworks.get(i / perClient), path, workload, maxLeases);
        }
        long[][] latencies = new long[clients][];
        int[] counts = new int[clients];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(clients);
        Thread[] workers = new Thread[clients];
        for (int i = 0; i < clients; i++) {
            final int w = i;
            workers[i] = new Thread(() -> {
                long[] lat = new long[1024];
                int n = 0;
                try {
                    while (phase != STOP && failure.get() == null) {
                        boolean measured = phase == MEASURE;
                        long nanos = ops[w].run();
                        completed.incrementAndGet();
                        if (measured && phase == MEASURE) {
                            if (n == lat.length) {
                                lat = Arrays.copyOf(lat, n * 2);
                            }
                            lat[n++] = nanos;
                        }
                    }
                } catch (Throwable e) {
                    if (failure.compareAndSet(null, e)) {
                        // The caller waits on stdout: tell it at once.
                        System.out.println("FAILED " + String.valueOf(e).replace('\n', ' '));
                        System.out.flush();
                    }
                } finally {
                    latencies[w] = lat;
                    counts[w] = n;
                    done.countDown();
                }
            }, "bench-" + i);
            workers[i].start();
        }

        cpuNanos(); // loads the management classes now, not at the first switch
        System.out.println("READY");
        System.out.flush();
        long start = 0;
        long end = 0;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; phase != STOP && (line = in.readLine()) != null; ) {
            int next;
            switch (line.trim()) {
                case "measure": next = MEASURE; break;
                case "count": next = COUNT; break;
                case "stop": next = STOP; break;
                default:
                    System.err.println("unknown command " + line);
                    continue;
            }
            long now = System.nanoTime();
            if (next == MEASURE) {
                start = now;
            } else if (phase == MEASURE) {
                end = now;
            }
            phase = next;
            long cycles = completed.getAndSet(0);
            System.out.println("AT " + line.trim() + " " + cpuNanos() + " " + cycles);
            System.out.flush();
        }
        if (phase != STOP) {
            // stdin closed: the caller is gone.
            phase = STOP;
            System.err.println("stdin closed before stop");
            done.await();
            return 1;
        }
        if (end == 0) {
            end = System.nanoTime();
        }
        done.await();
        if (failure.get() != null) {
            Throwable e = failure.get();
            System.err.println("worker failed: " + e);
            e.printStackTrace(System.err);
            return 1;
        }

        int total = 0;
        for (int c : counts) {
            total += c;
        }
        long[] all = new long[total];
        int off = 0;
        for (int i = 0; i < clients; i++) {
            System.arraycopy(latencies[i], 0, all, off, counts[i]);
            off += counts[i];
        }
        Arrays.sort(all);
        writeLatencies(all);
        double seconds = start == 0 ? 0 : (end - start) / 1e9;
        double sum = 0;
        for (long v : all) {
            sum += v;
        }
        System.out.println(String.format(Locale.ROOT,
                "{\"workload\":\"%s\",\"clients\":%d,\"max_leases\":%d,\"ops\":%d,\"seconds\":%.3f,"
                        + "\"throughput\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
                        + "\"max_ms\":%.3f,\"mean_ms\":%.3f}",
                workload, clients, maxLeases, total, seconds, seconds > 0 ? total / seconds : 0,
                ms(percentile(all, 0.50)), ms(percentile(all, 0.90)), ms(percentile(all, 0.99)),
                ms(total == 0 ? 0 : all[total - 1]), total == 0 ? 0.0 : sum / total / 1e6));
        return 0;
    }

    /**
     * Writes every measured latency (nanoseconds, one a line) to the file the
     * system property bench.latencies names, if set: a caller that runs
     * several JVMs merges them into one set of percentiles.
     */
    private static void writeLatencies(long[] all) throws java.io.IOException {
        String file = System.getProperty("bench.latencies");
        if (file == null || file.isEmpty()) {
            return;
        }
        StringBuilder sb = new StringBuilder(all.length * 9);
        for (long v : all) {
            sb.append(v).append('\n');
        }
        java.nio.file.Files.write(java.nio.file.Paths.get(file), sb.toString().getBytes(StandardCharsets.US_ASCII));
    }

    private static Op newOp(CuratorFramework client, String path, String workload, int maxLeases) {
        switch (workload) {
            case "mutex":
                return lockOp(new InterProcessMutex(client, path));
            case "read":
                return lockOp(new InterProcessReadWriteLock(client, path).readLock());
            case "write":
                return lockOp(new InterProcessReadWriteLock(client, path).writeLock());
            case "election":
                return () -> electionCycle(client, path);
            default: {
                InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, maxLeases);
                return () -> {
                    long t0 = System.nanoTime();
                    Lease lease = sem.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    long t1 = System.nanoTime();
                    if (lease == null) {
                        throw new IllegalStateException("semaphore acquire timed out after " + ACQUIRE_TIMEOUT_MS + "ms");
                    }
                    hold();
                    sem.returnLease(lease);
                    return t1 - t0;
                };
            }
        }
    }

    private static Op lockOp(InterProcessMutex lock) {
        return () -> {
            long t0 = System.nanoTime();
            boolean ok = lock.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            long t1 = System.nanoTime();
            if (!ok) {
                throw new IllegalStateException("acquire timed out after " + ACQUIRE_TIMEOUT_MS + "ms");
            }
            hold();
            lock.release();
            return t1 - t0;
        };
    }

    /**
     * One term of a LeaderLatch (a latch cannot be started again after
     * close): start, await leadership, lead for holdNanos, close. Returns
     * the fail-over, from the previous leader's close call to our await's
     * return (the await's own latency before anyone resigned).
     */
    private static long electionCycle(CuratorFramework client, String path) throws Exception {
        LeaderLatch latch = new LeaderLatch(client, path);
        long t0 = System.nanoTime();
        latch.start();
        try {
            if (!latch.await(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("leader latch await timed out after " + ACQUIRE_TIMEOUT_MS + "ms");
            }
            long t1 = System.nanoTime();
            long prev = lastResign.get();
            long nanos = prev == 0 ? t1 - t0 : t1 - prev;
            hold();
            lastResign.set(System.nanoTime());
            return nanos;
        } finally {
            latch.close();
        }
    }

    /** The critical section: holdNanos of doing nothing while holding. */
    private static void hold() {
        if (holdNanos <= 0) {
            return;
        }
        long deadline = System.nanoTime() + holdNanos;
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    /** The JVM's process CPU time (user + system, all threads), or -1. */
    private static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    private static long percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int idx = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
