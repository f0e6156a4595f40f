/*
 * serve_opts.c - the command line of rte-read --serve and --push: the
 * usage text, the options, the listen address and the inputs they name
 * (resolved as in every mode, inputs.h). serve.c runs the modes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pushgw.h"
#include "serve_int.h"

const char rd_serve_usage[] =
"Usage: rte-read --serve [ADDR:]PORT [OPTIONS] [DIR|FILE|PID...]\n"
"       rte-read --push URL [OPTIONS] DIR|FILE|PID...\n"
"Prometheus metrics of traced processes (every metric: doc/METRICS.md).\n"
"\n"
"  --serve [ADDR:]PORT  serve GET /metrics over HTTP: text format 0.0.4, or\n"
"                       OpenMetrics 1.0.0 if the scraper accepts it. ADDR\n"
"                       defaults to 127.0.0.1 (loopback only); give\n"
"                       0.0.0.0 or [::] to listen on every interface. Follows\n"
"                       every ring file in the DIRs (new ones picked up as\n"
"                       they appear), FILEs and PIDs (looked for as\n"
"                       'rte-read --help' says; a PID's file may appear\n"
"                       later); no input: -d DIR, else\n"
"                       $OCAML_RUNTIME_EVENTS_DIR, else librte.so's per-user\n"
"                       directory. Series are per label set: exe and the\n"
"                       --label pairs; a process that ends adds its totals\n"
"                       to its label set, which never goes down. Runs until\n"
"                       SIGINT or SIGTERM.\n"
"  --push URL           read the files of finished runs and PUT their metrics\n"
"                       to the Pushgateway at URL (http:// only) under\n"
"                       URL/metrics/job/JOB/instance/INSTANCE/LABEL/VALUE...\n"
"                       (PUT: the group's previous metrics are replaced)\n"
"  --job NAME           the Pushgateway job (default: rte)\n"
"  --instance NAME      the Pushgateway instance (default: the host name)\n"
"  --timeout SECS       --push: connect, send and answer timeouts (default 10)\n"
"  --label NAME=VALUE   --serve: a label on every series; --push: a grouping\n"
"                       label (repeatable; VALUE valid UTF-8, no\n"
"                       control character: no newline)\n"
"  --per-process        a `pid` label: one label set per process (series\n"
"                       then grow with the processes, up to --max-label-sets)\n"
"  --per-thread         a `ring` label: one series per ring (thread)\n"
"  --max-names N        distinct user event names per label set (default\n"
"                       100); the others share name=\"other\" and the label\n"
"                       set's rte_names_limited is 1\n"
"  --max-label-sets N   label sets (default 10000); the others share\n"
"                       exe=\"other\" (said once on standard error)\n"
"  -d, --dir DIR        directory of PID inputs\n"
"\n"
"Exit status: 0 (--serve: stopped by a signal; --push: pushed), 1 usage,\n"
"2 an input cannot be found or read, 3 not a ring file, 4 corrupt ring\n"
"(--push: nothing is pushed after 2, 3 or 4), 5 cannot listen on ADDR:PORT\n"
"or the push failed, 7 out of memory.\n";

int rd_serve_usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "rte-read: %s%s%s\nTry 'rte-read --serve --help'.\n", what,
	        arg ? ": " : "", arg ? arg : "");
	return S_USAGE;
}

/* ---- options ---------------------------------------------------------------- */

int rd_serve_parse(int argc, char **argv, struct sopts *o)
{
	static const struct option lo[] = {
		{ "serve", required_argument, NULL, 'S' },
		{ "push", required_argument, NULL, 'P' },
		{ "job", required_argument, NULL, 'j' },
		{ "label", required_argument, NULL, 'l' },
		{ "per-thread", no_argument, NULL, 't' },
		{ "per-process", no_argument, NULL, 'p' },
		{ "max-label-sets", required_argument, NULL, 'M' },
		{ "instance", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "max-names", required_argument, NULL, 'm' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->job = "rte";
	o->timeout_s = 10;
	o->po.max_names = RD_PROM_MAX_NAMES_DEFAULT;
	o->po.max_sets = RD_PROM_MAX_SETS_DEFAULT;
	while ((c = getopt_long(argc, argv, "d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'S': o->serve = optarg; break;
		case 'P': o->push = optarg; break;
		case 'j':
			if (!*optarg || !rte_pushgw_value_ok(optarg))
				return rd_serve_usage_error("--job: want a non-empty UTF-8 name without control characters", optarg);
			o->job = optarg;
			break;
		case 'l': {
			char **n;

			if (!rte_pushgw_label_ok(optarg))
				return rd_serve_usage_error("--label: want "
				                   RTE_PUSHGW_LABEL_RULE, optarg);
			n = realloc(o->labels, (size_t)(o->nlabels + 1) * sizeof *n);
			if (!n)
				return S_NOMEM;
			o->labels = n;
			o->labels[o->nlabels++] = optarg;
			break;
		}
		case 't': o->po.per_thread = 1; break;
		case 'p': o->po.per_process = 1; break;
		case 'i':
			if (!*optarg || !rte_pushgw_value_ok(optarg))
				return rd_serve_usage_error("--instance: want a non-empty UTF-8 name without control characters", optarg);
			o->instance = optarg;
			break;
		case 'M':
			errno = 0;
			o->po.max_sets = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' ||
			    o->po.max_sets == 0 || o->po.max_sets > 1000000)
				return rd_serve_usage_error("--max-label-sets: want a number 1..1000000", optarg);
			break;
		case 'T':
			errno = 0;
			o->timeout_s = (int)strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->timeout_s < 1 ||
			    o->timeout_s > 3600)
				return rd_serve_usage_error("--timeout: want seconds 1..3600", optarg);
			break;
		case 'm':
			errno = 0;
			o->po.max_names = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' ||
			    o->po.max_names > 100000)
				return rd_serve_usage_error("--max-names: want a number 0..100000", optarg);
			break;
		case 'd': o->dir = optarg; break;
		case 'h':
			fputs(rd_serve_usage, stdout);
			exit(fflush(stdout) ? S_OUTPUT : S_OK);
		default:
			return rd_serve_usage_error("invalid option", NULL);
		}
	}
	if (o->serve && o->push)
		return rd_serve_usage_error("--serve and --push go separately", NULL);
	if ((o->nlabels && !o->push && !o->serve) || (o->instance && !o->push))
		return rd_serve_usage_error(o->instance ? "--instance goes with --push"
		                                        : "--label goes with --serve or --push", NULL);
	o->po.labels = o->labels;
	o->po.nlabels = o->push ? 0 : o->nlabels; /* --push: in the grouping key */
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (o->push) {
		struct rte_pushgw_url u;
		char why[600];

		if (rte_pushgw_url_parse(o->push, &u, why, sizeof why) < 0)
			return rd_serve_usage_error(why, NULL);
	}
	if (o->push && o->ninputs == 0)
		return rd_serve_usage_error("--push: no input: give a DIR, FILE or PID", NULL);
	return 0;
}

/* ADDR:PORT, :PORT or PORT (loopback), [V6]:PORT. */
int rd_serve_parse_addr(const char *a, struct sockaddr_storage *ss, int *v6)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(a, ':'), *ps = colon ? colon + 1 : a;
	char host[64] = "127.0.0.1", *end;
	unsigned long port;
	size_t n = colon ? (size_t)(colon - a) : 0;

	errno = 0;
	port = strtoul(ps, &end, 10);
	if (!*ps || *end || errno || port > 65535 || *ps == '-')
		return -1;
	if (n) {
		if (a[0] == '[' && a[n - 1] == ']') {
			a++;
			n -= 2;
		}
		if (n >= sizeof host)
			return -1;
		memcpy(host, a, n);
		host[n] = 0;
	}
	memset(ss, 0, sizeof *ss);
	*v6 = strchr(host, ':') != NULL;
	if (*v6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host, &s6->sin6_addr) == 1 ? 0 : -1;
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &s4->sin_addr) == 1 ? 0 : -1;
}

void rd_serve_free_inputs(struct rd_input *in, int n)
{
	for (int i = 0; in && i < n; i++)
		rd_input_free(&in[i]);
	free(in);
}

/* The inputs resolved (inputs.h); no input: the default directory. */
struct rd_input *rd_serve_resolve(const struct sopts *o, int *n)
{
	int k = o->ninputs ? o->ninputs : 1;
	struct rd_input *in = calloc((size_t)k, sizeof *in);

	if (!in)
		return NULL;
	*n = 0;
	if (!o->ninputs) {
		if (rd_input_default(o->dir, &in[0]) < 0) {
			free(in);
			return NULL;
		}
		*n = 1;
		return in;
	}
	for (int i = 0; i < k; i++) {
		if (rd_input_resolve(o->inputs[i], o->dir, &in[i]) < 0) {
			rd_serve_free_inputs(in, i);
			return NULL;
		}
		*n = i + 1;
	}
	return in;
}
