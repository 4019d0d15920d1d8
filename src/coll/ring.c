/*
 * ring.c - ring algorithms.
 *
 * all-reduce follows MPICH's MPIR_Allreduce_intra_ring (pmodels/mpich
 * v5.0.1, src/mpi/coll/allreduce/allreduce_intra_ring.c): p - 1 steps in
 * which rank r sends block r - 1 - i to r + 1 and adds the block r - 2 - i
 * it receives, so rank r ends with block r; then MPIR_Allgatherv_intra_ring
 * (src/mpi/coll/allgatherv/allgatherv_intra_ring.c): p - 1 steps in which r
 * sends block r - i to r + 1. reduce-scatter is the first half; all-gather
 * is MPIR_Allgather_intra_ring (src/mpi/coll/allgather/allgather_intra_ring.c),
 * the same block order. Differences from MPICH: block sizes are
 * tc_block_bytes's (MPICH: ceil(count / p) elements, the last block the
 * rest); MPICH's all-gatherv cuts a block above MPIR_CVAR_ALLGATHERV_
 * PIPELINE_MSG_SIZE into pieces sent one after another, topocc sends it
 * whole. chunks = c runs the collective in c rounds of 1/c of the data each
 * (more latency, same bandwidth in these models; not an MPICH parameter).
 * The ring is the idea of Patarasuk & Yuan, "Bandwidth optimal all-reduce
 * algorithms for clusters of workstations", JPDC 69(2), 2009 (abstract).
 *
 * Broadcast and reduce are the pipelined chains of NCCL's ring broadcast
 * and reduce (NVIDIA/nccl v2.30.7-1, src/device/broadcast.h and
 * src/device/reduce.h, runRing): broadcast root -> root+1 -> ... ->
 * root-1, every rank forwarding each chunk as it arrives; NCCL's reduce
 * runs root+1 -> root+2 -> ... -> root-1 -> root, topocc's the mirror
 * root-1 -> root-2 -> ... -> root+1 -> root (the same steps and sizes, the
 * ring walked the other way). The data is cut into c chunks (default 64;
 * NCCL's chunk size comes from its protocol): c + p - 2 steps of n/c.
 */
#include "coll/algos.h"

#define RING_PIPE_DEFAULT_CHUNKS 64

static bool ring_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op == TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "ring has no all-to-all");
        return false;
    }
    return true;
}

/* reduce-scatter step s (0..p-2) of round k: r sends block (r-s-1) to r+1. */
static void emit_rs(const tc_sched *s, uint32_t k, uint32_t st, tc_xfers *x)
{
    uint32_t p = s->req.p, c = s->params[0];
    for (uint32_t r = 0; r < p; r++) {
        uint32_t b = (r + 2 * p - st - 1) % p;
        tc_xfers_add(x, r, (r + 1) % p, s->blk_bytes, true);
        tc_xfers_seg(x, b * c + k, b * c + k, 1);
    }
}

/* all-gather step s (0..p-2) of round k: r sends block (r-s+off) to r+1. */
static void emit_ag(const tc_sched *s, uint32_t k, uint32_t st, uint32_t off, tc_xfers *x)
{
    uint32_t p = s->req.p, c = s->params[0];
    for (uint32_t r = 0; r < p; r++) {
        uint32_t b = (r + 2 * p + off - st) % p;
        tc_xfers_add(x, r, (r + 1) % p, s->blk_bytes, false);
        tc_xfers_seg(x, b * c + k, b * c + k, 1);
    }
}

static tc_status emit_ring(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, per = p - 1;
    switch (s->req.op) {
    case TC_OP_ALLREDUCE: {
        uint32_t k = step / (2 * per), st = step % (2 * per);
        if (st < per)
            emit_rs(s, k, st, x);
        else
            emit_ag(s, k, st - per, 0, x);
        return TC_OK;
    }
    case TC_OP_REDUCESCATTER:
        emit_rs(s, step / per, step % per, x);
        return TC_OK;
    case TC_OP_ALLGATHER:
        /* rank r owns block r at the start: step s sends block r - s */
        emit_ag(s, step / per, step % per, 0, x);
        return TC_OK;
    default: {
        /* pipelined chain; position i is rank root + i (broadcast) or
         * root + p - 1 - i (reduce, flowing towards the root). */
        uint32_t c = s->params[0], root = s->req.root;
        bool red = s->req.op == TC_OP_REDUCE;
        /* Only positions lo..hi are active: O(active) per step, not O(p). */
        uint32_t lo = step + 1 >= c ? step + 1 - c : 0;
        uint32_t hi = step < p - 2 ? step : p - 2;
        for (uint32_t i = lo; i <= hi; i++) {
            uint32_t ch = step - i;
            uint32_t from = red ? (root + p - 1 - i) % p : (root + i) % p;
            uint32_t to = red ? (root + 2 * p - 2 - i) % p : (root + i + 1) % p;
            tc_xfers_add(x, from, to, s->blk_bytes, red);
            tc_xfers_seg(x, ch, ch, 1);
        }
        return TC_OK;
    }
    }
}

static tc_status ring_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo, (void)err;
    uint32_t p = req->p;
    s->emit = emit_ring;
    if (req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE) {
        uint32_t c = req->chunks ? req->chunks : RING_PIPE_DEFAULT_CHUNKS;
        s->params[0] = c;
        s->nblk = s->nslots = c;
        s->blk_bytes = tc_block_bytes(req->bytes, req->elt, c);
        if (p == 1)
            return TC_OK;
        /* Fill, steady state, drain: the number of active links is
         * min(t+1, p-1, c, c+p-2-t), so steady steps (all p-1 or all c
         * active in the same places) form one phase; others are single. */
        uint32_t total = c + p - 2;
        int64_t dir = req->op == TC_OP_REDUCE ? -1 : 1;
        for (uint32_t t = 0; t < total;) {
            uint32_t lo = t + 1 >= c ? t + 1 - c : 0; /* first active position */
            uint32_t hi = t < p - 2 ? t : p - 2;      /* last active position */
            /* Only the steady state (every link busy) repeats itself. */
            uint32_t run = lo == 0 && hi == p - 2 ? c - t : 1;
            tc_phase *ph = tc_sched_add_phase(s, run, TC_PAT_SHIFT, dir, s->blk_bytes,
                                              req->op == TC_OP_REDUCE ? "chain reduce" : "chain broadcast");
            if (!ph)
                return tc_fail(err, TC_EINTERNAL, "out of memory");
            /* The active positions lo..hi send: ranks root + lo .. root + hi
             * (broadcast), root + p - 1 - hi .. root + p - 1 - lo (reduce). */
            uint64_t first = req->op == TC_OP_REDUCE ? (uint64_t)req->root + p - 1 - hi : (uint64_t)req->root + lo;
            ph->src_first = (uint32_t)(first % p);
            ph->src_count = hi - lo + 1;
            t += run;
        }
        return TC_OK;
    }
    uint32_t c = req->chunks ? req->chunks : 1;
    s->params[0] = c;
    s->nblk = s->nslots = p * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    if (p == 1)
        return TC_OK;
    for (uint32_t k = 0; k < c; k++) {
        bool ok = true;
        if (req->op != TC_OP_ALLGATHER)
            ok = ok && tc_sched_add_phase(s, p - 1, TC_PAT_SHIFT, 1, s->blk_bytes, "reduce-scatter");
        if (req->op != TC_OP_REDUCESCATTER)
            ok = ok && tc_sched_add_phase(s, p - 1, TC_PAT_SHIFT, 1, s->blk_bytes, "all-gather");
        if (!ok)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_ring = {ring_valid, ring_build};
