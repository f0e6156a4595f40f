/*
 * profile_span.c - the span tag of a sample (profile_int.h
 * rd_prof_tag_of): the innermost user span or runtime phase open on its
 * thread's ring when it was taken, and whether --span keeps it.
 */
#include <stdio.h>
#include <string.h>

#include "profile_int.h"

static uint32_t open_name(struct rd_prof *p, const struct rd_span_open *o,
                          int user)
{
	char b[32];

	if (o->name && *o->name)
		return pstr_id(p, o->name);
	snprintf(b, sizeof b, "(%s %u)", user ? "span" : "phase", o->id);
	return pstr_id(p, b);
}

static int open_is(const struct rd_spans *st, const char *name)
{
	for (unsigned i = 0; i < st->depth; i++)
		if (st->s[i].name && !strcmp(st->s[i].name, name))
			return 1;
	return 0;
}

/* The innermost open user span or phase of th (0: none); 0 in *keep if
 * --span is given and th is not inside it. */
uint32_t rd_prof_tag_of(struct rd_prof *p, const struct rd_thread *th, int *keep)
{
	const struct rd_span_open *u, *ph;

	*keep = 1;
	if (!th)
		return (*keep = !rd_prof_span_opt), 0;
	if (rd_prof_span_opt)
		*keep = open_is(&th->spans, rd_prof_span_opt) ||
		        open_is(&th->phases, rd_prof_span_opt);
	u = th->spans.depth ? &th->spans.s[th->spans.depth - 1] : NULL;
	ph = th->phases.depth ? &th->phases.s[th->phases.depth - 1] : NULL;
	if (u && (!ph || u->ts >= ph->ts))
		return open_name(p, u, 1);
	return ph ? open_name(p, ph, 0) : 0;
}

