/*
 * lttng_tp.h - the LTTng-UST tracepoint provider of the comparison
 * benchmark (bench/lttng.c): one event with the payload of an rte int
 * event (an id and a 64-bit value). Built only where liblttng-ust-dev is
 * installed.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER rte_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"
#if !defined(RTE_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define RTE_BENCH_LTTNG_TP_H
#include <lttng/tracepoint.h>
LTTNG_UST_TRACEPOINT_EVENT(rte_bench, int_event,
	LTTNG_UST_TP_ARGS(int, id, long, value),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, id, id)
		lttng_ust_field_integer(long, value, value)))
#endif
#include <lttng/tracepoint-event.h>
