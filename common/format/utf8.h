/*
 * utf8.h - bytes from a file (names, argv, payloads: anything but what
 * they should be) as the text of a JSON string, by one rule that every
 * JSON output of the consumer library and of rte-read follows
 * (doc/USAGE.md, "Strings in JSON"):
 *
 *   '"' and '\'                 \" and \\
 *   0x00..0x1f, 0x7f            \u00XX
 *   well-formed UTF-8           as it is (U+0080..U+10FFFF, shortest
 *                               form, no surrogate: Unicode's table 3-7)
 *   any other byte XX >= 0x80   \udcXX, one escape a byte: the lone low
 *                               surrogate U+DC80..U+DCFF (Python's
 *                               "surrogateescape", PEP 383)
 *
 * The JSON is valid and the bytes come back exactly: no well-formed text
 * holds a surrogate, so \udcXX is always a byte that was not text, never
 * a character that was (which \u00XX would be: U+00XX is a real
 * character). Python: json.loads(s).encode("utf-8", "surrogateescape").
 *
 * Header-only, no allocation, no libc: the consumer library's JSONL line
 * and rte-read's writers share it.
 */
#ifndef RTE_UTF8_H
#define RTE_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence that begins at s,
 * of at most n (>= 1) bytes; 0 if none does (a continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, cut short by n). */
static inline size_t rte_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t k;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0; /* continuation, overlong lead (c0, c1), past U+10FFFF */
	k = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	/* The second byte's range is narrower after these four leads. */
	if (c == 0xe0)
		lo = 0xa0; /* overlong below U+0800 */
	else if (c == 0xed)
		hi = 0x9f; /* U+D800..U+DFFF, surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong below U+10000 */
	else if (c == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

/* The most rte_utf8_json writes for one byte of input. */
#define RTE_UTF8_JSON_MAX 6u

/* The character at s (n >= 1 bytes) escaped by the rule above at p: at
 * most RTE_UTF8_JSON_MAX bytes a byte taken, *used set to the bytes taken
 * (1 to 4). Returns the end of what it wrote. */
static inline char *rte_utf8_json(char *p, const unsigned char *s, size_t n,
                                  size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	size_t k;

	*used = 1;
	if (c == '"' || c == '\\') {
		*p++ = '\\';
		*p++ = (char)c;
	} else if (c < 0x20 || c == 0x7f) {
		p[0] = '\\', p[1] = 'u', p[2] = '0', p[3] = '0';
		p[4] = hex[c >> 4], p[5] = hex[c & 15];
		p += 6;
	} else if (c < 0x80) {
		*p++ = (char)c;
	} else if ((k = rte_utf8_len(s, n))) {
		for (size_t i = 0; i < k; i++)
			*p++ = (char)s[i];
		*used = k;
	} else {
		p[0] = '\\', p[1] = 'u', p[2] = 'd', p[3] = 'c';
		p[4] = hex[c >> 4], p[5] = hex[c & 15];
		p += 6;
	}
	return p;
}

/* Where to cut n bytes at s into a piece of at most max (>= 4) bytes
 * without splitting a well-formed sequence, so that the piece is escaped
 * alike alone or in the whole. Returns the piece's length. */
static inline size_t rte_utf8_cut(const unsigned char *s, size_t n, size_t max)
{
	size_t k = max;

	if (n <= max)
		return n;
	/* No sequence holds a byte that is not a continuation byte but as
	 * its first: cut before one, at most 3 back (the longest sequence
	 * has 3 continuation bytes). Four in a row end no sequence that
	 * crosses max: cut there. */
	while (k > max - 3 && (s[k] & 0xc0) == 0x80)
		k--;
	return (s[k] & 0xc0) == 0x80 ? max : k;
}

#endif
