/*
 * diff.c - rte-read diff (see diff.h): load both runs as summary-json
 * documents, take each one's table of phases and spans by kind and name
 * (summary-json's "run": counts and totals summed over processes, p50,
 * p99 and max of all their durations together; GC share from the summed
 * GC and CPU time; allocated words summed), print each figure with its
 * change, and evaluate --fail-if.
 * The runs are loaded and folded by diff_load.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>

#include "diff.h"
#include "diff_int.h"
#include "flamediff.h"
#include "out.h"
#include "utf8.h"

enum { EX_SAME = 0, EX_CROSSED = 1, EX_ERR = 2 };
#define MAX_THRESHOLDS 64

/* Figures of an entry, in this order everywhere. */
static const char *const fig_name[G_NFIG] = { "count", "total", "p50", "p99", "max" };

/* Whole-run figures. */
static const char *const gfig_name[GC_NFIG] = {
	"gc_pct", "minor_words", "promoted_words", "major_words",
};

struct thr {
	const char *text;
	int fig;          /* enum fig, or G_NFIG + enum gfig */
	char name[256];   /* for an entry figure */
	int op;           /* '>' '<', or 'G' (>=), 'L' (<=) */
	double limit;
	int relative;
	double change;    /* evaluated */
	int crossed, missing;
};

/* 1 if figure fig (enum fig, or G_NFIG + enum gfig) is a duration (ns). */
static int is_duration(int fig)
{
	return fig == G_TOTAL || fig == G_P50 || fig == G_P99 || fig == G_MAX;
}

/* ---- thresholds ---------------------------------------------------------- */

static int parse_thr(struct thr *t, const char *s)
{
	const char *p = s, *q;
	char word[32], *end;
	size_t l;

	memset(t, 0, sizeof *t);
	t->text = s;
	while (*p == ' ')
		p++;
	for (l = 0; (p[l] >= 'a' && p[l] <= 'z') || (p[l] >= '0' && p[l] <= '9') || p[l] == '_'; l++)
		;
	if (l == 0 || l >= sizeof word)
		return -1;
	memcpy(word, p, l);
	word[l] = 0;
	p += l;
	t->fig = -1;
	for (int f = 0; f < G_NFIG; f++)
		if (!strcmp(word, fig_name[f]))
			t->fig = f;
	for (int g = 0; g < GC_NFIG; g++)
		if (!strcmp(word, gfig_name[g]))
			t->fig = G_NFIG + g;
	if (t->fig < 0)
		return -1;
	if (t->fig < G_NFIG) { /* a name in parentheses */
		if (*p != '(' || !(q = strrchr(p, ')')) || q == p + 1 ||
		    (size_t)(q - p - 1) >= sizeof t->name)
			return -1;
		memcpy(t->name, p + 1, (size_t)(q - p - 1));
		p = q + 1;
	}
	while (*p == ' ')
		p++;
	if (p[0] == '>' || p[0] == '<') {
		t->op = p[1] == '=' ? (p[0] == '>' ? 'G' : 'L') : p[0];
		p += p[1] == '=' ? 2 : 1;
	} else {
		return -1;
	}
	while (*p == ' ')
		p++;
	if (*p != '+' && *p != '-')
		return -1;
	errno = 0;
	t->limit = strtod(p, &end);
	if (errno || end == p || !isfinite(t->limit))
		return -1;
	p = end;
	if (*p == '%') {
		t->relative = 1;
		p++;
	} else if (is_duration(t->fig)) {
		static const struct { const char *u; double ns; } units[] = {
			{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		};
		int found = *p == 0 || *p == ' ';

		for (size_t u = 0; !found && u < sizeof units / sizeof units[0]; u++)
			if (!strncmp(p, units[u].u, strlen(units[u].u))) {
				t->limit *= units[u].ns;
				p += strlen(units[u].u);
				found = 1;
			}
		if (!found)
			return -1;
	}
	while (*p == ' ')
		p++;
	return *p ? -1 : 0;
}

static const struct ent *lookup(const struct run *R, const char *name, int *span)
{
	for (int s = 1; s >= 0; s--) /* a user span first, then a phase */
		for (size_t i = 0; i < R->n; i++)
			if (R->e[i].span == s && !strcmp(R->e[i].name, name)) {
				*span = s;
				return &R->e[i];
			}
	return NULL;
}

static double change(double a, double b, int relative)
{
	if (!relative)
		return b - a;
	if (a == 0)
		return b == 0 ? 0 : (b > 0 ? INFINITY : -INFINITY);
	return 100.0 * (b - a) / fabs(a);
}

static void eval(struct thr *t, const struct run *A, const struct run *B)
{
	double a = 0, b = 0;
	int s;

	if (t->fig < G_NFIG) {
		const struct ent *ea = lookup(A, t->name, &s), *eb = lookup(B, t->name, &s);

		t->missing = !ea && !eb;
		a = ea ? ea->f[t->fig] : 0;
		b = eb ? eb->f[t->fig] : 0;
	} else {
		int g = t->fig - G_NFIG;

		t->missing = !A->has_g[g] && !B->has_g[g];
		a = A->g[g];
		b = B->g[g];
	}
	t->change = change(a, b, t->relative);
	switch (t->op) {
	case '>': t->crossed = t->change > t->limit; break;
	case '<': t->crossed = t->change < t->limit; break;
	case 'G': t->crossed = t->change >= t->limit; break;
	default:  t->crossed = t->change <= t->limit; break;
	}
}

/* ---- output -------------------------------------------------------------- */

static void pr_change(FILE *o, double a, double b)
{
	double c = change(a, b, 1);

	if (isinf(c))
		fprintf(o, "%10s", "new");
	else
		fprintf(o, "%+9.1f%%", c);
}

/* A walk over the entries of two runs, each name once: A's (BASE's) in
 * their order, then B's (NEW's) that A lacks. After next_pair() returns
 * 1, e is the entry and a[f], b[f] its figures in A and B (0 where the
 * run lacks it). Start it as { .A = A, .B = B }. */
struct pair_it {
	const struct run *A, *B;
	int pass;
	size_t i;
	const struct ent *e;
	double a[G_NFIG], b[G_NFIG];
};

static int next_pair(struct pair_it *p)
{
	for (; p->pass < 2; p->pass++, p->i = 0) {
		const struct run *R = p->pass ? p->B : p->A, *O = p->pass ? p->A : p->B;

		while (p->i < R->n) {
			const struct ent *e = &R->e[p->i++], *x = NULL;

			for (size_t j = 0; j < O->n; j++)
				if (O->e[j].span == e->span && !strcmp(O->e[j].name, e->name))
					x = &O->e[j];
			if (p->pass && x)
				continue;
			p->e = e;
			for (int f = 0; f < G_NFIG; f++) {
				p->a[f] = p->pass ? 0 : e->f[f];
				p->b[f] = p->pass ? e->f[f] : x ? x->f[f] : 0;
			}
			return 1;
		}
	}
	return 0;
}

/* Figure v in a column of 16: a duration with its unit, as the rest of
 * rte-read prints them ("2.061ms", "874ns"), a count as an integer; "-"
 * when the run lacks it. */
static void pr_fig(FILE *o, double v, int dur)
{
	char d[40];

	if (!isfinite(v)) {
		fprintf(o, " %16s", "-");
		return;
	}
	if (!dur) {
		fprintf(o, " %16.0f", v);
		return;
	}
	d[rd_fmt_dur(d, v > 0 ? (uint64_t)llround(v) : 0)] = 0;
	fprintf(o, " %16s", d);
}

static void text_out(FILE *o, const struct run *A, const struct run *B,
                     const struct thr *t, int nt)
{
	fprintf(o, "rte-read diff: %s -> %s\n\n", A->path, B->path);
	fprintf(o, "  %-32s %-6s %16s %16s %10s\n", "name", "figure", "base", "new", "change");
	for (struct pair_it p = { .A = A, .B = B }; next_pair(&p);)
		for (int f = 0; f < G_NFIG; f++) {
			fprintf(o, "  %-32.32s %-6s", f ? "" : p.e->name, fig_name[f]);
			pr_fig(o, p.a[f], is_duration(f));
			pr_fig(o, p.b[f], is_duration(f));
			fputc(' ', o);
			pr_change(o, p.a[f], p.b[f]);
			fprintf(o, "%s\n", f ? "" : p.e->span ? "  (span)" : "  (phase)");
		}
	for (int g = 0; g < GC_NFIG; g++) {
		if (!A->has_g[g] && !B->has_g[g])
			continue;
		fprintf(o, "  %-32s %-6s %16.*f %16.*f ", g ? gfig_name[g] : "GC share of CPU (%)",
		        "", g ? 0 : 2, A->g[g], g ? 0 : 2, B->g[g]);
		if (g == GC_PCT)
			fprintf(o, "%+8.2f pts\n", B->g[g] - A->g[g]);
		else {
			pr_change(o, A->g[g], B->g[g]);
			fputc('\n', o);
		}
	}
	for (int i = 0; i < nt; i++) {
		char d[40];
		const char *sign = t[i].change < 0 ? "-" : "+";

		if (!t[i].relative && is_duration(t[i].fig) && isfinite(t[i].change))
			d[rd_fmt_dur(d, (uint64_t)fabs(t[i].change))] = 0; /* "2.061ms" */
		else
			snprintf(d, sizeof d, "%.3f%s", fabs(t[i].change),
			         t[i].relative ? "%" : t[i].fig == G_NFIG + GC_PCT ? " pts" : "");
		fprintf(o, "%s%s: change %s%s: %s\n", i ? "" : "\n", t[i].text, sign, d,
		        t[i].missing ? "NOT FOUND in either run" : t[i].crossed ? "CROSSED" : "ok");
	}
}

static void json_num(FILE *o, double v)
{
	if (isfinite(v))
		fprintf(o, "%.17g", v);
	else
		fputs("null", o);
}

/* s as a JSON string, escaped as every JSON output is (utf8.h). */
static void json_str(FILE *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), used;
	char b[RTE_UTF8_JSON_MAX];

	fputc('"', o);
	for (size_t i = 0; i < n; i += used)
		fwrite(b, 1, (size_t)(rte_utf8_json(b, u + i, n - i, &used) - b), o);
	fputc('"', o);
}

static void json_out(FILE *o, const struct run *A, const struct run *B,
                     const struct thr *t, int nt, int crossed)
{
	int first = 1;

	fputs("{\"schema\":1,\"base\":", o);
	json_str(o, A->path);
	fputs(",\"new\":", o);
	json_str(o, B->path);
	fputs(",\"entries\":[", o);
	for (struct pair_it p = { .A = A, .B = B }; next_pair(&p);) {
		fputs(first ? "{\"name\":" : ",{\"name\":", o);
		first = 0;
		json_str(o, p.e->name);
		fprintf(o, ",\"kind\":\"%s\"", p.e->span ? "span" : "phase");
		for (int f = 0; f < G_NFIG; f++) {
			fprintf(o, ",\"%s\":{\"base\":", fig_name[f]);
			json_num(o, p.a[f]);
			fputs(",\"new\":", o);
			json_num(o, p.b[f]);
			fputs(",\"change_pct\":", o);
			json_num(o, change(p.a[f], p.b[f], 1));
			fputc('}', o);
		}
		fputc('}', o);
	}
	fputs("],\"gc\":{", o);
	first = 1;
	for (int g = 0; g < GC_NFIG; g++) {
		if (!A->has_g[g] && !B->has_g[g])
			continue;
		fprintf(o, "%s\"%s\":{\"base\":", first ? "" : ",", gfig_name[g]);
		first = 0;
		json_num(o, A->g[g]);
		fputs(",\"new\":", o);
		json_num(o, B->g[g]);
		fputs(",\"change\":", o);
		json_num(o, change(A->g[g], B->g[g], g != GC_PCT));
		fputc('}', o);
	}
	fputs("},\"thresholds\":[", o);
	for (int i = 0; i < nt; i++) {
		fputs(i ? ",{\"expr\":" : "{\"expr\":", o);
		json_str(o, t[i].text);
		fputs(",\"change\":", o);
		json_num(o, t[i].change);
		fprintf(o, ",\"found\":%s,\"crossed\":%s}", t[i].missing ? "false" : "true",
		        t[i].crossed ? "true" : "false");
	}
	fprintf(o, "],\"crossed\":%d}\n", crossed);
}

/* ---- main ------------------------------------------------------------------ */

static const char diff_usage[] =
"Usage: rte-read diff [--fail-if EXPR]... [--format=text|json] BASE NEW\n"
"Compare two runs: ring files, directories, pids or summary-json files.\n"
"Per runtime phase and user span of the whole run (every process together):\n"
"count, total, p50, p99, max, with the\n"
"relative change; the GC share of CPU time and allocated words.\n"
"  --fail-if EXPR   exit 1 if the change crosses a threshold (repeatable):\n"
"                   FIGURE(NAME) OP LIMIT  or  GCFIGURE OP LIMIT\n"
"                   FIGURE: count total p50 p99 max; GCFIGURE: gc_pct\n"
"                   minor_words promoted_words major_words; OP: > < >= <=;\n"
"                   LIMIT: +N% or -N% (relative change), or +N / -N\n"
"                   (absolute: ns, us, ms or s for durations; points for\n"
"                   gc_pct), e.g. 'p99(app.request) > +10%'\n"
"  --format=FMT     text (default) or json; flamegraph: the differential\n"
"                   flame graph of the two runs' profiles instead (SVG;\n"
"                   rte-read diff -f flamegraph --help)\n"
"Exit status: 0 no threshold crossed, 1 one was, 2 usage error or an\n"
"input that cannot be read.\n";

/* A usage error: one line, as rte-read's own. */
static int usage(const char *why)
{
	fprintf(stderr, "rte-read diff: %s (try 'rte-read diff --help')\n", why);
	return EX_ERR;
}

int rd_diff_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fail-if", required_argument, NULL, 'F' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct thr thr[MAX_THRESHOLDS];
	struct run A = { 0 }, B = { 0 };
	int nt = 0, json = 0, c, crossed = 0, rc = EX_SAME;
	char err[512];

	if (rd_flamediff_wanted(argc, argv))
		return rd_flamediff_main(argc, argv); /* reader/flamediff.c */
	optind = 1;
	opterr = 0; /* said by usage(), on one line */
	while ((c = getopt_long(argc, argv, ":f:h", lo, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (nt == MAX_THRESHOLDS)
				return usage("too many --fail-if");
			if (parse_thr(&thr[nt], optarg)) {
				snprintf(err, sizeof err, "--fail-if: cannot read '%s'", optarg);
				return usage(err);
			}
			nt++;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage("--format: text or json");
			json = !strcmp(optarg, "json");
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return fflush(stdout) ? EX_ERR : EX_SAME;
		case ':':
			snprintf(err, sizeof err, "option '%s' needs a value", argv[optind - 1]);
			return usage(err);
		default:
			snprintf(err, sizeof err, "unrecognized option '%s'", argv[optind - 1]);
			return usage(err);
		}
	}
	if (argc - optind != 2)
		return usage("give BASE and NEW");
	if (rd_diff_load(&A, argv[optind], err, sizeof err) || rd_diff_load(&B, argv[optind + 1], err, sizeof err)) {
		fprintf(stderr, "rte-read diff: %s\n", err);
		rc = EX_ERR;
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		eval(&thr[i], &A, &B);
		crossed += thr[i].crossed;
		if (thr[i].missing) {
			fprintf(stderr, "rte-read diff: --fail-if '%s': no such figure in either run\n",
			        thr[i].text);
			rc = EX_ERR;
		}
	}
	if (json)
		json_out(stdout, &A, &B, thr, nt, crossed);
	else
		text_out(stdout, &A, &B, thr, nt);
	if (fflush(stdout))
		rc = EX_ERR;
	else if (rc == EX_SAME && crossed)
		rc = EX_CROSSED;
out:
	rd_diff_free_run(&A);
	rd_diff_free_run(&B);
	return rc;
}
