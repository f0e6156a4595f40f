/*
 * oldkernel.c - run a command as on an older kernel or file system
 * (tests/shim/host.sh): a seccomp filter makes every call of the named
 * system calls fail with ENOSYS, then CMD is executed (the filter stays
 * for it and its children).
 *
 *   oldkernel [-d CALL[,CALL...]] CMD ARG...
 *
 * CALL: close_range (the default: a kernel before Linux 5.9) or
 * renameat2 (before 3.15, or a file system without it).
 * Exit status 2 if the filter cannot be installed or a CALL is unknown,
 * 127 if CMD cannot be executed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_CALLS 4

static const struct {
	const char *name;
	unsigned nr;
} k_calls[] = {
	{"close_range", SYS_close_range},
	{"renameat2", SYS_renameat2},
};

/* The numbers of the comma-separated names in s; their count, or -1. */
static int parse(char *s, unsigned *nr)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(s, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < sizeof k_calls / sizeof k_calls[0] &&
		       strcmp(t, k_calls[i].name))
			i++;
		if (i == sizeof k_calls / sizeof k_calls[0] || n == MAX_CALLS) {
			fprintf(stderr, "oldkernel: cannot deny %s\n", t);
			return -1;
		}
		nr[n++] = k_calls[i].nr;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct sock_filter f[4 + MAX_CALLS];
	unsigned nr[MAX_CALLS] = {SYS_close_range};
	int n = 1, k = 0, first = 1;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		if ((n = parse(argv[2], nr)) < 0)
			return 2;
		first = 3;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: oldkernel [-d CALL[,CALL...]] CMD ARG...\n");
		return 2;
	}
	/* Not x86-64 (the x32 or i386 ABI): jump over the load and the
	 * n tests to the ALLOW return. Each listed number: jump to the
	 * ENOSYS return, the last instruction. */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	                                      AUDIT_ARCH_X86_64, 0,
	                                      (unsigned char)(n + 1));
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
	                                      offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr[i],
		                                    (unsigned char)(n - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
	                                      SECCOMP_RET_ERRNO | ENOSYS);
	struct sock_fprog prog = {(unsigned short)k, f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("oldkernel: seccomp");
		return 2;
	}
	execvp(argv[first], argv + first);
	perror("oldkernel: exec");
	return 127;
}
