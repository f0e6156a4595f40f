#!/bin/sh
# run.sh - tests of the crash flight recorder: real programs that crash
# (tests/crash/progs), each run twice, without and with the real shim; the
# exit status (signal and core-dump flag) and output must be the same, the
# ring file must be kept, and the real rte-read must show the crash with
# the stack symbolised (the known function names, in order).
#
# Environment (set by mk/tests-crash.mk): RTE_BUILD, the build folder
# (absolute); RTE_ASAN_RT, the ASan runtime to preload first (empty
# without ASan). RTE_READ overrides the rte-read binary.
set -u

B=${RTE_BUILD:?RTE_BUILD is not set}
T=$B/tests/crash
LIB=$B/librte.so
READ=${RTE_READ:-$B/rte-read}
PRELOAD="${RTE_ASAN_RT:+$RTE_ASAN_RT }$LIB"
WORK=$(mktemp -d "$T/work.XXXXXX") || exit 1
# Under ASan its own handlers for these signals would replace the default
# action in both runs alike; turn them off so that the programs die by the
# signal as a normal build does. (ASan's handler chained behind ours is
# covered by "asan_handler" at the end.)
ASAN_OFF="handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:detect_leaks=0:use_sigaltstack=0"
export ASAN_OPTIONS="${RTE_ASAN_RT:+$ASAN_OFF}"

. "$(dirname "$0")/../harness.sh"

begin() {
	h_begin "$1"
	mkdir -p "$D/plain" "$D/traced"
}

finish() {
	[ "$CUR_OK" = 1 ] || for f in "$D"/traced/*.events; do
		[ -e "$f" ] && cp "$f" "$T/" && echo "FAILED $T/$(basename "$f")"
	done
	h_finish
}

# status OUT CMD...: run CMD (in its own directory, core dumps allowed),
# write "exit N" or "signal N core 0|1" to OUT.status, its standard
# output to OUT.out and its standard error to OUT.err; killed (signal 9) after 60 s. The core file size
# limit is raised to its hard limit, so that both runs may dump core and
# the core flags are compared too.
status() {
	out=$1
	shift
	python3 - "$out" "$@" <<'EOF'
import os, resource, signal, sys
out, cmd = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    except (ValueError, OSError):
        pass
    os.chdir(os.path.dirname(out))
    # Python ignores these; a command run from a shell gets the default.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    fd = os.open(out + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    fd = os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
def expire(sig, frame):
    os.kill(pid, signal.SIGKILL)
signal.signal(signal.SIGALRM, expire)
signal.alarm(60)
while True:
    try:
        _, st = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
signal.alarm(0)
with open(out + ".status", "w") as f:
    if os.WIFSIGNALED(st):
        f.write("signal %d core %d\n" % (os.WTERMSIG(st), int(os.WCOREDUMP(st))))
    else:
        f.write("exit %d\n" % os.WEXITSTATUS(st))
EOF
}

# pair NAME ENV... -- CMD...: run CMD without the shim (in $D/plain) and
# with it (in $D/traced, tracing into $D/traced from the start unless
# NOSTART is set, no PRESERVE unless ENV says so); compare status and
# output.
pair() {
	name=$1
	shift
	envs=""
	while [ "$1" != "--" ]; do
		envs="$envs $1"
		shift
	done
	shift
	status "$D/plain/$name" "$@"
	# shellcheck disable=SC2086
	status "$D/traced/$name" env $envs \
		${NOSTART:-OCAML_RUNTIME_EVENTS_START=1} \
		OCAML_RUNTIME_EVENTS_DIR="$D/traced" LD_PRELOAD="$PRELOAD" "$@"
	rm -f "$D"/plain/core* "$D"/traced/core*
	a=$(cat "$D/plain/$name.status")
	b=$(cat "$D/traced/$name.status")
	[ "$a" = "$b" ] || fail "status without the shim '$a', with it '$b'"
	cmp -s "$D/plain/$name.out" "$D/traced/$name.out" ||
		fail "output differs: $(head -c 300 "$D/traced/$name.out")"
	STATUS=$b
}

expect_status() {
	case "$STATUS" in
	"$1"*) ;;
	*) fail "status '$STATUS', want '$1'" ;;
	esac
}

events_file() {
	set -- "$D"/traced/*.events
	[ -e "$1" ] || { fail "no ring file kept in $D/traced"; return 1; }
	EV=$1
}

# in_order FILE WORD...: the words appear in FILE on distinct lines, in
# this order (each after the line of the previous one).
in_order() {
	file=$1
	shift
	words=$(printf '%s\034' "$@")
	awk -v words="$words" '
		BEGIN { n = split(words, w, "\034") - 1; k = 1 }
		k <= n && index($0, w[k]) { line[k] = NR; k++ }
		END { exit k <= n }' "$file" ||
		fail "not in order in $(basename "$file"): $*"
}

# The stack of the crash report (text format): the lines after "stack:".
report_stack() {
	awk '/^CRASH in process/ { c = 1 } c && /^  stack:/ { s = 1; next }
	     s && /^  [^ ]/ { exit } s' "$1"
}

# check_crash SIG FUNCS...: rte-read text, summary, summary-json and
# chrome show the crash with FUNCS in order on its stack.
check_crash() {
	sig=$1
	shift
	events_file || return
	"$READ" "$EV" >"$D/text" 2>"$D/err" || fail "rte-read text failed: $(cat "$D/err")"
	"$READ" -f summary "$EV" >"$D/sum" 2>>"$D/err" || fail "rte-read summary failed"
	"$READ" -f summary-json "$EV" >"$D/sumj" 2>>"$D/err" || fail "rte-read summary-json failed"
	"$READ" -f chrome "$EV" >"$D/chrome" 2>>"$D/err" || fail "rte-read chrome failed"
	grep -q "^CRASH in process .*: $sig " "$D/text" || fail "no '$sig' crash report in text"
	head -3 "$D/sum" | grep -q "^CRASH in process .*: $sig " ||
		fail "summary does not start with the $sig crash"
	report_stack "$D/text" >"$D/stack"
	report_stack "$D/sum" >"$D/sumstack"
	in_order "$D/stack" "$@"
	in_order "$D/sumstack" "$@"
	grep -q 'last events before it' "$D/text" || fail "no last events in text"
	python3 - "$D/sumj" "$D/chrome" "$sig" "$@" 2>"$D/pyerr" <<'EOF'
import json, sys
sumj, chrome, sig, funcs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def order(stack):
    k = 0
    for fr in stack:
        if k < len(funcs) and (" " + funcs[k] + "+") in fr:
            k += 1
    return k == len(funcs)
s = json.load(open(sumj))
fatal = [c for c in s["crashes"] if c["fatal"]]
assert fatal and fatal[-1]["signal"] == sig, s["crashes"]
assert order(fatal[-1]["stack"]), fatal[-1]["stack"]
c = json.load(open(chrome))
evs = c["traceEvents"] if isinstance(c, dict) else c
cr = [e for e in evs if e.get("name") == "crash " + sig]
assert cr and cr[0]["ph"] == "i", cr
assert order(cr[0]["args"]["stack"]), cr[0]["args"]
EOF
	[ $? = 0 ] || fail "JSON checks: $(tail -c 600 "$D/pyerr")"
}

# ---- never hurting the host: signals (functions; run.sh NAME... runs only
# ---- these, e.g. `sh tests/crash/run.sh sigpipe sigterm`) ------------------

TMO_LONG="timeout 600"

# no_files DIR WHAT: fail if DIR holds a ring file.
no_files() {
	set -- "$1"/*.events "$2"
	[ -e "$1" ] && fail "$2: file left without PRESERVE: $(basename "$1")"
}

# signal_file DIR SIG: the one ring file of DIR with rte.signal SIG, which
# must be followed by ring_stop; sets EV.
signal_file() {
	EV=""
	for f in "$1"/*.events; do
		[ -e "$f" ] || continue
		"$READ" "$f" >"$f.txt" 2>&1 || fail "rte-read $f: $(head -c 300 "$f.txt")"
		grep -Eq "user_int +rte\.signal +$2\$" "$f.txt" || continue
		[ -z "$EV" ] || fail "two files with rte.signal $2"
		EV=$f
		in_order "$f.txt" "rte.signal" "ring_stop"
	done
	[ -n "$EV" ] || fail "no file with rte.signal $2 in $1"
}

test_sigpipe() {
	begin sigpipe
	# yes dies by SIGPIPE: same status (bash's PIPESTATUS), nothing left.
	pair p -- bash -c 'yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}'
	expect_status "exit 0"
	grep -qx 141 "$D/traced/p.out" || fail "yes: $(cat "$D/traced/p.out")"
	no_files "$D/traced" "sh -c 'yes | head -1'"
	rm -f "$D"/traced/*
	pair p2 OCAML_RUNTIME_EVENTS_PRESERVE=1 -- \
		bash -c 'yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}'
	signal_file "$D/traced" 13
	finish
}

# caught PID SIG: 1 if process PID has a handler for SIG (SigCgt).
caught() {
	_m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$_m" ] && [ $(((0x$_m >> ($2 - 1)) & 1)) = 1 ]
}

# kill_sleep DIR [VAR=value...]: start `sleep 60` (traced into DIR if
# VARs are given), wait until it runs (its ring file exists and the shim
# handles SIGTERM, or it is sleep), kill it with SIGTERM; sets KST to its
# status.
kill_sleep() {
	_d=$1
	shift
	if [ $# -gt 0 ]; then
		(export "$@" OCAML_RUNTIME_EVENTS_START=1 \
			OCAML_RUNTIME_EVENTS_DIR="$_d" LD_PRELOAD="$PRELOAD"
		exec sleep 60) &
	else
		(exec sleep 60) &
	fi
	_p=$!
	_i=0
	while [ $_i -lt 1000 ]; do
		if [ $# -gt 0 ]; then
			[ -e "$_d/$_p.events" ] && caught $_p 15 && break
		else
			case $(readlink "/proc/$_p/exe") in */sleep) break ;; esac
		fi
		sleep 0.02
		_i=$((_i + 1))
	done
	kill -TERM $_p
	wait $_p 2>/dev/null
	KST=$?
}

test_sigterm() {
	begin sigterm
	kill_sleep "$D/plain"
	want=$KST
	kill_sleep "$D/traced" RTE_UNUSED=1
	[ "$KST" = "$want" ] || fail "status $KST, without the shim $want"
	no_files "$D/traced" "kill -TERM"
	kill_sleep "$D/traced" OCAML_RUNTIME_EVENTS_PRESERVE=1
	[ "$KST" = "$want" ] || fail "status $KST with PRESERVE, want $want"
	signal_file "$D/traced" 15
	finish
}

test_termsig() {
	begin termsig
	# Dispositions as the program sees them, default and inherited SIG_IGN.
	pair a -- "$T/termsig" probe
	expect_status "exit 0"
	grep -q "SIGTERM sigaction DFL signal DFL" "$D/traced/a.out" ||
		fail "probe: $(cat "$D/traced/a.out")"
	pair b -- sh -c "trap '' HUP PIPE; exec '$T/termsig' probe"
	grep -q "SIGHUP sigaction IGN signal IGN" "$D/traced/b.out" ||
		fail "inherited SIG_IGN: $(cat "$D/traced/b.out")"
	pair c -- sh -c "trap '' HUP; exec '$T/termsig' ignored"
	expect_status "exit 0"
	# After exec (into an untraced image): handlers back to SIG_DFL,
	# SIG_IGN kept, exactly as without the shim.
	pair x -- sh -c "trap '' HUP; exec env -u LD_PRELOAD grep -E '^Sig(Cgt|Ign)' /proc/self/status"
	expect_status "exit 0"
	# SIGQUIT: the same status and core flag as without the shim.
	pair q -- "$T/termsig" quit
	expect_status "signal 3"
	# A blocked signal taken with sigwaitinfo; then death by SIGUSR2.
	pair d -- "$T/termsig" mask
	expect_status "signal 12"
	no_files "$D/traced" "SIGUSR2"
	# The program's own handler, then SIG_DFL again: death by SIGTERM.
	pair e OCAML_RUNTIME_EVENTS_PRESERVE=1 -- "$T/termsig" handler
	expect_status "signal 15"
	grep -q "^handled 15" "$D/traced/e.out" || fail "handler not called"
	signal_file "$D/traced" 15
	finish
}

test_sigfork() {
	begin sigfork
	# A thread loops on sigaction(SIGSEGV), 2000 fork children call
	# signal(SIGSEGV, SIG_DFL): none may hang (the program kills one
	# still alive after 5 s and stops).
	$TMO_LONG env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D/traced" \
		LD_PRELOAD="$PRELOAD" "$T/sigfork" 2000 >"$D/out" 2>&1 ||
		fail "status $?: $(head -c 300 "$D/out")"
	grep -qx "children 2000 hung 0" "$D/out" || fail "$(head -c 300 "$D/out")"
	finish
}

test_dlfork() {
	begin dlfork
	# A thread loops on dlopen/dlclose, 200 fork children store through
	# NULL: each must die by SIGSEGV, none hang in the crash handler.
	$TMO_LONG env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D/traced" \
		LD_PRELOAD="$PRELOAD" "$T/dlfork" "$T/libcrashplug.so" 200 \
		>"$D/out" 2>&1 || fail "status $?: $(head -c 300 "$D/out")"
	grep -qx "children 200 segv 200 hung 0" "$D/out" ||
		fail "$(head -c 300 "$D/out")"
	finish
}

test_handler_stack() {
	begin handler_stack
	# A SIGSEGV handler without SA_ONSTACK that needs 100 KB of stack.
	pair big -- "$T/handlers" bigstack
	expect_status "exit 3"
	# The program's own small alternate stack (above a guard page): 1 KiB
	# more than the smallest of these sizes that works without the shim on
	# this machine (the kernel's signal frame grows with the CPU's register
	# state; the shim's frames under the program's handler take a few
	# hundred bytes, ASan's exit path under ASan's own takes kilobytes).
	size=""
	for sz in 3072 4096 5120 6144 7168 8192 10240 12288 16384; do
		"$T/handlers" smallalt $sz >/dev/null 2>&1
		[ $? = 4 ] && { size=$((sz + 1024)); break; }
	done
	if [ -z "$size" ]; then
		fail "no small alternate stack works without the shim"
	else
		pair small -- "$T/handlers" smallalt $size
		expect_status "exit 4"
		pair over -- "$T/handlers" smallover $size
		expect_status "exit 4"
	fi
	finish
}

test_truncate() {
	begin truncate
	# The live ring file truncated: the writer goes on, one warning.
	(cd "$D/traced" && export OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/traced" LD_PRELOAD="$PRELOAD" &&
		exec "$T/truncring" "$D/ready" "$D/go" >"$D/out" 2>"$D/err") &
	p=$!
	i=0
	while [ ! -e "$D/ready" ] && [ $i -lt 1000 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	truncate -s 0 "$D/traced/$p.events" || fail "no ring file to truncate"
	touch "$D/go"
	wait $p
	st=$?
	[ $st = 0 ] || fail "status $st after the truncation: $(cat "$D/err")"
	grep -qx done "$D/out" || fail "did not finish"
	n=$(grep -c '^rte: ' "$D/err")
	[ "$n" = 1 ] || fail "want 1 warning, got $n: $(cat "$D/err")"
	no_files "$D/traced" "after the truncation"
	# A SIGBUS on a mapping of the program's own: as without the shim.
	pair o -- "$T/truncring" other
	expect_status "signal 7"
	finish
}

NEW_TESTS="sigpipe sigterm termsig sigfork dlfork handler_stack truncate"

if [ $# -gt 0 ]; then
	echo "crash tests (${RTE_ASAN_RT:+ASan, }$LIB): $*"
	for t in "$@"; do "test_$t"; done
	echo "crash tests: $NPASS passed, $NFAIL failed"
	[ "$NFAIL" = 0 ]
	exit
fi

echo "crash tests (${RTE_ASAN_RT:+ASan, }$LIB)"

# ---- fatal crashes: status, output, kept file, symbolised stack ----------

begin segv
pair segv -- "$T/segv"
expect_status "signal 11"
check_crash SIGSEGV level_three level_two level_one main
grep -q 'SEGV_MAPERR: address not mapped) at address 0x0' "$D/text" ||
	fail "fault address or si_code missing"
finish

begin abort
pair abrt -- "$T/abrt"
expect_status "signal 6"
check_crash SIGABRT abort abort_three abort_two abort_one main
finish

# libunwind is loaded lazily (never at start: it costs a short process
# more than tracing does): a crash before it is loaded is walked by
# frame pointers, with a scan of the stack for the frames of code built
# without them (libc's). Both ways, a crash inside libc shows every frame.
for how in "" thread; do
	begin "libc_segv${how:+_$how}"
	pair libcsegv -- "$T/libcsegv" $how
	expect_status "signal 11"
	want="not mapped"
	[ -z "$how" ] || want=mapped
	grep -qx "libunwind $want" "$D/traced/libcsegv.err" ||
		fail "want libunwind $want: $(cat "$D/traced/libcsegv.err")"
	# in_libc_three: the frame that only the scan finds (strlen has none).
	check_crash SIGSEGV in_libc_three in_libc_two in_libc_one main
	finish
done

begin stack_overflow
pair overflow -- "$T/overflow"
expect_status "signal 11"
# 64 frames are kept, all of them dive(); text folds the repeats.
check_crash SIGSEGV dive dive
grep -q '^    ... the same frame 62 more times' "$D/text" ||
	fail "the recursion is not folded: $(grep -c 'dive+' "$D/text")"
finish

begin thread
pair thread -- "$T/thread"
expect_status "signal 11"
check_crash SIGSEGV thread_three thread_two thread_one worker
grep -q '^  thread worker (tid [0-9]*), ring 1 ' "$D/text" ||
	fail "crashing thread/ring not shown: $(grep -A1 '^CRASH' "$D/text")"
finish

begin fpe
pair fpe -- "$T/fpe"
expect_status "signal 8"
check_crash SIGFPE divide_here main
grep -q 'FPE_INTDIV' "$D/text" || fail "FPE_INTDIV not shown"
finish

begin busy_rings
# Three threads write events while a fourth crashes: the report has the
# last events of every ring up to the crash.
pair b -- "$T/busy"
expect_status "signal 11"
check_crash SIGSEGV crash_while_busy main
awk '/^  last events before it/ { l = 1; next } l && /^    ring [0-9]+ \(/ { r = $2 }
     l && /busy\.tick/ { seen[r] = 1 }
     END { for (k in seen) n++; exit n < 3 }' "$D/text" ||
	fail "busy.tick missing from the last events of some ring"
finish

begin wrapped_ring
# The crashing ring (1024 words) wrapped long ago: the module events of
# the start are gone, the crash must write them again.
pair w OCAMLRUNPARAM=e=10 -- "$T/wrapped"
expect_status "signal 11"
check_crash SIGSEGV wrapped_crash main
finish

# ---- programs with their own handlers -------------------------------------

for mode in sigaction signal; do
	begin "recover_$mode"
	pair r -- "$T/recover" "$mode"
	expect_status "exit 0"
	set -- "$D"/traced/*.events
	[ -e "$1" ] && fail "file kept after a normal exit without PRESERVE"
	grep -q 'recovered from SIGFPE' "$D/traced/r.out" || fail "did not recover"
	# Again with PRESERVE: three SIGSEGV and one SIGFPE, each recorded and
	# passed on.
	rm -f "$D"/traced/*
	pair r2 OCAML_RUNTIME_EVENTS_PRESERVE=1 -- "$T/recover" "$mode"
	expect_status "exit 0"
	if events_file; then
		"$READ" "$EV" >"$D/text" 2>&1 || fail "rte-read failed"
		n=$(grep -c "rte.crash .*passed to the program's handler" "$D/text")
		[ "$n" = 4 ] || fail "want 4 handled rte.crash events, got $n"
		grep -q '^CRASH' "$D/text" && fail "a recovered signal shown as a crash"
		in_order "$D/text" "rte.crash" "fault_here+" "recover_loop+" "main+"
	fi
	finish
done

begin recover_late
# Handlers installed before tracing starts (rte_start() from the program).
NOSTART=OCAML_RUNTIME_EVENTS_PRESERVE=1
pair r -- "$T/recover" late
NOSTART=
expect_status "exit 0"
grep -q 'recovered from SIGFPE' "$D/traced/r.out" || fail "did not recover"
if events_file; then
	"$READ" "$EV" >"$D/text" 2>&1 || fail "rte-read failed"
	n=$(grep -c "rte.crash .*passed to the program's handler" "$D/text")
	[ "$n" = 4 ] || fail "want 4 handled rte.crash events, got $n"
fi
finish

begin recover_reraise
pair r -- "$T/recover" reraise
expect_status "signal 11"
if events_file; then
	"$READ" "$EV" >"$D/text" 2>&1
	grep -q "^SIGNAL in process .*SIGSEGV .*passed to the program's handler" \
		"$D/text" || fail "the handled SIGSEGV is not reported"
	grep -q '^CRASH in process .*: SIGSEGV .*fatal' "$D/text" ||
		fail "the re-raised SIGSEGV is not reported as the crash"
fi
finish

begin recover_exit
pair r -- "$T/recover" exit
expect_status "exit 3"
events_file && "$READ" "$EV" | grep -q "rte.crash .*SIGSEGV" ||
	fail "no rte.crash in the file kept after _exit from the handler"
finish

# ---- dlopen: modules recorded, a crash in a plugin symbolised ------------

begin dlopen_path
pair d -- "$T/dlcrash" path "$T"
expect_status "signal 11"
check_crash SIGSEGV plugin_crash_here plugin_entry main
events_file && "$READ" "$EV" | grep -q 'rte.module .*libcrashplug.so at ' ||
	fail "no rte.module for the plugin"
finish

begin dlopen_runpath
# A bare name found through the caller's RUNPATH: the wrapper must leave
# the program as dlopen's caller (otherwise "dlopen failed").
pair d -- "$T/dlcrash" bare
if [ -n "${RTE_ASAN_RT:-}" ]; then
	# ASan's own dlopen interceptor makes libasan the caller, so the
	# name is not found even without the shim; the runs must still agree.
	echo "  (dlopen_runpath under ASan: only compared, ASan's dlopen" \
		"loses the RUNPATH itself)"
else
	expect_status "signal 11"
	check_crash SIGSEGV plugin_crash_here plugin_entry main
fi
finish

begin dlclose
pair d -- "$T/dlcrash" unload "$T"
expect_status "signal 11"
check_crash SIGSEGV after_unload main
events_file && "$READ" "$EV" >"$D/text" 2>&1
in_order "$D/text" "libcrashplug.so at" "rte.module.unload" "rte.crash"
finish

# ---- RTE_BACKTRACE ---------------------------------------------------------

begin backtrace_all
pair f RTE_BACKTRACE=all -- "$T/forker"
expect_status "signal 11"
check_crash SIGSEGV victim worker
if events_file; then
	grep -q 'rte.backtrace .*fork of pid' "$D/text" || fail "no fork backtrace"
	in_order "$D/text" "fork of pid" "fork_site+" "main+"
	in_order "$D/text" "thread made by ring 0" "spawn_site+" "main+"
	awk '/^CRASH/ { c = 1 } c' "$D/text" >"$D/report"
	in_order "$D/report" "thread made by ring 0" "spawn_site+" "main+"
fi
finish

begin backtrace_off
pair s RTE_BACKTRACE=off -- "$T/segv"
expect_status "signal 11"
if events_file; then
	"$READ" "$EV" | grep -q 'rte\.crash\|rte\.module' &&
		fail "RTE_BACKTRACE=off still records"
fi
finish

# ---- rte-read on malformed payloads ----------------------------------------

begin malformed
mkfifo "$D/fifo" || fail "mkfifo"
"$T/badcrash" "$D/bad.events" "$D/fifo" || fail "badcrash failed"
for fmt in text summary summary-json chrome; do
	# A module path naming the FIFO must not block the reader.
	timeout 20 "$READ" -f "$fmt" "$D/bad.events" >"$D/out.$fmt" 2>"$D/err" ||
		fail "rte-read -f $fmt: status $? ($(head -c 300 "$D/err"))"
done
n=$(grep -c '(malformed rte\.' "$D/out.text")
[ "$n" = 12 ] || fail "want 12 malformed payloads reported, got $n"
[ "$(grep -c '^CRASH in process 4343: SIGSEGV' "$D/out.text")" = 1 ] ||
	fail "the valid crash is not reported once"
python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' \
	"$D/out.summary-json" "$D/out.chrome" 2>"$D/err" ||
	fail "invalid JSON: $(tail -c 300 "$D/err")"
finish

# ---- under ASan: ASan's own SIGSEGV handler, chained behind ours ----------

if [ -n "${RTE_ASAN_RT:-}" ]; then
	begin asan_handler
	saved=$ASAN_OPTIONS
	export ASAN_OPTIONS=detect_leaks=0
	pair s -- "$T/segv"
	ASAN_OPTIONS=$saved
	expect_status "exit 1"
	if events_file; then
		"$READ" "$EV" | grep -q "rte.crash .*SIGSEGV .*passed to the program's handler" ||
			fail "the SIGSEGV passed to ASan is not recorded"
	fi
	finish
fi

# ---- never hurting the host: signals ----------------------------------------

for t in $NEW_TESTS; do "test_$t"; done

echo "crash tests: $NPASS passed, $NFAIL failed"
[ "$NFAIL" = 0 ]
