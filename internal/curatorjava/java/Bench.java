package curatorjava;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Closed-loop lock benchmark for Apache Curator recipes.
 *
 * <p>Usage: {@code Bench <connectString> <path> <mutex|read|write|semv2>
 * <clients> <maxLeases> <warmupSeconds> <measureSeconds>}.
 *
 * <p>Starts one CuratorFramework client and one thread per simulated client;
 * every thread loops acquire then release on the same path as fast as it can.
 * After the warm-up period (not recorded) the measured period starts; an
 * operation counts if it both started and finished inside it. Latency is the
 * time from calling acquire to holding the lock. Prints one JSON object on
 * stdout; diagnostics go to stderr. Exit status 0 on success.
 */
public final class Bench {
    private static final int WARMUP = 0;
    private static final int MEASURE = 1;
    private static final int STOP = 2;
    /** Upper bound for a single acquire, so a broken ensemble cannot hang the run. */
    private static final long ACQUIRE_TIMEOUT_MS = 60_000;

    private static volatile int phase = WARMUP;

    private interface Op {
        /** Acquires, releases and returns the acquire latency in nanoseconds. */
        long run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: Bench <connectString> <path> <mutex|read|write|semv2> "
                    + "<clients> <maxLeases> <warmupSeconds> <measureSeconds>");
            System.exit(2);
        }
        String connectString = args[0];
        String path = args[1];
        String workload = args[2];
        int clients = Integer.parseInt(args[3]);
        int maxLeases = Integer.parseInt(args[4]);
        double warmupSeconds = Double.parseDouble(args[5]);
        double measureSeconds = Double.parseDouble(args[6]);
        if (clients < 1 || maxLeases < 1 || warmupSeconds < 0 || measureSeconds <= 0) {
            System.err.println("invalid arguments: need clients>=1, maxLeases>=1, warmup>=0, measure>0");
            System.exit(2);
        }
        switch (workload) {
            case "mutex": case "read": case "write": case "semv2":
                break;
            default:
                System.err.println("unknown workload " + workload + " (want mutex, read, write or semv2)");
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
            status = run(frameworks, path, workload, clients, maxLeases, warmupSeconds, measureSeconds);
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
            int maxLeases, double warmupSeconds, double measureSeconds) throws Exception {
        Op[] ops = new Op[clients];
        for (int i = 0; i < clients; i++) {
            ops[i] = newOp(frameworks.get(i), path, workload, maxLeases);
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
                        if (measured && phase == MEASURE) {
                            if (n == lat.length) {
                                lat = Arrays.copyOf(lat, n * 2);
                            }
                            lat[n++] = nanos;
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    latencies[w] = lat;
                    counts[w] = n;
                    done.countDown();
                }
            }, "bench-" + i);
            workers[i].start();
        }

        sleepUnlessFailed(warmupSeconds, failure);
        long start = System.nanoTime();
        phase = MEASURE;
        sleepUnlessFailed(measureSeconds, failure);
        phase = STOP;
        long end = System.nanoTime();
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
        double seconds = (end - start) / 1e9;
        double sum = 0;
        for (long v : all) {
            sum += v;
        }
        System.out.println(String.format(Locale.ROOT,
                "{\"workload\":\"%s\",\"clients\":%d,\"max_leases\":%d,\"ops\":%d,\"seconds\":%.3f,"
                        + "\"throughput\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
                        + "\"max_ms\":%.3f,\"mean_ms\":%.3f}",
                workload, clients, maxLeases, total, seconds, total / seconds,
                ms(percentile(all, 0.50)), ms(percentile(all, 0.90)), ms(percentile(all, 0.99)),
                ms(total == 0 ? 0 : all[total - 1]), total == 0 ? 0.0 : sum / total / 1e6));
        return 0;
    }

    private static Op newOp(CuratorFramework client, String path, String workload, int maxLeases) {
        switch (workload) {
            case "mutex":
                return lockOp(new InterProcessMutex(client, path));
            case "read":
                return lockOp(new InterProcessReadWriteLock(client, path).readLock());
            case "write":
                return lockOp(new InterProcessReadWriteLock(client, path).writeLock());
            default: {
                InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, maxLeases);
                return () -> {
                    long t0 = System.nanoTime();
                    Lease lease = sem.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    long t1 = System.nanoTime();
                    if (lease == null) {
                        throw new IllegalStateException("semaphore acquire timed out after " + ACQUIRE_TIMEOUT_MS + "ms");
                    }
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
            lock.release();
            return t1 - t0;
        };
    }

    private static void sleepUnlessFailed(double seconds, AtomicReference<Throwable> failure)
            throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long left;
        while ((left = deadline - System.nanoTime()) > 0 && failure.get() == null) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, 50_000_000L));
        }
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
