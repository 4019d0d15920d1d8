/*
 * test_coll_order.c - who talks to whom, step by step: hand-written tables
 * of the sender -> receiver pairs of every step on 8 ranks (and 6 or 7 for
 * the folds of p not a power of two), from the library function each
 * algorithm follows (docs/MODEL.md, the algorithm table), compared with the
 * emitted schedule; the variants (rhd:order=, binomial:tree=) parsed,
 * named and proven by the data checker at every rank count from 1 to 70 and
 * 127 to 129, 255 to 257; and two timings derived by hand: MPICH-order rhd
 * all-reduce against rhd:order=far on a 4:1 Clos in the flow simulator, and
 * MPICH's binomial broadcast on an 8x8 torus in every evaluator.
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

static tc_sched *build_v(tc_op op, tc_algo algo, uint32_t p, tc_variant v, uint32_t root, uint32_t chunks,
                         double bytes)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes, .chunks = chunks, .root = root, .variant = v};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("%s/%s%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), tc_variant_name(v), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), tc_variant_name(v), p, err.msg);
    return s;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Parses "0>1 2-3" (0 sends to 1; 2 and 3 send to each other) into sorted
 * (src, dst) pairs; returns their count. */
static size_t parse_pairs(const char *str, uint32_t *pairs, size_t cap)
{
    size_t n = 0;
    const char *q = str;
    while (*q) {
        while (*q == ' ')
            q++;
        if (!*q)
            break;
        char *end;
        unsigned long a = strtoul(q, &end, 10);
        char op = *end;
        unsigned long b = strtoul(end + 1, &end, 10);
        assert_true(op == '>' || op == '-');
        assert_true(n + 2 <= cap);
        pairs[2 * n] = (uint32_t)a, pairs[2 * n + 1] = (uint32_t)b, n++;
        if (op == '-')
            pairs[2 * n] = (uint32_t)b, pairs[2 * n + 1] = (uint32_t)a, n++;
        q = end;
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
    return n;
}

/* Every step's transfers between ranks (local copies excluded) are exactly
 * the pairs of the table, one string per step. */
static void expect_steps(const tc_sched *s, const char *what, const char *const *table, size_t nsteps)
{
    if (s->nsteps != nsteps)
        fail_msg("%s: %u steps, the table has %zu", what, s->nsteps, nsteps);
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t want[2 * 256], got[2 * 256];
    for (uint32_t st = 0; st < s->nsteps; st++) {
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        size_t n = 0;
        for (size_t i = 0; i < x.n; i++)
            if (x.v[i].src != x.v[i].dst) {
                assert_true(n < 256);
                got[2 * n] = x.v[i].src, got[2 * n + 1] = x.v[i].dst, n++;
            }
        qsort(got, n, 2 * sizeof *got, cmp_pair);
        size_t m = parse_pairs(table[st], want, sizeof want / sizeof *want);
        bool same = m == n && memcmp(got, want, 2 * n * sizeof *got) == 0;
        if (!same) {
            char buf[2048];
            size_t k = 0;
            for (size_t i = 0; i < n && k + 16 < sizeof buf; i++)
                k += (size_t)snprintf(buf + k, sizeof buf - k, " %u>%u", got[2 * i], got[2 * i + 1]);
            buf[k] = '\0';
            fail_msg("%s step %u: expected \"%s\", emitted%s", what, st, table[st], buf);
        }
    }
    tc_xfers_free(&x);
}

static void expect(tc_op op, tc_algo algo, uint32_t p, tc_variant v, uint32_t root, uint32_t chunks,
                   const char *const *table, size_t nsteps)
{
    char what[96];
    tc_coll_req req = {.op = op, .algo = algo, .root = root, .chunks = chunks, .variant = v};
    snprintf(what, sizeof what, "%s %s p=%u", tc_op_name(op), tc_algo_format(&req, (char[64]){0}, 64), p);
    tc_sched *s = build_v(op, algo, p, v, root, chunks, 1 << 20);
    expect_steps(s, what, table, nsteps);
    tc_sched_free(s);
}

#define EXPECT(op, algo, p, v, root, chunks, table) \
    expect(op, algo, p, v, root, chunks, table, sizeof table / sizeof *table)

/* Exchanges with r ^ m on 8 ranks. */
#define X1 "0-1 2-3 4-5 6-7"
#define X2 "0-2 1-3 4-6 5-7"
#define X4 "0-4 1-5 2-6 3-7"

/* ---- ring: MPIR_Allreduce_intra_ring, r -> r + 1 in every step ---- */

static void ring_sends_to_the_right_neighbour(void **state)
{
    (void)state;
    static const char *const right = "0>1 1>2 2>3 3>4 4>5 5>6 6>7 7>0";
    static const char *const ar[] = {right, right, right, right, right, right, right,
                                     right, right, right, right, right, right, right};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RING, 8, TC_VARIANT_DEFAULT, 0, 0, ar);
    static const char *const rs[] = {right, right, right, right, right, right, right};
    EXPECT(TC_OP_REDUCESCATTER, TC_ALGO_RING, 8, TC_VARIANT_DEFAULT, 0, 0, rs);
    EXPECT(TC_OP_ALLGATHER, TC_ALGO_RING, 8, TC_VARIANT_DEFAULT, 0, 0, rs);
    /* MPICH's block order: step i, rank r sends block r - 1 - i (reduce-
     * scatter), then block r - i (all-gather); rank r ends with block r. */
    tc_sched *s = build_v(TC_OP_ALLREDUCE, TC_ALGO_RING, 8, TC_VARIANT_DEFAULT, 0, 0, 8.0);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t st = 0; st < 14; st++) {
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++) {
            uint32_t r = x.v[i].src, want = st < 7 ? (r + 16 - 1 - st) % 8 : (r + 16 - (st - 7)) % 8;
            assert_int_equal(x.segs[x.v[i].seg_off].src_slot, want);
        }
    }
    tc_xfers_free(&x);
    tc_sched_free(s);
}

/* ---- rd: MPIR_Allreduce_intra_recursive_doubling ---- */

static void rd_doubles_the_distance_and_folds_even_into_odd(void **state)
{
    (void)state;
    static const char *const ar8[] = {X1, X2, X4};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RD, 8, TC_VARIANT_DEFAULT, 0, 0, ar8);
    EXPECT(TC_OP_ALLGATHER, TC_ALGO_RD, 8, TC_VARIANT_DEFAULT, 0, 0, ar8);
    /* 6 ranks: rem = 2; evens 0, 2 send to 1, 3; participants 1, 3, 4, 5
     * (newrank 0..3); odd 1, 3 return the result to 0, 2. */
    static const char *const ar6[] = {"0>1 2>3", "1-3 4-5", "1-4 3-5", "1>0 3>2"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RD, 6, TC_VARIANT_DEFAULT, 0, 0, ar6);
    /* 7 ranks: rem = 3; participants 1, 3, 5, 6. */
    static const char *const ar7[] = {"0>1 2>3 4>5", "1-3 5-6", "1-5 3-6", "1>0 3>2 5>4"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RD, 7, TC_VARIANT_DEFAULT, 0, 0, ar7);
}

/* ---- rhd: MPIR_Allreduce_intra_reduce_scatter_allgather and
 * MPIR_Reduce_scatter_intra_recursive_halving ---- */

static void rhd_allreduce_starts_near_and_reduce_scatter_far(void **state)
{
    (void)state;
    static const char *const near8[] = {X1, X2, X4, X4, X2, X1};
    static const char *const far8[] = {X4, X2, X1, X1, X2, X4};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, TC_VARIANT_DEFAULT, 0, 0, near8);
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, TC_VARIANT_NEAR, 0, 0, near8);
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, TC_VARIANT_FAR, 0, 0, far8);
    static const char *const rs_far[] = {X4, X2, X1}, *const rs_near[] = {X1, X2, X4};
    EXPECT(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 8, TC_VARIANT_DEFAULT, 0, 0, rs_far);
    EXPECT(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 8, TC_VARIANT_FAR, 0, 0, rs_far);
    EXPECT(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 8, TC_VARIANT_NEAR, 0, 0, rs_near);
    /* 6 ranks: the fold of MPICH (even -> rank + 1), participants 1, 3, 4, 5. */
    static const char *const near6[] = {"0>1 2>3", "1-3 4-5", "1-4 3-5", "1-4 3-5", "1-3 4-5", "1>0 3>2"};
    static const char *const far6[] = {"0>1 2>3", "1-4 3-5", "1-3 4-5", "1-3 4-5", "1-4 3-5", "1>0 3>2"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 6, TC_VARIANT_DEFAULT, 0, 0, near6);
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 6, TC_VARIANT_FAR, 0, 0, far6);
    /* 7 ranks: participants 1, 3, 5, 6. */
    static const char *const near7[] = {"0>1 2>3 4>5", "1-3 5-6", "1-5 3-6", "1-5 3-6", "1-3 5-6", "1>0 3>2 5>4"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_RHD, 7, TC_VARIANT_DEFAULT, 0, 0, near7);
    /* reduce-scatter on 6 ranks, MPICH's MPIR_Reduce_scatter_intra_recursive_halving:
     * the same fold, masks p'/2 then 1 between participants 1, 3, 4, 5
     * (newdst * 2 + 1 below rem, newdst + rem above), then each odd rank
     * below 2 rem sends rank - 1 its block. */
    static const char *const rs6[] = {"0>1 2>3", "1-4 3-5", "1-3 4-5", "1>0 3>2"};
    EXPECT(TC_OP_REDUCESCATTER, TC_ALGO_RHD, 6, TC_VARIANT_DEFAULT, 0, 0, rs6);
}

/* The halves MPICH keeps, by hand from its send_idx / recv_idx / last_idx
 * arithmetic on 8 ranks: mask 1, the lower rank keeps blocks [0, 4) and
 * sends [4, 8); mask 2 halves what is left, and so on; rank r ends with
 * block bitreverse(r) (0 4 2 6 1 5 3 7); the all-gather sends back what was
 * kept. First block and count each rank sends, per step. */
static void rhd_keeps_the_halves_mpich_keeps(void **state)
{
    (void)state;
    static const uint32_t first[6][8] = {
        {4, 0, 4, 0, 4, 0, 4, 0}, {2, 6, 0, 4, 2, 6, 0, 4}, {1, 5, 3, 7, 0, 4, 2, 6},
        {0, 4, 2, 6, 1, 5, 3, 7}, {0, 4, 2, 6, 0, 4, 2, 6}, {0, 4, 0, 4, 0, 4, 0, 4},
    };
    static const uint32_t count[6] = {4, 2, 1, 1, 2, 4};
    tc_sched *s = build_v(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, TC_VARIANT_DEFAULT, 0, 0, 800);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t st = 0; st < 6; st++) {
        assert_int_equal(tc_sched_emit(s, st, &x), TC_OK);
        assert_int_equal(x.n, 8);
        assert_true(s->phases[st].bytes == count[st] * 100.0);
        for (size_t i = 0; i < x.n; i++) {
            const tc_seg *g = &x.segs[x.v[i].seg_off];
            assert_int_equal(x.v[i].seg_cnt, 1);
            assert_int_equal(g->src_slot, first[st][x.v[i].src]);
            assert_int_equal(g->count, count[st]);
            assert_int_equal(x.v[i].reduce, st < 3);
        }
    }
    tc_xfers_free(&x);
    tc_sched_free(s);
    /* The far order sends the same sizes: n/2, n/4, n/8, n/8, n/4, n/2. */
    s = build_v(TC_OP_ALLREDUCE, TC_ALGO_RHD, 8, TC_VARIANT_FAR, 0, 0, 800);
    for (uint32_t st = 0; st < 6; st++)
        assert_true(s->phases[st].bytes == count[st] * 100.0);
    tc_sched_free(s);
}

/* ---- binomial: MPIR_Bcast_intra_binomial, MPIR_Reduce_intra_binomial ---- */

static void binomial_uses_mpich_tree_and_highbit_on_request(void **state)
{
    (void)state;
    /* lowbit (MPICH): broadcast 4 apart first, 1 last; reduce 1 apart
     * first, 4 into the root last. */
    static const char *const bc_low[] = {"0>4", "0>2 4>6", "0>1 2>3 4>5 6>7"};
    static const char *const rd_low[] = {"1>0 3>2 5>4 7>6", "2>0 6>4", "4>0"};
    EXPECT(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 8, TC_VARIANT_DEFAULT, 0, 0, bc_low);
    EXPECT(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 8, TC_VARIANT_LOWBIT, 0, 0, bc_low);
    EXPECT(TC_OP_REDUCE, TC_ALGO_BINOMIAL, 8, TC_VARIANT_DEFAULT, 0, 0, rd_low);
    /* Relative to root 3: v + 3 mod 8. */
    static const char *const bc_low3[] = {"3>7", "3>5 7>1", "3>4 5>6 7>0 1>2"};
    static const char *const rd_low3[] = {"4>3 6>5 0>7 2>1", "5>3 1>7", "7>3"};
    EXPECT(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 8, TC_VARIANT_DEFAULT, 3, 0, bc_low3);
    EXPECT(TC_OP_REDUCE, TC_ALGO_BINOMIAL, 8, TC_VARIANT_DEFAULT, 3, 0, rd_low3);
    /* all-reduce: reduce to 0, then broadcast from 0. */
    static const char *const ar_low[] = {"1>0 3>2 5>4 7>6", "2>0 6>4", "4>0", "0>4", "0>2 4>6", "0>1 2>3 4>5 6>7"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_BINOMIAL, 8, TC_VARIANT_DEFAULT, 0, 0, ar_low);
    /* 6 ranks: the edges that exist. */
    static const char *const bc_low6[] = {"0>4", "0>2", "0>1 2>3 4>5"};
    static const char *const rd_low6[] = {"1>0 3>2 5>4", "2>0", "4>0"};
    EXPECT(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 6, TC_VARIANT_DEFAULT, 0, 0, bc_low6);
    EXPECT(TC_OP_REDUCE, TC_ALGO_BINOMIAL, 6, TC_VARIANT_DEFAULT, 0, 0, rd_low6);
    /* highbit: broadcast 1 apart first, 4 last; reduce the reverse. */
    static const char *const bc_high[] = {"0>1", "0>2 1>3", "0>4 1>5 2>6 3>7"};
    static const char *const rd_high[] = {"4>0 5>1 6>2 7>3", "2>0 3>1", "1>0"};
    EXPECT(TC_OP_BROADCAST, TC_ALGO_BINOMIAL, 8, TC_VARIANT_HIGHBIT, 0, 0, bc_high);
    EXPECT(TC_OP_REDUCE, TC_ALGO_BINOMIAL, 8, TC_VARIANT_HIGHBIT, 0, 0, rd_high);
    static const char *const ar_high[] = {"4>0 5>1 6>2 7>3", "2>0 3>1", "1>0", "0>1", "0>2 1>3", "0>4 1>5 2>6 3>7"};
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_BINOMIAL, 8, TC_VARIANT_HIGHBIT, 0, 0, ar_high);
}

/* ---- bruck: MPIR_Allgather_intra_brucks, MPIR_Alltoall_intra_brucks ---- */

static void bruck_sends_to_r_minus_and_plus_powers_of_two(void **state)
{
    (void)state;
    static const char *const ag[] = {"0>7 1>0 2>1 3>2 4>3 5>4 6>5 7>6", "0>6 1>7 2>0 3>1 4>2 5>3 6>4 7>5",
                                     "0>4 1>5 2>6 3>7 4>0 5>1 6>2 7>3"};
    static const char *const a2a[] = {"0>1 1>2 2>3 3>4 4>5 5>6 6>7 7>0", "0>2 1>3 2>4 3>5 4>6 5>7 6>0 7>1",
                                      "0>4 1>5 2>6 3>7 4>0 5>1 6>2 7>3"};
    EXPECT(TC_OP_ALLGATHER, TC_ALGO_BRUCK, 8, TC_VARIANT_DEFAULT, 0, 0, ag);
    EXPECT(TC_OP_ALLTOALL, TC_ALGO_BRUCK, 8, TC_VARIANT_DEFAULT, 0, 0, a2a);
}

/* ---- pairwise: MPIR_Alltoall_intra_pairwise ---- */

static void pairwise_exchanges_with_r_xor_i(void **state)
{
    (void)state;
    static const char *const a2a[] = {X1,
                                      X2,
                                      "0-3 1-2 4-7 5-6",
                                      X4,
                                      "0-5 1-4 2-7 3-6",
                                      "0-6 1-7 2-4 3-5",
                                      "0-7 1-6 2-5 3-4"};
    EXPECT(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 8, TC_VARIANT_DEFAULT, 0, 0, a2a);
    /* 6 ranks (not a power of two): send to r + i, receive from r - i. */
    static const char *const a2a6[] = {"0>1 1>2 2>3 3>4 4>5 5>0", "0>2 1>3 2>4 3>5 4>0 5>1",
                                       "0>3 1>4 2>5 3>0 4>1 5>2", "0>4 1>5 2>0 3>1 4>2 5>3",
                                       "0>5 1>0 2>1 3>2 4>3 5>4"};
    EXPECT(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 6, TC_VARIANT_DEFAULT, 0, 0, a2a6);
}

/* ---- dbtree: NCCL's ncclGetBtree over positions 1..8 (rank = position -
 * 1): 8 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7}; the second tree is the
 * first moved one rank on (rank = position - 2 mod 8). One chunk: the
 * reduction climbs depth 3, 2, 1, the broadcast comes down depth 0, 1, 2. */
static void dbtree_climbs_and_descends_both_trees(void **state)
{
    (void)state;
    static const char *const ar[] = {
        "0>1 2>1 4>5 6>5 7>0 1>0 3>4 5>4", /* depth 3 up: tree 1, then tree 2 */
        "1>3 5>3 0>2 4>2",                 /* depth 2 up */
        "3>7 2>6",                         /* depth 1 up to the tops */
        "7>3 6>2",                         /* depth 0 down */
        "3>1 3>5 2>0 2>4",                 /* depth 1 down */
        "1>0 1>2 5>4 5>6 0>7 0>1 4>3 4>5", /* depth 2 down */
    };
    EXPECT(TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 8, TC_VARIANT_DEFAULT, 0, 1, ar);
    /* Broadcast from 0: the trees over ranks 1..7 (positions 1..7, root 4)
     * hang below rank 0. Tree 1: 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7};
     * tree 2 holds at position q the rank of position q - 1 (cyclically over
     * 1..7): 3 -> {1, 5}, 1 -> {7, 2}, 5 -> {4, 6}. */
    static const char *const bc[] = {
        "0>4 0>3",
        "4>2 4>6 3>1 3>5",
        "2>1 2>3 6>5 6>7 1>7 1>2 5>4 5>6",
    };
    EXPECT(TC_OP_BROADCAST, TC_ALGO_DBTREE, 8, TC_VARIANT_DEFAULT, 0, 1, bc);
}

/* ---- options: parsing, names, round trips ---- */

static void variants_parse_name_and_round_trip(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        tc_algo algo;
        tc_variant v;
        const char *name;
    } ok[] = {
        {"rhd:order=far", TC_ALGO_RHD, TC_VARIANT_FAR, "rhd:order=far"},
        {"rhd:order=near", TC_ALGO_RHD, TC_VARIANT_NEAR, "rhd:order=near"},
        {"rhd", TC_ALGO_RHD, TC_VARIANT_DEFAULT, "rhd"},
        {"binomial:tree=highbit", TC_ALGO_BINOMIAL, TC_VARIANT_HIGHBIT, "binomial:tree=highbit"},
        {"binomial:root=3,tree=lowbit", TC_ALGO_BINOMIAL, TC_VARIANT_LOWBIT, "binomial:root=3,tree=lowbit"},
        {"binomial:tree=highbit,root=2", TC_ALGO_BINOMIAL, TC_VARIANT_HIGHBIT, "binomial:root=2,tree=highbit"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        tc_coll_req req = {0}, back = {0};
        tc_err err = {{0}};
        assert_int_equal(tc_algo_parse(ok[i].in, &req, &err), TC_OK);
        assert_int_equal(req.algo, ok[i].algo);
        assert_int_equal(req.variant, ok[i].v);
        char buf[64];
        assert_string_equal(tc_algo_format(&req, buf, sizeof buf), ok[i].name);
        assert_int_equal(tc_algo_parse(buf, &back, &err), TC_OK);
        assert_int_equal(back.algo, req.algo);
        assert_int_equal(back.variant, req.variant);
        assert_int_equal(back.root, req.root);
    }
    char buf[64];
    assert_string_equal(tc_algo_variant_name(TC_ALGO_RHD, TC_VARIANT_FAR, buf, sizeof buf), "rhd:order=far");
    assert_string_equal(tc_algo_variant_name(TC_ALGO_BINOMIAL, TC_VARIANT_DEFAULT, buf, sizeof buf), "binomial");
    static const struct {
        const char *in, *says;
    } bad[] = {
        {"rhd:order=sideways", "accepted are near, far"},
        {"binomial:tree=midbit", "accepted are lowbit, highbit"},
        {"ring:order=far", "only rhd has it"},
        {"rhd:tree=lowbit", "only binomial has it"},
        {"auto:order=near", "only rhd has it"},
        {"rhd:depth=2", "order (rhd: near, far)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tc_coll_req req = {0};
        tc_err err = {{0}};
        assert_int_equal(tc_algo_parse(bad[i].in, &req, &err), TC_EINVAL);
        if (!strstr(err.msg, bad[i].says) || strchr(err.msg, '\n'))
            fail_msg("%s: '%s' does not say '%s' on one line", bad[i].in, err.msg, bad[i].says);
    }
}

/* ---- the data checker on every variant ---- */

static void check_at(tc_op op, tc_algo algo, tc_variant v, uint32_t p, uint32_t root, int *n)
{
    if (!tc_coll_valid(op, algo, p, NULL, NULL))
        return;
    tc_sched *s = build_v(op, algo, p, v, root % p, 0, 1000003.0);
    tc_sched_free(s);
    (*n)++;
}

static void every_variant_is_exact_at_every_rank_count(void **state)
{
    (void)state;
    uint32_t ps[70 + 6];
    size_t np = 0;
    for (uint32_t p = 1; p <= 70; p++)
        ps[np++] = p;
    static const uint32_t more[] = {127, 128, 129, 255, 256, 257};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        ps[np++] = more[i];
    int n = 0;
    static const tc_variant orders[] = {TC_VARIANT_DEFAULT, TC_VARIANT_NEAR, TC_VARIANT_FAR};
    static const tc_variant trees[] = {TC_VARIANT_DEFAULT, TC_VARIANT_LOWBIT, TC_VARIANT_HIGHBIT};
    for (size_t i = 0; i < np; i++) {
        uint32_t p = ps[i];
        for (int k = 0; k < 3; k++) {
            check_at(TC_OP_ALLREDUCE, TC_ALGO_RHD, orders[k], p, 0, &n);
            check_at(TC_OP_REDUCESCATTER, TC_ALGO_RHD, orders[k], p, 0, &n);
            for (int op = TC_OP_BROADCAST; op <= TC_OP_REDUCE; op++) {
                check_at((tc_op)op, TC_ALGO_BINOMIAL, trees[k], p, 0, &n);
                check_at((tc_op)op, TC_ALGO_BINOMIAL, trees[k], p, p / 3, &n);
                check_at((tc_op)op, TC_ALGO_BINOMIAL, trees[k], p, p - 1, &n);
            }
            check_at(TC_OP_ALLREDUCE, TC_ALGO_BINOMIAL, trees[k], p, 0, &n);
        }
        check_at(TC_OP_ALLREDUCE, TC_ALGO_RD, TC_VARIANT_DEFAULT, p, 0, &n);
        check_at(TC_OP_ALLGATHER, TC_ALGO_RD, TC_VARIANT_DEFAULT, p, 0, &n);
    }
    /* rhd all-reduce 3 x 76, reduce-scatter 3 x 76 (MPICH's fold off the
     * powers of two), binomial 3 x 7 x 76, rd all-reduce 76, all-gather 9
     * (the powers of two 1 .. 256). */
    assert_int_equal(n, 3 * 76 + 3 * 76 + 21 * 76 + 76 + 9);
}

/* ---- the two timings ---- */

static tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

/* The latency of the routed path src -> dst. */
static double path_lat(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst)
{
    uint32_t links[64];
    assert_true(tc_topo_max_path(t) <= 64);
    uint32_t n = tc_topo_route(t, r, src, dst, links);
    double lat = 0;
    for (uint32_t i = 0; i < n; i++)
        lat += t->links[links[i]].lat;
    return lat;
}

static double run_flow(const tc_topo *t, const tc_sched *s, tc_routing r)
{
    tc_flow_opts fo = {.routing = r};
    double time;
    tc_err err = {{0}};
    if (tc_flow_time(t, s, NULL, &fo, &time, &err) != TC_OK)
        fail_msg("flow: %s", err.msg);
    return time;
}

static double run_eval(const tc_topo *t, const tc_sched *s, tc_mode m, tc_routing r)
{
    tc_eval_opts o = {.mode = m, .routing = r};
    double time;
    tc_err err = {{0}};
    tc_status st = m == TC_MODE_FORMULA ? tc_eval_formula(t, s, &o, &time, &err) : tc_eval_steps(t, s, &o, &time, &err);
    if (st != TC_OK)
        fail_msg("%s: %s", tc_mode_name(m), err.msg);
    return time;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.12g, expected %.12g (rel %.3g)", what, got, want, fabs(got - want) / fabs(want));
}

/* docs/MODEL.md, "rhd on a 4:1 Clos": 8 leaves of 8 hosts, 2 up-links per
 * leaf, every link B = 12.5 GB/s. Near order: masks 1, 2, 4 stay in a leaf
 * (one flow per host link) with S/2, S/4, S/8 (and back); masks 8, 16, 32
 * cross it with S/16, S/32, S/64, the 8 flows of a leaf spread by D-mod-k
 * over its 2 up-links (destinations 4 even, 4 odd), 4 per link at B/4 each:
 *   T_near = 12 a + 6 l_in + 6 l_x + 2 (7S/8) / B + 2 (7S/64) 4 / B
 *          = 12 a + 6 (l_in + l_x) + 21 S / (8 B).
 * Far order sends S/2, S/4, S/8 across the leaves and S/16 .. S/64 inside:
 *   T_far  = 12 a + 6 (l_in + l_x) + 2 (7S/8) 4 / B + 2 (7S/64) / B
 *          = 12 a + 6 (l_in + l_x) + 231 S / (32 B). */
static void rhd_near_order_on_an_oversubscribed_clos_matches_the_closed_form(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x2,bw=12.5GB/s,lat=1us");
    const double S = 16.0 * 1048576, B = 12.5e9, a = t->alpha;
    double l_in = path_lat(t, TC_ROUTE_DMODK, 0, 1), l_x = path_lat(t, TC_ROUTE_DMODK, 0, 8);
    double near = 12 * a + 6 * (l_in + l_x) + 21 * S / (8 * B);
    double far = 12 * a + 6 * (l_in + l_x) + 231 * S / (32 * B);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RHD, .p = 64, .bytes = S};
    tc_sched *sn = NULL, *sf = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_coll_build(&req, t, &sn, &err), TC_OK);
    req.variant = TC_VARIANT_FAR;
    assert_int_equal(tc_coll_build(&req, t, &sf, &err), TC_OK);
    double fn = run_flow(t, sn, TC_ROUTE_DMODK), ff = run_flow(t, sf, TC_ROUTE_DMODK);
    print_message("rhd 64 ranks 16 MiB (alpha %.3g s, l_in %.3g s, l_x %.3g s): near closed %.9g s, flow %.9g s "
                  "(rel %.2g); far closed %.9g s, flow %.9g s (rel %.2g); far / near closed %.6g, flow %.6g\n",
                  a, l_in, l_x, near, fn, fabs(fn - near) / near, far, ff, fabs(ff - far) / far, far / near, ff / fn);
    assert_rel(fn, near, 0.01, "near order, flow against the closed form");
    assert_rel(ff, far, 0.01, "far order, flow against the closed form");
    assert_rel(ff / fn, far / near, 0.01, "far / near");
    assert_true(fn < ff);
    /* Every flow of a step is alike, so lock-step agrees as well. */
    assert_rel(run_eval(t, sn, TC_MODE_STEPS, TC_ROUTE_DMODK), near, 1e-9, "near order, steps");
    assert_rel(run_eval(t, sn, TC_MODE_FORMULA, TC_ROUTE_DMODK), near, 1e-9, "near order, formula");
    assert_rel(run_eval(t, sf, TC_MODE_FORMULA, TC_ROUTE_DMODK), far, 1e-9, "far order, formula");
    tc_sched_free(sn);
    tc_sched_free(sf);
    tc_topo_free(t);
}

/* MPICH's binomial broadcast from 0 on an 8x8 torus (rank = x + 8 y):
 * distances 32, 16, 8 move along y by 4, 2, 1 hops, then 4, 2, 1 along x
 * by 4, 2, 1 hops; the senders of a step use disjoint links (different
 * rings, or disjoint arcs of one), so each step is one full-buffer transfer
 * without contention: 6 (a + S/B) + (4 + 2 + 1 + 4 + 2 + 1) l, with l the
 * latency of one torus link. */
static void binomial_broadcast_on_a_torus_is_six_uncontended_transfers(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=8x8,bw=400Gbps,lat=1us");
    const double S = 16.0 * 1048576, B = 50e9, a = t->alpha;
    double l = path_lat(t, TC_ROUTE_DEFAULT, 0, 1);
    assert_rel(path_lat(t, TC_ROUTE_DEFAULT, 0, 32), 4 * l, 1e-12, "4 hops");
    double want = 6 * (a + S / B) + 14 * l;
    tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_BINOMIAL, .p = 64, .bytes = S};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
    static const char *const hand[] = {
        "0>32",
        "0>16 32>48",
        "0>8 16>24 32>40 48>56",
        "0>4 8>12 16>20 24>28 32>36 40>44 48>52 56>60",
        "0>2 4>6 8>10 12>14 16>18 20>22 24>26 28>30 32>34 36>38 40>42 44>46 48>50 52>54 56>58 60>62",
        "0>1 2>3 4>5 6>7 8>9 10>11 12>13 14>15 16>17 18>19 20>21 22>23 24>25 26>27 28>29 30>31 "
        "32>33 34>35 36>37 38>39 40>41 42>43 44>45 46>47 48>49 50>51 52>53 54>55 56>57 58>59 60>61 62>63",
    };
    expect_steps(s, "binomial broadcast 64", hand, 6);
    assert_rel(run_eval(t, s, TC_MODE_FORMULA, TC_ROUTE_DEFAULT), want, 1e-9, "formula");
    assert_rel(run_eval(t, s, TC_MODE_STEPS, TC_ROUTE_DEFAULT), want, 1e-9, "steps");
    /* The chain 0 -> 32 -> 48 -> 56 -> 60 -> 62 -> 63 receives and forwards
     * at once: flow takes the same time. */
    assert_rel(run_flow(t, s, TC_ROUTE_DEFAULT), want, 1e-9, "flow");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* MPICH's MPIR_Reduce_scatter_intra_recursive_halving (v5.0.1), its
 * index arithmetic replayed on one block per rank: newcnts (two blocks for
 * the participants that absorbed a neighbour), newdisps, and per mask the
 * send_idx / recv_idx / last_idx it walks; every participant's send in
 * every halving step must be the emitted transfer from its rank: the same
 * destination, first block and block count. p from 2 to 70. */
static void rhd_reduce_scatter_replays_mpichs_index_arithmetic(void **state)
{
    (void)state;
    for (uint32_t p = 2; p <= 70; p++) {
        tc_sched *s = build_v(TC_OP_REDUCESCATTER, TC_ALGO_RHD, p, TC_VARIANT_DEFAULT, 0, 0, 1000.0 * p);
        uint32_t pof2 = 1;
        while (pof2 * 2 <= p)
            pof2 *= 2;
        uint32_t rem = p - pof2, newcnts[64], newdisps[64];
        for (uint32_t i = 0; i < pof2; i++) {
            uint32_t old_i = i < rem ? i * 2 + 1 : i + rem;
            newcnts[i] = old_i < 2 * rem ? 2 : 1;
            newdisps[i] = i ? newdisps[i - 1] + newcnts[i - 1] : 0;
        }
        uint32_t send_idx[64] = {0}, recv_idx[64] = {0}, last_idx[64];
        for (uint32_t i = 0; i < pof2; i++)
            last_idx[i] = pof2;
        tc_xfers x;
        tc_xfers_init(&x, true);
        uint32_t step = rem ? 1 : 0; /* after the fold */
        for (uint32_t mask = pof2 >> 1; mask > 0; mask >>= 1, step++) {
            tc_xfers_clear(&x);
            assert_int_equal(s->emit(s, step, &x), TC_OK);
            for (uint32_t nr = 0; nr < pof2; nr++) {
                uint32_t nd = nr ^ mask, rank = nr < rem ? nr * 2 + 1 : nr + rem, dst = nd < rem ? nd * 2 + 1 : nd + rem;
                if (nr < nd)
                    send_idx[nr] = recv_idx[nr] + mask;
                else
                    recv_idx[nr] = send_idx[nr] + mask;
                uint32_t lo = nr < nd ? send_idx[nr] : send_idx[nr], hi = nr < nd ? last_idx[nr] : recv_idx[nr];
                uint32_t cnt = 0;
                for (uint32_t i = lo; i < hi; i++)
                    cnt += newcnts[i];
                size_t k = 0;
                while (k < x.n && x.v[k].src != rank)
                    k++;
                if (k == x.n || x.v[k].dst != dst || x.segs[x.v[k].seg_off].src_slot != newdisps[lo] ||
                    x.segs[x.v[k].seg_off].count != cnt)
                    fail_msg("p=%u mask %u: rank %u should send blocks [%u, +%u) to %u", p, mask, rank, newdisps[lo],
                             cnt, dst);
                /* MPICH: send_idx = recv_idx; last_idx = recv_idx + mask */
                send_idx[nr] = recv_idx[nr];
                last_idx[nr] = recv_idx[nr] + mask;
            }
        }
        tc_xfers_free(&x);
        tc_sched_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ring_sends_to_the_right_neighbour),
        cmocka_unit_test(rd_doubles_the_distance_and_folds_even_into_odd),
        cmocka_unit_test(rhd_allreduce_starts_near_and_reduce_scatter_far),
        cmocka_unit_test(rhd_keeps_the_halves_mpich_keeps),
        cmocka_unit_test(binomial_uses_mpich_tree_and_highbit_on_request),
        cmocka_unit_test(bruck_sends_to_r_minus_and_plus_powers_of_two),
        cmocka_unit_test(pairwise_exchanges_with_r_xor_i),
        cmocka_unit_test(dbtree_climbs_and_descends_both_trees),
        cmocka_unit_test(variants_parse_name_and_round_trip),
        cmocka_unit_test(every_variant_is_exact_at_every_rank_count),
        cmocka_unit_test(rhd_near_order_on_an_oversubscribed_clos_matches_the_closed_form),
        cmocka_unit_test(binomial_broadcast_on_a_torus_is_six_uncontended_transfers),
        cmocka_unit_test(rhd_reduce_scatter_replays_mpichs_index_arithmetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
