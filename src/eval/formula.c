/*
 * formula.c - the closed-form evaluator.
 *
 * Model (docs/MODEL.md, "formula"): a schedule takes
 *     sum over phases of repeat * phase time,
 * and a phase's time is alpha plus the worst of a few affine terms
 * lat + bytes / share, one per class of transfers the phase's traffic
 * pattern produces on the topology's structure. The terms come from the
 * pattern and the structure alone, in O(levels) or O(dims) work per phase:
 * no per-rank loop, no routing, no allocation.
 *
 *  - SHIFT / XOR on a Clos: transfers fall into classes by the level of
 *    their lowest common ancestor; which levels occur and how many flows
 *    leave (or enter) a level-(j-1) subtree, and how D-mod-k spreads them
 *    over the subtree's W_j = w_1...w_j up-links (by destination mod W_j),
 *    is arithmetic on intervals of rank numbers [D-mod-k: Zahavi et al.,
 *    "Optimized InfiniBand fat-tree routing for shift all-to-all
 *    communication patterns", CCPE 2010]. A SHIFT sent by a range of ranks
 *    only (tc_phase.src_first/src_count: binomial tree levels, pipelined
 *    chain fill and drain) is the same interval arithmetic on at most four
 *    pieces of sources with one offset each, evaluated at the groups where
 *    a piece starts or ends; a XOR from a range is the full XOR with at most
 *    src_count flows per link.
 *  - SHIFT / XOR on a torus: dimension-order hops per dimension, and the
 *    flows per link bounded by the hops (every flow starts its run along a
 *    dimension at a different vertex). From a range of ranks: the full
 *    pattern's hops and loads bound them, loads capped at src_count.
 *  - TORUS (rings along dimensions), LOCAL (intra-node): one hop, or the
 *    line's way back on a mesh dimension.
 *  - GENERIC, and anything whose structure the closed forms do not cover
 *    (a rank map other than the identity, a torus shift on part of the
 *    machine): alpha-beta with the topology's bottlenecks (injection ports,
 *    bisection, largest path latency).
 * On a full non-blocking Clos under D-mod-k, and for torus rings, the result
 * equals the steps evaluator's exactly; elsewhere it is the steps result of
 * an ideal spreading, or an upper bound where the pattern mixes classes.
 */
#include <math.h>
#include <string.h>
#include "eval/eval_int.h"

#define FM_TERMS 4

/* max_i (lat[i] + bytes * inv[i]); n = 0: no transfer leaves its rank. */
typedef struct fm_shape {
    int n;
    double lat[FM_TERMS], inv[FM_TERMS];
} fm_shape;

typedef struct fm_ctx {
    const tc_topo *t;
    tc_routing routing;
    uint32_t p;
    bool identity;       /* rank r is endpoint r */
    bool have_info;
    tc_topo_info info;
    /* The last structured phase's shape: consecutive phases often share
     * their pattern (ring reduce-scatter then all-gather). */
    bool cached;
    tc_pattern c_pat;
    int64_t c_arg;
    uint32_t c_mask, c_fanout, c_first, c_count;
    fm_shape c_shape;
} fm_ctx;

static void add_term(fm_shape *sh, double lat, double inv)
{
    if (sh->n < FM_TERMS) {
        sh->lat[sh->n] = lat;
        sh->inv[sh->n] = inv;
        sh->n++;
        return;
    }
    /* Never reached with the patterns below (at most 3 terms); keep an
     * upper bound if it were. */
    int i = sh->n - 1;
    sh->lat[i] = fmax(sh->lat[i], lat);
    sh->inv[i] = fmax(sh->inv[i], inv);
}

static double shape_time(const fm_shape *sh, double bytes)
{
    double worst = 0;
    for (int i = 0; i < sh->n; i++) {
        double v = sh->lat[i] + bytes * sh->inv[i];
        if (v > worst)
            worst = v;
    }
    return worst;
}

static const tc_topo_info *ctx_info(fm_ctx *c)
{
    if (!c->have_info) {
        tc_topo_get_info(c->t, &c->info);
        c->have_info = true;
    }
    return &c->info;
}

static inline bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int high_bit(uint64_t x)
{
    int b = 0;
    while (x >>= 1)
        b++;
    return b;
}

/* Most integers of [s1, s1+l1) and [s2, s2+l2) together that share one
 * residue mod w: the most flows D-mod-k puts on one of w links when the
 * flows' destinations are those two ranges. A range of length l holds
 * floor(l/w) of every residue plus one more of the l mod w residues that
 * follow s; the two extra windows either overlap (on the circle of
 * residues) or not. */
static uint64_t max_per_residue(int64_t s1, int64_t l1, int64_t s2, int64_t l2, uint64_t w)
{
    if (l1 <= 0)
        return l2 > 0 ? ceil_div((uint64_t)l2, w) : 0;
    if (l2 <= 0)
        return ceil_div((uint64_t)l1, w);
    uint64_t r1 = (uint64_t)l1 % w, r2 = (uint64_t)l2 % w;
    uint64_t base = (uint64_t)l1 / w + (uint64_t)l2 / w;
    if (!r1 && !r2)
        return base;
    if (!r1 || !r2)
        return base + 1;
    uint64_t a = (uint64_t)s1 % w, b = (uint64_t)s2 % w;
    bool meet = (b + w - a) % w < r1 || (a + w - b) % w < r2;
    return base + (meet ? 2 : 1);
}

/* What a shift r -> (r + k) mod p (0 < k < p, rank r = endpoint r) does to
 * the groups of H consecutive endpoints (Clos subtrees, nodes): whether some
 * transfer stays inside its group, whether some leaves it, and the most
 * flows D-mod-k puts on one of the w links that leave (or enter) a group. */
typedef struct grp_stats {
    bool stay, leave;
    uint64_t per_link;
} grp_stats;

/* One group g = [gH, min(gH + H, p)). Sources below p - k move up by k
 * (region A), the others wrap down by p - k (region B); each region's
 * leaving and entering destinations form one interval. */
static void shift_group(int64_t p, int64_t k, int64_t H, uint64_t w, int64_t g, grp_stats *st)
{
    int64_t gH = g * H, gE = imin(gH + H, p), pk = p - k;
    int64_t a0 = gH, a1 = imin(gE, pk);   /* region A sources */
    int64_t b0 = imax(gH, pk), b1 = gE;   /* region B sources */
    int64_t ls1 = 0, ll1 = 0, ls2 = 0, ll2 = 0;
    if (a1 > a0) {
        int64_t lo = imax(a0 + k, gE), hi = a1 + k;
        ls1 = lo, ll1 = hi - lo;
        if (imin(a1 + k, gE) > a0 + k)
            st->stay = true;
    }
    if (b1 > b0) {
        int64_t lo = b0 - pk, hi = imin(b1 - pk, gH);
        ls2 = lo, ll2 = hi - lo;
        if (b1 - pk > imax(b0 - pk, gH))
            st->stay = true;
    }
    if (ll1 > 0 || ll2 > 0)
        st->leave = true;
    uint64_t up = max_per_residue(ls1, ll1, ls2, ll2, w);
    /* Entering: destinations in the group whose source is outside it. */
    int64_t es1 = imax(gH, k), el1 = imin(gE, gH + k) - es1;
    int64_t es2 = imax(gH, gE - pk), el2 = imin(gE, k) - es2;
    uint64_t down = max_per_residue(es1, el1, es2, el2, w);
    uint64_t m = up > down ? up : down;
    if (m > st->per_link)
        st->per_link = m;
}

static grp_stats shift_groups(uint64_t p, uint64_t k, uint64_t H, uint64_t w)
{
    grp_stats st = {false, false, 0};
    if (H >= p) {
        st.stay = true;
        return st;
    }
    if (p % H == 0 && p % w == 0) {
        /* Groups tile Z_p and residues mod w are well defined on it: the
         * shift is translation-invariant, group 0 speaks for all. With
         * k = qH + r: q = 0 leaves r of H, q = p/H - 1 leaves H - r, any
         * other q leaves all H; the destinations are consecutive. */
        uint64_t M = p / H, q = k / H, r = k % H;
        uint64_t F = q == 0 ? r : q == M - 1 ? H - r : H;
        st.stay = F < H;
        st.leave = F > 0;
        st.per_link = F ? ceil_div(F, w) : 0;
        return st;
    }
    /* Otherwise groups differ only by where they sit against k, p - k and
     * p: full groups below/above each boundary behave alike, so the first
     * of each kind, the groups straddling k and p - k and the last (partial)
     * group speak for all. */
    uint64_t last = (p - 1) / H;
    uint64_t cand[6] = {0, k / H, ceil_div(k, H), (p - k) / H, ceil_div(p - k, H), last};
    for (int i = 0; i < 6; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || cand[j] == cand[i];
        if (!dup && cand[i] <= last)
            shift_group((int64_t)p, (int64_t)k, (int64_t)H, w, (int64_t)cand[i], &st);
    }
    return st;
}

/* Most integers of n intervals [s_i, s_i + l_i) (s_i >= 0) together that
 * share one residue mod w: every interval holds floor(l_i / w) of each
 * residue and one more of the l_i mod w residues that follow s_i; the most
 * of those windows over one residue is reached at the start of one. */
static uint64_t max_per_residue_n(const int64_t *s, const int64_t *l, int n, uint64_t w)
{
    if (n == 0)
        return 0;
    if (n == 1)
        return ceil_div((uint64_t)l[0], w);
    uint64_t base = 0, best = 0, r[4], a[4];
    for (int i = 0; i < n; i++) {
        uint64_t q = (uint64_t)l[i] / w;
        base += q;
        r[i] = (uint64_t)l[i] - q * w;
        a[i] = r[i] ? (uint64_t)s[i] % w : 0;
    }
    for (int i = 0; i < n; i++) {
        if (!r[i])
            continue;
        uint64_t cnt = 0;
        for (int j = 0; j < n; j++)
            cnt += r[j] && (a[i] >= a[j] ? a[i] - a[j] : a[i] + w - a[j]) < r[j];
        if (cnt > best)
            best = cnt;
    }
    return base + best;
}

/* A shift sent only by the ranks [s, s + n) mod p (0 < n < p), as at most
 * four pieces of sources [a, b) in [0, p), each moving by d (k or k - p). */
typedef struct shift_part {
    int64_t p, k, s, n;
    int npc;
    int64_t a[4], b[4], d[4];
} shift_part;

static void shift_part_init(shift_part *sp, uint64_t p, uint64_t k, uint64_t s, uint64_t n)
{
    int64_t P = (int64_t)p, K = (int64_t)k, e = (int64_t)(s + n);
    int64_t iv[2][2] = {{(int64_t)s, e < P ? e : P}, {0, e > P ? e - P : 0}};
    sp->p = P, sp->k = K, sp->s = (int64_t)s, sp->n = (int64_t)n, sp->npc = 0;
    for (int i = 0; i < 2; i++) {
        int64_t a = iv[i][0], b = iv[i][1], cut = P - K;
        if (imin(b, cut) > a) {
            sp->a[sp->npc] = a, sp->b[sp->npc] = imin(b, cut), sp->d[sp->npc++] = K;
        }
        if (b > imax(a, cut)) {
            sp->a[sp->npc] = imax(a, cut), sp->b[sp->npc] = b, sp->d[sp->npc++] = K - P;
        }
    }
}

/* One group g = [gH, min(gH + H, p)) against a partial shift: per piece,
 * the sources inside the group and the destinations inside it are one
 * interval each, so are the leaving and the entering destinations. */
static void part_group(const shift_part *sp, int64_t H, uint64_t w, int64_t g, grp_stats *st)
{
    int64_t gH = g * H, gE = imin(gH + H, sp->p);
    int64_t ls[4], ll[4], es[4], el[4];
    int nl = 0, ne = 0;
    for (int i = 0; i < sp->npc; i++) {
        int64_t a = sp->a[i], b = sp->b[i], d = sp->d[i];
        int64_t x = imax(a, gH), y = imin(b, gE);
        if (x < y) {
            int64_t lo, hi;
            if (d > 0) {
                lo = imax(x + d, gE), hi = y + d;
                st->stay = st->stay || imin(y + d, gE) > x + d;
            } else {
                lo = x + d, hi = imin(y + d, gH);
                st->stay = st->stay || y + d > gH;
            }
            if (hi > lo)
                ls[nl] = lo, ll[nl++] = hi - lo;
        }
        int64_t u = imax(a + d, gH), v = imin(b + d, gE);
        if (u < v) {
            /* Sources d below (d > 0) or -d above the destination. */
            int64_t lo = d > 0 ? u : imax(u, gE + d), hi = d > 0 ? imin(v, gH + d) : v;
            if (hi > lo)
                es[ne] = lo, el[ne++] = hi - lo;
        }
    }
    if (nl)
        st->leave = true;
    uint64_t up = max_per_residue_n(ls, ll, nl, w), down = max_per_residue_n(es, el, ne, w);
    uint64_t m = up > down ? up : down;
    if (m > st->per_link)
        st->per_link = m;
}

/* The groups of H endpoints against a partial shift. A group with none of
 * the boundaries 0, s, s + n, p - k (sources) and k, s + k, s + n + k
 * (their destinations) inside it sends and receives one interval of one
 * piece or nothing, the same for every such group between two boundaries;
 * so the group holding the rank before each boundary b and the next group
 * (the first one at or after b) speak for all. */
static grp_stats part_groups(const shift_part *sp, uint64_t H, uint64_t w)
{
    grp_stats st = {false, false, 0};
    int64_t p = sp->p, k = sp->k, h = (int64_t)H;
    if (h >= p) {
        st.stay = true;
        return st;
    }
    int64_t last = (p - 1) / h, e = sp->s + sp->n, sk = sp->s + k, ek;
    e -= e >= p ? p : 0;
    sk -= sk >= p ? p : 0;
    ek = e + k - (e + k >= p ? p : 0);
    int64_t bnd[7] = {0, sp->s, e, p - k, k, sk, ek};
    int64_t done[14];
    int nd = 0;
    for (int i = 0; i < 7; i++) {
        int64_t q = (bnd[i] ? bnd[i] - 1 : p - 1) / h;
        int64_t cand[2] = {q, q < last ? q + 1 : 0};
        for (int j = 0; j < 2; j++) {
            bool seen = false;
            for (int m = 0; m < nd && !seen; m++)
                seen = done[m] == cand[j];
            if (seen)
                continue;
            done[nd++] = cand[j];
            part_group(sp, h, w, cand[j], &st);
        }
    }
    return st;
}

/* XOR r <-> r ^ m against groups of H consecutive endpoints: a partner lies
 * in the source's aligned block of B = 2^(hb+1) (hb the mask's top bit), so
 * B | H keeps every pair inside; a power-of-two H < B sends every pair out,
 * and a group's partners are then one aligned block of H. Other H: some
 * pairs may leave; their partners lie within (ceil(H/B) + 1) B consecutive
 * endpoints, which bounds the flows per link. */
static grp_stats xor_groups(uint64_t p, uint64_t m, uint64_t H, uint64_t w)
{
    grp_stats st = {false, false, 0};
    uint64_t B = 2ull << high_bit(m);
    if (H >= p || H % B == 0) {
        st.stay = true;
        return st;
    }
    st.leave = true;
    if (is_pow2(H)) {
        st.per_link = ceil_div(H, w);
        return st;
    }
    st.stay = true; /* unknown: both classes assumed */
    uint64_t span = (ceil_div(H, B) + 1) * B, c = ceil_div(span, w);
    st.per_link = c < H ? c : H;
    return st;
}

/* Scale-up node term: 2 node links, one flow per link for a permutation
 * whose every rank sends one transfer. */
static void node_term(const tc_topo *t, fm_shape *sh)
{
    add_term(sh, 2 * t->node_lat, 1 / t->node_bw);
}

/* The groups of H endpoints against the phase's pattern: a shift by k
 * (partial when sp is set) or a XOR by k; a XOR sent by a range of xn ranks
 * (0: all) puts at most xn flows on a link. */
static grp_stats pattern_groups(uint64_t p, bool is_xor, uint64_t k, const shift_part *sp, uint64_t xn,
                                uint64_t H, uint64_t w)
{
    if (sp)
        return part_groups(sp, H, w);
    if (!is_xor)
        return shift_groups(p, k, H, w);
    grp_stats g = xor_groups(p, k, H, w);
    if (xn && g.per_link > xn)
        g.per_link = xn;
    return g;
}

/* Clos: the fabric class at the highest occurring LCA level Lmax takes
 * 2 sum_{i<=Lmax} lat_i + bytes * max_{j<=Lmax} per_link_j / bw_j; lower
 * classes have less latency and a subset of those links, so it dominates. */
static void clos_pattern(fm_ctx *c, bool is_xor, uint64_t k, const shift_part *sp, uint64_t xn, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t p = c->p, ns = t->node_size > 1 ? t->node_size : 1;
    if (ns > 1) {
        grp_stats g = pattern_groups(p, is_xor, k, sp, xn, ns, 1);
        if (g.stay)
            node_term(t, sh);
        if (!g.leave)
            return;
    }
    double lat = 0, inv = 0;
    for (int j = 1; j <= t->levels; j++) {
        uint64_t H = t->span[j - 1], w = t->wprod[j];
        grp_stats g;
        if (H == 1)
            g = (grp_stats){false, true, 1}; /* one flow out of and into each host */
        else
            g = pattern_groups(p, is_xor, k, sp, xn, H, w);
        if (!g.leave)
            break; /* nothing leaves these subtrees, so nothing leaves larger ones */
        lat += 2 * t->level_lat[j];
        double iv = (double)g.per_link / t->level_bw[j];
        if (iv > inv)
            inv = iv;
    }
    add_term(sh, lat, inv);
}

/* Torus dimension d, every flow of a line moving by offset o (0 < o < D):
 * hops of the longest transfer and flows on the busiest link. A ring goes
 * the shorter way, so all of a line's flows go one way and each link
 * carries o of them; a tie (o = D/2) splits by source parity under dor
 * (ceil(D/4) flows per link), all positive under dor-positive. A line
 * (mesh, or size 2) sends x < D - o up by o and the rest back by D - o;
 * at most min(o, D - o) flows cover any link. */
static void torus_offset(const tc_topo *t, tc_routing r, int d, uint64_t o, uint64_t *hops, uint64_t *load)
{
    uint64_t D = t->dims[d];
    if (o == 0)
        return;
    uint64_t h, l;
    if (t->dim_cables[d] == D) {
        uint64_t f = o, b = D - o;
        if (f != b)
            h = l = f < b ? f : b;
        else {
            h = f;
            l = r == TC_ROUTE_DOR_POSITIVE ? f : ceil_div(f, 2);
        }
    } else {
        h = o > D - o ? o : D - o;
        l = o < D - o ? o : D - o;
    }
    if (h > *hops)
        *hops = h;
    if (l > *load)
        *load = l;
}

/* Torus SHIFT on all N endpoints: k in mixed radix (first dimension
 * fastest) has digit a_d; dimension d moves by a_d, or a_d + 1 where the
 * lower digits carry (possible iff k mod stride_d != 0). Every flow runs
 * along a dimension from a distinct vertex, so a link carries at most as
 * many flows as the longest run through it; with one offset per line this
 * is exact. */
static void torus_shift(fm_ctx *c, uint64_t k, uint64_t nmax, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t rem = k, hops = 0, load = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint64_t D = t->dims[d], a = rem % D, hd = 0;
        rem /= D;
        torus_offset(t, c->routing, d, a, &hd, &load);
        if (k % t->stride[d] != 0)
            torus_offset(t, c->routing, d, (a + 1) % D, &hd, &load);
        hops += hd;
    }
    if (nmax && load > nmax)
        load = nmax;
    add_term(sh, (double)hops * t->torus_lat, (double)load / t->torus_bw);
}

/* Torus XOR with every size a power of two: the mask acts on each
 * coordinate separately (digit a_d). A single-bit digit 2^b moves every
 * coordinate by 2^b (the shorter way round a ring: min(2^b, D - 2^b), a tie
 * at D/2); a several-bit digit moves by at most a_d (D/2 on a ring), and
 * links carry at most that many flows. */
static void torus_xor(fm_ctx *c, uint64_t m, uint64_t nmax, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t hops = 0, load = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint64_t D = t->dims[d], a = m / t->stride[d] % D, hd = 0;
        if (a == 0)
            continue;
        if (is_pow2(a))
            torus_offset(t, c->routing, d, a, &hd, &load);
        else {
            hd = t->dim_cables[d] == D && a > D / 2 ? D / 2 : a;
            if (hd > load)
                load = hd;
        }
        hops += hd;
    }
    if (nmax && load > nmax)
        load = nmax;
    add_term(sh, (double)hops * t->torus_lat, (double)load / t->torus_bw);
}

/* TORUS rings. A ring dimension (or one of size 2, a single cable): one hop,
 * each link carries its own direction's flow. A mesh dimension: the
 * last-to-first transfer goes D - 1 hops back on the opposite direction's
 * links, which then carry 2 flows if that direction's ring is active too,
 * and so do the links the other way back crosses. More transfers than
 * active directions (several messages to one neighbour) share that
 * neighbour's link: every ring is charged the excess, an upper bound. */
static void torus_rings(fm_ctx *c, uint32_t mask, uint32_t fanout, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint32_t ndir = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t b = mask >> (2 * d) & 3u;
        if (t->dims[d] == 2)
            ndir += b != 0;
        else
            ndir += (b & 1u) + (b >> 1);
    }
    double mult = fanout > ndir ? fanout - ndir + 1.0 : 1.0;
    double wrap_lat = 0, mesh_lat1 = 0, mesh_lat2 = 0;
    bool any = false, m1 = false, m2 = false;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t b = mask >> (2 * d) & 3u, D = t->dims[d];
        if (!b || D < 2)
            continue;
        if (D == 2 || t->dim_cables[d] == D) {
            any = true;
            wrap_lat = t->torus_lat;
        } else if (b == 3u) {
            m2 = true;
            mesh_lat2 = fmax(mesh_lat2, (D - 1) * t->torus_lat);
        } else {
            m1 = true;
            mesh_lat1 = fmax(mesh_lat1, (D - 1) * t->torus_lat);
        }
    }
    if (any)
        add_term(sh, wrap_lat, mult / t->torus_bw);
    if (m1)
        add_term(sh, mesh_lat1, mult / t->torus_bw);
    if (m2)
        add_term(sh, mesh_lat2, 2 * mult / t->torus_bw);
}

/* GENERIC: alpha + L + B with L the largest routed path latency and
 *   B = max(bytes / port_bw, rank_bytes / (min(fanout, ports) port_bw))
 * (a rank's transfers spread over at most min(fanout, ports) ports, one
 * transfer uses one). An all-to-all-like phase (2 fanout >= p - 1: peers
 * spread evenly over the others) also crosses every cut: with c of the p
 * ranks inside a cut of capacity C, c (p - c) / (p - 1) rank_bytes cross it,
 * the all-to-all cut bound of rank_bytes p / (p - 1) bytes (bound.c: Clos
 * subtrees, torus planes). Where no such cut is known (a rank map on part of
 * the machine, a torus partly used), the topology's bisection scaled to the
 * p ranks' share of the machine stands in:
 *   floor(p/2) ceil(p/2) / (p - 1) rank_bytes / (bisection min(1, p/N)). */
static double generic_time(fm_ctx *c, const tc_phase *ph)
{
    if (ph->fanout == 0 || (ph->bytes <= 0 && ph->rank_bytes <= 0))
        return 0;
    const tc_topo_info *in = ctx_info(c);
    uint32_t ports = in->ports_per_endpoint ? in->ports_per_endpoint : 1;
    double port_bw = in->injection_Bps / ports;
    uint32_t use = ph->fanout < ports ? ph->fanout : ports;
    double rb = ph->rank_bytes > ph->bytes ? ph->rank_bytes : ph->bytes;
    double B = fmax(ph->bytes / port_bw, rb / (use * port_bw));
    uint64_t p = c->p;
    if (ph->fanout > 1 && p >= 2 && 2ull * ph->fanout + 1 >= p) {
        double cut = tc_eval_cut_bound(c->t, TC_OP_ALLTOALL, c->p, rb * p / (p - 1), c->identity);
        if (cut <= 0 && in->bisection_Bps > 0) {
            double share = p < c->t->n_endpoints ? (double)p / c->t->n_endpoints : 1.0;
            cut = (double)(p / 2) * (double)((p + 1) / 2) / (double)(p - 1) * rb / (in->bisection_Bps * share);
        }
        B = fmax(B, cut);
    }
    return c->t->alpha * ph->fanout + in->max_latency_s + B;
}

/* The shape of a structured phase, or false when the closed forms do not
 * cover it (then GENERIC). */
static bool structured_shape(fm_ctx *c, const tc_phase *ph, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t p = c->p;
    memset(sh, 0, sizeof *sh);
    if (!c->identity)
        return false;
    /* SHIFT / XOR sent by part of the ranks only. */
    bool part = ph->src_count > 0 && ph->src_count < p;
    switch (ph->pat) {
    case TC_PAT_SHIFT: {
        int64_t a = ph->arg % (int64_t)p;
        uint64_t k = (uint64_t)(a < 0 ? a + (int64_t)p : a);
        if (k == 0)
            return true;
        shift_part sp;
        if (part)
            shift_part_init(&sp, p, k, ph->src_first % p, ph->src_count);
        if (t->kind == TC_TOPO_CLOS) {
            clos_pattern(c, false, k, part ? &sp : NULL, 0, sh);
            return true;
        }
        if (p != t->n_endpoints)
            return false;
        if (t->node_size > 1) {
            grp_stats g = part ? part_groups(&sp, t->node_size, 1) : shift_groups(p, k, t->node_size, 1);
            if (g.stay)
                node_term(t, sh);
            if (!g.leave)
                return true;
        }
        /* From part of the ranks: the full shift's flows include these, and
         * dimension-order routes do not depend on the other flows, so its
         * hops and loads bound theirs; no link carries more than the
         * src_count flows. */
        torus_shift(c, k, part ? ph->src_count : 0, sh);
        return true;
    }
    case TC_PAT_XOR: {
        if (ph->arg <= 0)
            return ph->arg == 0;
        uint64_t m = (uint64_t)ph->arg;
        if ((1ull << high_bit(m)) >= p)
            return true; /* every partner is >= p: nobody sends */
        if (t->kind == TC_TOPO_CLOS) {
            clos_pattern(c, true, m, NULL, part ? ph->src_count : 0, sh);
            return true;
        }
        for (int d = 0; d < t->ndims; d++)
            if (!is_pow2(t->dims[d]))
                return false;
        if (t->node_size > 1) {
            grp_stats g = xor_groups(p, m, t->node_size, 1);
            if (g.stay)
                node_term(t, sh);
            if (!g.leave)
                return true;
        }
        torus_xor(c, m, part ? ph->src_count : 0, sh);
        return true;
    }
    case TC_PAT_TORUS:
        if (t->kind != TC_TOPO_TORUS || p != t->n_endpoints)
            return false;
        torus_rings(c, ph->dims_mask, ph->fanout, sh);
        if (t->node_size > 1)
            add_term(sh, 2 * t->node_lat, (double)(ph->fanout ? ph->fanout : 1) / t->node_bw);
        return true;
    default:
        return false;
    }
}

static double phase_time(fm_ctx *c, const tc_phase *ph)
{
    const tc_topo *t = c->t;
    if (ph->pat == TC_PAT_LOCAL && c->identity && t->node_size > 1) {
        /* Each rank's transfers leave over its one node link. */
        double rb = ph->rank_bytes > ph->bytes ? ph->rank_bytes : ph->bytes;
        if (ph->fanout == 0 || rb <= 0)
            return 0;
        return t->alpha * ph->fanout + 2 * t->node_lat + rb / t->node_bw;
    }
    if (ph->pat == TC_PAT_GENERIC || ph->pat == TC_PAT_LOCAL)
        return generic_time(c, ph);
    if (!(c->cached && c->c_pat == ph->pat && c->c_arg == ph->arg && c->c_mask == ph->dims_mask &&
          c->c_fanout == ph->fanout && c->c_first == ph->src_first && c->c_count == ph->src_count)) {
        fm_shape sh;
        if (!structured_shape(c, ph, &sh))
            return generic_time(c, ph);
        c->cached = true;
        c->c_pat = ph->pat;
        c->c_arg = ph->arg;
        c->c_mask = ph->dims_mask;
        c->c_fanout = ph->fanout;
        c->c_first = ph->src_first;
        c->c_count = ph->src_count;
        c->c_shape = sh;
    }
    if (c->c_shape.n == 0)
        return 0;
    return t->alpha * ph->fanout + shape_time(&c->c_shape, ph->bytes);
}

tc_status tc_eval_formula(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{
    if (!t || !s || !time_s)
        return tc_fail(err, TC_EINTERNAL, "formula evaluator: missing topology, schedule or result");
    uint32_t p = s->req.p;
    if (p > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", p,
                       t->n_endpoints, t->n_endpoints);
    fm_ctx c;
    c.t = t;
    c.routing = o ? o->routing : TC_ROUTE_DEFAULT;
    c.p = p;
    c.have_info = false;
    c.cached = false;
    c.identity = true;
    if (o && o->rank_map) {
        /* Structure is only known for rank r on endpoint r; stops at the
         * first rank placed elsewhere. */
        for (uint32_t r = 0; r < p && c.identity; r++)
            c.identity = o->rank_map[r] == r;
    }
    double total = 0;
    for (uint32_t i = 0; i < s->nphases; i++) {
        const tc_phase *ph = &s->phases[i];
        if (ph->repeat)
            total += ph->repeat * phase_time(&c, ph);
    }
    *time_s = total;
    return TC_OK;
}
