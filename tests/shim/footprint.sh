#!/bin/sh
# footprint.sh - what a traced process's ring file occupies (issue 24,
# "Cost per process"): the file is sparse and its ring's blocks are
# reserved as the ring is written (shim/slots.c, common/writer/ring.h
# "Lazy reservation"), so /bin/true and a program writing 99 events hold
# at most 64 KiB of disk or shared memory (allocated blocks, st_blocks,
# as du counts them), a ring written further grows without losing an
# event, a ring that wraps is whole, and a full disk drops events without
# SIGBUS or any change to the program. Real programs under the real shim,
# files read back with the real consumer (tests/shim/dump.c).
# One test: RTE_BUILD=$PWD/build sh tests/shim/footprint.sh test_NAME.
set -u

. "$(dirname "$0")/lib.sh"

# kib FILE: the file's allocated blocks in KiB (what du counts).
kib() {
	echo $(( $(stat -c '%b * %B' "$1") / 1024 ))
}

# one_file DIR: the only *.events file of DIR in $f, or a failure.
one_file() {
	set -- "$1"/*.events
	[ $# = 1 ] && [ -f "$1" ] || { fail "files: $*"; return 1; }
	f=$1
}

# e_values FILE: "count first last gaps" of the e.value events of ring
# 0 in a dump (gaps: values that are not the previous one plus one).
e_values() {
	awk '$1 == 0 && $3 == "e.value" {
		if (n && $4 != last + 1) gaps++
		if (!n) first = $4; last = $4; n++
	} END { print n + 0, first + 0, last + 0, gaps + 0 }' "$1"
}

test_true() {
	begin true
	traced "$D" /bin/true
	expect_eq "exit status" $? 0
	one_file "$D" || { finish; return; }
	k=$(kib "$f")
	[ "$k" -le 64 ] || fail "/bin/true's file holds $k KiB (> 64)"
	[ "$(stat -c %s "$f")" -gt $((1024 * 1024)) ] ||
		fail "apparent size $(stat -c %s "$f"): not the whole layout"
	dump "$f" "$D/d"
	expect_eq "ring_start" "$(count "$D/d" '$3 == "ring_start"')" 1
	expect_eq "rte.proc" "$(count "$D/d" '$3 == "rte.proc"')" 1
	expect_eq "rte.exit" "$(count "$D/d" '$3 == "rte.exit"')" 1
	expect_eq "ring_stop" "$(count "$D/d" '$3 == "ring_stop"')" 1
	finish
}

test_small() {
	begin small
	traced "$D" "$T/events" 99 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stdout" "$(cat "$D/out")" "events done 99"
	expect_eq "stderr" "$(cat "$D/err")" ""
	one_file "$D" || { finish; return; }
	k=$(kib "$f")
	[ "$k" -le 64 ] || fail "99 events' file holds $k KiB (> 64)"
	dump "$f" "$D/d"
	expect_eq "e.value count first last gaps" "$(e_values "$D/d")" "99 0 98 0"
	expect_eq "ring_stop" "$(count "$D/d" '$3 == "ring_stop"')" 1
	finish
}

# 4000 events (12,000 words) cross the first 16 KiB and two doublings of
# the reservation: every event is read back, and the file is still far
# from the whole ring's 512 KiB.
test_grow() {
	begin grow
	traced "$D" "$T/events" 4000 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	one_file "$D" || { finish; return; }
	dump "$f" "$D/d"
	expect_eq "e.value count first last gaps" "$(e_values "$D/d")" "4000 0 3999 0"
	expect_eq "lost" "$(count "$D/d" '$2 == "lost"')" 0
	expect_eq "ring_stop" "$(count "$D/d" '$3 == "ring_stop"')" 1
	k=$(kib "$f")
	[ "$k" -le 256 ] || fail "4000 events' file holds $k KiB (> 256)"
	finish
}

# 100,000 events on each of 4 rings (the main thread's and 3 others'):
# each ring wraps several times; the newest events of each are there in
# order, the file holds every ring whole and nothing more.
test_wrap() {
	begin wrap
	traced "$D" "$T/events" 100000 3 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? 0
	expect_eq "stderr" "$(cat "$D/err")" ""
	one_file "$D" || { finish; return; }
	dump "$f" "$D/d"
	set -- $(e_values "$D/d")
	expect_eq "last e.value of ring 0" "$3" 99999
	expect_eq "gaps in ring 0" "$4" 0
	[ "$1" -gt 10000 ] || fail "ring 0 kept only $1 events"
	for r in 1 2 3; do
		last=$(awk -v r=$r '$1 == r && $3 == "e.value" { v = $4 } END { print v }' "$D/d")
		expect_eq "last e.value of ring $r" "$last" 99999
	done
	expect_eq "ring_stop" "$(count "$D/d" '$3 == "ring_stop"')" 1
	k=$(kib "$f")
	[ "$k" -ge $((4 * 512)) ] && [ "$k" -le $((4 * 512 + 64)) ] ||
		fail "4 full rings' file holds $k KiB (want 2048 to 2112)"
	finish
}

# A disk with room for the file's first 32 KiB and not much more: the
# ring stops growing, one line says so, later events are dropped; the
# program's output and status are its own and no SIGBUS is raised.
test_full() {
	if ! mount_tmpfs "$WORK/disk" size=64k; then
		skip full "not root or cannot mount tmpfs: a full disk needs a small tmpfs"
		return
	fi
	begin full
	$TMO "$T/events" 100000 >"$D/out0" 2>&1
	st0=$?
	traced "$WORK/disk" "$T/events" 100000 >"$D/out" 2>"$D/err"
	expect_eq "exit status" $? $st0
	expect_eq "stdout" "$(cat "$D/out")" "$(cat "$D/out0")"
	expect_eq "rte: lines in '$(cat "$D/err")'" "$(grep -c '^rte: ' "$D/err")" 1
	grep -q 'cannot reserve more space for ring 0 .*No space left' "$D/err" ||
		fail "reason: $(cat "$D/err")"
	one_file "$WORK/disk" || { finish; return; }
	dump "$f" "$D/d"
	set -- $(e_values "$D/d")
	expect_eq "first e.value" "$2" 0
	expect_eq "gaps" "$4" 0
	[ "$1" -gt 1000 ] && [ "$1" -lt 100000 ] ||
		fail "$1 events kept of 100000 on a full disk"
	finish
}

# test_start_pages: what a traced start maps in up front (shim/init.c
# populates librte.so's .data and .bss, from the end of RELRO to the end of
# .bss, with one MADV_POPULATE_WRITE): at most 128 KiB, and no table of
# 16 KiB or more in it (those are RTE_BIGVAR, in .lbss, shim/forkvars.h).
# The wall-clock profiler's two tables (160 KiB) once sat in .bss, and
# every traced exec paid 40 pages it never touched.
test_start_pages() {
	begin start_pages
	if [ -n "$RTE_ASAN_RT" ] && [ -z "${RTE_START_PAGES_LIB:-}" ]; then
		skip start_pages "a sanitizer's globals have redzones: the layout of the normal build is checked"
		return
	fi
	lib=${RTE_START_PAGES_LIB:-$LIB}
	set -- $(readelf -SW "$lib" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk '$1 == ".data" || $1 == ".bss" { print $1, $3, $5 }')
	[ $# = 6 ] || { fail "no .data and .bss in $lib: $*"; finish; return; }
	lo=$(( 0x$2 / 4096 * 4096 )) hi=$(( 0x$5 + 0x$6 ))
	k=$(( (hi - lo + 1023) / 1024 ))
	[ "$k" -le 128 ] || fail "the start populates $k KiB of $lib (> 128)"
	big=$(nm -S "$lib" | while read -r a s t n; do
		case $t in [bBdD]) ;; *) continue ;; esac
		[ $(( 0x$a )) -ge "$lo" ] && [ $(( 0x$a )) -lt "$hi" ] &&
			[ $(( 0x$s )) -ge 16384 ] && echo "$n ($(( 0x$s )) B)"
	done)
	[ -z "$big" ] || fail "tables of 16 KiB or more in .data/.bss (make them RTE_BIGVAR): $big"
	finish
}

echo "footprint tests (preload: $PRELOAD)"
if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_true
	test_small
	test_grow
	test_wrap
	test_full
	test_start_pages
fi
echo "footprint: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
