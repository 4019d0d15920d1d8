/*
 * rep_train.c - the renderings of the compression commands' outcomes
 * (codec-bench, train-accuracy, compress): the JSON document
 * (docs/SCHEMA.md), the typed tables (text and SI-unit CSV) and the text
 * for people.
 *
 * JSON and CSV carry numbers in SI base units only; "3.83min", "1.99x" and
 * "25GB/s" belong to the text rendering alone.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/render.h"

/* The scenario that produced a result, so it can be reproduced from its
 * own record. */
/* A number JSON can hold, else null (NaN, infinities: not defined). */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static size_t add_table(tc_rtable *tabs, size_t n, size_t max, tc_rtable *t)
{
    if (n < max) {
        tabs[n] = *t;
        return n + 1;
    }
    tc_rtable_free(t);
    return n;
}

/* ==== codec-bench ======================================================== */

static json_t *spread_json(const tc_codec_spread *x)
{
    return json_pack("{s:o, s:o, s:o}", "min", num(x->min), "median", num(x->median), "max", num(x->max));
}

static json_t *bench_row_json(const tc_codec_bench_row *r)
{
    const tc_codec_measurement *m = &r->m;
    const tc_codec_work *w = &m->work;
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:o, s:o}}", "codec", r->codec.name, "source", "measured",
                          "enc_dec_Bps", num(r->enc_dec_Bps), "copy_Bps", num(r->copy_Bps), "ratio",
                          num(r->enc_dec_Bps / r->copy_Bps), "roofline_Bps", "h100", num(r->h100_Bps), "tpu-v5p",
                          num(r->tpu_Bps));
    if (!o)
        return NULL;
    json_object_set_new(o, "reps", json_integer((json_int_t)m->reps));
    json_object_set_new(o, "enc_dec_spread_Bps", spread_json(&m->enc_dec_Bps));
    json_object_set_new(o, "copy_spread_Bps", spread_json(&m->copy_Bps));
    json_object_set_new(o, "lane_ops_spread_per_s", spread_json(&m->lane_ops));
    json_object_set_new(o, "random_loads_spread_per_s", spread_json(&m->random_ps));
    json_object_set_new(o, "int_ops_spread_per_s", spread_json(&m->int_ops));
    json_object_set_new(o, "inplace_spread_Bps", spread_json(&m->inplace_Bps));
    if (m->gemm_ops.median > 0)
        json_object_set_new(o, "gemm_ops_spread_per_s", spread_json(&m->gemm_ops));
    json_object_set_new(o, "lanes", num(m->rates.lanes));
    json_object_set_new(o, "predicted_Bps", num(m->predicted_Bps));
    json_object_set_new(o, "measured_over_predicted", num(r->enc_dec_Bps / m->predicted_Bps));
    json_object_set_new(o, "work",
                        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "read_bytes", num(w->read),
                                  "written_bytes", num(w->written), "alloc_bytes", num(w->alloc), "inplace_bytes",
                                  num(w->inplace), "vops", num(w->vops), "iops", num(w->iops), "narrow_ops",
                                  num(w->narrow), "gemm_ops", num(w->gemm), "sops", num(w->sops), "random_accesses",
                                  num(w->random), "passes", (int)w->passes));
    json_object_set_new(o, "roofline_source", json_string(tc_codec_cost_source(&r->codec)));
    return o;
}

json_t *tc_codec_bench_json(const tc_codec_bench_out *out, const tc_scenario *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < out->n; i++)
        json_array_append_new(arr, bench_row_json(&out->rows[i]));
    json_t *o = json_pack("{s:i, s:s, s:b, s:I, s:I, s:f, s:i, s:o}", "schema_version", TC_SCHEMA_VERSION,
                          "command", "codec-bench", "measured", 1, "size_bytes", (json_int_t)out->bytes,
                          "coordinates", (json_int_t)out->coordinates, "seconds", out->seconds, "workers",
                          (int)out->workers, "codecs", arr);
    if (o)
        tc_report_add_scenario(o, s);
    return o;
}

static void bench_table(const tc_codec_bench_out *out, tc_rtable *t)
{
    tc_rtable_init(t, "codecs");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int ed = tc_rtable_col(t, "enc_dec_Bps", "enc+dec GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int lo = tc_rtable_col(t, "enc_dec_min_Bps", "min", TC_COL_NUM, "%.2f", 1e-9);
    int hi = tc_rtable_col(t, "enc_dec_max_Bps", "max", TC_COL_NUM, "%.2f", 1e-9);
    int cp = tc_rtable_col(t, "copy_Bps", "copy GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int clo = tc_rtable_col(t, "copy_min_Bps", "min", TC_COL_NUM, "%.2f", 1e-9);
    int chi = tc_rtable_col(t, "copy_max_Bps", "max", TC_COL_NUM, "%.2f", 1e-9);
    int ra = tc_rtable_col(t, "ratio", "ratio", TC_COL_NUM, "%.1f%%", 100);
    int op = tc_rtable_col(t, "lane_ops_per_s", "fp G/s", TC_COL_NUM, "%.0f", 1e-9);
    int io = tc_rtable_col(t, "int_ops_per_s", "int G/s", TC_COL_NUM, "%.0f", 1e-9);
    int ip = tc_rtable_col(t, "inplace_Bps", "in-place GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int rl = tc_rtable_col(t, "random_loads_per_s", "rand M/s", TC_COL_NUM, "%.0f", 1e-6);
    int pr = tc_rtable_col(t, "predicted_Bps", "model GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int pm = tc_rtable_col(t, "measured_over_predicted", "meas/model", TC_COL_NUM, "%.2f", 1);
    int h = tc_rtable_col(t, "h100_roofline_Bps", "h100 GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int tp = tc_rtable_col(t, "tpu_v5p_roofline_Bps", "tpu-v5p GB/s", TC_COL_NUM, "%.2f", 1e-9);
    for (size_t i = 0; i < out->n; i++) {
        const tc_codec_bench_row *r = &out->rows[i];
        size_t k = tc_rtable_row(t);
        tc_rtable_text(t, k, c, r->codec.name);
        tc_rtable_num(t, k, ed, r->enc_dec_Bps);
        tc_rtable_num(t, k, lo, r->m.enc_dec_Bps.min);
        tc_rtable_num(t, k, hi, r->m.enc_dec_Bps.max);
        tc_rtable_num(t, k, cp, r->copy_Bps);
        tc_rtable_num(t, k, clo, r->m.copy_Bps.min);
        tc_rtable_num(t, k, chi, r->m.copy_Bps.max);
        tc_rtable_num(t, k, ra, r->enc_dec_Bps / r->copy_Bps);
        tc_rtable_num(t, k, op, r->m.lane_ops.median);
        tc_rtable_num(t, k, io, r->m.int_ops.median);
        tc_rtable_num(t, k, ip, r->m.inplace_Bps.median);
        tc_rtable_num(t, k, rl, r->m.random_ps.median);
        tc_rtable_num(t, k, pr, r->m.predicted_Bps);
        tc_rtable_num(t, k, pm, r->enc_dec_Bps / r->m.predicted_Bps);
        tc_rtable_num(t, k, h, r->h100_Bps);
        tc_rtable_num(t, k, tp, r->tpu_Bps);
    }
}

size_t tc_codec_bench_tables(const tc_codec_bench_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    tc_rtable t;
    bench_table(out, &t);
    return add_table(tabs, 0, max, &t);
}

void tc_codec_bench_print(const tc_codec_bench_out *out, const tc_scenario *s, FILE *f)
{
    (void)s;
    char sz[32];
    size_t reps = 0;
    for (size_t i = 0; i < out->n; i++)
        reps = i == 0 || out->rows[i].m.reps < reps ? out->rows[i].m.reps : reps;
    fprintf(f, "bucket %s (%.0f float32), one core, %.0f-lane vectors; median, min and max of %zu or more "
               "repetitions; roofline for %u workers\n",
            tc_fmt_size(out->bytes, sz, sizeof sz), (double)out->coordinates, out->n ? out->rows[0].m.rates.lanes : 0,
            reps, out->workers);
    fprintf(f, "model: (streamed bytes) / (3 x copy) + (in-place bytes) / (2 x in-place) + (random accesses) / (rand "
               "rate) + (floating-point, integer, product lane operations) / (their kernels' rates), counted from the "
               "kernels (docs/MODEL.md, \"Compute\")\n");
    tc_rtable t;
    bench_table(out, &t);
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
    /* where each accelerator figure comes from, the codecs grouped by source */
    for (size_t i = 0; i < out->n; i++) {
        const char *src = tc_codec_cost_source(&out->rows[i].codec);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(src, tc_codec_cost_source(&out->rows[j].codec)) == 0;
        if (seen)
            continue;
        fprintf(f, "%s", i ? "" : "\naccelerators:\n");
        for (size_t j = i, first = 1; j < out->n; j++)
            if (strcmp(src, tc_codec_cost_source(&out->rows[j].codec)) == 0) {
                fprintf(f, "%s%s", first ? "  " : ", ", out->rows[j].codec.name);
                first = 0;
            }
        fprintf(f, ": %s\n", src);
    }
}

/* ==== train-accuracy ===================================================== */

/* The accuracy file's fields under topocc's document header: compress
 * --accuracy reads this document as it reads the file. */
json_t *tc_train_accuracy_json(const tc_train_accuracy_out *out, const tc_scenario *s)
{
    json_t *acc = tc_acc_to_json(&out->opts, out->curves, out->n);
    if (!acc)
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "command", json_string("train-accuracy"));
    const char *k;
    json_t *v;
    json_object_foreach(acc, k, v) {
        if (strcmp(k, "schema_version") != 0)
            json_object_set(o, k, v);
    }
    json_decref(acc);
    tc_report_add_scenario(o, s);
    return o;
}

/* Codec i's run on seed j (tc_train_seeds' order). */
static const tc_acc_curve *run_curve(const tc_train_accuracy_out *out, size_t i, size_t j)
{
    return &out->curves[i * out->opts.seeds + j];
}

static size_t ncodecs_of(const tc_train_accuracy_out *out)
{
    return out->opts.seeds ? out->n / out->opts.seeds : 0;
}

static void curves_table(const tc_train_accuracy_out *out, tc_rtable *t)
{
    tc_rtable_init(t, "curves");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int sd = tc_rtable_col(t, "seed", "seed", TC_COL_COUNT, NULL, 0);
    int st = tc_rtable_col(t, "step", "step", TC_COL_COUNT, NULL, 0);
    int ta = tc_rtable_col(t, "test_acc", "test accuracy", TC_COL_NUM, "%.4f", 0);
    int tl = tc_rtable_col(t, "train_loss", "train loss", TC_COL_NUM, "%.4f", 0);
    for (size_t i = 0; i < out->n; i++)
        for (size_t k = 0; k < out->curves[i].n; k++) {
            const tc_acc_point *p = &out->curves[i].pts[k];
            size_t r = tc_rtable_row(t);
            tc_rtable_text(t, r, c, out->curves[i].codec.name);
            tc_rtable_num(t, r, sd, (double)out->curves[i].seed);
            tc_rtable_num(t, r, st, p->step);
            tc_rtable_num(t, r, ta, p->test_acc);
            tc_rtable_num(t, r, tl, p->train_loss); /* NAN once diverged: empty */
        }
}

/* One row per run: where it ends and when it reaches the target. */
static void final_table(const tc_train_accuracy_out *out, tc_rtable *t)
{
    tc_rtable_init(t, "final");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int sd = tc_rtable_col(t, "seed", "seed", TC_COL_COUNT, NULL, 0);
    int fa = tc_rtable_col(t, "final_test_acc", "final test accuracy", TC_COL_NUM, "%.4f", 0);
    int ba = tc_rtable_col(t, "best_test_acc", "best", TC_COL_NUM, "%.4f", 0);
    int fl = tc_rtable_col(t, "final_train_loss", "final train loss", TC_COL_NUM, "%.4f", 0);
    int sp = tc_rtable_col(t, "steps_to_target", "steps to target", TC_COL_NUM, "%.1f", 0);
    for (size_t i = 0; i < out->n; i++) {
        const tc_acc_curve *cv = &out->curves[i];
        double s = tc_acc_steps_to(cv, out->stats.target);
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c, cv->codec.name);
        tc_rtable_num(t, r, sd, (double)cv->seed);
        tc_rtable_num(t, r, fa, cv->pts[cv->n - 1].test_acc);
        tc_rtable_num(t, r, ba, tc_acc_best(cv));
        tc_rtable_num(t, r, fl, cv->pts[cv->n - 1].train_loss);
        tc_rtable_num(t, r, sp, s >= 0 ? s : NAN); /* empty: does not reach the target */
    }
}

/* What a steps ratio's interval [lo, hi] says against bf16 (fewer steps:
 * < 1). */
static const char *verdict_of(const tc_acc_stats *st, size_t k, double lo, double hi)
{
    const tc_acc_codec_stats *x = &st->codecs[k];
    if (k == st->ref)
        return "reference";
    if (x->reached == 0)
        return "never reaches the target";
    if (x->reached < x->runs)
        return "does not reach it on every seed";
    if (hi < 1)
        return "fewer steps than bf16";
    if (lo > 1)
        return "more steps than bf16";
    return "indistinguishable from bf16";
}

static const char *steps_verdict(const tc_acc_stats *st, size_t k)
{
    return verdict_of(st, k, st->codecs[k].ratio_lo, st->codecs[k].ratio_hi);
}

/* The same by the joint interval (all codecs' intervals together). */
static const char *joint_verdict(const tc_acc_stats *st, size_t k)
{
    return verdict_of(st, k, st->codecs[k].joint_lo, st->codecs[k].joint_hi);
}

static void stats_table(const tc_train_accuracy_out *out, tc_rtable *t)
{
    const tc_acc_stats *st = &out->stats;
    tc_rtable_init(t, "statistics");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int ru = tc_rtable_col(t, "runs", "runs", TC_COL_COUNT, NULL, 0);
    int re = tc_rtable_col(t, "reached", "reached", TC_COL_COUNT, NULL, 0);
    int fm = tc_rtable_col(t, "final_acc_mean", "final acc", TC_COL_NUM, "%.4f", 0);
    int fs = tc_rtable_col(t, "final_acc_sd", "sd", TC_COL_NUM, "%.4f", 0);
    int fd = tc_rtable_col(t, "final_acc_diff", "vs bf16", TC_COL_NUM, "%+.4f", 0);
    int fl = tc_rtable_col(t, "final_acc_diff_lo", "lo", TC_COL_NUM, "%+.4f", 0);
    int fh = tc_rtable_col(t, "final_acc_diff_hi", "hi", TC_COL_NUM, "%+.4f", 0);
    int sm = tc_rtable_col(t, "steps_mean", "steps", TC_COL_NUM, "%.1f", 0);
    int sr = tc_rtable_col(t, "steps_ratio", "steps ratio", TC_COL_NUM, "%.3f", 0);
    int sl = tc_rtable_col(t, "steps_ratio_lo", "lo", TC_COL_NUM, "%.3f", 0);
    int sh = tc_rtable_col(t, "steps_ratio_hi", "hi", TC_COL_NUM, "%.3f", 0);
    int vd = tc_rtable_col(t, "verdict", "verdict", TC_COL_TEXT, NULL, 0);
    int jl = tc_rtable_col(t, "steps_ratio_joint_lo", "joint lo", TC_COL_NUM, "%.3f", 0);
    int jh = tc_rtable_col(t, "steps_ratio_joint_hi", "joint hi", TC_COL_NUM, "%.3f", 0);
    int jv = tc_rtable_col(t, "joint_verdict", "joint verdict", TC_COL_TEXT, NULL, 0);
    for (size_t k = 0; k < st->n; k++) {
        const tc_acc_codec_stats *x = &st->codecs[k];
        size_t r = tc_rtable_row(t);
        tc_rtable_num(t, r, jl, x->joint_lo);
        tc_rtable_num(t, r, jh, x->joint_hi);
        tc_rtable_text(t, r, jv, joint_verdict(st, k));
        tc_rtable_text(t, r, c, x->codec.name);
        tc_rtable_num(t, r, ru, x->runs);
        tc_rtable_num(t, r, re, x->reached);
        tc_rtable_num(t, r, fm, x->final_mean);
        tc_rtable_num(t, r, fs, x->final_sd);
        tc_rtable_num(t, r, fd, x->dfinal);
        tc_rtable_num(t, r, fl, x->dfinal_lo);
        tc_rtable_num(t, r, fh, x->dfinal_hi);
        tc_rtable_num(t, r, sm, x->steps_mean);
        tc_rtable_num(t, r, sr, x->ratio);
        tc_rtable_num(t, r, sl, x->ratio_lo);
        tc_rtable_num(t, r, sh, x->ratio_hi);
        tc_rtable_text(t, r, vd, steps_verdict(st, k));
    }
}

size_t tc_train_accuracy_tables(const tc_train_accuracy_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    tc_rtable t;
    stats_table(out, &t);
    size_t n = add_table(tabs, 0, max, &t);
    curves_table(out, &t);
    n = add_table(tabs, n, max, &t);
    final_table(out, &t);
    return add_table(tabs, n, max, &t);
}

/* Test accuracy by step, the mean over the seeds, one column per codec. */
static void print_wide(const tc_train_accuracy_out *out, FILE *f)
{
    const size_t nc = ncodecs_of(out), R = out->opts.seeds;
    tc_rtable t;
    tc_rtable_init(&t, "curves_wide");
    tc_rtable_col(&t, "step", "step", TC_COL_COUNT, NULL, 0);
    for (size_t i = 0; i < nc; i++)
        tc_rtable_col(&t, run_curve(out, i, 0)->codec.name, run_curve(out, i, 0)->codec.name, TC_COL_NUM, "%.4f", 0);
    const tc_acc_curve *c0 = run_curve(out, 0, 0);
    for (size_t k = 0; nc && k < c0->n; k++) {
        size_t r = tc_rtable_row(&t);
        tc_rtable_num(&t, r, 0, c0->pts[k].step);
        for (size_t i = 0; i < nc; i++) {
            double m = 0;
            bool ok = true;
            for (size_t j = 0; j < R; j++) {
                const tc_acc_curve *c = run_curve(out, i, j);
                ok &= k < c->n && c->pts[k].step == c0->pts[k].step;
                m += ok ? c->pts[k].test_acc / (double)R : 0;
            }
            if (ok)
                tc_rtable_num(&t, r, (int)i + 1, m);
        }
    }
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
}

/* "[lo, hi]" of a ratio's interval; "(one seed: no interval)" without one. */
static void fmt_interval(double lo, double hi, const char *fmt, char *buf, size_t len)
{
    /* fmt formats one number in a few characters ("%.3f", "%+.4f") */
    if (!isfinite(lo) || !isfinite(hi)) {
        snprintf(buf, len, "(no interval: one seed)");
        return;
    }
    char a[32], b[32];
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    snprintf(buf, len, "[%s, %s]", a, b);
}

/* With several codecs against bf16, each 95% interval excludes 1 by
 * chance 5% of the time, so the chance that some verdict is wrong grows
 * with their number: the intervals at the joint level (Bonferroni) hold
 * all together at 95%. One line per codec whose verdict they change, or a
 * line saying none does. */
static void print_joint(const tc_acc_stats *st, FILE *f)
{
    if (st->compared < 2 || st->runs < 2)
        return;
    fprintf(f, "joint: %u codecs against bf16, each interval at %.2f%% (Bonferroni) so that all hold together at "
               "%.0f%%\n",
            st->compared, 100 * st->joint_level, 100 * st->level);
    int changed = 0;
    for (size_t k = 0; k < st->n; k++) {
        const tc_acc_codec_stats *x = &st->codecs[k];
        const char *a = steps_verdict(st, k), *b = joint_verdict(st, k);
        if (strcmp(a, b) == 0)
            continue;
        char iv[80];
        fmt_interval(x->joint_lo, x->joint_hi, "%.3f", iv, sizeof iv);
        fprintf(f, "  %s: %s alone, %s taken together %s\n", x->codec.name, a, b, iv);
        changed++;
    }
    if (!changed)
        fprintf(f, "  every verdict above holds taken together\n");
}

/* Per codec: final accuracy (mean +- sd over the seeds, and the paired
 * difference to bf16 with its interval), then the steps ratio with its
 * interval and what it says. */
static void print_stats(const tc_train_accuracy_out *out, FILE *f)
{
    const tc_acc_stats *st = &out->stats;
    tc_table tb;
    if (tc_table_init(&tb, 7))
        return;
    tb.right[2] = tb.right[3] = true;
    const char *hdr[7] = {"codec", "final test accuracy", "vs bf16 [95%]", "reached", "mean steps",
                          "steps ratio [95%]", "verdict"};
    tc_table_row(&tb, hdr);
    for (size_t k = 0; k < st->n; k++) {
        const tc_acc_codec_stats *x = &st->codecs[k];
        char fa[48], df[128], rc[24], sm[24], sr[128], iv[80];
        if (isfinite(x->final_sd))
            snprintf(fa, sizeof fa, "%.4f +- %.4f", x->final_mean, x->final_sd);
        else
            snprintf(fa, sizeof fa, "%.4f", x->final_mean);
        if (k == st->ref) {
            snprintf(df, sizeof df, "-");
        } else {
            fmt_interval(x->dfinal_lo, x->dfinal_hi, "%+.4f", iv, sizeof iv);
            if (!isfinite(x->dfinal_lo))
                snprintf(df, sizeof df, "%+.4f", x->dfinal);
            else
                snprintf(df, sizeof df, "%+.4f %s", x->dfinal, iv);
        }
        snprintf(rc, sizeof rc, "%u/%u", x->reached, x->runs);
        if (isfinite(x->steps_mean))
            snprintf(sm, sizeof sm, "%.0f", x->steps_mean);
        else
            snprintf(sm, sizeof sm, "-");
        if (x->reached < x->runs)
            snprintf(sr, sizeof sr, "-");
        else if (k == st->ref)
            snprintf(sr, sizeof sr, "1");
        else {
            fmt_interval(x->ratio_lo, x->ratio_hi, "%.3f", iv, sizeof iv);
            snprintf(sr, sizeof sr, "%.3f %s", x->ratio, iv);
        }
        const char *cells[7] = {x->codec.name, fa, df, rc, sm, sr, steps_verdict(st, k)};
        tc_table_row(&tb, cells);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
    print_joint(st, f);
}

/* How the steps ratios move with the target: at 95%, 97% and 99% of
 * bf16's seed-mean final accuracy (a target bf16 misses on some seed, or
 * reaches at step 0, shows "-"). A verdict that changes along the row
 * depends on the target. */
static void print_sensitivity(const tc_train_accuracy_out *out, FILE *f)
{
    static const double frac[3] = {0.95, 0.97, 0.99};
    tc_acc_stats st[3];
    bool ok[3];
    for (int t = 0; t < 3; t++) {
        tc_err e;
        ok[t] = tc_acc_stats_compute(out->curves, out->n, frac[t] * out->stats.ref_final, &st[t], &e) == TC_OK;
    }
    fprintf(f, "\nsteps ratio [95%%] at other targets (fractions of bf16's seed-mean final accuracy)\n");
    tc_table tb;
    if (tc_table_init(&tb, 4) == TC_OK) {
        char h[3][64];
        const char *hdr[4] = {"codec", h[0], h[1], h[2]};
        for (int t = 0; t < 3; t++)
            snprintf(h[t], sizeof h[t], "%g%% (%.4f)", 100 * frac[t], frac[t] * out->stats.ref_final);
        tc_table_row(&tb, hdr);
        for (size_t k = 0; k < out->stats.n; k++) {
            char v[3][96];
            const char *row[4] = {out->stats.codecs[k].codec.name, v[0], v[1], v[2]};
            for (int t = 0; t < 3; t++) {
                const tc_acc_codec_stats *x = ok[t] ? &st[t].codecs[k] : NULL;
                char iv[80];
                if (!x)
                    snprintf(v[t], sizeof v[t], "-");
                else if (x->reached < x->runs)
                    snprintf(v[t], sizeof v[t], "reached %u/%u", x->reached, x->runs);
                else if (k == out->stats.ref)
                    snprintf(v[t], sizeof v[t], "1");
                else {
                    fmt_interval(x->ratio_lo, x->ratio_hi, "%.3f", iv, sizeof iv);
                    snprintf(v[t], sizeof v[t], "%.3f %s", x->ratio, iv);
                }
            }
            tc_table_row(&tb, row);
        }
        tc_table_print(&tb, f);
        tc_table_free(&tb);
    }
    for (int t = 0; t < 3; t++)
        if (ok[t])
            tc_acc_stats_free(&st[t]);
}

static void print_seeds(const tc_train_opts *o, FILE *f)
{
    if (o->seeds == 1)
        fprintf(f, "seed %llu", (unsigned long long)o->seed);
    else
        fprintf(f, "seeds %llu-%llu", (unsigned long long)o->seed, (unsigned long long)(o->seed + o->seeds - 1));
}

void tc_train_accuracy_print(const tc_train_accuracy_out *out, const tc_scenario *s, FILE *f)
{
    (void)s;
    const tc_train_opts *o = &out->opts;
    const tc_acc_stats *st = &out->stats;
    char what[256], tr[24] = "all", te[24] = "all";
    tc_train_proxy_describe(o, what, sizeof what);
    if (o->train_subset)
        snprintf(tr, sizeof tr, "first %u", o->train_subset);
    if (o->test_subset)
        snprintf(te, sizeof te, "first %u", o->test_subset);
    fprintf(f, "%s (%s training, %s test samples), %u workers x batch %u, %u steps, ", what, tr, te, o->workers,
            o->batch, o->steps);
    print_seeds(o, f);
    fprintf(f, " (every codec on each), buckets of %llu bytes%s\n\n", (unsigned long long)o->bucket_bytes,
            out->bf16_added ? "; bf16 added as the reference" : "");
    fprintf(f, "test accuracy, mean over %u seed%s\n", o->seeds, o->seeds == 1 ? "" : "s");
    print_wide(out, f);
    fputc('\n', f);
    if (st->target_given)
        fprintf(f, "target %.4f (given); bf16's seed-mean final accuracy %.4f\n", st->target, st->ref_final);
    else
        fprintf(f, "target %.4f: %g%% of bf16's seed-mean final accuracy %.4f\n", st->target,
                100 * TC_TARGET_FRACTION, st->ref_final);
    if (st->runs >= 2)
        fprintf(f, "steps ratio: steps to the target over bf16's on the same seed; its %g%% interval is the t "
                   "interval on the mean of the %u per-seed log ratios (%u degrees of freedom), as is that of the "
                   "final accuracy's difference to bf16\n",
                100 * st->level, st->runs, st->runs - 1);
    else
        fprintf(f, "steps ratio: steps to the target over bf16's; one seed gives no interval (--seeds 2 or more)\n");
    print_stats(out, f);
    print_sensitivity(out, f);
}

/* ==== compress =========================================================== */

/* Where a codec beats bf16 on the sweep, by the one rule the regime map,
 * its summary, the JSON and the CSV share: the verdict "faster" (its
 * speedup interval above 1, tc_verdict_of) at a swept bandwidth. */
typedef enum { REG_BASELINE, REG_ALWAYS, REG_BELOW, REG_NEVER, REG_SOME } regime;

static const char *regime_name(regime r)
{
    static const char *names[] = {"baseline", "always", "below", "never", "some"};
    return names[r];
}

static bool wins(const tc_compress_out *o, size_t i, size_t k)
{
    return o->sweep_verdict[i][k] == TC_VERDICT_FASTER;
}

static regime regime_of(const tc_compress_out *o, size_t k)
{
    if ((long)k == o->i_bf16)
        return REG_BASELINE;
    size_t nw = 0, prefix = 0;
    for (size_t i = 0; i < o->nrates; i++) {
        nw += wins(o, i, k);
        prefix += wins(o, i, k) && prefix == i;
    }
    if (nw == 0)
        return REG_NEVER;
    if (nw == o->nrates)
        return REG_ALWAYS;
    /* Wins only at the lowest bandwidths: below the crossover. Otherwise
     * (a win above a loss) the map says where, point by point. */
    return prefix == nw ? REG_BELOW : REG_SOME;
}

static json_t *model_json(const tc_model *m)
{
    json_t *jm = json_object();
    json_object_set_new(jm, "name", json_string(m->name));
    json_object_set_new(jm, "params", json_real(m->params));
    json_object_set_new(jm, "layers", json_integer(m->layers));
    json_object_set_new(jm, "batch_per_worker", m->batch ? json_integer(m->batch) : json_null());
    json_object_set_new(jm, "flops_per_sample", m->batch ? json_real(m->flops_sample) : json_null());
    json_object_set_new(jm, "flops_per_iteration", json_real(m->flops_iter));
    json_object_set_new(jm, "train_samples", m->train_samples > 0 ? json_real(m->train_samples) : json_null());
    json_object_set_new(jm, "source", json_string(m->source ? m->source : ""));
    return jm;
}

static json_t *training_json(const tc_train_opts *t)
{
    json_t *tr = json_object();
    json_object_set_new(tr, "model", json_string(t->model ? t->model : "mlp"));
    json_object_set_new(tr, "workers", json_integer(t->workers));
    json_object_set_new(tr, "hidden", json_integer(t->hidden));
    json_object_set_new(tr, "batch", json_integer(t->batch));
    json_object_set_new(tr, "steps", json_integer(t->steps));
    json_object_set_new(tr, "eval_every", json_integer(t->eval_every));
    json_object_set_new(tr, "lr", json_real(t->lr));
    json_object_set_new(tr, "seed", json_integer((json_int_t)t->seed));
    json_object_set_new(tr, "seeds", json_integer(t->seeds));
    json_object_set_new(tr, "train_subset", json_integer(t->train_subset));
    json_object_set_new(tr, "test_subset", json_integer(t->test_subset));
    return tr;
}

static json_t *accuracy_json(const tc_compress_out *o)
{
    json_t *acc = json_object();
    bool meas = strcmp(o->acc_source, "given") != 0;
    json_object_set_new(acc, "source", json_string(o->acc_source));
    /* The curves are embedded in the scenario (compress.accuracy); no path. */
    json_object_set_new(acc, "file", json_null());
    json_object_set_new(acc, "target", meas ? json_real(o->target) : json_null());
    json_object_set_new(acc, "target_rule", meas ? json_string(o->target_given ? "given" : "0.99 x bf16 seed-mean final")
                                                 : json_null());
    json_object_set_new(acc, "reference", json_string("bf16"));
    json_object_set_new(acc, "reference_final", meas ? json_real(o->reference_final) : json_null());
    json_object_set_new(acc, "seeds", meas ? json_integer(o->seeds) : json_null());
    json_object_set_new(acc, "same_seeds", meas ? json_boolean(o->same_seeds) : json_null());
    json_object_set_new(acc, "level", meas ? json_real(TC_ACC_LEVEL) : json_null());
    json_object_set_new(acc, "interval",
                        meas ? json_string("t interval on the mean of the per-seed paired log steps ratios")
                             : json_null());
    if (o->have_training) {
        json_object_set_new(acc, "training", training_json(&o->training));
        json_object_set_new(acc, "proxy", json_string(o->training_model));
        json_object_set_new(acc, "proxy_family", o->proxy_family[0] ? json_string(o->proxy_family) : json_null());
        json_object_set_new(acc, "model_family", o->model_family[0] ? json_string(o->model_family) : json_null());
        json_object_set_new(acc, "proxy_mismatch", json_boolean(o->proxy_mismatch));
    }
    return acc;
}

static const char *thr_source(const tc_compress_row *x)
{
    return x->codec.kind == TC_CODEC_FP32 ? "none (no codec work)" : x->thr_given > 0 ? "given" : "roofline";
}

static json_t *inputs_json(const tc_compress_out *o)
{
    json_t *in = json_object();
    json_object_set_new(in, "model", model_json(&o->model));
    json_object_set_new(in, "topology", json_string(o->topology));
    json_object_set_new(in, "injection_Bps", num(o->injection_Bps));
    json_object_set_new(in, "workers", json_integer(o->workers));
    json_object_set_new(in, "mode", json_string(tc_mode_name(o->mode)));
    json_object_set_new(in, "routing", json_string(o->routing));
    json_t *ja = json_object();
    json_object_set_new(ja, "name", json_string(o->accel->name));
    json_object_set_new(ja, "flops", json_real(o->accel->flops));
    json_object_set_new(ja, "mem_Bps", json_real(o->accel->mem_Bps));
    json_object_set_new(ja, "mfu", json_real(o->mfu));
    json_object_set_new(in, "accelerator", ja);
    json_object_set_new(in, "forward_s", json_real(o->fwd_s));
    json_object_set_new(in, "backward_s", json_real(o->bwd_s));
    json_object_set_new(in, "bucket_bytes", json_real(o->bucket_bytes));
    json_object_set_new(in, "buckets", json_integer((json_int_t)o->nbuckets));
    json_object_set_new(in, "bucket_unit", json_string(o->bucket_by_tensor ? "tensor" : "layer"));
    json_object_set_new(in, "bucket_layers", json_integer(o->bucket_layers));
    json_object_set_new(in, "bucket_max_bytes", json_real(o->bucket_max_bytes));
    json_object_set_new(in, "bucket_first_bytes", json_real(o->bucket_first_bytes));
    json_object_set_new(in, "bucket_last_bytes", json_real(o->bucket_last_bytes));
    json_object_set_new(in, "dp_algo", json_string(o->dp_algo));
    json_object_set_new(in, "offload", json_boolean(o->offload));
    json_object_set_new(in, "s_c", json_real(o->s_c));
    json_object_set_new(in, "s_m", json_real(o->s_m));
    json_object_set_new(in, "baseline_steps", json_real(o->baseline_steps));
    json_object_set_new(in, "accuracy", accuracy_json(o));
    json_t *thr = json_array();
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        json_t *e = json_object();
        json_object_set_new(e, "codec", json_string(x->codec.name));
        json_object_set_new(e, "Bps", x->it.codec_Bps > 0 ? num(x->it.codec_Bps) : json_null());
        json_object_set_new(e, "source", json_string(thr_source(x)));
        if (x->codec.kind != TC_CODEC_FP32 && !(x->thr_given > 0))
            json_object_set_new(e, "roofline", json_string(tc_codec_cost_source(&x->codec)));
        json_array_append_new(thr, e);
    }
    json_object_set_new(in, "codec_throughputs", thr);
    return in;
}

/* path ps: the servers and where they are (colocated with the workers:
 * server s with worker tc_codec_server_worker(s, S, workers), on its
 * endpoint); null on the other paths. */
static json_t *servers_json(const tc_compress_row *x)
{
    uint32_t S = x->it.servers;
    if (x->it.path != TC_PATH_PS || !S)
        return json_null();
    json_t *e = json_object(), *ep = json_array();
    for (uint32_t k = 0; k < S && k < TC_ITER_SERVERS_LISTED; k++)
        json_array_append_new(ep, json_integer(x->it.server_ep[k]));
    json_object_set_new(e, "count", json_integer(S));
    json_object_set_new(e, "placement", json_string("colocated"));
    json_object_set_new(e, "rule", json_string("server s with worker floor(s workers / count), on its endpoint"));
    json_object_set_new(e, "endpoints", ep);
    return e;
}

static json_t *result_json(const tc_compress_row *x)
{
    json_t *e = json_object();
    json_object_set_new(e, "codec", json_string(x->codec.name));
    json_object_set_new(e, "requested", json_boolean(x->requested));
    json_object_set_new(e, "path", json_string(tc_codec_path_name(x->it.path)));
    json_object_set_new(e, "servers", servers_json(x));
    json_object_set_new(e, "op", json_string(tc_op_name(x->it.op)));
    json_object_set_new(e, "collectives_per_bucket", json_integer(x->it.collectives));
    json_object_set_new(e, "algo", json_string(x->it.path == TC_PATH_PS ? "ps" : tc_algo_name(x->it.algo)));
    json_object_set_new(e, "bits_per_coord", json_real(x->it.bits_per_coord));
    json_object_set_new(e, "collective_bytes_per_iteration", json_real(x->it.coll_bytes));
    json_object_set_new(e, "wire_bytes_per_iteration", json_real(x->it.sent_bytes));
    json_object_set_new(e, "codec_s", json_real(x->it.t.codec_s));
    json_object_set_new(e, "network_s", json_real(x->it.t.comm_s));
    json_object_set_new(e, "backward_end_s", json_real(x->it.t.bwd_end_s));
    json_object_set_new(e, "iteration_s", json_real(x->it.t.iter_s));
    /* PowerSGD's first `start` steps: plain fp32 all-reduces, charged so */
    json_object_set_new(e, "plain_steps", json_integer(x->it.plain_steps));
    json_object_set_new(e, "plain_iter_s", json_real(x->it.plain_iter_s));
    json_object_set_new(e, "compute_s", json_real(x->it.t.compute_s));
    json_object_set_new(e, "exposed_s", json_real(x->it.t.exposed_s));
    json_object_set_new(e, "reaches_target", json_boolean(x->steps_ratio >= 0));
    json_object_set_new(e, "steps_ratio", x->steps_ratio >= 0 ? json_real(x->steps_ratio) : json_null());
    json_object_set_new(e, "steps_ratio_lo", num(x->tta.ratio_lo));
    json_object_set_new(e, "steps_ratio_hi", num(x->tta.ratio_hi));
    json_object_set_new(e, "steps_ratio_source", json_string(x->ratio_source));
    json_object_set_new(e, "runs", x->runs ? json_integer(x->runs) : json_null());
    json_object_set_new(e, "reached", x->runs ? json_integer(x->reached) : json_null());
    json_object_set_new(e, "final_test_acc", num(x->final_acc));
    json_object_set_new(e, "steps", num(x->tta.steps));
    json_object_set_new(e, "time_to_accuracy_s", num(x->tta.tta_s));
    json_object_set_new(e, "time_to_accuracy_lo_s", num(x->tta.tta_lo_s));
    json_object_set_new(e, "time_to_accuracy_hi_s", num(x->tta.tta_hi_s));
    json_object_set_new(e, "speedup_vs_bf16", num(x->tta.speedup_bf16));
    json_object_set_new(e, "speedup_vs_bf16_lo", num(x->tta.speedup_bf16_lo));
    json_object_set_new(e, "speedup_vs_bf16_hi", num(x->tta.speedup_bf16_hi));
    json_object_set_new(e, "speedup_vs_fp32", num(x->tta.speedup_fp32));
    json_object_set_new(e, "verdict", json_string(tc_verdict_name(x->verdict)));
    return e;
}

static json_t *sweep_json(const tc_compress_out *o)
{
    json_t *sw = json_object(), *pts = json_array(), *cr = json_array();
    for (size_t i = 0; i < o->nrates; i++) {
        json_t *p = json_object(), *cs = json_array();
        json_object_set_new(p, "injection_Bps", json_real(o->rates[i]));
        for (size_t k = 0; k < o->n; k++) {
            json_t *e = json_object();
            json_object_set_new(e, "codec", json_string(o->rows[k].codec.name));
            json_object_set_new(e, "iteration_s", json_real(o->sweep_iter_s[i][k]));
            json_object_set_new(e, "time_to_accuracy_s", num(o->sweep_tta_s[i][k]));
            json_object_set_new(e, "speedup_vs_bf16", num(o->sweep_speedup[i][k]));
            json_object_set_new(e, "speedup_vs_bf16_lo", num(o->sweep_speedup_lo[i][k]));
            json_object_set_new(e, "speedup_vs_bf16_hi", num(o->sweep_speedup_hi[i][k]));
            json_object_set_new(e, "verdict", json_string(tc_verdict_name(o->sweep_verdict[i][k])));
            json_object_set_new(e, "beats_bf16", json_boolean((long)k != o->i_bf16 && wins(o, i, k)));
            json_array_append_new(cs, e);
        }
        json_object_set_new(p, "codecs", cs);
        json_array_append_new(pts, p);
    }
    for (size_t k = 0; k < o->n; k++) {
        json_t *e = json_object();
        regime r = regime_of(o, k);
        json_object_set_new(e, "codec", json_string(o->rows[k].codec.name));
        json_object_set_new(e, "regime", json_string(regime_name(r)));
        json_object_set_new(e, "beats_bf16_below_Bps", r == REG_BELOW ? num(o->crossover_Bps[k]) : json_null());
        json_array_append_new(cr, e);
    }
    /* faster: speedup_vs_bf16_lo above this */
    json_object_set_new(sw, "threshold", json_real(1.0));
    json_object_set_new(sw, "points", pts);
    json_object_set_new(sw, "crossover", cr);
    return sw;
}

json_t *tc_compress_json(const tc_compress_out *out, const tc_scenario *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "command", json_string("compress"));
    json_object_set_new(o, "inputs", inputs_json(out));
    json_t *res = json_array();
    for (size_t k = 0; k < out->n; k++)
        json_array_append_new(res, result_json(&out->rows[k]));
    json_object_set_new(o, "results", res);
    if (out->nrates)
        json_object_set_new(o, "sweep", sweep_json(out));
    tc_report_add_scenario(o, s);
    return o;
}

/* ---- compress: typed tables ---- */

static void codecs_table(const tc_compress_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "codecs");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int op = tc_rtable_col(t, "collective", "collective", TC_COL_TEXT, NULL, 0);
    int pa = tc_rtable_col(t, "path", "path", TC_COL_TEXT, NULL, 0);
    int sv = tc_rtable_col(t, "servers", "servers", TC_COL_COUNT, NULL, 0);
    int nc = tc_rtable_col(t, "collectives_per_bucket", "per bucket", TC_COL_COUNT, NULL, 0);
    int al = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    int wb = tc_rtable_col(t, "wire_bytes", "wire/iter", TC_COL_BYTES, NULL, 0);
    int cb = tc_rtable_col(t, "collective_bytes", "collective bytes", TC_COL_BYTES, NULL, 0);
    int bp = tc_rtable_col(t, "codec_Bps", "codec speed", TC_COL_BPS, NULL, 0);
    int cs = tc_rtable_col(t, "codec_s", "codec work", TC_COL_SECONDS, NULL, 0);
    int ns = tc_rtable_col(t, "network_s", "network", TC_COL_SECONDS, NULL, 0);
    int is = tc_rtable_col(t, "iteration_s", "iteration", TC_COL_SECONDS, NULL, 0);
    int es = tc_rtable_col(t, "exposed_s", "exposed", TC_COL_SECONDS, NULL, 0);
    int sr = tc_rtable_col(t, "steps_ratio", "steps ratio", TC_COL_NUM, "%.3g", 0);
    int sl = tc_rtable_col(t, "steps_ratio_lo", "lo", TC_COL_NUM, "%.3g", 0);
    int sh = tc_rtable_col(t, "steps_ratio_hi", "hi", TC_COL_NUM, "%.3g", 0);
    int so = tc_rtable_col(t, "steps_ratio_source", "ratio source", TC_COL_TEXT, NULL, 0);
    int ru = tc_rtable_col(t, "runs", "runs", TC_COL_COUNT, NULL, 0);
    int rc = tc_rtable_col(t, "reached", "reached", TC_COL_COUNT, NULL, 0);
    int fa = tc_rtable_col(t, "final_test_acc", "final acc", TC_COL_NUM, "%.4f", 0);
    int st = tc_rtable_col(t, "steps", "steps", TC_COL_COUNT, NULL, 0);
    int ta = tc_rtable_col(t, "time_to_accuracy_s", "time to acc", TC_COL_SECONDS, NULL, 0);
    int tl = tc_rtable_col(t, "time_to_accuracy_lo_s", "lo", TC_COL_SECONDS, NULL, 0);
    int th = tc_rtable_col(t, "time_to_accuracy_hi_s", "hi", TC_COL_SECONDS, NULL, 0);
    int vb = tc_rtable_col(t, "speedup_vs_bf16", "vs bf16", TC_COL_NUM, "%.2fx", 0);
    int vl = tc_rtable_col(t, "speedup_vs_bf16_lo", "lo", TC_COL_NUM, "%.2fx", 0);
    int vh = tc_rtable_col(t, "speedup_vs_bf16_hi", "hi", TC_COL_NUM, "%.2fx", 0);
    int vf = tc_rtable_col(t, "speedup_vs_fp32", "vs fp32", TC_COL_NUM, "%.2fx", 0);
    int vd = tc_rtable_col(t, "verdict", "verdict", TC_COL_TEXT, NULL, 0);
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c, x->codec.name);
        tc_rtable_text(t, r, op, tc_op_name(x->it.op));
        tc_rtable_text(t, r, pa, tc_codec_path_name(x->it.path));
        tc_rtable_num(t, r, sv, x->it.servers ? x->it.servers : NAN);
        tc_rtable_num(t, r, nc, x->it.collectives);
        tc_rtable_text(t, r, al, x->it.path == TC_PATH_PS ? "ps" : tc_algo_name(x->it.algo));
        tc_rtable_num(t, r, wb, x->it.sent_bytes);
        tc_rtable_num(t, r, cb, x->it.coll_bytes);
        tc_rtable_num(t, r, bp, x->it.codec_Bps > 0 ? x->it.codec_Bps : NAN);
        tc_rtable_num(t, r, cs, x->it.t.codec_s);
        tc_rtable_num(t, r, ns, x->it.t.comm_s);
        tc_rtable_num(t, r, is, x->it.t.iter_s);
        tc_rtable_num(t, r, es, x->it.t.exposed_s);
        tc_rtable_num(t, r, sr, x->steps_ratio >= 0 ? x->steps_ratio : NAN); /* empty: never reaches the target */
        tc_rtable_num(t, r, sl, x->tta.ratio_lo);
        tc_rtable_num(t, r, sh, x->tta.ratio_hi);
        tc_rtable_text(t, r, so, x->ratio_source);
        tc_rtable_num(t, r, ru, x->runs ? x->runs : NAN);
        tc_rtable_num(t, r, rc, x->runs ? x->reached : NAN);
        tc_rtable_num(t, r, fa, x->final_acc);
        tc_rtable_num(t, r, st, x->tta.steps);
        tc_rtable_num(t, r, ta, x->tta.tta_s);
        tc_rtable_num(t, r, tl, x->tta.tta_lo_s);
        tc_rtable_num(t, r, th, x->tta.tta_hi_s);
        tc_rtable_num(t, r, vb, x->tta.speedup_bf16);
        tc_rtable_num(t, r, vl, x->tta.speedup_bf16_lo);
        tc_rtable_num(t, r, vh, x->tta.speedup_bf16_hi);
        tc_rtable_num(t, r, vf, x->tta.speedup_fp32);
        tc_rtable_text(t, r, vd, tc_verdict_name(x->verdict));
    }
}

/* The regime map in long form: one row per bandwidth and codec. */
static void sweep_table(const tc_compress_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "sweep");
    int bw = tc_rtable_col(t, "injection_Bps", "bandwidth", TC_COL_BPS, NULL, 0);
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int is = tc_rtable_col(t, "iteration_s", "iteration", TC_COL_SECONDS, NULL, 0);
    int ta = tc_rtable_col(t, "time_to_accuracy_s", "time to acc", TC_COL_SECONDS, NULL, 0);
    int vb = tc_rtable_col(t, "speedup_vs_bf16", "vs bf16", TC_COL_NUM, "%.2fx", 0);
    int vl = tc_rtable_col(t, "speedup_vs_bf16_lo", "lo", TC_COL_NUM, "%.2fx", 0);
    int vh = tc_rtable_col(t, "speedup_vs_bf16_hi", "hi", TC_COL_NUM, "%.2fx", 0);
    int vd = tc_rtable_col(t, "verdict", "verdict", TC_COL_TEXT, NULL, 0);
    int wn = tc_rtable_col(t, "beats_bf16", "beats bf16", TC_COL_TEXT, NULL, 0);
    for (size_t i = 0; i < o->nrates; i++)
        for (size_t k = 0; k < o->n; k++) {
            size_t r = tc_rtable_row(t);
            tc_rtable_num(t, r, bw, o->rates[i]);
            tc_rtable_text(t, r, c, o->rows[k].codec.name);
            tc_rtable_num(t, r, is, o->sweep_iter_s[i][k]);
            tc_rtable_num(t, r, ta, o->sweep_tta_s[i][k]);
            tc_rtable_num(t, r, vb, o->sweep_speedup[i][k]);
            tc_rtable_num(t, r, vl, o->sweep_speedup_lo[i][k]);
            tc_rtable_num(t, r, vh, o->sweep_speedup_hi[i][k]);
            tc_rtable_text(t, r, vd, tc_verdict_name(o->sweep_verdict[i][k]));
            tc_rtable_text(t, r, wn, (long)k != o->i_bf16 && wins(o, i, k) ? "true" : "false");
        }
}

static void crossover_table(const tc_compress_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "crossover");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int rg = tc_rtable_col(t, "regime", "regime", TC_COL_TEXT, NULL, 0);
    int bl = tc_rtable_col(t, "beats_bf16_below_Bps", "beats bf16 below", TC_COL_BPS, NULL, 0);
    for (size_t k = 0; k < o->n; k++) {
        regime g = regime_of(o, k);
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c, o->rows[k].codec.name);
        tc_rtable_text(t, r, rg, regime_name(g));
        tc_rtable_num(t, r, bl, g == REG_BELOW ? o->crossover_Bps[k] : NAN);
    }
}

size_t tc_compress_tables(const tc_compress_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    tc_rtable t;
    codecs_table(out, &t);
    size_t n = add_table(tabs, 0, max, &t);
    if (!out->nrates)
        return n;
    sweep_table(out, &t);
    n = add_table(tabs, n, max, &t);
    crossover_table(out, &t);
    return add_table(tabs, n, max, &t);
}

/* ---- compress: the text ---- */

static const char *fmt_dur(double s, char *buf, size_t len)
{
    if (isinf(s) && s > 0)
        snprintf(buf, len, "inf");
    else if (!isfinite(s))
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

static int side_of_1(double v)
{
    return (v > 1) - (v < 1);
}

/* A ratio or speedup with two decimals, more where two would put the
 * number shown on another side of 1 than the value (1.0004 shows as
 * "1.0004", 0.9996 as "0.9996", never "1.00"): every verdict can be read
 * off the numbers printed beside it. */
static const char *fmt_r(double v, const char *suffix, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
        return buf;
    }
    for (int d = 2; d <= 17; d++) {
        snprintf(buf, len, "%.*f%s", d, v, suffix);
        if (side_of_1(strtod(buf, NULL)) == side_of_1(v))
            break;
    }
    return buf;
}

/* A point and its interval: "1.17x [1.09, 1.25]"; the point alone where
 * the interval is the point (given ratios). */
static const char *fmt_ri(double v, double lo, double hi, const char *suffix, char *buf, size_t len)
{
    char p[40], a[40], b[40];
    fmt_r(v, suffix, p, sizeof p);
    if (isnan(v) || (lo == v && hi == v))
        snprintf(buf, len, "%s", p);
    else
        snprintf(buf, len, "%s [%s, %s]", p, fmt_r(lo, "", a, sizeof a), fmt_r(hi, "", b, sizeof b));
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

static void print_accuracy(const tc_compress_out *o, FILE *f)
{
    if (strcmp(o->acc_source, "given") == 0) {
        fprintf(f, "accuracy    steps ratios to bf16's as given (--steps-ratio): no interval\n");
        return;
    }
    char src[200];
    const tc_train_opts *t = &o->training;
    if (strcmp(o->acc_source, "file") == 0)
        snprintf(src, sizeof src, "the accuracy file (--accuracy): proxy %s on %s, %u workers, %u steps",
                 o->training_model, o->proxy_dataset, t->workers, t->steps);
    else
        snprintf(src, sizeof src, "measured now with the %s proxy on %s (%u workers, %u steps)", o->training_model,
                 o->proxy_dataset, t->workers, t->steps);
    fprintf(f, "accuracy    target %.4f (%s), %s\n", o->target,
            o->target_given ? "given" : "99% of bf16's seed-mean final accuracy", src);
    if (o->proxy_mismatch)
        fprintf(f, "warning     the steps ratios come from the %s proxy, which stands for %s models; %s is a %s "
                   "model (the %s proxy stands for it)\n",
                o->training_model, o->proxy_family, o->model.name, o->model_family,
                tc_train_proxy_of_family(o->model_family));
    if (o->seeds >= 2)
        fprintf(f, "            steps ratios to bf16's over %u seeds%s, %g%% t intervals on the mean log ratio; "
                   "faster or slower only where the interval excludes 1\n",
                o->seeds, o->same_seeds ? " (paired: the same seeds)" : "", 100 * TC_ACC_LEVEL);
    else
        fprintf(f, "            one seed: no interval, no codec called faster or slower (train with --seeds 2 or "
                   "more)\n");
}

/* Where the codecs' encode + decode times come from (docs/MODEL.md,
 * "Compute"): the accelerator's multi-pass roofline, THC's transform at the
 * published kernel's cost, or --codec-throughput. */
static void print_codec_cost(const tc_compress_out *o, FILE *f)
{
    bool thc = false;
    for (size_t k = 0; k < o->n; k++)
        thc |= o->rows[k].codec.kind == TC_CODEC_THC && !(o->rows[k].thr_given > 0);
    fprintf(f, "codec cost  %s's multi-pass roofline of each codec's kernels%s", o->accel->name,
            thc ? ", THC's transform at the published kernel's cost (Dao-AILab fast-hadamard-transform)" : "");
    for (size_t k = 0, first = 1; k < o->n; k++)
        if (o->rows[k].thr_given > 0) {
            fprintf(f, "%s%s", first ? "; --codec-throughput for " : ", ", o->rows[k].codec.name);
            first = 0;
        }
    fprintf(f, "\n");
}

static void print_servers(const tc_compress_out *o, FILE *f);

/* What the buckets are: whole tensors as DDP fills them, or whole equal
 * layers, closed once they hold the cap (tc_buckets_ddp), their float32
 * gradient bytes. */
static void print_buckets(const tc_compress_out *o, FILE *f)
{
    char b[5][64];
    if (o->bucket_by_tensor) {
        fprintf(f, "%zu bucket%s of whole parameter tensors, as DDP fills them: the first %s, the largest %s, the "
                   "last %s (cap %s",
                o->nbuckets, o->nbuckets == 1 ? "" : "s", tc_fmt_size(o->bucket_first_bytes, b[0], 64),
                tc_fmt_size(o->bucket_max_bytes, b[1], 64), tc_fmt_size(o->bucket_last_bytes, b[2], 64),
                tc_fmt_size(o->bucket_bytes, b[3], 64));
        fprintf(f, ", the first's %s", tc_fmt_size(TC_DDP_FIRST_BUCKET_BYTES, b[4], 64));
        fprintf(f, ": a bucket closes at the tensor that fills it)");
        return;
    }
    uint32_t k = o->bucket_layers, last = o->model.layers - (uint32_t)(o->nbuckets - 1) * k;
    fprintf(f, "%zu bucket%s of %u layer%s, %s of float32 gradients", o->nbuckets, o->nbuckets == 1 ? "" : "s", k,
            k == 1 ? "" : "s", tc_fmt_size(o->bucket_first_bytes, b[0], 64));
    if (o->nbuckets > 1)
        fprintf(f, " each");
    fprintf(f, " (");
    if (o->nbuckets > 1 && last != k)
        fprintf(f, "the last: %u layer%s, %s; ", last, last == 1 ? "" : "s",
                tc_fmt_size(o->bucket_last_bytes, b[1], 64));
    fprintf(f, "cap %s: a bucket closes at the layer that fills it)", tc_fmt_size(o->bucket_bytes, b[2], 64));
}

/* The algorithm of each codec's first collective, codecs grouped by it, and
 * the policy that chose the allreduce path's (--dp-algo). */
static void print_algorithms(const tc_compress_out *o, FILE *f)
{
    bool lib = strcmp(o->dp_algo, "library") == 0, aut = strcmp(o->dp_algo, "auto") == 0;
    fprintf(f, "algorithms  ");
    bool done[TC_COMPRESS_MAX_CODECS] = {false};
    for (size_t k = 0, first = 1; k < o->n; k++) {
        if (done[k])
            continue;
        const char *a = o->rows[k].it.path == TC_PATH_PS ? "ps" : tc_algo_name(o->rows[k].it.algo);
        fprintf(f, "%s%s:", first ? "" : "; ", a);
        first = 0;
        for (size_t j = k, n = 0; j < o->n; j++) {
            const char *b = o->rows[j].it.path == TC_PATH_PS ? "ps" : tc_algo_name(o->rows[j].it.algo);
            if (!done[j] && strcmp(a, b) == 0) {
                fprintf(f, "%s%s", n++ ? ", " : " ", o->rows[j].codec.name);
                done[j] = true;
            }
        }
    }
    fprintf(f, " (allreduce path: --dp-algo %s%s)\n", o->dp_algo,
            lib ? ", what NCCL runs, as train's default: ring or dbtree, NCCL's multi-rail ring where faster"
                : aut ? ", the fastest of topocc's algorithms" : "");
}

static void print_header(const tc_compress_out *o, FILE *f)
{
    char b[2][64];
    const tc_model *m = &o->model;
    fprintf(f, "model       %s: %.4g M parameters (%s float32 gradients), %u layers", m->name, m->params / 1e6,
            tc_fmt_size(4 * m->params, b[0], 64), m->layers);
    if (m->batch)
        fprintf(f, ", batch %u per worker, %.4g GFLOP per sample\n", m->batch, m->flops_sample / 1e9);
    else
        fprintf(f, ", %.4g TFLOP per iteration\n", m->flops_iter / 1e12);
    fprintf(f, "compute     %s at %.0f%% MFU: forward %s, backward %s per iteration\n", o->accel->name, 100 * o->mfu,
            tc_fmt_time(o->fwd_s, b[0], 64), tc_fmt_time(o->bwd_s, b[1], 64));
    fprintf(f, "network     %s (injection %s per endpoint), %u workers, %s mode; ", o->topology,
            tc_fmt_rate(o->injection_Bps, b[1], 64), o->workers, tc_mode_name(o->mode));
    print_buckets(o, f);
    fprintf(f, "%s\n", o->offload ? ", codec work offloaded" : ", codec work on the accelerator");
    print_algorithms(o, f);
    print_codec_cost(o, f);
    fprintf(f, "contention  while a collective is in flight compute runs at 1/(1+%g), and collectives at 1/(1+%g) "
               "while compute runs (--s-c, --s-m)\n", o->s_c, o->s_m);
    print_accuracy(o, f);
    fprintf(f, "baseline    %.0f steps to the target", o->baseline_steps);
    if (m->train_samples > 0)
        fprintf(f, " (%.3g M samples at %u per step)\n", m->train_samples / 1e6, m->batch * o->workers);
    else
        fprintf(f, " (custom model's steps=)\n");
    print_servers(o, f);
}

static void row_note(const tc_compress_row *x, char *note, size_t len)
{
    if (strcmp(x->ratio_source, "measured") == 0) {
        if (x->reached == 0)
            snprintf(note, len, "does not reach the target (final accuracy %.4f)", x->final_acc);
        else if (x->reached < x->runs)
            snprintf(note, len, "reaches the target on %u of %u seeds only (final accuracy %.4f)", x->reached,
                     x->runs, x->final_acc);
        else if (x->runs < 2)
            snprintf(note, len, "one seed: no interval");
        else
            note[0] = '\0';
        return;
    }
    snprintf(note, len, "%s%s", x->steps_ratio < 0 ? "does not reach the target, " : "",
             strcmp(x->ratio_source, "given") == 0 ? "ratio given" : "ratio assumed 1");
}

/* The verdict column: what the speedup interval says. */
static const char *verdict_text(tc_verdict v)
{
    switch (v) {
    case TC_VERDICT_BASELINE:
        return "baseline";
    case TC_VERDICT_FASTER:
        return "faster";
    case TC_VERDICT_SLOWER:
        return "slower";
    case TC_VERDICT_SAME:
        return "indistinguishable";
    case TC_VERDICT_NEVER:
        break;
    }
    return "-";
}

/* The collective column: the op on the allreduce path (the codec's own
 * collectives), else the path ("ps S=8"); " xN" for N phases a bucket. */
static void coll_text(const tc_codec_iter *it, char *buf, size_t len)
{
    int w;
    if (it->path == TC_PATH_ALLREDUCE)
        w = snprintf(buf, len, "%s", tc_op_name(it->op));
    else if (it->path == TC_PATH_PS)
        w = snprintf(buf, len, "ps S=%u", it->servers);
    else
        w = snprintf(buf, len, "%s", tc_codec_path_name(it->path));
    if (it->collectives > 1 && w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " x%u", it->collectives);
}

/* Where each ps row's servers are: colocated with the workers, on their
 * endpoints (docs/MODEL.md, "Aggregation paths"). */
static void print_servers(const tc_compress_out *o, FILE *f)
{
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        uint32_t S = x->it.servers;
        if (x->it.path != TC_PATH_PS || !S)
            continue;
        fprintf(f, "servers     %s: %u parameter servers colocated with workers%s, on endpoints", x->codec.name, S,
                S == o->workers ? " (one per worker)" : "");
        for (uint32_t s = 0; s < S && s < 16; s++)
            fprintf(f, "%s%u", s ? ", " : " ", x->it.server_ep[s]);
        if (S > 16)
            fprintf(f, ", ... (%u more; JSON lists %u)", S - 16, S < TC_ITER_SERVERS_LISTED ? S : TC_ITER_SERVERS_LISTED);
        fprintf(f, "\n");
    }
}

static void print_codecs(const tc_compress_out *o, FILE *f)
{
    tc_table tb;
    if (tc_table_init(&tb, 13))
        return;
    const char *hdr[13] = {"codec",       "collective",        "wire/iter", "codec work", "network",
                           "iteration",   "exposed",           "steps ratio", "time to acc", "vs bf16",
                           "vs fp32",     "verdict vs bf16",   "note"};
    tc_table_row(&tb, hdr);
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        char b[8][64], coll[64], ratio[96], tta[128], vs[96], note[128];
        coll_text(&x->it, coll, sizeof coll);
        if (x->steps_ratio < 0)
            snprintf(ratio, sizeof ratio, "never");
        else
            fmt_ri(x->steps_ratio, x->tta.ratio_lo, x->tta.ratio_hi, "", ratio, sizeof ratio);
        if (isfinite(x->tta.tta_s) && !(x->tta.tta_lo_s == x->tta.tta_s && x->tta.tta_hi_s == x->tta.tta_s))
            snprintf(tta, sizeof tta, "%s [%s, %s]", fmt_dur(x->tta.tta_s, b[5], 64), fmt_dur(x->tta.tta_lo_s, b[6], 64),
                     fmt_dur(x->tta.tta_hi_s, b[7], 64));
        else
            fmt_dur(x->tta.tta_s, tta, sizeof tta);
        if ((long)k == o->i_bf16)
            fmt_r(x->tta.speedup_bf16, "x", vs, sizeof vs);
        else
            fmt_ri(x->tta.speedup_bf16, x->tta.speedup_bf16_lo, x->tta.speedup_bf16_hi, "x", vs, sizeof vs);
        row_note(x, note, sizeof note);
        char fp[64];
        fmt_r(x->tta.speedup_fp32, "x", fp, sizeof fp);
        const char *cells[13] = {x->codec.name, coll, tc_fmt_size(x->it.sent_bytes, b[0], 64),
                                 tc_fmt_time(x->it.t.codec_s, b[1], 64), tc_fmt_time(x->it.t.comm_s, b[2], 64),
                                 tc_fmt_time(x->it.t.iter_s, b[3], 64), tc_fmt_time(x->it.t.exposed_s, b[4], 64),
                                 ratio, tta, vs, fp, verdict_text(x->verdict), note};
        tc_table_row(&tb, cells);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

/* The regime map: bandwidth by codec, speedups over bf16 with their
 * intervals. */
static void print_map(const tc_compress_out *o, FILE *f)
{
    if (strcmp(o->acc_source, "given") == 0)
        fprintf(f, "regime map: speedup over bf16 in time to accuracy, by fabric bandwidth per endpoint\n");
    else
        fprintf(f, "regime map: speedup over bf16 in time to accuracy [%g%% interval], by fabric bandwidth per "
                   "endpoint\n", 100 * TC_ACC_LEVEL);
    tc_table tb;
    if (tc_table_init(&tb, (int)o->n + 1))
        return;
    const char *cells[TC_COMPRESS_MAX_CODECS + 1];
    char vals[TC_COMPRESS_MAX_CODECS + 1][96];
    cells[0] = "bandwidth";
    for (size_t k = 0; k < o->n; k++)
        cells[k + 1] = o->rows[k].codec.name;
    tc_table_row(&tb, cells);
    for (size_t i = 0; i < o->nrates; i++) {
        cells[0] = fmt_gbps(o->rates[i], vals[0], 96);
        for (size_t k = 0; k < o->n; k++) {
            if ((long)k == o->i_bf16)
                cells[k + 1] = fmt_r(o->sweep_speedup[i][k], "x", vals[k + 1], 96);
            else
                cells[k + 1] = fmt_ri(o->sweep_speedup[i][k], o->sweep_speedup_lo[i][k], o->sweep_speedup_hi[i][k],
                                      "x", vals[k + 1], 96);
        }
        tc_table_row(&tb, cells);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

static const char *summary_phrase(tc_verdict v)
{
    switch (v) {
    case TC_VERDICT_FASTER:
        return "faster than bf16";
    case TC_VERDICT_SLOWER:
        return "slower than bf16";
    case TC_VERDICT_SAME:
        return "indistinguishable from bf16";
    default:
        return "does not reach the target";
    }
}

/* One line per codec, from the same verdicts the map's intervals show:
 * the swept bandwidths grouped into runs of one verdict. */
static void print_summary(const tc_compress_out *o, FILE *f)
{
    char lo[64], hi[64], b[64];
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        if ((long)k == o->i_bf16)
            continue;
        fprintf(f, "%-20s ", x->codec.name);
        if (x->steps_ratio < 0) {
            if (x->runs)
                fprintf(f, "does not reach the target %.4f%s (final accuracy %.4f, bf16's %.4f)\n", o->target,
                        x->reached ? " on every seed" : "", x->final_acc, o->reference_final);
            else
                fprintf(f, "does not reach the target (ratio given)\n");
            continue;
        }
        for (size_t i = 0; i < o->nrates;) {
            size_t j = i;
            while (j + 1 < o->nrates && o->sweep_verdict[j + 1][k] == o->sweep_verdict[i][k])
                j++;
            fmt_gbps(o->rates[i], lo, 64);
            fmt_gbps(o->rates[j], hi, 64);
            fprintf(f, "%s%s ", i ? "; " : "", summary_phrase(o->sweep_verdict[i][k]));
            if (i == 0 && j + 1 == o->nrates)
                fprintf(f, "at every bandwidth from %s to %s", lo, hi);
            else if (i == j)
                fprintf(f, "at %s", lo);
            else
                fprintf(f, "from %s to %s", lo, hi);
            if (i == 0 && j + 1 < o->nrates && o->sweep_verdict[i][k] == TC_VERDICT_FASTER)
                fprintf(f, " (below about %s per endpoint)", fmt_gbps(o->crossover_Bps[k], b, 64));
            i = j + 1;
        }
        fputc('\n', f);
    }
}

void tc_compress_print(const tc_compress_out *out, const tc_scenario *s, FILE *f)
{
    (void)s;
    print_header(out, f);
    fputc('\n', f);
    print_codecs(out, f);
    if (!out->nrates)
        return;
    fputc('\n', f);
    print_map(out, f);
    fputc('\n', f);
    print_summary(out, f);
}
