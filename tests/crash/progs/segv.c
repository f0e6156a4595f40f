/* segv: a NULL store three calls deep (level_one -> level_two ->
 * level_three). Built -O0 -fno-inline so each function keeps its frame. */
#include <stdio.h>

static volatile int *volatile g_null;

void level_three(int x);
void level_two(int x);
void level_one(int x);

void level_three(int x)
{
	*g_null = x; /* SIGSEGV, SEGV_MAPERR at address 0 */
}

void level_two(int x)
{
	level_three(x + 1);
	printf("not reached %d\n", x);
}

void level_one(int x)
{
	level_two(x + 1);
	printf("not reached %d\n", x);
}

int main(void)
{
	printf("before the crash\n");
	fflush(stdout);
	level_one(1);
	printf("not reached\n");
	return 0;
}
