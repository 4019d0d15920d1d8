/*
 * ring_fa.c - ring-fa: a ring re-formed around failures, what a
 * fault-aware library could do (docs/MODEL.md, "Failures"); not a
 * library's algorithm. auto never picks it: libraries run the schedule
 * they chose on the healthy network.
 *
 * The ring's order (position -> rank, rank r on endpoint r) is chosen on
 * the topology as it is, failures included: starting from the natural
 * order 0, 1, ..., p-1, 2-opt moves (reversing a stretch of the cycle)
 * are taken while they lower the longest detour the failures force on a
 * hop, then the detours' total, in links (a cut-off hop counting as longer
 * than any); on a healthy network nothing moves and the ring is `ring`'s. The schedule is MPICH's ring (ring.c) along that
 * order: all-reduce as a reduce-scatter then an all-gather, 2 (p - 1)
 * steps of S/p; reduce-scatter and all-gather the halves; rank r ends
 * with block r.
 */
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

#define FA_PASSES 8           /* 2-opt sweeps at most */
#define FA_CUT 1000000u       /* a hop with no route */

typedef struct fa_state {
    uint32_t p;
    uint32_t *order;          /* position -> rank */
} fa_state;

static void fa_free(void *x)
{
    fa_state *st = x;
    if (st) {
        free(st->order);
        free(st);
    }
}

static bool fa_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    if (op != TC_OP_ALLREDUCE && op != TC_OP_REDUCESCATTER && op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "ring-fa implements allreduce, reducescatter and allgather");
        return false;
    }
    if (!t || p > t->n_endpoints) {
        tc_fail(err, TC_EINVAL, "ring-fa orders the ranks on the topology: it needs one with at least p endpoints");
        return false;
    }
    return true;
}

/* What the failures add to a hop's route, in links (FA_CUT where they
 * leave none): its route on the topology as it is less its route on the
 * healthy one (tc_topo_route_healthy). 0 for a
 * hop the failures do not touch, so on a healthy network nothing moves. */
static uint32_t hop(const tc_topo *t, uint32_t a, uint32_t b, uint32_t *path)
{
    uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, a, b, path);
    if (n == TC_NO_ROUTE)
        return FA_CUT;
    if (!t->n_failed)
        return 0;
    uint32_t h = tc_topo_route_healthy(t, TC_ROUTE_DEFAULT, a, b, path);
    return n > h ? n - h : 0;
}

/* 2-opt on the cycle order[0..p): reversing order[i+1..j] replaces hops
 * (i, i+1) and (j, j+1) with (i, j) and (i+1, j+1); taken when the longer
 * of the two new hops is shorter than the longer old one, or as long and
 * the pair's sum lower. Hops are symmetric enough for a ring's direction
 * (routes both ways have equal length in a Clos and under dimension
 * order; detours may differ by a few links, which only weakens a move). */
static void two_opt(const tc_topo *t, uint32_t *order, uint32_t p, uint32_t *path)
{
    if (p < 4)
        return;
    for (int pass = 0; pass < FA_PASSES; pass++) {
        bool moved = false;
        for (uint32_t i = 0; i + 2 < p; i++) {
            uint32_t a = order[i], b = order[i + 1], ab = hop(t, a, b, path);
            if (ab == 0)
                continue; /* no detour */
            for (uint32_t j = i + 2; j < p; j++) {
                uint32_t c = order[j], d = order[(j + 1) % p];
                if (d == a)
                    continue;
                uint32_t cd = hop(t, c, d, path), ac = hop(t, a, c, path), bd = hop(t, b, d, path);
                uint32_t old_max = ab > cd ? ab : cd, new_max = ac > bd ? ac : bd;
                if (new_max < old_max || (new_max == old_max && ac + bd < ab + cd)) {
                    for (uint32_t x = i + 1, y = j; x < y; x++, y--) {
                        uint32_t tmp = order[x];
                        order[x] = order[y];
                        order[y] = tmp;
                    }
                    moved = true;
                    b = order[i + 1];
                    ab = hop(t, a, b, path);
                    if (ab == 0)
                        break;
                }
            }
        }
        if (!moved)
            break;
    }
}

static tc_status emit_fa(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const fa_state *st = s->state;
    uint32_t p = st->p;
    tc_op op = s->req.op;
    bool ag_phase = op == TC_OP_ALLGATHER || (op == TC_OP_ALLREDUCE && step >= p - 1);
    uint32_t t = op == TC_OP_ALLREDUCE && step >= p - 1 ? step - (p - 1) : step;
    for (uint32_t i = 0; i < p; i++) {
        /* position i sends to i + 1: the block of position i - 1 - t
         * (reduce-scatter) or i - t (all-gather); blocks are the ranks'
         * own, so rank r ends with block r */
        uint32_t j = ag_phase ? (i + p - t) % p : (i + 2 * p - 1 - t) % p;
        uint32_t blk = st->order[j];
        tc_xfers_add(x, st->order[i], st->order[(i + 1) % p], s->blk_bytes, !ag_phase);
        tc_xfers_seg(x, blk, blk, 1);
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status fa_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    uint32_t p = req->p;
    fa_state *st = calloc(1, sizeof *st);
    uint32_t *path = malloc(((size_t)tc_topo_max_path(t) + 4) * sizeof *path);
    if (!st || !path) {
        free(st);
        free(path);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    s->state = st;
    s->free_state = fa_free;
    st->p = p;
    st->order = malloc((size_t)p * sizeof *st->order);
    if (!st->order) {
        free(path);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t i = 0; i < p; i++)
        st->order[i] = i;
    two_opt(t, st->order, p, path);
    free(path);
    s->nblk = s->nslots = p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    s->emit = emit_fa;
    if (p == 1)
        return TC_OK;
    int halves = req->op == TC_OP_ALLREDUCE ? 2 : 1;
    for (int h = 0; h < halves; h++) {
        bool ag = req->op == TC_OP_ALLGATHER || h == 1;
        tc_phase *ph = tc_sched_add_phase(s, p - 1, TC_PAT_GENERIC, 0, s->blk_bytes,
                                          ag ? "re-formed ring all-gather" : "re-formed ring reduce-scatter");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_ring_fa = {fa_valid, fa_build};

