/*
 * flow_skip.c - repetition skipping for the flow simulator (docs/MODEL.md,
 * "flow: repeating state").
 *
 * The steps of a phase carry identical traffic (coll.h; the data checker
 * proves it for every algorithm). Simulating such a phase on a network
 * where every step meets the same conditions, the state at the moment the
 * reference rank (rank 0) passes step k + d is often the state at which it
 * passed step k with every step number moved by d and every time by some
 * delta: then, the simulation being deterministic and the steps ahead
 * carrying the same traffic, it would repeat itself every d steps until the
 * phase ends, and it can be advanced over m repeats at once: every step
 * number by m d, every time by m delta, every counter by m times its
 * growth over one repeat.
 *
 * The state compared (at the end of a batch, rates applied) is everything
 * that decides what happens next, as offsets from the reference (step k,
 * time now):
 * - the window of live steps [lo, hi) and every rank's next step, pending
 *   receives and sends in flight; what a live step still holds for a rank
 *   (receives left, parked transfers) follows from these and the flows;
 * - every live flow: its step, sender, receiver, bytes, state (waiting its
 *   overhead, parked, waiting for its sender's earlier sends to leave,
 *   sending, propagating), bytes left, rate, event time, issue time, path
 *   latency (a sender's order on the wire, fl_wire, follows from its
 *   flows' steps and states);
 * - every rank's overhead clock and reduction clock (where later than now:
 *   an earlier clock no longer delays anything) and last delivery; the
 *   job's finish.
 * Everything must be identical, bit for bit: a simulation of one job runs
 * on a time grid (flow_sim.h, fl_sim.tq; docs/MODEL.md, "Time on a grid"),
 * where times below FL_GRID_SPAN units add and subtract exactly, so an
 * offset from now does not depend on where now is, and the simulation
 * moved by delta (a multiple of the unit) computes exactly the moved
 * values. The repeats taken keep every time below that span (the full
 * simulation would make its grid coarser there), and the grid must not
 * have changed within the repeat. Then skipping gives the full
 * simulation's answer bit for bit. Anything else (another ordering, a flow
 * more or less, a rank a step further, a rate an ulp apart) is no
 * repetition, and the simulation goes on event by event: skipping never
 * assumes a symmetry, it finds one.
 *
 * Not skipped: several jobs (their steps do not advance together), a
 * trace (every slice is written), --no-skip.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/eval_int.h"
#include "eval/flow_sim.h"

/* The hash's sum of offsets (state_hash) adds them in the order of the
 * flow ids, which differs between repeats: sums within this many ulps of
 * now per term are candidates (snap_same then decides, exactly). */
#define HASH_ULPS 4.0
/* A phase with fewer steps left than this is not worth a snapshot. */
#define SKIP_MIN_LEFT 4

typedef struct sk_flow {
    int32_t step;          /* f_step - k */
    uint32_t src, dst;
    uint8_t state, heap;   /* heap: it has a pending event */
    uint8_t red;           /* its receiver reduces it (fl_flow.red) */
    double bytes, rem, rate, key, issue, lat; /* rem at now; key, issue: - now */
} sk_flow;

typedef struct sk_rank {
    int32_t issue;         /* - k */
    uint32_t pend, outst;
    double fin, oclk, rclk; /* - now; oclk and rclk (its reduction clock) no earlier than 0 */
} sk_rank;

typedef struct sk_snap {
    bool valid;
    uint32_t k;            /* the reference rank's next step */
    uint32_t regrids;      /* fl_sim.regrids when taken */
    double now;
    double tmax;           /* the latest time in the state */
    int32_t lo, hi;
    double finish;
    uint64_t transfers;
    sk_rank *rk;
    sk_flow *fl;
    size_t nfl, flcap;
    double *lb;            /* link bytes */
} sk_snap;

/* Steps back a repetition is looked for (the most steps per repeat). */
#define SKIP_HIST 8192

typedef struct sk_hist {
    uint32_t k;
    uint64_t h;            /* the discrete state's hash */
    double c;              /* the sum of the times compared, as offsets from now */
    double tol;            /* how far c may be from an equal state's */
} sk_hist;

typedef struct fl_skip {
    /* Per phase of job 0's schedule, the steps [run_first, run_end) of the
     * run of consecutive phases it belongs to: phases whose steps carry
     * the same transfers in the same order (a ring's reduce-scatter and
     * all-gather), which the simulator cannot tell apart (where a
     * reduction costs time, reduce_bw=, it can: a reduced transfer and a
     * copied one are then not the same). */
    uint32_t *run_first, *run_end;
    sk_snap a, b;          /* a: the candidate (valid: taken, to compare at step target); b: scratch */
    uint32_t target;
    sk_hist hist[SKIP_HIST]; /* hashes of the discrete state at the last steps */
    uint32_t hpos, nhist;
} fl_skip;

static void snap_free(sk_snap *x)
{
    free(x->rk);
    free(x->fl);
    free(x->lb);
}

void tc_fl_skip_free(fl_sim *S)
{
    if (!S->skip)
        return;
    snap_free(&S->skip->a);
    snap_free(&S->skip->b);
    free(S->skip->run_first);
    free(S->skip->run_end);
    free(S->skip);
    S->skip = NULL;
}

/* Whether no flow is in the max-min solver: every flow sending is held
 * (or sends nothing). */
static bool solver_empty(const fl_sim *S)
{
    for (uint32_t f = 0; f < S->fhigh; f++)
        if (S->fl[f].state == ST_XMIT && S->fl[f].bytes > 0 && !tc_mm_is_held(&S->mm, f))
            return false;
    return true;
}

/* Drops the candidate and stops recording its repeat. */
static void cand_drop(fl_sim *S)
{
    S->skip->a.valid = false;
    fl_rec_stop(S);
}

/* Whether two phases' figures allow the same traffic (cheap, before the
 * steps are emitted and compared). */
static bool phase_alike(const tc_phase *x, const tc_phase *y)
{
    return x->pat == y->pat && x->arg == y->arg && x->dims_mask == y->dims_mask && x->src_first == y->src_first &&
           x->src_count == y->src_count && x->fanout == y->fanout && x->fanin == y->fanin && x->bytes == y->bytes &&
           x->rank_bytes == y->rank_bytes && x->rank_bytes_in == y->rank_bytes_in;
}

/* red: a reduction costs time (reduce_bw=), so a reduced transfer and a
 * copied one differ */
static bool xfers_same(const tc_xfers *x, const tc_xfers *y, bool red)
{
    if (x->n != y->n)
        return false;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].src != y->v[i].src || x->v[i].dst != y->v[i].dst || x->v[i].bytes != y->v[i].bytes ||
            (red && x->v[i].reduce != y->v[i].reduce))
            return false;
    return true;
}

/* Whether steps sa and sb of s carry the same transfers in the same order:
 * compared whole (a holding sa when *have_a), or, for an all-pairs step,
 * part by part (tc_sched_emit_part, about tc_eval_chunk() transfers at a
 * time). false with *ok false when an emission fails. */
static bool steps_same(const tc_sched *s, const tc_phase *ph, uint32_t sa, uint32_t sb, tc_xfers *a, tc_xfers *b,
                       bool red, bool *have_a, bool *ok)
{
    uint32_t p = s->req.p, nps = tc_sched_part_senders(s, ph, tc_eval_chunk());
    if (nps >= p) {
        if (!*have_a)
            *ok = tc_sched_emit(s, sa, a) == TC_OK && !a->oom;
        *ok = *ok && tc_sched_emit(s, sb, b) == TC_OK && !b->oom;
        bool same = *ok && xfers_same(a, b, red);
        tc_xfers x = *a;
        *a = *b;
        *b = x;
        *have_a = *ok;
        return same;
    }
    bool same = true;
    for (uint32_t lo = 0; lo < p && same && *ok; lo += nps) {
        uint32_t hi = p - lo > nps ? lo + nps : p;
        *ok = tc_sched_emit_part(s, sa, lo, hi, a) == TC_OK && tc_sched_emit_part(s, sb, lo, hi, b) == TC_OK;
        same = *ok && xfers_same(a, b, red);
    }
    *have_a = false; /* a holds a part, not step sb */
    return same && *ok;
}

/* Joins consecutive phases whose first steps (hence, the IR's rule, all
 * their steps) carry the same transfers in the same order into runs. */
static bool runs_init(fl_sim *S, const tc_sched *s, fl_skip *k)
{
    uint32_t n = s->nphases;
    k->run_first = malloc((n ? n : 1) * sizeof *k->run_first);
    k->run_end = malloc((n ? n : 1) * sizeof *k->run_end);
    if (!k->run_first || !k->run_end)
        return false;
    tc_xfers a, b;
    tc_xfers_init(&a, false);
    tc_xfers_init(&b, false);
    bool ok = true, have_a = false;
    for (uint32_t i = 0; i < n && ok; i++) {
        const tc_phase *ph = &s->phases[i];
        k->run_first[i] = ph->first_step;
        /* An nccl-* schedule's first loop differs from its later ones in
         * latency, not in transfers: never joined. */
        if (i > 0 && !s->proto && ph->repeat && s->phases[i - 1].repeat && phase_alike(ph, &s->phases[i - 1]) &&
            s->phases[i - 1].first_step + s->phases[i - 1].repeat == ph->first_step) {
            if (steps_same(s, ph, s->phases[i - 1].first_step, ph->first_step, &a, &b, S->jobs[0].gamma > 0, &have_a,
                           &ok))
                k->run_first[i] = k->run_first[i - 1];
        } else {
            have_a = false;
        }
    }
    for (uint32_t i = n; i-- > 0;)
        k->run_end[i] = i + 1 < n && k->run_first[i + 1] == k->run_first[i] ? k->run_end[i + 1]
                                                                           : s->phases[i].first_step + s->phases[i].repeat;
    tc_xfers_free(&a);
    tc_xfers_free(&b);
    if (!ok && S->st == TC_OK)
        S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
    return ok;
}

tc_status tc_fl_skip_init(fl_sim *S)
{
    S->repeat_from = UINT32_MAX;
    if (S->o.no_skip)
        S->skip_off = "--no-skip";
    else if (S->o.trace_path)
        S->skip_off = "tracing";
    else if (S->njobs != 1)
        S->skip_off = "several jobs";
    if (S->skip_off)
        return TC_OK;
    fl_job *J = &S->jobs[0];
    fl_skip *k = calloc(1, sizeof *k);
    if (!k)
        return S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
    S->skip = k;
    size_t p = J->p ? J->p : 1, nl = S->t->n_links ? S->t->n_links : 1;
    k->a.rk = malloc(p * sizeof *k->a.rk);
    k->b.rk = malloc(p * sizeof *k->b.rk);
    k->a.lb = malloc(nl * sizeof *k->a.lb);
    k->b.lb = malloc(nl * sizeof *k->b.lb);
    if (!k->a.rk || !k->b.rk || !k->a.lb || !k->b.lb) {
        tc_fl_skip_free(S);
        return S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
    }
    if (!runs_init(S, J->s, k))
        tc_fl_skip_free(S);
    return S->st;
}

/* The phase holding step s, or NULL when no phase covers it. */
static const tc_phase *phase_of(const tc_sched *s, uint32_t step)
{
    const tc_phase *ph = tc_sched_phase_of(s, step);
    if (!ph || step < ph->first_step || step - ph->first_step >= ph->repeat)
        return NULL;
    return ph;
}

static int cmp_flow(const void *pa, const void *pb)
{
    const sk_flow *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->state != b->state)
        return a->state < b->state ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* The state now, relative to the reference rank's next step k. */
static bool snap_take(fl_sim *S, sk_snap *x, uint32_t k)
{
    fl_job *J = &S->jobs[0];
    double now = S->now, tmax = now;
    x->k = k;
    x->now = now;
    x->regrids = S->regrids;
    x->lo = (int32_t)(J->lo - k);
    x->hi = (int32_t)(J->hi - k);
    x->finish = J->finish - now;
    x->transfers = J->transfers;
    for (uint32_t r = 0; r < J->p; r++) {
        const fl_rank *R = &J->rk[r];
        double rc = J->rclk ? J->rclk[r] : 0;
        x->rk[r] = (sk_rank){(int32_t)(R->issue - k), R->pend, R->outst, R->fin - now, fmax(R->oclk - now, 0),
                             fmax(rc - now, 0)};
        tmax = fmax(tmax, fmax(R->fin, fmax(R->oclk, rc)));
    }
    size_t live = S->fhigh - S->nfree;
    if (!tc_grow((void **)&x->fl, &x->flcap, live ? live : 1, sizeof *x->fl))
        return false;
    size_t n = 0;
    for (uint32_t f = 0; f < S->fhigh; f++) {
        uint8_t st = S->fl[f].state;
        if (st == ST_FREE)
            continue;
        sk_flow *e = &x->fl[n++];
        bool in_heap = S->fl[f].hpos != NONE;
        e->step = (int32_t)(S->fl[f].step - k);
        e->src = S->fl[f].src;
        e->dst = S->fl[f].dst;
        e->state = st;
        e->heap = in_heap;
        e->red = S->fl[f].red;
        e->bytes = S->fl[f].bytes;
        e->lat = st == ST_ALPHA || st == ST_WIRE ? 0 : S->fl[f].lat; /* set when it starts */
        e->rate = st == ST_XMIT ? S->fl[f].rate : 0;
        e->rem = st == ST_XMIT ? S->fl[f].rem - S->fl[f].rate * (now - S->fl[f].tlast) : 0;
        e->key = in_heap ? fl_qkey(S, f) - now : 0;
        e->issue = S->f_issue[f] - now;
        tmax = fmax(tmax, fmax(now + e->key, S->f_issue[f]));
    }
    x->nfl = n;
    x->tmax = fmax(tmax, J->finish);
    qsort(x->fl, n, sizeof *x->fl, cmp_flow);
    tc_fl_flush_bytes(S);
    memcpy(x->lb, S->link_bytes, S->t->n_links * sizeof *x->lb);
    x->valid = true;
    return true;
}

/* Whether b repeats a, bit for bit, on an unchanged grid with every time
 * below its span. */
static bool snap_same(const fl_sim *S, const sk_snap *a, const sk_snap *b, uint32_t p)
{
    /* b was taken now: its grid is the current one */
    if (a->lo != b->lo || a->hi != b->hi || a->nfl != b->nfl || a->regrids != b->regrids || !(S->tq > 0) ||
        !(b->tmax < FL_GRID_SPAN * S->tq) || a->finish != b->finish)
        return false;
    for (uint32_t r = 0; r < p; r++) {
        const sk_rank *x = &a->rk[r], *y = &b->rk[r];
        if (x->issue != y->issue || x->pend != y->pend || x->outst != y->outst || x->fin != y->fin ||
            x->oclk != y->oclk || x->rclk != y->rclk)
            return false;
    }
    for (size_t i = 0; i < a->nfl; i++) {
        const sk_flow *x = &a->fl[i], *y = &b->fl[i];
        if (x->step != y->step || x->src != y->src || x->dst != y->dst || x->state != y->state ||
            x->heap != y->heap || x->red != y->red || x->bytes != y->bytes || x->lat != y->lat || x->rate != y->rate ||
            x->rem != y->rem || x->key != y->key || x->issue != y->issue)
            return false;
    }
    return true;
}

/* Moves every step of job 0 by K and every time by D: the state m repeats
 * later (a, b: the repeat's two ends, for the counters' growth). */
static void shift(fl_sim *S, const sk_snap *a, const sk_snap *b, uint32_t m, uint32_t K, double D)
{
    fl_job *J = &S->jobs[0];
    S->now += D;
    for (uint32_t f = 0; f < S->fhigh; f++) {
        if (S->fl[f].state == ST_FREE)
            continue;
        S->fl[f].step += K;
        S->fl[f].tlast += D;
        S->f_issue[f] += D;
    }
    tc_fl_queue_shift(S, D);
    for (uint32_t r = 0; r < J->p; r++) {
        fl_rank *R = &J->rk[r];
        R->issue += K;
        R->fin += D;
        R->oclk += D;
        if (J->rclk)
            J->rclk[r] += D;
        /* Its entries ahead, at step s & (acap - 1), follow their steps. */
        uint32_t am = R->acap - 1, ar = K & am;
        if (R->acap && ar) {
            for (uint32_t i = 0, n = 0; n < R->acap; i++) {
                /* rotate by ar in place: cycles of the permutation */
                uint32_t start = i, cur = i;
                fl_ahead *ah = J->ah[r];
                fl_ahead v = ah[cur];
                do {
                    uint32_t nxt = (cur + ar) & am;
                    fl_ahead w = ah[nxt];
                    ah[nxt] = v;
                    v = w;
                    cur = nxt;
                    n++;
                } while (cur != start);
            }
        }
    }
    J->finish += D;
    J->transfers += (uint64_t)m * (b->transfers - a->transfers);
    tc_fl_flush_bytes(S);
    for (uint32_t l = 0; l < S->t->n_links; l++)
        S->link_bytes[l] += m * (b->lb[l] - a->lb[l]);
    /* The window: step s's slot becomes step s + K's. */
    uint32_t mask = J->wcap - 1, rot = K & mask;
    if (rot) {
        fl_step *w = malloc(J->wcap * sizeof *w);
        if (!w) {
            S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
            return;
        }
        for (uint32_t i = 0; i < J->wcap; i++)
            w[(i + rot) & mask] = J->win[i];
        memcpy(J->win, w, J->wcap * sizeof *w);
        free(w);
    }
    J->lo += K;
    J->hi += K;
    S->job_ended = true;
    for (uint32_t s = J->lo; s < J->hi && S->st == TC_OK; s++)
        tc_fl_reemit(S, 0, s);
}

/* A hash of the discrete state relative to step k (independent of the
 * order of the flows): equal states have equal hashes; and in e the sum
 * of the times snap_same compares (as offsets from now) with the
 * tolerance two equal states' sums can differ by. States whose discrete
 * part is the same at every step (a lock-step ring) differ in their
 * times only: the sum finds the step that repeats them. */
static uint64_t state_hash(fl_sim *S, uint32_t k, sk_hist *e)
{
    fl_job *J = &S->jobs[0];
    double now = S->now, c = J->finish - now;
    uint64_t h = tc_mix64(((uint64_t)(J->lo - k) << 32) ^ (J->hi - k));
    for (uint32_t r = 0; r < J->p; r++) {
        const fl_rank *R = &J->rk[r];
        h += tc_mix64(((uint64_t)r << 40) ^ ((uint64_t)(R->issue - k) << 20) ^ R->pend ^ ((uint64_t)R->outst << 56));
        c += (R->fin - now) + fmax(R->oclk - now, 0) + (J->rclk ? fmax(J->rclk[r] - now, 0) : 0);
    }
    size_t terms = 1 + (J->rclk ? 3 : 2) * (size_t)J->p;
    for (uint32_t f = 0; f < S->fhigh; f++) {
        uint8_t st = S->fl[f].state;
        if (st == ST_FREE)
            continue;
        uint64_t bits;
        double bytes = S->fl[f].bytes;
        memcpy(&bits, &bytes, sizeof bits);
        uint64_t x = ((uint64_t)(S->fl[f].step - k) << 40) ^ ((uint64_t)S->fl[f].src << 20) ^ S->fl[f].dst ^
                     ((uint64_t)st << 60) ^ ((uint64_t)(S->fl[f].hpos != NONE) << 63);
        h += tc_mix64(x ^ tc_mix64(bits));
        c += S->f_issue[f] - now;
        if (S->fl[f].hpos != NONE)
            c += fl_qkey(S, f) - now;
        terms += 2;
    }
    e->k = k;
    e->h = h;
    e->c = c;
    /* the terms are exact; their sum's rounding */
    e->tol = (double)terms * HASH_ULPS * DBL_EPSILON * fmax(now, DBL_MIN);
    return h;
}

/* The repeats to the end of the schedule, without simulating them
 * (docs/MODEL.md, "flow: repeating state", "To the end"). The state at b
 * repeats a's, d steps and delta seconds later, and the run of identical
 * steps goes on to the schedule's last step. Were there steps beyond it,
 * the run would repeat forever; the schedule's end takes those steps'
 * transfers away, which changes nothing for the others where no flow ever
 * shared a link (every flow sending in the repeat was held: alone on its
 * links, at the rate it has alone, which fewer flows leave unchanged), as
 * nothing else passes from a later step to an earlier one: a rank issues
 * its steps in order, and posts its messages (their overhead slots) in
 * that order, and no flow's rate applied later than its start (a batch's
 * later events, maybe of a later step, would have moved its end: flow.c
 * stops the recording there). So every event recorded in the repeat
 * happens again every delta seconds, d steps later, for as long as its
 * step is in the schedule: a delivery at step s + j d at t + j delta, moving its ends'
 * finish; a flow start adding its bytes to its links. false (nothing
 * changed) where that does not hold or a time would reach the grid's span
 * (the full simulation would have made its grid coarser before). */
static bool to_end(fl_sim *S, const sk_snap *a, const sk_snap *b, uint32_t d, double delta)
{
    fl_job *J = &S->jobs[0];
    uint32_t N = J->nsteps;
    /* Records are kept only where this holds (tc_fl_skip_batch, fl_rec_stop). */
    if (S->nrecs == 0)
        return false;
    /* the latest time an event is carried to */
    double last = b->tmax;
    for (size_t i = 0; i < S->nrecs; i++) {
        uint32_t st = S->recs[i].step;
        if (st < N && N - 1 - st >= d)
            last = fmax(last, S->recs[i].start ? b->now : S->recs[i].v + (double)((N - 1 - st) / d) * delta);
    }
    if (!(last < FL_GRID_SPAN * S->tq))
        return false;
    tc_fl_flush_bytes(S);
    for (size_t i = 0; i < S->nrecs; i++) {
        const fl_rec *e = &S->recs[i];
        if (e->step >= N || N - 1 - e->step < d)
            continue;
        uint64_t j = (N - 1 - e->step) / d;
        if (e->start) {
            if (!(e->v > 0))
                continue;
            uint32_t n = tc_fl_route(S, fl_ep(J, e->src), fl_ep(J, e->dst));
            if (n == 0) {
                if (S->st == TC_OK)
                    S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: a repeated transfer lost its route");
                return true;
            }
            for (uint32_t k = 0; k < n; k++)
                S->link_bytes[S->path[k]] += (double)j * S->pw[k] * e->v;
        } else {
            double t = e->v + (double)j * delta;
            if (t > J->finish)
                J->finish = t;
            if (t > J->rk[e->src].fin)
                J->rk[e->src].fin = t;
            if (t > J->rk[e->dst].fin)
                J->rk[e->dst].fin = t;
            J->transfers += j;
        }
    }
    uint32_t k = J->rk[0].issue;
    for (uint32_t r = 0; r < J->p; r++) {
        J->rk[r].issue = N;
        J->rk[r].pend = 0;
        J->rk[r].outst = 0;
    }
    if (S->repeat_from == UINT32_MAX)
        S->repeat_from = a->k;
    S->steps_skipped += N - k;
    S->tail_steps = N - k;
    S->ended = true;
    cand_drop(S);
    return true;
}

void tc_fl_skip_batch(fl_sim *S)
{
    fl_skip *sk = S->skip;
    fl_job *J = &S->jobs[0];
    uint32_t k = J->p ? J->rk[0].issue : 0;
    if (k == S->skip_seen)
        return;
    S->skip_seen = k;
    sk_snap *a = &sk->a, *b = &sk->b;
    const tc_phase *ph = k < J->nsteps ? phase_of(J->s, k) : NULL;
    size_t pi = ph ? (size_t)(ph - J->s->phases) : 0;
    uint32_t ph_end = ph ? sk->run_end[pi] : 0;
    if (!ph || ph_end - k < SKIP_MIN_LEFT || J->lo < sk->run_first[pi]) {
        cand_drop(S);
        sk->nhist = 0;
        return;
    }
    if (a->valid && k >= sk->target) {
        /* The candidate's time has come: does the state repeat it? */
        bool ok = k == sk->target && snap_take(S, b, k);
        if (S->st)
            return;
        uint32_t d = k - a->k;
        double delta = b->now - a->now;
        bool same = ok && delta > 0 && snap_same(S, a, b, J->p);
        /* The run goes on to the schedule's end: to it at once, where that
         * is exact. */
        if (same && ph_end == J->nsteps && to_end(S, a, b, d, delta))
            return;
        if (same && J->hi + d <= ph_end) {
            /* Repeats, each moving the window by d: all inside the phase,
             * every time below the grid's span. */
            uint64_t m = (ph_end - J->hi) / d;
            /* every time below the grid's span: b->tmax + m delta, the
             * latest once moved, rounds to no more than its exact value */
            double room = floor((FL_GRID_SPAN * S->tq - b->tmax) / delta);
            if (room <= (double)m)
                m = room > 1 ? (uint64_t)room - 1 : 0;
            if (m >= 1) {
                if (S->repeat_from == UINT32_MAX)
                    S->repeat_from = a->k;
                shift(S, a, b, (uint32_t)m, (uint32_t)(m * d), (double)m * delta);
                S->steps_skipped += m * d;
                S->skip_seen = J->rk[0].issue;
                cand_drop(S);
                sk->nhist = 0;
                return;
            }
        }
        cand_drop(S);
    }
    /* A step whose discrete state was seen d steps ago (the nearest) is a
     * candidate: it may repeat d steps from now. */
    sk_hist cur;
    uint64_t h = state_hash(S, k, &cur);
    if (!a->valid) {
        for (uint32_t i = 0; i < sk->nhist && i < SKIP_HIST; i++) {
            const sk_hist *e = &sk->hist[(sk->hpos + SKIP_HIST - 1 - i) % SKIP_HIST];
            if (e->h != h || e->k >= k || !(fabs(e->c - cur.c) <= fmax(e->tol, cur.tol)))
                continue;
            uint32_t d = k - e->k;
            if (J->hi + 2 * d <= ph_end) {
                if (!snap_take(S, a, k)) {
                    S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
                    return;
                }
                sk->target = k + d;
                /* record the repeat where to_end may use it: the run goes
                 * to the schedule's end, no rank folded, no flow in the
                 * solver (flow.c stops the recording when one enters it,
                 * or when a flow's rate applies later than its start), no
                 * reduction clock (a later step's reduction taken before
                 * an earlier one's would be gone at the end) */
                S->nrecs = 0;
                S->rec = !S->fold_T && ph_end == J->nsteps && solver_empty(S) && !J->rclk;
                S->ht = -INFINITY;
            }
            break;
        }
    }
    sk->hist[sk->hpos] = cur;
    sk->hpos = (sk->hpos + 1) % SKIP_HIST;
    sk->nhist++;
}
