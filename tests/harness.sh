# harness.sh - what the shell test scripts (tests/*/run.sh) share: one
# test at a time (begin NAME ... finish), failures collected with fail,
# skips with a printed reason, and at exit the cleanup of background jobs
# (BG), tmpfs mounts (MOUNTS) and the private work directory.
#
# The sourcing script sets WORK (made with mktemp -d) before sourcing.
# A script may redefine begin/finish around h_begin/h_finish. Set
# RTE_KEEP_WORK to keep the work directory for a post-mortem.

NFAIL=0
NPASS=0
NSKIP=0
CUR=""
BG=""
MOUNTS=""

h_cleanup() {
	for p in $BG; do kill -9 "$p" 2>/dev/null; done
	for m in $MOUNTS; do umount "$m" 2>/dev/null; done
	[ -n "${RTE_KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap h_cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "  FAIL $CUR: $*"
	CUR_OK=0
}

# h_begin NAME: start test NAME in its own directory $D.
h_begin() {
	CUR=$1
	CUR_OK=1
	D=$WORK/$1
	mkdir -p "$D"
}

h_finish() {
	if [ "$CUR_OK" = 1 ]; then
		echo "  ok   $CUR"
		NPASS=$((NPASS + 1))
	else
		NFAIL=$((NFAIL + 1))
	fi
}

begin() { h_begin "$1"; }
finish() { h_finish; }

# skip NAME REASON
skip() {
	echo "  skip $1: $2"
	NSKIP=$((NSKIP + 1))
}

is_root() { [ "$(id -u)" = 0 ]; }

# mount_tmpfs DIR OPTIONS: mount a small tmpfs on DIR, unmounted at exit;
# returns non-zero (nothing mounted) when not root or when mount fails.
mount_tmpfs() {
	is_root || return 1
	mkdir -p "$1" && mount -t tmpfs -o "$2" rte-test "$1" 2>/dev/null ||
		return 1
	MOUNTS="$1 $MOUNTS"
}
