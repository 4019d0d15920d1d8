/*
 * timeline.c - a training iteration as a DAG of compute and communication
 * tasks on one or several ranks, simulated exactly with per-rank
 * compute/communication contention (docs/MODEL.md, "Training: the
 * iteration timeline"; include/topocc/timeline.h).
 *
 * The simulation is event-driven and piecewise linear. A running task keeps
 * (t0, rem0, rate): at t0 it had rem0 nominal seconds of work left, and it
 * progresses at `rate` until its rank's set of running tasks changes; then
 * (t0, rem0) is moved to the current time and the rate recomputed. A task
 * whose rate never changes ends at exactly start + dur. The next event is
 * the earliest t0 + rem0 / rate; tasks ending within 1e-12 (relative) of it
 * end with it, in index order. Starting is deterministic: it does not depend
 * on the order in which streams are looked at (all starts at one instant are
 * independent), and the serial run breaks ties by task index. A preemptible
 * task paused by a task of lower prio keeps its remaining work (left) and
 * resumes with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "topocc/timeline.h"

/* Limits that keep the index arithmetic in range. */
#define TL_MAX_TASKS (1u << 28)
#define TL_MAX_RANK (1u << 24)
#define TL_MAX_STREAM (1u << 20)

/* ---- building ------------------------------------------------------------ */

static void dag_fail(tc_tl_dag *d, tc_status code, const char *what)
{
    if (d->status == TC_OK) {
        d->status = code;
        snprintf(d->msg, sizeof d->msg, "%s", what);
    }
}

void tc_tl_init(tc_tl_dag *d)
{
    memset(d, 0, sizeof *d);
}

void tc_tl_free(tc_tl_dag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->task[i].deps);
    free(d->task);
    memset(d, 0, sizeof *d);
}

uint32_t tc_tl_add(tc_tl_dag *d, tc_tl_kind kind, uint32_t rank, uint32_t stream, double dur_s, const char *name)
{
    if (d->status)
        return UINT32_MAX;
    if (d->n >= TL_MAX_TASKS) {
        dag_fail(d, TC_EINVAL, "too many tasks (at most 2^28)");
        return UINT32_MAX;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        tc_tl_task *t = realloc(d->task, cap * sizeof *t);
        if (!t) {
            dag_fail(d, TC_EINTERNAL, "out of memory (timeline tasks)");
            return UINT32_MAX;
        }
        d->task = t;
        d->cap = cap;
    }
    tc_tl_task *t = &d->task[d->n];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->rank = rank;
    t->stream = stream;
    t->dur_s = dur_s;
    if (name)
        snprintf(t->name, sizeof t->name, "%s", name);
    return (uint32_t)d->n++;
}

void tc_tl_dep(tc_tl_dag *d, uint32_t task, uint32_t on)
{
    if (d->status)
        return;
    if (task >= d->n || on >= d->n) {
        char m[96];
        snprintf(m, sizeof m, "dependency %u -> %u: no such task (%zu tasks)", task, on, d->n);
        dag_fail(d, TC_EINVAL, m);
        return;
    }
    tc_tl_task *t = &d->task[task];
    if (t->ndeps == t->dcap) {
        uint32_t cap = t->dcap ? 2 * t->dcap : 4;
        uint32_t *p = realloc(t->deps, cap * sizeof *p);
        if (!p) {
            dag_fail(d, TC_EINTERNAL, "out of memory (timeline dependencies)");
            return;
        }
        t->deps = p;
        t->dcap = cap;
    }
    t->deps[t->ndeps++] = on;
}

void tc_tl_opts_default(tc_tl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->s_c = TC_TL_S_C_DEFAULT;
    o->s_m = TC_TL_S_M_DEFAULT;
    o->s_c_dma = TC_TL_S_C_DMA_DEFAULT;
    o->s_m_dma = TC_TL_S_M_DMA_DEFAULT;
    o->policy = TC_TL_IN_ORDER;
}

/* ---- the simulation state ------------------------------------------------ */

typedef struct qkey {
    uint32_t rank, sid; /* sid 0: compute; 1 + stream: communication */
    int32_t prio;
    uint32_t idx;
} qkey;

static int qkey_cmp(const void *a, const void *b)
{
    const qkey *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->sid != y->sid)
        return x->sid < y->sid ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct sim {
    const tc_tl_dag *d;
    const tc_tl_opts *o;
    size_t n;
    uint32_t nranks, nstreams;
    /* queues: q[sbeg[s] .. sbeg[s+1]) is stream s in (prio, index) order */
    uint32_t *q, *sbeg, *srank, *rbeg; /* rank r's streams: rbeg[r] .. rbeg[r+1] */
    bool *scompute;
    uint8_t *spol;                     /* each stream's policy */
    uint32_t *tstream;
    uint32_t *doff, *dlist;            /* dependents, CSR */
    bool *xrank;                       /* a task of another rank depends on it */
    /* per run */
    uint32_t *need, *head, *running, *dirty, *srun; /* srun: the task a busy stream runs */
    uint8_t *state;                    /* 0 pending, 1 running, 2 done */
    bool *sbusy, *rdirty;
    uint32_t *zstack;                  /* start_phase's streams to look at (zphase) */
    size_t nz;
    bool zphase;
    uint32_t *rcount, *ncomp, *nsm, *ndma;
    double *t0, *rem0, *rate;
    double *left, *ready_t;            /* work left to a paused task; when a task became ready */
    size_t next;                       /* ext tasks running */
    tc_err *err;
    tc_status est;                     /* an external model's failure */
    size_t nrun, ndirty, ndone;
} sim;

static void sim_free(sim *s)
{
    free(s->q);
    free(s->sbeg);
    free(s->srank);
    free(s->rbeg);
    free(s->scompute);
    free(s->spol);
    free(s->tstream);
    free(s->xrank);
    free(s->doff);
    free(s->dlist);
    free(s->need);
    free(s->head);
    free(s->running);
    free(s->dirty);
    free(s->state);
    free(s->sbusy);
    free(s->rdirty);
    free(s->zstack);
    free(s->rcount);
    free(s->ncomp);
    free(s->nsm);
    free(s->ndma);
    free(s->t0);
    free(s->rem0);
    free(s->rate);
    free(s->left);
    free(s->ready_t);
    free(s->srun);
}

static tc_status check_input(const tc_tl_dag *d, const tc_tl_opts *o, tc_err *err)
{
    if (d->status)
        return tc_fail(err, d->status, "%s", d->msg);
    const double s[4] = {o->s_c, o->s_m, o->s_c_dma, o->s_m_dma};
    const char *sn[4] = {"s_c", "s_m", "s_c_dma", "s_m_dma"};
    for (int i = 0; i < 4; i++)
        if (!(s[i] >= 0) || !isfinite(s[i]))
            return tc_fail(err, TC_EINVAL, "contention factor %s = %g: expected a finite number >= 0", sn[i], s[i]);
    if (o->policy != TC_TL_IN_ORDER && o->policy != TC_TL_READY_FIRST && o->policy != TC_TL_PRIORITY)
        return tc_fail(err, TC_EINVAL, "stream policy %d: expected in-order (0), ready-first (1) or priority (2)",
                       (int)o->policy);
    for (size_t i = 0; i < d->n; i++) {
        const tc_tl_task *t = &d->task[i];
        if (t->kind != TC_TL_COMPUTE && t->kind != TC_TL_COMM)
            return tc_fail(err, TC_EINVAL, "task %zu: kind %d: expected compute (0) or communication (1)", i,
                           (int)t->kind);
        if (!(t->dur_s >= 0) || !isfinite(t->dur_s))
            return tc_fail(err, TC_EINVAL, "task %zu (%s): duration %g: expected a finite number of seconds >= 0", i,
                           t->name, t->dur_s);
        if (t->rank >= TL_MAX_RANK)
            return tc_fail(err, TC_EINVAL, "task %zu: rank %u: expected below 2^24", i, t->rank);
        if (t->ext && (t->kind != TC_TL_COMM || t->preempt || !o->ext))
            return tc_fail(err, TC_EINVAL, "task %zu (%s): an external task is communication, not preemptible, and needs "
                           "an external model (tc_tl_opts.ext)", i, t->name);
        if (t->kind == TC_TL_COMPUTE && (t->stream != 0 || t->dma))
            return tc_fail(err, TC_EINVAL, "task %zu (%s): a compute task has no stream number and no dma: they "
                                           "apply to communication", i, t->name);
        if (t->stream >= TL_MAX_STREAM)
            return tc_fail(err, TC_EINVAL, "task %zu: stream %u: expected below 2^20", i, t->stream);
        for (uint32_t k = 0; k < t->ndeps; k++)
            if (t->deps[k] == i)
                return tc_fail(err, TC_EINVAL, "task %zu (%s) depends on itself", i, t->name);
    }
    return TC_OK;
}

#define ALLOC(p, cnt)                                                   \
    do {                                                                \
        (p) = tc_calloc((cnt) ? (cnt) : 1, sizeof *(p));                \
        if (!(p))                                                       \
            return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)"); \
    } while (0)

static tc_status sim_build(sim *s, const tc_tl_dag *d, const tc_tl_opts *o, tc_err *err)
{
    memset(s, 0, sizeof *s);
    s->d = d;
    s->o = o;
    size_t n = s->n = d->n;
    uint32_t nr = 0;
    for (size_t i = 0; i < n; i++)
        if (d->task[i].rank + 1 > nr)
            nr = d->task[i].rank + 1;
    s->nranks = nr;
    qkey *k = tc_calloc(n ? n : 1, sizeof *k);
    if (!k)
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    for (size_t i = 0; i < n; i++) {
        const tc_tl_task *t = &d->task[i];
        k[i] = (qkey){t->rank, t->kind == TC_TL_COMPUTE ? 0 : 1 + t->stream, t->prio, (uint32_t)i};
    }
    qsort(k, n, sizeof *k, qkey_cmp);
    uint32_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || k[i].rank != k[i - 1].rank || k[i].sid != k[i - 1].sid)
            ns++;
    s->nstreams = ns;
    s->q = tc_calloc(n ? n : 1, sizeof *s->q);
    s->sbeg = tc_calloc(ns + 1, sizeof *s->sbeg);
    s->srank = tc_calloc(ns ? ns : 1, sizeof *s->srank);
    s->scompute = tc_calloc(ns ? ns : 1, sizeof *s->scompute);
    s->rbeg = tc_calloc((size_t)nr + 1, sizeof *s->rbeg);
    s->tstream = tc_calloc(n ? n : 1, sizeof *s->tstream);
    if (!s->q || !s->sbeg || !s->srank || !s->scompute || !s->rbeg || !s->tstream) {
        free(k);
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    }
    uint32_t si = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || k[i].rank != k[i - 1].rank || k[i].sid != k[i - 1].sid) {
            s->sbeg[si] = (uint32_t)i;
            s->srank[si] = k[i].rank;
            s->scompute[si] = k[i].sid == 0;
            si++;
        }
        s->q[i] = k[i].idx;
        s->tstream[k[i].idx] = si - 1;
    }
    s->sbeg[ns] = (uint32_t)n;
    free(k);
    /* stream policies: the run's, unless the stream's tasks give one */
    s->spol = tc_calloc(ns ? ns : 1, 1);
    if (!s->spol)
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    for (uint32_t q = 0; q < ns; q++) {
        uint8_t p = 0;
        for (uint32_t i = s->sbeg[q]; i < s->sbeg[q + 1]; i++) {
            const tc_tl_task *t = &d->task[s->q[i]];
            if (t->stream_policy > 3)
                return tc_fail(err, TC_EINVAL, "task %u (%s): stream policy %u: expected 0 (the run's) or 1 + in-order "
                               "(0), ready-first (1), priority (2)", s->q[i], t->name, (unsigned)t->stream_policy);
            if (t->stream_policy && p && t->stream_policy != p)
                return tc_fail(err, TC_EINVAL, "task %u (%s): its stream's tasks ask for different policies", s->q[i],
                               t->name);
            if (t->stream_policy)
                p = t->stream_policy;
        }
        s->spol[q] = p ? (uint8_t)(p - 1) : (uint8_t)o->policy;
    }
    /* rank r's streams are rbeg[r] .. rbeg[r+1] (streams are sorted by rank) */
    for (uint32_t st = 0, r = 0; r <= nr; r++) {
        while (st < ns && s->srank[st] < r)
            st++;
        s->rbeg[r] = st;
    }
    /* dependents */
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        nd += d->task[i].ndeps;
    ALLOC(s->doff, n + 1);
    ALLOC(s->dlist, nd);
    ALLOC(s->xrank, n);
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < d->task[i].ndeps; j++)
            if (d->task[d->task[i].deps[j]].rank != d->task[i].rank)
                s->xrank[d->task[i].deps[j]] = true;
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < d->task[i].ndeps; j++)
            s->doff[d->task[i].deps[j] + 1]++;
    for (size_t i = 0; i < n; i++)
        s->doff[i + 1] += s->doff[i];
    uint32_t *fill;
    ALLOC(fill, n);
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < d->task[i].ndeps; j++) {
            uint32_t on = d->task[i].deps[j];
            s->dlist[s->doff[on] + fill[on]++] = (uint32_t)i;
        }
    free(fill);
    ALLOC(s->need, n);
    ALLOC(s->state, n);
    ALLOC(s->running, n);
    ALLOC(s->t0, n);
    ALLOC(s->rem0, n);
    ALLOC(s->rate, n);
    ALLOC(s->left, n);
    ALLOC(s->ready_t, n);
    ALLOC(s->head, ns);
    ALLOC(s->sbusy, ns);
    ALLOC(s->srun, ns);
    ALLOC(s->dirty, nr);
    ALLOC(s->rdirty, nr);
    ALLOC(s->zstack, (size_t)ns + nd);
    ALLOC(s->rcount, nr);
    ALLOC(s->ncomp, nr);
    ALLOC(s->nsm, nr);
    ALLOC(s->ndma, nr);
    return TC_OK;
}

static void mark_dirty(sim *s, uint32_t r)
{
    if (!s->rdirty[r]) {
        s->rdirty[r] = true;
        s->dirty[s->ndirty++] = r;
    }
}

/* The task stream st would start now, or UINT32_MAX. */
static uint32_t pick(sim *s, uint32_t st)
{
    uint32_t e = s->sbeg[st + 1];
    while (s->head[st] < e && s->state[s->q[s->head[st]]] != 0)
        s->head[st]++;
    if (s->spol[st] == TC_TL_IN_ORDER) {
        uint32_t h = s->head[st];
        return h < e && s->need[s->q[h]] == 0 ? s->q[h] : UINT32_MAX;
    }
    uint32_t best = UINT32_MAX;
    for (uint32_t p = s->head[st]; p < e; p++) {
        uint32_t i = s->q[p];
        if (s->state[i] != 0 || s->need[i] != 0)
            continue;
        if (s->spol[st] == TC_TL_READY_FIRST)
            return i;
        /* TC_TL_PRIORITY: the queue is in (prio, index) order */
        if (best == UINT32_MAX)
            best = i;
        else if (s->d->task[i].prio != s->d->task[best].prio)
            break;
        else if (s->ready_t[i] < s->ready_t[best])
            best = i;
    }
    return best;
}

/* A task starts (+1) or stops (-1) running on its rank: the counts the
 * contention rates read. */
static void count_running(sim *s, const tc_tl_task *x, int delta)
{
    uint32_t r = x->rank;
    s->rcount[r] += (uint32_t)delta;
    if (x->kind == TC_TL_COMPUTE)
        s->ncomp[r] += (uint32_t)delta;
    else if (x->dma)
        s->ndma[r] += (uint32_t)delta;
    else
        s->nsm[r] += (uint32_t)delta;
}

static void finish(sim *s, uint32_t i, double t, double *en)
{
    const tc_tl_task *x = &s->d->task[i];
    en[i] = t;
    s->state[i] = 2;
    s->ndone++;
    s->sbusy[s->tstream[i]] = false;
    if (x->dur_s > 0 || x->ext) {
        count_running(s, x, -1);
    }
    mark_dirty(s, x->rank);
    for (uint32_t k = s->doff[i]; k < s->doff[i + 1]; k++) {
        uint32_t j = s->dlist[k];
        if (--s->need[j] == 0) {
            s->ready_t[j] = t;
            mark_dirty(s, s->d->task[j].rank);
            if (s->zphase)
                s->zstack[s->nz++] = s->tstream[j];
        }
    }
}

/* Starts i at t; a task of no duration ends at once. */
static void start(sim *s, uint32_t i, double t, double *st, double *en)
{
    const tc_tl_task *x = &s->d->task[i];
    if (isnan(st[i]))
        st[i] = t;
    if (!(x->dur_s > 0) && !x->ext) {
        s->state[i] = 1;
        finish(s, i, t, en);
        return;
    }
    s->state[i] = 1;
    s->sbusy[s->tstream[i]] = true;
    s->srun[s->tstream[i]] = i;
    count_running(s, x, +1);
    if (x->ext) {
        /* its end is the external model's */
        s->next++;
        if (s->est == TC_OK)
            s->est = s->o->ext->start(s->o->ext->ud, i, t, s->err);
        return;
    }
    s->t0[i] = t;
    s->rem0[i] = s->left[i];
    s->rate[i] = 0; /* set by update_rates */
    s->running[s->nrun++] = i;
}

/* Pauses running task i at t, keeping the work it has left. */
static void pause_task(sim *s, uint32_t i, double t)
{
    const tc_tl_task *x = &s->d->task[i];
    double rem = s->rem0[i] - (s->rate[i] > 0 ? s->rate[i] * (t - s->t0[i]) : 0);
    s->left[i] = rem > 0 ? rem : 0;
    for (size_t k = 0; k < s->nrun; k++)
        if (s->running[k] == i) {
            s->running[k] = s->running[--s->nrun];
            break;
        }
    s->state[i] = 0;
    s->sbusy[s->tstream[i]] = false;
    count_running(s, x, -1);
}

/* Starts what can start at t, on every rank marked dirty. Tasks of no
 * duration go first, depth first along their dependents (a task of no
 * duration that ends makes its dependents' streams the next to look at),
 * until none can start: they take no time, so what they make ready at t
 * competes at t with what was ready before (a decode whose collective took
 * no time is ready as soon as its encode ends, before the next encode). */
static void start_phase(sim *s, bool serial, double t, double *st, double *en)
{
    if (!serial) {
        s->nz = 0;
        for (size_t k = 0; k < s->ndirty; k++)
            for (uint32_t q = s->rbeg[s->dirty[k]]; q < s->rbeg[s->dirty[k] + 1]; q++)
                s->zstack[s->nz++] = q;
        s->zphase = true;
        while (s->nz > 0) {
            uint32_t q = s->zstack[s->nz - 1];
            uint32_t c = s->sbusy[q] ? UINT32_MAX : pick(s, q);
            if (c == UINT32_MAX || s->d->task[c].dur_s > 0 || s->d->task[c].ext)
                s->nz--;
            else
                start(s, c, t, st, en); /* pushes its dependents' streams */
        }
        s->zphase = false;
    }
    while (s->ndirty > 0) {
        uint32_t r = s->dirty[--s->ndirty];
        s->rdirty[r] = false;
        if (serial) {
            /* One task at a time on the rank: first the communication
             * task of lowest index that another rank waits on (a send goes
             * out as soon as it is ready), else compute, else the
             * communication task of lowest index. */
            while (s->rcount[r] == 0) {
                uint32_t best = UINT32_MAX, send = UINT32_MAX, comp = UINT32_MAX;
                for (uint32_t q = s->rbeg[r]; q < s->rbeg[r + 1]; q++) {
                    uint32_t c = pick(s, q);
                    if (c == UINT32_MAX)
                        continue;
                    if (s->scompute[q]) {
                        if (comp == UINT32_MAX)
                            comp = c; /* the rank's first compute stream's, as before */
                    } else if (s->xrank[c] && c < send)
                        send = c;
                    else if (c < best)
                        best = c;
                }
                if (send != UINT32_MAX)
                    best = send;
                else if (comp != UINT32_MAX)
                    best = comp;
                if (best == UINT32_MAX)
                    break;
                start(s, best, t, st, en);
            }
        } else {
            for (uint32_t q = s->rbeg[r]; q < s->rbeg[r + 1]; q++) {
                if (s->sbusy[q] && s->spol[q] != TC_TL_IN_ORDER && s->d->task[s->srun[q]].preempt) {
                    uint32_t c = pick(s, q), cur = s->srun[q];
                    if (c != UINT32_MAX && s->d->task[c].prio < s->d->task[cur].prio)
                        pause_task(s, cur, t);
                }
                while (!s->sbusy[q]) {
                    uint32_t c = pick(s, q);
                    if (c == UINT32_MAX)
                        break;
                    start(s, c, t, st, en);
                }
            }
        }
    }
}

static double rate_of(const sim *s, uint32_t i)
{
    const tc_tl_task *x = &s->d->task[i];
    uint32_t r = x->rank;
    if (x->kind == TC_TL_COMPUTE) {
        double f = 0;
        if (s->nsm[r] > 0)
            f = s->o->s_c;
        if (s->ndma[r] > 0 && s->o->s_c_dma > f)
            f = s->o->s_c_dma;
        return 1.0 / (1.0 + f);
    }
    if (s->ncomp[r] == 0)
        return 1.0;
    return 1.0 / (1.0 + (x->dma ? s->o->s_m_dma : s->o->s_m));
}

static void update_rates(sim *s, double t)
{
    for (size_t k = 0; k < s->nrun; k++) {
        uint32_t i = s->running[k];
        double r = rate_of(s, i);
        if (r == s->rate[i])
            continue;
        if (s->rate[i] > 0) {
            s->rem0[i] -= s->rate[i] * (t - s->t0[i]);
            if (s->rem0[i] < 0)
                s->rem0[i] = 0;
            s->t0[i] = t;
        }
        s->rate[i] = r;
    }
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static tc_status simulate_once(sim *s, bool serial, double *st, double *en, tc_err *err)
{
    size_t n = s->n;
    for (size_t i = 0; i < n; i++) {
        s->need[i] = s->d->task[i].ndeps;
        s->state[i] = 0;
        s->left[i] = s->d->task[i].dur_s;
        s->ready_t[i] = 0;
        st[i] = en[i] = NAN;
    }
    for (uint32_t q = 0; q < s->nstreams; q++)
        s->head[q] = s->sbeg[q];
    memset(s->sbusy, 0, (s->nstreams ? s->nstreams : 1) * sizeof *s->sbusy);
    size_t nr = s->nranks ? s->nranks : 1;
    memset(s->rcount, 0, nr * sizeof *s->rcount);
    memset(s->ncomp, 0, nr * sizeof *s->ncomp);
    memset(s->nsm, 0, nr * sizeof *s->nsm);
    memset(s->ndma, 0, nr * sizeof *s->ndma);
    memset(s->rdirty, 0, nr * sizeof *s->rdirty);
    s->nrun = s->ndirty = s->ndone = 0;
    for (uint32_t r = 0; r < s->nranks; r++)
        if (s->rbeg[r + 1] > s->rbeg[r])
            mark_dirty(s, r);
    uint32_t *fin = tc_calloc(n ? n : 1, sizeof *fin);
    if (!fin)
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    s->next = 0;
    s->err = err;
    s->est = s->o->ext ? s->o->ext->begin(s->o->ext->ud, serial, err) : TC_OK;
    double t = 0;
    while (s->est == TC_OK) {
        start_phase(s, serial, t, st, en);
        update_rates(s, t);
        if (s->est)
            break;
        if (s->nrun == 0 && s->next == 0)
            break;
        double tmin = INFINITY;
        for (size_t k = 0; k < s->nrun; k++) {
            uint32_t i = s->running[k];
            double f = s->t0[i] + s->rem0[i] / s->rate[i];
            if (f < tmin)
                tmin = f;
        }
        if (tmin < t)
            tmin = t;
        if (s->next > 0) {
            /* the external model up to our next event, or to its first
             * completions before it */
            size_t nd = 0;
            double now = t;
            s->est = s->o->ext->run(s->o->ext->ud, tmin, fin, n ? n : 1, &nd, &now, err);
            if (s->est)
                break;
            if (nd > 0) {
                if (now < t)
                    now = t;
                qsort(fin, nd, sizeof *fin, u32_cmp);
                t = now;
                for (size_t k = 0; k < nd; k++) {
                    uint32_t i = fin[k];
                    if (i >= n || !s->d->task[i].ext || s->state[i] != 1) {
                        s->est = tc_fail(err, TC_EINTERNAL, "timeline: the external model reported task %u, which "
                                                            "is not an external task in flight", i);
                        break;
                    }
                    s->next--;
                    finish(s, i, t, en);
                }
                continue;
            }
            if (tmin == INFINITY) {
                s->est = tc_fail(err, TC_EINVAL, "timeline: %zu external task(s) in flight never complete", s->next);
                break;
            }
        }
        double lim = tmin + 1e-12 * fabs(tmin);
        size_t nf = 0;
        for (size_t k = 0; k < s->nrun;) {
            uint32_t i = s->running[k];
            if (s->t0[i] + s->rem0[i] / s->rate[i] <= lim) {
                fin[nf++] = i;
                s->running[k] = s->running[--s->nrun];
            } else {
                k++;
            }
        }
        qsort(fin, nf, sizeof *fin, u32_cmp);
        /* The others keep (t0, rem0) until their rate changes (update_rates). */
        t = tmin;
        for (size_t k = 0; k < nf; k++)
            finish(s, fin[k], t, en);
    }
    free(fin);
    if (s->est)
        return s->est;
    if (s->ndone < n) {
        for (size_t i = 0; i < n; i++)
            if (s->state[i] == 0) {
                const tc_tl_task *x = &s->d->task[i];
                return tc_fail(err, TC_EINVAL, "task %zu (%s, rank %u) can never start: a dependency cycle, or it "
                                               "waits on a task queued behind it on an in-order stream%s",
                               i, x->name[0] ? x->name : "unnamed", x->rank, serial ? " (serial run)" : "");
            }
    }
    return TC_OK;
}

/* One run; made again from the start while it fails and the external
 * model says it can make it another way (tc_tl_ext.retry). */
static tc_status simulate(sim *s, bool serial, double *st, double *en, tc_err *err)
{
    const tc_tl_ext *x = s->o->ext;
    tc_status r;
    while ((r = simulate_once(s, serial, st, en, err)) != TC_OK && x && x->retry && x->retry(x->ud))
        ;
    return r;
}

/* ---- figures ------------------------------------------------------------- */

typedef struct ivl {
    double a, b;
} ivl;

static int ivl_cmp(const void *x, const void *y)
{
    const ivl *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

/* Merges sorted intervals in place into disjoint ones; returns their count
 * and writes their total length. */
static size_t merge(ivl *v, size_t n, double *len)
{
    size_t m = 0;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[i].a <= v[m - 1].b) {
            if (v[i].b > v[m - 1].b)
                v[m - 1].b = v[i].b;
        } else {
            v[m++] = v[i];
        }
    }
    for (size_t i = 0; i < m; i++)
        *len += v[i].b - v[i].a;
    return m;
}

static double intersect(const ivl *x, size_t nx, const ivl *y, size_t ny)
{
    double s = 0;
    size_t i = 0, j = 0;
    while (i < nx && j < ny) {
        double a = fmax(x[i].a, y[j].a), b = fmin(x[i].b, y[j].b);
        if (b > a)
            s += b - a;
        if (x[i].b < y[j].b)
            i++;
        else
            j++;
    }
    return s;
}

static tc_status figures(const sim *s, tc_tl_result *out, tc_err *err)
{
    const tc_tl_dag *d = s->d;
    out->nranks = s->nranks;
    out->rank = tc_calloc(s->nranks ? s->nranks : 1, sizeof *out->rank);
    ivl *cv = tc_calloc(s->n ? s->n : 1, sizeof *cv), *mv = tc_calloc(s->n ? s->n : 1, sizeof *mv);
    ivl *pv = tc_calloc(s->n ? 2 * s->n : 1, sizeof *pv);
    if (!out->rank || !cv || !mv || !pv) {
        free(cv);
        free(mv);
        free(pv);
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    }
    for (size_t i = 0; i < s->n; i++) {
        if (d->task[i].probe)
            continue;
        out->iter_s = fmax(out->iter_s, d->task[i].end_s);
        out->serial_s = fmax(out->serial_s, d->task[i].serial_end_s);
    }
    for (uint32_t r = 0; r < s->nranks; r++) {
        tc_tl_rank *k = &out->rank[r];
        size_t nc = 0, nm = 0, np = 0;
        for (uint32_t q = s->rbeg[r]; q < s->rbeg[r + 1]; q++)
            for (uint32_t p = s->sbeg[q]; p < s->sbeg[q + 1]; p++) {
                const tc_tl_task *x = &d->task[s->q[p]];
                if (x->probe) {
                    /* a probe's compute hides communication (it is not
                     * exposed) but is no compute of the result */
                    if (x->kind == TC_TL_COMPUTE && x->end_s > x->start_s)
                        pv[np++] = (ivl){x->start_s, x->end_s};
                    continue;
                }
                k->end_s = fmax(k->end_s, x->end_s);
                k->serial_end_s = fmax(k->serial_end_s, x->serial_end_s);
                if (x->kind == TC_TL_COMPUTE)
                    k->compute_s += x->dur_s;
                else
                    k->comm_s += x->dur_s;
                if (!(x->end_s > x->start_s))
                    continue;
                if (x->kind == TC_TL_COMPUTE)
                    cv[nc++] = (ivl){x->start_s, x->end_s};
                else
                    mv[nm++] = (ivl){x->start_s, x->end_s};
            }
        qsort(cv, nc, sizeof *cv, ivl_cmp);
        qsort(mv, nm, sizeof *mv, ivl_cmp);
        nc = merge(cv, nc, &k->compute_busy_s);
        nm = merge(mv, nm, &k->comm_busy_s);
        if (np > 0) {
            double unused;
            memcpy(pv + np, cv, nc * sizeof *cv);
            qsort(pv, np + nc, sizeof *pv, ivl_cmp);
            size_t na = merge(pv, np + nc, &unused);
            k->overlap_s = intersect(pv, na, mv, nm);
        } else {
            k->overlap_s = intersect(cv, nc, mv, nm);
        }
        k->exposed_s = k->comm_busy_s - k->overlap_s;
        k->idle_s = fmax(0, out->iter_s - k->compute_busy_s - k->exposed_s);
        k->slowdown_s = k->compute_busy_s - k->compute_s;
        out->compute_s = fmax(out->compute_s, k->compute_s);
        out->comm_s = fmax(out->comm_s, k->comm_s);
        out->compute_busy_s = fmax(out->compute_busy_s, k->compute_busy_s);
        out->exposed_s = fmax(out->exposed_s, k->exposed_s);
        out->slowdown_s = fmax(out->slowdown_s, k->slowdown_s);
        if (k->compute_s > 0)
            out->slowdown = fmax(out->slowdown, k->compute_busy_s / k->compute_s - 1);
    }
    free(cv);
    free(mv);
    free(pv);
    double den = out->serial_s - fmax(out->compute_s, out->comm_s);
    if (!(out->comm_s > 0) || !(den > 1e-12 * out->serial_s))
        out->efficiency = 1;
    else
        out->efficiency = (out->serial_s - out->iter_s) / den;
    return TC_OK;
}

tc_status tc_tl_run(tc_tl_dag *d, const tc_tl_opts *o, tc_tl_result *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    tc_tl_opts def;
    if (!o) {
        tc_tl_opts_default(&def);
        o = &def;
    }
    tc_status st = check_input(d, o, err);
    if (st)
        return st;
    size_t n = d->n;
    double *a = tc_calloc(4 * (n ? n : 1), sizeof *a);
    if (!a)
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    sim s;
    st = sim_build(&s, d, o, err);
    if (!st)
        st = simulate(&s, false, a, a + n, err);
    if (!st)
        st = simulate(&s, true, a + 2 * n, a + 3 * n, err);
    if (!st) {
        for (size_t i = 0; i < n; i++) {
            d->task[i].start_s = a[i];
            d->task[i].end_s = a[n + i];
            d->task[i].serial_start_s = a[2 * n + i];
            d->task[i].serial_end_s = a[3 * n + i];
        }
        st = figures(&s, out, err);
    }
    sim_free(&s);
    free(a);
    if (st)
        tc_tl_result_free(out);
    return st;
}

void tc_tl_result_free(tc_tl_result *r)
{
    free(r->rank);
    r->rank = NULL;
    r->nranks = 0;
}

/* ---- Chrome trace ---------------------------------------------------------- */

static json_t *meta(const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", what, "ph", "M", "pid", (json_int_t)pid, "tid",
                     (json_int_t)tid, "args", "name", name);
}

tc_status tc_tl_write_chrome(const tc_tl_dag *d, bool serial, const char *path,
                             const char *(*rank_name)(void *, uint32_t, char *, size_t),
                             const char *(*stream_name)(void *, uint32_t, uint32_t), void *ud, tc_err *err)
{
    json_t *ev = json_array();
    if (!ev)
        return tc_fail(err, TC_EINTERNAL, "out of memory (trace)");
    /* names: every (rank, stream) seen, compute as tid 0, stream s as 1 + s */
    uint32_t nr = 0;
    for (size_t i = 0; i < d->n; i++)
        if (!d->task[i].probe && d->task[i].rank + 1 > nr)
            nr = d->task[i].rank + 1;
    int bad = 0;
    char buf[64];
    for (uint32_t r = 0; r < nr; r++) {
        bad |= json_array_append_new(ev, meta("process_name", r, 0, rank_name(ud, r, buf, sizeof buf)));
        bad |= json_array_append_new(ev, meta("thread_name", r, 0, stream_name(ud, r, UINT32_MAX)));
    }
    uint8_t *named = tc_calloc((size_t)nr * 64 + 1, 1); /* streams 0..63 named per rank */
    if (!named) {
        json_decref(ev);
        return tc_fail(err, TC_EINTERNAL, "out of memory (trace)");
    }
    for (size_t i = 0; i < d->n && !bad; i++) {
        const tc_tl_task *t = &d->task[i];
        double t0 = serial ? t->serial_start_s : t->start_s, t1 = serial ? t->serial_end_s : t->end_s;
        if (t->probe || !(t1 > t0))
            continue;
        uint32_t tid = t->kind == TC_TL_COMPUTE ? 0 : 1 + t->stream;
        if (t->kind == TC_TL_COMM && t->stream < 64 && !named[(size_t)t->rank * 64 + t->stream]) {
            named[(size_t)t->rank * 64 + t->stream] = 1;
            bad |= json_array_append_new(ev, meta("thread_name", t->rank, tid, stream_name(ud, t->rank, t->stream)));
        }
        json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I}", "name", t->name[0] ? t->name : "task", "cat",
                              t->kind == TC_TL_COMPUTE ? "compute" : "communication", "ph", "X",
                              "ts", t0 * 1e6, "dur", (t1 - t0) * 1e6, "pid",
                              (json_int_t)t->rank, "tid", (json_int_t)tid);
        bad |= json_array_append_new(ev, e);
    }
    free(named);
    if (bad) {
        json_decref(ev);
        return tc_fail(err, TC_EINTERNAL, "out of memory (trace)");
    }
    json_t *root = json_pack("{s:o, s:s}", "traceEvents", ev, "displayTimeUnit", "ms"); /* takes ev */
    if (!root)
        return tc_fail(err, TC_EINTERNAL, "out of memory (trace)");
    tc_status st = tc_json_write(root, path, err);
    json_decref(root);
    return st;
}

/* ---- 1F1B ---------------------------------------------------------------- */

/* Rank r's k-th forward (b = 0) or backward (b = 1): its chunk and
 * micro-batch, as in Megatron-LM's interleaved schedule (get_model_chunk_id):
 * groups of p micro-batches walk through the chunks, backwards from the last
 * chunk. v = 1: chunk 0, micro-batch k. */
static void pipe_op(uint32_t p, uint32_t v, uint32_t k, int b, uint32_t *chunk, uint32_t *mb)
{
    uint32_t g = k % (p * v);
    *chunk = g / p;
    if (b)
        *chunk = v - 1 - *chunk;
    *mb = (k / (p * v)) * p + g % p;
    if (v == 1) {
        *chunk = 0;
        *mb = k;
    }
}

tc_status tc_tl_pipeline_1f1b(tc_tl_dag *d, const tc_tl_pipe *pp, uint32_t *idx, tc_err *err)
{
    uint32_t p = pp->stages, m = pp->micro, v = pp->chunks ? pp->chunks : 1;
    if (p == 0 || m == 0)
        return tc_fail(err, TC_EINVAL, "pipeline: %u stages and %u micro-batches: expected at least 1 of each", p, m);
    if ((double)p * m * v * 4 > TL_MAX_TASKS)
        return tc_fail(err, TC_EINVAL, "pipeline: %u stages x %u micro-batches x %u chunks is too large", p, m, v);
    if (v > 1 && m % p != 0)
        return tc_fail(err, TC_EINVAL, "interleaved pipeline: %u micro-batches is not a multiple of the %u stages "
                                       "(Megatron-LM's interleaved schedule needs one)", m, p);
    if (!(pp->fwd_s >= 0) || !(pp->bwd_s >= 0) || !(pp->send_s >= 0) || !isfinite(pp->fwd_s + pp->bwd_s + pp->send_s))
        return tc_fail(err, TC_EINVAL, "pipeline: forward, backward and send times must be finite and >= 0");
    if ((uint64_t)pp->rank0 + p > TL_MAX_RANK)
        return tc_fail(err, TC_EINVAL, "pipeline: ranks %u..%u: expected below 2^24", pp->rank0, pp->rank0 + p - 1);
    if (d->status)
        return tc_fail(err, d->status, "%s", d->msg);
    uint32_t V = p * v, total = m * v; /* virtual stages; operations of each kind per rank */
    size_t nix = (size_t)2 * m * V;
    uint32_t *ix = idx ? idx : tc_calloc(nix, sizeof *ix);
    uint32_t *ord = tc_calloc((size_t)2 * total, sizeof *ord); /* one rank's order: 2 k + b */
    if (!ix || !ord) {
        if (!idx)
            free(ix);
        free(ord);
        return tc_fail(err, TC_EINTERNAL, "out of memory (pipeline)");
    }
    char name[24];
    /* Pass 1: each rank's compute tasks in its schedule order. */
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t r = 0; r < p; r++) {
            uint32_t warm;
            if (v == 1)
                warm = p - r - 1 < m ? p - r - 1 : m;
            else if (m == p)
                warm = total;
            else {
                uint64_t w = (uint64_t)(p - r - 1) * 2 + (uint64_t)(v - 1) * p;
                warm = w < total ? (uint32_t)w : total;
            }
            uint32_t no = 0;
            for (uint32_t k = 0; k < warm; k++)
                ord[no++] = 2 * k;
            for (uint32_t k = 0; k < total - warm; k++) {
                ord[no++] = 2 * (warm + k);
                ord[no++] = 2 * k + 1;
            }
            for (uint32_t k = total - warm; k < total; k++)
                ord[no++] = 2 * k + 1;
            for (uint32_t o = 0; o < no; o++) {
                int b = (int)(ord[o] & 1);
                uint32_t c, j;
                pipe_op(p, v, ord[o] >> 1, b, &c, &j);
                uint32_t vs = c * p + r;
                size_t me = 2 * ((size_t)vs * m + j) + (size_t)b;
                if (pass == 0) {
                    snprintf(name, sizeof name, "%c%u.%u", b ? 'B' : 'F', vs, j);
                    ix[me] = tc_tl_add(d, TC_TL_COMPUTE, pp->rank0 + r, 0, (b ? pp->bwd_s : pp->fwd_s) / v, name);
                    continue;
                }
                /* Pass 2: dependencies, and sends in the sender's order. */
                if (b)
                    tc_tl_dep(d, ix[me], ix[me - 1]);
                long to = b ? (long)vs - 1 : (long)vs + 1;
                if (to < 0 || to >= (long)V)
                    continue;
                size_t other = 2 * ((size_t)to * m + j) + (size_t)b;
                if ((uint32_t)to % p != r && pp->send_s > 0) {
                    snprintf(name, sizeof name, "S%c%u.%u", b ? 'B' : 'F', vs, j);
                    uint32_t sd = tc_tl_add(d, TC_TL_COMM, pp->rank0 + r, pp->stream, pp->send_s, name);
                    tc_tl_dep(d, sd, ix[me]);
                    tc_tl_dep(d, ix[other], sd);
                } else {
                    tc_tl_dep(d, ix[other], ix[me]);
                }
            }
        }
    free(ord);
    if (!idx)
        free(ix);
    if (d->status)
        return tc_fail(err, d->status, "%s", d->msg);
    return TC_OK;
}
