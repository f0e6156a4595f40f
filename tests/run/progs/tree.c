/*
 * tree.c - a process tree: forks three children, each of which execs this
 * program again as a leaf ("tree leaf K") that writes one int event
 * tree.leaf = K and exits 0. Prints the pid of each child, one a line, so
 * that the test can find each in the summary. Exits 0 if every child
 * exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte/rte.h>

#define CHILDREN 3

static int leaf(const char *k)
{
	int id = rte_register("tree.leaf", RTE_TYPE_INT);

	if (id < 0)
		return 2;
	rte_int(id, strtol(k, NULL, 10));
	return 0;
}

int main(int argc, char **argv)
{
	pid_t kids[CHILDREN];
	int bad = 0;

	if (argc == 3 && !strcmp(argv[1], "leaf"))
		return leaf(argv[2]);
	for (int k = 0; k < CHILDREN; k++) {
		char arg[16];

		snprintf(arg, sizeof arg, "%d", k);
		fflush(stdout);
		kids[k] = fork();
		if (kids[k] < 0) {
			perror("tree: fork");
			return 2;
		}
		if (kids[k] == 0) {
			execl("/proc/self/exe", argv[0], "leaf", arg, (char *)NULL);
			perror("tree: exec");
			_exit(3);
		}
		printf("%ld\n", (long)kids[k]);
	}
	for (int k = 0; k < CHILDREN; k++) {
		int st;

		if (waitpid(kids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	return bad;
}
