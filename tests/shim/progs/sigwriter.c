/*
 * sigwriter.c - events written from signal handlers while the interrupted
 * thread writes too: a timer signal handler writes "s.sig" while the main
 * loop writes "s.main" and custom events. The file must decode cleanly
 * (a handler that interrupts a write on the same thread drops its event
 * instead of corrupting the ring). Prints "done".
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "weak.h"

static int g_sig = -1, g_main = -1, g_custom = -1;
static volatile sig_atomic_t g_ticks;

static void on_alarm(int s)
{
	(void)s;
	weak_int(g_sig, g_ticks++);
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it = {{0, 100}, {0, 100}};
	char buf[200];

	g_sig = weak_register_int("s.sig");
	g_main = weak_register_int("s.main");
	if (RTE_LOADED())
		g_custom = rte_register("s.custom", RTE_TYPE_CUSTOM);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < 20000000 && g_ticks < 300; i++) {
		/* Work outside the shim too, so that signals land both inside
		 * and outside writes. */
		for (volatile int k = 0; k < 50; k++)
			;
		weak_int(g_main, i);
		if (RTE_LOADED() && i % 16 == 0)
			rte_custom(g_custom, buf, (size_t)(i % 200));
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("done\n");
	return 0;
}
