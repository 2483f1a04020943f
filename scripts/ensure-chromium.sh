#!/usr/bin/env bash
# Makes sure a headless browser for the web console's tests (cmd/gocurator,
# cmd/internal/console: gocurator ui driven through chromedp) is installed:
# Debian's/Ubuntu's chromium package, unless CHROMIUM (a path to a Chrome
# or Chromium binary) is set or one is on PATH already.
#
#   bash scripts/ensure-chromium.sh
#
# Quiet and exits 0 when a browser is there already. Otherwise installs with
# apt-get as root, or through sudo; without either it prints the command to
# run and exits 1.
set -euo pipefail

case "${1:-}" in
"") ;;
-h | --help)
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "ensure-chromium.sh: unknown argument: $1 (try --help)" >&2
	exit 2
	;;
esac

have_browser() {
	if [[ -n "${CHROMIUM:-}" && -x "$CHROMIUM" ]]; then
		return 0
	fi
	local b
	for b in chromium chromium-browser google-chrome google-chrome-stable headless-shell; do
		command -v "$b" >/dev/null 2>&1 && return 0
	done
	return 1
}

if have_browser; then
	exit 0
fi
packages=(chromium)

if [[ $(id -u) -eq 0 ]]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=(sudo)
elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
	# sudo may ask for a password on this terminal.
	sudo=(sudo)
else
	cat >&2 <<MSG
ensure-chromium.sh: missing: ${packages[*]}, and this user can neither run
apt-get nor use sudo. Ask someone with root to run:

    sudo apt-get update && sudo apt-get install -y ${packages[*]}

or set CHROMIUM to the path of a Chrome or Chromium binary.
MSG
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	cat >&2 <<MSG
ensure-chromium.sh: missing: ${packages[*]}, and there is no apt-get here.
Install Chromium (or Chrome) with your package manager, or set CHROMIUM to
the path of its binary.
MSG
	exit 1
fi

echo "ensure-chromium.sh: installing ${packages[*]}" >&2
# A fresh image has no package lists: install fails until they are read.
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null

if ! have_browser; then
	echo "ensure-chromium.sh: installed ${packages[*]} but no chromium is on PATH" >&2
	exit 1
fi
