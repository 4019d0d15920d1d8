/*
 * biring.c - bidirectional ring: the data is cut in two halves; one half runs
 * ring.c's schedules (MPICH's MPIR_Allreduce_intra_ring block order, NCCL's
 * chains; see ring.c) r -> r+1, the other their mirror r -> r-1, in the same
 * steps. Every rank then sends on both of its ring links at once (fan-out 2),
 * which halves the bandwidth term on full-duplex links. The combination is
 * topocc's; no library function is reproduced.
 *
 * all-reduce = reduce-scatter then all-gather in both directions;
 * reduce-scatter and all-gather are the halves. Rank r's block is cut into
 * two sub-blocks of chunks c each (c = chunks, default 1, run as c rounds
 * like ring.c): sub-block (b, h, k) is slot b*2c + h*c + k, h = 0 travelling
 * forward, h = 1 backward. Broadcast and reduce are two pipelined chains of
 * c chunks (default 64) each carrying one half, one going root, root+1, ...
 * and the other root, root-1, ...: c + p - 2 steps of n/(2c).
 * On two ranks both directions reach the same neighbour, so the two halves
 * travel as one transfer.
 */
#include "coll/algos.h"

#define BIRING_PIPE_DEFAULT_CHUNKS 64

static bool biring_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op == TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "biring has no all-to-all");
        return false;
    }
    return true;
}

static uint32_t slot(const tc_sched *s, uint32_t b, uint32_t h, uint32_t k)
{
    uint32_t c = s->params[0];
    return b * 2 * c + h * c + k;
}

/* One step of both rings: forward r sends sub-block (bf, 0, k) to r+1,
 * backward r sends (bb, 1, k) to r-1. */
static void emit_pair(const tc_sched *s, uint32_t r, uint32_t bf, uint32_t bb, uint32_t k, bool red,
                      tc_xfers *x)
{
    uint32_t p = s->req.p;
    uint32_t sf = slot(s, bf, 0, k), sb = slot(s, bb, 1, k);
    if (p == 2) {
        tc_xfers_add(x, r, 1 - r, 2 * s->blk_bytes, red);
        tc_xfers_seg(x, sf, sf, 1);
        tc_xfers_seg(x, sb, sb, 1);
        return;
    }
    tc_xfers_add(x, r, (r + 1) % p, s->blk_bytes, red);
    tc_xfers_seg(x, sf, sf, 1);
    tc_xfers_add(x, r, (r + p - 1) % p, s->blk_bytes, red);
    tc_xfers_seg(x, sb, sb, 1);
}

/* Reduce-scatter step st (0..p-2) of round k: forward r sends block r-st-1,
 * backward r sends block r+st+1, so the last step delivers each rank its own
 * block from both sides. */
static void emit_rs(const tc_sched *s, uint32_t k, uint32_t st, tc_xfers *x)
{
    uint32_t p = s->req.p;
    for (uint32_t r = 0; r < p; r++)
        emit_pair(s, r, (r + 2 * p - st - 1) % p, (r + st + 1) % p, k, true, x);
}

/* All-gather step st of round k: forward r sends block r-st, backward r+st. */
static void emit_ag(const tc_sched *s, uint32_t k, uint32_t st, tc_xfers *x)
{
    uint32_t p = s->req.p;
    for (uint32_t r = 0; r < p; r++)
        emit_pair(s, r, (r + 2 * p - st) % p, (r + st) % p, k, false, x);
}

/* Active chain positions at step t: i in [lo, hi] carries chunk t - i. */
static void chain_window(uint32_t p, uint32_t c, uint32_t t, uint32_t *lo, uint32_t *hi)
{
    *lo = t + 1 >= c ? t + 1 - c : 0;
    *hi = t < p - 2 ? t : p - 2;
}

static tc_status emit_biring(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, per = p - 1, c = s->params[0];
    switch (s->req.op) {
    case TC_OP_ALLREDUCE: {
        uint32_t k = step / (2 * per), st = step % (2 * per);
        if (st < per)
            emit_rs(s, k, st, x);
        else
            emit_ag(s, k, st - per, x);
        return TC_OK;
    }
    case TC_OP_REDUCESCATTER: emit_rs(s, step / per, step % per, x); return TC_OK;
    case TC_OP_ALLGATHER: emit_ag(s, step / per, step % per, x); return TC_OK;
    default: {
        /* Chain A carries slots [0, c), chain B slots [c, 2c). Broadcast:
         * position i of A is root+i -> root+i+1, of B root-i -> root-i-1.
         * Reduce flows towards the root: A is root-1-i -> root-2-i, B is
         * root+1+i -> root+2+i. */
        uint32_t root = s->req.root, lo, hi;
        bool red = s->req.op == TC_OP_REDUCE;
        chain_window(p, c, step, &lo, &hi);
        for (uint32_t i = lo; i <= hi; i++) {
            uint32_t ch = step - i;
            uint32_t af, at, bf, bt;
            if (red) {
                af = (root + 2 * p - 1 - i) % p, at = (root + 2 * p - 2 - i) % p;
                bf = (root + 1 + i) % p, bt = (root + 2 + i) % p;
            } else {
                af = (root + i) % p, at = (root + i + 1) % p;
                bf = (root + p - i) % p, bt = (root + 2 * p - i - 1) % p;
            }
            if (p == 2) {
                tc_xfers_add(x, af, at, 2 * s->blk_bytes, red);
                tc_xfers_seg(x, ch, ch, 1);
                tc_xfers_seg(x, c + ch, c + ch, 1);
                continue;
            }
            tc_xfers_add(x, af, at, s->blk_bytes, red);
            tc_xfers_seg(x, ch, ch, 1);
            tc_xfers_add(x, bf, bt, s->blk_bytes, red);
            tc_xfers_seg(x, c + ch, c + ch, 1);
        }
        return TC_OK;
    }
    }
}

/* Most transfers one rank sends at a chain step with window [lo, hi]
 * (p > 2). Broadcast: rank root+d is position d of A and p-d of B (the root
 * is position 0 of both). Reduce: rank root+e+1 is position e of B and
 * p-2-e of A. A rank sends twice when both of its positions are active. */
static uint32_t chain_fanout(bool red, uint32_t p, uint32_t lo, uint32_t hi)
{
    int64_t a, b;
    if (red) {
        a = lo > p - 2 - hi ? lo : p - 2 - hi;
        b = hi < p - 2 - lo ? hi : p - 2 - lo;
        return a <= b ? 2 : 1;
    }
    if (lo == 0)
        return 2;
    a = lo > p - hi ? lo : p - hi;
    b = hi < p - lo ? hi : p - lo;
    return a <= b ? 2 : 1;
}

/* Most transfers one rank receives at a chain step with window [lo, hi]
 * (p > 2). Broadcast: rank root+d (d >= 1) receives from position d-1 of A
 * and p-1-d of B, a pair (e, p-2-e). Reduce: the root receives from
 * position p-2 of both chains; rank root+d, 2 <= d <= p-2, from position
 * p-2-d of A and d-2 of B, a pair (e, p-4-e). */
static uint32_t chain_fanin(bool red, uint32_t p, uint32_t lo, uint32_t hi)
{
    int64_t top = red ? (int64_t)p - 4 : (int64_t)p - 2;
    if (red && hi == p - 2)
        return 2;
    int64_t a = lo > top - hi ? lo : top - hi;
    int64_t b = hi < top - lo ? hi : top - lo;
    return top >= 0 && a <= b ? 2 : 1;
}

/* chain: a broadcast or reduce chain step, where on two ranks only one rank
 * sends (the root broadcasting, the other rank reducing into it). */
static tc_phase *add(tc_sched *s, uint32_t repeat, int64_t dir, uint32_t fanout, uint32_t fanin, bool chain,
                     const char *label)
{
    uint32_t p = s->req.p;
    tc_phase *ph;
    if (p == 2) {
        ph = tc_sched_add_phase(s, repeat, TC_PAT_SHIFT, dir, 2 * s->blk_bytes, label);
        if (ph) {
            ph->rank_bytes = ph->rank_bytes_in = 2 * s->blk_bytes;
            if (chain) {
                ph->src_first = s->req.op == TC_OP_REDUCE ? 1 - s->req.root : s->req.root;
                ph->src_count = 1;
            }
        }
        return ph;
    }
    ph = tc_sched_add_phase(s, repeat, TC_PAT_GENERIC, 0, s->blk_bytes, label);
    if (ph) {
        tc_phase_set_fan(ph, fanout, fanin, s->blk_bytes);
    }
    return ph;
}

static tc_status biring_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p;
    s->emit = emit_biring;
    if (req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE) {
        uint32_t c = req->chunks ? req->chunks : BIRING_PIPE_DEFAULT_CHUNKS;
        bool red = req->op == TC_OP_REDUCE;
        s->params[0] = c;
        s->nblk = s->nslots = 2 * c;
        s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
        if (p == 1)
            return TC_OK;
        /* As ring.c: only the steady state, where every chain position is
         * busy, repeats; fill and drain steps are phases of their own. */
        uint32_t total = c + p - 2;
        for (uint32_t t = 0; t < total;) {
            uint32_t lo, hi;
            chain_window(p, c, t, &lo, &hi);
            uint32_t run = lo == 0 && hi == p - 2 ? c - t : 1;
            if (!add(s, run, red ? -1 : 1, p == 2 ? 1 : chain_fanout(red, p, lo, hi),
                     p == 2 ? 1 : chain_fanin(red, p, lo, hi), true,
                     red ? "bidirectional chain reduce" : "bidirectional chain bcast"))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
            t += run;
        }
        return TC_OK;
    }
    uint32_t c = req->chunks ? req->chunks : 1;
    s->params[0] = c;
    s->nblk = s->nslots = 2 * p * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    if (p == 1)
        return TC_OK;
    for (uint32_t k = 0; k < c; k++) {
        bool ok = true;
        if (req->op != TC_OP_ALLGATHER)
            ok = ok && add(s, p - 1, 1, 2, 2, false, "bidirectional reduce-scatter");
        if (req->op != TC_OP_REDUCESCATTER)
            ok = ok && add(s, p - 1, 1, 2, 2, false, "bidirectional all-gather");
        if (!ok)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_biring = {biring_valid, biring_build};
