#!/usr/bin/env bash
# Runs go mod tidy in every module of the repository: the library (the root)
# and the modules go.work joins to it (the tools in cmd/, the heavy
# examples, the tests that need OpenTelemetry's SDK in telemetrytests/). With --check it changes nothing and fails, printing the diff,
# if a go.mod or go.sum is not tidy (CI runs this: the library's go.mod is
# what its users inherit).
#
#   bash scripts/tidy.sh [--check]     (or: make tidy, make tidy-check)
#
# The other modules require the library at the placeholder version
# v0.0.0-00010101000000-000000000000, which go.work resolves to this tree;
# go mod tidy ignores go.work, so each is tidied with a temporary
# `replace github.com/gocurator/curator => <root>` that is dropped again
# afterwards, whether tidy succeeded or not. docs/getting-started.md
# ("Modules") says why the committed go.mod files carry no replace.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
go=${GO:-go}
lib=github.com/gocurator/curator
tidy=(mod tidy)
[[ ${1:-} == --check ]] && tidy+=(-diff)

"$go" "${tidy[@]}"
for mod in $(GOWORK="$root/go.work" "$go" list -m -f '{{.Dir}}' | grep -vx "$root"); do
	(
		cd "$mod"
		"$go" mod edit -replace "$lib=$(realpath --relative-to=. "$root")"
		trap '"$go" mod edit -dropreplace "$lib"' EXIT
		"$go" "${tidy[@]}"
	)
done
