/*
 * leak.c - leaks LEAKS blocks of LEAK_BYTES from leak_here() (and frees
 * everything else it allocates), so that the sampled allocations still
 * live at exit are exactly those. Built without PIE, inlining or frame
 * pointer omission: the test finds leak_here's address range with nm.
 */
#include <stdlib.h>
#include <string.h>

#define LEAKS 4
#define LEAK_BYTES (1 << 20)

static void *kept[LEAKS];

void *leak_here(size_t n);
void *leak_here(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

static void churn(void)
{
	for (int i = 0; i < 20000; i++) {
		void *p = malloc((size_t)(16 + i % 1000));
		void *q = calloc(1, 4096);

		free(p);
		free(q);
	}
}

int main(void)
{
	churn();
	for (int i = 0; i < LEAKS; i++)
		kept[i] = leak_here(LEAK_BYTES);
	churn();
	/* Leaked: the pointers are dropped. */
	memset(kept, 0, sizeof(kept));
	return 0;
}
