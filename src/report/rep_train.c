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

json_t *tc_codec_bench_json(const tc_codec_bench_out *out, const tc_scenario *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < out->n; i++) {
        const tc_codec_bench_row *r = &out->rows[i];
        json_array_append_new(arr, json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:o, s:o}}", "codec", r->codec.name,
                                             "source", "measured", "enc_dec_Bps", num(r->enc_dec_Bps), "copy_Bps",
                                             num(r->copy_Bps), "ratio", num(r->enc_dec_Bps / r->copy_Bps),
                                             "roofline_Bps", "h100", num(r->h100_Bps), "tpu-v5p", num(r->tpu_Bps)));
    }
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
    int cp = tc_rtable_col(t, "copy_Bps", "copy GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int ra = tc_rtable_col(t, "ratio", "ratio", TC_COL_NUM, "%.1f%%", 100);
    int h = tc_rtable_col(t, "h100_roofline_Bps", "h100 GB/s", TC_COL_NUM, "%.2f", 1e-9);
    int tp = tc_rtable_col(t, "tpu_v5p_roofline_Bps", "tpu-v5p GB/s", TC_COL_NUM, "%.2f", 1e-9);
    for (size_t i = 0; i < out->n; i++) {
        const tc_codec_bench_row *r = &out->rows[i];
        size_t k = tc_rtable_row(t);
        tc_rtable_text(t, k, c, r->codec.name);
        tc_rtable_num(t, k, ed, r->enc_dec_Bps);
        tc_rtable_num(t, k, cp, r->copy_Bps);
        tc_rtable_num(t, k, ra, r->enc_dec_Bps / r->copy_Bps);
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
    fprintf(f, "bucket %s (%.0f float32), one core; roofline for %u workers\n", tc_fmt_size(out->bytes, sz, sizeof sz),
            (double)out->coordinates, out->workers);
    tc_rtable t;
    bench_table(out, &t);
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
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

static double best_acc(const tc_acc_curve *c)
{
    double best = 0.0;
    for (size_t k = 0; k < c->n; k++)
        best = c->pts[k].test_acc > best ? c->pts[k].test_acc : best;
    return best;
}

static void curves_table(const tc_train_accuracy_out *out, tc_rtable *t)
{
    tc_rtable_init(t, "curves");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int st = tc_rtable_col(t, "step", "step", TC_COL_COUNT, NULL, 0);
    int ta = tc_rtable_col(t, "test_acc", "test accuracy", TC_COL_NUM, "%.4f", 0);
    int tl = tc_rtable_col(t, "train_loss", "train loss", TC_COL_NUM, "%.4f", 0);
    for (size_t i = 0; i < out->n; i++)
        for (size_t k = 0; k < out->curves[i].n; k++) {
            const tc_acc_point *p = &out->curves[i].pts[k];
            size_t r = tc_rtable_row(t);
            tc_rtable_text(t, r, c, out->curves[i].codec.name);
            tc_rtable_num(t, r, st, p->step);
            tc_rtable_num(t, r, ta, p->test_acc);
            tc_rtable_num(t, r, tl, p->train_loss); /* NAN once diverged: empty */
        }
}

static void final_table(const tc_train_accuracy_out *out, tc_rtable *t)
{
    tc_rtable_init(t, "final");
    int c = tc_rtable_col(t, "codec", "codec", TC_COL_TEXT, NULL, 0);
    int fa = tc_rtable_col(t, "final_test_acc", "final test accuracy", TC_COL_NUM, "%.4f", 0);
    int ba = tc_rtable_col(t, "best_test_acc", "best", TC_COL_NUM, "%.4f", 0);
    int fl = tc_rtable_col(t, "final_train_loss", "final train loss", TC_COL_NUM, "%.4f", 0);
    for (size_t i = 0; i < out->n; i++) {
        const tc_acc_curve *cv = &out->curves[i];
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c, cv->codec.name);
        tc_rtable_num(t, r, fa, cv->pts[cv->n - 1].test_acc);
        tc_rtable_num(t, r, ba, best_acc(cv));
        tc_rtable_num(t, r, fl, cv->pts[cv->n - 1].train_loss);
    }
}

size_t tc_train_accuracy_tables(const tc_train_accuracy_out *out, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    tc_rtable t;
    curves_table(out, &t);
    size_t n = add_table(tabs, 0, max, &t);
    final_table(out, &t);
    return add_table(tabs, n, max, &t);
}

/* Test accuracy by step, one column per codec (the curves side by side). */
static void print_wide(const tc_train_accuracy_out *out, FILE *f)
{
    tc_rtable t;
    tc_rtable_init(&t, "curves_wide");
    tc_rtable_col(&t, "step", "step", TC_COL_COUNT, NULL, 0);
    for (size_t i = 0; i < out->n; i++)
        tc_rtable_col(&t, out->curves[i].codec.name, out->curves[i].codec.name, TC_COL_NUM, "%.4f", 0);
    for (size_t k = 0; out->n && k < out->curves[0].n; k++) {
        size_t r = tc_rtable_row(&t);
        tc_rtable_num(&t, r, 0, out->curves[0].pts[k].step);
        for (size_t i = 0; i < out->n; i++)
            if (k < out->curves[i].n)
                tc_rtable_num(&t, r, (int)i + 1, out->curves[i].pts[k].test_acc);
    }
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
}

/* The final figures; a diverged run says so instead of a loss. */
static void print_final(const tc_train_accuracy_out *out, FILE *f)
{
    tc_table tb;
    if (tc_table_init(&tb, 4))
        return;
    tb.right[1] = tb.right[2] = tb.right[3] = true;
    const char *hdr[4] = {"codec", "final test accuracy", "best", "final train loss"};
    tc_table_row(&tb, hdr);
    for (size_t i = 0; i < out->n; i++) {
        const tc_acc_curve *c = &out->curves[i];
        const tc_acc_point *last = &c->pts[c->n - 1];
        char fa[32], b[32], l[32];
        snprintf(fa, sizeof fa, "%.4f", last->test_acc);
        snprintf(b, sizeof b, "%.4f", best_acc(c));
        if (isfinite(last->train_loss))
            snprintf(l, sizeof l, "%.4f", last->train_loss);
        else
            snprintf(l, sizeof l, "diverged");
        const char *r[4] = {c->codec.name, fa, b, l};
        tc_table_row(&tb, r);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

void tc_train_accuracy_print(const tc_train_accuracy_out *out, const tc_scenario *s, FILE *f)
{
    (void)s;
    const tc_train_opts *o = &out->opts;
    fprintf(f, "Fashion-MNIST (%u training, %u test images), %s 784-%u-10, %u workers x batch %u, %u steps, lr %g "
               "momentum 0.9, seed %llu, buckets of %llu bytes\n\n",
            o->train_subset ? o->train_subset : 60000, o->test_subset ? o->test_subset : 10000, o->model, o->hidden,
            o->workers, o->batch, o->steps, o->lr, (unsigned long long)o->seed, (unsigned long long)o->bucket_bytes);
    print_wide(out, f);
    fputc('\n', f);
    print_final(out, f);
}

/* ==== compress =========================================================== */

/* Where a codec beats bf16 on the sweep, by the one rule the regime map,
 * its summary, the JSON and the CSV share: a speedup above
 * TC_BEAT_THRESHOLD at a swept bandwidth. */
typedef enum { REG_BASELINE, REG_ALWAYS, REG_BELOW, REG_NEVER, REG_SOME } regime;

static const char *regime_name(regime r)
{
    static const char *names[] = {"baseline", "always", "below", "never", "some"};
    return names[r];
}

static bool wins(const tc_compress_out *o, size_t i, size_t k)
{
    return o->sweep_speedup[i][k] > TC_BEAT_THRESHOLD;
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
    json_object_set_new(acc, "target_rule", meas ? json_string(o->target_given ? "given" : "0.95 x reference final")
                                                 : json_null());
    json_object_set_new(acc, "reference", meas ? json_string(o->reference) : json_null());
    json_object_set_new(acc, "reference_final", meas ? json_real(o->reference_final) : json_null());
    if (o->have_training)
        json_object_set_new(acc, "training", training_json(&o->training));
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
    json_object_set_new(in, "buckets", json_integer((json_int_t)(o->n ? o->rows[0].it.nbuckets : 0)));
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
        json_array_append_new(thr, e);
    }
    json_object_set_new(in, "codec_throughputs", thr);
    return in;
}

static json_t *result_json(const tc_compress_row *x)
{
    json_t *e = json_object();
    json_object_set_new(e, "codec", json_string(x->codec.name));
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
    json_object_set_new(e, "reaches_target", json_boolean(x->steps_ratio >= 0));
    json_object_set_new(e, "steps_ratio", x->steps_ratio >= 0 ? json_real(x->steps_ratio) : json_null());
    json_object_set_new(e, "steps_ratio_source", json_string(x->ratio_source));
    json_object_set_new(e, "steps", num(x->tta.steps));
    json_object_set_new(e, "time_to_accuracy_s", num(x->tta.tta_s));
    json_object_set_new(e, "speedup_vs_bf16", num(x->tta.speedup_bf16));
    json_object_set_new(e, "speedup_vs_fp32", num(x->tta.speedup_fp32));
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
    json_object_set_new(sw, "threshold", json_real(TC_BEAT_THRESHOLD));
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
    int so = tc_rtable_col(t, "steps_ratio_source", "ratio source", TC_COL_TEXT, NULL, 0);
    int st = tc_rtable_col(t, "steps", "steps", TC_COL_COUNT, NULL, 0);
    int ta = tc_rtable_col(t, "time_to_accuracy_s", "time to acc", TC_COL_SECONDS, NULL, 0);
    int vb = tc_rtable_col(t, "speedup_vs_bf16", "vs bf16", TC_COL_NUM, "%.2fx", 0);
    int vf = tc_rtable_col(t, "speedup_vs_fp32", "vs fp32", TC_COL_NUM, "%.2fx", 0);
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c, x->codec.name);
        tc_rtable_text(t, r, op, tc_op_name(x->it.op));
        tc_rtable_num(t, r, nc, x->it.collectives);
        tc_rtable_text(t, r, al, tc_algo_name(x->it.algo));
        tc_rtable_num(t, r, wb, x->it.sent_bytes);
        tc_rtable_num(t, r, cb, x->it.coll_bytes);
        tc_rtable_num(t, r, bp, x->it.codec_Bps > 0 ? x->it.codec_Bps : NAN);
        tc_rtable_num(t, r, cs, x->it.t.codec_s);
        tc_rtable_num(t, r, ns, x->it.t.comm_s);
        tc_rtable_num(t, r, is, x->it.t.iter_s);
        tc_rtable_num(t, r, es, x->it.t.exposed_s);
        tc_rtable_num(t, r, sr, x->steps_ratio >= 0 ? x->steps_ratio : NAN); /* empty: never reaches the target */
        tc_rtable_text(t, r, so, x->ratio_source);
        tc_rtable_num(t, r, st, x->tta.steps);
        tc_rtable_num(t, r, ta, x->tta.tta_s);
        tc_rtable_num(t, r, vb, x->tta.speedup_bf16);
        tc_rtable_num(t, r, vf, x->tta.speedup_fp32);
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
    int wn = tc_rtable_col(t, "beats_bf16", "beats bf16", TC_COL_TEXT, NULL, 0);
    for (size_t i = 0; i < o->nrates; i++)
        for (size_t k = 0; k < o->n; k++) {
            size_t r = tc_rtable_row(t);
            tc_rtable_num(t, r, bw, o->rates[i]);
            tc_rtable_text(t, r, c, o->rows[k].codec.name);
            tc_rtable_num(t, r, is, o->sweep_iter_s[i][k]);
            tc_rtable_num(t, r, ta, o->sweep_tta_s[i][k]);
            tc_rtable_num(t, r, vb, o->sweep_speedup[i][k]);
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

/* A speedup as "1.23x". Over bf16 (beat), with as many decimals as it
 * takes for the number shown to fall on the same side of TC_BEAT_THRESHOLD
 * as the value itself: 1.0096 shows as "1.0096x", not "1.01x", so the
 * table never reads as a win the summary does not count. */
static const char *fmt_x(double v, bool beat, char *buf, size_t len)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    for (int d = 2; d <= (beat ? 17 : 2); d++) {
        snprintf(buf, len, "%.*fx", d, v);
        if ((strtod(buf, NULL) > TC_BEAT_THRESHOLD) == (v > TC_BEAT_THRESHOLD))
            break;
    }
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
    fprintf(f, "network     %s (injection %s per endpoint), %u workers, %s mode; %zu buckets of %s%s\n",
            o->topology, tc_fmt_rate(o->injection_Bps, b[1], 64), o->workers, tc_mode_name(o->mode), o->n ? o->rows[0].it.nbuckets : 0, tc_fmt_size(o->bucket_bytes, b[0], 64),
            o->offload ? ", codec work offloaded" : ", codec work on the accelerator");
    fprintf(f, "contention  while a collective is in flight compute runs at 1/(1+%g), and collectives at 1/(1+%g) "
               "while compute runs (--s-c, --s-m)\n", o->s_c, o->s_m);
    if (strcmp(o->acc_source, "given") == 0) {
        fprintf(f, "accuracy    steps ratios as given (--steps-ratio)\n");
    } else {
        char src[128];
        if (strcmp(o->acc_source, "file") == 0)
            snprintf(src, sizeof src, "the accuracy file (--accuracy)");
        else
            snprintf(src, sizeof src, "measured now on Fashion-MNIST (%s, %u workers)", o->training_model,
                     o->training.workers);
        fprintf(f, "accuracy    target %.4g (%s), %s: %s\n", o->target,
                o->target_given ? "given" : "95% of the reference's final accuracy", o->reference, src);
    }
    fprintf(f, "baseline    %.0f steps to the target", o->baseline_steps);
    if (m->train_samples > 0)
        fprintf(f, " (%.3g M samples at %u per step)\n", m->train_samples / 1e6, m->batch * o->workers);
    else
        fprintf(f, " (custom model's steps=)\n");
}

static void row_note(const tc_compress_row *x, char *note, size_t len)
{
    bool measured = strcmp(x->ratio_source, "measured") == 0;
    snprintf(note, len, "%s%s%s", x->steps_ratio < 0 ? "does not reach the target" : "",
             x->steps_ratio < 0 && !measured ? ", " : "",
             measured ? "" : strcmp(x->ratio_source, "given") == 0 ? "ratio given" : "ratio assumed 1");
}

static void print_codecs(const tc_compress_out *o, FILE *f)
{
    tc_table tb;
    if (tc_table_init(&tb, 12))
        return;
    const char *hdr[12] = {"codec", "collective", "wire/iter", "codec work", "network", "iteration", "exposed",
                           "steps ratio", "time to acc", "vs bf16", "vs fp32", "note"};
    tc_table_row(&tb, hdr);
    for (size_t k = 0; k < o->n; k++) {
        const tc_compress_row *x = &o->rows[k];
        char b[8][64], coll[64], ratio[64], note[96];
        snprintf(coll, sizeof coll, "%s%s", tc_op_name(x->it.op), x->it.collectives > 1 ? " x2" : "");
        if (x->steps_ratio < 0)
            snprintf(ratio, sizeof ratio, "never");
        else
            snprintf(ratio, sizeof ratio, "%.3g", x->steps_ratio);
        row_note(x, note, sizeof note);
        const char *cells[12] = {x->codec.name, coll, tc_fmt_size(x->it.sent_bytes, b[0], 64),
                                 tc_fmt_time(x->it.t.codec_s, b[1], 64), tc_fmt_time(x->it.t.comm_s, b[2], 64),
                                 tc_fmt_time(x->it.t.iter_s, b[3], 64), tc_fmt_time(x->it.t.exposed_s, b[4], 64),
                                 ratio, fmt_dur(x->tta.tta_s, b[5], 64), fmt_x(x->tta.speedup_bf16, true, b[6], 64),
                                 fmt_x(x->tta.speedup_fp32, false, b[7], 64), note};
        tc_table_row(&tb, cells);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

/* The regime map: bandwidth by codec, speedups over bf16. */
static void print_map(const tc_compress_out *o, FILE *f)
{
    fprintf(f, "regime map: speedup over bf16 in time to accuracy, by fabric bandwidth per endpoint\n");
    tc_table tb;
    if (tc_table_init(&tb, (int)o->n + 1))
        return;
    const char *cells[TC_COMPRESS_MAX_CODECS + 1];
    char vals[TC_COMPRESS_MAX_CODECS + 1][64];
    cells[0] = "bandwidth";
    for (size_t k = 0; k < o->n; k++)
        cells[k + 1] = o->rows[k].codec.name;
    tc_table_row(&tb, cells);
    for (size_t i = 0; i < o->nrates; i++) {
        cells[0] = fmt_gbps(o->rates[i], vals[0], 64);
        for (size_t k = 0; k < o->n; k++)
            cells[k + 1] = fmt_x(o->sweep_speedup[i][k], true, vals[k + 1], 64);
        tc_table_row(&tb, cells);
    }
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

/* One line per codec, from the same wins the map shows. */
static void print_summary(const tc_compress_out *o, FILE *f)
{
    char lo[64], hi[64], b[64];
    fmt_gbps(o->rates[0], lo, 64);
    fmt_gbps(o->rates[o->nrates - 1], hi, 64);
    for (size_t k = 0; k < o->n; k++) {
        const char *name = o->rows[k].codec.name;
        switch (regime_of(o, k)) {
        case REG_BASELINE:
            break;
        case REG_ALWAYS:
            fprintf(f, "%-20s beats bf16 (by over 1%%) at every bandwidth from %s to %s\n", name, lo, hi);
            break;
        case REG_NEVER:
            fprintf(f, "%-20s does not beat bf16 (by over 1%%) at any bandwidth from %s to %s\n", name, lo, hi);
            break;
        case REG_BELOW:
            fprintf(f, "%-20s beats bf16 (by over 1%%) below about %s per endpoint\n", name,
                    fmt_gbps(o->crossover_Bps[k], b, 64));
            break;
        case REG_SOME:
            fprintf(f, "%-20s beats bf16 (by over 1%%) only at", name);
            for (size_t i = 0, first = 1; i < o->nrates; i++)
                if (wins(o, i, k)) {
                    fprintf(f, "%s %s", first ? "" : ",", fmt_gbps(o->rates[i], b, 64));
                    first = 0;
                }
            fprintf(f, " of %s to %s\n", lo, hi);
            break;
        }
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
