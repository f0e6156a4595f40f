# rundir.sh - sourced by the shell tests that need librte.so's default
# directory without XDG_RUNTIME_DIR (common/format/rundir.h).

# default_root: where the per-user directory goes without XDG_RUNTIME_DIR:
# /dev/shm where /tmp is not a tmpfs and /dev/shm is one we may write
# into, else /tmp.
default_root() {
	if [ "$(stat -f -c %T /tmp)" != tmpfs ] &&
		[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
		[ -w /dev/shm ] && [ -x /dev/shm ]; then
		echo /dev/shm
	else
		echo /tmp
	fi
}
