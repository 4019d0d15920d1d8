/*
 * formula.c - the formula evaluator: a closed form where it is exact, the
 * routed graph elsewhere (docs/MODEL.md, "formula").
 *
 * A schedule takes the sum over phases of repeat * phase time. A phase has
 * a closed form only where it provably equals the steps evaluator under the
 * same routing:
 *  - SHIFT / XOR on a Clos under D-mod-k: transfers fall into classes by the
 *    level of their lowest common ancestor; how many flows leave (or enter)
 *    a level-(j-1) subtree and how D-mod-k spreads them over its W_j
 *    up-links is interval arithmetic on rank numbers [Zahavi et al., CCPE
 *    2010]. The expression is exact where the busiest links carry one flow
 *    or every flow is of one class (clos_pattern says which).
 *  - ALL (the complete exchange) on a Clos under D-mod-k: per-link counts
 *    from residues, and the longest path through each link.
 *  - ALL over every endpoint of a torus or mesh under dimension order: the
 *    busiest link of each dimension and direction by counting, per line,
 *    the coordinate pairs whose way crosses it.
 *  - SHIFT, XOR and ALL on a full mesh (no scale-up nodes): every transfer
 *    has its pair's own link, which no other transfer of the step shares,
 *    so a phase that sends anything takes lat + hop_lat + bytes / bw
 *    (after its fanout's alphas).
 * Every other phase, any rank map but the identity, and any degraded link:
 * the steps path, tc_steps_phase_sweep, one routing for every size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval/eval_int.h"

#define FM_TERMS (2 * TC_MAX_DIMS > TC_MAX_LEVELS + 2 ? 2 * TC_MAX_DIMS : TC_MAX_LEVELS + 2)

/* max_i (lat[i] + bytes * inv[i]); n = 0: no transfer leaves its rank. */
typedef struct fm_shape {
    int n;
    double lat[FM_TERMS], inv[FM_TERMS];
} fm_shape;

typedef struct fm_ctx {
    const tc_topo *t;
    tc_routing routing;
    tc_routing cut_routing; /* tc_eval_opts.cut_routing */
    uint32_t p;
    uint32_t parts;      /* ranks and switch participants */
    const uint32_t *rank_map;
    bool closed_ok;      /* identity map, no degraded link, D-mod-k on a Clos */
    tc_steps_ws *ws;     /* the graph path, made on first use */
    const double *alphas; /* per size (tc_eval_opts.alphas), or NULL */
} fm_ctx;

static void add_term(fm_shape *sh, double lat, double inv)
{
    if (sh->n < FM_TERMS) {
        sh->lat[sh->n] = lat;
        sh->inv[sh->n] = inv;
        sh->n++;
        return;
    }
    /* Never reached with the patterns below (at most 2 per torus
     * dimension or one per Clos level); keep an upper bound if it were. */
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
    /* Powers of two (most fabrics) by masks: divisions are most of the
     * time of a partial shift's closed form. */
    bool p2 = is_pow2(w);
    int sh = p2 ? high_bit(w) : 0;
    for (int i = 0; i < n; i++) {
        uint64_t q = p2 ? (uint64_t)l[i] >> sh : (uint64_t)l[i] / w;
        base += q;
        r[i] = (uint64_t)l[i] - q * w;
        a[i] = r[i] ? (p2 ? (uint64_t)s[i] & (w - 1) : (uint64_t)s[i] % w) : 0;
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
    /* Two common shapes without the walk below (binomial trees on aligned
     * subtrees). Whole groups move by whole groups: each sends its H
     * transfers to H consecutive ranks of another group. Or the sources and
     * their destinations (no wrap) all lie in one group: nothing leaves. */
    if (p % h == 0 && sp->s % h == 0 && sp->n % h == 0 && k % h == 0) {
        st.leave = true;
        st.per_link = ceil_div(H, w);
        return st;
    }
    int64_t ds = sp->s + k - (sp->s + k >= p ? p : 0);
    if (sp->s + sp->n <= p && ds + sp->n <= p && sp->s / h == (sp->s + sp->n - 1) / h && ds / h == sp->s / h &&
        (ds + sp->n - 1) / h == sp->s / h) {
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

/* Scale-up node term: 2 node links and the node switch between them, one
 * flow per link for a permutation whose every rank sends one transfer. */
static void node_term(const tc_topo *t, fm_shape *sh)
{
    add_term(sh, 2 * t->node_lat + t->node_hop_lat, 1 / t->node_bw);
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
 * 2 sum_{i<=Lmax} lat_i + (2 Lmax - 1) hop_lat (tc_topo_clos_path_lat) +
 * bytes * max_{j<=Lmax} per_link_j / bw_j; lower classes have less latency
 * and a subset of those links, so it dominates. */
static bool clos_pattern(fm_ctx *c, bool is_xor, uint64_t k, const shift_part *sp, uint64_t xn, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t p = c->p, ns = t->node_size > 1 ? t->node_size : 1;
    /* One class: every flow climbs to the same level, so the busiest link
     * of every level carries a flow of the longest latency, and the
     * expression below is the steps time, not a bound. */
    bool one_class = true;
    if (ns > 1) {
        grp_stats g = pattern_groups(p, is_xor, k, sp, xn, ns, 1);
        one_class = !(g.stay && g.leave);
        if (g.stay)
            node_term(t, sh);
        if (!g.leave)
            return one_class;
    }
    double inv = 0, floor_inv = 0;
    int top = 0;
    for (int j = 1; j <= t->levels; j++) {
        uint64_t H = t->span[j - 1], w = t->wprod[j];
        grp_stats g;
        if (H == 1)
            g = (grp_stats){false, true, 1}; /* one flow out of and into each host */
        else
            g = pattern_groups(p, is_xor, k, sp, xn, H, w);
        if (!g.leave)
            break; /* nothing leaves these subtrees, so nothing leaves larger ones */
        one_class = one_class && !g.stay;
        top = j;
        double iv = (double)g.per_link / t->level_bw[j];
        if (iv > inv)
            inv = iv;
        if (1 / t->level_bw[j] > floor_inv)
            floor_inv = 1 / t->level_bw[j];
    }
    add_term(sh, tc_topo_clos_path_lat(t, top), inv);
    /* The expression bounds every flow from above (the longest path, the
     * busiest link of any level it climbs through), and a flow of the top
     * class crosses every one of those levels with at least itself on each
     * link: at least lat + bytes max_j 1 / bw_j. Where the two meet, or
     * where every flow is of that class (the busiest link of each level then
     * carries one), it is the steps time exactly. A XOR from a range takes
     * the full XOR's classes, some of which its senders may not have: a
     * bound only, never claimed exact. */
    return !(is_xor && xn) && (inv == floor_inv || one_class);
}

/* How many x in [0, n) have x mod W == r. */
static int64_t res_below(int64_t n, int64_t W, int64_t r)
{
    return n > r ? (n - r - 1) / W + 1 : 0;
}

static int64_t res_in(int64_t lo, int64_t hi, int64_t W, int64_t r)
{
    return hi > lo ? res_below(hi, W, r) - res_below(lo, W, r) : 0;
}

/* The ranks [lo, hi) of the level-(L-1) subtree holding rank x. */
static void subtree(const tc_topo *t, int64_t p, int64_t x, int L, int64_t *lo, int64_t *hi)
{
    int64_t H = t->span[L - 1];
    *lo = x / H * H;
    *hi = imin(*lo + H, p);
}

/* A complete exchange (every rank sends b to every other) on a Clos under
 * D-mod-k. A transfer's time is max over its links of lat + b c_l / B_l (c_l
 * flows on link l), so the slowest transfer takes max over links of
 * (the longest path through l) + b c_l / B_l: per link, from counts.
 * D-mod-k takes a flow to d up link d mod W_j of each level-(j-1) subtree it
 * leaves and down link d mod W_j into the one that holds d: the up link r
 * of subtree X carries |X| x (ranks outside X of residue r) flows, the down
 * link r carries (ranks outside X) x (ranks in X of residue r). The longest
 * path through a link climbs to the highest level whose subtree around X
 * still leaves a rank outside it (of residue r, going up). One term per
 * level of that highest climb. */
static void complete_exchange(fm_ctx *c, fm_shape *sh)
{
    const tc_topo *t = c->t;
    int64_t p = c->p;
    int h = t->levels;
    double inv[TC_MAX_LEVELS + 1] = {0};
    bool has[TC_MAX_LEVELS + 1] = {false};
    for (int j = 1; j <= h; j++) {
        int64_t H = t->span[j - 1], W = t->wprod[j];
        double bw = t->level_bw[j];
        for (int64_t lo = 0; lo < p; lo += H) {
            int64_t hi = imin(lo + H, p), nx = hi - lo;
            int top_any = 0; /* highest level with a rank outside the subtree around X */
            for (int L = h; L >= j && !top_any; L--) {
                int64_t ylo, yhi;
                subtree(t, p, lo, L, &ylo, &yhi);
                if (yhi - ylo < p)
                    top_any = L;
            }
            if (!top_any)
                continue; /* every rank is inside X: nothing crosses its links */
            for (int64_t r = 0; r < W; r++) {
                int64_t in_r = res_in(lo, hi, W, r), out_r = res_below(p, W, r) - in_r;
                if (out_r > 0) {
                    int L = j;
                    for (int k = h; k > j; k--) {
                        int64_t ylo, yhi;
                        subtree(t, p, lo, k, &ylo, &yhi);
                        if (res_below(p, W, r) - res_in(ylo, yhi, W, r) > 0) {
                            L = k;
                            break;
                        }
                    }
                    inv[L] = fmax(inv[L], (double)(nx * out_r) / bw);
                    has[L] = true;
                }
                if (in_r > 0) {
                    inv[top_any] = fmax(inv[top_any], (double)((p - nx) * in_r) / bw);
                    has[top_any] = true;
                }
            }
        }
    }
    for (int L = 1; L <= h; L++)
        if (has[L])
            add_term(sh, tc_topo_clos_path_lat(t, L), inv[L]);
}

/* The most hops a route takes along dimension d of a torus, in either
 * direction (a ring: half way round; a line: end to end). */
static uint32_t dim_max_hops(const tc_topo *t, int d)
{
    uint32_t k = t->dims[d];
    return t->dim_cables[d] == k ? k / 2 : k - 1;
}

/* A complete exchange over every endpoint of a torus under dimension-order
 * routing (tc_torus_route). Routing dimension d, a pair's route runs along
 * the line that holds the destination's coordinates in the dimensions
 * already routed and the source's in the rest, so every line of dimension d
 * carries the pairs of (N/k) source-destination combinations for each pair
 * (a, b) of its coordinates, and a link's count is N/k times the number of
 * (a, b) whose way along the line crosses it:
 *  - a line (no wraparound, or size 2): link x -> x+1 is crossed by
 *    (x+1)(k-1-x) of them, most in the middle, floor(k/2) ceil(k/2);
 *  - a ring of odd k: every offset 1..m = (k-1)/2 goes its short way, and
 *    an offset of delta hops crosses each link of its direction delta times
 *    over the k starting points: m(m+1)/2 per link either way;
 *  - a ring of even k: offsets 1..k/2-1 as above, and the tie k/2 goes +
 *    from an even coordinate and - from an odd one under dor (k/2
 *    consecutive starting points cross a link, at most ceil(k/4) of them
 *    even, or odd), + from all under dor-positive (k/2, none the other way).
 * A transfer's time is lat + b max over its links (count / bw), each link's
 * lat the cable's and the router it enters (torus_lat + hop_lat); every
 * coordinate of the other dimensions is free on a link's line, so the
 * longest route through the busiest link of (d, direction) takes the most
 * hops along d in that direction plus the most along every other
 * dimension: one term per dimension and direction. */
static void torus_complete_exchange(fm_ctx *c, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t n = t->n_endpoints;
    uint32_t all_hops = 0;
    for (int d = 0; d < t->ndims; d++)
        all_hops += dim_max_hops(t, d);
    for (int d = 0; d < t->ndims; d++) {
        uint64_t k = t->dims[d], cnt[2], hops[2];
        uint32_t other = all_hops - dim_max_hops(t, d);
        if (t->dim_cables[d] != k) {
            cnt[0] = cnt[1] = (k / 2) * ((k + 1) / 2);
            hops[0] = hops[1] = k - 1;
        } else if (k % 2) {
            uint64_t m = (k - 1) / 2;
            cnt[0] = cnt[1] = m * (m + 1) / 2;
            hops[0] = hops[1] = m;
        } else {
            uint64_t m = k / 2 - 1, base = m * (m + 1) / 2;
            if (c->routing == TC_ROUTE_DOR_POSITIVE) {
                cnt[0] = base + k / 2, hops[0] = k / 2;
                cnt[1] = base, hops[1] = m;
            } else {
                cnt[0] = cnt[1] = base + (k + 2) / 4;
                hops[0] = hops[1] = k / 2;
            }
        }
        for (int dir = 0; dir < 2; dir++)
            if (cnt[dir])
                add_term(sh, (double)(hops[dir] + other) * (t->torus_lat + t->hop_lat),
                         (double)(n / k * cnt[dir]) / t->torus_bw);
    }
}

/* A full mesh (rank r on endpoint r, no scale-up nodes): the transfers of
 * a SHIFT, an XOR or a complete exchange go between distinct ordered pairs,
 * each on the pair's own link, so none shares a link with another; the
 * phase takes one link's latency and bytes / bw where anything is sent.
 * A partial XOR or complete exchange is left to the steps path. */
static bool full_pattern(fm_ctx *c, const tc_phase *ph, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t p = c->p;
    if (t->node_size > 1 || p < 2)
        return false;
    bool part = ph->src_count > 0 && ph->src_count < p, sends;
    if (ph->pat == TC_PAT_SHIFT) {
        int64_t a = ph->arg % (int64_t)p;
        sends = a != 0; /* a partial shift has src_count >= 1 senders */
    } else if (ph->pat == TC_PAT_XOR && !part) {
        if (ph->arg < 0)
            return false;
        uint64_t m = (uint64_t)ph->arg;
        /* rank 2^hb (hb m's high bit) has partner m - 2^hb < 2^hb; every
         * partner is >= p when 2^hb >= p */
        sends = m != 0 && (1ull << high_bit(m)) < p;
    } else if (ph->pat == TC_PAT_ALL && !part) {
        sends = true;
    } else {
        return false;
    }
    if (sends)
        add_term(sh, t->torus_lat + t->hop_lat, 1 / t->torus_bw);
    return true;
}

/* The exact closed form of a phase, when it has one: ranks on their own
 * endpoints, no degraded link, and a SHIFT or XOR on a Clos routed by
 * D-mod-k with every flow in one class (clos_pattern), a complete exchange
 * on a Clos under D-mod-k, or a complete exchange over a whole torus under
 * dimension order. Everything else is evaluated on the routed graph. */
static bool exact_shape(fm_ctx *c, const tc_phase *ph, fm_shape *sh)
{
    const tc_topo *t = c->t;
    uint64_t p = c->p;
    sh->n = 0; /* add_term fills the terms it counts */
    if (!c->closed_ok)
        return false;
    if (t->kind == TC_TOPO_TORUS) {
        if (ph->pat != TC_PAT_ALL || t->node_size > 1 || p != t->n_endpoints || p < 2)
            return false;
        torus_complete_exchange(c, sh);
        return true;
    }
    if (t->kind == TC_TOPO_FULL)
        return full_pattern(c, ph, sh);
    if (t->kind != TC_TOPO_CLOS)
        return false;
    if (ph->pat == TC_PAT_ALL) {
        if (t->node_size > 1 || p < 2)
            return false;
        complete_exchange(c, sh);
        return true;
    }
    bool part = ph->src_count > 0 && ph->src_count < p;
    if (ph->pat == TC_PAT_SHIFT) {
        int64_t a = ph->arg % (int64_t)p;
        uint64_t k = (uint64_t)(a < 0 ? a + (int64_t)p : a);
        if (k == 0)
            return true;
        shift_part sp;
        if (part)
            shift_part_init(&sp, p, k, ph->src_first % p, ph->src_count);
        return clos_pattern(c, false, k, part ? &sp : NULL, 0, sh);
    }
    if (ph->pat == TC_PAT_XOR) {
        if (ph->arg <= 0)
            return ph->arg == 0;
        uint64_t m = (uint64_t)ph->arg;
        if ((1ull << high_bit(m)) >= p)
            return true; /* every partner is >= p: nobody sends */
        return clos_pattern(c, true, m, NULL, part ? ph->src_count : 0, sh);
    }
    return false;
}

static tc_status phase_times(fm_ctx *c, const tc_sched *s, uint32_t i, const double *scale, size_t n, double *out,
                             tc_phase_eval *pe, tc_err *err)
{
    const tc_phase *ph = &s->phases[i];
    fm_shape sh;
    if (exact_shape(c, ph, &sh)) {
        for (size_t k = 0; k < n; k++)
            out[k] = sh.n ? (c->alphas ? c->alphas[k] : c->t->alpha) * ph->fanout +
                                shape_time(&sh, ph->bytes * scale[k])
                         : 0;
        if (pe) {
            pe->closed_form = true;
            pe->bottleneck = UINT32_MAX;
            int b = 0;
            for (int j = 1; j < sh.n; j++)
                if (sh.lat[j] + ph->bytes * sh.inv[j] > sh.lat[b] + ph->bytes * sh.inv[b])
                    b = j;
            snprintf(pe->binds, sizeof pe->binds, sh.n == 0 ? "nothing (no transfer leaves its rank)"
                                                 : sh.inv[b] * ph->bytes >= sh.lat[b] ? "bandwidth"
                                                                                      : "latency");
        }
        return TC_OK;
    }
    if (!c->ws && !(c->ws = tc_steps_ws_new(c->t, c->parts)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = c->routing, .rank_map = c->rank_map, .alphas = c->alphas,
                      .cut_routing = c->cut_routing};
    uint32_t bn = UINT32_MAX;
    tc_status st = tc_steps_phase_sweep(c->ws, c->t, s, &o, i, scale, n, out, &bn, err);
    if (st == TC_OK && pe) {
        pe->closed_form = false;
        pe->bottleneck = bn == TC_BOTTLENECK_CAP ? UINT32_MAX : bn;
        if (bn == UINT32_MAX)
            snprintf(pe->binds, sizeof pe->binds, "latency");
        else if (bn == TC_BOTTLENECK_CAP)
            snprintf(pe->binds, sizeof pe->binds, "the protocol's rate cap");
        else
            tc_topo_link_name(c->t, bn, pe->binds, sizeof pe->binds);
    }
    return st;
}

typedef struct fm_phase_ctx {
    fm_ctx *c;
    const tc_sched *s;
    const double *scale;
    size_t n;
} fm_phase_ctx;

static tc_status fm_phase_fn(void *ctx, uint32_t i, double *out, tc_err *err)
{
    fm_phase_ctx *f = ctx;
    return phase_times(f->c, f->s, i, f->scale, f->n, out, NULL, err);
}

static void ctx_init(fm_ctx *c, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->routing = tc_eval_routing(TC_MODE_FORMULA, t, o ? o->routing : TC_ROUTE_DEFAULT);
    c->p = s->req.p;
    c->parts = tc_sched_parts(s);
    c->rank_map = o ? o->rank_map : NULL;
    c->alphas = o ? o->alphas : NULL;
    c->cut_routing = o ? o->cut_routing : TC_ROUTE_DEFAULT;
    bool identity = true;
    for (uint32_t r = 0; c->rank_map && r < c->p && identity; r++)
        identity = c->rank_map[r] == r;
    /* Rails: ranks are not host slots (the steps path routes them). */
    /* A reduction cost (reduce_bw=) is charged per received transfer by
     * the steps path, which an operation that reduces takes. */
    c->closed_ok = identity && !t->hslot && !s->proto && t->n_degraded == 0 && t->n_failed == 0 &&
                   (t->kind != TC_TOPO_CLOS || c->routing == TC_ROUTE_DMODK) &&
                   !(tc_op_reduces(s->req.op) && tc_eval_gamma(t, s) > 0);
}

static tc_status formula_run(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, const double *sizes, size_t n,
                             double *times, tc_phase_eval *pe, tc_err *err)
{
    if (!t || !s || !times)
        return tc_fail(err, TC_EINTERNAL, "formula evaluator: missing topology, schedule or result");
    if (s->req.p > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", s->req.p,
                       t->n_endpoints, t->n_endpoints);
    fm_ctx c;
    ctx_init(&c, t, s, o);
    double *scale = tc_calloc(n, sizeof *scale), *tmp = tc_calloc(n, sizeof *tmp);
    tc_status st = scale && tmp ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    double lat = 0;
    if (st == TC_OK && s->proto) {
        if (!c.ws && !(c.ws = tc_steps_ws_new(t, c.parts)))
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        tc_eval_opts oo = {.mode = TC_MODE_FORMULA, .routing = c.routing, .rank_map = c.rank_map,
                           .cut_routing = c.cut_routing};
        if (st == TC_OK)
            st = tc_steps_nccl_latency(c.ws, t, s, &oo, &lat, err);
    }
    for (size_t k = 0; k < n && st == TC_OK; k++) {
        scale[k] = tc_sched_scale(s, sizes[k]);
        times[k] = lat; /* an NCCL protocol's latency (0 for the others) */
    }
    /* without a phase-by-phase account, nested runs where the graph costs
     * the phases (not closed forms) */
    fm_phase_ctx fc = {&c, s, scale, n};
    if (!pe && st == TC_OK && s->pipe_hops) {
        /* NCCL's protocols have no closed form: the routed graph, each
         * lane's pipeline (phase_times' path) */
        tc_eval_opts oo = {.mode = TC_MODE_FORMULA, .routing = c.routing, .rank_map = c.rank_map, .alphas = c.alphas,
                           .cut_routing = c.cut_routing};
        if (!c.ws && !(c.ws = tc_steps_ws_new(t, c.parts)))
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        else
            st = tc_steps_pipeline(c.ws, t, s, &oo, scale, n, times, err);
    } else if (!pe && st == TC_OK)
        st = tc_steps_sum_phases(s, !c.closed_ok, fm_phase_fn, &fc, n, times, err);
    for (uint32_t i = 0; pe && i < s->nphases && st == TC_OK; i++) {
        if (!s->phases[i].repeat)
            continue;
        if ((st = phase_times(&c, s, i, scale, n, tmp, &pe[i], err)))
            break;
        for (size_t k = 0; k < n; k++)
            times[k] += s->phases[i].repeat * tmp[k];
        pe[i].time_s = tmp[0];
        pe[i].repeat = s->phases[i].repeat;
    }
    tc_steps_ws_free(c.ws);
    free(scale);
    free(tmp);
    return st;
}

tc_status tc_eval_formula_sweep(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, const double *sizes,
                                size_t n, double *times, tc_err *err)
{
    return formula_run(t, s, o, sizes, n, times, NULL, err);
}

tc_status tc_eval_formula(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{
    return s ? formula_run(t, s, o, &s->req.bytes, 1, time_s, NULL, err)
             : tc_fail(err, TC_EINTERNAL, "formula evaluator: missing schedule");
}

tc_status tc_eval_formula_phases(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, tc_phase_eval *pe,
                                 double *time_s, tc_err *err)
{
    memset(pe, 0, s->nphases * sizeof *pe);
    return formula_run(t, s, o, &s->req.bytes, 1, time_s, pe, err);
}
