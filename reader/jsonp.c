/*
 * jsonp.c - the JSON reader of jsonp.h: recursive descent, at most
 * MAXDEPTH levels, strings unescaped (\uXXXX to UTF-8; an unpaired
 * \udc80..\udcff back to the byte 80..ff it stands for, the inverse of
 * utf8.h's rule for bytes that are not UTF-8, so that names read from
 * summary-json are the bytes of the ring file; any other unpaired
 * surrogate becomes U+FFFD).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonp.h"

#define MAXDEPTH 64

struct p {
	const char *s;
	size_t i, n;
	char *err;
	size_t errlen;
	int failed;
};

static void fail(struct p *p, const char *why)
{
	if (!p->failed)
		snprintf(p->err, p->errlen, "offset %zu: %s", p->i, why);
	p->failed = 1;
}

static void ws(struct p *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static int lit(struct p *p, const char *w)
{
	size_t l = strlen(w);

	if (p->n - p->i < l || memcmp(p->s + p->i, w, l))
		return 0;
	p->i += l;
	return 1;
}

static void put_utf8(char *o, size_t *k, unsigned c)
{
	if (c < 0x80) {
		o[(*k)++] = (char)c;
	} else if (c < 0x800) {
		o[(*k)++] = (char)(0xc0 | c >> 6);
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		o[(*k)++] = (char)(0xe0 | c >> 12);
		o[(*k)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	} else {
		o[(*k)++] = (char)(0xf0 | c >> 18);
		o[(*k)++] = (char)(0x80 | ((c >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	}
}

static int hex4(struct p *p, unsigned *out)
{
	unsigned c = 0;

	if (p->n - p->i < 4)
		return -1;
	for (int j = 0; j < 4; j++) {
		char h = p->s[p->i++];

		c <<= 4;
		if (h >= '0' && h <= '9')
			c |= (unsigned)(h - '0');
		else if (h >= 'a' && h <= 'f')
			c |= (unsigned)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			c |= (unsigned)(h - 'A' + 10);
		else
			return -1;
	}
	*out = c;
	return 0;
}

/* A string at p->i (the opening quote); the result is malloc'd. An
 * escape never makes the text longer than its source: len is enough. */
static char *string(struct p *p)
{
	size_t start = ++p->i, k = 0, cap;
	char *o;

	while (p->i < p->n && p->s[p->i] != '"')
		p->i += p->s[p->i] == '\\' ? 2 : 1;
	if (p->i >= p->n) {
		fail(p, "unterminated string");
		return NULL;
	}
	cap = p->i - start + 1;
	p->i = start;
	if (!(o = malloc(cap))) {
		fail(p, "out of memory");
		return NULL;
	}
	while (p->s[p->i] != '"') {
		char c = p->s[p->i++];
		unsigned u, lo;

		if ((unsigned char)c < 0x20) {
			fail(p, "control character in string");
			free(o);
			return NULL;
		}
		if (c != '\\') {
			o[k++] = c;
			continue;
		}
		c = p->s[p->i++];
		switch (c) {
		case '"': case '\\': case '/': o[k++] = c; break;
		case 'b': o[k++] = '\b'; break;
		case 'f': o[k++] = '\f'; break;
		case 'n': o[k++] = '\n'; break;
		case 'r': o[k++] = '\r'; break;
		case 't': o[k++] = '\t'; break;
		case 'u':
			if (hex4(p, &u)) {
				fail(p, "bad \\u escape");
				free(o);
				return NULL;
			}
			if (u >= 0xd800 && u < 0xdc00 && p->n - p->i >= 6 &&
			    p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
				size_t save = p->i;

				p->i += 2;
				if (!hex4(p, &lo) && lo >= 0xdc00 && lo < 0xe000)
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				else
					p->i = save;
			}
			if (u >= 0xdc80 && u < 0xdd00) {
				o[k++] = (char)(u - 0xdc00);
				break;
			}
			if (u >= 0xd800 && u < 0xe000)
				u = 0xfffd;
			put_utf8(o, &k, u); /* at most 4 bytes for 6 or 12 read */
			break;
		default:
			fail(p, "bad escape");
			free(o);
			return NULL;
		}
	}
	p->i++;
	o[k] = 0;
	return o;
}

static void value(struct p *p, struct rd_jv *v, int depth);

static int grow(struct p *p, struct rd_jv *v, size_t *cap, int obj)
{
	size_t c = *cap ? 2 * *cap : 8;
	struct rd_jv *nv;
	char **nk;

	if (v->n < *cap)
		return 0;
	if (!(nv = realloc(v->v, c * sizeof *nv)))
		goto oom;
	v->v = nv;
	if (obj) {
		if (!(nk = realloc(v->k, c * sizeof *nk)))
			goto oom;
		v->k = nk;
	}
	*cap = c;
	return 0;
oom:
	fail(p, "out of memory");
	return -1;
}

static void container(struct p *p, struct rd_jv *v, int depth, int obj)
{
	size_t cap = 0;

	v->t = obj ? RD_JOBJ : RD_JARR;
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
		p->i++;
		return;
	}
	for (;;) {
		if (grow(p, v, &cap, obj))
			return;
		memset(&v->v[v->n], 0, sizeof v->v[v->n]);
		if (obj) {
			ws(p);
			v->k[v->n] = NULL;
			if (p->i >= p->n || p->s[p->i] != '"') {
				fail(p, "expected a key");
				return;
			}
			if (!(v->k[v->n] = string(p)))
				return;
			ws(p);
			if (p->i >= p->n || p->s[p->i] != ':') {
				v->n++;
				fail(p, "expected ':'");
				return;
			}
			p->i++;
		}
		value(p, &v->v[v->n++], depth + 1);
		if (p->failed)
			return;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			return;
		}
		fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		return;
	}
}

static void value(struct p *p, struct rd_jv *v, int depth)
{
	char *end;

	ws(p);
	if (depth > MAXDEPTH) {
		fail(p, "nested too deeply");
		return;
	}
	if (p->i >= p->n) {
		fail(p, "unexpected end");
		return;
	}
	switch (p->s[p->i]) {
	case '{': container(p, v, depth, 1); return;
	case '[': container(p, v, depth, 0); return;
	case '"':
		v->t = RD_JSTR;
		v->str = string(p);
		return;
	default:
		break;
	}
	if (lit(p, "true") || lit(p, "false")) {
		v->t = RD_JBOOL;
		v->num = p->s[p->i - 1] == 'e' && p->s[p->i - 2] == 'u';
		return;
	}
	if (lit(p, "null")) {
		v->t = RD_JNULL;
		return;
	}
	if (!strchr("-0123456789", p->s[p->i]) || !p->s[p->i]) {
		fail(p, "unexpected character");
		return;
	}
	{
		char buf[64];
		size_t l = 0;

		while (p->i + l < p->n && l < sizeof buf - 1 &&
		       strchr("+-.eE0123456789", p->s[p->i + l]) && p->s[p->i + l])
			l++;
		memcpy(buf, p->s + p->i, l);
		buf[l] = 0;
		v->t = RD_JNUM;
		v->num = strtod(buf, &end);
		if (end != buf + l) {
			fail(p, "bad number");
			return;
		}
		p->i += l;
	}
}

static void free_inner(struct rd_jv *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		free_inner(&v->v[i]);
		if (v->k)
			free(v->k[i]);
	}
	free(v->v);
	free(v->k);
}

void rd_json_free(struct rd_jv *v)
{
	if (v)
		free_inner(v);
	free(v);
}

struct rd_jv *rd_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct p p = { text, 0, len, err, errlen, 0 };
	struct rd_jv *v = calloc(1, sizeof *v);

	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	value(&p, v, 0);
	ws(&p);
	if (!p.failed && p.i != p.n)
		fail(&p, "text after the JSON value");
	if (p.failed) {
		rd_json_free(v);
		return NULL;
	}
	return v;
}

const struct rd_jv *rd_json_get(const struct rd_jv *o, const char *key)
{
	if (!o || o->t != RD_JOBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (o->k[i] && !strcmp(o->k[i], key))
			return &o->v[i];
	return NULL;
}

double rd_json_num(const struct rd_jv *o, const char *key, double dflt)
{
	const struct rd_jv *v = rd_json_get(o, key);

	return v && v->t == RD_JNUM ? v->num : dflt;
}
