package curatorjava

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// InstallHint is the command that installs everything this package needs on
// Debian and Ubuntu.
const InstallHint = "sudo apt-get update && sudo apt-get install -y libcurator-recipes-java libcurator-discovery-java " +
	"(or: bash scripts/ensure-zookeeper.sh --with-curator)"

// ErrNotInstalled is wrapped by the errors of [Classpath], [CompiledClasses],
// [CompiledClassesOf] and [Command] when Java or the Curator jars are
// missing; [StartDriver] fails its test with the same message.
var ErrNotInstalled = errors.New("curatorjava: Java or Apache Curator is not installed")

// JarDirEnv names an environment variable holding an extra directory that is
// searched for the jars before /usr/share/java.
const JarDirEnv = "GOCURATOR_JAR_DIR"

// requiredJars is the minimal runtime classpath of Curator 5 recipes, as
// packaged by Debian: the three Curator modules, the ZooKeeper client (which
// uses NIO by default, so no Netty), its jute records, Guava (Debian's
// guava.jar also contains failureaccess) and the SLF4J API; and service
// discovery (curator-x-discovery) with the Jackson it serializes with.
var requiredJars = []string{
	"curator-recipes.jar",
	"curator-x-discovery.jar",
	"jackson-databind.jar",
	"jackson-core.jar",
	"jackson-annotations.jar",
	"curator-framework.jar",
	"curator-client.jar",
	"zookeeper.jar",
	"zookeeper-jute.jar",
	"guava.jar",
	"slf4j-api.jar",
}

// optionalJars are added when present: a separate failureaccess jar (other
// Guava packagings) and the first SLF4J binding found. slf4j-simple is
// configured to log WARN and above to stderr; without any binding SLF4J 1.7
// prints a notice and discards log output.
var optionalJars = [][]string{
	{"failureaccess.jar"},
	{"slf4j-simple.jar", "slf4j-nop.jar"},
}

func jarDirs() []string {
	var dirs []string
	if d := os.Getenv(JarDirEnv); d != "" {
		dirs = append(dirs, d)
	}
	return append(dirs, "/usr/share/java")
}

func findJar(name string) (string, bool) {
	for _, dir := range jarDirs() {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
	}
	return "", false
}

// Classpath returns the runtime classpath of the Curator recipes (without
// this package's compiled classes), with entries separated by
// os.PathListSeparator. If a jar is missing, the error wraps ErrNotInstalled
// and says how to install it.
func Classpath() (string, error) {
	var cp, missing []string
	for _, name := range requiredJars {
		p, ok := findJar(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		cp = append(cp, p)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: missing %s in %s; install with: %s",
			ErrNotInstalled, strings.Join(missing, ", "), strings.Join(jarDirs(), ", "), InstallHint)
	}
	for _, alternatives := range optionalJars {
		for _, name := range alternatives {
			if p, ok := findJar(name); ok {
				cp = append(cp, p)
				break
			}
		}
	}
	return strings.Join(cp, string(os.PathListSeparator)), nil
}

// javaTool finds java or javac, preferring $JAVA_HOME/bin.
func javaTool(name string) (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s not found (JAVA_HOME unset or wrong, not in PATH); install a JDK and Curator with: "+
			"sudo apt-get update && sudo apt-get install -y default-jdk-headless libcurator-recipes-java libcurator-discovery-java",
			ErrNotInstalled, name)
	}
	return p, nil
}
