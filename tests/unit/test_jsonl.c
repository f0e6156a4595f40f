/*
 * test_jsonl.c - common/consumer/jsonl.c: one event as one JSON line, in the schema
 * of tests/fixtures/ocaml-5.2/README.md, for every kind; and conformance:
 * every ring file written by real OCaml 5.2.0 programs decodes to exactly
 * the JSONL OCaml's own consumer produced, ring by ring, line by line.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rte/proc.h"
#include "rte_test.h"

static char line[RTE_JSONL_MAX];

/* Write one message to a fresh file, read it back, format it. */
static const char *one(uint64_t hdr, uint64_t ts, const uint64_t *p,
                       unsigned n, const char *uname, long pid)
{
	struct t_file f;
	struct rte_ring_writer w;
	struct rte_event ev;
	rte_cursor *c;
	size_t len;

	t_ring_file_create(&f, "one.events", 3, 10);
	if (uname)
		t_set_name(&f, rte_hdr_id(hdr), uname);
	t_writer(&f, 2, &w);
	assert_int_equal(rte_ring_write(&w, hdr, ts, p, n), 0);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 2, &ev), 1);
	len = rte_event_jsonl(line, sizeof line, &ev, pid);
	assert_int_equal(len, strlen(line));
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
	return line;
}

static void runtime_kinds_have_the_documented_fields(void **state)
{
	uint64_t b[RTE_ALLOC_BUCKETS], v;

	(void)state;
	for (unsigned i = 0; i < RTE_ALLOC_BUCKETS; i++)
		b[i] = i * 3;
	b[19] = UINT64_MAX;
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_BEGIN, RTE_P_MINOR), 17,
	                        NULL, 0, NULL, -1),
	                    "{\"ring\":2,\"ts\":17,\"kind\":\"begin\",\"id\":10,"
	                    "\"name\":\"minor\"}");
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_EXIT, 43), 18, NULL, 0,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":18,\"kind\":\"end\",\"id\":43,"
	                    "\"name\":\"compaction_release\"}");
	v = UINT64_MAX;
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_COUNTER, 5), 19, &v, 1,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":19,\"kind\":\"counter\",\"id\":5,"
	                    "\"name\":\"minor_allocated\","
	                    "\"value\":18446744073709551615}");
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_ALLOC, 0), 20, b,
	                        RTE_ALLOC_BUCKETS, NULL, -1),
	                    "{\"ring\":2,\"ts\":20,\"kind\":\"alloc\",\"buckets\":"
	                    "[0,3,6,9,12,15,18,21,24,27,30,33,36,39,42,45,48,51,54,"
	                    "18446744073709551615]}");
	v = (uint64_t)INT64_MIN;
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, 4), 21, &v, 1,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":21,\"kind\":\"lifecycle\",\"id\":4,"
	                    "\"name\":\"fork_parent\",\"data\":-9223372036854775808}");
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, 1), 22, NULL,
	                        0, NULL, -1),
	                    "{\"ring\":2,\"ts\":22,\"kind\":\"lifecycle\",\"id\":1,"
	                    "\"name\":\"ring_stop\",\"data\":0}");
	/* pid first when asked for */
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_BEGIN, 0), 0, NULL, 0,
	                        NULL, 4242),
	                    "{\"pid\":4242,\"ring\":2,\"ts\":0,\"kind\":\"begin\","
	                    "\"id\":0,\"name\":\"explicit_gc_set\"}");
}

static void unknown_ids_get_a_numbered_name(void **state)
{
	uint64_t v = 1;

	(void)state;
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_BEGIN, 44), 1, NULL, 0,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":1,\"kind\":\"begin\",\"id\":44,"
	                    "\"name\":\"phase_44\"}");
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_COUNTER, 8191), 1, &v, 1,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":1,\"kind\":\"counter\",\"id\":8191,"
	                    "\"name\":\"counter_8191\",\"value\":1}");
	assert_string_equal(one(rte_hdr_make(0, 0, RTE_MSG_LIFECYCLE, 8), 1, &v, 1,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":1,\"kind\":\"lifecycle\",\"id\":8,"
	                    "\"name\":\"lifecycle_8\",\"data\":1}");
}

static void user_kinds_have_the_documented_fields(void **state)
{
	uint64_t v = (uint64_t)-7, p[3];

	(void)state;
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_UNIT, 1), 5, NULL, 0,
	                        "app.tick", -1),
	                    "{\"ring\":2,\"ts\":5,\"kind\":\"user_unit\","
	                    "\"event\":\"app.tick\"}");
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_INT, 2), 6, &v, 1,
	                        "app.count", -1),
	                    "{\"ring\":2,\"ts\":6,\"kind\":\"user_int\","
	                    "\"event\":\"app.count\",\"value\":-7}");
	v = (uint64_t)INT64_MAX;
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_INT, 2), 6, &v, 1,
	                        "app.count", -1),
	                    "{\"ring\":2,\"ts\":6,\"kind\":\"user_int\","
	                    "\"event\":\"app.count\",\"value\":9223372036854775807}");
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_SPAN_BEGIN, 3), 7, NULL,
	                        0, "app.work", -1),
	                    "{\"ring\":2,\"ts\":7,\"kind\":\"user_span\","
	                    "\"event\":\"app.work\",\"span\":\"begin\"}");
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_SPAN_END, 3), 8, NULL,
	                        0, "app.work", -1),
	                    "{\"ring\":2,\"ts\":8,\"kind\":\"user_span\","
	                    "\"event\":\"app.work\",\"span\":\"end\"}");
	rte_custom_encode("\x00\x01\xab\xff\"z", 6, p);
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 4), 9, p, 1,
	                        "app.msg", -1),
	                    "{\"ring\":2,\"ts\":9,\"kind\":\"user_custom\","
	                    "\"event\":\"app.msg\",\"hex\":\"0001abff227a\"}");
	rte_custom_encode("", 0, p);
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 4), 9, p, 1,
	                        "app.msg", -1),
	                    "{\"ring\":2,\"ts\":9,\"kind\":\"user_custom\","
	                    "\"event\":\"app.msg\",\"hex\":\"\"}");
	/* a name slot never written: the empty name */
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_UNIT, 77), 10, NULL, 0,
	                        NULL, -1),
	                    "{\"ring\":2,\"ts\":10,\"kind\":\"user_unit\","
	                    "\"event\":\"\"}");
}

static void lost_words_have_no_timestamp(void **state)
{
	struct rte_event ev = { .kind = RTE_EV_LOST, .ring = 3 };

	(void)state;
	ev.u.lost_words = 5240;
	rte_event_jsonl(line, sizeof line, &ev, -1);
	assert_string_equal(line, "{\"ring\":3,\"kind\":\"lost\",\"words\":5240}");
	rte_event_jsonl(line, sizeof line, &ev, 1);
	assert_string_equal(line, "{\"pid\":1,\"ring\":3,\"kind\":\"lost\",\"words\":5240}");
}

static void names_from_files_are_escaped(void **state)
{
	(void)state;
	assert_string_equal(one(rte_hdr_make(0, 1, RTE_UMSG_UNIT, 1), 1, NULL, 0,
	                        "q\"b\\c\x01\x1f\x7f\xc3\xa9.\xed\xa0\x80\xc3", -1),
	                    "{\"ring\":2,\"ts\":1,\"kind\":\"user_unit\",\"event\":"
	                    "\"q\\\"b\\\\c\\u0001\\u001f\\u007f\xc3\xa9."
	                    "\\udced\\udca0\\udc80\\udcc3\"}");
}

static void longest_line_fits_rte_jsonl_max(void **state)
{
	static unsigned char bytes[RTE_CUSTOM_MAX_BYTES];
	static uint64_t p[RTE_MAX_MSG_WORDS];
	char name[RTE_NAME_MAX + 1];
	const char *l;
	size_t words;

	(void)state;
	memset(bytes, 0xab, sizeof bytes);
	memset(name, 0x01, RTE_NAME_MAX); /* each byte escapes to 6 */
	name[RTE_NAME_MAX] = '\0';
	words = rte_custom_encode(bytes, sizeof bytes, p);
	l = one(rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 8191), UINT64_MAX, p,
	        (unsigned)words, name, 2147483647L);
	assert_true(strlen(l) < RTE_JSONL_MAX - 1);
	assert_int_equal(l[strlen(l) - 1], '}');
	assert_non_null(strstr(l, "\"ts\":18446744073709551615"));
	assert_int_equal(strspn(strstr(l, "\"hex\":\"") + 7, "ab"),
	                 2 * RTE_CUSTOM_MAX_BYTES);
}

/* An rte.proc payload: the record, then argv bytes. */
static const char *proc_line(struct rte_proc_rec r, const char *argv,
                             size_t n)
{
	static unsigned char b[sizeof(r) + RTE_PROC_ARGV_MAX + 8];
	static uint64_t p[RTE_MAX_MSG_WORDS];
	size_t words;

	memcpy(b, &r, sizeof(r));
	memcpy(b + sizeof(r), argv, n);
	words = rte_custom_encode(b, sizeof(r) + n, p);
	return one(rte_hdr_make(0, 1, RTE_UMSG_CUSTOM, 8185), 3, p,
	           (unsigned)words, "rte.proc", 1);
}

static void rte_proc_is_decoded_and_checked(void **state)
{
	static char argv[RTE_PROC_ARGV_MAX];
	struct rte_proc_rec r = {.version = 1, .ppid = 7, .argc = 2,
	                         .bytes = 8};
	const char *l;

	(void)state;
	l = proc_line(r, "sh\0a\nb\xff\0", 8);
	assert_non_null(strstr(l, ",\"proc\":{\"ppid\":7,\"argc\":2,"
	                          "\"argv\":[\"sh\",\"a\\u000ab\\udcff\"]}}"));
	/* Hostile: more bytes than the vector has, an unknown version, a
	 * cut vector not flagged: hex only. */
	r.bytes = 3;
	assert_null(strstr(proc_line(r, "sh\0a\nb\xff\0", 8), "\"proc\""));
	r.bytes = 8;
	r.version = 2;
	assert_null(strstr(proc_line(r, "sh\0a\nb\xff\0", 8), "\"proc\""));
	r.version = 1;
	r.bytes = 20;
	assert_null(strstr(proc_line(r, "sh\0a\nb\xff\0", 8), "\"proc\""));
	/* The longest: 4096 bytes, each escaped, cut, every flag; the line
	 * is whole. */
	memset(argv, 0x01, sizeof argv);
	r.flags = RTE_PROC_ARGV_CUT | RTE_PROC_FORK_CHILD | RTE_PROC_PRESERVE;
	r.argc = 1;
	r.bytes = 100000;
	r.ppid = INT32_MIN;
	l = proc_line(r, argv, sizeof argv);
	assert_true(strlen(l) < RTE_JSONL_MAX - 1);
	assert_non_null(strstr(l, "{\"ppid\":-2147483648,\"fork\":true,\"argc\":1,"));
	assert_non_null(strstr(l, "],\"argv_cut\":true,\"preserve\":true}}"));
}

static void short_buffers_get_a_terminated_prefix(void **state)
{
	char full[256], small[256];
	uint64_t v = 123456789;
	size_t n;
	struct rte_event ev;
	struct t_file f;
	struct rte_ring_writer w;
	rte_cursor *c;

	(void)state;
	strcpy(full, one(rte_hdr_make(0, 0, RTE_MSG_COUNTER, 5), 19, &v, 1, NULL,
	                 77));
	t_ring_file_create(&f, "short.events", 3, 10);
	t_writer(&f, 2, &w);
	assert_int_equal(rte_ring_write1(&w, rte_hdr_make(0, 0, RTE_MSG_COUNTER, 5),
	                                 19, v), 0);
	c = t_open(f.path);
	assert_int_equal(rte_cursor_next(c, 2, &ev), 1);
	for (size_t cap = 1; cap <= strlen(full) + 1; cap++) {
		memset(small, 'Z', sizeof small);
		n = rte_event_jsonl(small, cap, &ev, 77);
		assert_int_equal(n, cap - 1);
		assert_int_equal(small[cap - 1], '\0');
		assert_memory_equal(small, full, cap - 1);
		assert_int_equal(small[cap], 'Z');
	}
	memset(small, 'Z', sizeof small);
	assert_int_equal(rte_event_jsonl(small, 0, &ev, 77), 0);
	assert_int_equal(small[0], 'Z');
	rte_cursor_close(c);
	t_ring_file_unmap(&f);
}

/* ---- conformance with OCaml 5.2.0 -------------------------------------- */

struct lines {
	char **l;
	size_t n;
};

static void read_lines(const char *path, struct lines *out)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t n;

	if (!f)
		fail_msg("cannot open %s", path);
	out->l = NULL;
	out->n = 0;
	while ((n = getline(&buf, &cap, f)) > 0) {
		if (buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			out->l = realloc(out->l, alloc * sizeof *out->l);
			assert_non_null(out->l);
		}
		out->l[out->n++] = strdup(buf);
	}
	free(buf);
	fclose(f);
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->l[i]);
	free(l->l);
}

static unsigned line_ring(const char *l)
{
	unsigned r;

	if (sscanf(l, "{\"ring\":%u,", &r) != 1)
		fail_msg("expected line without a ring: %s", l);
	return r;
}

static void pathf(char *out, size_t cap, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t cap, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(out, cap, f, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < cap);
}

/* Decode one fixture and compare with its expected JSONL; returns the
 * number of lines compared. */
static size_t check_fixture(const char *dir, const char *gzname)
{
	char gz[PATH_MAX], exp[PATH_MAX], out[PATH_MAX], stem[256];
	struct lines want;
	struct rte_event ev;
	rte_cursor *c;
	size_t matched = 0;

	pathf(stem, sizeof stem, "%.*s", (int)(strlen(gzname) - 10), gzname);
	pathf(gz, sizeof gz, "%s/%s", dir, gzname);
	pathf(exp, sizeof exp, "%s/%s.expected.jsonl", dir, stem);
	pathf(out, sizeof out, "%s/%s.events", t_tmpdir(), stem);
	t_gunzip(gz, out);
	read_lines(exp, &want);
	c = t_open(out);
	for (unsigned r = 0; r < rte_cursor_rings(c); r++) {
		size_t i = 0;
		int got;

		while ((got = rte_cursor_next(c, r, &ev)) == 1) {
			rte_event_jsonl(line, sizeof line, &ev, -1);
			while (i < want.n && line_ring(want.l[i]) != r)
				i++;
			if (i == want.n)
				fail_msg("%s ring %u: extra event %s", gz, r, line);
			if (strcmp(line, want.l[i]) != 0)
				fail_msg("%s ring %u:\n got  %s\n want %s", gz, r, line,
				         want.l[i]);
			i++;
			matched++;
		}
		if (got != 0)
			fail_msg("%s ring %u: %s", gz, r, rte_cursor_errmsg(c));
		for (; i < want.n; i++)
			if (line_ring(want.l[i]) == r)
				fail_msg("%s ring %u: missing %s", gz, r, want.l[i]);
	}
	assert_int_equal(matched, want.n);
	print_message("    %s: %zu events match\n", gzname, matched);
	rte_cursor_close(c);
	free_lines(&want);
	return matched;
}

static void ocaml_fixtures_decode_to_the_expected_jsonl(void **state)
{
	static const char *const scenarios[] = {
		"basic", "domains", "fork", "pause", "wrap",
	};
	size_t files = 0, lines = 0;

	(void)state;
	for (size_t s = 0; s < sizeof scenarios / sizeof *scenarios; s++) {
		char dir[PATH_MAX];
		struct dirent *de;
		DIR *d;

		pathf(dir, sizeof dir, "%s/%s", t_fixtures_dir(), scenarios[s]);
		d = opendir(dir);
		if (!d)
			fail_msg("fixtures not found: %s", dir);
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);

			if (n > 10 && strcmp(de->d_name + n - 10, ".events.gz") == 0) {
				lines += check_fixture(dir, de->d_name);
				files++;
			}
		}
		closedir(d);
	}
	/* basic, domains, pause, wrap: one file each; fork: two */
	assert_int_equal(files, 6);
	assert_true(lines > 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runtime_kinds_have_the_documented_fields),
		cmocka_unit_test(unknown_ids_get_a_numbered_name),
		cmocka_unit_test(user_kinds_have_the_documented_fields),
		cmocka_unit_test(lost_words_have_no_timestamp),
		cmocka_unit_test(names_from_files_are_escaped),
		cmocka_unit_test(longest_line_fits_rte_jsonl_max),
		cmocka_unit_test(short_buffers_get_a_terminated_prefix),
		cmocka_unit_test(rte_proc_is_decoded_and_checked),
		cmocka_unit_test(ocaml_fixtures_decode_to_the_expected_jsonl),
	};

	return cmocka_run_group_tests_name("jsonl", tests, NULL, NULL);
}
