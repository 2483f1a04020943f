package curatorjava

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testkit"
)

// zkAddr is the package's ZooKeeper server, started by TestMain for the
// tests that drive Curator against one.
var zkAddr string

func TestMain(m *testing.M) { testkit.Main(m, &zkAddr) }

// eventTimeout bounds waits for asynchronous driver events.
const eventTimeout = 30 * time.Second

func expect(t *testing.T, d *Driver, cmd, want string) {
	t.Helper()
	if got := d.MustDo(cmd); got != want {
		t.Fatalf("%s: got %q, want %q", cmd, got, want)
	}
}

func TestCurator(t *testing.T) {
	// A chroot of the test's own on the package's server.
	ns := testkit.Unique(t)
	if _, err := testkit.Connect(t, zkAddr, "").Create(testkit.Ctx(t), "/"+ns, nil); err != nil {
		t.Fatalf("create chroot: %v", err)
	}
	cs := zkAddr + "/" + ns

	t.Run("Mutex", func(t *testing.T) {
		d := StartDriver(t, cs)
		if err := d.WaitEvent("state CONNECTED", eventTimeout); err != nil {
			t.Fatal(err)
		}
		t.Logf("driver start-up (JVM start + connect): %v", d.StartupTime())
		expect(t, d, "ping", "pong")
		expect(t, d, "mutex m /mutex/a", "")
		expect(t, d, "holding m", "false")
		expect(t, d, "acquire m 5000", "true")
		expect(t, d, "holding m", "true")
		nodes := d.MustDo("participants m")
		if !strings.HasPrefix(nodes, "/mutex/a/") || strings.Contains(nodes, ",") {
			t.Fatalf("participants m = %q, want one node under /mutex/a", nodes)
		}
		expect(t, d, "acquire m 5000", "true") // reentrant
		expect(t, d, "release m", "")
		expect(t, d, "holding m", "true")
		expect(t, d, "release m", "")
		expect(t, d, "holding m", "false")
		expect(t, d, "participants m", "")
	})

	t.Run("Errors", func(t *testing.T) {
		d := StartDriver(t, cs)
		_, err := d.Do("frobnicate x")
		var ce *CommandError
		if !errors.As(err, &ce) || ce.Class != "java.lang.IllegalArgumentException" ||
			ce.Message != "unknown command: frobnicate" {
			t.Fatalf("unknown command: err = %v, want IllegalArgumentException", err)
		}
		expect(t, d, "mutex m /errors/a", "")
		_, err = d.Do("release m")
		if !errors.As(err, &ce) || ce.Class != "java.lang.IllegalMonitorStateException" {
			t.Fatalf("release without acquire: err = %v, want IllegalMonitorStateException", err)
		}
		if _, err := d.Do("acquire nosuch 10"); !errors.As(err, &ce) {
			t.Fatalf("unknown id: err = %v, want a CommandError", err)
		}
		expect(t, d, "ping", "pong") // still in sync
	})

	t.Run("ConcurrentDoAndQuit", func(t *testing.T) {
		d := StartDriver(t, cs)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					if got, err := d.Do("ping"); err != nil || got != "pong" {
						errs <- fmt.Errorf("ping: %q, %v", got, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		expect(t, d, "quit", "bye")
		timeout := time.NewTimer(eventTimeout)
		defer timeout.Stop()
		for open := true; open; {
			select {
			case _, open = <-d.Events():
			case <-timeout.C:
				t.Fatal("events channel not closed after quit")
			}
		}
		if _, err := d.Do("ping"); err == nil {
			t.Fatal("ping after quit succeeded")
		}
	})

	t.Run("MutexContention", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "mutex m /contention/lock", "")
		expect(t, b, "mutex m /contention/lock", "")
		expect(t, a, "acquire m 5000", "true")
		expect(t, b, "acquire m 200", "false")
		expect(t, b, "holding m", "false")
		expect(t, a, "release m", "")
		expect(t, b, "acquire m 10000", "true")
		expect(t, a, "acquire m 200", "false")
		expect(t, b, "release m", "")
	})

	t.Run("ReadWriteLock", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "rwlock rw /rwlock/a", "")
		expect(t, b, "rwlock rw /rwlock/a", "")
		expect(t, a, "acquire rw.read 5000", "true")
		expect(t, b, "acquire rw.read 5000", "true") // readers share
		if got := strings.Split(a.MustDo("participants rw"), ","); len(got) != 2 {
			t.Fatalf("participants with two readers = %q", got)
		}
		expect(t, b, "acquire rw.write 200", "false") // writer excluded by readers
		expect(t, a, "release rw.read", "")
		expect(t, b, "release rw.read", "")
		expect(t, b, "acquire rw.write 10000", "true")
		expect(t, a, "acquire rw.read 200", "false") // readers excluded by the writer
		expect(t, b, "acquire rw.read 5000", "true") // but the writer may read
		expect(t, b, "release rw.read", "")
		expect(t, b, "release rw.write", "")
		expect(t, a, "acquire rw.read 10000", "true")
		expect(t, a, "release rw.read", "")
	})

	t.Run("SemaphoreV2", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "semv2 s /semv2/a 2", "")
		expect(t, b, "semv2 s /semv2/a 2", "")
		l1 := a.MustDo("lease s 5000")
		l2 := b.MustDo("lease s 5000")
		for _, l := range []string{l1, l2} {
			if !strings.HasPrefix(l, "/semv2/a/leases/") {
				t.Fatalf("lease path %q not under /semv2/a/leases/", l)
			}
		}
		if got := strings.Split(a.MustDo("participants s"), ","); len(got) != 2 {
			t.Fatalf("participants with two leases = %q", got)
		}
		expect(t, a, "lease s 200", "none")
		expect(t, a, "return "+l1, "")
		l3 := b.MustDo("lease s 10000")
		if l3 == "none" || l3 == l2 {
			t.Fatalf("lease after return = %q", l3)
		}
		expect(t, b, "return "+l2, "")
		expect(t, b, "return "+l3, "")
		if _, err := b.Do("return " + l3); err == nil {
			t.Fatal("returning a lease twice succeeded")
		}
	})

	t.Run("SemaphoreMutex", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "semmutex m /semmutex/a", "")
		expect(t, b, "semmutex m /semmutex/a", "")
		expect(t, a, "acquire m 5000", "true")
		expect(t, a, "holding m", "true")
		expect(t, b, "acquire m 200", "false")
		expect(t, a, "release m", "")
		expect(t, b, "acquire m 10000", "true")
		expect(t, b, "release m", "")
	})

	t.Run("SharedCount", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "count c /count/a 5", "")
		expect(t, a, "get c", "5")
		expect(t, b, "count c /count/a 99", "") // the node exists: the seed is ignored
		expect(t, b, "get c", "5")
		expect(t, a, "set c 7", "")
		expect(t, a, "get c", "7")
		if err := b.WaitEvent("count c 7", eventTimeout); err != nil {
			t.Fatal(err)
		}
		expect(t, b, "get c", "7")
		expect(t, b, "trySet c 8", "true")
		if err := a.WaitEvent("count c 8", eventTimeout); err != nil {
			t.Fatal(err)
		}
		expect(t, a, "trySet c 9", "true")
		// b may or may not have seen 9 yet; either its compare-and-set
		// succeeds, or it fails and refreshes b's value.
		if b.MustDo("trySet c 10") == "true" {
			expect(t, b, "get c", "10")
		} else {
			expect(t, b, "get c", "9")
		}
		expect(t, a, "close c", "")
		expect(t, a, "count c2 /count/b 3", "")
		expect(t, a, "trySet c2 4", "true")
		expect(t, a, "get c2", "4")
	})

	t.Run("Revocation", func(t *testing.T) {
		a, b := StartDriver(t, cs), StartDriver(t, cs)
		expect(t, a, "mutex m /revoke/a", "")
		expect(t, a, "revocable m", "")
		expect(t, a, "acquire m 5000", "true")
		node := a.MustDo("participants m")
		expect(t, b, "mutex m /revoke/a", "")
		expect(t, b, "acquire m 200", "false")
		expect(t, b, "revoke "+node, "")
		if err := a.WaitEvent("revoked m", eventTimeout); err != nil {
			t.Fatal(err)
		}
		expect(t, a, "holding m", "false")
		expect(t, b, "acquire m 10000", "true")
		expect(t, b, "release m", "")
	})
}

func TestClasspath(t *testing.T) {
	cp, err := Classpath()
	if err != nil {
		t.Fatal(err)
	}
	for _, jar := range requiredJars {
		if !strings.Contains(cp, "/"+jar) {
			t.Errorf("classpath %q lacks %s", cp, jar)
		}
	}
}

func TestClasspathMissingJars(t *testing.T) {
	t.Setenv(JarDirEnv, t.TempDir())
	saved := requiredJars
	requiredJars = append([]string{"curator-recipes-does-not-exist.jar"}, saved...)
	defer func() { requiredJars = saved }()
	_, err := Classpath()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install -y libcurator-recipes-java") {
		t.Fatalf("err = %v, want ErrNotInstalled with the install command", err)
	}
}

func TestJavaMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("JAVA_HOME", "")
	for _, tool := range []string{"java", "javac"} {
		_, err := javaTool(tool)
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install") {
			t.Errorf("javaTool(%q) = %v, want ErrNotInstalled with an install command", tool, err)
		}
	}
}

func TestCompiledClassesCached(t *testing.T) {
	dir1, err := CompiledClasses()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir1 + "/curatorjava/Driver.class"); err != nil {
		t.Fatal(err)
	}
	dir2, err := CompiledClasses()
	if err != nil {
		t.Fatal(err)
	}
	if dir1 != dir2 {
		t.Fatalf("second call compiled again into %s (first %s)", dir2, dir1)
	}
}

func TestCompileCachedConcurrently(t *testing.T) {
	javac, err := javaTool("javac")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Classpath()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	const n = 3
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = compileCached(driverSources, root, "k", javac, cp)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dirs[i] != filepath.Join(root, "k") {
			t.Fatalf("compileCached = %q, want %q", dirs[i], filepath.Join(root, "k"))
		}
	}
	if _, err := os.Stat(filepath.Join(root, "k", "curatorjava", "Driver.class")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("cache root holds %d entries, want only the final directory", len(entries))
	}
}

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	if err := Compile(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/curatorjava/Driver.class"); err != nil {
		t.Fatal(err)
	}
}

func TestPumpNeverBlocksSender(t *testing.T) {
	in, out, stop := make(chan string), make(chan string), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(in, out, stop)
	}()
	const n = 10000
	for i := 0; i < n; i++ {
		in <- strings.Repeat("x", i%7) // nobody reads out yet
	}
	close(in)
	for i := 0; i < n; i++ {
		if got, want := <-out, strings.Repeat("x", i%7); got != want {
			t.Fatalf("item %d = %q, want %q", i, got, want)
		}
	}
	if _, ok := <-out; ok {
		t.Fatal("out not closed after in was drained")
	}
	<-done
	close(stop)
}

func TestPumpStop(t *testing.T) {
	in, out, stop := make(chan string), make(chan string), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		pump(in, out, stop)
	}()
	in <- "unread"
	close(stop)
	<-done
}
