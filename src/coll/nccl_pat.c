/*
 * nccl_pat.c - NCCL's PAT (Parallel Aggregated Trees) all-gather and
 * reduce-scatter (nccl-pat), as NVIDIA/nccl first released it in v2.23.4-1
 * (commit 68b54236). PAT is not in v2.21.5-1, the version the rest of
 * topocc's NCCL models (`git grep NCCL_ALGO_PAT v2.22.3-1` finds nothing;
 * v2.23.4-1:src/include/nccl_common.h:61 defines NCCL_ALGO_PAT 6); this file
 * cites v2.23.4-1 throughout (docs/MODEL.md, "NCCL's PAT").
 *
 * The step order is NCCL's own: pat_rs_next and pat_ag_next below are line
 * for line ports of PatRSAlgorithm::getNextOp and PatAGAlgorithm::getNextOp
 * (src/include/collectives.h:71-329, 331-551 at v2.23.4-1), which the GPU
 * (src/device/reduce_scatter.h:80-103, all_gather.h:87-110) and the host
 * proxy (src/proxy.cc:609, 638) both run. Each op receives at most one
 * block from the peer 2^recvDim away, combines it with the rank's own data
 * and writes at most one block into the FIFO of the peer 2^sendDim away
 * (reduce-scatter sends to rank + 2^d, all-gather to rank - 2^d:
 * src/device/prims_simple.h:619-641); a FIFO step (one buffer slot of
 * stepSize bytes) goes out when the op posts it, holding up to postFreq
 * blocks (the aggregation: aggFactor doubles while the channel's data is at
 * most half a step, then once per halving of NCCL_STEPS = 8, both bounded by
 * nranks/2, collectives.h:153-172, 426-447). Every rank runs the same ops
 * (the rank only shifts the data indices), so one rank's op list gives
 * everyone's.
 *
 * The schedule: a step per posted FIFO step (a "message"), in the order
 * the ops post them; in it every rank sends the message's blocks to its
 * peer 2^d away (a SHIFT by +-2^d), one transfer per channel (lane). Blocks:
 * data rank D's chunk l of channel k is slot D (C L) + k L + l. The
 * reductions are in place (a receiver adds into the block's slot), which is
 * what PAT's FIFO accumulation computes (prims_simple.h:896-954: a block
 * written twice to a slot accumulates). The data checker proves the order:
 * a message only carries blocks its sender completed in earlier steps.
 *
 * Simplified (docs/MODEL.md): the channels get equal parts and a channel's
 * part equal chunks (NCCL's ncclCollCbdPart cuts them unevenly); a message
 * waits for the whole of the previous step's receives in flow (NCCL's ops
 * wait only for the one they read); NCCL's latency model gives the latency
 * once (no latency per message).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

/* v2.23.4-1's PAT constants. */
#define PAT_STEPS 8             /* NCCL_STEPS (src/include/device.h:24) */
#define PAT_EFF 0.85            /* busBw *= .85 for PAT (src/graph/tuning.cc:193) */
#define PAT_NET_LAT_US 14.0     /* interLat with one rank per node: hwLat[NET][TREE][SIMPLE] (tuning.cc:57-77, 236) */

static int ffs_or(int i, int max)
{
    return i ? __builtin_ctz((unsigned)i) : max;
}

static int popcount(int i)
{
    return __builtin_popcount((unsigned)i);
}

static int log2up(int n)
{
    int l = 0;
    while ((1 << l) < n)
        l++;
    return l;
}

/* One op of PAT's sequence, as getNextOp returns it: rel is the data rank
 * relative to the rank (inpIx / outIx = (rank + rel) mod n), step_off the
 * FIFO step offset of the send (reduce-scatter's sendStepOffset). */
typedef struct pat_op {
    int recv_dim, send_dim, rel, step_off, post_send, last;
} pat_op;

/* ---- PatRSAlgorithm (collectives.h:71-329), one chunk ---- */

typedef struct pat_rs {
    int nranks, nrPow2, postFreq, lastA, aggFactor, as, a, sendSkipped, recvSkipped, phase2recv, aggDelta, scale,
        phase;
} pat_rs;

static int mirror_invert(int i, int max)
{
    int ret = 0;
    for (int mask = 1, imask = max / 2; mask < max; mask <<= 1, imask >>= 1)
        if ((i & mask) == 0)
            ret += imask;
    return ret;
}

/* The aggregation (collectives.h:153-172 and 426-447): aggFactor, aggDelta
 * and postFreq from the FIFO step and the channel's part of a rank's data. */
static void pat_agg(int nranks, double step_bytes, double channel_bytes, int *aggFactor, int *aggDelta,
                    int *postFreq)
{
    int af = 1, ad = 1 << log2up(nranks);
    while (floor(step_bytes / (channel_bytes * af)) >= 2 && af < nranks / 2)
        af *= 2, ad /= 2;
    *postFreq = af;
    for (int d = PAT_STEPS; d > 1 && af < nranks / 2;)
        d /= 2, af *= 2, ad /= 2;
    *aggFactor = af, *aggDelta = ad;
}

static void rs_resetA(pat_rs *c)
{
    c->a = 0;
    c->sendSkipped = c->recvSkipped = 0;
    c->lastA = c->aggFactor;
    if (c->phase >= 2)
        c->lastA /= 2 * c->scale;
}

static void rs_init(pat_rs *c, int nranks, int aggFactor, int aggDelta, int postFreq)
{
    memset(c, 0, sizeof *c);
    c->nranks = nranks;
    c->nrPow2 = 1 << log2up(nranks);
    c->aggFactor = aggFactor, c->aggDelta = aggDelta, c->postFreq = postFreq;
    c->phase = 0;
    c->scale = 1;
    c->phase2recv = 0;
    c->as = c->aggDelta - 1;
    rs_resetA(c);
}

static int new_peer(int i, int pow2)
{
    return popcount((i ^ (pow2 - 1)) + 1) == 1;
}

/* getNextOp of PatRSAlgorithm, for one chunk (phase 4 ends it). */
static void rs_next(pat_rs *c, pat_op *o)
{
    int nranks = c->nranks, postFreq = c->postFreq;
    for (;;) {
        int skip = 0;
        o->last = 0;
        if (c->phase == 0) {
            int s = mirror_invert(c->a, c->lastA) * c->aggDelta + c->as;
            if (s >= nranks)
                skip = 1;
            o->rel = s;
            o->recv_dim = -1;
            o->send_dim = 0;
            o->step_off = 0;
            o->post_send = (((c->a - c->sendSkipped) % postFreq) + 1 >= postFreq) || (c->a == c->lastA - 1);
            if (skip)
                c->sendSkipped++;
            if (++c->a == c->lastA) {
                c->phase = c->as == 1 ? (c->aggFactor > 1 ? 2 : 4) : 1;
                rs_resetA(c);
            }
            if (!skip)
                return;
        } else if (c->phase == 1) {
            int s = mirror_invert(c->a, c->lastA) * c->aggDelta + c->as;
            if (s >= nranks)
                skip = 1;
            o->recv_dim = ffs_or(s, c->nrPow2);
            o->post_send = 0;
            if (o->recv_dim == 0) {
                if ((((c->a - c->sendSkipped) % postFreq) + 1 >= postFreq) || (c->a == c->lastA - 1))
                    o->post_send = 1;
                o->step_off = 0;
            } else {
                o->step_off = (c->a - c->sendSkipped) / postFreq;
            }
            s -= 1 << o->recv_dim;
            o->rel = s;
            o->send_dim = s ? ffs_or(s, c->nrPow2) : -1;
            if (o->send_dim == -1) {
                o->step_off = 0;
            } else if (c->as - (1 << o->recv_dim) == 0) {
                if (new_peer(c->a, c->aggFactor))
                    c->sendSkipped = c->a;
                int foffset = c->a - c->sendSkipped;
                o->step_off = o->recv_dim == 0 ? 0 : foffset / postFreq;
            }
            if (s < nranks && skip) {
                o->recv_dim = -1;
                skip = 0;
            }
            if (skip || o->recv_dim == -1)
                c->recvSkipped++;
            if (skip)
                c->sendSkipped++;
            if (++c->a == c->lastA) {
                c->as--;
                c->phase = c->as % 2 == 1 ? 0 : 1;
                rs_resetA(c);
            }
            if (!skip)
                return;
        } else if (c->phase == 2) {
            int s = (2 * mirror_invert(c->a, c->lastA) + 1) * c->scale * c->aggDelta + 1;
            if (s >= nranks)
                skip = 1;
            o->recv_dim = 0;
            o->post_send = c->a == c->lastA - 1;
            s -= 1;
            if (s < nranks && skip) {
                o->recv_dim = -1;
                skip = 0;
            } else if (!skip) {
                c->phase2recv++;
            }
            o->rel = s;
            o->send_dim = s ? ffs_or(s, c->nrPow2) : -1;
            int foffset = c->a - c->sendSkipped;
            o->post_send |= ((foffset + 1) % postFreq) == 0;
            o->step_off = 0;
            if (skip || o->send_dim == -1)
                c->sendSkipped++;
            if (++c->a == c->lastA) {
                c->phase = 3;
                rs_resetA(c);
            }
            if (!skip)
                return;
        } else if (c->phase == 3) {
            int s = (2 * mirror_invert(c->a, c->lastA) + 1) * c->scale * c->aggDelta;
            if (s >= nranks)
                skip = 1;
            o->recv_dim = ffs_or(s, c->nrPow2);
            o->post_send = 0;
            s -= 1 << o->recv_dim;
            o->rel = s;
            o->send_dim = s ? ffs_or(s, c->nrPow2) : -1;
            if (s < nranks && skip) {
                o->recv_dim = -1;
                skip = 0;
            }
            if (new_peer(c->a, c->aggFactor / (2 * c->scale)))
                c->sendSkipped = c->a;
            int foffset = c->a - c->sendSkipped;
            o->step_off = foffset / postFreq;
            if (skip || o->recv_dim == -1)
                c->recvSkipped++;
            if (skip)
                c->sendSkipped++;
            if (++c->a == c->lastA) {
                c->scale *= 2;
                c->phase = c->scale < c->aggFactor ? 2 : 4;
                rs_resetA(c);
            }
            if (!skip)
                return;
        } else {
            o->recv_dim = 0;
            o->send_dim = -1;
            o->rel = 0;
            o->step_off = 0;
            o->post_send = 0;
            o->last = 1; /* offset += chunkCount: the chunk is done */
            return;
        }
    }
}

/* ---- PatAGAlgorithm (collectives.h:331-551), one chunk ---- */

typedef struct pat_ag {
    int nranks, nrPow2, postFreq, lastA, aggFactor, as, a, aggDelta, scale, phase, asDim, v;
    int bitCount[32], bitZeroStep[32];
} pat_ag;

static void ag_resetA(pat_ag *c)
{
    c->a = 0;
    c->lastA = c->aggFactor;
    if (c->phase >= 2)
        c->lastA /= 2 * c->scale;
}

static int ag_nextAs(pat_ag *c)
{
    for (int d = 0; d < c->asDim; d++) {
        int p = 1 << d;
        c->bitCount[d]--;
        if (c->bitCount[d] == 0) {
            c->v ^= p;
            c->bitCount[d] = p;
            if ((c->v & p) == 0) {
                c->bitCount[d] += ffs_or(c->bitZeroStep[d], c->asDim) - 1;
                if (c->bitCount[d] == 0) {
                    c->v ^= p;
                    c->bitCount[d] = p;
                }
                c->bitZeroStep[d]++;
            }
        }
    }
    return c->v;
}

static void ag_init(pat_ag *c, int nranks, int aggFactor, int aggDelta, int postFreq)
{
    memset(c, 0, sizeof *c);
    c->nranks = nranks;
    c->nrPow2 = 1 << log2up(nranks);
    c->aggFactor = aggFactor, c->aggDelta = aggDelta, c->postFreq = postFreq;
    c->asDim = log2up(aggDelta);
    c->scale = aggFactor / 2;
    c->phase = c->scale ? 2 : 1;
    c->v = 0;
    for (int i = 0; i < c->asDim; i++) {
        c->bitCount[i] = c->asDim - i;
        c->bitZeroStep[i] = 1;
    }
    c->as = ag_nextAs(c);
    ag_resetA(c);
}

/* getNextOp of PatAGAlgorithm, for one chunk (as reaching aggDelta/2 in
 * phase 0 ends it). */
static void ag_next(pat_ag *c, pat_op *o)
{
    int nranks = c->nranks, postFreq = c->postFreq;
    for (;;) {
        int skip = 0;
        o->last = 0;
        o->step_off = 0;
        if (c->phase == 0) {
            int s = c->a * c->aggDelta + c->as;
            if (s >= nranks)
                skip = 1;
            int nextSkip = (c->a + 1) * c->aggDelta + c->as >= nranks;
            o->rel = s;
            o->send_dim = -1;
            o->recv_dim = 0;
            o->post_send = 0;
            c->a++;
            if (nextSkip) {
                c->as = ag_nextAs(c);
                if (c->as == c->aggDelta / 2) {
                    o->last = 1;
                    return;
                }
                c->phase = 1;
                ag_resetA(c);
            }
            if (!skip)
                return;
        } else if (c->phase == 1) {
            int s = c->a * c->aggDelta + c->as;
            if (s >= nranks)
                skip = 1;
            o->send_dim = ffs_or(s, c->nrPow2);
            s -= 1 << o->send_dim;
            o->rel = s;
            o->recv_dim = s ? ffs_or(s, c->nrPow2) : -1;
            o->post_send = (c->a % postFreq == postFreq - 1) || ((c->a + 1) * c->aggDelta + c->as >= nranks);
            if (s < nranks && o->send_dim == 0 && skip) {
                o->send_dim = -1;
                o->post_send = 0;
                skip = 0;
            }
            if (++c->a == c->lastA) {
                if (c->as % 2 == 1)
                    c->phase = 0;
                else
                    c->as = ag_nextAs(c);
                ag_resetA(c);
            }
            if (!skip)
                return;
        } else {
            int s = (2 * c->a + 1) * c->scale * c->aggDelta;
            o->post_send = (c->a % postFreq == postFreq - 1) || ((2 * (c->a + 1) + 1) * c->scale * c->aggDelta >= nranks);
            if (s >= nranks)
                skip = 1;
            o->send_dim = ffs_or(s, c->nrPow2);
            s -= 1 << o->send_dim;
            o->rel = s;
            o->recv_dim = s ? ffs_or(s, c->nrPow2) : -1;
            if (++c->a == c->lastA) {
                c->scale /= 2;
                c->phase = c->scale ? 2 : 1;
                ag_resetA(c);
            }
            if (!skip)
                return;
        }
    }
}

/* ---- messages: the FIFO steps one chunk posts ---- */

typedef struct pat_msg {
    int dim;
    uint32_t first, n; /* into the rel list */
} pat_msg;

typedef struct pat_state {
    uint32_t C, L, M;  /* channels, chunks per channel, messages per chunk */
    pat_msg *msg;
    int32_t *rel;      /* blocks of the messages, relative data ranks */
    uint32_t nrel;
} pat_state;

static void pat_state_free(void *p)
{
    pat_state *st = p;
    if (!st)
        return;
    free(st->msg), free(st->rel);
    free(st);
}

/* A FIFO step being filled: (dim, index) -> its blocks. */
typedef struct fifo_slot {
    int dim, idx, used;
    int32_t *rel;
    uint32_t n, cap;
} fifo_slot;

/* Runs one chunk of the op sequence and lists its messages in post order.
 * Returns false on an allocation failure or a sequence that leaves a
 * written FIFO step unposted. */
static bool pat_messages(bool rs, int n, int aggFactor, int aggDelta, int postFreq, pat_state *st)
{
    pat_rs crs;
    pat_ag cag;
    if (rs)
        rs_init(&crs, n, aggFactor, aggDelta, postFreq);
    else
        ag_init(&cag, n, aggFactor, aggDelta, postFreq);
    int ndim = log2up(n) + 1;
    int counter[32] = {0};
    /* at most PAT_STEPS x aggFactor FIFO steps can be open at once; keep a
     * small growable table */
    size_t nslot = 0, slotcap = 16, msgcap = 16, relcap = 64;
    fifo_slot *slots = calloc(slotcap, sizeof *slots);
    st->msg = malloc(msgcap * sizeof *st->msg);
    st->rel = malloc(relcap * sizeof *st->rel);
    st->M = st->nrel = 0;
    bool ok = slots && st->msg && st->rel && ndim < 32;
    for (long guard = 0; ok; guard++) {
        pat_op o;
        if (rs)
            rs_next(&crs, &o);
        else
            ag_next(&cag, &o);
        if (o.last || guard > 64L * n * n + 1024)
            break;
        if (o.send_dim < 0)
            continue;
        int d = o.send_dim, idx = counter[d] + (rs ? o.step_off : 0);
        fifo_slot *f = NULL;
        for (size_t i = 0; i < nslot && !f; i++)
            if (slots[i].used && slots[i].dim == d && slots[i].idx == idx)
                f = &slots[i];
        if (!f) {
            for (size_t i = 0; i < nslot && !f; i++)
                if (!slots[i].used)
                    f = &slots[i];
            if (!f) {
                if (nslot == slotcap) {
                    fifo_slot *w = realloc(slots, 2 * slotcap * sizeof *w);
                    if (!w) {
                        ok = false;
                        break;
                    }
                    memset(w + slotcap, 0, slotcap * sizeof *w);
                    slots = w, slotcap *= 2;
                }
                f = &slots[nslot++];
            }
            f->used = 1, f->dim = d, f->idx = idx, f->n = 0;
        }
        bool dup = false;
        for (uint32_t i = 0; i < f->n; i++)
            dup |= f->rel[i] == o.rel;
        if (!dup) {
            if (f->n == f->cap) {
                uint32_t cap = f->cap ? 2 * f->cap : 8;
                int32_t *w = realloc(f->rel, cap * sizeof *w);
                if (!w) {
                    ok = false;
                    break;
                }
                f->rel = w, f->cap = cap;
            }
            f->rel[f->n++] = o.rel;
        }
        if (!o.post_send)
            continue;
        /* post FIFO step counter[d] of dim d */
        fifo_slot *q = NULL;
        for (size_t i = 0; i < nslot && !q; i++)
            if (slots[i].used && slots[i].dim == d && slots[i].idx == counter[d])
                q = &slots[i];
        counter[d]++;
        if (!q || !q->n)
            continue;
        if (st->M == msgcap) {
            pat_msg *w = realloc(st->msg, 2 * msgcap * sizeof *w);
            if (!w) {
                ok = false;
                break;
            }
            st->msg = w, msgcap *= 2;
        }
        while (st->nrel + q->n > relcap) {
            int32_t *w = realloc(st->rel, 2 * relcap * sizeof *w);
            if (!w) {
                ok = false;
                break;
            }
            st->rel = w, relcap *= 2;
        }
        if (!ok)
            break;
        st->msg[st->M++] = (pat_msg){d, st->nrel, q->n};
        memcpy(st->rel + st->nrel, q->rel, q->n * sizeof *q->rel);
        st->nrel += q->n;
        q->used = 0;
    }
    for (size_t i = 0; i < nslot; i++) {
        ok &= !slots[i].used; /* everything written went out */
        free(slots[i].rel);
    }
    free(slots);
    return ok;
}

/* ---- validity, NCCL's model, the schedule ---- */

static const char *pat_refusal(tc_op op, uint32_t p, const tc_topo *t)
{
    if (op != TC_OP_ALLGATHER && op != TC_OP_REDUCESCATTER)
        return "implements allgather and reducescatter only (NCCL's PAT: src/graph/tuning.cc:171-174 at v2.23.4-1)";
    if (t && t->kind == TC_TOPO_MULTIDC)
        return "is not modelled on a multidc topology: its latency is NCCL's constant (base_s), without the path's, "
               "so a long-haul link's latency would be left out";
    if (t && t->node_size > 1)
        return "runs with one GPU per node only (NCCL v2.23.4-1 disables PAT otherwise: src/graph/tuning.cc:112); "
               "the topology has nodes of several GPUs";
    (void)p;
    return NULL;
}

static bool pat_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    const char *why = pat_refusal(op, p, t);
    if (why)
        tc_fail(err, TC_EINVAL, "nccl-pat %s", why);
    return !why;
}

double tc_nccl_pat_latency_us(uint32_t p, const tc_topo *t, bool model)
{
    /* tuning.cc:276-281: 8 + log2i(nNodes) (interLat / 3.5) + nRanks 2.8;
     * NCCL's choice sees the net plugin's latency in interLat */
    double net = model ? tc_nccl_model_net_lat_us(t, TC_PROTO_SIMPLE, PAT_NET_LAT_US)
                       : tc_nccl_net_lat_us(t, TC_PROTO_SIMPLE, PAT_NET_LAT_US);
    return 8 + (int)tc_log2_floor(p) * (net / 3.5) + p * 2.8;
}

double tc_nccl_pat_time_us(const tc_coll_req *req, const tc_topo *t)
{
    if (pat_refusal(req->op, req->p, t) || req->p < 2 || !t)
        return INFINITY;
    /* busBw = nChannels bw 0.85 (tuning.cc:181-193), no conversion to
     * algorithm bandwidth for all-gather and reduce-scatter (:221); bw the
     * tree graph's (init.cc:736), on two nodes its bwIntra */
    double bus = tc_nccl_tree_graph_bw(t, req->p, 1) * PAT_EFF;
    return bus > 0 ? tc_nccl_pat_latency_us(req->p, t, true) + req->bytes / (1000 * bus) : INFINITY;
}

static tc_status emit_pat(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const pat_state *st = s->state;
    uint32_t p = s->req.p, C = st->C, L = st->L, l = step / st->M;
    const pat_msg *m = &st->msg[step % st->M];
    bool rs = s->req.op == TC_OP_REDUCESCATTER;
    uint32_t dist = (1u << m->dim) % p;
    for (uint32_t k = 0; k < C; k++)
        for (uint32_t r = 0; r < p; r++) {
            uint32_t dst = rs ? (r + dist) % p : (r + p - dist) % p;
            size_t at = tc_xfers_add(x, r, dst, m->n * s->blk_bytes, rs);
            if (!x->oom) {
                x->v[at].lane = (uint16_t)k;
                x->v[at].piped = 1; /* NCCL's latency is base_s, once */
            }
            for (uint32_t i = 0; x->with_data && i < m->n; i++) {
                uint32_t D = (uint32_t)(((int64_t)r + st->rel[m->first + i]) % p);
                uint32_t slot = D * (C * L) + k * L + l;
                tc_xfers_seg(x, slot, slot, 1);
            }
        }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status pat_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    uint32_t p = req->p;
    /* Channels: all of the communicator's (PAT has no maxThreads entry,
     * so NCCL's small-size cut leaves nChannels: src/enqueue.cc:1859-1881,
     * src/graph/tuning.cc:129-136 at v2.23.4-1). */
    uint32_t C = tc_nccl_channels_full(req, t);
    /* The chunk: the Simple FIFO step, 512 KiB (buffSizes / NCCL_STEPS,
     * chunkSteps 1 for all but Ring: enqueue.cc:2009-2012), halved while
     * chunk x channels x 32 (all-gather) or 16 (reduce-scatter) exceeds
     * the size, down to 64 KiB (enqueue.cc:2060-2063). */
    double Q = (req->buffsize > 0 ? req->buffsize : 4194304.0) / PAT_STEPS, B = req->bytes;
    double f = req->op == TC_OP_ALLGATHER ? 32 : 16;
    while (Q * C * f > B && Q > 65536)
        Q /= 2;
    double chan = B / p / C; /* a rank's part of one channel, bytes */
    double L = ceil(chan / Q);
    if (L < 1)
        L = 1;
    if ((double)p * C * L > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, "PAT", TC_PROTO_SIMPLE, (double)p * C, Q, err);
    pat_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = pat_state_free;
    st->C = C, st->L = (uint32_t)L;
    s->nblk = s->nslots = p * C * st->L;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_pat;
    s->channels = C;
    s->lanes = C;
    s->nccl_impl = TC_ALGO_NCCL_PAT;
    s->wire_in_order = true;
    s->credit_in_order = true;
    /* Costs: Simple only (tuning.cc:178-179); NCCL's latency once
     * (tuning.cc:276-281), no step latency; each byte 1/0.85 on the wire
     * (NCCL's 0.85 on PAT's bus bandwidth, tuning.cc:193, read as the
     * protocol's efficiency as nccl-nvls reads its 5/6); one message per
     * FIFO step, NCCL_STEPS = 8 in flight, twice across a network hop. */
    s->proto = TC_PROTO_SIMPLE;
    s->base_s = p > 1 ? tc_nccl_pat_latency_us(p, t, false) * 1e-6 : 0;
    s->lat_intra_s = s->lat_inter_s = 0;
    s->wire = 1 / PAT_EFF;
    s->rate_cap_Bps = 0;
    s->credit_steps = PAT_STEPS;
    s->credit_steps_inter = 2 * PAT_STEPS;
    /* no latency path: the latency is base_s (an empty list, so the
     * evaluators do not read the schedule as a ring) */
    s->lat_pairs = malloc(2 * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->nlat_pairs = 0;
    if (p == 1) {
        st->M = 1;
        return TC_OK;
    }
    int af, ad, pf;
    pat_agg((int)p, Q, chan, &af, &ad, &pf);
    if (!pat_messages(req->op == TC_OP_REDUCESCATTER, (int)p, af, ad, pf, st) || st->M == 0)
        return tc_fail(err, TC_EINTERNAL, "nccl-pat: PAT's op sequence failed for %u ranks", p);
    s->params[0] = (uint32_t)af, s->params[1] = (uint32_t)pf;
    if ((double)st->M * st->L > (double)(1u << 24))
        /* L loops of M steps, each loop p C chunks of Q */
        return tc_nccl_too_large(req, "PAT", TC_PROTO_SIMPLE, floor((double)(1u << 24) / st->M), (double)p * C * Q,
                                 "2^24 steps", err);
    /* Phases: runs of messages of one dimension and size. */
    uint32_t total = st->M * st->L;
    for (uint32_t i = 0; i < total;) {
        const pat_msg *m = &st->msg[i % st->M];
        uint32_t j = i + 1;
        while (j < total && st->msg[j % st->M].dim == m->dim && st->msg[j % st->M].n == m->n)
            j++;
        uint32_t dist = (1u << m->dim) % p;
        int64_t arg = req->op == TC_OP_REDUCESCATTER ? (int64_t)dist : -(int64_t)dist;
        tc_phase *ph = tc_sched_add_phase(s, j - i, TC_PAT_SHIFT, arg, m->n * s->blk_bytes,
                                          req->op == TC_OP_REDUCESCATTER ? "pat reduce-scatter" : "pat all-gather");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        ph->fanout = ph->fanin = C;
        ph->rank_bytes = ph->rank_bytes_in = C * m->n * s->blk_bytes;
        i = j;
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_nccl_pat = {pat_valid, pat_build};
