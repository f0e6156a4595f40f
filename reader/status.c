/*
 * status.c - rte-read's exit status and its one-line messages (status.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "rte/error.h"
#include "status.h"

static int status; /* the first failure's exit code, 0 if none */

void rd_status_set(int code)
{
	if (!status)
		status = code;
}

void rd_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("rte-read: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	rd_status_set(code);
}

int rd_exit_of(int err)
{
	switch (err) {
	case RTE_ENOENT:
	case RTE_EIO:
	case RTE_EINVAL:
		return RD_EX_NOINPUT;
	case RTE_ENOTRING:
	case RTE_EHEADER:
	case RTE_ETRUNCATED:
		return RD_EX_BADFILE;
	case RTE_ECORRUPT:
	case RTE_ENAME:
		return RD_EX_CORRUPT;
	case RTE_ENOMEM:
		return RD_EX_NOMEM;
	default:
		return RD_EX_BADFILE;
	}
}

int rd_status(void)
{
	return status;
}
