/*
 * prof/perf.c - the perf_event clock of the CPU profiler (perf.h).
 *
 * The kernel's software cpu-clock event of one thread runs an hrtimer
 * while that thread is on a CPU, so it fires at the rate asked (up to
 * 10 kHz here) where the POSIX CPU-time timer is bound to the scheduler
 * tick (CONFIG_HZ, 250 Hz on many kernels). Each overflow is delivered as
 * a signal to the owner of the descriptor's O_ASYNC notification: the
 * thread itself (F_OWNER_TID), with the profiler's signal (F_SETSIG) and
 * si_code POLL_IN, si_fd the descriptor. No ring buffer is mapped: the
 * sample is the signal, the stack is walked by the handler as for the
 * timer. rte_prof_choose_clock: RTE_PROFILE_CLOCK read and tried once.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd.h"
#include "log.h"
#include "perf.h"
#include "rte/profile.h"

int rte_perf_open(unsigned hz, int sig, pid_t tid, uint64_t *id)
{
	struct perf_event_attr a;
	struct f_owner_ex own = {F_OWNER_TID, tid};
	int fd, fl, e;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = hz ? 1000000000u / hz : 1000000u;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.wakeup_events = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
	                  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Moved first: the notification names the descriptor it was set on. */
	fd = rte_fd_high(fd);
	if (fd < 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETOWN_EX, &own) < 0 ||
	    fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_ASYNC) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ID, id) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int rte_perf_ours(int fd, int sig, uint64_t id)
{
	uint64_t now = 0;

	return fd >= 0 && fcntl(fd, F_GETSIG) == sig &&
	       ioctl(fd, PERF_EVENT_IOC_ID, &now) == 0 && now == id;
}

int rte_perf_enable(int fd, int on)
{
	return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
	             0);
}

const char *rte_perf_why(int e, char *buf, unsigned len)
{
	char p[16] = "?";
	int fd = open("/proc/sys/kernel/perf_event_paranoid",
	              O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, p, sizeof(p) - 1);

		close(fd);
		p[n > 0 ? n : 0] = 0;
		if (n > 0 && p[n - 1] == '\n')
			p[n - 1] = 0;
	}
	if (e == EACCES || e == EPERM)
		snprintf(buf, len, "perf_event_open: %s (perf_event_paranoid "
		         "%s; 2 or less allows self-profiling; or a seccomp "
		         "filter)", strerrordesc_np(e), p);
	else
		snprintf(buf, len, "perf_event_open: %s", strerrordesc_np(e));
	return buf;
}

uint32_t rte_prof_choose_clock(const char *clk, unsigned hz,
                               int sig, int *perf)
{
	uint32_t clock;
	char why[160];
	uint64_t id;
	int fd;

	*perf = 0;
	clock = 0;
	/* The default says nothing (the summary names it): rte-run shows
	 * its RTE_LOG file, one line per process of a tree. */
	if (!clk || !*clk || !strcmp(clk, "timer"))
		return clock;
	if (strcmp(clk, "perf")) {
		rte_warn(NULL, "RTE_PROFILE_CLOCK: ignoring '%.32s' (timer or "
		         "perf); profiling by the timer", clk);
		return clock;
	}
	if (hz > RTE_PERF_HZ_MAX) {
		clock = RTE_SAMPLE_PERF_RATE;
		rte_warn(NULL, "RTE_PROFILE: %u Hz by the CPU-time timer: the "
		         "perf clock goes up to %u Hz", hz, RTE_PERF_HZ_MAX);
		return clock;
	}
	fd = rte_perf_open(hz, sig, gettid(), &id);
	if (fd < 0) {
		int e = errno;

		clock = RTE_SAMPLE_PERF_FAIL |
		          (uint32_t)(e & 0xff) << RTE_SAMPLE_WHY_SHIFT;
		rte_warn(NULL, "RTE_PROFILE: %u Hz by the CPU-time timer (tick-"
		         "bound): %s", hz, rte_perf_why(e, why, sizeof(why)));
		return clock;
	}
	close(fd);
	*perf = 1;
	clock = RTE_SAMPLE_PERF;
	/* Not a warning: on stderr it would be in the program's output. */
	if (rte_log_to_file())
		rte_warn(NULL, "RTE_PROFILE: %u Hz by the perf_event cpu-clock "
		         "(RTE_PROFILE_CLOCK=perf; one descriptor per thread, "
		         "%d or above)", hz, RTE_FD_MIN);
	return clock;
}
