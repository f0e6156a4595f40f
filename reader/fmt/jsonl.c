/*
 * fmt/jsonl.c - one JSON object a line, the stable schema of
 * tests/fixtures/ocaml-5.2/README.md plus "pid" first, written straight
 * into the output buffer by the consumer library's rte_event_jsonl().
 */
#include <stdlib.h>

#include "sinks.h"

static void jsonl_event(struct rd_sink *s, struct rd_ctx *c,
                        const struct rd_item *it)
{
	struct rd_out *o = c->out;
	char *p;
	size_t n;

	(void)s;
	if (!it->pass)
		return;
	p = rd_out_reserve(o, RTE_JSONL_MAX + 1);
	n = rte_event_jsonl(p, RTE_JSONL_MAX + 1, it->ev, it->src->pid);
	p[n] = '\n';
	o->len += n + 1;
}

static void jsonl_finish(struct rd_sink *s, struct rd_ctx *c)
{
	(void)s;
	(void)c;
}

static void jsonl_destroy(struct rd_sink *s)
{
	free(s);
}

struct rd_sink *rd_sink_jsonl(void)
{
	struct rd_sink *s = calloc(1, sizeof *s);

	if (s)
		*s = (struct rd_sink){ NULL, jsonl_event, jsonl_finish, jsonl_destroy, NULL };
	return s;
}
