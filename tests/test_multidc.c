/*
 * test_multidc.c - the evaluators on multi-datacenter topologies (pods
 * joined by long-haul links): times across pods worked out by hand in
 * formula, steps and flow, hier-dc against its hand count, the long-haul
 * cut of the lower bound by hand, and on randomized cases (Clos and torus
 * pods, scale-up nodes and shared NICs, 2 to 4 pods, 1 or 2 long-haul links
 * per pair, every operation and valid algorithm, NCCL's included, first or
 * random placement, a degraded link in some) formula equal to steps and
 * every evaluator at least the lower bound. Failures, placement and the
 * refusals.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/eval.h"
#include "topocc/flow.h"
#include "topocc/place.h"

#if defined(__SANITIZE_ADDRESS__)
#define NCASES 60
#else
#define NCASES 300
#endif
#define SEED0 20270611ull

/* Two pods of clos:down=2x2,up=1x2 (hosts=4,radix=4): 400 Gbps, 50 ns
 * cables, 100 ns per switch, alpha 1.1 us; one long-haul cable of 10 Gbps
 * and 20 ms between them. */
#define MDC2 "multidc:pods=2,pod=clos,hosts=4,radix=4,wan_bw=10Gbps,wan_lat=20ms"
#define ALPHA 1.1e-6
#define WAN_BW (10e9 / 8)
#define POD_BW (400e9 / 8)
/* Between pods: 4 pod cables and 2 gateway cables of 50 ns, the long-haul
 * cable, 6 switches of 100 ns (leaf, spine, gateway, gateway, spine, leaf). */
#define CROSS (6 * 50e-9 + 20e-3 + 6 * 100e-9)

static tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g (rel %.3g)", what, a, b, fabs(a - b) / fmax(fabs(a), fabs(b)));
}

static tc_result eval_map(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_mode mode,
                          const uint32_t *map)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = mode, .routing = TC_ROUTE_DEFAULT, .rank_map = map};
    tc_result res;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &res, &err) != TC_OK)
        fail_msg("%s/%s p=%u %s: %s", tc_op_name(op), tc_algo_name(algo), p, tc_mode_name(mode), err.msg);
    return res;
}

/* Ranks 0 and 1 on endpoints 0 and 4, one in each pod: the ring all-reduce
 * is two steps (reduce-scatter, all-gather), each a transfer of S/2 each
 * way over the long-haul cable, alone on it: alpha + the path + S/2 over
 * 10 Gbps. The direct all-to-all is one such step. The three evaluators
 * agree, and the lower bound is the long-haul cut: S must cross each way,
 * S / 10 Gbps, delivered a path later. */
static void two_ranks_across_pods_cost_the_long_haul_path_in_every_evaluator(void **state)
{
    (void)state;
    tc_topo *t = topo(MDC2);
    const uint32_t map[] = {0, 4};
    double S = 64.0 * 1048576;
    double want = 2 * (ALPHA + CROSS + S / 2 / WAN_BW);
    const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (int m = 0; m < 3; m++) {
        tc_result r = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S, modes[m], map);
        assert_rel(r.time_s, want, m == 2 ? 1e-9 : 1e-12, tc_mode_name(modes[m]));
        assert_rel(r.lower_bound_s, CROSS + S / WAN_BW, 1e-12, "lower bound");
        r = eval_map(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 2, S, modes[m], map);
        assert_rel(r.time_s, ALPHA + CROSS + S / 2 / WAN_BW, m == 2 ? 1e-9 : 1e-12, "direct all-to-all");
    }
    /* Two ranks in one pod, on one leaf: the long-haul link is no part of it. */
    tc_result r = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S, TC_MODE_STEPS, NULL);
    assert_rel(r.time_s, 2 * (ALPHA + 200e-9 + S / 2 / POD_BW), 1e-12, "inside a pod");
    tc_topo_free(t);
}

/* hier-dc on the 8 endpoints: 2 x 3 ring steps inside the pods, each S/4
 * (N = 2 blocks of S/8) at 400 Gbps over the slowest hop (leaf, spine,
 * leaf: 4 cables, 3 switches, 500 ns), no link shared; then one
 * reduce-scatter and one all-gather step between the pods, 4 transfers of
 * S/8 each way sharing the long-haul cable. */
static void hier_dc_allreduce_matches_the_hand_count(void **state)
{
    (void)state;
    tc_topo *t = topo(MDC2);
    double S = 64.0 * 1048576;
    double intra = ALPHA + 500e-9 + (S / 4) / POD_BW, inter = ALPHA + CROSS + 4 * (S / 8) / WAN_BW;
    double want = 6 * intra + 2 * inter;
    tc_result f = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_FORMULA, NULL);
    tc_result s = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_STEPS, NULL);
    tc_result l = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_FLOW, NULL);
    assert_rel(f.time_s, want, 1e-12, "formula");
    assert_rel(s.time_s, want, 1e-12, "steps");
    /* flow: each rank's chain pays its own hops' latencies, the 200 ns of a
     * leaf's where steps charges every intra step its slowest 500 ns hop */
    assert_true(l.time_s <= want * (1 + 1e-12) && l.time_s >= want - 6 * 300e-9);
    /* The cut: every pod's 4 ranks against the other 4. */
    assert_rel(s.lower_bound_s, CROSS + S / WAN_BW, 1e-12, "all-reduce bound");
    s = eval_map(t, TC_OP_ALLGATHER, TC_ALGO_HIER_DC, 8, S, TC_MODE_STEPS, NULL);
    assert_rel(s.lower_bound_s, CROSS + (S / 2) / WAN_BW, 1e-12, "all-gather bound");
    s = eval_map(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_STEPS, NULL);
    assert_rel(s.lower_bound_s, CROSS + (4.0 * 4 / 8 * S) / WAN_BW, 1e-12, "all-to-all bound");
    /* auto considers hier-dc: it is at most hier-dc's time. */
    tc_result a = eval_map(t, TC_OP_ALLREDUCE, TC_ALGO_AUTO, 8, S, TC_MODE_STEPS, NULL);
    assert_true(a.time_s <= s.time_s * (1 + 1e-12) || a.time_s <= want * (1 + 1e-12));
    tc_topo_free(t);
}

/* A long-haul cable failed: with a second one the routes take it (the
 * same time as a single cable), with none the ranks are cut off. */
static void a_failed_long_haul_cable_moves_the_traffic_or_cuts_the_pods_apart(void **state)
{
    (void)state;
    double S = 16.0 * 1048576;
    tc_topo *one = topo(MDC2);
    tc_topo *two = topo("multidc:pods=2,pod=clos,hosts=4,radix=4,wan_bw=10Gbps,wan_lat=20ms,wan_links=2");
    tc_err err = {{0}};
    assert_int_equal(tc_topo_fail_link(two, two->wan_lbase, true, &err), TC_OK);
    double a = eval_map(one, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_STEPS, NULL).time_s;
    double b = eval_map(two, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_STEPS, NULL).time_s;
    assert_rel(a, b, 1e-12, "one cable left");
    double c = eval_map(two, TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 8, S, TC_MODE_FLOW, NULL).time_s;
    assert_true(c <= b * (1 + 1e-12) && c >= b - 6 * 300e-9); /* as hier_dc_allreduce_matches_the_hand_count */
    assert_int_equal(tc_topo_fail_link(one, one->wan_lbase, true, &err), TC_OK);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 8, .bytes = S};
    tc_eval_opts o = {.mode = TC_MODE_STEPS};
    tc_result r;
    assert_int_equal(tc_evaluate(one, &req, &o, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "cut"));
    tc_topo_free(one), tc_topo_free(two);
}

static void multidc_placement_and_refusals(void **state)
{
    (void)state;
    tc_topo *t = topo("multidc:pods=3,pod=clos,down=4x2,up=1x2,node=2,wan_bw=100Gbps,wan_lat=5ms");
    tc_err err = {{0}};
    uint32_t *map = NULL, p = 0;
    tc_place_shape sh;
    tc_job_place jp = {.policy = TC_PLACE_FIRST, .ranks = 12};
    assert_int_equal(tc_place_map_shape(t, &jp, &map, &p, &sh, &err), TC_OK);
    assert_int_equal(sh.pods, 2);
    assert_int_equal(sh.nodes, 6);
    char buf[256];
    assert_non_null(strstr(tc_place_shape_format(&sh, buf, sizeof buf), "2 pods"));
    free(map);
    jp.policy = TC_PLACE_PACKED;
    assert_int_equal(tc_place_map(t, &jp, &map, &p, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "multidc"));
    /* hier-dc needs whole pods in rank order */
    jp = (tc_job_place){.policy = TC_PLACE_RANDOM, .ranks = 16, .seed = 3};
    assert_int_equal(tc_place_map(t, &jp, &map, &p, &err), TC_OK);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_HIER_DC, .p = 16, .bytes = 1e6};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .rank_map = map};
    tc_result r;
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "hier-dc"));
    free(map);
    /* flow's spray splits over a Clos's or a torus's paths only */
    tc_sched *s = NULL;
    req.algo = TC_ALGO_RING;
    assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
    tc_flow_opts fo = {.multipath = TC_MULTIPATH_SPRAY};
    double x;
    assert_int_equal(tc_flow_time(t, s, NULL, &fo, &x, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "multidc"));
    tc_sched_free(s);
    tc_topo_free(t);
}

/* NCCL's tree over 7 ranks, the 7th alone in the second pod: its edge to
 * the tree lies off the deepest path, and the latency (up and down the
 * slowest root-to-leaf path) still crosses the long-haul link twice. */
static void nccl_tree_latency_crosses_the_long_haul_link_off_the_deepest_path(void **state)
{
    (void)state;
    tc_topo *t = topo("multidc:pods=2,wan_bw=400Gbps,wan_lat=20ms,pod=clos,down=3x2,up=1x1,lat=1us");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_TREE, .p = 7, .bytes = 1 << 20, .elt = 4};
    tc_err err = {{0}};
    const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (int m = 0; m < 3; m++) {
        tc_eval_opts o = {.mode = modes[m]};
        tc_result r;
        if (tc_evaluate(t, &req, &o, &r, &err))
            fail_msg("%s: %s", tc_mode_name(modes[m]), err.msg);
        if (!(r.time_s >= 2 * t->cross_lat && r.time_s >= r.lower_bound_s))
            fail_msg("%s: %.9g s, the long-haul path twice is %.9g s", tc_mode_name(modes[m]), r.time_s,
                     2 * t->cross_lat);
    }
    tc_topo_free(t);
}

/* ---- randomized: formula = steps, nobody below the bound ---- */

typedef struct rng {
    uint64_t x;
} rng;

static uint64_t next(rng *r)
{
    return r->x = tc_mix64(r->x);
}

static uint32_t pick(rng *r, uint32_t n)
{
    return (uint32_t)(next(r) % n);
}

static void draw_mdc(rng *r, char *spec, size_t len)
{
    static const char *bws[] = {"10Gbps", "100Gbps", "400Gbps"}, *lats[] = {"0", "50us", "2ms", "20ms"};
    char pod[160];
    switch (pick(r, 5)) {
    case 0: {
        uint32_t m1 = 2 + pick(r, 4), m2 = 2 + pick(r, 3), w2 = 1 + pick(r, m1);
        snprintf(pod, sizeof pod, "clos,down=%ux%u,up=1x%u,lat=1us%s", m1, m2, w2, m1 % 2 == 0 && pick(r, 2) ? ",node=2" : "");
        break;
    }
    case 1:
        snprintf(pod, sizeof pod, "clos,hosts=%u,radix=8,oversub=%u", 4 + 2 * pick(r, 10), 1 + 2 * pick(r, 2) /* 1 or 3 */);
        break;
    case 2: {
        uint32_t a = 2 + pick(r, 3), b = 2 + pick(r, 3);
        snprintf(pod, sizeof pod, "torus,dims=%ux%u,wrap=%ux1,lat=500ns%s", a, b, pick(r, 2), a % 2 == 0 && pick(r, 2) ? ",node=2" : "");
        break;
    }
    case 3:
        snprintf(pod, sizeof pod, "%s", pick(r, 2) ? "clos,down=4x2,up=1x2,node=4,nics=2,arch=hopper"
                                                   : "clos,down=2x2x2,up=1x2x2,node=2,node_reduce=1,arch=hopper");
        break;
    default:
        snprintf(pod, sizeof pod, "torus,dims=2x2x2,hop_lat=%uns", 50 * pick(r, 4));
        break;
    }
    snprintf(spec, len, "multidc:pods=%u,wan_bw=%s,wan_lat=%s,wan_links=%u%s,pod=%s", 2 + pick(r, 3), bws[pick(r, 3)],
             lats[pick(r, 4)], 1 + pick(r, 2), pick(r, 4) == 0 ? ",gw_bw=5Gbps" : "", pod);
}

static bool near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-18;
}

static void one_case(uint64_t seed, int *ran)
{
    rng r = {seed};
    char spec[320], what[640];
    draw_mdc(&r, spec, sizeof spec);
    tc_err err = {{0}};
    tc_topo *t = NULL;
    if (tc_topo_build(spec, &t, &err))
        fail_msg("seed %llu: %s: %s", (unsigned long long)seed, spec, err.msg);
    uint32_t n = t->n_endpoints, p = 2 + pick(&r, n - 1);
    if (pick(&r, 3) == 0) /* whole pods, more than one */
        p = t->pod_endpoints * (2 + pick(&r, t->n_pods - 1));
    tc_op op = (tc_op)pick(&r, TC_OP_COUNT);
    if (pick(&r, 3) == 0) /* the operations of the hierarchical and NCCL rings */
        op = (tc_op)pick(&r, 3);
    double bytes = 4096.0 * pow(2, (double)(next(&r) % 1000) / 1000 * 18);
    bool degrade = pick(&r, 4) == 0;
    if (degrade)
        tc_topo_degrade_link(t, pick(&r, t->n_links), 0.1 + 0.8 * (double)(next(&r) % 1000) / 1000, &err);
    tc_algo valid[TC_ALGO_COUNT];
    int nv = 0;
    for (int a = 0; a < TC_ALGO_COUNT; a++)
        if (a != TC_ALGO_AUTO && tc_coll_valid(op, (tc_algo)a, p, t, NULL) &&
            !(a == TC_ALGO_MPICH && t->node_size > 1)) /* mpich wants one rank per node (test_mpich) */
            valid[nv++] = (tc_algo)a;
    if (nv == 0) {
        tc_topo_free(t);
        return;
    }
    tc_algo algo = valid[pick(&r, (uint32_t)nv)];
    /* more of the algorithms few shapes admit */
    static const tc_algo rare[] = {TC_ALGO_HIER_DC, TC_ALGO_HIER, TC_ALGO_NCCL_TREE, TC_ALGO_NCCL_NVLS_TREE};
    for (int i = 0; i < 4; i++)
        if (tc_coll_valid(op, rare[i], p, t, NULL) && pick(&r, 2) == 0) {
            algo = rare[i];
            break;
        }
    /* NCCL's algorithms and the hierarchical ones take ranks node (pod) by node */
    bool ordered = tc_algo_is_nccl(algo) || algo == TC_ALGO_HIER || algo == TC_ALGO_HIER_DC;
    tc_job_place jp = {.policy = !ordered && pick(&r, 4) == 0 ? TC_PLACE_RANDOM : TC_PLACE_FIRST, .ranks = p,
                       .seed = seed};
    uint32_t *map = NULL, pp;
    assert_int_equal(tc_place_map(t, &jp, &map, &pp, &err), TC_OK);
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes, .elt = 4};
    if (!tc_algo_is_nccl(algo) && pick(&r, 4) == 0)
        req.chunks = 1 + pick(&r, 4);
    if (op == TC_OP_BROADCAST || op == TC_OP_REDUCE)
        req.root = pick(&r, p);
    snprintf(what, sizeof what, "seed %llu: %s %s/%s p=%u bytes=%.17g chunks=%u %s%s", (unsigned long long)seed, spec,
             tc_op_name(op), tc_algo_name(algo), p, bytes, req.chunks,
             jp.policy == TC_PLACE_RANDOM ? "random placement" : "first endpoints", degrade ? ", a degraded link" : "");
    tc_result res[3];
    const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (int m = 0; m < 3; m++) {
        tc_eval_opts o = {.mode = modes[m], .rank_map = map};
        if (tc_evaluate(t, &req, &o, &res[m], &err))
            fail_msg("%s: %s: %s", what, tc_mode_name(modes[m]), err.msg);
    }
    /* formula routes a Clos pod by D-mod-k, steps by ECMP: equal under the same routing */
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .rank_map = map,
                      .routing = tc_eval_routing(TC_MODE_FORMULA, t, TC_ROUTE_DEFAULT)};
    tc_result same;
    if (tc_evaluate(t, &req, &o, &same, &err))
        fail_msg("%s: steps under formula's routing: %s", what, err.msg);
    if (!near(res[0].time_s, same.time_s, 1e-9))
        fail_msg("%s: formula %.17g != steps %.17g", what, res[0].time_s, same.time_s);
    double lb = res[1].lower_bound_s;
    for (int m = 0; m < 3; m++)
        if (res[m].time_s < lb * (1 - 1e-9))
            fail_msg("%s: %s %.17g below the lower bound %.17g", what, tc_mode_name(modes[m]), res[m].time_s, lb);
    /* a job across pods: at least the long-haul path */
    bool across = false;
    for (uint32_t i = 0; i < p; i++)
        across |= (map ? map[i] : i) / t->pod_endpoints != (map ? map[0] : 0) / t->pod_endpoints;
    if (across && op != TC_OP_BROADCAST && op != TC_OP_REDUCE && !(lb >= t->cross_lat))
        fail_msg("%s: the bound %.17g misses the long-haul path %.17g", what, lb, t->cross_lat);
    (*ran)++;
    free(map);
    tc_topo_free(t);
}

static void formula_equals_steps_and_no_evaluator_beats_the_lower_bound(void **state)
{
    (void)state;
    int ran = 0;
    for (uint64_t i = 0; i < NCASES; i++)
        one_case(tc_mix64(SEED0 + i), &ran);
    printf("%d multidc cases\n", ran);
    assert_true(ran >= NCASES / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_ranks_across_pods_cost_the_long_haul_path_in_every_evaluator),
        cmocka_unit_test(hier_dc_allreduce_matches_the_hand_count),
        cmocka_unit_test(a_failed_long_haul_cable_moves_the_traffic_or_cuts_the_pods_apart),
        cmocka_unit_test(multidc_placement_and_refusals),
        cmocka_unit_test(nccl_tree_latency_crosses_the_long_haul_link_off_the_deepest_path),
        cmocka_unit_test(formula_equals_steps_and_no_evaluator_beats_the_lower_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
