/*
 * nccl_a2a.c - NCCL's grouped point-to-point as nccl-tests runs it
 * (nccl-a2a): all-to-all, and sendrecv (one peer: "sendrecv" below). All-to-all: one
 * group of ncclSend and ncclRecv to every peer, self included
 * (nccl-tests v2.13.10 src/alltoall.cu:57-62), scheduled as NVIDIA/nccl
 * v2.21.5-1 (commit ab2b89c4) schedules point-to-point work
 * (docs/MODEL.md, "NCCL's all-to-all").
 *
 * Peer order (src/init.cc:1299-1335): step i of p2pOrderSteps = nNodes x
 * ALIGN_POWER(G, 8) pairs a send peer and a receive peer: node deltas in
 * groups d, -d, N/2 - d, -(N/2 - d) for d = 0 .. N/4, so 0, N/2, 1, -1,
 * N/2 - 1, -(N/2 - 1), 2, ... (no delta twice; the source's comment says
 * "delta 0, +1, -1, +2, -2", its loop does this), and inside each delta the local
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
 * Latency (a2a_works): NCCL puts the pieces into works, up to 8 sends and 8
 * receives each, a new one for every group of 8 peer-order entries
 * (enqueue.cc:141-174, 947), and a channel runs its works one after
 * another (src/device/common.h:181-203), each waiting a hop for its
 * receives. The latency is the base once and a hop per work along the
 * longest chain of works one channel runs (lat_pairs, lat_once); in flow
 * the first send to another rank of each work pays the hop (the others are
 * piped).
 *
 * PXN (PCI x NVLink; NCCL_PXN_DISABLE=0 and NCCL_P2P_PXN_LEVEL=2 by
 * default: src/graph/paths.cc:495, src/graph/search.cc:1111-1112): a send to
 * a GPU of another node leaves through the NIC local to the GPU of the
 * sender's node with the destination's local index (ncclTopoGetNetDev's
 * point-to-point branch, search.cc:1133-1179, reached with graph NULL from
 * net.cc:183 for the p2p connections, group.cc:110), the proxy rank being
 * that NIC's first local GPU (ncclTopoGetLocalGpu, src/graph/topo.cc:
 * 840-862) when it is NVLink-connected to the sender (search.cc:1164-1176);
 * the sender writes its data over NVLink into the proxy GPU's buffer, whose
 * NIC sends it (net.cc:181-199; shared buffers on the proxy's GPU,
 * net.cc:482-487); the receiver receives on its own NIC (net.cc:227). Every
 * cross-node byte thus stays on the destination's rail. topocc relays such
 * a block through the intermediate rank: the NVLink hop in one step into a
 * scratch slot, the network hop in the next (with the NVLink hop of the
 * next peer step), so the M cross-node peer steps take M + 1 schedule steps
 * (M when the first, the same-rail peers, has no NVLink hop). It applies
 * on more than one node of G >= 2 GPUs with more than one NIC per node
 * (tc_nccl_a2a_pxn_applies), to sends whose destination's NIC is not the
 * sender's (NCCL would still stage a send through its own NIC's first GPU
 * when that is not the sender: topocc sends it directly).
 *
 * Simplified (docs/MODEL.md): the pieces one channel carries for a peer are
 * one transfer (NCCL sends them one after another, pipelined through its
 * FIFO), of equal size (NCCL's last piece is smaller); the channels per
 * peer assume an NVSwitch inside nodes (2 x NVLinks per GPU, above the
 * p2p channel count) and one NIC's worth across nodes; the base latency
 * and a work's hop are NCCL's ring constants (its tuning model has no
 * point-to-point entry), a work's hop the same whatever its peers, the
 * proxy's posting of each network message free; NCCL_PROTO is not applied
 * to point-to-point work.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

#define P2P_LL_THRESHOLD 16384.0 /* NCCL_P2P_LL_THRESHOLD (enqueue.cc:507) */
#define P2P_GROUP 8              /* NCCL_MAX_WORK_ELEMENTS_P2P / 2 (device.h:279) */

#define NO_ENTRY UINT32_MAX

/* One schedule step: the peer-order entry (delta index x steps + local
 * step) whose sends reach their peers now (directly, or the relay's network
 * hop), and the one whose NVLink hops to the relays go now (NO_ENTRY:
 * none). */
typedef struct a2a_step {
    uint32_t net, nv;
} a2a_step;

typedef struct a2a_state {
    uint32_t G, N, steps;   /* GPUs per node, nodes, local steps per delta (ALIGN_POWER(G, 8)) */
    uint32_t c;             /* blocks (channels) per peer */
    uint32_t nch, cpp;      /* p2pnChannels, p2pnChannelsPerPeer */
    uint32_t *delta;        /* per delta index: the node delta */
    uint32_t ndelta;
    bool pxn;               /* cross-node sends relayed through the GPU at the destination's NIC */
    uint32_t gpn;           /* GPUs per NIC (consecutive local ranks share one) */
    double piece, fifo;     /* sendrecv: a piece's bytes (calcP2pChunkSize), the FIFO step (p2pChunkSize) */
    a2a_step *plan;         /* per schedule step */
    /* per local rank lr, peer-order entry e and piece j (lr x entries x c):
     * 1 where lr's send of piece j at e is the first send to another rank
     * in its NCCL work (a2a_works): the transfer that pays the work's hop
     * latency in flow */
    uint8_t *lead;
} a2a_state;

static void a2a_state_free(void *p)
{
    a2a_state *st = p;
    if (!st)
        return;
    free(st->plan), free(st->delta), free(st->lead);
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
    if (op != TC_OP_ALLTOALL && op != TC_OP_SENDRECV) {
        tc_fail(err, TC_EINVAL, "nccl-a2a implements alltoall and sendrecv only (nccl-tests' grouped ncclSend/ncclRecv)");
        return false;
    }
    if (t && t->kind == TC_TOPO_MULTIDC) {
        /* its latency is NCCL's constant (base_s), no path's */
        tc_fail(err, TC_EINVAL, "nccl-a2a is not modelled on a multidc topology: its latency is NCCL's constant, "
                                "without the path's, so a long-haul link's latency would be left out");
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
    uint32_t C = tc_nccl_channels_full(req, t); /* the communicator's, at most MAXCHANNELS 32 */
    uint32_t nv = tc_nccl_nvls_comm_channels(req, t);
    if (C < nv) /* raised to NVLS's (connect.cc:478-480) */
        C = nv;
    uint32_t P = next_pow2(C);                    /* p2pnChannels, rounded after the peers' counts (:763-764) */
    uint32_t m = C;                               /* local NVLink peers: 2 x NVLinks, at least C (assumed NVSwitch) */
    if (N > 1) {
        /* NCCL_NCHANNELS_PER_NET_PEER -1: 2, fewer at scale against the
         * p2p channels before their rounding (paths.cc:716-726, 745-749) */
        uint32_t net = 2;
        while (net * req->p > C * 4 && net > 1)
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

/* NCCL's tuning model has no point-to-point entry (src/graph/tuning.cc of
 * v2.21.5-1 fills latencies[coll][algo][proto] for the collectives only):
 * its ring's constants stand in (assumed), the base latency once
 * (baseLat[Ring], tuning.cc:56-59: LL 6.6, Simple 8.4 us) and, for each
 * work a channel runs, one hop (hwLat[NVLINK or NET][Ring], tuning.cc:
 * 65-77: LL 0.6 / 2.7, Simple 3.4 / 14 us; the network hop on t's
 * transport, tc_nccl_net_lat_us). */
static double a2a_base_us(tc_proto pr)
{
    return pr == TC_PROTO_LL ? 6.6 : 8.4;
}

static double a2a_hop_us(tc_proto pr, bool inter, const tc_topo *t)
{
    bool ll = pr == TC_PROTO_LL;
    return inter ? tc_nccl_net_lat_us(t, pr, ll ? 2.7 : 14.0) : (ll ? 0.6 : 3.4);
}

static uint32_t relay_of(const a2a_state *st, uint32_t r, uint32_t q);

/* A channel's last work as appendWorkElemP2p (src/enqueue.cc:141-174)
 * builds it: receives in the even element slots, sends in the odd ones
 * (p2pTailElem), 8 of each (NCCL_MAX_WORK_ELEMENTS_P2P 16, device.h:279),
 * no peer twice among one type's (enqueue.cc:151-156). */
typedef struct a2a_tail {
    bool open;
    uint32_t n[2];        /* the next slot: receives 0, 2, ..; sends 1, 3, .. */
    uint32_t peer[16];
    uint8_t hop;          /* 0: no other rank; 1: one inside the node; 2: one across nodes */
    bool lead;            /* a send to another rank is in it */
    uint32_t a, b;        /* its hop: the first across nodes, else the first */
} a2a_tail;

/* A work once closed: its channel, hop and the pair that stands for it. */
typedef struct a2a_work {
    uint32_t ch, a, b;
    uint8_t hop;
} a2a_work;

typedef struct a2a_works_ws {
    a2a_tail *tail;       /* per channel */
    a2a_work *w;          /* the works of one local rank, closed */
    size_t n;
} a2a_works_ws;

static void tail_close(a2a_works_ws *ws, uint32_t ch)
{
    a2a_tail *tl = &ws->tail[ch];
    if (tl->open)
        ws->w[ws->n++] = (a2a_work){ch, tl->a, tl->b, tl->hop};
    tl->open = false;
}

/* appendWorkElemP2p (enqueue.cc:141-174) for an element of type ty (0
 * receive, 1 send) with peer on channel ch; hop 0 for the rank itself, 1
 * inside the node, 2 across nodes, (a, b) the transfer's ends; *lead set
 * where it is the work's first send to another rank. */
static void work_elem(a2a_works_ws *ws, uint32_t ch, bool fuse, int ty, uint32_t peer, uint8_t hop, uint32_t a,
                      uint32_t b, uint8_t *lead)
{
    a2a_tail *tl = &ws->tail[ch];
    bool fit = tl->open && fuse && tl->n[ty] < 16;
    for (uint32_t e = (uint32_t)ty; fit && e < tl->n[ty]; e += 2)
        if (tl->peer[e] == peer)
            fit = false; /* one connection per peer and work */
    if (!fit) {
        tail_close(ws, ch);
        *tl = (a2a_tail){.open = true, .n = {0, 1}};
    }
    tl->peer[tl->n[ty]] = peer;
    tl->n[ty] += 2;
    if (hop > tl->hop)
        tl->hop = hop, tl->a = a, tl->b = b;
    if (ty == 1 && hop && !tl->lead) {
        tl->lead = true;
        if (lead)
            *lead = 1;
    }
}

/* NCCL's works (scheduleP2pTasksToPlan, src/enqueue.cc:882-983) for every
 * local rank (node 0's: every node's are the same but for the node): for
 * each peer-order entry i, piece by piece, the receive then the send, each
 * on channel (p2pChannels[base mod p2pnChannels] + piece mod
 * p2pnChannelsPerPeer) mod p2pnChannels (enqueue.cc:523,
 * src/include/channel.h:15-46), fused into its channel's last work unless
 * i is a multiple of 8 (enqueue.cc:947: a new work for each group of 8
 * entries) or the work is full or holds the peer. A channel runs its works
 * one after another (src/device/common.h:181-203), each a hop: the latency
 * is the longest chain (*chain_us, a hop inside a node intra_us, across
 * nodes inter_us, 0 for one that reaches no other rank), over channels and
 * local ranks; its works' pairs into *pairs (2 a work with a hop: NULL to
 * skip), st->lead where set. */
static tc_status a2a_works(a2a_state *st, double intra_us, double inter_us, double *chain_us, uint32_t **pairs,
                           uint32_t *npairs, tc_err *err)
{
    uint32_t G = st->G, N = st->N, E = N * st->steps, c = st->c, nch = st->nch;
    size_t cap = 2 * (size_t)E * c;
    a2a_works_ws ws = {calloc(nch, sizeof *ws.tail), malloc(cap * sizeof *ws.w), 0};
    double *sum = calloc(nch, sizeof *sum);
    uint32_t *best = NULL, nbest = 0;
    *chain_us = 0;
    if (!ws.tail || !ws.w || !sum) {
        free(ws.tail), free(ws.w), free(sum);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t lr = 0; lr < G; lr++) {
        bool fuse = false;
        ws.n = 0;
        for (uint32_t e = 0; e < E; e++) {
            uint32_t delta = st->delta[e / st->steps], s = e % st->steps;
            uint32_t sl = (lr + s) % st->steps, rl = (lr + st->steps - s) % st->steps, rn = (N - delta) % N;
            bool snd = sl < G, rcv = rl < G;
            if (!snd && !rcv)
                continue; /* no task: fuseOk untouched */
            uint32_t sq = delta * G + sl, rq = rn * G + rl, sb = 0, rb = 0;
            if (snd) {
                uint32_t k = (G + sl - lr) % G;
                sb = mirror_bits((N > 1 ? delta + k / P2P_GROUP : k) % nch, nch);
            }
            if (rcv) {
                uint32_t k = (G + lr - rl) % G;
                rb = mirror_bits((N > 1 ? delta + k / P2P_GROUP : k) % nch, nch);
            }
            for (uint32_t j = 0; j < c; j++) {
                if (e % P2P_GROUP == 0)
                    fuse = false;
                if (rcv) {
                    uint8_t hop = rq == lr ? 0 : rn ? 2 : 1;
                    work_elem(&ws, (rb + j % st->cpp) % nch, fuse, 0, rq, hop, relay_of(st, rq, lr), lr, NULL);
                    fuse = true;
                }
                if (snd) {
                    uint8_t hop = sq == lr ? 0 : delta ? 2 : 1;
                    work_elem(&ws, (sb + j % st->cpp) % nch, fuse, 1, sq, hop, relay_of(st, lr, sq), sq,
                              st->lead ? &st->lead[((size_t)lr * E + e) * c + j] : NULL);
                    fuse = true;
                }
            }
        }
        for (uint32_t ch = 0; ch < nch; ch++)
            tail_close(&ws, ch);
        memset(sum, 0, nch * sizeof *sum);
        for (size_t i = 0; i < ws.n; i++)
            sum[ws.w[i].ch] += ws.w[i].hop == 2 ? inter_us : ws.w[i].hop ? intra_us : 0;
        uint32_t top = 0;
        for (uint32_t ch = 1; ch < nch; ch++)
            if (sum[ch] > sum[top])
                top = ch;
        if (lr > 0 && sum[top] <= *chain_us)
            continue;
        *chain_us = sum[top];
        if (!pairs)
            continue;
        nbest = 0;
        free(best);
        best = malloc((2 * ws.n + 2) * sizeof *best);
        if (!best) {
            free(ws.tail), free(ws.w), free(sum);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        for (size_t i = 0; i < ws.n; i++)
            if (ws.w[i].ch == top && ws.w[i].hop) {
                best[2 * nbest] = ws.w[i].a;
                best[2 * nbest + 1] = ws.w[i].b;
                nbest++;
            }
    }
    free(ws.tail), free(ws.w), free(sum);
    if (pairs) {
        if (!best && !(best = malloc(2 * sizeof *best)))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        *pairs = best;
        *npairs = nbest;
    }
    return TC_OK;
}

/* The rate one channel of a sendrecv reaches with protocol pr, B/s (0: not
 * limited): t's p2p_bw= on one node, its p2p_net_bw= across nodes, for
 * Simple. Such a channel's work holds one send and one receive, 9 and 8 of
 * its CTA's 20 warps (finishWorkP2p, src/enqueue.cc:117-132), each copying
 * the piece through its connection's FIFO; what one channel reaches then
 * can be below its share of the links (docs/MODEL.md "sendrecv"). LL
 * pieces (16 KiB at most) are not limited. */
static double sr_channel_Bps(const tc_topo *t, uint32_t N, tc_proto pr)
{
    if (pr != TC_PROTO_SIMPLE || !t)
        return 0;
    return N > 1 ? t->p2p_net_bw : t->p2p_bw;
}

/* The shape of req on t (not the plan): nodes, steps, PXN, channels,
 * pieces, the node deltas in NCCL's order (init.cc:1313-1334); *B the
 * bytes a peer. */
static tc_status a2a_setup(const tc_coll_req *req, const tc_topo *t, a2a_state *st, bool pxn, double *B,
                           tc_err *err)
{
    uint32_t p = req->p, G = node_size(p, t), N = p / G;
    st->G = G, st->N = N, st->steps = align_power(G, P2P_GROUP);
    st->pxn = pxn && tc_nccl_a2a_pxn_applies(t, p);
    st->gpn = st->pxn && t->nics ? G / t->nics : 1;
    p2p_channels(req, t, N, &st->nch, &st->cpp);
    /* nChannelsMin: one channel per operation when the peers fill them */
    uint32_t minch = st->cpp;
    while (minch * p > st->nch && minch > 1)
        minch /= 2;
    double step = N > 1 ? 131072.0 : 524288.0, buf = (req->buffsize > 0 ? req->buffsize : 4194304.0) / 8;
    if (step > buf)
        step = buf;
    *B = req->op == TC_OP_SENDRECV ? req->bytes : req->bytes / p; /* sendrecv: its one peer gets all */
    double minsz = N > 1 ? step / 2 : step / 8, maxsz = N > 1 ? step : 32 * step;
    double piece = p2p_chunk(*B, minch, st->cpp, minsz, maxsz), pieces = ceil(*B / piece);
    st->piece = piece;
    st->fifo = step;
    if (pieces < 1)
        pieces = 1;
    st->c = pieces < st->cpp ? (uint32_t)pieces : st->cpp;
    if ((double)p * st->c * 2 + (double)G * st->c > UINT32_MAX / 2)
        return tc_fail(err, TC_EINVAL, "nccl-a2a: %u ranks are too many", p);
    st->delta = malloc((size_t)N * sizeof *st->delta);
    if (!st->delta)
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
    return TC_OK;
}

double tc_nccl_a2a_time_us(const tc_coll_req *req, const tc_topo *t, tc_proto *proto)
{
    uint32_t p = req->p, G = node_size(p, t), N = p / G;
    bool sr = req->op == TC_OP_SENDRECV;
    tc_proto pr = req->proto ? req->proto : a2a_proto(sr ? req->bytes : req->bytes / p);
    if (proto)
        *proto = pr;
    if (p < 2 || !t)
        return 0;
    double bw = (N > 1 || t->node_size <= 1 ? tc_nccl_nic_line_Bps(t) : t->node_bw) / 1e9;
    double wire = pr == TC_PROTO_LL ? 2 : 1, B, chain = 0;
    a2a_state st = {0};
    if (sr) { /* one work a channel, one hop; the whole buffer over one peer's path, its channels' rate at most */
        double ch = sr_channel_Bps(t, N, pr) / 1e9;
        if (ch > 0 && a2a_setup(req, t, &st, false, &B, NULL) == TC_OK && st.c * ch < bw)
            bw = st.c * ch;
        free(st.delta);
        return a2a_base_us(pr) + a2a_hop_us(pr, N > 1, t) + wire * req->bytes / (1000 * bw);
    }
    if (a2a_setup(req, t, &st, false, &B, NULL) != TC_OK ||
        a2a_works(&st, a2a_hop_us(pr, false, t), a2a_hop_us(pr, true, t), &chain, NULL, NULL, NULL) != TC_OK)
        chain = a2a_hop_us(pr, N > 1, t); /* out of memory: one hop */
    free(st.delta);
    return a2a_base_us(pr) + chain + wire * req->bytes * (p - 1) / p / (1000 * bw);
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

/* The rank whose NIC carries r's send to q: with PXN and q on another node
 * behind another NIC than r's, the first GPU of r's node at the NIC of q's
 * local index (ncclTopoGetNetDev with NCCL_P2P_PXN_LEVEL 2,
 * search.cc:1164-1175; ncclTopoGetLocalGpu, topo.cc:840-860); else r. */
static uint32_t relay_of(const a2a_state *st, uint32_t r, uint32_t q)
{
    uint32_t G = st->G, k = st->gpn, lr = r % G, lq = q % G;
    if (!st->pxn || r / G == q / G || lr / k == lq / k)
        return r;
    return r - lr + lq / k * k;
}

/* The relay's scratch slot of piece j it forwards for local rank lr: one
 * set serves every step, since a step reads its slots as they were at its
 * start (the network hop of one peer step reads what the NVLink hop of the
 * step before wrote, while the next NVLink hop overwrites it). */
static uint32_t scratch_slot(const tc_sched *s, const a2a_state *st, uint32_t lr, uint32_t j)
{
    return 2 * s->nblk + lr * st->c + j;
}

/* A piece in its lane; piped: it pays no hop latency of its own (flow):
 * only the first send to another rank in each of NCCL's works does (the
 * network hop where relayed), the others run in the work it opened. */
static void add_piece(const tc_sched *s, tc_xfers *x, uint32_t src, uint32_t dst, uint32_t lane, uint32_t from,
                      uint32_t to, bool piped)
{
    size_t at = tc_xfers_add(x, src, dst, s->blk_bytes, false);
    if (!x->oom) {
        x->v[at].lane = (uint16_t)lane;
        x->v[at].piped = piped;
    }
    tc_xfers_seg(x, from, to, 1);
}

/* What local rank lr does at peer-order entry e, the same on every node:
 * its peer's local index (UINT32_MAX: none, or itself), the node delta,
 * the first lane and the local index of the rank whose NIC carries it
 * (entry_locals; e = NO_ENTRY: no peer for any). */
typedef struct a2a_local {
    uint32_t pl, delta, first, relay;
} a2a_local;

static void entry_locals(const a2a_state *st, uint32_t e, a2a_local *loc)
{
    uint32_t G = st->G;
    for (uint32_t lr = 0; lr < G; lr++) {
        a2a_local *l = &loc[lr];
        l->pl = UINT32_MAX;
        if (e == NO_ENTRY)
            continue; /* nothing at this step */
        uint32_t base, q = send_peer(st, lr, e, &base); /* node 0's rank lr: q's node is the delta */
        if (q == UINT32_MAX || q == lr)
            continue;
        l->pl = q % G;
        l->delta = q / G;
        l->first = mirror_bits(base % st->nch, st->nch);
        l->relay = relay_of(st, lr, q);
    }
}

static tc_status emit_a2a(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const a2a_state *st = s->state;
    uint32_t p = s->req.p, nb = s->nblk, c = st->c, G = st->G, N = st->N;
    if (step == 0 && x->with_data)
        for (uint32_t r = 0; r < p; r++) { /* the rank's own block: delta 0, step 0 */
            tc_xfers_add(x, r, r, 0, false);
            tc_xfers_seg(x, r * c, nb + r * c, c);
        }
    if (p == 1)
        return TC_OK;
    const a2a_step *sp = &st->plan[step];
    a2a_local *nv = calloc(2 * (size_t)G, sizeof *nv), *net = nv ? nv + G : NULL;
    if (!nv)
        return TC_EINTERNAL;
    entry_locals(st, sp->nv, nv);
    entry_locals(st, sp->net, net);
    for (uint32_t node = 0; node < N; node++)
        for (uint32_t lr = 0; lr < G; lr++) {
            uint32_t r = node * G + lr;
            const a2a_local *a = &nv[lr], *b = &net[lr];
            if (a->pl != UINT32_MAX && a->relay != lr) { /* PXN: over NVLink into the relay's buffer */
                uint32_t qn = node + a->delta, q = (qn >= N ? qn - N : qn) * G + a->pl, m = node * G + a->relay;
                for (uint32_t j = 0; j < c; j++)
                    add_piece(s, x, r, m, (a->first + j) % st->nch, q * c + j, scratch_slot(s, st, lr, j), true);
            }
            if (b->pl != UINT32_MAX) {
                uint32_t qn = node + b->delta, q = (qn >= N ? qn - N : qn) * G + b->pl, m = node * G + b->relay;
                const uint8_t *lead = &st->lead[((size_t)lr * N * st->steps + sp->net) * c];
                for (uint32_t j = 0; j < c; j++)
                    add_piece(s, x, m, q, (b->first + j) % st->nch, m == r ? q * c + j : scratch_slot(s, st, lr, j),
                              nb + r * c + j, !lead[j]);
            }
        }
    free(nv);
    return x->oom ? TC_EINTERNAL : TC_OK;
}

bool tc_nccl_a2a_pxn_applies(const tc_topo *t, uint32_t p)
{
    uint32_t G = node_size(p, t);
    if (G < 2 || p <= G)
        return false; /* one GPU per node, or one node: no NVLink hop, or no network */
    uint32_t nics = t->nics ? t->nics : G; /* without nics=, a NIC (fabric ports) per GPU */
    return nics > 1;
}

/* Whether some rank sends at entry e (any: to another rank; relayed: through a relay). */
static void entry_kind(const a2a_state *st, uint32_t e, bool *any, bool *relayed)
{
    *any = *relayed = false;
    for (uint32_t lr = 0; lr < st->G; lr++) {
        uint32_t base, q = send_peer(st, lr, e, &base);
        if (q == UINT32_MAX || q == lr)
            continue;
        *any = true;
        *relayed = *relayed || relay_of(st, lr, q) != lr;
    }
}

/* The figures of a step, from its transfers: most transfers and bytes a rank
 * sends and receives (cnt: 2p counters, zero on entry and on return). */
static tc_status step_figures(const tc_sched *s, uint32_t step, tc_xfers *x, uint32_t *cnt, tc_phase *ph)
{
    uint32_t p = s->req.p;
    tc_status st = tc_sched_emit(s, step, x);
    if (st)
        return st;
    uint32_t fo = 0, fi = 0;
    for (size_t i = 0; i < x->n; i++) {
        if (x->v[i].src == x->v[i].dst)
            continue;
        uint32_t a = ++cnt[x->v[i].src], b = ++cnt[p + x->v[i].dst];
        fo = a > fo ? a : fo;
        fi = b > fi ? b : fi;
    }
    for (size_t i = 0; i < x->n; i++)
        cnt[x->v[i].src] = cnt[p + x->v[i].dst] = 0;
    tc_phase_set_fan(ph, fo, fi, s->blk_bytes);
    ph->blk_xfers = x->n; /* every piece is blk_bytes (add_piece), and without data no local copy */
    return TC_OK;
}

/* Two sizes of one request whose pieces per peer and protocol agree: the
 * peer plan, the deltas and the works (lead, lat_pairs) follow from the
 * fields compared (the size enters only through c, the protocol and
 * blk_bytes), so the steps are the same pieces, each blk_bytes, with the
 * same latency. */
static bool a2a_same_shape(const tc_sched *a, const tc_sched *b)
{
    const a2a_state *x = a->state, *y = b->state;
    if (a->same_shape != b->same_shape || !x || !y || a->req.p != b->req.p || a->req.elt != b->req.elt ||
        a->proto != b->proto || a->nblk != b->nblk || a->nslots != b->nslots || a->nphases != b->nphases ||
        a->nsteps != b->nsteps || a->channels != b->channels || a->lanes != b->lanes || a->base_s != b->base_s ||
        a->wire != b->wire || a->credit_steps != b->credit_steps || a->params[0] != b->params[0] || a->params[1] != b->params[1] || a->params[2] != b->params[2] ||
        a->lat_intra_s != b->lat_intra_s || a->lat_inter_s != b->lat_inter_s || a->nlat_pairs != b->nlat_pairs)
        return false;
    if (a->nlat_pairs && memcmp(a->lat_pairs, b->lat_pairs, 2 * (size_t)a->nlat_pairs * sizeof *a->lat_pairs))
        return false;
    if (x->G != y->G || x->N != y->N || x->steps != y->steps || x->c != y->c || x->nch != y->nch ||
        x->cpp != y->cpp || x->pxn != y->pxn || x->gpn != y->gpn || x->ndelta != y->ndelta)
        return false;
    for (uint32_t i = 0; i < a->nphases; i++) {
        const tc_phase *p = &a->phases[i], *q = &b->phases[i];
        if (p->repeat != q->repeat || p->fanout != q->fanout || p->fanin != q->fanin ||
            p->blk_xfers != q->blk_xfers || p->pat != q->pat)
            return false;
    }
    return true;
}

/* What all-to-all and sendrecv share of NCCL's point-to-point on s: a
 * lane per channel, the protocol for B bytes a peer, NCCL's base latency
 * once (p > 1) and a hop's inside and across nodes, the protocol's wire
 * bytes, the credits of a grouped point-to-point. */
static void p2p_costs(const tc_coll_req *req, const tc_topo *t, const a2a_state *st, double B, tc_sched *s)
{
    s->same_shape = a2a_same_shape;
    s->channels = st->nch;
    s->lanes = st->nch;
    s->nccl_impl = TC_ALGO_NCCL_A2A;
    s->proto = req->proto ? req->proto : a2a_proto(B);
    s->base_s = req->p > 1 ? a2a_base_us(s->proto) * 1e-6 : 0;
    s->lat_intra_s = a2a_hop_us(s->proto, false, t) * 1e-6;
    s->lat_inter_s = a2a_hop_us(s->proto, true, t) * 1e-6;
    s->wire = tc_nccl_wire_factor(s->proto);
    s->rate_cap_Bps = 0;
    s->credit_steps = s->credit_steps_inter = P2P_GROUP;
}

/* s's state, attached to it (freed with it) and set up: the channels,
 * pieces and relays of NCCL's point-to-point; *B the bytes to each peer. */
static tc_status a2a_state_new(const tc_coll_req *req, const tc_topo *t, tc_sched *s, bool pxn, a2a_state **out,
                               double *B, tc_err *err)
{
    a2a_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = a2a_state_free;
    *out = st;
    return a2a_setup(req, t, st, pxn, B, err);
}

static tc_status a2a_build_pxn(const tc_coll_req *req, const tc_topo *t, tc_sched *s, bool pxn, tc_err *err)
{
    uint32_t p = req->p;
    a2a_state *st = NULL;
    double B;
    tc_status rs = a2a_state_new(req, t, s, pxn, &st, &B, err);
    if (rs)
        return rs;
    uint32_t G = st->G, N = st->N;
    st->plan = malloc(((size_t)N * st->steps + 1) * sizeof *st->plan);
    st->lead = calloc((size_t)N * st->steps * G * st->c, 1);
    if (!st->plan || !st->lead)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->nblk = p * st->c;
    s->nslots = 2 * s->nblk + (st->pxn ? G * st->c : 0); /* PXN: the relayed pieces, by sender's local rank */
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_a2a;
    p2p_costs(req, t, st, B, s);
    /* the latency: the base once, then the hops of the longest chain of
     * works one channel runs (a2a_works), each the pair of ranks it stands
     * for (lat_once: their sum) */
    s->lat_once = true;
    s->params[0] = st->pxn;
    double chain_us = 0;
    if ((rs = a2a_works(st, s->lat_intra_s * 1e6, s->lat_inter_s * 1e6, &chain_us, &s->lat_pairs, &s->nlat_pairs,
                        err)) != TC_OK)
        return rs;
    if (p == 1) {
        st->plan[0] = (a2a_step){0, NO_ENTRY};
        return tc_sched_add_copy_phase(s, err);
    }
    /* a step per entry where some rank sends to another; with PXN the
     * cross-node entries E_0 .. E_M-1 pipelined: step i carries E_i's NVLink
     * hops to the relays and E_i-1's sends over the network */
    uint32_t nst = 0, prev = NO_ENTRY;
    for (uint32_t e = 0; e <= N * st->steps; e++) {
        bool any = false, relayed = false;
        if (e < N * st->steps)
            entry_kind(st, e, &any, &relayed);
        bool inter = e < N * st->steps && st->delta[e / st->steps] != 0;
        if (!st->pxn || (e < N * st->steps && !inter)) {
            if (any)
                st->plan[nst++] = (a2a_step){e, NO_ENTRY};
            continue;
        }
        if (e < N * st->steps && !any)
            continue;
        a2a_step sp = {prev, relayed ? e : NO_ENTRY};
        if (sp.net != NO_ENTRY || sp.nv != NO_ENTRY)
            st->plan[nst++] = sp;
        prev = e < N * st->steps ? e : NO_ENTRY;
    }
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *cnt = st->pxn ? calloc(2 * (size_t)p, sizeof *cnt) : NULL;
    if (st->pxn && !cnt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i < nst && rs == TC_OK; i++) {
        bool relay = st->plan[i].nv != NO_ENTRY || (st->pxn && st->plan[i].net != NO_ENTRY &&
                                                      st->delta[st->plan[i].net / st->steps] != 0);
        tc_phase *ph = tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, s->blk_bytes,
                                          relay ? "p2p peer step (PXN)" : "p2p peer step");
        if (!ph) {
            rs = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        ph->fanout = ph->fanin = st->c;
        ph->rank_bytes = ph->rank_bytes_in = st->c * s->blk_bytes;
        if (st->pxn && (rs = step_figures(s, i, &x, cnt, ph)) != TC_OK)
            tc_fail(err, rs, "nccl-a2a: step %u could not be emitted", i);
    }
    tc_xfers_free(&x);
    free(cnt);
    return rs;
}

/* ---- sendrecv: one peer ----
 *
 * nccl-tests' sendrecv_perf (NVIDIA/nccl-tests v2.13.10 src/sendrecv.cu:
 * 46-59): in one group every rank r posts ncclSend of its buffer to r + 1
 * and ncclRecv from r - 1 (mod p). NCCL schedules them as any grouped
 * point-to-point work (the machinery above): the buffer, B = S bytes, is
 * cut into pieces by calcP2pChunkSize, piece j on channel (p2pChannels[base
 * mod p2pnChannels] + j mod p2pnChannelsPerPeer) mod p2pnChannels with
 * base the peer's node delta + step / 8 across nodes, its step inside one
 * (ncclChannelCompute, src/include/channel.h:15-46, called from
 * addP2pToPlan, src/enqueue.cc:510-529); LL where a piece is at most
 * NCCL_P2P_LL_THRESHOLD = 16 KiB (enqueue.cc:507, 529), else Simple. The
 * send and the receive of a rank are in the same peer-order step or two,
 * fused into one work a channel (enqueue.cc:947-983): one hop of latency,
 * across nodes where the rank's send or receive crosses them.
 *
 * Every rank's send runs at once (no rank has a second peer): one schedule
 * step, rank r's c pieces to r + 1, each in its channel's lane. With PXN
 * (tc_nccl_a2a_pxn_applies), the last GPU of a node sends to the next
 * node's first GPU (local index 0) through the NIC of local index 0 of its
 * own node: over NVLink into the proxy GPU's buffer (local rank 0's), whose
 * NIC sends it on rail 0 (search.cc:1164-1176, net.cc:181-199; see the top
 * of the file). NCCL's proxy forwards a FIFO step (p2pChunkSize: 128 KiB
 * across nodes) as soon as it has arrived, so the two hops overlap: the
 * buffer goes in K = min(8, FIFO steps of a piece) slices (NCCL_STEPS = 8
 * slots, src/include/device.h:22), K + 1 schedule steps, step k carrying
 * every direct send's slice k, the NVLink hop of slice k and the network
 * hop of slice k - 1 (the relay's scratch slots read at the step's start).
 * Blocks: slice k, piece j is block k c + j (c pieces), output slot nblk
 * + block; the relay's scratch slots 2 nblk + j. */

/* Rank r's send to r + 1: its first lane (channel) and the rank whose NIC
 * carries it (relay_of). */
static void sr_route(const a2a_state *st, uint32_t p, uint32_t r, uint32_t *q, uint32_t *first, uint32_t *via)
{
    uint32_t G = st->G, N = st->N;
    *q = r + 1 == p ? 0 : r + 1;
    uint32_t lr = r % G, lq = *q % G, delta = (*q / G + N - r / G) % N, step = (G + lq - lr) % G;
    uint32_t base = N > 1 ? delta + step / P2P_GROUP : step;
    *first = mirror_bits(base % st->nch, st->nch);
    *via = relay_of(st, r, *q);
}

static tc_status emit_sr(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const a2a_state *st = s->state;
    uint32_t p = s->req.p, nb = s->nblk, c = st->c, K = s->params[2];
    if (p == 1) {
        if (x->with_data) { /* to itself: a local copy */
            tc_xfers_add(x, 0, 0, 0, false);
            tc_xfers_seg(x, 0, nb, nb);
        }
        return TC_OK;
    }
    for (uint32_t r = 0; r < p; r++) {
        uint32_t q, first, m;
        sr_route(st, p, r, &q, &first, &m);
        for (uint32_t j = 0; j < c; j++) {
            uint32_t lane = (first + j) % st->nch;
            if (m == r) {
                if (step < K) /* slice step straight to the peer; the first pays the work's hop */
                    add_piece(s, x, r, q, lane, step * c + j, nb + step * c + j, step > 0);
                continue;
            }
            if (step < K) /* PXN: slice step over NVLink into the proxy's buffer */
                add_piece(s, x, r, m, lane, step * c + j, 2 * nb + j, true);
            if (step > 0) /* and slice step - 1 on from the proxy's NIC */
                add_piece(s, x, m, q, lane, 2 * nb + j, nb + (step - 1) * c + j, step > 1);
        }
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status sr_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, bool pxn, tc_err *err)
{
    uint32_t p = req->p;
    a2a_state *st = NULL;
    double B;
    tc_status rs = a2a_state_new(req, t, s, pxn, &st, &B, err);
    if (rs)
        return rs;
    uint32_t G = st->G, N = st->N, c = st->c;
    /* relayed: the last GPU of each node, where PXN sends it through another NIC */
    bool relay = N > 1 && relay_of(st, G - 1, G) != G - 1;
    double fifo_steps = ceil(st->piece / st->fifo);
    uint32_t K = relay ? (fifo_steps < 8 ? (uint32_t)fifo_steps : 8) : 1;
    if (K < 1)
        K = 1;
    s->nblk = c * K;
    s->nslots = 2 * s->nblk + (relay ? c : 0);
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_sr;
    p2p_costs(req, t, st, B, s);
    s->rate_cap_Bps = sr_channel_Bps(t, N, s->proto);
    /* a connection's FIFO goes onto the wire in order: slice k + 1 after
     * slice k (flow: under the credits a rank may run ahead by 8 slices,
     * which would otherwise share its link and all arrive last) */
    s->wire_in_order = true;
    s->params[0] = relay;
    s->params[1] = 1; /* sendrecv */
    s->params[2] = K;
    /* the latency: the base once, then one work's hop: across nodes from
     * the NIC that sends the last GPU's data to the next node, else inside
     * the node */
    s->lat_once = true;
    s->lat_pairs = malloc(2 * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (p > 1) {
        uint32_t q, first, m;
        sr_route(st, p, N > 1 ? G - 1 : 0, &q, &first, &m);
        s->lat_pairs[0] = m, s->lat_pairs[1] = q;
        s->nlat_pairs = 1;
    }
    if (p == 1)
        return tc_sched_add_copy_phase(s, err);
    /* phases: slice 0, slices 1 .. K - 1 (the same traffic), the last
     * network hop */
    uint32_t runs[3] = {1, K - 1, relay}, nrun = 3;
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *cnt = calloc(2 * (size_t)p, sizeof *cnt);
    if (!cnt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i < nrun && rs == TC_OK; i++) {
        if (!runs[i])
            continue;
        uint32_t first_step = s->nsteps;
        tc_phase *ph = tc_sched_add_phase(s, runs[i], TC_PAT_GENERIC, 0, s->blk_bytes,
                                          relay ? "p2p send (PXN)" : "p2p send");
        if (!ph)
            rs = tc_fail(err, TC_EINTERNAL, "out of memory");
        else if ((rs = step_figures(s, first_step, &x, cnt, ph)) != TC_OK)
            tc_fail(err, rs, "nccl-a2a: step %u could not be emitted", first_step);
    }
    tc_xfers_free(&x);
    free(cnt);
    return rs;
}

/* NCCL's default: NCCL_PXN_DISABLE=0 (paths.cc:495). */
static tc_status a2a_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    if (req->op == TC_OP_SENDRECV)
        return sr_build(req, t, s, req->pxn != 2, err);
    return a2a_build_pxn(req, t, s, req->pxn != 2, err);
}

tc_status tc_nccl_a2a_build(const tc_coll_req *req, const tc_topo *topo, bool pxn, tc_sched **out, tc_err *err)
{
    *out = NULL;
    if (req->algo != TC_ALGO_NCCL_A2A)
        return tc_fail(err, TC_EINVAL, "tc_nccl_a2a_build builds nccl-a2a only, not %s", tc_algo_name(req->algo));
    tc_status st = tc_coll_build(req, topo, out, err); /* NCCL's default: PXN where it applies */
    if (st || pxn || !(*out)->params[0])
        return st;
    /* rebuild without PXN on the same validated schedule shell */
    tc_sched *s = *out;
    a2a_state_free(s->state);
    s->state = NULL;
    free(s->lat_pairs);
    s->lat_pairs = NULL;
    s->nphases = s->nsteps = 0;
    st = req->op == TC_OP_SENDRECV ? sr_build(req, topo, s, false, err) : a2a_build_pxn(req, topo, s, false, err);
    if (st) {
        tc_sched_free(s);
        *out = NULL;
    }
    return st;
}

const tc_algo_impl tc_impl_nccl_a2a = {a2a_valid, a2a_build};
