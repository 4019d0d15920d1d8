/*
 * cmd_compress.c - `topocc compress`: does gradient compression pay, end to
 * end? For each codec, one DDP training iteration on the network
 * (topocc/workload.h) and the steps it needs to a target accuracy give the
 * time to accuracy, against the BF16 and FP32 all-reduce baselines
 * (docs/MODEL.md, "Gradient compression, end to end").
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "topocc/workload.h"

static const char *help =
    "usage: topocc compress --topo SPEC --model MODEL --codec C [--codec C ...] [--workers N]\n"
    "                       [--accuracy FILE | --steps-ratio C=R ... ] [--target-acc A]\n"
    "                       [--accel h100|tpu] [--mfu F] [--codec-throughput C=GB/s ...]\n"
    "                       [--bucket BYTES] [--offload] [--sweep-bw]\n"
    "                       [--mode formula|steps|flow] [--routing R] [--equalize injection=RATE]\n"
    "                       [--format table|csv|json]\n"
    "\n"
    "MODEL:  resnet50, vgg16, bert-large, gpt2-xl, llama-7b (optionally :batch=B,mfu=F), or a\n"
    "        custom model params=N,layers=L,flops=F[,steps=S][,mfu=F] where F is the training\n"
    "        FLOPs (forward + backward) of one iteration of one worker and S the baseline's steps\n"
    "        to the target (default 10000); numbers take K M G T suffixes (25.6M, 6.3T)\n"
    "C:      fp32, fp16, bf16, int8, int4, thc[:bits=B], topk[:ratio=R], topk-shared[:ratio=R],\n"
    "        randk[:ratio=R], powersgd[:rank=R], signsgd; fp32 and bf16 are always included\n"
    "N:      data-parallel workers on endpoints 0..N-1 (default: every endpoint)\n"
    "steps:  --accuracy FILE reads curves from 'topocc train-accuracy --out FILE';\n"
    "        --steps-ratio C=R gives steps(C) / steps(fp32) to the target directly (R may be\n"
    "        'never'); with neither, a short Fashion-MNIST training run measures them now.\n"
    "        --target-acc A (a fraction, or a percentage like 85%) replaces the default\n"
    "        target, 95% of the reference's (fp32, else bf16) final accuracy\n"
    "codec work runs on the accelerator (--accel, default h100) and pauses its compute;\n"
    "--offload moves it to a separate engine. Its speed is the accelerator roofline\n"
    "unless --codec-throughput C=GB/s gives it (C: a codec as given or its kind).\n"
    "--bucket: DDP bucket size (default 25MiB). --mfu: model FLOPs utilisation.\n"
    "--sweep-bw: the regime map, fabric bandwidth per endpoint from 10 Gb/s to 1.6 Tb/s,\n"
    "and the bandwidth below which each codec beats bf16.\n"
    "\n"
    "example:\n"
    "  topocc compress --topo clos:down=8x8,up=1x8,bw=10Gbps --model resnet50 --workers 64 \\\n"
    "      --codec powersgd:rank=4 --codec topk:ratio=0.01 --steps-ratio powersgd:rank=4=1.1 \\\n"
    "      --steps-ratio topk:ratio=0.01=1.3 --sweep-bw\n";

#define MAXC 32

static const char *accepted =
    "--topo --model --workers --codec --accuracy --steps-ratio --target-acc --accel --mfu --codec-throughput "
    "--bucket --offload --sweep-bw --mode --routing --equalize --format --help";

typedef struct opts {
    const char *topo, *model, *workers, *accuracy, *target, *accel, *mfu, *bucket, *mode, *routing, *equalize,
        *format;
    const char *codec[MAXC], *ratio[MAXC], *thr[MAXC];
    int ncodec, nratio, nthr;
    bool offload, sweep, help;
} opts;

/* --opt VALUE or --opt=VALUE; repeated options collect, the others once. */
static tc_status parse_args(int argc, char **argv, opts *o, tc_err *err)
{
    struct {
        const char *name;
        const char **one;
        const char **many;
        int *n;
        bool *flag;
    } defs[] = {
        {"--topo", &o->topo, NULL, NULL, NULL},
        {"--model", &o->model, NULL, NULL, NULL},
        {"--workers", &o->workers, NULL, NULL, NULL},
        {"--accuracy", &o->accuracy, NULL, NULL, NULL},
        {"--target-acc", &o->target, NULL, NULL, NULL},
        {"--accel", &o->accel, NULL, NULL, NULL},
        {"--mfu", &o->mfu, NULL, NULL, NULL},
        {"--bucket", &o->bucket, NULL, NULL, NULL},
        {"--mode", &o->mode, NULL, NULL, NULL},
        {"--routing", &o->routing, NULL, NULL, NULL},
        {"--equalize", &o->equalize, NULL, NULL, NULL},
        {"--format", &o->format, NULL, NULL, NULL},
        {"--codec", NULL, o->codec, &o->ncodec, NULL},
        {"--steps-ratio", NULL, o->ratio, &o->nratio, NULL},
        {"--codec-throughput", NULL, o->thr, &o->nthr, NULL},
        {"--offload", NULL, NULL, NULL, &o->offload},
        {"--sweep-bw", NULL, NULL, NULL, &o->sweep},
        {"--help", NULL, NULL, NULL, &o->help},
    };
    memset(o, 0, sizeof *o);
    for (int i = 2; i < argc; i++) {
        const char *arg = strcmp(argv[i], "-h") == 0 ? "--help" : argv[i];
        if (strncmp(arg, "--", 2) != 0)
            return tc_fail(err, TC_EINVAL, "unexpected argument '%s' (see topocc compress --help)", arg);
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        int k = -1;
        for (int j = 0; j < (int)(sizeof defs / sizeof *defs); j++)
            if (strlen(defs[j].name) == nl && strncmp(defs[j].name, arg, nl) == 0)
                k = j;
        if (k < 0)
            return tc_fail(err, TC_EINVAL, "unknown option '%.*s' for 'topocc compress': accepted are %s", (int)nl, arg,
                           accepted);
        if (defs[k].flag) {
            if (eq)
                return tc_fail(err, TC_EINVAL, "option %s takes no value", defs[k].name);
            *defs[k].flag = true;
            continue;
        }
        const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!val || !*val)
            return tc_fail(err, TC_EINVAL, "option %s needs a value (see 'topocc compress --help')", defs[k].name);
        if (defs[k].one) {
            if (*defs[k].one)
                return tc_fail(err, TC_EINVAL, "option %s given twice", defs[k].name);
            *defs[k].one = val;
        } else {
            if (*defs[k].n >= MAXC)
                return tc_fail(err, TC_EINVAL, "at most %d %s options", MAXC, defs[k].name);
            defs[k].many[(*defs[k].n)++] = val;
        }
    }
    return TC_OK;
}

/* What the command computes, per codec. */
typedef struct row {
    tc_codec_spec c;
    bool requested;         /* given with --codec (not an added baseline) */
    double thr_given;       /* --codec-throughput, bytes/s (0: roofline) */
    double ratio;           /* steps ratio; < 0: does not reach the target */
    const char *ratio_src;  /* "measured", "given", "assumed" */
    tc_codec_iter it;
    tc_tta tta;
} row;

typedef struct run {
    opts o;
    tc_format fmt;
    tc_workload w;
    tc_topo *t;
    char spec[sizeof ((tc_topo *)0)->spec]; /* the topology as given (the sweep rescales t) */
    row r[MAXC + 2];
    size_t n;
    long i_bf16, i_fp32;
    double baseline_steps, fwd, bwd;
    /* accuracy */
    const char *acc_src;    /* "file", "trained", "given" */
    double target;
    bool target_given;
    const char *ref_name;
    double ref_final;
    tc_train_opts to;
    bool have_to;
    /* sweep */
    size_t nrates;
    double rates[8];
    double sweep_iter[8][MAXC + 2], sweep_tta[8][MAXC + 2], sweep_sp[8][MAXC + 2];
    double cross[MAXC + 2];
} run;

static int find_codec(const run *R, const char *name)
{
    for (size_t i = 0; i < R->n; i++)
        if (strcmp(R->r[i].c.name, name) == 0)
            return (int)i;
    return -1;
}

static void codec_list(const run *R, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < R->n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", i ? ", " : "", R->r[i].c.name);
    }
}

static tc_status add_codec(run *R, const char *s, bool requested, tc_err *err)
{
    tc_codec_spec c;
    tc_status st = tc_codec_parse(s, &c, err);
    if (st)
        return st;
    int k = find_codec(R, c.name);
    if (k >= 0) {
        R->r[k].requested |= requested;
        return TC_OK;
    }
    row *x = &R->r[R->n++];
    memset(x, 0, sizeof *x);
    x->c = c;
    x->requested = requested;
    return TC_OK;
}

/* "NAME=VALUE" where NAME may itself hold '=' (topk:ratio=0.01=2GB/s): split at the last '='. */
static bool split_last_eq(const char *s, char *name, size_t len, const char **val)
{
    const char *eq = strrchr(s, '=');
    if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= len)
        return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = '\0';
    *val = eq + 1;
    return true;
}

static tc_status parse_throughputs(run *R, tc_err *err)
{
    for (int i = 0; i < R->o.nthr; i++) {
        char name[128];
        const char *v;
        if (!split_last_eq(R->o.thr[i], name, sizeof name, &v))
            return tc_fail(err, TC_EINVAL, "invalid --codec-throughput '%s': expected CODEC=GB/s, e.g. topk=5 or "
                                           "powersgd:rank=4=20GB/s", R->o.thr[i]);
        char *end;
        double Bps = strtod(v, &end);
        if (end != v && *end == '\0')
            Bps *= 1e9; /* a bare number is GB/s */
        else if (tc_parse_rate(v, &Bps, err))
            return tc_fail(err, TC_EINVAL, "invalid --codec-throughput '%s': expected a rate, e.g. 20 (GB/s) or "
                                           "20GB/s", R->o.thr[i]);
        if (!(Bps > 0) || !isfinite(Bps))
            return tc_fail(err, TC_EINVAL, "invalid --codec-throughput '%s': the rate must be above 0", R->o.thr[i]);
        /* NAME: a codec as canonicalised by the parser, or a kind for all codecs of that kind. */
        tc_codec_spec c;
        tc_err e2 = {{0}};
        bool parsed = tc_codec_parse(name, &c, &e2) == TC_OK;
        int hits = 0;
        for (size_t k = 0; k < R->n; k++)
            if ((parsed && strcmp(R->r[k].c.name, c.name) == 0) ||
                strcmp(tc_codec_kind_name(R->r[k].c.kind), name) == 0) {
                R->r[k].thr_given = Bps;
                hits++;
            }
        if (!hits) {
            if (!parsed)
                return tc_fail(err, TC_EINVAL, "invalid --codec-throughput '%s': %s", R->o.thr[i], e2.msg);
            char list[1024];
            codec_list(R, list, sizeof list);
            return tc_fail(err, TC_EINVAL, "--codec-throughput for codec '%s', which is not among the codecs (%s)",
                           name, list);
        }
    }
    return TC_OK;
}

static tc_status parse_target(run *R, tc_err *err)
{
    if (!R->o.target)
        return TC_OK;
    char *end;
    double v = strtod(R->o.target, &end);
    bool pct = *end == '%' && end[1] == '\0';
    if (end == R->o.target || (*end && !pct))
        return tc_fail(err, TC_EINVAL, "invalid --target-acc '%s': expected a fraction like 0.85 or a percentage like 85%%",
                       R->o.target);
    if (pct)
        v /= 100;
    if (!(v > 0) || v > 1)
        return tc_fail(err, TC_EINVAL, "invalid --target-acc '%s': the accuracy must be in (0, 1] (or (0%%, 100%%])",
                       R->o.target);
    R->target = v;
    R->target_given = true;
    return TC_OK;
}

static tc_status ratios_given(run *R, tc_err *err)
{
    R->acc_src = "given";
    for (int i = 0; i < R->o.nratio; i++) {
        char name[128];
        const char *v;
        if (!split_last_eq(R->o.ratio[i], name, sizeof name, &v))
            return tc_fail(err, TC_EINVAL, "invalid --steps-ratio '%s': expected CODEC=RATIO, e.g. topk:ratio=0.01=1.3",
                           R->o.ratio[i]);
        tc_codec_spec c;
        tc_status st = tc_codec_parse(name, &c, err);
        if (st)
            return st;
        int k = find_codec(R, c.name);
        if (k < 0) {
            char list[1024];
            codec_list(R, list, sizeof list);
            return tc_fail(err, TC_EINVAL, "--steps-ratio for codec '%s', which is not among the codecs (%s): add --codec %s",
                           c.name, list, c.name);
        }
        double r;
        char *end;
        if (strcmp(v, "never") == 0) {
            r = -1;
        } else {
            r = strtod(v, &end);
            if (end == v || *end || !(r > 0) || !isfinite(r) || r > 1e6)
                return tc_fail(err, TC_EINVAL, "invalid --steps-ratio '%s': the ratio must be a number above 0 or 'never'",
                               R->o.ratio[i]);
        }
        if (R->r[k].ratio_src)
            return tc_fail(err, TC_EINVAL, "--steps-ratio for codec '%s' given twice", c.name);
        R->r[k].ratio = r;
        R->r[k].ratio_src = "given";
    }
    for (size_t k = 0; k < R->n; k++) {
        if (R->r[k].ratio_src)
            continue;
        if (R->r[k].c.kind == TC_CODEC_FP32 || R->r[k].c.kind == TC_CODEC_BF16) {
            R->r[k].ratio = 1;
            R->r[k].ratio_src = "assumed";
        } else {
            return tc_fail(err, TC_EINVAL, "no --steps-ratio for codec '%s': give %s=R (its steps to the target over "
                                           "fp32's) or use --accuracy FILE", R->r[k].c.name, R->r[k].c.name);
        }
    }
    return TC_OK;
}

/* Ratios from curves (read from a file or trained now). */
static tc_status ratios_from_curves(run *R, const tc_acc_curve *cv, size_t nc, const char *where, tc_err *err)
{
    double *ratio = tc_calloc(nc ? nc : 1, sizeof *ratio);
    if (!ratio)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    size_t ref = 0;
    tc_status st = tc_steps_ratios(cv, nc, R->target_given ? R->target : 0, &R->target, &ref, ratio, err);
    if (st == TC_OK) {
        R->ref_name = tc_codec_kind_name(cv[ref].codec.kind);
        R->ref_final = cv[ref].pts[cv[ref].n - 1].test_acc;
    }
    for (size_t k = 0; k < R->n && st == TC_OK; k++) {
        size_t j = 0;
        while (j < nc && strcmp(cv[j].codec.name, R->r[k].c.name) != 0)
            j++;
        if (j < nc) {
            R->r[k].ratio = ratio[j];
            R->r[k].ratio_src = "measured";
        } else if (!R->r[k].requested) {
            /* An added baseline missing from the curves: BF16 gradients
             * converge like FP32 ones (the DDP bf16 hook's premise). */
            R->r[k].ratio = 1;
            R->r[k].ratio_src = "assumed";
        } else {
            char list[1024] = "";
            for (size_t i = 0; i < nc; i++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", cv[i].codec.name);
            }
            st = tc_fail(err, TC_EINVAL, "%s has no curve for codec '%s' (it has %s)", where, R->r[k].c.name, list);
        }
    }
    free(ratio);
    return st;
}

static tc_status ratios_file(run *R, tc_err *err)
{
    R->acc_src = "file";
    tc_acc_curve *cv = NULL;
    size_t nc = 0;
    tc_status st = tc_acc_read(R->o.accuracy, &R->to, &cv, &nc, err);
    if (st)
        return st;
    R->have_to = true;
    char where[300];
    snprintf(where, sizeof where, "the accuracy file %.256s", R->o.accuracy);
    st = ratios_from_curves(R, cv, nc, where, err);
    tc_acc_curves_free(cv, nc);
    free(cv);
    return st;
}

/* No accuracy given: a short run on Fashion-MNIST, every codec on the same
 * seed and data order (topocc train-accuracy has the full options). */
static tc_status ratios_trained(run *R, tc_err *err)
{
    R->acc_src = "trained";
    memset(&R->to, 0, sizeof R->to);
    R->to.model = "mlp";
    R->to.workers = 8;
    R->to.steps = 1000;
    R->to.eval_every = 50;
    R->to.test_subset = 2000;
    tc_train_defaults(&R->to);
    R->have_to = true;
    tc_codec_spec specs[MAXC + 2];
    for (size_t k = 0; k < R->n; k++)
        specs[k] = R->r[k].c;
    tc_acc_curve *cv = tc_calloc(R->n, sizeof *cv);
    if (!cv)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = tc_train_run(&R->to, specs, R->n, cv, err);
    if (st == TC_OK)
        st = ratios_from_curves(R, cv, R->n, "the training run", err);
    tc_acc_curves_free(cv, R->n);
    free(cv);
    return st;
}

static tc_status evaluate_all(run *R, double *iter, tc_err *err)
{
    for (size_t k = 0; k < R->n; k++) {
        tc_status st = tc_workload_iteration(R->t, &R->w, &R->r[k].c, R->r[k].thr_given, &R->r[k].it, err);
        if (st)
            return st;
        iter[k] = R->r[k].it.t.iter_s;
    }
    return TC_OK;
}

static tc_status compute(run *R, tc_err *err)
{
    double iter[MAXC + 2], ratio[MAXC + 2];
    tc_status st = evaluate_all(R, iter, err);
    if (st)
        return st;
    for (size_t k = 0; k < R->n; k++)
        ratio[k] = R->r[k].ratio;
    tc_tta tta[MAXC + 2];
    tc_tta_compute(iter, ratio, R->n, R->baseline_steps, R->i_bf16, R->i_fp32, tta);
    for (size_t k = 0; k < R->n; k++)
        R->r[k].tta = tta[k];
    if (!R->o.sweep)
        return TC_OK;
    /* The regime map: the same job at each fabric bandwidth per endpoint. */
    R->nrates = tc_sweep_default_rates(R->rates);
    tc_codec_iter keep[MAXC + 2];
    for (size_t k = 0; k < R->n; k++)
        keep[k] = R->r[k].it;
    for (size_t i = 0; i < R->nrates && st == TC_OK; i++) {
        if ((st = tc_topo_equalize_injection(R->t, R->rates[i], err)) || (st = evaluate_all(R, iter, err)))
            break;
        tc_tta_compute(iter, ratio, R->n, R->baseline_steps, R->i_bf16, R->i_fp32, tta);
        for (size_t k = 0; k < R->n; k++) {
            R->sweep_iter[i][k] = iter[k];
            R->sweep_tta[i][k] = tta[k].tta_s;
            R->sweep_sp[i][k] = tta[k].speedup_bf16;
        }
    }
    for (size_t k = 0; k < R->n; k++) {
        R->r[k].it = keep[k];
        double sp[8];
        for (size_t i = 0; i < R->nrates; i++)
            sp[i] = R->sweep_sp[i][k];
        R->cross[k] = tc_crossover_bw(R->rates, sp, R->nrates, TC_BEAT_THRESHOLD);
    }
    return st;
}

/* ---- output ------------------------------------------------------------ */

static const char *fmt_dur(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s >= 2 * 86400)
        snprintf(buf, len, "%.3gd", s / 86400);
    else if (s >= 2 * 3600)
        snprintf(buf, len, "%.3gh", s / 3600);
    else if (s >= 120)
        snprintf(buf, len, "%.3gmin", s / 60);
    else
        tc_fmt_time(s, buf, len);
    return buf;
}

static const char *fmt_x(double v, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, "%.2fx", v);
    else
        snprintf(buf, len, "-");
    return buf;
}

static const char *fmt_gbps(double Bps, char *buf, size_t len)
{
    double g = Bps * 8 / 1e9;
    if (g >= 1000)
        snprintf(buf, len, "%.3gTb/s", g / 1000);
    else
        snprintf(buf, len, "%.3gGb/s", g);
    return buf;
}

static void print_tables(const run *R)
{
    char b[10][64];
    FILE *f = stdout;
    bool csv = R->fmt == TC_FMT_CSV;
    if (!csv) {
        const tc_model *m = &R->w.model;
        double mfu = R->w.mfu > 0 ? R->w.mfu : m->mfu;
        fprintf(f, "model       %s: %.4g M parameters (%s float32 gradients), %u layers", m->name, m->params / 1e6,
                tc_fmt_size(4 * m->params, b[0], 64), m->layers);
        if (m->batch)
            fprintf(f, ", batch %u per worker, %.4g GFLOP per sample\n", m->batch, m->flops_sample / 1e9);
        else
            fprintf(f, ", %.4g TFLOP per iteration\n", m->flops_iter / 1e12);
        fprintf(f, "compute     %s at %.0f%% MFU: forward %s, backward %s per iteration\n", R->w.accel->name, 100 * mfu,
                tc_fmt_time(R->fwd, b[0], 64), tc_fmt_time(R->bwd, b[1], 64));
        fprintf(f, "network     %s, %u workers, %s mode; %zu buckets of %s%s\n", R->spec, R->w.workers,
                tc_mode_name(R->w.eval.mode), R->r[0].it.nbuckets,
                tc_fmt_size(R->w.bucket_bytes > 0 ? R->w.bucket_bytes : TC_DDP_BUCKET_BYTES, b[0], 64),
                R->w.offload ? ", codec work offloaded" : ", codec work on the accelerator");
        if (strcmp(R->acc_src, "given") == 0)
            fprintf(f, "accuracy    steps ratios as given (--steps-ratio)\n");
        else
            fprintf(f, "accuracy    target %.4g (%s), %s: %s\n", R->target,
                    R->target_given ? "given" : "95% of the reference's final accuracy", R->ref_name,
                    strcmp(R->acc_src, "file") == 0 ? R->o.accuracy : "measured now on Fashion-MNIST (mlp, 8 workers)");
        fprintf(f, "baseline    %.0f steps to the target", R->baseline_steps);
        if (R->w.model.train_samples > 0)
            fprintf(f, " (%.3g M samples at %u per step)\n", R->w.model.train_samples / 1e6,
                    R->w.model.batch * R->w.workers);
        else
            fprintf(f, " (custom model's steps=)\n");
        fputc('\n', f);
    }
    tc_table tb;
    tc_table_init(&tb, 12);
    const char *hdr[12] = {"codec", "collective", "wire/iter", "codec work", "network", "iteration", "exposed",
                           "steps ratio", "time to acc", "vs bf16", "vs fp32", "note"};
    tc_table_row(&tb, hdr);
    for (size_t k = 0; k < R->n; k++) {
        const row *x = &R->r[k];
        char coll[64], ratio[64], note[96];
        snprintf(coll, sizeof coll, "%s%s", tc_op_name(x->it.op), x->it.collectives > 1 ? " x2" : "");
        if (x->ratio < 0)
            snprintf(ratio, sizeof ratio, "never");
        else
            snprintf(ratio, sizeof ratio, "%.3g", x->ratio);
        snprintf(note, sizeof note, "%s%s%s", x->ratio < 0 ? "does not reach the target" : "",
                 x->ratio < 0 && strcmp(x->ratio_src, "measured") ? ", " : "",
                 strcmp(x->ratio_src, "measured") == 0 ? "" : strcmp(x->ratio_src, "given") == 0 ? "ratio given"
                                                                                                 : "ratio assumed 1");
        const char *cells[12] = {x->c.name,
                                 coll,
                                 tc_fmt_size(x->it.sent_bytes, b[0], 64),
                                 tc_fmt_time(x->it.t.codec_s, b[1], 64),
                                 tc_fmt_time(x->it.t.comm_s, b[2], 64),
                                 tc_fmt_time(x->it.t.iter_s, b[3], 64),
                                 tc_fmt_time(x->it.t.exposed_s, b[4], 64),
                                 ratio,
                                 fmt_dur(x->tta.tta_s, b[5], 64),
                                 fmt_x(x->tta.speedup_bf16, b[6], 64),
                                 fmt_x(x->tta.speedup_fp32, b[7], 64),
                                 note};
        tc_table_row(&tb, cells);
    }
    if (csv)
        tc_table_print_csv(&tb, f);
    else
        tc_table_print(&tb, f);
    tc_table_free(&tb);
    if (!R->nrates)
        return;
    fputc('\n', f);
    if (!csv)
        fprintf(f, "regime map: speedup over bf16 in time to accuracy, by fabric bandwidth per endpoint\n");
    int nc = (int)R->n + 1;
    tc_table_init(&tb, nc);
    const char *cells[MAXC + 3];
    cells[0] = "bandwidth";
    for (size_t k = 0; k < R->n; k++)
        cells[k + 1] = R->r[k].c.name;
    tc_table_row(&tb, cells);
    static char vals[MAXC + 3][64];
    for (size_t i = 0; i < R->nrates; i++) {
        cells[0] = fmt_gbps(R->rates[i], vals[0], 64);
        for (size_t k = 0; k < R->n; k++)
            cells[k + 1] = fmt_x(R->sweep_sp[i][k], vals[k + 1], 64);
        tc_table_row(&tb, cells);
    }
    if (csv)
        tc_table_print_csv(&tb, f);
    else
        tc_table_print(&tb, f);
    tc_table_free(&tb);
    if (csv)
        return;
    fputc('\n', f);
    char lo[64], hi[64];
    fmt_gbps(R->rates[0], lo, 64);
    fmt_gbps(R->rates[R->nrates - 1], hi, 64);
    for (size_t k = 0; k < R->n; k++) {
        if ((long)k == R->i_bf16)
            continue;
        double x = R->cross[k];
        if (isinf(x))
            fprintf(f, "%-20s beats bf16 (by over 1%%) at every bandwidth from %s to %s\n", R->r[k].c.name, lo, hi);
        else if (x <= 0)
            fprintf(f, "%-20s does not beat bf16 (by over 1%%) at any bandwidth from %s to %s\n", R->r[k].c.name, lo, hi);
        else
            fprintf(f, "%-20s beats bf16 (by over 1%%) below about %s per endpoint\n", R->r[k].c.name, fmt_gbps(x, b[0], 64));
    }
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *to_json(const run *R)
{
    json_t *o = json_object(), *in = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "command", json_string("compress"));
    const tc_model *m = &R->w.model;
    json_t *jm = json_object();
    json_object_set_new(jm, "name", json_string(m->name));
    json_object_set_new(jm, "params", json_real(m->params));
    json_object_set_new(jm, "layers", json_integer(m->layers));
    json_object_set_new(jm, "batch_per_worker", m->batch ? json_integer(m->batch) : json_null());
    json_object_set_new(jm, "flops_per_sample", m->batch ? json_real(m->flops_sample) : json_null());
    json_object_set_new(jm, "flops_per_iteration", json_real(m->flops_iter));
    json_object_set_new(jm, "train_samples", m->train_samples > 0 ? json_real(m->train_samples) : json_null());
    json_object_set_new(jm, "source", json_string(m->source));
    json_object_set_new(in, "model", jm);
    json_object_set_new(in, "topology", json_string(R->spec));
    json_object_set_new(in, "workers", json_integer(R->w.workers));
    json_object_set_new(in, "mode", json_string(tc_mode_name(R->w.eval.mode)));
    json_object_set_new(in, "routing", json_string(tc_routing_name(R->w.eval.routing, R->t)));
    json_t *ja = json_object();
    json_object_set_new(ja, "name", json_string(R->w.accel->name));
    json_object_set_new(ja, "flops", json_real(R->w.accel->flops));
    json_object_set_new(ja, "mem_Bps", json_real(R->w.accel->mem_Bps));
    json_object_set_new(ja, "mfu", json_real(R->w.mfu > 0 ? R->w.mfu : m->mfu));
    json_object_set_new(in, "accelerator", ja);
    json_object_set_new(in, "forward_s", json_real(R->fwd));
    json_object_set_new(in, "backward_s", json_real(R->bwd));
    json_object_set_new(in, "bucket_bytes", json_real(R->w.bucket_bytes > 0 ? R->w.bucket_bytes : TC_DDP_BUCKET_BYTES));
    json_object_set_new(in, "buckets", json_integer((json_int_t)R->r[0].it.nbuckets));
    json_object_set_new(in, "offload", json_boolean(R->w.offload));
    json_object_set_new(in, "baseline_steps", json_real(R->baseline_steps));
    json_t *acc = json_object();
    json_object_set_new(acc, "source", json_string(R->acc_src));
    json_object_set_new(acc, "file", strcmp(R->acc_src, "file") == 0 ? json_string(R->o.accuracy) : json_null());
    bool meas = strcmp(R->acc_src, "given") != 0;
    json_object_set_new(acc, "target", meas ? json_real(R->target) : json_null());
    json_object_set_new(acc, "target_rule", meas ? json_string(R->target_given ? "given" : "0.95 x reference final")
                                                 : json_null());
    json_object_set_new(acc, "reference", meas ? json_string(R->ref_name) : json_null());
    json_object_set_new(acc, "reference_final", meas ? json_real(R->ref_final) : json_null());
    if (R->have_to) {
        json_t *tr = json_object();
        json_object_set_new(tr, "model", json_string(R->to.model ? R->to.model : "mlp"));
        json_object_set_new(tr, "workers", json_integer(R->to.workers));
        json_object_set_new(tr, "hidden", json_integer(R->to.hidden));
        json_object_set_new(tr, "batch", json_integer(R->to.batch));
        json_object_set_new(tr, "steps", json_integer(R->to.steps));
        json_object_set_new(tr, "eval_every", json_integer(R->to.eval_every));
        json_object_set_new(tr, "lr", json_real(R->to.lr));
        json_object_set_new(tr, "seed", json_integer((json_int_t)R->to.seed));
        json_object_set_new(tr, "train_subset", json_integer(R->to.train_subset));
        json_object_set_new(tr, "test_subset", json_integer(R->to.test_subset));
        json_object_set_new(acc, "training", tr);
    }
    json_object_set_new(in, "accuracy", acc);
    json_t *thr = json_array();
    for (size_t k = 0; k < R->n; k++) {
        const row *x = &R->r[k];
        json_t *e = json_object();
        json_object_set_new(e, "codec", json_string(x->c.name));
        json_object_set_new(e, "Bps", x->it.codec_Bps > 0 && isfinite(x->it.codec_Bps) ? json_real(x->it.codec_Bps)
                                                                                       : json_null());
        json_object_set_new(e, "source", json_string(x->c.kind == TC_CODEC_FP32 ? "none (no codec work)"
                                                     : x->thr_given > 0      ? "given"
                                                                             : "roofline"));
        json_array_append_new(thr, e);
    }
    json_object_set_new(in, "codec_throughputs", thr);
    json_object_set_new(o, "inputs", in);
    json_t *res = json_array();
    for (size_t k = 0; k < R->n; k++) {
        const row *x = &R->r[k];
        json_t *e = json_object();
        json_object_set_new(e, "codec", json_string(x->c.name));
        json_object_set_new(e, "requested", json_boolean(x->requested));
        json_object_set_new(e, "op", json_string(tc_op_name(x->it.op)));
        json_object_set_new(e, "collectives_per_bucket", json_integer(x->it.collectives));
        json_object_set_new(e, "algo", json_string(tc_algo_name(x->it.algo)));
        json_object_set_new(e, "bits_per_coord", json_real(x->it.bits_per_coord));
        json_object_set_new(e, "collective_bytes_per_iteration", json_real(x->it.coll_bytes));
        json_object_set_new(e, "wire_bytes_per_iteration", json_real(x->it.sent_bytes));
        json_object_set_new(e, "codec_s", json_real(x->it.t.codec_s));
        json_object_set_new(e, "network_s", json_real(x->it.t.comm_s));
        json_object_set_new(e, "backward_end_s", json_real(x->it.t.bwd_end_s));
        json_object_set_new(e, "iteration_s", json_real(x->it.t.iter_s));
        json_object_set_new(e, "compute_s", json_real(x->it.t.compute_s));
        json_object_set_new(e, "exposed_s", json_real(x->it.t.exposed_s));
        json_object_set_new(e, "reaches_target", json_boolean(x->ratio >= 0));
        json_object_set_new(e, "steps_ratio", x->ratio >= 0 ? json_real(x->ratio) : json_null());
        json_object_set_new(e, "steps_ratio_source", json_string(x->ratio_src));
        json_object_set_new(e, "steps", num(x->tta.steps));
        json_object_set_new(e, "time_to_accuracy_s", num(x->tta.tta_s));
        json_object_set_new(e, "speedup_vs_bf16", num(x->tta.speedup_bf16));
        json_object_set_new(e, "speedup_vs_fp32", num(x->tta.speedup_fp32));
        json_array_append_new(res, e);
    }
    json_object_set_new(o, "results", res);
    if (R->nrates) {
        json_t *sw = json_object(), *pts = json_array(), *cr = json_array();
        for (size_t i = 0; i < R->nrates; i++) {
            json_t *p = json_object(), *cs = json_array();
            json_object_set_new(p, "injection_Bps", json_real(R->rates[i]));
            for (size_t k = 0; k < R->n; k++) {
                json_t *e = json_object();
                json_object_set_new(e, "codec", json_string(R->r[k].c.name));
                json_object_set_new(e, "iteration_s", json_real(R->sweep_iter[i][k]));
                json_object_set_new(e, "time_to_accuracy_s", num(R->sweep_tta[i][k]));
                json_object_set_new(e, "speedup_vs_bf16", num(R->sweep_sp[i][k]));
                json_array_append_new(cs, e);
            }
            json_object_set_new(p, "codecs", cs);
            json_array_append_new(pts, p);
        }
        for (size_t k = 0; k < R->n; k++) {
            json_t *e = json_object();
            double x = R->cross[k];
            json_object_set_new(e, "codec", json_string(R->r[k].c.name));
            json_object_set_new(e, "regime", json_string((long)k == R->i_bf16 ? "baseline"
                                                         : isinf(x)            ? "always"
                                                         : x <= 0              ? "never"
                                                                               : "below"));
            json_object_set_new(e, "beats_bf16_below_Bps", isfinite(x) && x > 0 ? json_real(x) : json_null());
            json_array_append_new(cr, e);
        }
        json_object_set_new(sw, "points", pts);
        json_object_set_new(sw, "crossover", cr);
        json_object_set_new(o, "sweep", sw);
    }
    return o;
}

static tc_status setup(run *R, tc_err *err)
{
    opts *o = &R->o;
    if (!o->topo || !o->model || !o->ncodec)
        return tc_fail(err, TC_EINVAL, "compress needs --topo SPEC, --model MODEL and at least one --codec C (see "
                                       "topocc compress --help)");
    if (o->accuracy && o->nratio)
        return tc_fail(err, TC_EINVAL, "--accuracy and --steps-ratio are alternatives: give one");
    if (o->target && o->nratio)
        return tc_fail(err, TC_EINVAL, "--target-acc applies to measured accuracy (--accuracy or training), not to "
                                       "--steps-ratio");
    tc_status st;
    R->fmt = TC_FMT_TABLE;
    if (o->format && (st = tc_format_parse(o->format, &R->fmt, err)))
        return st;
    if (o->mode && (st = tc_mode_parse(o->mode, &R->w.eval.mode, err)))
        return st;
    R->w.accel = tc_accel_find(o->accel ? o->accel : "h100");
    if (!R->w.accel)
        return tc_fail(err, TC_EINVAL, "unknown accelerator '%s': accepted are h100, tpu", o->accel);
    if ((st = tc_model_parse(o->model, &R->w.model, err)))
        return st;
    if (o->mfu) {
        char *end;
        R->w.mfu = strtod(o->mfu, &end);
        if (end == o->mfu || *end || !(R->w.mfu > 0) || R->w.mfu > 1)
            return tc_fail(err, TC_EINVAL, "invalid --mfu '%s': expected a fraction in (0, 1], e.g. 0.4", o->mfu);
    }
    if (o->bucket) {
        if ((st = tc_parse_size(o->bucket, &R->w.bucket_bytes, err)))
            return st;
        if (!(R->w.bucket_bytes >= 1))
            return tc_fail(err, TC_EINVAL, "invalid --bucket '%s': expected a size of at least 1 byte, e.g. 25MiB",
                           o->bucket);
    }
    R->w.offload = o->offload;
    if ((st = parse_target(R, err)))
        return st;
    /* Codecs: the baselines first, then the requested ones in order. */
    if ((st = add_codec(R, "fp32", false, err)) || (st = add_codec(R, "bf16", false, err)))
        return st;
    for (int i = 0; i < o->ncodec; i++)
        if ((st = add_codec(R, o->codec[i], true, err)))
            return st;
    R->i_fp32 = find_codec(R, R->r[0].c.name);
    R->i_bf16 = find_codec(R, R->r[1].c.name);
    if ((st = parse_throughputs(R, err)))
        return st;
    cli_args ca;
    memset(&ca, 0, sizeof ca);
    ca.equalize = o->equalize;
    if ((st = cli_topo(o->topo, &ca, &R->t, err)))
        return st;
    snprintf(R->spec, sizeof R->spec, "%s", R->t->spec);
    if (o->routing && (st = tc_routing_parse(o->routing, R->t, &R->w.eval.routing, err)))
        return st;
    R->w.workers = R->t->n_endpoints;
    if (o->workers) {
        if (tc_parse_u32(o->workers, &R->w.workers, err))
            return tc_fail(err, TC_EINVAL, "invalid --workers '%s': expected a positive integer", o->workers);
        if (R->w.workers > R->t->n_endpoints)
            return tc_fail(err, TC_EINVAL, "--workers %u: the topology has %u endpoints", R->w.workers,
                           R->t->n_endpoints);
    }
    if (R->w.workers < 2)
        return tc_fail(err, TC_EINVAL, "--workers %u: data parallelism needs at least 2 workers", R->w.workers);
    R->baseline_steps = tc_model_baseline_steps(&R->w.model, R->w.workers);
    tc_workload_compute(&R->w, &R->fwd, &R->bwd);
    if (o->nratio)
        return ratios_given(R, err);
    if (o->accuracy)
        return ratios_file(R, err);
    return ratios_trained(R, err);
}

int cmd_compress(int argc, char **argv)
{
    tc_err err = {{0}};
    run *R = tc_calloc(1, sizeof *R);
    if (!R)
        return cli_exit(tc_fail(&err, TC_EINTERNAL, "out of memory"), &err);
    tc_status st = parse_args(argc, argv, &R->o, &err);
    if (st == TC_OK && R->o.help) {
        fputs(help, stdout);
        free(R);
        return 0;
    }
    if (st == TC_OK)
        st = setup(R, &err);
    if (st == TC_OK)
        st = compute(R, &err);
    if (st == TC_OK) {
        if (R->fmt == TC_FMT_JSON) {
            json_t *j = to_json(R);
            st = tc_write_json(j, NULL, &err);
            json_decref(j);
        } else {
            print_tables(R);
        }
    }
    tc_topo_free(R->t);
    free(R);
    return cli_exit(st, &err);
}
