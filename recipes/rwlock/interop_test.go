package rwlock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/rwlock"
)

// Go and Java (Apache Curator's InterProcessReadWriteLock) processes
// contend correctly on one path: writers exclude everyone, readers share,
// and the queue order holds across the two.
func TestCuratorInterop(t *testing.T) {
	// Java needs full paths: the Go client uses no namespace, the test a
	// path of its own.
	path := "/" + testkit.Unique(t) + "/lock"
	c := testkit.Connect(t, zkAddr, "")
	ctx := testkit.Ctx(t)
	j1 := curatorjava.StartDriver(t, zkAddr)
	j2 := curatorjava.StartDriver(t, zkAddr)
	do := func(d *curatorjava.Driver, cmd, want string) {
		t.Helper()
		got, err := d.Do(cmd)
		if err != nil || got != want {
			t.Fatalf("java %q = %q, %v; want %q", cmd, got, err, want)
		}
	}
	do(j1, "rwlock rw "+path, "")
	do(j2, "rwlock rw "+path, "")
	g := rwlock.New(c, path)
	try := func(k *rwlock.Lock, want bool, what string) {
		t.Helper()
		if ok, err := k.TryAcquire(ctx); ok != want || err != nil {
			t.Fatalf("%s: TryAcquire = %v, %v; want %v", what, ok, err, want)
		}
	}
	release := func(k *rwlock.Lock) {
		t.Helper()
		if err := k.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	t.Log("a Java writer excludes Go readers and writers")
	do(j1, "acquire rw.write 5000", "true")
	try(g.ReadLock(), false, "Go reader under a Java writer")
	try(g.WriteLock(), false, "Go writer under a Java writer")
	waitChildren(t, c, path, 1)
	read := acquireAsync(ctx, g.ReadLock())
	waitChildren(t, c, path, 2)
	pending(t, read, "Go reader queued behind a Java writer")
	do(j1, "release rw.write", "")
	mustAcquired(t, read, "Go reader after the Java writer")

	t.Log("Java and Go readers share; a Java writer waits for them")
	do(j1, "acquire rw.read 5000", "true")
	do(j2, "acquire rw.write 300", "false")
	nodes, err := j2.Do("participants rw.read")
	if err != nil || len(strings.Split(nodes, ",")) != 2 || !strings.Contains(nodes, g.ReadLock().Node()) {
		t.Fatalf("Curator's read participants %q (%v) do not list the Go reader %s", nodes, err, g.ReadLock().Node())
	}
	do(j1, "release rw.read", "")
	release(g.ReadLock())

	t.Log("a Go writer excludes Java readers and writers")
	try(g.WriteLock(), true, "Go writer alone")
	do(j1, "acquire rw.read 300", "false")
	do(j2, "acquire rw.write 300", "false")
	waitChildren(t, c, path, 1)

	t.Log("queue order across implementations: Go writer, Java writer, Java reader, Go reader")
	javaWrite := asyncDo(j1, "acquire rw.write 20000")
	waitChildren(t, c, path, 2)
	javaRead := asyncDo(j2, "acquire rw.read 20000")
	waitChildren(t, c, path, 3)
	late := rwlock.New(c, path)
	goRead := acquireAsync(ctx, late.ReadLock())
	waitChildren(t, c, path, 4)
	release(g.WriteLock())
	if got := javaResult(t, javaWrite); got != "true" {
		t.Fatalf("Java writer after the Go writer: %q", got)
	}
	pending(t, goRead, "Go reader behind a Java writer")
	do(j1, "release rw.write", "")
	if got := javaResult(t, javaRead); got != "true" {
		t.Fatalf("Java reader after the Java writer: %q", got)
	}
	mustAcquired(t, goRead, "Go reader sharing with the Java reader")
	do(j2, "release rw.read", "")
	release(late.ReadLock())

	t.Log("a queued Java writer does not slip in under a Go downgrade")
	try(g.WriteLock(), true, "Go writer")
	javaWrite = asyncDo(j1, "acquire rw.write 20000")
	waitChildren(t, c, path, 2)
	try(g.ReadLock(), true, "Go downgrade")
	release(g.WriteLock())
	rnode := g.ReadLock().Node()
	testkit.Eventually(t, "Java writer watching the downgraded read node", func() bool {
		s := watchers(t)[rnode]
		return len(s) == 1 && s[0] != c.SessionID()
	})
	do(j2, "acquire rw.read 300", "false") // queued behind the Java writer
	select {
	case r := <-javaWrite:
		t.Fatalf("Java writer got %q, %v during the downgraded read hold", r.out, r.err)
	default:
	}
	release(g.ReadLock())
	if got := javaResult(t, javaWrite); got != "true" {
		t.Fatalf("Java writer after the downgraded read hold: %q", got)
	}
	do(j1, "release rw.write", "")
}

type javaReply struct {
	out string
	err error
}

func asyncDo(d *curatorjava.Driver, cmd string) <-chan javaReply {
	ch := make(chan javaReply, 1)
	go func() {
		out, err := d.Do(cmd)
		ch <- javaReply{out, err}
	}()
	return ch
}

func javaResult(t testing.TB, ch <-chan javaReply) string {
	t.Helper()
	r := <-ch
	if r.err != nil {
		t.Fatal(fmt.Errorf("java: %w", r.err))
	}
	return r.out
}
