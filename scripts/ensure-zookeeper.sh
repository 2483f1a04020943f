#!/usr/bin/env bash
# Makes sure a ZooKeeper for the zktest package is installed: the jars of
# Debian's/Ubuntu's zookeeper package (which brings a Java runtime), unless
# ZOOKEEPER_HOME points at an unpacked Apache release.
#
#   bash scripts/ensure-zookeeper.sh                 # ZooKeeper only
#   bash scripts/ensure-zookeeper.sh --with-curator  # plus Curator's jars,
#                                                    # (recipes and discovery),
#                                                    # for Java interop tests
#
# Quiet and exits 0 when everything is there already. Otherwise installs with
# apt-get as root, or through sudo; without either it prints the command to
# run and exits 1.
set -euo pipefail

java_dir=/usr/share/java
with_curator=false
for arg in "$@"; do
	case "$arg" in
	--with-curator) with_curator=true ;;
	-h | --help)
		sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "ensure-zookeeper.sh: unknown argument: $arg (try --help)" >&2
		exit 2
		;;
	esac
done

have_java() {
	if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
		return 0
	fi
	command -v java >/dev/null 2>&1
}

have_zookeeper_jars() {
	if [[ -n "${ZOOKEEPER_HOME:-}" ]]; then
		local jar
		for jar in "$ZOOKEEPER_HOME"/lib/zookeeper-3*.jar "$ZOOKEEPER_HOME"/zookeeper-3*.jar \
			"$ZOOKEEPER_HOME"/lib/zookeeper.jar "$ZOOKEEPER_HOME"/zookeeper.jar; do
			[[ -f "$jar" ]] && return 0
		done
	fi
	[[ -f "$java_dir/zookeeper.jar" ]]
}

have_curator() {
	[[ -f "$java_dir/curator-recipes.jar" && -f "$java_dir/curator-x-discovery.jar" ]]
}

packages=()
if ! have_zookeeper_jars; then
	packages+=(zookeeper) # depends on a Java runtime
elif ! have_java; then
	packages+=(default-jre-headless)
fi
if $with_curator && ! have_curator; then
	# curator-x-discovery brings Jackson, which the discovery interop tests
	# use to write and read ServiceInstance JSON as Java does.
	packages+=(libcurator-recipes-java libcurator-discovery-java)
fi
if ((${#packages[@]} == 0)); then
	exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	sudo=(sudo)
elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
	# sudo may ask for a password on this terminal.
	sudo=(sudo)
else
	cat >&2 <<MSG
ensure-zookeeper.sh: missing: ${packages[*]}, and this user can neither run
apt-get nor use sudo. Ask someone with root to run:

    sudo apt-get update && sudo apt-get install -y ${packages[*]}

or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper release
(https://zookeeper.apache.org/releases.html) and make java available.
MSG
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	cat >&2 <<MSG
ensure-zookeeper.sh: missing: ${packages[*]}, and there is no apt-get here.
Install ZooKeeper and a Java runtime with your package manager, or set
ZOOKEEPER_HOME to an unpacked Apache ZooKeeper release.
MSG
	exit 1
fi

echo "ensure-zookeeper.sh: installing ${packages[*]}" >&2
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null

if ! have_zookeeper_jars || ! have_java || { $with_curator && ! have_curator; }; then
	echo "ensure-zookeeper.sh: installed ${packages[*]} but the jars are still missing" >&2
	exit 1
fi
