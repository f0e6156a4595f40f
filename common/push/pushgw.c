/*
 * pushgw.c - the rules of a Pushgateway URL and of its grouping labels
 * (see pushgw.h).
 */
#include <stdio.h>
#include <string.h>

#include "pushgw.h"

/* "URL: why" into err: -1. */
static int refuse(char *err, size_t errlen, const char *url, const char *why)
{
	snprintf(err, errlen, "%s: %s", url, why);
	return -1;
}

int rte_pushgw_url_parse(const char *url, struct rte_pushgw_url *u, char *err,
                         size_t el)
{
	const char *h, *e, *c;
	size_t n;

	if (!strncmp(url, "https://", 8))
		return refuse(err, el, url, "only http:// URLs are supported: rte has no TLS "
		              "(push over http:// to a local or trusted gateway, or through a "
		              "TLS-terminating proxy)");
	if (strncmp(url, "http://", 7))
		return refuse(err, el, url, "only http:// URLs are supported");
	h = url + 7;
	e = h + strcspn(h, "/");
	u->prefix = e;
	if (*h == '[') { /* [v6]:port */
		c = memchr(h, ']', (size_t)(e - h));
		if (!c)
			return refuse(err, el, url, "bad host");
		n = (size_t)(c - h - 1);
		if (n >= sizeof u->host)
			return refuse(err, el, url, "host too long");
		memcpy(u->host, h + 1, n);
		u->host[n] = 0;
		c++;
	} else {
		c = memchr(h, ':', (size_t)(e - h));
		if (!c)
			c = e;
		n = (size_t)(c - h);
		if (n == 0 || n >= sizeof u->host)
			return refuse(err, el, url, "bad host");
		memcpy(u->host, h, n);
		u->host[n] = 0;
	}
	if (c < e && *c == ':') {
		n = (size_t)(e - c - 1);
		if (n == 0 || n >= sizeof u->port || strspn(c + 1, "0123456789") < n)
			return refuse(err, el, url, "bad port");
		memcpy(u->port, c + 1, n);
		u->port[n] = 0;
	} else if (c == e) {
		snprintf(u->port, sizeof u->port, "80");
	} else {
		return refuse(err, el, url, "bad host");
	}
	return 0;
}

int rte_pushgw_label_name_ok(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

int rte_pushgw_utf8_ok(const char *v)
{
	const unsigned char *u = (const unsigned char *)v;

	while (*u) {
		unsigned c = *u, n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
		                   : c >= 0xe0 && c <= 0xef ? 3
		                   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;

		if (!n)
			return 0;
		for (unsigned k = 1; k < n; k++)
			if ((u[k] & 0xc0) != 0x80)
				return 0;
		u += n;
	}
	return 1;
}

int rte_pushgw_value_ok(const char *v)
{
	for (const unsigned char *u = (const unsigned char *)v; *u; u++)
		if (*u < 0x20 || *u == 0x7f)
			return 0;
	return rte_pushgw_utf8_ok(v);
}

int rte_pushgw_label_ok(const char *kv)
{
	static const char *const reserved[] = {
		"job", "instance", "exe", "pid", "name", "kind", "ring", "le",
	};
	const char *eq = strchr(kv, '=');
	size_t n;

	if (!eq || !rte_pushgw_label_name_ok(kv, (size_t)(eq - kv)))
		return 0;
	n = (size_t)(eq - kv);
	if (n >= 2 && kv[0] == '_' && kv[1] == '_')
		return 0;
	for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
		if (strlen(reserved[i]) == n && !strncmp(kv, reserved[i], n))
			return 0;
	return rte_pushgw_value_ok(eq + 1);
}
