package curatorjava;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicValue;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

/**
 * Driver commands for Curator's DistributedAtomicLong, DistributedAtomicInteger
 * and DistributedAtomicValue (recipes/atomic's interop tests).
 *
 * <pre>
 * along &lt;id&gt; &lt;path&gt; [lockPath]  a DistributedAtomicLong (RetryNTimes(10, 1ms)),
 *                                  promoted to the InterProcessMutex at lockPath if given
 * aint &lt;id&gt; &lt;path&gt;              a DistributedAtomicInteger
 * avalue &lt;id&gt; &lt;path&gt;            a DistributedAtomicValue (values as UTF-8 text)
 * aget &lt;id&gt;                     -&gt; OK &lt;value&gt;
 * aadd &lt;id&gt; &lt;delta&gt;             add (Long, Integer)
 *                                 -&gt; OK &lt;succeeded&gt; &lt;pre&gt; &lt;post&gt; &lt;optimisticTries&gt; &lt;promotedTries&gt;
 * atrySet &lt;id&gt; &lt;v&gt;              trySet, the same answer
 * acas &lt;id&gt; &lt;expected&gt; &lt;v&gt;      compareAndSet, the same answer
 * aforce &lt;id&gt; &lt;v&gt;               forceSet
 * ainit &lt;id&gt; &lt;v&gt;                initialize -&gt; OK true|false
 * ahammer &lt;id&gt; &lt;connectString&gt; &lt;path&gt; &lt;clients&gt; &lt;n&gt; [lockPath]
 *      start &lt;clients&gt; Curator clients (a session each) on threads, each
 *      incrementing the DistributedAtomicLong at path n times, trying again
 *      until each increment succeeds; returns at once, and emits
 *      "EVENT hammer &lt;id&gt; done &lt;increments&gt; &lt;notSucceeded&gt;" when all are
 *      done, or "EVENT hammer &lt;id&gt; error &lt;exception&gt;".
 * </pre>
 */
final class AtomicCommands implements Driver.Commands {
    private final Driver d;
    private final List<Thread> hammers = new ArrayList<>();

    AtomicCommands(Driver d) {
        this.d = d;
    }

    private static DistributedAtomicLong newLong(CuratorFramework c, String path, String lockPath) {
        RetryNTimes policy = new RetryNTimes(10, 1);
        if (lockPath == null) {
            return new DistributedAtomicLong(c, path, policy);
        }
        return new DistributedAtomicLong(c, path, policy,
                PromotedToLock.builder().lockPath(lockPath).retryPolicy(new RetryNTimes(10, 1)).build());
    }

    private static String answer(AtomicValue<?> v) {
        Object pre = v.preValue();
        Object post = v.postValue();
        if (pre instanceof byte[]) {
            pre = new String((byte[]) pre, StandardCharsets.UTF_8);
        }
        if (post instanceof byte[]) {
            post = new String((byte[]) post, StandardCharsets.UTF_8);
        }
        return v.succeeded() + " " + pre + " " + post + " " + v.getStats().getOptimisticTries() + " "
                + v.getStats().getPromotedLockTries();
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "along":
                if (a.length == 4) {
                    return d.put(a[1], newLong(d.client(), a[2], a[3]));
                }
                Driver.args(a, 2);
                return d.put(a[1], newLong(d.client(), a[2], null));
            case "aint":
                Driver.args(a, 2);
                return d.put(a[1], new DistributedAtomicInteger(d.client(), a[2], new RetryNTimes(10, 1)));
            case "avalue":
                Driver.args(a, 2);
                return d.put(a[1], new DistributedAtomicValue(d.client(), a[2], new RetryNTimes(10, 1)));
            case "aget": {
                Driver.args(a, 1);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicLong) {
                    return String.valueOf(((DistributedAtomicLong) h).get().postValue());
                } else if (h instanceof DistributedAtomicInteger) {
                    return String.valueOf(((DistributedAtomicInteger) h).get().postValue());
                }
                byte[] b = d.get(a[1], DistributedAtomicValue.class).get().postValue();
                return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
            }
            case "aadd": {
                Driver.args(a, 2);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicInteger) {
                    return answer(((DistributedAtomicInteger) h).add(Integer.parseInt(a[2])));
                }
                return answer(d.get(a[1], DistributedAtomicLong.class).add(Long.parseLong(a[2])));
            }
            case "atrySet": {
                Driver.args(a, 2);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicInteger) {
                    return answer(((DistributedAtomicInteger) h).trySet(Integer.parseInt(a[2])));
                } else if (h instanceof DistributedAtomicValue) {
                    return answer(((DistributedAtomicValue) h).trySet(a[2].getBytes(StandardCharsets.UTF_8)));
                }
                return answer(d.get(a[1], DistributedAtomicLong.class).trySet(Long.parseLong(a[2])));
            }
            case "acas": {
                Driver.args(a, 3);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicInteger) {
                    return answer(((DistributedAtomicInteger) h).compareAndSet(
                            Integer.parseInt(a[2]), Integer.parseInt(a[3])));
                } else if (h instanceof DistributedAtomicValue) {
                    return answer(((DistributedAtomicValue) h).compareAndSet(
                            a[2].getBytes(StandardCharsets.UTF_8), a[3].getBytes(StandardCharsets.UTF_8)));
                }
                return answer(d.get(a[1], DistributedAtomicLong.class).compareAndSet(
                        Long.parseLong(a[2]), Long.parseLong(a[3])));
            }
            case "aforce": {
                Driver.args(a, 2);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicInteger) {
                    ((DistributedAtomicInteger) h).forceSet(Integer.parseInt(a[2]));
                } else if (h instanceof DistributedAtomicValue) {
                    ((DistributedAtomicValue) h).forceSet(a[2].getBytes(StandardCharsets.UTF_8));
                } else {
                    d.get(a[1], DistributedAtomicLong.class).forceSet(Long.parseLong(a[2]));
                }
                return "";
            }
            case "ainit": {
                Driver.args(a, 2);
                Object h = d.handle(a[1]);
                if (h instanceof DistributedAtomicInteger) {
                    return String.valueOf(((DistributedAtomicInteger) h).initialize(Integer.parseInt(a[2])));
                } else if (h instanceof DistributedAtomicValue) {
                    return String.valueOf(((DistributedAtomicValue) h).initialize(a[2].getBytes(StandardCharsets.UTF_8)));
                }
                return String.valueOf(d.get(a[1], DistributedAtomicLong.class).initialize(Long.parseLong(a[2])));
            }
            case "ahammer": {
                if (a.length != 6 && a.length != 7) {
                    throw new IllegalArgumentException("ahammer takes 5 or 6 arguments");
                }
                String id = a[1];
                String connect = a[2];
                String path = a[3];
                int clients = Integer.parseInt(a[4]);
                int n = Integer.parseInt(a[5]);
                String lockPath = a.length == 7 ? a[6] : null;
                hammer(id, connect, path, clients, n, lockPath);
                return "";
            }
            default:
                return null;
        }
    }

    private void hammer(String id, String connect, String path, int clients, int n, String lockPath) {
        Thread boss = new Thread(() -> {
            AtomicLong done = new AtomicLong();
            AtomicLong missed = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int i = 0; i < clients; i++) {
                Thread w = new Thread(() -> {
                    try (CuratorFramework c = CuratorFrameworkFactory.builder()
                            .connectString(connect)
                            .sessionTimeoutMs(15000)
                            .connectionTimeoutMs(5000)
                            .retryPolicy(new ExponentialBackoffRetry(50, 10))
                            .build()) {
                        c.start();
                        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("could not connect");
                        }
                        DistributedAtomicLong l = newLong(c, path, lockPath);
                        for (int k = 0; k < n; k++) {
                            for (;;) {
                                try {
                                    if (l.increment().succeeded()) {
                                        done.incrementAndGet();
                                        break;
                                    }
                                    missed.incrementAndGet();
                                } catch (org.apache.zookeeper.KeeperException.ConnectionLossException e) {
                                    // Cut: try again once the client reconnects.
                                    missed.incrementAndGet();
                                }
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "hammer-" + id + "-" + i);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                try {
                    w.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (!failures.isEmpty()) {
                d.emit("EVENT hammer " + id + " error " + failures.get(0).toString().replace('\n', ' '));
            } else {
                d.emit("EVENT hammer " + id + " done " + done.get() + " " + missed.get());
            }
        }, "hammer-" + id);
        boss.setDaemon(true);
        hammers.add(boss);
        boss.start();
    }

    @Override
    public void closeAll() {
        for (Thread t : hammers) {
            t.interrupt();
        }
        hammers.clear();
    }
}
