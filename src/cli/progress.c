/* progress.c - the renderer of tc_progress reports (see progress.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "cli/progress.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, bool quiet)
{
    p->quiet = quiet;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->drawn = false;
    p->start = p->last = now();
    p->width = 0;
}

static const char *dur(double s, char *buf, size_t len)
{
    if (s < 0 || s != s)
        snprintf(buf, len, "?");
    else if (s < 100)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 6000)
        snprintf(buf, len, "%.0fmin", s / 60);
    else
        snprintf(buf, len, "%.1fh", s / 3600);
    return buf;
}

void cli_progress_cb(void *ud, const tc_progress *pr)
{
    cli_progress *p = ud;
    if (!p || p->quiet)
        return;
    double t = now(), el = t - p->start;
    /* A terminal sees a bar after the first second; a log one line every 10 s. */
    if (p->tty ? (el < 1 || t - p->last < 0.1) : (t - p->last < 10))
        return;
    p->last = t;
    double f = pr->fraction >= 0 ? pr->fraction : pr->total > 0 ? pr->done / pr->total : -1;
    double rate = pr->rate > 0 ? pr->rate : el > 0 ? pr->done / el : 0;
    double eta = f > 0 && f < 1 ? el * (1 - f) / f : -1;
    char line[256], b1[16], b2[16], mem[32] = "";
    if (pr->mem_bytes > 0)
        snprintf(mem, sizeof mem, ", %.3g GB", pr->mem_bytes / 1e9);
    if (f >= 0) {
        char bar[21];
        int k = (int)(f * 20 + 0.5);
        for (int i = 0; i < 20; i++)
            bar[i] = i < k ? '#' : '.';
        bar[20] = '\0';
        snprintf(line, sizeof line, "%s [%s] %3.0f%% %.0f/%.0f %s, %.3g %s/s, ETA %s (%s elapsed)%s",
                 pr->what ? pr->what : "", bar, 100 * f, pr->done, pr->total, pr->unit ? pr->unit : "", rate,
                 pr->unit ? pr->unit : "", dur(eta, b1, sizeof b1), dur(el, b2, sizeof b2), mem);
    } else {
        snprintf(line, sizeof line, "%s: %.0f %s, %.3g %s/s (%s elapsed)%s", pr->what ? pr->what : "", pr->done,
                 pr->unit ? pr->unit : "", rate, pr->unit ? pr->unit : "", dur(el, b2, sizeof b2), mem);
    }
    if (p->tty) {
        int w = fprintf(stderr, "\r%s", line) - 1;
        for (int i = w; i < p->width; i++)
            fputc(' ', stderr);
        p->width = w;
        p->drawn = true;
    } else {
        fprintf(stderr, "topocc: %s\n", line);
    }
    fflush(stderr);
}

void cli_progress_done(cli_progress *p)
{
    if (p->drawn && p->tty) {
        fprintf(stderr, "\r%*s\r", p->width, "");
        fflush(stderr);
    }
    p->drawn = false;
}
