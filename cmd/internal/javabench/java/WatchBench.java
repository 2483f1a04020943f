package javabench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * One subscriber of the watch-delivery benchmark: Curator 5.4 watching a
 * node or a subtree while the Go side (curatorbench) writes.
 *
 * <p>Usage: {@code WatchBench <connectString> <path> <mode>}, mode one of
 * <pre>
 *   persistent   client.watchers().add().withMode(PERSISTENT) on path
 *   recursive    client.watchers().add().withMode(PERSISTENT_RECURSIVE) on path
 *   treecache    a TreeCache on path (one-shot getData and getChildren watches per node)
 *   curatorcache a CuratorCache on path (one persistent recursive watch, data kept)
 *   load         measure a CuratorCache's initial load of path, then wait for stop
 * </pre>
 *
 * <p>In the load mode it prints {@code LOADED <nanos> <heapBytes> <nodes>}: the
 * time from start() to the initialized event, the heap the loaded cache
 * retains (heap used after System.gc() with the cache loaded, less before),
 * and the cache's size; then it waits for {@code stop}.
 *
 * <p>Once the watch is set (for the caches: once they are initialized) it
 * prints {@code READY <sessionId in hex>}. It counts data changes: a
 * NodeDataChanged event (TreeCache NODE_UPDATED, CuratorCache changed) of
 * any path. The end of a burst is a node whose name starts with "end-":
 * created below path (NodeCreated, NODE_ADDED, created) or, for persistent,
 * as a child of path (NodeChildrenChanged). Every arrival time is taken in
 * the callback, as wall-clock nanoseconds since the epoch (the Go side
 * writes with the same clock). Commands on stdin, one a line:
 * <pre>
 *   lat     from now on print {@code E <nanos>} for every data change
 *   burst   from now on count data changes silently; at the end marker print
 *           {@code B <firstNanos> <endNanos> <count>} (first data change, end
 *           marker, data changes since the command)
 *   stop    close and exit 0
 * </pre>
 * Diagnostics go to stderr.
 */
public final class WatchBench {
    private static volatile boolean burst;
    private static long first;
    private static long count;
    private static final Object lock = new Object();

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: WatchBench <connectString> <path> <persistent|recursive|treecache|curatorcache|load>");
            System.exit(2);
        }
        String connectString = args[0];
        String path = args[1];
        String mode = args[2];
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(15_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        int status = 1;
        AutoCloseable sub = null;
        try {
            client.start();
            if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not connect to " + connectString);
            }
            if (mode.equals("load")) {
                sub = load(client, path);
            } else {
                sub = subscribe(client, path, mode);
            }
            long sid = client.getZookeeperClient().getZooKeeper().getSessionId();
            System.out.println("READY " + Long.toHexString(sid));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                switch (line.trim()) {
                    case "lat":
                        burst = false;
                        break;
                    case "burst":
                        synchronized (lock) {
                            first = 0;
                            count = 0;
                        }
                        burst = true;
                        break;
                    case "stop":
                        status = 0;
                        break;
                    default:
                        System.err.println("unknown command " + line);
                }
                if (status == 0) {
                    break;
                }
            }
        } catch (Throwable e) {
            System.err.println("watch bench failed: " + e);
            e.printStackTrace(System.err);
        } finally {
            if (sub != null) {
                sub.close();
            }
            client.close();
        }
        System.out.flush();
        System.exit(status);
    }

    private static AutoCloseable subscribe(CuratorFramework client, String path, String mode) throws Exception {
        switch (mode) {
            case "persistent":
            case "recursive": {
                boolean recursive = mode.equals("recursive");
                Watcher w = (WatchedEvent e) -> {
                    long now = nanos();
                    switch (e.getType()) {
                        case NodeDataChanged:
                            data(now);
                            break;
                        case NodeCreated:
                            if (recursive && isEnd(e.getPath())) {
                                end(now);
                            }
                            break;
                        case NodeChildrenChanged:
                            if (!recursive) {
                                end(now);
                            }
                            break;
                        default:
                    }
                };
                client.watchers().add()
                        .withMode(recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT)
                        .usingWatcher(w).forPath(path);
                return () -> client.watchers().remove(w).quietly().forPath(path);
            }
            case "treecache": {
                CountDownLatch initialized = new CountDownLatch(1);
                TreeCache cache = TreeCache.newBuilder(client, path).build();
                cache.getListenable().addListener((c, e) -> {
                    long now = nanos();
                    if (e.getType() == TreeCacheEvent.Type.NODE_UPDATED) {
                        data(now);
                    } else if (e.getType() == TreeCacheEvent.Type.NODE_ADDED && e.getData() != null
                            && isEnd(e.getData().getPath())) {
                        end(now);
                    } else if (e.getType() == TreeCacheEvent.Type.INITIALIZED) {
                        initialized.countDown();
                    }
                });
                cache.start();
                if (!initialized.await(5, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("TreeCache not initialized within 5 minutes");
                }
                return cache;
            }
            case "curatorcache": {
                CountDownLatch initialized = new CountDownLatch(1);
                CuratorCache cache = CuratorCache.build(client, path);
                cache.listenable().addListener(CuratorCacheListener.builder()
                        .forChanges((before, after) -> data(nanos()))
                        .forCreates(n -> {
                            long now = nanos();
                            if (isEnd(n.getPath())) {
                                end(now);
                            }
                        })
                        .forInitialized(initialized::countDown)
                        .build());
                cache.start();
                if (!initialized.await(5, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("CuratorCache not initialized within 5 minutes");
                }
                return cache;
            }
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    private static AutoCloseable load(CuratorFramework client, String path) throws Exception {
        long h0 = liveHeap();
        CountDownLatch initialized = new CountDownLatch(1);
        CuratorCache cache = CuratorCache.build(client, path);
        cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(initialized::countDown).build());
        long t0 = System.nanoTime();
        cache.start();
        if (!initialized.await(30, TimeUnit.MINUTES)) {
            throw new IllegalStateException("CuratorCache not initialized within 30 minutes");
        }
        long t1 = System.nanoTime();
        long h1 = liveHeap();
        System.out.println("LOADED " + (t1 - t0) + " " + (h1 - h0) + " " + cache.size());
        System.out.flush();
        return cache;
    }

    private static long liveHeap() {
        java.lang.management.MemoryMXBean mem = java.lang.management.ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return mem.getHeapMemoryUsage().getUsed();
    }

    private static boolean isEnd(String path) {
        return path != null && path.substring(path.lastIndexOf('/') + 1).startsWith("end-");
    }

    private static void data(long now) {
        if (!burst) {
            System.out.println("E " + now);
            System.out.flush();
            return;
        }
        synchronized (lock) {
            if (count == 0) {
                first = now;
            }
            count++;
        }
    }

    private static void end(long now) {
        if (!burst) {
            return;
        }
        long f;
        long n;
        synchronized (lock) {
            f = first;
            n = count;
        }
        System.out.println("B " + f + " " + now + " " + n);
        System.out.flush();
    }

    /** Wall-clock nanoseconds since the epoch, as Go's time.Now().UnixNano(). */
    private static long nanos() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
