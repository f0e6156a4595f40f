/*
 * jsonl_fast.c - printf-free JSONL (see jsonl_fast.h).
 */
#include <string.h>

#include "jsonl_fast.h"
#include "out.h"

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static const char hexd[] = "0123456789abcdef";

/* A JSON string with rte_event_jsonl()'s escaping. */
static char *str(char *p, const char *s)
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

static char *id_name(char *p, const struct rte_event *ev)
{
	char nbuf[48];

	p = LIT(p, ",\"id\":");
	p += rd_fmt_u64(p, ev->id);
	p = LIT(p, ",\"name\":");
	return str(p, rte_event_name(ev, nbuf, sizeof nbuf));
}

static char *payload(char *p, const struct rte_event *ev)
{
	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_END:
		return id_name(p, ev);
	case RTE_EV_COUNTER:
		p = id_name(p, ev);
		p = LIT(p, ",\"value\":");
		return p + rd_fmt_u64(p, ev->u.counter);
	case RTE_EV_ALLOC:
		p = LIT(p, ",\"buckets\":[");
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++) {
			if (i)
				*p++ = ',';
			p += rd_fmt_u64(p, ev->u.buckets[i]);
		}
		*p++ = ']';
		return p;
	case RTE_EV_LIFECYCLE:
		p = id_name(p, ev);
		p = LIT(p, ",\"data\":");
		return p + rd_fmt_i64(p, ev->u.data);
	case RTE_EV_USER_INT:
		p = LIT(p, ",\"value\":");
		return p + rd_fmt_i64(p, ev->u.value);
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

size_t rd_jsonl_event(char *buf, const struct rte_event *ev, long pid)
{
	char *p = buf;

	*p++ = '{';
	if (pid >= 0) {
		p = LIT(p, "\"pid\":");
		p += rd_fmt_i64(p, pid);
		*p++ = ',';
	}
	p = LIT(p, "\"ring\":");
	p += rd_fmt_u64(p, ev->ring);
	if (ev->kind == RTE_EV_LOST) {
		p = LIT(p, ",\"kind\":\"lost\",\"words\":");
		p += rd_fmt_u64(p, ev->u.lost_words);
		*p++ = '}';
		return (size_t)(p - buf);
	}
	p = LIT(p, ",\"ts\":");
	p += rd_fmt_u64(p, ev->ts);
	p = LIT(p, ",\"kind\":\"");
	{
		const char *k = rte_event_kind_name(ev->kind);
		size_t n = strlen(k);

		memcpy(p, k, n);
		p += n;
	}
	*p++ = '"';
	if (ev->kind >= RTE_EV_USER_UNIT) {
		p = LIT(p, ",\"event\":");
		p = str(p, ev->name ? ev->name : "");
	}
	p = payload(p, ev);
	*p++ = '}';
	return (size_t)(p - buf);
}
