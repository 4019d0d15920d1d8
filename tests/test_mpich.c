/*
 * test_mpich.c - mpich, MPICH v5.0.1's own choice of algorithm
 * (maint/tuning/coll/mpir/generic.json as src/mpi/coll/src/csel.c reads
 * it): a table of (operation, ranks, bytes) on both sides of every
 * threshold, written from the JSON by hand; a sweep across the thresholds
 * equal, size by size and in every evaluator, to the algorithm chosen run
 * on its own; the refusal of nodes of several ranks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/topo.h"

typedef struct {
    tc_op op;
    uint32_t p;
    double bytes;
    uint32_t elt;
    tc_algo want;
} row;

/* Sizes in bytes of elt-byte elements (1: a count equal to the bytes). */
static const row table[] = {
    /* all-reduce: <= 8 B rd; count < pof2(p) rd; else rhd */
    {TC_OP_ALLREDUCE, 64, 8, 1, TC_ALGO_RD},
    {TC_OP_ALLREDUCE, 64, 63, 1, TC_ALGO_RD},
    {TC_OP_ALLREDUCE, 64, 64, 1, TC_ALGO_RHD},
    {TC_OP_ALLREDUCE, 100, 252, 4, TC_ALGO_RD},  /* 63 elements < 64 */
    {TC_OP_ALLREDUCE, 100, 256, 4, TC_ALGO_RHD}, /* 64 */
    {TC_OP_ALLREDUCE, 2, 12, 4, TC_ALGO_RHD},    /* 3 elements >= 2, above 8 B */
    {TC_OP_ALLREDUCE, 2, 8, 4, TC_ALGO_RD},      /* 2 elements >= 2, but 8 B */
    /* reduce-scatter: total < 512 KiB recursive halving, else pairwise */
    {TC_OP_REDUCESCATTER, 64, 524287, 1, TC_ALGO_RHD},
    {TC_OP_REDUCESCATTER, 64, 524288, 1, TC_ALGO_PAIRWISE},
    {TC_OP_REDUCESCATTER, 12, 524288, 1, TC_ALGO_PAIRWISE},
    {TC_OP_REDUCESCATTER, 12, 524287, 1, TC_ALGO_RHD}, /* MPICH's fold of the 4 extra ranks */
    /* all-gather: power of two < 512 KiB rd else ring; others < 80 KiB Bruck else ring */
    {TC_OP_ALLGATHER, 64, 524287, 1, TC_ALGO_RD},
    {TC_OP_ALLGATHER, 64, 524288, 1, TC_ALGO_RING},
    {TC_OP_ALLGATHER, 12, 81919, 1, TC_ALGO_BRUCK},
    {TC_OP_ALLGATHER, 12, 81920, 1, TC_ALGO_RING},
    /* broadcast: p < 8 binomial; power of two <= 12 KiB binomial, <= 512 KiB
     * scatter-rd, else scatter-ring; others <= 12 KiB binomial, else scatter-ring */
    {TC_OP_BROADCAST, 7, 1e9, 1, TC_ALGO_BINOMIAL},
    {TC_OP_BROADCAST, 8, 12288, 1, TC_ALGO_BINOMIAL},
    {TC_OP_BROADCAST, 8, 12289, 1, TC_ALGO_SCATTER_RD},
    {TC_OP_BROADCAST, 8, 524288, 1, TC_ALGO_SCATTER_RD},
    {TC_OP_BROADCAST, 8, 524289, 1, TC_ALGO_SCATTER_RING},
    {TC_OP_BROADCAST, 12, 12289, 1, TC_ALGO_SCATTER_RING},
    /* reduce: <= 2 KiB binomial; count < pof2(p) binomial; else rsg */
    {TC_OP_REDUCE, 64, 2048, 1, TC_ALGO_BINOMIAL},
    {TC_OP_REDUCE, 64, 2049, 1, TC_ALGO_RSG},
    {TC_OP_REDUCE, 5000, 4095, 1, TC_ALGO_BINOMIAL}, /* pof2(5000) = 4096 */
    {TC_OP_REDUCE, 5000, 4096, 1, TC_ALGO_RSG},
    /* all-to-all, bytes per destination = S/p: "comm_size<8", which MPICH's
     * search decides as p <= 8 (csel.c), <= 32 KiB scattered else pairwise;
     * others <= 256 B Bruck, <= 32 KiB scattered, else pairwise */
    {TC_OP_ALLTOALL, 4, 4 * 16.0, 1, TC_ALGO_SCATTERED},
    {TC_OP_ALLTOALL, 4, 4 * 32769.0, 1, TC_ALGO_PAIRWISE},
    {TC_OP_ALLTOALL, 8, 8 * 16.0, 1, TC_ALGO_SCATTERED},
    {TC_OP_ALLTOALL, 8, 8 * 32769.0, 1, TC_ALGO_PAIRWISE},
    {TC_OP_ALLTOALL, 9, 9 * 256.0, 1, TC_ALGO_BRUCK},
    {TC_OP_ALLTOALL, 9, 9 * 257.0, 1, TC_ALGO_SCATTERED},
    {TC_OP_ALLTOALL, 9, 9 * 32768.0, 1, TC_ALGO_SCATTERED},
    {TC_OP_ALLTOALL, 9, 9 * 32769.0, 1, TC_ALGO_PAIRWISE},
};

static void the_choice_follows_mpichs_tree(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const row *w = &table[i];
        tc_coll_req req = {.op = w->op, .algo = TC_ALGO_MPICH, .p = w->p, .bytes = w->bytes, .elt = w->elt}, out;
        tc_err err = {{0}};
        if (tc_mpich_choose(&req, &out, &err) != TC_OK)
            fail_msg("row %zu: %s", i, err.msg);
        if (out.algo != w->want)
            fail_msg("row %zu: %s on %u ranks, %.0f B: %s, MPICH's tree says %s", i, tc_op_name(w->op), w->p, w->bytes,
                     tc_algo_name(out.algo), tc_algo_name(w->want));
        /* and the schedule it builds is that algorithm's, data-checked */
        tc_sched *s = NULL;
        if (w->p <= 256) {
            if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
                fail_msg("row %zu: %s", i, err.msg);
            assert_int_equal(s->nccl_impl, w->want);
            if (tc_sched_check(s, &err) != TC_OK)
                fail_msg("row %zu: %s", i, err.msg);
            tc_sched_free(s);
        }
    }
}

/* A sweep across the thresholds: every size the time of the algorithm
 * chosen for it, run alone, in formula, steps and flow. */
static void a_sweep_is_the_chosen_algorithm_size_by_size(void **state)
{
    (void)state;
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=8x4,up=1x4,bw=100Gbps,lat=500ns", &t, &err), TC_OK);
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_ALLGATHER, TC_OP_BROADCAST, TC_OP_ALLTOALL};
    /* all-reduce turns at 32 elements (pof2(32)); the others above */
    const double small[] = {64, 4096, 65536, 524288, 4194304}, big[] = {512, 4096, 65536, 524288, 4194304};
    const size_t n = sizeof big / sizeof *big;
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (int m = 0; m < 3; m++) {
            const double *sizes = ops[o] == TC_OP_ALLREDUCE || ops[o] == TC_OP_BROADCAST ? small : big;
            tc_mode mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW;
            tc_coll_req req = {.op = ops[o], .algo = TC_ALGO_MPICH, .p = 32, .elt = 4};
            tc_eval_opts eo = {.mode = mode};
            tc_result res[5];
            if (tc_evaluate_sweep(t, &req, sizes, n, &eo, res, &err) != TC_OK)
                fail_msg("%s: %s", tc_op_name(ops[o]), err.msg);
            int kinds = 0;
            tc_algo last = TC_ALGO_COUNT;
            for (size_t i = 0; i < n; i++) {
                tc_coll_req one = req, chosen;
                one.bytes = res[i].bytes;
                assert_int_equal(tc_mpich_choose(&one, &chosen, &err), TC_OK);
                assert_int_equal(res[i].algo, TC_ALGO_MPICH);
                assert_int_equal(res[i].nccl_impl, chosen.algo);
                kinds += chosen.algo != last;
                last = chosen.algo;
                tc_result alone;
                if (tc_evaluate(t, &chosen, &eo, &alone, &err) != TC_OK)
                    fail_msg("%s: %s", tc_op_name(ops[o]), err.msg);
                if (fabs(alone.time_s - res[i].time_s) > 1e-12 * alone.time_s)
                    fail_msg("%s %.0f B mode %d: mpich %.9g s, %s alone %.9g s", tc_op_name(ops[o]), res[i].bytes, m,
                             res[i].time_s, tc_algo_name(chosen.algo), alone.time_s);
            }
            assert_true(kinds >= 2); /* the sweep crosses a threshold */
        }
    tc_topo_free(t);
}

static void refusals(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_coll_req out;
    tc_topo *t = NULL;
    assert_int_equal(tc_topo_build("clos:down=2x8,up=1x2,node=8", &t, &err), TC_OK);
    /* ranks 0 and 1 on node 0: refused, by the check and by the evaluator */
    assert_int_equal(tc_mpich_map_check(16, t, NULL, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "one rank per node"));
    tc_coll_req ar = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_MPICH, .p = 2, .bytes = 1 << 20};
    tc_eval_opts eo = {.mode = TC_MODE_STEPS};
    tc_result res;
    assert_int_equal(tc_evaluate(t, &ar, &eo, &res, &err), TC_EINVAL);
    /* one rank on each node: MPICH's MPIR algorithm, the same as rhd there */
    const uint32_t map[2] = {3, 11};
    eo.rank_map = map;
    assert_int_equal(tc_mpich_map_check(2, t, map, &err), TC_OK);
    assert_int_equal(tc_evaluate(t, &ar, &eo, &res, &err), TC_OK);
    assert_int_equal(res.nccl_impl, TC_ALGO_RHD);
    tc_topo_free(t);
    tc_coll_req q = {0};
    char buf[64];
    assert_int_equal(tc_algo_parse("mpich", &q, &err), TC_OK);
    assert_int_equal(q.algo, TC_ALGO_MPICH);
    assert_int_equal(tc_algo_parse("mpich:throttle=4", &q, &err), TC_OK);
    assert_string_equal(tc_algo_format(&q, buf, sizeof buf), "mpich:throttle=4");
    /* the throttle reaches the all-to-all it picks */
    q.op = TC_OP_ALLTOALL, q.p = 64, q.bytes = 64 * 4096.0;
    assert_int_equal(tc_mpich_choose(&q, &out, &err), TC_OK);
    assert_int_equal(out.algo, TC_ALGO_SCATTERED);
    assert_int_equal(out.throttle, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_choice_follows_mpichs_tree),
        cmocka_unit_test(a_sweep_is_the_chosen_algorithm_size_by_size),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
