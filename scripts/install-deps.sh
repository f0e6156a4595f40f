#!/bin/sh
# Install the Debian packages rte's build and tests need, if any is missing.
# Used by the Makefile (once per build folder) and by .ci/run. Needs root or
# sudo only when something is actually missing.
set -e
PKGS="gcc make libcmocka-dev libunwind-dev libdw-dev libelf-dev pkg-config python3 gzip libmicrohttpd-dev zlib1g-dev clang libclang-rt-14-dev procps"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
