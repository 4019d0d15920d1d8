/*
 * test_eval.c - the evaluators against each other, against hand-computed
 * cases and against the bounds of the reference (shared collectives
 * reference: nccl-tests busbw, all-to-all bisection bounds).
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

static tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

static double eval(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_mode mode, tc_routing r)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = mode, .routing = r};
    tc_result res;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &res, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return res.time_s;
}

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g (rel %.3g)", what, a, b, fabs(a - b) / fmax(fabs(a), fabs(b)));
}

static void ring_allreduce_steps_matches_hand_computation_on_two_tier_clos(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 64.0 * 1048576;
    /* 2(p-1) steps; the slowest hop crosses a spine: 4 links of 1 us; each
     * step moves S/p at 50 GB/s with no link shared. */
    double want = 126 * (4e-6 + S / 64 / 50e9);
    assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S, TC_MODE_STEPS, TC_ROUTE_DMODK), want, 1e-12, "steps");
    assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S, TC_MODE_FORMULA, TC_ROUTE_DMODK), want, 1e-12, "formula");
    /* Inside one leaf only 2 links. */
    want = 14 * (2e-6 + S / 8 / 50e9);
    assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, S, TC_MODE_STEPS, TC_ROUTE_DMODK), want, 1e-12, "steps p=8");
    tc_topo_free(t);
}

/* Every phase of the schedule costed by a closed form, at the given time. */
static void assert_closed_form(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_routing r,
                               double want)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = r};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
    tc_phase_eval *pe = calloc(s->nphases, sizeof *pe);
    double f = 0;
    assert_non_null(pe);
    assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &f, &err), TC_OK);
    for (uint32_t i = 0; i < s->nphases; i++)
        if (s->phases[i].repeat && !pe[i].closed_form)
            fail_msg("%s/%s: phase %u is not a closed form", tc_op_name(op), tc_algo_name(algo), i);
    assert_rel(f, want, 1e-12, "closed form");
    free(pe);
    tc_sched_free(s);
}

static double eval_map(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_mode mode,
                       tc_routing r, const uint32_t *map)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = mode, .routing = r, .rank_map = map};
    tc_result res;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &res, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return res.time_s;
}

/* A path's latency is its cables' lat plus hop_lat per switch or router it
 * passes through, the same in formula (closed forms and the routed graph),
 * steps, flow and the lower bound's latency term; hand values below. */
static void path_latency_counts_switches_and_routers_in_every_evaluator(void **state)
{
    (void)state;
    const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    const char *names[] = {"formula", "steps", "flow"};
    double S = 8.0 * 1048576, B = 50e9, a = 1e-6;
    char what[96];

    /* 3-level Clos: a route over the core crosses 6 cables and 5 switches. */
    tc_topo *t = topo("clos:down=4x4x4,up=1x4x4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1us");
    double core = 6 * 50e-9 + 5 * 100e-9;
    /* Ring all-reduce on 64 ranks: every step's slowest transfer (15 -> 16)
     * crosses the core; D-mod-k shares no link (formula: closed form). */
    double want = 126 * (a + core + S / 64 / B);
    for (int m = 0; m < 2; m++) {
        snprintf(what, sizeof what, "clos ring p=64 %s", names[m]);
        assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S, modes[m], TC_ROUTE_DMODK), want, 1e-12, what);
    }
    assert_closed_form(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S, TC_ROUTE_DMODK, want);
    /* Two ranks on hosts 0 and 63: both transfers of each of the 2 steps
     * cross the core, in every evaluator. */
    const uint32_t far[] = {0, 63};
    want = 2 * (a + core + S / 2 / B);
    for (int m = 0; m < 3; m++) {
        snprintf(what, sizeof what, "clos 0 <-> 63 %s", names[m]);
        assert_rel(eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S, modes[m], TC_ROUTE_DMODK, far), want, 1e-9,
                   what);
    }
    /* The latency bound: alpha + two hosts of one leaf (2 cables, 1 switch). */
    assert_rel(tc_lower_bound(t, TC_OP_ALLREDUCE, 64, 1, NULL), a + 2 * 50e-9 + 100e-9, 1e-12, "clos bound");
    tc_topo_free(t);

    /* 4x4 torus: (0,0) to (2,2) is 4 links, each entering a router. */
    t = topo("torus:dims=4x4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1us");
    double hop = 50e-9 + 100e-9;
    /* Direct all-to-all (the torus complete exchange's closed form): 15
     * messages per sender; the busiest link of each dimension and direction
     * carries 8 flows, and the longest route through it is 4 hops. */
    want = 15 * a + 4 * hop + 8 * (S / 16) / B;
    for (int m = 0; m < 2; m++) {
        snprintf(what, sizeof what, "torus direct all-to-all %s", names[m]);
        assert_rel(eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 16, S, modes[m], TC_ROUTE_DOR), want, 1e-12, what);
    }
    assert_closed_form(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 16, S, TC_ROUTE_DOR, want);
    const uint32_t opp[] = {0, 10};
    want = 2 * (a + 4 * hop + S / 2 / B);
    for (int m = 0; m < 3; m++) {
        snprintf(what, sizeof what, "torus 0 <-> 10 %s", names[m]);
        assert_rel(eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S, modes[m], TC_ROUTE_DOR, opp), want, 1e-9, what);
    }
    assert_rel(tc_lower_bound(t, TC_OP_ALLREDUCE, 16, 1, NULL), a + hop, 1e-12, "torus bound");
    tc_topo_free(t);

    /* A scale-up node: 2 node links and the node switch between them; a ring
     * inside one node (formula: the node term of the closed form). */
    t = topo("clos:down=8x8,up=1x8,lat=50ns,hop_lat=100ns,node=8,node_bw=450GB/s,node_lat=20ns,node_hop_lat=30ns,"
             "alpha=1us");
    want = 14 * (a + 2 * 20e-9 + 30e-9 + S / 8 / 450e9);
    for (int m = 0; m < 3; m++) {
        snprintf(what, sizeof what, "node ring %s", names[m]);
        assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, S, modes[m], TC_ROUTE_DMODK), want, 1e-9, what);
    }
    tc_topo_free(t);
}

/* alpha is a per-message overhead serialized at the sender (LogGP's o): a
 * rank sending k messages in a step pays k alpha. */
static void per_message_overhead_is_paid_once_per_message_by_the_sender(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,bw=400Gbps,lat=0s,hop_lat=0,alpha=1us");
    double S = 8e6, B = 50e9;
    /* direct all-to-all: 7 messages of S/8 share the host link */
    double want = 7e-6 + 7 * (S / 8) / B;
    assert_rel(eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT), want, 1e-12, "steps");
    assert_rel(eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT), want, 1e-12,
               "formula");
    /* ring all-reduce: one message per rank per step, 14 steps */
    want = 14 * (1e-6 + (S / 8) / B);
    assert_rel(eval(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT), want, 1e-12, "ring");
    tc_topo_free(t);
}

/* Shift and XOR patterns on a full non-blocking Clos with D-mod-k are
 * contention-free, so the closed forms must agree with the step model. */
static void formula_equals_steps_on_nonblocking_clos_with_dmodk(void **state)
{
    (void)state;
    static const char *specs[] = {
        "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=1x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=1x4x4,bw1=200Gbps,bw2=400Gbps,bw3=800Gbps,lat1=1us,lat2=500ns,lat3=2us,hop_lat=0,alpha=3us",
        "clos:down=8x8,up=1x8,node=4,node_bw=450GB/s,node_lat=200ns,lat=1us,hop_lat=0,alpha=0",
    };
    static const struct {
        tc_op op;
        tc_algo algo;
    } cases[] = {
        {TC_OP_ALLREDUCE, TC_ALGO_RING},       {TC_OP_REDUCESCATTER, TC_ALGO_RING},
        {TC_OP_ALLGATHER, TC_ALGO_RING},       {TC_OP_ALLREDUCE, TC_ALGO_RD},
        {TC_OP_ALLGATHER, TC_ALGO_RD},         {TC_OP_ALLREDUCE, TC_ALGO_RHD},
        {TC_OP_REDUCESCATTER, TC_ALGO_RHD},    {TC_OP_ALLTOALL, TC_ALGO_PAIRWISE},
        {TC_OP_ALLGATHER, TC_ALGO_BRUCK},      {TC_OP_BROADCAST, TC_ALGO_BINOMIAL},
        {TC_OP_ALLREDUCE, TC_ALGO_HIER},
    };
    double sizes[] = {1024, 1048576, 1073741824};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = topo(specs[i]);
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            if (!tc_coll_valid(cases[c].op, cases[c].algo, 64, t, NULL))
                continue;
            for (size_t k = 0; k < 3; k++) {
                double f = eval(t, cases[c].op, cases[c].algo, 64, sizes[k], TC_MODE_FORMULA, TC_ROUTE_DMODK);
                double s = eval(t, cases[c].op, cases[c].algo, 64, sizes[k], TC_MODE_STEPS, TC_ROUTE_DMODK);
                char what[256];
                snprintf(what, sizeof what, "%s %s/%s %.0fB", specs[i], tc_op_name(cases[c].op),
                         tc_algo_name(cases[c].algo), sizes[k]);
                assert_rel(f, s, 1e-9, what);
            }
        }
        tc_topo_free(t);
    }
}

/* Rings along torus dimensions map onto neighbour links. */
static void formula_equals_steps_for_torus_rings(void **state)
{
    (void)state;
    static const char *specs[] = {
        "torus:dims=4x4,lat=1us,hop_lat=0,alpha=0", "torus:dims=4x4,wrap=1x0,lat=1us,hop_lat=0,alpha=0", "torus:dims=4x4x4,lat=1us,hop_lat=0,alpha=0", "torus:dims=8x8,wrap=0x0,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=2x3x4,lat=1us,hop_lat=0,alpha=0", "torus:dims=8x8x8,lat=1us,hop_lat=0,alpha=2us",
    };
    tc_algo algos[] = {TC_ALGO_TORUS, TC_ALGO_TORUS_BI, TC_ALGO_TORUS_MP};
    tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = topo(specs[i]);
        for (size_t a = 0; a < 3; a++)
            for (size_t o = 0; o < 3; o++) {
                double f = eval(t, ops[o], algos[a], t->n_endpoints, 1 << 26, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
                double s = eval(t, ops[o], algos[a], t->n_endpoints, 1 << 26, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
                char what[256];
                snprintf(what, sizeof what, "%s %s/%s", specs[i], tc_op_name(ops[o]), tc_algo_name(algos[a]));
                assert_rel(f, s, 1e-9, what);
            }
        tc_topo_free(t);
    }
}

/* nccl-tests: busbw of a bandwidth-optimal algorithm approaches the
 * per-endpoint injection bandwidth at large sizes. */
static void busbw_of_bandwidth_optimal_algorithms_approaches_injection(void **state)
{
    (void)state;
    struct {
        const char *spec;
        tc_op op;
        tc_algo algo;
    } cases[] = {
        {"clos:down=16x16,up=1x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RING},
        {"clos:down=16x16,up=1x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RHD},
        {"clos:down=16x16,up=1x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0", TC_OP_REDUCESCATTER, TC_ALGO_RING},
        {"clos:down=16x16,up=1x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLGATHER, TC_ALGO_RING},
        {"clos:down=16x16,up=1x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLTOALL, TC_ALGO_PAIRWISE},
        {"torus:dims=8x8x8,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_TORUS_MP},
        {"torus:dims=8x8x8,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLGATHER, TC_ALGO_TORUS_MP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo *t = topo(cases[i].spec);
        tc_err err;
        assert_int_equal(tc_topo_equalize_injection(t, 50e9, &err), TC_OK);
        for (int m = 0; m < 2; m++) {
            tc_coll_req req = {.op = cases[i].op, .algo = cases[i].algo, .p = t->n_endpoints, .bytes = 4294967296.0};
            tc_eval_opts o = {.mode = (tc_mode)m, .routing = t->kind == TC_TOPO_CLOS ? TC_ROUTE_DMODK : TC_ROUTE_DOR};
            tc_result r;
            assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
            if (r.busbw_Bps < 0.98 * 50e9 || r.busbw_Bps > 50e9 * (1 + 1e-9))
                fail_msg("%s %s/%s mode %d: busbw %.4g", cases[i].spec, tc_op_name(cases[i].op),
                         tc_algo_name(cases[i].algo), m, r.busbw_Bps);
        }
        tc_topo_free(t);
    }
}

/* Reference: all-to-all on a two-tier Clos with k hosts per leaf and
 * oversubscription s takes t >= max((N-1)/N, s (N-k)/N) n / B. With
 * D-mod-k the direct algorithm spreads the leaving flows evenly over the
 * uplinks and meets the bound exactly (latency 0 to isolate the term). */
static void alltoall_on_oversubscribed_clos_meets_the_bisection_bound(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x4,bw=400Gbps,lat=0s,hop_lat=0,alpha=0");
    double n = 1 << 24, N = 64, k = 8, s = 2, B = 50e9;
    double want = fmax((N - 1) / N, s * (N - k) / N) * n / B;
    double got = eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 64, n, TC_MODE_STEPS, TC_ROUTE_DMODK);
    assert_rel(got, want, 1e-9, "direct all-to-all, steps, dmodk");
    assert_rel(tc_lower_bound(t, TC_OP_ALLTOALL, 64, n, NULL), want, 1e-9, "lower bound");
    tc_topo_free(t);
}

/* Reference: all-to-all on a torus is bisection-bound, (d_max/8) n/b with
 * wraparound. Ties at distance d/2 split by parity load the two directions
 * evenly and meet the bound; dor-positive sends every tie the positive way:
 * a positive link then carries 1+2+..+8 = 36 flows of each row instead of
 * 1+..+7 + 8/2 = 32, 12.5% more on 16-ary rings. */
static void alltoall_on_torus_meets_the_bisection_bound_and_dor_positive_costs_an_eighth(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=16x16,bw=400Gbps,lat=0s,hop_lat=0,alpha=0");
    double n = 1 << 24, b = 50e9;
    double want = 16.0 / 8 * n / b;
    assert_rel(eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 256, n, TC_MODE_STEPS, TC_ROUTE_DOR), want, 1e-9, "dor");
    assert_rel(tc_lower_bound(t, TC_OP_ALLTOALL, 256, n, NULL), want, 1e-9, "lower bound");
    assert_rel(eval(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 256, n, TC_MODE_STEPS, TC_ROUTE_DOR_POSITIVE), 1.125 * want,
               1e-9, "dor-positive");
    tc_topo_free(t);
}

static void auto_picks_the_fastest_valid_algorithm_and_reports_it(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=0");
    for (int m = 0; m < 2; m++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            double sizes[] = {1024, 1 << 30};
            for (int k = 0; k < 2; k++) {
                tc_coll_req req = {.op = (tc_op)op, .algo = TC_ALGO_AUTO, .p = 64, .bytes = sizes[k]};
                tc_eval_opts o = {.mode = (tc_mode)m};
                tc_result r;
                tc_err err;
                assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
                assert_int_equal(r.algo_requested, TC_ALGO_AUTO);
                assert_true(r.algo != TC_ALGO_AUTO);
                for (int a = 0; a < TC_ALGO_AUTO; a++) {
                    if (!tc_coll_valid((tc_op)op, (tc_algo)a, 64, t, NULL))
                        continue;
                    double ta = eval(t, (tc_op)op, (tc_algo)a, 64, sizes[k], (tc_mode)m, TC_ROUTE_DEFAULT);
                    assert_true(r.time_s <= ta);
                    if (a < (int)r.algo)
                        assert_true(ta > r.time_s); /* ties go to the earlier algorithm */
                }
            }
        }
    tc_topo_free(t);
}

static void every_evaluation_respects_the_lower_bound(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=0", "clos:down=8x8,up=1x2,lat=1us,hop_lat=0,alpha=0", "torus:dims=8x8,lat=1us,hop_lat=0,alpha=0",
                                  "torus:dims=4x4x4,wrap=1x0x1,lat=1us,hop_lat=0,alpha=0"};
    for (size_t i = 0; i < 4; i++) {
        tc_topo *t = topo(specs[i]);
        for (int m = 0; m < 2; m++)
            for (int op = 0; op < TC_OP_COUNT; op++)
                for (int a = 0; a < TC_ALGO_AUTO; a++) {
                    if (!tc_coll_valid((tc_op)op, (tc_algo)a, 64, t, NULL))
                        continue;
                    double sizes[] = {64, 65536, 1 << 28};
                    for (int k = 0; k < 3; k++) {
                        tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = 64, .bytes = sizes[k]};
                        tc_eval_opts o = {.mode = (tc_mode)m};
                        tc_result r;
                        tc_err err;
                        assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
                        if (r.time_s < r.lower_bound_s * (1 - 1e-9))
                            fail_msg("%s %s/%s %s %.0fB: time %.6g below bound %.6g", specs[i], tc_op_name((tc_op)op),
                                     tc_algo_name((tc_algo)a), tc_mode_name((tc_mode)m), sizes[k], r.time_s,
                                     r.lower_bound_s);
                    }
                }
        tc_topo_free(t);
    }
}

/* A job spread over a Clos: 32 ranks, 4 on each of the 8 leaves of
 * clos:down=8x8,up=1x1 at 400 Gb/s, one 50 GB/s up-link a leaf. An
 * all-to-all of n bytes a rank sends 28/32 n from each of a leaf's 4 ranks
 * out of the leaf: 4 x 16 MiB x 28/32 = 58.7 MB over 50 GB/s, 1.174 ms,
 * where the injection bound is 31/32 n / 50 GB/s (325 us); the direct
 * all-to-all in flow meets it. On a ring of 8 with the job on the even
 * endpoints, the interval {0, 1, 2} holds 2 of the 4 ranks and two cables
 * leave it: 2 x 2 / 4 n over 2 b, above the injection's 3/4 n / 2b. */
static void a_spread_job_is_bound_by_the_cuts_around_its_ranks(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x1,bw=400Gbps");
    uint32_t map[32];
    for (uint32_t r = 0; r < 32; r++)
        map[r] = r / 4 * 8 + r % 4;
    double n = 16.0 * 1048576, want = 4 * n * 28 / 32 / 50e9;
    double lb = tc_lower_bound(t, TC_OP_ALLTOALL, 32, n, map);
    assert_rel(lb, want, 1e-9, "clos leaf cut");
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_DIRECT, .p = 32, .bytes = n};
    tc_eval_opts o = {.mode = TC_MODE_FLOW, .rank_map = map};
    tc_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    assert_rel(r.lower_bound_s, want, 1e-9, "reported bound");
    assert_true(r.time_s >= lb && r.time_s < 1.01 * lb);
    tc_topo_free(t);

    t = topo("torus:dims=8,bw=400Gbps");
    uint32_t even[4] = {0, 2, 4, 6};
    assert_rel(tc_lower_bound(t, TC_OP_ALLTOALL, 4, n, even), n / (2 * 50e9), 1e-9, "ring interval cut");
    tc_topo_free(t);
}

/* The cuts count ranks through the rank map, so a wrong count or capacity
 * would let some schedule beat the bound: random jobs (distinct random
 * endpoints, some on a degraded or failed cable) on Clos and torus
 * networks, every op, algorithm and evaluator, must take no less than it. */
static void every_evaluation_of_a_placed_job_respects_the_lower_bound(void **state)
{
    (void)state;
    static const char *specs[] = {
        "clos:down=4x4,up=1x1,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4,up=1x2,lat=1us,hop_lat=0,alpha=0",
        "clos:down=2x4x2,up=1x2x1,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4,up=1x1,node=2,node_bw=450GB/s,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=8,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=4x4,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=4x4,wrap=0x1,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=2x4x2,wrap=1x0x1,lat=1us,hop_lat=0,alpha=0",
    };
    size_t nspec = sizeof specs / sizeof *specs, checked = 0;
    srand(12345);
    for (int trial = 0; trial < 160; trial++) {
        tc_topo *t = topo(specs[(size_t)rand() % nspec]);
        tc_err err = {{0}};
        int hurt = rand() % 4; /* 0: a cable degraded, 1: a cable failed, else healthy */
        uint32_t l = (uint32_t)rand() % (t->n_links / 2) * 2;
        if (hurt == 0)
            assert_int_equal(tc_topo_degrade_link(t, l, 0.25, &err), TC_OK);
        else if (hurt == 1 && t->links[l].kind != TC_LINK_NODE)
            assert_int_equal(tc_topo_fail_link(t, l, true, &err), TC_OK);
        uint32_t N = t->n_endpoints, perm[64], p = 2 + (uint32_t)rand() % (N - 1);
        for (uint32_t i = 0; i < N; i++)
            perm[i] = i;
        for (uint32_t i = N - 1; i > 0; i--) {
            uint32_t j = (uint32_t)rand() % (i + 1), v = perm[i];
            perm[i] = perm[j], perm[j] = v;
        }
        tc_op op = (tc_op)(rand() % TC_OP_COUNT);
        double sizes[] = {64, 65536, 1 << 24}, bytes = sizes[rand() % 3];
        for (int a = 0; a < TC_ALGO_AUTO; a++) {
            if (!tc_coll_valid(op, (tc_algo)a, p, t, NULL))
                continue;
            for (int m = 0; m < 3; m++) {
                tc_coll_req req = {.op = op, .algo = (tc_algo)a, .p = p, .bytes = bytes};
                tc_eval_opts o = {.mode = (tc_mode)m, .rank_map = perm};
                tc_result r;
                if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
                    continue; /* an algorithm that needs its own placement, or no route */
                checked++;
                if (r.time_s < r.lower_bound_s * (1 - 1e-9))
                    fail_msg("%s p=%u %s/%s %s %.0fB: time %.6g below bound %.6g", t->spec, p, tc_op_name(op),
                             tc_algo_name((tc_algo)a), tc_mode_name((tc_mode)m), bytes, r.time_s, r.lower_bound_s);
            }
        }
        tc_topo_free(t);
    }
    assert_true(checked > 200);
}

/* A sweep builds each schedule once and rescales it: rescaled schedules stay
 * exact (data checker) and give the same times as fresh builds. */
static void sweeps_equal_single_evaluations_and_rescaled_schedules_stay_exact(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2,node=2,node_bw=450GB/s,lat=1us,hop_lat=0,alpha=0");
    double sizes[] = {1000, 65536, 3e8};
    tc_result res[3];
    tc_err err;
    for (int m = 0; m < 2; m++)
        for (int op = 0; op < TC_OP_COUNT; op++)
            for (int a = 0; a <= TC_ALGO_AUTO; a++) {
                if (!tc_coll_valid((tc_op)op, (tc_algo)a, 16, t, NULL))
                    continue;
                tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = 16};
                tc_eval_opts o = {.mode = (tc_mode)m};
                assert_int_equal(tc_evaluate_sweep(t, &req, sizes, 3, &o, res, &err), TC_OK);
                for (int k = 0; k < 3; k++) {
                    double one = eval(t, (tc_op)op, (tc_algo)a, 16, sizes[k], (tc_mode)m, TC_ROUTE_DEFAULT);
                    assert_rel(res[k].time_s, one, 1e-12, "sweep vs single");
                }
                if (a == TC_ALGO_AUTO)
                    continue;
                req.bytes = 12345;
                tc_sched *s = NULL;
                assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
                tc_sched_set_bytes(s, 7777777);
                if (tc_sched_check(s, &err) != TC_OK)
                    fail_msg("rescaled %s/%s: %s", tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), err.msg);
                tc_sched_free(s);
            }
    tc_topo_free(t);
}

static void more_ranks_than_endpoints_is_bad_input(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=0");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 65, .bytes = 1024};
    tc_eval_opts o = {.mode = TC_MODE_FORMULA};
    tc_result r;
    tc_err err;
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "64"));
    tc_topo_free(t);
}

/* A sweep of (size, alpha) points, as compare runs at several overheads,
 * with an algorithm whose schedule follows the size (MPICH's choice): each
 * point takes its own alpha, as an evaluation on the topology with that
 * alpha does. */
static void per_size_algorithms_take_each_points_alpha(void **state)
{
    (void)state;
    double sizes[4] = {4096, 4096, 1 << 20, 1 << 20}, alphas[4] = {0, 5e-6, 0, 5e-6};
    tc_result res[4];
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_MPICH, .p = 64, .bytes = sizes[0]};
    for (int m = 0; m < 2; m++) {
        tc_eval_opts o = {.mode = m ? TC_MODE_STEPS : TC_MODE_FORMULA, .alphas = alphas};
        tc_err err = {{0}};
        assert_int_equal(tc_evaluate_sweep(t, &req, sizes, 4, &o, res, &err), TC_OK);
        for (int i = 0; i < 4; i++) {
            tc_topo *u = topo("clos:down=8x8,up=1x8");
            u->alpha = alphas[i];
            tc_eval_opts o1 = {.mode = o.mode};
            tc_result one;
            tc_coll_req r1 = req;
            r1.bytes = sizes[i];
            assert_int_equal(tc_evaluate(u, &r1, &o1, &one, &err), TC_OK);
            if (fabs(one.time_s - res[i].time_s) > 1e-12 * one.time_s)
                fail_msg("mode %d point %d: swept %.17g s, alone %.17g s", m, i, res[i].time_s, one.time_s);
            tc_topo_free(u);
        }
        assert_true(res[1].time_s > res[0].time_s);
    }
    tc_topo_free(t);
}

/* "library"'s tree (tc_library_req): each tree's half cut into NCCL's
 * 512 KiB chunks, one for a small message. On random Clos networks, rank
 * counts, elements and sizes (tiny, at and either side of a chunk
 * boundary, large), every mode: library's all-reduce at each size is the
 * faster of the ring and dbtree:chunks=c, c = ceil(S / 2 / 512 KiB), as
 * each evaluates alone (the ring first on a tie); a sweep over all the
 * sizes equals each size alone in formula and steps (to 1e-12: the ring's
 * one schedule is rescaled; sizes of one chunk count are evaluated as one
 * sweep); every schedule passes the data
 * checker. And the small message no longer pays 64 chunks' overheads. */
static void library_tree_chunks_follow_the_size(void **state)
{
    (void)state;
    srand(20261206);
    const double Q = 524288.0;
    for (int trial = 0; trial < 12; trial++) {
        uint32_t leaves = 2 + (uint32_t)rand() % 4, hosts = 2 + (uint32_t)rand() % 6, spines = 1 + (uint32_t)rand() % 4;
        char spec[160];
        snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,bw=%uGbps,lat=%uus,alpha=%uus", hosts, leaves, spines,
                 100 + 100 * (unsigned)(rand() % 4), 1 + (unsigned)(rand() % 3), (unsigned)(rand() % 6));
        tc_topo *t = topo(spec);
        uint32_t p = 2 + (uint32_t)rand() % (hosts * leaves - 1);
        uint32_t elt = trial % 3 == 0 ? 0 : trial % 3 == 1 ? 2 : 4;
        double sizes[8] = {4, 4096, 2 * Q, 2 * Q + 4, 2 * Q - 4, 6 * Q + 4 * (rand() % 1000), 3e8, 1 << 20};
        size_t n = 8;
        for (int m = 0; m < 3; m++) {
            tc_mode mode = (tc_mode)m;
            size_t nn = mode == TC_MODE_FLOW ? 3 : n; /* flow: the small ones */
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_AUTO, .p = p, .elt = elt};
            tc_library_req(&req, TC_OP_ALLREDUCE);
            assert_true(tc_req_per_size(&req, TC_ALGO_DBTREE));
            tc_eval_opts o = {.mode = mode};
            tc_result res[8];
            tc_err err = {{0}};
            if (tc_evaluate_sweep(t, &req, sizes, nn, &o, res, &err) != TC_OK)
                fail_msg("%s p=%u: %s", spec, p, err.msg);
            for (size_t i = 0; i < nn; i++) {
                tc_coll_req one = req;
                one.bytes = sizes[i];
                tc_result r1;
                assert_int_equal(tc_evaluate(t, &one, &o, &r1, &err), TC_OK);
                if (mode != TC_MODE_FLOW && fabs(r1.time_s - res[i].time_s) > 1e-12 * r1.time_s)
                    fail_msg("%s p=%u mode %d size %.0f: swept %.17g, alone %.17g", spec, p, m, sizes[i],
                             res[i].time_s, r1.time_s);
                double S = tc_coll_rounded_bytes(TC_OP_ALLREDUCE, p, sizes[i], elt);
                uint32_t c = (uint32_t)fmax(1, ceil(sizes[i] / 2 / Q));
                tc_coll_req rr = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = p, .bytes = sizes[i], .elt = elt};
                tc_coll_req rd = rr;
                rd.algo = TC_ALGO_DBTREE;
                rd.chunks = c;
                tc_result a, b;
                assert_int_equal(tc_evaluate(t, &rr, &o, &a, &err), TC_OK);
                assert_int_equal(tc_evaluate(t, &rd, &o, &b, &err), TC_OK);
                double want = b.time_s < a.time_s ? b.time_s : a.time_s;
                if (r1.time_s != want || r1.algo != (b.time_s < a.time_s ? TC_ALGO_DBTREE : TC_ALGO_RING))
                    fail_msg("%s p=%u mode %d size %.0f (%.0f rounded): library %.17g (%s), ring %.17g, "
                             "dbtree:chunks=%u %.17g",
                             spec, p, m, sizes[i], S, r1.time_s, tc_algo_name(r1.algo), a.time_s, c, b.time_s);
                if (mode == TC_MODE_STEPS) {
                    tc_sched *s = NULL;
                    one.algo = TC_ALGO_DBTREE;
                    assert_int_equal(tc_coll_build(&one, t, &s, &err), TC_OK);
                    assert_int_equal(s->nblk, 2 * c);
                    if (tc_sched_check(s, &err) != TC_OK)
                        fail_msg("dbtree %u chunks p=%u: %s", c, p, err.msg);
                    tc_sched_free(s);
                }
            }
        }
        tc_topo_free(t);
    }
    /* a 4-byte all-reduce on 64 ranks: one chunk a tree, not 64 */
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=10Gbps,lat=1us,alpha=5us");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_AUTO, .p = 64, .bytes = 4};
    tc_library_req(&req, TC_OP_ALLREDUCE);
    tc_eval_opts o = {.mode = TC_MODE_STEPS};
    tc_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    double fixed = eval(t, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 64, 4, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
    assert_int_equal(r.algo, TC_ALGO_DBTREE);
    assert_true(r.time_s < fixed / 4);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_allreduce_steps_matches_hand_computation_on_two_tier_clos),
        cmocka_unit_test(per_message_overhead_is_paid_once_per_message_by_the_sender),
        cmocka_unit_test(path_latency_counts_switches_and_routers_in_every_evaluator),
        cmocka_unit_test(formula_equals_steps_on_nonblocking_clos_with_dmodk),
        cmocka_unit_test(formula_equals_steps_for_torus_rings),
        cmocka_unit_test(busbw_of_bandwidth_optimal_algorithms_approaches_injection),
        cmocka_unit_test(alltoall_on_oversubscribed_clos_meets_the_bisection_bound),
        cmocka_unit_test(alltoall_on_torus_meets_the_bisection_bound_and_dor_positive_costs_an_eighth),
        cmocka_unit_test(auto_picks_the_fastest_valid_algorithm_and_reports_it),
        cmocka_unit_test(every_evaluation_respects_the_lower_bound),
        cmocka_unit_test(a_spread_job_is_bound_by_the_cuts_around_its_ranks),
        cmocka_unit_test(every_evaluation_of_a_placed_job_respects_the_lower_bound),
        cmocka_unit_test(sweeps_equal_single_evaluations_and_rescaled_schedules_stay_exact),
        cmocka_unit_test(more_ranks_than_endpoints_is_bad_input),
        cmocka_unit_test(per_size_algorithms_take_each_points_alpha),
        cmocka_unit_test(library_tree_chunks_follow_the_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
