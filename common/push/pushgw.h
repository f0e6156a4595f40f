/*
 * pushgw.h - what a Prometheus Pushgateway target given on a command line
 * must be (internal): the URL of --push and the grouping labels of
 * --label. rte-read and rte-run take the same options; their rules and
 * messages are here, once: rte-read's push client (reader/push.c) splits
 * the URL with them, and rte-run checks its options with them (through
 * rte-run-exec --check-push) before its command runs, so that a push that
 * rte-read would refuse at the end is refused at the start.
 *
 * Linked into rte-read and rte-run-exec only (mk/common.mk), not into the
 * consumer library: it knows nothing of ring files.
 *
 * Thread-safety: every function is thread-safe and allocates nothing.
 */
#ifndef RTE_PUSHGW_H
#define RTE_PUSHGW_H

#include <stddef.h>

#define RTE_PUSHGW_HOST_CAP 256 /* longest host + 1 */
#define RTE_PUSHGW_PORT_CAP 16  /* longest port + 1 */

/* A Pushgateway URL, split. */
struct rte_pushgw_url {
	char host[RTE_PUSHGW_HOST_CAP]; /* a name or address (IPv6 without []) */
	char port[RTE_PUSHGW_PORT_CAP]; /* decimal digits; "80" if not given */
	const char *prefix; /* in the URL: "" or the path from its '/' on */
};

/* Split url, http://HOST[:PORT][/PREFIX] with HOST a name, an IPv4
 * address or [an IPv6 address], into *u. Returns 0, or -1 with
 * "URL: what is wrong" in err (errlen bytes, NUL-terminated): not http://
 * (https:// is told that rte has no TLS), a bad or too long host, a bad
 * port. */
int rte_pushgw_url_parse(const char *url, struct rte_pushgw_url *u, char *err,
                         size_t errlen);

/* 1 if s[0..n) is a Prometheus label name, [A-Za-z_][A-Za-z0-9_]*, else 0. */
int rte_pushgw_label_name_ok(const char *s, size_t n);

/* What --label takes, said in the message refusing anything else. */
#define RTE_PUSHGW_LABEL_RULE \
	"NAME=VALUE, NAME a label name ([A-Za-z_][A-Za-z0-9_]*, not __*) other " \
	"than job, instance, exe, pid, name, kind, ring, le; VALUE valid UTF-8 " \
	"without control characters (no newline)"

/* 1 if kv is a label as --label takes it (RTE_PUSHGW_LABEL_RULE: the job
 * and instance are --job's and --instance's, the others rte's own
 * labels), else 0. The value may be any valid UTF-8 without control
 * characters (rte_pushgw_value_ok), empty too (quotes and backslashes are
 * escaped where it is written). The one rule of rte-read and rte-run:
 * rte-run keeps its labels one a line, and a newline in a CI label is a
 * command substitution gone wrong more often than meant. */
int rte_pushgw_label_ok(const char *kv);

/* 1 if the string v is valid UTF-8, else 0. */
int rte_pushgw_utf8_ok(const char *v);

/* 1 if the string v is valid UTF-8 with no control character (U+0000 to
 * U+001F, U+007F: a newline, a tab, a carriage return...), else 0: a
 * --label value, a --job, an --instance. */
int rte_pushgw_value_ok(const char *v);

#endif
