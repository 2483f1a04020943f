package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// peer is one member of an ensemble as every member's zoo.cfg lists it.
type peer struct {
	id           int
	clientPort   int
	quorumPort   int
	electionPort int
}

// line is the peer's server line, "server.<id>=<host>:<quorum>:<election>",
// followed, in a dynamic configuration, by its role and client address.
func (p peer) line(o options) string {
	host := o.hostName()
	if !o.reconfig {
		return fmt.Sprintf("server.%d=%s:%d:%d", p.id, host, p.quorumPort, p.electionPort)
	}
	client := o.clientHost
	if client == "" {
		client = host
	}
	return fmt.Sprintf("server.%d=%s:%d:%d:participant;%s:%d", p.id, host, p.quorumPort, p.electionPort, client, p.clientPort)
}

// Files in a server's directory.
const (
	configFile  = "zoo.cfg"
	dynamicFile = "zoo.cfg.dynamic"
	dataDirName = "data"
	logFileName = "server.log"
	logbackFile = "logback.xml"
	log4jFile   = "log4j.properties"
)

// writeConfig writes zoo.cfg, data/myid and the logging configurations
// into dir. peers is empty for a standalone server. With WithReconfig the
// members go into a dynamic configuration file, zoo.cfg.dynamic, with their
// client addresses, and reconfiguration is enabled.
func writeConfig(dir string, self peer, peers []peer, o options) error {
	data := filepath.Join(dir, dataDirName)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("zktest: create data dir: %w", err)
	}
	var b strings.Builder
	// tickTime 200ms lets tests use sessions down to 400ms and makes
	// elections quick; initLimit and syncLimit are in ticks (10s and 5s),
	// generous enough for a loaded two-core machine.
	fmt.Fprintf(&b, "tickTime=200\ninitLimit=50\nsyncLimit=25\n")
	fmt.Fprintf(&b, "minSessionTimeout=400\nmaxSessionTimeout=60000\n")
	fmt.Fprintf(&b, "dataDir=%s\n", data)
	if !o.reconfig {
		fmt.Fprintf(&b, "clientPort=%d\nclientPortAddress=127.0.0.1\n", self.clientPort)
	}
	fmt.Fprintf(&b, "4lw.commands.whitelist=*\nadmin.enableServer=false\n")
	fmt.Fprintf(&b, "maxClientCnxns=0\n")
	var dynamic strings.Builder
	if o.reconfig {
		// The server rewrites the dynamic file (as zoo.cfg.dynamic.<version>)
		// at every reconfiguration; standaloneEnabled=false keeps an
		// ensemble of one reconfigurable.
		fmt.Fprintf(&b, "reconfigEnabled=true\nstandaloneEnabled=false\n")
		fmt.Fprintf(&b, "dynamicConfigFile=%s\n", filepath.Join(dir, dynamicFile))
	}
	for _, p := range peers {
		if o.reconfig {
			fmt.Fprintln(&dynamic, p.line(o))
		} else {
			fmt.Fprintln(&b, p.line(o))
		}
	}
	files := map[string]string{
		configFile:  b.String(),
		logbackFile: logbackConfig,
		log4jFile:   log4jConfig,
	}
	if o.reconfig {
		files[dynamicFile] = dynamic.String()
	}
	if len(peers) > 0 {
		files[filepath.Join(dataDirName, "myid")] = strconv.Itoa(self.id) + "\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("zktest: write %s: %w", name, err)
		}
	}
	return nil
}

// The logging configurations send INFO and above to the JVM's stdout,
// which the server's log file receives. Which one applies depends on the
// slf4j binding on the classpath: logback (Apache releases from 3.8),
// log4j 1.2 (older releases) or slf4j-simple (Debian, see jvmArgs).
const (
	logbackConfig = `<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="OUT"/></root>
</configuration>
`
	log4jConfig = `log4j.rootLogger=INFO, OUT
log4j.appender.OUT=org.apache.log4j.ConsoleAppender
log4j.appender.OUT.layout=org.apache.log4j.PatternLayout
log4j.appender.OUT.layout.ConversionPattern=%d{HH:mm:ss,SSS} [%t] %-5p %c{1} - %m%n
`
)

// jvmArgs returns the java command line for the server in dir.
func jvmArgs(inst installation, o options, dir string) []string {
	args := []string{
		fmt.Sprintf("-Xmx%dm", o.maxHeapMB),
		// Fast start for a short-lived server: no C2 compiler, the
		// simplest collector, the JDK's class-data archive, no hsperfdata.
		"-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1",
		"-Xshare:auto",
		"-XX:-UsePerfData",
		"-XX:+ExitOnOutOfMemoryError",
		"-Djava.net.preferIPv4Stack=true",
		// TTL nodes need extended types; containers are reaped within a
		// second instead of a minute.
		"-Dzookeeper.extendedTypesEnabled=true",
		"-Dznode.container.checkIntervalMs=1000",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.4lw.commands.whitelist=*",
		// Writes still reach the OS before a reply, so Stop and Kill lose
		// nothing; only a machine crash could, which tests do not survive.
		"-Dzookeeper.forceSync=no",
		// 1 MiB transaction-log preallocation instead of 64 MiB.
		"-Dzookeeper.preAllocSize=1024",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-Dorg.slf4j.simpleLogger.logFile=System.out",
		"-Dlogback.configurationFile=" + filepath.Join(dir, logbackFile),
		"-Dlog4j.configuration=file:" + filepath.Join(dir, log4jFile),
	}
	if o.reconfig {
		// Reconfiguration is for the super user or, as here, with ACLs
		// off: tests reconfigure without credentials.
		args = append(args, "-Dzookeeper.skipACL=yes")
	}
	args = append(args, o.jvmArgs...)
	return append(args,
		"-cp", strings.Join(inst.classpath, string(os.PathListSeparator)),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain",
		filepath.Join(dir, configFile),
	)
}
