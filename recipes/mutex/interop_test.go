package mutex_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/mutex"
)

// Apache Curator's InterProcessMutex (Debian's libcurator-recipes-java, run
// by a Java driver compiled at test time) and ours contend on one path.
func TestInteropWithCuratorMutex(t *testing.T) {
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
	ctx := testkit.Ctx(t)
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
	testkit.Eventually(t, "Go queued behind Java", func() bool { return len(testkit.Children(t, c, path)) == 2 })
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
	testkit.Eventually(t, "Java queued behind Go", func() bool { return len(testkit.Children(t, c, path)) == 2 })
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-jdone; a.err != nil || a.got != "true" {
		t.Fatalf("java acquire after Go's release: %q, %v", a.got, a.err)
	}
	java.MustDo("release j")
	testkit.Eventually(t, "no nodes", func() bool { return len(testkit.Children(t, c, path)) == 0 })
}

// Go and Java handles loop on one path; their holds never overlap. The
// evidence lasts each whole hold: one marker node, created just after an
// acquire returns and deleted just before the release (by a client of the
// test's own for Java's holds), whose create fails if the other side's
// hold is still on.
func TestInteropNoOverlap(t *testing.T) {
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "")
	witness := testkit.Connect(t, zkAddr, "") // marks Java's holds
	path := "/interop/" + strings.ReplaceAll(t.Name(), "/", "_")
	marker := path + "-marker" // outside the lock's directory
	java.MustDo("mutex j " + path)
	const rounds = 40
	ctx := testkit.Ctx(t)
	var wg sync.WaitGroup
	wg.Add(2)
	hold := func(who string, c *framework.Client) {
		if _, err := c.Create(ctx, marker, nil, framework.WithMode(framework.Ephemeral)); err != nil {
			t.Errorf("%s holds: marker: %v (the other side's hold still on?)", who, err)
		}
		if err := c.Delete(ctx, marker); err != nil {
			t.Errorf("%s: delete marker: %v", who, err)
		}
	}
	go func() { // Java side
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			got, err := java.Do("acquire j 20000")
			if err != nil || got != "true" {
				t.Errorf("java acquire: %q %v", got, err)
				return
			}
			hold("Java", witness)
			if _, err := java.Do("release j"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() { // Go side
		defer wg.Done()
		m := mutex.New(c, path)
		for i := 0; i < rounds; i++ {
			if err := m.Acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			hold("Go", c)
			if err := m.Release(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
}
