/*
 * test_nccl.c - NCCL's ring (nccl-ring) and its protocols: the schedule
 * executed on real buffers (tc_sched_check) for many rank counts, node
 * sizes, rails, channels, protocols and sizes; every hop between nodes on
 * one rail; the protocol costs NCCL v2.21.5-1's tables give, by hand.
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
#include "build_helpers.h"
#include "coll/algos.h"

/* The transfers and bytes tc_sched_count takes from the phases' declared
 * counts (tc_phase.blk_xfers) are those of the steps emitted. */
static void count_as_emitted(tc_sched *s)
{
    uint64_t n = 0, n2 = 0;
    double b = 0, b2 = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_sched_count(s, &n, &b, &err), TC_OK);
    for (uint32_t i = 0; i < s->nphases; i++)
        s->phases[i].blk_xfers = 0;
    assert_int_equal(tc_sched_count(s, &n2, &b2, &err), TC_OK);
    assert_true(n == n2 && n > 0);
    assert_true(fabs(b - b2) <= 1e-12 * b2);
}

static tc_sched *build(const tc_topo *t, tc_op op, uint32_t p, double bytes, uint32_t elt, uint32_t channels,
                       tc_proto proto)
{
    tc_coll_req req = {.op = op, .algo = TC_ALGO_NCCL_RING, .p = p, .bytes = bytes, .elt = elt,
                       .channels = channels, .proto = proto};
    tc_err err = {{0}};
    if (elt && tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s p=%u bytes=%g: %s", tc_op_name(op), p, bytes, err.msg);
    return s;
}

static double eval_time(const tc_topo *t, tc_op op, double bytes, tc_proto proto, uint32_t channels, tc_mode mode,
                        bool no_skip, tc_routing routing);
static double algo_time(const tc_topo *t, tc_algo algo, tc_op op, double bytes, tc_proto proto, uint32_t channels,
                        tc_mode mode, tc_routing routing);

/* The data checker on every combination: node sizes 1 (no node), 2, 4 and
 * 8, with and without rails and shared NICs, whole node counts from 1 to 9 (odd and even),
 * 1 to 5 channels and the default, the three protocols, sizes that leave
 * chunks of uneven elements. */
static void nccl_ring_moves_the_right_data(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t G;
    } topos[] = {{"clos:down=16x4,up=1x4", 1},
                 {"clos:down=16x4,up=1x4,node=2", 2},
                 {"clos:down=16x4,up=1x4,node=4,rail=4", 4},
                 {"clos:down=9x8,up=1x9,node=8,rail=8", 8},
                 {"clos:down=9x8,up=1x9,node=8,rail=4", 8},
                 {"clos:down=9x4,up=1x9,node=8,nics=4,rail=4", 8},
                 {"clos:down=9x2,up=1x2,node=4,gpus_per_nic=2", 4}};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    int checked = 0, looped = 0;
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        tc_topo *t = topo(topos[ti].spec);
        uint32_t G = topos[ti].G;
        for (uint32_t nodes = 1; nodes <= 9 && nodes * G <= t->n_endpoints; nodes++) {
            uint32_t p = nodes * G;
            if (p < 2)
                continue;
            for (size_t oi = 0; oi < 3; oi++)
                for (uint32_t c = 0; c <= 5; c += 2 + (c == 0))
                    for (int pr = TC_PROTO_LL; pr <= TC_PROTO_SIMPLE; pr++) {
                        /* several loops of each protocol's chunk, or a few elements */
                        double big = pr == TC_PROTO_SIMPLE ? 3000001.0 : 50001.0;
                        double bytes = (c == 3 ? 16.0 : c == 0 ? big : 2 * big + 1) * 4 * p;
                        tc_sched *s = build(t, ops[oi], p, bytes, 4, c, (tc_proto)pr);
                        tc_err err = {{0}};
                        tc_status st = s->nblk <= 2048 ? tc_sched_check(s, &err)
                                                        : tc_sched_check_sampled(s, 16, 7, &err);
                        if (st != TC_OK)
                            fail_msg("%s %s p=%u channels=%u %s: %s", topos[ti].spec, tc_op_name(ops[oi]), p, c,
                                     tc_proto_name((tc_proto)pr), err.msg);
                        count_as_emitted(s);
                        checked++;
                        uint32_t per = ops[oi] == TC_OP_ALLREDUCE ? 2 * (p - 1) : p - 1;
                        looped += s->nsteps > per;
                        tc_sched_free(s);
                    }
        }
        tc_topo_free(t);
    }
    /* Large rank counts, one node size: p up to 1,024 */
    tc_topo *t = topo("clos:hosts=1024,radix=64,tiers=2,node=8,rail=8");
    for (uint32_t p = 16; p <= 1024; p *= 4) {
        tc_sched *s = build(t, TC_OP_ALLREDUCE, p, 1 << 20, 4, 2, TC_PROTO_SIMPLE);
        tc_err err = {{0}};
        if (tc_sched_check_sampled(s, 16, 3, &err) != TC_OK)
            fail_msg("p=%u: %s", p, err.msg);
        tc_sched_free(s);
        checked++;
    }
    tc_topo_free(t);
    print_message("%d nccl-ring schedules checked, %d of several loops\n", checked, looped);
    assert_true(looped > checked / 4);
}

/* Broadcast and reduce: NCCL's ring as C chains (broadcast.h, reduce.h
 * runRing), executed on real buffers for node sizes 1 to 8, rails and
 * shared NICs, 1 to 9 nodes, three roots, channels and protocols; each
 * channel's chain starts at the root (broadcast) or ends there (reduce);
 * two nodes on 8 rails cross between the nodes on every rail. */
static void nccl_chains_move_the_right_data(void **state)
{
    (void)state;
    static const char *topos[] = {"clos:down=16x4,up=1x4", "clos:down=16x4,up=1x4,node=4,rail=4",
                                  "clos:down=9x8,up=1x9,node=8,rail=8", "clos:down=9x4,up=1x9,node=8,nics=4,rail=4"};
    static const uint32_t Gs[] = {1, 4, 8, 8};
    int checked = 0;
    for (size_t ti = 0; ti < 4; ti++) {
        tc_topo *t = topo(topos[ti]);
        static const uint32_t nn[] = {1, 2, 3, 4, 9};
        for (size_t ni = 0; ni < 5 && nn[ni] * Gs[ti] <= t->n_endpoints; ni++) {
            uint32_t nodes = nn[ni];
            uint32_t p = nodes * Gs[ti] < 2 ? 2 : nodes * Gs[ti];
            uint32_t roots[3] = {0, p / 2 + 1 < p ? p / 2 + 1 : 0, p - 1};
            for (int op = 0; op < 2; op++)
                for (int ri = 0; ri < 3; ri++)
                    for (uint32_t c = 0; c <= 3; c += 3)
                        for (int pr = TC_PROTO_LL; pr <= TC_PROTO_SIMPLE; pr++) {
                            tc_op o = op ? TC_OP_REDUCE : TC_OP_BROADCAST;
                            double bytes = (pr == TC_PROTO_SIMPLE ? 2700001.0 : 40001.0) * 4 * (1 + c);
                            tc_coll_req req = {.op = o, .algo = TC_ALGO_NCCL_RING, .p = p, .bytes = bytes, .elt = 4,
                                               .channels = c, .proto = (tc_proto)pr, .root = roots[ri]};
                            tc_err err = {{0}};
                            tc_sched *sc = NULL;
                            if (tc_coll_round(&req, &err) != TC_OK || tc_coll_build(&req, t, &sc, &err) != TC_OK)
                                fail_msg("%s %s p=%u: %s", topos[ti], tc_op_name(o), p, err.msg);
                            tc_status st = sc->nblk <= 2048 ? tc_sched_check(sc, &err)
                                                             : tc_sched_check_sampled(sc, 16, 7, &err);
                            if (st != TC_OK)
                                fail_msg("%s %s p=%u root=%u channels=%u %s: %s", topos[ti], tc_op_name(o), p,
                                         roots[ri], c, tc_proto_name((tc_proto)pr), err.msg);
                            /* the root sends every chunk (broadcast) or receives them all (reduce), and
                             * never the other */
                            uint64_t out = 0, in = 0;
                            tc_xfers x = {0};
                            for (uint32_t k = 0; k < sc->nsteps; k++) {
                                x.n = 0;
                                assert_int_equal(tc_sched_emit(sc, k, &x), TC_OK);
                                for (size_t i = 0; i < x.n; i++) {
                                    out += x.v[i].src == roots[ri];
                                    in += x.v[i].dst == roots[ri];
                                }
                            }
                            tc_xfers_free(&x);
                            if ((o == TC_OP_BROADCAST ? out : in) != sc->nblk || (o == TC_OP_BROADCAST ? in : out))
                                fail_msg("%s p=%u root=%u: the root sends %llu and receives %llu of %u chunks",
                                         tc_op_name(o), p, roots[ri], (unsigned long long)out,
                                         (unsigned long long)in, sc->nblk);
                            tc_sched_free(sc);
                            checked++;
                        }
        }
        tc_topo_free(t);
    }
    /* 1,024 ranks, sampled */
    tc_topo *t = topo("clos:hosts=1024,radix=64,tiers=2,node=8,rail=8");
    for (int op = 0; op < 2; op++) {
        tc_coll_req req = {.op = op ? TC_OP_REDUCE : TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING, .p = 1024,
                           .bytes = 1 << 24, .elt = 4, .root = 517};
        tc_err err = {{0}};
        tc_sched *sc = NULL;
        if (tc_coll_build(&req, t, &sc, &err) != TC_OK || tc_sched_check_sampled(sc, 16, 3, &err) != TC_OK)
            fail_msg("p=1024: %s", err.msg);
        tc_sched_free(sc);
        checked++;
    }
    tc_topo_free(t);
    /* two nodes on 8 rails: each channel's chain crosses between the nodes
     * once or twice, and the channels cross on every rail */
    t = topo("clos:down=2x8,up=1x2,node=8,rail=8");
    tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING, .p = 16, .bytes = 1 << 26, .elt = 4};
    tc_err err = {{0}};
    tc_sched *sc = NULL;
    assert_int_equal(tc_coll_build(&req, t, &sc, &err), TC_OK);
    uint32_t rails = 0, cross = 0;
    tc_xfers x = {0};
    for (uint32_t k = 0; k + 2 < 16 + 1; k++) { /* chunk 0 of every channel crosses in the first R - 1 steps */
        x.n = 0;
        assert_int_equal(tc_sched_emit(sc, k, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++)
            if (!x.v[i].piped && x.v[i].src / 8 != x.v[i].dst / 8) {
                cross++;
                rails |= 1u << (x.v[i].src % 8);
            }
    }
    tc_xfers_free(&x);
    /* the chain is the ring less the hop into the root: both of the
     * ring's crossings, or one where the hop into the root is one */
    assert_true(cross >= sc->channels && cross <= 2 * sc->channels);
    assert_int_equal(rails, 0xffu);
    tc_sched_free(sc);
    tc_topo_free(t);
    print_message("%d nccl-ring broadcast and reduce schedules checked\n", checked);
}

/* One 8-GPU NVSwitch node, broadcast of 64 MiB on one channel with Simple,
 * by hand: chunks of one FIFO step (512 KiB, 128 of them), 134 steps of a
 * chunk over a GPU's 370.8 GB/s, plus the base 8.4 us and the 7 hops of
 * the chain at Simple's NVLink step of 3.4 us; every evaluator, flow
 * included (its chain's sends leave in order, as NCCL's thread block
 * copies them), within 0.5% of it, and with 16 channels the three agree
 * too; NCCL's choice for broadcast is its ring, LL for 8 B, Simple for 1
 * GiB. */
static void nccl_chain_on_one_node_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=370.8GB/s,node_lat=250ns,arch=hopper");
    double S = 67108864.0, want = 8.4e-6 + 7 * 3.4e-6 + 134 * 524288.0 / 370.8e9;
    for (int m = 0; m < 3; m++) {
        double got = eval_time(t, TC_OP_BROADCAST, S, TC_PROTO_SIMPLE, 1, (tc_mode)m, false, TC_ROUTE_DMODK);
        if (fabs(got - want) > 5e-3 * want)
            fail_msg("mode %d: %.9g s, by hand %.9g s", m, got, want);
    }
    double f = eval_time(t, TC_OP_REDUCE, S, TC_PROTO_SIMPLE, 16, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    double w = eval_time(t, TC_OP_REDUCE, S, TC_PROTO_SIMPLE, 16, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
    if (fabs(f - w) > 5e-3 * f)
        fail_msg("16 channels: formula %.9g s, flow %.9g s", f, w);
    for (int i = 0; i < 2; i++) {
        tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL, .p = 8, .bytes = i ? 1 << 30 : 8};
        tc_algo a = TC_ALGO_AUTO;
        tc_proto pr = tc_nccl_choose(&req, t, &a, NULL);
        assert_int_equal(a, TC_ALGO_NCCL_RING);
        assert_int_equal(pr, i ? TC_PROTO_SIMPLE : TC_PROTO_LL);
    }
    tc_topo_free(t);
}

static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* LL and LL128 forward a chain's lines as they arrive: a broadcast of 32
 * KiB over 64 ranks (8 nodes of 8 H100, LL, the one channel NCCL runs below
 * 64 x 8 x 512 B) pays the 63 hops' latency and its bytes about once, not
 * a whole chunk a hop (259.7 us with its 32 KiB waiting whole at every
 * rank; 85.7 us). By hand: the time above 8 B's is at most twice the 64
 * KiB on the wire at the channel's rate; steps and flow agree. */
static void ll_chain_forwards_lines(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,node=8,rail=8,node_bw=370.8GB/s,arch=hopper");
    for (int op = 0; op < 2; op++) {
        tc_op o = op ? TC_OP_REDUCE : TC_OP_BROADCAST;
        tc_coll_req req = {.op = o, .algo = TC_ALGO_NCCL_RING, .p = 64, .bytes = 32768, .elt = 4,
                           .proto = TC_PROTO_LL};
        tc_sched *s = sched_req(t, req);
        double rate = s->rate_cap_Bps * s->channels;
        assert_int_equal(s->channels, 1);
        tc_sched_free(s);
        double t0 = algo_time(t, TC_ALGO_NCCL_RING, o, 8, TC_PROTO_LL, 0, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        double t1 = algo_time(t, TC_ALGO_NCCL_RING, o, 32768, TC_PROTO_LL, 0, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        double ts = algo_time(t, TC_ALGO_NCCL_RING, o, 32768, TC_PROTO_LL, 0, TC_MODE_STEPS, TC_ROUTE_DMODK);
        double tf = algo_time(t, TC_ALGO_NCCL_RING, o, 32768, TC_PROTO_LL, 0, TC_MODE_FLOW, TC_ROUTE_DMODK);
        if (!(t1 - t0 <= 2 * 65536 / rate) || fabs(ts - t1) > 0.02 * t1 || fabs(tf - t1) > 0.05 * t1)
            fail_msg("%s LL 32 KiB on 64 ranks: formula %.6g us (8 B %.6g, bytes at %.4g GB/s %.4g us), steps %.6g, "
                     "flow %.6g",
                     tc_op_name(o), t1 * 1e6, t0 * 1e6, rate / 1e9, 65536 / rate * 1e6, ts * 1e6, tf * 1e6);
    }
    tc_topo_free(t);
}

/* Formula and steps time a chain as the pipeline it is: on 8 hosts of one
 * switch, one channel, Simple, L chunks of b bytes, every hop takes tau =
 * b / bw in steady state ((L + 6) tau in all). Halving the uplinks of the
 * senders of hops 1 and 5 makes those hops take 2 tau: the pipeline takes sum tau_h +
 * (L - 1) max tau_h = (2 L + 7) tau, (L + 1) tau more, where lock step
 * charges 2 tau to every step either slow hop is active in, |[1, L] u [5,
 * L + 4]| steps (L = 3: 6 tau more, L = 12: 16). At L = 200 the steady
 * run is extrapolated once every hop's growth is fixed: still exact. Flow
 * agrees within 5%.
 * Then a chain that crosses one link at two of its hops (a rank map on a
 * two-leaf Clos whose uplink is slowed to a tenth): the pipelines' steps
 * overlap, but the link still carries both crossings' bytes, 8 chunks of
 * 512 KiB at its bandwidth. */
static void chain_is_timed_as_a_pipeline(void **state)
{
    (void)state;
    static const uint32_t Ls[] = {3, 12, 200};
    for (size_t li = 0; li < 3; li++) {
        double T[2][3];
        uint32_t L = Ls[li];
        double b = 524288, bytes = b * L;
        for (int slow = 0; slow < 2; slow++) {
            tc_topo *t = topo("clos:down=8,up=1,bw=100Gbps");
            tc_err err = {{0}};
            tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING, .p = 8, .bytes = bytes, .elt = 4,
                               .channels = 1, .proto = TC_PROTO_SIMPLE};
            tc_sched *s = NULL;
            if (tc_coll_build(&req, t, &s, &err) != TC_OK)
                fail_msg("build: %s", err.msg);
            assert_int_equal(s->pipe_chunks, L);
            assert_int_equal(s->pipe_hops, 7);
            for (uint32_t h = 1; slow && h <= 5; h += 4) {
                /* hop h's sender's uplink: channel 0's chain from root 0
                 * runs downwards, 0 -> 7 -> 6 -> ... -> 1 (ring_order) */
                uint32_t path[16], m = tc_topo_route(t, TC_ROUTE_DMODK, 8 - h, 7 - h, path);
                assert_true(m >= 1);
                if (tc_topo_degrade_link(t, path[0], 0.5, &err) != TC_OK)
                    fail_msg("degrade: %s", err.msg);
            }
            for (int m = 0; m < 3; m++) {
                tc_eval_opts o = {.mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW,
                                  .routing = TC_ROUTE_DMODK};
                tc_result r;
                if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
                    fail_msg("evaluate: %s", err.msg);
                T[slow][m] = r.time_s;
            }
            tc_sched_free(s);
            tc_topo_free(t);
        }
        double tau = b / 12.5e9, want = (L + 1) * tau, lock = (L >= 4 ? L + 4 : 2 * L) * tau;
        for (int m = 0; m < 3; m++) {
            double got = T[1][m] - T[0][m];
            if (fabs(got - want) > (m == 2 ? 0.05 * (T[1][m]) : 1e-9 * want + 1e-12))
                fail_msg("L=%u, %s: the slow hops add %.6g us, the pipeline %.6g us (lock step %.6g)", L,
                         m == 0 ? "formula" : m == 1 ? "steps" : "flow", got * 1e6, want * 1e6, lock * 1e6);
        }
    }
    /* one link crossed at two hops */
    tc_topo *t = topo("clos:down=4x2,up=1x1");
    tc_err err = {{0}};
    if (tc_topo_degrade_link(t, 18, 0.1, &err) != TC_OK)
        fail_msg("degrade: %s", err.msg);
    uint32_t map[8] = {0, 3, 2, 7, 6, 5, 1, 4};
    tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING, .p = 8, .bytes = 2097152, .elt = 4,
                       .channels = 1, .proto = TC_PROTO_SIMPLE};
    double T[3];
    for (int m = 0; m < 3; m++) {
        tc_eval_opts o = {.mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW,
                          .routing = TC_ROUTE_DMODK, .rank_map = map};
        tc_result r;
        if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
            fail_msg("evaluate: %s", err.msg);
        T[m] = r.time_s;
    }
    double bound = 8 * 524288.0 / t->links[18].bw;
    if (!(T[0] >= bound && T[1] >= bound && T[0] >= 0.9 * T[2]))
        fail_msg("a link crossed twice: formula %.6g us, steps %.6g, flow %.6g, the link's bytes %.6g", T[0] * 1e6,
                 T[1] * 1e6, T[2] * 1e6, bound * 1e6);
    tc_topo_free(t);
}

/* A chain's fill and drain are nested phases (tc_phase.nest), which the
 * graph evaluators cost by bisection where they sum phases in lock step
 * (the chains themselves are timed as pipelines, tc_steps_pipeline: the
 * test clears pipe_hops to reach the phase sums): on random cases
 * (topologies with oversubscription, a degraded or slow link, a torus,
 * rank maps; node sizes, ranks, roots, channels, protocols, sizes that
 * leave fewer chunks than hops and more, several sizes a sweep) formula
 * and steps give exactly, bit for bit, what phase by phase gives (the
 * flags cleared). The data checker refuses a flag that does not hold. */
static void chain_fill_and_drain_by_bisection_are_exact(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=16x4,up=1x4", "clos:down=16x4,up=1x2",
                                  "clos:down=9x8,up=1x9,node=8,rail=8", "clos:down=9x4,up=1x9,node=8,nics=4,rail=4",
                                  "clos:down=8x8,up=1x4,node=4", "torus:dims=4x4x4"};
    uint64_t seed = 20261206;
    int cases = 0, nested = 0, windows = 0;
    for (int it = 0; it < 240; it++) {
        const char *spec = specs[mix(&seed) % 6];
        tc_topo *t = topo(spec);
        uint32_t G = t->node_size > 1 ? t->node_size : 1;
        tc_err err = {{0}};
        if (mix(&seed) % 3 == 0) {
            /* a slow link somewhere: the chain's time changes where it reaches it */
            uint32_t l = (uint32_t)(mix(&seed) % t->n_links);
            if (tc_topo_degrade_link(t, l, 0.1 + 0.8 * (double)(mix(&seed) % 1000) / 1000, &err) != TC_OK)
                fail_msg("degrade %u: %s", l, err.msg);
        }
        uint32_t maxn = t->n_endpoints / G, nodes = 1 + (uint32_t)(mix(&seed) % maxn);
        uint32_t p = nodes * G < 2 ? 2 : nodes * G;
        uint32_t *map = NULL;
        if (mix(&seed) % 4 == 0) {
            map = malloc(p * sizeof *map);
            uint32_t *all = malloc(t->n_endpoints * sizeof *all);
            for (uint32_t i = 0; i < t->n_endpoints; i++)
                all[i] = i;
            for (uint32_t i = 0; i < p; i++) { /* p distinct endpoints at random */
                uint32_t j = i + (uint32_t)(mix(&seed) % (t->n_endpoints - i)), v = all[i];
                all[i] = all[j], all[j] = v;
                map[i] = all[i];
            }
            free(all);
        }
        tc_proto pr = (tc_proto)(TC_PROTO_LL + mix(&seed) % 3);
        /* chunks a channel from 1 to about 3 R (LL and LL128: pieces of a
         * warp's store) */
        double chunk = pr == TC_PROTO_SIMPLE ? 524288 : pr == TC_PROTO_LL ? 256 : 480, C = (double)(1 + mix(&seed) % 4);
        double bytes = 4 * floor(C * chunk * (0.5 + (double)(mix(&seed) % (3 * p + 1))) / 4);
        tc_coll_req req = {.op = mix(&seed) % 2 ? TC_OP_REDUCE : TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING,
                           .p = p, .bytes = bytes, .elt = 4, .channels = (uint32_t)C, .proto = pr,
                           .root = (uint32_t)(mix(&seed) % p)};
        tc_sched *sc = NULL;
        if (tc_coll_round(&req, &err) != TC_OK || tc_coll_build(&req, t, &sc, &err) != TC_OK)
            fail_msg("%s p=%u: %s", spec, p, err.msg);
        sc->pipe_hops = 0; /* the lock-step sums, whose nesting this tests */
        double sizes[3] = {req.bytes, req.bytes * 0.37, req.bytes * 5}, a[2][3], b[2][3];
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK, .rank_map = map};
        for (int flat = 0; flat < 2; flat++) {
            double(*out)[3] = flat ? b : a;
            if (flat)
                for (uint32_t i = 0; i < sc->nphases; i++)
                    sc->phases[i].nest = 0;
            if (tc_eval_formula_sweep(t, sc, &o, sizes, 3, out[0], &err) != TC_OK ||
                tc_eval_steps_sweep(t, sc, &o, sizes, 3, out[1], &err) != TC_OK)
                fail_msg("%s p=%u: %s", spec, p, err.msg);
            if (!flat) {
                bool any = false, win = false;
                for (uint32_t i = 0; i < sc->nphases; i++) {
                    any |= sc->phases[i].nest != 0;
                    win |= i > 0 && sc->phases[i].nest == 0;
                }
                nested += any, windows += win;
            }
        }
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < 3; k++)
                if (a[m][k] != b[m][k])
                    fail_msg("%s p=%u %s %s bytes=%.0f: %s bisection %.17g s, phase by phase %.17g s", spec, p,
                             tc_op_name(req.op), tc_proto_name(pr), sizes[k], m ? "steps" : "formula", a[m][k],
                             b[m][k]);
        tc_sched_free(sc);
        free(map);
        tc_topo_free(t);
        cases++;
    }
    print_message("%d cases, %d with nested phases, %d with a sliding window\n", cases, nested, windows);
    assert_true(nested > cases / 2 && windows > cases / 8);

    /* failures that cut pairs off (a Clos, a torus under detour): the same
     * status, and the refusal names the pair the phase-by-phase sum meets
     * first (tc_steps_sum_phases looks for it phase by phase on a refusal) */
    int refused = 0;
    for (int it = 0; it < 120; it++) {
        tc_topo *t = topo(mix(&seed) % 2 ? "clos:down=8x4,up=1x2" : "torus:dims=4x4x2");
        tc_err err = {{0}};
        for (int k = 0; k < 4; k++)
            tc_topo_fail_link(t, (uint32_t)(mix(&seed) % t->n_links), true, &err);
        uint32_t p = 8 + (uint32_t)(mix(&seed) % (t->n_endpoints - 7));
        tc_coll_req req = {.op = mix(&seed) % 2 ? TC_OP_REDUCE : TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING,
                           .p = p, .bytes = 4.0 * 524288 * (1 + mix(&seed) % (2 * p)), .elt = 4,
                           .channels = 1 + (uint32_t)(mix(&seed) % 4), .root = (uint32_t)(mix(&seed) % p)};
        tc_sched *sc = NULL;
        if (tc_coll_round(&req, &err) != TC_OK || tc_coll_build(&req, t, &sc, &err) != TC_OK)
            fail_msg("p=%u: %s", p, err.msg);
        tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = t->kind == TC_TOPO_TORUS ? TC_ROUTE_DETOUR : TC_ROUTE_ECMP};
        double a, b, c;
        tc_err ea = {{0}}, eb = {{0}}, ec = {{0}};
        /* the pipeline refuses the pair the phases meet first too */
        tc_status sc_ = tc_eval_steps_sweep(t, sc, &o, &req.bytes, 1, &c, &ec);
        sc->pipe_hops = 0;
        tc_status sa = tc_eval_steps_sweep(t, sc, &o, &req.bytes, 1, &a, &ea);
        for (uint32_t i = 0; i < sc->nphases; i++)
            sc->phases[i].nest = 0;
        tc_status sb = tc_eval_steps_sweep(t, sc, &o, &req.bytes, 1, &b, &eb);
        assert_int_equal(sa, sb);
        assert_int_equal(sa, sc_);
        if (sa != TC_OK) {
            refused++;
            if (strcmp(ea.msg, eb.msg) != 0 || strcmp(ea.msg, ec.msg) != 0)
                fail_msg("bisection: %s; phase by phase: %s; pipeline: %s", ea.msg, eb.msg, ec.msg);
        } else
            assert_true(a == b);
        tc_sched_free(sc);
        tc_topo_free(t);
    }
    print_message("%d of 120 cut off\n", refused);
    assert_true(refused > 10);

    /* a wrong claim is refused: a window's phase is not nested, a fill's
     * phase does not shrink */
    tc_topo *t = topo("clos:down=16x4,up=1x4");
    tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL_RING, .p = 32, .bytes = 4 * 524288.0,
                       .channels = 1};
    tc_sched *sc = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_coll_build(&req, t, &sc, &err), TC_OK);
    assert_int_equal(tc_sched_check(sc, &err), TC_OK);
    uint32_t win = 0, fill = 0;
    for (uint32_t i = 1; i < sc->nphases; i++) {
        if (!sc->phases[i].nest && !win)
            win = i;
        if (sc->phases[i].nest > 0 && !fill)
            fill = i;
    }
    assert_true(win > 0 && fill > 0);
    sc->phases[win].nest = 1;
    assert_int_not_equal(tc_sched_check(sc, &err), TC_OK);
    assert_non_null(strstr(err.msg, "superset"));
    sc->phases[win].nest = 0;
    sc->phases[fill].nest = -1;
    assert_int_not_equal(tc_sched_check(sc, &err), TC_OK);
    assert_non_null(strstr(err.msg, "subset"));
    tc_sched_free(sc);
    tc_topo_free(t);
}

/* With an even number of nodes every hop between nodes joins GPUs of the
 * same index: on a rail-optimized Clos it stays on its rail's leaf; with
 * an odd number exactly one hop per channel (back to node 0) changes rail.
 * Every channel's ring visits every rank once. */
static void hops_between_nodes_stay_on_their_rail(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=9x8,up=1x9,node=8,rail=8");
    for (uint32_t nodes = 2; nodes <= 9; nodes++) {
        uint32_t p = nodes * 8;
        tc_sched *s = build(t, TC_OP_ALLREDUCE, p, 64.0 * 1024 * 1024, 4, 16, TC_PROTO_SIMPLE);
        assert_int_equal(s->channels, 16);
        tc_xfers x;
        tc_xfers_init(&x, false);
        assert_int_equal(tc_sched_emit(s, 0, &x), TC_OK);
        assert_int_equal(x.n, 16 * p);
        uint32_t off_rail = 0, rails_used = 0;
        uint8_t used[8] = {0};
        for (size_t i = 0; i < x.n; i++) {
            uint32_t a = x.v[i].src, b = x.v[i].dst;
            if (a / 8 == b / 8)
                continue;
            if (a % 8 != b % 8)
                off_rail++;
            else if (!used[a % 8]++)
                rails_used++;
        }
        assert_int_equal(off_rail, nodes % 2 ? 16 : 0);
        assert_int_equal(rails_used, 8); /* every rail carries traffic */
        tc_xfers_free(&x);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

/* The costs of each protocol, from NCCL v2.21.5-1's tables by hand: base
 * latency (tuning.cc:56-59), per step NVLink and network latencies
 * (:67-77), the network overhead on multi-node rings (1 us, x3 for
 * Simple), LL's whole-collective cap over the channels (llMaxBws, :86-90),
 * LL128's per search channel cap (:92-96), the wire factors. */
static void protocol_costs_are_nccls(void **state)
{
    (void)state;
    tc_topo *one = topo("clos:down=8,up=1,node=8,arch=hopper");
    tc_topo *two = topo("clos:down=2x8,up=1x2,node=8,rail=8,arch=ampere");
    tc_sched *s = build(one, TC_OP_ALLREDUCE, 8, 1 << 30, 4, 16, TC_PROTO_LL);
    assert_true(fabs(s->base_s - 6.6e-6) < 1e-12);
    assert_true(fabs(s->lat_intra_s - 0.6e-6) < 1e-12);
    assert_true(fabs(s->rate_cap_Bps - 141.0e9 / 16) < 1);
    assert_true(s->wire == 2.0);
    tc_sched_free(s);
    s = build(one, TC_OP_ALLREDUCE, 8, 1 << 30, 4, 16, TC_PROTO_LL128);
    assert_true(fabs(s->base_s - 14.0e-6) < 1e-12);
    assert_true(fabs(s->lat_intra_s - 1.9e-6) < 1e-12);
    assert_true(fabs(s->rate_cap_Bps - 36.7e9 / 2) < 1);
    assert_true(fabs(s->wire - 128.0 / 120.0) < 1e-15);
    tc_sched_free(s);
    s = build(two, TC_OP_ALLREDUCE, 16, 1 << 30, 4, 16, TC_PROTO_SIMPLE);
    assert_true(fabs(s->base_s - 8.4e-6) < 1e-12);
    assert_true(fabs(s->lat_intra_s - 3.4e-6) < 1e-12); /* max(3.4 NVLink, 3 x 1 us overhead) */
    assert_true(fabs(s->lat_inter_s - 14.0e-6) < 1e-12);
    assert_true(s->rate_cap_Bps == 0 && s->wire == 1.0);
    assert_int_equal(s->credit_steps, 2);
    tc_sched_free(s);
    s = build(two, TC_OP_ALLREDUCE, 16, 1 << 30, 4, 16, TC_PROTO_LL);
    assert_true(fabs(s->lat_intra_s - 1.0e-6) < 1e-12); /* max(0.6, 1 us overhead) */
    assert_true(fabs(s->lat_inter_s - 2.7e-6) < 1e-12);
    assert_true(fabs(s->rate_cap_Bps - 39.0e9 / 16) < 1); /* multi-node row 0, 2 nodes */
    tc_sched_free(s);
    /* small messages run on fewer channels: 8 B on one */
    s = build(one, TC_OP_ALLREDUCE, 8, 8, 4, 16, TC_PROTO_LL);
    assert_int_equal(s->channels, 1);
    tc_sched_free(s);
    tc_topo_free(one);
    tc_topo_free(two);
}

/* algo on every endpoint of t, timed in mode. */
static double eval_algo(const tc_topo *t, tc_algo algo, tc_op op, double bytes, tc_proto proto, uint32_t channels,
                        tc_mode mode, bool no_skip, tc_routing routing)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = t->n_endpoints, .bytes = bytes, .elt = 4,
                       .channels = channels, .proto = proto};
    tc_flow_opts fo = {0};
    fo.no_skip = no_skip;
    tc_eval_opts o = {.mode = mode, .routing = routing, .flow = &fo};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
        fail_msg("evaluate: %s", err.msg);
    return r.time_s;
}

static double eval_time(const tc_topo *t, tc_op op, double bytes, tc_proto proto, uint32_t channels, tc_mode mode,
                        bool no_skip, tc_routing routing)
{
    return eval_algo(t, TC_ALGO_NCCL_RING, op, bytes, proto, channels, mode, no_skip, routing);
}

/* Credits on slow paths (docs/MODEL.md, "Credits on slow paths"): with
 * 200 us cables a network sender with Simple waits for its credits in
 * flow, which formula (NCCL's latency model) does not count: 8 B take
 * 1.697 ms in formula, 3.213 ms in flow; with 2 us cables they agree; LL
 * agrees on both. */
static void credits_bind_in_flow_on_slow_paths(void **state)
{
    (void)state;
    tc_topo *slow = topo("clos:down=2x8,up=1x2,lat=200us,node=8,node_bw=370.8GB/s,node_reduce=1,rail=8,arch=hopper");
    tc_topo *fast = topo("clos:down=2x8,up=1x2,lat=2us,node=8,node_bw=370.8GB/s,node_reduce=1,rail=8,arch=hopper");
    double fs = eval_time(slow, TC_OP_ALLREDUCE, 8, TC_PROTO_SIMPLE, 2, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    double ws = eval_time(slow, TC_OP_ALLREDUCE, 8, TC_PROTO_SIMPLE, 2, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
    double ff = eval_time(fast, TC_OP_ALLREDUCE, 8, TC_PROTO_SIMPLE, 2, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    double wf = eval_time(fast, TC_OP_ALLREDUCE, 8, TC_PROTO_SIMPLE, 2, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
    double fl = eval_time(slow, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 2, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    double wl = eval_time(slow, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 2, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
    if (fabs(fs - 1.697e-3) > 1e-6 || fabs(ws - 3.213e-3) > 1e-6 || fabs(wf / ff - 1) > 0.01 || fabs(wl / fl - 1) > 0.01)
        fail_msg("Simple, 200 us cables: formula %.4f ms, flow %.4f ms; 2 us: %.2f / %.2f us; LL 200 us: %.4f / %.4f ms",
                 fs * 1e3, ws * 1e3, ff * 1e6, wf * 1e6, fl * 1e3, wl * 1e3);
    tc_topo_free(slow);
    tc_topo_free(fast);
}

/* nic_path=: NCCL turns LL128 off across nodes where the graph's GPU-NIC
 * path is beyond PXB, or beyond PXN from Hopper (src/graph/tuning.cc:308 at
 * v2.21.5-1); on one node NCCL removes the NICs and the path does not
 * matter; an explicit protocol list (NCCL_PROTO) bypasses the rule. Each
 * size from 8 B to 8 GiB, Ring and Tree allowed. */
static bool picks_ll128_somewhere(const char *spec, uint32_t p, uint8_t proto_mask)
{
    tc_topo *t = topo(spec);
    bool any = false;
    for (double b = 8; b <= 8.0 * (1ull << 30); b *= 2) {
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = p, .bytes = b, .algo_mask = 3,
                         .proto_mask = proto_mask};
        any = any || tc_nccl_choose(&q, t, NULL, NULL) == TC_PROTO_LL128;
    }
    tc_topo_free(t);
    return any;
}

static void nic_path_turns_ll128_off_across_nodes(void **state)
{
    (void)state;
    const char *paths[5] = {"pix", "pxb", "pxn", "phb", "sys"};
    char spec[160];
    for (int i = 0; i < 5; i++) {
        snprintf(spec, sizeof spec, "clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper,nic_path=%s", paths[i]);
        if (picks_ll128_somewhere(spec, 16, 0) != (i <= 2))
            fail_msg("Hopper, 2 nodes, nic_path=%s: LL128 %s", paths[i], i <= 2 ? "never chosen" : "chosen");
        snprintf(spec, sizeof spec, "clos:down=2x8,up=1x2,node=8,rail=8,arch=ampere,nic_path=%s", paths[i]);
        if (picks_ll128_somewhere(spec, 16, 0) != (i <= 1))
            fail_msg("Ampere, 2 nodes, nic_path=%s: LL128 %s", paths[i], i <= 1 ? "never chosen" : "chosen");
        /* one node: the same choice at every size as with the default path */
        snprintf(spec, sizeof spec, "clos:down=8,up=1,node=8,arch=ampere,nic_path=%s", paths[i]);
        tc_topo *one = topo(spec), *dflt = topo("clos:down=8,up=1,node=8,arch=ampere");
        for (double b = 8; b <= 8.0 * (1ull << 30); b *= 2) {
            tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = b};
            assert_int_equal(tc_nccl_choose(&q, one, NULL, NULL), tc_nccl_choose(&q, dflt, NULL, NULL));
        }
        tc_topo_free(one);
        tc_topo_free(dflt);
    }
    /* NCCL_PROTO=LL128 is honoured whatever the path */
    assert_true(picks_ll128_somewhere("clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper,nic_path=sys", 16,
                                      1u << TC_PROTO_LL128));
    /* the spec: pxb is the default and not written; others are */
    tc_topo *t = topo("clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper,nic_path=pxb");
    assert_null(strstr(t->spec, "nic_path"));
    tc_topo_free(t);
    t = topo("clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper,nic_path=pxn");
    assert_non_null(strstr(t->spec, ",nic_path=pxn"));
    tc_topo_free(t);
    t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=2x8,up=1x2,node=8,nic_path=pcie", &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "nic_path='pcie': accepted are pix, pxb, pxn, phb, sys"));
}

/* net_lat= and net_eff= (docs/MODEL.md, "Calibrating a transport"): the
 * ring's network steps take net_lat's time for their protocol, in place of
 * the transport's table (EFA's too), in all three modes; NCCL's choice
 * does not see it; the fabric carries net_eff of its line rate, and the
 * spec prints the line rate and the keys back. By hand, as above: 2 nodes
 * of 8 H100, 8 B, ring LL on one channel, net_lat=10us: 6.6 + 26 + 4 x 10
 * = 72.6 us. */
static void net_lat_and_net_eff_calibrate_the_transport(void **state)
{
    (void)state;
    tc_topo *ib = topo("clos:down=2x8,up=1x2,bw=400Gbps,node=8,rail=8,arch=hopper");
    tc_topo *cal = topo("clos:down=2x8,up=1x2,bw=400Gbps,node=8,rail=8,arch=hopper,net_lat=10us/12us/30us");
    tc_topo *efa = topo("clos:down=2x8,up=1x2,bw=400Gbps,node=8,rail=8,arch=hopper,transport=efa,net_lat=10us");
    assert_non_null(strstr(cal->spec, ",net_lat=10us/12us/30us"));
    assert_non_null(strstr(efa->spec, ",net_lat=10us/10us/10us"));
    const tc_proto pr[3] = {TC_PROTO_LL, TC_PROTO_LL128, TC_PROTO_SIMPLE};
    const double want[3] = {10e-6, 12e-6, 30e-6};
    for (int i = 0; i < 3; i++) {
        tc_sched *a = build(cal, TC_OP_ALLREDUCE, 16, 1 << 20, 4, 4, pr[i]);
        tc_sched *b = build(efa, TC_OP_ALLREDUCE, 16, 1 << 20, 4, 4, pr[i]);
        assert_true(fabs(a->lat_inter_s - want[i]) < 1e-12);
        assert_true(fabs(b->lat_inter_s - 10e-6) < 1e-12); /* net_lat wins over EFA's 20 (23) us */
        assert_true(fabs(tc_nccl_ring_net_step_s(cal, pr[i]) - want[i]) < 1e-12);
        tc_sched_free(a);
        tc_sched_free(b);
    }
    const tc_mode modes[3] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (int m = 0; m < 3; m++) {
        double ti = eval_time(ib, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, modes[m], false, TC_ROUTE_DMODK);
        double tc = eval_time(cal, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, modes[m], false, TC_ROUTE_DMODK);
        if (fabs(tc - 72.6e-6) > 1e-8 || fabs(tc - ti - 4 * 7.3e-6) > 1e-12)
            fail_msg("mode %d: %.4f us with net_lat=10us (72.6 by hand), %.4f us with InfiniBand's table", m,
                     tc * 1e6, ti * 1e6);
    }
    /* NCCL's choice ranks with its own table: the same pick and figure */
    tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 8};
    double t_ib = 0, t_cal = 0;
    tc_algo a_ib, a_cal;
    assert_int_equal(tc_nccl_choose(&q, ib, &a_ib, &t_ib), tc_nccl_choose(&q, cal, &a_cal, &t_cal));
    assert_true(a_ib == a_cal && t_ib == t_cal);
    /* a broadcast's chain too (its step alone, no plugin latency): LL at
     * 1 KiB whatever net_lat= says of LL */
    tc_topo *slow_ll = topo("clos:down=2x8,up=1x2,bw=400Gbps,node=8,rail=8,arch=hopper,net_lat=500us/2.7us/2.7us");
    tc_coll_req qb = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 1024};
    assert_int_equal(tc_nccl_choose(&qb, ib, &a_ib, &t_ib), TC_PROTO_LL);
    assert_int_equal(tc_nccl_choose(&qb, slow_ll, &a_cal, &t_cal), TC_PROTO_LL);
    assert_true(a_ib == a_cal && t_ib == t_cal);
    tc_topo_free(slow_ll);
    /* net_eff=0.5: the fabric at half its line rate; 8 GiB on the ring
     * with Simple is the NICs' transfer (50 GB/s, NVLink 370.8), so it
     * takes twice as long, less the latencies' share */
    tc_topo *half = topo("clos:down=2x8,up=1x2,bw=400Gbps,node=8,rail=8,arch=hopper,net_eff=0.5");
    assert_non_null(strstr(half->spec, "bw=400Gbps"));
    assert_non_null(strstr(half->spec, ",net_eff=0.5"));
    assert_true(fabs(half->level_bw[1] - 0.5 * ib->level_bw[1]) < 1e-3);
    for (int m = 0; m < 2; m++) {
        double full = eval_time(ib, TC_OP_ALLREDUCE, 8.0 * (1 << 30), TC_PROTO_SIMPLE, 0, modes[m], false, TC_ROUTE_DMODK);
        double slow = eval_time(half, TC_OP_ALLREDUCE, 8.0 * (1 << 30), TC_PROTO_SIMPLE, 0, modes[m], false,
                                TC_ROUTE_DMODK);
        if (!(slow / full > 1.95 && slow / full <= 2.0))
            fail_msg("mode %d: 8 GiB at net_eff=0.5 takes %.4f times as long as at 1 (2 less the latencies)", m,
                     slow / full);
    }
    /* NCCL's choice reads the NICs' line rate, as NCCL's search does:
     * net_eff= never changes it, and never makes a prediction faster
     * (it took LL128 for an 8 MiB broadcast at net_eff=0.5, 92.8 us
     * against Simple's 233.5 at 1) */
    static const tc_op cops[] = {TC_OP_ALLREDUCE, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER, TC_OP_BROADCAST, TC_OP_REDUCE};
    for (size_t oi = 0; oi < sizeof cops / sizeof *cops; oi++)
        for (double bytes = 8; bytes <= 8.0 * (1 << 30); bytes *= 8) {
            tc_coll_req c = {.op = cops[oi], .algo = TC_ALGO_NCCL, .p = 16, .bytes = bytes, .elt = 4};
            tc_algo a1, a2;
            double t1 = 0, t2 = 0;
            tc_proto p1 = tc_nccl_choose(&c, ib, &a1, &t1), p2 = tc_nccl_choose(&c, half, &a2, &t2);
            if (p1 != p2 || a1 != a2 || t1 != t2)
                fail_msg("op %d, %.0f B: NCCL's choice moved with net_eff=0.5 (%d/%d, %g against %g s)", cops[oi],
                         bytes, (int)a1, (int)a2, t1, t2);
        }
    double tb_full = eval_algo(ib, TC_ALGO_NCCL, TC_OP_BROADCAST, 8 << 20, TC_PROTO_NONE, 0, TC_MODE_FORMULA, false,
                               TC_ROUTE_DMODK);
    double tb_half = eval_algo(half, TC_ALGO_NCCL, TC_OP_BROADCAST, 8 << 20, TC_PROTO_NONE, 0, TC_MODE_FORMULA, false,
                               TC_ROUTE_DMODK);
    if (!(tb_half > tb_full))
        fail_msg("8 MiB broadcast: %.1f us at net_eff=0.5, %.1f us at 1", tb_half * 1e6, tb_full * 1e6);
    /* the spec read back builds the same network */
    tc_topo *back = topo(half->spec);
    assert_true(back->level_bw[1] == half->level_bw[1] && back->level_bw[2] == half->level_bw[2]);
    assert_string_equal(back->spec, half->spec);
    tc_topo *back2 = topo(cal->spec);
    assert_true(back2->net_lat_given && back2->net_lat[2] == cal->net_lat[2]);
    tc_topo_free(back);
    tc_topo_free(back2);
    tc_topo_free(half);
    /* bad values, and a torus (no NICs to calibrate) */
    static const struct {
        const char *spec, *says;
    } bad[] = {{"clos:down=2x8,up=1x2,node=8,net_eff=0", "expected a fraction above 0 and at most 1"},
               {"clos:down=2x8,up=1x2,node=8,net_eff=1.5", "expected a fraction above 0 and at most 1"},
               {"clos:down=2x8,up=1x2,node=8,net_eff=x", "'net_eff': 'x'"},
               /* what the links reach is a rate from 1bps, as bw= is */
               {"clos:down=2x8,up=1x2,node=8,net_eff=1e-300", "leaves level 1's links below 1bps"},
               {"clos:down=2x8,up=1x2,node=8,bw=1bps,net_eff=0.5", "a share of at least 1 there"},
               {"clos:down=2x8,up=1x2,node=8,net_lat=1us/2us", "expected one time or three"},
               {"clos:down=2x8,up=1x2,node=8,net_lat=1us/2us/3us/4us", "expected one time or three"},
               {"clos:down=2x8,up=1x2,node=8,net_lat=fast", "'net_lat': 'fast'"},
               /* a time too long to read whole is refused, not cut to what parses */
               {"clos:down=2x8,up=1x2,node=8,net_lat=0.0000000000000000000000000000000000000000000000000000000000000"
                "000000000000000000000000000000000000000000000000000000000000001usjunk",
                "characters, at most 127"},
               {"torus:dims=4x4,net_lat=1us", "net_lat"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tc_topo *t = NULL;
        tc_err err = {{0}};
        assert_int_equal(tc_topo_build(bad[i].spec, &t, &err), TC_EINVAL);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("%s: '%s' does not say '%s'", bad[i].spec, err.msg, bad[i].says);
    }
    tc_topo_free(ib);
    tc_topo_free(cal);
    tc_topo_free(efa);
}

/* transport=efa: every network step costs the aws-ofi-nccl tuner's 20 us
 * (23 us with Simple) in place of NCCL's hwLat[NET]; NVLink steps keep
 * NCCL's. By hand, 2 nodes of 8 H100, 8 B, ring LL on one channel: the
 * base 6.6 us, 26 hops inside a node at the network overhead of 1 us, and
 * 4 hops between the nodes (each half of the all-reduce crosses both node
 * boundaries): 6.6 + 26 + 4 x 2.7 = 43.4 us on InfiniBand, 6.6 + 26 +
 * 4 x 20 = 112.6 us on EFA (69.2 us more), in all three modes. One node has no network
 * step: the same on both. */
static void efa_network_steps_cost_the_plugins_latency(void **state)
{
    (void)state;
    tc_topo *ib = topo("clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper");
    tc_topo *efa = topo("clos:down=2x8,up=1x2,node=8,rail=8,arch=hopper,transport=efa");
    assert_non_null(strstr(efa->spec, ",transport=efa"));
    assert_null(strstr(ib->spec, "transport"));
    const tc_proto pr[3] = {TC_PROTO_LL, TC_PROTO_LL128, TC_PROTO_SIMPLE};
    const double want[3] = {20e-6, 20e-6, 23e-6};
    for (int i = 0; i < 3; i++) {
        tc_sched *a = build(ib, TC_OP_ALLREDUCE, 16, 1 << 20, 4, 4, pr[i]);
        tc_sched *b = build(efa, TC_OP_ALLREDUCE, 16, 1 << 20, 4, 4, pr[i]);
        assert_true(fabs(b->lat_inter_s - want[i]) < 1e-12);
        assert_true(a->lat_inter_s < b->lat_inter_s);
        assert_true(a->lat_intra_s == b->lat_intra_s && a->base_s == b->base_s);
        tc_sched_free(a);
        tc_sched_free(b);
    }
    const tc_mode modes[3] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    for (int m = 0; m < 3; m++) {
        double ti = eval_time(ib, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, modes[m], false, TC_ROUTE_DMODK);
        double te = eval_time(efa, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, modes[m], false, TC_ROUTE_DMODK);
        /* (plus 5 ns of the 8 bytes' transfers, the same on both) */
        if (fabs(ti - 43.4e-6) > 1e-8 || fabs(te - ti - 4 * 17.3e-6) > 1e-12)
            fail_msg("mode %d: %.4f us on InfiniBand (43.4 by hand), %.4f us on EFA (112.6)", m, ti * 1e6, te * 1e6);
    }
    /* NCCL's model, choosing, sees NCCL's own table plus the latency the
     * plugin reports, 75 us a network step, twice with Simple: at 8 B it
     * picks the tree with LL on both, whose latency has 2 log2(2) = 2
     * network steps: 150 us more on EFA. Forced to the ring with LL, its
     * 4 network steps: 6.6 + 26 x 1 + 4 (2.7 + 75) = 343.4 us; with
     * Simple, 8.4 + 26 x 3.4 + 4 (14 + 150) = 752.8 us (the 1.4 of
     * tuning.cc:437-440 needs 64 bytes per channel and rank). The
     * evaluators time what it picks with EFA's 20 us steps (above). */
    tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 8};
    double t_ib = 0, t_efa = 0;
    tc_algo a_ib, a_efa;
    assert_int_equal(tc_nccl_choose(&q, ib, &a_ib, &t_ib), TC_PROTO_LL);
    assert_int_equal(tc_nccl_choose(&q, efa, &a_efa, &t_efa), TC_PROTO_LL);
    assert_int_equal(a_ib, TC_ALGO_NCCL_TREE);
    assert_int_equal(a_efa, TC_ALGO_NCCL_TREE);
    assert_true(fabs(t_efa - t_ib - 150e-6) < 1e-12);
    q.algo_mask = 1;
    q.proto_mask = 1u << TC_PROTO_LL;
    assert_int_equal(tc_nccl_choose(&q, efa, &a_efa, &t_efa), TC_PROTO_LL);
    if (fabs(t_efa * 1e6 - 343.4) > 1e-3)
        fail_msg("ring LL on EFA as NCCL's model sees it: %.4f us, 343.4 by hand", t_efa * 1e6);
    q.proto_mask = 1u << TC_PROTO_SIMPLE;
    assert_int_equal(tc_nccl_choose(&q, efa, &a_efa, &t_efa), TC_PROTO_SIMPLE);
    if (fabs(t_efa * 1e6 - 752.8) > 1e-3)
        fail_msg("ring Simple on EFA as NCCL's model sees it: %.4f us, 752.8 by hand", t_efa * 1e6);
    /* and NVLSTree's and PAT's network terms: NVLSTree on 4 nodes pays
     * 2 log2(4) network steps, 14 us each in NCCL's table, 14 + 150 us in
     * its choice on EFA; PAT's latency log2(p) interLat / 3.5, timed with
     * EFA's 23 us, chosen with 14 + 150; the all-to-all's Simple hop
     * 14 -> 23 us */
    tc_topo *ib4 = topo("clos:down=4x8,up=1x4,node=8,node_reduce=1,rail=8,arch=hopper");
    tc_topo *efa4 = topo("clos:down=4x8,up=1x4,node=8,node_reduce=1,rail=8,arch=hopper,transport=efa");
    tc_coll_req nv = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS_TREE, .p = 32, .bytes = 1 << 20, .elt = 4};
    assert_true(fabs(tc_nccl_nvls_time_us(&nv, efa4, true) - tc_nccl_nvls_time_us(&nv, ib4, true) - 4 * 150) < 1e-9);
    /* the schedule itself, as the evaluators time it: EFA's 23 us a step */
    tc_sched *s_ib = NULL, *s_efa = NULL;
    tc_err e2 = {{0}};
    assert_int_equal(tc_coll_build(&nv, ib4, &s_ib, &e2), TC_OK);
    assert_int_equal(tc_coll_build(&nv, efa4, &s_efa, &e2), TC_OK);
    if (fabs(s_efa->base_s - s_ib->base_s - 4 * 9e-6) > 1e-12)
        fail_msg("NVLSTree's latency on EFA %.4f us, on InfiniBand %.4f us: 36 us apart by hand", s_efa->base_s * 1e6,
                 s_ib->base_s * 1e6);
    tc_sched_free(s_ib);
    tc_sched_free(s_efa);
    assert_true(fabs(tc_nccl_pat_latency_us(16, efa4, false) - tc_nccl_pat_latency_us(16, ib4, false) - 4 * 9 / 3.5) <
                1e-9);
    assert_true(fabs(tc_nccl_pat_latency_us(16, efa4, true) - tc_nccl_pat_latency_us(16, ib4, true) - 4 * 150 / 3.5) <
                1e-9);
    tc_coll_req aa = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL_A2A, .p = 32, .bytes = 1 << 26, .elt = 4,
                      .proto = TC_PROTO_SIMPLE};
    assert_true(fabs(tc_nccl_a2a_time_us(&aa, efa4, NULL) - tc_nccl_a2a_time_us(&aa, ib4, NULL) - 9) < 1e-9);
    tc_topo_free(ib4);
    tc_topo_free(efa4);
    tc_topo_free(ib);
    tc_topo_free(efa);
    tc_topo *one = topo("clos:down=8,up=1,node=8,arch=hopper");
    tc_topo *one_efa = topo("clos:down=8,up=1,node=8,arch=hopper,transport=efa");
    double a = eval_time(one, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    double b = eval_time(one_efa, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 1, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    assert_true(a == b);
    tc_topo_free(one);
    tc_topo_free(one_efa);
    /* SHARP is InfiniBand's: refused with EFA */
    tc_topo *t = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_topo_build("clos:down=2x8,up=1x2,node=8,sharp=1,transport=efa", &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "EFA has none"));
    assert_int_equal(tc_topo_build("clos:down=2x8,up=1x2,node=8,transport=roce", &t, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "accepted are ib, efa"));
    /* efa-sendrecv (p4d, p4de): the plugin sets NCCL_PROTO=simple, so
     * NCCL chooses Simple at every size; steps cost EFA's; an explicit
     * protocol list still wins, as NCCL_PROTO set by the user does */
    tc_topo *sr = topo("clos:down=2x4,up=1x2,node=8,nics=4,rail=4,bw=100Gbps,arch=ampere,transport=efa-sendrecv");
    assert_non_null(strstr(sr->spec, ",transport=efa-sendrecv"));
    for (double b = 8; b <= 8e9; b *= 16) {
        tc_coll_req c = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 16, .bytes = b};
        assert_int_equal(tc_nccl_choose(&c, sr, NULL, NULL), TC_PROTO_SIMPLE);
    }
    tc_coll_req c = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 8, .proto_mask = 1u << TC_PROTO_LL};
    assert_int_equal(tc_nccl_choose(&c, sr, NULL, NULL), TC_PROTO_LL);
    tc_sched *s = build(sr, TC_OP_ALLREDUCE, 16, 1 << 20, 4, 4, TC_PROTO_SIMPLE);
    assert_true(fabs(s->lat_inter_s - 23e-6) < 1e-12);
    tc_sched_free(s);
    tc_topo_free(sr);
}

/* Where the rings carry little data the time is the rings' latency, and
 * formula, steps and flow give the same (flow follows each channel's ring
 * on its own, the others take its critical path); on one node at any
 * size the three agree; flow with repetition skipping equals flow without
 * (NCCL's later loops differ from the first, the channels are lanes). */
static void evaluators_agree_and_skipping_is_exact(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=8,up=1,node=8,node_bw=370.8GB/s,arch=hopper",
                                  "clos:down=2x8,up=1x2,node=8,rail=8,node_bw=370.8GB/s,arch=hopper",
                                  "clos:down=3x8,up=1x3,node=8,rail=8,arch=ampere", "clos:down=4x4,up=1x4,node=4,rail=2"};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = topo(specs[i]);
        for (size_t o = 0; o < 3; o++)
            for (int pr = TC_PROTO_LL; pr <= TC_PROTO_SIMPLE; pr++) {
                double small = 64.0 * t->n_endpoints;
                double f = eval_time(t, ops[o], small, (tc_proto)pr, 0, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
                double st = eval_time(t, ops[o], small, (tc_proto)pr, 0, TC_MODE_STEPS, false, TC_ROUTE_DMODK);
                double fl = eval_time(t, ops[o], small, (tc_proto)pr, 0, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
                if (fabs(f - st) > 1e-9 * f || fabs(fl - f) > 0.01 * f)
                    fail_msg("%s %s %s small: formula %g steps %g flow %g", specs[i], tc_op_name(ops[o]),
                             tc_proto_name((tc_proto)pr), f, st, fl);
                for (int k = 0; k < 2; k++) {
                    double bytes = k ? 3.0e7 * t->n_endpoints : 1.0e5 * t->n_endpoints;
                    double a = eval_time(t, ops[o], bytes, (tc_proto)pr, 3, TC_MODE_FLOW, false, TC_ROUTE_DMODK);
                    double b = eval_time(t, ops[o], bytes, (tc_proto)pr, 3, TC_MODE_FLOW, true, TC_ROUTE_DMODK);
                    if (fabs(a - b) > 1e-9 * b)
                        fail_msg("%s %s %s %g B: skipping %.17g, not %.17g", specs[i], tc_op_name(ops[o]),
                                 tc_proto_name((tc_proto)pr), bytes, a, b);
                    if (t->n_endpoints == t->node_size) {
                        double fm = eval_time(t, ops[o], bytes, (tc_proto)pr, 3, TC_MODE_FORMULA, false,
                                              TC_ROUTE_DMODK);
                        if (fabs(fm - a) > 0.01 * fm)
                            fail_msg("%s %s %s %g B one node: formula %g flow %g", specs[i], tc_op_name(ops[o]),
                                     tc_proto_name((tc_proto)pr), bytes, fm, a);
                    }
                }
            }
        tc_topo_free(t);
    }
}

/* One channel's ring all-reduce of S bytes on p ranks, NCCL's Simple
 * protocol, on network t as it is (a degraded link included). */
static double ring_time(const tc_topo *t, uint32_t p, double S, tc_mode mode)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = p, .bytes = S, .elt = 4,
                       .channels = 1, .proto = TC_PROTO_SIMPLE};
    tc_flow_opts fo = {0};
    tc_eval_opts o = {.mode = mode, .flow = &fo};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
        fail_msg("evaluate: %s", err.msg);
    return r.time_s;
}

/* A ring with one slow link takes that link's time in flow, as in steps,
 * and a slower link never makes it faster. NCCL's credits let a rank run
 * ahead of its receiver, but its connection sends its chunks in order
 * (tc_sched.wire_in_order): a rank holding several credited chunks once
 * sent them all at once, sharing its link, so that they ended together and
 * went round the ring as one burst for good, leaving links idle between
 * bursts (16 hosts, 1 GiB: host 0's up-link at 0.9 took 56.6 ms in flow,
 * at 0.8 50.5 ms, where steps gives 45.17 and 50.76 ms). Here, on 8 and 16
 * one-GPU hosts of one switch: the time falls as the factor rises, is at
 * least the slow link's drain (it carries 2 (p - 1) / p S) and within 1%
 * of steps, whose lock-step pays each loop's latencies in full. */
static void ring_with_a_slow_link_takes_its_time(void **state)
{
    (void)state;
    static const double factors[] = {0.5, 0.7, 0.8, 0.9, 0.95, 1.0};
    const double S = 1024.0 * 1024 * 1024;
    static const char *specs[] = {"clos:down=8,up=1", "clos:down=16,up=1"};
    for (size_t i = 0; i < 2; i++) {
        double prev = INFINITY;
        for (size_t k = 0; k < sizeof factors / sizeof *factors; k++) {
            tc_topo *t = topo(specs[i]);
            uint32_t p = t->n_endpoints, l = t->up_lbase[1]; /* host 0's up-link */
            tc_err err = {{0}};
            if (factors[k] < 1 && tc_topo_degrade_link(t, l, factors[k], &err) != TC_OK)
                fail_msg("degrade: %s", err.msg);
            double fl = ring_time(t, p, S, TC_MODE_FLOW), st = ring_time(t, p, S, TC_MODE_STEPS);
            double drain = 2.0 * (p - 1) / p * S / t->links[l].bw;
            if (!(fl < prev))
                fail_msg("%s, host 0's up-link at %g: %.6g s, not below %.6g s at the next worse factor", specs[i],
                         factors[k], fl, prev);
            if (fl < drain * (1 - 1e-9) || fabs(fl - st) > 0.01 * st)
                fail_msg("%s, host 0's up-link at %g: flow %.6g s, steps %.6g s, the link's drain %.6g s", specs[i],
                         factors[k], fl, st, drain);
            prev = fl;
            tc_topo_free(t);
        }
    }
}

static double algo_time(const tc_topo *t, tc_algo algo, tc_op op, double bytes, tc_proto proto, uint32_t channels,
                        tc_mode mode, tc_routing routing)
{
    return eval_algo(t, algo, op, bytes, proto, channels, mode, false, routing);
}

/* On a healthy network NCCL's tree and PAT take in flow what they take in
 * steps (ECMP in both): each connection sends its chunks in order under
 * the credits (tc_sched.wire_in_order). Before, a rank's credited chunks
 * to one peer shared its link and reached the peer together, and the
 * tree's pipeline ran at half its rate: 16 one-GPU hosts, 1 GiB, two
 * channels, 86.25 ms in flow against 43.39 in steps (the double binary
 * tree's 2 S / B); PAT's all-gather of 256 MiB 15.61 ms against 8.753.
 * The tree within 2% (1 GiB all-reduce, every protocol, 1 to 4 channels);
 * PAT (256 MiB all-gather and reduce-scatter, 1 to 4 channels) within 1%
 * under D-mod-k and 10% under ECMP, where ranks running ahead by their
 * credits put chunks of different steps on colliding paths that no single
 * step has (8.4-8.7 ms against 7.96 for reduce-scatter). */
static void tree_and_pat_take_in_flow_what_they_take_in_steps(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:hosts=16,radix=8,tiers=2", "clos:down=4x4,up=1x4,node=4,rail=4",
                                  "clos:down=3x8,up=1x8,node=8,rail=8,node_bw=370.8GB/s"};
    static const tc_proto protos[] = {TC_PROTO_SIMPLE, TC_PROTO_LL128, TC_PROTO_LL};
    const double GiB = 1073741824.0;
    for (size_t i = 0; i < 3; i++) {
        tc_topo *t = topo(specs[i]);
        for (size_t k = 0; k < 3; k++)
            for (uint32_t c = 1; c <= 4; c *= 2) {
                double st = algo_time(t, TC_ALGO_NCCL_TREE, TC_OP_ALLREDUCE, GiB, protos[k], c, TC_MODE_STEPS,
                                      TC_ROUTE_DEFAULT);
                double fl = algo_time(t, TC_ALGO_NCCL_TREE, TC_OP_ALLREDUCE, GiB, protos[k], c, TC_MODE_FLOW,
                                      TC_ROUTE_DEFAULT);
                if (fabs(fl - st) > 0.02 * st)
                    fail_msg("%s: nccl-tree, %s, %u channels: flow %.6g s, steps %.6g s", specs[i],
                             tc_proto_name(protos[k]), c, fl, st);
            }
        tc_topo_free(t);
    }
    tc_topo *t = topo(specs[0]);
    static const tc_op ops[] = {TC_OP_ALLGATHER, TC_OP_REDUCESCATTER};
    static const tc_routing routes[] = {TC_ROUTE_DMODK, TC_ROUTE_ECMP};
    for (size_t k = 0; k < 2; k++)
        for (size_t ri = 0; ri < 2; ri++)
            for (uint32_t c = 1; c <= 4; c *= 2) {
                double st = algo_time(t, TC_ALGO_NCCL_PAT, ops[k], GiB / 4, TC_PROTO_NONE, c, TC_MODE_STEPS, routes[ri]);
                double fl = algo_time(t, TC_ALGO_NCCL_PAT, ops[k], GiB / 4, TC_PROTO_NONE, c, TC_MODE_FLOW, routes[ri]);
                if (fabs(fl - st) > (ri ? 0.10 : 0.01) * st)
                    fail_msg("nccl-pat, %s, %s, %u channels: flow %.6g s, steps %.6g s", tc_op_name(ops[k]),
                             ri ? "ECMP" : "D-mod-k", c, fl, st);
            }
    tc_topo_free(t);
}

/* The three evaluators agree where they should: on a healthy network
 * under D-mod-k, NCCL's ring, tree and PAT take in flow what they take in
 * steps, up to what steps' lock-step charges beyond the pipeline (flow is
 * never more than 5% above steps nor 25% below it). Random cases from a
 * fixed seed: GPU Clos with 1, 2, 4 or 8 GPUs a node, rails or not, 2 to 6
 * nodes (or hosts), all-reduce, all-gather and reduce-scatter, every
 * protocol, 1 to 4 channels or the default, sizes from 64 KiB to 256 MiB. */
static void nccl_flow_agrees_with_steps_at_random(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=6x4,up=1x4", "clos:down=6x4,up=1x4,node=2,rail=2",
                                  "clos:down=6x4,up=1x4,node=4,rail=4", "clos:down=6x8,up=1x8,node=8,rail=8",
                                  "clos:down=6x4,up=1x6,node=8,nics=4,rail=4", "clos:down=6x4,up=1x4,node=4"};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER};
    uint64_t seed = 20261206 + 1;
    int cases = 0;
    for (int it = 0; it < 30; it++) {
        const char *spec = specs[mix(&seed) % 6];
        tc_topo *t = topo(spec);
        uint32_t G = t->node_size > 1 ? t->node_size : 1, nodes = 2 + (uint32_t)(mix(&seed) % 5);
        if (nodes * G > t->n_endpoints)
            nodes = t->n_endpoints / G;
        tc_op op = ops[mix(&seed) % 3];
        tc_algo algo = op == TC_OP_ALLREDUCE && mix(&seed) % 2 ? TC_ALGO_NCCL_TREE : TC_ALGO_NCCL_RING;
        if (G == 1 && op != TC_OP_ALLREDUCE && mix(&seed) % 2)
            algo = TC_ALGO_NCCL_PAT;
        tc_proto pr = algo == TC_ALGO_NCCL_PAT ? TC_PROTO_NONE : (tc_proto)(TC_PROTO_LL + mix(&seed) % 3);
        uint32_t ch = (uint32_t)(mix(&seed) % 5);
        double bytes = 4 * floor(65536.0 * pow(2, (double)(mix(&seed) % 1300) / 100) / 4);
        tc_coll_req req = {.op = op, .algo = algo, .p = nodes * G, .bytes = bytes, .elt = 4, .channels = ch,
                           .proto = pr};
        double v[2];
        for (int m = 0; m < 2; m++) {
            tc_flow_opts fo = {0};
            tc_eval_opts o = {.mode = m ? TC_MODE_FLOW : TC_MODE_STEPS, .routing = TC_ROUTE_DMODK, .flow = &fo};
            tc_result r;
            tc_err err = {{0}};
            if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
                fail_msg("%s, %u ranks, %s %s: %s", spec, req.p, tc_algo_name(algo), tc_op_name(op), err.msg);
            v[m] = r.time_s;
        }
        if (!(v[1] <= 1.05 * v[0] && v[1] >= 0.75 * v[0]))
            fail_msg("case %d: %s, %u ranks, %s %s, %s, %u channels, %.0f B: flow %.6g s, steps %.6g s", it, spec,
                     req.p, tc_algo_name(algo), tc_op_name(op), pr ? tc_proto_name(pr) : "-", ch, bytes, v[1], v[0]);
        cases++;
        tc_topo_free(t);
    }
    assert_int_equal(cases, 30);
}

/* A small tree all-reduce under LL and LL128 costs about the same on any
 * number of channels, and NCCL's choice never takes less time for more
 * bytes. The tree's pieces are at least a warp's store (256 B of LL, 480
 * B of LL128), not 4 KiB: filling the pipeline at the capped rate made 64
 * KiB on 4 nodes of 8 GPUs take 50.4 us on one channel and 93.0 on 16, and
 * the all-reduce 96.2 us at 128 KiB against 71.5 at 256 KiB. */
static void small_tree_all_reduce_is_monotone(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x8,up=1x8,node=8,rail=8,node_bw=370.8GB/s,arch=hopper");
    static const tc_proto pr[] = {TC_PROTO_LL, TC_PROTO_LL128};
    for (size_t k = 0; k < 2; k++) {
        double lo = INFINITY, hi = 0;
        for (uint32_t c = 1; c <= 16; c *= 2) {
            double v = algo_time(t, TC_ALGO_NCCL_TREE, TC_OP_ALLREDUCE, 65536, pr[k], c, TC_MODE_FORMULA,
                                 TC_ROUTE_DMODK);
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
        if (hi > 1.25 * lo)
            fail_msg("nccl-tree, %s, 64 KiB: %.4g to %.4g us over 1 to 16 channels", tc_proto_name(pr[k]), lo * 1e6,
                     hi * 1e6);
    }
    double prev = 0;
    for (double b = 8; b <= 64.0 * 1048576; b *= 2) {
        double v = algo_time(t, TC_ALGO_NCCL, TC_OP_ALLREDUCE, b, TC_PROTO_NONE, 0, TC_MODE_FORMULA, TC_ROUTE_DMODK);
        if (v < prev * (1 - 1e-9))
            fail_msg("nccl all-reduce: %.0f B in %.6g us, less than %.0f B's %.6g us", b, v * 1e6, b / 2, prev * 1e6);
        prev = v;
    }
    tc_topo_free(t);
}

/* The tree's rate by hand from NCCL v2.21.5-1's tables (tuning.cc): 2
 * nodes of 8 H100, a 400 Gb/s NIC each (NCCL's tree graph 8 search
 * channels of 48 GB/s, the TREE pattern: a NIC a GPU; 16 channels run):
 * bus = min(0.92 x 384, 8 x 41.4) = 331.2 GB/s; LL / 3.8 up to llMaxBw
 * 39.0: 39.0; x 0.85 for the TREE pattern (:185): 33.15, at 32 KiB times
 * treeCorrectionFactor[LL][log2(512) = 9] = 0.7: 23.205 GB/s; LL128
 * min(331.2 x 120/128, 8 x 36.7) = 293.6, x 0.85, at 4 MiB times
 * [LL128][16] = 0.8: 199.648; Simple at 1 GiB (log2 24, past the table)
 * 331.2 x 0.85 = 281.52. That is the rate of the channels for large
 * messages (16, or 24 with NCCL_MIN_CTAS=24, which changes the channels
 * run, not the graph's: the same rates). NCCL runs fewer for small
 * messages, and the terms that count channels take the share of the
 * graph's run: 32 KiB on 8 channels (32768 < 16 x 512 x 8, whatever the
 * channel variables), min(8/16 x 331.2 / 3.8, 39.0) x 0.85 x 0.7 =
 * 23.205 GB/s again. */
static void tree_rate_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=2x8,up=1x8,node=8,rail=8,node_bw=370.8GB/s,arch=hopper");
    static const struct {
        tc_proto p;
        double bytes, want_GBps;
    } c[] = {{TC_PROTO_LL, 32768, 23.205}, {TC_PROTO_LL128, 4194304, 199.648}, {TC_PROTO_SIMPLE, 1073741824, 281.52}};
    for (size_t i = 0; i < 3; i++)
        for (uint32_t mc = 0; mc <= 24; mc += 24) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_TREE, .p = 16, .bytes = c[i].bytes,
                               .elt = 4, .proto = c[i].p, .min_ctas = mc};
            tc_sched *s = sched_req(t, req);
            double got = s->rate_cap_Bps * s->channels / 1e9, want = c[i].want_GBps;
            if (s->channels != (c[i].bytes == 32768 ? 8 : mc ? 24 : 16))
                fail_msg("%s at %.0f B, mincta %u: %u channels", tc_proto_name(c[i].p), c[i].bytes, mc, s->channels);
            if (fabs(got - want) > 1e-9 * want)
                fail_msg("%s at %.0f B, mincta %u: %.6g GB/s over %u channels, by hand %.6g", tc_proto_name(c[i].p),
                         c[i].bytes, mc, got, s->channels, want);
            tc_sched_free(s);
        }
    tc_topo_free(t);
}

/* A brief disturbance slows the ring only while it lasts: on 16 hosts of
 * one switch, a direct all-to-all of 16 MiB on hosts 0-7 beside the ring
 * all-reduce of 1 GiB on all 16 (one channel) takes a few hundred us;
 * the ring then runs at its pace again, losing at most twice the
 * all-to-all's time (before, its chunks bunched into bursts that ran round
 * the ring at a third of its speed to its end: 158.3 ms against 40.69
 * alone). */
static void ring_recovers_after_a_disturbance(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=16,up=1");
    tc_err err = {{0}};
    tc_coll_req qa = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_DIRECT, .p = 8, .bytes = 16.0 * 1024 * 1024, .elt = 4};
    tc_coll_req qr = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = 16, .bytes = 1024.0 * 1024 * 1024,
                      .elt = 4, .channels = 1};
    tc_sched *a2a = NULL, *ring = NULL;
    if (tc_coll_build(&qa, t, &a2a, &err) != TC_OK || tc_coll_build(&qr, t, &ring, &err) != TC_OK)
        fail_msg("build: %s", err.msg);
    tc_flow_opts o = {0};
    tc_flow_job jobs[] = {{a2a, NULL, 0, "moe", 0}, {ring, NULL, 0, "dp", 0}};
    tc_flow_result both, alone;
    if (tc_flow_run(t, jobs, 2, &o, &both, &err) != TC_OK || tc_flow_run(t, jobs + 1, 1, &o, &alone, &err) != TC_OK)
        fail_msg("flow: %s", err.msg);
    double dist = both.jobs[0].time_s, with = both.jobs[1].time_s, solo = alone.jobs[0].time_s;
    if (!(with >= solo) || with - solo > 2 * dist)
        fail_msg("the ring takes %.6g s beside the all-to-all (%.6g s), %.6g s alone", with, dist, solo);
    tc_flow_result_free(&both);
    tc_flow_result_free(&alone);
    tc_sched_free(a2a);
    tc_sched_free(ring);
    tc_topo_free(t);
}

/* Hand-computed: 8 GPUs on one NVSwitch (370.8 GB/s each way, NCCL's
 * 18 x 20.6), ring all-reduce of 1 GiB, Simple: the NCCL latency 8.4 +
 * 14 x 3.4 us plus 2 (7/8) S / 370.8 GB/s; the bus bandwidth tends to the
 * node bandwidth. LL at 8 B: 6.6 + 14 x 0.6 = 15.0 us, NCCL's own figure
 * for this node (tuning.cc's tables), and the 16 wire bytes round the ring
 * on one channel (1/16 of 0.5 x 370.8 GB/s): a few ns. */
static void one_nvswitch_node_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=370.8GB/s,node_lat=250ns,arch=hopper");
    double S = 1073741824.0;
    double want = 8.4e-6 + 14 * 3.4e-6 + 2.0 * 7 / 8 * S / 370.8e9;
    double got = eval_time(t, TC_OP_ALLREDUCE, S, TC_PROTO_SIMPLE, 16, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    if (fabs(got - want) > 1e-6 * want)
        fail_msg("1 GiB Simple: %.9g s, by hand %.9g s", got, want);
    got = eval_time(t, TC_OP_ALLREDUCE, 8, TC_PROTO_LL, 0, TC_MODE_FORMULA, false, TC_ROUTE_DMODK);
    if (!(got >= 15.0e-6 && got < 15.0e-6 + 14 * 16 / (185.4e9 / 16)))
        fail_msg("8 B LL: %.9g s, NCCL's model 15.0 us", got);
    /* LL at 64 KiB runs 2 of NCCL's 24 channels on this node (65536 < 3 x
     * 512 x 8 x 8; its ring graph is 12 channels of 30 GB/s, 360 GB/s):
     * min(141, 2/24 x 0.5 x 360) = 15 GB/s together (tuning.cc:180 with
     * the channels run) */
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = 8, .bytes = 65536, .elt = 4,
                       .proto = TC_PROTO_LL};
    tc_sched *s = sched_req(t, req);
    if (s->channels != 2 || fabs(s->rate_cap_Bps * s->channels - 15e9) > 1e-3)
        fail_msg("LL 64 KiB: %u channels, %.6g GB/s together, by hand 2 and 15", s->channels,
                 s->rate_cap_Bps * s->channels / 1e9);
    tc_sched_free(s);
    /* the same 2 channels run whatever NCCL variable set the count before
     * the small-message cut (NCCL_MAX_NCHANNELS=4, MIN_NCHANNELS=32,
     * MIN_CTAS=32): the same rate (channels= is the graph's own count) */
    for (int v = 1; v < 4; v++) {
        tc_coll_req q = req;
        if (v == 1)
            q.max_channels = 4;
        else if (v == 2)
            q.min_channels = 32;
        else
            q.min_ctas = 32;
        s = sched_req(t, q);
        if (s->channels != 2 || fabs(s->rate_cap_Bps * s->channels - 15e9) > 1e-3)
            fail_msg("LL 64 KiB, setting %d: %u channels, %.6g GB/s together, by hand 2 and 15", v, s->channels,
                     s->rate_cap_Bps * s->channels / 1e9);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

/* The channels nccl-ring runs on spec for p ranks (a 1 GiB all-gather). */
static void expect_ring_channels(const char *spec, uint32_t p, uint32_t want)
{
    tc_topo *t = topo(spec);
    tc_coll_req req = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL_RING, .p = p, .bytes = 1 << 30, .elt = 4,
                       .proto = TC_PROTO_SIMPLE};
    tc_sched *sc = sched_req(t, req);
    if (sc->channels != want)
        fail_msg("%s, %u ranks: %u channels, NCCL's %u", spec, p, sc->channels, want);
    tc_sched_free(sc);
    tc_topo_free(t);
}

/* NCCL's ring graph on one NVSwitch node, by hand from ncclTopoCompute
 * (src/graph/search.cc at v2.21.5-1) for GPUs whose NVLink totals T GB/s:
 * - A100 (12 x 20 = 240, pre-SM90 speeds 40, 30, 20, ...): 6 channels of
 *   40 reach T (done); doubled to 12 of 20 (40 >= 25); pass 2 finds no
 *   faster speed with 12 channels (30: 8, 40: 6). NCCL runs 24, as the
 *   HGX A100 log of NVIDIA/nccl-tests#100 prints ("Channel 23/24").
 * - H100 (18 x 20.6 = 370.8, SM90 speeds 60, 50, 40, 30, 24, ...): 6 of 60
 *   (360); 7 of 50 and 9 of 40 and 12 of 30 no better; 24 / 60 < 0.49
 *   stops; 60 >= 50: doubled to 12 of 30; nothing faster holds 12. NCCL
 *   runs 24.
 * - 721.8 GB/s on SM90's lists (no GPU NCCL 2.21.5 knows has it: a B200
 *   is 18 links at its 20.6 GB/s, as an H100): 12 of 60 (720); 14 of 50,
 *   16 of 40 (the 16-channel cap) no better; doubled to min(24, 16) = 16
 *   of 60 / 2 = 30; pass 2 raises it to 16 of 40 (640), 50 and 60 hold
 *   fewer than 16.
 * - 130 (SM90): 2 of 60 (120); 50, 40 and 30 no better, 24 / 60 < 0.49
 *   stops (without that rule 11 of 11 would win); doubled to 4 of 30.
 * - 320 (SM90): 8 of 40 reach it; 40 < 50 with more than 4 channels is not
 *   doubled on SM90 (16 of 20 otherwise); NCCL runs 16.
 * - DGX-2's V100 (6 x 20 = 120): 3 of 40 reach it; 6 of 20.
 * - 24 GB/s (pre-SM90): 1 of 20, 18, 15 until 2 of 12 reach it; 12 < 25
 *   is not doubled.
 * - 247.2 and 164.8 (SM90: 12 and 8 links of 20.6): 4 of 60 doubled to 8
 *   of 30; 4 of 40 doubled to 8 of 20.
 * NCCL v2.21.5-1's own search code (its topo.cc, paths.cc and search.cc
 * compiled with NVML and CUDA stubbed, run on topology files of one node
 * of 2, 4 or 8 GPUs without NICs) gives the same for 370.8 and 240 GB/s
 * (8, 4 and 2 GPUs), 247.2, 164.8 and 120.
 * Through the schedules: the channels nccl-ring runs on one node of each
 * preset (a B200 node's 721.8 GB/s of node_bw, 18 links at NCCL 2.30's
 * 40.1, is 18 x 20.6 = 370.8 GB/s to 2.21.5's search: 24 channels), and
 * on two DGX H100 nodes NCCL's graph across nodes (8 of 48), 16. */
static void ring_graph_on_one_node_is_nccls_search(void **state)
{
    (void)state;
    struct {
        double total;
        bool sm90;
        uint32_t n;
        double bw;
    } c[] = {{240, false, 12, 20}, {370.8, true, 12, 30}, {360, true, 12, 30},
             {721.8, true, 16, 40}, {130, true, 4, 30},    {320, true, 8, 40},
             {120, false, 6, 20},   {24, false, 2, 12},  {247.2, true, 8, 30}, {164.8, true, 8, 20}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        uint32_t n = 0;
        double bw = 0;
        assert_true(tc_nccl_ring_graph_one_node(c[i].total, 8, c[i].sm90, &n, &bw));
        if (n != c[i].n || fabs(bw - c[i].bw) > 1e-12)
            fail_msg("%.1f GB/s, sm90 %d: %u channels of %g GB/s, by hand %u of %g", c[i].total, c[i].sm90, n, bw,
                     c[i].n, c[i].bw);
    }
    /* The search's time budget, as NCCL's compiled search gives it on one
     * SM90 node of 8, 16 and 72 GPUs: 256 steps for the same channels on
     * every node, G + 1 a channel. At 721 GB/s (35 links of 20.6) 12 x 60
     * doubles to 16 x 30; its second pass reaches 40 on 8 GPUs (16 x 9
     * steps), times out on 16 (16 x 17), and on 72, whose same-channel
     * search stopped at 3 channels, runs with the larger budget. */
    struct {
        double total;
        uint32_t G, n;
        double bw;
    } tb[] = {{721, 8, 16, 40}, {721, 16, 16, 30}, {721, 72, 16, 40}, {370.8, 16, 12, 30}, {370.8, 72, 12, 30}};
    for (size_t i = 0; i < sizeof tb / sizeof *tb; i++) {
        uint32_t n = 0;
        double bw = 0;
        assert_true(tc_nccl_ring_graph_one_node(tb[i].total, tb[i].G, true, &n, &bw));
        if (n != tb[i].n || fabs(bw - tb[i].bw) > 1e-12)
            fail_msg("%.1f GB/s, %u GPUs: %u channels of %g GB/s, NCCL's search %u of %g", tb[i].total, tb[i].G, n,
                     bw, tb[i].n, tb[i].bw);
    }
    /* below the lists' last speed (3 GB/s) no graph: NCCL falls back to the
     * PCIe tree, topocc to its default of twice the node size */
    uint32_t n0 = 0;
    double b0 = 0;
    assert_false(tc_nccl_ring_graph_one_node(2.9, 8, true, &n0, &b0));
    assert_true(tc_nccl_ring_graph_one_node(3, 8, true, &n0, &b0) && n0 == 1 && b0 == 3);
    struct {
        const char *spec;
        uint32_t p, want;
    } s[] = {{"clos:down=8,up=1,node=8,node_bw=240GB/s,arch=ampere", 8, 24},
             {"clos:down=8,up=1,node=8,node_bw=2GB/s,arch=hopper", 8, 16},
             {"clos:down=8,up=1,node=8,node_bw=370.8GB/s,arch=hopper", 8, 24},
             {"clos:down=8,up=1,node=8,node_bw=721.8GB/s,arch=blackwell", 8, 24},
             {"clos:down=8,up=1,node=8,node_bw=721.8GB/s,arch=blackwell", 2, 24},
             {"clos:down=8,up=1,node=8,node_bw=320GB/s,arch=hopper", 8, 16},
             {"clos:down=8,up=1,node=8,node_bw=240GB/s,arch=ampere,rail=8", 8, 24},
             {"clos:down=2x8,up=1x2,node=8,node_bw=370.8GB/s,arch=hopper,rail=8", 16, 16}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        expect_ring_channels(s[i].spec, s[i].p, s[i].want);
}

/* NCCL's ring and tree graphs across nodes (tc_nccl_ring_graph_nodes,
 * tc_nccl_tree_intra_two_nodes, tc_nccl_tree_pattern_tree) against what
 * NCCL v2.21.5-1's own search code gives: its src/graph/topo.cc, paths.cc,
 * search.cc and xml.cc compiled with NVML and CUDA stubbed out (the search
 * calls neither) and run on synthetic topology files (NCCL_TOPO_FILE
 * format) of nodes of G GPUs of SM80 (NVLink 12 x 20 GB/s, PCIe Gen4) or
 * SM90 (18 x 20.6, Gen5) on one NVSwitch, K NICs of 100, 200 or 400 Gb/s,
 * a NIC and G / K GPUs under each PCIe switch, as init.cc:1047-1060 calls
 * it (ring: 1 to 16 channels; tree: BALANCED_TREE with the ring's
 * channels). The harness is not shipped (it is NCCL's code); its results:
 * the ring's channels and speed, the tree's pattern and bwIntra (its
 * bwInter is the ring's speed in every case). Checks by hand of some:
 *  - DGX H100 (370.8 GB/s of NVLink, 8 NICs of 50 GB/s on PCIe Gen5 links
 *    of 48): at 48 a ring back to its NIC (crossNic 0, over PXN) fits 7
 *    channels in the NVLink (336); one that leaves through the next GPU's
 *    NIC (crossNic 1, tried next: search.cc:983-986) crosses the NVLink 7
 *    times, not 8, and fits 8 (384 >= 370.8, the search stops): 8 x 48,
 *    not doubled (SM90, below 50, more than 4); its tree takes the TREE
 *    pattern (a NIC a GPU), 8 x 48/48;
 *  - two H20 GPUs a node with a 50 GB/s NIC each (NVIDIA/nccl#1189's log,
 *    "maxBw 48.0 totalBw 370.8", prints the ring graph "nChannels 4, bw
 *    24.000000/24.000000" and "8 coll channels"): 2 at 48 (one a NIC),
 *    doubled to 4 x 24;
 *  - one GPU a node, 400 Gb/s: 1 x 48 doubled to 2 x 24; 100 Gb/s on SM80
 *    1 x 12, its tree 24/12, the graphs of NVIDIA/nccl#524's graph file.
 * Two shapes differ: SM80, 8 GPUs with a 200 or 400 Gb/s NIC each alone
 * under a PCIe switch, whose tree NCCL's search leaves at bwIntra 24 (its
 * time budget ends the raise) where topocc raises it to 30, as NCCL does
 * with the DGX A100's two GPUs and two NICs a switch; they are left out. */
static void ring_graph_across_nodes_is_nccls_search(void **state)
{
    (void)state;
    struct {
        int sm;
        uint32_t G, K, gbps, n;
        double bw;
        int tree_pattern;
        double tree_intra;
    } c[] = {{90, 1, 1, 100, 1, 12, 3, 24},
             {90, 1, 1, 200, 1, 24, 3, 48},
             {90, 1, 1, 400, 2, 24, 3, 48},
             {90, 2, 1, 100, 1, 12, 1, 24},
             {90, 2, 1, 200, 1, 24, 1, 48},
             {90, 2, 1, 400, 2, 24, 1, 48},
             {90, 2, 2, 100, 2, 12, 3, 24},
             {90, 2, 2, 200, 2, 24, 3, 48},
             {90, 2, 2, 400, 4, 24, 3, 48},
             {90, 4, 1, 100, 1, 12, 1, 24},
             {90, 4, 1, 200, 1, 24, 1, 48},
             {90, 4, 1, 400, 2, 24, 1, 48},
             {90, 4, 2, 100, 2, 12, 1, 24},
             {90, 4, 2, 200, 2, 24, 1, 48},
             {90, 4, 2, 400, 4, 24, 1, 48},
             {90, 4, 4, 100, 4, 12, 3, 24},
             {90, 4, 4, 200, 4, 24, 3, 48},
             {90, 4, 4, 400, 8, 24, 3, 48},
             {90, 8, 1, 100, 1, 12, 1, 24},
             {90, 8, 1, 200, 1, 24, 1, 48},
             {90, 8, 1, 400, 2, 24, 1, 48},
             {90, 8, 2, 100, 2, 12, 1, 24},
             {90, 8, 2, 200, 2, 24, 1, 48},
             {90, 8, 2, 400, 4, 24, 1, 48},
             {90, 8, 4, 100, 4, 12, 1, 24},
             {90, 8, 4, 200, 4, 24, 1, 48},
             {90, 8, 4, 400, 8, 24, 1, 48},
             {90, 8, 8, 100, 8, 12, 3, 24},
             {90, 8, 8, 200, 8, 24, 3, 48},
             {90, 8, 8, 400, 8, 48, 3, 48},
             {80, 1, 1, 100, 1, 12, 3, 24},
             {80, 1, 1, 200, 1, 24, 3, 48},
             {80, 1, 1, 400, 1, 24, 3, 48},
             {80, 2, 1, 100, 1, 12, 1, 24},
             {80, 2, 1, 200, 1, 24, 1, 48},
             {80, 2, 1, 400, 1, 24, 1, 48},
             {80, 2, 2, 100, 2, 12, 1, 24},
             {80, 2, 2, 200, 2, 24, 1, 48},
             {80, 2, 2, 400, 2, 24, 1, 48},
             {80, 4, 1, 100, 1, 12, 1, 24},
             {80, 4, 1, 200, 1, 24, 1, 48},
             {80, 4, 1, 400, 1, 24, 1, 48},
             {80, 4, 2, 100, 2, 12, 1, 24},
             {80, 4, 2, 200, 2, 24, 1, 48},
             {80, 4, 2, 400, 2, 24, 1, 48},
             {80, 4, 4, 100, 4, 12, 1, 24},
             {80, 4, 4, 200, 4, 24, 1, 48},
             {80, 4, 4, 400, 4, 24, 1, 48},
             {80, 8, 1, 100, 1, 12, 1, 24},
             {80, 8, 1, 200, 1, 24, 1, 48},
             {80, 8, 1, 400, 1, 24, 1, 48},
             {80, 8, 2, 100, 2, 12, 1, 24},
             {80, 8, 2, 200, 2, 24, 1, 48},
             {80, 8, 2, 400, 2, 24, 1, 48},
             {80, 8, 4, 100, 4, 12, 1, 24},
             {80, 8, 4, 200, 4, 24, 1, 48},
             {80, 8, 4, 400, 4, 24, 1, 48},
             {80, 8, 8, 100, 8, 12, 1, 24},
             /* nodes of 3, 6, 12 and 16 GPUs: where channels are fewer
              * than the GPUs, a GPU that ends no chain carries every
              * channel */
             {90, 3, 3, 100, 3, 12, 3, 24},
             {90, 3, 3, 400, 6, 24, 3, 48},
             /* 36 and 72 GPUs, a 400 Gb/s NIC each: a rack as one node */
             {90, 36, 36, 400, 8, 45, 3, 45},
             {90, 72, 72, 400, 8, 45, 3, 45},
             {80, 3, 3, 200, 3, 24, 1, 48},
             {90, 6, 3, 100, 3, 12, 1, 24},
             {90, 6, 3, 200, 3, 24, 1, 48},
             {90, 6, 3, 400, 6, 24, 1, 48},
             {90, 6, 6, 100, 6, 12, 3, 24},
             {90, 6, 6, 200, 6, 24, 3, 48},
             {90, 6, 6, 400, 6, 48, 3, 48},
             {90, 12, 6, 100, 6, 12, 1, 24},
             {90, 12, 6, 200, 6, 24, 1, 48},
             {90, 12, 6, 400, 6, 48, 1, 48},
             {90, 12, 12, 100, 12, 12, 3, 24},
             {90, 12, 12, 200, 12, 24, 3, 30},
             {90, 12, 12, 400, 16, 24, 3, 24},
             {90, 16, 8, 100, 8, 12, 1, 24},
             {90, 16, 8, 200, 8, 24, 1, 45},
             {90, 16, 16, 100, 16, 12, 3, 24},
             {90, 16, 16, 200, 16, 24, 3, 24},
             {90, 16, 16, 400, 16, 24, 3, 24},
             {80, 6, 3, 100, 3, 12, 1, 24},
             {80, 6, 3, 200, 3, 24, 1, 48},
             {80, 6, 3, 400, 3, 24, 1, 48},
             {80, 6, 6, 100, 6, 12, 1, 24},
             {80, 12, 6, 100, 6, 12, 1, 24},
             {80, 12, 6, 200, 6, 24, 1, 30},
             {80, 12, 6, 400, 6, 24, 1, 30},
             {80, 16, 8, 100, 8, 12, 1, 24},
             {80, 16, 8, 200, 8, 24, 1, 30},
             {80, 16, 8, 400, 8, 24, 1, 30},
             {90, 16, 4, 400, 8, 24, 1, 45}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        bool sm90 = c[i].sm == 90;
        double T = c[i].G > 1 ? (sm90 ? 18 * 20.6 : 12 * 20.0) : 0, P = sm90 ? 48 : 24;
        uint32_t n = 0;
        double bw = 0;
        assert_true(tc_nccl_ring_graph_nodes(T, c[i].gbps / 8.0, P, c[i].K, c[i].G, sm90, &n, &bw));
        double t2 = tc_nccl_tree_intra_two_nodes(bw, n, T, c[i].G, sm90);
        int pat = tc_nccl_tree_pattern_tree(c[i].G, c[i].K, sm90) ? 3 : 1;
        if (n != c[i].n || fabs(bw - c[i].bw) > 1e-9 || fabs(t2 - c[i].tree_intra) > 1e-9 || pat != c[i].tree_pattern)
            fail_msg("SM%d, %u GPUs, %u NICs of %u Gb/s: ring %u x %g, tree pattern %d bwIntra %g; NCCL's search %u x %g, "
                     "pattern %d, %g",
                     c[i].sm, c[i].G, c[i].K, c[i].gbps, n, bw, pat, t2, c[i].n, c[i].bw, c[i].tree_pattern,
                     c[i].tree_intra);
    }
    struct {
        const char *spec;
        uint32_t p;
        uint32_t want;
    } s[] = {{"clos:down=2x8,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,arch=hopper,rail=8", 16, 16},
             {"clos:down=4x2,up=1x4,bw=400Gbps,node=2,node_bw=370.8GB/s,arch=hopper,rail=2", 8, 8},
             {"clos:down=4,up=1,bw=400Gbps,arch=hopper", 4, 4},
             {"clos:down=2x8,up=1x2,bw=200Gbps,node=8,node_bw=240GB/s,arch=ampere,rail=8", 16, 16},
             /* 6 GPUs and 6 NICs: 6 x 48 (not doubled: below 50, more
              * than 4), 12 run, doubled again on Hopper alone (speed above
              * 45, fewer than 16: connect.cc:456-459) */
             {"clos:down=2x6,up=1x2,bw=400Gbps,node=6,node_bw=370.8GB/s,arch=hopper,rail=6", 12, 24},
             {"clos:down=2x6,up=1x2,bw=400Gbps,node=6,node_bw=721.8GB/s,arch=blackwell,rail=6", 12, 12}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        expect_ring_channels(s[i].spec, s[i].p, s[i].want);
}

/* NCCL 2.21.5 counts a Blackwell GPU's NVLink links at Hopper's 20.6 GB/s
 * (src/graph/topo.h:17, 224-233): its model sees a B200 node whose
 * node_bw is 18 x 40.1 = 721.8 GB/s as 370.8, as an H100 node. So every
 * model time that reads the NVLink (NVLS on one node, NVLSTree and the
 * ring's graph across nodes, CollNet) is the H100 node's; without the
 * conversion NVLS on one node would read 721.8 / 9 -> 60 GB/s a head
 * instead of 370.8 / 9 -> 40. The evaluators still move data at node_bw. */
static void blackwell_nvlink_as_nccl_2_21_counts_it(void **state)
{
    (void)state;
    const char *fmt1 = "clos:down=8,up=1,bw=400Gbps,node=8,node_bw=%sGB/s,node_reduce=1,arch=%s";
    const char *fmt = "clos:down=%ux8,up=1x%u,bw=400Gbps,node=8,node_bw=%sGB/s,rail=8,node_reduce=1,sharp=1,arch=%s";
    for (uint32_t nodes = 1; nodes <= 4; nodes *= 2) {
        char sb[256], sh[256];
        if (nodes == 1) {
            snprintf(sb, sizeof sb, fmt1, "721.8", "blackwell");
            snprintf(sh, sizeof sh, fmt1, "370.8", "hopper");
        } else {
            snprintf(sb, sizeof sb, fmt, nodes, nodes, "721.8", "blackwell");
            snprintf(sh, sizeof sh, fmt, nodes, nodes, "370.8", "hopper");
        }
        tc_topo *b = topo(sb), *h = topo(sh);
        assert_true(fabs(tc_nccl_nvlink_GBps(b) - 370.8) < 1e-9 && fabs(tc_nccl_nvlink_GBps(h) - 370.8) < 1e-9);
        for (double S = 1 << 20; S <= 1 << 30; S *= 32) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8 * nodes, .bytes = S, .elt = 4};
            double nb = tc_nccl_nvls_time_us(&req, b, nodes > 1), nh = tc_nccl_nvls_time_us(&req, h, nodes > 1);
            if (!(fabs(nb - nh) <= 1e-9 * nh))
                fail_msg("%u nodes, %.0f B: NVLS%s %.9g us on Blackwell, %.9g on Hopper", nodes, S,
                         nodes > 1 ? "Tree" : "", nb, nh);
            if (nodes > 1)
                for (int d = 0; d < 2; d++) {
                    double cb = tc_nccl_collnet_time_us(&req, b, d), ch = tc_nccl_collnet_time_us(&req, h, d);
                    if (!(fabs(cb - ch) <= 1e-9 * ch))
                        fail_msg("%u nodes, %.0f B: CollNet%s %.9g us on Blackwell, %.9g on Hopper", nodes, S,
                                 d ? "Direct" : "Chain", cb, ch);
                }
            /* the ring with Simple, by NCCL's model (Blackwell has no LL128) */
            tc_coll_req r = req;
            r.algo_mask = 1;
            r.proto_mask = 1u << TC_PROTO_SIMPLE;
            double pb = 0, ph = 0;
            tc_nccl_choose(&r, b, NULL, &pb);
            tc_nccl_choose(&r, h, NULL, &ph);
            if (!(fabs(pb - ph) <= 1e-9 * ph))
                fail_msg("%u nodes, %.0f B: Ring Simple by NCCL's model %.9g s on Blackwell, %.9g on Hopper", nodes,
                         S, pb, ph);
        }
        tc_topo_free(b);
        tc_topo_free(h);
    }
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=450GB/s");
    assert_true(fabs(tc_nccl_nvlink_GBps(t) - 450) < 1e-9);
    tc_topo_free(t);
    t = topo("clos:down=8,up=1");
    assert_true(tc_nccl_nvlink_GBps(t) == 0);
    tc_topo_free(t);
}

/* With CollNet (sharp=1 across nodes) NCCL widens its communicator's
 * channels by half where the CollNet graph's bwIntra is above its bwInter
 * (src/graph/connect.cc:447-452), and every algorithm runs the widened
 * count (comm->collChannels, :472). On 4 DGX A100 nodes (8 x 200G NICs,
 * 240 GB/s of NVLink) the graph's 8 search channels take 24 GB/s across
 * (a NIC's 25 under the list) and 30 inside (pass 2, at most 240 / 8):
 * widened, the ring and the tree run 24 channels, point-to-point work 32
 * (the next power of two, src/graph/paths.cc:763-764); the graph NCCL's
 * model counts stays 16 (LL128's cap 8 search channels x 20 GB/s, the
 * same rate together). On DGX H100 nodes (8 x 400G, 370.8 GB/s) both
 * speeds are 48 GB/s: not widened, 16 and 16; nor without SHARP, nor on
 * one node, nor on nodes of more than 8 GPUs (NCCL turns CollNet off,
 * src/init.cc:1195-1200). Across 7 widened A100 nodes (56 ranks) a network
 * peer gets one channel: 2 x 56 > 4 x 24, the p2p channels before their
 * rounding (paths.cc:723, 745-749); against the rounded 32 it would get 2. */
static void collnet_widens_the_communicators_channels(void **state)
{
    (void)state;
    const char *spec[] = {"clos:down=4x8,up=1x4,bw=200Gbps,node=8,node_bw=240GB/s,rail=8,sharp=1,arch=ampere",
                          "clos:down=4x8,up=1x4,bw=200Gbps,node=8,node_bw=240GB/s,rail=8,arch=ampere",
                          "clos:down=4x8,up=1x4,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper"};
    uint32_t ring[] = {24, 16, 16}, p2p[] = {32, 16, 16};
    double cap[3];
    for (int i = 0; i < 3; i++) {
        tc_topo *t = topo(spec[i]);
        for (int a = 0; a < 2; a++) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a ? TC_ALGO_NCCL_TREE : TC_ALGO_NCCL_RING, .p = 32,
                               .bytes = 1 << 30, .elt = 4, .proto = TC_PROTO_SIMPLE};
            tc_sched *s = sched_req(t, req);
            if (s->channels != ring[i])
                fail_msg("%s, %s: %u channels, NCCL's %u", spec[i], a ? "tree" : "ring", s->channels, ring[i]);
            tc_sched_free(s);
            assert_int_equal(tc_nccl_channels_graph(&req, t), 16);
        }
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = 32, .bytes = 1 << 30, .elt = 4,
                         .proto = TC_PROTO_LL128};
        tc_sched *s = sched_req(t, q);
        cap[i] = s->rate_cap_Bps * s->channels;
        tc_sched_free(s);
        tc_coll_req r = {.op = TC_OP_SENDRECV, .algo = TC_ALGO_NCCL, .p = 32, .bytes = 1 << 30, .elt = 4};
        s = sched_req(t, r);
        if (s->channels != p2p[i])
            fail_msg("%s, sendrecv: %u p2p channels, NCCL's %u", spec[i], s->channels, p2p[i]);
        tc_sched_free(s);
        tc_topo_free(t);
    }
    if (fabs(cap[0] - 8 * 20e9) > 1e-3 || fabs(cap[1] - cap[0]) > 1e-3)
        fail_msg("LL128 together: %.6g GB/s with SHARP, %.6g without, NCCL's model 8 x 20", cap[0] / 1e9,
                 cap[1] / 1e9);
    /* the CollNet graph (search channels, bwIntra, bwInter) as NCCL
     * v2.21.5-1's own search code gives it, compiled and run on these
     * nodes (docs/MODEL.md "Channels"): a NIC carries ceil(channels /
     * heads) channels, a chain of G GPUs crosses the NVLink G - 1 times */
    static const struct {
        const char *spec;
        double n, intra, inter;
    } g[] = {{"clos:down=4x8,up=1x4,bw=400Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper", 8, 48, 48},
             {"clos:down=4x8,up=1x4,bw=200Gbps,node=8,node_bw=240GB/s,rail=8,sharp=1,arch=ampere", 8, 30, 24},
             {"clos:down=4x8,up=1x4,bw=200Gbps,node=8,node_bw=370.8GB/s,rail=8,sharp=1,arch=hopper", 8, 48, 24},
             {"clos:down=4x2,up=1x4,bw=400Gbps,node=8,node_bw=370.8GB/s,nics=2,rail=2,sharp=1,arch=hopper", 4, 48, 24},
             {"clos:down=4x4,up=1x4,bw=400Gbps,node=4,node_bw=370.8GB/s,rail=4,sharp=1,arch=hopper", 8, 48, 24},
             {"clos:down=4x4,up=1x4,bw=200Gbps,node=8,node_bw=370.8GB/s,nics=4,rail=4,sharp=1,arch=hopper", 4, 48, 24}};
    for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
        tc_topo *tg = topo(g[i].spec);
        uint32_t G = tg->node_size;
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 4 * G, .bytes = 1 << 30, .elt = 4};
        double n, intra, inter;
        tc_nccl_collnet_graph(&q, tg, &n, &intra, &inter);
        if (n != g[i].n || intra != g[i].intra || inter != g[i].inter)
            fail_msg("%s: CollNet graph %g x %g/%g, NCCL's search %g x %g/%g", g[i].spec, n, intra, inter, g[i].n,
                     g[i].intra, g[i].inter);
        tc_topo_free(tg);
    }
    /* By hand: 8 H100 with 110 GB/s of NVLink and 4 NICs of 400 Gb/s: the
     * ring graph 2 x 48 (110 / 48 = 2.3), doubled to 4 x 24; the CollNet
     * graph's 4 chains through 8 GPUs leave 4 GPUs that end none, each
     * sending all 4 channels: 110 / 4 = 27.5 a channel, speed 24 (the
     * average, 4 x 7/8 = 3.5 channels a GPU, would allow 31.4 and give
     * 30); bwIntra stays 24 (4 x 30 = 120 > 110). */
    {
        tc_topo *tg = topo("clos:down=4x4,up=1x4,bw=400Gbps,node=8,node_bw=110GB/s,nics=4,rail=4,sharp=1,arch=hopper");
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 32, .bytes = 1 << 30, .elt = 4};
        double n, intra, inter;
        tc_nccl_collnet_graph(&q, tg, &n, &intra, &inter);
        if (n != 4 || intra != 24 || inter != 24)
            fail_msg("110 GB/s NVLink, 4 NICs: CollNet graph %g x %g/%g, by hand 4 x 24/24", n, intra, inter);
        tc_topo_free(tg);
    }
    tc_coll_req w = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = 32, .bytes = 1 << 30, .elt = 4};
    tc_topo *t = topo("clos:down=4x16,up=1x4,bw=200Gbps,node=16,node_bw=240GB/s,nics=16,sharp=1,arch=ampere");
    w.p = 64;
    assert_false(tc_nccl_collnet_widens(&w, t, 64, 16));
    tc_topo_free(t);
    t = topo("clos:down=7x8,up=1x7,bw=200Gbps,node=8,node_bw=240GB/s,rail=8,sharp=1,arch=ampere");
    w.p = 56;
    assert_true(tc_nccl_collnet_widens(&w, t, 56, 8));
    w.p = 8;
    assert_false(tc_nccl_collnet_widens(&w, t, 8, 8));
    tc_coll_req a = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL, .p = 56, .bytes = 56.0 * (1 << 30), .elt = 4};
    tc_sched *s = sched_req(t, a);
    if (s->channels != 32 || s->nblk != 56)
        fail_msg("all-to-all of 56 ranks: %u p2p channels, %u blocks (1 a peer each), NCCL's 32 and 56", s->channels,
                 s->nblk);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* NCCL's NVLS graph across nodes (heads, bwIntra/bwInter) as NCCL
 * v2.21.5-1's own search code gives it, compiled and run on these H100
 * nodes (docs/MODEL.md "NCCL's NVLS"), read back through NVLSTree's model:
 * algBw = heads x min(bwIntra, bwInter, or bwInter / 2 beyond two nodes)
 * x 5/6 (tuning.cc:174-177, 213-219). */
static void nvls_graph_across_nodes_is_nccls_search(void **state)
{
    (void)state;
    static const struct {
        uint32_t G, K, gbps, heads;
        double intra, inter;
    } c[] = {{8, 8, 400, 8, 40, 48}, {8, 8, 200, 8, 24, 24}, {8, 8, 100, 8, 12, 12}, {8, 4, 400, 4, 48, 48},
             {4, 4, 400, 4, 48, 48}, {8, 2, 400, 2, 48, 48}, {4, 2, 400, 2, 48, 48}, {8, 4, 200, 4, 24, 24}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        for (uint32_t M = 2; M <= 4; M += 2) {
            char spec[256], nics[24] = "";
            if (c[i].K < c[i].G)
                snprintf(nics, sizeof nics, ",nics=%u", c[i].K);
            snprintf(spec, sizeof spec,
                     "clos:down=%ux%u,up=1x%u,bw=%uGbps,node=%u,node_bw=370.8GB/s%s,rail=%u,node_reduce=1,arch=hopper", M,
                     c[i].K, M, c[i].gbps, c[i].G, nics, c[i].K);
            tc_topo *t = topo(spec);
            tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS_TREE, .p = M * c[i].G, .bytes = 1 << 30,
                             .elt = 4};
            double t1 = tc_nccl_nvls_time_us(&q, t, true);
            q.bytes *= 2;
            double t2 = tc_nccl_nvls_time_us(&q, t, true);
            double alg = (1 << 30) / (t2 - t1) / 1e3; /* GB/s */
            double want = c[i].heads * fmin(c[i].intra, M <= 2 ? c[i].inter : c[i].inter / 2) * 5 / 6;
            if (fabs(alg - want) > 1e-6 * want)
                fail_msg("%s: NVLSTree %g GB/s, NCCL's graph %u x %g/%g gives %g", spec, alg, c[i].heads, c[i].intra,
                         c[i].inter, want);
            tc_topo_free(t);
        }
}

/* Where NCCL has NVLS (a Hopper node switch that reduces, more than 2 GPUs
 * a node, NCCL_NVLS_ENABLE not 0) and its communicator fewer channels than
 * NVLS's 16 (nodes of 2 NICs: 2 search channels of 48, doubled to 4 of 24,
 * run as 8), it raises them to 16
 * (src/graph/connect.cc:478-480) after fixing the collectives' count
 * (collChannels, :472): the ring keeps 8, point-to-point work takes 16
 * (src/graph/paths.cc:745-749). Not without NVLS (no reduction, nvls=0,
 * Ampere), nor where maxCTAs holds NVLS's channels to 8
 * (src/transport/nvls.cc:259). */
static void nvls_raises_the_p2p_channels(void **state)
{
    (void)state;
    struct {
        const char *spec;
        bool off;
        uint32_t maxcta, want;
    } c[] = {{"clos:down=2x2,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,nics=2,rail=2,node_reduce=1,arch=hopper", 0, 0, 16},
             {"clos:down=2x2,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,nics=2,rail=2,arch=hopper", 0, 0, 8},
             {"clos:down=2x2,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,nics=2,rail=2,node_reduce=1,arch=hopper", 1, 0, 8},
             {"clos:down=2x2,up=1x2,bw=400Gbps,node=8,node_bw=370.8GB/s,nics=2,rail=2,node_reduce=1,arch=hopper", 0, 8, 8},
             {"clos:down=2x4,up=1x2,bw=200Gbps,node=8,node_bw=240GB/s,nics=4,rail=4,node_reduce=1,arch=ampere", 0, 0, 8}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        tc_topo *t = topo(c[i].spec);
        tc_coll_req r = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 1 << 30, .elt = 4,
                         .nvls_off = c[i].off, .max_ctas = c[i].maxcta};
        tc_sched *s = sched_req(t, r);
        if (s->channels != c[i].want)
            fail_msg("%s, nvls_off %d, maxcta %u: %u p2p channels, NCCL's %u", c[i].spec, c[i].off, c[i].maxcta,
                     s->channels, c[i].want);
        tc_sched_free(s);
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = 16, .bytes = 1 << 30, .elt = 4,
                         .proto = TC_PROTO_SIMPLE};
        s = sched_req(t, q);
        assert_int_equal(s->channels, 8);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

/* NCCL's choice on one H100 node with NCCL's ring graph for it, 12
 * search channels of 30 GB/s (360 GB/s; 24 channels run): its model, by
 * hand from tuning.cc's tables, picks LL up to 3,591,707 B, LL128 up to
 * 36,432,000 B, Simple above (busBw LL min(141, 360 / 2), LL128
 * min(0.92 x 360, 12 x 36.7), Simple 360; latencies 15.0, 40.6, 56.0 us;
 * algBw = busBw x 8/14); a mask leaves out what it excludes; Blackwell
 * never runs LL128. */
/* Two refinements of NCCL v2.21.5-1's model (src/graph/tuning.cc), read
 * back from its predictions: the ring's plateau factor for Simple between
 * nodes, once bytes / (channels x ranks) reaches 64, is 1.9 below compute
 * capability 8.0 and 1.4 from it (:437-440); the tree's bus bandwidth
 * takes 0.85 where its graph has the TREE pattern, which the search gives
 * a node of one GPU (:185, src/graph/search.cc:897). Pre-SM90 speed lists
 * (search.cc:850-851) against SM90's (855-856). */
static void nccl_model_refinements_as_tuning_cc(void **state)
{
    (void)state;
    /* 4 nodes x 8 GPUs on 8 rails: 16 channels, 32 ranks, so the factor
     * starts at 16 x 32 x 64 = 32 KiB; Simple alone; three sizes give the
     * bandwidth (two above), the latency (one below) and the factor */
    static const char *arch[] = {"volta", "ampere", "hopper"};
    static const double want[] = {1.9, 1.4, 1.4};
    for (int a = 0; a < 3; a++) {
        char spec[160];
        snprintf(spec, sizeof spec, "clos:down=4x8,up=1x8,bw=100Gbps,node=8,node_bw=130GB/s,rail=8,arch=%s", arch[a]);
        tc_topo *t = topo(spec);
        double S[3] = {32000, 40000, 48000}, T[3];
        for (int i = 0; i < 3; i++) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 32, .bytes = S[i],
                               .proto_mask = 1u << TC_PROTO_SIMPLE, .algo_mask = 1};
            tc_nccl_choose(&req, t, NULL, &T[i]);
        }
        double inv_bw = (T[2] - T[1]) / (S[2] - S[1]), lat = T[0] - S[0] * inv_bw;
        double f = (T[1] - S[1] * inv_bw) / lat;
        if (fabs(f - want[a]) > 1e-6)
            fail_msg("%s: plateau factor %.9g, tuning.cc's %.1f", arch[a], f, want[a]);
        tc_topo_free(t);
    }
    /* the tree over 16 nodes of one H100 (one 400 Gb/s NIC each, on a
     * PCIe Gen5 link of 48 GB/s): NCCL's graph 1 channel of 48 doubled to 2
     * of 24 (tc_nccl_ring_graph_nodes), so bus min(0.92 x 48, 2 search
     * channels x perChMaxTreeBws 36) = 44.16 GB/s, x 0.85 for the TREE
     * pattern, x 0.5 for the algorithm bandwidth; from 1 GiB no
     * treeCorrectionFactor */
    tc_topo *t = topo("clos:down=4x4,up=1x4,bw=400Gbps,arch=hopper");
    double S[2] = {1073741824.0, 2147483648.0}, T[2];
    for (int i = 0; i < 2; i++) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 16, .bytes = S[i],
                           .proto_mask = 1u << TC_PROTO_SIMPLE, .algo_mask = 2};
        tc_algo got = TC_ALGO_AUTO;
        tc_nccl_choose(&req, t, &got, &T[i]);
        assert_int_equal(got, TC_ALGO_NCCL_TREE);
    }
    double alg = (S[1] - S[0]) / (T[1] - T[0]);
    if (fabs(alg - 44.16e9 * 0.85 * 0.5) > 1e-6 * alg)
        fail_msg("tree on nodes of one GPU: algorithm bandwidth %.9g B/s, by hand %.9g", alg, 44.16e9 * 0.85 * 0.5);
    tc_topo_free(t);
    /* the tree's graph on two nodes (8 A100 each, 8 x 100 Gb/s NICs of
     * 12.5 GB/s): NCCL's search finds 8 channels of 12 (96 GB/s; 16 of 6
     * only tie); bwIntra rises through the speeds above 12 while below
     * twice 12 and the 8 channels fit the NVLink, each GPU carrying 7/8 of
     * a channel (a chain of 8 GPUs, 7 NVLink hops; search.cc:1025-1028),
     * and the model reads bwIntra on two nodes (tuning.cc:175): 18 on 130
     * GB/s of NVLink (8 x 18 x 7/8 = 126; 20 would take 140), 24 on 300;
     * bus 0.92 x 8 x 18 and 0.92 x 8 x 24; on three nodes bwInter, 0.92 x
     * 96. SM80: the BALANCED_TREE pattern (no 0.85). The search channels x
     * perChMaxTreeBw (8 x 23.6 on two nodes, 8 x 17.8 on three) stay above.
     * Simple from 1 GiB: no treeCorrectionFactor. */
    static const struct {
        const char *spec;
        uint32_t p;
        double bus_GBps;
    } tg[] = {{"clos:down=2x8,up=1x8,bw=100Gbps,node=8,node_bw=130GB/s,rail=8,arch=ampere", 16, 0.92 * 144},
              {"clos:down=2x8,up=1x8,bw=100Gbps,node=8,node_bw=300GB/s,rail=8,arch=ampere", 16, 0.92 * 192},
              {"clos:down=3x8,up=1x8,bw=100Gbps,node=8,node_bw=300GB/s,rail=8,arch=ampere", 24, 0.92 * 96},
              /* a GPU a node: one channel of 12 (below 25: not doubled),
               * bwIntra raised to 24 with no NVLink to hold it, as the
               * graph file of NVIDIA/nccl#524 shows (ring 12/12, tree
               * 24/12), x 0.85 for the TREE pattern; 1 search channel x
               * 23.6 above 0.92 x 24 */
              {"clos:down=2,up=1,bw=100Gbps,arch=ampere", 2, 0.92 * 24 * 0.85}};
    for (size_t k = 0; k < sizeof tg / sizeof *tg; k++) {
        t = topo(tg[k].spec);
        for (int i = 0; i < 2; i++) {
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = tg[k].p, .bytes = S[i],
                               .proto_mask = 1u << TC_PROTO_SIMPLE, .algo_mask = 2};
            tc_algo got = TC_ALGO_AUTO;
            tc_nccl_choose(&req, t, &got, &T[i]);
            assert_int_equal(got, TC_ALGO_NCCL_TREE);
        }
        alg = (S[1] - S[0]) / (T[1] - T[0]);
        if (fabs(alg - tg[k].bus_GBps * 1e9 * 0.5) > 1e-6 * alg)
            fail_msg("%s: tree's algorithm bandwidth %.9g B/s, by hand %.9g", tg[k].spec, alg, tg[k].bus_GBps * 1e9 * 0.5);
        tc_topo_free(t);
    }
    /* the speed lists, SM90's and the one before */
    assert_true(tc_nccl_speed_at_most(true, true, 22.5) == 22 && tc_nccl_speed_at_most(true, false, 22.5) == 20);
    assert_true(tc_nccl_speed_at_most(true, true, 47) == 45 && tc_nccl_speed_at_most(true, false, 47) == 30);
    assert_true(tc_nccl_speed_at_most(false, true, 55) == 50 && tc_nccl_speed_at_most(false, false, 55) == 40);
    assert_true(tc_nccl_speed_at_most(false, false, 8) == 7 && tc_nccl_speed_at_most(false, true, 8) == 6);
}

static void nccl_chooses_protocols_as_its_model(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=360GB/s,arch=hopper");
    double ll_ll128 = 3591707, ll128_simple = 36432000; /* solved by hand */
    struct {
        double bytes;
        tc_proto want;
    } c[] = {{8, TC_PROTO_LL},
             {ll_ll128 * 0.98, TC_PROTO_LL},
             {ll_ll128 * 1.02, TC_PROTO_LL128},
             {ll128_simple * 0.98, TC_PROTO_LL128},
             {ll128_simple * 1.02, TC_PROTO_SIMPLE},
             {1 << 30, TC_PROTO_SIMPLE}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = c[i].bytes, .channels = 24};
        tc_proto got = tc_nccl_choose(&req, t, NULL, NULL);
        if (got != c[i].want)
            fail_msg("%.0f bytes: %s, NCCL's model %s", c[i].bytes, tc_proto_name(got), tc_proto_name(c[i].want));
    }
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = 8, .channels = 24,
                       .proto_mask = 1u << TC_PROTO_LL128 | 1u << TC_PROTO_SIMPLE};
    assert_int_equal(tc_nccl_choose(&req, t, NULL, NULL), TC_PROTO_LL128);
    tc_topo_free(t);
    t = topo("clos:down=8,up=1,node=8,node_bw=721.8GB/s,arch=blackwell");
    for (double b = 8; b < 1e10; b *= 4) {
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = b};
        assert_int_not_equal(tc_nccl_choose(&q, t, NULL, NULL), TC_PROTO_LL128);
    }
    tc_topo_free(t);
    /* the proto syntax of NCCL_PROTO */
    tc_proto p = TC_PROTO_NONE;
    uint8_t m = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_proto_parse("^ll128", true, &p, &m, &err), TC_OK);
    assert_int_equal(m, 1u << TC_PROTO_LL | 1u << TC_PROTO_SIMPLE);
    assert_int_equal(tc_proto_parse("LL,Simple", true, &p, &m, &err), TC_OK);
    assert_int_equal(m, 1u << TC_PROTO_LL | 1u << TC_PROTO_SIMPLE);
    assert_int_equal(tc_proto_parse("Tree", true, &p, &m, &err), TC_EINVAL);
    assert_int_equal(tc_proto_parse("^LL|LL128|Simple", true, &p, &m, &err), TC_EINVAL);
    assert_int_equal(tc_proto_parse("LL|Simple", false, &p, &m, &err), TC_EINVAL);
    /* '^' alone excludes nothing (NCCL's parseList); nothing at all is refused */
    assert_int_equal(tc_proto_parse("^", true, &p, &m, &err), TC_OK);
    assert_int_equal(m, 1u << TC_PROTO_LL | 1u << TC_PROTO_LL128 | 1u << TC_PROTO_SIMPLE);
    assert_int_equal(tc_proto_parse("", true, &p, &m, &err), TC_EINVAL);
    assert_int_equal(tc_proto_parse("^", false, &p, &m, &err), TC_EINVAL);
    uint8_t am = 0;
    assert_int_equal(tc_nccl_algo_parse("^", &am, &err), TC_OK);
    assert_int_equal(am, 127);
}

/* NCCL's node trees (src/graph/trees.cc), the examples computed from its
 * code: tree 0 over 4, 5 and 8 nodes, tree 1 mirrored (even) or shifted
 * (odd). Written as parent;children. */
static void node_trees_are_nccls(void **state)
{
    (void)state;
    static const struct {
        int n, t;
        const char *want;
    } c[] = {{4, 0, "-;2 2;- 0;1,3 2;-"},
             {4, 1, "1;- 3;2,0 1;- -;1"},
             {5, 0, "-;4 2;- 4;1,3 2;- 0;2"},
             {5, 1, "1;3 -;0 3;- 0;2,4 3;-"},
             {8, 0, "-;4 2;- 4;1,3 2;- 0;2,6 6;- 4;5,7 6;-"},
             {8, 1, "1;- 3;2,0 1;- 7;5,1 5;- 3;6,4 5;- -;3"}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char got[256] = "";
        size_t at = 0;
        for (int r = 0; r < c[i].n; r++) {
            int p, a, b;
            tc_nccl_node_tree(c[i].n, c[i].t, r, &p, &a, &b);
            char ps[16], kids[32] = "";
            snprintf(ps, sizeof ps, p < 0 ? "-" : "%d", p);
            if (a >= 0 && b >= 0)
                snprintf(kids, sizeof kids, "%d,%d", a, b);
            else if (a >= 0 || b >= 0)
                snprintf(kids, sizeof kids, "%d", a >= 0 ? a : b);
            else
                snprintf(kids, sizeof kids, "-");
            at += (size_t)snprintf(got + at, sizeof got - at, "%s%s;%s", r ? " " : "", ps, kids);
        }
        if (strcmp(got, c[i].want) != 0)
            fail_msg("n=%d tree %d: %s, NCCL's %s", c[i].n, c[i].t, got, c[i].want);
    }
}

/* The tree on real buffers: node sizes 1 to 8 with and without rails and
 * shared NICs,
 * 1 to 9 nodes, channels, protocols, sizes of a few elements and of many
 * chunks; the hand latency of 4 DGX-like nodes (NCCL's tree formula, 
 * tuning.cc:250-252: 6.8 + 2 (7 x 0.6 + log2(4) x 5.0) us for LL); formula
 * and flow agree at small sizes; skipping is exact; NCCL's choice takes the
 * tree for small messages across nodes and the ring for large ones. */
static void nccl_tree_moves_the_right_data_and_times_as_nccl(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=16x4,up=1x4", "clos:down=16x4,up=1x4,node=2",
                                  "clos:down=16x4,up=1x4,node=4,rail=4", "clos:down=9x8,up=1x9,node=8,rail=8",
                                  "clos:down=9x4,up=1x9,node=8,nics=4,rail=4"};
    int checked = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = topo(specs[i]);
        uint32_t G = t->node_size > 1 ? t->node_size : 1;
        for (uint32_t nodes = 1; nodes <= 9 && nodes * G <= t->n_endpoints; nodes++) {
            uint32_t p = nodes * G;
            if (p < 2)
                continue;
            for (uint32_t c = 0; c <= 5; c += 2 + (c == 0))
                for (int pr = TC_PROTO_LL; pr <= TC_PROTO_SIMPLE; pr++) {
                    double big = pr == TC_PROTO_SIMPLE ? 600001.0 : 40001.0;
                    double bytes = (c == 3 ? 16.0 : c == 0 ? big : 2 * big + 1) * 4 * p;
                    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_TREE, .p = p, .bytes = bytes,
                                       .elt = 4, .channels = c, .proto = (tc_proto)pr};
                    tc_err err = {{0}};
                    tc_sched *s = NULL;
                    if (tc_coll_round(&req, &err) != TC_OK || tc_coll_build(&req, t, &s, &err) != TC_OK)
                        fail_msg("%s p=%u: %s", specs[i], p, err.msg);
                    tc_status st = s->nblk <= 2048 ? tc_sched_check(s, &err) : tc_sched_check_sampled(s, 16, 7, &err);
                    if (st != TC_OK)
                        fail_msg("%s p=%u channels=%u %s: %s", specs[i], p, c, tc_proto_name((tc_proto)pr), err.msg);
                    count_as_emitted(s);
                    tc_sched_free(s);
                    checked++;
                }
        }
        tc_topo_free(t);
    }
    print_message("%d nccl-tree schedules checked\n", checked);

    tc_topo *t = topo("clos:down=4x8,up=1x4,node=8,rail=8,arch=hopper");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_TREE, .p = 32, .bytes = 8, .proto = TC_PROTO_LL};
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
    tc_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_evaluate(t, &req, &o, &r, &err), TC_OK);
    double want = 6.8e-6 + 2 * (7 * 0.6e-6 + 2 * 5.0e-6);
    /* and the bytes (16 on the wire) up and down the tree, 2 x 9 hops, on
     * one channel: 1/16 of min(0.92 x 370.8, 8 x 36.0) / 3.8 = 4.74 GB/s */
    if (!(r.time_s >= want - 0.01e-6 && r.time_s < want + 18 * 16 / 4.74e9))
        fail_msg("tree LL 8 B on 4 nodes: %.9g s, NCCL's formula %.9g s", r.time_s, want);
    tc_flow_opts fo = {0};
    for (int pr = TC_PROTO_LL; pr <= TC_PROTO_SIMPLE; pr++)
        for (int k = 0; k < 3; k++) {
            double bytes = k == 0 ? 256 : k == 1 ? 4.0e6 : 6.0e7;
            tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_TREE, .p = 32, .bytes = bytes, .elt = 4,
                             .channels = 4, .proto = (tc_proto)pr};
            tc_result a, b, f;
            tc_eval_opts of = {.mode = TC_MODE_FLOW, .routing = TC_ROUTE_DMODK, .flow = &fo};
            fo.no_skip = false;
            assert_int_equal(tc_evaluate(t, &q, &of, &a, &err), TC_OK);
            fo.no_skip = true;
            assert_int_equal(tc_evaluate(t, &q, &of, &b, &err), TC_OK);
            if (fabs(a.time_s - b.time_s) > 1e-9 * b.time_s)
                fail_msg("tree %s %g B: skipping %.17g, not %.17g", tc_proto_name((tc_proto)pr), bytes, a.time_s,
                         b.time_s);
            assert_int_equal(tc_evaluate(t, &q, &o, &f, &err), TC_OK);
            if (k == 0 && fabs(f.time_s - a.time_s) > 0.01 * f.time_s)
                fail_msg("tree %s %g B: formula %g, flow %g", tc_proto_name((tc_proto)pr), bytes, f.time_s, a.time_s);
        }
    tc_algo al = TC_ALGO_NCCL_RING;
    tc_coll_req c = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 32, .bytes = 8};
    tc_nccl_choose(&c, t, &al, NULL);
    assert_int_equal(al, TC_ALGO_NCCL_TREE);
    c.bytes = 8.0 * 1024 * 1024 * 1024;
    tc_nccl_choose(&c, t, &al, NULL);
    assert_int_equal(al, TC_ALGO_NCCL_RING);
    c.bytes = 8;
    c.algo_mask = 1;
    tc_nccl_choose(&c, t, &al, NULL);
    assert_int_equal(al, TC_ALGO_NCCL_RING);
    uint8_t m = 0;
    assert_int_equal(tc_nccl_algo_parse("^Tree", &m, &err), TC_OK);
    assert_int_equal(m, 1 | 4 | 8 | 16 | 32 | 64); /* PAT (v2.23.4-1) is bit 16, CollNetDirect 32, CollNetChain 64 */
    assert_int_equal(tc_nccl_algo_parse("NVLS,Tree", &m, &err), TC_OK);
    assert_int_equal(m, 2 | 4);
    assert_int_equal(tc_nccl_algo_parse("nvlstree|CollNetDirect", &m, &err), TC_OK);
    assert_int_equal(m, 8 | 32);
    assert_int_equal(tc_nccl_algo_parse("CollNetChain,CollNetDirect", &m, &err), TC_OK);
    assert_int_equal(m, 32 | 64);
    assert_int_equal(tc_nccl_algo_parse("collnet", &m, &err), TC_OK);
    assert_int_equal(m, 32 | 64);
    assert_int_equal(tc_nccl_algo_parse("^Ring|Tree|NVLS|NVLSTree|PAT|CollNet", &m, &err), TC_EINVAL);
    assert_int_equal(tc_nccl_algo_parse("Fancy", &m, &err), TC_EINVAL);
    tc_topo_free(t);
}

/* NVLS and NVLSTree on real buffers, the node switches' buffers included:
 * one node of 3 to 8 GPUs; 2 to 9 nodes of 4 or 8 GPUs with a NIC per GPU
 * or shared NICs; 1, 2, 5 and the default 16 channels; sizes of a few
 * elements and of several chunks per channel; p up to 1,024 sampled. */
static void nccl_nvls_moves_the_right_data(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        bool tree;
    } topos[] = {{"clos:down=8,up=1,node=8,node_reduce=1,arch=hopper", false},
                 {"clos:down=9x8,up=1x9,node=8,rail=8,node_reduce=1", true},
                 {"clos:down=9x4,up=1x9,node=8,nics=4,rail=4,node_reduce=1", true},
                 {"clos:down=9x4,up=1x9,node=4,node_reduce=1", true}};
    int checked = 0;
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        tc_topo *t = topo(topos[ti].spec);
        uint32_t G = t->node_size;
        for (uint32_t p = topos[ti].tree ? 2 * G : 3; p <= (topos[ti].tree ? 9 * G : G); p += topos[ti].tree ? G : 1)
            for (uint32_t c = 0; c <= 5; c += 1 + (c == 0) + 2 * (c == 2))
                for (int big = 0; big < 6; big++) {
                    /* all-reduce; on one node also all-gather and reduce-scatter */
                    tc_op op = big < 2 ? TC_OP_ALLREDUCE : big < 4 ? TC_OP_ALLGATHER : TC_OP_REDUCESCATTER;
                    if (topos[ti].tree && op != TC_OP_ALLREDUCE)
                        continue;
                    tc_coll_req req = {.op = op,
                                       .algo = topos[ti].tree ? TC_ALGO_NCCL_NVLS_TREE : TC_ALGO_NCCL_NVLS,
                                       .p = p, .bytes = (big % 2 ? 300001.0 * 64 : 17.0) * 4 * p, .elt = 4, .channels = c};
                    tc_err err = {{0}};
                    tc_sched *s = NULL;
                    if (tc_coll_round(&req, &err) != TC_OK || tc_coll_build(&req, t, &s, &err) != TC_OK)
                        fail_msg("%s p=%u: %s", topos[ti].spec, p, err.msg);
                    assert_int_equal(s->nsw, p / (p < G ? p : G));
                    tc_status st = s->nblk <= 4096 ? tc_sched_check(s, &err) : tc_sched_check_sampled(s, 32, 5, &err);
                    if (st != TC_OK)
                        fail_msg("%s p=%u channels=%u bytes=%g: %s", topos[ti].spec, p, c, req.bytes, err.msg);
                    count_as_emitted(s);
                    tc_sched_free(s);
                    checked++;
                }
        tc_topo_free(t);
    }
    tc_topo *t = topo("clos:hosts=1024,radix=64,tiers=2,node=8,rail=8,node_reduce=1");
    for (uint32_t p = 16; p <= 1024; p *= 4) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS_TREE, .p = p, .bytes = 1 << 26};
        tc_err err = {{0}};
        tc_sched *s = NULL;
        if (tc_coll_build(&req, t, &s, &err) != TC_OK || tc_sched_check_sampled(s, 16, 3, &err) != TC_OK)
            fail_msg("p=%u: %s", p, err.msg);
        tc_sched_free(s);
        checked++;
    }
    tc_topo_free(t);
    print_message("%d nccl-nvls schedules checked\n", checked);
}

static double nvls_eval(const tc_topo *t, tc_algo a, uint32_t p, double bytes, tc_mode mode, tc_result *r)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_eval_opts o = {.mode = mode, .routing = TC_ROUTE_DMODK};
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, r, &err) != TC_OK)
        fail_msg("evaluate: %s", err.msg);
    return r->time_s;
}

/* Fewer NVLS channels than NCCL's 16 move less: a channel (one thread
 * block) at most 1/16 of a GPU's NVLink (assumed). On one H100 node with
 * one channel, 64 MiB takes at least its 6/5 on the wire at 370.8/16
 * GB/s; every count from 1 to 16 at least (to within 1%, the pipeline's
 * chunking) the time at 16, in formula, steps and flow alike; from 16 on
 * no cap. Before, one channel ran the same 64 MiB in 280 us (16: 348). */
static void nvls_fewer_channels_move_less(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=370.8GB/s,node_reduce=1,arch=hopper");
    double S = 64.0 * (1 << 20), t16 = 0, prev = INFINITY;
    tc_result r;
    for (uint32_t c = 16; c >= 1; c--) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS, .p = 8, .bytes = S, .elt = 4,
                           .channels = c};
        double tm[3];
        for (int m = 0; m < 3; m++) {
            tc_eval_opts o = {.mode = m == 0 ? TC_MODE_FORMULA : m == 1 ? TC_MODE_STEPS : TC_MODE_FLOW,
                              .routing = TC_ROUTE_DMODK};
            tc_err err = {{0}};
            if ((c == 1 || c == 16 || m < 2) && tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
                fail_msg("%u channels: %s", c, err.msg);
            tm[m] = r.time_s;
        }
        if (fabs(tm[0] - tm[1]) > 1e-9 * tm[1] || ((c == 1 || c == 16) && fabs(tm[2] - tm[1]) > 0.01 * tm[1]))
            fail_msg("%u channels: formula %.9g, steps %.9g, flow %.9g s", c, tm[0], tm[1], tm[2]);
        if (c == 16)
            t16 = tm[1];
        else if (tm[1] < 0.99 * t16 || tm[1] < 0.99 * prev)
            fail_msg("%u channels: %.9g s, faster than %u channels' %.9g s (16: %.9g)", c, tm[1], c + 1, prev, t16);
        prev = tm[1];
    }
    if (prev < S * 6 / 5 / (370.8e9 / 16))
        fail_msg("one channel: %.9g s, below its cap's %.9g s", prev, S * 6 / 5 / (370.8e9 / 16));
    /* the figures docs/MODEL.md gives ("NCCL's NVLS"): 64 MiB in 3.66 ms
     * on one channel, 0.54 on 8, 0.35 on 16; 1 MiB in 45.4 us on 7
     * channels and 53.1 on 8, where the chunks a head halve */
    const struct {
        double bytes;
        uint32_t c;
        double want_s;
    } doc[] = {{S, 1, 3.66e-3}, {S, 8, 0.54e-3}, {S, 16, 0.35e-3}, {1 << 20, 7, 45.4e-6}, {1 << 20, 8, 53.1e-6}};
    for (size_t i = 0; i < sizeof doc / sizeof *doc; i++) {
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS, .p = 8, .bytes = doc[i].bytes, .elt = 4,
                         .channels = doc[i].c};
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
        tc_err e2 = {{0}};
        if (tc_evaluate(t, &q, &o, &r, &e2) != TC_OK)
            fail_msg("%u channels: %s", doc[i].c, e2.msg);
        if (fabs(r.time_s - doc[i].want_s) > 0.01 * doc[i].want_s)
            fail_msg("%.0f B on %u channels: %.9g s, docs/MODEL.md %.9g", doc[i].bytes, doc[i].c, r.time_s,
                     doc[i].want_s);
    }
    /* 32 channels: no cap, the same chunks per channel as 16 */
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_NVLS, .p = 8, .bytes = S, .elt = 4, .channels = 32};
    tc_sched *s = sched_req(t, req);
    assert_true(s->rate_cap_Bps == 0);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* NVLS only for the types and operators NCCL v2.21.5-1 has kernels for
 * (ncclNvlsSupported, src/include/device.h:423-440): sum on float and
 * double; sum, min and max on half, bfloat16 and 32/64-bit integers;
 * never prod, avg (PreMulSum or SumPostDiv) or an 8-bit type. Every
 * type and operator: NCCL's choice at 1 GiB on one H100 node is NVLS
 * exactly where the table allows it, the ring elsewhere; a named
 * nccl-nvls is refused elsewhere; the lower bound counts the switch's
 * reduction only where it can reduce. */
static void nvls_only_for_its_types_and_operators(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=370.8GB/s,node_reduce=1,arch=hopper");
    static const char *const types[] = {"float32", "fp16", "bf16", "fp8", "int8", "fp64",
                                        "uint8", "int32", "uint32", "int64", "uint64", "fp8e5m2"};
    /* by hand from device.h: per type, the operators with a kernel (bit per tc_redop) */
    const unsigned sum = 1u << TC_REDOP_SUM, mm = 1u << TC_REDOP_MIN | 1u << TC_REDOP_MAX;
    const unsigned want[] = {sum, sum | mm, sum | mm, 0, 0, sum, 0, sum | mm, sum | mm, sum | mm, sum | mm, 0};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        uint8_t code = tc_dtype_code(types[i]);
        assert_string_equal(tc_dtype_name(code), types[i]);
        for (int op = TC_REDOP_SUM; op <= TC_REDOP_AVG; op++) {
            bool ok = (want[i] >> op) & 1;
            if (tc_nccl_nvls_redop_ok(code, (uint8_t)op) != ok)
                fail_msg("%s %s: table says %d", types[i], tc_redop_name((tc_redop)op), ok);
            tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = 1 << 30,
                               .elt = tc_dtype_size(types[i]), .dtype = code, .redop = (uint8_t)op};
            tc_algo a;
            tc_nccl_choose(&req, t, &a, NULL);
            if ((a == TC_ALGO_NCCL_NVLS) != ok)
                fail_msg("%s %s: NCCL's choice %s", types[i], tc_redop_name((tc_redop)op), tc_algo_name(a));
            req.algo = TC_ALGO_NCCL_NVLS;
            tc_sched *sc = NULL;
            tc_err e2 = {{0}};
            tc_status st = tc_coll_build(&req, t, &sc, &e2);
            if ((st == TC_OK) != ok)
                fail_msg("%s %s: nccl-nvls build %d (%s)", types[i], tc_redop_name((tc_redop)op), st, e2.msg);
            if (!ok)
                assert_non_null(strstr(e2.msg, "no NVLS kernel"));
            tc_sched_free(sc);
            /* the bound: S each way through the node's links where the
             * switch reduces, 2 (p - 1) / p S where it does not */
            req.algo = TC_ALGO_NCCL_RING;
            tc_result r;
            tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
            if (tc_evaluate(t, &req, &o, &r, &e2) != TC_OK)
                fail_msg("evaluate: %s", e2.msg);
            double S = r.bytes, inj = 370.8e9 + 50e9, lb = (ok ? S : 2.0 * 7 / 8 * S) / inj;
            if (fabs(r.lower_bound_s - lb) > 1e-9 * lb)
                fail_msg("%s %s: bound %.9g s, by hand %.9g s", types[i], tc_redop_name((tc_redop)op),
                         r.lower_bound_s, lb);
        }
    }
    /* all-gather runs as sum whatever the operator (src/collectives.cc:23-25) */
    tc_coll_req g = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL_NVLS, .p = 8, .bytes = 1 << 30, .elt = 4,
                     .redop = TC_REDOP_MAX};
    tc_sched *sc = NULL;
    tc_err e3 = {{0}};
    if (tc_coll_build(&g, t, &sc, &e3) != TC_OK)
        fail_msg("all-gather with max: %s", e3.msg);
    tc_sched_free(sc);
    assert_string_equal(tc_redop_column(TC_OP_ALLGATHER, TC_REDOP_MAX), "none");
    assert_string_equal(tc_redop_column(TC_OP_REDUCE, TC_REDOP_MAX), "max");
    tc_topo_free(t);
}

/* NVLS on one node of 8 H100 by hand. Per GPU and direction an all-reduce
 * of S moves S (its shards to the switch, the multicast back) and S / 8
 * (the head's shard from the switch and back to it), each byte 6/5 on the
 * wire: the time tends to 9/8 x 6/5 S / node_bw, so busbw = 2 x 7/8 S / t
 * tends to 14/9 x 5/6 = 1.296 times node_bw, above the link's rate, which
 * no rank-to-rank algorithm can pass. NCCL's model (tuning.cc): NVLS
 * 8 heads x 40 GB/s (the largest search speed with 9 x 40 <= 370.8) x 5/6
 * = 266.7 GB/s and 25 us; ring LL 15 us and min(141, 370.8 / 2) x 8/14
 * GB/s; LL128 and Simple always slower than NVLS: LL up to 1,154,535 B,
 * NVLS above. */
static void nvls_on_one_h100_node_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8,up=1,node=8,node_bw=370.8GB/s,node_reduce=1,arch=hopper");
    tc_result r;
    double S = 16.0 * (1 << 30), bw = 370.8e9;
    double f = nvls_eval(t, TC_ALGO_NCCL_NVLS, 8, S, TC_MODE_FORMULA, &r);
    double st = nvls_eval(t, TC_ALGO_NCCL_NVLS, 8, S, TC_MODE_STEPS, &r);
    if (fabs(f - st) > 1e-9 * st)
        fail_msg("formula %.9g s, steps %.9g s", f, st);
    /* flow: one chunk in flight per connection, the pipeline as in steps */
    double fl = nvls_eval(t, TC_ALGO_NCCL_NVLS, 8, S / 16, TC_MODE_FLOW, &r);
    double st16 = nvls_eval(t, TC_ALGO_NCCL_NVLS, 8, S / 16, TC_MODE_STEPS, &r);
    if (fabs(fl - st16) > 0.01 * st16)
        fail_msg("1 GiB: flow %.9g s, steps %.9g s", fl, st16);
    nvls_eval(t, TC_ALGO_NCCL_NVLS, 8, S, TC_MODE_STEPS, &r);
    double busbw = 2.0 * 7 / 8 * S / st, want = 14.0 / 9 * 5 / 6 * bw;
    if (!(busbw > bw) || fabs(busbw - want) > 0.005 * want)
        fail_msg("busbw %.6g GB/s, by hand %.6g GB/s (line rate %.6g)", busbw / 1e9, want / 1e9, bw / 1e9);
    /* the lower bound of a reducing switch: S each way through the node link */
    if (r.lower_bound_s > st || fabs(r.lower_bound_s - S / (bw + 50e9)) > 1e-9 * r.lower_bound_s)
        fail_msg("lower bound %.9g s, by hand %.9g s", r.lower_bound_s, S / (bw + 50e9));
    /* NCCL's model */
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 8, .bytes = 1 << 30, .elt = 4};
    tc_algo a;
    double pred;
    assert_int_equal(tc_nccl_choose(&req, t, &a, &pred), TC_PROTO_SIMPLE);
    assert_int_equal(a, TC_ALGO_NCCL_NVLS);
    double alg = 8 * 40 * 5.0 / 6;
    if (fabs(pred - (25 + req.bytes / (1000 * alg)) * 1e-6) > 1e-12)
        fail_msg("NCCL's NVLS time %.9g s, by hand %.9g s", pred, (25 + req.bytes / (1000 * alg)) * 1e-6);
    double ll = 141.0 * 8 / 14, cross = 10 / (1 / ll - 1 / alg) * 1000;
    req.bytes = floor(cross * 0.99);
    assert_int_equal(tc_nccl_choose(&req, t, &a, NULL), TC_PROTO_LL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    req.bytes = ceil(cross * 1.01);
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_NVLS);
    req.algo_mask = 1 | 2; /* NCCL_ALGO=Ring,Tree */
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    req.algo_mask = 4; /* NVLS only, at 8-bit elements: no NVLS, so the ring */
    req.elt = 1;
    tc_nccl_choose(&req, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);

    /* All-gather (and reduce-scatter) by NVLS: each GPU receives S (sends
     * S/8), 6/5 on the wire: busbw 7/8 x 5/6 node_bw, below the ring's 7/8
     * node_bw, as NVIDIA says of it (https://github.com/NVIDIA/nccl/issues/
     * 1506); NCCL's model: 266.7 GB/s algbw against the ring's 370.8 x 8/7,
     * so NCCL picks the ring. */
    for (int rs = 0; rs < 2; rs++) {
        tc_coll_req g = {.op = rs ? TC_OP_REDUCESCATTER : TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL_NVLS, .p = 8,
                         .bytes = S, .elt = 4};
        tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DMODK};
        tc_err e2 = {{0}};
        if (tc_evaluate(t, &g, &o, &r, &e2) != TC_OK)
            fail_msg("%s: %s", tc_op_name(g.op), e2.msg);
        double bb = 7.0 / 8 * S / r.time_s, w = 7.0 / 8 * 5 / 6 * bw;
        if (fabs(bb - w) > 0.005 * w)
            fail_msg("%s busbw %.6g GB/s, by hand %.6g", tc_op_name(g.op), bb / 1e9, w / 1e9);
        g.algo = TC_ALGO_NCCL;
        tc_nccl_choose(&g, t, &a, NULL);
        assert_int_equal(a, TC_ALGO_NCCL_RING);
        g.algo_mask = 4;
        tc_nccl_choose(&g, t, &a, NULL);
        assert_int_equal(a, TC_ALGO_NCCL_NVLS);
    }
    tc_topo_free(t);

    /* Where it cannot run, one line says why. */
    tc_err err = {{0}};
    t = topo("clos:down=8,up=1,node=8,arch=hopper");
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 8, t, &err));
    assert_non_null(strstr(err.msg, "node_reduce=1"));
    tc_topo_free(t);
    t = topo("clos:down=8,up=1,node=8,node_reduce=1,arch=ampere");
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 8, t, &err));
    assert_non_null(strstr(err.msg, "Hopper"));
    tc_topo_free(t);
    t = topo("clos:down=2x8,up=1x2,node=8,node_reduce=1");
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 16, t, &err));
    assert_non_null(strstr(err.msg, "nccl-nvls-tree"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS_TREE, 8, t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLGATHER, TC_ALGO_NCCL_NVLS_TREE, 16, t, &err));
    assert_false(tc_coll_valid(TC_OP_BROADCAST, TC_ALGO_NCCL_NVLS, 8, t, &err));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 2, t, &err));
    assert_non_null(strstr(err.msg, "more than 2 GPUs"));
    {
        /* NVLS across nodes runs over CollNet, which NCCL turns off on
         * nodes of more than 8 GPUs (init.cc:1196-1200, tuning.cc:286-290):
         * refused there even with SHARP, and NCCL's choice takes NVLSTree */
        tc_topo *t16 = topo("clos:down=4x16,up=1x4,bw=400Gbps,node=16,node_bw=370.8GB/s,node_reduce=1,arch=hopper,"
                            "sharp=1");
        assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 64, t16, &err));
        assert_non_null(strstr(err.msg, "more than 8 GPUs"));
        tc_coll_req q = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL, .p = 64, .bytes = 1 << 30, .elt = 4};
        tc_algo a16;
        tc_nccl_choose(&q, t16, &a16, NULL);
        assert_int_equal(a16, TC_ALGO_NCCL_NVLS_TREE);
        tc_topo_free(t16);
        /* the same with nodes of 8: NVLS over CollNet is NCCL's choice */
        t16 = topo("clos:down=8x8,up=1x8,bw=400Gbps,node=8,node_bw=370.8GB/s,node_reduce=1,arch=hopper,sharp=1");
        assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS, 64, t16, &err));
        tc_nccl_choose(&q, t16, &a16, NULL);
        assert_int_equal(a16, TC_ALGO_NCCL_NVLS);
        tc_topo_free(t16);
    }
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_NVLS_TREE, 16, t, &err));
    /* NVLSTree across two nodes: formula and steps agree; the NICs (one
     * 400 Gb/s per GPU) carry S per node and direction over both trees,
     * so NVLink's 9/8 x 6/5 S binds at 2 nodes as on one */
    double ft = nvls_eval(t, TC_ALGO_NCCL_NVLS_TREE, 16, S, TC_MODE_FORMULA, &r);
    double sp = nvls_eval(t, TC_ALGO_NCCL_NVLS_TREE, 16, S, TC_MODE_STEPS, &r);
    if (fabs(ft - sp) > 1e-9 * sp)
        fail_msg("tree: formula %.9g s, steps %.9g s", ft, sp);
    if (fabs(sp - 9.0 / 8 * 6 / 5 * S / 450e9) > 0.01 * sp)
        fail_msg("tree: %.9g s, by hand %.9g s", sp, 9.0 / 8 * 6 / 5 * S / 450e9);
    /* and flow, at 1 GiB, within 2% of steps (lanes progress on their own) */
    double tf = nvls_eval(t, TC_ALGO_NCCL_NVLS_TREE, 16, S / 16, TC_MODE_FLOW, &r);
    double ts = nvls_eval(t, TC_ALGO_NCCL_NVLS_TREE, 16, S / 16, TC_MODE_STEPS, &r);
    if (fabs(tf - ts) > 0.02 * ts)
        fail_msg("tree 1 GiB: flow %.9g s, steps %.9g s", tf, ts);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nccl_ring_moves_the_right_data),
        cmocka_unit_test(nccl_chains_move_the_right_data),
        cmocka_unit_test(nccl_chain_on_one_node_by_hand),
        cmocka_unit_test(ll_chain_forwards_lines),
        cmocka_unit_test(chain_is_timed_as_a_pipeline),
        cmocka_unit_test(chain_fill_and_drain_by_bisection_are_exact),
        cmocka_unit_test(hops_between_nodes_stay_on_their_rail),
        cmocka_unit_test(protocol_costs_are_nccls),
        cmocka_unit_test(efa_network_steps_cost_the_plugins_latency),
        cmocka_unit_test(net_lat_and_net_eff_calibrate_the_transport),
        cmocka_unit_test(evaluators_agree_and_skipping_is_exact),
        cmocka_unit_test(ring_with_a_slow_link_takes_its_time),
        cmocka_unit_test(ring_recovers_after_a_disturbance),
        cmocka_unit_test(tree_and_pat_take_in_flow_what_they_take_in_steps),
        cmocka_unit_test(nccl_flow_agrees_with_steps_at_random),
        cmocka_unit_test(small_tree_all_reduce_is_monotone),
        cmocka_unit_test(tree_rate_by_hand),
        cmocka_unit_test(one_nvswitch_node_by_hand),
        cmocka_unit_test(ring_graph_on_one_node_is_nccls_search),
        cmocka_unit_test(ring_graph_across_nodes_is_nccls_search),
        cmocka_unit_test(blackwell_nvlink_as_nccl_2_21_counts_it),
        cmocka_unit_test(collnet_widens_the_communicators_channels),
        cmocka_unit_test(nvls_raises_the_p2p_channels),
        cmocka_unit_test(nvls_graph_across_nodes_is_nccls_search),
        cmocka_unit_test(nccl_chooses_protocols_as_its_model),
        cmocka_unit_test(nccl_model_refinements_as_tuning_cc),
        cmocka_unit_test(node_trees_are_nccls),
        cmocka_unit_test(nccl_tree_moves_the_right_data_and_times_as_nccl),
        cmocka_unit_test(nccl_nvls_moves_the_right_data),
        cmocka_unit_test(nvls_on_one_h100_node_by_hand),
        cmocka_unit_test(nvls_fewer_channels_move_less),
        cmocka_unit_test(nvls_only_for_its_types_and_operators),
        cmocka_unit_test(nic_path_turns_ll128_off_across_nodes),
        cmocka_unit_test(credits_bind_in_flow_on_slow_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
