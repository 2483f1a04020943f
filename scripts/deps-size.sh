#!/usr/bin/env bash
# What a service that imports recipes/mutex inherits from the library, next
# to the same program on go-zookeeper's zk.Lock (issue 21's baseline):
# the modules in its graph (go list -m all, the service's own module
# included), the time of a cold go build (fresh GOCACHE and GOMODCACHE:
# every module downloaded and checked against sum.golang.org, the standard
# library compiled) and the size of the binary.
#
#   bash scripts/deps-size.sh [library-dir...]     (or: make deps-size)
#
# Each program is a module of its own in a temporary directory outside the
# repository, requiring the library through
# `replace github.com/gocurator/curator => <library-dir>` (default: this
# tree; name an older checkout too to compare) with GOFLAGS=-mod=mod, as a
# user's service would before the library is published. Needs the module
# proxy. RUNS (default 3) rounds of cold builds, every program once a round
# so that a change in the machine's load hits all of them; the median is
# printed.
set -euo pipefail
go=${GO:-go}
runs=${RUNS:-3}
[[ $# -eq 0 ]] && set -- "$(dirname "$0")/.."
export GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# program <name> <label> <go.mod requires> <main.go> makes $work/<name>.
names=() labels=()
program() {
	mkdir -p "$work/$1"
	printf 'module example.com/%s\n\ngo 1.23.0\n\n%s\n' "$1" "$3" >"$work/$1/go.mod.orig"
	printf '%s\n' "$4" >"$work/$1/main.go"
	names+=("$1") labels+=("$2")
}

mutex_main='package main

import (
	"context"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/mutex"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := framework.Connect(ctx, "127.0.0.1:2181")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m := mutex.New(c, "/locks/orders")
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Release(context.Background())
	log.Print("holding /locks/orders")
}'

zk_main='package main

import (
	"log"
	"time"

	"github.com/go-zookeeper/zk"
)

func main() {
	conn, _, err := zk.Connect([]string{"127.0.0.1:2181"}, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	l := zk.NewLock(conn, "/locks/orders", zk.WorldACL(zk.PermAll))
	if err := l.Lock(); err != nil {
		log.Fatal(err)
	}
	defer l.Unlock()
	log.Print("holding /locks/orders")
}'

i=0
for dir in "$@"; do
	lib=$(cd "$dir" && pwd)
	label=recipes/mutex
	[[ $# -gt 1 ]] && label="recipes/mutex ($lib)"
	program "curator$i" "$label" "require github.com/gocurator/curator v0.0.0-00010101000000-000000000000

replace github.com/gocurator/curator => $lib" "$mutex_main"
	i=$((i + 1))
done
program zklock zk.Lock "require github.com/go-zookeeper/zk v1.0.4" "$zk_main"

declare -A times modules
for _ in $(seq "$runs"); do
	for name in "${names[@]}"; do
		dir=$work/$name
		cp "$dir/go.mod.orig" "$dir/go.mod"
		rm -f "$dir/go.sum"
		cache=$(mktemp -d "$work/cache.XXXX") modcache=$(mktemp -d "$work/mod.XXXX")
		start=$(date +%s.%N)
		(cd "$dir" && GOCACHE=$cache GOMODCACHE=$modcache "$go" build -o "$dir/app" .)
		times[$name]+="$(echo "$(date +%s.%N) - $start" | bc) "
		modules[$name]=$(cd "$dir" && GOCACHE=$cache GOMODCACHE=$modcache "$go" list -m all | wc -l)
		GOMODCACHE=$modcache "$go" clean -modcache
		rm -rf "$cache" "$modcache"
	done
done

echo "$("$go" version | cut -d' ' -f3), $runs rounds of cold builds, median; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
for i in "${!names[@]}"; do
	name=${names[$i]}
	read -ra ts <<<"${times[$name]}"
	median=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
	bytes=$(stat -c %s "$work/$name/app")
	printf '%s\n  modules %d, cold build %.1f s (%s), binary %.1f MB (%d bytes)\n' "${labels[$i]}" \
		"${modules[$name]}" "$median" "$(printf '%.1f ' "${ts[@]}" | sed 's/ $//')" \
		"$(echo "$bytes / 1000000" | bc -l)" "$bytes"
done
