package curatorjava;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.strategies.RandomStrategy;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.apache.curator.x.discovery.strategies.StickyStrategy;

/**
 * curator-x-discovery for the driver: ServiceDiscovery, ServiceProvider and
 * ServiceCache with payloads of any class (JsonInstanceSerializer of Object).
 * Instances travel as their JSON, base64-encoded (standard alphabet, with
 * padding) so that one command stays one line.
 *
 * <pre>
 * discovery &lt;id&gt; &lt;basePath&gt; &lt;compatible&gt;   build and start a ServiceDiscovery; compatible
 *                                    true is Curator's default serializer (no "enabled")
 * dregister &lt;id&gt; &lt;b64json&gt;            registerService of the instance the JSON describes
 *                                    (read with the discovery's serializer)
 * dupdate &lt;id&gt; &lt;b64json&gt;              updateService
 * dunregister &lt;id&gt; &lt;b64json&gt;          unregisterService
 * dnames &lt;id&gt;                        queryForNames            -> OK a,b (sorted)
 * dinstances &lt;id&gt; &lt;name&gt;              queryForInstances        -> OK b64,b64 (sorted by id)
 * dinstance &lt;id&gt; &lt;name&gt; &lt;instanceId&gt;   queryForInstance         -> OK b64|none
 * dread &lt;id&gt; &lt;name&gt; &lt;instanceId&gt;       queryForInstance, written back with every field
 *                                    ("enabled" included)    -> OK b64|none|error &lt;exception&gt;
 * dserialize &lt;compatible&gt; &lt;b64json&gt;    Curator's bytes for the instance: deserialize, then
 *                                    serialize                -> OK b64
 * dclass &lt;b64json&gt;                    the class Curator reads the payload as -> OK name|null
 * dprovider &lt;pid&gt; &lt;id&gt; &lt;name&gt; &lt;roundRobin|random|sticky&gt;
 *                                    build and start a ServiceProvider
 * dpick &lt;pid&gt;                         getInstance             -> OK instanceId|none
 * dall &lt;pid&gt;                          getAllInstances ids     -> OK a,b (sorted)
 * dnoteError &lt;pid&gt; &lt;name&gt; &lt;instanceId&gt; noteError of the instance the provider offers
 * dcache &lt;cid&gt; &lt;id&gt; &lt;name&gt;              build and start a ServiceCache; every cacheChanged
 *                                    emits "EVENT dcache &lt;cid&gt; a,b" (its ids, sorted)
 * dcached &lt;cid&gt;                       getInstances ids        -> OK a,b (sorted)
 * dclose &lt;id&gt;                         close a discovery, provider or cache and forget it
 * </pre>
 */
public final class DiscoveryCommands implements Driver.Commands {
    /** A POJO payload: Jackson writes it with "@class":"curatorjava.DiscoveryCommands$Payload". */
    public static final class Payload {
        public String region;
        public int weight;
        public Map<String, String> meta = new LinkedHashMap<>();
    }

    private final Driver d;
    private final Map<String, AutoCloseable> closers = new HashMap<>();

    public DiscoveryCommands(Driver d) {
        this.d = d;
    }

    private static JsonInstanceSerializer<Object> serializer(boolean compatible) {
        return new JsonInstanceSerializer<>(Object.class, compatible);
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    private static byte[] unb64(String s) {
        return Base64.getDecoder().decode(s);
    }

    @SuppressWarnings("unchecked")
    private ServiceDiscovery<Object> discovery(String id) {
        return (ServiceDiscovery<Object>) d.get(id, ServiceDiscovery.class);
    }

    private final Map<String, JsonInstanceSerializer<Object>> serializers = new HashMap<>();

    private ServiceInstance<Object> instance(String id, String json) throws Exception {
        return serializers.get(id).deserialize(unb64(json));
    }

    private static String ids(Collection<ServiceInstance<Object>> instances) {
        List<String> ids = new ArrayList<>();
        for (ServiceInstance<Object> i : instances) {
            ids.add(i.getId());
        }
        java.util.Collections.sort(ids);
        return String.join(",", ids);
    }

    private void closeable(String id, Object h, AutoCloseable c) {
        d.put(id, h);
        closers.put(id, c);
    }

    @Override
    @SuppressWarnings("unchecked")
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "discovery": {
                Driver.args(a, 3);
                JsonInstanceSerializer<Object> s = serializer(Boolean.parseBoolean(a[3]));
                ServiceDiscovery<Object> sd = ServiceDiscoveryBuilder.builder(Object.class)
                        .client(d.client()).basePath(a[2]).serializer(s).build();
                sd.start();
                serializers.put(a[1], s);
                closeable(a[1], sd, sd);
                return "";
            }
            case "dregister":
                Driver.args(a, 2);
                discovery(a[1]).registerService(instance(a[1], a[2]));
                return "";
            case "dupdate":
                Driver.args(a, 2);
                discovery(a[1]).updateService(instance(a[1], a[2]));
                return "";
            case "dunregister":
                Driver.args(a, 2);
                discovery(a[1]).unregisterService(instance(a[1], a[2]));
                return "";
            case "dnames": {
                Driver.args(a, 1);
                List<String> names = new ArrayList<>(discovery(a[1]).queryForNames());
                java.util.Collections.sort(names);
                return String.join(",", names);
            }
            case "dinstances": {
                Driver.args(a, 2);
                List<ServiceInstance<Object>> list = new ArrayList<>(discovery(a[1]).queryForInstances(a[2]));
                list.sort((x, y) -> x.getId().compareTo(y.getId()));
                List<String> out = new ArrayList<>();
                for (ServiceInstance<Object> i : list) {
                    out.add(b64(serializers.get(a[1]).serialize(i)));
                }
                return String.join(",", out);
            }
            case "dinstance": {
                Driver.args(a, 3);
                ServiceInstance<Object> i = discovery(a[1]).queryForInstance(a[2], a[3]);
                return i == null ? "none" : b64(serializers.get(a[1]).serialize(i));
            }
            case "dread": {
                // What Curator makes of a node whatever its bytes: the
                // discovery's serializer reads it, the non-compatible one
                // writes it back so that "enabled" shows too.
                Driver.args(a, 3);
                ServiceInstance<Object> i;
                try {
                    i = discovery(a[1]).queryForInstance(a[2], a[3]);
                } catch (Exception e) {
                    return "error " + e.getClass().getSimpleName();
                }
                return i == null ? "none" : b64(serializer(false).serialize(i));
            }
            case "dserialize": {
                Driver.args(a, 2);
                JsonInstanceSerializer<Object> s = serializer(Boolean.parseBoolean(a[1]));
                return b64(s.serialize(s.deserialize(unb64(a[2]))));
            }
            case "dclass": {
                Driver.args(a, 1);
                Object p = serializer(true).deserialize(unb64(a[1])).getPayload();
                return p == null ? "null" : p.getClass().getName();
            }
            case "dprovider": {
                Driver.args(a, 4);
                org.apache.curator.x.discovery.ProviderStrategy<Object> strategy;
                switch (a[4]) {
                    case "roundRobin":
                        strategy = new RoundRobinStrategy<>();
                        break;
                    case "random":
                        strategy = new RandomStrategy<>();
                        break;
                    case "sticky":
                        strategy = new StickyStrategy<>(new RoundRobinStrategy<>());
                        break;
                    default:
                        throw new IllegalArgumentException("unknown strategy: " + a[4]);
                }
                ServiceProvider<Object> p = discovery(a[2]).serviceProviderBuilder()
                        .serviceName(a[3]).providerStrategy(strategy).build();
                p.start();
                closeable(a[1], p, p);
                return "";
            }
            case "dpick": {
                Driver.args(a, 1);
                ServiceInstance<Object> i = ((ServiceProvider<Object>) d.get(a[1], ServiceProvider.class)).getInstance();
                return i == null ? "none" : i.getId();
            }
            case "dall":
                Driver.args(a, 1);
                return ids(((ServiceProvider<Object>) d.get(a[1], ServiceProvider.class)).getAllInstances());
            case "dnoteError": {
                Driver.args(a, 3);
                ServiceProvider<Object> p = (ServiceProvider<Object>) d.get(a[1], ServiceProvider.class);
                for (ServiceInstance<Object> i : p.getAllInstances()) {
                    if (i.getName().equals(a[2]) && i.getId().equals(a[3])) {
                        p.noteError(i);
                    }
                }
                return "";
            }
            case "dcache": {
                Driver.args(a, 3);
                String cid = a[1];
                ServiceCache<Object> c = discovery(a[2]).serviceCacheBuilder().name(a[3]).build();
                c.addListener(new org.apache.curator.x.discovery.details.ServiceCacheListener() {
                    @Override
                    public void cacheChanged() {
                        d.emit("EVENT dcache " + cid + " " + ids(c.getInstances()));
                    }

                    @Override
                    public void stateChanged(org.apache.curator.framework.CuratorFramework client,
                            org.apache.curator.framework.state.ConnectionState newState) {
                    }
                });
                c.start();
                closeable(cid, c, c);
                return "";
            }
            case "dcached":
                Driver.args(a, 1);
                return ids(((ServiceCache<Object>) d.get(a[1], ServiceCache.class)).getInstances());
            case "dclose": {
                Driver.args(a, 1);
                AutoCloseable c = closers.remove(a[1]);
                if (c == null) {
                    throw new IllegalArgumentException("unknown id: " + a[1]);
                }
                c.close();
                d.forget(a[1]);
                serializers.remove(a[1]);
                return "";
            }
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        // Providers and caches before their discoveries.
        List<String> order = new ArrayList<>();
        for (Map.Entry<String, AutoCloseable> e : closers.entrySet()) {
            if (e.getValue() instanceof ServiceDiscovery) {
                order.add(e.getKey());
            } else {
                order.add(0, e.getKey());
            }
        }
        for (String id : order) {
            try {
                closers.get(id).close();
            } catch (Exception e) {
                // Best effort: the client's close ends the session.
            }
            d.forget(id);
        }
        closers.clear();
    }
}
