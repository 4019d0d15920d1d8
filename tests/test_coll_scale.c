/*
 * test_coll_scale.c - every topology-independent (operation, algorithm) pair
 * executed on real buffers at 2,048 and 4,096 ranks (tc_sched_check: exact
 * result on every rank, every phase's metadata exact). Optimized build only:
 * about a minute there, 5 to 10 times that under AddressSanitizer, which
 * test_coll_check.c covers up to 1,024 ranks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include "topocc/coll.h"

static void check_all(uint32_t p)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)p;
    skip();
#else
    int checked = 0;
    for (int a = 0; a < TC_ALGO_AUTO; a++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            if (!tc_coll_valid((tc_op)op, (tc_algo)a, p, NULL, NULL))
                continue;
            tc_err err = {{0}};
            tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = p, .bytes = 1000003.0, .root = p / 3};
            tc_sched *s = NULL;
            if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
                fail_msg("%s/%s p=%u: build failed: %s", tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), p, err.msg);
            if (tc_sched_check(s, &err) != TC_OK)
                fail_msg("%s/%s p=%u: %s", tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), p, err.msg);
            tc_sched_free(s);
            checked++;
        }
    /* At a power of two: ring 5, biring 5, rd 2, rhd 2, binomial 3, dbtree 3,
     * bruck 2, pairwise 2, direct 7 (its six collectives and sendrecv), swing 3, shift 1, scatter-ring 1, rsg 1,
     * neighbor 1, segring 1, scattered 1, scatter-rd 1. */
    assert_int_equal(checked, 41);
#endif
}

static void every_pair_is_exact_at_2048_ranks(void **state)
{
    (void)state;
    check_all(2048);
}

static void every_pair_is_exact_at_4096_ranks(void **state)
{
    (void)state;
    check_all(4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pair_is_exact_at_2048_ranks),
        cmocka_unit_test(every_pair_is_exact_at_4096_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
