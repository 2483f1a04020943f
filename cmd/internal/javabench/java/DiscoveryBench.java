package javabench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

/**
 * The service discovery rows of curatorbench -discovery, Curator 5.4's side:
 * one Curator client, one ServiceDiscovery under basePath.
 *
 * <p>Usage: {@code DiscoveryBench <connectString> <basePath> <instances> <picks> <churn> <workers> <phase>},
 * phase one of pick, churn or both:
 * <pre>
 *   pick   registers instances DYNAMIC instances of service "svc", starts a
 *          round-robin ServiceProvider (its ServiceCache loaded), warms the
 *          JIT up with unmeasured picks, then times picks calls of
 *          getInstance() on this thread; bytes are this thread's allocated
 *          bytes (com.sun.management.ThreadMXBean) over the picks
 *   churn  workers threads register and unregister (registerService, then
 *          unregisterService) churn DYNAMIC instances of service "churn",
 *          each its own id, after an unmeasured tenth as many
 * </pre>
 * It prints one JSON line, {@code {"pick_ns":..,"pick_bytes":..,"churn_per_sec":..}}
 * (0 for a phase not run), and exits 0; diagnostics go to stderr.
 */
public final class DiscoveryBench {
    private static volatile long sink;

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: DiscoveryBench <connectString> <basePath> <instances> <picks> <churn> <workers> <pick|churn|both>");
            System.exit(2);
        }
        String connect = args[0];
        String base = args[1];
        int instances = Integer.parseInt(args[2]);
        long picks = Long.parseLong(args[3]);
        int churn = Integer.parseInt(args[4]);
        int workers = Integer.parseInt(args[5]);
        String phase = args[6];
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(30000)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(50, 10))
                .build();
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + connect + " within 60s");
        }
        ServiceDiscovery<Object> sd = ServiceDiscoveryBuilder.builder(Object.class)
                .client(client).basePath(base).build();
        sd.start();
        try {
            double[] pick = {0, 0};
            if (!phase.equals("churn")) {
                pick = pick(sd, instances, picks);
            }
            double perSec = 0;
            if (!phase.equals("pick")) {
                perSec = churn(sd, churn, workers);
            }
            System.out.printf(Locale.ROOT, "{\"pick_ns\":%.3f,\"pick_bytes\":%.3f,\"churn_per_sec\":%.3f}%n",
                    pick[0], pick[1], perSec);
            System.out.flush();
        } finally {
            sd.close();
            client.close();
        }
    }

    private static ServiceInstance<Object> instance(String name, String id) throws Exception {
        return ServiceInstance.<Object>builder().name(name).id(id).address("10.0.0.1").port(8080).build();
    }

    /** Returns ns per pick and bytes allocated per pick. */
    private static double[] pick(ServiceDiscovery<Object> sd, int instances, long picks) throws Exception {
        for (int i = 0; i < instances; i++) {
            sd.registerService(instance("svc", "i" + i));
        }
        ServiceProvider<Object> p = sd.serviceProviderBuilder()
                .serviceName("svc").providerStrategy(new RoundRobinStrategy<>()).build();
        p.start();
        try {
            if (p.getAllInstances().size() != instances) {
                throw new IllegalStateException("the provider offers " + p.getAllInstances().size()
                        + " instances, want " + instances);
            }
            long warm = Math.max(picks, 2_000_000L);
            for (long i = 0; i < warm; i++) {
                sink += p.getInstance().getId().length();
            }
            com.sun.management.ThreadMXBean tmx =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().getId();
            long b0 = tmx.getThreadAllocatedBytes(tid);
            long t0 = System.nanoTime();
            for (long i = 0; i < picks; i++) {
                ServiceInstance<Object> got = p.getInstance();
                if (got == null) {
                    throw new IllegalStateException("no instance picked");
                }
                sink += got.getId().length();
            }
            long t1 = System.nanoTime();
            long b1 = tmx.getThreadAllocatedBytes(tid);
            return new double[] {(double) (t1 - t0) / picks, (double) (b1 - b0) / picks};
        } finally {
            p.close();
            for (int i = 0; i < instances; i++) {
                sd.unregisterService(instance("svc", "i" + i));
            }
        }
    }

    /** Returns instances registered and unregistered per second. */
    private static double churn(ServiceDiscovery<Object> sd, int churn, int workers) throws Exception {
        run(sd, "w", Math.max(churn / 10, workers), workers);
        long t0 = System.nanoTime();
        run(sd, "c", churn, workers);
        long t1 = System.nanoTime();
        return churn / ((t1 - t0) / 1e9);
    }

    private static void run(ServiceDiscovery<Object> sd, String prefix, int n, int workers) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        AtomicInteger next = new AtomicInteger();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                done.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        ServiceInstance<Object> inst = instance("churn", prefix + i);
                        sd.registerService(inst);
                        sd.unregisterService(inst);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
