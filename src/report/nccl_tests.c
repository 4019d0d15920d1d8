/*
 * nccl_tests.c - nccl-tests' output written and read (topocc/nccl_tests.h).
 * Formats from NVIDIA/nccl-tests v2.13.10, src/common.cu: rows
 * "%12li  %12li  %8s  %6s  %6i" then twice "  %7s  %6.2f  %6.2f  %5s" (time
 * in us as %7.2f below 100, %7.1f below 10,000, %7.0f above); the footer
 * "# Avg bus bandwidth    : %g", the mean of every busbw printed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "topocc/nccl_tests.h"

double tc_nccl_tests_busbw(tc_op op, uint32_t p, double bytes, double time_s)
{
    if (!(time_s > 0))
        return 0;
    return bytes / time_s * tc_op_busbw_factor(op, p);
}

uint32_t tc_nccl_tests_ranks(const tc_result *r)
{
    return r->groups && r->group_size ? r->group_size : r->ranks;
}

/* nccl-tests' count column: elements per rank for all-gather and
 * reduce-scatter, per peer for all-to-all, of the buffer otherwise. */
static long count_of(tc_op op, uint32_t p, double bytes, uint32_t elt)
{
    double count = floor(bytes / (elt ? elt : 4));
    if (p && (op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLTOALL))
        count = floor(count / p);
    return (long)count;
}

/* The variables of NCCL that topocc honours from its environment (as
 * src/scenario/scenario.c's nccl_env reads them). */
static const char *const honoured[] = {"NCCL_ALGO",         "NCCL_PROTO",        "NCCL_NVLS_ENABLE",
                                       "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS",
                                       "NCCL_MAX_NRINGS",    "NCCL_MIN_CTAS",      "NCCL_MAX_CTAS",
                                       "NCCL_PXN_DISABLE",   "NCCL_BUFFSIZE"};

static void time_str(double us, char *buf, size_t len)
{
    snprintf(buf, len, us < 100 ? "%7.2f" : us < 10000 ? "%7.1f" : "%7.0f", us);
}

/* The header's values without a command line: those of the sizes run. */
static tc_nccl_tests_header header_of_sizes(const tc_collective_out *o)
{
    size_t n = o->nsizes;
    /* nccl-tests' defaults: -g 1, -i 1M, -f 1 (src/common.cu:63-67) */
    tc_nccl_tests_header h = {.ngpus = 1, .step = 1024 * 1024};
    if (!n)
        return h;
    h.min_bytes = tc_collective_at(o, 0, 0)->bytes;
    h.max_bytes = tc_collective_at(o, 0, n - 1)->bytes;
    if (n >= 2) {
        double a = h.min_bytes, b = tc_collective_at(o, 0, 1)->bytes;
        if (a > 0 && b >= 2 * a && b / a == floor(b / a))
            h.step = b / a, h.step_factor = true;
        else if (b > a)
            h.step = b - a;
    }
    return h;
}

/* One row as nccl-tests prints it. */
typedef struct nt_line {
    long bytes, count;
    const char *type, *redop;
    int root;
    double time_s, algbw, busbw; /* busbw, algbw: GB/s */
} nt_line;

/* The header's values of o and hp (the command line's, or the sizes'). */
static tc_nccl_tests_header header_of(const tc_collective_out *o, const tc_nccl_tests_header *hp)
{
    tc_nccl_tests_header h = hp && !hp->from_sizes ? *hp : header_of_sizes(o);
    if (hp && hp->ngpus)
        h.ngpus = hp->ngpus;
    h.nthreads = hp && hp->nthreads ? hp->nthreads : 1;
    return h;
}

/* Calls fn on every row nccl-tests prints for o: o's sizes, and the empty
 * ones where hp places them. Returns nccl-tests' average bus bandwidth:
 * the mean of every busbw printed (in and out of place), an empty row's 0
 * too. */
static double each_line(const tc_collective_out *o, const tc_nccl_tests_header *hp,
                        void (*fn)(const nt_line *, void *), void *ud)
{
    double sum = 0;
    size_t n = o->nsizes, rows = n, full = 0;
    if (hp && hp->empty) {
        for (size_t i = 0; i < hp->nrows; i++)
            full += !hp->empty[i];
        if (full == n)
            rows = hp->nrows;
    }
    for (size_t i = 0, k = 0; i < rows; i++) {
        const tc_result *r = tc_collective_at(o, 0, k < n ? k : 0);
        bool empty = rows != n && hp->empty[i];
        if (!empty)
            k++;
        bool rooted = r->op == TC_OP_BROADCAST || r->op == TC_OP_REDUCE;
        uint32_t p = tc_nccl_tests_ranks(r);
        nt_line l = {
            .bytes = empty ? 0L : (long)r->bytes,
            .count = empty ? 0L : count_of(r->op, p, r->bytes, r->elt),
            .type = tc_dtype_nccl_name(o->dtype),
            .redop = tc_redop_column(r->op, r->redop),
            .root = rooted ? (int)o->rows[0].root : -1,
            .time_s = empty ? hp->empty_time_s : r->time_s,
            /* an empty row: count 0, so nccl-tests' GetBw gives 0 whatever the time */
            .algbw = !empty && r->time_s > 0 ? r->bytes / 1e9 / r->time_s : 0,
            .busbw = empty ? 0 : tc_nccl_tests_busbw(r->op, p, r->bytes, r->time_s) / 1e9,
        };
        fn(&l, ud);
        sum += l.busbw;
    }
    return rows ? sum / (double)rows : 0;
}

static void text_line(const nt_line *l, void *ud)
{
    FILE *f = ud;
    char ts[32];
    time_str(l->time_s * 1e6, ts, sizeof ts);
    fprintf(f, "%12li  %12li  %8s  %6s  %6i", l->bytes, l->count, l->type, l->redop, l->root);
    for (int j = 0; j < 2; j++)
        fprintf(f, "  %7s  %6.2f  %6.2f  %5s", ts, l->algbw, l->busbw, "N/A");
    fputc('\n', f);
}

void tc_nccl_tests_write(FILE *f, const tc_collective_out *o, const char *what, const tc_nccl_tests_header *hp)
{
    tc_nccl_tests_header h = header_of(o, hp);
    fprintf(f, "# nThread %u nGpus %u minBytes %.0f maxBytes %.0f step: %.0f(%s) warmup iters: 0 iters: 0 "
               "agg iters: 1 validation: 0 graph: 0\n",
            h.nthreads, h.ngpus, h.min_bytes, h.max_bytes, h.step, h.step_factor ? "factor" : "bytes");
    fprintf(f, "#\n# topocc prediction: %s\n", what);
    if (hp && hp->note)
        fprintf(f, "# %s\n", hp->note);
    if (hp && hp->graph)
        fprintf(f, "# %s\n", hp->graph);
    fprintf(f, "#\n");
    fprintf(f, "#                                                              out-of-place                       "
               "in-place          \n");
    fprintf(f, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
               "algbw   busbw #wrong\n");
    fprintf(f, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
               "(GB/s)  (GB/s)       \n");
    double avg = each_line(o, hp, text_line, f);
    fprintf(f, "# Out of bounds values : 0 OK\n");
    fprintf(f, "# Avg bus bandwidth    : %g \n", avg);
    fprintf(f, "#\n");
}

typedef struct nt_json {
    json_t *results;
    bool oom;
} nt_json;

static void json_line(const nt_line *l, void *ud)
{
    nt_json *j = ud;
    char root[16];
    snprintf(root, sizeof root, "%6i", l->root); /* nccl-tests writes the printed field */
    json_t *side[2];
    for (int k = 0; k < 2; k++)
        side[k] = json_pack("{s:f, s:f, s:f, s:n}", "time", l->time_s * 1e6, "alg_bw", l->algbw, "bus_bw", l->busbw,
                            "nwrong");
    json_t *row = json_pack("{s:I, s:I, s:s, s:s, s:s, s:o, s:o, s:i, s:s}", "size", (json_int_t)l->bytes, "count",
                            (json_int_t)l->count, "type", l->type, "redop", l->redop, "root", root, "out_of_place",
                            side[0], "in_place", side[1], "actual_iterations", 0, "experiment_name", "");
    if (!row || json_array_append_new(j->results, row))
        j->oom = true;
}

/* A string as nccl-tests writes one (sanitizeJson, src/util.cu:78-119 at
 * v2.19.6): cut at its first byte outside printable ASCII other than a tab
 * or a newline (escaped by the JSON writer). */
static json_t *nt_str(const char *in)
{
    size_t n = 0;
    while (in[n] && ((in[n] >= 0x20 && in[n] < 0x7f) || in[n] == '\t' || in[n] == '\n'))
        n++;
    return json_stringn(in, n);
}

json_t *tc_nccl_tests_report(const tc_collective_out *o, const tc_nccl_tests_header *hp, const char *const *args,
                             size_t nargs, const char *what)
{
    tc_nccl_tests_header h = header_of(o, hp);
    json_t *root = json_object(), *a = json_array(), *env = json_array(), *dev = json_array();
    nt_json j = {.results = json_array()};
    if (!root || !a || !env || !dev || !j.results)
        goto oom;
    for (size_t i = 0; i < nargs; i++)
        if (json_array_append_new(a, nt_str(args[i])))
            goto oom;
    for (size_t i = 0; i < sizeof honoured / sizeof *honoured; i++) {
        const char *v = getenv(honoured[i]);
        char kv[512];
        if (v && snprintf(kv, sizeof kv, "%s=%s", honoured[i], v) < (int)sizeof kv &&
            json_array_append_new(env, nt_str(kv)))
            goto oom;
    }
    /* one device entry per process, as writeDeviceReport gathers them: the
     * ranks over threads x GPUs */
    uint32_t ranks = o->nsizes ? tc_nccl_tests_ranks(tc_collective_at(o, 0, 0)) : 0;
    if (o->ngroups && o->nsizes)
        ranks = tc_collective_at(o, 0, 0)->ranks; /* every group's ranks are the run's */
    uint32_t per = h.nthreads * h.ngpus;
    if (!per)
        per = 1;
    uint32_t procs = ranks / per;
    for (uint32_t pr = 0; pr < procs; pr++) {
        if (json_array_append_new(dev, json_pack("{s:i, s:i, s:i, s:s, s:i, s:s, s:s}", "rank", (int)(pr * per),
                                                 "group", 0, "pid", 0, "hostname", "topocc", "device", 0, "device_hex", "",
                                                 "device_info", "topocc prediction")))
            goto oom;
    }
    /* jsonBool writes "true" or "false" as strings (src/util.cu:273-275) */
    json_t *cfg = json_pack("{s:i, s:i, s:I, s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:i, s:s, s:O}", "nthreads",
                            (int)h.nthreads, "ngpus", (int)h.ngpus, "minimum_bytes", (json_int_t)h.min_bytes,
                            "maximum_bytes", (json_int_t)h.max_bytes, h.step_factor ? "step_factor" : "step_bytes",
                            (json_int_t)h.step, "warmup_iters", 0, "iterations", 0, "aggregated_iterations", 1,
                            "validation", 0, "graph", 0, "blocking_collectives", "false", "per_iter_timing", "false",
                            "per_iter_skip", 0, "parallel_init", "false", "devices", dev);
    double avg = each_line(o, hp, json_line, &j);
    if (!cfg || j.oom ||
        json_object_set_new(root, "version", json_integer(3)) || json_object_set(root, "args", a) ||
        json_object_set(root, "env", env) || json_object_set_new(root, "nccl_version", json_integer(22105)) ||
        json_object_set_new(root, "config", cfg) || json_object_set(root, "results", j.results) ||
        json_object_set_new(root, "out_of_bounds", json_pack("{s:i, s:s}", "count", 0, "okay", "true")) ||
        json_object_set_new(root, "average_bus_bandwidth",
                            json_pack("{s:f, s:s}", "bandwidth", avg, "okay",
                                      "unchecked")) ||
        json_object_set_new(root, "errors", json_array()) ||
        json_object_set_new(root, "topocc_prediction", nt_str(what ? what : "")))
        goto oom;
    json_decref(a), json_decref(env), json_decref(dev), json_decref(j.results);
    return root;
oom:
    json_decref(root), json_decref(a), json_decref(env), json_decref(dev), json_decref(j.results);
    return NULL;
}

/* ---- reading ---- */

static bool num(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Splits line (modified) at blanks into at most max tokens. */
static int tokens(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && n < max; t = strtok_r(NULL, " \t\r\n", &save))
        tok[n++] = t;
    return n;
}

/* The leading columns of a row, as the column header names them
 * (nccl-tests prints one, a '#' line "size count type [redop] [root] time
 * algbw busbw ..."). Their set follows the version and the operation:
 *  - v1.0.0 (src/all_reduce.cu and the others' print_header): "bytes N
 *    type [op] [root] time algbw busbw res", the op column for the
 *    reductions only, root for broadcast and reduce, the time in ms
 *    (src/common.cu:573, deltaSec x 1e3);
 *  - v2.0.0 to v2.11.0 (each operation's print_header and
 *    print_line_header, e.g. src/all_gather.cu:10-20 at v2.11.0): "size
 *    count type" for all-gather, "size count type root" for broadcast,
 *    "size count type redop [root]" for the reductions and all-to-all,
 *    whose redop field prints blank (its TimeTest passes "" as the op
 *    name, src/alltoall.cu:111 at v2.11.0);
 *  - v2.13.0 and later (one header, src/common.cu:924 at v2.13.0): "size
 *    count type redop root" for every operation, the redop field blank for
 *    all-gather, broadcast and all-to-all up to v2.13.3 (their TimeTest
 *    passes ""), "none" from v2.13.4 (commit d313d20); later versions may
 *    name the time column "cputime" (-C).
 * A blank field leaves no token, so a row's redop is read only where its
 * token is not a number (no operator is named by a number). */
typedef struct nt_layout {
    bool redop, root;
    bool wrong; /* the column after busbw counts wrong elements (#wrong, v2.13 on), not an error size */
    bool cputime; /* the time column is the CPU's (-C): algbw is not size / time then */
    double time_unit; /* s per unit of the time column: us, ms in v1.0.0 */
} nt_layout;

/* A comment that is a column header: its layout into *lay. */
static bool column_header(const char *comment, nt_layout *lay)
{
    char buf[4096], *tok[64];
    snprintf(buf, sizeof buf, "%s", comment);
    int nt = tokens(buf, tok, 64), s = -1, t = -1;
    bool busbw = false, wrong = false, cpu = false;
    for (int i = 0; i < nt; i++) {
        if (s < 0 && (strcmp(tok[i], "size") == 0 || strcmp(tok[i], "bytes") == 0))
            s = i;
        else if (s >= 0 && t < 0 && (strcmp(tok[i], "time") == 0 || strcmp(tok[i], "cputime") == 0))
            t = i, cpu = strcmp(tok[i], "cputime") == 0;
        else if (t >= 0 && strcmp(tok[i], "busbw") == 0)
            busbw = true;
        else if (busbw && strcmp(tok[i], "#wrong") == 0)
            wrong = true;
    }
    if (s < 0 || t < 0 || !busbw)
        return false;
    *lay = (nt_layout){.time_unit = strcmp(tok[s], "bytes") == 0 ? 1e-3 : 1e-6, .wrong = wrong, .cputime = cpu};
    for (int i = s + 1; i < t; i++) {
        if (strcmp(tok[i], "redop") == 0 || strcmp(tok[i], "op") == 0)
            lay->redop = true;
        else if (strcmp(tok[i], "root") == 0)
            lay->root = true;
    }
    return true;
}

/* A header line "#  Rank  3 Group  0 Pid 1234 on host device  3 [...] NAME"
 * (older versions without Group): nccl-tests prints one per rank. */
static bool rank_line(const char *comment, long *rank)
{
    char buf[4096], *tok[32];
    snprintf(buf, sizeof buf, "%s", comment);
    int nt = tokens(buf, tok, 32);
    if (nt < 3 || strcmp(tok[0], "Rank") != 0)
        return false;
    char *end;
    errno = 0;
    long r = strtol(tok[1], &end, 10);
    if (*end || end == tok[1] || errno || r < 0 || r >= 1L << 24)
        return false;
    for (int i = 2; i < nt; i++)
        if (strcmp(tok[i], "device") == 0) {
            *rank = r;
            return true;
        }
    return false;
}

/* nccl-tests' programs, by operation (tc_op's order). */
static const char *const programs[TC_OP_COUNT] = {"all_reduce_perf", "reduce_scatter_perf", "all_gather_perf",
                                                  "alltoall_perf",   "broadcast_perf",      "reduce_perf",
                                                  "sendrecv_perf"};

const char *tc_nccl_tests_program(tc_op op)
{
    return (unsigned)op < TC_OP_COUNT ? programs[op] : "";
}

void tc_nccl_version_str(int code, char *buf, size_t len)
{
    /* nccl.h's NCCL_VERSION(X,Y,Z) (src/nccl.h.in:22 at v2.21.5-1) */
    if (code >= 10000)
        snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

/* Whether row r is of type, redop and (root >= 0) root. */
static bool row_of(const tc_nccl_row *r, const char *type, const char *redop, long root)
{
    const char *rd = r->redop[0] ? r->redop : r->no_redop ? "none" : NULL;
    /* a root column prints -1 for the operations without a root (v2.13 on) */
    bool root_ok = !r->has_root || (root >= 0 ? r->root == root : r->root < 0);
    return (!r->type[0] || strcmp(r->type, type) == 0) && (!rd || strcmp(rd, redop) == 0) && root_ok;
}

/* Appends kind to the ", "-separated list (once). */
static void add_kind(char *list, size_t len, const char *kind)
{
    size_t n = strlen(kind);
    for (const char *p = list; (p = strstr(p, kind)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return;
    size_t used = strlen(list);
    snprintf(list + used, len - used, "%s%s", used ? ", " : "", kind);
}

void tc_nccl_file_keep(tc_nccl_file *f, const char *type, const char *redop, long root)
{
    size_t keep = 0;
    for (size_t i = 0; i < f->n; i++)
        keep += row_of(&f->rows[i], type, redop, root);
    if (keep == 0 || keep == f->n)
        return;
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        const tc_nccl_row *r = &f->rows[i];
        if (row_of(r, type, redop, root)) {
            f->rows[k++] = *r;
            continue;
        }
        char kind[64];
        const char *rd = r->redop[0] ? r->redop : "none";
        if (r->has_root && !strcmp(r->type, type) && !strcmp(rd, redop))
            snprintf(kind, sizeof kind, "root %ld", r->root);
        else
            snprintf(kind, sizeof kind, "%s %s", r->type, rd);
        add_kind(f->other_kinds, sizeof f->other_kinds, kind);
        f->other_kind_rows++;
    }
    f->n = k;
}

tc_status tc_nccl_file_ranks(tc_nccl_file *f, const char *path, tc_err *err)
{
    const tc_nccl_row *first = NULL;
    for (size_t i = 0; i < f->n; i++) {
        const tc_nccl_row *r = &f->rows[i];
        if (!r->ranks)
            continue;
        if (!first)
            first = r;
        else if (r->ranks != first->ranks)
            return tc_fail(err, TC_EINVAL,
                           "nccl-tests file %s holds runs of the rows compared on %u ranks (its '#  Rank' lines, line "
                           "%ld) and on %u (line %ld): give a file of one of them",
                           path, first->ranks, first->ranks_line, r->ranks, r->ranks_line);
    }
    f->ranks = first ? first->ranks : 0;
    return TC_OK;
}

void tc_nccl_file_free(tc_nccl_file *f)
{
    if (f) {
        free(f->rows);
        memset(f, 0, sizeof *f);
    }
}

/* The program a file names, as its test: the name the binary ran as
 * (nccl-tests prints its argv[0]'s last component, after a '/' or, on
 * Windows from v2.19.1, a '\\': src/common.cu:1125-1133 at v2.19.6),
 * without a ".exe" and the "_mpi" that the MPI builds of some
 * distributions append. */
static void program_of(const char *name, char *out, size_t len)
{
    for (const char *c = name; *c; c++)
        if (*c == '/' || *c == '\\')
            name = c + 1;
    size_t n = strcspn(name, " \t\r\n");
    if (n > 4 && strncmp(name + n - 4, ".exe", 4) == 0)
        n -= 4;
    if (n > 4 && strncmp(name + n - 4, "_mpi", 4) == 0)
        n -= 4;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), name);
}

/* Records a test whose rows are left out (once each). */
static void other_test(tc_nccl_file *f, const char *name)
{
    add_kind(f->others, sizeof f->others, name);
}

/* The line without a launcher's prefix, where it has one:
 *  - Open MPI's mpirun --tag-output: "[JOBID,RANK]<stdout>:" (also
 *    <stderr>, <stddiag>; orte/mca/iof/base/iof_base_output.c of
 *    open-mpi/ompi v4, commit 34d089db: "[%s,%s]<%s>:"; PRRTE's, for Open
 *    MPI 5, is the same);
 *  - Slurm's srun --label: the task's number padded to a width, ": "
 *    ("%*d: ", "%0*d: " in older versions; "P%u %*d: " for a component of
 *    a heterogeneous job; SchedMD/slurm src/common/write_labelled_message.c,
 *    commit 1d32d815, and its later _build_label).
 * No row of nccl-tests starts with either. */
static const char *strip_prefix(const char *p)
{
    if (p[0] == '[') {
        const char *q = strchr(p, ']');
        if (q && memchr(p, ',', (size_t)(q - p))) {
            static const char *const streams[] = {"<stdout>:", "<stderr>:", "<stddiag>:"};
            for (int i = 0; i < 3; i++)
                if (strncmp(q + 1, streams[i], strlen(streams[i])) == 0)
                    return q + 1 + strlen(streams[i]);
        }
        return p;
    }
    const char *q = p;
    if (q[0] == 'P' && isdigit((unsigned char)q[1])) {
        q++;
        while (isdigit((unsigned char)*q))
            q++;
        if (*q != ' ')
            return p;
    }
    while (*q == ' ')
        q++;
    const char *d = q;
    while (isdigit((unsigned char)*q))
        q++;
    return q > d && q[0] == ':' && q[1] == ' ' ? q + 2 : p;
}

/* "NCCL version A.B.C" in NCCL's log (its init line) as a version code. */
static int nccl_version_in(const char *p)
{
    const char *v = strstr(p, "NCCL version ");
    int a, b, c;
    if (!v || sscanf(v + 13, "%d.%d.%d", &a, &b, &c) != 3 || a < 0 || b < 0 || c < 0 || a > 99 || b > 99 || c > 99)
        return 0;
    return a <= 2 && b <= 8 ? a * 1000 + b * 100 + c : a * 10000 + b * 100 + c;
}

static tc_status add_row(tc_nccl_row **v, size_t *nv, size_t *cap, const tc_nccl_row *r, tc_err *err)
{
    if (*nv == *cap) {
        size_t c = *cap ? 2 * *cap : 32;
        tc_nccl_row *w = realloc(*v, c * sizeof *w);
        if (!w)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        *v = w;
        *cap = c;
    }
    (*v)[(*nv)++] = *r;
    return TC_OK;
}

/* A reader's end: its rows v into f where st is TC_OK, else freed. */
static tc_status keep_rows(tc_nccl_file *f, tc_nccl_row *v, size_t nv, tc_status st)
{
    if (st) {
        free(v);
        return st;
    }
    f->rows = v;
    f->n = nv;
    return TC_OK;
}

/* The refusal of a file that names its tests and holds none of test's:
 * held, the tests it holds, ", "-separated (the first one's place:
 * where): the --op of each that topocc predicts. */
static tc_status not_the_test(const char *path, const char *test, const char *held, const char *where, tc_err *err)
{
    char ops[160] = "";
    size_t n = 0;
    for (const char *p = held; *p;) {
        size_t len = strcspn(p, ",");
        for (int op = 0; op < TC_OP_COUNT; op++)
            if (strlen(programs[op]) == len && strncmp(p, programs[op], len) == 0)
                n += (size_t)snprintf(ops + n, n < sizeof ops ? sizeof ops - n : 0, "%s--op %s", n ? " or " : "",
                                      tc_op_name((tc_op)op));
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (ops[0])
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s holds the output of %s (%s), the prediction is of %s: give %s",
                       path, held, where, test, ops);
    return tc_fail(err, TC_EINVAL,
                   "nccl-tests file %s holds the output of %s (%s), which topocc does not predict (it predicts "
                   "all_reduce_perf, reduce_scatter_perf, all_gather_perf, alltoall_perf, broadcast_perf, reduce_perf "
                   "and sendrecv_perf)",
                   path, held, where);
}

/* One row of nccl-tests' text (tok: its fields) in layout lay into *r. */
static tc_status text_row(char **tok, int nt, const nt_layout *lay, bool header, const char *path, long lineno,
                          tc_nccl_row *r, tc_err *err)
{
    /* size count type [redop] [root] time algbw busbw #wrong (or error)
     * [in-place ...] */
    double cnt, root = 0, t, alg, bus;
    int k = 3; /* the next column's token */
    const char *redop = NULL;
    double x0;
    if (lay->redop && nt > k && !num(tok[k], &x0))
        redop = tok[k++];
    if (nt < k + (lay->root ? 5 : 4) || !num(tok[0], &r->bytes) || !num(tok[1], &cnt) ||
        (lay->root && !num(tok[k++], &root)) || !num(tok[k], &t) || !num(tok[k + 1], &alg) || !num(tok[k + 2], &bus) ||
        r->bytes < 0 || t < 0 || bus < 0)
        return tc_fail(err, TC_EINVAL,
                       "nccl-tests file %s line %ld: expected a row 'size count type %s%stime algbw busbw #wrong "
                       "...'%s (or a comment starting with '#')",
                       path, lineno, lay->redop ? "redop " : "", lay->root ? "root " : "",
                       header ? ", the columns its column header names" : "");
    /* numbers nccl-tests can print: whole sizes and counts up to 2^60
     * bytes, a bus bandwidth below 10^6 GB/s */
    const char *bad = r->bytes != floor(r->bytes) || r->bytes > 1152921504606846976.0 ? "size"
                      : cnt < 0 || cnt != floor(cnt) || cnt > 1152921504606846976.0 ? "count"
                      : bus >= 1e6 || alg >= 1e6 || alg < 0 ? "bandwidth"
                      : t > 1e15 ? "time" : NULL;
    if (bad)
        return tc_fail(err, TC_EINVAL,
                       "nccl-tests file %s line %ld: %s %s is not one nccl-tests prints (sizes and counts are "
                       "whole numbers up to 2^60, bandwidths below 10^6 GB/s)",
                       path, lineno, bad, !strcmp(bad, "size") ? tok[0] : !strcmp(bad, "count") ? tok[1]
                                          : !strcmp(bad, "time") ? tok[k] : bus >= 1e6 ? tok[k + 2] : tok[k + 1]);
    /* a root as nccl-tests prints it ("%6i": -1 for the operations
     * without one); #wrong a count ("%6g") or N/A where nothing was
     * checked; algbw = size / time, both from one measured time (v2.19.6
     * src/common.cu:796, 858; from v2.13.0, whose rows have #wrong: before
     * it all-gather's and reduce-scatter's algbw was (n-1)/n of that, and
     * all-to-all's n times too low for most of 2020): a row read in the
     * wrong columns (one field missing) fails one of them */
    double wrong = 0;
    bool wrong_ok = !lay->wrong || nt <= k + 3 || strcmp(tok[k + 3], "N/A") == 0 ||
                    (num(tok[k + 3], &wrong) && wrong >= 0 && wrong == floor(wrong));
    double alg_of_time = t > 0 ? r->bytes / (t * lay->time_unit) / 1e9 : 0;
    const char *shifted = lay->root && (root != floor(root) || root < -1 || root >= 1e9) ? "root"
                          : !wrong_ok ? "#wrong"
                          : lay->wrong && !lay->cputime && t >= 1 && alg >= 1 && fabs(alg / alg_of_time - 1) > 0.05
                              ? "algbw"
                              : NULL;
    if (shifted) {
        bool is_root = !strcmp(shifted, "root"), is_wrong = !strcmp(shifted, "#wrong");
        return tc_fail(err, TC_EINVAL,
                       "nccl-tests file %s line %ld: %s %s is not one nccl-tests prints (%s): a field missing or one "
                       "too many? expected 'size count type %s%stime algbw busbw #wrong ...'",
                       path, lineno, shifted, is_root ? tok[k - 1] : is_wrong ? tok[k + 3] : tok[k + 1],
                       is_root ? "a whole number, -1 for no root" : is_wrong ? "a whole count or N/A" : "size / time",
                       lay->redop ? "redop " : "", lay->root ? "root " : "");
    }
    r->time_s = t * lay->time_unit;
    r->busbw_Bps = bus * 1e9;
    r->has_root = lay->root;
    r->root = lay->root && root >= 0 ? (long)root : -1;
    r->wrong = wrong > 0;
    snprintf(r->type, sizeof r->type, "%s", tok[2]);
    /* no redop printed: an operation without a reduction (nccl-tests
     * names the reductions' operator in every version) */
    if (redop)
        snprintf(r->redop, sizeof r->redop, "%s", redop);
    else
        r->no_redop = true;
    return TC_OK;
}

/* nccl-tests' text output (tc_nccl_tests_load). */
/* One run of nccl-tests in a text log: from its "# nThread" line (or a
 * test's start or end) to the next; its "#  Rank" lines. */
typedef struct nt_run {
    long max_rank, rank_line; /* the highest rank listed and its line; -1: none */
    long per_proc;            /* ranks a process: nThread x nGpus of its header; 0: not given */
    size_t first;             /* its first row among those kept */
} nt_run;

/* Ends run r: its rows take the ranks it lists. nccl-tests numbers a
 * process's ranks proc x nThreads x nGpus + i and prints them into one
 * buffer of MAX_LINE = 2,048 bytes a process, cutting what does not fit
 * (v2.19.6 src/util.cu:668-693), so past about 20 ranks a process the last
 * ones of each process are missing: the ranks are then the whole processes
 * up to the highest rank listed. */
static void end_run(nt_run *r, tc_nccl_row *v, size_t nv)
{
    long ranks = r->max_rank + 1;
    if (r->max_rank >= 0 && r->per_proc > 0)
        ranks = (r->max_rank / r->per_proc + 1) * r->per_proc;
    for (size_t i = r->first; i < nv; i++)
        if (r->max_rank >= 0 && ranks <= (long)UINT32_MAX)
            v[i].ranks = (uint32_t)ranks, v[i].ranks_line = r->rank_line;
    *r = (nt_run){.max_rank = -1, .rank_line = -1, .first = nv};
}

static tc_status read_text(FILE *in, const char *path, const char *test, tc_nccl_file *f, tc_err *err)
{
    tc_nccl_row *v = NULL;
    size_t nv = 0, cap = 0;
    char line[4096];
    long lineno = 0, first_other = 0;
    bool table_only = false;
    /* without a column header, the layout of v2.13 and later */
    nt_layout lay = {.redop = true, .root = true, .wrong = true, .time_unit = 1e-6};
    bool header = false, named = false;
    char section[48] = ""; /* the test whose rows follow ("": not named) */
    nt_run run = {.max_rank = -1, .rank_line = -1};
    tc_status st = TC_OK;
    while (st == TC_OK && in && fgets(line, sizeof line, in)) {
        lineno++;
        size_t len = strlen(line);
        /* fgets stops at a newline, a full buffer or the end: a line that
         * ends before any of them holds a NUL byte */
        if (len < sizeof line - 1 && (len == 0 || line[len - 1] != '\n') && !feof(in)) {
            st = tc_fail(err, TC_EINVAL, "nccl-tests file %s line %ld: holds a NUL byte: expected nccl-tests' text output",
                         path, lineno);
            break;
        }
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = tc_fail(err, TC_EINVAL, "nccl-tests file %s line %ld: longer than %zu bytes", path, lineno,
                         sizeof line - 2);
            break;
        }
        char *p = (char *)strip_prefix(line);
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '#') {
            const char *c = p + 1;
            while (*c == ' ')
                c++;
            int hdr_code = 0;
            char tv[24];
            if (strncmp(p, "# topocc: table-only", 20) == 0)
                table_only = true;
            else if (strncmp(p, "# topocc:", 9) == 0)
                ; /* a note (tests/data/nccl-tests/), whatever words it uses */
            else if (strncmp(c, "Collective test starting:", 25) == 0) {
                /* v2.16.7 and later (src/common.cu, then src/util.cu) */
                const char *n = c + 25;
                while (*n == ' ')
                    n++;
                program_of(n, section, sizeof section);
                named = true;
                end_run(&run, v, nv);
            } else if (strncmp(c, "Collective test concluded:", 26) == 0) {
                section[0] = '\0'; /* rows after it are of no test named */
                end_run(&run, v, nv);
            } else if (strncmp(c, "nThread ", 8) == 0) {
                /* every run's first header line, every version */
                end_run(&run, v, nv);
                unsigned nth, ngp;
                if (sscanf(c, "nThread %u nGpus %u", &nth, &ngp) == 2 && nth > 0 && ngp > 0 && nth <= 1u << 20 &&
                    ngp <= 1u << 20)
                    run.per_proc = (long)nth * (long)ngp;
            } else if (sscanf(c, "nccl-tests version %23s nccl-headers=%*d nccl-library=%d", tv, &hdr_code) == 2) {
                /* v2.17.4 and later: the library the run loaded */
                snprintf(f->tests_version, sizeof f->tests_version, "%s", tv);
                f->nccl_code = hdr_code;
            } else if (column_header(p + 1, &lay))
                header = true; /* the rows after it are in its layout */
            else {
                long r;
                if (rank_line(p + 1, &r) && r > run.max_rank)
                    run.max_rank = r, run.rank_line = lineno;
            }
            continue;
        }
        if (!*p)
            continue;
        /* NCCL's own log lines interleaved with the table (NCCL_DEBUG) */
        if (strstr(p, "NCCL INFO") || strstr(p, "NCCL WARN") || strstr(p, "NCCL version")) {
            if (!f->nccl_code)
                f->nccl_code = nccl_version_in(p);
            continue;
        }
        char *tok[32];
        int nt = tokens(p, tok, 32);
        tc_nccl_row r = {.line = lineno, .root = -1};
        double x;
        if (table_only) {
            if (nt != 2 || !num(tok[0], &r.bytes) || !num(tok[1], &x) || !(r.bytes > 0) || x < 0 ||
                r.bytes != floor(r.bytes) || r.bytes > 1152921504606846976.0 || x >= 1e6) {
                st = tc_fail(err, TC_EINVAL,
                             "nccl-tests file %s line %ld: expected 'size_bytes busbw_GBps' after '# topocc: table-only' "
                             "(a whole size up to 2^60, a bus bandwidth below 10^6 GB/s)",
                             path, lineno);
                break;
            }
            r.busbw_Bps = x * 1e9;
        } else {
            if (!num(tok[0], &x)) { /* a launcher's line, or nccl-tests' own messages */
                if (f->unread < 3)
                    f->unread_line[f->unread] = lineno;
                f->unread++;
                continue;
            }
            if (test && section[0] && strcmp(section, test) != 0) {
                other_test(f, section);
                if (!f->other_rows++)
                    first_other = lineno;
                continue;
            }
            if ((st = text_row(tok, nt, &lay, header, path, lineno, &r, err)))
                break;
        }
        if (!(r.bytes > 0))
            continue; /* nccl-tests prints size 0 rows; nothing to predict */
        if (section[0])
            snprintf(f->test, sizeof f->test, "%s", section);
        if (r.wrong && !f->wrong++)
            f->wrong_line = r.line;
        st = add_row(&v, &nv, &cap, &r, err);
    }
    end_run(&run, v, nv);
    if (st == TC_OK && in && ferror(in))
        st = tc_fail(err, TC_EINVAL, "nccl-tests file %s: read error", path);
    if (st == TC_OK && nv == 0 && named && f->others[0]) {
        char where[32];
        snprintf(where, sizeof where, "line %ld", first_other);
        st = not_the_test(path, test, f->others, where, err);
    }
    if (st == TC_OK && nv == 0)
        st = f->unread ? tc_fail(err, TC_EINVAL,
                                 "nccl-tests file %s: no result rows (lines 'size count type redop root time algbw busbw "
                                 "...'); line %ld, the first of %zu others, is not one",
                                 path, f->unread_line[0], f->unread)
                       : tc_fail(err, TC_EINVAL,
                                 "nccl-tests file %s: no result rows (lines 'size count type redop root time algbw busbw "
                                 "...')",
                                 path);
    return keep_rows(f, v, nv, st);
}

/* s into buf, its control characters as '?' (a message stays one line). */
static void printable(char *buf, size_t len, const char *s)
{
    size_t n = 0;
    for (; s[n] && n + 1 < len; n++)
        buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    buf[n] = '\0';
}

/* A JSON number, or nccl-tests' "nan" (jsonDouble writes a NaN so): NAN;
 * false where the value is neither. */
static bool json_num(const json_t *j, double *out)
{
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return isfinite(*out);
    }
    if (json_is_string(j) && strcmp(json_string_value(j), "nan") == 0) {
        *out = NAN;
        return true;
    }
    return false;
}

/* nccl-tests' JSON report (-J, src/util.cu from v2.17.3: jsonOutputInit,
 * writeDeviceReport, writeBenchmarkLine*; format versions 1 to 3 up to
 * v2.19.6): {version, args, env, nccl_version, config {nthreads, ngpus,
 * devices [one per process]}, results [{size, count, type, redop, root,
 * out_of_place {time or cpu_time, alg_bw, bus_bw, nwrong}, in_place}],
 * ...}. */
static tc_status read_json(const char *buf, size_t len, const char *path, const char *test, tc_nccl_file *f,
                           tc_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s line %d: not a JSON report nccl-tests writes (-J): %s", path,
                       je.line, je.text);
    tc_status st = TC_OK;
    tc_nccl_row *v = NULL;
    size_t nv = 0, cap = 0;
    const json_t *ver = json_object_get(root, "version"), *res = json_object_get(root, "results");
    json_int_t version = json_is_integer(ver) ? json_integer_value(ver) : 0;
    if (!json_is_object(root) || version < 1 || version > 3 || !json_is_array(res)) {
        st = tc_fail(err, TC_EINVAL,
                     "nccl-tests file %s: not a JSON report nccl-tests writes (-J): read are its versions 1 to 3 "
                     "(nccl-tests v2.17.3 to v2.19.6), an object with \"version\" and a \"results\" list",
                     path);
        goto done;
    }
    f->json = (int)version;
    const json_t *args = json_object_get(root, "args"), *a0 = json_array_get(args, 0);
    if (json_is_string(a0))
        program_of(json_string_value(a0), f->test, sizeof f->test);
    const json_t *nv_j = json_object_get(root, "nccl_version");
    if (json_is_integer(nv_j) && json_integer_value(nv_j) > 0 && json_integer_value(nv_j) < 1000000)
        f->nccl_code = (int)json_integer_value(nv_j);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(root, "env"), i, e) {
        const char *kv = json_is_string(e) ? json_string_value(e) : "";
        for (size_t h = 0; h < sizeof honoured / sizeof *honoured; h++) {
            size_t n = strlen(honoured[h]), used = strlen(f->env);
            if (strncmp(kv, honoured[h], n) != 0 || kv[n] != '=' || used + strlen(kv) + 2 >= sizeof f->env)
                continue;
            /* one "K=V" a line, V's control characters shown as '?' */
            for (const char *c = kv; *c; c++)
                f->env[used++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
            f->env[used++] = '\n';
            f->env[used] = '\0';
        }
    }
    const json_t *cfg = json_object_get(root, "config"), *dev = json_object_get(cfg, "devices");
    const json_t *th = json_object_get(cfg, "nthreads"), *gp = json_object_get(cfg, "ngpus");
    if (json_is_array(dev) && json_is_integer(th) && json_is_integer(gp) && json_integer_value(th) > 0 &&
        json_integer_value(gp) > 0) {
        double ranks = (double)json_array_size(dev) * (double)json_integer_value(th) * (double)json_integer_value(gp);
        if (ranks >= 1 && ranks < 1 << 24)
            f->ranks = (uint32_t)ranks;
    }
    if (test && f->test[0] && strcmp(f->test, test) != 0) {
        st = not_the_test(path, test, f->test, "its args", err);
        goto done;
    }
    json_array_foreach(res, i, e) {
        tc_nccl_row r = {.line = (long)i + 1, .json = true, .root = -1};
        const json_t *oop = json_object_get(e, "out_of_place");
        const json_t *t = json_object_get(oop, "time") ? json_object_get(oop, "time") : json_object_get(oop, "cpu_time");
        const json_t *type = json_object_get(e, "type"), *redop = json_object_get(e, "redop");
        double bytes = -1, tm = 0, bus = 0;
        const json_t *size = json_object_get(e, "size");
        if (json_is_integer(size))
            bytes = (double)json_integer_value(size);
        if (!json_is_object(e) || bytes < 0 || bytes > 1152921504606846976.0 || !json_is_string(type) ||
            !json_is_string(redop) || !json_is_object(oop) || !json_num(t, &tm) ||
            !json_num(json_object_get(oop, "bus_bw"), &bus) || tm < 0 || bus < 0 || bus >= 1e6 || tm > 1e15) {
            st = tc_fail(err, TC_EINVAL,
                         "nccl-tests file %s: result %zu is not one nccl-tests writes: expected \"size\" (a whole "
                         "number of bytes), \"type\", \"redop\" and \"out_of_place\" with \"time\" (or \"cpu_time\") "
                         "and \"bus_bw\"",
                         path, i + 1);
            goto done;
        }
        r.bytes = bytes;
        r.time_s = isnan(tm) ? 0 : tm * 1e-6;
        r.busbw_Bps = isnan(bus) ? 0 : bus * 1e9;
        printable(r.type, sizeof r.type, json_string_value(type));
        printable(r.redop, sizeof r.redop, json_string_value(redop));
        const json_t *rt = json_object_get(e, "root"); /* the printed field, "%6i" */
        char *end;
        long rv = json_is_string(rt) ? strtol(json_string_value(rt), &end, 10) : json_is_integer(rt) ? (long)json_integer_value(rt) : -1;
        if (json_is_string(rt) && *end)
            rv = -1;
        r.root = rv >= 0 && rv < 1000000000L ? rv : -1;
        r.has_root = rt != NULL;
        r.ranks = f->ranks;
        if (!(r.bytes > 0))
            continue;
        const json_t *nw = json_object_get(oop, "nwrong");
        r.wrong = json_is_number(nw) && json_number_value(nw) > 0;
        if (r.wrong && !f->wrong++)
            f->wrong_line = r.line;
        if ((st = add_row(&v, &nv, &cap, &r, err)))
            goto done;
    }
    if (nv == 0)
        st = tc_fail(err, TC_EINVAL, "nccl-tests file %s: no results of a size above 0", path);
done:
    json_decref(root);
    return keep_rows(f, v, nv, st);
}

/* The file's bytes, whole (a pipe or a FIFO too: nothing is read twice). */
#define NT_MAX_BYTES ((size_t)512 * 1024 * 1024)
static tc_status slurp(const char *path, char **buf, size_t *len, tc_err *err)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(in), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(in);
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s: a directory: give the file of a run's output", path);
    }
    errno = 0;
    int rc = tc_read_stream(in, NT_MAX_BYTES, false, buf, len);
    fclose(in);
    if (rc == EFBIG)
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s: larger than %zu MiB", path, NT_MAX_BYTES >> 20);
    if (rc == ENOMEM)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (rc)
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s: cannot read it: %s", path, strerror(rc));
    return TC_OK;
}

tc_status tc_nccl_tests_load(const char *path, const char *test, tc_nccl_file *f, tc_err *err)
{
    memset(f, 0, sizeof *f);
    char *buf = NULL;
    size_t len = 0;
    tc_status st = slurp(path, &buf, &len, err);
    if (st)
        return st;
    /* a UTF-8 byte-order mark, as some editors save, is no content */
    size_t at = len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0, i = at;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    /* a JSON report starts with '{' (nccl-tests writes one object; a
     * line of text starts with '[' where Open MPI tags it) */
    if (i < len && buf[i] == '{') {
        st = read_json(buf + at, len - at, path, test, f, err);
    } else {
        FILE *in = len - at ? fmemopen(buf + at, len - at, "r") : NULL;
        if (len - at && !in)
            st = tc_fail(err, TC_EINTERNAL, "nccl-tests file %s: %s", path, strerror(errno));
        else {
            st = read_text(in, path, test, f, err);
            if (in)
                fclose(in);
        }
    }
    free(buf);
    if (st == TC_OK && !f->json)
        for (size_t k = 0; k < f->n && !f->ranks; k++)
            f->ranks = f->rows[k].ranks; /* the first run's; tc_nccl_file_ranks checks them all */
    if (st)
        tc_nccl_file_free(f);
    return st;
}
