/*
 * test_coll_faults.c - the checker catches planted bugs. An algorithm cannot
 * be broken from a test, so each test builds a correct schedule and then
 * corrupts it: its emit function is wrapped to change one transfer at one
 * step, or a phase's declared metadata is changed. tc_sched_check must fail
 * and say where. Also: the sampled checker (tc_sched_check_sampled) agrees
 * with the full one and catches a corrupted step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"
#include "coll_topos.h"

static tc_sched *build(tc_op op, tc_algo algo, uint32_t p, const tc_topo *t)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = 1000003.0};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: build failed: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: the unmodified schedule fails: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return s;
}

/* Asserts that the check fails with a message containing want. */
static void expect_caught(const tc_sched *s, const char *want)
{
    tc_err err = {{0}};
    assert_int_equal(tc_sched_check(s, &err), TC_EINTERNAL);
    if (!strstr(err.msg, want))
        fail_msg("expected '%s' in: %s", want, err.msg);
}

/* ---- a corrupting emit ---- */

/* BUG_REVERSE is no bug: a step's transfers in another order. */
typedef enum { BUG_DST, BUG_SWAP_DST, BUG_NO_REDUCE, BUG_REVERSE } bug_kind;

static struct {
    tc_emit_fn orig;
    uint32_t step;
    size_t which;   /* transfer index */
    uint32_t shift; /* BUG_DST: dst moves by this many ranks */
    bug_kind kind;
} bug;

static tc_status buggy_emit(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    tc_status st = bug.orig(s, step, x);
    if (st || step != bug.step || x->n <= bug.which + 1)
        return st;
    tc_xfer *t = &x->v[bug.which];
    switch (bug.kind) {
    case BUG_DST: t->dst = (t->dst + bug.shift) % s->req.p; break;
    case BUG_SWAP_DST:
        /* With a later transfer to another rank (siblings share a parent). */
        for (size_t j = bug.which + 1; j < x->n; j++) {
            tc_xfer *u = &x->v[j];
            if (u->dst != t->dst && u->dst != t->src && t->dst != u->src) {
                uint32_t d = t->dst;
                t->dst = u->dst;
                u->dst = d;
                break;
            }
        }
        break;
    case BUG_NO_REDUCE:
        for (size_t i = 0; i < x->n; i++)
            x->v[i].reduce = 0;
        break;
    case BUG_REVERSE:
        for (size_t i = 0, j = x->n - 1; i < j; i++, j--) {
            tc_xfer v = x->v[i];
            x->v[i] = x->v[j];
            x->v[j] = v;
        }
        break;
    }
    return TC_OK;
}

static void plant(tc_sched *s, bug_kind kind, uint32_t step, size_t which, uint32_t shift)
{
    bug.orig = s->emit;
    bug.kind = kind;
    bug.step = step;
    bug.which = which;
    bug.shift = shift;
    s->emit = buggy_emit;
}

static void a_wrong_destination_is_caught(void **state)
{
    (void)state;
    /* Ring all-reduce on 256 ranks, step 100 (a reduce-scatter step): a
     * transfer that leaves its shift. */
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_RING, 256, NULL);
    plant(s, BUG_DST, 100, 5, 7);
    expect_caught(s, "step 100 (phase 'reduce-scatter'): transfer 5->13 does not follow its shift 1");
    tc_sched_free(s);

    /* Direct all-gather (GENERIC): rank 1 now receives twice. */
    s = build(TC_OP_ALLGATHER, TC_ALGO_DIRECT, 256, NULL);
    plant(s, BUG_DST, 0, 0, 2); /* 0->1 becomes 0->3 */
    expect_caught(s, "declared fanin 255, actual 256");
    tc_sched_free(s);

    /* Double binary tree (GENERIC, repeated phases): two transfers swap
     * destinations, so every fan-in and fan-out stays the same; the steady
     * phase's traffic or the data gives it away. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_DBTREE, 256, NULL);
    uint32_t mid = s->nsteps / 2;
    plant(s, BUG_SWAP_DST, mid, 10, 0);
    tc_err err = {{0}};
    assert_int_equal(tc_sched_check(s, &err), TC_EINTERNAL);
    tc_sched_free(s);
}

/* Steps of a phase are compared as multisets: another order is the same
 * traffic, another destination is not. */
static void a_repeated_phase_is_compared_as_a_multiset(void **state)
{
    (void)state;
    tc_err err = {{0}};
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_BIRING, 256, NULL);
    plant(s, BUG_REVERSE, 40, 0, 0);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("a reordered step fails: %s", err.msg);
    tc_sched_free(s);
    /* 5 -> 4 and 6 -> 7 become 5 -> 7 and 6 -> 4: every rank still sends
     * and receives two transfers, but the traffic is not the phase's. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_BIRING, 256, NULL);
    plant(s, BUG_SWAP_DST, 40, 11, 0);
    expect_caught(s, "step 40 differs in traffic from the first step of its phase 'bidirectional reduce-scatter'");
    tc_sched_free(s);
}

static void a_transfer_off_its_torus_ring_is_caught(void **state)
{
    (void)state;
    uint32_t dims[] = {8, 8, 4};
    tc_topo t = torus_topo(3, dims, true);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS, 256, &t);
    /* Step 3 runs along dimension 0: 3 -> 4 becomes 3 -> 12, a neighbour
     * along dimension 1 whose ring the phase does not use. */
    plant(s, BUG_DST, 3, 3, 8);
    expect_caught(s, "TORUS transfer 3->12 is not between neighbours on a ring of dims_mask 0x1");
    tc_sched_free(s);

    /* Two hops along the same ring. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, 256, &t);
    plant(s, BUG_DST, 0, 0, 2);
    expect_caught(s, "is not between neighbours");
    tc_sched_free(s);
}

static void a_local_transfer_leaving_its_node_is_caught(void **state)
{
    (void)state;
    tc_topo t = node_topo(256, 8);
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_HIER, 256, &t);
    assert_int_equal(s->phases[0].pat, TC_PAT_LOCAL);
    /* Step 2 is intra-node: rank 4 sends to 5, now to 13 on the next node. */
    plant(s, BUG_DST, 2, 4, 8);
    expect_caught(s, "LOCAL transfer 4->13 leaves its node of 8 ranks");
    tc_sched_free(s);

    /* The inter-node phase declared LOCAL. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_HIER, 256, &t);
    s->phases[1].pat = TC_PAT_LOCAL;
    expect_caught(s, "step 7 (phase 'inter reduce-scatter'): LOCAL transfer 0->8 leaves its node of 8 ranks");
    tc_sched_free(s);
}

static void a_wrong_declared_figure_is_caught(void **state)
{
    (void)state;
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_RING, 256, NULL);
    s->phases[0].fanin = 2;
    expect_caught(s, "step 0 (phase 'reduce-scatter'): declared fanin 2, actual 1");
    s->phases[0].fanin = 1;
    s->phases[1].rank_bytes_in *= 2;
    expect_caught(s, "step 255 (phase 'all-gather'): declared rank_bytes_in");
    tc_sched_free(s);

    /* Direct reduce: p - 1 transfers into the root. */
    s = build(TC_OP_REDUCE, TC_ALGO_DIRECT, 256, NULL);
    assert_int_equal(s->phases[0].fanin, 255);
    s->phases[0].fanin = 1;
    expect_caught(s, "declared fanin 1, actual 255 (rank 0 receives 255)");
    tc_sched_free(s);

    /* A double-binary-tree phase in the middle of the schedule. */
    s = build(TC_OP_BROADCAST, TC_ALGO_DBTREE, 256, NULL);
    s->phases[s->nphases / 2].fanin++;
    expect_caught(s, "declared fanin");
    tc_sched_free(s);

    /* A torus phase declaring a ring it does not use. */
    uint32_t dims[] = {4, 4, 4};
    tc_topo t = torus_topo(3, dims, true);
    s = build(TC_OP_ALLGATHER, TC_ALGO_TORUS, 64, &t);
    s->phases[0].dims_mask |= 1u << 5;
    expect_caught(s, "declared dims_mask");
    tc_sched_free(s);
}

/* ---- the sampled checker ---- */

static void sampled_check_agrees_with_the_full_one(void **state)
{
    (void)state;
    static const struct {
        tc_op op;
        tc_algo algo;
    } cases[] = {
        {TC_OP_ALLREDUCE, TC_ALGO_RING},     {TC_OP_ALLREDUCE, TC_ALGO_RHD},  {TC_OP_ALLGATHER, TC_ALGO_BRUCK},
        {TC_OP_REDUCESCATTER, TC_ALGO_SWING}, {TC_OP_BROADCAST, TC_ALGO_DBTREE}, {TC_OP_ALLGATHER, TC_ALGO_RD},
        {TC_OP_REDUCE, TC_ALGO_BINOMIAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            tc_err err = {{0}};
            tc_sched *s = build(cases[i].op, cases[i].algo, 256, NULL);
            if (tc_sched_check_sampled(s, 16, seed, &err) != TC_OK)
                fail_msg("%s/%s: %s", tc_op_name(cases[i].op), tc_algo_name(cases[i].algo), err.msg);
            /* A sample as large as the buffer is the full check. */
            assert_int_equal(tc_sched_check_sampled(s, s->nslots, seed, &err), TC_OK);
            tc_sched_free(s);
        }
    tc_err err = {{0}};
    tc_sched *s = build(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 16, NULL);
    assert_int_equal(tc_sched_check_sampled(s, 4, 1, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "all-to-all"));
    assert_int_equal(tc_sched_check_sampled(s, 0, 1, &err), TC_EINVAL);
    tc_sched_free(s);
}

static void sampled_check_catches_a_planted_bug(void **state)
{
    (void)state;
    /* Every transfer of one reduce-scatter step copies instead of adding:
     * every block loses contributions, sampled or not (rhd: each halving
     * step is a phase of its own, so only the data shows it). */
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_RHD, 256, NULL);
    plant(s, BUG_NO_REDUCE, 2, 0, 0);
    tc_err err = {{0}};
    assert_int_equal(tc_sched_check_sampled(s, 8, 42, &err), TC_EINTERNAL);
    assert_non_null(strstr(err.msg, "expected"));
    tc_sched_free(s);
    /* In a repeated phase the step differs from the phase's first: the
     * reductions are part of the traffic evaluators cost once a phase. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_RING, 256, NULL);
    plant(s, BUG_NO_REDUCE, 17, 0, 0);
    assert_int_equal(tc_sched_check_sampled(s, 8, 42, &err), TC_EINTERNAL);
    assert_non_null(strstr(err.msg, "step 17 differs in traffic"));
    tc_sched_free(s);
    /* The traffic checks run in full on every step. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_RING, 256, NULL);
    plant(s, BUG_DST, 300, 9, 3);
    assert_int_equal(tc_sched_check_sampled(s, 8, 42, &err), TC_EINTERNAL);
    assert_non_null(strstr(err.msg, "step 300"));
    tc_sched_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_wrong_destination_is_caught),
        cmocka_unit_test(a_repeated_phase_is_compared_as_a_multiset),
        cmocka_unit_test(a_transfer_off_its_torus_ring_is_caught),
        cmocka_unit_test(a_local_transfer_leaving_its_node_is_caught),
        cmocka_unit_test(a_wrong_declared_figure_is_caught),
        cmocka_unit_test(sampled_check_agrees_with_the_full_one),
        cmocka_unit_test(sampled_check_catches_a_planted_bug),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
