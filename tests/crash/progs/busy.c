/*
 * busy: three threads write events as fast as they can (rte_int of
 * "busy.tick" when librte.so is preloaded, nothing otherwise) while a
 * fourth crashes in crash_while_busy(): the crash report must show the
 * last events of every ring.
 */
#include <pthread.h>
#include <stdio.h>

extern int rte_register(const char *name, int type) __attribute__((weak));
extern void rte_int(int id, long long value) __attribute__((weak));

static volatile int *volatile g_null;
static int g_tick = -1;
static int g_started; /* atomic: workers that wrote their first events */

void crash_while_busy(void);

void crash_while_busy(void)
{
	*g_null = 1;
}

static void *worker(void *arg)
{
	long long i = 0, base = (long long)(size_t)arg * 1000000000LL;

	for (;; i++) {
		if (g_tick >= 0)
			rte_int(g_tick, base + i);
		if (i == 1000)
			/* Release: pairs with the acquire in main(). */
			__atomic_fetch_add(&g_started, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	if (rte_register && rte_int)
		g_tick = rte_register("busy.tick", 1 /* RTE_TYPE_INT */);
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 2;
	/* Acquire: pairs with the workers' release increments. */
	while (__atomic_load_n(&g_started, __ATOMIC_ACQUIRE) < 3)
		;
	printf("all busy\n");
	fflush(stdout);
	crash_while_busy();
	return 0;
}
