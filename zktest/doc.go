// Package zktest runs real ZooKeeper servers, ensembles and a fault-injecting proxy for tests.
//
// It plays the part of Apache Curator's curator-test: each server is a
// ZooKeeper JVM on free loopback ports with its own temporary directory,
// configured for fast tests (tickTime 200ms, sessions from 400ms, TTL and
// container nodes enabled and reaped within a second, all four-letter words
// allowed, no admin server).
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
//
//	func TestSomething(t *testing.T) {
//		srv := zktest.StartServer(t)        // stopped and removed by t.Cleanup
//		proxy := zktest.NewProxy(t, srv.Addr())
//		c, err := framework.Connect(ctx, proxy.Addr())
//		...
//		proxy.Cut()       // the client is partitioned, and sees it at once
//		proxy.Restore()   // and may reconnect to its session
//		proxy.BlackHole() // the client is partitioned silently
//		proxy.Restore()
//		proxy.SetDelay(time.Millisecond) // a 2 ms round trip, each way 1 ms
//	}
//
// StartServer, StartEnsemble and NewProxy tie everything to a testing.TB and
// fail the test (never skip it) when something is missing. Launch,
// LaunchEnsemble and ListenProxy do the same for programs such as examples
// and benchmarks, which Close what they start.
//
// # One server per package
//
// TestMain has no testing.TB, so it uses Launch, and closes the server
// before checking for leaked goroutines (a running server counts one, the
// goroutine waiting for its process):
//
//	var srv *zktest.Server
//
//	func TestMain(m *testing.M) {
//		var err error
//		if srv, err = zktest.Launch(); err != nil {
//			fmt.Fprintln(os.Stderr, err) // names the install command
//			os.Exit(1)
//		}
//		code := m.Run()
//		srv.Close()
//		if err := goleak.Find(); code == 0 && err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			code = 1
//		}
//		os.Exit(code)
//	}
//
// # What must be installed
//
// A Java runtime and the ZooKeeper jars. zktest looks in $ZOOKEEPER_HOME
// (an unpacked Apache release: lib/*.jar and *.jar) first, then for the
// jars of Debian's and Ubuntu's zookeeper package in /usr/share/java; java
// comes from $JAVA_HOME/bin or PATH. Without them, Launch returns an error
// matching ErrNotInstalled and StartServer fails the test with the command
// that installs both:
//
//	sudo apt-get update && sudo apt-get install -y zookeeper
//
// or, from the repository root, bash scripts/ensure-zookeeper.sh.
//
// # Servers and ensembles
//
// A server can be stopped (SIGTERM), killed (SIGKILL, like a crash) and
// restarted on the same port with the same data. An ensemble names its
// leader from the srvr four-letter word, so a test can kill the leader and
// wait for the next one. Every server writes its output to a log file in
// its directory; when a test fails, its servers' logs are printed with
// t.Log. On Linux a server dies with the process that started it, so a
// crashed test binary leaves no JVM behind, and the next Launch removes the
// directories such a binary left in os.TempDir().
//
// An ensemble launched WithReconfig can be reconfigured while it runs
// (ZooKeeper's dynamic reconfiguration): its members sit in a dynamic
// configuration with their client addresses, AddServer starts a joiner,
// and Server.ConfigLine is the line reconfig takes, so a test can replace
// a member. WithConfigHost and WithClientAddress shape what
// /zookeeper/config says (a DNS name, the 0.0.0.0 wildcard).
//
// # Faults
//
// A Proxy sits between clients and one server and forwards ZooKeeper's
// length-prefixed frames in both directions. Cut closes every connection
// through it at once and refuses (accepts and closes) new ones until
// Restore: clients see a disconnect, not a hang, and their sessions live
// on in the server until they expire. BlackHole is the silent partition a
// real network gives: until Restore every byte both ways is read and
// dropped, nothing is closed (no FIN, no RST, even when a side gives up),
// and new connections are accepted but hear nothing. Clients find out only
// by their own read timeouts, and the server expires their sessions after
// the session timeout, ephemeral nodes and all. ZooKeeper's stream cannot
// survive a gap, so Restore closes the connections that lost bytes (and
// those accepted in the black hole); their clients reconnect, to their
// session if it is still alive. LoseNextCreateReply lets the next
// create reach the server and be applied, then drops its reply and closes
// the connection: the client sees a connection loss for a create that
// succeeded, the case Curator's protected mode exists for.
//
// SetDelay puts a network's distance between clients and the server: every
// chunk of bytes, both ways, is held for a one-way delay before it is passed
// on, so a round trip grows by twice the delay (SetDelay(250*time.Microsecond)
// for a 0.5 ms data-centre round trip). Chunks wait in a queue per direction,
// so order is kept and throughput is not limited: pipelined requests share
// their round trips. The delay works alongside the other faults; the
// benchmark (cmd/curatorbench -rtt) uses it to compare lock recipes at
// realistic round-trip times.
package zktest
