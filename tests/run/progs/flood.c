/*
 * flood.c - writes N int events (argv[1]) on one user event, to overflow
 * a small ring: a reader that comes after the fact finds lost words.
 * Linked with -lrte; run under rte-run (tracing already started).
 */
#include <stdio.h>
#include <stdlib.h>

#include <rte/rte.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	int id = rte_register("flood.n", RTE_TYPE_INT);

	if (id < 0) {
		fprintf(stderr, "flood: rte_register: %s\n", rte_strerror(id));
		return 2;
	}
	for (long i = 0; i < n; i++)
		rte_int(id, i);
	return 0;
}
