package curatorjava;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;

/**
 * Line-oriented driver that exposes Apache Curator lock recipes to another
 * process (the Go test harness in package curatorjava).
 *
 * <p>Usage: {@code Driver <connectString> <sessionTimeoutMs>}.
 *
 * <p>Every line read from stdin is one command; every command produces exactly
 * one response line on stdout, {@code OK [result]} or
 * {@code ERR <exception class>: <message>}. Before the first command the
 * driver writes one extra response, {@code OK ready}, once the client is
 * connected (or {@code ERR ...} and exits if it cannot connect). Asynchronous
 * notifications are written as lines starting with {@code EVENT } and may be
 * interleaved with responses at line granularity.
 *
 * <p>Commands run one at a time, in order, on a single command thread, so a
 * lock acquired by one command can be released by a later one (Curator's
 * InterProcessMutex is owned by the thread that acquired it).
 */
public final class Driver {
    private final Object outLock = new Object();
    private final PrintStream out =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    /** Executes commands and revocation callbacks; the owner thread of all locks. */
    private final ExecutorService commandThread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "driver-command");
        t.setDaemon(true);
        return t;
    });

    // Only touched from commandThread.
    private final Map<String, Object> handles = new HashMap<>();
    private final Map<String, Lease> leases = new HashMap<>();
    private final Map<String, String> semaphorePaths = new HashMap<>();
    // The current term of each LeaderSelector: counted down by "yield".
    private final Map<String, java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch>> terms =
            new java.util.concurrent.ConcurrentHashMap<>();

    private CuratorFramework client;

    /**
     * Command sets kept in files of their own (one per recipe family), so
     * that each family's commands live beside nothing else. A class named
     * here that is not compiled in is skipped.
     */
    private static final String[] EXTENSIONS = {
        "curatorjava.CacheCommands",
        "curatorjava.NodeCommands",
        "curatorjava.DiscoveryCommands",
        "curatorjava.BarrierCommands",
        "curatorjava.AtomicCommands",
        "curatorjava.FrameworkCommands",
        "curatorjava.WatchCommands",
        "curatorjava.SharedValueCommands",
        "curatorjava.MultiLockCommands",
        "curatorjava.QueueCommands",
        "curatorjava.SharderCommands",
    };

    private final java.util.List<Commands> extensions = new ArrayList<>();

    /**
     * A family of driver commands. dispatch returns null for a command it
     * does not know; closeAll releases what the family holds at "quit".
     * Both run on the command thread.
     */
    interface Commands {
        String dispatch(String[] a) throws Exception;

        default void closeAll() {}
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Driver <connectString> <sessionTimeoutMs>");
            System.exit(2);
        }
        int status = new Driver().run(args[0], Integer.parseInt(args[1]));
        System.exit(status);
    }

    private int run(String connectString, int sessionTimeoutMs) throws Exception {
        // Curator warns when the connection timeout exceeds the session timeout.
        int connectionTimeoutMs = Math.min(15000, sessionTimeoutMs);
        int startTimeoutMs = Math.max(15000, sessionTimeoutMs);
        client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(connectionTimeoutMs)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.getConnectionStateListenable().addListener(
                (c, newState) -> emit("EVENT state " + newState.name()));
        client.start();
        try {
            if (!client.blockUntilConnected(startTimeoutMs, TimeUnit.MILLISECONDS)) {
                emit("ERR java.util.concurrent.TimeoutException: could not connect to "
                        + connectString + " within " + startTimeoutMs + "ms");
                client.close();
                return 1;
            }
        } catch (Exception e) {
            emit(error(e));
            client.close();
            return 1;
        }
        for (String name : EXTENSIONS) {
            try {
                Class<?> k = Class.forName(name);
                extensions.add((Commands) k.getDeclaredConstructor(Driver.class).newInstance(this));
            } catch (ClassNotFoundException e) {
                // Not part of this build.
            }
        }
        emit("OK ready");

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.isEmpty()) {
                continue;
            }
            if (cmd.equals("quit")) {
                break;
            }
            commandThread.execute(() -> execute(cmd));
        }
        // "quit" or end of input: release everything on the owner thread, then stop.
        commandThread.execute(this::closeAll);
        commandThread.shutdown();
        commandThread.awaitTermination(30, TimeUnit.SECONDS);
        client.close();
        if (line != null) {
            emit("OK bye");
        }
        return 0;
    }

    private void execute(String cmd) {
        String response;
        try {
            String result = dispatch(cmd.split("\\s+"));
            response = result.isEmpty() ? "OK" : "OK " + result;
        } catch (Throwable e) {
            response = error(e);
        }
        emit(response);
    }

    private String dispatch(String[] a) throws Exception {
        switch (a[0]) {
            case "ping":
                args(a, 0);
                return "pong";
            case "protected": {
                // Curator's own reading of a node name: is it protected, and
                // what is the name without the protection prefix?
                args(a, 1);
                return ProtectedUtils.isProtectedZNode(a[1]) + " " + ProtectedUtils.normalize(a[1]);
            }
            case "mutex":
                args(a, 2);
                return put(a[1], new InterProcessMutex(client, a[2]));
            case "rwlock": {
                args(a, 2);
                InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, a[2]);
                fresh(a[1]);
                fresh(a[1] + ".read");
                fresh(a[1] + ".write");
                handles.put(a[1], rw);
                handles.put(a[1] + ".read", rw.readLock());
                handles.put(a[1] + ".write", rw.writeLock());
                return "";
            }
            case "semmutex":
                args(a, 2);
                return put(a[1], new InterProcessSemaphoreMutex(client, a[2]));
            case "semv2": {
                args(a, 3);
                put(a[1], new InterProcessSemaphoreV2(client, a[2], Integer.parseInt(a[3])));
                semaphorePaths.put(a[1], a[2]);
                return "";
            }
            case "count": {
                args(a, 3);
                fresh(a[1]);
                SharedCount count = new SharedCount(client, a[2], Integer.parseInt(a[3]));
                String id = a[1];
                count.addListener(new SharedCountListener() {
                    @Override
                    public void countHasChanged(SharedCountReader reader, int newCount) {
                        emit("EVENT count " + id + " " + newCount);
                    }

                    @Override
                    public void stateChanged(CuratorFramework c, ConnectionState newState) {
                        // Connection states are reported once, by the client listener.
                    }
                });
                count.start();
                handles.put(a[1], count);
                return "";
            }
            case "acquire": {
                args(a, 2);
                InterProcessLock lock = get(a[1], InterProcessLock.class);
                long timeoutMs = Long.parseLong(a[2]);
                if (timeoutMs < 0) {
                    lock.acquire();
                    return "true";
                }
                return Boolean.toString(lock.acquire(timeoutMs, TimeUnit.MILLISECONDS));
            }
            case "release":
                args(a, 1);
                get(a[1], InterProcessLock.class).release();
                return "";
            case "holding":
                args(a, 1);
                return Boolean.toString(get(a[1], InterProcessLock.class).isAcquiredInThisProcess());
            case "lease": {
                args(a, 2);
                InterProcessSemaphoreV2 sem = get(a[1], InterProcessSemaphoreV2.class);
                long timeoutMs = Long.parseLong(a[2]);
                Lease lease = timeoutMs < 0 ? sem.acquire() : sem.acquire(timeoutMs, TimeUnit.MILLISECONDS);
                if (lease == null) {
                    return "none";
                }
                String path = ZKPaths.makePath(semaphorePaths.get(a[1]), "leases", lease.getNodeName());
                leases.put(path, lease);
                return path;
            }
            case "return": {
                args(a, 1);
                Lease lease = leases.remove(a[1]);
                if (lease == null) {
                    throw new IllegalArgumentException("no lease held at " + a[1]);
                }
                lease.close();
                return "";
            }
            case "get":
                args(a, 1);
                return Integer.toString(get(a[1], SharedCount.class).getCount());
            case "set":
                args(a, 2);
                get(a[1], SharedCount.class).setCount(Integer.parseInt(a[2]));
                return "";
            case "trySet": {
                args(a, 2);
                SharedCount count = get(a[1], SharedCount.class);
                VersionedValue<Integer> current = count.getVersionedValue();
                return Boolean.toString(count.trySetCount(current, Integer.parseInt(a[2])));
            }
            case "latch": {
                // latch <id> <path> <participantId>: a started LeaderLatch.
                args(a, 3);
                String id = a[1];
                fresh(id);
                LeaderLatch latch = new LeaderLatch(client, a[2], a[3]);
                latch.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        emit("EVENT leader " + id + " true");
                    }

                    @Override
                    public void notLeader() {
                        emit("EVENT leader " + id + " false");
                    }
                });
                handles.put(id, latch);
                latch.start();
                return "";
            }
            case "selector": {
                // selector <id> <path> <participantId>: a started, auto-requeued
                // LeaderSelector whose term lasts until "yield <id>".
                args(a, 3);
                String id = a[1];
                fresh(id);
                java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> term =
                        new java.util.concurrent.atomic.AtomicReference<>();
                terms.put(id, term);
                LeaderSelector selector = new LeaderSelector(client, a[2], new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        java.util.concurrent.CountDownLatch yielded = new java.util.concurrent.CountDownLatch(1);
                        term.set(yielded);
                        emit("EVENT leader " + id + " true");
                        try {
                            yielded.await();
                        } finally {
                            term.set(null);
                            emit("EVENT leader " + id + " false");
                        }
                    }
                });
                selector.setId(a[3]);
                selector.autoRequeue();
                handles.put(id, selector);
                selector.start();
                return "";
            }
            case "yield": {
                args(a, 1);
                java.util.concurrent.CountDownLatch yielded = terms.get(a[1]).get();
                if (yielded == null) {
                    return "false";
                }
                yielded.countDown();
                return "true";
            }
            case "hasLeadership": {
                args(a, 1);
                Object h = handle(a[1]);
                if (h instanceof LeaderLatch) {
                    return Boolean.toString(((LeaderLatch) h).hasLeadership());
                }
                return Boolean.toString(get(a[1], LeaderSelector.class).hasLeadership());
            }
            case "leaders": {
                // leaders <id>: getParticipants of a latch or selector, as
                // id:isLeader,...
                args(a, 1);
                Object h = handle(a[1]);
                Collection<Participant> ps = h instanceof LeaderLatch
                        ? ((LeaderLatch) h).getParticipants()
                        : get(a[1], LeaderSelector.class).getParticipants();
                java.util.List<String> out = new ArrayList<>();
                for (Participant p : ps) {
                    out.add(p.getId() + ":" + p.isLeader());
                }
                return String.join(",", out);
            }
            case "participants": {
                args(a, 1);
                Object h = handle(a[1]);
                Collection<String> nodes;
                if (h instanceof InterProcessMutex) {
                    nodes = ((InterProcessMutex) h).getParticipantNodes();
                } else if (h instanceof InterProcessReadWriteLock) {
                    nodes = ((InterProcessReadWriteLock) h).readLock().getParticipantNodes();
                } else if (h instanceof InterProcessSemaphoreV2) {
                    nodes = ((InterProcessSemaphoreV2) h).getParticipantNodes();
                } else {
                    throw new IllegalArgumentException(a[1] + " has no participants (" + kind(h) + ")");
                }
                return String.join(",", nodes);
            }
            case "revoke":
                args(a, 1);
                Revoker.attemptRevoke(client, a[1]);
                return "";
            case "revocable": {
                args(a, 1);
                String id = a[1];
                InterProcessMutex mutex = get(id, InterProcessMutex.class);
                // The listener runs on the command thread, which owns the lock.
                mutex.makeRevocable(m -> {
                    try {
                        while (m.isOwnedByCurrentThread()) {
                            m.release();
                        }
                        emit("EVENT revoked " + id);
                    } catch (Exception e) {
                        emit("EVENT revokeFailed " + id + " " + oneLine(e.toString()));
                    }
                }, commandThread);
                return "";
            }
            case "close": {
                args(a, 1);
                Object h = handle(a[1]);
                if (h instanceof SharedCount) {
                    ((SharedCount) h).close();
                } else if (h instanceof LeaderLatch) {
                    ((LeaderLatch) h).close();
                } else if (h instanceof LeaderSelector) {
                    ((LeaderSelector) h).close();
                    terms.remove(a[1]);
                }
                handles.remove(a[1]);
                return "";
            }
            default:
                for (Commands ext : extensions) {
                    String r = ext.dispatch(a);
                    if (r != null) {
                        return r;
                    }
                }
                throw new IllegalArgumentException("unknown command: " + a[0]);
        }
    }

    private void closeAll() {
        for (Commands ext : extensions) {
            try {
                ext.closeAll();
            } catch (Exception e) {
                // Best effort: closing the client ends the session.
            }
        }
        for (Lease lease : new ArrayList<>(leases.values())) {
            try {
                lease.close();
            } catch (Exception e) {
                // Session close removes the ephemeral node anyway.
            }
        }
        leases.clear();
        for (Object h : handles.values()) {
            try {
                if (h instanceof SharedCount) {
                    ((SharedCount) h).close();
                } else if (h instanceof LeaderLatch) {
                    ((LeaderLatch) h).close();
                } else if (h instanceof LeaderSelector) {
                    ((LeaderSelector) h).close();
                } else if (h instanceof InterProcessMutex) {
                    InterProcessMutex m = (InterProcessMutex) h;
                    while (m.isOwnedByCurrentThread()) {
                        m.release();
                    }
                } else if (h instanceof InterProcessSemaphoreMutex) {
                    InterProcessSemaphoreMutex m = (InterProcessSemaphoreMutex) h;
                    if (m.isAcquiredInThisProcess()) {
                        m.release();
                    }
                }
            } catch (Exception e) {
                // Best effort: closing the client ends the session.
            }
        }
        handles.clear();
    }

    static void args(String[] a, int n) {
        if (a.length != n + 1) {
            throw new IllegalArgumentException(a[0] + " takes " + n + " argument(s), got " + (a.length - 1));
        }
    }

    void fresh(String id) {
        if (handles.containsKey(id)) {
            throw new IllegalArgumentException("id already in use: " + id);
        }
    }

    String put(String id, Object h) {
        fresh(id);
        handles.put(id, h);
        return "";
    }

    Object handle(String id) {
        Object h = handles.get(id);
        if (h == null) {
            throw new IllegalArgumentException("unknown id: " + id);
        }
        return h;
    }

    <T> T get(String id, Class<T> type) {
        Object h = handle(id);
        if (!type.isInstance(h)) {
            throw new IllegalArgumentException(id + " is a " + kind(h) + ", not a " + type.getSimpleName());
        }
        return type.cast(h);
    }

    /** The Curator client of this driver (one session). */
    CuratorFramework client() {
        return client;
    }

    /** Forgets a handle (the caller has closed it). */
    void forget(String id) {
        handles.remove(id);
    }

    private static String kind(Object h) {
        return h.getClass().getSimpleName();
    }

    private static String error(Throwable e) {
        String msg = e.getMessage();
        return "ERR " + e.getClass().getName() + ": " + (msg == null ? "" : oneLine(msg));
    }

    private static String oneLine(String s) {
        return s.replace('\r', ' ').replace('\n', ' ');
    }

    void emit(String line) {
        synchronized (outLock) {
            out.print(line);
            out.print('\n');
            out.flush();
        }
    }
}
