/*
 * dump.c - print every event of ring files, one per line, for the shim
 * tests to check with grep/awk:
 *
 *   header <path> rings=<max_domains> words=<ring_size_elements>
 *   <ring> <kind> <name> <value>
 *
 * kind: lifecycle, begin, end, counter, alloc, lost, unit, int, span_begin,
 * span_end, custom. value: the data/value/counter, the custom bytes as text
 * (non-printable bytes as '?'), "-" when there is none; for lost, the
 * number of lost words. Exit 0, or 2 if a file cannot be opened, 3 if a
 * ring is corrupt (the message is on stderr).
 */
#include <stdio.h>
#include <string.h>

#include "rte/consumer.h"

static const char *kind(const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_BEGIN: return "begin";
	case RTE_EV_END: return "end";
	case RTE_EV_COUNTER: return "counter";
	case RTE_EV_ALLOC: return "alloc";
	case RTE_EV_LIFECYCLE: return "lifecycle";
	case RTE_EV_LOST: return "lost";
	case RTE_EV_USER_UNIT: return "unit";
	case RTE_EV_USER_INT: return "int";
	case RTE_EV_USER_SPAN_BEGIN: return "span_begin";
	case RTE_EV_USER_SPAN_END: return "span_end";
	case RTE_EV_USER_CUSTOM: return "custom";
	default: return "unknown";
	}
}

static void print_value(const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_LIFECYCLE: printf("%lld\n", (long long)ev->u.data); break;
	case RTE_EV_USER_INT: printf("%lld\n", (long long)ev->u.value); break;
	case RTE_EV_COUNTER:
		printf("%llu\n", (unsigned long long)ev->u.counter);
		break;
	case RTE_EV_LOST:
		printf("%llu\n", (unsigned long long)ev->u.lost_words);
		break;
	case RTE_EV_ALLOC:
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			printf("%s%llu", i ? "," : "",
			       (unsigned long long)ev->u.buckets[i]);
		printf("\n");
		break;
	case RTE_EV_USER_CUSTOM:
		for (size_t i = 0; i < ev->u.custom.len; i++) {
			int c = ev->u.custom.bytes[i];

			putchar(c > 0x20 && c < 0x7f ? c : '?');
		}
		printf("%s\n", ev->u.custom.len ? "" : "-");
		break;
	default: printf("-\n"); break;
	}
}

static int dump(const char *path)
{
	char err[512], nbuf[64];
	struct rte_event ev;
	rte_cursor *c;
	int r, status = 0;

	if (rte_cursor_open(path, &c, err, sizeof(err)) != RTE_OK) {
		fprintf(stderr, "dump: %s\n", err);
		return 2;
	}
	printf("header %s rings=%u words=%llu\n", path, rte_cursor_rings(c),
	       (unsigned long long)rte_cursor_layout(c)->ring_size_elements);
	for (unsigned ring = 0; ring < rte_cursor_rings(c); ring++) {
		while ((r = rte_cursor_next(c, ring, &ev)) == 1) {
			const char *name = ev.kind == RTE_EV_LOST
			                           ? "-"
			                           : rte_event_name(&ev, nbuf,
			                                            sizeof(nbuf));
			printf("%u %s %s ", ring, kind(&ev),
			       name && *name ? name : "?");
			print_value(&ev);
		}
		if (r < 0) {
			fprintf(stderr, "dump: %s\n", rte_cursor_errmsg(c));
			status = 3;
		}
	}
	rte_cursor_close(c);
	return status;
}

int main(int argc, char **argv)
{
	int status = 0;

	for (int i = 1; i < argc; i++) {
		int r = dump(argv[i]);

		if (r > status)
			status = r;
	}
	return status;
}
