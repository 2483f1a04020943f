package curatorjava;

import java.io.Closeable;
import java.util.Iterator;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Driver commands for Curator's queues (recipes/queue's interop tests).
 * Items travel as "b:" followed by their base64 (so an empty item is a
 * word too); a multi put takes them comma-separated.
 *
 * <pre>
 * dqproducer &lt;id&gt; &lt;path&gt; &lt;lockPath|-&gt;    a started producer-only DistributedQueue
 *                                        (foreground puts)
 * dqconsumer &lt;id&gt; &lt;path&gt; &lt;lockPath|-&gt; &lt;ok|fail&gt;
 *                                        a started DistributedQueue whose consumer
 *                                        emits "EVENT dqitem &lt;id&gt; b:&lt;base64&gt;"
 *                                        per item and then returns (ok), throws
 *                                        (fail: Curator requeues or drops), or
 *                                        waits for "dqrelease &lt;id&gt;" (hold); with
 *                                        failonce:b:&lt;base64&gt; it throws the first time
 *                                        it is given that item, and returns otherwise;
 *                                        holdfailonce:b:&lt;base64&gt; holds, then fails once
 * dqrelease &lt;id&gt;                        let a holding consumer's items go, from now on
 * dqhalt                                 end the JVM at once, as kill -9 would: the
 *                                        session stays until the server expires it
 * dqput &lt;id&gt; b:&lt;base64&gt;                 put one item
 * dqputmulti &lt;id&gt; b:&lt;x&gt;,b:&lt;y&gt;,...      putMulti
 * dqclose &lt;id&gt;                          close a queue
 * sq &lt;id&gt; &lt;path&gt;                        a SimpleDistributedQueue
 * sqoffer &lt;id&gt; b:&lt;base64&gt;               offer
 * sqpoll &lt;id&gt;                           poll      -&gt; OK b:&lt;base64&gt;|none
 * sqpeek &lt;id&gt;                           peek      -&gt; OK b:&lt;base64&gt;|none
 * sqtake &lt;id&gt; &lt;timeoutMs&gt;               poll(timeout) on the command thread
 *                                        -&gt; OK b:&lt;base64&gt;|none
 * vq &lt;id&gt; &lt;idq|priority|delay&gt; &lt;path&gt; &lt;lockPath|-&gt; &lt;-|ok|failonce:b:&lt;base64&gt;&gt;
 *                                        a started DistributedIdQueue,
 *                                        DistributedPriorityQueue (minItemsBeforeRefresh 0)
 *                                        or DistributedDelayQueue; "-": producer only,
 *                                        else a consumer as dqconsumer's (dqitem events)
 * vqput &lt;id&gt; &lt;arg&gt; b:&lt;base64&gt;           put with the item's id, priority or
 *                                        delayUntilEpoch (ms)
 * vqputmulti &lt;id&gt; &lt;arg&gt; b:&lt;x&gt;,b:&lt;y&gt;,... putMulti with a priority or delayUntilEpoch
 * vqremove &lt;id&gt; &lt;itemId&gt;                DistributedIdQueue.remove -&gt; OK &lt;count&gt;
 * vqclose &lt;id&gt;                          close it
 * </pre>
 */
final class QueueCommands implements Driver.Commands {
    private final Driver d;
    private final Map<String, Closeable> queues = new HashMap<>();
    private final Map<String, java.util.concurrent.CountDownLatch> holds = new java.util.concurrent.ConcurrentHashMap<>();

    QueueCommands(Driver d) {
        this.d = d;
    }

    /** Items as they are: bytes (SharderCommands uses it too). */
    static final QueueSerializer<byte[]> RAW = new QueueSerializer<byte[]>() {
        @Override
        public byte[] serialize(byte[] item) {
            return item;
        }

        @Override
        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    static byte[] decode(String word) {
        if (!word.startsWith("b:")) {
            throw new IllegalArgumentException("an item is b:<base64>, got " + word);
        }
        return Base64.getDecoder().decode(word.substring(2));
    }

    static String encode(byte[] b) {
        return b == null ? "none" : "b:" + Base64.getEncoder().encodeToString(b);
    }

    private DistributedQueue<byte[]> queue(String id, String path, String lockPath, QueueConsumer<byte[]> consumer)
            throws Exception {
        d.fresh(id);
        QueueBuilder<byte[]> b = QueueBuilder.builder(d.client(), consumer, RAW, path).putInBackground(false);
        if (!lockPath.equals("-")) {
            b = b.lockPath(lockPath);
        }
        DistributedQueue<byte[]> q = b.buildQueue();
        q.start();
        queues.put(id, q);
        d.put(id, q);
        return q;
    }

    /**
     * A consumer as dqconsumer's, told by spec (ok, fail, hold, failonce:b:..., or
     * holdfailonce:b:...: hold until released, then fail once on that item).
     */
    private QueueConsumer<byte[]> consumer(final String id, String spec) {
        final boolean fail = spec.equals("fail");
        final boolean holding = spec.equals("hold") || spec.startsWith("holdfailonce:");
        if (spec.startsWith("hold") && !spec.equals("hold")) {
            spec = spec.substring("hold".length());
        }
        final byte[] failOnce = spec.startsWith("failonce:") ? decode(spec.substring("failonce:".length())) : null;
        final java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(holding ? 1 : 0);
        holds.put(id, hold);
        return new QueueConsumer<byte[]>() {
            @Override
            public void consumeMessage(byte[] message) throws Exception {
                d.emit("EVENT dqitem " + id + " " + encode(message));
                hold.await();
                if (failOnce != null && java.util.Arrays.equals(failOnce, message) && failed.compareAndSet(false, true)) {
                    throw new Exception("consumer told to fail once");
                }
                if (fail) {
                    throw new Exception("consumer told to fail");
                }
            }

            @Override
            public void stateChanged(CuratorFramework client, ConnectionState newState) {}
        };
    }

    private static MultiItem<byte[]> multi(String words) {
        final List<byte[]> items = new ArrayList<>();
        for (String w : words.split(",")) {
            items.add(decode(w));
        }
        final Iterator<byte[]> it = items.iterator();
        return new MultiItem<byte[]>() {
            @Override
            public byte[] nextItem() {
                return it.hasNext() ? it.next() : null;
            }
        };
    }

    /** vq: one of the variants, started, kept under id. */
    private void variant(String id, String kind, String path, String lockPath, String spec) throws Exception {
        d.fresh(id);
        QueueConsumer<byte[]> c = spec.equals("-") ? null : consumer(id, spec);
        QueueBuilder<byte[]> b = QueueBuilder.builder(d.client(), c, RAW, path).putInBackground(false);
        if (!lockPath.equals("-")) {
            b = b.lockPath(lockPath);
        }
        Closeable q;
        switch (kind) {
            case "idq": {
                DistributedIdQueue<byte[]> x = b.buildIdQueue();
                x.start();
                q = x;
                break;
            }
            case "priority": {
                DistributedPriorityQueue<byte[]> x = b.buildPriorityQueue(0);
                x.start();
                q = x;
                break;
            }
            case "delay": {
                DistributedDelayQueue<byte[]> x = b.buildDelayQueue();
                x.start();
                q = x;
                break;
            }
            default:
                throw new IllegalArgumentException("no queue kind " + kind);
        }
        queues.put(id, q);
        d.put(id, q);
    }

    @SuppressWarnings("unchecked")
    private void variantPut(String id, String arg, String words, boolean many) throws Exception {
        Object h = d.handle(id);
        if (h instanceof DistributedIdQueue && !many) {
            ((DistributedIdQueue<byte[]>) h).put(decode(words), arg);
        } else if (h instanceof DistributedPriorityQueue) {
            DistributedPriorityQueue<byte[]> q = (DistributedPriorityQueue<byte[]>) h;
            if (many) {
                q.putMulti(multi(words), Integer.parseInt(arg));
            } else {
                q.put(decode(words), Integer.parseInt(arg));
            }
        } else if (h instanceof DistributedDelayQueue) {
            DistributedDelayQueue<byte[]> q = (DistributedDelayQueue<byte[]>) h;
            if (many) {
                q.putMulti(multi(words), Long.parseLong(arg));
            } else {
                q.put(decode(words), Long.parseLong(arg));
            }
        } else {
            throw new IllegalArgumentException(id + " takes no such put");
        }
    }

    @SuppressWarnings("unchecked")
    private DistributedQueue<byte[]> dq(String id) {
        return (DistributedQueue<byte[]>) d.get(id, DistributedQueue.class);
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "dqproducer":
                Driver.args(a, 3);
                queue(a[1], a[2], a[3], null);
                return "";
            case "dqconsumer":
                Driver.args(a, 4);
                queue(a[1], a[2], a[3], consumer(a[1], a[4]));
                return "";
            case "dqput":
                Driver.args(a, 2);
                dq(a[1]).put(decode(a[2]));
                return "";
            case "dqputmulti":
                Driver.args(a, 2);
                dq(a[1]).putMulti(multi(a[2]));
                return "";
            case "vq":
                Driver.args(a, 5);
                variant(a[1], a[2], a[3], a[4], a[5]);
                return "";
            case "vqput":
                Driver.args(a, 3);
                variantPut(a[1], a[2], a[3], false);
                return "";
            case "vqputmulti":
                Driver.args(a, 3);
                variantPut(a[1], a[2], a[3], true);
                return "";
            case "vqremove": {
                Driver.args(a, 2);
                @SuppressWarnings("unchecked")
                DistributedIdQueue<byte[]> q = (DistributedIdQueue<byte[]>) d.get(a[1], DistributedIdQueue.class);
                return Integer.toString(q.remove(a[2]));
            }
            case "vqclose":
                Driver.args(a, 1);
                d.get(a[1], Closeable.class).close();
                queues.remove(a[1]);
                d.forget(a[1]);
                return "";
            case "dqrelease": {
                Driver.args(a, 1);
                java.util.concurrent.CountDownLatch l = holds.get(a[1]);
                if (l == null) {
                    throw new IllegalArgumentException("no consumer " + a[1]);
                }
                l.countDown();
                return "";
            }
            case "dqhalt":
                Driver.args(a, 0);
                d.emit("OK"); // the answer, before the JVM goes
                Runtime.getRuntime().halt(1);
                return "";
            case "dqclose":
                Driver.args(a, 1);
                dq(a[1]).close();
                queues.remove(a[1]);
                d.forget(a[1]);
                return "";
            case "sq":
                Driver.args(a, 2);
                return d.put(a[1], new SimpleDistributedQueue(d.client(), a[2]));
            case "sqoffer":
                Driver.args(a, 2);
                d.get(a[1], SimpleDistributedQueue.class).offer(decode(a[2]));
                return "";
            case "sqpoll":
                Driver.args(a, 1);
                return encode(d.get(a[1], SimpleDistributedQueue.class).poll());
            case "sqpeek":
                Driver.args(a, 1);
                return encode(d.get(a[1], SimpleDistributedQueue.class).peek());
            case "sqtake":
                Driver.args(a, 2);
                return encode(d.get(a[1], SimpleDistributedQueue.class).poll(Long.parseLong(a[2]), TimeUnit.MILLISECONDS));
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        for (java.util.concurrent.CountDownLatch l : holds.values()) {
            l.countDown();
        }
        holds.clear();
        for (Closeable q : queues.values()) {
            try {
                q.close();
            } catch (Exception e) {
                // Best effort: closing the client ends the session.
            }
        }
        queues.clear();
    }
}
