/*
 * test_coll_elems.c - sizes in whole elements: nccl-tests' rounding of the
 * size (its GetCollByteCount functions), MPICH's split of a buffer into
 * blocks (the first count mod k blocks one element more), every algorithm
 * proven on whole-element buffers, and sweeps that rescale a schedule by
 * its largest block.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "topocc/eval.h"

/* Hand-computed against nccl-tests (src/all_gather.cu, reduce_scatter.cu,
 * alltoall.cu: (count / nranks) & ~(16 / eltSize - 1) per rank;
 * all_reduce.cu, broadcast.cu, reduce.cu: count). */
static void sizes_round_as_nccl_tests_does(void **state)
{
    (void)state;
    /* all-gather, float32, 8 ranks, 1000 B: 250 elements, 31 per rank, 28 after the mask */
    assert_true(tc_coll_rounded_bytes(TC_OP_ALLGATHER, 8, 1000, 4) == 28 * 8 * 4);
    /* all-reduce, bf16, 1001 B: 500 elements */
    assert_true(tc_coll_rounded_bytes(TC_OP_ALLREDUCE, 8, 1001, 2) == 1000);
    /* all-to-all, int8, 3 ranks, 100 B: 33 per rank, 32 after the mask of 16 */
    assert_true(tc_coll_rounded_bytes(TC_OP_ALLTOALL, 3, 100, 1) == 96);
    /* reduce-scatter, fp64, 2 ranks, 40 B: 5 elements, 2 per rank (mask of 2) */
    assert_true(tc_coll_rounded_bytes(TC_OP_REDUCESCATTER, 2, 40, 8) == 32);
    /* broadcast keeps every whole element; fluid sizes stay as they are */
    assert_true(tc_coll_rounded_bytes(TC_OP_BROADCAST, 64, 7, 4) == 4);
    assert_true(tc_coll_rounded_bytes(TC_OP_ALLGATHER, 8, 1000.5, 0) == 1000.5);
    /* 16 B per rank is the least all-gather runs with float32 */
    tc_err err = {{0}};
    tc_coll_req req = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_RING, .p = 8, .bytes = 127, .elt = 4};
    assert_int_equal(tc_coll_round(&req, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "at least 128 bytes"));
    req.bytes = 128;
    assert_int_equal(tc_coll_round(&req, &err), TC_OK);
    assert_true(req.bytes == 128);
    assert_int_equal(tc_dtype_size("bf16"), 2);
    assert_int_equal(tc_dtype_size("fp64"), 8);
    assert_int_equal(tc_dtype_size("float16"), 0);
    assert_string_equal(tc_dtype_nccl_name("bf16"), "bfloat16");
}

/* MPICH's split: 10 elements in 4 blocks are 3, 3, 2, 2; the evaluators
 * time each block at the largest, 3. */
static void blocks_are_whole_elements_timed_at_the_largest(void **state)
{
    (void)state;
    assert_true(tc_block_bytes(40, 4, 4) == 12);
    assert_true(tc_block_bytes(40, 4, 5) == 8);
    assert_true(tc_block_bytes(4, 4, 8) == 4); /* one element, seven empty blocks */
    assert_true(tc_block_bytes(40, 0, 3) == 40.0 / 3);
}

/* Every algorithm, valid operation and rank count on buffers of whole
 * elements that do not divide evenly (a few elements, p + 3, 5p + 7):
 * the data checker executes the schedule, and verifies that each transfer's
 * bytes are those of the elements it carries, up to one element per block. */
static void every_algorithm_moves_whole_elements(void **state)
{
    (void)state;
    static const uint32_t elts[] = {1, 2, 4, 8};
    tc_err err = {{0}};
    int checked = 0;
    for (int op = 0; op < TC_OP_COUNT; op++)
        for (int a = 0; a < TC_ALGO_AUTO; a++)
            for (uint32_t p = 1; p <= 40; p += p < 12 ? 1 : 7) {
                if (!tc_coll_valid((tc_op)op, (tc_algo)a, p, NULL, NULL))
                    continue;
                for (int k = 0; k < 3; k++) {
                    uint32_t elt = elts[(p + (uint32_t)k) % 4];
                    uint64_t count = k == 0 ? 3 : k == 1 ? p + 3 : 5ull * p + 7;
                    if (op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLTOALL)
                        count = (uint64_t)p * (16 / elt) * (uint64_t)(k + 1); /* nccl-tests sizes */
                    tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = p, .bytes = (double)(count * elt),
                                       .elt = elt, .root = p / 2};
                    assert_int_equal(tc_coll_round(&req, &err), TC_OK);
                    tc_sched *s = NULL;
                    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
                        fail_msg("%s/%s p=%u: %s", tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), p, err.msg);
                    if (tc_sched_check(s, &err) != TC_OK)
                        fail_msg("%s/%s p=%u count=%llu elt=%u: %s", tc_op_name((tc_op)op), tc_algo_name((tc_algo)a),
                                 p, (unsigned long long)count, elt, err.msg);
                    checked++;
                    tc_sched_free(s);
                }
            }
    assert_true(checked > 500);
}

/* A size sweep rescales one schedule by the ratio of its largest blocks:
 * every size of a sweep equals that size evaluated on its own. */
static void sweeps_equal_single_sizes_with_elements(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_topo *t = NULL;
    assert_int_equal(tc_topo_build("clos:down=4x4,up=1x2,lat=1us", &t, &err), TC_OK);
    const double sizes[] = {60, 1000, 4100, 65537, 1e6 + 3};
    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DBTREE, TC_ALGO_BINOMIAL, TC_ALGO_RD};
    for (int m = 0; m < 2; m++)
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = algos[a], .p = 13, .bytes = sizes[0], .elt = 4};
            tc_eval_opts o = {.mode = m ? TC_MODE_STEPS : TC_MODE_FORMULA};
            tc_result sw[5], one;
            assert_int_equal(tc_evaluate_sweep(t, &req, sizes, 5, &o, sw, &err), TC_OK);
            for (int i = 0; i < 5; i++) {
                req.bytes = sizes[i];
                assert_int_equal(tc_evaluate(t, &req, &o, &one, &err), TC_OK);
                assert_true(sw[i].bytes == floor(sizes[i] / 4) * 4);
                if (fabs(sw[i].time_s - one.time_s) > 1e-12 * one.time_s)
                    fail_msg("%s size %g: sweep %.17g, alone %.17g", tc_algo_name(algos[a]), sizes[i], sw[i].time_s,
                             one.time_s);
            }
        }
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_round_as_nccl_tests_does),
        cmocka_unit_test(blocks_are_whole_elements_timed_at_the_largest),
        cmocka_unit_test(every_algorithm_moves_whole_elements),
        cmocka_unit_test(sweeps_equal_single_sizes_with_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
