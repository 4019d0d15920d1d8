/*
 * nccl_collnet.c - NCCL's all-reduce with the reduction in the fabric
 * (InfiniBand SHARP, through NCCL's CollNet plugin interface):
 * CollNetChain (nccl-collnet-chain) and CollNetDirect
 * (nccl-collnet-direct), as NVIDIA/nccl v2.21.5-1 (commit ab2b89c4) runs
 * them (docs/MODEL.md, "NCCL's CollNet"); and CollNetDirect's all-gather
 * and reduce-scatter (the switches multicast, or reduce, each rail's
 * windows: "CollNetDirect's all-gather and reduce-scatter" below).
 *
 * Inside a node (src/device/all_reduce.h, src/graph/connect.cc):
 *  - CollNetChain (all_reduce.h:599-715): channel k's GPUs form a chain
 *    from its head, the GPU at the channel's NIC (connect.cc:50-63: up is
 *    the previous GPU of the channel's intra order, the head's up the
 *    network). Chunks are reduced up the chain (recvReduceSend), the head
 *    hands the node's sum to the network, and the result comes back down
 *    the chain (recvCopySend).
 *  - CollNetDirect (all_reduce.h:245-359): every GPU scatters piece j of
 *    each chunk to head j (one head per NIC), head j adds the node's
 *    pieces (recvReduceSend) and hands them to the network, then sends the
 *    result to every GPU of its node (recvCopyDirectSend); heads are the
 *    distinct first GPUs of the CollNet graph's channels (connect.cc:
 *    173-232).
 * In the fabric (SHARP): the heads j of all nodes form one reduction tree
 * whose aggregation nodes are Clos switches: a leaf adds what its heads
 * send, each level adds its children's partial sums up to the root, which
 * multicasts the result back down the same tree. Tree j climbs through
 * the up-link b_i = j mod w_i at every level i (its switches are the
 * ancestors of its heads along those up-links) to the lowest level that
 * holds all its heads: an assumed layout (SHARP's aggregation manager
 * builds its trees at run time; this one spreads the heads' trees over
 * the top switches; where failures cut a cable of that choice, the next
 * up-link whose cables survive for every head). Each switch of a tree is
 * a participant of the schedule (tc_sched.sw_level, sw_pick).
 *
 * Pipelining: chunk m of a stage at offset o moves at step m + o; a stage
 * is one hop (a GPU to the next, a head to its leaf, a switch to its
 * parent, and back). Channels with the same head (chain) and all channels
 * (direct) move the same transfers at the same steps: they are lanes
 * merged as in nccl_nvls.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

/* NCCL v2.21.5-1's CollNet constants. */
#define CN_STEP 524288.0          /* Simple stepSize: NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 (init.cc:544, enqueue.cc:1723) */
#define CN_MAX_THREADS 640.0      /* maxThreads[CollNet*][Simple] = NCCL_MAX_NTHREADS (tuning.cc:126-129, device.h:55) */
#define CN_THREAD_THRESHOLD 512.0 /* threadThresholds[CollNet*][Simple] (tuning.cc:382-383) */
#define CN_DIRECT_ARITY 7         /* NCCL_MAX_DIRECT_ARITY (device.h:156) */
/* hwLat (tuning.cc:65-78), us: NVLink and network, Simple. */
#define CN_DIRECT_NVLINK_US 3.7
#define CN_CHAIN_NVLINK_US 2.8
#define CN_DIRECT_NET_US 31.0
#define CN_CHAIN_NET_US 30.0
#define CN_ARITY_US 0.4           /* "arity serialization latency" per extra GPU (tuning.cc:253-255) */
#define CN_HOPPER_EFF 0.85        /* CollNetDirect's bus bandwidth on compute capability >= 9.0 (tuning.cc:208) */
/* CollNetDirect's all-gather and reduce-scatter: "measured corrective
 * ratio" at 1 and 8 GPUs per node, interpolated (tuning.cc:199-202). */
#define CN_AGRS_EFF1 0.95
#define CN_AGRS_EFF8 0.85

/* ---- validity and shape ---- */

static void cn_shape(uint32_t p, const tc_topo *t, uint32_t *G, uint32_t *M, uint32_t *H)
{
    uint32_t g = t && t->node_size > 1 ? t->node_size : 1;
    if (g > p)
        g = p;
    *G = g;
    *M = p / g;
    *H = t && t->nics ? t->nics : g;
}

/* Why CollNet cannot run (NULL if it can). */
static const char *cn_refusal(tc_op op, uint32_t p, const tc_topo *t, bool direct)
{
    bool agrs = op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER;
    if (!direct && op != TC_OP_ALLREDUCE)
        return "implements allreduce only (NCCL v2.21.5-1 runs CollNetChain for all-reduce only, "
               "src/graph/tuning.cc:166-169; nccl-collnet-direct also gathers and scatters)";
    if (direct && op != TC_OP_ALLREDUCE && !agrs)
        return "implements allreduce, allgather and reducescatter (src/graph/tuning.cc:166-169)";
    if (!t || t->kind != TC_TOPO_CLOS || !t->sharp)
        return "needs fabric switches that reduce and multicast (a Clos with sharp=1, InfiniBand SHARP): the "
               "topology's fabric switches do not";
    uint32_t G, M, H;
    cn_shape(p, t, &G, &M, &H);
    if (p % G || M < 2)
        return "runs across nodes: p a multiple of the node size and at least 2 nodes (NCCL_COLLNET_NODE_THRESHOLD, "
               "src/init.cc:583)";
    if (direct && G < 2)
        return "needs an NVSwitch inside the nodes (node=G, G >= 2): NCCL enables CollNetDirect only there "
               "(src/graph/tuning.cc:297-300)";
    if (G > CN_DIRECT_ARITY + 1)
        return "takes at most 8 GPUs per node (NCCL disables CollNet on a communicator with more: "
               "src/init.cc:1196-1200, NCCL_MAX_DIRECT_ARITY 7 peers, src/include/device.h:156)";
    if (agrs && H != G)
        return "gathers and scatters only with a NIC per GPU (nics equal to the node size): NCCL's model "
               "disables CollNetDirect's all-gather and reduce-scatter where a node has more GPUs than CollNet "
               "heads (src/graph/tuning.cc:190-198)";
    return NULL;
}

static bool cn_valid(tc_op op, uint32_t p, const tc_topo *t, bool direct, tc_err *err)
{
    const char *why = cn_refusal(op, p, t, direct);
    if (why)
        tc_fail(err, TC_EINVAL, "%s %s", direct ? "nccl-collnet-direct" : "nccl-collnet-chain", why);
    return !why;
}

static bool chain_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    return cn_valid(op, p, t, false, err);
}

static bool direct_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    return cn_valid(op, p, t, true, err);
}

/* The channels of a CollNet communicator: the ring's (NCCL's CollNet graph
 * has as many search channels as the ring's, init.cc:1067), plus half as
 * many where that graph's bwIntra is above its bwInter
 * (tc_nccl_collnet_widens, connect.cc:447-452), at most 32; or the
 * request's. */
static uint32_t cn_channels_full(const tc_coll_req *req, const tc_topo *t, uint32_t G)
{
    if (req->channels)
        return tc_nccl_channel_bounds(req, req->channels > 32 ? 32 : req->channels);
    uint32_t C = tc_nccl_channels_graph(req, t);
    if (tc_nccl_collnet_widens(req, t, G * (req->p / G), G))
        C += C / 2;
    /* then the channel variables (connect.cc:465-469, after :447-452) */
    return tc_nccl_channel_bounds(req, C > 32 ? 32 : C);
}

/* The channels an operation of req->bytes runs (getChannnelThreadInfo,
 * enqueue.cc:1566-1591): CollNetChain as a ring or tree, CollNetDirect with
 * its ncSwitch steps over the heads. */
static uint32_t cn_channels(const tc_coll_req *req, uint32_t nc, uint32_t H, bool direct)
{
    double B = req->bytes, nt = CN_MAX_THREADS, th = CN_THREAD_THRESHOLD;
    if (!direct) {
        while (B < nc * nt * th && nc >= 2)
            nc--;
        return nc;
    }
    bool flag = true;
    for (uint32_t sw = 16; sw >= 1 && flag; sw /= 2) {
        while ((flag = B < nc * nt * H * th) && nc > sw) {
            if (nc == sw + sw / 2)
                th /= 2;
            nc--;
        }
    }
    return nc;
}

/* The chunk (computeCollChunkInfo, enqueue.cc:1722-1742). */
static double cn_chunk(double B, uint32_t C, uint32_t H, uint32_t G, bool direct)
{
    if (direct) {
        double q = CN_STEP, per = (double)C * H, depth = G > 1 ? 2 : 1; /* connect.cc:227 */
        while (B / (per * q) < depth * 64 && q > 131072)
            q /= 2;
        while (B / (per * q) < depth * 8 && q > 65536)
            q /= 2;
        while (B / (per * q) < depth * 8 && q > 32768)
            q /= 2;
        return q;
    }
    double q = fmin(262144.0, CN_STEP), depth = G; /* collnetChain.depth = nRanks / nNodes (connect.cc:231) */
    while (B / (C * q) < depth * 64 && q > 131072)
        q /= 2;
    while (B / (C * q) < depth * 8 && q > 65536)
        q /= 2;
    while (B / (C * q) < depth && q > 32768)
        q /= 2;
    return q;
}

/* NCCL's latency of CollNet, us (tuning.cc:225-256; the IB plugin reports
 * no network latency of its own, latencyInter 0: assumed). */
static double cn_lat_us(uint32_t G, bool direct)
{
    if (direct)
        return 2 * ((G > 1 ? 1 : 0) * CN_DIRECT_NVLINK_US + (G - 1) * CN_ARITY_US) + CN_DIRECT_NET_US;
    return 2 * (G - 1) * CN_CHAIN_NVLINK_US + CN_CHAIN_NET_US;
}

/* The CollNet graph (search.cc): its search channels are the ring's
 * (init.cc:1063-1070); pass 1 finds one speed of the list that a head's
 * NIC (and its PCIe link) and the GPUs' NVLink carry over the channels, a
 * chain through the node's G GPUs crossing the NVLink G - 1 times
 * (tc_nccl_chain_nvl_channels); pass 2 raises bwIntra for trees
 * while below twice bwInter and within the NVLink (search.cc:1013-1031;
 * tc_nccl_tree_intra_two_nodes); a NIC carries ceil(channels / heads) of
 * them. NCCL's search code itself, compiled and run (docs/MODEL.md
 * "Channels"), gives DGX H100 nodes 8 x 48/48, DGX A100 nodes 8 x 30/24,
 * 8 H100 with 2 NICs of 400 Gb/s or 4 of 200 Gb/s 4 x 48/24, with 8 NICs
 * of 200 Gb/s 8 x 48/24, 4 H100 with a 400 Gb/s NIC each 8 x 48/24, as
 * this does (tests/test_nccl.c). */
void tc_nccl_collnet_graph(const tc_coll_req *req, const tc_topo *t, double *nch, double *intra, double *inter)
{
    uint32_t G, M, H;
    cn_shape(req->p, t, &G, &M, &H);
    double n = tc_nccl_channels_graph(req, t) / 2.0;
    if (n < 1)
        n = 1;
    double nic = tc_nccl_nic_line_Bps(t) * G / H / 1e9, nvl = t->node_size > 1 ? tc_nccl_nvlink_GBps(t) : 0;
    double pci = tc_nccl_pcie_GBps(t), path = pci > 0 ? fmin(nic, pci) : nic;
    double share = nvl > 0 && G > 1 ? nvl / tc_nccl_chain_nvl_channels((uint32_t)ceil(n), G) : INFINITY;
    bool sm90 = !(t->arch == TC_ARCH_VOLTA || t->arch == TC_ARCH_AMPERE);
    /* the channels over the H heads' NICs: ceil(n / H) a NIC */
    *inter = tc_nccl_speed_at_most(true, sm90, fmin(path / ceil(n / H), share));
    *intra = tc_nccl_tree_intra_two_nodes(*inter, (uint32_t)n, G > 1 ? nvl : 0, G, sm90);
    *nch = n;
}

double tc_nccl_collnet_time_us(const tc_coll_req *req, const tc_topo *t, bool direct)
{
    if (cn_refusal(req->op, req->p, t, direct))
        return INFINITY;
    uint32_t G, M, H;
    cn_shape(req->p, t, &G, &M, &H);
    double nch, intra, inter;
    tc_nccl_collnet_graph(req, t, &nch, &intra, &inter);
    double bus = nch * intra;
    if (direct) {
        /* tuning.cc:203-208: a GPU-to-NIC ratio above 1 costs half its excess */
        double f = G / nch;
        f -= (f - 1) / 2;
        bus /= f;
        if (t->arch == TC_ARCH_HOPPER || t->arch == TC_ARCH_BLACKWELL || t->arch == TC_ARCH_NONE)
            bus *= CN_HOPPER_EFF;
    }
    if (direct && (req->op == TC_OP_ALLGATHER || req->op == TC_OP_REDUCESCATTER)) {
        /* tuning.cc:188-202: busBw = ppn x bwIntra (not nChannels x),
         * 0.95 at 1 GPU per node to 0.85 at 8 interpolated, and no
         * conversion to an algorithm bandwidth (tuning.cc:212-219 skips
         * CollNetDirect's all-gather and reduce-scatter): bytes / busBw */
        double w = (G - 1) / 7.0, agrs = G * intra * (w * CN_AGRS_EFF8 + (1 - w) * CN_AGRS_EFF1);
        return agrs > 0 ? cn_lat_us(G, true) + req->bytes / (1000 * agrs) : INFINITY;
    }
    double alg = bus * .5; /* tuning.cc:213-219 */
    return alg > 0 ? cn_lat_us(G, direct) + req->bytes / (1000 * alg) : INFINITY;
}

/* ---- the SHARP trees (algos.h: tc_sharp) ---- */

void tc_sharp_free(tc_sharp *sh)
{
    free(sh->top), free(sh->leaf), free(sh->parent), free(sh->first_child), free(sh->next_sib);
    free(sh->heads_first), free(sh->heads_next), free(sh->tree_first);
    memset(sh, 0, sizeof *sh);
}

/* The GPU of node n that is head j (the first behind NIC j). */
static uint32_t head_rank(const tc_sharp *sh, uint32_t n, uint32_t j)
{
    return n * sh->G + j * (sh->G / sh->H);
}

tc_status tc_sharp_build(tc_sched *s, const tc_topo *t, tc_sharp *sh, uint32_t H, uint32_t M, uint32_t G, tc_err *err)
{
    uint32_t cap = 0, off = s->nsw;
    memset(sh, 0, sizeof *sh);
    sh->H = H, sh->M = M, sh->G = G;
    sh->base = s->req.p + off;
    sh->top = calloc(H, sizeof *sh->top);
    sh->leaf = malloc((size_t)H * M * sizeof *sh->leaf);
    sh->heads_next = malloc((size_t)H * M * sizeof *sh->heads_next);
    sh->tree_first = malloc(((size_t)H + 1) * sizeof *sh->tree_first);
    if (!sh->top || !sh->leaf || !sh->heads_next || !sh->tree_first)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    /* tree j climbs to the lowest level that holds all its heads */
    for (uint32_t j = 0; j < H; j++) {
        uint32_t s0 = tc_topo_slot(t, head_rank(sh, 0, j)), L = 1;
        for (uint32_t n = 1; n < M; n++) {
            uint32_t sn = tc_topo_slot(t, head_rank(sh, n, j));
            while (L < (uint32_t)t->levels && sn / t->span[L] != s0 / t->span[L])
                L++;
        }
        sh->top[j] = L;
        sh->D = L > sh->D ? L : sh->D;
        cap += L * M;
    }
    /* after the schedule's switches so far (node switches: level 0) */
    uint32_t *rk = realloc(s->sw_rank, ((size_t)off + cap) * sizeof *s->sw_rank);
    if (rk)
        s->sw_rank = rk;
    uint8_t *lv = rk ? realloc(s->sw_level, (size_t)off + cap) : NULL;
    if (lv) {
        if (!s->sw_level)
            memset(lv, 0, off);
        s->sw_level = lv;
    }
    uint32_t *pk = lv ? realloc(s->sw_pick, ((size_t)off + cap) * sizeof *s->sw_pick) : NULL;
    if (pk) {
        if (!s->sw_pick)
            memset(pk, 0, off * sizeof *pk);
        s->sw_pick = pk;
    }
    sh->parent = malloc((size_t)cap * sizeof *sh->parent);
    sh->first_child = malloc((size_t)cap * sizeof *sh->first_child);
    sh->next_sib = malloc((size_t)cap * sizeof *sh->next_sib);
    sh->heads_first = malloc((size_t)cap * sizeof *sh->heads_first);
    uint32_t *cur = malloc((size_t)M * sizeof *cur); /* per node: its head's switch at the current level */
    if (!rk || !lv || !pk || !sh->parent || !sh->first_child || !sh->next_sib ||
        !sh->heads_first || !cur) {
        free(cur);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    uint32_t nsw = 0;
    for (uint32_t j = 0; j < H; j++) {
        uint32_t B = 0;
        sh->tree_first[j] = nsw;
        for (uint32_t L = 1; L <= sh->top[j]; L++) {
            /* up-link j mod w_L at every level, or the next whose cables
             * up from every head's side survive (SHARP's aggregation
             * manager builds its trees on working switches and links) */
            uint32_t w = t->up[L], d = j % w;
            for (uint32_t k = 0; t->n_failed && k < w; k++) {
                uint32_t c = (j + k) % w;
                bool ok = true;
                for (uint32_t n = 0; n < M && ok; n++) {
                    uint32_t sl = tc_topo_slot(t, head_rank(sh, n, j));
                    uint32_t idx = L == 1 ? sl : B + t->wprod[L - 1] * (sl / t->span[L - 1]);
                    uint32_t l = t->up_lbase[L] + 2 * (idx * w + c);
                    ok = !tc_topo_link_failed(t, l) && !tc_topo_link_failed(t, l + 1);
                }
                if (ok) {
                    d = c;
                    break;
                }
            }
            B += t->wprod[L - 1] * d;
            uint32_t lev0 = nsw;
            for (uint32_t n = 0; n < M; n++) {
                uint32_t e = head_rank(sh, n, j), a = tc_topo_slot(t, e) / t->span[L], found = UINT32_MAX;
                for (uint32_t i = lev0; i < nsw && found == UINT32_MAX; i++)
                    if (tc_topo_slot(t, s->sw_rank[off + i]) / t->span[L] == a)
                        found = i;
                if (found == UINT32_MAX) {
                    found = nsw++;
                    s->sw_rank[off + found] = e;
                    s->sw_level[off + found] = (uint8_t)L;
                    s->sw_pick[off + found] = B;
                    sh->parent[found] = -1;
                    sh->first_child[found] = sh->next_sib[found] = sh->heads_first[found] = UINT32_MAX;
                }
                if (L == 1) {
                    /* node n's head j sends to this leaf: append n to its heads */
                    sh->leaf[j * M + n] = sh->base + found;
                    sh->heads_next[j * M + n] = UINT32_MAX;
                    uint32_t *at = &sh->heads_first[found];
                    while (*at != UINT32_MAX)
                        at = &sh->heads_next[j * M + *at];
                    *at = n;
                } else if (sh->parent[cur[n]] < 0) {
                    /* the node's switch one level down gets its parent */
                    uint32_t c = cur[n];
                    sh->parent[c] = (int32_t)(sh->base + found);
                    uint32_t *at = &sh->first_child[found];
                    while (*at != UINT32_MAX)
                        at = &sh->next_sib[*at];
                    *at = c;
                }
                cur[n] = found;
            }
        }
    }
    free(cur);
    sh->tree_first[H] = nsw;
    s->nsw = off + nsw;
    /* every tree path must be a route: a check of the layout */
    uint32_t *path = malloc((tc_topo_max_path(t) + 4) * sizeof *path);
    if (!path)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status rc = TC_OK;
    for (uint32_t i = 0; i < nsw && rc == TC_OK; i++) {
        uint32_t v = tc_sched_vertex(s, t, NULL, sh->base + i);
        if (sh->parent[i] >= 0) {
            uint32_t u = tc_sched_vertex(s, t, NULL, (uint32_t)sh->parent[i]);
            uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, v, u, path);
            if (n == 0 || n == TC_NO_ROUTE)
                rc = tc_fail(err, TC_EINTERNAL, "sharp: switch %u has no route to its parent", v);
        }
    }
    free(path);
    return rc;
}

static bool chunk_at(uint32_t step, uint32_t o, uint32_t nch, uint32_t *m)
{
    if (step < o || step - o >= nch)
        return false;
    *m = step - o;
    return true;
}

void tc_sharp_emit(const tc_sched *s, const tc_sharp *sh, uint32_t step, uint32_t nch, uint32_t j, uint32_t o0,
                   uint32_t q, tc_sharp_add add, tc_xfers *x)
{
    uint32_t M = sh->M, T = sh->top[j], p = sh->base, m;
    /* heads to their leaves: the first a leaf hears copies, the others add */
    if (chunk_at(step, o0, nch, &m))
        for (uint32_t n = 0; n < M; n++) {
            uint32_t lf = sh->leaf[j * M + n];
            add(x, s, head_rank(sh, n, j), lf, sh->heads_first[lf - p] != n, q, m, j);
        }
    for (uint32_t i = sh->tree_first[j]; i < sh->tree_first[j + 1]; i++) {
        uint32_t L = s->sw_level[p - s->req.p + i];
        int32_t par = sh->parent[i];
        if (par >= 0 && chunk_at(step, o0 + L, nch, &m)) {
            uint32_t pi = (uint32_t)par - p;
            add(x, s, p + i, (uint32_t)par, sh->first_child[pi] != i, q, m, j);
        }
        if (chunk_at(step, o0 + 2 * T - L, nch, &m)) {
            if (L == 1)
                for (uint32_t n = sh->heads_first[i]; n != UINT32_MAX; n = sh->heads_next[j * M + n])
                    add(x, s, p + i, head_rank(sh, n, j), false, q, m, j);
            else
                for (uint32_t c = sh->first_child[i]; c != UINT32_MAX; c = sh->next_sib[c])
                    add(x, s, p + i, p + c, false, q, m, j);
        }
    }
}

uint32_t tc_sharp_lat_pairs(const tc_sched *s, const tc_sharp *sh, uint32_t *lp)
{
    (void)s;
    uint32_t np = 0, p = sh->base;
    lp[0] = head_rank(sh, 0, 0);
    lp[1] = sh->leaf[0];
    np++;
    for (uint32_t i = sh->leaf[0] - p; sh->parent[i] >= 0; i = (uint32_t)sh->parent[i] - p, np++)
        lp[2 * np] = p + i, lp[2 * np + 1] = (uint32_t)sh->parent[i];
    return np;
}

tc_status tc_pipeline_phases(tc_sched *s, uint32_t nch, uint32_t stages, double xb, const char *label, tc_err *err)
{
    uint32_t total = nch + stages - 1, parts = tc_sched_parts(s);
    size_t nb = 0;
    uint32_t *b = malloc((3 * (size_t)stages + 2) * sizeof *b);
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *fo = calloc(parts, sizeof *fo), *fi = calloc(parts, sizeof *fi);
    tc_status rc = TC_OK;
    if (!b || !fo || !fi) {
        rc = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto out;
    }
    b[nb++] = 0;
    b[nb++] = total;
    for (uint32_t o = 0; o < stages; o++) {
        uint32_t c3[3] = {o, o + 1, o + nch};
        for (int k = 0; k < 3; k++)
            if (c3[k] < total)
                b[nb++] = c3[k];
    }
    qsort(b, nb, sizeof *b, tc_cmp_u32);
    for (size_t i = 0; i + 1 < nb && rc == TC_OK; i++) {
        if (b[i] == b[i + 1])
            continue;
        tc_xfers_clear(&x);
        if (s->emit(s, b[i], &x) != TC_OK) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        memset(fo, 0, parts * sizeof *fo);
        memset(fi, 0, parts * sizeof *fi);
        uint32_t mo = 0, mi = 0;
        for (size_t k = 0; k < x.n; k++) {
            uint32_t a = ++fo[x.v[k].src], c = ++fi[x.v[k].dst];
            mo = a > mo ? a : mo;
            mi = c > mi ? c : mi;
        }
        tc_phase *ph = tc_sched_add_phase(s, b[i + 1] - b[i], TC_PAT_GENERIC, 0, x.n ? xb : 0, label);
        if (!ph) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        tc_phase_set_fan(ph, mo, mi, xb);
    }
out:
    free(b), free(fo), free(fi);
    tc_xfers_free(&x);
    return rc;
}

/* ---- the schedule ---- */

typedef struct cn_state {
    bool direct;
    tc_op op;            /* allreduce; or (direct) allgather, reducescatter */
    uint32_t C, H, G, M, nch, L, per_lane;
    uint32_t D;          /* fabric levels of the tallest tree a lane uses */
    tc_sharp sh;
} cn_state;

static void cn_state_free(void *p)
{
    cn_state *st = p;
    if (!st)
        return;
    tc_sharp_free(&st->sh);
    free(st);
}

static void add_blk(tc_xfers *x, const tc_sched *s, uint32_t src, uint32_t dst, bool red, uint32_t q, uint32_t m,
                    uint32_t j)
{
    const cn_state *st = s->state;
    size_t at = tc_xfers_add(x, src, dst, s->blk_bytes * st->per_lane, red);
    if (!x->oom) {
        x->v[at].lane = (uint16_t)q;
        x->v[at].piped = m > 0;
    }
    for (uint32_t k = q; x->with_data && k < st->C; k += st->L) {
        uint32_t blk = st->direct ? (k * st->nch + m) * st->H + j : k * st->nch + m;
        tc_xfers_seg(x, blk, blk, 1);
    }
}

static tc_status emit_collnet(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const cn_state *st = s->state;
    uint32_t G = st->G, M = st->M, H = st->H, n = st->nch, m;
    for (uint32_t q = 0; q < st->L; q++) {
        if (!st->direct) {
            /* chain of lane q: positions 0 (its head) .. G-1 */
            uint32_t j = q % H, h0 = j * (G / H), T = st->sh.top[j];
            for (uint32_t node = 0; node < M; node++) {
                uint32_t base = node * G;
                for (uint32_t i = G - 1; i >= 1; i--) /* up: position i to i - 1 at offset G - 1 - i */
                    if (chunk_at(step, G - 1 - i, n, &m))
                        add_blk(x, s, base + (h0 + i) % G, base + (h0 + i - 1) % G, true, q, m, j);
                for (uint32_t i = 0; i + 1 < G; i++) /* down: i to i + 1 after the fabric */
                    if (chunk_at(step, G - 1 + 2 * T + i, n, &m))
                        add_blk(x, s, base + (h0 + i) % G, base + (h0 + i + 1) % G, false, q, m, j);
            }
            tc_sharp_emit(s, &st->sh, step, n, j, G - 1, q, add_blk, x);
            continue;
        }
        /* direct: every GPU scatters piece j to head j, the heads go
         * through tree j, then send the result to their node's GPUs */
        for (uint32_t j = 0; j < H; j++) {
            uint32_t T = st->sh.top[j];
            for (uint32_t node = 0; node < M; node++) {
                uint32_t hr = head_rank(&st->sh, node, j), base = node * G;
                if (chunk_at(step, 0, n, &m))
                    for (uint32_t g = 0; g < G; g++)
                        if (base + g != hr)
                            add_blk(x, s, base + g, hr, true, q, m, j);
                if (chunk_at(step, 1 + 2 * T, n, &m))
                    for (uint32_t g = 0; g < G; g++)
                        if (base + g != hr)
                            add_blk(x, s, hr, base + g, false, q, m, j);
            }
            tc_sharp_emit(s, &st->sh, step, n, j, 1, q, add_blk, x);
        }
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

/* ---- CollNetDirect's all-gather and reduce-scatter ----
 *
 * NCCL v2.21.5-1 (docs/MODEL.md, "CollNetDirect's all-gather and
 * reduce-scatter"): every GPU is a head (tuning.cc:190-198 disables them
 * unless a node has as many CollNet heads as GPUs), head j of every node
 * joins rail j's CollNet communicator (init.cc:587-608: dense rank node x
 * nRails + rail). Rail j's buffer is the concatenation, over the nodes, of
 * the pieces of size sizePerRank = S / p of the ranks (n, j); the channels
 * walk it in windows of a chunk, channel k taking window l C + k in loop l
 * (all_gather.h:188-190, 267-275; reduce_scatter.h:180-182, 252, 276, 301;
 * coll_net.cc:630-643), so a window belongs to one node, or straddles two,
 * or spans several when sizePerRank is below a chunk.
 *  - All-gather (all_gather.h:164-322, the non-registered path that
 *    nccl-tests runs): head (n, j) sends the part of the window that is
 *    its own piece to the network (phase 1, :263-275: prims.send of
 *    max(0, end - beg) bytes: nothing when the window holds none of it);
 *    the network's iallgather (coll_net.cc:767-798) returns the whole
 *    window to every head of the rail; head j writes it to its output and
 *    sends it to the node's other G - 1 GPUs (phase 2, :290-300,
 *    Scatterer<true>, direct->heads + 1), which write it (phase 3,
 *    :308-318).
 *  - Reduce-scatter (reduce_scatter.h:158-314): every GPU sends each
 *    other head j the window of rail j's buffer taken from its input
 *    (phase 1, :248-260, Scatterer<true>); head j adds its own input and
 *    the G - 1 windows received and sends the node's sum to the network
 *    (phase 2, :272-283); the network's ireducescatter (coll_net.cc:
 *    799-832) reduces over the nodes and returns to each head the part of
 *    the window that is its own piece (phase 3, :297-310).
 * In the fabric, rail j's heads use SHARP tree j (tc_sharp, as the
 * all-reduce): all-gather, each switch forwards up the pieces of its
 * subtree's heads and the root multicasts the window down the tree to
 * every head; reduce-scatter, each switch adds its children's windows up
 * to the root, which multicasts the sum down to the leaves, and a leaf
 * gives each head only its own piece (the plugin's receive buffer is the
 * piece: coll_net.cc:657, 825-829). That SHARP runs NCCL's iallgather and
 * ireducescatter so is an assumption (the plugin's code is not NCCL's).
 *
 * Chunks and channels are the all-reduce's for the same bytes
 * (enqueue.cc:1574-1585, 1731-1735, nBytes = S for both, info.h:84); a
 * loop of the C channels moves C windows, the schedule's chunk m: the
 * rail buffer (S / G) cut into nch = ceil(S / (G C chunk)) equal chunks,
 * each a piece's nch-th, so a rank's piece is nch blocks and chunk m is
 * rail blocks [m M, m M + M) (rail block i: node i / nch, its block i mod
 * nch). Stages (one hop each; T the tree's root level):
 *   all-gather:     heads to leaves 0, level L up L, down 2T - L,
 *                   heads to their node's GPUs 2T;
 *   reduce-scatter: GPUs to heads 0, heads to leaves 1, level L up 1 + L,
 *                   down 1 + 2T - L (leaves to heads 2T). */

/* Chunk m's blocks of rail j that node n holds: their count, the first's
 * block index in *g0. */
static uint32_t agrs_node_blocks(const cn_state *st, uint32_t m, uint32_t n, uint32_t j, uint32_t *g0)
{
    uint64_t c = st->nch, lo = (uint64_t)m * st->M, hi = lo + st->M;
    uint64_t a = lo > n * c ? lo : n * c, b = hi < (n + 1) * c ? hi : (n + 1) * c;
    if (a >= b)
        return 0;
    *g0 = (uint32_t)(((uint64_t)n * st->G + j) * c + (a - n * c));
    return (uint32_t)(b - a);
}

/* Node n's switch at level L in tree j (an index into the trees' switches). */
static uint32_t agrs_anc(const tc_sched *s, const tc_sharp *sh, uint32_t j, uint32_t n, uint32_t L)
{
    uint32_t i = sh->leaf[j * sh->M + n] - sh->base, off = sh->base - s->req.p;
    while (s->sw_level[off + i] < L && sh->parent[i] >= 0)
        i = (uint32_t)sh->parent[i] - sh->base;
    return i;
}

/* Whose blocks a transfer carries: every node's, node arg's, or those of
 * the nodes below switch arg (at level L). */
enum { AGRS_ALL, AGRS_NODE, AGRS_BELOW };

/* One transfer of chunk m of rail j, with the blocks that who selects
 * (none: no transfer). */
static void agrs_add(tc_xfers *x, const tc_sched *s, uint32_t src, uint32_t dst, bool red, uint32_t m, uint32_t j,
                     int who, uint32_t arg, uint32_t L)
{
    const cn_state *st = s->state;
    uint64_t lo = (uint64_t)m * st->M;
    uint32_t n0 = (uint32_t)(lo / st->nch), n1 = (uint32_t)((lo + st->M - 1) / st->nch), cnt = 0, g0;
    if (who == AGRS_NODE)
        n0 = n1 = arg;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t n = n0; n <= n1; n++) {
            if (who == AGRS_BELOW && agrs_anc(s, &st->sh, j, n, L) != arg)
                continue;
            uint32_t k = agrs_node_blocks(st, m, n, j, &g0);
            if (pass == 0)
                cnt += k;
            else if (k)
                tc_xfers_seg(x, g0, g0, k);
        }
        if (pass == 0) {
            if (!cnt)
                return;
            size_t at = tc_xfers_add(x, src, dst, s->blk_bytes * cnt, red);
            if (x->oom)
                return;
            x->v[at].piped = m > 0;
        }
    }
}

static tc_status emit_agrs(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const cn_state *st = s->state;
    const tc_sharp *sh = &st->sh;
    bool rs = st->op == TC_OP_REDUCESCATTER;
    uint32_t G = st->G, M = st->M, n = st->nch, p = sh->base, off = p - s->req.p, o0 = rs ? 1 : 0, m;
    for (uint32_t j = 0; j < st->H; j++) {
        uint32_t T = sh->top[j];
        if (rs && chunk_at(step, 0, n, &m)) /* every GPU to head j: its input's window of rail j */
            for (uint32_t node = 0; node < M; node++)
                for (uint32_t g = 0; g < G; g++)
                    if (g != j)
                        agrs_add(x, s, node * G + g, head_rank(sh, node, j), true, m, j, AGRS_ALL, 0, 0);
        if (chunk_at(step, o0, n, &m)) /* heads to their leaves */
            for (uint32_t node = 0; node < M; node++) {
                uint32_t lf = sh->leaf[j * M + node];
                if (rs)
                    agrs_add(x, s, head_rank(sh, node, j), lf, sh->heads_first[lf - p] != node, m, j, AGRS_ALL, 0, 0);
                else
                    agrs_add(x, s, head_rank(sh, node, j), lf, false, m, j, AGRS_NODE, node, 0);
            }
        for (uint32_t i = sh->tree_first[j]; i < sh->tree_first[j + 1]; i++) {
            uint32_t L = s->sw_level[off + i];
            int32_t par = sh->parent[i];
            if (par >= 0 && chunk_at(step, o0 + L, n, &m)) {
                if (rs)
                    agrs_add(x, s, p + i, (uint32_t)par, sh->first_child[(uint32_t)par - p] != i, m, j, AGRS_ALL, 0, 0);
                else
                    agrs_add(x, s, p + i, (uint32_t)par, false, m, j, AGRS_BELOW, i, L);
            }
            if (chunk_at(step, o0 + 2 * T - L, n, &m)) {
                if (L == 1)
                    for (uint32_t h = sh->heads_first[i]; h != UINT32_MAX; h = sh->heads_next[j * M + h])
                        agrs_add(x, s, p + i, head_rank(sh, h, j), false, m, j, rs ? AGRS_NODE : AGRS_ALL, h, 0);
                else
                    for (uint32_t c = sh->first_child[i]; c != UINT32_MAX; c = sh->next_sib[c])
                        agrs_add(x, s, p + i, p + c, false, m, j, AGRS_ALL, 0, 0);
            }
        }
        if (!rs && chunk_at(step, 2 * T, n, &m)) /* head j to its node's other GPUs */
            for (uint32_t node = 0; node < M; node++)
                for (uint32_t g = 0; g < G; g++)
                    if (g != j)
                        agrs_add(x, s, head_rank(sh, node, j), node * G + g, false, m, j, AGRS_ALL, 0, 0);
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

/* The phases: a chunk's traffic depends on which nodes hold its blocks
 * (at the steps where heads send their own pieces up, or receive them
 * down), so a phase ends where a stage starts, pipes its second chunk or
 * ends, and where the chunk a stage moves changes its nodes (first and
 * last node, and their block counts); each phase's figures from its first
 * step's transfers. */
static tc_status agrs_phases(tc_sched *s, uint32_t stages, tc_err *err)
{
    const cn_state *st = s->state;
    uint32_t nch = st->nch, total = nch + stages - 1, parts = tc_sched_parts(s), nm = 0;
    uint32_t *mb = malloc(((size_t)nch + 1) * sizeof *mb);
    if (!mb)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t key[4] = {0}, prev[4] = {0};
    for (uint32_t m = 0; m < nch; m++) {
        uint64_t lo = (uint64_t)m * st->M;
        uint32_t g0;
        key[0] = (uint32_t)(lo / nch), key[1] = (uint32_t)((lo + st->M - 1) / nch);
        key[2] = agrs_node_blocks(st, m, key[0], 0, &g0), key[3] = agrs_node_blocks(st, m, key[1], 0, &g0);
        if (m > 0 && memcmp(key, prev, sizeof key))
            mb[nm++] = m;
        memcpy(prev, key, sizeof key);
    }
    size_t nb = 0;
    uint32_t *b = malloc((2 + (size_t)stages * (3 + nm)) * sizeof *b);
    uint32_t *fo = calloc(parts, sizeof *fo), *fi = calloc(parts, sizeof *fi);
    double *bo = calloc(parts, sizeof *bo), *bi = calloc(parts, sizeof *bi);
    tc_xfers x;
    tc_xfers_init(&x, false);
    tc_status rc = TC_OK;
    if (!b || !fo || !fi || !bo || !bi) {
        rc = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto out;
    }
    b[nb++] = 0;
    b[nb++] = total;
    for (uint32_t o = 0; o < stages; o++) {
        uint32_t c3[3] = {o, o + 1, o + nch};
        for (int k = 0; k < 3; k++)
            if (c3[k] < total)
                b[nb++] = c3[k];
        for (uint32_t k = 0; k < nm; k++)
            if (o + mb[k] < total)
                b[nb++] = o + mb[k];
    }
    qsort(b, nb, sizeof *b, tc_cmp_u32);
    for (size_t i = 0; i + 1 < nb && rc == TC_OK; i++) {
        if (b[i] == b[i + 1])
            continue;
        tc_xfers_clear(&x);
        if (s->emit(s, b[i], &x) != TC_OK) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        uint32_t mo = 0, mi = 0;
        double xb = 0, ro = 0, ri = 0;
        for (size_t k = 0; k < x.n; k++) {
            const tc_xfer *v = &x.v[k];
            mo = ++fo[v->src] > mo ? fo[v->src] : mo;
            mi = ++fi[v->dst] > mi ? fi[v->dst] : mi;
            bo[v->src] += v->bytes, bi[v->dst] += v->bytes;
            ro = fmax(ro, bo[v->src]), ri = fmax(ri, bi[v->dst]);
            xb = fmax(xb, v->bytes);
        }
        for (size_t k = 0; k < x.n; k++) {
            fo[x.v[k].src] = fi[x.v[k].dst] = 0;
            bo[x.v[k].src] = bi[x.v[k].dst] = 0;
        }
        tc_phase *ph = tc_sched_add_phase(s, b[i + 1] - b[i], TC_PAT_GENERIC, 0, xb,
                                          st->op == TC_OP_ALLGATHER ? "collnet direct all-gather"
                                                                    : "collnet direct reduce-scatter");
        if (!ph) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        ph->fanout = mo, ph->fanin = mi;
        ph->rank_bytes = ro, ph->rank_bytes_in = ri;
    }
out:
    free(mb), free(b), free(fo), free(fi), free(bo), free(bi);
    tc_xfers_free(&x);
    return rc;
}

static tc_status agrs_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    uint32_t G, M, H;
    cn_shape(req->p, t, &G, &M, &H);
    uint32_t C = cn_channels(req, cn_channels_full(req, t, G), H, true);
    double Q = cn_chunk(req->bytes, C, H, G, true);
    double nch = ceil(req->bytes / G / (C * Q));
    if (nch < 1)
        nch = 1;
    if ((double)req->p * nch > UINT32_MAX / 2)
        return tc_fail(err, TC_EINVAL, "nccl-collnet-direct: %.0f blocks are too many (at most 2^31)", req->p * nch);
    cn_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = cn_state_free;
    st->direct = true;
    st->op = req->op;
    st->C = C, st->H = H, st->G = G, st->M = M, st->nch = (uint32_t)nch;
    st->L = 1, st->per_lane = C;
    tc_status rc = tc_sharp_build(s, t, &st->sh, H, M, G, err);
    if (rc != TC_OK)
        return rc;
    st->D = st->sh.D;
    s->nblk = s->nslots = req->p * st->nch;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_agrs;
    s->channels = C;
    s->lanes = 1;
    s->nccl_impl = TC_ALGO_NCCL_COLLNET_DIRECT;
    /* Costs as the all-reduce's (NCCL's latency is the same,
     * tuning.cc:253-255), with the measured corrective ratio of
     * tuning.cc:199-202 (0.85 at 8 GPUs per node, 0.95 at 1; no
     * architecture condition) as wire bytes. */
    double w = (G - 1) / 7.0;
    s->proto = TC_PROTO_SIMPLE;
    s->base_s = cn_lat_us(G, true) * 1e-6;
    s->lat_intra_s = s->lat_inter_s = 0;
    s->wire = 1 / (w * CN_AGRS_EFF8 + (1 - w) * CN_AGRS_EFF1);
    s->rate_cap_Bps = 0;
    s->credit_steps = 1;
    s->credit_steps_inter = 1;
    /* The latency path: an NVLink hop of node 0, then tree 0 from node
     * 0's head to the root (counted there and back). */
    s->lat_pairs = malloc((2 * ((size_t)st->D + 1) + 2) * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->lat_pairs[0] = 1, s->lat_pairs[1] = 0;
    s->nlat_pairs = 1 + tc_sharp_lat_pairs(s, &st->sh, s->lat_pairs + 2);
    return agrs_phases(s, 2 * st->D + 1, err);
}

static tc_status cn_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, bool direct, tc_err *err)
{
    if (direct && req->op != TC_OP_ALLREDUCE)
        return agrs_build(req, t, s, err);
    uint32_t G, M, H;
    cn_shape(req->p, t, &G, &M, &H);
    uint32_t C = cn_channels(req, cn_channels_full(req, t, G), H, direct);
    double Q = cn_chunk(req->bytes, C, H, G, direct), per = direct ? (double)C * H : C;
    double nch = ceil(req->bytes / (per * Q));
    if (nch < 1)
        nch = 1;
    if (per * nch > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, direct ? "CollNetDirect" : "CollNetChain", TC_PROTO_SIMPLE, per, Q, err);
    cn_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = cn_state_free;
    st->direct = direct;
    st->op = TC_OP_ALLREDUCE;
    st->C = C, st->H = H, st->G = G, st->M = M, st->nch = (uint32_t)nch;
    /* lanes: a chain's channels with the same head; all channels of direct */
    st->L = direct ? 1 : C % H == 0 ? H : C;
    st->per_lane = C / st->L;
    tc_status rc = tc_sharp_build(s, t, &st->sh, H, M, G, err);
    if (rc != TC_OK)
        return rc;
    /* the tallest tree a lane uses (with fewer chain channels than heads
     * some trees carry nothing) */
    st->D = 0;
    for (uint32_t q = 0; q < (direct ? H : st->L); q++)
        if (st->sh.top[q % H] > st->D)
            st->D = st->sh.top[q % H];
    s->nblk = s->nslots = (uint32_t)(per * nch);
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_collnet;
    s->channels = C;
    s->lanes = st->L;
    s->nccl_impl = direct ? TC_ALGO_NCCL_COLLNET_DIRECT : TC_ALGO_NCCL_COLLNET_CHAIN;
    /* Costs: Simple only (tuning.cc:186-187); NCCL's latency once
     * (tuning.cc:253-256), no step latency of its own; CollNetDirect's
     * measured 0.85 on Hopper and later (tuning.cc:208) as wire bytes; one
     * chunk in flight per connection in flow mode, as for NVLS
     * (nccl_nvls.c): the flow simulator would share a link among a
     * connection's chunks in flight, so that every chunk of a burst ends
     * at the burst's end and the round trip through the switches idles the
     * stages that wait on it (twice the time on one leaf of 4 GPUs). */
    s->proto = TC_PROTO_SIMPLE;
    s->base_s = cn_lat_us(G, direct) * 1e-6;
    s->lat_intra_s = s->lat_inter_s = 0;
    s->wire = direct && t->arch != TC_ARCH_VOLTA && t->arch != TC_ARCH_AMPERE ? 1 / CN_HOPPER_EFF : 1;
    s->rate_cap_Bps = 0;
    s->credit_steps = 1;
    s->credit_steps_inter = 1;
    /* The latency path of tree 0 (lane 0): node 0's farthest GPU to its
     * head, the head to its leaf, up to the root (counted there and back). */
    s->lat_pairs = malloc((2 * ((size_t)G + st->D) + 2) * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t *lp = s->lat_pairs, np = 0;
    if (direct) {
        if (G > 1) {
            lp[0] = 1, lp[1] = 0;
            np = 1;
        }
    } else {
        for (uint32_t i = G - 1; i >= 1; i--, np++)
            lp[2 * np] = i, lp[2 * np + 1] = i - 1;
    }
    s->nlat_pairs = np + tc_sharp_lat_pairs(s, &st->sh, lp + 2 * np);
    uint32_t stages = direct ? 2 + 2 * st->D : 2 * (G - 1) + 2 * st->D;
    return tc_pipeline_phases(s, st->nch, stages, s->blk_bytes * st->per_lane, direct ? "collnet direct" : "collnet chain",
                              err);
}

static tc_status chain_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    return cn_build(req, t, s, false, err);
}

static tc_status direct_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    return cn_build(req, t, s, true, err);
}

const tc_algo_impl tc_impl_nccl_collnet_chain = {chain_valid, chain_build};
const tc_algo_impl tc_impl_nccl_collnet_direct = {direct_valid, direct_build};
