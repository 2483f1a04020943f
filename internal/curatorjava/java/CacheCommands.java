package curatorjava;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.cache.NodeCache;
import org.apache.curator.framework.recipes.cache.PathChildrenCache;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Curator 5.4's caches for the driver (recipes/cache's interop tests). Data
 * travels as lower-case hex, "-" for empty data, "none" for no node; paths
 * are full ZooKeeper paths.
 *
 * <pre>
 * cache &lt;id&gt; &lt;kind&gt; &lt;path&gt; plain|gzip
 *        build and start a cache of path; gzip: its data is compressed
 *        (COMPRESSED_DATA, setDataIsCompressed, dataIsCompressed). kind:
 *          curator   CuratorCache.build           types NODE_CREATED, NODE_CHANGED, NODE_DELETED
 *          tree      TreeCache.newBuilder         types NODE_ADDED, NODE_UPDATED, NODE_REMOVED
 *          children  PathChildrenCache, started POST_INITIALIZED_EVENT
 *                                                 types CHILD_ADDED, CHILD_UPDATED, CHILD_REMOVED
 *          node      NodeCache, start()           type NODE_CHANGED on nodeChanged(), the
 *                                                 first once the node is read
 *        every event is emitted as
 *          "EVENT cache &lt;id&gt; &lt;type&gt; &lt;path&gt; &lt;hex&gt;"  (node data; "none" when the
 *                                                  NodeCache's node is gone)
 *          "EVENT cache &lt;id&gt; INITIALIZED"            (not for node)
 *          "EVENT cache &lt;id&gt; CONNECTION_&lt;state&gt;"   (tree, children)
 * cget &lt;id&gt; &lt;path&gt;            the cached data of path            -&gt; OK &lt;hex&gt;|none
 * csize &lt;id&gt;                  the number of nodes cached          -&gt; OK &lt;n&gt;
 * cclose &lt;id&gt;                 close the cache and forget the id
 * cput &lt;path&gt; &lt;hex&gt; plain|gzip create the node (and its parents, empty)
 *                              or set its data; gzip: compressed()
 * </pre>
 */
final class CacheCommands implements Driver.Commands {
    private final Driver d;
    private final List<AutoCloseable> open = new ArrayList<>();

    CacheCommands(Driver d) {
        this.d = d;
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "cache":
                Driver.args(a, 4);
                return start(a[1], a[2], a[3], gzip(a[4]));
            case "cget":
                Driver.args(a, 2);
                return cget(d.handle(a[1]), a[2]);
            case "csize":
                Driver.args(a, 1);
                return Integer.toString(csize(d.handle(a[1])));
            case "cclose": {
                Driver.args(a, 1);
                AutoCloseable c = (AutoCloseable) d.handle(a[1]);
                c.close();
                open.remove(c);
                d.forget(a[1]);
                return "";
            }
            case "cput": {
                Driver.args(a, 3);
                CuratorFramework client = d.client();
                byte[] data = fromHex(a[2]);
                boolean z = gzip(a[3]);
                try {
                    if (z) {
                        client.create().compressed().creatingParentsIfNeeded().forPath(a[1], data);
                    } else {
                        client.create().creatingParentsIfNeeded().forPath(a[1], data);
                    }
                } catch (KeeperException.NodeExistsException e) {
                    if (z) {
                        client.setData().compressed().forPath(a[1], data);
                    } else {
                        client.setData().forPath(a[1], data);
                    }
                }
                return "";
            }
            default:
                return null;
        }
    }

    private String start(String id, String kind, String path, boolean z) throws Exception {
        d.fresh(id);
        String prefix = "EVENT cache " + id + " ";
        CuratorFramework client = d.client();
        AutoCloseable handle;
        switch (kind) {
            case "curator": {
                CuratorCache c = z
                        ? CuratorCache.build(client, path, CuratorCache.Options.COMPRESSED_DATA)
                        : CuratorCache.build(client, path);
                c.listenable().addListener(new CuratorCacheListener() {
                    @Override
                    public void event(Type type, ChildData oldData, ChildData data) {
                        ChildData n = type == Type.NODE_DELETED ? oldData : data;
                        d.emit(prefix + type.name() + " " + n.getPath() + " " + toHex(n.getData()));
                    }

                    @Override
                    public void initialized() {
                        d.emit(prefix + "INITIALIZED");
                    }
                });
                c.start();
                handle = c;
                break;
            }
            case "tree": {
                TreeCache c = TreeCache.newBuilder(client, path).setCacheData(true).setDataIsCompressed(z).build();
                c.getListenable().addListener((cl, ev) -> d.emit(prefix + treeEvent(ev)));
                c.start();
                handle = c;
                break;
            }
            case "children": {
                PathChildrenCache c = new PathChildrenCache(client, path, true, z, r -> {
                    Thread t = new Thread(r, "PathChildrenCache " + id);
                    t.setDaemon(true);
                    return t;
                });
                c.getListenable().addListener((cl, ev) -> {
                    ChildData n = ev.getData();
                    d.emit(prefix + ev.getType().name()
                            + (n == null ? "" : " " + n.getPath() + " " + toHex(n.getData())));
                });
                c.start(PathChildrenCache.StartMode.POST_INITIALIZED_EVENT);
                handle = c;
                break;
            }
            case "node": {
                NodeCache c = new NodeCache(client, path, z);
                c.getListenable().addListener(() -> {
                    ChildData n = c.getCurrentData();
                    d.emit(prefix + "NODE_CHANGED " + path + " " + (n == null ? "none" : toHex(n.getData())));
                });
                c.start();
                handle = c;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown cache kind " + kind);
        }
        open.add(handle);
        return d.put(id, handle);
    }

    private static String treeEvent(TreeCacheEvent ev) {
        ChildData n = ev.getData();
        switch (ev.getType()) {
            case NODE_ADDED:
            case NODE_UPDATED:
            case NODE_REMOVED:
                return ev.getType().name() + " " + n.getPath() + " " + toHex(n.getData());
            default:
                return ev.getType().name();
        }
    }

    private static String cget(Object h, String path) {
        ChildData n;
        if (h instanceof CuratorCache) {
            Optional<ChildData> o = ((CuratorCache) h).get(path);
            n = o.orElse(null);
        } else if (h instanceof TreeCache) {
            n = ((TreeCache) h).getCurrentData(path);
        } else if (h instanceof PathChildrenCache) {
            n = ((PathChildrenCache) h).getCurrentData(path);
        } else if (h instanceof NodeCache) {
            n = ((NodeCache) h).getCurrentData();
            if (n != null && !n.getPath().equals(path)) {
                n = null;
            }
        } else {
            throw new IllegalArgumentException("not a cache: " + h.getClass().getSimpleName());
        }
        return n == null ? "none" : toHex(n.getData());
    }

    private static int csize(Object h) {
        if (h instanceof CuratorCache) {
            return ((CuratorCache) h).size();
        } else if (h instanceof TreeCache) {
            return ((TreeCache) h).size();
        } else if (h instanceof PathChildrenCache) {
            return ((PathChildrenCache) h).getCurrentData().size();
        } else if (h instanceof NodeCache) {
            return ((NodeCache) h).getCurrentData() == null ? 0 : 1;
        }
        throw new IllegalArgumentException("not a cache: " + h.getClass().getSimpleName());
    }

    private static boolean gzip(String mode) {
        switch (mode) {
            case "gzip":
                return true;
            case "plain":
                return false;
            default:
                throw new IllegalArgumentException("data mode is plain or gzip, not " + mode);
        }
    }

    @Override
    public void closeAll() {
        for (AutoCloseable c : open) {
            try {
                c.close();
            } catch (Exception e) {
                // Best effort: closing the client ends the watches anyway.
            }
        }
        open.clear();
    }

    static String toHex(byte[] b) {
        if (b == null) {
            return "none";
        }
        return SharedValueCommands.toHex(b);
    }

    static byte[] fromHex(String s) {
        return SharedValueCommands.fromHex(s);
    }
}
