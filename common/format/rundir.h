/*
 * rundir.h - the default directory of ring files (internal).
 *
 * OCaml 5 writes <pid>.events into the working directory when
 * OCAML_RUNTIME_EVENTS_DIR is unset. That suits an OCaml program started on
 * purpose, not any program under LD_PRELOAD (ls, git status and git add
 * would all see the trace). librte.so, rte-read and rte-run therefore use
 * a per-user directory instead when the variable is unset:
 *
 *   $XDG_RUNTIME_DIR/rte   if XDG_RUNTIME_DIR is set to an absolute path
 *   /dev/shm/rte-<uid>     else, if /tmp is not a tmpfs and /dev/shm is
 *                          one that the caller may write into
 *   /tmp/rte-<uid>         otherwise
 *
 * created mode 0700 and accepted only if it is a real directory (not a
 * symlink) owned by the caller's uid and not writable by group or others.
 * A tmpfs because every traced process makes and removes a file of tens of
 * megabytes (sparse, a few pages reserved): on a disk file system (ext4)
 * that costs block allocation and journal work at each start and exit, a
 * few times what a short process costs (make bench, "process" rows).
 * OCAML_RUNTIME_EVENTS_DIR, when set, keeps exactly OCaml's meaning ("."
 * gives OCaml's behaviour).
 *
 * Readers (rte-read in every mode, rte_cursor_open_pid) find ring files
 * by the two rules below, written only here: rte_rundir_default() is THE
 * directory (what a writer with this environment writes into), and
 * rte_rundir_search() the directories where a PID's file is looked for.
 *
 * Thread-safety: every function is thread-safe. None allocates;
 * rte_rundir_open() and rte_rundir_root() are async-signal-safe,
 * rte_rundir_path() is too given its inputs (the caller reads the
 * environment).
 */
#ifndef RTE_RUNDIR_H
#define RTE_RUNDIR_H

#include <stddef.h>
#include <sys/types.h>

/* Where the per-user directory goes without XDG_RUNTIME_DIR: "/dev/shm"
 * or "/tmp" (above), decided by two statfs calls and an access. Static
 * storage. */
const char *rte_rundir_root(void);

/* Write the default directory for `xdg` (the value of XDG_RUNTIME_DIR, or
 * NULL) and `uid` into out. An unset, empty or relative xdg is ignored.
 * Returns 0, or ENAMETOOLONG (out holds "" then). */
int rte_rundir_path(const char *xdg, uid_t uid, char *out, size_t cap);

/* The directory a writer with this environment writes into: `dir` if not
 * NULL (a -d DIR option), else $OCAML_RUNTIME_EVENTS_DIR if set and not
 * empty, else rte_rundir_path(XDG_RUNTIME_DIR, geteuid()); "." if that is
 * too long. Returns `dir`, the environment's string or buf (cap bytes).
 * Reads the environment: not thread-safe against setenv. */
const char *rte_rundir_default(const char *dir, char *buf, size_t cap);

/* Where the file of a PID is looked for, in this order: `dir` alone if not
 * NULL; else $OCAML_RUNTIME_EVENTS_DIR if set and not empty, librte.so's
 * default directory (rte_rundir_path) and the working directory (OCaml's
 * default), each once. */
struct rte_rundir_search {
	const char *dir[3];
	unsigned n;
	char buf[4096];
};
void rte_rundir_search(const char *dir, struct rte_rundir_search *s);

/* Open directory `path` (O_DIRECTORY|O_CLOEXEC|O_NOFOLLOW), creating it
 * with mode 0700 if it is missing (its parent must exist). With
 * must_be_private, refuse a directory not owned by geteuid() or writable
 * by group or others (EPERM). Returns the descriptor, or -1 with errno
 * (ENOTDIR or ELOOP for a symlink or a non-directory). */
int rte_rundir_open(const char *path, int must_be_private);

#endif
