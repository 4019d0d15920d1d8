/* progress.c - the renderer of tc_progress reports (progress.h). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "cli/progress.h"

/* A run shorter than this shows nothing on a terminal. */
#define TTY_QUIET_S 1.0
/* Redraws of the bar, at most this often (the library reports at ~4 Hz). */
#define TTY_PERIOD_S 0.2
/* Without a terminal: one line this often, the first after as long
 * (TOPOCC_PROGRESS_INTERVAL sets it). */
#define LOG_PERIOD_S 10.0
#define INTERVAL_ENV "TOPOCC_PROGRESS_INTERVAL"
/* The bar: 20 or 10 characters, where the line leaves that much room and
 * BAR_SLACK more (so it does not come and go as the figures lengthen). */
#define BAR_LEN 20
#define BAR_MIN 10
#define BAR_SLACK 6

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int term_cols(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

tc_status cli_progress_interval(const char *v, double *out, tc_err *err)
{
    *out = LOG_PERIOD_S;
    if (!v || !*v)
        return TC_OK; /* unset, or set empty */
    /* seconds, as a plain decimal number or with a unit (30, 2.5, 30s,
     * 500ms, 0); not strtod's blanks, signs, hex, inf or nan */
    char *end = NULL;
    double x = -1;
    if ((isdigit((unsigned char)v[0]) || v[0] == '.') && strspn(v, "0123456789.eE+-") == strlen(v))
        x = strtod(v, &end);
    tc_err e2;
    if (!(end && *end == '\0' && isfinite(x) && x >= 0 && x <= 1e6) && tc_parse_time(v, &x, &e2) != TC_OK)
        return tc_fail(err, TC_EINVAL,
                       "invalid %s '%s': expected the seconds between progress lines without a terminal, such as "
                       "10, 30s or 0 (every report)",
                       INTERVAL_ENV, v);
    *out = x;
    return TC_OK;
}

tc_status cli_progress_init(cli_progress *p, bool quiet, tc_err *err)
{
    memset(p, 0, sizeof *p);
    p->quiet = quiet;
    p->out = stderr;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->cols = p->tty ? term_cols() : 0;
    p->clock = mono_now;
    p->start = p->clock();
    p->last = -1;
    return cli_progress_interval(getenv(INTERVAL_ENV), &p->log_period, err);
}

/* 1234567 -> "1.23M": counts stay short whatever their size. */
static const char *fmt_count(double v, char *buf, size_t len)
{
    static const char sfx[] = " kMGTP";
    int i = 0;
    /* 999.7 would print as "1e+03" at 3 digits: it is 1.00k. */
    while (fabs(v) >= 999.5 && i < 5) {
        v /= 1000;
        i++;
    }
    if (i == 0 && fabs(v) < 10 && v != floor(v))
        snprintf(buf, len, "%.2g", v); /* a rate below 10: 0.12, 3.4 (not 0) */
    else if (i == 0)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3g%c", v, sfx[i]);
    return buf;
}

/* Seconds as "42s", "3m05s", "2h07m": an ETA needs no more precision. */
static const char *fmt_dur(double s, char *buf, size_t len)
{
    if (!(s >= 0) || !isfinite(s))
        snprintf(buf, len, "?");
    else if (s < 60)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else if (s < 360000)
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else
        snprintf(buf, len, "%.0fh", s / 3600);
    return buf;
}

/* Memory in decimal units, as --mem-limit reads them. */
static const char *fmt_mem(double b, char *buf, size_t len)
{
    if (b >= 1e9)
        snprintf(buf, len, "%.1f GB", b / 1e9);
    else
        snprintf(buf, len, "%.0f MB", b / 1e6);
    return buf;
}

/* What a line says: fraction (< 0: unknown), rate, ETA. */
typedef struct prog_view {
    const char *what, *unit;
    double f, rate, eta;
} prog_view;

static prog_view view(const cli_progress *p, const tc_progress *pr, double t)
{
    double el = t - p->start;
    prog_view v = {pr->what ? pr->what : "working", pr->unit ? pr->unit : "", -1, 0, -1};
    v.f = pr->fraction >= 0 ? pr->fraction : pr->total > 0 ? pr->done / pr->total : -1;
    if (v.f > 1)
        v.f = 1;
    v.rate = pr->rate > 0 ? pr->rate : el > 0 ? pr->done / el : 0;
    if (pr->total > 0 && v.rate > 0)
        v.eta = fmax(pr->total - pr->done, 0) / v.rate;
    else if (v.f > 0)
        v.eta = el * (1 - v.f) / v.f;
    return v;
}

/* The terminal line: "flow simulation 42% [#####.......] 1.21M/2.88M
 * transfers 3.1M/s ETA 12s mem 1.2 GB", within width characters (on 80
 * columns, without the bar), the part under way after it ("; allreduce
 * on B: 42% of flow simulation"; the bar is left out where it would not fit
 * with it, and the line is cut at the width). */
static void tty_line(const prog_view *v, const tc_progress *pr, int width, char *line, size_t len)
{
    char head[192], tail[160], d[16], tot[16], r[16], eta[16], mem[24];
    size_t n = (size_t)snprintf(head, sizeof head, "%s", v->what);
    if (v->f >= 0 && n < sizeof head)
        snprintf(head + n, sizeof head - n, " %.0f%%", 100 * v->f);
    if (pr->total > 0)
        n = (size_t)snprintf(tail, sizeof tail, " %s/%s %s", fmt_count(pr->done, d, sizeof d),
                             fmt_count(pr->total, tot, sizeof tot), v->unit);
    else
        n = (size_t)snprintf(tail, sizeof tail, " %s %s", fmt_count(pr->done, d, sizeof d), v->unit);
    if (n < sizeof tail && v->rate > 0)
        n += (size_t)snprintf(tail + n, sizeof tail - n, " %s/s", fmt_count(v->rate, r, sizeof r));
    if (n < sizeof tail && v->eta >= 0)
        n += (size_t)snprintf(tail + n, sizeof tail - n, " ETA %s", fmt_dur(v->eta, eta, sizeof eta));
    if (n < sizeof tail && pr->mem_bytes > 0)
        snprintf(tail + n, sizeof tail - n, " mem %s", fmt_mem(pr->mem_bytes, mem, sizeof mem));
    /* the part under way before the bar: the bar goes first */
    int room = width - (int)strlen(head) - (int)strlen(tail) - 3;
    if (pr->detail && pr->detail[0])
        room -= 2 + (int)strlen(pr->detail);
    int bar = v->f < 0 ? 0 : room >= BAR_LEN + BAR_SLACK ? BAR_LEN : room >= BAR_MIN + BAR_SLACK ? BAR_MIN : 0;
    char b[BAR_LEN + 1];
    for (int i = 0; i < bar; i++)
        b[i] = i < (int)(v->f * bar) ? '#' : '.';
    b[bar] = '\0';
    if (bar)
        n = (size_t)snprintf(line, len, "%s [%s]%s", head, b, tail);
    else
        n = (size_t)snprintf(line, len, "%s%s", head, tail);
    if (n < len && pr->detail && pr->detail[0])
        snprintf(line + n, len - n, "; %s", pr->detail);
}

/* The log line: "topocc: flow simulation: 42% (1.21M/2.88M transfers),
 * 3.1M transfers/s, ETA 12s", the part under way after it ("; allreduce
 * on B: 42% of flow simulation"). */
static void log_line(const prog_view *v, const tc_progress *pr, char *line, size_t len)
{
    char d[16], tot[16], r[16], eta[16];
    size_t n = (size_t)snprintf(line, len, "topocc: %s: ", v->what);
    if (v->f >= 0 && pr->total > 0)
        n += (size_t)snprintf(line + n, len - n, "%.0f%% (%s/%s%s%s)", 100 * v->f, fmt_count(pr->done, d, sizeof d),
                              fmt_count(pr->total, tot, sizeof tot), v->unit[0] ? " " : "", v->unit);
    else if (v->f >= 0)
        n += (size_t)snprintf(line + n, len - n, "%.0f%%", 100 * v->f);
    else
        n += (size_t)snprintf(line + n, len - n, "%s %s", fmt_count(pr->done, d, sizeof d), v->unit);
    if (n < len && v->rate > 0)
        n += (size_t)snprintf(line + n, len - n, ", %s %s/s", fmt_count(v->rate, r, sizeof r), v->unit);
    if (n < len && v->eta >= 0)
        n += (size_t)snprintf(line + n, len - n, ", ETA %s", fmt_dur(v->eta, eta, sizeof eta));
    if (n < len && pr->detail && pr->detail[0])
        snprintf(line + n, len - n, "; %s", pr->detail);
}

/* One column short of the width: writing the last column would wrap on
 * some terminals and \r would then redraw on the next line. */
static int tty_width(const cli_progress *p)
{
    return (p->cols > 1 ? p->cols : 80) - 1;
}

static void tty_draw(cli_progress *p, const char *line)
{
    int max = tty_width(p);
    int w = (int)strlen(line);
    if (w > max)
        w = max;
    fprintf(p->out, "\r%.*s", w, line);
    if (p->width > w)
        fprintf(p->out, "%*s", p->width - w, "");
    p->width = w;
}

void cli_progress_cb(void *ud, const tc_progress *pr)
{
    cli_progress *p = ud;
    if (!p || p->quiet || !pr)
        return;
    double t = p->clock(), since = p->last < 0 ? t - p->start : t - p->last;
    bool due = p->tty ? t - p->start >= TTY_QUIET_S && (p->last < 0 || since >= TTY_PERIOD_S)
                      : since >= p->log_period;
    if (!due)
        return;
    p->last = t;
    prog_view v = view(p, pr, t);
    char line[1024];
    if (p->tty) {
        tty_line(&v, pr, tty_width(p), line, sizeof line);
        tty_draw(p, line);
    } else {
        log_line(&v, pr, line, sizeof line);
        fprintf(p->out, "%s\n", line);
    }
    fflush(p->out);
}

void cli_progress_done(cli_progress *p)
{
    if (!p || p->quiet)
        return;
    if (p->tty && p->width > 0) {
        fprintf(p->out, "\r%*s\r", p->width, "");
        fflush(p->out);
    }
    p->width = 0;
}
