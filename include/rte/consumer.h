/*
 * rte/consumer.h - read OCaml 5.2 runtime-events ring files.
 *
 * Link with -lrteconsumer. This is the library rte-read is built on; any
 * tool can use it to read the rings of a live process, of a finished one
 * whose file was preserved, or of a real OCaml 5.2 program.
 *
 * A ring file is untrusted input. Opening validates the header against the
 * real file size before any offset is used; reading validates every message
 * before it is decoded. Nothing in this library reads outside the mapped
 * file, loops without bound, or aborts the caller.
 *
 * One caveat of every mmap-based reader: if another process truncates the
 * file while it is mapped, touching the lost pages raises SIGBUS. rte-read
 * handles that signal; a tool that reads files others may truncate should
 * do the same.
 *
 * Thread-safety: a cursor is not thread-safe; use one cursor per thread, or
 * serialise calls on a cursor. Distinct cursors are independent, including
 * cursors on the same file. Nothing here is async-signal-safe except the
 * pure functions of rte/format.h and rte_strerror(). After fork, a child
 * may keep using cursors it inherited (the mapping is shared and read-only).
 */
#ifndef RTE_CONSUMER_H
#define RTE_CONSUMER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "rte/error.h"
#include "rte/format.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rte_event_kind {
	RTE_EV_BEGIN = 0,    /* runtime phase entered; id = enum rte_phase */
	RTE_EV_END,          /* runtime phase left */
	RTE_EV_COUNTER,      /* runtime counter; id = enum rte_counter */
	RTE_EV_ALLOC,        /* allocation buckets */
	RTE_EV_LIFECYCLE,    /* id = enum rte_lifecycle */
	RTE_EV_LOST,         /* words overwritten before they were read */
	RTE_EV_USER_UNIT,
	RTE_EV_USER_INT,
	RTE_EV_USER_SPAN_BEGIN,
	RTE_EV_USER_SPAN_END,
	RTE_EV_USER_CUSTOM,
	RTE_EV_KIND_COUNT
};

/* The JSONL name of a kind ("begin", "user_int", ...). */
const char *rte_event_kind_name(enum rte_event_kind k);

/*
 * One decoded event. Pointers (name, buckets, bytes) point into memory owned
 * by the cursor and stay valid until the next rte_cursor_next() on the same
 * ring, or until the cursor is closed, whichever comes first.
 */
struct rte_event {
	enum rte_event_kind kind;
	unsigned ring;
	unsigned id;      /* phase, counter, lifecycle or user event id */
	uint64_t ts;      /* CLOCK_MONOTONIC ns; 0 for RTE_EV_LOST */
	/* OCaml's name of the id for runtime kinds (NULL if the id is unknown
	 * to this version); the registered name for user kinds ("" if the
	 * name slot is still empty); NULL for RTE_EV_LOST. */
	const char *name;
	union {
		uint64_t counter;         /* RTE_EV_COUNTER */
		int64_t data;             /* RTE_EV_LIFECYCLE (0 if absent) */
		int64_t value;            /* RTE_EV_USER_INT */
		uint64_t lost_words;      /* RTE_EV_LOST */
		const uint64_t *buckets;  /* RTE_EV_ALLOC: RTE_ALLOC_BUCKETS */
		struct {
			const uint8_t *bytes;
			size_t len;
		} custom;                 /* RTE_EV_USER_CUSTOM */
	} u;
};

typedef struct rte_cursor rte_cursor;

/*
 * Open and validate the ring file at `path`. On success stores a new cursor
 * in *out and returns RTE_OK; every ring starts at position 0, as OCaml's
 * consumer does. On failure returns an error code and, if errbuf is not
 * NULL, writes one line "PATH: problem" (NUL-terminated, truncated to
 * errlen) into it.
 */
int rte_cursor_open(const char *path, rte_cursor **out, char *errbuf,
                    size_t errlen);

/*
 * Open <dir>/<pid>.events. dir NULL means the first that has the file of
 * $OCAML_RUNTIME_EVENTS_DIR if set (where OCaml's
 * Runtime_events.create_cursor looks), librte.so's default directory
 * ($XDG_RUNTIME_DIR/rte, else /dev/shm/rte-<uid> or /tmp/rte-<uid>) and
 * the working directory (OCaml's default): rte-read's rule for a PID.
 */
int rte_cursor_open_pid(const char *dir, pid_t pid, rte_cursor **out,
                        char *errbuf, size_t errlen);

/* Unmap and free. NULL is allowed. */
void rte_cursor_close(rte_cursor *c);

/*
 * Give back the cursor's mapping and its copy buffers until its next read
 * (which maps the file again, checking it is the same file, by device and
 * inode, and still long enough: else that read fails with RTE_ETRUNCATED).
 * The cursor keeps its place in every ring and the names it returned.
 * With many files (a directory of 100,000), release each after reading
 * it: mappings and memory then stay bounded. Returns RTE_OK or RTE_EINVAL.
 * Events returned before the call must not be used after it.
 */
int rte_cursor_release(rte_cursor *c);

const char *rte_cursor_path(const rte_cursor *c);
/* The fstat() of the file taken when the cursor opened it: its device and
 * inode identify it even after it was renamed or removed (e.g. to ask
 * whether a process still maps it). Owned by the cursor. */
const struct stat *rte_cursor_stat(const rte_cursor *c);
const struct rte_layout *rte_cursor_layout(const rte_cursor *c);
/* Number of rings (max_domains). */
unsigned rte_cursor_rings(const rte_cursor *c);
/* 1 if the ring has ever been written (its tail is not 0), else 0. */
int rte_cursor_ring_used(const rte_cursor *c, unsigned ring);
/* Total lost words reported so far on `ring`. */
uint64_t rte_cursor_ring_lost(const rte_cursor *c, unsigned ring);

/*
 * Read the next event of `ring` into *ev. Returns 1 if an event was stored,
 * 0 if the ring has nothing new (a live producer may add more later), or a
 * negative error (RTE_ECORRUPT, RTE_ENAME, RTE_ENOMEM, RTE_EINVAL). A ring
 * that failed keeps returning its error; other rings remain readable.
 * Padding is skipped. Loss (the producer overwrote unread words, or a copy
 * was torn by a concurrent write) is returned as an RTE_EV_LOST event.
 */
int rte_cursor_next(rte_cursor *c, unsigned ring, struct rte_event *ev);

/*
 * Like rte_cursor_next(), but up to `n` events of `ring` at once into
 * ev[0..n): the fast way to read a ring from start to end. Returns the
 * number of events stored (> 0), 0 if the ring has nothing new, or a
 * negative error as rte_cursor_next() does (an error met after some events
 * were stored is returned by the next call). A loss is returned alone
 * (1, ev[0] is the RTE_EV_LOST event). Head is checked once per call, not
 * per event: events of one call were intact when they were copied, and a
 * producer that overwrites them afterwards is reported by the next call.
 * The pointers of every stored event stay valid until the next
 * rte_cursor_next() or rte_cursor_next_batch() on the same ring.
 */
int rte_cursor_next_batch(rte_cursor *c, unsigned ring, struct rte_event *ev,
                          size_t n);

/*
 * The raw way through a ring, for a consumer that decodes the messages it
 * reads most itself (rte/format.h's rte_hdr_* helpers) and hands the
 * others to rte_cursor_decode(): no struct rte_event per message.
 *
 * Stores in *words the next whole messages of `ring`, copied and checked
 * intact as rte_cursor_next_batch() checks its events, and returns their
 * number of words (> 0, at most a few thousand): each message is
 * rte_hdr_len() of its first word long, at least 1, and the last one ends
 * exactly at the returned count (checked here; nothing else in a message
 * is: padding, unknown types and short messages are the caller's to skip
 * or to pass to rte_cursor_decode()). Returns 0 with *lost 0 if the ring
 * has nothing new, 0 with *lost > 0 if the producer overwrote that many
 * unread words (the next call reads on after them: this is the
 * RTE_EV_LOST event of the other calls), or a negative error as
 * rte_cursor_next() does. The words stay valid until the next read of the
 * ring. Do not mix with rte_cursor_next() or _batch() on one ring.
 */
int rte_cursor_next_words(rte_cursor *c, unsigned ring, const uint64_t **words,
                          uint64_t *lost);

/*
 * rte_cursor_next_words() for a caller that walks the messages anyway,
 * without the walk that finds where the whole ones end: stores in *words
 * the copied words of `ring` from its read position and returns their
 * count (> 0, at most a few thousand), or 0 and *lost, or an error, as
 * rte_cursor_next_words() does. Only the first message is checked (its
 * rte_hdr_len() at least 1 and at most the count): the caller walks on
 * while each next length is at least 1 and fits in what is left, stops at
 * the first that does not (the copy may cut the last message, and the
 * ring is hostile), and says how many words it took with
 * rte_cursor_consume_words(). Nothing is read until then: another peek
 * starts at the same word. The words stay valid until the next read of
 * the ring. Do not mix with rte_cursor_next() or _batch() on one ring.
 */
int rte_cursor_peek_words(rte_cursor *c, unsigned ring, const uint64_t **words,
                          uint64_t *lost);

/*
 * Mark the first n words of the last rte_cursor_peek_words() of `ring` as
 * read: whole messages from its start, n at most its count (else
 * RTE_EINVAL and nothing is marked). Returns RTE_OK.
 */
int rte_cursor_consume_words(rte_cursor *c, unsigned ring, size_t n);

/*
 * Decode message m (rte_hdr_len(m[0]) words returned by
 * rte_cursor_next_words() or _peek_words() for `ring`, still valid) into
 * *ev, exactly as rte_cursor_next() would have: 1 (an event), 0 (padding
 * or a type this version does not know: skip it) or a negative error (a
 * malformed message: the ring then fails as with rte_cursor_next(); its
 * error message gives the message's position).
 */
int rte_cursor_decode(rte_cursor *c, unsigned ring, const uint64_t *m,
                      struct rte_event *ev);

/* "PATH: ring N: problem" for the last error of rte_cursor_next/poll. */
const char *rte_cursor_errmsg(const rte_cursor *c);

/*
 * Callbacks in the manner of OCaml's Runtime_events.Callbacks. Any may be
 * NULL (the event is consumed and ignored). A callback returning non-zero
 * stops rte_cursor_poll, which then returns that value.
 */
struct rte_callbacks {
	int (*runtime_begin)(void *ud, unsigned ring, uint64_t ts,
	                     unsigned phase);
	int (*runtime_end)(void *ud, unsigned ring, uint64_t ts,
	                   unsigned phase);
	int (*runtime_counter)(void *ud, unsigned ring, uint64_t ts,
	                       unsigned counter, uint64_t value);
	int (*alloc)(void *ud, unsigned ring, uint64_t ts,
	             const uint64_t buckets[RTE_ALLOC_BUCKETS]);
	int (*lifecycle)(void *ud, unsigned ring, uint64_t ts,
	                 unsigned lifecycle, int64_t data);
	int (*lost_events)(void *ud, unsigned ring, uint64_t words);
	int (*user_unit)(void *ud, unsigned ring, uint64_t ts, unsigned id,
	                 const char *name);
	int (*user_int)(void *ud, unsigned ring, uint64_t ts, unsigned id,
	                const char *name, int64_t value);
	int (*user_span)(void *ud, unsigned ring, uint64_t ts, unsigned id,
	                 const char *name, int is_begin);
	int (*user_custom)(void *ud, unsigned ring, uint64_t ts, unsigned id,
	                   const char *name, const uint8_t *bytes, size_t len);
};

/*
 * Like OCaml's Runtime_events.read_poll: read every ring in index order,
 * calling the matching callback for each event, until each ring has nothing
 * new or `max_events` events were delivered (0 means no limit). Stores the
 * number delivered in *count if count is not NULL. Returns RTE_OK, a
 * callback's non-zero value, or the first negative error.
 */
int rte_cursor_poll(rte_cursor *c, const struct rte_callbacks *cb, void *ud,
                    size_t max_events, size_t *count);

/* Call the callback of `cb` that matches ev->kind. */
int rte_event_dispatch(const struct rte_event *ev,
                       const struct rte_callbacks *cb, void *ud);

/*
 * Format one event as a JSON object on one line (no newline), with the
 * fields and order of the stable schema in tests/fixtures/ocaml-5.2/
 * README.md; if pid >= 0 a "pid" field is added first. Returns the length
 * written (excluding NUL). The output is always NUL-terminated and is
 * truncated if cap is too small; RTE_JSONL_MAX is always enough. Names
 * and argv, bytes from the file: '"' and '\' escaped, controls and DEL as
 * \u00XX, well-formed UTF-8 as it is, any other byte XX as \udcXX (a lone
 * low surrogate: no text holds one, so the bytes come back exactly).
 */
/* The longest line: a custom payload's hex, or an rte.proc's (at most 16
 * + 4096 bytes) with its argv decoded, every byte escaped (rte/proc.h). */
#define RTE_JSONL_MAX ((16 + 4096) * 2 + 4096 * 9 + 1024)
size_t rte_event_jsonl(char *buf, size_t cap, const struct rte_event *ev,
                       long pid);

/* The printable name of an event: ev->name, or "<kind>_<id>" for an id
 * unknown to this version, written into buf. Returns buf or ev->name. */
const char *rte_event_name(const struct rte_event *ev, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
