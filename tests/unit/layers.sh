#!/bin/sh
# layers.sh - the shim's modules use only their own layer and the layers
# below, as drawn in the one table of them, shim/init.c's header (the rows
# between its two lines of '='). Two checks:
#
#   symbols   nm of every object under OBJ_DIR (build/obj/shim): a symbol
#             a module's object uses (undefined there) and another module's
#             object defines must come from a module of the same layer or
#             a lower one, and no two modules may use each other. The only
#             names of an upper layer a lower one may use are init.c's
#             observer lists (rte_tracer_observers, rte_hook_observers).
#   includes  every #include "..." of a shim/ file names a header of its
#             own module or of a module of the same or a lower layer.
#
# A file not in the table fails too (a new module must be given its place
# there).
#
#   sh tests/unit/layers.sh [SHIM_DIR [OBJ_DIR]]   exit 0 if clean, else 1
set -u
dir=${1:-shim}
obj=${2:-build/obj/shim}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The table: "RANK ENTRY" lines, ENTRY a file (log.c, alloc/state.h) or a
# folder (hooks/): a ranked row's leading words that end in .c, .h or /.
sed -n '/^ \* =\{20,\}$/,/^ \* =\{20,\}$/p' "$dir/init.c" |
	awk '$2 ~ /^[0-9]+$/ {
		for (i = 3; i <= NF && $i ~ /(\.[ch]|\/)$/; i++) print $2, $i
	}' >"$tmp/table"
if [ ! -s "$tmp/table" ]; then
	echo "layers: no layer table in $dir/init.c"
	exit 1
fi

# path relative to shim/ -> "MODULE RANK", empty if not in the table. A
# file's own row (its stem: log.c covers log.h) before its folder's.
module() {
	awk -v f="$1" '
	BEGIN { stem = f; sub(/\.[ch]$/, "", stem)
	        d = f; if (sub(/\/[^\/]*$/, "/", d) == 0) d = "" }
	{ e = $2; s = e; sub(/\.[ch]$/, "", s) }
	e !~ /\/$/ && s == stem { print s, $1; found = 1; exit }
	e == d { fold = e " " $1 }
	END { if (!found && fold != "") print fold }' "$tmp/table"
}

# place PATH: its module and layer into $pm and $pr; 1 if it has no row.
place() {
	set -- $(module "$1")
	[ $# -eq 2 ] || return 1
	pm=$1 pr=$2
}

bad=0

# ---- symbols --------------------------------------------------------------
if [ ! -d "$obj" ]; then
	echo "layers: $obj: no objects (build the shim first: make)"
	exit 1
fi
: >"$tmp/defs"
: >"$tmp/uses"
for o in $(cd "$obj" && find . -name '*.o' | sed 's|^\./||' | sort); do
	if ! place "${o%.o}.c"; then
		echo "layers: $obj/$o: ${o%.o}.c has no row in $dir/init.c's table"
		bad=1
		continue
	fi
	nm -g --defined-only "$obj/$o" | awk -v m="$pm" -v r="$pr" 'NF == 3 { print $3, m, r }' >>"$tmp/defs"
	nm -u "$obj/$o" | awk -v m="$pm" -v r="$pr" -v f="${o%.o}.c" '{ print $NF, m, r, f }' >>"$tmp/uses"
done
# symbol user-module user-rank user-file definer-module definer-rank
sort -k1,1 "$tmp/defs" >"$tmp/defs.s"
sort -k1,1 "$tmp/uses" >"$tmp/uses.s"
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $5' >"$tmp/edges"
awk '
	$1 == "rte_tracer_observers" || $1 == "rte_hook_observers" { next }
	$6 > $3 { printf "layers: %s (%s, layer %s) uses %s of %s (layer %s): calls must point down\n", $4, $2, $3, $1, $5, $6; bad = 1 }
	{ pair[$2 " " $5] = $1 }
	END {
		for (k in pair) {
			split(k, m, " ")
			if ((m[2] " " m[1]) in pair && m[1] < m[2]) {
				printf "layers: %s and %s use each other (%s, %s)\n", m[1], m[2], pair[k], pair[m[2] " " m[1]]
				bad = 1
			}
		}
		exit bad
	}' "$tmp/edges" || bad=1

# ---- includes -------------------------------------------------------------
for f in $(cd "$dir" && find . -name '*.[ch]' | sed 's|^\./||' | sort); do
	if ! place "$f"; then
		echo "layers: $dir/$f: no row in $dir/init.c's table"
		bad=1
		continue
	fi
	m=$pm r=$pr
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
		"$dir/$f" | while read -r inc; do
		# Only the shim's own headers: the file's folder, or shim/.
		case $inc in
		*/*) [ -f "$dir/$inc" ] || continue; t=$inc ;;
		*) if [ "${f%/*}" != "$f" ] && [ -f "$dir/${f%/*}/$inc" ]; then
			   t=${f%/*}/$inc
		   elif [ -f "$dir/$inc" ]; then t=$inc
		   else continue; fi ;;
		esac
		if ! place "$t"; then
			echo "layers: $dir/$f includes $inc: no row for it"
		elif [ "$pm" != "$m" ] && [ "$pr" -gt "$r" ]; then
			echo "layers: $dir/$f ($m, layer $r) includes $inc" \
			     "($pm, layer $pr): includes must point down"
		fi
	done | grep . && bad=1
done
[ $bad = 0 ] && echo "layers: shim/ symbols and includes point down"
exit $bad
