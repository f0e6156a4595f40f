/*
 * readback.c - a consumer built against an installed rte:
 *   cc readback.c $(pkg-config --cflags --libs rteconsumer)
 * Reads one ring file (argv[1]) and prints "spans N value V phases P":
 * the number of app.step span ends, the last app.value, and the number of
 * runtime phase ends. Exit 0, or 1 with the error on stderr.
 */
#include <stdio.h>
#include <string.h>

#include <rte/consumer.h>

int main(int argc, char **argv)
{
	long spans = 0, value = -1, phases = 0;
	struct rte_event ev;
	rte_cursor *c;
	char err[512];
	int r;

	if (argc != 2 || rte_cursor_open(argv[1], &c, err, sizeof err) != RTE_OK) {
		fprintf(stderr, "readback: %s\n", argc == 2 ? err : "usage: readback FILE");
		return 1;
	}
	for (unsigned ring = 0; ring < rte_cursor_rings(c); ring++) {
		while ((r = rte_cursor_next(c, ring, &ev)) > 0) {
			if (ev.kind == RTE_EV_USER_SPAN_END && ev.name && !strcmp(ev.name, "app.step"))
				spans++;
			else if (ev.kind == RTE_EV_USER_INT && ev.name && !strcmp(ev.name, "app.value"))
				value = (long)ev.u.value;
			else if (ev.kind == RTE_EV_END)
				phases++;
		}
		if (r < 0) {
			fprintf(stderr, "readback: %s\n", rte_cursor_errmsg(c));
			rte_cursor_close(c);
			return 1;
		}
	}
	rte_cursor_close(c);
	printf("spans %ld value %ld phases %ld\n", spans, value, phases);
	return 0;
}
