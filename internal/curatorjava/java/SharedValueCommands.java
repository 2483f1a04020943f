package curatorjava;

import java.util.ArrayList;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedValue;
import org.apache.curator.framework.recipes.shared.SharedValueListener;
import org.apache.curator.framework.recipes.shared.SharedValueReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Curator's SharedValue for the driver. Values are written in lower-case hex,
 * "-" for no bytes.
 *
 * <pre>
 * value &lt;id&gt; &lt;path&gt; &lt;seedHex&gt;   create and start a SharedValue; every new value
 *                              it sees is emitted as "EVENT value &lt;id&gt; &lt;hex&gt;"
 * vget &lt;id&gt;                    getValue (the cached value)      -&gt; OK &lt;hex&gt;
 * vversion &lt;id&gt;                getVersionedValue's version      -&gt; OK &lt;version&gt;
 * vset &lt;id&gt; &lt;hex&gt;              setValue
 * vtrySet &lt;id&gt; &lt;hex&gt;           trySetValue against the cached version -&gt; OK true|false
 * vclose &lt;id&gt;                  close the SharedValue and forget the id
 * </pre>
 */
final class SharedValueCommands implements Driver.Commands {
    private final Driver d;
    private final List<SharedValue> open = new ArrayList<>();

    SharedValueCommands(Driver d) {
        this.d = d;
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "value": {
                Driver.args(a, 3);
                d.fresh(a[1]);
                String id = a[1];
                SharedValue v = new SharedValue(d.client(), a[2], fromHex(a[3]));
                v.getListenable().addListener(new SharedValueListener() {
                    @Override
                    public void valueHasChanged(SharedValueReader r, byte[] newValue) {
                        d.emit("EVENT value " + id + " " + toHex(newValue));
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState s) {
                        // Connection states are reported once, by the client listener.
                    }
                });
                v.start();
                open.add(v);
                return d.put(id, v);
            }
            case "vget":
                Driver.args(a, 1);
                return toHex(d.get(a[1], SharedValue.class).getValue());
            case "vversion":
                Driver.args(a, 1);
                return Integer.toString(d.get(a[1], SharedValue.class).getVersionedValue().getVersion());
            case "vset":
                Driver.args(a, 2);
                d.get(a[1], SharedValue.class).setValue(fromHex(a[2]));
                return "";
            case "vtrySet": {
                Driver.args(a, 2);
                SharedValue v = d.get(a[1], SharedValue.class);
                VersionedValue<byte[]> current = v.getVersionedValue();
                return Boolean.toString(v.trySetValue(current, fromHex(a[2])));
            }
            case "vclose": {
                Driver.args(a, 1);
                SharedValue v = d.get(a[1], SharedValue.class);
                v.close();
                open.remove(v);
                d.forget(a[1]);
                return "";
            }
            default:
                return null;
        }
    }

    @Override
    public void closeAll() {
        for (SharedValue v : open) {
            try {
                v.close();
            } catch (Exception e) {
                // Best effort: closing the client ends the watch anyway.
            }
        }
        open.clear();
    }

    static String toHex(byte[] b) {
        if (b == null || b.length == 0) {
            return "-";
        }
        StringBuilder s = new StringBuilder(2 * b.length);
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return s.toString();
    }

    static byte[] fromHex(String s) {
        if (s.equals("-")) {
            return new byte[0];
        }
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd hex length: " + s);
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
