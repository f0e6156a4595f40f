#!/bin/sh
# tests/prom/run.sh - rte-read --serve and --push against the real thing:
# Debian's prometheus (scraping the exporter while a real program traced by
# librte.so runs: threads, fork, spans) and prometheus-pushgateway, their
# HTTP APIs checked against rte-read --format=summary-json of the same
# files; the exposition checked by promtool; malformed requests, a slow
# client and scrapes while processes exit. Every server is started, waited
# for (bounded) and stopped here, on 127.0.0.1 only. Missing servers are
# installed (root or sudo), else the tests that need them are skipped with
# the reason.
#
#   RTE_BUILD=build sh tests/prom/run.sh [TEST...]
set -u
B=${RTE_BUILD:?set RTE_BUILD}
RR=$B/rte-read
TRACED=${RTE_TRACED:-$B/tests/reader/traced} # RTE_TRACED: e.g. a build without TSan
CHECK="python3 tests/prom/check.py"
FLEET="python3 tests/prom/fleet.py"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rte-test-prom.XXXXXX") || exit 1
. tests/harness.sh
unset OCAML_RUNTIME_EVENTS_START OCAML_RUNTIME_EVENTS_DIR \
	OCAML_RUNTIME_EVENTS_PRESERVE LD_PRELOAD

# ---- servers -----------------------------------------------------------------

have_servers() {
	command -v prometheus >/dev/null && command -v promtool >/dev/null &&
		command -v prometheus-pushgateway >/dev/null
}
NOSERVER=""
if ! have_servers; then
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo -n"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		prometheus prometheus-pushgateway >/dev/null 2>&1
	have_servers || NOSERVER="prometheus, promtool or prometheus-pushgateway missing and cannot be installed (apt-get install prometheus prometheus-pushgateway)"
fi

# stop PID: SIGTERM, at most 10 s for it to end, then SIGKILL. Returns the
# status it ended with.
stop() {
	kill -TERM "$1" 2>/dev/null
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$1" 2>/dev/null && { fail "pid $1 ignored SIGTERM"; kill -9 "$1"; }
	wait "$1"
}

# start_serve ARGS...: the exporter on a free port of 127.0.0.1 (it says
# which), with --per-process (these tests compare per pid with the
# summary; start_serve_agg without it); sets SP and URL.
start_serve() { start_serve_agg --per-process "$@"; }
start_serve_agg() {
	: >"$D/serve.err"
	"$RR" --serve 127.0.0.1:0 "$@" 2>"$D/serve.err" &
	SP=$!
	BG="$BG $SP"
	i=0
	while [ $i -lt 100 ]; do
		port=$(sed -n 's|^rte-read: serving http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$D/serve.err")
		if [ -n "$port" ]; then
			URL=http://127.0.0.1:$port/metrics
			return 0
		fi
		kill -0 "$SP" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	fail "the exporter did not start: $(cat "$D/serve.err")"
	return 1
}

# traced DIR N US: the traced program (3 threads, a forked child, spans
# "batch", ints "seq") writing into DIR, files kept.
traced() {
	env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAML_RUNTIME_EVENTS_DIR="$1" "$TRACED" "$2" "$3" fork
}

# pids DIR: the pids of DIR's ring files, comma-separated.
pids() {
	ls "$1" | sed -n 's/^\([0-9]*\)\.events$/\1/p' | paste -sd, -
}

summary() {
	"$RR" -f summary-json -o "$D/summary.json" "$1" || fail "summary-json: exit $?"
}

# ---- tests -----------------------------------------------------------------

t_exposition() {
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	traced "$D/rings" 3000 200 >/dev/null || fail "traced: exit $?"
	summary "$D/rings"
	# OpenMetrics when asked, final values once, then the processes dropped
	$CHECK fetch-final "$URL" "$(pids "$D/rings")" "$D/om.txt" 20 \
		"application/openmetrics-text; version=1.0.0" || fail "no final values"
	grep -q "^application/openmetrics-text; version=1.0.0" "$D/om.txt.type" ||
		fail "OpenMetrics content type: $(cat "$D/om.txt.type")"
	[ "$(tail -1 "$D/om.txt")" = "# EOF" ] || fail "OpenMetrics does not end with # EOF"
	# every counter and histogram has its _created (a time since the epoch,
	# not in the future), gauges none
	python3 - "$D/om.txt.raw" <<'PY' || fail "OpenMetrics _created"
import re, sys, time
t = open(sys.argv[1]).read()
types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", t, re.M))
created = {}
for name, lab, v in re.findall(r"^(\S+)_created(\{[^}]*\})? (\S+)$", t, re.M):
    if not 1.6e9 < float(v) <= time.time() + 1:
        sys.exit("%s_created %s" % (name, v))
    created[name] = 1
want = {n for n, ty in types.items() if ty in ("counter", "histogram") and not n.startswith("rte_exporter_")}
bad = sorted(want - set(created)) + sorted(n for n in created if types.get(n) == "gauge")
sys.exit("families without _created / gauges with: %s" % bad if bad else 0)
PY
	$CHECK expo-vs-summary "$D/om.txt" "$D/summary.json" || fail "values differ"
	$CHECK get "$URL" "$D/text.txt" >"$D/st" && grep -q "^200 text/plain; version=0.0.4" "$D/st" ||
		fail "text format: $(cat "$D/st")"
	# nothing is consumed by a scrape: a second scraper sees the same
	$CHECK expo-vs-summary "$D/text.txt" "$D/summary.json" || fail "a later scrape differs"
	$CHECK get "${URL%/metrics}/nope" "$D/x" | grep -q "^404" || fail "not 404"
	$CHECK get "${URL%/metrics}/" "$D/x" | grep -q "^404" || fail "/ not 404"
	stop "$SP" || fail "exporter exit $?"
}

# --serve ADDR PID finds PID.events where every mode looks (common/format/
# rundir.h): here librte.so's default directory, $XDG_RUNTIME_DIR/rte, with
# OCAML_RUNTIME_EVENTS_DIR unset and no such file in the working
# directory (it used to look in ./PID.events only).
t_pid_default() {
	mkdir -p "$D/xdg/rte"
	chmod 700 "$D/xdg" "$D/xdg/rte"
	traced "$D/xdg/rte" 3000 200 >/dev/null || fail "traced: exit $?"
	pid=$(ls "$D/xdg/rte" | sed -n 's/^\([0-9]*\)\.events$/\1/p' | sort -n | head -1)
	[ -n "$pid" ] || { fail "traced wrote no file"; return; }
	[ ! -e "$pid.events" ] || { fail "$pid.events in the working directory"; return; }
	old_dir=${OCAML_RUNTIME_EVENTS_DIR-unset} old_xdg=${XDG_RUNTIME_DIR-unset}
	unset OCAML_RUNTIME_EVENTS_DIR
	export XDG_RUNTIME_DIR="$D/xdg"
	start_serve "$pid"
	started=$?
	[ "$old_xdg" = unset ] && unset XDG_RUNTIME_DIR || export XDG_RUNTIME_DIR="$old_xdg"
	[ "$old_dir" = unset ] || export OCAML_RUNTIME_EVENTS_DIR="$old_dir"
	[ $started = 0 ] || return
	$CHECK fetch-final "$URL" "$pid" "$D/pid.txt" 20 ||
		fail "the process of $pid.events in \$XDG_RUNTIME_DIR/rte was never served"
}

# The allocation profiler's series: exact bytes (the sums of its rte.alloc.*
# int events, recounted from JSONL), not size-bucket lower bounds.
t_alloc() {
	# Under a sanitizer its malloc comes first and RTE_ALLOC stands aside.
	case ${RTE_SAN:-} in ?*) skip "$CUR" "a sanitizer build (its allocator comes first: RTE_ALLOC stands aside)"; return 2 ;; esac
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	env LD_PRELOAD="$B/librte.so" RTE_ALLOC=1 OCAML_RUNTIME_EVENTS_START=1 \
		OCAML_RUNTIME_EVENTS_PRESERVE=1 OCAML_RUNTIME_EVENTS_DIR="$D/rings" \
		/usr/bin/python3 -c 'x = [bytes(100 + i % 5000) for i in range(20000)]' ||
		fail "python3: exit $?"
	$CHECK fetch-final "$URL" "$(pids "$D/rings")" "$D/om.txt" 20 \
		"application/openmetrics-text; version=1.0.0" || fail "no final values"
	"$RR" -f jsonl -o "$D/j.jsonl" "$D/rings" || fail "jsonl: exit $?"
	summary "$D/rings"
	python3 - "$D/om.txt" "$D/j.jsonl" "$D/summary.json" <<'PY' || fail "alloc series differ from the JSONL recount or the summary"
import json, re, sys
got = {}
for line in open(sys.argv[1]):
    m = re.match(r"(rte_alloc_[a-z_]+)\{[^}]*\} ([0-9.e+]+)$", line.strip())
    if m and not m.group(1).endswith("_created"):
        k = m.group(1)
        got[k] = max(got.get(k, 0), float(m.group(2))) if k == "rte_alloc_peak_live_bytes" \
            else got.get(k, 0) + float(m.group(2))
want = {"rte_alloc_calls_total": 0, "rte_alloc_bytes_total": 0, "rte_alloc_usable_bytes_total": 0,
        "rte_alloc_frees_total": 0, "rte_alloc_freed_bytes_total": 0,
        "rte_alloc_temporary_total": 0, "rte_alloc_peak_live_bytes": 0}
ints = {"rte.alloc.bytes": "rte_alloc_bytes_total", "rte.alloc.usable": "rte_alloc_usable_bytes_total",
        "rte.alloc.frees": "rte_alloc_frees_total", "rte.alloc.freed": "rte_alloc_freed_bytes_total",
        "rte.alloc.temporary": "rte_alloc_temporary_total"}
for l in open(sys.argv[2]):
    e = json.loads(l)
    if e["kind"] == "alloc":
        want["rte_alloc_calls_total"] += sum(e["buckets"])
    elif e["kind"] == "user_int" and e["event"] in ints:
        want[ints[e["event"]]] += e["value"]
    elif e["kind"] == "user_int" and e["event"] == "rte.alloc.peak":
        want["rte_alloc_peak_live_bytes"] = max(want["rte_alloc_peak_live_bytes"], e["value"])
# the summary's figures (the run model's) are the same, exactly
summ = {"rte_alloc_calls_total": "calls", "rte_alloc_bytes_total": "bytes",
        "rte_alloc_usable_bytes_total": "usable_bytes", "rte_alloc_frees_total": "frees",
        "rte_alloc_freed_bytes_total": "freed_bytes",
        "rte_alloc_temporary_total": "temporary_allocations"}
sw = dict.fromkeys(summ, 0)
sw["rte_alloc_peak_live_bytes"] = 0
for p in json.load(open(sys.argv[3]))["processes"]:
    ap = p.get("alloc_profile") or {}
    for k, s in summ.items():
        sw[k] += ap.get(s, 0)
    sw["rte_alloc_peak_live_bytes"] = max(sw["rte_alloc_peak_live_bytes"], ap.get("peak_bytes", 0))
print("alloc series:", got)
if any(k.startswith("rte_user_int") for k in got) or \
        any('rte_user_int{' in l and 'rte.alloc.' in l for l in open(sys.argv[1])):
    sys.exit("rte.alloc.* exported as user int gauges")
if got != sw:
    print("summary-json:", sw)
sys.exit(not (want["rte_alloc_bytes_total"] > 2000000 and got == want and got == sw))
PY
	stop "$SP" || fail "exporter exit $?"
}

t_live_lint() {
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	traced "$D/rings" 40000 1000 >/dev/null & tp=$!
	BG="$BG $tp"
	# scrapes until one shows a live process (the program runs ~3 s; a
	# fixed sleep raced with its end on a loaded machine)
	i=0
	while [ $i -lt 100 ]; do
		$CHECK get "$URL" "$D/live.txt" >/dev/null
		grep -q 'rte_process_alive{.*} 1$' "$D/live.txt" && break
		kill -0 "$tp" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q 'rte_process_alive{.*} 1$' "$D/live.txt" || fail "no live process in a scrape"
	if [ -n "$NOSERVER" ]; then
		skip "$CUR-promtool" "$NOSERVER"
	else
		promtool check metrics <"$D/live.txt" || fail "promtool check metrics"
	fi
	wait "$tp" || fail "traced: exit $?"
	stop "$SP" || fail "exporter exit $?"
}

# serve_check OPTION CHECK: the exporter run with OPTION over a traced
# program's rings; check.py's CHECK holds between its final scrape and
# the summary of the same rings.
serve_check() {
	mkdir -p "$D/rings"
	start_serve "$1" "$D/rings" || return
	traced "$D/rings" 2000 100 >/dev/null || fail "traced: exit $?"
	summary "$D/rings"
	$CHECK fetch-final "$URL" "$(pids "$D/rings")" "$D/m.txt" 20 &&
		$CHECK "$2" "$D/m.txt" "$D/summary.json" || fail "$1"
	stop "$SP" || fail "exporter exit $?"
}

t_per_thread() { serve_check --per-thread per-thread; }

t_max_names() { serve_check "--max-names=1" max-names; }

t_robust() {
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	port=${URL#http://127.0.0.1:}
	port=${port%/metrics}
	# scrapes while processes run and end (their files vanish: no PRESERVE)
	( for i in 1 2 3; do
		env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D/rings" \
			"$TRACED" 3000 100 fork >/dev/null || exit 1
	done ) & tp=$!
	BG="$BG $tp"
	$CHECK scrape-loop "$port" 3 || fail "scrapes while processes exit"
	$CHECK raw "$port" || fail "malformed requests"
	wait "$tp" || fail "traced: exit $?"
	kill -0 "$SP" 2>/dev/null || fail "the exporter died"
	$CHECK get "$URL" "$D/m.txt" | grep -q "^200" || fail "no answer at the end"
	stop "$SP" || fail "exporter exit $?"
}

# Real OCaml 5.2 files (runtime phases, counters, GC): every phase's
# histogram, GC time and pauses against summary-json.
t_ocaml() {
	mkdir -p "$D/rings"
	for gz in tests/fixtures/ocaml-5.2/*/*.events.gz; do
		gzip -dc "$gz" >"$D/rings/$(basename "$gz" .gz)" || fail "gunzip $gz"
	done
	summary "$D/rings"
	start_serve "$D/rings" || return
	$CHECK fetch-final "$URL" "$(python3 -c 'import json,sys; print(",".join(str(p["pid"]) for p in json.load(open(sys.argv[1]))["processes"]))' "$D/summary.json")" \
		"$D/m.txt" 20 && $CHECK expo-vs-summary "$D/m.txt" "$D/summary.json" ||
		fail "OCaml's files"
	grep -q '^rte_gc_pause_duration_seconds_count{' "$D/m.txt" || fail "no GC pauses"
	grep -q '^rte_runtime_stat{' "$D/m.txt" || fail "no runtime counters"
	stop "$SP" || fail "exporter exit $?"
}

# A program that crashes under the shim: rte_crashes_total says so.
t_crash() {
	mkdir -p "$D/rings"
	pre=$B/librte.so
	case ${RTE_SAN:-} in *address*) pre="$(${CC:-cc} -print-file-name=libasan.so) $pre" ;; esac
	start_serve "$D/rings" || return
	env ASAN_OPTIONS=handle_segv=0:detect_leaks=0 LD_PRELOAD="$pre" OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
		OCAML_RUNTIME_EVENTS_DIR="$D/rings" "$B/tests/crash/segv" >/dev/null 2>&1
	[ $? = 139 ] || fail "segv did not die of SIGSEGV"
	summary "$D/rings"
	pid=$(pids "$D/rings")
	$CHECK fetch-final "$URL" "$pid" "$D/m.txt" 20 &&
		$CHECK expo-vs-summary "$D/m.txt" "$D/summary.json" || fail "values"
	grep -q "^rte_crashes_total{exe=\"segv\",pid=\"$pid\"} 1$" "$D/m.txt" ||
		fail "no crash counted: $(grep crash "$D/m.txt")"
	stop "$SP" || fail "exporter exit $?"
}

# A ring file whose user event name is made to inject metrics (quotes,
# newline, backslash, an invalid UTF-8 byte): one escaped label value, in
# both formats, and promtool finds nothing to say.
t_hostile() {
	mkdir -p "$D/rings"
	"$B/tests/reader/gen_ring" known "$D/rings/4242.events" "$D/truth.json" ||
		{ fail "gen_ring: exit $?"; return; }
	python3 - "$D/rings/4242.events" <<'EOP' || { fail "cannot patch the name"; return; }
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off = struct.unpack_from("<Q", b, 56)[0]   # custom_events_offset
n = b'x"} 1\nfake_metric{a="\\\xff\xc3\xa9'
b[off:off + 128] = n + bytes(128 - len(n))  # the first name slot
open(sys.argv[1], "wb").write(b)
EOP
	start_serve "$D/rings" || return
	$CHECK fetch-final "$URL" 4242 "$D/om.txt" 20 "application/openmetrics-text" &&
		$CHECK hostile "$D/om.txt" || fail "OpenMetrics"
	stop "$SP" || fail "exporter exit $?"
	start_serve "$D/rings" || return # a new exporter: the values again
	$CHECK fetch-final "$URL" 4242 "$D/text.txt" 20 && $CHECK hostile "$D/text.txt" ||
		fail "text format"
	if [ -z "$NOSERVER" ]; then
		promtool check metrics <"$D/text.txt.raw" || fail "promtool check metrics"
	fi
	stop "$SP" || fail "exporter exit $?"
}

# Files removed at exit (no PRESERVE), one run after the other: each run's
# new file (often on the inode of the last one) is still picked up.
t_reuse() {
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	for i in 1 2 3 4; do
		pid=$(env OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_DIR="$D/rings" \
			sh -c 'echo $$; exec "$0" 3000 5000 >/dev/null' "$TRACED") || fail "traced: exit $?"
		$CHECK fetch-final "$URL" "$pid" "$D/m$i.txt" 20 || fail "run $i (pid $pid) not seen"
	done
	stop "$SP" || fail "exporter exit $?"
}

# A followed file cut short under the exporter (SIGBUS on its next read):
# that file is given up and counted as an error, the exporter goes on.
t_truncated() {
	mkdir -p "$D/rings"
	start_serve "$D/rings" || return
	(traced "$D/rings" 200000 50000 >/dev/null; :) 2>/dev/null & tp=$!
	BG="$BG $tp"
	i=0
	while ! grep -q 'rte_process_alive{.*} 1$' "$D/m.txt" 2>/dev/null && [ $i -lt 100 ]; do
		$CHECK get "$URL" "$D/m.txt" >/dev/null
		sleep 0.1
		i=$((i + 1))
	done
	for f in "$D"/rings/*.events; do truncate -s 4096 "$f"; done
	i=0
	while ! grep -q '^rte_exporter_errors_total [1-9]' "$D/m.txt" && [ $i -lt 100 ]; do
		sleep 0.1
		$CHECK get "$URL" "$D/m.txt" >/dev/null
		i=$((i + 1))
	done
	grep -q '^rte_exporter_errors_total [1-9]' "$D/m.txt" || fail "no error counted"
	kill -0 "$SP" 2>/dev/null || fail "the exporter died"
	for p in $(pids "$D/rings" | tr , ' '); do kill -9 "$p" 2>/dev/null; done
	wait "$tp"
	stop "$SP" || fail "exporter exit $?"
}

t_prometheus() {
	[ -n "$NOSERVER" ] && { skip "$CUR" "$NOSERVER"; return 2; }
	mkdir -p "$D/rings" "$D/tsdb"
	start_serve "$D/rings" || return
	pport=$($CHECK port)
	target=${URL#http://}
	cat >"$D/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: rte
    scrape_interval: 1s
    static_configs:
      - targets: ['${target%/metrics}']
EOC
	prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn \
		2>"$D/prometheus.log" & pp=$!
	BG="$BG $pp"
	PROM=http://127.0.0.1:$pport
	$CHECK wait-ready "$PROM/-/ready" 60 || { fail "prometheus: $(tail -5 "$D/prometheus.log")"; stop "$pp"; return; }
	# a process (and its forked child) seen alive, then killed...
	(traced "$D/rings" 200000 50000 >/dev/null; :) 2>/dev/null & tp=$!
	BG="$BG $tp"
	i=0
	while [ "$(pids "$D/rings" | tr , '\n' | grep -c .)" -lt 2 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	live=$(pids "$D/rings")
	$CHECK prom-alive "$PROM" "$live" 60 || fail "never seen alive"
	for p in $(echo "$live" | tr , ' '); do kill -9 "$p"; done
	wait "$tp" # the subshell: it says nothing of its child's death
	# ... and one that runs to its end
	traced "$D/rings" 3000 1000 >/dev/null || fail "traced: exit $?"
	summary "$D/rings"
	$CHECK prom-wait "$PROM" "$(pids "$D/rings")" 60 &&
		$CHECK prom-vs-summary "$PROM" "$D/summary.json" || fail "Prometheus's values"
	stop "$pp" || fail "prometheus exit $?"
	stop "$SP" || fail "exporter exit $?"
}

# prometheus_on PORTVAR LOG TARGET...: a real Prometheus server on a free
# port of 127.0.0.1 scraping TARGETs every second; sets PROM (its URL) and
# PP (its pid).
prometheus_on() {
	pport=$($CHECK port)
	mkdir -p "$D/tsdb$pport"
	{
		printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
		printf 'scrape_configs:\n  - job_name: rte\n    scrape_interval: 1s\n'
		printf '    static_configs:\n      - targets: [%s]\n' "$1"
	} >"$D/prom$pport.yml"
	prometheus --config.file="$D/prom$pport.yml" --storage.tsdb.path="$D/tsdb$pport" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn \
		2>"$D/prom$pport.log" & PP=$!
	BG="$BG $PP"
	PROM=http://127.0.0.1:$pport
	$CHECK wait-ready "$PROM/-/ready" 60 || { fail "prometheus: $(tail -5 "$D/prom$pport.log")"; return 1; }
}

# Two real Prometheus servers (an HA pair) scrape one exporter while 200
# short-lived traced processes (100 runs, each forking a child) come and
# go: both store the same totals, equal to summary-json's, after the
# processes ended (an instant query: nothing was consumed by a scrape);
# the series are the same after 20 processes and after 200 (no pid
# label); promtool finds nothing to say. Then --per-process over the same
# files, and scrapers that leave in the middle of its (large) body.
t_fleet() {
	[ -n "$NOSERVER" ] && { skip "$CUR" "$NOSERVER"; return 2; }
	mkdir -p "$D/rings"
	start_serve_agg --label ci_run=r1 "$D/rings" || return
	target=${URL#http://}
	target=${target%/metrics}
	prometheus_on "'$target'" || return
	p1=$PROM pp1=$PP
	prometheus_on "'$target'" || { stop "$pp1"; return; }
	p2=$PROM pp2=$PP
	for i in $(seq 10); do traced "$D/rings" 50 20 >/dev/null || fail "traced: exit $?"; done
	# (each run is 2 processes: traced forks a child)
	$CHECK fetch-total "$URL" 20 "$D/m20.txt" 20 || fail "the first 20 processes"
	for i in $(seq 10 99); do traced "$D/rings" 50 20 >/dev/null || fail "traced: exit $?"; done
	$CHECK fetch-total "$URL" 200 "$D/m200.txt" 30 || fail "200 processes"
	summary "$D/rings"
	$FLEET totals "$D/m200.txt" "$D/summary.json" ci_run=r1 || fail "the exporter's totals"
	$FLEET series-same "$D/m20.txt" "$D/m200.txt" || fail "series grew with the processes"
	# one label set: a forked child (no rte.module of its own) is its
	# parent's executable, not exe=""
	grep -q '^rte_exporter_label_sets 1$' "$D/m200.txt" ||
		fail "not one label set: $(grep '^rte_processes_started_total' "$D/m200.txt")"
	promtool check metrics <"$D/m200.txt" || fail "promtool check metrics"
	$FLEET prom-totals 60 "$D/summary.json" "$p1" "$p2" || fail "what Prometheus stored"
	stop "$pp1" || fail "prometheus exit $?"
	stop "$pp2" || fail "prometheus exit $?"
	stop "$SP" || fail "exporter exit $?"
	# --per-process over the same files: a label set per process (the
	# exposition that grows with them, MiB here), scrapers leaving in the
	# middle of its body
	start_serve "$D/rings" || return
	$CHECK fetch-total "$URL" 200 "$D/pp.txt" 30 || fail "200 processes, --per-process"
	[ "$(grep -c '^rte_processes_ended_total{' "$D/pp.txt")" = 200 ] || fail "not 200 label sets"
	promtool check metrics <"$D/pp.txt" || fail "promtool check metrics (--per-process)"
	port=${URL#http://127.0.0.1:}
	$FLEET drop-mid "${port%/metrics}" || fail "scrapers leaving mid-body"
	stop "$SP" || fail "exporter exit $?"
}

# More label sets than --max-label-sets: the rest under exe="other", one
# warning; totals still whole. A --label value with a quote and a
# backslash is one escaped value; invalid UTF-8, control characters (a
# newline: rte-run's rule too, common/push) and rte's own label names are
# refused with the rule.
t_labels() {
	mkdir -p "$D/rings" "$D/bin"
	for n in a b c d; do cp "$TRACED" "$D/bin/prog_$n"; done
	for n in a b c d; do
		env LD_LIBRARY_PATH="$B" OCAML_RUNTIME_EVENTS_START=1 OCAML_RUNTIME_EVENTS_PRESERVE=1 \
			OCAML_RUNTIME_EVENTS_DIR="$D/rings" "$D/bin/prog_$n" 50 20 >/dev/null ||
			fail "prog_$n: exit $?"
	done
	summary "$D/rings"
	start_serve_agg --max-label-sets 2 --label 'note=a "q" \ b c' "$D/rings" || return
	$CHECK fetch-total "$URL" 4 "$D/m.txt" 20 || fail "4 processes"
	$FLEET totals "$D/m.txt" "$D/summary.json" || fail "totals with the cap"
	grep -q '^rte_events_total{exe="other",note="a \\"q\\" \\\\ b c",kind=' "$D/m.txt" ||
		fail "no exe=\"other\" or the note not escaped: $(grep -m3 rte_events_total "$D/m.txt")"
	[ "$(grep -c 'more than 2 label sets' "$D/serve.err")" = 1 ] ||
		fail "not one warning: $(cat "$D/serve.err")"
	promtool check metrics <"$D/m.txt" 2>/dev/null || [ -n "$NOSERVER" ] || fail "promtool check metrics"
	stop "$SP" || fail "exporter exit $?"
	for bad in 'pid=1' 'exe=x' 'instance=x' '__x=1' "v=$(printf '\377')" "v=a
b" "v=$(printf 'a\tb')"; do
		"$RR" --serve 127.0.0.1:0 --label "$bad" "$D/rings" 2>"$D/err"
		rc=$?
		[ $rc = 1 ] && grep -q "valid UTF-8" "$D/err" || fail "--label $bad: exit $rc: $(cat "$D/err")"
	done
}

# The shipped example rules (contrib/prometheus): promtool checks them and
# runs their unit tests; every rte_ metric they name is one the exporter
# writes (a rename would otherwise leave them silently empty).
t_rules() {
	command -v promtool >/dev/null || { skip "$CUR" "promtool missing (apt-get install prometheus)"; return 2; }
	promtool check rules contrib/prometheus/rules.yml >"$D/out" 2>&1 || fail "promtool check rules: $(cat "$D/out")"
	(cd contrib/prometheus && promtool test rules rules_test.yml) >"$D/out" 2>&1 ||
		fail "promtool test rules: $(cat "$D/out")"
	for m in $(grep -o 'rte_[a-z_]*' contrib/prometheus/rules.yml | sort -u); do
		base=${m%_total}
		base=${base%_bucket}
		grep -q "\"$base\"" reader/metrics_out.c || fail "rules.yml names $m, which the exporter does not write"
	done
}

t_pushgateway() {
	[ -n "$NOSERVER" ] && { skip "$CUR" "$NOSERVER"; return 2; }
	mkdir -p "$D/rings"
	gport=$($CHECK port)
	prometheus-pushgateway --web.listen-address="127.0.0.1:$gport" \
		--persistence.file="$D/pg.data" --log.level=warn 2>"$D/pg.log" & gp=$!
	BG="$BG $gp"
	PG=http://127.0.0.1:$gport
	$CHECK wait-ready "$PG/-/ready" 60 || { fail "pushgateway: $(tail -5 "$D/pg.log")"; stop "$gp"; return; }
	traced "$D/rings" 3000 100 >/dev/null || fail "traced: exit $?"
	summary "$D/rings"
	"$RR" --push "$PG" --job ci --instance h1 --label test=t1 --label branch=a/b "$D/rings" ||
		fail "--push: exit $?"
	$CHECK get "$PG/metrics" "$D/pg.txt" >/dev/null
	$FLEET pg-group "$PG" ci h1 "$D/summary.json" || fail "the gateway's values"
	grep '^rte_events_total{' "$D/pg.txt" | grep -v 'branch="a/b"' | grep -q . &&
		fail "a series without the grouping label branch"
	# rte-run --push: the same at the end of a run, under the host's name
	"$B/rte-run" -q -d "$D/run" --push "$PG" --job ci2 -- \
		"$TRACED" 2000 100 fork || fail "rte-run --push: exit $?"
	"$RR" -f summary-json -o "$D/run.json" "$D/run" || fail "summary-json: exit $?"
	$FLEET pg-group "$PG" ci2 "$(hostname)" "$D/run.json" ||
		fail "the gateway's values of rte-run --push"
	# a second run of the same job and instance replaces the first (PUT)
	"$B/rte-run" -q -d "$D/run2" --push "$PG" --job ci2 --instance "$(hostname)" -- \
		"$TRACED" 500 100 || fail "rte-run --push (2): exit $?"
	"$RR" -f summary-json -o "$D/run2.json" "$D/run2" || fail "summary-json: exit $?"
	$FLEET pg-group "$PG" ci2 "$(hostname)" "$D/run2.json" ||
		fail "a second push of the job added to the first instead of replacing it"
	stop "$gp" || fail "pushgateway exit $?"
}

# The exporter on IPv6 loopback ([::1]:0): the same final values as on
# 127.0.0.1. Skipped where ::1 cannot be bound (no IPv6).
t_ipv6() {
	if ! python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
		skip "$CUR" "::1 cannot be bound (no IPv6 loopback here)"
		return 2
	fi
	mkdir -p "$D/rings"
	"$RR" --serve "[::1]:0" --per-process "$D/rings" 2>"$D/serve.err" &
	SP=$!
	BG="$BG $SP"
	i=0
	URL=""
	while [ $i -lt 100 ] && [ -z "$URL" ]; do
		port=$(sed -n 's|^rte-read: serving http://\[::1\]:\([0-9]*\)/metrics$|\1|p' "$D/serve.err")
		[ -n "$port" ] && URL="http://[::1]:$port/metrics"
		kill -0 "$SP" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$URL" ] || { fail "the exporter did not start on [::1]: $(cat "$D/serve.err")"; return; }
	traced "$D/rings" 2000 100 >/dev/null || fail "traced: exit $?"
	summary "$D/rings"
	$CHECK fetch-final "$URL" "$(pids "$D/rings")" "$D/m.txt" 20 &&
		$CHECK expo-vs-summary "$D/m.txt" "$D/summary.json" || fail "values over [::1]"
	stop "$SP" || fail "exporter exit $?"
}

t_push_errors() {
	mkdir -p "$D/rings"
	traced "$D/rings" 100 0 >/dev/null || fail "traced: exit $?"
	port=$($CHECK port) # nobody listens there
	"$RR" --push "http://127.0.0.1:$port" "$D/rings" 2>"$D/err"
	rc=$?
	[ $rc = 5 ] && [ "$(wc -l <"$D/err")" = 1 ] || fail "closed port: exit $rc: $(cat "$D/err")"
	# a gateway that takes the connection and never answers: a clear
	# message within --timeout, not a hang
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$D/slow.port" & sl=$!
	BG="$BG $sl"
	i=0
	while [ ! -s "$D/slow.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	timeout 20 "$RR" --push "http://127.0.0.1:$(cat "$D/slow.port")" --timeout 1 "$D/rings" 2>"$D/err"
	rc=$?
	[ $rc = 5 ] && grep -q "slow or stuck" "$D/err" || fail "a stuck gateway: exit $rc: $(cat "$D/err")"
	kill "$sl" 2>/dev/null; wait "$sl" 2>/dev/null
	"$RR" --push "http://127.0.0.1:$port" --timeout 0 "$D/rings" 2>/dev/null
	[ $? = 1 ] || fail "--timeout 0 accepted"
	"$RR" --push "https://127.0.0.1:$port" "$D/rings" 2>"$D/err"
	rc=$?
	[ $rc = 1 ] && grep -q "only http://.*no TLS" "$D/err" || fail "https: exit $rc: $(cat "$D/err")"
	"$RR" --push "ftp://127.0.0.1:$port" "$D/rings" 2>"$D/err"
	rc=$?
	[ $rc = 1 ] && grep -q "only http://" "$D/err" || fail "ftp: exit $rc: $(cat "$D/err")"
	"$RR" --push "http://127.0.0.1:$port" --label "9x=y" "$D/rings" 2>/dev/null
	[ $? = 1 ] || fail "bad label accepted"
	"$RR" --push "http://127.0.0.1:$port" 2>/dev/null
	[ $? = 1 ] || fail "no input accepted"
	"$RR" --push "http://127.0.0.1:$port" "$D/none" 2>/dev/null
	[ $? = 2 ] || fail "missing input: not exit 2"
	"$RR" --serve 127.0.0.1:x "$D/rings" 2>/dev/null
	[ $? = 1 ] || fail "bad --serve address accepted"
	"$RR" --serve "$port" "$D/none" 2>/dev/null
	[ $? = 2 ] || fail "--serve of a missing directory: not exit 2"
}

echo "== prom"
for t in exposition pid_default alloc ocaml crash hostile live_lint per_thread max_names robust reuse truncated ipv6 prometheus fleet labels rules pushgateway push_errors; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $t "*) ;; *) continue ;; esac
	fi
	begin "$t"
	"t_$t"
	[ $? = 2 ] && continue
	finish
done
echo "prom: $NPASS passed, $NFAIL failed, $NSKIP skipped"
[ "$NFAIL" = 0 ]
