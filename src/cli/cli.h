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

/* Options of every subcommand; each accepts a subset (cli_opt_spec). */
typedef struct cli_args {
    const char *topo[CLI_MAX_TOPOS];
    int ntopo;
    const char *names;
    const char *op, *algo, *size, *sizes, *ranks, *mode, *routing, *format, *equalize, *out;
    bool links, help, dflt;
    const char *positional[4];
    int npositional;
} cli_args;

/* Parses argv[first..] accepting only the options in accepted (a
 * space-separated list like "--topo --op --links"). */
tc_status cli_parse(int argc, char **argv, int first, const char *cmd, const char *accepted, cli_args *a,
                    tc_err *err);

/* Builds a topology, applying --equalize injection=RATE if given. */
tc_status cli_topo(const char *spec, const char *equalize, tc_topo **out, tc_err *err);

/* Parses "1KiB:4GiB[:FACTOR]" or one size into a list (malloc'ed). */
tc_status cli_sizes(const char *s, double **out, int *n, tc_err *err);

int cli_exit(tc_status st, const tc_err *err);

int cmd_topo(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
