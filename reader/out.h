/*
 * out.h - rte-read's output: one large buffer flushed with write(2), and
 * the fast formatting helpers every output format uses (decimal numbers,
 * JSON strings, durations) so that no event costs a printf call.
 *
 * A write error is sticky: after it every call is a no-op and rd_out_error()
 * says what happened. EPIPE (the reader of a pipe went away, as with
 * `rte-read ... | head`) is recorded as RD_OUT_EPIPE so the caller can stop
 * quietly. Not thread-safe; rd_out_flush_raw() alone is async-signal-safe.
 */
#ifndef RD_OUT_H
#define RD_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RD_OUT_BUF (1u << 20) /* flushed when less than RD_OUT_SLACK is free */
#define RD_OUT_SLACK (64u << 10)

enum rd_out_state { RD_OUT_OK = 0, RD_OUT_EPIPE = 1, RD_OUT_EIO = 2 };

struct rd_out {
	char *buf;
	size_t len;
	int fd;
	int state;     /* enum rd_out_state */
	int err;       /* errno of the failed write */
	const char *name; /* "standard output" or the -o path, for messages */
};

/* Set up `o` to write to `fd`. Returns 0, or -1 if out of memory. */
int rd_out_init(struct rd_out *o, int fd, const char *name);
/* Write out the buffer. Returns 0 or -1 (state set). */
int rd_out_flush(struct rd_out *o);
/* Flush, free the buffer (the fd is the caller's). Returns 0 or -1. */
int rd_out_fini(struct rd_out *o);
/* From a signal handler: write what is buffered, ignoring errors. */
void rd_out_flush_raw(struct rd_out *o);

/* printf into the buffer, for the text of reports (not per event: a
 * printf call costs). A line longer than RD_OUT_SLACK - 1 bytes is cut. */
void rd_outf(struct rd_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Make room for at least `n` more bytes (n <= RD_OUT_SLACK); returns the
 * write position. */
static inline char *rd_out_reserve(struct rd_out *o, size_t n)
{
	(void)n;
	if (o->len > RD_OUT_BUF - RD_OUT_SLACK)
		rd_out_flush(o);
	return o->buf + o->len;
}

static inline void rd_out_mem(struct rd_out *o, const void *p, size_t n)
{
	if (n > RD_OUT_SLACK) {
		rd_out_flush(o);
		while (n > RD_OUT_SLACK) {
			memcpy(o->buf + o->len, p, RD_OUT_SLACK);
			o->len += RD_OUT_SLACK;
			rd_out_flush(o);
			p = (const char *)p + RD_OUT_SLACK;
			n -= RD_OUT_SLACK;
		}
	}
	memcpy(rd_out_reserve(o, n), p, n);
	o->len += n;
}

static inline void rd_out_str(struct rd_out *o, const char *s)
{
	rd_out_mem(o, s, strlen(s));
}

static inline void rd_out_ch(struct rd_out *o, char c)
{
	*rd_out_reserve(o, 1) = c;
	o->len++;
}

/* Decimal digits of v at p (no NUL); returns the number written (<= 20). */
size_t rd_fmt_u64(char *p, uint64_t v);
size_t rd_fmt_i64(char *p, int64_t v);

static inline void rd_out_u64(struct rd_out *o, uint64_t v)
{
	o->len += rd_fmt_u64(rd_out_reserve(o, 20), v);
}

static inline void rd_out_i64(struct rd_out *o, int64_t v)
{
	o->len += rd_fmt_i64(rd_out_reserve(o, 21), v);
}

/* A JSON member: key, the literal text before the value (",\"dur_ns\":"),
 * then v. */
static inline void rd_out_kv_u64(struct rd_out *o, const char *key,
                                 uint64_t v)
{
	rd_out_str(o, key);
	rd_out_u64(o, v);
}

static inline void rd_out_kv_i64(struct rd_out *o, const char *key,
                                 int64_t v)
{
	rd_out_str(o, key);
	rd_out_i64(o, v);
}

/* v/1000 with exactly three decimals ("12.345"): microseconds from ns, as
 * the Chrome trace format wants. */
void rd_out_us3(struct rd_out *o, uint64_t ns);
/* Seconds with nine decimals from ns ("1.000000123"). */
size_t rd_fmt_secs(char *p, uint64_t ns);
/* A short human duration: "950ns", "12.35us", "1.234ms", "2.500s". */
size_t rd_fmt_dur(char *p, uint64_t ns);

/* A JSON string literal (quotes included) of the NUL-terminated s, with the
 * same escaping as rte_event_jsonl() (utf8.h's rule): " and \ escaped,
 * controls and DEL as \u00XX, well-formed UTF-8 as it is, any other byte
 * XX as \udcXX. */
void rd_out_json_str(struct rd_out *o, const char *s);
/* The same for n bytes that may hold NULs. */
void rd_out_json_mem(struct rd_out *o, const void *p, size_t n);
/* The same without the quotes: the inside of a string literal. */
void rd_out_json_chars(struct rd_out *o, const void *p, size_t n);
/* A key of a JSON object: `,"k":` (`"k":` for the first, *first then 0). */
void rd_out_json_key(struct rd_out *o, int *first, const char *k);
/* A key and its unsigned integer value. */
void rd_out_json_u(struct rd_out *o, int *first, const char *k, uint64_t v);
/* Lowercase hex of n bytes. */
void rd_out_hex(struct rd_out *o, const void *p, size_t n);

#endif
