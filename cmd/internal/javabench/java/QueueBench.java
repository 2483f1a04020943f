package javabench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The queue rows of curatorbench -queue, Curator 5.4's side: one Curator
 * client (one session) per producer and per consumer, a thread each.
 *
 * <p>Usage: {@code QueueBench <connectString> <path> <mode> <producers> <consumers> <items> <rate>}.
 * The mode is {@code queue} (DistributedQueue on path/q), {@code queue-lock}
 * (the same with lockPath path/locks) or {@code simple}
 * (SimpleDistributedQueue on path/q: offer, take). Producers put with
 * putInBackground(false), so a put returns once its node exists. Each
 * producer puts items items (paced to rate items/s in all; 0: back to
 * back), each carrying System.nanoTime() at put's call, after an unmeasured
 * tenth as many; a consumer's latency is taken as it receives the item. It
 * prints one JSON line, {@code {"items_per_sec":..,"p50_ms":..,"p99_ms":..}}:
 * the measured items over the time from the first put to the last
 * consumption, and nearest-rank percentiles of the put-to-consume latency.
 */
public final class QueueBench {
    private static final int ITEM_SIZE = 16;

    /** One phase's consumptions. */
    private static final class Sink {
        final long[] lat;
        int n;
        long last;
        final CountDownLatch done;

        Sink(int want) {
            lat = new long[want];
            done = new CountDownLatch(want);
        }

        synchronized void add(byte[] item) {
            long now = System.nanoTime();
            if (item.length != ITEM_SIZE) {
                throw new IllegalStateException("item of " + item.length + " bytes");
            }
            if (n >= lat.length) {
                throw new IllegalStateException("consumed more than the " + lat.length + " items put");
            }
            lat[n++] = now - ByteBuffer.wrap(item).getLong();
            last = now;
            done.countDown();
        }
    }

    private static volatile Sink sink;

    private static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        @Override
        public byte[] serialize(byte[] item) {
            return item;
        }

        @Override
        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    private interface Put {
        void put(byte[] item) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: QueueBench <connectString> <path> <queue|queue-lock|simple> <producers> <consumers> <items> <rate>");
            System.exit(2);
        }
        String connect = args[0];
        String path = args[1];
        String mode = args[2];
        int producers = Integer.parseInt(args[3]);
        int consumers = Integer.parseInt(args[4]);
        int items = Integer.parseInt(args[5]);
        double rate = Double.parseDouble(args[6]);
        if (!mode.equals("queue") && !mode.equals("queue-lock") && !mode.equals("simple")) {
            throw new IllegalArgumentException("mode " + mode);
        }
        String queuePath = path + "/q";
        List<CuratorFramework> cs = new ArrayList<>();
        List<AutoCloseable> toClose = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(producers + consumers);
        try {
            for (int i = 0; i < producers + consumers; i++) {
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
            List<Put> puts = new ArrayList<>();
            for (int i = 0; i < producers; i++) {
                CuratorFramework c = cs.get(i);
                if (mode.equals("simple")) {
                    SimpleDistributedQueue q = new SimpleDistributedQueue(c, queuePath);
                    puts.add(q::offer);
                } else {
                    DistributedQueue<byte[]> q = builder(c, null, queuePath, mode, path).buildQueue();
                    q.start();
                    toClose.add(q);
                    puts.add(q::put);
                }
            }
            for (int i = 0; i < consumers; i++) {
                CuratorFramework c = cs.get(producers + i);
                if (mode.equals("simple")) {
                    SimpleDistributedQueue q = new SimpleDistributedQueue(c, queuePath);
                    pool.submit(() -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            byte[] item = q.take();
                            sink.add(item);
                        }
                        return null;
                    });
                } else {
                    QueueConsumer<byte[]> consumer = new QueueConsumer<byte[]>() {
                        @Override
                        public void consumeMessage(byte[] item) {
                            sink.add(item);
                        }

                        @Override
                        public void stateChanged(CuratorFramework client, ConnectionState newState) {
                        }
                    };
                    DistributedQueue<byte[]> q = builder(c, consumer, queuePath, mode, path).buildQueue();
                    q.start();
                    toClose.add(q);
                }
            }
            phase(pool, puts, Math.max(items / 10, 1), rate);
            long[] m = phase(pool, puts, items, rate);
            Sink k = sink;
            long[] lat = Arrays.copyOf(k.lat, k.n);
            Arrays.sort(lat);
            double perSec = (double) lat.length / ((m[1] - m[0]) / 1e9);
            System.out.printf(Locale.ROOT, "{\"items_per_sec\":%.3f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}%n",
                    perSec, pct(lat, 0.50) / 1e6, pct(lat, 0.99) / 1e6);
            System.out.flush();
        } finally {
            pool.shutdownNow();
            for (AutoCloseable q : toClose) {
                q.close();
            }
            for (CuratorFramework c : cs) {
                c.close();
            }
        }
    }

    private static QueueBuilder<byte[]> builder(CuratorFramework c, QueueConsumer<byte[]> consumer, String queuePath,
            String mode, String path) {
        QueueBuilder<byte[]> b = QueueBuilder.builder(c, consumer, BYTES, queuePath).putInBackground(false);
        if (mode.equals("queue-lock")) {
            b = b.lockPath(path + "/locks");
        }
        return b;
    }

    /**
     * Every producer puts n items; returns once all are consumed, with the
     * phase's start and its last consumption (System.nanoTime()).
     */
    private static long[] phase(ExecutorService pool, List<Put> puts, int n, double rate) throws Exception {
        Sink k = new Sink(n * puts.size());
        sink = k;
        long start = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (int p = 0; p < puts.size(); p++) {
            Put put = puts.get(p);
            int producer = p;
            int producers = puts.size();
            done.add(pool.submit(() -> {
                for (int i = 0; i < n; i++) {
                    if (rate > 0) {
                        long at = start + (long) ((double) (i * producers + producer) / rate * 1e9);
                        long d = at - System.nanoTime();
                        if (d > 0) {
                            TimeUnit.NANOSECONDS.sleep(d);
                        }
                    }
                    ByteBuffer b = ByteBuffer.allocate(ITEM_SIZE);
                    b.putLong(System.nanoTime()).putInt(producer).putInt(i);
                    put.put(b.array());
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        if (!k.done.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException((k.lat.length - k.done.getCount()) + " of " + k.lat.length + " items consumed in 120s");
        }
        synchronized (k) {
            return new long[] {start, k.last};
        }
    }

    private static long pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
