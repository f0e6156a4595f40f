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
	struct { uint32_t src, gen; uint64_t pc; uint32_t ret, depth; } k;
	const char *names[INLINE_DEPTH], *files[INLINE_DEPTH];
	int lines[INLINE_DEPTH], looked = 0;
	struct rd_frame f;
	unsigned n, m = 0;

	n = rd_sym_inlines(s->sym, pc, ret, names, lines, files, INLINE_DEPTH);
	for (unsigned i = 0; i < n; i++) {
		struct pfunc fk;
		int64_t l, fi;
		int isnew;

		/* loc_of's key with a depth (its own has 0) */
		memset(&k, 0, sizeof k);
		k.src = src;
		k.gen = s->modgen;
		k.pc = pc;
		k.ret = (uint32_t)ret;
		k.depth = i + 1;
		if (rd_prof_room(p, (void **)&p->loc, &p->loccap, p->locs.n,
		                 sizeof *p->loc) < 0 ||
		    rd_prof_room(p, (void **)&p->fn, &p->fncap, p->funcs.n,
		                 sizeof *p->fn) < 0 ||
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
			fk.name = pstr_id(p, names[i]);
			fk.file = file ? pstr_id(p, file) : 0;
			memset(&p->loc[l], 0, sizeof p->loc[l]);
			p->loc[l].line = file ? line : 0;
			if ((fi = ptab_get(&p->funcs, &fk, sizeof fk, &isnew)) < 0)
				break;
			p->fn[fi] = fk;
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
	struct { uint32_t src, gen; uint64_t pc; uint32_t ret, pad; } k;
	unsigned m;
	struct pinl *c;
	int64_t ci;
	int isnew;

	/* Each address is looked up once (libdw's scopes cost about 0.5 ms
	 * an address in rte-read's own profile), then read from the cache. */
	memset(&k, 0, sizeof k);
	k.src = src;
	k.gen = s->modgen;
	k.pc = pc;
	k.ret = (uint32_t)ret;
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
