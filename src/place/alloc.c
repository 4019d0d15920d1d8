/*
 * alloc.c - rank maps: the policies that choose a job's endpoints (first,
 * random, list, packed on a Clos, slice on a torus), the seeded history of
 * other jobs that leaves a cluster partly occupied (occupancy), and the
 * shape of a placement (leaves and pods of a Clos, the slice of a torus).
 * docs/MODEL.md, "Placement", states every rule implemented here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/place.h"

/* The history's random stream: the seed mixed with this salt ("occupanc"),
 * apart from the stream random placement draws the job from. */
#define HISTORY_SALT 0x6f63637570616e63ULL
/* The most slice shapes of one volume considered (far beyond the shapes of
 * any volume on a torus of 8 dimensions of up to 2^24 endpoints in all). */
#define MAX_SHAPES 8192
/* Consecutive history jobs that found no room before the history stops
 * filling. */
#define HISTORY_MISSES 16

/* ---- the slice's parameters ---- */

tc_status tc_place_slice_parse(const char *s, tc_job_place *jp, tc_err *err)
{
    memset(jp->shape, 0, sizeof jp->shape);
    jp->shape_ndims = 0;
    jp->ocs = 0;
    if (!s || !*s || strcmp(s, "auto") == 0)
        return TC_OK;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "slice '%.40s...' is too long", s);
    snprintf(buf, sizeof buf, "%s", s);
    if (tc_list_has_empty(buf))
        return tc_fail(err, TC_EINVAL, "invalid slice '%s': empty item between commas (expected shape=AxBxC[,ocs=K])",
                       s);
    bool seen_shape = false, seen_ocs = false;
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (strncmp(item, "shape=", 6) == 0 && !seen_shape) {
            seen_shape = true;
            const char *p = item + 6;
            while (1) {
                char *end;
                unsigned long a = strtoul(p, &end, 10);
                if (end == p || a < 1 || a > (1ul << 24) || jp->shape_ndims == TC_MAX_DIMS)
                    return tc_fail(err, TC_EINVAL,
                                   "invalid slice '%s': shape=AxBx.. takes 1 to %d positive extents, e.g. shape=2x2x4",
                                   s, TC_MAX_DIMS);
                jp->shape[jp->shape_ndims++] = (uint32_t)a;
                if (*end == 'x')
                    p = end + 1;
                else if (!*end)
                    break;
                else
                    return tc_fail(err, TC_EINVAL, "invalid slice '%s': shape=AxBx.., e.g. shape=2x2x4", s);
            }
        } else if (strncmp(item, "ocs=", 4) == 0 && !seen_ocs) {
            seen_ocs = true;
            uint32_t k;
            /* K is the edge of the cubes the optical switches join, as
             * cluster --ocs K: a cube of edge 1 is no cube of chips */
            if (tc_parse_u32(item + 4, &k, NULL) != TC_OK || k < 2 || k > 1024)
                return tc_fail(err, TC_EINVAL, "invalid slice '%s': ocs=K takes the edge K of the cubes the optical "
                                               "switches join, 2 to 1024 (TPU v4 cubes: ocs=4)",
                               s);
            jp->ocs = k;
        } else {
            return tc_fail(err, TC_EINVAL,
                           "invalid slice '%s': accepted are shape=AxBx.. and ocs=K, each once (or auto)", s);
        }
    }
    return TC_OK;
}

char *tc_place_slice_format(const tc_job_place *jp, char *buf, size_t len)
{
    if (!len)
        return buf;
    size_t n = 0;
    buf[0] = '\0';
    if (jp->shape_ndims) {
        n += (size_t)snprintf(buf + n, len - n, "shape=");
        for (int d = 0; d < jp->shape_ndims && n < len; d++)
            n += (size_t)snprintf(buf + n, len - n, "%s%u", d ? "x" : "", jp->shape[d]);
    }
    if (jp->ocs && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%socs=%u", n ? "," : "", jp->ocs);
    if (!n)
        snprintf(buf, len, "auto");
    return buf;
}

/* ---- the cluster being filled ---- */

typedef struct placer {
    const tc_topo *t;
    uint8_t *busy;        /* n_endpoints flags */
    uint32_t nfree;
    /* packed: units of allocation (scale-up nodes with node=, else
     * endpoints) at tree positions (the host slot of their first
     * endpoint) */
    uint32_t unit, nunits, npos;
    uint32_t *upos;       /* unit -> position */
    uint32_t *at;         /* position -> unit + 1 (0: none) */
    uint32_t *pre;        /* npos + 1: free units before each position */
    uint32_t *scratch[TC_MAX_LEVELS + 1]; /* level L: 2 down[L] entries */
    uint32_t *taken, ntaken;
    /* slice: prefix sums of busy over the grid, (dims[d] + 1) each */
    uint32_t *bpre;
    uint64_t bstride[TC_MAX_DIMS];
} placer;

static void placer_free(placer *pl)
{
    free(pl->busy);
    free(pl->upos);
    free(pl->at);
    free(pl->pre);
    for (int L = 0; L <= TC_MAX_LEVELS; L++)
        free(pl->scratch[L]);
    free(pl->taken);
    free(pl->bpre);
}

static tc_status placer_init(placer *pl, const tc_topo *t, tc_place_policy policy, tc_err *err)
{
    memset(pl, 0, sizeof *pl);
    pl->t = t;
    pl->nfree = t->n_endpoints;
    pl->busy = tc_calloc(t->n_endpoints, 1);
    bool ok = pl->busy != NULL;
    pl->unit = t->kind == TC_TOPO_CLOS && t->node_size >= 2 ? t->node_size : 1;
    pl->nunits = (t->n_endpoints + pl->unit - 1) / pl->unit;
    if (ok && policy == TC_PLACE_PACKED) {
        pl->npos = t->span[t->levels];
        pl->upos = malloc((size_t)pl->nunits * sizeof *pl->upos);
        pl->at = tc_calloc(pl->npos, sizeof *pl->at);
        pl->pre = malloc(((size_t)pl->npos + 1) * sizeof *pl->pre);
        pl->taken = malloc((size_t)pl->nunits * sizeof *pl->taken);
        ok = pl->upos && pl->at && pl->pre && pl->taken;
        for (int L = 1; ok && L <= t->levels; L++)
            ok = (pl->scratch[L] = malloc(2 * (size_t)t->down[L] * sizeof(uint32_t))) != NULL;
        for (uint32_t u = 0; ok && u < pl->nunits; u++) {
            uint32_t pos = tc_topo_slot(t, u * pl->unit);
            if (pos >= pl->npos || pl->at[pos]) {
                placer_free(pl);
                return tc_fail(err, TC_EINTERNAL, "internal: node %u has no slot of its own", u);
            }
            pl->upos[u] = pos;
            pl->at[pos] = u + 1;
        }
    }
    if (ok && policy == TC_PLACE_SLICE) {
        uint64_t cells = 1;
        for (int d = 0; d < t->ndims; d++) {
            pl->bstride[d] = cells;
            cells *= t->dims[d] + 1;
        }
        ok = (pl->bpre = malloc(cells * sizeof *pl->bpre)) != NULL;
    }
    if (!ok) {
        placer_free(pl);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

static void set_busy(placer *pl, uint32_t e, bool b)
{
    if (pl->busy[e] != b) {
        pl->busy[e] = b;
        pl->nfree += b ? -1u : 1u;
    }
}

/* Endpoints of unit u. */
static uint32_t unit_end(const placer *pl, uint32_t u)
{
    uint64_t e = (uint64_t)(u + 1) * pl->unit;
    return e < pl->t->n_endpoints ? (uint32_t)e : pl->t->n_endpoints;
}

static bool unit_free(const placer *pl, uint32_t u)
{
    for (uint32_t e = u * pl->unit; e < unit_end(pl, u); e++)
        if (pl->busy[e])
            return false;
    return true;
}

/* ---- first and random ---- */

static tc_status alloc_first(placer *pl, uint32_t n, uint32_t *out)
{
    uint32_t k = 0;
    for (uint32_t e = 0; e < pl->t->n_endpoints && k < n; e++)
        if (!pl->busy[e])
            out[k++] = e;
    for (uint32_t i = 0; i < n; i++)
        set_busy(pl, out[i], true);
    return TC_OK;
}

/* The first n draws of a Fisher-Yates shuffle of the free endpoints: a
 * uniform choice of n of them in uniform order (with every endpoint free,
 * the map random placement has always drawn from the seed). */
static tc_status alloc_random(placer *pl, uint32_t n, uint64_t *x, uint32_t *out, tc_err *err)
{
    uint32_t nf = 0, *f = malloc((size_t)pl->nfree * sizeof *f);
    if (!f)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t e = 0; e < pl->t->n_endpoints; e++)
        if (!pl->busy[e])
            f[nf++] = e;
    for (uint32_t i = 0; i < n; i++) {
        *x = tc_mix64(*x);
        uint32_t j = i + (uint32_t)(((*x >> 11) * (double)(nf - i)) / 9007199254740992.0);
        uint32_t tmp = f[i];
        f[i] = f[j];
        f[j] = tmp;
        out[i] = f[i];
    }
    free(f);
    for (uint32_t i = 0; i < n; i++)
        set_busy(pl, out[i], true);
    return TC_OK;
}

/* ---- packed: the tree, level by level ---- */

static uint32_t subtree_free(const placer *pl, int L, uint32_t idx)
{
    uint64_t a = (uint64_t)idx * pl->t->span[L], b = a + pl->t->span[L];
    a = a < pl->npos ? a : pl->npos;
    b = b < pl->npos ? b : pl->npos;
    return pl->pre[b] - pl->pre[a];
}

/* Takes need free units under the level-L subtree idx (dry: only counts)
 * and returns the leaves that touches. At a leaf: its free units in
 * position order. Above: the children by free units, most first (ties:
 * lower index), each taken whole until the rest fits in one child; of the
 * children it fits in, the one touching the fewest leaves, then the one
 * with the fewest free units (best fit), then the lowest index. */
static uint32_t pick(placer *pl, int L, uint32_t idx, uint32_t need, bool dry)
{
    if (need == 0)
        return 0;
    const tc_topo *t = pl->t;
    if (L <= 1) {
        uint64_t a = (uint64_t)idx * t->span[L], b = a + t->span[L];
        for (uint64_t pos = a; !dry && pos < b && pos < pl->npos && need; pos++) {
            uint32_t u = pl->at[pos];
            if (u && unit_free(pl, u - 1)) {
                pl->taken[pl->ntaken++] = u - 1;
                for (uint32_t e = (u - 1) * pl->unit; e < unit_end(pl, u - 1); e++)
                    set_busy(pl, e, true);
                need--;
            }
        }
        return 1;
    }
    uint32_t m = t->down[L], *fr = pl->scratch[L], *order = fr + m;
    for (uint32_t j = 0; j < m; j++) {
        fr[j] = subtree_free(pl, L - 1, idx * m + j);
        uint32_t k = j;
        while (k > 0 && fr[order[k - 1]] < fr[j]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = j;
    }
    uint32_t leaves = 0, rem = need;
    for (uint32_t i = 0; i < m && rem; i++) {
        uint32_t c = order[i];
        if (fr[c] >= rem) {
            uint32_t best = c, bcost = UINT32_MAX;
            /* the children's counts: a dry run below overwrites scratch of level L - 1 only */
            for (uint32_t k = i; k < m && fr[order[k]] >= rem; k++) {
                uint32_t cost = pick(pl, L - 1, idx * m + order[k], rem, true);
                if (cost < bcost || (cost == bcost && (fr[order[k]] < fr[best] ||
                                                      (fr[order[k]] == fr[best] && order[k] < best))))
                    best = order[k], bcost = cost;
            }
            leaves += pick(pl, L - 1, idx * m + best, rem, dry);
            rem = 0;
            break;
        }
        leaves += pick(pl, L - 1, idx * m + c, fr[c], dry);
        rem -= fr[c];
    }
    return leaves;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static tc_status alloc_packed(placer *pl, uint32_t n, uint32_t *out, tc_err *err)
{
    uint32_t k = (n + pl->unit - 1) / pl->unit, nf = 0;
    pl->pre[0] = 0;
    for (uint32_t pos = 0; pos < pl->npos; pos++) {
        bool f = pl->at[pos] && unit_free(pl, pl->at[pos] - 1);
        nf += f;
        pl->pre[pos + 1] = pl->pre[pos] + f;
    }
    if (k > nf)
        return tc_fail(err, TC_EINVAL,
                       "%u ranks need %u whole scale-up nodes of %u endpoints: only %u are free", n, k, pl->unit, nf);
    pl->ntaken = 0;
    pick(pl, pl->t->levels, 0, k, false);
    qsort(pl->taken, pl->ntaken, sizeof *pl->taken, cmp_u32);
    uint32_t i = 0;
    for (uint32_t j = 0; j < pl->ntaken && i < n; j++)
        for (uint32_t e = pl->taken[j] * pl->unit; e < unit_end(pl, pl->taken[j]) && i < n; e++)
            out[i++] = e;
    /* the rest of a node the job takes part of stays free */
    for (uint32_t j = 0; j < pl->ntaken; j++)
        for (uint32_t e = pl->taken[j] * pl->unit; e < unit_end(pl, pl->taken[j]); e++)
            set_busy(pl, e, false);
    for (uint32_t j = 0; j < i; j++)
        set_busy(pl, out[j], true);
    return i == n ? TC_OK : tc_fail(err, TC_EINTERNAL, "internal: packed found %u of %u endpoints", i, n);
}

/* ---- slice: cuboids of the torus ---- */

typedef struct shape {
    uint32_t a[TC_MAX_DIMS];
    double surface;   /* sum over dimensions of volume / extent: half the box's surface */
    uint32_t largest;
} shape;

static int cmp_shape(const void *pa, const void *pb)
{
    const shape *x = pa, *y = pb;
    if (x->surface != y->surface)
        return x->surface < y->surface ? -1 : 1;
    if (x->largest != y->largest)
        return x->largest < y->largest ? -1 : 1;
    for (int d = 0; d < TC_MAX_DIMS; d++)
        if (x->a[d] != y->a[d])
            return x->a[d] < y->a[d] ? -1 : 1;
    return 0;
}

static void enum_shapes(const tc_topo *t, int d, uint32_t vol, uint32_t *a, shape *out, size_t *n)
{
    if (d == t->ndims - 1) {
        if (vol > t->dims[d] || *n == MAX_SHAPES)
            return;
        a[d] = vol;
        shape *s = &out[(*n)++];
        memset(s, 0, sizeof *s);
        uint64_t total = 1;
        for (int i = 0; i < t->ndims; i++)
            total *= a[i];
        for (int i = 0; i < t->ndims; i++) {
            s->a[i] = a[i];
            s->surface += (double)total / a[i];
            s->largest = a[i] > s->largest ? a[i] : s->largest;
        }
        return;
    }
    for (uint32_t x = 1; x <= t->dims[d] && x <= vol; x++)
        if (vol % x == 0) {
            a[d] = x;
            enum_shapes(t, d + 1, vol / x, a, out, n);
        }
}

/* The shapes a slice of n ranks may take, most compact first: the
 * smallest surface, then the smallest largest extent, then the
 * lexicographically smallest extents (first dimension smallest). */
static tc_status slice_shapes(const tc_topo *t, const tc_job_place *jp, uint32_t n, shape **out, size_t *ns,
                              tc_err *err)
{
    *ns = 0;
    *out = NULL;
    if (jp->shape_ndims) {
        shape *s = tc_calloc(1, sizeof *s);
        if (!s)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (int d = 0; d < t->ndims; d++)
            s->a[d] = d < jp->shape_ndims ? jp->shape[d] : 1;
        *out = s;
        *ns = 1;
        return TC_OK;
    }
    shape *v = malloc(MAX_SHAPES * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t a[TC_MAX_DIMS];
    enum_shapes(t, 0, n, a, v, ns);
    qsort(v, *ns, sizeof *v, cmp_shape);
    *out = v;
    return TC_OK;
}

tc_status tc_place_slice_shapes(const tc_topo *t, uint32_t n, uint32_t **extents, size_t *ns, tc_err *err)
{
    *extents = NULL;
    *ns = 0;
    if (t->kind != TC_TOPO_TORUS)
        return tc_fail(err, TC_EINVAL, "slice shapes need a torus");
    tc_job_place jp = {.policy = TC_PLACE_SLICE, .ranks = n};
    shape *v;
    size_t k;
    tc_status st = slice_shapes(t, &jp, n, &v, &k, err);
    if (st)
        return st;
    uint32_t *e = malloc((k ? k : 1) * TC_MAX_DIMS * sizeof *e);
    if (!e) {
        free(v);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        memcpy(e + i * TC_MAX_DIMS, v[i].a, sizeof v[i].a);
    free(v);
    *extents = e;
    *ns = k;
    return TC_OK;
}

static void busy_prefix(placer *pl)
{
    const tc_topo *t = pl->t;
    uint64_t cells = pl->bstride[t->ndims - 1] * (t->dims[t->ndims - 1] + 1);
    memset(pl->bpre, 0, cells * sizeof *pl->bpre);
    for (uint32_t e = 0; e < t->n_endpoints; e++) {
        uint64_t i = 0;
        for (int d = 0; d < t->ndims; d++)
            i += (uint64_t)(e / t->stride[d] % t->dims[d] + 1) * pl->bstride[d];
        pl->bpre[i] = pl->busy[e];
    }
    for (int d = 0; d < t->ndims; d++)
        for (uint64_t i = 0; i < cells; i++)
            if (i / pl->bstride[d] % (t->dims[d] + 1) > 0)
                pl->bpre[i] += pl->bpre[i - pl->bstride[d]];
}

/* Busy endpoints in the box of extents a at origin o. */
static uint32_t box_busy(const placer *pl, const uint32_t *o, const uint32_t *a)
{
    int nd = pl->t->ndims;
    int64_t sum = 0;
    for (uint32_t mask = 0; mask < (1u << nd); mask++) {
        uint64_t i = 0;
        int sign = 1;
        for (int d = 0; d < nd; d++) {
            if (mask & (1u << d))
                i += (uint64_t)(o[d] + a[d]) * pl->bstride[d];
            else {
                i += (uint64_t)o[d] * pl->bstride[d];
                sign = -sign;
            }
        }
        sum += sign * (int64_t)pl->bpre[i];
    }
    return (uint32_t)sum;
}

/* The first origin, in generator order (first dimension fastest), where
 * a box of extents a is free; false if none. */
static bool free_origin(const placer *pl, const uint32_t *a, uint32_t *o)
{
    const tc_topo *t = pl->t;
    for (int d = 0; d < t->ndims; d++)
        o[d] = 0;
    while (1) {
        if (box_busy(pl, o, a) == 0)
            return true;
        int d = 0;
        while (d < t->ndims && ++o[d] > t->dims[d] - a[d])
            o[d++] = 0;
        if (d == t->ndims)
            return false;
    }
}

static const char *dims_str(const uint32_t *a, int nd, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < nd && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%u", d ? "x" : "", a[d]);
    return buf;
}

static tc_status alloc_slice(placer *pl, const tc_job_place *jp, uint32_t n, uint32_t *out, tc_err *err)
{
    const tc_topo *t = pl->t;
    char b1[96], b2[96];
    if (jp->shape_ndims) {
        uint64_t vol = 1;
        for (int d = 0; d < jp->shape_ndims; d++)
            vol *= jp->shape[d];
        if (jp->shape_ndims > t->ndims)
            return tc_fail(err, TC_EINVAL, "slice shape %s has %d dimensions but the torus %s has %d",
                           dims_str(jp->shape, jp->shape_ndims, b1, sizeof b1), jp->shape_ndims,
                           dims_str(t->dims, t->ndims, b2, sizeof b2), t->ndims);
        for (int d = 0; d < jp->shape_ndims; d++)
            if (jp->shape[d] > t->dims[d])
                return tc_fail(err, TC_EINVAL, "slice shape %s does not fit the torus %s: extent %u along dimension %d "
                                               "exceeds its %u",
                               dims_str(jp->shape, jp->shape_ndims, b1, sizeof b1),
                               dims_str(t->dims, t->ndims, b2, sizeof b2), jp->shape[d], d, t->dims[d]);
        if (vol != n)
            return tc_fail(err, TC_EINVAL, "slice shape %s holds %llu endpoints but the job has %u ranks",
                           dims_str(jp->shape, jp->shape_ndims, b1, sizeof b1), (unsigned long long)vol, n);
    }
    shape *v;
    size_t ns;
    tc_status st = slice_shapes(t, jp, n, &v, &ns, err);
    if (st)
        return st;
    if (ns == 0) {
        free(v);
        return tc_fail(err, TC_EINVAL, "no slice of %u ranks fits the torus %s: no extents within it multiply to %u", n,
                       dims_str(t->dims, t->ndims, b2, sizeof b2), n);
    }
    busy_prefix(pl);
    uint32_t o[TC_MAX_DIMS];
    size_t k = 0;
    while (k < ns && !free_origin(pl, v[k].a, o))
        k++;
    if (k == ns) {
        st = tc_fail(err, TC_EINVAL, "no free box for a slice of %u ranks (%s%s) among the %u free endpoints", n,
                     ns == 1 ? "shape " : "tried ", ns == 1 ? dims_str(v[0].a, t->ndims, b1, sizeof b1) : "every shape",
                     pl->nfree);
        free(v);
        return st;
    }
    /* ranks: first dimension fastest */
    uint32_t c[TC_MAX_DIMS] = {0};
    for (uint32_t r = 0; r < n; r++) {
        uint32_t e = 0;
        for (int d = 0; d < t->ndims; d++)
            e += (o[d] + c[d]) * t->stride[d];
        out[r] = e;
        for (int d = 0; d < t->ndims && ++c[d] == v[k].a[d]; d++)
            c[d] = 0;
    }
    free(v);
    for (uint32_t r = 0; r < n; r++)
        set_busy(pl, out[r], true);
    return TC_OK;
}

static tc_status alloc(placer *pl, const tc_job_place *jp, uint32_t n, uint64_t *x, uint32_t *out, tc_err *err)
{
    switch (jp->policy) {
    case TC_PLACE_RANDOM: return alloc_random(pl, n, x, out, err);
    case TC_PLACE_PACKED: return alloc_packed(pl, n, out, err);
    case TC_PLACE_SLICE: return alloc_slice(pl, jp, n, out, err);
    default: return alloc_first(pl, n, out);
    }
}

/* ---- the history ---- */

typedef struct hist_job {
    uint32_t first, n;    /* into the endpoints array */
} hist_job;

/* Jobs of 2^k units (k uniform in 0..K, 2^K the largest power of two at
 * most an eighth of the cluster's units, at least 1) placed one after
 * another by jp's policy (a slice of any shape of that volume) until the
 * cluster is halfway from the occupancy to full (or HISTORY_MISSES jobs in
 * a row found no room), then, in an order drawn from the seed, each job
 * released that leaves at least the occupancy held. */
static tc_status history(placer *pl, const tc_job_place *jp, uint32_t *njobs, tc_err *err)
{
    const tc_topo *t = pl->t;
    uint32_t U = pl->nunits, K = 0;
    while ((2u << K) <= U / 8)
        K++;
    uint32_t target = (uint32_t)floor(jp->occupancy * t->n_endpoints);
    uint32_t hi = target + (t->n_endpoints - target) / 2;
    uint64_t x = jp->seed ^ HISTORY_SALT;
    size_t cap = 64, nj = 0, used = 0;
    hist_job *jobs = malloc(cap * sizeof *jobs);
    uint32_t *eps = malloc((size_t)t->n_endpoints * sizeof *eps);
    tc_job_place hjp = *jp;
    hjp.shape_ndims = 0;  /* history slices take any shape */
    if (!jobs || !eps) {
        free(jobs);
        free(eps);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    tc_status st = TC_OK;
    for (uint32_t miss = 0; st == TC_OK && t->n_endpoints - pl->nfree < hi && miss < HISTORY_MISSES;) {
        x = tc_mix64(x);
        uint32_t k = (uint32_t)(((x >> 11) * (double)(K + 1)) / 9007199254740992.0);
        uint64_t n = ((uint64_t)1 << k) * pl->unit;
        tc_err e2;
        if (n > pl->nfree || alloc(pl, &hjp, (uint32_t)n, &x, eps + used, &e2) != TC_OK) {
            miss++;
            continue;
        }
        miss = 0;
        if (nj == cap) {
            hist_job *w = realloc(jobs, 2 * cap * sizeof *w);
            if (!w) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
                break;
            }
            jobs = w, cap *= 2;
        }
        jobs[nj++] = (hist_job){(uint32_t)used, (uint32_t)n};
        used += n;
    }
    /* releases, in a shuffled order */
    for (size_t i = 0; st == TC_OK && i < nj; i++) {
        x = tc_mix64(x);
        size_t j = i + (size_t)(((x >> 11) * (double)(nj - i)) / 9007199254740992.0);
        hist_job tmp = jobs[i];
        jobs[i] = jobs[j];
        jobs[j] = tmp;
    }
    *njobs = (uint32_t)nj;
    for (size_t i = 0; st == TC_OK && i < nj; i++) {
        uint32_t held = t->n_endpoints - pl->nfree;
        if (held - jobs[i].n < target)
            continue;
        for (uint32_t r = 0; r < jobs[i].n; r++)
            set_busy(pl, eps[jobs[i].first + r], false);
        (*njobs)--;
    }
    free(jobs);
    free(eps);
    return st;
}

/* Distinct endpoints inside the topology. */
static tc_status check_list(const tc_topo *t, const uint32_t *v, uint32_t n, tc_err *err)
{
    uint8_t *seen = tc_calloc(t->n_endpoints, 1);
    if (!seen)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < n && st == TC_OK; i++) {
        if (v[i] >= t->n_endpoints)
            st = tc_fail(err, TC_EINVAL, "endpoint %u does not exist (the topology has 0 to %u)", v[i],
                         t->n_endpoints - 1);
        else if (seen[v[i]]++)
            st = tc_fail(err, TC_EINVAL, "endpoint %u listed twice", v[i]);
    }
    free(seen);
    return st;
}

tc_status tc_place_map_shape(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p,
                             tc_place_shape *shape, tc_err *err)
{
    return tc_place_map_free(t, jp, NULL, map, p, shape, err);
}

tc_status tc_place_map_free(const tc_topo *t, const tc_job_place *jp, uint8_t *busy, uint32_t **map, uint32_t *p,
                            tc_place_shape *shape, tc_err *err)
{
    *map = NULL;
    *p = 0;
    if (!(jp->occupancy >= 0 && jp->occupancy < 1))
        return tc_fail(err, TC_EINVAL, "occupancy %g is out of range: expected 0 <= F < 1 (the fraction of the "
                                       "cluster other jobs hold)",
                       jp->occupancy);
    if (jp->policy == TC_PLACE_LIST && jp->occupancy > 0)
        return tc_fail(err, TC_EINVAL, "an occupancy needs a placement policy that chooses the endpoints (first, "
                                       "random, packed, slice), not list");
    if ((jp->policy == TC_PLACE_PACKED || jp->policy == TC_PLACE_SLICE) && t->kind == TC_TOPO_MULTIDC)
        return tc_fail(err, TC_EINVAL, "placement %s needs a %s: on a multidc use first (each pod's endpoints are "
                                       "consecutive), random or list",
                       jp->policy == TC_PLACE_PACKED ? "packed" : "slice",
                       jp->policy == TC_PLACE_PACKED ? "Clos" : "torus");
    if (jp->policy == TC_PLACE_PACKED && t->kind != TC_TOPO_CLOS)
        return tc_fail(err, TC_EINVAL, "placement packed needs a Clos (it fills leaves, then pods): on a %s",
                       t->kind == TC_TOPO_FULL ? "full mesh every endpoint is one link from every other: use first, "
                                                 "random or list"
                                               : "torus use slice");
    if (jp->policy == TC_PLACE_SLICE && t->kind != TC_TOPO_TORUS)
        return tc_fail(err, TC_EINVAL, "placement slice needs a torus: on a %s",
                       t->kind == TC_TOPO_FULL ? "full mesh use first, random or list" : "Clos use packed");
    if ((jp->shape_ndims || jp->ocs) && jp->policy != TC_PLACE_SLICE)
        return tc_fail(err, TC_EINVAL, "a slice shape or ocs applies to placement slice only");
    uint32_t n = jp->policy == TC_PLACE_LIST ? jp->nendpoints : jp->ranks;
    if (!n && jp->policy == TC_PLACE_SLICE && jp->shape_ndims) {
        uint64_t vol = 1;
        for (int d = 0; d < jp->shape_ndims; d++)
            vol *= jp->shape[d];
        n = vol < UINT32_MAX ? (uint32_t)vol : UINT32_MAX;
    }
    if (!n && jp->policy != TC_PLACE_LIST)
        n = t->n_endpoints;
    if (n == 0)
        return tc_fail(err, TC_EINVAL, "a job needs at least one rank");
    if (n > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", n,
                       t->n_endpoints, t->n_endpoints);
    uint32_t *m = malloc((size_t)n * sizeof *m);
    if (!m)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t njobs = 0, occupied = 0;
    tc_status st = TC_OK;
    if (jp->policy == TC_PLACE_LIST) {
        if (!jp->endpoints)
            st = tc_fail(err, TC_EINVAL, "placement 'list' needs its endpoints (--endpoints 0-63)");
        else {
            memcpy(m, jp->endpoints, (size_t)n * sizeof *m);
            st = check_list(t, m, n, err);
        }
    } else {
        placer pl;
        if ((st = placer_init(&pl, t, jp->policy, err))) {
            free(m);
            return st;
        }
        for (uint32_t e = 0; busy && e < t->n_endpoints; e++)
            set_busy(&pl, e, busy[e] != 0);
        uint32_t before = t->n_endpoints - pl.nfree;
        if (jp->occupancy > 0)
            st = history(&pl, jp, &njobs, err);
        occupied = t->n_endpoints - pl.nfree;
        if (st == TC_OK && n > pl.nfree && jp->occupancy > 0)
            st = tc_fail(err, TC_EINVAL,
                         "%u ranks but only %u of the %u endpoints are free at occupancy %g (seed %llu): expected "
                         "at most %u",
                         n, pl.nfree, t->n_endpoints, jp->occupancy, (unsigned long long)jp->seed, pl.nfree);
        else if (st == TC_OK && n > pl.nfree)
            st = tc_fail(err, TC_EINVAL,
                         "%u ranks but only %u of the %u endpoints are free (the jobs placed before it hold %u): "
                         "expected at most %u",
                         n, pl.nfree, t->n_endpoints, before, pl.nfree);
        uint64_t x = jp->seed;
        if (st == TC_OK)
            st = alloc(&pl, jp, n, &x, m, err);
        if (st && jp->occupancy > 0 && st == TC_EINVAL && !strstr(err->msg, "occupancy")) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            st = tc_fail(err, st, "%s (occupancy %g, seed %llu)", msg, jp->occupancy, (unsigned long long)jp->seed);
        }
        placer_free(&pl);
    }
    if (st) {
        free(m);
        return st;
    }
    for (uint32_t r = 0; busy && r < n; r++)
        busy[m[r]] = 1;
    if (shape) {
        if ((st = tc_place_shape_of(t, m, n, jp->ocs, shape, err))) {
            free(m);
            return st;
        }
        shape->policy = jp->policy;
        shape->occupancy = jp->occupancy;
        shape->occupied = occupied;
        shape->history_jobs = njobs;
    }
    *map = m;
    *p = n;
    return TC_OK;
}

tc_status tc_place_map(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p, tc_err *err)
{
    return tc_place_map_shape(t, jp, map, p, NULL, err);
}

/* ---- the shape of a placement ---- */

/* Distinct values of v (n entries, each < range); *oom set when out of
 * memory. */
static uint32_t distinct(const uint32_t *v, uint32_t n, uint32_t range, bool *oom)
{
    uint8_t *seen = tc_calloc(range ? range : 1, 1);
    uint32_t k = 0;
    if (!seen) {
        *oom = true;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++)
        if (v[i] < range && !seen[v[i]]++)
            k++;
    free(seen);
    return k;
}

tc_status tc_place_shape_of(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_place_shape *out,
                            tc_err *err)
{
    memset(out, 0, sizeof *out);
    out->ranks = p;
    out->kind = t->kind;
    out->ocs = ocs;
    uint32_t *v = tc_calloc((size_t)p ? p : 1, sizeof *v);
    bool oom = false;
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (t->kind == TC_TOPO_MULTIDC) {
        for (uint32_t r = 0; r < p; r++)
            v[r] = map[r] / t->pod_endpoints;
        out->pods = distinct(v, p, t->n_pods + 1, &oom);
        for (uint32_t r = 0; r < p && t->node_size > 1; r++)
            v[r] = map[r] / t->node_size;
        if (t->node_size > 1)
            out->nodes = distinct(v, p, t->n_endpoints / t->node_size + 1, &oom);
    } else if (t->kind == TC_TOPO_CLOS) {
        uint32_t slots = t->span[t->levels];
        for (int what = 0; what < 3; what++) {
            uint32_t div = what == 0 ? t->span[1] : what == 1 ? t->span[2] : t->node_size;
            if (what == 1 && t->levels < 2)
                continue;
            if (what == 2 && t->node_size < 2)
                continue;
            for (uint32_t r = 0; r < p; r++)
                v[r] = what == 2 ? map[r] / div : tc_topo_slot(t, map[r]) / div;
            uint32_t k = distinct(v, p, what == 2 ? t->n_endpoints / div + 1 : slots / div + 1, &oom);
            *(what == 0 ? &out->leaves : what == 1 ? &out->pods : &out->nodes) = k;
        }
    } else if (t->kind == TC_TOPO_FULL) {
        /* every endpoint is one link from every other: no shape to report */
    } else {
        out->ndims = t->ndims;
        uint32_t lo[TC_MAX_DIMS], hi[TC_MAX_DIMS];
        for (int d = 0; d < t->ndims; d++)
            lo[d] = UINT32_MAX, hi[d] = 0;
        for (uint32_t r = 0; r < p; r++)
            for (int d = 0; d < t->ndims; d++) {
                uint32_t c = map[r] / t->stride[d] % t->dims[d];
                lo[d] = c < lo[d] ? c : lo[d];
                hi[d] = c > hi[d] ? c : hi[d];
            }
        uint64_t cells = 1;
        bool all_ocs = ocs > 0;
        for (int d = 0; d < t->ndims; d++) {
            out->origin[d] = lo[d];
            out->extent[d] = hi[d] - lo[d] + 1;
            cells *= out->extent[d];
            all_ocs = all_ocs && out->extent[d] % ocs == 0;
        }
        /* p distinct endpoints inside a box of p cells fill it */
        out->slice = cells == p;
        for (int d = 0; out->slice && d < t->ndims; d++)
            out->wrap[d] = all_ocs || (out->extent[d] == t->dims[d] && t->wrap[d]);
        out->ocs_wrap = out->slice && all_ocs;
        /* without wraparound of its own, a slice spanning at least half
         * way round a ring of the topology is routed the shorter way,
         * round the ring outside the slice, between its endpoints that
         * far apart (a tie half way round goes one way or the other by
         * the source) */
        for (int d = 0; out->slice && !out->ocs_wrap && d < t->ndims; d++) {
            uint32_t half = (t->dims[d] + 1) / 2;
            bool ring = t->dim_cables[d] == t->dims[d] && t->dims[d] > 2;
            if (ring && !out->wrap[d] && out->extent[d] - 1 >= half)
                out->out[d] = half;
        }
    }
    free(v);
    return oom ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
}

char *tc_place_shape_format(const tc_place_shape *sh, char *buf, size_t len)
{
    if (!len)
        return buf;
    size_t n = 0;
    char b[96];
#define PUT(...) (n += n < len ? (size_t)snprintf(buf + n, len - n, __VA_ARGS__) : 0)
    PUT("%s, %u rank%s: ", tc_place_name(sh->policy), sh->ranks, sh->ranks == 1 ? "" : "s");
    if (sh->kind == TC_TOPO_MULTIDC) {
        PUT("%u pod%s (datacenters)", sh->pods, sh->pods == 1 ? "" : "s");
        if (sh->nodes)
            PUT(", %u node%s", sh->nodes, sh->nodes == 1 ? "" : "s");
    } else if (sh->kind == TC_TOPO_CLOS) {
        PUT("%u lea%s", sh->leaves, sh->leaves == 1 ? "f" : "ves");
        if (sh->pods)
            PUT(", %u pod%s", sh->pods, sh->pods == 1 ? "" : "s");
        if (sh->nodes)
            PUT(", %u node%s", sh->nodes, sh->nodes == 1 ? "" : "s");
    } else if (sh->kind == TC_TOPO_FULL) {
        PUT("%u endpoint%s of a full mesh (each pair on its own link)", sh->ranks, sh->ranks == 1 ? "" : "s");
    } else if (sh->slice) {
        PUT("slice %s at (", dims_str(sh->extent, sh->ndims, b, sizeof b));
        for (int d = 0; d < sh->ndims; d++)
            PUT("%s%u", d ? "," : "", sh->origin[d]);
        PUT("), wraparound");
        int nout = 0;
        for (int d = 0; d < sh->ndims; d++) {
            PUT(" %c %s", d < 3 ? "xyz"[d] : (char)('0' + d), sh->wrap[d] ? "yes" : sh->out[d] ? "outside" : "no");
            nout += sh->out[d] > 0;
        }
        for (int d = 0, k = 0; d < sh->ndims; d++) {
            if (!sh->out[d])
                continue;
            if (k == 0)
                PUT(" (routed the shorter way, round the torus through routers outside the slice on links other "
                    "jobs may use: its endpoints %u or more apart along %c",
                    sh->out[d], d < 3 ? "xyz"[d] : (char)('0' + d));
            else
                PUT(", %u or more along %c", sh->out[d], d < 3 ? "xyz"[d] : (char)('0' + d));
            if (++k == nout)
                PUT(")");
        }
        /* the dimensions of its own torus: those it spans more than one coordinate of */
        uint32_t own[TC_MAX_DIMS];
        int nown = 0;
        for (int d = 0; d < sh->ndims; d++)
            if (sh->extent[d] > 1)
                own[nown++] = sh->extent[d];
        if (sh->ocs_wrap && nown)
            PUT(" (by the optical switches: the job runs on the slice's own torus, torus:dims=%s with this "
                "topology's link parameters, sharing no link with other jobs)",
                dims_str(own, nown, b, sizeof b));
        else if (sh->ocs && !sh->ocs_wrap)
            PUT(" (ocs=%u: not every extent is a multiple of %u, so the optical switches add no wraparound)", sh->ocs,
                sh->ocs);
    } else {
        PUT("not a slice (bounding box %s)", dims_str(sh->extent, sh->ndims, b, sizeof b));
    }
    if (sh->occupancy > 0)
        PUT("; occupancy %g: %u endpoints held by %u other job%s before it", sh->occupancy, sh->occupied,
            sh->history_jobs, sh->history_jobs == 1 ? "" : "s");
#undef PUT
    return buf;
}

/* ---- where a job on part of a torus runs ---- */

tc_status tc_place_slice_run(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_slice_run *out,
                             tc_err *err)
{
    memset(out, 0, sizeof *out);
    out->axes.kind = TC_GROUP_NONE;
    if (t->kind != TC_TOPO_TORUS || p < 2 || !map)
        return TC_OK;
    tc_place_shape *sh = &out->shape;
    tc_status st = tc_place_shape_of(t, map, p, ocs, sh, err);
    if (st || !sh->slice)
        return st;
    if (sh->ocs_wrap) {
        bool whole = p == t->n_endpoints;
        for (int d = 0; d < t->ndims; d++)
            whole = whole && (t->dim_cables[d] == t->dims[d] || t->dims[d] == 2);
        if (whole) /* the slice's own torus is the topology itself */
            return TC_OK;
        st = tc_topo_torus_box(t, sh->origin, sh->extent, true, &out->topo, err);
        if (st == TC_EINVAL) { /* the box cuts the topology's scale-up nodes */
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err ? err->msg : "");
            return tc_fail(err, st, "slice with ocs=%u (the job runs on the slice's own torus): %s; give a slice "
                                    "shape or origin that holds whole nodes, or no ocs",
                           ocs, m);
        }
        if (st)
            return st;
        if (!(out->map = malloc((size_t)p * sizeof *out->map))) {
            tc_slice_run_free(out);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        for (uint32_t r = 0; r < p; r++)
            out->map[r] = tc_topo_box_endpoint(out->topo, map[r]);
        return TC_OK;
    }
    if (p == t->n_endpoints)
        return TC_OK;
    /* The implicit group numbers the slice's ranks by their coordinates
     * (first dimension fastest); a job whose ranks are in another order
     * runs as placed, its order kept. */
    for (uint32_t r = 0; r < p; r++) {
        uint64_t idx = 0, mul = 1;
        for (int d = 0; d < t->ndims; d++) {
            idx += (uint64_t)(map[r] / t->stride[d] % t->dims[d] - sh->origin[d]) * mul;
            mul *= sh->extent[d];
        }
        if (idx != r)
            return TC_OK;
    }
    out->axes.kind = TC_GROUP_AXES;
    for (int d = 0; d < t->ndims; d++)
        if (sh->extent[d] > 1)
            out->axes.k |= 1u << d; /* the dimensions the job spans */
    return TC_OK;
}

void tc_slice_run_free(tc_slice_run *sr)
{
    if (!sr)
        return;
    tc_topo_free(sr->topo);
    free(sr->map);
    sr->topo = NULL;
    sr->map = NULL;
}
