package curatorjava;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;

/**
 * Curator's InterProcessMultiLock for the driver. A multi-lock is a lock
 * handle: "acquire", "release" and "holding" work on its id.
 *
 * <pre>
 * multilock &lt;id&gt; &lt;lockId,lockId,...&gt;   an InterProcessMultiLock of lock handles made
 *                                      before (mutex, semmutex, &lt;rwlock&gt;.read,
 *                                      &lt;rwlock&gt;.write), in that order
 * multimutex &lt;id&gt; &lt;path,path,...&gt;     an InterProcessMultiLock of InterProcessMutexes
 *                                      on the paths (Curator's path constructor)
 * </pre>
 *
 * Curator acquires the members in the order given, each with the whole
 * timeout of "acquire" (not one deadline for all), and releases them in
 * reverse order.
 */
final class MultiLockCommands implements Driver.Commands {
    private final Driver d;
    private final List<InterProcessMultiLock> made = new ArrayList<>();

    MultiLockCommands(Driver d) {
        this.d = d;
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "multilock": {
                Driver.args(a, 2);
                List<InterProcessLock> locks = new ArrayList<>();
                for (String id : a[2].split(",")) {
                    locks.add(d.get(id, InterProcessLock.class));
                }
                InterProcessMultiLock m = new InterProcessMultiLock(locks);
                d.put(a[1], m);
                made.add(m);
                return "";
            }
            case "multimutex": {
                Driver.args(a, 2);
                InterProcessMultiLock m = new InterProcessMultiLock(d.client(), Arrays.asList(a[2].split(",")));
                d.put(a[1], m);
                made.add(m);
                return "";
            }
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        for (InterProcessMultiLock m : made) {
            try {
                while (m.isAcquiredInThisProcess()) {
                    m.release();
                }
            } catch (Exception e) {
                // Best effort: closing the client ends the session.
            }
        }
        made.clear();
    }
}
