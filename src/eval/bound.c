/*
 * bound.c - a lower bound on the time of any algorithm for a collective
 * (docs/MODEL.md, "Lower bound"): the largest of
 *
 *  1. injection: the bytes one rank must send (or receive) over all the
 *     links of its endpoint: all-reduce 2(p-1)/p S [Patarasuk & Yuan, JPDC
 *     2009; Thakur et al., IJHPCA 2005], reduce-scatter, all-gather and
 *     all-to-all (p-1)/p S, broadcast and reduce S (the root), sendrecv S
 *     (each rank's buffer to its peer, out and in);
 *  2. cuts: for a set of c ranks whose links to the other q = p - c ranks
 *     have capacity C per direction, the bytes that must cross it over C:
 *     all-to-all c q S / p (every rank sends S/p to every other), all-gather
 *     and reduce-scatter max(c, q) S / p (each side needs the other side's
 *     blocks, or contributions to its own; a block crosses once and is
 *     copied on the far side), all-reduce, broadcast and reduce S (every
 *     element of the result depends on data from both sides), sendrecv S
 *     each way (the cycle r -> r + 1 leaves a proper subset of the ranks at
 *     least once and enters it at least once). The cuts
 *     used, c and q counted through the rank map, are the Clos subtrees
 *     (C = w_1...w_{j+1} up-links of level j+1 around a level-j subtree),
 *     the torus slabs, an interval of coordinates of one dimension (N/d
 *     links per direction at each end, one end without wraparound) [the
 *     all-to-all bounds of the collectives reference: max((N-1)/N,
 *     s(N-k)/N) n/B on a two-tier Clos, (d_max/8) n/b on a torus], and
 *     each scale-up node (the links out of its endpoints, node switch and
 *     NICs);
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

/* All-reduce, all-to-all and sendrecv move their cut bytes both ways: the weaker
 * direction binds. The others may need one direction only, which one
 * depends on where the root or the larger side is: the stronger one. */
static double pick_dir(tc_op op, double up, double down)
{
    return op == TC_OP_ALLREDUCE || op == TC_OP_ALLTOALL || op == TC_OP_SENDRECV ? fmin(up, down) : fmax(up, down);
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

/* Clos: a level-j subtree (j < h, span_j host slots) reaches the rest only
 * through its W_{j+1} up-links of level j+1, whatever the routing: every
 * parent of a node in it is in it, up to level j. So each subtree that
 * holds c of the job's ranks (counted through the rank map, by host slot)
 * is a cut of c against p - c, under any placement. A scale-up node
 * straddling the subtree adds links across the cut: such levels are
 * skipped. A rail's subtree holds part of every node, so a rail-optimized
 * Clos has none (its node cuts stand in). */
static double clos_cuts(const tc_topo *t, tc_op op, uint32_t p, double S, const uint32_t *map)
{
    double best = 0;
    uint64_t n = t->n_endpoints, ns = t->node_size > 1 ? t->node_size : 1, per_slot = n / t->n_slots;
    if (t->rails)
        return 0;
    /* A degraded or failed link: each subtree's own links as they are. */
    bool as_is = t->n_degraded || t->n_failed;
    for (int j = 1; j < t->levels; j++) {
        uint64_t span = t->span[j], trees = (t->n_slots + span - 1) / span;
        if (span * per_slot % ns != 0)
            continue;
        uint32_t *cnt = tc_calloc(trees, sizeof *cnt);
        if (!cnt)
            return NAN; /* out of memory: no bound rather than a weaker one printed as the bound */
        for (uint32_t r = 0; r < p; r++) {
            uint32_t e = map ? map[r] : r;
            if (e < n)
                cnt[tc_topo_slot(t, e) / span]++;
        }
        double cap = (double)t->wprod[j + 1] * t->level_bw[j + 1];
        for (uint64_t a = 0; a < trees; a++)
            if (cnt[a] > 0 && cnt[a] < p)
                best = fmax(best, cut_time(op, cnt[a], p, S, as_is ? clos_subtree_cap(t, op, j, a) : cap));
        free(cnt);
    }
    return best;
}

/* Torus: along dimension d, the routers whose coordinate lies in an
 * interval [lo, lo + L) (mod D, 0 < L < D) reach the others only over the
 * cables at the interval's two ends (one where a line ends there), so with
 * c of the job's ranks inside (through the rank map) it is a cut of c
 * against p - c whatever the routes do, even where they leave the job's
 * routers: a job on a slice of a larger torus is bound by the whole
 * torus's cables across the cut, not the slice's. Every interval is tried
 * up to TORUS_ALL_INTERVALS coordinates (O(D^2)), the halves beyond (with
 * rank r on endpoint r and p every endpoint the half, floor(D/2)
 * coordinates, binds all-to-all). A node straddles the cut unless it lies
 * within one coordinate of d. */
#define TORUS_ALL_INTERVALS 1024u

static double torus_cuts(const tc_topo *t, tc_op op, uint32_t p, double S, const uint32_t *map)
{
    double best = 0;
    uint32_t n = t->n_endpoints, ns = t->node_size > 1 ? t->node_size : 1;
    bool as_is = t->n_degraded || t->n_failed;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t D = t->dims[d], C = t->dim_cables[d];
        if (D < 2 || t->stride[d] % ns != 0)
            continue;
        /* pre[i]: ranks at the first i coordinates, the line taken twice
         * (i = 0..2D) so an interval that wraps is a difference too;
         * plus[x], minus[x]: the capacity of cable x (x to x + 1 mod D,
         * x < C) each way, over all lines. */
        uint32_t *pre = tc_calloc(2 * (size_t)D + 1, sizeof *pre);
        double *plus = tc_calloc(D, sizeof *plus), *minus = tc_calloc(D, sizeof *minus);
        if (!pre || !plus || !minus) {
            free(pre), free(plus), free(minus);
            return NAN; /* out of memory: no bound rather than a weaker one printed as the bound */
        }
        for (uint32_t r = 0; r < p; r++) {
            uint32_t e = map ? map[r] : r;
            if (e < n) {
                pre[e / t->stride[d] % D + 1]++;
                pre[e / t->stride[d] % D + D + 1]++;
            }
        }
        for (uint32_t i = 1; i <= 2 * D; i++)
            pre[i] += pre[i - 1];
        if (as_is) {
            for (uint32_t v = 0; v < n; v++) {
                uint32_t x = v / t->stride[d] % D, l = x < C ? tc_topo_torus_link(t, v, d, +1) : UINT32_MAX;
                if (l != UINT32_MAX)
                    plus[x] += t->links[l].bw, minus[x] += t->links[l + 1].bw;
            }
        } else {
            for (uint32_t x = 0; x < C; x++)
                plus[x] = minus[x] = (double)(n / D) * t->torus_bw;
        }
        /* any subset of the cuts is still a bound */
        bool all = D <= TORUS_ALL_INTERVALS;
        for (uint32_t lo = 0; lo < D; lo++)
            for (uint32_t L = all ? 1 : D / 2; L < (all ? D : D / 2 + 2) && L < D; L++) {
                /* out of the interval: + at its high end's cable, - at the
                 * cable below its low end; into it the reverse */
                uint32_t hi = (lo + L - 1) % D, below = (lo + D - 1) % D;
                double out = (hi < C ? plus[hi] : 0) + (below < C ? minus[below] : 0);
                double in = (hi < C ? minus[hi] : 0) + (below < C ? plus[below] : 0);
                uint32_t c = pre[lo + L] - pre[lo];
                best = fmax(best, cut_time(op, c, p, S, pick_dir(op, out, in)));
            }
        free(pre), free(plus), free(minus);
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
        return NAN; /* out of memory */
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

/* The largest cut bound (eval_int.h); 0 when no cut applies. The Clos
 * subtrees and torus intervals count the job's ranks through the rank map
 * (NULL: rank r on endpoint r). A multidc's cuts are its pods' long-haul
 * links (multidc_cuts, with the rank map) and, for ranks on the first
 * endpoints of pod 0 (identity), that pod's own cuts: a Clos pod's
 * subtrees (the gateways hang off its top level, above every subtree),
 * a torus pod's intervals only where the ranks fill the pod, as before
 * (a conservative restriction: no more is claimed for a partial job). */
double tc_eval_cut_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *map, bool identity)
{
    if (t->kind == TC_TOPO_CLOS)
        return clos_cuts(t, op, p, bytes, map);
    if (t->kind == TC_TOPO_TORUS)
        return torus_cuts(t, op, p, bytes, map);
    if (t->kind == TC_TOPO_MULTIDC) {
        const tc_topo *pd = t->pod[0];
        double v = identity ? multidc_cuts(t, op, p, bytes, NULL) : 0;
        if (!isnan(v) && identity && (pd->kind == TC_TOPO_CLOS ? p <= t->pod_endpoints : p == t->pod_endpoints)) {
            double w = tc_eval_cut_bound(pd, op, p, bytes, NULL, true);
            v = isnan(w) ? w : fmax(v, w);
        }
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
 * once. Node k's capacity out of and into it: the links that leave its
 * endpoints, node switch and NICs (set: scratch of 3 G + 1; mark: a stamp
 * per vertex, k + 1 for node k's, so membership costs one look). */
static void node_caps(const tc_topo *t, uint32_t k, uint32_t *set, uint32_t *mark, double *out, double *in)
{
    uint32_t G = t->node_size, n = 0, stamp = k + 1;
    for (uint32_t e = k * G; e < (k + 1) * G; e++) {
        if (mark[e] != stamp)
            mark[e] = stamp, set[n++] = e;
        for (uint32_t i = t->out_off[e]; i < t->out_off[e + 1]; i++) {
            const tc_link *L = &t->links[t->out_link[i]];
            if ((L->kind == TC_LINK_NODE || L->kind == TC_LINK_NIC) && mark[L->dst] != stamp)
                mark[L->dst] = stamp, set[n++] = L->dst;
        }
    }
    *out = *in = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = t->out_off[set[i]]; j < t->out_off[set[i] + 1]; j++) {
            uint32_t l = t->out_link[j];
            if (mark[t->links[l].dst] != stamp) {
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
    uint32_t *mark = calloc(t->n_vertices, sizeof *mark);
    double best = 0, port = 0;
    uint32_t parties = 0;
    if (cnt && set && mark) {
        for (uint32_t r = 0; r < p; r++) {
            uint32_t e = map ? map[r] : r;
            if (e / G < nn)
                cnt[e / G]++;
        }
        for (uint32_t k = 0; k < nn; k++)
            if (cnt[k] > 0 && cnt[k] < p) {
                double out, in;
                node_caps(t, k, set, mark, &out, &in);
                best = fmax(best, cut_time(op, cnt[k], p, S, pick_dir(op, out, in)));
                port = fmax(port, fmax(out, in));
                parties++;
            }
    }
    if (op == TC_OP_ALLREDUCE && !t->sharp && parties >= 2 && port > 0)
        best = fmax(best, 2.0 * (parties - 1) / parties * S / port);
    bool oom = !cnt || !set || !mark;
    free(cnt);
    free(set);
    free(mark);
    return oom ? NAN : best; /* out of memory: no bound rather than a weaker one */
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
 * sendrecv sends and receives S;
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
    case TC_OP_SENDRECV: out = S / lo_out[0], in = S / lo_in[0]; break;
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

    /* 2. Cuts (Clos subtrees, torus intervals and a multidc's long-haul
     * cuts count the job's ranks on each side under any rank map). */
    double cuts[3] = {tc_eval_cut_bound(t, op, p, bytes, rank_map, identity), node_cuts(t, op, p, bytes, rank_map),
                      t->kind == TC_TOPO_MULTIDC && !identity ? multidc_cuts(t, op, p, bytes, rank_map) : 0};
    for (int k = 0; k < 3; k++) {
        if (isnan(cuts[k]))
            return NAN; /* out of memory */
        lb = fmax(lb, cuts[k]);
    }

    /* 3. Latency: one round. */
    lb = fmax(lb, alpha + info.min_latency_s);
    return lb;
}
