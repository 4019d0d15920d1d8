/*
 * topocc/render.h - an outcome rendered: the text people read (headed by
 * the scenario that produced it), the primary table as CSV, the whole
 * result as JSON (the scenario in its "scenario" field), to stdout, a file
 * or a directory of tables.
 */
#ifndef TOPOCC_RENDER_H
#define TOPOCC_RENDER_H

#include <stdio.h>
#include "topocc/outcome.h"
#include "topocc/report.h"

/* The whole JSON document of an outcome (new reference). */
json_t *tc_outcome_json(const tc_outcome *o, const tc_scenario *s);
/* The outcome's typed tables, its primary table first; returns the count.
 * The caller frees each with tc_rtable_free. */
size_t tc_outcome_tables(const tc_outcome *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
#define TC_MAX_TABLES 8

/* The scenario as a few lines, one per section of its keys (the text
 * header of every result). */
void tc_scenario_header(const tc_scenario *s, FILE *f);

/* Writes the outcome to f in fmt: table (the scenario header, then the
 * command's text), csv (the primary table) or json. */
tc_status tc_outcome_write(const tc_outcome *o, const tc_scenario *s, tc_format fmt, FILE *f, tc_err *err);
/* Writes the outcome to path atomically: for *.csv the primary table,
 * with the scenario beside it in *.scenario.json; for *.txt the text;
 * anything else the whole result as JSON (fmt is not used). */
tc_status tc_outcome_write_file(const tc_outcome *o, const tc_scenario *s, const char *path, tc_format fmt,
                                tc_err *err);
/* Writes every table as DIR/<table>.csv and the scenario as
 * DIR/scenario.json (DIR is created if missing). */
tc_status tc_outcome_write_dir(const tc_outcome *o, const tc_scenario *s, const char *dir, tc_err *err);

#endif
