/*
 * driver.c - every subcommand through one path: flags (the library's
 * option table) and an optional scenario file become one resolved
 * scenario; the library runs it; the report layer writes the outcome.
 * Nothing here decides a number or formats a result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/progress.h"
#include "topocc/render.h"
#include "topocc/sweep.h"

#define MAX_GIVEN 64
#define MAX_VALUES 64

typedef struct given {
    const tc_option *opt;
    const char *vals[MAX_VALUES];
    size_t n;
} given;

typedef struct cli_in {
    tc_command cmd;
    bool replay;
    given g[MAX_GIVEN];
    size_t ng;
    const char *positional;
    int preset_at[MAX_VALUES]; /* each --preset: the --topo values before it on the command line */
    int npreset_at, ntopo_seen;
    const char *format, *out, *out_dir, *scenario, *mem_limit;
    bool quiet, print_scenario, help, dflt;
} cli_in;

int cli_exit(tc_status st, const tc_err *err)
{
    if (st == TC_OK)
        return 0;
    fprintf(stderr, "topocc: %s\n", err && err->msg[0] ? err->msg : "internal error");
    return st == TC_EINVAL ? 2 : 1;
}

/* Replay takes only the output and general options that do not describe a
 * scenario. */
static const tc_option *find_option(const cli_in *in, const char *flag)
{
    if (!in->replay)
        return tc_option_find(flag, in->cmd);
    const tc_option *o = tc_option_find(flag, TC_CMD_COLLECTIVE);
    if (o && !o->key && strcmp(flag, "--scenario") != 0 && strcmp(flag, "--default") != 0)
        return o;
    return NULL;
}

static tc_status unknown_option(const cli_in *in, const char *name, tc_err *err)
{
    const char *what = in->replay ? "replay" : tc_command_name(in->cmd);
    char who[256];
    tc_option_owners(name, who, sizeof who);
    if (who[0] && !in->replay)
        return tc_fail(err, TC_EINVAL, "option %s does not apply to 'topocc %s' (it belongs to %s)", name, what, who);
    if (in->replay)
        return tc_fail(err, TC_EINVAL, "unknown option '%s' for 'topocc replay': accepted are --format, --out, "
                                       "--out-dir, --quiet, --print-scenario, --mem-limit, --help",
                       name);
    return tc_fail(err, TC_EINVAL, "unknown option '%s' for 'topocc %s' (did you mean %s? see topocc %s --help)", name,
                   what, tc_option_nearest(name, in->cmd), what);
}

static tc_status record(cli_in *in, const tc_option *o, const char *val, tc_err *err)
{
    const char *f = o->flag;
    if (!o->key) {
        const char **slot = strcmp(f, "--format") == 0     ? &in->format
                            : strcmp(f, "--out") == 0      ? &in->out
                            : strcmp(f, "--out-dir") == 0  ? &in->out_dir
                            : strcmp(f, "--scenario") == 0 ? &in->scenario
                            : strcmp(f, "--mem-limit") == 0 ? &in->mem_limit
                                                            : NULL;
        bool *flag = strcmp(f, "--quiet") == 0            ? &in->quiet
                     : strcmp(f, "--print-scenario") == 0 ? &in->print_scenario
                     : strcmp(f, "--help") == 0           ? &in->help
                     : strcmp(f, "--default") == 0        ? &in->dflt
                                                          : NULL;
        if ((slot && *slot) || (flag && *flag))
            return tc_fail(err, TC_EINVAL, "option %s given twice", f);
        if (slot)
            *slot = val;
        if (flag)
            *flag = true;
        return TC_OK;
    }
    if (strcmp(f, "--topo") == 0)
        in->ntopo_seen++;
    else if (strcmp(f, "--preset") == 0 && in->npreset_at < MAX_VALUES)
        in->preset_at[in->npreset_at++] = in->ntopo_seen;
    for (size_t i = 0; i < in->ng; i++)
        if (in->g[i].opt == o) {
            if (!o->list)
                return tc_fail(err, TC_EINVAL, "option %s given twice (it takes one value)", f);
            if (in->g[i].n == MAX_VALUES)
                return tc_fail(err, TC_EINVAL, "option %s given more than %d times", f, MAX_VALUES);
            in->g[i].vals[in->g[i].n++] = val;
            return TC_OK;
        }
    if (in->ng == MAX_GIVEN)
        return tc_fail(err, TC_EINVAL, "too many options");
    in->g[in->ng].opt = o;
    in->g[in->ng].vals[0] = val;
    in->g[in->ng++].n = 1;
    return TC_OK;
}

static tc_status parse(cli_in *in, int argc, char **argv, int first, tc_err *err)
{
    const char *what = in->replay ? "replay" : tc_command_name(in->cmd);
    for (int i = first; i < argc; i++) {
        const char *arg = strcmp(argv[i], "-h") == 0 ? "--help" : argv[i];
        if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
            if (in->positional || (!in->replay && in->cmd != TC_CMD_TOPO) || !arg[0])
                return tc_fail(err, TC_EINVAL, "unexpected argument '%s' (see topocc %s --help)", arg, what);
            in->positional = arg;
            continue;
        }
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), arg);
        const tc_option *o = find_option(in, name);
        if (!o)
            return unknown_option(in, name, err);
        const char *val = NULL;
        if (!o->metavar) {
            if (eq)
                return tc_fail(err, TC_EINVAL, "option %s takes no value", name);
        } else {
            val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!val || !*val)
                return tc_fail(err, TC_EINVAL, "option %s needs a value: %s %s (see topocc %s --help)", name, name,
                               o->metavar, what);
        }
        tc_status st = record(in, o, val, err);
        if (st)
            return st;
    }
    return TC_OK;
}

static tc_status set_flags(tc_scenario *s, const cli_in *in, tc_err *err)
{
    for (size_t i = 0; i < in->ng; i++) {
        tc_status st = tc_scenario_set_flag(s, in->g[i].opt->flag, in->g[i].vals, in->g[i].n, err);
        if (st)
            return st;
    }
    /* --topo and --preset both given: the topologies in the command line's
     * order (a preset otherwise comes after network.topo's) */
    if (in->ntopo_seen > 0 && in->npreset_at > 0 && in->npreset_at == s->npreset && in->ntopo_seen == s->ntopo) {
        for (int i = 0; i < in->npreset_at; i++)
            s->preset_at[i] = in->preset_at[i];
        s->npreset_at = in->npreset_at;
    }
    return TC_OK;
}

/* compare --default: the built-in scenario of `make run`. */
static tc_status apply_default(tc_scenario *s, const cli_in *in, tc_err *err)
{
    static const char *topos[] = {"clos:down=16x16x16,up=1x16x16,bw=400Gbps",
                                  "clos:down=16x16x16,up=1x8x16,bw=400Gbps", "torus:dims=16x16x16"};
    static const char *names[] = {"clos,clos-2:1,torus"}, *ops[] = {"allreduce,reducescatter,allgather,alltoall"},
                      *sizes[] = {"64KiB:4GiB:4"}, *eq[] = {"injection=400Gbps"},
                      *alphas[] = {"0,500ns,1us,2us,5us"};
    for (size_t i = 0; i < in->ng; i++) {
        const char *f = in->g[i].opt->flag;
        if (!strcmp(f, "--topo") || !strcmp(f, "--op") || !strcmp(f, "--sizes") || !strcmp(f, "--names") ||
            !strcmp(f, "--equalize") || !strcmp(f, "--alphas"))
            return tc_fail(err, TC_EINVAL,
                           "--default sets the topologies, operations, sizes and alphas itself: drop %s", f);
    }
    if (in->scenario)
        return tc_fail(err, TC_EINVAL, "--default and --scenario both give the scenario: give one");
    tc_status st;
    if ((st = tc_scenario_set_flag(s, "--topo", topos, 3, err)) || (st = tc_scenario_set_flag(s, "--names", names, 1, err)) ||
        (st = tc_scenario_set_flag(s, "--op", ops, 1, err)) || (st = tc_scenario_set_flag(s, "--sizes", sizes, 1, err)))
        return st;
    if ((st = tc_scenario_set_flag(s, "--alphas", alphas, 1, err)))
        return st;
    return tc_scenario_set_flag(s, "--equalize", eq, 1, err);
}

static tc_status mem_limit(const cli_in *in, double *out, tc_err *err)
{
    *out = 0.75 * tc_mem_physical();
    if (!in->mem_limit)
        return TC_OK;
    tc_err e2;
    if (tc_parse_size(in->mem_limit, out, &e2) || !(*out > 0))
        return tc_fail(err, TC_EINVAL, "invalid --mem-limit '%s': expected a size such as 16GiB", in->mem_limit);
    return TC_OK;
}

tc_status cli_check_writable(const char *path, tc_err *err)
{
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st == TC_OK)
        tc_atomic_abort(&af);
    return st;
}

tc_status cli_check_dir(const char *dir, tc_err *err)
{
    char probe[4200];
    if (strlen(dir) > 4000)
        return tc_fail(err, TC_EINVAL, "--out-dir: the name is too long (at most 4000 bytes)");
    tc_status st = tc_make_dirs(dir, err);
    if (st)
        return st;
    snprintf(probe, sizeof probe, "%s/scenario.json", dir);
    return cli_check_writable(probe, err);
}

const char *cli_name_in(const char *file, const char *dir)
{
    const char *slash = strrchr(file, '/'), *name = slash ? slash + 1 : file;
    char fdir[4200];
    snprintf(fdir, sizeof fdir, "%.*s", slash ? (int)(slash == file ? 1 : slash - file) : 1, slash ? file : ".");
    if (tc_same_file(fdir, dir))
        return name;
    /* a directory not made yet (--out-dir is made when the run starts):
     * the same name */
    struct stat sb;
    if (stat(dir, &sb) == 0)
        return NULL;
    char a[4200], b[4200];
    return tc_future_path(fdir, a, sizeof a) && tc_future_path(dir, b, sizeof b) && strcmp(a, b) == 0 ? name : NULL;
}

bool cli_ends_with(const char *name, const char *suffix)
{
    size_t nl = strlen(name), sl = strlen(suffix);
    return nl >= sl && strcmp(name + nl - sl, suffix) == 0;
}

/* Whether FILE is one that --out-dir DIR writes (DIR/scenario.json,
 * DIR/TABLE.csv), compared as files. */
bool cli_in_out_dir(const char *file, const char *out_dir)
{
    const char *name = cli_name_in(file, out_dir);
    return name && (strcmp(name, "scenario.json") == 0 || cli_ends_with(name, ".csv"));
}

tc_status cli_check_out_beside_dir(const char *out, const char *out_dir, tc_err *err)
{
    if (out && out_dir && cli_in_out_dir(out, out_dir))
        return tc_fail(err, TC_EINVAL, "--out %.160s is in --out-dir %.160s, whose scenario.json and TABLE.csv files "
                                       "are the result's: give it another name or directory",
                       out, out_dir);
    return TC_OK;
}

/* A file the run writes (the flow trace, the iteration timeline) that is
 * also a result file (--out, the scenario beside a CSV --out, a file that
 * --out-dir writes: scenario.json, TABLE.csv) would be written over by the
 * result: refused, compared as files; so is an --out file that --out-dir
 * writes. */
static tc_status check_run_files(const tc_scenario *s, const cli_in *in, tc_err *err)
{
    tc_status st = cli_check_out_beside_dir(in->out, in->out_dir, err);
    if (st)
        return st;
    const char *file = s->trace[0] ? s->trace : s->it_timeline[0] ? s->it_timeline : NULL;
    const char *flag = s->trace[0] ? "--trace" : "--timeline";
    if (!file)
        return TC_OK;
    if (in->out && tc_same_file(file, in->out))
        return tc_fail(err, TC_EINVAL, "%s %.160s is the --out file too: give the two other names", flag, file);
    size_t ol = in->out ? strlen(in->out) : 0;
    if (ol >= 4 && strcmp(in->out + ol - 4, ".csv") == 0) {
        char side[4200];
        tc_outcome_csv_sidecar(in->out, side, sizeof side);
        if (tc_same_file(file, side))
            return tc_fail(err, TC_EINVAL, "%s %.160s is the scenario file written beside --out %.160s: give it "
                                           "another name",
                           flag, file, in->out);
    }
    if (in->out_dir && cli_in_out_dir(file, in->out_dir))
        return tc_fail(err, TC_EINVAL, "%s %.160s is in --out-dir %.160s, whose scenario.json and TABLE.csv files "
                                       "are the result's: give it another name or directory",
                       flag, file, in->out_dir);
    return TC_OK;
}

static tc_status run_and_write(const tc_scenario *s, const cli_in *in, tc_err *err)
{
    tc_format fmt = TC_FMT_TABLE;
    tc_status st;
    if (in->format && (st = tc_format_parse(in->format, &fmt, err)))
        return st;
    if (in->print_scenario) {
        if (in->out_dir || (in->format && fmt != TC_FMT_JSON))
            return tc_fail(err, TC_EINVAL, "--print-scenario prints the scenario as JSON (to stdout and --out FILE): "
                                           "drop %s",
                           in->out_dir ? "--out-dir" : "--format");
        json_t *j = tc_scenario_to_json(s);
        st = in->out ? tc_json_write(j, in->out, err) : TC_OK;
        if (st == TC_OK)
            st = tc_json_write(j, NULL, err);
        json_decref(j);
        return st;
    }
    tc_run_opts ro = {0};
    if ((st = mem_limit(in, &ro.mem_limit_bytes, err)))
        return st;
    if ((st = check_run_files(s, in, err)))
        return st;
    if (in->out && s->command == TC_CMD_CLUSTER && s->cluster_trace[0] && tc_same_file(in->out, s->cluster_trace))
        return tc_fail(err, TC_EINVAL, "--out %.160s is the trace this run reads: name another file", in->out);
    /* --out-dir is made before --out is tried, so that --out may be in it */
    if (in->out_dir && (st = cli_check_dir(in->out_dir, err)))
        return st;
    if (in->out && (st = cli_check_writable(in->out, err)))
        return st;
    size_t ol = in->out ? strlen(in->out) : 0;
    if (ol >= 4 && strcmp(in->out + ol - 4, ".csv") == 0) {
        char side[4200];
        tc_outcome_csv_sidecar(in->out, side, sizeof side);
        if ((st = cli_check_writable(side, err)))
            return st;
    }
    cli_progress prog;
    if ((st = cli_progress_init(&prog, in->quiet, err)))
        return st;
    ro.progress = cli_progress_cb;
    ro.progress_ud = &prog;
    tc_outcome o;
    st = tc_scenario_run(s, &ro, &o, err);
    cli_progress_done(&prog);
    if (st == TC_OK && in->out)
        st = tc_outcome_write_file(&o, s, in->out, fmt, err);
    if (st == TC_OK && in->out_dir)
        st = tc_outcome_write_dir(&o, s, in->out_dir, err);
    if (st == TC_OK)
        st = tc_outcome_write(&o, s, fmt, stdout, err);
    tc_outcome_free(&o);
    return st;
}

static tc_status command(cli_in *in, tc_err *err)
{
    tc_scenario *s = tc_scenario_new(in->cmd);
    if (!s)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    if (in->scenario)
        st = tc_scenario_load(s, in->scenario, err);
    if (st == TC_OK) {
        /* The scenario records the topocc that runs it. */
        snprintf(s->version, sizeof s->version, "%s", tc_version());
        snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
        /* --out-dir is made before the run: a trace may go in it */
        snprintf(s->made_dir, sizeof s->made_dir, "%s", in->out_dir ? in->out_dir : "");
    }
    if (st == TC_OK && in->dflt)
        st = apply_default(s, in, err);
    if (st == TC_OK && in->positional) {
        const char *v[1] = {in->positional};
        for (size_t i = 0; i < in->ng && st == TC_OK; i++)
            if (strcmp(in->g[i].opt->flag, "--topo") == 0)
                st = tc_fail(err, TC_EINVAL, "give the topology once: topocc topo SPEC");
        if (st == TC_OK)
            st = tc_scenario_set_flag(s, "--topo", v, 1, err);
    }
    if (st == TC_OK && (st = set_flags(s, in, err)) == TC_OK && (st = tc_scenario_resolve(s, err)) == TC_OK &&
        (st = tc_scenario_check_given(s, err)) == TC_OK)
        st = tc_scenario_check_run(s, err);
    if (st == TC_OK)
        st = run_and_write(s, in, err);
    tc_scenario_free(s);
    return st;
}

int cli_command(tc_command c, int argc, char **argv, int first)
{
    cli_in in = {.cmd = c};
    tc_err err = {{0}};
    tc_status st = parse(&in, argc, argv, first, &err);
    if (st == TC_OK && in.help) {
        cli_help(c, stdout);
        return 0;
    }
    if (st == TC_OK && c == TC_CMD_TOPO && !in.positional && !in.scenario && !in.ng)
        st = tc_fail(&err, TC_EINVAL, "expected one topology spec, e.g. topocc topo clos:down=8x8,up=1x8");
    if (st == TC_OK)
        st = command(&in, &err);
    return cli_exit(st, &err);
}

/* ---- replay ---- */

/* A string from a file, shown on one line: control characters become '?'. */
static void printable(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
    for (char *c = dst; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

static tc_status replay(cli_in *in, tc_err *err)
{
    if (!in->positional)
        return tc_fail(err, TC_EINVAL, "replay needs a file: topocc replay RESULT.json (or a scenario; - for stdin)");
    json_error_t je;
    bool stdin_ = strcmp(in->positional, "-") == 0;
    struct stat sb;
    if (!stdin_ && stat(in->positional, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "replay %s: a directory: give a saved result or scenario (RESULT.json)",
                       in->positional);
    unsigned long mark = tc_oom_mark();
    json_t *root = stdin_ ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
                          : json_load_file(in->positional, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root)
        return je.line > 0 ? tc_fail(err, TC_EINVAL, "%s line %d, column %d: %s", in->positional, je.line, je.column,
                                     je.text)
                           : tc_fail(err, TC_EINVAL, "%s: %s", in->positional, je.text);
    /* A result (schema_version and a scenario) holds its scenario, and so
     * does a line of a sweep's results (a point and its scenario); anything
     * else is read as a scenario, where a stray "scenario" key is unknown. */
    const json_t *scn = tc_scenario_of_document(root);
    tc_status st = TC_OK;
    long long point;
    char e[160];
    char what[300];
    snprintf(what, sizeof what, "%.256s", in->positional);
    tc_scenario *s = NULL;
    if (scn == root && json_object_get(root, "topocc_sweep")) {
        st = tc_fail(err, TC_EINVAL, "%s: a sweep's header (a results file's first line): it holds no scenario to "
                                     "replay; a point's line does (sed -n 2p RESULTS.jsonl | topocc replay -)",
                     in->positional);
    } else if (scn == root && tc_sweep_failed_point(root, &point, e, sizeof e)) {
        /* the error quoted whole when it fits in one message, cut with
         * "..." when not (topocc sweep --status gives it whole) */
        st = tc_fail(err, TC_EINVAL, "%s: this line records point %lld of a sweep, which failed: it holds no "
                                     "scenario to replay (its error: \"%s\")",
                     in->positional, point, e);
    } else if ((st = tc_scenario_from_json(root, what, &s, err)) == TC_OK)
        in->cmd = s->command;
    json_decref(root);
    char ver[sizeof s->version], com[sizeof s->commit];
    if (st == TC_OK) {
        printable(ver, sizeof ver, s->version);
        printable(com, sizeof com, s->commit);
        snprintf(s->version, sizeof s->version, "%s", tc_version());
        snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
        snprintf(s->made_dir, sizeof s->made_dir, "%s", in->out_dir ? in->out_dir : "");
        st = tc_scenario_resolve(s, err);
    }
    if (st == TC_OK && (st = tc_scenario_check_given(s, err)) == TC_OK &&
        (st = tc_scenario_check_run(s, err)) == TC_OK) {
        if (strcmp(ver, tc_version()) != 0 || strcmp(com, tc_commit()) != 0)
            fprintf(stderr, "topocc: warning: %.256s was written by topocc %s (%s); this is %s (%s): numbers may "
                            "differ\n",
                    in->positional, ver, com, tc_version(), tc_commit());
        st = run_and_write(s, in, err);
    }
    tc_scenario_free(s);
    return st;
}

int cli_replay(int argc, char **argv, int first)
{
    cli_in in = {.replay = true};
    tc_err err = {{0}};
    tc_status st = parse(&in, argc, argv, first, &err);
    if (st == TC_OK && in.help) {
        printf("usage: topocc replay FILE [--format table|csv|json] [--out FILE] [--out-dir DIR] [--quiet]\n"
               "                          [--print-scenario] [--mem-limit BYTES]\n\n"
               "Runs the scenario of FILE again: a result any command wrote with --format json\n"
               "or --out (its \"scenario\" field), a line of a sweep's results (one point), or a\n"
               "scenario (--print-scenario); - reads standard input. On the same binary and CPU the numbers are the same bit for\n"
               "bit; measured values (codec-bench throughputs) are measured again. A file\n"
               "written by another version or commit of topocc gives a warning.\n\n"
               "example:\n"
               "  topocc collective --topo clos:down=8x8,up=1x8 --op allreduce --size 64MiB --out r.json\n"
               "  topocc replay r.json --format json\n");
        return 0;
    }
    if (st == TC_OK)
        st = replay(&in, &err);
    return cli_exit(st, &err);
}
