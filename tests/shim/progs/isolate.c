/*
 * isolate.c - processes that share something with the traced one, and
 * what the shim must not do to it (tests/shim/isolation.sh; its raw
 * children with threads are forkways.c's "raw WAY thread").
 *
 *   isolate vfork       handlers for SIGSEGV (signal), SIGABRT (sigaction)
 *                       and SIGTERM (bsd_signal); vfork; the child reads
 *                       SIGSEGV's old action while resetting it with
 *                       signal(), SIGABRT's with sigaction() and SIGTERM's
 *                       with sysv_signal(), names itself "vchild" (prctl,
 *                       then pthread_setname_np), then execs /bin/true. The
 *                       parent prints "child saw h h h" (the old handlers
 *                       the child was shown: h for the program's, else
 *                       "other"), then "parent has h h h" (its own
 *                       actions), then raises SIGABRT: its handler prints
 *                       "handled". Also "vfork child <pid>".
 *   isolate dlopen LIB  dlopen(LIB) (librte.so, not preloaded), register
 *                       and write "w.main" = 1 through it, fork a child
 *                       that writes "w.child" = 1 and exits, then exit.
 *                       Prints "child <pid>" (and "no rte" if LIB has no
 *                       rte_register).
 *
 * Exit status 0 when everything worked, 1 otherwise (with a line on stderr).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "children.h"
#include "weak.h"

sighandler_t bsd_signal(int sig, sighandler_t h);

static int die(const char *what)
{
	fprintf(stderr, "isolate: %s: %s\n", what, strerror(errno));
	return 1;
}

/* ---- vfork ------------------------------------------------------------------- */

static void on_sig(int sig)
{
	static const char msg[] = "handled\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do */
	}
}

static const char *which(sighandler_t h)
{
	return h == on_sig ? "h" : h == SIG_DFL ? "dfl" : "other";
}

/* Written by the vfork child (it shares our memory): what it was shown. */
static sighandler_t g_seen[3];

static int vforked(void)
{
	struct sigaction sa, old;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	if (signal(SIGSEGV, on_sig) == SIG_ERR ||
	    sigaction(SIGABRT, &sa, NULL) < 0 ||
	    bsd_signal(SIGTERM, on_sig) == SIG_ERR)
		return die("handlers");
	fflush(stdout);
	pid = vfork();
	if (pid < 0)
		return die("vfork");
	if (pid == 0) {
		/* What CPython's _posixsubprocess does before exec. */
		sa.sa_handler = SIG_DFL;
		g_seen[0] = signal(SIGSEGV, SIG_DFL);
		g_seen[1] = sigaction(SIGABRT, &sa, &old) < 0 ? SIG_ERR
		                                              : old.sa_handler;
		g_seen[2] = sysv_signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_NAME, "vchild", 0, 0, 0);
		pthread_setname_np(pthread_self(), "vchild");
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (!wait_ok(pid))
		return die("child");
	printf("vfork child %ld\n", (long)pid);
	printf("child saw %s %s %s\n", which(g_seen[0]), which(g_seen[1]),
	       which(g_seen[2]));
	printf("parent has");
	for (int i = 0; i < 3; i++) {
		static const int sigs[3] = {SIGSEGV, SIGABRT, SIGTERM};

		if (sigaction(sigs[i], NULL, &old) < 0)
			return die("sigaction");
		printf(" %s", which(old.sa_handler));
	}
	printf("\n");
	fflush(stdout);
	raise(SIGABRT);
	return 0;
}

/* ---- librte.so by dlopen ---------------------------------------------------------- */

static int dlopened(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	int (*reg)(const char *, enum rte_type);
	void (*put)(int, int64_t);
	int id_m, id_c;
	pid_t pid;

	if (!h) {
		fprintf(stderr, "isolate: dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&reg = dlsym(h, "rte_register");
	*(void **)&put = dlsym(h, "rte_int");
	if (!reg || !put) {
		printf("no rte\n");
		return 0;
	}
	id_m = reg("w.main", RTE_TYPE_INT);
	id_c = reg("w.child", RTE_TYPE_INT);
	put(id_m, 1);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		put(id_c, 1);
		exit(0);
	}
	if (!wait_ok(pid))
		return die("child");
	printf("child %ld\n", (long)pid);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int r = 2;

	if (!strcmp(mode, "vfork"))
		r = vforked();
	else if (!strcmp(mode, "dlopen") && argc > 2)
		r = dlopened(argv[2]);
	if (r == 2)
		fprintf(stderr, "usage: isolate vfork|dlopen LIB\n");
	fflush(stdout);
	return r;
}
