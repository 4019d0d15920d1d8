/*
 * nccl_tests.c - `topocc nccl-tests`: nccl-tests' command line in, its
 * output out (docs/NCCL_TESTS.md). The flags become a collective scenario
 * (the same evaluation as `topocc collective --sizes`); the size sweep is
 * printed in nccl-tests' columns; --compare reads a saved nccl-tests output
 * and prints predicted against measured bus bandwidth, size by size. The
 * output options are collective's, except that --out gets what stdout gets
 * and --scenario is refused (the flags are the scenario).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include "cli/cli.h"
#include "cli/progress.h"
#include "topocc/nccl_tests.h"
#include "topocc/place.h"
#include "topocc/outcome_net.h"
#include "topocc/render.h"

static const char *help =
    "usage: topocc nccl-tests (--preset NAME[:nodes=N] | --topo SPEC) [--op OP] -b MIN -e MAX [-f F] [-i STEP]\n"
    "                         [--np PROCS] [-t THREADS] [-g GPUS] [-d TYPE] [-o REDOP] [-r ROOT]\n"
    "                         [--algo ALGO]\n"
    "                         [--mode formula|steps|flow] [--routing R] [--group SPEC] [--compare FILE [--fit]]\n"
    "                         [--profiles DIR] [--format table|csv|json] [--out FILE] [--out-dir DIR]\n"
    "                         [--quiet] [--print-scenario]\n"
    "\n"
    "Predicts what nccl-tests (all_reduce_perf, all_gather_perf, ...) would print on the\n"
    "cluster: its columns in its order, bus bandwidth as nccl-tests computes it, the\n"
    "'# Avg bus bandwidth' line. Ranks are nodes x GPUs per node (-t x -g: the first t x g of\n"
    "each node; default all). NCCL's algorithms (--algo nccl, the default, nccl-ring, ...) with -g\n"
    "below the node size on several nodes run on NCCL's communicator of the g GPUs of each node,\n"
    "each with its NIC, as over a --group's group (with --group: each group's communicator).\n"
    "-n -w -c -m -a -G -z -p -N -y -T -C -R -S -I -K -M -u -x and their long names take a value\n"
    "and are accepted and ignored (they change how nccl-tests measures or reports, not what is\n"
    "predicted); -D and -V need NCCL 2.28 and are refused.\n"
    "  --op OP        allreduce (default), allgather, reducescatter, broadcast, reduce, alltoall,\n"
    "                 sendrecv (the binary); --op sum|prod|min|max|avg is nccl-tests' long form of -o\n"
    "  -b, -e         sizes from MIN to MAX (default 32M, 32M); 8, 1K, 8M, 8G. A size of zero whole elements\n"
    "                 per rank prints as nccl-tests prints it, a row of size 0 (docs/NCCL_TESTS.md)\n"
    "  -f, -i         as nccl-tests: -f F above 1 gives MIN, MIN*F, ... (-i unused); else MIN,\n"
    "                 MIN+STEP, ... with STEP -i's bytes (default -f 1, -i 1M: -b 1M -e 4M gives 1M, 2M,\n"
    "                 3M, 4M)\n"
    "  -t T, -g G     T threads of G GPUs each: the first T x G GPUs of each node (nccl-tests' ranks are\n"
    "                 processes x threads x GPUs; one process a node here); without either, all of them;\n"
    "                 the header prints them as nThread and nGpus\n"
    "  --np N         MPI processes (mpirun -np N): ranks = N x T x G, spread evenly over the nodes (mpirun\n"
    "                 -np 16 ... -g 1 on two 8-GPU nodes is --np 16 -g 1); without it, one process a node\n"
    "  -d TYPE        float (default), half, bfloat16, double, int8, uint8, int32, uint32, int64, uint64,\n"
    "                 f8e4m3, f8e5m2 (nccl-tests' names)\n"
    "  -o REDOP       sum (default), prod, min, max, avg: timed as sum; NCCL's choice takes NVLS only\n"
    "                 where NCCL has a kernel for the type and operator\n"
    "  -r ROOT        root of broadcast and reduce (default 0); ignored by the others, as nccl-tests\n"
    "  --algo ALGO    default nccl (NCCL's choice of algorithm and protocol); any one algorithm of\n"
    "                 collective\n"
    "  --routing R    as collective's: Clos: ecmp (the default in steps and flow) or dmodk (formula's,\n"
    "                 which refuses ecmp); torus: dor (default), dor-positive, detour or line\n"
    "  --group SPEC   run it in every group of the ranks at once, as nccl-tests over sub-communicators:\n"
    "                 node, stride=S (e.g. the data-parallel groups, stride=8 on 8-GPU nodes), block=K,\n"
    "                 axes=LIST (topocc collective --group); count, algbw and busbw are one group's (busbw\n"
    "                 with the group's rank count), time the slowest group's; NCCL's algorithms run on\n"
    "                 each group's communicator (its ranks' nodes and NICs), the groups contending\n"
    "  --compare FILE a saved nccl-tests output: predicted against measured, per size, with\n"
    "                 the error; without -b/-e the file's sizes are predicted. The run's log as it\n"
    "                 is (Open MPI's and srun's line prefixes, NCCL's and the launcher's lines, several\n"
    "                 tests: the --op's rows are compared) or nccl-tests' JSON report (-J). Its rows'\n"
    "                 type and redop, and the ranks it lists, must be the run's\n"
    "  --fit          with --compare: calibrate the cluster's NICs to the file (docs/MODEL.md,\n"
    "                 \"Calibrating a transport\"): the per-step network latency of LL, LL128 and Simple\n"
    "                 and the share of the line rate reached that bring the prediction closest to it\n"
    "                 (mean |ln(predicted/measured busbw)|); prints them as net_lat= and net_eff= for\n"
    "                 --topo or the preset, then compares with them. Formula mode, about 800\n"
    "                 predictions: seconds, on a few nodes as on two GB200 NVL72 racks. On a sendrecv\n"
    "                 run: the rate one point-to-point channel reaches, p2p_bw= on one node,\n"
    "                 p2p_net_bw= across nodes (docs/MODEL.md \"sendrecv\")\n"
    "  --format F     table (default): nccl-tests' text; csv: collective's sizes table of the\n"
    "                 same run (one size too); json: collective's sizes document (one size too)\n"
    "  --out FILE     also write what stdout gets to FILE (whole or not at all)\n"
    "  -J FILE.json   also write nccl-tests' JSON report of the prediction (its format 3, as\n"
    "                 nccl-tests -J writes it; --compare reads it back)\n"
    "  --out-dir DIR  write collective's tables as DIR/<table>.csv and DIR/scenario.json\n"
    "  --quiet        no progress reports on stderr (a long run, a flow simulation, shows them)\n"
    "  --print-scenario  print the collective scenario the flags make, do not run it:\n"
    "                 topocc collective --scenario FILE runs it (nccl-tests takes no --scenario)\n"
    "\n"
    "example:\n"
    "  topocc nccl-tests --preset dgx-h100:nodes=2 --op allreduce -b 8 -e 8G -f 2\n";

typedef struct nt_in {
    const char *preset, *topo, *profiles, *op, *b, *e, *f, *i, *g, *t, *np, *d, *o, *r, *algo, *mode, *compare,
        *routing, *group, *json_out;
    const char *format, *out, *out_dir, *scenario; /* collective's output options */
    bool quiet, print_scenario, fit;
    const char *const *args; /* nccl-tests' arguments as given (after the command's name) */
    size_t nargs;
} nt_in;

/* nccl-tests' size argument: a number with an optional K, M, G suffix
 * (powers of 2, as its parsesize does). */
static tc_status nt_size(const char *s, const char *flag, double *out, tc_err *err)
{
    char *end;
    double v = strtod(s, &end);
    double m = 1;
    if (*end == 'K' || *end == 'k')
        m = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        m = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        m = 1024.0 * 1024 * 1024, end++;
    if (end == s || *end || !(v > 0) || !isfinite(v))
        return tc_fail(err, TC_EINVAL, "invalid %s '%s': expected a size in bytes with an optional K, M or G, e.g. 8M",
                       flag, s);
    *out = v * m;
    return TC_OK;
}

static tc_status nt_dtype(const char *d, const char **out, tc_err *err)
{
    static const char *const map[][2] = {{"float", "float32"}, {"half", "fp16"},     {"bfloat16", "bf16"},
                                         {"double", "fp64"},   {"int8", "int8"},     {"f8e4m3", "fp8"},
                                         {"uint8", "uint8"},   {"int32", "int32"},   {"uint32", "uint32"},
                                         {"int64", "int64"},   {"uint64", "uint64"}, {"f8e5m2", "fp8e5m2"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(d, map[i][0]) == 0) {
            *out = map[i][1];
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL,
                   "invalid -d '%s': accepted are float, half, bfloat16, double, int8, uint8, int32, uint32, int64, "
                   "uint64, f8e4m3, f8e5m2",
                   d);
}

static tc_status parse(nt_in *in, int argc, char **argv, int first, bool *helped, tc_err *err)
{
    in->args = (const char *const *)argv + first;
    in->nargs = argc > first ? (size_t)(argc - first) : 0;
    /* nccl-tests v2.13.10's options that change how it measures, not what
     * is predicted (src/common.cu:715-739) */
    static const char *ignored[] = {"-n", "--iters", "-w", "--warmup_iters", "-c", "--check", "-m", "--agg_iters",
                                    "-a", "--average", "-G", "--cudagraph", "-z", "--blocking", "-p",
                                    "--parallel_init", "-N", "--run_cycles", "-y", "--stream_null", "-T",
                                    "--timeout", "-C", "--report_cputime", "-R", "--local_register",
                                    /* v2.17.0 to v2.19.6: output and measuring options; -x is ignored
                                     * by nccl-tests built against NCCL's headers below 2.27
                                     * (src/common.cu:1322-1332 at v2.19.6), as the 2.21.5 modelled */
                                    "-S", "--report_timestamps", "-I",
                                    "--per_iter_timing", "-K", "--per_iter_skip", "-M", "--memory", "-u",
                                    "--unalign", "-x", "--cta_policy", NULL};
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *helped = true;
            return TC_OK;
        }
        bool *sw = !strcmp(a, "--quiet")            ? &in->quiet
                   : !strcmp(a, "--print-scenario") ? &in->print_scenario
                   : !strcmp(a, "--fit")            ? &in->fit
                                                    : NULL;
        if (sw) {
            if (*sw)
                return tc_fail(err, TC_EINVAL, "option %s given twice", a);
            *sw = true;
            continue;
        }
        /* nccl-tests' long form of -o is --op: a reduction operator there
         * (topocc's --op names the collective, which nccl-tests' binary
         * does) */
        tc_redop rop;
        if (!strcmp(a, "--op") && i + 1 < argc && tc_redop_parse(argv[i + 1], &rop)) {
            if (in->o)
                return tc_fail(err, TC_EINVAL, "option -o given twice (--op %s is nccl-tests' -o)", argv[i + 1]);
            in->o = argv[++i];
            continue;
        }
        struct {
            const char *flag;
            const char **dst;
        } t[] = {{"--preset", &in->preset}, {"--topo", &in->topo},       {"--profiles", &in->profiles},
                 {"--op", &in->op},         {"-b", &in->b},              {"--minbytes", &in->b},
                 {"-e", &in->e},            {"--maxbytes", &in->e},      {"-f", &in->f},
                 {"--stepfactor", &in->f},  {"-i", &in->i},              {"--stepbytes", &in->i},
                 {"-g", &in->g},            {"--ngpus", &in->g},         {"-t", &in->t},
                 {"--nthreads", &in->t},    {"--np", &in->np},           {"-np", &in->np},
                 {"-d", &in->d},            {"--datatype", &in->d},      {"-o", &in->o},
                 {"--op-redop", &in->o},    {"-r", &in->r},              {"--root", &in->r},
                 {"--algo", &in->algo},     {"--mode", &in->mode},       {"--compare", &in->compare},
                 {"--routing", &in->routing}, {"--group", &in->group},  {"--format", &in->format},
                 {"--out", &in->out},       {"--out-dir", &in->out_dir}, {"--scenario", &in->scenario},
                 {"-J", &in->json_out},     {"--output_file", &in->json_out}};
        bool done = false;
        for (size_t k = 0; k < sizeof t / sizeof *t && !done; k++)
            if (!strcmp(a, t[k].flag)) {
                if (i + 1 >= argc || !argv[i + 1][0])
                    return tc_fail(err, TC_EINVAL, "%s needs a value (see topocc nccl-tests --help)", a);
                if (*t[k].dst)
                    return tc_fail(err, TC_EINVAL, "option %s given twice (it takes one value)", a);
                *t[k].dst = argv[++i];
                done = true;
            }
        for (size_t k = 0; ignored[k] && !done; k++)
            if (!strcmp(a, ignored[k])) {
                if (i + 1 >= argc)
                    return tc_fail(err, TC_EINVAL, "%s needs a value (see topocc nccl-tests --help)", a);
                i++;
                done = true;
            }
        /* -D and -V: nccl-tests refuses them below NCCL 2.28 (src/common.cu:1334-1353 at v2.19.6) */
        if (!done && (!strcmp(a, "-D") || !strcmp(a, "--device_implementation") || !strcmp(a, "-V") ||
                      !strcmp(a, "--device_cta_count")))
            return tc_fail(err, TC_EINVAL, "%s: nccl-tests takes it from NCCL 2.28 on (NCCL's device API) and refuses it "
                                           "below; topocc models NCCL 2.21.5",
                           a);
        if (!done)
            return tc_fail(err, TC_EINVAL, "unknown nccl-tests option '%s' (see topocc nccl-tests --help)", a);
    }
    return TC_OK;
}

/* What build makes beside the scenario. */
typedef struct nt_built {
    tc_nccl_tests_header hdr; /* the header's values, where -b/-e gave the sizes */
    bool have_hdr;            /* else the sizes are the --compare file's */
    uint32_t comm_g;          /* > 0: -g GPUs of each of several nodes, run as NCCL's communicator of them */
    uint8_t *empty;           /* per size asked: no element per rank (hdr.empty; the scenario keeps the others) */
    double least;             /* with empty sizes: the smallest size that holds one element per rank */
    uint32_t comm_ranks;      /* the communicator's ranks (the job's, or one group's); 0 if unknown */
    char note[320];           /* hdr.note: what the empty rows' time is */
} nt_built;

static tc_status set1(tc_scenario *s, const char *flag, const char *v, tc_err *err)
{
    const char *vals[1] = {v};
    return tc_scenario_set_flag(s, flag, vals, 1, err);
}

/* A whole number of bytes, as nccl-tests keeps its sizes (size_t:
 * src/common.cu:762, 770 at v2.13.10 cast the parsed value). */
static tc_status nt_bytes(const char *s, const char *flag, double *out, tc_err *err)
{
    tc_status st = nt_size(s, flag, out, err);
    if (st == TC_OK && (*out = floor(*out)) < 1)
        st = tc_fail(err, TC_EINVAL, "invalid %s '%s': expected at least 1 byte", flag, s);
    /* as collective --size: at most 2^60 (beyond it bytes no longer fit
     * the whole elements the evaluators count) */
    if (st == TC_OK && *out > 0x1p60)
        st = tc_fail(err, TC_EINVAL, "invalid %s '%s': at most 2^60 bytes (1073741824G)", flag, s);
    return st;
}

/* The sizes nccl-tests would run for -b -e -f -i, as a list (at most
 * TC_SCN_MAX_SIZES), and the values its header prints. nccl-tests v2.13.10,
 * src/common.cu: defaults -b 32M, -e 32M, -i 1M (stepBytes), -f 1
 * (stepFactor) (lines 64-67); its loop (line 604) is
 *   for (size = minbytes; size <= maxbytes;
 *        size = stepfactor > 1 ? size * stepfactor : size + stepbytes)
 * so -f above 1 wins over -i, and without -f (or -f 1) the sizes step by
 * -i bytes. Each size is then cut to whole elements (setupArgs, line 573:
 * count = size / wordSize) and, for all-gather, reduce-scatter and
 * all-to-all, to a multiple of the ranks: the evaluator does that, as for
 * any size (docs/MODEL.md). -i is a size with K, M, G as -b and -e: v2.13.10
 * reads it with strtol (line 773, so "1M" would be 1 byte), v2.14.1 and
 * later with parsesize, as -b and -e. */
static tc_status nt_sizes(const nt_in *in, const tc_nccl_row *rows, size_t nrows, double **out, size_t *n,
                          tc_nccl_tests_header *hdr, bool *have_hdr, tc_err *err)
{
    *out = NULL;
    *n = 0;
    *have_hdr = false;
    tc_status st = TC_OK;
    if (!in->b && !in->e && rows) {
        double *v = malloc((nrows ? nrows : 1) * sizeof *v);
        if (!v)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (size_t i = 0; i < nrows && *n < TC_SCN_MAX_SIZES; i++)
            v[(*n)++] = rows[i].bytes;
        *out = v;
        return TC_OK;
    }
    double lo = 32 * 1024 * 1024, hi = lo, step = 1024 * 1024, f = 1;
    if ((in->b && (st = nt_bytes(in->b, "-b", &lo, err))) || (in->e && (st = nt_bytes(in->e, "-e", &hi, err))) ||
        (in->i && (st = nt_bytes(in->i, "-i", &step, err))))
        return st;
    if (!in->e)
        hi = lo > hi ? lo : hi;
    if (in->f) {
        char *end;
        f = strtod(in->f, &end);
        if (end == in->f || *end || !(f >= 1) || f != floor(f) || f > 1e6)
            return tc_fail(err, TC_EINVAL,
                           "invalid -f '%s': expected a whole step factor, 2 or more (1: step by -i bytes)", in->f);
    }
    if (hi < lo)
        return tc_fail(err, TC_EINVAL, "-e %s is below -b %s: give MAX >= MIN", in->e ? in->e : "(default 32M)",
                       in->b ? in->b : "(default 32M)");
    size_t cnt = 0;
    for (double x = lo; x <= hi && cnt <= TC_SCN_MAX_SIZES; x = f > 1 ? x * f : x + step)
        cnt++;
    /* a factor of 2 or more at least doubles: under 1,100 sizes to any
     * finite -e, so only steps of -i get here */
    if (cnt > TC_SCN_MAX_SIZES)
        return tc_fail(err, TC_EINVAL,
                       "-b %.0f -e %.0f in steps of %.0f bytes (-i%s) makes more than %d sizes: give a larger -i, or "
                       "-f F for MIN, MIN*F, ...",
                       lo, hi, step, in->i ? "" : ", 1M unless given: without -f nccl-tests steps by -i",
                       TC_SCN_MAX_SIZES);
    double *v = malloc(cnt * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (double x = lo; *n < cnt; x = f > 1 ? x * f : x + step)
        v[(*n)++] = x;
    *out = v;
    *hdr = (tc_nccl_tests_header){.ngpus = 1, .min_bytes = lo, .max_bytes = hi, .step = f > 1 ? f : step,
                                  .step_factor = f > 1};
    *have_hdr = true;
    return TC_OK;
}

/* A count of -g or -t: a whole number from 1. */
static tc_status nt_count(const char *v, const char *flag, const char *what, long *out, tc_err *err)
{
    char *end;
    *out = strtol(v, &end, 10);
    if (end == v || *end || *out < 1 || *out > 1 << 20)
        return tc_fail(err, TC_EINVAL, "invalid %s '%s': expected %s, a whole number from 1", flag, v, what);
    return TC_OK;
}

/* The scenario's topology's node size G (1 without scale-up nodes),
 * endpoints n and pods (a multidc's; 1 otherwise). */
static tc_status nt_shape(const tc_scenario *s, uint32_t *G, uint32_t *n, uint32_t *pods, tc_err *err)
{
    tc_topo *t = NULL;
    tc_status st = tc_topo_build(s->topo[0], &t, err);
    if (st)
        return st;
    *G = t->node_size > 1 ? t->node_size : 1;
    *n = t->n_endpoints;
    *pods = t->n_pods > 1 ? t->n_pods : 1;
    tc_topo_free(t);
    return TC_OK;
}

/* -t T -g G: T x G GPUs of every node, its first (every endpoint of a flat
 * topology): nccl-tests runs G GPUs in each of T threads of a process, one
 * process a node here. *split: the job's ranks where that is below the
 * node size on several nodes, else 0. */
static tc_status nt_place(tc_scenario *s, long g, uint32_t G, uint32_t n, uint32_t *split, tc_err *err)
{
    *split = 0;
    tc_status st;
    if ((uint32_t)g > G)
        return tc_fail(err, TC_EINVAL, "%ld GPUs a node (--np / nodes x -t x -g): the nodes have %u", g, G);
    if ((uint32_t)g == G)
        return TC_OK;
    *split = n / G > 1 ? n / G * (uint32_t)g : 0;
    size_t cap = (size_t)n * 12 + 1;
    char *list = malloc(cap);
    if (!list)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    size_t at = 0;
    for (uint32_t node = 0; node < n / G; node++)
        for (uint32_t i = 0; i < (uint32_t)g; i++)
            at += (size_t)snprintf(list + at, cap - at, "%s%u", at ? "," : "", node * G + i);
    st = set1(s, "--place", "list", err);
    if (st == TC_OK)
        st = set1(s, "--endpoints", list, err);
    free(list);
    return st;
}

static tc_status nt_empty(const nt_in *in, tc_scenario *s, nt_built *b, tc_err *err);

static tc_status build(const nt_in *in, tc_scenario *s, const tc_nccl_row *rows, size_t nrows, nt_built *b,
                       tc_err *err)
{
    tc_status st = TC_OK;
    if (!in->preset == !in->topo)
        return tc_fail(err, TC_EINVAL, "nccl-tests needs the cluster: --preset NAME[:nodes=N] or --topo SPEC (one)");
    if (in->profiles)
        st = set1(s, "--profiles", in->profiles, err);
    if (st == TC_OK)
        st = set1(s, in->preset ? "--preset" : "--topo", in->preset ? in->preset : in->topo, err);
    if (st == TC_OK)
        st = set1(s, "--op", in->op ? in->op : "allreduce", err);
    /* NCCL's own choice (its tuning model), as a real nccl-tests run would
     * get, for every operation (all-to-all and sendrecv: its grouped
     * send/recv, nccl-a2a; broadcast and reduce: its ring's chains) */
    const char *algo = in->algo ? in->algo : "nccl";
    /* nccl-tests passes -r to broadcast and reduce only (the others have
     * no root: their rows print -1) */
    tc_op rop_op = TC_OP_ALLREDUCE;
    tc_err e0;
    bool rooted = in->op && tc_op_parse(in->op, &rop_op, &e0) == TC_OK &&
                  (rop_op == TC_OP_BROADCAST || rop_op == TC_OP_REDUCE);
    /* -r: a rank, checked here so that its errors name -r, not the
     * algorithm's root= it becomes (its range once the ranks are known) */
    long root = 0;
    if (st == TC_OK && in->r && rooted) {
        char *end;
        errno = 0;
        root = strtol(in->r, &end, 10);
        if (!(in->r[0] >= '0' && in->r[0] <= '9') || *end || errno || root > INT32_MAX)
            st = tc_fail(err, TC_EINVAL, "invalid -r '%s': expected the root rank of %s, a whole number from 0",
                         in->r, tc_op_name(rop_op));
    }
    if (st == TC_OK) {
        /* nccl-tests' root rides on the algorithm: ALGO:root=R */
        char a[160];
        if (in->r && rooted)
            snprintf(a, sizeof a, "%s%sroot=%s", algo, strchr(algo, ':') ? "," : ":", in->r);
        else
            snprintf(a, sizeof a, "%s", algo);
        st = set1(s, "--algo", a, err);
    }
    const char *dt = "float32";
    if (st == TC_OK && in->d)
        st = nt_dtype(in->d, &dt, err);
    if (st == TC_OK)
        st = set1(s, "--dtype", dt, err);
    tc_redop rop;
    if (st == TC_OK && in->o && !tc_redop_parse(in->o, &rop))
        st = tc_fail(err, TC_EINVAL, "invalid -o '%s': accepted are sum, prod, min, max, avg", in->o);
    /* nccl-tests passes -o to the reductions and sendrecv only (the others
     * print none; sendrecv prints it and reduces nothing) */
    tc_op top = TC_OP_ALLREDUCE;
    tc_err e2;
    if (st == TC_OK && in->o && (!in->op || tc_op_parse(in->op, &top, &e2) == TC_OK) &&
        (top == TC_OP_ALLREDUCE || top == TC_OP_REDUCESCATTER || top == TC_OP_REDUCE || top == TC_OP_SENDRECV))
        st = set1(s, "--redop", in->o, err);
    if (st == TC_OK && in->mode)
        st = set1(s, "--mode", in->mode, err);
    if (st == TC_OK && in->routing)
        st = set1(s, "--routing", in->routing, err);
    if (st == TC_OK && in->group)
        st = set1(s, "--group", in->group, err);
    double *sizes = NULL;
    size_t n = 0;
    if (st == TC_OK)
        st = nt_sizes(in, rows, nrows, &sizes, &n, &b->hdr, &b->have_hdr, err);
    if (st == TC_OK) {
        free(s->sizes);
        s->sizes = sizes;
        s->nsizes = n;
        /* sizes set directly: a list, as a scenario file gives it */
    }
    if (st == TC_OK)
        st = tc_scenario_resolve(s, err);
    /* as collective reads --algo: all, or a list of several */
    if (st == TC_OK && (s->nalgos > 1 || strcmp(s->algos[0], "all") == 0))
        st = tc_fail(err, TC_EINVAL, "--algo %s: nccl-tests times one algorithm; give one (topocc collective --sizes "
                     "with --algo all or a list ranks several)", algo);
    long gpus = 1, threads = 1;
    if (st == TC_OK && in->g)
        st = nt_count(in->g, "-g", "GPUs a thread drives", &gpus, err);
    if (st == TC_OK && in->t)
        st = nt_count(in->t, "-t", "threads a process runs", &threads, err);
    long procs = 0;
    if (st == TC_OK && in->np)
        st = nt_count(in->np, "--np", "MPI processes (mpirun -np)", &procs, err);
    uint32_t G = 1, eps = 1, nodes = 1, pods = 1;
    if (st == TC_OK && (in->g || in->t || procs) && (st = nt_shape(s, &G, &eps, &pods, err)) == TC_OK)
        nodes = eps / G;
    if (st == TC_OK && procs && (procs * gpus * threads) % nodes)
        st = tc_fail(err, TC_EINVAL, "--np %ld x -t %ld x -g %ld = %ld ranks do not spread evenly over the %u nodes "
                     "(mpirun -np N -N M runs M processes a node: N = nodes x M)", procs, threads, gpus,
                     procs * gpus * threads, nodes);
    if (st == TC_OK && (in->g || in->t || procs)) {
        /* GPUs a node: its threads' GPUs, times its processes (--np over
         * the nodes, one process a node without it) */
        long gt = procs ? procs * gpus * threads / nodes : gpus * threads; /* each at most 2^20 */
        uint32_t g = gt > 1 << 20 ? 1u << 21 : (uint32_t)gt, split = 0;
        st = nt_place(s, (long)g, G, eps, &split, err);
        /* nccl-tests' header prints -t as nThread and -g as nGpus
         * (src/common.cu:917); ranks are processes x threads x GPUs
         * (:1005), one process a node here */
        b->hdr.ngpus = (uint32_t)gpus;
        b->hdr.nthreads = (uint32_t)threads;
        /* NCCL's algorithms map rank r to GPU r mod G of a whole node
         * (coll/nccl.c), so g of G GPUs on several nodes cannot run on the
         * cluster's nodes as they are. A real run's NCCL builds its
         * communicator from the GPUs it was given: g a node, each with its
         * NIC. That is the view NCCL gets over a sub-group
         * (tc_groups_nccl_view, docs/MODEL.md "NCCL over sub-groups"), so
         * the job runs as one group of all its ranks. */
        tc_coll_req q = {0};
        tc_err e3;
        bool nccl = tc_algo_parse(algo, &q, &e3) == TC_OK && tc_algo_is_nccl(q.algo);
        /* that view is one Clos: the communicator of every node's first
         * GPUs spans a multidc's pods, which it does not model
         * (tc_groups_nccl_view) */
        if (st == TC_OK && split && !in->group && nccl && pods > 1) {
            char given[96];
            snprintf(given, sizeof given, "%s%s%s%s%s%s", procs ? "--np " : "", procs ? in->np : "",
                     in->t ? (procs ? " -t " : "-t ") : "", in->t ? in->t : "",
                     in->g ? (procs || in->t ? " -g " : "-g ") : "", in->g ? in->g : "");
            st = tc_fail(err, TC_EINVAL,
                         "%s: NCCL's communicator of %u GPU%s of each %u-GPU node spans the %u pods of the multidc "
                         "topology, where topocc does not model NCCL's algorithms over a sub-group: use all %u GPUs "
                         "of each node (no -g, -t or --np below it), or an MPI-style --algo (ring, ...)",
                         given, g, g == 1 ? "" : "s", G, pods, G);
        }
        if (st == TC_OK && split && !in->group && nccl) {
            char spec[32];
            snprintf(spec, sizeof spec, "block=%u", split);
            st = set1(s, "--group", spec, err);
            b->comm_g = g;
        }
        if (st == TC_OK)
            st = tc_scenario_resolve(s, err);
    }
    if (st == TC_OK)
        st = nt_empty(in, s, b, err);
    if (st == TC_OK && in->r && rooted && b->comm_ranks && (uint32_t)root >= b->comm_ranks)
        st = tc_fail(err, TC_EINVAL, "invalid -r %ld: the root of %s is a rank of the communicator, 0 to %u (%u "
                                     "ranks%s)",
                     root, tc_op_name(rop_op), b->comm_ranks - 1, b->comm_ranks,
                     s->group.kind != TC_GROUP_NONE && !b->comm_g ? ", one group's" : "");
    if (st == TC_OK)
        st = tc_scenario_check_run(s, err);
    return st;
}

/* The ranks of the communicator a size is cut for: the job's, or with
 * --group one group's; 0 where the groups cannot be made (the run says
 * why). */
static tc_status nt_comm_ranks(const tc_scenario *s, uint32_t *P, tc_err *err)
{
    *P = 0;
    tc_topo *t = NULL;
    uint32_t *map = NULL, p = 0;
    tc_status st = tc_topo_build(s->topo[0], &t, err);
    if (st == TC_OK)
        st = tc_place_map(t, &s->job, &map, &p, err);
    if (st == TC_OK && s->group.kind != TC_GROUP_NONE) {
        tc_partition pt = {0};
        int nd = 0;
        uint32_t dims[TC_MAX_DIMS];
        uint8_t wrap[TC_MAX_DIMS];
        tc_err e2;
        if (tc_group_make(&s->group, p, map, t, &pt, &nd, dims, wrap, &e2) == TC_OK)
            *P = pt.ngroups ? pt.first[1] - pt.first[0] : 0;
        tc_partition_free(&pt);
    } else if (st == TC_OK) {
        *P = p;
    }
    free(map);
    tc_topo_free(t);
    return st;
}

/* Sizes that hold no element per rank once cut to whole elements (below one
 * element, or for all-gather, reduce-scatter and all-to-all below 16 bytes
 * per rank: tc_coll_rounded_bytes). nccl-tests runs them: its setupArgs
 * (src/common.cu:569-580 at v2.13.10) gives count 0, so the row prints size
 * max(sendBytes, expectedBytes) 0 and count 0, GetBw algbw and busbw 0
 * (count x type size / time), the time measured, and the next size follows
 * (src/common.cu:604-612). The scenario keeps the other sizes; the empty
 * ones are printed where they were asked (b->empty). What NCCL v2.21.5-1
 * does with count 0: a collective is not enqueued at all (taskAppend,
 * src/enqueue.cc:1916, returns before any work: no kernel, no transfer), so
 * its time is 0 (nccl-tests measures only the call, e.g. 0.06 us in
 * tests/data/nccl-tests/gcp_a4_2node_1gpu_B200_roce_allgather.txt); the
 * all-to-all of nccl-tests is a group of ncclSend/ncclRecv
 * (src/alltoall.cu:57-62 at v2.13.10), and NCCL keeps an empty send or
 * receive as a sync with its peer (src/enqueue.cc:937-939), so its time is
 * the exchange's latency: that of the smallest all-to-all nccl-tests runs,
 * 16 bytes to each peer, whose bandwidth term is nanoseconds (b->least,
 * run apart). A sweep of empty sizes alone is refused: nothing to predict. */
static tc_status nt_empty(const nt_in *in, tc_scenario *s, nt_built *b, tc_err *err)
{
    uint32_t P = 0;
    tc_status st = nt_comm_ranks(s, &P, err);
    /* One rank: NCCL v2.21.5-1 copies the buffer in the GPU's memory
     * (cudaMemcpyAsync, out of place) or does nothing (in place)
     * (src/enqueue.cc:1961-1962, src/device/onerank.cu:48-55): no
     * communication to predict, and a time of 0 would print algbw 0. */
    if (st == TC_OK && P == 1)
        return tc_fail(err, TC_EINVAL, "nccl-tests on one rank: NCCL then copies the buffer within the GPU (or, in "
                                       "place, does nothing), which is no communication to predict; give at least 2 "
                                       "ranks (-g, -t, --np or more nodes)");
    b->comm_ranks = P;
    if (st || !P || !s->nsizes)
        return st;
    tc_op op = s->nops ? s->ops[0] : TC_OP_ALLREDUCE;
    uint32_t elt = tc_dtype_size(s->dtype);
    if (!elt)
        return TC_OK;
    bool per_rank = op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLTOALL;
    uint32_t align = elt < 16 ? 16 / elt : 1;
    b->least = per_rank ? (double)align * P * elt : elt;
    size_t n = s->nsizes, full = 0;
    for (size_t i = 0; i < n; i++)
        full += tc_coll_rounded_bytes(op, P, s->sizes[i], elt) > 0;
    if (full == n)
        return TC_OK;
    if (full == 0)
        return tc_fail(err, TC_EINVAL,
                       "every size of %s is zero whole elements per rank (%s over %u ranks, %u-byte %s%s): nccl-tests "
                       "prints them as rows of size 0, there is nothing to predict: give %s at least %.0f bytes",
                       in->b || in->e ? "the sweep" : in->compare, tc_op_name(op), P, elt, tc_dtype_nccl_name(s->dtype),
                       per_rank ? ", whole 16-byte blocks per rank" : "", in->b || in->e ? "-e" : "-b and -e",
                       b->least);
    if (!(b->empty = malloc(n)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        b->empty[i] = !(tc_coll_rounded_bytes(op, P, s->sizes[i], elt) > 0);
        if (!b->empty[i])
            s->sizes[k++] = s->sizes[i];
    }
    s->nsizes = k;
    b->hdr.empty = b->empty;
    b->hdr.nrows = n;
    if (op == TC_OP_SENDRECV)
        /* NVIDIA/nccl v2.21.5-1 src/enqueue.cc:1916 (taskAppend) returns early on count 0
         * for the collectives only; 937: "Zero size send/recv are syncs" */
        snprintf(b->note, sizeof b->note,
                 "rows of size 0: zero whole elements; NCCL keeps the empty send and receive as a sync with the "
                 "peer, timed as the smallest sendrecv (%.0f bytes)",
                 b->least);
    else if (op == TC_OP_ALLTOALL)
        snprintf(b->note, sizeof b->note,
                 "rows of size 0: zero whole elements per rank; NCCL keeps each empty send and receive as a sync "
                 "with its peer, timed as the smallest all-to-all (%.0f bytes, 16 to each rank)",
                 b->least);
    else
        snprintf(b->note, sizeof b->note,
                 "rows of size 0: zero whole elements per rank; NCCL enqueues no work for a collective of count 0, "
                 "timed 0");
    b->hdr.note = b->note;
    return TC_OK;
}

/* Where a row is in its file: "line", or in a JSON report "result". */
static const char *row_unit(const tc_nccl_row *r)
{
    return r->json ? "result" : "line";
}

/* A log of every type, operator or root (nccl-tests -d all, -o all, -r
 * -1): the rows of the run predicted, its -d, -o and -r as nccl-tests
 * prints them (values the run refuses leave the file whole). */
static tc_status keep_run(const nt_in *in, tc_op op, tc_nccl_file *file, tc_err *err)
{
    const char *dt;
    tc_err e;
    tc_redop rop = TC_REDOP_SUM;
    if ((in->d && nt_dtype(in->d, &dt, &e) != TC_OK) || (in->o && !tc_redop_parse(in->o, &rop)))
        return TC_OK;
    long root = -1;
    bool rooted = op == TC_OP_BROADCAST || op == TC_OP_REDUCE;
    if (rooted) {
        char *end;
        root = in->r ? strtol(in->r, &end, 10) : 0;
        if (in->r && (*end || root < 0))
            return TC_OK;
    }
    tc_nccl_file_keep(file, in->d ? in->d : "float", tc_redop_column(op, (uint8_t)rop), root);
    /* the rows left print the run's root (broadcast's and reduce's), or -1
     * (the others'), where the file has a root column */
    for (size_t i = 0; i < file->n; i++) {
        const tc_nccl_row *r = &file->rows[i];
        if (!r->has_root || (rooted ? r->root == root : r->root < 0))
            continue;
        if (rooted && r->root >= 0)
            return tc_fail(err, TC_EINVAL, "nccl-tests file %s holds rows of root %ld (%s %ld), the prediction's root is "
                                           "%ld: give -r %ld",
                           in->compare, r->root, row_unit(r), r->line, root, r->root);
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s holds rows of root %ld (%s %ld), as %s: give its --op (%s)",
                       in->compare, r->root, row_unit(r), r->line,
                       rooted ? "the operations without a root print them" : "broadcast and reduce print them",
                       rooted ? "allreduce, allgather, reducescatter, alltoall, sendrecv" : "broadcast, reduce");
    }
    return TC_OK;
}


/* What the comparison says of the file read: its versions and test, the
 * tests and lines left out, the run's NCCL settings beside topocc's. */
static void file_notes(FILE *f, const tc_nccl_file *file, const char *path)
{
    char ver[24] = "";
    if (file->nccl_code)
        tc_nccl_version_str(file->nccl_code, ver, sizeof ver);
    if (file->json || file->tests_version[0] || ver[0] || file->test[0]) {
        fprintf(f, "# the file: ");
        const char *sep = "";
        if (file->test[0])
            fprintf(f, "%s", file->test), sep = ", ";
        if (file->json)
            fprintf(f, "%snccl-tests' JSON report (format version %d)", sep, file->json), sep = ", ";
        else if (file->tests_version[0])
            fprintf(f, "%snccl-tests %s", sep, file->tests_version), sep = ", ";
        if (ver[0])
            fprintf(f, "%sNCCL %s (%s)", sep, ver,
                    file->nccl_code == 22105 ? "the version topocc models" : "topocc models NCCL 2.21.5");
        fputc('\n', f);
    }
    if (file->other_rows)
        fprintf(f, "# not compared: %zu row%s of other tests in the file (%s)\n", file->other_rows,
                file->other_rows == 1 ? "" : "s", file->others);
    if (file->other_kind_rows)
        fprintf(f, "# not compared: %zu row%s of other types, operators or roots in the file (%s)\n",
                file->other_kind_rows, file->other_kind_rows == 1 ? "" : "s", file->other_kinds);
    if (file->wrong)
        fprintf(f, "# the file: %zu row%s with #wrong above 0 (the first: %s %ld): nccl-tests found the run's result "
                   "wrong there\n",
                file->wrong, file->wrong == 1 ? "" : "s", file->json ? "result" : "line", file->wrong_line);
    if (file->unread) {
        fprintf(f, "# not read: %zu line%s of %s neither rows nor comments (a launcher's or NCCL's messages): line",
                file->unread, file->unread == 1 ? "" : "s", path);
        size_t k = file->unread < 3 ? file->unread : 3;
        for (size_t i = 0; i < k; i++)
            fprintf(f, "%s %ld", i ? "," : (k > 1 ? "s" : ""), file->unread_line[i]);
        fprintf(f, "%s\n", file->unread > 3 ? ", ..." : "");
    }
    if (file->env[0]) {
        /* the run's settings of the variables topocc honours, beside
         * topocc's own environment, which the prediction read */
        fprintf(f, "# the run's NCCL settings topocc honours:");
        char env[sizeof file->env];
        snprintf(env, sizeof env, "%s", file->env);
        char *save = NULL;
        for (char *kv = strtok_r(env, "\n", &save); kv; kv = strtok_r(NULL, "\n", &save)) {
            char *eq = strchr(kv, '=');
            if (!eq)
                continue;
            *eq = '\0';
            const char *here = getenv(kv);
            fprintf(f, " %s=%s (%s%s%s)", kv, eq + 1, here ? "here " : "unset here", here ? here : "",
                    here && strcmp(here, eq + 1) == 0 ? ", alike" : "");
        }
        fputc('\n', f);
    }
}

/* The file's rows hold the type and the operator the prediction is for:
 * the type and redop columns as this prediction prints them. */
static tc_status check_rows(const tc_scenario *s, const tc_nccl_row *rows, size_t nrows, const char *path,
                            tc_err *err)
{
    tc_op op = s->nops ? s->ops[0] : TC_OP_ALLREDUCE;
    tc_redop rop = TC_REDOP_SUM;
    if (!tc_redop_parse(s->redop, &rop))
        rop = TC_REDOP_SUM;
    const char *type = tc_dtype_nccl_name(s->dtype), *redop = tc_redop_column(op, (uint8_t)rop);
    bool reduction = strcmp(redop, "none") != 0;
    for (size_t i = 0; i < nrows; i++) {
        const tc_nccl_row *r = &rows[i];
        if (r->type[0] && strcmp(r->type, type) != 0) {
            const char *d;
            tc_err e2;
            bool known = nt_dtype(r->type, &d, &e2) == TC_OK;
            return tc_fail(err, TC_EINVAL,
                           "nccl-tests file %s holds rows of type %s (%s %ld), the prediction is for %s: %s%s", path,
                           r->type, row_unit(r), r->line, type, known ? "give -d " : "-d takes nccl-tests' float, half, bfloat16, "
                                                                          "double, (u)int8/32/64, f8e4m3, f8e5m2",
                           known ? r->type : "");
        }
        if (r->no_redop && reduction)
            return tc_fail(err, TC_EINVAL,
                           "nccl-tests file %s holds rows without a redop (line %ld), as nccl-tests before v2.13.4 "
                           "prints all-gather, broadcast and all-to-all; the prediction's redop is %s (%s): the file "
                           "is of an operation without a reduction: give its --op (allgather, broadcast, alltoall)",
                           path, r->line, redop, tc_op_name(op));
        if (r->redop[0] && strcmp(r->redop, redop) != 0) {
            bool none = strcmp(r->redop, "none") == 0;
            tc_redop x;
            bool known = tc_redop_parse(r->redop, &x);
            char how[200];
            if (none)
                snprintf(how, sizeof how, "the file is of an operation without a reduction: give its --op (allgather, "
                                          "broadcast, alltoall)");
            else if (!reduction)
                snprintf(how, sizeof how, "the file is of a reduction: give its --op (allreduce, reducescatter, "
                                          "reduce)%s%s",
                         known ? " and -o " : "", known ? r->redop : "");
            else if (known)
                snprintf(how, sizeof how, "give -o %s", r->redop);
            else
                snprintf(how, sizeof how, "-o takes sum, prod, min, max, avg");
            return tc_fail(err, TC_EINVAL,
                           "nccl-tests file %s holds rows of redop %s (%s %ld), the prediction's redop is %s (%s): %s",
                           path, r->redop, row_unit(r), r->line, redop, tc_op_name(op), how);
        }
    }
    return TC_OK;
}

/* The file's header, where it lists its ranks, lists as many as the
 * prediction has. */
static tc_status check_ranks(const tc_scenario *s, const tc_nccl_file *file, const char *path, tc_err *err)
{
    uint32_t file_ranks = file->ranks;
    if (!file_ranks)
        return TC_OK;
    /* the job's ranks, as the run will place them: before the run */
    tc_topo *t = NULL;
    uint32_t *map = NULL, p = 0;
    tc_status st = tc_topo_build(s->topo[0], &t, err);
    if (st == TC_OK)
        st = tc_place_map(t, &s->job, &map, &p, err);
    free(map);
    tc_topo_free(t);
    if (st || file_ranks == p)
        return st;
    return tc_fail(err, TC_EINVAL,
                   "nccl-tests file %s lists %u ranks %s, the prediction is for %u ranks: give "
                   "the file's nodes (--preset NAME:nodes=N, or --topo) and GPUs per node (-g)",
                   path, file_ranks, file->json ? "(its devices x threads x GPUs)" : "in its header ('#  Rank' lines)", p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A row's measured bus bandwidth, GB/s, as compare_row takes it; NAN
 * where the row says nothing (no bandwidth or time, or a busbw below what
 * two decimals print). */
static double measured_busbw(const tc_result *r, const tc_nccl_row *m)
{
    if (!m || !(m->busbw_Bps > 0 || m->time_s > 0))
        return NAN;
    /* the measured bus bandwidth from the measured time, as nccl-tests
     * computes it, where the two agree: the printed busbw has two
     * decimals (0.01 GB/s is anything from 0.005 to 0.015), the time
     * four or more digits */
    double meas = m->busbw_Bps / 1e9;
    bool timed = false;
    if (m->time_s > 0) {
        double from_t = tc_nccl_tests_busbw(r->op, tc_nccl_tests_ranks(r), r->bytes, m->time_s) / 1e9;
        if ((timed = fabs(from_t - meas) <= 0.005 + 0.005 * meas))
            meas = from_t;
    }
    /* a busbw below what two decimals print (0.00) says nothing
     * unless its time gave it */
    return meas >= 0.005 || (timed && meas > 0) ? meas : NAN;
}

/* Whether size i of o repeats an earlier one (a file's sizes repeated,
 * nccl-tests -N: each compared once). */
static bool size_again(const tc_collective_out *o, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (tc_collective_at(o, 0, j)->bytes == tc_collective_at(o, 0, i)->bytes)
            return true;
    return false;
}

/* One measured row against the prediction of its size: prints the compare
 * row; returns the error in percent, or NAN where the row says nothing. */
static double compare_row(FILE *f, const tc_result *r, const tc_nccl_row *m)
{
    double pred = tc_nccl_tests_busbw(r->op, tc_nccl_tests_ranks(r), r->bytes, r->time_s) / 1e9;
    double meas = measured_busbw(r, m);
    if (isnan(meas)) {
        fprintf(f, "%12.0f  %12.2f  %12s  %8s\n", r->bytes, pred, "-", "-");
        return NAN;
    }
    double e = 100 * (pred - meas) / meas;
    fprintf(f, "%12.0f  %12.2f  %12.2f  %+8.1f\n", r->bytes, pred, meas, e);
    return e;
}

/* Predicted against measured: size, both bus bandwidths, the error; then
 * the median |error| by size band. Each predicted size (once, where the
 * sizes are a file's that repeats them) is compared with every row of the
 * file of that size, in the file's order: a file of several cycles
 * (nccl-tests -N) gives one compare row per cycle, each measured against
 * its own row, and each counts in the medians. */
static tc_status compare(FILE *f, const tc_collective_out *o, const tc_nccl_file *file, const char *path,
                         bool file_sizes, tc_err *err)
{
    const tc_nccl_row *rows = file->rows;
    size_t nrows = file->n;
    fprintf(f, "# compare with %s (out-of-place busbw)\n", path);
    file_notes(f, file, path);
    fprintf(f, "#%11s  %12s  %12s  %8s\n", "size", "predicted", "measured", "error");
    fprintf(f, "#%11s  %12s  %12s  %8s\n", "(B)", "(GB/s)", "(GB/s)", "(%)");
    double *err_band[3];
    size_t nb[3] = {0}, nsz[3] = {0};
    size_t cap = nrows + 1;
    for (int b = 0; b < 3; b++)
        err_band[b] = malloc(cap * sizeof *err_band[b]);
    if (!err_band[0] || !err_band[1] || !err_band[2]) {
        for (int b = 0; b < 3; b++)
            free(err_band[b]);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < o->nsizes; i++) {
        const tc_result *r = tc_collective_at(o, 0, i);
        if (size_again(o, i))
            continue;
        int b = r->bytes < 1048576 ? 0 : r->bytes < 268435456 ? 1 : 2;
        size_t before = nb[b];
        bool any = false;
        for (size_t k = 0; k < nrows; k++) {
            if (rows[k].bytes != r->bytes)
                continue;
            any = true;
            double e = compare_row(f, r, &rows[k]);
            if (!isnan(e))
                err_band[b][nb[b]++] = fabs(e);
        }
        if (!any)
            compare_row(f, r, NULL);
        nsz[b] += nb[b] > before;
    }
    /* the file's rows no predicted size equals: outside the sizes asked
     * (-b, -e), or a size that is not whole elements (of the ranks for
     * all-gather, reduce-scatter and all-to-all), which the prediction cut
     * as nccl-tests cuts it; where the sizes are the file's (file_sizes),
     * every row was asked, and one cut below the smallest or largest
     * predicted size is not outside them */
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < o->nsizes; i++) {
        lo = fmin(lo, tc_collective_at(o, 0, i)->bytes);
        hi = fmax(hi, tc_collective_at(o, 0, i)->bytes);
    }
    size_t outside = 0, between = 0;
    for (size_t k = 0; k < nrows; k++) {
        bool seen = false;
        for (size_t i = 0; i < o->nsizes && !seen; i++)
            seen = tc_collective_at(o, 0, i)->bytes == rows[k].bytes;
        if (seen)
            continue;
        if (!file_sizes && (rows[k].bytes < lo || rows[k].bytes > hi))
            outside++;
        else if (!file_sizes)
            between++; /* a size the -b/-e/-f sweep steps over */
        else
            fprintf(f, "# not compared: %s %ld, size %.0f B, which no predicted size equals (sizes are cut to whole "
                       "elements, of the ranks for all-gather, reduce-scatter and all-to-all, as nccl-tests cuts them)\n",
                    row_unit(&rows[k]), rows[k].line, rows[k].bytes);
    }
    if (outside)
        fprintf(f, "# not compared: %zu row%s of the file outside the sizes predicted (%.0f to %.0f B)\n", outside,
                outside == 1 ? "" : "s", lo, hi);
    if (between)
        fprintf(f, "# not compared: %zu row%s of the file between the sizes predicted, which the sweep (-b, -e, -f "
                   "or -i; sizes cut to whole elements) does not hold\n",
                between, between == 1 ? "" : "s");
    static const char *band[3] = {"< 1 MiB", "1 MiB .. 256 MiB", ">= 256 MiB"};
    for (int b = 0; b < 3; b++) {
        if (!nb[b])
            continue;
        qsort(err_band[b], nb[b], sizeof *err_band[b], cmp_double);
        size_t k = nb[b];
        double med = k % 2 ? err_band[b][k / 2] : (err_band[b][k / 2 - 1] + err_band[b][k / 2]) / 2;
        if (k == nsz[b])
            fprintf(f, "# median |error| %-16s : %.1f%% over %zu size%s\n", band[b], med, k, k == 1 ? "" : "s");
        else
            fprintf(f, "# median |error| %-16s : %.1f%% over %zu rows (%zu size%s)\n", band[b], med, k, nsz[b],
                    nsz[b] == 1 ? "" : "s");
    }
    for (int b = 0; b < 3; b++)
        free(err_band[b]);
    return TC_OK;
}

/* ---- --fit: calibrating the NICs' transport to a measured run ---- */

/* What the fit varies: the Clos's net_lat= for LL, LL128 and Simple (us)
 * and net_eff=, on the topology's spec (base, without them). */
typedef struct nt_fit {
    tc_scenario *s;
    const tc_nccl_row *rows;
    size_t nrows;
    char base[512];
} nt_fit;

#define FIT_LAT_MIN_US 0.1
#define FIT_LAT_MAX_US 5000.0
#define FIT_EFF_MIN 0.05

/* The mean over the file's compared rows of |ln(predicted / measured
 * busbw)| with the keys (",k=v,...") added to the topology's spec. */
static tc_status fit_eval_keys(nt_fit *c, const char *keys, double *obj, size_t *used, tc_err *err)
{
    char spec[512];
    int n = snprintf(spec, sizeof spec, "%s%s", c->base, keys);
    if (n < 0 || (size_t)n >= sizeof spec || (size_t)n >= sizeof c->s->topo[0])
        return tc_fail(err, TC_EINVAL, "--fit: the topology's spec is too long to add %s to (%d characters, at most %zu)",
                       keys + 1, n, sizeof c->s->topo[0] - 1);
    memcpy(c->s->topo[0], spec, (size_t)n + 1);
    tc_collective_out *o = NULL;
    tc_run_opts ro = {0};
    tc_status st = tc_run_collective(c->s, &ro, &o, err);
    if (st)
        return st;
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < o->nsizes; i++) {
        const tc_result *r = tc_collective_at(o, 0, i);
        if (size_again(o, i))
            continue;
        double pred = tc_nccl_tests_busbw(r->op, tc_nccl_tests_ranks(r), r->bytes, r->time_s) / 1e9;
        for (size_t m = 0; m < c->nrows; m++) {
            if (c->rows[m].bytes != r->bytes)
                continue;
            double meas = measured_busbw(r, &c->rows[m]);
            if (!isnan(meas) && pred > 0) {
                sum += fabs(log(pred / meas));
                k++;
            }
        }
    }
    tc_collective_out_free(o);
    *obj = k ? sum / (double)k : NAN;
    *used = k;
    return TC_OK;
}

/* fit_eval_keys with the parameters x (LL, LL128, Simple in us;
 * efficiency). */
static tc_status fit_eval(nt_fit *c, const double x[4], double *obj, size_t *used, tc_err *err)
{
    char keys[160];
    snprintf(keys, sizeof keys, ",net_lat=%.9gus/%.9gus/%.9gus,net_eff=%.9g", x[0], x[1], x[2], x[3]);
    return fit_eval_keys(c, keys, obj, used, err);
}

/* v rounded to 3 significant digits (what the fit prints, and keeps). */
static double round3(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.3g", v);
    return strtod(b, NULL);
}

/* Parameter i over a grid from lo to hi (geometric for the latencies,
 * arithmetic for the efficiency): the best point, kept in x; *flat where
 * no point changes the objective (the file's runs do not use it). */
static tc_status fit_line(nt_fit *c, double x[4], int i, double lo, double hi, int npts, double *best, bool *flat,
                          tc_err *err)
{
    double keep = x[i], bx = x[i], lo_obj = INFINITY, hi_obj = -INFINITY;
    for (int k = 0; k < npts; k++) {
        double f = npts > 1 ? (double)k / (npts - 1) : 0;
        x[i] = round3(i < 3 ? lo * pow(hi / lo, f) : lo + (hi - lo) * f);
        double obj;
        size_t used;
        tc_status st = fit_eval(c, x, &obj, &used, err);
        if (st) {
            x[i] = keep;
            return st;
        }
        lo_obj = fmin(lo_obj, obj), hi_obj = fmax(hi_obj, obj);
        if (obj < *best - 1e-12) /* ties keep the earlier (the smaller) value */
            *best = obj, bx = x[i];
    }
    *flat = hi_obj - lo_obj <= 1e-9;
    x[i] = *flat ? keep : bx;
    return TC_OK;
}

/* The refusal where no row of the file is compared. */
static tc_status fit_nothing(const char *file, tc_err *err)
{
    return tc_fail(err, TC_EINVAL,
                   "--fit: no row of %s has a bus bandwidth at a size the run predicts (the file's sizes, or "
                   "-b/-e/-f's): nothing to fit to",
                   file);
}

/* The canonical spec without the keys a fit sets (drop: NULL-ended). */
static void fit_base(const char *spec, const char *const *drop, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = spec; *p;) {
        const char *end = p + strcspn(p, ",");
        bool keep = true;
        for (const char *const *k = drop; *k && keep; k++)
            keep = !(strncmp(p, *k, strlen(*k)) == 0 && p[strlen(*k)] == '=');
        if (keep && n + (size_t)(end - p) + 2 < len) {
            if (n)
                out[n++] = ',';
            memcpy(out + n, p, (size_t)(end - p));
            n += (size_t)(end - p);
        }
        p = *end ? end + 1 : end;
    }
    out[n] = '\0';
}

/* --fit on a sendrecv run: the rate one point-to-point channel reaches
 * (p2p_bw= on one node, p2p_net_bw= across nodes: docs/MODEL.md
 * "sendrecv"), over a geometric grid of 1 GB/s to 1 TB/s, then two finer
 * ones about its best; none where no rate fits the file better than no
 * limit.
 * Prints what it found; leaves s with the fitted topology. */
static tc_status nt_fit_p2p(const nt_in *in, tc_scenario *s, const tc_nccl_row *rows, size_t nrows,
                            const tc_topo *t, char *note, size_t note_len, tc_err *err)
{
    uint32_t G = t->node_size > 1 ? t->node_size : 1, ranks = s->job.ranks ? s->job.ranks : t->n_endpoints;
    const char *key = ranks > G ? "p2p_net_bw" : "p2p_bw";
    nt_fit c = {.s = s, .rows = rows, .nrows = nrows};
    const char *drop[] = {key, NULL};
    fit_base(t->spec, drop, c.base, sizeof c.base);
    double start, best, bx = 0, obj;
    size_t used = 0;
    char keys[64];
    tc_status st = fit_eval_keys(&c, "", &start, &used, err);
    if (st)
        return st;
    if (!used)
        return fit_nothing(in->compare, err);
    best = start;
    double lo = 1, hi = 1000; /* GB/s */
    for (int pass = 0; pass < 3 && st == TC_OK; pass++) {
        int npts = pass ? 25 : 49;
        for (int k = 0; k < npts && st == TC_OK; k++) {
            double x = round3(lo * pow(hi / lo, (double)k / (npts - 1)));
            snprintf(keys, sizeof keys, ",%s=%.9gGB/s", key, x);
            if ((st = fit_eval_keys(&c, keys, &obj, &used, err)) == TC_OK && obj < best - 1e-12)
                best = obj, bx = x;
        }
        if (!(bx > 0))
            break;
        double step = pass ? 1.02 : 1.26; /* a coarse step either side, then a fine one */
        lo = fmax(1, bx / step), hi = fmin(1000, bx * step);
    }
    if (st)
        return st;
    if (bx > 0)
        snprintf(keys, sizeof keys, ",%s=%.9gGB/s", key, bx);
    else
        keys[0] = '\0';
    if ((st = fit_eval_keys(&c, keys, &best, &used, err)) != TC_OK)
        return st;
    const char *where = ranks > G ? "across nodes" : "inside a node";
    if (bx > 0)
        snprintf(note, note_len,
                 "# fit to %s: %s=%gGB/s (the rate of one point-to-point channel %s; mean |ln(predicted / measured "
                 "busbw)| over %zu rows: %.3f without a limit, %.3f fitted)\n",
                 in->compare, key, bx, where, used, start, best);
    else
        snprintf(note, note_len,
                 "# fit to %s: no %s= (no rate of one point-to-point channel %s fits the file better than none; mean "
                 "|ln(predicted / measured busbw)| over %zu rows: %.3f)\n",
                 in->compare, key, where, used, start);
    if (bx > 0 && used < 3)
        snprintf(note + strlen(note), note_len - strlen(note),
                 "# fit: only %zu row%s for 1 value: the constant is not determined (compare a run of more sizes)\n",
                 used, used == 1 ? "" : "s");
    snprintf(note + strlen(note), note_len - strlen(note),
             "# fit: the constant is the file's; another run on the same hardware and software takes it as a --topo "
             "or preset key (docs/MODEL.md, \"sendrecv\")\n");
    return TC_OK;
}

/* Coordinate descent from the transport's own values: each parameter over
 * a coarse grid of its whole range, then a fine one about its best, three
 * rounds. Prints what it found; leaves s with the fitted topology. */
static tc_status nt_fit_run(const nt_in *in, tc_scenario *s, const tc_nccl_row *rows, size_t nrows, char *note,
                            size_t note_len, tc_err *err)
{
    tc_topo *t = NULL;
    tc_status st = tc_topo_build(s->topo[0], &t, err);
    if (st)
        return st;
    if (s->nops && s->ops[0] == TC_OP_SENDRECV) {
        st = nt_fit_p2p(in, s, rows, nrows, t, note, note_len, err);
        tc_topo_free(t);
        return st;
    }
    if (t->kind != TC_TOPO_CLOS) {
        tc_topo_kind k = (tc_topo_kind)t->kind;
        tc_topo_free(t);
        return tc_fail(err, TC_EINVAL, "--fit calibrates a Clos's NICs (net_lat=, net_eff=): the topology is a %s; "
                                       "give a Clos (--topo clos:... or a GPU preset)",
                       tc_topo_kind_name(k));
    }
    nt_fit c = {.s = s, .rows = rows, .nrows = nrows};
    /* the canonical spec without the keys the fit sets */
    const char *drop[] = {"net_lat", "net_eff", NULL};
    fit_base(t->spec, drop, c.base, sizeof c.base);
    /* the start: the transport's step latencies (its Ring row) and the
     * whole line rate, whatever net_lat= and net_eff= the spec gives (the
     * lines printed name them as the transport's) */
    double x[4];
    t->net_lat_given = false;
    for (int k = 0; k < 3; k++)
        x[k] = round3(fmax(FIT_LAT_MIN_US, tc_nccl_ring_net_step_s(t, (tc_proto)(TC_PROTO_LL + k)) * 1e6));
    x[3] = 1;
    tc_topo_free(t);
    double start = NAN, best;
    size_t used = 0;
    if ((st = fit_eval(&c, x, &start, &used, err)) != TC_OK)
        return st;
    if (!used)
        return fit_nothing(in->compare, err);
    best = start;
    bool flat[4] = {false};
    /* a round that moves nothing has converged: the next would search the
     * same grids from the same point */
    bool moved = true;
    for (int round = 0; round < 3 && st == TC_OK && moved; round++) {
        double was[4] = {x[0], x[1], x[2], x[3]};
        for (int i = 0; i < 4 && st == TC_OK; i++) {
            double lo = i < 3 ? FIT_LAT_MIN_US : FIT_EFF_MIN, hi = i < 3 ? FIT_LAT_MAX_US : 1;
            st = fit_line(&c, x, i, lo, hi, i < 3 ? 49 : 20, &best, &flat[i], err);
            if (st == TC_OK && !flat[i]) {
                /* the fine grid: a coarse step either side */
                double a = i < 3 ? fmax(lo, x[i] / 1.26) : fmax(lo, x[i] - 0.05);
                double b = i < 3 ? fmin(hi, x[i] * 1.26) : fmin(hi, x[i] + 0.05);
                bool f2;
                st = fit_line(&c, x, i, a, b, 25, &best, &f2, err);
            }
        }
        moved = memcmp(was, x, sizeof was) != 0;
    }
    if (st == TC_OK)
        st = fit_eval(&c, x, &best, &used, err);
    if (st)
        return st;
    static const char *pname[4] = {"LL", "LL128", "Simple", "net_eff"};
    char unused[64] = "";
    for (int i = 0; i < 4; i++)
        if (flat[i])
            snprintf(unused + strlen(unused), sizeof unused - strlen(unused), "%s%s", unused[0] ? ", " : "", pname[i]);
    /* the lines, each after the last (note_len holds them: its caller) */
    snprintf(note, note_len,
             "# fit to %s: net_lat=%gus/%gus/%gus,net_eff=%g (LL/LL128/Simple per network step; mean |ln(predicted / "
             "measured busbw)| over %zu rows: %.3f with the transport's own values, %.3f fitted)\n",
             in->compare, x[0], x[1], x[2], x[3], used, start, best);
    if (unused[0])
        snprintf(note + strlen(note), note_len - strlen(note),
                 "# fit: not determined by the file (its runs do not depend on it), kept at the transport's value: "
                 "%s\n",
                 unused);
    /* four numbers from fewer rows than a few a parameter: several
     * values fit them alike */
    if (used < 8)
        snprintf(note + strlen(note), note_len - strlen(note),
                 "# fit: only %zu row%s for 4 values: other values may fit %s as well; the constants are not "
                 "determined (compare a run of more sizes)\n",
                 used, used == 1 ? "" : "s", used == 1 ? "it" : "them");
    snprintf(note + strlen(note), note_len - strlen(note),
             "# fit: the constants are the file's; another run on the same hardware and software takes them as "
             "--topo or preset keys (docs/MODEL.md, \"Calibrating a transport\")\n");
    return TC_OK;
}

/* What one run prints: with --format table nccl-tests' text (and the
 * comparison), else collective's CSV or JSON of the same run; written
 * alike to stdout and to --out. */
typedef struct nt_print {
    const tc_scenario *s;
    tc_collective_out *o;
    tc_format fmt;
    const char *what;
    const tc_nccl_row *rows;
    size_t nrows;
    const char *compare;
    const tc_nccl_tests_header *hdr; /* NULL: the sizes are the --compare file's */
    const char *note;                /* --fit's lines, printed first ("": none) */
    const tc_nccl_file *file;        /* the --compare file read */
} nt_print;

static tc_status print_to(FILE *f, const nt_print *p, tc_err *err)
{
    if (p->fmt == TC_FMT_CSV) {
        /* the sizes table for one size too (collective prints one size as
         * its result table, other columns) */
        tc_rtable t;
        tc_collective_sizes_table(p->o, &t);
        bool oom = t.oom;
        if (!oom)
            tc_rtable_print_csv(&t, f);
        tc_rtable_free(&t);
        return oom ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
    }
    if (p->fmt != TC_FMT_TABLE) {
        tc_outcome oc = {.command = TC_CMD_COLLECTIVE, .value = p->o};
        return tc_outcome_write(&oc, p->s, p->fmt, f, err);
    }
    fputs(p->note ? p->note : "", f);
    tc_nccl_tests_write(f, p->o, p->what, p->hdr);
    return p->rows ? compare(f, p->o, p->file, p->compare, !p->hdr || p->hdr->from_sizes, err) : TC_OK;
}

/* --out FILE: what stdout gets, under a temporary name, renamed once whole. */
static tc_status print_file(const char *path, const nt_print *p, tc_err *err)
{
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st)
        return st;
    if ((st = print_to(af.f, p, err))) {
        tc_atomic_abort(&af);
        return st;
    }
    return tc_atomic_commit(&af, err);
}

/* The output options that do not go together, and those that cannot be
 * written, refused before anything runs. */
/* -J FILE: nccl-tests writes its JSON report only where FILE's suffix is
 * .json, in any case (classifyOutputFile, src/common.cu:139-170 at
 * v2.19.6), and nothing otherwise: refused here. FILE is none of the
 * run's other files. */
static tc_status check_json_out(const nt_in *in, tc_err *err)
{
    const char *j = in->json_out, *dot = strrchr(j, '.'), *slash = strrchr(j, '/');
    if (!dot || (slash && dot < slash) || strcasecmp(dot + 1, "json") != 0)
        return tc_fail(err, TC_EINVAL, "-J %.160s: nccl-tests writes its JSON report only to a FILE.json (it takes "
                                       "the format from the suffix and writes nothing for another)",
                       j);
    if (in->print_scenario)
        return tc_fail(err, TC_EINVAL, "-J writes the prediction's report; --print-scenario runs no prediction: "
                                       "drop one");
    if (in->out && tc_same_file(j, in->out))
        return tc_fail(err, TC_EINVAL, "-J %.160s is the --out file too: give the two other names", j);
    if (in->compare && tc_same_file(j, in->compare))
        return tc_fail(err, TC_EINVAL, "-J %.160s is the --compare file, which the prediction reads: give another "
                                       "name",
                       j);
    if (in->out_dir && cli_in_out_dir(j, in->out_dir))
        return tc_fail(err, TC_EINVAL, "-J %.160s is in --out-dir %.160s, whose scenario.json and TABLE.csv files "
                                       "are the result's: give it another name or directory",
                       j, in->out_dir);
    return TC_OK;
}

static tc_status check_output(const nt_in *in, tc_format *fmt, tc_err *err)
{
    *fmt = TC_FMT_TABLE;
    tc_status st;
    if (in->format && (st = tc_format_parse(in->format, fmt, err)))
        return st;
    if (in->json_out && (st = check_json_out(in, err)))
        return st;
    if (in->print_scenario) {
        if (in->out_dir || (in->format && *fmt != TC_FMT_JSON))
            return tc_fail(err, TC_EINVAL, "--print-scenario prints the scenario as JSON (to stdout and --out FILE): "
                                           "drop %s",
                           in->out_dir ? "--out-dir" : "--format");
        return TC_OK;
    }
    if (in->compare && *fmt != TC_FMT_TABLE)
        return tc_fail(err, TC_EINVAL, "--compare prints its table after nccl-tests' text: drop --format %s (or "
                                       "--compare)",
                       in->format);
    if ((st = cli_check_out_beside_dir(in->out, in->out_dir, err)))
        return st;
    /* --out-dir is made before --out and -J are tried, so that they may be in it */
    if (in->out_dir && (st = cli_check_dir(in->out_dir, err)))
        return st;
    if (in->json_out && (st = cli_check_writable(in->json_out, err)))
        return st;
    return in->out ? cli_check_writable(in->out, err) : TC_OK;
}

/* --print-scenario: the collective scenario the flags make, to stdout and
 * --out. */
static tc_status print_scenario(const tc_scenario *s, const char *out, tc_err *err)
{
    json_t *j = tc_scenario_to_json(s);
    tc_status st = out ? tc_json_write(j, out, err) : TC_OK;
    if (st == TC_OK)
        st = tc_json_write(j, NULL, err);
    json_decref(j);
    return st;
}

/* The time of the empty all-to-all and sendrecv rows (nt_empty): the
 * operation of b->least bytes, run apart so that the scenario's sizes stay
 * those asked that hold elements. */
static tc_status nt_empty_time(const nt_in *in, tc_scenario *s, nt_built *b, tc_err *err)
{
    if (!b->empty || !s->nops || (s->ops[0] != TC_OP_ALLTOALL && s->ops[0] != TC_OP_SENDRECV))
        return TC_OK;
    double *keep = s->sizes, least = b->least;
    size_t n = s->nsizes;
    s->sizes = &least;
    s->nsizes = 1;
    tc_collective_out *o = NULL;
    cli_progress prog;
    tc_status st = cli_progress_init(&prog, in->quiet, err);
    if (st == TC_OK) {
        tc_run_opts ro = {.progress = cli_progress_cb, .progress_ud = &prog};
        st = tc_run_collective(s, &ro, &o, err);
        cli_progress_done(&prog);
    }
    s->sizes = keep;
    s->nsizes = n;
    if (st == TC_OK)
        b->hdr.empty_time_s = tc_collective_at(o, 0, 0)->time_s;
    tc_collective_out_free(o);
    return st;
}

/* -J FILE: nccl-tests' JSON report of the prediction, its args the test
 * program and the arguments given. */
static tc_status write_report(const nt_in *in, const tc_collective_out *o, const tc_nccl_tests_header *h,
                              const char *what, tc_err *err)
{
    const char **args = malloc((in->nargs + 1) * sizeof *args);
    if (!args)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    args[0] = tc_nccl_tests_program(o->nsizes ? tc_collective_at(o, 0, 0)->op : TC_OP_ALLREDUCE);
    for (size_t i = 0; i < in->nargs; i++)
        args[i + 1] = in->args[i];
    json_t *j = tc_nccl_tests_report(o, h, args, in->nargs + 1, what);
    free(args);
    tc_status st = tc_json_write(j, in->json_out, err);
    json_decref(j);
    return st;
}

/* Runs the prediction; writes --out-dir, --out, -J, then stdout. */
static tc_status run_and_print(const nt_in *in, const tc_scenario *s, const tc_nccl_file *file, const nt_built *b,
                               tc_format fmt, const char *note, tc_err *err)
{
    const tc_nccl_row *rows = file->rows;
    size_t nrows = file->n;
    tc_collective_out *o = NULL;
    cli_progress prog;
    tc_status pst = cli_progress_init(&prog, in->quiet, err);
    if (pst)
        return pst;
    tc_run_opts ro = {.progress = cli_progress_cb, .progress_ud = &prog};
    tc_status st = tc_run_collective(s, &ro, &o, err);
    cli_progress_done(&prog);
    if (st == TC_OK) {
        char what[900];
        const tc_result *r = tc_collective_at(o, 0, 0);
        char groups[160] = "", g[48];
        if (b->comm_g)
            snprintf(groups, sizeof groups, ", NCCL's communicator of the %u GPU%s used on each node (run as one "
                                            "group, %s)",
                     b->comm_g, b->comm_g == 1 ? "" : "s", tc_group_format(&o->group, g, sizeof g));
        else if (o->ngroups)
            snprintf(groups, sizeof groups, ", groups %s: %u groups of %u ranks at once (count, algbw, busbw: one "
                                            "group's; time: the slowest group's)",
                     tc_group_format(&o->group, g, sizeof g), o->ngroups, o->group_size);
        /* the routing modelled: on a Clos the mode's default differs
         * (formula D-mod-k, steps and flow one ECMP hash), and so can the
         * time (collective's mode line says the same) */
        char routing[200];
        const char *rn = tc_routing_name(o->routing, o->net.topo[0]);
        if (o->routing_by_mode && r->mode == TC_MODE_FORMULA)
            snprintf(routing, sizeof routing, "routing %s (formula's default; steps and flow hash the flows, ECMP)",
                     rn);
        else if (o->routing_by_mode)
            snprintf(routing, sizeof routing, "routing %s (%s default: one hash of the flows, seed= in the spec or "
                                              "preset draws another; --routing dmodk routes as formula)",
                     rn, r->mode == TC_MODE_STEPS ? "steps'" : "flow's");
        else
            snprintf(routing, sizeof routing, "routing %s", rn);
        snprintf(what, sizeof what, "%.400s, %u ranks, %.64s, mode %s, %.200s%.200s", o->net.topo[0]->spec, o->ranks,
                 o->rows[0].requested, tc_mode_name(r->mode), routing, groups);
        /* NCCL's ring graph for the communicator of all ranks, whole
         * nodes (not for groups nor -g's communicators): what
         * NCCL_DEBUG_SUBSYS=GRAPH prints, to set beside a run's log */
        char graph[320];
        tc_nccl_tests_header h = b->hdr;
        const tc_topo *t0 = o->net.topo[0];
        uint32_t G = t0->node_size > 1 ? t0->node_size : 1, gn, run;
        double gbw;
        if (!b->comm_g && !o->ngroups && !strncmp(o->rows[0].requested, "nccl", 4) &&
            tc_nccl_ring_graph(t0, o->ranks, G, &gn, &gbw, &run)) {
            snprintf(graph, sizeof graph, "NCCL's ring graph: %u channels of %g GB/s (its search; "
                                          "NCCL_DEBUG_SUBSYS=GRAPH prints \"nChannels %u, bw %f/%f\"), %u channels run "
                                          "for large sizes by default (before NCCL_MIN/MAX_NCHANNELS and CTAs)",
                     gn, gbw, gn, gbw, gbw, run);
            h.graph = graph;
        }
        o->sizes_doc = true; /* one size too: the sizes' shape (print_to's CSV) */
        nt_print p = {.s = s,         .o = o,         .fmt = fmt,           .what = what,
                      .rows = rows,   .nrows = nrows, .compare = in->compare, .hdr = &h, .file = file,
                      .note = note};
        /* --out-dir first: a run whose --out-dir fails leaves --out as it was */
        if (in->out_dir) {
            tc_outcome oc = {.command = TC_CMD_COLLECTIVE, .value = o};
            st = tc_outcome_write_dir(&oc, s, in->out_dir, err);
        }
        if (st == TC_OK && in->out)
            st = print_file(in->out, &p, err);
        if (st == TC_OK && in->json_out)
            st = write_report(in, o, &h, what, err);
        if (st == TC_OK)
            st = print_to(stdout, &p, err);
    }
    tc_collective_out_free(o);
    return st;
}

int cli_nccl_tests(int argc, char **argv, int first)
{
    nt_in in = {0};
    tc_err err = {{0}};
    bool helped = false;
    tc_status st = parse(&in, argc, argv, first, &helped, &err);
    if (st == TC_OK && helped) {
        fputs(help, stdout);
        return 0;
    }
    if (st == TC_OK && in.scenario)
        st = tc_fail(&err, TC_EINVAL, "nccl-tests takes no --scenario (its flags are the scenario): the scenario it "
                                      "prints with --print-scenario is a collective one, run it with topocc "
                                      "collective --scenario %s",
                     in.scenario);
    tc_nccl_file file = {0};
    nt_built b = {.have_hdr = false, .hdr = {.ngpus = 1, .from_sizes = true}};
    if (st == TC_OK && in.compare) {
        /* the file's rows of the test the prediction is of (an --op that
         * does not parse is refused by build below) */
        tc_op op = TC_OP_ALLREDUCE;
        tc_err e0;
        bool known = !in.op || tc_op_parse(in.op, &op, &e0) == TC_OK;
        st = tc_nccl_tests_load(in.compare, known ? tc_nccl_tests_program(op) : NULL, &file, &err);
        if (st == TC_OK && known)
            st = keep_run(&in, op, &file, &err);
        if (st == TC_OK)
            st = tc_nccl_file_ranks(&file, in.compare, &err);
    }
    const tc_nccl_row *rows = file.rows;
    size_t nrows = file.n;
    tc_scenario *s = st == TC_OK ? tc_scenario_new(TC_CMD_COLLECTIVE) : NULL;
    if (st == TC_OK && !s)
        st = tc_fail(&err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK) {
        /* the scenario records the topocc that runs it */
        snprintf(s->version, sizeof s->version, "%s", tc_version());
        snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
        st = build(&in, s, rows, nrows, &b, &err);
    }
    if (st == TC_OK && rows)
        st = check_rows(s, rows, nrows, in.compare, &err);
    if (st == TC_OK && rows)
        st = check_ranks(s, &file, in.compare, &err);
    tc_format fmt = TC_FMT_TABLE;
    if (st == TC_OK)
        st = check_output(&in, &fmt, &err);
    if (st == TC_OK && in.fit && !in.compare)
        st = tc_fail(&err, TC_EINVAL, "--fit needs --compare FILE: the measured run it fits to");
    if (st == TC_OK && in.fit && in.print_scenario)
        st = tc_fail(&err, TC_EINVAL, "--fit with --print-scenario: the fit runs the predictions; drop one");
    if (st == TC_OK && in.fit && s->mode != TC_MODE_FORMULA)
        st = tc_fail(&err, TC_EINVAL, "--fit runs in formula mode (hundreds of predictions): drop --mode %s, then "
                                      "check the fitted keys in it with --topo",
                     tc_mode_name(s->mode));
    char note[8192] = ""; /* --fit's lines: the file's name (at most 4095 bytes, what open takes) and 3 lines */
    if (st == TC_OK && in.fit)
        st = nt_fit_run(&in, s, rows, nrows, note, sizeof note, &err);
    if (st == TC_OK && !in.print_scenario)
        st = nt_empty_time(&in, s, &b, &err);
    if (st == TC_OK)
        st = in.print_scenario ? print_scenario(s, in.out, &err)
                               : run_and_print(&in, s, &file, &b, fmt, note, &err);
    tc_scenario_free(s);
    free(b.empty);
    tc_nccl_file_free(&file);
    return cli_exit(st, &err);
}
