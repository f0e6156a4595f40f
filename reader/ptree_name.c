/*
 * ptree_name.c - what names a process of the tree (ptree.h): its
 * command line and executable escaped and cut, its signal, its JSON
 * fields. Every byte of argv is hostile: control bytes, quotes and
 * bytes that are not UTF-8 are shown as \xNN, never passed through.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crashrep.h"
#include "ptree.h"
#include "rte/proc.h"
#include "utf8.h"

int rd_ptree_find(const struct rd_ptree *T, long pid)
{
	unsigned lo = 0, hi = T ? T->nfile : 0;

	/* the file nodes are in (pid, start) order: the last of pid */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (T->n[mid].pid <= pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && T->n[lo - 1].pid == pid ? (int)lo - 1 : -1;
}

uint64_t rd_ptree_wall(const struct rd_ptnode *x)
{
	return x->start_ts && x->end_ts > x->start_ts ? x->end_ts - x->start_ts : 0;
}

const char *rd_ptree_signame(int sig, char *buf, unsigned len)
{
	return rd_crash_sig_name(sig, buf, len);
}

/* Append byte string p[0..n) escaped to b at `at`, at most up to lim
 * (whole characters and escapes only); returns the new length, *full set
 * if it stopped short. */
static unsigned esc(char *b, unsigned at, unsigned lim, const unsigned char *p,
                    size_t n, int quote, int *full)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		char t[8];
		unsigned tl;

		size_t k = c >= 0x80 ? rte_utf8_len(p + i, n - i) : 0;

		if (k) { /* a whole UTF-8 sequence passes (no overlong, surrogate) */
			if (at + k > lim)
				goto full;
			memcpy(b + at, p + i, k);
			at += (unsigned)k;
			i += k - 1;
			continue;
		}
		if (c < 0x20 || c >= 0x7f || (quote && (c == '\'' || c == '\\')))
			tl = (unsigned)snprintf(t, sizeof t, "\\x%02x", c);
		else
			t[0] = (char)c, tl = 1;
		if (at + tl > lim)
			goto full;
		memcpy(b + at, t, tl);
		at += tl;
	}
	return at;
full:
	*full = 1;
	return at;
}

const char *rd_ptree_exe(const struct rd_ptnode *x, char *buf, unsigned len)
{
	size_t n, pos = 0, al;
	const char *a;

	if (!x->argv || !(a = rte_proc_argv_next(x->argv, x->argv_len, &pos, &al)) || !al) {
		snprintf(buf, len, "%s", x->reaped_only ? "(untraced)" : "?");
		return buf;
	}
	n = al;
	for (size_t i = al; i-- > 0;)
		if (a[i] == '/') {
			a += i + 1;
			n = al - i - 1;
			break;
		}
	{
		int full = 0;

		buf[esc(buf, 0, len - 1, (const unsigned char *)a, n, 0, &full)] = '\0';
	}
	return buf;
}

const char *rd_ptree_cmdline(const struct rd_ptnode *x, char *buf,
                             unsigned len, unsigned width)
{
	size_t pos = 0, al;
	const char *a;
	unsigned at = 0, lim = width < len - 8 ? width : len - 8;
	int cut = 0;

	if (!x->argv) {
		snprintf(buf, len, "%s", x->reaped_only ? "(untraced: reaped only)" : "?");
		return buf;
	}
	/* A fork child with no file: its argv is its parent image's (it may
	 * have exec'd an image that failed before tracing itself: exit 127). */
	if (x->forked_only && lim > 7) {
		memcpy(buf, "(fork) ", 7);
		at = 7;
	}
	for (int first = 1; (a = rte_proc_argv_next(x->argv, x->argv_len, &pos, &al));
	     first = 0) {
		int q = al == 0 || memchr(a, ' ', al) || memchr(a, '\'', al) ||
		        memchr(a, '"', al);

		if (!first && at < lim)
			buf[at++] = ' ';
		if (q && at < lim)
			buf[at++] = '\'';
		at = esc(buf, at, lim, (const unsigned char *)a, al, q, &cut);
		if (cut)
			break;
		if (q) {
			if (at >= lim) {
				cut = 1;
				break;
			}
			buf[at++] = '\'';
		}
		if (at >= lim && pos < x->argv_len) {
			cut = 1;
			break;
		}
	}
	if (cut || x->argv_cut) {
		if (at > lim - 1) { /* room for the mark, on a character boundary */
			at = lim - 1;
			while (at > 0 && ((unsigned char)buf[at] & 0xc0) == 0x80)
				at--;
		}
		memcpy(buf + at, "…", 3);
		at += 3;
	}
	buf[at] = '\0';
	return buf;
}

void rd_ptree_json_fields(struct rd_out *o, const struct rd_ptnode *x)
{
	char sb[32];
	size_t pos = 0, al;
	const char *a;

	if (x->spawn_err)
		rd_out_str(o, "\"pid\":null,\"ppid\":");
	else
		rd_outf(o, "\"pid\":%ld,\"ppid\":", x->pid);
	if (x->ppid > 0)
		rd_outf(o, "%ld", x->ppid);
	else
		rd_out_str(o, "null");
	rd_out_str(o, ",\"argv\":");
	if (!x->argv) {
		rd_out_str(o, "null");
	} else {
		rd_out_ch(o, '[');
		for (int first = 1; (a = rte_proc_argv_next(x->argv, x->argv_len, &pos, &al));
		     first = 0) {
			if (!first)
				rd_out_ch(o, ',');
			rd_out_json_mem(o, a, al);
		}
		rd_out_ch(o, ']');
	}
	rd_outf(o, ",\"argc\":%" PRIu32 ",\"argv_cut\":%s,\"exit\":", x->argc,
	        x->argv_cut ? "true" : "false");
	if (x->how == RTE_EXIT_STATUS)
		rd_outf(o, "{\"status\":%d}", x->value);
	else if (x->how == RTE_EXIT_SIGNAL)
		rd_outf(o, "{\"signal\":\"%s\"%s}",
		        rd_ptree_signame(x->value, sb, sizeof sb),
		        x->core ? ",\"core\":true" : "");
	else
		rd_out_str(o, "null");
	if (x->usage)
		rd_outf(o, ",\"cpu_user_ns\":%" PRIu64 ",\"cpu_sys_ns\":%" PRIu64
		        ",\"max_rss_kib\":%" PRIu64, x->utime_ns, x->stime_ns,
		        x->maxrss_kib);
	else
		rd_out_str(o, ",\"cpu_user_ns\":null,\"cpu_sys_ns\":null,\"max_rss_kib\":null");
	rd_outf(o, ",\"start_ts\":%" PRIu64 ",\"end_ts\":%" PRIu64, x->start_ts,
	        x->end_ts);
	rd_outf(o, ",\"wall_ns\":%" PRIu64 ",\"lost_words\":%" PRIu64
	        ",\"failed\":%s,\"crashed\":%s,\"reaped_only\":%s"
	        ",\"forked_only\":%s,\"spawn_failed\":",
	        rd_ptree_wall(x), x->lost_words, x->failed ? "true" : "false",
	        x->crashed ? "true" : "false",
	        x->reaped_only ? "true" : "false", x->forked_only ? "true" : "false");
	if (x->spawn_err) {
		rd_outf(o, "{\"errno\":%d,\"error\":", x->spawn_err);
		rd_out_json_str(o, rd_ptree_errname(x->spawn_err, sb, sizeof sb));
		rd_out_ch(o, '}');
	} else {
		rd_out_str(o, "null");
	}
}

const char *rd_ptree_errname(int err, char *buf, unsigned len)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "E%d", err);
	return buf;
}
