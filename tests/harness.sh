# harness.sh - what the shell test scripts (tests/*/run.sh) share: one
# test at a time (begin NAME ... finish), failures collected with fail,
# skips with a printed reason (skip; san_skip for sanitizer builds),
# checks (expect_eq, count), the tally (h_report), and at exit the cleanup
# of background jobs (BG), tmpfs mounts (MOUNTS) and the private work
# directory. A watchdog stops a suite that runs longer than
# RTE_SUITE_TIMEOUT seconds (default 1200; 0: none), with every process
# under it, and says which test was running.
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
	h_watchdog_stop "$WORK"
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
	h_watchdog_test "$WORK" "$1"
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

# count FILE PATTERN: number of lines of FILE matching the awk PATTERN.
count() {
	awk "$2 { n++ } END { print n + 0 }" "$1"
}

expect_eq() { # what got want
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# h_report NAME: the tally line; returns non-zero if a test failed.
h_report() {
	echo "$1: $NPASS passed, $NFAIL failed, $NSKIP skipped"
	[ "$NFAIL" = 0 ]
}

# ---- sanitizer builds ---------------------------------------------------------
#
# The one rule for tests that cannot run in a sanitizer build (an
# uninstrumented program TSan cannot follow, ASan's allocator or signal
# handlers coming before ours): the test is skipped, said and counted,
# with the sanitizer named and the reason given.
#
# h_san: the sanitizers of this build ("address", "thread", both or
# nothing), from what the make fragments pass: RTE_SAN (the build's SAN
# flags), RTE_TSAN=1, or the ASan runtime to preload (RTE_ASAN_RT).
h_san() {
	_s=${RTE_SAN:-}
	[ -n "${RTE_TSAN:-}" ] && _s="$_s thread"
	case ${RTE_ASAN_RT:-} in *libasan*) _s="$_s address" ;; esac
	case $_s in *address*) echo address ;; esac
	case $_s in *thread*) echo thread ;; esac
}

# san_skip WHICH NAME REASON: in an address, thread or any sanitizer
# build (WHICH), skip test NAME for REASON and return 0; else return 1.
#   san_skip thread clock "Python is not instrumented" && return
san_skip() {
	_s=$(h_san)
	case $1 in
	any) [ -n "$_s" ] || return 1 ;;
	*) case $_s in *"$1"*) _s=$1 ;; *) return 1 ;; esac ;;
	esac
	case $_s in
	address*) _k="an AddressSanitizer" ;;
	*) _k="a ThreadSanitizer" ;;
	esac
	skip "$2" "$_k build: $3"
}

. "$(dirname "$0")/../watchdog.sh"
h_watchdog "$WORK"
