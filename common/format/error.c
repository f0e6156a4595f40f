/* error.c - rte_strerror(), shared by the producer and the consumer. */
#include "rte/error.h"

const char *rte_strerror(int err)
{
	switch (err) {
	case RTE_OK: return "success";
	case RTE_ENOENT: return "no such file or directory";
	case RTE_EIO: return "input/output error";
	case RTE_ENOTRING: return "not a runtime events ring file";
	case RTE_EHEADER: return "bad ring file header";
	case RTE_ETRUNCATED: return "ring file is truncated";
	case RTE_ECORRUPT: return "corrupt event stream";
	case RTE_ENAME: return "corrupt user event name";
	case RTE_ENOMEM: return "out of memory";
	case RTE_EINVAL: return "invalid argument";
	case RTE_EBADNAME: return "bad event name";
	case RTE_ETOOMANY: return "too many user events";
	case RTE_ETYPE: return "event already registered with another type";
	case RTE_ESTATE: return "tracing is not available";
	default: return "unknown error";
	}
}
