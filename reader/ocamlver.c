/*
 * ocamlver.c - the OCaml version table of each file (see ocamlver.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocamlver.h"
#include "vec.h"

static const struct rte_ocaml_table *forced;
static struct entry {
	const char *path;
	struct rte_ocaml_choice ch;
} *chosen;
static size_t nchosen, capchosen;

int rd_ocaml_force(const char *version)
{
	forced = rte_ocaml_table(version);
	return forced ? 0 : -1;
}

int rd_ocaml_choose(rte_cursor *c, const char *path)
{
	struct rte_ocaml_choice ch;

	if (forced) {
		memset(&ch, 0, sizeof ch);
		ch.table = forced;
		ch.sure = RTE_OCAML_FORCED;
		ch.same_from = ch.same_to = forced->version;
	} else {
		(void)rte_ocaml_detect(path, &ch); /* unreadable: the default */
	}
	rte_cursor_use_ocaml(c, ch.table);
	if (RD_VEC_ROOM(chosen, capchosen, nchosen, 8) < 0)
		return -1;
	chosen[nchosen].path = path;
	chosen[nchosen++].ch = ch;
	return 0;
}

const struct rte_ocaml_choice *rd_ocaml_choice_of(const char *path)
{
	static size_t hint; /* callers go through the files in order */

	for (size_t i = hint; i < nchosen && i < hint + 2; i++)
		if (chosen[i].path == path) {
			hint = i + 1;
			return &chosen[i].ch;
		}
	for (size_t i = nchosen; i-- > 0;)
		if (chosen[i].path == path || !strcmp(chosen[i].path, path))
			return &chosen[i].ch;
	return NULL;
}

int rd_ocaml_reuse(rte_cursor *c, const char *path)
{
	const struct rte_ocaml_choice *ch = rd_ocaml_choice_of(path);

	if (ch)
		rte_cursor_use_ocaml(c, ch->table);
	return 0;
}

void rd_ocaml_describe(const struct rte_ocaml_choice *ch, char *buf, size_t cap)
{
	char same[64] = "";

	if (strcmp(ch->same_from, ch->same_to))
		snprintf(same, sizeof same, "; %s to %s name these ids alike",
		         ch->same_from, ch->same_to);
	if (ch->sure == RTE_OCAML_FORCED)
		snprintf(buf, cap, "OCaml %s names (forced by --ocaml-version)",
		         ch->table->version);
	else
		snprintf(buf, cap, "OCaml %s names (%s: %llu of %llu phase nestings "
		         "explained, %llu by the best other table%s)",
		         ch->table->version, rte_ocaml_sure_name(ch->sure),
		         (unsigned long long)ch->explained,
		         (unsigned long long)ch->nestings,
		         (unsigned long long)ch->best_other, same);
}

void rd_ocaml_free(void)
{
	free(chosen);
	chosen = NULL;
	nchosen = capchosen = 0;
}
