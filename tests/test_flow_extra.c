/*
 * test_flow_extra.c - what the flow evaluator tells beside its times: the
 * names in its trace file, its progress reports, and its memory estimate
 * against a lower bound of what a run must hold.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "topocc/flow.h"

#include "build_helpers.h"

/* ---- trace names ---- */

/* The metadata event of kind name ("process_name", "thread_name") for
 * pid (and tid, >= 0), or NULL. */
static const char *meta_name(json_t *ev, const char *name, json_int_t pid, json_int_t tid)
{
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "M") != 0 ||
            strcmp(json_string_value(json_object_get(e, "name")), name) != 0 ||
            json_integer_value(json_object_get(e, "pid")) != pid)
            continue;
        if (tid >= 0 && json_integer_value(json_object_get(e, "tid")) != tid)
            continue;
        return json_string_value(json_object_get(json_object_get(e, "args"), "name"));
    }
    return NULL;
}

static void trace_names_jobs_and_rank_tracks(void **state)
{
    (void)state;
    char path[] = "/tmp/topocc-flow-names-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tc_topo *t = topo("clos:down=4x4,up=1x2");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 4, 1 << 20);
    const uint32_t map_a[] = {0, 1, 2, 3}, map_b[] = {12, 9, 6, 15};
    /* A name that JSON must escape, and one job without a name. */
    tc_flow_job jobs[] = {{.sched = s, .rank_map = map_a, .name = "train \"A\"\\1"},
                          {.sched = s, .rank_map = map_b, .start_s = 1e-4}};
    tc_flow_opts o = {.trace_path = path};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        fail_msg("trace: %s at line %d", je.text, je.line);
    json_t *ev = json_object_get(root, "traceEvents");
    assert_true(json_is_array(ev));
    assert_string_equal(meta_name(ev, "process_name", 0, -1), "train \"A\"\\1");
    assert_string_equal(meta_name(ev, "process_name", 1, -1), "job 1");
    /* Every track (pid, tid) of a slice is named after its rank and endpoint. */
    size_t i, slices = 0;
    json_t *e;
    json_array_foreach(ev, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0)
            continue;
        slices++;
        json_int_t pid = json_integer_value(json_object_get(e, "pid"));
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        char want[64];
        snprintf(want, sizeof want, "rank %d (endpoint %u)", (int)tid, (pid ? map_b : map_a)[tid]);
        const char *got = meta_name(ev, "thread_name", pid, tid);
        assert_non_null(got);
        assert_string_equal(got, want);
    }
    assert_int_equal(slices, res.trace_slices);
    assert_int_equal(slices, 2 * 6 * 4);
    json_decref(root);
    tc_flow_result_free(&res);
    remove(path);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- progress ---- */

typedef struct calls {
    int n;
    double last_done, total, want_total;
    bool monotone, bounded, named, total_exact;
    tc_progress last;
} calls;

static void record(void *ud, const tc_progress *p)
{
    calls *c = ud;
    c->monotone &= p->done >= c->last_done;
    c->bounded &= p->total <= 0 || p->done <= p->total;
    c->named &= strcmp(p->what, "flow simulation") == 0 && strcmp(p->unit, "transfers") == 0;
    /* A report before the end has the schedule's total, counted up front. */
    c->total_exact &= p->total == c->want_total;
    c->last_done = p->done;
    c->last = *p;
    c->n++;
}

static void progress_reaches_the_total_of_all_jobs(void **state)
{
    (void)state;
    /* Ring all-reduce on 512 ranks: 2 x 511 steps of 512 transfers, about a
     * third of a second, so at least one report comes before the end on
     * most machines; plus an all-to-all with its local copies. */
    tc_topo *t = topo("clos:down=32x16,up=1x16");
    tc_sched *ring = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 512, 1 << 20);
    tc_sched *a2a = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 16, 1 << 20);
    tc_flow_job jobs[] = {{.sched = ring}, {.sched = a2a, .start_s = 1e-3}};
    double want = 2.0 * 511 * 512 + 16.0 * 16;
    calls c = {.monotone = true, .bounded = true, .named = true, .total_exact = true, .want_total = want};
    tc_flow_opts o = {.progress = record, .progress_ud = &c};
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_OK);
    assert_true(c.n >= 1);
    assert_true(c.monotone && c.bounded && c.named && c.total_exact);
    /* The last report: everything done. */
    assert_true(c.last.done == want);
    assert_true(c.last.total == want);
    assert_true(c.last.fraction == 1);
    assert_true(c.last.mem_bytes > 0);
    assert_true((double)(res.jobs[0].transfers + res.jobs[1].transfers) == want);
    tc_flow_result_free(&res);

    /* The event budget still holds with progress on (both share the
     * event counter's slow path). */
    o.event_budget = 1000;
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &res, &err), TC_EINVAL);
    assert_string_equal(err.msg, "the run exceeded the event budget of 1000 events; raise it with --event-budget");
    tc_sched_free(ring);
    tc_sched_free(a2a);
    tc_topo_free(t);
}

/* ---- the memory estimate ---- */

/* What a flow-level simulation of the run must hold at least, bytes: per
 * link its capacity and the head of its list of flows (8 + 8); per rank the
 * step it is at and its pending receives (4 + 4); per transfer of the
 * largest step, as the schedule emits it, source, destination and bytes
 * (4 + 4 + 8); per transfer in flight, as a flow, its endpoints (4 + 4),
 * bytes, bytes left, rate, issue time and path latency (5 x 8), its event
 * in the queue (time and flow, 8 + 4) and, per link of its path (at least
 * hops), the link in its path and the flow in the link's list (4 + 4). In
 * flight at once: the largest step (all of a direct all-to-all's p (p - 1)
 * transfers start at time 0; a ring has p transfers per step). */
static double lower_bound(const tc_topo *t, uint32_t p, double inflight, double hops)
{
    return t->n_links * 16.0 + p * 8.0 + inflight * (16 + 48 + 12 + 8 * hops);
}

/* Unfolded (--no-skip): the bound counts every rank's transfers. */
static double estimate(const tc_topo *t, const tc_sched *s, tc_multipath mp)
{
    tc_flow_job job = {.sched = s};
    tc_flow_opts o = {.multipath = mp, .no_skip = true};
    return tc_flow_mem_estimate(t, &job, 1, &o);
}

static void check_ratio(double est, double lb, const char *what)
{
    double r = est / lb;
    print_message("%s: estimate %.3g bytes, lower bound %.3g, ratio %.2f\n", what, est, lb, r);
    if (!(r >= 1 && r <= 4))
        fail_msg("%s: estimate %.4g is %.2f x the lower bound %.4g (want 1 to 4)", what, est, r, lb);
}

static void estimate_is_within_four_times_a_lower_bound(void **state)
{
    (void)state;
    /* Two-tier Clos of 1,024 hosts: a transfer between two leaves crosses
     * 4 links, within a leaf 2 (hops 2 is the bound). */
    tc_topo *t = topo("clos:down=32x32,up=1x32");
    tc_sched *a2a = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 1024, 1 << 30);
    check_ratio(estimate(t, a2a, TC_MULTIPATH_ROUTE), lower_bound(t, 1024, 1024.0 * 1023, 4), "a2a 1024");
    tc_sched *a2a_small = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 256, 1 << 30);
    check_ratio(estimate(t, a2a_small, TC_MULTIPATH_ROUTE), lower_bound(t, 256, 256.0 * 255, 2), "a2a 256");
    /* A torus 8x8x8: two ranks are 2 hops apart per dimension on average
     * (0, 1, 2, 3, 4, 3, 2, 1 on a ring of 8), 6 in all. */
    tc_topo *tt = topo("torus:dims=8x8x8");
    tc_sched *ta2a = sched(tt, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 512, 1 << 30);
    check_ratio(estimate(tt, ta2a, TC_MULTIPATH_ROUTE), lower_bound(tt, 512, 512.0 * 511, 6), "torus a2a 512");
    /* Where few flows are in flight, the simulator's tables per link and
     * per live step weigh more than the bound counts: above it, at least. */
    tc_sched *ring = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 1024, 1 << 30);
    assert_true(estimate(t, ring, TC_MULTIPATH_ROUTE) >= lower_bound(t, 1024, 1024, 2));
    tc_sched *tring = sched(tt, TC_OP_ALLREDUCE, TC_ALGO_RING, 512, 1 << 30);
    assert_true(estimate(tt, tring, TC_MULTIPATH_ROUTE) >= lower_bound(tt, 512, 512, 1));
    /* The all-to-all grows with its transfers: 16 times the transfers,
     * about 16 times the memory. */
    double r = estimate(t, a2a, TC_MULTIPATH_ROUTE) / estimate(t, a2a_small, TC_MULTIPATH_ROUTE);
    assert_true(r > 12 && r < 20);
    /* Spraying holds every path of a transfer: more memory per flow. */
    assert_true(estimate(t, a2a, TC_MULTIPATH_SPRAY) > 2 * estimate(t, a2a, TC_MULTIPATH_ROUTE));
    tc_sched_free(a2a);
    tc_sched_free(a2a_small);
    tc_sched_free(ring);
    tc_sched_free(tring);
    tc_sched_free(ta2a);
    tc_topo_free(tt);
    tc_topo_free(t);
}

/* The run's own figure of memory in use (the last progress report) stays
 * below the estimate made before it. */
static void memory_in_use_stays_below_the_estimate(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=16x16,up=1x16");
    const tc_algo algos[] = {TC_ALGO_DIRECT, TC_ALGO_PAIRWISE, TC_ALGO_BRUCK};
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        tc_sched *s = sched(t, TC_OP_ALLTOALL, algos[i], 256, 1 << 24);
        calls c = {.monotone = true, .bounded = true, .named = true, .total_exact = true, .want_total = 256.0 * 256};
        tc_flow_job job = {.sched = s};
        /* Every flow simulated (no skipping, no fold), routed by D-mod-k:
         * ECMP's collisions would end nearly every flow at its own instant
         * (50 s for the direct one), the memory the same. */
        tc_flow_opts o = {.routing = TC_ROUTE_DMODK, .no_skip = true, .progress = record, .progress_ud = &c};
        double est = tc_flow_mem_estimate(t, &job, 1, &o);
        tc_flow_result res;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
        assert_int_equal(res.fold_ranks, 0);
        print_message("%s: in use %.3g bytes, estimate %.3g\n", tc_algo_name(algos[i]), c.last.mem_bytes, est);
        assert_true(c.last.mem_bytes > 0 && c.last.mem_bytes <= est);
        tc_flow_result_free(&res);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

/* Folded (rank symmetry), a direct all-to-all simulates a class of ranks
 * and emits only their transfers: the estimate follows the fold (16 of 512
 * ranks here), stays above the run's own figure of memory in use, and is
 * below the unfolded estimate (--no-skip) by more than 3x. Messages of 64
 * KiB go eagerly, so the run folds. */
static void folded_estimate_follows_the_fold(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:hosts=512,radix=32,tiers=2");
    tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 512, 32.0 * 1024 * 1024);
    calls c = {.monotone = true, .bounded = true, .named = true};
    tc_flow_job job = {.sched = s};
    tc_flow_opts o = {.routing = TC_ROUTE_DMODK, .progress = record, .progress_ud = &c};
    double est = tc_flow_mem_estimate(t, &job, 1, &o);
    tc_flow_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &res, &err), TC_OK);
    assert_int_equal(res.fold_ranks, 16);
    tc_flow_opts whole = o;
    whole.no_skip = true;
    double est_whole = tc_flow_mem_estimate(t, &job, 1, &whole);
    print_message("folded: in use %.3g bytes, estimate %.3g; not folded: estimate %.3g\n", c.last.mem_bytes, est,
                  est_whole);
    assert_true(c.last.mem_bytes > 0 && c.last.mem_bytes <= est);
    assert_true(est * 3 < est_whole);
    /* at least the step the fold's check and the transfer count emit whole
     * (511 x 512 transfers, twice) */
    assert_true(est >= 2 * 512.0 * 511 * sizeof(tc_xfer));
    tc_flow_result_free(&res);
    tc_sched_free(s);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_names_jobs_and_rank_tracks),
        cmocka_unit_test(progress_reaches_the_total_of_all_jobs),
        cmocka_unit_test(estimate_is_within_four_times_a_lower_bound),
        cmocka_unit_test(memory_in_use_stays_below_the_estimate),
        cmocka_unit_test(folded_estimate_follows_the_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
