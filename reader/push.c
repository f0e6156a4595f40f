/*
 * push.c - a minimal HTTP/1.1 client for the Prometheus Pushgateway: one
 * PUT over a plain TCP socket (http:// only: the gateway is normally on
 * loopback or a trusted network; use a TLS-terminating proxy otherwise),
 * bounded by socket timeouts. See serve.h; the URL and label rules are
 * common/format's (pushgw.h), shared with rte-run.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "metrics.h"
#include "pushgw.h"
#include "serve.h"

static int errf(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* One grouping-key pair "/name/value": a value that is empty or holds a
 * '/' goes as name@base64/<base64url>, others percent-encoded. */
static void key_pair(struct rd_buf *b, const char *k, size_t kn, const char *v)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t n = strlen(v);

	rd_buf_str(b, "/");
	rd_buf_mem(b, k, kn);
	if (n == 0 || strchr(v, '/')) {
		rd_buf_str(b, "@base64/");
		for (size_t i = 0; i < n; i += 3) {
			uint32_t w = (uint32_t)(unsigned char)v[i] << 16;
			char o[4];

			if (i + 1 < n)
				w |= (uint32_t)(unsigned char)v[i + 1] << 8;
			if (i + 2 < n)
				w |= (unsigned char)v[i + 2];
			o[0] = b64[w >> 18 & 63];
			o[1] = b64[w >> 12 & 63];
			o[2] = i + 1 < n ? b64[w >> 6 & 63] : '=';
			o[3] = i + 2 < n ? b64[w & 63] : '=';
			rd_buf_mem(b, o, 4);
		}
		if (n == 0)
			rd_buf_str(b, "=");
		return;
	}
	rd_buf_str(b, "/");
	for (const unsigned char *u = (const unsigned char *)v; *u; u++) {
		char t[4];

		if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') ||
		    (*u >= '0' && *u <= '9') || strchr("-._~", *u)) {
			rd_buf_mem(b, u, 1);
		} else {
			snprintf(t, sizeof t, "%%%02X", *u);
			rd_buf_mem(b, t, 3);
		}
	}
}

static int connect_to(const char *host, const char *port, int timeout_s,
                      char *err, size_t el)
{
	struct addrinfo hints, *ai, *a;
	struct timeval tv = { timeout_s, 0 };
	int fd = -1, r;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, port, &hints, &ai);
	if (r)
		return errf(err, el, "%s:%s: %s", host, port, gai_strerror(r));
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		/* SO_SNDTIMEO bounds connect() too (socket(7)) */
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS || errno == EAGAIN)
			errno = ETIMEDOUT;
		r = errno;
		close(fd);
		fd = -1;
		errno = r;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return errf(err, el, "%s:%s: cannot connect: %s", host, port,
		            strerror(errno));
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int rd_push(const char *url, const char *job, const char *instance,
            char *const *labels, int nlabels, const char *body, size_t len,
            int timeout_s, char *err, size_t errlen)
{
	char resp[512], hdr[512];
	struct rte_pushgw_url u;
	struct rd_buf path = { 0 };
	size_t got = 0, len_p;
	int fd, status = 0, rc = -1;

	if (rte_pushgw_url_parse(url, &u, err, errlen))
		return -1;
	len_p = strlen(u.prefix);
	if (len_p && u.prefix[len_p - 1] == '/')
		len_p--;
	rd_buf_mem(&path, u.prefix, len_p);
	rd_buf_str(&path, "/metrics");
	key_pair(&path, "job", 3, job);
	key_pair(&path, "instance", 8, instance);
	for (int i = 0; i < nlabels; i++) {
		const char *eq = strchr(labels[i], '=');

		key_pair(&path, labels[i], (size_t)(eq - labels[i]), eq + 1);
	}
	if (path.oom) {
		free(path.p);
		return errf(err, errlen, "out of memory");
	}
	fd = connect_to(u.host, u.port, timeout_s, err, errlen);
	if (fd < 0)
		goto out;
	snprintf(hdr, sizeof hdr,
	         "Host: %s:%s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
	         "Content-Length: %zu\r\nConnection: close\r\nUser-Agent: rte-read\r\n\r\n",
	         u.host, u.port, len);
	if (send_all(fd, "PUT ", 4) || send_all(fd, path.p, path.n) ||
	    send_all(fd, " HTTP/1.1\r\n", 11) || send_all(fd, hdr, strlen(hdr)) ||
	    send_all(fd, body, len)) {
		errf(err, errlen, "%s: send: %s", url,
		     strerror(errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno));
		goto close;
	}
	while (got < sizeof resp - 1) {
		ssize_t r = recv(fd, resp + got, sizeof resp - 1 - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(resp, '\n', got))
			break;
	}
	resp[got] = 0;
	if (sscanf(resp, "HTTP/1.%*c %d", &status) != 1) {
		int e = errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;

		errf(err, errlen, "%s: no HTTP answer%s%s%s", url, got ? "" : ": ",
		     got ? "" : strerror(e ? e : ECONNRESET),
		     e == ETIMEDOUT ? " (the gateway is slow or stuck: --timeout)" : "");
		goto close;
	}
	if (status / 100 != 2) {
		resp[strcspn(resp, "\r\n")] = 0;
		errf(err, errlen, "%s: the gateway answered '%s'", url, resp);
		goto close;
	}
	rc = 0;
close:
	close(fd);
out:
	free(path.p);
	return rc;
}
