// Package curatorjava is internal test support: it runs the reference Java
// implementation, Apache Curator's recipes, next to the Go port so that the
// two can be checked against each other on a real ZooKeeper ensemble.
//
// It is not part of the library's API and is meant for tests and the tools
// only. The benchmark's Java side (Bench.java) lives with the benchmark in
// the tools module, in cmd/internal/javabench, and runs through [Command].
//
// # Requirements
//
// A JDK (java and javac, 11 or newer; JAVA_HOME is honoured) and the Debian
// packages of Curator 5 and its dependencies:
//
//	sudo apt-get update && sudo apt-get install -y libcurator-recipes-java
//
// (or bash scripts/ensure-zookeeper.sh --with-curator). [Classpath] lists the
// jars that are used. The Java sources in the java directory are embedded in
// the package and compiled on first use into a per-user cache directory keyed
// by a hash of the sources, the compiler and the classpath ([CompiledClasses];
// [CompiledClassesOf] does the same for another package's sources), so
// repeated test runs start the JVM without recompiling.
//
// # The driver protocol
//
// [StartDriver] starts Driver.java, one Curator client (one ZooKeeper
// session) per driver. The driver reads one command per line on stdin and
// answers every command with exactly one line on stdout, in order:
//
//	OK [result]
//	ERR <exception class>: <message>
//
// Asynchronous notifications are lines that start with "EVENT " and can come
// at any time between responses:
//
//	EVENT state <CONNECTED|SUSPENDED|RECONNECTED|LOST|READ_ONLY>
//	EVENT revoked <id>
//	EVENT count <id> <value>       a SharedCount saw a new value
//	EVENT revokeFailed <id> <exception>
//	EVENT leader <id> <true|false> a latch or selector gained or lost leadership
//
// Commands name a handle by an id chosen by the caller; paths are absolute
// ZooKeeper paths, timeouts are in milliseconds (a negative timeout waits
// forever):
//
//	mutex <id> <path>            create an InterProcessMutex
//	rwlock <id> <path>           create an InterProcessReadWriteLock; its locks
//	                             are the ids <id>.read and <id>.write
//	semmutex <id> <path>         create an InterProcessSemaphoreMutex
//	acquire <id> <timeoutMs>     acquire a lock handle    -> OK true|false
//	release <id>                 release a lock handle
//	holding <id>                 isAcquiredInThisProcess  -> OK true|false
//	semv2 <id> <path> <max>      create an InterProcessSemaphoreV2
//	lease <id> <timeoutMs>       acquire one lease        -> OK <lease node path>|none
//	return <lease node path>     return a lease acquired by this driver
//	count <id> <path> <seed>     create and start a SharedCount
//	get <id>                     current count            -> OK <value>
//	set <id> <value>             setCount
//	trySet <id> <value>          trySetCount against the cached version -> OK true|false
//	participants <id>            participant nodes of a mutex, an rwlock (or
//	                             either of its locks) or a semv2 -> OK a,b,c
//	                             (Curator's own form: full paths for locks,
//	                             node names for semaphores)
//	revocable <id>               make a mutex revocable (before acquiring it);
//	                             on a revocation request the driver releases it
//	                             and emits "EVENT revoked <id>"
//	revoke <lock node path>      Revoker.attemptRevoke
//	latch <id> <path> <pid>      create and start a LeaderLatch with participant
//	                             id pid; emits "EVENT leader <id> true|false"
//	                             from its LeaderLatchListener
//	selector <id> <path> <pid>   create and start an auto-requeued LeaderSelector;
//	                             each term emits "EVENT leader <id> true", lasts
//	                             until "yield <id>", then emits "... false"
//	yield <id>                   end a selector's term    -> OK true|false
//	hasLeadership <id>           a latch's or selector's  -> OK true|false
//	leaders <id>                 getParticipants of a latch or selector
//	                             -> OK id:isLeader,id:isLeader,...
//	close <id>                   close (SharedCount, LeaderLatch, LeaderSelector)
//	                             and forget a handle
//	ping                         -> OK pong
//	quit                         release everything, close the client -> OK bye
//
// All commands of one driver run on one Java thread, one at a time, so a
// blocking acquire delays the commands after it; use several drivers to model
// several processes.
//
// Each recipe family beyond the locks keeps its commands in a Java file of its
// own (java/CacheCommands.java, java/NodeCommands.java, ...: the names are in
// Driver.EXTENSIONS), a class implementing Driver.Commands with a constructor
// taking the Driver; the commands each family adds are documented in its file
// and in the tests that use them.
package curatorjava
