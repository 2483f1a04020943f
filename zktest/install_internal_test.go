package zktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does, without failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Skipf(format string, args ...any) {
	f.msg = "skipped: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// hideZooKeeper points discovery at an empty directory for the test.
func hideZooKeeper(t *testing.T) {
	empty := t.TempDir()
	old := debianJavaDir
	debianJavaDir = empty
	t.Cleanup(func() { debianJavaDir = old })
	t.Setenv("ZOOKEEPER_HOME", empty)
}

func TestMissingZooKeeperFailsWithInstallCommand(t *testing.T) {
	hideZooKeeper(t)
	_, err := Launch()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), InstallCommand) {
		t.Fatalf("Launch() error = %v; want ErrNotInstalled naming %q", err, InstallCommand)
	}

	// StartServer must fail the test, not skip it.
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		StartServer(rec)
		rec.msg = "StartServer returned"
	}()
	<-done
	if !strings.HasPrefix(rec.msg, "zktest.StartServer: ") || !strings.Contains(rec.msg, InstallCommand) {
		t.Fatalf("StartServer without ZooKeeper: %q; want a Fatalf naming %q", rec.msg, InstallCommand)
	}
}

func TestMissingJavaFailsWithInstallCommand(t *testing.T) {
	t.Setenv("JAVA_HOME", "")
	t.Setenv("PATH", t.TempDir())
	_, err := LaunchEnsemble(3)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), InstallCommand) {
		t.Fatalf("LaunchEnsemble(3) error = %v; want ErrNotInstalled naming %q", err, InstallCommand)
	}
}

func TestZooKeeperHomeComesFirst(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lib/zookeeper-3.9.2.jar", "lib/zookeeper-jute-3.9.2.jar", "lib/logback-classic-1.2.13.jar"} {
		if err := os.WriteFile(filepath.Join(home, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("ZOOKEEPER_HOME", home)
	inst, err := findInstallation()
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.classpath) != 3 || !strings.HasPrefix(inst.classpath[0], home) {
		t.Fatalf("classpath %v; want the three jars of %s", inst.classpath, home)
	}
}

func TestBadOptionsAreRejected(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"tiny heap", WithMaxHeapMB(8)},
		{"zero start timeout", WithStartTimeout(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Launch(tt.opt); err == nil {
				t.Fatal("Launch accepted it")
			}
		})
	}
}
