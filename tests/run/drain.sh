#!/bin/sh
# tests/run/drain.sh - rte-run's live drain (tools/rte-run/drain.c): real
# programs under the real librte.so, their captures read back with the
# real rte-read.
#
# Environment (set by mk/tests-run.mk): RTE_BUILD (absolute build
# folder). Arguments: the tests to run (test_jsonl ...); none: all.
set -u

B=${RTE_BUILD:?set RTE_BUILD}
RUN=${RTE_RUN_UNDER_TEST:-$B/rte-run} # another rte-run: to see these tests fail without the drain
READ=$B/rte-read
SPANS=$B/tests/run/spans

NAME=drain
. "$(dirname "$0")/lib.sh"

# no_live DIR: the drain removed every ring file and its own directory.
no_live() {
	[ ! -e "$1/.rte-live" ] || fail "$1/.rte-live left behind: $(ls -a "$1/.rte-live" | head -5)"
}

# ---- a capture reads as the ring file it came from ---------------------------

test_jsonl() {
	begin "a capture and the ring file it came from give the same JSONL"
	# The spans process's ring file is hard-linked while it runs: the
	# drain removes its name in .rte-live, the link keeps the file.
	# Linked once the job runs the spans program (not the forked shell
	# before its exec, whose file the exec moves aside) and its file is
	# there.
	# The program waits for $2/go before it exits (SPANS_HOLD), so the
	# loop cannot miss it on a loaded machine; the loop also gives up if
	# the program is gone.
	SPANS_HOLD="$W/go" "$RUN" -q -d "$W/j" -- sh -c '"$1" 20000 2 100000 & p=$!
		until case "$(tr "\\0" " " </proc/$p/cmdline 2>/dev/null)" in "$1 "*) :;; *) false;; esac &&
			[ -e "$OCAML_RUNTIME_EVENTS_DIR/$p.events" ]; do
			kill -0 $p 2>/dev/null || { echo "spans gone before its file was seen" >&2; exit 9; }
			sleep 0.01
		done
		ln "$OCAML_RUNTIME_EVENTS_DIR/$p.events" "$2/ring.events"
		echo $p >"$2/pid"; : >"$2/go"; wait $p' sh "$SPANS" "$W" || fail "rte-run: exit $?"
	p=$(cat "$W/pid")
	[ -f "$W/j/$p.events" ] || { fail "no capture $p.events in $W/j: $(ls -a "$W/j")"; return; }
	no_live "$W/j"
	"$READ" -f jsonl "$W/ring.events" >"$W/ring.jsonl" || fail "rte-read of the ring file"
	"$READ" -f jsonl "$W/j/$p.events" >"$W/cap.jsonl" || fail "rte-read of the capture"
	[ "$(wc -l <"$W/ring.jsonl")" -gt 80000 ] || fail "the ring file has $(wc -l <"$W/ring.jsonl") events"
	cmp -s "$W/ring.jsonl" "$W/cap.jsonl" ||
		fail "JSONL differs: $(diff "$W/ring.jsonl" "$W/cap.jsonl" | head -5)"
	# Every format takes it (the capture is a ring file).
	for f in text chrome summary summary-json; do
		"$READ" -f "$f" "$W/j" >/dev/null || fail "rte-read -f $f of the captures"
	done
	"$READ" diff "$W/ring.events" "$W/j/$p.events" >/dev/null || fail "rte-read diff ring capture"
	# Its rings hold what was drained, no more: sparse on disk.
	used=$(du -k "$W/j/$p.events" | cut -f1)
	[ "$used" -lt 4096 ] || fail "the capture takes $used KiB on disk"
}

# ---- nothing lost at speed -------------------------------------------------------

test_flood() {
	begin "2 threads, 1 M span pairs each, at 500 k events/s each: every span kept"
	# Rings of 2^20 words, a quarter of what each thread writes: read
	# after the fact they lose most of it (--no-drain: 121); drained,
	# nothing. The rate is bounded (each ring then holds about a second of
	# events) so that a drain thread starved by a loaded machine or a
	# sanitizer build still keeps up: the highest lossless rate is a
	# bench figure (bench/drain.py), not a test's.
	OCAMLRUNPARAM=e=20 "$RUN" --no-drain -q --fail-on-lost -d "$W/old" -- \
		"$SPANS" 1000000 2 2>"$W/old.err"; st=$?
	[ $st -eq 121 ] || fail "--no-drain: exit $st, not 121 (the rings should wrap)"
	OCAMLRUNPARAM=e=20 "$RUN" -q --fail-on-lost -d "$W/f" -f summary-json \
		-o "$W/f.json" -- "$SPANS" 1000000 2 500000 2>"$W/f.err"; st=$?
	[ $st -eq 0 ] || fail "drained: exit $st, not 0: $(cat "$W/f.err")"
	json_check "$W/f.json" 'spans("spans.s") == 2000000 and d["lost_words"] == 0' ||
		fail "not every span kept"
	no_live "$W/f"
}

test_lost_counted() {
	begin "a writer faster than the drain: the loss is counted and fails -q --fail-on-lost"
	# Rings of 16 words: nothing can keep up, words are lost, exactly
	# those the capture's rings report.
	OCAMLRUNPARAM=e=4 "$RUN" -q --fail-on-lost -d "$W/l" -- "$SPANS" 200000 1 \
		2>"$W/l.err"; st=$?
	[ $st -eq 121 ] || fail "exit $st, not 121"
	said=$(sed -n 's/^rte-run: the drain missed \([0-9]*\) words.*/\1/p' "$W/l.err")
	[ -n "$said" ] || { fail "no drain loss message: $(cat "$W/l.err")"; return; }
	"$READ" -f summary-json -o "$W/l.json" "$W/l" || fail "rte-read of the capture"
	json_check "$W/l.json" "d['lost_words'] == $said and 2 * d['events'] + $said >= 800000" ||
		fail "lost words in the capture are not the $said the drain said"
	# The command's own status wins over the loss, and a signal too.
	OCAMLRUNPARAM=e=4 "$RUN" -q --fail-on-lost -- sh -c '"$1" 20000; exit 3' sh "$SPANS" \
		2>/dev/null; st=$?
	[ $st -eq 3 ] || fail "a failing command with losses: exit $st, not its 3"
}

# ---- faults ------------------------------------------------------------------------

test_sigkill() {
	begin "a writer SIGKILLed mid-drain: its capture holds what it wrote"
	"$RUN" -q -d "$W/k" -- sh -c '"$1" 100000000 2 1000000 & p=$!; echo $p >"$2/kpid"
		sleep 0.5; kill -KILL $p; wait $p; exit 0' sh "$SPANS" "$W" 2>"$W/k.err"; st=$?
	[ $st -eq 0 ] || fail "exit $st: $(cat "$W/k.err")"
	p=$(cat "$W/kpid")
	[ -f "$W/k/$p.events" ] || { fail "no capture of the killed $p: $(ls -a "$W/k")"; return; }
	no_live "$W/k"
	"$READ" -f summary-json -o "$W/k.json" "$W/k/$p.events" || fail "rte-read of its capture"
	json_check "$W/k.json" 'spans("spans.s") > 1000 and d["lost_words"] == 0' || fail "spans of the killed writer"
	grep -q 'ring_stop' "$W/k.err" && fail "unexpected: $(cat "$W/k.err")"
	[ -z "$(ps -o pid= --ppid $$ 2>/dev/null | grep -v "^ *$$\$" | xargs -r ps -o stat= -p 2>/dev/null | grep Z)" ] ||
		fail "a zombie is left"
}

test_truncated() {
	begin "a ring file truncated while it is drained: rte-run goes on, the capture is readable"
	"$RUN" -q -d "$W/t" -- sh -c '"$1" 100000000 1 1000000 & p=$!; echo $p >"$2/tpid"
		sleep 0.5; truncate -s 4096 "$OCAML_RUNTIME_EVENTS_DIR/$p.events"
		sleep 0.3; kill -KILL $p 2>/dev/null; wait $p; exit 5' sh "$SPANS" "$W" 2>"$W/t.err"; st=$?
	[ $st -eq 5 ] || fail "exit $st, not the command's 5: $(cat "$W/t.err")"
	p=$(cat "$W/tpid")
	grep -q "truncated while it was read" "$W/t.err" || fail "no message: $(cat "$W/t.err")"
	[ -f "$W/t/$p.events" ] || { fail "no capture of $p: $(ls -a "$W/t")"; return; }
	no_live "$W/t"
	"$READ" -f summary-json -o "$W/t.json" "$W/t/$p.events" || fail "rte-read of its capture"
	# The name slots went with the truncation: the spans are unnamed.
	json_check "$W/t.json" 'sum(s["count"] for p in d["processes"] for s in p["spans"]) > 1000' ||
		fail "spans before the truncation"
}

test_many() {
	begin "a thousand short processes: every one captured, no ring file left"
	timeout 300 "$RUN" -q -d "$W/m" -- sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i + 1)); done' \
		2>"$W/m.err"; st=$?
	[ $st -eq 0 ] || fail "exit $st: $(head -3 "$W/m.err")"
	# One file per true (its shell child writes nothing before the exec)
	# and the shell's; a pid used twice gives PID.dupN.events.
	n=$(ls "$W/m" | grep -c '\.events$')
	[ "$n" -eq 1001 ] || fail "$n captures, not 1001 (1000 true and the shell)"
	no_live "$W/m"
	"$READ" -f summary-json -o "$W/m.json" "$W/m" || fail "rte-read of the captures"
	json_check "$W/m.json" "d['lost_words'] == 0 and sum(len(p['files']) for p in d['processes']) == $n" || fail "processes read back"
}

test_full_disk() {
	begin "a directory that fills up: counted as lost, the captures readable"
	small=$W/small
	mkdir -p "$small"
	if ! mount -t tmpfs -o size=8m tmpfs "$small" 2>/dev/null; then
		echo "   skipped: cannot mount a tmpfs (not root?)"
		small=
		return
	fi
	"$RUN" -q --fail-on-lost -d "$small/t" -- "$SPANS" 3000000 1 100000000 \
		2>"$W/full.err"; st=$?
	[ $st -eq 121 ] || fail "a full disk: exit $st, not 121: $(cat "$W/full.err")"
	grep -q 'No space left on device' "$W/full.err" || fail "no ENOSPC message: $(cat "$W/full.err")"
	"$READ" -f summary-json -o "$W/full.json" "$small/t" || fail "rte-read of what was kept"
	said=$(sed -n 's/^rte-run: the drain missed \([0-9]*\) words.*/\1/p' "$W/full.err")
	json_check "$W/full.json" "d['lost_words'] == ${said:-0} > 0 and spans('spans.s') > 1000" ||
		fail "the loss of the full disk is not the ${said:-?} words said: $(cat "$W/full.err")"
	no_live "$small/t"
	umount "$small"
	small=
}

if [ $# -gt 0 ]; then
	for t in "$@"; do "$t"; done
else
	test_jsonl
	test_flood
	test_lost_counted
	test_sigkill
	test_truncated
	test_many
	test_full_disk
fi

report
