/*
 * out.c - buffered output and fast formatting (see out.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "out.h"
#include "utf8.h"

int rd_out_init(struct rd_out *o, int fd, const char *name)
{
	memset(o, 0, sizeof *o);
	o->buf = malloc(RD_OUT_BUF);
	if (!o->buf)
		return -1;
	o->fd = fd;
	o->name = name;
	return 0;
}

static int write_all(int fd, const char *p, size_t n, int *err)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			*err = errno;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int rd_out_flush(struct rd_out *o)
{
	size_t n = o->len;

	o->len = 0;
	if (o->state != RD_OUT_OK || n == 0)
		return o->state ? -1 : 0;
	if (write_all(o->fd, o->buf, n, &o->err) < 0) {
		o->state = o->err == EPIPE ? RD_OUT_EPIPE : RD_OUT_EIO;
		return -1;
	}
	return 0;
}

/* Formatted straight into the buffer: reserve() leaves RD_OUT_SLACK free. */
void rd_outf(struct rd_out *o, const char *fmt, ...)
{
	char *p = rd_out_reserve(o, RD_OUT_SLACK);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, RD_OUT_SLACK, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < RD_OUT_SLACK ? (size_t)n : RD_OUT_SLACK - 1;
}

int rd_out_fini(struct rd_out *o)
{
	int rc = rd_out_flush(o);

	free(o->buf);
	o->buf = NULL;
	return rc;
}

void rd_out_flush_raw(struct rd_out *o)
{
	int err;

	if (o->buf && o->state == RD_OUT_OK && o->len)
		(void)write_all(o->fd, o->buf, o->len, &err);
	o->len = 0;
}

size_t rd_fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0, i;

	if (v < 10) {
		*p = (char)('0' + v);
		return 1;
	}
	while (v) {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	}
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

size_t rd_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p = '-';
		return 1 + rd_fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
	}
	return rd_fmt_u64(p, (uint64_t)v);
}

/* `digits` decimals of frac (< 10^digits), zero-padded. */
static size_t fmt_frac(char *p, uint64_t frac, unsigned digits)
{
	for (unsigned i = digits; i > 0; i--) {
		p[i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	return digits;
}

void rd_out_us3(struct rd_out *o, uint64_t ns)
{
	char *p = rd_out_reserve(o, 24);
	size_t n = rd_fmt_u64(p, ns / 1000);

	p[n++] = '.';
	n += fmt_frac(p + n, ns % 1000, 3);
	o->len += n;
}

size_t rd_fmt_secs(char *p, uint64_t ns)
{
	size_t n = rd_fmt_u64(p, ns / 1000000000u);

	p[n++] = '.';
	return n + fmt_frac(p + n, ns % 1000000000u, 9);
}

/* value / div with `dec` decimals, rounded, then the unit. */
static size_t fmt_scaled(char *p, uint64_t ns, uint64_t div, unsigned dec,
                         const char *unit)
{
	uint64_t scale = dec == 3 ? 1000 : 100;
	uint64_t q = (ns * scale + div / 2) / div; /* ns < 2^54 here */
	size_t n = rd_fmt_u64(p, q / scale);

	p[n++] = '.';
	n += fmt_frac(p + n, q % scale, dec);
	while (*unit)
		p[n++] = *unit++;
	return n;
}

size_t rd_fmt_dur(char *p, uint64_t ns)
{
	size_t n;

	if (ns < 1000) {
		n = rd_fmt_u64(p, ns);
		p[n++] = 'n';
		p[n++] = 's';
		return n;
	}
	if (ns < 1000000)
		return fmt_scaled(p, ns, 1000, 2, "us");
	if (ns < 1000000000)
		return fmt_scaled(p, ns, 1000000, 3, "ms");
	if (ns < ((uint64_t)1 << 50))
		return fmt_scaled(p, ns, 1000000000, 3, "s");
	n = rd_fmt_u64(p, ns / 1000000000u);
	p[n++] = 's';
	return n;
}

static const char hexd[] = "0123456789abcdef";

void rd_out_json_chars(struct rd_out *o, const void *mem, size_t n)
{
	const unsigned char *s = mem;

	while (n) {
		/* pieces cut between characters: each escaped as in the whole */
		size_t chunk = rte_utf8_cut(s, n, 8192), used;
		char *p = rd_out_reserve(o, chunk * RTE_UTF8_JSON_MAX), *q = p;

		for (size_t i = 0; i < chunk; i += used)
			q = rte_utf8_json(q, s + i, chunk - i, &used);
		o->len += (size_t)(q - p);
		s += chunk;
		n -= chunk;
	}
}

void rd_out_json_mem(struct rd_out *o, const void *mem, size_t n)
{
	rd_out_ch(o, '"');
	rd_out_json_chars(o, mem, n);
	rd_out_ch(o, '"');
}

void rd_out_json_key(struct rd_out *o, int *first, const char *k)
{
	if (!*first)
		rd_out_ch(o, ',');
	*first = 0;
	rd_out_ch(o, '"');
	rd_out_str(o, k);
	rd_out_mem(o, "\":", 2);
}

void rd_out_json_u(struct rd_out *o, int *first, const char *k, uint64_t v)
{
	rd_out_json_key(o, first, k);
	rd_out_u64(o, v);
}

void rd_out_json_str(struct rd_out *o, const char *s)
{
	rd_out_json_mem(o, s, strlen(s));
}

void rd_out_hex(struct rd_out *o, const void *mem, size_t n)
{
	const unsigned char *s = mem;

	while (n) {
		size_t chunk = n < 16384 ? n : 16384;
		char *p = rd_out_reserve(o, chunk * 2);

		for (size_t i = 0; i < chunk; i++) {
			p[2 * i] = hexd[s[i] >> 4];
			p[2 * i + 1] = hexd[s[i] & 15];
		}
		o->len += chunk * 2;
		s += chunk;
		n -= chunk;
	}
}
