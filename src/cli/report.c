/*
 * report.c - `topocc report FILE -o DIR`: a result as a directory a
 * browser opens (index.html, SVG plots, their data as CSV).
 *
 * FILE is a scenario (it is run, as `topocc replay` runs one), a result
 * any command wrote with --format json or --out (rendered, never run
 * again) or a sweep's results file (rendered). The rendering is the
 * library's (topocc/html.h); here are the flags, the run and the exit
 * codes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/progress.h"
#include "topocc/html.h"
#include "topocc/render.h"

typedef struct report_in {
    const char *file, *dir, *x, *y;
    bool quiet, help;
} report_in;

static const char *help =
    "usage: topocc report FILE -o DIR [--x PATH] [--y FIELD] [--quiet]\n"
    "\n"
    "Writes DIR/index.html: the scenario, plots drawn by gnuplot (DIR/*.svg, each\n"
    "with its data as DIR/*.csv) and the result's tables. The page uses relative\n"
    "links only and opens offline. FILE is one of:\n"
    "  a scenario (what --print-scenario writes): it is run, and its result shown\n"
    "    (and kept as DIR/result.json);\n"
    "  a result (what a command writes with --format json or --out FILE.json):\n"
    "    shown as it is, not run again;\n"
    "  a sweep's results file (JSON Lines): one plot per swept axis and result\n"
    "    field; --x PATH (one of the sweep's axes) and --y FIELD (a dotted path\n"
    "    into a point's result, [] for every row: results[].busbw_Bps) choose one.\n"
    "DIR and its missing parents are created, and removed again if the report fails.\n"
    "Plots per command: docs/REPORT.md.\n"
    "\n"
    "options:\n"
    "  -o DIR         the report's directory (required)\n"
    "  --x PATH       sweep: the axis along x\n"
    "  --y FIELD      sweep: the field along y\n"
    "  --quiet        print nothing on success, no progress\n"
    "\n"
    "example:\n"
    "  topocc collective --topo clos:down=8x8,up=1x8 --op allreduce --sizes 64KiB:64MiB \\\n"
    "      --algo all --out r.json\n"
    "  topocc report r.json -o report   (prints: report: report/index.html)\n";

static tc_status parse(report_in *in, int argc, char **argv, int first, tc_err *err)
{
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL, *name = a;
        char flag[16];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq) {
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a < 15 ? eq - a : 15), a);
            name = flag;
        }
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            in->help = true;
            continue;
        }
        if (strcmp(name, "--quiet") == 0) {
            if (eq)
                return tc_fail(err, TC_EINVAL, "option --quiet takes no value");
            in->quiet = true;
            continue;
        }
        if (strcmp(name, "-o") == 0)
            slot = &in->dir;
        else if (strcmp(name, "--x") == 0)
            slot = &in->x;
        else if (strcmp(name, "--y") == 0)
            slot = &in->y;
        else if (a[0] == '-' && a[1]) {
            return tc_fail(err, TC_EINVAL, "unknown option '%.64s' for 'topocc report': accepted are -o DIR, --x PATH, "
                                           "--y FIELD, --quiet, --help",
                           a);
        } else {
            if (in->file)
                return tc_fail(err, TC_EINVAL, "unexpected argument '%.64s': topocc report takes one FILE", a);
            if (!a[0])
                return tc_fail(err, TC_EINVAL, "an empty file name (see topocc report --help)");
            in->file = a;
            continue;
        }
        const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!v || !*v)
            return tc_fail(err, TC_EINVAL, "option %s needs a value (see topocc report --help)", name);
        if (*slot)
            return tc_fail(err, TC_EINVAL, "option %s given twice", name);
        *slot = v;
    }
    return TC_OK;
}

/* Whether FILE is one the report writes into DIR (index.html, result.json,
 * a plot's NAME.svg and NAME.csv), compared as files. */
static bool report_file(const char *file, const char *dir)
{
    const char *name = cli_name_in(file, dir);
    return name && (strcmp(name, "index.html") == 0 || strcmp(name, "result.json") == 0 ||
                    cli_ends_with(name, ".svg") || cli_ends_with(name, ".csv"));
}

/* A scenario run as `topocc replay` runs one; its document. A file the
 * run writes (flow.trace, iteration.timeline) that the report writes too
 * is refused before the run: the report would replace it. */
static tc_status run(const tc_html_input *hi, const char *path, const char *dir, bool quiet, json_t **doc,
                     tc_err *err)
{
    tc_command c;
    tc_status st = tc_command_parse(hi->command, &c, err);
    if (st)
        return st;
    tc_scenario *s = tc_scenario_new(c);
    if (!s)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    char what[300];
    snprintf(what, sizeof what, "scenario %.256s", path);
    if ((st = tc_scenario_read_json(s, hi->doc, what, err)) == TC_OK) {
        /* The scenario records the topocc that runs it. */
        snprintf(s->version, sizeof s->version, "%s", tc_version());
        snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
        if ((st = tc_scenario_resolve(s, err)) == TC_OK && (st = tc_scenario_check_given(s, err)) == TC_OK)
            st = tc_scenario_check_run(s, err);
    }
    const char *file = s->trace[0] ? s->trace : s->it_timeline[0] ? s->it_timeline : NULL;
    if (st == TC_OK && file && report_file(file, dir))
        st = tc_fail(err, TC_EINVAL, "%s %.160s is in the report's directory %.160s, whose index.html, result.json "
                                     "and plots (NAME.svg, NAME.csv) the report writes: give it another name or "
                                     "directory",
                     s->trace[0] ? "flow.trace" : "iteration.timeline", file, dir);
    if (st == TC_OK && c != TC_CMD_TOPO)
        st = tc_plot_check(err);
    if (st == TC_OK) {
        tc_run_opts ro = {0};
        ro.mem_limit_bytes = 0.75 * tc_mem_physical();
        cli_progress prog;
        ro.progress = cli_progress_cb;
        ro.progress_ud = &prog;
        tc_outcome o;
        if ((st = cli_progress_init(&prog, quiet, err)) == TC_OK) {
            st = tc_scenario_run(s, &ro, &o, err);
            cli_progress_done(&prog);
        }
        if (st == TC_OK) {
            *doc = tc_outcome_json(&o, s);
            tc_outcome_free(&o);
            if (!*doc)
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
        }
    }
    tc_scenario_free(s);
    return st;
}

/* The directories of DIR's path not there yet: each prefix ending before
 * a '/', then the whole name, as tc_make_dirs makes them. The ends of
 * the missing ones are kept, so that a failed report removes exactly the
 * directories it made. */
typedef struct made_dirs {
    char path[4096];
    size_t end[2048];
    size_t n;
} made_dirs;

static void note_missing(made_dirs *m, const char *dir)
{
    m->n = 0;
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof m->path)
        return; /* refused before anything is made */
    memcpy(m->path, dir, len + 1);
    for (size_t i = 1; i <= len && m->n < sizeof m->end / sizeof m->end[0]; i++) {
        if (i < len && (m->path[i] != '/' || m->path[i - 1] == '/'))
            continue;
        char keep = m->path[i];
        m->path[i] = '\0';
        struct stat sb;
        if (lstat(m->path, &sb) != 0)
            m->end[m->n++] = i;
        m->path[i] = keep;
    }
}

/* Removes the directories noted as missing, deepest first; rmdir removes
 * one only while it is empty (a run's output kept in it keeps it). */
static void remove_made(made_dirs *m)
{
    while (m->n > 0) {
        size_t i = m->end[--m->n];
        char keep = m->path[i];
        m->path[i] = '\0';
        rmdir(m->path);
        m->path[i] = keep;
    }
}

static tc_status report(const report_in *in, tc_err *err)
{
    if (!in->file)
        return tc_fail(err, TC_EINVAL, "report needs a file: topocc report FILE -o DIR (see topocc report --help)");
    if (!in->dir)
        return tc_fail(err, TC_EINVAL, "report needs its directory: topocc report %.200s -o DIR", in->file);
    tc_html_input hi;
    tc_status st = tc_html_input_read(in->file, &hi, err);
    if (st)
        return st;
    if (hi.kind != TC_HTML_SWEEP && (in->x || in->y)) {
        st = tc_fail(err, TC_EINVAL, "%s applies to a sweep's results file; %.200s is a %s", in->x ? "--x" : "--y",
                     in->file, hi.kind == TC_HTML_SCENARIO ? "scenario" : "result");
        tc_html_input_free(&hi);
        return st;
    }
    if (hi.sweep.torn_line)
        fprintf(stderr, "topocc: note: %.200s line %zu is incomplete (a sweep still running, or stopped while "
                        "writing): left out\n",
                in->file, hi.sweep.torn_line);
    char origin[400];
    tc_html_opts o = {.dir = in->dir, .origin = origin, .x = in->x, .y = in->y};
    static made_dirs made;
    note_missing(&made, in->dir);
    st = tc_html_prepare_dir(in->dir, err);
    if (st == TC_OK && hi.kind == TC_HTML_SWEEP) {
        snprintf(origin, sizeof origin, "the sweep's results in %.256s", hi.name);
        st = tc_html_report_sweep(&hi.sweep, &o, err);
    } else if (st == TC_OK && hi.kind == TC_HTML_RESULT) {
        snprintf(origin, sizeof origin, "the result in %.256s", hi.name);
        st = tc_html_report_doc(hi.doc, hi.command, &o, err);
    } else if (st == TC_OK) {
        json_t *doc = NULL;
        snprintf(origin, sizeof origin, "a run of the scenario %.256s", hi.name);
        if ((st = run(&hi, in->file, in->dir, in->quiet, &doc, err)) == TC_OK)
            st = tc_html_report_doc(doc, hi.command, &o, err);
        json_decref(doc);
    }
    tc_html_input_free(&hi);
    /* A run refused or failed leaves behind no directory it created: DIR
     * and the missing ones above it, each only while empty. */
    if (st)
        remove_made(&made);
    if (st == TC_OK && !in->quiet) {
        size_t n = strlen(in->dir);
        while (n > 1 && in->dir[n - 1] == '/')
            n--;
        printf("report: %.*s/index.html\n", (int)n, in->dir);
        if (fflush(stdout) != 0)
            st = tc_fail(err, TC_EINTERNAL, "cannot write to standard output");
    }
    return st;
}

int cli_report(int argc, char **argv, int first)
{
    report_in in = {0};
    tc_err err = {{0}};
    tc_status st = parse(&in, argc, argv, first, &err);
    if (st == TC_OK && in.help) {
        fputs(help, stdout);
        return 0;
    }
    if (st == TC_OK)
        st = report(&in, &err);
    return cli_exit(st, &err);
}
