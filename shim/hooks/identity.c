/*
 * hooks/identity.c - the program's setuid, seteuid, setreuid, setresuid,
 * setgid, setegid, setregid and setresgid.
 *
 * A process traced as one user that becomes another (a root daemon that
 * drops privileges, a fork child that switches user before exec) may no
 * longer be allowed to remove its file from the directory: without
 * PRESERVE it would be left there for good. So before a change of the
 * effective user or group, the new identity is judged as the kernel
 * would judge an unlink by it: root may; anyone else needs write and
 * search permission on the directory by its mode bits (owner, group with
 * the current supplementary groups, other), and, where the directory is
 * sticky, to own it or the file. If it may not, the process stands aside
 * first, as before exec (ring_stop, the file removed; RTE_LOG notes it,
 * the program's stderr hears nothing) and tracing stays stopped; if the
 * change then fails, the file is back and tracing goes on. ACLs are not
 * read: a directory that only an ACL opens to the new user loses the
 * trace, never the file. With PRESERVE nothing is done (the file is kept
 * anyway).
 *
 * glibc applies a change to every thread of the process (its SIGSETXID
 * broadcast): the wrapper runs once, in the calling thread, around it.
 * A vfork child (Python's _posixsubprocess) shares our memory: it is not
 * the process that owns the file, and only the real function is called.
 * setgroups, setfsuid and capability changes are not followed.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "real.h"
#include "tracer.h"

#define KEEP ((unsigned)-1) /* an id argument meaning "unchanged" */

static int in_groups(gid_t g)
{
	gid_t list[256];
	int n = getgroups(256, list);

	for (int i = 0; i < n; i++)
		if (list[i] == g)
			return 1;
	return 0;
}

/* 1 if a process with effective ids euid, egid may unlink the file f. */
static int may_remove_as(const struct rte_file *f, uid_t euid, gid_t egid)
{
	char dir[PATH_MAX];
	struct stat d, st;
	const char *slash = strrchr(f->path, '/');
	unsigned bits;

	if (euid == 0 || !slash || slash == f->path)
		return 1;
	memcpy(dir, f->path, (size_t)(slash - f->path));
	dir[slash - f->path] = '\0';
	if (stat(dir, &d) < 0 || lstat(f->path, &st) < 0)
		return 1; /* cannot tell: as before */
	if (d.st_uid == euid)
		bits = (d.st_mode >> 6) & 7;
	else if (d.st_gid == egid || in_groups(d.st_gid))
		bits = (d.st_mode >> 3) & 7;
	else
		bits = d.st_mode & 7;
	if ((bits & 3) != 3)
		return 0;
	return !(d.st_mode & S_ISVTX) || euid == d.st_uid || euid == st.st_uid;
}

/* Before a change to effective ids euid, egid (KEEP: unchanged): 1 if
 * tracing stood aside (see rte_tracer_identity_begin). */
static int before(uid_t euid, gid_t egid)
{
	int saved = errno, r = 0;

	if (euid == KEEP)
		euid = geteuid();
	if (egid == KEEP)
		egid = getegid();
	/* No per-thread state is touched (a vfork child would change its
	 * parent's); with PRESERVE the file stays whatever happens. */
	if ((euid == geteuid() && egid == getegid()) ||
	    rte_tracer_config()->preserve)
		return 0;
	if (rte_tracer_owns_process() &&
	    !may_remove_as(rte_tracer_file(), euid, egid))
		r = rte_tracer_identity_begin();
	errno = saved;
	return r;
}

static int after(int token, int r)
{
	int saved = errno;

	if (token && r < 0)
		rte_tracer_identity_failed();
	errno = saved;
	return r;
}

/* setuid(u) by a privileged process sets every user id; otherwise only
 * the effective one. Either way the effective id becomes u. */
#define WRAP(name, params, args, euid, egid)                                  \
	RTE_EXPORT int name params                                            \
	{                                                                     \
		int t;                                                        \
		rte_real_resolve();                                           \
		if (!rte_real.name) {                                         \
			errno = ENOSYS;                                       \
			return -1;                                            \
		}                                                             \
		t = before(euid, egid);                                       \
		return after(t, rte_real.name args);                          \
	}

WRAP(setuid, (uid_t u), (u), u, KEEP)
WRAP(seteuid, (uid_t e), (e), e, KEEP)
WRAP(setreuid, (uid_t r, uid_t e), (r, e), e, KEEP)
WRAP(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s), e, KEEP)
WRAP(setgid, (gid_t g), (g), KEEP, g)
WRAP(setegid, (gid_t e), (e), KEEP, e)
WRAP(setregid, (gid_t r, gid_t e), (r, e), KEEP, e)
WRAP(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s), KEEP, e)
