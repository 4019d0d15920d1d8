/*
 * test_dbtree_fa.c - dbtree-fa, dbtree's double binary trees re-parented
 * around failures (coll/dbtree_fa.c): its schedules on real buffers on
 * failed tori and Closes (all-reduce, broadcast, reduce, several roots, p
 * below the endpoints, not only powers of two), every rank interior in at
 * most one tree; on a healthy network (or one whose failures touch no tree
 * edge) it is dbtree, transfer for transfer and in all three evaluators;
 * its objective (cut-off routes, the most tree-edge routes on one directed
 * link, the links at that load, the links beyond the healthy routes),
 * computed here from the schedules' steady-state step, is never above
 * dbtree's on random draws and lower on a cable by hand; auto never picks
 * it; the Monte Carlo figures docs/MODEL.md quotes; the build on a
 * 1,024-rank torus with 1% of its cables down within its bound.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/topo.h"
#include "topocc/outcome.h"
#include "build_helpers.h"

static void down(tc_topo *t, const char *item)
{
    tc_fail_item f;
    tc_err err = {{0}};
    if (tc_fail_item_parse(item, &f, &err) || tc_topo_fail_item(t, &f, &err))
        fail_msg("%s: %s", item, err.msg);
}

/* Fails `links` random fabric cables drawn from seed. */
static void draw(tc_topo *t, double links, uint64_t seed)
{
    tc_fail_random r = {.links = links, .seed = seed};
    tc_fail_drawn d;
    tc_err err = {{0}};
    if (tc_topo_fail_random(t, &r, 0, &d, &err))
        fail_msg("%s: %s", t->spec, err.msg);
    tc_fail_drawn_free(&d);
}

static tc_sched *build(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, uint32_t root, uint32_t chunks, double bytes)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .root = root, .chunks = chunks, .bytes = bytes};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_coll_build(&req, t, &s, &err))
        fail_msg("%s %s p=%u root=%u: %s", tc_algo_name(a), tc_op_name(op), p, root, err.msg);
    return s;
}

/* The step with the most transfers: the steady state, where every tree
 * edge of both trees carries a chunk (up and down for all-reduce). */
static void steady(const tc_sched *s, tc_xfers *x)
{
    uint32_t best = 0;
    size_t most = 0;
    for (uint32_t k = 0; k < s->nsteps; k++) {
        assert_int_equal(tc_sched_emit(s, k, x), TC_OK);
        if (x->n > most)
            most = x->n, best = k;
    }
    assert_int_equal(tc_sched_emit(s, best, x), TC_OK);
}

typedef struct objective {
    uint64_t cut;   /* tree-edge routes with no path */
    uint32_t max;   /* most routes through one directed link */
    uint32_t nmax;  /* links at max */
    uint64_t detour; /* links beyond the healthy routes */
} objective;

/* dbtree-fa's objective of a schedule, from its steady-state step, on the
 * topology as it is (default routing). */
static objective objective_of(const tc_topo *t, const tc_sched *s)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    steady(s, &x);
    uint32_t *load = calloc(t->n_links, sizeof *load), mp = tc_topo_max_path(t) + 4;
    uint32_t *pa = malloc(mp * sizeof *pa), *pb = malloc(mp * sizeof *pb);
    assert_true(load && pa && pb);
    objective o = {0};
    for (size_t i = 0; i < x.n; i++) {
        uint32_t a = x.v[i].src, b = x.v[i].dst;
        uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, a, b, pa);
        if (n == TC_NO_ROUTE) {
            o.cut++;
            continue;
        }
        for (uint32_t k = 0; k < n; k++)
            load[pa[k]]++;
        uint32_t h = tc_topo_route_healthy(t, TC_ROUTE_DEFAULT, a, b, pb);
        if (n > h)
            o.detour += n - h;
    }
    for (uint32_t l = 0; l < t->n_links; l++)
        if (load[l] > o.max)
            o.max = load[l], o.nmax = 1;
        else if (load[l] && load[l] == o.max)
            o.nmax++;
    free(load), free(pa), free(pb);
    tc_xfers_free(&x);
    return o;
}

/* -1, 0, 1 as x is lower than, equal to or above y, lexicographically. */
static int obj_cmp(const objective *x, const objective *y)
{
    if (x->cut != y->cut)
        return x->cut < y->cut ? -1 : 1;
    if (x->max != y->max)
        return x->max < y->max ? -1 : 1;
    if (x->nmax != y->nmax)
        return x->nmax < y->nmax ? -1 : 1;
    if (x->detour != y->detour)
        return x->detour < y->detour ? -1 : 1;
    return 0;
}

/* Whether two schedules emit the same transfers (and segments) at every
 * step, with the same phases. */
static bool same_schedule(const tc_sched *a, const tc_sched *b)
{
    if (a->nsteps != b->nsteps || a->nphases != b->nphases || a->nblk != b->nblk || a->blk_bytes != b->blk_bytes)
        return false;
    for (uint32_t i = 0; i < a->nphases; i++) {
        const tc_phase *x = &a->phases[i], *y = &b->phases[i];
        if (x->repeat != y->repeat || x->fanout != y->fanout || x->fanin != y->fanin || x->bytes != y->bytes)
            return false;
    }
    tc_xfers x, y;
    tc_xfers_init(&x, true);
    tc_xfers_init(&y, true);
    bool same = true;
    for (uint32_t k = 0; k < a->nsteps && same; k++) {
        assert_int_equal(tc_sched_emit(a, k, &x), TC_OK);
        assert_int_equal(tc_sched_emit(b, k, &y), TC_OK);
        same = x.n == y.n && x.nseg == y.nseg;
        for (size_t i = 0; i < x.n && same; i++)
            same = x.v[i].src == y.v[i].src && x.v[i].dst == y.v[i].dst && x.v[i].bytes == y.v[i].bytes &&
                   x.v[i].reduce == y.v[i].reduce && x.v[i].seg_cnt == y.v[i].seg_cnt;
        for (size_t i = 0; i < x.nseg && same; i++)
            same = memcmp(&x.segs[i], &y.segs[i], sizeof x.segs[i]) == 0;
    }
    tc_xfers_free(&x);
    tc_xfers_free(&y);
    return same;
}

/* Every rank (but the root) forwards copies in one tree at most: which
 * half (slot < c: tree 1) its sends to children or receives from children
 * carry (as in tests/test_coll_algos1.c). */
static void interiors_disjoint(const tc_sched *s, tc_op op, uint32_t p, uint32_t root)
{
    uint32_t c = s->nblk / 2;
    unsigned *mask = calloc(p, sizeof *mask);
    assert_non_null(mask);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t t = 0; t < s->nsteps; t++) {
        assert_int_equal(tc_sched_emit(s, t, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            const tc_xfer *e = &x.v[i];
            uint32_t sl = x.segs[e->seg_off].src_slot;
            if (op == TC_OP_REDUCE ? e->dst != root : !e->reduce)
                mask[op == TC_OP_REDUCE ? e->dst : e->src] |= sl < c ? 1u : 2u;
        }
    }
    for (uint32_t r = 0; r < p; r++)
        if (op == TC_OP_ALLREDUCE || r != root)
            if (mask[r] == 3u)
                fail_msg("%s p=%u: rank %u interior in both trees", tc_op_name(op), p, r);
    tc_xfers_free(&x);
    free(mask);
}

static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_BROADCAST, TC_OP_REDUCE};

/* 1. The schedules on real buffers, on failed tori (a mesh among them)
 * and Closes, for p from 2 to the endpoints; some of them moved. */
static void data_correct_on_failed_networks(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=8x8", "torus:dims=4x4x3", "clos:down=4x4,up=1x4",
                                  "clos:down=2x4x4,up=1x2x4", "torus:dims=6x4,wrap=1x0"};
    static const uint32_t ps[] = {2, 3, 5, 7, 12, 16, 21, 29, 37, 48, 64};
    int checked = 0, moved = 0;
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (uint64_t seed = 0; seed < 2; seed++) {
            tc_topo *t = topo(specs[k]);
            draw(t, (double)(2 + seed), 100 * k + seed);
            for (size_t ip = 0; ip < sizeof ps / sizeof *ps && ps[ip] <= t->n_endpoints; ip++)
                for (int o = 0; o < 3; o++) {
                    uint32_t p = ps[ip], roots[3] = {0, p / 2, p - 1};
                    for (int ri = 0; ri < (ops[o] == TC_OP_ALLREDUCE ? 1 : 3); ri++) {
                        if (ri && roots[ri] == roots[ri - 1])
                            continue;
                        uint32_t chunks = (p + ri) % 3 ? 4 : 0; /* some at the default, 64 */
                        double bytes = 4.0 * 2 * (chunks ? chunks : 64) * 3;
                        tc_sched *f = build(t, ops[o], TC_ALGO_DBTREE_FA, p, roots[ri], chunks, bytes);
                        tc_sched *d = build(t, ops[o], TC_ALGO_DBTREE, p, roots[ri], chunks, bytes);
                        tc_err err = {{0}};
                        if (tc_sched_check(f, &err))
                            fail_msg("%s p=%u %s root %u: %s", specs[k], p, tc_op_name(ops[o]), roots[ri], err.msg);
                        interiors_disjoint(f, ops[o], p, roots[ri]);
                        moved += !same_schedule(f, d);
                        checked++;
                        tc_sched_free(f);
                        tc_sched_free(d);
                    }
                }
            tc_topo_free(t);
        }
    print_message("%d dbtree-fa schedules checked on failed networks, %d re-parented\n", checked, moved);
    assert_true(checked > 300);
    assert_true(moved > checked / 4);
}

/* 2. Healthy: dbtree, transfer for transfer, and the same time in formula,
 * steps and flow; also where the failures touch no tree edge (16 ranks on
 * the first two rows of an 8x8 torus, a cable of the last row down). */
static void healthy_is_dbtree(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=8x8", "torus:dims=4x4x4", "clos:down=8x8,up=1x8",
                                  "clos:down=4x4,up=2x4,node=2"};
    static const uint32_t ps[] = {2, 5, 16, 37, 64};
    int same = 0;
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        tc_topo *t = topo(specs[k]);
        for (size_t ip = 0; ip < sizeof ps / sizeof *ps && ps[ip] <= t->n_endpoints; ip++)
            for (int o = 0; o < 3; o++) {
                uint32_t p = ps[ip], root = o ? p / 3 : 0;
                tc_sched *f = build(t, ops[o], TC_ALGO_DBTREE_FA, p, root, 0, 1 << 20);
                tc_sched *d = build(t, ops[o], TC_ALGO_DBTREE, p, root, 0, 1 << 20);
                if (!same_schedule(f, d))
                    fail_msg("%s p=%u %s: dbtree-fa differs from dbtree on a healthy network", specs[k], p,
                             tc_op_name(ops[o]));
                tc_sched_free(f);
                tc_sched_free(d);
                for (int m = 0; m < 3 && (p == 16 || m < 2); m++) {
                    tc_coll_req req = {.op = ops[o], .algo = TC_ALGO_DBTREE, .p = p, .root = root, .bytes = 1 << 20};
                    tc_eval_opts eo = {.mode = (tc_mode)m};
                    tc_result rd, rf;
                    tc_err err = {{0}};
                    assert_int_equal(tc_evaluate(t, &req, &eo, &rd, &err), TC_OK);
                    req.algo = TC_ALGO_DBTREE_FA;
                    assert_int_equal(tc_evaluate(t, &req, &eo, &rf, &err), TC_OK);
                    if (rd.time_s != rf.time_s)
                        fail_msg("%s p=%u %s mode %d: dbtree %.17g s, dbtree-fa %.17g s", specs[k], p,
                                 tc_op_name(ops[o]), m, rd.time_s, rf.time_s);
                    same++;
                }
            }
        tc_topo_free(t);
    }
    assert_true(same > 60);
    /* failures that touch no tree edge: nothing moves */
    tc_topo *t = topo("torus:dims=8x8");
    down(t, "link:126"); /* a cable of the last row, (7,7) -> (0,7) */
    for (int o = 0; o < 3; o++) {
        tc_sched *f = build(t, ops[o], TC_ALGO_DBTREE_FA, 16, o ? 3 : 0, 0, 1 << 20);
        tc_sched *d = build(t, ops[o], TC_ALGO_DBTREE, 16, o ? 3 : 0, 0, 1 << 20);
        assert_true(same_schedule(f, d));
        tc_sched_free(f);
        tc_sched_free(d);
    }
    tc_topo_free(t);
}

/* 3. The objective, from the schedules, is never above dbtree's on 36
 * random draws (8x8 and 4x4x4 tori, a 2-tier Clos whose spine cables
 * fail), and lower on some; by hand on the 8x8 torus with the cable
 * (0,0)-(1,0) down, which dbtree's edge 0 - 1 uses: dbtree's detours put 8
 * routes on 2 directed links where the healthy trees' most is 5; dbtree-fa
 * brings the most back to 5, and the step time with it (64 MiB, steps:
 * 1.5168x the healthy time for dbtree, 1.0325x for dbtree-fa). */
static void objective_never_worse(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=8x8", "torus:dims=4x4x4", "clos:down=8x8,up=1x8"};
    int lower = 0, draws = 0;
    for (uint64_t i = 0; i < 36; i++) {
        tc_topo *t = topo(specs[i % 3]);
        draw(t, (double)(1 + i % 3), 7 * i + 1);
        tc_op op = ops[i / 3 % 3];
        uint32_t p = i % 2 ? t->n_endpoints : t->n_endpoints - 9, root = op == TC_OP_ALLREDUCE ? 0 : (uint32_t)(i % p);
        tc_sched *f = build(t, op, TC_ALGO_DBTREE_FA, p, root, 0, 1 << 20);
        tc_sched *d = build(t, op, TC_ALGO_DBTREE, p, root, 0, 1 << 20);
        objective of = objective_of(t, f), od = objective_of(t, d);
        if (obj_cmp(&of, &od) > 0)
            fail_msg("%s draw %llu %s p=%u: dbtree-fa (%llu, %u, %u, %llu) above dbtree (%llu, %u, %u, %llu)",
                     specs[i % 3], (unsigned long long)i, tc_op_name(op), p, (unsigned long long)of.cut, of.max,
                     of.nmax, (unsigned long long)of.detour, (unsigned long long)od.cut, od.max, od.nmax,
                     (unsigned long long)od.detour);
        lower += obj_cmp(&of, &od) < 0;
        draws++;
        tc_sched_free(f);
        tc_sched_free(d);
        tc_topo_free(t);
    }
    print_message("dbtree-fa's objective lower than dbtree's on %d of %d draws, never above\n", lower, draws);
    assert_true(lower >= draws / 2);

    tc_topo *t = topo("torus:dims=8x8");
    tc_sched *h = build(t, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 64, 0, 0, 1 << 20);
    objective oh = objective_of(t, h);
    assert_int_equal(oh.max, 5);
    assert_int_equal(oh.detour, 0);
    tc_sched_free(h);
    down(t, "link:0"); /* (0,0) -> (1,0) and back */
    uint32_t path[64];
    assert_int_equal(tc_topo_route_healthy(t, TC_ROUTE_DEFAULT, 0, 1, path), 1);
    assert_int_equal(path[0], 0); /* dbtree's edge 0 - 1 (positions 1 and 2 of tree 1) uses the cable */
    tc_sched *d = build(t, TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 64, 0, 0, 1 << 20);
    tc_sched *f = build(t, TC_OP_ALLREDUCE, TC_ALGO_DBTREE_FA, 64, 0, 0, 1 << 20);
    objective od = objective_of(t, d), of = objective_of(t, f);
    if (od.max != 8 || od.nmax != 2 || of.max != 5 || of.detour >= od.detour)
        fail_msg("link:0 down: dbtree max %u on %u links, detour %llu; dbtree-fa max %u on %u links, detour %llu",
                 od.max, od.nmax, (unsigned long long)od.detour, of.max, of.nmax, (unsigned long long)of.detour);
    tc_sched_free(d);
    tc_sched_free(f);
    double tt[3];
    tc_topo *healthy = topo("torus:dims=8x8");
    for (int a = 0; a < 3; a++) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a == 2 ? TC_ALGO_DBTREE_FA : TC_ALGO_DBTREE, .p = 64,
                           .bytes = 64.0 * (1 << 20), .elt = 4};
        tc_eval_opts eo = {.mode = TC_MODE_STEPS};
        tc_result r;
        tc_err err = {{0}};
        assert_int_equal(tc_evaluate(a ? t : healthy, &req, &eo, &r, &err), TC_OK);
        tt[a] = r.time_s;
        if (a == 2) { /* flow runs it on the failed graph too */
            eo.mode = TC_MODE_FLOW;
            assert_int_equal(tc_evaluate(t, &req, &eo, &r, &err), TC_OK);
            assert_true(r.time_s > 0 && r.time_s >= r.lower_bound_s);
        }
    }
    if (fabs(tt[1] / tt[0] - 1.5168) > 0.0005 || fabs(tt[2] / tt[0] - 1.0325) > 0.0005)
        fail_msg("link:0 down: dbtree %.4fx, dbtree-fa %.4fx (measured 1.5168x, 1.0325x)", tt[1] / tt[0],
                 tt[2] / tt[0]);
    tc_topo_free(healthy);
    tc_topo_free(t);
}

/* auto never picks dbtree-fa (it comes after auto, which considers the
 * algorithms before itself only), on a failed network either; dbtree-fa
 * needs a topology with the ranks' endpoints. */
static void auto_never_picks_it(void **state)
{
    (void)state;
    assert_true(TC_ALGO_DBTREE_FA > TC_ALGO_AUTO);
    assert_string_equal(tc_algo_name(TC_ALGO_DBTREE_FA), "dbtree-fa");
    tc_coll_req req = {0};
    tc_err err = {{0}};
    assert_int_equal(tc_algo_parse("dbtree-fa:chunks=8", &req, &err), TC_OK);
    assert_int_equal(req.algo, TC_ALGO_DBTREE_FA);
    assert_int_equal(req.chunks, 8);
    int lo, hi;
    req.algo = TC_ALGO_AUTO;
    tc_coll_candidates(&req, &lo, &hi);
    assert_true(lo == 0 && hi == (int)TC_ALGO_AUTO);
    tc_topo *t = topo("torus:dims=8x8");
    down(t, "link:0");
    for (int o = 0; o < 3; o++)
        for (double bytes = 1 << 10; bytes <= 1 << 28; bytes *= 64) {
            tc_coll_req q = {.op = ops[o], .algo = TC_ALGO_AUTO, .p = 64, .bytes = bytes};
            tc_eval_opts eo = {.mode = TC_MODE_STEPS};
            tc_result r;
            assert_int_equal(tc_evaluate(t, &q, &eo, &r, &err), TC_OK);
            assert_true(r.algo != TC_ALGO_DBTREE_FA);
        }
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_DBTREE_FA, 8, NULL, &err));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_DBTREE_FA, 65, t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLGATHER, TC_ALGO_DBTREE_FA, 8, t, &err));
    assert_true(tc_coll_valid(TC_OP_REDUCE, TC_ALGO_DBTREE_FA, 64, t, &err));
    tc_topo_free(t);
}

static tc_failures_out *run_failures_algo(const char *a, tc_op op, const char *draw_spec, uint32_t trials,
                                          tc_mode mode, const char *algo, double bytes)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_FAILURES);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", a);
    s->ntopo = 1;
    s->ops[0] = op;
    s->nops = 1;
    s->sizes = malloc(sizeof *s->sizes);
    s->sizes[0] = bytes;
    s->nsizes = 1;
    snprintf(s->algos[0], sizeof s->algos[0], "%s", algo);
    s->mode = mode;
    s->trials = trials;
    snprintf(s->fail_random, sizeof s->fail_random, "%s", draw_spec);
    tc_err err = {{0}};
    tc_failures_out *o = NULL;
    if (tc_scenario_resolve(s, &err) != TC_OK || tc_run_failures(s, NULL, &o, &err) != TC_OK)
        fail_msg("failures: %s", err.msg);
    tc_scenario_free(s);
    return o;
}

/* 4. The figures docs/MODEL.md quotes, as `topocc failures` gives them: on
 * an 8x8 torus with 2 cables down, 20 draws (seed 1), 64 MiB all-reduce,
 * steps: dbtree's median slowdown 1.5168x (p90 1.5332x), dbtree-fa's
 * 1.0304x (p90 1.2055x); broadcast and reduce from root 0, dbtree
 * 1.2985x (1.3123x) and 1.4254x (1.8386x), dbtree-fa 1.0094x (1.0140x) and
 * 1.3762x (1.4192x). Measured, not derived: the objective is the
 * steady state's, not the time, and on 2 of the 20 draws (draws 0 and 16:
 * the steady state's busiest link carries 5 routes in both, but
 * dbtree-fa's fill and drain steps load a link with 3 where dbtree's have
 * 2) dbtree-fa is slower than dbtree, by 1.05% at most; this test pins
 * those too, and that formula (which routes on the failed graph) gives
 * steps' time on every draw. */
static void figures_on_an_8x8_torus(void **state)
{
    (void)state;
    const char *T8 = "torus:dims=8x8";
    /* p50 and p90 of dbtree, then dbtree-fa; draws where dbtree-fa is
     * slower, and its largest ratio to dbtree there */
    static const double want[3][4] = {{1.5168, 1.5332, 1.0304, 1.2055},
                                      {1.2985, 1.3123, 1.0094, 1.0140},
                                      {1.4254, 1.8386, 1.3762, 1.4192}};
    static const int want_slower[3] = {2, 4, 0};
    static const double want_worst[3] = {1.0105, 1.0046, 1};
    tc_topo *t = topo(T8);
    tc_fail_random fr;
    tc_err err = {{0}};
    assert_int_equal(tc_fail_random_parse("links=2,seed=1", &fr, &err), TC_OK);
    tc_fail_state fs = {0};
    assert_int_equal(tc_topo_fail_save(t, &fs, &err), TC_OK);
    for (int o = 0; o < 3; o++) {
        tc_failures_out *d =
            run_failures_algo(T8, ops[o], "links=2,seed=1", 20, TC_MODE_STEPS, "dbtree", 64.0 * (1 << 20));
        tc_failures_out *f =
            run_failures_algo(T8, ops[o], "links=2,seed=1", 20, TC_MODE_STEPS, "dbtree-fa", 64.0 * (1 << 20));
        double got[4] = {d->topo[0].p50, d->topo[0].p90, f->topo[0].p50, f->topo[0].p90};
        for (int k = 0; k < 4; k++)
            if (fabs(got[k] - want[o][k]) > 0.0001)
                fail_msg("%s slowdown: dbtree p50 %.4f p90 %.4f, dbtree-fa p50 %.4f p90 %.4f (docs %.4f, %.4f, %.4f, "
                         "%.4f)",
                         tc_op_name(ops[o]), got[0], got[1], got[2], got[3], want[o][0], want[o][1], want[o][2],
                         want[o][3]);
        tc_failures_out_free(d);
        tc_failures_out_free(f);
        /* draw by draw: where dbtree-fa is slower, and by how much */
        int slower = 0;
        double worst = 1;
        for (uint64_t k = 0; k < 20; k++) {
            tc_fail_drawn dr;
            assert_int_equal(tc_topo_fail_random(t, &fr, k, &dr, &err), TC_OK);
            tc_fail_drawn_free(&dr);
            double tt[2];
            for (int a = 0; a < 2; a++) {
                tc_coll_req req = {.op = ops[o], .algo = a ? TC_ALGO_DBTREE_FA : TC_ALGO_DBTREE, .p = 64,
                                   .bytes = 64.0 * (1 << 20), .elt = 4};
                tc_eval_opts eo = {.mode = TC_MODE_STEPS};
                tc_result r;
                assert_int_equal(tc_evaluate(t, &req, &eo, &r, &err), TC_OK);
                tt[a] = r.time_s;
                eo.mode = TC_MODE_FORMULA; /* routes on the failed graph too: the same time */
                assert_int_equal(tc_evaluate(t, &req, &eo, &r, &err), TC_OK);
                if (fabs(r.time_s - tt[a]) > 1e-9 * tt[a])
                    fail_msg("%s draw %llu %s: formula %.17g s, steps %.17g s", tc_op_name(ops[o]),
                             (unsigned long long)k, tc_algo_name(req.algo), r.time_s, tt[a]);
            }
            if (tt[1] > tt[0] * (1 + 1e-12)) {
                slower++;
                worst = tt[1] / tt[0] > worst ? tt[1] / tt[0] : worst;
            }
            tc_topo_fail_restore(t, &fs);
        }
        if (slower != want_slower[o] || fabs(worst - want_worst[o]) > 0.0001)
            fail_msg("%s: dbtree-fa slower than dbtree on %d draws, by up to %.4fx (measured: %d, %.4fx)",
                     tc_op_name(ops[o]), slower, worst, want_slower[o], want_worst[o]);
    }
    tc_fail_state_free(&fs);
    tc_topo_free(t);
}

/* The bound: a 1,024-rank 32x32 torus with 1% of its cables (20 of 2,048)
 * down builds in well under a second (4 sweeps, 16 partners per touched
 * index, 131,072 swaps at most); the schedule is right (sampled check). */
static void bounded_on_1024_ranks(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=32x32");
    tc_fail_random r = {0};
    tc_err err = {{0}};
    assert_int_equal(tc_fail_random_parse("links=1%,seed=3", &r, &err), TC_OK);
    tc_fail_drawn d;
    assert_int_equal(tc_topo_fail_random(t, &r, 0, &d, &err), TC_OK);
    assert_int_equal(d.ncables, 20);
    tc_fail_drawn_free(&d);
    double worst = 0;
    for (int o = 0; o < 3; o++) {
        clock_t c0 = clock();
        tc_sched *f = build(t, ops[o], TC_ALGO_DBTREE_FA, 1024, o ? 17 : 0, 0, 1 << 24);
        double s = (double)(clock() - c0) / CLOCKS_PER_SEC;
        worst = s > worst ? s : worst;
        tc_sched *dt = build(t, ops[o], TC_ALGO_DBTREE, 1024, o ? 17 : 0, 0, 1 << 24);
        objective of = objective_of(t, f), od = objective_of(t, dt);
        assert_true(obj_cmp(&of, &od) < 0);
        if (tc_sched_check_sampled(f, 16, 5, &err))
            fail_msg("%s: %s", tc_op_name(ops[o]), err.msg);
        tc_sched_free(f);
        tc_sched_free(dt);
    }
    print_message("dbtree-fa on 1,024 ranks, 20 cables down: built in %.3f s at most\n", worst);
    assert_true(worst < 1.0);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(data_correct_on_failed_networks),
        cmocka_unit_test(healthy_is_dbtree),
        cmocka_unit_test(objective_never_worse),
        cmocka_unit_test(auto_never_picks_it),
        cmocka_unit_test(figures_on_an_8x8_torus),
        cmocka_unit_test(bounded_on_1024_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
