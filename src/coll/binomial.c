/*
 * binomial.c - binomial trees.
 *
 * The default tree (tree=lowbit) is MPICH's: relative to the root
 * (v = r - root mod p), a rank's parent clears the lowest set bit of v.
 * broadcast follows MPIR_Bcast_intra_binomial (pmodels/mpich v5.0.1,
 * src/mpi/coll/bcast/bcast_intra_binomial.c): rank v receives from
 * v - lowbit(v), then sends to v + mask for mask = lowbit(v)/2, ..., 2, 1
 * (the root from 2^(K-1) down), K = ceil(lg p). In lock-step, step k
 * (k = 0 .. K-1) has distance d = 2^(K-1-k): every v that is a multiple of
 * 2d with v + d < p sends the whole buffer to v + d. reduce follows
 * MPIR_Reduce_intra_binomial (same release,
 * src/mpi/coll/reduce/reduce_intra_binomial.c), for a commutative operation
 * (topocc adds integers; MPICH reduces to rank 0 and sends the result on to
 * the root only when the operation is not commutative): step k (mask
 * d = 2^k, distance 1 first, 2^(K-1) into the root last) every
 * v = d mod 2d sends its partial result to v - d, which adds it.
 * all-reduce is a binomial reduce to rank 0 then a binomial broadcast from
 * it (topocc's composition; not an MPICH all-reduce function).
 *
 * tree=highbit: the parent clears the highest set bit of v. broadcast step
 * k: every v < 2^k sends to v + 2^k (if below p), distance 1 first; reduce
 * runs it backwards (2^(K-1) first, 1 into the root last). Its steps are
 * shifts r -> r + 2^k sent by the contiguous ranks
 * root .. root + min(2^k, p - 2^k) - 1 (tc_phase.src_first/src_count);
 * MPICH's are shifts sent by a strided set (every 2d-th rank), so they are
 * GENERIC phases.
 *
 * Either tree: ceil(lg p) steps of n bytes each (twice that for
 * all-reduce), every rank sending and receiving at most one message per
 * step. chunks are ignored: the whole buffer moves in every step.
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

/* One level of the highbit tree: v in [0, 2^k), v + 2^k < p; down =
 * broadcast direction. */
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

/* One level of the lowbit (MPICH) tree at distance d = 2^k: the edges
 * v -> v + d for v a multiple of 2d with v + d < p; down = broadcast
 * direction, else reduce (v + d adds into v). */
static void emit_level_low(const tc_sched *s, uint32_t root, uint32_t k, bool down, tc_xfers *x)
{
    uint32_t p = s->req.p, d = 1u << k;
    for (uint64_t v = 0; v + d < p; v += 2 * (uint64_t)d) {
        uint32_t a = (uint32_t)((root + v) % p), b = (uint32_t)((root + v + d) % p);
        tc_xfers_add(x, down ? a : b, down ? b : a, s->blk_bytes, !down);
        tc_xfers_seg(x, 0, 0, 1);
    }
}

static tc_status emit_binomial(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t K = s->params[0];
    bool high = s->params[1] != 0;
    /* The level (distance 2^k) of each step: highbit broadcast 1 first,
     * lowbit broadcast 2^(K-1) first; reduce the other way round. */
    bool red = s->req.op == TC_OP_REDUCE || (s->req.op == TC_OP_ALLREDUCE && step < K);
    uint32_t i = s->req.op == TC_OP_ALLREDUCE && step >= K ? step - K : step;
    uint32_t k = red == high ? K - 1 - i : i;
    uint32_t root = s->req.op == TC_OP_ALLREDUCE ? 0 : s->req.root;
    if (high)
        emit_level(s, root, k, !red, x);
    else
        emit_level_low(s, root, k, !red, x);
    return TC_OK;
}

/* The phase of one highbit tree level: v in [0, min(2^k, p - 2^k)) sends,
 * i.e. the ranks root + v (broadcast, shift +2^k) or root + 2^k + v
 * (reduce, -2^k). */
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

/* A lowbit tree level: shifts by +-2^k from every 2^(k+1)-th rank, which
 * no sender range describes. */
static bool add_level_low(tc_sched *s, bool down)
{
    return tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, s->req.bytes,
                              down ? "binomial broadcast" : "binomial reduce") != NULL;
}

static tc_status binomial_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t K = tc_log2_ceil(req->p);
    uint32_t root = req->op == TC_OP_ALLREDUCE ? 0 : req->root;
    bool high = req->variant == TC_VARIANT_HIGHBIT;
    s->params[0] = K;
    s->params[1] = high;
    s->emit = emit_binomial;
    s->nblk = s->nslots = 1;
    s->blk_bytes = req->bytes;
    bool ok = true;
    if (req->op != TC_OP_BROADCAST)
        for (uint32_t j = 0; j < K && ok; j++)
            ok = high ? add_level(s, root, K - 1 - j, false) : add_level_low(s, false);
    if (req->op != TC_OP_REDUCE)
        for (uint32_t k = 0; k < K && ok; k++)
            ok = high ? add_level(s, root, k, true) : add_level_low(s, true);
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_binomial = {binomial_valid, binomial_build};
