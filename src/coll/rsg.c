/*
 * rsg.c - Rabenseifner's reduce: a reduce-scatter by recursive halving, then
 * a binomial gather of the pieces to the root. MPICH's
 * MPIR_Reduce_intra_reduce_scatter_gather (Thakur, Rabenseifner & Gropp,
 * IJHPCA 2005). Source read: pmodels/mpich, tag v5.0.1,
 * src/mpi/coll/reduce/reduce_intra_reduce_scatter_gather.c.
 *
 * p' = 2^floor(lg p) participants, rem = p - p'. The vector is cut into p'
 * pieces (MPICH's cnts/disps; slot j holds piece j).
 *
 * Fold (rem > 0), one step: each odd rank below 2 rem sends its whole
 * vector to its even neighbour r - 1, which adds it and takes part as
 * participant r / 2; ranks from 2 rem on are participants r - rem. (The
 * even ranks absorb, unlike MPICH's all-reduce, so that root 0 takes part.)
 *
 * Reduce-scatter, lg p' steps, partners 1, 2, 4, ... apart: in step k
 * participant q exchanges with q ^ 2^k; both hold the same range of pieces,
 * the one with the lower number keeps the lower half and sends the upper,
 * the other the reverse; the received half is added. So bit k of q picks a
 * half at depth k, and q ends with the single piece bitrev(q) (q's lg p'
 * bits reversed). Step k carries n / 2^(k+1).
 *
 * Root hand-over, one step, only when the root is an odd rank below 2 rem
 * (it took no part): rank 0 (participant 0, holding piece 0) sends piece 0
 * to the root, which plays participant 0 from then on.
 *
 * Gather, lg p' steps, partners p'/2, p'/4, ... apart: with R the root's
 * participant number, step t (m = p' / 2^(t+1)) has every participant that
 * agrees with R on the bits above m's and differs at m's send all it holds
 * (2^t pieces: those whose bitrev differs from its own only in the top t
 * bits, a contiguous range) to q ^ m, and leave. Step t carries 2^t n / p'.
 *
 * Cost (p a power of two): 2 lg p alpha + 2 n (p-1)/p beta + n (p-1)/p
 * gamma; otherwise one more step of n (the fold), and one of n/p' when the
 * root is an odd rank below 2 rem. chunks is not used.
 */
#include "coll/algos.h"

static bool rsg_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_REDUCE) {
        tc_fail(err, TC_EINVAL, "rsg implements only reduce");
        return false;
    }
    return true;
}

/* params: [0] p', [1] rem, [2] lg p', [3] root hand-over step (0/1),
 * [4] the root's participant number. */

static uint32_t bitrev(uint32_t q, uint32_t bits)
{
    uint32_t b = 0;
    for (uint32_t i = 0; i < bits; i++)
        b |= ((q >> i) & 1u) << (bits - 1 - i);
    return b;
}

/* The rank playing participant q; in the gather, after the hand-over, the
 * root plays participant 0. */
static uint32_t rank_of(const tc_sched *s, uint32_t q, bool gather)
{
    uint32_t rem = s->params[1];
    if (gather && q == 0 && s->params[3])
        return s->req.root;
    return q < rem ? 2 * q : q + rem;
}

static tc_status emit_rsg(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t pp = s->params[0], rem = s->params[1], lg = s->params[2], hand = s->params[3], R = s->params[4];
    double n = s->nblk * s->blk_bytes;
    if (rem) {
        if (step == 0) {
            for (uint32_t i = 0; i < rem; i++) {
                tc_xfers_add(x, 2 * i + 1, 2 * i, n, true);
                tc_xfers_seg(x, 0, 0, s->nblk);
            }
            return TC_OK;
        }
        step--;
    }
    if (step < lg) {
        uint32_t k = step, m = 1u << k, h = pp >> (k + 1);
        for (uint32_t q = 0; q < pp; q++) {
            uint32_t peer = q ^ m;
            /* the half the partner keeps: its range at depth k + 1 */
            uint32_t base = bitrev(peer & (2 * m - 1), lg);
            tc_xfers_add(x, rank_of(s, q, false), rank_of(s, peer, false), h * s->blk_bytes, true);
            tc_xfers_seg(x, base, base, h);
        }
        return TC_OK;
    }
    step -= lg;
    if (hand) {
        if (step == 0) {
            tc_xfers_add(x, 0, s->req.root, s->blk_bytes, false);
            tc_xfers_seg(x, 0, 0, 1);
            return TC_OK;
        }
        step--;
    }
    uint32_t t = step, sh = lg - 1 - t, m = 1u << sh, c = 1u << t;
    uint32_t first = ((R >> sh) ^ 1u) << sh; /* the senders are first .. first + m - 1 */
    for (uint32_t j = 0; j < m; j++) {
        uint32_t q = first + j;
        uint32_t base = bitrev(q, lg) & ~(c - 1);
        tc_xfers_add(x, rank_of(s, q, true), rank_of(s, q ^ m, true), c * s->blk_bytes, false);
        tc_xfers_seg(x, base, base, c);
    }
    return TC_OK;
}

static tc_status rsg_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, root = req->root, lg = tc_log2_floor(p), pp = 1u << lg, rem = p - pp;
    bool hand = root < 2 * rem && root % 2 == 1;
    uint32_t R = root < 2 * rem ? (hand ? 0 : root / 2) : root - rem;
    s->params[0] = pp;
    s->params[1] = rem;
    s->params[2] = lg;
    s->params[3] = hand;
    s->params[4] = R;
    s->emit = emit_rsg;
    s->nblk = s->nslots = pp;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, pp);
    /* Participants are rank numbers only when p is a power of two: XOR and
     * SHIFT patterns then, generic otherwise. */
    bool ok = true;
    if (rem) {
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_XOR, 1, pp * s->blk_bytes, "rsg fold");
        ok = ph != NULL;
        if (ok) {
            ph->src_first = 0;
            ph->src_count = 2 * rem;
        }
    }
    for (uint32_t k = 0; k < lg && ok; k++)
        ok = tc_sched_add_phase(s, 1, rem ? TC_PAT_GENERIC : TC_PAT_XOR, rem ? 0 : (int64_t)1 << k,
                                (pp >> (k + 1)) * s->blk_bytes, "recursive halving") != NULL;
    if (hand && ok) {
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_SHIFT, root, s->blk_bytes, "rsg root hand-over");
        ok = ph != NULL;
        if (ok) {
            ph->src_first = 0;
            ph->src_count = 1;
        }
    }
    for (uint32_t t = 0; t < lg && ok; t++) {
        uint32_t sh = lg - 1 - t, m = 1u << sh;
        uint32_t first = ((R >> sh) ^ 1u) << sh;
        /* The senders all sit on the side of bit sh opposite the root's. */
        int64_t arg = (first & m) ? -(int64_t)m : (int64_t)m;
        tc_phase *ph = tc_sched_add_phase(s, 1, rem ? TC_PAT_GENERIC : TC_PAT_SHIFT, rem ? 0 : arg,
                                          (double)(1u << t) * s->blk_bytes, "binomial gather");
        ok = ph != NULL;
        if (ok && !rem) {
            ph->src_first = first;
            ph->src_count = m;
        }
    }
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_rsg = {rsg_valid, rsg_build};
