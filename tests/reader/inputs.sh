#!/bin/sh
# tests/reader/inputs.sh BUILD [TEST...] - rte-read's inputs, options,
# liveness, --follow and --clean against real files and real processes
# (issue 12: items 4, 5, 6, 8, 9, 10, 11, 12, 14; issue 11: item 4).
# With TEST names, only those run (see the list at the bottom). RTE_READ
# names another rte-read to test (e.g. an older one, to see tests fail).
# Each check prints "ok: ..." or "FAIL: ..."; "skip: ..." says why a file
# system could not be tried.
set -u
BUILD=${1:-build}
[ $# -gt 0 ] && shift
RR=${RTE_READ:-$BUILD/rte-read}
RR=$(cd "$(dirname "$RR")" && pwd)/$(basename "$RR") # used from other directories
GEN=$BUILD/tests/reader/gen_ring
PRELOAD=$PWD/$BUILD/librte.so
ASAN_PRELOAD=
if ldd "$RR" | grep -q libasan; then # ASan first, as the runtime wants
	ASAN_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	PRELOAD="$ASAN_PRELOAD $PRELOAD"
fi
mkdir -p "$BUILD/tests/reader" &&
	T=$(mktemp -d "$BUILD/tests/reader/inputs.XXXXXX") || exit 1
T=$(cd "$T" && pwd)
FAILS=0
BGPIDS=""
MOUNTS=""

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
skip() { echo "skip: $*"; }
cleanup() {
	for p in $BGPIDS; do kill -9 "$p" 2>/dev/null; done
	for m in $MOUNTS; do umount -l "$m" 2>/dev/null; done
}
trap cleanup EXIT

# traced DIR CMD... &: CMD under the real shim, tracing on, writing into
# DIR, as the background job itself ($! is its pid).
traced() {
	d=$1
	shift
	exec env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$d" \
		LD_PRELOAD="$PRELOAD" "$@"
}

# appear FILE: wait (at most 10 s) until FILE exists.
appear() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
	[ -e "$1" ]
}

# A finished file of known content (has ring_stop) and a stale one (its
# writer was killed, no ring_stop).
setup_files() {
	[ -e "$T/known.events" ] && return 0
	"$GEN" known "$T/known.events" "$T/truth.json" || fail "gen_ring known"
	mkdir -p "$T/stale"
	"$GEN" live "$T/stale" 20 0 nostop & p=$!
	appear "$T/stale/$p.events" || fail "no file of gen_ring live"
	sleep 0.2
	kill -9 "$p"
	wait "$p" 2>/dev/null
	cp "$T/stale/$p.events" "$T/stale.events"
	STALE_PID=$p
}

# ---- item 5: option values both ways; a signal is reported as one --------

t_wait_value() {
	mkdir -p "$T/empty"
	for form in "--wait 0.3" "--wait=0.3" "-w0.3" "-w 0.3"; do
		# shellcheck disable=SC2086 # the form is split on purpose
		timeout 20 "$RR" $form -d "$T/empty" 4242 >/dev/null 2>"$T/err"
		rc=$?
		if [ $rc -ne 2 ] || ! grep -q "4242.events: did not appear in time" "$T/err"; then
			fail "rte-read $form PID: exit $rc: $(cat "$T/err")"
		else
			ok "rte-read $form PID gives up after the time given"
		fi
	done
	# "--wait PID" (PID last) still waits, for ever, for PID
	setup_files
	mkdir -p "$T/later"
	(sleep 0.3; cp "$T/known.events" "$T/later/4243.events") &
	timeout 20 "$RR" -f summary --wait -d "$T/later" 4243 >"$T/out" 2>"$T/err" ||
		fail "--wait PID: $(cat "$T/err")"
	grep -q "4243.events" "$T/out" && ok "--wait PID waits for PID" ||
		fail "--wait PID: $(cat "$T/out")"
	wait
}

# --wait on a directory that does not exist yet, made later (as
# `rte-read --follow --wait traces & rte-run -d traces ...` does); and an
# input of digits that names a directory here is that directory, not a PID.
t_wait_dir() {
	setup_files
	rm -rf "$T/nd"
	(sleep 0.4; mkdir "$T/nd.tmp" && cp "$T/known.events" "$T/nd.tmp/4245.events" &&
		mv "$T/nd.tmp" "$T/nd") &
	timeout 20 "$RR" -f summary --wait 10 "$T/nd" >"$T/out" 2>"$T/err"
	rc=$?
	wait
	if [ $rc -ne 0 ] || ! grep -q "4245.events" "$T/out"; then
		fail "--wait DIR made later: exit $rc: $(cat "$T/err")"
	else
		ok "--wait DIR waits for the directory, then reads it"
	fi
	timeout 20 "$RR" -f summary --wait 0.3 "$T/nd-never" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "nd-never: did not appear in time" "$T/err" &&
		ok "--wait DIR that never comes: exit 2, named" ||
		fail "--wait DIR never made: exit $rc: $(cat "$T/err")"
	mkdir -p "$T/num/424242"
	cp "$T/known.events" "$T/num/424242/9.events"
	(cd "$T/num" && timeout 20 "$RR" -f summary 424242 >"$T/out" 2>"$T/err")
	rc=$?
	[ $rc -eq 0 ] && grep -q "9.events" "$T/out" &&
		ok "an input of digits naming a directory here reads it" ||
		fail "digits naming a directory: exit $rc: $(cat "$T/err")"
}

t_wait_signal() {
	mkdir -p "$T/empty"
	timeout 20 "$RR" --wait -d "$T/empty" 4244 2>"$T/err" & p=$!
	sleep 0.3
	kill -TERM "$p"
	wait "$p"
	rc=$?
	if [ $rc -ne 143 ] || ! grep -q "interrupted by signal 15" "$T/err" ||
		grep -q "did not appear" "$T/err"; then
		fail "SIGTERM during --wait: exit $rc: $(cat "$T/err")"
	else
		ok "SIGTERM during --wait is reported as a signal (dies by it)"
	fi
}

# ---- item 8: a bad option is one line with one program name ------------------

t_bad_option() {
	for opt in --no-such-option -Z "-Fq" "--format"; do
		"$RR" 1 $opt >/dev/null 2>"$T/err"
		rc=$?
		if [ $rc -ne 1 ] || [ "$(wc -l <"$T/err")" -ne 1 ] ||
			[ "$(grep -o 'rte-read' "$T/err" | wc -l)" -ne 2 ] || grep -q "/rte-read" "$T/err"; then
			fail "bad option $opt: exit $rc: $(cat "$T/err")"
		else
			ok "bad option $opt: one line, one name: $(cat "$T/err")"
		fi
	done
}

# ---- item 4: -o naming an input -------------------------------------------------

t_output_is_input() {
	setup_files
	mkdir -p "$T/oi"
	cp "$T/known.events" "$T/oi/v.events"
	ln -sf v.events "$T/oi/link"
	for o in "$T/oi/v.events" "$T/oi/link" "$T/oi/./v.events" "$T/oi/new.txt"; do
		"$RR" -f summary -o "$o" "$T/oi/v.events" "$T/oi" >/dev/null 2>"$T/err"
		rc=$?
		if [ $rc -ne 2 ] || ! cmp -s "$T/known.events" "$T/oi/v.events" ||
			[ -e "$T/oi/new.txt" ] || [ "$(wc -l <"$T/err")" -ne 1 ]; then
			fail "-o $o naming an input: exit $rc: $(cat "$T/err")"
			cp "$T/known.events" "$T/oi/v.events"
		else
			ok "-o $o: refused, input untouched: $(cat "$T/err")"
		fi
	done
}

# ---- item 6: the same file twice --------------------------------------------------

t_dedupe() {
	setup_files
	mkdir -p "$T/dd"
	cp "$T/known.events" "$T/dd/4245.events"
	"$RR" -f jsonl "$T/dd/4245.events" >"$T/one.jsonl" 2>/dev/null
	n1=$(wc -l <"$T/one.jsonl")
	for args in "$T/dd/4245.events $T/dd/4245.events" "$T/dd/4245.events $T/dd/./4245.events" \
		"-d $T/dd 4245 $T/dd/4245.events" "$T/dd $T/dd/4245.events" "$T/dd $T/dd/."; do
		# shellcheck disable=SC2086
		n=$("$RR" -f jsonl $args 2>/dev/null | wc -l)
		[ "$n" -eq "$n1" ] && ok "counted once: $args" ||
			fail "the same file twice gives $n events, once $n1: $args"
	done
}

# ---- item 9: errors a newcomer can act on --------------------------------------

t_messages() {
	mkdir -p "$T/msg"
	env -u OCAML_RUNTIME_EVENTS_DIR XDG_RUNTIME_DIR="$T/msg" "$RR" 4246 2>"$T/err"
	rc=$?
	{ [ $rc -eq 2 ] && grep -q "looked in $T/msg/rte, \." "$T/err" &&
		grep -q "OCAML_RUNTIME_EVENTS_START=1" "$T/err" &&
		grep -q "OCAML_RUNTIME_EVENTS_DIR" "$T/err"; } &&
		ok "a missing PID says where it looked: $(cat "$T/err")" ||
		fail "missing PID: exit $rc: $(cat "$T/err")"
	setup_files
	gzip -c "$T/known.events" >"$T/msg/gz.events"
	printf '\050\265\057\375zstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstdzstd' >"$T/msg/zst.events"
	head -c 4096 /dev/urandom >"$T/msg/rnd.events"
	for f in gz:gzip zst:zstd rnd:; do
		"$RR" "$T/msg/${f%%:*}.events" 2>"$T/err"
		rc=$?
		want="not a ring file${f#*:}"
		[ -n "${f#*:}" ] && want="not a ring file (${f#*:}-compressed?"
		{ [ $rc -eq 3 ] && grep -qF "$want" "$T/err" && ! grep -q "version [0-9]\{6,\}" "$T/err"; } &&
			ok "${f%%:*}: $(cat "$T/err")" || fail "${f%%:*}: exit $rc: $(cat "$T/err")"
	done
	# a directory of only broken files: each named, then not "no ring files"
	"$RR" "$T/msg" 2>"$T/err"
	rc=$?
	{ [ $rc -ne 0 ] && grep -q "msg: none of its 3 ring files could be read" "$T/err" &&
		! grep -q "no ring files" "$T/err"; } &&
		ok "a directory of broken files says so" || fail "broken directory: exit $rc: $(cat "$T/err")"
}

# ---- issue 11 item 4: the per-user default directory ---------------------------

t_default_dir() {
	setup_files
	x=$T/xdg
	mkdir -p "$x/rte" "$T/cwd"
	chmod 700 "$x/rte"
	# A real program writing where librte.so writes by default.
	traced "$x/rte" sleep 2 & p=$!
	BGPIDS="$BGPIDS $p"
	appear "$x/rte/$p.events" || fail "no file of the traced program"
	(cd "$T/cwd" && env -u OCAML_RUNTIME_EVENTS_DIR XDG_RUNTIME_DIR="$x" \
		"$RR" -f summary "$p") >"$T/out" 2>"$T/err" &&
		grep -q "$x/rte/$p.events" "$T/out" &&
		ok "rte-read PID finds the file in \$XDG_RUNTIME_DIR/rte" ||
		fail "rte-read PID in the default directory: $(cat "$T/err")"
	# An OCaml program writes into its working directory.
	cp "$T/known.events" "$T/cwd/4247.events"
	(cd "$T/cwd" && env -u OCAML_RUNTIME_EVENTS_DIR XDG_RUNTIME_DIR="$x" \
		"$RR" -f summary 4247) >"$T/out" 2>"$T/err" &&
		ok "rte-read PID also tries the working directory" ||
		fail "rte-read PID in the working directory: $(cat "$T/err")"
	# --clean with no directory cleans the default one.
	cp "$T/stale.events" "$x/rte/$STALE_PID.events"
	sleep 0.1
	(cd "$T/cwd" && env -u OCAML_RUNTIME_EVENTS_DIR XDG_RUNTIME_DIR="$x" \
		"$RR" --clean) >"$T/out" 2>"$T/err"
	if [ -e "$x/rte/$STALE_PID.events" ] || [ ! -e "$x/rte/$p.events" ] ||
		[ ! -e "$T/cwd/4247.events" ]; then
		fail "--clean of the default directory: $(cat "$T/out" "$T/err")"
	else
		ok "--clean with no DIR cleans \$XDG_RUNTIME_DIR/rte, keeps the live file"
	fi
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	t_default_root
}

# default_root (tests/rundir.sh)
. "$(dirname "$0")/../rundir.sh"

# With no directory named anywhere (no OCAML_RUNTIME_EVENTS_DIR, no
# XDG_RUNTIME_DIR, no -d), librte.so and rte-read agree on the default
# directory: a traced program's file is found by its pid alone.
t_default_root() {
	want=$(default_root)/rte-$(id -u)
	mkdir -p "$T/cwd2"
	env -u OCAML_RUNTIME_EVENTS_DIR -u XDG_RUNTIME_DIR \
		OCAML_RUNTIME_EVENTS_START=1 LD_PRELOAD="$PRELOAD" sleep 2 & p=$!
	BGPIDS="$BGPIDS $p"
	appear "$want/$p.events" || fail "no $want/$p.events"
	(cd "$T/cwd2" && env -u OCAML_RUNTIME_EVENTS_DIR -u XDG_RUNTIME_DIR \
		"$RR" -f summary "$p") >"$T/out" 2>"$T/err" &&
		grep -q "$want/$p.events" "$T/out" &&
		ok "rte-read PID finds the file in $want (no directory named)" ||
		fail "rte-read PID without a directory: $(cat "$T/err")"
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	[ ! -e "$want/$p.events" ] || rm -f "$want/$p.events"
}

# ---- item 10: liveness on every file system --------------------------------------

# live_on NAME DIR: a real traced program writing in DIR is alive for
# --clean, summary and --follow; a killed one is dead for --clean.
live_on() {
	name=$1 d=$2
	traced "$d" sleep 3 & live=$!
	traced "$d" sleep 30 & dead=$!
	BGPIDS="$BGPIDS $live $dead"
	appear "$d/$live.events" && appear "$d/$dead.events" ||
		{ fail "$name: no ring files"; return; }
	kill -9 "$dead"
	wait "$dead" 2>/dev/null
	sleep 0.1 # files changed as --clean starts are kept (a new writer's?)
	"$RR" --clean "$d" >"$T/out" 2>"$T/err"
	[ -e "$d/$live.events" ] && ok "$name: --clean keeps a live writer's file" ||
		fail "$name: --clean removed a live writer's file: $(cat "$T/out")"
	[ ! -e "$d/$dead.events" ] && ok "$name: --clean removes a killed writer's file" ||
		fail "$name: --clean kept a killed writer's file: $(cat "$T/out" "$T/err")"
	"$RR" -f summary "$d/$live.events" >"$T/out" 2>&1
	grep -q "its writer is running" "$T/out" && ok "$name: summary: writer running" ||
		fail "$name: summary: $(grep -i 'ring_stop\|killed' "$T/out")"
	timeout 30 "$RR" --follow -f jsonl "$d/$live.events" >"$T/out" 2>"$T/err"
	rc=$?
	{ [ $rc -eq 0 ] && grep -q '"name":"ring_stop"' "$T/out"; } &&
		ok "$name: --follow reads to the ring_stop" ||
		fail "$name: --follow: exit $rc: $(cat "$T/err")"
	wait "$live"
}

t_liveness() {
	mkdir -p "$T/fs/default"
	live_on "$(stat -f -c %T "$T") (the build directory)" "$T/fs/default"
	if [ "$(id -u)" -ne 0 ]; then
		skip "tmpfs, btrfs, overlayfs: not root (cannot mount)"
		return
	fi
	mkdir -p "$T/fs/tmpfs" && mount -t tmpfs -o size=512m tmpfs "$T/fs/tmpfs" &&
		MOUNTS="$T/fs/tmpfs $MOUNTS" && live_on tmpfs "$T/fs/tmpfs" ||
		skip "tmpfs: cannot mount"
	if ! command -v mkfs.btrfs >/dev/null; then
		skip "btrfs: no mkfs.btrfs (apt-get install btrfs-progs)"
	else
		mkdir -p "$T/fs/btrfs" && truncate -s 300M "$T/btrfs.img" &&
			mkfs.btrfs -q "$T/btrfs.img" >/dev/null 2>&1 &&
			mount -o loop "$T/btrfs.img" "$T/fs/btrfs" 2>"$T/err" &&
			MOUNTS="$T/fs/btrfs $MOUNTS" &&
			btrfs subvolume create "$T/fs/btrfs/sub" >/dev/null &&
			live_on "btrfs subvolume" "$T/fs/btrfs/sub" ||
			skip "btrfs: cannot make or mount a loop file system: $(cat "$T/err")"
	fi
	o=$T/fs/ovl
	mkdir -p "$o/lower" "$o/upper" "$o/work" "$o/mnt" &&
		mount -t overlay overlay -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" \
			"$o/mnt" 2>"$T/err" && MOUNTS="$o/mnt $MOUNTS" &&
		live_on overlayfs "$o/mnt" || skip "overlayfs: cannot mount: $(cat "$T/err")"
}

# ---- item 11: --follow goes on after a failed exec -------------------------------

t_follow_failed_exec() {
	mkdir -p "$T/fx"
	command -v bash >/dev/null || { skip "follow after a failed exec: no bash"; return; }
	# bash with execfail goes on after a failed exec; its forks after it
	# (more than a second later) are events of the same file.
	OCAML_RUNTIME_EVENTS_PRESERVE=1 traced "$T/fx" bash -c \
		'shopt -s execfail; sleep 0.3; exec /nonexistent/x 2>/dev/null; sleep 1.5; /bin/true; /bin/true; exit 0' & p=$!
	BGPIDS="$BGPIDS $p"
	timeout 30 "$RR" --follow --wait=20 -f jsonl -d "$T/fx" "$p" >"$T/out" 2>"$T/err"
	rc=$?
	wait "$p"
	starts=$(grep -c '"name":"ring_start"' "$T/out")
	stops=$(grep -c '"name":"ring_stop"' "$T/out")
	forks=$(grep -c '"name":"fork_parent"' "$T/out")
	# env exec'd bash: the files of both images of the pid
	"$RR" -f jsonl "$T/fx/$p".*events >"$T/all" 2>/dev/null
	bash_starts=$("$RR" -f jsonl "$T/fx/$p.events" | grep -c '"name":"ring_start"')
	{ [ $rc -eq 0 ] && [ "$bash_starts" -eq 2 ] && [ "$starts" -eq "$stops" ] &&
		[ "$(wc -l <"$T/out")" -eq "$(wc -l <"$T/all")" ]; } &&
		ok "--follow reads past a failed exec ($forks forks, $stops ring_stop)" ||
		fail "--follow after a failed exec: exit $rc, $starts ring_start, $stops ring_stop, $(wc -l <"$T/out") of $(wc -l <"$T/all") events: $(cat "$T/err")"
}

# ---- item 12: --clean through a directory symlink flipped under it --------------

t_clean_race() {
	setup_files
	deleted=0
	for round in 1 2 3 4 5; do
		r=$T/race$round
		mkdir -p "$r/a" "$r/b"
		i=0
		while [ $i -lt 200 ]; do # stale in a, finished in b, same names
			cp "$T/stale.events" "$r/a/$((100000 + i)).events"
			cp "$T/known.events" "$r/b/$((100000 + i)).events"
			i=$((i + 1))
		done
		ln -s a "$r/link"
		(while :; do
			ln -sfn b "$r/l2" && mv -T "$r/l2" "$r/link"
			ln -sfn a "$r/l2" && mv -T "$r/l2" "$r/link"
		done) & flip=$!
		"$RR" --clean "$r/link" >/dev/null 2>&1
		kill "$flip"
		wait "$flip" 2>/dev/null
		n=$(ls "$r/b" | wc -l)
		deleted=$((deleted + 200 - n))
	done
	[ $deleted -eq 0 ] && ok "--clean through a flipping symlink never removes a finished file" ||
		fail "--clean through a flipping symlink removed $deleted finished files"
	# Deterministic: strace holds the unlink for 3 s (delay_enter), and
	# the link is flipped to b while it waits. A path-based unlink then
	# removes b's finished file; one through the directory's descriptor
	# removes a's stale file.
	if strace -qq --seccomp-bpf -o /dev/null -e trace=unlinkat \
		-e inject=unlinkat:delay_enter=1 true 2>/dev/null; then
		r=$T/race-strace
		mkdir -p "$r/a" "$r/b"
		cp "$T/stale.events" "$r/a/100000.events"
		cp "$T/known.events" "$r/b/100000.events"
		ln -s a "$r/link"
		sleep 0.1
		strace -f -qq --seccomp-bpf -o /dev/null -e trace=unlink,unlinkat \
			-e inject=unlink,unlinkat:delay_enter=3000000 \
			"$RR" --clean "$r/link" >"$T/out" 2>&1 & sp=$!
		i=0 held=0
		while [ $i -lt 500 ] && [ $held -lt 3 ]; do # stopped in the unlink
			rp=$(pgrep -P "$sp" | head -1)
			if [ -n "$rp" ] && [ "$(cut -d' ' -f3 "/proc/$rp/stat" 2>/dev/null)" = t ]; then
				held=$((held + 1))
			else
				held=0
			fi
			sleep 0.05
			i=$((i + 1))
		done
		ln -s b "$r/l2" && mv -T "$r/l2" "$r/link"
		wait "$sp"
		{ [ -e "$r/b/100000.events" ] && [ ! -e "$r/a/100000.events" ]; } &&
			ok "--clean: a symlink flipped during the unlink cannot redirect it" ||
			fail "--clean with the link flipped during the unlink: a: $(ls "$r/a"), b: $(ls "$r/b"): $(cat "$T/out")"
	else
		skip "--clean flipped during the unlink: no strace with --seccomp-bpf and inject"
	fi
	# only regular files with our names, read and found stale, go
	c=$T/cl
	mkdir -p "$c"
	cp "$T/stale.events" "$c/$STALE_PID.events"
	ln -s "$c/$STALE_PID.events" "$c/42.events"       # a symlink to a stale file
	mkfifo "$c/43.events"                              # a FIFO
	cp "$T/stale.events" "$c/44.events.bak"            # not our name
	sleep 0.1 # files changed as --clean starts are kept (a new writer's?)
	timeout 20 "$RR" --clean "$c" >"$T/out" 2>"$T/err"
	{ [ ! -e "$c/$STALE_PID.events" ] && [ -L "$c/42.events" ] && [ -p "$c/43.events" ] &&
		[ -e "$c/44.events.bak" ]; } &&
		ok "--clean removes only regular ring files found stale" ||
		fail "--clean: $(ls "$c"): $(cat "$T/out" "$T/err")"
	# a crashed process's file (no ring_stop, writer gone) holds its
	# crash record: kept, and said so
	c=$T/clc
	mkdir -p "$c"
	{ (traced "$c" sh -c 'kill -SEGV $$'); } 2>/dev/null
	cp "$T/stale.events" "$c/$STALE_PID.events"
	sleep 0.1
	f=$(ls "$c" | grep -v "^$STALE_PID.events")
	timeout 20 "$RR" --clean "$c" >"$T/out" 2>"$T/err"
	{ [ -n "$f" ] && [ -e "$c/$f" ] && [ ! -e "$c/$STALE_PID.events" ] &&
		grep -q "kept .*$f: process [0-9]* crashed" "$T/out"; } &&
		ok "--clean keeps a crashed process's file and says why" ||
		fail "--clean and a crash record: $(ls "$c"): $(cat "$T/out" "$T/err")"
	"$RR" -f summary "$c/$f" 2>/dev/null | grep -q "(no ring_stop: its writer crashed" &&
		! "$RR" -f summary "$c/$f" 2>/dev/null | grep -q "killed?" &&
		ok "summary: a crashed writer is not 'killed?'" ||
		fail "summary of a crash: $("$RR" -f summary "$c/$f" 2>&1 | grep 'file 0')"
}

# ---- item 14: devices and FIFOs -----------------------------------------------------

t_nonregular() {
	setup_files
	d=$T/dev
	mkdir -p "$d"
	ln -s /dev/zero "$d/2.events"
	timeout 10 "$RR" --wait=5 "$d/2.events" >/dev/null 2>"$T/err"
	rc=$?
	{ [ $rc -eq 3 ] && grep -q "not a regular file" "$T/err"; } &&
		ok "--wait gives up at once on a device: $(cat "$T/err")" ||
		fail "--wait on a symlink to /dev/zero: exit $rc: $(cat "$T/err")"
	timeout 10 "$RR" --wait "$d/2.events" >/dev/null 2>&1
	[ $? -eq 3 ] && ok "--wait (for ever) gives up on a device" || fail "--wait on a device did not give up"
	mkdir -p "$T/devdir"
	cp "$T/known.events" "$T/devdir/1.events"
	ln -s /dev/zero "$T/devdir/2.events"
	ln -s /dev/ptmx "$T/devdir/3.events"
	mkfifo "$T/devdir/4.events"
	timeout 10 "$RR" -f summary "$T/devdir" >"$T/out" 2>"$T/err"
	rc=$?
	{ [ $rc -eq 0 ] && [ "$(grep -c 'not a regular file, skipped' "$T/err")" -eq 3 ] &&
		grep -q "1.events" "$T/out"; } &&
		ok "a directory's devices and FIFOs: skipped with one warning each" ||
		fail "devices in a directory: exit $rc: $(cat "$T/err")"
	# --follow rescans a directory: still one warning for the FIFO
	"$GEN" live "$T/devdir" 300 2000 stop 0 & g=$!
	BGPIDS="$BGPIDS $g"
	timeout 30 "$RR" --follow -f jsonl "$T/devdir" >"$T/out" 2>"$T/err"
	rc=$?
	wait "$g"
	{ [ $rc -eq 0 ] && [ "$(grep -c '4.events: not a regular file' "$T/err")" -eq 1 ]; } &&
		ok "--follow DIR warns once about a FIFO" ||
		fail "--follow DIR with a FIFO: exit $rc: $(sort "$T/err" | uniq -c)"
}

# ---- item 13: many files, each mapped only while it is read --------------------

t_many_files() {
	if ldd "$RR" | grep -q libasan; then
		skip "many files: ASan needs more address space than the limit set here"
		return
	fi
	m=$T/many
	mkdir -p "$m/one" "$m/d"
	"$GEN" live "$m/one" 5 0 stop 0 6 || { fail "gen_ring live"; return; }
	# 4000 sparse copies: 4 GiB of mappings if every file stayed mapped
	python3 - "$m/one"/*.events "$m/d" 4000 <<'PY'
import os, sys
src, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, "rb").read()
used = (len(data.rstrip(b"\0")) + 4095) // 4096 * 4096
for i in range(n):
    fd = os.open("%s/%d.events" % (d, 100000 + i), os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, data[:used])
    os.ftruncate(fd, len(data))
    os.close(fd)
PY
	# At most 1 GiB of address space: enough for a few files at a time.
	(ulimit -v 1048576 && "$RR" -f summary "$m/d") >"$T/many.out" 2>"$T/err"
	rc=$?
	{ [ $rc -eq 0 ] && [ "$(grep -c '^  file [0-9]*: ' "$T/many.out")" -eq 4000 ]; } &&
		ok "summary of 4000 files in 1 GiB of address space: one mapped at a time" ||
		fail "summary of 4000 files under ulimit -v: exit $rc: $(head -2 "$T/err")"
	(ulimit -v 1048576 && "$RR" --clean "$m/d") >"$T/out" 2>"$T/err"
	rc=$?
	{ [ $rc -eq 0 ] && [ "$(ls "$m/d" | wc -l)" -eq 4000 ]; } &&
		ok "--clean of 4000 finished files keeps them all" ||
		fail "--clean of 4000 files: exit $rc: $(head -2 "$T/out" "$T/err")"
	rm -rf "$m/d"
}

ALL="wait_value wait_dir wait_signal bad_option output_is_input dedupe messages
default_dir liveness follow_failed_exec clean_race nonregular many_files"
for t in ${*:-$ALL}; do
	"t_$t"
done
if [ "$FAILS" -ne 0 ]; then
	echo "reader input tests: $FAILS failure(s) (files kept in $T)" >&2
	exit 1
fi
cleanup
trap - EXIT
rm -rf "$T"
echo "reader input tests: all passed"
