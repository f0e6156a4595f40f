/*
 * stale.c - the rule of stale.h: names, /proc/PID/stat, /proc/PID/maps
 * lines. No allocation and no stdio: librte.so runs it at a traced
 * process's start, perhaps from a fork child.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "stale.h"
#include "strbuf.h"

/* Skip 1..max decimal (or lowercase hex) digits; NULL if there is none. */
static const char *digits(const char *s, int hex, int max)
{
	int n = 0;

	while (n < max && (hex ? isxdigit((unsigned char)s[n]) &&
	                                 !isupper((unsigned char)s[n])
	                       : isdigit((unsigned char)s[n])))
		n++;
	return n ? s + n : NULL;
}

enum rte_name_kind rte_name_classify(const char *name, long *pid)
{
	const char *p;

	*pid = 0;
	if (name[0] != '.') { /* <pid>.events or <pid>.exec<N>.events */
		if (!(p = digits(name, 0, 9)))
			return RTE_NAME_OTHER;
		if (!strncmp(p, ".exec", 5) && !(p = digits(p + 5, 0, 9)))
			return RTE_NAME_OTHER;
		if (strcmp(p, ".events"))
			return RTE_NAME_OTHER;
		*pid = atol(name);
		return RTE_NAME_RING;
	}
	if (!(p = digits(name + 1, 0, 9)))
		return RTE_NAME_OTHER;
	*pid = atol(name + 1);
	if (!strcmp(p, ".events.exec"))
		return RTE_NAME_EXEC;
	if (*p == '.' && digits(p + 1, 1, 8) == p + 9 && /* 8 hex digits */
	    !strcmp(p + 9, ".events.tmp"))
		return RTE_NAME_TMP;
	*pid = 0;
	return RTE_NAME_OTHER;
}

int rte_proc_stat(long pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	struct rte_sb b;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -1;
	rte_sb_init(&b, path, sizeof(path));
	rte_sb_str(&b, "/proc/");
	rte_sb_uint(&b, (unsigned long long)pid, 10, 0);
	rte_sb_str(&b, "/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	/* Fields 3.. follow ") "; the start time is the 20th of them. */
	p += 2;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*start = strtoull(p, NULL, 10);
	return 0;
}

int rte_proc_dead_state(char s)
{
	return s == 'Z' || s == 'X' || s == 'x';
}

/* Nanoseconds to add to a CLOCK_REALTIME time to get CLOCK_BOOTTIME. */
static int64_t realtime_to_boottime(void)
{
	struct timespec r, b;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &b);
	return ((int64_t)b.tv_sec - r.tv_sec) * 1000000000 +
	       (b.tv_nsec - r.tv_nsec);
}

int rte_proc_started_after(unsigned long long start, uint64_t t)
{
	long hz = sysconf(_SC_CLK_TCK);
	int64_t bt = (int64_t)t + realtime_to_boottime();
	int64_t st;

	if (hz <= 0 || t == 0)
		return 0;
	/* The start time is rounded down to a tick: the process started in
	 * [st, st + tick). A 20 ms margin covers a stepped clock's jitter. */
	st = (int64_t)(start * (1000000000ull / (unsigned long long)hz));
	return st > bt + 20000000;
}

int rte_pid_gone_for(long pid, uint64_t changed_ns)
{
	char state;
	unsigned long long start;

	if (pid <= 0 || rte_proc_stat(pid, &state, &start) < 0 ||
	    rte_proc_dead_state(state))
		return 1;
	return rte_proc_started_after(start, changed_ns);
}

uint64_t rte_stat_changed_ns(const struct stat *st)
{
	uint64_t c = (uint64_t)st->st_ctim.tv_sec * 1000000000u +
	             (uint64_t)st->st_ctim.tv_nsec;
	uint64_t m = (uint64_t)st->st_mtim.tv_sec * 1000000000u +
	             (uint64_t)st->st_mtim.tv_nsec;

	return c < m ? c : m;
}

static const char *hex(const char *s, unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 16);
	return end == s ? NULL : end;
}

int rte_maps_line(const char *line, unsigned long long *lo,
                  unsigned long long *hi, struct rte_maps_file *id)
{
	unsigned long long maj, min, ino, off;
	const char *p = line, *perm;
	char *end;

	/* lo-hi perm offset maj:min inode [path] */
	if (!(p = hex(p, lo)) || *p++ != '-' || !(p = hex(p, hi)) || *p++ != ' ')
		return -1;
	perm = p;
	if (strlen(p) < 5 || p[4] != ' ')
		return -1;
	p += 5;
	if (!(p = hex(p, &off)) || *p++ != ' ' || !(p = hex(p, &maj)) ||
	    *p++ != ':' || !(p = hex(p, &min)) || *p++ != ' ')
		return -1;
	ino = strtoull(p, &end, 10);
	if (end == p || ino == 0)
		return -1;
	id->dev = makedev((unsigned)maj, (unsigned)min);
	id->ino = (ino_t)ino;
	return perm[1] == 'w' && perm[3] == 's';
}
