/*
 * test_timeline.c - the general iteration timeline (include/topocc/timeline.h;
 * docs/MODEL.md, "Training: the iteration timeline") on hand-computed
 * cases: overlap, contention only while the other kind is in flight, the
 * reported figures, the serial run, 1F1B bubbles, and random DAGs against
 * an independent longest-path computation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/timeline.h"

static void near(double a, double b, const char *what)
{
    if (!(fabs(a - b) <= 1e-12 * fmax(1, fmax(fabs(a), fabs(b)))))
        fail_msg("%s: %.15g, expected %.15g", what, a, b);
}

static tc_tl_opts opts(double s_c, double s_m)
{
    tc_tl_opts o = {.s_c = s_c, .s_m = s_m, .policy = TC_TL_IN_ORDER};
    return o;
}

static void run(tc_tl_dag *d, const tc_tl_opts *o, tc_tl_result *r)
{
    tc_err err = {{0}};
    if (tc_tl_run(d, o, r, &err))
        fail_msg("tc_tl_run: %s", err.msg);
    /* The identity every rank satisfies. */
    for (uint32_t k = 0; k < r->nranks; k++) {
        const tc_tl_rank *x = &r->rank[k];
        if (!(fabs(x->compute_busy_s + x->exposed_s + x->idle_s - r->iter_s) <= 1e-9 * fmax(1, r->iter_s)))
            fail_msg("rank %u: busy %g + exposed %g + idle %g != iteration %g", k, x->compute_busy_s, x->exposed_s,
                     x->idle_s, r->iter_s);
    }
}

static uint32_t comp(tc_tl_dag *d, double dur, const char *name)
{
    return tc_tl_add(d, TC_TL_COMPUTE, 0, 0, dur, name);
}

static uint32_t comm(tc_tl_dag *d, uint32_t stream, double dur, const char *name)
{
    return tc_tl_add(d, TC_TL_COMM, 0, stream, dur, name);
}

/* A two-layer model, two buckets: forward F1 F2 (1 s each), backward B2 B1
 * (2 s each); bucket A (layer 2's gradients, 1.5 s) is ready after B2,
 * bucket B (layer 1's, 1 s) after B1; one DP stream.
 * s_c = 0: F1 [0,1] F2 [1,2] B2 [2,4] B1 [4,6]; A [4,5.5] under B1;
 * B [6,7] exposed. Iteration 7, compute 6, communication 2.5, exposed 1;
 * serial 6 + 2.5 = 8.5; efficiency (8.5 - 7) / (8.5 - 6) = 0.6.
 * s_c = 0.19: B1 runs at 1/1.19 while A is in flight, [4, 5.5], doing
 * 1.5/1.19 of its 2 s, then the rest at full speed: B1 ends at
 * 5.5 + 2 - 1.5/1.19 = 6.2394957..., B at 7.2394957...; the slowdown is
 * 1.5 - 1.5/1.19 = 1.5 * 0.19/1.19; the serial run is unchanged (8.5). */
static void two_layers_two_buckets(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        double s_c = c ? 0.19 : 0;
        tc_tl_dag d;
        tc_tl_init(&d);
        uint32_t f1 = comp(&d, 1, "F1"), f2 = comp(&d, 1, "F2"), b2 = comp(&d, 2, "B2"), b1 = comp(&d, 2, "B1");
        uint32_t ba = comm(&d, 0, 1.5, "bucketA"), bb = comm(&d, 0, 1, "bucketB");
        tc_tl_dep(&d, f2, f1);
        tc_tl_dep(&d, b2, f2);
        tc_tl_dep(&d, b1, b2);
        tc_tl_dep(&d, ba, b2);
        tc_tl_dep(&d, bb, b1);
        tc_tl_opts o = opts(s_c, 0);
        tc_tl_result r;
        run(&d, &o, &r);
        double slow = 1.5 - 1.5 / 1.19;
        near(d.task[ba].start_s, 4, "bucket A start");
        near(d.task[ba].end_s, 5.5, "bucket A end");
        near(d.task[b1].end_s, c ? 7.5 - 1.5 / 1.19 : 6, "B1 end");
        near(d.task[bb].start_s, d.task[b1].end_s, "bucket B start");
        near(r.iter_s, c ? 8.5 - 1.5 / 1.19 : 7, "iteration");
        near(r.compute_s, 6, "compute");
        near(r.comm_s, 2.5, "communication");
        near(r.compute_busy_s, c ? 6 + slow : 6, "compute busy");
        near(r.slowdown_s, c ? slow : 0, "slowdown");
        near(r.slowdown, c ? slow / 6 : 0, "slowdown factor");
        near(r.exposed_s, 1, "exposed");
        near(r.rank[0].overlap_s, 1.5, "overlap");
        near(r.rank[0].idle_s, 0, "idle");
        near(r.serial_s, 8.5, "serial");
        near(d.task[ba].serial_start_s, 6, "serial: bucket A after all compute");
        near(d.task[bb].serial_end_s, 8.5, "serial: bucket B last");
        near(r.efficiency, c ? (1.5 / 1.19) / 2.5 : 0.6, "efficiency");
        tc_tl_result_free(&r);
        tc_tl_free(&d);
    }
}

/* Communication that depends on all compute: C1 (3) C2 (2) then M (4).
 * Nothing can overlap: 9 = 5 + 4 whatever s_c; efficiency 0. */
static void no_overlap_is_the_sum(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t c1 = comp(&d, 3, "C1"), c2 = comp(&d, 2, "C2"), m = comm(&d, 0, 4, "M");
    tc_tl_dep(&d, m, c1);
    tc_tl_dep(&d, m, c2);
    tc_tl_opts o = opts(0.19, 0.5);
    tc_tl_result r;
    run(&d, &o, &r);
    near(r.iter_s, 9, "iteration");
    near(r.serial_s, 9, "serial");
    near(r.exposed_s, 4, "exposed");
    near(r.slowdown_s, 0, "no slowdown");
    near(r.efficiency, 0, "efficiency");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* Independent compute (5) and communication (3 or 7), s_c = 0: the
 * iteration is the larger; efficiency 1. */
static void perfect_overlap_is_the_max(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        double m = c ? 7 : 3;
        tc_tl_dag d;
        tc_tl_init(&d);
        comp(&d, 5, "C");
        comm(&d, 0, m, "M");
        tc_tl_opts o = opts(0, 0);
        tc_tl_result r;
        run(&d, &o, &r);
        near(r.iter_s, fmax(5, m), "iteration");
        near(r.serial_s, 5 + m, "serial");
        near(r.efficiency, 1, "efficiency");
        near(r.exposed_s, c ? 2 : 0, "exposed");
        tc_tl_result_free(&r);
        tc_tl_free(&d);
    }
}

/* Contention only while communication is in flight, s_c = 0.19:
 * C1 (1) then C2 (4); M1 (1) from 0; M2 (0.5) after C1, on the same stream.
 * [0,1]: C1 at 1/1.19 with M1, done 1/1.19; M1 ends at 1. Gap: C1's rest,
 * 0.19/1.19, at full speed: C1 ends at e = 1 + 0.19/1.19. M2 [e, e+0.5]
 * slows C2 for 0.5 s: C2 ends at e + 4 + 0.5 * 0.19/1.19. */
static void contention_only_while_in_flight(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t c1 = comp(&d, 1, "C1"), c2 = comp(&d, 4, "C2"), m1 = comm(&d, 0, 1, "M1"), m2 = comm(&d, 0, 0.5, "M2");
    tc_tl_dep(&d, m2, c1);
    tc_tl_opts o = opts(0.19, 0);
    tc_tl_result r;
    run(&d, &o, &r);
    double e = 1 + 0.19 / 1.19;
    near(d.task[m1].end_s, 1, "M1 end");
    near(d.task[c1].end_s, e, "C1 end");
    near(d.task[m2].start_s, e, "M2 start");
    near(d.task[m2].end_s, e + 0.5, "M2 end");
    near(d.task[c2].end_s, e + 4 + 0.5 * 0.19 / 1.19, "C2 end");
    near(r.slowdown_s, 1.5 * 0.19 / 1.19, "slowdown");
    near(r.exposed_s, 0, "exposed");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* s_m = 1, s_c = 0: C (2) and M (3) from 0; M runs at 1/2 while C runs,
 * does 1 s of work by t = 2, then 2 s alone: ends at 4. M2 (1) after C on
 * another stream... runs from 2 alongside M, not alongside compute: full
 * speed, [2, 3]. Then C3 (1) after M: [4, 5], and M3 (2) after C3 alone:
 * [5, 7]. */
static void s_m_only_while_compute_runs(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t c = comp(&d, 2, "C"), m = comm(&d, 0, 3, "M"), m2 = comm(&d, 1, 1, "M2");
    uint32_t c3 = comp(&d, 1, "C3"), m3 = comm(&d, 0, 2, "M3");
    tc_tl_dep(&d, m2, c);
    tc_tl_dep(&d, c3, m);
    tc_tl_dep(&d, m3, c3);
    tc_tl_opts o = opts(0, 1);
    tc_tl_result r;
    run(&d, &o, &r);
    near(d.task[c].end_s, 2, "C end");
    near(d.task[m].end_s, 4, "M end");
    near(d.task[m2].start_s, 2, "M2 start");
    near(d.task[m2].end_s, 3, "M2 end");
    near(d.task[c3].end_s, 5, "C3 end");
    near(d.task[m3].end_s, 7, "M3 end");
    near(r.iter_s, 7, "iteration");
    near(r.slowdown_s, 0, "compute not slowed");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* Copy-engine communication has its own factors; with both kinds in
 * flight the larger compute factor applies.
 * (a) s_c_dma = 0.5, s_m_dma = 1: C (2), M dma (1): M at 1/2 ends at 2; C
 * at 1/1.5 has done 4/3 by then, ends at 2 + 2/3.
 * (b) s_c = 0.19, s_c_dma = 0.05: C (2), M (1) on stream 0, M' dma (1) on
 * stream 1: C at 1/1.19 over [0,1], ends at 3 - 1/1.19. */
static void copy_engine_factors(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t c = comp(&d, 2, "C"), m = comm(&d, 0, 1, "M");
    d.task[m].dma = true;
    tc_tl_opts o = opts(0.19, 0.3);
    o.s_c_dma = 0.5;
    o.s_m_dma = 1;
    tc_tl_result r;
    run(&d, &o, &r);
    near(d.task[m].end_s, 2, "dma M end");
    near(d.task[c].end_s, 2 + 2.0 / 3, "C end");
    tc_tl_result_free(&r);
    tc_tl_free(&d);

    tc_tl_init(&d);
    c = comp(&d, 2, "C");
    comm(&d, 0, 1, "M");
    m = comm(&d, 1, 1, "Mdma");
    d.task[m].dma = true;
    o = opts(0.19, 0);
    o.s_c_dma = 0.05;
    run(&d, &o, &r);
    near(d.task[c].end_s, 3 - 1 / 1.19, "C end, both kinds");
    tc_tl_result_free(&r);
    tc_tl_free(&d);

    /* The defaults. */
    tc_tl_opts_default(&o);
    near(o.s_c, 0.19, "default s_c");
    near(o.s_m, 0, "default s_m");
    near(o.s_c_dma, 0.054, "default s_c_dma");
    assert_int_equal(o.policy, TC_TL_IN_ORDER);
}

/* No communication: efficiency 1 and the iteration is the compute.
 * s_c = s_m = 3, C (1) and M (1) together: both at 1/4, both end at 4;
 * serial 2; efficiency (2 - 4) / (2 - 1) = -2. */
static void efficiency_one_and_negative(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    comp(&d, 1, "C1");
    comp(&d, 2, "C2");
    tc_tl_result r;
    run(&d, NULL, &r);
    near(r.iter_s, 3, "iteration");
    near(r.serial_s, 3, "serial");
    near(r.efficiency, 1, "efficiency without communication");
    tc_tl_result_free(&r);
    tc_tl_free(&d);

    tc_tl_init(&d);
    comp(&d, 1, "C");
    comm(&d, 0, 1, "M");
    tc_tl_opts o = opts(3, 3);
    run(&d, &o, &r);
    near(r.iter_s, 4, "iteration");
    near(r.serial_s, 2, "serial");
    near(r.efficiency, -2, "efficiency");
    near(r.slowdown, 3, "slowdown factor");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* Priorities reorder a stream; in-order streams block on their head;
 * ready-first streams take the first ready task. */
static void stream_order_and_priority(void **state)
{
    (void)state;
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t c = comp(&d, 2, "C"), a = comm(&d, 0, 1, "A"), b = comm(&d, 0, 1, "B");
    tc_tl_dep(&d, a, c); /* A waits for C; B is ready at 0 */
    tc_tl_opts o = opts(0, 0);
    tc_tl_result r;
    run(&d, &o, &r);
    near(d.task[a].start_s, 2, "in order: A at 2");
    near(d.task[b].start_s, 3, "in order: B behind A");
    tc_tl_result_free(&r);
    o.policy = TC_TL_READY_FIRST;
    run(&d, &o, &r);
    near(d.task[b].start_s, 0, "ready first: B at 0");
    near(d.task[a].start_s, 2, "ready first: A at 2");
    tc_tl_result_free(&r);
    o.policy = TC_TL_IN_ORDER;
    d.task[b].prio = -1;
    run(&d, &o, &r);
    near(d.task[b].start_s, 0, "priority: B first");
    near(d.task[a].start_s, 2, "priority: A at 2");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* TC_TL_PRIORITY and preemption, one rank. A (2 s, prio 1, preemptible)
 * runs from 0; a collective C (0.5 s) makes D (1 s, prio 0) ready at 0.5:
 * A pauses, D runs [0.5, 1.5], A resumes with its 1.5 s left and ends at
 * 3. Not preemptible, A runs [0, 2] and D [2, 3]. Two tasks of equal prio
 * are served in the order they became ready, whatever their index: while G
 * (3 s) runs, E (ready at 1, after C2 of 1 s) and F (ready at 2, after C3
 * of 2 s on
 * another stream), though F's index is lower; TC_TL_READY_FIRST takes F. */
static void priority_policy_and_preemption(void **state)
{
    (void)state;
    for (int pre = 0; pre < 2; pre++) {
        tc_tl_dag d;
        tc_tl_init(&d);
        uint32_t a = comp(&d, 2, "A"), c = comm(&d, 0, 0.5, "C"), dd = comp(&d, 1, "D");
        d.task[a].prio = 1;
        d.task[a].preempt = pre;
        tc_tl_dep(&d, dd, c);
        tc_tl_opts o = opts(0, 0);
        o.policy = TC_TL_PRIORITY;
        tc_tl_result r;
        run(&d, &o, &r);
        near(d.task[a].start_s, 0, "A start");
        near(d.task[dd].start_s, pre ? 0.5 : 2, "D start");
        near(d.task[a].end_s, pre ? 3 : 2, "A end");
        near(r.iter_s, 3, "iteration");
        /* with contention the paused work keeps its progress: s_c = 1
         * halves A's rate while C runs, so by 0.5 it has done 0.25 and
         * ends at 1.5 + 1.75 */
        if (pre) {
            o.s_c = 1;
            tc_tl_result_free(&r);
            run(&d, &o, &r);
            near(d.task[a].end_s, 3.25, "A end under contention");
        }
        tc_tl_result_free(&r);
        tc_tl_free(&d);
    }
    /* a stream's own policy overrides the run's; a probe task runs but is
     * in no figure */
    {
        tc_tl_dag d;
        tc_tl_init(&d);
        comp(&d, 3, "G");
        uint32_t f = comp(&d, 1, "F"), e = comp(&d, 1, "E");
        uint32_t c2 = comm(&d, 0, 1, "C2"), c3 = comm(&d, 1, 2, "C3");
        tc_tl_dep(&d, e, c2);
        tc_tl_dep(&d, f, c3);
        d.task[e].stream_policy = 1 + TC_TL_PRIORITY;
        uint32_t pr = comp(&d, 5, "probe");
        d.task[pr].probe = true;
        d.task[pr].prio = 1;
        tc_tl_opts o = opts(0, 0); /* in order: F would block E */
        tc_tl_result r;
        run(&d, &o, &r);
        near(d.task[e].start_s, 3, "E under the stream's own priority policy");
        near(d.task[pr].end_s, 10, "the probe runs");
        near(r.iter_s, 5, "but ends no figure");
        near(r.compute_s, 5, "nor counts as compute");
        tc_tl_result_free(&r);
        d.task[f].stream_policy = 1 + TC_TL_IN_ORDER;
        tc_err err = {{0}};
        assert_int_equal(tc_tl_run(&d, &o, &r, &err), TC_EINVAL); /* disagreeing policies */
        tc_tl_free(&d);
    }
    /* G (3 s) holds the stream while E and F become ready */
    for (int pol = 0; pol < 2; pol++) {
        tc_tl_dag d;
        tc_tl_init(&d);
        comp(&d, 3, "G");
        uint32_t f = comp(&d, 1, "F"), e = comp(&d, 1, "E");
        uint32_t c2 = comm(&d, 0, 1, "C2"), c3 = comm(&d, 1, 2, "C3");
        tc_tl_dep(&d, e, c2);
        tc_tl_dep(&d, f, c3);
        tc_tl_opts o = opts(0, 0);
        o.policy = pol ? TC_TL_READY_FIRST : TC_TL_PRIORITY;
        tc_tl_result r;
        run(&d, &o, &r);
        near(d.task[e].start_s, pol ? 4 : 3, "E");
        near(d.task[f].start_s, pol ? 3 : 4, "F");
        tc_tl_result_free(&r);
        tc_tl_free(&d);
    }
}

static void expect_fail(tc_tl_dag *d, const tc_tl_opts *o, const char *what)
{
    tc_tl_result r;
    tc_err err = {{0}};
    if (tc_tl_run(d, o, &r, &err) != TC_EINVAL)
        fail_msg("%s: expected TC_EINVAL", what);
    assert_non_null(strstr(err.msg, "")); /* a message */
    assert_true(strlen(err.msg) > 0);
    assert_null(r.rank);
}

static void bad_input(void **state)
{
    (void)state;
    tc_tl_opts o = opts(0, 0);
    tc_tl_dag d;
    /* A cycle. */
    tc_tl_init(&d);
    uint32_t a = comp(&d, 1, "A"), b = comm(&d, 0, 1, "B");
    tc_tl_dep(&d, a, b);
    tc_tl_dep(&d, b, a);
    expect_fail(&d, &o, "cycle");
    tc_tl_free(&d);
    /* An in-order head waiting on a task behind it; fine ready-first. */
    tc_tl_init(&d);
    a = comm(&d, 0, 1, "A");
    b = comm(&d, 0, 1, "B");
    tc_tl_dep(&d, a, b);
    expect_fail(&d, &o, "head of line");
    o.policy = TC_TL_READY_FIRST;
    tc_tl_result r;
    run(&d, &o, &r);
    near(d.task[a].start_s, 1, "ready first runs B then A");
    tc_tl_result_free(&r);
    o.policy = TC_TL_IN_ORDER;
    tc_tl_free(&d);
    /* A bad index, a negative duration, a bad factor, dma on compute. */
    tc_tl_init(&d);
    comp(&d, 1, "A");
    tc_tl_dep(&d, 0, 5);
    expect_fail(&d, &o, "bad index");
    tc_tl_free(&d);
    tc_tl_init(&d);
    comp(&d, -1, "A");
    expect_fail(&d, &o, "negative duration");
    tc_tl_free(&d);
    tc_tl_init(&d);
    comp(&d, 1, "A");
    tc_tl_opts bad = opts(-0.1, 0);
    expect_fail(&d, &bad, "negative s_c");
    d.task[0].dma = true;
    expect_fail(&d, &o, "dma compute");
    tc_tl_free(&d);
    /* Empty: nothing to do. */
    tc_tl_init(&d);
    run(&d, &o, &r);
    near(r.iter_s, 0, "empty");
    near(r.efficiency, 1, "empty efficiency");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* Two stages, one micro-batch, sends of s: F [0,1] on rank 0, its send
 * [1, 1+s] (rank 0 idle: no contention), F [1+s, 2+s] and B [2+s, 4+s] on
 * rank 1, the gradient send [4+s, 4+2s] on rank 1, B [4+2s, 6+2s] on rank
 * 0: 6 + 2s, with or without s_c (contention is per rank). */
static void pipeline_with_sends(void **state)
{
    (void)state;
    double s = 0.25;
    for (int c = 0; c < 2; c++) {
        tc_tl_dag d;
        tc_tl_init(&d);
        tc_tl_pipe pp = {.stages = 2, .micro = 1, .fwd_s = 1, .bwd_s = 2, .send_s = s, .stream = 3};
        uint32_t idx[4];
        tc_err err = {{0}};
        if (tc_tl_pipeline_1f1b(&d, &pp, idx, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(d.n, 6);
        tc_tl_opts o = opts(c ? 0.19 : 0, 0);
        tc_tl_result r;
        run(&d, &o, &r);
        near(d.task[idx[2]].start_s, 1 + s, "F on stage 1");
        near(d.task[idx[3]].end_s, 4 + s, "B on stage 1");
        near(d.task[idx[1]].start_s, 4 + 2 * s, "B on stage 0");
        near(r.iter_s, 6 + 2 * s, "iteration");
        near(r.slowdown_s, 0, "no slowdown");
        near(r.serial_s, 6 + 2 * s, "serial");
        tc_tl_result_free(&r);
        tc_tl_free(&d);
    }
}

/* The serial run sends as soon as it can: the pipeline above, plus on
 * stage 1 an optimizer step (1.5 s, after its B) and a gradient bucket (1 s,
 * after its B), both issued after the gradient send. The send (another rank
 * waits on it) goes first, [4+s, 4+2s], then compute before communication:
 * the optimizer [4+2s, 5.5+2s], the bucket [5.5+2s, 6.5+2s]; stage 0's B
 * [4+2s, 6+2s]: serial 6.5 + 2s. (Compute first would have held the send
 * behind the optimizer: B on stage 0 at 5.5+2s, serial 7.5 + 2s.) */
static void serial_sends_first(void **state)
{
    (void)state;
    double s = 0.25;
    tc_tl_dag d;
    tc_tl_init(&d);
    tc_tl_pipe pp = {.stages = 2, .micro = 1, .fwd_s = 1, .bwd_s = 2, .send_s = s, .stream = 3};
    uint32_t idx[4];
    tc_err err = {{0}};
    if (tc_tl_pipeline_1f1b(&d, &pp, idx, &err))
        fail_msg("%s", err.msg);
    uint32_t opt = tc_tl_add(&d, TC_TL_COMPUTE, 1, 0, 1.5, "optimizer");
    uint32_t bk = tc_tl_add(&d, TC_TL_COMM, 1, 1, 1, "bucket");
    tc_tl_dep(&d, opt, idx[3]);
    tc_tl_dep(&d, bk, idx[3]);
    uint32_t send = UINT32_MAX;
    for (uint32_t i = 0; i < d.n; i++)
        if (d.task[i].kind == TC_TL_COMM && d.task[i].rank == 1 && d.task[i].stream == 3)
            send = i;
    assert_true(send != UINT32_MAX);
    tc_tl_opts o = opts(0, 0);
    tc_tl_result r;
    run(&d, &o, &r);
    near(d.task[send].serial_start_s, 4 + s, "serial: the gradient send as soon as B ends");
    near(d.task[opt].serial_start_s, 4 + 2 * s, "serial: the optimizer after the send");
    near(d.task[bk].serial_start_s, 5.5 + 2 * s, "serial: the bucket after the compute");
    near(d.task[idx[1]].serial_end_s, 6 + 2 * s, "serial: B on stage 0");
    near(r.serial_s, 6.5 + 2 * s, "serial");
    near(r.iter_s, 6 + 2 * s, "iteration");
    tc_tl_result_free(&r);
    tc_tl_free(&d);
}

/* 1F1B with equal stages and no send: every rank is idle
 * (p-1)/(m+p-1) of the iteration (Narayanan et al., SC'21, section 2.2:
 * bubble (p-1)(t_f+t_b) against m(t_f+t_b) of work). */
static void one_f_one_b_bubble(void **state)
{
    (void)state;
    const uint32_t ps[] = {2, 4, 8}, ms[] = {1, 4, 8, 32};
    const double tb[] = {1, 2};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 2; c++) {
                uint32_t p = ps[a], m = ms[b];
                tc_tl_dag d;
                tc_tl_init(&d);
                tc_tl_pipe pp = {.stages = p, .micro = m, .fwd_s = 1, .bwd_s = tb[c], .rank0 = 2};
                tc_err err = {{0}};
                if (tc_tl_pipeline_1f1b(&d, &pp, NULL, &err))
                    fail_msg("%s", err.msg);
                tc_tl_result r;
                run(&d, NULL, &r);
                double w = 1 + tb[c], bubble = (double)(p - 1) / (m + p - 1);
                char what[64];
                snprintf(what, sizeof what, "p=%u m=%u tb=%g iteration", p, m, tb[c]);
                near(r.iter_s, (m + p - 1) * w, what);
                assert_int_equal(r.nranks, p + 2);
                for (uint32_t k = 2; k < p + 2; k++) {
                    snprintf(what, sizeof what, "p=%u m=%u tb=%g rank %u bubble", p, m, tb[c], k);
                    near(r.rank[k].idle_s / r.iter_s, bubble, what);
                    near(r.rank[k].compute_busy_s, m * w, "stage busy");
                }
                tc_tl_result_free(&r);
                tc_tl_free(&d);
            }
}

/* Interleaved 1F1B with v chunks: the bubble shrinks to (p-1)(t_f+t_b)/v
 * (Narayanan et al., SC'21, section 2.2.2): idle (p-1)/(v m + p - 1). */
static void interleaved_bubble(void **state)
{
    (void)state;
    const uint32_t ps[] = {2, 4, 8}, ms[] = {4, 8, 16, 32}, vs[] = {2, 4};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 4; c++) {
                uint32_t p = ps[a], m = ms[b], v = vs[c % 2];
                double tb = c < 2 ? 2 : 1, w = 1 + tb;
                if (m % p)
                    continue;
                tc_tl_dag d;
                tc_tl_init(&d);
                tc_tl_pipe pp = {.stages = p, .micro = m, .chunks = v, .fwd_s = 1, .bwd_s = tb};
                uint32_t *idx = calloc((size_t)2 * m * v * p, sizeof *idx);
                tc_err err = {{0}};
                if (tc_tl_pipeline_1f1b(&d, &pp, idx, &err))
                    fail_msg("%s", err.msg);
                assert_int_equal(d.n, 2 * m * v * p);
                tc_tl_result r;
                run(&d, NULL, &r);
                char what[64];
                snprintf(what, sizeof what, "p=%u m=%u v=%u tb=%g iteration", p, m, v, tb);
                near(r.iter_s, m * w + (p - 1) * w / v, what);
                for (uint32_t k = 0; k < p; k++)
                    near(r.rank[k].idle_s / r.iter_s, (p - 1.0) / (v * m + p - 1.0), "interleaved bubble");
                /* idx: forward before backward of every (virtual stage, micro-batch). */
                for (size_t i = 0; i < (size_t)m * v * p; i++)
                    assert_true(d.task[idx[2 * i]].end_s <= d.task[idx[2 * i + 1]].start_s);
                free(idx);
                tc_tl_result_free(&r);
                tc_tl_free(&d);
            }
    /* m not a multiple of p. */
    tc_tl_dag d;
    tc_tl_init(&d);
    tc_tl_pipe pp = {.stages = 4, .micro = 6, .chunks = 2, .fwd_s = 1, .bwd_s = 2};
    tc_err err = {{0}};
    assert_int_equal(tc_tl_pipeline_1f1b(&d, &pp, NULL, &err), TC_EINVAL);
    tc_tl_free(&d);
}

/* ---- random DAGs --------------------------------------------------------- */

static uint64_t rng_state;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A random DAG: dependencies on lower indices only, so index order is
 * topological and in-order streams never block on a later task. */
static void random_dag(tc_tl_dag *d, uint32_t n, uint32_t ranks)
{
    tc_tl_init(d);
    for (uint32_t i = 0; i < n; i++) {
        bool c = urand() < 0.55;
        uint32_t r = (uint32_t)(urand() * ranks);
        uint32_t st = c ? 0 : (uint32_t)(urand() * 3);
        double dur = urand() < 0.05 ? 0 : 0.1 + urand() * 2;
        uint32_t t = tc_tl_add(d, c ? TC_TL_COMPUTE : TC_TL_COMM, r, st, dur, NULL);
        if (!c && urand() < 0.3)
            d->task[t].dma = true;
        uint32_t k = i ? (uint32_t)(urand() * 3) : 0;
        for (uint32_t j = 0; j < k; j++)
            tc_tl_dep(d, t, (uint32_t)(urand() * i));
    }
}

/* With no contention and in-order streams the overlapped run is as soon as
 * possible: end = start + dur, start = max(ends of its dependencies and of
 * the previous task of its stream). Index order is topological here. */
static double asap(const tc_tl_dag *d, double *cp)
{
    size_t n = d->n;
    double *e = calloc(n ? n : 1, sizeof *e), *pe = calloc(n ? n : 1, sizeof *pe), mk = 0;
    *cp = 0;
    for (size_t i = 0; i < n; i++) {
        const tc_tl_task *t = &d->task[i];
        double s = 0, ps = 0;
        for (uint32_t k = 0; k < t->ndeps; k++) {
            s = fmax(s, e[t->deps[k]]);
            ps = fmax(ps, pe[t->deps[k]]);
        }
        for (size_t j = i; j-- > 0;) {
            const tc_tl_task *u = &d->task[j];
            if (u->rank == t->rank && u->kind == t->kind && (t->kind == TC_TL_COMPUTE || u->stream == t->stream)) {
                s = fmax(s, e[j]);
                break;
            }
        }
        e[i] = s + t->dur_s;
        pe[i] = ps + t->dur_s; /* dependencies only: the critical path */
        mk = fmax(mk, e[i]);
        *cp = fmax(*cp, pe[i]);
    }
    free(e);
    free(pe);
    return mk;
}

static void random_dags(void **state)
{
    (void)state;
    rng_state = 12345;
    for (int it = 0; it < 300; it++) {
        uint32_t n = 1 + (uint32_t)(urand() * 60), ranks = 1 + (uint32_t)(urand() * 3);
        tc_tl_dag d;
        random_dag(&d, n, ranks);
        double cp, mk = asap(&d, &cp);
        tc_tl_opts o = opts(0, 0);
        tc_tl_result r, r2;
        run(&d, &o, &r);
        if (!(fabs(r.iter_s - mk) <= 1e-9 * fmax(1, mk)))
            fail_msg("dag %d: iteration %.15g, as soon as possible %.15g", it, r.iter_s, mk);
        assert_true(r.iter_s >= cp - 1e-9);
        assert_true(r.iter_s >= r.compute_s - 1e-9);
        assert_true(r.iter_s <= r.serial_s + 1e-9);
        assert_true(r.efficiency >= -1e-9); /* never slower than serial without contention */
        for (size_t i = 0; i < d.n; i++) {
            const tc_tl_task *t = &d.task[i];
            near(t->end_s - t->start_s, t->dur_s, "no contention: duration");
            for (uint32_t k = 0; k < t->ndeps; k++) {
                assert_true(t->start_s >= d.task[t->deps[k]].end_s - 1e-12);
                assert_true(t->serial_start_s >= d.task[t->deps[k]].serial_end_s - 1e-12);
            }
            /* Serial: nothing else runs on the rank meanwhile. */
            for (size_t j = 0; j < i; j++) {
                const tc_tl_task *u = &d.task[j];
                if (u->rank == t->rank && t->dur_s > 0 && u->dur_s > 0)
                    assert_true(u->serial_end_s <= t->serial_start_s + 1e-12 ||
                                t->serial_end_s <= u->serial_start_s + 1e-12);
            }
        }
        tc_tl_result_free(&r);

        /* With contention: still at least the bounds, each task at least
         * its duration, and deterministic to the bit. */
        o = opts(urand(), urand());
        o.s_c_dma = urand() * 0.2;
        o.s_m_dma = urand() * 0.2;
        o.policy = urand() < 0.5 ? TC_TL_IN_ORDER : TC_TL_READY_FIRST;
        run(&d, &o, &r);
        double *ends = calloc(d.n ? d.n : 1, sizeof *ends);
        for (size_t i = 0; i < d.n; i++) {
            ends[i] = d.task[i].end_s;
            assert_true(d.task[i].end_s - d.task[i].start_s >= d.task[i].dur_s * (1 - 1e-12));
        }
        assert_true(r.iter_s >= cp - 1e-9);
        assert_true(r.iter_s >= r.compute_s - 1e-9);
        for (uint32_t k = 0; k < r.nranks; k++)
            assert_true(r.rank[k].slowdown_s >= -1e-9);
        run(&d, &o, &r2);
        assert_memory_equal(&r.iter_s, &r2.iter_s, sizeof r.iter_s);
        for (size_t i = 0; i < d.n; i++)
            assert_memory_equal(&ends[i], &d.task[i].end_s, sizeof ends[i]);
        free(ends);
        tc_tl_result_free(&r);
        tc_tl_result_free(&r2);
        tc_tl_free(&d);
    }
}

/* ---- an external model (tc_tl_ext) -------------------------------------- */

/* A fake external model: a started task ends dur[task] later. */
typedef struct fake_ext {
    const double *dur;
    uint32_t task[4096];
    double end[4096];
    size_t n, begins, starts;
    int fail_in;   /* > 0: the run call that many calls on fails (once) */
    int retries;   /* retry calls */
    bool can_retry;
} fake_ext;

static bool fx_retry(void *ud)
{
    fake_ext *f = ud;
    f->retries++;
    return f->can_retry;
}

static tc_status fx_begin(void *ud, bool serial, tc_err *err)
{
    (void)serial;
    (void)err;
    fake_ext *f = ud;
    f->n = 0;
    f->begins++;
    return TC_OK;
}

static tc_status fx_start(void *ud, uint32_t task, double t, tc_err *err)
{
    (void)err;
    fake_ext *f = ud;
    f->task[f->n] = task;
    f->end[f->n++] = t + f->dur[task];
    f->starts++;
    return TC_OK;
}

static tc_status fx_run(void *ud, double until, uint32_t *done, size_t cap, size_t *nd, double *now, tc_err *err)
{
    fake_ext *f = ud;
    *nd = 0;
    if (f->fail_in > 0 && --f->fail_in == 0)
        return tc_fail(err, TC_EINTERNAL, "fake: this run fails");
    double m = INFINITY;
    for (size_t i = 0; i < f->n; i++)
        m = fmin(m, f->end[i]);
    if (!(m <= until)) {
        *now = until;
        return TC_OK;
    }
    *now = m;
    for (size_t i = 0; i < f->n && *nd < cap;)
        if (f->end[i] <= m + 1e-12 * fabs(m)) {
            done[(*nd)++] = f->task[i];
            f->task[i] = f->task[--f->n];
            f->end[i] = f->end[f->n];
        } else {
            i++;
        }
    return TC_OK;
}

/* Communication handed to an external model that ends each task after its
 * duration gives the same timeline as the durations themselves (s_m = 0:
 * external communication is not slowed by compute), on random DAGs with
 * contention on compute, both runs. */
static void external_model_matches_durations(void **state)
{
    (void)state;
    rng_state = 11;
    for (int trial = 0; trial < 200; trial++) {
        tc_tl_dag a, b;
        uint32_t n = 5 + (uint32_t)(urand() * 60);
        random_dag(&a, n, 1 + (uint32_t)(urand() * 4));
        /* b: a copy of a with its communication external */
        tc_tl_init(&b);
        double dur[4096];
        for (uint32_t i = 0; i < a.n; i++) {
            const tc_tl_task *x = &a.task[i];
            uint32_t k = tc_tl_add(&b, x->kind, x->rank, x->stream, x->dur_s, NULL);
            b.task[k].dma = x->dma;
            dur[i] = x->dur_s;
            if (x->kind == TC_TL_COMM && x->dur_s > 0)
                b.task[k].ext = true;
            for (uint32_t j = 0; j < x->ndeps; j++)
                tc_tl_dep(&b, k, x->deps[j]);
        }
        fake_ext fx = {.dur = dur};
        tc_tl_ext ext = {.ud = &fx, .begin = fx_begin, .start = fx_start, .run = fx_run};
        tc_tl_opts o = opts(0.25, 0);
        o.s_c_dma = 0.1;
        tc_tl_result ra, rb;
        run(&a, &o, &ra);
        o.ext = &ext;
        run(&b, &o, &rb);
        assert_int_equal(fx.begins, 2);
        char what[64];
        for (uint32_t i = 0; i < a.n; i++) {
            snprintf(what, sizeof what, "trial %d task %u end", trial, i);
            near(b.task[i].end_s, a.task[i].end_s, what);
            snprintf(what, sizeof what, "trial %d task %u serial end", trial, i);
            near(b.task[i].serial_end_s, a.task[i].serial_end_s, what);
        }
        near(rb.iter_s, ra.iter_s, "iteration");
        near(rb.serial_s, ra.serial_s, "serial");
        /* a run that fails part way is made again from the start when the
         * model can (tc_tl_ext.retry): the same timeline; else it fails */
        if (trial < 40 && fx.starts > 1) {
            tc_tl_result rc;
            fake_ext fy = {.dur = dur, .fail_in = 1 + trial % 3, .can_retry = true};
            tc_tl_ext ey = {.ud = &fy, .begin = fx_begin, .start = fx_start, .run = fx_run, .retry = fx_retry};
            o.ext = &ey;
            run(&b, &o, &rc);
            assert_int_equal(fy.retries, 1);
            assert_int_equal(fy.begins, 3);
            for (uint32_t i = 0; i < a.n; i++) {
                near(b.task[i].end_s, a.task[i].end_s, "retried: end");
                near(b.task[i].serial_end_s, a.task[i].serial_end_s, "retried: serial end");
            }
            near(rc.iter_s, ra.iter_s, "retried: iteration");
            tc_tl_result_free(&rc);
            fake_ext fz = {.dur = dur, .fail_in = 1, .can_retry = false};
            tc_tl_ext ez = {.ud = &fz, .begin = fx_begin, .start = fx_start, .run = fx_run, .retry = fx_retry};
            o.ext = &ez;
            tc_err e2 = {{0}};
            assert_int_equal(tc_tl_run(&b, &o, &rc, &e2), TC_EINTERNAL);
            assert_int_equal(fz.retries, 1);
            assert_non_null(strstr(e2.msg, "fake"));
        }
        tc_tl_result_free(&ra);
        tc_tl_result_free(&rb);
        tc_tl_free(&a);
        tc_tl_free(&b);
    }
    /* an external task without a model is refused */
    tc_tl_dag d;
    tc_tl_init(&d);
    uint32_t m = comm(&d, 0, 1, "M");
    d.task[m].ext = true;
    tc_tl_result r;
    tc_err err = {{0}};
    tc_tl_opts o = opts(0, 0);
    assert_int_equal(tc_tl_run(&d, &o, &r, &err), TC_EINVAL);
    tc_tl_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_layers_two_buckets),
        cmocka_unit_test(no_overlap_is_the_sum),
        cmocka_unit_test(perfect_overlap_is_the_max),
        cmocka_unit_test(contention_only_while_in_flight),
        cmocka_unit_test(s_m_only_while_compute_runs),
        cmocka_unit_test(copy_engine_factors),
        cmocka_unit_test(efficiency_one_and_negative),
        cmocka_unit_test(stream_order_and_priority),
        cmocka_unit_test(priority_policy_and_preemption),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(pipeline_with_sends),
        cmocka_unit_test(serial_sends_first),
        cmocka_unit_test(one_f_one_b_bubble),
        cmocka_unit_test(interleaved_bubble),
        cmocka_unit_test(random_dags),
        cmocka_unit_test(external_model_matches_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
