/*
 * jsonl.c - one event as one JSON line, in the stable schema of
 * shared/fixtures/ocaml-5.2/README.md.
 *
 * Written without printf (vsnprintf per field cost ~600 ns an event; this
 * is ~20x faster): the line is written straight into the caller's buffer
 * when it surely fits (line_bound()), else into a temporary one and cut to
 * the caller's size, so truncation gives exactly the prefix of the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rte/consumer.h"
#include "rte/proc.h"
#include "utf8.h"

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static const char hexd[] = "0123456789abcdef";

/* The number of decimal digits of v (1 for 0). */
static inline unsigned ndigits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
		100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	/* log10(2) ~ 1233/4096: t is the digit count or one less */
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;

	return t + (t < 20 && (v | 1) >= pow10[t]);
}

/* Decimal digits of v at p, two at a time from the last; returns the
 * end. */
static char *put_u64(char *p, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char *end = p + ndigits(v), *t = end;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100);

		v /= 100;
		t -= 2;
		memcpy(t, pairs + 2 * d, 2);
	}
	if (v >= 10)
		memcpy(t - 2, pairs + 2 * v, 2);
	else
		t[-1] = (char)('0' + v);
	return end;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* A JSON string; names come from files and may hold anything: escaped
 * by utf8.h's rule (at most 6 bytes a byte). At most `max` bytes of s are
 * written: NULL if it is longer. */
static char *put_str(char *p, const char *s, size_t max)
{
	size_t n = 0, len, used;

	*p++ = '"';
	/* The usual name needs no escape: a plain copy up to the first byte
	 * that does. */
	while (n < max) {
		unsigned char ch = (unsigned char)s[n];

		if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
			break;
		p[n++] = (char)ch;
	}
	p += n;
	s += n;
	if ((len = strlen(s)) > max - n) /* max may be SIZE_MAX: no max - n + 1 */
		return NULL;
	for (const unsigned char *u = (const unsigned char *)s; len; len -= used, u += used)
		p = rte_utf8_json(p, u, len, &used);
	*p++ = '"';
	return p;
}

/* n bytes of s as a JSON string, escaped as put_str does (NULs too). */
static char *put_mem(char *p, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t used;

	*p++ = '"';
	for (size_t i = 0; i < n; i += used)
		p = rte_utf8_json(p, u + i, n - i, &used);
	*p++ = '"';
	return p;
}

/* ,"argc":N,"argv":[...] (unless RTE_PROC_NO_ARGV),"argv_cut":true (if
 * cut) of an argument vector (rte.proc's, rte.spawn_failed's). */
static char *put_argv(char *p, uint32_t argc, unsigned flags,
                      const char *argv, size_t argv_len)
{
	const char *a;
	size_t pos = 0, len;
	int first = 1;

	p = put_u64(LIT(p, ",\"argc\":"), argc);
	if (!(flags & RTE_PROC_NO_ARGV)) {
		p = LIT(p, ",\"argv\":[");
		while ((a = rte_proc_argv_next(argv, argv_len, &pos, &len))) {
			if (!first)
				*p++ = ',';
			first = 0;
			p = put_mem(p, a, len);
		}
		*p++ = ']';
	}
	if (flags & RTE_PROC_ARGV_CUT)
		p = LIT(p, ",\"argv_cut\":true");
	return p;
}

/* ,"proc":{...} of an rte.proc payload: at most 80 + 9 bytes a payload
 * byte (own_bound's; the fixed part, at most 100 bytes with every flag,
 * is covered by the record's 16 bytes counted at 9 each, and an argument
 * takes at most 6 bytes a byte and 3 more). */
static char *put_proc(char *p, const struct rte_proc_event *d)
{
	const struct rte_proc_rec *r = &d->proc;

	p = put_i64(LIT(p, ",\"proc\":{\"ppid\":"), r->ppid);
	if (r->flags & RTE_PROC_FORK_CHILD)
		p = LIT(p, ",\"fork\":true");
	p = put_argv(p, r->argc, r->flags, d->argv, d->argv_len);
	if (r->flags & RTE_PROC_PRESERVE)
		p = LIT(p, ",\"preserve\":true");
	*p++ = '}';
	return p;
}

/* ,"spawn_failed":{"errno":N,"error":"ENOENT",...argv} of an
 * rte.spawn_failed payload: bounded as put_proc (the error's name is
 * under 20 bytes, or a number). */
static char *put_spawn_fail(char *p, const struct rte_proc_event *d)
{
	const struct rte_spawn_fail_rec *r = &d->fail;
	const char *name = r->err > 0 ? strerrorname_np(r->err) : NULL;

	p = put_i64(LIT(p, ",\"spawn_failed\":{\"errno\":"), r->err);
	if (name && strlen(name) < 24)
		p = put_str(LIT(p, ",\"error\":"), name, 24);
	p = put_argv(p, r->argc, r->flags, d->argv, d->argv_len);
	*p++ = '}';
	return p;
}

/* ,"exit":{...} of an rte.exit or rte.reap payload: under 400 bytes. */
static char *put_exit(char *p, const struct rte_exit_rec *r)
{
	const char *abbrev;

	p = put_i64(LIT(p, ",\"exit\":{\"pid\":"), r->pid);
	if (r->how == RTE_EXIT_STATUS) {
		p = put_i64(LIT(p, ",\"status\":"), r->value);
	} else if (r->how == RTE_EXIT_SIGNAL) {
		abbrev = r->value > 0 && r->value < 65 ? sigabbrev_np(r->value)
		                                       : NULL;
		p = LIT(p, ",\"signal\":\"SIG");
		if (abbrev && strlen(abbrev) < 16) {
			memcpy(p, abbrev, strlen(abbrev));
			p += strlen(abbrev);
		} else {
			p = put_i64(p, r->value);
		}
		p = put_i64(LIT(p, "\",\"signo\":"), r->value);
		if (r->flags & RTE_EXIT_CORE)
			p = LIT(p, ",\"core\":true");
	} else {
		p = LIT(p, ",\"unknown\":true");
	}
	if (!(r->flags & RTE_EXIT_NO_RUSAGE)) {
		p = put_u64(LIT(p, ",\"cpu_user_ns\":"), r->utime_ns);
		p = put_u64(LIT(p, ",\"cpu_sys_ns\":"), r->stime_ns);
		p = put_u64(LIT(p, ",\"max_rss_kib\":"), r->maxrss_kib);
		p = put_u64(LIT(p, ",\"minflt\":"), r->minflt);
		p = put_u64(LIT(p, ",\"majflt\":"), r->majflt);
		p = put_u64(LIT(p, ",\"nvcsw\":"), r->nvcsw);
		p = put_u64(LIT(p, ",\"nivcsw\":"), r->nivcsw);
	}
	*p++ = '}';
	return p;
}

/* The decoded fields of rte's process events, after "hex" (nothing for
 * another event or a malformed payload). */
static char *put_own(char *p, const struct rte_event *ev)
{
	struct rte_proc_event d;

	switch (rte_proc_event_decode(ev->name, ev->u.custom.bytes,
	                              ev->u.custom.len, &d)) {
	case RTE_PROC_EV_PROC:
		return put_proc(p, &d);
	case RTE_PROC_EV_EXIT:
	case RTE_PROC_EV_REAP:
		return put_exit(p, &d.exit);
	case RTE_PROC_EV_SPAWN_FAIL:
		return put_spawn_fail(p, &d);
	default:
		return p;
	}
}

const char *rte_event_name(const struct rte_event *ev, char *buf, size_t cap)
{
	static const char *const prefix[RTE_EV_KIND_COUNT] = {
		[RTE_EV_BEGIN] = "phase",       [RTE_EV_END] = "phase",
		[RTE_EV_COUNTER] = "counter",   [RTE_EV_LIFECYCLE] = "lifecycle",
	};

	if (ev->name)
		return ev->name;
	snprintf(buf, cap, "%s_%u",
	         (unsigned)ev->kind < RTE_EV_KIND_COUNT && prefix[ev->kind]
	                 ? prefix[ev->kind] : "event",
	         ev->id);
	return buf;
}

static char *id_name(char *p, const struct rte_event *ev, size_t max)
{
	char nbuf[48];

	p = LIT(p, ",\"id\":");
	p = put_u64(p, ev->id);
	p = LIT(p, ",\"name\":");
	return put_str(p, rte_event_name(ev, nbuf, sizeof nbuf), max);
}

/* The fields after "kind"; NULL if the name is longer than max. */
static char *put_payload(char *p, const struct rte_event *ev, size_t max)
{
	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_END:
		return id_name(p, ev, max);
	case RTE_EV_COUNTER:
		if (!(p = id_name(p, ev, max)))
			return NULL;
		return put_u64(LIT(p, ",\"value\":"), ev->u.counter);
	case RTE_EV_ALLOC:
		p = LIT(p, ",\"buckets\":[");
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++) {
			if (i)
				*p++ = ',';
			p = put_u64(p, ev->u.buckets[i]);
		}
		*p++ = ']';
		return p;
	case RTE_EV_LIFECYCLE:
		if (!(p = id_name(p, ev, max)))
			return NULL;
		return put_i64(LIT(p, ",\"data\":"), ev->u.data);
	case RTE_EV_USER_INT:
		return put_i64(LIT(p, ",\"value\":"), ev->u.value);
	case RTE_EV_USER_SPAN_BEGIN:
		return LIT(p, ",\"span\":\"begin\"");
	case RTE_EV_USER_SPAN_END:
		return LIT(p, ",\"span\":\"end\"");
	case RTE_EV_USER_CUSTOM:
		p = LIT(p, ",\"hex\":\"");
		for (size_t i = 0; i < ev->u.custom.len; i++) {
			*p++ = hexd[ev->u.custom.bytes[i] >> 4];
			*p++ = hexd[ev->u.custom.bytes[i] & 15];
		}
		*p++ = '"';
		return put_own(p, ev);
	default:
		return p;
	}
}

/*
 * Write the whole line at p (no NUL); returns its length, or 0 if the
 * event's name is longer than max bytes. p must have room for
 * line_bound(ev, max) bytes.
 */
static size_t put_line(char *p, const struct rte_event *ev, long pid,
                       size_t max)
{
	static const unsigned char klen[RTE_EV_KIND_COUNT] = {
		5, 3, 7, 5, 9, 4, 9, 8, 9, 9, 11, /* strlen of each kind name */
	};
	char *b = p;

	*p++ = '{';
	if (pid >= 0) {
		p = put_i64(LIT(p, "\"pid\":"), pid);
		*p++ = ',';
	}
	p = put_u64(LIT(p, "\"ring\":"), ev->ring);
	if (ev->kind == RTE_EV_LOST) {
		p = put_u64(LIT(p, ",\"kind\":\"lost\",\"words\":"), ev->u.lost_words);
		*p++ = '}';
		return (size_t)(p - b);
	}
	p = put_u64(LIT(p, ",\"ts\":"), ev->ts);
	p = LIT(p, ",\"kind\":\"");
	if ((unsigned)ev->kind < RTE_EV_KIND_COUNT) {
		memcpy(p, rte_event_kind_name(ev->kind), klen[ev->kind]);
		p += klen[ev->kind];
	} else {
		p = LIT(p, "unknown");
	}
	*p++ = '"';
	if (ev->kind >= RTE_EV_USER_UNIT &&
	    !(p = put_str(LIT(p, ",\"event\":"), ev->name ? ev->name : "", max)))
		return 0;
	if (!(p = put_payload(p, ev, max)))
		return 0;
	*p++ = '}';
	return (size_t)(p - b);
}

/* What put_own() adds at most: rte.proc's and rte.spawn_failed's argv
 * (decoded only when the payload is at most 16 + RTE_PROC_ARGV_MAX
 * bytes) at 9 bytes a byte (6 escaped, 3 of quotes and comma), rte.exit's
 * fields. */
static size_t own_bound(const struct rte_event *ev)
{
	if (!ev->name || strncmp(ev->name, "rte.", 4))
		return 0;
	if (!strcmp(ev->name, "rte.proc") || !strcmp(ev->name, "rte.spawn_failed"))
		return 80 + 9 * ev->u.custom.len;
	return 480;
}

/* An upper bound of the line's length when the name has at most max
 * bytes: the keys, every number at its widest (20 digits and a sign), the
 * name with every byte escaped to 6 (a made-up "phase_N" is under 48), the
 * buckets, the hex. */
static size_t line_bound(const struct rte_event *ev, size_t max)
{
	size_t n = 160 + 6 * (max > 48 ? max : 48);

	if (ev->kind == RTE_EV_ALLOC)
		n += RTE_ALLOC_BUCKETS * 21;
	else if (ev->kind == RTE_EV_USER_CUSTOM)
		n += 2 * ev->u.custom.len + own_bound(ev);
	return n;
}

size_t rte_event_jsonl(char *buf, size_t cap, const struct rte_event *ev,
                       long pid)
{
	size_t n = 0, bound;
	char *tmp;

	if (cap == 0)
		return 0;
	/* The usual case: straight into buf, for a name as long as a name
	 * slot of a ring file allows (under RTE_JSONL_MAX in all). */
	if (line_bound(ev, RTE_NAME_SLOT_BYTES) < cap)
		n = put_line(buf, ev, pid, RTE_NAME_SLOT_BYTES);
	if (n) {
		buf[n] = '\0';
		return n;
	}
	/* A small buffer, or a longer name: through a buffer of the size. */
	bound = line_bound(ev, ev->name ? strlen(ev->name) : 0);
	tmp = malloc(bound);
	if (!tmp) { /* cannot happen for the events a cursor makes */
		buf[0] = '\0';
		return 0;
	}
	n = put_line(tmp, ev, pid, (size_t)-1);
	if (n > cap - 1)
		n = cap - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	free(tmp);
	return n;
}
