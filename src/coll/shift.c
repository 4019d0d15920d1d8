/*
 * shift.c - the shift all-gather: SimGrid SMPI's "ring" all-gather, from
 * STAR-MPI (Faraj & Yuan, "Automatic Generation and Tuning of MPI Collective
 * Communication Routines", ICS 2005). Source read: simgrid/simgrid, tag v4.1,
 * src/smpi/colls/allgather/allgather-ring.cpp (allgather__ring).
 *
 * p - 1 steps. In step i (1 <= i < p) rank r sends its own block, and only
 * that, to r + i and receives the block of r - i (SimGrid's sendrecv with
 * dst = rank + i, src = rank - i). Unlike the ring all-gather nothing is
 * forwarded: every block travels once, straight from its owner, so step i is
 * the shift r -> r + i of one block (TC_PAT_SHIFT, arg i) and the formula
 * evaluator's closed form for shifts applies on a Clos. The own block is
 * already in place (SimGrid's local sendrecv is a copy, free here).
 * Cost: (p-1) alpha + n(p-1)/p beta, with p - 1 different partners instead of
 * the ring's one. chunks is not used.
 */
#include "coll/algos.h"

static bool shift_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "shift implements only allgather");
        return false;
    }
    return true;
}

/* step = i - 1: every rank r sends block r to r + i. */
static tc_status emit_shift(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, i = step + 1;
    for (uint32_t r = 0; r < p; r++) {
        tc_xfers_add(x, r, (uint32_t)(((uint64_t)r + i) % p), s->blk_bytes, false);
        tc_xfers_seg(x, r, r, 1);
    }
    return TC_OK;
}

static tc_status shift_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    s->emit = emit_shift;
    s->nblk = s->nslots = p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    for (uint32_t i = 1; i < p; i++)
        if (!tc_sched_add_phase(s, 1, TC_PAT_SHIFT, i, s->blk_bytes, "shift all-gather"))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

const tc_algo_impl tc_impl_shift = {shift_valid, shift_build};
