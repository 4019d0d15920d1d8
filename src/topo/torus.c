/*
 * torus.c - k-ary n-cubes with per-dimension wraparound (a dimension without
 * it is a mesh line), and dimension-order routing.
 *
 * Model: endpoints are the routers, numbered first dimension fastest. Along
 * each dimension every line of vertices is a ring of `size` cables, or a
 * line of size - 1 cables without wraparound; a dimension of size 2 has a
 * single cable between its two vertices, wraparound or not (two cables
 * between the same pair would be one port counted twice).
 */
#include <math.h>
#include <string.h>
#include "topo_int.h"

/* "1x1x0": one 0 or 1 per dimension. */
static tc_status read_wrap(tc_spec *sp, tc_topo *t, tc_err *err)
{
    for (int d = 0; d < t->ndims; d++)
        t->wrap[d] = 1;
    const char *s = tc_spec_get(sp, "wrap");
    if (!s)
        return TC_OK;
    int n = 0;
    for (const char *c = s;; c += 2) {
        if ((c[0] != '0' && c[0] != '1') || (c[1] != 'x' && c[1] != '\0'))
            return tc_fail(err, TC_EINVAL, "torus wrap='%s': expected 0 or 1 per dimension joined by 'x', e.g. wrap=1x1x0", s);
        if (n < TC_MAX_DIMS)
            t->wrap[n] = (uint8_t)(c[0] == '1');
        n++;
        if (c[1] == '\0')
            break;
    }
    if (n != t->ndims)
        return tc_fail(err, TC_EINVAL, "torus wrap='%s' has %d values for %d dimensions: give one 0 or 1 per dimension", s, n,
                       t->ndims);
    return TC_OK;
}

tc_status tc_torus_layout(tc_topo *t, uint64_t *fabric_links, tc_err *err)
{
    uint64_t n = 1;
    for (int d = 0; d < t->ndims; d++)
        n *= t->dims[d];
    if (n > TC_TOPO_MAX_VERTICES)
        return tc_fail(err, TC_EINVAL, "torus too large: more than %u endpoints", TC_TOPO_MAX_VERTICES);
    t->n_endpoints = (uint32_t)n;
    uint64_t links = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d];
        t->stride[d] = d == 0 ? 1 : t->stride[d - 1] * t->dims[d - 1];
        t->dim_cables[d] = t->wrap[d] && size > 2 ? size : size - 1;
        t->plus_lbase[d] = (uint32_t)links;
        t->minus_lbase[d] = (uint32_t)links + 1;
        links += 2 * (n / size) * t->dim_cables[d];
        if (links > TC_TOPO_MAX_LINKS)
            return tc_fail(err, TC_EINVAL, "torus too large: %llu links, at most %u", (unsigned long long)links,
                           TC_TOPO_MAX_LINKS);
    }
    *fabric_links = links;
    return TC_OK;
}

tc_status tc_torus_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err)
{
    t->kind = TC_TOPO_TORUS;
    if (!tc_spec_get(sp, "dims"))
        return tc_fail(err, TC_EINVAL, "torus spec needs dims=AxBx.. (each size at least 2), e.g. torus:dims=8x8x8");
    tc_status st = tc_topo_get_list(sp, "torus", "dims", t->dims, TC_MAX_DIMS, &t->ndims, err);
    if (st != TC_OK)
        return st;
    uint64_t n = 1;
    for (int d = 0; d < t->ndims; d++) {
        if (t->dims[d] < 2)
            return tc_fail(err, TC_EINVAL, "torus dimension %d has size %u: every size must be at least 2, e.g. dims=8x8", d,
                           t->dims[d]);
        n *= t->dims[d];
        if (n > TC_TOPO_MAX_VERTICES)
            return tc_fail(err, TC_EINVAL, "torus too large: more than %u endpoints", TC_TOPO_MAX_VERTICES);
    }
    st = read_wrap(sp, t, err);
    if (st != TC_OK)
        return st;
    if ((st = tc_torus_layout(t, fabric_links, err)) != TC_OK)
        return st;
    t->torus_bw = TC_TOPO_DEFAULT_BW;
    t->torus_lat = TC_TOPO_DEFAULT_LAT;
    st = tc_topo_get_rate(sp, "torus", "bw", &t->torus_bw, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, "torus", "lat", &t->torus_lat, NULL, err);
    return st;
}

void tc_torus_fill(tc_topo *t)
{
    /* Every link enters a router: a route of h links passes through h
     * routers, every one but the source's own (topo.h, "Latency"). */
    double lat = t->torus_lat + t->hop_lat;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], st = t->stride[d], ncab = t->dim_cables[d];
        uint32_t lines = t->n_endpoints / size;
        tc_link *l = t->links + t->plus_lbase[d];
        for (uint32_t line = 0; line < lines; line++) {
            uint32_t v0 = line / st * st * size + line % st;
            for (uint32_t x = 0; x < ncab; x++) {
                uint32_t a = v0 + x * st, b = v0 + (x + 1 == size ? 0 : x + 1) * st;
                *l++ = (tc_link){a, b, t->torus_bw, lat, TC_LINK_FABRIC, (uint8_t)(d + 1), +1};
                *l++ = (tc_link){b, a, t->torus_bw, lat, TC_LINK_FABRIC, (uint8_t)(d + 1), -1};
            }
        }
    }
}

static uint32_t line_of(const tc_topo *t, uint32_t v, int d)
{
    uint32_t st = t->stride[d];
    return v / (st * t->dims[d]) * st + v % st;
}

uint32_t tc_topo_torus_link(const tc_topo *t, uint32_t v, int d, int dir)
{
    if (!t || t->kind != TC_TOPO_TORUS || d < 0 || d >= t->ndims || v >= t->n_endpoints)
        return UINT32_MAX;
    uint32_t size = t->dims[d], ncab = t->dim_cables[d];
    uint32_t x = v / t->stride[d] % size;
    uint32_t base = t->plus_lbase[d] + 2 * line_of(t, v, d) * ncab;
    if (dir > 0)
        return x < ncab ? base + 2 * x : UINT32_MAX;
    if (x > 0)
        return base + 2 * (x - 1) + 1;
    return ncab == size ? base + 2 * (size - 1) + 1 : UINT32_MAX;
}

/* Dimension order, dimension 0 first, the shorter way round; a tie (half
 * way round an even ring) goes + from an even source coordinate and - from
 * an odd one under dor, so opposite pairs use both directions, always +
 * under dor-positive. A line (no wraparound, or size 2) has one way. */
/* The direction dimension order takes in dimension d from coordinate xs
 * to xd (xs != xd), and its hops: the one way along a line, the shorter
 * way round a ring, a tie as the routing says (above). */
static int order_dir(const tc_topo *t, int d, uint32_t xs, uint32_t xd, tc_routing r, uint32_t *hops)
{
    uint32_t size = t->dims[d];
    if (t->dim_cables[d] != size) {
        *hops = xd > xs ? xd - xs : xs - xd;
        return xd > xs ? 1 : -1;
    }
    uint32_t fwd = (xd + size - xs) % size, bwd = size - fwd;
    int dir = fwd != bwd ? (fwd < bwd ? 1 : -1) : r == TC_ROUTE_DOR_POSITIVE || xs % 2 == 0 ? 1 : -1;
    *hops = dir > 0 ? fwd : bwd;
    return dir;
}

uint32_t tc_torus_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t n = 0, cur = src;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], st = t->stride[d], ncab = t->dim_cables[d];
        uint32_t xs = cur / st % size, xd = dst / st % size;
        if (xs == xd)
            continue;
        uint32_t hops;
        int dir = order_dir(t, d, xs, xd, r, &hops);
        uint32_t base = t->plus_lbase[d] + 2 * line_of(t, cur, d) * ncab;
        uint32_t x = xs;
        for (uint32_t h = 0; h < hops; h++) {
            if (dir > 0) {
                links[n++] = base + 2 * x;
                x = x + 1 == size ? 0 : x + 1;
            } else {
                x = x == 0 ? size - 1 : x - 1;
                links[n++] = base + 2 * x + 1;
            }
        }
        cur = cur - xs * st + xd * st;
    }
    return n;
}

void tc_torus_info(const tc_topo *t, tc_topo_info *info)
{
    uint32_t n = t->n_endpoints, diam = 0, ports = 0;
    double cut = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d];
        bool ring = t->dim_cables[d] == size;
        diam += ring ? size / 2 : size - 1;
        /* a mesh's corner has one port in each dimension: the least any
         * endpoint has, which the injection figure and bound take */
        ports += ring && size > 2 ? 2 : 1;
        /* A plane across dimension d severs one cable per line, two where
         * the line is a ring; the longest dimension gives the smallest cut,
         * but a mesh dimension can undercut a longer ring, hence the min. */
        double c = (double)(n / size) * (ring ? 2 : 1) * t->torus_bw;
        if (d == 0 || c < cut)
            cut = c;
    }
    info->diameter = diam;
    info->ports_per_endpoint = ports;
    info->injection_Bps = ports * t->torus_bw;
    info->bisection_Bps = cut;
    info->min_latency_s = n >= 2 ? t->torus_lat + t->hop_lat : 0;
    info->max_latency_s = diam * (t->torus_lat + t->hop_lat);
}

/* The bisection with the links as they are: the cheapest plane pair (a
 * ring) or middle plane (a mesh) across one dimension, each direction
 * summed over the lines' severed links. */
double tc_torus_bisection_as_is(const tc_topo *t)
{
    uint32_t n = t->n_endpoints;
    double best = INFINITY;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], ncab = t->dim_cables[d], lines = n / size;
        bool ring = ncab == size;
        /* a ring's planes x and x + half: every distinct pair; a mesh's
         * middle cable, either of the two of an odd size */
        uint32_t half = size / 2, x0 = ring ? 0 : half - 1;
        uint32_t x1 = ring ? (size % 2 ? size : half) : (size % 2 ? half + 1 : half);
        for (uint32_t x = x0; x < x1; x++) {
            double out = 0, in = 0;
            for (uint32_t l = 0; l < lines; l++) {
                uint32_t base = t->plus_lbase[d] + 2 * l * ncab;
                /* cable x: + link out of [x+1 .. x+half] is its - link */
                in += t->links[base + 2 * x].bw, out += t->links[base + 2 * x + 1].bw;
                if (ring) {
                    uint32_t y = (x + half) % size;
                    out += t->links[base + 2 * y].bw, in += t->links[base + 2 * y + 1].bw;
                }
            }
            best = fmin(best, fmin(out, in));
        }
    }
    return isfinite(best) ? best : 0;
}

void tc_torus_spec(const tc_topo *t, char *buf, size_t len)
{
    char a[96];
    tc_topo_put(buf, len, "torus:dims=%s", tc_topo_list_str(t->dims, t->ndims, a, sizeof a));
    bool all = true;
    for (int d = 0; d < t->ndims; d++)
        all &= t->wrap[d] != 0;
    if (!all) {
        tc_topo_put(buf, len, ",wrap=");
        for (int d = 0; d < t->ndims; d++)
            tc_topo_put(buf, len, "%s%d", d ? "x" : "", t->wrap[d]);
    }
    tc_topo_put(buf, len, ",bw=%s", tc_topo_rate_str(t->torus_bw, a, sizeof a));
    tc_topo_put(buf, len, ",lat=%s", tc_topo_time_str(t->torus_lat, a, sizeof a));
}

const char *tc_torus_vertex_name(const tc_topo *t, uint32_t v, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    /* a box (tc_topo_torus_box) names its vertices by the parent's coordinates */
    bool box = t->box_link != NULL;
    uint32_t e = box ? tc_topo_box_parent_endpoint(t, v) : v, st = 1;
    int nd = box ? t->box_pndims : t->ndims;
    for (int d = 0; d < nd && off < len; d++) {
        uint32_t size = box ? t->box_pdims[d] : t->dims[d];
        int k = snprintf(buf + off, len - off, "%s%u", d ? "," : "(", e / st % size);
        off += k > 0 ? (size_t)k : 0;
        st *= size;
    }
    if (off < len)
        snprintf(buf + off, len - off, ")");
    return buf;
}

/* The vertex a torus link leads to. */
static uint32_t link_dst(const tc_topo *t, uint32_t l)
{
    return t->links[l].dst;
}

static bool alive(const tc_topo *t, uint32_t l)
{
    return l != UINT32_MAX && !tc_topo_link_failed(t, l);
}

/* From cur: a step along d2 in direction dir2, `past` hops along d in
 * direction dir, the step back; its links into out and the vertex reached,
 * or UINT32_MAX where a link of it has failed. */
static uint32_t detour(const tc_topo *t, uint32_t cur, int d, int dir, int d2, int dir2, uint32_t past, uint32_t *out)
{
    uint32_t m = 0;
    for (uint32_t j = 0; j < past + 2; j++) {
        uint32_t l = j == 0 ? tc_topo_torus_link(t, cur, d2, dir2)
                     : j <= past ? tc_topo_torus_link(t, cur, d, dir)
                                 : tc_topo_torus_link(t, cur, d2, -dir2);
        if (!alive(t, l))
            return UINT32_MAX;
        out[m++] = l;
        cur = link_dst(t, l);
    }
    return cur;
}

/* Fault-tolerant dimension order (torus.c's route, then around failures):
 * line: in each dimension the shorter way, or the other way round when the
 * shorter one crosses a failed link (a ring broken at the fault is a line);
 * detour: hop by hop the shorter way, and a failed hop is replaced by one
 * step in another dimension (the next one first, + before -), the hop, and
 * the step back; where that fails (the hop leads into a failed router) and
 * the dimension has a hop after it, by the step aside, two hops past the
 * router and the step back; where the route turns at that router, by the
 * next dimension's first step before the hop. */
uint32_t tc_torus_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t n = 0, cur = src;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], st = t->stride[d];
        uint32_t xs = cur / st % size, xd = dst / st % size;
        if (xs == xd)
            continue;
        bool ring = t->dim_cables[d] == size;
        uint32_t hops;
        int dir = order_dir(t, d, xs, xd, r, &hops);
        if (r == TC_ROUTE_LINE) {
            bool done = false;
            for (int k = 0; k < (ring ? 2 : 1) && !done; k++, dir = -dir, hops = size - hops) {
                uint32_t v = cur, m = n;
                bool ok = true;
                for (uint32_t h = 0; h < hops && ok; h++) {
                    uint32_t l = tc_topo_torus_link(t, v, d, dir);
                    ok = alive(t, l);
                    if (ok) {
                        links[m++] = l;
                        v = link_dst(t, l);
                    }
                }
                if (ok) {
                    n = m;
                    cur = v;
                    done = true;
                }
            }
            if (!done)
                return TC_NO_ROUTE;
            continue;
        }
        for (uint32_t h = 0; h < hops; h++) {
            uint32_t l = tc_topo_torus_link(t, cur, d, dir);
            if (alive(t, l)) {
                links[n++] = l;
                cur = link_dst(t, l);
                continue;
            }
            /* step aside into another dimension (the next one first, +
             * before -), the hop, and back; where the hop leads into a
             * failed router, two hops past it */
            bool found = false;
            for (uint32_t past = 1; past <= 2 && !found && h + past <= hops; past++)
                for (int k = 1; k < t->ndims && !found; k++)
                    for (int dir2 = 1; dir2 >= -1 && !found; dir2 -= 2) {
                        uint32_t way[4], v = detour(t, cur, d, dir, (d + k) % t->ndims, dir2, past, way);
                        if (v != UINT32_MAX) {
                            for (uint32_t j = 0; j < past + 2; j++)
                                links[n++] = way[j];
                            cur = v;
                            h += past - 1;
                            found = true;
                        }
                    }
            /* the last hop of this dimension leads into a failed router
             * where the route turns: take a later dimension's first step
             * (towards the destination) before the hop, not after it */
            for (int d2 = d + 1; d2 < t->ndims && !found && h + 1 == hops; d2++) {
                uint32_t s2 = t->stride[d2], y = cur / s2 % t->dims[d2], yd = dst / s2 % t->dims[d2], h2;
                if (y == yd)
                    continue;
                uint32_t a = tc_topo_torus_link(t, cur, d2, order_dir(t, d2, y, yd, r, &h2));
                if (!alive(t, a))
                    continue;
                uint32_t b = tc_topo_torus_link(t, link_dst(t, a), d, dir);
                if (!alive(t, b))
                    continue;
                links[n++] = a, links[n++] = b;
                cur = link_dst(t, b);
                found = true;
            }
            if (!found)
                return TC_NO_ROUTE;
        }
    }
    return cur == dst ? n : TC_NO_ROUTE;
}
