/*
 * shape.c - a program whose heap has a known shape (issue 28): a 48 MiB
 * burst (48 blocks of 1 MiB from burst()) freed again, then 100 000
 * temporary allocations of 64..127 bytes (each freed right after, from
 * temporary()), then 8 MiB leaked by leak_here() (8192 blocks of 1 KiB).
 * Prints what it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)

static void *blocks[48];
void *volatile sink;

void burst(void)
{
	for (int i = 0; i < 48; i++) {
		blocks[i] = malloc(MIB);
		memset(blocks[i], 1, MIB);
	}
	for (int i = 0; i < 48; i++)
		free(blocks[i]);
}

void temporary(void)
{
	for (int i = 0; i < 100000; i++) {
		char *p = malloc(64 + (size_t)(i % 64));

		p[0] = (char)i;
		sink = p;
		free(p);
	}
}

void leak_here(void)
{
	for (int i = 0; i < 8192; i++) {
		char *p = malloc(1024);

		p[0] = 1;
		sink = p;
	}
}

int main(void)
{
	burst();
	temporary();
	leak_here();
	printf("burst 48 MiB, 100000 temporaries, leaked 8 MiB\n");
	return 0;
}
