/*
 * serve_int.h - what serve.c (the modes, discovery, HTTP) and serve_opts.c
 * (their command line) share: exit codes, options, and the functions of
 * serve_opts.c. Internal to the Prometheus modes: serve.h is the interface.
 */
#ifndef RD_SERVE_INT_H
#define RD_SERVE_INT_H

#include <sys/socket.h>

#include "inputs.h"
#include "metrics.h"
#include "status.h"

/* Exit codes (rte-read's, status.h; rd_exit_of() maps library errors). */
enum { S_OK = RD_EX_OK, S_USAGE = RD_EX_USAGE, S_NOINPUT = RD_EX_NOINPUT,
       S_BADFILE = RD_EX_BADFILE, S_CORRUPT = RD_EX_CORRUPT,
       S_OUTPUT = RD_EX_OUTPUT, S_NOMEM = RD_EX_NOMEM };

struct sopts {
	const char *serve, *push, *job, *instance, *dir;
	int timeout_s;                /* --push's socket timeouts */
	char **labels;
	int nlabels;
	struct rd_prom_opts po;
	char **inputs;
	int ninputs;
};

/* The text of --serve --help. */
extern const char rd_serve_usage[];

/* One line on stderr and the usage exit code. */
int rd_serve_usage_error(const char *what, const char *arg);
/* The options of argv into o: 0, or an exit code. */
int rd_serve_parse(int argc, char **argv, struct sopts *o);
/* --serve's [ADDR:]PORT into ss: 0, or -1. */
int rd_serve_parse_addr(const char *a, struct sockaddr_storage *ss, int *v6);
/* o's inputs (inputs.h), n of them; NULL if out of memory. */
struct rd_input *rd_serve_resolve(const struct sopts *o, int *n);
void rd_serve_free_inputs(struct rd_input *in, int n);

#endif
