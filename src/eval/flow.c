/*
 * flow.c - the flow evaluator: an event-driven, flow-level simulation of
 * schedules on a network with max-min fair sharing (docs/MODEL.md, "flow";
 * the model of SimGrid's flow-level network, Velho et al., "On the validity
 * of flow-level TCP network models for grid and cloud simulations", ACM
 * TOMACS 23(4), 2013, without its TCP corrections).
 *
 * A transfer issued at t0 waits alpha after its sender's earlier messages
 * (the sender's overhead clock), then sends (its flow is in the rate solver,
 * maxmin.c), then propagates for its path latency and is delivered.
 * Each flow has exactly one pending event at a time (start, end of sending,
 * delivery), so a queue of flows keyed by that time is the event queue:
 * FIFO lanes of nondecreasing times, where most times go, and an indexed
 * 4-ary heap for the rest ("the event queue" below). Events within
 * TC_FLOW_BATCH_REL of the earliest (one job: GRID_BATCH units of its time
 * grid, below) are one batch, after
 * which the solver recomputes the rates of the components that changed, and
 * only flows whose rate changed get a new finish time. A flow's bytes left
 * are brought up to date only when its rate changes (rem -= rate * elapsed).
 *
 * Dependencies (flow.h): per rank (fl_rank), issue is the next step whose
 * sends it has not issued, pend its undelivered receives of steps before
 * issue, outst its sends still being sent. A transfer that must wait for its
 * receiver (rendezvous; under auto, one above the eager limit) is parked on
 * the receiver's entry for its step until the receiver reaches the step.
 * Steps are emitted on demand into a window [lo, hi) of slots, one per step:
 * its transfers sorted by sender (a table, fl_tab, shared by consecutive
 * steps that carry the same transfers) and its counters; a slot is reused
 * once every rank has passed it and all its transfers are delivered. What a
 * step holds for one rank, receives delivered before the rank reached the
 * step and transfers parked on it, is kept by the rank (fl_ahead), for the
 * steps ahead of it that have any: memory in proportion to the ranks and
 * steps in flight, not to ranks times live steps.
 *
 * Data layout: flows are structs of arrays indexed by flow id, ids recycled
 * through a free list; a rank's counters are one struct (fl_rank, 32
 * bytes); link byte counters are one array by link ID. Nothing is allocated
 * per event once the arrays have grown.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "eval/flow_sim.h"
#include "eval/eval_int.h"

static tc_status oom(fl_sim *S)
{
    if (S->st == TC_OK)
        S->st = tc_fail(S->err, TC_EINTERNAL, "flow evaluator: out of memory");
    return S->st;
}

/* ---- the event queue ----
 *
 * Each flow with a pending event is in one of two places. Most events are
 * scheduled a fixed delay after the event that schedules them (a start
 * alpha after the issue, a delivery a path latency after the end of
 * sending, an end of sending at one of a few rates), so the times inserted
 * by one kind come in order: such a time goes at the tail of a lane, a
 * FIFO of nondecreasing times (the lane whose tail is the latest no later
 * than it). A time no lane can take goes to an indexed 4-ary heap. The
 * earliest event is the earliest of the heap's top and the lanes' heads
 * (ties: the heap first, then the lanes in order). A flow in a lane whose
 * time changes leaves a stale entry behind (its generation is no longer
 * the flow's), skipped when it reaches the head. */

/* A 4-ary heap of (time, flow) pairs: the four children of a node share one
 * cache line (fl_sim.heap), and the tree is half as deep as a binary one. */
#define HEAP_D 4

static void heap_place(fl_sim *S, uint32_t i, fl_hent e)
{
    S->heap[i] = e;
    S->fl[e.f].hpos = i;
}

static void heap_up(fl_sim *S, uint32_t i)
{
    fl_hent e = S->heap[i];
    while (i > 0) {
        uint32_t up = (i - 1) / HEAP_D;
        if (S->heap[up].key <= e.key)
            break;
        heap_place(S, i, S->heap[up]);
        i = up;
    }
    heap_place(S, i, e);
}

static void heap_down(fl_sim *S, uint32_t i)
{
    fl_hent e = S->heap[i];
    uint32_t n = S->hn;
    for (;;) {
        uint32_t c = HEAP_D * i + 1;
        if (c >= n)
            break;
        uint32_t best = c;
        double bk = S->heap[c].key;
        uint32_t last = c + HEAP_D < n ? c + HEAP_D : n;
        for (uint32_t k = c + 1; k < last; k++)
            if (S->heap[k].key < bk) {
                bk = S->heap[k].key;
                best = k;
            }
        if (bk >= e.key)
            break;
        heap_place(S, i, S->heap[best]);
        i = best;
    }
    heap_place(S, i, e);
}

/* Removes flow f, in the heap, from it. */
static void heap_remove(fl_sim *S, uint32_t f)
{
    uint32_t i = S->fl[f].hpos;
    if (--S->hn == i)
        return;
    double old = S->heap[i].key;
    heap_place(S, i, S->heap[S->hn]);
    if (S->heap[i].key < old)
        heap_up(S, i);
    else
        heap_down(S, i);
}

/* Lane L's i-th entry from its head. */
static inline fl_hent *lane_at(fl_lane *L, uint32_t i)
{
    return &L->v[(L->head + i) & (L->cap - 1)];
}

/* Lane k's head and tail times, after a change. */
static inline void lane_ends(fl_sim *S, uint32_t k)
{
    fl_lane *L = &S->lanes[k];
    S->qhead[k] = L->n ? L->v[L->head].key : INFINITY;
    S->qtail[k] = L->n ? lane_at(L, L->n - 1)->key : -INFINITY;
}

/* What the event of flow f, now at a lane's head, touches beyond its
 * records (fetched while it was behind the head): its sender's route when
 * it starts, its sender's state and its links' occupancy when it ends its
 * sending, its receiver's state when it is delivered. The lane heads are
 * the next events; at 16,384 ranks these lines are out of cache by then
 * (docs/PERFORMANCE.md). A hint only: the simulation is the same. */
static inline void prefetch_event(const fl_sim *S, uint32_t f)
{
    const fl_flow *F = &S->fl[f];
    const fl_job *J = &S->jobs[F->job];
    if (F->state == ST_XMIT) {
        if (F->src < J->p)
            __builtin_prefetch(&J->rk[F->src]);
        if (f < S->mm.fcap) {
            const tc_mm_flow *M = tc_mm_flow_at(&S->mm, f);
            for (uint32_t k = 0; k < M->held; k++)
                __builtin_prefetch(&S->mm.occ[M->inc[k].link]);
        }
    } else if (F->state == ST_PROP && F->dst < J->p) {
        __builtin_prefetch(&J->rk[F->dst]);
    } else if (F->state == ST_ALPHA && J->rc && F->src < J->p) {
        __builtin_prefetch(&J->rc[F->src]);
        __builtin_prefetch(J->rc_path + (size_t)F->src * S->stride);
    }
}

/* Drops lane k's head, and the stale entries behind it. */
static void lane_pop(fl_sim *S, uint32_t k)
{
    fl_lane *L = &S->lanes[k];
    L->head = (L->head + 1) & (L->cap - 1);
    L->n--;
    while (L->n && S->fl[L->v[L->head].f].hpos != FL_LANE_POS(k, L->head)) {
        L->head = (L->head + 1) & (L->cap - 1);
        L->n--;
        S->q_stale--;
    }
    /* the records of the entry behind the head: read when it comes to the
     * head, or by its event */
    if (L->n > 1) {
        uint32_t g = L->v[(L->head + 1) & (L->cap - 1)].f;
        __builtin_prefetch(&S->fl[g]);
        if (g < S->mm.fcap)
            __builtin_prefetch(tc_mm_flow_at(&S->mm, g));
    }
    if (L->n) {
        S->qhead[k] = L->v[L->head].key;
        prefetch_event(S, L->v[L->head].f);
    } else {
        lane_ends(S, k);
    }
}

/* Lane k's entries that are not stale, in order, into a new array of nc
 * (at least their number); false when out of memory. */
static bool lane_rebuild(fl_sim *S, uint32_t k, uint32_t nc)
{
    fl_lane *L = &S->lanes[k];
    fl_hent *v = malloc(nc * sizeof *v);
    if (!v)
        return false;
    uint32_t m = 0;
    for (uint32_t i = 0; i < L->n; i++) {
        uint32_t at = (L->head + i) & (L->cap - 1);
        if (S->fl[L->v[at].f].hpos == FL_LANE_POS(k, at))
            v[m++] = L->v[at];
        else
            S->q_stale--;
    }
    for (uint32_t i = 0; i < m; i++)
        S->fl[v[i].f].hpos = FL_LANE_POS(k, i);
    free(L->v);
    L->v = v;
    L->cap = nc;
    L->head = 0;
    L->n = m;
    lane_ends(S, k);
    return true;
}

/* Appends (key, f) to lane k; false when it cannot take it. */
static bool lane_push(fl_sim *S, uint32_t k, double key, uint32_t f)
{
    fl_lane *L = &S->lanes[k];
    if (L->n == L->cap && (L->cap >= FL_LANE_MAX || !lane_rebuild(S, k, L->cap ? 2 * L->cap : 256)))
        return false;
    uint32_t at = (L->head + L->n++) & (L->cap - 1);
    L->v[at] = (fl_hent){key, f};
    S->fl[f].hpos = FL_LANE_POS(k, at);
    if (L->n == 1)
        S->qhead[k] = key;
    S->qtail[k] = key;
    return true;
}

/* Takes flow f out of the queue (it has a pending event). */
static void q_remove(fl_sim *S, uint32_t f)
{
    uint32_t h = S->fl[f].hpos;
    if (!FL_IN_LANE(h)) {
        heap_remove(S, f);
        S->fl[f].hpos = NONE;
        return;
    }
    uint32_t k = FL_LANE_OF(h);
    S->fl[f].hpos = NONE;
    if (S->lanes[k].head == FL_LANE_AT(h)) {
        lane_pop(S, k);
        return;
    }
    /* Left behind, stale; rebuilt away when the stale outnumber the rest. */
    if (++S->q_stale > 1024 && S->q_stale > 2 * (uint64_t)S->fhigh)
        for (uint32_t i = 0; i < FL_LANES; i++)
            if (S->lanes[i].n && !lane_rebuild(S, i, S->lanes[i].cap))
                oom(S);
}

/* Sets flow f's event time (the heap has room for every flow id). */
static void q_set(fl_sim *S, uint32_t f, double key)
{
    uint32_t h = S->fl[f].hpos;
    if (h != NONE && !FL_IN_LANE(h)) {
        /* in the heap: moved there */
        double old = S->heap[h].key;
        S->heap[h].key = key;
        if (key < old)
            heap_up(S, h);
        else
            heap_down(S, h);
        return;
    }
    if (h != NONE)
        q_remove(S, f);
    /* The lane whose tail is the latest no later than key; else an empty
     * one; else the heap. */
    int best = -1;
    double bk = -INFINITY;
    for (int k = 0; k < FL_LANES; k++) {
        double tk = S->qtail[k];
        if (tk <= key && tk > bk) {
            bk = tk;
            best = k;
        }
    }
    for (int k = 0; k < FL_LANES && best < 0; k++)
        if (!S->lanes[k].n)
            best = k;
    if (best >= 0 && lane_push(S, (uint32_t)best, key, f))
        return;
    uint32_t i = S->hn++;
    heap_place(S, i, (fl_hent){key, f});
    heap_up(S, i);
}

/* Of lanes a and b (a < b), the one with the earlier head; a on a tie. */
static inline int lane_earlier(const double *q, int a, int b)
{
    return q[b] < q[a] ? b : a;
}

/* The earliest event: false when there is none. The lane with the earliest
 * head, the first of equal ones, by a tree of comparisons (no chain of
 * dependent ones); the heap's top when it is no later. */
static inline bool q_peek(const fl_sim *S, double *key, uint32_t *f)
{
    _Static_assert(FL_LANES == 8, "the tree below compares eight lanes");
    const double *q = S->qhead;
    int b = lane_earlier(q, lane_earlier(q, lane_earlier(q, 0, 1), lane_earlier(q, 2, 3)),
                         lane_earlier(q, lane_earlier(q, 4, 5), lane_earlier(q, 6, 7)));
    double bk = S->hn ? S->heap[0].key : INFINITY;
    int best = -1;
    if (q[b] < bk) {
        bk = q[b];
        best = b;
    }
    *key = bk;
    if (best >= 0) {
        *f = S->lanes[best].v[S->lanes[best].head].f;
        return true;
    }
    *f = S->hn ? S->heap[0].f : NONE;
    return S->hn != 0;
}

/* flow_sim.h */
void tc_fl_queue_shift(fl_sim *S, double D)
{
    for (uint32_t i = 0; i < S->hn; i++)
        S->heap[i].key += D;
    for (uint32_t k = 0; k < FL_LANES; k++) {
        fl_lane *L = &S->lanes[k];
        for (uint32_t i = 0; i < L->n; i++)
            lane_at(L, i)->key += D;
        lane_ends(S, k);
    }
}

/* ---- flow ids ---- */

/* Flow ids the arrays start with. */
#define FLOW_IDS_MIN 4096

static bool flows_grow(fl_sim *S)
{
    size_t c = S->fcap ? 2 * (size_t)S->fcap : FLOW_IDS_MIN;
#define FL_GROW(arr)                                                  \
    do {                                                              \
        void *v_ = realloc(S->arr, c * sizeof *S->arr);               \
        if (!v_)                                                      \
            return false;                                             \
        S->arr = v_;                                                  \
    } while (0)
    FL_GROW(f_next);
    FL_GROW(f_wnext);
    FL_GROW(f_issue);
    FL_GROW(free_ids);
#undef FL_GROW
    fl_flow *fv = aligned_alloc(64, c * sizeof *fv);
    if (!fv)
        return false;
    if (S->fl)
        memcpy(fv, S->fl, S->fhigh * sizeof *fv);
    free(S->fl);
    S->fl = fv;
    fl_hent *h = aligned_alloc(64, (c + 4) * sizeof *h);
    if (!h)
        return false;
    if (S->heap_mem)
        memcpy(h + 3, S->heap, S->hn * sizeof *h);
    free(S->heap_mem);
    S->heap_mem = h;
    S->heap = h + 3;
    S->fcap = (uint32_t)c;
    return true;
}

static uint32_t flow_new(fl_sim *S)
{
    if (S->nfree)
        return S->free_ids[--S->nfree];
    if (S->fhigh == S->fcap && (S->fcap >= UINT32_MAX / 4 || !flows_grow(S)))
        return NONE;
    return S->fhigh++;
}

static void flow_free(fl_sim *S, uint32_t f)
{
    S->fl[f].state = ST_FREE;
    S->free_ids[S->nfree++] = f;
}

/* ---- paths ---- */

/* Clos spray: surviving equal-cost paths below a prefix of up-hop choices.
 * At depth i the walk is at level-i node idx (source side) with prefix sum
 * B = sum_j<=i wprod[j-1] b_j; level j = i + 1 offers up[j] parents b, whose
 * up link and matching down link (clos.c's link layout) must both be up. */
static double clos_count(const fl_sim *S, int i, int top, uint32_t idx, uint32_t B, uint32_t src, uint32_t dst)
{
    if (i == top)
        return 1;
    const tc_topo *t = S->t;
    int j = i + 1;
    double sum = 0;
    for (uint32_t b = 0; b < t->up[j]; b++) {
        uint32_t ul = t->up_lbase[j] + 2 * (idx * t->up[j] + b);
        uint32_t dl = t->down_lbase[j] + 2 * ((B + t->wprod[j - 1] * (dst / t->span[j - 1])) * t->up[j] + b);
        if (S->cap[ul] <= 0 || S->cap[dl] <= 0)
            continue;
        uint32_t B2 = B + t->wprod[j - 1] * b;
        sum += clos_count(S, j, top, B2 + t->wprod[j] * (src / t->span[j]), B2, src, dst);
    }
    return sum;
}

static void clos_emit(fl_sim *S, int i, int top, uint32_t idx, uint32_t B, uint32_t src, uint32_t dst, double total,
                      uint32_t *n)
{
    if (i == top)
        return;
    const tc_topo *t = S->t;
    int j = i + 1;
    for (uint32_t b = 0; b < t->up[j]; b++) {
        uint32_t ul = t->up_lbase[j] + 2 * (idx * t->up[j] + b);
        uint32_t dl = t->down_lbase[j] + 2 * ((B + t->wprod[j - 1] * (dst / t->span[j - 1])) * t->up[j] + b);
        if (S->cap[ul] <= 0 || S->cap[dl] <= 0)
            continue;
        uint32_t B2 = B + t->wprod[j - 1] * b;
        uint32_t idx2 = B2 + t->wprod[j] * (src / t->span[j]);
        double c = clos_count(S, j, top, idx2, B2, src, dst);
        if (c <= 0)
            continue;
        S->path[*n] = ul;
        S->pw[(*n)++] = c / total;
        S->path[*n] = dl;
        S->pw[(*n)++] = c / total;
        clos_emit(S, j, top, idx2, B2, src, dst, total, n);
    }
}

/* Torus spray: dimension order; the links of dimension d depend only on the
 * direction taken in d, so a tie splits that dimension's load in halves
 * (a down direction leaves the whole load to the other). */
static uint32_t torus_spray(fl_sim *S, uint32_t src, uint32_t dst)
{
    const tc_topo *t = S->t;
    uint32_t n = 0, cur = src;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], st = t->stride[d];
        uint32_t xs = cur / st % size, xd = dst / st % size;
        if (xs == xd)
            continue;
        int dirs[2], nd = 0;
        uint32_t hops[2];
        if (t->dim_cables[d] != size) {
            dirs[nd] = xd > xs ? 1 : -1;
            hops[nd++] = xd > xs ? xd - xs : xs - xd;
        } else {
            uint32_t fwd = (xd + size - xs) % size, bwd = size - fwd;
            if (fwd <= bwd) {
                dirs[nd] = 1;
                hops[nd++] = fwd;
            }
            if (bwd <= fwd) {
                dirs[nd] = -1;
                hops[nd++] = bwd;
            }
        }
        bool ok[2] = {true, true};
        int alive = 0;
        for (int k = 0; k < nd; k++) {
            uint32_t v = cur;
            for (uint32_t h = 0; h < hops[k] && ok[k]; h++) {
                uint32_t l = tc_topo_torus_link(t, v, d, dirs[k]);
                ok[k] = l != NONE && S->cap[l] > 0;
                v = t->links[l].dst;
            }
            alive += ok[k];
        }
        if (!alive)
            return 0;
        for (int k = 0; k < nd; k++) {
            if (!ok[k])
                continue;
            uint32_t v = cur;
            for (uint32_t h = 0; h < hops[k]; h++) {
                uint32_t l = tc_topo_torus_link(t, v, d, dirs[k]);
                S->path[n] = l;
                S->pw[n++] = 1.0 / alive;
                v = t->links[l].dst;
            }
        }
        cur = cur - xs * st + xd * st;
    }
    return n;
}

/* flow_sim.h */
uint32_t tc_fl_route(fl_sim *S, uint32_t a, uint32_t b)
{
    const tc_topo *t = S->t;
    bool local = fl_same_node(t, a, b);
    /* a full mesh has one shortest path per pair, its own link: spray is the route */
    if (S->o.multipath == TC_MULTIPATH_SPRAY && t->kind != TC_TOPO_MULTIDC && t->kind != TC_TOPO_FULL && !local &&
        a < t->n_endpoints && b < t->n_endpoints) { /* a multidc is refused (sim_init); the estimates probe it routed */
        if (t->kind == TC_TOPO_TORUS)
            return torus_spray(S, a, b);
        /* The Clos arithmetic is on host slots (rails). */
        uint32_t sa = tc_topo_slot(t, a), sb = tc_topo_slot(t, b);
        int top = 1;
        while (sa / t->span[top] != sb / t->span[top])
            top++;
        double total = clos_count(S, 0, top, sa, 0, sa, sb);
        uint32_t n = 0;
        if (t->nics) { /* behind shared NICs: the endpoint's link to its NIC, and the other's at the end */
            uint32_t up = t->nic_lbase + 2 * a, down = t->nic_lbase + 2 * b + 1;
            if (total <= 0 || S->cap[up] <= 0 || S->cap[down] <= 0)
                return 0;
            S->path[n] = up;
            S->pw[n++] = 1;
            clos_emit(S, 0, top, sa, 0, sa, sb, total, &n);
            S->path[n] = down;
            S->pw[n++] = 1;
            return n;
        }
        if (total > 0)
            clos_emit(S, 0, top, sa, 0, sa, sb, total, &n);
        return n;
    }
    uint32_t n = tc_topo_route(t, S->o.routing, a, b, S->path);
    if (n == TC_NO_ROUTE)
        return 0;
    for (uint32_t k = 0; k < n; k++) {
        if (S->cap[S->path[k]] <= 0)
            return 0;
        S->pw[k] = 1;
    }
    return n;
}

/* The latency of the route from endpoint a to b (as flow_start takes it). */
static double fl_path_lat(fl_sim *S, uint32_t a, uint32_t b)
{
    uint32_t n = tc_fl_route(S, a, b);
    double lat = 0;
    for (uint32_t k = 0; k < n; k++)
        lat += S->pw[k] * S->t->links[S->path[k]].lat;
    return lat;
}

/* Each sender's last route is kept (fl_rcache) where that takes at most
 * RCACHE_MAX bytes in all. */
#define RCACHE_MAX (32.0 * 1024 * 1024)

static double rcache_bytes(uint32_t stride)
{
    return sizeof(fl_rcache) + (double)stride * (sizeof(uint32_t) + sizeof(double));
}

/* Most incidences a transfer can have. */
uint32_t tc_fl_max_incidences(const tc_topo *t, tc_multipath mp)
{
    uint32_t n = tc_topo_max_path(t);
    if (mp != TC_MULTIPATH_SPRAY)
        return n < 2 ? 2 : n;
    uint32_t s = 2 + (t->nics ? 2 : 0);
    if (t->kind == TC_TOPO_CLOS)
        for (int i = 1; i <= t->levels; i++)
            s += 2 * t->wprod[i];
    else
        for (int d = 0; d < t->ndims; d++)
            s += t->dims[d];
    return s > n ? s : n;
}

/* ---- the trace ---- */

static void trace_slice(fl_sim *S, uint32_t job, uint32_t step, uint32_t src, uint32_t dst, double bytes, double t0,
                        double t1)
{
    if (!S->trace)
        return;
    if (S->slices >= S->max_slices) {
        S->truncated = true;
        return;
    }
    S->jobs[job].seen[src] = 1;
    fprintf(S->trace,
            "%s{\"name\":\"step %u -> %u\",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,"
            "\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"bytes\":%.17g}}",
            S->slices ? ",\n" : "\n", step, dst, job, src, t0 * 1e6, (t1 - t0) * 1e6, bytes);
    S->slices++;
}

static tc_status trace_open(fl_sim *S)
{
    size_t len = strlen(S->o.trace_path) + 16;
    S->trace_tmp = malloc(len);
    if (!S->trace_tmp)
        return oom(S);
    snprintf(S->trace_tmp, len, "%s.tmp", S->o.trace_path);
    S->trace = fopen(S->trace_tmp, "w");
    if (!S->trace)
        return S->st = tc_fail(S->err, TC_EINVAL, "cannot write trace file '%s': %s", S->o.trace_path,
                               strerror(errno));
    fputs("{\"traceEvents\":[", S->trace);
    return TC_OK;
}

/* s as a JSON string (quotes, backslashes and control characters escaped). */
static void trace_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* Metadata events, so that a viewer (Perfetto, chrome://tracing) labels
 * each job's process with its name and each rank's track with its rank and
 * endpoint instead of bare pid and tid numbers. */
static void trace_names(fl_sim *S, FILE *f)
{
    bool first = S->slices == 0;
    for (size_t j = 0; j < S->njobs; j++) {
        const fl_job *J = &S->jobs[j];
        fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%zu,\"args\":{\"name\":", first ? "\n" : ",\n",
                j);
        first = false;
        if (J->name)
            trace_str(f, J->name);
        else
            fprintf(f, "\"job %zu\"", j);
        fputs("}}", f);
        for (uint32_t r = 0; r < J->p; r++)
            if (J->seen[r] && J->lanes > 1)
                fprintf(f,
                        ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%zu,\"tid\":%u,"
                        "\"args\":{\"name\":\"rank %u channel %u (endpoint %u)\"}}",
                        j, r, r % J->pfull, r / J->pfull, fl_ep(J, r));
            else if (J->seen[r])
                fprintf(f,
                        ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%zu,\"tid\":%u,"
                        "\"args\":{\"name\":\"rank %u (endpoint %u)\"}}",
                        j, r, r, fl_ep(J, r));
    }
}

static tc_status trace_close(fl_sim *S, bool keep)
{
    if (!S->trace)
        return TC_OK;
    FILE *f = S->trace;
    S->trace = NULL;
    if (!keep) {
        fclose(f);
        remove(S->trace_tmp);
        return TC_OK;
    }
    trace_names(S, f);
    fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(S->trace_tmp, S->o.trace_path) != 0) {
        remove(S->trace_tmp);
        return S->st = tc_fail(S->err, TC_EINVAL, "cannot write trace file '%s': %s", S->o.trace_path,
                               strerror(errno));
    }
    return TC_OK;
}

/* ---- steps and ranks ---- */

static bool window_grow(fl_job *J)
{
    uint32_t nc = J->wcap ? 2 * J->wcap : 4;
    fl_step *w = calloc(nc, sizeof *w);
    if (!w)
        return false;
    for (uint32_t s = J->lo; s < J->hi; s++)
        w[s & (nc - 1)] = *slot(J, s);
    free(J->win);
    J->win = w;
    J->wcap = nc;
    return true;
}

/* A table with room for n transfers: a spare one, or a new one (refs 0). */
static fl_tab *tab_get(fl_job *J, size_t n)
{
    fl_tab *T;
    if (J->nspare) {
        T = J->spare[--J->nspare];
    } else {
        if (!tc_grow((void **)&J->tabs, &J->tabs_cap, J->ntabs + 1, sizeof *J->tabs))
            return NULL;
        fl_tab **sp = realloc(J->spare, J->tabs_cap * sizeof *sp);
        if (!sp)
            return NULL;
        J->spare = sp;
        /* the table and its per-rank ranges in one block */
        T = calloc(1, sizeof *T + (J->p ? J->p : 1) * sizeof *T->rk);
        if (!T)
            return NULL;
        T->rk = (fl_trank *)(T + 1);
        J->tabs[J->ntabs++] = T;
    }
    T->refs = 0;
    if (n > T->cap) {
        size_t c = T->cap;
        void *x = T->xv;
        if (!tc_grow(&x, &c, n, sizeof *T->xv)) {
            J->spare[J->nspare++] = T;
            return NULL;
        }
        T->xv = x;
        T->cap = c;
    }
    return T;
}

/* Drops a reference to T: with none left it is spare. */
static void tab_put(fl_job *J, fl_tab *T)
{
    if (--T->refs == 0)
        J->spare[J->nspare++] = T;
}

/* Whether two tables hold the same transfers in the same order. */
static bool tab_same(const fl_tab *a, const fl_tab *b, uint32_t p)
{
    return a == b || (a->n == b->n && memcmp(a->rk, b->rk, (size_t)p * sizeof *a->rk) == 0 &&
                      memcmp(a->xv, b->xv, a->n * sizeof *a->xv) == 0);
}

/* The transfers of step s of job j, just emitted into S->xf, as a new
 * table in *out (refs 0). */
static tc_status tab_fill(fl_sim *S, size_t j, uint32_t s, fl_tab **out)
{
    fl_job *J = &S->jobs[j];
    size_t n = S->xf.n;
    uint32_t p = J->p;
    fl_tab *T = tab_get(J, n);
    if (!T)
        return oom(S);
    for (uint32_t r = 0; r < p; r++)
        T->rk[r] = (fl_trank){0, 0, 0};
    /* Folded: the transfers of ranks 0..p-1 only (the others are their
     * images); a receiver beyond is its class's rank. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const tc_xfer *x = &S->xf.v[i];
        if (x->src >= J->pfull || x->dst >= J->pfull) {
            J->spare[J->nspare++] = T;
            return S->st = tc_fail(S->err, TC_EINVAL,
                                   "job %zu: step %u has a transfer from rank %u to rank %u, but the schedule has "
                                   "ranks 0..%u only",
                                   j, s, x->src, x->dst, J->pfull - 1);
        }
        if (J->lanes > 1 && x->lane >= J->lanes) {
            J->spare[J->nspare++] = T;
            return S->st = tc_fail(S->err, TC_EINTERNAL, "job %zu: step %u has a transfer in lane %u of %u", j, s,
                                   x->lane, J->lanes);
        }
        uint32_t vs = fl_vrank(J, x->lane, x->src);
        if (vs >= p)
            continue;
        T->rk[vs].end++;
        T->rk[fold_rank(S, fl_vrank(J, x->lane, x->dst))].recv++;
        kept++;
    }
    /* Counting sort by sender: end counts, then is the next free place of
     * the rank's range, and ends at its end. */
    uint32_t acc = 0;
    for (uint32_t r = 0; r < p; r++) {
        fl_trank *e = &T->rk[r];
        uint32_t c = e->end;
        e->first = e->end = acc;
        acc += c;
    }
    for (size_t i = 0; i < n; i++) {
        const tc_xfer *x = &S->xf.v[i];
        uint32_t vs = fl_vrank(J, x->lane, x->src);
        if (vs < p)
            T->xv[T->rk[vs].end++] = (fl_sxfer){fl_vrank(J, x->lane, x->dst), x->piped,
                                                (uint16_t)(x->reduce && x->dst < J->s->req.p), x->bytes};
    }
    T->n = kept;
    *out = T;
    return TC_OK;
}

/* Step s's slot takes table T (shared with the step emitted last when it
 * holds the same transfers), which becomes the job's last. */
static void tab_set(fl_job *J, fl_step *st, fl_tab *T)
{
    if (J->last && T != J->last && tab_same(J->last, T, J->p)) {
        if (T->refs == 0)
            J->spare[J->nspare++] = T;
        T = J->last;
    }
    T->refs++;
    if (st->tab)
        tab_put(J, st->tab);
    st->tab = T;
    if (J->last != T) {
        T->refs++;
        if (J->last)
            tab_put(J, J->last);
        J->last = T;
    }
}

/* Step s of job J into S->xf: folded, only the senders simulated, 0 ..
 * J->p - 1, where the schedule emits by senders (tab_fill keeps no other;
 * an all-pairs step of 4,096 ranks folded to 64 is 262,080 transfers, not
 * 16.8 million). */
static tc_status emit_step(fl_sim *S, const fl_job *J, uint32_t s)
{
    if (J->s->emit_part && J->lanes <= 1 && J->p < J->pfull)
        return tc_sched_emit_part(J->s, s, 0, J->p, &S->xf);
    return tc_sched_emit(J->s, s, &S->xf);
}

/* Emits step J->hi into the window. */
static tc_status emit_next(fl_sim *S, size_t j)
{
    fl_job *J = &S->jobs[j];
    if (J->hi - J->lo == J->wcap && !window_grow(J))
        return oom(S);
    uint32_t s = J->hi;
    if (emit_step(S, J, s) != TC_OK)
        return S->xf.oom ? oom(S)
                         : (S->st = tc_fail(S->err, TC_EINTERNAL, "job %zu: schedule %s: emitting step %u failed", j,
                                            tc_algo_name(J->s->algo), s));
    fl_tab *T;
    if (tab_fill(S, j, s, &T) != TC_OK)
        return S->st;
    fl_step *st = slot(J, s);
    st->tab = NULL;
    tab_set(J, st, T);
    st->incomplete = st->tab->n;
    st->unissued = J->p;
    J->hi++;
    return TC_OK;
}

static tc_status reemit_differs(fl_sim *S, size_t j, uint32_t s)
{
    return S->st = tc_fail(S->err, TC_EINTERNAL, "job %zu: schedule %s: step %u differs from the steps of its phase", j,
                           tc_algo_name(S->jobs[j].s->algo), s);
}

/* Step s of job j (in the window) gets its transfers again from the
 * schedule, keeping what the ranks did with it (receives delivered ahead,
 * parked flows: the ranks' entries, fl_ahead): after a skip its slot holds
 * an earlier step of the same phase, whose traffic is the same but whose
 * transfers of one sender may come in another order. Every rank's sends
 * and receives must number the same. */
tc_status tc_fl_reemit(fl_sim *S, size_t j, uint32_t s)
{
    fl_job *J = &S->jobs[j];
    fl_step *st = slot(J, s);
    uint32_t p = J->p;
    if (emit_step(S, J, s) != TC_OK)
        return S->xf.oom ? oom(S) : reemit_differs(S, j, s);
    fl_tab *T;
    if (tab_fill(S, j, s, &T) != TC_OK)
        return S->st;
    const fl_tab *O = st->tab;
    bool ok = T->n == O->n;
    for (uint32_t r = 0; r < p && ok; r++)
        ok = T->rk[r].end - T->rk[r].first == O->rk[r].end - O->rk[r].first && T->rk[r].recv == O->rk[r].recv;
    if (!ok) {
        J->spare[J->nspare++] = T;
        return reemit_differs(S, j, s);
    }
    if (tab_same(T, O, p)) {
        J->spare[J->nspare++] = T;
        T = st->tab;
    }
    tab_set(J, st, T);
    return TC_OK;
}

/* Retires J's completed steps from the front of its window; true when J
 * has passed its last step. */
static bool retire(fl_job *J)
{
    while (J->lo < J->hi) {
        fl_step *st = slot(J, J->lo);
        if (st->unissued || st->incomplete)
            break;
        tab_put(J, st->tab);
        st->tab = NULL;
        J->lo++;
    }
    return J->lo == J->nsteps;
}

/* flow_sim.h */
fl_ahead *tc_fl_ahead_at(fl_job *J, uint32_t r, uint32_t s)
{
    fl_rank *R = &J->rk[r];
    uint32_t need = s - R->issue + 1;
    if (need > R->acap) {
        if (need > UINT32_MAX / 2)
            return NULL;
        uint32_t nc = R->acap ? 2 * R->acap : 4;
        while (nc < need)
            nc *= 2;
        fl_ahead *a = malloc(nc * sizeof *a), *o = J->ah[r];
        if (!a)
            return NULL;
        for (uint32_t i = 0; i < nc; i++)
            a[i] = (fl_ahead){0, NONE};
        for (uint32_t k = 0; k < R->acap; k++) {
            uint32_t t = R->issue + k;
            a[t & (nc - 1)] = o[t & (R->acap - 1)];
        }
        free(o);
        J->ah[r] = a;
        R->acap = nc;
    }
    return &J->ah[r][s & (R->acap - 1)];
}

static inline fl_ahead *ahead(fl_job *J, uint32_t r, uint32_t s)
{
    const fl_rank *R = &J->rk[r];
    if (s - R->issue < R->acap)
        return &J->ah[r][s & (R->acap - 1)];
    return tc_fl_ahead_at(J, r, s);
}

static void push_ready(fl_sim *S, uint32_t job, uint32_t rank)
{
    if (!tc_grow((void **)&S->ready, &S->ready_cap, S->nready + 1, sizeof *S->ready)) {
        oom(S);
        return;
    }
    S->ready[S->nready++] = (fl_ready){job, rank};
    /* The rank's next step was emitted long ago and is out of cache by now:
     * fetch its record (and, for the usual one send per rank, its transfer)
     * while the rest of the batch is processed. */
    fl_job *J = &S->jobs[job];
    uint32_t s = J->rk[rank].issue;
    if (s >= J->lo && s < J->hi) {
        const fl_tab *T = slot(J, s)->tab;
        __builtin_prefetch(&T->rk[rank]);
        if (rank < T->n)
            __builtin_prefetch(&T->xv[rank]);
    }
    /* and its entry for that step, which advance reads first */
    uint32_t ac = J->rk[rank].acap;
    if (ac)
        __builtin_prefetch(&J->ah[rank][s & (ac - 1)]);
}

/* ---- memory in use, progress ---- */

/* Bytes of one flow id in this file's arrays: its record, f_next, f_wnext,
 * f_issue, free_ids, its heap entry, its place in the batch's held list. */
#define FLOW_ID_BYTES \
    (sizeof(fl_flow) + 2 * sizeof(uint32_t) + sizeof(double) + sizeof(uint32_t) + sizeof(fl_hent) + sizeof(uint32_t))
/* Bytes of one flow id in the solver (maxmin.c) besides its stride of
 * incidences: inc_n, rate, fmark, bneck, gpos. */
#define MM_ID_BYTES (sizeof(uint16_t) + sizeof(double) + 3 * sizeof(uint32_t))
/* One incidence: inc_link, inc_w, inc_pos. */
#define MM_INC_BYTES (2 * sizeof(uint32_t) + sizeof(double))
/* Per link, allocated whatever the traffic: cap, link_bytes here; lists,
 * lmark, rc, wsum, ucount, is_dirty, dirty, the fair-share heap, and when
 * the solver re-solves by level load, wtot, groups, glevel; its
 * occupancy. */
#define LINK_BYTES (2 * sizeof(double) + sizeof(tc_mm_link) + 4 + 8 + 8 + 4 + 1 + 4 + 12 + 8 + 8 + \
                    sizeof(tc_mm_link) + 8 + sizeof(tc_mm_occ))

/* What the simulator has allocated now, from the capacities of its arrays
 * (O(links); called a few times a second at most). */
static double sim_mem_now(const fl_sim *S)
{
    const tc_mm *m = &S->mm;
    double b = (double)S->fcap * FLOW_ID_BYTES + (double)m->fcap * (MM_ID_BYTES + m->stride * MM_INC_BYTES);
    b += (double)(m->comp_links_cap + m->comp_flows_cap + m->changed_cap + m->fresh_cap) * sizeof(uint32_t);
    b += (double)S->t->n_links * LINK_BYTES + (double)S->ready_cap * sizeof(fl_ready);
    b += (double)S->xf.cap * sizeof(tc_xfer) + (double)S->xf.segcap * sizeof(tc_seg);
    for (uint32_t l = 0; l < S->t->n_links; l++) {
        b += m->lists[l].cap > TC_MM_INLINE ? (double)m->lists[l].cap * sizeof(tc_mm_ent) : 0;
        b += m->groups ? (double)m->groups[l].cap * sizeof(tc_mm_ent) : 0;
    }
    for (size_t j = 0; j < S->njobs; j++) {
        const fl_job *J = &S->jobs[j];
        b += (double)J->p *
                 (sizeof(fl_rank) + sizeof(fl_ahead *) + (J->wire ? sizeof(fl_wire) : 0) + (J->seen ? 1 : 0)) +
             (double)J->wcap * sizeof(fl_step);
        b += J->rc ? (double)J->p * rcache_bytes(S->stride) : 0;
        b += (double)J->tabs_cap * 2 * sizeof(fl_tab *);
        for (uint32_t i = 0; i < J->ntabs; i++)
            b += sizeof(fl_tab) + (double)J->p * sizeof(fl_trank) + (double)J->tabs[i]->cap * sizeof(fl_sxfer);
        for (uint32_t r = 0; r < J->p; r++)
            b += (double)J->rk[r].acap * sizeof(fl_ahead);
    }
    return b;
}

/* Events between two looks at the clock: a few milliseconds at the usual
 * millions of events per second, and nothing measurable on the hot path. */
#define PROGRESS_EVENTS 4096
/* Wall seconds between two progress reports, at least. */
#define PROGRESS_PERIOD 0.25

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The next event count at which count_event takes its slow path: past
 * the budget, or time to look at the clock. */
static void set_tick(fl_sim *S)
{
    uint64_t at = add_sat(S->budget, 1);
    if (S->o.progress && add_sat(S->events, PROGRESS_EVENTS) < at)
        at = add_sat(S->events, PROGRESS_EVENTS);
    S->tick_at = at;
}

static void report(fl_sim *S, double now, bool last)
{
    double done = 0;
    for (size_t j = 0; j < S->njobs; j++)
        done += (double)S->jobs[j].transfers;
    /* The total counts each phase by its first step; at the end what was
     * done is the total, whatever the other steps of a phase held. */
    double total = S->prog_total > 0 ? fmax(S->prog_total, done) : 0;
    if (last)
        total = done;
    double el = now - S->prog_t0;
    tc_progress pr = {
        .what = "flow simulation",
        .fraction = total > 0 ? done / total : -1,
        .done = done,
        .total = total,
        .unit = "transfers",
        .rate = el > 0 ? done / el : 0,
        .mem_bytes = sim_mem_now(S),
    };
    S->o.progress(S->o.progress_ud, &pr);
    S->prog_last = now;
}

static bool event_tick(fl_sim *S)
{
    if (S->events > S->budget) {
        if (S->st == TC_OK)
            S->st = tc_fail(S->err, TC_EINVAL,
                            "the run exceeded the event budget of %llu events; raise it with --event-budget",
                            (unsigned long long)S->budget);
        return false;
    }
    if (S->o.progress) {
        double now = wall_now();
        if (now - S->prog_last >= PROGRESS_PERIOD)
            report(S, now, false);
    }
    set_tick(S);
    return true;
}

static inline bool count_event(fl_sim *S)
{
    if (++S->events < S->tick_at)
        return true;
    return event_tick(S);
}

/* After a batch, with progress on: its work counted (one, and one per
 * flow its solve gave a new rate or filled again), the clock read once
 * PROGRESS_EVENTS of it gathered. The events alone say too little where
 * each costs a large solve: a direct all-to-all of 4,096 ranks moves most
 * of its 16.8 M flows' rates at every end, about a hundred transfers a
 * second, so 4,096 events took 40 s. */
static inline void count_batch(fl_sim *S)
{
    uint64_t mm = S->mm.level_flows + S->mm.local_flows;
    S->prog_work += 1 + S->mm.nchanged + (mm - S->prog_mm);
    S->prog_mm = mm;
    if (S->prog_work < PROGRESS_EVENTS)
        return;
    S->prog_work = 0;
    double now = wall_now();
    if (now - S->prog_last >= PROGRESS_PERIOD)
        report(S, now, false);
}

/* A transfer is delivered at time t (issued at t0). */
static void deliver(fl_sim *S, uint32_t job, uint32_t s, uint32_t src, uint32_t dst, double bytes, double t0,
                    double t)
{
    fl_job *J = &S->jobs[job];
    fl_step *st = slot(J, s);
    dst = fold_rank(S, dst);
    if (S->rec && job == 0)
        tc_fl_rec_add(S, false, s, src, dst, t);
    st->incomplete--;
    J->transfers++;
    if (t > J->finish)
        J->finish = t;
    if (t > J->rk[src].fin)
        J->rk[src].fin = t;
    fl_rank *D = &J->rk[dst];
    if (t > D->fin)
        D->fin = t;
    if (s < D->issue) {
        if (--D->pend == 0)
            push_ready(S, job, dst);
    } else {
        /* ahead of the receiver: counted when it reaches the step */
        fl_ahead *e = ahead(J, dst, s);
        if (!e) {
            oom(S);
            return;
        }
        e->got++;
    }
    trace_slice(S, job, s, src, dst, bytes, t0, t);
    if (retire(J))
        S->job_ended = true;
}

/* Adds the bytes started on sender src's cached route to its links. */
static void rc_flush(fl_sim *S, fl_job *J, uint32_t src)
{
    fl_rcache *c = &J->rc[src];
    if (!(c->bytes != 0))
        return;
    const uint32_t *path = J->rc_path + (size_t)src * S->stride;
    const double *pw = J->rc_pw + (size_t)src * S->stride;
    for (uint32_t k = 0; k < c->n; k++)
        S->link_bytes[path[k]] += pw[k] * c->bytes;
    c->bytes = 0;
}

/* flow_sim.h */
void tc_fl_flush_bytes(fl_sim *S)
{
    for (size_t j = 0; j < S->njobs; j++)
        for (uint32_t r = 0; S->jobs[j].rc && r < S->jobs[j].p; r++)
            rc_flush(S, &S->jobs[j], r);
}

/* The flow starts sending: route it and hand it to the solver. */
/* ---- blame (tc_flow_ctx_blame) ---- */

typedef struct fl_blame {
    uint32_t ntags, nlinks;
    double *lost;     /* [tag * nlinks + link]: flow-seconds lost, by bottleneck */
    double *bytes;    /* [tag * nlinks + link] */
    double *sent;     /* [tag]: flow-seconds sending */
    double *tlost;    /* [tag]: lost, all links */
    double *alone;    /* per flow: its rate alone */
    uint32_t *bl;     /* per flow: the link holding it in the current interval */
    uint32_t fcap;
} fl_blame;

static void blame_free(fl_blame *b)
{
    if (!b)
        return;
    free(b->lost);
    free(b->bytes);
    free(b->sent);
    free(b->tlost);
    free(b->alone);
    free(b->bl);
    free(b);
}

/* Flow f's interval from f_tlast to t at f_rate, held by bl[f]. */
static void blame_account(fl_sim *S, uint32_t f, double t)
{
    fl_blame *b = S->blame;
    double dt = t - S->fl[f].tlast;
    if (!(dt > 0) || f >= b->fcap)
        return;
    uint32_t tag = S->jobs[S->fl[f].job].tag;
    if (tag >= b->ntags)
        return;
    b->sent[tag] += dt;
    double a = b->alone[f], r = S->fl[f].rate;
    double lost = a > 0 && r < a ? dt * (1 - r / a) : 0;
    uint32_t l = b->bl[f];
    if (lost > 0 && l < b->nlinks) {
        b->lost[(size_t)tag * b->nlinks + l] += lost;
        b->tlost[tag] += lost;
    }
}

/* At flow f's start on path (weights pw, NULL: 1): its rate alone and its
 * bytes on each link. */
static void blame_start(fl_sim *S, uint32_t f, const uint32_t *path, const double *pw, uint32_t n, double bytes)
{
    fl_blame *b = S->blame;
    if (f >= b->fcap) {
        uint32_t c = b->fcap ? b->fcap : 1024;
        while (c <= f)
            c *= 2;
        double *al = realloc(b->alone, c * sizeof *al);
        if (al)
            b->alone = al;
        uint32_t *bl = realloc(b->bl, c * sizeof *bl);
        if (bl)
            b->bl = bl;
        if (!al || !bl) {
            oom(S);
            return;
        }
        b->fcap = c;
    }
    double cap = S->mm.rate_cap > 0 ? S->mm.rate_cap : INFINITY, a = cap;
    uint32_t tag = S->jobs[S->fl[f].job].tag;
    for (uint32_t k = 0; k < n; k++) {
        double w = pw ? pw[k] : 1;
        if (w > 0 && S->cap[path[k]] / w < a)
            a = S->cap[path[k]] / w;
        if (tag < b->ntags)
            b->bytes[(size_t)tag * b->nlinks + path[k]] += w * bytes;
    }
    b->alone[f] = a;
    b->bl[f] = UINT32_MAX;
}

/* Whether the solver's incidences carry weights: spraying over paths, or
 * links standing for their orbits (folding). */
static inline bool weighted_paths(const fl_sim *S)
{
    return S->o.multipath == TC_MULTIPATH_SPRAY || S->fold_T;
}

static void flow_start(fl_sim *S, uint32_t f)
{
    fl_job *J = &S->jobs[S->fl[f].job];
    uint32_t src = S->fl[f].src;
    uint32_t a = fl_ep(J, src);
    uint32_t b = fl_ep(J, S->fl[f].dst);
    const uint32_t *path = S->path;
    const double *pw = S->pw;
    uint32_t n;
    double lat = 0, bytes = S->fl[f].bytes;
    if (S->rec && S->fl[f].job == 0)
        tc_fl_rec_add(S, true, S->fl[f].step, src, S->fl[f].dst, bytes);
    fl_rcache *c = J->rc ? &J->rc[src] : NULL;
    if (c && c->n && c->dst == b) {
        /* the sender's last route (a ring sends to one rank every step);
         * its links count the bytes later */
        n = c->n;
        lat = c->lat;
        path = J->rc_path + (size_t)src * S->stride;
        pw = J->rc_pw + (size_t)src * S->stride;
        c->bytes += bytes;
    } else {
        if (c)
            rc_flush(S, J, src);
        n = tc_fl_route(S, a, b);
        if (n == 0) {
            if (S->st == TC_OK)
                S->st = tc_fail(S->err, TC_EINVAL,
                                "the failures cut endpoint %u off from endpoint %u: no surviving path under routing %s; "
                                "the job cannot run as placed%s",
                                a, b, tc_routing_name(tc_eval_routing(TC_MODE_FLOW, S->t, S->o.routing), S->t),
                                tc_eval_cut_hint(S->t, tc_eval_routing(TC_MODE_FLOW, S->t, S->o.routing), a, b));
            return;
        }
        for (uint32_t k = 0; k < n; k++)
            lat += S->pw[k] * S->t->links[S->path[k]].lat;
        if (S->fold_T)
            n = tc_fl_fold_path(S, n);
        if (c) {
            c->dst = b;
            c->n = n;
            c->lat = lat;
            c->bytes = bytes;
            c->alone = tc_mm_alone_rate(&S->mm, S->path, weighted_paths(S) ? S->pw : NULL, n);
            memcpy(J->rc_path + (size_t)src * S->stride, S->path, n * sizeof *S->path);
            memcpy(J->rc_pw + (size_t)src * S->stride, S->pw, n * sizeof *S->pw);
        } else {
            for (uint32_t k = 0; k < n; k++)
                S->link_bytes[path[k]] += pw[k] * bytes;
        }
    }
    if (S->resv)
        for (uint32_t k = 0; k < n; k++)
            if (S->resv[path[k]]) {
                /* onto the links of a job timed alone: its time no longer holds */
                S->solo_broken = true;
                if (S->st == TC_OK)
                    S->st = tc_fail(S->err, TC_EINTERNAL,
                                    "flow: job %u sent over link %u of job %u, which was timed alone; run it again "
                                    "without timing jobs alone",
                                    S->fl[f].job, path[k], S->resv[path[k]] - 1);
                return;
            }
    if (J->s->proto && S->fl[f].piped)
        lat = 0; /* pipelined behind an earlier chunk (flow_go) */
    S->fl[f].lat = lat;
    S->fl[f].state = ST_XMIT;
    S->fl[f].tlast = S->now;
    S->fl[f].rate = 0;
    S->fl[f].rem = bytes;
    if (!(bytes > 0)) {
        /* Nothing to send: ends now (same batch). */
        q_set(S, f, S->now);
        return;
    }
    const double *w = weighted_paths(S) ? pw : NULL;
    if (S->blame)
        blame_start(S, f, path, w, n, bytes);
    else if (n <= TC_MM_HOLD_MAX && tc_mm_path_empty(&S->mm, path, n)) {
        /* Alone on its links: held outside the solver at its rate alone
         * (the route's, kept with it), applied at the batch's end. */
        double r = c ? c->alone : tc_mm_alone_rate(&S->mm, path, w, n);
        if (!tc_grow((void **)&S->held, &S->held_cap, S->nheld + 1, sizeof *S->held) ||
            tc_mm_hold(&S->mm, f, path, w, n, r) != TC_OK) {
            oom(S);
            return;
        }
        S->held[S->nheld++] = f;
        return;
    }
    if (S->rec)
        fl_rec_stop(S); /* a flow in the solver: links shared */
    if (tc_mm_add(&S->mm, f, path, w, n) != TC_OK)
        oom(S);
}

/* flow_sim.h */
void tc_fl_rec_add(fl_sim *S, bool start, uint32_t step, uint32_t src, uint32_t dst, double v)
{
    if (S->nrecs >= fl_rec_max(S->jobs[0].p, S->fhigh)) {
        fl_rec_stop(S); /* a repeat too long to keep */
        return;
    }
    if (!tc_grow((void **)&S->recs, &S->recs_cap, S->nrecs + 1, sizeof *S->recs)) {
        oom(S);
        return;
    }
    S->recs[S->nrecs++] = (fl_rec){step, src, dst, start, v};
}

/* Sender r's sends in order on each connection (fl_wire): starts, in
 * issue order, every flow of its waiting list that may go (ST_WIRE) and
 * whose receiver has no earlier flow of r waiting before it nor one of an
 * earlier step still sending (sends of one step go together). */
static void wire_next(fl_sim *S, fl_job *J, uint32_t r)
{
    fl_wire *w = &J->wire[r];
    uint32_t prev = NONE;
    bool in_order = J->s->credit_in_order;
    for (uint32_t f = w->head; f != NONE && S->st == TC_OK;) {
        uint32_t next = S->f_wnext[f], d = S->fl[f].dst;
        /* a send still waiting for its credit (or its step latency) holds
         * every later send of the rank where its sends start in order */
        if (in_order && S->fl[f].state != ST_WIRE)
            return;
        bool wait = S->fl[f].state != ST_WIRE;
        /* an earlier flow to d still waiting (the lists are a few flows
         * long: the credits times the peers) */
        for (uint32_t g = w->head; g != f && !wait; g = S->f_wnext[g])
            wait = S->fl[g].dst == d;
        for (uint32_t g = w->shead; g != NONE && !wait; g = S->f_wnext[g])
            wait = S->fl[g].dst == d && S->fl[g].step != S->fl[f].step;
        if (wait) {
            prev = f;
            f = next;
            continue;
        }
        if (prev == NONE)
            w->head = next;
        else
            S->f_wnext[prev] = next;
        if (w->tail == f)
            w->tail = prev;
        S->f_wnext[f] = w->shead;
        w->shead = f;
        flow_start(S, f);
        f = next;
    }
}

/* Flow f of sender r has left the wire: off r's sending list. */
static void wire_done(fl_sim *S, fl_job *J, uint32_t r, uint32_t f)
{
    fl_wire *w = &J->wire[r];
    uint32_t *at = &w->shead;
    while (*at != NONE && *at != f)
        at = &S->f_wnext[*at];
    if (*at == f)
        *at = S->f_wnext[f];
    wire_next(S, J, r);
}

/* Flow f may go now: it starts sending, or, where its sender's sends
 * leave in order (NCCL's credits: a rank may run ahead of its receiver,
 * but its connection sends its chunks one after another, not sharing the
 * link among them), once its sender's earlier sends have left. */
static void flow_ready(fl_sim *S, uint32_t f)
{
    fl_job *J = &S->jobs[S->fl[f].job];
    if (!J->wire || fl_ep(J, S->fl[f].src) == fl_ep(J, S->fl[f].dst)) {
        flow_start(S, f); /* a local copy has no place on the wire */
        return;
    }
    S->fl[f].state = ST_WIRE;
    wire_next(S, J, S->fl[f].src);
}

/* Flow f's sender pays alpha for it after the overheads of the messages
 * it issued before: the end of that slot, where its clock moves. */
static double take_slot(fl_sim *S, uint32_t f)
{
    double *clk = &S->jobs[S->fl[f].job].rk[S->fl[f].src].oclk;
    *clk = (*clk > S->now ? *clk : S->now) + fl_q(S, S->t->alpha);
    return *clk;
}

/* The transfer of flow f may go: its sender pays alpha for it after the
 * overheads of the messages it issued before (LogGP's o, serialized at the
 * sender), then it sends. */
static void flow_go(fl_sim *S, uint32_t f)
{
    S->f_issue[f] = S->now;
    const fl_job *J = &S->jobs[S->fl[f].job];
    const tc_sched *sc = J->s;
    if (sc->proto && S->fl[f].piped) {
        /* A later loop runs behind the first in NCCL's pipeline: no step
         * latency (and no propagation: flow_start). */
        flow_ready(S, f);
        return;
    }
    if (sc->proto) {
        /* An NCCL protocol's step latency, by where the two ends are; the
         * channels run in parallel: no overhead clock. */
        const tc_topo *t = S->t;
        uint32_t a = fl_ep(J, S->fl[f].src);
        uint32_t b = fl_ep(J, S->fl[f].dst);
        bool local = fl_same_node(t, a, b);
        double lat = local ? sc->lat_intra_s : sc->lat_inter_s;
        /* The protocol's step latency includes a path's: the path adds only
         * what it has beyond (flow_start's latency; max(step, path) in all). */
        lat -= fl_path_lat(S, a, b);
        if (lat > 0)
            q_set(S, f, S->now + fl_q(S, lat));
        else
            flow_ready(S, f);
        return;
    }
    if (S->t->alpha > 0)
        q_set(S, f, take_slot(S, f));
    else
        flow_start(S, f);
}

/* Whether flow f, about to be parked on its receiver, pays its sender's
 * overhead now: a message of an MPI-style schedule (no NCCL protocol)
 * with alpha > 0. The sender posts its messages in the schedule's order
 * and pays o for each as it posts it (LogGP's o is the sender's CPU time);
 * a parked message then goes when its receiver is ready, with no further
 * overhead. So the order of a rank's overhead slots is its own, not the
 * order in which its receivers happen to reach the step. */
static bool posts_now(const fl_sim *S, uint32_t f)
{
    return !S->jobs[S->fl[f].job].s->proto && S->t->alpha > 0;
}

/* Posts parked flow f: takes its sender's next overhead slot, kept in
 * f_issue until the receiver releases it (flow_release). */
static void flow_post(fl_sim *S, uint32_t f)
{
    S->f_issue[f] = take_slot(S, f);
}

/* Parked flow f's receiver is ready: it starts at the end of its overhead
 * slot (flow_post) or now, whichever is later; flows parked without a slot
 * go as flow_go says. */
static void flow_release(fl_sim *S, uint32_t f)
{
    if (!posts_now(S, f)) {
        flow_go(S, f);
        return;
    }
    double slot = S->f_issue[f];
    S->f_issue[f] = S->now;
    if (slot > S->now)
        q_set(S, f, slot);
    else
        flow_start(S, f);
}

/* Whether a transfer of these bytes waits for its receiver to reach its
 * step: always under rendezvous; under auto when it is above the eager
 * limit (a message at the limit is eager); never under fifo and recv. */
static bool waits_for_receiver(const fl_sim *S, double bytes)
{
    return S->o.deps == TC_DEPS_RENDEZVOUS || (S->o.deps == TC_DEPS_AUTO && bytes > S->o.eager_limit_bytes);
}

/* Rank r issues every step it may (flow.h's rule). Passing step s, it
 * counts its undelivered receives of s as pending and, under rendezvous
 * and auto, releases the transfers of s parked for it. */
static void advance(fl_sim *S, uint32_t job, uint32_t r)
{
    fl_job *J = &S->jobs[job];
    fl_rank *R = &J->rk[r];
    /* NCCL's credits (deps auto on an nccl-* schedule): a sender runs up to
     * credit_steps steps ahead of its receiver and does not wait for its
     * own sends (docs/MODEL.md, "NCCL's ring and protocols"); where they
     * leave in order (J->wire), they go onto the wire one step after
     * another all the same (flow_ready). */
    bool credit = J->s->proto && S->o.deps == TC_DEPS_AUTO;
    const tc_topo *t = S->t;
    double wire = J->s->proto ? J->s->wire : 1;
    bool sender_fifo = S->o.deps != TC_DEPS_RECV && (!credit || J->s->send_in_order);
    bool may_park = S->o.deps == TC_DEPS_RENDEZVOUS || S->o.deps == TC_DEPS_AUTO;
    while (S->st == TC_OK && R->issue < J->nsteps && R->pend == 0 && (!sender_fifo || R->outst == 0)) {
        uint32_t s = R->issue;
        while (J->hi <= s && S->st == TC_OK)
            emit_next(S, job);
        if (S->st)
            return;
        fl_step *st = slot(J, s);
        const fl_tab *T = st->tab;
        const fl_trank *me = &T->rk[r];
        /* what reached the rank's entry for s before it did */
        uint32_t got = 0, wait = NONE;
        if (R->acap) {
            fl_ahead *e = &J->ah[r][s & (R->acap - 1)];
            got = e->got;
            wait = e->wait;
            *e = (fl_ahead){0, NONE};
        }
        R->issue = s + 1;
        R->pend += me->recv - got;
        st->unissued--;
        uint32_t a = fl_ep(J, r);
        for (uint32_t k = me->first; k < me->end && S->st == TC_OK; k++) {
            uint32_t d = T->xv[k].dst;
            double bytes = T->xv[k].bytes;
            uint32_t b = fl_ep(J, d);
            if (!count_event(S))
                return;
            uint32_t dc = fold_rank(S, d);
            uint32_t slack = 1;
            if (credit)
                slack = fl_same_node(t, a, b) ? J->s->credit_steps : J->s->credit_steps_inter;
            bool park = (credit || waits_for_receiver(S, bytes)) && J->rk[dc].issue + slack <= s + 1;
            if (a == b && !park) {
                /* A local copy: instantaneous. */
                deliver(S, job, s, r, d, bytes, S->now, S->now);
                continue;
            }
            uint32_t f = flow_new(S);
            if (f == NONE) {
                oom(S);
                return;
            }
            S->fl[f].job = job;
            S->fl[f].step = s;
            S->fl[f].src = r;
            S->fl[f].dst = d;
            S->fl[f].bytes = bytes * wire;
            S->fl[f].piped = (uint8_t)T->xv[k].piped;
            S->fl[f].red = J->gamma > 0 && T->xv[k].reduce;
            S->f_issue[f] = S->now;
            S->fl[f].hpos = NONE;
            S->fl[f].state = ST_ALPHA;
            R->outst++;
            if (J->wire && a != b) {
                /* its place in the sender's order on the wire (a local
                 * copy takes none: it never sends) */
                fl_wire *w = &J->wire[r];
                S->f_wnext[f] = NONE;
                if (w->tail != NONE)
                    S->f_wnext[w->tail] = f;
                else
                    w->head = f;
                w->tail = f;
            }
            if (park) {
                if (a != b && posts_now(S, f)) /* a local copy pays no overhead */
                    flow_post(S, f);
                /* parked on the step the receiver must pass */
                fl_ahead *dr = ahead(J, dc, s + 1 - slack);
                if (!dr) {
                    oom(S);
                    return;
                }
                S->f_next[f] = dr->wait;
                dr->wait = f;
            } else {
                flow_go(S, f);
            }
        }
        if (may_park) {
            uint32_t f = wait;
            for (; f != NONE && S->st == TC_OK; f = S->f_next[f]) {
                uint32_t src = S->fl[f].src;
                /* a local copy: its own two ends on one endpoint (folded,
                 * r stands for its class, whose endpoint a transfer of
                 * another rank of the class may share without being one) */
                if (fl_ep(J, src) == fl_ep(J, S->fl[f].dst)) {
                    deliver(S, job, S->fl[f].step, src, r, S->fl[f].bytes, S->f_issue[f], S->now);
                    fl_rank *Q = &J->rk[src];
                    Q->outst--;
                    if (Q->outst == 0 && Q->pend == 0)
                        push_ready(S, job, src);
                    flow_free(S, f);
                } else {
                    flow_release(S, f);
                }
            }
        }
        if (retire(J))
            S->job_ended = true;
    }
}

static void drain_ready(fl_sim *S)
{
    while (S->nready && S->st == TC_OK) {
        fl_ready x = S->ready[--S->nready];
        advance(S, x.job, x.rank);
    }
}

/* Handles flow f's pending event at time t. */
static void flow_event(fl_sim *S, uint32_t f, double t)
{
    switch (S->fl[f].state) {
    case ST_ALPHA:
        /* Off the heap until the solver gives it a rate. */
        q_remove(S, f);
        flow_ready(S, f);
        break;
    case ST_XMIT: {
        if (S->blame && S->fl[f].bytes > 0)
            blame_account(S, f, t);
        if (S->fl[f].bytes > 0)
            tc_mm_remove(&S->mm, f);
        S->fl[f].rem = 0;
        S->fl[f].tlast = t;
        S->fl[f].state = ST_PROP;
        q_set(S, f, t + fl_q(S, S->fl[f].lat));
        fl_job *J = &S->jobs[S->fl[f].job];
        uint32_t r = S->fl[f].src;
        if (--J->rk[r].outst == 0 && S->o.deps != TC_DEPS_RECV && J->rk[r].pend == 0)
            push_ready(S, S->fl[f].job, r);
        if (J->wire && fl_ep(J, r) != fl_ep(J, S->fl[f].dst))
            wire_done(S, J, r, f); /* its sender's next send may take the wire */
        break;
    }
    case ST_PROP:
        if (S->fl[f].red) {
            /* arrived: its receiver reduces it after the reductions it
             * has not finished (one at a time), then takes it */
            fl_job *J = &S->jobs[S->fl[f].job];
            double *clk = &J->rclk[fold_rank(S, S->fl[f].dst)];
            *clk = fmax(t, *clk) + fl_q(S, J->gamma * S->fl[f].bytes);
            S->fl[f].state = ST_RED;
            q_set(S, f, *clk);
            break;
        }
        /* fall through */
    default:
        deliver(S, S->fl[f].job, S->fl[f].step, S->fl[f].src, S->fl[f].dst, S->fl[f].bytes, S->f_issue[f], t);
        q_remove(S, f);
        flow_free(S, f);
        break;
    }
}

/* Flow f sends at rate r from now: its bytes left are brought to now at
 * its old rate, and the end of its sending moves. */
static void retime(fl_sim *S, uint32_t f, double r)
{
    fl_flow *F = &S->fl[f];
    double rem = F->rem - F->rate * (S->now - F->tlast);
    if (rem < 0)
        rem = 0;
    F->rem = rem;
    F->tlast = S->now;
    F->rate = r;
    q_set(S, f, S->now + fl_q(S, rem / r));
}

/* New rates for the flows the solver changed. */
static void apply_rates(fl_sim *S)
{
    if (tc_mm_solve(&S->mm) != TC_OK) {
        oom(S);
        return;
    }
    for (size_t i = 0; i < S->mm.nchanged; i++) {
        uint32_t f = S->mm.changed[i];
        if (S->blame) {
            blame_account(S, f, S->now);
            S->blame->bl[f] = S->mm.blink[f];
        }
        retime(S, f, tc_mm_rate(&S->mm, f));
    }
    /* Flows held in this batch: their rate alone, as a solve of a lone
     * flow gives it; or, where another flow joined one since, the rate
     * the solve gave it, unless the loop above applied that (it did where
     * the rate moved: then the flow's rate here is no longer 0). Applied
     * at the batch's last event. A repeat is not carried to the end at
     * once (flow_skip.c, to_end) where what else falls into a batch could
     * move a held flow's end, as a later step's events, gone at the
     * schedule's end, might: where the flow did not start at both the
     * batch's first and last event, or the next batch opens within a
     * batch of its start (sim_loop). */
    for (size_t i = 0; i < S->nheld; i++) {
        uint32_t f = S->held[i];
        if (S->fl[f].rate != 0)
            continue;
        double t = S->fl[f].tlast;
        if (S->rec && (t != S->now || t != S->bt0))
            fl_rec_stop(S);
        else if (S->rec)
            S->ht = fmax(S->ht, t);
        retime(S, f, tc_mm_rate(&S->mm, f));
    }
    S->nheld = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- setup, the loop, results ---- */

static tc_status check_jobs(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, tc_err *err)
{
    if (!t || !jobs || njobs == 0)
        return tc_fail(err, TC_EINVAL, "flow: no jobs to run (give at least one schedule)");
    for (size_t j = 0; j < njobs; j++) {
        const tc_flow_job *J = &jobs[j];
        if (!J->sched)
            return tc_fail(err, TC_EINVAL, "flow: job %zu has no schedule", j);
        uint32_t p = J->sched->req.p;
        if (!(J->start_s >= 0) || !isfinite(J->start_s))
            return tc_fail(err, TC_EINVAL, "flow: job %zu starts at %g s: a start time must be 0 or later", j,
                           J->start_s);
        if (!J->rank_map && p > t->n_endpoints)
            return tc_fail(err, TC_EINVAL, "flow: job %zu has %u ranks but the topology has only %u endpoints", j, p,
                           t->n_endpoints);
        for (uint32_t r = 0; J->rank_map && r < p; r++)
            if (J->rank_map[r] >= t->n_endpoints)
                return tc_fail(err, TC_EINVAL,
                               "flow: job %zu maps rank %u to endpoint %u, but the topology has endpoints 0..%u", j, r,
                               J->rank_map[r], t->n_endpoints - 1);
    }
    return TC_OK;
}

/* Transfers of the whole schedule, local copies included (tc_sched_count:
 * every step of a phase has the same traffic). 0 when unknown. */
static double sched_transfers(const tc_sched *s)
{
    uint32_t steps = 0;
    for (uint32_t i = 0; i < s->nphases; i++)
        steps += s->phases[i].repeat;
    uint64_t n;
    double bytes;
    /* tc_sched_count takes all-pairs steps in parts */
    if (steps != s->nsteps || tc_sched_count(s, &n, &bytes, NULL) != TC_OK)
        return 0;
    return (double)n;
}

static void progress_init(fl_sim *S)
{
    S->prog_t0 = S->prog_last = wall_now();
    S->prog_work = 0;
    S->prog_mm = S->mm.level_flows + S->mm.local_flows;
    double total = 0;
    for (size_t j = 0; j < S->njobs; j++) {
        double n = sched_transfers(S->jobs[j].s);
        if (n <= 0 && S->jobs[j].nsteps > 0) {
            total = 0;
            break;
        }
        total += n;
    }
    /* Folded, the transfers done count one class of ranks. */
    S->prog_total = S->fold_T ? total / S->fold_n : total;
}

/* n rounded up to a cache line (the parts of one allocation). */
static inline size_t blk_up(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Sets up S->jobs[j] for job jb (its memory zeroed). */
static tc_status job_init(fl_sim *S, size_t j, const tc_flow_job *jb)
{
    const tc_topo *t = S->t;
    fl_job *J = &S->jobs[j];
    J->s = jb->sched;
    J->map = jb->rank_map;
    J->topo = t;
    J->p = J->pfull = tc_sched_parts(J->s);
    J->lanes = J->s->lanes > 1 ? J->s->lanes : 1;
    if ((uint64_t)J->p * J->lanes > UINT32_MAX / 2)
        return S->st = tc_fail(S->err, TC_EINVAL, "flow: job %zu has %u ranks in %u lanes: too many", j, J->p,
                               J->lanes);
    J->p *= J->lanes;
    J->nsteps = J->s->nsteps;
    J->start = jb->start_s;
    J->finish = J->start;
    J->name = jb->name;
    J->tag = jb->tag;
    /* The per-rank arrays in one block (J->rk's; job_release frees it):
     * a co-simulated iteration starts and releases hundreds of thousands
     * of small jobs, whose separate allocations were a few percent of it. */
    size_t P = J->p ? J->p : 1, ps = P * (size_t)S->stride;
    bool rc = (double)J->p * rcache_bytes(S->stride) <= RCACHE_MAX;
    /* NCCL's credits (advance) with a rank's sends kept in order on the
     * wire (tc_sched.wire_in_order): each sender's list */
    bool wire = J->s->wire_in_order && J->s->proto && S->o.deps == TC_DEPS_AUTO;
    size_t o_ah = blk_up(P * sizeof *J->rk), o_wire = o_ah + blk_up(P * sizeof *J->ah);
    size_t o_rc = o_wire + (wire ? blk_up(P * sizeof *J->wire) : 0);
    size_t o_path = o_rc + (rc ? blk_up(P * sizeof *J->rc) : 0);
    size_t o_pw = o_path + (rc ? blk_up(ps * sizeof *J->rc_path) : 0);
    char *blk = calloc(1, o_pw + (rc ? ps * sizeof *J->rc_pw : 0));
    if (!blk)
        return oom(S);
    J->rk = (fl_rank *)blk;
    J->ah = (fl_ahead **)(blk + o_ah);
    J->gamma = tc_eval_gamma(S->t, J->s);
    if (J->gamma > 0 && !(J->rclk = calloc(P, sizeof *J->rclk)))
        return oom(S);
    if (wire) {
        J->wire = (fl_wire *)(blk + o_wire);
        for (uint32_t r = 0; r < J->p; r++)
            J->wire[r] = (fl_wire){NONE, NONE, NONE, 0};
    }
    if (rc) {
        J->rc = (fl_rcache *)(blk + o_rc);
        J->rc_path = (uint32_t *)(blk + o_path);
        J->rc_pw = (double *)(blk + o_pw);
    }
    if (!window_grow(J))
        return oom(S);
    if (S->o.trace_path && !(J->seen = calloc(J->p ? J->p : 1, 1)))
        return oom(S);
    for (uint32_t r = 0; r < J->p; r++)
        J->rk[r].fin = J->start;
    return TC_OK;
}

/* The longest route latency between some of job 0's ranks: rank i p / 8
 * to its neighbour and to the rank half the job away (i = 0 .. 7). Links
 * the job does not use (a long-haul link between pods it does not span)
 * must not set its grid: an estimate too large makes the grid's unit, and
 * every duration's rounding, as much larger (an estimate too small only
 * makes the grid coarser once, exactly, when the run passes its span). */
static double grid_path_lat(fl_sim *S)
{
    const fl_job *J = &S->jobs[0];
    uint32_t p = J->s->req.p;
    double lat = 0;
    for (uint32_t i = 0; p > 1 && i < 8; i++) {
        uint32_t r = (uint32_t)((uint64_t)i * p / 8);
        uint32_t a = fl_ep(J, r);
        lat = fmax(lat, fl_path_lat(S, a, fl_ep(J, (r + 1) % p)));
        lat = fmax(lat, fl_path_lat(S, a, fl_ep(J, (uint32_t)((r + (uint64_t)p / 2) % p))));
    }
    return lat;
}

/* How long job 0 takes, roughly, with no contention: per step the most
 * bytes a rank sends or receives at the fastest link's rate, its overheads
 * and the longest of some of its routes' latencies (grid_path_lat), after
 * the job's start. */
static double grid_estimate(fl_sim *S)
{
    const fl_job *J = &S->jobs[0];
    const tc_sched *s = J->s;
    const tc_topo *t = S->t;
    double bw = 0;
    for (uint32_t l = 0; l < t->n_links; l++)
        bw = fmax(bw, S->cap[l]);
    double wire = s->proto && s->wire > 0 ? s->wire : 1;
    double step_lat = grid_path_lat(S) + (s->proto ? fmax(s->lat_intra_s, s->lat_inter_s) : 0);
    double T = s->proto ? s->base_s : 0;
    for (uint32_t i = 0; i < s->nphases; i++) {
        const tc_phase *ph = &s->phases[i];
        double bytes = fmax(ph->rank_bytes, ph->rank_bytes_in) * wire;
        double step = (bw > 0 ? bytes / bw : 0) + (double)(ph->fanout ? ph->fanout : 1) * t->alpha + step_lat;
        T += (double)ph->repeat * step;
    }
    return T > 0 && isfinite(T) ? T : 1e-6;
}

/* The grid spans the job's start and this many times the estimate, so
 * that a run contention makes longer seldom needs a coarser grid. */
#define GRID_HEADROOM 64.0
/* Events at most this many grid units after a batch's first are in it:
 * 1-2 TC_FLOW_BATCH_REL of the estimate (the unit is 2^-52 to 2^-51 of
 * 64 estimates), and far more than the few units by which times equal in
 * exact arithmetic can differ on the grid. */
#define GRID_BATCH 64.0

/* A simulation of one job runs on a grid (fl_sim.tq): the smallest power
 * of two whose FL_GRID_SPAN multiples cover the start and GRID_HEADROOM
 * times the estimate. Its unit is at most 2^-51 of that span (4.4e-16;
 * 2.8e-14 of the estimate for a job starting at 0), the double's own
 * resolution at the end of the span: a duration rounds by half of that. */
static void grid_init(fl_sim *S)
{
    int e;
    /* at least a nanosecond (a unit of 2e-25 s; finer would leave the
     * doubles' range for durations); none where the span is not finite */
    double span = fmax(fabs(S->jobs[0].start) + GRID_HEADROOM * grid_estimate(S), 1e-9);
    if (!(span < 1e300))
        return;
    frexp(span / FL_GRID_SPAN, &e);
    S->tq = ldexp(1.0, e);
    S->itq = ldexp(1.0, -e);
    fl_job *J = &S->jobs[0];
    J->start = fl_q(S, J->start);
    J->finish = J->start;
    for (uint32_t r = 0; r < J->p; r++)
        J->rk[r].fin = J->start;
}

/* flow_sim.h. Every time onto the new grid (fl_q; an infinite one
 * stays). Rounding is monotone: the queue's order holds. */
void tc_fl_regrid(fl_sim *S)
{
    while (S->now >= FL_GRID_SPAN * S->tq) {
        S->tq *= 2;
        S->itq /= 2;
    }
    S->regrids++;
    S->now = fl_q(S, S->now);
    for (uint32_t i = 0; i < S->hn; i++)
        S->heap[i].key = fl_q(S, S->heap[i].key);
    for (uint32_t k = 0; k < FL_LANES; k++) {
        fl_lane *L = &S->lanes[k];
        for (uint32_t i = 0; i < L->n; i++)
            lane_at(L, i)->key = fl_q(S, lane_at(L, i)->key);
        lane_ends(S, k);
    }
    for (uint32_t f = 0; f < S->fhigh; f++) {
        S->fl[f].tlast = fl_q(S, S->fl[f].tlast);
        S->f_issue[f] = fl_q(S, S->f_issue[f]);
    }
    for (size_t j = 0; j < S->njobs; j++) {
        fl_job *J = &S->jobs[j];
        J->finish = fl_q(S, J->finish);
        for (uint32_t r = 0; J->rk && r < J->p; r++) {
            J->rk[r].fin = fl_q(S, J->rk[r].fin);
            J->rk[r].oclk = fl_q(S, J->rk[r].oclk);
            if (J->rclk)
                J->rclk[r] = fl_q(S, J->rclk[r]);
        }
    }
}

static tc_status sim_init(fl_sim *S, const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                          tc_err *err)
{
    memset(S, 0, sizeof *S);
    S->t = t;
    if (o)
        S->o = *o;
    S->err = err;
    for (uint32_t k = 0; k < FL_LANES; k++)
        lane_ends(S, k);
    if (!(S->o.eager_limit_bytes >= 0))
        return S->st = tc_fail(err, TC_EINVAL, "flow: eager limit %g bytes: expected 0 (the default, %g bytes) or more",
                               S->o.eager_limit_bytes, TC_FLOW_DEFAULT_EAGER_LIMIT);
    if (S->o.eager_limit_bytes == 0)
        S->o.eager_limit_bytes = TC_FLOW_DEFAULT_EAGER_LIMIT;
    if (S->o.multipath == TC_MULTIPATH_SPRAY && t->kind == TC_TOPO_MULTIDC)
        return S->st = tc_fail(err, TC_EINVAL, "flow: multipath spray splits over a Clos's or a torus's equal-cost "
                                               "paths; a multidc topology takes its routed paths (multipath route)");
    S->njobs = njobs;
    S->budget = S->o.event_budget ? S->o.event_budget : TC_FLOW_DEFAULT_EVENT_BUDGET;
    S->max_slices = S->o.trace_max_slices ? S->o.trace_max_slices : TC_FLOW_DEFAULT_TRACE_SLICES;
    tc_xfers_init(&S->xf, false);
    S->stride = tc_fl_max_incidences(t, S->o.multipath);
    if (S->stride > 65535)
        return S->st = tc_fail(err, TC_EINVAL, "flow: spraying over this topology needs %u links per transfer; at most "
                                               "65535 are supported, use multipath route",
                               S->stride);
    S->cap = malloc((size_t)t->n_links * sizeof *S->cap);
    S->link_bytes = calloc(t->n_links ? t->n_links : 1, sizeof *S->link_bytes);
    S->path = malloc(S->stride * sizeof *S->path);
    S->pw = malloc(S->stride * sizeof *S->pw);
    S->jobs = calloc(njobs ? njobs : 1, sizeof *S->jobs);
    if (!S->cap || !S->link_bytes || !S->path || !S->pw || !S->jobs)
        return oom(S);
    for (uint32_t l = 0; l < t->n_links; l++)
        S->cap[l] = t->links[l].bw > 0 ? t->links[l].bw : 0;
    /* An NCCL protocol's rate cap (coll.h; on payload, so on the wire it is
     * times the wire factor) is the solver's cap: every job must have the
     * same one. */
    double proto_cap = -1;
    for (size_t j = 0; j < njobs; j++) {
        const tc_sched *s = jobs[j].sched;
        double c = s->proto && s->rate_cap_Bps > 0 ? s->rate_cap_Bps * s->wire : 0;
        if (proto_cap >= 0 && c != proto_cap)
            return S->st = tc_fail(err, TC_EINVAL,
                                   "flow: jobs whose NCCL protocols cap the rate differently cannot run together "
                                   "(job %zu: %g B/s, an earlier job %g B/s; 0: none)",
                                   j, c, proto_cap);
        proto_cap = c;
    }
    if (proto_cap > 0 && (!(S->o.rate_cap_Bps > 0) || proto_cap < S->o.rate_cap_Bps))
        S->o.rate_cap_Bps = proto_cap;
    if (tc_mm_init(&S->mm, t->n_links, S->cap, S->stride, S->o.rate_cap_Bps) != TC_OK)
        return oom(S);
    /* A component above a few links is re-solved locally (or by level
     * where the change reaches far) instead of whole: a change to one
     * flow of a large component moves few of its rates (a pipelined tree
     * under ECMP, a training iteration's groups that share the fabric);
     * the rates equal the whole solve's to 1e-9, 1.5e-12 seen (test_maxmin;
     * docs/MODEL.md, "Rates"; docs/PERFORMANCE.md). */
    S->mm.comp_budget = TC_FLOW_COMP_BUDGET;
    S->mm.local = true;
    for (size_t j = 0; j < njobs; j++)
        if (job_init(S, j, &jobs[j]) != TC_OK)
            return S->st;
    if (njobs == 1)
        grid_init(S);
    if (tc_fl_fold_init(S) != TC_OK)
        return S->st;
    if (S->o.progress)
        progress_init(S);
    set_tick(S);
    if (tc_fl_skip_init(S) != TC_OK)
        return S->st;
    if (S->o.trace_path)
        return trace_open(S);
    return TC_OK;
}

/* Frees what a finished job held but its times (nothing refers to it any
 * more: no flow, no ready entry). */
static void job_release(fl_job *J)
{
    for (uint32_t i = 0; i < J->ntabs; i++) {
        free(J->tabs[i]->xv);
        free(J->tabs[i]); /* its rk with it */
    }
    free(J->tabs);
    free(J->spare);
    free(J->win);
    for (uint32_t r = 0; J->ah && r < J->p; r++)
        free(J->ah[r]);
    free(J->rk); /* and ah, wire, rc, rc_path, rc_pw: one block */
    free(J->seen);
    free(J->rclk);
    J->rclk = NULL;
    J->tabs = NULL;
    J->spare = NULL;
    J->win = NULL;
    J->ah = NULL;
    J->wire = NULL;
    J->rk = NULL;
    J->rc = NULL;
    J->rc_path = NULL;
    J->rc_pw = NULL;
    J->seen = NULL;
    J->ntabs = J->nspare = 0;
    J->last = NULL;
}

static void sim_free(fl_sim *S)
{
    tc_fl_skip_free(S);
    blame_free(S->blame);
    S->blame = NULL;
    free(S->resv);
    S->resv = NULL;
    for (size_t j = 0; S->jobs && j < S->njobs; j++)
        job_release(&S->jobs[j]);
    free(S->jobs);
    tc_mm_free(&S->mm);
    free(S->cap);
    free(S->link_bytes);
    free(S->lrep);
    free(S->lw);
    free(S->path);
    free(S->pw);
    tc_xfers_free(&S->xf);
    free(S->fl);
    free(S->f_next);
    free(S->f_wnext);
    free(S->f_issue);
    free(S->held);
    free(S->recs);
    free(S->free_ids);
    free(S->heap_mem);
    for (uint32_t k = 0; k < FL_LANES; k++)
        free(S->lanes[k].v);
    free(S->ready);
    if (S->trace) {
        fclose(S->trace);
        remove(S->trace_tmp);
    }
    free(S->trace_tmp);
}

/* Job order by start time (stable by index). */
static void sort_jobs(const fl_sim *S, size_t *order)
{
    for (size_t i = 0; i < S->njobs; i++)
        order[i] = i;
    for (size_t i = 1; i < S->njobs; i++)
        for (size_t k = i; k > 0 && S->jobs[order[k]].start < S->jobs[order[k - 1]].start; k--) {
            size_t x = order[k];
            order[k] = order[k - 1];
            order[k - 1] = x;
        }
}

static void sim_loop(fl_sim *S, const size_t *order)
{
    size_t next_job = 0;
    while (S->st == TC_OK && !S->ended) {
        double next;
        uint32_t f;
        bool have = q_peek(S, &next, &f);
        if (!have)
            next = INFINITY;
        double t = next;
        if (next_job < S->njobs && S->jobs[order[next_job]].start < next)
            next = S->jobs[order[next_job]].start;
        if (next == INFINITY)
            break;
        if (S->tq > 0 && next >= FL_GRID_SPAN * S->tq) {
            /* a coarser grid: the queue's times move (peek again) */
            S->now = next;
            tc_fl_regrid(S);
            continue;
        }
        /* On the grid, the batch is a few units: the same wherever the
         * simulation is moved by a multiple of the unit. */
        double end = S->tq > 0 ? next + GRID_BATCH * S->tq : next + fmax(next * TC_FLOW_BATCH_REL, 1e-15);
        if (S->rec) {
            /* a batch opening within a batch of a held flow's start might
             * have taken it in (apply_rates) */
            if (next - S->ht <= end - next)
                fl_rec_stop(S);
            S->bt0 = next;
            S->ht = -INFINITY;
        }
        S->now = next;
        size_t started = next_job;
        while (next_job < S->njobs && S->jobs[order[next_job]].start <= end) {
            fl_job *J = &S->jobs[order[next_job]];
            for (uint32_t r = J->p; r-- > 0;)
                push_ready(S, (uint32_t)order[next_job], r);
            next_job++;
        }
        drain_ready(S);
        /* Where no job started, the queue is as peeked above. */
        bool peeked = have && next_job == started;
        while (S->st == TC_OK && (peeked || q_peek(S, &t, &f)) && t <= end) {
            peeked = false;
            if (t > S->now)
                S->now = t;
            /* A start was counted when the transfer was issued. */
            if (S->fl[f].state != ST_ALPHA && !count_event(S))
                break;
            flow_event(S, f, t);
            drain_ready(S);
        }
        if (S->st == TC_OK)
            apply_rates(S);
        S->batches++;
        if (S->o.progress && S->st == TC_OK)
            count_batch(S);
        if (S->st == TC_OK && fl_skip_look(S))
            tc_fl_skip_batch(S);
    }
}

/* Every rank must have passed every step: otherwise some receive was never
 * sent. */
static tc_status check_done(fl_sim *S)
{
    for (size_t j = 0; j < S->njobs; j++) {
        const fl_job *J = &S->jobs[j];
        for (uint32_t r = 0; r < J->p; r++)
            if (J->rk[r].issue < J->nsteps)
                return S->st = tc_fail(S->err, TC_EINVAL,
                                       "job %zu deadlocks: rank %u waits at step %u for %u receive(s) of earlier "
                                       "steps that are never delivered",
                                       j, r, J->rk[r].issue, J->rk[r].pend);
    }
    return TC_OK;
}

/* Link bytes this close (relative) are a tie in the hottest links' order. */
#define HOT_TIE 1e-9

/* flow_sim.h */
void tc_fl_hot_links(const tc_topo *t, const double *bytes, const double *cap, double makespan, tc_flow_result *res)
{
    double util = 0, hot_key[TC_FLOW_HOT_LINKS];
    size_t used = 0;
    for (uint32_t l = 0; l < t->n_links; l++) {
        double b = bytes[l];
        if (!(b > 0))
            continue;
        double u = makespan > 0 && cap[l] > 0 ? b / (cap[l] * makespan) : 0;
        util += u;
        used++;
        /* Insert into the top list, busiest first: most bytes for the
         * link's capacity (a NIC at 98% before an NVLink with more bytes
         * at 16%); ties (within HOT_TIE relative: the same traffic, added
         * up in another order, as where repeats were skipped) go to the
         * lower ID. */
        double key = cap[l] > 0 ? b / cap[l] : 0;
        size_t k = res->nhot < TC_FLOW_HOT_LINKS ? res->nhot++ : TC_FLOW_HOT_LINKS;
        if (k == TC_FLOW_HOT_LINKS) {
            if (!(key > hot_key[k - 1] * (1 + HOT_TIE)))
                continue;
            k--;
        }
        while (k > 0 && hot_key[k - 1] * (1 + HOT_TIE) < key) {
            res->hot[k] = res->hot[k - 1];
            hot_key[k] = hot_key[k - 1];
            k--;
        }
        res->hot[k] = (tc_link_load){l, b, u};
        hot_key[k] = key;
    }
    res->mean_utilisation = used ? util / used : 0;
}

static tc_status results(fl_sim *S, tc_flow_result *res)
{
    tc_fl_flush_bytes(S);
    res->njobs = S->njobs;
    res->jobs = calloc(S->njobs, sizeof *res->jobs);
    double *tmp = NULL;
    if (!res->jobs)
        return oom(S);
    double first = INFINITY, last = 0;
    for (size_t j = 0; j < S->njobs; j++) {
        fl_job *J = &S->jobs[j];
        tc_flow_job_result *x = &res->jobs[j];
        /* An NCCL protocol's base latency: once, at the end. */
        double base = J->s->proto ? J->s->base_s : 0;
        x->start_s = J->start;
        x->finish_s = J->finish + base;
        x->time_s = J->finish + base - J->start;
        /* Folded (j = 0): each simulated rank and transfer stands for n. */
        uint64_t n = j == 0 && S->fold_T ? S->fold_n : 1;
        x->transfers = J->transfers * n;
        double *v = realloc(tmp, (J->p ? J->p : 1) * sizeof *v);
        if (!v) {
            free(tmp);
            return oom(S);
        }
        tmp = v;
        /* A rank finishes with the last of its lanes. */
        uint32_t np = J->lanes > 1 ? J->pfull : J->p;
        for (uint32_t r = 0; r < np; r++)
            tmp[r] = J->rk[r].fin + base - J->start;
        for (uint32_t v = np; v < J->p; v++)
            tmp[v % np] = fmax(tmp[v % np], J->rk[v].fin + base - J->start);
        qsort(tmp, np, sizeof *tmp, cmp_double);
        if (np) {
            /* Over all ranks: the sorted values each n times. */
            uint64_t P = (uint64_t)np * n;
            x->rank_finish_min_s = tmp[0];
            x->rank_finish_max_s = tmp[np - 1];
            x->rank_finish_median_s = P % 2 ? tmp[P / 2 / n] : (tmp[(P / 2 - 1) / n] + tmp[P / 2 / n]) / 2;
        }
        first = fmin(first, J->start);
        last = fmax(last, x->finish_s); /* the protocol's base latency included, as the job's time */
    }
    free(tmp);
    /* the budget bounds the simulated events; the ones they stand for are
     * reported beside them */
    res->events = S->fold_T ? S->events * S->fold_n : S->events;
    res->events_simulated = S->events;
    res->batches = S->batches;
    res->makespan_s = last - first;
    if (S->fold_T)
        for (uint32_t l = 0; l < S->t->n_links; l++)
            S->link_bytes[l] = S->link_bytes[S->lrep[l]];
    tc_fl_hot_links(S->t, S->link_bytes, S->cap, res->makespan_s, res);
    res->trace_slices = S->slices;
    res->trace_truncated = S->truncated;
    uint64_t steps = 0;
    for (size_t j = 0; j < S->njobs; j++)
        steps += S->jobs[j].nsteps;
    res->steps_skipped = S->steps_skipped;
    res->steps_simulated = steps - S->steps_skipped;
    res->repeat_from_step = S->repeat_from;
    res->steps_to_end = S->tail_steps;
    res->skip_off = S->skip_off;
    res->fold_ranks = S->fold_T;
    res->fold_copies = S->fold_T ? S->fold_n : 0;
    res->fold_off = S->fold_off;
    return TC_OK;
}

tc_status tc_flow_run(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                      tc_flow_result *res, tc_err *err)
{
    memset(res, 0, sizeof *res);
    tc_status st = check_jobs(t, jobs, njobs, err);
    if (st)
        return st;
    if (o && o->bounds)
        return tc_fl_bounds_run(t, jobs, njobs, o, res, err);
    fl_sim S;
    size_t *order = malloc(njobs * sizeof *order);
    st = order ? sim_init(&S, t, jobs, njobs, o, err) : tc_fail(err, TC_EINTERNAL, "flow evaluator: out of memory");
    if (st == TC_OK) {
        sort_jobs(&S, order);
        sim_loop(&S, order);
        if (S.st == TC_OK)
            check_done(&S);
        if (S.st == TC_OK && S.o.progress)
            report(&S, wall_now(), true);
        if (S.st == TC_OK)
            results(&S, res);
        trace_close(&S, S.st == TC_OK);
        st = S.st;
    }
    if (order)
        sim_free(&S);
    free(order);
    if (st)
        tc_flow_result_free(res);
    return st;
}

void tc_flow_result_free(tc_flow_result *res)
{
    if (!res)
        return;
    free(res->jobs);
    memset(res, 0, sizeof *res);
}

/* ---- a simulation that jobs join while it runs (flow.h) ------------------ */


/* A job timed alone (tc_flow_opts.solo; docs/MODEL.md, "Jobs alone on
 * their links"): the links its ranks' routes can take, and what a
 * simulation of it alone gave (dur NAN: not simulated yet). The blame of
 * that simulation, for the job's tag on those links, is added at each of
 * its ends. */
typedef struct ctx_solo {
    const tc_sched *s;
    uint32_t *map;             /* a copy of the job's rank map (its endpoints) */
    uint32_t p, tag, nl;       /* nl: the scale-up links among them */
    bool ok;                   /* every route inside scale-up nodes: it may be timed alone */
    uint64_t hash;
    double bytes;
    uint32_t *links;
    double dur;
    uint64_t transfers;
    double sent, tlost;
    double *lost, *lbytes;     /* per link of links (blame on) */
} ctx_solo;

/* A job timed alone in flight: it ends at `end`. */
typedef struct ctx_sr {
    double end;
    uint32_t job, e;
} ctx_sr;

/* The most ranks a job timed alone may have: its routes, all pairs of
 * them, are walked once per schedule and rank map. */
#define SOLO_MAX_RANKS 64u

struct tc_flow_ctx {
    fl_sim S;
    size_t jcap;
    uint32_t *pending;     /* jobs not started yet, by start time (then id) */
    size_t npend;
    uint32_t *active;      /* jobs running */
    size_t nactive;
    uint32_t *fresh;       /* jobs done, not reported yet */
    size_t nfresh;
    uint8_t *state;        /* per job: 0 pending, 1 running, 2 done */
    tc_err err;            /* the simulation's own error slot */
    /* jobs timed alone (tc_flow_opts.solo): the cache, those in flight (a
     * heap by end), the links' scratch marks, the counts */
    ctx_solo *so;
    size_t nso, capso;
    uint32_t *sot;         /* the cache's hash table: 1 + entry (0: empty), a power of two long */
    size_t sotn;
    ctx_sr *sr;
    size_t nsr, capsr;
    uint32_t *mark, stamp;
    uint32_t *cnt;         /* per link: the jobs starting in this batch whose routes can take it */
    uint32_t *claim;       /* per link: the jobs running event by event whose routes can take it */
    uint32_t *jent;        /* per job: its cache entry (UINT32_MAX: none) */
    uint32_t *bent;        /* the cache entries of the jobs starting in this batch */
    size_t capb;
    uint64_t solo_jobs, solo_sims;
};


tc_status tc_flow_ctx_new(const tc_topo *t, const tc_flow_opts *o, tc_flow_ctx **out, tc_err *err)
{
    *out = NULL;
    tc_flow_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
    tc_flow_opts oo;
    if (o)
        oo = *o;
    else
        memset(&oo, 0, sizeof oo);
    oo.no_skip = true;
    oo.trace_path = NULL;
    oo.progress = NULL;
    if (sim_init(&c->S, t, NULL, 0, &oo, &c->err) != TC_OK) {
        tc_status st = tc_fail(err, c->S.st, "%s", c->err.msg);
        sim_free(&c->S);
        free(c);
        return st;
    }
    if (oo.solo) {
        size_t nl = t->n_links ? t->n_links : 1;
        c->S.resv = calloc(nl, sizeof *c->S.resv);
        c->mark = calloc(nl, sizeof *c->mark);
        c->cnt = calloc(nl, sizeof *c->cnt);
        c->claim = calloc(nl, sizeof *c->claim);
        if (!c->S.resv || !c->mark || !c->cnt || !c->claim) {
            tc_flow_ctx_free(c);
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        }
    }
    *out = c;
    return TC_OK;
}

/* ---- jobs timed alone ---- */

static void sr_swap(ctx_sr *a, ctx_sr *b)
{
    ctx_sr x = *a;
    *a = *b;
    *b = x;
}

static bool sr_less(const ctx_sr *a, const ctx_sr *b)
{
    return a->end < b->end || (a->end == b->end && a->job < b->job);
}

static bool sr_push(tc_flow_ctx *c, ctx_sr x)
{
    if (!tc_grow((void **)&c->sr, &c->capsr, c->nsr + 1, sizeof *c->sr))
        return false;
    size_t i = c->nsr++;
    c->sr[i] = x;
    while (i > 0 && sr_less(&c->sr[i], &c->sr[(i - 1) / 2])) {
        sr_swap(&c->sr[i], &c->sr[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return true;
}

static void sr_pop(tc_flow_ctx *c)
{
    c->sr[0] = c->sr[--c->nsr];
    for (size_t i = 0;;) {
        size_t a = 2 * i + 1, b = a + 1, m = i;
        if (a < c->nsr && sr_less(&c->sr[a], &c->sr[m]))
            m = a;
        if (b < c->nsr && sr_less(&c->sr[b], &c->sr[m]))
            m = b;
        if (m == i)
            break;
        sr_swap(&c->sr[i], &c->sr[m]);
        i = m;
    }
}

/* The scale-up links of the route from endpoint a to b into e->links
 * (each once); a route that leaves the nodes makes e->ok false. */
static tc_status solo_route(tc_flow_ctx *c, uint32_t a, uint32_t b, ctx_solo *e, size_t *cap)
{
    fl_sim *S = &c->S;
    if (a == b)
        return TC_OK;
    uint32_t n = tc_fl_route(S, a, b);
    if (n == 0)
        e->ok = false; /* no path: the simulation says so, event by event */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = S->path[k];
        if (S->t->links[l].kind != TC_LINK_NODE) {
            e->ok = false; /* out of the node: links other jobs share most of the time */
            continue;
        }
        if (c->mark[l] == c->stamp)
            continue;
        c->mark[l] = c->stamp;
        if (!tc_grow((void **)&e->links, cap, (size_t)e->nl + 1, sizeof *e->links))
            return oom(S);
        e->links[e->nl++] = l;
    }
    return TC_OK;
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The scale-up links job J's ranks' routes can take, and whether they are
 * all its links (ok: it may be timed alone; not with switch participants,
 * whose routes are the schedule's own, or a pair without a path). Up to
 * SOLO_MAX_RANKS ranks, all ordered pairs of their endpoints (what the
 * schedule may use). A larger job is never timed alone; the links it
 * claims while it runs are those of the pairs of its ranks in one node
 * (its ranks sorted by node): its other routes leave the nodes on most
 * topologies, and one that does not breaks a job timed alone, which is
 * then run again (tc_flow_ctx_solo_broken). */
static tc_status solo_links(tc_flow_ctx *c, const fl_job *J, ctx_solo *e)
{
    fl_sim *S = &c->S;
    uint32_t p = J->s->req.p;
    e->nl = 0;
    e->ok = J->pfull == p && p >= 2 && p <= SOLO_MAX_RANKS;
    if (++c->stamp == 0) {
        memset(c->mark, 0, (S->t->n_links ? S->t->n_links : 1) * sizeof *c->mark);
        c->stamp = 1;
    }
    size_t cap = 0;
    tc_status st = TC_OK;
    if (p <= SOLO_MAX_RANKS) {
        for (uint32_t a = 0; a < p && st == TC_OK; a++)
            for (uint32_t b = 0; b < p && st == TC_OK; b++)
                st = solo_route(c, e->map[a], e->map[b], e, &cap);
        return st;
    }
    if (S->t->node_size < 2)
        return TC_OK;
    uint64_t *ord = malloc((size_t)p * sizeof *ord); /* node << 32 | endpoint */
    if (!ord)
        return oom(S);
    for (uint32_t r = 0; r < p; r++)
        ord[r] = (uint64_t)tc_topo_node_of(S->t, e->map[r]) << 32 | e->map[r];
    qsort(ord, p, sizeof *ord, u64_cmp);
    for (uint32_t a = 0; a < p && st == TC_OK; a++)
        for (uint32_t b = a + 1; b < p && st == TC_OK && (ord[b] >> 32) == (ord[a] >> 32) && (ord[a] >> 32) != UINT32_MAX; b++)
            if ((st = solo_route(c, (uint32_t)ord[a], (uint32_t)ord[b], e, &cap)) == TC_OK)
                st = solo_route(c, (uint32_t)ord[b], (uint32_t)ord[a], e, &cap);
    free(ord);
    return st;
}

/* Job J alone from time 0, in a context of its own with the same options
 * (and blame for the same tags): its time, transfers and blame into e. */
static tc_status solo_time(tc_flow_ctx *c, const fl_job *J, ctx_solo *e)
{
    fl_sim *S = &c->S;
    tc_flow_opts o = S->o;
    o.solo = false; /* its events count towards this context's budget after it */
    tc_flow_ctx *x = NULL;
    tc_err e2;
    tc_flow_job jb = {.sched = J->s, .rank_map = J->map, .start_s = 0, .name = J->name, .tag = J->tag};
    uint32_t id, done[1];
    size_t nd;
    double now;
    tc_status st = tc_flow_ctx_new(S->t, &o, &x, &e2);
    if (st == TC_OK && S->blame)
        st = tc_flow_ctx_blame(x, S->blame->ntags, &e2);
    if (st == TC_OK)
        st = tc_flow_ctx_add(x, &jb, &id, &e2);
    while (st == TC_OK && x->state[id] != 2)
        st = tc_flow_ctx_run(x, INFINITY, done, 1, &nd, &now, &e2);
    if (st == TC_OK) {
        e->dur = x->S.jobs[id].finish;
        e->transfers = x->S.jobs[id].transfers;
        S->events = add_sat(S->events, x->S.events);
        c->solo_sims++;
        if (S->blame && J->tag < S->blame->ntags) {
            e->lost = calloc(e->nl, sizeof *e->lost);
            e->lbytes = calloc(e->nl, sizeof *e->lbytes);
            if (!e->lost || !e->lbytes)
                st = tc_fail(&e2, TC_EINTERNAL, "flow: out of memory");
            e->sent = tc_flow_ctx_sent(x, J->tag);
            e->tlost = tc_flow_ctx_lost(x, J->tag, UINT32_MAX);
            for (uint32_t k = 0; st == TC_OK && k < e->nl; k++) {
                e->lost[k] = tc_flow_ctx_lost(x, J->tag, e->links[k]);
                e->lbytes[k] = tc_flow_ctx_tag_bytes(x, J->tag, e->links[k]);
            }
        }
    }
    tc_flow_ctx_free(x);
    if (st)
        S->st = tc_fail(S->err, st, "%s (job %u, timed alone)", e2.msg, (uint32_t)(J - S->jobs));
    return st;
}

/* The key of job J's entry: its schedule, size, tag and endpoints. */
static uint64_t solo_hash(const fl_job *J, uint32_t p)
{
    uint64_t h = (uint64_t)(uintptr_t)J->s * 0x9e3779b97f4a7c15u ^ J->tag;
    double b = J->s->req.bytes;
    uint64_t bb;
    memcpy(&bb, &b, sizeof bb);
    h = (h ^ bb) * 0xff51afd7ed558ccdu;
    for (uint32_t r = 0; r < p; r++)
        h = (h ^ (J->map ? J->map[r] : r)) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 29);
}

static bool solo_same(const ctx_solo *e, const fl_job *J, uint32_t p, uint64_t h)
{
    if (e->hash != h || e->s != J->s || e->tag != J->tag || e->p != p || e->bytes != J->s->req.bytes)
        return false;
    for (uint32_t r = 0; r < p; r++)
        if (e->map[r] != (J->map ? J->map[r] : r))
            return false;
    return true;
}

/* Puts entry i into the hash table (linear probing). */
static void sot_put(tc_flow_ctx *c, size_t i)
{
    size_t m = c->sotn - 1, h = (size_t)c->so[i].hash & m;
    while (c->sot[h])
        h = (h + 1) & m;
    c->sot[h] = (uint32_t)i + 1;
}

/* Indexes the last entry, the table kept at least twice the entries. */
static bool solo_index(tc_flow_ctx *c)
{
    if (2 * c->nso > c->sotn) {
        size_t n = c->sotn ? 2 * c->sotn : 256;
        uint32_t *t = calloc(n, sizeof *t);
        if (!t)
            return false;
        free(c->sot);
        c->sot = t;
        c->sotn = n;
        for (size_t k = 0; k + 1 < c->nso; k++)
            sot_put(c, k);
    }
    sot_put(c, c->nso - 1);
    return true;
}

/* The cache's entry for job J (added, its links found, when new); NULL
 * when out of memory (S->st set). Keyed by the endpoints, not the rank
 * map's address: a caller may hand each job a map of its own. */
static ctx_solo *solo_entry(tc_flow_ctx *c, const fl_job *J)
{
    uint32_t p = J->s->req.p;
    uint64_t h = solo_hash(J, p);
    if (c->sotn)
        for (size_t k = (size_t)h & (c->sotn - 1); c->sot[k]; k = (k + 1) & (c->sotn - 1))
            if (solo_same(&c->so[c->sot[k] - 1], J, p, h))
                return &c->so[c->sot[k] - 1];
    if (c->nso >= UINT32_MAX - 1 || !tc_grow((void **)&c->so, &c->capso, c->nso + 1, sizeof *c->so)) {
        oom(&c->S);
        return NULL;
    }
    ctx_solo *e = &c->so[c->nso];
    *e = (ctx_solo){.s = J->s, .p = p, .tag = J->tag, .hash = h, .bytes = J->s->req.bytes, .dur = NAN};
    if (p && !(e->map = malloc(p * sizeof *e->map))) {
        oom(&c->S);
        return NULL;
    }
    for (uint32_t r = 0; r < p; r++)
        e->map[r] = J->map ? J->map[r] : r;
    c->nso++;
    if (!solo_index(c)) {
        oom(&c->S);
        return NULL;
    }
    return solo_links(c, J, e) == TC_OK ? e : NULL;
}

/* Job j, run event by event, claims its scale-up links (+1) or gives
 * them back (-1). */
static void solo_claim(tc_flow_ctx *c, uint32_t j, int d)
{
    const ctx_solo *e = &c->so[c->jent[j]];
    for (uint32_t k = 0; k < e->nl; k++)
        c->claim[e->links[k]] += (uint32_t)d;
}

/* Counts the links of the k-th job starting in this batch (pending[k]),
 * or (on 0) clears their counts; false when out of memory (S->st set). */
static bool solo_count(tc_flow_ctx *c, size_t k, int on)
{
    if (on) {
        if (!tc_grow((void **)&c->bent, &c->capb, k + 1, sizeof *c->bent)) {
            oom(&c->S);
            return false;
        }
        ctx_solo *e = solo_entry(c, &c->S.jobs[c->pending[k]]);
        if (!e)
            return false;
        c->bent[k] = (uint32_t)(e - c->so);
    }
    const ctx_solo *e = &c->so[c->bent[k]];
    for (uint32_t i = 0; i < e->nl; i++)
        c->cnt[e->links[i]] = on ? c->cnt[e->links[i]] + 1 : 0;
    return true;
}

/* Starts job j timed alone where it can be: every link its routes can
 * take free of flows and of other jobs timed alone. 1: started so; 0:
 * not; -1: failed (S->st). */
static int solo_try(tc_flow_ctx *c, uint32_t j)
{
    fl_sim *S = &c->S;
    fl_job *J = &S->jobs[j];
    ctx_solo *e = solo_entry(c, J);
    if (!e)
        return -1;
    if (!e->ok || e->nl == 0 || !tc_mm_path_empty(&S->mm, e->links, e->nl))
        return 0;
    for (uint32_t k = 0; k < e->nl; k++)
        if (S->resv[e->links[k]] || c->cnt[e->links[k]] > 1 || c->claim[e->links[k]])
            return 0;
    if (isnan(e->dur) && solo_time(c, J, e) != TC_OK)
        return -1;
    uint32_t ei = (uint32_t)(e - c->so);
    /* its ranks start at the batch's time, as event by event (advance) */
    if (!sr_push(c, (ctx_sr){S->now + e->dur, j, ei})) {
        oom(S);
        return -1;
    }
    for (uint32_t k = 0; k < e->nl; k++)
        S->resv[e->links[k]] = j + 1;
    c->solo_jobs++;
    return 1;
}

/* The job timed alone that ends first ends: its links are free again, its
 * blame added. */
static void solo_end(tc_flow_ctx *c)
{
    fl_sim *S = &c->S;
    ctx_sr x = c->sr[0];
    sr_pop(c);
    const ctx_solo *e = &c->so[x.e];
    fl_job *J = &S->jobs[x.job];
    for (uint32_t k = 0; k < e->nl; k++)
        S->resv[e->links[k]] = 0;
    fl_blame *b = S->blame;
    if (b && e->lost && J->tag < b->ntags) {
        size_t base = (size_t)J->tag * b->nlinks;
        for (uint32_t k = 0; k < e->nl; k++) {
            b->lost[base + e->links[k]] += e->lost[k];
            b->bytes[base + e->links[k]] += e->lbytes[k];
        }
        b->sent[J->tag] += e->sent;
        b->tlost[J->tag] += e->tlost;
    }
    J->finish = x.end;
    J->transfers = e->transfers;
    c->state[x.job] = 2;
    c->fresh[c->nfresh++] = x.job;
    job_release(J);
}

/* Ends the jobs timed alone that end by `end`; whether there were any. */
static bool solo_ends(tc_flow_ctx *c, double end)
{
    bool any = false;
    for (; c->S.st == TC_OK && c->nsr > 0 && c->sr[0].end <= end; any = true)
        solo_end(c);
    return any;
}

tc_status tc_flow_ctx_add(tc_flow_ctx *c, const tc_flow_job *job, uint32_t *id, tc_err *err)
{
    fl_sim *S = &c->S;
    if (S->st)
        return tc_fail(err, S->st, "%s", c->err.msg);
    if (!job || !job->sched)
        return tc_fail(err, TC_EINVAL, "flow: a job needs a schedule");
    if (check_jobs(S->t, job, 1, err))
        return TC_EINVAL;
    const tc_sched *sc = job->sched;
    double cap = sc->proto && sc->rate_cap_Bps > 0 ? sc->rate_cap_Bps * sc->wire : 0;
    if (cap > 0 && cap != S->o.rate_cap_Bps)
        return tc_fail(err, TC_EINVAL, "flow: a job whose NCCL protocol caps the rate (%g B/s) cannot join this "
                                       "simulation (rate cap %g B/s)", cap, S->o.rate_cap_Bps);
    if (S->njobs >= UINT32_MAX / 2)
        return tc_fail(err, TC_EINVAL, "flow: too many jobs");
    if (S->njobs == c->jcap) {
        size_t nc = c->jcap ? 2 * c->jcap : 16;
        fl_job *J = realloc(S->jobs, nc * sizeof *J);
        if (!J)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        S->jobs = J;
        uint8_t *st = realloc(c->state, nc);
        if (!st)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        c->state = st;
        uint32_t *pd = realloc(c->pending, nc * sizeof *pd);
        if (!pd)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        c->pending = pd;
        uint32_t *ac = realloc(c->active, nc * sizeof *ac);
        if (!ac)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        c->active = ac;
        uint32_t *fr = realloc(c->fresh, nc * sizeof *fr);
        if (!fr)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        c->fresh = fr;
        uint32_t *je = realloc(c->jent, nc * sizeof *je);
        if (!je)
            return tc_fail(err, TC_EINTERNAL, "flow: out of memory");
        c->jent = je;
        c->jcap = nc;
    }
    size_t j = S->njobs++;
    memset(&S->jobs[j], 0, sizeof S->jobs[j]);
    c->state[j] = 0;
    c->jent[j] = UINT32_MAX;
    tc_flow_job jb = *job;
    if (!(jb.start_s >= S->now))
        jb.start_s = S->now;
    S->err = &c->err;
    if (job_init(S, j, &jb) != TC_OK) {
        tc_status st = tc_fail(err, S->st, "%s", c->err.msg);
        return st;
    }
    /* pending, in start order (stable: later ids after earlier ones) */
    size_t k = c->npend;
    while (k > 0 && S->jobs[c->pending[k - 1]].start > jb.start_s) {
        c->pending[k] = c->pending[k - 1];
        k--;
    }
    c->pending[k] = (uint32_t)j;
    c->npend++;
    *id = (uint32_t)j;
    return TC_OK;
}

/* Reports jobs done and not reported yet; returns how many. */
static size_t ctx_report(tc_flow_ctx *c, uint32_t *done, size_t cap)
{
    size_t n = c->nfresh < cap ? c->nfresh : cap;
    memcpy(done, c->fresh, n * sizeof *done);
    memmove(c->fresh, c->fresh + n, (c->nfresh - n) * sizeof *c->fresh);
    c->nfresh -= n;
    return n;
}

tc_status tc_flow_ctx_run(tc_flow_ctx *c, double until, uint32_t *done, size_t cap, size_t *ndone, double *now,
                          tc_err *err)
{
    fl_sim *S = &c->S;
    *ndone = 0;
    *now = S->now;
    if (S->st)
        return tc_fail(err, S->st, "%s", c->err.msg);
    if (!(until >= S->now))
        return tc_fail(err, TC_EINVAL, "flow: run until %g, before the time reached (%g)", until, S->now);
    S->err = &c->err;
    /* jobs completed and not reported yet (cap was short) */
    if ((*ndone = ctx_report(c, done, cap)) > 0)
        return TC_OK;
    while (S->st == TC_OK) {
        double next;
        uint32_t f;
        if (!q_peek(S, &next, &f))
            next = INFINITY;
        if (c->npend > 0 && S->jobs[c->pending[0]].start < next)
            next = S->jobs[c->pending[0]].start;
        if (c->nsr > 0 && c->sr[0].end < next)
            next = c->sr[0].end;
        if (next == INFINITY || next > until) {
            if (next == INFINITY && c->nactive > 0)
                return tc_fail(err, TC_EINVAL, "flow: job %u deadlocks: nothing is left to advance it", c->active[0]);
            if (isfinite(until))
                S->now = until;
            *now = S->now;
            return TC_OK;
        }
        double end = next + fmax(next * TC_FLOW_BATCH_REL, 1e-15);
        S->now = next;
        /* jobs timed alone that end in this batch free their links first:
         * a job starting as one ends may take them (event by event, the
         * one ending sent its last bytes before) */
        bool any = solo_ends(c, end);
        size_t started = 0, nb = 0;
        /* the links of the jobs that start now: one shared with another of
         * them is not for a job timed alone */
        while (S->resv && nb < c->npend && S->jobs[c->pending[nb]].start <= end && solo_count(c, nb, 1))
            nb++;
        while (S->st == TC_OK && started < c->npend && S->jobs[c->pending[started]].start <= end) {
            uint32_t j = c->pending[started++];
            c->state[j] = 1;
            int so = S->resv ? solo_try(c, j) : 0;
            if (so < 0)
                break;
            if (so > 0)
                continue;
            if (S->resv) { /* its scale-up links are not for a job timed alone while it runs */
                c->jent[j] = c->bent[started - 1];
                solo_claim(c, j, 1);
            }
            c->active[c->nactive++] = j;
            for (uint32_t r = S->jobs[j].p; r-- > 0;)
                push_ready(S, j, r);
        }
        for (size_t k = 0; k < nb; k++)
            solo_count(c, k, 0);
        if (started) {
            memmove(c->pending, c->pending + started, (c->npend - started) * sizeof *c->pending);
            c->npend -= started;
            S->job_ended = true; /* a job of no steps ends as it starts */
        }
        drain_ready(S);
        double t;
        while (S->st == TC_OK && q_peek(S, &t, &f) && t <= end) {
            if (t > S->now)
                S->now = t;
            if (S->fl[f].state != ST_ALPHA && !count_event(S))
                break;
            flow_event(S, f, t);
            drain_ready(S);
        }
        if (S->st == TC_OK)
            apply_rates(S);
        S->batches++;
        /* only after a batch in which some job may have ended: a scan of
         * the active jobs every batch cost a tenth of a long co-simulation */
        for (size_t k = 0; S->job_ended && k < c->nactive;) {
            uint32_t j = c->active[k];
            if (S->jobs[j].lo == S->jobs[j].nsteps) {
                if (c->jent[j] != UINT32_MAX)
                    solo_claim(c, j, -1);
                c->state[j] = 2;
                c->fresh[c->nfresh++] = j;
                c->active[k] = c->active[--c->nactive];
                job_release(&S->jobs[j]);
                any = true;
            } else {
                k++;
            }
        }
        S->job_ended = false;
        /* and those started in it that end in it (no steps) */
        any = solo_ends(c, end) || any;
        if (any) {
            *now = S->now;
            *ndone = ctx_report(c, done, cap);
            return TC_OK;
        }
    }
    return tc_fail(err, S->st, "%s", c->err.msg);
}

tc_status tc_flow_ctx_blame(tc_flow_ctx *c, uint32_t ntags, tc_err *err)
{
    fl_sim *S = &c->S;
    if (S->njobs > 0 || S->blame)
        return tc_fail(err, TC_EINVAL, "flow: blame is switched on once, before the first job");
    if (ntags == 0 || ntags > 1024)
        return tc_fail(err, TC_EINVAL, "flow: blame for %u tags: expected 1 to 1024", ntags);
    fl_blame *b = calloc(1, sizeof *b);
    size_t n = (size_t)ntags * S->t->n_links;
    if (b) {
        b->ntags = ntags;
        b->nlinks = S->t->n_links;
        b->lost = calloc(n ? n : 1, sizeof *b->lost);
        b->bytes = calloc(n ? n : 1, sizeof *b->bytes);
        b->sent = calloc(ntags, sizeof *b->sent);
        b->tlost = calloc(ntags, sizeof *b->tlost);
    }
    if (!b || !b->lost || !b->bytes || !b->sent || !b->tlost || !tc_mm_blink_on(&S->mm)) {
        blame_free(b);
        return tc_fail(err, TC_EINTERNAL, "flow: out of memory (blame)");
    }
    S->blame = b;
    return TC_OK;
}

double tc_flow_ctx_lost(const tc_flow_ctx *c, uint32_t tag, uint32_t link)
{
    const fl_blame *b = c->S.blame;
    if (!b || tag >= b->ntags)
        return 0;
    if (link == UINT32_MAX)
        return b->tlost[tag];
    return link < b->nlinks ? b->lost[(size_t)tag * b->nlinks + link] : 0;
}

double tc_flow_ctx_sent(const tc_flow_ctx *c, uint32_t tag)
{
    const fl_blame *b = c->S.blame;
    return b && tag < b->ntags ? b->sent[tag] : 0;
}

double tc_flow_ctx_tag_bytes(const tc_flow_ctx *c, uint32_t tag, uint32_t link)
{
    const fl_blame *b = c->S.blame;
    return b && tag < b->ntags && link < b->nlinks ? b->bytes[(size_t)tag * b->nlinks + link] : 0;
}

double tc_flow_ctx_finish(const tc_flow_ctx *c, uint32_t id)
{
    return id < c->S.njobs ? c->S.jobs[id].finish : NAN;
}

double tc_flow_ctx_start(const tc_flow_ctx *c, uint32_t id)
{
    return id < c->S.njobs ? c->S.jobs[id].start : NAN;
}

void tc_flow_ctx_free(tc_flow_ctx *c)
{
    if (!c)
        return;
    sim_free(&c->S);
    free(c->pending);
    free(c->active);
    free(c->fresh);
    free(c->state);
    for (size_t i = 0; i < c->nso; i++) {
        free(c->so[i].map);
        free(c->so[i].links);
        free(c->so[i].lost);
        free(c->so[i].lbytes);
    }
    free(c->so);
    free(c->sot);
    free(c->sr);
    free(c->mark);
    free(c->cnt);
    free(c->claim);
    free(c->jent);
    free(c->bent);
    free(c);
}

bool tc_flow_ctx_solo_broken(const tc_flow_ctx *c)
{
    return c && c->S.solo_broken;
}

void tc_flow_ctx_solo_count(const tc_flow_ctx *c, uint64_t *added, uint64_t *alone, uint64_t *sims)
{
    *added = c ? c->S.njobs : 0;
    *alone = c ? c->solo_jobs : 0;
    *sims = c ? c->solo_sims : 0;
}

tc_status tc_flow_time(const tc_topo *t, const tc_sched *s, const uint32_t *rank_map, const tc_flow_opts *o,
                       double *time_s, tc_err *err)
{
    tc_flow_opts oo;
    memset(&oo, 0, sizeof oo);
    if (o)
        oo = *o;
    oo.trace_path = NULL;
    tc_flow_job job = {.sched = s, .rank_map = rank_map};
    tc_flow_result res;
    tc_status st = tc_flow_run(t, &job, 1, &oo, &res, err);
    if (st == TC_OK)
        *time_s = res.jobs[0].time_s;
    tc_flow_result_free(&res);
    return st;
}

tc_status tc_flow_alone(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o,
                        double *alone_s, tc_err *err)
{
    for (size_t j = 0; j < njobs; j++) {
        tc_status st = tc_flow_time(t, jobs[j].sched, jobs[j].rank_map, o, &alone_s[j], err);
        if (st)
            return st;
    }
    return TC_OK;
}

/* ---- the memory estimate ----
 *
 * The run's memory is, from the largest part down (measured against the
 * estimate: docs/PERFORMANCE.md, "Memory estimate of the flow simulator"):
 * - flows in flight (transmitting, propagating, or under rendezvous parked
 *   until the receiver reaches the step): FLOW_ID_BYTES + MM_ID_BYTES + a
 *   stride of incidences + an entry in the list of each link it crosses
 *   (counted as the links of a path between two endpoints drawn at random)
 *   + its places in the solver's scratch (component, changed, bottleneck
 *   group);
 * - the window: per live step, a table (an fl_trank per rank, an fl_sxfer
 *   per transfer; steps with the same transfers share one, charged to each
 *   here) and the ranks' entries ahead; the step being emitted: a tc_xfer
 *   per transfer;
 * - per rank its fl_rank; per link LINK_BYTES.
 * Flows in flight: a rank issues a step once its sends of the step before
 * have left (FIFO, rendezvous) or its receives of earlier steps are in
 * (recv), so what is in flight stays near the largest step's transfers
 * (measured: at most 1.03 times; a direct all-to-all is one step, every
 * transfer at once).
 * Live steps: where every rank works in every step the ranks stay within
 * some steps of each other (a ring: 4 to 128 live steps, EST_SLOTS); where
 * some ranks idle (pipelined chains, trees: phases with a sender range,
 * broadcast, reduce) an idle rank runs ahead to the step of its next
 * receive, so up to every step is live (a chain broadcast on 2,048 ranks:
 * 2,110 steps live, charged 2,048 rank records each, 66 MiB, though its
 * steps share few tables).
 *
 * Estimate against the peak resident memory of the run (bench/
 * mem_estimate.sh; 1 GiB; "clos2" is clos:hosts=2048,radix=64,tiers=2):
 *   direct all-to-all 1,024 ranks, clos2            306 MiB   281 MiB
 *   direct all-to-all 2,048 ranks, clos2          1,222 MiB 1,118 MiB
 *   direct all-to-all 4,096, clos:down=16x16x16   5,765 MiB 5,219 MiB
 *   direct all-to-all 2,048, torus:dims=16x16x8   2,622 MiB 2,326 MiB
 *   direct all-to-all 512 spray, torus:dims=8x8x8   228 MiB   175 MiB
 *   ring broadcast 2,048 ranks, clos2              69.7 MiB  66.9 MiB
 *   ring all-reduce 2,048 ranks 1 KiB, 16x16x8     11.3 MiB  10.0 MiB
 *   ring all-reduce 1,024 ranks, clos2              3.8 MiB   1.1 MiB
 * Small runs are charged for the most live steps seen and for link tables
 * that are resident only where touched: up to 3.75 times, tens of MiB. */

/* Live steps charged to a long schedule whose ranks all work every step:
 * EST_SLOTS, or one per EST_RANKS_PER_SLOT ranks on more ranks. Measured
 * (the window's power-of-two capacity): a ring on a Clos 4 to 16 up to
 * 2,048 ranks, 128 on 3,000 and 4,096 ranks (1 KiB) and on a 16x16x8 torus
 * at 2,048; a pairwise exchange up to 32. */
#define EST_SLOTS 32
#define EST_RANKS_PER_SLOT 16
/* Per live step and rank: the step's table record (steps that carry the
 * same transfers share one table, each charged its own here) and half an
 * entry ahead (only a rank behind its senders has entries ahead). */
#define EST_RANK_STEP_BYTES (sizeof(fl_trank) + sizeof(fl_ahead) / 2)
/* Allocator overhead, doubling slack of the link lists and bottleneck
 * groups, and flows in flight beyond the largest step. */
#define EST_SLACK 1.15

typedef struct est_step {
    double xfers;   /* transfers over the network in one step, at most */
    uint32_t steps; /* steps with that many */
} est_step;

static int cmp_est_desc(const void *a, const void *b)
{
    double x = ((const est_step *)a)->xfers, y = ((const est_step *)b)->xfers;
    return (x < y) - (x > y);
}

typedef struct est_job_out {
    double bytes;    /* the job's own arrays: ranks, window */
    double inflight; /* flows in flight, most */
    double max_step; /* transfers of its largest step as the run holds it, local copies included */
    double part;     /* transfers of the largest step emitted at once before the run (the transfer
                      * count's and the fold check's buffers: a part of about tc_eval_chunk()
                      * transfers where the schedule emits by senders, else the whole step) */
} est_job_out;

/* A phase's transfers over the network per step, at most, from its
 * metadata: its senders times its fan-out. Broadcast and reduce move each
 * block to (from) each rank once, so a rank receives (sends) at most one
 * transfer per tree per step (two trees: dbtree); their senders times
 * fan-out would charge the direct broadcast's root fan-out to every rank. */
static double est_phase(const tc_sched *s, const tc_phase *ph, bool *partial)
{
    uint32_t p = s->req.p;
    bool range = ph->src_count > 0 && ph->src_count < p;
    *partial |= range;
    double net = (double)(range ? ph->src_count : p) * ph->fanout;
    if (s->req.op == TC_OP_BROADCAST || s->req.op == TC_OP_REDUCE)
        net = fmin(net, 2.0 * p);
    return net;
}

/* The transfers of the window: its slots filled with the largest steps. */
static double est_window(est_step *v, uint32_t n, uint32_t slots)
{
    qsort(v, n, sizeof *v, cmp_est_desc);
    double x = 0;
    for (uint32_t i = 0; i < n && slots; i++) {
        uint32_t k = v[i].steps < slots ? v[i].steps : slots;
        x += k * v[i].xfers;
        slots -= k;
    }
    return x;
}

/* A job from its phases, without emitting a transfer; folded (rank
 * symmetry) to T of its ranks (T = p: not folded). */
static est_job_out est_job(const tc_flow_job *jb, bool trace, uint32_t T)
{
    const tc_sched *s = jb->sched;
    /* lanes (nccl-*): every rank a simulated rank in each */
    uint32_t lanes = s->lanes > 1 ? s->lanes : 1;
    uint32_t p = tc_sched_parts(s) * lanes;
    double frac = s->req.p ? (double)T / s->req.p : 1;
    est_job_out out = {0, 0, 0, 0};
    est_step *v = malloc((s->nphases ? s->nphases : 1) * sizeof *v);
    bool partial = s->req.op == TC_OP_BROADCAST || s->req.op == TC_OP_REDUCE;
    for (uint32_t i = 0; i < s->nphases; i++) {
        double net = est_phase(s, &s->phases[i], &partial);
        out.inflight = fmax(out.inflight, net);
        if (v)
            v[i] = (est_step){net, s->phases[i].repeat};
    }
    /* Local copies (a direct all-to-all's own blocks): at most one per
     * rank, in the emitted step only (their window entries are noise). */
    out.max_step = out.inflight + p;
    uint32_t slots = s->nsteps;
    if (!partial && slots > 2 * EST_SLOTS) {
        uint32_t live = p / EST_RANKS_PER_SLOT > EST_SLOTS ? p / EST_RANKS_PER_SLOT : EST_SLOTS;
        slots = live < slots ? live : slots;
    }
    double xv = v ? est_window(v, s->nphases, slots) : slots * out.inflight;
    free(v);
    out.bytes = (double)p * (sizeof(fl_rank) + sizeof(fl_ready) + (s->wire_in_order ? sizeof(fl_wire) : 0) +
                             (trace ? 1 : 0)) +
                frac * ((double)slots * p * EST_RANK_STEP_BYTES + xv * sizeof(fl_sxfer));
    out.inflight *= frac;
    /* Folded, a schedule that emits by senders emits only the T simulated
     * senders' transfers of a step (emit_step): the largest step shrinks
     * with the flows (a direct all-to-all of 4,096 ranks folded to 64:
     * 262,080 transfers and 64 local copies, not 16.8 million). */
    /* Before the run, the transfer count emits the largest step in parts of
     * about tc_eval_chunk() transfers (part), and the fold's check emits a
     * step whole where it fits in one part (into the buffer the run then
     * keeps) or else sender by sender. */
    double whole = out.max_step, chunk = (double)tc_eval_chunk() + p;
    out.part = s->emit_part ? fmin(whole, chunk) : whole;
    if (T < s->req.p && s->emit_part && lanes <= 1)
        out.max_step = whole <= chunk ? whole : out.inflight + T;
    return out;
}

/* Links on a path between two endpoints, on average over EST_PAIRS pairs
 * drawn at random: the link list entries of a large step (an all-to-all's
 * pairs are all pairs). Spraying holds every path: the most incidences. */
#define EST_PAIRS 256

static double est_path_links(const tc_topo *t, const tc_flow_opts *o, double stride)
{
    if ((o && o->multipath == TC_MULTIPATH_SPRAY) || t->n_endpoints < 2)
        return stride;
    uint32_t *path = malloc(tc_topo_max_path(t) * sizeof *path + 1);
    if (!path)
        return stride;
    double sum = 0;
    for (uint64_t i = 0; i < EST_PAIRS; i++) {
        uint64_t h = tc_mix64(i);
        uint32_t a = (uint32_t)(h % t->n_endpoints), b = (uint32_t)((h >> 32) % t->n_endpoints);
        uint32_t n = tc_topo_route(t, o ? o->routing : TC_ROUTE_DEFAULT, a, b, path);
        sum += n == TC_NO_ROUTE ? 0 : n;
    }
    free(path);
    return sum / EST_PAIRS;
}

static double pow2_at_least(double x, double min)
{
    double c = min;
    while (c < x)
        c *= 2;
    return c;
}

/* The ranks a run of one job simulates under rank symmetry (flow_fold.c;
 * 0: not folded), found as the run finds them. */
static uint32_t fold_probe(const tc_topo *t, const tc_flow_job *job, const tc_flow_opts *o)
{
    fl_sim S;
    memset(&S, 0, sizeof S);
    tc_err err = {{0}};
    S.t = t;
    if (o)
        S.o = *o;
    S.err = &err;
    S.njobs = 1;
    tc_xfers_init(&S.xf, false);
    S.stride = tc_fl_max_incidences(t, S.o.multipath);
    fl_job J = {.s = job->sched, .map = job->rank_map, .topo = t, .p = tc_sched_parts(job->sched),
                .pfull = tc_sched_parts(job->sched),
                .lanes = job->sched->lanes > 1 ? job->sched->lanes : 1};
    S.jobs = &J;
    S.cap = malloc((t->n_links ? t->n_links : 1) * sizeof *S.cap);
    S.path = malloc(S.stride * sizeof *S.path);
    S.pw = malloc(S.stride * sizeof *S.pw);
    uint32_t T = 0;
    if (S.cap && S.path && S.pw) {
        for (uint32_t l = 0; l < t->n_links; l++)
            S.cap[l] = t->links[l].bw > 0 ? t->links[l].bw : 0;
        if (tc_fl_fold_init(&S) == TC_OK)
            T = S.fold_T;
    }
    free(S.cap);
    free(S.path);
    free(S.pw);
    free(S.lrep);
    free(S.lw);
    tc_xfers_free(&S.xf);
    return T;
}

double tc_flow_mem_estimate(const tc_topo *t, const tc_flow_job *jobs, size_t njobs, const tc_flow_opts *o)
{
    if (!t || !jobs)
        return 0;
    if (o && o->bounds)
        return njobs == 1 && jobs[0].sched ? tc_fl_bounds_mem(t, jobs, o) : 0;
    tc_multipath mp = o ? o->multipath : TC_MULTIPATH_ROUTE;
    double stride = tc_fl_max_incidences(t, mp);
    double bytes = 0, flows = 0, max_step = 0, part = 0;
    uint32_t T = njobs == 1 && jobs[0].sched ? fold_probe(t, jobs, o) : 0;
    for (size_t j = 0; j < njobs; j++) {
        if (!jobs[j].sched)
            continue;
        est_job_out e = est_job(&jobs[j], o && o->trace_path, T ? T : jobs[j].sched->req.p);
        bytes += e.bytes;
        /* each sender's last route (flow_start), where kept */
        double ranks = (double)(T ? T : jobs[j].sched->req.p) * (jobs[j].sched->lanes > 1 ? jobs[j].sched->lanes : 1);
        if (ranks * rcache_bytes((uint32_t)stride) <= RCACHE_MAX)
            bytes += ranks * rcache_bytes((uint32_t)stride);
        flows += e.inflight;
        max_step = fmax(max_step, e.max_step);
        part = fmax(part, e.part);
    }
    /* Per flow: its ids here and in the solver (whose flags are set over
     * its whole power-of-two capacity), a stride of incidences, an entry in
     * each link list of its path and a bottleneck group entry, its places
     * in the component and changed lists. */
    double hops = est_path_links(t, o, stride);
    double per_flow = stride * MM_INC_BYTES + (hops + 1) * sizeof(tc_mm_ent) + 2 * sizeof(uint32_t);
    double run = EST_SLACK * (flows * per_flow + fmax(flows, FLOW_IDS_MIN) * FLOW_ID_BYTES) +
                 pow2_at_least(flows, 1024) * MM_ID_BYTES;
    /* the run's buffer of a step (from the fold's check on); before the
     * run, beside it, up to two buffers of a part (the transfer count's,
     * and the two parts the repetition check compares side by side,
     * flow_skip.c), the flows during it: an upper bound on the peak, which
     * bench/mem_estimate.sh compares with the measured one */
    bytes += max_step * sizeof(tc_xfer) + fmax(run, 2 * part * sizeof(tc_xfer));
    bytes += (double)t->n_links * LINK_BYTES;
    /* a repeat's records (flow_skip.c, to_end): unfolded runs of one job
     * that skip; the array's doubling counted */
    if (njobs == 1 && !T && jobs[0].sched && !(o && (o->no_skip || o->trace_path))) {
        double ranks = (double)jobs[0].sched->req.p * (jobs[0].sched->lanes > 1 ? jobs[0].sched->lanes : 1);
        bytes += 2.0 * (double)fl_rec_max((uint32_t)fmin(ranks, UINT32_MAX), (uint32_t)fmin(flows, UINT32_MAX)) *
                 sizeof(fl_rec);
    }
    return bytes;
}
