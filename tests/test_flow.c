/*
 * test_flow.c - the flow evaluator: the max-min solver against hand-solved
 * examples (Bertsekas & Gallager, Data Networks, section 6.5), agreement
 * with the steps evaluator where nothing is congested, stragglers and
 * concurrent jobs computed by hand, all-to-all against the cut bounds, bad
 * input, and the trace file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "eval/flow_int.h"
#include "topocc/eval.h"
#include "topocc/flow.h"

#define B400 50e9 /* 400Gbps in bytes/s, the default link */

#include "build_helpers.h"

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g (rel %.3g)", what, a, b, fabs(a - b) / fmax(fabs(a), fabs(b)));
}

static double flow_time(const tc_topo *t, const tc_sched *s, const tc_flow_opts *o)
{
    double x;
    tc_err err = {{0}};
    if (tc_flow_time(t, s, NULL, o, &x, &err) != TC_OK)
        fail_msg("flow: %s", err.msg);
    return x;
}

static double steps_time(const tc_topo *t, const tc_sched *s, tc_routing r)
{
    double x;
    tc_err err = {{0}};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = r};
    if (tc_eval_steps(t, s, &o, &x, &err) != TC_OK)
        fail_msg("steps: %s", err.msg);
    return x;
}

/* ---- the max-min solver ---- */

static void mm_setup(tc_mm *m, const double *cap, uint32_t nlinks, double rate_cap)
{
    assert_int_equal(tc_mm_init(m, nlinks, cap, 4, rate_cap), TC_OK);
}

static void add(tc_mm *m, uint32_t id, uint32_t n, const uint32_t *links, const double *w)
{
    assert_int_equal(tc_mm_add(m, id, links, w, n), TC_OK);
}

static void maxmin_flows_sharing_one_link_each_get_an_equal_share(void **state)
{
    (void)state;
    double cap[] = {10};
    tc_mm m;
    mm_setup(&m, cap, 1, 0);
    uint32_t l0[] = {0};
    for (uint32_t f = 0; f < 4; f++)
        add(&m, f, 1, l0, NULL);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_int_equal(m.nchanged, 4);
    for (uint32_t f = 0; f < 4; f++)
        assert_rel(tc_mm_rate(&m, f), 2.5, 1e-15, "C/4");
    tc_mm_remove(&m, 3);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    for (uint32_t f = 0; f < 3; f++)
        assert_rel(tc_mm_rate(&m, f), 10.0 / 3, 1e-15, "C/3 after a departure");
    tc_mm_free(&m);
}

/* Bertsekas & Gallager's example: A crosses links 1 and 2 (capacities 1 and
 * 2), B link 1, C link 2: A = B = 1/2 (link 1 fills first), C takes the rest
 * of link 2, 3/2. */
static void maxmin_three_flows_on_two_links_match_the_classic_example(void **state)
{
    (void)state;
    double cap[] = {1, 2};
    tc_mm m;
    mm_setup(&m, cap, 2, 0);
    uint32_t a[] = {0, 1}, b[] = {0}, c[] = {1};
    add(&m, 0, 2, a, NULL);
    add(&m, 1, 1, b, NULL);
    add(&m, 2, 1, c, NULL);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_rel(tc_mm_rate(&m, 0), 0.5, 1e-15, "A");
    assert_rel(tc_mm_rate(&m, 1), 0.5, 1e-15, "B");
    assert_rel(tc_mm_rate(&m, 2), 1.5, 1e-15, "C");
    tc_mm_free(&m);
}

/* A crosses link 0 (10) and link 1 (2); B only link 0: A is held to 2 by
 * link 1, B takes the leftover 8 of link 0. */
static void maxmin_flow_bottlenecked_elsewhere_leaves_its_share_to_others(void **state)
{
    (void)state;
    double cap[] = {10, 2};
    tc_mm m;
    mm_setup(&m, cap, 2, 0);
    uint32_t a[] = {0, 1}, b[] = {0};
    add(&m, 0, 2, a, NULL);
    add(&m, 1, 1, b, NULL);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_rel(tc_mm_rate(&m, 0), 2, 1e-15, "A");
    assert_rel(tc_mm_rate(&m, 1), 8, 1e-15, "B");
    tc_mm_free(&m);
}

static void maxmin_respects_the_rate_cap(void **state)
{
    (void)state;
    double cap[] = {10, 2};
    tc_mm m;
    mm_setup(&m, cap, 2, 3);
    uint32_t a[] = {0, 1}, b[] = {0};
    add(&m, 0, 2, a, NULL);
    add(&m, 1, 1, b, NULL);
    add(&m, 2, 1, b, NULL);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_rel(tc_mm_rate(&m, 0), 2, 1e-15, "A held by link 1");
    assert_rel(tc_mm_rate(&m, 1), 3, 1e-15, "B held by the cap");
    assert_rel(tc_mm_rate(&m, 2), 3, 1e-15, "C held by the cap");
    tc_mm_free(&m);
}

/* A splits half and half over links 0 and 1 (capacity 1 each), B uses link
 * 0 alone: link 0 fills at x/2 + x = 1, so both get 2/3. */
static void maxmin_weighted_split_fills_links_by_fraction(void **state)
{
    (void)state;
    double cap[] = {1, 1};
    tc_mm m;
    mm_setup(&m, cap, 2, 0);
    uint32_t a[] = {0, 1}, b[] = {0};
    double wa[] = {0.5, 0.5};
    add(&m, 0, 2, a, wa);
    add(&m, 1, 1, b, NULL);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_rel(tc_mm_rate(&m, 0), 2.0 / 3, 1e-15, "A");
    assert_rel(tc_mm_rate(&m, 1), 2.0 / 3, 1e-15, "B");
    tc_mm_free(&m);
}

/* Recomputing only the touched components gives the rates a solve from
 * scratch gives, after any sequence of arrivals and departures. */
static void maxmin_incremental_solve_equals_solving_from_scratch(void **state)
{
    (void)state;
    enum { L = 40, F = 300 };
    double cap[L];
    uint64_t x = 12345;
    for (int l = 0; l < L; l++) {
        x = tc_mix64(x);
        cap[l] = 1 + (double)(x % 100);
    }
    tc_mm inc;
    mm_setup(&inc, cap, L, 0);
    uint32_t links[F][4], nl[F];
    bool alive[F] = {false};
    for (int round = 0; round < 60; round++) {
        for (int k = 0; k < 10; k++) {
            x = tc_mix64(x);
            uint32_t f = (uint32_t)(x % F);
            if (alive[f]) {
                tc_mm_remove(&inc, f);
                alive[f] = false;
                continue;
            }
            /* A path of 1 to 4 distinct links, mostly in a few clusters so
             * that components stay apart for a while. */
            nl[f] = 1 + (uint32_t)(x >> 8) % 4;
            uint32_t base = (uint32_t)(x >> 16) % 8 * 5;
            for (uint32_t j = 0; j < nl[f]; j++)
                links[f][j] = (base + j * 7 + (uint32_t)(x >> 24) % 3) % L;
            add(&inc, f, nl[f], links[f], NULL);
            alive[f] = true;
        }
        assert_int_equal(tc_mm_solve(&inc), TC_OK);
        tc_mm ref;
        mm_setup(&ref, cap, L, 0);
        for (uint32_t f = 0; f < F; f++)
            if (alive[f])
                add(&ref, f, nl[f], links[f], NULL);
        assert_int_equal(tc_mm_solve(&ref), TC_OK);
        for (uint32_t f = 0; f < F; f++)
            if (alive[f])
                assert_rel(tc_mm_rate(&inc, f), tc_mm_rate(&ref, f), 1e-12, "incremental rate");
        tc_mm_free(&ref);
    }
    tc_mm_free(&inc);
}

/* Re-solving by level (flow_int.h) against solving from scratch, in one
 * large component: departures of the fastest flows (what a simulation sees:
 * the fastest finish first), of random flows, and arrivals, with weighted
 * incidences and a rate cap in some runs. budget 1 re-solves every change by
 * level; 40 mixes the two ways within one solve. */
static void level_run(uint32_t budget, bool weighted, double rate_cap, uint64_t seed)
{
    enum { L = 24, F = 400 };
    double cap[L];
    uint64_t x = seed;
    for (int l = 0; l < L; l++) {
        x = tc_mix64(x);
        cap[l] = 1 + (double)(x % 50);
    }
    tc_mm inc;
    mm_setup(&inc, cap, L, rate_cap);
    inc.comp_budget = budget;
    uint32_t links[F][4], nl[F];
    double w[F][4];
    bool alive[F] = {false};
    double worst = 0;
    uint64_t level_alive = 0;
    for (int round = 0; round < 150; round++) {
        x = tc_mix64(x);
        int kind = (int)(x % 4);
        for (int k = 0; k < 12; k++) {
            x = tc_mix64(x);
            uint32_t f = (uint32_t)(x % F);
            if (kind == 0 && round > 0) {
                /* The fastest flow leaves (lowest id among ties). */
                double best = -1;
                uint32_t bf = F;
                for (uint32_t g = 0; g < F; g++)
                    if (alive[g] && tc_mm_rate(&inc, g) > best) {
                        best = tc_mm_rate(&inc, g);
                        bf = g;
                    }
                if (bf < F) {
                    tc_mm_remove(&inc, bf);
                    alive[bf] = false;
                }
                continue;
            }
            if (alive[f]) {
                if (kind != 3) {
                    tc_mm_remove(&inc, f);
                    alive[f] = false;
                }
                continue;
            }
            if (kind == 1)
                continue;
            nl[f] = 1 + (uint32_t)(x >> 8) % 4;
            uint32_t start = (uint32_t)(x >> 16) % L;
            for (uint32_t j = 0; j < nl[f]; j++) {
                links[f][j] = (start + j * (1 + (uint32_t)(x >> 24) % 5)) % L;
                w[f][j] = weighted ? 0.25 * (1 + (double)((x >> (32 + 2 * j)) % 4)) : 1;
            }
            /* Distinct links. */
            for (uint32_t j = 1; j < nl[f]; j++)
                for (uint32_t i = 0; i < j; i++)
                    if (links[f][i] == links[f][j])
                        nl[f] = j;
            add(&inc, f, nl[f], links[f], weighted ? w[f] : NULL);
            alive[f] = true;
        }
        uint64_t before = inc.level_solves;
        assert_int_equal(tc_mm_solve(&inc), TC_OK);
        for (uint32_t f = 0; f < F && inc.level_solves > before; f++)
            level_alive += alive[f];
        tc_mm ref;
        mm_setup(&ref, cap, L, rate_cap);
        for (uint32_t f = 0; f < F; f++)
            if (alive[f])
                add(&ref, f, nl[f], links[f], weighted ? w[f] : NULL);
        assert_int_equal(tc_mm_solve(&ref), TC_OK);
        assert_int_equal(ref.level_solves, 0);
        for (uint32_t f = 0; f < F; f++)
            if (alive[f]) {
                double a = tc_mm_rate(&inc, f), b = tc_mm_rate(&ref, f);
                if (!(fabs(a - b) <= 1e-12 * fmax(a, b)))
                    fail_msg("budget %u weighted %d cap %g seed %llu round %d kind %d flow %u: %.12g vs %.12g", budget,
                             weighted, rate_cap, (unsigned long long)seed, round, kind, f, a, b);
                worst = fmax(worst, fabs(a - b) / b);
            }
        tc_mm_free(&ref);
    }
    /* Level solves did happen, and filled again only part of the flows
     * (the worst difference is some 1e-14). */
    assert_true(inc.level_solves > 100);
    assert_true(inc.level_flows < 0.9 * (double)level_alive);
    assert_true(worst < 1e-12);
    tc_mm_free(&inc);
}

static void maxmin_solve_by_level_equals_solving_from_scratch(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        level_run(1, false, 0, seed);
        level_run(1, true, 0, seed);
        level_run(1, false, 7.5, seed);
        level_run(40, true, 9, seed);
    }
}

/* ---- agreement with the steps evaluator ---- */

/* Where every transfer of a step is alike and no link is shared, rank-level
 * dependencies change nothing: flow equals steps. */
static void flow_equals_steps_where_uncongested(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        tc_op op;
        tc_algo algo;
        uint32_t p;
        tc_routing r;
    } cases[] = {
        {"torus:dims=4x4,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_TORUS, 16, TC_ROUTE_DOR},
        {"torus:dims=4x4,lat=1us,hop_lat=0,alpha=2us", TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, 16, TC_ROUTE_DOR},
        {"torus:dims=4x4x4,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLGATHER, TC_ALGO_TORUS, 64, TC_ROUTE_DOR},
        {"torus:dims=4x4x4,lat=1us,hop_lat=0,alpha=0", TC_OP_REDUCESCATTER, TC_ALGO_TORUS_BI, 64, TC_ROUTE_DOR},
        {"clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RING, 8, TC_ROUTE_ECMP},
        {"clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=3us", TC_OP_ALLGATHER, TC_ALGO_RING, 8, TC_ROUTE_ECMP},
        {"clos:down=16,up=1,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RD, 16, TC_ROUTE_ECMP},
        {"clos:down=16,up=1,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RHD, 16, TC_ROUTE_ECMP},
        {"clos:down=16,up=1,lat=3us,hop_lat=0,alpha=1us", TC_OP_REDUCESCATTER, TC_ALGO_RHD, 16, TC_ROUTE_ECMP},
        {"clos:down=8x8,up=1x8,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RING, 64, TC_ROUTE_DMODK},
    };
    double sizes[] = {4096, 1 << 20, 1 << 28};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo *t = topo(cases[i].spec);
        for (size_t k = 0; k < 3; k++) {
            tc_sched *s = sched(t, cases[i].op, cases[i].algo, cases[i].p, sizes[k]);
            tc_flow_opts o = {.routing = cases[i].r};
            char what[200];
            snprintf(what, sizeof what, "%s %s/%s %.0fB", cases[i].spec, tc_op_name(cases[i].op),
                     tc_algo_name(cases[i].algo), sizes[k]);
            double f = flow_time(t, s, &o), st = steps_time(t, s, cases[i].r);
            /* Ring all-reduce over 8 leaves: rank-level dependencies let the
             * 2 us intra-leaf hops go ahead of the 4 us spine hops, so flow
             * is at most steps; every other case is equal. */
            if (cases[i].p == 64 && cases[i].algo == TC_ALGO_RING) {
                assert_true(f <= st * (1 + 1e-9));
                assert_true(f >= st - 126 * 2e-6 - 1e-12);
            } else {
                assert_rel(f, st, 1e-6, what);
            }
            tc_sched_free(s);
        }
        tc_topo_free(t);
    }
}

/* ---- stragglers ---- */

/* 8 ranks on one switch, no latency, host 0's up-link at half bandwidth.
 * rhd:order=far all-reduce (partners 4, 2, 1 apart, then 1, 2, 4) moves
 * S/2, S/4, S/8 then S/8, S/4, S/2 and rank 0 sends in
 * every step at B/2, its sends leaving one after another: its chain takes
 * 2 (7S/8) / B = 3.5 T (T = S / B), which is also what lock-step gives. The
 * others finish earlier, by hand (see docs/MODEL.md, "flow"): ranks 1, 3, 5,
 * 7 at 2.75 T, 2 and 6 at 3 T, 0 and 4 at 3.5 T. */
static void straggler_under_rhd_delays_only_the_ranks_that_depend_on_it(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=0s,hop_lat=0,alpha=0");
    tc_err err = {{0}};
    assert_int_equal(tc_topo_degrade_link(t, t->up_lbase[1], 0.5, &err), TC_OK);
    double S = 1 << 26, T = S / B400;
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RHD, .p = 8, .bytes = S, .variant = TC_VARIANT_FAR};
    tc_sched *s = NULL;
    assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
    tc_flow_job job = {s, NULL, 0, NULL, 0};
    tc_flow_opts o = {0};
    tc_flow_result res;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_rel(res.jobs[0].time_s, 3.5 * T, 1e-9, "flow");
    assert_rel(res.jobs[0].rank_finish_min_s, 2.75 * T, 1e-9, "first rank");
    assert_rel(res.jobs[0].rank_finish_median_s, 2.875 * T, 1e-9, "median rank");
    assert_rel(res.jobs[0].rank_finish_max_s, 3.5 * T, 1e-9, "last rank");
    assert_int_equal(res.jobs[0].transfers, 6 * 8);
    assert_rel(steps_time(t, s, TC_ROUTE_DEFAULT), 3.5 * T, 1e-9, "steps");
    /* Every host link carries 7S/4 (the lowest ID, the halved link, comes
     * first), and rank 0 sent on it all along. */
    assert_int_equal(res.hot[0].link, t->up_lbase[1]);
    assert_rel(res.hot[0].bytes, 7 * S / 4, 1e-12, "bytes on the slow link");
    assert_rel(res.hot[0].utilisation, 1.0, 1e-9, "the slow link is busy throughout");
    tc_flow_result_free(&res);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* The double binary tree pipelines 64 chunks through both trees, and rank 0
 * forwards in every steady step: its halved up-link paces the whole
 * pipeline, so the time nearly doubles (2.05 T healthy, 4 T degraded, T =
 * S / B) and equals lock-step, which charges each step its slowest hop. Without
 * the rendezvous (TC_DEPS_RECV) senders run ahead into busy receivers and
 * the healthy run is slower than lock-step (2.11 T). */
static void straggler_under_dbtree_paces_the_pipeline_like_lock_step(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=0s,hop_lat=0,alpha=0");
    double S = 1 << 26, T = S / B400;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 8, S);
    tc_flow_opts o = {0}, recv = {.deps = TC_DEPS_RECV};
    double healthy = flow_time(t, s, &o), healthy_steps = steps_time(t, s, TC_ROUTE_DEFAULT);
    assert_rel(healthy, healthy_steps, 1e-6, "healthy: flow = steps");
    assert_true(flow_time(t, s, &recv) > healthy * 1.02);
    tc_err err = {{0}};
    assert_int_equal(tc_topo_degrade_link(t, t->up_lbase[1], 0.5, &err), TC_OK);
    double f = flow_time(t, s, &o), st = steps_time(t, s, TC_ROUTE_DEFAULT);
    assert_rel(f, 4 * T, 1e-6, "degraded flow");
    assert_true(f <= st * (1 + 1e-9));
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- concurrent jobs ---- */

/* Two leaves of 4 hosts joined by one spine, one up-link per leaf. Job A on
 * hosts {0, 4}, job B on {1, 5}: both 2-rank rings cross the leaf up-links
 * in both directions, so each gets B/2 there. A 2-rank ring all-reduce is 2
 * steps of S/2 over 4 links of 1 us: alone 2 (S/(2B) + 4 us), together
 * 2 (S/B + 4 us). */
static void concurrent_rings_sharing_an_uplink_each_get_half(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 28;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S);
    uint32_t ma[] = {0, 4}, mb[] = {1, 5};
    tc_flow_job jobs[] = {{s, ma, 0, NULL, 0}, {s, mb, 0, NULL, 0}};
    tc_flow_opts o = {0};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    assert_int_equal(res.njobs, 2);
    double together = 2 * (S / B400 + 4e-6), alone = 2 * (S / 2 / B400 + 4e-6);
    assert_rel(res.jobs[0].time_s, together, 1e-9, "job A");
    assert_rel(res.jobs[1].time_s, together, 1e-9, "job B");
    double a[2];
    assert_int_equal(tc_flow_alone(t, jobs, 2, &o, a, &err), TC_OK);
    assert_rel(a[0], alone, 1e-9, "A alone");
    assert_rel(a[1], alone, 1e-9, "B alone");
    /* A late second job shares only the overlap. */
    jobs[1].start_s = alone / 4;
    tc_flow_result_free(&res);
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    assert_true(res.jobs[0].time_s < together && res.jobs[0].time_s > alone);
    assert_rel(res.jobs[1].start_s, alone / 4, 1e-15, "start");
    assert_rel(res.makespan_s, res.jobs[1].finish_s, 1e-15, "makespan");
    tc_flow_result_free(&res);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- all-to-all ---- */

/* 4 leaves of 4 hosts, one 400Gbps up-link each (4:1). Every leaf sends
 * 4 x 12 x S/16 = 3S over its up-link, the cut bound; max-min shares it
 * evenly among the 48 flows, which all end together: flow = the bound plus
 * the 4 us path, and steps (same share) agrees. */
static void alltoall_on_oversubscribed_clos_meets_the_cut_bound(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 16, S);
    tc_flow_opts o = {0};
    double f = flow_time(t, s, &o), bound = tc_lower_bound(t, TC_OP_ALLTOALL, 16, S, NULL);
    assert_rel(bound, 3 * S / B400, 1e-12, "cut bound");
    assert_true(f >= bound);
    assert_rel(f, bound + 4e-6, 1e-9, "flow");
    assert_rel(steps_time(t, s, TC_ROUTE_DEFAULT), f, 1e-9, "steps");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* On a 4x4 torus with dimension order, flows of one all-to-all cross
 * different numbers of loaded links; steps charges every transfer its own
 * worst share for the whole step, max-min lets flows speed up as others
 * end. Flow lies between the cut bound and steps. */
static void alltoall_on_torus_lies_between_the_bound_and_steps(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4x4,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 16, S);
    tc_flow_opts o = {0};
    double f = flow_time(t, s, &o), st = steps_time(t, s, TC_ROUTE_DEFAULT);
    double bound = tc_lower_bound(t, TC_OP_ALLTOALL, 16, S, NULL);
    assert_true(f >= bound);
    assert_true(f <= st * (1 + 1e-9));
    o.multipath = TC_MULTIPATH_SPRAY;
    double sp = flow_time(t, s, &o);
    assert_true(sp >= bound);
    assert_true(sp <= f * (1 + 1e-9));
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- hand-made schedules ---- */

typedef struct hand {
    uint32_t n;
    tc_xfer x[8];
} hand;

static tc_status hand_emit(const tc_sched *s, uint32_t step, tc_xfers *out)
{
    const hand *h = s->state;
    (void)step;
    for (uint32_t i = 0; i < h->n; i++)
        tc_xfers_add(out, h->x[i].src, h->x[i].dst, h->x[i].bytes, false);
    return TC_OK;
}

static void hand_sched(tc_sched *s, hand *h, uint32_t p, uint32_t steps)
{
    memset(s, 0, sizeof *s);
    s->req.p = p;
    s->req.bytes = 1;
    s->nsteps = steps;
    s->emit = hand_emit;
    s->state = h;
}

/* NCCL's credits with a connection's chunks in order (tc_sched.
 * wire_in_order): rank 0 sends S to rank 1 at step 0 and S to rank 2 at
 * step 1; rank 1 then sends S to rank 3 at step 2 (one switch, no
 * latency). The credits let rank 0 issue both steps at once, and its two
 * connections share its link: both arrive at 2 S / B, and rank 1 forwards
 * by 3 S / B. A rank that kept one order for all its sends would deliver
 * rank 1's chunk at S / B and end at 2 S / B; so does fifo (rank 0 waits
 * for its own send before its next step). Two chunks on one connection
 * (both to rank 1) leave in order and end at 2 S / B either way: 3 S / B. */
typedef struct staged {
    uint32_t src[3], dst[3];
    double bytes;
} staged;

static tc_status staged_emit(const tc_sched *s, uint32_t step, tc_xfers *out)
{
    const staged *g = s->state;
    tc_xfers_add(out, g->src[step], g->dst[step], g->bytes, false);
    return TC_OK;
}

static void credited_sched(tc_sched *s, staged *g)
{
    memset(s, 0, sizeof *s);
    s->req.p = 4;
    s->req.bytes = 1;
    s->nsteps = 3;
    s->emit = staged_emit;
    s->state = g;
    s->proto = TC_PROTO_SIMPLE;
    s->wire = 1;
    s->credit_steps = s->credit_steps_inter = 8;
    s->wire_in_order = true;
}

static void a_connection_sends_in_order_connections_share(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4,up=1,lat=0,hop_lat=0,alpha=0");
    double S = 1e6, B = t->links[0].bw;
    tc_flow_opts o = {0};
    tc_sched s;
    staged one = {{0, 0, 1}, {1, 1, 3}, S}, two = {{0, 0, 1}, {1, 2, 3}, S};
    credited_sched(&s, &two);
    assert_rel(flow_time(t, &s, &o), 3 * S / B, 1e-9, "two connections share rank 0's link");
    credited_sched(&s, &one);
    assert_rel(flow_time(t, &s, &o), 3 * S / B, 1e-9, "one connection: in order, then forwarded");
    o.deps = TC_DEPS_FIFO;
    credited_sched(&s, &two);
    assert_rel(flow_time(t, &s, &o), 2 * S / B, 1e-9, "fifo: rank 0's steps one after another");
    tc_topo_free(t);
}

/* PAT's rule (tc_sched.credit_in_order): a send waiting for its
 * receiver's credit holds the rank's later sends to other receivers. With
 * credits of one step, rank 0's send to rank 1 at step 1 waits until rank
 * 1 has received rank 3's S of step 0 (S / B); rank 0's send to rank 2 at
 * step 2 goes at once where connections are independent (alone until S /
 * B, then rank 1's: 2 S / B), and behind the waiting one where sends start
 * in order (both from S / B, sharing rank 0's link: 3 S / B). */
static void a_send_waiting_for_credit_holds_later_ones_in_order(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4,up=1,lat=0,hop_lat=0,alpha=0");
    double S = 1e6, B = t->links[0].bw;
    tc_flow_opts o = {0};
    tc_sched s;
    staged g = {{3, 0, 0}, {1, 1, 2}, S};
    credited_sched(&s, &g);
    s.credit_steps = s.credit_steps_inter = 1;
    assert_rel(flow_time(t, &s, &o), 2 * S / B, 1e-9, "connections apart: the later send goes first");
    s.credit_in_order = true;
    assert_rel(flow_time(t, &s, &o), 3 * S / B, 1e-9, "in order: it waits for the one waiting for credit");
    tc_topo_free(t);
}

/* One transfer half way round a 4-ring: dor takes one way, spray splits it
 * over both and gets twice the bandwidth; the path is 2 links either way. */
static void spray_splits_a_tie_over_both_directions_of_a_ring(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4,lat=1us,hop_lat=0,alpha=1us");
    hand h = {1, {{.src = 0, .dst = 2, .bytes = 1e6}}};
    tc_sched s;
    hand_sched(&s, &h, 4, 1);
    tc_flow_opts o = {0};
    assert_rel(flow_time(t, &s, &o), 1e-6 + 2e-6 + 1e6 / B400, 1e-12, "dor");
    o.multipath = TC_MULTIPATH_SPRAY;
    assert_rel(flow_time(t, &s, &o), 1e-6 + 2e-6 + 1e6 / (2 * B400), 1e-12, "spray");
    o.rate_cap_Bps = B400 / 4;
    assert_rel(flow_time(t, &s, &o), 1e-6 + 2e-6 + 1e6 / (B400 / 4), 1e-12, "capped");
    tc_topo_free(t);
}

/* Two endpoints behind one NIC share its fabric port (nics=2 on nodes of
 * 4: endpoints 0 and 1 share NIC 0, 2 and 3 NIC 1, 4 and 5 NIC 2): 0 -> 4
 * and 1 -> 5 take twice as long as 0 -> 4 and 2 -> 6, routed and sprayed;
 * the path is 2 cables of 1 us (the NIC links add nic_lat = 0). */
static void endpoints_behind_one_nic_share_its_port(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x2,node=4,nics=2,bw=100Gbps,lat=1us,hop_lat=0,alpha=0");
    double B = 100e9 / 8, S = 1e6;
    hand shared = {2, {{.src = 0, .dst = 4, .bytes = S}, {.src = 1, .dst = 5, .bytes = S}}};
    hand apart = {2, {{.src = 0, .dst = 4, .bytes = S}, {.src = 2, .dst = 6, .bytes = S}}};
    tc_sched a, b;
    hand_sched(&a, &shared, 16, 1);
    hand_sched(&b, &apart, 16, 1);
    tc_flow_opts o = {0}, sp = {.multipath = TC_MULTIPATH_SPRAY};
    assert_rel(flow_time(t, &a, &o), 2e-6 + 2 * S / B, 1e-12, "shared NIC, routed");
    assert_rel(flow_time(t, &a, &sp), 2e-6 + 2 * S / B, 1e-12, "shared NIC, sprayed");
    assert_rel(flow_time(t, &b, &o), 2e-6 + S / B, 1e-12, "two NICs, routed");
    assert_rel(flow_time(t, &b, &sp), 2e-6 + S / B, 1e-12, "two NICs, sprayed");
    tc_topo_free(t);
    /* A slower endpoint-NIC link (PCIe) binds one transfer alone. */
    t = topo("clos:down=4x2,up=1x2,node=4,nics=2,bw=100Gbps,lat=1us,hop_lat=0,alpha=0,nic_bw=50Gbps,nic_lat=0.5us");
    hand one = {1, {{.src = 0, .dst = 4, .bytes = S}}};
    tc_sched c;
    hand_sched(&c, &one, 16, 1);
    assert_rel(flow_time(t, &c, &o), 3e-6 + S / (B / 2), 1e-12, "PCIe-bound");
    tc_topo_free(t);
}

/* Spray on a Clos avoids a down link that the routed path would take. */
static void spray_avoids_a_down_link_that_route_reports(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=2x2,up=1x2,lat=1us,hop_lat=0,alpha=0");
    /* 0 -> 2 crosses leaf 0 up to a spine; kill leaf 0's up-link to spine
     * 0 and to spine 1 in turn: one of them is the routed one. */
    hand h = {1, {{.src = 0, .dst = 2, .bytes = 1e6}}};
    tc_sched s;
    hand_sched(&s, &h, 4, 1);
    tc_flow_opts route = {0}, spray = {.multipath = TC_MULTIPATH_SPRAY};
    int failures = 0;
    for (uint32_t b = 0; b < 2; b++) {
        uint32_t l = t->up_lbase[2] + 2 * (0 * 2 + b);
        double keep = t->links[l].bw;
        t->links[l].bw = 0;
        double x;
        tc_err err = {{0}};
        if (tc_flow_time(t, &s, NULL, &route, &x, &err) != TC_OK) {
            failures++;
            assert_non_null(strstr(err.msg, "cut endpoint 0 off from endpoint 2"));
        }
        assert_rel(flow_time(t, &s, &spray), 4e-6 + 1e6 / B400, 1e-12, "spray around the down link");
        t->links[l].bw = keep;
    }
    assert_int_equal(failures, 1);
    tc_topo_free(t);
}

/* The per-message overhead is serialized at the sender (LogGP's o): rank 0
 * issuing 3 messages at once starts them at alpha, 2 alpha and 3 alpha. The
 * messages are short against alpha, so each has host 0's up-link to itself:
 * the last is delivered at 3 alpha + 2 us + bytes / B. Steps charges every
 * message of a 3-message sender 3 alpha and a third of the up-link for the
 * whole step, so it is the later. Rank 4 sends one message: alpha. */
static void alpha_is_paid_once_per_message_one_after_another(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=1us");
    hand h = {4,
              {{.src = 0, .dst = 1, .bytes = 1e3},
               {.src = 0, .dst = 2, .bytes = 1e3},
               {.src = 0, .dst = 3, .bytes = 1e3},
               {.src = 4, .dst = 5, .bytes = 1e3}}};
    tc_sched s;
    hand_sched(&s, &h, 8, 1);
    tc_flow_job job = {&s, NULL, 0, NULL, 0};
    tc_flow_opts o = {0};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_rel(res.jobs[0].time_s, 3e-6 + 2e-6 + 1e3 / B400, 1e-9, "three messages");
    /* Ranks 6 and 7 idle (0), 1, 4 and 5 at alpha, 2 at 2 alpha, 0 and 3 at
     * 3 alpha (plus 2 us + bytes / B): the median is the first message's. */
    assert_rel(res.jobs[0].rank_finish_median_s, 1e-6 + 2e-6 + 1e3 / B400, 1e-9, "the first message");
    tc_phase ph = {.first_step = 0, .repeat = 1};
    s.phases = &ph;
    s.nphases = 1;
    assert_true(steps_time(t, &s, TC_ROUTE_DEFAULT) >= res.jobs[0].time_s);
    tc_flow_result_free(&res);
    /* Two steps: rank 0 has sent step 0 once its third message has left (3
     * alpha + bytes / B); its step-1 messages start alpha, 2 alpha and 3
     * alpha after that (their receivers have posted by then), the last is
     * delivered at 6 alpha + 2 bytes / B + 2 us. */
    hand_sched(&s, &h, 8, 2);
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_rel(res.jobs[0].time_s, 6e-6 + 2e-6 + 2e3 / B400, 1e-9, "two steps");
    tc_flow_result_free(&res);
    tc_topo_free(t);
}

static void a_transfer_to_a_rank_beyond_the_schedule_is_bad_input(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=0");
    hand h = {2, {{.src = 0, .dst = 1, .bytes = 1e3}, {.src = 1, .dst = 4, .bytes = 1e3}}};
    tc_sched s;
    hand_sched(&s, &h, 4, 2);
    double x;
    tc_err err = {{0}};
    tc_flow_opts o = {0};
    assert_int_equal(tc_flow_time(t, &s, NULL, &o, &x, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "step 0 has a transfer from rank 1 to rank 4"));
    tc_topo_free(t);
}

static void exceeding_the_event_budget_is_bad_input(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=0");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, 1 << 20);
    /* Every step simulated: the budget counts simulated events. */
    tc_flow_opts o = {.event_budget = 100, .no_skip = true};
    double x;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_time(t, s, NULL, &o, &x, &err), TC_EINVAL);
    assert_string_equal(err.msg, "the run exceeded the event budget of 100 events; raise it with --event-budget");
    /* 14 steps of 8 transfers, 3 events each. */
    o.event_budget = 14 * 8 * 3;
    tc_flow_job job = {s, NULL, 0, NULL, 0};
    tc_flow_result res;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_int_equal(res.events, 14 * 8 * 3);
    assert_int_equal(res.events_simulated, res.events); /* no fold: every rank simulated */
    tc_flow_result_free(&res);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Ranks folded by symmetry are not simulated: the budget bounds the events
 * simulated (events_simulated), and events counts them for all ranks, so
 * it may pass the budget without error. */
static void the_event_budget_counts_simulated_events(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=64");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, 1 << 20);
    tc_flow_opts o = {0};
    tc_flow_job job = {s, NULL, 0, NULL, 0};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_true(res.fold_copies > 1);
    assert_int_equal(res.events, res.events_simulated * res.fold_copies);
    uint64_t sim = res.events_simulated;
    tc_flow_result_free(&res);
    /* a budget of exactly the simulated events runs, below the events
     * reported for all ranks */
    o.event_budget = sim;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_true(res.events > o.event_budget);
    assert_int_equal(res.events_simulated, sim);
    tc_flow_result_free(&res);
    /* one fewer is refused */
    o.event_budget = sim - 1;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "exceeded the event budget"));
    tc_sched_free(s);
    tc_topo_free(t);
}

static void a_link_with_no_bandwidth_is_no_path(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=0");
    t->links[t->up_lbase[1] + 2 * 3].bw = 0; /* host 3 -> leaf */
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, 1 << 20);
    tc_flow_opts o = {0};
    double x;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_time(t, s, NULL, &o, &x, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "cut endpoint 3 off from endpoint 4"));
    tc_sched_free(s);
    tc_topo_free(t);
}

static void a_rank_map_beyond_the_endpoints_is_bad_input(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=0");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, 1 << 20);
    uint32_t map[] = {0, 8};
    double x;
    tc_err err = {{0}};
    tc_flow_opts o = {0};
    assert_int_equal(tc_flow_time(t, s, map, &o, &x, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "maps rank 1 to endpoint 8"));
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Under the rank-level rule every dependency points to an earlier step, so
 * a schedule of valid ranks always completes: even a rank that receives in
 * every step but never sends, and a step with no transfers at all. */
static void schedules_of_valid_ranks_always_complete(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,lat=1us,hop_lat=0,alpha=0");
    hand h = {3, {{.src = 0, .dst = 3, .bytes = 1e3}, {.src = 1, .dst = 3, .bytes = 1e3}, {.src = 2, .dst = 2, .bytes = 5}}};
    tc_sched s;
    hand_sched(&s, &h, 4, 3);
    tc_flow_job job = {&s, NULL, 0, NULL, 0};
    tc_flow_opts o = {.deps = TC_DEPS_RECV};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_int_equal(res.jobs[0].transfers, 9);
    /* Two flows into host 3 share its down-link: each step 2e3 / B + 2 us,
     * and under RECV ranks 0 and 1 need nothing, so all three steps overlap:
     * 6 flows share host 3's down-link: 6e3 / B + 2 us. */
    assert_rel(res.jobs[0].time_s, 6e3 / B400 + 2e-6, 1e-9, "overlapped");
    tc_flow_result_free(&res);
    o.deps = TC_DEPS_FIFO;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    /* FIFO: each sender waits for its previous send to leave: 3 rounds of
     * 2e3 / B, the last plus 2 us of latency. */
    assert_rel(res.jobs[0].time_s, 3 * 2e3 / B400 + 2e-6, 1e-9, "fifo");
    tc_flow_result_free(&res);
    tc_topo_free(t);
}

/* ---- the trace ---- */

static void trace_is_valid_json_with_one_slice_per_transfer(void **state)
{
    (void)state;
    char path[] = "/tmp/topocc-flow-trace-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tc_topo *t = topo("clos:down=4x2,up=1x2,lat=1us,hop_lat=0,alpha=0");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, 1 << 20);
    tc_flow_job jobs[] = {{s, NULL, 0, NULL, 0}, {s, NULL, 1e-3, NULL, 0}};
    tc_flow_opts o = {.trace_path = path};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    assert_int_equal(res.trace_slices, 2 * 14 * 8);
    assert_false(res.trace_truncated);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        fail_msg("trace: %s at line %d", je.text, je.line);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_true(json_is_array(ev));
    size_t slices = 0, i;
    json_t *e;
    double last_end = 0;
    json_array_foreach(ev, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (strcmp(ph, "X") != 0)
            continue;
        slices++;
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        assert_true(dur > 0);
        assert_true(json_integer_value(json_object_get(e, "pid")) < 2);
        assert_true(json_integer_value(json_object_get(e, "tid")) < 8);
        assert_non_null(strstr(json_string_value(json_object_get(e, "name")), "step "));
        last_end = fmax(last_end, ts + dur);
    }
    assert_int_equal(slices, 2 * 14 * 8);
    /* Microseconds: the last slice ends at the makespan. */
    assert_rel(last_end, res.jobs[1].finish_s * 1e6, 1e-6, "trace end");
    json_decref(root);
    tc_flow_result_free(&res);

    o.trace_max_slices = 5;
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    assert_int_equal(res.trace_slices, 5);
    assert_true(res.trace_truncated);
    root = json_load_file(path, 0, &je);
    assert_non_null(root);
    slices = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e)
        slices += strcmp(json_string_value(json_object_get(e, "ph")), "X") == 0;
    assert_int_equal(slices, 5);
    json_decref(root);
    tc_flow_result_free(&res);

    o.trace_path = "/nonexistent-dir/trace.json";
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "cannot write trace file '/nonexistent-dir/trace.json'"));
    remove(path);
    tc_sched_free(s);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maxmin_flows_sharing_one_link_each_get_an_equal_share),
        cmocka_unit_test(maxmin_three_flows_on_two_links_match_the_classic_example),
        cmocka_unit_test(maxmin_flow_bottlenecked_elsewhere_leaves_its_share_to_others),
        cmocka_unit_test(maxmin_respects_the_rate_cap),
        cmocka_unit_test(maxmin_weighted_split_fills_links_by_fraction),
        cmocka_unit_test(maxmin_incremental_solve_equals_solving_from_scratch),
        cmocka_unit_test(maxmin_solve_by_level_equals_solving_from_scratch),
        cmocka_unit_test(flow_equals_steps_where_uncongested),
        cmocka_unit_test(straggler_under_rhd_delays_only_the_ranks_that_depend_on_it),
        cmocka_unit_test(straggler_under_dbtree_paces_the_pipeline_like_lock_step),
        cmocka_unit_test(concurrent_rings_sharing_an_uplink_each_get_half),
        cmocka_unit_test(alltoall_on_oversubscribed_clos_meets_the_cut_bound),
        cmocka_unit_test(alltoall_on_torus_lies_between_the_bound_and_steps),
        cmocka_unit_test(a_connection_sends_in_order_connections_share),
        cmocka_unit_test(a_send_waiting_for_credit_holds_later_ones_in_order),
        cmocka_unit_test(spray_splits_a_tie_over_both_directions_of_a_ring),
        cmocka_unit_test(spray_avoids_a_down_link_that_route_reports),
        cmocka_unit_test(endpoints_behind_one_nic_share_its_port),
        cmocka_unit_test(alpha_is_paid_once_per_message_one_after_another),
        cmocka_unit_test(a_transfer_to_a_rank_beyond_the_schedule_is_bad_input),
        cmocka_unit_test(exceeding_the_event_budget_is_bad_input),
        cmocka_unit_test(the_event_budget_counts_simulated_events),
        cmocka_unit_test(a_link_with_no_bandwidth_is_no_path),
        cmocka_unit_test(a_rank_map_beyond_the_endpoints_is_bad_input),
        cmocka_unit_test(schedules_of_valid_ranks_always_complete),
        cmocka_unit_test(trace_is_valid_json_with_one_slice_per_transfer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
