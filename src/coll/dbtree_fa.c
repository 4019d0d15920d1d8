/*
 * dbtree_fa.c - dbtree-fa: dbtree's double binary trees re-parented around
 * failures, what a fault-aware library could do (docs/MODEL.md,
 * "Failures"); not a library's algorithm. auto never picks it: libraries
 * run the schedule they chose on the healthy network.
 *
 * The trees are dbtree's (coll/dbtree.c): the same shape, chunking,
 * pipelining and phases, over positions; only which rank sits at which
 * position changes (rank r on endpoint r). Both trees move together: a
 * rank is relabelled at its index, which tree 1 places at one position and
 * tree 2 at the next, so every rank stays interior in at most one tree.
 *
 * In dbtree's steady state every tree edge of both trees carries a chunk
 * at each step, up and down for all-reduce, down for broadcast, up for
 * reduce (and the root's edges to the two tree tops for those two); a
 * step's time is set by the most loaded directed link. The objective, on
 * the topology as it is (default routing, failures included), is
 * lexicographic: the tree-edge routes cut off (none is better than any),
 * the most routes through one directed link, the links carrying that
 * many, then the links the routes take beyond their healthy routes
 * (tc_topo_route_healthy).
 *
 * From dbtree's own labels, a move swaps the ranks at two indices, one of
 * which has a tree edge whose route is not its healthy route (the failures
 * touch it); it is taken only if it lowers the objective strictly (first
 * improvement). The link loads are updated incrementally: only the tree
 * edges at the two indices (at most 12, each way for all-reduce) are
 * rerouted, removed and added, and once more to undo a swap not taken.
 * The work is bounded: at most FA_PASSES (4) sweeps over the indices, each
 * touched index tried against the FA_WINDOW (8) indices on either side of
 * it (against all the others when n <= 2 FA_WINDOW + 1), and at most
 * FA_EVALS (131,072) swaps evaluated in all: so at most min(64 n, 131,072)
 * evaluations of at most 96 routes each (a 1,024-rank 32x32 torus with 20
 * of its 2,048 cables down builds in about 40 ms, tests/test_dbtree_fa.c).
 * On a healthy network (or where no tree edge is touched) nothing moves
 * and the schedule is dbtree's; with failures the objective is never
 * worse than dbtree's, by construction: dbtree's labels are the start and
 * only strict improvements are taken. That is all it guarantees: the
 * objective is the steady state's, not the time: the fill and drain steps
 * carry only some of the edges, and their busiest links are not in it, so
 * on some draws (the same steady-state load, a busier fill) dbtree-fa is a
 * little slower than dbtree (docs/MODEL.md). The root of broadcast and
 * reduce is not relabelled. Rank r is on endpoint r, as for ring-fa.
 */
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"
#include "coll/dbtree.h"

#define FA_PASSES 4      /* sweeps over the indices at most */
#define FA_WINDOW 8      /* partners on either side of a touched index */
#define FA_EVALS 131072u /* swaps evaluated at most */
#define FA_INC 6         /* edges at an index: parent and 2 children, in each tree */

typedef struct fa_obj {
    uint64_t cut;   /* routes with no path */
    uint32_t max;   /* most routes through one directed link */
    uint32_t nmax;  /* links carrying max */
    int64_t detour; /* links beyond the healthy routes, summed */
} fa_obj;

typedef struct fa_ctx {
    const tc_topo *t;
    uint32_t n, root;
    bool top, up, down;
    uint32_t *perm;                /* index -> rank */
    int32_t (*edge)[2];            /* child index, parent index (-1: the root) */
    uint32_t nedge;
    uint32_t *inc;                 /* FA_INC edge ids per index */
    uint8_t *ninc;
    uint32_t *load;                /* routes per directed link */
    uint32_t *hist;                /* links per load (index >= 1) */
    uint32_t hcap;
    fa_obj o;
    uint32_t *path, *hpath;
    bool oom;
} fa_ctx;

static bool fa_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    if (!tc_dbtree_valid(op, p, t, err))
        return false;
    if (!t || p > t->n_endpoints) {
        tc_fail(err, TC_EINVAL, "dbtree-fa places the ranks on the topology: it needs one with at least p endpoints");
        return false;
    }
    return true;
}

static inline uint32_t rank_of(const fa_ctx *c, int32_t idx)
{
    return idx < 0 ? c->root : c->perm[idx];
}

static void bump(fa_ctx *c, uint32_t l, int sign)
{
    if (sign > 0) {
        uint32_t v = ++c->load[l];
        if (v >= c->hcap) {
            uint32_t cap = 2 * v;
            uint32_t *h = realloc(c->hist, (size_t)cap * sizeof *h);
            if (!h) {
                c->oom = true;
                c->load[l]--;
                return;
            }
            memset(h + c->hcap, 0, (size_t)(cap - c->hcap) * sizeof *h);
            c->hist = h, c->hcap = cap;
        }
        c->hist[v]++;
        if (v > 1)
            c->hist[v - 1]--;
        if (v > c->o.max)
            c->o.max = v;
    } else {
        uint32_t v = c->load[l]--;
        c->hist[v]--;
        if (v > 1)
            c->hist[v - 1]++;
        while (c->o.max && !c->hist[c->o.max])
            c->o.max--;
    }
}

/* Adds (sign 1) or removes (-1) the route a -> b. */
static void route(fa_ctx *c, uint32_t a, uint32_t b, int sign)
{
    uint32_t len = tc_topo_route(c->t, TC_ROUTE_DEFAULT, a, b, c->path);
    if (len == TC_NO_ROUTE) {
        c->o.cut += (uint64_t)(int64_t)sign;
        return;
    }
    for (uint32_t k = 0; k < len; k++)
        bump(c, c->path[k], sign);
    uint32_t h = tc_topo_route_healthy(c->t, TC_ROUTE_DEFAULT, a, b, c->hpath);
    if (h != TC_NO_ROUTE && len > h)
        c->o.detour += sign * (int64_t)(len - h);
}

static void edge_apply(fa_ctx *c, uint32_t e, int sign)
{
    uint32_t a = rank_of(c, c->edge[e][0]), b = rank_of(c, c->edge[e][1]);
    if (c->up)
        route(c, a, b, sign);
    if (c->down)
        route(c, b, a, sign);
}

/* Whether the route a -> b is not its healthy route. */
static bool differs(fa_ctx *c, uint32_t a, uint32_t b)
{
    uint32_t len = tc_topo_route(c->t, TC_ROUTE_DEFAULT, a, b, c->path);
    if (len == TC_NO_ROUTE)
        return true;
    uint32_t h = tc_topo_route_healthy(c->t, TC_ROUTE_DEFAULT, a, b, c->hpath);
    return h != len || memcmp(c->path, c->hpath, (size_t)len * sizeof *c->path) != 0;
}

/* Whether the failures touch a tree edge at index i. */
static bool touched(fa_ctx *c, uint32_t i)
{
    for (uint32_t k = 0; k < c->ninc[i]; k++) {
        uint32_t e = c->inc[FA_INC * i + k];
        uint32_t a = rank_of(c, c->edge[e][0]), b = rank_of(c, c->edge[e][1]);
        if ((c->up && differs(c, a, b)) || (c->down && differs(c, b, a)))
            return true;
    }
    return false;
}

static bool better(const fa_obj *x, const fa_obj *y)
{
    if (x->cut != y->cut)
        return x->cut < y->cut;
    if (x->max != y->max)
        return x->max < y->max;
    if (x->nmax != y->nmax)
        return x->nmax < y->nmax;
    return x->detour < y->detour;
}

static void objective(fa_ctx *c)
{
    c->o.nmax = c->o.max ? c->hist[c->o.max] : 0;
}

/* Swaps the ranks at indices i and j if that lowers the objective. */
static bool try_swap(fa_ctx *c, uint32_t i, uint32_t j)
{
    uint32_t es[2 * FA_INC], ne = 0;
    for (uint32_t k = 0; k < c->ninc[i]; k++)
        es[ne++] = c->inc[FA_INC * i + k];
    for (uint32_t k = 0; k < c->ninc[j]; k++) {
        uint32_t e = c->inc[FA_INC * j + k];
        bool dup = false;
        for (uint32_t m = 0; m < c->ninc[i]; m++)
            dup |= es[m] == e;
        if (!dup)
            es[ne++] = e;
    }
    fa_obj old = c->o;
    for (int round = 0; round < 2; round++) {
        for (uint32_t k = 0; k < ne; k++)
            edge_apply(c, es[k], -1);
        uint32_t x = c->perm[i];
        c->perm[i] = c->perm[j];
        c->perm[j] = x;
        for (uint32_t k = 0; k < ne; k++)
            edge_apply(c, es[k], 1);
        objective(c);
        if (round == 0 && better(&c->o, &old) && !c->oom)
            return true;
    }
    return false;
}

/* The search above; c->perm starts as dbtree's labels. */
static void improve(fa_ctx *c)
{
    uint32_t n = c->n, evals = 0;
    for (uint32_t e = 0; e < c->nedge && !c->oom; e++)
        edge_apply(c, e, 1);
    objective(c);
    bool all = n <= 2 * FA_WINDOW + 1;
    for (int pass = 0; pass < FA_PASSES && !c->oom; pass++) {
        bool moved = false;
        for (uint32_t i = 0; i < n && evals < FA_EVALS && !c->oom; i++) {
            if (!touched(c, i))
                continue;
            uint32_t span = all ? n - 1 : 2 * FA_WINDOW;
            for (uint32_t k = 0; k < span && evals < FA_EVALS; k++) {
                /* partners i+1, i-1, i+2, i-2, ... (all others when n is small) */
                uint32_t d = all ? k + 1 : k / 2 + 1;
                uint32_t j = all ? (i + d) % n : (k % 2 ? (i + n - d % n) % n : (i + d) % n);
                if (j == i)
                    continue;
                evals++;
                if (try_swap(c, i, j)) {
                    moved = true;
                    if (!touched(c, i))
                        break;
                }
            }
        }
        if (!moved)
            break;
    }
}

static tc_status fa_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    uint32_t p = req->p;
    bool top = req->op != TC_OP_ALLREDUCE;
    uint32_t n = top ? p - 1 : p;
    if (!t->n_failed || n < 2)
        return tc_dbtree_build_perm(req, s, NULL, err);
    fa_ctx c = {.t = t, .n = n, .root = req->root, .top = top, .up = req->op != TC_OP_BROADCAST,
                .down = req->op != TC_OP_REDUCE};
    size_t mp = (size_t)tc_topo_max_path(t) + 4;
    c.perm = malloc((size_t)n * sizeof *c.perm);
    c.edge = malloc((size_t)2 * n * sizeof *c.edge);
    c.inc = malloc((size_t)FA_INC * n * sizeof *c.inc);
    c.ninc = calloc(n, 1);
    c.load = calloc(t->n_links, sizeof *c.load);
    c.hcap = 64;
    c.hist = calloc(c.hcap, sizeof *c.hist);
    c.path = malloc(mp * sizeof *c.path);
    c.hpath = malloc(mp * sizeof *c.hpath);
    tc_status rc = TC_OK;
    if (!c.perm || !c.edge || !c.inc || !c.ninc || !c.load || !c.hist || !c.path || !c.hpath) {
        rc = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        c.perm[i] = top ? (req->root + 1 + i) % p : i;
    for (uint32_t which = 0; which < 2; which++)
        for (uint64_t q = 1; q <= n; q++) {
            uint64_t up = tc_dbtree_parent_pos(n, q);
            if (!up && !top)
                continue;
            uint32_t ci = tc_dbtree_index(n, which, q), e = c.nedge++;
            int32_t pi = up ? (int32_t)tc_dbtree_index(n, which, up) : -1;
            c.edge[e][0] = (int32_t)ci;
            c.edge[e][1] = pi;
            c.inc[FA_INC * ci + c.ninc[ci]++] = e;
            if (pi >= 0)
                c.inc[FA_INC * (uint32_t)pi + c.ninc[pi]++] = e;
        }
    improve(&c);
    if (c.oom)
        rc = tc_fail(err, TC_EINTERNAL, "out of memory");
    else
        rc = tc_dbtree_build_perm(req, s, c.perm, err);
out:
    free(c.perm), free(c.edge), free(c.inc), free(c.ninc), free(c.load), free(c.hist), free(c.path), free(c.hpath);
    return rc;
}

const tc_algo_impl tc_impl_dbtree_fa = {fa_valid, fa_build};
