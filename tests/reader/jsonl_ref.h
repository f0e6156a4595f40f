/*
 * jsonl_ref.h - the first, printf-based implementation of rte_event_jsonl()
 * (common/consumer/jsonl.c before it was rewritten without printf), kept as the
 * oracle the rewrite is checked against byte for byte, truncation
 * included (test_jsonl_fast.c). Test code only.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rte/consumer.h"

struct out {
	char *p;
	size_t cap, len; /* len may exceed cap: then output is truncated */
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - o->len;

		memcpy(o->p + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(struct out *o, const char *f, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *f, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(tmp, sizeof tmp, f, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* The length of the well-formed UTF-8 character at s (NUL-terminated),
 * 0 if none: decoded to its code point and that judged, not utf8.h's
 * table of second-byte ranges, so that the two check each other. */
static size_t ref_utf8(const unsigned char *s)
{
	static const unsigned least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	unsigned c = s[0], k, cp;

	if (c < 0x80)
		return 1;
	k = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!k)
		return 0;
	cp = c & (0x7fu >> k);
	for (unsigned i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the NUL too: never read past it */
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < least[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

/* A JSON string; names come from files and may hold anything: '"' and
 * '\' escaped, controls and DEL as \u00XX, UTF-8 as it is, any other
 * byte as \udcXX. */
static void put_str(struct out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(o, "\"", 1);
	while (*s) {
		unsigned char ch = (unsigned char)*s;
		size_t k = ref_utf8((const unsigned char *)s);

		if (ch == '"' || ch == '\\') {
			char e[2] = { '\\', (char)ch };
			put(o, e, 2);
		} else if (ch < 0x20 || ch == 0x7f) {
			char e[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
			put(o, e, 6);
		} else if (k) {
			put(o, s, k);
			s += k;
			continue;
		} else {
			char e[6] = { '\\', 'u', 'd', 'c', hex[ch >> 4], hex[ch & 15] };
			put(o, e, 6);
		}
		s++;
	}
	put(o, "\"", 1);
}

static const char *ref_event_name(const struct rte_event *ev, char *buf, size_t cap)
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

static void put_payload(struct out *o, const struct rte_event *ev,
                        const char *name)
{
	static const char hex[] = "0123456789abcdef";

	switch (ev->kind) {
	case RTE_EV_BEGIN:
	case RTE_EV_END:
		putf(o, ",\"id\":%u,\"name\":", ev->id);
		put_str(o, name);
		break;
	case RTE_EV_COUNTER:
		putf(o, ",\"id\":%u,\"name\":", ev->id);
		put_str(o, name);
		putf(o, ",\"value\":%" PRIu64, ev->u.counter);
		break;
	case RTE_EV_ALLOC:
		puts_(o, ",\"buckets\":[");
		for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
			putf(o, i ? ",%" PRIu64 : "%" PRIu64, ev->u.buckets[i]);
		puts_(o, "]");
		break;
	case RTE_EV_LIFECYCLE:
		putf(o, ",\"id\":%u,\"name\":", ev->id);
		put_str(o, name);
		putf(o, ",\"data\":%" PRId64, ev->u.data);
		break;
	case RTE_EV_USER_INT:
		putf(o, ",\"value\":%" PRId64, ev->u.value);
		break;
	case RTE_EV_USER_SPAN_BEGIN:
	case RTE_EV_USER_SPAN_END:
		puts_(o, ev->kind == RTE_EV_USER_SPAN_BEGIN ? ",\"span\":\"begin\""
		                                            : ",\"span\":\"end\"");
		break;
	case RTE_EV_USER_CUSTOM:
		puts_(o, ",\"hex\":\"");
		for (size_t i = 0; i < ev->u.custom.len; i++) {
			char h[2] = { hex[ev->u.custom.bytes[i] >> 4],
			              hex[ev->u.custom.bytes[i] & 15] };
			put(o, h, 2);
		}
		puts_(o, "\"");
		break;
	default:
		break;
	}
}

static size_t ref_event_jsonl(char *buf, size_t cap, const struct rte_event *ev,
                              long pid)
{
	struct out o = { buf, cap ? cap - 1 : 0, 0 };
	char nbuf[48];
	int user = ev->kind >= RTE_EV_USER_UNIT;

	put(&o, "{", 1);
	if (pid >= 0)
		putf(&o, "\"pid\":%ld,", pid);
	putf(&o, "\"ring\":%u,", ev->ring);
	if (ev->kind == RTE_EV_LOST) {
		putf(&o, "\"kind\":\"lost\",\"words\":%" PRIu64 "}", ev->u.lost_words);
	} else {
		putf(&o, "\"ts\":%" PRIu64 ",\"kind\":\"%s\"", ev->ts,
		     rte_event_kind_name(ev->kind));
		if (user) {
			puts_(&o, ",\"event\":");
			put_str(&o, ev->name ? ev->name : "");
		}
		put_payload(&o, ev, ref_event_name(ev, nbuf, sizeof nbuf));
		put(&o, "}", 1);
	}
	if (cap) {
		size_t n = o.len < o.cap ? o.len : o.cap;

		buf[n] = '\0';
		return n;
	}
	return 0;
}
