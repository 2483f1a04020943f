package curatorjava;

import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSharder;
import org.apache.curator.framework.recipes.queue.QueueSharderPolicies;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Driver commands for Curator's QueueSharder over DistributedQueues
 * (recipes/queue's sharder interop tests). Items travel as in
 * QueueCommands: "b:" followed by their base64.
 *
 * <pre>
 * qsharder &lt;id&gt; &lt;path&gt; &lt;leaderPath&gt; &lt;threshold&gt; &lt;checkMs&gt; &lt;maxQueues&gt; &lt;-|ok&gt;
 *                                 a started QueueSharder; "-": its shards only
 *                                 produce, "ok": each shard's consumer emits
 *                                 "EVENT dqitem &lt;id&gt; b:&lt;base64&gt;" per item
 * qsput &lt;id&gt; b:&lt;base64&gt;          getQueue().put(item)
 * qspaths &lt;id&gt;                    getQueuePaths, sorted -&gt; OK a,b,c
 * qsclose &lt;id&gt;                    close it
 * </pre>
 */
final class SharderCommands implements Driver.Commands {
    private final Driver d;
    private final Map<String, QueueSharder<byte[], DistributedQueue<byte[]>>> sharders = new HashMap<>();

    SharderCommands(Driver d) {
        this.d = d;
    }

    private QueueConsumer<byte[]> consumer(final String id, String spec) {
        if (spec.equals("-")) {
            return null;
        }
        return new QueueConsumer<byte[]>() {
            @Override
            public void consumeMessage(byte[] message) {
                d.emit("EVENT dqitem " + id + " b:" + Base64.getEncoder().encodeToString(message));
            }

            @Override
            public void stateChanged(CuratorFramework client, ConnectionState newState) {}
        };
    }

    private QueueSharder<byte[], DistributedQueue<byte[]>> sharder(String id) {
        QueueSharder<byte[], DistributedQueue<byte[]>> s = sharders.get(id);
        if (s == null) {
            throw new IllegalArgumentException("unknown sharder: " + id);
        }
        return s;
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "qsharder": {
                d.fresh(a[1]);
                final QueueConsumer<byte[]> consumer = consumer(a[1], a[7]);
                QueueSharderPolicies policies = QueueSharderPolicies.builder()
                        .newQueueThreshold(Integer.parseInt(a[4]))
                        .thresholdCheckMs(Integer.parseInt(a[5]))
                        .maxQueues(Integer.parseInt(a[6]))
                        .build();
                QueueSharder<byte[], DistributedQueue<byte[]>> s = new QueueSharder<>(d.client(),
                        (client, path) -> QueueBuilder.builder(client, consumer, QueueCommands.RAW, path).buildQueue(),
                        a[2], a[3], policies);
                s.start();
                sharders.put(a[1], s);
                return d.put(a[1], s);
            }
            case "qsput":
                sharder(a[1]).getQueue().put(QueueCommands.decode(a[2]));
                return "";
            case "qspaths": {
                List<String> paths = new ArrayList<>(sharder(a[1]).getQueuePaths());
                Collections.sort(paths);
                return String.join(",", paths);
            }
            case "qsclose":
                sharder(a[1]).close();
                sharders.remove(a[1]);
                d.forget(a[1]);
                return "";
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        for (QueueSharder<byte[], DistributedQueue<byte[]>> s : sharders.values()) {
            s.close();
        }
        sharders.clear();
    }
}
