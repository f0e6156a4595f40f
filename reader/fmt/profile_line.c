/*
 * fmt/profile_line.c - the source line the summary gives a top function
 * (fmt/profile_sum.c): the file:line of its locations that most of its
 * samples were at (the innermost frame's for self samples; any frame's,
 * once per stack, for total), from the locations' line-table lines
 * (inlined code: the line of its call in the function, profile_inline.c).
 * Not thread-safe.
 */
#include "profile_int.h"

#define MAX_LINES 64u /* distinct lines counted per function */

int rd_prof_hot_line(const struct rd_prof *p, uint32_t proc, uint32_t tag,
                     int only_tag, uint32_t name, int self,
                     const char **file, int *line)
{
	struct { uint32_t file; int line; double v; } c[MAX_LINES];
	unsigned nc = 0, best = 0;

	for (uint32_t i = 0; i < p->cst.n; i++) {
		const struct skey *k = pkey(&p->cst, i);
		double v = (double)p->cv[i].samples;

		if (k->proc != proc || (only_tag && k->tag != tag))
			continue;
		for (uint32_t j = 0; j < (self ? (k->n > 0) : k->n); j++) {
			const struct ploc *l = &p->loc[k->loc[j]];
			const struct pfunc *f = &p->fn[l->func];
			unsigned x;

			if (f->name != name)
				continue;
			if (!f->file || l->line <= 0)
				break; /* this stack's frame of it has no line */
			for (x = 0; x < nc; x++)
				if (c[x].file == f->file && c[x].line == l->line)
					break;
			if (x == nc) {
				if (nc == MAX_LINES)
					break;
				c[nc].file = f->file;
				c[nc].line = l->line;
				c[nc++].v = 0;
			}
			c[x].v += v;
			break; /* once per stack: its innermost frame of it */
		}
	}
	for (unsigned x = 1; x < nc; x++)
		if (c[x].v > c[best].v)
			best = x;
	if (!nc)
		return 0;
	*file = pstr(p, c[best].file);
	*line = c[best].line;
	return 1;
}
