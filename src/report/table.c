/*
 * table.c - typed result tables: one value, two renderings. People read
 * "45.93ms" in the text table; programs read 0.04593 under "time_s" in the
 * CSV, in SI base units and shortest round-trip form.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/report.h"

void tc_rtable_init(tc_rtable *t, const char *name)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
}

int tc_rtable_col(tc_rtable *t, const char *csv, const char *label, tc_col_kind kind, const char *fmt, double scale)
{
    if (t->ncols >= TC_RTABLE_MAX_COLS || t->nrows) {
        t->oom = true;
        return TC_RTABLE_MAX_COLS - 1;
    }
    t->cols[t->ncols] = (tc_col){csv, label, kind, fmt, scale};
    return t->ncols++;
}

size_t tc_rtable_row(tc_rtable *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        tc_cell *c = realloc(t->cells, cap * (size_t)t->ncols * sizeof *c);
        if (!c) {
            t->oom = true;
            tc_oom_note();
            return t->nrows ? t->nrows - 1 : 0;
        }
        t->cells = c;
        t->cap = cap;
    }
    for (int i = 0; i < t->ncols; i++)
        t->cells[t->nrows * (size_t)t->ncols + (size_t)i] = (tc_cell){NAN, NULL};
    return t->nrows++;
}

static tc_cell *cell(const tc_rtable *t, size_t row, int col)
{
    if (!t->cells || row >= t->nrows || col < 0 || col >= t->ncols)
        return NULL;
    return &t->cells[row * (size_t)t->ncols + (size_t)col];
}

void tc_rtable_num(tc_rtable *t, size_t row, int col, double v)
{
    tc_cell *c = cell(t, row, col);
    if (c)
        c->v = v;
}

void tc_rtable_text(tc_rtable *t, size_t row, int col, const char *s)
{
    tc_cell *c = cell(t, row, col);
    if (!c)
        return;
    free(c->s);
    c->s = strdup(s ? s : "");
    if (!c->s) {
        t->oom = true;
        tc_oom_note();
    }
}

void tc_rtable_free(tc_rtable *t)
{
    for (size_t i = 0; t->cells && i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i].s);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

static const char *render(const tc_rtable *t, size_t row, int col, char *buf, size_t len)
{
    const tc_cell *c = cell(t, row, col);
    const tc_col *k = &t->cols[col];
    if (k->kind == TC_COL_TEXT)
        return c->s ? c->s : "";
    if (!isfinite(c->v))
        return "-";
    switch (k->kind) {
    case TC_COL_COUNT:
        snprintf(buf, len, "%.0f", c->v);
        return buf;
    case TC_COL_BYTES:
        return tc_fmt_size(c->v, buf, len);
    case TC_COL_SECONDS:
        return tc_fmt_time(c->v, buf, len);
    case TC_COL_BPS:
        return tc_fmt_rate(c->v, buf, len);
    default:
        break;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, len, k->fmt ? k->fmt : "%.4g", c->v * (k->scale != 0 ? k->scale : 1));
#pragma GCC diagnostic pop
    return buf;
}

void tc_rtable_print(const tc_rtable *t, FILE *f)
{
    size_t w[TC_RTABLE_MAX_COLS] = {0};
    char buf[128];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->cols[c].label);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t l = strlen(render(t, r, c, buf, sizeof buf));
            if (l > w[c])
                w[c] = l;
        }
    }
    size_t tot = 0;
    for (int c = 0; c < t->ncols; c++) {
        bool right = t->cols[c].kind != TC_COL_TEXT;
        const char *s = t->cols[c].label;
        if (c == t->ncols - 1 && !right)
            fprintf(f, "%s%s", c ? "  " : "", s);
        else
            fprintf(f, right ? "%s%*s" : "%s%-*s", c ? "  " : "", (int)w[c], s);
        tot += w[c] + (c ? 2 : 0);
    }
    fputc('\n', f);
    for (size_t i = 0; i < tot; i++)
        fputc('-', f);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            bool right = t->cols[c].kind != TC_COL_TEXT;
            const char *s = render(t, r, c, buf, sizeof buf);
            if (c == t->ncols - 1 && !right)
                fprintf(f, "%s%s", c ? "  " : "", s);
            else
                fprintf(f, right ? "%s%*s" : "%s%-*s", c ? "  " : "", (int)w[c], s);
        }
        fputc('\n', f);
    }
}

static void csv_text(const char *s, FILE *f)
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

void tc_rtable_print_csv(const tc_rtable *t, FILE *f)
{
    char buf[40];
    for (int c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        csv_text(t->cols[c].csv, f);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const tc_cell *x = cell(t, r, c);
            if (c)
                fputc(',', f);
            if (t->cols[c].kind == TC_COL_TEXT)
                csv_text(x->s ? x->s : "", f);
            else if (isfinite(x->v))
                fputs(tc_fmt_shortest(x->v, buf, sizeof buf), f);
        }
        fputc('\n', f);
    }
}

tc_status tc_rtable_write_csv(const tc_rtable *t, const char *path, tc_err *err)
{
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st)
        return st;
    tc_rtable_print_csv(t, af.f);
    return tc_atomic_commit(&af, err);
}
