/*
 * nccl_a2a.c - NCCL's all-to-all as nccl-tests runs it (nccl-a2a): one
 * group of ncclSend and ncclRecv to every peer, self included
 * (nccl-tests v2.13.10 src/alltoall.cu:57-62), scheduled as NVIDIA/nccl
 * v2.21.5-1 (commit ab2b89c4) schedules point-to-point work
 * (docs/MODEL.md, "NCCL's all-to-all").
 *
 * Peer order (src/init.cc:1299-1335): step i of p2pOrderSteps = nNodes x
 * ALIGN_POWER(G, 8) pairs a send peer and a receive peer: node deltas 0,
 * +1, -1, +2, -2, ... (no delta twice), and inside each delta the local
 * ranks lr + 0, 1, ... (mod the aligned step count; an index beyond the
 * node's G GPUs is no peer). Rank (node, lr) sends at step i to node +
 * delta, local lr + step, and receives from node - delta, local lr - step:
 * every step is a permutation, the first one the rank itself (a local
 * copy).
 *
 * Channels and chunks (src/enqueue.cc:868-983, src/graph/paths.cc:
 * 692-774): a send of B = S/p bytes is cut into pieces of
 * calcP2pChunkSize(B, nChannelsMin, nChannelsPerPeer, minSize, maxSize)
 * (stepSize 128 KiB across nodes, 512 KiB over NVLink inside one,
 * src/init.cc:549-569; minSize stepSize/2 or /8, maxSize stepSize or 32
 * stepSize); piece j goes on channel (p2pChannels[base mod p2pnChannels] +
 * j mod nChannelsPerPeer) mod p2pnChannels, base = delta + step/8 across
 * nodes, step on one node (src/include/channel.h:15-46), p2pChannels the
 * bit-mirrored channel order (paths.cc:772-774). The protocol: LL for a
 * piece of at most 16 KiB (NCCL_P2P_LL_THRESHOLD, enqueue.cc:507-529),
 * else Simple.
 *
 * The schedule: a step per peer-order step (the ones that send), in NCCL's
 * order; in it every rank sends its block(s) for that peer, one transfer
 * per channel it uses, each channel a lane. The flow evaluator runs the
 * lanes apart and lets a sender run 8 steps (peers) ahead of its receivers
 * per lane (NCCL fuses up to 8 sends and 8 receives per channel and work
 * batch, NCCL_MAX_WORK_ELEMENTS_P2P = 16: enqueue.cc:947, device.h:279).
 *
 * Simplified (docs/MODEL.md): the pieces one channel carries for a peer are
 * one transfer (NCCL sends them one after another, pipelined through its
 * FIFO), of equal size (NCCL's last piece is smaller); the channels per
 * peer assume an NVSwitch inside nodes (2 x NVLinks per GPU, above the
 * p2p channel count) and one NIC's worth across nodes; the latency is
 * NCCL's ring base latency plus one hop, once (NCCL's tuning model has no
 * point-to-point entry); NCCL_PROTO is not applied to point-to-point work.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

#define P2P_LL_THRESHOLD 16384.0 /* NCCL_P2P_LL_THRESHOLD (enqueue.cc:507) */
#define P2P_GROUP 8              /* NCCL_MAX_WORK_ELEMENTS_P2P / 2 (device.h:279) */

typedef struct a2a_state {
    uint32_t G, N, steps;   /* GPUs per node, nodes, local steps per delta (ALIGN_POWER(G, 8)) */
    uint32_t c;             /* blocks (channels) per peer */
    uint32_t nch, cpp;      /* p2pnChannels, p2pnChannelsPerPeer */
    uint32_t *entry;        /* per schedule step: its peer-order entry (delta x steps + local step) */
    uint32_t *delta;        /* per delta index: the node delta */
    uint32_t ndelta;
} a2a_state;

static void a2a_state_free(void *p)
{
    a2a_state *st = p;
    if (!st)
        return;
    free(st->entry), free(st->delta);
    free(st);
}

static uint32_t next_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static uint32_t mirror_bits(uint32_t v, uint32_t pow2)
{
    uint32_t m = 0;
    for (uint32_t b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (v & b)
            m |= mb;
    return m;
}

/* ALIGN_POWER(x, y) (src/include/align.h). */
static uint32_t align_power(uint32_t x, uint32_t y)
{
    return x > y ? (x + y - 1) / y * y : y / (y / x);
}

static uint32_t node_size(uint32_t p, const tc_topo *t)
{
    uint32_t G = t && t->node_size > 1 ? t->node_size : 1;
    return G > p ? p : G;
}

static bool a2a_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    if (op != TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "nccl-a2a implements alltoall only (nccl-tests' grouped ncclSend/ncclRecv)");
        return false;
    }
    uint32_t G = t && t->node_size > 1 ? t->node_size : 1;
    if (p > G && p % G) {
        tc_fail(err, TC_EINVAL, "nccl-a2a needs whole nodes: p a multiple of the node size %u", G);
        return false;
    }
    return true;
}

/* NCCL v2.21.5-1's channels for point-to-point work (paths.cc:692-774). */
static void p2p_channels(const tc_coll_req *req, const tc_topo *t, uint32_t N, uint32_t *nch, uint32_t *cpp)
{
    uint32_t C = tc_nccl_channels_full(req, t);
    uint32_t P = next_pow2(C > 32 ? 32 : C); /* p2pnChannels (MAXCHANNELS 32) */
    uint32_t m = P;                          /* local NVLink peers: 2 x NVLinks, at least P (assumed NVSwitch) */
    if (N > 1) {
        uint32_t net = 2; /* NCCL_NCHANNELS_PER_NET_PEER -1: 2, fewer at scale (paths.cc:716-726) */
        while (net * req->p > P * 4 && net > 1)
            net /= 2;
        m = m < net ? m : net;
    }
    *nch = P;
    *cpp = next_pow2(m);
}

/* calcP2pChunkSize (enqueue.cc:872-880). */
static double p2p_chunk(double total, uint32_t minch, uint32_t maxch, double minsz, double maxsz)
{
    double size = fmax(minsz, ceil(total / minch));
    uint32_t n = minch;
    while (size > maxsz && n <= maxch / 2) {
        n *= 2;
        size = ceil(total / n);
    }
    return ceil(size / minsz) * minsz;
}

/* The protocol NCCL gives a per-peer size B (bytes). */
static tc_proto a2a_proto(double B)
{
    return B <= P2P_LL_THRESHOLD ? TC_PROTO_LL : TC_PROTO_SIMPLE;
}

static double a2a_latency_us(tc_proto pr, uint32_t N)
{
    /* baseLat[Ring] and one hop of hwLat[NVLINK or NET][Ring]
     * (src/graph/tuning.cc:56-77): LL 6.6 + 0.6 / 2.7, Simple 8.4 + 3.4 / 14 */
    bool ll = pr == TC_PROTO_LL;
    return (ll ? 6.6 : 8.4) + (N > 1 ? (ll ? 2.7 : 14.0) : (ll ? 0.6 : 3.4));
}

double tc_nccl_a2a_time_us(const tc_coll_req *req, const tc_topo *t, tc_proto *proto)
{
    uint32_t p = req->p, G = node_size(p, t), N = p / G;
    tc_proto pr = req->proto ? req->proto : a2a_proto(req->bytes / p);
    if (proto)
        *proto = pr;
    if (p < 2 || !t)
        return 0;
    tc_topo_info in;
    tc_topo_get_info(t, &in);
    double bw = (N > 1 || t->node_size <= 1 ? in.injection_Bps : t->node_bw) / 1e9;
    double wire = pr == TC_PROTO_LL ? 2 : 1;
    return a2a_latency_us(pr, N) + wire * req->bytes * (p - 1) / p / (1000 * bw);
}

/* Rank r's send peer at entry e (delta index e / steps, local step
 * e % steps), or UINT32_MAX; *base its channel base. */
static uint32_t send_peer(const a2a_state *st, uint32_t r, uint32_t e, uint32_t *base)
{
    uint32_t G = st->G, N = st->N, node = r / G, lr = r % G, delta = st->delta[e / st->steps],
             ls = e % st->steps, pl = (lr + ls) % st->steps;
    if (pl >= G)
        return UINT32_MAX;
    uint32_t step = (G + pl - lr) % G; /* ncclChannelComputeBase's step, modulo maxLocalRanks */
    *base = N > 1 ? delta + step / P2P_GROUP : step;
    return ((node + delta) % N) * G + pl;
}

static tc_status emit_a2a(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const a2a_state *st = s->state;
    uint32_t p = s->req.p, nb = s->nblk, c = st->c;
    if (step == 0 && x->with_data)
        for (uint32_t r = 0; r < p; r++) { /* the rank's own block: delta 0, step 0 */
            tc_xfers_add(x, r, r, 0, false);
            tc_xfers_seg(x, r * c, nb + r * c, c);
        }
    if (p == 1)
        return TC_OK;
    uint32_t e = st->entry[step];
    for (uint32_t r = 0; r < p; r++) {
        uint32_t base, q = send_peer(st, r, e, &base);
        if (q == UINT32_MAX || q == r)
            continue;
        uint32_t first = mirror_bits(base % st->nch, st->nch);
        for (uint32_t j = 0; j < c; j++) {
            size_t at = tc_xfers_add(x, r, q, s->blk_bytes, false);
            if (!x->oom) {
                x->v[at].lane = (uint16_t)((first + j) % st->nch);
                x->v[at].piped = 1; /* the latency is base_s, once */
            }
            tc_xfers_seg(x, q * c + j, nb + r * c + j, 1);
        }
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status a2a_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    uint32_t p = req->p, G = node_size(p, t), N = p / G;
    a2a_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = a2a_state_free;
    st->G = G, st->N = N, st->steps = align_power(G, P2P_GROUP);
    p2p_channels(req, t, N, &st->nch, &st->cpp);
    /* nChannelsMin: one channel per operation when the peers fill them */
    uint32_t minch = st->cpp;
    while (minch * p > st->nch && minch > 1)
        minch /= 2;
    double step = N > 1 ? 131072.0 : 524288.0, buf = (req->buffsize > 0 ? req->buffsize : 4194304.0) / 8;
    if (step > buf)
        step = buf;
    double B = req->bytes / p, minsz = N > 1 ? step / 2 : step / 8, maxsz = N > 1 ? step : 32 * step;
    double piece = p2p_chunk(B, minch, st->cpp, minsz, maxsz), pieces = ceil(B / piece);
    if (pieces < 1)
        pieces = 1;
    st->c = pieces < st->cpp ? (uint32_t)pieces : st->cpp;
    if ((double)p * st->c * 2 > UINT32_MAX / 2)
        return tc_fail(err, TC_EINVAL, "nccl-a2a: %u ranks are too many", p);
    /* the node deltas in NCCL's order (init.cc:1313-1334) */
    st->delta = malloc((size_t)N * sizeof *st->delta);
    st->entry = malloc((size_t)N * st->steps * sizeof *st->entry);
    if (!st->delta || !st->entry)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t d = 0; d <= N / 4; d++) {
        uint32_t dl[4] = {d, (N - d) % N, N / 2 - d, (N - (N / 2 - d)) % N};
        for (int idx = 0; idx < 4; idx++) {
            if ((idx == 1 && dl[1] == dl[0]) || (idx == 2 && dl[2] == dl[0]) ||
                (idx == 3 && (dl[3] == dl[2] || dl[3] == dl[1])))
                continue;
            st->delta[st->ndelta++] = dl[idx];
        }
    }
    if (st->ndelta != N)
        return tc_fail(err, TC_EINTERNAL, "nccl-a2a: %u node deltas for %u nodes", st->ndelta, N);
    s->nblk = p * st->c;
    s->nslots = 2 * s->nblk;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_a2a;
    s->channels = st->nch;
    s->lanes = st->nch;
    s->nccl_impl = TC_ALGO_NCCL_A2A;
    s->proto = req->proto ? req->proto : a2a_proto(B);
    s->base_s = p > 1 ? a2a_latency_us(s->proto, N) * 1e-6 : 0;
    s->lat_intra_s = s->lat_inter_s = 0;
    s->wire = tc_nccl_wire_factor(s->proto);
    s->rate_cap_Bps = 0;
    s->credit_steps = s->credit_steps_inter = P2P_GROUP;
    s->lat_pairs = malloc(2 * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->nlat_pairs = 0;
    if (p == 1) {
        st->entry[0] = 0;
        tc_status cst = tc_sched_add_copy_phase(s, err);
        if (cst)
            return cst;
        return TC_OK;
    }
    /* a step per entry where some rank sends to another */
    uint32_t nst = 0;
    for (uint32_t e = 0; e < N * st->steps; e++) {
        bool any = false;
        for (uint32_t lr = 0; lr < G && !any; lr++) {
            uint32_t base, q = send_peer(st, lr, e, &base);
            any = q != UINT32_MAX && q != lr;
        }
        if (!any)
            continue;
        st->entry[nst++] = e;
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, s->blk_bytes, "p2p peer step");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        ph->fanout = ph->fanin = st->c;
        ph->rank_bytes = ph->rank_bytes_in = st->c * s->blk_bytes;
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_nccl_a2a = {a2a_valid, a2a_build};
