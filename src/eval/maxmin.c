/*
 * maxmin.c - max-min fair rates by progressive filling, recomputed only
 * over the components a change touches (flow_int.h states the model).
 *
 * Progressive filling with a heap of links keyed by their fair share
 * (capacity left / unfrozen weight): the smallest share is the next level;
 * the link's unfrozen flows freeze at it, which removes their load from
 * their other links. Freezing a flow at the current level x on a link whose
 * share s >= x gives (c - x w) / (n - w) >= s, so shares only rise (in exact
 * arithmetic; rounded, they may dip a few ulps: MM_DEPART_TOL) and a heap
 * with lazily refreshed keys is exact: a popped key that is stale is pushed
 * again with its current value.
 *
 * Large components are re-solved by level (flow_int.h): the run of
 * progressive filling on the changed network equals the old run below x0,
 * the lowest level a change can affect. A departed flow f of rate r_f kept
 * every link on its path unfilled below r_f, and those links now carry less,
 * so none of them fills below r_f; a link where a flow arrived and whose
 * flows now weigh W in total cannot fill below cap / W (every flow puts at
 * most the level times its weight on it), and a link that filled at level L
 * in the old run had L >= cap / W_old >= cap / W. Below x0 = the least of
 * these bounds nothing fills differently, so flows frozen below x0 keep their
 * rates (x0 is taken a hair below the bounds, MM_DEPART_TOL); the rest
 * (every flow frozen at x0 or above: the groups of the bottleneck links with
 * level >= x0, plus the new flows) are filled again from level 0 on links
 * whose capacity is what the kept flows leave (the link's load minus the old
 * load of the refilled flows), which reaches the same state at x0 and
 * continues as the new run. Any x0 below the true one is exact too, it only
 * refills more flows.
 *
 * Data layout: a flow is a record of fixed size indexed by its id, its
 * incidences (link, place in the link's list) inside it, so adding and
 * removing a flow never allocates once the records have grown and a flow
 * on up to six links is one cache line; weights are kept apart and only for
 * flows given some. A link is half a cache line: its list of (flow,
 * incidence) entries (inline while it holds one), its capacity and its
 * marks; the scratch of solves over several flows is kept apart. The
 * entry's position is stored in the flow, for O(1) removal.
 *
 * Most components in a simulation are one flow alone on its links (a ring:
 * every flow, all the time): a dirty link holding one flow whose every link
 * holds only it is solved as such without the breadth-first walk, with
 * the same result and in the same order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/flow_int.h"

/* The margin below a departure's bound on x0 (relative), far above
 * rounding: refilling a few more flows is always exact, keeping one too
 * many is not. Computed shares need not rise: when a link fills at x and
 * its flows freeze, a second link of the departed flow's path whose exact
 * share is x too can compute (c - x w) / (n - w) a few ulps below x, and
 * freeze its flows at that lower level. Compared exactly with x0 = x, that
 * link's flows would keep their rates although the departure frees capacity
 * on it (two links of 12.5 with five flows each, four on both: 2.5 kept
 * where 3.125 is right; test_maxmin.c).
 *
 * Arrivals need none. A group kept because its level g lies a few ulps
 * above the computed cap / W (W is a running sum, rounded) would, in the
 * new run, freeze where that link fills, and the link cannot fill below the
 * exact cap / W: the kept rate is off by those ulps, not more. A departure
 * is different: there the flows kept should have risen by the freed share. */
#define MM_DEPART_TOL 1e-9

/* Flow f's weight on its k-th incidence. */
static inline double inc_weight(const tc_mm *m, const tc_mm_flow *F, uint32_t f, uint32_t k)
{
    return F->unit ? 1.0 : m->inc_w[(size_t)f * m->stride + k];
}

/* Link L's entries. */
static inline tc_mm_ent *ents(tc_mm_link *L)
{
    return L->cap == 1 ? &L->e.one : L->e.v;
}

/* bytes of memory aligned to a cache line (NULL when out of memory). */
static void *alloc_lines(size_t bytes)
{
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes ? bytes : 64);
}

tc_status tc_mm_init(tc_mm *m, uint32_t nlinks, const double *cap, uint32_t stride, double rate_cap)
{
    memset(m, 0, sizeof *m);
    m->nlinks = nlinks;
    m->stride = stride ? stride : 1;
    m->rate_cap = rate_cap > 0 ? rate_cap : INFINITY;
    size_t rec = sizeof(tc_mm_flow) + (size_t)m->stride * sizeof(tc_mm_inc);
    m->frec = rec <= 512 ? (rec + 63) & ~(size_t)63 : (rec + 15) & ~(size_t)15;
    size_t nl = nlinks ? nlinks : 1;
    m->lists = alloc_lines(nl * sizeof *m->lists);
    m->scr = malloc(nl * sizeof *m->scr);
    m->occ = malloc(nl * sizeof *m->occ);
    m->x0 = INFINITY;
    if (!m->lists || !m->scr || !m->occ) {
        m->nlinks = 0; /* the lists are not initialised: none to free */
        tc_mm_free(m);
        return TC_EINTERNAL;
    }
    memset(m->lists, 0, nl * sizeof *m->lists);
    for (size_t l = 0; l < nl; l++)
        m->occ[l] = (tc_mm_occ){0, UINT32_MAX};
    for (uint32_t l = 0; l < nlinks; l++) {
        tc_mm_link *L = &m->lists[l];
        L->cap = 1;
        L->bw = cap[l];
    }
    return TC_OK;
}

void tc_mm_free(tc_mm *m)
{
    if (m->lists)
        for (uint32_t l = 0; l < m->nlinks; l++)
            if (m->lists[l].cap > 1)
                free(m->lists[l].e.v);
    free(m->lists);
    free(m->scr);
    free(m->occ);
    free(m->dirty);
    free(m->flows);
    free(m->inc_w);
    free(m->comp_links);
    free(m->comp_flows);
    free(m->heap_key);
    free(m->heap_link);
    free(m->changed);
    if (m->groups)
        for (uint32_t g = 0; g <= m->nlinks; g++)
            free(m->groups[g].v);
    free(m->groups);
    free(m->glevel);
    free(m->gbits);
    free(m->load);
    free(m->wtot);
    free(m->bneck);
    free(m->blink);
    free(m->gpos);
    free(m->fresh);
    free(m->trate);
    free(m->tbn);
    free(m->lstat);
    free(m->cand);
    memset(m, 0, sizeof *m);
}

/* Reallocates *p to bytes; false (and *p unchanged) when out of memory. */
static bool resize(void **p, size_t bytes)
{
    void *v = realloc(*p, bytes);
    if (v)
        *p = v;
    return v != NULL;
}

static bool reserve_flows(tc_mm *m, uint32_t id)
{
    if (id < m->fcap)
        return true;
    size_t c = m->fcap ? m->fcap : 1024;
    while (c <= id)
        c *= 2;
    size_t old = m->fcap, s = m->stride;
    unsigned char *fl = alloc_lines(c * m->frec);
    if (!fl)
        return false;
    if (old)
        memcpy(fl, m->flows, old * m->frec);
    memset(fl + old * m->frec, 0, (c - old) * m->frec);
    free(m->flows);
    m->flows = fl;
    if (m->inc_w) {
        double *iw = realloc(m->inc_w, c * s * sizeof *iw);
        if (!iw)
            return false;
        m->inc_w = iw;
    }
    if (m->blink) {
        uint32_t *bl = realloc(m->blink, c * sizeof *bl);
        if (!bl)
            return false;
        for (size_t i = old; i < c; i++)
            bl[i] = UINT32_MAX;
        m->blink = bl;
    }
    if ((m->trate || m->tbn) &&
        !(resize((void **)&m->trate, c * sizeof *m->trate) && resize((void **)&m->tbn, c * sizeof *m->tbn)))
        return false;
    if (m->track) {
        if (!resize((void **)&m->bneck, c * sizeof *m->bneck) || !resize((void **)&m->gpos, c * sizeof *m->gpos))
            return false;
        memset(m->bneck + old, 0xff, (c - old) * sizeof *m->bneck);
    }
    m->fcap = (uint32_t)c;
    return true;
}

/* Link l's flow set changed: its mark is epoch + 1 until the next solve. */
static bool mark_dirty(tc_mm *m, uint32_t l)
{
    tc_mm_link *L = &m->lists[l];
    if (L->mark == m->epoch + 1)
        return true;
    if (m->ndirty == m->dirty_cap) {
        size_t cap = m->dirty_cap;
        if (!tc_grow((void **)&m->dirty, &cap, (size_t)m->ndirty + 1, sizeof *m->dirty))
            return false;
        m->dirty_cap = (uint32_t)cap;
    }
    L->mark = m->epoch + 1;
    m->dirty[m->ndirty++] = l;
    return true;
}

/* ---- bottleneck groups (only while tracking levels) ---- */

/* glevel[g] is at least the rate of every flow of group g (-INFINITY for
 * an empty one): a group is filled again when glevel >= x0, so no flow at
 * x0 or above is missed even where a group holds flows frozen in different
 * solves at levels equal only up to rounding. */
static void group_leave(tc_mm *m, uint32_t f)
{
    uint32_t g = m->bneck[f];
    if (g == UINT32_MAX)
        return;
    tc_mm_group *G = &m->groups[g];
    uint32_t last = G->v[--G->n].flow, pos = m->gpos[f];
    G->v[pos].flow = last;
    m->gpos[last] = pos;
    m->bneck[f] = UINT32_MAX;
    if (G->n == 0) {
        m->glevel[g] = -INFINITY;
        m->gbits[g >> 6] &= ~(1ull << (g & 63));
    }
}

/* Before every flow of group g is given a new rate: its old levels no longer
 * bound anything. */
static void group_reset(tc_mm *m, uint32_t g)
{
    if (m->track)
        m->glevel[g] = -INFINITY;
}

static bool group_join(tc_mm *m, uint32_t f, uint32_t g, double level)
{
    if (m->bneck[f] == g) {
        m->glevel[g] = fmax(m->glevel[g], level);
        return true;
    }
    group_leave(m, f);
    tc_mm_group *G = &m->groups[g];
    if (G->n == G->cap) {
        size_t c = G->cap;
        if (!tc_grow((void **)&G->v, &c, (size_t)G->n + 1, sizeof *G->v))
            return false;
        G->cap = (uint32_t)c;
    }
    m->gpos[f] = G->n;
    if (G->n == 0)
        m->gbits[g >> 6] |= 1ull << (g & 63);
    G->v[G->n++].flow = f;
    m->bneck[f] = g;
    m->glevel[g] = fmax(m->glevel[g], level);
    return true;
}

/* The weights' storage, allocated with the first flow that has weights w
 * (NULL: none needed); false when out of memory. */
static bool weights_ready(tc_mm *m, const double *w)
{
    return !w || m->inc_w || (m->inc_w = malloc((size_t)m->fcap * m->stride * sizeof *m->inc_w));
}

/* Flow id (storage reserved) enters the lists of its n incidences, its
 * rate 0 until the next solve. */
static tc_status attach(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n)
{
    if (!weights_ready(m, w))
        return TC_EINTERNAL;
    tc_mm_flow *F = tc_mm_flow_at(m, id);
    size_t base = (size_t)id * m->stride;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = links[k];
        tc_mm_link *L = &m->lists[l];
        if (L->n == L->cap) {
            size_t c = L->cap == 1 ? 4 : 2 * (size_t)L->cap;
            tc_mm_ent *v = L->cap == 1 ? malloc(c * sizeof *v) : realloc(L->e.v, c * sizeof *v);
            if (!v)
                return TC_EINTERNAL;
            if (L->cap == 1)
                v[0] = L->e.one;
            L->e.v = v;
            L->cap = (uint32_t)c;
        }
        if (!mark_dirty(m, l))
            return TC_EINTERNAL;
        F->inc[k] = (tc_mm_inc){l, L->n};
        if (w)
            m->inc_w[base + k] = w[k];
        ents(L)[L->n++] = (tc_mm_ent){id, k};
        if (m->track)
            m->wtot[l] += w ? w[k] : 1.0;
    }
    F->n = (uint16_t)n;
    F->unit = w == NULL;
    F->rate = 0;
    if (m->track) {
        m->bneck[id] = UINT32_MAX;
        if (!tc_grow((void **)&m->fresh, &m->fresh_cap, m->nfresh + 1, sizeof *m->fresh))
            return TC_EINTERNAL;
        m->fresh[m->nfresh++] = id;
    }
    return TC_OK;
}

/* Held flow id enters the solver (tc_mm_hold) with the rate it had held,
 * as if it had been there all along: the links' loads count it, and a
 * solve that leaves its rate where it was does not list it as changed. */
static tc_status join(tc_mm *m, uint32_t id)
{
    tc_mm_flow *F = tc_mm_flow_at(m, id);
    uint32_t n = F->held;
    double r = F->rate;
    uint32_t links[TC_MM_HOLD_MAX];
    for (uint32_t k = 0; k < n; k++) {
        links[k] = F->inc[k].link;
        m->occ[links[k]].held = UINT32_MAX;
    }
    F->held = 0;
    /* its weights are in inc_w already: attach writes them over themselves */
    const double *w = F->unit ? NULL : m->inc_w + (size_t)id * m->stride;
    tc_status st = attach(m, id, links, w, n);
    if (st != TC_OK)
        return st;
    F->rate = r;
    if (m->track)
        for (uint32_t k = 0; k < n; k++)
            m->load[links[k]] += r * (w ? w[k] : 1.0);
    return TC_OK;
}

tc_status tc_mm_add(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n)
{
    if (n == 0 || n > m->stride || !reserve_flows(m, id))
        return TC_EINTERNAL;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t h = m->occ[links[k]].held;
        if (h != UINT32_MAX && join(m, h) != TC_OK)
            return TC_EINTERNAL;
    }
    tc_status st = attach(m, id, links, w, n);
    if (st == TC_OK)
        for (uint32_t k = 0; k < n; k++)
            m->occ[links[k]].n++;
    return st;
}

bool tc_mm_path_empty(const tc_mm *m, const uint32_t *links, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        if (m->occ[links[k]].n)
            return false;
    return true;
}

double tc_mm_alone_rate(const tc_mm *m, const uint32_t *links, const double *w, uint32_t n)
{
    /* solve_single's loop */
    double r = m->rate_cap;
    for (uint32_t k = 0; k < n; k++) {
        double s = m->lists[links[k]].bw / (w ? w[k] : 1.0);
        if (s < r)
            r = s;
    }
    return r;
}

tc_status tc_mm_hold(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n, double r)
{
    if (n == 0 || n > m->stride || n > TC_MM_HOLD_MAX || !reserve_flows(m, id) || !weights_ready(m, w))
        return TC_EINTERNAL;
    tc_mm_flow *F = tc_mm_flow_at(m, id);
    size_t base = (size_t)id * m->stride;
    for (uint32_t k = 0; k < n; k++) {
        F->inc[k] = (tc_mm_inc){links[k], 0};
        if (w)
            m->inc_w[base + k] = w[k];
        tc_mm_occ *O = &m->occ[links[k]];
        O->n++;
        O->held = id;
    }
    F->n = 0;
    F->held = (uint8_t)n;
    F->unit = w == NULL;
    F->rate = r;
    return TC_OK;
}

void tc_mm_remove(tc_mm *m, uint32_t id)
{
    tc_mm_flow *F = tc_mm_flow_at(m, id);
    if (F->held) {
        /* alone on its links: nobody else's rate changes */
        for (uint32_t k = 0; k < F->held; k++) {
            tc_mm_occ *O = &m->occ[F->inc[k].link];
            O->n--;
            O->held = UINT32_MAX;
        }
        F->held = 0;
        F->rate = 0;
        return;
    }
    bool track = m->track;
    double r = F->rate;
    if (track && m->bneck[id] != UINT32_MAX) {
        /* Every link on the path filled at r or above, up to rounding. */
        double lo = r * (1 - MM_DEPART_TOL);
        if (lo < m->x0)
            m->x0 = lo;
        group_leave(m, id);
    }
    for (uint32_t k = 0; k < F->n; k++) {
        uint32_t l = F->inc[k].link;
        tc_mm_link *L = &m->lists[l];
        uint32_t pos = F->inc[k].pos;
        if (pos != --L->n) {
            tc_mm_ent *v = ents(L), last = v[L->n];
            v[pos] = last;
            tc_mm_flow_at(m, last.flow)->inc[last.k].pos = pos;
        }
        if (track) {
            double w = inc_weight(m, F, id, k);
            if (L->n == 0) {
                m->load[l] = 0;
                m->wtot[l] = 0;
            } else {
                m->load[l] -= r * w;
                m->wtot[l] -= w;
            }
        }
        if (!mark_dirty(m, l))
            m->oom = true;
        m->occ[l].n--;
    }
    F->n = 0;
    F->rate = 0;
}

/* A link's figures for local_solve's check: the level at which the fill
 * froze flows of its set S on it (-INFINITY: none), the highest rate of S
 * on it, and S's load there before and as filled. */
typedef struct tc_mm_lstat {
    double lev, smax, sold, snew;
} tc_mm_lstat;

/* ---- the heap of links by fair share ---- */

/* Whether link la with share ka fills before link lb with kb: the smaller
 * share, then the lower link ID. Links whose shares tie fill in ID order
 * whatever order they entered the heap in, so a solve's result does not
 * depend on the order of the flows in the links' lists (which the history
 * of arrivals and departures sets): freezing one link's flows at x can move
 * a tied link's share an ulp, and which of them fills first must not
 * depend on that history (repetition skipping compares states bit for
 * bit, flow_skip.c). */
static inline bool heap_before(double ka, uint32_t la, double kb, uint32_t lb)
{
    return ka < kb || (ka == kb && la < lb);
}

static bool heap_push(tc_mm *m, double key, uint32_t l)
{
    if (m->heap_n == m->heap_cap) {
        size_t c = m->heap_cap ? 2 * m->heap_cap : 256;
        double *hk = realloc(m->heap_key, c * sizeof *hk);
        if (!hk)
            return false;
        m->heap_key = hk;
        uint32_t *hl = realloc(m->heap_link, c * sizeof *hl);
        if (!hl)
            return false;
        m->heap_link = hl;
        m->heap_cap = c;
    }
    size_t i = m->heap_n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!heap_before(key, l, m->heap_key[up], m->heap_link[up]))
            break;
        m->heap_key[i] = m->heap_key[up];
        m->heap_link[i] = m->heap_link[up];
        i = up;
    }
    m->heap_key[i] = key;
    m->heap_link[i] = l;
    return true;
}

static void heap_pop(tc_mm *m)
{
    size_t n = --m->heap_n;
    if (n == 0)
        return;
    double key = m->heap_key[n];
    uint32_t l = m->heap_link[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(m->heap_key[c + 1], m->heap_link[c + 1], m->heap_key[c], m->heap_link[c]))
            c++;
        if (!heap_before(m->heap_key[c], m->heap_link[c], key, l))
            break;
        m->heap_key[i] = m->heap_key[c];
        m->heap_link[i] = m->heap_link[c];
        i = c;
    }
    m->heap_key[i] = key;
    m->heap_link[i] = l;
}

/* ---- solve ---- */

/* The component of link l0 (not yet visited in this solve): breadth-first
 * over links and the flows on them. *big is set (and the walk stops) past
 * budget link entries. */
static bool collect(tc_mm *m, uint32_t l0, size_t budget, bool *big)
{
    uint32_t ep = m->epoch;
    size_t seen = 0;
    m->ncomp_links = m->ncomp_flows = 0;
    if (!tc_grow((void **)&m->comp_links, &m->comp_links_cap, 1, sizeof *m->comp_links))
        return false;
    m->lists[l0].mark = ep;
    m->comp_links[m->ncomp_links++] = l0;
    for (size_t q = 0; q < m->ncomp_links; q++) {
        tc_mm_link *L = &m->lists[m->comp_links[q]];
        const tc_mm_ent *v = ents(L);
        seen += L->n;
        if (seen > budget) {
            *big = true;
            return true;
        }
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t f = v[j].flow;
            tc_mm_flow *F = tc_mm_flow_at(m, f);
            if (F->mark == ep)
                continue;
            F->mark = ep;
            if (!tc_grow((void **)&m->comp_flows, &m->comp_flows_cap, m->ncomp_flows + 1, sizeof *m->comp_flows))
                return false;
            m->comp_flows[m->ncomp_flows++] = f;
            uint32_t n = F->n;
            if (!tc_grow((void **)&m->comp_links, &m->comp_links_cap, m->ncomp_links + n, sizeof *m->comp_links))
                return false;
            for (uint32_t k = 0; k < n; k++) {
                tc_mm_link *K = &m->lists[F->inc[k].link];
                if (K->mark != ep) {
                    K->mark = ep;
                    m->comp_links[m->ncomp_links++] = F->inc[k].link;
                }
            }
        }
    }
    return true;
}

/* Flow f gets rate r from bottleneck g (a link, or nlinks: the cap). */
bool tc_mm_blink_on(tc_mm *m)
{
    if (m->blink)
        return true;
    m->blink = malloc((m->fcap ? m->fcap : 1) * sizeof *m->blink);
    if (!m->blink)
        return false;
    for (uint32_t i = 0; i < m->fcap; i++)
        m->blink[i] = UINT32_MAX;
    return true;
}

static bool set_rate(tc_mm *m, uint32_t f, double r, uint32_t g)
{
    if (m->track && !group_join(m, f, g, r))
        return false;
    tc_mm_flow *F = tc_mm_flow_at(m, f);
    double old = F->rate;
    bool moved = false;
    if (m->blink && m->blink[f] != g) {
        m->blink[f] = g;
        moved = true;
    }
    if (old == r && !moved)
        return true;
    F->rate = r;
    if (m->track)
        for (uint32_t k = 0; k < F->n; k++)
            m->load[F->inc[k].link] += (r - old) * inc_weight(m, F, f, k);
    if (m->nchanged == m->changed_cap &&
        !tc_grow((void **)&m->changed, &m->changed_cap, m->nchanged + 1, sizeof *m->changed))
        return false;
    m->changed[m->nchanged++] = f;
    return true;
}

/* A flow alone in its component: the smallest capacity over weight on its
 * path, or the cap. */
static bool solve_single(tc_mm *m, uint32_t f)
{
    const tc_mm_flow *F = tc_mm_flow_at(m, f);
    double r = m->rate_cap;
    uint32_t g = m->nlinks;
    for (uint32_t k = 0; k < F->n; k++) {
        uint32_t l = F->inc[k].link;
        group_reset(m, l);
        double s = m->lists[l].bw / inc_weight(m, F, f, k);
        if (s < r) {
            r = s;
            g = l;
        }
    }
    return set_rate(m, f, r, g);
}

/* Freezes flow f at rate x: its load leaves the filling of its links. The
 * frozen mark is the flow's mark set to epoch + 1. */
static void freeze(tc_mm *m, uint32_t f, double x)
{
    tc_mm_flow *F = tc_mm_flow_at(m, f);
    F->mark = m->epoch + 1;
    for (uint32_t k = 0; k < F->n; k++) {
        uint32_t l = F->inc[k].link;
        double w = inc_weight(m, F, f, k);
        m->scr[l].rc -= x * w;
        m->scr[l].wsum -= w;
        m->lists[l].ucount--;
    }
}

/* Progressive filling of the flows comp_flows (mark == epoch: unfrozen)
 * over comp_links, whose rc, wsum and ucount are set. tent: the rates are
 * only proposed (trate, tbn) and each link that froze flows records its
 * level (lstat), for local_solve to check before it sets them. */
static bool fill_run(tc_mm *m, bool tent)
{
    m->heap_n = 0;
    for (size_t i = 0; i < m->ncomp_links; i++) {
        uint32_t l = m->comp_links[i];
        const tc_mm_scr *C = &m->scr[l];
        if (m->lists[l].ucount && !heap_push(m, (C->rc > 0 ? C->rc : 0) / C->wsum, l))
            return false;
    }
    uint32_t unfrozen_mark = m->epoch;
    size_t unfrozen = m->ncomp_flows;
    uint32_t frozen = m->epoch + 1;
    while (m->heap_n && unfrozen) {
        uint32_t l = m->heap_link[0];
        double key = m->heap_key[0];
        heap_pop(m);
        tc_mm_link *L = &m->lists[l];
        if (L->ucount == 0)
            continue;
        const tc_mm_scr *C = &m->scr[l];
        double s = (C->rc > 0 ? C->rc : 0) / C->wsum;
        if (s > key) {
            if (!heap_push(m, s, l))
                return false;
            continue;
        }
        if (s >= m->rate_cap)
            break;
        if (tent)
            m->lstat[l].lev = s;
        const tc_mm_ent *v = ents(L);
        /* freezing a flow of L takes one from L's unfrozen count: the scan
         * stops at L's last unfrozen flow */
        for (uint32_t j = 0; j < L->n && L->ucount; j++) {
            uint32_t f = v[j].flow;
            if (tc_mm_flow_at(m, f)->mark != unfrozen_mark)
                continue;
            freeze(m, f, s);
            unfrozen--;
            if (tent) {
                m->trate[f] = s;
                m->tbn[f] = l;
            } else if (!set_rate(m, f, s, l)) {
                return false;
            }
        }
    }
    /* What is left is held by the cap alone. */
    for (size_t i = 0; unfrozen && i < m->ncomp_flows; i++) {
        uint32_t f = m->comp_flows[i];
        tc_mm_flow *F = tc_mm_flow_at(m, f);
        if (F->mark != frozen) {
            F->mark = frozen;
            unfrozen--;
            if (tent) {
                m->trate[f] = m->rate_cap;
                m->tbn[f] = m->nlinks;
            } else if (!set_rate(m, f, m->rate_cap, m->nlinks)) {
                return false;
            }
        }
    }
    return true;
}

/* A whole component (collect): every link starts empty. */
static bool fill(tc_mm *m)
{
    for (size_t i = 0; i < m->ncomp_links; i++) {
        uint32_t l = m->comp_links[i];
        tc_mm_link *L = &m->lists[l];
        const tc_mm_ent *v = ents(L);
        double ws = 0;
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t f = v[j].flow;
            ws += inc_weight(m, tc_mm_flow_at(m, f), f, v[j].k);
        }
        m->scr[l].rc = L->bw;
        m->scr[l].wsum = ws;
        L->ucount = L->n;
        group_reset(m, l);
    }
    return fill_run(m, false);
}

static void next_epoch(tc_mm *m)
{
    if (m->epoch >= UINT32_MAX - 4) {
        for (uint32_t l = 0; l < m->nlinks; l++)
            m->lists[l].mark = 0;
        for (uint32_t f = 0; f < m->fcap; f++)
            tc_mm_flow_at(m, f)->mark = 0;
        m->epoch = 0;
    }
    m->epoch += 2;
}

/* Starts level tracking: loads and weights of every link from the flows in
 * the solver, every group empty. The first solve by level is then whole. */
static bool track_start(tc_mm *m)
{
    size_t nl = m->nlinks ? m->nlinks : 1, nf = m->fcap ? m->fcap : 1;
    m->load = calloc(nl, sizeof *m->load);
    m->wtot = calloc(nl, sizeof *m->wtot);
    m->groups = calloc((size_t)m->nlinks + 1, sizeof *m->groups);
    m->glevel = calloc((size_t)m->nlinks + 1, sizeof *m->glevel);
    m->gbits = calloc((size_t)m->nlinks / 64 + 1, sizeof *m->gbits);
    m->bneck = malloc(nf * sizeof *m->bneck);
    m->gpos = malloc(nf * sizeof *m->gpos);
    if (!m->load || !m->wtot || !m->groups || !m->glevel || !m->gbits || !m->bneck || !m->gpos)
        return false;
    for (uint32_t g = 0; g <= m->nlinks; g++)
        m->glevel[g] = -INFINITY;
    for (uint32_t f = 0; f < m->fcap; f++) {
        m->bneck[f] = UINT32_MAX;
        const tc_mm_flow *F = tc_mm_flow_at(m, f);
        for (uint32_t k = 0; k < F->n; k++) {
            double w = inc_weight(m, F, f, k);
            m->load[F->inc[k].link] += F->rate * w;
            m->wtot[F->inc[k].link] += w;
        }
    }
    m->track = true;
    return true;
}

/* Flow f joins the flows filled again (not yet marked). */
static bool level_take(tc_mm *m, uint32_t f, bool whole)
{
    uint32_t ep = m->epoch;
    tc_mm_flow *F = tc_mm_flow_at(m, f);
    F->mark = ep;
    if (!tc_grow((void **)&m->comp_flows, &m->comp_flows_cap, m->ncomp_flows + 1, sizeof *m->comp_flows))
        return false;
    m->comp_flows[m->ncomp_flows++] = f;
    uint32_t n = F->n;
    if (!tc_grow((void **)&m->comp_links, &m->comp_links_cap, m->ncomp_links + n, sizeof *m->comp_links))
        return false;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = F->inc[k].link;
        tc_mm_link *L = &m->lists[l];
        double w = inc_weight(m, F, f, k);
        if (L->mark != ep) {
            L->mark = ep;
            m->comp_links[m->ncomp_links++] = l;
            m->scr[l].rc = whole ? L->bw : L->bw - m->load[l];
            m->scr[l].wsum = 0;
            L->ucount = 0;
        }
        if (!whole)
            m->scr[l].rc += F->rate * w;
        m->scr[l].wsum += w;
        L->ucount++;
    }
    return true;
}

/* The lowest level the changes since the last solve can affect: m->x0
 * (departures) and each arrival's bound. */
static double level_x0(const tc_mm *m)
{
    double x0 = m->x0;
    for (size_t i = 0; i < m->nfresh; i++) {
        uint32_t f = m->fresh[i];
        const tc_mm_flow *F = tc_mm_flow_at(m, f);
        if (!F->n || m->bneck[f] != UINT32_MAX)
            continue;
        for (uint32_t k = 0; k < F->n; k++) {
            uint32_t l = F->inc[k].link;
            double b = m->lists[l].bw / m->wtot[l];
            if (b < x0)
                x0 = b;
        }
    }
    return x0;
}

/* Re-solves by level everything that changed since the last solve (whole:
 * every flow). */
static bool level_solve(tc_mm *m, bool whole)
{
    next_epoch(m);
    m->level_solves++;
    m->ncomp_links = m->ncomp_flows = 0;
    if (whole) {
        for (uint32_t f = 0; f < m->fcap; f++)
            if (tc_mm_flow_at(m, f)->n && !level_take(m, f, true))
                return false;
        m->level_flows += m->ncomp_flows;
        return fill_run(m, false);
    }
    double x0 = level_x0(m);
    /* the groups that hold flows, in the order of their links */
    for (uint32_t wi = 0; wi <= m->nlinks / 64; wi++)
        for (uint64_t bits = m->gbits[wi]; bits; bits &= bits - 1) {
            uint32_t g = wi * 64 + (uint32_t)__builtin_ctzll(bits);
            tc_mm_group *G = &m->groups[g];
            if (m->glevel[g] < x0)
                continue;
            for (uint32_t j = 0; j < G->n; j++)
                if (!level_take(m, G->v[j].flow, false))
                    return false;
            group_reset(m, g);
        }
    for (size_t i = 0; i < m->nfresh; i++) {
        uint32_t f = m->fresh[i];
        const tc_mm_flow *F = tc_mm_flow_at(m, f);
        if (F->n && m->bneck[f] == UINT32_MAX && F->mark != m->epoch && !level_take(m, f, false))
            return false;
    }
    m->level_flows += m->ncomp_flows;
    return m->ncomp_flows == 0 || fill_run(m, false);
}

/* ---- local re-solves (tc_mm.local) ----
 *
 * The progressive-filling result is the one feasible allocation in which
 * every flow is at the cap or has a bottleneck: a full link on which no
 * flow has a higher rate (such an allocation is max-min fair, and that one
 * is unique: docs/MODEL.md, "Rates", with its source). After a
 * change, a set S of flows is filled again on what the others leave on
 * each link (their rates kept), and the result is checked against that
 * condition wherever S's flows run; a flow outside S kept where S's rates
 * moved passes if its bottleneck is untouched, or is still full with no
 * flow of S above it; a flow of S frozen on a link passes if no kept flow
 * there has a higher rate. Flows that fail join S and the fill is repeated;
 * when nothing fails, the allocation is the max-min one (the flows on the
 * links S does not touch keep both their rates and their bottlenecks) and
 * S's rates are set. S starts as the new flows and the flows frozen on a
 * link whose flow set changed (a departure frees capacity there, an
 * arrival takes some). Comparisons allow MM_LOCAL_TOL of a kept flow's
 * rate: a rate above another by less does not count, and a kept flow's
 * bottleneck passes as full if what it has left would raise that flow by
 * less (a tolerance on the link's capacity instead would let a flow that
 * shares it with n others be off by n times as much); anything found in
 * doubt only joins S, which is always exact. Past MM_LOCAL_ROUNDS fills
 * the solve by level takes over. */
#define MM_LOCAL_TOL 1e-12
#define MM_LOCAL_ROUNDS 8
#define MM_LOCAL_SMALL 64
#define MM_LOCAL_BACKOFF 64

/* The local solves' scratch, allocated on first use (what an earlier try
 * got is kept: reserve_flows grows trate and tbn once either exists). */
static bool local_ready(tc_mm *m)
{
    size_t nf = m->fcap ? m->fcap : 1, nl = m->nlinks ? m->nlinks : 1;
    if (!m->trate)
        m->trate = malloc(nf * sizeof *m->trate);
    if (!m->tbn)
        m->tbn = malloc(nf * sizeof *m->tbn);
    if (!m->lstat)
        m->lstat = malloc(nl * sizeof *m->lstat);
    return m->trate && m->tbn && m->lstat;
}

static bool cand_push(tc_mm *m, uint32_t f)
{
    if (!tc_grow((void **)&m->cand, &m->cand_cap, m->ncand + 1, sizeof *m->cand))
        return false;
    m->cand[m->ncand++] = f;
    return true;
}

/* Whether flow f is in the fill under way (epoch: taken, epoch + 1:
 * frozen). */
static inline bool in_fill(const tc_mm *m, uint32_t f)
{
    return tc_mm_flow_at(m, f)->mark - m->epoch <= 1;
}

/* Flow f's weight on link l (on its path). */
static double weight_on(const tc_mm *m, const tc_mm_flow *F, uint32_t f, uint32_t l)
{
    if (F->unit)
        return 1.0;
    double w = 0;
    for (uint32_t k = 0; k < F->n; k++)
        if (F->inc[k].link == l)
            w += inc_weight(m, F, f, k);
    return w;
}

/* The check of one fill: the flows that fail it are appended to cand. */
static bool local_check(tc_mm *m)
{
    for (size_t i = 0; i < m->ncomp_links; i++) {
        tc_mm_lstat *T = &m->lstat[m->comp_links[i]];
        T->smax = -INFINITY;
        T->sold = T->snew = 0;
    }
    for (size_t i = 0; i < m->ncomp_flows; i++) {
        uint32_t f = m->comp_flows[i];
        const tc_mm_flow *F = tc_mm_flow_at(m, f);
        double r = m->trate[f];
        for (uint32_t k = 0; k < F->n; k++) {
            tc_mm_lstat *T = &m->lstat[F->inc[k].link];
            double w = inc_weight(m, F, f, k);
            T->sold += F->rate * w;
            T->snew += r * w;
            if (r > T->smax)
                T->smax = r;
        }
    }
    for (size_t i = 0; i < m->ncomp_links; i++) {
        uint32_t l = m->comp_links[i];
        const tc_mm_link *L = &m->lists[l];
        const tc_mm_lstat *T = &m->lstat[l];
        /* what the link has left: a kept flow g frozen there passes if
         * that would raise it by at most MM_LOCAL_TOL of its rate */
        double slack = L->bw - (m->load[l] - T->sold + T->snew);
        const tc_mm_group *G = &m->groups[l];
        for (uint32_t j = 0; j < G->n; j++) {
            uint32_t g = G->v[j].flow;
            if (in_fill(m, g))
                continue;
            const tc_mm_flow *F = tc_mm_flow_at(m, g);
            if ((slack > 0 && slack > MM_LOCAL_TOL * F->rate * weight_on(m, F, g, l)) ||
                T->smax > F->rate * (1 + MM_LOCAL_TOL)) {
                if (!cand_push(m, g))
                    return false;
            }
        }
        if (T->lev == -INFINITY)
            continue;
        const tc_mm_ent *v = ents((tc_mm_link *)L);
        double top = T->lev * (1 + MM_LOCAL_TOL);
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t g = v[j].flow;
            if (!in_fill(m, g) && tc_mm_flow_at(m, g)->rate > top && !cand_push(m, g))
                return false;
        }
    }
    return true;
}

/* About how many flows a solve by level would fill again now. */
static size_t level_count(const tc_mm *m)
{
    double x0 = level_x0(m);
    size_t n = m->nfresh;
    for (uint32_t wi = 0; wi <= m->nlinks / 64; wi++)
        for (uint64_t bits = m->gbits[wi]; bits; bits &= bits - 1) {
            uint32_t g = wi * 64 + (uint32_t)__builtin_ctzll(bits);
            if (m->glevel[g] >= x0)
                n += m->groups[g].n;
        }
    return n;
}

/* Re-solves locally what changed since the last solve (tracking on): *done
 * is false where the rounds ran out and nothing was set. */
static bool local_solve(tc_mm *m, bool *done)
{
    *done = false;
    if (!local_ready(m))
        return false;
    m->local_solves++;
    m->ncand = 0;
    for (size_t i = 0; i < m->nfresh; i++)
        if (tc_mm_flow_at(m, m->fresh[i])->n && !cand_push(m, m->fresh[i]))
            return false;
    for (uint32_t i = 0; i < m->ndirty; i++) {
        const tc_mm_group *G = &m->groups[m->dirty[i]];
        for (uint32_t j = 0; j < G->n; j++)
            if (!cand_push(m, G->v[j].flow))
                return false;
    }
    /* a solve by level's work bounds the local one's (counted once the
     * local one is past a few dozen flows) */
    size_t limit = SIZE_MAX, work = 0;
    for (int round = 0; round < MM_LOCAL_ROUNDS; round++) {
        next_epoch(m);
        m->ncomp_links = m->ncomp_flows = 0;
        for (size_t i = 0; i < m->ncand; i++) {
            uint32_t f = m->cand[i];
            if (tc_mm_flow_at(m, f)->mark != m->epoch && !level_take(m, f, false))
                return false;
        }
        if (m->ncomp_flows == 0) {
            *done = true;
            return true;
        }
        work += m->ncomp_flows;
        if (work > MM_LOCAL_SMALL && limit == SIZE_MAX)
            limit = level_count(m);
        if (work > limit)
            break;
        m->local_rounds++;
        m->local_flows += m->ncomp_flows;
        for (size_t i = 0; i < m->ncomp_links; i++)
            m->lstat[m->comp_links[i]].lev = -INFINITY;
        if (!fill_run(m, true))
            return false;
        /* the next fill's flows: this one's, then those that fail */
        m->ncand = 0;
        if (!tc_grow((void **)&m->cand, &m->cand_cap, m->ncomp_flows, sizeof *m->cand))
            return false;
        memcpy(m->cand, m->comp_flows, m->ncomp_flows * sizeof *m->cand);
        m->ncand = m->ncomp_flows;
        if (!local_check(m))
            return false;
        if (m->ncand == m->ncomp_flows) {
            for (size_t i = 0; i < m->ncomp_flows; i++) {
                uint32_t f = m->comp_flows[i];
                if (!set_rate(m, f, m->trate[f], m->tbn[f]))
                    return false;
            }
            /* the levels of the groups S left or joined: their highest rate */
            for (size_t i = 0; i < m->ncomp_links; i++) {
                uint32_t l = m->comp_links[i];
                const tc_mm_group *G = &m->groups[l];
                double top = -INFINITY;
                for (uint32_t j = 0; j < G->n; j++)
                    top = fmax(top, tc_mm_flow_at(m, G->v[j].flow)->rate);
                m->glevel[l] = top;
            }
            *done = true;
            return true;
        }
    }
    m->local_fallbacks++;
    return true;
}

/* Whether the component of dirty link L (not yet visited, with flows) is its
 * one flow alone on every link of its path, within the budget; then the
 * flow and its links are marked visited and *f is the flow. collect would
 * find the same component (seen = the flow's links). */
static bool lone_flow(tc_mm *m, tc_mm_link *L, size_t budget, uint32_t *f)
{
    if (L->n != 1)
        return false;
    uint32_t id = ents(L)[0].flow;
    tc_mm_flow *F = tc_mm_flow_at(m, id);
    if (F->n > budget)
        return false;
    for (uint32_t k = 0; k < F->n; k++)
        if (m->lists[F->inc[k].link].n != 1)
            return false;
    F->mark = m->epoch;
    for (uint32_t k = 0; k < F->n; k++)
        m->lists[F->inc[k].link].mark = m->epoch;
    *f = id;
    return true;
}

tc_status tc_mm_solve(tc_mm *m)
{
    m->nchanged = 0;
    if (m->oom)
        return TC_EINTERNAL;
    if (m->ndirty == 0)
        return TC_OK;
    /* Two epochs per solve: epoch marks visited, epoch + 1 frozen (flows).
     * Components are disjoint, so a flow frozen in one is never reached
     * from another. Advancing the epoch also clears every dirty mark. */
    next_epoch(m);
    bool ok = true, big = false;
    size_t budget = m->comp_budget ? m->comp_budget : TC_MM_COMP_BUDGET;
    for (uint32_t i = 0; i < m->ndirty && ok && !big; i++) {
        uint32_t l = m->dirty[i];
        tc_mm_link *L = &m->lists[l];
        if (L->mark == m->epoch || L->n == 0)
            continue;
        uint32_t f;
        if (lone_flow(m, L, budget, &f)) {
            ok = solve_single(m, f);
            continue;
        }
        ok = collect(m, l, budget, &big);
        if (ok && !big)
            ok = m->ncomp_flows == 1 ? solve_single(m, m->comp_flows[0]) : fill(m);
    }
    /* Components solved whole above are consistent with the rest, so the
     * level solve may count their changes too: that only lowers x0. */
    if (ok && big) {
        if (!m->track) {
            ok = track_start(m) && level_solve(m, true);
        } else {
            /* After a local solve that handed over, the next ones go by
             * level at once, 1, 2, 4 ... up to MM_LOCAL_BACKOFF of them
             * while they keep handing over (an all-to-all: every end moves
             * most rates) */
            bool done = false;
            if (m->local && m->local_wait) {
                m->local_wait--;
            } else if (m->local) {
                ok = local_solve(m, &done);
                m->local_backoff = done ? 0 : m->local_backoff ? 2 * m->local_backoff : 1;
                if (m->local_backoff > MM_LOCAL_BACKOFF)
                    m->local_backoff = MM_LOCAL_BACKOFF;
                m->local_wait = m->local_backoff;
            }
            if (ok && !done)
                ok = level_solve(m, false);
        }
    }
    m->ndirty = 0;
    m->nfresh = 0;
    m->x0 = INFINITY;
    return ok ? TC_OK : TC_EINTERNAL;
}
