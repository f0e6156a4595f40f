/*
 * consistprog.c - a real program for the cross-output consistency test
 * (tests/reader/consistency.sh), run under librte.so: three waves of six
 * threads (so rings are reused: several tenants per ring), each writing
 * user spans app.work, ints app.n, runtime phases (minor inside
 * stw_leader, and a minor outside any) and allocating; then two forked
 * children, each with three threads of its own. Exits 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rte/format.h"
#include "rte/rte.h"

static int id_work, id_n;

static void *worker(void *arg)
{
	long k = (long)arg;

	for (int i = 0; i < 5; i++) {
		char *p = malloc(64 + 32 * (size_t)i);

		rte_span_begin(id_work);
		rte_int(id_n, k * 10 + i);
		if (p)
			memset(p, 1, 64);
		free(p);
		rte_span_end(id_work);
	}
	rte_runtime_begin(RTE_P_MINOR); /* outside any stw_leader */
	rte_runtime_end(RTE_P_MINOR);
	if (k % 2) /* a span never ended: unfinished */
		rte_span_begin(id_work);
	return NULL;
}

static void wave(int n, long base)
{
	pthread_t t[8];

	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(base + i)) != 0)
			exit(1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	pid_t kid[2];

	id_work = rte_register("app.work", RTE_TYPE_SPAN);
	id_n = rte_register("app.n", RTE_TYPE_INT);
	for (int w = 0; w < 3; w++) {
		rte_runtime_begin(RTE_P_STW_LEADER);
		rte_runtime_begin(RTE_P_MINOR);
		rte_runtime_end(RTE_P_MINOR);
		rte_runtime_end(RTE_P_STW_LEADER);
		wave(6, 100 * w);
	}
	for (int c = 0; c < 2; c++) {
		kid[c] = fork();
		if (kid[c] < 0)
			return 1;
		if (kid[c] == 0) {
			wave(3, 1000 + 100 * c);
			_exit(0);
		}
	}
	for (int c = 0; c < 2; c++)
		waitpid(kid[c], NULL, 0);
	return 0;
}
