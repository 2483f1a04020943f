package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// InstallCommand installs ZooKeeper (and a Java runtime) on Debian and
// Ubuntu. scripts/ensure-zookeeper.sh in this repository runs it when needed.
const InstallCommand = "sudo apt-get update && sudo apt-get install -y zookeeper"

// ErrNotInstalled is returned (wrapped, with what was searched and the
// command that fixes it) when no ZooKeeper jars or no java binary is found.
var ErrNotInstalled = errors.New("zktest: ZooKeeper not installed")

// debianJavaDir holds the jars of Debian's zookeeper/libzookeeper-java
// packages; zookeeper.jar's manifest Class-Path names its dependencies there.
var debianJavaDir = "/usr/share/java"

// installation is a ZooKeeper found on this machine.
type installation struct {
	java      string   // path of the java binary
	classpath []string // jars, in order
	source    string   // where the jars came from, for messages
}

// findInstallation looks for ZooKeeper in $ZOOKEEPER_HOME (lib/*.jar and
// *.jar), then in Debian's /usr/share/java, and for java in $JAVA_HOME/bin,
// then in PATH. It does no caching: tests may change the environment.
func findInstallation() (installation, error) {
	java, err := findJava()
	if err != nil {
		return installation{}, err
	}
	var searched []string
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		jars := homeJars(home)
		if hasZooKeeperJar(jars) {
			return installation{java: java, classpath: jars, source: "ZOOKEEPER_HOME=" + home}, nil
		}
		searched = append(searched, "ZOOKEEPER_HOME="+home+" (no zookeeper jar in it or its lib/)")
	}
	if jars, ok := debianJars(); ok {
		return installation{java: java, classpath: jars, source: debianJavaDir}, nil
	}
	searched = append(searched, debianJavaDir+"/zookeeper.jar (missing)")
	return installation{}, fmt.Errorf("%w: searched %s; install it with: %s (or run: bash scripts/ensure-zookeeper.sh), or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper release",
		ErrNotInstalled, strings.Join(searched, ", "), InstallCommand)
}

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: no java in JAVA_HOME or PATH (%w); install ZooKeeper and a JRE with: %s",
			ErrNotInstalled, err, InstallCommand)
	}
	return p, nil
}

// homeJars lists the jars of an Apache release: lib/*.jar plus the top
// level, where releases before 3.5 keep zookeeper-x.y.z.jar.
func homeJars(home string) []string {
	var jars []string
	for _, dir := range []string{home, filepath.Join(home, "lib")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.jar"))
		sort.Strings(m)
		jars = append(jars, m...)
	}
	return jars
}

func hasZooKeeperJar(jars []string) bool {
	for _, j := range jars {
		b := filepath.Base(j)
		if b == "zookeeper.jar" || (strings.HasPrefix(b, "zookeeper-3") && !strings.Contains(b, "sources")) {
			return true
		}
	}
	return false
}

// debianJars returns zookeeper.jar and zookeeper-jute.jar (whose manifests
// pull in netty, jackson and slf4j-api) plus slf4j-simple as the logging
// binding, so the server's log goes to its output.
func debianJars() ([]string, bool) {
	main := filepath.Join(debianJavaDir, "zookeeper.jar")
	if _, err := os.Stat(main); err != nil {
		return nil, false
	}
	jars := []string{main}
	for _, name := range []string{"zookeeper-jute.jar", "slf4j-simple.jar"} {
		p := filepath.Join(debianJavaDir, name)
		if _, err := os.Stat(p); err == nil {
			jars = append(jars, p)
		}
	}
	return jars, true
}
