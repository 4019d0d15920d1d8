/*
 * pairwise.c - pairwise exchanges, as MPICH.
 *
 * all-to-all: MPICH's MPIR_Alltoall_intra_pairwise (pmodels/mpich v5.0.1,
 * src/mpi/coll/alltoall/alltoall_intra_pairwise.c). p - 1 steps. In step i
 * (1 <= i < p) rank r sends its block for rank r XOR i to it when p is a
 * power of two (every step is a perfect matching), otherwise it sends to
 * r + i and receives from r - i. The rank's own block is a local copy in the
 * first step. Cost: (p-1) a + n(p-1)/p b.
 *
 * reduce-scatter: MPICH's MPIR_Reduce_scatter_intra_pairwise (source read:
 * pmodels/mpich, tag v5.0.1,
 * src/mpi/coll/reduce_scatter/reduce_scatter_intra_pairwise.c). p - 1
 * steps, for every p: in step i rank r sends its contribution to block
 * r + i to rank r + i, which adds it to its own block, and receives block r
 * from r - i (the shift r -> r + i, never a XOR). The own contribution is
 * already in place. Cost: (p-1) a + n(p-1)/p b + n(p-1)/p g.
 *
 * chunks is not used.
 */
#include "coll/algos.h"

static bool pairwise_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_ALLTOALL && op != TC_OP_REDUCESCATTER) {
        tc_fail(err, TC_EINVAL, "pairwise implements only alltoall and reducescatter");
        return false;
    }
    return true;
}

static tc_status emit_pairwise(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, nb = s->nblk, i = step + 1;
    bool pow2 = s->params[0] != 0;
    if (s->req.op == TC_OP_REDUCESCATTER) {
        for (uint32_t r = 0; r < p; r++) {
            uint32_t dst = (uint32_t)(((uint64_t)r + i) % p);
            tc_xfers_add(x, r, dst, s->blk_bytes, true);
            tc_xfers_seg(x, dst, dst, 1);
        }
        return TC_OK;
    }
    if (step == 0 && x->with_data)
        for (uint32_t r = 0; r < p; r++) {
            tc_xfers_add(x, r, r, 0, false);
            tc_xfers_seg(x, r, nb + r, 1);
        }
    if (p == 1)
        return TC_OK;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t dst = pow2 ? r ^ i : (r + i) % p;
        tc_xfers_add(x, r, dst, s->blk_bytes, false);
        tc_xfers_seg(x, dst, nb + r, 1);
    }
    return TC_OK;
}

static tc_status pairwise_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    bool pow2 = tc_is_pow2(p);
    s->emit = emit_pairwise;
    s->nblk = p;
    s->nslots = 2 * p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    s->params[0] = pow2;
    if (req->op == TC_OP_REDUCESCATTER) {
        s->nslots = p;
        for (uint32_t i = 1; i < p; i++)
            if (!tc_sched_add_phase(s, 1, TC_PAT_SHIFT, i, s->blk_bytes, "pairwise reduce-scatter"))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
        return TC_OK;
    }
    if (p == 1) {
        tc_status cst = tc_sched_add_copy_phase(s, err);
        if (cst)
            return cst;
        return TC_OK;
    }
    for (uint32_t i = 1; i < p; i++)
        if (!tc_sched_add_phase(s, 1, pow2 ? TC_PAT_XOR : TC_PAT_SHIFT, i, s->blk_bytes, "pairwise exchange"))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

const tc_algo_impl tc_impl_pairwise = {pairwise_valid, pairwise_build};
