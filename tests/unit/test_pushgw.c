/*
 * test_pushgw.c - common/push/pushgw.c: the Pushgateway URL that --push
 * takes, split into host, port and prefix, the URLs it refuses and why,
 * and the grouping labels of --label. (tests/run checks that rte-run and
 * rte-read take and refuse alike.)
 */
#include <stdio.h>
#include <string.h>

#include "rte_test.h"
#include "pushgw.h"

static void urls_are_split_into_host_port_and_prefix(void **state)
{
	static const struct {
		const char *url, *host, *port, *prefix;
	} ok[] = {
		{ "http://h", "h", "80", "" },
		{ "http://gw.example:9091", "gw.example", "9091", "" },
		{ "http://127.0.0.1:9091/a/b/", "127.0.0.1", "9091", "/a/b/" },
		{ "http://h/x:1", "h", "80", "/x:1" },
		{ "http://[::1]", "::1", "80", "" },
		{ "http://[::1]:1/p", "::1", "1", "/p" },
		{ "http://[]", "", "80", "" },
		{ "http://h:012345678901234", "h", "012345678901234", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct rte_pushgw_url u;
		char err[64] = "";

		if (rte_pushgw_url_parse(ok[i].url, &u, err, sizeof err) != 0)
			fail_msg("%s: refused: %s", ok[i].url, err);
		assert_string_equal(u.host, ok[i].host);
		assert_string_equal(u.port, ok[i].port);
		assert_string_equal(u.prefix, ok[i].prefix);
		assert_ptr_equal(u.prefix, ok[i].url + strlen(ok[i].url) - strlen(ok[i].prefix));
	}
}

/* The longest host fits, bare or in []; one more character is refused
 * (the longest port is in the tables around). */
static void the_longest_host_fits(void **state)
{
	char url[512], err[600], host[RTE_PUSHGW_HOST_CAP];
	struct rte_pushgw_url u;

	(void)state;
	memset(host, 'a', sizeof host - 1);
	host[sizeof host - 1] = 0;
	for (int v6 = 0; v6 <= 1; v6++) {
		snprintf(url, sizeof url, v6 ? "http://[%s]:1" : "http://%s:1", host);
		assert_int_equal(rte_pushgw_url_parse(url, &u, err, sizeof err), 0);
		assert_string_equal(u.host, host);
		snprintf(url, sizeof url, v6 ? "http://[a%s]" : "http://a%s", host);
		assert_int_equal(rte_pushgw_url_parse(url, &u, err, sizeof err), -1);
		assert_non_null(strstr(err, v6 ? ": host too long" : ": bad host"));
	}
}

static void bad_urls_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *url, *why;
	} bad[] = {
		{ "ftp://h", "only http:// URLs are supported" },
		{ "HTTP://h", "only http:// URLs are supported" },
		{ "http:/h", "only http:// URLs are supported" },
		{ "https://h", "only http:// URLs are supported: rte has no TLS" },
		{ "http://", "bad host" },
		{ "http:///p", "bad host" },
		{ "http://:1", "bad host" },
		{ "http://[::1", "bad host" },
		{ "http://[::1]x", "bad host" },
		{ "http://[::1]x:1", "bad host" },
		{ "http://h:", "bad port" },
		{ "http://h:/p", "bad port" },
		{ "http://h:x", "bad port" },
		{ "http://h:1:2", "bad port" },
		{ "http://h:-1", "bad port" },
		{ "http://[::1]:", "bad port" },
		{ "http://h:0123456789012345", "bad port" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct rte_pushgw_url u;
		char err[600], want[600];

		if (rte_pushgw_url_parse(bad[i].url, &u, err, sizeof err) != -1)
			fail_msg("%s: taken", bad[i].url);
		snprintf(want, sizeof want, "%s: %s", bad[i].url, bad[i].why);
		if (strncmp(err, want, strlen(want)))
			fail_msg("%s: '%s', not '%s...'", bad[i].url, err, want);
	}
}

/* The reason is cut to the caller's buffer, NUL-terminated. */
static void the_reason_fits_a_small_buffer(void **state)
{
	struct rte_pushgw_url u;
	char err[8];

	(void)state;
	memset(err, 'z', sizeof err);
	assert_int_equal(rte_pushgw_url_parse("ftp://somewhere", &u, err, sizeof err), -1);
	assert_string_equal(err, "ftp://s");
}

static void label_names_and_labels_follow_prometheus(void **state)
{
	static const char *const names_ok[] = { "a", "_", "A_9", "__name__", "job" };
	static const char *const names_bad[] = { "", "9a", "a-b", "a.b", "a b", "\xc3\xa9" };
	static const char *const labels_ok[] = { "a=b", "a=", "a==b", "jobs=x", "job_=x",
	                                         "_x=a/b c", "q=a\"b\\c",
	                                         "exes=x", "e=\xc3\xa9", "_a=x" };
	/* rte's own names, the target's, __-prefixed, invalid UTF-8 values, control characters */
	static const char *const labels_bad[] = { "a", "", "=b", "job=x", "job=", "1=x",
	                                          "a b=c", "a-b=c", "instance=h", "exe=x",
	                                          "pid=1", "name=n", "kind=k", "ring=0",
	                                          "le=1", "__x=y", "v=\xff", "v=\xc3",
	                                          "v=\xe0\x80", "A=\n", "t=a\tb" };

	(void)state;
	for (size_t i = 0; i < sizeof names_ok / sizeof *names_ok; i++)
		assert_int_equal(rte_pushgw_label_name_ok(names_ok[i], strlen(names_ok[i])), 1);
	for (size_t i = 0; i < sizeof names_bad / sizeof *names_bad; i++)
		assert_int_equal(rte_pushgw_label_name_ok(names_bad[i], strlen(names_bad[i])), 0);
	/* n bounds the name: "ab" of "ab-c" is one */
	assert_int_equal(rte_pushgw_label_name_ok("ab-c", 2), 1);
	for (size_t i = 0; i < sizeof labels_ok / sizeof *labels_ok; i++)
		if (!rte_pushgw_label_ok(labels_ok[i]))
			fail_msg("'%s' refused", labels_ok[i]);
	for (size_t i = 0; i < sizeof labels_bad / sizeof *labels_bad; i++)
		if (rte_pushgw_label_ok(labels_bad[i]))
			fail_msg("'%s' taken", labels_bad[i]);
	assert_int_equal(rte_pushgw_utf8_ok("caf\xc3\xa9"), 1);
	assert_int_equal(rte_pushgw_utf8_ok("\xc3(") , 0);
	/* the one rule of values (rte-read and rte-run): no control character */
	assert_int_equal(rte_pushgw_value_ok("caf\xc3\xa9 \"q\" \\ b"), 1);
	assert_int_equal(rte_pushgw_value_ok(""), 1);
	assert_int_equal(rte_pushgw_value_ok("a\nb"), 0);
	assert_int_equal(rte_pushgw_value_ok("a\tb"), 0);
	assert_int_equal(rte_pushgw_value_ok("a\rb"), 0);
	assert_int_equal(rte_pushgw_value_ok("a\x7f"), 0);
	assert_int_equal(rte_pushgw_value_ok("\xc3("), 0);
	assert_int_equal(rte_pushgw_label_ok("a=x\ny"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(urls_are_split_into_host_port_and_prefix),
		cmocka_unit_test(the_longest_host_fits),
		cmocka_unit_test(bad_urls_are_refused_with_the_reason),
		cmocka_unit_test(the_reason_fits_a_small_buffer),
		cmocka_unit_test(label_names_and_labels_follow_prometheus),
	};

	return cmocka_run_group_tests_name("pushgw", tests, NULL, NULL);
}
