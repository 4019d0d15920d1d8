/*
 * test_coll_algos1.c - hand-checked properties of the biring, rd, rhd,
 * binomial, dbtree and direct schedules: step counts, per-step sizes and
 * patterns, fan-out and fan-in, the double binary tree's disjoint
 * interiors, and which (operation, rank count) pairs each algorithm rejects.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "topocc/coll.h"

static tc_sched *build(tc_op op, tc_algo algo, uint32_t p, double bytes, uint32_t chunks, uint32_t root)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes, .chunks = chunks, .root = root};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return s;
}

static void rd_allreduce_takes_lg_p_exchanges(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_RD, 8, 1024, 0, 0);
    assert_int_equal(s->nsteps, 3);
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_XOR);
        assert_int_equal(s->phases[i].arg, 1 << i);
        assert_true(s->phases[i].bytes == 1024);
    }
    tc_sched_free(s);
    /* 6 ranks: fold, lg 4 = 2 exchanges, unfold. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_RD, 6, 1024, 0, 0);
    assert_int_equal(s->nsteps, 4);
    tc_sched_free(s);
    /* All-gather on 8: 1, 2, 4 blocks of n/8. */
    s = build(TC_OP_ALLGATHER, TC_ALGO_RD, 8, 800, 0, 0);
    assert_int_equal(s->nsteps, 3);
    assert_true(s->phases[0].bytes == 100 && s->phases[1].bytes == 200 && s->phases[2].bytes == 400);
    tc_sched_free(s);
}

static void rhd_halves_then_doubles(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, 800, 0, 0);
    const double want[] = {400, 200, 100, 100, 200, 400};
    /* MPICH's order: the nearest partner first, the all-gather back down
     * (rhd:order=far is tests/test_coll_order.c's). */
    const int64_t mask[] = {1, 2, 4, 4, 2, 1};
    assert_int_equal(s->nsteps, 6);
    assert_int_equal(s->nphases, 6);
    for (int i = 0; i < 6; i++) {
        assert_true(s->phases[i].bytes == want[i]);
        assert_int_equal(s->phases[i].pat, TC_PAT_XOR);
        assert_int_equal(s->phases[i].arg, mask[i]);
    }
    tc_sched_free(s);
    /* 12 ranks: fold + 2 lg 8 + unfold, the folds carrying the whole vector. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_RHD, 12, 800, 0, 0);
    assert_int_equal(s->nsteps, 8);
    assert_true(s->phases[0].bytes == 800 && s->phases[7].bytes == 800 && s->phases[1].bytes == 400);
    tc_sched_free(s);
    s = build(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 16, 1600, 0, 0);
    assert_int_equal(s->nsteps, 4);
    assert_true(s->phases[3].bytes == 100);
    tc_sched_free(s);
}

static void binomial_takes_ceil_lg_p_steps(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 5, 1000, 0, 3);
    assert_int_equal(s->nsteps, 3);
    /* MPICH's tree: each step's senders are every 2d-th rank, not a range. */
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_GENERIC);
        assert_true(s->phases[i].bytes == 1000 && s->phases[i].fanout == 1);
    }
    tc_sched_free(s);
    s = build(TC_OP_REDUCE, TC_ALGO_BINOMIAL, 8, 1000, 0, 0);
    assert_int_equal(s->nsteps, 3);
    tc_sched_free(s);
    s = build(TC_OP_ALLREDUCE, TC_ALGO_BINOMIAL, 9, 1000, 0, 0);
    assert_int_equal(s->nsteps, 8);
    tc_sched_free(s);
}

static void direct_is_one_step_per_exchange(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLTOALL, TC_ALGO_DIRECT, 9, 900, 0, 0);
    assert_int_equal(s->nsteps, 1);
    assert_int_equal(s->phases[0].fanout, 8);
    assert_int_equal(s->phases[0].fanin, 8);
    assert_true(s->phases[0].bytes == 100 && s->phases[0].rank_bytes == 800);
    assert_true(s->phases[0].rank_bytes_in == 800);
    /* MPICH's scattered all-to-all posts rank r's isends to dst = (r - i)
     * mod p, i = 0..p-1 (pmodels/mpich alltoall_intra_scattered.c): every
     * sender's transfers come in that order. */
    tc_xfers x;
    tc_xfers_init(&x, false);
    assert_int_equal(tc_sched_emit(s, 0, &x), TC_OK);
    uint32_t next[9] = {0};
    for (size_t i = 0; i < x.n; i++) {
        uint32_t r = x.v[i].src;
        assert_true(r < 9 && next[r] < 9);
        assert_int_equal(x.v[i].dst, (r + 9 - next[r]++) % 9);
    }
    for (uint32_t r = 0; r < 9; r++)
        assert_int_equal(next[r], 9);
    tc_xfers_free(&x);
    tc_sched_free(s);
    s = build(TC_OP_ALLREDUCE, TC_ALGO_DIRECT, 9, 900, 0, 0);
    assert_int_equal(s->nsteps, 2);
    tc_sched_free(s);
    s = build(TC_OP_BROADCAST, TC_ALGO_DIRECT, 9, 900, 0, 4);
    assert_int_equal(s->phases[0].fanout, 8);
    assert_int_equal(s->phases[0].fanin, 1);
    tc_sched_free(s);
    /* Reduce: the p - 1 others all send into the root at once. */
    s = build(TC_OP_REDUCE, TC_ALGO_DIRECT, 9, 900, 0, 4);
    assert_int_equal(s->phases[0].fanout, 1);
    assert_int_equal(s->phases[0].fanin, 8);
    assert_true(s->phases[0].rank_bytes == 900 && s->phases[0].rank_bytes_in == 8 * 900);
    tc_sched_free(s);
    /* One rank: all-to-all still copies its block into the output. */
    s = build(TC_OP_ALLTOALL, TC_ALGO_DIRECT, 1, 900, 0, 0);
    tc_sched_free(s);
}

static void biring_sends_both_ways(void **state)
{
    (void)state;
    tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    for (int i = 0; i < 3; i++) {
        tc_sched *s = build(ops[i], TC_ALGO_BIRING, 8, 1600, 0, 0);
        assert_int_equal(s->nsteps, ops[i] == TC_OP_ALLREDUCE ? 14 : 7);
        for (uint32_t j = 0; j < s->nphases; j++) {
            assert_int_equal(s->phases[j].fanout, 2);
            assert_int_equal(s->phases[j].fanin, 2);
            assert_true(s->phases[j].bytes == 100 && s->phases[j].rank_bytes == 200);
            assert_true(s->phases[j].rank_bytes_in == 200);
        }
        tc_sched_free(s);
    }
    /* Pipelined chains: c + p - 2 steps, the root feeding both chains. */
    tc_sched *s = build(TC_OP_BROADCAST, TC_ALGO_BIRING, 6, 1600, 8, 2);
    assert_int_equal(s->nsteps, 12);
    assert_int_equal(s->phases[0].fanout, 2);
    tc_sched_free(s);
    /* Two ranks: both halves go to the one neighbour as one transfer. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_BIRING, 2, 1600, 0, 0);
    assert_int_equal(s->phases[0].fanout, 1);
    assert_int_equal(s->phases[0].fanin, 1);
    assert_int_equal(s->phases[0].pat, TC_PAT_SHIFT);
    tc_sched_free(s);
}

/* Which half (tree) each rank forwards copies in: a rank sending copies to
 * children in both halves would be interior in both trees. */
static void check_disjoint_interiors(tc_op op, uint32_t p, uint32_t root)
{
    tc_sched *s = build(op, TC_ALGO_DBTREE, p, 1e6, 4, root);
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
            assert_true(mask[r] != 3u);
    tc_xfers_free(&x);
    free(mask);
    tc_sched_free(s);
}

static void dbtree_interiors_are_disjoint(void **state)
{
    (void)state;
    for (uint32_t p = 2; p <= 70; p++) {
        check_disjoint_interiors(TC_OP_ALLREDUCE, p, 0);
        check_disjoint_interiors(TC_OP_BROADCAST, p, p / 3);
        check_disjoint_interiors(TC_OP_REDUCE, p, p / 2);
    }
    /* 8 ranks: trees of depth 3 (positions 1..8 hang below 8, 4, 2/6, ...),
     * so an all-reduce of c chunks takes c + 2*3 - 1 steps, broadcast over
     * the 7 others (depth 2 below the root: D = 3) c + 3 - 1. */
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 8, 1e6, 16, 0);
    assert_int_equal(s->nsteps, 16 + 6 - 1);
    for (uint32_t i = 0; i < s->nphases; i++)
        assert_true(s->phases[i].fanout <= 4);
    tc_sched_free(s);
    s = build(TC_OP_BROADCAST, TC_ALGO_DBTREE, 8, 1e6, 16, 0);
    assert_int_equal(s->nsteps, 16 + 3 - 1);
    tc_sched_free(s);
    /* Default: 64 chunks per tree. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 8, 1e6, 0, 0);
    assert_int_equal(s->nblk, 128);
    tc_sched_free(s);
}

static void invalid_pairs_are_rejected(void **state)
{
    (void)state;
    struct {
        tc_op op;
        tc_algo algo;
        uint32_t p;
    } bad[] = {
        {TC_OP_ALLGATHER, TC_ALGO_RD, 6},       {TC_OP_REDUCESCATTER, TC_ALGO_RD, 8},
        {TC_OP_BROADCAST, TC_ALGO_RD, 8},       {TC_OP_ALLTOALL, TC_ALGO_RD, 8},
        {TC_OP_ALLTOALL, TC_ALGO_RHD, 12},      {TC_OP_ALLGATHER, TC_ALGO_RHD, 8},
        {TC_OP_REDUCE, TC_ALGO_RHD, 8},         {TC_OP_ALLGATHER, TC_ALGO_BINOMIAL, 8},
        {TC_OP_ALLTOALL, TC_ALGO_BINOMIAL, 8},  {TC_OP_REDUCESCATTER, TC_ALGO_DBTREE, 8},
        {TC_OP_ALLTOALL, TC_ALGO_DBTREE, 8},    {TC_OP_ALLTOALL, TC_ALGO_BIRING, 8},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tc_err err = {{0}};
        if (tc_coll_valid(bad[i].op, bad[i].algo, bad[i].p, NULL, &err))
            fail_msg("%s/%s p=%u accepted", tc_op_name(bad[i].op), tc_algo_name(bad[i].algo), bad[i].p);
        assert_true(err.msg[0] != '\0');
    }
    assert_true(tc_coll_valid(TC_OP_ALLGATHER, TC_ALGO_RD, 16, NULL, NULL));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_RD, 13, NULL, NULL));
    assert_true(tc_coll_valid(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 16, NULL, NULL));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_RHD, 13, NULL, NULL));
    for (int op = 0; op < TC_OP_COUNT; op++)
        assert_true(tc_coll_valid((tc_op)op, TC_ALGO_DIRECT, 5, NULL, NULL));
}

/* Schedules stay O(phases) to build at scale; emitting one step is cheap. */
static void large_rank_counts_build(void **state)
{
    (void)state;
    const tc_algo algos[] = {TC_ALGO_BIRING, TC_ALGO_RD, TC_ALGO_RHD, TC_ALGO_BINOMIAL, TC_ALGO_DBTREE,
                             TC_ALGO_DIRECT};
    uint32_t p = 65536;
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            if (!tc_coll_valid((tc_op)op, algos[a], p, NULL, NULL))
                continue;
            tc_err err = {{0}};
            tc_coll_req req = {.op = (tc_op)op, .algo = algos[a], .p = p, .bytes = 1 << 30, .root = 7};
            tc_sched *s = NULL;
            if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
                fail_msg("%s/%s: %s", tc_op_name((tc_op)op), tc_algo_name(algos[a]), err.msg);
            assert_true(s->nphases > 0);
            if (algos[a] != TC_ALGO_DIRECT || op == TC_OP_BROADCAST || op == TC_OP_REDUCE)
                assert_int_equal(tc_sched_emit(s, s->nsteps / 2, &x), TC_OK);
            tc_sched_free(s);
        }
    tc_xfers_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rd_allreduce_takes_lg_p_exchanges),
        cmocka_unit_test(rhd_halves_then_doubles),
        cmocka_unit_test(binomial_takes_ceil_lg_p_steps),
        cmocka_unit_test(direct_is_one_step_per_exchange),
        cmocka_unit_test(biring_sends_both_ways),
        cmocka_unit_test(dbtree_interiors_are_disjoint),
        cmocka_unit_test(invalid_pairs_are_rejected),
        cmocka_unit_test(large_rank_counts_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
