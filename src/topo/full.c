/*
 * full.c - a fully connected network: every pair of endpoints joined by a
 * cable of its own (ASTRA-sim's FullyConnected dimension; the GPUs of an
 * 8-GPU board joined pairwise by point-to-point links).
 *
 * Model (docs/MODEL.md, "Fully connected"): N endpoints, N (N - 1) / 2
 * cables, each two directed links of bw= and lat= (plus hop_lat=, the
 * traversal of the endpoint a link enters, default 0). Cable c joins the
 * pair (i, j), i < j, in lexicographic order: c = i (2N - i - 1) / 2 +
 * (j - i - 1); its link 2c goes i -> j (dir +1), 2c + 1 j -> i (dir -1).
 * A route is the pair's own link. With failed links: direct (no endpoint
 * forwards) leaves a pair whose link failed cut off; detour (the default
 * with failures) goes through one other endpoint, the first after the
 * destination (cyclically) whose two links survive.
 */
#include <string.h>
#include "topo_int.h"

tc_status tc_full_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err)
{
    t->kind = TC_TOPO_FULL;
    uint32_t n = 0;
    bool given = false;
    tc_status st = tc_topo_get_u32(sp, "full", "hosts", &n, &given, err);
    if (st != TC_OK)
        return st;
    if (!given)
        return tc_fail(err, TC_EINVAL, "full spec needs hosts=N (the endpoints, every pair joined directly, 2 to %u), "
                                       "e.g. full:hosts=8",
                       TC_FULL_MAX_HOSTS);
    if (n < 2)
        return tc_fail(err, TC_EINVAL, "full hosts=%u: a fully connected network needs at least 2 endpoints, e.g. "
                                       "full:hosts=8",
                       n);
    if (n > TC_FULL_MAX_HOSTS)
        return tc_fail(err, TC_EINVAL, "full hosts=%u: at most %u endpoints (N (N - 1) directed links: %u hosts "
                                       "would need %llu)",
                       n, TC_FULL_MAX_HOSTS, n, (unsigned long long)n * (n - 1));
    t->n_endpoints = n;
    t->n_switches = 0;
    *fabric_links = (uint64_t)n * (n - 1);
    t->torus_bw = TC_TOPO_DEFAULT_BW;
    t->torus_lat = TC_TOPO_DEFAULT_LAT;
    st = tc_topo_get_rate(sp, "full", "bw", &t->torus_bw, NULL, err);
    if (st == TC_OK)
        st = tc_topo_get_time(sp, "full", "lat", &t->torus_lat, NULL, err);
    return st;
}

uint32_t tc_topo_full_link(const tc_topo *t, uint32_t a, uint32_t b)
{
    if (!t || t->kind != TC_TOPO_FULL || a == b || a >= t->n_endpoints || b >= t->n_endpoints)
        return UINT32_MAX;
    uint64_t n = t->n_endpoints, i = a < b ? a : b, j = a < b ? b : a;
    uint64_t c = i * (2 * n - i - 1) / 2 + (j - i - 1);
    return (uint32_t)(2 * c + (a > b));
}

void tc_full_fill(tc_topo *t)
{
    double lat = t->torus_lat + t->hop_lat;
    tc_link *l = t->links;
    for (uint32_t i = 0; i < t->n_endpoints; i++)
        for (uint32_t j = i + 1; j < t->n_endpoints; j++) {
            *l++ = (tc_link){i, j, t->torus_bw, lat, TC_LINK_FABRIC, 1, +1};
            *l++ = (tc_link){j, i, t->torus_bw, lat, TC_LINK_FABRIC, 1, -1};
        }
}

uint32_t tc_full_route(const tc_topo *t, uint32_t src, uint32_t dst, uint32_t *links)
{
    links[0] = tc_topo_full_link(t, src, dst);
    return 1;
}

static bool alive(const tc_topo *t, uint32_t l)
{
    return !tc_topo_link_failed(t, l);
}

uint32_t tc_full_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links)
{
    uint32_t l = tc_topo_full_link(t, src, dst), n = t->n_endpoints;
    if (alive(t, l)) {
        links[0] = l;
        return 1;
    }
    if (r != TC_ROUTE_DETOUR)
        return TC_NO_ROUTE;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t m = (dst + k) % n;
        if (m == src || tc_topo_vertex_failed(t, m))
            continue;
        uint32_t a = tc_topo_full_link(t, src, m), b = tc_topo_full_link(t, m, dst);
        if (alive(t, a) && alive(t, b)) {
            links[0] = a, links[1] = b;
            return 2;
        }
    }
    return TC_NO_ROUTE;
}

void tc_full_info(const tc_topo *t, tc_topo_info *info)
{
    uint32_t n = t->n_endpoints;
    info->diameter = 1;
    info->ports_per_endpoint = n - 1;
    info->injection_Bps = (n - 1) * t->torus_bw;
    /* halves of floor(N/2) and ceil(N/2) endpoints: every pair across is a
     * cable, and every balanced cut has as many */
    info->bisection_Bps = (double)(n / 2) * (double)(n - n / 2) * t->torus_bw;
    info->min_latency_s = info->max_latency_s = t->torus_lat + t->hop_lat;
}

double tc_full_bisection_as_is(const tc_topo *t)
{
    /* the cut between the first floor(N/2) endpoints and the others, each
     * direction its surviving links' bandwidths summed, the smaller */
    uint32_t n = t->n_endpoints, h = n / 2;
    double out = 0, in = 0;
    for (uint32_t i = 0; i < h; i++)
        for (uint32_t j = h; j < n; j++) {
            out += t->links[tc_topo_full_link(t, i, j)].bw;
            in += t->links[tc_topo_full_link(t, j, i)].bw;
        }
    return out < in ? out : in;
}

void tc_full_spec(const tc_topo *t, char *buf, size_t len)
{
    char a[96];
    tc_topo_put(buf, len, "full:hosts=%u", t->n_endpoints);
    tc_topo_put(buf, len, ",bw=%s", tc_topo_rate_str(t->torus_bw, a, sizeof a));
    tc_topo_put(buf, len, ",lat=%s", tc_topo_time_str(t->torus_lat, a, sizeof a));
}
