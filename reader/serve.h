/*
 * serve.h - rte-read's Prometheus modes (issue 17): `--serve ADDR:PORT`,
 * an exporter of live metrics over HTTP (libmicrohttpd), and
 * `--push URL`, the final metrics of finished runs sent to a Pushgateway.
 * They have their own options (rd_serve_usage); main.c hands over to
 * rd_serve_main() when the table of commands.c finds either option.
 */
#ifndef RD_SERVE_H
#define RD_SERVE_H

/* Run the mode; returns the exit status (documented in --help). */
int rd_serve_main(int argc, char **argv);

/*
 * push.c: send `body` (text format 0.0.4) to the Pushgateway at `url`
 * (http://HOST[:PORT][/PREFIX]) with PUT to
 * PREFIX/metrics/job/JOB/instance/INSTANCE{/LABEL/VALUE}, labels[] being
 * "k=v" strings, every socket operation bounded by timeout_s seconds (a
 * gateway that is down or slow: an error, never a hang). Returns 0, or
 * -1 with one line "why" in err.
 */
int rd_push(const char *url, const char *job, const char *instance,
            char *const *labels, int nlabels, const char *body, size_t len,
            int timeout_s, char *err, size_t errlen);


#endif
