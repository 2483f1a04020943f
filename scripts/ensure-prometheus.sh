#!/usr/bin/env bash
# Makes sure Prometheus (prometheus and promtool, from Debian's/Ubuntu's
# prometheus package) is installed, for the test of examples/observability
# that checks the dashboard's and the alerts' queries against a real one.
#
#   bash scripts/ensure-prometheus.sh
#
# Quiet and exits 0 when both are there already. Otherwise installs with
# apt-get as root, or through sudo; without either it prints the command to
# run and exits 1. The package's own service is not needed (the test runs
# its own Prometheus) and is not started.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
	exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=(sudo)
elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
	sudo=(sudo)
else
	cat >&2 <<MSG
ensure-prometheus.sh: prometheus is missing, and this user can neither run
apt-get nor use sudo. Ask someone with root to run:

    sudo apt-get update && sudo apt-get install -y prometheus
MSG
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-prometheus.sh: prometheus is missing, and there is no apt-get here: install it (prometheus and promtool on PATH) with your package manager" >&2
	exit 1
fi

echo "ensure-prometheus.sh: installing prometheus" >&2
# No service start inside containers and CI (policy-rc.d 101: "action
# forbidden"); restored afterwards.
policy=/usr/sbin/policy-rc.d
made_policy=false
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod +x "$policy"
	made_policy=true
fi
cleanup() { if $made_policy; then "${sudo[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
	echo "ensure-prometheus.sh: installed prometheus but prometheus or promtool is still not on PATH" >&2
	exit 1
fi
