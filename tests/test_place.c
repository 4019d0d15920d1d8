/*
 * test_place.c - placement policies (docs/MODEL.md, "Placement"): packed
 * on a Clos takes whole leaves, then pods; slice on a torus the most
 * compact cuboid (or the shape given), ranks first dimension fastest, with
 * its wraparound per dimension; an occupancy places the job among the
 * endpoints a seeded history left free, and a fragmented allocation on an
 * oversubscribed leaf is slower by the flows its up-link carries, by hand;
 * bad input is refused with one line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/place.h"

#include "build_helpers.h"

#define BW 50e9 /* 400 Gb/s, the default */

static uint32_t *place(const tc_topo *t, const tc_job_place *jp, uint32_t *p, tc_place_shape *sh)
{
    uint32_t *m = NULL;
    tc_err err = {{0}};
    if (tc_place_map_shape(t, jp, &m, p, sh, &err))
        fail_msg("%s: %s", t->spec, err.msg);
    return m;
}

static void refused(const tc_topo *t, const tc_job_place *jp, const char *needle)
{
    uint32_t *m = NULL, p = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_place_map(t, jp, &m, &p, &err), TC_EINVAL);
    assert_null(m);
    if (!strstr(err.msg, needle))
        fail_msg("expected '%s' in: %s", needle, err.msg);
    assert_null(strchr(err.msg, '\n'));
}

/* 8 ranks on clos:down=4x4x2 (leaves of 4 hosts, pods of 4 leaves): two
 * whole leaves of one pod, endpoints 0-7. */
static void packed_takes_whole_leaves(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4x2,up=1x4x2");
    tc_job_place jp = {.policy = TC_PLACE_PACKED, .ranks = 8};
    uint32_t p;
    tc_place_shape sh;
    uint32_t *m = place(t, &jp, &p, &sh);
    assert_int_equal(p, 8);
    for (uint32_t r = 0; r < 8; r++)
        assert_int_equal(m[r], r);
    assert_int_equal(sh.leaves, 2);
    assert_int_equal(sh.pods, 1);
    free(m);
    /* 20 ranks: one pod holds 16, so two pods, five leaves */
    jp.ranks = 20;
    m = place(t, &jp, &p, &sh);
    assert_int_equal(sh.leaves, 5);
    assert_int_equal(sh.pods, 2);
    free(m);
    /* scale-up nodes of 4: whole nodes, 6 ranks on 2 nodes */
    tc_topo_free(t);
    t = topo("clos:down=8x4,up=1x4,node=4");
    jp.ranks = 6;
    m = place(t, &jp, &p, &sh);
    assert_int_equal(sh.nodes, 2);
    assert_int_equal(sh.leaves, 1);
    free(m);
    tc_topo_free(t);
}

/* With an occupancy, packed takes free endpoints only, distinct, and
 * touches no more leaves than first does on the same history. */
static void packed_with_occupancy_avoids_the_history(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4x2,up=1x4x2");
    for (uint64_t seed = 1; seed <= 20; seed++) {
        tc_job_place jp = {.policy = TC_PLACE_PACKED, .ranks = 8, .seed = seed, .occupancy = 0.5};
        uint32_t p;
        tc_place_shape sh, shf;
        uint32_t *m = place(t, &jp, &p, &sh);
        assert_true(sh.occupied >= 16 && sh.occupied <= 24);
        assert_true(sh.history_jobs > 0);
        jp.policy = TC_PLACE_FIRST;
        uint32_t *f = place(t, &jp, &p, &shf);
        assert_true(sh.pods <= shf.pods);
        if (sh.pods == shf.pods)
            assert_true(sh.leaves <= shf.leaves);
        uint8_t seen[32] = {0};
        for (uint32_t r = 0; r < p; r++) {
            assert_true(m[r] < 32);
            assert_int_equal(seen[m[r]]++, 0);
        }
        /* the same seed, the same map */
        jp.policy = TC_PLACE_PACKED;
        uint32_t *m2 = place(t, &jp, &p, NULL);
        assert_memory_equal(m, m2, p * sizeof *m);
        free(m);
        free(m2);
        free(f);
    }
    tc_topo_free(t);
}

/* 16 ranks on an 8x8x8 torus: the shapes of volume 16 with the smallest
 * surface (sum of 16 / extent: 2x2x4, 2x4x2, 4x2x2 all 20; 4x4x1 is 24)
 * and the smallest largest extent (4), the lexicographically smallest:
 * 2x2x4, at the origin, first dimension fastest. */
static void slice_is_the_compact_cuboid(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=8x8x8");
    tc_job_place jp = {.policy = TC_PLACE_SLICE, .ranks = 16};
    uint32_t p;
    tc_place_shape sh;
    uint32_t *m = place(t, &jp, &p, &sh);
    assert_true(sh.slice);
    assert_int_equal(sh.extent[0], 2);
    assert_int_equal(sh.extent[1], 2);
    assert_int_equal(sh.extent[2], 4);
    for (uint32_t r = 0; r < 16; r++) {
        uint32_t x = r % 2, y = r / 2 % 2, z = r / 4;
        assert_int_equal(m[r], x + 8 * y + 64 * z);
    }
    for (int d = 0; d < 3; d++)
        assert_false(sh.wrap[d]);
    free(m);
    /* a slice spanning a whole dimension keeps its wraparound: 64 on 8x8x8 is 4x4x4, 128 is 4x4x8 */
    jp.ranks = 128;
    m = place(t, &jp, &p, &sh);
    assert_int_equal(sh.extent[0], 4);
    assert_int_equal(sh.extent[2], 8);
    assert_false(sh.wrap[0]);
    assert_true(sh.wrap[2]);
    assert_false(sh.ocs_wrap);
    free(m);
    /* ocs=4: every extent a multiple of 4, so every dimension wraps */
    jp.ocs = 4;
    m = place(t, &jp, &p, &sh);
    assert_true(sh.wrap[0] && sh.wrap[1] && sh.wrap[2] && sh.ocs_wrap);
    free(m);
    jp.ranks = 16;
    m = place(t, &jp, &p, &sh); /* 2x2x4: not all multiples of 4 */
    assert_false(sh.wrap[0] || sh.wrap[1] || sh.wrap[2] || sh.ocs_wrap);
    free(m);
    tc_topo_free(t);
}

/* slice:shape=2x2x2 without ranks: 8 ranks, endpoints of the cube; with
 * an occupancy, a free 2x2x2 box, away from the history's endpoints. */
static void slice_shape_given(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4x4x4");
    tc_job_place jp = {.policy = TC_PLACE_SLICE};
    tc_err err = {{0}};
    assert_int_equal(tc_place_slice_parse("shape=2x2x2", &jp, &err), TC_OK);
    uint32_t p;
    tc_place_shape sh;
    uint32_t *m = place(t, &jp, &p, &sh);
    assert_int_equal(p, 8);
    static const uint32_t cube[8] = {0, 1, 4, 5, 16, 17, 20, 21};
    assert_memory_equal(m, cube, sizeof cube);
    assert_true(sh.slice);
    free(m);
    char b[64];
    assert_string_equal(tc_place_slice_format(&jp, b, sizeof b), "shape=2x2x2");
    for (uint64_t seed = 1; seed <= 10; seed++) {
        jp.seed = seed;
        jp.occupancy = 0.4;
        m = place(t, &jp, &p, &sh);
        assert_true(sh.slice);
        assert_int_equal(sh.extent[0] * sh.extent[1] * sh.extent[2], 8);
        assert_true(sh.occupied >= 25);
        free(m);
    }
    tc_topo_free(t);
}

/* Fragmentation on an oversubscribed leaf: clos:down=4x4,up=1x1 (leaves of
 * 4 hosts and one up-link each, 4:1). A 4-rank direct all-reduce (a
 * reduce-scatter then an all-gather, each rank sending S/4 to each of the
 * 3 others at once), steps mode: packed on one leaf, each host link
 * carries 3 flows, a phase takes 3 (S/4) / B; occupancy 0.7 with seed 1
 * leaves the job split 2 + 2 over two leaves, and each leaf's up-link
 * carries 2 x 2 = 4 flows: 4 (S/4) / B, 4/3 the time. */
static void fragmented_is_slower_on_an_oversubscribed_leaf(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x1");
    tc_job_place jp = {.policy = TC_PLACE_PACKED, .ranks = 4};
    uint32_t p;
    tc_place_shape sh;
    uint32_t *packed = place(t, &jp, &p, &sh);
    assert_int_equal(sh.leaves, 1);
    jp.seed = 1;
    jp.occupancy = 0.7;
    uint32_t *frag = place(t, &jp, &p, &sh);
    assert_int_equal(sh.leaves, 2);
    uint32_t per_leaf[4] = {0};
    for (uint32_t r = 0; r < 4; r++)
        per_leaf[frag[r] / 4]++;
    for (int l = 0; l < 4; l++)
        assert_true(per_leaf[l] == 0 || per_leaf[l] == 2);
    double S = 64.0 * 1048576, tp, tf;
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_DIRECT, .p = 4, .bytes = S};
    tc_result r;
    tc_err err = {{0}};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DMODK, .rank_map = packed};
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    tp = r.time_s;
    o.rank_map = frag;
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    tf = r.time_s;
    /* bandwidth terms; latency and overhead (a few us) within 1% */
    double hp = 2 * 3 * (S / 4) / BW, hf = 2 * 4 * (S / 4) / BW;
    if (fabs(tp - hp) > 0.01 * hp || fabs(tf - hf) > 0.01 * hf)
        fail_msg("packed %g s (by hand %g), fragmented %g s (by hand %g)", tp, hp, tf, hf);
    assert_true(tf > 1.3 * tp);
    free(packed);
    free(frag);
    tc_topo_free(t);
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    tc_topo *torus = topo("torus:dims=4x4x4"), *clos = topo("clos:down=4x4,up=1x4");
    tc_job_place jp = {.policy = TC_PLACE_PACKED, .ranks = 4};
    refused(torus, &jp, "packed needs a Clos");
    jp.policy = TC_PLACE_SLICE;
    refused(clos, &jp, "slice needs a torus");
    tc_err err = {{0}};
    assert_int_equal(tc_place_slice_parse("shape=2x2x8", &jp, &err), TC_OK);
    jp.ranks = 0;
    refused(torus, &jp, "does not fit the torus");
    assert_int_equal(tc_place_slice_parse("shape=2x2", &jp, &err), TC_OK);
    jp.ranks = 8;
    refused(torus, &jp, "holds 4 endpoints but the job has 8");
    assert_int_equal(tc_place_slice_parse("shape=2x0", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_slice_parse("size=4", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_slice_parse("ocs=0", &jp, &err), TC_EINVAL);
    /* a cube of edge 1 is none, as cluster --ocs refuses it */
    assert_int_equal(tc_place_slice_parse("ocs=1", &jp, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "2 to 1024"));
    /* an empty item, as a topology spec refuses it */
    assert_int_equal(tc_place_slice_parse(",shape=2x2", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_slice_parse("shape=2x2,", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_spec_parse("random:,seed=1", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_spec_parse("slice:shape=2x2,,ocs=2", &jp, &err), TC_EINVAL);
    assert_int_equal(tc_place_spec_parse("slice:shape=2x2,ocs=2", &jp, &err), TC_OK);
    tc_place_slice_parse("auto", &jp, &err);
    jp.ranks = 7;
    refused(torus, &jp, "no slice of 7 ranks");
    jp.ranks = 4;
    jp.occupancy = 1;
    refused(clos, &jp, "0 <= F < 1");
    jp.occupancy = -0.1;
    refused(clos, &jp, "0 <= F < 1");
    jp.policy = TC_PLACE_FIRST;
    jp.occupancy = 0.9;
    jp.ranks = 4;
    refused(clos, &jp, "endpoints are free");
    uint32_t list[] = {0, 1};
    tc_job_place l = {.policy = TC_PLACE_LIST, .endpoints = list, .nendpoints = 2, .occupancy = 0.5};
    refused(clos, &l, "not list");
    tc_place_policy pol;
    assert_int_equal(tc_place_parse("slice", &pol, &err), TC_OK);
    assert_int_equal(pol, TC_PLACE_SLICE);
    assert_int_equal(tc_place_parse("packed", &pol, &err), TC_OK);
    assert_int_equal(tc_place_parse("compact", &pol, &err), TC_EINVAL);
    tc_topo_free(torus);
    tc_topo_free(clos);
}

/* Random placement with every endpoint free is the map it always was: a
 * Fisher-Yates draw from the seed over all endpoints. */
static void random_unchanged_without_occupancy(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    tc_job_place jp = {.policy = TC_PLACE_RANDOM, .ranks = 10, .seed = 42};
    uint32_t p, all[64];
    uint32_t *m = place(t, &jp, &p, NULL);
    for (uint32_t i = 0; i < 64; i++)
        all[i] = i;
    uint64_t x = 42;
    for (uint32_t i = 0; i < 10; i++) {
        x = tc_mix64(x);
        uint32_t j = i + (uint32_t)(((x >> 11) * (double)(64 - i)) / 9007199254740992.0);
        uint32_t tmp = all[i];
        all[i] = all[j];
        all[j] = tmp;
        assert_int_equal(m[i], all[i]);
    }
    free(m);
    tc_topo_free(t);
}

/* Torus algorithms on the job's slice (--group axes=xyz: one group, the
 * slice's torus): a 4x4x4 slice of an 8x8x8 torus has no wraparound, so a
 * ring's last-to-first hop travels back along the line. torus-bi runs its
 * halves on the + and - rings at once: on the line the - ring's hops and
 * the + ring's way back share the - links, two flows each, and at 1 GiB
 * the time is twice the 4x4x4 torus's (the bandwidth term dominates). The
 * unidirectional torus algorithm's way back rides the - links it leaves
 * idle: the same bandwidth term, only 3 hops of latency more per step. */
/* A fragmented placement doubles the load on an oversubscribed leaf's
 * up-link: leaves of 4 hosts with one up-link each (4:1), a ring
 * all-reduce of S on 8 ranks, steps, alpha 0. Packed on two leaves the
 * ring leaves each leaf once each way: every link carries one flow,
 * 2 x 7 (4L + (S/8) / B) (a crossing hop has 4 links of L = 1 us).
 * Fragmented as the free endpoints of a busy cluster leave it (ranks 0, 1
 * and 4, 5 on leaf A; 2, 3 and 6, 7 on leaf B) the ring crosses between
 * the leaves four times: each up-link carries two flows each way,
 * 2 x 7 (4L + 2 (S/8) / B), twice the bandwidth term. */
static void fragmented_ring_doubles_the_uplink_load(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    static const uint32_t packed[8] = {0, 1, 2, 3, 4, 5, 6, 7}, frag[8] = {0, 1, 4, 5, 2, 3, 6, 7};
    double S = 1 << 30, t8[2];
    for (int k = 0; k < 2; k++) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 8, .bytes = S};
        tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DMODK, .rank_map = k ? frag : packed};
        tc_result r;
        tc_err err = {{0}};
        if (tc_evaluate(t, &req, &o, &r, &err))
            fail_msg("%s", err.msg);
        t8[k] = r.time_s;
    }
    double a = 2 * 7 * (4e-6 + (S / 8) / BW), b = 2 * 7 * (4e-6 + 2 * (S / 8) / BW);
    if (fabs(t8[0] - a) > 1e-9 * a || fabs(t8[1] - b) > 1e-9 * b)
        fail_msg("packed %.9g s (by hand %.9g), fragmented %.9g s (by hand %.9g)", t8[0], a, t8[1], b);
    tc_topo_free(t);
}

static double slice_time(tc_algo a, bool slice, double bytes)
{
    tc_topo *t = topo(slice ? "torus:dims=8x8x8" : "torus:dims=4x4x4");
    tc_job_place jp = {.policy = slice ? TC_PLACE_SLICE : TC_PLACE_FIRST, .ranks = 64};
    uint32_t p = 0;
    tc_place_shape sh;
    uint32_t *map = place(t, &jp, &p, &sh);
    tc_group_spec gs = {.kind = TC_GROUP_AXES, .k = 7};
    tc_partition pt;
    tc_groups g = {.p = p};
    tc_err err = {{0}};
    if (tc_group_make(&gs, p, map, t, &pt, &g.ndims, g.dims, g.wrap, &err))
        fail_msg("group: %s", err.msg);
    g.ngroups = pt.ngroups;
    g.size = p;
    g.members = pt.members;
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .rank_map = map};
    tc_result r;
    if (tc_evaluate_groups_sweep(t, &req, &g, &bytes, 1, &o, &r, &err))
        fail_msg("evaluate %s: %s", tc_algo_name(a), err.msg);
    assert_int_equal(g.ndims, 3);
    for (int d = 0; d < 3; d++)
        assert_int_equal(g.wrap[d], !slice);
    tc_partition_free(&pt);
    free(map);
    tc_topo_free(t);
    return r.time_s;
}

static void torus_algorithms_on_a_slice_without_wraparound(void **state)
{
    (void)state;
    double S = 1 << 30;
    double bi = slice_time(TC_ALGO_TORUS_BI, true, S) / slice_time(TC_ALGO_TORUS_BI, false, S);
    double uni = slice_time(TC_ALGO_TORUS, true, S) / slice_time(TC_ALGO_TORUS, false, S);
    if (fabs(bi - 2) > 0.01 || fabs(uni - 1) > 0.01)
        fail_msg("slice over torus: torus-bi x%.4f (by hand 2), torus x%.4f (by hand 1)", bi, uni);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(packed_takes_whole_leaves),
        cmocka_unit_test(packed_with_occupancy_avoids_the_history),
        cmocka_unit_test(slice_is_the_compact_cuboid),
        cmocka_unit_test(slice_shape_given),
        cmocka_unit_test(fragmented_is_slower_on_an_oversubscribed_leaf),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(random_unchanged_without_occupancy),
        cmocka_unit_test(torus_algorithms_on_a_slice_without_wraparound),
        cmocka_unit_test(fragmented_ring_doubles_the_uplink_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
