/*
 * slots.h - the ring slots of the current file (slots.c). Rings are
 * claimed, not assigned: a thread takes the first FREE slot with a CAS on
 * its first event and gives it back when it ends, so ring indexes are
 * reused and nothing on the write path takes a lock. A claimed ring has
 * its first RTE_FILE_RING_FIRST bytes reserved in the file, and grows as
 * it is written (rte_slots_bind); a slot whose first pages could not be
 * reserved is BROKEN for the file's lifetime.
 * Also the file's name slots (one per event id, RTE_NAME_SLOT_BYTES): 1 MiB
 * of names is reserved page by page as names are written, so that a fork
 * child's new file costs a few pages, not a megabyte. Below the tracer,
 * which owns the file, binds threads to rings and decides when a name may
 * be written.
 *
 * Thread- and signal-safety: claim, release, free, epoch and owned_by are
 * lock-free, thread-safe and async-signal-safe (reserve, and the growth
 * of a bound writer, make one fallocate-like call and may warn once on
 * stderr, both signal-safe).
 * reset, write_name and rereserve run with the tracer's lock held or in a
 * single thread (a new file, a failed exec, registration).
 */
#ifndef RTE_SHIM_SLOTS_H
#define RTE_SHIM_SLOTS_H

#include <pthread.h>
#include <stdint.h>

#include "file.h"

struct rte_ring_writer;

#pragma GCC visibility push(hidden)

enum { SLOT_FREE = 0, SLOT_TAKEN = 1, SLOT_BROKEN = 2 };

/* A new file: every slot FREE, but ring 0 TAKEN (the thread that makes the
 * file) and reserved (rte_file_create() did it); no name page reserved;
 * warnings re-armed. */
void rte_slots_reset(void);
/* Reserve the first RTE_FILE_RING_FIRST bytes of ring i in f unless done
 * already. Returns 0, or -1 after a warning (once per file). */
int rte_slots_reserve(const struct rte_file *f, unsigned i);
/* w was just attached to ring r of f (reserved): tell it how much of the
 * ring is reserved, and let it reserve more of f as it writes (doubling;
 * a message that cannot get its blocks is dropped, with a warning once
 * per file). The ring's owner only. */
void rte_slots_bind(struct rte_ring_writer *w, const struct rte_file *f,
                    unsigned r);
/* Claim the first free ring of f. Returns its index, -1 if its pages could
 * not be reserved (the slot is then BROKEN), -2 if every ring is taken. */
int rte_slots_claim(const struct rte_file *f);
/* Record th as the owner of ring r (the claimer, right after claiming). */
void rte_slots_set_owner(unsigned r, pthread_t th);
/* The ring among the first n that th owns, or -1. */
int rte_slots_owned_by(unsigned n, pthread_t th);
/* Give ring r back after the owner's last store to it: FREE again, and
 * the release epoch moves on (threads that found no ring try again). */
void rte_slots_release(unsigned r);
/* Give ring r back without moving the epoch (a ring kept for a thread
 * that never took it). */
void rte_slots_free(unsigned r);
/* Never hand ring r out again (its pages may be missing). */
void rte_slots_break(unsigned r);
/* Number of releases so far (acquire). */
uint32_t rte_slots_epoch(void);
/* Write `name` (truncated) into name slot id (< RTE_MAX_USER_EVENTS) of
 * f, reserving its pages first. Returns 0, or -1 after a warning (once
 * per file) with nothing written. */
int rte_slots_write_name(const struct rte_file *f, unsigned id,
                         const char *name);
/* Reserve again in f the pages of every ring and name reserved so far
 * (the file was rebuilt after a failed exec). Returns 0 or -1. */
int rte_slots_rereserve(const struct rte_file *f);

#pragma GCC visibility pop

#endif
