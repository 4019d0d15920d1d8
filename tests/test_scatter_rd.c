/*
 * test_scatter_rd.c - scatter-rd, MPICH's broadcast of a binomial scatter
 * and a recursive-doubling all-gather
 * (MPIR_Bcast_intra_scatter_recursive_doubling_allgather, pmodels/mpich
 * v5.0.1): the all-gather's partners and pieces on 8 ranks from root 3
 * written out from MPICH's loop; the data checker from every root on
 * powers of two (test_coll_check.c runs every rank count); refusal off
 * powers of two; the time on one switch by hand in every evaluator.
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

static tc_sched *build(uint32_t p, uint32_t root, double bytes)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_SCATTER_RD, .p = p, .bytes = bytes, .root = root};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("scatter-rd p=%u root=%u: %s", p, root, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("scatter-rd p=%u root=%u: %s", p, root, err.msg);
    return s;
}

/* 8 ranks, root 3: after the 3 scatter steps, step i pairs relative ranks
 * v and v ^ 2^i; rank r = v + 3 sends 2^i pieces from slot (v >> i) << i.
 * Written out: relative partner and first slot per relative rank. */
static void all_gather_follows_mpich(void **state)
{
    (void)state;
    static const uint32_t partner[3][8] = {{1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {4, 5, 6, 7, 0, 1, 2, 3}};
    static const uint32_t first[3][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 0, 2, 2, 4, 4, 6, 6}, {0, 0, 0, 0, 4, 4, 4, 4}};
    tc_sched *s = build(8, 3, 8000);
    assert_int_equal(s->nsteps, 6);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t i = 0; i < 3; i++) {
        tc_xfers_clear(&x);
        assert_int_equal(s->emit(s, 3 + i, &x), TC_OK);
        assert_int_equal(x.n, 8);
        for (uint32_t k = 0; k < 8; k++) {
            uint32_t v = (x.v[k].src + 8 - 3) % 8;
            assert_int_equal((x.v[k].dst + 8 - 3) % 8, partner[i][v]);
            assert_true(x.v[k].bytes == 1000.0 * (1u << i));
            assert_int_equal(x.segs[x.v[k].seg_off].src_slot, first[i][v]);
        }
    }
    tc_xfers_free(&x);
    tc_sched_free(s);
}

static void every_root_on_powers_of_two(void **state)
{
    (void)state;
    int checked = 0;
    for (uint32_t p = 1; p <= 256; p *= 2)
        for (uint32_t r = 0; r < p; r += p > 8 ? p / 8 + 1 : 1, checked++)
            tc_sched_free(build(p, r, 1000003.0));
    assert_true(checked > 40);
    tc_err err = {{0}};
    assert_false(tc_coll_valid(TC_OP_BROADCAST, TC_ALGO_SCATTER_RD, 12, NULL, &err));
    assert_non_null(strstr(err.msg, "power-of-two"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_SCATTER_RD, 8, NULL, NULL));
}

/* One switch, 8 ranks, S = 8 MB from root 0: the scatter sends 4, 2 and 1
 * blocks of S/8, the all-gather 1, 2 and 4, each step one message per
 * rank on its own links: 6 (alpha + 2 lat) + 14 (S/8) / bw in every
 * evaluator. */
static void one_switch_by_hand(void **state)
{
    (void)state;
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=8,up=1,bw=10GB/s,lat=1us,hop_lat=0ns,alpha=2us", &t, &err), TC_OK);
    double S = 8e6, want = 6 * (2e-6 + 2e-6) + 14 * (S / 8) / 10e9;
    for (int m = 0; m < 3; m++) {
        tc_mode mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW;
        for (uint32_t root = 0; root < 8; root += 5) {
            tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_SCATTER_RD, .p = 8, .bytes = S, .root = root};
            tc_eval_opts o = {.mode = mode};
            tc_result r;
            if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
                fail_msg("mode %d: %s", m, err.msg);
            if (fabs(r.time_s - want) > 1e-9 * want)
                fail_msg("mode %d root %u: %.9g s, want %.9g s", m, root, r.time_s, want);
        }
    }
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_gather_follows_mpich),
        cmocka_unit_test(every_root_on_powers_of_two),
        cmocka_unit_test(one_switch_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
