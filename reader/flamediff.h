/*
 * flamediff.h - `rte-read flamediff BASE NEW` (flamediff.c): the
 * differential flame graph of two runs. Not thread-safe.
 */
#ifndef RD_FLAMEDIFF_H
#define RD_FLAMEDIFF_H

/* The subcommand (argv[0] is "flamediff"): 0, 1 (an input could not be
 * read, or the output written), 2 (usage). */
int rd_flamediff_main(int argc, char **argv);

#endif
