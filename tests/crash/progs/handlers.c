/*
 * handlers MODE: a program's own SIGSEGV handler, on the stack it asked
 * for.
 *   handlers bigstack   handler installed without SA_ONSTACK that uses
 *                       100 KB of stack (on the program's 8 MB stack),
 *                       then _exit(3); main stores through NULL.
 *   handlers smallalt [BYTES]
 *                       an alternate stack of the program's own of BYTES
 *                       (default 3 KiB; if the kernel refuses it,
 *                       sysconf(_SC_MINSIGSTKSZ) + 1 KiB) above a guard
 *                       page, and a handler with SA_ONSTACK
 *                       that writes a line and _exit(4); main stores
 *                       through NULL.
 *   handlers smallover [BYTES]
 *                       the same alternate stack and handler; main
 *                       overflows its stack.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int *volatile g_null;

static void on_big(int sig)
{
	volatile char buf[100 * 1000];

	(void)sig;
	memset((char *)buf, 1, sizeof(buf));
	_exit(buf[sig] == 1 ? 3 : 9);
}

static void on_small(int sig)
{
	static const char msg[] = "handler on the small stack\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(9);
	_exit(4);
}

static int dive(volatile char *p, long depth)
{
	volatile char pad[1024];

	if (depth == 0)
		return 0;
	pad[0] = p ? p[0] : 0;
	return dive(pad, depth - 1) + pad[1];
}

static void small_alt(size_t size)
{
	long min = sysconf(_SC_MINSIGSTKSZ);
	stack_t ss;

	char *base = mmap(NULL, 128 << 10, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	/* A guard page right below: a handler that needs more than the
	 * stack faults instead of writing over other memory. */
	if (base == MAP_FAILED || mprotect(base, 4096, PROT_NONE) < 0)
		exit(2);
	ss.ss_size = size;
	ss.ss_sp = base + 4096;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) < 0) {
		ss.ss_size = (size_t)(min > 0 ? min : MINSIGSTKSZ) + 1024;
		ss.ss_flags = 0;
	}
	if (sigaltstack(&ss, NULL) < 0) {
		perror("sigaltstack");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	const char *mode = argc > 1 ? argv[1] : "";

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (!strcmp(mode, "bigstack")) {
		sa.sa_handler = on_big;
	} else if (!strcmp(mode, "smallalt") || !strcmp(mode, "smallover")) {
		small_alt(argc > 2 ? (size_t)atol(argv[2]) : 3 * 1024);
		sa.sa_handler = on_small;
		sa.sa_flags = SA_ONSTACK;
	} else {
		return 2;
	}
	if (sigaction(SIGSEGV, &sa, NULL) < 0)
		return 2;
	printf("mode %s\n", mode);
	fflush(stdout);
	if (!strcmp(mode, "smallover"))
		return dive(NULL, 1L << 40);
	*g_null = 1;
	return 0;
}
