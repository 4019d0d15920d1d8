/*
 * test_collnet_agrs.c - NCCL v2.21.5-1's CollNetDirect all-gather and
 * reduce-scatter through SHARP (nccl-collnet-direct, sharp=1): the
 * schedules executed on real buffers (the fabric switches' included) for
 * 2 to 16 nodes of 2 to 8 GPUs, rails or not, one to three switch levels,
 * sizes of a few elements to many chunks; what each rank moves over its
 * NIC and NVLink; the three evaluators against a derivation by hand;
 * nccl-tests' busbw; NCCL's choice by its tuning model; refusals.
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

static tc_sched *build(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes, uint32_t channels)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .elt = 4, .channels = channels};
    tc_err err = {{0}};
    if (tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s %s p=%u bytes=%g: %s", tc_op_name(op), tc_algo_name(a), p, bytes, err.msg);
    return s;
}

/* Every transfer of every step joins two vertices the topology routes
 * between, and the fabric switches take part. */
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
            uint32_t n = tc_topo_route(t, TC_ROUTE_DMODK, a, b, path);
            if (n == 0 || n == TC_NO_ROUTE)
                fail_msg("%s step %u: no route %u -> %u", t->spec, st, a, b);
            fabric += x.v[i].src >= s->req.p || x.v[i].dst >= s->req.p;
        }
    }
    assert_true(fabric > 0);
    free(path);
    tc_xfers_free(&x);
}

/* What every rank moves over the whole schedule, in blocks: to and from
 * the fabric (its NIC), to and from other ranks (NVLink). NCCL's device
 * code (all_gather.h:263-318, reduce_scatter.h:248-310): all-gather, a
 * head sends its piece (nch blocks) up and receives the rail's M pieces,
 * and forwards those to its G - 1 peers; reduce-scatter the mirror. */
static void moves_what_nccl_moves(const tc_sched *s, uint32_t G)
{
    uint32_t p = s->req.p, M = p / G, nch = s->nblk / p;
    uint64_t *nic_out = calloc(p, 8), *nic_in = calloc(p, 8), *nvl_out = calloc(p, 8), *nvl_in = calloc(p, 8);
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (uint32_t st = 0; st < s->nsteps; st++) {
        tc_xfers_clear(&x);
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            uint64_t b = (uint64_t)llround(x.v[i].bytes / s->blk_bytes);
            uint32_t a = x.v[i].src, d = x.v[i].dst;
            if (a < p && d < p)
                nvl_out[a] += b, nvl_in[d] += b;
            else if (a < p)
                nic_out[a] += b;
            else if (d < p)
                nic_in[d] += b;
        }
    }
    bool ag = s->req.op == TC_OP_ALLGATHER;
    for (uint32_t r = 0; r < p; r++) {
        uint64_t piece = nch, rail = (uint64_t)M * nch, node = (uint64_t)(G - 1) * rail;
        if (nic_out[r] != (ag ? piece : rail) || nic_in[r] != (ag ? rail : piece) || nvl_out[r] != node ||
            nvl_in[r] != node)
            fail_msg("%s p=%u rank %u: NIC out %llu in %llu, NVLink out %llu in %llu blocks (piece %llu, rail %llu)",
                     tc_op_name(s->req.op), p, r, (unsigned long long)nic_out[r], (unsigned long long)nic_in[r],
                     (unsigned long long)nvl_out[r], (unsigned long long)nvl_in[r], (unsigned long long)piece,
                     (unsigned long long)rail);
    }
    free(nic_out), free(nic_in), free(nvl_out), free(nvl_in);
    tc_xfers_free(&x);
}

/* On real buffers: 2, 3, 4, 6 and 8 GPUs per node (a NIC each), rails or
 * not, one to three switch levels, 2 to 16 nodes, the default and a few
 * channels, a few elements per rank and many chunks (chunks inside one
 * node's piece, straddling two, spanning several). */
static void agrs_moves_the_right_data(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t G, max_nodes;
    } topos[] = {{"clos:down=4x4,up=2x4,node=2,sharp=1", 2, 8},
                 {"clos:down=2x2x4,up=1x2x2,node=2,sharp=1", 2, 8},
                 {"clos:down=3x8,up=1x3,node=3,sharp=1", 3, 8},
                 {"clos:down=4x9,up=1x4,node=4,sharp=1", 4, 9},
                 {"clos:down=3x4x3,up=1x3x2,node=4,rail=4,sharp=1", 4, 9},
                 {"clos:down=6x8,up=1x6,node=6,sharp=1", 6, 8},
                 {"clos:down=16x8,up=1x16,node=8,rail=8,sharp=1", 8, 16},
                 {"clos:down=8x16,up=1x8,node=8,sharp=1", 8, 16}};
    static const tc_op ops[] = {TC_OP_ALLGATHER, TC_OP_REDUCESCATTER};
    int checked = 0;
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        tc_topo *t = topo(topos[ti].spec);
        uint32_t G = topos[ti].G;
        for (uint32_t nodes = 2; nodes <= topos[ti].max_nodes && nodes * G <= t->n_endpoints; nodes++) {
            uint32_t p = nodes * G;
            for (int oi = 0; oi < 2; oi++)
                for (uint32_t c = 0; c <= 3; c += 1 + (c == 0))
                    for (int size = 0; size < 3; size++) {
                        /* 16 elements a rank; about 1 M elements; and a
                         * size whose chunks straddle the nodes' pieces */
                        double bytes = size == 0 ? 16.0 * 4 * p : size == 1 ? 1000003.0 * 4 : 4.0 * 96 * 1024 * 5 * p;
                        tc_sched *s = build(t, ops[oi], TC_ALGO_NCCL_COLLNET_DIRECT, p, bytes, c);
                        tc_err err = {{0}};
                        tc_status st = (uint64_t)s->nblk * (p + s->nsw) <= (1u << 22) ? tc_sched_check(s, &err)
                                                                                      : tc_sched_check_sampled(s, 64, 7, &err);
                        if (st != TC_OK)
                            fail_msg("%s %s p=%u channels=%u bytes=%g: %s", topos[ti].spec, tc_op_name(ops[oi]), p, c,
                                     bytes, err.msg);
                        assert_int_equal(s->nccl_impl, TC_ALGO_NCCL_COLLNET_DIRECT);
                        moves_what_nccl_moves(s, G);
                        if (size == 0 && c == 1)
                            every_hop_routes(t, s);
                        checked++;
                        tc_sched_free(s);
                    }
        }
        tc_topo_free(t);
    }
    print_message("%d nccl-collnet-direct all-gather / reduce-scatter schedules checked\n", checked);
}

static double eval(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes, tc_mode mode, tc_result *r)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_eval_opts o = {.mode = mode, .routing = TC_ROUTE_DMODK};
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, r, &err) != TC_OK)
        fail_msg("evaluate %s %s: %s", tc_op_name(op), tc_algo_name(a), err.msg);
    return r->time_s;
}

/* Four 8-GPU H100 nodes (NVLink 370.8 GB/s, 8 x 400G rails: rail j's
 * heads under leaf j, SHARP tree j is that leaf, T = 1), all-gather of
 * S = 16 GiB (float32) by hand.
 * Channels: the ring's 16, not widened (the CollNet graph's bwIntra and
 * bwInter are both 45 GB/s, connect.cc:449-451): C = 16; chunk 512 KiB
 * (S / (C H 512 KiB) = 256 is above 2 x 64, enqueue.cc:1733); a rail's
 * buffer S / G = 2 GiB in loops of C chunks: nch = 2 GiB / 8 MiB = 256
 * chunks, each M = 4 blocks of b = 4 x 2^32 / (32 x 256) = 2,097,152 bytes
 * (a rank's piece is 256 blocks). Stages: heads to their leaf (0), the
 * leaf's multicast to the 4 heads (1), each head to its 7 peers (2): 258
 * steps. Per step a head's
 * NIC carries 4 b each way (its own piece up while its node holds the
 * chunk, the chunk down), and its NVLink 7 x 4 b each way, at 50 and
 * 370.8 GB/s: the NIC binds (4 b / 50 > 28 b / 370.8). Each byte costs
 * 1 / 0.85 on the wire (tuning.cc:199-202 at 8 GPUs per node). So
 *   t = 44 us + 257 x 4 b / (0.85 x 50 GB/s) + 28 b / (0.85 x 370.8 GB/s)
 * = 50.957 ms (NCCL's latency 2 (3.7 + 7 x 0.4) + 31 = 44 us, tuning.cc:
 * 253-255; the paths' own latencies add about 2 us): algbw 337.1 GB/s
 * (S / (G x 50 GB/s x 0.85) = 340 GB/s in the limit), busbw 31/32 of it
 * (nccl-tests). Reduce-scatter moves the mirror image: the same time.
 * Formula, steps and flow all give it. */
static void agrs_on_4_h100_nodes_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x8,up=1x4,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper");
    double S = 16.0 * (1 << 30), b = 4.0 * ceil(4294967296.0 / (32 * 256));
    double want = 44e-6 + 257 * 4 * b / (0.85 * 50e9) + 28 * b / (0.85 * 370.8e9);
    for (int oi = 0; oi < 2; oi++) {
        tc_op op = oi ? TC_OP_REDUCESCATTER : TC_OP_ALLGATHER;
        tc_sched *s = build(t, op, TC_ALGO_NCCL_COLLNET_DIRECT, 32, S, 0);
        assert_int_equal(s->channels, 16);
        assert_int_equal(s->nsteps, 258);
        assert_int_equal(s->nblk, 32 * 256);
        assert_true(s->blk_bytes == b);
        tc_sched_free(s);
        tc_result r;
        static const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
        static const char *names[] = {"formula", "steps", "flow"};
        for (int k = 0; k < 3; k++) {
            double tm = eval(t, op, TC_ALGO_NCCL_COLLNET_DIRECT, 32, S, modes[k], &r);
            if (!(tm >= want - 1e-7) || tm > want + 5e-6)
                fail_msg("%s %s: %.9g s, by hand %.9g s", tc_op_name(op), names[k], tm, want);
            double alg = S / tm;
            if (fabs(r.algbw_Bps - alg) > 1e-9 * alg || fabs(r.busbw_Bps - alg * 31 / 32) > 1e-9 * alg)
                fail_msg("%s %s: algbw %.6g busbw %.6g, nccl-tests' %.6g and %.6g", tc_op_name(op), names[k],
                         r.algbw_Bps, r.busbw_Bps, alg, alg * 31 / 32);
            assert_true(r.lower_bound_s <= tm);
            assert_int_equal(r.nccl_impl, TC_ALGO_NCCL_COLLNET_DIRECT);
        }
        assert_true(fabs(S / want - 337.1e9) < 0.1e9);
    }
    tc_topo_free(t);
}

/* NCCL's model on 12 DGX H100 with SHARP (tuning.cc:188-202, 212-219,
 * 253-255): CollNetDirect all-gather and reduce-scatter busBw = ppn x
 * bwIntra x 0.85 = 8 x 48 x 0.85 = 326.4 GB/s (bwIntra 48 GB/s: the
 * CollNet graph's speed, as the all-reduce's), not halved; latency 44 us.
 * Its Simple ring: NCCL's ring graph, 8 search channels of 48 GB/s
 * (tc_nccl_ring_graph_nodes), 384 x 96/95 = 388.0 GB/s after 8.4 + 84 x
 * 3.4 + 11 x 14 = 448 us. CollNetDirect wins below 404 us / (1/326.4 -
 * 1/388.0) GB/s = 830 MB against it: at 256 MiB (866.4 us against
 * 1,139.8 us, and 1,122.4 us for the LL128 ring, the model's best ring
 * there), not at 1 GiB (3,333.6 us against 3,215.1 us).
 * NCCL_ALGO=CollNetDirect takes it at any size; with fewer NICs than GPUs
 * NCCL's model sets its bandwidth to 0 (tuning.cc:193-198) and the ring
 * runs. */
static void nccl_chooses_collnet_direct_for_agrs(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=12x8,up=1x12,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper");
    for (int oi = 0; oi < 2; oi++) {
        tc_op op = oi ? TC_OP_REDUCESCATTER : TC_OP_ALLGATHER;
        tc_coll_req req = {.op = op, .algo = TC_ALGO_NCCL, .p = 96, .bytes = 256.0 * (1 << 20), .elt = 4};
        double want = 44 + req.bytes / (1000 * 326.4);
        double us = tc_nccl_collnet_time_us(&req, t, true);
        if (fabs(us - want) > 1e-6 * want)
            fail_msg("%s: CollNetDirect by NCCL's model %.9g us, by hand %.9g", tc_op_name(op), us, want);
        assert_true(isinf(tc_nccl_collnet_time_us(&req, t, false)) != 0); /* CollNetChain: all-reduce only */
        tc_algo a;
        double pred;
        assert_int_equal(tc_nccl_choose(&req, t, &a, &pred), TC_PROTO_SIMPLE);
        assert_int_equal(a, TC_ALGO_NCCL_COLLNET_DIRECT);
        assert_true(fabs(pred - want * 1e-6) < 1e-9 * pred);
        /* the schedule nccl builds is CollNetDirect's */
        tc_sched *s = NULL;
        tc_err err = {{0}};
        assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
        assert_int_equal(s->nccl_impl, TC_ALGO_NCCL_COLLNET_DIRECT);
        tc_sched_free(s);
        /* the ring's figure by hand, and the ring above 830 MB */
        tc_coll_req ring = req;
        ring.algo_mask = 1;
        ring.proto_mask = 1u << TC_PROTO_SIMPLE;
        double rp;
        tc_nccl_choose(&ring, t, &a, &rp);
        double rwant = 448 + req.bytes / (1000 * 384 * 96 / 95);
        if (fabs(rp * 1e6 - rwant) > 1e-6 * rwant)
            fail_msg("%s: ring by NCCL's model %.9g us, by hand %.9g", tc_op_name(op), rp * 1e6, rwant);
        req.bytes = 1 << 30;
        tc_nccl_choose(&req, t, &a, NULL);
        assert_int_equal(a, TC_ALGO_NCCL_RING);
        /* NCCL_ALGO=CollNetDirect */
        req.algo_mask = 32;
        tc_nccl_choose(&req, t, &a, &pred);
        assert_int_equal(a, TC_ALGO_NCCL_COLLNET_DIRECT);
        assert_true(fabs(pred * 1e6 - (44 + req.bytes / (1000 * 326.4))) < 1e-3);
        /* NCCL_ALGO=CollNetChain: not for these; the ring */
        req.algo_mask = 64;
        tc_nccl_choose(&req, t, &a, NULL);
        assert_int_equal(a, TC_ALGO_NCCL_RING);
    }
    tc_topo_free(t);
    /* 4 NICs for 8 GPUs: no CollNetDirect all-gather */
    t = topo("clos:down=12x4,up=1x12,bw=400Gbps,node=8,nics=4,node_bw=370.8GB/s,rail=4,sharp=1,arch=hopper");
    tc_coll_req req = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL, .p = 96, .bytes = 1 << 26, .elt = 4,
                       .algo_mask = 32};
    assert_true(isinf(tc_nccl_collnet_time_us(&req, t, true)) != 0);
    tc_algo a;
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    tc_topo_free(t);
}

/* Formula equals steps, no evaluator beats the lower bound, flow within
 * 15% of steps (the in-network tolerance of test_invariants.c), over 2, 4
 * and 8 GPUs per node, rails or not, 2 to 8 nodes, 4 KiB to 64 MiB. */
static void agrs_evaluators_agree(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=8x4,up=1x8,node=4,rail=4,sharp=1,arch=hopper",
                                  "clos:down=4x8,up=1x4,node=2,sharp=1,arch=ampere",
                                  "clos:down=8x8,up=1x8,node=8,rail=8,sharp=1,arch=hopper",
                                  "clos:down=8x8,up=2x8,node=8,sharp=1,arch=hopper"};
    double worst = 1;
    int cases = 0;
    for (size_t ti = 0; ti < sizeof specs / sizeof *specs; ti++) {
        tc_topo *t = topo(specs[ti]);
        uint32_t G = t->node_size;
        for (uint32_t nodes = 2; nodes <= 8 && nodes * G <= t->n_endpoints; nodes += 3)
            for (int oi = 0; oi < 2; oi++)
                for (double bytes = 4096; bytes <= 64.0 * (1 << 20); bytes *= 32) {
                    tc_op op = oi ? TC_OP_REDUCESCATTER : TC_OP_ALLGATHER;
                    uint32_t p = nodes * G;
                    tc_result rf, rs, rl;
                    double f = eval(t, op, TC_ALGO_NCCL_COLLNET_DIRECT, p, bytes, TC_MODE_FORMULA, &rf);
                    double st = eval(t, op, TC_ALGO_NCCL_COLLNET_DIRECT, p, bytes, TC_MODE_STEPS, &rs);
                    double fl = eval(t, op, TC_ALGO_NCCL_COLLNET_DIRECT, p, bytes, TC_MODE_FLOW, &rl);
                    if (fabs(f - st) > 1e-9 * st)
                        fail_msg("%s %s p=%u %g: formula %.17g steps %.17g", specs[ti], tc_op_name(op), p, bytes, f, st);
                    double lb = rs.lower_bound_s, ratio = fmax(fl / st, st / fl);
                    if (f < lb * (1 - 1e-9) || fl < lb * (1 - 1e-9))
                        fail_msg("%s %s p=%u %g: below the lower bound %.9g", specs[ti], tc_op_name(op), p, bytes, lb);
                    if (ratio > 1.15)
                        fail_msg("%s %s p=%u %g: flow %.9g steps %.9g", specs[ti], tc_op_name(op), p, bytes, fl, st);
                    worst = fmax(worst, ratio);
                    cases++;
                }
        tc_topo_free(t);
    }
    print_message("%d cases; flow and steps differ by at most x%.3f\n", cases, worst);
}

/* One line naming what is missing. */
static void agrs_refusals(void **state)
{
    (void)state;
    struct {
        const char *spec;
        tc_algo a;
        tc_op op;
        uint32_t p;
        const char *why;
    } cases[] = {{"clos:down=4x4,up=1x4,node=2", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLGATHER, 8, "sharp=1"},
                 {"clos:down=4x4,up=1x4,node=8,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_REDUCESCATTER, 8, "2 nodes"},
                 {"clos:down=4x4,up=1x4,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLGATHER, 8, "NVSwitch"},
                 {"clos:down=4x4,up=1x4,node=8,nics=4,rail=4,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLGATHER, 16,
                  "NIC per GPU"},
                 {"clos:down=4x4,up=1x4,node=2,sharp=1", TC_ALGO_NCCL_COLLNET_CHAIN, TC_OP_REDUCESCATTER, 8, "allreduce"},
                 {"clos:down=4x4,up=1x4,node=2,sharp=1", TC_ALGO_NCCL_COLLNET_DIRECT, TC_OP_ALLTOALL, 8,
                  "allreduce, allgather and reducescatter"}};
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agrs_moves_the_right_data),
        cmocka_unit_test(agrs_on_4_h100_nodes_by_hand),
        cmocka_unit_test(agrs_evaluators_agree),
        cmocka_unit_test(nccl_chooses_collnet_direct_for_agrs),
        cmocka_unit_test(agrs_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
