/*
 * bound.c - a lower bound on the time of any algorithm for a collective
 * (docs/MODEL.md, "Lower bound"): the largest of
 *
 *  1. injection: the bytes one rank must send (or receive) over all the
 *     links of its endpoint: all-reduce 2(p-1)/p S [Patarasuk & Yuan, JPDC
 *     2009; Thakur et al., IJHPCA 2005], reduce-scatter, all-gather and
 *     all-to-all (p-1)/p S, broadcast and reduce S (the root);
 *  2. cuts: for a set of c ranks whose links to the other q = p - c ranks
 *     have capacity C per direction, the bytes that must cross it over C:
 *     all-to-all c q S / p (every rank sends S/p to every other), all-gather
 *     and reduce-scatter max(c, q) S / p (each side needs the other side's
 *     blocks, or contributions to its own; a block crosses once and is
 *     copied on the far side), all-reduce, broadcast and reduce S (every
 *     element of the result depends on data from both sides). The cuts
 *     used are the Clos subtrees (C = w_1...w_{j+1} up-links of level j+1
 *     around a level-j subtree) and the torus planes across one dimension
 *     (N/d links per direction, twice with wraparound) [the all-to-all
 *     bounds of the collectives reference: max((N-1)/N, s(N-k)/N) n/B on a
 *     two-tier Clos, (d_max/8) n/b on a torus], and each scale-up node
 *     (the links out of its endpoints, node switch and NICs);
 *  3. latency: one message round, alpha + the smallest endpoint-to-endpoint
 *     latency. (ceil(log2 p) rounds bound a rank that sends one message at a
 *     time; here a rank may send to all others in one step, so one round is
 *     what every schedule must pay.)
 */
#include <math.h>
#include <stdlib.h>
#include "eval/eval_int.h"

/* Bytes across a cut with c ranks on one side and q on the other. */
static double cut_bytes(tc_op op, double c, double q, double p, double S)
{
    switch (op) {
    case TC_OP_ALLTOALL:
        return c * q * S / p;
    case TC_OP_ALLGATHER:
    case TC_OP_REDUCESCATTER:
        return (c > q ? c : q) * S / p;
    default:
        return S;
    }
}

static double injection_bytes(tc_op op, double p, double S)
{
    switch (op) {
    case TC_OP_ALLREDUCE:
        return 2 * (p - 1) / p * S;
    case TC_OP_REDUCESCATTER:
    case TC_OP_ALLGATHER:
    case TC_OP_ALLTOALL:
        return (p - 1) / p * S;
    default:
        return S;
    }
}

static double cut_time(tc_op op, uint64_t c, uint64_t p, double S, double cap)
{
    if (c == 0 || c >= p || !(cap > 0))
        return 0;
    return cut_bytes(op, (double)c, (double)(p - c), (double)p, S) / cap;
}

/* Clos: a level-j subtree (span_j host slots) reaches the rest only through
 * its w_1...w_{j+1} up-links of level j+1. With rank r on endpoint r the
 * first subtree holds min(span_j, p) ranks and the last one p mod span_j;
 * with any other placement only p = all endpoints says how many ranks a
 * subtree holds. A scale-up node straddling the subtree adds links across
 * the cut: such levels are skipped. */
/* All-reduce and all-to-all move their cut bytes both ways: the weaker
 * direction binds. The others may need one direction only, which one
 * depends on where the root or the larger side is: the stronger one. */
static double pick_dir(tc_op op, double up, double down)
{
    return op == TC_OP_ALLREDUCE || op == TC_OP_ALLTOALL ? fmin(up, down) : fmax(up, down);
}

/* The capacity out of and into Clos subtree a of level j (its W_{j+1}
 * up-links and their down-links, as they are: degraded ones included), the
 * direction op needs. Level-j nodes of subtree a are B + W_j a. */
static double clos_subtree_cap(const tc_topo *t, tc_op op, int j, uint64_t a)
{
    double up = 0, down = 0;
    uint64_t w = t->up[j + 1];
    for (uint64_t B = 0; B < t->wprod[j]; B++)
        for (uint64_t b = 0; b < w; b++) {
            uint64_t l = t->up_lbase[j + 1] + 2 * ((B + (uint64_t)t->wprod[j] * a) * w + b);
            up += t->links[l].bw;
            down += t->links[l + 1].bw;
        }
    return pick_dir(op, up, down);
}

static double clos_cuts(const tc_topo *t, tc_op op, uint64_t p, double S, bool identity)
{
    double best = 0;
    uint64_t n = t->n_endpoints, ns = t->node_size > 1 ? t->node_size : 1, per_slot = n / t->n_slots;
    /* A rail's subtree holds part of every node: node links cross each cut. */
    if ((!identity && p != n) || t->rails)
        return 0;
    for (int j = 1; j < t->levels; j++) {
        uint64_t span = (uint64_t)t->span[j] * per_slot; /* endpoints under a level-j switch */
        if (span >= p || span % ns != 0)
            continue;
        double cap = (double)t->wprod[j + 1] * t->level_bw[j + 1];
        /* With a degraded or failed link, the subtrees' own links (rank r
         * on endpoint r: the first holds min(span, p) ranks, subtree p /
         * span the rest). */
        bool as_is = t->n_degraded || t->n_failed;
        double c0 = as_is && identity ? clos_subtree_cap(t, op, j, 0) : cap;
        double c1 = as_is && identity && p % span ? clos_subtree_cap(t, op, j, p / span) : cap;
        best = fmax(best, cut_time(op, span, p, S, c0));
        best = fmax(best, cut_time(op, p % span, p, S, c1));
    }
    return best;
}

/* Torus, all endpoints: the plane between coordinates floor(d/2) - 1 and
 * floor(d/2) of dimension d leaves floor(d/2) N/d ranks on one side and
 * severs N/d cables per direction, 2 N/d with wraparound (sizes > 2). A node
 * straddles that plane unless it lies within one coordinate of d. */
/* The capacity across the plane of dimension d between coordinates h - 1
 * and h (and, with wraparound, between D - 1 and 0), links as they are,
 * the smaller direction. */
static double torus_plane_cap(const tc_topo *t, tc_op op, int d, uint32_t h)
{
    double plus = 0, minus = 0;
    uint32_t D = t->dims[d];
    for (uint32_t v = 0; v < t->n_endpoints; v++) {
        uint32_t x = v / t->stride[d] % D;
        if (x == h - 1 || (x == D - 1 && t->dim_cables[d] == D)) {
            uint32_t l = tc_topo_torus_link(t, v, d, +1);
            if (l != UINT32_MAX)
                plus += t->links[l].bw, minus += t->links[l + 1].bw;
        }
    }
    return pick_dir(op, plus, minus);
}

static double torus_cuts(const tc_topo *t, tc_op op, uint64_t p, double S)
{
    double best = 0;
    uint64_t n = t->n_endpoints, ns = t->node_size > 1 ? t->node_size : 1;
    if (p != n)
        return 0;
    for (int d = 0; d < t->ndims; d++) {
        uint64_t D = t->dims[d], lines = n / D;
        if (D < 2 || t->stride[d] % ns != 0)
            continue;
        double cap = (double)lines * (t->dim_cables[d] == D ? 2 : 1) * t->torus_bw;
        if (t->n_degraded || t->n_failed)
            cap = torus_plane_cap(t, op, d, (uint32_t)(D / 2));
        best = fmax(best, cut_time(op, D / 2 * lines, p, S, cap));
    }
    return best;
}

/* Multidc: pod k's long-haul links are a cut between its c_k ranks and
 * the q = p - c_k others (every path out of a pod crosses one of them,
 * whatever the gateways and routing do), of capacity the sum of those
 * links as they are, the direction op needs. The bytes that must cross it
 * take at least bytes / capacity at the cut, and the last of them is
 * delivered a route's latency later: every route between pods has the
 * same latency, cross_lat (in flow a flow is delivered its path's latency
 * after its last byte is sent; in steps each transfer pays its path's
 * latency on top of its bytes over its share, and the shares of the
 * crossing transfers sum to at most the capacity). */
static double multidc_cuts(const tc_topo *t, tc_op op, uint32_t p, double S, const uint32_t *map)
{
    uint32_t P = t->n_pods, L = t->wan_links, n = t->pod_endpoints;
    uint32_t *c = tc_calloc(P, sizeof *c);
    double *out = tc_calloc(P, sizeof *out), *in = tc_calloc(P, sizeof *in), best = 0;
    if (!c || !out || !in) {
        free(c), free(out), free(in);
        return 0;
    }
    for (uint32_t r = 0; r < p; r++)
        c[(map ? map[r] : r) / n]++;
    /* long-haul cable j of pair (a, b), a < b: link 2j from a to b, 2j + 1 back */
    uint32_t j = 0;
    for (uint32_t a = 0; a < P; a++)
        for (uint32_t b = a + 1; b < P; b++)
            for (uint32_t g = 0; g < L; g++, j++) {
                double ab = t->links[t->wan_lbase + 2 * j].bw, ba = t->links[t->wan_lbase + 2 * j + 1].bw;
                out[a] += ab, in[b] += ab;
                out[b] += ba, in[a] += ba;
            }
    for (uint32_t k = 0; k < P; k++) {
        double v = cut_time(op, c[k], p, S, pick_dir(op, out[k], in[k]));
        if (v > 0)
            best = fmax(best, v + t->cross_lat);
    }
    free(c), free(out), free(in);
    return best;
}

/* The largest cut bound (internal: the formula evaluator's GENERIC phases
 * use it for all-to-all-like traffic); 0 when no cut applies. A multidc's
 * cuts are its pods' long-haul links (multidc_cuts, with the rank map) and,
 * for ranks on the first endpoints of pod 0, that pod's own cuts. */
double tc_eval_cut_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, bool identity)
{
    if (t->kind == TC_TOPO_CLOS)
        return clos_cuts(t, op, p, bytes, identity);
    if (t->kind == TC_TOPO_TORUS)
        return torus_cuts(t, op, p, bytes);
    if (t->kind == TC_TOPO_MULTIDC) {
        double v = identity ? multidc_cuts(t, op, p, bytes, NULL) : 0;
        if (identity && p <= t->pod_endpoints)
            v = fmax(v, tc_eval_cut_bound(t->pod[0], op, p, bytes, true));
        return v;
    }
    return 0;
}

/* Scale-up nodes: node k's endpoints, its node switch and its NICs reach
 * the rest of the network only over the links that leave that set (its
 * NICs' or endpoints' fabric ports), so with c_k of the job's ranks on it
 * (under any rank map) it is a cut of c_k against p - c_k, its links as
 * they are. The largest such bound; 0 without nodes. Without this, a
 * rail-optimized Clos (whose subtree cuts are skipped) had no cut at all,
 * and an all-to-all's bound let every rank use all its node's NICs at
 * once. */
static bool in_set(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* The capacity out of and into node k: the links that leave its
 * endpoints, node switch and NICs (set: scratch of 3 G + 1). */
static void node_caps(const tc_topo *t, uint32_t k, uint32_t *set, double *out, double *in)
{
    uint32_t G = t->node_size, n = 0;
    for (uint32_t e = k * G; e < (k + 1) * G; e++) {
        set[n++] = e;
        for (uint32_t i = t->out_off[e]; i < t->out_off[e + 1]; i++) {
            const tc_link *L = &t->links[t->out_link[i]];
            if ((L->kind == TC_LINK_NODE || L->kind == TC_LINK_NIC) && !in_set(set, n, L->dst))
                set[n++] = L->dst;
        }
    }
    *out = *in = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = t->out_off[set[i]]; j < t->out_off[set[i] + 1]; j++) {
            uint32_t l = t->out_link[j];
            if (!in_set(set, n, t->links[l].dst)) {
                *out += t->links[l].bw;
                *in += t->links[l ^ 1u].bw; /* a cable's two directions are l and l ^ 1 */
            }
        }
}

/* All-reduce where the fabric does not reduce (no sharp=1): the N nodes
 * that hold ranks are N parties of an all-reduce, each with one port of
 * its NICs' capacity (what moves inside a node is free here), and no
 * schedule of N parties takes less than 2 (N-1)/N S over its port
 * [Patarasuk & Yuan, JPDC 2009; Thakur et al. 2005]; a port as fast as
 * the fastest node's keeps it a bound. */
static double node_cuts(const tc_topo *t, tc_op op, uint32_t p, double S, const uint32_t *map)
{
    uint32_t G = t->node_size;
    if (G < 2 || !t->out_off)
        return 0;
    uint32_t nn = t->n_endpoints / G;
    uint32_t *cnt = calloc(nn, sizeof *cnt), *set = malloc((3 * (size_t)G + 1) * sizeof *set);
    double best = 0, port = 0;
    uint32_t parties = 0;
    if (cnt && set) {
        for (uint32_t r = 0; r < p; r++) {
            uint32_t e = map ? map[r] : r;
            if (e / G < nn)
                cnt[e / G]++;
        }
        for (uint32_t k = 0; k < nn; k++)
            if (cnt[k] > 0 && cnt[k] < p) {
                double out, in;
                node_caps(t, k, set, &out, &in);
                best = fmax(best, cut_time(op, cnt[k], p, S, pick_dir(op, out, in)));
                port = fmax(port, fmax(out, in));
                parties++;
            }
    }
    if (op == TC_OP_ALLREDUCE && !t->sharp && parties >= 2 && port > 0)
        best = fmax(best, 2.0 * (parties - 1) / parties * S / port);
    /* Out of memory: the bound without node cuts, weaker but still a bound. */
    free(cnt);
    free(set);
    return best;
}

/* The smallest and second smallest, over the job's endpoints, of each
 * endpoint's total bandwidth out of it (lo_out) and into it (lo_in), its
 * links as they are, degraded ones included. */
static void push2(double v, double lo[2])
{
    if (v < lo[0])
        lo[1] = lo[0], lo[0] = v;
    else if (v < lo[1])
        lo[1] = v;
}

static void endpoint_bw(const tc_topo *t, uint32_t p, const uint32_t *map, double lo_out[2], double lo_in[2],
                        double sum[2])
{
    lo_out[0] = lo_out[1] = lo_in[0] = lo_in[1] = INFINITY;
    sum[0] = sum[1] = 0;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t e = map ? map[r] : r;
        double out = 0, in = 0;
        for (uint32_t k = t->out_off[e]; k < t->out_off[e + 1]; k++) {
            uint32_t l = t->out_link[k];
            out += t->links[l].bw;
            in += t->links[l ^ 1u].bw; /* a cable's two directions are l and l ^ 1 */
        }
        push2(out, lo_out);
        push2(in, lo_in);
        sum[0] += out, sum[1] += in;
    }
}

/* With a degraded or failed link ranks differ: what every rank must send and
 * receive, at the slowest endpoint in that direction. All-reduce: each
 * rank's contributions must leave it and the result reach it, S each way
 * (a slow rank can hand its whole input to a fast one and take the result
 * back), and all ranks together move p ar_bytes each way (2 (p-1) S, the
 * healthy bound's total; p S where switches reduce) through their links'
 * sum;
 * reduce-scatter sends, all-gather receives (p-1)/p S; all-to-all both;
 * broadcast and reduce load every rank but the root, one way, so at the
 * second slowest endpoint (one of the two slowest is not the root). */
static double injection_degraded(const tc_topo *t, tc_op op, uint32_t p, double S, double ar_bytes,
                                 const uint32_t *map)
{
    double lo_out[2], lo_in[2], sum[2], f = (double)(p - 1) / p * S, out = 0, in = 0;
    endpoint_bw(t, p, map, lo_out, lo_in, sum);
    switch (op) {
    case TC_OP_ALLREDUCE:
        out = fmax(S / lo_out[0], p * ar_bytes / sum[0]), in = fmax(S / lo_in[0], p * ar_bytes / sum[1]);
        break;
    case TC_OP_REDUCESCATTER: out = f / lo_out[0]; break;
    case TC_OP_ALLGATHER: in = f / lo_in[0]; break;
    case TC_OP_ALLTOALL: out = f / lo_out[0], in = f / lo_in[0]; break;
    case TC_OP_BROADCAST: in = S / lo_in[1]; break;
    default: out = S / lo_out[1]; break;
    }
    double v = fmax(out, in);
    return isfinite(v) ? v : 0;
}

/* Whether endpoints differ in ports: a mesh line of more than 2 has ends
 * of one port and middles of two (the injection figure is an end's, which
 * all-reduce, whose slowest rank need not move 2 (p-1)/p S, cannot take). */
static bool uneven_ports(const tc_topo *t)
{
    for (int d = 0; t->kind == TC_TOPO_TORUS && d < t->ndims; d++)
        if (t->dims[d] > 2 && t->dim_cables[d] != t->dims[d])
            return true;
    return false;
}

/* An endpoint's fabric bandwidth, all its ports: behind a shared NIC the
 * NIC to itself; in a multidc its pod's, with a torus router's gateway
 * cables (its ports too). */
static double fabric_injection(const tc_topo *t)
{
    if (t->kind == TC_TOPO_MULTIDC) {
        const tc_topo *pd = t->pod[0];
        return fabric_injection(pd) + (pd->kind == TC_TOPO_TORUS ? t->wan_links * t->gw_bw : 0);
    }
    if (t->nics)
        return fmin(t->links[t->nic_lbase].bw, t->up[1] * t->level_bw[1]);
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    return info.injection_Bps;
}

double tc_lower_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *rank_map)
{
    return t ? tc_lower_bound_alpha(t, op, p, bytes, rank_map, t->alpha) : 0;
}

double tc_lower_bound_alpha(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *rank_map,
                            double alpha)
{
    return tc_lower_bound_ex(t, op, p, bytes, rank_map, alpha, true);
}

bool tc_req_node_reduces(const tc_coll_req *req)
{
    return req->elt != 1 && tc_nccl_nvls_redop_ok(req->dtype, req->redop);
}

double tc_lower_bound_ex(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *rank_map,
                         double alpha, bool node_reduces)
{
    if (!t || p < 2 || !(bytes > 0) || (unsigned)op >= TC_OP_COUNT)
        return 0;
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    bool identity = !t->hslot; /* rails: rank r is not host slot r */
    for (uint32_t r = 0; rank_map && r < p && identity; r++)
        identity = rank_map[r] == r;

    /* 1. Injection: every rank's bytes through its own links (fabric ports
     * and node link, as degraded). Broadcast and reduce load the root one
     * way and every other rank the other: the second slowest endpoint
     * stands for a rank that is not the root. */
    /* Switches that reduce (NVLink SHARP in the node, InfiniBand SHARP in
     * the fabric) take the all-reduce's reduction off the ranks: each must
     * still send its whole input and receive the whole result, S each way,
     * not 2 (p - 1) / p S. NVSwitches reduce only the types and operators
     * NVLS has kernels for (node_reduces; tc_nccl_nvls_redop_ok). */
    double inj_bytes = injection_bytes(op, p, bytes);
    if (((node_reduces && t->node_reduce) || t->sharp) && op == TC_OP_ALLREDUCE)
        inj_bytes = fmin(inj_bytes, bytes);
    double inj = fabric_injection(t) + (t->node_size > 1 ? t->node_bw : 0);
    /* A failed link has no bandwidth: counted as a degraded one is. */
    bool as_is = t->n_degraded || t->n_failed || uneven_ports(t);
    double lb = as_is ? injection_degraded(t, op, p, bytes, inj_bytes, rank_map) : inj > 0 ? inj_bytes / inj : 0;

    /* 2. Cuts (a multidc's long-haul cuts count the ranks of each pod
     * under any rank map). */
    lb = fmax(lb, tc_eval_cut_bound(t, op, p, bytes, identity));
    lb = fmax(lb, node_cuts(t, op, p, bytes, rank_map));
    if (t->kind == TC_TOPO_MULTIDC && !identity)
        lb = fmax(lb, multidc_cuts(t, op, p, bytes, rank_map));

    /* 3. Latency: one round. */
    lb = fmax(lb, alpha + info.min_latency_s);
    return lb;
}
