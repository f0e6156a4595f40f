/*
 * recover.c - receives SIGSEGV (raise) and survives it: its own handler
 * counts it and returns. Exit 0 if the handler ran, 1 if not. Under the
 * shim, the crash recorder writes a non-fatal rte.crash and passes the
 * signal on to this handler.
 */
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t g_seen;

static void on_segv(int sig)
{
	(void)sig;
	g_seen = 1;
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 1;
	raise(SIGSEGV);
	return g_seen ? 0 : 1;
}
