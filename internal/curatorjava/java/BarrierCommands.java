package curatorjava;

import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;

/**
 * Driver commands for Curator's DistributedBarrier and
 * DistributedDoubleBarrier (recipes/barrier's interop tests). Waits run on
 * a thread of their own, so the driver keeps answering while a member waits.
 *
 * <pre>
 * barrier &lt;id&gt; &lt;path&gt;           a DistributedBarrier
 * bset &lt;id&gt;                      setBarrier
 * bremove &lt;id&gt;                   removeBarrier
 * bwait &lt;id&gt; &lt;timeoutMs&gt;         waitOnBarrier in the background; emits
 *                                 "EVENT bwaited &lt;id&gt; true|false|error &lt;exception&gt;"
 * dbarrier &lt;id&gt; &lt;path&gt; &lt;n&gt;      a DistributedDoubleBarrier for n members
 * enter &lt;id&gt; &lt;timeoutMs&gt;         enter in the background (negative: untimed);
 *                                 emits "EVENT entered &lt;id&gt; true|false|error &lt;exception&gt;"
 * leave &lt;id&gt; &lt;timeoutMs&gt;         leave in the background; emits
 *                                 "EVENT left &lt;id&gt; true|false|error &lt;exception&gt;"
 * </pre>
 */
final class BarrierCommands implements Driver.Commands {
    private final Driver d;

    BarrierCommands(Driver d) {
        this.d = d;
    }

    interface Wait {
        boolean run(long ms) throws Exception;
    }

    private void background(String event, String id, long ms, Wait w) {
        Thread t = new Thread(() -> {
            String r;
            try {
                r = String.valueOf(w.run(ms));
            } catch (Throwable e) {
                r = "error " + e.getClass().getName();
            }
            d.emit("EVENT " + event + " " + id + " " + r);
        }, event + "-" + id);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "barrier":
                Driver.args(a, 2);
                return d.put(a[1], new DistributedBarrier(d.client(), a[2]));
            case "bset":
                Driver.args(a, 1);
                d.get(a[1], DistributedBarrier.class).setBarrier();
                return "";
            case "bremove":
                Driver.args(a, 1);
                d.get(a[1], DistributedBarrier.class).removeBarrier();
                return "";
            case "bwait": {
                Driver.args(a, 2);
                DistributedBarrier b = d.get(a[1], DistributedBarrier.class);
                background("bwaited", a[1], Long.parseLong(a[2]), ms -> {
                    if (ms < 0) {
                        b.waitOnBarrier();
                        return true;
                    }
                    return b.waitOnBarrier(ms, TimeUnit.MILLISECONDS);
                });
                return "";
            }
            case "dbarrier":
                Driver.args(a, 3);
                return d.put(a[1], new DistributedDoubleBarrier(d.client(), a[2], Integer.parseInt(a[3])));
            case "enter": {
                Driver.args(a, 2);
                DistributedDoubleBarrier b = d.get(a[1], DistributedDoubleBarrier.class);
                background("entered", a[1], Long.parseLong(a[2]), ms -> {
                    if (ms < 0) {
                        b.enter();
                        return true;
                    }
                    return b.enter(ms, TimeUnit.MILLISECONDS);
                });
                return "";
            }
            case "leave": {
                Driver.args(a, 2);
                DistributedDoubleBarrier b = d.get(a[1], DistributedDoubleBarrier.class);
                background("left", a[1], Long.parseLong(a[2]), ms -> {
                    if (ms < 0) {
                        b.leave();
                        return true;
                    }
                    return b.leave(ms, TimeUnit.MILLISECONDS);
                });
                return "";
            }
            default:
                return null;
        }
    }
}
