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

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static const char hexd[] = "0123456789abcdef";

/* Decimal digits of v at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* A JSON string; names come from files and may hold anything: '"' and
 * '\' are escaped, bytes outside 0x20..0x7e become \u00XX. */
static char *put_str(char *p, const char *s)
{
	*p++ = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			p = LIT(p, "\\u00");
			*p++ = hexd[ch >> 4];
			*p++ = hexd[ch & 15];
		} else {
			*p++ = (char)ch;
		}
	}
	*p++ = '"';
	return p;
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

static char *id_name(char *p, const struct rte_event *ev)
{
	char nbuf[48];

	p = LIT(p, ",\"id\":");
	p = put_u64(p, ev->id);
	p = LIT(p, ",\"name\":");
	return put_str(p, rte_event_name(ev, nbuf, sizeof nbuf));
}

static char *put_payload(char *p, const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_END:
		return id_name(p, ev);
	case RTE_EV_COUNTER:
		p = LIT(id_name(p, ev), ",\"value\":");
		return put_u64(p, ev->u.counter);
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
		p = LIT(id_name(p, ev), ",\"data\":");
		return put_i64(p, ev->u.data);
	case RTE_EV_USER_INT:
		p = LIT(p, ",\"value\":");
		return put_i64(p, ev->u.value);
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
		return p;
	default:
		return p;
	}
}

/* Write the whole line at p (no NUL); returns its length. p must have room
 * for line_bound(ev) bytes. */
static size_t put_line(char *p, const struct rte_event *ev, long pid)
{
	char *b = p;
	const char *k;

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
	k = rte_event_kind_name(ev->kind);
	memcpy(p, k, strlen(k));
	p += strlen(k);
	*p++ = '"';
	if (ev->kind >= RTE_EV_USER_UNIT)
		p = put_str(LIT(p, ",\"event\":"), ev->name ? ev->name : "");
	p = put_payload(p, ev);
	*p++ = '}';
	return (size_t)(p - b);
}

/* An upper bound of the line's length: the keys, every number at its
 * widest (20 digits and a sign), the name with every byte escaped to 6
 * (a made-up "phase_N" name is under 48 bytes), the buckets, the hex. For
 * the events of a cursor it is below RTE_JSONL_MAX. */
static size_t line_bound(const struct rte_event *ev)
{
	size_t n = 160 + (ev->name ? 6 * strlen(ev->name) : 48);

	if (ev->kind == RTE_EV_ALLOC)
		n += RTE_ALLOC_BUCKETS * 21;
	else if (ev->kind == RTE_EV_USER_CUSTOM)
		n += 2 * ev->u.custom.len;
	return n;
}

size_t rte_event_jsonl(char *buf, size_t cap, const struct rte_event *ev,
                       long pid)
{
	size_t bound, n;
	char *tmp;

	if (cap == 0)
		return 0;
	bound = line_bound(ev);
	if (bound < cap) { /* the usual case: straight into buf */
		n = put_line(buf, ev, pid);
		buf[n] = '\0';
		return n;
	}
	tmp = malloc(bound);
	if (!tmp) { /* cannot happen for the events the cursor makes */
		buf[0] = '\0';
		return 0;
	}
	n = put_line(tmp, ev, pid);
	if (n > cap - 1)
		n = cap - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
	free(tmp);
	return n;
}
