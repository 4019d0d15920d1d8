/*
 * rhd.c - Rabenseifner's all-reduce: reduce-scatter by recursive halving,
 * then all-gather by recursive doubling (Thakur, Rabenseifner & Gropp,
 * "Optimization of Collective Communication Operations in MPICH", IJHPCA
 * 2005; MPICH's reduce_scatter_allgather all-reduce).
 *
 * With p' = 2^floor(lg p) participants holding p' blocks: reduce-scatter
 * step j exchanges with nr ^ m, m = p'/2^(j+1), sending the half of the
 * current range that the partner keeps (m blocks, reduced there), so after
 * lg p' steps participant nr owns block nr; the all-gather runs the steps
 * backwards (m = 1, 2, ..., p'/2) sending the range held. 2 lg p' steps of
 * n/2, n/4, ..., n/p', n/p', ..., n/2.
 *
 * p not a power of two (rem = p - p'), as MPICH: among the first 2 rem ranks
 * each even one sends its whole vector to its odd neighbour, which adds it
 * and takes part; at the end each odd one returns the whole result. Two more
 * steps of n bytes, so (2 lg p' + 2) steps in all.
 *
 * reduce-scatter (p a power of two) is the first half alone; it leaves block
 * r on rank r. chunks are ignored.
 */
#include "coll/algos.h"

static bool rhd_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op == TC_OP_ALLREDUCE)
        return true;
    if (op == TC_OP_REDUCESCATTER) {
        if (tc_is_pow2(p))
            return true;
        tc_fail(err, TC_EINVAL, "recursive halving reduce-scatter needs a power-of-two rank count");
        return false;
    }
    tc_fail(err, TC_EINVAL, "rhd has no %s", tc_op_name(op));
    return false;
}

/* params: [0] p', [1] rem, [2] lg p'. Participant nr's rank: the odd ranks
 * below 2 rem absorb their even neighbours. */
static uint32_t rank_of(const tc_sched *s, uint32_t nr)
{
    uint32_t rem = s->params[1];
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

static tc_status emit_rhd(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t pp = s->params[0], rem = s->params[1], lg = s->params[2];
    bool ar = s->req.op == TC_OP_ALLREDUCE;
    if (ar && rem) {
        if (step == 0 || step == 2 * lg + 1) {
            bool fold = step == 0;
            for (uint32_t i = 0; i < rem; i++) {
                tc_xfers_add(x, fold ? 2 * i : 2 * i + 1, fold ? 2 * i + 1 : 2 * i, s->nblk * s->blk_bytes,
                             fold);
                tc_xfers_seg(x, 0, 0, s->nblk);
            }
            return TC_OK;
        }
        step--;
    }
    bool rs = step < lg;
    uint32_t m = rs ? pp >> (step + 1) : 1u << (step - lg);
    for (uint32_t nr = 0; nr < pp; nr++) {
        uint32_t peer = nr ^ m;
        /* Halving: send the half the partner keeps. Doubling: send the
         * range held, the aligned group of m blocks around nr. */
        uint32_t base = rs ? peer & ~(m - 1) : nr & ~(m - 1);
        tc_xfers_add(x, rank_of(s, nr), rank_of(s, peer), m * s->blk_bytes, rs);
        tc_xfers_seg(x, base, base, m);
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

static tc_status rhd_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, lg = tc_log2_floor(p), pp = 1u << lg, rem = p - pp;
    bool ar = req->op == TC_OP_ALLREDUCE;
    s->params[0] = pp;
    s->params[1] = rem;
    s->params[2] = lg;
    s->emit = emit_rhd;
    s->nblk = s->nslots = pp;
    s->blk_bytes = req->bytes / pp;
    /* Folded participants are not contiguous rank numbers: no XOR then. */
    tc_pattern pat = rem ? TC_PAT_GENERIC : TC_PAT_XOR;
    bool ok = true;
    if (rem)
        ok = add_fold(s, rem, req->bytes, "rhd fold");
    for (uint32_t j = 0; j < lg && ok; j++) {
        uint32_t m = pp >> (j + 1);
        ok = tc_sched_add_phase(s, 1, pat, rem ? 0 : m, m * s->blk_bytes, "recursive halving") != NULL;
    }
    for (uint32_t j = 0; ar && j < lg && ok; j++) {
        uint32_t m = 1u << j;
        ok = tc_sched_add_phase(s, 1, pat, rem ? 0 : m, m * s->blk_bytes, "recursive doubling") != NULL;
    }
    if (ok && rem)
        ok = add_fold(s, rem, req->bytes, "rhd unfold");
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_rhd = {rhd_valid, rhd_build};
