/*
 * test_coll_lib.c - the algorithms taken from MPI libraries: SimGrid's shift
 * all-gather (shift), MPICH's scatter + ring all-gather broadcast
 * (scatter-ring), reduce-scatter + gather reduce (rsg) and pairwise
 * reduce-scatter (pairwise), Open MPI's neighbor-exchange all-gather
 * (neighbor) and segmented ring all-reduce (segring).
 *
 * Each one's partner order on 8 ranks, written out by hand from the
 * library's source (which rank sends to which in every step, and the blocks
 * one rank sends), is compared with the emitted schedule, and likewise on 6
 * or 7 ranks where the algorithm allows them. Then every schedule is
 * executed on real buffers (tc_sched_check) for every rank count from 1 to
 * 70 and at 127-129, 255-257 and 1,000, with every root on up to 40 ranks
 * and three roots on 24 more rank counts, and segring with several segment
 * counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/coll.h"

#define NONE (-1)
#define MAXP 8

/* One step written out by hand: dst[r] is where rank r sends (NONE: it
 * sends nothing), and rank `who` sends exactly the slots `blocks` (ascending,
 * ended by NONE). */
typedef struct hand_step {
    int dst[MAXP];
    int who;
    int blocks[MAXP * 2 + 1];
} hand_step;

static tc_sched *build(tc_op op, tc_algo algo, uint32_t p, double bytes, uint32_t chunks, uint32_t root)
{
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes, .chunks = chunks, .root = root};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return s;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The emitted schedule against the hand-written steps, step by step. */
static void expect_steps(const tc_sched *s, const hand_step *want, uint32_t nsteps)
{
    uint32_t p = s->req.p;
    assert_true(p <= MAXP);
    assert_int_equal(s->nsteps, nsteps);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t t = 0; t < nsteps; t++) {
        assert_int_equal(tc_sched_emit(s, t, &x), TC_OK);
        int got[MAXP];
        for (uint32_t r = 0; r < p; r++)
            got[r] = NONE;
        uint32_t slots[4 * MAXP * MAXP];
        size_t nslots = 0;
        for (size_t i = 0; i < x.n; i++) {
            const tc_xfer *e = &x.v[i];
            if (e->src == e->dst)
                continue;
            if (got[e->src] != NONE)
                fail_msg("%s step %u: rank %u sends twice", tc_algo_name(s->algo), t, e->src);
            got[e->src] = (int)e->dst;
            if ((int)e->src != want[t].who)
                continue;
            for (uint32_t g = 0; g < e->seg_cnt; g++) {
                const tc_seg *sg = &x.segs[e->seg_off + g];
                for (uint32_t k = 0; k < sg->count; k++)
                    slots[nslots++] = sg->src_slot + k;
            }
        }
        for (uint32_t r = 0; r < p; r++)
            if (got[r] != want[t].dst[r])
                fail_msg("%s p=%u step %u: rank %u sends to %d, expected %d", tc_algo_name(s->algo), p, t, r, got[r],
                         want[t].dst[r]);
        qsort(slots, nslots, sizeof *slots, cmp_u32);
        size_t n = 0;
        while (want[t].blocks[n] != NONE)
            n++;
        if (n != nslots)
            fail_msg("%s p=%u step %u: rank %d sends %zu blocks, expected %zu", tc_algo_name(s->algo), p, t,
                     want[t].who, nslots, n);
        for (size_t k = 0; k < n; k++)
            if ((int)slots[k] != want[t].blocks[k])
                fail_msg("%s p=%u step %u: rank %d's block %zu is %u, expected %d", tc_algo_name(s->algo), p, t,
                         want[t].who, k, slots[k], want[t].blocks[k]);
    }
    tc_xfers_free(&x);
}

/* ---- shift all-gather (SimGrid allgather__ring) ---- */

static void shift_sends_its_own_block_i_ranks_ahead(void **state)
{
    (void)state;
    /* Step i: r -> r + i, always r's own block. */
    static const hand_step p8[] = {
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {3, NONE}}, {{2, 3, 4, 5, 6, 7, 0, 1}, 3, {3, NONE}},
        {{3, 4, 5, 6, 7, 0, 1, 2}, 3, {3, NONE}}, {{4, 5, 6, 7, 0, 1, 2, 3}, 3, {3, NONE}},
        {{5, 6, 7, 0, 1, 2, 3, 4}, 3, {3, NONE}}, {{6, 7, 0, 1, 2, 3, 4, 5}, 3, {3, NONE}},
        {{7, 0, 1, 2, 3, 4, 5, 6}, 3, {3, NONE}},
    };
    tc_sched *s = build(TC_OP_ALLGATHER, TC_ALGO_SHIFT, 8, 800, 0, 0);
    expect_steps(s, p8, 7);
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_SHIFT);
        assert_int_equal(s->phases[i].arg, i + 1);
        assert_true(s->phases[i].bytes == 100);
    }
    tc_sched_free(s);
    static const hand_step p7[] = {
        {{1, 2, 3, 4, 5, 6, 0}, 5, {5, NONE}}, {{2, 3, 4, 5, 6, 0, 1}, 5, {5, NONE}},
        {{3, 4, 5, 6, 0, 1, 2}, 5, {5, NONE}}, {{4, 5, 6, 0, 1, 2, 3}, 5, {5, NONE}},
        {{5, 6, 0, 1, 2, 3, 4}, 5, {5, NONE}}, {{6, 0, 1, 2, 3, 4, 5}, 5, {5, NONE}},
    };
    s = build(TC_OP_ALLGATHER, TC_ALGO_SHIFT, 7, 700, 0, 0);
    expect_steps(s, p7, 6);
    tc_sched_free(s);
}

/* ---- scatter + ring all-gather broadcast (MPICH) ---- */

static void scatter_ring_scatters_by_halves_then_rings(void **state)
{
    (void)state;
    /* Root 0 on 8: pieces 4-7 to 4; 2-3 to 2 and 6-7 from 4 to 6; one
     * piece to each odd rank; then the ring, rank 3 sending the pieces of
     * ranks 3, 2, 1, 0, 7, 6, 5. */
    static const hand_step p8[] = {
        {{4, NONE, NONE, NONE, NONE, NONE, NONE, NONE}, 0, {4, 5, 6, 7, NONE}},
        {{2, NONE, NONE, NONE, 6, NONE, NONE, NONE}, 4, {6, 7, NONE}},
        {{1, NONE, 3, NONE, 5, NONE, 7, NONE}, 6, {7, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {3, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {2, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {1, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {0, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {7, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {6, NONE}},
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {5, NONE}},
    };
    tc_sched *s = build(TC_OP_BROADCAST, TC_ALGO_SCATTER_RING, 8, 800, 0, 0);
    expect_steps(s, p8, 10);
    assert_int_equal(s->nphases, 4);
    assert_int_equal(s->phases[0].pat, TC_PAT_SHIFT);
    assert_int_equal(s->phases[0].arg, 4);
    assert_int_equal(s->phases[0].src_count, 1);
    assert_true(s->phases[0].bytes == 400 && s->phases[1].bytes == 200 && s->phases[2].bytes == 100);
    assert_int_equal(s->phases[3].repeat, 7);
    assert_int_equal(s->phases[3].pat, TC_PAT_SHIFT);
    tc_sched_free(s);
    /* Root 5 on 6: relative rank v is rank 5 + v; piece v lives in slot v.
     * Scatter: 5 -> 3 (pieces 4, 5), 5 -> 1 (2, 3), then 5 -> 0, 1 -> 2,
     * 3 -> 4 one piece each; ring: rank 0 (relative 1) sends 1, 0, 5, 4, 3. */
    static const hand_step p6[] = {
        {{NONE, NONE, NONE, NONE, NONE, 3}, 5, {4, 5, NONE}},
        {{NONE, NONE, NONE, NONE, NONE, 1}, 5, {2, 3, NONE}},
        {{NONE, 2, NONE, 4, NONE, 0}, 1, {3, NONE}},
        {{1, 2, 3, 4, 5, 0}, 0, {1, NONE}},
        {{1, 2, 3, 4, 5, 0}, 0, {0, NONE}},
        {{1, 2, 3, 4, 5, 0}, 0, {5, NONE}},
        {{1, 2, 3, 4, 5, 0}, 0, {4, NONE}},
        {{1, 2, 3, 4, 5, 0}, 0, {3, NONE}},
    };
    s = build(TC_OP_BROADCAST, TC_ALGO_SCATTER_RING, 6, 600, 0, 5);
    expect_steps(s, p6, 8);
    assert_true(s->phases[0].bytes == 200); /* p - 4 pieces: the root's first transfer */
    tc_sched_free(s);
}

/* ---- reduce-scatter + gather reduce (MPICH) ---- */

static void rsg_halves_near_first_then_gathers(void **state)
{
    (void)state;
    /* 8 ranks, root 0: partners 1, 2, 4 apart, rank 3 sending the halves
     * its partners keep (0-3, 4-5, 7) and ending with piece bitrev(3) = 6;
     * then the gather: 4-7 -> 0-3 (rank 4 sends piece bitrev(4) = 1), 2-3 ->
     * 0-1 (rank 3 sends 6-7), 1 -> 0 (pieces 4-7). */
    static const hand_step p8[] = {
        {{1, 0, 3, 2, 5, 4, 7, 6}, 3, {0, 1, 2, 3, NONE}},
        {{2, 3, 0, 1, 6, 7, 4, 5}, 3, {4, 5, NONE}},
        {{4, 5, 6, 7, 0, 1, 2, 3}, 3, {7, NONE}},
        {{NONE, NONE, NONE, NONE, 0, 1, 2, 3}, 4, {1, NONE}},
        {{NONE, NONE, 0, 1, NONE, NONE, NONE, NONE}, 3, {6, 7, NONE}},
        {{NONE, 0, NONE, NONE, NONE, NONE, NONE, NONE}, 1, {4, 5, 6, 7, NONE}},
    };
    tc_sched *s = build(TC_OP_REDUCE, TC_ALGO_RSG, 8, 800, 0, 0);
    expect_steps(s, p8, 6);
    const int64_t xor_mask[] = {1, 2, 4}, shift[] = {-4, -2, -1};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_XOR);
        assert_int_equal(s->phases[i].arg, xor_mask[i]);
        assert_true(s->phases[i].bytes == 400 >> i);
        assert_int_equal(s->phases[3 + i].pat, TC_PAT_SHIFT);
        assert_int_equal(s->phases[3 + i].arg, shift[i]);
        assert_int_equal(s->phases[3 + i].src_first, 4 >> i);
        assert_int_equal(s->phases[3 + i].src_count, 4 >> i);
        assert_true(s->phases[3 + i].bytes == 100 << i);
    }
    tc_sched_free(s);
    /* Root 5 on 8: the gather goes towards 5 (senders 0-3 +4, then 6-7 -2,
     * then 4 +1). */
    s = build(TC_OP_REDUCE, TC_ALGO_RSG, 8, 800, 0, 5);
    assert_int_equal(s->phases[3].arg, 4);
    assert_int_equal(s->phases[3].src_first, 0);
    assert_int_equal(s->phases[4].arg, -2);
    assert_int_equal(s->phases[4].src_first, 6);
    assert_int_equal(s->phases[5].arg, 1);
    assert_int_equal(s->phases[5].src_first, 4);
    tc_sched_free(s);
    /* 6 ranks, root 3: odd ranks 1 and 3 fold into 0 and 2 (the whole
     * vector of 4 pieces); participants 0, 1, 2, 3 are ranks 0, 2, 4, 5.
     * Halving 1 apart (0-2, 4-5) then 2 apart (0-4, 2-5); root 3 took no
     * part, so rank 0 hands it piece 0 and it plays participant 0 in the
     * gather: 4 -> 3 (piece 1), 5 -> 2 (piece 3), then 2 -> 3 (pieces 2-3). */
    static const hand_step p6[] = {
        {{NONE, 0, NONE, 2, NONE, NONE}, 3, {0, 1, 2, 3, NONE}},
        {{2, NONE, 0, NONE, 5, 4}, 0, {2, 3, NONE}},
        {{4, NONE, 5, NONE, 0, 2}, 5, {2, NONE}},
        {{3, NONE, NONE, NONE, NONE, NONE}, 0, {0, NONE}},
        {{NONE, NONE, NONE, NONE, 3, 2}, 5, {3, NONE}},
        {{NONE, NONE, 3, NONE, NONE, NONE}, 2, {2, 3, NONE}},
    };
    s = build(TC_OP_REDUCE, TC_ALGO_RSG, 6, 600, 0, 3);
    expect_steps(s, p6, 6);
    assert_true(s->phases[0].bytes == 600);
    assert_int_equal(s->phases[0].pat, TC_PAT_XOR);
    assert_int_equal(s->phases[3].pat, TC_PAT_SHIFT);
    assert_int_equal(s->phases[3].arg, 3);
    tc_sched_free(s);
    /* Root 2 (even, below 2 rem) plays participant 1 itself: no hand-over. */
    s = build(TC_OP_REDUCE, TC_ALGO_RSG, 6, 600, 0, 2);
    assert_int_equal(s->nsteps, 5);
    tc_sched_free(s);
}

/* ---- pairwise reduce-scatter (MPICH) ---- */

static void pairwise_reduce_scatter_shifts_for_every_rank_count(void **state)
{
    (void)state;
    /* Step i: r sends its contribution to block r + i to r + i: a shift,
     * also on a power of two (the all-to-all uses XOR there). */
    static const hand_step p8[] = {
        {{1, 2, 3, 4, 5, 6, 7, 0}, 3, {4, NONE}}, {{2, 3, 4, 5, 6, 7, 0, 1}, 3, {5, NONE}},
        {{3, 4, 5, 6, 7, 0, 1, 2}, 3, {6, NONE}}, {{4, 5, 6, 7, 0, 1, 2, 3}, 3, {7, NONE}},
        {{5, 6, 7, 0, 1, 2, 3, 4}, 3, {0, NONE}}, {{6, 7, 0, 1, 2, 3, 4, 5}, 3, {1, NONE}},
        {{7, 0, 1, 2, 3, 4, 5, 6}, 3, {2, NONE}},
    };
    tc_sched *s = build(TC_OP_REDUCESCATTER, TC_ALGO_PAIRWISE, 8, 800, 0, 0);
    expect_steps(s, p8, 7);
    for (uint32_t i = 0; i < s->nphases; i++) {
        assert_int_equal(s->phases[i].pat, TC_PAT_SHIFT);
        assert_int_equal(s->phases[i].arg, i + 1);
    }
    tc_sched_free(s);
    static const hand_step p7[] = {
        {{1, 2, 3, 4, 5, 6, 0}, 6, {0, NONE}}, {{2, 3, 4, 5, 6, 0, 1}, 6, {1, NONE}},
        {{3, 4, 5, 6, 0, 1, 2}, 6, {2, NONE}}, {{4, 5, 6, 0, 1, 2, 3}, 6, {3, NONE}},
        {{5, 6, 0, 1, 2, 3, 4}, 6, {4, NONE}}, {{6, 0, 1, 2, 3, 4, 5}, 6, {5, NONE}},
    };
    s = build(TC_OP_REDUCESCATTER, TC_ALGO_PAIRWISE, 7, 700, 0, 0);
    expect_steps(s, p7, 6);
    tc_sched_free(s);
    /* The all-to-all keeps its XOR partners on a power of two. */
    s = build(TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 8, 800, 0, 0);
    assert_int_equal(s->phases[0].pat, TC_PAT_XOR);
    tc_sched_free(s);
}

/* ---- neighbor-exchange all-gather (Open MPI) ---- */

static void neighbor_exchange_alternates_partners(void **state)
{
    (void)state;
    /* Step 0: 2q <-> 2q+1 swap one block. Odd steps pair 2q+1 with 2q+2
     * (7 with 0), even steps 2q with 2q+1 again, two blocks a time: rank 3
     * (pair 1) sends pair 1, then pair 2 (received from 4), then pair 0
     * (received from 2). */
    static const hand_step p8[] = {
        {{1, 0, 3, 2, 5, 4, 7, 6}, 3, {3, NONE}},
        {{7, 2, 1, 4, 3, 6, 5, 0}, 3, {2, 3, NONE}},
        {{1, 0, 3, 2, 5, 4, 7, 6}, 3, {4, 5, NONE}},
        {{7, 2, 1, 4, 3, 6, 5, 0}, 3, {0, 1, NONE}},
    };
    tc_sched *s = build(TC_OP_ALLGATHER, TC_ALGO_NEIGHBOR, 8, 800, 0, 0);
    expect_steps(s, p8, 4);
    const tc_pattern pat[] = {TC_PAT_XOR, TC_PAT_GENERIC, TC_PAT_XOR, TC_PAT_GENERIC};
    const double bytes[] = {100, 200, 200, 200};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(s->phases[i].pat, pat[i]);
        assert_true(s->phases[i].bytes == bytes[i]);
    }
    tc_sched_free(s);
    /* Rank 0, an even rank: its own block, then pairs 0, 3 (received from
     * 7) and 1 (received from 1). */
    static const hand_step p8_even[] = {
        {{1, 0, 3, 2, 5, 4, 7, 6}, 0, {0, NONE}},
        {{7, 2, 1, 4, 3, 6, 5, 0}, 0, {0, 1, NONE}},
        {{1, 0, 3, 2, 5, 4, 7, 6}, 0, {6, 7, NONE}},
        {{7, 2, 1, 4, 3, 6, 5, 0}, 0, {2, 3, NONE}},
    };
    s = build(TC_OP_ALLGATHER, TC_ALGO_NEIGHBOR, 8, 800, 0, 0);
    expect_steps(s, p8_even, 4);
    tc_sched_free(s);
    static const hand_step p6[] = {
        {{1, 0, 3, 2, 5, 4}, 3, {3, NONE}},
        {{5, 2, 1, 4, 3, 0}, 3, {2, 3, NONE}},
        {{1, 0, 3, 2, 5, 4}, 3, {4, 5, NONE}},
    };
    s = build(TC_OP_ALLGATHER, TC_ALGO_NEIGHBOR, 6, 600, 0, 0);
    expect_steps(s, p6, 3);
    tc_sched_free(s);
    /* Odd rank counts are refused in one line naming what fits. */
    for (uint32_t p = 1; p < 40; p += 2) {
        tc_err err = {{0}};
        assert_false(tc_coll_valid(TC_OP_ALLGATHER, TC_ALGO_NEIGHBOR, p, NULL, &err));
        assert_non_null(strstr(err.msg, "even rank count"));
        assert_non_null(strstr(err.msg, "valid here are ring"));
        assert_null(strchr(err.msg, '\n'));
    }
}

/* ---- segmented ring all-reduce (Open MPI) ---- */

static void segring_reduces_segment_rounds_then_gathers_blocks(void **state)
{
    (void)state;
    /* 8 ranks, 2 segments: slot 2b + j is segment j of block b. Round j,
     * step s: r sends segment j of block r - s to r + 1; then the
     * all-gather sends whole blocks r + 1 - k. Rank 3: */
    static const int rs3[] = {6, 4, 2, 0, 14, 12, 10, 7, 5, 3, 1, 15, 13, 11};
    static const int ag3[][2] = {{8, 9}, {6, 7}, {4, 5}, {2, 3}, {0, 1}, {14, 15}, {12, 13}};
    hand_step p8[21];
    for (int t = 0; t < 21; t++) {
        for (int r = 0; r < 8; r++)
            p8[t].dst[r] = (r + 1) % 8;
        p8[t].who = 3;
        if (t < 14) {
            p8[t].blocks[0] = rs3[t];
            p8[t].blocks[1] = NONE;
        } else {
            p8[t].blocks[0] = ag3[t - 14][0];
            p8[t].blocks[1] = ag3[t - 14][1];
            p8[t].blocks[2] = NONE;
        }
    }
    tc_sched *s = build(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, 8, 1600, 2, 0);
    expect_steps(s, p8, 21);
    assert_int_equal(s->nphases, 2);
    assert_int_equal(s->phases[0].repeat, 14);
    assert_true(s->phases[0].bytes == 100 && s->phases[1].bytes == 200);
    assert_int_equal(s->phases[1].repeat, 7);
    tc_sched_free(s);
    /* Default: one segment, the plain ring's 2(p-1) steps of n/p. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, 8, 800, 0, 0);
    assert_int_equal(s->nsteps, 14);
    assert_true(s->phases[0].bytes == 100 && s->phases[1].bytes == 100);
    tc_sched_free(s);
    /* 7 ranks, 3 segments: (3 + 1) x 6 steps; rank 3 sends slot 3 x 3 + 0
     * first and, in all-gather step k = 5, block 3 + 1 - 5 = 6 (slots 18-20)
     * last. */
    s = build(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, 7, 2100, 3, 0);
    assert_int_equal(s->nsteps, 24);
    tc_xfers x;
    tc_xfers_init(&x, true);
    assert_int_equal(tc_sched_emit(s, 0, &x), TC_OK);
    assert_int_equal(x.segs[x.v[3].seg_off].src_slot, 9);
    assert_int_equal(tc_sched_emit(s, 23, &x), TC_OK);
    assert_int_equal(x.v[3].dst, 4);
    assert_int_equal(x.segs[x.v[3].seg_off].src_slot, 18);
    assert_int_equal(x.segs[x.v[3].seg_off].count, 3);
    tc_xfers_free(&x);
    tc_sched_free(s);
}

/* ---- names ---- */

static void names_parse_and_list(void **state)
{
    (void)state;
    const char *names[] = {"shift", "scatter-ring", "rsg", "neighbor", "segring"};
    const tc_algo algos[] = {TC_ALGO_SHIFT, TC_ALGO_SCATTER_RING, TC_ALGO_RSG, TC_ALGO_NEIGHBOR, TC_ALGO_SEGRING};
    for (int i = 0; i < 5; i++) {
        tc_coll_req req = {0};
        assert_int_equal(tc_algo_parse(names[i], &req, NULL), TC_OK);
        assert_int_equal(req.algo, algos[i]);
        assert_string_equal(tc_algo_name(algos[i]), names[i]);
    }
    tc_coll_req req = {0};
    assert_int_equal(tc_algo_parse("segring:chunks=16", &req, NULL), TC_OK);
    assert_int_equal(req.chunks, 16);
    tc_err err = {{0}};
    assert_int_equal(tc_algo_parse("nosuch", &req, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "topocc collective --help lists all"));
    /* the nearest name is suggested, and the line is whole (the list of
     * every name did not fit in an error and was cut) */
    assert_int_equal(tc_algo_parse("segrin", &req, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "did you mean 'segring'?"));
    assert_true(strlen(err.msg) < TC_ERR_LEN - 1 && err.msg[strlen(err.msg) - 1] == ')');
    /* Each implements exactly its operations. */
    const struct {
        tc_algo a;
        tc_op op;
    } ok[] = {{TC_ALGO_SHIFT, TC_OP_ALLGATHER},     {TC_ALGO_SCATTER_RING, TC_OP_BROADCAST},
              {TC_ALGO_RSG, TC_OP_REDUCE},          {TC_ALGO_NEIGHBOR, TC_OP_ALLGATHER},
              {TC_ALGO_SEGRING, TC_OP_ALLREDUCE},   {TC_ALGO_PAIRWISE, TC_OP_REDUCESCATTER},
              {TC_ALGO_PAIRWISE, TC_OP_ALLTOALL}};
    for (int a = TC_ALGO_SHIFT; a <= TC_ALGO_SEGRING; a++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            bool want = false;
            for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
                want = want || (ok[i].a == (tc_algo)a && ok[i].op == (tc_op)op);
            assert_int_equal(tc_coll_valid((tc_op)op, (tc_algo)a, 12, NULL, NULL), want);
        }
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_PAIRWISE, 12, NULL, NULL));
}

/* ---- executed on real buffers ---- */

static const tc_algo new_algos[] = {TC_ALGO_SHIFT, TC_ALGO_SCATTER_RING, TC_ALGO_RSG, TC_ALGO_PAIRWISE,
                                    TC_ALGO_NEIGHBOR, TC_ALGO_SEGRING};

static void check_one(tc_op op, tc_algo algo, uint32_t p, uint32_t chunks, uint32_t root, int *checked)
{
    if (!tc_coll_valid(op, algo, p, NULL, NULL))
        return;
    tc_err err = {{0}};
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = 1000003.0, .chunks = chunks, .root = root % p};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, NULL, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: build failed: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    if (tc_sched_check(s, &err) != TC_OK)
        fail_msg("%s/%s p=%u chunks=%u root=%u: %s", tc_op_name(op), tc_algo_name(algo), p, chunks, root % p,
                 err.msg);
    tc_sched_free(s);
    (*checked)++;
}

static void every_rank_count_is_exact(void **state)
{
    (void)state;
    static const uint32_t big[] = {127, 128, 129, 255, 256, 257, 1000};
    int checked = 0;
    for (size_t a = 0; a < sizeof new_algos / sizeof *new_algos; a++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            for (uint32_t p = 1; p <= 70; p++)
                check_one((tc_op)op, new_algos[a], p, 0, 0, &checked);
            for (size_t i = 0; i < sizeof big / sizeof *big; i++)
                check_one((tc_op)op, new_algos[a], big[i], 0, big[i] / 3, &checked);
        }
    /* shift, scatter-ring, rsg, segring and pairwise's two operations at
     * all 77 counts; neighbor at the 38 even ones. */
    assert_int_equal(checked, 6 * 77 + 38);
}

/* Every root up to 40 ranks (the root hand-over of rsg happens for odd
 * roots below 2 (p - 2^floor(lg p))), three roots on 24 larger counts. */
static void every_root_is_exact(void **state)
{
    (void)state;
    static const uint32_t varied[] = {41, 43, 47, 48, 50, 53, 56, 60, 63, 64, 65, 66,
                                      69, 70, 96, 100, 127, 128, 129, 200, 255, 256, 257, 1000};
    int checked = 0;
    const tc_algo rooted[] = {TC_ALGO_SCATTER_RING, TC_ALGO_RSG};
    const tc_op ops[] = {TC_OP_BROADCAST, TC_OP_REDUCE};
    for (int a = 0; a < 2; a++) {
        for (uint32_t p = 2; p <= 40; p++)
            for (uint32_t root = 0; root < p; root++)
                check_one(ops[a], rooted[a], p, 0, root, &checked);
        for (size_t i = 0; i < sizeof varied / sizeof *varied; i++) {
            uint32_t p = varied[i];
            check_one(ops[a], rooted[a], p, 0, p - 1, &checked);
            check_one(ops[a], rooted[a], p, 0, p / 2 + 1, &checked);
            check_one(ops[a], rooted[a], p, 0, 1, &checked);
        }
    }
    assert_int_equal(checked, 2 * (819 + 72));
}

static void segring_segment_counts_are_exact(void **state)
{
    (void)state;
    static const uint32_t counts[] = {1, 2, 3, 5, 7, 16};
    int checked = 0;
    for (uint32_t p = 1; p <= 70; p++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            check_one(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, p, counts[c], 0, &checked);
    static const uint32_t big[] = {127, 128, 129, 255, 256, 257, 1000};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        check_one(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, big[i], 3, 0, &checked);
        check_one(TC_OP_ALLREDUCE, TC_ALGO_SEGRING, big[i], 8, 0, &checked);
    }
    assert_int_equal(checked, 70 * 6 + 14);
}

/* A schedule rescaled to another size stays exact, and the library
 * algorithms build at 65,536 ranks. */
static void rescaled_and_large_schedules(void **state)
{
    (void)state;
    tc_xfers x;
    tc_xfers_init(&x, false);
    for (size_t a = 0; a < sizeof new_algos / sizeof *new_algos; a++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            if (!tc_coll_valid((tc_op)op, new_algos[a], 12, NULL, NULL))
                continue;
            tc_sched *s = build((tc_op)op, new_algos[a], 12, 12345, 2, 7);
            tc_sched_set_bytes(s, 7777777);
            tc_err err = {{0}};
            if (tc_sched_check(s, &err) != TC_OK)
                fail_msg("rescaled %s/%s: %s", tc_op_name((tc_op)op), tc_algo_name(new_algos[a]), err.msg);
            tc_sched_free(s);
            tc_coll_req req = {.op = (tc_op)op, .algo = new_algos[a], .p = 65536, .bytes = 1 << 30, .root = 7};
            assert_int_equal(tc_coll_build(&req, NULL, &s, &err), TC_OK);
            assert_int_equal(tc_sched_emit(s, s->nsteps / 2, &x), TC_OK);
            tc_sched_free(s);
        }
    tc_xfers_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shift_sends_its_own_block_i_ranks_ahead),
        cmocka_unit_test(scatter_ring_scatters_by_halves_then_rings),
        cmocka_unit_test(rsg_halves_near_first_then_gathers),
        cmocka_unit_test(pairwise_reduce_scatter_shifts_for_every_rank_count),
        cmocka_unit_test(neighbor_exchange_alternates_partners),
        cmocka_unit_test(segring_reduces_segment_rounds_then_gathers_blocks),
        cmocka_unit_test(names_parse_and_list),
        cmocka_unit_test(every_rank_count_is_exact),
        cmocka_unit_test(every_root_is_exact),
        cmocka_unit_test(segring_segment_counts_are_exact),
        cmocka_unit_test(rescaled_and_large_schedules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
