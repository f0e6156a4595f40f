/*
 * diff.c - rte-read diff (see diff.h): load both runs as summary-json
 * documents, fold their processes into one table per run (by kind and
 * name: count and total summed, p50, p99 and max the largest of any
 * process; GC share from the summed GC and CPU time; allocated words
 * summed), print each figure with its change, and evaluate --fail-if.
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
#include "jsonp.h"
#include "out.h"

enum { EX_SAME = 0, EX_CROSSED = 1, EX_ERR = 2 };
#define MAX_INPUT ((size_t)256 << 20)
#define MAX_THRESHOLDS 64

/* Figures of an entry, in this order everywhere. */
enum fig { G_COUNT, G_TOTAL, G_P50, G_P99, G_MAX, G_NFIG };
static const char *const fig_name[G_NFIG] = { "count", "total", "p50", "p99", "max" };
static const char *const fig_key[G_NFIG] = { "count", "total_ns", "p50_ns", "p99_ns", "max_ns" };

/* Whole-run figures. */
enum gfig { GC_PCT, GC_MINOR, GC_PROMOTED, GC_MAJOR, GC_NFIG };
static const char *const gfig_name[GC_NFIG] = {
	"gc_pct", "minor_words", "promoted_words", "major_words",
};

struct ent {
	char *name;
	int span; /* 0 runtime phase, 1 user span */
	double f[G_NFIG];
};

struct run {
	const char *path;
	struct ent *e;
	size_t n, cap;
	double g[GC_NFIG];
	int has_g[GC_NFIG];
	double gc_ns, cpu_ns;
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

/* ---- loading -------------------------------------------------------------- */

static char *read_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	ssize_t r;

	while (b) {
		if (n == cap) {
			char *nb = cap >= MAX_INPUT ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return b;
}

/* 1 if path is a regular file whose first non-blank byte is '{'. */
static int is_json_file(const char *path)
{
	struct stat st;
	FILE *f;
	int c;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return 0;
	while ((c = getc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

/* The summary-json of a ring file, directory or pid: rte-read's own. */
static char *summarise(const char *path, size_t *len)
{
	int fd[2], status;
	char *out;
	pid_t pid;

	if (pipe(fd))
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl("/proc/self/exe", "rte-read", "-f", "summary-json", "--", path,
		      (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	out = read_fd(fd[0], len);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(out); /* rte-read said why on stderr */
		return NULL;
	}
	return out;
}

static struct ent *find(struct run *R, const char *name, int span)
{
	for (size_t i = 0; i < R->n; i++)
		if (R->e[i].span == span && !strcmp(R->e[i].name, name))
			return &R->e[i];
	if (R->n == R->cap) {
		size_t cap = R->cap ? 2 * R->cap : 32;
		struct ent *n = realloc(R->e, cap * sizeof *n);

		if (!n)
			return NULL;
		R->e = n;
		R->cap = cap;
	}
	memset(&R->e[R->n], 0, sizeof R->e[R->n]);
	if (!(R->e[R->n].name = strdup(name)))
		return NULL;
	R->e[R->n].span = span;
	return &R->e[R->n++];
}

static int fold_entries(struct run *R, const struct rd_jv *arr, int span)
{
	for (size_t i = 0; arr && arr->t == RD_JARR && i < arr->n; i++) {
		const struct rd_jv *o = &arr->v[i], *nm = rd_json_get(o, "name");
		struct ent *e;

		if (!nm || nm->t != RD_JSTR)
			continue;
		if (!(e = find(R, nm->str, span)))
			return -1;
		for (int f = 0; f < G_NFIG; f++) {
			double v = rd_json_num(o, fig_key[f], 0);

			if (f <= G_TOTAL)
				e->f[f] += v;
			else if (v > e->f[f])
				e->f[f] = v;
		}
	}
	return 0;
}

static void fold_gc(struct run *R, const struct rd_jv *gc)
{
	const struct rd_jv *a = rd_json_get(gc, "allocations");
	static const char *const akey[] = { NULL, "minor_words", "promoted_words", "major_words" };

	if (!gc || gc->t != RD_JOBJ)
		return;
	R->gc_ns += rd_json_num(gc, "gc_ns", 0);
	R->cpu_ns += rd_json_num(gc, "cpu_ns", 0);
	R->has_g[GC_PCT] = 1;
	for (int g = GC_MINOR; g < GC_NFIG; g++) {
		const struct rd_jv *v = rd_json_get(a, akey[g]);

		if (v && v->t == RD_JNUM) {
			R->g[g] += v->num;
			R->has_g[g] = 1;
		}
	}
}

static int load(struct run *R, const char *path, char *err, size_t errlen)
{
	const struct rd_jv *procs;
	struct rd_jv *doc;
	size_t len = 0;
	char *text, why[160];
	int fd;

	R->path = path;
	if (is_json_file(path)) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		text = read_fd(fd, &len);
		close(fd);
	} else {
		text = summarise(path, &len);
	}
	if (!text) {
		snprintf(err, errlen, "%s: cannot be summarised (see above) or read", path);
		return -1;
	}
	doc = rd_json_parse(text, len, why, sizeof why);
	free(text);
	if (!doc) {
		snprintf(err, errlen, "%s: not summary-json: %s", path, why);
		return -1;
	}
	procs = rd_json_get(doc, "processes");
	if (!procs || procs->t != RD_JARR) {
		rd_json_free(doc);
		snprintf(err, errlen, "%s: not summary-json: no \"processes\" array", path);
		return -1;
	}
	for (size_t i = 0; i < procs->n; i++) {
		const struct rd_jv *p = &procs->v[i];

		if (fold_entries(R, rd_json_get(p, "phases"), 0) ||
		    fold_entries(R, rd_json_get(p, "spans"), 1)) {
			rd_json_free(doc);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		fold_gc(R, rd_json_get(p, "gc"));
	}
	R->g[GC_PCT] = R->cpu_ns > 0 ? 100.0 * R->gc_ns / R->cpu_ns : 0;
	rd_json_free(doc);
	return 0;
}

static void free_run(struct run *R)
{
	for (size_t i = 0; i < R->n; i++)
		free(R->e[i].name);
	free(R->e);
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

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
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
"Per runtime phase and user span: count, total, p50, p99, max, with the\n"
"relative change; the GC share of CPU time and allocated words.\n"
"  --fail-if EXPR   exit 1 if the change crosses a threshold (repeatable):\n"
"                   FIGURE(NAME) OP LIMIT  or  GCFIGURE OP LIMIT\n"
"                   FIGURE: count total p50 p99 max; GCFIGURE: gc_pct\n"
"                   minor_words promoted_words major_words; OP: > < >= <=;\n"
"                   LIMIT: +N% or -N% (relative change), or +N / -N\n"
"                   (absolute: ns, us, ms or s for durations; points for\n"
"                   gc_pct), e.g. 'p99(app.request) > +10%'\n"
"  --format=FMT     text (default) or json\n"
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
	if (load(&A, argv[optind], err, sizeof err) || load(&B, argv[optind + 1], err, sizeof err)) {
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
	free_run(&A);
	free_run(&B);
	return rc;
}
