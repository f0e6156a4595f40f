/*
 * flamediff.h - `rte-read diff -f flamegraph BASE NEW`, alias `rte-read
 * flamediff BASE NEW` (flamediff.c): the differential flame graph of two
 * runs. Not thread-safe.
 */
#ifndef RD_FLAMEDIFF_H
#define RD_FLAMEDIFF_H

/* The subcommand (argv[0] is "diff" or "flamediff"; -f flamegraph is
 * accepted, no other format): 0, 1 (an input could not be read, or the
 * output written), 2 (usage). */
int rd_flamediff_main(int argc, char **argv);

/* 1 if a diff command line (argv[0] "diff") asks for -f flamegraph
 * (before any "--"): rte-read diff then hands it to rd_flamediff_main. */
int rd_flamediff_wanted(int argc, char **argv);

#endif
