/*
 * progress.h - the CLI's renderer of the library's progress reports
 * (tc_progress, called back from long runs; the library never prints).
 *
 * On a terminal (stderr is a tty): nothing in the first second (a short
 * run shows nothing), then one line redrawn in place with \r: what,
 * percentage and bar, done/total unit, rate, ETA, memory; cleared by
 * cli_progress_done so the results print on a clean line. Otherwise (a log
 * file, CI): nothing in the first 10 s, then one plain line every 10 s
 * (the environment's TOPOCC_PROGRESS_INTERVAL, in seconds, sets the
 * period; 0: a line at every report). Quiet: nothing at all. All state is
 * in the struct.
 *
 * Use:
 *   cli_progress prog;
 *   if ((st = cli_progress_init(&prog, quiet, err))) return st;
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
    double log_period;       /* without a terminal: seconds between lines */
} cli_progress;

/* Starts the clock; looks at whether stderr is a terminal and how wide,
 * and reads TOPOCC_PROGRESS_INTERVAL (a value that is not 0 or more
 * seconds is refused, TC_EINVAL). */
tc_status cli_progress_init(cli_progress *p, bool quiet, tc_err *err);
/* The log period that v (TOPOCC_PROGRESS_INTERVAL's value; NULL: unset)
 * gives: seconds as a number or with a unit (30, 30s, 500ms, 0). */
tc_status cli_progress_interval(const char *v, double *out, tc_err *err);
/* A tc_progress_fn: ud is the cli_progress. */
void cli_progress_cb(void *ud, const tc_progress *pr);
/* Clears the bar (terminal); the next report starts a new line. */
void cli_progress_done(cli_progress *p);

#endif
