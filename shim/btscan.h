/*
 * btscan.h - the stack scan of a signal (btscan.c), for the crash
 * recorder. Hidden.
 */
#ifndef RTE_SHIM_BTSCAN_H
#define RTE_SHIM_BTSCAN_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Like rte_bt_capture_signal_fp, for code that is not all built with frame
 * pointers (before libunwind is loaded, a crash is walked so): the return
 * addresses found on the stack between the interrupted stack pointer and
 * the first frame of the frame-pointer chain (any word that follows a
 * call instruction), then the chain. Reads 4 KiB of stack at once; a word
 * that is not a return address but looks like one adds a frame. x86-64
 * only (elsewhere: 0 frames). Async-signal-safe. */
unsigned rte_bt_capture_signal_scan(void *uc, uint64_t *pcs, unsigned max);

#pragma GCC visibility pop

#endif
