/* progress.c - relaying a part's progress reports as its run's
 * (tc_progress_relay, topocc/core.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "topocc/core.h"

double tc_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tc_progress_relay_start(tc_progress_relay *r, tc_progress_fn fn, void *ud, const char *what, const char *unit,
                             double total)
{
    memset(r, 0, sizeof *r);
    r->fn = fn;
    r->ud = ud;
    r->what = what;
    r->unit = unit;
    r->total = total;
    r->t0 = tc_mono_now();
}

void tc_progress_relay_part(tc_progress_relay *r, double done, const char *fmt, ...)
{
    r->done = done;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->part, sizeof r->part, fmt, ap);
    va_end(ap);
}

/* The run's own report: its count, and detail (NULL: none). */
static void own(const tc_progress_relay *r, double mem, const char *detail)
{
    double el = tc_mono_now() - r->t0;
    tc_progress p = {.what = r->what,
                     .fraction = r->total > 0 ? r->done / r->total : -1,
                     .done = r->done,
                     .total = r->total,
                     .unit = r->unit,
                     .rate = el > 0 ? r->done / el : 0,
                     .mem_bytes = mem,
                     .detail = detail};
    r->fn(r->ud, &p);
}

void tc_progress_relay_cb(void *ud, const tc_progress *p)
{
    tc_progress_relay *r = ud;
    if (!r || !r->fn || !p)
        return;
    if (!r->unit) {
        tc_progress q = *p;
        q.what = r->what;
        r->fn(r->ud, &q);
        return;
    }
    /* "allreduce on B: 42% of flow simulation of ring at 1GiB": the
     * figure early, where a terminal's width cuts the line */
    double f = p->fraction >= 0 ? p->fraction : p->total > 0 ? p->done / p->total : -1;
    const char *w = p->what ? p->what : "working", *sep = r->part[0] ? ": " : "";
    if (f >= 0)
        snprintf(r->buf, sizeof r->buf, "%s%s%.0f%% of %s", r->part, sep, 100 * (f > 1 ? 1 : f), w);
    else
        snprintf(r->buf, sizeof r->buf, "%s%s%s, %.0f %s", r->part, sep, w, p->done, p->unit ? p->unit : "");
    own(r, p->mem_bytes, r->buf);
}

void tc_progress_relay_report(tc_progress_relay *r, double done)
{
    if (!r || !r->fn)
        return;
    r->done = done;
    r->part[0] = '\0';
    own(r, 0, NULL);
}
