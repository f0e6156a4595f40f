/*
 * slots.c - the ring slots of the current file (see slots.h): a slot array
 * of max_domains bytes (FREE/TAKEN/BROKEN) where a thread takes the first
 * FREE slot with a CAS on its first event and gives it back when it ends,
 * so ring indexes are reused and nothing on the write path takes a lock;
 * how much of each ring's pages are reserved in the file (a ring grows
 * by doubling, from RTE_FILE_RING_FIRST bytes when it is claimed, as its
 * writer reaches the end of what is reserved: ring.h "Lazy
 * reservation"); and the name slots of the file, whose pages are
 * reserved as names are written.
 */
#include <string.h>

#include "ring.h"
#include "forkvars.h"
#include "log.h"
#include "slots.h"

static uint8_t g_slots[RTE_RINGS_MAX];    /* SLOT_*, atomic */
/* Words of each ring's data whose blocks are reserved, from its start
 * (0: none yet). Written by the ring's owner only, atomic. Only the
 * first g_extent_n entries were ever set (claims take the lowest free
 * ring): a reset clears those, not 32 KiB. */
static RTE_BIGVAR uint64_t g_extent[RTE_RINGS_MAX];
RTE_HOTPAGE(slots_extent, &g_extent[0]);
static unsigned g_extent_n; /* atomic */
static RTE_BIGVAR pthread_t g_owner[RTE_RINGS_MAX];
RTE_HOTPAGE(slots_owner, &g_owner[0]);  /* thread owning each ring */
static uint32_t g_epoch;                  /* ring releases, atomic */
static int g_once_reserve, g_once_grow;

#define NAME_PAGE 4096u
/* Pages of the name area already reserved (lock held or single thread). */
static uint8_t g_name_pages[RTE_MAX_USER_EVENTS * RTE_NAME_SLOT_BYTES /
                            NAME_PAGE + 2];
static int g_once_names;


void rte_slots_reset(void)
{
	memset(g_slots, 0, sizeof(g_slots));
	memset(g_extent, 0, g_extent_n * sizeof(g_extent[0]));
	/* rte_file_create() reserved ring 0's first part (bind clamps it to
	 * a smaller ring). */
	g_extent[0] = RTE_FILE_RING_FIRST / 8;
	g_extent_n = 1;
	memset(g_name_pages, 0, sizeof(g_name_pages));
	/* Problems are reported once per file (a fork child's too). */
	g_once_reserve = g_once_names = g_once_grow = 0;
	g_slots[0] = SLOT_TAKEN;
}

/* The first words of ring i to reserve when it is claimed. */
static uint64_t first_words(const struct rte_layout *l)
{
	return l->ring_size_elements < RTE_FILE_RING_FIRST / 8
	               ? l->ring_size_elements
	               : RTE_FILE_RING_FIRST / 8;
}

static uint64_t ring_off(const struct rte_layout *l, unsigned i)
{
	return l->data_offset + (uint64_t)i * l->ring_size_bytes;
}

int rte_slots_reserve(const struct rte_file *f, unsigned i)
{
	const struct rte_layout *l = &f->l;
	int e;

	/* Acquire: pairs with the release below (another thread reserved). */
	if (__atomic_load_n(&g_extent[i], __ATOMIC_ACQUIRE))
		return 0;
	e = rte_file_reserve(f, ring_off(l, i), first_words(l) * 8);
	if (e) {
		rte_warn(&g_once_reserve,
		         "cannot reserve space for ring %u of %s: %s; events of "
		         "threads without a ring are dropped and counted in "
		         "rte.dropped",
		         i, f->path, strerrordesc_np(e));
		return -1;
	}
	/* Its header and first page, written by the claiming thread now. */
	rte_file_prefault(f, l->headers_offset +
	                          (uint64_t)i * l->ring_header_size_bytes,
	                  l->ring_header_size_bytes);
	rte_file_prefault(f, ring_off(l, i), 8);
	/* Release: pairs with the acquire above, in the next owner. */
	__atomic_store_n(&g_extent[i], first_words(l), __ATOMIC_RELEASE);
	/* Relaxed: read by reset only, with one thread left (lock held or
	 * a new file). */
	for (unsigned n = __atomic_load_n(&g_extent_n, __ATOMIC_RELAXED);
	     n < i + 1 && !__atomic_compare_exchange_n(&g_extent_n, &n, i + 1,
	                                               0, __ATOMIC_RELAXED,
	                                               __ATOMIC_RELAXED);) {
	}
	return 0;
}

/* ring.h's grow: reserve ring w->ring up to at least `need` words, twice
 * what it had until that covers it (at most the ring). Signal-safe: one
 * madvise or fallocate; a failure warns once per file. */
static int grow(struct rte_ring_writer *w, uint64_t need)
{
	const struct rte_file *f = w->grow_ctx;
	const struct rte_layout *l = &f->l;
	unsigned i = w->ring;
	/* Relaxed: only this ring's owner (us) writes it. */
	uint64_t have = __atomic_load_n(&g_extent[i], __ATOMIC_RELAXED);
	uint64_t want = have ? have : first_words(l);
	int e;

	if (have > l->ring_size_elements)
		have = l->ring_size_elements;
	while (want < need && want < l->ring_size_elements)
		want *= 2;
	if (want > l->ring_size_elements)
		want = l->ring_size_elements;
	if (want > have) {
		e = rte_file_reserve(f, ring_off(l, i) + have * 8,
		                     (want - have) * 8);
		if (e) {
			rte_warn(&g_once_grow,
			         "cannot reserve more space for ring %u of %s: "
			         "%s; its events that do not fit the first %llu "
			         "KiB are dropped",
			         i, f->path, strerrordesc_np(e),
			         (unsigned long long)(have * 8 / 1024));
			return -1;
		}
		/* What is written next. */
		rte_file_prefault(f, ring_off(l, i) + have * 8, 8);
		/* Release: pairs with the acquire in rte_slots_bind() of the
		 * ring's next owner (and rereserve). */
		__atomic_store_n(&g_extent[i], want, __ATOMIC_RELEASE);
	}
	w->extent = want;
	return 0;
}

void rte_slots_bind(struct rte_ring_writer *w, const struct rte_file *f,
                    unsigned r)
{
	/* Acquire: pairs with the release in rte_slots_reserve() or grow(). */
	rte_ring_writer_set_grow(w, __atomic_load_n(&g_extent[r],
	                                            __ATOMIC_ACQUIRE),
	                         grow, f);
}

int rte_slots_claim(const struct rte_file *f)
{
	unsigned n = (unsigned)f->l.max_domains;

	for (unsigned i = 0; i < n; i++) {
		uint8_t free_ = SLOT_FREE;

		/* Relaxed peek first: skip taken slots without a locked op. */
		if (__atomic_load_n(&g_slots[i], __ATOMIC_RELAXED) != SLOT_FREE)
			continue;
		/* Acquire: pairs with the release in rte_slots_release(), so
		 * the previous owner's last tail store is visible before we
		 * read the ring header. */
		if (!__atomic_compare_exchange_n(&g_slots[i], &free_,
		                                 SLOT_TAKEN, 0, __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		if (rte_slots_reserve(f, i) == 0)
			return (int)i;
		/* Never hand this ring out again: its pages may be missing. */
		__atomic_store_n(&g_slots[i], SLOT_BROKEN, __ATOMIC_RELAXED);
		return -1;
	}
	return -2;
}

/* Reserve the pages under the name slot at file offset `off`: 1 MiB of
 * names is reserved page by page as names are written, so that a fork
 * child's new file costs a few pages, not a megabyte. */
static int reserve_name(const struct rte_file *f, uint64_t off)
{
	const struct rte_layout *l = &f->l;
	uint64_t first = l->custom_events_offset / NAME_PAGE;

	for (uint64_t pg = off / NAME_PAGE;
	     pg <= (off + RTE_NAME_SLOT_BYTES - 1) / NAME_PAGE; pg++) {
		uint64_t start = pg * NAME_PAGE, end = start + NAME_PAGE;
		int e;

		if (g_name_pages[pg - first])
			continue;
		if (end > l->total_size) /* never grow the file */
			end = l->total_size;
		if ((e = rte_file_reserve(f, start, end - start))) {
			rte_warn(&g_once_names,
			         "cannot reserve space for event names in %s: "
			         "%s; names are missing from the file",
			         f->path, strerrordesc_np(e));
			return -1;
		}
		rte_file_prefault(f, start, end - start); /* written next */
		g_name_pages[pg - first] = 1;
	}
	return 0;
}

int rte_slots_write_name(const struct rte_file *f, unsigned id,
                         const char *name)
{
	uint64_t off = f->l.custom_events_offset +
	               (uint64_t)id * RTE_NAME_SLOT_BYTES;

	if (reserve_name(f, off) < 0)
		return -1;
	strncpy(f->base + off, name, RTE_NAME_SLOT_BYTES - 1);
	return 0;
}

void rte_slots_set_owner(unsigned r, pthread_t th)
{
	g_owner[r] = th;
}

int rte_slots_owned_by(unsigned n, pthread_t th)
{
	for (unsigned i = 0; i < n; i++) {
		/* Acquire: pairs with the CAS in rte_slots_claim(); the owner
		 * is stored right after, a stale one only misnames. */
		if (__atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE) ==
		            SLOT_TAKEN &&
		    pthread_equal(g_owner[i], th))
			return (int)i;
	}
	return -1;
}

void rte_slots_free(unsigned r)
{
	/* Release: pairs with the acquire CAS in rte_slots_claim(). */
	__atomic_store_n(&g_slots[r], SLOT_FREE, __ATOMIC_RELEASE);
}

void rte_slots_release(unsigned r)
{
	/* Release: our last ring stores happen before the slot is seen free;
	 * pairs with the acquire CAS in rte_slots_claim(). */
	__atomic_store_n(&g_slots[r], SLOT_FREE, __ATOMIC_RELEASE);
	/* Release: pairs with the acquire load in rte_slots_epoch(). */
	__atomic_fetch_add(&g_epoch, 1, __ATOMIC_RELEASE);
}

void rte_slots_break(unsigned r)
{
	/* Relaxed: the file is not published yet, or the slot is ours. */
	__atomic_store_n(&g_slots[r], SLOT_BROKEN, __ATOMIC_RELAXED);
}

uint32_t rte_slots_epoch(void)
{
	/* Acquire: pairs with the release increment in rte_slots_release(). */
	return __atomic_load_n(&g_epoch, __ATOMIC_ACQUIRE);
}

int rte_slots_rereserve(const struct rte_file *f)
{
	const struct rte_layout *l = &f->l;
	uint64_t first = l->custom_events_offset / NAME_PAGE;

	for (unsigned i = 0; i < (unsigned)l->max_domains; i++) {
		/* Acquire: pairs with the release in rte_slots_reserve(). */
		uint64_t n = __atomic_load_n(&g_extent[i], __ATOMIC_ACQUIRE);

		if (n > l->ring_size_elements)
			n = l->ring_size_elements;
		if (n && rte_file_reserve(f, ring_off(l, i), n * 8))
			return -1;
	}
	for (uint64_t pg = 0; pg < sizeof(g_name_pages); pg++)
		if (g_name_pages[pg] &&
		    rte_file_reserve(f, (first + pg) * NAME_PAGE, NAME_PAGE))
			return -1;
	return 0;
}
