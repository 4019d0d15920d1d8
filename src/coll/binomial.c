/*
 * binomial.c - binomial trees (the MPICH broadcast and reduce for short
 * messages; Thakur, Rabenseifner & Gropp, IJHPCA 2005).
 *
 * broadcast: with v = r - root (mod p), in step k (k = 0 .. ceil(lg p) - 1)
 * every v < 2^k sends the whole buffer to v + 2^k (if below p): every
 * transfer of a step is the shift r -> r + 2^k, sent by the range of ranks
 * root .. root + min(2^k, p - 2^k) - 1 (tc_phase.src_first/src_count).
 * reduce runs the same tree backwards (k from high to low, v + 2^k adds
 * into v). all-reduce is a
 * binomial reduce to rank 0 then a binomial broadcast from it.
 * ceil(lg p) steps of n bytes each (twice that for all-reduce). chunks are
 * ignored: the whole buffer moves in every step.
 */
#include "coll/algos.h"

static bool binomial_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op == TC_OP_BROADCAST || op == TC_OP_REDUCE || op == TC_OP_ALLREDUCE)
        return true;
    tc_fail(err, TC_EINVAL, "binomial trees have no %s", tc_op_name(op));
    return false;
}

/* One tree level: v in [0, 2^k), v + 2^k < p; down = broadcast direction. */
static void emit_level(const tc_sched *s, uint32_t root, uint32_t k, bool down, tc_xfers *x)
{
    uint32_t p = s->req.p, d = 1u << k;
    uint32_t n = d < p - d ? d : p - d;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t a = (root + v) % p, b = (root + v + d) % p;
        tc_xfers_add(x, down ? a : b, down ? b : a, s->blk_bytes, !down);
        tc_xfers_seg(x, 0, 0, 1);
    }
}

static tc_status emit_binomial(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t K = s->params[0];
    switch (s->req.op) {
    case TC_OP_BROADCAST: emit_level(s, s->req.root, step, true, x); break;
    case TC_OP_REDUCE: emit_level(s, s->req.root, K - 1 - step, false, x); break;
    default:
        if (step < K)
            emit_level(s, 0, K - 1 - step, false, x);
        else
            emit_level(s, 0, step - K, true, x);
        break;
    }
    return TC_OK;
}

/* The phase of one tree level: v in [0, min(2^k, p - 2^k)) sends, i.e. the
 * ranks root + v (broadcast, shift +2^k) or root + 2^k + v (reduce, -2^k). */
static bool add_level(tc_sched *s, uint32_t root, uint32_t k, bool down)
{
    uint32_t p = s->req.p, d = 1u << k;
    tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_SHIFT, down ? (int64_t)d : -(int64_t)d, s->req.bytes,
                                      down ? "binomial broadcast" : "binomial reduce");
    if (!ph)
        return false;
    ph->src_first = down ? root : (uint32_t)(((uint64_t)root + d) % p);
    ph->src_count = d < p - d ? d : p - d;
    return true;
}

static tc_status binomial_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t K = tc_log2_ceil(req->p);
    uint32_t root = req->op == TC_OP_ALLREDUCE ? 0 : req->root;
    s->params[0] = K;
    s->emit = emit_binomial;
    s->nblk = s->nslots = 1;
    s->blk_bytes = req->bytes;
    bool ok = true;
    if (req->op != TC_OP_BROADCAST)
        for (uint32_t j = 0; j < K && ok; j++)
            ok = add_level(s, root, K - 1 - j, false);
    if (req->op != TC_OP_REDUCE)
        for (uint32_t k = 0; k < K && ok; k++)
            ok = add_level(s, root, k, true);
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_binomial = {binomial_valid, binomial_build};
