/*
 * sweep.c - `topocc sweep`: run a sweep file into a results file (in one
 * process, one shard of the points, or many ranks under mpirun or srun),
 * summarise a results file (--status), merge results files (--merge).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/progress.h"
#include "topocc/sweep.h"

static const char *help =
    "usage: topocc sweep FILE -o RESULTS.jsonl [--shard K/N] [--retry-failed] [--no-validate]\n"
    "                    [--mem-limit BYTES] [--quiet]\n"
    "       topocc sweep --status RESULTS.jsonl [--format table|json]\n"
    "       topocc sweep --merge RESULTS.jsonl ... -o OUT.jsonl\n"
    "\n"
    "Runs every point of a sweep file and appends each as one JSON line to\n"
    "RESULTS.jsonl: {\"scenario\": {...}, \"sweep\": {\"mode\": \"product\"|\"zip\",\n"
    "\"axes\": {\"<key path>\": [values...]}, \"seed\": S, \"seeds\": \"per-point\"|\"shared\"}}\n"
    "(docs/SWEEP.md; key paths as in docs/SCENARIO.md, e.g. network.topo[0]).\n"
    "Every point's scenario is built and checked before the first runs. A run\n"
    "over an existing results file of the same sweep skips the points it holds\n"
    "and redoes a line torn by a crash; a file of another sweep, a file that is\n"
    "not a results file and the sweep file itself are refused, untouched.\n"
    "\n"
    "  -o, --out FILE     the results file (appended to; created with its header)\n"
    "  --shard K/N        run only the points i with i mod N = K (several machines\n"
    "                     without MPI: one results file each, then --merge)\n"
    "  --retry-failed     run again the points the results file holds as failed\n"
    "                     (their new lines replace the failures)\n"
    "  --no-validate      do not build every point's scenario first (for millions\n"
    "                     of points that takes minutes)\n"
    "  --mem-limit BYTES  each point's memory limit (default 3/4 of this machine's)\n"
    "  --quiet            no progress\n"
    "  --status FILE      what a results file holds: done, failed, missing points\n"
    "  --merge FILE...    the union of results files of one sweep, to -o OUT\n"
    "\n"
    "Under mpirun -np K (or srun) the ranks share the points: each takes the next\n"
    "pending point when it finishes one; rank 0 runs points too and writes the\n"
    "file. Ranks beyond the number of points exit 0 with a note.\n"
    "\n"
    "example:\n"
    "  topocc sweep examples/sweep.json -o results.jsonl\n"
    "  mpirun -np 4 topocc sweep examples/sweep.json -o results.jsonl\n"
    "  topocc sweep --status results.jsonl\n"
    "  topocc report results.jsonl -o report\n";

typedef struct sweep_args {
    const char *file, *out, *status, *format, *mem_limit, *shard;
    const char *merge[256];
    size_t nmerge;
    bool quiet, no_validate, retry_failed, help;
} sweep_args;

static tc_status parse_args(sweep_args *a, int argc, char **argv, int first, tc_err *err)
{
    bool merging = false;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        const char **slot = NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            a->help = true;
            continue;
        }
        if (!strcmp(arg, "--quiet")) {
            a->quiet = true;
            continue;
        }
        if (!strcmp(arg, "--no-validate")) {
            a->no_validate = true;
            continue;
        }
        if (!strcmp(arg, "--retry-failed")) {
            a->retry_failed = true;
            continue;
        }
        if (!strcmp(arg, "--merge")) {
            merging = true;
            continue;
        }
        if (!strcmp(arg, "-o") || !strcmp(arg, "--out"))
            slot = &a->out;
        else if (!strcmp(arg, "--status"))
            slot = &a->status;
        else if (!strcmp(arg, "--format"))
            slot = &a->format;
        else if (!strcmp(arg, "--mem-limit"))
            slot = &a->mem_limit;
        else if (!strcmp(arg, "--shard"))
            slot = &a->shard;
        if (slot) {
            if (*slot)
                return tc_fail(err, TC_EINVAL, "option %s given twice", arg);
            if (i + 1 >= argc || !argv[i + 1][0])
                return tc_fail(err, TC_EINVAL, "option %s needs a value (see topocc sweep --help)", arg);
            *slot = argv[++i];
            continue;
        }
        if (arg[0] == '-' && arg[1])
            return tc_fail(err, TC_EINVAL, "unknown option '%s' for 'topocc sweep': accepted are -o/--out, --shard, "
                                           "--no-validate, --retry-failed, --mem-limit, --quiet, --status, --merge, "
                                           "--format, --help",
                           arg);
        if (merging) {
            if (a->nmerge == sizeof a->merge / sizeof a->merge[0])
                return tc_fail(err, TC_EINVAL, "--merge: at most 256 files");
            a->merge[a->nmerge++] = arg;
            continue;
        }
        if (a->file)
            return tc_fail(err, TC_EINVAL, "unexpected argument '%s': topocc sweep takes one sweep file", arg);
        a->file = arg;
    }
    int modes = (a->file != NULL) + (a->status != NULL) + merging;
    if (a->help)
        return TC_OK;
    if (modes == 0)
        return tc_fail(err, TC_EINVAL, "expected a sweep file: topocc sweep FILE -o RESULTS.jsonl (see topocc sweep "
                                       "--help)");
    if (modes > 1)
        return tc_fail(err, TC_EINVAL, "give one of: a sweep file, --status FILE, --merge FILE...");
    if (merging && !a->nmerge)
        return tc_fail(err, TC_EINVAL, "--merge needs results files: topocc sweep --merge A.jsonl B.jsonl -o OUT.jsonl");
    if ((a->file || merging) && !a->out)
        return tc_fail(err, TC_EINVAL, "%s needs the results file: -o RESULTS.jsonl",
                       merging ? "--merge" : "topocc sweep FILE");
    if (a->status && (a->out || a->shard || a->no_validate || a->retry_failed || a->mem_limit))
        return tc_fail(err, TC_EINVAL, "--status reads a results file: it takes only --format");
    if (a->format && !a->status)
        return tc_fail(err, TC_EINVAL, "--format applies to --status only (the results file is JSON Lines)");
    if (a->format && strcmp(a->format, "table") != 0 && strcmp(a->format, "json") != 0)
        return tc_fail(err, TC_EINVAL, "invalid --format '%s': accepted are table, json", a->format);
    return TC_OK;
}

/* "12-15, 40, 97-99" for the missing points (at most max runs shown). */
static void ranges(const uint8_t *state, uint64_t n, uint8_t want, char *buf, size_t len, uint64_t *count)
{
    buf[0] = '\0';
    size_t used = 0;
    int shown = 0;
    *count = 0;
    for (uint64_t i = 0; i < n;) {
        if (state[i] != want) {
            i++;
            continue;
        }
        uint64_t j = i;
        while (j + 1 < n && state[j + 1] == want)
            j++;
        *count += j - i + 1;
        if (shown < 12 && used < len) {
            int w = i == j ? snprintf(buf + used, len - used, "%s%llu", shown ? ", " : "", (unsigned long long)i)
                           : snprintf(buf + used, len - used, "%s%llu-%llu", shown ? ", " : "", (unsigned long long)i,
                                      (unsigned long long)j);
            used += w > 0 ? (size_t)w : 0;
        } else if (shown == 12 && used + 8 < len) {
            used += (size_t)snprintf(buf + used, len - used, ", ...");
        }
        shown++;
        i = j + 1;
    }
}

typedef struct failed_list {
    json_t *list;
} failed_list;

static int collect_failed(void *ud, uint64_t i, const char *line, size_t len)
{
    failed_list *fl = ud;
    if (json_array_size(fl->list) >= 20)
        return 0;
    json_t *j = json_loadb(line, len, 0, NULL);
    const json_t *e = j ? json_object_get(j, "error") : NULL;
    if (e)
        json_array_append_new(fl->list, json_pack("{s:I, s:O}", "point", (json_int_t)i, "error", e));
    json_decref(j);
    return 0;
}

static tc_status status(const sweep_args *a, tc_err *err)
{
    tc_sweep_results r;
    failed_list fl = {json_array()};
    tc_status st = tc_sweep_results_read(a->status, &r, collect_failed, &fl, err);
    if (st) {
        json_decref(fl.list);
        return st;
    }
    /* A failure replaced by a later result (--retry-failed) is not one. */
    for (size_t i = json_array_size(fl.list); i-- > 0;)
        if (r.state[json_integer_value(json_object_get(json_array_get(fl.list, i), "point"))] != 2)
            json_array_remove(fl.list, i);
    char miss[600];
    uint64_t nmiss;
    ranges(r.state, r.npoints, 0, miss, sizeof miss, &nmiss);
    const json_t *top = json_object_get(r.header, "topocc"), *axes = json_object_get(r.header, "axes");
    const char *ver = json_string_value(json_object_get(top, "version")),
               *com = json_string_value(json_object_get(top, "commit"));
    size_t bad;
    if (a->format && strcmp(a->format, "json") == 0 && !tc_utf8_valid(a->status, &bad)) {
        st = tc_fail(err, TC_EINVAL, "--status: the file name is not valid UTF-8 text (byte %zu is 0x%02x), which "
                                     "--format json writes as JSON text: rename the file, or give --format table",
                     bad + 1, (unsigned)(unsigned char)a->status[bad]);
    } else if (a->format && strcmp(a->format, "json") == 0) {
        json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:f, s:b, s:O, s:O, s:I}", "file", a->status,
                              "hash", r.hash, "points", (json_int_t)r.npoints, "done", (json_int_t)r.ndone, "failed",
                              (json_int_t)r.nfailed, "missing", (json_int_t)nmiss, "duplicates",
                              (json_int_t)r.nduplicates, "missing_ranges", miss, "elapsed_s", r.elapsed_s, "torn",
                              r.torn, "failures", fl.list, "topocc", top ? top : json_null(), "other_build_lines",
                              (json_int_t)r.nother_build);
        st = tc_json_write(o, NULL, err);
        json_decref(o);
    } else {
        printf("%s: sweep %s, %llu points", a->status, r.hash, (unsigned long long)r.npoints);
        const char *k;
        json_t *v;
        int na = 0;
        json_object_foreach((json_t *)axes, k, v) printf("%s%s (%zu)", na++ ? ", " : " over ", k, json_array_size(v));
        printf("\n  written by topocc %s (%s)\n", ver ? ver : "?", com ? com : "?");
        printf("  done %llu of %llu (%.1f%%), %llu of them failed; missing %llu%s%s\n", (unsigned long long)r.ndone,
               (unsigned long long)r.npoints, 100.0 * (double)r.ndone / (double)r.npoints,
               (unsigned long long)r.nfailed, (unsigned long long)nmiss, nmiss ? ": " : "", miss);
        uint64_t ok = r.ndone - r.nfailed;
        printf("  points' run time %.3g s in all", r.elapsed_s);
        if (ok)
            printf(", %.3g s on average", r.elapsed_s / (double)ok);
        printf("\n");
        if (r.nduplicates)
            printf("  %llu duplicate lines (a point's first result counts, else its first failure)\n",
                   (unsigned long long)r.nduplicates);
        if (r.nother_build)
            printf("  %llu point lines written by another topocc build than the header's, the first by %s: their "
                   "results may differ\n",
                   (unsigned long long)r.nother_build, r.other_build);
        if (r.torn)
            printf("  the last line is torn (a crash): the next run redoes it\n");
        for (size_t i = 0; i < json_array_size(fl.list); i++) {
            const json_t *f = json_array_get(fl.list, i);
            printf("  failed: point %lld: %s\n", (long long)json_integer_value(json_object_get(f, "point")),
                   json_string_value(json_object_get(f, "error")));
        }
        if (r.nfailed > json_array_size(fl.list))
            printf("  ... and %llu more failed\n", (unsigned long long)(r.nfailed - json_array_size(fl.list)));
    }
    json_decref(fl.list);
    tc_sweep_results_free(&r);
    return st;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static tc_status run(const sweep_args *a, int *argc, char ***argv, tc_err *err)
{
    tc_sweep_opts o = {.validate = !a->no_validate,
                       .retry_failed = a->retry_failed,
                       .mem_limit_bytes = 0.75 * tc_mem_physical()};
    if (a->mem_limit) {
        tc_err e2;
        if (tc_parse_size(a->mem_limit, &o.mem_limit_bytes, &e2) || !(o.mem_limit_bytes > 0))
            return tc_fail(err, TC_EINVAL, "invalid --mem-limit '%s': expected a size such as 16GiB", a->mem_limit);
    }
    if (a->shard) {
        unsigned long long k, n;
        char tail;
        if (sscanf(a->shard, "%llu/%llu%c", &k, &n, &tail) != 2 || n == 0 || k >= n || a->shard[0] == '-')
            return tc_fail(err, TC_EINVAL, "invalid --shard '%s': expected K/N with 0 <= K < N, e.g. 0/4", a->shard);
        o.shard = k;
        o.nshards = n;
    }
    cli_progress prog;
    tc_status st = cli_progress_init(&prog, a->quiet, err);
    if (st)
        return st;
    tc_sweep *sw;
    if ((st = tc_sweep_load(a->file, &sw, err)))
        return st;
    tc_sweep_transport T;
    if ((st = tc_sweep_mpi_open(argc, argv, &T, err))) {
        tc_sweep_free(sw);
        return st;
    }
    if (T.size > 1)
        o.transport = &T;
    prog.quiet = a->quiet || T.rank != 0;
    o.progress = cli_progress_cb;
    o.progress_ud = &prog;
    tc_sweep_summary sum;
    double t0 = now_s();
    st = tc_sweep_run(sw, a->out, &o, &sum, err);
    cli_progress_done(&prog);
    double dt = now_s() - t0;
    if (T.rank != 0) {
        /* Rank 0 speaks for the run; a rank without a point says so. */
        if (st == TC_OK && sum.idle)
            fprintf(stderr, "topocc: note: rank %d of %d had no point to run (%llu pending)\n", T.rank, T.size,
                    (unsigned long long)(sum.points - sum.held));
        tc_sweep_free(sw);
        if (st)
            err->msg[0] = '\0';
        return st;
    }
    if (st == TC_OK) {
        if (sum.torn)
            fprintf(stderr, "topocc: note: %s ended in a torn line (a crash): its point was run again\n", a->out);
        printf("sweep %s: %llu points: %llu held already, %llu run now", sw->hash, (unsigned long long)sum.points,
               (unsigned long long)sum.held, (unsigned long long)sum.run);
        if (o.nshards)
            printf(" (shard %llu/%llu)", (unsigned long long)o.shard, (unsigned long long)o.nshards);
        if (T.size > 1)
            printf(" on %d MPI ranks", T.size);
        printf(" in %.3g s: %s\n", dt, a->out);
        /* Counted against the points of the sweep (of its shard), held
         * ones included, as a first run counts them. */
        char retried[96] = "";
        if (sum.retried)
            snprintf(retried, sizeof retried, "--retry-failed ran again the %llu that had failed before; ",
                     (unsigned long long)sum.retried);
        if (sum.failed && !sum.held_failed)
            st = tc_fail(err, sum.first_status ? sum.first_status : TC_EINVAL,
                         "%llu of %llu points failed (%stopocc sweep --status %s lists them); the first: %s",
                         (unsigned long long)sum.failed, (unsigned long long)(sum.run + sum.held), retried, a->out,
                         sum.first_error);
        else if (sum.held_failed) {
            /* A rerun holds the failed points of an earlier one: they are
             * still failed, and it says so as the first run did (the first
             * named is the earlier run's). */
            st = tc_fail(err, sum.failed && sum.first_status ? sum.first_status : TC_EINVAL,
                         "%llu of %llu points failed, %llu of them held already (topocc sweep --status %s lists them; "
                         "--retry-failed runs them again); the first: point %llu: %s",
                         (unsigned long long)(sum.failed + sum.held_failed), (unsigned long long)(sum.run + sum.held),
                         (unsigned long long)sum.held_failed, a->out, (unsigned long long)sum.first_held_failed,
                         sum.first_held_error);
        }
    }
    tc_sweep_free(sw);
    return st;
}

int cli_sweep(int argc, char **argv, int first)
{
    sweep_args a = {0};
    tc_err err = {{0}};
    tc_status st = parse_args(&a, argc, argv, first, &err);
    if (st == TC_OK && a.help) {
        fputs(help, stdout);
        return 0;
    }
    if (st == TC_OK && a.status)
        st = status(&a, &err);
    else if (st == TC_OK && a.nmerge) {
        tc_sweep_results sum;
        st = tc_sweep_merge(a.merge, a.nmerge, a.out, &sum, &err);
        if (st == TC_OK)
            printf("merged %zu files: %llu of %llu points (%llu failed): %s\n", a.nmerge,
                   (unsigned long long)sum.ndone, (unsigned long long)sum.npoints, (unsigned long long)sum.nfailed,
                   a.out);
    } else if (st == TC_OK)
        st = run(&a, &argc, &argv, &err);
    if (st && !err.msg[0])
        return st == TC_EINVAL ? 2 : 1; /* a rank other than 0: rank 0 said why */
    return cli_exit(st, &err);
}
