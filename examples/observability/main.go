// Command observability runs lock recipes on ZooKeeper and exports their
// OpenTelemetry metrics for Prometheus to scrape: workers contending for a
// mutex (with a try that would block now and then), a job holding a
// singleton lock, and a leader election whose leader steps down now and
// then. Point Prometheus at -listen and load docs/grafana-dashboard.json
// and docs/observability-alerts.yml (see docs/observability.md).
//
//	go run ./examples/observability -zk 127.0.0.1:2181 -listen 127.0.0.1:9464
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/mutex"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.ZK, "zk", "127.0.0.1:2181", "ZooKeeper connect string")
	flag.StringVar(&cfg.Listen, "listen", defaultListen, "address of the /metrics endpoint")
	flag.StringVar(&cfg.Namespace, "namespace", "examples-observability", "namespace of the locks")
	flag.IntVar(&cfg.Workers, "workers", 4, "workers contending for the orders lock")
	flag.DurationVar(&cfg.Hold, "hold", 20*time.Millisecond, "how long a worker holds the orders lock")
	flag.DurationVar(&cfg.Term, "term", 5*time.Second, "how long a leader leads before it steps down")
	flag.DurationVar(&cfg.SessionTimeout, "session-timeout", 10*time.Second, "ZooKeeper session timeout")
	duration := flag.Duration("duration", 0, "stop after this long (0: until interrupted)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	cfg.Ready = func(addr string) { log.Printf("metrics on http://%s/metrics", addr) }
	if err := run(ctx, cfg); err != nil {
		log.Fatal(err)
	}
}

// defaultListen is -listen's default, the target of prometheus.yml.
const defaultListen = "127.0.0.1:9464"

// config is what run needs; main fills it from flags, tests directly.
type config struct {
	ZK, Listen, Namespace string
	Workers               int
	Hold, Term            time.Duration
	SessionTimeout        time.Duration
	// Ready, if set, is called with the metrics address once it serves.
	Ready func(addr string)
	// Begin, if set, holds the recipes back until it closes: the metrics
	// of a connected client that has taken no lock yet can be scraped.
	Begin <-chan struct{}
}

// Lock paths of the example, in the namespace.
const (
	ordersPath   = "/locks/orders"
	reportPath   = "/locks/report"
	electionPath = "/election/scheduler"
)

// run serves /metrics and runs the recipes until ctx ends.
func run(ctx context.Context, cfg config) error {
	// The application, not the library, chooses the SDK and the exporter:
	// here the OpenTelemetry Prometheus exporter on a registry of our own.
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		<-served
	}()

	c, err := framework.Connect(ctx, cfg.ZK,
		framework.WithMeterProvider(mp),
		framework.WithNamespace(cfg.Namespace),
		framework.WithSessionTimeout(cfg.SessionTimeout))
	if err != nil {
		return err
	}
	defer c.Close()
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}
	if cfg.Begin != nil {
		select {
		case <-cfg.Begin:
		case <-ctx.Done():
			return nil
		}
	}

	var wg sync.WaitGroup
	for i := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(ctx, c, i, cfg.Hold)
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		singleton(ctx, c)
	}()
	go func() {
		defer wg.Done()
		campaign(ctx, c, cfg.Term)
	}()
	wg.Wait()
	return nil
}

// worker takes the orders lock again and again, holds it a while, and,
// while holding, tries it on a second handle (which would block).
func worker(ctx context.Context, c *framework.Client, id int, hold time.Duration) {
	m, other := mutex.New(c, ordersPath), mutex.New(c, ordersPath)
	for ctx.Err() == nil {
		if err := m.Acquire(ctx); err != nil {
			pause(ctx, 100*time.Millisecond) // connection trouble: the metrics tell
			continue
		}
		if id == 0 {
			if ok, err := other.TryAcquire(ctx); ok && err == nil {
				_ = other.Release(ctx)
			}
		}
		select {
		case <-time.After(hold):
		case <-m.Done(): // lost
		case <-ctx.Done():
		}
		_ = m.Release(context.WithoutCancel(ctx))
	}
}

// singleton holds the report lock for as long as it can: a job that must
// run in one process only.
func singleton(ctx context.Context, c *framework.Client) {
	m := mutex.New(c, reportPath)
	for ctx.Err() == nil {
		if err := m.Acquire(ctx); err != nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		select {
		case <-m.Done():
		case <-ctx.Done():
		}
		_ = m.Release(context.WithoutCancel(ctx))
	}
}

// campaign runs two participants of an election; a leader steps down after
// term, so leadership changes hands now and then.
func campaign(ctx context.Context, c *framework.Client, term time.Duration) {
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := leader.New(c, electionPath, leader.WithID(fmt.Sprintf("scheduler-%d", i)))
			for ctx.Err() == nil {
				err := e.Run(ctx, func(tctx context.Context) error {
					select {
					case <-time.After(term):
					case <-tctx.Done():
					}
					return nil
				})
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					pause(ctx, 100*time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
