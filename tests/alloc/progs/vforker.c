/*
 * vforker.c - a vfork child that allocates (1000 blocks of 333 bytes,
 * each freed) before it _exits, then the parent allocates 1000 blocks of
 * 444 bytes. glibc's malloc works in a vfork child (POSIX leaves it
 * undefined, programs do it): the child shares the parent's memory, so
 * nothing of ours may be written from it (no sample of 333 bytes), while
 * the parent's samples still are. Prints "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(size_t n)
{
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(n);

		free(p);
	}
}

int main(void)
{
	int st;
	pid_t p = vfork();

	if (p < 0)
		return 1;
	if (p == 0) {
		churn(333);
		_exit(0);
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	churn(444);
	printf("ok\n");
	return 0;
}
