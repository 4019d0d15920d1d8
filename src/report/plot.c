/*
 * plot.c - a plot as data, then as CSV and as an SVG drawn by gnuplot.
 *
 * A plot holds numbers in SI base units; the CSV beside each picture is
 * that data in long form (one row per point, the unit in the column name)
 * so the figure can be redrawn with any tool. gnuplot is run directly
 * (posix_spawnp, no shell): the script, data inline as datablocks so that
 * no file name is ever quoted into it, on its standard input from an
 * unnamed temporary file, the SVG from its standard output into the
 * temporary file of an atomic write, its messages into another unnamed
 * file, read back only when it fails. Linear axes of seconds, bytes and
 * bytes per second are scaled to one prefix (ms, MiB, GB/s) named in the
 * label; logarithmic ones print the prefix on each tick.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "topocc/html.h"

extern char **environ;

/* ---- the data ---- */

void tc_plot_init(tc_plot *p, tc_plot_kind kind, const char *name, const char *title, const char *xcol,
                  const char *ycol)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    /* The file's name: lower-case letters, digits and '-' only. */
    size_t k = 0;
    for (const char *c = name; *c && k + 1 < sizeof p->name; c++) {
        char ch = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
        p->name[k++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ? ch : '-';
    }
    if (!k)
        p->name[k++] = 'x';
    p->name[k] = '\0';
    snprintf(p->title, sizeof p->title, "%s", title);
    snprintf(p->xcol, sizeof p->xcol, "%s", xcol);
    snprintf(p->ycol, sizeof p->ycol, "%s", ycol);
    snprintf(p->xlabel, sizeof p->xlabel, "%s", xcol);
    snprintf(p->ylabel, sizeof p->ylabel, "%s", ycol);
}

void tc_plot_free(tc_plot *p)
{
    for (size_t i = 0; i < p->ncats; i++)
        free(p->cats[i]);
    free(p->cats);
    for (size_t i = 0; i < p->nseries; i++) {
        tc_plot_series *s = &p->series[i];
        free(s->name);
        free(s->x);
        free(s->y);
        free(s->lo);
        free(s->hi);
    }
    free(p->series);
    memset(p, 0, sizeof *p);
}

tc_plot_series *tc_plot_series_of(tc_plot *p, const char *name)
{
    for (size_t i = 0; i < p->nseries; i++)
        if (strcmp(p->series[i].name, name) == 0)
            return &p->series[i];
    if (p->nseries == p->capseries) {
        size_t cap = p->capseries ? 2 * p->capseries : 8;
        tc_plot_series *s = realloc(p->series, cap * sizeof *s);
        if (!s) {
            p->oom = true;
            return NULL;
        }
        p->series = s;
        p->capseries = cap;
    }
    tc_plot_series *s = &p->series[p->nseries];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    if (!s->name) {
        p->oom = true;
        return NULL;
    }
    s->color = (int)p->nseries + 1;
    p->nseries++;
    return s;
}

size_t tc_plot_category(tc_plot *p, const char *label)
{
    for (size_t i = 0; i < p->ncats; i++)
        if (strcmp(p->cats[i], label) == 0)
            return i;
    if (p->ncats == p->capcats) {
        size_t cap = p->capcats ? 2 * p->capcats : 8;
        char **c = realloc(p->cats, cap * sizeof *c);
        if (!c) {
            p->oom = true;
            return 0;
        }
        p->cats = c;
        p->capcats = cap;
    }
    p->cats[p->ncats] = strdup(label);
    if (!p->cats[p->ncats]) {
        p->oom = true;
        return 0;
    }
    return p->ncats++;
}

void tc_plot_point(tc_plot *p, tc_plot_series *s, double x, double y, double lo, double hi)
{
    if (!s || !isfinite(y) || !isfinite(x))
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *a[4] = {realloc(s->x, cap * sizeof(double)), NULL, NULL, NULL};
        if (a[0])
            s->x = a[0];
        a[1] = a[0] ? realloc(s->y, cap * sizeof(double)) : NULL;
        if (a[1])
            s->y = a[1];
        a[2] = a[1] ? realloc(s->lo, cap * sizeof(double)) : NULL;
        if (a[2])
            s->lo = a[2];
        a[3] = a[2] ? realloc(s->hi, cap * sizeof(double)) : NULL;
        if (a[3])
            s->hi = a[3];
        if (!a[3]) {
            p->oom = true;
            return;
        }
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->lo[s->n] = isfinite(lo) ? lo : NAN;
    s->hi[s->n] = isfinite(hi) ? hi : NAN;
    s->n++;
}

size_t tc_plot_count(const tc_plot *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nseries; i++)
        n += p->series[i].n;
    return n;
}

static bool has_errorbars(const tc_plot *p)
{
    for (size_t i = 0; i < p->nseries; i++)
        for (size_t k = 0; k < p->series[i].n; k++)
            if (isfinite(p->series[i].lo[k]) || isfinite(p->series[i].hi[k]))
                return true;
    return false;
}

/* ---- CSV ---- */

static void csv_field(const char *s, FILE *f)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(double v, FILE *f)
{
    char b[40];
    if (isfinite(v))
        fputs(tc_fmt_shortest(v, b, sizeof b), f);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* "time_to_accuracy_s" -> "time_to_accuracy_lo_s"; "ratio" -> "ratio_lo". */
static void bound_col(const char *col, const char *end, char *buf, size_t len)
{
    const char *units[] = {"_Bps", "_s", "_bytes"};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (ends_with(col, units[i]) && strlen(col) > strlen(units[i])) {
            snprintf(buf, len, "%.*s_%s%s", (int)(strlen(col) - strlen(units[i])), col, end, units[i]);
            return;
        }
    snprintf(buf, len, "%s_%s", col, end);
}

typedef struct pt {
    double x, y, lo, hi;
} pt;

static int by_x(const void *a, const void *b)
{
    double u = ((const pt *)a)->x, v = ((const pt *)b)->x;
    return u < v ? -1 : u > v;
}

/* The series' points sorted by x (lines), or as added (bars); NULL when
 * out of memory or empty. */
static pt *points_of(const tc_plot *p, const tc_plot_series *s)
{
    if (!s->n)
        return NULL;
    pt *a = malloc(s->n * sizeof *a);
    if (!a)
        return NULL;
    for (size_t k = 0; k < s->n; k++)
        a[k] = (pt){s->x[k], s->y[k], s->lo[k], s->hi[k]};
    if (p->kind == TC_PLOT_LINES)
        qsort(a, s->n, sizeof *a, by_x);
    return a;
}

void tc_plot_csv(const tc_plot *p, FILE *f)
{
    bool eb = has_errorbars(p);
    char lo[200], hi[200];
    bound_col(p->ycol, "lo", lo, sizeof lo);
    bound_col(p->ycol, "hi", hi, sizeof hi);
    if (p->kind == TC_PLOT_LINES) {
        fputs("series,", f);
        csv_field(p->xcol, f);
    } else {
        csv_field(p->xcol, f);
        fputs(",series", f);
    }
    fputc(',', f);
    csv_field(p->ycol, f);
    if (eb) {
        fputc(',', f);
        csv_field(lo, f);
        fputc(',', f);
        csv_field(hi, f);
    }
    fputc('\n', f);
    for (size_t i = 0; i < p->nseries; i++) {
        const tc_plot_series *s = &p->series[i];
        pt *a = points_of(p, s);
        for (size_t k = 0; a && k < s->n; k++) {
            if (p->kind == TC_PLOT_LINES) {
                csv_field(s->name, f);
                fputc(',', f);
                csv_num(a[k].x, f);
            } else {
                size_t c = (size_t)a[k].x;
                csv_field(c < p->ncats ? p->cats[c] : "", f);
                fputc(',', f);
                csv_field(s->name, f);
            }
            fputc(',', f);
            csv_num(a[k].y, f);
            if (eb) {
                fputc(',', f);
                csv_num(a[k].lo, f);
                fputc(',', f);
                csv_num(a[k].hi, f);
            }
            fputc('\n', f);
        }
        free(a);
    }
}

/* ---- the gnuplot script ---- */

typedef enum { U_NONE = 0, U_SECONDS, U_BPS, U_BYTES } unit_kind;

static unit_kind unit_of(const char *col)
{
    if (ends_with(col, "_Bps"))
        return U_BPS;
    if (ends_with(col, "_per_s"))
        return U_NONE;
    if (ends_with(col, "_s") || strcmp(col, "seconds") == 0)
        return U_SECONDS;
    if (strstr(col, "bytes") || ends_with(col, "sizes") || ends_with(col, "size"))
        return U_BYTES;
    return U_NONE;
}

/* A linear axis of unit u whose largest magnitude is m: the factor its
 * values are divided by and the unit named in its label. */
static double lin_scale(unit_kind u, double m, const char **name)
{
    static const struct {
        unit_kind u;
        double f;
        const char *name;
    } steps[] = {
        {U_SECONDS, 1, "s"},        {U_SECONDS, 1e-3, "ms"},        {U_SECONDS, 1e-6, "us"},
        {U_SECONDS, 1e-9, "ns"},    {U_BPS, 1e12, "TB/s"},          {U_BPS, 1e9, "GB/s"},
        {U_BPS, 1e6, "MB/s"},       {U_BPS, 1e3, "kB/s"},           {U_BPS, 1, "B/s"},
        {U_BYTES, 1099511627776.0, "TiB"}, {U_BYTES, 1073741824.0, "GiB"}, {U_BYTES, 1048576.0, "MiB"},
        {U_BYTES, 1024.0, "KiB"},   {U_BYTES, 1, "B"},
    };
    *name = NULL;
    const char *last = NULL;
    double lf = 1;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (steps[i].u != u)
            continue;
        last = steps[i].name;
        lf = steps[i].f;
        if (m >= steps[i].f) {
            *name = steps[i].name;
            return steps[i].f;
        }
    }
    *name = last;
    return last ? lf : 1;
}

/* A string for a single-quoted gnuplot string: ' doubled, control
 * characters as spaces, at most max bytes (cut at a character's start). */
static void gp_quote(const char *s, size_t max, FILE *f)
{
    fputc('\'', f);
    size_t n = strlen(s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\'')
            fputs("''", f);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    if (n < strlen(s))
        fputs("...", f);
    fputc('\'', f);
}

/* A category in a datablock: double-quoted, with no double quote inside. */
static void gp_label(const char *s, FILE *f)
{
    fputc('"', f);
    size_t n = strlen(s), max = 40;
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        fputc(c == '"' ? '\'' : c < 0x20 || c == 0x7f || c == '\\' ? ' ' : c, f);
    }
    if (n < strlen(s))
        fputs("...", f);
    fputc('"', f);
}

static void gp_num(double v, double scale, FILE *f)
{
    if (isfinite(v))
        fprintf(f, " %.10g", v / scale);
    else
        fputs(" ?", f);
}

typedef struct axis {
    bool log;
    double scale;
    char label[200];
} axis;

/* How an axis is drawn: logarithmic where asked and every value is > 0
 * and they span a decade; else linear, scaled to one unit prefix. */
static void axis_of(const char *col, const char *label, bool want_log, double lo, double hi, const char *which,
                    axis *a, FILE *f)
{
    unit_kind u = unit_of(col);
    a->scale = 1;
    a->log = want_log && lo > 0 && isfinite(lo) && isfinite(hi) && hi / lo >= 10;
    snprintf(a->label, sizeof a->label, "%s", label);
    if (a->log) {
        fprintf(f, "set logscale %s %d\n", which, u == U_BYTES ? 2 : 10);
        /* x: the data's own range, no empty decade at either end. */
        if (strcmp(which, "x") == 0)
            fputs("set autoscale xfix\n", f);
        if (u == U_BYTES)
            fprintf(f, "set format %s '%%.0b %%BB'\n", which);
        else if (u == U_SECONDS)
            fprintf(f, "set format %s '%%.0s %%cs'\n", which);
        else if (u == U_BPS)
            fprintf(f, "set format %s '%%.0s %%cB/s'\n", which);
        else
            fprintf(f, "set format %s '%%g'\n", which);
    } else if (u != U_NONE) {
        const char *name;
        double m = fmax(fabs(lo), fabs(hi));
        a->scale = lin_scale(u, isfinite(m) && m > 0 ? m : 1, &name);
        snprintf(a->label, sizeof a->label, "%s (%s)", label, name ? name : "");
        fprintf(f, "set format %s '%%g'\n", which);
    }
    fprintf(f, "set %slabel ", which);
    gp_quote(a->label, 120, f);
    fputc('\n', f);
}

static void range_of(const tc_plot *p, bool y, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < p->nseries; i++) {
        const tc_plot_series *s = &p->series[i];
        for (size_t k = 0; k < s->n; k++) {
            double v[3] = {y ? s->y[k] : s->x[k], y ? s->lo[k] : NAN, y ? s->hi[k] : NAN};
            for (int j = 0; j < 3; j++)
                if (isfinite(v[j])) {
                    *lo = fmin(*lo, v[j]);
                    *hi = fmax(*hi, v[j]);
                }
        }
    }
}

static const char *lc(int color, char *buf, size_t len)
{
    if (color <= 0)
        snprintf(buf, len, "lc rgb '#000000'");
    else
        snprintf(buf, len, "lc %d", color);
    return buf;
}

static void script_lines(const tc_plot *p, size_t ns, FILE *f)
{
    double xlo, xhi, ylo, yhi;
    range_of(p, false, &xlo, &xhi);
    range_of(p, true, &ylo, &yhi);
    axis ax, ay;
    axis_of(p->xcol, p->xlabel, p->logx, xlo, xhi, "x", &ax, f);
    axis_of(p->ycol, p->ylabel, p->logy, ylo, yhi, "y", &ay, f);
    fputs("set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n", f);
    if (!ay.log && ylo >= 0)
        fputs("set yrange [0:*]\n", f);
    fputs("set key below left Left reverse maxcols 1\n", f);
    for (size_t i = 0; i < ns; i++) {
        const tc_plot_series *s = &p->series[i];
        pt *a = points_of(p, s);
        fprintf(f, "$s%zu << EOD\n", i);
        for (size_t k = 0; a && k < s->n; k++) {
            gp_num(a[k].x, ax.scale, f);
            gp_num(a[k].y, ay.scale, f);
            gp_num(isfinite(a[k].lo) ? a[k].lo : a[k].y, ay.scale, f);
            gp_num(isfinite(a[k].hi) ? a[k].hi : a[k].y, ay.scale, f);
            fputc('\n', f);
        }
        fputs("EOD\n", f);
        free(a);
    }
    fputs("plot ", f);
    for (size_t i = 0; i < ns; i++) {
        const tc_plot_series *s = &p->series[i];
        bool eb = false;
        for (size_t k = 0; k < s->n; k++)
            eb |= isfinite(s->lo[k]) || isfinite(s->hi[k]);
        if (i)
            fputs(", \\\n     ", f);
        char c[64];
        lc(s->color, c, sizeof c);
        if (s->dashed)
            fprintf(f, "$s%zu using 1:2 with lines dt 2 lw 1.5 %s title ", i, c);
        else if (eb)
            fprintf(f, "$s%zu using 1:2:3:4 with yerrorlines lw 1.5 pt 7 ps 0.5 %s title ", i, c);
        else
            fprintf(f, "$s%zu using 1:2 with linespoints lw 1.5 pt 7 ps 0.5 %s title ", i, c);
        gp_quote(s->name, 100, f);
    }
    fputc('\n', f);
}

static void script_bars(const tc_plot *p, size_t ns, FILE *f)
{
    double ylo, yhi;
    range_of(p, true, &ylo, &yhi);
    axis ay;
    axis_of(p->ycol, p->ylabel, p->logy, ylo, yhi, "y", &ay, f);
    fputs("set xlabel ", f);
    gp_quote(p->xlabel, 120, f);
    fputc('\n', f);
    bool eb = has_errorbars(p);
    fputs("set style data histograms\n", f);
    fputs(eb ? "set style histogram errorbars gap 1 lw 1\n" : "set style histogram clustered gap 1\n", f);
    fputs("set style fill solid 0.8 border -1\nset boxwidth 0.9\nset grid ytics lc rgb '#dddddd'\n", f);
    if (!ay.log && ylo >= 0)
        fputs("set yrange [0:*]\n", f);
    size_t longest = 0;
    for (size_t c = 0; c < p->ncats; c++)
        longest = strlen(p->cats[c]) > longest ? strlen(p->cats[c]) : longest;
    if (p->ncats > 6 || longest > 12)
        fputs("set xtics rotate by 30 right\n", f);
    fputs(ns > 1 ? "set key below left Left reverse maxcols 1\n" : "unset key\n", f);
    fputs("$bars << EOD\n", f);
    for (size_t c = 0; c < p->ncats; c++) {
        gp_label(p->cats[c], f);
        for (size_t i = 0; i < ns; i++) {
            const tc_plot_series *s = &p->series[i];
            double y = NAN, lo = NAN, hi = NAN;
            for (size_t k = 0; k < s->n; k++)
                if ((size_t)s->x[k] == c) {
                    y = s->y[k];
                    lo = isfinite(s->lo[k]) ? s->lo[k] : y;
                    hi = isfinite(s->hi[k]) ? s->hi[k] : y;
                }
            gp_num(y, ay.scale, f);
            if (eb) {
                gp_num(lo, ay.scale, f);
                gp_num(hi, ay.scale, f);
            }
        }
        fputc('\n', f);
    }
    fputs("EOD\nplot ", f);
    for (size_t i = 0; i < ns; i++) {
        size_t col = 2 + i * (eb ? 3 : 1);
        char c[64];
        lc(p->series[i].color, c, sizeof c);
        if (i)
            fputs(", \\\n     ", f);
        if (eb)
            fprintf(f, "$bars using %zu:%zu:%zu%s %s title ", col, col + 1, col + 2, i ? "" : ":xtic(1)", c);
        else
            fprintf(f, "$bars using %zu%s %s title ", col, i ? "" : ":xtic(1)", c);
        gp_quote(p->series[i].name, 100, f);
    }
    fputc('\n', f);
}

char *tc_plot_script(const tc_plot *p, int *width, int *height)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    size_t ns = p->nseries < TC_PLOT_MAX_SERIES ? p->nseries : TC_PLOT_MAX_SERIES;
    size_t keys = p->kind == TC_PLOT_BARS && ns <= 1 ? 0 : ns;
    size_t longest = 0;
    for (size_t c = 0; p->kind == TC_PLOT_BARS && c < p->ncats; c++)
        longest = strlen(p->cats[c]) > longest ? strlen(p->cats[c]) : longest;
    *width = 800;
    *height = 440 + 17 * (int)keys + (p->ncats > 6 || longest > 12 ? 5 * (int)(longest < 40 ? longest : 40) : 0);
    fprintf(f, "reset\nset terminal svg size %d,%d fixed noenhanced font 'sans,11' background '#ffffff'\n", *width,
            *height);
    /* Ten distinct colours (colour 0: black, for bounds and targets). */
    static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    for (int i = 0; i < 10; i++)
        fprintf(f, "set linetype %d lc rgb '%s'\n", i + 1, colors[i]);
    fputs("set linetype cycle 10\nset encoding utf8\nset datafile missing '?'\nset title ", f);
    gp_quote(p->title, 200, f);
    fputc('\n', f);
    if (p->kind == TC_PLOT_LINES)
        script_lines(p, ns, f);
    else
        script_bars(p, ns, f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- running gnuplot ---- */

/* Runs gnuplot on script with its standard output on out_fd. */
static tc_status run_gnuplot(const char *script, int out_fd, const char *what, tc_err *err)
{
    FILE *in = tmpfile(), *msgs = tmpfile();
    tc_status st = TC_OK;
    if (!in || !msgs) {
        st = tc_fail(err, TC_EINTERNAL, "cannot create a temporary file for gnuplot: %s", strerror(errno));
        goto out;
    }
    if (fputs(script, in) == EOF || fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
        st = tc_fail(err, TC_EINTERNAL, "cannot write gnuplot's script: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto out;
    }
    posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fileno(msgs), 2);
    char *argv[] = {"gnuplot", NULL};
    pid_t pid;
    fflush(NULL);
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        st = tc_fail(err, TC_EINTERNAL, "cannot run gnuplot (Debian package gnuplot-nox): %s", strerror(rc));
        goto out;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            st = tc_fail(err, TC_EINTERNAL, "cannot wait for gnuplot: %s", strerror(errno));
            goto out;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        st = tc_fail(err, TC_EINTERNAL, "cannot run gnuplot (Debian package gnuplot-nox): not found");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* Its first line of errors says what. */
        char line[200] = "";
        rewind(msgs);
        while (fgets(line, sizeof line, msgs))
            if (strspn(line, " \t\r\n^") < strlen(line))
                break;
        line[strcspn(line, "\r\n")] = '\0';
        st = WIFEXITED(status) ? tc_fail(err, TC_EINTERNAL, "gnuplot failed on %s (exit %d): %s", what,
                                         WEXITSTATUS(status), line[0] ? line : "no message")
                               : tc_fail(err, TC_EINTERNAL, "gnuplot failed on %s (signal %d)", what,
                                         WTERMSIG(status));
    }
out:
    if (in)
        fclose(in);
    if (msgs)
        fclose(msgs);
    return st;
}

tc_status tc_plot_check(tc_err *err)
{
    FILE *null = fopen("/dev/null", "w");
    if (!null)
        return tc_fail(err, TC_EINTERNAL, "cannot open /dev/null: %s", strerror(errno));
    tc_status st = run_gnuplot("exit\n", fileno(null), "a test script", err);
    fclose(null);
    return st;
}

tc_status tc_plot_render(const tc_plot *p, const char *dir, int *width, int *height, tc_err *err)
{
    if (p->oom)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/%s.csv", dir, p->name);
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st)
        return st;
    tc_plot_csv(p, af.f);
    if ((st = tc_atomic_commit(&af, err)))
        return st;
    char *script = tc_plot_script(p, width, height);
    if (!script)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    snprintf(path, sizeof path, "%.4000s/%s.svg", dir, p->name);
    if ((st = tc_atomic_open(&af, path, err))) {
        free(script);
        return st;
    }
    char what[128];
    snprintf(what, sizeof what, "%s.svg", p->name);
    fflush(af.f);
    st = run_gnuplot(script, fileno(af.f), what, err);
    free(script);
    struct stat sb;
    if (st == TC_OK && (fstat(fileno(af.f), &sb) != 0 || sb.st_size == 0))
        st = tc_fail(err, TC_EINTERNAL, "gnuplot wrote no picture for %s", what);
    if (st) {
        tc_atomic_abort(&af);
        return st;
    }
    return tc_atomic_commit(&af, err);
}
