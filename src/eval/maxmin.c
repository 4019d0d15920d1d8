/*
 * maxmin.c - max-min fair rates by progressive filling, recomputed only
 * over the components a change touches (flow_int.h states the model).
 *
 * Progressive filling with a heap of links keyed by their fair share
 * (capacity left / unfrozen weight): the smallest share is the next level;
 * the link's unfrozen flows freeze at it, which removes their load from
 * their other links. Freezing a flow at the current level x on a link whose
 * share s >= x gives (c - x w) / (n - w) >= s, so shares only rise and a heap
 * with lazily refreshed keys is exact: a popped key that is stale is pushed
 * again with its current value.
 *
 * Data layout: flows are structs of arrays indexed by flow id with a fixed
 * stride of incidences, so adding and removing a flow never allocates once
 * the arrays have grown; each link keeps an array of (flow, incidence)
 * entries with the entry's position stored in the flow, for O(1) removal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "eval/flow_int.h"

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *v = realloc(*p, c * elem);
    if (!v)
        return false;
    *p = v;
    *cap = c;
    return true;
}

tc_status tc_mm_init(tc_mm *m, uint32_t nlinks, const double *cap, uint32_t stride, double rate_cap)
{
    memset(m, 0, sizeof *m);
    m->nlinks = nlinks;
    m->cap = cap;
    m->stride = stride ? stride : 1;
    m->rate_cap = rate_cap > 0 ? rate_cap : INFINITY;
    m->lists = calloc(nlinks ? nlinks : 1, sizeof *m->lists);
    m->lmark = calloc(nlinks ? nlinks : 1, sizeof *m->lmark);
    m->rc = calloc(nlinks ? nlinks : 1, sizeof *m->rc);
    m->wsum = calloc(nlinks ? nlinks : 1, sizeof *m->wsum);
    m->ucount = calloc(nlinks ? nlinks : 1, sizeof *m->ucount);
    m->is_dirty = calloc(nlinks ? nlinks : 1, 1);
    if (!m->lists || !m->lmark || !m->rc || !m->wsum || !m->ucount || !m->is_dirty) {
        tc_mm_free(m);
        return TC_EINTERNAL;
    }
    return TC_OK;
}

void tc_mm_free(tc_mm *m)
{
    if (m->lists)
        for (uint32_t l = 0; l < m->nlinks; l++)
            free(m->lists[l].v);
    free(m->lists);
    free(m->lmark);
    free(m->rc);
    free(m->wsum);
    free(m->ucount);
    free(m->is_dirty);
    free(m->dirty);
    free(m->inc_link);
    free(m->inc_w);
    free(m->inc_pos);
    free(m->inc_n);
    free(m->rate);
    free(m->fmark);
    free(m->comp_links);
    free(m->comp_flows);
    free(m->heap_key);
    free(m->heap_link);
    free(m->changed);
    memset(m, 0, sizeof *m);
}

static bool reserve_flows(tc_mm *m, uint32_t id)
{
    if (id < m->fcap)
        return true;
    size_t c = m->fcap ? m->fcap : 1024;
    while (c <= id)
        c *= 2;
    size_t s = m->stride;
    uint32_t *il = realloc(m->inc_link, c * s * sizeof *il);
    if (il)
        m->inc_link = il;
    double *iw = realloc(m->inc_w, c * s * sizeof *iw);
    if (iw)
        m->inc_w = iw;
    uint32_t *ip = realloc(m->inc_pos, c * s * sizeof *ip);
    if (ip)
        m->inc_pos = ip;
    uint16_t *in = realloc(m->inc_n, c * sizeof *in);
    if (in)
        m->inc_n = in;
    double *r = realloc(m->rate, c * sizeof *r);
    if (r)
        m->rate = r;
    uint32_t *fm = realloc(m->fmark, c * sizeof *fm);
    if (fm)
        m->fmark = fm;
    if (!il || !iw || !ip || !in || !r || !fm)
        return false;
    memset(m->inc_n + m->fcap, 0, (c - m->fcap) * sizeof *in);
    memset(m->fmark + m->fcap, 0, (c - m->fcap) * sizeof *fm);
    memset(m->rate + m->fcap, 0, (c - m->fcap) * sizeof *r);
    m->fcap = (uint32_t)c;
    return true;
}

static bool mark_dirty(tc_mm *m, uint32_t l)
{
    if (m->is_dirty[l])
        return true;
    size_t cap = m->dirty_cap;
    if (!grow((void **)&m->dirty, &cap, (size_t)m->ndirty + 1, sizeof *m->dirty))
        return false;
    m->dirty_cap = (uint32_t)cap;
    m->is_dirty[l] = 1;
    m->dirty[m->ndirty++] = l;
    return true;
}

tc_status tc_mm_add(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n)
{
    if (n == 0 || n > m->stride || !reserve_flows(m, id))
        return TC_EINTERNAL;
    size_t base = (size_t)id * m->stride;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = links[k];
        tc_mm_link *L = &m->lists[l];
        if (L->n == L->cap) {
            size_t c = L->cap;
            if (!grow((void **)&L->v, &c, (size_t)L->n + 1, sizeof *L->v))
                return TC_EINTERNAL;
            L->cap = (uint32_t)c;
        }
        if (!mark_dirty(m, l))
            return TC_EINTERNAL;
        m->inc_link[base + k] = l;
        m->inc_w[base + k] = w ? w[k] : 1.0;
        m->inc_pos[base + k] = L->n;
        L->v[L->n++] = (tc_mm_ent){id, k};
    }
    m->inc_n[id] = (uint16_t)n;
    m->rate[id] = 0;
    return TC_OK;
}

void tc_mm_remove(tc_mm *m, uint32_t id)
{
    size_t base = (size_t)id * m->stride;
    for (uint32_t k = 0; k < m->inc_n[id]; k++) {
        uint32_t l = m->inc_link[base + k];
        tc_mm_link *L = &m->lists[l];
        uint32_t pos = m->inc_pos[base + k];
        tc_mm_ent last = L->v[--L->n];
        L->v[pos] = last;
        m->inc_pos[(size_t)last.flow * m->stride + last.k] = pos;
        if (!mark_dirty(m, l))
            m->oom = true;
    }
    m->inc_n[id] = 0;
    m->rate[id] = 0;
}

/* ---- the heap of links by fair share ---- */

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
        if (m->heap_key[up] <= key)
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
        if (c + 1 < n && m->heap_key[c + 1] < m->heap_key[c])
            c++;
        if (m->heap_key[c] >= key)
            break;
        m->heap_key[i] = m->heap_key[c];
        m->heap_link[i] = m->heap_link[c];
        i = c;
    }
    m->heap_key[i] = key;
    m->heap_link[i] = l;
}

/* ---- solve ---- */

/* The component of link l (not yet visited in this solve): breadth-first
 * over links and the flows on them. */
static bool collect(tc_mm *m, uint32_t l0)
{
    uint32_t ep = m->epoch;
    m->ncomp_links = m->ncomp_flows = 0;
    if (!grow((void **)&m->comp_links, &m->comp_links_cap, 1, sizeof *m->comp_links))
        return false;
    m->lmark[l0] = ep;
    m->comp_links[m->ncomp_links++] = l0;
    for (size_t q = 0; q < m->ncomp_links; q++) {
        const tc_mm_link *L = &m->lists[m->comp_links[q]];
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t f = L->v[j].flow;
            if (m->fmark[f] == ep)
                continue;
            m->fmark[f] = ep;
            if (!grow((void **)&m->comp_flows, &m->comp_flows_cap, m->ncomp_flows + 1, sizeof *m->comp_flows))
                return false;
            m->comp_flows[m->ncomp_flows++] = f;
            size_t base = (size_t)f * m->stride;
            uint32_t n = m->inc_n[f];
            if (!grow((void **)&m->comp_links, &m->comp_links_cap, m->ncomp_links + n, sizeof *m->comp_links))
                return false;
            for (uint32_t k = 0; k < n; k++) {
                uint32_t l = m->inc_link[base + k];
                if (m->lmark[l] != ep) {
                    m->lmark[l] = ep;
                    m->comp_links[m->ncomp_links++] = l;
                }
            }
        }
    }
    return true;
}

static bool set_rate(tc_mm *m, uint32_t f, double r)
{
    if (m->rate[f] == r)
        return true;
    m->rate[f] = r;
    if (!grow((void **)&m->changed, &m->changed_cap, m->nchanged + 1, sizeof *m->changed))
        return false;
    m->changed[m->nchanged++] = f;
    return true;
}

/* A flow alone in its component: the smallest capacity over weight on its
 * path, or the cap. */
static bool solve_single(tc_mm *m, uint32_t f)
{
    size_t base = (size_t)f * m->stride;
    double r = m->rate_cap;
    for (uint32_t k = 0; k < m->inc_n[f]; k++) {
        double s = m->cap[m->inc_link[base + k]] / m->inc_w[base + k];
        if (s < r)
            r = s;
    }
    return set_rate(m, f, r);
}

/* Freezes flow f at rate x: its load leaves the filling of its links. The
 * frozen mark is the flow's fmark set to epoch + 1. */
static void freeze(tc_mm *m, uint32_t f, double x)
{
    size_t base = (size_t)f * m->stride;
    m->fmark[f] = m->epoch + 1;
    for (uint32_t k = 0; k < m->inc_n[f]; k++) {
        uint32_t l = m->inc_link[base + k];
        double w = m->inc_w[base + k];
        m->rc[l] -= x * w;
        m->wsum[l] -= w;
        m->ucount[l]--;
    }
}

static bool fill(tc_mm *m)
{
    m->heap_n = 0;
    for (size_t i = 0; i < m->ncomp_links; i++) {
        uint32_t l = m->comp_links[i];
        const tc_mm_link *L = &m->lists[l];
        double ws = 0;
        for (uint32_t j = 0; j < L->n; j++)
            ws += m->inc_w[(size_t)L->v[j].flow * m->stride + L->v[j].k];
        m->rc[l] = m->cap[l];
        m->wsum[l] = ws;
        m->ucount[l] = L->n;
        if (L->n && !heap_push(m, m->cap[l] / ws, l))
            return false;
    }
    size_t unfrozen = m->ncomp_flows;
    uint32_t frozen = m->epoch + 1;
    while (m->heap_n && unfrozen) {
        uint32_t l = m->heap_link[0];
        double key = m->heap_key[0];
        heap_pop(m);
        if (m->ucount[l] == 0)
            continue;
        double s = (m->rc[l] > 0 ? m->rc[l] : 0) / m->wsum[l];
        if (s > key) {
            if (!heap_push(m, s, l))
                return false;
            continue;
        }
        if (s >= m->rate_cap)
            break;
        const tc_mm_link *L = &m->lists[l];
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t f = L->v[j].flow;
            if (m->fmark[f] == frozen)
                continue;
            freeze(m, f, s);
            unfrozen--;
            if (!set_rate(m, f, s))
                return false;
        }
    }
    /* What is left is held by the cap alone. */
    for (size_t i = 0; unfrozen && i < m->ncomp_flows; i++) {
        uint32_t f = m->comp_flows[i];
        if (m->fmark[f] != frozen) {
            m->fmark[f] = frozen;
            unfrozen--;
            if (!set_rate(m, f, m->rate_cap))
                return false;
        }
    }
    return true;
}

tc_status tc_mm_solve(tc_mm *m)
{
    m->nchanged = 0;
    if (m->oom)
        return TC_EINTERNAL;
    if (m->ndirty == 0)
        return TC_OK;
    /* Two epochs per solve: epoch marks visited, epoch + 1 frozen. Components
     * are disjoint, so a flow frozen in one is never reached from another. */
    if (m->epoch >= UINT32_MAX - 4) {
        memset(m->lmark, 0, (size_t)m->nlinks * sizeof *m->lmark);
        memset(m->fmark, 0, (size_t)m->fcap * sizeof *m->fmark);
        m->epoch = 0;
    }
    m->epoch += 2;
    bool ok = true;
    for (uint32_t i = 0; i < m->ndirty && ok; i++) {
        uint32_t l = m->dirty[i];
        if (m->lmark[l] == m->epoch || m->lists[l].n == 0)
            continue;
        ok = collect(m, l);
        if (ok)
            ok = m->ncomp_flows == 1 ? solve_single(m, m->comp_flows[0]) : fill(m);
    }
    for (uint32_t i = 0; i < m->ndirty; i++)
        m->is_dirty[m->dirty[i]] = 0;
    m->ndirty = 0;
    return ok ? TC_OK : TC_EINTERNAL;
}
