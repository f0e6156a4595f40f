/*
 * app.c - a program built the way a user builds one against an installed
 * rte:  cc app.c $(pkg-config --cflags --libs rte)
 * Writes STEPS spans app.step, an int app.value = 42 and a runtime phase
 * (minor), then prints its ring file's path. Starts tracing itself if
 * nobody did. Exit 0, or 1 if a call of the API failed.
 */
#include <stdio.h>

#include <rte/rte.h>

#define STEPS 5

int main(void)
{
	int step = rte_register("app.step", RTE_TYPE_SPAN);
	int value = rte_register("app.value", RTE_TYPE_INT);
	char path[4096];
	int err;

	if (step < 0 || value < 0) {
		fprintf(stderr, "app: rte_register: %s\n",
		        rte_strerror(step < 0 ? step : value));
		return 1;
	}
	if ((err = rte_start()) != RTE_OK) {
		fprintf(stderr, "app: rte_start: %s\n", rte_strerror(err));
		return 1;
	}
	for (int i = 0; i < STEPS; i++) {
		rte_span_begin(step);
		rte_span_end(step);
	}
	rte_int(value, 42);
	rte_runtime_begin(RTE_P_MINOR);
	rte_runtime_end(RTE_P_MINOR);
	if (rte_path(path, sizeof path) < 0 || !rte_is_active()) {
		fprintf(stderr, "app: tracing is not active\n");
		return 1;
	}
	printf("%s\n", path);
	return 0;
}
