/* overflow: unbounded recursion in dive() until the stack runs out. The
 * handler can only run on an alternate signal stack. */
#include <stdio.h>

void dive(unsigned depth);
void start_dive(void);

static volatile unsigned g_sink;
static volatile int g_forever = 1; /* the compiler cannot see the end */

void dive(unsigned depth)
{
	volatile char pad[256];

	pad[0] = (char)depth;
	if (g_forever)
		dive(depth + 1);
	g_sink += pad[0]; /* after the call: no tail call */
}

void start_dive(void)
{
	dive(0);
}

int main(void)
{
	printf("diving\n");
	fflush(stdout);
	start_dive();
	return 0;
}
