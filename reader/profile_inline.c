/*
 * profile_inline.c - profiles' inline frames (the default; --no-inline
 * turns them off): the functions the compiler
 * inlined at a sampled address, from the DWARF inline records
 * (symbolize.c rd_sym_inlines, libdw), as frames of their own between
 * the address's function and the frame it called (`outer;inlined` in
 * folded output). Each (address, depth) is one location of the profile
 * (profile_int.h), named by its inlined function, no mapping; its source
 * line is the innermost's line-table line (depth 1) or the call site of
 * the function it holds inlined (deeper), and the address's own
 * function's line that of its outermost inlined call (rd_prof_inline_site).
 */
#include <string.h>

#include "profile_int.h"

int rd_prof_inline_opt = 1; /* --no-inline: 0 */

#define INLINE_DEPTH RD_PROF_INLINE_DEPTH

/* The locations of pc's inline frames, made: into out (room for
 * INLINE_DEPTH); how many. */
static unsigned inline_locs(struct rd_prof *p, unsigned src, struct psrc *s,
                            uint64_t pc, int ret, uint32_t *out)
{
	const char *names[INLINE_DEPTH], *files[INLINE_DEPTH];
	int lines[INLINE_DEPTH], looked = 0;
	struct plockey k;
	struct rd_frame f;
	unsigned n, m = 0;

	n = rd_sym_inlines(s->sym, pc, ret, names, lines, files, INLINE_DEPTH);
	for (unsigned i = 0; i < n; i++) {
		int64_t l, fi;
		int isnew;

		/* loc_of's key, at depth i + 1 (its own is 0) */
		rd_prof_lockey(&k, src, s, pc, ret, i + 1);
		if (rd_prof_loc_room(p) < 0 ||
		    (l = ptab_get(&p->locs, &k, sizeof k, &isnew)) < 0)
			break;
		if (isnew) {
			const char *file = i ? files[i - 1] : NULL;
			int line = i ? lines[i - 1] : 0;

			if (!i) { /* the innermost: the line table's line */
				if (!looked++)
					rd_sym_lookup(s->sym, pc, ret, &f);
				file = f.file;
				line = f.file ? f.line : 0;
			}
			memset(&p->loc[l], 0, sizeof p->loc[l]);
			p->loc[l].line = file ? line : 0;
			if ((fi = rd_prof_func(p, names[i], file)) < 0)
				break;
			p->loc[l].pc = pc;
			p->loc[l].func = (uint32_t)fi;
		}
		out[m++] = (uint32_t)l;
	}
	return m;
}

unsigned rd_prof_inline_locs(struct rd_prof *p, unsigned src, struct psrc *s,
                             uint64_t pc, int ret, uint32_t *out,
                             unsigned max)
{
	struct plockey k;
	unsigned m;
	struct pinl *c;
	int64_t ci;
	int isnew;

	/* Each address is looked up once (libdw's scopes cost about 0.5 ms
	 * an address in rte-read's own profile), then read from the cache. */
	rd_prof_lockey(&k, src, s, pc, ret, 0);
	if (rd_prof_room(p, (void **)&p->inlv, &p->inlcap, p->inl.n,
	                 sizeof *p->inlv) < 0 ||
	    (ci = ptab_get(&p->inl, &k, sizeof k, &isnew)) < 0)
		return 0;
	c = &p->inlv[ci];
	if (isnew)
		c->n = inline_locs(p, src, s, pc, ret, c->loc);
	m = c->n < max ? c->n : max;
	memcpy(out, c->loc, m * sizeof *out);
	return m;
}

int rd_prof_inline_site(struct rd_sym *sym, uint64_t pc, int ret,
                        const char **file, int *line)
{
	const char *names[INLINE_DEPTH], *files[INLINE_DEPTH];
	int lines[INLINE_DEPTH];
	unsigned n;

	if (!rd_prof_inline_opt ||
	    !(n = rd_sym_inlines(sym, pc, ret, names, lines, files, INLINE_DEPTH)))
		return 0;
	*file = files[n - 1];
	*line = files[n - 1] ? lines[n - 1] : 0;
	return 1;
}
