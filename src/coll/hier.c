/*
 * hier.c - two-level (hierarchical) collectives for a topology with a
 * scale-up domain of G ranks per node: rank r is local rank r % G of node
 * r / G, N = p / G nodes.
 *
 * All-reduce: ring reduce-scatter among the G local ranks (slice l to local
 * rank l), then G concurrent inter-node ring all-reduces, local rank l of
 * every node on slice l ((n, l) -> (n+1 mod N, l), i.e. r -> r + G mod p),
 * then ring all-gather inside the node. This is the scheme of Horovod's
 * NCCLHierarchicalAllreduce::Execute (horovod/horovod,
 * horovod/common/ops/nccl_operations.cc at commit 76d382d7): NCCL
 * ReduceScatter inside the node, an MPI Allreduce across nodes by every
 * local rank in parallel on its 1/G, NCCL Allgather inside the node. topocc
 * runs every stage as a ring (Horovod leaves each to NCCL and MPI) and cuts
 * the data in equal slices (Horovod reduces a remainder not divisible by G
 * separately, through local rank G - 1). The fabric carries 2(N-1)/N n/G
 * per rank. Reduce-scatter is intra
 * reduce-scatter then inter-node reduce-scatter; all-gather is inter-node
 * all-gather then intra all-gather.
 *
 * Blocks: block b is finally owned by rank b, so slice l is the blocks
 * n G + l (every node's local rank l), and the inter-node rings split it by
 * node. chunks = c runs the collective in c rounds of 1/c of the data; block
 * b of round k is slot b c + k.
 */
#include "coll/algos.h"

typedef enum { HS_INTRA_RS, HS_INTER_RS, HS_INTER_AG, HS_INTRA_AG } hier_stage;

static bool hier_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (op != TC_OP_ALLREDUCE && op != TC_OP_REDUCESCATTER && op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "hier implements allreduce, reducescatter and allgather");
        return false;
    }
    if (!topo || topo->node_size <= 1) {
        tc_fail(err, TC_EINVAL, "needs a topology with scale-up nodes (node=)");
        return false;
    }
    if (p % topo->node_size || p <= topo->node_size) {
        tc_fail(err, TC_EINVAL, "needs p a multiple of the node size %u spanning more than one node",
                topo->node_size);
        return false;
    }
    return true;
}

/* The stages of op in order, with their step counts; returns how many. */
static uint32_t stages_of(tc_op op, uint32_t G, uint32_t N, hier_stage *st, uint32_t *len)
{
    uint32_t n = 0;
    if (op != TC_OP_ALLGATHER) {
        st[n] = HS_INTRA_RS, len[n++] = G - 1;
        st[n] = HS_INTER_RS, len[n++] = N - 1;
    }
    if (op != TC_OP_REDUCESCATTER) {
        st[n] = HS_INTER_AG, len[n++] = N - 1;
        st[n] = HS_INTRA_AG, len[n++] = G - 1;
    }
    return n;
}

static tc_status emit_hier(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, G = s->node_size, N = p / G, c = s->params[0], T = s->params[1];
    uint32_t k = step / T, t = step % T;
    hier_stage st[4];
    uint32_t len[4], ns = stages_of(s->req.op, G, N, st, len), i = 0;
    while (i + 1 < ns && t >= len[i])
        t -= len[i++];
    bool red = st[i] == HS_INTRA_RS || st[i] == HS_INTER_RS;
    if (st[i] == HS_INTRA_RS || st[i] == HS_INTRA_AG) {
        /* Ring inside the node (ring.c's schedule over G local ranks). */
        for (uint32_t r = 0; r < p; r++) {
            uint32_t l = r % G, base = r - l;
            uint32_t j = (l + 2 * G - t - (red ? 1 : 0)) % G; /* slice sent */
            tc_xfers_add(x, r, base + (l + 1) % G, N * s->blk_bytes, red);
            for (uint32_t n = 0; x->with_data && n < N; n++) {
                uint32_t slot = (n * G + j) * c + k;
                tc_xfers_seg(x, slot, slot, 1);
            }
        }
    } else {
        for (uint32_t r = 0; r < p; r++) {
            uint32_t n = r / G, l = r % G;
            uint32_t m = (n + 2 * N - t - (red ? 1 : 0)) % N; /* node whose block is sent */
            uint32_t slot = (m * G + l) * c + k;
            tc_xfers_add(x, r, (r + G) % p, s->blk_bytes, red);
            tc_xfers_seg(x, slot, slot, 1);
        }
    }
    return TC_OK;
}

static tc_status hier_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, G = s->node_size, N = p / G, c = req->chunks ? req->chunks : 1;
    if ((uint64_t)p * c > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "%u ranks x %u chunks is too many blocks", p, c);
    hier_stage st[4];
    uint32_t len[4], ns = stages_of(req->op, G, N, st, len), T = 0;
    for (uint32_t i = 0; i < ns; i++)
        T += len[i];
    s->emit = emit_hier;
    s->nblk = s->nslots = p * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->params[0] = c;
    s->params[1] = T;
    static const char *labels[4] = {"intra reduce-scatter", "inter reduce-scatter", "inter all-gather",
                                    "intra all-gather"};
    for (uint32_t k = 0; k < c; k++)
        for (uint32_t i = 0; i < ns; i++) {
            bool intra = st[i] == HS_INTRA_RS || st[i] == HS_INTRA_AG;
            if (!tc_sched_add_phase(s, len[i], intra ? TC_PAT_LOCAL : TC_PAT_SHIFT, intra ? 1 : (int64_t)G,
                                    (intra ? N : 1) * s->blk_bytes, labels[st[i]]))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
    return TC_OK;
}

const tc_algo_impl tc_impl_hier = {hier_valid, hier_build};
