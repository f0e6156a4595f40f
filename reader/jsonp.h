/*
 * jsonp.h - a small JSON reader for rte-read diff: the whole document into
 * a tree of values. Input is untrusted: nesting is bounded, every error is
 * reported with its byte offset, nothing reads past the end.
 *
 * Not thread-safe per document; distinct documents are independent.
 */
#ifndef RD_JSONP_H
#define RD_JSONP_H

#include <stddef.h>

enum rd_jt { RD_JNULL, RD_JBOOL, RD_JNUM, RD_JSTR, RD_JARR, RD_JOBJ };

struct rd_jv {
	enum rd_jt t;
	double num;               /* RD_JNUM; RD_JBOOL: 0 or 1 */
	char *str;                /* RD_JSTR (NUL-terminated, UTF-8 but
	                           * for the bytes of \udcXX: jsonp.c) */
	struct rd_jv *v;          /* RD_JARR, RD_JOBJ: the values */
	char **k;                 /* RD_JOBJ: their keys */
	size_t n;
};

/*
 * Parse text[0..len) as one JSON value. Returns the tree (free with
 * rd_json_free) or NULL with a message "offset N: problem" in err.
 */
struct rd_jv *rd_json_parse(const char *text, size_t len, char *err, size_t errlen);
void rd_json_free(struct rd_jv *v);

/* The member `key` of object o, or NULL (also if o is not an object). */
const struct rd_jv *rd_json_get(const struct rd_jv *o, const char *key);
/* The number at key, or `dflt` if it is missing or not a number. */
double rd_json_num(const struct rd_jv *o, const char *key, double dflt);

#endif
