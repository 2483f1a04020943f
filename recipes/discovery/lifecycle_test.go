package discovery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// A second Start of a running ServiceCache or Provider fails, and the
// failure must not un-track the first: Discovery.Close still closes the
// running cache, so no server watch (and no goroutine, goleak) is left.
func TestFailedSecondStartKeepsTheFirstTracked(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	s := d.Cache("orders")
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); !errors.Is(err, discovery.ErrAlreadyStarted) {
		t.Fatalf("second Start of a cache: %v, want ErrAlreadyStarted", err)
	}
	p := d.Provider("billing")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); !errors.Is(err, discovery.ErrAlreadyStarted) {
		t.Fatalf("second Start of a provider: %v, want ErrAlreadyStarted", err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 2, c)
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.AwaitWatchCount(t, zkAddr, 0, c)
}

// After Discovery.Close, its Provider refuses to pick (ErrClosed): the
// instance Close has just unregistered must not be routed to.
func TestProviderAfterDiscoveryCloseReturnsErrClosed(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, testkit.Unique(t))
	d := discovery.New(c, "/services")
	if err := d.Register(ctx, instance("orders", "a", 1)); err != nil {
		t.Fatal(err)
	}
	p := d.Provider("orders")
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if inst, err := p.Instance(); err != nil || inst.ID != "a" {
		t.Fatalf("pick: %v %v", inst.ID, err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, c, "/services/orders/a"); st != nil {
		t.Fatal("Close left the instance registered")
	}
	if inst, err := p.Instance(); !errors.Is(err, discovery.ErrClosed) {
		t.Fatalf("pick after the Discovery's Close: %q, %v, want ErrClosed", inst.ID, err)
	}
	if l := p.Instances(); len(l) != 0 {
		t.Fatalf("Instances after the Discovery's Close: %v", idsOf(l))
	}
}

// NewProvider(nil) is a provider whose picks fail with ErrNilSource; it
// must not panic.
func TestNewProviderOfNilSource(t *testing.T) {
	t.Parallel()
	p := discovery.NewProvider(nil)
	if _, err := p.Instance(); !errors.Is(err, discovery.ErrNilSource) {
		t.Fatalf("pick from a nil source: %v, want ErrNilSource", err)
	}
	if l := p.Instances(); l != nil {
		t.Fatalf("Instances of a nil source: %v", l)
	}
	var nilCache *discovery.ServiceCache
	if _, err := discovery.NewProvider(nilCache).Instance(); !errors.Is(err, discovery.ErrNilSource) {
		t.Fatalf("pick from a nil *ServiceCache: %v, want ErrNilSource", err)
	}
}

// The lifecycle of every handle kind of the package, each step with its
// documented result: Start twice, Close twice, Close before Start, use
// and Start after Close, nil receivers and arguments. Nothing is left
// behind: no server watch (wchc), no znode, no goroutine (goleak, at the
// package's end).
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	is := func(t *testing.T, what string, err, want error) {
		t.Helper()
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	type env struct {
		ctx context.Context
		d   *discovery.Discovery
	}
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, e env)
	}{
		{"Discovery: Close twice, then every call ErrClosed", func(t *testing.T, e env) {
			is(t, "Close", e.d.Close(e.ctx), nil)
			is(t, "second Close", e.d.Close(e.ctx), nil)
			is(t, "Register", e.d.Register(e.ctx, instance("s", "i", 1)), discovery.ErrClosed)
			_, err := e.d.RegisterInstance(e.ctx, instance("s", "i", 1))
			is(t, "RegisterInstance", err, discovery.ErrClosed)
			is(t, "Update", e.d.Update(e.ctx, instance("s", "i", 1)), discovery.ErrClosed)
			is(t, "Unregister", e.d.Unregister(e.ctx, instance("s", "i", 1)), discovery.ErrClosed)
			_, err = e.d.Names(e.ctx)
			is(t, "Names", err, discovery.ErrClosed)
			_, err = e.d.Instances(e.ctx, "s")
			is(t, "Instances", err, discovery.ErrClosed)
			_, err = e.d.Instance(e.ctx, "s", "i")
			is(t, "Instance", err, discovery.ErrClosed)
			is(t, "Cache Start", e.d.Cache("s").Start(e.ctx), discovery.ErrClosed)
			p := e.d.Provider("s")
			is(t, "Provider Start", p.Start(e.ctx), discovery.ErrClosed)
			_, err = p.Instance()
			is(t, "Provider Instance", err, discovery.ErrClosed)
		}},
		{"Discovery: nil receiver and nil client", func(t *testing.T, e env) {
			var d *discovery.Discovery
			is(t, "Register", d.Register(e.ctx, instance("s", "i", 1)), discovery.ErrNilHandle)
			is(t, "Update", d.Update(e.ctx, instance("s", "i", 1)), discovery.ErrNilHandle)
			is(t, "Unregister", d.Unregister(e.ctx, instance("s", "i", 1)), discovery.ErrNilHandle)
			_, err := d.Names(e.ctx)
			is(t, "Names", err, discovery.ErrNilHandle)
			is(t, "Close", d.Close(e.ctx), nil)
			is(t, "Cache Start", d.Cache("s").Start(e.ctx), discovery.ErrNilHandle)
			is(t, "Cache Close", d.Cache("s").Close(), nil)
			p := d.Provider("s")
			is(t, "Provider Start", p.Start(e.ctx), discovery.ErrNilHandle)
			_, err = p.Instance()
			is(t, "Provider Instance", err, discovery.ErrNilHandle)
			is(t, "Provider Close", p.Close(), nil)
			nc := discovery.New(nil, "/s")
			is(t, "Register with a nil client", nc.Register(e.ctx, instance("s", "i", 1)), discovery.ErrNilClient)
			is(t, "Close with a nil client", nc.Close(e.ctx), nil)
		}},
		{"ServiceCache: Start twice, Close twice, Start after Close", func(t *testing.T, e env) {
			s := e.d.Cache("s")
			is(t, "Start", s.Start(e.ctx), nil)
			is(t, "second Start", s.Start(e.ctx), discovery.ErrAlreadyStarted)
			is(t, "Close", s.Close(), nil)
			is(t, "second Close", s.Close(), nil)
			is(t, "Start after Close", s.Start(e.ctx), discovery.ErrClosed)
			if l := s.Instances(); l != nil {
				t.Fatalf("Instances after Close: %v", idsOf(l))
			}
			s.Listen(func([]discovery.Instance) { t.Error("a closed cache's listener was called") })()
		}},
		{"ServiceCache: Close before Start", func(t *testing.T, e env) {
			s := e.d.Cache("s")
			is(t, "Close", s.Close(), nil)
			is(t, "Start", s.Start(e.ctx), discovery.ErrClosed)
		}},
		{"ServiceCache: a failed Start may be called again", func(t *testing.T, e env) {
			s := e.d.Cache("s")
			done, cancel := context.WithCancel(e.ctx)
			cancel()
			is(t, "Start on an ended ctx", s.Start(done), context.Canceled)
			is(t, "Start again", s.Start(e.ctx), nil)
			is(t, "bad name", e.d.Cache("a/b").Start(e.ctx), discovery.ErrInvalidInstance)
		}},
		{"ServiceCache: nil receiver", func(t *testing.T, e env) {
			var s *discovery.ServiceCache
			is(t, "Start", s.Start(e.ctx), discovery.ErrNilHandle)
			is(t, "Close", s.Close(), nil)
			if s.Instances() != nil {
				t.Fatal("Instances of a nil cache")
			}
			s.Listen(func([]discovery.Instance) {})()
		}},
		{"Provider: Start twice, Close twice, use after Close", func(t *testing.T, e env) {
			p := e.d.Provider("s")
			is(t, "Start", p.Start(e.ctx), nil)
			is(t, "second Start", p.Start(e.ctx), discovery.ErrAlreadyStarted)
			_, err := p.Instance()
			is(t, "Instance of none", err, discovery.ErrNoInstances)
			is(t, "Close", p.Close(), nil)
			is(t, "second Close", p.Close(), nil)
			_, err = p.Instance()
			is(t, "Instance after Close", err, discovery.ErrClosed)
			is(t, "Start after Close", p.Start(e.ctx), discovery.ErrClosed)
			if p.Instances() != nil {
				t.Fatal("Instances after Close")
			}
			p.NoteError(instance("s", "i", 1))
		}},
		{"Provider: Close before Start", func(t *testing.T, e env) {
			p := e.d.Provider("s")
			is(t, "Close", p.Close(), nil)
			is(t, "Start", p.Start(e.ctx), discovery.ErrClosed)
			_, err := p.Instance()
			is(t, "Instance", err, discovery.ErrClosed)
		}},
		{"Provider: nil receiver", func(t *testing.T, e env) {
			var p *discovery.Provider
			is(t, "Start", p.Start(e.ctx), discovery.ErrNilHandle)
			_, err := p.Instance()
			is(t, "Instance", err, discovery.ErrNilHandle)
			if p.Instances() != nil {
				t.Fatal("Instances of a nil provider")
			}
			p.NoteError(instance("s", "i", 1))
			is(t, "Close", p.Close(), nil)
		}},
		{"NewProvider: no Start needed, closed with its cache", func(t *testing.T, e env) {
			s := e.d.Cache("s")
			p := discovery.NewProvider(s)
			is(t, "Start", p.Start(e.ctx), nil)
			is(t, "second Start", p.Start(e.ctx), nil)
			is(t, "cache Start", s.Start(e.ctx), nil)
			_, err := p.Instance()
			is(t, "Instance of none", err, discovery.ErrNoInstances)
			is(t, "cache Close", s.Close(), nil)
			_, err = p.Instance()
			is(t, "Instance after the cache's Close", err, discovery.ErrClosed)
			q := discovery.NewProvider(list{})
			is(t, "Close", q.Close(), nil)
			is(t, "second Close", q.Close(), nil)
			_, err = q.Instance()
			is(t, "Instance after Close", err, discovery.ErrClosed)
			is(t, "Start after Close", q.Start(e.ctx), discovery.ErrClosed)
		}},
		{"Close racing Start", func(t *testing.T, e env) {
			for range 10 {
				s, p := e.d.Cache("s"), e.d.Provider("t")
				errs := make(chan error, 2)
				go func() { errs <- s.Start(e.ctx) }()
				go func() { errs <- p.Start(e.ctx) }()
				is(t, "cache Close", s.Close(), nil)
				is(t, "provider Close", p.Close(), nil)
				for range 2 {
					if err := <-errs; err != nil && !errors.Is(err, discovery.ErrClosed) {
						t.Fatalf("Start racing Close: %v", err)
					}
				}
			}
		}},
		{"Discovery Close with everything open", func(t *testing.T, e env) {
			if err := e.d.Register(e.ctx, instance("s", "i", 1)); err != nil {
				t.Fatal(err)
			}
			s, p := e.d.Cache("s"), e.d.Provider("s")
			is(t, "cache Start", s.Start(e.ctx), nil)
			is(t, "provider Start", p.Start(e.ctx), nil)
			is(t, "Close", e.d.Close(e.ctx), nil)
			is(t, "cache Start after", s.Start(e.ctx), discovery.ErrClosed)
			_, err := p.Instance()
			is(t, "pick after", err, discovery.ErrClosed)
			if s.Instances() != nil {
				t.Fatal("the cache offers instances after the Discovery's Close")
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Ctx(t)
			c := testkit.Connect(t, zkAddr, testkit.Unique(t))
			d := discovery.New(c, "/services")
			tt.run(t, env{ctx, d})
			if err := d.Close(ctx); err != nil {
				t.Fatal(err)
			}
			testkit.AwaitWatchCount(t, zkAddr, 0, c)
			testkit.Eventually(t, "no instance node left", func() bool {
				return len(testkit.Children(t, c, "/services/s")) == 0
			})
		})
	}
}
