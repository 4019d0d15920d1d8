/*
 * test_workload.c - the training iteration model (docs/MODEL.md, "Gradient
 * compression, end to end") on hand-computed timelines, the codecs' cost as
 * the iteration sees it, and time to accuracy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/workload.h"
#include "topocc/train.h"

static void near(double a, double b, const char *what)
{
    if (!(fabs(a - b) <= 1e-12 * fmax(1, fmax(fabs(a), fabs(b)))))
        fail_msg("%s: %.15g, expected %.15g", what, a, b);
}

static void rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g", what, a, b);
}

static tc_iter_time timeline(double fwd, double bwd, tc_iter_bucket *b, size_t n, bool offload)
{
    tc_iter_time t;
    tc_err err = {{0}};
    if (tc_iter_timeline(fwd, bwd, b, n, offload, NULL, &t, &err))
        fail_msg("timeline: %s", err.msg);
    return t;
}

/* One bucket, no codec: it is ready when the backward pass ends, so its
 * collective is entirely exposed: t = fwd + bwd + comm. */
static void one_bucket_is_exposed(void **state)
{
    (void)state;
    tc_iter_bucket b = {.bytes = 1, .ready_frac = 1, .comm_s = 0.5};
    tc_iter_time t = timeline(1, 2, &b, 1, false);
    near(t.iter_s, 3.5, "iteration");
    near(t.exposed_s, 0.5, "exposed");
    near(t.compute_s, 3, "compute");
    near(b.comm_start, 3, "comm start");
    /* No communication at all: the iteration is the compute. */
    b.comm_s = 0;
    near(timeline(1, 2, &b, 1, false).iter_s, 3, "no comm");
}

/* Two buckets ready at half and all of the backward pass (t = 2 and 3):
 * bucket 0's collective (0.8) ends at 2.8, under the backward pass; the last
 * bucket carries nothing. Nothing is exposed. */
static void communication_hidden_behind_backward(void **state)
{
    (void)state;
    tc_iter_bucket b[2] = {{.bytes = 1, .ready_frac = 0.5, .comm_s = 0.8}, {.bytes = 1, .ready_frac = 1}};
    tc_iter_time t = timeline(1, 2, b, 2, false);
    near(b[0].ready_at, 2, "ready 0");
    near(b[0].comm_end, 2.8, "comm end 0");
    near(t.iter_s, 3, "iteration");
    near(t.exposed_s, 0, "exposed");
    /* t = fwd + max(bwd, bwd/2 + comm0) as comm0 grows past bwd/2. */
    b[0].comm_s = 1.7;
    near(timeline(1, 2, b, 2, false).iter_s, 1 + fmax(2, 1 + 1.7), "bucket 0 longer than the rest of backward");
}

/* Two buckets of 1.5 s each, ready at 2 and 3: bucket 0 goes 2 -> 3.5,
 * bucket 1 waits for the network until 3.5 and ends at 5: 2 s exposed. */
static void communication_exposed_and_serialized(void **state)
{
    (void)state;
    tc_iter_bucket b[2] = {{.bytes = 1, .ready_frac = 0.5, .comm_s = 1.5}, {.bytes = 1, .ready_frac = 1, .comm_s = 1.5}};
    tc_iter_time t = timeline(1, 2, b, 2, false);
    near(b[1].ready_at, 3, "ready 1");
    near(b[1].comm_start, 3.5, "bucket 1 waits for bucket 0");
    near(t.iter_s, 5, "iteration");
    near(t.exposed_s, 2, "exposed");
    near(t.comm_s, 3, "network time");
    /* No forward, ready at 1 and 2, 3 s each: 1 -> 4, 4 -> 7. */
    b[0].comm_s = b[1].comm_s = 3;
    t = timeline(0, 2, b, 2, false);
    near(b[0].comm_end, 4, "bucket 0 end");
    near(b[1].comm_start, 4, "bucket 1 start");
    near(t.iter_s, 7, "serialized");
}

/*
 * Encode and decode on the accelerator pause the backward pass. fwd 1, bwd 2,
 * buckets at 1/2 and 1, encode 0.25, collective 0.5, decode 0.25 each:
 *   2.00 bucket 0 ready, encode to 2.25, collective 2.25 -> 2.75
 *   2.25 backward resumes (1 s left), 0.5 done by 2.75
 *   2.75 decode bucket 0 to 3.00
 *   3.00 backward resumes, ends at 3.50: bucket 1 ready
 *   3.50 encode to 3.75, collective to 4.25, decode to 4.50.
 * Offloaded, the backward pass ends at 3 and the iteration at 4.
 */
static void codec_work_delays_compute(void **state)
{
    (void)state;
    tc_iter_bucket b[2] = {{.bytes = 1, .ready_frac = 0.5, .enc_s = 0.25, .comm_s = 0.5, .dec_s = 0.25},
                           {.bytes = 1, .ready_frac = 1, .enc_s = 0.25, .comm_s = 0.5, .dec_s = 0.25}};
    tc_iter_time t = timeline(1, 2, b, 2, false);
    near(b[0].comm_start, 2.25, "comm 0 start");
    near(b[0].done_at, 3, "bucket 0 decoded");
    near(b[1].ready_at, 3.5, "bucket 1 ready");
    near(t.bwd_end_s, 3.5, "backward end");
    near(t.iter_s, 4.5, "iteration");
    near(t.codec_s, 1, "codec time");
    near(t.exposed_s, 1.5, "exposed");
    t = timeline(1, 2, b, 2, true);
    near(t.bwd_end_s, 3, "offloaded backward end");
    near(b[1].comm_start, 3.25, "offloaded comm 1 start");
    near(t.iter_s, 4, "offloaded iteration");
}

/* Seven layers of 10 MB, 25 MB buckets: DDP closes a bucket once it holds at
 * least the cap, so buckets of 3, 3 and 1 layers, ready after 3/7, 6/7, 7/7. */
static void buckets_follow_ddp_assignment(void **state)
{
    (void)state;
    tc_model m = {.params = 7 * 2.5e6, .layers = 7};
    tc_iter_bucket *b;
    size_t n;
    tc_err err = {{0}};
    assert_int_equal(tc_buckets_make(&m, 25e6, &b, &n, &err), TC_OK);
    assert_int_equal(n, 3);
    near(b[0].bytes, 30e6, "bucket 0 bytes");
    near(b[2].bytes, 10e6, "bucket 2 bytes");
    near(b[0].ready_frac, 3.0 / 7, "bucket 0 ready");
    near(b[1].ready_frac, 6.0 / 7, "bucket 1 ready");
    near(b[2].ready_frac, 1, "bucket 2 ready");
    free(b);
    /* A layer above the cap is a bucket of its own. */
    assert_int_equal(tc_buckets_make(&m, 1e6, &b, &n, &err), TC_OK);
    assert_int_equal(n, 7);
    free(b);
}

/* A transformer of the zoo is bucketed by tensor as DDP fills buckets: its
 * tensors last registered first, a bucket closed once it reaches its limit
 * (1 MiB for the first, the cap after), the tensor that crosses it
 * included; by hand over tc_model_tensors for several caps, the bytes
 * summing to 4 x params and each bucket ready at its share of the tensors.
 * A CNN keeps whole equal layers. */
static void transformer_buckets_are_ddp_tensor_buckets(void **state)
{
    (void)state;
    tc_err err = {{0}};
    const char *names[] = {"gpt2-xl", "llama-7b", "bert-large"};
    const double caps[] = {25.0 * 1048576, 1e6, 4e9};
    for (int mi = 0; mi < 3; mi++)
        for (int ci = 0; ci < 3; ci++) {
            tc_model m;
            assert_int_equal(tc_model_parse(names[mi], &m, &err), TC_OK);
            tc_codec_tensor *t;
            double *work, head;
            size_t nt;
            assert_int_equal(tc_model_tensor_work(&m, &t, &work, &head, &nt, &err), TC_OK);
            double total = 0, wtotal = head;
            for (size_t k = 0; k < nt; k++) {
                total += (double)t[k].rows * t[k].cols;
                wtotal += work[k];
                /* the products: 2-D weights of a block or an untied head */
                assert_true(work[k] == 0 || work[k] == (double)t[k].rows * t[k].cols);
            }
            /* tied (gpt2-xl, bert-large): the head's product comes first */
            assert_true((head > 0) == (mi != 1));
            double scale = 4 * m.params / total, first = ci == 0 ? 1048576.0 : caps[ci];
            /* by hand: close when the open bucket's bytes reach the limit;
             * ready when the products so far are done */
            size_t want = 0;
            double cur = 0, done = head, ready[512];
            for (size_t k = nt; k-- > 0;) {
                cur += (double)t[k].rows * t[k].cols * scale;
                done += work[k];
                if (cur >= (want == 0 ? first : caps[ci]) || k == 0) {
                    if (want < 512)
                        ready[want] = k == 0 ? 1 : done / wtotal;
                    want++, cur = 0;
                }
            }
            tc_iter_bucket *b;
            size_t n;
            bool by_tensor = false;
            assert_int_equal(tc_buckets_ddp(&m, caps[ci], first, &b, &n, &by_tensor, &err), TC_OK);
            assert_true(by_tensor);
            assert_int_equal(n, want);
            double sum = 0, prev = 0;
            for (size_t i = 0; i < n; i++) {
                sum += b[i].bytes;
                assert_true(b[i].ready_frac >= prev && b[i].ready_frac > 0 && b[i].ready_frac <= 1);
                prev = b[i].ready_frac;
                if (i < 512)
                    rel(b[i].ready_frac, ready[i], 1e-12, "ready when its products are done");
                /* every bucket but the last reaches its limit */
                assert_true(i + 1 == n || b[i].bytes >= (i == 0 ? first : caps[ci]));
            }
            rel(sum, 4 * m.params, 1e-12, "4 x params");
            near(b[n - 1].ready_frac, 1, "the last at the end");
            free(b);
            free(t);
            free(work);
        }
    tc_model c;
    assert_int_equal(tc_model_parse("resnet50", &c, &err), TC_OK);
    tc_iter_bucket *b;
    size_t n;
    bool by_tensor = true;
    assert_int_equal(tc_buckets_ddp(&c, 25.0 * 1048576, 1048576, &b, &n, &by_tensor, &err), TC_OK);
    assert_false(by_tensor);
    assert_int_equal(n, 4);
    free(b);
}

static void models_parse(void **state)
{
    (void)state;
    tc_model m;
    tc_err err = {{0}};
    assert_int_equal(tc_model_parse("resnet50", &m, &err), TC_OK);
    rel(m.params, 25.557e6, 1e-3, "resnet50 params");
    rel(m.flops_iter, 256 * 3 * 2 * 4.09e9, 1e-12, "resnet50 flops");
    assert_int_equal(tc_model_parse("bert-large:batch=16", &m, &err), TC_OK);
    assert_int_equal(m.batch, 16);
    assert_int_equal(tc_model_parse("params=25.6M,layers=50,flops=6.3T", &m, &err), TC_OK);
    rel(m.params, 25.6e6, 1e-12, "custom params");
    rel(m.flops_iter, 6.3e12, 1e-12, "custom flops");
    assert_int_equal(m.layers, 50);
    near(tc_model_baseline_steps(&m, 64), 10000, "custom steps");
    for (size_t i = 0; i < tc_model_zoo_count(); i++) {
        char s[80];
        snprintf(s, sizeof s, "%s", tc_model_zoo_get(i)->name);
        assert_int_equal(tc_model_parse(s, &m, &err), TC_OK);
        assert_true(m.flops_iter > 0 && m.params > 0 && m.layers > 0 && m.train_samples > 0);
    }
    const char *bad[] = {"resnet51", "params=1M,layers=2", "params=x,layers=2,flops=1T", "params=1M,layers=2,flops=1T,foo=1",
                         "resnet50:batch=0", "params=1M,layers=0,flops=1T", "params=-1,layers=2,flops=1T",
                         "resnet50:mfu=2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = '\0';
        if (tc_model_parse(bad[i], &m, &err) != TC_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(err.msg[0] && !strchr(err.msg, '\n'));
    }
}

static tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err))
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

static tc_codec_spec codec(const char *s)
{
    tc_codec_spec c;
    tc_err err = {{0}};
    if (tc_codec_parse(s, &c, &err))
        fail_msg("%s: %s", s, err.msg);
    return c;
}

static tc_workload workload(const char *model, uint32_t workers)
{
    tc_workload w;
    memset(&w, 0, sizeof w);
    tc_err err = {{0}};
    if (tc_model_parse(model, &w.model, &err))
        fail_msg("%s: %s", model, err.msg);
    w.accel = tc_accel_find("h100");
    assert_non_null(w.accel);
    w.workers = workers;
    return w;
}

static tc_codec_iter iterate(const tc_topo *t, const tc_workload *w, const char *c, double Bps)
{
    tc_codec_spec cs = codec(c);
    tc_codec_iter it;
    tc_err err = {{0}};
    if (tc_workload_iteration(t, w, &cs, Bps, &it, &err))
        fail_msg("%s: %s", c, err.msg);
    return it;
}

static double coll(const tc_topo *t, tc_op op, uint32_t p, double bytes)
{
    tc_coll_req req = {.op = op, .algo = TC_ALGO_AUTO, .p = p, .bytes = bytes};
    tc_eval_opts o = {0};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err))
        fail_msg("%s", err.msg);
    return r.time_s;
}

/* Every bucket's network time is its codec's collectives through the
 * evaluator: batched PowerSGD's two all-reduces, FP32's one. Eight layers of
 * exactly 25 MiB make eight identical buckets. A custom model has no tensor
 * shapes: per-tensor PowerSGD takes each bucket as one matrix, the same two
 * all-reduces (its empty all-reduce of uncompressed tensors is not
 * launched). */
static void powersgd_pays_two_collectives(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=100Gbps");
    char m[96];
    snprintf(m, sizeof m, "params=%.0f,layers=8,flops=1T", 8 * TC_DDP_BUCKET_BYTES / 4);
    tc_workload w = workload(m, 64);
    tc_codec_spec ps = codec("powersgd-batched");
    tc_codec_wire wc;
    uint64_t d = (uint64_t)(TC_DDP_BUCKET_BYTES / 4);
    tc_codec_wire_cost(&ps, d, 64, &wc);
    assert_int_equal(wc.collectives, 2);
    const char *kinds[2] = {"powersgd-batched", "powersgd"};
    for (int k = 0; k < 2; k++) {
        tc_codec_iter it = iterate(t, &w, kinds[k], 0);
        assert_int_equal(it.nbuckets, 8);
        assert_int_equal(it.collectives, 2);
        rel(it.t.comm_s, 8 * (coll(t, wc.op, 64, wc.size[0]) + coll(t, wc.op, 64, wc.size[1])), 1e-12,
            "powersgd network");
        near(it.coll_bytes, 8 * (wc.size[0] + wc.size[1]), "powersgd bytes");
    }
    tc_codec_iter it;
    it = iterate(t, &w, "fp32", 0);
    rel(it.t.comm_s, 8 * coll(t, TC_OP_ALLREDUCE, 64, TC_DDP_BUCKET_BYTES), 1e-12, "fp32 network");
    near(it.t.codec_s, 0, "fp32 does no codec work");
    /* A throughput given overrides the roofline: 1 GB/s over 8 x 25 MiB. */
    it = iterate(t, &w, "bf16", 1e9);
    rel(it.t.codec_s, 8 * TC_DDP_BUCKET_BYTES / 1e9, 1e-12, "given throughput");
    tc_topo_free(t);
}

/* Per-tensor PowerSGD on ResNet-50 (the zoo's 161 tensors laid over the
 * equal-layer buckets, each bucket carrying its share of them): the
 * iteration's bytes are the model's, 4 (U + r (sum rows + sum cols)) with
 * U = 54,120 floats all-reduced as they are, sum rows = 27,560 and
 * sum cols = 54,931 (tests/test_powersgd.c), three all-reduces per bucket;
 * its first `start` steps cost an fp32 iteration, and compress charges
 * them so (tc_tta_phased_s). */
static void per_tensor_powersgd_carries_the_models_tensors(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=100Gbps");
    tc_workload w = workload("resnet50", 64);
    for (uint32_t r = 1; r <= 4; r *= 2) {
        char spec[64];
        snprintf(spec, sizeof spec, "powersgd:rank=%u", r);
        tc_codec_iter it = iterate(t, &w, spec, 0);
        rel(it.coll_bytes, 4 * (54120 + r * (27560.0 + 54931.0)), 1e-12, "per-tensor bytes");
        assert_int_equal(it.collectives, 3);
        assert_int_equal(it.plain_steps, 1000);
        near(it.plain_iter_s, iterate(t, &w, "fp32", 0).t.iter_s, "plain steps are fp32's");
        tc_codec_iter b = iterate(t, &w, "powersgd-batched:rank=1", 0);
        assert_true(b.coll_bytes < it.coll_bytes / 4);
    }
    tc_codec_iter z = iterate(t, &w, "powersgd:rank=2,start=0", 0);
    assert_int_equal(z.plain_steps, 0);
    near(z.plain_iter_s, 0, "no plain steps");
    /* 1,000 plain steps then the rest compressed; fewer steps: all plain */
    near(tc_tta_phased_s(3000, 1.0, 1000, 2.0), 1000 * 2.0 + 2000 * 1.0, "phased");
    near(tc_tta_phased_s(600, 1.0, 1000, 2.0), 600 * 2.0, "all plain");
    near(tc_tta_phased_s(600, 1.0, 0, 2.0), 600 * 1.0, "none plain");
    tc_topo_free(t);
}

/* TopK's index sets differ between workers, so it is all-gathered: what
 * every worker receives grows with the workers; an all-reduce does not. */
static void allgather_codec_cost_grows_with_workers(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=100Gbps");
    double prev_bytes = 0, prev_comm = 0, bf16_bytes = 0;
    uint32_t ns[] = {4, 16, 64};
    for (int i = 0; i < 3; i++) {
        tc_workload w = workload("resnet50", ns[i]);
        tc_codec_iter it = iterate(t, &w, "topk:ratio=0.01", 0);
        assert_int_equal(it.op, TC_OP_ALLGATHER);
        assert_true(it.coll_bytes > prev_bytes * 1.5);
        assert_true(it.t.comm_s > prev_comm);
        prev_bytes = it.coll_bytes;
        prev_comm = it.t.comm_s;
        tc_codec_iter b = iterate(t, &w, "bf16", 0);
        if (i)
            near(b.coll_bytes, bf16_bytes, "bf16 all-reduce size does not depend on workers");
        bf16_bytes = b.coll_bytes;
    }
    tc_topo_free(t);
}

/* Time to accuracy = iteration time x baseline steps x steps ratio; the
 * speedups are ratios of it, and BF16 against itself is 1. */
static void steps_ratio_carries_to_time_to_accuracy(void **state)
{
    (void)state;
    double iter[4] = {2.0, 1.2, 0.8, 0.5}; /* fp32, bf16, a codec, one that does not converge */
    double ratio[4] = {1, 1, 1.25, -1};
    tc_tta r[4];
    tc_tta_compute(iter, ratio, 4, 1000, 1, 0, r);
    near(r[1].speedup_bf16, 1, "bf16 vs itself");
    near(r[0].speedup_fp32, 1, "fp32 vs itself");
    near(r[2].tta_s, 0.8 * 1000 * 1.25, "tta");
    near(r[2].steps, 1250, "steps");
    near(r[2].speedup_bf16, 1.2 / (0.8 * 1.25), "speedup vs bf16");
    near(r[2].speedup_fp32, 2.0 / (0.8 * 1.25), "speedup vs fp32");
    near(r[1].speedup_fp32, 2.0 / 1.2, "bf16 vs fp32");
    assert_true(isnan(r[3].tta_s) && isnan(r[3].speedup_bf16));
    /* No bf16 row: no speedup against it. */
    tc_tta_compute(iter, ratio, 4, 1000, -1, 0, r);
    assert_true(isnan(r[2].speedup_bf16));
}

/* An interval on the steps ratio carries over to the time to accuracy and,
 * inverted, to the speedup over bf16; the verdict reads the speedup's
 * interval against 1 and nothing else. */
static void steps_ratio_interval_carries_to_the_speedup_and_the_verdict(void **state)
{
    (void)state;
    double iter[4] = {2.0, 1.2, 0.8, 0.5}; /* fp32, bf16, a codec, one with one seed */
    double ratio[4] = {1.1, 1, 1.25, 1.0}, lo[4] = {1.0, 1, 1.1, 0}, hi[4] = {1.2, 1, 1.6, INFINITY};
    tc_tta r[4];
    tc_tta_compute_ci(iter, ratio, lo, hi, 4, 1000, 1, 0, r);
    near(r[2].tta_lo_s, 0.8 * 1000 * 1.1, "tta lo");
    near(r[2].tta_hi_s, 0.8 * 1000 * 1.6, "tta hi");
    near(r[2].speedup_bf16, 1.2 / (0.8 * 1.25), "speedup");
    near(r[2].speedup_bf16_lo, 1.2 / (0.8 * 1.6), "speedup lo: from the ratio's upper end");
    near(r[2].speedup_bf16_hi, 1.2 / (0.8 * 1.1), "speedup hi: from the ratio's lower end");
    assert_true(r[1].speedup_bf16_lo == 1 && r[1].speedup_bf16_hi == 1);
    assert_true(r[3].speedup_bf16_lo == 0 && isinf(r[3].speedup_bf16_hi)); /* no interval: holds 1 */
    assert_int_equal(tc_verdict_of(r[2].speedup_bf16_lo, r[2].speedup_bf16_hi), TC_VERDICT_SAME); /* 0.94..1.36 */
    assert_int_equal(tc_verdict_of(r[3].speedup_bf16_lo, r[3].speedup_bf16_hi), TC_VERDICT_SAME);
    assert_int_equal(tc_verdict_of(r[0].speedup_bf16_lo, r[0].speedup_bf16_hi), TC_VERDICT_SLOWER);
    assert_int_equal(tc_verdict_of(1.0000001, 3), TC_VERDICT_FASTER);
    assert_int_equal(tc_verdict_of(0.2, 0.9999999), TC_VERDICT_SLOWER);
    assert_int_equal(tc_verdict_of(1, 1), TC_VERDICT_SAME);
    assert_int_equal(tc_verdict_of(NAN, NAN), TC_VERDICT_NEVER);
    assert_string_equal(tc_verdict_name(TC_VERDICT_SAME), "indistinguishable");
    /* Without intervals the ends are the point. */
    tc_tta_compute(iter, ratio, 4, 1000, 1, 0, r);
    assert_true(r[2].speedup_bf16_lo == r[2].speedup_bf16 && r[2].speedup_bf16_hi == r[2].speedup_bf16);
    assert_true(r[2].tta_lo_s == r[2].tta_s && r[2].tta_hi_s == r[2].tta_s);
}

/* Sweeping the fabric bandwidth: a compressing codec's advantage over BF16
 * shrinks as bandwidth grows, so its speedup is non-increasing and the
 * crossover separates the bandwidths where it wins from those where it
 * does not. */
static void sweep_crossover_is_monotone(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=400Gbps");
    tc_workload w = workload("resnet50", 64);
    double rates[8], sp[8], prev = INFINITY;
    size_t nr = tc_sweep_default_rates(rates);
    assert_int_equal(nr, 8);
    tc_err err = {{0}};
    for (size_t i = 0; i < nr; i++) {
        assert_int_equal(tc_topo_equalize_injection(t, rates[i], &err), TC_OK);
        tc_codec_iter b = iterate(t, &w, "bf16", 0), c = iterate(t, &w, "powersgd", 20e9);
        double it[2] = {b.t.iter_s, c.t.iter_s}, ratio[2] = {1, 1};
        tc_tta r[2];
        tc_tta_compute(it, ratio, 2, 1000, 0, -1, r);
        near(r[0].speedup_bf16, 1, "bf16 vs itself");
        sp[i] = r[1].speedup_bf16;
        assert_true(sp[i] <= prev * (1 + 1e-12));
        prev = sp[i];
    }
    double x = tc_crossover_bw(rates, sp, nr, 1.0);
    assert_true(sp[0] > 1);       /* 10 Gb/s: compression pays */
    assert_true(sp[nr - 1] <= 1); /* 1.6 Tb/s: it does not */
    assert_true(x > rates[0] && x < rates[nr - 1]);
    for (size_t i = 0; i < nr; i++)
        assert_true((rates[i] < x) == (sp[i] > 1));
    /* Hand cases of the interpolation. */
    double bw[3] = {1, 10, 100}, s1[3] = {2, 0.5, 0.2}, s2[3] = {2, 1.5, 1.1}, s3[3] = {0.9, 2, 2};
    near(tc_crossover_bw(bw, s1, 3, 1.0), sqrt(10), "log-log midpoint");
    /* With a margin: 2 -> 0.5 crosses 1.25 at 10^(log(1.6) / log(4)). */
    near(tc_crossover_bw(bw, s1, 3, 1.25), pow(10, log(1.6) / log(4)), "margin");
    assert_true(isinf(tc_crossover_bw(bw, s2, 3, 1.0)));
    near(tc_crossover_bw(bw, s2, 3, 1.2), 10 * pow(10, log(1.5 / 1.2) / log(1.5 / 1.1)), "margin at the top");
    near(tc_crossover_bw(bw, s3, 3, 1.0), 0, "loses at the lowest bandwidth");
    tc_topo_free(t);
}

/* Bad input to the iteration: workers beyond the endpoints. */
static void workers_beyond_endpoints_refused(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    tc_workload w = workload("resnet50", 65);
    tc_codec_spec c = codec("bf16");
    tc_codec_iter it;
    tc_err err = {{0}};
    assert_int_equal(tc_workload_iteration(t, &w, &c, 0, &it, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "64"));
    tc_topo_free(t);
}

/* ---- the direct simulation the timeline must reproduce -------------------
 * The first-come, first-served codec engine of workload.h written out as its
 * own event loop (it was the implementation of tc_iter_timeline before that
 * moved onto the general timeline); with no contention both must give the
 * same times for every bucket. */
/* An encoded bucket goes on the network when the previous one has left it. */
static void ref_launch(tc_iter_bucket *x, double t, double *net_free)
{
    x->enc_end = t;
    x->comm_start = t > *net_free ? t : *net_free;
    x->comm_end = x->comm_start + x->comm_s;
    *net_free = x->comm_end;
}

/*
 * The codec engine serves encode and decode tasks one at a time, in order of
 * arrival (an encode arrives when its bucket is ready, a decode when its
 * bucket's collectives end; ties: the decode first). Encodes arrive in
 * bucket order, and so do decodes (the network is FIFO), so two queues,
 * ne (encoded) <= nr (ready) and nd (decoded) <= ne, are the whole state.
 */
static void ref_on_accelerator(double fwd_s, double bwd_s, tc_iter_bucket *b, size_t n, double *bwd_end)
{
    double t = fwd_s, done = 0, net_free = 0;
    size_t nr = 0, ne = 0, nd = 0;
    *bwd_end = bwd_s > 0 ? NAN : fwd_s;
    for (;;) {
        while (nr < n && b[nr].ready_frac * bwd_s <= done) {
            b[nr].ready_at = t;
            nr++;
        }
        bool dec_ok = nd < ne && b[nd].comm_end <= t, enc_ok = ne < nr;
        if (dec_ok && (!enc_ok || b[nd].comm_end <= b[ne].ready_at)) {
            t += b[nd].dec_s;
            b[nd++].done_at = t;
            continue;
        }
        if (enc_ok) {
            t += b[ne].enc_s;
            ref_launch(&b[ne++], t, &net_free);
            continue;
        }
        if (done < bwd_s) {
            /* Backward work until the next bucket is ready or a decode arrives. */
            double target = nr < n ? b[nr].ready_frac * bwd_s : bwd_s;
            double next = nd < ne ? b[nd].comm_end : INFINITY;
            if (t + (target - done) <= next) {
                t += target - done;
                done = target;
            } else {
                done = fmin(done + (next - t), target);
                t = next;
            }
            if (done >= bwd_s)
                *bwd_end = t;
            continue;
        }
        if (nd == n)
            break;
        t = b[nd].comm_end; /* idle until the next decode can start */
    }
}

static void ref_offloaded(double fwd_s, double bwd_s, tc_iter_bucket *b, size_t n, double *bwd_end)
{
    double te = 0, net_free = 0;
    size_t ne = 0, nd = 0;
    for (size_t i = 0; i < n; i++)
        b[i].ready_at = fwd_s + b[i].ready_frac * bwd_s;
    *bwd_end = fwd_s + bwd_s;
    while (nd < n) {
        double enc_arr = ne < n ? b[ne].ready_at : INFINITY;
        double dec_arr = nd < ne ? b[nd].comm_end : INFINITY;
        if (dec_arr <= enc_arr) {
            te = fmax(te, dec_arr) + b[nd].dec_s;
            b[nd++].done_at = te;
        } else {
            te = fmax(te, enc_arr) + b[ne].enc_s;
            ref_launch(&b[ne++], te, &net_free);
        }
    }
}

static double urand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (double)((*seed >> 8) & 0xffff) / 65536.0;
}

/* A random duration: 0 a quarter of the time, small values that tie often. */
static double rdur(unsigned *seed)
{
    double u = urand(seed);
    return u < 0.25 ? 0 : u < 0.5 ? 0.25 * (1 + (int)(4 * urand(seed))) : 2 * urand(seed);
}

static void general_timeline_reproduces_direct_simulation(void **state)
{
    (void)state;
    unsigned seed = 7;
    for (int trial = 0; trial < 3000; trial++) {
        size_t n = 1 + (size_t)(12 * urand(&seed));
        tc_iter_bucket a[12], r[12];
        double frac = 0;
        for (size_t i = 0; i < n; i++) {
            if (urand(&seed) < 0.7)
                frac += (1 - frac) * urand(&seed) * 0.5;
            if (frac <= 0)
                frac = 0.125;
            memset(&a[i], 0, sizeof a[i]);
            a[i].bytes = 1;
            a[i].ready_frac = i + 1 == n && urand(&seed) < 0.5 ? 1 : frac;
            a[i].enc_s = rdur(&seed);
            a[i].dec_s = rdur(&seed);
            a[i].comm_s = rdur(&seed);
            frac = a[i].ready_frac;
        }
        double fwd = rdur(&seed), bwd = urand(&seed) < 0.1 ? 0 : 4 * urand(&seed) + 0.5;
        bool off = trial & 1;
        memcpy(r, a, sizeof a);
        tc_iter_time t = timeline(fwd, bwd, a, n, off);
        double bwd_end;
        if (off)
            ref_offloaded(fwd, bwd, r, n, &bwd_end);
        else
            ref_on_accelerator(fwd, bwd, r, n, &bwd_end);
        double iter = bwd_end;
        char what[64];
        for (size_t i = 0; i < n; i++) {
            iter = fmax(iter, r[i].done_at);
            snprintf(what, sizeof what, "trial %d bucket %zu ready", trial, i);
            rel(a[i].ready_at, r[i].ready_at, 1e-9, what);
            snprintf(what, sizeof what, "trial %d bucket %zu comm start", trial, i);
            rel(a[i].comm_start, r[i].comm_start, 1e-9, what);
            snprintf(what, sizeof what, "trial %d bucket %zu comm end", trial, i);
            rel(a[i].comm_end, r[i].comm_end, 1e-9, what);
            snprintf(what, sizeof what, "trial %d bucket %zu decoded", trial, i);
            rel(a[i].done_at, r[i].done_at, 1e-9, what);
        }
        snprintf(what, sizeof what, "trial %d backward end", trial);
        rel(t.bwd_end_s, bwd_end, 1e-9, what);
        snprintf(what, sizeof what, "trial %d iteration", trial);
        rel(t.iter_s, iter, 1e-9, what);
    }
}

/* Contention: fwd 1, bwd 2, bucket 0 ready at half the backward (t = 2)
 * with a 0.8 s collective, the last bucket empty. With s_c = 0.25 the
 * backward runs at 0.8 while the collective is in flight: by 2.8 it has
 * done 0.64 of its last second, and ends at 2.8 + 0.36 = 3.16; the serial
 * run is 1 + 2 + 0.8. */
static void contention_slows_backward_under_a_collective(void **state)
{
    (void)state;
    tc_iter_bucket b[2] = {{.bytes = 1, .ready_frac = 0.5, .comm_s = 0.8}, {.bytes = 1, .ready_frac = 1}};
    tc_tl_opts o = {.s_c = 0.25};
    tc_iter_time t;
    tc_err err = {{0}};
    assert_int_equal(tc_iter_timeline(1, 2, b, 2, false, &o, &t, &err), TC_OK);
    near(t.bwd_end_s, 3.16, "backward end");
    near(t.iter_s, 3.16, "iteration");
    near(t.serial_s, 3.8, "serial");
    near(t.slowdown_s, 0.16, "slowdown");
    /* offloaded codec work counts as copy-engine work: s_c_dma applies
     * while it runs (here: encode 0.5 of bucket 0 from 2 to 2.5) */
    b[0].comm_s = 0;
    b[0].enc_s = 0.5;
    tc_tl_opts od = {.s_c_dma = 0.25};
    assert_int_equal(tc_iter_timeline(1, 2, b, 2, true, &od, &t, &err), TC_OK);
    near(t.bwd_end_s, 3.1, "backward end beside an offloaded encode");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_bucket_is_exposed),
        cmocka_unit_test(communication_hidden_behind_backward),
        cmocka_unit_test(communication_exposed_and_serialized),
        cmocka_unit_test(codec_work_delays_compute),
        cmocka_unit_test(general_timeline_reproduces_direct_simulation),
        cmocka_unit_test(contention_slows_backward_under_a_collective),
        cmocka_unit_test(buckets_follow_ddp_assignment),
        cmocka_unit_test(transformer_buckets_are_ddp_tensor_buckets),
        cmocka_unit_test(models_parse),
        cmocka_unit_test(powersgd_pays_two_collectives),
        cmocka_unit_test(per_tensor_powersgd_carries_the_models_tensors),
        cmocka_unit_test(allgather_codec_cost_grows_with_workers),
        cmocka_unit_test(steps_ratio_carries_to_time_to_accuracy),
        cmocka_unit_test(steps_ratio_interval_carries_to_the_speedup_and_the_verdict),
        cmocka_unit_test(sweep_crossover_is_monotone),
        cmocka_unit_test(workers_beyond_endpoints_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
