/*
 * drain_files.c - the files of the live drain (drain.c): which names of
 * LIVE are ring files, a new name followed (or a known file renamed),
 * the directory listed, the names inotify reports, and the cursor and
 * spool of a file opened once it is a ring file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alive.h"
#include "capture.h"
#include "drain.h"
#include "drain_int.h"
#include "rte/consumer.h"

int drain_ring_name(const char *n)
{
	size_t len = strlen(n);

	return n[0] != '.' && len > 7 && len < 256 && !strcmp(n + len - 7, ".events");
}

static long pid_of(const char *n)
{
	long pid = 0;
	int digits = 0;

	for (; *n >= '0' && *n <= '9' && digits < 9; n++, digits++)
		pid = pid * 10 + (*n - '0');
	return digits ? pid : -1;
}

/* Open the cursor and the spool of t, if its file is a ring file now. */
void drain_try_open(struct drain *d, struct tfile *t)
{
	char path[64], sp[320];

	snprintf(path, sizeof path, "/proc/self/fd/%d", t->fd);
	if (rte_cursor_open(path, &t->c, t->err, sizeof t->err) != RTE_OK) {
		t->c = NULL;
		return;
	}
	t->rings = rte_cursor_rings(t->c);
	t->failed = calloc(t->rings, 1);
	snprintf(sp, sizeof sp, "%s/.%llu.spool", d->live, (unsigned long long)t->ino);
	t->sp = t->failed ? cap_open(sp, t->rings) : NULL;
	if (!t->sp) {
		snprintf(t->err, sizeof t->err, "%s: cannot make its spool: %s", t->name,
		         strerror(errno));
		rte_cursor_close(t->c);
		t->c = NULL;
		free(t->failed);
		t->failed = NULL;
	}
}

/* A name that appeared in LIVE: a new file to follow, or a known one
 * renamed (an exec moved it to PID.execN.events). */
static void consider(struct drain *d, const char *name)
{
	struct tfile *t, **nf;
	struct stat st;
	int fd;

	if (!drain_ring_name(name))
		return;
	fd = openat(d->live_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto skip;
	for (size_t i = 0; i < d->nf; i++)
		if (d->f[i]->dev == st.st_dev && d->f[i]->ino == st.st_ino) {
			snprintf(d->f[i]->name, sizeof d->f[i]->name, "%s", name);
			goto skip;
		}
	if (d->nf == d->capf) {
		size_t cap = d->capf ? 2 * d->capf : 64;

		if (!(nf = realloc(d->f, cap * sizeof *nf)))
			goto skip;
		d->f = nf;
		d->capf = cap;
	}
	if (!(t = calloc(1, sizeof *t)))
		goto skip;
	snprintf(t->name, sizeof t->name, "%s", name);
	t->fd = fd;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->pid = pid_of(name);
	alive_maps_id(t->fd, t->dev, t->ino, &t->mdev, &t->mino);
	d->f[d->nf++] = t;
	drain_try_open(d, t);
	return;
skip:
	close(fd);
}

void drain_scan(struct drain *d)
{
	int fd = openat(d->live_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir)))
		consider(d, e->d_name);
	closedir(dir);
}

/* The names inotify has for us; a lost event (a full queue): a scan. */
void drain_take_events(struct drain *d)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	if (d->ino_fd < 0) {
		drain_scan(d);
		return;
	}
	while ((n = read(d->ino_fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->mask & IN_Q_OVERFLOW)
				drain_scan(d);
			else if (e->len)
				consider(d, e->name);
			p += sizeof *e + e->len;
		}
	}
}

