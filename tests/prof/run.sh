#!/bin/sh
# run.sh - tests of the CPU profiler (RTE_PROFILE, shim/prof/): the real
# program tests/prof/progs/cpu.c under the real shim, its files read back
# with the real rte-read (-f jsonl) and tests/prof/samples.py (per-thread
# samples and CPU time, self shares of symbolised functions).
#
# Usage: run.sh [TEST...] (all by default). Environment (mk/tests-prof.mk):
# RTE_BUILD, the build folder (absolute); RTE_ASAN_RT, the ASan runtime
# to preload first (empty without ASan); RTE_TSAN, 1 for a ThreadSanitizer
# build: TSan runs signal handlers late, with the context of the signal's
# arrival but a stack that has moved on, and delivers a fraction of the
# samples (see full_check); there the tests check what the shim does
# (timers, files, warnings, weights, statuses), not the profile's shape. No timing assertion: rates and
# overheads are in make bench (bench/prof.sh).
set -u

PROF_WORK=rte-prof
. "$(dirname "$0")/lib.sh"
SAMPLES="python3 $(dirname "$0")/samples.py"
# The default profiling signal (SIGRTMAX-2), as the shell numbers it.
SIG=$(($(kill -l RTMAX 2>/dev/null || echo 64) - 2))

# analyse DIR [FILE...]: samples.py over the files (all of DIR's by
# default) into DIR/an.json.
analyse() {
	_d=$1
	shift
	[ $# -gt 0 ] || set -- "$_d"/*.events
	"$READ" -f jsonl "$@" >"$_d/jsonl" 2>"$_d/rerr" ||
		fail "rte-read: $(cat "$_d/rerr")"
	$SAMPLES <"$_d/jsonl" >"$_d/an.json" || fail "samples.py failed"
	# The second pass (make test-prof, RTE_PROFILE_CLOCK=perf): every
	# sample of every test is the perf clock's.
	[ "${RTE_PROFILE_CLOCK:-}" != perf ] ||
		check "perf clock" '"timer" not in d["clocks"]' "$_d"
}

# q DIR EXPR: a Python expression over d = DIR/an.json.
q() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1/an.json" "$2"
}

check() { # what python-boolean-expression DIR
	[ "$(q "$3" "$2")" = True ] ||
		fail "$1: $2 is false ($(head -c 600 "$3/an.json"))"
}


# full_check what expr DIR: a check of the whole stacks or of shares,
# not under TSan: there the stacks beyond the innermost frame are of a
# moved-on stack (see above), and a pending signal that TSan has not
# delivered yet absorbs the next ones (one pending per signal), so a
# thread gets a fraction of its samples (each weighted by its CPU time).
full_check() {
	[ -n "$TSAN" ] || check "$@"
}

# ms N: the least number of samples a check asks for: N, 1 under TSan.
ms() {
	if [ -n "$TSAN" ]; then echo 1; else echo "$1"; fi
}

no_rte_lines() { # DIR
	! grep -q '^rte: ' "$1/err" || fail "unexpected: $(cat "$1/err")"
}

# Off by default; on, the known call tree's shares (~90/9/1 %).
test_tree() {
	begin tree
	prof "$D/off" "" "$CPU" tree 200
	analyse "$D/off"
	check "no samples without RTE_PROFILE" 'd["samples"] == 0' "$D/off"
	prof "$D/on" 997 "$CPU" tree 1500
	expect_status 0
	no_rte_lines "$D/on"
	analyse "$D/on"
	check "samples" 'd["samples"] >= '"$(ms 50)" "$D/on"
	full_check "leaf_hot share" '0.80 <= d["self"].get("leaf_hot", 0) <= 0.97' "$D/on"
	full_check "leaf_warm share" '0.03 <= d["self"].get("leaf_warm", 0) <= 0.16' "$D/on"
	full_check "the three leaves" 'sum(d["self"].get(f, 0) for f in ("leaf_hot", "leaf_warm", "leaf_cold")) >= 0.95' "$D/on"
	full_check "work on every stack" 'd["total"].get("work", 0) >= 0.97 and d["total"].get("main", 0) >= 0.97' "$D/on"
	# The weights add up to the program's CPU time (1.5 s, less at most
	# the time after the last sample).
	check "cpu_ns" '1.2e9 <= d["cpu_ns"] <= 1.7e9' "$D/on"
	check "hz recorded" 'd["hz"] == 997' "$D/on"
	finish
}

expect_eq() { # what got want
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

expect_status() {
	[ "$ST" = "$1" ] || fail "status $ST, want $1 ($(cat "$D"/*/err 2>/dev/null | head -5))"
}

# Two threads: each has its own samples on its own ring, weighted by its
# own CPU time.
test_threads() {
	begin threads
	prof "$D" 997 "$CPU" threads 2 800
	expect_status 0
	no_rte_lines "$D"
	analyse "$D"
	# Under TSan the main thread spends some CPU time (~20 ms) starting
	# the threads, and may be sampled too: there the two busiest threads
	# are the two workers, any other spent little.
	th='list(d["pids"].values())[0]["threads"].values()'
	if [ -n "$TSAN" ]; then
		th="sorted($th, key=lambda t: t['cpu_ns'])"
		check "two busy threads, others idle" "len($th) in (2, 3) and all(t['cpu_ns'] < 0.1e9 for t in $th[:-2])" "$D"
		th="$th[-2:]"
	else
		check "two sampled threads" "len($th) == 2" "$D"
	fi
	check "per-thread CPU time" "all(0.6e9 <= t['cpu_ns'] <= 0.9e9 for t in $th)" "$D"
	finish
}

# Threads created and ended during profiling: each one sampled, none
# leaking a timer (the program exits cleanly with samples in flight).
test_churn() {
	begin churn
	prof "$D" 997 "$CPU" churn 20 60
	expect_status 0
	no_rte_lines "$D"
	analyse "$D"
	# Under TSan a signal waits for the thread's next interceptor call,
	# which a short thread may not make before it ends: most, not all.
	want='== 20'
	[ -z "$TSAN" ] || want='>= 10'
	check "20 sampled threads" 'len([t for p, v in d["pids"].items() for t in v["threads"] if t != p]) '"$want" "$D"
	finish
}

# fork: the child re-arms its own timer and writes its own file.
test_fork() {
	begin fork
	prof "$D" 997 "$CPU" fork 400
	expect_status 0
	no_rte_lines "$D"
	[ "$(ls "$D"/*.events | wc -l)" = 2 ] || fail "want 2 files: $(ls "$D")"
	for f in "$D"/*.events; do
		mkdir -p "$f.d"
		analyse "$f.d" "$f"
		pid=$(basename "$f" .events)
		check "$pid sampled" '"'"$pid"'" in d["pids"] and d["samples"] >= '"$(ms 20)" "$f.d"
		check "$pid: only its own thread" 'list(d["pids"]["'"$pid"'"]["threads"]) == ["'"$pid"'"]' "$f.d"
		# each file has the module events its stacks need
		"$READ" -f folded "$f" 2>/dev/null | grep -q ";main;" ||
			fail "$pid: stacks not symbolised: $("$READ" -f folded "$f" 2>&1 | head -2)"
	done
	finish
}

# exec: the old image's samples stay in its file, the new image profiles
# itself; no sample of the old timers reaches the new image.
test_exec() {
	begin exec
	prof "$D" 997 "$CPU" exec 300
	expect_status 0
	no_rte_lines "$D"
	[ "$(ls "$D"/*.events | wc -l)" = 2 ] || fail "want 2 files: $(ls "$D")"
	for f in "$D"/*.events; do
		mkdir -p "$f.d"
		analyse "$f.d" "$f"
		check "$(basename "$f") sampled" 'd["samples"] >= '"$(ms 20)" "$f.d"
	done
	finish
}

# vfork+exec children and a failed exec leave the parent's profiling as
# it was: its samples go on (the child's exec hook must not touch the
# parent's timer, the failed exec re-arms the caller's).
test_vfork() {
	begin vfork
	prof "$D" 997 "$CPU" vfork 20 500
	expect_status 0
	no_rte_lines "$D"
	analyse "$D"
	check "samples after the vforks" 'd["samples"] >= '"$(ms 50)" "$D"
	finish
}

# A program that writes events back to back: samples that arrive in the
# middle of a write are dropped and counted in rte.dropped, never torn
# (rte-read reads every ring to the end without an error; samples that
# did not interrupt a write are there).
test_writer() {
	begin writer
	prof "$D" 997 "$CPU" writer 800
	expect_status 0
	no_rte_lines "$D"
	analyse "$D"
	check "samples written" 'd["samples"] >= '"$(ms 5)" "$D"
	check "samples dropped and counted" 'list(d["pids"].values())[0]["dropped"] >= '"$(ms 5)" "$D"
	finish
}

# Blocking calls of the program never see EINTR (SA_RESTART): read on a
# pipe, accept, waitpid, while the process is busy (cpu.c exits 3).
test_syscalls() {
	begin syscalls
	prof "$D" 997 "$CPU" syscalls 300
	expect_status 0
	no_rte_lines "$D"
	analyse "$D"
	check "sampled" 'd["samples"] >= '"$(ms 20)" "$D"
	finish
}

# The program takes the signal in main: profiling stops with one warning,
# every timer is deleted, and the program's handler gets its own signal
# and no other (cpu.c exits 4 otherwise).
test_ownsig() {
	begin ownsig
	prof "$D" 997 "$CPU" ownsig "$SIG"
	expect_status 0
	n=$(grep -c '^rte: ' "$D/err")
	[ "$n" = 1 ] && grep -q 'profiling stopped' "$D/err" ||
		fail "want one warning: $(cat "$D/err")"
	analyse "$D"
	check "no sample after the takeover (300 ms of CPU)" 'd["samples"] < 5' "$D"
	finish
}

# A signal already taken when tracing starts (SIG_IGN inherited through
# exec): profiling is off with one warning, the program runs as before.
test_owned_at_start() {
	begin owned_at_start
	mkdir -p "$D"
	$TMO sh -c 'trap "" '"$SIG"'; LD_PRELOAD="$1" \
		OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$2" \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 RTE_PROFILE=997 exec "$3" tree 300' \
		sh "$PRELOAD" "$D" "$CPU" 2>"$D/err"
	ST=$?
	expect_status 0
	n=$(grep -c '^rte: ' "$D/err")
	[ "$n" = 1 ] && grep -q 'already handles signal' "$D/err" ||
		fail "want one warning: $(cat "$D/err")"
	analyse "$D"
	check "no samples" 'd["samples"] == 0' "$D"
	finish
}

# RTE_PROFILE_SIGNAL and RTE_PROFILE_STACK: another signal, frame
# pointers; a bad value is one warning and no profiling.
test_config() {
	begin config
	RTE_PROFILE_SIGNAL=PROF RTE_PROFILE_STACK=fp prof "$D/prof" 997 \
		"$CPU" tree 500
	expect_status 0
	no_rte_lines "$D/prof"
	analyse "$D/prof"
	# A frame-pointer walk loses the caller of a leaf that sets up no
	# frame (gcc omits it in leaves): work is missing, tree is not.
	check "SIGPROF, fp: sampled" 'd["samples"] >= '"$(ms 20)" "$D/prof"
	full_check "SIGPROF, fp: leaf_hot" 'd["self"].get("leaf_hot", 0) >= 0.8' "$D/prof"
	full_check "SIGPROF, fp: tree" 'd["total"].get("tree", 0) >= 0.97' "$D/prof"
	RTE_PROFILE_SIGNAL=SEGV prof "$D/bad" 997 "$CPU" tree 100
	expect_status 0
	[ "$(grep -c '^rte: .*RTE_PROFILE_SIGNAL' "$D/bad/err")" = 1 ] ||
		fail "bad signal: $(cat "$D/bad/err")"
	prof "$D/badhz" 12x "$CPU" tree 100
	[ "$(grep -c '^rte: RTE_PROFILE:' "$D/badhz/err")" = 1 ] ||
		fail "bad rate: $(cat "$D/badhz/err")"
	finish
}

# A "signal thread" design: every signal blocked (pthread_sigmask,
# sigprocmask; threads inheriting the mask or given it by their
# attribute): ours is never pending nor waited for (sigpending,
# sigtimedwait), and profiling goes on once it is unblocked. The same in
# Python (signal.pthread_sigmask, signal.sigtimedwait).
test_blocked() {
	begin blocked
	mkdir -p "$D/mask" "$D/proc" "$D/py"
	for how in mask proc; do
		prof "$D/$how" 997 "$CPU" blocked 300 $how >"$D/$how/out"
		expect_status 0
		expect_eq "$how" "$(cat "$D/$how/out")" "blocked ok"
		no_rte_lines "$D/$how"
		analyse "$D/$how"
		check "samples once unblocked ($how)" 'd["samples"] > 0' "$D/$how"
	done
	# A ThreadSanitizer librte.so loads into instrumented programs only.
	if [ -n "$TSAN" ]; then
		finish
		return
	fi
	prog='import signal, threading, time
def burn():
    t = time.process_time()
    while time.process_time() - t < 0.3:
        pass
signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
th = threading.Thread(target=burn)
th.start()
burn()
th.join()
print("pending", sorted(int(s) for s in signal.sigpending()))
print("waited", signal.sigtimedwait(signal.valid_signals(), 0.2))'
	# Python's own allocations at exit are not ours to check (ASan).
	prof "$D/py" 997 \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		/usr/bin/python3 -c "$prog" >"$D/py/out"
	expect_status 0
	expect_eq "python" "$(cat "$D/py/out")" "pending []
waited None"
	no_rte_lines "$D/py"
	finish
}

# rte-run --profile[=HZ]: RTE_PROFILE for the whole tree (99 by default).
test_rte_run() {
	begin rte_run
	$TMO "$B/rte-run" --profile -d "$D/d" -q "$CPU" tree 500 2>"$D/err"
	ST=$?
	expect_status 0
	mkdir -p "$D/a"
	analyse "$D/a" "$D"/d/*.events
	check "99 Hz" 'd["hz"] == 99 and d["samples"] >= '"$(ms 20)" "$D/a"
	$TMO "$B/rte-run" --profile=x -q true 2>"$D/err2"
	ST=$?
	expect_status 125
	# The profile formats of rte-read, through rte-run -f.
	$TMO "$B/rte-run" --profile=997 -f folded -o "$D/folded" "$CPU" tree 300 \
		2>"$D/err3"
	ST=$?
	expect_status 0
	# Under TSan the frames above the leaf are of a moved-on stack: any
	# folded stack with its count then.
	# (spin, always inlined into leaf_hot, its frame by default)
	pat=';work;leaf_hot;spin [0-9]'
	[ -z "$TSAN" ] || pat='^[^ ].* [0-9][0-9]*$'
	grep -q "$pat" "$D/folded" ||
		fail "folded: $(head -c 300 "$D/folded") $(cat "$D/err3")"
	finish
}

# RTE_PROFILE_CLOCK=perf: the rate asked (the timer is tick-bound: about
# 250 samples per CPU second on a 250 Hz kernel at any rate above), every
# sample marked, the one line in RTE_LOG and the summary; above 10 kHz,
# and where perf_event_open fails, the timer and a warning saying why.
# The rate is of CPU time, not of the wall clock: a loaded machine gives
# the program less of it, not fewer samples per second of it.
test_clock() {
	begin clock
	# Python and the seccomp helper are not built with TSan: a TSan
	# librte.so cannot be preloaded into them.
	san_skip thread clock "Python is not instrumented" && return
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
		RTE_PROFILE_CLOCK=perf prof "$D/no" 997 "$CPU" tree 200
		expect_status 0
		grep -q '^rte: .*by the CPU-time timer.*perf_event_open' "$D/no/err" ||
			fail "fallback line: $(cat "$D/no/err")"
		skip clock "perf_event_paranoid above 2"
		return
	fi
	for hz in 997 4999; do
		# A ring that holds every sample (and the modules before them).
		RTE_LOG="$D/log$hz" RTE_PROFILE_CLOCK=perf \
			OCAMLRUNPARAM=e=20 \
			prof "$D/p$hz" $hz "$CPU" tree 1500
		expect_status 0
		no_rte_lines "$D/p$hz"
		RTE_PROFILE_CLOCK= analyse "$D/p$hz"
		check "all perf" 'd["clocks"] == {"perf": d["samples"]}' "$D/p$hz"
		full_check "rate $hz" 'd["samples"] / (d["cpu_ns"] / 1e9) >= 0.6 * '$hz "$D/p$hz"
		full_check "leaf_hot share" '0.80 <= d["self"].get("leaf_hot", 0) <= 0.97' "$D/p$hz"
		grep -q "^rte: RTE_PROFILE: $hz Hz by the perf_event cpu-clock" "$D/log$hz" ||
			fail "RTE_LOG: $(cat "$D/log$hz")"
		"$READ" -f summary "$D/p$hz"/*.events >"$D/sum$hz" 2>&1
		grep -q '^    clock: perf_event cpu-clock' "$D/sum$hz" ||
			fail "summary: $(head -20 "$D/sum$hz")"
	done
	# The default: the timer, said in the summary only (rte-run shows its
	# RTE_LOG file: not a line per process of a tree).
	RTE_LOG="$D/logt" RTE_PROFILE_CLOCK= prof "$D/t" 997 "$CPU" tree 300
	expect_status 0
	no_rte_lines "$D/t"
	RTE_PROFILE_CLOCK= analyse "$D/t"
	check "all timer" 'd["clocks"] == {"timer": d["samples"]}' "$D/t"
	[ ! -s "$D/logt" ] || fail "RTE_LOG: $(cat "$D/logt")"
	"$READ" -f summary "$D/t"/*.events | grep -q '^    clock: CPU-time timer (tick-bound; the default' ||
		fail "timer summary"
	# Above the perf clock's 10 kHz: the timer, a warning, the summary.
	RTE_PROFILE_CLOCK=perf prof "$D/r" 20000 "$CPU" tree 300
	expect_status 0
	grep -q '^rte: RTE_PROFILE: 20000 Hz by the CPU-time timer: the perf clock goes up to 10000 Hz$' "$D/r/err" ||
		fail "rate line: $(cat "$D/r/err")"
	RTE_PROFILE_CLOCK= analyse "$D/r"
	check "all timer" 'd["clocks"] == {"timer": d["samples"]} and d["samples"] > 0' "$D/r"
	"$READ" -f summary "$D/r"/*.events | grep -q '^    clock: CPU-time timer.*above its 10000 Hz' ||
		fail "rate summary"
	# perf_event_open refused (a seccomp filter, as in many containers:
	# the program's own, inherited by its exec): the timer, the reason.
	# The filter names x86-64's system call number.
	if [ "$(uname -m)" != x86_64 ]; then
		finish
		return
	fi
	RTE_PROFILE_CLOCK=perf prof "$D/s" 997 /usr/bin/python3 \
		"$(dirname "$0")/progs/noperf.py" "$CPU" tree 300
	expect_status 0
	grep -q '^rte: RTE_PROFILE: 997 Hz by the CPU-time timer (tick-bound): perf_event_open: Permission denied' "$D/s/err" ||
		fail "seccomp line: $(cat "$D/s/err")"
	"$READ" -f summary "$D/s"/*.events | grep -q '^    clock: CPU-time timer.*perf_event_open failed: Permission denied' ||
		fail "seccomp summary: $("$READ" -f summary "$D/s"/*.events | grep clock)"
	finish
}

# The perf clock's descriptors: one per profiled thread, at RTE_FD_MIN
# (100) or above, close-on-exec; a fork child closes its copies of its
# parent's (its own thread gets its own), an exec keeps none.
test_clock_fds() {
	begin clock_fds
	# Python and the seccomp helper are not built with TSan: a TSan
	# librte.so cannot be preloaded into them.
	san_skip thread clock_fds "Python is not instrumented" && return
	RTE_PROFILE_CLOCK=perf prof "$D" 997 /usr/bin/python3 \
		"$(dirname "$0")/progs/perffds.py" >"$D/out"
	expect_status 0
	grep -q '^parent 3 1[0-9][0-9]$' "$D/out" || fail "parent: $(cat "$D/out")"
	grep -q '^child 1$' "$D/out" || fail "child: $(cat "$D/out")"
	grep -q '^exec 0$' "$D/out" || fail "exec: $(cat "$D/out")"
	# A close-all loop, the number reused for a pipe: never stopped or
	# closed by us (each use checks the descriptor is still the event).
	# Frame pointers: on this branch libunwind's validation pipe still
	# reads a daemon's reused descriptors (issue 22 point 3, fixed apart).
	# (CPython's own leaks at exit are not ours: no leak check there.)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	RTE_PROFILE_STACK=fp RTE_PROFILE_CLOCK=perf prof "$D/r" 997 /usr/bin/python3 \
		"$(dirname "$0")/progs/perffds.py" reuse "$SIG" >"$D/rout"
	expect_status 0
	expect_eq "reuse" "$(cat "$D/rout")" "reuse ok"
	finish
}

# C++ names demangled everywhere a name is printed: the summary, folded,
# the flame graph and pprof (its string table), as c++filt spells them;
# no mangled name of the program left in any of them.
test_cxx() {
	begin cxx
	X=$T/cxx
	mangled=$(nm "$X" | awk '$3 ~ /^_ZN3geo5Table.*5churn/ { print $3; exit }')
	[ -n "$mangled" ] || { fail "no geo::Table churn symbol in $X"; return; }
	want=$(echo "$mangled" | c++filt)
	case $want in _Z*) fail "c++filt: $want"; return ;; esac
	prof "$D" 997 "$X" 3000000 >"$D/out"
	expect_status 0
	no_rte_lines "$D"
	"$READ" -f summary "$D"/*.events >"$D/summary" 2>&1
	"$READ" -f folded "$D"/*.events >"$D/folded" 2>&1
	"$READ" -f flamegraph -o "$D/flame.svg" "$D"/*.events 2>"$D/ferr"
	"$READ" -f pprof -o "$D/prof.pb.gz" "$D"/*.events 2>"$D/perr"
	gzip -dc "$D/prof.pb.gz" >"$D/prof.pb" || fail "pprof: $(cat "$D/perr")"
	# The flame graph's data is JSON, its angle brackets escaped.
	sed 's/\\u003c/</g; s/\\u003e/>/g; s/&lt;/</g; s/&gt;/>/g' "$D/flame.svg" >"$D/flame.txt"
	# Under TSan the summary's top-ten lists are the sanitizer runtime's
	# own (its inlined accessors, each a frame): there, only that no
	# name is mangled.
	case $(h_san) in *thread*) tsan=1 ;; *) tsan=0 ;; esac
	for f in summary folded flame.txt prof.pb; do
		[ "$f.$tsan" = summary.1 ] || grep -aqF "$want" "$D/$f" ||
			fail "$f: no '$want' ($(head -c 300 "$D/$f"))"
		! grep -aq '_ZN3geo\|_ZNSt\|_ZSt' "$D/$f" ||
			fail "$f: a mangled name: $(grep -ao '_ZN3geo[^ ;]*\|_ZNSt[^ ;]*\|_ZSt[^ ;]*' "$D/$f" | head -3)"
	done
	finish
}

# Rust names demangled, both manglings (legacy _ZN...17h<hash>E, v0 _R...),
# as c++filt spells them less its verbose parts (the legacy hash, v0's
# crate disambiguator: left out, as perf and addr2line -C leave them).
# Skipped without rustc (not a Debian dependency of rte).
test_rust() {
	begin rust
	RUSTC=$(command -v rustc) || { skip rust "no rustc"; return; }
	# rustc's program is not built with TSan: a TSan librte.so cannot be
	# preloaded into it.
	san_skip thread rust "rustc's program is not instrumented" && return
	for m in legacy v0; do
		# legacy is the default (naming it needs -Z unstable-options)
		opt=
		[ $m = legacy ] || opt="-C symbol-mangling-version=$m"
		"$RUSTC" -O -g -C force-frame-pointers=yes $opt -o "$D/rs-$m" "$(dirname "$0")/progs/rs.rs" 2>"$D/rustc-$m" ||
			{ skip rust "rustc: $(tail -1 "$D/rustc-$m")"; return; }
		mangled=$(nm "$D/rs-$m" | awk '$3 ~ /geo.*churn/ { print $3; exit }')
		want=$(echo "$mangled" | c++filt |
			sed 's/::h[0-9a-f]\{16\}$//; s/\[[0-9a-f]*\]//g')
		[ -n "$mangled" ] && [ "$want" != "$mangled" ] ||
			{ fail "$m: symbol '$mangled' c++filt '$want'"; continue; }
		prof "$D/$m" 997 "$D/rs-$m" 300000000 >"$D/$m.out"
		expect_status 0
		"$READ" -f folded "$D/$m"/*.events >"$D/$m.folded" 2>&1
		grep -qF ";$want " "$D/$m.folded" ||
			fail "$m: no '$want' in folded ($(head -c 300 "$D/$m.folded"))"
		! grep -qF "$mangled" "$D/$m.folded" || fail "$m: '$mangled' in folded"
	done
	finish
}

# Wall mode (RTE_PROFILE_MODE=wall): a program asleep in nanosleep for
# about half its wall time is sampled asleep too: its blocked share
# matches the program's own measure of it (loosely: +-0.12), each such
# stack ends in nap;...;[blocked:(clock_)nanosleep], --state splits them,
# no call of the program sees EINTR (cpu.c exits 6 or 3 otherwise), and a
# fork child samples itself. CPU mode, the same program: no blocked frame.
# The summary's thread table heads its time column wall, or cpu.
test_wall() {
	begin wall
	[ -z "$TSAN" ] || { skip wall "a ThreadSanitizer build (a fraction of the signals arrive)"; return; }
	mkdir -p "$D/w" "$D/c" "$D/s"
	RTE_PROFILE_MODE=wall prof "$D/w" 199 "$CPU" nap 8 120 >"$D/w/out"
	# Status 6 is an EINTR in nap's nanosleep: the race PROFILING.md
	# names (a thread seen running just before it sleeps is signalled),
	# whose window the sanitizer's slowness widens (1 run in 37 under
	# ASan on a loaded machine, none in 40 normal runs). Under ASan it is
	# reported, not failed: what this test holds there is the sampler's
	# start on a fork child's reused stack (hooks/threads.c).
	if [ "$ST" = 6 ] && [ -n "${RTE_ASAN_RT:-}" ]; then
		echo "  note wall: an EINTR in nap under ASan (the documented race)"
		ST=0
	fi
	expect_status 0
	no_rte_lines "$D/w"
	"$READ" -f folded "$D/w"/*.events >"$D/w/folded" 2>&1
	"$READ" --state blocked -f folded "$D/w"/*.events >"$D/w/blocked" 2>&1
	"$READ" --state running -f folded "$D/w"/*.events >"$D/w/running" 2>&1
	"$READ" -f summary-json "$D/w"/*.events >"$D/w/sum.json" 2>&1
	# Under ASan its nanosleep interceptor sits between nap and libc's,
	# and the scan of the blocked stack ends at it (PROFILING.md): the
	# blocked frame is checked, not its callers.
	nap=';nap;.*'
	[ -z "${RTE_ASAN_RT:-}" ] || nap=
	grep -q "$nap"'\[blocked:\(clock_\)\{0,1\}nanosleep\] [0-9]*$' "$D/w/folded" ||
		fail "no ${nap:+nap;...;}[blocked:nanosleep] stack: $(head -c 600 "$D/w/folded")"
	grep -q ';leaf_hot;spin [0-9]*$' "$D/w/folded" || fail "no running leaf_hot;spin: $(head -c 400 "$D/w/folded")"
	[ -s "$D/w/blocked" ] && ! grep -v '\[blocked' "$D/w/blocked" | grep -q . ||
		fail "--state blocked: $(head -c 400 "$D/w/blocked")"
	grep -q leaf_hot "$D/w/running" && ! grep -q '\[blocked' "$D/w/running" ||
		fail "--state running: $(head -c 400 "$D/w/running")"
	python3 - "$D/w/sum.json" "$D/w/out" >"$D/w/share" 2>&1 <<'PY' || fail "blocked share: $(cat "$D/w/share")"
import json, re, sys
d = json.load(open(sys.argv[1]))
m = re.search(r"slept=(\d+) wall=(\d+)", open(sys.argv[2]).read())
want = int(m.group(1)) / int(m.group(2))
cp = d["processes"][0]["cpu_profile"]
b = [t for t in cp["blocked"] if t["samples"] >= 100]
assert cp["clock"].startswith("wall clock"), cp["clock"]
assert len(b) == 1, cp["blocked"]
got = b[0]["blocked"] / b[0]["samples"]
print("blocked share %.3f, the program's own %.3f" % (got, want))
assert abs(got - want) <= 0.12
assert "nanosleep]" in b[0]["top"][0]["stack"][-1], b[0]["top"]
PY
	# CPU mode: never a blocked frame
	prof "$D/c" 199 "$CPU" nap 3 100 >"$D/c/out"
	expect_status 0
	! "$READ" -f folded "$D/c"/*.events 2>&1 | grep -q '\[blocked' || fail "a blocked frame in CPU mode"
	# the thread table's time column: wall time in wall mode, CPU time else
	hdr='^ *ring +tid +thread +samples +%s +asked +effective$'
	"$READ" -f summary "$D/w"/*.events >"$D/w/sum.txt" 2>&1
	"$READ" -f summary "$D/c"/*.events >"$D/c/sum.txt" 2>&1
	grep -Eq "$(printf "$hdr" wall)" "$D/w/sum.txt" ||
		fail "wall mode's thread table: $(grep -E ' ring +tid' "$D/w/sum.txt")"
	grep -Eq "$(printf "$hdr" cpu)" "$D/c/sum.txt" ||
		fail "CPU mode's thread table: $(grep -E ' ring +tid' "$D/c/sum.txt")"
	# blocking read, accept, waitpid with a busy thread: no EINTR (exit 3)
	RTE_PROFILE_MODE=wall prof "$D/s" 997 "$CPU" syscalls 200 >"$D/s/out"
	expect_status 0
	no_rte_lines "$D/s"
	RTE_PROFILE_MODE=wall prof "$D/f" 199 "$CPU" fork 300
	expect_status 0
	[ "$(ls "$D/f"/*.events | wc -l)" = 2 ] || fail "fork: want 2 files: $(ls "$D/f")"
	for f in "$D/f"/*.events; do
		"$READ" -f folded "$f" 2>&1 | grep -q ';leaf_hot;spin ' ||
			fail "fork: $(basename "$f") not sampled: $("$READ" -f folded "$f" 2>&1 | head -3)"
	done
	finish
}

TESTS="clock clock_fds cxx rust tree threads churn fork exec vfork writer syscalls ownsig owned_at_start config blocked rte_run wall"
[ $# -gt 0 ] && TESTS="$*"
for t in $TESTS; do
	"test_$t"
done
echo "prof tests: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
