/*
 * check.c - the data checker: executes a schedule on integer buffers and
 * verifies the exact result on every rank. This is what proves an algorithm
 * correct for a rank count. Values are small positive integers, so sums are
 * exact; slots that must be overwritten start as distinct negative poison,
 * so a missing or doubled contribution never cancels out.
 *
 * It also checks the promises evaluators rely on: every transfer's bytes
 * equal the blocks it carries, steps of one phase carry identical traffic,
 * the phase's declared bytes, fan-out and per-rank bytes are exact, and a
 * SHIFT or XOR phase's transfers follow the pattern from its declared
 * sender range.
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

static int cmp_xfer(const void *a, const void *b)
{
    const tc_xfer *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* A non-local transfer against its phase's declared pattern: a SHIFT or XOR
 * phase's transfers go where the pattern says, from its sender range. */
static tc_status check_pattern(const tc_sched *s, uint32_t step, const tc_phase *ph, const tc_xfer *t, tc_err *err)
{
    uint32_t p = s->req.p;
    if (ph->pat != TC_PAT_SHIFT && ph->pat != TC_PAT_XOR)
        return TC_OK;
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

/* Checks the step's transfers against its phase and the first step's traffic. */
static tc_status check_traffic(const tc_sched *s, uint32_t step, const tc_phase *ph, tc_xfers *x,
                               tc_xfer **first, size_t *nfirst, tc_err *err)
{
    uint32_t p = s->req.p;
    double maxb = 0;
    uint32_t *fan = tc_calloc(p, sizeof *fan);
    double *rb = tc_calloc(p, sizeof *rb);
    tc_xfer *sorted = tc_calloc(x->n, sizeof *sorted);
    if (!fan || !rb || !sorted) {
        free(fan), free(rb), free(sorted);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    size_t n = 0;
    tc_status st = TC_OK;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        if (t->src == t->dst)
            continue;
        uint64_t cnt = 0;
        for (uint32_t k = 0; k < t->seg_cnt; k++)
            cnt += x->segs[t->seg_off + k].count;
        if (!near(t->bytes, (double)cnt * s->blk_bytes) && st == TC_OK)
            st = tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u claims %g bytes but carries %llu blocks of %g",
                         step, t->src, t->dst, t->bytes, (unsigned long long)cnt, s->blk_bytes);
        if (st == TC_OK)
            st = check_pattern(s, step, ph, t, err);
        maxb = fmax(maxb, t->bytes);
        fan[t->src]++;
        rb[t->src] += t->bytes;
        sorted[n++] = *t;
    }
    uint32_t maxfan = 0, senders = 0;
    double maxrb = 0;
    for (uint32_t r = 0; r < p; r++) {
        maxfan = fan[r] > maxfan ? fan[r] : maxfan;
        maxrb = fmax(maxrb, rb[r]);
        senders += fan[r] > 0;
    }
    /* A shift's declared senders all send (a XOR's range may hold idle
     * ranks: those whose partner is not in the exchange). */
    uint32_t want_senders = ph->src_count ? ph->src_count : p;
    if (st == TC_OK && ph->pat == TC_PAT_SHIFT && n > 0 && senders != want_senders)
        st = tc_fail(err, TC_EINTERNAL, "step %u (phase '%s'): %u ranks send, the shift declares %u", step,
                     ph->label, senders, want_senders);
    if (st == TC_OK && n > 0 && (!near(maxb, ph->bytes) || maxfan != ph->fanout || !near(maxrb, ph->rank_bytes)))
        st = tc_fail(err, TC_EINTERNAL,
                     "step %u (phase '%s'): declared bytes %g fanout %u rank_bytes %g, actual %g %u %g",
                     step, ph->label, ph->bytes, ph->fanout, ph->rank_bytes, maxb, maxfan, maxrb);
    qsort(sorted, n, sizeof *sorted, cmp_xfer);
    if (st == TC_OK) {
        if (step == ph->first_step) {
            free(*first);
            *first = sorted;
            *nfirst = n;
            sorted = NULL;
        } else {
            bool same = n == *nfirst;
            for (size_t i = 0; same && i < n; i++)
                same = sorted[i].src == (*first)[i].src && sorted[i].dst == (*first)[i].dst &&
                       near(sorted[i].bytes, (*first)[i].bytes);
            if (!same)
                st = tc_fail(err, TC_EINTERNAL, "step %u differs in traffic from the first step of its phase '%s'",
                             step, ph->label);
        }
    }
    free(fan), free(rb), free(sorted);
    return st;
}

static tc_status run_step(const tc_sched *s, uint32_t step, int64_t *buf, tc_xfers *x, int64_t **tmp,
                          size_t *tmpcap, tc_err *err)
{
    uint32_t p = s->req.p, ns = s->nslots;
    size_t total = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        if (t->src >= p || t->dst >= p)
            return tc_fail(err, TC_EINTERNAL, "step %u: transfer %u->%u outside %u ranks", step, t->src, t->dst, p);
        for (uint32_t k = 0; k < t->seg_cnt; k++) {
            const tc_seg *g = &x->segs[t->seg_off + k];
            if ((uint64_t)g->src_slot + g->count > ns || (uint64_t)g->dst_slot + g->count > ns)
                return tc_fail(err, TC_EINTERNAL, "step %u: segment outside %u slots", step, ns);
            total += g->count;
        }
    }
    if (total > *tmpcap) {
        int64_t *v = realloc(*tmp, total * sizeof *v);
        if (!v)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        *tmp = v;
        *tmpcap = total;
    }
    /* Read every source as it was at the start of the step, then write. */
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        for (uint32_t g = 0; g < t->seg_cnt; g++) {
            const tc_seg *sg = &x->segs[t->seg_off + g];
            memcpy(*tmp + k, buf + (size_t)t->src * ns + sg->src_slot, sg->count * sizeof(int64_t));
            k += sg->count;
        }
    }
    k = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *t = &x->v[i];
        for (uint32_t g = 0; g < t->seg_cnt; g++) {
            const tc_seg *sg = &x->segs[t->seg_off + g];
            int64_t *d = buf + (size_t)t->dst * ns + sg->dst_slot;
            for (uint32_t e = 0; e < sg->count; e++)
                d[e] = t->reduce ? d[e] + (*tmp)[k + e] : (*tmp)[k + e];
            k += sg->count;
        }
    }
    return TC_OK;
}

static void init_buffers(const tc_sched *s, int64_t *buf)
{
    uint32_t p = s->req.p, ns = s->nslots, nb = s->nblk, c = nb / (p ? p : 1);
    for (uint32_t r = 0; r < p; r++)
        for (uint32_t j = 0; j < ns; j++) {
            int64_t v = poison(r, j);
            if (j < nb) {
                switch (s->req.op) {
                case TC_OP_ALLGATHER: v = j / c == r ? init_val(r, j) : poison(r, j); break;
                case TC_OP_BROADCAST: v = r == s->req.root ? init_val(r, j) : poison(r, j); break;
                default: v = init_val(r, j); break;
                }
            }
            buf[(size_t)r * ns + j] = v;
        }
}

/* The value rank r must hold in slot j at the end, or false if j is free. */
static bool expected(const tc_sched *s, uint32_t r, uint32_t j, int64_t *v)
{
    uint32_t p = s->req.p, nb = s->nblk, c = nb / p;
    int64_t sum = 0;
    switch (s->req.op) {
    case TC_OP_ALLREDUCE:
    case TC_OP_REDUCESCATTER:
    case TC_OP_REDUCE:
        if (j >= nb || (s->req.op == TC_OP_REDUCESCATTER && j / c != r) ||
            (s->req.op == TC_OP_REDUCE && r != s->req.root))
            return false;
        for (uint32_t q = 0; q < p; q++)
            sum += init_val(q, j);
        *v = sum;
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
        /* output block from q, element i  = q's input block for r, element i */
        *v = init_val((j - nb) / c, r * c + (j - nb) % c);
        return true;
    default:
        return false;
    }
}

tc_status tc_sched_check(const tc_sched *s, tc_err *err)
{
    uint32_t p = s->req.p;
    tc_op op = s->req.op;
    if ((op == TC_OP_REDUCESCATTER || op == TC_OP_ALLGATHER || op == TC_OP_ALLTOALL) && s->nblk % p)
        return tc_fail(err, TC_EINTERNAL, "%s needs nblk (%u) divisible by p (%u)", tc_op_name(op), s->nblk, p);
    if (op == TC_OP_ALLTOALL && s->nslots < 2 * s->nblk)
        return tc_fail(err, TC_EINTERNAL, "alltoall needs 2 nblk slots");
    if (!near(s->blk_bytes * s->nblk, s->req.bytes * (op == TC_OP_ALLTOALL ? 1 : 1)))
        return tc_fail(err, TC_EINTERNAL, "nblk * blk_bytes (%g) differs from the size %g", s->blk_bytes * s->nblk,
                       s->req.bytes);
    uint32_t steps = 0;
    for (uint32_t i = 0; i < s->nphases; i++) {
        if (s->phases[i].first_step != steps)
            return tc_fail(err, TC_EINTERNAL, "phase %u starts at step %u, expected %u", i, s->phases[i].first_step, steps);
        steps += s->phases[i].repeat;
    }
    if (steps != s->nsteps)
        return tc_fail(err, TC_EINTERNAL, "phases cover %u steps, schedule has %u", steps, s->nsteps);

    int64_t *buf = tc_calloc((size_t)p * s->nslots, sizeof *buf);
    if (!buf)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    init_buffers(s, buf);
    tc_xfers x;
    tc_xfers_init(&x, true);
    int64_t *tmp = NULL;
    size_t tmpcap = 0;
    tc_xfer *first = NULL;
    size_t nfirst = 0;
    tc_status st = TC_OK;
    for (uint32_t step = 0; step < s->nsteps && st == TC_OK; step++) {
        st = tc_sched_emit(s, step, &x);
        if (st) {
            tc_fail(err, st, "step %u: emit failed", step);
            break;
        }
        st = check_traffic(s, step, tc_sched_phase_of(s, step), &x, &first, &nfirst, err);
        if (st == TC_OK)
            st = run_step(s, step, buf, &x, &tmp, &tmpcap, err);
    }
    for (uint32_t r = 0; r < p && st == TC_OK; r++)
        for (uint32_t j = 0; j < s->nslots; j++) {
            int64_t want;
            if (expected(s, r, j, &want) && buf[(size_t)r * s->nslots + j] != want) {
                st = tc_fail(err, TC_EINTERNAL, "%s/%s p=%u: rank %u slot %u holds %lld, expected %lld",
                             tc_op_name(op), tc_algo_name(s->algo), p, r, j,
                             (long long)buf[(size_t)r * s->nslots + j], (long long)want);
                break;
            }
        }
    free(first);
    free(tmp);
    free(buf);
    tc_xfers_free(&x);
    return st;
}
