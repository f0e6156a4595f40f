#!/bin/sh
# layers.sh - every #include "..." of a shim/ file points down the layers
# drawn in shim/init.c: a file may include the headers of its own module
# and of lower ranks only. A file or header not in the table fails too
# (a new module must be given its place here).
#
#   sh tests/unit/layers.sh [SHIM_DIR]     exit 0 if clean, 1 otherwise
#
# Ranks (low to high): the leaves, the ring slots and the per-thread
# state pool, the tracer, the crash recorder and the allocation profiler,
# the CPU profiler (prof/: it uses the recorder's module events), the hooks,
# the exported API, the constructor.
set -u
dir=${1:-shim}

rank() { # module name -> rank, empty if unknown
	case $1 in
	fd | forkvars | sys) echo 0 ;;
	log | real | backtrace | registry | alloc_state | proc | perf) echo 1 ;;
	config | ocaml | parse | reg) echo 2 ;;
	file) echo 3 ;;
	slots | pool) echo 4 ;;
	tracer) echo 5 ;;
	crash | alloc) echo 6 ;;
	profiler) echo 7 ;;
	hooks) echo 8 ;;
	api) echo 9 ;;
	init) echo 10 ;;
	esac
}

module() { # path relative to shim/ -> module name
	case $1 in
	hooks/*) echo hooks ;;
	crash/backtrace.*) echo backtrace ;;
	alloc/state.*) echo alloc_state ;;
	alloc/*) echo alloc ;;
	crash/*) echo crash ;;
	*) b=${1##*/}; echo "${b%.*}" ;;
	esac
}

bad=0
for f in $(cd "$dir" && find . -name '*.[ch]' | sed 's|^\./||' | sort); do
	m=$(module "$f")
	r=$(rank "$m")
	if [ -z "$r" ]; then
		echo "layers: $dir/$f: module '$m' has no rank in $0"
		bad=1
		continue
	fi
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
		"$dir/$f" | while read -r inc; do
		# Only the shim's own headers: the file's folder, or shim/.
		case $inc in
		*/*) [ -f "$dir/$inc" ] || continue; t=$inc ;;
		*) if [ -f "$dir/${f%/*}/$inc" ] && [ "${f%/*}" != "$f" ]; then
			   t=${f%/*}/$inc
		   elif [ -f "$dir/$inc" ]; then t=$inc
		   else continue; fi ;;
		esac
		tm=$(module "$t")
		tr=$(rank "$tm")
		if [ -z "$tr" ]; then
			echo "layers: $dir/$f includes $inc: no rank for '$tm'"
		elif [ "$tm" != "$m" ] && [ "$tr" -ge "$r" ]; then
			echo "layers: $dir/$f ($m, rank $r) includes $inc" \
			     "($tm, rank $tr): includes must point down"
		fi
	done | grep . && bad=1
done
[ $bad = 0 ] && echo "layers: shim/ includes point down"
exit $bad
