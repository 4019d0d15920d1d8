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

#ifdef __cplusplus
extern "C" {
#endif

/* ---- each command's renderings (report/rep_net.c, report/rep_train.c) ----
 * tc_NAME_json: the whole document (new reference), "scenario" included;
 * the train-accuracy document is the accuracy file (compress reads it back)
 * with topocc's schema_version, "command" and "scenario".
 * tc_NAME_tables: fills up to max typed tables, the primary first (the
 * caller frees each with tc_rtable_free); returns the count.
 * tc_NAME_print: the text for people. */
json_t *tc_topo_json(const tc_topo_out *o, const tc_scenario *s);
size_t tc_topo_tables(const tc_topo_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_topo_print(const tc_topo_out *o, const tc_scenario *s, FILE *f);
json_t *tc_collective_json(const tc_collective_out *o, const tc_scenario *s);
size_t tc_collective_tables(const tc_collective_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_collective_print(const tc_collective_out *o, const tc_scenario *s, FILE *f);
/* collective's sizes table ("sizes": tc_sizes_table's columns, the groups'
 * fastest after them), whatever the number of sizes: what its tables hold
 * from two sizes on, and nccl-tests' --format csv for any number. */
void tc_collective_sizes_table(const tc_collective_out *o, tc_rtable *t);
/* The size-sweep table in the nccl-tests column order (size, count, type,
 * redop, root, time, algbw, busbw), then algo and the lower bound. Adds its
 * columns when t has none, then appends one row per result. */
void tc_sizes_table(tc_rtable *t, const tc_result *res, size_t n, uint32_t root, const char *dtype);
json_t *tc_compare_json(const tc_compare_out *o, const tc_scenario *s);
size_t tc_compare_tables(const tc_compare_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_compare_print(const tc_compare_out *o, const tc_scenario *s, FILE *f);
json_t *tc_concurrent_json(const tc_concurrent_out *o, const tc_scenario *s);
size_t tc_concurrent_tables(const tc_concurrent_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_concurrent_print(const tc_concurrent_out *o, const tc_scenario *s, FILE *f);
json_t *tc_failures_json(const tc_failures_out *o, const tc_scenario *s);
size_t tc_failures_tables(const tc_failures_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_failures_print(const tc_failures_out *o, const tc_scenario *s, FILE *f);
json_t *tc_cluster_json(const tc_cluster_run_out *o, const tc_scenario *s);
size_t tc_cluster_tables(const tc_cluster_run_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_cluster_print(const tc_cluster_run_out *o, const tc_scenario *s, FILE *f);
json_t *tc_trainiter_json(const tc_trainiter_out *o, const tc_scenario *s);
size_t tc_trainiter_tables(const tc_trainiter_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_trainiter_print(const tc_trainiter_out *o, const tc_scenario *s, FILE *f);
/* The hottest links of a flow run as a table "hot_links": link, name,
 * bytes, utilisation. */
void tc_hot_links_table(tc_rtable *t, const tc_topo *topo, const tc_flow_result *fr);
json_t *tc_codec_bench_json(const tc_codec_bench_out *out, const tc_scenario *s);
size_t tc_codec_bench_tables(const tc_codec_bench_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_codec_bench_print(const tc_codec_bench_out *out, const tc_scenario *s, FILE *f);
json_t *tc_train_accuracy_json(const tc_train_accuracy_out *out, const tc_scenario *s);
size_t tc_train_accuracy_tables(const tc_train_accuracy_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_train_accuracy_print(const tc_train_accuracy_out *out, const tc_scenario *s, FILE *f);
json_t *tc_compress_json(const tc_compress_out *out, const tc_scenario *s);
size_t tc_compress_tables(const tc_compress_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max);
void tc_compress_print(const tc_compress_out *out, const tc_scenario *s, FILE *f);

/* Adds "scenario": the canonical scenario s (when s is given) to o. */
void tc_report_add_scenario(json_t *o, const tc_scenario *s);

/* The whole JSON document of an outcome (new reference; NULL when out of
 * memory: a document with a key left out is none). */
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
/* The scenario file written beside a CSV result at path: X.csv -> X.scenario.json. */
void tc_outcome_csv_sidecar(const char *path, char *buf, size_t len);
/* Writes every table as DIR/<table>.csv and the scenario as
 * DIR/scenario.json (DIR is created if missing). */
tc_status tc_outcome_write_dir(const tc_outcome *o, const tc_scenario *s, const char *dir, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
