/*
 * swing.c - Swing all-reduce, bandwidth-optimal variant (De Sensi, Bonato,
 * Saam, Hoefler, "Swing: Short-cutting Rings for Higher Bandwidth Allreduce",
 * NSDI 2024, arXiv:2401.09356v2), for p a power of two. The peer rule
 * below is the paper's pi(r, s) with rho(s) = sum_{i<=s} (-2)^i (read in a
 * summary of the paper, https://themoonlight.io/review/swing-short-cutting-
 * rings-for-higher-bandwidth-allreduce); the block sets sent in each step
 * (reach, below) are topocc's derivation, proven by the data checker, and
 * not checked against the paper's; the paper's multidimensional-torus and
 * non-power-of-two versions are not implemented.
 *
 * In step s (0 <= s < L = log2 p) rank r exchanges with
 * peer(r, s) = r + rho(s) (r even) or r - rho(s) (r odd), mod p, where
 * rho(s) = sum_{i<=s} (-2)^i = (1 - (-2)^(s+1))/3 = 1, -1, 3, -5, 11, ...
 * The peer relation is an involution (rho is odd, so parity flips). Short
 * distances alternate in sign, which on a torus keeps the ring-like locality
 * that recursive doubling loses.
 *
 * reach(r, L) = {r}; reach(r, s) = reach(r, s+1) U reach(peer(r, s), s+1) is
 * the set of ranks r's data reaches in steps s..L-1 (p / 2^s ranks).
 * Reduce-scatter, step s: r sends to q = peer(r, s) its partial sums of the
 * blocks reach(q, s+1), owned in the end by ranks q reaches later; after L
 * steps rank r holds block r fully reduced. All-gather mirrors it: steps
 * L-1 down to 0, r sends the blocks reach(r, s+1) it has to peer(r, s).
 * Each transfer carries p / 2^(s+1) blocks; the sets are not contiguous, so
 * one segment is emitted per run of consecutive blocks. Reduce-scatter and
 * all-gather are the two halves on their own. chunks is not used.
 */
#include <stdlib.h>
#include "coll/algos.h"

static bool swing_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op != TC_OP_ALLREDUCE && op != TC_OP_REDUCESCATTER && op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "swing implements allreduce, reducescatter and allgather");
        return false;
    }
    if (!tc_is_pow2(p)) {
        tc_fail(err, TC_EINVAL, "swing needs a power-of-two rank count");
        return false;
    }
    return true;
}

static int64_t rho(uint32_t s)
{
    int64_t m = 1, sum = 0;
    for (uint32_t i = 0; i <= s; i++, m *= -2)
        sum += m;
    return sum;
}

static uint32_t peer(uint32_t r, uint32_t s, uint32_t p)
{
    int64_t d = rho(s) % (int64_t)p;
    if (r & 1)
        d = -d;
    return (uint32_t)(((int64_t)r + d + 2 * (int64_t)p) % p);
}

/* Emits reach(q, from) as segments, one per run of consecutive blocks. */
static tc_status emit_reach(const tc_sched *s, uint32_t q, uint32_t from, uint32_t *buf, tc_xfers *x)
{
    uint32_t p = s->req.p, L = s->params[0], n = 1;
    buf[0] = q;
    for (uint32_t t = from; t < L; t++) {
        for (uint32_t i = 0; i < n; i++)
            buf[n + i] = peer(buf[i], t, p);
        n *= 2;
    }
    qsort(buf, n, sizeof *buf, tc_cmp_u32);
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && buf[j] == buf[j - 1] + 1)
            j++;
        tc_xfers_seg(x, buf[i], buf[i], j - i);
        i = j;
    }
    return TC_OK;
}

static tc_status emit_swing(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, L = s->params[0];
    bool rs = s->req.op != TC_OP_ALLGATHER && step < L;
    uint32_t st = rs ? step : (s->req.op == TC_OP_ALLGATHER ? step : step - L);
    uint32_t sw = rs ? st : L - 1 - st; /* the swing step s */
    double bytes = (double)(p >> (sw + 1)) * s->blk_bytes;
    uint32_t *buf = NULL;
    if (x->with_data && !(buf = malloc((size_t)p * sizeof *buf)))
        return TC_EINTERNAL;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t q = peer(r, sw, p);
        tc_xfers_add(x, r, q, bytes, rs);
        if (buf)
            emit_reach(s, rs ? q : r, sw + 1, buf, x);
    }
    free(buf);
    return TC_OK;
}

static tc_status swing_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, L = tc_log2_floor(p);
    s->emit = emit_swing;
    s->nblk = s->nslots = p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    s->params[0] = L;
    if (req->op != TC_OP_ALLGATHER)
        for (uint32_t k = 0; k < L; k++)
            if (!tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, (double)(p >> (k + 1)) * s->blk_bytes,
                                    "swing reduce-scatter"))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (req->op != TC_OP_REDUCESCATTER)
        for (uint32_t k = L; k-- > 0;)
            if (!tc_sched_add_phase(s, 1, TC_PAT_GENERIC, 0, (double)(p >> (k + 1)) * s->blk_bytes,
                                    "swing all-gather"))
                return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

const tc_algo_impl tc_impl_swing = {swing_valid, swing_build};
