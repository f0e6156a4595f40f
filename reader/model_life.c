/*
 * model_life.c - the run model's life (model.h): started, a process
 * forgotten once written out, finished; and the reading of an entry's
 * durations for the renderers. The accounting is model.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "gcstats.h"
#include "model.h"
#include "ptree.h"
#include "profile.h"

int rd_model_init(struct rd_model *M, unsigned what)
{
	memset(M, 0, sizeof *M);
	M->what = what;
	if (what & RD_MODEL_GC)
		M->gc = rd_gc_new(); /* NULL: without the GC figures */
	if (what & RD_MODEL_PROF)
		M->prof = rd_prof_new(); /* NULL: without the profiles */
	return 0;
}

static void free_psum(struct rd_proc *pr)
{
	struct rd_psum *ps = pr->model;

	for (size_t k = 0; ps && k < ps->n; k++) {
		free(ps->e[k]->rv);
		free(ps->e[k]->name);
		free(ps->e[k]->h);
		free(ps->e[k]);
	}
	if (ps)
		free(ps->e);
	free(ps);
	pr->model = NULL;
}

void rd_model_fini(struct rd_model *M, struct rd_procs *P)
{
	for (unsigned i = 0; P && i < P->nsrc; i++) {
		free(P->src[i].model);
		P->src[i].model = NULL;
	}
	for (unsigned i = 0; P && i < P->nproc; i++)
		free_psum(P->proc[i]);
	rd_gc_free(M->gc);
	rd_prof_free(M->prof);
	free(M->view);
	memset(M, 0, sizeof *M);
}

void rd_model_forget_proc(struct rd_model *M, struct rd_ctx *c, struct rd_proc *pr)
{
	struct rd_procs *P = c->procs;

	free_psum(pr);
	for (unsigned i = pr->first_src; i != RD_NO_SRC; i = P->src[i].next_src) {
		free(P->src[i].model);
		P->src[i].model = NULL;
		rd_gc_forget_file(M->gc, i);
		rd_src_forget_threads(&P->src[i]); /* figures kept */
		if (c->merge)
			rd_merge_close_source(c->merge, i);
	}
}

/* The histogram of duration entry e, to read until rd_entry_unview(): its own,
 * or M->view filled with its few values. NULL if out of memory. */
const struct rd_hist *rd_entry_view(struct rd_model *M, const struct rd_entry *e)
{
	if (e->h)
		return e->h;
	if (!M->view && !(M->view = rd_hist_new())) {
		M->oom = 1;
		return NULL;
	}
	for (unsigned i = 0; i < e->ndur; i++)
		rd_hist_add(M->view, e->dur[i]);
	return M->view;
}

/* Empty M->view again after rd_entry_view(e): only the buckets e filled. */
void rd_entry_unview(struct rd_model *M, const struct rd_entry *e)
{
	if (e->h || !M->view)
		return;
	for (unsigned i = 0; i < e->ndur; i++)
		M->view->b[rd_hist_index(e->dur[i])] = 0;
	M->view->count = M->view->sum = M->view->min = M->view->max = 0;
}

/* The total of duration entry e (saturated as the histogram's). */
uint64_t rd_entry_dur_sum(const struct rd_entry *e)
{
	uint64_t t = 0;

	if (e->h)
		return e->h->sum;
	for (unsigned i = 0; i < e->ndur; i++)
		rd_dur_sum_add(&t, e->dur[i]);
	return t;
}

int rd_entry_is_dur(const struct rd_entry *e)
{
	return e->fam == F_PHASE || e->fam == F_SPAN;
}
