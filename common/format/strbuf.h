/*
 * strbuf.h - build a string into a fixed buffer, piece by piece, without
 * the printf family: the shim's start and file creation run in every
 * traced process, and the first call into vfprintf costs each one page
 * faults in libc's text that nothing else there needs.
 *
 *   struct rte_sb b;
 *   rte_sb_init(&b, buf, sizeof(buf));
 *   rte_sb_str(&b, dir); rte_sb_str(&b, "/"); rte_sb_uint(&b, pid, 10, 0);
 *   if (rte_sb_over(&b)) ...too long (buf holds "")
 *
 * Always NUL-terminated. Async-signal-safe.
 */
#ifndef RTE_STRBUF_H
#define RTE_STRBUF_H

#include <stddef.h>
#include <string.h>

struct rte_sb {
	char *p;
	size_t cap, len;
	int over; /* something did not fit: p is "" */
};

static inline void rte_sb_init(struct rte_sb *b, char *p, size_t cap)
{
	b->p = p;
	b->cap = cap;
	b->len = 0;
	b->over = cap == 0;
	if (cap)
		p[0] = '\0';
}

static inline void rte_sb_mem(struct rte_sb *b, const char *s, size_t n)
{
	if (b->over || n >= b->cap - b->len) {
		b->over = 1;
		if (b->cap)
			b->p[0] = '\0';
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void rte_sb_str(struct rte_sb *b, const char *s)
{
	rte_sb_mem(b, s, strlen(s));
}

/* v in base 10 or 16 (lower case), zero-padded to at least `width`
 * digits (at most 20). */
static inline void rte_sb_uint(struct rte_sb *b, unsigned long long v,
                               unsigned base, unsigned width)
{
	char t[24];
	size_t i = sizeof(t);

	do {
		t[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v || (sizeof(t) - i < width && i > 4));
	rte_sb_mem(b, t + i, sizeof(t) - i);
}

/* 1 if something did not fit (the buffer then holds ""). */
static inline int rte_sb_over(const struct rte_sb *b)
{
	return b->over;
}

#endif
