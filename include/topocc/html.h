/*
 * topocc/html.h - a result as a directory a browser opens: index.html
 * (the scenario, every plot, the result's tables) beside SVG plots drawn
 * by gnuplot, each with its data as CSV. Everything is rendered from the
 * JSON documents (json_t) topocc writes, so a fresh run, a saved result
 * and a sweep's results file go through the same code (docs/REPORT.md).
 *
 * The page works offline from a file:// URL: relative links only, no
 * remote resource, its style and its one small script inline. Every file
 * is written under a temporary name and renamed (tc_atomic_open).
 */
#ifndef TOPOCC_HTML_H
#define TOPOCC_HTML_H

#include <stdio.h>
#include <jansson.h>
#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- plots (report/plot.c) ------------------------------------------------
 * A plot is its data: series of points (lines over a numeric x) or of
 * values per category (clustered bars). tc_plot_render writes NAME.csv
 * (the data, long format: one row per point, SI units in the column names)
 * and NAME.svg (gnuplot, run without a shell: the script on its standard
 * input, the SVG from its standard output). */
typedef enum { TC_PLOT_LINES = 0, TC_PLOT_BARS } tc_plot_kind;

typedef struct tc_plot_series {
    char *name;
    bool dashed;                 /* a bound, drawn dashed */
    int color;                   /* gnuplot line type (1, 2, ...): a bound takes its line's colour */
    size_t n, cap;
    double *x, *y, *lo, *hi;     /* bars: x is the category's index; lo, hi NaN: no error bar */
} tc_plot_series;

#define TC_PLOT_MAX_SERIES 40    /* drawn; the CSV holds every series */

typedef struct tc_plot {
    char name[96];               /* file stem: [a-z0-9-] */
    char title[256];
    tc_plot_kind kind;
    char xcol[160], ycol[160];   /* CSV columns, units in the names: bytes, time_s, busbw_Bps; bars: the category's */
    char xlabel[160], ylabel[160];
    bool logx, logy;             /* asked for; an axis is logarithmic only where every value on it is > 0 */
    char **cats;                 /* bars: the categories, in order */
    size_t ncats, capcats;
    tc_plot_series *series;
    size_t nseries, capseries;
    bool oom;
} tc_plot;

void tc_plot_init(tc_plot *p, tc_plot_kind kind, const char *name, const char *title, const char *xcol,
                  const char *ycol);
void tc_plot_free(tc_plot *p);
/* The series called name, added when new (NULL when out of memory). */
tc_plot_series *tc_plot_series_of(tc_plot *p, const char *name);
/* Bars: the index of the category label, added when new. */
size_t tc_plot_category(tc_plot *p, const char *label);
/* Adds a point; lo and hi NaN: no error bar. Points whose y is not finite
 * are kept out. */
void tc_plot_point(tc_plot *p, tc_plot_series *s, double x, double y, double lo, double hi);
/* Points with a finite y, over every series. */
size_t tc_plot_count(const tc_plot *p);
/* The data as CSV to f (tc_plot_render writes it to NAME.csv). */
void tc_plot_csv(const tc_plot *p, FILE *f);
/* The gnuplot script that draws p as SVG on standard output (malloc'ed;
 * NULL when out of memory); *width, *height: the picture's size. */
char *tc_plot_script(const tc_plot *p, int *width, int *height);
/* Writes DIR/NAME.csv and DIR/NAME.svg. A gnuplot that cannot be run or
 * fails is TC_EINTERNAL, its first line of errors in the message. */
tc_status tc_plot_render(const tc_plot *p, const char *dir, int *width, int *height, tc_err *err);
/* Fails (TC_EINTERNAL) when gnuplot cannot be run. */
tc_status tc_plot_check(tc_err *err);

/* ---- a sweep's results file (report/html_input.c) ------------------------
 * JSON Lines: a header {"topocc_sweep": 1, "hash", "points", "mode",
 * "axes", "scenario", "seeds", "seed", "topocc"}, then one line per
 * finished point {"point", "values", "seed", "elapsed_s", "scenario",
 * "result"} or failed point {"point", "values", "error"}, in any order. */
typedef struct tc_html_sweep {
    json_t *header;              /* owned */
    json_t **points;             /* one record per point, by point number (owned) */
    size_t npoints, cap;
    size_t lines;                /* point lines read */
    size_t duplicates;           /* further lines of a point: its first result is used, else its first error */
    size_t failed;               /* points with an error */
    size_t torn_line;            /* > 0: the last line (this number) was incomplete and left out */
} tc_html_sweep;

void tc_html_sweep_free(tc_html_sweep *sw);

/* ---- the report's input --------------------------------------------------- */
typedef enum { TC_HTML_SCENARIO = 0, TC_HTML_RESULT, TC_HTML_SWEEP } tc_html_kind;

typedef struct tc_html_input {
    tc_html_kind kind;
    json_t *doc;                 /* the scenario or the result (owned); NULL for a sweep */
    tc_html_sweep sweep;
    char command[32];            /* the command that produced it (a sweep: its points') */
    char name[300];              /* the file's name without its directories, for the page */
} tc_html_input;

/* Reads path ("-": standard input): a scenario (it has "command" and no
 * "schema_version"), a result (what a command writes with --format json:
 * "schema_version" and "scenario", and its command's results as
 * docs/SCHEMA.md gives them) or a sweep's results file. Anything else, and
 * a bad line of a sweep other than a torn last one, is TC_EINVAL naming the
 * line (and column), or what a result lacks. */
tc_status tc_html_input_read(const char *path, tc_html_input *in, tc_err *err);
void tc_html_input_free(tc_html_input *in);

/* ---- the report (report/html.c, report/html_figs.c) ---------------------- */
typedef struct tc_html_opts {
    const char *dir;             /* the report's directory (created with its missing parents) */
    const char *origin;          /* where the document comes from, one phrase ("the result in r.json") */
    const char *x, *y;           /* sweep only: an axis and a field (NULL: every numeric axis, the headline fields) */
} tc_html_opts;

#define TC_HTML_MAX_PLOTS 32

/* The plots of a result document (its "command", or its scenario's). */
size_t tc_html_doc_plots(const json_t *doc, const char *command, tc_plot *out, size_t max);
/* The plots of a sweep: o->x and o->y when given (TC_EINVAL naming an
 * unknown one with the nearest valid ones), else one per numeric axis and
 * headline field of the command (docs/REPORT.md). */
tc_status tc_html_sweep_plots(const tc_html_sweep *sw, const char *x, const char *y, tc_plot *out, size_t max,
                              size_t *n, tc_err *err);
/* The fields a sweep plots by default for command c's results ("results[].time_s", ...). */
const char *const *tc_html_headline_fields(const char *command);

/* Creates dir when missing and checks it takes a file. */
tc_status tc_html_prepare_dir(const char *dir, tc_err *err);
/* Writes the report of a result document into o->dir: the plots, the
 * document as result.json, index.html last. */
tc_status tc_html_report_doc(const json_t *doc, const char *command, const tc_html_opts *o, tc_err *err);
/* Writes the report of a sweep into o->dir. */
tc_status tc_html_report_sweep(const tc_html_sweep *sw, const tc_html_opts *o, tc_err *err);

/* s with &, <, >, " and ' escaped for HTML text and attributes. */
void tc_html_escape(const char *s, FILE *f);

#ifdef __cplusplus
}
#endif

#endif
