/*
 * profile_wall.c - the wall-clock mode's samples (RTE_PROFILE_MODE=wall,
 * rte/profile.h RTE_SAMPLE_WALL, RTE_SAMPLE_BLOCKED) for profile.c: the
 * `[blocked:CALL]` frame that ends a blocked sample's stack, the system
 * call names it uses, the ring of the thread a sampler's sample names,
 * and --state.
 */
#include <stdio.h>
#include <string.h>

#include "profile_int.h"

int rd_prof_state_opt; /* RD_STATE_* */

int rd_prof_parse_state(const char *s)
{
	if (!strcmp(s, "running"))
		return RD_STATE_RUNNING;
	if (!strcmp(s, "blocked"))
		return RD_STATE_BLOCKED;
	return -1;
}

/* The blocking system calls by number (the machine's table). */
static const struct { int nr; const char *name; } g_calls[] = {
#if defined(__x86_64__)
	{ 0, "read" }, { 1, "write" }, { 7, "poll" }, { 17, "pread64" },
	{ 18, "pwrite64" }, { 19, "readv" }, { 20, "writev" },
	{ 23, "select" }, { 34, "pause" }, { 35, "nanosleep" },
	{ 42, "connect" }, { 43, "accept" }, { 44, "sendto" },
	{ 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" },
	{ 61, "wait4" }, { 65, "semop" }, { 69, "msgsnd" }, { 70, "msgrcv" },
	{ 72, "fcntl" }, { 73, "flock" }, { 74, "fsync" }, { 75, "fdatasync" },
	{ 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" }, { 202, "futex" },
	{ 230, "clock_nanosleep" }, { 232, "epoll_wait" }, { 247, "waitid" },
	{ 257, "openat" }, { 270, "pselect6" }, { 271, "ppoll" },
	{ 281, "epoll_pwait" }, { 288, "accept4" }, { 299, "recvmmsg" },
	{ 307, "sendmmsg" }, { 426, "io_uring_enter" }, { 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
#elif defined(__aarch64__)
	{ 63, "read" }, { 64, "write" }, { 67, "pread64" }, { 68, "pwrite64" },
	{ 72, "pselect6" }, { 73, "ppoll" }, { 98, "futex" },
	{ 101, "nanosleep" }, { 115, "clock_nanosleep" }, { 137, "rt_sigtimedwait" },
	{ 202, "accept" }, { 203, "connect" }, { 207, "recvfrom" },
	{ 212, "recvmsg" }, { 260, "wait4" }, { 22, "epoll_pwait" },
	{ 95, "waitid" }, { 242, "accept4" },
#endif
};

/* "[blocked:NAME]", "[blocked:syscall N]" or "[blocked]" (nr + 1 == 0:
 * not in a system call) into buf. */
static const char *blocked_name(unsigned nr1, char *buf, size_t len)
{
	if (!nr1)
		return "[blocked]";
	for (size_t i = 0; i < sizeof g_calls / sizeof g_calls[0]; i++)
		if (g_calls[i].nr == (int)nr1 - 1) {
			snprintf(buf, len, "[blocked:%s]", g_calls[i].name);
			return buf;
		}
	snprintf(buf, len, "[blocked:syscall %u]", nr1 - 1);
	return buf;
}

int64_t rd_prof_blocked_loc(struct rd_prof *p, uint32_t flags)
{
	unsigned nr1 = flags >> RTE_SAMPLE_SYSCALL_SHIFT & 0xffffu;
	struct plockey k;
	char b[48];
	int64_t i, fi;
	int isnew;

	/* A key no code address has (loc_of's: src of a file, ret 0 or 1). */
	memset(&k, 0, sizeof k);
	k.src = UINT32_MAX;
	k.pc = nr1;
	k.ret = 2;
	if (rd_prof_loc_room(p) < 0)
		return -1;
	i = ptab_get(&p->locs, &k, sizeof k, &isnew);
	if (i < 0 || !isnew)
		return i;
	memset(&p->loc[i], 0, sizeof p->loc[i]);
	if ((fi = rd_prof_func(p, blocked_name(nr1, b, sizeof b), NULL)) < 0)
		return -1;
	p->loc[i].func = (uint32_t)fi;
	return i;
}

const struct rd_thread *rd_prof_thread_of_tid(const struct rd_src *s,
                                              long tid, unsigned *ring)
{
	for (unsigned i = 0; s && i < s->rings; i++)
		if (s->threads[i].tid == tid) {
			*ring = i;
			return &s->threads[i];
		}
	return NULL;
}
