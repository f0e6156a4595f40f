# tests/watchdog.sh - the suites' watchdog (sourced by tests/harness.sh,
# tests/reader/common.sh, tests/reader/run.sh and tests/run/lib.sh): a
# suite that runs longer than RTE_SUITE_TIMEOUT seconds (default 1200; 0:
# none) is stopped, saying which test was running.
#
# A hung test would stall `make test` until CI's own limit, with nothing
# said. The watchdog, detached from the suite's shell (so that a bare
# `wait` in a test does not wait for it; its pid in DIR/.watchdog, written
# before h_watchdog returns and killed by h_watchdog_stop), polls once a second; past RTE_SUITE_TIMEOUT seconds it
# prints one FAIL line naming the suite and the test, sends the suite's
# shell TERM (its trap cleans up and exits 1 once its running command has
# ended) and stops every process under it (TERM, then KILL).

# h_descendants PID: the processes under PID, deepest last.
h_descendants() {
	ps -e -o pid= -o ppid= | awk -v root="$1" '
		{ parent[$1] = $2 }
		END {
			n = 1; q[1] = root
			for (i = 1; i <= n; i++)
				for (p in parent)
					if (parent[p] == q[i]) q[++n] = p
			for (i = 2; i <= n; i++) print q[i]
		}'
}

# h_watchdog DIR: start it; DIR is the suite's private directory.
h_watchdog() {
	_wd=$1
	_t=${RTE_SUITE_TIMEOUT:-1200}
	[ "$_t" -gt 0 ] 2>/dev/null || return 0
	_me=$$
	( (
		read -r _self _rest </proc/self/stat
		_n=0
		while [ "$_n" -lt "$_t" ]; do
			sleep 1 </dev/null >/dev/null 2>&1
			kill -0 "$_me" 2>/dev/null || exit 0
			_n=$((_n + 1))
		done
		echo "  FAIL $(basename "$(dirname "$0")")/$(basename "$0"): suite timeout, over ${_t} s (RTE_SUITE_TIMEOUT) in test '$(cat "$_wd/.cur" 2>/dev/null)'; stopping it" >&2
		_k=$(h_descendants "$_me" | grep -vx "$_self")
		rm -f "$_wd/.watchdog" # the suite's cleanup leaves us to finish
		kill -TERM "$_me" 2>/dev/null # its trap runs once the child is gone
		kill -TERM $_k 2>/dev/null
		sleep 2
		kill -KILL $_k 2>/dev/null
	) & echo $! >"$_wd/.watchdog" ) </dev/null
}

# h_watchdog_test DIR NAME: the test now running (named in the FAIL line).
h_watchdog_test() {
	echo "$2" >"$1/.cur" 2>/dev/null
}

# h_watchdog_stop DIR: the suite is ending.
h_watchdog_stop() {
	[ -s "$1/.watchdog" ] && kill -9 "$(cat "$1/.watchdog")" 2>/dev/null
	return 0
}
