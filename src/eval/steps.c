/*
 * steps.c - the bulk-synchronous step evaluator.
 *
 * Model (docs/MODEL.md, "steps"): the transfers of one step start together.
 * Each is routed on the graph; every directed link is shared equally by the
 * flows that cross it. A transfer takes
 *     alpha + sum of its links' latencies + bytes / min over its links (bw / flows),
 * and the step ends with its slowest transfer. alpha is a per-message
 * overhead paid by the sender for each message, one after another (LogGP's
 * o): a rank sending k transfers in a step pays k alpha before its last one
 * leaves, and every transfer of that rank is charged k alpha. The steps of one phase carry
 * identical traffic, so each phase is computed once and multiplied by its
 * repeat count. Local transfers (src == dst) cost nothing.
 *
 * Data layout for the hot loop: the per-link flow counts in one array
 * indexed by link ID; routes are recomputed rather than stored (routing is
 * arithmetic, and a stored all-to-all step would take gigabytes).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/eval_int.h"

struct tc_steps_ws {
    uint64_t *count;        /* flows per link, n_links (an all-pairs step of 65,536 ranks has 2^32) */
    uint32_t *sends;        /* messages per sending rank in the current step, p */
    double *rbytes;         /* bytes each participant reduces in the current step (t->reduce_bw > 0), p */
    uint32_t nparts;        /* participants (sends' length) */
    size_t chunk;           /* transfers emitted at once (an all-pairs step in parts) */
    uint32_t *path;         /* one route, tc_topo_max_path links */
    /* The routes of a whole step, kept by the first pass for the second
     * where they fit in PATH_CACHE_MAX links (TC_NO_ROUTE: none) */
    uint32_t *pcache, *plen;
    size_t pcache_cap, plen_cap;
    bool cached;
    tc_xfers x;
    bool cut;               /* a transfer found no surviving route (failures) */
    uint32_t cut_src, cut_dst, cut_vs, cut_vd; /* its participants and vertices */
};

tc_steps_ws *tc_steps_ws_new(const tc_topo *t, uint32_t p)
{
    tc_steps_ws *w = tc_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->count = tc_calloc(t->n_links, sizeof *w->count);
    w->sends = tc_calloc(p, sizeof *w->sends);
    w->rbytes = tc_calloc(p, sizeof *w->rbytes);
    w->nparts = p;
    w->chunk = tc_eval_chunk();
    w->path = tc_calloc(tc_topo_max_path(t) + 1, sizeof *w->path);
    tc_xfers_init(&w->x, false);
    if (!w->count || !w->sends || !w->rbytes || !w->path) {
        tc_steps_ws_free(w);
        return NULL;
    }
    return w;
}

static size_t eval_chunk = TC_SCHED_PART_CHUNK;

size_t tc_eval_chunk(void)
{
    return eval_chunk;
}

void tc_eval_set_chunk(size_t transfers)
{
    eval_chunk = transfers ? transfers : TC_SCHED_PART_CHUNK;
}

void tc_steps_ws_set_chunk(tc_steps_ws *w, size_t transfers)
{
    w->chunk = transfers ? transfers : 1;
}

void tc_steps_ws_free(tc_steps_ws *w)
{
    if (!w)
        return;
    free(w->count);
    free(w->sends);
    free(w->rbytes);
    free(w->path);
    free(w->pcache);
    free(w->plen);
    tc_xfers_free(&w->x);
    free(w);
}

/* Links of routes one step may keep (4 Mi: 16 MiB) */
#define PATH_CACHE_MAX ((size_t)4 << 20)

/* Room for n entries in *b (*cap of them), what it held not kept. */
static bool room_u32(uint32_t **b, size_t *cap, size_t n)
{
    if (*cap >= n)
        return true;
    free(*b);
    *b = malloc((n ? n : 1) * sizeof **b);
    *cap = *b ? n : 0;
    return *b != NULL;
}

/* Whether the routes of x's transfers fit the cache; makes room (the
 * cache holds one step's routes: the last step's are not kept). */
static bool cache_ready(const tc_topo *t, tc_steps_ws *w, const tc_xfers *x)
{
    size_t links = x->n * (size_t)tc_topo_max_path(t);
    return links <= PATH_CACHE_MAX && room_u32(&w->pcache, &w->pcache_cap, links) &&
           room_u32(&w->plen, &w->plen_cap, x->n);
}

/* The end of the run of transfers from i on between the same two ranks
 * (emitted one after another: a block each of a message cut in blocks, as
 * NVLS sends a GPU's shards to its switch). They take one route, so the
 * passes route a run once. */
static size_t run_end(const tc_xfers *x, size_t i)
{
    uint32_t s = x->v[i].src, d = x->v[i].dst;
    size_t e = i + 1;
    while (e < x->n && x->v[e].src == s && x->v[e].dst == d)
        e++;
    return e;
}

/* The first pass over a step's transfers (or a part of them): the flows
 * on each link, the messages of each sender and, with a reduction cost,
 * the bytes each rank reduces; a run of transfers between the same ranks
 * routed once (its first's route kept where cached). */
static void count_pass(const tc_topo *t, const tc_sched *sc, const tc_eval_opts *o, const tc_xfers *x, tc_steps_ws *w)
{
    uint32_t *path = w->path, mp = tc_topo_max_path(t);
    bool gamma = tc_eval_gamma(t, sc) > 0;
    for (size_t i = 0, e; i < x->n; i = e) {
        const tc_xfer *tr = &x->v[i];
        e = run_end(x, i);
        if (tr->src == tr->dst)
            continue;
        uint32_t s = tc_sched_vertex(sc, t, o->rank_map, tr->src), d = tc_sched_vertex(sc, t, o->rank_map, tr->dst);
        uint64_t run = e - i;
        w->sends[tr->src] += (uint32_t)run;
        if (gamma && s != d && tr->dst < sc->req.p)
            for (size_t j = i; j < e; j++)
                if (x->v[j].reduce)
                    w->rbytes[tr->dst] += x->v[j].bytes;
        if (w->cached)
            path = w->pcache + i * mp;
        uint32_t m = tc_topo_route(t, o->routing, s, d, path);
        if (w->cached)
            w->plen[i] = m;
        if (m == TC_NO_ROUTE) {
            if (!w->cut)
                w->cut = true, w->cut_src = tr->src, w->cut_dst = tr->dst, w->cut_vs = s, w->cut_vd = d;
            continue;
        }
        for (uint32_t j = 0; j < m; j++)
            w->count[path[j]] += run;
    }
}

/* The second: each transfer's time, alpha per message its sender sends,
 * its path's latency and its bytes at its share of its busiest link; out
 * (and *bottleneck) the largest so far. A run of transfers between the
 * same ranks shares its route, latency and share; a transfer of the bytes
 * of the one before it in its run takes its time, and changes nothing
 * (where a reduction costs time, one that reduces as that one does). */
static void time_pass(const tc_topo *t, const tc_sched *sc, const tc_eval_opts *o, const tc_xfers *x, tc_steps_ws *w,
                      const double *scale, size_t n, double *out, uint32_t *bottleneck)
{
    /* An NCCL protocol (coll.h): its step latency instead of alpha, its
     * wire bytes, its rate cap. */
    bool proto = sc->proto != TC_PROTO_NONE;
    double wire = proto ? sc->wire : 1, cap = proto && sc->rate_cap_Bps > 0 ? sc->rate_cap_Bps * sc->wire : INFINITY;
    double gamma = tc_eval_gamma(t, sc);
    uint32_t *path = w->path, mp = tc_topo_max_path(t);
    for (size_t i = 0, e; i < x->n; i = e) {
        const tc_xfer *tr = &x->v[i];
        if (tr->src == tr->dst) {
            e = run_end(x, i);
            continue;
        }
        uint32_t m;
        if (w->cached) {
            path = w->pcache + i * mp;
            m = w->plen[i];
        } else {
            uint32_t s = tc_sched_vertex(sc, t, o->rank_map, tr->src), d = tc_sched_vertex(sc, t, o->rank_map, tr->dst);
            m = tc_topo_route(t, o->routing, s, d, path);
        }
        if (m == TC_NO_ROUTE) {
            e = run_end(x, i);
            continue; /* reported by the caller */
        }
        double lat = 0, share = INFINITY;
        uint32_t low = UINT32_MAX;
        for (uint32_t j = 0; j < m; j++) {
            const tc_link *l = &t->links[path[j]];
            lat += l->lat;
            double sh = l->bw / (double)w->count[path[j]];
            if (sh < share)
                share = sh, low = path[j];
        }
        double k = w->sends[tr->src];
        if (proto) {
            /* The latency is the rings' critical path (tc_steps_nccl_latency),
             * added once: a step costs its bytes. */
            lat = 0;
            k = 0;
            if (cap < share)
                share = cap, low = TC_BOTTLENECK_CAP;
        }
        for (e = i; e < x->n && x->v[e].src == tr->src && x->v[e].dst == tr->dst; e++) {
            double bytes = x->v[e].bytes;
            /* (a reduced transfer after a copy of its bytes takes longer:
             * its receiver's reductions) */
            if (e > i && bytes == x->v[e - 1].bytes && (!(gamma > 0) || x->v[e].reduce == x->v[e - 1].reduce))
                continue;
            double b = share < INFINITY ? (proto ? bytes * wire : bytes) / share : 0;
            /* its receiver's reductions of the step, one after another,
             * after the last byte: the step's last reduction ends then */
            if (gamma > 0 && m > 0 && x->v[e].reduce && tr->dst < sc->req.p)
                b += gamma * w->rbytes[tr->dst];
            for (size_t q = 0; q < n; q++) {
                double v = (o->alphas ? o->alphas[q] : t->alpha) * k + lat + b * scale[q];
                if (v > out[q]) {
                    if (q == 0)
                        *bottleneck = low;
                    out[q] = v;
                }
            }
        }
    }
}

/* Time of one step's transfers on t at n scales of their bytes (a
 * transfer's time is affine in its bytes: alpha k + latency + bytes /
 * share, so one routing serves every size of a sweep): out[i] for
 * scale[i]. *bottleneck receives the link that gives the slowest transfer
 * at the first scale its smallest share (UINT32_MAX: none). Two passes:
 * count the flows per link, then read each transfer's share; the first
 * keeps the routes for the second where a step's fit PATH_CACHE_MAX
 * links, else the second routes again (an all-to-all step on 4,096 ranks
 * has 16.7 million of them). */
static void step_times(const tc_topo *t, const tc_sched *sc, const tc_eval_opts *o, const tc_xfers *x, tc_steps_ws *w,
                       const double *scale, size_t n, double *out, uint32_t *bottleneck)
{
    w->cached = cache_ready(t, w, x);
    count_pass(t, sc, o, x, w);
    for (size_t q = 0; q < n; q++)
        out[q] = 0;
    *bottleneck = UINT32_MAX;
    time_pass(t, sc, o, x, w, scale, n, out, bottleneck);
    w->cached = false;
    memset(w->count, 0, (size_t)t->n_links * sizeof *w->count);
    for (size_t i = 0; i < x->n; i++) {
        w->sends[x->v[i].src] = 0;
        if (x->v[i].dst < w->nparts)
            w->rbytes[x->v[i].dst] = 0;
    }
}

/* An all-pairs step emitted in parts of nps senders (tc_sched_emit_part):
 * both passes part by part, in the whole step's order, so the answer is
 * the whole step's, with about w->chunk transfers held at a time. */
static tc_status step_times_parts(const tc_topo *t, const tc_sched *sc, const tc_eval_opts *o, uint32_t step,
                                  uint32_t nps, tc_steps_ws *w, const double *scale, size_t n, double *out,
                                  uint32_t *bottleneck)
{
    uint32_t p = sc->req.p;
    tc_status st = TC_OK;
    for (uint32_t lo = 0; lo < p && st == TC_OK; lo += nps)
        if ((st = tc_sched_emit_part(sc, step, lo, p - lo > nps ? lo + nps : p, &w->x)) == TC_OK)
            count_pass(t, sc, o, &w->x, w);
    for (size_t q = 0; q < n; q++)
        out[q] = 0;
    *bottleneck = UINT32_MAX;
    for (uint32_t lo = 0; lo < p && st == TC_OK; lo += nps)
        if ((st = tc_sched_emit_part(sc, step, lo, p - lo > nps ? lo + nps : p, &w->x)) == TC_OK)
            time_pass(t, sc, o, &w->x, w, scale, n, out, bottleneck);
    memset(w->count, 0, (size_t)t->n_links * sizeof *w->count);
    memset(w->sends, 0, (size_t)w->nparts * sizeof *w->sends);
    memset(w->rbytes, 0, (size_t)w->nparts * sizeof *w->rbytes);
    return st;
}

/* An nccl-* schedule's latency: a chunk crosses one hop per step and the
 * next step waits for it, so the steps of one loop of a channel's ring
 * chain up; NCCL's protocols forward a chunk as its lines or slices arrive,
 * so the loops after the first run behind it in a pipeline and add no
 * latency of their own. The latency is the largest sum of hop latencies
 * over the nsteps_loop consecutive hops of one loop (2(R-1) for all-reduce,
 * R-1 for reduce-scatter and all-gather) of any channel's ring, a hop's
 * latency being the protocol's step latency for its kind (inside a node or
 * between nodes) or its path's, whichever is larger; plus the base latency
 * once. This is NCCL's own latency model (src/graph/tuning.cc:241-248:
 * (nsteps - nInterSteps) intra + nInterSteps inter) with the hops of the
 * rings as placed. Step 0 holds every channel's ring as transfers
 * k R .. k R + R - 1, position i to i + 1. */
/* One hop of an nccl-* schedule from rank a to b: the protocol's step
 * latency for its kind or its path's, whichever is larger. */
static double nccl_hop(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t a,
                       uint32_t b)
{
    a = tc_sched_vertex(s, t, o->rank_map, a);
    b = tc_sched_vertex(s, t, o->rank_map, b);
    uint32_t n = tc_topo_route(t, o->routing, a, b, w->path);
    if (n == TC_NO_ROUTE)
        n = 0; /* reported by the phases */
    double pl = 0;
    for (uint32_t j = 0; j < n; j++)
        pl += t->links[w->path[j]].lat;
    bool local = t->node_size > 1 && tc_topo_same_node(t, a, b);
    return fmax(pl, local ? s->lat_intra_s : s->lat_inter_s);
}

/* lat_tree: the pairs are the tree's (child, parent) edges; its latency is
 * its slowest root-to-leaf path, up and down, after base_s. */
static tc_status tree_latency(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                              double *lat_s, tc_err *err)
{
    uint32_t R = s->req.p, *par = malloc((size_t)R * sizeof *par);
    double *hop = malloc((size_t)R * sizeof *hop), best = 0;
    if (!par || !hop) {
        free(par), free(hop);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t r = 0; r < R; r++)
        par[r] = UINT32_MAX, hop[r] = 0;
    for (uint32_t i = 0; i < s->nlat_pairs; i++) {
        uint32_t c = s->lat_pairs[2 * i], p = s->lat_pairs[2 * i + 1];
        if (c < R && p < R) {
            par[c] = p;
            hop[c] = nccl_hop(w, t, s, o, c, p);
        }
    }
    for (uint32_t r = 0; r < R; r++) {
        double sum = 0;
        uint32_t k = 0;
        for (uint32_t g = r; par[g] != UINT32_MAX && k < R; g = par[g], k++)
            sum += hop[g];
        best = fmax(best, sum);
    }
    free(par), free(hop);
    *lat_s = s->base_s + 2 * best;
    return TC_OK;
}

tc_status tc_steps_nccl_latency(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                                double *lat_s, tc_err *err)
{
    uint32_t ng = 0, sz = 0;
    const uint32_t *mem = tc_sched_group_members(s, &ng, &sz);
    if (mem) {
        /* sub-groups: the slowest group's latency, its inner schedule on
         * its ranks' endpoints */
        const tc_sched *in = tc_sched_group_inner(s);
        uint32_t *cm = malloc((size_t)sz * sizeof *cm);
        if (!cm)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        tc_status st = TC_OK;
        *lat_s = 0;
        for (uint32_t gi = 0; gi < ng && st == TC_OK; gi++) {
            for (uint32_t i = 0; i < sz; i++) {
                uint32_t r = mem[(size_t)gi * sz + i];
                cm[i] = o->rank_map ? o->rank_map[r] : r;
            }
            tc_eval_opts oo = *o;
            oo.rank_map = cm;
            double l = 0;
            if ((st = tc_steps_nccl_latency(w, t, in, &oo, &l, err)) == TC_OK && l > *lat_s)
                *lat_s = l;
        }
        free(cm);
        return st;
    }
    *lat_s = s->base_s;
    if (s->nsteps == 0)
        return TC_OK;
    if (s->lat_tree)
        return tree_latency(w, t, s, o, lat_s, err);
    if (s->lat_pairs) {
        /* a tree: its longest path up, then down; a chain: its hops once */
        double sum = 0;
        for (uint32_t i = 0; i < s->nlat_pairs; i++)
            sum += nccl_hop(w, t, s, o, s->lat_pairs[2 * i], s->lat_pairs[2 * i + 1]);
        *lat_s += (s->lat_once ? 1 : 2) * sum;
        return TC_OK;
    }
    if (tc_sched_emit(s, 0, &w->x))
        return w->x.oom ? tc_fail(err, TC_EINTERNAL, "out of memory")
                        : tc_fail(err, TC_EINTERNAL, "schedule %s: emitting step 0 failed", tc_algo_name(s->algo));
    uint32_t R = s->req.p, C = s->channels;
    if (w->x.n != (size_t)C * R)
        return tc_fail(err, TC_EINTERNAL, "schedule %s: step 0 has %zu transfers, not %u channels of %u", tc_algo_name(s->algo),
                       w->x.n, C, R);
    double *h = malloc(2 * (size_t)R * sizeof *h);
    if (!h)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint64_t m = s->req.op == TC_OP_ALLREDUCE ? 2 * (uint64_t)(R - 1) : R - 1, full = m / R, rest = m % R;
    double best = 0;
    for (uint32_t k = 0; k < C; k++) {
        double ring = 0;
        for (uint32_t i = 0; i < R; i++) {
            const tc_xfer *tr = &w->x.v[(size_t)k * R + i];
            h[i] = h[i + R] = nccl_hop(w, t, s, o, tr->src, tr->dst);
            ring += h[i];
        }
        /* the best window of rest consecutive hops, after full turns */
        double win = 0;
        for (uint64_t i = 0; i < rest; i++)
            win += h[i];
        double top = win;
        for (uint32_t i = 1; i < R && rest; i++) {
            win += h[i + rest - 1] - h[i - 1];
            if (win > top)
                top = win;
        }
        best = fmax(best, (double)full * ring + top);
    }
    free(h);
    *lat_s += best;
    return TC_OK;
}

tc_status tc_steps_phase_sweep(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                               uint32_t phase, const double *scale, size_t n, double *out, uint32_t *bottleneck,
                               tc_err *err)
{
    const tc_phase *ph = &s->phases[phase];
    uint32_t b, nps = tc_sched_part_senders(s, ph, w->chunk);
    if (ph->blk_xfers > w->x.cap && nps >= s->req.p) {
        /* the largest counted step of the schedule, at once */
        uint64_t most = 0;
        for (uint32_t i = 0; i < s->nphases; i++)
            most = s->phases[i].blk_xfers > most ? s->phases[i].blk_xfers : most;
        if (!tc_xfers_reserve(&w->x, most))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (nps < s->req.p ? step_times_parts(t, s, o, ph->first_step, nps, w, scale, n, out, bottleneck ? bottleneck : &b)
                       : tc_sched_emit(s, ph->first_step, &w->x))
        return w->x.oom ? tc_fail(err, TC_EINTERNAL, "out of memory")
                        : tc_fail(err, TC_EINTERNAL, "schedule %s: emitting step %u failed", tc_algo_name(s->algo),
                                  ph->first_step);
    if (nps >= s->req.p)
        step_times(t, s, o, &w->x, w, scale, n, out, bottleneck ? bottleneck : &b);
    if (w->cut)
        return tc_eval_cut_off(t, s, o, w->cut_src, w->cut_dst, w->cut_vs, w->cut_vd, err);
    return TC_OK;
}

tc_status tc_steps_phase(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t phase,
                         double *time_s, uint32_t *bottleneck, tc_err *err)
{
    const double one = 1;
    return tc_steps_phase_sweep(w, t, s, o, phase, &one, 1, time_s, bottleneck, err);
}

static uint32_t nested_end(const tc_sched *s, uint32_t a)
{
    uint32_t b = a;
    int sign = 0;
    if (!s->phases[a].repeat)
        return a;
    while (b + 1 < s->nphases && s->phases[b + 1].repeat && s->phases[b + 1].nest &&
           (sign == 0 || s->phases[b + 1].nest == sign))
        sign = s->phases[++b].nest;
    return b;
}

/* A nested run's sum. Along the run a step's time is monotone: each phase
 * holds the transfers of the one before and more (or a part of them),
 * so every transfer's link counts, its sender's messages and the largest
 * time only grow (or only shrink), every operation of time_pass being
 * monotone, rounding included. Where phases lo and hi take the same time
 * at every size, every phase between them takes it too. */
typedef struct nest_sum {
    const tc_sched *s;
    tc_phase_time_fn fn;
    void *ctx;
    size_t n;
    double *times;
} nest_sum;

static void nest_add(const nest_sum *ns, uint32_t i, const double *t)
{
    for (size_t k = 0; k < ns->n; k++)
        ns->times[k] += ns->s->phases[i].repeat * t[k];
}

/* Adds phases lo .. hi - 1, given the times of lo (tl) and hi (th); each
 * level of the bisection keeps its phase's times in scratch, n a level. */
static tc_status nest_span(const nest_sum *ns, uint32_t lo, uint32_t hi, const double *tl, const double *th,
                           double *scratch, tc_err *err)
{
    bool same = true;
    for (size_t k = 0; k < ns->n && same; k++)
        same = tl[k] == th[k];
    if (same || hi - lo == 1) {
        for (uint32_t i = lo; i < hi; i++)
            nest_add(ns, i, tl);
        return TC_OK;
    }
    uint32_t m = lo + (hi - lo) / 2;
    tc_status st = ns->fn(ns->ctx, m, scratch, err);
    if (st == TC_OK)
        st = nest_span(ns, lo, m, tl, scratch, scratch + ns->n, err);
    if (st == TC_OK)
        st = nest_span(ns, m, hi, scratch, th, scratch + ns->n, err);
    return st;
}

/* Phases a .. b, a nested run (or a alone), with buf of 36 n doubles: the
 * two ends, then one level a halving (at most 33 for 32-bit phases). */
static tc_status nested_run(const nest_sum *ns, uint32_t a, uint32_t b, double *buf, tc_err *err)
{
    size_t n = ns->n;
    double *ta = buf, *tb = buf + n;
    tc_status st = ns->fn(ns->ctx, a, ta, err);
    if (st == TC_OK && b > a && (st = ns->fn(ns->ctx, b, tb, err)) == TC_OK)
        st = nest_span(ns, a, b, ta, tb, buf + 2 * n, err);
    if (st == TC_OK)
        nest_add(ns, b, b > a ? tb : ta);
    /* a refusal (a cut-off pair) as the phase-by-phase sum gives it: from
     * the first phase that has one */
    for (uint32_t i = a; st != TC_OK && b > a && i <= b; i++)
        if (ns->fn(ns->ctx, i, buf, err) != TC_OK)
            break;
    return st;
}

tc_status tc_steps_sum_phases(const tc_sched *s, bool nested, tc_phase_time_fn fn, void *ctx, size_t n,
                              double *times, tc_err *err)
{
    double *buf = tc_calloc(36 * (n ? n : 1), sizeof *buf);
    if (!buf)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    nest_sum ns = {s, fn, ctx, n, times};
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < s->nphases && st == TC_OK; i++) {
        if (!s->phases[i].repeat)
            continue;
        uint32_t e = nested ? nested_end(s, i) : i;
        st = nested_run(&ns, i, e, buf, err);
        i = e;
    }
    free(buf);
    return st;
}

/* Pipelined lanes (tc_sched.pipe_hops): pipeline k's chunk c crosses hop
 * h at step c + h, and a step emits each pipeline's active hops lo .. hi
 * in order (nccl-ring's broadcast and reduce). A step's transfers share
 * the links as in lock step (pipe_step); chunk c's crossing of hop h then
 * starts once it has crossed hop h - 1 and chunk c - 1 has crossed hop h,
 * and takes its bytes at its share: the pipeline's own recurrence,
 * F(c, h) = max(F(c, h - 1), F(c - 1, h)) + tau (tc_steps_pipeline),
 * where lock step would charge every step its slowest hop of any lane. */

/* Every hop's route, pipeline by pipeline (k H + h), kept for the whole
 * pipeline: a hop links the same two ranks at every step. */
typedef struct pipe_routes {
    uint32_t *links, *len, mp; /* len UINT32_MAX: not routed yet */
} pipe_routes;

/* Step `step` of a pipelined schedule: each transfer's time at its share
 * (tau, unscaled), the links shared as in lock step among the step's
 * transfers. The transfers come lane by lane, hops lo .. hi: transfer i =
 * k na + q (na = hi - lo + 1) is pipeline k's hop lo + q, index k H + lo +
 * q, which the loops walk without a division per transfer. */
static tc_status pipe_step(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t step,
                           uint32_t lo, uint32_t hi, pipe_routes *pr, double **taup, size_t *tcap, tc_err *err)
{
    if (tc_sched_emit(s, step, &w->x) != TC_OK)
        return w->x.oom ? tc_fail(err, TC_EINTERNAL, "out of memory")
                        : tc_fail(err, TC_EINTERNAL, "schedule %s: emitting step %u failed", tc_algo_name(s->algo),
                                  step);
    const tc_xfers *x = &w->x;
    uint32_t K = s->pipe_lanes, H = s->pipe_hops, na = hi - lo + 1, nl = s->lanes > 1 ? s->lanes : 1;
    if (x->n != (size_t)K * na)
        return tc_fail(err, TC_EINTERNAL, "schedule %s: step %u has %zu transfers, its pipeline %u",
                       tc_algo_name(s->algo), step, x->n, K * na);
    if (x->n > *tcap) {
        free(*taup);
        *tcap = 0;
        if (!(*taup = tc_calloc(x->n, sizeof **taup)))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        *tcap = x->n;
    }
    double *tau = *taup;
    /* the routes (each hop's once) and the flows on each link */
    for (size_t i = 0, k = 0, q = 0, at = lo; i < x->n; i++, at++, q++) {
        if (q == na)
            q = 0, k++, at = k * H + lo;
        const tc_xfer *tr = &x->v[i];
        if (tr->lane != k % nl)
            return tc_fail(err, TC_EINTERNAL, "schedule %s: step %u's transfer %zu is not its pipeline's",
                           tc_algo_name(s->algo), step, i);
        uint32_t *path = pr->links + at * pr->mp;
        if (pr->len[at] == UINT32_MAX) {
            uint32_t a = tc_sched_vertex(s, t, o->rank_map, tr->src), b = tc_sched_vertex(s, t, o->rank_map, tr->dst);
            pr->len[at] = tr->src == tr->dst ? 0 : tc_topo_route(t, o->routing, a, b, path);
            if (pr->len[at] == TC_NO_ROUTE && !w->cut)
                w->cut = true, w->cut_src = tr->src, w->cut_dst = tr->dst, w->cut_vs = a, w->cut_vd = b;
        }
        for (uint32_t j = 0; pr->len[at] != TC_NO_ROUTE && j < pr->len[at]; j++)
            w->count[path[j]]++;
    }
    double wire = s->proto ? s->wire : 1, cap = s->proto && s->rate_cap_Bps > 0 ? s->rate_cap_Bps * wire : INFINITY;
    for (size_t i = 0, k = 0, q = 0, at = lo; i < x->n; i++, at++, q++) {
        if (q == na)
            q = 0, k++, at = k * H + lo;
        uint32_t m = pr->len[at], *path = pr->links + at * pr->mp;
        double share = m ? cap : INFINITY;
        for (uint32_t j = 0; m != TC_NO_ROUTE && j < m; j++) {
            double v = t->links[path[j]].bw / (double)w->count[path[j]];
            share = v < share ? v : share; /* inline: fmin is a call here */
        }
        tau[i] = share < INFINITY ? x->v[i].bytes * wire / share : 0;
    }
    for (size_t k = 0; k < K; k++)
        for (size_t at = k * H + lo; at <= k * H + hi; at++)
            for (uint32_t j = 0; pr->len[at] != TC_NO_ROUTE && j < pr->len[at]; j++)
                w->count[pr->links[at * pr->mp + j]] = 0;
    if (w->cut)
        return tc_eval_cut_off(t, s, o, w->cut_src, w->cut_dst, w->cut_vs, w->cut_vd, err);
    return TC_OK;
}

/* The steady run's test (tc_steps_pipeline): every hop's growth fixed
 * from here on. */
static bool pipe_settled(const double *A, const double *D, const double *tau, const double *scale, uint32_t K,
                         uint32_t H, size_t n)
{
    for (uint32_t k = 0; k < K; k++)
        for (uint32_t h = 0; h < H; h++)
            for (size_t q = 0; q < n; q++) {
                size_t at = ((size_t)k * H + h) * n + q;
                /* to within rounding: 1e-12 relative, or a few ulps of
                 * the finish itself (a long chain's finishes are many
                 * chunk times, whose increments round at their scale) */
                double f = A[at], d = D[at], tk = tau[(size_t)k * H + h] * scale[q];
                double e = fmax(1e-12 * fmax(fabs(d), tk), 8 * DBL_EPSILON * fabs(f));
                double fu = h ? A[at - n] : 0, du = h ? D[at - n] : 0;
                bool own = f >= fu && fabs(d - tk) <= e && du <= d + e, up = fu > f && fabs(d - du) <= e;
                if (!own && !up)
                    return false;
            }
    return true;
}

tc_status tc_steps_pipeline(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                            const double *scale, size_t n, double *times, tc_err *err)
{
    uint32_t K = s->pipe_lanes ? s->pipe_lanes : 1, H = s->pipe_hops, L = s->pipe_chunks;
    if (!H || !L)
        return TC_OK;
    pipe_routes pr = {NULL, NULL, tc_topo_max_path(t)};
    size_t KH = (size_t)K * H, nA = KH * n;
    /* A: per pipeline, hop and size, the finish of the latest chunk there;
     * D: the last step's increments (the steady run's shortcut) */
    double *A = tc_calloc(2 * nA, sizeof *A), *D = A ? A + nA : NULL, *tau = NULL;
    double *load = tc_calloc(t->n_links, sizeof *load); /* bytes on each link, all chunks */
    pr.links = tc_calloc(KH * pr.mp, sizeof *pr.links);
    pr.len = tc_calloc(KH, sizeof *pr.len);
    size_t tcap = 0;
    tc_status st = A && load && pr.links && pr.len ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    for (size_t i = 0; st == TC_OK && i < KH; i++)
        pr.len[i] = UINT32_MAX;
    double wire = s->proto ? s->wire : 1;
    for (uint32_t ph = 0; ph < s->nphases && st == TC_OK; ph++) {
        const tc_phase *P = &s->phases[ph];
        for (uint64_t r = 0; r < P->repeat && st == TC_OK; r++) {
            uint32_t step = P->first_step + (uint32_t)r;
            uint32_t lo = step + 1 >= L ? step + 1 - L : 0, hi = step < H - 1 ? step : H - 1;
            /* the steady run's steps share one set of times */
            if (r == 0 && (st = pipe_step(w, t, s, o, step, lo, hi, &pr, &tau, &tcap, err)) != TC_OK)
                break;
            /* the pipelines' transfers in order, each its hops lo .. hi:
             * from the last hop down, so hop h - 1 still holds the
             * step before's chunk */
            for (uint32_t k = 0; k < K; k++)
                for (uint32_t h = hi + 1; h-- > lo;) {
                    double tk = tau[(size_t)k * (hi - lo + 1) + (h - lo)];
                    double *a = A + ((size_t)k * H + h) * n, *b = h ? a - n : NULL;
                    for (size_t q = 0; q < n; q++) {
                        double u = b && b[q] > a[q] ? b[q] : a[q], v = u + tk * scale[q];
                        D[(size_t)(a - A) + q] = v - a[q];
                        a[q] = v;
                    }
                }
            /* In a steady run every hop is active at constant times tau_h.
             * Where hop h's own last finish binds its next (F(h) >= F(h -
             * 1)) and it grew by tau_h, no less than hop h - 1's growth,
             * the gap only widens: it grows by tau_h at every later step.
             * Where hop h - 1's binds and both grew alike, the gap stays.
             * Once that holds at every hop (hop 0 always binds on its
             * own), every later step adds the same: the rest of the run
             * is that many more (to within rounding, 1e-12). */
            if (P->repeat > 2 && r >= 1 && r + 1 < P->repeat && lo == 0 && hi == H - 1 &&
                pipe_settled(A, D, tau, scale, K, H, n)) {
                double more = (double)(P->repeat - 1 - r);
                for (size_t i = 0; i < nA; i++)
                    A[i] += more * D[i];
                break;
            }
        }
    }
    /* No link carries more than its bandwidth: the pipelines' steps
     * overlap in time where lock step kept them apart, and a chain that
     * crosses one link at two hops must still pass both crossings' bytes
     * through it (every chunk crosses every hop once). */
    for (size_t i = 0; st == TC_OK && i < KH; i++)
        for (uint32_t j = 0; pr.len[i] != UINT32_MAX && pr.len[i] != TC_NO_ROUTE && j < pr.len[i]; j++)
            load[pr.links[i * pr.mp + j]] += (double)L * s->blk_bytes * wire;
    double bound = 0;
    for (uint32_t l = 0; st == TC_OK && l < t->n_links; l++)
        if (load[l] > 0)
            bound = fmax(bound, load[l] / t->links[l].bw);
    for (size_t q = 0; q < n && st == TC_OK; q++) {
        double m = bound * scale[q];
        for (uint32_t k = 0; k < K; k++)
            m = fmax(m, A[((size_t)k * H + H - 1) * n + q]);
        times[q] += m;
    }
    free(A);
    free(load);
    free(tau);
    free(pr.links);
    free(pr.len);
    return st;
}

typedef struct steps_sweep_ctx {
    tc_steps_ws *w;
    const tc_topo *t;
    const tc_sched *s;
    const tc_eval_opts *o;
    const double *scale;
    size_t n;
} steps_sweep_ctx;

static tc_status steps_phase_fn(void *ctx, uint32_t i, double *out, tc_err *err)
{
    steps_sweep_ctx *c = ctx;
    return tc_steps_phase_sweep(c->w, c->t, c->s, c->o, i, c->scale, c->n, out, NULL, err);
}

tc_status tc_eval_steps_sweep(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, const double *sizes,
                              size_t n, double *times, tc_err *err)
{
    tc_steps_ws *w = tc_steps_ws_new(t, tc_sched_parts(s));
    double *scale = tc_calloc(n, sizeof *scale);
    tc_status st = w && scale ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_eval_opts oo = *o;
    oo.routing = tc_eval_routing(TC_MODE_STEPS, t, o->routing);
    double lat = 0;
    if (st == TC_OK && s->proto)
        st = tc_steps_nccl_latency(w, t, s, &oo, &lat, err);
    for (size_t k = 0; k < n && st == TC_OK; k++) {
        scale[k] = tc_sched_scale(s, sizes[k]);
        times[k] = lat; /* an NCCL protocol's latency (0 for the others) */
    }
    steps_sweep_ctx c = {w, t, s, &oo, scale, n};
    if (st == TC_OK)
        st = s->pipe_hops ? tc_steps_pipeline(w, t, s, &oo, scale, n, times, err)
                          : tc_steps_sum_phases(s, true, steps_phase_fn, &c, n, times, err);
    tc_steps_ws_free(w);
    free(scale);
    return st;
}

tc_status tc_eval_steps(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{
    return tc_eval_steps_sweep(t, s, o, &s->req.bytes, 1, time_s, err);
}
