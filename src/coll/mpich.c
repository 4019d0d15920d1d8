/*
 * mpich.c - `mpich`: the algorithm MPICH picks by itself.
 *
 * MPICH v5.0.1 chooses its intra-communicator algorithms at the MPIR layer
 * from a decision tree compiled into the library (pmodels/mpich v5.0.1,
 * maint/tuning/coll/mpir/generic.json, turned into MPII_coll_generic_json
 * by maint/tuning/coll/json_gen.sh and loaded in
 * src/mpi/coll/src/coll_impl.c:195) and evaluated by
 * src/mpi/coll/src/csel.c. topocc follows that tree for an intra-
 * communicator reduction with MPI_SUM (a built-in, commutative operation),
 * a send buffer that is not in place and equal counts, which is what a
 * benchmark of the six operations runs. The sizes the tree tests
 * (csel.c's get_avg_msgsize, get_total_msgsize, get_count) in topocc's
 * size convention S (nccl-tests'):
 *
 * - all-reduce: avg_msg_size = count x type size = S; <= 8 B recursive
 *   doubling (rd); count < pof2(p) (the largest power of two <= p,
 *   MPL_pof2) rd; else reduce-scatter + all-gather (rhd, MPICH's order).
 * - reduce-scatter: total_msg_size = sum of recvcounts x type size = S;
 *   < 512 KiB recursive halving (rhd, MPICH's order and fold), else
 *   pairwise.
 * - all-gather: total_msg_size = recvcount x type size x p = S; p a power
 *   of two: < 512 KiB rd, else ring; otherwise < 80 KiB Bruck, else ring.
 * - broadcast: avg_msg_size = S; p < 8 binomial; p a power of two:
 *   <= 12 KiB binomial, <= 512 KiB scatter-rd, else scatter-ring;
 *   otherwise <= 12 KiB binomial, else scatter-ring.
 * - reduce: avg_msg_size = S; <= 2 KiB binomial; count < pof2(p) binomial;
 *   else rsg (reduce-scatter + gather).
 * - all-to-all: avg_msg_size = sendcount x type size = S/p (S is what a
 *   rank sends in all); "comm_size<8": <= 32 KiB scattered, else pairwise;
 *   otherwise <= 256 B Bruck, <= 32 KiB scattered, else pairwise. MPICH
 *   decides "comm_size<8" with `local_size <= 8` when it searches the tree
 *   for a call (csel.c, MPIR_Csel_search's COMM_SIZE_LT case) and with `<`
 *   only when it prunes the tree for a communicator (prune_tree), which
 *   stops at the first test it cannot decide there. The all-to-all tree
 *   tests is_sendbuf_inplace first, so its comm_size test is decided at
 *   search: 8 ranks take the small branch. The broadcast tree tests the
 *   size first, so pruning decides it: 8 ranks do not.
 *
 * Only the MPIR layer: MPICH's ch4 device first picks a composition
 * (maint/tuning/coll/ch4/generic.json) that on nodes of several ranks
 * combines shared-memory steps inside a node with the MPIR algorithm
 * between nodes; with one rank per node it reaches the MPIR algorithm on
 * every rank. So mpich is refused where two of its ranks share a node
 * (tc_mpich_map_check, with the ranks' placement). Counts are elements of
 * req->elt bytes (1 when the size is fluid).
 */
#include <stdio.h>
#include <stdlib.h>
#include "coll/algos.h"

/* MPL_pof2: the largest power of two <= p */
static uint32_t pof2(uint32_t p)
{
    return 1u << tc_log2_floor(p);
}

tc_status tc_mpich_choose(const tc_coll_req *req, tc_coll_req *out, tc_err *err)
{
    tc_coll_req r = *req;
    uint32_t p = req->p;
    double S = req->bytes, elt = req->elt ? req->elt : 1, count = S / elt;
    bool pow2 = tc_is_pow2(p);
    r.variant = TC_VARIANT_DEFAULT;
    r.chunks = 0;
    switch (req->op) {
    case TC_OP_ALLREDUCE: r.algo = S <= 8 || count < pof2(p) ? TC_ALGO_RD : TC_ALGO_RHD; break;
    case TC_OP_REDUCESCATTER: r.algo = S < 524288 ? TC_ALGO_RHD : TC_ALGO_PAIRWISE; break;
    case TC_OP_ALLGATHER:
        r.algo = pow2 ? (S < 524288 ? TC_ALGO_RD : TC_ALGO_RING) : (S < 81920 ? TC_ALGO_BRUCK : TC_ALGO_RING);
        break;
    case TC_OP_BROADCAST:
        r.algo = p < 8 || S <= 12288 ? TC_ALGO_BINOMIAL
                 : pow2 && S <= 524288 ? TC_ALGO_SCATTER_RD
                                       : TC_ALGO_SCATTER_RING;
        break;
    case TC_OP_REDUCE: r.algo = S <= 2048 || count < pof2(p) ? TC_ALGO_BINOMIAL : TC_ALGO_RSG; break;
    case TC_OP_ALLTOALL: {
        double avg = p ? S / p : S;
        r.algo = p > 8 && avg <= 256 ? TC_ALGO_BRUCK : avg <= 32768 ? TC_ALGO_SCATTERED : TC_ALGO_PAIRWISE;
        break;
    }
    default: return tc_fail(err, TC_EINTERNAL, "mpich: unknown operation");
    }
    if (r.algo != TC_ALGO_SCATTERED)
        r.throttle = 0;
    *out = r;
    return TC_OK;
}

/* Whether two of n ranks (ranks[i], or i without a list) sit on one node
 * of G endpoints (map: rank -> endpoint, NULL the identity): *a and *b the
 * ranks, *node the node. seen (nodes entries, zero) is zero again after. */
static bool share_node(uint32_t *seen, uint32_t nodes, uint32_t G, const uint32_t *ranks, uint32_t n,
                       const uint32_t *map, uint32_t *a, uint32_t *b, uint32_t *node)
{
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) {
        uint32_t r = ranks ? ranks[i] : i, nd = (map ? map[r] : r) / G;
        if (nd >= nodes)
            continue;
        if (seen[nd]) {
            *a = seen[nd] - 1, *b = r, *node = nd;
            found = true;
        } else {
            seen[nd] = r + 1;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = ranks ? ranks[i] : i, nd = (map ? map[r] : r) / G;
        if (nd < nodes)
            seen[nd] = 0;
    }
    return found;
}

/* The seen array for t's nodes (NULL and TC_OK when t has no nodes of
 * several endpoints; NULL and TC_EINTERNAL when out of memory). */
static tc_status node_marks(const tc_topo *t, uint32_t **seen, uint32_t *nodes, uint32_t *G, tc_err *err)
{
    *seen = NULL;
    *G = t && t->node_size > 1 ? t->node_size : 1;
    if (*G == 1)
        return TC_OK;
    *nodes = (t->n_endpoints + *G - 1) / *G;
    *seen = tc_calloc(*nodes, sizeof **seen);
    return *seen ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

tc_status tc_mpich_map_check(uint32_t p, const tc_topo *t, const uint32_t *map, tc_err *err)
{
    uint32_t *seen, nodes = 0, G, a, b, n;
    tc_status st = node_marks(t, &seen, &nodes, &G, err);
    if (st || !seen)
        return st;
    if (share_node(seen, nodes, G, NULL, p, map, &a, &b, &n))
        st = tc_fail(err, TC_EINVAL,
                     "mpich models MPICH's choice with one rank per node, but ranks %u and %u share node %u (of "
                     "%u endpoints), where MPICH's ch4 composes node-aware algorithms topocc does not model: "
                     "place one rank per node or name an algorithm",
                     a, b, n, G);
    free(seen);
    return st;
}

tc_status tc_groups_mpich_check(const tc_groups *g, const tc_topo *t, const uint32_t *map, tc_err *err)
{
    uint32_t *seen, nodes = 0, G, a, b, n;
    tc_status st = node_marks(t, &seen, &nodes, &G, err);
    if (st || !seen || !g->members) {
        free(seen);
        return st;
    }
    for (uint32_t k = 0; k < g->ngroups && st == TC_OK; k++)
        if (share_node(seen, nodes, G, g->members + (size_t)k * g->size, g->size, map, &a, &b, &n))
            st = tc_fail(err, TC_EINVAL,
                         "mpich over groups that hold two ranks of one node (node %u, group %u): MPICH's ch4 "
                         "composes node-aware algorithms there, which topocc does not model; give groups of one "
                         "rank per node or name an algorithm",
                         n, k);
    free(seen);
    return st;
}

char *tc_mpich_name(tc_algo chosen, uint32_t throttle, char *buf, size_t len)
{
    int k = snprintf(buf, len, "mpich:%s", tc_algo_name(chosen));
    if (chosen == TC_ALGO_SCATTERED && throttle && k > 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, ",throttle=%u", throttle == TC_THROTTLE_ALL ? 0 : throttle);
    return buf;
}

static bool mpich_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)op, (void)p, (void)topo, (void)err;
    return true; /* where the ranks sit is checked with their map (tc_mpich_map_check) */
}

static tc_status mpich_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    tc_coll_req r;
    tc_status st = tc_mpich_choose(req, &r, err);
    if (st)
        return st;
    if (!tc_coll_valid(r.op, r.algo, r.p, topo, err))
        return TC_EINVAL;
    s->req = r;
    s->nccl_impl = r.algo;
    return tc_algo_impl_of(r.algo)->build(&r, topo, s, err);
}

const tc_algo_impl tc_impl_mpich = {mpich_valid, mpich_build};
