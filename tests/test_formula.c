/*
 * test_formula.c - the closed-form evaluator against hand-computed values
 * and against the steps evaluator (which routes every transfer), and the
 * lower bound against the reference's bounds.
 *
 * Hand values use 400 Gbps = 50e9 B/s links and 1 us per link unless said.
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

#define BW 50e9
#define US 1e-6

static tc_topo *build(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

static void assert_close(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%s: got %.12g, expected %.12g (rel %.3g)", what, got, want, fabs(got - want) / fabs(want));
}

static double formula(const tc_topo *t, const tc_sched *s, tc_routing r)
{
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = r};
    double v = -1;
    tc_err err = {{0}};
    if (tc_eval_formula(t, s, &o, &v, &err) != TC_OK)
        fail_msg("formula: %s", err.msg);
    return v;
}

static double steps(const tc_topo *t, const tc_sched *s, tc_routing r)
{
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = r};
    double v = -1;
    tc_err err = {{0}};
    if (tc_eval_steps(t, s, &o, &v, &err) != TC_OK)
        fail_msg("steps: %s", err.msg);
    return v;
}

static tc_sched *coll(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes)
{
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(a), p, err.msg);
    return s;
}

/* A one-phase schedule whose step is exactly the pattern: SHIFT (r -> r+arg
 * mod p) or XOR (r -> r^arg, partners >= p idle), bytes per transfer. */
static tc_status emit_pattern(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    (void)step;
    uint32_t p = s->req.p;
    const tc_phase *ph = &s->phases[0];
    for (uint32_t r = 0; r < p; r++) {
        uint64_t d;
        if (ph->pat == TC_PAT_XOR) {
            d = r ^ (uint64_t)ph->arg;
            if (d >= p)
                continue;
        } else {
            int64_t a = ph->arg % (int64_t)p;
            d = (r + (uint64_t)(a + (int64_t)p)) % p;
        }
        tc_xfers_add(x, r, (uint32_t)d, ph->bytes, false);
    }
    return TC_OK;
}

static tc_sched *pattern(uint32_t p, tc_pattern pat, int64_t arg, double bytes)
{
    tc_sched *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->req.p = p;
    s->emit = emit_pattern;
    assert_non_null(tc_sched_add_phase(s, 1, pat, arg, bytes, "pattern"));
    return s;
}

/* ---- Clos ---- */

static void ring_allreduce_matches_hand_value_on_two_tier_clos(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 64.0 * 1024 * 1024;
    tc_sched *s = coll(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S);
    /* 2 x 63 steps; the 8 leaf-crossing pairs climb to the spines (4 links,
     * 4 us), one flow per link: (S/64) / 50e9 each. */
    double want = 126 * (4 * US + (S / 64) / BW);
    assert_close(formula(t, s, TC_ROUTE_DMODK), want, 1e-12, "ring formula");
    assert_close(steps(t, s, TC_ROUTE_DMODK), want, 1e-12, "ring steps");
    tc_sched_free(s);
    tc_topo_free(t);
}

static void ring_allreduce_busbw_reaches_injection_bandwidth_at_4GiB(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 4.0 * 1024 * 1024 * 1024;
    tc_sched *s = coll(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, S);
    double tt = formula(t, s, TC_ROUTE_DMODK);
    double busbw = 2.0 * 63 / 64 * S / tt;
    /* Each of the 126 steps moves S/64 = 64 MiB in 1.342 ms after 4 us of
     * latency: busbw = B / (1 + 4 us x 64 B / S) = 0.99703 B. */
    assert_close(busbw, BW / (1 + 4 * US * 64 * BW / S), 1e-12, "busbw");
    assert_true(busbw > 0.995 * BW);
    tc_sched_free(s);
    tc_topo_free(t);
}

static void ring_on_three_tier_clos_pays_the_core_latency(void **state)
{
    (void)state;
    /* XGFT(3; 4,4,4; 1,4,4): 64 hosts, pods of 16; the ring crosses the
     * core between pods: 6 links, 6 us. */
    tc_topo *t = build("clos:down=4x4x4,up=1x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 20;
    tc_sched *s = coll(t, TC_OP_ALLGATHER, TC_ALGO_RING, 64, S);
    double want = 63 * (6 * US + (S / 64) / BW);
    assert_close(formula(t, s, TC_ROUTE_DMODK), want, 1e-12, "formula");
    assert_close(steps(t, s, TC_ROUTE_DMODK), want, 1e-12, "steps");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Every shift distance and every XOR mask on full non-blocking trees: the
 * formula equals the steps evaluator under D-mod-k. */
static void shifts_and_xors_equal_steps_on_full_nonblocking_clos(void **state)
{
    (void)state;
    static const char *specs[] = {
        "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=1x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=2x2x4,bw=400Gbps,lat=1us,lat2=2us,hop_lat=0,alpha=0",
        "clos:down=4x6,up=1x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=8x4,up=1x4,bw1=100Gbps,bw2=200Gbps,lat=500ns,hop_lat=0,alpha=0",
        "clos:down=8x8,up=1x8,node=4,node_bw=450GB/s,lat=1us,hop_lat=0,alpha=0",
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = build(specs[i]);
        uint32_t p = t->n_endpoints;
        for (uint32_t k = 1; k < p; k++) {
            tc_sched *s = pattern(p, TC_PAT_SHIFT, k, 1e6);
            char what[160];
            snprintf(what, sizeof what, "%s shift %u", specs[i], k);
            assert_close(formula(t, s, TC_ROUTE_DMODK), steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
            tc_sched_free(s);
            if ((p & (p - 1)) == 0) {
                s = pattern(p, TC_PAT_XOR, k, 1e6);
                snprintf(what, sizeof what, "%s xor %u", specs[i], k);
                assert_close(formula(t, s, TC_ROUTE_DMODK), steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
                tc_sched_free(s);
            }
        }
        tc_topo_free(t);
    }
}

/* Part of the machine, or an oversubscribed tree: the formula is the steps
 * result when D-mod-k spreads the class evenly, never below it. */
static void shifts_on_partial_or_oversubscribed_clos_never_undercut_steps(void **state)
{
    (void)state;
    static const char *specs[] = {
        "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=8x8,up=1x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=1x2x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=6x5,up=1x3,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
    };
    static const uint32_t ps[] = {2, 5, 12, 20, 29, 37, 48, 63};
    int equal = 0, total = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = build(specs[i]);
        for (size_t j = 0; j < sizeof ps / sizeof *ps; j++) {
            uint32_t p = ps[j] <= t->n_endpoints ? ps[j] : t->n_endpoints;
            for (uint32_t k = 1; k < p; k++) {
                tc_sched *s = pattern(p, TC_PAT_SHIFT, k, 1e6);
                double f = formula(t, s, TC_ROUTE_DMODK), st = steps(t, s, TC_ROUTE_DMODK);
                if (f < st * (1 - 1e-9))
                    fail_msg("%s p=%u shift %u: formula %.9g below steps %.9g", specs[i], p, k, f, st);
                equal += f <= st * (1 + 1e-9);
                total++;
                tc_sched_free(s);
            }
        }
        tc_topo_free(t);
    }
    /* The class analysis is exact on most of them. */
    assert_true(equal * 10 >= total * 8);
}

static tc_sched *coll_rooted(const tc_topo *t, tc_op op, tc_algo a, uint32_t p, double bytes, uint32_t chunks,
                             uint32_t root)
{
    /* binomial:tree=highbit: its levels are shifts sent by a range of ranks. */
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .chunks = chunks, .root = root,
                       .variant = a == TC_ALGO_BINOMIAL ? TC_VARIANT_HIGHBIT : TC_VARIANT_DEFAULT};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u root=%u: %s", tc_op_name(op), tc_algo_name(a), p, root, err.msg);
    return s;
}

/* Binomial tree levels (binomial:tree=highbit) and chain fill and drain are
 * shifts sent by a range of ranks: only the pairs that exist climb the tree. */
static void partial_shifts_of_trees_and_chains_equal_steps_on_nonblocking_clos(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double b = 1 << 20;
    static const uint32_t roots[] = {0, 5};
    /* Binomial from 0: levels 1, 2, 4 stay in leaf 0 (2 us), 8, 16, 32
     * cross the spines (4 us). From 5 only 5 -> 6 stays in its leaf. */
    static const double binomial_us[] = {3 * 2 + 3 * 4, 2 + 5 * 4};
    /* Chain from 0 with 8 chunks: 70 steps; a step crosses a leaf when an
     * active position is 7 mod 8, i.e. in steps 7 .. 62 (56 of them). */
    static const double chain_us[] = {14 * 2 + 56 * 4};
    for (size_t i = 0; i < 2; i++) {
        char what[128];
        tc_sched *s = coll_rooted(t, TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 64, b, 0, roots[i]);
        double f = formula(t, s, TC_ROUTE_DMODK);
        snprintf(what, sizeof what, "binomial broadcast root %u", roots[i]);
        assert_close(f, steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
        assert_close(f, binomial_us[i] * US + 6 * b / BW, 1e-12, what);
        tc_sched_free(s);

        s = coll_rooted(t, TC_OP_BROADCAST, TC_ALGO_RING, 64, b, 8, roots[i]);
        f = formula(t, s, TC_ROUTE_DMODK);
        snprintf(what, sizeof what, "chain broadcast root %u", roots[i]);
        assert_close(f, steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
        if (roots[i] == 0)
            assert_close(f, chain_us[0] * US + 70 * (b / 8) / BW, 1e-12, what);
        tc_sched_free(s);

        /* The same trees and chains backwards. */
        s = coll_rooted(t, TC_OP_REDUCE, TC_ALGO_BINOMIAL, 64, b, 0, roots[i]);
        snprintf(what, sizeof what, "binomial reduce root %u", roots[i]);
        assert_close(formula(t, s, TC_ROUTE_DMODK), steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
        tc_sched_free(s);
        s = coll_rooted(t, TC_OP_REDUCE, TC_ALGO_RING, 64, b, 8, roots[i]);
        snprintf(what, sizeof what, "chain reduce root %u", roots[i]);
        assert_close(formula(t, s, TC_ROUTE_DMODK), steps(t, s, TC_ROUTE_DMODK), 1e-9, what);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

static void xor_crossing_an_oversubscribed_leaf_is_slowed_by_the_oversubscription(void **state)
{
    (void)state;
    /* 8 hosts per leaf, 2 up-links: 4:1. A mask inside the leaf: 2 links,
     * 2 us, full rate. A mask of 8: all 8 hosts of a leaf leave through 2
     * links, 4 flows each: 4 links, 4 us, a quarter of the rate. */
    tc_topo *t = build("clos:down=8x8,up=1x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double b = 1 << 20;
    tc_sched *in = pattern(64, TC_PAT_XOR, 4, b), *out = pattern(64, TC_PAT_XOR, 8, b);
    assert_close(formula(t, in, TC_ROUTE_DMODK), 2 * US + b / BW, 1e-12, "xor 4");
    assert_close(formula(t, out, TC_ROUTE_DMODK), 4 * US + 4 * b / BW, 1e-12, "xor 8");
    assert_close(steps(t, out, TC_ROUTE_DMODK), 4 * US + 4 * b / BW, 1e-12, "xor 8 steps");
    /* The ring crosses each leaf uplink once per direction: not slowed. */
    tc_sched *ring = pattern(64, TC_PAT_SHIFT, 1, b);
    assert_close(formula(t, ring, TC_ROUTE_DMODK), 4 * US + b / BW, 1e-12, "ring");
    tc_sched_free(in);
    tc_sched_free(out);
    tc_sched_free(ring);
    tc_topo_free(t);
}

static void recursive_doubling_allreduce_on_oversubscribed_clos_matches_steps(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 24;
    tc_sched *s = coll(t, TC_OP_ALLREDUCE, TC_ALGO_RD, 64, S);
    /* 6 exchanges of S: masks 1, 2, 4 inside the leaf (2 us, S/B), masks
     * 8, 16, 32 across it (4 us, 4 S/B). */
    double want = 3 * (2 * US + S / BW) + 3 * (4 * US + 4 * S / BW);
    assert_close(formula(t, s, TC_ROUTE_DMODK), want, 1e-12, "rd formula");
    assert_close(steps(t, s, TC_ROUTE_DMODK), want, 1e-12, "rd steps");
    tc_sched_free(s);
    tc_topo_free(t);
}

static void scale_up_node_pairs_use_the_node_switch(void **state)
{
    (void)state;
    /* node=8 is the leaf: the ring's in-node pairs take 2 x 250 ns at
     * 450 GB/s, the node-crossing pair 4 us at 50 GB/s. */
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,node=8,node_bw=450GB/s,node_lat=250ns,hop_lat=0,alpha=0");
    double b = 1e8;
    tc_sched *s = pattern(64, TC_PAT_SHIFT, 1, b);
    assert_close(formula(t, s, TC_ROUTE_DMODK), 4 * US + b / BW, 1e-12, "ring");
    tc_sched_free(s);
    /* A shift of 8 leaves every node; -8 too. */
    s = pattern(64, TC_PAT_SHIFT, 8, b);
    assert_close(formula(t, s, TC_ROUTE_DMODK), 4 * US + b / BW, 1e-12, "shift 8");
    tc_sched_free(s);
    /* XOR 3 stays inside the node. */
    s = pattern(64, TC_PAT_XOR, 3, b);
    assert_close(formula(t, s, TC_ROUTE_DMODK), 0.5 * US + b / 450e9, 1e-12, "xor 3");
    assert_close(steps(t, s, TC_ROUTE_DMODK), 0.5 * US + b / 450e9, 1e-12, "xor 3 steps");
    tc_sched_free(s);
    /* Hierarchical all-reduce: LOCAL phases are 2 node hops. */
    tc_sched *h = coll(t, TC_OP_ALLREDUCE, TC_ALGO_HIER, 64, 1 << 26);
    assert_close(formula(t, h, TC_ROUTE_DMODK), steps(t, h, TC_ROUTE_DMODK), 1e-9, "hier");
    tc_sched_free(h);
    tc_topo_free(t);
}

/* ---- Torus ---- */

static void torus_rings_match_hand_values_on_wrapped_and_mesh_4x4(void **state)
{
    (void)state;
    double S = 1 << 24;
    tc_topo *w = build("torus:dims=4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    tc_topo *m = build("torus:dims=4x4,wrap=0x0,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    /* Unidirectional dimension-ordered all-reduce, 16 blocks of S/16:
     * reduce-scatter dim 0 (3 steps of 4 blocks), dim 1 (3 steps of 1
     * block), then the all-gathers back. Wrapped: 1 hop each. */
    double blk = S / 16;
    double wrap = 2 * (3 * (US + 4 * blk / BW) + 3 * (US + blk / BW));
    /* Mesh: the last-to-first transfer goes 3 hops back, alone on the
     * negative links. */
    double mesh = 2 * (3 * (3 * US + 4 * blk / BW) + 3 * (3 * US + blk / BW));
    tc_sched *s = coll(w, TC_OP_ALLREDUCE, TC_ALGO_TORUS, 16, S);
    assert_close(formula(w, s, TC_ROUTE_DOR), wrap, 1e-12, "wrap formula");
    assert_close(steps(w, s, TC_ROUTE_DOR), wrap, 1e-12, "wrap steps");
    tc_sched_free(s);
    s = coll(m, TC_OP_ALLREDUCE, TC_ALGO_TORUS, 16, S);
    assert_close(formula(m, s, TC_ROUTE_DOR), mesh, 1e-12, "mesh formula");
    assert_close(steps(m, s, TC_ROUTE_DOR), mesh, 1e-12, "mesh steps");
    tc_sched_free(s);
    /* Bidirectional on the mesh: each half's way back shares the other
     * direction's links: 3 hops at half rate, on half the data. */
    s = coll(m, TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, 16, S);
    double bi = 2 * (3 * (3 * US + 2 * 2 * blk / BW) + 3 * (3 * US + 2 * blk / 2 / BW));
    assert_close(formula(m, s, TC_ROUTE_DOR), bi, 1e-12, "mesh bi formula");
    assert_close(steps(m, s, TC_ROUTE_DOR), bi, 1e-12, "mesh bi steps");
    tc_sched_free(s);
    tc_topo_free(w);
    tc_topo_free(m);
}

static void torus_ring_algorithms_equal_steps(void **state)
{
    (void)state;
    static const char *specs[] = {
        "torus:dims=4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=4x4,wrap=0x0,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=4x3x2,wrap=1x0x1,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=8x2x5,wrap=0x1x1,bw=100Gbps,lat=300ns,hop_lat=0,alpha=0",
    };
    static const tc_algo algos[] = {TC_ALGO_TORUS, TC_ALGO_TORUS_BI, TC_ALGO_TORUS_MP};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = build(specs[i]);
        for (size_t a = 0; a < 3; a++)
            for (size_t o = 0; o < 3; o++) {
                tc_sched *s = coll(t, ops[o], algos[a], t->n_endpoints, 3e7);
                double f = formula(t, s, TC_ROUTE_DOR), st = steps(t, s, TC_ROUTE_DOR);
                char what[160];
                snprintf(what, sizeof what, "%s %s/%s", specs[i], tc_op_name(ops[o]), tc_algo_name(algos[a]));
                if (algos[a] == TC_ALGO_TORUS_MP) {
                    /* Several messages to one neighbour are charged to every ring: a bound. */
                    if (f < st * (1 - 1e-9))
                        fail_msg("%s: formula %.9g below steps %.9g", what, f, st);
                } else
                    assert_close(f, st, 1e-9, what);
                tc_sched_free(s);
            }
        tc_topo_free(t);
    }
}

static void torus_shifts_and_xors_bound_steps_and_match_uniform_ones(void **state)
{
    (void)state;
    static const char *specs[] = {
        "torus:dims=4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=8x4,wrap=0x1,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=6x5,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = build(specs[i]);
        uint32_t p = t->n_endpoints;
        /* XOR acts per coordinate only when every size is a power of two;
         * otherwise it falls back to GENERIC, an estimate, not a bound. */
        bool pow2 = true;
        for (int d = 0; d < t->ndims; d++)
            pow2 = pow2 && (t->dims[d] & (t->dims[d] - 1)) == 0;
        for (int pat = 0; pat < (pow2 ? 2 : 1); pat++)
            for (uint32_t k = 1; k < p; k++) {
                tc_sched *s = pattern(p, pat ? TC_PAT_XOR : TC_PAT_SHIFT, k, 1e6);
                double f = formula(t, s, TC_ROUTE_DOR), st = steps(t, s, TC_ROUTE_DOR);
                if (f < st * (1 - 1e-9))
                    fail_msg("%s %s %u: formula %.9g below steps %.9g", specs[i], pat ? "xor" : "shift", k, f, st);
                tc_sched_free(s);
            }
        tc_topo_free(t);
    }
    /* On 4x4: a shift of 4 moves every vertex one step along dimension 1
     * (1 hop, 1 flow per link); a shift of 8 is a tie on the dimension-1
     * rings (2 hops, dor splits by parity: 1 flow per link); a shift of 2
     * is that tie along dimension 0 plus a carry into dimension 1 for
     * half the vertices (3 hops); xor 1 swaps neighbours (1 hop); a shift
     * of 1 moves along dimension 0 and carries from the last column. */
    tc_topo *t = build("torus:dims=4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double b = 1e6;
    struct {
        tc_pattern pat;
        int64_t arg;
        double want;
    } c[] = {{TC_PAT_SHIFT, 4, US + b / BW}, {TC_PAT_SHIFT, 8, 2 * US + b / BW},
             {TC_PAT_SHIFT, 2, 3 * US + b / BW}, {TC_PAT_XOR, 1, US + b / BW},
             {TC_PAT_SHIFT, 1, 2 * US + b / BW}};
    for (size_t j = 0; j < sizeof c / sizeof *c; j++) {
        tc_sched *s = pattern(16, c[j].pat, c[j].arg, b);
        assert_close(formula(t, s, TC_ROUTE_DOR), c[j].want, 1e-12, "uniform formula");
        assert_close(steps(t, s, TC_ROUTE_DOR), c[j].want, 1e-12, "uniform steps");
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

/* ---- GENERIC and the rest ---- */

static void generic_phases_use_ports_and_bisection(void **state)
{
    (void)state;
    /* Direct all-to-all on a non-blocking 64-host Clos: one port carries
     * 63 blocks of S/64; the bisection (32 x 50e9) is not the bottleneck:
     * 4 us + 63 (S/64) / 50e9, what steps finds too. */
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = coll(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 64, S);
    double want = 4 * US + 63 * (S / 64) / BW;
    assert_close(formula(t, s, TC_ROUTE_DMODK), want, 1e-12, "direct a2a");
    assert_close(steps(t, s, TC_ROUTE_DMODK), want, 1e-12, "direct a2a steps");
    tc_sched_free(s);
    tc_topo_free(t);
    /* On an 8x8 torus the bisection binds: 16 x 50e9 across the cut,
     * 32 x 32 / 63 x (63 S/64) crossing: S / (2 x 50e9) over 4 ports'
     * 63 S / 64 / 200e9; the path latency is the diameter, 8 us. */
    t = build("torus:dims=8x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    s = coll(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 64, S);
    want = 8 * US + 32.0 * 32 / 63 * (63 * S / 64) / (16 * BW);
    assert_close(formula(t, s, TC_ROUTE_DOR), want, 1e-12, "direct a2a torus");
    tc_sched_free(s);
    tc_topo_free(t);
}

static void a_rank_map_falls_back_to_generic_and_identity_does_not(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    tc_sched *s = pattern(64, TC_PAT_SHIFT, 1, 1e6);
    uint32_t map[64];
    for (uint32_t r = 0; r < 64; r++)
        map[r] = r;
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK, .rank_map = map};
    double a, b;
    assert_int_equal(tc_eval_formula(t, s, &o, &a, NULL), TC_OK);
    assert_close(a, 4 * US + 1e6 / BW, 1e-12, "identity map");
    for (uint32_t r = 0; r < 64; r++)
        map[r] = 63 - r;
    assert_int_equal(tc_eval_formula(t, s, &o, &b, NULL), TC_OK);
    /* GENERIC: worst path 4 us, one port. */
    assert_close(b, 4 * US + 1e6 / BW, 1e-12, "reversed map");
    tc_sched_free(s);
    tc_topo_free(t);
}

static void formula_rejects_more_ranks_than_endpoints_and_adds_alpha_per_step(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=2us");
    tc_sched *s = pattern(65, TC_PAT_SHIFT, 1, 1e6);
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
    double v;
    tc_err err = {{0}};
    assert_int_equal(tc_eval_formula(t, s, &o, &v, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "64"));
    tc_sched_free(s);
    s = coll(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, 64e6);
    double want = 126 * (6 * US + 1e6 / BW);
    assert_close(formula(t, s, TC_ROUTE_DMODK), want, 1e-12, "alpha");
    assert_close(steps(t, s, TC_ROUTE_DMODK), want, 1e-12, "alpha steps");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Repeated evaluations of one schedule give one value, bit for bit (the
 * evaluations per second are bench/bench_formula.c's, not a unit test's:
 * a timed test fails on a loaded machine). */
static void formula_ring_evaluations_repeat_exactly(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=16x16x16,up=1x16x16,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    tc_sched *s = coll(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 4096, 1 << 30);
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DEFAULT};
    double first = 0, v = 0;
    assert_int_equal(tc_eval_formula(t, s, &o, &first, NULL), TC_OK);
    assert_true(first > 0);
    for (int i = 0; i < 20000; i++) {
        assert_int_equal(tc_eval_formula(t, s, &o, &v, NULL), TC_OK);
        assert_true(v == first);
    }
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- lower bound ---- */

static void all_to_all_bound_matches_reference_on_oversubscribed_clos(void **state)
{
    (void)state;
    /* Two tiers, k = 8 hosts per leaf, 2 up-links: s = 4, N = 64.
     * Reference: t >= max((N-1)/N, s (N-k)/N) n / B = 3.5 n / B. */
    tc_topo *t = build("clos:down=8x8,up=1x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    double n = 1 << 30;
    assert_close(tc_lower_bound(t, TC_OP_ALLTOALL, 64, n, NULL), 3.5 * n / BW, 1e-12, "oversub a2a");
    /* Non-blocking: the injection term (N-1)/N n / B. */
    tc_topo *nb = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    assert_close(tc_lower_bound(nb, TC_OP_ALLTOALL, 64, n, NULL), 63.0 / 64 * n / BW, 1e-12, "non-blocking a2a");
    tc_topo_free(t);
    tc_topo_free(nb);
}

/* A degraded link changes the all-reduce bound only through the endpoint
 * it slows: a spine cable degraded (slower or faster) keeps 2 (p-1)/p S
 * / B, all ranks' 2 (p-1) S over their p B; endpoint 0's cable at rate
 * fB: that rank's S each way, S / (fB) (it could hand its input to a fast
 * rank and take the result back, so not 2 (p-1)/p S / (fB)), or the
 * total over the links' sum, 2 (p-1) S / ((p-1+f) B), whichever is
 * larger. */
static void degraded_links_keep_the_all_reduce_bound(void **state)
{
    (void)state;
    double n = 1 << 26, healthy = 2 * 63.0 / 64 * n / BW;
    const double f[4] = {0.999, 2, 0.5, 0.1};
    for (int i = 0; i < 4; i++) {
        tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
        tc_err err = {{0}};
        uint32_t link = i < 2 ? t->up_lbase[2] : 0; /* leaf 0 -> spine 0; endpoint 0 -> leaf 0 */
        if (tc_topo_degrade_link(t, link, f[i], &err) || tc_topo_degrade_link(t, link ^ 1u, f[i], &err))
            fail_msg("degrade: %s", err.msg);
        double want = i < 2 ? healthy : fmax(n / (f[i] * BW), 2 * 63.0 * n / ((63 + f[i]) * BW));
        assert_close(tc_lower_bound(t, TC_OP_ALLREDUCE, 64, n, NULL), want, 1e-12, "degraded all-reduce");
        tc_topo_free(t);
    }
    /* A mesh line of 3: the ends have one port, the middle two. A reduce
     * to the middle and a broadcast from it move S over each link
     * direction, S / B, which the bound must not pass: max(S / B at an
     * end, 2 (p-1) S over the 4 ports' 4B) = S / B, not 2 (p-1)/p S / B. */
    tc_topo *m = build("torus:dims=3,wrap=0,bw=400Gbps,lat=0,hop_lat=0,alpha=0");
    assert_close(tc_lower_bound(m, TC_OP_ALLREDUCE, 3, n, NULL), n / BW, 1e-12, "mesh line all-reduce");
    tc_topo_free(m);
}

static void all_to_all_bound_matches_reference_on_torus(void **state)
{
    (void)state;
    double n = 1 << 30;
    /* 8x8 with wraparound: (d_max / 8) n / b = n / b; mesh: (d_max / 4) n / b. */
    tc_topo *w = build("torus:dims=8x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    tc_topo *m = build("torus:dims=8x8,wrap=0x0,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    tc_topo *l = build("torus:dims=16x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0");
    assert_close(tc_lower_bound(w, TC_OP_ALLTOALL, 64, n, NULL), n / BW, 1e-12, "wrap");
    assert_close(tc_lower_bound(m, TC_OP_ALLTOALL, 64, n, NULL), 2 * n / BW, 1e-12, "mesh");
    assert_close(tc_lower_bound(l, TC_OP_ALLTOALL, 256, n, NULL), 2 * n / BW, 1e-12, "16x4x4");
    tc_topo_free(w);
    tc_topo_free(m);
    tc_topo_free(l);
}

/* A scale-up node is a cut: its ranks reach the others only over its NICs.
 * 8 nodes of 8 GPUs on 8 rails, a 400 Gb/s NIC per GPU: a node's 8 ranks
 * must send 8 x 56 x n / 64 = 7 n over 8 NICs, 7/8 n / BW, where each
 * rank's own links (NIC + NVLink) would allow 63/64 n / (BW + 400 GB/s).
 * Rails skip the Clos subtree cuts, so this was the injection bound. */
static void node_cut_bounds_rail_optimized_clusters(void **state)
{
    (void)state;
    double n = 1 << 30, NV = 400e9;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0,node=8,node_bw=400GB/s,rail=8");
    assert_close(tc_lower_bound(t, TC_OP_ALLTOALL, 64, n, NULL), 7.0 / 8 * n / BW, 1e-12, "rail a2a");
    /* All-reduce: the 8 nodes are 8 parties of an all-reduce with a port of
     * 8 BW each, 2 (7/8) n / (8 BW), the injection bound 2 (63/64) n /
     * (BW + NV) as it happens: with NVLink twice as fast, the parties' bound
     * is the larger. */
    assert_close(tc_lower_bound(t, TC_OP_ALLREDUCE, 64, n, NULL), 2.0 * 7 / 8 * n / (8 * BW), 1e-12, "rail ar");
    assert_close(2.0 * 63 / 64 * n / (BW + NV), 2.0 * 7 / 8 * n / (8 * BW), 1e-12, "the two bounds tie");
    tc_topo *f = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0,node=8,node_bw=800GB/s,rail=8");
    assert_close(tc_lower_bound(f, TC_OP_ALLREDUCE, 64, n, NULL), 2.0 * 7 / 8 * n / (8 * BW), 1e-12, "rail ar nv");
    tc_topo_free(f);
    /* 2 ranks on node 0, 14 on nodes 1 and 2 (a rank map): node 0's cut is
     * 2 x 14 x n / 16 over 8 NICs; node 1's 8 x 8 x n / 16 binds. */
    uint32_t map[16];
    for (uint32_t r = 0; r < 16; r++)
        map[r] = r < 2 ? r : 6 + r;
    assert_close(tc_lower_bound(t, TC_OP_ALLTOALL, 16, n, map), 8.0 * 8 / 16 * n / (8 * BW), 1e-12, "map");
    tc_topo_free(t);
    /* Two GPUs share each NIC (nics=4 of 100 Gb/s): a node's 8 ranks send
     * 7 n over 4 x 12.5 GB/s; the GPU-NIC links are inside the node. */
    tc_topo *s = build("clos:down=8x4,up=1x4,bw=100Gbps,lat=1us,hop_lat=0,alpha=0,node=8,nics=4,rail=4");
    assert_close(tc_lower_bound(s, TC_OP_ALLTOALL, 64, n, NULL), 7 * n / 50e9, 1e-12, "shared NICs a2a");
    /* All-reduce over 4 nodes of one NIC each: 4 parties, 2 (3/4) S /
     * 12.5 GB/s; where the fabric switches reduce (sharp=1), the node cut's
     * S each way. */
    tc_topo *u = build("clos:down=4x1,up=1x1,bw=100Gbps,lat=1us,hop_lat=0,alpha=0,node=8,nics=1");
    assert_close(tc_lower_bound(u, TC_OP_ALLREDUCE, 32, n, NULL), 1.5 * n / 12.5e9, 1e-12, "one NIC ar");
    tc_topo *v = build("clos:down=4x1,up=1x1,bw=100Gbps,lat=1us,hop_lat=0,alpha=0,node=8,nics=1,sharp=1");
    assert_close(tc_lower_bound(v, TC_OP_ALLREDUCE, 32, n, NULL), n / 12.5e9, 1e-12, "one NIC ar, sharp");
    tc_topo_free(v);
    tc_topo_free(s);
    tc_topo_free(u);
}

static void injection_and_latency_bounds(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=3us");
    double S = 1 << 30;
    assert_close(tc_lower_bound(t, TC_OP_ALLREDUCE, 64, S, NULL), 2.0 * 63 / 64 * S / BW, 1e-12, "allreduce");
    assert_close(tc_lower_bound(t, TC_OP_ALLGATHER, 64, S, NULL), 63.0 / 64 * S / BW, 1e-12, "allgather");
    assert_close(tc_lower_bound(t, TC_OP_BROADCAST, 64, S, NULL), S / BW, 1e-12, "broadcast");
    /* Tiny: alpha + the 2-link path inside a leaf. */
    assert_close(tc_lower_bound(t, TC_OP_ALLREDUCE, 64, 8, NULL), 5 * US, 1e-12, "latency");
    assert_true(tc_lower_bound(t, TC_OP_ALLREDUCE, 1, S, NULL) == 0);
    tc_topo_free(t);
}

static void no_algorithm_beats_the_lower_bound(void **state)
{
    (void)state;
    static const char *specs[] = {
        "clos:down=8x8,up=1x2,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "clos:down=4x4x4,up=1x4x2,bw=400Gbps,lat=1us,node=4,hop_lat=0,alpha=0",
        "torus:dims=4x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0",
        "torus:dims=8x8,wrap=1x0,bw=400Gbps,lat=1us,hop_lat=0,alpha=1us",
        "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,hop_lat=0,alpha=0,node=8,rail=8",
        "clos:down=8x4,up=1x4,bw=100Gbps,lat=1us,hop_lat=0,alpha=0,node=8,nics=4,rail=4",
        "torus:dims=4x4x4,bw=400Gbps,lat=1us,hop_lat=0,alpha=0,node=4,node_bw=100GB/s",
    };
    static const double sizes[] = {64, 65536, 1 << 26};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = build(specs[i]);
        uint32_t p = t->n_endpoints;
        for (int op = 0; op < TC_OP_COUNT; op++)
            for (int a = 0; a < TC_ALGO_AUTO; a++) {
                if (!tc_coll_valid((tc_op)op, (tc_algo)a, p, t, NULL))
                    continue;
                for (size_t z = 0; z < 3; z++) {
                    tc_sched *s = coll(t, (tc_op)op, (tc_algo)a, p, sizes[z]);
                    double lb = tc_lower_bound(t, (tc_op)op, p, sizes[z], NULL);
                    double st = steps(t, s, TC_ROUTE_DEFAULT);
                    double f = formula(t, s, TC_ROUTE_DEFAULT);
                    if (st < lb * (1 - 1e-9) || f < lb * (1 - 1e-9))
                        fail_msg("%s %s/%s %g B: steps %.6g formula %.6g below bound %.6g", specs[i],
                                 tc_op_name((tc_op)op), tc_algo_name((tc_algo)a), sizes[z], st, f, lb);
                    tc_sched_free(s);
                }
            }
        tc_topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_allreduce_matches_hand_value_on_two_tier_clos),
        cmocka_unit_test(ring_allreduce_busbw_reaches_injection_bandwidth_at_4GiB),
        cmocka_unit_test(ring_on_three_tier_clos_pays_the_core_latency),
        cmocka_unit_test(shifts_and_xors_equal_steps_on_full_nonblocking_clos),
        cmocka_unit_test(shifts_on_partial_or_oversubscribed_clos_never_undercut_steps),
        cmocka_unit_test(partial_shifts_of_trees_and_chains_equal_steps_on_nonblocking_clos),
        cmocka_unit_test(xor_crossing_an_oversubscribed_leaf_is_slowed_by_the_oversubscription),
        cmocka_unit_test(recursive_doubling_allreduce_on_oversubscribed_clos_matches_steps),
        cmocka_unit_test(scale_up_node_pairs_use_the_node_switch),
        cmocka_unit_test(torus_rings_match_hand_values_on_wrapped_and_mesh_4x4),
        cmocka_unit_test(torus_ring_algorithms_equal_steps),
        cmocka_unit_test(torus_shifts_and_xors_bound_steps_and_match_uniform_ones),
        cmocka_unit_test(generic_phases_use_ports_and_bisection),
        cmocka_unit_test(a_rank_map_falls_back_to_generic_and_identity_does_not),
        cmocka_unit_test(formula_rejects_more_ranks_than_endpoints_and_adds_alpha_per_step),
        cmocka_unit_test(formula_ring_evaluations_repeat_exactly),
        cmocka_unit_test(all_to_all_bound_matches_reference_on_oversubscribed_clos),
        cmocka_unit_test(all_to_all_bound_matches_reference_on_torus),
        cmocka_unit_test(degraded_links_keep_the_all_reduce_bound),
        cmocka_unit_test(node_cut_bounds_rail_optimized_clusters),
        cmocka_unit_test(injection_and_latency_bounds),
        cmocka_unit_test(no_algorithm_beats_the_lower_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
