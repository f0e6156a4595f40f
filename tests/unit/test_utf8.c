/*
 * test_utf8.c - common/format/utf8.h: the one rule by which every JSON
 * output escapes bytes from files. Well-formed UTF-8 of 1 to 4 bytes
 * passes as it is; overlongs, surrogates, code points past U+10FFFF,
 * sequences cut short and lone continuation bytes become one \udcXX a
 * byte; the bytes come back exactly from the escape (an inverse written
 * here); and a text cut into pieces by rte_utf8_cut escapes as the whole.
 */
#include <stdio.h>
#include <string.h>

#include "rte_test.h"
#include "utf8.h"

/* The escape of the n bytes s, NUL-terminated, into out. */
static size_t esc(char *out, const void *s, size_t n)
{
	const unsigned char *u = s;
	char *p = out;
	size_t used;

	for (size_t i = 0; i < n; i += used)
		p = rte_utf8_json(p, u + i, n - i, &used);
	*p = '\0';
	return (size_t)(p - out);
}

static void each_class_escaped(void **state)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{ "plain", "plain" },
		{ "q\"b\\", "q\\\"b\\\\" },
		{ "\x01\x1f\x7f~", "\\u0001\\u001f\\u007f~" },
		/* valid: 2, 3 and 4 bytes, the first and last of each */
		{ "\xc3\xbc-file.c", "\xc3\xbc-file.c" },
		{ "\xc2\x80\xdf\xbf", "\xc2\x80\xdf\xbf" },
		{ "\xe2\x82\xac \xe0\xa0\x80\xef\xbf\xbf", "\xe2\x82\xac \xe0\xa0\x80\xef\xbf\xbf" },
		{ "\xed\x9f\xbf\xee\x80\x80", "\xed\x9f\xbf\xee\x80\x80" }, /* around the surrogates */
		{ "\xf0\x9d\x84\x9e \xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
		  "\xf0\x9d\x84\x9e \xf0\x90\x80\x80\xf4\x8f\xbf\xbf" },
		/* overlong */
		{ "\xc0\xaf\xc1\xbf", "\\udcc0\\udcaf\\udcc1\\udcbf" },
		{ "\xe0\x9f\xbf", "\\udce0\\udc9f\\udcbf" },
		{ "\xf0\x8f\xbf\xbf", "\\udcf0\\udc8f\\udcbf\\udcbf" },
		/* surrogates U+D800 and U+DFFF */
		{ "\xed\xa0\x80\xed\xbf\xbf", "\\udced\\udca0\\udc80\\udced\\udcbf\\udcbf" },
		/* past U+10FFFF, and leads that begin nothing */
		{ "\xf4\x90\x80\x80", "\\udcf4\\udc90\\udc80\\udc80" },
		{ "\xf5\x80\xfe\xff", "\\udcf5\\udc80\\udcfe\\udcff" },
		/* cut short: by the next character, by the end */
		{ "\xe2\x82" "A", "\\udce2\\udc82A" },
		{ "\xf0\x9f\x98", "\\udcf0\\udc9f\\udc98" },
		{ "\xc3", "\\udcc3" },
		{ "\xc3\xc3\xbc", "\\udcc3\xc3\xbc" },
		/* lone continuation bytes */
		{ "\x80\xbf", "\\udc80\\udcbf" },
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		esc(out, t[i].in, strlen(t[i].in));
		if (strcmp(out, t[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, t[i].want);
	}
	/* a NUL of a payload (rd_out_json_mem, put_mem) */
	esc(out, "a\0b", 3);
	assert_string_equal(out, "a\\u0000b");
}

/* The bytes the escape e stands for, into out; returns their number.
 * Written from the rule, not from utf8.h. */
static size_t unesc(unsigned char *out, const char *e)
{
	size_t n = 0;
	unsigned v;

	while (*e) {
		if (*e != '\\') {
			out[n++] = (unsigned char)*e++;
			continue;
		}
		if (e[1] == '"' || e[1] == '\\') {
			out[n++] = (unsigned char)e[1];
			e += 2;
			continue;
		}
		assert_int_equal(e[1], 'u');
		assert_int_equal(sscanf(e + 2, "%4x", &v), 1);
		/* \u00XX a control or DEL, \udcXX a byte that was not text */
		assert_true(v < 0x20 || v == 0x7f || (v >= 0xdc80 && v <= 0xdcff));
		out[n++] = (unsigned char)(v & 0xff);
		e += 6;
	}
	return n;
}

static void every_string_comes_back(void **state)
{
	unsigned char in[64], back[64];
	char out[64 * RTE_UTF8_JSON_MAX + 1];
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int round = 0; round < 200000; round++) {
		size_t n = (size_t)round % 16 + 1;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly high bytes and leads: the cases that matter */
			in[i] = (unsigned char)(x % 5 == 0 ? x >> 8 : 0x80 | (x >> 8));
		}
		assert_true(esc(out, in, n) <= n * RTE_UTF8_JSON_MAX);
		assert_int_equal(unesc(back, out), n);
		assert_memory_equal(back, in, n);
	}
}

/* Pieces cut by rte_utf8_cut escape as the whole: a character of 1 to 4
 * bytes, valid or not, and runs of continuation bytes at every place
 * around the cut. */
static void pieces_escape_as_the_whole(void **state)
{
	static const char *const ins[] = {
		"\xf0\x9d\x84\x9e", "\xe2\x82\xac", "\xc3\xbc", "\x80\x80\x80\x80\x80",
		"\xf0\x9d\x84\x9e\x80", "\xe2\x82\xac\x80\x80", "\xc3\xbc\x80\x80\x80",
		"\xf0\x9f\x98", "\xed\xa0\x80", "\xf0\x80\x80\xaf\x80", "\xc3\xc3\xbc",
	};
	unsigned char in[32];
	char whole[32 * RTE_UTF8_JSON_MAX + 1], cut[32 * RTE_UTF8_JSON_MAX + 1];

	(void)state;
	for (size_t w = 0; w < sizeof ins / sizeof ins[0]; w++)
		for (size_t at = 0; at < 14; at++)
			for (size_t max = 4; max <= 9; max++) {
				size_t n = 20, l = strlen(ins[w]), k = 0;

				memset(in, 'a', n);
				memcpy(in + at, ins[w], l);
				esc(whole, in, n);
				for (size_t i = 0; i < n;) {
					size_t piece = rte_utf8_cut(in + i, n - i, max);

					assert_true(piece >= 1 && piece <= max);
					k += esc(cut + k, in + i, piece);
					i += piece;
				}
				if (strcmp(whole, cut))
					fail_msg("%zu at %zu, pieces of %zu: %s, not %s", w, at,
					         max, cut, whole);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_class_escaped),
		cmocka_unit_test(every_string_comes_back),
		cmocka_unit_test(pieces_escape_as_the_whole),
	};

	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
