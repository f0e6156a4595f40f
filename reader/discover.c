/*
 * discover.c - rte-read's inputs as ring files (discover.h): PIDs looked
 * for in their directories, FILEs, DIRs scanned (and rescanned by
 * --follow), --wait, and every file told apart by device and inode so
 * that one named twice is read once.
 */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover.h"
#include "inputs.h"
#include "ocamlver.h"
#include "signals.h"
#include "status.h"
#include "vec.h"

#define WAIT_POLL_MS 20

static char *keep_path(struct rd_discover *d, char *p)
{
	if (RD_VEC_ROOM(d->paths, d->pathcap, d->npaths, 16) < 0) {
		free(p);
		return NULL;
	}
	return d->paths[d->npaths++] = p;
}

/* Files are told apart by device and inode, not by name: a process that
 * execs renames its file (same inode, new name) and the new image creates
 * a new file under the old name. */
static int file_id(const char *p, struct rd_file_id *id)
{
	struct stat st;

	if (stat(p, &st) < 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

/* The slot of id in the set: where it is, or the empty slot where it
 * would go. The set must have room (idcap > nids). */
static struct rd_file_id *id_slot(struct rd_discover *d, const struct rd_file_id *id)
{
	uint64_t h = ((uint64_t)id->ino * 0x9e3779b97f4a7c15ull) ^ (uint64_t)id->dev;
	size_t i = (size_t)(h ^ (h >> 29)) & (d->idcap - 1);

	while (d->ids[i].ino && (d->ids[i].ino != id->ino || d->ids[i].dev != id->dev))
		i = (i + 1) & (d->idcap - 1);
	return &d->ids[i];
}

static int known_id(struct rd_discover *d, dev_t dev, ino_t ino)
{
	struct rd_file_id id = { dev, ino ? ino : (ino_t)-1 }; /* 0 marks empty */

	return d->idcap && id_slot(d, &id)->ino != 0;
}

static int known_file(struct rd_discover *d, const char *p)
{
	struct rd_file_id id;

	return file_id(p, &id) == 0 && known_id(d, id.dev, id.ino);
}

/* Add id to the set, growing it. Returns 0 or -1 (out of memory). */
static int add_id(struct rd_discover *d, struct rd_file_id id)
{
	struct rd_file_id *slot;

	if (!id.ino)
		id.ino = (ino_t)-1;
	if (2 * (d->nids + 1) > d->idcap) {
		struct rd_file_id *old = d->ids;
		size_t oldcap = d->idcap, cap = d->idcap ? 2 * d->idcap : 64;

		if (!(d->ids = calloc(cap, sizeof *d->ids))) {
			d->ids = old;
			return -1;
		}
		d->idcap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].ino)
				*id_slot(d, &old[i]) = old[i];
		free(old);
	}
	slot = id_slot(d, &id);
	if (!slot->ino) {
		*slot = id;
		d->nids++;
	}
	return 0;
}

/* Remember p's file as seen. Returns 0 or -1 (out of memory). */
static int remember_file(struct rd_discover *d, const char *p)
{
	struct rd_file_id id;

	if (file_id(p, &id) < 0)
		return 0;
	return add_id(d, id);
}

/* A cursor on path, or NULL with the error in *errp and "PATH: why" in
 * msd-> */
static rte_cursor *try_open(const char *path, int *errp, char *msg, size_t cap)
{
	rte_cursor *c;

	*errp = rte_cursor_open(path, &c, msg, cap);
	return *errp == RTE_OK ? c : NULL;
}

/* Add an opened cursor as a source. Returns 0 or -1 (out of memory). */
static int add_source(struct rd_discover *d, rte_cursor *c, const char *path)
{
	char *p = strdup(path);
	long pid;
	int src;

	if (!p || !keep_path(d, p) || remember_file(d, p) < 0) {
		rte_cursor_close(c);
		return -1;
	}
	rd_signals_peek(p);
	pid = rd_pid_from_ring_start(p);
	rd_filter_set_start(d->filter, (const char *const *)&p, 1); /* trace start */
	if (pid < 0)
		pid = rd_pid_from_name(p);
	if (rd_ocaml_choose(c, p, pid) < 0) { /* the names of its ids */
		rd_signals_peek(NULL);
		rte_cursor_close(c);
		return -1;
	}
	rd_signals_peek(NULL);
	/* The merge decides how many files stay mapped (rd_merge_add). */
	src = rd_merge_add(d->merge, c);
	if (src < 0)
		return -1;
	if (rd_procs_add_src(d->procs, (unsigned)src, p, pid,
	                     rte_cursor_rings(c)) < 0)
		return -1;
	return 0;
}

/* An error that --wait treats as "not there yet". */
static int transient(int err)
{
	return err == RTE_ENOENT || err == RTE_ENOTRING || err == RTE_ETRUNCATED;
}

static int waited_out(struct rd_discover *d, uint64_t t0)
{
	if (rd_signals_stop())
		return 1;
	return d->wait_secs >= 0 &&
	       (double)(rd_now_ms() - t0) >= d->wait_secs * 1000.0;
}

/* 1 if path exists and is not a regular file (a device, a FIFO, a
 * socket, a directory): it is never opened, and never waited for. */
static int not_regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* 1 if the file of cursor c was added already (the same file named twice,
 * as X and ./X, or as PID and PID.events). */
static int known_cursor(struct rd_discover *d, const rte_cursor *c)
{
	const struct stat *st = rte_cursor_stat(c);

	return known_id(d, st->st_dev, st->st_ino);
}

/* Add the opened cursor c on path unless its file is already in. */
static int add_opened(struct rd_discover *d, rte_cursor *c, const char *path)
{
	if (known_cursor(d, c)) {
		rte_cursor_close(c);
		return 0;
	}
	if (add_source(d, c, path) == 0)
		return 0;
	rd_fail(RD_EX_NOMEM, "out of memory");
	return -1;
}

/* Open the first of paths[0..n) that opens, waiting for one with --wait
 * (since t0). `what` names the input in messages, `hint` is added when
 * none exists. */
static int add_first(struct rd_discover *d, const char *const *paths, size_t n, const char *what,
                     const char *hint, uint64_t t0)
{
	char msg[700];
	int err = RTE_ENOENT;

	for (;;) {
		int last_try = !d->wait || waited_out(d, t0);

		for (size_t i = 0; i < n; i++) {
			rte_cursor *c = try_open(paths[i], &err, msg, sizeof msg);

			if (c)
				return add_opened(d, c, paths[i]);
			if (err != RTE_ENOENT && (!transient(err) || not_regular(paths[i]))) {
				rd_fail(rd_exit_of(err), "%s", msg);
				return -1;
			}
			if (err != RTE_ENOENT)
				break; /* being made: this one, not a later one */
		}
		if (rd_signals_stop())
			rd_die_of_stop(what);
		if (last_try) {
			if (err != RTE_ENOENT || (!d->wait && !hint))
				rd_fail(rd_exit_of(err), "%s", msg);
			else
				rd_fail(RD_EX_NOINPUT, "%s: %s%s", what,
				          d->wait ? "did not appear in time" : "No such file or directory",
				          hint ? hint : "");
			return -1;
		}
		rd_sleep_ms(WAIT_POLL_MS);
	}
}

/* Open one file input, waiting for it with --wait (since t0). */
static int add_file(struct rd_discover *d, const char *path, uint64_t t0)
{
	return add_first(d, &path, 1, path, NULL, t0);
}

/* Add the files of dir not added yet. *seen (if not NULL) is set to 1 if
 * a ring file that was added before is there; *bad (if not NULL) counts
 * the files reported as unreadable. Returns how many were added, or -1
 * if the directory cannot be read (after saying so unless quiet). With
 * `retry`, a file that is not a complete ring file yet (a live process is
 * still creating it) is left for the next scan instead of reported. */
static int scan_dir_seen(struct rd_discover *d, const char *dir, int quiet, int retry, int *seen,
                         int *bad)
{
	char **list, msg[700];
	size_t n;
	int added = 0, e = rd_list_dir(dir, &list, &n);

	if (e < 0) {
		if (!quiet)
			rd_fail(e == -ENOMEM ? RD_EX_NOMEM : RD_EX_NOINPUT, "%s: %s", dir,
			          strerror(-e));
		return -1;
	}
	(void)rd_procs_reserve(d->procs, n > UINT_MAX ? UINT_MAX : (unsigned)n);
	for (size_t i = 0; i < n; i++) {
		rte_cursor *c;
		int err;

		if (known_file(d, list[i])) {
			if (seen)
				*seen = 1;
			continue;
		}
		if (not_regular(list[i])) { /* once: then known */
			fprintf(stderr, "rte-read: warning: %s: not a regular file, skipped\n",
			        list[i]);
			if (remember_file(d, list[i]) < 0)
				rd_status_set(RD_EX_NOMEM);
			continue;
		}
		c = try_open(list[i], &err, msg, sizeof msg);
		if (!c) {
			if (retry && transient(err))
				continue;
			rd_fail(rd_exit_of(err), "%s", msg); /* once: now known */
			if (bad)
				++*bad;
			if (remember_file(d, list[i]) < 0)
				rd_status_set(RD_EX_NOMEM);
			continue;
		}
		if (known_cursor(d, c)) {
			rte_cursor_close(c);
			if (seen)
				*seen = 1;
		} else if (add_source(d, c, list[i]) == 0)
			added++;
		else
			rd_fail(RD_EX_NOMEM, "out of memory");
	}
	rd_free_list(list, n);
	return added;
}

int rd_discover_scan_dir(struct rd_discover *d, const char *dir, int quiet, int retry)
{
	return scan_dir_seen(d, dir, quiet, retry, NULL, NULL);
}

/* 1 if directory dir is one of the DIR inputs already added. */
static int known_dir(struct rd_discover *d, const char *dir)
{
	struct stat a, b;

	if (stat(dir, &a) < 0)
		return 0;
	for (size_t i = 0; i < d->ndirs; i++)
		if (stat(d->dirs[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 1;
	return 0;
}

/* A DIR input: its ring files now, or with --wait (since t0) once there
 * are some. */
static int add_dir(struct rd_discover *d, const char *dir, uint64_t t0)
{
	char **nd;

	if (known_dir(d, dir))
		return 0; /* the same directory twice */
	for (;;) {
		int last_try = !d->wait || waited_out(d, t0);
		size_t before = d->npaths;
		int seen = 0, bad = 0;
		int n = scan_dir_seen(d, dir, !last_try, !last_try || d->follow, &seen, &bad);

		if (n > 0 || (n == 0 && (d->npaths > before || seen)))
			break;
		if (rd_signals_stop() && d->wait)
			rd_die_of_stop(dir);
		if (last_try) {
			if (n == 0 && bad)
				rd_fail(RD_EX_NOINPUT, "%s: none of its %d ring file%s could be read (see above)",
				        dir, bad, bad == 1 ? "" : "s");
			else if (n == 0)
				rd_fail(RD_EX_NOINPUT, "%s: no ring files (*.events) in this directory",
				          dir);
			return -1;
		}
		rd_sleep_ms(WAIT_POLL_MS);
	}
	nd = realloc(d->dirs, (d->ndirs + 1) * sizeof *nd);
	if (!nd)
		return -1;
	d->dirs = nd;
	d->dirs[d->ndirs++] = (char *)dir;
	return 0;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* With --wait, an input that does not exist yet: wait (since t0) until
 * something of that name does, to tell a directory from a file. */
static void wait_exists(struct rd_discover *d, const char *in, uint64_t t0)
{
	struct stat st;

	while (d->wait && lstat(in, &st) < 0 && errno == ENOENT &&
	       !waited_out(d, t0))
		rd_sleep_ms(WAIT_POLL_MS);
}

/* A PID input: PID.events in the first directory of its search
 * (rd_input_resolve) that has it. */
static void add_pid(struct rd_discover *d, const struct rd_input *in)
{
	char what[64], hint[sizeof in->where + 200];

	snprintf(what, sizeof what, "%s.events", in->arg);
	snprintf(hint, sizeof hint,
	         " (looked in %s; is the program running with "
	         "OCAML_RUNTIME_EVENTS_START=1 under librte.so? is "
	         "OCAML_RUNTIME_EVENTS_DIR the same as its?)", in->where);
	add_first(d, (const char *const *)in->path, in->npaths,
	          in->npaths == 1 ? in->path[0] : what, hint, rd_now_ms());
}

void rd_discover_inputs(struct rd_discover *d, char **inputs, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = rd_now_ms();
		struct rd_input in;

		if (rd_input_resolve(inputs[i], d->dir, &in) < 0) {
			rd_fail(RD_EX_NOMEM, "out of memory");
			continue;
		}
		if (in.kind == RD_IN_PID) {
			add_pid(d, &in);
		} else {
			/* A path that does not exist yet: a file or a
			 * directory, once it does. */
			wait_exists(d, inputs[i], t0);
			if (is_dir(inputs[i]))
				add_dir(d, inputs[i], t0);
			else
				add_file(d, inputs[i], t0);
		}
		rd_input_free(&in);
	}
}


/* A followed file whose name now belongs to a new file (the process
 * exec'd and the new image traces again): follow the new one too.
 * Returns how many were added. */
int rd_discover_reopen_replaced(struct rd_discover *d)
{
	unsigned n = d->procs->nsrc;
	int added = 0;

	for (unsigned i = 0; i < n; i++) {
		const char *path = d->procs->src[i].path;
		char msg[700];
		rte_cursor *c;
		int err;

		if (!d->procs->src[i].stopped || known_file(d, path) ||
		    !(c = try_open(path, &err, msg, sizeof msg)))
			continue;
		if (add_source(d, c, path) == 0)
			added++;
	}
	return added;
}

/* 1 if st is the file or the directory of an input. */
int rd_discover_is_input(struct rd_discover *d, const struct stat *st)
{
	struct stat ds;

	if (known_id(d, st->st_dev, st->st_ino))
		return 1;
	for (size_t i = 0; i < d->ndirs; i++)
		if (stat(d->dirs[i], &ds) == 0 && ds.st_dev == st->st_dev &&
		    ds.st_ino == st->st_ino)
			return 1;
	return 0;
}

void rd_discover_fini(struct rd_discover *d)
{
	rd_free_list(d->paths, d->npaths);
	free(d->ids);
	free(d->dirs);
	d->paths = NULL;
	d->ids = NULL;
	d->dirs = NULL;
}
