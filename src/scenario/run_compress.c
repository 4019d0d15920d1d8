/*
 * run_compress.c - the compress scenario: does gradient compression pay,
 * end to end? For each codec one DDP training iteration on the network
 * (topocc/workload.h) and the steps it needs to a target accuracy give the
 * time to accuracy, against the BF16 and FP32 all-reduce baselines
 * (docs/MODEL.md, "Gradient compression, end to end"). The steps ratios
 * (against bf16) are given, read from embedded accuracy curves, or measured
 * now by short Fashion-MNIST training runs on several seeds; measured, they
 * carry an interval into the time to accuracy, and a codec is called
 * faster or slower than bf16 only where that interval excludes 1. The bandwidth sweep (the regime map) runs
 * the same job on copies of the scenario with another injection rate; the
 * scenario's own network is never edited.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/outcome.h"
#include "scenario_int.h"
#include "topocc/zoo.h"

/* What the evaluations of one run share. */
typedef struct job {
    const tc_scenario *s;
    const tc_run_opts *ro;
    tc_compress_out *o;
    tc_workload w;
    uint32_t *map;     /* the job's rank map (owned) */
} job;

/* ---- the codecs ---- */

static int find_codec(const tc_compress_out *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->rows[i].codec.name, name) == 0)
            return (int)i;
    return -1;
}

static void codec_list(const tc_compress_out *o, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < o->n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", i ? ", " : "", o->rows[i].codec.name);
    }
}

static tc_status add_codec(tc_compress_out *o, const char *spec, bool requested, tc_err *err)
{
    tc_codec_spec c;
    tc_status st = tc_codec_parse(spec, &c, err);
    if (st)
        return st;
    int k = find_codec(o, c.name);
    if (k >= 0) {
        o->rows[k].requested |= requested;
        return TC_OK;
    }
    if (o->n >= TC_COMPRESS_MAX_CODECS)
        return tc_fail(err, TC_EINVAL, "at most %d codecs (--codec)", TC_SCN_MAX_CODECS);
    tc_compress_row *x = &o->rows[o->n++];
    memset(x, 0, sizeof *x);
    x->codec = c;
    x->requested = requested;
    x->final_acc = NAN;
    return TC_OK;
}

/* The baselines first, then the scenario's codecs in order, each once. */
static tc_status make_codecs(tc_compress_out *o, const tc_scenario *s, tc_err *err)
{
    tc_status st;
    if ((st = add_codec(o, "fp32", false, err)) || (st = add_codec(o, "bf16", false, err)))
        return st;
    for (int i = 0; i < s->ncodecs; i++)
        if ((st = add_codec(o, s->codecs[i], true, err)))
            return st;
    o->i_fp32 = 0;
    o->i_bf16 = 1;
    return TC_OK;
}

static bool is_kind(const char *name)
{
    for (int k = 0; k < TC_CODEC_COUNT; k++)
        if (strcmp(name, tc_codec_kind_name((tc_codec_kind)k)) == 0)
            return true;
    return false;
}

/* Which codecs a per-codec value names: level[k] = 2 where it is codec k's
 * spec, 1 where it is a bare kind ("topk": every topk codec), else 0. A
 * value that names none of the codecs is an error. */
static tc_status value_rows(const tc_compress_out *o, const char *name, const char *flag, int *level, tc_err *err)
{
    bool kind = is_kind(name);
    tc_codec_spec c;
    tc_err e2 = {{0}};
    if (!kind && tc_codec_parse(name, &c, &e2))
        return tc_fail(err, TC_EINVAL, "invalid %s '%s': %s", flag, name, e2.msg);
    int hits = 0;
    for (size_t k = 0; k < o->n; k++) {
        const tc_codec_spec *r = &o->rows[k].codec;
        level[k] = kind ? (strcmp(tc_codec_kind_name(r->kind), name) == 0) : 2 * (strcmp(r->name, c.name) == 0);
        hits += level[k] > 0;
    }
    if (hits)
        return TC_OK;
    char list[1024];
    codec_list(o, list, sizeof list);
    return tc_fail(err, TC_EINVAL, "%s for codec '%s', which is not among the codecs (%s): add --codec %s", flag,
                   kind ? name : c.name, list, kind ? name : c.name);
}

/* Whether a codec does codec work: fp32 on its all-reduce does none (its
 * servers add on ps; tc_workload_iteration). */
static bool does_work(const tc_codec_spec *c)
{
    return c->kind != TC_CODEC_FP32 || c->path != TC_PATH_ALLREDUCE;
}

/* Given encode+decode throughputs: a codec's own value beats its kind's;
 * the same codec twice (at the same level) is an error, as for the steps
 * ratios, and so is a throughput for codecs that do no codec work. */
static tc_status apply_throughputs(tc_compress_out *o, const tc_scenario *s, tc_err *err)
{
    int prio[TC_COMPRESS_MAX_CODECS] = {0}, level[TC_COMPRESS_MAX_CODECS];
    for (int i = 0; i < s->nthroughput; i++) {
        const tc_scn_codec_value *v = &s->throughput[i];
        if (!(v->value >= 0.125 && v->value <= 1e18))
            return tc_fail(err, TC_EINVAL, "invalid --codec-throughput for codec '%s': the rate must be from 1bps to "
                                           "1e18B/s, e.g. %s=20GB/s", v->codec, v->codec);
        tc_status st = value_rows(o, v->codec, "--codec-throughput", level, err);
        if (st)
            return st;
        bool works = false;
        for (size_t k = 0; k < o->n; k++)
            works |= level[k] && does_work(&o->rows[k].codec);
        if (!works)
            return tc_fail(err, TC_EINVAL, "--codec-throughput %s: fp32 on its all-reduce does no codec work (nothing "
                                           "to encode or decode); give throughputs for the codecs that do (fp32 on "
                                           "path=ps: its servers add)", v->codec);
        for (size_t k = 0; k < o->n; k++) {
            if (!level[k] || level[k] < prio[k] || !does_work(&o->rows[k].codec))
                continue;
            if (level[k] == prio[k])
                return tc_fail(err, TC_EINVAL, "--codec-throughput for codec '%s' given twice",
                               level[k] == 2 ? o->rows[k].codec.name : v->codec);
            o->rows[k].thr_given = v->value;
            prio[k] = level[k];
        }
    }
    return TC_OK;
}

/* ---- the steps ratios ---- */

/* A ratio gives steps(codec) = ratio x B (B the baseline's steps to the
 * target): at least one step, at most 1e6 times B. */
static tc_status check_ratio(const tc_scn_codec_value *v, double B, tc_err *err)
{
    double lo = B >= 1 ? 1 / B : 1;
    if (v->value < 0 || (v->value >= lo && v->value <= 1e6))
        return TC_OK;
    /* the lower end shown to 3 digits, rounded up (every value from it on
     * is accepted) */
    double e = pow(10, floor(log10(lo)) - 2), shown = ceil(lo / e) * e;
    return tc_fail(err, TC_EINVAL, "invalid --steps-ratio for codec '%s': %g; the ratio must be from %.3g (one step "
                                   "to the target, of the baseline's %.0f) to 1e6, or 'never'", v->codec, v->value,
                   shown, B >= 1 ? B : 1);
}

/* A codec's own ratio beats its kind's; the same codec twice is an error.
 * The baselines not given converge alike (ratio 1, assumed). */
static tc_status ratios_given(tc_compress_out *o, const tc_scenario *s, tc_err *err)
{
    int prio[TC_COMPRESS_MAX_CODECS] = {0}, level[TC_COMPRESS_MAX_CODECS];
    o->acc_source = "given";
    for (int i = 0; i < s->nsteps_ratio; i++) {
        const tc_scn_codec_value *v = &s->steps_ratio[i];
        tc_status st = check_ratio(v, o->baseline_steps, err);
        if (st || (st = value_rows(o, v->codec, "--steps-ratio", level, err)))
            return st;
        for (size_t k = 0; k < o->n; k++) {
            if (!level[k] || level[k] < prio[k])
                continue;
            if (level[k] == prio[k])
                return tc_fail(err, TC_EINVAL, "--steps-ratio for codec '%s' given twice", o->rows[k].codec.name);
            /* the reference: every ratio is steps(codec) / steps(bf16) */
            if ((long)k == o->i_bf16 && v->value != 1) {
                char r[32] = "never";
                if (v->value >= 0)
                    snprintf(r, sizeof r, "%g", v->value);
                return tc_fail(err, TC_EINVAL, "invalid --steps-ratio %s=%s: every ratio is against bf16's steps, so "
                                               "bf16's own is 1 (give 1 or leave it out; a bf16 codec on another "
                                               "path takes its own by its spec, e.g. bf16:path=ps=R)",
                               v->codec, r);
            }
            o->rows[k].steps_ratio = v->value < 0 ? -1.0 : v->value;
            o->rows[k].ratio_lo = o->rows[k].ratio_hi = o->rows[k].steps_ratio;
            o->rows[k].ratio_source = "given";
            prio[k] = level[k];
        }
    }
    for (size_t k = 0; k < o->n; k++) {
        tc_compress_row *x = &o->rows[k];
        if (x->ratio_source)
            continue;
        if ((x->codec.kind != TC_CODEC_FP32 && x->codec.kind != TC_CODEC_BF16) || x->codec.path != TC_PATH_ALLREDUCE)
            return tc_fail(err, TC_EINVAL, "no --steps-ratio for codec '%s': give %s=R (its steps to the target "
                                           "over bf16's) or use --accuracy FILE", x->codec.name, x->codec.name);
        x->steps_ratio = x->ratio_lo = x->ratio_hi = 1;
        x->ratio_source = "assumed";
    }
    return TC_OK;
}

/* The codecs of the curves, each once. */
static void curve_list(const tc_acc_curve *cv, size_t nc, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < nc; i++) {
        size_t k = 0;
        while (k < i && strcmp(cv[k].codec.name, cv[i].codec.name) != 0)
            k++;
        if (k < i)
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", l ? ", " : "", cv[i].codec.name);
    }
}

/* Ratios from curves (embedded or trained now), over their seeds against
 * bf16 (tc_acc_stats_compute); where names the curves' source, longer how
 * to train longer where bf16 falls short of the target (compress has no
 * --steps). target: the one to use, 0 for the default rule. */
static tc_status ratios_from_curves(tc_compress_out *o, const tc_acc_curve *cv, size_t nc, double target,
                                   const char *where, const char *longer, tc_err *err)
{
    tc_acc_stats st;
    tc_status r = tc_acc_stats_compute_hint(cv, nc, target, longer, &st, err);
    if (r)
        return r;
    snprintf(o->reference, sizeof o->reference, "bf16");
    o->target = st.target;
    o->target_given = st.target_given;
    o->reference_final = st.ref_final;
    o->seeds = st.runs;
    o->same_seeds = true;
    for (size_t k = 0; k < o->n && r == TC_OK; k++) {
        tc_compress_row *x = &o->rows[k];
        const tc_acc_codec_stats *c = tc_acc_stats_find(&st, x->codec.name);
        if (c) {
            bool all = c->reached == c->runs;
            x->steps_ratio = all ? c->ratio : -1;
            x->ratio_lo = all ? c->ratio_lo : NAN;
            x->ratio_hi = all ? c->ratio_hi : NAN;
            x->runs = c->runs;
            x->reached = c->reached;
            x->final_acc = c->final_mean;
            x->ratio_source = "measured";
            o->same_seeds &= c->same_seeds;
        } else if (!x->requested) {
            /* fp32, added and missing from the curves: full-precision
             * gradients converge like BF16 ones (the DDP bf16 hook's
             * premise). bf16 itself is never missing (the statistics need
             * it). */
            x->steps_ratio = x->ratio_lo = x->ratio_hi = 1;
            x->ratio_source = "assumed";
        } else {
            char list[1024];
            curve_list(cv, nc, list, sizeof list);
            r = tc_fail(err, TC_EINVAL, "%s has no curve for codec '%s' (it has %s): train it too (--codec %s)",
                        where, x->codec.name, list, x->codec.name);
        }
    }
    tc_acc_stats_free(&st);
    return r;
}

/* Records the training options behind the curves (no data directory, no
 * callback: the outcome outlives both). */
static void keep_training(tc_compress_out *o, const tc_train_opts *t)
{
    o->have_training = true;
    o->training = *t;
    snprintf(o->training_model, sizeof o->training_model, "%s", t->model ? t->model : "mlp");
    o->training.model = o->training_model;
    o->training.data_dir = NULL;
    o->training.progress = NULL;
    o->training.progress_ud = NULL;
    tc_proxy_info pi;
    if (tc_train_proxy(o->training_model, &pi)) {
        snprintf(o->proxy_family, sizeof o->proxy_family, "%s", pi.family);
        snprintf(o->proxy_dataset, sizeof o->proxy_dataset, "%s", pi.dataset);
    }
    const tc_zoo_model *z = tc_zoo_find(o->model.name);
    if (z)
        snprintf(o->model_family, sizeof o->model_family, "%s", z->arch == TC_MODEL_CNN ? "vision" : "language");
    o->proxy_mismatch = o->model_family[0] && o->proxy_family[0] && strcmp(o->model_family, o->proxy_family) != 0;
}

/* The target: --target-acc, else the one the file's statistics were given
 * (train-accuracy --target-acc), else the default rule. */
static tc_status ratios_embedded(tc_compress_out *o, const tc_scenario *s, tc_err *err)
{
    o->acc_source = "file";
    keep_training(o, &s->accuracy_opts);
    double target = s->target_acc > 0 ? s->target_acc : s->accuracy_opts.target;
    return ratios_from_curves(o, s->accuracy, s->naccuracy, target, "the accuracy file (--accuracy)",
                              "rerun train-accuracy with more --steps and pass its file with --accuracy", err);
}

/* No accuracy given: short runs on Fashion-MNIST, train.seeds of them per
 * codec, run j of every codec on the same seed and data order (the
 * scenario's train.* options). */
static tc_status ratios_trained(const job *J, tc_err *err)
{
    tc_compress_out *o = J->o;
    o->acc_source = "trained";
    tc_train_opts to = J->s->train;
    to.progress = J->ro ? J->ro->progress : NULL;
    to.progress_ud = J->ro ? J->ro->progress_ud : NULL;
    tc_train_defaults(&to);
    keep_training(o, &to);
    tc_codec_spec specs[TC_COMPRESS_MAX_CODECS];
    for (size_t k = 0; k < o->n; k++) {
        specs[k] = o->rows[k].codec;
        /* The proxy has fewer workers than the job: its parameter servers
         * are at most one per worker. The error is of the same kind at any
         * S: every coordinate is quantized once on its push and once on
         * its pull, by whichever server holds it. */
        if (specs[k].path == TC_PATH_PS && specs[k].servers > to.workers) {
            specs[k].servers = to.workers;
            tc_codec_spec_name(&specs[k]);
        }
    }
    tc_acc_curve *cv = NULL;
    size_t nc = 0;
    tc_status st = tc_train_seeds(&to, specs, o->n, 0, &cv, &nc, err);
    for (size_t i = 0; st == TC_OK && i < nc; i++) /* the curves under the job's codec names */
        cv[i].codec = o->rows[i / to.seeds].codec;
    if (st == TC_OK)
        st = ratios_from_curves(o, cv, nc, J->s->target_acc, "the training run",
                                "more steps (train.steps in a --scenario file)", err);
    tc_acc_curves_free(cv, nc);
    free(cv);
    return st;
}

/* The ratios given or read from embedded curves (not trained). */
static tc_status steps_ratios(const job *J, tc_err *err)
{
    const tc_scenario *s = J->s;
    if (s->nsteps_ratio)
        return ratios_given(J->o, s, err);
    return ratios_embedded(J->o, s, err);
}

/* ---- the workload ---- */

/* The checks of values a scenario file could carry past the flag parser. */
static tc_status check_inputs(const tc_scenario *s, tc_err *err)
{
    if (s->ntopo < 1 || !s->model[0] || s->ncodecs < 1)
        return tc_fail(err, TC_EINVAL, "compress needs --topo SPEC, --model MODEL and at least one --codec C (see "
                                       "topocc compress --help)");
    if (s->naccuracy && s->nsteps_ratio)
        return tc_fail(err, TC_EINVAL, "--accuracy and --steps-ratio are alternatives: give one");
    if (s->target_acc > 0 && s->nsteps_ratio)
        return tc_fail(err, TC_EINVAL, "--target-acc applies to measured accuracy (--accuracy or training), not to "
                                       "--steps-ratio");
    if (s->target_acc < 0 || s->target_acc > 1 || isnan(s->target_acc))
        return tc_fail(err, TC_EINVAL, "invalid --target-acc %g: the accuracy must be in (0, 1] (or (0%%, 100%%])",
                       s->target_acc);
    if (s->mfu < 0 || s->mfu > 1 || isnan(s->mfu))
        return tc_fail(err, TC_EINVAL, "invalid --mfu %g: expected a fraction in (0, 1], e.g. 0.4", s->mfu);
    if (s->bucket_bytes != 0 && !(s->bucket_bytes >= 1 && s->bucket_bytes <= TC_MAX_BYTES))
        return tc_fail(err, TC_EINVAL, "invalid --bucket %g: expected a size of at least 1 byte, e.g. 25MiB",
                       s->bucket_bytes);
    return TC_OK;
}

static tc_status make_workload(job *J, const tc_net *net, tc_flow_opts *fo, tc_err *err)
{
    const tc_scenario *s = J->s;
    tc_compress_out *o = J->o;
    tc_workload *w = &J->w;
    tc_status st;
    if ((st = tc_model_parse(s->model, &w->model, err)))
        return st;
    /* The profile the resolved scenario embeds, else the search path. */
    if ((st = tc_scenario_accel(s, &o->accel_used, o->accel_name, sizeof o->accel_name, err)))
        return st;
    w->accel = &o->accel_used;
    w->mfu = s->mfu;
    w->bucket_bytes = s->bucket_bytes;
    w->offload = s->offload;
    snprintf(w->dp_algo, sizeof w->dp_algo, "%s", s->it_algo[0]);
    snprintf(o->dp_algo, sizeof o->dp_algo, "%s", s->it_algo[0]);
    tc_tl_opts_default(&w->contention);
    w->contention.s_c = s->s_c;
    w->contention.s_m = s->s_m;
    uint32_t p = 0;
    if ((st = tc_place_map(net->topo[0], &s->job, &J->map, &p, err)))
        return st;
    if (p < 2)
        return tc_fail(err, TC_EINVAL, "--workers %u: data parallelism needs at least 2 workers", p);
    w->workers = p;
    tc_scenario_eval_opts(s, net, 0, &w->eval, fo);
    fo->trace_path = NULL; /* many collectives, no one trace: compress records none */
    w->eval.rank_map = J->map;
    o->model = w->model;
    o->accel = w->accel;
    o->mfu = w->mfu > 0 ? w->mfu : w->model.mfu;
    o->workers = p;
    o->bucket_bytes = w->bucket_bytes > 0 ? w->bucket_bytes : TC_DDP_BUCKET_BYTES;
    tc_iter_bucket *bk = NULL;
    if ((st = tc_buckets_ddp(&w->model, o->bucket_bytes, TC_DDP_FIRST_BUCKET_BYTES, &bk, &o->nbuckets,
                             &o->bucket_by_tensor, err)))
        return st;
    o->bucket_first_bytes = bk[0].bytes;
    o->bucket_last_bytes = bk[o->nbuckets - 1].bytes;
    for (size_t i = 0; i < o->nbuckets; i++)
        o->bucket_max_bytes = fmax(o->bucket_max_bytes, bk[i].bytes);
    o->bucket_layers = o->bucket_by_tensor
                           ? 0
                           : (uint32_t)llround(bk[0].bytes / (4.0 * w->model.params / w->model.layers));
    free(bk);
    o->offload = w->offload;
    o->s_c = s->s_c;
    o->s_m = s->s_m;
    o->mode = w->eval.mode;
    snprintf(o->topology, sizeof o->topology, "%s", net->topo[0]->spec);
    snprintf(o->routing, sizeof o->routing, "%s", tc_routing_name(w->eval.routing, net->topo[0]));
    tc_topo_info info;
    tc_topo_get_info(net->topo[0], &info);
    o->injection_Bps = info.injection_Bps;
    o->baseline_steps = tc_model_baseline_steps(&w->model, p);
    tc_workload_compute(w, &o->fwd_s, &o->bwd_s);
    return TC_OK;
}

/* ---- evaluation ---- */

/* One iteration per codec on t; iter[k] its time. */
static tc_status evaluate_all(const tc_compress_out *o, const tc_topo *t, const tc_workload *w, tc_codec_iter *its,
                              double *iter, tc_err *err)
{
    for (size_t k = 0; k < o->n; k++) {
        tc_status st = tc_workload_iteration(t, w, &o->rows[k].codec, o->rows[k].thr_given, &its[k], err);
        if (st)
            return st;
        iter[k] = its[k].t.iter_s;
    }
    return TC_OK;
}

/* A ratio r of a codec with plain steps (PowerSGD's start=) as the ratio
 * that gives its phased time at its compressed iteration time:
 * tc_tta_phased_s(B r, ...) / (t B). */
static double phased_ratio(double r, const tc_codec_iter *it, double iter_s, double B)
{
    if (!(r >= 0) || it->plain_steps == 0 || !(iter_s > 0) || !(B > 0))
        return r;
    return tc_tta_phased_s(B * r, iter_s, it->plain_steps, it->plain_iter_s) / (iter_s * B);
}

/* Time to accuracy with its interval, and the verdict on it. */
static void time_to_accuracy(const tc_compress_out *o, const tc_codec_iter *its, const double *iter, tc_tta *tta,
                             tc_verdict *v)
{
    double ratio[TC_COMPRESS_MAX_CODECS], lo[TC_COMPRESS_MAX_CODECS], hi[TC_COMPRESS_MAX_CODECS];
    double B = o->baseline_steps;
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        ratio[k] = phased_ratio(x->steps_ratio, &its[k], iter[k], B);
        lo[k] = x->ratio_lo == x->steps_ratio ? ratio[k] : phased_ratio(x->ratio_lo, &its[k], iter[k], B);
        hi[k] = x->ratio_hi == x->steps_ratio ? ratio[k] : phased_ratio(x->ratio_hi, &its[k], iter[k], B);
    }
    tc_tta_compute_ci(iter, ratio, lo, hi, o->n, o->baseline_steps, o->i_bf16, o->i_fp32, tta);
    for (size_t k = 0; k < o->n; k++) /* the steps themselves are the codec's */
        if (its[k].plain_steps && o->rows[k].steps_ratio >= 0) {
            tta[k].steps_ratio = o->rows[k].steps_ratio;
            tta[k].ratio_lo = o->rows[k].ratio_lo;
            tta[k].ratio_hi = o->rows[k].ratio_hi;
            tta[k].steps = B * o->rows[k].steps_ratio;
        }
    for (size_t k = 0; k < o->n; k++)
        v[k] = (long)k == o->i_bf16 ? TC_VERDICT_BASELINE
                                    : tc_verdict_of(tta[k].speedup_bf16_lo, tta[k].speedup_bf16_hi);
}

static void report(const job *J, const char *what, const char *unit, double done, double total)
{
    if (!J->ro || !J->ro->progress)
        return;
    tc_progress p = {.what = what, .fraction = total > 0 ? done / total : -1, .done = done, .total = total,
                     .unit = unit};
    J->ro->progress(J->ro->progress_ud, &p);
}

/* Sweep point i: the scenario copied with every endpoint's injection set
 * to the rate, built and evaluated like the main network. */
static tc_status sweep_point(const job *J, size_t i, tc_err *err)
{
    tc_compress_out *o = J->o;
    tc_scenario *c = tc_scenario_clone(J->s);
    if (!c)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    c->equalize_Bps = o->rates[i];
    tc_net net;
    tc_status st = tc_net_build(c, &net, err);
    if (st == TC_OK) {
        tc_workload w = J->w;
        tc_flow_opts fo;
        tc_scenario_eval_opts(c, &net, 0, &w.eval, &fo);
        fo.trace_path = NULL;
        w.eval.rank_map = J->map;  /* equalizing keeps the endpoints: the same map */
        tc_codec_iter its[TC_COMPRESS_MAX_CODECS];
        double iter[TC_COMPRESS_MAX_CODECS];
        tc_tta tta[TC_COMPRESS_MAX_CODECS];
        tc_verdict v[TC_COMPRESS_MAX_CODECS];
        if ((st = evaluate_all(o, net.topo[0], &w, its, iter, err)) == TC_OK) {
            time_to_accuracy(o, its, iter, tta, v);
            for (size_t k = 0; k < o->n; k++) {
                o->sweep_iter_s[i][k] = iter[k];
                o->sweep_tta_s[i][k] = tta[k].tta_s;
                o->sweep_speedup[i][k] = tta[k].speedup_bf16;
                o->sweep_speedup_lo[i][k] = tta[k].speedup_bf16_lo;
                o->sweep_speedup_hi[i][k] = tta[k].speedup_bf16_hi;
                o->sweep_verdict[i][k] = v[k];
            }
        }
        tc_net_free(&net);
    }
    tc_scenario_free(c);
    return st;
}

/* The regime map and, per codec, the bandwidth below which it is faster
 * than bf16: the lower end of its speedup interval above 1, the rule of
 * the verdicts and of the summary under the map. */
static tc_status sweep(const job *J, tc_err *err)
{
    tc_compress_out *o = J->o;
    o->nrates = tc_sweep_default_rates(o->rates);
    for (size_t i = 0; i < o->nrates; i++) {
        tc_status st = sweep_point(J, i, err);
        if (st)
            return st;
        report(J, "bandwidth sweep", "rates", (double)(i + 1), (double)o->nrates);
    }
    for (size_t k = 0; k < o->n; k++) {
        double sp[TC_COMPRESS_MAX_RATES];
        for (size_t i = 0; i < o->nrates; i++)
            sp[i] = o->sweep_speedup_lo[i][k];
        o->crossover_Bps[k] = tc_crossover_bw(o->rates, sp, o->nrates, 1.0);
    }
    return TC_OK;
}

/* Every check that depends on the scenario alone, and what they derive:
 * the codecs and their throughputs, the network (built into net, freed on
 * an error), the workload, the steps ratios given or read from embedded
 * curves (those trained now are not: training is the run's). The run makes
 * them first, and tc_scenario_check_run makes them before any run
 * (tc_scn_compress_check), so that --print-scenario and a sweep's
 * validation refuse what the run would. */
static tc_status prepare(job *J, tc_net *net, tc_flow_opts *fo, tc_err *err)
{
    tc_compress_out *o = J->o;
    const tc_scenario *s = J->s;
    tc_status st;
    if ((st = check_inputs(s, err)) || (st = make_codecs(o, s, err)) || (st = apply_throughputs(o, s, err)))
        return st;
    o->target = s->target_acc;
    o->target_given = s->target_acc > 0;
    if ((st = tc_net_build(s, net, err)))
        return st;
    st = make_workload(J, net, fo, err);
    if (st == TC_OK && (s->nsteps_ratio || s->naccuracy))
        st = steps_ratios(J, err);
    if (st)
        tc_net_free(net);
    return st;
}

tc_status tc_scn_compress_check(const tc_scenario *s, tc_err *err)
{
    job J;
    memset(&J, 0, sizeof J);
    J.s = s;
    J.o = tc_calloc(1, sizeof *J.o);
    if (!J.o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_net net;
    tc_flow_opts fo;
    tc_status st = prepare(&J, &net, &fo, err);
    if (st == TC_OK)
        tc_net_free(&net);
    free(J.map);
    tc_compress_out_free(J.o);
    return st;
}

static tc_status run_main(job *J, tc_err *err)
{
    tc_compress_out *o = J->o;
    tc_net net;
    tc_flow_opts fo;
    tc_status st = prepare(J, &net, &fo, err);
    if (st)
        return st;
    if (!J->s->nsteps_ratio && !J->s->naccuracy)
        st = ratios_trained(J, err);
    tc_codec_iter its[TC_COMPRESS_MAX_CODECS];
    double iter[TC_COMPRESS_MAX_CODECS];
    if (st == TC_OK && (st = evaluate_all(o, net.topo[0], &J->w, its, iter, err)) == TC_OK) {
        tc_tta tta[TC_COMPRESS_MAX_CODECS];
        tc_verdict v[TC_COMPRESS_MAX_CODECS];
        time_to_accuracy(o, its, iter, tta, v);
        for (size_t k = 0; k < o->n; k++) {
            o->rows[k].it = its[k];
            o->rows[k].tta = tta[k];
            o->rows[k].verdict = v[k];
        }
    }
    tc_net_free(&net);
    return st;
}

tc_status tc_run_compress(const tc_scenario *s, const tc_run_opts *ro, tc_compress_out **out, tc_err *err)
{
    *out = NULL;
    job J;
    memset(&J, 0, sizeof J);
    J.s = s;
    J.ro = ro;
    J.o = tc_calloc(1, sizeof *J.o);
    if (!J.o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = run_main(&J, err);
    if (st == TC_OK && s->sweep_bw)
        st = sweep(&J, err);
    free(J.map);
    if (st) {
        tc_compress_out_free(J.o);
        return st;
    }
    *out = J.o;
    return TC_OK;
}

void tc_compress_out_free(tc_compress_out *out)
{
    free(out);
}
