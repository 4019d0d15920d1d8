/*
 * test_sendrecv.c - sendrecv, nccl-tests' sendrecv_perf (NVIDIA/nccl-tests
 * v2.13.10 src/sendrecv.cu: rank r sends its buffer to r + 1 and receives
 * from r - 1, in one group): direct's and nccl-a2a's schedules executed on
 * real buffers (rank r's output is rank r - 1's input) for nodes of 1, 2,
 * 3, 4 and 8 GPUs, a NIC per GPU or shared, 1 to 8 nodes, LL and Simple
 * sizes, several channels, PXN or not; every cross-node transfer on the
 * destination's NIC with PXN; two DGX H100 by hand in every evaluator, with
 * and without a channel rate (p2p_bw=, p2p_net_bw=); the evaluators agree and stay above the lower bound; the algorithms that
 * cannot run it are refused.
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
#include "topocc/flow.h"
#include "topocc/topo.h"
#include "coll/algos.h"
#include "build_helpers.h"
#include "coll_topos.h"

/* The dgx-h100:nodes=2 preset (src/topo/profile.c). */
#define DGX2 \
    "clos:down=2x8,up=1x2,bw=400Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,node_lat=250ns," \
    "node_hop_lat=0ns,node_reduce=1,rail=8,arch=hopper,alpha=1.1us"

static tc_sched *build_sr(const tc_topo *t, tc_algo a, uint32_t p, double bytes, uint32_t channels, uint8_t pxn)
{
    tc_coll_req req = {.op = TC_OP_SENDRECV, .algo = a, .p = p, .bytes = bytes, .elt = 4, .channels = channels,
                       .pxn = pxn};
    tc_err err = {{0}};
    if (tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("sendrecv %s p=%u bytes=%g pxn=%u: %s", tc_algo_name(a), p, bytes, pxn, err.msg);
    return s;
}

/* Cross-node transfers of s (nodes of G, k GPUs a NIC) and how many leave
 * through another NIC than the destination's local index has. */
static void count_crossings(const tc_sched *s, uint32_t G, uint32_t k, uint64_t *cross, uint64_t *off_rail)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    *cross = *off_rail = 0;
    for (uint32_t step = 0; step < s->nsteps; step++) {
        if (tc_sched_emit(s, step, &x) != TC_OK)
            fail_msg("emit step %u", step);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t a = x.v[i].src, b = x.v[i].dst;
            if (a == b || a / G == b / G)
                continue;
            (*cross)++;
            *off_rail += (a % G) / k != (b % G) / k;
        }
    }
    tc_xfers_free(&x);
}

/* nccl-a2a's sendrecv on real buffers, every shape (nccl's is nccl-a2a's:
 * evaluators_agree; direct's is in test_coll_check.c's loop over the
 * operations). */
static void schedules_move_the_right_data(void **state)
{
    (void)state;
    static const uint32_t Gs[] = {1, 2, 3, 4, 8};
    /* LL (at most 16 KiB), a few pieces, many FIFO steps (the PXN slices) */
    static const double sizes[] = {256, 100000, 3000000, 64.0 * 1024 * 1024};
    static const uint32_t chans[] = {0, 4, 16};
    int checked = 0, relayed = 0;
    for (size_t gi = 0; gi < sizeof Gs / sizeof *Gs; gi++)
        for (uint32_t N = 1; N <= 8; N++)
            for (uint32_t nics = 0; nics <= Gs[gi] / 2; nics += Gs[gi] / 2 ? Gs[gi] / 2 : 1) {
                uint32_t G = Gs[gi], p = N * G;
                if (nics == 1 || (nics && G % nics))
                    continue;
                tc_topo t = node_topo(p, G);
                t.nics = nics;
                uint32_t k = nics ? G / nics : 1;
                for (size_t si = 0; si < 4; si++)
                    for (size_t ci = 0; ci < 3; ci++)
                        for (uint8_t pxn = 0; pxn <= 2; pxn += 2) {
                            tc_sched *s = build_sr(&t, TC_ALGO_NCCL_A2A, p, sizes[si], chans[ci], pxn);
                            tc_err err = {{0}};
                            if (tc_sched_check(s, &err) != TC_OK)
                                fail_msg("G=%u nodes=%u nics=%u bytes=%g channels=%u pxn=%u: %s", G, N, nics, sizes[si],
                                         chans[ci], pxn, err.msg);
                            assert_int_equal(s->nccl_impl, TC_ALGO_NCCL_A2A);
                            assert_int_equal(s->proto, sizes[si] <= 16384 ? TC_PROTO_LL : TC_PROTO_SIMPLE);
                            /* relayed where PXN applies and the last GPU's NIC is not the first's */
                            bool on = pxn != 2 && N > 1 && G >= 2 && (G - 1) / k != 0;
                            assert_int_equal(s->params[0], on);
                            uint64_t cross, off;
                            count_crossings(s, G, k, &cross, &off);
                            /* one cross-node send a node (its pieces, slices) */
                            assert_int_equal(cross > 0, N > 1);
                            if (on && off)
                                fail_msg("PXN G=%u nodes=%u nics=%u: %llu of %llu cross-node transfers change NIC", G,
                                         N, nics, (unsigned long long)off, (unsigned long long)cross);
                            relayed += on;
                            checked++;
                            tc_sched_free(s);
                        }
            }
    /* larger: 16 and 64 nodes of 8 GPUs */
    for (uint32_t N = 16; N <= 64; N *= 4) {
        tc_topo t = node_topo(8 * N, 8);
        tc_sched *s = build_sr(&t, TC_ALGO_NCCL_A2A, 8 * N, 1 << 20, 0, 0);
        tc_err err = {{0}};
        if (tc_sched_check(s, &err) != TC_OK)
            fail_msg("p=%u: %s", 8 * N, err.msg);
        checked++;
        tc_sched_free(s);
    }
    assert_true(relayed > 50);
    printf("%d nccl-a2a sendrecv schedules checked (%d relayed by PXN)\n", checked, relayed);
}

static double eval_sched(const tc_topo *t, const tc_sched *s, tc_mode mode, tc_routing routing)
{
    tc_err err = {{0}};
    double time = 0;
    tc_eval_opts o = {.mode = mode, .routing = routing};
    tc_status st;
    if (mode == TC_MODE_FORMULA)
        st = tc_eval_formula(t, s, &o, &time, &err);
    else if (mode == TC_MODE_STEPS)
        st = tc_eval_steps(t, s, &o, &time, &err);
    else {
        tc_flow_opts fo = {.routing = routing};
        st = tc_flow_time(t, s, NULL, &fo, &time, &err);
    }
    if (st != TC_OK)
        fail_msg("evaluate: %s", err.msg);
    return time;
}

/* Two DGX H100 (rail j of both nodes on leaf j, two spines), 1 GiB
 * sendrecv, nccl (NCCL v2.21.5-1's point-to-point): 16 ranks, r -> r + 1.
 * Ranks 0-6 and 8-14 send to the next GPU of their node over NVLink; the
 * two pairs that cross the network are 7 -> 8 and 15 -> 0. Their
 * destination's local index is 0, so with PXN (NCCL's default) the data
 * goes over NVLink to local GPU 0 of the sender's node and leaves on that
 * GPU's NIC, rail 0: 7 -> 0 -> 8 and 15 -> 8 -> 0. Both crossings use rail
 * 0's leaf, in opposite directions of each NIC's cable (node 0's NIC 0
 * sends 7's data and receives 15's): nothing shares a link direction and
 * nothing crosses a spine. The slowest pair's path is thus one NIC, 400
 * Gb/s = 50 GB/s.
 * NCCL's pieces: stepSize 128 KiB across nodes, two channels a peer
 * (NCCL_NCHANNELS_PER_NET_PEER), so c = 2 pieces of B / 2, each many FIFO
 * steps: K = 8 slices, blocks of B / 16. Time (formula and steps, any
 * routing): NCCL's base latency and one network hop (8.4 + 14 us), slice 0
 * over NVLink (the two pieces of rank 7, B / 8 at the 370.8 GB/s port),
 * then 8 slices over the NIC, B / 8 each at 50 GB/s, the NVLink hop of
 * each next slice under it:
 *   22.4 us + 1 GiB / 8 / 370.8 GB/s + 1 GiB / 50 GB/s
 *   = 22.4 us + 361.97 us + 21474.84 us = 21859.21 us,
 * busbw (factor 1) = algbw = 2^30 B / 21859.21 us = 49.12 GB/s. Flow (its
 * FIFOs in order) within 0.1%. */
static void two_dgx_h100_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo(DGX2);
    double B = 1024.0 * 1024 * 1024;
    tc_sched *s = build_sr(t, TC_ALGO_NCCL, 16, B, 0, 0);
    assert_int_equal(s->proto, TC_PROTO_SIMPLE);
    assert_int_equal(s->params[0], 1); /* relayed */
    assert_int_equal(s->params[2], 8); /* slices */
    assert_int_equal(s->nblk, 16);     /* 2 pieces x 8 slices */
    /* the crossings: 0 -> 8 and 8 -> 0 only (rail 0), 7 -> 0 and 15 -> 8 the NVLink hops */
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (uint32_t step = 0; step < s->nsteps; step++) {
        assert_int_equal(tc_sched_emit(s, step, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t a = x.v[i].src, b = x.v[i].dst;
            if (a / 8 != b / 8)
                assert_true((a == 0 && b == 8) || (a == 8 && b == 0));
            else if (a % 8 == 7)
                assert_int_equal(b % 8, 0);
            else
                assert_int_equal(b, a + 1);
        }
    }
    tc_xfers_free(&x);
    double want = 22.4e-6 + B / 8 / 370.8e9 + B / 50e9;
    double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    double sd = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
    double se = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_ECMP);
    double fl = eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_ECMP);
    if (fabs(f - want) > 1e-9 * want || fabs(sd - want) > 1e-9 * want || fabs(se - want) > 1e-9 * want ||
        fabs(fl - want) > 1e-3 * want)
        fail_msg("2 DGX H100, 1 GiB: formula %.12g, steps dmodk %.12g, ecmp %.12g, flow %.12g s; by hand %.12g", f, sd,
                 se, fl, want);
    printf("2 DGX H100, 1 GiB sendrecv: by hand %.2f us (busbw %.2f GB/s); flow %.2f us\n", want * 1e6,
           B / want / 1e9, fl * 1e6);
    /* without PXN 7 sends on its own NIC (rail 7) to 8's (rail 0): through
     * a spine, one step, B / 2 a channel over the same 50 GB/s */
    tc_sched *d = build_sr(t, TC_ALGO_NCCL_A2A, 16, B, 0, 2);
    assert_int_equal(d->params[0], 0);
    assert_int_equal(d->nsteps, 1);
    double w2 = 22.4e-6 + B / 50e9, f2 = eval_sched(t, d, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    if (fabs(f2 - w2) > 1e-9 * w2)
        fail_msg("no PXN: formula %.12g s, by hand %.12g", f2, w2);
    tc_sched_free(d);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* A point-to-point channel's own rate (p2p_bw= inside a node, p2p_net_bw=
 * across nodes). One DGX H100, 32 MiB: NCCL cuts the buffer into 4 pieces
 * of 8 MiB (calcP2pChunkSize with 4 channels at least, 16 MiB at most), 4
 * channels, one schedule step; at p2p_bw=20GB/s each piece takes
 * 8 MiB / 20 GB/s (the 4 together, 80 GB/s, stay below the 370.8 GB/s
 * NVLink port): 8.4 + 3.4 us + 419.43 us = 431.23 us, busbw 77.81 GB/s,
 * where the port alone gives 8.4 + 3.4 us + 32 MiB / 370.8 GB/s. Two DGX
 * H100, 1 GiB, at p2p_net_bw=20GB/s: the two pieces of a crossing pair
 * (B / 2 each, 8 slices of B / 16) each at 20 GB/s instead of half the
 * 50 GB/s NIC, the first slice's NVLink hop too: 22.4 us + B / 16 / 20 GB/s
 * + B / 2 / 20 GB/s. p2p_bw= is not read across nodes, p2p_net_bw= not on
 * one node; LL pieces (1 KiB) are not limited. */
static void channel_rate_by_hand(void **state)
{
    (void)state;
    static const char *one = "clos:down=8,up=1,bw=400Gbps,node=8,node_bw=370.8GB/s,node_reduce=1,arch=hopper";
    char spec[256];
    double M = 32.0 * 1024 * 1024;
    for (int k = 0; k < 3; k++) {
        snprintf(spec, sizeof spec, "%s%s", one, k == 0 ? "" : k == 1 ? ",p2p_bw=20GB/s" : ",p2p_net_bw=1GB/s");
        tc_topo *t = topo(spec);
        tc_sched *s = build_sr(t, TC_ALGO_NCCL, 8, M, 0, 0);
        assert_int_equal(s->nblk, 4);
        double want = 11.8e-6 + (k == 1 ? M / 4 / 20e9 : M / 370.8e9);
        for (int m = 0; m < 3; m++) {
            tc_mode mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW;
            double got = eval_sched(t, s, mode, TC_ROUTE_DMODK);
            if (fabs(got - want) > (m == 2 ? 1e-3 : 1e-9) * want)
                fail_msg("%s, 32 MiB, %s: %.12g s, by hand %.12g", spec, tc_mode_name(mode), got, want);
        }
        /* NCCL's choice reports the same time */
        tc_coll_req req = {.op = TC_OP_SENDRECV, .algo = TC_ALGO_NCCL, .p = 8, .bytes = M, .elt = 4};
        double pred = 0;
        tc_nccl_choose(&req, t, NULL, &pred);
        if (fabs(pred - want) > 1e-9 * want)
            fail_msg("%s: NCCL's model %.12g s, by hand %.12g", spec, pred, want);
        tc_sched_free(s);
        s = build_sr(t, TC_ALGO_NCCL, 8, 1024, 0, 0); /* LL: not limited */
        assert_int_equal(s->proto, TC_PROTO_LL);
        assert_true(s->rate_cap_Bps == 0);
        tc_sched_free(s);
        tc_topo_free(t);
    }
    double B = 1024.0 * 1024 * 1024, plain = 22.4e-6 + B / 8 / 370.8e9 + B / 50e9;
    for (int k = 0; k < 2; k++) {
        snprintf(spec, sizeof spec, "%s%s", DGX2, k ? ",p2p_net_bw=20GB/s" : ",p2p_bw=1GB/s");
        tc_topo *t = topo(spec);
        tc_sched *s = build_sr(t, TC_ALGO_NCCL, 16, B, 0, 0);
        double want = k ? 22.4e-6 + B / 16 / 20e9 + B / 2 / 20e9 : plain;
        double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        double sd = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
        double fl = eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_ECMP);
        if (fabs(f - want) > 1e-9 * want || fabs(sd - want) > 1e-9 * want || fabs(fl - want) > 1e-3 * want)
            fail_msg("%s, 1 GiB: formula %.12g steps %.12g flow %.12g s, by hand %.12g", spec, f, sd, fl, want);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

/* direct on two DGX H100: one message a rank, the topology's alpha once;
 * the crossing pairs 7 -> 8 and 15 -> 0 go from rail 7 to rail 0, through
 * a spine each way (D-mod-k: different spines or not, one flow a
 * direction), so the time is alpha + the path's latency + B / 50 GB/s. */
static void direct_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo(DGX2);
    double B = 64.0 * 1024 * 1024;
    tc_sched *s = build_sr(t, TC_ALGO_DIRECT, 16, B, 0, 0);
    assert_int_equal(s->nsteps, 1);
    assert_int_equal(s->phases[0].pat, TC_PAT_SHIFT);
    double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    double sd = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
    double fl = eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_DMODK);
    /* host -> leaf -> spine -> leaf -> host: 4 links of 50 ns, 3 switches of 300 ns */
    double want = 1.1e-6 + 4 * 50e-9 + 3 * 300e-9 + B / 50e9;
    if (fabs(f - want) > 1e-9 * want || fabs(sd - want) > 1e-9 * want || fabs(fl - want) > 1e-3 * want)
        fail_msg("direct: formula %.12g steps %.12g flow %.12g, by hand %.12g", f, sd, fl, want);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* The evaluators agree: formula equals steps (1e-9), flow within 1.6x of
 * steps (test_nccl_a2a.c's bound for NCCL's point-to-point), none below the
 * lower bound, for direct and nccl on rail-optimized and plain Clos
 * clusters of 1 to 8 nodes of 4 or 8 GPUs, a NIC per GPU or shared, 1 KiB
 * to 1 GiB. */
static void evaluators_agree(void **state)
{
    (void)state;
    int cases = 0;
    double worst = 1;
    for (uint32_t i = 0; i < 24; i++) {
        uint32_t G = i % 2 ? 8 : 4, N = 1 + (i * 5) % 8, K = i % 3 == 2 ? G / 2 : G;
        bool rail = (i / 2) % 2;
        char spec[256];
        int n = snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,node=%u,arch=hopper", N, K, N, G);
        if (K < G)
            n += snprintf(spec + n, sizeof spec - (size_t)n, ",nics=%u", K);
        if (rail)
            n += snprintf(spec + n, sizeof spec - (size_t)n, ",rail=%u", K);
        if (i % 4 == 1) /* channels slower than the links, at some sizes */
            snprintf(spec + n, sizeof spec - (size_t)n, ",p2p_bw=%uGB/s,p2p_net_bw=%uGB/s", 5 + i, 3 + i);
        tc_topo *t = topo(spec);
        uint32_t p = N * G;
        double bytes = 1024.0 * pow(2, (double)(i % 21));
        for (int a = 0; a < 2; a++) {
            tc_sched *s = build_sr(t, a ? TC_ALGO_NCCL : TC_ALGO_DIRECT, p, bytes, (i % 3) * 4, 0);
            double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
            double st = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
            double fl = eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_DMODK);
            double lb = tc_lower_bound(t, TC_OP_SENDRECV, p, s->req.bytes, NULL);
            double ratio = fmax(fl / st, st / fl);
            if (fabs(f - st) > 1e-9 * st || ratio > 1.6 || fmin(f, fl) < lb * (1 - 1e-9))
                fail_msg("%s %s p=%u bytes=%g: formula %.12g steps %.12g flow %.12g bound %.12g", spec,
                         a ? "nccl" : "direct", p, s->req.bytes, f, st, fl, lb);
            worst = fmax(worst, ratio);
            cases++;
            tc_sched_free(s);
        }
        tc_topo_free(t);
    }
    printf("%d sendrecv cases: formula equals steps; flow and steps differ by at most x%.3f\n", cases, worst);
}

/* The lower bound by hand: on two DGX H100 every rank sends and receives B
 * through its NIC and NVLink port (injection B / (50 + 370.8) GB/s), and a
 * node's 8 NICs carry at least one rank's B each way (the node cut, B /
 * 400 GB/s): the node cut binds, 2.68 ms, 8.1 times below NCCL's 21.86 ms,
 * which puts the crossing on one NIC. */
static void lower_bound_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo(DGX2);
    double B = 1024.0 * 1024 * 1024;
    double lb = tc_lower_bound(t, TC_OP_SENDRECV, 16, B, NULL);
    double want = fmax(B / (50e9 + 370.8e9), B / (8 * 50e9));
    if (fabs(lb - want) > 1e-9 * want)
        fail_msg("lower bound %.12g, by hand %.12g", lb, want);
    assert_true(tc_lower_bound(t, TC_OP_SENDRECV, 1, B, NULL) == 0);
    tc_topo_free(t);
}

/* Only direct, nccl-a2a and nccl run sendrecv; the others are refused with
 * one line naming them; auto picks direct; busbw factor 1 on any p. */
static void only_point_to_point_algorithms(void **state)
{
    (void)state;
    for (int a = 0; a < TC_ALGO_COUNT; a++) {
        tc_err err = {{0}};
        bool ok = tc_coll_valid(TC_OP_SENDRECV, (tc_algo)a, 16, NULL, &err);
        bool want = a == TC_ALGO_DIRECT || a == TC_ALGO_NCCL_A2A || a == TC_ALGO_NCCL || a == TC_ALGO_AUTO;
        assert_int_equal(ok, want);
        if (!ok) {
            assert_non_null(strstr(err.msg, "direct, nccl-a2a and nccl"));
            assert_null(strchr(err.msg, '\n'));
        }
    }
    for (uint32_t p = 1; p <= 64; p++)
        assert_true(tc_op_busbw_factor(TC_OP_SENDRECV, p) == 1.0);
    tc_op op;
    tc_err err = {{0}};
    assert_int_equal(tc_op_parse("sendrecv", &op, &err), TC_OK);
    assert_int_equal(op, TC_OP_SENDRECV);
    /* nccl-tests' count: the whole buffer, no per-rank rounding */
    assert_true(tc_coll_rounded_bytes(TC_OP_SENDRECV, 16, 1000, 4) == 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schedules_move_the_right_data), cmocka_unit_test(two_dgx_h100_by_hand),
        cmocka_unit_test(channel_rate_by_hand),
        cmocka_unit_test(direct_by_hand),               cmocka_unit_test(evaluators_agree),
        cmocka_unit_test(lower_bound_by_hand),          cmocka_unit_test(only_point_to_point_algorithms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
