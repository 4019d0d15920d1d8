/*
 * topocc/report.h - results as tables, CSV and JSON (stable schema,
 * docs/SCHEMA.md). The library produces values; a client chooses the format.
 */
#ifndef TOPOCC_REPORT_H
#define TOPOCC_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "topocc/eval.h"

#define TC_SCHEMA_VERSION 1

typedef enum { TC_FMT_TABLE = 0, TC_FMT_CSV, TC_FMT_JSON } tc_format;
tc_status tc_format_parse(const char *s, tc_format *out, tc_err *err);

/* One result as a JSON object (new reference), with the topology's spec and
 * the routing used. */
json_t *tc_report_result_json(const tc_result *r, const tc_topo *t, tc_routing routing);

/* The hottest links of a flow run as a JSON array of {link, name, bytes,
 * utilisation}. */
json_t *tc_report_hot_links_json(const tc_topo *t, const tc_flow_result *fr);

/* Topology summary and optional link list as JSON. */
json_t *tc_report_topo_json(const tc_topo *t, bool links);

/* A text table: rows of cells, printed with aligned columns, or as CSV. */
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
void tc_table_print_csv(const tc_table *tb, FILE *f);

/* Writes a JSON value to path atomically (temporary file, then rename), or
 * to stdout when path is NULL. */
tc_status tc_write_json(json_t *v, const char *path, tc_err *err);

#endif
