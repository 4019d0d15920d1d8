/*
 * direct.c - direct algorithms: every transfer of the collective happens at
 * once, each rank talking to every other rank in the same step. all-to-all
 * is MPICH's MPIR_Alltoall_intra_scattered (pmodels/mpich v5.0.1,
 * src/mpi/coll/alltoall/alltoall_intra_scattered.c) with
 * MPIR_CVAR_ALLTOALL_THROTTLE = 0 (every isend and irecv posted at once;
 * MPICH's default is 32 at a time, src/mpi/coll/cvars.txt, which topocc
 * does not model; MPICH also sends the rank's own block through itself, a
 * local copy here). The other operations are topocc's by the same rule. One
 * step of latency, p-1 messages per rank, so only a fully connected,
 * non-blocking fabric sustains it.
 *
 * all-to-all: rank r sends its block j to rank j, which stores it in output
 * slot nblk + r; its own block is a local copy. A rank posts its sends in
 * MPICH's order, to r, r-1, r-2, ... (mod p) (`dst = (rank - i - ii +
 * comm_size) % comm_size` in the file above): the order its overhead clock
 * takes them in, in flow mode. all-gather: r sends its block
 * to every other rank. reduce-scatter: r sends block j to rank j, which adds
 * it. all-reduce: direct reduce-scatter then direct all-gather (2 steps).
 * broadcast: the root sends the buffer to every rank. reduce: every rank
 * sends its buffer to the root. sendrecv (point-to-point, nccl-tests'
 * sendrecv_perf: NVIDIA/nccl-tests v2.13.10 src/sendrecv.cu:46-59): rank r
 * sends its buffer, one message, to r + 1 (mod p), which stores it in
 * output slot 1; on one rank the message is a local copy. chunks are
 * ignored (a single step has nothing to pipeline).
 *
 * scattered (all-to-all only) is the same MPICH function with its throttle
 * (MPIR_CVAR_ALLTOALL_THROTTLE, default 32 in src/mpi/coll/cvars.txt of
 * v5.0.1; "scattered:throttle=K", 0 posts everything at once as direct
 * does): for ii = 0, K, 2K, ... a rank posts ss = min(K, p - ii) irecvs
 * from r + ii + i and ss isends to r - ii - i (i = 0 .. ss - 1, mod p, its
 * own block the local copy at ii = i = 0), then MPIC_Waitall on all 2 ss of
 * them. Block ii is one step of the IR: a rank reaches the next step when
 * its sends have left and its receives have arrived, which is what the
 * waitall waits for. ceil(p / K) steps; the senders into rank r in block ii
 * are exactly r + ii + i, who post their sends to r in the same block, so
 * every transfer of a step is matched inside the step.
 */
#include "coll/algos.h"

static bool direct_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)op, (void)p, (void)topo, (void)err;
    return true;
}

/* Every rank r (of lo .. hi - 1) sends block j (slot j) to rank j, reduced there. */
static void emit_rs(const tc_sched *s, uint32_t lo, uint32_t hi, tc_xfers *x)
{
    uint32_t p = s->req.p;
    for (uint32_t r = lo; r < hi; r++)
        for (uint32_t j = 0; j < p; j++)
            if (j != r) {
                tc_xfers_add(x, r, j, s->blk_bytes, true);
                tc_xfers_seg(x, j, j, 1);
            }
}

/* Every rank r (of lo .. hi - 1) sends its block r to every other rank. */
static void emit_ag(const tc_sched *s, uint32_t lo, uint32_t hi, tc_xfers *x)
{
    uint32_t p = s->req.p;
    for (uint32_t r = lo; r < hi; r++)
        for (uint32_t j = 0; j < p; j++)
            if (j != r) {
                tc_xfers_add(x, r, j, s->blk_bytes, false);
                tc_xfers_seg(x, r, r, 1);
            }
}

/* The all-pairs steps, senders lo .. hi - 1 (emit_part); the whole
 * step from emit_direct. */
static tc_status emit_pairs(const tc_sched *s, uint32_t step, uint32_t lo, uint32_t hi, tc_xfers *x)
{
    uint32_t p = s->req.p;
    switch (s->req.op) {
    case TC_OP_ALLTOALL:
        /* MPICH's order of the isends: dst = (rank - i) mod p, i = 0..p-1
         * (its own block first). */
        for (uint32_t r = lo; r < hi; r++)
            for (uint32_t i = 0; i < p; i++) {
                uint32_t j = (r + p - i) % p;
                tc_xfers_add(x, r, j, s->blk_bytes, false);
                tc_xfers_seg(x, j, s->nblk + r, 1);
            }
        break;
    case TC_OP_ALLGATHER: emit_ag(s, lo, hi, x); break;
    case TC_OP_REDUCESCATTER: emit_rs(s, lo, hi, x); break;
    case TC_OP_ALLREDUCE:
        if (step == 0)
            emit_rs(s, lo, hi, x);
        else
            emit_ag(s, lo, hi, x);
        break;
    default: return TC_EINTERNAL;
    }
    return TC_OK;
}

static tc_status emit_direct(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, root = s->req.root;
    switch (s->req.op) {
    case TC_OP_ALLTOALL:
    case TC_OP_ALLGATHER:
    case TC_OP_REDUCESCATTER:
    case TC_OP_ALLREDUCE: return emit_pairs(s, step, 0, p, x);
    case TC_OP_BROADCAST:
        for (uint32_t j = 0; j < p; j++)
            if (j != root) {
                tc_xfers_add(x, root, j, s->blk_bytes, false);
                tc_xfers_seg(x, 0, 0, 1);
            }
        break;
    case TC_OP_REDUCE:
        for (uint32_t j = 0; j < p; j++)
            if (j != root) {
                tc_xfers_add(x, j, root, s->blk_bytes, true);
                tc_xfers_seg(x, 0, 0, 1);
            }
        break;
    case TC_OP_SENDRECV:
        for (uint32_t r = 0; r < p; r++) {
            tc_xfers_add(x, r, r + 1 == p ? 0 : r + 1, s->blk_bytes, false);
            tc_xfers_seg(x, 0, 1, 1);
        }
        break;
    default: return TC_EINTERNAL;
    }
    return TC_OK;
}

/* fanout / fanin: transfers a rank sends / receives (p - 1 for every rank
 * in the all-pairs steps; broadcast 1 in, p - 1 out of the root; reduce
 * the reverse, p - 1 into the root). */
static bool add_phase(tc_sched *s, double bytes, uint32_t fanout, uint32_t fanin, const char *label)
{
    /* On two ranks every transfer goes to the one other rank: a shift. */
    uint32_t p = s->req.p;
    bool all = fanout == p - 1 && fanin == p - 1;
    tc_phase *ph = tc_sched_add_phase(s, 1, p == 2 ? TC_PAT_SHIFT : all ? TC_PAT_ALL : TC_PAT_GENERIC, p == 2 ? 1 : 0,
                                      bytes, label);
    if (!ph)
        return false;
    tc_phase_set_fan(ph, fanout, fanin, bytes);
    return true;
}

static tc_status direct_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    bool ok = true;
    s->emit = emit_direct;
    if (req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE) {
        s->nblk = s->nslots = 1;
        s->blk_bytes = req->bytes;
        if (p == 1)
            return TC_OK;
        if (req->op == TC_OP_BROADCAST)
            ok = add_phase(s, s->blk_bytes, p - 1, 1, "direct broadcast");
        else
            ok = add_phase(s, s->blk_bytes, 1, p - 1, "direct reduce");
        if (ok && p == 2) {
            /* Only the root (broadcast) or the other rank (reduce) sends. */
            tc_phase *ph = &s->phases[s->nphases - 1];
            ph->src_first = req->op == TC_OP_BROADCAST ? req->root : 1 - req->root;
            ph->src_count = 1;
        }
        return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (req->op == TC_OP_SENDRECV) {
        /* one message a rank: a shift by one (a local copy on one rank) */
        s->nblk = 1;
        s->nslots = 2;
        s->blk_bytes = req->bytes;
        if (p == 1)
            return tc_sched_add_copy_phase(s, err);
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_SHIFT, 1, s->blk_bytes, "direct sendrecv");
        return ph ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    s->emit_part = emit_pairs;
    s->nblk = p;
    s->nslots = req->op == TC_OP_ALLTOALL ? 2 * p : p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    if (p == 1) {
        /* All-to-all on one rank still moves its block into the output
         * region: one step holding only a (free) local copy. */
        if (req->op == TC_OP_ALLTOALL) {
            tc_status cst = tc_sched_add_copy_phase(s, err);
            if (cst)
                return cst;
        }
        return TC_OK;
    }
    switch (req->op) {
    case TC_OP_ALLTOALL: ok = add_phase(s, s->blk_bytes, p - 1, p - 1, "direct all-to-all"); break;
    case TC_OP_ALLGATHER: ok = add_phase(s, s->blk_bytes, p - 1, p - 1, "direct all-gather"); break;
    case TC_OP_REDUCESCATTER: ok = add_phase(s, s->blk_bytes, p - 1, p - 1, "direct reduce-scatter"); break;
    default:
        ok = add_phase(s, s->blk_bytes, p - 1, p - 1, "direct reduce-scatter") &&
             add_phase(s, s->blk_bytes, p - 1, p - 1, "direct all-gather");
        break;
    }
    return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

const tc_algo_impl tc_impl_direct = {direct_valid, direct_build};

/* ---- scattered: MPICH's throttled all-to-all ---- */

static bool scattered_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "scattered implements only alltoall");
        return false;
    }
    return true;
}

/* Block `step` (ii = step K) of senders lo .. hi - 1: rank r sends its block
 * for r - ii - i to it, i = 0 .. ss - 1, in MPICH's isend order. */
static tc_status emit_scat_part(const tc_sched *s, uint32_t step, uint32_t lo, uint32_t hi, tc_xfers *x)
{
    uint32_t p = s->req.p, k = (uint32_t)s->params[0];
    uint64_t ii = (uint64_t)step * k;
    if (ii >= p)
        return TC_EINTERNAL;
    uint32_t ss = (uint32_t)(p - ii < k ? p - ii : k);
    for (uint32_t r = lo; r < hi; r++)
        for (uint32_t i = 0; i < ss; i++) {
            uint32_t j = (uint32_t)(((uint64_t)r + p - (ii + i)) % p);
            tc_xfers_add(x, r, j, s->blk_bytes, false);
            tc_xfers_seg(x, j, s->nblk + r, 1);
        }
    return TC_OK;
}

static tc_status emit_scat(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    return emit_scat_part(s, step, 0, s->req.p, x);
}

static tc_status scattered_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    uint32_t k = req->throttle == TC_THROTTLE_ALL ? p : req->throttle ? req->throttle : TC_THROTTLE_DEFAULT;
    if (k > p)
        k = p;
    s->emit = emit_scat;
    s->emit_part = emit_scat_part;
    s->params[0] = k;
    s->nblk = p;
    s->nslots = 2 * p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    if (p == 1)
        return tc_sched_add_copy_phase(s, err);
    for (uint64_t ii = 0; ii < p; ii += k) {
        uint32_t ss = (uint32_t)(p - ii < k ? p - ii : k);
        uint32_t peers = ii == 0 ? ss - 1 : ss; /* the local copy is no transfer */
        tc_phase *ph;
        if (peers == 0)
            ph = tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, 0, "local copy");
        else if (peers == p - 1)
            ph = tc_sched_add_phase(s, 1, p == 2 ? TC_PAT_SHIFT : TC_PAT_ALL, p == 2 ? 1 : 0, s->blk_bytes,
                                    "scattered block");
        else if (ss == 1)
            ph = tc_sched_add_phase(s, 1, TC_PAT_SHIFT, -(int64_t)ii, s->blk_bytes, "scattered block");
        else
            ph = tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, s->blk_bytes, "scattered block");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        ph->fanout = ph->fanin = peers;
        ph->rank_bytes = ph->rank_bytes_in = peers ? s->blk_bytes * peers : 0;
        if (!peers)
            ph->bytes = 0;
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_scattered = {scattered_valid, scattered_build};
