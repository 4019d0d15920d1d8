/*
 * topocc/report.h - results as tables, CSV and JSON (stable schema,
 * docs/SCHEMA.md). The library produces values; a client chooses the format.
 */
#ifndef TOPOCC_REPORT_H
#define TOPOCC_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "topocc/eval.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_SCHEMA_VERSION 2

typedef enum { TC_FMT_TABLE = 0, TC_FMT_CSV, TC_FMT_JSON } tc_format;
tc_status tc_format_parse(const char *s, tc_format *out, tc_err *err);

/* One result as a JSON object (new reference), with the topology's spec and
 * the routing used. */
json_t *tc_report_result_json(const tc_result *r, const tc_topo *t, tc_routing routing);
/* A result's algbw_Bps or busbw_Bps (bw) as reported: NAN where the
 * result took no time (a collective of one rank moves nothing, so it has
 * no bandwidth), which the tables print as "-", CSV leaves empty and JSON
 * writes as null, as they do a ratio with nothing to divide by. */
double tc_report_bw(const tc_result *r, double bw);

struct tc_scenario;
/* The mode as a report names it: tc_mode_name, or, for a scenario whose
 * flow runs were bounded (flow.bounds), that their times are the lower
 * ends. */
const char *tc_report_mode_name(tc_mode m, const struct tc_scenario *s);

/* The hottest links of a flow run as a JSON array of {link, name, bytes,
 * utilisation}. */
json_t *tc_report_hot_links_json(const tc_topo *t, const tc_flow_result *fr);

/* Topology summary and optional link list as JSON. */
json_t *tc_report_topo_json(const tc_topo *t, bool links);

/* A text table of preformatted cells, printed with aligned columns (text
 * renderings only: CSV comes from typed tables, tc_rtable). */
typedef struct tc_table {
    int ncols;
    size_t nrows, cap;
    char **cells;          /* nrows * ncols strings (owned) */
    bool *right;           /* per column: right-aligned */
} tc_table;

tc_status tc_table_init(tc_table *tb, int ncols);
void tc_table_free(tc_table *tb);
/* Appends a row of ncols strings (copied). */
tc_status tc_table_row(tc_table *tb, const char *const *cells);
void tc_table_print(const tc_table *tb, FILE *f);

/* Writes a JSON value to path atomically (temporary file, then rename), or
 * to stdout when path is NULL (tc_json_write: shortest round-trip numbers). */
tc_status tc_write_json(json_t *v, const char *path, tc_err *err);

/* ---- typed result tables --------------------------------------------------
 * Every table a command prints is one of these: the text rendering formats
 * numbers for people ("45.93ms"), the CSV rendering writes them in SI base
 * units, shortest round-trip, under a column name that carries the unit
 * ("time_s", "busbw_Bps"). */
typedef enum {
    TC_COL_TEXT = 0,  /* a string */
    TC_COL_COUNT,     /* an integer count: "%.0f" */
    TC_COL_BYTES,     /* bytes: "64MiB" */
    TC_COL_SECONDS,   /* seconds: "12.3us" */
    TC_COL_BPS,       /* bytes per second: "50GB/s" */
    TC_COL_NUM        /* a plain number, printed with fmt (default "%.4g") */
} tc_col_kind;

typedef struct tc_col {
    const char *csv;    /* CSV column name with its unit, e.g. "time_s" */
    const char *label;  /* text header, e.g. "time" */
    tc_col_kind kind;
    const char *fmt;    /* TC_COL_NUM: printf format of the text rendering ("%.3fx", "%.1f%%") */
    double scale;       /* TC_COL_NUM: the text shows value * scale (0: 1) */
} tc_col;

typedef struct tc_cell {
    double v;           /* numeric cells; NAN: missing ("-" in text, empty in CSV) */
    char *s;            /* text cells (owned) */
} tc_cell;

#define TC_RTABLE_MAX_COLS 64
typedef struct tc_rtable {
    char name[48];      /* the table's name: DIR/<name>.csv */
    int ncols;
    tc_col cols[TC_RTABLE_MAX_COLS];
    size_t nrows, cap;
    tc_cell *cells;     /* nrows * ncols */
    bool oom;
} tc_rtable;

void tc_rtable_init(tc_rtable *t, const char *name);
/* Adds a column; returns its index. */
int tc_rtable_col(tc_rtable *t, const char *csv, const char *label, tc_col_kind kind, const char *fmt, double scale);
/* Appends an empty row (every cell missing); returns its index. */
size_t tc_rtable_row(tc_rtable *t);
void tc_rtable_num(tc_rtable *t, size_t row, int col, double v);
void tc_rtable_text(tc_rtable *t, size_t row, int col, const char *s);
void tc_rtable_free(tc_rtable *t);
/* Text rendering: header, a rule, aligned columns (text left, numbers right). */
void tc_rtable_print(const tc_rtable *t, FILE *f);
/* CSV rendering: header of csv names, numbers shortest round-trip in SI units. */
void tc_rtable_print_csv(const tc_rtable *t, FILE *f);
/* CSV into a file, atomically. */
tc_status tc_rtable_write_csv(const tc_rtable *t, const char *path, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
