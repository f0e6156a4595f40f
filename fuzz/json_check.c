/*
 * json_check.c - recursive-descent JSON syntax check (see json_check.h).
 * Every function takes the cursor by pointer and returns 1 (ok) or 0.
 */
#include "json_check.h"

struct jp {
	const char *p, *end;
	unsigned depth;
};

#define JP_MAX_DEPTH 16u

static int value(struct jp *j);

static int at(const struct jp *j, char c)
{
	return j->p < j->end && *j->p == c;
}

static int eat(struct jp *j, char c)
{
	if (!at(j, c))
		return 0;
	j->p++;
	return 1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int escape(struct jp *j)
{
	if (j->p >= j->end)
		return 0;
	switch (*j->p++) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r':
	case 't':
		return 1;
	case 'u': {
		unsigned v = 0;

		for (int i = 0; i < 4; i++) {
			char h = j->p < j->end ? *j->p++ : 'x';

			if (!is_hex(h))
				return 0;
			v = v << 4 | (unsigned)(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
		}
		/* a control or DEL, or a byte that is not UTF-8 (\udcXX) */
		return v < 0x20 || v == 0x7f || (v >= 0xdc80 && v <= 0xdcff);
	}
	default:
		return 0;
	}
}

/* A well-formed UTF-8 character past ASCII at j->p (its lead c already
 * taken), decoded to its code point and that judged: no overlong form,
 * no surrogate, nothing past U+10FFFF. */
static int utf8(struct jp *j, unsigned char c)
{
	static const unsigned least[4] = { 0, 0x80, 0x800, 0x10000 };
	unsigned k = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 0;
	unsigned cp = c & (0x3fu >> k);

	if (!k)
		return 0;
	for (unsigned i = 0; i < k; i++) {
		if (j->p >= j->end || ((unsigned char)*j->p & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | ((unsigned char)*j->p++ & 0x3fu);
	}
	return cp >= least[k] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
}

static int string(struct jp *j)
{
	if (!eat(j, '"'))
		return 0;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;

		if (c == '"')
			return 1;
		if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8(j, c)))
			return 0;
		if (c == '\\' && !escape(j))
			return 0;
	}
	return 0;
}

static int digits(struct jp *j)
{
	const char *start = j->p;

	while (j->p < j->end && is_digit(*j->p))
		j->p++;
	return j->p > start;
}

/* Integers only: the schema has no fractions or exponents. */
static int number(struct jp *j)
{
	eat(j, '-');
	if (at(j, '0')) {
		j->p++;
		return !(j->p < j->end && is_digit(*j->p));
	}
	return digits(j);
}

static int members(struct jp *j, char close, int keyed)
{
	if (eat(j, close))
		return 1;
	do {
		if (keyed && !(string(j) && eat(j, ':')))
			return 0;
		if (!value(j))
			return 0;
	} while (eat(j, ','));
	return eat(j, close);
}

static int value(struct jp *j)
{
	int ok;

	if (j->p >= j->end)
		return 0;
	if (*j->p == '"')
		return string(j);
	if (*j->p != '{' && *j->p != '[')
		return number(j);
	if (++j->depth > JP_MAX_DEPTH)
		return 0;
	ok = *j->p++ == '{' ? members(j, '}', 1) : members(j, ']', 0);
	j->depth--;
	return ok;
}

int fz_json_object_ok(const char *s, size_t n)
{
	struct jp j = { s, s + n, 0 };

	return at(&j, '{') && value(&j) && j.p == j.end;
}
