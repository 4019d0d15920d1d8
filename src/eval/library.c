/*
 * library.c - "library": the collective algorithms that NCCL, the library
 * PyTorch and Megatron-LM call, runs for an operation (docs/MODEL.md, "Each
 * class's algorithm"): train's --dp-algo and --tp-algo and compress's
 * --dp-algo default. In topocc's one-flow-a-hop forms: all-reduce as a
 * ring or a (double binary) tree; reduce-scatter, all-gather, broadcast
 * and reduce as rings (NVIDIA/nccl v2.21.5-1: the RunWorkElement
 * specialisations in src/device/all_reduce.h:227-738,
 * reduce_scatter.h:57-158, all_gather.h:67-164, broadcast.h:51-66,
 * reduce.h:55-70, NVLS and CollNet aside, which need switches that
 * reduce). All-to-all as one group of sends and receives to every peer
 * (nccl-tests v2.13.10 src/alltoall.cu:57-62): on a topology of scale-up
 * (GPU) nodes NCCL's own, nccl-a2a (its peer order, channels, works and
 * PXN: coll/nccl_a2a.c), elsewhere, or where nccl-a2a does not fit, direct
 * (every message at once). And NCCL's ring
 * itself (nccl-ring, Simple: the protocol of NCCL's choice at gradient
 * sizes, and one that co-simulates) for all-reduce, reduce-scatter and
 * all-gather where it is faster than those, in groups with several GPUs on
 * each of several nodes: NCCL runs a ring per channel, channel k entering
 * and leaving each node by NIC k (coll/nccl.c), so the group moves its
 * bytes over all the node's NICs, where one ring in rank order crosses
 * between nodes by one NIC.
 */
#include <stdlib.h>
#include <string.h>
#include "topocc/eval.h"

uint64_t tc_library_among(tc_op op)
{
#define BIT(a) ((uint64_t)1 << (a))
    switch (op) {
    case TC_OP_ALLREDUCE: return BIT(TC_ALGO_RING) | BIT(TC_ALGO_DBTREE);
    case TC_OP_ALLTOALL:
    case TC_OP_SENDRECV: return BIT(TC_ALGO_DIRECT);
    default: return BIT(TC_ALGO_RING);
    }
#undef BIT
}

void tc_library_req(tc_coll_req *req, tc_op op)
{
    req->among = tc_library_among(op);
    req->chunk_bytes = TC_LIBRARY_TREE_CHUNK;
}

_Static_assert(TC_ALGO_COUNT <= 64, "tc_coll_req.among has a bit per algorithm");

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int tc_library_multirail(const tc_topo *t, const tc_groups *g, const uint32_t *map)
{
    uint32_t G = t->node_size, nodes = 0, *node = G > 1 ? malloc(g->size * sizeof *node) : NULL;
    if (G <= 1)
        return 0;
    if (!node)
        return -1;
    for (uint32_t i = 0; i < g->size; i++) {
        uint32_t r = g->members[i];
        node[i] = (map ? map[r] : r) / G;
    }
    qsort(node, g->size, sizeof *node, cmp_u32);
    for (uint32_t i = 0; i < g->size; i++)
        nodes += i == 0 || node[i] != node[i - 1];
    free(node);
    return nodes >= 2 && nodes < g->size; /* not one node, not a GPU a node */
}

/* req timed as NCCL's algorithm a (with protocol proto) over groups g:
 * *out the n results (the caller frees them), or NULL where a does not fit
 * these groups (TC_EINVAL, not an error here). */
static tc_status eval_as(const tc_topo *t, const tc_coll_req *req, tc_algo a, tc_proto proto, const tc_groups *g,
                         const double *sizes, size_t n, const tc_eval_opts *o, tc_result **out, tc_err *err)
{
    *out = NULL;
    tc_result *q = tc_calloc(n, sizeof *q);
    if (!q)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_coll_req nr = *req;
    nr.algo = a;
    nr.among = 0;
    nr.proto = proto;
    tc_err e2;
    tc_status st = tc_evaluate_groups_sweep(t, &nr, g, sizes, n, o, q, &e2);
    if (st == TC_OK) {
        *out = q;
        return TC_OK;
    }
    free(q);
    if (st == TC_EINVAL)
        return TC_OK;
    *err = e2;
    return st;
}

tc_status tc_library_nccl_ring(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                               size_t n, const tc_eval_opts *o, tc_result *r, tc_err *err)
{
    if (req->op != TC_OP_ALLREDUCE && req->op != TC_OP_REDUCESCATTER && req->op != TC_OP_ALLGATHER)
        return TC_OK;
    int multi = tc_library_multirail(t, g, o->rank_map);
    if (multi < 0)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (!multi)
        return TC_OK;
    tc_result *q;
    tc_status st = eval_as(t, req, TC_ALGO_NCCL_RING, TC_PROTO_SIMPLE, g, sizes, n, o, &q, err);
    for (size_t i = 0; q && i < n; i++) /* q NULL: it does not fit these groups */
        if (q[i].time_s < r[i].time_s)
            r[i] = q[i];
    free(q);
    return st;
}

tc_status tc_library_nccl_a2a(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                              size_t n, const tc_eval_opts *o, tc_result *r, bool *done, tc_err *err)
{
    *done = false;
    if (req->op != TC_OP_ALLTOALL || t->node_size <= 1)
        return TC_OK;
    tc_result *q;
    /* its own protocol: LL up to 16 KiB a peer, else Simple; q NULL: not
     * NCCL's to run here, direct */
    tc_status st = eval_as(t, req, TC_ALGO_NCCL_A2A, TC_PROTO_NONE, g, sizes, n, o, &q, err);
    if (q) {
        memcpy(r, q, n * sizeof *r);
        *done = true;
    }
    free(q);
    return st;
}
