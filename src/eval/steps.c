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
 * Data layout for the hot loop: the paths of one step are stored flat
 * (path_links, path_off) and the per-link flow counts in one array indexed
 * by link ID, reset only where touched.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/eval.h"

typedef struct steps_ws {
    uint32_t *count;        /* flows per link, n_links */
    uint32_t *sends;        /* messages per sending rank in the current step, p */
    uint32_t *path_links;   /* flat paths of the current step */
    size_t *path_off;       /* transfer i's path is path_links[path_off[i]..path_off[i+1]) */
    size_t cap_links, cap_xfers;
} steps_ws;

static void ws_free(steps_ws *w)
{
    free(w->count);
    free(w->sends);
    free(w->path_links);
    free(w->path_off);
}

static bool ws_reserve(steps_ws *w, size_t nx, size_t maxpath)
{
    if (nx + 1 > w->cap_xfers) {
        size_t *v = realloc(w->path_off, (nx + 1) * sizeof *v);
        if (!v)
            return false;
        w->path_off = v;
        w->cap_xfers = nx + 1;
    }
    size_t need = nx * maxpath;
    if (need > w->cap_links) {
        uint32_t *v = realloc(w->path_links, (need ? need : 1) * sizeof *v);
        if (!v)
            return false;
        w->path_links = v;
        w->cap_links = need;
    }
    return true;
}

/* Time of one step's transfers on t. */
static double step_time(const tc_topo *t, const tc_eval_opts *o, const tc_xfers *x, steps_ws *w)
{
    uint32_t maxpath = tc_topo_max_path(t);
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *tr = &x->v[i];
        w->path_off[i] = k;
        if (tr->src == tr->dst)
            continue;
        uint32_t s = o->rank_map ? o->rank_map[tr->src] : tr->src;
        uint32_t d = o->rank_map ? o->rank_map[tr->dst] : tr->dst;
        w->sends[tr->src]++;
        uint32_t n = tc_topo_route(t, o->routing, s, d, w->path_links + k);
        for (uint32_t j = 0; j < n; j++)
            w->count[w->path_links[k + j]]++;
        k += n;
        (void)maxpath;
    }
    w->path_off[x->n] = k;
    double worst = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tc_xfer *tr = &x->v[i];
        if (tr->src == tr->dst)
            continue;
        double lat = 0, share = INFINITY;
        for (size_t j = w->path_off[i]; j < w->path_off[i + 1]; j++) {
            const tc_link *l = &t->links[w->path_links[j]];
            lat += l->lat;
            double sh = l->bw / w->count[w->path_links[j]];
            if (sh < share)
                share = sh;
        }
        double tt = t->alpha * w->sends[tr->src] + lat + (share < INFINITY ? tr->bytes / share : 0);
        if (tt > worst)
            worst = tt;
    }
    for (size_t j = 0; j < k; j++)
        w->count[w->path_links[j]] = 0;
    for (size_t i = 0; i < x->n; i++)
        w->sends[x->v[i].src] = 0;
    return worst;
}

tc_status tc_eval_steps(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{
    steps_ws w;
    memset(&w, 0, sizeof w);
    w.count = tc_calloc(t->n_links, sizeof *w.count);
    w.sends = tc_calloc(s->req.p, sizeof *w.sends);
    tc_xfers x;
    tc_xfers_init(&x, false);
    tc_status st = w.count && w.sends ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    double total = 0;
    uint32_t maxpath = tc_topo_max_path(t);
    for (uint32_t i = 0; i < s->nphases && st == TC_OK; i++) {
        const tc_phase *ph = &s->phases[i];
        st = tc_sched_emit(s, ph->first_step, &x);
        if (st) {
            tc_fail(err, TC_EINTERNAL, "schedule %s: emitting step %u failed", tc_algo_name(s->algo), ph->first_step);
            break;
        }
        if (!ws_reserve(&w, x.n, maxpath)) {
            st = tc_fail(err, TC_EINTERNAL, "out of memory for %zu transfers", x.n);
            break;
        }
        total += ph->repeat * step_time(t, o, &x, &w);
    }
    ws_free(&w);
    tc_xfers_free(&x);
    if (st == TC_OK)
        *time_s = total;
    return st;
}
