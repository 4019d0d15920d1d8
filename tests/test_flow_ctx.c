/*
 * test_flow_ctx.c - the flow simulation that jobs join while it runs
 * (tc_flow_ctx_*, include/topocc/flow.h): with the same jobs at the same
 * start times it gives tc_flow_run's times; a job added when another
 * completes starts then; running to a time stops there and resumes; two
 * rings sharing an up-link take the time max-min predicts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/eval.h"
#include "topocc/flow.h"
#include "build_helpers.h"

#define B400 (400e9 / 8)

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-15))
        fail_msg("%s: %.15g vs %.15g", what, a, b);
}

static tc_flow_ctx *ctx_new(const tc_topo *t, const tc_flow_opts *o)
{
    tc_flow_ctx *c = NULL;
    tc_err err = {{0}};
    if (tc_flow_ctx_new(t, o, &c, &err) != TC_OK)
        fail_msg("ctx: %s", err.msg);
    return c;
}

static uint32_t ctx_add(tc_flow_ctx *c, const tc_flow_job *j)
{
    uint32_t id = 0;
    tc_err err = {{0}};
    if (tc_flow_ctx_add(c, j, &id, &err) != TC_OK)
        fail_msg("add: %s", err.msg);
    return id;
}

/* Runs until every job is done; returns how many completions were seen. */
static size_t ctx_drain(tc_flow_ctx *c)
{
    size_t seen = 0;
    for (;;) {
        uint32_t done[8];
        size_t n = 0;
        double now = 0;
        tc_err err = {{0}};
        if (tc_flow_ctx_run(c, INFINITY, done, 8, &n, &now, &err) != TC_OK)
            fail_msg("run: %s", err.msg);
        if (n == 0)
            return seen;
        for (size_t i = 0; i < n; i++)
            assert_rel(tc_flow_ctx_finish(c, done[i]), now, 1e-12, "reported at its finish");
        seen += n;
    }
}

/* The same jobs at the same start times as tc_flow_run (without skipping):
 * the same finish times, over algorithms, sizes, starts and placements. */
static void same_jobs_same_times(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2,lat=1us,hop_lat=100ns");
    const tc_algo al[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DBTREE};
    unsigned seed = 3;
    for (int trial = 0; trial < 12; trial++) {
        tc_sched *s[3];
        uint32_t map[3][16];
        tc_flow_job jobs[3];
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            double bytes = (double)(1u << (10 + (seed >> 8) % 16));
            s[k] = sched(t, TC_OP_ALLREDUCE, al[(k + trial) % 3], 4 + 4 * (k % 2), bytes);
            for (uint32_t r = 0; r < 16; r++)
                map[k][r] = (r * 5 + (uint32_t)k + (uint32_t)trial) % 16;
            jobs[k] = (tc_flow_job){s[k], map[k], 1e-6 * ((seed >> 4) % 50) * k, NULL, 0};
        }
        tc_flow_opts o = {.no_skip = true};
        tc_flow_result res;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_run(t, jobs, 3, &o, &res, &err), TC_OK);
        tc_flow_ctx *c = ctx_new(t, &o);
        uint32_t id[3];
        for (int k = 0; k < 3; k++)
            id[k] = ctx_add(c, &jobs[k]);
        assert_int_equal(ctx_drain(c), 3);
        for (int k = 0; k < 3; k++) {
            char what[48];
            snprintf(what, sizeof what, "trial %d job %d", trial, k);
            assert_rel(tc_flow_ctx_finish(c, id[k]), res.jobs[k].finish_s, 1e-12, what);
        }
        tc_flow_ctx_free(c);
        tc_flow_result_free(&res);
        for (int k = 0; k < 3; k++)
            tc_sched_free(s[k]);
    }
    tc_topo_free(t);
}

/* Two leaves of 4 hosts, one spine, one up-link per leaf; 2-rank rings on
 * hosts {0, 4} and {1, 5} cross both up-links: alone a ring all-reduce of S
 * takes 2 (S/(2B) + 4 us), together 2 (S/B + 4 us) (max-min: each half
 * the up-link). Started together in the context, both take the shared
 * time; B added when A completes takes the time alone, from then. */
static void rings_sharing_an_uplink(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S);
    uint32_t ma[] = {0, 4}, mb[] = {1, 5};
    double together = 2 * (S / B400 + 4e-6), alone = 2 * (S / 2 / B400 + 4e-6);
    tc_flow_job a = {s, ma, 0, NULL, 0}, b = {s, mb, 0, NULL, 0};
    tc_flow_ctx *c = ctx_new(t, NULL);
    uint32_t ia = ctx_add(c, &a), ib = ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    assert_rel(tc_flow_ctx_finish(c, ia), together, 1e-9, "A with B");
    assert_rel(tc_flow_ctx_finish(c, ib), together, 1e-9, "B with A");
    tc_flow_ctx_free(c);

    /* B joins when A completes */
    c = ctx_new(t, NULL);
    ia = ctx_add(c, &a);
    uint32_t done[4];
    size_t n = 0;
    double now = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_ctx_run(c, INFINITY, done, 4, &n, &now, &err), TC_OK);
    assert_int_equal(n, 1);
    assert_int_equal(done[0], ia);
    assert_rel(now, alone, 1e-9, "A alone");
    b.start_s = 0; /* before the time reached: starts now */
    ib = ctx_add(c, &b);
    assert_rel(tc_flow_ctx_start(c, ib), alone, 1e-12, "B starts when added");
    assert_int_equal(ctx_drain(c), 1);
    assert_rel(tc_flow_ctx_finish(c, ib), 2 * alone, 1e-9, "B alone after A");

    /* running to a time stops there with nothing done, and resumes */
    tc_flow_ctx_free(c);
    c = ctx_new(t, NULL);
    ia = ctx_add(c, &a);
    assert_int_equal(tc_flow_ctx_run(c, alone / 3, done, 4, &n, &now, &err), TC_OK);
    assert_int_equal(n, 0);
    assert_rel(now, alone / 3, 1e-15, "stopped at the time asked");
    b.start_s = now;
    ib = ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    /* B overlapped A for part of its run: A slower than alone, B ends later */
    assert_true(tc_flow_ctx_finish(c, ia) > alone * (1 + 1e-9));
    assert_true(tc_flow_ctx_finish(c, ib) > tc_flow_ctx_finish(c, ia));
    /* bad calls */
    assert_int_equal(tc_flow_ctx_run(c, 0, done, 4, &n, &now, &err), TC_EINVAL);
    uint32_t bad[] = {0, 99};
    tc_flow_job jb = {s, bad, 0, NULL, 0};
    uint32_t id;
    assert_int_equal(tc_flow_ctx_add(c, &jb, &id, &err), TC_EINVAL);
    assert_true(isnan(tc_flow_ctx_finish(c, 77)));
    tc_flow_ctx_free(c);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Blame on the two rings: together each flow runs at half its rate alone
 * (B400 / 2 against B400), so half of every flow's sending time is lost,
 * all of it to the shared leaf-spine links, none to the host links; each
 * ring sends S over each of its up-links (two steps of S/2). Alone, a ring
 * loses nothing. */
static void blame_on_shared_uplinks(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S);
    uint32_t ma[] = {0, 4}, mb[] = {1, 5};
    tc_flow_job a = {s, ma, 0, NULL, 0}, b = {s, mb, 0, NULL, 1};
    tc_err err = {{0}};
    tc_flow_ctx *c = ctx_new(t, NULL);
    assert_int_equal(tc_flow_ctx_blame(c, 2, &err), TC_OK);
    assert_int_equal(tc_flow_ctx_blame(c, 2, &err), TC_EINVAL); /* once */
    ctx_add(c, &a);
    ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    for (uint32_t tag = 0; tag < 2; tag++) {
        double sent = tc_flow_ctx_sent(c, tag), lost = tc_flow_ctx_lost(c, tag, UINT32_MAX);
        assert_rel(sent, 4 * S / B400, 1e-9, "flow-seconds sending: 2 flows x 2 steps x S/B");
        assert_rel(lost, sent / 2, 1e-9, "half lost to sharing");
        double sum = 0;
        for (uint32_t l = 0; l < t->n_links; l++) {
            double x = tc_flow_ctx_lost(c, tag, l);
            sum += x;
            if (t->links[l].level == 1)
                assert_true(x == 0); /* host links are not shared */
        }
        assert_rel(sum, lost, 1e-12, "by link, summed");
    }
    /* tag 0's bytes on host 0's way up: S (two steps of S/2) */
    uint32_t links[16], n = tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 4, links);
    assert_true(n >= 2);
    for (uint32_t k = 0; k < n; k++) {
        assert_rel(tc_flow_ctx_tag_bytes(c, 0, links[k]), S, 1e-12, "tag 0 bytes on its path");
        assert_true(tc_flow_ctx_tag_bytes(c, 1, links[k]) == (t->links[links[k]].level == 1 ? 0 : S));
    }
    assert_true(tc_flow_ctx_lost(c, 2, UINT32_MAX) == 0 && tc_flow_ctx_sent(c, 7) == 0);
    tc_flow_ctx_free(c);
    /* one ring alone loses nothing */
    c = ctx_new(t, NULL);
    assert_int_equal(tc_flow_ctx_blame(c, 1, &err), TC_OK);
    ctx_add(c, &a);
    assert_int_equal(ctx_drain(c), 1);
    assert_true(tc_flow_ctx_sent(c, 0) > 0 && tc_flow_ctx_lost(c, 0, UINT32_MAX) == 0);
    tc_flow_ctx_free(c);
    tc_sched_free(s);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_jobs_same_times),
        cmocka_unit_test(rings_sharing_an_uplink),
        cmocka_unit_test(blame_on_shared_uplinks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
