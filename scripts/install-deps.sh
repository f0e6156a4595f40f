#!/bin/sh
# Install the Debian packages rte's build and tests need, if any is missing.
# `make demo` (the first command of README.md) runs it; needs root or sudo
# only when something is actually missing.
#
#   install-deps.sh          install what is missing
#   install-deps.sh --check  install nothing: list what is missing, say the
#                            one command that installs it, exit 1 (the
#                            Makefile's check before building: a plain
#                            `make` never runs apt-get)
set -e
# What the build and `make test` cannot do without (checked by make).
PKGS="gcc make libcmocka-dev libunwind-dev libdw-dev libelf-dev pkg-config python3 gzip libmicrohttpd-dev zlib1g-dev libiberty-dev libzstd-dev clang libclang-rt-14-dev procps"
# Real programs and servers some tests run against; a test whose package is
# missing says so and is skipped. Installed, never required.
TEST_PKGS="linux-perf libpython3.11-testsuite prometheus prometheus-pushgateway btrfs-progs strace golang-go chromium heaptrack libgoogle-perftools4 google-perftools libjemalloc2 liblttng-ust-dev lttng-tools autoconf"
[ "${1:-}" = --check ] || PKGS="$PKGS $TEST_PKGS"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "${1:-}" = --check ]; then
	echo "rte: missing Debian packages:$missing" >&2
	echo "rte: install them with: sudo sh scripts/install-deps.sh (or run make demo, which does)" >&2
	exit 1
fi
echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
