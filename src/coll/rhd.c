/*
 * rhd.c - recursive halving and doubling (Rabenseifner's algorithm).
 *
 * all-reduce follows MPICH's MPIR_Allreduce_intra_reduce_scatter_allgather
 * (pmodels/mpich v5.0.1, src/mpi/coll/allreduce/
 * allreduce_intra_reduce_scatter_allgather.c): a reduce-scatter by recursive
 * halving "beginning with processes that are distance 1 apart", then an
 * all-gather by recursive doubling back down. With p' = 2^floor(lg p)
 * participants holding p' blocks, reduce-scatter step j exchanges with
 * nr ^ 2^j (masks 1, 2, ..., p'/2): the participant whose bit j is 0 keeps
 * the lower half of its current range of blocks and sends the upper half,
 * the other the reverse, so participant nr ends with block bitreverse(nr)
 * reduced; the all-gather runs masks p'/2, ..., 2, 1, each participant
 * sending the range it holds. 2 lg p' steps of n/2, n/4, ..., n/p', n/p',
 * ..., n/2. reduce-scatter follows MPICH's
 * MPIR_Reduce_scatter_intra_recursive_halving (same release,
 * src/mpi/coll/reduce_scatter/reduce_scatter_intra_recursive_halving.c):
 * masks p'/2, p'/4, ..., 1 (the farthest partner first), the lower rank
 * keeping the lower half, so participant nr ends with block nr.
 *
 * "rhd:order=near|far" chooses the order of the partners; the default is
 * near for all-reduce and far for reduce-scatter, MPICH's. all-reduce with
 * order=far is the far-first halving above then the doubling in reverse
 * (masks 1, 2, ..., p'/2). reduce-scatter with order=near is not MPICH's:
 * masks 1, 2, ..., p'/2, keeping the blocks whose bit j equals the rank's
 * (strided sets), so rank r still ends with block r.
 *
 * p not a power of two (all-reduce, rem = p - p'), as MPICH: each even rank
 * below 2 rem sends its whole vector to rank + 1, which adds it and takes
 * part as participant rank / 2 (the others, rank - rem); at the end each odd
 * rank below 2 rem returns the whole result to rank - 1. Two more steps of
 * n bytes, so (2 lg p' + 2) steps in all.
 *
 * reduce-scatter on p not a power of two, as MPICH's recursive halving: the
 * same fold (the whole vector of p blocks to rank + 1); the p' participants
 * then halve over p' new blocks, new block i being the original blocks
 * [ostart(i), ostart(i + 1)) with ostart(i) = 2i below rem and i + rem
 * from there (MPICH's newcnts: "this process has to also do its left
 * neighbor's work"); at the end each odd rank below 2 rem sends rank - 1
 * its block (recvcounts[rank - 1]), not the whole vector. lg p' + 2 steps.
 *
 * Differences from MPICH: block sizes are tc_block_bytes's (MPICH gives the
 * first count mod p' blocks one element more); reduce-scatter takes equal
 * counts per rank (MPI_Reduce_scatter_block's case). chunks are ignored.
 */
#include "coll/algos.h"

static bool rhd_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op == TC_OP_ALLREDUCE)
        return true;
    (void)p;
    if (op == TC_OP_REDUCESCATTER)
        return true;
    tc_fail(err, TC_EINVAL, "rhd has no %s", tc_op_name(op));
    return false;
}

/* params: [0] p', [1] rem, [2] lg p', [3] 1 for order=near. Participant
 * nr's rank: the odd ranks below 2 rem absorb their even neighbours. */
static uint32_t rank_of(const tc_sched *s, uint32_t nr)
{
    uint32_t rem = s->params[1];
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

/* The first original block of new block i (reduce-scatter with rem: new
 * blocks below rem are two original blocks; all-reduce: the blocks). */
static uint32_t ostart(const tc_sched *s, uint32_t i)
{
    uint32_t rem = s->params[1];
    if (s->req.op != TC_OP_REDUCESCATTER || rem == 0)
        return i;
    return i < rem ? 2 * i : i + rem;
}

/* Near order, contiguous ranges (MPICH's all-reduce): the first block of
 * participant nr's range before mask 2^j, of width p' / 2^j. */
static uint32_t near_start(uint32_t pp, uint32_t nr, uint32_t j)
{
    uint32_t start = 0;
    for (uint32_t i = 0; i < j; i++)
        if (nr >> i & 1)
            start += pp >> (i + 1);
    return start;
}

/* One exchange step (fold and unfold excluded): rs = reduce-scatter, j = the
 * mask's bit. */
static void emit_exchange(const tc_sched *s, bool rs, uint32_t j, tc_xfers *x)
{
    uint32_t pp = s->params[0];
    bool near = s->params[3] != 0, ar = s->req.op == TC_OP_ALLREDUCE;
    uint32_t m = 1u << j;
    for (uint32_t nr = 0; nr < pp; nr++) {
        uint32_t peer = nr ^ m;
        if (!near) {
            /* Far: the aligned group of m blocks; halving sends the half the
             * partner keeps, doubling the range held. */
            uint32_t base = rs ? peer & ~(m - 1) : nr & ~(m - 1);
            uint32_t lo = ostart(s, base), n = ostart(s, base + m) - lo;
            tc_xfers_add(x, rank_of(s, nr), rank_of(s, peer), n * s->blk_bytes, rs);
            tc_xfers_seg(x, lo, lo, n);
        } else if (ar) {
            /* Near, MPICH: the half of the current range the partner keeps
             * (halving), or the half this participant kept (doubling). */
            uint32_t half = pp >> (j + 1), start = near_start(pp, nr, j);
            uint32_t keeper = rs ? peer : nr;
            uint32_t base = start + ((keeper >> j & 1) ? half : 0);
            tc_xfers_add(x, rank_of(s, nr), rank_of(s, peer), half * s->blk_bytes, rs);
            tc_xfers_seg(x, base, base, half);
        } else {
            /* Near reduce-scatter: the blocks congruent to the partner
             * mod 2^(j+1), one segment each (two original blocks for a
             * new block below rem). */
            uint32_t step = m << 1, n = 0;
            for (uint32_t b = peer & (step - 1); b < pp; b += step)
                n += ostart(s, b + 1) - ostart(s, b);
            tc_xfers_add(x, rank_of(s, nr), rank_of(s, peer), n * s->blk_bytes, true);
            for (uint32_t b = peer & (step - 1); b < pp && x->with_data; b += step)
                tc_xfers_seg(x, ostart(s, b), ostart(s, b), ostart(s, b + 1) - ostart(s, b));
        }
    }
}

static tc_status emit_rhd(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t rem = s->params[1], lg = s->params[2];
    bool ar = s->req.op == TC_OP_ALLREDUCE, near = s->params[3] != 0;
    if (rem) {
        if (step == 0 || step == (ar ? 2 * lg + 1 : lg + 1)) {
            bool fold = step == 0;
            for (uint32_t i = 0; i < rem; i++) {
                /* reduce-scatter's unfold returns rank 2i its own block only */
                bool whole = fold || ar;
                tc_xfers_add(x, fold ? 2 * i : 2 * i + 1, fold ? 2 * i + 1 : 2 * i,
                             (whole ? s->nblk : 1) * s->blk_bytes, fold);
                tc_xfers_seg(x, whole ? 0 : 2 * i, whole ? 0 : 2 * i, whole ? s->nblk : 1);
            }
            return TC_OK;
        }
        step--;
    }
    bool rs = step < lg;
    uint32_t i = rs ? step : step - lg;
    /* Halving: near masks 1, 2, ...; far p'/2, p'/4, .... Doubling runs
     * the halving's masks backwards. */
    uint32_t j = rs ? (near ? i : lg - 1 - i) : (near ? lg - 1 - i : i);
    emit_exchange(s, rs, j, x);
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
    /* MPICH's orders by default: near for all-reduce, far for reduce-scatter. */
    bool near = req->variant == TC_VARIANT_NEAR || (req->variant != TC_VARIANT_FAR && ar);
    s->params[3] = near;
    s->emit = emit_rhd;
    /* reduce-scatter: one block per rank, p of them; all-reduce: p' */
    uint32_t nb = ar ? pp : p;
    s->nblk = s->nslots = nb;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, nb);
    /* Folded participants are not contiguous rank numbers: no XOR then. */
    tc_pattern pat = rem ? TC_PAT_GENERIC : TC_PAT_XOR;
    bool ok = true;
    if (rem)
        ok = add_fold(s, rem, nb * s->blk_bytes, "rhd fold");
    /* Step i of the halving uses mask 2^j and sends p'/2^(i+1) blocks in
     * either order; the doubling mirrors it. A reduce-scatter with rem
     * sends the most where its new blocks are double: far, the range from
     * block 0 (min(m, rem) of them double); near, the blocks congruent to 0
     * (ceil(rem / 2^(j+1)) of them). */
    for (uint32_t i = 0; i < lg && ok; i++) {
        uint32_t j = near ? i : lg - 1 - i, n = pp >> (i + 1);
        if (!ar && rem)
            n += near ? (rem + (2u << j) - 1) / (2u << j) : (n < rem ? n : rem);
        ok = tc_sched_add_phase(s, 1, pat, rem ? 0 : 1u << j, n * s->blk_bytes, "recursive halving") != NULL;
    }
    for (uint32_t i = 0; ar && i < lg && ok; i++) {
        uint32_t j = near ? lg - 1 - i : i;
        ok = tc_sched_add_phase(s, 1, pat, rem ? 0 : 1u << j, (1u << i) * s->blk_bytes, "recursive doubling") != NULL;
    }
    if (ok && rem)
        ok = add_fold(s, rem, (ar ? nb : 1) * s->blk_bytes, "rhd unfold");
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_rhd = {rhd_valid, rhd_build};
