/*
 * fmt/profile_pprof.c - the pprof format of rte-read (fmt/profile.c):
 * gzipped profile.proto, by a small protobuf encoder of our own (varints,
 * length-delimited submessages), with its string, location, function and
 * mapping tables and every sample of the chosen profile.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile_int.h"
#include "rte/profile.h"
#include "sinks.h"

/* A protobuf message being written. */
struct pb {
	uint8_t *b;
	size_t n, cap;
	int oom;
};

static void pb_raw(struct pb *m, const void *p, size_t n)
{
	if (m->oom)
		return;
	if (m->n + n > m->cap) {
		size_t c = m->cap ? m->cap * 2 : 256;
		uint8_t *nb;

		while (c < m->n + n)
			c *= 2;
		if (!(nb = realloc(m->b, c))) {
			m->oom = 1;
			return;
		}
		m->b = nb;
		m->cap = c;
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void pb_varint(struct pb *m, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(m, b, n);
}

/* Field `f` as a varint (int64 values are their two's complement). */
static void pb_u(struct pb *m, unsigned f, uint64_t v)
{
	if (!v)
		return; /* proto3: zero is the default */
	pb_varint(m, (uint64_t)f << 3);
	pb_varint(m, v);
}

/* Field `f`, length-delimited: bytes, a string, a message, a packed list. */
static void pb_len(struct pb *m, unsigned f, const void *p, size_t n)
{
	pb_varint(m, (uint64_t)f << 3 | 2);
	pb_varint(m, n);
	pb_raw(m, p, n);
}

/* Append sub-message s as field f of m and empty s. */
static void pb_sub(struct pb *m, unsigned f, struct pb *s)
{
	if (s->oom)
		m->oom = 1;
	pb_len(m, f, s->b, s->n);
	s->n = 0;
}

static void pb_value_type(struct pb *m, unsigned f, struct pb *s, uint32_t type,
                          uint32_t unit)
{
	pb_u(s, 1, type);
	pb_u(s, 2, unit);
	pb_sub(m, f, s);
}

static void pb_label(struct pb *m, struct pb *s, uint32_t key, uint32_t str,
                     int64_t num)
{
	pb_u(s, 1, key);
	pb_u(s, 2, str);
	pb_u(s, 3, (uint64_t)num);
	pb_sub(m, 3, s);
}

/* One Sample: the stack (leaf first), the values, the labels. */
static void pb_sample(struct rd_prof *p, struct pb *m, struct pb *s,
                      struct pb *l, const struct skey *k, const int64_t *v,
                      unsigned nv, const uint32_t *lk)
{
	for (uint32_t j = 0; j < k->n; j++)
		pb_varint(l, (uint64_t)k->loc[j] + 1);
	pb_sub(s, 1, l);
	for (unsigned j = 0; j < nv; j++)
		pb_varint(l, (uint64_t)v[j]);
	pb_sub(s, 2, l);
	pb_label(s, l, lk[0], 0, p->pp[k->proc].pid);
	if (k->tid >= 0)
		pb_label(s, l, lk[1], 0, k->tid);
	if (k->tag)
		pb_label(s, l, lk[2], k->tag, 0);
	if (p->pp[k->proc].exe) /* --by exe */
		pb_label(s, l, lk[3], p->pp[k->proc].exe, 0);
	pb_sub(m, 2, s);
}

static void pb_tables(struct rd_prof *p, struct pb *m, struct pb *s,
                      struct pb *l)
{
	for (uint32_t i = 0; i < p->nmap; i++) {
		const struct pmap *mp = &p->map[i];

		pb_u(s, 1, i + 1);
		pb_u(s, 2, mp->start);
		pb_u(s, 3, mp->end);
		pb_u(s, 4, mp->off);
		pb_u(s, 5, mp->path);
		pb_u(s, 6, mp->bid);
		pb_u(s, 7, 1); /* has_functions: every location is symbolised */
		pb_u(s, 8, 1);
		pb_u(s, 9, 1);
		pb_sub(m, 3, s);
	}
	for (uint32_t i = 0; i < p->locs.n; i++) {
		const struct ploc *lc = &p->loc[i];

		pb_u(s, 1, i + 1);
		pb_u(s, 2, lc->map);
		pb_u(s, 3, lc->pc);
		pb_u(l, 1, (uint64_t)lc->func + 1);
		pb_u(l, 2, (uint64_t)(int64_t)lc->line);
		pb_sub(s, 4, l);
		pb_sub(m, 4, s);
	}
	for (uint32_t i = 0; i < p->funcs.n; i++) {
		pb_u(s, 1, i + 1);
		pb_u(s, 2, p->fn[i].name);
		pb_u(s, 3, p->fn[i].name);
		pb_u(s, 4, p->fn[i].file);
		pb_sub(m, 5, s);
	}
}

static int gzip_out(const struct pb *m, struct rd_out *o)
{
	uint8_t buf[65536];
	z_stream z;
	int r;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	                 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = m->b;
	z.avail_in = (uInt)m->n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof buf;
		r = deflate(&z, Z_FINISH);
		rd_out_mem(o, buf, sizeof buf - z.avail_out);
	} while (r == Z_OK);
	deflateEnd(&z);
	return r == Z_STREAM_END ? 0 : -1;
}

void rd_prof_write_pprof(struct rd_prof *p, int which, struct rd_out *o)
{
	struct pb m = { 0 }, s = { 0 }, l = { 0 };
	uint32_t lk[4], def;
	uint64_t dur = 0;
	int64_t v[4];

	lk[0] = pstr_id(p, "pid");
	lk[1] = pstr_id(p, "thread");
	lk[2] = pstr_id(p, "span");
	lk[3] = pstr_id(p, "exe");
	for (unsigned i = 0; i < p->npp; i++)
		if (p->pp[i].used && p->pp[i].wall_ns > dur)
			dur = p->pp[i].wall_ns;
	if (which == RD_PROF_CPU) {
		pb_value_type(&m, 1, &s, pstr_id(p, "samples"), pstr_id(p, "count"));
		pb_value_type(&m, 1, &s, def = pstr_id(p, "cpu"), pstr_id(p, "nanoseconds"));
		pb_value_type(&m, 11, &s, def, pstr_id(p, "nanoseconds"));
		pb_u(&m, 12, p->hz ? 1000000000u / p->hz : 0);
		for (uint32_t i = 0; i < p->cst.n; i++) {
			v[0] = (int64_t)p->cv[i].samples;
			v[1] = (int64_t)p->cv[i].cpu_ns;
			pb_sample(p, &m, &s, &l, pkey(&p->cst, i), v, 2, lk);
		}
	} else {
		uint32_t b = pstr_id(p, "bytes"), c = pstr_id(p, "count");

		pb_value_type(&m, 1, &s, pstr_id(p, "alloc_objects"), c);
		pb_value_type(&m, 1, &s, pstr_id(p, "alloc_space"), b);
		pb_value_type(&m, 1, &s, pstr_id(p, "inuse_objects"), c);
		pb_value_type(&m, 1, &s, pstr_id(p, "inuse_space"), b);
		def = pstr_id(p, which == RD_PROF_INUSE ? "inuse_space" : "alloc_space");
		pb_value_type(&m, 11, &s, pstr_id(p, "space"), b);
		pb_u(&m, 12, p->period);
		for (uint32_t i = 0; i < p->ast.n; i++) {
			v[0] = llround(p->av[i].aobj);
			v[1] = llround(p->av[i].abytes);
			v[2] = llround(p->av[i].iobj);
			v[3] = llround(p->av[i].ibytes);
			pb_sample(p, &m, &s, &l, pkey(&p->ast, i), v, 4, lk);
		}
	}
	pb_u(&m, 14, def);
	pb_u(&m, 10, dur);
	pb_tables(p, &m, &s, &l);
	for (uint32_t i = 0; i < p->strs.n; i++) /* last: every string is in */
		pb_len(&m, 6, pstr(p, i), p->strs.e[i].len);
	if (m.oom || s.oom || l.oom || gzip_out(&m, o) < 0)
		p->oom = 1;
	free(m.b);
	free(s.b);
	free(l.b);
}
