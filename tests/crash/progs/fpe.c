/* fpe: an integer division by zero in divide_here (SIGFPE, FPE_INTDIV). */
#include <stdio.h>

static volatile int g_zero;

int divide_here(int x);

int divide_here(int x)
{
	return x / g_zero;
}

int main(void)
{
	printf("dividing\n");
	fflush(stdout);
	printf("%d\n", divide_here(7));
	return 0;
}
