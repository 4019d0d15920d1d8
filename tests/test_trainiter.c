/*
 * test_trainiter.c - one training iteration of a dp x tp x pp job
 * (include/topocc/trainiter.h; docs/MODEL.md, "Training: one iteration") on
 * hand-computed cases: DDP buckets with and without contention, the sum and
 * the max, 1F1B bubbles, FSDP against DDP traffic, TP collectives with and
 * without sequence parallelism, memory, MFU, bad input.
 *
 * The communication model is a fake: alpha + bytes x ring factor / bw (ring
 * factors 2(p-1)/p for all-reduce, (p-1)/p for all-gather and
 * reduce-scatter, 1 for a PP send), optionally 0 below a size; it records
 * every distinct call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/trainiter.h"

typedef struct call {
    tc_op op;
    tc_ti_group g;
    double bytes;
} call;

typedef struct fake {
    uint32_t dp, tp;
    double alpha, bw;
    double zero_below;   /* messages below this many bytes take no time */
    bool pp_free;        /* PP sends take no time */
    call calls[64];
    size_t ncalls;
} fake;

static tc_status fake_fn(void *ud, tc_op op, tc_ti_group g, double bytes, double *t, tc_err *err)
{
    (void)err;
    fake *f = ud;
    if (f->ncalls < 64)
        f->calls[f->ncalls++] = (call){op, g, bytes};
    double p = g == TC_TI_TP ? f->tp : g == TC_TI_EMB ? 2 : f->dp, factor = 1;
    if (g != TC_TI_PP)
        factor = op == TC_OP_ALLREDUCE ? 2 * (p - 1) / p : (p - 1) / p;
    *t = f->alpha + bytes * factor / f->bw;
    if (bytes < f->zero_below || (g == TC_TI_PP && f->pp_free))
        *t = 0;
    return TC_OK;
}

static void near(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(1, fmax(fabs(a), fabs(b)))))
        fail_msg("%s: %.15g, expected %.15g", what, a, b);
}

/* A tiny transformer: 2 layers, h = 4, FFN 8, 1 head, vocabulary 4, s = 4,
 * RMSNorm, no biases, untied. Per layer: norms 4 + 4, Q K V O 4 x 16, up and
 * down 2 x 32 = 136 parameters, 128 of them in matmuls; embedding 16; head:
 * final norm 4 + LM head 16 = 20. At b = 1, s = 4 a layer's forward is
 * b s (2 x 128 + 4 a d s) = 4 (256 + 64) = 1280 FLOPs, the head's 2 b s x 16
 * = 128; the embedding has none. With 1280 FLOP/s at achievable 1 and an
 * (effectively) unlimited memory bandwidth: F = 1 s, B = 2 s per layer,
 * head 0.1 s and 0.2 s, embedding and optimizer ~1e-28 s. Compute 6.3 s. */
static tc_zoo_model tiny(uint32_t layers, uint32_t heads)
{
    tc_zoo_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "tiny");
    m.arch = TC_MODEL_TRANSFORMER;
    m.layers = layers;
    m.hidden = 4;
    m.ffn = 8;
    m.heads = heads;
    m.kv_heads = heads;
    m.vocab = 4;
    m.seq = 4;
    m.experts = 1;
    m.top_k = 1;
    m.norm = TC_NORM_RMSNORM;
    m.source = "test";
    return m;
}

static const tc_ti_accel tiny_accel = {.flops = 1280, .mem_Bps = 1e30, .mem_bytes = 0, .achievable = 1};

static tc_ti_cfg cfg(uint32_t dp, uint32_t tp, uint32_t pp, uint32_t m, double s_c)
{
    tc_ti_cfg c;
    tc_ti_cfg_default(&c);
    c.dp = dp;
    c.tp = tp;
    c.pp = pp;
    c.micro_batches = m;
    c.contention.s_c = s_c;
    c.contention.s_m = 0;
    return c;
}

static void run(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, fake *f, tc_ti_result *r)
{
    tc_err err = {{0}};
    if (tc_ti_run(m, a, c, fake_fn, f, r, &err))
        fail_msg("tc_ti_run: %s", err.msg);
}

/* Two DDP buckets of 312 bytes cap (bf16 gradients, reverse order): the LM
 * head 32 + final norm 8 + layer 1's 272 = 312 reaches the cap: bucket A,
 * ready after layer 1's backward (t = 2.3 + 2 = 4.3); layer 0's 272 + the
 * embedding's 32 = 304: bucket B, ready after the embedding's backward
 * (t = 6.3). dp = 2, all-reduce factor 1, bw = 304 B/s: t_A = 312/304 =
 * 39/38 s, t_B = 1 s.
 * s_c = 0: A runs [4.3, 4.3 + 39/38] under layer 0's backward [4.3, 6.3];
 * B [6.3, 7.3] exposed. T = 7.3, serial 6.3 + 39/38 + 1, efficiency
 * (39/38) / (39/38 + 1) = 39/77.
 * s_c = 0.19: layer 0's backward runs at 1/1.19 while A is in flight: it
 * ends at 4.3 + 39/38 + (2 - (39/38)/1.19) = 6.3 + (39/38)(0.19/1.19),
 * and T = 7.3 + (39/38)(0.19/1.19). */
static void ddp_two_buckets_by_hand(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    fake f = {.dp = 2, .tp = 1, .bw = 304};
    tc_ti_cfg c = cfg(2, 1, 1, 1, 0);
    c.bucket_bytes = 312;
    c.first_bucket_bytes = 312;
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    double ta = 39.0 / 38.0;
    near(r.iter_s, 7.3, 1e-12, "iteration, s_c = 0");
    near(r.serial_s, 6.3 + ta + 1, 1e-12, "serial");
    near(r.compute_s, 6.3, 1e-12, "compute");
    near(r.exposed_s, 1, 1e-12, "exposed (bucket B)");
    near(r.efficiency, 39.0 / 77.0, 1e-12, "efficiency");
    near(r.dp.nominal_s, ta + 1, 1e-12, "DP nominal");
    near(r.dp.bytes, 616, 1e-12, "DP bytes");
    assert_int_equal(r.dp.count, 2);
    assert_int_equal(r.tp.count, 0);
    assert_int_equal(r.pp.count, 0);
    assert_int_equal(f.ncalls, 2);
    assert_int_equal(f.calls[0].op, TC_OP_ALLREDUCE);
    assert_int_equal(f.calls[0].g, TC_TI_DP);
    near(f.calls[0].bytes, 312, 0, "bucket A");
    near(f.calls[1].bytes, 304, 0, "bucket B");

    c.contention.s_c = 0.19;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 7.3 + ta * 0.19 / 1.19, 1e-12, "iteration, s_c = 0.19");
    near(r.serial_s, 6.3 + ta + 1, 1e-12, "serial, s_c = 0.19");
    near(r.slowdown, ta * 0.19 / 1.19 / 6.3, 1e-9, "compute slowdown");

    /* overlap off: the serial run */
    c.overlap = false;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 6.3 + ta + 1, 1e-12, "overlap off");
    near(r.exposed_s, ta + 1, 1e-12, "overlap off: all communication exposed");
}

/* One bucket (cap 1 GB): ready after the last backward, nothing can overlap:
 * T = 6.3 + 616/304 (the sum), efficiency 0. Two buckets where B takes no
 * time (messages below 310 bytes are free) and A (39/38 s) hides under
 * layer 0's 2 s backward with s_c = 0: T = 6.3 = max(compute, comm),
 * efficiency 1. */
static void no_overlap_gives_sum_perfect_overlap_gives_max(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    fake f = {.dp = 2, .tp = 1, .bw = 304};
    tc_ti_cfg c = cfg(2, 1, 1, 1, 0.19);
    c.bucket_bytes = 1e9;
    c.first_bucket_bytes = 1e9;
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 6.3 + 616.0 / 304.0, 1e-12, "sum");
    near(r.serial_s, r.iter_s, 1e-12, "sum = serial");
    near(r.efficiency, 0, 1e-12, "nothing hidden");
    assert_int_equal(r.dp.count, 1);

    f = (fake){.dp = 2, .tp = 1, .bw = 304, .zero_below = 310};
    c.bucket_bytes = 312;
    c.first_bucket_bytes = 312;
    c.contention.s_c = 0;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 6.3, 1e-12, "max");
    near(r.iter_s, fmax(r.compute_s, r.dp.nominal_s), 1e-12, "max(compute, comm)");
    near(r.exposed_s, 0, 1e-12, "nothing exposed");
    near(r.efficiency, 1, 1e-12, "all hidden");
}

/* 1F1B with equal stages and free sends: each stage is idle (p-1)/(m+p-1)
 * of the iteration ((p-1)/(v m + p - 1) interleaved). A wide model with a
 * one-word vocabulary keeps the head at 2e-5 of a stage (the only
 * inequality between stages), hence the 1e-4 tolerance. */
static void one_f_one_b_bubble_fraction(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(8, 32);
    m.hidden = 4096;
    m.ffn = 16384;
    m.vocab = 1;
    m.seq = 128;
    tc_ti_accel a = {.flops = 1e15, .mem_Bps = 1e30, .achievable = 0.5};
    const uint32_t ps[] = {2, 4}, ms[] = {4, 8};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++)
            for (uint32_t v = 1; v <= 2; v++) {
                uint32_t p = ps[i], mb = ms[j];
                fake f = {.dp = 1, .tp = 1, .bw = 1, .pp_free = true};
                tc_ti_cfg c = cfg(1, 1, p, mb, 0.19);
                c.virtual_stages = v;
                tc_ti_result r;
                run(&m, &a, &c, &f, &r);
                char what[64];
                snprintf(what, sizeof what, "bubble p=%u m=%u v=%u", p, mb, v);
                near(r.bubble_s / r.iter_s, (p - 1.0) / (v * mb + p - 1.0), 1e-4, what);
                assert_int_equal(r.pp.count, v * mb * (v > 1 ? 2 : 1) - (v > 1 ? mb : 0));
                near(r.pp.bytes, r.pp.count * 2.0 * 128 * 4096, 0, "PP bytes");
                assert_int_equal(f.ncalls, 1);
                assert_int_equal(f.calls[0].op, TC_OP_BROADCAST);
                assert_int_equal(f.calls[0].g, TC_TI_PP);
            }
}

/* Two stages (tiny model: embedding + layer 0 | layer 1 + head), m = 2,
 * sends of 32 bytes at 64 B/s = 0.5 s, s_c = 0. Stage 0: F 1, B 2; stage 1:
 * F 1.1, B 2.2. 1F1B: stage 0 warms up with one forward.
 *   S0: F0 [0,1], send [1,1.5]; F1 [1,2], send [2,2.5]
 *   S1: F0 [1.5,2.6], B0 [2.6,4.8], send [4.8,5.3]; F1 [4.8,5.9],
 *       B1 [5.9,8.1], send [8.1,8.6]
 *   S0: B0 [5.3,7.3], B1 [8.6,10.6].
 * T = 10.6; the busiest rank is stage 1 (compute 6.6): its sends 2 x 0.5 s,
 * the second exposed (0.5), idle 10.6 - 6.6 - 0.5 = 3.5. */
static void two_stage_pipeline_with_sends_by_hand(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    fake f = {.dp = 1, .tp = 1, .bw = 64};
    tc_ti_cfg c = cfg(1, 1, 2, 2, 0);
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 10.6, 1e-12, "iteration");
    near(r.compute_s, 6.6, 1e-12, "busiest compute");
    assert_int_equal(r.pp.count, 2);
    near(r.pp.nominal_s, 1.0, 1e-12, "PP nominal");
    near(r.pp.bytes, 64, 0, "PP bytes");
    near(r.exposed_s, 0.5, 1e-12, "exposed");
    near(r.bubble_s, 3.5, 1e-12, "bubble");
}

/* Traffic per rank per step, m = 1, dp = 4, 308 parameters, bf16 (2 bytes):
 * nccl-tests sizes (all-reduce and reduce-scatter: the whole buffer,
 * all-gather: the gathered output). DDP: all-reduces of 616 bytes in all;
 * a ring all-reduce puts 2(p-1)/p of its size on each rank's wire: 924.
 * FSDP: per unit an all-gather before the forward and before the backward
 * (2 x 616) and a reduce-scatter after the backward (616): 1848 bytes,
 * (p-1)/p of it on the wire: 1386 = 3/2 x 924. ZeRO-1: reduce-scatter 616 +
 * all-gather of the updated parameters 616, 924 on the wire: DDP's. */
static void fsdp_moves_three_halves_of_ddp(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    const double p = 4;
    tc_ti_result r0, r1, r3;
    fake f0 = {.dp = 4, .tp = 1, .bw = 100}, f1 = f0, f3 = f0;
    tc_ti_cfg c = cfg(4, 1, 1, 1, 0.19);
    run(&m, &tiny_accel, &c, &f0, &r0);
    c.zero = 1;
    run(&m, &tiny_accel, &c, &f1, &r1);
    c.zero = 3;
    run(&m, &tiny_accel, &c, &f3, &r3);
    near(r0.dp.bytes, 2 * 308, 0, "DDP sizes");
    near(r3.dp.bytes, 3 * 2 * 308, 0, "FSDP sizes");
    near(r1.dp.bytes, 2 * 2 * 308, 0, "ZeRO-1 sizes");
    double w0 = 2 * (p - 1) / p * r0.dp.bytes, w3 = (p - 1) / p * r3.dp.bytes, w1 = (p - 1) / p * r1.dp.bytes;
    near(w0, 924, 1e-15, "DDP wire");
    near(w3 / w0, 1.5, 1e-15, "FSDP / DDP wire");
    near(w1, w0, 1e-15, "ZeRO-1 wire = DDP's");
    /* the fake's time is wire bytes / bw: the nominal times keep the ratio */
    near(r3.dp.nominal_s / r0.dp.nominal_s, 1.5, 1e-12, "FSDP / DDP time");
    for (size_t i = 0; i < f0.ncalls; i++)
        assert_true(f0.calls[i].op == TC_OP_ALLREDUCE && f0.calls[i].g == TC_TI_DP);
    for (size_t i = 0; i < f3.ncalls; i++)
        assert_true((f3.calls[i].op == TC_OP_ALLGATHER || f3.calls[i].op == TC_OP_REDUCESCATTER) &&
                    f3.calls[i].g == TC_TI_DP);
    /* FSDP: 4 units (embedding, 2 layers, head), each gathered twice */
    assert_int_equal(r3.dp.count, 3 * 4);
}

/* fp32 gradients (grad_bytes 4, Megatron-LM's default for bf16 training):
 * the gradient collectives carry twice the bytes, the parameters' do not.
 * 308 parameters, dp = 4: DDP all-reduces 4 x 308 = 1232 bytes; ZeRO-1
 * reduce-scatters 1232 and all-gathers the 16-bit parameters, 616; FSDP
 * gathers 2 x 616 and reduce-scatters 1232. The gradients take 4 bytes a
 * parameter in memory (tc_mem_estimate's, twice the default's), and the
 * optimizer step moves 2 (2 + 4 + 12) = 36 bytes a parameter, not 32. */
static void fp32_gradients_double_the_gradient_bytes(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    tc_ti_accel a = tiny_accel;
    a.mem_Bps = 1000; /* an optimizer step that takes time */
    const double want[4] = {1232, 1848, 1848, 2464};
    for (int z = 0; z <= 3; z++) {
        tc_ti_result r2, r4;
        fake f2 = {.dp = 4, .tp = 1, .bw = 100}, f4 = f2;
        tc_ti_cfg c = cfg(4, 1, 1, 1, 0.19);
        c.zero = z;
        run(&m, &a, &c, &f2, &r2);
        c.grad_bytes = 2;
        tc_ti_result rd;
        fake fd = f2;
        run(&m, &a, &c, &fd, &rd);
        near(rd.iter_s, r2.iter_s, 0, "grad_bytes 2 is the default");
        c.grad_bytes = 4;
        run(&m, &a, &c, &f4, &r4);
        char what[64];
        snprintf(what, sizeof what, "ZeRO %d: gradient collectives in fp32", z);
        near(r4.dp.bytes, want[z], 0, what);
        for (size_t i = 0; i < f4.ncalls; i++)
            if (f4.calls[i].op == TC_OP_ALLGATHER) /* the parameters stay 16-bit */
                assert_true(f4.calls[i].bytes <= 2 * 308);
        near(r4.mem.grads, 2 * r2.mem.grads, 1e-15, "fp32 gradient memory");
        tc_mem_cfg mc = {.dp = 4, .zero = z, .grad_bytes = 4};
        tc_mem me;
        tc_err err = {{0}};
        if (tc_mem_estimate(&m, &mc, 0, &me, &err))
            fail_msg("tc_mem_estimate: %s", err.msg);
        near(r4.mem.grads, me.grads, 1e-15, "the estimate's");
        near(r4.optimizer_s / r2.optimizer_s, 36.0 / 32.0, 1e-12, "optimizer step");
    }
}

/* TP = 2 (2 heads), 2 layers, m = 3, b = 1, s = 4, h = 4: per layer and
 * micro-batch 2 all-reduces forward and 2 backward of 2 b s h = 32 bytes:
 * 4 x 2 x 3 = 24 of them, 768 bytes. With sequence parallelism each becomes
 * a reduce-scatter + all-gather pair of the same size: 48, 1536 bytes. */
static void tp_collectives_per_layer(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 2);
    fake f = {.dp = 1, .tp = 2, .bw = 1000};
    tc_ti_cfg c = cfg(1, 2, 1, 3, 0.19);
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    assert_int_equal(r.tp.count, 24);
    near(r.tp.bytes, 24 * 32, 0, "TP bytes");
    near(r.tp.nominal_s, 24 * 32 * 1.0 / 1000, 1e-12, "TP time");
    assert_int_equal(f.ncalls, 1);
    assert_int_equal(f.calls[0].op, TC_OP_ALLREDUCE);
    assert_int_equal(f.calls[0].g, TC_TI_TP);
    near(f.calls[0].bytes, 32, 0, "TP message");
    /* on the compute path: nothing overlaps it, the iteration is the sum */
    near(r.iter_s, r.compute_s + r.tp.nominal_s, 1e-12, "TP exposed");

    f = (fake){.dp = 1, .tp = 2, .bw = 1000};
    c.seq_parallel = true;
    run(&m, &tiny_accel, &c, &f, &r);
    assert_int_equal(r.tp.count, 48);
    near(r.tp.bytes, 48 * 32, 0, "TP+SP bytes");
    assert_int_equal(f.ncalls, 2);
    for (size_t i = 0; i < f.ncalls; i++) {
        assert_true(f.calls[i].op == TC_OP_ALLGATHER || f.calls[i].op == TC_OP_REDUCESCATTER);
        near(f.calls[i].bytes, 32, 0, "SP message");
    }

    /* full recomputation reruns each layer's forward in its backward, and
     * its 2 all-reduces with it: 6 per layer and micro-batch, 36 */
    f = (fake){.dp = 1, .tp = 2, .bw = 1000};
    c.seq_parallel = false;
    c.recompute = TC_RECOMPUTE_FULL;
    run(&m, &tiny_accel, &c, &f, &r);
    assert_int_equal(r.tp.count, 36);
    near(r.tp.bytes, 36 * 32, 0, "TP bytes, full recomputation");
}

/* Pipeline sends, TP = 2 on two stages (tiny: 2 heads, s = 4, h = 4), m = 2:
 * each TP rank sends the whole activation, 2 b s h = 32 bytes; with
 * sequence parallelism its own s / tp of the tokens, 16 bytes (Megatron-LM's
 * get_tensor_shapes: seq_length // tp). The busiest stage sends m = 2 of
 * them (forward or backward); at 64 B/s they take 0.5 s or 0.25 s each.
 * Compressed to int8 (one byte an element, plus its scale) the split send
 * carries half as many elements as the whole one. */
static void sequence_parallel_splits_pipeline_sends(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 2);
    for (int sp = 0; sp < 2; sp++) {
        fake f = {.dp = 1, .tp = 2, .bw = 64};
        tc_ti_cfg c = cfg(1, 2, 2, 2, 0);
        c.seq_parallel = sp;
        tc_ti_result r;
        run(&m, &tiny_accel, &c, &f, &r);
        double want = sp ? 16 : 32;
        size_t sends = 0;
        for (size_t i = 0; i < f.ncalls; i++)
            if (f.calls[i].g == TC_TI_PP) {
                near(f.calls[i].bytes, want, 0, sp ? "SP send" : "send");
                sends++;
            }
        assert_int_equal(sends, 1);
        assert_int_equal(r.pp.count, 2);
        near(r.pp.bytes, 2 * want, 0, "PP bytes");
        near(r.pp.nominal_s, 2 * want / 64, 1e-12, "PP time");
    }
    tc_err err = {{0}};
    tc_codec_spec int8;
    if (tc_codec_parse("int8", &int8, &err))
        fail_msg("int8: %s", err.msg);
    double sent[2];
    for (int sp = 0; sp < 2; sp++) {
        fake f = {.dp = 1, .tp = 2, .bw = 64};
        tc_ti_cfg c = cfg(1, 2, 2, 2, 0);
        c.seq_parallel = sp;
        c.codec[TC_TI_CODEC_PP] = &int8;
        tc_ti_result r;
        run(&m, &tiny_accel, &c, &f, &r);
        sent[sp] = r.pp.bytes / r.pp.count;
        near(sent[sp], tc_codec_send_bytes(&int8, sp ? 8 : 16), 0, "int8 send");
    }
    assert_true(sent[1] < sent[0]);
}

/* The memory of the iteration is tc_mem_estimate's for the same job. */
static void memory_is_the_estimate(void **state)
{
    (void)state;
    const tc_zoo_model *m = tc_zoo_find("llama3-8b");
    assert_non_null(m);
    tc_ti_accel a = {.flops = 989e12, .mem_Bps = 3.35e12, .mem_bytes = 80e9, .achievable = 0.6};
    tc_ti_cfg c = cfg(8, 1, 1, 1, 0.19);
    c.zero = 3;
    c.recompute = TC_RECOMPUTE_FULL;
    fake f = {.dp = 8, .tp = 1, .alpha = 20e-6, .bw = 50e9};
    tc_ti_result r;
    run(m, &a, &c, &f, &r);
    tc_mem_cfg mc = {.dp = 8, .tp = 1, .pp = 1, .zero = 3, .micro_batch = 1, .recompute = TC_RECOMPUTE_FULL};
    tc_mem mem;
    tc_err err = {{0}};
    assert_int_equal(tc_mem_estimate(m, &mc, 80e9, &mem, &err), TC_OK);
    near(r.mem.total, mem.total, 0, "total");
    near(r.mem.weights, mem.weights, 0, "weights");
    near(r.mem.activations, mem.activations, 0, "activations");
    assert_true(r.fits == mem.fits);
    assert_true(r.fits);
    /* FSDP traffic: 3 x 2 bytes x 8.03e9 parameters in nccl-tests sizes */
    near(r.dp.bytes, 3 * 2 * 8030261248.0, 1e-12, "FSDP bytes");
    assert_true(r.iter_s > r.compute_s * 0.999 && r.mfu > 0 && r.mfu < 0.6);
}

/* No communication (1 x 1 x 1), unlimited memory bandwidth: the iteration
 * is the modelled FLOPs at achievable x peak, so MFU = achievable x model
 * FLOPs / modelled FLOPs. Tiny model, m = 2: model FLOPs per sequence
 * (6 x 272 + 12 x 2 x 4 x 4) x 4 = 8064 = modelled without recomputation;
 * full recomputation adds a forward per layer (2 x 1280): 10624; selective
 * the attention scores 4 b s^2 a d = 256 per layer: 8576. */
static void mfu_compute_only_by_hand(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    tc_ti_accel a = {.flops = 1000, .mem_Bps = 1e30, .achievable = 0.5};
    tc_ti_cfg c = cfg(1, 1, 1, 2, 0.19);
    tc_ti_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_ti_run(&m, &a, &c, NULL, NULL, &r, &err), TC_OK);
    near(r.mfu, 0.5, 1e-12, "MFU, no recomputation");
    near(r.iter_s, 2 * 8064 / 500.0, 1e-12, "iteration");
    near(r.tokens_per_s, 8 / r.iter_s, 1e-12, "tokens/s");
    near(r.exposed_s, 0, 0, "nothing exposed");
    c.recompute = TC_RECOMPUTE_FULL;
    assert_int_equal(tc_ti_run(&m, &a, &c, NULL, NULL, &r, &err), TC_OK);
    near(r.mfu, 0.5 * 8064 / 10624, 1e-12, "MFU, full recomputation");
    c.recompute = TC_RECOMPUTE_SELECTIVE;
    assert_int_equal(tc_ti_run(&m, &a, &c, NULL, NULL, &r, &err), TC_OK);
    near(r.mfu, 0.5 * 8064 / 8576, 1e-12, "MFU, selective recomputation");

    /* a CNN: per-layer shares of the published multiply-adds */
    const tc_zoo_model *rn = tc_zoo_find("resnet50");
    c = cfg(1, 1, 1, 1, 0.19);
    c.micro_batch = 32;
    a.flops = 1e15;
    assert_int_equal(tc_ti_run(rn, &a, &c, NULL, NULL, &r, &err), TC_OK);
    near(r.mfu, 0.5, 1e-12, "CNN MFU");
    near(r.tokens_per_s, 32 / r.iter_s, 1e-12, "samples/s");
}

/* A CNN data-parallel with PyTorch's default buckets: every gradient
 * all-reduced once, the first bucket (last layers) capped at 1 MiB. */
static void cnn_ddp_default_buckets(void **state)
{
    (void)state;
    const tc_zoo_model *rn = tc_zoo_find("resnet50");
    tc_ti_accel a = {.flops = 989e12, .mem_Bps = 3.35e12, .achievable = 0.6};
    tc_ti_cfg c = cfg(8, 1, 1, 1, 0.19);
    c.micro_batch = 32;
    fake f = {.dp = 8, .tp = 1, .alpha = 20e-6, .bw = 50e9};
    tc_ti_result r;
    run(rn, &a, &c, &f, &r);
    near(r.dp.bytes, 2 * 25557032.0, 0, "all gradients, once");
    assert_true(r.dp.count >= 2 + (uint32_t)(2 * 25557032.0 / (25 * 1048576.0)));
    /* the first bucket filled (the classifier, 2 x 2,049,000 bytes > 1 MiB) */
    assert_int_equal(f.calls[0].op, TC_OP_ALLREDUCE);
    near(f.calls[0].bytes, 2 * 2049000.0, 0, "first bucket: the fc layer");
    assert_true(r.iter_s >= r.compute_s);
}

/* Expert parallelism on a tiny mixture of experts: 2 layers, 4 experts of
 * up 4x8 and down 8x4 (64 parameters each, 256 a layer), top 2; dense per
 * layer: norms 8, Q K V O 64, router 16 = 88; embedding 16, head 20.
 * dp 2, ep 2: each MoE layer exchanges b s top_k h 2 = 1 x 4 x 2 x 4 x 2 =
 * 64 bytes per all-to-all, 2 forward and 2 backward: 24 over 3
 * micro-batches. The experts' gradients are reduced over dp / ep = 1 rank
 * (none); the dense 212 parameters in one bucket over DP: 424 bytes. With
 * dp 4: the device's 2 x 128 expert parameters over EDP (2 ranks), 512
 * bytes. Memory: the device holds half the experts (weights 2 x (36 + 2 x
 * (88 + 128))), and ZeRO-1's optimizer state is the same with and without
 * EP (dense / dp + experts / ep / (dp / ep)). */
static void expert_parallelism_by_hand(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    m.experts = 4;
    m.top_k = 2;
    fake f = {.dp = 2, .tp = 1, .bw = 1000};
    tc_ti_cfg c = cfg(2, 1, 1, 3, 0);
    c.ep = 2;
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    assert_int_equal(r.ep.count, 24);
    near(r.ep.bytes, 24 * 64, 0, "EP bytes");
    bool dp_seen = false;
    for (size_t i = 0; i < f.ncalls; i++) {
        assert_true(f.calls[i].g != TC_TI_EDP);
        if (f.calls[i].g == TC_TI_EP) {
            assert_int_equal(f.calls[i].op, TC_OP_ALLTOALL);
            near(f.calls[i].bytes, 64, 0, "all-to-all");
        }
        if (f.calls[i].g == TC_TI_DP) {
            assert_int_equal(f.calls[i].op, TC_OP_ALLREDUCE);
            near(f.calls[i].bytes, 424, 0, "dense bucket");
            dp_seen = true;
        }
    }
    assert_true(dp_seen);
    near(r.mem.weights, 2 * (36 + 2 * (88 + 128)), 0, "weights with ep 2");
    /* the all-to-alls sit on the compute path: nothing hides them */
    near(r.iter_s, r.compute_s + r.ep.nominal_s + r.dp.nominal_s, 1e-9, "EP exposed");

    f = (fake){.dp = 4, .tp = 1, .bw = 1000};
    c = cfg(4, 1, 1, 3, 0);
    c.ep = 2;
    c.zero = 1;
    run(&m, &tiny_accel, &c, &f, &r);
    bool edp_seen = false;
    for (size_t i = 0; i < f.ncalls; i++)
        if (f.calls[i].g == TC_TI_EDP && f.calls[i].op == TC_OP_REDUCESCATTER) {
            near(f.calls[i].bytes, 512, 0, "expert bucket");
            edp_seen = true;
        }
    assert_true(edp_seen);
    double opt_ep = r.mem.optim;
    c.ep = 1;
    f = (fake){.dp = 4, .tp = 1, .bw = 1000};
    run(&m, &tiny_accel, &c, &f, &r);
    near(opt_ep, r.mem.optim, 1e-12, "ZeRO-1 optimizer state does not depend on ep");
    near(r.mem.optim, 12.0 * 724 / 4, 0, "ZeRO-1 optimizer state");
    assert_int_equal(r.ep.count, 0);

    /* capacity factor 1.25: every rank sends (and its experts compute)
     * 1.25 x its even share, padded: 80 bytes an all-to-all. Zipf 1,
     * dropless: shares 1, 1/2, 1/3, 1/4 of 25/12; rank 0 holds experts 1
     * and 2, 1.5 / (25/12) = 0.72 of the tokens against 0.5: 1.44 x, 92.16
     * bytes; its expert compute grows by the same factor. */
    c = cfg(2, 1, 1, 1, 0);
    c.ep = 2;
    f = (fake){.dp = 2, .tp = 1, .bw = 1000};
    run(&m, &tiny_accel, &c, &f, &r);
    double even = r.compute_s;
    for (int k = 0; k < 2; k++) {
        c = cfg(2, 1, 1, 1, 0);
        c.ep = 2;
        if (k == 0)
            c.capacity_factor = 1.25;
        else
            c.zipf = 1;
        f = (fake){.dp = 2, .tp = 1, .bw = 1000};
        run(&m, &tiny_accel, &c, &f, &r);
        for (size_t i = 0; i < f.ncalls; i++)
            if (f.calls[i].g == TC_TI_EP)
                near(f.calls[i].bytes, k == 0 ? 80 : 92.16, 1e-12, "skewed all-to-all");
        assert_true(r.compute_s > even);
    }
    c = cfg(2, 1, 1, 1, 0);
    c.ep = 2;
    c.zipf = -1;
    tc_err e2 = {{0}};
    assert_int_equal(tc_ti_run(&m, &tiny_accel, &c, fake_fn, &f, &r, &e2), TC_EINVAL);
    /* refused: ep not dividing the experts, or dp; a dense model */
    tc_err err = {{0}};
    c = cfg(4, 1, 1, 1, 0);
    c.ep = 3;
    assert_int_equal(tc_ti_run(&m, &tiny_accel, &c, fake_fn, &f, &r, &err), TC_EINVAL);
    c = cfg(2, 1, 1, 1, 0);
    c.ep = 4;
    assert_int_equal(tc_ti_run(&m, &tiny_accel, &c, fake_fn, &f, &r, &err), TC_EINVAL);
    tc_zoo_model dense = tiny(2, 1);
    c.ep = 2;
    assert_int_equal(tc_ti_run(&dense, &tiny_accel, &c, fake_fn, &f, &r, &err), TC_EINVAL);
}

/* Communication order, the DDP case above with slow buckets (bw 100 B/s:
 * A 3.12 s, ready at 4.3; B 3.04 s, ready at 6.3), s_c = 0.
 * Backward order: A [4.3, 7.42], B [7.42, 10.46], the optimizer (~0) and
 * the next forward at 10.46: the iteration is 10.46.
 * Forward order: B carries the embedding and layer 0, which the next
 * forward needs first: at 6.3 it preempts A (2 of its 3.12 s done):
 * B [6.3, 9.34] and its update; A resumes [9.34, 10.46]. The next forward
 * runs the embedding and layer 0 from 9.34 (to 10.34), waits for A's update
 * at 10.46, then layer 1 and the head (to 11.56): it could have started
 * without stalling at 11.56 - 2.1 = 9.46, the iteration. */
static void forward_order_overlaps_the_next_forward(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    fake f = {.dp = 2, .tp = 1, .bw = 100};
    tc_ti_cfg c = cfg(2, 1, 1, 1, 0);
    c.bucket_bytes = 312;
    c.first_bucket_bytes = 312;
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 10.46, 1e-9, "backward order");
    c.comm_order = TC_TI_FORWARD_ORDER;
    f = (fake){.dp = 2, .tp = 1, .bw = 100};
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, 9.46, 1e-9, "forward order");
    /* the look-ahead's compute [9.34, 10.34] hides part of A; the period is
     * compute 6.3 + exposed (6.16 of collectives - 2 under the backward - 1
     * under the look-ahead) = 9.46: no bubble */
    near(r.exposed_s, 3.16, 1e-9, "forward order exposed");
    near(r.bubble_s, 0, 1e-9, "forward order bubble");
    near(r.dp.nominal_s, 3.12 + 3.04, 1e-9, "the same traffic");
    /* when the buckets hide, the order does not matter */
    c.comm_order = TC_TI_BACKWARD_ORDER;
    f = (fake){.dp = 2, .tp = 1, .bw = 1e6};
    run(&m, &tiny_accel, &c, &f, &r);
    double fast = r.iter_s;
    c.comm_order = TC_TI_FORWARD_ORDER;
    f = (fake){.dp = 2, .tp = 1, .bw = 1e6};
    run(&m, &tiny_accel, &c, &f, &r);
    near(r.iter_s, fast, 1e-9, "hidden buckets");
}

/* A tied embedding on two stages: its copies' gradients (V h / tp = 16
 * elements, 32 bytes) are all-reduced between the first and the last stage
 * (Megatron-LM's embedding group) once, after the last backward, before
 * the optimizer: one more DP-class collective on each of the two ranks. */
static void tied_embedding_allreduce(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1);
    m.tied_embeddings = true;
    fake f = {.dp = 1, .tp = 1, .bw = 100, .pp_free = true};
    tc_ti_cfg c = cfg(1, 1, 2, 2, 0);
    tc_ti_result r;
    run(&m, &tiny_accel, &c, &f, &r);
    size_t emb = 0;
    for (size_t i = 0; i < f.ncalls; i++)
        if (f.calls[i].g == TC_TI_EMB) {
            assert_int_equal(f.calls[i].op, TC_OP_ALLREDUCE);
            near(f.calls[i].bytes, 32, 0, "embedding gradients");
            emb++;
        }
    assert_int_equal(emb, 1);
    assert_int_equal(r.dp.count, 1);
    near(r.dp.nominal_s, 32 / 100.0, 1e-12, "one all-reduce of 32 bytes, factor 1");
    /* untied: none */
    m.tied_embeddings = false;
    f = (fake){.dp = 1, .tp = 1, .bw = 100, .pp_free = true};
    run(&m, &tiny_accel, &c, &f, &r);
    assert_int_equal(r.dp.count, 0);
}

/* ---- the flow hook (tc_ti_flow) with a model that ends each
 * communication after the time comm_fn gives it: the same iteration as
 * without the hook, on pipelines, ZeRO 1 and 3, sequence parallelism. */
typedef struct fake_net {
    fake *f;
    uint32_t task[4096];
    double end[4096];
    size_t n, starts;
} fake_net;

static tc_status fn_begin(void *ud, bool serial, tc_err *err)
{
    (void)serial;
    (void)err;
    ((fake_net *)ud)->n = 0;
    return TC_OK;
}

static tc_status fn_start(void *ud, uint32_t task, tc_op op, tc_ti_group g, double bytes, uint32_t stage, bool up,
                          double t, tc_err *err)
{
    (void)stage;
    (void)up;
    fake_net *k = ud;
    double d = 0;
    tc_status st = fake_fn(k->f, op, g, bytes, &d, err);
    k->task[k->n] = task;
    k->end[k->n++] = t + d;
    k->starts++;
    return st;
}

static tc_status fn_run(void *ud, double until, uint32_t *done, size_t cap, size_t *nd, double *now, tc_err *err)
{
    (void)err;
    fake_net *k = ud;
    *nd = 0;
    double m = INFINITY;
    for (size_t i = 0; i < k->n; i++)
        m = fmin(m, k->end[i]);
    if (!(m <= until)) {
        *now = until;
        return TC_OK;
    }
    *now = m;
    for (size_t i = 0; i < k->n && *nd < cap;)
        if (k->end[i] <= m) {
            done[(*nd)++] = k->task[i];
            k->task[i] = k->task[--k->n];
            k->end[i] = k->end[k->n];
        } else {
            i++;
        }
    return TC_OK;
}

static void flow_hook_with_nominal_times_changes_nothing(void **state)
{
    (void)state;
    const struct {
        uint32_t dp, tp, pp, m;
        int zero;
        bool sp;
    } cases[] = {{2, 1, 1, 2, 0, false}, {2, 2, 2, 4, 1, true}, {2, 1, 2, 2, 3, false}, {1, 2, 2, 4, 0, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_zoo_model m = tiny(2, 2);
        m.tied_embeddings = i == 1;
        tc_ti_cfg c = cfg(cases[i].dp, cases[i].tp, cases[i].pp, cases[i].m, 0.19);
        c.zero = cases[i].zero;
        c.seq_parallel = cases[i].sp;
        fake f = {.dp = cases[i].dp, .tp = cases[i].tp, .bw = 300, .alpha = 0.01};
        tc_ti_result a, b;
        run(&m, &tiny_accel, &c, &f, &a);
        fake_net k = {.f = &f};
        tc_ti_flow fl = {.ud = &k, .begin = fn_begin, .start = fn_start, .run = fn_run};
        c.flow = &fl;
        run(&m, &tiny_accel, &c, &f, &b);
        assert_true(k.starts > 0);
        char what[48];
        snprintf(what, sizeof what, "case %zu iteration", i);
        near(b.iter_s, a.iter_s, 1e-9, what);
        snprintf(what, sizeof what, "case %zu serial", i);
        near(b.serial_s, a.serial_s, 1e-9, what);
        snprintf(what, sizeof what, "case %zu exposed", i);
        near(b.exposed_s, a.exposed_s, 1e-9, what);
    }
}

static void expect_groups(const tc_ti_group order[3], uint32_t dp, uint32_t tp, uint32_t pp, uint32_t ep,
                          tc_ti_group g, const uint32_t *want, uint32_t n, uint32_t size)
{
    uint32_t got[64], sz = 0;
    tc_err err = {{0}};
    if (tc_ti_group_members(order, dp, tp, pp, ep, g, got, &sz, &err))
        fail_msg("groups: %s", err.msg);
    assert_int_equal(sz, size);
    for (uint32_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("group kind %d, member %u: %u, expected %u", (int)g, i, got[i], want[i]);
}

/* Megatron-LM's docstring example (megatron/core/parallel_state.py,
 * initialize_model_parallel): 16 GPUs, tp 2, pp 4 (dp 2) in its default
 * order give TP groups [g0, g1], [g2, g3], ...; DP groups [g0, g2],
 * [g1, g3], [g4, g6], ...; pipeline groups [g0, g4, g8, g12], ... (here:
 * the first send, 0 -> 4). With order tp-pp-dp, DP strides by tp pp. EP
 * and EDP split each DP group's coordinate as e + ep f. */
static void groups_follow_the_order(void **state)
{
    (void)state;
    tc_ti_group mg[3];
    assert_true(tc_par_order_parse("tp-dp-pp", mg));
    const uint32_t tp[] = {0, 1, 2, 3, 4, 5}, dp[] = {0, 2, 1, 3, 4, 6, 5, 7}, pp[] = {0, 4};
    expect_groups(mg, 2, 2, 4, 1, TC_TI_TP, tp, 6, 2);
    expect_groups(mg, 2, 2, 4, 1, TC_TI_DP, dp, 8, 2);
    expect_groups(mg, 2, 2, 4, 1, TC_TI_PP, pp, 2, 2);
    const uint32_t emb[] = {0, 12, 1, 13, 2, 14, 3, 15}; /* first and last stage (+12) */
    expect_groups(mg, 2, 2, 4, 1, TC_TI_EMB, emb, 8, 2);
    tc_ti_group o2[3];
    assert_true(tc_par_order_parse("tp-pp-dp", o2));
    const uint32_t dp2[] = {0, 8, 1, 9, 2, 10}, pp2[] = {0, 2};
    expect_groups(o2, 2, 2, 4, 1, TC_TI_DP, dp2, 6, 2);
    expect_groups(o2, 2, 2, 4, 1, TC_TI_PP, pp2, 2, 2);
    /* dp 4 = ep 2 x edp 2, tp 2, pp 2, tp-dp-pp: rank = t + 2 d + 8 p;
     * EP {d = 0, 1}: {0, 2}, {4, 6} (f = 1), then tp 1: {1, 3}, {5, 7};
     * EDP {d = e, e + 2}: {0, 4}, {2, 6}, {1, 5}, {3, 7} */
    const uint32_t ep[] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10}, edp[] = {0, 4, 2, 6, 1, 5, 3, 7, 8, 12};
    expect_groups(mg, 4, 2, 2, 2, TC_TI_EP, ep, 10, 2);
    expect_groups(mg, 4, 2, 2, 2, TC_TI_EDP, edp, 10, 2);
    /* every kind partitions the ranks */
    for (int g = TC_TI_TP; g <= TC_TI_EDP; g++) {
        if (g == TC_TI_PP)
            continue;
        uint32_t got[16], sz = 0;
        tc_err err = {{0}};
        assert_int_equal(tc_ti_group_members(mg, 4, 2, 2, 2, (tc_ti_group)g, got, &sz, &err), TC_OK);
        uint32_t seen = 0;
        for (int i = 0; i < 16; i++)
            seen |= 1u << got[i];
        assert_int_equal(seen, 0xffff);
    }
    assert_false(tc_par_order_parse("tp-dp", mg));
    assert_false(tc_par_order_parse("tp-tp-pp", mg));
    assert_false(tc_par_order_parse("tp-dp-pp-", mg));
    assert_false(tc_par_order_parse("dp_tp_pp", mg));
}

/* The breakdown adds up: the busiest rank's nominal compute, its compute
 * slowdown, exposed communication and bubble are the iteration (its
 * period), on DDP and ZeRO 1-3, both communication orders, pipelines
 * (plain and interleaved), TP with and without sequence parallelism,
 * contention on and off, overlap on and off; nothing is negative, and with
 * one stage there is no bubble. Forward order used to count the exposed
 * communication of the whole run against the shorter period (parts above
 * the iteration). */
static void breakdown_adds_up(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(8, 2);
    const uint32_t pps[] = {1, 2, 4};
    size_t checked = 0;
    for (int zero = 0; zero <= 3; zero++)
        for (int order = 0; order < 2; order++)
            for (size_t ip = 0; ip < 3; ip++)
                for (uint32_t v = 1; v <= (pps[ip] > 1 ? 2u : 1u); v++)
                    for (int sp = 0; sp < 2; sp++)
                        for (int ov = 0; ov < 2; ov++)
                            for (int sc = 0; sc < 2; sc++) {
                                uint32_t pp = pps[ip];
                                fake f = {.dp = 2, .tp = 2, .alpha = 0.01, .bw = 100};
                                tc_ti_cfg c = cfg(2, 2, pp, 4, sc ? 0.19 : 0);
                                c.contention.s_m = sc ? 0.3 : 0;
                                c.zero = zero;
                                c.comm_order = order ? TC_TI_FORWARD_ORDER : TC_TI_BACKWARD_ORDER;
                                c.virtual_stages = v;
                                c.seq_parallel = sp;
                                c.overlap = ov;
                                c.bucket_bytes = 200;
                                c.first_bucket_bytes = 200;
                                tc_ti_result r;
                                run(&m, &tiny_accel, &c, &f, &r);
                                char what[96];
                                snprintf(what, sizeof what, "ZeRO %d %s pp %u v %u sp %d overlap %d s_c %d", zero,
                                         order ? "forward" : "backward", pp, v, sp, ov, sc);
                                double sum = r.compute_s + r.slowdown_s + r.exposed_s + r.bubble_s;
                                if (!(fabs(sum - r.iter_s) <= 1e-9 * r.iter_s))
                                    fail_msg("%s: compute %.9g + slowdown %.9g + exposed %.9g + bubble %.9g = %.9g, "
                                             "iteration %.9g", what, r.compute_s, r.slowdown_s, r.exposed_s,
                                             r.bubble_s, sum, r.iter_s);
                                if (r.slowdown_s < 0 || r.exposed_s < 0 || r.bubble_s < 0)
                                    fail_msg("%s: a negative part", what);
                                if (pp == 1 && r.bubble_s != 0)
                                    fail_msg("%s: a bubble of %.9g on one stage", what, r.bubble_s);
                                if (!ov && r.slowdown_s != 0)
                                    fail_msg("%s: a slowdown without overlap", what);
                                if (!sc && r.slowdown_s != 0)
                                    fail_msg("%s: a slowdown without contention", what);
                                near(r.slowdown, r.compute_s > 0 ? r.slowdown_s / r.compute_s : 0, 1e-12, what);
                                checked++;
                            }
    assert_int_equal(checked, 4 * 2 * (1 + 2 + 2) * 2 * 2 * 2);
}

/* The breakdown over pseudo-random layouts with an optimizer step that takes
 * time (the breakdown test above has none): dp, tp, pp, virtual stages,
 * micro-batches, ZeRO, order, overlap and s_c drawn from a fixed-seed
 * generator. The slowdown is never negative and exactly 0 at s_c = 0, and
 * the parts add up to the iteration. Interleaved pipelines in forward order
 * used to update the buckets of a rank's later virtual stages after its
 * look-ahead, outside the period: folded into it they overlapped other
 * compute, and the slowdown came out negative (the bubble larger by as
 * much). */
static void breakdown_over_random_layouts(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(8, 2);
    tc_ti_accel a = tiny_accel;
    a.mem_Bps = 3000; /* the optimizer step: 32 bytes a parameter, ~1.5 s a layer */
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t forward_interleaved = 0;
    for (int it = 0; it < 160; it++) {
        uint32_t draw[8];
        for (int i = 0; i < 8; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            draw[i] = (uint32_t)(seed >> 33);
        }
        const uint32_t pps[] = {1, 2, 4};
        uint32_t dp = 1u << (draw[0] % 3), tp = 1u << (draw[1] % 2), pp = pps[draw[2] % 3];
        uint32_t v = pp > 1 ? 1 + draw[3] % 2 : 1;
        uint32_t mb = pp * (1 + draw[4] % 2);
        int zero = (int)(draw[5] % 4);
        bool fwd = draw[6] & 1, ov = (draw[6] >> 1) % 4 != 0, sc0 = (draw[6] >> 3) % 3 == 0;
        double s_c = sc0 ? 0 : 0.05 + (draw[7] % 100) / 200.0;
        if (it < 8) { /* the reported layouts first: interleaved, forward order, s_c = 0 */
            v = 2;
            pp = it & 1 ? 4 : 2;
            mb = 2 * pp;
            fwd = true;
            ov = true;
            s_c = 0;
            dp = it & 2 ? 1 : 4;
            tp = it & 4 ? 2 : 1;
            zero = 0;
        }
        fake f = {.dp = dp, .tp = tp, .alpha = 0.01, .bw = 100};
        tc_ti_cfg c = cfg(dp, tp, pp, mb, s_c);
        c.zero = zero;
        c.comm_order = fwd ? TC_TI_FORWARD_ORDER : TC_TI_BACKWARD_ORDER;
        c.virtual_stages = v;
        c.overlap = ov;
        c.bucket_bytes = 300;
        c.first_bucket_bytes = 300;
        tc_ti_result r;
        run(&m, &a, &c, &f, &r);
        char what[128];
        snprintf(what, sizeof what, "dp %u tp %u pp %u v %u m %u ZeRO %d %s overlap %d s_c %g", dp, tp, pp, v, mb,
                 zero, fwd ? "forward" : "backward", ov, s_c);
        if (r.slowdown_s < 0 || r.slowdown < 0)
            fail_msg("%s: a negative slowdown %.9g", what, r.slowdown_s);
        if (s_c == 0 && r.slowdown_s != 0)
            fail_msg("%s: a slowdown of %.9g without contention", what, r.slowdown_s);
        if (r.exposed_s < 0 || r.bubble_s < 0)
            fail_msg("%s: a negative part", what);
        double sum = r.compute_s + r.slowdown_s + r.exposed_s + r.bubble_s;
        if (!(fabs(sum - r.iter_s) <= 1e-9 * r.iter_s))
            fail_msg("%s: compute %.9g + slowdown %.9g + exposed %.9g + bubble %.9g = %.9g, iteration %.9g", what,
                     r.compute_s, r.slowdown_s, r.exposed_s, r.bubble_s, sum, r.iter_s);
        if (!(r.optimizer_s > 0))
            fail_msg("%s: no optimizer time", what);
        forward_interleaved += fwd && v > 1 && ov;
    }
    assert_true(forward_interleaved >= 8);
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    tc_zoo_model m = tiny(2, 1), m8 = tiny(8, 1);
    fake f = {.dp = 2, .tp = 2, .bw = 1};
    tc_ti_result r;
    typedef struct bad {
        const tc_zoo_model *m;
        tc_ti_cfg c;
        const char *needle;
    } bad;
    bad cases[12];
    size_t n = 0;
    cases[n] = (bad){&m, cfg(0, 1, 1, 1, 0), "at least 1"};
    n++;
    cases[n] = (bad){&m, cfg(1, 2, 1, 1, 0), "divide"};
    n++;
    cases[n] = (bad){&m, cfg(1, 1, 3, 3, 0), "exceeds"};
    n++;
    cases[n] = (bad){&m8, cfg(1, 1, 2, 3, 0), "multiple"};
    cases[n].c.virtual_stages = 2;
    n++;
    cases[n] = (bad){&m, cfg(1, 1, 1, 1, 0), "ZeRO"};
    cases[n].c.zero = 4;
    n++;
    cases[n] = (bad){tc_zoo_find("resnet50"), cfg(1, 2, 1, 1, 0), "data-parallel only"};
    n++;
    cases[n] = (bad){tc_zoo_find("resnet50"), cfg(1, 1, 2, 1, 0), "data-parallel only"};
    n++;
    cases[n] = (bad){&m, cfg(1, 1, 1, 0, 0), "micro-batch"};
    n++;
    for (size_t i = 0; i < n; i++) {
        tc_err err = {{0}};
        assert_int_equal(tc_ti_run(cases[i].m, &tiny_accel, &cases[i].c, fake_fn, &f, &r, &err), TC_EINVAL);
        if (!strstr(err.msg, cases[i].needle) || strchr(err.msg, '\n'))
            fail_msg("case %zu: '%s' (expected one line with '%s')", i, err.msg, cases[i].needle);
    }
    /* an accelerator without peak or with achievable above 1 */
    tc_err err = {{0}};
    tc_ti_cfg c = cfg(1, 1, 1, 1, 0);
    tc_ti_accel a = tiny_accel;
    a.achievable = 1.5;
    assert_int_equal(tc_ti_run(&m, &a, &c, fake_fn, &f, &r, &err), TC_EINVAL);
    a = tiny_accel;
    a.flops = 0;
    assert_int_equal(tc_ti_run(&m, &a, &c, fake_fn, &f, &r, &err), TC_EINVAL);
    /* communication needed, no model given */
    c = cfg(2, 1, 1, 1, 0);
    assert_int_equal(tc_ti_run(&m, &tiny_accel, &c, NULL, NULL, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "communication model"));
    assert_string_equal(tc_ti_group_name(TC_TI_TP), "tp");
    assert_string_equal(tc_ti_group_name(TC_TI_DP), "dp");
    assert_string_equal(tc_ti_group_name(TC_TI_PP), "pp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ddp_two_buckets_by_hand),
        cmocka_unit_test(no_overlap_gives_sum_perfect_overlap_gives_max),
        cmocka_unit_test(one_f_one_b_bubble_fraction),
        cmocka_unit_test(two_stage_pipeline_with_sends_by_hand),
        cmocka_unit_test(fsdp_moves_three_halves_of_ddp),
        cmocka_unit_test(fp32_gradients_double_the_gradient_bytes),
        cmocka_unit_test(tp_collectives_per_layer),
        cmocka_unit_test(sequence_parallel_splits_pipeline_sends),
        cmocka_unit_test(memory_is_the_estimate),
        cmocka_unit_test(mfu_compute_only_by_hand),
        cmocka_unit_test(cnn_ddp_default_buckets),
        cmocka_unit_test(expert_parallelism_by_hand),
        cmocka_unit_test(groups_follow_the_order),
        cmocka_unit_test(forward_order_overlaps_the_next_forward),
        cmocka_unit_test(tied_embedding_allreduce),
        cmocka_unit_test(flow_hook_with_nominal_times_changes_nothing),
        cmocka_unit_test(breakdown_adds_up),
        cmocka_unit_test(breakdown_over_random_layouts),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
