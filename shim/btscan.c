/*
 * btscan.c - the stack scan of a signal (rte_bt_capture_signal_scan): for
 * a crash walked before libunwind is loaded, the return addresses found on
 * the interrupted stack (the words that follow a call instruction), then
 * the frame-pointer chain, every word read with rte_bt_peek (backtrace.c).
 * Uses nothing of the shim but backtrace.c.
 */
#include <stdint.h>

#include "backtrace.h"
#include "btscan.h"

#if defined(__x86_64__)
/* Bytes of the stack read at once by the scan (one process_vm_readv). */
#define SCAN_BYTES 4096u

/*
 * 1 if `r` looks like a return address: the bytes before it (read with
 * rte_bt_peek, so an address that is not mapped is refused without a
 * fault) end with a call instruction: e8 rel32, or ff /2 (an indirect
 * call through a register or memory, any addressing form but an absolute
 * disp32 SIB one).
 */
static int after_call(uint64_t r)
{
	uint8_t b[8];

	if (r < 4096 || rte_bt_peek(b, (const void *)(uintptr_t)(r - 8), 8) != 8)
		return 0;
	if (b[3] == 0xe8)
		return 1;
	for (unsigned p = 0; p + 1 < 8; p++) {
		unsigned m = b[p + 1], mod = m >> 6, rm = m & 7, len = 2;

		if (b[p] != 0xff || ((m >> 3) & 7) != 2)
			continue;
		if (mod != 3 && rm == 4)
			len++; /* SIB */
		if (mod == 1)
			len += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			len += 4;
		if (p + len == 8)
			return 1;
	}
	return 0;
}

/* The word at stack address a, from the scanned window w (read from lo)
 * when it is there, else read alone. 0 if it cannot be read. */
static uint64_t word_at(const uint64_t *w, uint64_t lo, unsigned nw,
                        uint64_t a)
{
	uint64_t v = 0;

	if (a >= lo && a + 8 <= lo + (uint64_t)nw * 8 && !((a - lo) & 7))
		return w[(a - lo) / 8];
	if (rte_bt_peek(&v, (const void *)(uintptr_t)a, 8) != 8)
		return 0;
	return v;
}

/* 1 if fp, found at or above `sp`, starts a frame-pointer chain: a saved
 * frame pointer above it and a return address after it. */
static int chain_starts(const uint64_t *w, uint64_t lo, unsigned nw,
                        uint64_t fp, uint64_t sp)
{
	uint64_t up;

	if (fp < sp || (fp & 7) || fp - sp >= RTE_BT_FRAME_SPAN)
		return 0;
	up = word_at(w, lo, nw, fp);
	return up > fp && up - fp < (1u << 20) &&
	       after_call(word_at(w, lo, nw, fp + 8));
}
#endif

unsigned rte_bt_capture_signal_scan(void *uc, uint64_t *pcs, unsigned max)
{
	struct rte_bt_start_regs r;
	unsigned n = 0;

	if (!uc || max == 0 || !rte_bt_signal_regs(uc, &r))
		return 0;
#if defined(__x86_64__)
	{
		uint64_t fp = r.fp, sp = r.sp;
		uint64_t w[SCAN_BYTES / 8], a, end;
		unsigned nw = (unsigned)(rte_bt_peek(w, (const void *)(uintptr_t)sp,
		                                     sizeof(w)) / 8);
		int chained = chain_starts(w, sp, nw, fp, sp);

		pcs[n++] = r.pc;
		/* The frames of code built without frame pointers (libc's,
		 * often) lie between sp and the first frame of the chain, or,
		 * if %rbp holds no chain, anywhere in the window: their return
		 * addresses are the words there that follow a call. A chain
		 * found in the window takes over. */
		end = chained ? fp : sp + (uint64_t)nw * 8;
		for (a = sp; a < end && n < max; a += 8) {
			uint64_t v = word_at(w, sp, nw, a);

			if (!chained && chain_starts(w, sp, nw, a, sp) &&
			    a + 8 < end) {
				fp = a;
				chained = 1;
				break;
			}
			if (after_call(v))
				pcs[n++] = v;
		}
		/* The chain, each return address checked like the scan's. */
		while (chained && n < max) {
			uint64_t up = word_at(w, sp, nw, fp);
			uint64_t ret = word_at(w, sp, nw, fp + 8);

			if (!after_call(ret))
				break;
			pcs[n++] = ret;
			if (up <= fp || up - fp >= RTE_BT_FRAME_SPAN ||
			    (up & 7))
				break;
			fp = up;
		}
	}
#endif
	return n;
}
