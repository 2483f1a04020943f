# gocurator: make test | make demo | make bench | make lint
GO        ?= go
# The modules go.work joins: the library (.), the tools (./cmd), the
# examples with heavy dependencies (./examples/observability) and the tests
# that need OpenTelemetry's SDK (./telemetrytests); see
# docs/getting-started.md, "Modules". In workspace mode ./... stops at a
# nested module, so PKGS names every module's tree.
MODULES   := $(patsubst $(CURDIR)%,.%,$(shell $(GO) list -m -f '{{.Dir}}'))
PKGS      ?= $(addsuffix /...,$(MODULES))
STATICCHECK_VERSION ?= v0.8.2
BENCH_ARGS ?=

.PHONY: test demo bench bench-disk cutsweep lint deps deps-curator vet staticcheck fmt tidy tidy-check deps-size

# Installs ZooKeeper (and Curator's jars, for the interop tests),
# Prometheus (for the dashboard and alert queries' test) and Chromium (for
# the web console's browser tests) when missing.
# README.md, "Try it", lists what each target installs; a test there
# (readme_test.go) compares it with `make -n`.
deps:
	@bash scripts/ensure-zookeeper.sh --with-curator
	@bash scripts/ensure-prometheus.sh
	@bash scripts/ensure-chromium.sh

# What the demo uses: a ZooKeeper server (Debian's zookeeper package, which
# brings a Java runtime), when missing. No Curator, no Prometheus.
deps-zookeeper:
	@bash scripts/ensure-zookeeper.sh

.PHONY: deps-zookeeper

test: deps
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

demo: deps-zookeeper
	$(GO) run ./examples/demo

# The headline tables at RTT 0, 0.5 ms and 2 ms, 3 interleaved rounds, with
# Curator and zk.Lock; see docs/benchmarks.md. BENCH_ARGS adds flags.
bench: deps
	$(GO) run ./cmd/curatorbench $(BENCH_ARGS)

# The same with the server's data on disk and fsync on (BENCH_DISK_DIR).
BENCH_DISK_DIR ?= /var/tmp
bench-disk: deps
	$(GO) run ./cmd/curatorbench -zk-dir $(BENCH_DISK_DIR) -fsync $(BENCH_ARGS)

# Issue 33 item 9: ten cuts each of 0.3 to 0.95 of a 4 s session's timeout,
# at random phases, through the fault proxy; prints the table of sessions
# lost (about 4 minutes). The suite runs 0.8 T x 3. Add
# CUTSWEEP_ARGS=-cutsweep.blackhole for silent cuts.
CUTSWEEP_ARGS ?=
cutsweep: deps
	$(GO) test -race -count=1 -timeout 30m -run 'TestCutSweep$$' -v ./framework/ -args -cutsweep.full $(CUTSWEEP_ARGS)

vet:
	$(GO) vet $(PKGS)

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck $(PKGS)

fmt:
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: fmt vet staticcheck

# go mod tidy in every module (the tools modules with a temporary replace of
# the library, since tidy ignores go.work); tidy-check only reports (CI).
tidy:
	@GO=$(GO) bash scripts/tidy.sh

tidy-check:
	@GO=$(GO) bash scripts/tidy.sh --check

# What a service importing recipes/mutex inherits: modules, cold build time
# and binary size, next to go-zookeeper's zk.Lock; needs the module proxy.
deps-size:
	@GO=$(GO) bash scripts/deps-size.sh

# The fault-tolerance proof: the lock recipes on a 3-node ensemble under faults.
CHAOS_ARGS ?= -duration 30m

chaos: deps
	$(GO) run ./cmd/chaos $(CHAOS_ARGS)

.PHONY: chaos

# The leader election's exactly-one-leader proof at full size: 8
# participants on 4 clients, 500 forced hand-overs (resign, connection cut,
# client closed), each checked on the server; see docs/leader.md.
LEADER_HANDOVERS ?= 500

leader-stress: deps
	$(GO) test -race -count=1 -timeout 30m -run '^TestExactlyOneLeader$$' -v ./recipes/leader -args -leader.handovers=$(LEADER_HANDOVERS)

.PHONY: leader-stress

# The cache's proofs at full size (docs/cache.md): a 100,000-node tree and
# 70,000 children load whole (the suite runs a tenth), and 20 rounds of
# each fault of the convergence checker.
CACHE_ROUNDS ?= 20

cache-scale: deps
	$(GO) test -count=1 -timeout 30m -run '^TestLoad' -v ./recipes/cache -args -cache.scale

cache-chaos: deps
	$(GO) test -race -count=1 -timeout 60m -run '^TestConverges' -v ./recipes/cache -args -cache.rounds=$(CACHE_ROUNDS)

.PHONY: cache-scale cache-chaos

# The atomic counter's proof at full size: 8 Go and 8 Java clients, 10,000
# increments each, the Go clients cut every second: exactly 160,000; see
# docs/atomic.md.
ATOMIC_INCREMENTS ?= 10000

atomic-stress: deps
	$(GO) test -race -count=1 -timeout 60m -run '^TestInteropSixteenWritersWithCuts$$' -v ./recipes/atomic -args -atomic.increments=$(ATOMIC_INCREMENTS)

.PHONY: atomic-stress

# The node's registered-means-owned proof for longer (docs/node.md): a
# registration under cuts, silent partitions and latency, checked on the
# server all along (the suite runs 6 s).
NODE_CHAOS ?= 1m

node-chaos: deps
	$(GO) test -race -count=1 -timeout 30m -run '^TestChaosRegisteredMeansOwned$$' -v ./recipes/node -args -node.chaos=$(NODE_CHAOS)

.PHONY: node-chaos
