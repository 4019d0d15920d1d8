/*
 * test_cluster.c - cluster replay: a five-job trace replayed by hand on a
 * Clos and a torus under FIFO and EASY backfilling; the optical-switch
 * cubes; invariants on random traces (never more endpoints than the
 * cluster, FIFO starts in arrival order, utilisation within [0, 1]).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/cluster.h"
#include "build_helpers.h"

static tc_cluster_out replay(const char *spec, const tc_cjob *jobs, size_t n, tc_cluster_sched sc, uint32_t ocs)
{
    tc_topo *t = topo(spec);
    tc_trace tr = {.jobs = (tc_cjob *)jobs, .n = n, .format = TC_TRACE_CSV};
    tc_cluster_opts o = {.sched = sc, .ocs = ocs, .samples = 14};
    tc_cluster_out out;
    tc_err err = {{0}};
    if (tc_cluster_replay(t, &tr, &o, &out, &err))
        fail_msg("%s: %s", spec, err.msg);
    tc_topo_free(t);
    return out;
}

static void near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-12 * (1 + fabs(want))))
        fail_msg("%s: got %.15g, by hand %.15g", what, got, want);
}

/* Five jobs on 8 endpoints: a Clos of two leaves of 4 (clos:down=4x2,
 * up=1x2) and a ring of 8 (torus:dims=8, slices are intervals).
 *   J0 t=0 size 3 dur 10   torus [0,2]   Clos leaf 0: 0,1,2
 *   J1 t=0 size 2 dur 2    torus [3,4]   Clos leaf 1 (best fit)
 *   J2 t=0 size 2 dur 10   torus [5,6]   Clos leaf 1
 *   J3 t=1 size 3 dur 4    full at t=1. At t=2 J1 ends: the torus has
 *                          3, 4 and 7 free, no interval of 3: it waits
 *                          until J0 and J2 end at 10; the Clos starts it
 *                          on endpoint 3 and J1's two (t=2).
 *   J4 t=3 size 1 dur 2    torus FIFO: behind J3, starts at 10; torus
 *                          backfill: J3's reservation is [0,2] at 10, J4
 *                          ends at 5 <= 10: starts at 3 on endpoint 3;
 *                          Clos: full until J3 ends at 6, starts at 6.
 * Makespan: torus 14 (J3 10-14), Clos 10. Allocated endpoint-seconds
 * 3*10 + 2*2 + 2*10 + 3*4 + 1*2 = 68: utilisation 68/112 and 68/80;
 * over the arrivals (0 to 3) 7, 7 and 5 of 8 held (torus: 19/24), 7, 7
 * and 8 (Clos: 22/24).
 * Fragmentation (the head waits with as many endpoints free as it needs):
 * torus FIFO t=2..10, 3 of 8 free: area 8 * 3/8 = 3, time 8; backfill
 * t=2..3 and 5..10 (J4 holds endpoint 3 from 3 to 5): area 6 * 3/8, time
 * 6; Clos never. */
static const tc_cjob FIVE[] = {
    {0, 10, 3, 1}, {0, 2, 2, 2}, {0, 10, 2, 3}, {1, 4, 3, 4}, {3, 2, 1, 5},
};

static void five_jobs_by_hand(void **state)
{
    (void)state;
    struct {
        const char *spec;
        tc_cluster_sched sc;
        double start3, start4, makespan, util, util_arr, frag_area, frag_time;
    } cases[] = {
        {"torus:dims=8", TC_SCHED_FIFO, 10, 10, 14, 68.0 / 112, 19.0 / 24, 3, 8},
        {"torus:dims=8", TC_SCHED_BACKFILL, 10, 3, 14, 68.0 / 112, 19.0 / 24, 6 * 3.0 / 8, 6},
        {"clos:down=4x2,up=1x2", TC_SCHED_FIFO, 2, 6, 10, 68.0 / 80, 22.0 / 24, 0, 0},
        {"clos:down=4x2,up=1x2", TC_SCHED_BACKFILL, 2, 6, 10, 68.0 / 80, 22.0 / 24, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tc_cluster_out o = replay(cases[i].spec, FIVE, 5, cases[i].sc, 0);
        char what[96];
        snprintf(what, sizeof what, "%s %s", cases[i].spec, tc_cluster_sched_name(cases[i].sc));
        assert_int_equal(o.jobs, 5);
        assert_int_equal(o.started, 5);
        assert_int_equal(o.never_fit, 0);
        for (int j = 0; j < 3; j++)
            near(o.job[j].start_s, 0, what);
        near(o.job[3].start_s, cases[i].start3, what);
        near(o.job[4].start_s, cases[i].start4, what);
        near(o.makespan_s, cases[i].makespan, what);
        near(o.util_mean, cases[i].util, what);
        near(o.util_arrivals, cases[i].util_arr, what);
        near(o.waste_share, 0, what);
        near(o.frag_mean, cases[i].frag_area / cases[i].makespan, what);
        near(o.frag_time_share, cases[i].frag_time / cases[i].makespan, what);
        /* over the arrivals (0 to 3): the torus's head waits shape-bound
         * from 2 to 3 with 3 of 8 free, under either scheduler */
        near(o.frag_arrivals, cases[i].frag_area > 0 ? 3.0 / 8 / 3 : 0, what);
        near(o.frag_time_arrivals, cases[i].frag_area > 0 ? 1.0 / 3 : 0, what);
        double w3 = cases[i].start3 - 1, w4 = cases[i].start4 - 3;
        near(o.wait_mean_s, (w3 + w4) / 5, what);
        near(o.wait_max_s, w3 > w4 ? w3 : w4, what);
        /* the series' 14 bins split the arrivals' span, 0 to 3: the
         * first holds 7 of 8 on both, the last (J1 gone at 2) 5 of 8 on
         * the torus and 8 on the Clos (J3 started at 2) */
        near(o.util[0], 7.0 / 8, what);
        near(o.util[13], cases[i].makespan == 14 ? 5.0 / 8 : 1, what);
        double area = 0;
        for (uint32_t b = 0; b < o.samples; b++) {
            assert_true(o.util[b] >= 0 && o.util[b] <= 1 + 1e-12);
            area += o.util[b] / o.samples;
        }
        /* the series covers the arrivals' span, 0 to 3 */
        near(area, o.util_arrivals, what);
        tc_cluster_out_free(&o);
    }
}

/* Sizes no cuboid fits round up; a job larger than the cluster never
 * fits. On a ring of 8 every size up to 8 has an interval; on a 2x4
 * torus 5 has none (prime, beyond 4) and takes 6 (2x3); 9 never fits. */
static void rounding_and_never_fits(void **state)
{
    (void)state;
    static const tc_cjob jobs[] = {{0, 1, 5, 1}, {0, 1, 9, 2}, {0, 1, 2, 3}};
    tc_cluster_out o = replay("torus:dims=2x4", jobs, 3, TC_SCHED_FIFO, 0);
    assert_int_equal(o.never_fit, 1);
    assert_true(o.job[1].never_fits);
    assert_int_equal(o.job[0].alloc, 6);
    assert_int_equal(o.job[2].alloc, 2);
    near(o.job[2].start_s, 0, "the 2 fits beside the 2x3");
    near(o.waste_share, 1 - 7.0 / 8, "one of 8 allocated endpoint-seconds unasked for");
    tc_cluster_out_free(&o);
}

/* Optical switches, cubes of 4 on a ring of 16 (4 cubes): a job of 5
 * takes 2 whole cubes, any free ones; one of 3 a cuboid inside the
 * fullest cube with room. J0 (3) takes cube 0's [0,2]; J1 (5) cubes 1 and
 * 2; J2 (1) the fullest cube with room, cube 0: endpoint 3; J3 (8) two
 * cubes: only cube 3 is whole, so it waits until J1 ends at 4. Without
 * the switches J3 needs an interval of 8: J0 holds [0,2], J1 [3,7], J2
 * endpoint 8, so it waits until J0 and J2 end at 10. */
static void optical_cubes(void **state)
{
    (void)state;
    static const tc_cjob jobs[] = {{0, 10, 3, 1}, {0, 4, 5, 2}, {0, 10, 1, 3}, {0, 1, 8, 4}};
    tc_cluster_out o = replay("torus:dims=16", jobs, 4, TC_SCHED_FIFO, 4);
    assert_int_equal(o.job[1].alloc, 8);
    assert_int_equal(o.job[0].alloc, 3);
    near(o.job[2].start_s, 0, "J2 fits cube 0");
    near(o.job[3].start_s, 4, "J3 waits for two whole cubes");
    tc_cluster_out_free(&o);
    o = replay("torus:dims=16", jobs, 4, TC_SCHED_FIFO, 0);
    assert_int_equal(o.job[1].alloc, 5);
    near(o.job[3].start_s, 10, "J3 waits for an interval of 8");
    tc_cluster_out_free(&o);
    /* a torus whose extents are not multiples of the cube is refused */
    tc_topo *t = topo("torus:dims=6x4");
    tc_trace tr = {.jobs = (tc_cjob *)jobs, .n = 4};
    tc_cluster_opts op = {.ocs = 4};
    tc_cluster_out x;
    tc_err err = {{0}};
    assert_int_equal(tc_cluster_replay(t, &tr, &op, &x, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "not a multiple"));
    tc_topo_free(t);
}

/* Random traces: at no time do running jobs hold more than the cluster;
 * under FIFO jobs start in arrival order; every job that fits starts. */
static void invariants_on_random_traces(void **state)
{
    (void)state;
    const char *specs[] = {"torus:dims=4x4x4", "clos:down=8x8,up=1x8", "torus:dims=8x8", "clos:hosts=64,radix=8,tiers=3"};
    uint64_t x = 7;
    for (int trial = 0; trial < 40; trial++) {
        size_t n = 60;
        tc_cjob *jobs = malloc(n * sizeof *jobs);
        double t = 0;
        for (size_t j = 0; j < n; j++) {
            x = tc_mix64(x);
            t += (double)(x % 1000) / 100;
            uint32_t size = 1u << (tc_mix64(x) % 7);
            if (tc_mix64(x + 1) % 5 == 0)
                size = 1 + (uint32_t)(tc_mix64(x + 2) % 70);
            jobs[j] = (tc_cjob){t, 1 + (double)(tc_mix64(x + 3) % 5000) / 100, size, j + 1};
        }
        const char *spec = specs[trial % 4];
        tc_cluster_sched sc = trial % 2 ? TC_SCHED_BACKFILL : TC_SCHED_FIFO;
        uint32_t ocs = strcmp(spec, "torus:dims=4x4x4") == 0 && trial % 8 < 4 ? 2 : 0;
        tc_cluster_out o = replay(spec, jobs, n, sc, ocs);
        double last = -1;
        for (size_t j = 0; j < n; j++) {
            if (o.job[j].never_fits) {
                assert_true(jobs[j].size > 64);
                continue;
            }
            assert_true(isfinite(o.job[j].start_s));
            assert_true(o.job[j].wait_s >= 0);
            assert_true(o.job[j].alloc >= jobs[j].size);
            if (sc == TC_SCHED_FIFO) {
                assert_true(o.job[j].start_s >= last);
                last = o.job[j].start_s;
            }
            /* held at this job's start, itself included */
            double s = o.job[j].start_s;
            uint64_t held = 0;
            for (size_t k = 0; k < n; k++)
                if (!o.job[k].never_fits && o.job[k].start_s <= s && s < o.job[k].start_s + jobs[k].duration_s)
                    held += o.job[k].alloc;
            assert_true(held <= 64);
        }
        assert_true(o.util_mean > 0 && o.util_mean <= 1);
        assert_true(o.frag_mean >= 0 && o.frag_mean <= 1 && o.frag_time_share <= 1);
        tc_cluster_out_free(&o);
        free(jobs);
    }
}

/* The torus fast path (bit masks of free cells) makes the slice policy's
 * choices: on random traces over tori of 1 to 4 dimensions every job
 * starts at the same moment with as many endpoints at the same origin as
 * through tc_place_map_free. */
static void fast_slices_match_the_placement_library(void **state)
{
    (void)state;
    const char *specs[] = {"torus:dims=16", "torus:dims=5x7", "torus:dims=4x4x4", "torus:dims=3x2x4x2",
                           "torus:dims=8x3x5,wrap=1x0x1", "torus:dims=64x2"};
    uint64_t x = 99;
    for (int trial = 0; trial < 24; trial++) {
        const char *spec = specs[trial % 6];
        tc_topo *t = topo(spec);
        size_t n = 80;
        tc_cjob *jobs = malloc(n * sizeof *jobs);
        double at = 0;
        for (size_t j = 0; j < n; j++) {
            x = tc_mix64(x);
            at += (double)(x % 500) / 100;
            uint32_t size = 1 + (uint32_t)(tc_mix64(x + 1) % (t->n_endpoints / 2));
            jobs[j] = (tc_cjob){at, 1 + (double)(tc_mix64(x + 2) % 3000) / 100, size, j + 1};
        }
        tc_trace tr = {.jobs = jobs, .n = n};
        tc_cluster_out a, b;
        tc_err err = {{0}};
        tc_cluster_opts oa = {.sched = trial % 2 ? TC_SCHED_BACKFILL : TC_SCHED_FIFO};
        tc_cluster_opts ob = oa;
        ob.place_lib = true;
        if (tc_cluster_replay(t, &tr, &oa, &a, &err) || tc_cluster_replay(t, &tr, &ob, &b, &err))
            fail_msg("%s: %s", spec, err.msg);
        for (size_t j = 0; j < n; j++) {
            if (a.job[j].start_s != b.job[j].start_s || a.job[j].alloc != b.job[j].alloc ||
                a.job[j].first != b.job[j].first)
                fail_msg("%s job %zu: fast path starts at %g with %u at %u, the library at %g with %u at %u", spec, j,
                         a.job[j].start_s, a.job[j].alloc, a.job[j].first, b.job[j].start_s, b.job[j].alloc,
                         b.job[j].first);
        }
        assert_true(a.frag_mean == b.frag_mean && a.util_mean == b.util_mean);
        tc_cluster_out_free(&a);
        tc_cluster_out_free(&b);
        free(jobs);
        tc_topo_free(t);
    }
}

/* A Clos of nodes of 4 (clos:down=4x2,up=1x2,node=4: 2 nodes of 4):
 * J0 (1) takes endpoint 0 and J1 (2) shares node 0 with it (the fullest
 * node with room); J2 (5) needs 2 whole nodes (8, 3 unasked) and waits
 * until J1 and J0 end at 6 and 10: it starts at 10; J3 (1) waits behind
 * it under FIFO, and J2 holds all 8 until 12. */
static void clos_nodes_shared_below_a_node(void **state)
{
    (void)state;
    static const tc_cjob jobs[] = {{0, 10, 1, 1}, {0, 6, 2, 2}, {1, 2, 5, 3}, {2, 3, 1, 4}};
    tc_cluster_out o = replay("clos:down=4x2,up=1x2,node=4", jobs, 4, TC_SCHED_FIFO, 0);
    near(o.job[0].start_s, 0, "J0");
    near(o.job[1].start_s, 0, "J1");
    assert_int_equal(o.job[0].first / 4, o.job[1].first / 4); /* one node */
    assert_int_equal(o.job[2].alloc, 8);
    near(o.job[2].start_s, 10, "J2 waits for two whole nodes");
    near(o.job[3].start_s, 12, "J3 behind J2");
    tc_cluster_out_free(&o);
    /* backfill: J3 (ends by 2 + 3 = 5 <= 10) starts at 2 on node 1 */
    o = replay("clos:down=4x2,up=1x2,node=4", jobs, 4, TC_SCHED_BACKFILL, 0);
    near(o.job[3].start_s, 2, "J3 backfilled");
    assert_int_equal(o.job[3].first / 4, 0); /* the fullest node with room: node 0 (1 free) */
    tc_cluster_out_free(&o);
}

static void bad_input(void **state)
{
    (void)state;
    tc_cluster_sched s;
    tc_err err = {{0}};
    assert_int_equal(tc_cluster_sched_parse("sjf", &s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "fifo and backfill"));
    assert_int_equal(tc_cluster_sched_parse("backfill", &s, &err), TC_OK);
    assert_int_equal(s, TC_SCHED_BACKFILL);
    static const tc_cjob bad[] = {{0, 0, 2, 17}};
    tc_topo *t = topo("torus:dims=8");
    tc_trace tr = {.jobs = (tc_cjob *)bad, .n = 1};
    tc_cluster_opts o = {0};
    tc_cluster_out out;
    assert_int_equal(tc_cluster_replay(t, &tr, &o, &out, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "line 17"));
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(five_jobs_by_hand),
        cmocka_unit_test(rounding_and_never_fits),
        cmocka_unit_test(optical_cubes),
        cmocka_unit_test(invariants_on_random_traces),
        cmocka_unit_test(fast_slices_match_the_placement_library),
        cmocka_unit_test(clos_nodes_shared_below_a_node),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
