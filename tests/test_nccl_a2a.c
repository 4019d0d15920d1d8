/*
 * test_nccl_a2a.c - PXN in NCCL's all-to-all (nccl-a2a; NVIDIA/nccl
 * v2.21.5-1, docs/MODEL.md "NCCL's all-to-all"): a send to a GPU of another
 * node goes over NVLink to the GPU of the sender's node at the
 * destination's NIC, whose NIC sends it. The relayed schedules executed on
 * real buffers (tc_sched_check) for nodes of 2, 3, 4 and 8 GPUs, a NIC per
 * GPU or shared, 1 to 8 nodes, every p up to 64 and larger ones; every
 * cross-node transfer leaves through the NIC of the destination's local
 * index; 2 DGX H100 by hand (no byte crosses a spine; the time); ECMP in
 * flow mode against D-mod-k; formula equals steps, flow close; the
 * latency of tiny all-to-alls by hand, a hop per work along a channel's
 * chain of NCCL's works (1 to 128 nodes).
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

/* The dgx-h100:nodes=2 preset (src/topo/profile.c): two DGX H100, eight
 * rails of one leaf each, two spines. */
#define DGX2 \
    "clos:down=2x8,up=1x2,bw=400Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,node_lat=250ns," \
    "node_hop_lat=0ns,node_reduce=1,rail=8,arch=hopper,alpha=1.1us"

static tc_sched *build_a2a(const tc_topo *t, uint32_t p, double bytes, uint32_t channels, bool pxn)
{
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL_A2A, .p = p, .bytes = bytes, .elt = 4,
                       .channels = channels};
    tc_err err = {{0}};
    if (tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_nccl_a2a_build(&req, t, pxn, &s, &err) != TC_OK)
        fail_msg("nccl-a2a p=%u bytes=%g pxn=%d: %s", p, bytes, pxn, err.msg);
    return s;
}

/* Transfers of s that cross nodes of G GPUs with k GPUs per NIC: how many,
 * how many leave through another NIC than the destination's local index
 * has (*off_rail), how many NVLink hops go to a rank that then forwards
 * (counted as intra-node transfers into *intra). */
static void count_crossings(const tc_sched *s, uint32_t G, uint32_t k, uint64_t *cross, uint64_t *off_rail,
                            uint64_t *intra)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    *cross = *off_rail = *intra = 0;
    for (uint32_t step = 0; step < s->nsteps; step++) {
        if (tc_sched_emit(s, step, &x) != TC_OK)
            fail_msg("emit step %u", step);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t a = x.v[i].src, b = x.v[i].dst;
            if (a == b)
                continue;
            if (a / G == b / G) {
                (*intra)++;
                continue;
            }
            (*cross)++;
            *off_rail += (a % G) / k != (b % G) / k;
        }
    }
    tc_xfers_free(&x);
}

/* PXN on real buffers: nodes of 2, 3 (peer steps beyond the node's GPUs),
 * 4 and 8 GPUs, a NIC per GPU (nics= not given) or one per 2 GPUs; 1 to 8
 * nodes (every p up to 64 that is whole nodes), LL and Simple sizes,
 * several channels. With PXN, no cross-node transfer leaves through another
 * NIC than the destination's; without it (same sizes), some do on more than
 * one node whenever the node has more than one NIC. */
static void pxn_moves_the_right_data(void **state)
{
    (void)state;
    static const uint32_t Gs[] = {2, 3, 4, 8};
    static const double per_peer[] = {256, 100000, 3000000};
    static const uint32_t chans[] = {0, 4, 16};
    int checked = 0, relayed = 0, shared = 0;
    for (size_t gi = 0; gi < 4; gi++)
        for (uint32_t N = 1; N <= 8; N++)
            for (uint32_t nics = 0; nics <= Gs[gi] / 2; nics += Gs[gi] / 2 ? Gs[gi] / 2 : 1) {
                uint32_t G = Gs[gi], p = N * G;
                if (nics == 1 || (nics && G % nics))
                    continue; /* one NIC: no PXN (checked below); G = 3: no even split */
                tc_topo t = node_topo(p, G);
                t.nics = nics;
                uint32_t k = nics ? G / nics : 1;
                for (size_t si = 0; si < 3; si++)
                    for (size_t ci = 0; ci < 3; ci++) {
                        if (p > 24 && (si == 1 || ci == 1))
                            continue; /* keep the suite fast */
                        double bytes = per_peer[si] * p * p;
                        tc_sched *s = build_a2a(&t, p, bytes, chans[ci], true);
                        tc_err err = {{0}};
                        if (tc_sched_check(s, &err) != TC_OK)
                            fail_msg("PXN G=%u nodes=%u nics=%u bytes/peer=%g channels=%u: %s", G, N, nics,
                                     per_peer[si], chans[ci], err.msg);
                        bool on = N > 1;
                        assert_int_equal(tc_nccl_a2a_pxn_applies(&t, p), on);
                        assert_int_equal(s->params[0], on);
                        uint64_t cross, off, intra;
                        count_crossings(s, G, k, &cross, &off, &intra);
                        if (off)
                            fail_msg("PXN G=%u nodes=%u nics=%u: %llu of %llu cross-node transfers change NIC", G, N,
                                     nics, (unsigned long long)off, (unsigned long long)cross);
                        if (on && si == 0 && ci == 0) {
                            tc_sched *d = build_a2a(&t, p, bytes, chans[ci], false);
                            if (tc_sched_check(d, &err) != TC_OK)
                                fail_msg("no PXN G=%u nodes=%u: %s", G, N, err.msg);
                            uint64_t c2, off2, intra2;
                            count_crossings(d, G, k, &c2, &off2, &intra2);
                            /* the same cross-node transfers; without PXN those to
                             * another NIC's GPUs change NIC, with it they are
                             * NVLink hops more */
                            assert_true(c2 == cross && off2 > 0 && intra == intra2 + off2);
                            tc_sched_free(d);
                        }
                        relayed += on;
                        shared += on && nics;
                        checked++;
                        tc_sched_free(s);
                    }
            }
    /* larger: 16, 32 and 64 nodes of 8 GPUs (all-to-all cannot be sampled:
     * the full check) */
    for (uint32_t N = 16; N <= 64; N *= 2) {
        tc_topo t = node_topo(8 * N, 8);
        tc_sched *s = build_a2a(&t, 8 * N, 1024.0 * (8 * N) * (8 * N), 0, true);
        tc_err err = {{0}};
        if (tc_sched_check(s, &err) != TC_OK)
            fail_msg("PXN p=%u: %s", 8 * N, err.msg);
        uint64_t cross, off, intra;
        count_crossings(s, 8, 1, &cross, &off, &intra);
        assert_true(cross > 0 && off == 0);
        checked++;
        tc_sched_free(s);
    }
    assert_true(relayed > 100 && shared > 30);
    printf("%d nccl-a2a PXN schedules checked (%d over several nodes, %d with shared NICs)\n", checked, relayed,
           shared);

    /* where NCCL has no PXN: one GPU per node, one NIC per node, one node */
    tc_topo t = node_topo(16, 1);
    assert_false(tc_nccl_a2a_pxn_applies(&t, 16));
    t = node_topo(16, 8);
    t.nics = 1;
    assert_false(tc_nccl_a2a_pxn_applies(&t, 16));
    t.nics = 0;
    assert_false(tc_nccl_a2a_pxn_applies(&t, 8));
    assert_true(tc_nccl_a2a_pxn_applies(&t, 16));
}

/* Bytes up to the spines (level-2 fabric up links) when every transfer of
 * s is routed by routing. */
static double spine_bytes(const tc_topo *t, const tc_sched *s, tc_routing routing)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *links = malloc(tc_topo_max_path(t) * sizeof *links);
    assert_non_null(links);
    double sum = 0;
    for (uint32_t step = 0; step < s->nsteps; step++) {
        assert_int_equal(tc_sched_emit(s, step, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t n = tc_topo_route(t, routing, x.v[i].src, x.v[i].dst, links);
            for (uint32_t l = 0; l < n; l++)
                if (t->links[links[l]].kind == TC_LINK_FABRIC && t->links[links[l]].level == 2 &&
                    t->links[links[l]].dir > 0)
                    sum += x.v[i].bytes;
        }
    }
    free(links);
    tc_xfers_free(&x);
    return sum;
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

/* Two DGX H100 (rail-optimized: rail j of both nodes on leaf j, two
 * spines), 64 MiB all-to-all: B = 4 MiB per peer, 16 ranks.
 * Bytes: without PXN each rank sends to the 7 GPUs of the other node on
 * other rails through a spine, 16 x 7 x B in all; with PXN none.
 * Time (steps and formula, any routing, Simple): NCCL's base latency and
 * one network hop (8.4 + 14 us), the 7 peer steps inside the node at B over
 * the NVLink port (370.8 GB/s), then the 8 peers of the other node: the
 * first (same rail) direct, the next 7 relayed, the NVLink hop of one
 * under the network hop of the one before, 8 steps at B over the 50 GB/s
 * NIC: 22.4 us + 7 B / 370.8 GB/s + 8 B / 50 GB/s = 772.67 us. */
static void two_dgx_h100_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo(DGX2);
    double S = 64.0 * 1024 * 1024, B = S / 16;
    tc_sched *on = build_a2a(t, 16, S, 0, true), *off = build_a2a(t, 16, S, 0, false);
    assert_int_equal(on->params[0], 1);
    assert_int_equal(off->params[0], 0);
    assert_int_equal(on->proto, TC_PROTO_SIMPLE);
    for (int r = 0; r < 2; r++) {
        tc_routing rt = r ? TC_ROUTE_DMODK : TC_ROUTE_ECMP;
        double with = spine_bytes(t, on, rt), without = spine_bytes(t, off, rt);
        if (with != 0 || fabs(without - 16 * 7 * B) > 1e-6 * B)
            fail_msg("%s: spine bytes with PXN %.17g (want 0), without %.17g (want %.17g)", r ? "dmodk" : "ecmp", with,
                     without, 16 * 7 * B);
    }
    double want = 22.4e-6 + 7 * B / 370.8e9 + 8 * B / 50e9;
    double f = eval_sched(t, on, TC_MODE_FORMULA, TC_ROUTE_DMODK);
    double sd = eval_sched(t, on, TC_MODE_STEPS, TC_ROUTE_DMODK);
    double se = eval_sched(t, on, TC_MODE_STEPS, TC_ROUTE_ECMP);
    if (fabs(f - want) > 1e-9 * want || fabs(sd - want) > 1e-9 * want || fabs(se - want) > 1e-9 * want)
        fail_msg("2 DGX H100 with PXN: formula %.12g, steps dmodk %.12g, ecmp %.12g s; by hand %.12g", f, sd, se, want);
    /* without PXN, ECMP's collisions on the spines cost in steps mode */
    double se_off = eval_sched(t, off, TC_MODE_STEPS, TC_ROUTE_ECMP);
    assert_true(se_off > 1.3 * se);
    printf("2 DGX H100, 64 MiB: by hand %.2f us; steps ECMP %.2f us with PXN, %.2f us without\n", want * 1e6,
           se * 1e6, se_off * 1e6);
    tc_sched_free(on);
    tc_sched_free(off);
    tc_topo_free(t);
}

/* The ECMP flow case (`topocc collective --preset dgx-h100:nodes=2 --op
 * alltoall --algo nccl-a2a --size 64MiB --mode flow`): without PXN hash
 * collisions on the spines leave ECMP far behind D-mod-k (busbw 35 against
 * 91 GB/s); with PXN nothing crosses a spine, so ECMP is within 2% of
 * D-mod-k, and D-mod-k no slower than without PXN (2% slack). */
static void ecmp_flow_catches_up_with_dmodk(void **state)
{
    (void)state;
    tc_topo *t = topo(DGX2);
    double S = 64.0 * 1024 * 1024;
    tc_sched *on = build_a2a(t, 16, S, 0, true), *off = build_a2a(t, 16, S, 0, false);
    double e_on = eval_sched(t, on, TC_MODE_FLOW, TC_ROUTE_ECMP), d_on = eval_sched(t, on, TC_MODE_FLOW, TC_ROUTE_DMODK);
    double e_off = eval_sched(t, off, TC_MODE_FLOW, TC_ROUTE_ECMP),
           d_off = eval_sched(t, off, TC_MODE_FLOW, TC_ROUTE_DMODK);
    double bus = 15.0 / 16 * S / 1e9;
    printf("flow busbw GB/s: PXN ecmp %.2f dmodk %.2f; no PXN ecmp %.2f dmodk %.2f\n", bus / e_on, bus / d_on,
           bus / e_off, bus / d_off);
    if (e_on > 1.02 * d_on || e_off < 2 * e_on || d_on > 1.02 * d_off)
        fail_msg("flow: PXN ecmp %.9g dmodk %.9g; no PXN ecmp %.9g dmodk %.9g", e_on, d_on, e_off, d_off);
    tc_sched_free(on);
    tc_sched_free(off);
    tc_topo_free(t);
}

/* Formula equals steps (1e-9) and flow stays within 1.6x of steps (the
 * bound of test_invariants' NCCL cases), no evaluator below the lower
 * bound, on rail-optimized and plain Clos clusters of 2 to 8 nodes of 4 or
 * 8 GPUs, a NIC per GPU or shared, sizes from 1 KiB to 16 MiB per peer. */
static void evaluators_agree_with_pxn(void **state)
{
    (void)state;
    int cases = 0;
    double worst = 1;
    for (uint32_t i = 0; i < 24; i++) {
        uint32_t G = i % 2 ? 8 : 4, N = 2 + (i * 5) % 7, K = i % 3 == 2 ? G / 2 : G;
        bool rail = (i / 2) % 2;
        char spec[256];
        int n = snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,node=%u,arch=hopper", N, K, N, G);
        if (K < G)
            n += snprintf(spec + n, sizeof spec - (size_t)n, ",nics=%u", K);
        if (rail)
            snprintf(spec + n, sizeof spec - (size_t)n, ",rail=%u", K);
        tc_topo *t = topo(spec);
        uint32_t p = N * G;
        double bytes = 1024.0 * pow(2, (double)(i % 15)) * p;
        tc_sched *s = build_a2a(t, p, bytes, (i % 3) * 4, true);
        assert_int_equal(s->params[0], 1);
        double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        double st = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
        double fl = eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_DMODK);
        double lb = tc_lower_bound(t, TC_OP_ALLTOALL, p, s->req.bytes, NULL);
        double ratio = fmax(fl / st, st / fl);
        if (fabs(f - st) > 1e-9 * st || ratio > 1.6 || fmin(f, fl) < lb * (1 - 1e-9))
            fail_msg("%s p=%u bytes=%g: formula %.12g steps %.12g flow %.12g bound %.12g", spec, p, s->req.bytes, f,
                     st, fl, lb);
        worst = fmax(worst, ratio);
        cases++;
        tc_sched_free(s);
        tc_topo_free(t);
    }
    printf("%d PXN cases: formula equals steps; flow and steps differ by at most x%.3f\n", cases, worst);
}

/* Sizes of one request whose schedules have one shape (tc_sched.same_shape)
 * are evaluated as one sweep: the claim checked on random pairs of sizes
 * (nodes of 1, 2, 4 and 8 GPUs, PXN or not, channels, sizes either side of
 * the LL threshold): where it holds, every step carries the same transfers
 * (ends, lane, piped, and bytes in the ratio of the two blk_bytes); the
 * sweep of one at the other's size gives the other's formula and steps
 * times to 1e-12; and it does not hold across protocols or piece counts. */
static void sizes_of_one_shape_evaluate_as_one(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=8x4,up=1x4", DGX2, "clos:down=4x8,up=1x4,node=4,nics=2,rail=2",
                                  "clos:down=4x8,up=1x8,node=8,rail=8"};
    uint64_t z = 99;
    int same = 0, differ = 0;
    for (int it = 0; it < 60; it++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        const char *spec = specs[(z >> 33) % 4];
        tc_topo *t = topo(spec);
        uint32_t G = t->node_size > 1 ? t->node_size : 1, nodes = 1 + (uint32_t)((z >> 40) % (t->n_endpoints / G));
        uint32_t p = nodes * G < 2 ? 2 : nodes * G;
        double b[2];
        for (int k = 0; k < 2; k++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            b[k] = 4.0 * p * floor(exp2(4 + (double)((z >> 35) % 160) / 10)); /* 64 B .. 512 KiB a peer */
        }
        bool pxn = (z >> 20) & 1;
        uint32_t ch = (z >> 22) & 1 ? 0 : 4;
        tc_sched *a = build_a2a(t, p, b[0], ch, pxn), *c = build_a2a(t, p, b[1], ch, pxn);
        assert_non_null(a->same_shape);
        if (!a->same_shape(a, c)) {
            differ++;
            assert_true(a->proto != c->proto || a->nblk != c->nblk || a->nphases != c->nphases);
        } else {
            same++;
            double f = c->blk_bytes / a->blk_bytes;
            tc_xfers x, y;
            tc_xfers_init(&x, false);
            tc_xfers_init(&y, false);
            for (uint32_t k = 0; k < a->nsteps; k++) {
                tc_xfers_clear(&x);
                tc_xfers_clear(&y);
                assert_int_equal(tc_sched_emit(a, k, &x), TC_OK);
                assert_int_equal(tc_sched_emit(c, k, &y), TC_OK);
                assert_int_equal(x.n, y.n);
                for (size_t i = 0; i < x.n; i++)
                    if (x.v[i].src != y.v[i].src || x.v[i].dst != y.v[i].dst || x.v[i].lane != y.v[i].lane ||
                        x.v[i].piped != y.v[i].piped || fabs(x.v[i].bytes * f - y.v[i].bytes) > 1e-12 * y.v[i].bytes)
                        fail_msg("%s p=%u step %u transfer %zu differs", spec, p, k, i);
            }
            tc_xfers_free(&x);
            tc_xfers_free(&y);
            for (int m = 0; m < 2; m++) {
                tc_eval_opts o = {.mode = m ? TC_MODE_STEPS : TC_MODE_FORMULA};
                double swept, direct;
                tc_err err = {{0}};
                assert_int_equal(m ? tc_eval_steps_sweep(t, a, &o, &c->req.bytes, 1, &swept, &err)
                                   : tc_eval_formula_sweep(t, a, &o, &c->req.bytes, 1, &swept, &err), TC_OK);
                assert_int_equal(tc_eval_sched(t, c, &o, &direct, &err), TC_OK);
                if (fabs(swept - direct) > 1e-12 * direct)
                    fail_msg("%s p=%u mode %d: %.17g swept, %.17g built", spec, p, m, swept, direct);
            }
        }
        tc_sched_free(a);
        tc_sched_free(c);
        tc_topo_free(t);
    }
    print_message("%d pairs of one shape, %d not\n", same, differ);
    assert_true(same > 10 && differ > 10);
    /* a sweep of NCCL's all-to-all over 13 sizes (runs of one shape evaluated
     * together) gives each size's own evaluation */
    tc_topo *t = topo(DGX2);
    double sizes[13];
    tc_result res[13];
    for (int i = 0; i < 13; i++)
        sizes[i] = 4096.0 * exp2(i);
    for (int m = 0; m < 2; m++) {
        tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL, .p = 16, .bytes = sizes[0], .elt = 4};
        tc_eval_opts o = {.mode = m ? TC_MODE_STEPS : TC_MODE_FORMULA};
        tc_err err = {{0}};
        assert_int_equal(tc_evaluate_sweep(t, &req, sizes, 13, &o, res, &err), TC_OK);
        for (int i = 0; i < 13; i++) {
            tc_result one;
            req.bytes = sizes[i];
            assert_int_equal(tc_evaluate(t, &req, &o, &one, &err), TC_OK);
            if (fabs(one.time_s - res[i].time_s) > 1e-12 * one.time_s || one.transfers != res[i].transfers ||
                one.proto != res[i].proto)
                fail_msg("mode %d, %g bytes: swept %.17g s, alone %.17g s", m, sizes[i], res[i].time_s, one.time_s);
        }
    }
    tc_topo_free(t);
}

/* Tiny all-to-alls on a fabric of next to unlimited bandwidth and no path
 * latency, where the time is the latency alone (NVIDIA/nccl v2.21.5-1,
 * docs/MODEL.md "NCCL's all-to-all"): each channel runs its works one
 * after another, a work (up to 8 peers' sends and 8 receives, a new one
 * for every group of 8 peer-order entries: src/enqueue.cc:947,
 * src/include/device.h:279) costing one hop; 16 channels, 64 B a peer
 * (LL). Nodes of 8 GPUs: every node delta's 8 peers share one work on
 * channel mirror(delta mod 16) (src/include/channel.h:15-46), so a
 * channel runs ceil(N / 16) works across nodes: 6.6 us + 0.6 us on one
 * node, 6.6 + 2.7 on 2 to 16 nodes, then 2, 4 and 8 network hops on 32,
 * 64 and 128 nodes. One GPU per node, 16 nodes: at 64 B the 16 peers
 * land on 16 different channels, one work each (6.6 + 2.7); at 256 KiB
 * (Simple, two 128 KiB pieces a peer on two channels) the 16 entries are
 * two groups of 8, each spreading its 16 pieces over the 16 channels, so
 * each channel runs two works: 8.4 + 2 x 14 us. The same in formula and
 * steps, in flow (up to 32 nodes) and in NCCL's choice's prediction
 * (tc_nccl_choose). */
static void peer_batches_by_hand(void **state)
{
    (void)state;
    static const struct {
        uint32_t G, N;
        double peer;
        uint32_t hops_inter, hops_intra;
    } cases[] = {{8, 1, 64, 0, 1},  {8, 2, 64, 1, 0},  {8, 16, 64, 1, 0}, {8, 32, 64, 2, 0},
                 {8, 64, 64, 4, 0}, {8, 128, 64, 8, 0}, {1, 16, 64, 1, 0}, {1, 16, 262144, 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint32_t G = cases[i].G, N = cases[i].N, p = G * N;
        char spec[256];
        if (G > 1)
            snprintf(spec, sizeof spec,
                     "clos:down=%ux%u,up=1x%u,node=%u,bw=1000000Tbps,node_bw=1000000TB/s,lat=0ns,hop_lat=0ns,"
                     "node_lat=0ns,arch=hopper",
                     N, G, G, G);
        else
            snprintf(spec, sizeof spec, "clos:down=%ux1,up=1x1,bw=1000000Tbps,lat=0ns,hop_lat=0ns,arch=hopper", N);
        tc_topo *t = topo(spec);
        tc_sched *s = build_a2a(t, p, cases[i].peer * p, 16, true);
        bool ll = cases[i].peer <= 16384;
        assert_int_equal(s->proto, ll ? TC_PROTO_LL : TC_PROTO_SIMPLE);
        assert_int_equal(s->channels, 16);
        double want = ll ? (6.6 + 2.7 * cases[i].hops_inter + 0.6 * cases[i].hops_intra) * 1e-6
                         : (8.4 + 14.0 * cases[i].hops_inter + 3.4 * cases[i].hops_intra) * 1e-6;
        double f = eval_sched(t, s, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        double st = eval_sched(t, s, TC_MODE_STEPS, TC_ROUTE_DMODK);
        double fl = N <= 32 ? eval_sched(t, s, TC_MODE_FLOW, TC_ROUTE_DMODK) : want;
        tc_coll_req q = s->req;
        q.algo = TC_ALGO_NCCL;
        double pred = 0;
        tc_nccl_choose(&q, t, NULL, &pred);
        if (fabs(f - want) > 1e-6 * want || fabs(st - want) > 1e-6 * want || fabs(fl - want) > 1e-6 * want ||
            fabs(pred - want) > 1e-6 * want)
            fail_msg("G=%u N=%u %g B a peer: formula %.9g steps %.9g flow %.9g predicted %.9g s; by hand %.9g", G,
                     N, cases[i].peer, f, st, fl, pred, want);
        assert_int_equal(s->nlat_pairs, cases[i].hops_inter + cases[i].hops_intra);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pxn_moves_the_right_data),
        cmocka_unit_test(two_dgx_h100_by_hand),
        cmocka_unit_test(ecmp_flow_catches_up_with_dmodk),
        cmocka_unit_test(evaluators_agree_with_pxn),
        cmocka_unit_test(sizes_of_one_shape_evaluate_as_one),
        cmocka_unit_test(peer_batches_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
