/*
 * test_nccl_more.c - NCCL's PAT (nccl-pat, v2.23.4-1) and all-to-all
 * (nccl-a2a, grouped send/recv as nccl-tests runs it): the schedules
 * executed on real buffers (tc_sched_check, sampled for PAT up to 1,024
 * ranks); PAT's latency and NCCL's choice of PAT by hand; all-to-all's time
 * on a non-blocking Clos by hand; formula, steps and flow.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "topocc/eval.h"
#include "topocc/topo.h"
#include "coll/algos.h"
#include "build_helpers.h"
#include "coll_topos.h"

static tc_sched *build(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes, uint32_t elt,
                       uint32_t channels)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .elt = elt, .channels = channels};
    tc_err err = {{0}};
    if (elt && tc_coll_round(&req, &err) != TC_OK)
        fail_msg("round: %s", err.msg);
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s %s p=%u bytes=%g: %s", tc_algo_name(a), tc_op_name(op), p, bytes, err.msg);
    return s;
}

/* PAT on every rank count from 2 to 64, both operations, 1, 3 and the
 * default channels, sizes that aggregate many ranks per FIFO step (small),
 * a few and none over several chunks (large); then sampled up to 1,024
 * ranks. */
static void pat_moves_the_right_data(void **state)
{
    (void)state;
    static const tc_op ops[] = {TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    static const double per_rank[] = {1000, 60000, 1500000};
    static const uint32_t chans[] = {0, 1, 3};
    int checked = 0, aggregated = 0, looped = 0;
    for (size_t oi = 0; oi < 2; oi++)
        for (uint32_t p = 2; p <= 64; p++)
            for (size_t si = 0; si < 3; si++)
                for (size_t ci = 0; ci < 3; ci++) {
                    if (p > 12 && p % 7 && ci == 1)
                        continue; /* keep the suite fast: one channel on a sample */
                    tc_sched *s = build(NULL, ops[oi], TC_ALGO_NCCL_PAT, p, per_rank[si] * p, 4, chans[ci]);
                    tc_err err = {{0}};
                    tc_status st = s->nslots <= 4096 ? tc_sched_check(s, &err) : tc_sched_check_sampled(s, 64, 3, &err);
                    if (st != TC_OK)
                        fail_msg("%s p=%u bytes/rank=%g channels=%u: %s", tc_op_name(ops[oi]), p, per_rank[si],
                                 chans[ci], err.msg);
                    assert_int_equal(s->proto, TC_PROTO_SIMPLE);
                    aggregated += s->params[1] > 1;
                    looped += s->nblk > p * s->channels;
                    checked++;
                    tc_sched_free(s);
                }
    static const uint32_t big[] = {100, 255, 257, 511, 1000, 1024};
    for (size_t oi = 0; oi < 2; oi++)
        for (size_t i = 0; i < sizeof big / sizeof *big; i++)
            for (size_t si = 0; si < 2; si++) {
                tc_sched *s = build(NULL, ops[oi], TC_ALGO_NCCL_PAT, big[i], per_rank[si] * big[i], 4, 0);
                tc_err err = {{0}};
                if (tc_sched_check_sampled(s, 24, 11, &err) != TC_OK)
                    fail_msg("%s p=%u sampled: %s", tc_op_name(ops[oi]), big[i], err.msg);
                checked++;
                tc_sched_free(s);
            }
    assert_true(aggregated > 100 && looped > 100);
    printf("%d nccl-pat schedules checked (%d aggregated, %d of several chunks)\n", checked, aggregated, looped);
}

/* PAT runs where NCCL enables it only, and says why elsewhere. */
static void pat_is_refused_where_nccl_disables_it(void **state)
{
    (void)state;
    tc_topo t8 = node_topo(64, 8), t1 = node_topo(64, 1);
    tc_err err = {{0}};
    assert_false(tc_coll_valid(TC_OP_ALLGATHER, TC_ALGO_NCCL_PAT, 64, &t8, &err));
    assert_non_null(strstr(err.msg, "one GPU per node"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_PAT, 64, &t1, &err));
    assert_true(tc_coll_valid(TC_OP_REDUCESCATTER, TC_ALGO_NCCL_PAT, 64, &t1, &err));
    /* NCCL's choice never takes PAT on nodes of 8 GPUs */
    tc_topo *t = topo("clos:down=8x8,up=8x8,node=8,rail=8");
    for (double b = 1024; b < 1e10; b *= 8) {
        tc_coll_req q = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL, .p = 64, .bytes = b};
        tc_algo a = TC_ALGO_NCCL;
        tc_nccl_choose(&q, t, &a, NULL);
        assert_int_not_equal(a, TC_ALGO_NCCL_PAT);
    }
    tc_topo_free(t);
}

static double eval(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes, tc_mode mode, tc_result *r)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_flow_opts fo = {0};
    tc_eval_opts o = {.mode = mode, .routing = TC_ROUTE_DMODK, .flow = &fo};
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, r, &err) != TC_OK)
        fail_msg("%s %s %g B: %s", tc_algo_name(a), tc_op_name(op), bytes, err.msg);
    return r->time_s;
}

/* PAT's latency is NCCL's: 8 + log2(nodes) x 14 / 3.5 + nodes x 2.8 us
 * (tuning.cc:276-281 at v2.23.4-1; interLat the tree's network latency,
 * 14 us, with one rank per node): 42.4 us on 8 nodes, 68.8 on 16. NCCL's
 * choice on 16 nodes of one 400 Gb/s NIC (NCCL's ring graph: one channel
 * of 48 GB/s, the first listed speed within the NIC's 50, doubled to 2 of
 * 24: bus 48 GB/s, 4 channels run): Ring LL 47.1 + S / 21,760 (20.4 GB/s
 * llMaxBw x 16/15), PAT 68.8 + S / 40,800 (48 x 0.85), Ring Simple 218.4 +
 * S / 51,200 (8.4 + 15 x 14 us; 48 x 16/15), Ring LL128 (never best): PAT
 * from 1,011,842 bytes to 30,048,900 bytes. */
static void pat_latency_and_choice_by_hand(void **state)
{
    (void)state;
    tc_topo *t8 = topo("clos:down=4x2,up=1x4");
    tc_sched *s = build(t8, TC_OP_ALLGATHER, TC_ALGO_NCCL_PAT, 8, 8 * 1024, 4, 0);
    assert_true(fabs(s->base_s - 42.4e-6) < 1e-12);
    assert_true(fabs(s->wire - 1 / 0.85) < 1e-12);
    tc_sched_free(s);
    tc_result r;
    double f = eval(t8, TC_OP_ALLGATHER, TC_ALGO_NCCL_PAT, 8, 8 * 16, TC_MODE_FORMULA, &r);
    if (fabs(f - 42.4e-6) > 0.01e-6)
        fail_msg("8 nodes, 128 B: %.9g s, by hand 42.4 us", f);
    tc_topo_free(t8);

    tc_topo *t = topo("clos:down=4x4,up=1x4");
    double lo = (68.8 - 47.1) / (1 / 21760.0 - 1 / 40800.0), hi = (218.4 - 68.8) / (1 / 40800.0 - 1 / (48000.0 * 16 / 15));
    struct {
        double bytes;
        tc_algo a;
        tc_proto p;
    } c[] = {{lo * 0.98, TC_ALGO_NCCL_RING, TC_PROTO_LL},    {lo * 1.02, TC_ALGO_NCCL_PAT, TC_PROTO_SIMPLE},
             {hi * 0.98, TC_ALGO_NCCL_PAT, TC_PROTO_SIMPLE}, {hi * 1.02, TC_ALGO_NCCL_RING, TC_PROTO_SIMPLE}};
    for (int op = 0; op < 2; op++)
        for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
            tc_coll_req q = {.op = op ? TC_OP_ALLGATHER : TC_OP_REDUCESCATTER, .algo = TC_ALGO_NCCL, .p = 16,
                             .bytes = c[i].bytes};
            tc_algo a = TC_ALGO_NCCL;
            double pred = 0;
            tc_proto pr = tc_nccl_choose(&q, t, &a, &pred);
            if (a != c[i].a || pr != c[i].p)
                fail_msg("%.0f B: %s %s, NCCL's model %s %s", c[i].bytes, tc_algo_name(a), tc_proto_name(pr),
                         tc_algo_name(c[i].a), tc_proto_name(c[i].p));
            if (a == TC_ALGO_NCCL_PAT && fabs(pred - (68.8 + c[i].bytes / 40800) * 1e-6) > 1e-12)
                fail_msg("PAT predicted %.9g s", pred);
        }
    /* on two nodes PAT's model reads the tree graph's bwIntra, raised
     * with one GPU a node through the speeds above bwInter 24 to 48, twice
     * it (search.cc:1025-1028): 2 search channels x 48 x 0.85 */
    tc_topo *t2 = topo("clos:down=2,up=1");
    double T2[2], S2[2] = {1 << 28, 1 << 29};
    for (int i = 0; i < 2; i++) {
        tc_coll_req q2 = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL_PAT, .p = 2, .bytes = S2[i]};
        T2[i] = tc_nccl_pat_time_us(&q2, t2);
    }
    if (fabs((S2[1] - S2[0]) / (T2[1] - T2[0]) - 81.6e3) > 1e-6 * 81.6e3)
        fail_msg("PAT on two nodes: %.9g B/us, by hand 81.6e3", (S2[1] - S2[0]) / (T2[1] - T2[0]));
    tc_topo_free(t2);
    /* NCCL_ALGO's PAT: alone it leaves none of Ring, Tree, NVLS and
     * NVLSTree, so NCCL turns Ring and Tree on again (no CollNet:
     * tuning.cc:306-314 at v2.23.4-1): PAT where it wins (4 MB), the ring
     * at 1 GiB */
    tc_coll_req q = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 4e6, .algo_mask = 16};
    tc_algo a = TC_ALGO_NCCL;
    tc_nccl_choose(&q, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_PAT);
    q.bytes = 1 << 30;
    tc_nccl_choose(&q, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    q.bytes = 2e6;
    q.algo_mask = 1 | 2 | 4 | 8; /* ^PAT */
    tc_nccl_choose(&q, t, &a, NULL);
    assert_int_equal(a, TC_ALGO_NCCL_RING);
    uint8_t m = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_nccl_algo_parse("pat", &m, &err), TC_OK);
    assert_int_equal(m, 16);
    assert_int_equal(tc_nccl_algo_parse("^PAT", &m, &err), TC_OK);
    assert_int_equal(m, 15 | 32 | 64);
    tc_coll_req spec = {0};
    assert_int_equal(tc_algo_parse("nccl:algo=Ring|PAT", &spec, &err), TC_OK);
    assert_int_equal(spec.algo_mask, 17);
    char buf[96];
    assert_string_equal(tc_algo_format(&spec, buf, sizeof buf), "nccl:algo=Ring|PAT");
    assert_string_equal(tc_nccl_algo_label(TC_ALGO_NCCL_PAT), "PAT");
    /* the evaluation reports PAT as NCCL's choice */
    eval(t, TC_OP_ALLGATHER, TC_ALGO_NCCL, 16, 4e6, TC_MODE_FORMULA, &r);
    assert_int_equal(r.nccl_impl, TC_ALGO_NCCL_PAT);
    tc_topo_free(t);
}

/* All-to-all on every rank count from 1 to 64, with nodes of 1, 3, 4 and 8
 * GPUs (3: peer steps beyond the node's GPUs, ALIGN_POWER(3, 8) = 4), LL
 * and Simple sizes, several channels. */
static void a2a_moves_the_right_data(void **state)
{
    (void)state;
    static const uint32_t Gs[] = {1, 3, 4, 8};
    static const double per_peer[] = {256, 100000, 3000000};
    static const uint32_t chans[] = {0, 4, 16};
    int checked = 0, ll = 0, lanes = 0;
    for (size_t gi = 0; gi < 4; gi++)
        for (uint32_t p = 1; p <= 64; p++) {
            uint32_t G = Gs[gi];
            if (p > G && p % G)
                continue;
            tc_topo t = node_topo(p, G);
            for (size_t si = 0; si < 3; si++)
                for (size_t ci = 0; ci < 3; ci++) {
                    if (p > 16 && (si == 1 || ci == 1))
                        continue;
                    tc_sched *s = build(&t, TC_OP_ALLTOALL, TC_ALGO_NCCL_A2A, p, per_peer[si] * p * p, 4, chans[ci]);
                    tc_err err = {{0}};
                    if (tc_sched_check(s, &err) != TC_OK)
                        fail_msg("G=%u p=%u bytes/peer=%g channels=%u: %s", G, p, per_peer[si], chans[ci], err.msg);
                    ll += s->proto == TC_PROTO_LL;
                    lanes += s->nblk > p;
                    checked++;
                    tc_sched_free(s);
                }
        }
    assert_true(ll > 50 && lanes > 50);
    printf("%d nccl-a2a schedules checked (%d LL, %d on several channels per peer)\n", checked, ll, lanes);

    /* NCCL's peer order (init.cc:1313-1334): for d = 0 .. nodes/4 the node
     * deltas d, -d, nodes/2 - d, -(nodes/2 - d), none twice (PXN off, so
     * that every peer step is one schedule step of direct sends) */
    tc_topo t = node_topo(40, 8);
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL_A2A, .p = 40, .bytes = 40.0 * 40 * 1024, .elt = 4};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_nccl_a2a_build(&req, &t, false, &s, &err) != TC_OK)
        fail_msg("nccl-a2a without PXN: %s", err.msg);
    static const int want[] = {0, 2, 3, 1, 4}; /* 5 nodes: 0, then 2, 3 (-2), then 1, 4 (-1) */
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (int d = 0; d < 5; d++) {
        uint32_t step = d == 0 ? 0 : 7 + 8 * (uint32_t)(d - 1); /* 7 steps inside the node, then 8 per delta */
        assert_int_equal(tc_sched_emit(s, step, &x), TC_OK);
        assert_true(x.n > 0);
        assert_int_equal((x.v[0].dst / 8 + 5 - x.v[0].src / 8) % 5, want[d]);
    }
    assert_int_equal(s->nsteps, 39);
    tc_xfers_free(&x);
    tc_sched_free(s);
}

/* All-to-all at a large size on a non-blocking two-tier Clos (one 400
 * Gb/s NIC per rank): every peer step is a permutation that fills every
 * NIC, so the time is (p - 1)/p x S over the injection rate, plus NCCL's
 * ring base latency and two network hops (8.4 + 2 x 14 us: each peer's two
 * pieces on two of the 16 channels, the 16 peer-order entries two groups
 * of 8, so every channel runs two works); formula and steps agree, and
 * flow (D-mod-k) too, less what it overlaps of one channel's hops with the
 * other channels' data (at most the two hops). nccl picks it for
 * all-to-all, LL at 16 KiB per peer and below. */
static void a2a_by_hand_and_as_nccls_choice(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x4");
    double S = 256.0 * 1024 * 1024, want = 15.0 / 16 * S / 50e9 + 36.4e-6;
    tc_result r;
    double f = eval(t, TC_OP_ALLTOALL, TC_ALGO_NCCL_A2A, 16, S, TC_MODE_FORMULA, &r);
    double st = eval(t, TC_OP_ALLTOALL, TC_ALGO_NCCL_A2A, 16, S, TC_MODE_STEPS, &r);
    double fl = eval(t, TC_OP_ALLTOALL, TC_ALGO_NCCL_A2A, 16, S / 16, TC_MODE_FLOW, &r);
    double f16 = eval(t, TC_OP_ALLTOALL, TC_ALGO_NCCL_A2A, 16, S / 16, TC_MODE_FORMULA, &r);
    if (fabs(f - want) > 1e-6 * want || fabs(st - f) > 1e-9 * f || fl > 1.02 * f16 || fl < 0.98 * f16 - 28e-6)
        fail_msg("a2a: formula %.9g steps %.9g s (by hand %.9g); 16 MiB flow %.9g formula %.9g", f, st, want, fl, f16);
    eval(t, TC_OP_ALLTOALL, TC_ALGO_NCCL, 16, S, TC_MODE_FORMULA, &r);
    assert_int_equal(r.nccl_impl, TC_ALGO_NCCL_A2A);
    assert_true(fabs(r.time_s - f) < 1e-9 * f);
    tc_coll_req q = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_NCCL, .p = 16, .bytes = 16384.0 * 16};
    tc_algo a = TC_ALGO_NCCL;
    assert_int_equal(tc_nccl_choose(&q, t, &a, NULL), TC_PROTO_LL);
    assert_int_equal(a, TC_ALGO_NCCL_A2A);
    q.bytes = 16400.0 * 16;
    assert_int_equal(tc_nccl_choose(&q, t, &a, NULL), TC_PROTO_SIMPLE);
    assert_string_equal(tc_nccl_algo_label(TC_ALGO_NCCL_A2A), "AllToAll");
    assert_string_equal(tc_nccl_op_label(TC_ALGO_NCCL_A2A, TC_OP_ALLTOALL), "AllToAll");
    assert_string_equal(tc_nccl_op_label(TC_ALGO_NCCL_A2A, TC_OP_SENDRECV), "SendRecv");
    assert_string_equal(tc_nccl_op_label(TC_ALGO_NCCL_TREE, TC_OP_ALLREDUCE), "Tree");
    tc_topo_free(t);
}

/* PAT: formula and steps agree at every size; flow runs and, where every
 * message fills the NICs alike, agrees with them. */
static void pat_evaluators_agree(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x4");
    for (int op = 0; op < 2; op++)
        for (double b = 4096; b < 3e9; b *= 32) {
            tc_op o = op ? TC_OP_ALLGATHER : TC_OP_REDUCESCATTER;
            tc_result r;
            double f = eval(t, o, TC_ALGO_NCCL_PAT, 16, b, TC_MODE_FORMULA, &r);
            double st = eval(t, o, TC_ALGO_NCCL_PAT, 16, b, TC_MODE_STEPS, &r);
            if (fabs(f - st) > 1e-9 * f)
                fail_msg("%s %g B: formula %.9g steps %.9g", tc_op_name(o), b, f, st);
            if (b < 1e8) {
                double fl = eval(t, o, TC_ALGO_NCCL_PAT, 16, b, TC_MODE_FLOW, &r);
                if (fabs(fl - f) > 0.02 * f)
                    fail_msg("%s %g B: formula %.9g flow %.9g", tc_op_name(o), b, f, fl);
            }
        }
    /* at a large size the bandwidth term: (p-1)/p S over 0.85 of the NIC */
    tc_result r;
    double S = 1 << 30, f = eval(t, TC_OP_ALLGATHER, TC_ALGO_NCCL_PAT, 16, S, TC_MODE_FORMULA, &r);
    double want = 68.8e-6 + 15.0 / 16 * S / (0.85 * 50e9);
    if (fabs(f - want) > 0.005 * want)
        fail_msg("PAT 1 GiB: %.9g s, by hand %.9g", f, want);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pat_moves_the_right_data),
        cmocka_unit_test(pat_is_refused_where_nccl_disables_it),
        cmocka_unit_test(pat_latency_and_choice_by_hand),
        cmocka_unit_test(a2a_moves_the_right_data),
        cmocka_unit_test(a2a_by_hand_and_as_nccls_choice),
        cmocka_unit_test(pat_evaluators_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
