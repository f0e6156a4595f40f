/*
 * oldkernel.c - run a command as on a kernel before Linux 5.9, as far as
 * close_range() goes (tests/shim/host.sh): a seccomp filter makes every
 * close_range() fail with ENOSYS, then CMD is executed (the filter stays
 * for it and its children).
 *
 *   oldkernel CMD ARG...
 *
 * Exit status 2 if the filter cannot be installed, 127 if CMD cannot be
 * executed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		         offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		         offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};

	if (argc < 2) {
		fprintf(stderr, "usage: oldkernel CMD ARG...\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("oldkernel: seccomp");
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror("oldkernel: exec");
	return 127;
}
