package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/recipes/mutex"
)

// Apache Curator's InterProcessMutex (Debian's libcurator-recipes-java, run
// by a Java driver compiled at test time) and ours contend on one path.
func TestInteropWithCuratorMutex(t *testing.T) {
	srv := server(t)
	java := curatorjava.StartDriver(t, srv.ConnectString())
	c := connect(t, srv.ConnectString(), "") // no namespace: Java sees full paths
	ctx := ctxT(t)
	path := "/interop/" + strings.ReplaceAll(t.Name(), "/", "_")
	java.MustDo("mutex j " + path)
	m := mutex.New(c, path)

	// Java holds: Go cannot get in, and queues behind it.
	if got := java.MustDo("acquire j 10000"); got != "true" {
		t.Fatalf("java acquire: %s", got)
	}
	if ok, err := m.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("Go TryAcquire while Java holds: %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Acquire(ctx) }()
	eventually(t, "Go queued behind Java", func() bool { return len(children(t, c, path)) == 2 })
	ps, err := m.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, javaNode := framework.SplitPath(ps[0])
	if !framework.IsProtected(javaNode) || !strings.Contains(javaNode, "-lock-") {
		t.Fatalf("Curator's node %q is not a protected lock node", javaNode)
	}
	// Hand-over Java → Go.
	java.MustDo("release j")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Go holds: Java cannot get in; Curator lists our node as the holder.
	if got := java.MustDo("acquire j 300"); got != "false" {
		t.Fatalf("java acquired while Go holds: %s", got)
	}
	jps := java.MustDo("participants j")
	if !strings.HasPrefix(jps, m.Node()) {
		t.Fatalf("Curator's participants %q do not start with our node %s", jps, m.Node())
	}
	// Curator recognises our node as protected and strips the same prefix.
	_, ours := framework.SplitPath(m.Node())
	if got, want := java.MustDo("protected "+ours), "true "+framework.StripProtected(ours); got != want {
		t.Fatalf("Curator reads our node %s as %q, want %q", ours, got, want)
	}
	// Hand-over Go → Java: Java waits in line while we hold.
	type answer struct {
		got string
		err error
	}
	jdone := make(chan answer, 1)
	go func() {
		got, err := java.Do("acquire j 20000")
		jdone <- answer{got, err}
	}()
	eventually(t, "Java queued behind Go", func() bool { return len(children(t, c, path)) == 2 })
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-jdone; a.err != nil || a.got != "true" {
		t.Fatalf("java acquire after Go's release: %q, %v", a.got, a.err)
	}
	java.MustDo("release j")
	eventually(t, "no nodes", func() bool { return len(children(t, c, path)) == 0 })
}

// Go and Java handles loop on one path; their holds never overlap.
func TestInteropNoOverlap(t *testing.T) {
	srv := server(t)
	java := curatorjava.StartDriver(t, srv.ConnectString())
	c := connect(t, srv.ConnectString(), "")
	path := "/interop/" + strings.ReplaceAll(t.Name(), "/", "_")
	java.MustDo("mutex j " + path)
	const rounds = 40
	var holders atomic.Int32
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Add(2)
	go func() { // Java side
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			got, err := java.Do("acquire j 20000")
			if err != nil || got != "true" {
				errc <- fmt.Errorf("java acquire: %q %v", got, err)
				return
			}
			if holders.Add(1) != 1 {
				errc <- errors.New("Java and Go held at once")
			}
			holders.Add(-1)
			if _, err := java.Do("release j"); err != nil {
				errc <- err
				return
			}
		}
	}()
	go func() { // Go side
		defer wg.Done()
		m := mutex.New(c, path)
		for i := 0; i < rounds; i++ {
			if err := m.Acquire(context.Background()); err != nil {
				errc <- err
				return
			}
			if holders.Add(1) != 1 {
				errc <- errors.New("Go and Java held at once")
			}
			holders.Add(-1)
			if err := m.Release(context.Background()); err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}
