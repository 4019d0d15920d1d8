/*
 * cluster.c - a job trace replayed through one topology's allocation rule
 * and a scheduler: when each job starts, how long it waited, how busy the
 * cluster was, and how much of it sat idle because of shape
 * (docs/MODEL.md, "Cluster replay", states every rule implemented here).
 *
 * Event-driven: at each moment jobs finish (their endpoints freed), then
 * jobs arrive (queued in trace order), then the scheduler starts what it
 * can. Durations are known exactly when a job starts (the trace's run
 * time), which is also the estimate EASY backfilling uses: perfect
 * estimates, a common simplification of scheduler studies (assumed).
 *
 * Allocation (need(s): the endpoints a job of s gets):
 *   Clos   tc_place PACKED over the free endpoints: need(s) = s. With
 *          scale-up nodes of G: a job of s < G shares a node (the
 *          fullest with room); s >= G takes ceil(s / G) whole nodes,
 *          packed: need(s) = ceil(s / G) G.
 *   torus  a free cuboid (tc_place SLICE: the most compact shape first,
 *          the first free origin) of the smallest volume >= s that has a
 *          shape fitting the torus; need(s) is that volume.
 *   torus, ocs = K: cubes of K^d endpoints (every extent a multiple of K).
 *          need(s) >= K^d: ceil(s / K^d) whole cubes, any free ones (the
 *          optical switches join them into the job's torus); below: the
 *          smallest cuboid >= s that fits a cube, inside one cube, the
 *          fullest cube that has room first.
 *   other  the first free endpoints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/cluster.h"

#define DEFAULT_SAMPLES 100

typedef struct running {
    double end;
    uint32_t job;
} running;

typedef struct rj {             /* a running job's endpoints */
    uint32_t *map, n;
} rj;

typedef struct cl {
    const tc_topo *t;
    const tc_trace *tr;
    const tc_cluster_opts *o;
    uint32_t N, nfree;
    uint8_t *busy;              /* per endpoint */
    /* torus need per size (0: not computed); sizes are <= N */
    uint32_t *need;
    /* ocs */
    uint32_t K, V, ncubes;      /* edge, cube volume, cubes */
    uint32_t cdims[TC_MAX_DIMS];/* cubes per dimension */
    tc_topo *cube;              /* one cube as a torus of its own (for sub-cube cuboids) */
    /* torus slices, fast path (first extent <= 64): each row along the
     * first dimension a bit mask of free cells; the slice policy's shapes
     * per volume, cached */
    bool fast;
    uint32_t rows;
    uint64_t *rowfree, *w1, *w2;
    uint32_t **shp;             /* per volume: its shapes (TC_MAX_DIMS extents each) */
    size_t *nshp;
    /* running jobs: a min-heap on end */
    running *heap;
    size_t nrun;
    rj *jr;                     /* per trace job */
    /* queue: trace job indices in arrival order */
    uint32_t *q;
    size_t qhead, qlen;         /* q[qhead .. qhead + qlen) with holes UINT32_MAX */
    /* backfill reservation */
    uint32_t res_job;           /* UINT32_MAX: none */
    double shadow;
    uint8_t *res;               /* the endpoints reserved for the head */
    uint32_t *fail_short, *fail_long; /* per need: the epoch it last found no room in */
    uint32_t epoch_short, epoch_long;
    uint8_t *tmp;
    /* accounting */
    double now, busy_area, asked_area;
    double last_end; /* the last end of a job that ran: the makespan */
    double frag_area, frag_time, frag_area_arr, frag_time_arr, t_arr;
    double *ct;                 /* change log: time, allocated count */
    uint32_t *cn;
    size_t nlog, caplog;
} cl;

const char *tc_cluster_sched_name(tc_cluster_sched s)
{
    return s == TC_SCHED_BACKFILL ? "backfill" : "fifo";
}

tc_status tc_cluster_sched_parse(const char *s, tc_cluster_sched *out, tc_err *err)
{
    if (s && strcmp(s, "fifo") == 0)
        *out = TC_SCHED_FIFO;
    else if (s && (strcmp(s, "backfill") == 0 || strcmp(s, "easy") == 0))
        *out = TC_SCHED_BACKFILL;
    else
        return tc_fail(err, TC_EINVAL, "unknown scheduler '%s': accepted are fifo and backfill (EASY)", s ? s : "");
    return TC_OK;
}

/* ---- the heap of running jobs ---- */

static void heap_push(cl *c, double end, uint32_t job)
{
    size_t i = c->nrun++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (c->heap[up].end < end || (c->heap[up].end == end && c->heap[up].job < job))
            break;
        c->heap[i] = c->heap[up];
        i = up;
    }
    c->heap[i] = (running){end, job};
}

static running heap_pop(cl *c)
{
    running top = c->heap[0], last = c->heap[--c->nrun];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= c->nrun)
            break;
        if (k + 1 < c->nrun &&
            (c->heap[k + 1].end < c->heap[k].end || (c->heap[k + 1].end == c->heap[k].end && c->heap[k + 1].job < c->heap[k].job)))
            k++;
        if (last.end < c->heap[k].end || (last.end == c->heap[k].end && last.job < c->heap[k].job))
            break;
        c->heap[i] = c->heap[k];
        i = k;
    }
    c->heap[i] = last;
    return top;
}

/* ---- allocation ---- */

/* The smallest volume >= s with a cuboid of extents within dims[0..nd). */
static uint32_t cuboid_volume(const uint32_t *dims, int nd, uint32_t s, uint32_t cap)
{
    for (uint32_t v = s; v <= cap; v++) {
        /* v fits when it factors into extents, each within its dimension:
         * greedy is not enough, so search the divisors */
        uint32_t stack_v[TC_MAX_DIMS + 1];
        stack_v[0] = v;
        /* depth-first over the first dimension's divisors */
        bool ok = false;
        uint32_t x[TC_MAX_DIMS] = {0};
        int d = 0;
        x[0] = 0;
        while (d >= 0 && !ok) {
            if (d == nd - 1) {
                if (stack_v[d] <= dims[d])
                    ok = true;
                d--;
                continue;
            }
            uint32_t next = x[d] + 1;
            while (next <= dims[d] && next <= stack_v[d] && stack_v[d] % next)
                next++;
            if (next > dims[d] || next > stack_v[d]) {
                x[d] = 0;
                d--;
                continue;
            }
            x[d] = next;
            stack_v[d + 1] = stack_v[d] / next;
            d++;
            x[d] = 0;
        }
        if (ok)
            return v;
    }
    return 0;
}

static uint32_t need_of(cl *c, uint32_t s)
{
    const tc_topo *t = c->t;
    if (s > c->N)
        return 0;
    if (t->kind == TC_TOPO_CLOS && t->node_size > 1 && s >= t->node_size) {
        uint64_t v = ((uint64_t)s + t->node_size - 1) / t->node_size * t->node_size;
        return v <= c->N ? (uint32_t)v : 0;
    }
    if (t->kind != TC_TOPO_TORUS)
        return s;
    if (c->need[s])
        return c->need[s];
    uint32_t v;
    if (c->K && s >= c->V)
        v = (s + c->V - 1) / c->V * c->V;
    else if (c->K) {
        uint32_t cd[TC_MAX_DIMS];
        for (int d = 0; d < t->ndims; d++)
            cd[d] = c->K;
        v = cuboid_volume(cd, t->ndims, s, c->V);
    } else
        v = cuboid_volume(t->dims, t->ndims, s, c->N);
    if (v > c->N)
        v = 0;
    c->need[s] = v ? v : UINT32_MAX;
    return v;
}

/* Endpoint of cube `cube` at in-cube coordinates of local endpoint e
 * (the cube's own torus numbering, first dimension fastest). */
static uint32_t cube_endpoint(const cl *c, uint32_t cube, uint32_t e)
{
    const tc_topo *t = c->t;
    uint32_t x = 0, ci = cube, le = e;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t cc = ci % c->cdims[d], lc = le % c->K;
        ci /= c->cdims[d];
        le /= c->K;
        x += (cc * c->K + lc) * t->stride[d];
    }
    return x;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The slice policy (tc_place_slice_shapes: its shapes in order, the
 * first free origin in generator order, ranks first dimension fastest)
 * on rows of bit masks: a box of extents a is free at origin o when the
 * row masks, shifted and ANDed a[0] times along the first dimension, then
 * ANDed over a[d] consecutive coordinates of each further dimension, keep
 * bit o[0] of row (o[1], o[2], ...). tests/test_cluster.c checks it gives
 * tc_place_map_free's map on random occupancies. */
static tc_status fast_slice(cl *c, uint32_t need, const uint8_t *busy, uint32_t **map, tc_err *err)
{
    const tc_topo *t = c->t;
    if (!c->shp[need]) {
        uint32_t *e;
        size_t k;
        tc_status st = tc_place_slice_shapes(t, need, &e, &k, err);
        if (st)
            return st;
        c->shp[need] = e;
        c->nshp[need] = k;
    }
    uint32_t X = t->dims[0], R = c->rows;
    for (uint32_t r = 0; r < R; r++) {
        uint64_t m = 0;
        for (uint32_t x = 0; x < X; x++)
            m |= (uint64_t)!busy[r * X + x] << x;
        c->rowfree[r] = m;
    }
    for (size_t k = 0; k < c->nshp[need]; k++) {
        const uint32_t *a = c->shp[need] + k * TC_MAX_DIMS;
        uint64_t *w = c->w1, *u = c->w2;
        for (uint32_t r = 0; r < R; r++) {
            uint64_t m = c->rowfree[r], acc = m;
            for (uint32_t i = 1; i < a[0]; i++)
                acc &= m >> i;
            w[r] = acc;
        }
        uint32_t rs = 1; /* rows per step along dimension d */
        for (int d = 1; d < t->ndims; d++) {
            for (uint32_t r = 0; r < R; r++) {
                uint32_t cd = r / rs % t->dims[d];
                if (cd + a[d] > t->dims[d]) {
                    u[r] = 0;
                    continue;
                }
                uint64_t acc = w[r];
                for (uint32_t i = 1; i < a[d] && acc; i++)
                    acc &= w[r + i * rs];
                u[r] = acc;
            }
            uint64_t *tmp = w;
            w = u;
            u = tmp;
            rs *= t->dims[d];
        }
        for (uint32_t r = 0; r < R; r++) {
            if (!w[r])
                continue;
            uint32_t o0 = (uint32_t)__builtin_ctzll(w[r]);
            uint32_t *m = malloc((size_t)need * sizeof *m);
            if (!m)
                return tc_fail(err, TC_EINTERNAL, "out of memory");
            uint32_t cc[TC_MAX_DIMS] = {0}, base = r * X + o0;
            for (uint32_t q = 0; q < need; q++) {
                uint32_t e = base;
                for (int d = 0; d < t->ndims; d++)
                    e += cc[d] * t->stride[d];
                m[q] = e;
                for (int d = 0; d < t->ndims && ++cc[d] == a[d]; d++)
                    cc[d] = 0;
            }
            *map = m;
            return TC_OK;
        }
    }
    return TC_EINVAL;
}

/* Tries to give job j need endpoints on the flags busy (which it sets);
 * *map receives them (malloc'ed). TC_EINVAL: no room now. */
static tc_status try_alloc(cl *c, uint32_t need, uint8_t *busy, uint32_t **map, tc_err *err)
{
    const tc_topo *t = c->t;
    *map = NULL;
    uint32_t nfree = 0;
    if (busy == c->busy)
        nfree = c->nfree;
    else
        for (uint32_t e = 0; e < c->N; e++)
            nfree += !busy[e];
    if (need > nfree)
        return TC_EINVAL;
    if (c->K && need >= c->V) {
        uint32_t k = need / c->V, got = 0;
        uint32_t *m = malloc((size_t)need * sizeof *m);
        if (!m)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t cu = 0; cu < c->ncubes && got < k; cu++) {
            bool free_cube = true;
            for (uint32_t e = 0; e < c->V && free_cube; e++)
                free_cube = !busy[cube_endpoint(c, cu, e)];
            if (!free_cube)
                continue;
            for (uint32_t e = 0; e < c->V; e++)
                m[got * c->V + e] = cube_endpoint(c, cu, e);
            got++;
        }
        if (got < k) {
            free(m);
            return TC_EINVAL;
        }
        for (uint32_t i = 0; i < need; i++)
            busy[m[i]] = 1;
        *map = m;
        return TC_OK;
    }
    if (c->K) {
        /* inside one cube: the fullest cube with room first (best fit),
         * then the lowest cube index */
        uint32_t *f = malloc((size_t)c->ncubes * 2 * sizeof *f), nc = 0, *m = NULL;
        uint8_t *lb = malloc(c->V);
        tc_status st = f && lb ? TC_EINVAL : tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t cu = 0; st == TC_EINVAL && cu < c->ncubes; cu++) {
            uint32_t fr = 0;
            for (uint32_t e = 0; e < c->V; e++)
                fr += !busy[cube_endpoint(c, cu, e)];
            if (fr >= need) {
                f[2 * nc] = fr;
                f[2 * nc++ + 1] = cu;
            }
        }
        if (st == TC_EINVAL)
            qsort(f, nc, 2 * sizeof *f, cmp_pair);
        for (uint32_t i = 0; st == TC_EINVAL && i < nc; i++) {
            uint32_t cu = f[2 * i + 1], n;
            for (uint32_t e = 0; e < c->V; e++)
                lb[e] = busy[cube_endpoint(c, cu, e)];
            tc_job_place jp = {.policy = TC_PLACE_SLICE, .ranks = need};
            tc_err e2;
            st = tc_place_map_free(c->cube, &jp, lb, &m, &n, NULL, &e2);
            if (st == TC_EINTERNAL)
                tc_fail(err, st, "%s", e2.msg);
            for (uint32_t k = 0; st == TC_OK && k < n; k++)
                m[k] = cube_endpoint(c, cu, m[k]);
        }
        free(f);
        free(lb);
        if (st)
            return st;
        for (uint32_t i = 0; i < need; i++)
            busy[m[i]] = 1;
        *map = m;
        return TC_OK;
    }
    if (t->kind == TC_TOPO_CLOS && t->node_size > 1 && need < t->node_size) {
        /* a job smaller than a node shares a node: the fullest node with
         * room (best fit), then the lowest, its lowest free endpoints */
        uint32_t G = t->node_size, best = UINT32_MAX, bestf = UINT32_MAX;
        for (uint32_t nd = 0; nd * G < c->N; nd++) {
            uint32_t f = 0;
            for (uint32_t e = nd * G; e < (nd + 1) * G && e < c->N; e++)
                f += !busy[e];
            if (f >= need && f < bestf) {
                bestf = f;
                best = nd;
            }
        }
        if (best == UINT32_MAX)
            return TC_EINVAL;
        uint32_t *m = malloc((size_t)need * sizeof *m), k = 0;
        if (!m)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t e = best * G; k < need; e++)
            if (!busy[e]) {
                m[k++] = e;
                busy[e] = 1;
            }
        *map = m;
        return TC_OK;
    }
    if (c->fast) {
        tc_status st = fast_slice(c, need, busy, map, err);
        if (st == TC_OK)
            for (uint32_t i = 0; i < need; i++)
                busy[(*map)[i]] = 1;
        return st;
    }
    tc_job_place jp = {.policy = t->kind == TC_TOPO_CLOS     ? TC_PLACE_PACKED
                                 : t->kind == TC_TOPO_TORUS ? TC_PLACE_SLICE
                                                            : TC_PLACE_FIRST,
                       .ranks = need};
    uint32_t n;
    tc_err e2;
    tc_status st = tc_place_map_free(t, &jp, busy, map, &n, NULL, &e2);
    if (st == TC_EINTERNAL)
        return tc_fail(err, st, "%s", e2.msg);
    return st;
}

/* ---- accounting ---- */

static tc_status log_change(cl *c)
{
    if (c->nlog == c->caplog) {
        size_t cap = c->caplog ? 2 * c->caplog : 1024;
        double *ct = realloc(c->ct, cap * sizeof *ct);
        if (ct)
            c->ct = ct;
        uint32_t *cn = realloc(c->cn, cap * sizeof *cn);
        if (cn)
            c->cn = cn;
        if (!ct || !cn)
            return TC_EINTERNAL;
        c->caplog = cap;
    }
    c->ct[c->nlog] = c->now;
    c->cn[c->nlog++] = c->N - c->nfree;
    return TC_OK;
}

/* ---- scheduling ---- */

static uint32_t queue_at(const cl *c, size_t i)
{
    return c->q[c->qhead + i];
}

/* The head: the first job still waiting. */
static size_t head_pos(cl *c)
{
    while (c->qlen && c->q[c->qhead] == UINT32_MAX) {
        c->qhead++;
        c->qlen--;
    }
    return 0;
}

static tc_status start(cl *c, uint32_t j, uint32_t *map, uint32_t need, tc_cluster_out *out)
{
    const tc_cjob *jb = &c->tr->jobs[j];
    for (uint32_t i = 0; i < need; i++) {
        c->busy[map[i]] = 1;
    }
    c->nfree -= need;
    c->jr[j].map = map;
    c->jr[j].n = need;
    out->job[j].start_s = c->now;
    out->job[j].wait_s = c->now - jb->submit_s;
    out->job[j].alloc = need;
    out->job[j].first = map[0];
    out->started++;
    c->busy_area += (double)need * jb->duration_s;
    c->asked_area += (double)jb->size * jb->duration_s;
    if (c->now + jb->duration_s > c->last_end)
        c->last_end = c->now + jb->duration_s;
    heap_push(c, c->now + jb->duration_s, j);
    return log_change(c) ? TC_EINTERNAL : TC_OK;
}

/* Backfill's reservation for the head h: the earliest end of running jobs
 * (in end order, jobs ending together released together) after which the
 * allocation rule finds the head room, and the endpoints it takes there.
 * Room only grows as jobs are released, so the earliest such end is found
 * by bisection. */
static tc_status feasible_after(cl *c, const running *v, size_t k, uint32_t need, uint32_t **map, tc_err *err)
{
    memcpy(c->tmp, c->busy, c->N);
    for (size_t i = 0; i < k; i++) {
        const rj *r = &c->jr[v[i].job];
        for (uint32_t x = 0; x < r->n; x++)
            c->tmp[r->map[x]] = 0;
    }
    return try_alloc(c, need, c->tmp, map, err);
}

static int cmp_running(const void *a, const void *b)
{
    const running *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->job < y->job ? -1 : x->job > y->job;
}

static tc_status reserve(cl *c, uint32_t h, tc_err *err)
{
    uint32_t need = need_of(c, c->tr->jobs[h].size);
    running *v = malloc((c->nrun ? c->nrun : 1) * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    memcpy(v, c->heap, c->nrun * sizeof *v);
    qsort(v, c->nrun, sizeof *v, cmp_running);
    /* candidates: k = the number released, at the end of a group of equal
     * ends, with at least need endpoints free */
    size_t lo = 0, hi = c->nrun;
    uint64_t nfree = c->nfree;
    while (lo < c->nrun && nfree < need)
        nfree += c->jr[v[lo++].job].n;
    while (lo < c->nrun && lo > 0 && v[lo].end == v[lo - 1].end)
        lo++;
    /* bisection over group ends in [lo, hi]: the room after all of them
     * (the empty cluster's, but for jobs that never end before) exists */
    tc_status st = TC_OK;
    uint32_t *map = NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        while (mid < hi && mid > 0 && v[mid].end == v[mid - 1].end)
            mid++;
        if (mid >= hi) {
            /* no group end inside (lo, hi): test lo itself */
            mid = lo;
        }
        uint32_t *m = NULL;
        st = feasible_after(c, v, mid, need, &m, err);
        if (st == TC_EINTERNAL)
            break;
        free(m);
        if (st == TC_OK)
            hi = mid;
        else if (mid == lo) {
            lo++;
            while (lo < hi && v[lo].end == v[lo - 1].end)
                lo++;
        } else
            lo = mid;
        st = TC_OK;
    }
    if (st == TC_OK) {
        c->res_job = h;
        c->shadow = hi > 0 ? v[hi - 1].end : c->now;
        st = feasible_after(c, v, hi, need, &map, err);
        if (st == TC_EINVAL) {
            c->shadow = INFINITY; /* cannot happen: it fits the empty cluster */
            st = TC_OK;
        }
    }
    free(v);
    if (st)
        return st;
    memset(c->res, 0, c->N);
    for (uint32_t k = 0; map && k < need; k++)
        c->res[map[k]] = 1;
    free(map);
    c->epoch_long++;
    return TC_OK;
}

/* Room only shrinks between releases (jobs start, none end), so a need
 * that found none finds none again until something ends: remembered per
 * need, for the cluster as it is (short) and without the reservation
 * (long), by epochs that a release (or a new reservation) moves on. */
static bool failed(const cl *c, uint32_t need, int lng)
{
    return lng ? c->fail_long[need] == c->epoch_long : c->fail_short[need] == c->epoch_short;
}

static void mark_failed(cl *c, uint32_t need, int lng)
{
    if (lng)
        c->fail_long[need] = c->epoch_long;
    else
        c->fail_short[need] = c->epoch_short;
}

static tc_status schedule(cl *c, tc_cluster_out *out, tc_err *err)
{
    tc_status st;
    /* first come, first served: the head while it fits */
    for (;;) {
        head_pos(c);
        if (!c->qlen)
            return TC_OK;
        uint32_t h = queue_at(c, 0), need = need_of(c, c->tr->jobs[h].size), *map = NULL;
        st = TC_EINVAL;
        if (need <= c->nfree && !failed(c, need, 0)) {
            memcpy(c->tmp, c->busy, c->N);
            st = try_alloc(c, need, c->tmp, &map, err);
            if (st == TC_EINVAL)
                mark_failed(c, need, 0);
        }
        if (st == TC_EINTERNAL)
            return st;
        if (st != TC_OK)
            break;
        c->q[c->qhead] = UINT32_MAX;
        if ((st = start(c, h, map, need, out)))
            return tc_fail(err, st, "out of memory");
    }
    if (c->o->sched != TC_SCHED_BACKFILL)
        return TC_OK;
    uint32_t h = queue_at(c, 0);
    if (c->res_job != h && (st = reserve(c, h, err)))
        return st;
    /* EASY: a later job starts now if it fits and ends by the shadow time,
     * or fits outside the head's reserved endpoints. */
    for (size_t i = 1; i < c->qlen; i++) {
        uint32_t j = queue_at(c, i);
        if (j == UINT32_MAX)
            continue;
        const tc_cjob *jb = &c->tr->jobs[j];
        uint32_t need = need_of(c, jb->size), *map;
        if (need > c->nfree)
            continue;
        int lng = c->now + jb->duration_s > c->shadow;
        if (failed(c, need, lng) || (lng && failed(c, need, 0)))
            continue;
        for (uint32_t e = 0; e < c->N; e++)
            c->tmp[e] = c->busy[e] | (lng ? c->res[e] : 0);
        st = try_alloc(c, need, c->tmp, &map, err);
        if (st == TC_EINTERNAL)
            return st;
        if (st != TC_OK) {
            mark_failed(c, need, lng);
            continue;
        }
        c->q[c->qhead + i] = UINT32_MAX;
        if ((st = start(c, j, map, need, out)))
            return tc_fail(err, st, "out of memory");
    }
    return TC_OK;
}

/* Is the head waiting with enough endpoints free (blocked by shape)? */
static bool blocked_by_shape(cl *c)
{
    head_pos(c);
    if (!c->qlen)
        return false;
    uint32_t need = need_of(c, c->tr->jobs[queue_at(c, 0)].size);
    return need <= c->nfree;
}

/* ---- the replay ---- */

static void cl_free(cl *c)
{
    free(c->busy);
    free(c->need);
    tc_topo_free(c->cube);
    free(c->heap);
    if (c->jr)
        for (size_t j = 0; j < c->tr->n; j++)
            free(c->jr[j].map);
    free(c->jr);
    free(c->q);
    free(c->res);
    free(c->fail_short);
    free(c->rowfree);
    free(c->w1);
    free(c->w2);
    for (uint32_t v = 0; c->shp && v <= c->N; v++)
        free(c->shp[v]);
    free(c->shp);
    free(c->nshp);
    free(c->fail_long);
    free(c->tmp);
    free(c->ct);
    free(c->cn);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

/* The mean allocated share over [0, T] from the change log (a step
 * function); over the makespan when T is 0. */
static double span_util(const cl *c, double T)
{
    if (!(T > 0))
        T = c->now;
    if (!(T > 0))
        return 0;
    double area = 0;
    for (size_t i = 0; i < c->nlog && c->ct[i] < T; i++) {
        double z = i + 1 < c->nlog && c->ct[i + 1] < T ? c->ct[i + 1] : T;
        area += (z - c->ct[i]) * c->cn[i];
    }
    return area / (T * c->N);
}

tc_status tc_cluster_ocs_check(const tc_topo *t, uint32_t ocs, tc_err *err)
{
    if (!ocs)
        return TC_OK;
    if (t->kind != TC_TOPO_TORUS)
        return tc_fail(err, TC_EINVAL, "ocs=%u needs a torus (cubes joined by optical switches)", ocs);
    if (ocs < 2)
        return tc_fail(err, TC_EINVAL, "ocs=%u: a cube needs an edge of at least 2 (TPU v4: 4), or 0 for no optical "
                                       "switches",
                       ocs);
    uint64_t V = 1;
    for (int d = 0; d < t->ndims; d++) {
        if (t->dims[d] % ocs)
            return tc_fail(err, TC_EINVAL, "ocs=%u: the torus's extent %u along dimension %d is not a multiple of it "
                                           "(expected cubes of %u per dimension)",
                           ocs, t->dims[d], d, ocs);
        V *= ocs;
    }
    if (V > 4096)
        return tc_fail(err, TC_EINVAL, "ocs=%u: cubes of %llu endpoints are beyond the 4096 supported", ocs,
                       (unsigned long long)V);
    return TC_OK;
}

static tc_status ocs_setup(cl *c, tc_err *err)
{
    const tc_topo *t = c->t;
    c->K = c->o->ocs;
    tc_status st = tc_cluster_ocs_check(t, c->K, err);
    if (st || !c->K)
        return st;
    char spec[128];
    size_t n = (size_t)snprintf(spec, sizeof spec, "torus:dims=");
    c->V = 1;
    c->ncubes = 1;
    for (int d = 0; d < t->ndims; d++) {
        c->cdims[d] = t->dims[d] / c->K;
        c->ncubes *= c->cdims[d];
        c->V *= c->K;
        n += (size_t)snprintf(spec + n, sizeof spec - n, "%s%u", d ? "x" : "", c->K);
    }
    return tc_topo_build(spec, &c->cube, err);
}

tc_status tc_cluster_replay(const tc_topo *t, const tc_trace *tr, const tc_cluster_opts *o, tc_cluster_out *out,
                            tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (!t || !tr || !o)
        return tc_fail(err, TC_EINTERNAL, "cluster replay: missing topology, trace or options");
    cl c = {.t = t, .tr = tr, .o = o, .N = t->n_endpoints, .nfree = t->n_endpoints, .res_job = UINT32_MAX};
    tc_status st = ocs_setup(&c, err);
    if (st) {
        cl_free(&c);
        return st;
    }
    size_t n = tr->n;
    if (t->kind == TC_TOPO_TORUS && !c.K && t->dims[0] <= 64 && !o->place_lib) {
        c.fast = true;
        c.rows = c.N / t->dims[0];
        c.rowfree = malloc(c.rows * sizeof *c.rowfree);
        c.w1 = malloc(c.rows * sizeof *c.w1);
        c.w2 = malloc(c.rows * sizeof *c.w2);
        c.shp = tc_calloc((size_t)c.N + 1, sizeof *c.shp);
        c.nshp = tc_calloc((size_t)c.N + 1, sizeof *c.nshp);
        if (!c.rowfree || !c.w1 || !c.w2 || !c.shp || !c.nshp) {
            cl_free(&c);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
    }
    c.busy = tc_calloc(c.N, 1);
    c.res = tc_calloc(c.N, 1);
    c.tmp = tc_calloc(c.N, 1);
    c.need = tc_calloc((size_t)c.N + 1, sizeof *c.need);
    c.fail_short = tc_calloc((size_t)c.N + 1, sizeof *c.fail_short);
    c.fail_long = tc_calloc((size_t)c.N + 1, sizeof *c.fail_long);
    c.epoch_short = c.epoch_long = 1;
    c.heap = malloc((n ? n : 1) * sizeof *c.heap);
    c.jr = tc_calloc(n ? n : 1, sizeof *c.jr);
    c.q = malloc((n ? n : 1) * sizeof *c.q);
    out->job = tc_calloc(n ? n : 1, sizeof *out->job);
    uint32_t ns = o->samples ? o->samples : DEFAULT_SAMPLES;
    out->t_s = tc_calloc(ns, sizeof *out->t_s);
    out->util = tc_calloc(ns, sizeof *out->util);
    if (!c.busy || !c.res || !c.fail_short || !c.fail_long || !c.tmp || !c.need || !c.heap || !c.jr || !c.q || !out->job || !out->t_s ||
        !out->util) {
        cl_free(&c);
        tc_cluster_out_free(out);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    out->jobs = n;
    out->samples = ns;
    for (size_t j = 0; j < n; j++) {
        out->job[j].start_s = NAN;
        out->job[j].wait_s = NAN;
    }
    size_t next = 0, done = 0;
    c.t_arr = n ? tr->jobs[n - 1].submit_s : 0;
    st = log_change(&c) ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
    while (st == TC_OK && (next < n || c.nrun || c.qlen)) {
        double tn = INFINITY;
        if (next < n)
            tn = tr->jobs[next].submit_s;
        if (c.nrun && c.heap[0].end <= tn)
            tn = c.heap[0].end;
        if (!isfinite(tn)) {
            /* nothing runs, nothing arrives, the queue waits: impossible
             * (every queued job fits the empty cluster) */
            st = tc_fail(err, TC_EINTERNAL, "internal: the cluster replay stalled with %zu jobs queued", c.qlen);
            break;
        }
        /* the interval up to tn */
        if (blocked_by_shape(&c)) {
            c.frag_area += (tn - c.now) * (double)c.nfree / c.N;
            c.frag_time += tn - c.now;
            double z = tn < c.t_arr ? tn : c.t_arr;
            if (z > c.now) {
                c.frag_area_arr += (z - c.now) * (double)c.nfree / c.N;
                c.frag_time_arr += z - c.now;
            }
        }
        c.now = tn;
        bool freed = false;
        while (c.nrun && c.heap[0].end <= c.now) {
            running r = heap_pop(&c);
            rj *x = &c.jr[r.job];
            for (uint32_t k = 0; k < x->n; k++)
                c.busy[x->map[k]] = 0;
            c.nfree += x->n;
            free(x->map);
            x->map = NULL;
            done++;
            freed = true;
            if (o->progress && done % 1000 == 0)
                o->progress(o->progress_ctx, done, n);
        }
        if (freed) {
            c.epoch_short++;
            c.epoch_long++;
            if (log_change(&c)) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
                break;
            }
        }
        while (next < n && tr->jobs[next].submit_s <= c.now) {
            const tc_cjob *jb = &tr->jobs[next];
            if (jb->size == 0 || !(jb->duration_s > 0)) {
                st = tc_fail(err, TC_EINVAL, "trace job at line %llu: size %u, duration %g: expected a size >= 1 and "
                                             "a duration > 0",
                             (unsigned long long)jb->line, jb->size, jb->duration_s);
                break;
            }
            if (!need_of(&c, jb->size)) {
                out->job[next].never_fits = 1;
                out->never_fit++;
                done++;
            } else
                c.q[c.qhead + c.qlen++] = (uint32_t)next;
            next++;
        }
        if (st == TC_OK)
            st = schedule(&c, out, err);
        if (st == TC_OK && c.res_job != UINT32_MAX && (!c.qlen || queue_at(&c, 0) != c.res_job))
            c.res_job = UINT32_MAX;
    }
    if (st == TC_OK) {
        /* the last end, not the last event: arrivals of jobs that never
         * fit may come after it (nothing runs or waits after it, so the
         * areas below end there too) */
        double T = c.last_end;
        out->makespan_s = T;
        double cap = (double)c.N * T;
        out->util_mean = cap > 0 ? c.busy_area / cap : 0;
        out->waste_share = c.busy_area > 0 ? 1 - c.asked_area / c.busy_area : 0;
        out->util_arrivals = span_util(&c, n ? tr->jobs[n - 1].submit_s : 0);
        out->frag_mean = T > 0 ? c.frag_area / T : 0;
        out->frag_time_share = T > 0 ? c.frag_time / T : 0;
        /* over the arrivals' span, or the makespan when they all come at once */
        out->frag_arrivals = c.t_arr > 0 ? c.frag_area_arr / c.t_arr : out->frag_mean;
        out->frag_time_arrivals = c.t_arr > 0 ? c.frag_time_arr / c.t_arr : out->frag_time_share;
        double *w = malloc((out->started ? out->started : 1) * sizeof *w);
        if (!w)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        size_t k = 0;
        for (size_t j = 0; w && j < n; j++)
            if (!out->job[j].never_fits)
                w[k++] = out->job[j].wait_s;
        if (w) {
            qsort(w, k, sizeof *w, cmp_double);
            double sum = 0;
            for (size_t i = 0; i < k; i++)
                sum += w[i];
            out->wait_mean_s = k ? sum / (double)k : NAN;
            out->wait_p50_s = quantile(w, k, 0.5);
            out->wait_p99_s = quantile(w, k, 0.99);
            out->wait_max_s = k ? w[k - 1] : NAN;
            free(w);
        }
        /* the utilisation series over the arrivals' span (the makespan
         * when they all come at once): each bin's mean allocated share,
         * from the change log (a step function) */
        double span = c.t_arr > 0 ? c.t_arr : T;
        double width = span > 0 ? span / ns : 0;
        size_t li = 0;
        for (uint32_t b = 0; b < ns; b++) {
            double lo = b * width, hi = (b + 1) * width, area = 0;
            out->t_s[b] = lo;
            while (li + 1 < c.nlog && c.ct[li + 1] <= lo)
                li++;
            for (size_t i = li; i < c.nlog && c.ct[i] < hi; i++) {
                double a = c.ct[i] > lo ? c.ct[i] : lo;
                double z = i + 1 < c.nlog && c.ct[i + 1] < hi ? c.ct[i + 1] : hi;
                if (z > a)
                    area += (z - a) * c.cn[i];
            }
            out->util[b] = width > 0 ? area / (width * c.N) : 0;
        }
        if (o->progress)
            o->progress(o->progress_ctx, n, n);
    }
    cl_free(&c);
    if (st)
        tc_cluster_out_free(out);
    return st;
}

void tc_cluster_out_free(tc_cluster_out *o)
{
    if (!o)
        return;
    free(o->t_s);
    free(o->util);
    free(o->job);
    memset(o, 0, sizeof *o);
}
