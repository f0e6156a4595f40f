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
TESTS=$(cd "$(dirname "$0")" && pwd)
SPANS=$B/tests/run/spans

NAME=drain
. "$(dirname "$0")/lib.sh"

# no_live DIR: the drain removed every ring file and its own directory,
# and left none of its temporary files (.INO.capture, .NAME.pack) in DIR.
no_live() {
	[ ! -e "$1/.rte-live" ] || fail "$1/.rte-live left behind: $(ls -a "$1/.rte-live" | head -5)"
	! ls -A "$1" | grep -q '^\.' || fail "$1: left behind: $(ls -A "$1" | grep '^\.' | head -5)"
}

# ---- a capture reads as the ring file it came from ---------------------------

# serve_finished PORT OUT: scrapes the exporter at PORT (one file, whose
# writer is gone) every 50 ms until it has finished the file (at most
# ~20 s), then its rte_* series but the exporter's own into OUT. Fails
# (the reason in OUT.why) if it does not finish, or if two scrapes in a
# row saw the file read to its end (rte_exporter_read_events_total at its
# final value) yet still followed. A file whose writer was found gone is
# read as finished from then on (reader/metrics_files.c): every ring, and
# finished in the poll that reads its end. It used to be so only in the
# poll that found the writer gone, which for a file of more than one read
# budget left the other rings to the next ring probe (250 ms: its first
# ring alone was served until then) and the finish to the next liveness
# check (1 s): two scrapes agreed before the end.
serve_finished() {
	: >"$2.log"
	i=0
	while [ $i -lt 400 ]; do
		curl -s --max-time 20 "http://127.0.0.1:$1/metrics" >"$2.raw"
		total=$(sed -n 's/^rte_exporter_files_total //p' "$2.raw")
		followed=$(sed -n 's/^rte_exporter_files_followed //p' "$2.raw")
		echo "$followed $(sed -n 's/^rte_exporter_read_events_total //p' "$2.raw")" >>"$2.log"
		[ "$total" = 1 ] && [ "$followed" = 0 ] && break
		sleep 0.05
		i=$((i + 1))
	done
	grep '^rte_' "$2.raw" | grep -v '^rte_exporter\|^rte_scrape' >"$2"
	if [ "$total" != 1 ] || [ "$followed" != 0 ]; then
		echo "the exporter did not finish the file (files_total '$total', followed '$followed')" >"$2.why"
		return 1
	fi
	final=$(tail -1 "$2.log" | cut -d' ' -f2)
	n=$(uniq -c "$2.log" | awk -v e="$final" '$2 == 1 && $3 == e && $1 > n { n = $1 } END { print n + 0 }')
	if [ "$n" -ge 2 ]; then
		echo "read to its end ($final events) yet followed for $n scrapes in a row, 50 ms apart" >"$2.why"
		return 1
	fi
}

# same_reads SRC CAP: every format of rte-read, its diff and --serve read
# the capture CAP as the ring file SRC (its directory name left out).
same_formats() {
	for f in jsonl text chrome summary summary-json; do
		"$READ" -f "$f" "$1" 2>&1 | sed "s|$(dirname "$1")/|D/|g" >"$W/src.$f" || fail "rte-read -f $f $1"
		"$READ" -f "$f" "$2" 2>&1 | sed "s|$(dirname "$2")/|D/|g" >"$W/cap.$f" || fail "rte-read -f $f $2"
		cmp -s "$W/src.$f" "$W/cap.$f" ||
			fail "-f $f differs: $(diff "$W/src.$f" "$W/cap.$f" | head -5)"
	done
}

# "paged" if every extent of packed capture $1 (doc/FORMAT.md 16.1) but
# one ending at the file's end starts and ends on a page, as SEEK_DATA's
# do (or the whole file, where the file system has no holes): packed from
# the plain capture; "bytes" if not: packed from memory, the ranges
# written.
extents_of() {
	python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
total, n = struct.unpack("<QQ", b[8:24])
recs = [struct.unpack("<QQQ", b[32 + 24 * i:56 + 24 * i]) for i in range(n)]
paged = all(o % 4096 == 0 and ((o + l) % 4096 == 0 or o + l == total) for o, l, z in recs)
print("paged" if paged else "bytes")' "$1"
}

same_reads() {
	same_formats "$1" "$2"
	[ "$(wc -l <"$W/src.jsonl")" -gt 240000 ] || fail "the ring file has $(wc -l <"$W/src.jsonl") events"
	"$READ" diff "$1" "$2" >"$W/diff.txt" || fail "rte-read diff ring capture"
	grep -q 'spans.s .* count .* 120000 .* 120000 .*+0.0%' "$W/diff.txt" ||
		fail "diff: $(head -5 "$W/diff.txt")"
	# --serve: the metrics of each, alone in a directory, once the
	# exporter has finished the file (rte_exporter_files_followed 0 after
	# rte_exporter_files_total 1: read to its end, its writer gone).
	for x in src cap; do
		rm -rf "$W/serve.$x"
		mkdir "$W/serve.$x"
		[ $x = src ] && cp --sparse=always "$1" "$W/serve.$x/" || cp "$2" "$W/serve.$x/"
		"$READ" --serve 127.0.0.1:0 "$W/serve.$x" 2>"$W/serve.$x.err" &
		sp=$!
		port= i=0
		while [ -z "$port" ] && [ $i -lt 200 ]; do
			sleep 0.05
			port=$(sed -n 's|^rte-read: serving http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$W/serve.$x.err")
			i=$((i + 1))
		done
		serve_finished "$port" "$W/metrics.$x" || fail "$x: $(cat "$W/metrics.$x.why")"
		kill $sp 2>/dev/null
		wait $sp 2>/dev/null
	done
	[ -s "$W/metrics.src" ] && cmp -s "$W/metrics.src" "$W/metrics.cap" ||
		fail "--serve differs: $(diff "$W/metrics.src" "$W/metrics.cap" | head -5)"
}

# spans_linked DIR [OPTIONS]: rte-run OPTIONS -d DIR of the spans program
# (its arguments: $SPANS_ARGS, default 60000 pairs, 2 threads, 100 k
# events/s each: 1.2 s, long enough for the loop below to see its file
# under a sanitizer, short enough for its 2^18-word rings not to wrap),
# whose ring file is hard-linked while it runs (the drain removes its name
# in .rte-live, the link keeps the file) as $W/src/PID.events; prints PID.
# Linked once the job runs the spans program (not the forked shell before
# its exec, whose file the exec moves aside) and its file is there; the
# loop runs builtins only (test -ef, kill), so that it keeps up on a
# loaded machine, and the program does not exit before it was seen
# (SPANS_HOLD: it waits for $W/go).
spans_linked() {
	d=$1
	shift
	rm -rf "$W/src" "$W/go"
	mkdir "$W/src"
	SPANS_HOLD="$W/go" timeout 120 "$RUN" -q "$@" -d "$d" -- sh -c '"$1" $3 & p=$!
		until [ /proc/$p/exe -ef "$1" ] &&
			[ -e "$OCAML_RUNTIME_EVENTS_DIR/$p.events" ]; do
			kill -0 $p 2>/dev/null || exit 9; sleep 0.01; done
		ln "$OCAML_RUNTIME_EVENTS_DIR/$p.events" "$2/src/$p.events"
		echo $p >"$2/pid"; : >"$2/go"; wait $p' sh "$SPANS" "$W" "${SPANS_ARGS:-60000 2 100000}" ||
		fail "rte-run: exit $?"
	cat "$W/pid"
}

# ---- a capture reads as the ring file it came from ---------------------------

test_jsonl() {
	begin "a capture (packed, and --no-compress) and the ring file it came from read the same"
	p=$(spans_linked "$W/j")
	[ -f "$W/j/$p.events" ] || { fail "no capture $p.events in $W/j: $(ls -a "$W/j")"; return; }
	no_live "$W/j"
	# Packed (zstd, doc/FORMAT.md 16.1): it pays for a span flood.
	[ "$(head -c 8 "$W/j/$p.events")" = RTEPACK1 ] || fail "the capture is not packed"
	same_reads "$W/src/$p.events" "$W/j/$p.events"
	packed=$(du -k "$W/j/$p.events" | cut -f1)
	# its spool reached its file (1 MiB): written plain, then packed
	[ "$(extents_of "$W/j/$p.events")" = paged ] || fail "a big capture not packed from its plain file"
	# A short writer's spool never leaves memory: its capture is packed
	# from there, never written plain, and reads as its ring file.
	p=$(SPANS_ARGS="2000 2 100000" spans_linked "$W/js")
	[ "$(head -c 8 "$W/js/$p.events")" = RTEPACK1 ] || fail "the small capture is not packed"
	[ "$(extents_of "$W/js/$p.events")" = bytes ] || fail "a small capture packed from a plain file"
	no_live "$W/js"
	same_formats "$W/src/$p.events" "$W/js/$p.events"
	[ "$(grep -c '"event":"spans.s"' "$W/src.jsonl")" -eq 8000 ] ||
		fail "the small ring file has $(grep -c '"event":"spans.s"' "$W/src.jsonl") span events"
	# Every format takes a directory of them.
	for f in text chrome summary summary-json; do
		"$READ" -f "$f" "$W/j" >/dev/null || fail "rte-read -f $f of the captures"
	done
	p=$(spans_linked "$W/jp" --no-compress)
	[ "$(head -c 4 "$W/jp/$p.events" | od -An -tu4 | tr -d ' ')" = 1 ] ||
		fail "--no-compress: not a ring file of version 1"
	same_reads "$W/src/$p.events" "$W/jp/$p.events"
	# Its rings hold what was drained, no more: sparse on disk, and packed
	# it takes less.
	used=$(du -k "$W/jp/$p.events" | cut -f1)
	[ "$used" -lt 8192 ] || fail "the capture takes $used KiB on disk"
	[ "$packed" -lt "$used" ] || fail "packed $packed KiB, not less than plain $used KiB"
}

test_packed_hostile() {
	begin "a damaged packed capture: a clear error, no crash"
	p=$(spans_linked "$W/h")
	c=$W/h/$p.events
	sz=$(stat -c %s "$c")
	for cut in 8 40 $((sz / 2)) $((sz - 1)); do
		head -c $cut "$c" >"$W/h/cut.events"
		"$READ" -f jsonl "$W/h/cut.events" >/dev/null 2>"$W/h.err"; st=$?
		[ $st -ne 0 ] && [ $st -lt 128 ] || fail "cut at $cut: exit $st"
		grep -q 'packed capture' "$W/h.err" || fail "cut at $cut: $(cat "$W/h.err")"
	done
	# A byte of a frame changed: zstd's checksum or its decoder says so.
	cp "$c" "$W/h/flip.events"
	printf 'X' | dd of="$W/h/flip.events" bs=1 seek=$((sz - 100)) conv=notrunc 2>/dev/null
	"$READ" -f jsonl "$W/h/flip.events" >/dev/null 2>"$W/h.err"; st=$?
	[ $st -ne 0 ] && [ $st -lt 128 ] || fail "a changed byte: exit $st"
	# total_size (word 1) made huge: a corrupt file (3) in every format,
	# not an mmap out of memory (7); the last is within what a capture
	# can be, but not its ring file's size.
	for tot in 9223372036854775807 60000000000000000 1402145149304832 1099511627776 \
		140737489731648; do
		cp "$c" "$W/h/tot.events"
		python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1])))' \
			"$tot" | dd of="$W/h/tot.events" bs=1 seek=8 conv=notrunc 2>/dev/null
		for f in jsonl text summary summary-json chrome; do
			"$READ" -f $f "$W/h/tot.events" >/dev/null 2>"$W/h.err"; st=$?
			[ $st -eq 3 ] && grep -q 'tot.events: packed capture' "$W/h.err" ||
				fail "total_size $tot, -f $f: exit $st: $(cat "$W/h.err")"
		done
	done
	rm -f "$W/h/cut.events" "$W/h/flip.events" "$W/h/tot.events"
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

test_lost_exact() {
	begin "the lost words are exact: the capture's, the summary's and the message agree with the ring file"
	# Rings of 16 words, the ring file hard-linked: its tails are the words
	# written; read by tests/run/words.py (its own parser), the capture's
	# head (lost) plus the words of its messages is each ring's tail, less
	# the padding the source wrote where its 16 words wrapped (not kept);
	# in the second thread's ring, span events of 2 words only, there is
	# none: exactly the tail.
	p=$(OCAMLRUNPARAM=e=4 SPANS_ARGS="200000 2 400000" spans_linked "$W/x" --no-compress 2>"$W/x.err")
	said=$(sed -n 's/^rte-run: the drain missed \([0-9]*\) words.*/\1/p' "$W/x.err")
	[ -n "$said" ] || { fail "no drain loss message: $(cat "$W/x.err")"; return; }
	python3 "$TESTS/words.py" "$W/src/$p.events" >"$W/x.src" || fail "words.py of the ring file"
	python3 "$TESTS/words.py" "$W/x/$p.events" >"$W/x.cap" || fail "words.py of the capture"
	"$READ" -f summary-json -o "$W/x.json" "$W/x" || fail "rte-read of the captures"
	# Only the spans process loses (its shell's words are few).
	json_check "$W/x.json" "d['lost_words'] == $said" || fail "summary-json's lost words are not the $said said"
	heads=0
	for f in "$W"/x/*.events; do
		h=$(python3 "$TESTS/words.py" "$f" | awk '{ s += $2 } END { print s + 0 }')
		heads=$((heads + h))
	done
	[ "$heads" = "$said" ] || fail "the captures' heads sum to $heads, not the $said said"
	python3 - "$W/x.src" "$W/x.cap" <<'PYEOF' || fail "lost words not exact: $(cat "$W/x.src" "$W/x.cap")"
import sys
src = {int(l.split()[0]): [int(x) for x in l.split()[1:]] for l in open(sys.argv[1])}
cap = {int(l.split()[0]): [int(x) for x in l.split()[1:]] for l in open(sys.argv[2])}
assert set(cap) <= set(src), "a ring of the capture not in the source"
# The second thread's ring: not ring 0, where the main thread also
# wrote its registrations (messages of other sizes: padding).
busiest = max((r for r in src if r != 0), key=lambda r: src[r][1])
for r, (head, tail, kept, pad) in cap.items():
    missing = src[r][1] - head - kept
    assert 0 <= missing, "ring %d: %d words kept or lost more than written" % (r, -missing)
    assert missing <= src[r][1] // 16 * 15, "ring %d: %d words unaccounted" % (r, missing)
assert busiest in cap and src[busiest][1] == cap[busiest][0] + cap[busiest][2], \
    "ring %d: lost %d + kept %d != written %d" % (busiest, cap[busiest][0], cap[busiest][2], src[busiest][1])
assert src[busiest][1] > 390000 and cap[busiest][0] > 0
PYEOF
}

# fail_modes CASE RUN-ARGS...: rte-run in every output mode, with
# --fail-on-lost, of the spans program (16-word rings: words are lost)
# run by sh -c "CASE": prints the statuses, one a line.
fail_modes() {
	c=$1
	shift
	for m in "" -q "-o $W/fm.out" "-s -o $W/fm.out" "-f jsonl -o -" "-f summary-json -q -o $W/fm.out" \
		"-q --no-compress" "-q -k" "-q --no-drain"; do
		rm -rf "$W/fm"
		# shellcheck disable=SC2086
		OCAMLRUNPARAM=e=4 timeout 120 "$RUN" $m --fail-on-lost "$@" -d "$W/fm" -- \
			sh -c "$c" sh "$SPANS" >/dev/null 2>"$W/fm.err"
		echo "$? ${m:-(default)}"
	done
}

test_fail_modes() {
	begin "--fail-on-lost fails in every mode; the command's status and signal always win"
	fail_modes '"$1" 50000 2' >"$W/fm.st"
	while read -r st m; do
		[ "$st" = 121 ] || fail "losses, $m: exit $st, not 121"
	done <"$W/fm.st"
	# Nothing lost (big rings, few events): 0 in every mode.
	OCAMLRUNPARAM=e=20 "$RUN" -q --fail-on-lost -- "$SPANS" 1000 2 || fail "no loss: exit $?"
	fail_modes '"$1" 50000 2; exit 3' >"$W/fm.st"
	while read -r st m; do
		[ "$st" = 3 ] || fail "losses and exit 3, $m: exit $st, not 3"
	done <"$W/fm.st"
	# Killed by a signal: 128+N, whatever was lost.
	fail_modes '"$1" 50000 2; kill -TERM $$' >"$W/fm.st"
	while read -r st m; do
		[ "$st" = 143 ] || fail "losses and SIGTERM, $m: exit $st, not 143"
	done <"$W/fm.st"
	fail_modes '"$1" 1000000 2 1000000 & p=$!; sleep 0.2; kill -KILL $p; wait $p' >"$W/fm.st"
	while read -r st m; do
		[ "$st" = 137 ] || fail "the spans process killed, its status 137 passed on, $m: exit $st"
	done <"$W/fm.st"
}

test_priority() {
	begin "the drain thread runs SCHED_FIFO where allowed (not with RTE_RUN_NO_RT), the command never"
	# The command writes its pid and its parent's (rte-run-exec) and
	# sleeps; ps, run here untraced, prints the scheduling classes of
	# rte-run-exec's threads and the command's.
	for v in rt no; do
		rm -f "$W/prio.pids"
		if [ $v = rt ]; then
			"$RUN" -q -- sh -c 'echo $$ $PPID >"$1.tmp"; mv "$1.tmp" "$1"; sleep 2' sh "$W/prio.pids" &
		else
			RTE_RUN_NO_RT=1 "$RUN" -q -- sh -c 'echo $$ $PPID >"$1.tmp"; mv "$1.tmp" "$1"; sleep 2' sh "$W/prio.pids" &
		fi
		job=$!
		wait_for "$W/prio.pids" || fail "$v: the command did not start"
		sleep 0.3 # the drain thread is started once the command is forked
		read -r cmd exe <"$W/prio.pids"
		{
			ps -L -o cls= -p "$exe" | tr -d ' ' | sort | tr '\n' ' '
			echo
			ps -o cls= -p "$cmd" | tr -d ' '
		} >"$W/prio.$v"
		wait $job || fail "$v: rte-run exit $?"
	done
	# One thread FIFO, every other one TS (the main thread; under a
	# sanitizer its runtime's own thread too).
	if [ "$(id -u)" = 0 ]; then
		sed -n 1p "$W/prio.rt" | grep -Eq '^FF (TS )+$' ||
			fail "drain thread not SCHED_FIFO: $(cat "$W/prio.rt")"
	fi
	sed -n 1p "$W/prio.no" | grep -Eq '^(TS )+$' && [ "$(sed -n 1p "$W/prio.no" | wc -w)" -ge 2 ] ||
		fail "RTE_RUN_NO_RT: $(cat "$W/prio.no")"
	[ "$(sed -n 2p "$W/prio.rt")" = TS ] || fail "the command runs $(sed -n 2p "$W/prio.rt")"
}

# ---- faults ------------------------------------------------------------------------

test_sigkill() {
	begin "a writer SIGKILLed mid-drain: its capture holds what it wrote"
	# 200 k events/s a thread: a ring holds over a second of them, so that
	# a drain starved by a loaded machine still loses nothing.
	"$RUN" -q -d "$W/k" -- sh -c '"$1" 100000000 2 200000 & p=$!; echo $p >"$2/kpid"
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

test_removed() {
	begin "a ring file removed while it is drained: its writer's events are all captured"
	# The drain holds the file open and mapped: removing its name loses
	# nothing (the writer writes on into the same pages).
	"$RUN" -q --fail-on-lost -d "$W/r" -- sh -c '"$1" 300000 2 1000000 & p=$!; echo $p >"$2/rpid"
		until [ /proc/$p/exe -ef "$1" ] &&
			[ -e "$OCAML_RUNTIME_EVENTS_DIR/$p.events" ]; do
			kill -0 $p 2>/dev/null || exit 9; sleep 0.01; done
		sleep 0.1; rm "$OCAML_RUNTIME_EVENTS_DIR/$p.events"; wait $p; exit 4' sh "$SPANS" "$W" 2>"$W/r.err"; st=$?
	[ $st -eq 4 ] || fail "exit $st, not the command's 4: $(cat "$W/r.err")"
	p=$(cat "$W/rpid")
	[ -f "$W/r/$p.events" ] || { fail "no capture of $p: $(ls -a "$W/r")"; return; }
	no_live "$W/r"
	"$READ" -f summary-json -o "$W/r.json" "$W/r/$p.events" || fail "rte-read of its capture"
	json_check "$W/r.json" 'spans("spans.s") == 600000 and d["lost_words"] == 0' || fail "spans of the removed file"
}

test_many() {
	begin "2000 short processes: every one captured, no ring file left, no zombie"
	timeout 300 "$RUN" -q -d "$W/m" -- sh -c 'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i + 1)); done' \
		2>"$W/m.err"; st=$?
	[ $st -eq 0 ] || fail "exit $st: $(head -3 "$W/m.err")"
	# One file per true (its shell child writes nothing before the exec)
	# and the shell's; a pid used twice gives PID.dupN.events.
	n=$(ls "$W/m" | grep -c '\.events$')
	[ "$n" -eq 2001 ] || fail "$n captures, not 2001 (2000 true and the shell)"
	no_live "$W/m"
	"$READ" -f summary-json -o "$W/m.json" "$W/m" || fail "rte-read of the captures"
	json_check "$W/m.json" "d['lost_words'] == 0 and sum(len(p['files']) for p in d['processes']) == $n and len(d['tree']) == $n" ||
		fail "processes read back"
	[ -z "$(ps -o stat= --ppid $$ 2>/dev/null | grep Z)" ] || fail "a zombie is left"
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
	test_packed_hostile
	test_flood
	test_lost_counted
	test_lost_exact
	test_fail_modes
	test_priority
	test_sigkill
	test_truncated
	test_removed
	test_many
	test_full_disk
fi

report
