/*
 * rd.c - recursive doubling.
 *
 * all-reduce follows MPICH's MPIR_Allreduce_intra_recursive_doubling
 * (pmodels/mpich v5.0.1, src/mpi/coll/allreduce/
 * allreduce_intra_recursive_doubling.c): in step k rank r exchanges its
 * whole vector with r ^ 2^k (masks 1, 2, ..., p'/2) and both add: lg p steps
 * of n bytes. For p not a power of two, p' = 2^floor(lg p) and
 * rem = p - p': each even rank below 2 rem sends its vector to rank + 1
 * (which adds it and takes part as participant rank / 2) and sits out; the
 * others take part as rank - rem; the p' participants run the exchange; at
 * the end each odd rank below 2 rem returns the result to rank - 1:
 * lg p' + 2 steps.
 *
 * all-gather (p a power of two) follows MPICH's
 * MPIR_Allgather_intra_recursive_doubling (same release,
 * src/mpi/coll/allgather/allgather_intra_recursive_doubling.c, which asserts
 * a power-of-two size): in step k rank r sends the 2^k blocks it holds (the
 * aligned group of its subtree root r >> k << k) to r ^ 2^k: lg p steps of
 * n 2^k / p bytes. chunks are ignored.
 */
#include "coll/algos.h"

static bool rd_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op == TC_OP_ALLREDUCE)
        return true;
    if (op == TC_OP_ALLGATHER) {
        if (tc_is_pow2(p))
            return true;
        tc_fail(err, TC_EINVAL, "recursive doubling all-gather needs a power-of-two rank count");
        return false;
    }
    tc_fail(err, TC_EINVAL, "recursive doubling has no %s", tc_op_name(op));
    return false;
}

/* params: [0] p', [1] rem, [2] lg p'. Rank of the exchange participant nr:
 * the survivors of the folded pairs are the odd ranks below 2 rem (MPICH's
 * newrank = rank / 2). */
static uint32_t rank_of(const tc_sched *s, uint32_t nr)
{
    uint32_t rem = s->params[1];
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

static tc_status emit_rd(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t pp = s->params[0], rem = s->params[1], lg = s->params[2];
    if (s->req.op == TC_OP_ALLGATHER) {
        uint32_t m = 1u << step;
        for (uint32_t r = 0; r < pp; r++) {
            uint32_t base = r & ~(m - 1);
            tc_xfers_add(x, r, r ^ m, m * s->blk_bytes, false);
            tc_xfers_seg(x, base, base, m);
        }
        return TC_OK;
    }
    if (rem) {
        if (step == 0 || step == lg + 1) {
            bool fold = step == 0;
            for (uint32_t i = 0; i < rem; i++) {
                /* Fold: 2i -> 2i+1 (added); unfold: 2i+1 -> 2i. */
                tc_xfers_add(x, fold ? 2 * i : 2 * i + 1, fold ? 2 * i + 1 : 2 * i, s->blk_bytes, fold);
                tc_xfers_seg(x, 0, 0, 1);
            }
            return TC_OK;
        }
        step--;
    }
    uint32_t m = 1u << step;
    for (uint32_t nr = 0; nr < pp; nr++) {
        tc_xfers_add(x, rank_of(s, nr), rank_of(s, nr ^ m), s->blk_bytes, true);
        tc_xfers_seg(x, 0, 0, 1);
    }
    return TC_OK;
}

/* The fold (or unfold) exchange of the first 2 rem ranks: pairs (2i, 2i+1),
 * one side of each sending. */
static bool add_fold(tc_sched *s, uint32_t rem, double bytes, const char *label)
{
    tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_XOR, 1, bytes, label);
    if (!ph)
        return false;
    ph->src_first = 0;
    ph->src_count = 2 * rem;
    return true;
}

static tc_status rd_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, lg = tc_log2_floor(p), pp = 1u << lg, rem = p - pp;
    s->params[0] = pp;
    s->params[1] = rem;
    s->params[2] = lg;
    s->emit = emit_rd;
    bool ag = req->op == TC_OP_ALLGATHER;
    s->nblk = s->nslots = ag ? p : 1;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    bool ok = true;
    if (!ag && rem)
        ok = add_fold(s, rem, s->blk_bytes, "rd fold");
    for (uint32_t k = 0; k < lg && ok; k++) {
        uint32_t m = 1u << k;
        /* With folded ranks the participants are not contiguous, so the
         * exchange is no longer a XOR of rank numbers. */
        if (ag)
            ok = tc_sched_add_phase(s, 1, TC_PAT_XOR, m, m * s->blk_bytes, "rd all-gather") != NULL;
        else
            ok = tc_sched_add_phase(s, 1, rem ? TC_PAT_GENERIC : TC_PAT_XOR, rem ? 0 : m, s->blk_bytes,
                                    "rd exchange") != NULL;
    }
    if (ok && !ag && rem)
        ok = add_fold(s, rem, s->blk_bytes, "rd unfold");
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_rd = {rd_valid, rd_build};
