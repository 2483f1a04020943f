package curatorjava;

import java.util.List;

import org.apache.curator.framework.imps.GzipCompressionProvider;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Driver commands for the framework's own verbs (framework/compress.go,
 * acl.go), run on the driver's Curator client. Data travels as
 * lower-case hex, "-" for empty data; paths are full ZooKeeper paths.
 *
 * <pre>
 * fw-zcreate &lt;path&gt; &lt;hex&gt;  create().compressed().creatingParentsIfNeeded()
 * fw-zset &lt;path&gt; &lt;hex&gt;     setData().compressed()
 * fw-zget &lt;path&gt;           getData().decompressed()            -&gt; OK &lt;hex&gt;
 * fw-gzip &lt;hex&gt;            GzipCompressionProvider.compress      -&gt; OK &lt;hex&gt;
 * fw-getacl &lt;path&gt;         getACL()  -&gt; OK &lt;aversion&gt; scheme:id:perms,...
 * fw-setacl &lt;path&gt; &lt;version&gt; scheme:id:perms,...  setACL().withVersion()
 *                          -&gt; OK &lt;aversion after&gt;
 * </pre>
 */
final class FrameworkCommands implements Driver.Commands {
    private final Driver d;

    FrameworkCommands(Driver d) {
        this.d = d;
    }

    @Override
    public String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "fw-zcreate":
                Driver.args(a, 2);
                d.client().create().compressed().creatingParentsIfNeeded().forPath(a[1], unhex(a[2]));
                return "";
            case "fw-zset":
                Driver.args(a, 2);
                d.client().setData().compressed().forPath(a[1], unhex(a[2]));
                return "";
            case "fw-zget":
                Driver.args(a, 1);
                return hex(d.client().getData().decompressed().forPath(a[1]));
            case "fw-gzip":
                Driver.args(a, 1);
                return hex(new GzipCompressionProvider().compress("/", unhex(a[1])));
            case "fw-getacl": {
                Driver.args(a, 1);
                Stat st = new Stat();
                List<ACL> acl = d.client().getACL().storingStatIn(st).forPath(a[1]);
                return st.getAversion() + " " + acls(acl);
            }
            case "fw-setacl": {
                Driver.args(a, 3);
                Stat st = d.client().setACL().withVersion(Integer.parseInt(a[2]))
                        .withACL(parseACL(a[3])).forPath(a[1]);
                return Integer.toString(st.getAversion());
            }
            default:
                return null;
        }
    }

    private static String acls(List<ACL> acl) {
        StringBuilder out = new StringBuilder();
        for (ACL e : acl) {
            if (out.length() > 0) {
                out.append(',');
            }
            out.append(e.getId().getScheme()).append(':').append(e.getId().getId()).append(':').append(e.getPerms());
        }
        return out.toString();
    }

    private static List<ACL> parseACL(String s) {
        java.util.ArrayList<ACL> acl = new java.util.ArrayList<>();
        for (String e : s.split(",")) {
            int last = e.lastIndexOf(':');
            int first = e.indexOf(':');
            acl.add(new ACL(Integer.parseInt(e.substring(last + 1)),
                    new org.apache.zookeeper.data.Id(e.substring(0, first), e.substring(first + 1, last))));
        }
        return acl;
    }

    private static String hex(byte[] b) {
        if (b == null || b.length == 0) {
            return "-";
        }
        StringBuilder out = new StringBuilder(2 * b.length);
        for (byte x : b) {
            out.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return out.toString();
    }

    private static byte[] unhex(String s) {
        if (s.equals("-")) {
            return new byte[0];
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
