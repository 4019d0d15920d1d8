/*
 * neighbor.c - Open MPI's neighbor-exchange all-gather,
 * ompi_coll_base_allgather_intra_neighborexchange (Chen et al., "Performance
 * evaluation of allgather algorithms on terascale Linux cluster with fast
 * Ethernet", HPCAsia 2005). Source read: open-mpi/ompi, tag v5.0.10,
 * ompi/mca/coll/base/coll_base_allgather.c.
 *
 * p even only: for an odd p Open MPI prints a warning and runs its ring
 * all-gather (ompi_coll_base_allgather_intra_ring) instead; here an odd p
 * is refused and `ring` is the algorithm to ask for.
 *
 * p/2 steps. Step 0: ranks 2q and 2q + 1 swap their own blocks (one block
 * each way), so both hold block pair q = blocks (2q, 2q + 1). Step i
 * (1 <= i < p/2) exchanges two blocks (one pair) with a neighbour: an even
 * rank with r - 1 in odd steps and r + 1 in even steps, an odd rank with
 * r + 1 in odd steps and r - 1 in even steps (wrapping around). What is sent
 * is the pair received in the step before (in step 1, the rank's own pair):
 * for rank r in pair q,
 *
 *   even r: pair q (i = 1), q - i/2 (i even), q + (i-1)/2 (i odd, i > 1)
 *   odd r:  pair q (i = 1), q + i/2 (i even), q - (i-1)/2 (i odd, i > 1)
 *
 * (pairs modulo p/2), which is Open MPI's recv_data_from bookkeeping with
 * offsets +-2 in closed form. Even steps pair 2q with 2q + 1 (XOR 1); odd
 * steps pair 2q + 1 with 2q + 2: generic. Cost: (p/2) alpha + n (p-1)/p beta.
 * chunks is not used.
 */
#include "coll/algos.h"

static bool neighbor_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "neighbor implements only allgather");
        return false;
    }
    if (p % 2) {
        tc_fail(err, TC_EINVAL, "neighbor exchange needs an even rank count; Open MPI runs ring for odd ones");
        return false;
    }
    return true;
}

static tc_status emit_neighbor(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, np = p / 2, i = step;
    if (i == 0) {
        for (uint32_t r = 0; r < p; r++) {
            tc_xfers_add(x, r, r ^ 1u, s->blk_bytes, false);
            tc_xfers_seg(x, r, r, 1);
        }
        return TC_OK;
    }
    bool odd_step = i % 2 == 1;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t q = r / 2;
        bool even = r % 2 == 0;
        /* even ranks look left in odd steps, odd ranks right */
        bool left = even == odd_step;
        uint32_t dst = left ? (r + p - 1) % p : (r + 1) % p;
        /* the pair's offset from q, moving away from q on alternate sides */
        int64_t off = i == 1 ? 0 : odd_step ? (int64_t)(i - 1) / 2 : (int64_t)i / 2;
        if (even == !odd_step)
            off = -off;
        uint32_t pair = (uint32_t)(((int64_t)q + off % np + np) % np);
        tc_xfers_add(x, r, dst, 2 * s->blk_bytes, false);
        tc_xfers_seg(x, 2 * pair, 2 * pair, 2);
    }
    return TC_OK;
}

static tc_status neighbor_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    s->emit = emit_neighbor;
    s->nblk = s->nslots = p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    if (!tc_sched_add_phase(s, 1, TC_PAT_XOR, 1, s->blk_bytes, "neighbor exchange"))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 1; i < p / 2; i++) {
        bool odd = i % 2 == 1;
        if (!tc_sched_add_phase(s, 1, odd ? TC_PAT_GENERIC : TC_PAT_XOR, odd ? 0 : 1, 2 * s->blk_bytes,
                                "neighbor exchange"))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_neighbor = {neighbor_valid, neighbor_build};
