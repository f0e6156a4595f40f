/*
 * rte/error.h - the error codes of every rte library function.
 *
 * Every failing call returns one of these negative values; RTE_OK is 0.
 * The consumer library (librteconsumer) and the producer (librte.so) share
 * them; rte_strerror() is in both.
 */
#ifndef RTE_ERROR_H
#define RTE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum rte_error {
	RTE_OK = 0,
	/* consumer */
	RTE_ENOENT = -1,     /* no such file or directory */
	RTE_EIO = -2,        /* open/stat/read/mmap failed */
	RTE_ENOTRING = -3,   /* not a ring file: too small, or wrong version */
	RTE_EHEADER = -4,    /* header values are inconsistent */
	RTE_ETRUNCATED = -5, /* file is shorter than its header says */
	RTE_ECORRUPT = -6,   /* the message stream of a ring is corrupt */
	RTE_ENAME = -7,      /* a user event name slot is not NUL-terminated */
	RTE_ENOMEM = -8,     /* out of memory */
	RTE_EINVAL = -9,     /* bad argument (ring index, NULL, path too long) */
	/* producer */
	RTE_EBADNAME = -10,  /* event name empty, too long (> 127 bytes) or
	                        not printable */
	RTE_ETOOMANY = -11,  /* more than RTE_MAX_USER_EVENTS events */
	RTE_ETYPE = -12,     /* name already registered with another type */
	RTE_ESTATE = -13,    /* tracing could not start, or was disabled after
	                        an error (see stderr) */
};

/* A static English description of an error code. Thread-safe and
 * async-signal-safe. */
const char *rte_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
