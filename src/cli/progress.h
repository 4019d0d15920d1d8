/* progress.h - progress reports of long runs rendered on stderr: a bar with
 * rate and ETA on a terminal (after the first second), one plain line every
 * 10 s otherwise, nothing when quiet. The library only calls back. */
#ifndef TOPOCC_CLI_PROGRESS_H
#define TOPOCC_CLI_PROGRESS_H

#include <stdbool.h>
#include "topocc/core.h"

typedef struct cli_progress {
    bool quiet, tty, drawn;
    double start, last;      /* monotonic seconds */
    int width;               /* of the last line drawn */
} cli_progress;

void cli_progress_init(cli_progress *p, bool quiet);
/* A tc_progress_fn: ud is the cli_progress. */
void cli_progress_cb(void *ud, const tc_progress *pr);
/* Clears the bar (terminal) at the end of the run. */
void cli_progress_done(cli_progress *p);

#endif
