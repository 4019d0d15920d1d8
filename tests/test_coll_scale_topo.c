/*
 * test_coll_scale_topo.c - the topology-bound algorithms at the large and odd
 * rank counts (optimized build only; test_coll_algos2.c covers every power
 * of two up to 1,024 in both builds): torus, torus-bi and torus-mp on tori
 * of 2,048 and 4,096 endpoints and on odd shapes of 129, 255, 257, 1000,
 * 1023 and 1025; hier on node sizes and hier-dc on pod sizes dividing those
 * counts. tc_sched_check proves the result on every rank and every phase's
 * metadata, the LOCAL and TORUS patterns included.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "coll_topos.h"

/* AddressSanitizer runs these 5 to 10 times slower: skipped there. */
#if !defined(__SANITIZE_ADDRESS__)
static const tc_op ring_ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};

static void build_and_check(tc_op op, tc_algo algo, uint32_t p, const tc_topo *t)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = 1000003.0};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: build failed: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    tc_sched_free(s);
}

static const struct {
    int nd;
    uint32_t dims[4];
} shapes[] = {
    {3, {8, 16, 16}}, {3, {16, 16, 16}}, {2, {3, 43}},     {3, {3, 5, 17}},
    {1, {257}},       {3, {10, 10, 10}}, {3, {3, 11, 31}}, {3, {5, 5, 41}},
};
#endif

static void torus_rings_are_exact_at_large_and_odd_rank_counts(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#else
    static const tc_algo algos[] = {TC_ALGO_TORUS, TC_ALGO_TORUS_BI, TC_ALGO_TORUS_MP};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        /* Meshes on every other shape: their rings close logically. */
        tc_topo t = torus_topo(shapes[i].nd, shapes[i].dims, i % 2 == 0);
        for (size_t a = 0; a < 3; a++)
            for (size_t o = 0; o < 3; o++)
                build_and_check(ring_ops[o], algos[a], t.n_endpoints, &t);
    }
#endif
}

static void hier_is_exact_at_large_and_odd_rank_counts(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#else
    static const struct {
        uint32_t p, G;
    } cases[] = {
        {2048, 2}, {2048, 8}, {4096, 4}, {4096, 8}, {129, 3},  {255, 5},
        {255, 15}, {1000, 8}, {1023, 3}, {1023, 31}, {1025, 5}, {1025, 25},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo t = node_topo(cases[i].p, cases[i].G);
        for (size_t o = 0; o < 3; o++)
            build_and_check(ring_ops[o], TC_ALGO_HIER, cases[i].p, &t);
    }
    /* hier-dc: the same over pods (nodes of 1 inside them). */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo t = pod_topo(cases[i].p, cases[i].G, 0);
        for (size_t o = 0; o < 3; o++)
            build_and_check(ring_ops[o], TC_ALGO_HIER_DC, cases[i].p, &t);
    }
    /* 257 is prime: no node size fits. */
    for (uint32_t G = 2; G <= 16; G++) {
        tc_topo t = node_topo(257, G);
        assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_HIER, 257, &t, NULL));
    }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torus_rings_are_exact_at_large_and_odd_rank_counts),
        cmocka_unit_test(hier_is_exact_at_large_and_odd_rank_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
