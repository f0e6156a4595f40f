/*
 * diff.h - `rte-read diff BASE NEW`: compare two runs (ring files,
 * directories or summary-json files) name by name, and gate on
 * thresholds (--fail-if). See doc/rte-read.1, section DIFF.
 *
 * Not thread-safe; runs `rte-read -f summary-json` (itself, through
 * /proc/self/exe) for an input that is not a summary-json file.
 */
#ifndef RD_DIFF_H
#define RD_DIFF_H

/* argv[0] is "diff". Returns the exit status: 0 no threshold crossed,
 * 1 one was, 2 usage error or an input that cannot be read. */
int rd_diff_main(int argc, char **argv);

#endif
