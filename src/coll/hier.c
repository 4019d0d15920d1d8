/*
 * hier.c - two-level (hierarchical) collectives over groups of G
 * consecutive ranks: rank r is local rank r % G of group r / G, N = p / G
 * groups. hier's group is a scale-up node (G = node=); hier-dc's is a pod
 * of a multidc topology (G = the pod's endpoints), so that its rings inside
 * groups stay inside a datacenter and only the inter-group rings cross the
 * long-haul links. The two share everything here but the group size, how
 * their intra-group phases are declared (LOCAL inside a node, GENERIC inside
 * a pod, which the fabric carries) and their validity.
 *
 * All-reduce: ring reduce-scatter among the G local ranks (slice l to local
 * rank l), then G concurrent inter-group ring all-reduces, local rank l of
 * every group on slice l ((n, l) -> (n+1 mod N, l), i.e. r -> r + G mod p),
 * then ring all-gather inside the group. This is the scheme of Horovod's
 * NCCLHierarchicalAllreduce::Execute (horovod/horovod,
 * horovod/common/ops/nccl_operations.cc at commit 76d382d7): NCCL
 * ReduceScatter inside the node, an MPI Allreduce across nodes by every
 * local rank in parallel on its 1/G, NCCL Allgather inside the node. topocc
 * runs every stage as a ring (Horovod leaves each to NCCL and MPI) and cuts
 * the data in equal slices (Horovod reduces a remainder not divisible by G
 * separately, through local rank G - 1). The links between groups carry
 * 2(N-1)/N n/G per rank. Reduce-scatter is intra reduce-scatter then
 * inter-group reduce-scatter; all-gather is inter-group all-gather then
 * intra all-gather.
 *
 * Blocks: block b is finally owned by rank b, so slice l is the blocks
 * n G + l (every group's local rank l), and the inter-group rings split it
 * by group. chunks = c runs the collective in c rounds of 1/c of the data;
 * block b of round k is slot b c + k.
 */
#include "coll/algos.h"

typedef enum { HS_INTRA_RS, HS_INTER_RS, HS_INTER_AG, HS_INTRA_AG } hier_stage;

static bool ring_op(tc_op op, const char *name, tc_err *err)
{
    if (op != TC_OP_ALLREDUCE && op != TC_OP_REDUCESCATTER && op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "%s implements allreduce, reducescatter and allgather", name);
        return false;
    }
    return true;
}

static bool hier_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (!ring_op(op, "hier", err))
        return false;
    if (!topo || topo->node_size <= 1) {
        tc_fail(err, TC_EINVAL, "needs several ranks on each scale-up node (node=; a group with one rank a node has none)");
        return false;
    }
    if (p % topo->node_size || p <= topo->node_size) {
        tc_fail(err, TC_EINVAL, "needs p a multiple of the node size %u spanning more than one node",
                topo->node_size);
        return false;
    }
    return true;
}

static bool hier_dc_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (!ring_op(op, "hier-dc", err))
        return false;
    if (!topo || topo->kind != TC_TOPO_MULTIDC) {
        tc_fail(err, TC_EINVAL, "needs a multidc topology (pods joined by long-haul links)");
        return false;
    }
    uint32_t G = tc_topo_pod_size(topo);
    if (p % G || p <= G) {
        tc_fail(err, TC_EINVAL, "needs p a multiple of the pod's %u endpoints spanning more than one pod", G);
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
    uint32_t p = s->req.p, G = s->params[2], N = p / G, c = s->params[0], T = s->params[1];
    uint32_t k = step / T, t = step % T;
    hier_stage st[4];
    uint32_t len[4], ns = stages_of(s->req.op, G, N, st, len), i = 0;
    while (i + 1 < ns && t >= len[i])
        t -= len[i++];
    bool red = st[i] == HS_INTRA_RS || st[i] == HS_INTER_RS;
    if (st[i] == HS_INTRA_RS || st[i] == HS_INTRA_AG) {
        /* Ring inside the group (ring.c's schedule over G local ranks). */
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
            uint32_t m = (n + 2 * N - t - (red ? 1 : 0)) % N; /* group whose block is sent */
            uint32_t slot = (m * G + l) * c + k;
            tc_xfers_add(x, r, (r + G) % p, s->blk_bytes, red);
            tc_xfers_seg(x, slot, slot, 1);
        }
    }
    return TC_OK;
}

/* G ranks per group; intra: the pattern of the phases inside a group. */
static tc_status build_groups(const tc_coll_req *req, uint32_t G, tc_pattern intra_pat, tc_sched *s, tc_err *err)
{
    uint32_t p = req->p, N = p / G, c = req->chunks ? req->chunks : 1;
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
    s->params[2] = G;
    static const char *labels[4] = {"intra reduce-scatter", "inter reduce-scatter", "inter all-gather",
                                    "intra all-gather"};
    for (uint32_t k = 0; k < c; k++)
        for (uint32_t i = 0; i < ns; i++) {
            bool intra = st[i] == HS_INTRA_RS || st[i] == HS_INTRA_AG;
            if (len[i] == 0)
                continue; /* pods of one endpoint: nothing inside them */
            if (!tc_sched_add_phase(s, len[i], intra ? intra_pat : TC_PAT_SHIFT,
                                    intra ? (intra_pat == TC_PAT_LOCAL ? 1 : 0) : (int64_t)G,
                                    (intra ? N : 1) * s->blk_bytes, labels[st[i]]))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
    return TC_OK;
}

static tc_status hier_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    return build_groups(req, s->node_size, TC_PAT_LOCAL, s, err);
}

/* A pod's ring is carried by its fabric (GENERIC: costed on the graph). */
static tc_status hier_dc_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return build_groups(req, tc_topo_pod_size(topo), TC_PAT_GENERIC, s, err);
}

const tc_algo_impl tc_impl_hier = {hier_valid, hier_build};
const tc_algo_impl tc_impl_hier_dc = {hier_dc_valid, hier_dc_build};
