/*
 * cli.h - the topocc command-line program: one client of the library.
 * Turns tc_status into exit codes (0 ok, 2 bad input, 1 internal) and
 * errors into one line on stderr.
 */
#ifndef TOPOCC_CLI_H
#define TOPOCC_CLI_H

#include "topocc/core.h"
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/report.h"
#include "topocc/topo.h"

#define CLI_MAX_TOPOS 16
#define CLI_MAX_DEGRADE 64

/* Options of every subcommand; each accepts a subset (cli_opt_spec). */
typedef struct cli_args {
    const char *topo[CLI_MAX_TOPOS];
    int ntopo;
    const char *names;
    const char *op, *algo, *size, *sizes, *ranks, *mode, *routing, *format, *equalize, *out;
    const char *rate_cap, *multipath, *deps, *event_budget, *trace, *jobs;
    const char *degrade[CLI_MAX_DEGRADE];
    int ndegrade;
    bool links, help, dflt;
    const char *positional[4];
    int npositional;
} cli_args;

/* Parses argv[first..] accepting only the options in accepted (a
 * space-separated list like "--topo --op --links"). */
tc_status cli_parse(int argc, char **argv, int first, const char *cmd, const char *accepted, cli_args *a,
                    tc_err *err);

/* Builds a topology, applying --equalize injection=RATE and every
 * --degrade link:ID=FACTOR given in a. */
tc_status cli_topo(const char *spec, const cli_args *a, tc_topo **out, tc_err *err);

/* The flow options of a (--rate-cap, --multipath, --deps, --event-budget,
 * --trace); they are refused unless the mode is flow. */
tc_status cli_flow_opts(const cli_args *a, tc_mode mode, tc_flow_opts *fo, tc_err *err);

/* Resolves the shared options of collective, compare and concurrent. */
tc_status cli_common(const cli_args *a, tc_coll_req *req, tc_eval_opts *o, tc_format *fmt, tc_err *err);

/* Parses "1KiB:4GiB[:FACTOR]" or one size into a list (malloc'ed). */
tc_status cli_sizes(const char *s, double **out, int *n, tc_err *err);

int cli_exit(tc_status st, const tc_err *err);

int cmd_topo(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_concurrent(int argc, char **argv);
int cmd_codec_bench(int argc, char **argv);
int cmd_train_accuracy(int argc, char **argv);
int cmd_compress(int argc, char **argv);

#endif
