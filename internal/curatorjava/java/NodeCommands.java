package curatorjava;

import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

/**
 * Driver commands for Curator's PersistentNode and GroupMember
 * (recipes/node's and recipes/group's interop tests). Data and payloads are
 * single UTF-8 words.
 *
 * <pre>
 * pnode &lt;id&gt; &lt;path&gt; &lt;mode&gt; &lt;data&gt;   create and start a PersistentNode (mode: a
 *                                   CreateMode name such as EPHEMERAL), unprotected
 * pnodeWait &lt;id&gt; &lt;timeoutMs&gt;        waitForInitialCreate -&gt; OK true|false
 * pnodePath &lt;id&gt;                    getActualPath -&gt; OK &lt;path&gt;|none
 * pnodeData &lt;id&gt; &lt;data&gt;             setData
 * pnodeClose &lt;id&gt;                   close (deletes the node) and forget
 * member &lt;id&gt; &lt;path&gt; &lt;memberId&gt; &lt;payload&gt;
 *                                   create and start a GroupMember
 * members &lt;id&gt;                      getCurrentMembers -&gt; OK id=payload,... (sorted by id)
 * memberSet &lt;id&gt; &lt;payload&gt;          setThisData
 * memberClose &lt;id&gt;                  close (deletes the member's node) and forget
 * nclient &lt;cid&gt; &lt;connect&gt; &lt;sessionMs&gt; &lt;simulatedExpirationPercent&gt;
 *                                   a Curator client of its own (its own session),
 *                                   connected before OK; emits
 *                                   "EVENT nstate &lt;cid&gt; &lt;STATE&gt;" on its state changes
 * pnodeOn &lt;id&gt; &lt;cid&gt; &lt;path&gt; &lt;mode&gt; &lt;data&gt;
 *                                   pnode on the client cid
 * nclientClose &lt;cid&gt;                close the client cid and forget it
 * </pre>
 */
final class NodeCommands implements Driver.Commands {
    private final Driver d;
    private final List<Closeable> open = new ArrayList<>();

    NodeCommands(Driver d) {
        this.d = d;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "pnode": {
                Driver.args(a, 4);
                PersistentNode n = new PersistentNode(d.client(), CreateMode.valueOf(a[3]), false, a[2], bytes(a[4]));
                d.put(a[1], n);
                open.add(n);
                n.start();
                return "";
            }
            case "pnodeWait":
                Driver.args(a, 2);
                return String.valueOf(d.get(a[1], PersistentNode.class)
                        .waitForInitialCreate(Long.parseLong(a[2]), TimeUnit.MILLISECONDS));
            case "pnodePath": {
                Driver.args(a, 1);
                String p = d.get(a[1], PersistentNode.class).getActualPath();
                return p == null ? "none" : p;
            }
            case "pnodeData":
                Driver.args(a, 2);
                d.get(a[1], PersistentNode.class).setData(bytes(a[2]));
                return "";
            case "pnodeClose": {
                Driver.args(a, 1);
                PersistentNode n = d.get(a[1], PersistentNode.class);
                n.close();
                open.remove(n);
                d.forget(a[1]);
                return "";
            }
            case "member": {
                Driver.args(a, 4);
                GroupMember m = new GroupMember(d.client(), a[2], a[3], bytes(a[4]));
                d.put(a[1], m);
                open.add(m);
                m.start();
                return "";
            }
            case "members": {
                Driver.args(a, 1);
                Map<String, byte[]> ms = new TreeMap<>(d.get(a[1], GroupMember.class).getCurrentMembers());
                StringBuilder sb = new StringBuilder();
                for (Map.Entry<String, byte[]> e : ms.entrySet()) {
                    if (sb.length() > 0) {
                        sb.append(',');
                    }
                    sb.append(e.getKey()).append('=').append(new String(e.getValue(), StandardCharsets.UTF_8));
                }
                return sb.toString();
            }
            case "memberSet":
                Driver.args(a, 2);
                d.get(a[1], GroupMember.class).setThisData(bytes(a[2]));
                return "";
            case "memberClose": {
                Driver.args(a, 1);
                GroupMember m = d.get(a[1], GroupMember.class);
                m.close();
                open.remove(m);
                d.forget(a[1]);
                return "";
            }
            case "nclient": {
                Driver.args(a, 4);
                String cid = a[1];
                int sessionMs = Integer.parseInt(a[3]);
                CuratorFramework c = CuratorFrameworkFactory.builder()
                        .connectString(a[2])
                        .sessionTimeoutMs(sessionMs)
                        .connectionTimeoutMs(Math.min(15000, sessionMs))
                        .simulatedSessionExpirationPercent(Integer.parseInt(a[4]))
                        .retryPolicy(new ExponentialBackoffRetry(20, 10, 200))
                        .build();
                c.getConnectionStateListenable().addListener(
                        (cl, st) -> d.emit("EVENT nstate " + cid + " " + st.name()));
                d.put(cid, c);
                open.add(c);
                c.start();
                if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("client " + cid + " did not connect");
                }
                return "";
            }
            case "pnodeOn": {
                Driver.args(a, 5);
                CuratorFramework c = d.get(a[2], CuratorFramework.class);
                PersistentNode n = new PersistentNode(c, CreateMode.valueOf(a[4]), false, a[3], bytes(a[5]));
                d.put(a[1], n);
                open.add(0, n); // closed before its client
                n.start();
                return "";
            }
            case "nclientClose": {
                Driver.args(a, 1);
                CuratorFramework c = d.get(a[1], CuratorFramework.class);
                c.close();
                open.remove(c);
                d.forget(a[1]);
                return "";
            }
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        for (Closeable c : open) {
            try {
                c.close();
            } catch (Exception e) {
                // Best effort: closing the client ends the session.
            }
        }
        open.clear();
    }
}
