/* abrt: abort() three calls deep (abort_one -> abort_two -> abort_three). */
#include <stdio.h>
#include <stdlib.h>

void abort_three(int x);
void abort_two(int x);
void abort_one(int x);

void abort_three(int x)
{
	if (x > 0)
		abort();
}

void abort_two(int x)
{
	abort_three(x + 1);
	printf("not reached %d\n", x);
}

void abort_one(int x)
{
	abort_two(x + 1);
	printf("not reached %d\n", x);
}

int main(void)
{
	printf("before abort\n");
	fflush(stdout);
	abort_one(1);
	return 0;
}
