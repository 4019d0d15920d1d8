/*
 * cli.h - the topocc command-line program: one client of the library. It
 * parses flags through the library's option table into a scenario, calls
 * the one entry point and hands the outcome to the report layer. Only here
 * do statuses become exit codes (0 ok, 2 bad input, 1 internal failure)
 * and errors one line on stderr.
 */
#ifndef TOPOCC_CLI_H
#define TOPOCC_CLI_H

#include <stdio.h>
#include "topocc/core.h"
#include "topocc/scenario.h"

/* Runs `topocc CMD args...` (argv[first..] are the arguments). */
int cli_command(tc_command c, int argc, char **argv, int first);
/* Runs `topocc nccl-tests ...` (nccl_tests.c). */
int cli_nccl_tests(int argc, char **argv, int first);
/* Runs `topocc sweep ...` (sweep.c). */
int cli_sweep(int argc, char **argv, int first);
/* Runs `topocc replay FILE [output options]`. */
int cli_replay(int argc, char **argv, int first);
/* Runs `topocc report FILE -o DIR [--x PATH] [--y FIELD] [--quiet]` (report.c). */
int cli_report(int argc, char **argv, int first);
/* The help of command c: description, options from the table, example. */
void cli_help(tc_command c, FILE *f);

int cli_exit(tc_status st, const tc_err *err);
/* Refuses an output that cannot be written before the run, not after:
 * path's directory takes a file (nothing is left behind). */
tc_status cli_check_writable(const char *path, tc_err *err);
/* The directory of --out-dir exists (or is made) and takes a file. */
tc_status cli_check_dir(const char *dir, tc_err *err);
/* Whether FILE is one that --out-dir DIR writes (DIR/scenario.json,
 * DIR/TABLE.csv), compared as files. */
bool cli_in_out_dir(const char *file, const char *out_dir);
/* FILE's name if its directory is DIR (compared as files), else NULL. */
const char *cli_name_in(const char *file, const char *dir);
bool cli_ends_with(const char *name, const char *suffix);
/* --out naming a file that --out-dir writes: refused (either may be NULL). */
tc_status cli_check_out_beside_dir(const char *out, const char *out_dir, tc_err *err);

#endif
