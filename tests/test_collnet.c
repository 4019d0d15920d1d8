/*
 * test_collnet.c - NCCL's CollNet all-reduce with the reduction in the
 * fabric (InfiniBand SHARP, sharp=1): nccl-collnet-chain and
 * nccl-collnet-direct executed on real buffers (the fabric switches'
 * buffers included) for many node counts, node sizes, rails, shared NICs
 * and Clos depths; every hop a route of the topology; the three
 * evaluators against derivations by hand; NCCL's choice; refusals.
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
#include "coll/algos.h"
#include "build_helpers.h"

static tc_sched *cn_build(const tc_topo *t, tc_algo a, uint32_t p, double bytes, uint32_t channels)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = p, .bytes = bytes, .elt = 4, .channels = channels};
    tc_err err = {{0}};
    if (tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s p=%u bytes=%g: %s", tc_algo_name(a), p, bytes, err.msg);
    return s;
}

/* Every transfer of every step joins two vertices the topology routes
 * between: ranks, a rank and its leaf, a switch and its parent. */
static void every_hop_routes(const tc_topo *t, const tc_sched *s)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *path = malloc((tc_topo_max_path(t) + 4) * sizeof *path);
    assert_non_null(path);
    uint32_t fabric = 0;
    for (uint32_t st = 0; st < s->nsteps; st++) {
        tc_xfers_clear(&x);
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t a = tc_sched_vertex(s, t, NULL, x.v[i].src), b = tc_sched_vertex(s, t, NULL, x.v[i].dst);
            if (a == b)
                continue;
            uint32_t n = tc_topo_route(t, TC_ROUTE_DMODK, a, b, path);
            if (n == 0 || n == TC_NO_ROUTE)
                fail_msg("%s step %u: no route %u -> %u (participants %u -> %u)", t->spec, st, a, b, x.v[i].src,
                         x.v[i].dst);
            fabric += x.v[i].src >= s->req.p || x.v[i].dst >= s->req.p;
        }
    }
    assert_true(fabric > 0); /* the switches took part */
    free(path);
    tc_xfers_free(&x);
}

/* Chain and direct on real buffers: 1, 2, 4 and 8 GPUs per node, rails,
 * shared NICs, one to three switch levels, several up-links per level
 * (trees on different top switches), 2 to 9 nodes, the default and a few
 * channels, sizes of a few elements and of many chunks; and 1,024 ranks. */
static void collnet_moves_the_right_data(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t G;
    } topos[] = {{"clos:down=4x4,up=1x4,sharp=1", 1},
                 {"clos:down=2x2x3,up=1x2x2,sharp=1", 1},
                 {"clos:down=4x4,up=2x4,node=2,sharp=1", 2},
                 {"clos:down=2x2x4,up=1x2x2,node=2,sharp=1", 2},
                 {"clos:down=4x9,up=1x4,node=4,sharp=1", 4},
                 {"clos:down=9x8,up=1x9,node=8,rail=8,sharp=1", 8},
                 {"clos:down=3x4x3,up=1x3x2,node=4,rail=4,sharp=1", 4},
                 {"clos:down=9x4,up=1x9,node=8,nics=4,rail=4,sharp=1", 8}};
    int checked = 0;
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        tc_topo *t = topo(topos[ti].spec);
        uint32_t G = topos[ti].G;
        for (uint32_t nodes = 2; nodes <= 9 && nodes * G <= t->n_endpoints; nodes++) {
            uint32_t p = nodes * G;
            for (int direct = 0; direct <= (G >= 2); direct++)
                for (uint32_t c = 0; c <= 3; c += 1 + (c == 0))
                    for (int big = 0; big < 2; big++) {
                        double bytes = big ? 1000003.0 * 4 : 16.0 * 4 * p;
                        tc_algo a = direct ? TC_ALGO_NCCL_COLLNET_DIRECT : TC_ALGO_NCCL_COLLNET_CHAIN;
                        tc_sched *s = cn_build(t, a, p, bytes, c);
                        tc_err err = {{0}};
                        tc_status st = s->nblk <= 1024 ? tc_sched_check(s, &err) : tc_sched_check_sampled(s, 24, 3, &err);
                        if (st != TC_OK)
                            fail_msg("%s %s p=%u channels=%u bytes=%g: %s", topos[ti].spec, tc_algo_name(a), p, c, bytes,
                                     err.msg);
                        if (big == 0 && c == 1)
                            every_hop_routes(t, s);
                        checked++;
                        tc_sched_free(s);
                    }
        }
        tc_topo_free(t);
    }
    /* NVLS across nodes over SHARP: node switches and fabric switches in
     * one schedule */
    static const char *nv[] = {"clos:down=9x8,up=1x9,node=8,rail=8,node_reduce=1,sharp=1,arch=hopper",
                               "clos:down=4x9,up=2x4,node=4,node_reduce=1,sharp=1,arch=hopper",
                               "clos:down=3x4x3,up=1x3x2,node=8,nics=4,rail=4,node_reduce=1,sharp=1,arch=hopper"};
    for (size_t ti = 0; ti < sizeof nv / sizeof *nv; ti++) {
        tc_topo *t = topo(nv[ti]);
        uint32_t G = t->node_size;
        for (uint32_t nodes = 2; nodes <= 9 && nodes * G <= t->n_endpoints; nodes++)
            for (uint32_t c = 1; c <= 16; c += 15)
                for (int big = 0; big < 2; big++) {
                    uint32_t p = nodes * G;
                    double bytes = big ? 1000003.0 * 4 : 16.0 * 4 * p;
                    tc_sched *s = cn_build(t, TC_ALGO_NCCL_NVLS, p, bytes, c);
                    tc_err err = {{0}};
                    tc_status st = s->nblk <= 1024 ? tc_sched_check(s, &err) : tc_sched_check_sampled(s, 24, 3, &err);
                    if (st != TC_OK)
                        fail_msg("%s nccl-nvls p=%u channels=%u bytes=%g: %s", nv[ti], p, c, bytes, err.msg);
                    assert_true(s->nsw > nodes); /* the node switches and the trees' */
                    if (!big)
                        every_hop_routes(t, s);
                    checked++;
                    tc_sched_free(s);
                }
        tc_topo_free(t);
    }
    /* 1,024 ranks: 128 nodes of 8 on a rail-optimized two-level Clos */
    tc_topo *t = topo("clos:down=32x32,up=1x32,node=8,rail=8,sharp=1");
    for (int direct = 0; direct < 2; direct++) {
        tc_sched *s = cn_build(t, direct ? TC_ALGO_NCCL_COLLNET_DIRECT : TC_ALGO_NCCL_COLLNET_CHAIN, 1024, 64.0 * 1024 * 4, 2);
        tc_err err = {{0}};
        if (tc_sched_check_sampled(s, 8, 11, &err) != TC_OK)
            fail_msg("1024 ranks: %s", err.msg);
        every_hop_routes(t, s);
        tc_sched_free(s);
        checked++;
    }
    tc_topo_free(t);
    print_message("%d nccl-collnet schedules checked\n", checked);
}

static double cn_eval(const tc_topo *t, tc_algo a, uint32_t p, double bytes, tc_mode mode, tc_result *r)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_eval_opts o = {.mode = mode, .routing = TC_ROUTE_DMODK};
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, r, &err) != TC_OK)
        fail_msg("evaluate %s: %s", tc_algo_name(a), err.msg);
    return r->time_s;
}

/* CollNetChain across 4 nodes of one GPU by hand: each GPU sends its S
 * to its leaf and receives the sum, S each way over its B = 50 GB/s
 * link: the time tends to S / B, busbw = 2 (p - 1) / p S / t to 1.5 B,
 * above the line rate, which bounds every rank-to-rank algorithm's busbw.
 * The same over two leaves (the root one level up: its links carry one
 * leaf's partial sum, S, at the same rate). Formula equals steps; flow
 * within 2% of steps. */
static void collnet_across_4_nodes_by_hand(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=4,up=1,bw=400Gbps,sharp=1,arch=hopper",
                           "clos:down=2x2,up=1x2,bw=400Gbps,sharp=1,arch=hopper"};
    for (int k = 0; k < 2; k++) {
        tc_topo *t = topo(specs[k]);
        tc_result r;
        double S = 16.0 * (1 << 30), B = 50e9;
        double f = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 4, S, TC_MODE_FORMULA, &r);
        double st = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 4, S, TC_MODE_STEPS, &r);
        if (fabs(f - st) > 1e-9 * st)
            fail_msg("%s: formula %.9g s, steps %.9g s", specs[k], f, st);
        double busbw = 1.5 * S / st;
        if (!(busbw > B) || fabs(busbw - 1.5 * B) > 0.01 * 1.5 * B)
            fail_msg("%s: busbw %.6g GB/s, by hand %.6g", specs[k], busbw / 1e9, 1.5 * B / 1e9);
        /* the lower bound of reducing switches: S each way per rank */
        if (r.lower_bound_s > st || fabs(r.lower_bound_s - S / B) > 1e-6 * r.lower_bound_s)
            fail_msg("%s: lower bound %.9g s, by hand %.9g s", specs[k], r.lower_bound_s, S / B);
        double fl = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 4, S / 16, TC_MODE_FLOW, &r);
        double s16 = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 4, S / 16, TC_MODE_STEPS, &r);
        if (fabs(fl - s16) > 0.02 * s16)
            fail_msg("%s 1 GiB: flow %.9g s, steps %.9g s", specs[k], fl, s16);
        tc_topo_free(t);
    }
}

/* Four 8-GPU H100 nodes (NVLink 370.8 GB/s, 8 x 400G rails). CollNetChain:
 * channel k's chain starts at GPU k mod 8; per chunk a GPU inside the
 * chain sends up and down, the last up only, the head down only (and to
 * its NIC): over the 8 heads every GPU sends 14/8 S over NVLink, so the
 * time tends to 14/8 S / 370.8 GB/s (the NICs carry S/8 each way, far
 * less). CollNetDirect: every GPU scatters 7/8 S to the other heads and,
 * as a head, sends 7/8 S of results: 14/8 S too, at NCCL's 0.85 on
 * Hopper. */
static void collnet_on_4_h100_nodes_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x8,up=1x4,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper");
    tc_result r;
    double S = 16.0 * (1 << 30), nvl = 370.8e9;
    for (int direct = 0; direct < 2; direct++) {
        tc_algo a = direct ? TC_ALGO_NCCL_COLLNET_DIRECT : TC_ALGO_NCCL_COLLNET_CHAIN;
        double f = cn_eval(t, a, 32, S, TC_MODE_FORMULA, &r);
        double st = cn_eval(t, a, 32, S, TC_MODE_STEPS, &r);
        if (fabs(f - st) > 1e-9 * st)
            fail_msg("%s: formula %.9g s, steps %.9g s", tc_algo_name(a), f, st);
        double alg = S / st, want = nvl * 8 / 14 * (direct ? 0.85 : 1);
        if (fabs(alg - want) > 0.01 * want)
            fail_msg("%s: algbw %.6g GB/s, by hand %.6g", tc_algo_name(a), alg / 1e9, want / 1e9);
        double fl = cn_eval(t, a, 32, S / 16, TC_MODE_FLOW, &r);
        double s16 = cn_eval(t, a, 32, S / 16, TC_MODE_STEPS, &r);
        if (fabs(fl - s16) > 0.10 * s16)
            fail_msg("%s 1 GiB: flow %.9g s, steps %.9g s", tc_algo_name(a), fl, s16);
    }
    tc_topo_free(t);
}

/* NCCL's model with SHARP (tuning.cc): CollNet search channels = the
 * ring's 8; speed 48 GB/s (the largest listed within a NIC's PCIe link of
 * 48, and 8 channels of a chain of 8 GPUs take 7/8 x 8 x 48 = 336 of the
 * 370.8 GB/s NVLink; NCCL's compiled search gives 8 x 48/48); CollNetChain
 * busBw 8 x 48, algorithm bandwidth half: 192 GB/s, latency 2 x 7 x 2.8 +
 * 30 = 69.2 us; CollNetDirect 8 x 48 x 0.85 / 2 = 163.2 GB/s:
 * NCCL_ALGO=CollNet takes the chain, and so does NCCL's model left to
 * itself at 8 GiB: its ring, 8 search channels of 48 GB/s
 * (tc_nccl_ring_graph_nodes), 384 x 96 / 190 = 194.0 GB/s after about 1.3
 * ms of latency, 45,546 us against the chain's 44,808. Where the fabric
 * does not reduce, CollNet asked for falls back to the ring, as NCCL
 * ignores it (tuning.cc:286-296). */
static void nccl_chooses_collnet_with_sharp(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=12x8,up=1x12,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 96, .bytes = 8.0 * (1 << 30), .elt = 4};
    double us = tc_nccl_collnet_time_us(&req, t, false), want = 69.2 + req.bytes / (1000 * 192.0);
    if (fabs(us - want) > 1e-6 * want)
        fail_msg("CollNetChain by NCCL's model %.9g us, by hand %.9g", us, want);
    double d = tc_nccl_collnet_time_us(&req, t, true), dwant = 2 * (3.7 + 7 * 0.4) + 31 + req.bytes / (1000 * 163.2);
    if (fabs(d - dwant) > 1e-6 * dwant)
        fail_msg("CollNetDirect by NCCL's model %.9g us, by hand %.9g", d, dwant);
    tc_algo a;
    double pred;
    req.algo_mask = 32 | 64;
    tc_nccl_choose(&req, t, &a, &pred);
    assert_int_equal(a, TC_ALGO_NCCL_COLLNET_CHAIN);
    assert_true(fabs(pred - want * 1e-6) < 1e-9 * pred);
    req.algo_mask = 0;
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_COLLNET_CHAIN);
    tc_topo_free(t);
    t = topo("clos:down=12x8,up=1x12,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,arch=hopper");
    req.algo_mask = 32 | 64;
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    assert_true(isinf(tc_nccl_collnet_time_us(&req, t, false)) != 0);
    tc_topo_free(t);
}

/* Where the fabric does not reduce, on one node, for other operations,
 * direct without an NVSwitch: one line naming what is missing. */
static void collnet_refusals(void **state)
{
    (void)state;
    struct {
        const char *spec;
        tc_algo a;
        tc_op op;
        uint32_t p;
        const char *why;
    } cases[] = {{"clos:down=4x4,up=1x4", TC_ALGO_NCCL_COLLNET_CHAIN, TC_OP_ALLREDUCE, 8, "sharp=1"},
                 {"torus:dims=4x4", TC_ALGO_NCCL_COLLNET_CHAIN, TC_OP_ALLREDUCE, 16, "sharp=1"},
                 {"clos:down=4x4,up=1x4,node=8,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLREDUCE, 8, "2 nodes"},
                 {"clos:down=4x4,up=1x4,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLREDUCE, 8, "NVSwitch"},
                 {"clos:down=4x4,up=1x4,node=2,sharp=1", TC_ALGO_NCCL_COLLNET_CHAIN, TC_OP_ALLGATHER, 8, "allreduce"},
                 /* NCCL turns CollNet off on nodes of more than 8 GPUs */
                 {"clos:down=4x16,up=1x4,node=16,sharp=1", TC_ALGO_NCCL_COLLNET_CHAIN, TC_OP_ALLREDUCE, 32,
                  "at most 8 GPUs"},
                 {"clos:down=4x16,up=1x4,node=16,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLREDUCE, 32,
                  "at most 8 GPUs"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo *t = topo(cases[i].spec);
        tc_coll_req req = {.op = cases[i].op, .algo = cases[i].a, .p = cases[i].p, .bytes = 1 << 20};
        tc_sched *s = NULL;
        tc_err err = {{0}};
        assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_EINVAL);
        if (!strstr(err.msg, cases[i].why))
            fail_msg("%s: '%s' does not say '%s'", cases[i].spec, err.msg, cases[i].why);
        tc_topo_free(t);
    }
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=4x4,up=1x4,sharp=2", &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "sharp=2"));
    assert_int_equal(tc_topo_build("torus:dims=4x4,sharp=1", &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "sharp"));
    /* the spec keeps it */
    t = topo("clos:down=4x4,up=1x4,sharp=1");
    assert_non_null(strstr(t->spec, ",sharp=1"));
    tc_topo_free(t);
}

/* Vertical routes: an endpoint to each of its ancestors and back, the
 * same cables both ways; none to a switch that is not an ancestor. */
static void routes_to_ancestor_switches(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=2x2x3,up=2x2x2,node=2,nics=1,sharp=1");
    uint32_t *up = malloc(16 * sizeof *up), *down = malloc(16 * sizeof *down);
    int found = 0, refused = 0;
    for (uint32_t e = 0; e < t->n_endpoints; e++)
        for (uint32_t v = t->n_endpoints; v < t->n_endpoints + t->n_switches; v++) {
            uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, e, v, up), m = tc_topo_route(t, TC_ROUTE_DEFAULT, v, e, down);
            assert_int_equal(n, m);
            if (!n) {
                refused++;
                continue;
            }
            found++;
            assert_int_equal(t->links[up[0]].src, e);
            assert_int_equal(t->links[up[n - 1]].dst, v);
            for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(t->links[down[i]].src, t->links[up[n - 1 - i]].dst);
                assert_int_equal(t->links[down[i]].dst, t->links[up[n - 1 - i]].src);
                if (i + 1 < n)
                    assert_int_equal(t->links[up[i]].dst, t->links[up[i + 1]].src);
            }
        }
    /* each endpoint's NIC reaches w1 leaves, w1 w2 level-2 and w1 w2 w3 top switches */
    assert_int_equal(found, (int)t->n_endpoints * (2 + 4 + 8));
    assert_true(refused > 0);
    free(up), free(down);
    tc_topo_free(t);
}

/* NVLS across 12 H100 nodes over SHARP by hand: per GPU and direction S
 * through the node switch (its shards up, the multicast down) and, as a
 * head, S/8 (its shard from the switch and back), each byte 6/5 on the
 * wire: the time tends to 9/8 x 6/5 S / 370.8 GB/s, algbw 274.7 GB/s (a
 * head's NIC carries S/8 x 6/5 at 50 GB/s: 333 GB/s, not binding).
 * NCCL's model: speeds 40 (NVLink over 9, at most the NIC) and 48, NVLS
 * takes the smaller, 8 heads x 40 x 5/6 = 266.7 GB/s, latency 25 + 18 us. */
static void nvls_over_sharp_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=12x8,up=1x12,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,node_reduce=1,sharp=1,"
                      "arch=hopper");
    tc_result r;
    double S = 16.0 * (1 << 30);
    double f = cn_eval(t, TC_ALGO_NCCL_NVLS, 96, S, TC_MODE_FORMULA, &r);
    double st = cn_eval(t, TC_ALGO_NCCL_NVLS, 96, S, TC_MODE_STEPS, &r);
    if (fabs(f - st) > 1e-9 * st)
        fail_msg("formula %.9g s, steps %.9g s", f, st);
    double alg = S / st, want = 370.8e9 / (9.0 / 8 * 6 / 5);
    if (fabs(alg - want) > 0.01 * want)
        fail_msg("algbw %.6g GB/s, by hand %.6g", alg / 1e9, want / 1e9);
    double fl = cn_eval(t, TC_ALGO_NCCL_NVLS, 96, S / 16, TC_MODE_FLOW, &r);
    double s16 = cn_eval(t, TC_ALGO_NCCL_NVLS, 96, S / 16, TC_MODE_STEPS, &r);
    if (fabs(fl - s16) > 0.05 * s16)
        fail_msg("1 GiB: flow %.9g s, steps %.9g s", fl, s16);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 96, .bytes = S, .elt = 4};
    double us = tc_nccl_nvls_time_us(&req, t, false), hw = 43 + S / (1000 * 8 * 40 * 5 / 6.0);
    if (fabs(us - hw) > 1e-6 * hw)
        fail_msg("NVLS across nodes by NCCL's model %.9g us, by hand %.9g", us, hw);
    tc_algo a;
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_NVLS);
    tc_topo_free(t);
    /* without SHARP NVLS stays in one node */
    t = topo("clos:down=12x8,up=1x12,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,node_reduce=1,arch=hopper");
    tc_err err = {{0}};
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 96, t, &err));
    assert_non_null(strstr(err.msg, "sharp=1"));
    tc_topo_free(t);
}

/* SHARP trees on working switches: on 4 nodes of 8 GPUs with two leaves
 * per rail, tree 0 climbs to spine 0; with spine 0 down it takes spine 1
 * (its up-links from both of rail 0's leaves survive), every hop still a
 * route, and the time is the healthy one (spine 1 carries tree 1 from
 * other leaves: no link is shared). */
static void sharp_trees_avoid_a_failed_spine(void **state)
{
    (void)state;
    const char *spec = "clos:down=2x16,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper";
    tc_topo *t = topo(spec);
    tc_result r;
    double healthy = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 32, 1 << 26, TC_MODE_STEPS, &r);
    tc_err err = {{0}};
    assert_int_equal(tc_topo_fail_switch(t, t->level_vbase[2], &err), TC_OK);
    tc_sched *s = cn_build(t, TC_ALGO_NCCL_COLLNET_CHAIN, 32, 1 << 26, 0);
    every_hop_routes(t, s);
    tc_sched_free(s);
    double failed = cn_eval(t, TC_ALGO_NCCL_COLLNET_CHAIN, 32, 1 << 26, TC_MODE_STEPS, &r);
    if (fabs(failed - healthy) > 1e-9 * healthy)
        fail_msg("spine 0 down: %.9g s, healthy %.9g s", failed, healthy);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collnet_moves_the_right_data),
        cmocka_unit_test(collnet_across_4_nodes_by_hand),
        cmocka_unit_test(collnet_on_4_h100_nodes_by_hand),
        cmocka_unit_test(nvls_over_sharp_by_hand),
        cmocka_unit_test(nccl_chooses_collnet_with_sharp),
        cmocka_unit_test(collnet_refusals),
        cmocka_unit_test(routes_to_ancestor_switches),
        cmocka_unit_test(sharp_trees_avoid_a_failed_spine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
