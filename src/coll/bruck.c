/*
 * bruck.c - Bruck's log-step all-gather and all-to-all, as MPICH's
 * MPIR_Allgather_intra_brucks and MPIR_Alltoall_intra_brucks (pmodels/mpich
 * v5.0.1, src/mpi/coll/allgather/allgather_intra_brucks.c and
 * src/mpi/coll/alltoall/alltoall_intra_brucks.c), both citing Bruck et al.,
 * IEEE TPDS, Nov. 1997. The traffic is MPICH's: all-gather step k sends the
 * min(2^k, p - 2^k) blocks held to r - 2^k; all-to-all step k sends the
 * blocks whose bit k is set to r + 2^k. The local rotations differ (below)
 * and cost nothing in these models.
 *
 * All-gather: in step k (k < ceil(log2 p)) rank r sends the min(2^k, p - 2^k)
 * blocks r, r+1, ... (mod p) it holds to r - 2^k. Blocks are addressed by
 * their absolute index, so they land in place and MPICH's final local
 * rotation (its tmp_buf rotated down by r blocks) is not needed. Cost: ceil(lg p) a + n(p-1)/p b.
 *
 * All-to-all: rank r's working buffer W (scratch slots [2 nblk, 3 nblk))
 * holds at position i the block travelling i hops forward. The initial
 * rotation puts its input block for rank r+i at position i; in step k every
 * rank sends the positions with bit k set to r + 2^k, which keeps them at the
 * same position; after the last step position i holds the block from r - i,
 * and the final inverse rotation moves it to output slot nblk + (r - i).
 * The rotations are folded into the first and last steps: step 0 reads the
 * moving positions straight from the input and copies the others into W;
 * the last step writes straight to the output and copies the positions that
 * stay. Cost: ceil(lg p) a + (n/2) lg p b.
 *
 * chunks is not used: both algorithms are latency-oriented.
 */
#include "coll/algos.h"

static bool bruck_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_ALLGATHER && op != TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "bruck implements only allgather and alltoall");
        return false;
    }
    return true;
}

/* Positions i in [0, p) with bit k set. */
static uint32_t count_bit(uint32_t p, uint32_t k)
{
    uint64_t period = (uint64_t)1 << (k + 1), half = (uint64_t)1 << k;
    uint64_t full = p / period, rest = p % period;
    return (uint32_t)(full * half + (rest > half ? rest - half : 0));
}

static tc_status emit_allgather(const tc_sched *s, uint32_t k, tc_xfers *x)
{
    uint32_t p = s->req.p, d = 1u << k, cnt = d < p - d ? d : p - d;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t dst = (r + p - d) % p;
        tc_xfers_add(x, r, dst, cnt * s->blk_bytes, false);
        if (!x->with_data)
            continue;
        if (r + cnt <= p) {
            tc_xfers_seg(x, r, r, cnt);
        } else {
            tc_xfers_seg(x, r, r, p - r);
            tc_xfers_seg(x, 0, 0, cnt - (p - r));
        }
    }
    return TC_OK;
}

static tc_status emit_alltoall(const tc_sched *s, uint32_t k, tc_xfers *x)
{
    uint32_t p = s->req.p, nb = s->nblk, K = s->params[0], d = 1u << k;
    uint32_t w = 2 * nb; /* working buffer base */
    if (p == 1) {
        tc_xfers_add(x, 0, 0, 0, false);
        tc_xfers_seg(x, 0, nb, 1);
        return TC_OK;
    }
    bool first = k == 0, last = k + 1 == K;
    double bytes = count_bit(p, k) * s->blk_bytes;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t dst = (r + d) % p;
        tc_xfers_add(x, r, dst, bytes, false);
        if (!x->with_data)
            continue;
        for (uint32_t i = 0; i < p; i++) {
            if (!(i & d))
                continue;
            uint32_t from = first ? (r + i) % p : w + i;
            uint32_t to = last ? nb + (dst + p - i) % p : w + i;
            tc_xfers_seg(x, from, to, 1);
        }
    }
    if (!x->with_data || !(first || last))
        return TC_OK;
    /* The positions that do not move this step go through the rotations
     * locally. */
    for (uint32_t r = 0; r < p; r++) {
        tc_xfers_add(x, r, r, 0, false);
        for (uint32_t i = 0; i < p; i++) {
            if (i & d)
                continue;
            uint32_t from = first ? (r + i) % p : w + i;
            uint32_t to = last ? nb + (r + p - i) % p : w + i;
            tc_xfers_seg(x, from, to, 1);
        }
    }
    return TC_OK;
}

static tc_status emit_bruck(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    return s->req.op == TC_OP_ALLGATHER ? emit_allgather(s, step, x) : emit_alltoall(s, step, x);
}

static tc_status bruck_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, K = tc_log2_ceil(p);
    bool a2a = req->op == TC_OP_ALLTOALL;
    s->emit = emit_bruck;
    s->nblk = p;
    s->nslots = a2a ? 3 * p : p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    s->params[0] = K;
    if (a2a && p == 1) {
        /* Only the local copy of the rank's own block to the output. */
        tc_status cst = tc_sched_add_copy_phase(s, err);
        if (cst)
            return cst;
        return TC_OK;
    }
    for (uint32_t k = 0; k < K; k++) {
        uint32_t d = 1u << k;
        uint32_t blocks = a2a ? count_bit(p, k) : (d < p - d ? d : p - d);
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_SHIFT, a2a ? (int64_t)d : -(int64_t)d,
                                          blocks * s->blk_bytes, a2a ? "bruck all-to-all" : "bruck all-gather");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_bruck = {bruck_valid, bruck_build};
