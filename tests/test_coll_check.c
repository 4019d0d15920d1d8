/*
 * test_coll_check.c - every topology-independent (operation, algorithm) pair
 * is executed on real buffers for every rank count from 1 to 70 and for 127,
 * 128 and 1000, and must leave exactly the right result on every rank.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include "topocc/coll.h"

static const uint32_t extra_ranks[] = {127, 128, 1000};

static void check_one(tc_op op, tc_algo algo, uint32_t p, uint32_t chunks, uint32_t root, int *checked)
{
    tc_err err = {{0}};
    if (!tc_coll_valid(op, algo, p, NULL, NULL))
        return;
    /* A size that does not divide evenly: bytes are real-valued. */
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = 1000003.0, .chunks = chunks, .root = root % p};
    tc_sched *s = NULL;
    tc_status st = tc_coll_build(&req, NULL, &s, &err);
    if (st != TC_OK)
        fail_msg("%s/%s p=%u: build failed: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    st = tc_sched_check(s, &err);
    if (st != TC_OK)
        fail_msg("%s/%s p=%u chunks=%u root=%u: %s", tc_op_name(op), tc_algo_name(algo), p, chunks, root % p, err.msg);
    tc_sched_free(s);
    (*checked)++;
}

static void run_algo(tc_algo algo, int *checked)
{
    for (int op = 0; op < TC_OP_COUNT; op++) {
        for (uint32_t p = 1; p <= 70; p++)
            check_one((tc_op)op, algo, p, 0, 0, checked);
        for (size_t i = 0; i < sizeof extra_ranks / sizeof *extra_ranks; i++) {
            uint32_t p = extra_ranks[i];
            /* The all-to-all and pipelined chains at p = 1000 are the slow
             * cases: keep chunks small there. */
            check_one((tc_op)op, algo, p, op == TC_OP_BROADCAST || op == TC_OP_REDUCE ? 4 : 0, 0, checked);
        }
        /* Non-default chunks and roots on a few rank counts. */
        uint32_t ps[] = {2, 3, 7, 16, 33};
        for (size_t i = 0; i < 5; i++)
            check_one((tc_op)op, algo, ps[i], 3, 5, checked);
    }
}

#define ALGO_TEST(name, algo)                                                    \
    static void name(void **state)                                               \
    {                                                                            \
        (void)state;                                                             \
        int checked = 0;                                                         \
        run_algo(algo, &checked);                                                \
        assert_true(checked > 0);                                                \
    }

ALGO_TEST(ring_schedules_are_exact_for_every_rank_count, TC_ALGO_RING)
ALGO_TEST(biring_schedules_are_exact_for_every_rank_count, TC_ALGO_BIRING)
ALGO_TEST(rd_schedules_are_exact_for_every_rank_count, TC_ALGO_RD)
ALGO_TEST(rhd_schedules_are_exact_for_every_rank_count, TC_ALGO_RHD)
ALGO_TEST(binomial_schedules_are_exact_for_every_rank_count, TC_ALGO_BINOMIAL)
ALGO_TEST(dbtree_schedules_are_exact_for_every_rank_count, TC_ALGO_DBTREE)
ALGO_TEST(bruck_schedules_are_exact_for_every_rank_count, TC_ALGO_BRUCK)
ALGO_TEST(pairwise_schedules_are_exact_for_every_rank_count, TC_ALGO_PAIRWISE)
ALGO_TEST(direct_schedules_are_exact_for_every_rank_count, TC_ALGO_DIRECT)
ALGO_TEST(swing_schedules_are_exact_for_every_rank_count, TC_ALGO_SWING)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(biring_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(rd_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(rhd_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(binomial_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(dbtree_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(bruck_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(pairwise_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(direct_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(swing_schedules_are_exact_for_every_rank_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
