/*
 * flow_fold.c - rank symmetry for the flow simulator (docs/MODEL.md,
 * "flow: rank symmetry").
 *
 * A translation of the ranks by T (rank r -> r + T mod p) that maps the
 * schedule, the routes and the links' bandwidths and latencies onto
 * themselves maps every state of the simulation onto a state of the same
 * simulation: the run starts symmetric (every rank at step 0, nothing in
 * flight) and every rule of the simulator (dependencies, overhead clocks,
 * max-min rates, which are unique) commutes with the translation, so it
 * stays symmetric. Then ranks r and r + T do the same things at the same
 * times, and only the ranks 0..T-1 need simulating: each of their
 * transfers stands for n = p / T, its images.
 *
 * The folded simulation keeps the ranks 0..T-1 and the transfers they
 * send; a transfer to rank d is received by rank d mod T (the receive of
 * rank d's image), and is routed on its real path. The max-min rates of
 * the whole network are those of the folded one in which each link stands
 * for its orbit (the links the translation maps it to): a flow that
 * crosses c links of one orbit of size o weighs c n / o on the orbit's
 * representative, and the capacities are equal along an orbit. So the
 * folded run is the whole run, seen through one class of ranks: times,
 * rates and orders are those of the full simulation.
 *
 * Nothing is assumed: the translation is tried for every divisor T of p
 * (smallest first) and kept only if, for every phase (whose steps carry
 * identical traffic), the set of (sender, receiver, bytes) of its first
 * step is invariant (and whether each transfer reduces, where a reduction
 * costs time: reduce_bw=), and for every transfer (a, b) of it the path of
 * (a + T, b + T) is the image of the path of (a, b) under one consistent
 * bijection of the links that keeps bandwidth and latency (and spray
 * fractions). A degraded link that a transfer crosses, an uneven rank map,
 * ECMP hashes that do not translate: no fold, the whole network is run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/eval_int.h"
#include "eval/flow_sim.h"

static uint32_t endpoint(const fl_job *J, uint32_t r)
{
    return J->map ? J->map[r] : r;
}

typedef struct fd_try {
    uint32_t *sig, *inv;   /* the link bijection found so far (NONE: none yet) */
    uint32_t *p1, *p2;     /* scratch paths */
    double *w1, *w2;
    uint32_t *idx;         /* a step's transfers grouped by sender */
    size_t xcap;
    uint32_t *off;         /* p + 1: where each sender's group starts */
    uint32_t *sent;        /* p: the next place in each sender's group */
    tc_xfers xb;           /* one sender's transfers (all-pairs steps, by parts) */
} fd_try;

static bool link_map(fl_sim *S, fd_try *w, uint32_t l1, uint32_t l2)
{
    const tc_link *L1 = &S->t->links[l1], *L2 = &S->t->links[l2];
    if (S->cap[l1] != S->cap[l2] || L1->lat != L2->lat)
        return false;
    if (w->sig[l1] == NONE && w->inv[l2] == NONE) {
        w->sig[l1] = l2;
        w->inv[l2] = l1;
        return true;
    }
    return w->sig[l1] == l2 && w->inv[l2] == l1;
}

/* Whether the translation by T maps transfer (a, b)'s path onto (a+T, b+T)'s. */
static bool path_maps(fl_sim *S, fd_try *w, const fl_job *J, uint32_t a, uint32_t b, uint32_t T)
{
    uint32_t p = J->pfull;
    uint32_t ea = endpoint(J, a), eb = endpoint(J, b);
    uint32_t fa = endpoint(J, (a + T) % p), fb = endpoint(J, (b + T) % p);
    if ((ea == eb) != (fa == fb))
        return false;
    if (ea == eb)
        return true;
    uint32_t n1 = tc_fl_route(S, ea, eb);
    memcpy(w->p1, S->path, n1 * sizeof *w->p1);
    memcpy(w->w1, S->pw, n1 * sizeof *w->w1);
    uint32_t n2 = tc_fl_route(S, fa, fb);
    if (n1 == 0 || n1 != n2)
        return false;
    for (uint32_t k = 0; k < n1; k++)
        if (w->w1[k] != S->pw[k] || !link_map(S, w, w->p1[k], S->path[k]))
            return false;
    return true;
}

/* try_T for a step emitted sender by sender (an all-pairs step, whose
 * p (p - 1) transfers are never held at once): sender a's transfers, in
 * order, map onto sender a + T's, routes included. */
static bool try_T_parts(fl_sim *S, fd_try *w, const fl_job *J, uint32_t step, uint32_t T)
{
    const tc_sched *s = J->s;
    uint32_t p = J->pfull;
    for (uint32_t a = 0; a < p; a++) {
        uint32_t b = (a + T) % p;
        if (tc_sched_emit_part(s, step, a, a + 1, &S->xf) != TC_OK ||
            tc_sched_emit_part(s, step, b, b + 1, &w->xb) != TC_OK || S->xf.n != w->xb.n)
            return false;
        for (size_t k = 0; k < S->xf.n; k++) {
            const tc_xfer *x = &S->xf.v[k], *y = &w->xb.v[k];
            if (x->src != a || x->dst >= p || !path_maps(S, w, J, x->src, x->dst, T) || y->src != b ||
                y->dst != (x->dst + T) % p || y->bytes != x->bytes || (J->gamma > 0 && y->reduce != x->reduce))
                return false;
        }
    }
    return true;
}

/* Whether the translation of the ranks by T is a symmetry of job 0's run. */
static bool try_T(fl_sim *S, fd_try *w, uint32_t T)
{
    fl_job *J = &S->jobs[0];
    const tc_sched *s = J->s;
    uint32_t p = J->pfull;
    uint32_t nl = S->t->n_links;
    for (uint32_t l = 0; l < nl; l++)
        w->sig[l] = w->inv[l] = NONE;
    for (uint32_t i = 0; i < s->nphases; i++) {
        const tc_phase *ph = &s->phases[i];
        if (ph->repeat == 0)
            continue;
        if (tc_sched_part_senders(s, ph, tc_eval_chunk()) < p) {
            if (!try_T_parts(S, w, J, ph->first_step, T))
                return false;
            continue;
        }
        if (tc_sched_emit(s, ph->first_step, &S->xf) != TC_OK)
            return false;
        size_t n = S->xf.n;
        if (n >= UINT32_MAX)
            return false;
        if (n > w->xcap) {
            size_t c = w->xcap;
            void *x = w->idx;
            if (!tc_grow(&x, &c, n, sizeof *w->idx))
                return false;
            w->idx = x;
            w->xcap = c;
        }
        /* Routes first, in rank order: a translation that fails, fails
         * at the first boundary it crosses. */
        memset(w->off, 0, (p + 1) * sizeof *w->off);
        for (size_t k = 0; k < n; k++) {
            const tc_xfer *x = &S->xf.v[k];
            if (x->src >= p || x->dst >= p || !path_maps(S, w, J, x->src, x->dst, T))
                return false;
            w->off[x->src + 1]++;
        }
        /* Each sender's transfers in the emitted order (a counting sort):
         * sender a + T's k-th must be sender a's k-th translated, since a
         * rank's overhead clock takes its messages in that order. */
        for (uint32_t r = 0; r < p; r++)
            w->off[r + 1] += w->off[r];
        memcpy(w->sent, w->off, p * sizeof *w->sent);
        for (size_t k = 0; k < n; k++)
            w->idx[w->sent[S->xf.v[k].src]++] = (uint32_t)k;
        for (uint32_t a = 0; a < p; a++) {
            uint32_t b = (a + T) % p, na = w->off[a + 1] - w->off[a];
            if (w->off[b + 1] - w->off[b] != na)
                return false;
            for (uint32_t k = 0; k < na; k++) {
                const tc_xfer *x = &S->xf.v[w->idx[w->off[a] + k]], *y = &S->xf.v[w->idx[w->off[b] + k]];
                if (y->dst != (x->dst + T) % p || y->bytes != x->bytes || (J->gamma > 0 && y->reduce != x->reduce))
                    return false;
            }
        }
    }
    return true;
}

/* Orbits of the links the bijection reaches: a representative (the
 * smallest ID) and the weight n / orbit size. */
static bool orbits(fl_sim *S, fd_try *w, uint32_t n)
{
    uint32_t nl = S->t->n_links;
    for (uint32_t l = 0; l < nl; l++) {
        S->lrep[l] = l;
        S->lw[l] = 1;
    }
    uint8_t *seen = calloc(nl ? nl : 1, 1);
    if (!seen)
        return false;
    bool ok = true;
    for (uint32_t l = 0; l < nl && ok; l++) {
        if (seen[l] || w->sig[l] == NONE)
            continue;
        uint32_t c = 0, x = l;
        do {
            seen[x] = 1;
            S->lrep[x] = l;
            x = w->sig[x];
            c++;
        } while (x != NONE && x != l && c <= n);
        if (x != l || n % c) {
            ok = false;
            break;
        }
        x = l;
        do {
            S->lw[x] = (double)(n / c);
            x = w->sig[x];
        } while (x != l);
    }
    free(seen);
    return ok;
}

tc_status tc_fl_fold_init(fl_sim *S)
{
    S->fold_T = 0;
    if (S->o.no_skip)
        S->fold_off = "--no-skip";
    else if (S->o.trace_path)
        S->fold_off = "tracing";
    else if (S->njobs != 1)
        S->fold_off = "several jobs";
    else if (S->jobs[0].lanes > 1)
        S->fold_off = "independent lanes (channels)";
    if (S->fold_off)
        return TC_OK;
    fl_job *J = &S->jobs[0];
    uint32_t p = J->pfull, nl = S->t->n_links;
    /* A rank's messages take its overhead clock in the schedule's order as
     * it posts them, parked or not (flow.c, flow_post), which the check
     * below requires to translate; a parked message then starts when its
     * receiver, whose times translate too, is ready. */
    uint64_t steps = 0;
    for (uint32_t i = 0; i < J->s->nphases; i++)
        steps += J->s->phases[i].repeat;
    /* Phases that do not cover the schedule cannot vouch for it. */
    if (steps != J->s->nsteps) {
        S->fold_off = "the schedule's phases do not cover its steps";
        return TC_OK;
    }
    S->fold_off = "no translation of the ranks maps the schedule, its routes and the links onto themselves";
    if (p < 2 || nl == 0)
        return TC_OK;
    fd_try w = {0};
    tc_xfers_init(&w.xb, false);
    w.sig = malloc(nl * sizeof *w.sig);
    w.inv = malloc(nl * sizeof *w.inv);
    w.p1 = malloc(S->stride * sizeof *w.p1);
    w.w1 = malloc(S->stride * sizeof *w.w1);
    w.sent = malloc(p * sizeof *w.sent);
    w.off = malloc(((size_t)p + 1) * sizeof *w.off);
    S->lrep = malloc(nl * sizeof *S->lrep);
    S->lw = malloc(nl * sizeof *S->lw);
    tc_status st = TC_OK;
    if (!w.sig || !w.inv || !w.p1 || !w.w1 || !w.sent || !w.off || !S->lrep || !S->lw) {
        st = S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
    } else {
        for (uint32_t T = 1; T <= p / 2; T++) {
            if (p % T || !try_T(S, &w, T))
                continue;
            if (!orbits(S, &w, p / T))
                continue;
            S->fold_T = T;
            S->fold_n = p / T;
            S->fold_off = NULL;
            J->p = T;
            break;
        }
    }
    free(w.sig);
    free(w.inv);
    free(w.p1);
    free(w.w1);
    free(w.idx);
    free(w.off);
    free(w.sent);
    tc_xfers_free(&w.xb);
    if (!S->fold_T) {
        free(S->lrep);
        free(S->lw);
        S->lrep = NULL;
        S->lw = NULL;
    }
    return st;
}

uint32_t tc_fl_fold_path(fl_sim *S, uint32_t n)
{
    /* Representatives, with the weights of every link of an orbit summed. */
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t r = S->lrep[S->path[k]];
        double x = S->pw[k] * S->lw[S->path[k]];
        uint32_t i = 0;
        while (i < m && S->path[i] != r)
            i++;
        if (i < m) {
            S->pw[i] += x;
        } else {
            S->path[m] = r;
            S->pw[m++] = x;
        }
    }
    return m;
}
