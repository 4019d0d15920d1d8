/*
 * test_coll_algos2.c - the torus ring algorithms, the hierarchical
 * algorithms (hier over nodes, hier-dc over pods), Bruck, pairwise exchange
 * and Swing: exact results on real
 * buffers over many shapes, hand-counted step structures, and rejections.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "coll_topos.h"

static tc_sched *build(tc_op op, tc_algo algo, uint32_t p, uint32_t chunks, const tc_topo *t)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = 1000003.0, .chunks = chunks};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: build failed: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return s;
}

static void build_and_check(tc_op op, tc_algo algo, uint32_t p, uint32_t chunks, const tc_topo *t)
{
    tc_err err = {{0}};
    tc_sched *s = build(op, algo, p, chunks, t);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u chunks=%u: %s", tc_op_name(op), tc_algo_name(algo), p, chunks, err.msg);
    tc_sched_free(s);
}

static const tc_op ring_ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
static const tc_algo torus_algos[] = {TC_ALGO_TORUS, TC_ALGO_TORUS_BI, TC_ALGO_TORUS_MP};

static void torus_rings_are_exact_on_many_shapes(void **state)
{
    (void)state;
    static const struct {
        int nd;
        uint32_t dims[4];
    } shapes[] = {
        {1, {1}},       {1, {2}},       {1, {7}},       {2, {2, 2}},    {2, {3, 5}},    {2, {4, 4}},
        {2, {1, 6}},    {2, {5, 2}},    {3, {2, 3, 4}}, {3, {4, 1, 3}}, {3, {5, 5, 5}}, {3, {4, 4, 4}},
        {4, {2, 3, 2, 3}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int w = 0; w < 2; w++) {
            tc_topo t = torus_topo(shapes[i].nd, shapes[i].dims, w);
            for (size_t a = 0; a < 3; a++)
                for (size_t o = 0; o < 3; o++) {
                    build_and_check(ring_ops[o], torus_algos[a], t.n_endpoints, 0, &t);
                    if (t.n_endpoints <= 30)
                        build_and_check(ring_ops[o], torus_algos[a], t.n_endpoints, 3, &t);
                }
        }
}

static void torus_rings_are_exact_on_8x8x8(void **state)
{
    (void)state;
    uint32_t dims[] = {8, 8, 8};
    tc_topo t = torus_topo(3, dims, true);
    for (size_t a = 0; a < 3; a++)
        for (size_t o = 0; o < 3; o++)
            build_and_check(ring_ops[o], torus_algos[a], 512, 0, &t);
}

/* Every power of two up to 1,024 that the shapes above miss (1, 2, 4, 16, 64
 * and 512 are there), meshes included (2,048, 4,096 and odd counts:
 * test_coll_scale_topo.c). */
static void torus_rings_are_exact_at_every_power_of_two(void **state)
{
    (void)state;
    static const struct {
        int nd;
        uint32_t dims[4];
        bool wrap;
    } shapes[] = {
        {3, {2, 2, 2}, true},    {3, {2, 4, 4}, false}, {3, {4, 4, 8}, true},
        {4, {4, 4, 4, 4}, true}, {3, {8, 8, 16}, true}, {2, {32, 32}, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        tc_topo t = torus_topo(shapes[i].nd, shapes[i].dims, shapes[i].wrap);
        for (size_t a = 0; a < 3; a++)
            for (size_t o = 0; o < 3; o++)
                build_and_check(ring_ops[o], torus_algos[a], t.n_endpoints, 0, &t);
    }
}

static void torus_allreduce_on_4x4_takes_two_times_3_plus_3_steps(void **state)
{
    (void)state;
    uint32_t dims[] = {4, 4};
    tc_topo t = torus_topo(2, dims, true);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS, 16, 0, &t);
    assert_int_equal(s->nsteps, 2 * (3 + 3));
    /* One phase per dimension stage: RS x, RS y, AG y, AG x. */
    assert_int_equal(s->nphases, 4);
    static const uint32_t masks[] = {1u << 0, 1u << 2, 1u << 2, 1u << 0};
    static const double blocks[] = {4, 1, 1, 4};
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(s->phases[i].repeat, 3);
        assert_int_equal(s->phases[i].pat, TC_PAT_TORUS);
        assert_int_equal(s->phases[i].dims_mask, masks[i]);
        assert_int_equal(s->phases[i].fanout, 1);
        assert_true(s->phases[i].bytes == blocks[i] * s->blk_bytes);
    }
    tc_sched_free(s);
    s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, 16, 0, &t);
    assert_int_equal(s->nsteps, 12);
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].fanout, 2);
        assert_int_equal(s->phases[i].dims_mask & 0x3, i == 0 || i == 3 ? 0x3 : 0);
    }
    tc_sched_free(s);
}

static void torus_mp_keeps_all_2D_ports_busy(void **state)
{
    (void)state;
    uint32_t dims[] = {4, 4, 4};
    tc_topo t = torus_topo(3, dims, true);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS_MP, 64, 0, &t);
    assert_int_equal(s->nsteps, 2 * (3 + 3 + 3));
    double total = 0;
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].fanout, 6);
        assert_int_equal(s->phases[i].fanin, 6);
        assert_int_equal(s->phases[i].dims_mask, 0x3F);
        total += s->phases[i].repeat * s->phases[i].rank_bytes;
    }
    /* Each rank sends 2 (N-1)/N n in all, spread over its 2D ports. */
    assert_true(total > 2.0 * 63 / 64 * 1000003.0 * (1 - 1e-9));
    assert_true(total < 2.0 * 63 / 64 * 1000003.0 * (1 + 1e-9));
    tc_sched_free(s);

    /* Unequal sizes: parts change stage at different times, but every step
     * still uses the rings of both directions of some dimension. */
    uint32_t d2[] = {2, 3, 5};
    t = torus_topo(3, d2, false);
    s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS_MP, 30, 0, &t);
    assert_int_equal(s->nsteps, 2 * (1 + 2 + 4));
    for (uint32_t i = 0; i < s->nphases; i++)
        assert_int_equal(s->phases[i].pat, TC_PAT_TORUS);
    tc_sched_free(s);
}

static void torus_rings_reject_other_topologies(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo clos = node_topo(64, 0);
    uint32_t dims[] = {4, 4, 4};
    tc_topo t = torus_topo(3, dims, true);
    for (size_t a = 0; a < 3; a++) {
        assert_false(tc_coll_valid(TC_OP_ALLREDUCE, torus_algos[a], 64, &clos, &err));
        assert_non_null(strstr(err.msg, "torus"));
        assert_false(tc_coll_valid(TC_OP_ALLREDUCE, torus_algos[a], 64, NULL, &err));
        assert_false(tc_coll_valid(TC_OP_ALLREDUCE, torus_algos[a], 32, &t, &err));
        assert_non_null(strstr(err.msg, "64 endpoints"));
        assert_false(tc_coll_valid(TC_OP_ALLTOALL, torus_algos[a], 64, &t, &err));
        assert_false(tc_coll_valid(TC_OP_BROADCAST, torus_algos[a], 64, &t, &err));
        assert_true(tc_coll_valid(TC_OP_REDUCESCATTER, torus_algos[a], 64, &t, &err));
    }
}

/* Node sizes 2, 4, 8: every multiple up to 70, every power of two up to
 * 1,024, and 1000. */
static void hier_is_exact_for_node_sizes_2_4_8(void **state)
{
    (void)state;
    static const uint32_t G[] = {2, 4, 8};
    for (size_t g = 0; g < 3; g++) {
        uint32_t ps[80], n = 0;
        for (uint32_t p = 2; p <= 70; p++)
            ps[n++] = p;
        for (uint32_t p = 128; p <= 1024; p *= 2)
            ps[n++] = p;
        ps[n++] = 1000;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t p = ps[i];
            tc_topo t = node_topo(p, G[g]);
            bool ok = p % G[g] == 0 && p > G[g];
            for (size_t o = 0; o < 3; o++) {
                assert_int_equal(tc_coll_valid(ring_ops[o], TC_ALGO_HIER, p, &t, NULL), ok);
                if (ok)
                    build_and_check(ring_ops[o], TC_ALGO_HIER, p, p <= 24 ? 2 : 0, &t);
            }
        }
    }
}

static void hier_allreduce_has_intra_inter_intra_phases(void **state)
{
    (void)state;
    tc_topo t = node_topo(32, 4);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_HIER, 32, 0, &t);
    assert_int_equal(s->nsteps, 2 * (4 - 1) + 2 * (8 - 1));
    assert_int_equal(s->nphases, 4);
    assert_int_equal(s->phases[0].pat, TC_PAT_LOCAL);
    assert_int_equal(s->phases[0].arg, 1);
    assert_true(s->phases[0].bytes == 8 * s->blk_bytes);
    assert_int_equal(s->phases[1].pat, TC_PAT_SHIFT);
    assert_int_equal(s->phases[1].arg, 4);
    assert_true(s->phases[1].bytes == s->blk_bytes);
    assert_int_equal(s->phases[2].pat, TC_PAT_SHIFT);
    assert_int_equal(s->phases[3].pat, TC_PAT_LOCAL);
    tc_sched_free(s);
}

static void hier_rejects_topologies_without_nodes(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo t = node_topo(64, 0);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 64, &t, &err));
    assert_non_null(strstr(err.msg, "node"));
    t.node_size = 1;
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 64, &t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 64, NULL, &err));
    t.node_size = 8;
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 60, &t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 8, &t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLTOALL, TC_ALGO_HIER, 64, &t, &err));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 64, &t, &err));
}

/* hier-dc: pods of 1 to 8 endpoints (with scale-up nodes inside some),
 * every multiple of the pod size up to 70 and a few beyond, chunked on the
 * small counts; pods of 1 make the intra-pod rings empty. */
static void hier_dc_is_exact_for_pod_sizes_1_to_8(void **state)
{
    (void)state;
    static const uint32_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (size_t g = 0; g < sizeof ns / sizeof *ns; g++) {
        uint32_t n = ns[g], ps[90], k = 0;
        for (uint32_t p = 2; p <= 70; p++)
            ps[k++] = p;
        ps[k++] = 128, ps[k++] = 256, ps[k++] = 1000;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t p = ps[i];
            tc_topo t = pod_topo(p, n, n % 2 == 0 ? 2 : 0);
            bool ok = p % n == 0 && p > n;
            for (size_t o = 0; o < 3; o++) {
                assert_int_equal(tc_coll_valid(ring_ops[o], TC_ALGO_HIER_DC, p, &t, NULL), ok);
                if (ok)
                    build_and_check(ring_ops[o], TC_ALGO_HIER_DC, p, p <= 24 ? 3 : 0, &t);
            }
        }
    }
}

/* The groups are pods: intra-pod rings declared GENERIC (the fabric carries
 * them), inter-pod rings a shift by the pod size; nodes inside the pods do
 * not change it. */
static void hier_dc_allreduce_rings_inside_pods_then_across_them(void **state)
{
    (void)state;
    tc_topo t = pod_topo(32, 8, 4);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 32, 0, &t);
    assert_int_equal(s->nsteps, 2 * (8 - 1) + 2 * (4 - 1));
    assert_int_equal(s->nphases, 4);
    assert_int_equal(s->phases[0].pat, TC_PAT_GENERIC);
    assert_true(s->phases[0].bytes == 4 * s->blk_bytes);
    assert_int_equal(s->phases[1].pat, TC_PAT_SHIFT);
    assert_int_equal(s->phases[1].arg, 8);
    assert_true(s->phases[1].bytes == s->blk_bytes);
    assert_int_equal(s->phases[3].pat, TC_PAT_GENERIC);
    tc_sched_free(s);
}

static void hier_dc_rejects_topologies_without_pods(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo nodes = node_topo(64, 8);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 64, &nodes, &err));
    assert_non_null(strstr(err.msg, "multidc"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 64, NULL, &err));
    tc_topo t = pod_topo(64, 16, 0);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 60, &t, &err));
    assert_non_null(strstr(err.msg, "pod"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 16, &t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLTOALL, TC_ALGO_HIER_DC, 64, &t, &err));
    assert_false(tc_coll_valid(TC_OP_BROADCAST, TC_ALGO_HIER_DC, 64, &t, &err));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 64, &t, &err));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER_DC, 32, &t, &err));
}

static void pairwise_alltoall_takes_p_minus_1_steps(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 8, 0, NULL);
    assert_int_equal(s->nsteps, 7);
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_XOR);
        assert_int_equal(s->phases[i].arg, i + 1);
    }
    tc_sched_free(s);
    s = build(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 6, 0, NULL);
    assert_int_equal(s->nsteps, 5);
    assert_int_equal(s->phases[0].pat, TC_PAT_SHIFT);
    tc_sched_free(s);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_PAIRWISE, 8, NULL, NULL));
}

static void bruck_takes_ceil_log2_p_steps(void **state)
{
    (void)state;
    static const uint32_t ps[] = {2, 3, 5, 8, 9, 1000};
    static const uint32_t steps[] = {1, 2, 3, 3, 4, 10};
    for (size_t i = 0; i < 6; i++) {
        tc_sched *s = build(TC_OP_ALLGATHER, TC_ALGO_BRUCK, ps[i], 0, NULL);
        assert_int_equal(s->nsteps, steps[i]);
        tc_sched_free(s);
        s = build(TC_OP_ALLTOALL, TC_ALGO_BRUCK, ps[i], 0, NULL);
        assert_int_equal(s->nsteps, steps[i]);
        tc_sched_free(s);
    }
    /* All-gather on 5 ranks: 1, 2, then the one block still missing. */
    tc_sched *s = build(TC_OP_ALLGATHER, TC_ALGO_BRUCK, 5, 0, NULL);
    assert_true(s->phases[1].bytes == 2 * s->blk_bytes);
    assert_true(s->phases[2].bytes == 1 * s->blk_bytes);
    assert_int_equal(s->phases[2].arg, -4);
    tc_sched_free(s);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_BRUCK, 8, NULL, NULL));
}

static void swing_takes_2_log2_p_steps_at_distances_1_1_3_5_11(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_SWING, 64, 0, NULL);
    assert_int_equal(s->nsteps, 12);
    static const uint32_t dist[] = {1, 1, 3, 5, 11, 21};
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (uint32_t st = 0; st < 6; st++) {
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        assert_int_equal(x.n, 64);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t d = (x.v[i].dst + 64 - x.v[i].src) % 64;
            assert_int_equal(d < 32 ? d : 64 - d, dist[st]);
        }
        /* Bandwidth-optimal: step s carries p / 2^(s+1) blocks. */
        assert_true(s->phases[st].bytes == (64u >> (st + 1)) * s->blk_bytes);
    }
    tc_xfers_free(&x);
    tc_sched_free(s);
    tc_err err = {{0}};
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_SWING, 6, NULL, &err));
    assert_non_null(strstr(err.msg, "power-of-two"));
}

/* Every algorithm builds and emits at 65,536 ranks (its speed is measured in
 * bench/bench_schedgen.c, not asserted here). */
static void every_algorithm_builds_and_emits_at_65536_ranks(void **state)
{
    (void)state;
    uint32_t dims[] = {16, 16, 16, 16};
    tc_topo tor = torus_topo(4, dims, true);
    tc_topo node = node_topo(65536, 8);
    static const struct {
        tc_op op;
        tc_algo algo;
        int topo; /* 0 none, 1 torus, 2 nodes */
    } cases[] = {
        {TC_OP_ALLGATHER, TC_ALGO_BRUCK, 0},      {TC_OP_ALLTOALL, TC_ALGO_BRUCK, 0},
        {TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 0},    {TC_OP_ALLREDUCE, TC_ALGO_SWING, 0},
        {TC_OP_ALLREDUCE, TC_ALGO_TORUS, 1},      {TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, 1},
        {TC_OP_ALLREDUCE, TC_ALGO_TORUS_MP, 1},   {TC_OP_ALLREDUCE, TC_ALGO_HIER, 2},
    };
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tc_topo *t = cases[i].topo == 1 ? &tor : cases[i].topo == 2 ? &node : NULL;
        tc_sched *s = build(cases[i].op, cases[i].algo, 65536, 0, t);
        assert_int_equal(tc_sched_emit(s, s->nsteps - 1, &x), TC_OK);
        assert_true(x.n >= 65536);
        tc_sched_free(s);
    }
    tc_xfers_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torus_rings_are_exact_on_many_shapes),
        cmocka_unit_test(torus_rings_are_exact_on_8x8x8),
        cmocka_unit_test(torus_rings_are_exact_at_every_power_of_two),
        cmocka_unit_test(torus_allreduce_on_4x4_takes_two_times_3_plus_3_steps),
        cmocka_unit_test(torus_mp_keeps_all_2D_ports_busy),
        cmocka_unit_test(torus_rings_reject_other_topologies),
        cmocka_unit_test(hier_is_exact_for_node_sizes_2_4_8),
        cmocka_unit_test(hier_allreduce_has_intra_inter_intra_phases),
        cmocka_unit_test(hier_rejects_topologies_without_nodes),
        cmocka_unit_test(hier_dc_is_exact_for_pod_sizes_1_to_8),
        cmocka_unit_test(hier_dc_allreduce_rings_inside_pods_then_across_them),
        cmocka_unit_test(hier_dc_rejects_topologies_without_pods),
        cmocka_unit_test(pairwise_alltoall_takes_p_minus_1_steps),
        cmocka_unit_test(bruck_takes_ceil_log2_p_steps),
        cmocka_unit_test(swing_takes_2_log2_p_steps_at_distances_1_1_3_5_11),
        cmocka_unit_test(every_algorithm_builds_and_emits_at_65536_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
