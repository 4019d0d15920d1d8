/*
 * test_scattered.c - scattered, MPICH's throttled all-to-all
 * (MPIR_Alltoall_intra_scattered, pmodels/mpich v5.0.1): the destinations
 * of every block on 8 ranks written out by hand; the receives MPICH posts in
 * each block (from r + ii + i) matched against the transfers the block
 * delivers; the data checker at every rank count from 1 to 70, powers of
 * two to 1,024 and odd ones, for several throttles; throttle=0 the same
 * times as direct in every evaluator on random Clos networks; throttle=1 on
 * one switch the hand count (p - 1)(alpha + lat + b / bw); parsing, naming
 * and refusals.
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
#include "topocc/topo.h"

static tc_sched *build(uint32_t p, uint32_t throttle, double bytes)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_SCATTERED, .p = p, .bytes = bytes, .throttle = throttle};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("scattered p=%u throttle=%u: %s", p, throttle, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("scattered p=%u throttle=%u: %s", p, throttle, err.msg);
    return s;
}

/* 8 ranks, throttle 3: a rank sends to r, r-1, r-2 (its own block a copy),
 * then r-3, r-4, r-5, then r-6, r-7, in that order (MPICH's isend loop,
 * dst = rank - i - ii). */
static void blocks_of_eight_ranks_follow_mpich(void **state)
{
    (void)state;
    static const int dist[3][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, -1}};
    tc_sched *s = build(8, 3, 8000);
    assert_int_equal(s->nsteps, 3);
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (uint32_t st = 0; st < 3; st++) {
        tc_xfers_clear(&x);
        assert_int_equal(s->emit(s, st, &x), TC_OK);
        size_t k = 0;
        for (uint32_t r = 0; r < 8; r++)
            for (int i = 0; i < 3 && dist[st][i] >= 0; i++, k++) {
                assert_true(k < x.n);
                assert_int_equal(x.v[k].src, r);
                assert_int_equal(x.v[k].dst, (r + 8 - (uint32_t)dist[st][i]) % 8);
                assert_true(x.v[k].bytes == 1000);
            }
        assert_int_equal(x.n, k);
    }
    /* The first block's fan-out leaves out the copy; the last has 2. */
    assert_int_equal(s->phases[0].fanout, 2);
    assert_int_equal(s->phases[1].fanout, 3);
    assert_int_equal(s->phases[2].fanout, 2);
    tc_xfers_free(&x);
    tc_sched_free(s);
}

/* MPICH posts, in block ii, irecvs from r + ii + i (i < ss): the transfers
 * into each rank in each step must be exactly those, so every send of a
 * block is received in the same block (no rank waits on a later one). */
static void every_block_delivers_what_its_receives_expect(void **state)
{
    (void)state;
    static const uint32_t ps[] = {2, 3, 5, 8, 31, 32, 33, 64, 100, 129};
    static const uint32_t ks[] = {1, 2, 3, 7, 32, 40, TC_THROTTLE_ALL};
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (size_t a = 0; a < sizeof ps / sizeof *ps; a++)
        for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
            uint32_t p = ps[a], k = ks[b] == TC_THROTTLE_ALL ? p : ks[b] < p ? ks[b] : p;
            tc_sched *s = build(p, ks[b], 1e6);
            assert_int_equal(s->nsteps, (p + k - 1) / k);
            uint8_t *got = calloc((size_t)p * p, 1);
            assert_non_null(got);
            for (uint32_t st = 0; st < s->nsteps; st++) {
                tc_xfers_clear(&x);
                assert_int_equal(s->emit(s, st, &x), TC_OK);
                memset(got, 0, (size_t)p * p);
                for (size_t i = 0; i < x.n; i++)
                    got[(size_t)x.v[i].dst * p + x.v[i].src]++;
                uint32_t ii = st * k, ss = p - ii < k ? p - ii : k;
                for (uint32_t r = 0; r < p; r++) {
                    uint32_t n = 0;
                    for (uint32_t i = 0; i < ss; i++) {
                        uint32_t src = (r + ii + i) % p;
                        if (got[(size_t)r * p + src] != 1)
                            fail_msg("p=%u throttle=%u block %u: rank %u expects one message from %u, got %u", p,
                                     k, st, r, src, got[(size_t)r * p + src]);
                        n++;
                    }
                    uint32_t total = 0;
                    for (uint32_t j = 0; j < p; j++)
                        total += got[(size_t)r * p + j];
                    assert_int_equal(total, n);
                }
            }
            free(got);
            tc_sched_free(s);
        }
    tc_xfers_free(&x);
}

#if defined(__SANITIZE_ADDRESS__)
static const uint32_t odd_ranks[] = {0};
#else
static const uint32_t odd_ranks[] = {129, 255, 257, 1000, 1023, 1025};
#endif

/* Every rank ends with exactly the right blocks (tc_sched_check executes
 * the schedule on real buffers and proves the phases' figures). */
static void data_checker_passes_for_every_rank_count(void **state)
{
    (void)state;
    static const uint32_t ks[] = {0, 1, 2, 3, 5, 32, 64, TC_THROTTLE_ALL};
    int checked = 0;
    for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
        for (uint32_t p = 1; p <= 70; p++, checked++)
            tc_sched_free(build(p, ks[b], 1000003.0));
        for (uint32_t p = 128; p <= 1024; p *= 2, checked++)
            tc_sched_free(build(p, ks[b], 1000003.0));
        for (size_t i = 0; i < sizeof odd_ranks / sizeof *odd_ranks; i++)
            if (odd_ranks[i]) {
                tc_sched_free(build(odd_ranks[i], ks[b], 1000003.0));
                checked++;
            }
    }
    assert_true(checked >= 8 * 74);
}

static double eval(const tc_topo *t, tc_algo algo, uint32_t throttle, uint32_t p, double bytes, tc_mode mode)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = algo, .p = p, .bytes = bytes, .throttle = throttle};
    tc_eval_opts o = {.mode = mode};
    tc_result r;
    if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
        fail_msg("%s p=%u mode %d: %s", tc_algo_name(algo), p, (int)mode, err.msg);
    return r.time_s;
}

/* throttle=0 posts everything at once: direct's transfers in direct's
 * order, so every evaluator gives the same time, bit for bit, on random
 * two-tier Clos networks (oversubscribed or not), rank counts and sizes. */
static void throttle_zero_is_direct_in_every_evaluator(void **state)
{
    (void)state;
    srand(12345);
    for (int trial = 0; trial < 6; trial++) {
        unsigned leaves = 2 + (unsigned)rand() % 4, hosts = 2 + (unsigned)rand() % 6, up = 1 + (unsigned)rand() % 3;
        char spec[128];
        snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,bw=%uGB/s,lat=%uns", hosts, leaves, up,
                 10 + (unsigned)rand() % 40, 100 + (unsigned)rand() % 900);
        tc_topo *t = NULL;
        tc_err err = {{0}};
        if (tc_topo_build(spec, &t, &err) != TC_OK)
            fail_msg("%s: %s", spec, err.msg);
        uint32_t p = 2 + (uint32_t)rand() % (hosts * leaves - 1);
        double bytes = (double)(1 + rand() % 1000) * 65536.0;
        for (int m = 0; m < 3; m++) {
            tc_mode mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW;
            double d = eval(t, TC_ALGO_DIRECT, 0, p, bytes, mode);
            double z = eval(t, TC_ALGO_SCATTERED, TC_THROTTLE_ALL, p, bytes, mode);
            double big = eval(t, TC_ALGO_SCATTERED, p, p, bytes, mode);
            if (d != z || d != big)
                fail_msg("%s p=%u %.0f B mode %d: direct %.9g, throttle=0 %.9g, throttle=p %.9g", spec, p, bytes, m,
                         d, z, big);
        }
        tc_topo_free(t);
    }
}

/* throttle=1 on one switch: the copy, then p - 1 blocks of one message,
 * each alone on its path: alpha + (2 lat + hop_lat) + b / bw apiece, in
 * every evaluator; the formula equals steps for a throttle of 2 too (its
 * blocks are costed on the routed graph). */
static void throttle_one_on_a_switch_is_the_hand_count(void **state)
{
    (void)state;
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=5,up=1,bw=10GB/s,lat=1us,hop_lat=0ns,alpha=2us", &t, &err), TC_OK);
    double b = 1e6, want = 4 * (2e-6 + 2e-6 + b / 10e9);
    for (int m = 0; m < 3; m++) {
        tc_mode mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW;
        double got = eval(t, TC_ALGO_SCATTERED, 1, 5, 5 * b, mode);
        if (fabs(got - want) > 1e-9 * want)
            fail_msg("mode %d: %.9g s, want %.9g s", m, got, want);
    }
    double f = eval(t, TC_ALGO_SCATTERED, 2, 5, 5 * b, TC_MODE_FORMULA);
    double s = eval(t, TC_ALGO_SCATTERED, 2, 5, 5 * b, TC_MODE_STEPS);
    assert_true(fabs(f - s) <= 1e-12 * s);
    /* Two messages per block share the up-link: slower than all at once
     * there? No: throttle 2 has 3 blocks (1, 2 and 1 messages). */
    assert_true(s > eval(t, TC_ALGO_DIRECT, 0, 5, 5 * b, TC_MODE_STEPS));
    tc_topo_free(t);
}

/* In formula and steps a block costs alpha times its fan-out, its largest
 * link share and a path latency, so the blocks together never take less
 * than direct's one step: auto leans on it (it does not evaluate scattered
 * there). Random Clos networks (oversubscribed, scale-up nodes, a degraded
 * link) and tori, random throttles, rank counts and sizes. */
static void never_faster_than_direct_in_formula_and_steps(void **state)
{
    (void)state;
    srand(777);
    int compared = 0;
    for (int trial = 0; trial < 24; trial++) {
        char spec[160];
        unsigned kind = (unsigned)trial % 3;
        if (kind == 0)
            snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,bw=%uGB/s", 2 + (unsigned)rand() % 6,
                     2 + (unsigned)rand() % 4, 1 + (unsigned)rand() % 3, 10 + (unsigned)rand() % 40);
        else if (kind == 1)
            snprintf(spec, sizeof spec, "clos:down=4x%u,up=1x2,node=4,node_bw=%uGB/s", 2 + (unsigned)rand() % 3,
                     50 + (unsigned)rand() % 200);
        else
            snprintf(spec, sizeof spec, "torus:dims=%ux%u", 2 + (unsigned)rand() % 4, 2 + (unsigned)rand() % 4);
        tc_topo *t = NULL;
        tc_err err = {{0}};
        if (tc_topo_build(spec, &t, &err) != TC_OK)
            fail_msg("%s: %s", spec, err.msg);
        if (rand() % 2 && tc_topo_degrade_link(t, (uint32_t)rand() % 4, 0.25, &err) != TC_OK)
            fail_msg("%s: %s", spec, err.msg);
        uint32_t p = 2 + (uint32_t)rand() % (t->n_endpoints - 1), k = 1 + (uint32_t)rand() % 9;
        double bytes = (double)(1 + rand() % 4096) * 4096.0;
        for (int m = 0; m < 2; m++) {
            tc_mode mode = m == 0 ? TC_MODE_FORMULA : TC_MODE_STEPS;
            double d = eval(t, TC_ALGO_DIRECT, 0, p, bytes, mode), sc = eval(t, TC_ALGO_SCATTERED, k, p, bytes, mode);
            if (sc < d * (1 - 1e-12))
                fail_msg("%s p=%u throttle=%u %.0f B mode %d: scattered %.9g s < direct %.9g s", spec, p, k, bytes, m,
                         sc, d);
            compared++;
        }
        tc_topo_free(t);
    }
    assert_int_equal(compared, 48);
}

static void parsing_naming_and_refusals(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_coll_req q = {0};
    char buf[96];
    assert_int_equal(tc_algo_parse("scattered", &q, &err), TC_OK);
    assert_int_equal(q.algo, TC_ALGO_SCATTERED);
    assert_int_equal(q.throttle, 0);
    assert_string_equal(tc_algo_format(&q, buf, sizeof buf), "scattered");
    assert_int_equal(tc_algo_parse("scattered:throttle=0", &q, &err), TC_OK);
    assert_int_equal(q.throttle, TC_THROTTLE_ALL);
    assert_string_equal(tc_algo_format(&q, buf, sizeof buf), "scattered:throttle=0");
    assert_int_equal(tc_algo_parse("scattered:throttle=8", &q, &err), TC_OK);
    assert_int_equal(q.throttle, 8);
    assert_string_equal(tc_algo_format(&q, buf, sizeof buf), "scattered:throttle=8");
    assert_int_equal(tc_algo_parse("ring:throttle=8", &q, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "only scattered"));
    assert_int_equal(tc_algo_parse("scattered:throttle=-1", &q, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "invalid throttle"));
    assert_int_equal(tc_algo_parse("scattered:throttle=many", &q, &err), TC_EINVAL);
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_SCATTERED, 8, NULL, &err));
    assert_non_null(strstr(err.msg, "only alltoall"));
    /* The default is MPICH's 32: 64 ranks take 2 blocks. */
    tc_sched *s = build(64, 0, 6400);
    assert_int_equal(s->nsteps, 2);
    tc_sched_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_of_eight_ranks_follow_mpich),
        cmocka_unit_test(every_block_delivers_what_its_receives_expect),
        cmocka_unit_test(data_checker_passes_for_every_rank_count),
        cmocka_unit_test(throttle_zero_is_direct_in_every_evaluator),
        cmocka_unit_test(throttle_one_on_a_switch_is_the_hand_count),
        cmocka_unit_test(never_faster_than_direct_in_formula_and_steps),
        cmocka_unit_test(parsing_naming_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
