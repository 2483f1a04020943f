package curatorjava

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// driverSources holds Driver.java. Other Java programs (the benchmark's
// Bench.java, in the tools module) bring their own sources to
// [CompiledClassesOf] and [Command].
//
//go:embed java/*.java
var driverSources embed.FS

// javacFlags target Java 11 so that any JDK from 11 on can compile and run
// the classes.
var javacFlags = []string{"-encoding", "UTF-8", "--release", "11", "-Xlint:all,-path,-options", "-implicit:none"}

// cacheVersion is part of the cache key; bump it to invalidate old caches
// when the layout of the cache changes.
const cacheVersion = "curatorjava-1"

// sourceNames lists the .java files in the directory java of src.
func sourceNames(src fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(src, "java")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".java") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Compile compiles the embedded Java sources (the driver) with javac into
// dir, which must exist. It does not use the cache; see [CompiledClasses].
func Compile(dir string) error {
	javac, err := javaTool("javac")
	if err != nil {
		return err
	}
	cp, err := Classpath()
	if err != nil {
		return err
	}
	return compile(driverSources, javac, cp, dir)
}

func compile(src fs.FS, javac, cp, dir string) error {
	names, err := sourceNames(src)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "curatorjava-src-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := append([]string{}, javacFlags...)
	args = append(args, "-cp", cp, "-d", dir)
	for _, name := range names {
		data, err := fs.ReadFile(src, path.Join("java", name))
		if err != nil {
			return err
		}
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		args = append(args, p)
	}
	out, err := exec.Command(javac, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("curatorjava: javac failed: %v\n%s", err, out)
	}
	return nil
}

// cacheKey hashes everything the classes compiled from src depend on.
func cacheKey(src fs.FS, javac, cp string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", cacheVersion, javac, cp, strings.Join(javacFlags, " "))
	if real, err := filepath.EvalSymlinks(javac); err == nil {
		fmt.Fprintf(h, "%s\x00", real)
	}
	names, err := sourceNames(src)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		data, err := fs.ReadFile(src, path.Join("java", name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// cacheRoot is the directory holding one subdirectory of classes per key.
func cacheRoot() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gocurator-java")
}

var compiled struct {
	sync.Mutex
	dirs map[string]string // cache key -> directory
}

// CompiledClasses returns a directory holding the driver's compiled Java
// classes, compiling them first if needed; see [CompiledClassesOf].
func CompiledClasses() (string, error) { return CompiledClassesOf(driverSources) }

// CompiledClassesOf returns a directory holding the classes compiled from
// the .java files in the directory java of src, compiling them first if
// needed. Classes are cached under os.UserCacheDir()/gocurator-java/<hash>
// (os.TempDir() if there is no user cache directory), where the hash covers
// the sources, the javac binary, its flags and the classpath. Concurrent
// callers, in this process or in others, are safe: each compiles into a
// private temporary directory and renames it into place; the first rename
// wins. Errors wrap ErrNotInstalled when Java or the Curator jars are
// missing.
func CompiledClassesOf(src fs.FS) (string, error) {
	javac, err := javaTool("javac")
	if err != nil {
		return "", err
	}
	cp, err := Classpath()
	if err != nil {
		return "", err
	}
	key, err := cacheKey(src, javac, cp)
	if err != nil {
		return "", err
	}

	compiled.Lock()
	defer compiled.Unlock()
	if dir, ok := compiled.dirs[key]; ok {
		return dir, nil
	}
	dir, err := compileCached(src, cacheRoot(), key, javac, cp)
	if err != nil {
		return "", err
	}
	if compiled.dirs == nil {
		compiled.dirs = make(map[string]string)
	}
	compiled.dirs[key] = dir
	return dir, nil
}

// compileCached returns root/key, compiling into it unless it exists. Safe
// for concurrent use by several processes: the classes are compiled into a
// private temporary directory that is then renamed to root/key; a rename
// fails if root/key already exists (a directory that is not empty), and the
// loser then uses the winner's classes.
func compileCached(src fs.FS, root, key, javac, cp string) (string, error) {
	final := filepath.Join(root, key)
	if _, err := os.Stat(final); err == nil {
		return final, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("curatorjava: class cache: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("curatorjava: class cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("curatorjava: class cache: %w", err)
	}
	if err := compile(src, javac, cp, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("curatorjava: class cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(final); statErr != nil {
			return "", fmt.Errorf("curatorjava: class cache: %w", err)
		}
	}
	return final, nil
}

// Command returns a command that runs mainClass, a fully qualified class
// compiled from the .java files in the directory java of src, with the JVM
// options jvmOptions and the program arguments args: java from JAVA_HOME or
// PATH, src compiled on first use ([CompiledClassesOf]), Curator's jars on
// the classpath ([Classpath]), and on Linux the JVM killed by the kernel if
// the Go process dies. Cancelling ctx kills the started JVM. Errors wrap
// ErrNotInstalled when Java or the Curator jars are missing.
func Command(ctx context.Context, src fs.FS, mainClass string, jvmOptions []string, args ...string) (*exec.Cmd, error) {
	java, err := javaTool("java")
	if err != nil {
		return nil, err
	}
	classes, err := CompiledClassesOf(src)
	if err != nil {
		return nil, err
	}
	cp, err := Classpath()
	if err != nil {
		return nil, err
	}
	argv := append([]string{}, jvmOptions...)
	argv = append(argv, commonJVMOptions...)
	argv = append(argv, "-cp", classes+string(os.PathListSeparator)+cp, mainClass)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, java, argv...)
	cmd.SysProcAttr = sysProcAttr()
	return cmd, nil
}

// commonJVMOptions: no SASL attempt by the ZooKeeper client, and SLF4J
// (when slf4j-simple is the binding) logs WARN and above to stderr.
var commonJVMOptions = []string{
	"-XX:-UsePerfData",
	"-Dzookeeper.sasl.client=false",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
	"-Dorg.slf4j.simpleLogger.logFile=System.err",
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
}
