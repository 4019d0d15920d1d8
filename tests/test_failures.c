/*
 * test_failures.c - failed links, switches, hosts and nodes: routes around
 * them on a Clos (ECMP, D-mod-k) and a torus (detour, line), by hand; a
 * job cut off refused naming the ranks; random draws reproducible from the
 * seed; the evaluators on failed networks agree with each other and with
 * hand computation.
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
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/topo.h"
#include "topocc/outcome.h"
#include "build_helpers.h"

static void down(tc_topo *t, const char *item)
{
    tc_fail_item f;
    tc_err err = {{0}};
    if (tc_fail_item_parse(item, &f, &err) || tc_topo_fail_item(t, &f, &err))
        fail_msg("%s: %s", item, err.msg);
}

static bool uses(const uint32_t *path, uint32_t n, uint32_t l)
{
    for (uint32_t i = 0; i < n; i++)
        if (path[i] == l)
            return true;
    return false;
}

/* One failed spine up-link on a 2-tier Clos (4 hosts per leaf, 2 leaves,
 * 4 spines). D-mod-k sends host 0's traffic for host 4 through spine
 * 4 mod 4 = 0; with leaf 0's cable to spine 0 down, the survivors are
 * spines 1, 2, 3 and the route takes survivor (4 / 4 + leaf 0) mod 3 = 1,
 * spine 2, which then carries both 0 -> 4 and 2 -> 6: the four flows of
 * leaf 0 to leaf 1 load its up-links 0, 1, 2, 1. ECMP routes every
 * cross-leaf pair around the cable both ways. */
static void clos_routes_around_a_failed_uplink(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x4");
    uint32_t cable = t->up_lbase[2] + 2 * (0 * 4 + 0); /* leaf 0 -> spine 0, and back */
    char item[32];
    snprintf(item, sizeof item, "link:%u", cable);
    down(t, item);
    assert_int_equal(t->n_failed, 2);
    uint32_t path[16], load[4] = {0};
    for (uint32_t h = 0; h < 4; h++) {
        uint32_t n = tc_topo_route(t, TC_ROUTE_DMODK, h, 4 + h, path);
        assert_int_equal(n, 4);
        for (uint32_t b = 0; b < 4; b++)
            load[b] += uses(path, n, t->up_lbase[2] + 2 * b);
    }
    assert_int_equal(load[0], 0);
    assert_int_equal(load[1], 1);
    assert_int_equal(load[2], 2);
    assert_int_equal(load[3], 1);
    for (uint32_t a = 0; a < 8; a++)
        for (uint32_t b = 0; b < 8; b++) {
            for (int r = 0; r < 2; r++) {
                uint32_t n = tc_topo_route(t, r ? TC_ROUTE_ECMP : TC_ROUTE_DMODK, a, b, path);
                assert_true(n != TC_NO_ROUTE);
                assert_false(uses(path, n, cable) || uses(path, n, cable + 1));
                for (uint32_t i = 0; i + 1 < n; i++)
                    assert_int_equal(t->links[path[i]].dst, t->links[path[i + 1]].src);
            }
        }
    tc_topo_free(t);
}

/* The routes a failed cable displaces spread over the survivors, as ECMP
 * hardware rehashes and a subnet manager rebalances, instead of piling
 * onto one port. clos:down=8x8,up=1x8, leaf 0's cable to spine 0 down,
 * every pair between leaf 0 and the other leaves: healthy, each of leaf
 * 0's up-links carries 8 hosts x 7 destinations = 56 routes out and each
 * spine's down-link into leaf 0 56 routes in. D-mod-k: the 56 displaced
 * routes out (destinations 8m, m = 1..7, survivor m mod 7) and in (host 0
 * from leaf L, survivor L mod 7) are 8 for each of the 7 survivors, 64 on
 * every surviving link. ECMP: a survivor gains at most 24 over its
 * healthy load (8 on average; the rule before, the next port, gave one
 * survivor all of them). */
static void displaced_routes_spread_over_the_survivors(void **state)
{
    (void)state;
    tc_topo *h = topo("clos:down=8x8,up=1x8"), *t = topo("clos:down=8x8,up=1x8");
    uint32_t cable = t->up_lbase[2]; /* leaf 0 -> spine 0, and back */
    char item[32];
    snprintf(item, sizeof item, "link:%u", cable);
    down(t, item);
    for (int r = 0; r < 2; r++) {
        tc_routing rt = r ? TC_ROUTE_ECMP : TC_ROUTE_DMODK;
        uint32_t out[2][8] = {{0}}, in[2][8] = {{0}}, path[16];
        for (int f = 0; f < 2; f++)
            for (uint32_t a = 0; a < 8; a++)
                for (uint32_t b = 8; b < 64; b++) {
                    const tc_topo *g = f ? t : h;
                    uint32_t n = tc_topo_route(g, rt, a, b, path);
                    assert_true(n != TC_NO_ROUTE);
                    for (uint32_t k = 0; k < 8; k++)
                        out[f][k] += uses(path, n, g->up_lbase[2] + 2 * k);
                    n = tc_topo_route(g, rt, b, a, path);
                    assert_true(n != TC_NO_ROUTE);
                    for (uint32_t k = 0; k < 8; k++)
                        in[f][k] += uses(path, n, g->down_lbase[2] + 2 * k);
                }
        assert_int_equal(out[1][0], 0);
        assert_int_equal(in[1][0], 0);
        for (uint32_t k = 1; k < 8; k++) {
            if (r == 0 && (out[1][k] != 64 || in[1][k] != 64))
                fail_msg("D-mod-k survivor %u: %u routes out, %u in, want 64 each", k, out[1][k], in[1][k]);
            if (out[1][k] > out[0][k] + 24 || in[1][k] > in[0][k] + 24)
                fail_msg("%s survivor %u: %u -> %u routes out, %u -> %u in", r ? "ECMP" : "D-mod-k", k, out[0][k],
                         out[1][k], in[0][k], in[1][k]);
        }
    }
    tc_topo_free(h);
    tc_topo_free(t);
}

/* The topology's figures with the links as they are. Healthy, they are
 * the design's on every kind; with faults, by hand on clos:down=8x8,up=1x8
 * (50 GB/s cables, 4 leaves a half): a spine down leaves 7 up-links a
 * leaf, 1.4 TB/s and 8:7; four of leaf 0's up-links down, 4 + 3 x 8
 * up-links, 1.4 TB/s and 2:1; leaf 0's cable to spine 0 at half rate,
 * 7.5 + 3 x 8 = 1.575 TB/s and 8:7.5. A 4x4 torus's cable 0 down: the
 * planes through it keep 7 of their 8 cables, 350 GB/s; a 4x4 mesh's
 * middle plane does not hold it, and its corners have two ports, 100
 * GB/s. */
static void topology_figures_as_they_are(void **state)
{
    (void)state;
    static const char *const healthy[] = {"clos:down=8x8,up=1x8", "clos:down=4x4x4,up=1x4x4", "clos:down=8x8,up=1x2",
                                          "clos:down=4x4,up=2x2,links=1x2", "clos:hosts=96,radix=16,tiers=2",
                                          "clos:down=8x8,up=1x8,hosts=36,bw1=100Gbps,bw2=400Gbps",
                                          "torus:dims=4x4", "torus:dims=4x6,wrap=1x0", "torus:dims=5x3x2"};
    for (size_t i = 0; i < sizeof healthy / sizeof *healthy; i++) {
        tc_topo *t = topo(healthy[i]);
        tc_topo_info a, b;
        tc_topo_get_info(t, &a);
        /* a link degraded by a factor of 1 + 1e-12 makes the figures the
         * links' as they are, and changes them by 1e-12 at most */
        tc_err err = {{0}};
        uint32_t l = t->kind == TC_TOPO_CLOS ? t->up_lbase[t->levels] : t->plus_lbase[0];
        if (tc_topo_degrade_link(t, l, 1 + 1e-12, &err))
            fail_msg("degrade: %s", err.msg);
        assert_true(t->n_degraded > 0);
        tc_topo_get_info_as_is(t, &b);
        if (fabs(a.bisection_Bps - b.bisection_Bps) > 1e-9 * a.bisection_Bps)
            fail_msg("%s: bisection %.9g as is, %.9g designed", healthy[i], b.bisection_Bps, a.bisection_Bps);
        for (int k = 1; t->kind == TC_TOPO_CLOS && k < t->levels; k++)
            if (fabs(a.oversub[k] - b.oversub[k]) > 1e-9 * a.oversub[k])
                fail_msg("%s: level %d oversubscription %.9g as is, %.9g designed", healthy[i], k, b.oversub[k],
                         a.oversub[k]);
        tc_topo_free(t);
    }
    struct {
        const char *spec, *fault;
        double bisection, oversub;
    } c[] = {{"clos:down=8x8,up=1x8", "switch:72", 1.4e12, 8.0 / 7},
             {"clos:down=8x8,up=1x8", "link:128,link:130,link:132,link:134", 1.4e12, 2},
             {"clos:down=8x8,up=1x8", "half:128", 1.575e12, 8 / 7.5},
             {"torus:dims=4x4", "link:0", 350e9, 0},
             {"torus:dims=4x4,wrap=0x0", "link:0", 200e9, 0},
             /* an odd mesh line's two middle cables: 5x4 mesh, line 0's cable 1 or 2 down */
             {"torus:dims=5x4,wrap=0x0", "link:2", 150e9, 0},
             {"torus:dims=5x4,wrap=0x0", "link:4", 150e9, 0}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        tc_topo *t = topo(c[i].spec);
        if (strncmp(c[i].fault, "half:", 5) == 0) {
            tc_err err = {{0}};
            uint32_t l = (uint32_t)atoi(c[i].fault + 5);
            if (tc_topo_degrade_link(t, l, 0.5, &err) || tc_topo_degrade_link(t, l + 1, 0.5, &err))
                fail_msg("degrade: %s", err.msg);
        } else {
            char f[128];
            snprintf(f, sizeof f, "%s", c[i].fault);
            for (char *tok = strtok(f, ","); tok; tok = strtok(NULL, ","))
                down(t, tok);
        }
        tc_topo_info in;
        tc_topo_get_info_as_is(t, &in);
        if (fabs(in.bisection_Bps - c[i].bisection) > 1e-9 * c[i].bisection)
            fail_msg("%s %s: bisection %.9g, by hand %.9g", c[i].spec, c[i].fault, in.bisection_Bps, c[i].bisection);
        if (c[i].oversub > 0 && fabs(in.oversub[1] - c[i].oversub) > 1e-9)
            fail_msg("%s %s: oversubscription %.9g, by hand %.9g", c[i].spec, c[i].fault, in.oversub[1], c[i].oversub);
        if (t->kind == TC_TOPO_TORUS && t->dim_cables[0] != t->dims[0]) {
            assert_int_equal(in.ports_per_endpoint, 2);
            if (fabs(in.injection_Bps - 100e9) > 1)
                fail_msg("mesh injection %.9g, by hand 100 GB/s", in.injection_Bps);
        }
        tc_topo_free(t);
    }
}

static double ring_time(const tc_topo *t, tc_routing r, double bytes, tc_mode m)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = t->n_endpoints, .bytes = bytes};
    tc_eval_opts o = {.mode = m, .routing = r};
    tc_result res;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &res, &err) != TC_OK)
        fail_msg("evaluate: %s", err.msg);
    return res.time_s;
}

/* A ring all-reduce (r -> r + 1, 2 (p-1) steps of s = S/p) on a 8x2
 * torus, every link L = 1 us and B = 50 GB/s, alpha 0, with the cable
 * (0,0)-(1,0) of dimension 0 down. Healthy: the longest hop has 2 links
 * (7 -> 8, 15 -> 0): 2(p-1) (2L + s/B). detour: 0 -> 1 goes (0,0) ->
 * (0,1) -> (1,1) -> (1,0), sharing its first link with 7 -> 8 and its
 * second with 8 -> 9: 2(p-1) (3L + 2s/B). line: 0 -> 1 goes the other
 * way round row 0, 7 links of dimension 0's - direction, which the ring
 * leaves idle: 2(p-1) (7L + s/B). */
static void torus_ring_with_a_failed_link_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=8x2,lat=1us,hop_lat=0,alpha=0");
    double S = 16.0 * (1 << 20), p = 16, s = S / p, B = 50e9, L = 1e-6, k = 2 * (p - 1);
    double healthy = ring_time(t, TC_ROUTE_DEFAULT, S, TC_MODE_STEPS);
    if (fabs(healthy - k * (2 * L + s / B)) > 1e-9 * healthy)
        fail_msg("healthy %.9g s, by hand %.9g s", healthy, k * (2 * L + s / B));
    down(t, "link:0");
    double want[2] = {k * (3 * L + 2 * s / B), k * (7 * L + s / B)};
    tc_routing rs[2] = {TC_ROUTE_DETOUR, TC_ROUTE_LINE};
    for (int i = 0; i < 2; i++) {
        double st = ring_time(t, rs[i], S, TC_MODE_STEPS), f = ring_time(t, rs[i], S, TC_MODE_FORMULA);
        if (fabs(st - want[i]) > 1e-9 * want[i] || fabs(f - st) > 1e-9 * st)
            fail_msg("%s: steps %.9g s, formula %.9g s, by hand %.9g s", tc_routing_name(rs[i], t), st, f, want[i]);
        double fl = ring_time(t, rs[i], S, TC_MODE_FLOW);
        if (!(fl >= healthy * (1 - 1e-9)) || fl > st * (1 + 1e-9))
            fail_msg("%s: flow %.9g s outside [healthy %.9g, steps %.9g]", tc_routing_name(rs[i], t), fl, healthy, st);
    }
    /* the default with failures is detour, named so */
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, t), "detour");
    double d = ring_time(t, TC_ROUTE_DEFAULT, S, TC_MODE_STEPS);
    assert_true(fabs(d - want[0]) <= 1e-9 * want[0]);
    /* plain dimension order does not go around: the job is cut off */
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 16, .bytes = S};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DOR};
    tc_result res;
    tc_err err = {{0}};
    assert_int_equal(tc_evaluate(t, &req, &o, &res, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "rank 0 (endpoint 0)"));
    assert_non_null(strstr(err.msg, "rank 1 (endpoint 1)"));
    tc_topo_free(t);
}

/* The lower bound counts a failed link as it counts a degraded one (links
 * as they are), by hand with B = 50 GB/s. torus:dims=8 with cable 0 (0-1)
 * down: endpoint 0 keeps one port, and an all-reduce rank's S must leave
 * it and the result's S reach it: S/B, where the healthy ring's bound is
 * 2 (7/8) S / 2B = (7/8) S/B (the same cable degraded to almost nothing
 * gives S/B too). torus:dims=4x4 all-to-all: the plane between x = 1 and 2
 * (and 3 | 0) has 8 cables per direction and 8 ranks each side, 8 x 8 S/16
 * = 4 S over 8 B; with the cable (1,0)-(2,0) down 7 B: 4 S / 7 B (the
 * injection bound, (15/16) S over a 3-port endpoint's 3 B, is less). */
static void lower_bound_counts_failed_links(void **state)
{
    (void)state;
    double S = 64.0 * 1048576, B = 50e9;
    const char *R8 = "torus:dims=8,lat=1us,hop_lat=0,alpha=0";
    tc_topo *t = topo(R8);
    double healthy = tc_lower_bound(t, TC_OP_ALLREDUCE, 8, S, NULL);
    if (fabs(healthy - 7.0 / 8 * S / B) > 1e-9 * healthy)
        fail_msg("healthy ring: bound %.9g s, by hand %.9g s", healthy, 7.0 / 8 * S / B);
    down(t, "link:0");
    double lb = tc_lower_bound(t, TC_OP_ALLREDUCE, 8, S, NULL);
    if (fabs(lb - S / B) > 1e-9 * lb)
        fail_msg("ring with cable 0 down: bound %.9g s, by hand %.9g s", lb, S / B);
    tc_topo_free(t);
    t = topo(R8);
    tc_err err = {{0}};
    assert_int_equal(tc_topo_degrade_link(t, 0, 1e-9, &err), TC_OK);
    assert_int_equal(tc_topo_degrade_link(t, 1, 1e-9, &err), TC_OK);
    double dg = tc_lower_bound(t, TC_OP_ALLREDUCE, 8, S, NULL);
    if (fabs(dg - lb) > 1e-6 * lb)
        fail_msg("cable 0 degraded: bound %.9g s, failed %.9g s", dg, lb);
    tc_topo_free(t);
    t = topo("torus:dims=4x4,lat=1us,hop_lat=0,alpha=0");
    lb = tc_lower_bound(t, TC_OP_ALLTOALL, 16, S, NULL);
    if (fabs(lb - 4 * S / (8 * B)) > 1e-9 * lb)
        fail_msg("4x4 all-to-all: bound %.9g s, by hand %.9g s", lb, 4 * S / (8 * B));
    char item[32];
    snprintf(item, sizeof item, "link:%u", tc_topo_torus_link(t, 1, 0, +1) & ~1u);
    down(t, item);
    lb = tc_lower_bound(t, TC_OP_ALLTOALL, 16, S, NULL);
    if (fabs(lb - 4 * S / (7 * B)) > 1e-9 * lb)
        fail_msg("4x4 all-to-all, cable (1,0)-(2,0) down: bound %.9g s, by hand %.9g s", lb, 4 * S / (7 * B));
    tc_topo_free(t);
}

/* A job cut off, an endpoint down, bad IDs: one line each, naming what. */
static void cut_off_and_bad_ids(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x2");
    down(t, "dlink:6"); /* host 3 -> leaf 0: host 3 cannot send */
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 8, .bytes = 1 << 20};
    tc_result res;
    tc_err err = {{0}};
    for (int m = 0; m < 3; m++) {
        tc_eval_opts o = {.mode = (tc_mode)m, .routing = m == TC_MODE_FORMULA ? TC_ROUTE_DMODK : TC_ROUTE_ECMP};
        assert_int_equal(tc_evaluate(t, &req, &o, &res, &err), TC_EINVAL);
        if (!strstr(err.msg, "cut") || !strstr(err.msg, "endpoint 3"))
            fail_msg("mode %d: '%s'", m, err.msg);
    }
    tc_topo_free(t);
    t = topo("clos:down=4x2,up=1x2,node=2");
    down(t, "node:1"); /* endpoints 2, 3 */
    tc_eval_opts o = {.mode = TC_MODE_STEPS};
    assert_int_equal(tc_evaluate(t, &req, &o, &res, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "rank 2's endpoint 2 has failed"));
    tc_fail_item f;
    assert_int_equal(tc_fail_item_parse("link:99999", &f, &err), TC_OK);
    assert_int_equal(tc_topo_fail_item(t, &f, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "links 0 to"));
    assert_int_equal(tc_fail_item_parse("switch:0", &f, &err), TC_OK);
    assert_int_equal(tc_topo_fail_item(t, &f, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "fabric switches are vertices 8 to 11"));
    assert_int_equal(tc_fail_item_parse("cable:3", &f, &err), TC_EINVAL);
    assert_int_equal(tc_fail_item_parse("link:-1", &f, &err), TC_EINVAL);
    tc_topo_free(t);
    t = topo("clos:down=4x2,up=1x2");
    assert_int_equal(tc_fail_item_parse("node:0", &f, &err), TC_OK);
    assert_int_equal(tc_topo_fail_item(t, &f, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "no scale-up nodes"));
    tc_topo_free(t);
    tc_fail_random r;
    assert_int_equal(tc_fail_random_parse("links=101%", &r, &err), TC_EINVAL);
    assert_int_equal(tc_fail_random_parse("links=2.5", &r, &err), TC_EINVAL);
    assert_int_equal(tc_fail_random_parse("seed=3", &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "draws nothing"));
    assert_int_equal(tc_fail_random_parse("links=3,colour=red", &r, &err), TC_EINVAL);
    /* a misspelt key alone is named, not read as drawing nothing */
    assert_int_equal(tc_fail_random_parse("lnks=1,seed=1", &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'lnks'"));
}

/* Draws: K or F% of the topology's own fabric cables (Clos: switch to
 * switch only; torus: router to router), the same for the same seed and
 * trial, another for another trial; hostlinks=1 adds the host cables. */
static void random_draws_reproduce(void **state)
{
    (void)state;
    tc_fail_random r;
    tc_err err = {{0}};
    assert_int_equal(tc_fail_random_parse("links=10%,switches=1,seed=7", &r, &err), TC_OK);
    char buf[128];
    tc_fail_random_format(&r, buf, sizeof buf);
    assert_string_equal(buf, "links=10%,switches=1,seed=7");
    uint32_t first[8] = {0};
    int differ = 0;
    for (uint64_t trial = 0; trial < 4; trial++)
        for (int again = 0; again < 2; again++) {
            tc_topo *t = topo("clos:down=4x4,up=1x4");
            tc_fail_drawn d;
            assert_int_equal(tc_topo_fail_random(t, &r, trial, &d, &err), TC_OK);
            assert_int_equal(d.eligible_cables, 16);            /* 4 leaves x 4 spines */
            assert_int_equal(d.ncables, 2);                     /* 10% of 16, rounded */
            assert_int_equal(d.nswitches, 1);
            for (uint32_t k = 0; k < d.ncables; k++) {
                assert_true(t->links[d.cables[k]].level == 2); /* switch to switch */
                assert_true(tc_topo_link_failed(t, d.cables[k]) && tc_topo_link_failed(t, d.cables[k] + 1));
            }
            assert_true(d.switches[0] >= t->n_endpoints && tc_topo_vertex_failed(t, d.switches[0]));
            if (again == 0 && trial == 0)
                first[0] = d.cables[0], first[1] = d.cables[1], first[2] = d.switches[0];
            else if (trial == 0)
                assert_true(d.cables[0] == first[0] && d.cables[1] == first[1] && d.switches[0] == first[2]);
            else
                differ += d.cables[0] != first[0] || d.cables[1] != first[1] || d.switches[0] != first[2];
            tc_fail_drawn_free(&d);
            tc_topo_free(t);
        }
    assert_true(differ > 0);
    tc_topo *t = topo("torus:dims=4x4,node=2");
    uint32_t cab[64];
    assert_int_equal(tc_topo_fabric_cables(t, false, false, cab), 32);
    assert_int_equal(tc_topo_fabric_cables(t, false, true, cab), 32 + 16);
    tc_topo_free(t);
    t = topo("clos:down=4x4,up=1x4");
    assert_int_equal(tc_topo_fabric_cables(t, true, false, cab), 32);
    assert_int_equal(tc_fail_random_parse("links=17", &r, &err), TC_OK);
    tc_fail_drawn d;
    assert_int_equal(tc_topo_fail_random(t, &r, 0, &d, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "only 16 eligible cables"));
    tc_topo_free(t);
}

/* Random failures on random Clos and tori: every evaluator either runs
 * or refuses the job as cut off (all three alike); formula equals steps
 * on the routed graph (D-mod-k; detour), no evaluator beats the healthy
 * lower bound, and a failure never speeds a collective up in steps mode
 * by more than rounding (a route around a fault is never shorter). */
static void evaluators_agree_under_random_failures(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=4x4,up=1x4", "clos:down=2x4x4,up=1x2x4", "clos:down=4x4,up=2x4,node=2",
                                  "torus:dims=4x4", "torus:dims=4x4x2", "torus:dims=6x4,wrap=1x0"};
    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DIRECT, TC_ALGO_DBTREE};
    int ran = 0, cut = 0;
    for (uint64_t i = 0; i < 60; i++) {
        const char *spec = specs[i % 6];
        tc_topo *healthy = topo(spec), *t = topo(spec);
        tc_fail_random r = {.links = (double)(1 + i % 4), .seed = i};
        tc_fail_drawn d;
        tc_err err = {{0}};
        if (tc_topo_fail_random(t, &r, 0, &d, &err))
            fail_msg("%s: %s", spec, err.msg);
        tc_fail_drawn_free(&d);
        tc_algo a = algos[(i / 6) % 4];
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = t->n_endpoints, .bytes = 1 << 22};
        tc_routing rt = t->kind == TC_TOPO_CLOS ? TC_ROUTE_DMODK : TC_ROUTE_DETOUR;
        tc_result rf, rs, rl, rh;
        tc_status sf, ss, sl;
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = rt};
        sf = tc_evaluate(t, &req, &o, &rf, &err);
        o.mode = TC_MODE_STEPS;
        ss = tc_evaluate(t, &req, &o, &rs, &err);
        o.mode = TC_MODE_FLOW;
        sl = tc_evaluate(t, &req, &o, &rl, &err);
        if (sf != ss || ss != sl)
            fail_msg("%s %s draw %llu: formula %d steps %d flow %d (%s)", spec, tc_algo_name(a), (unsigned long long)i,
                     sf, ss, sl, err.msg);
        if (ss != TC_OK) {
            assert_non_null(strstr(err.msg, "cut"));
            cut++;
        } else {
            o.mode = TC_MODE_STEPS;
            assert_int_equal(tc_evaluate(healthy, &req, &o, &rh, &err), TC_OK);
            if (fabs(rf.time_s - rs.time_s) > 1e-9 * rs.time_s)
                fail_msg("%s %s draw %llu: formula %.17g steps %.17g", spec, tc_algo_name(a), (unsigned long long)i,
                         rf.time_s, rs.time_s);
            if (rs.time_s < rh.time_s * (1 - 1e-9) || rl.time_s < rh.lower_bound_s * (1 - 1e-9))
                fail_msg("%s %s draw %llu: failed %.17g, healthy %.17g, flow %.17g, bound %.17g", spec,
                         tc_algo_name(a), (unsigned long long)i, rs.time_s, rh.time_s, rl.time_s, rh.lower_bound_s);
            ran++;
        }
        tc_topo_free(t);
        tc_topo_free(healthy);
    }
    printf("%d runs on failed networks, %d jobs cut off\n", ran, cut);
    assert_true(ran >= 30);
}

/* ring-fa, a ring re-formed around failures: its schedule on real buffers
 * (all-reduce, reduce-scatter, all-gather; Clos and tori, failed or not,
 * p from 2 to 48); on a healthy network it is the ring; on the 8x2 torus
 * with the cable (0,0)-(1,0) down it routes no hop through a detour and
 * takes the healthy ring's time, 2(p-1)(2L + s/B) (its longest hops, 7 -> 8
 * and 15 -> 0, have 2 links), where the oblivious ring takes 2(p-1)(3L +
 * 2s/B); auto never picks it. */
static void ring_re_formed_around_failures(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=8x2", "torus:dims=4x4x3", "clos:down=4x4,up=1x4", "torus:dims=6x4,wrap=1x0"};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    int checked = 0;
    for (size_t k = 0; k < 4; k++)
        for (int failed = 0; failed < 2; failed++) {
            tc_topo *t = topo(specs[k]);
            if (failed) {
                tc_fail_random r = {.links = 2, .seed = k};
                tc_fail_drawn d;
                tc_err err = {{0}};
                assert_int_equal(tc_topo_fail_random(t, &r, 0, &d, &err), TC_OK);
                tc_fail_drawn_free(&d);
            }
            for (uint32_t p = 2; p <= t->n_endpoints && p <= 48; p += p < 8 ? 1 : 7)
                for (int o = 0; o < 3; o++) {
                    tc_coll_req req = {.op = ops[o], .algo = TC_ALGO_RING_FA, .p = p, .bytes = 4.0 * 3 * p};
                    tc_sched *s = NULL;
                    tc_err err = {{0}};
                    if (tc_coll_build(&req, t, &s, &err) || tc_sched_check(s, &err))
                        fail_msg("%s p=%u %s: %s", specs[k], p, tc_op_name(ops[o]), err.msg);
                    tc_sched_free(s);
                    checked++;
                }
            tc_topo_free(t);
        }
    print_message("%d ring-fa schedules checked\n", checked);
    tc_topo *t = topo("torus:dims=8x2,lat=1us,hop_lat=0,alpha=0");
    double S = 16.0 * (1 << 20), p = 16, s = S / p, B = 50e9, L = 1e-6, want = 2 * (p - 1) * (2 * L + s / B);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING_FA, .p = 16, .bytes = S};
    tc_result r;
    tc_err err = {{0}};
    tc_eval_opts h = {.mode = TC_MODE_STEPS};
    assert_int_equal(tc_evaluate(t, &req, &h, &r, &err), TC_OK);
    assert_true(fabs(r.time_s - want) <= 1e-9 * want); /* healthy: the ring's */
    down(t, "link:0");
    for (int m = 0; m < 2; m++) {
        tc_eval_opts o = {.mode = (tc_mode)m, .routing = TC_ROUTE_DETOUR};
        assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
        if (fabs(r.time_s - want) > 1e-9 * want)
            fail_msg("mode %d: ring-fa %.9g s, by hand %.9g s", m, r.time_s, want);
    }
    req.algo = TC_ALGO_AUTO;
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DETOUR};
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    assert_true(r.algo != TC_ALGO_RING_FA);
    tc_topo_free(t);
}

static tc_failures_out *run_failures_algo(const char *a, const char *b, const char *draw, uint32_t trials, tc_mode mode,
                                          const char *algo, double bytes)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_FAILURES);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", a);
    snprintf(s->topo[1], sizeof s->topo[1], "%s", b);
    s->ntopo = 2;
    s->ops[0] = TC_OP_ALLREDUCE;
    s->nops = 1;
    s->sizes = malloc(sizeof *s->sizes);
    s->sizes[0] = bytes;
    s->nsizes = 1;
    snprintf(s->algos[0], sizeof s->algos[0], "%s", algo);
    s->mode = mode;
    s->trials = trials;
    snprintf(s->fail_random, sizeof s->fail_random, "%s", draw);
    tc_err err = {{0}};
    tc_failures_out *o = NULL;
    if (tc_scenario_resolve(s, &err) != TC_OK || tc_run_failures(s, NULL, &o, &err) != TC_OK)
        fail_msg("failures: %s", err.msg);
    tc_scenario_free(s);
    return o;
}

static tc_failures_out *run_failures(const char *a, const char *b, const char *draw, uint32_t trials, tc_mode mode)
{
    return run_failures_algo(a, b, draw, trials, mode, "ring", 1 << 24);
}

/* The figures docs/MODEL.md and the README quote: on an 8x8 torus with 2
 * cables down, 20 draws, 64 MiB, steps: the oblivious ring's median
 * slowdown 1.944x (p90 1.951x), ring-fa's 1.013x (p90 1.958x). */
static void ring_fa_figures_on_an_8x8_torus(void **state)
{
    (void)state;
    const char *T8 = "torus:dims=8x8";
    tc_failures_out *r = run_failures_algo(T8, T8, "links=2,seed=1", 20, TC_MODE_STEPS, "ring", 64.0 * (1 << 20));
    tc_failures_out *f = run_failures_algo(T8, T8, "links=2,seed=1", 20, TC_MODE_STEPS, "ring-fa", 64.0 * (1 << 20));
    if (fabs(r->topo[0].p50 - 1.944) > 0.0005 || fabs(f->topo[0].p50 - 1.013) > 0.0005 ||
        fabs(r->topo[0].p90 - 1.951) > 0.0005 || fabs(f->topo[0].p90 - 1.958) > 0.0005)
        fail_msg("slowdown: ring p50 %.4f p90 %.4f (docs 1.944, 1.951), ring-fa p50 %.4f p90 %.4f (docs 1.013, 1.958)",
                 r->topo[0].p50, r->topo[0].p90, f->topo[0].p50, f->topo[0].p90);
    tc_failures_out_free(r);
    tc_failures_out_free(f);
}

/* topocc failures: per topology the draws that ran and the ones cut off
 * add up to the trials, the histogram to the ones that ran, the quantiles
 * are ordered and among the values; the healthy time is the collective's
 * on the intact network; a second run gives the same numbers bit for bit
 * (draws from the seed); draw t is exactly --fail-random with trial t:
 * its slowdown is what collective gives on that draw. */
static void monte_carlo_reproduces_and_adds_up(void **state)
{
    (void)state;
    const char *A = "clos:down=4x4,up=1x4", *B = "torus:dims=4x4", *draw = "links=3,seed=11";
    tc_failures_out *o = run_failures(A, B, draw, 40, TC_MODE_STEPS), *o2 = run_failures(A, B, draw, 40, TC_MODE_STEPS);
    for (int i = 0; i < 2; i++) {
        const tc_failures_topo *ft = &o->topo[i];
        assert_int_equal(ft->ran + ft->cut, 40);
        uint32_t sum = 0;
        for (int b = 0; b < TC_FAIL_BINS; b++)
            sum += ft->hist[b];
        assert_int_equal(sum, ft->ran);
        if (ft->ran)
            assert_true(ft->min <= ft->p50 && ft->p50 <= ft->p90 && ft->p90 <= ft->p99 && ft->p99 <= ft->max);
        assert_int_equal(ft->cables, 3);
        assert_int_equal(memcmp(ft->slowdown, o2->topo[i].slowdown, ft->ran * sizeof *ft->slowdown), 0);
        /* healthy: the collective on the intact topology */
        tc_topo *t = topo(i ? B : A);
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 16, .bytes = 1 << 24, .elt = 4};
        tc_eval_opts eo = {.mode = TC_MODE_STEPS};
        tc_result r;
        tc_err err = {{0}};
        assert_int_equal(tc_evaluate(t, &req, &eo, &r, &err), TC_OK);
        assert_true(fabs(r.time_s - ft->healthy.time_s) <= 1e-12 * r.time_s);
        /* draw 0 by hand: the same failures, the same time */
        tc_fail_random fr;
        tc_fail_drawn d;
        assert_int_equal(tc_fail_random_parse(draw, &fr, &err), TC_OK);
        assert_int_equal(tc_topo_fail_random(t, &fr, 0, &d, &err), TC_OK);
        tc_fail_drawn_free(&d);
        eo.routing = i ? TC_ROUTE_DETOUR : TC_ROUTE_DEFAULT;
        tc_result r0;
        if (tc_evaluate(t, &req, &eo, &r0, &err) == TC_OK) {
            double x = r0.time_s / ft->healthy.time_s;
            bool found = false;
            for (uint32_t k = 0; k < ft->ran; k++)
                found |= fabs(ft->slowdown[k] - x) <= 1e-12 * x;
            assert_true(found);
        }
        tc_topo_free(t);
    }
    tc_failures_out_free(o);
    tc_failures_out_free(o2);
    /* host cables too: some draws cut the job off, and say why */
    o = run_failures(A, B, "links=30%,hostlinks=1,seed=2", 30, TC_MODE_FORMULA);
    assert_true(o->topo[0].cut > 0 && o->topo[0].first_cut >= 0);
    assert_non_null(strstr(o->topo[0].cut_reason, "cut"));
    tc_failures_out_free(o);
}

/* A failed router under detour: on tori of 2 and 3 dimensions with one
 * router failed at random, every pair of live endpoints has a route that
 * starts and ends where it should, chains link to link, uses no failed
 * link and fits tc_topo_max_path; it is the healthy route wherever that
 * survives. The 8x8x8 pair 10 -> 505 turns at the failed router 9 (its
 * one hop in x leads into it), 10 -> 511 passes through it. */
static void detour_passes_a_failed_router(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=8x8x8", "torus:dims=4x4x4", "torus:dims=5x6", "torus:dims=8x8",
                                  "torus:dims=6x4x5"};
    uint64_t z = 7;
    uint32_t path[256], hpath[256];
    for (int it = 0; it < 10; it++) {
        tc_topo *t = topo(specs[it % 5]);
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t dead = it == 0 ? 9 : (uint32_t)((z >> 33) % t->n_endpoints);
        tc_err err = {{0}};
        assert_int_equal(tc_topo_fail_host(t, dead, &err), TC_OK);
        uint32_t mp = tc_topo_max_path(t), cut = 0, pairs = 0;
        assert_true(mp < 256);
        for (uint32_t a = 0; a < t->n_endpoints; a++)
            for (uint32_t b = 0; b < t->n_endpoints; b++) {
                if (a == b || a == dead || b == dead)
                    continue;
                pairs++;
                uint32_t n = tc_topo_route(t, TC_ROUTE_DETOUR, a, b, path);
                if (n == TC_NO_ROUTE) {
                    cut++;
                    continue;
                }
                assert_true(n <= mp);
                uint32_t v = a;
                for (uint32_t j = 0; j < n; j++) {
                    assert_false(tc_topo_link_failed(t, path[j]));
                    assert_int_equal(t->links[path[j]].src, v);
                    v = t->links[path[j]].dst;
                }
                assert_int_equal(v, b);
                uint32_t h = tc_topo_route_healthy(t, TC_ROUTE_DETOUR, a, b, hpath);
                bool healthy_alive = h != TC_NO_ROUTE;
                for (uint32_t j = 0; healthy_alive && j < h; j++)
                    healthy_alive = !tc_topo_link_failed(t, hpath[j]);
                if (healthy_alive)
                    assert_true(n == h && memcmp(path, hpath, n * sizeof *path) == 0);
            }
        if (cut)
            fail_msg("%s, router %u failed: %u of %u pairs cut off", specs[it % 5], dead, cut, pairs);
        if (it == 0) {
            assert_int_not_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 10, 505, path), TC_NO_ROUTE);
            assert_int_not_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 10, 511, path), TC_NO_ROUTE);
        }
        tc_topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clos_routes_around_a_failed_uplink),
        cmocka_unit_test(displaced_routes_spread_over_the_survivors),
        cmocka_unit_test(topology_figures_as_they_are),
        cmocka_unit_test(torus_ring_with_a_failed_link_by_hand),
        cmocka_unit_test(lower_bound_counts_failed_links),
        cmocka_unit_test(cut_off_and_bad_ids),
        cmocka_unit_test(random_draws_reproduce),
        cmocka_unit_test(evaluators_agree_under_random_failures),
        cmocka_unit_test(monte_carlo_reproduces_and_adds_up),
        cmocka_unit_test(ring_re_formed_around_failures),
        cmocka_unit_test(ring_fa_figures_on_an_8x8_torus),
        cmocka_unit_test(detour_passes_a_failed_router),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
