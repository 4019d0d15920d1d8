/*
 * test_reduce_cost.c - the reduction cost (reduce_bw=, gamma = 1 /
 * reduce_bw; docs/MODEL.md, "Reduction cost"): by hand on one switch in
 * every evaluator, nothing added to copies or to NCCL's protocols, and on
 * random schedules formula equal to steps, flow with its repetition
 * skipping and rank folding equal to flow without, and flow equal to
 * steps where no link is shared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/eval.h"
#include "topocc/flow.h"
#include "build_helpers.h"

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g (rel %.3g)", what, a, b, fabs(a - b) / fmax(fabs(a), fabs(b)));
}

/* The time in mode m; formula and steps under one routing (formula's
 * default: D-mod-k on a Clos, dimension order on a torus). */
static double eval_mode(const tc_topo *t, const tc_sched *s, tc_mode m, bool no_skip)
{
    double x;
    tc_err err = {{0}};
    tc_flow_opts fo = {.no_skip = no_skip};
    tc_eval_opts o = {.mode = m, .routing = m == TC_MODE_FLOW ? TC_ROUTE_DEFAULT : tc_eval_routing(TC_MODE_FORMULA, t,
                                                                                                  TC_ROUTE_DEFAULT),
                      .flow = &fo};
    if (tc_eval_sched(t, s, &o, &x, &err) != TC_OK)
        fail_msg("%s: %s", tc_mode_name(m), err.msg);
    return x;
}

#define B 50e9 /* 400Gbps */
#define R 25e9 /* reduce_bw=25GB/s */

/* 8 ranks on one switch, no latency, no alpha. A ring all-reduce of S
 * moves 14 blocks of S/8 one after another and reduces 7 of them: 14
 * (S/8)/B + 7 (S/8)/R. rhd halves: it reduces S/2, S/4 and S/8 and sends
 * each twice: 2 (7S/8)/B + (7S/8)/R. MPICH's pairwise reduce-scatter
 * reduces one block of S/8 in each of its 7 steps: 7 (S/8)(1/B + 1/R). A
 * binomial reduce to rank 0 reduces S at every level of the tree, one
 * after another: 3 S (1/B + 1/R). */
static void reduce_bw_adds_each_reduced_block_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=0,hop_lat=0,alpha=0,reduce_bw=25GB/s");
    double S = 8 << 20;
    static const struct {
        tc_op op;
        tc_algo algo;
        double want_b, want_r; /* bytes over B, bytes over R, in units of S */
    } cases[] = {
        {TC_OP_ALLREDUCE, TC_ALGO_RING, 14.0 / 8, 7.0 / 8},
        {TC_OP_ALLREDUCE, TC_ALGO_RHD, 14.0 / 8, 7.0 / 8},
        {TC_OP_REDUCESCATTER, TC_ALGO_PAIRWISE, 7.0 / 8, 7.0 / 8},
        {TC_OP_REDUCE, TC_ALGO_BINOMIAL, 3, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_sched *s = sched(t, cases[i].op, cases[i].algo, 8, S);
        double want = cases[i].want_b * S / B + cases[i].want_r * S / R;
        char what[96];
        for (tc_mode m = TC_MODE_FORMULA; m <= TC_MODE_FLOW; m++) {
            snprintf(what, sizeof what, "%s/%s %s", tc_op_name(cases[i].op), tc_algo_name(cases[i].algo),
                     tc_mode_name(m));
            assert_rel(eval_mode(t, s, m, false), want, 1e-9, what);
        }
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

/* Copies reduce nothing, and NCCL's protocol bandwidths include the
 * reduction: the same times with reduce_bw= as without. */
static void copies_and_nccl_protocols_take_no_reduction_cost(void **state)
{
    (void)state;
    tc_topo *a = topo("clos:down=8x2,up=1x2,node=4,alpha=1us,reduce_bw=10GB/s");
    tc_topo *b = topo("clos:down=8x2,up=1x2,node=4,alpha=1us");
    static const struct {
        tc_op op;
        tc_algo algo;
    } cases[] = {
        {TC_OP_ALLGATHER, TC_ALGO_RING},   {TC_OP_ALLTOALL, TC_ALGO_PAIRWISE},  {TC_OP_BROADCAST, TC_ALGO_BINOMIAL},
        {TC_OP_ALLREDUCE, TC_ALGO_NCCL_RING}, {TC_OP_ALLREDUCE, TC_ALGO_NCCL_TREE}, {TC_OP_ALLREDUCE, TC_ALGO_NCCL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_sched *sa = sched(a, cases[i].op, cases[i].algo, 16, 1 << 22);
        tc_sched *sb = sched(b, cases[i].op, cases[i].algo, 16, 1 << 22);
        for (tc_mode m = TC_MODE_FORMULA; m <= TC_MODE_FLOW; m++) {
            char what[96];
            snprintf(what, sizeof what, "%s/%s %s", tc_op_name(cases[i].op), tc_algo_name(cases[i].algo),
                     tc_mode_name(m));
            assert_rel(eval_mode(a, sa, m, false), eval_mode(b, sb, m, false), 1e-15, what);
        }
        tc_sched_free(sa);
        tc_sched_free(sb);
    }
    tc_topo_free(a);
    tc_topo_free(b);
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t draw(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* Random topologies, rank counts, sizes, reduce rates and reducing
 * algorithms: formula equals steps (it takes the steps path where a
 * reduction costs time); flow with skipping and folding equals flow
 * without them; in steps the cost only adds time, at most gamma times the
 * bytes a rank receives in each step (MPI algorithms reduce what they
 * receive);
 * and on one switch or a full mesh, where a ring all-reduce or reduce-scatter shares no
 * link, flow equals steps (a ring reduce is a pipeline, which flow runs
 * ahead of lock-step). */
static void random_reducing_schedules_agree(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=%u,up=1,lat=%uns,hop_lat=0,alpha=%uns",
                                  "clos:down=4x%u,up=1x2,lat=%uns,alpha=%uns",
                                  "torus:dims=4x%u,lat=%uns,alpha=%uns", "full:hosts=%u,lat=%uns,alpha=%uns"};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_REDUCE};
    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RD,       TC_ALGO_RHD,     TC_ALGO_BINOMIAL,
                                    TC_ALGO_PAIRWISE, TC_ALGO_RSG, TC_ALGO_SEGRING, TC_ALGO_SWING,
                                    TC_ALGO_DBTREE,   TC_ALGO_BIRING};
    int ran = 0, alone = 0;
    for (int iter = 0; iter < 400; iter++) {
        uint32_t kind = draw(4), w = 2 + draw(7), lat = draw(3) * 500, alpha = draw(3) * 700;
        char spec[320], base[200];
        snprintf(base, sizeof base, specs[kind], w, lat, alpha);
        double rbw = (1 + draw(100)) * 1e9;
        snprintf(spec, sizeof spec, "%s,reduce_bw=%.0fGB/s", base, rbw / 1e9);
        tc_topo *t = topo(spec), *t0 = topo(base);
        uint32_t p = 2 + draw(t->n_endpoints - 1);
        tc_coll_req req = {.op = ops[draw(3)], .algo = algos[draw(sizeof algos / sizeof *algos)], .p = p,
                           .bytes = (double)(1 + draw(1 << 20)) * 4};
        tc_sched *s = NULL, *s0 = NULL;
        tc_err err = {{0}};
        if (tc_coll_build(&req, t, &s, &err) != TC_OK || tc_coll_build(&req, t0, &s0, &err) != TC_OK) {
            tc_sched_free(s);
            tc_topo_free(t);
            tc_topo_free(t0);
            continue; /* an algorithm that does not run this operation or count */
        }
        char what[480];
        snprintf(what, sizeof what, "%s %s/%s p=%u %.0f B", spec, tc_op_name(req.op), tc_algo_name(req.algo), p,
                 req.bytes);
        double fm = eval_mode(t, s, TC_MODE_FORMULA, false), st = eval_mode(t, s, TC_MODE_STEPS, false);
        double fl = eval_mode(t, s, TC_MODE_FLOW, false), fn = eval_mode(t, s, TC_MODE_FLOW, true);
        double st0 = eval_mode(t0, s0, TC_MODE_STEPS, false), fl0 = eval_mode(t0, s0, TC_MODE_FLOW, false);
        assert_rel(fm, st, 1e-12, what);
        assert_rel(fl, fn, 1e-9, what);
        /* every reduction received in a step, after the step's slowest byte */
        double most = 0;
        for (uint32_t i = 0; i < s->nphases; i++)
            most += s->phases[i].repeat * s->phases[i].rank_bytes_in / rbw;
        if (!(st >= st0 * (1 - 1e-12) && st <= st0 + most * (1 + 1e-9)))
            fail_msg("%s: steps %.9g without %.9g, at most %.9g more", what, st, st0, most);
        (void)fl0; /* flow need not be slower: a delayed reduction can change who shares a link or a
                      sender's overhead with whom (dbtree reduce, 6 ranks on one switch, alpha 1.4 us,
                      711,788 B: 188.9 us at 43 GB/s, 195.3 us without) */
        if ((kind == 0 || kind == 3) && req.algo == TC_ALGO_RING && req.op != TC_OP_REDUCE) {
            assert_rel(fl, st, 1e-6, what);
            alone++;
        }
        ran++;
        tc_sched_free(s);
        tc_sched_free(s0);
        tc_topo_free(t);
        tc_topo_free(t0);
    }
    assert_true(ran > 200);
    assert_true(alone > 5);
}

/* A run of transfers between the same two ranks in one step, a copy then
 * a reduction of the same bytes (dbtree's all-reduce on 2 ranks: rank 1
 * sends rank 0 a block to copy, then one to reduce; rank 0 sends rank 1
 * its two apart): the reduction takes its receiver's reductions longer
 * than the copy. Steps times each transfer of a run unless it takes the
 * time of the one before it; the reduced one does not. Rank 1's uplink at
 * a quarter of its bandwidth is the mirror image of rank 0's: the same
 * time (without the reduction's term rank 1's took 0.678 ms, rank 0's
 * 1.091 ms). */
static void a_reduction_after_a_copy_in_a_run_is_charged(void **state)
{
    (void)state;
    const char *spec = "clos:down=2,up=1,lat=0,hop_lat=0,alpha=0,reduce_bw=10GB/s";
    tc_topo *a = topo(spec), *b = topo(spec);
    tc_err err = {{0}};
    /* host 0 -> leaf 0 is link 0, host 1 -> leaf 0 link 2 */
    assert_int_equal(tc_topo_degrade_link(a, 0, 0.25, &err), TC_OK);
    assert_int_equal(tc_topo_degrade_link(b, 2, 0.25, &err), TC_OK);
    tc_sched *sa = sched(a, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 2, 8 << 20);
    tc_sched *sb = sched(b, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 2, 8 << 20);
    /* the schedule has such a run, into rank 0 */
    bool run = false;
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (uint32_t st = 0; st < sa->nsteps && !run; st++) {
        x.n = 0;
        assert_int_equal(tc_sched_emit(sa, st, &x), TC_OK);
        for (size_t i = 1; i < x.n; i++)
            if (x.v[i].src == x.v[i - 1].src && x.v[i].dst == x.v[i - 1].dst && x.v[i].bytes == x.v[i - 1].bytes &&
                !x.v[i - 1].reduce && x.v[i].reduce && x.v[i].src == 1 && x.v[i].dst == 0)
                run = true;
    }
    tc_xfers_free(&x);
    assert_true(run);
    for (tc_mode m = TC_MODE_FORMULA; m <= TC_MODE_STEPS; m++)
        assert_rel(eval_mode(a, sa, m, false), eval_mode(b, sb, m, false), 1e-12, tc_mode_name(m));
    tc_sched_free(sa);
    tc_sched_free(sb);
    tc_topo_free(a);
    tc_topo_free(b);
}

/* docs/MODEL.md's case: in flow a delayed reduction can make a run faster.
 * A dbtree reduce of 711,788 B on 6 ranks of one switch, alpha 1.4 us:
 * 188.9 us with reduce_bw=43GB/s, 195.3 us without. */
static void a_delayed_reduction_can_make_flow_faster(void **state)
{
    (void)state;
    tc_topo *a = topo("clos:down=8,up=1,lat=0ns,hop_lat=0,alpha=1400ns,reduce_bw=43GB/s");
    tc_topo *b = topo("clos:down=8,up=1,lat=0ns,hop_lat=0,alpha=1400ns");
    tc_sched *sa = sched(a, TC_OP_REDUCE, TC_ALGO_DBTREE, 6, 711788);
    tc_sched *sb = sched(b, TC_OP_REDUCE, TC_ALGO_DBTREE, 6, 711788);
    double with = eval_mode(a, sa, TC_MODE_FLOW, false), without = eval_mode(b, sb, TC_MODE_FLOW, false);
    assert_rel(with, 188.9e-6, 1e-3, "with reduce_bw");
    assert_rel(without, 195.3e-6, 1e-3, "without");
    assert_true(with < without);
    tc_sched_free(sa);
    tc_sched_free(sb);
    tc_topo_free(a);
    tc_topo_free(b);
}

/* The spec: the rate is named in the topology's spec, and a rate that is
 * not one is refused naming the key. */
static void reduce_bw_in_the_spec(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4x4,reduce_bw=12.5GB/s");
    assert_non_null(strstr(t->spec, ",reduce_bw=12.5GB/s"));
    tc_topo_free(t);
    t = topo("torus:dims=4x4");
    assert_null(strstr(t->spec, "reduce_bw"));
    tc_topo_free(t);
    tc_topo *bad = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=4,up=1,reduce_bw=fast", &bad, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "reduce_bw"));
    assert_null(bad);
    err = (tc_err){{0}};
    assert_int_equal(tc_topo_build("clos:down=4,up=1,reduce_bw=0GB/s", &bad, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "reduce_bw"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduce_bw_adds_each_reduced_block_by_hand),
        cmocka_unit_test(copies_and_nccl_protocols_take_no_reduction_cost),
        cmocka_unit_test(random_reducing_schedules_agree),
        cmocka_unit_test(a_reduction_after_a_copy_in_a_run_is_charged),
        cmocka_unit_test(a_delayed_reduction_can_make_flow_faster),
        cmocka_unit_test(reduce_bw_in_the_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
