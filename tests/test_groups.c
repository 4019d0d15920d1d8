/*
 * test_groups.c - collectives over sub-groups (docs/MODEL.md, "Sub-groups"):
 * the group specs and the partitions they make, the wrapper schedule
 * executed on data (every group's result is its own reduction), and its
 * times by hand: groups along one torus axis or on their own rail do not
 * contend (each group's time alone), groups sharing oversubscribed leaf
 * up-links are slower by the ratio of their flows per link; formula equals
 * steps, flow agrees where nothing contends and is never below the bound.
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
#include "topocc/flow.h"
#include "topocc/nccl_tests.h"
#include "topocc/place.h"

#include "build_helpers.h"

/* Default link figures, written out: 400 Gb/s, 50 ns per cable, 100 ns per
 * switch or router, 1.1 us per message. */
#define BW 50e9
#define LAT 50e-9
#define HOP 100e-9
#define ALPHA 1.1e-6

static bool close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* The groups of spec for p ranks (map: NULL or the job's) on t. */
typedef struct grp {
    tc_partition pt;
    tc_groups g;
} grp;

static void grp_make(grp *x, const char *spec, uint32_t p, const uint32_t *map, const tc_topo *t)
{
    tc_group_spec gs;
    tc_err err = {{0}};
    if (tc_group_parse(spec, &gs, &err))
        fail_msg("%s: %s", spec, err.msg);
    memset(x, 0, sizeof *x);
    x->g.p = p;
    if (tc_group_make(&gs, p, map, t, &x->pt, &x->g.ndims, x->g.dims, x->g.wrap, &err))
        fail_msg("%s: %s", spec, err.msg);
    x->g.ngroups = x->pt.ngroups;
    x->g.size = x->pt.first[1] - x->pt.first[0];
    x->g.members = x->pt.members;
    if (tc_groups_check(&x->g, &err))
        fail_msg("%s: %s", spec, err.msg);
}

static void grp_free(grp *x)
{
    tc_partition_free(&x->pt);
}

/* The collective run by every group of spec at once. */
static tc_result grouped(const tc_topo *t, const char *spec, tc_op op, tc_algo algo, double bytes, tc_mode mode,
                         tc_routing routing)
{
    grp x;
    grp_make(&x, spec, t->n_endpoints, NULL, t);
    tc_coll_req req = {.op = op, .algo = algo, .p = x.g.size};
    tc_eval_opts o = {.mode = mode, .routing = routing};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate_groups_sweep(t, &req, &x.g, &bytes, 1, &o, &r, &err))
        fail_msg("%s %s/%s: %s", spec, tc_op_name(op), tc_algo_name(algo), err.msg);
    grp_free(&x);
    return r;
}

/* The collective on p ranks placed by map, alone on the network. */
static double alone(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, const uint32_t *map, double bytes,
                    tc_mode mode, tc_routing routing)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = mode, .routing = routing, .rank_map = map};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err))
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return r.time_s;
}

/* ---- specs and partitions ---- */

static void specs_parse_and_format(void **state)
{
    (void)state;
    static const char *ok[][2] = {{"node", "node"},       {"stride=8", "stride=8"}, {"block=4", "block=4"},
                                  {"axes=x", "axes=x"},   {"axes=zx", "axes=xz"},   {"axes=0y", "axes=xy"},
                                  {"axes=3", "axes=3"},   {"none", "none"}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        tc_group_spec g;
        char b[48];
        assert_int_equal(tc_group_parse(ok[i][0], &g, NULL), TC_OK);
        assert_string_equal(tc_group_format(&g, b, sizeof b), ok[i][1]);
    }
    static const char *bad[] = {"nodes", "stride=", "stride=0", "stride=x", "axes=", "axes=xx", "axes=w", "axes=8"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tc_group_spec g;
        tc_err err = {{0}};
        assert_int_equal(tc_group_parse(bad[i], &g, &err), TC_EINVAL);
        assert_true(err.msg[0] != '\0');
    }
}

static void partitions_of_each_kind(void **state)
{
    (void)state;
    tc_topo *c = topo("clos:down=8x8,up=1x8,node=8");
    grp x;
    grp_make(&x, "stride=8", 64, NULL, c);
    assert_int_equal(x.g.ngroups, 8);
    assert_int_equal(x.g.size, 8);
    for (uint32_t g = 0; g < 8; g++)
        for (uint32_t i = 0; i < 8; i++)
            assert_int_equal(x.g.members[g * 8 + i], g + 8 * i);
    grp_free(&x);
    grp_make(&x, "node", 64, NULL, c);
    assert_int_equal(x.g.ngroups, 8);
    for (uint32_t i = 0; i < 64; i++)
        assert_int_equal(x.g.members[i], i);
    grp_free(&x);
    /* node groups follow the endpoints: ranks placed on nodes in reverse */
    uint32_t map[16];
    for (uint32_t r = 0; r < 16; r++)
        map[r] = 63 - r;
    grp_make(&x, "node", 16, map, c);
    assert_int_equal(x.g.ngroups, 2);
    assert_int_equal(x.g.members[0], 0);
    assert_int_equal(x.g.members[8], 8);
    grp_free(&x);
    tc_topo_free(c);

    /* axes: members by coordinates along the named dimensions */
    tc_topo *t = topo("torus:dims=4x4x4");
    grp_make(&x, "axes=y", 64, NULL, t);
    assert_int_equal(x.g.ngroups, 16);
    assert_int_equal(x.g.size, 4);
    assert_int_equal(x.g.ndims, 1);
    assert_int_equal(x.g.dims[0], 4);
    assert_int_equal(x.g.wrap[0], 1);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(x.g.members[i], 4 * i); /* group 0: (0, i, 0) */
    grp_free(&x);
    grp_make(&x, "axes=xz", 64, NULL, t);
    assert_int_equal(x.g.ngroups, 4);
    assert_int_equal(x.g.ndims, 2);
    assert_int_equal(x.g.members[5], 16 + 1); /* inner 5 = (1, 1): x 1, z 1 */
    grp_free(&x);
    /* a slice: the plane z = 0 (16 ranks), a half-line along x is a mesh line */
    grp_make(&x, "axes=y", 16, NULL, t);
    assert_int_equal(x.g.ngroups, 4);
    grp_free(&x);
    uint32_t half[8] = {0, 1, 4, 5, 8, 9, 12, 13};
    grp_make(&x, "axes=x", 8, half, t);
    assert_int_equal(x.g.ngroups, 4);
    assert_int_equal(x.g.size, 2);
    assert_int_equal(x.g.dims[0], 2);
    assert_int_equal(x.g.wrap[0], 0);
    grp_free(&x);
    /* random placement on the whole torus: groups by coordinates, not ranks */
    tc_job_place jp = {.policy = TC_PLACE_RANDOM, .seed = 7};
    uint32_t *rm, p;
    assert_int_equal(tc_place_map(t, &jp, &rm, &p, NULL), TC_OK);
    grp_make(&x, "axes=x", p, rm, t);
    for (uint32_t g = 0; g < x.g.ngroups; g++)
        for (uint32_t i = 0; i < 4; i++) {
            uint32_t e = rm[x.g.members[g * 4 + i]];
            assert_int_equal(e % 4, i);
            assert_int_equal(e / 4, rm[x.g.members[g * 4]] / 4);
        }
    grp_free(&x);
    free(rm);
    tc_topo_free(t);
}

static void specs_that_do_not_partition_are_refused(void **state)
{
    (void)state;
    tc_topo *c = topo("clos:down=8x8,up=1x8,node=8");
    tc_topo *n = topo("clos:down=8x8,up=1x8");
    tc_topo *t = topo("torus:dims=4x4x4");
    struct {
        const char *spec;
        const tc_topo *t;
        uint32_t p;
        const char *says;
    } cases[] = {
        {"stride=5", c, 64, "does not divide"},     {"stride=64", c, 64, "at least 2"},
        {"block=1", c, 64, "at least 2"},           {"node", n, 64, "scale-up nodes"},
        {"node", c, 12, "unequal"},                 {"axes=x", c, 64, "needs a torus"},
        {"axes=3", t, 64, "3 dimensions"},          {"axes=z", t, 16, "1 rank"},
        {"axes=x", t, 6, "slice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_group_spec gs;
        tc_partition pt;
        tc_groups g = {0};
        tc_err err = {{0}};
        assert_int_equal(tc_group_parse(cases[i].spec, &gs, NULL), TC_OK);
        assert_int_equal(tc_group_make(&gs, cases[i].p, NULL, cases[i].t, &pt, &g.ndims, g.dims, g.wrap, &err),
                         TC_EINVAL);
        if (!strstr(err.msg, cases[i].says))
            fail_msg("%s: '%s' does not say '%s'", cases[i].spec, err.msg, cases[i].says);
    }
    /* a hand-made list that is no partition */
    uint32_t m[4] = {0, 1, 1, 2};
    tc_groups g = {.p = 4, .ngroups = 2, .size = 2, .members = m};
    assert_int_equal(tc_groups_check(&g, NULL), TC_EINVAL);
    m[2] = 3;
    assert_int_equal(tc_groups_check(&g, NULL), TC_OK);
    g.size = 1, g.ngroups = 4;
    assert_int_equal(tc_groups_check(&g, NULL), TC_EINVAL);
    tc_topo_free(c);
    tc_topo_free(n);
    tc_topo_free(t);
}

/* ---- the wrapper on data ---- */

/* Every valid (operation, algorithm) for the groups of spec: each group's
 * transfers stay inside it and compute its own collective. */
static void check_all(const tc_topo *t, const char *spec, uint32_t p)
{
    grp x;
    grp_make(&x, spec, p, NULL, t);
    int n = 0;
    for (int op = 0; op < TC_OP_COUNT; op++)
        for (int a = 0; a < TC_ALGO_AUTO; a++) {
            if (!tc_coll_valid_groups((tc_op)op, (tc_algo)a, &x.g, NULL))
                continue;
            tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = x.g.size, .bytes = 1 << 20,
                               .root = op >= TC_OP_BROADCAST ? 1 : 0};
            tc_sched *s = NULL;
            tc_err err = {{0}};
            if (tc_coll_build_groups(&req, &x.g, &s, &err) || tc_sched_check_groups(s, &err))
                fail_msg("%s %s/%s: %s", spec, tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), err.msg);
            assert_int_equal(s->req.p, p);
            for (uint32_t i = 0; i < s->nphases; i++)
                assert_int_equal(s->phases[i].pat, TC_PAT_GENERIC);
            tc_sched_free(s);
            n++;
        }
    assert_true(n > 10);
    grp_free(&x);
}

static void every_group_computes_its_own_collective(void **state)
{
    (void)state;
    tc_topo *c = topo("clos:down=4x6,up=1x4,node=4");
    check_all(c, "stride=4", 24); /* 4 groups of 6: one rank per node */
    check_all(c, "node", 24);     /* 6 groups of 4 */
    check_all(c, "block=3", 24);
    tc_topo_free(c);
    tc_topo *t = topo("torus:dims=4x3x2");
    check_all(t, "axes=x", 24);
    check_all(t, "axes=xz", 24); /* a 4x2 torus in each group: the torus algorithms too */
    tc_topo_free(t);
}

/* An executor of its own, independent of the checker: all-reduce on job
 * ranks with values of the job rank, every rank must end with its group's
 * sum and nothing else. */
static void wrapper_allreduce_sums_per_group(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x6,up=1x4,node=4");
    const char *specs[] = {"stride=4", "node"};
    tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_RD, TC_ALGO_DBTREE, TC_ALGO_DIRECT};
    for (size_t si = 0; si < 2; si++)
        for (size_t ai = 0; ai < sizeof algos / sizeof *algos; ai++) {
            grp x;
            grp_make(&x, specs[si], 24, NULL, t);
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = algos[ai], .p = x.g.size, .bytes = 1 << 16};
            tc_sched *s = NULL;
            tc_err err = {{0}};
            if (tc_coll_build_groups(&req, &x.g, &s, &err))
                fail_msg("%s: %s", tc_algo_name(algos[ai]), err.msg);
            uint32_t p = s->req.p, ns = s->nslots;
            int64_t *buf = calloc((size_t)p * ns, sizeof *buf), *old = calloc((size_t)p * ns, sizeof *old);
            assert_non_null(buf);
            assert_non_null(old);
            for (uint32_t r = 0; r < p; r++)
                for (uint32_t j = 0; j < ns; j++)
                    buf[(size_t)r * ns + j] = j < s->nblk ? (int64_t)(r + 1) * 1000 + j : -((int64_t)1 << 40);
            tc_xfers xf;
            tc_xfers_init(&xf, true);
            for (uint32_t step = 0; step < s->nsteps; step++) {
                assert_int_equal(tc_sched_emit(s, step, &xf), TC_OK);
                memcpy(old, buf, (size_t)p * ns * sizeof *buf);
                for (size_t i = 0; i < xf.n; i++) {
                    const tc_xfer *tr = &xf.v[i];
                    assert_int_equal(x.pt.group_of[tr->src], x.pt.group_of[tr->dst]);
                    for (uint32_t k = 0; k < tr->seg_cnt; k++) {
                        const tc_seg *g = &xf.segs[tr->seg_off + k];
                        for (uint32_t c = 0; c < g->count; c++) {
                            int64_t v = old[(size_t)tr->src * ns + g->src_slot + c];
                            int64_t *d = &buf[(size_t)tr->dst * ns + g->dst_slot + c];
                            *d = tr->reduce ? *d + v : v;
                        }
                    }
                }
            }
            for (uint32_t r = 0; r < p; r++) {
                uint32_t g = x.pt.group_of[r];
                for (uint32_t j = 0; j < s->nblk; j++) {
                    int64_t want = 0;
                    for (uint32_t i = 0; i < x.g.size; i++)
                        want += (int64_t)(x.g.members[g * x.g.size + i] + 1) * 1000 + j;
                    if (buf[(size_t)r * ns + j] != want)
                        fail_msg("%s %s: rank %u slot %u holds %lld, its group's sum is %lld", specs[si],
                                 tc_algo_name(algos[ai]), r, j, (long long)buf[(size_t)r * ns + j], (long long)want);
                }
            }
            tc_xfers_free(&xf);
            free(buf);
            free(old);
            tc_sched_free(s);
            grp_free(&x);
        }
    tc_topo_free(t);
}

/* ---- times by hand ---- */

/* All-gather over one axis of a 4x4x4 torus: the 16 x-lines have links of
 * their own, so every group takes what one 4-ring alone takes: 3 steps of
 * alpha + one hop (cable and router) + S/4 over a link. */
static void torus_axis_equals_one_ring(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4x4x4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    tc_topo *ring = topo("torus:dims=4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    double S = 64.0 * 1048576, hand = 3 * (ALPHA + LAT + HOP + S / 4 / BW);
    tc_result f = grouped(t, "axes=x", TC_OP_ALLGATHER, TC_ALGO_RING, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
    tc_result st = grouped(t, "axes=x", TC_OP_ALLGATHER, TC_ALGO_RING, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
    tc_result fl = grouped(t, "axes=x", TC_OP_ALLGATHER, TC_ALGO_RING, S, TC_MODE_FLOW, TC_ROUTE_DEFAULT);
    assert_true(close_rel(f.time_s, hand, 1e-9));
    assert_true(close_rel(st.time_s, hand, 1e-9));
    assert_true(close_rel(fl.time_s, hand, 1e-6));
    assert_true(close_rel(fl.group_fastest_s, hand, 1e-6));
    assert_true(isnan(f.group_fastest_s));
    assert_int_equal(f.groups, 16);
    assert_int_equal(f.group_size, 4);
    assert_int_equal(f.ranks, 64);
    assert_true(fl.time_s >= fl.lower_bound_s && f.time_s >= f.lower_bound_s);
    /* one group alone, on the torus and on a 4-ring */
    uint32_t line[4] = {0, 1, 2, 3};
    assert_true(close_rel(alone(t, TC_OP_ALLGATHER, TC_ALGO_RING, 4, line, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT),
                          hand, 1e-9));
    assert_true(close_rel(alone(ring, TC_OP_ALLGATHER, TC_ALGO_RING, 4, NULL, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT),
                          hand, 1e-9));
    /* the torus algorithms see the axis as a 1-D torus, and two axes as a
     * 2-D one: each z-plane's x and y links are its own */
    tc_topo *plane = topo("torus:dims=4x4,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    tc_algo ta[] = {TC_ALGO_TORUS, TC_ALGO_TORUS_BI};
    for (size_t i = 0; i < 2; i++) {
        tc_result a = grouped(t, "axes=x", TC_OP_ALLREDUCE, ta[i], S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
        double want = alone(ring, TC_OP_ALLREDUCE, ta[i], 4, NULL, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
        assert_true(close_rel(a.time_s, want, 1e-9));
        tc_result b = grouped(t, "axes=xy", TC_OP_ALLREDUCE, ta[i], S, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
        want = alone(plane, TC_OP_ALLREDUCE, ta[i], 16, NULL, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
        assert_true(close_rel(b.time_s, want, 1e-9));
        assert_int_equal(b.groups, 4);
    }
    /* auto picks per group, among the torus algorithms too */
    tc_result au = grouped(t, "axes=xy", TC_OP_ALLREDUCE, TC_ALGO_AUTO, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
    for (size_t i = 0; i < 2; i++)
        assert_true(au.time_s <=
                    grouped(t, "axes=xy", TC_OP_ALLREDUCE, ta[i], S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT).time_s);
    tc_topo_free(plane);
    tc_topo_free(ring);
    tc_topo_free(t);
}

/* Eight stride groups (stride 8: endpoint i of every node) on a
 * rail-optimized Clos: group i is rail i, whose 8 ports fill leaf i, so a
 * transfer crosses its leaf only (2 cables, 1 switch) and no two groups
 * share a link: 14 ring steps of alpha + 200 ns + (S/8) / B, each group's
 * time alone. */
static void rail_groups_do_not_contend(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,node=8,rail=8");
    double S = 64.0 * 1048576, hand = 14 * (ALPHA + 2 * LAT + HOP + S / 8 / BW);
    uint32_t map[8];
    for (uint32_t i = 0; i < 8; i++)
        map[i] = 8 * i;
    tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (size_t m = 0; m < 3; m++) {
        tc_result r = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, modes[m], TC_ROUTE_DEFAULT);
        double one = alone(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, map, S, modes[m], TC_ROUTE_DEFAULT);
        double tol = modes[m] == TC_MODE_FLOW ? 1e-6 : 1e-9;
        assert_true(close_rel(r.time_s, hand, tol));
        assert_true(close_rel(one, hand, tol));
        assert_true(r.time_s >= r.lower_bound_s);
        assert_int_equal(r.groups, 8);
        if (modes[m] == TC_MODE_FLOW)
            assert_true(close_rel(r.group_fastest_s, r.time_s, 1e-9)); /* no spread */
    }
    tc_topo_free(t);
}

/* The same groups on a Clos wired node by node (leaf j holds node j) with
 * two spines (up=1x2, 4:1 at the leaf): group i's ring goes leaf to leaf
 * over a spine, and every leaf sends 8 flows (one per group) up 2 links.
 * D-mod-k takes the flow to rank d up link d mod 2 (d = 8 n + i: i mod 2)
 * and down the same: 4 flows on every up- and down-link. So a step takes
 * alpha + 4 cables + 3 switches + 4 (S/8) / B against alpha + 4 cables +
 * 3 switches + (S/8) / B for one group alone: the bandwidth term is 4
 * times one group's. With 8 spines (up=1x8) D-mod-k gives every group its
 * own spine: no contention, only the longer path. */
static void shared_uplinks_slow_groups_by_four(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x2,node=8");
    double S = 64.0 * 1048576, b = S / 8 / BW, lat = ALPHA + 4 * LAT + 3 * HOP;
    double hand = 14 * (lat + 4 * b), hand_alone = 14 * (lat + b);
    uint32_t map[8];
    for (uint32_t i = 0; i < 8; i++)
        map[i] = 8 * i;
    tc_result f = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    tc_result st = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_STEPS, TC_ROUTE_DMODK);
    assert_true(close_rel(f.time_s, hand, 1e-9));
    assert_true(close_rel(st.time_s, hand, 1e-9));
    double one = alone(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, map, S, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    assert_true(close_rel(one, hand_alone, 1e-9));
    assert_true(close_rel(f.time_s / one, (lat + 4 * b) / (lat + b), 1e-9));
    assert_true(f.time_s / one > 3.9);
    /* flow: every link carries 4 equal flows at once; at least the bound */
    tc_result fl = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_FLOW, TC_ROUTE_DMODK);
    assert_true(fl.time_s >= fl.lower_bound_s);
    assert_true(close_rel(fl.time_s, hand, 1e-6));
    assert_true(fl.group_fastest_s <= fl.time_s);
    /* ECMP: hash collisions load some links with more than 4 flows */
    tc_result ec = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_STEPS, TC_ROUTE_ECMP);
    assert_true(ec.time_s >= hand * (1 - 1e-9));
    tc_result ef = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_FLOW, TC_ROUTE_ECMP);
    assert_true(ef.time_s >= ef.lower_bound_s && ef.group_fastest_s <= ef.time_s && ef.group_fastest_s > 0);
    tc_topo_free(t);

    tc_topo *full = topo("clos:down=8x8,up=1x8,node=8");
    f = grouped(full, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, S, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    assert_true(close_rel(f.time_s, hand_alone, 1e-9));
    tc_topo_free(full);
}

/* Formula equals steps over groups wherever both route alike (D-mod-k on
 * a Clos, dimension order on a torus), and every phase of a wrapper is
 * costed on the routed graph. */
static void formula_equals_steps_over_groups(void **state)
{
    (void)state;
    struct {
        const char *topo, *spec;
    } cases[] = {
        {"clos:down=8x8,up=1x4,node=8", "node"},
        {"clos:down=8x8,up=1x4,node=8", "stride=8"},
        {"clos:down=8x8,up=1x4,node=8", "block=16"},
        {"torus:dims=4x4x4", "axes=z"},
        {"torus:dims=4x4x4", "axes=xy"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_topo *t = topo(cases[c].topo);
        tc_routing rt = t->kind == TC_TOPO_CLOS ? TC_ROUTE_DMODK : TC_ROUTE_DOR;
        for (int op = 0; op < TC_OP_COUNT; op++) {
            tc_result f = grouped(t, cases[c].spec, (tc_op)op, TC_ALGO_AUTO, 1 << 22, TC_MODE_FORMULA, rt);
            tc_result s = grouped(t, cases[c].spec, (tc_op)op, f.algo, 1 << 22, TC_MODE_STEPS, rt);
            if (!close_rel(f.time_s, s.time_s, 1e-9))
                fail_msg("%s %s %s/%s: formula %g, steps %g", cases[c].topo, cases[c].spec, tc_op_name((tc_op)op),
                         tc_algo_name(f.algo), f.time_s, s.time_s);
            assert_true(f.time_s >= f.lower_bound_s);
        }
        tc_topo_free(t);
    }
    tc_topo *t = topo("clos:down=8x8,up=1x8,node=8");
    grp x;
    grp_make(&x, "stride=8", 64, NULL, t);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RHD, .p = 8, .bytes = 1 << 20};
    tc_sched *s = NULL;
    assert_int_equal(tc_coll_build_groups(&req, &x.g, &s, NULL), TC_OK);
    tc_phase_eval pe[64];
    double total;
    tc_eval_opts o = {.mode = TC_MODE_FORMULA};
    assert_true(s->nphases <= 64);
    assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &total, NULL), TC_OK);
    for (uint32_t i = 0; i < s->nphases; i++)
        assert_false(pe[i].closed_form);
    tc_sched_free(s);
    grp_free(&x);
    tc_topo_free(t);
}

/* Flow: the groups as jobs of their own give what the wrapper gives as one
 * job (its slowest rank is the slowest group's), and a sweep of sizes
 * rescales the wrapper's inner schedule with it. */
static void flow_jobs_agree_with_the_wrapper(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x2,node=8");
    grp x;
    grp_make(&x, "stride=8", 64, NULL, t);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 8, .bytes = 1 << 22};
    tc_sched *s = NULL;
    assert_int_equal(tc_coll_build_groups(&req, &x.g, &s, NULL), TC_OK);
    tc_flow_opts fo = {.routing = TC_ROUTE_ECMP};
    double w;
    assert_int_equal(tc_flow_time(t, s, NULL, &fo, &w, NULL), TC_OK);
    tc_result r = grouped(t, "stride=8", TC_OP_ALLREDUCE, TC_ALGO_RING, 1 << 22, TC_MODE_FLOW, TC_ROUTE_ECMP);
    if (!close_rel(w, r.time_s, 1e-6))
        fail_msg("wrapper as one job %g, slowest group %g", w, r.time_s);
    /* the wrapper rescaled: steps at 16 MiB after building at 4 MiB */
    double sizes[2] = {1 << 22, 1 << 24}, tt[2];
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DMODK};
    assert_int_equal(tc_eval_steps_sweep(t, s, &o, sizes, 2, tt, NULL), TC_OK);
    tc_sched_set_bytes(s, 1 << 24);
    double one;
    assert_int_equal(tc_eval_steps(t, s, &o, &one, NULL), TC_OK);
    assert_true(close_rel(one, tt[1], 1e-9));
    assert_int_equal(tc_sched_check_groups(s, NULL), TC_OK);
    tc_sched_free(s);
    grp_free(&x);
    tc_topo_free(t);
}

/* Sizes are whole elements of one group's collective (nccl-tests' rounding
 * for the group's ranks); NCCL's algorithms do not run over groups. */
static void sizes_round_per_group_and_nccl_is_refused(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,node=8");
    grp x;
    grp_make(&x, "stride=8", 64, NULL, t);
    tc_coll_req req = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_RING, .p = 8, .elt = 4};
    double asked = 1000;
    tc_result r;
    tc_eval_opts o = {.mode = TC_MODE_FORMULA};
    assert_int_equal(tc_evaluate_groups_sweep(t, &req, &x.g, &asked, 1, &o, &r, NULL), TC_OK);
    assert_true(r.bytes == tc_coll_rounded_bytes(TC_OP_ALLGATHER, 8, 1000, 4));
    assert_true(r.bytes != tc_coll_rounded_bytes(TC_OP_ALLGATHER, 64, 1000, 4));
    /* NCCL's ring on each group's communicator: one GPU on each of 8
     * nodes; CollNet needs a fabric that reduces */
    req.algo = TC_ALGO_NCCL_RING;
    req.op = TC_OP_ALLREDUCE;
    tc_err err = {{0}};
    assert_int_equal(tc_evaluate_groups_sweep(t, &req, &x.g, &asked, 1, &o, &r, &err), TC_OK);
    assert_int_equal(r.proto, TC_PROTO_SIMPLE);
    req.algo = TC_ALGO_NCCL_COLLNET_CHAIN;
    assert_int_equal(tc_evaluate_groups_sweep(t, &req, &x.g, &asked, 1, &o, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "sharp=1"));
    grp_free(&x);
    tc_topo_free(t);
}

/* NCCL over sub-groups (docs/MODEL.md, "NCCL over sub-groups"): on 4 DGX
 * H100, the data-parallel groups (stride=8: GPU k of every node, rail k)
 * and the tensor-parallel groups (node) share no link, so each takes what
 * the same collective takes on the standalone cluster its view describes
 * (4 one-GPU nodes on one 400G NIC each; one NVSwitch node), in formula,
 * steps and flow, at several sizes (one NCCL schedule per size); groups
 * holding unequal shares of nodes are refused. */
static void nccl_over_groups_equals_its_standalone_view(void **state)
{
    (void)state;
    const char *dgx = "clos:down=4x8,up=1x4,bw=400Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,node_lat=250ns,"
                      "node_reduce=1,rail=8,arch=hopper";
    const char *alone[2] = {"clos:down=4,up=1,bw=400Gbps,lat=50ns,hop_lat=300ns,arch=hopper",
                            "clos:down=8,up=1,bw=400Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,"
                            "node_lat=250ns,node_reduce=1,rail=8,arch=hopper"};
    const char *spec[2] = {"stride=8", "node"};
    double sizes[3] = {4096, 8 << 20, 256.0 * (1 << 20)};
    tc_topo *t = topo(dgx);
    for (int k = 0; k < 2; k++) {
        grp x;
        grp_make(&x, spec[k], 32, NULL, t);
        tc_topo *v = topo(alone[k]);
        for (int m = 0; m < 3; m++) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = x.g.size, .elt = 4};
            tc_eval_opts o = {.mode = (tc_mode)m, .routing = TC_ROUTE_DMODK};
            tc_result r[3], a[3];
            tc_err err = {{0}};
            if (tc_evaluate_groups_sweep(t, &req, &x.g, sizes, 3, &o, r, &err))
                fail_msg("%s mode %d: %s", spec[k], m, err.msg);
            if (tc_evaluate_sweep(v, &req, sizes, 3, &o, a, &err))
                fail_msg("alone: %s", err.msg);
            for (int i = 0; i < 3; i++)
                if (fabs(r[i].time_s - a[i].time_s) > 1e-9 * a[i].time_s || r[i].nccl_impl != a[i].nccl_impl)
                    fail_msg("%s mode %d size %g: groups %.12g s (%s), alone %.12g s (%s)", spec[k], m, sizes[i],
                             r[i].time_s, tc_nccl_algo_label(r[i].nccl_impl), a[i].time_s,
                             tc_nccl_algo_label(a[i].nccl_impl));
        }
        tc_topo_free(v);
        grp_free(&x);
    }
    tc_topo_free(t);
}

/* nccl-tests over sub-communicators (topocc nccl-tests --group): count
 * and busbw use the group's rank count, not the job's. */
static void nccl_tests_rows_over_groups_use_the_group_size(void **state)
{
    (void)state;
    const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_ALLGATHER};
    for (int k = 0; k < 2; k++) {
        tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
        assert_non_null(s);
        snprintf(s->topo[0], sizeof s->topo[0], "clos:down=4x8,up=1x4,node=8");
        s->ntopo = 1;
        s->ops[0] = ops[k];
        s->nops = 1;
        free(s->sizes);
        s->sizes = malloc(sizeof *s->sizes);
        assert_non_null(s->sizes);
        s->sizes[0] = 8388608;
        s->nsizes = 1;
        tc_err err = {{0}};
        assert_int_equal(tc_group_parse("stride=8", &s->group, &err), TC_OK);
        if (tc_scenario_resolve(s, &err) != TC_OK)
            fail_msg("resolve: %s", err.msg);
        tc_collective_out *o = NULL;
        if (tc_run_collective(s, NULL, &o, &err) != TC_OK)
            fail_msg("collective: %s", err.msg);
        const tc_result *r = tc_collective_at(o, 0, 0);
        assert_int_equal(r->ranks, 32);
        assert_int_equal(tc_nccl_tests_ranks(r), 4);
        assert_true(tc_nccl_tests_busbw(r->op, tc_nccl_tests_ranks(r), r->bytes, r->time_s) == r->busbw_Bps);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        tc_nccl_tests_write(f, o, "test", NULL);
        fclose(f);
        /* the row: size, count, type, redop, root, time, algbw, busbw */
        const char *row = strstr(buf, "\n     8388608 ");
        assert_non_null(row);
        long size, count;
        char type[16], redop[16];
        int root;
        double us, algbw, busbw;
        assert_int_equal(sscanf(row, "%ld %ld %15s %15s %d %lf %lf %lf", &size, &count, type, redop, &root, &us,
                                &algbw, &busbw),
                         8);
        assert_int_equal(count, ops[k] == TC_OP_ALLREDUCE ? 8388608 / 4 : 8388608 / 4 / 4);
        /* 2(n-1)/n = 1.5 (all-reduce), (n-1)/n = 0.75 (all-gather) for n = 4;
         * the job's 32 ranks would give 1.94 and 0.97 */
        double factor = ops[k] == TC_OP_ALLREDUCE ? 1.5 : 0.75;
        assert_true(fabs(busbw - factor * r->algbw_Bps / 1e9) <= 0.006);
        assert_true(fabs(algbw - r->algbw_Bps / 1e9) <= 0.006);
        free(buf);
        tc_collective_out_free(o);
        tc_scenario_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(specs_parse_and_format),
        cmocka_unit_test(partitions_of_each_kind),
        cmocka_unit_test(specs_that_do_not_partition_are_refused),
        cmocka_unit_test(every_group_computes_its_own_collective),
        cmocka_unit_test(wrapper_allreduce_sums_per_group),
        cmocka_unit_test(torus_axis_equals_one_ring),
        cmocka_unit_test(rail_groups_do_not_contend),
        cmocka_unit_test(shared_uplinks_slow_groups_by_four),
        cmocka_unit_test(formula_equals_steps_over_groups),
        cmocka_unit_test(flow_jobs_agree_with_the_wrapper),
        cmocka_unit_test(sizes_round_per_group_and_nccl_is_refused),
        cmocka_unit_test(nccl_over_groups_equals_its_standalone_view),
        cmocka_unit_test(nccl_tests_rows_over_groups_use_the_group_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
