/*
 * wrapped: the main thread writes enough events (rte_int of "wrap.tick",
 * when librte.so is preloaded) to wrap its ring many times, overwriting
 * the module events of the start, then crashes in wrapped_crash(): the
 * stack must still be symbolised (a fatal crash records the modules
 * again).
 */
#include <stdio.h>

extern int rte_register(const char *name, int type) __attribute__((weak));
extern void rte_int(int id, long long value) __attribute__((weak));

static volatile int *volatile g_null;

void wrapped_crash(void);

void wrapped_crash(void)
{
	*g_null = 1;
}

int main(void)
{
	int id = -1;

	if (rte_register && rte_int)
		id = rte_register("wrap.tick", 1 /* RTE_TYPE_INT */);
	for (long long i = 0; id >= 0 && i < 100000; i++)
		rte_int(id, i);
	printf("wrapped\n");
	fflush(stdout);
	wrapped_crash();
	return 0;
}
