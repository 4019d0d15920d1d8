/*
 * progress.h - the CLI's renderer of the library's progress reports
 * (tc_progress, called back from long runs; the library never prints).
 *
 * On a terminal (stderr is a tty): nothing in the first second (a short
 * run shows nothing), then one line redrawn in place with \r: what,
 * percentage and bar, done/total unit, rate, ETA, memory; cleared by
 * cli_progress_done so the results print on a clean line. Otherwise (a log
 * file, CI): nothing in the first 10 s, then one plain line every 10 s.
 * Quiet: nothing at all. All state is in the struct.
 *
 * Use:
 *   cli_progress prog;
 *   cli_progress_init(&prog, quiet);
 *   opts.progress = cli_progress_cb;
 *   opts.progress_ud = &prog;
 *   ... run ...
 *   cli_progress_done(&prog);
 */
#ifndef TOPOCC_CLI_PROGRESS_H
#define TOPOCC_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>
#include "topocc/core.h"

typedef struct cli_progress {
    bool quiet;
    bool tty;                /* stderr is a terminal: a bar redrawn in place */
    FILE *out;               /* stderr (tests redirect it) */
    int cols;                /* terminal width; 0: unknown (80 is assumed) */
    double (*clock)(void);   /* monotonic seconds (tests replace it) */
    double start;            /* when init ran */
    double last;             /* when the last line was drawn; < 0: none yet */
    int width;               /* characters of the bar on screen (to clear) */
} cli_progress;

/* Starts the clock; looks at whether stderr is a terminal and how wide. */
void cli_progress_init(cli_progress *p, bool quiet);
/* A tc_progress_fn: ud is the cli_progress. */
void cli_progress_cb(void *ud, const tc_progress *pr);
/* Clears the bar (terminal); the next report starts a new line. */
void cli_progress_done(cli_progress *p);

#endif
