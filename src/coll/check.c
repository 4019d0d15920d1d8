/*
 * check.c - the data checker: executes a schedule on integer buffers and
 * verifies the exact result on every rank. This is what proves an algorithm
 * correct for a rank count. Values are small positive integers, so sums are
 * exact; slots that must be overwritten start as distinct negative poison,
 * so a missing or doubled contribution never cancels out.
 *
 * It also checks, for every step, the promises evaluators rely on: every
 * transfer's bytes equal the blocks it carries; the steps of a phase carry
 * identical traffic, reductions included; the phase's declared bytes, fanout, fanin, rank_bytes
 * and rank_bytes_in are exact; a SHIFT or XOR phase's transfers follow the
 * pattern from its declared sender range; a LOCAL phase stays inside
 * scale-up nodes; a TORUS phase moves data between ring neighbours on
 * exactly the rings its dims_mask names.
 *
 * Cost: O(transfers + segments) per step, plus a sort for phases that repeat
 * (to compare their steps); the final comparison is O(p x tracked slots),
 * each slot's expected sum computed once. The sampled mode tracks a few
 * slots on every rank so 65,536-rank schedules fit in memory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/coll.h"

static int64_t init_val(uint32_t r, uint32_t j)
{
    return (int64_t)(tc_mix64(((uint64_t)r << 32) ^ j) & 0xFFFFF) + 1;
}

static int64_t poison(uint32_t r, uint32_t j)
{
    return -((int64_t)1 << 40) - (int64_t)r * 1000003 - j;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* ---- traffic: the phase metadata against the transfers ---- */

typedef struct chk_traffic {
    uint32_t *fan_out, *fan_in;   /* per rank; all zero between steps */
    double *rb_out, *rb_in;
    tc_xfer *first;               /* the phase's first step, as emitted */
    tc_xfer *first_sorted;        /* the same sorted, made when needed */
    tc_xfer *sorted;              /* this step, sorted */
    size_t first_cap, nfirst, first_sorted_cap, sorted_cap;
    bool have_first_sorted;
    bool red;                     /* reductions are traffic (no NCCL protocol: cmp_key) */
    tc_xfer *nest_prev, *nest_cur; /* a phase's step sorted, for the next phase's nest (tc_phase.nest) */
    size_t nest_prev_cap, nest_cur_cap, nnest_prev;
    uint32_t stride[TC_MAX_DIMS]; /* torus: rank = sum of coordinate x stride */
} chk_traffic;

/* One step's figures, and the ranks where the maxima are (for messages). */
typedef struct step_tally {
    size_t n;                     /* transfers between distinct ranks */
    double maxb, rb_out, rb_in;
    uint32_t fan_out, fan_in, senders, mask;
    uint32_t out_rank, in_rank, rbo_rank, rbi_rank;
} step_tally;

static tc_status traffic_init(chk_traffic *tr, const tc_sched *s, tc_err *err)
{
    uint32_t p = tc_sched_parts(s); /* ranks and switches */
    memset(tr, 0, sizeof *tr);
    tr->fan_out = tc_calloc(p, sizeof *tr->fan_out);
    tr->fan_in = tc_calloc(p, sizeof *tr->fan_in);
    tr->rb_out = tc_calloc(p, sizeof *tr->rb_out);
    tr->rb_in = tc_calloc(p, sizeof *tr->rb_in);
    tr->red = s->proto == TC_PROTO_NONE;
    uint32_t st = 1;
    for (int d = 0; d < s->ndims && d < TC_MAX_DIMS; d++) {
        tr->stride[d] = st;
        st *= s->dims[d];
    }
    if (!tr->fan_out || !tr->fan_in || !tr->rb_out || !tr->rb_in)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

static void traffic_free(chk_traffic *tr)
{
    free(tr->fan_out), free(tr->fan_in), free(tr->rb_out), free(tr->rb_in);
    free(tr->first), free(tr->first_sorted), free(tr->sorted);
    free(tr->nest_prev), free(tr->nest_cur);
}

/* Ranks, slot ranges, and bytes against the blocks carried. */
static tc_status check_xfer(const tc_sched *s, uint32_t step, const tc_xfers *x, const tc_xfer *t, tc_err *err)
{
    uint32_t p = tc_sched_parts(s), ns = s->nslots;
    if (t->src >= p || t->dst >= p)
        return tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u outside %u ranks and %u switches", step, t->src,
                       t->dst, s->req.p, s->nsw);
    if (s->nsw && t->src >= s->req.p && t->dst >= s->req.p && t->src != t->dst &&
        !(s->sw_level && s->sw_level[t->src - s->req.p] && s->sw_level[t->dst - s->req.p]))
        return tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u between two node switches", step, t->src, t->dst);
    uint64_t cnt = 0;
    for (uint32_t k = 0; k < t->seg_cnt; k++) {
        const tc_seg *g = &x->segs[t->seg_off + k];
        if ((uint64_t)g->src_slot + g->count > ns || (uint64_t)g->dst_slot + g->count > ns)
            return tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u has a segment outside %u slots", step,
                           t->src, t->dst, ns);
        cnt += g->count;
    }
    if (t->src != t->dst && !near(t->bytes, (double)cnt * s->blk_bytes))
        return tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u claims %g bytes but carries %llu blocks of %g",
                       step, t->src, t->dst, t->bytes, (unsigned long long)cnt, s->blk_bytes);
    if (s->req.elt && t->src != t->dst) {
        /* Whole elements: block j holds q + (j < r) of them (MPICH's split);
         * the transfer is timed at the largest block, at most one element
         * per block above what it carries. */
        uint64_t count = (uint64_t)(s->req.bytes / s->req.elt), q = count / s->nblk, r = count % s->nblk, el = 0;
        for (uint32_t k = 0; k < t->seg_cnt; k++) {
            const tc_seg *g = &x->segs[t->seg_off + k];
            for (uint32_t j = 0; j < g->count; j++)
                el += q + ((g->src_slot + j) % s->nblk < r);
        }
        double exact = (double)el * s->req.elt;
        if (x->with_data && (t->bytes < exact * (1 - 1e-12) || t->bytes > exact + (double)cnt * s->req.elt * (1 + 1e-12)))
            return tc_fail(err, TC_EINTERNAL,
                           "step %u: transfer %u->%u claims %g bytes for %llu elements of %u bytes in %llu blocks",
                           step, t->src, t->dst, t->bytes, (unsigned long long)el, s->req.elt,
                           (unsigned long long)cnt);
    }
    return TC_OK;
}

/* SHIFT / XOR: the transfer goes where the pattern says, from the declared
 * sender range. */
static tc_status check_shift_xor(const tc_sched *s, uint32_t step, const tc_phase *ph, const tc_xfer *t, tc_err *err)
{
    uint32_t p = s->req.p;
    if (ph->src_count > 0) {
        uint64_t off = ((uint64_t)t->src + p - ph->src_first % p) % p;
        if (off >= ph->src_count)
            return tc_fail(err, TC_EINTERNAL,
                           "step %u (phase '%s'): transfer %u->%u from outside the declared senders "
                           "%u + [0, %u) mod %u",
                           step, ph->label, t->src, t->dst, ph->src_first, ph->src_count, p);
    }
    uint64_t want = UINT64_MAX; /* a negative XOR mask matches nothing */
    if (ph->pat == TC_PAT_SHIFT) {
        int64_t a = ph->arg % (int64_t)p;
        want = ((uint64_t)t->src + (uint64_t)(a < 0 ? a + (int64_t)p : a)) % p;
    } else if (ph->arg >= 0) {
        want = (uint64_t)t->src ^ (uint64_t)ph->arg;
    }
    if (want != t->dst)
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): transfer %u->%u does not follow its %s %lld", step,
                       ph->label, t->src, t->dst, ph->pat == TC_PAT_SHIFT ? "shift" : "xor", (long long)ph->arg);
    return TC_OK;
}

/* The dims_mask bits of the rings that carry src -> dst: dst is src's
 * neighbour along one dimension d, +1 (bit 2d) or -1 (bit 2d+1) around the
 * ring (both in a dimension of size 2). A mesh dimension closes its ring
 * logically (torus_rings.c; the formula evaluator routes the last-to-first
 * transfer back along the line), so wrap does not change who is a ring
 * neighbour, only the route. 0: not ring neighbours. */
static uint32_t ring_bits(const tc_sched *s, const chk_traffic *tr, uint32_t src, uint32_t dst)
{
    uint32_t bits = 0;
    for (int d = 0; d < s->ndims; d++) {
        uint32_t n = s->dims[d], a = src / tr->stride[d] % n, b = dst / tr->stride[d] % n;
        if (a == b)
            continue;
        if (bits)
            return 0; /* differs in two dimensions */
        if (b == (a + 1) % n)
            bits |= 1u << (2 * d);
        if (b == (a + n - 1) % n)
            bits |= 1u << (2 * d + 1);
        if (!bits)
            return 0;
    }
    return bits;
}

/* The transfer against its phase's declared pattern; *mask collects the
 * torus rings used. */
static tc_status check_pattern(const tc_sched *s, const chk_traffic *tr, uint32_t step, const tc_phase *ph,
                               const tc_xfer *t, uint32_t *mask, tc_err *err)
{
    switch (ph->pat) {
    case TC_PAT_SHIFT:
    case TC_PAT_XOR: return check_shift_xor(s, step, ph, t, err);
    case TC_PAT_LOCAL: {
        /* Rank r is endpoint r, so its node is r / node_size; a switch
         * participant's is that of the rank it stands beside. */
        uint32_t G = s->node_size ? s->node_size : 1, p = s->req.p;
        uint32_t a = t->src < p ? t->src : s->sw_rank[t->src - p], b = t->dst < p ? t->dst : s->sw_rank[t->dst - p];
        if (a / G != b / G)
            return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): LOCAL transfer %u->%u leaves its node of %u ranks",
                           step, ph->label, t->src, t->dst, G);
        return TC_OK;
    }
    case TC_PAT_ALL:
        if (!near(t->bytes, ph->bytes))
            return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): complete-exchange transfer %u->%u of %g bytes, "
                                              "the phase's are %g",
                           step, ph->label, t->src, t->dst, t->bytes, ph->bytes);
        return TC_OK;
    case TC_PAT_TORUS: {
        uint32_t hit = ring_bits(s, tr, t->src, t->dst) & ph->dims_mask;
        if (!hit)
            return tc_fail(err, TC_EINTERNAL,
                           "step %u (phase '%s'): TORUS transfer %u->%u is not between neighbours on a ring of "
                           "dims_mask 0x%x",
                           step, ph->label, t->src, t->dst, ph->dims_mask);
        *mask |= hit;
        return TC_OK;
    }
    default: return TC_OK;
    }
}

static void tally(chk_traffic *tr, const tc_xfer *t, step_tally *tl)
{
    uint32_t a = ++tr->fan_out[t->src], b = ++tr->fan_in[t->dst];
    double ro = tr->rb_out[t->src] += t->bytes, ri = tr->rb_in[t->dst] += t->bytes;
    /* Sizes are non-negative, so running maxima are the step's maxima. */
    tl->n++;
    tl->senders += a == 1;
    tl->maxb = fmax(tl->maxb, t->bytes);
    if (a > tl->fan_out)
        tl->fan_out = a, tl->out_rank = t->src;
    if (b > tl->fan_in)
        tl->fan_in = b, tl->in_rank = t->dst;
    if (ro > tl->rb_out)
        tl->rb_out = ro, tl->rbo_rank = t->src;
    if (ri > tl->rb_in)
        tl->rb_in = ri, tl->rbi_rank = t->dst;
}

/* The step's figures against the phase's declaration: exact, not bounds. */
static tc_status check_declared(const tc_sched *s, uint32_t step, const tc_phase *ph, const step_tally *tl, tc_err *err)
{
    const char *l = ph->label;
    if (!near(tl->maxb, ph->bytes))
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared bytes %g, largest transfer %g", step, l,
                       ph->bytes, tl->maxb);
    if (tl->fan_out != ph->fanout)
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared fanout %u, actual %u (rank %u sends %u)",
                       step, l, ph->fanout, tl->fan_out, tl->out_rank, tl->fan_out);
    if (tl->fan_in != ph->fanin)
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared fanin %u, actual %u (rank %u receives %u)",
                       step, l, ph->fanin, tl->fan_in, tl->in_rank, tl->fan_in);
    if (!near(tl->rb_out, ph->rank_bytes))
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared rank_bytes %g, actual %g (rank %u sends it)",
                       step, l, ph->rank_bytes, tl->rb_out, tl->rbo_rank);
    if (!near(tl->rb_in, ph->rank_bytes_in))
        return tc_fail(err, TC_EINTERNAL,
                       "step %u (phase '%s'): declared rank_bytes_in %g, actual %g (rank %u receives it)", step, l,
                       ph->rank_bytes_in, tl->rb_in, tl->rbi_rank);
    /* A shift's declared senders all send (a XOR's range may hold idle
     * ranks: those whose partner is not in the exchange). */
    uint32_t want_senders = ph->src_count ? ph->src_count : s->req.p;
    if (ph->pat == TC_PAT_SHIFT && tl->n > 0 && tl->senders != want_senders)
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): %u ranks send, the shift declares %u", step, l,
                       tl->senders, want_senders);
    /* a counted step: so many transfers between ranks, none above xfer_blks
     * blocks (tc_sched_count takes it for the step) */
    double xb = tc_phase_xfer_bytes(s, ph);
    if (ph->blk_xfers && (tl->n != ph->blk_xfers || !(tl->maxb <= xb * (1 + 1e-12))))
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared %llu transfers of %g bytes, actual %zu of "
                                          "at most %g", step, l, (unsigned long long)ph->blk_xfers, xb, tl->n,
                       tl->maxb);
    if (ph->pat == TC_PAT_TORUS && tl->mask != ph->dims_mask)
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): declared dims_mask 0x%x, rings used 0x%x", step, l,
                       ph->dims_mask, tl->mask);
    return TC_OK;
}

/* Transfers by (src, dst, bytes), then reduce; red: whether reduce
 * counts (a schedule without an NCCL protocol, whose reductions can cost
 * time: reduce_bw=). */
static int cmp_key(const tc_xfer *x, const tc_xfer *y, bool red)
{
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return red && x->reduce != y->reduce ? (x->reduce < y->reduce ? -1 : 1) : 0;
}

static int cmp_xfer(const void *a, const void *b)
{
    return cmp_key(a, b, true);
}

static bool same_xfer(const tc_xfer *a, const tc_xfer *b, bool red)
{
    return a->src == b->src && a->dst == b->dst && (!red || a->reduce == b->reduce) && near(a->bytes, b->bytes);
}

static tc_status reserve(tc_xfer **v, size_t *cap, size_t n, tc_err *err)
{
    if (n > *cap) {
        tc_xfer *w = realloc(*v, n * sizeof *w);
        if (!w)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        *v = w, *cap = n;
    }
    return TC_OK;
}

/* Copies the step's n non-local transfers into *v (grown as needed). */
static tc_status copy_nonlocal(const tc_xfers *x, size_t n, tc_xfer **v, size_t *cap, tc_err *err)
{
    if (reserve(v, cap, n, err))
        return TC_EINTERNAL;
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].src != x->v[i].dst)
            (*v)[k++] = x->v[i];
    return TC_OK;
}

/* Whether the step's transfers and the first step's are the same multiset,
 * by sorting both (the first step's once per phase). */
static tc_status same_sorted(chk_traffic *tr, const tc_xfers *x, size_t n, bool *same, tc_err *err)
{
    tc_status st = copy_nonlocal(x, n, &tr->sorted, &tr->sorted_cap, err);
    if (st == TC_OK && !tr->have_first_sorted) {
        st = reserve(&tr->first_sorted, &tr->first_sorted_cap, n, err);
        if (st == TC_OK && n > 0) {
            memcpy(tr->first_sorted, tr->first, n * sizeof *tr->first);
            qsort(tr->first_sorted, n, sizeof *tr->first_sorted, cmp_xfer);
        }
        tr->have_first_sorted = st == TC_OK;
    }
    if (st)
        return st;
    qsort(tr->sorted, n, sizeof *tr->sorted, cmp_xfer);
    *same = true;
    for (size_t i = 0; *same && i < n; i++)
        *same = same_xfer(&tr->sorted[i], &tr->first_sorted[i], tr->red);
    return TC_OK;
}

/* The steps of a repeated phase carry the same (src, dst, reduce, bytes)
 * multiset: evaluators cost the first step only (a reduction's cost,
 * reduce_bw=, included). Emitters usually list a phase's
 * transfers in the same order every step, so steps are compared in emission
 * order first and sorted only when that differs. */
static tc_status check_same_traffic(chk_traffic *tr, uint32_t step, const tc_phase *ph, const tc_xfers *x,
                                    size_t n, tc_err *err)
{
    if (ph->repeat == 1)
        return TC_OK;
    if (step == ph->first_step) {
        tr->nfirst = n;
        tr->have_first_sorted = false;
        return copy_nonlocal(x, n, &tr->first, &tr->first_cap, err);
    }
    bool same = n == tr->nfirst;
    for (size_t i = 0, k = 0; same && i < x->n; i++)
        if (x->v[i].src != x->v[i].dst)
            same = same_xfer(&x->v[i], &tr->first[k++], tr->red);
    if (!same && n == tr->nfirst) {
        tc_status st = same_sorted(tr, x, n, &same, err);
        if (st)
            return st;
    }
    if (!same)
        return tc_fail(err, TC_EINTERNAL, "step %u differs in traffic from the first step of its phase '%s'", step,
                       ph->label);
    return TC_OK;
}

/* A complete exchange: p (p - 1) transfers, every ordered pair of distinct
 * ranks once (a bitmap of the pairs up to 16,384 ranks). */
static tc_status check_complete(const tc_sched *s, uint32_t step, const tc_phase *ph, const tc_xfers *x, size_t n,
                                tc_err *err)
{
    uint64_t p = s->req.p;
    if (n != p * (p - 1))
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): a complete exchange of %llu ranks has %llu transfers, "
                                          "not %zu",
                       step, ph->label, (unsigned long long)p, (unsigned long long)(p * (p - 1)), n);
    if (p > 16384)
        return TC_OK;
    uint8_t *seen = tc_calloc((size_t)(p * p / 8 + 1), 1);
    if (!seen)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (size_t i = 0; i < x->n && st == TC_OK; i++) {
        const tc_xfer *t = &x->v[i];
        if (t->src == t->dst)
            continue;
        uint64_t k = (uint64_t)t->src * p + t->dst;
        if (seen[k / 8] & (1u << (k % 8)))
            st = tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): transfer %u->%u twice in a complete exchange", step,
                         ph->label, t->src, t->dst);
        seen[k / 8] |= (uint8_t)(1u << (k % 8));
    }
    free(seen);
    return st;
}

/* Whether the sorted multiset sub is part of sup: the same src, dst and
 * bytes, exactly, and reduce where it counts (the evaluators' bisection
 * relies on it). */
static bool sorted_within(const tc_xfer *sub, size_t nsub, const tc_xfer *sup, size_t nsup, bool red)
{
    size_t j = 0;
    for (size_t i = 0; i < nsub; i++, j++) {
        while (j < nsup && cmp_key(&sup[j], &sub[i], red) < 0)
            j++;
        if (j == nsup || cmp_key(&sup[j], &sub[i], red) != 0)
            return false;
    }
    return true;
}

/* A phase that claims to hold the previous phase's transfers and more
 * (nest +1), or a part of them (-1): checked at its first step against
 * the previous phase's (whose steps are all alike), both sorted. */
static tc_status check_nest(const tc_sched *s, chk_traffic *tr, uint32_t step, const tc_phase *ph,
                            const tc_xfers *x, size_t n, tc_err *err)
{
    if (step != ph->first_step)
        return TC_OK;
    uint32_t i = (uint32_t)(ph - s->phases);
    bool next = i + 1 < s->nphases && s->phases[i + 1].nest;
    if (!ph->nest && !next)
        return TC_OK;
    tc_status st = copy_nonlocal(x, n, &tr->nest_cur, &tr->nest_cur_cap, err);
    if (st)
        return st;
    qsort(tr->nest_cur, n, sizeof *tr->nest_cur, cmp_xfer);
    if (ph->nest && (i == 0 || !(ph->nest > 0 ? sorted_within(tr->nest_prev, tr->nnest_prev, tr->nest_cur, n, tr->red)
                                              : sorted_within(tr->nest_cur, n, tr->nest_prev, tr->nnest_prev, tr->red))))
        return tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): its transfers are not %s the previous phase's", step,
                       ph->label, ph->nest > 0 ? "a superset of" : "a subset of");
    tc_xfer *v = tr->nest_prev;
    size_t cap = tr->nest_prev_cap;
    tr->nest_prev = tr->nest_cur, tr->nest_prev_cap = tr->nest_cur_cap, tr->nnest_prev = n;
    tr->nest_cur = v, tr->nest_cur_cap = cap;
    return TC_OK;
}

/* Checks the step's transfers against its phase and the phase's first step. */
static tc_status check_traffic(const tc_sched *s, chk_traffic *tr, uint32_t step, const tc_phase *ph,
                               const tc_xfers *x, tc_err *err)
{
    step_tally tl;
    memset(&tl, 0, sizeof tl);
    tc_status st = TC_OK;
    size_t i = 0;
    for (; i < x->n && st == TC_OK; i++) {
        const tc_xfer *t = &x->v[i];
        st = check_xfer(s, step, x, t, err);
        if (st == TC_OK && t->src != t->dst) {
            st = check_pattern(s, tr, step, ph, t, &tl.mask, err);
            tally(tr, t, &tl);
        }
    }
    /* Back to zero for the next step: O(transfers), not O(p). */
    for (size_t j = 0; j < i; j++) {
        const tc_xfer *t = &x->v[j];
        if (t->src < tc_sched_parts(s) && t->dst < tc_sched_parts(s)) {
            tr->fan_out[t->src] = tr->fan_in[t->dst] = 0;
            tr->rb_out[t->src] = tr->rb_in[t->dst] = 0;
        }
    }
    if (st == TC_OK)
        st = check_declared(s, step, ph, &tl, err);
    if (st == TC_OK && ph->pat == TC_PAT_ALL)
        st = check_complete(s, step, ph, x, tl.n, err);
    if (st == TC_OK)
        st = check_same_traffic(tr, step, ph, x, tl.n, err);
    if (st == TC_OK)
        st = check_nest(s, tr, step, ph, x, tl.n, err);
    return st;
}

/* ---- data: execution on tracked slots ---- */

typedef struct chk_data {
    const tc_sched *s;
    uint32_t p, w;       /* ranks, tracked slots per rank */
    uint32_t P;          /* participants: the ranks, then the schedule's switches */
    uint32_t *slots;     /* sampled: the tracked slots, ascending; NULL: every slot */
    int32_t *where;      /* sampled: slot -> index into slots, or -1 */
    uint32_t *below;     /* sampled: slot j -> how many tracked slots are < j (nslots + 1) */
    int64_t *buf;        /* P x w values */
    int64_t *sum;        /* reductions: per tracked slot, the sum over ranks */
    int64_t *tmp;        /* values read in the current step */
    size_t tmpcap;
} chk_data;

static uint32_t slot_of(const chk_data *d, uint32_t k)
{
    return d->slots ? d->slots[k] : k;
}

/* Fills the buffers and, for reductions, each tracked slot's expected sum
 * (computed once: the final comparison is then O(p x w), not O(p^2 x w)). */
static void init_buffers(chk_data *d)
{
    const tc_sched *s = d->s;
    uint32_t nb = s->nblk, c = nb / d->p;
    for (uint32_t r = 0; r < d->P; r++)
        for (uint32_t k = 0; k < d->w; k++) {
            uint32_t j = slot_of(d, k);
            int64_t v = poison(r, j);
            if (j < nb && r < d->p) { /* a switch starts with nothing */
                switch (s->req.op) {
                case TC_OP_ALLGATHER: v = j / c == r ? init_val(r, j) : v; break;
                case TC_OP_BROADCAST: v = r == s->req.root ? init_val(r, j) : v; break;
                default: v = init_val(r, j); break;
                }
            }
            d->buf[(size_t)r * d->w + k] = v;
            if (d->sum && j < nb && r < d->p)
                d->sum[k] += v;
        }
}

static tc_status data_init(chk_data *d, const tc_sched *s, uint32_t *slots, int32_t *where, uint32_t w, tc_err *err)
{
    memset(d, 0, sizeof *d);
    d->s = s;
    d->p = s->req.p;
    d->P = tc_sched_parts(s);
    d->w = w;
    d->slots = slots;
    d->where = where;
    d->buf = tc_calloc((size_t)d->P * w, sizeof *d->buf);
    if (tc_op_reduces(s->req.op))
        d->sum = tc_calloc(w, sizeof *d->sum);
    if (!d->buf || (tc_op_reduces(s->req.op) && !d->sum))
        return tc_fail(err, TC_EINTERNAL, "out of memory for %u ranks x %u slots", d->p, w);
    init_buffers(d);
    return TC_OK;
}

static void data_free(chk_data *d)
{
    free(d->slots), free(d->where), free(d->below), free(d->buf), free(d->sum), free(d->tmp);
}

/* The tracked indices [*k0, *k1) whose slots a segment writes. */
static void written(const chk_data *d, const tc_seg *g, uint32_t *k0, uint32_t *k1)
{
    if (!d->slots) {
        *k0 = g->dst_slot, *k1 = g->dst_slot + g->count;
        return;
    }
    *k0 = d->below[g->dst_slot];
    *k1 = d->below[g->dst_slot + g->count];
}

/* Reads every source value the step writes to a tracked slot into tmp. */
static tc_status read_sources(chk_data *d, uint32_t step, const tc_xfers *x, tc_err *err)
{
    size_t total = 0;
    for (size_t i = 0; i < x->n; i++)
        for (uint32_t g = 0; g < x->v[i].seg_cnt; g++) {
            uint32_t k0, k1;
            written(d, &x->segs[x->v[i].seg_off + g], &k0, &k1);
            total += k1 - k0;
        }
    if (total > d->tmpcap) {
        int64_t *v = realloc(d->tmp, total * sizeof *v);
        if (!v)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        d->tmp = v, d->tmpcap = total;
    }
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        const int64_t *src = d->buf + (size_t)t->src * d->w;
        for (uint32_t g = 0; g < t->seg_cnt; g++) {
            const tc_seg *sg = &x->segs[t->seg_off + g];
            uint32_t k0, k1;
            written(d, sg, &k0, &k1);
            if (!d->slots) {
                for (uint32_t k = 0; k < sg->count; k++)
                    d->tmp[n++] = src[sg->src_slot + k];
                continue;
            }
            for (uint32_t k = k0; k < k1; k++) {
                uint32_t from = sg->src_slot + (d->slots[k] - sg->dst_slot);
                if (d->where[from] < 0)
                    return tc_fail(err, TC_EINVAL,
                                   "sampled check: step %u moves slot %u to slot %u (%u->%u), and only the "
                                   "second is sampled: use tc_sched_check",
                                   step, from, d->slots[k], t->src, t->dst);
                d->tmp[n++] = src[d->where[from]];
            }
        }
    }
    return TC_OK;
}

/* Executes one step: every transfer reads its sources as they were at the
 * start of the step, then copies or adds into its destination. */
static tc_status run_step(chk_data *d, uint32_t step, const tc_xfers *x, tc_err *err)
{
    tc_status st = read_sources(d, step, x, err);
    if (st)
        return st;
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        int64_t *dst = d->buf + (size_t)t->dst * d->w;
        for (uint32_t g = 0; g < t->seg_cnt; g++) {
            uint32_t k0, k1;
            written(d, &x->segs[t->seg_off + g], &k0, &k1);
            for (uint32_t k = k0; k < k1; k++, n++)
                dst[k] = t->reduce ? dst[k] + d->tmp[n] : d->tmp[n];
        }
    }
    return TC_OK;
}

/* The value rank r must hold in tracked slot k at the end, or false if the
 * slot is free. */
static bool expected(const chk_data *d, uint32_t r, uint32_t k, int64_t *v)
{
    const tc_sched *s = d->s;
    uint32_t nb = s->nblk, c = nb / d->p, j = slot_of(d, k);
    switch (s->req.op) {
    case TC_OP_ALLREDUCE:
    case TC_OP_REDUCESCATTER:
    case TC_OP_REDUCE:
        if (j >= nb || (s->req.op == TC_OP_REDUCESCATTER && j / c != r) ||
            (s->req.op == TC_OP_REDUCE && r != s->req.root))
            return false;
        *v = d->sum[k];
        return true;
    case TC_OP_ALLGATHER:
        if (j >= nb)
            return false;
        *v = init_val(j / c, j);
        return true;
    case TC_OP_BROADCAST:
        if (j >= nb)
            return false;
        *v = init_val(s->req.root, j);
        return true;
    case TC_OP_ALLTOALL:
        if (j < nb || j >= 2 * nb)
            return false;
        /* output block from q, element i = q's input block for r, element i */
        *v = init_val((j - nb) / c, r * c + (j - nb) % c);
        return true;
    case TC_OP_SENDRECV:
        if (j < nb || j >= 2 * nb)
            return false;
        /* output block i = the input block i of the rank before */
        *v = init_val(r ? r - 1 : d->p - 1, j - nb);
        return true;
    default:
        return false;
    }
}

/* A switch's buffer: every block slot it was written ends holding the
 * block's result (an in-network reduction keeps no partial behind:
 * the last it multicasts is the result). */
static bool switch_expected(const chk_data *d, uint32_t k, int64_t *v)
{
    const tc_sched *s = d->s;
    uint32_t nb = s->nblk, c = nb / d->p, j = slot_of(d, k);
    if (j >= nb)
        return false;
    switch (s->req.op) {
    case TC_OP_ALLREDUCE:
    case TC_OP_REDUCESCATTER:
    case TC_OP_REDUCE: *v = d->sum[k]; return true;
    case TC_OP_ALLGATHER: *v = init_val(j / c, j); return true;
    case TC_OP_BROADCAST: *v = init_val(s->req.root, j); return true;
    default: return false;
    }
}

static tc_status verify(const chk_data *d, tc_err *err)
{
    const tc_sched *s = d->s;
    for (uint32_t r = 0; r < d->P; r++)
        for (uint32_t k = 0; k < d->w; k++) {
            int64_t want, got = d->buf[(size_t)r * d->w + k];
            bool sw = r >= d->p, has = sw ? got != poison(r, slot_of(d, k)) && switch_expected(d, k, &want)
                                          : expected(d, r, k, &want);
            if (has && got != want)
                return tc_fail(err, TC_EINTERNAL, "%s/%s p=%u: %s %u slot %u holds %lld, expected %lld",
                               tc_op_name(s->req.op), tc_algo_name(s->algo), d->p, sw ? "switch" : "rank",
                               sw ? r - d->p : r, slot_of(d, k), (long long)got, (long long)want);
        }
    return TC_OK;
}

/* ---- the driver ---- */

/* What must hold before any step runs: block layout, sizes, phase cover. */
static tc_status check_layout(const tc_sched *s, tc_err *err)
{
    uint32_t p = s->req.p;
    tc_op op = s->req.op;
    if ((op == TC_OP_REDUCESCATTER || op == TC_OP_ALLGATHER || op == TC_OP_ALLTOALL) && s->nblk % p)
        return tc_fail(err, TC_EINTERNAL, "%s needs nblk (%u) divisible by p (%u)", tc_op_name(op), s->nblk, p);
    if ((op == TC_OP_ALLTOALL || op == TC_OP_SENDRECV) && s->nslots < 2 * s->nblk)
        return tc_fail(err, TC_EINTERNAL, "%s needs 2 nblk slots", tc_op_name(op));
    if (s->req.elt) {
        double count = floor(s->req.bytes / s->req.elt);
        if (count * s->req.elt != s->req.bytes || s->blk_bytes != tc_block_bytes(s->req.bytes, s->req.elt, s->nblk))
            return tc_fail(err, TC_EINTERNAL,
                           "size %g is not whole elements of %u bytes, or blocks of %g bytes are not its largest of %u",
                           s->req.bytes, s->req.elt, s->blk_bytes, s->nblk);
    } else if (!near(s->blk_bytes * s->nblk, s->req.bytes))
        return tc_fail(err, TC_EINTERNAL, "nblk * blk_bytes (%g) differs from the size %g", s->blk_bytes * s->nblk,
                       s->req.bytes);
    uint64_t torus_p = 1;
    for (int d = 0; d < s->ndims && d < TC_MAX_DIMS; d++)
        torus_p *= s->dims[d];
    uint32_t steps = 0;
    for (uint32_t i = 0; i < s->nphases; i++) {
        const tc_phase *ph = &s->phases[i];
        if (ph->first_step != steps)
            return tc_fail(err, TC_EINTERNAL, "phase %u starts at step %u, expected %u", i, ph->first_step, steps);
        if (ph->pat == TC_PAT_TORUS && (s->ndims < 1 || s->ndims > TC_MAX_DIMS || torus_p != p))
            return tc_fail(err, TC_EINTERNAL, "phase %u ('%s') is TORUS but the schedule has no torus of %u ranks", i,
                           ph->label, p);
        steps += ph->repeat;
    }
    if (steps != s->nsteps)
        return tc_fail(err, TC_EINTERNAL, "phases cover %u steps, schedule has %u", steps, s->nsteps);
    return TC_OK;
}

static tc_status run_check(const tc_sched *s, chk_data *d, tc_err *err)
{
    chk_traffic tr;
    tc_status st = traffic_init(&tr, s, err);
    tc_xfers x;
    tc_xfers_init(&x, true);
    for (uint32_t step = 0; step < s->nsteps && st == TC_OK; step++) {
        st = tc_sched_emit(s, step, &x);
        if (st) {
            tc_fail(err, st, "step %u: emit failed", step);
            break;
        }
        st = check_traffic(s, &tr, step, tc_sched_phase_of(s, step), &x, err);
        if (st == TC_OK)
            st = run_step(d, step, &x, err);
    }
    if (st == TC_OK)
        st = verify(d, err);
    traffic_free(&tr);
    tc_xfers_free(&x);
    return st;
}

tc_status tc_sched_check(const tc_sched *s, tc_err *err)
{
    tc_status st = check_layout(s, err);
    if (st)
        return st;
    chk_data d;
    st = data_init(&d, s, NULL, NULL, s->nslots, err);
    if (st == TC_OK)
        st = run_check(s, &d, err);
    data_free(&d);
    return st;
}

/* Draws k distinct slots of [0, n) (Floyd's algorithm), marks them in where
 * (then numbers them in ascending order) and lists them in slots. */
static void draw_sample(uint32_t n, uint32_t k, uint64_t seed, uint32_t *slots, int32_t *where)
{
    for (uint32_t j = n - k, i = 0; j < n; j++, i++) {
        uint32_t t = (uint32_t)(tc_mix64(seed ^ tc_mix64(j)) % ((uint64_t)j + 1));
        where[where[t] < 0 ? t : j] = 0;
    }
    uint32_t m = 0;
    for (uint32_t j = 0; j < n; j++)
        if (where[j] == 0) {
            slots[m] = j;
            where[j] = (int32_t)m++;
        }
}

tc_status tc_sched_check_sampled(const tc_sched *s, uint32_t blocks_per_rank, uint64_t seed, tc_err *err)
{
    if (blocks_per_rank == 0)
        return tc_fail(err, TC_EINVAL, "sampled check: blocks_per_rank must be at least 1");
    if (blocks_per_rank >= s->nslots)
        return tc_sched_check(s, err);
    if (s->req.op == TC_OP_ALLTOALL || s->req.op == TC_OP_SENDRECV)
        return tc_fail(err, TC_EINVAL, "sampled check: %s moves blocks between slot indices; use tc_sched_check",
                       s->req.op == TC_OP_ALLTOALL ? "all-to-all" : "sendrecv");
    tc_status st = check_layout(s, err);
    if (st)
        return st;
    uint32_t k = blocks_per_rank < s->nblk ? blocks_per_rank : s->nblk;
    uint32_t *slots = tc_calloc(k, sizeof *slots);
    int32_t *where = malloc((size_t)s->nslots * sizeof *where);
    if (!slots || !where) {
        free(slots), free(where);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    memset(where, 0xff, (size_t)s->nslots * sizeof *where); /* -1: not sampled */
    draw_sample(s->nblk, k, seed, slots, where);
    chk_data d;
    st = data_init(&d, s, slots, where, k, err);
    if (st == TC_OK && !(d.below = malloc(((size_t)s->nslots + 1) * sizeof *d.below)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t j = 0, m = 0; st == TC_OK && j <= s->nslots; j++) {
        d.below[j] = m;
        m += j < s->nslots && where[j] >= 0;
    }
    if (st == TC_OK)
        st = run_check(s, &d, err);
    data_free(&d);
    return st;
}
