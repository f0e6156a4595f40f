/*
 * json_check.h - a strict JSON syntax check for the fuzz target's oracle.
 */
#ifndef RTE_FUZZ_JSON_CHECK_H
#define RTE_FUZZ_JSON_CHECK_H

#include <stddef.h>

/*
 * 1 if s[0..n) is exactly one JSON object (RFC 8259 syntax) whose strings
 * hold printable ASCII, well-formed UTF-8 and only the escapes of
 * common/format/utf8.h's rule (\uXXXX a control, DEL or U+DC80..U+DCFF),
 * as rte_event_jsonl promises; else 0. Pure, reentrant.
 */
int fz_json_object_ok(const char *s, size_t n);

#endif
