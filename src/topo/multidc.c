/*
 * multidc.c - training across datacenters: P identical pods, each a Clos or
 * a torus of its own, joined by long-haul (WAN) links between gateways.
 * The build reads multidc's own keys and hands every other key to the
 * pod's kind, builds the pods as ordinary topologies and composes the
 * whole graph around them (include/topocc/topo.h, "Multi-datacenter", for
 * the numbering); routing between pods is arithmetic on that numbering,
 * routing within a pod is the pod's own.
 *
 * Model (docs/MODEL.md, "Multi-datacenter"): every pod has L gateways, the
 * border routers of its datacenter; gateway g of every pod has one
 * long-haul cable to gateway g of every other pod (a full mesh of L cables
 * per pair of pods), and a cable into its pod at each attachment point: a
 * Clos pod's top-level switches (the gateways are one level above them), a
 * torus pod's routers (every router has a port to every gateway). A route
 * between pods climbs to a gateway, crosses one long-haul cable and comes
 * down from the far gateway.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topo_int.h"

#define MDC_MAX_PODS 256
#define MDC_MAX_WAN_LINKS 64
#define MDC_KEYS "pods, pod, wan_bw, wan_lat, wan_links, gw_bw, gw_lat (every other key is the pod's)"

static const char *const mdc_keys[] = {"pods", "pod", "wan_bw", "wan_lat", "wan_links", "gw_bw", "gw_lat", NULL};

static bool is_mdc_key(const char *key)
{
    for (const char *const *k = mdc_keys; *k; k++)
        if (strcmp(*k, key) == 0)
            return true;
    return false;
}

/* ---- numbering ---- */

static uint32_t pod_nodes(const tc_topo *pd)
{
    return pd->node_size > 1 ? pd->n_endpoints / pd->node_size : 0;
}

static uint32_t pod_nics(const tc_topo *pd)
{
    return pd->nics ? pd->n_slots : 0;
}

/* Pod k's vertex v in the whole topology. */
static uint32_t map_vertex(const tc_topo *t, uint32_t k, uint32_t v)
{
    const tc_topo *pd = t->pod[k];
    uint32_t n = pd->n_endpoints;
    if (v < n)
        return k * n + v;
    if (v < n + pd->n_switches)
        return t->n_endpoints + k * pd->n_switches + (v - n);
    if (v < pd->nic_vbase)
        return t->node_vbase + k * pod_nodes(pd) + (v - pd->node_vbase);
    return t->nic_vbase + k * pod_nics(pd) + (v - pd->nic_vbase);
}

/* Pod k's link l in the whole topology. */
static uint32_t map_link(const tc_topo *t, uint32_t k, uint32_t l)
{
    const tc_topo *pd = t->pod[k];
    uint32_t n = pd->n_endpoints;
    if (l < t->pod_fabric_links)
        return k * t->pod_fabric_links + l;
    if (l < pd->nic_lbase)
        return t->node_lbase + 2 * k * n + (l - pd->node_lbase);
    return t->nic_lbase + 2 * k * n + (l - pd->nic_lbase);
}

bool tc_multidc_pod_link(const tc_topo *t, uint32_t l, uint32_t *k, uint32_t *pl)
{
    uint32_t n2 = 2 * t->pod_endpoints;
    if (l < t->gw_lbase) {
        *k = l / t->pod_fabric_links;
        *pl = l % t->pod_fabric_links;
        return true;
    }
    if (l < t->node_lbase || l >= t->n_links)
        return false;
    uint32_t base = l < t->nic_lbase ? t->node_lbase : t->nic_lbase;
    *k = (l - base) / n2;
    *pl = (l < t->nic_lbase ? t->pod[0]->node_lbase : t->pod[0]->nic_lbase) + (l - base) % n2;
    return true;
}

bool tc_multidc_pod_vertex(const tc_topo *t, uint32_t v, uint32_t *k, uint32_t *pv)
{
    const tc_topo *p0 = t->pod[0];
    uint32_t n = p0->n_endpoints, S = p0->n_switches;
    if (v < t->n_endpoints) {
        *k = v / n, *pv = v % n;
        return true;
    }
    if (v < t->gw_vbase) {
        *k = (v - t->n_endpoints) / S, *pv = n + (v - t->n_endpoints) % S;
        return true;
    }
    if (v < t->node_vbase || v >= t->n_vertices)
        return false; /* a gateway */
    if (v < t->nic_vbase) {
        uint32_t m = pod_nodes(p0);
        *k = (v - t->node_vbase) / m, *pv = p0->node_vbase + (v - t->node_vbase) % m;
        return true;
    }
    uint32_t m = pod_nics(p0);
    *k = (v - t->nic_vbase) / m, *pv = p0->nic_vbase + (v - t->nic_vbase) % m;
    return true;
}

/* The index of the pair of pods a < b: (0,1), (0,2), .., (0,P-1), (1,2), .. */
static uint32_t pair_index(uint32_t P, uint32_t a, uint32_t b)
{
    return a * (2 * P - a - 1) / 2 + (b - a - 1);
}

/* The gateway cable of gateway g of pod k at attachment point a: the link
 * into the gateway (up) or out of it. */
static uint32_t gw_link(const tc_topo *t, uint32_t k, uint32_t g, uint32_t a, bool up)
{
    return t->gw_lbase + 2 * ((k * t->wan_links + g) * t->gw_attach + a) + (up ? 0 : 1);
}

/* The long-haul link from gateway g of pod a to gateway g of pod b. */
static uint32_t wan_link(const tc_topo *t, uint32_t a, uint32_t b, uint32_t g)
{
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    return t->wan_lbase + 2 * (pair_index(t->n_pods, lo, hi) * t->wan_links + g) + (a > b ? 1 : 0);
}

/* The pod vertex of attachment point a. */
static uint32_t attach_vertex(const tc_topo *pd, uint32_t a)
{
    return pd->kind == TC_TOPO_CLOS ? pd->level_vbase[pd->levels] + a : a;
}

/* ---- the build ---- */

static const char *time_str(double s, char *buf, size_t len)
{
    if (s >= 1e-3)
        snprintf(buf, len, "%.12gms", s * 1e3);
    else
        tc_topo_time_str(s, buf, len);
    return buf;
}

void tc_multidc_spec(tc_topo *t)
{
    char a[64], b[64], c[64], d[64];
    const char *ps = strchr(t->pod[0]->spec, ':');
    snprintf(t->spec, sizeof t->spec, "multidc:pods=%u,pod=%s,wan_bw=%s,wan_lat=%s,wan_links=%u,gw_bw=%s,gw_lat=%s,%s",
             t->n_pods, tc_topo_kind_name(t->pod[0]->kind), tc_topo_rate_str(t->wan_bw, a, sizeof a),
             time_str(t->wan_lat, b, sizeof b), t->wan_links, tc_topo_rate_str(t->gw_bw, c, sizeof c),
             time_str(t->gw_lat, d, sizeof d), ps ? ps + 1 : "");
}

/* multidc's own keys; the pod's kind into kind. */
static tc_status read_keys(tc_spec *sp, tc_topo *t, const char **kind, tc_err *err)
{
    if (!tc_spec_get(sp, "pods"))
        return tc_fail(err, TC_EINVAL, "multidc: pods= is required (the number of pods, at least 2, e.g. pods=4)");
    uint32_t P = 0;
    tc_status st = tc_topo_get_u32(sp, "multidc", "pods", &P, NULL, err);
    if (st)
        return st;
    if (P < 2 || P > MDC_MAX_PODS)
        return tc_fail(err, TC_EINVAL, "multidc pods=%u: expected 2 to %u pods (one pod is a clos or torus of its own)", P,
                       MDC_MAX_PODS);
    t->n_pods = P;
    *kind = tc_spec_get(sp, "pod");
    if (!*kind)
        return tc_fail(err, TC_EINVAL, "multidc: pod= is required (the kind of every pod, clos or torus, with that "
                                       "kind's keys, e.g. pod=clos,hosts=64,radix=16)");
    if (strcmp(*kind, "clos") != 0 && strcmp(*kind, "torus") != 0)
        return tc_fail(err, TC_EINVAL, "multidc pod='%s': expected pod=clos or pod=torus", *kind);
    if (!tc_spec_get(sp, "wan_bw"))
        return tc_fail(err, TC_EINVAL, "multidc: wan_bw= is required (the bandwidth of one long-haul link per "
                                       "direction, e.g. wan_bw=400Gbps)");
    if (!tc_spec_get(sp, "wan_lat"))
        return tc_fail(err, TC_EINVAL, "multidc: wan_lat= is required (the latency of a long-haul link, e.g. "
                                       "wan_lat=20ms)");
    bool has_gw_bw = false, has_gw_lat = false;
    t->wan_links = 1;
    if ((st = tc_topo_get_rate(sp, "multidc", "wan_bw", &t->wan_bw, NULL, err)) ||
        (st = tc_topo_get_time(sp, "multidc", "wan_lat", &t->wan_lat, NULL, err)) ||
        (st = tc_topo_get_u32(sp, "multidc", "wan_links", &t->wan_links, NULL, err)) ||
        (st = tc_topo_get_rate(sp, "multidc", "gw_bw", &t->gw_bw, &has_gw_bw, err)) ||
        (st = tc_topo_get_time(sp, "multidc", "gw_lat", &t->gw_lat, &has_gw_lat, err)))
        return st;
    if (t->wan_links > MDC_MAX_WAN_LINKS)
        return tc_fail(err, TC_EINVAL, "multidc wan_links=%u: expected 1 to %u long-haul links per pair of pods",
                       t->wan_links, MDC_MAX_WAN_LINKS);
    /* A gateway carries at most its P - 1 long-haul cables: a cable into
     * the pod of that much never binds before they do. */
    if (!has_gw_bw)
        t->gw_bw = (P - 1) * t->wan_bw;
    if (!has_gw_lat)
        t->gw_lat = -1; /* the pod's top-level cable, once it is built */
    return TC_OK;
}

/* The pod's spec: kind: and every key that is not multidc's. */
static tc_status pod_spec(const tc_spec *sp, const char *kind, char *buf, size_t len, tc_err *err)
{
    int n = snprintf(buf, len, "%s:", kind), keys = 0;
    for (int i = 0; i < sp->nkv && n > 0 && (size_t)n < len; i++) {
        if (is_mdc_key(sp->key[i]))
            continue;
        n += snprintf(buf + n, len - (size_t)n, "%s%s=%s", keys++ ? "," : "", sp->key[i], sp->val[i]);
    }
    if (n < 0 || (size_t)n >= len)
        return tc_fail(err, TC_EINVAL, "multidc: the pod's spec is too long (at most %zu characters)", len - 1);
    if (!keys)
        return tc_fail(err, TC_EINVAL, "multidc pod=%s needs the pod's own keys, e.g. %s", kind,
                       strcmp(kind, "clos") == 0 ? "pod=clos,hosts=64,radix=16" : "pod=torus,dims=4x4x4");
    return TC_OK;
}

/* Every pod's links, the gateway cables and the long-haul cables. */
static void fill(tc_topo *t)
{
    const tc_topo *p0 = t->pod[0];
    uint32_t P = t->n_pods, L = t->wan_links, A = t->gw_attach;
    for (uint32_t k = 0; k < P; k++) {
        const tc_topo *pd = t->pod[k];
        for (uint32_t l = 0; l < pd->n_links; l++) {
            tc_link x = pd->links[l];
            x.src = map_vertex(t, k, x.src);
            x.dst = map_vertex(t, k, x.dst);
            t->links[map_link(t, k, l)] = x;
        }
    }
    /* Both ends of a gateway cable are a switch or router: each way
     * carries the traversal of the one it enters (topo.h, "Latency"). */
    uint8_t level = p0->kind == TC_TOPO_CLOS ? (uint8_t)(p0->levels + 1) : 0;
    double lat = t->gw_lat + t->hop_lat;
    for (uint32_t k = 0; k < P; k++)
        for (uint32_t g = 0; g < L; g++)
            for (uint32_t a = 0; a < A; a++) {
                uint32_t v = map_vertex(t, k, attach_vertex(p0, a)), gw = t->gw_vbase + k * L + g;
                uint32_t up = gw_link(t, k, g, a, true);
                t->links[up] = (tc_link){v, gw, t->gw_bw, lat, TC_LINK_GW, level, +1};
                t->links[up + 1] = (tc_link){gw, v, t->gw_bw, lat, TC_LINK_GW, level, -1};
            }
    for (uint32_t a = 0; a < P; a++)
        for (uint32_t b = a + 1; b < P; b++)
            for (uint32_t g = 0; g < L; g++) {
                uint32_t l = wan_link(t, a, b, g), ga = t->gw_vbase + a * L + g, gb = t->gw_vbase + b * L + g;
                t->links[l] = (tc_link){ga, gb, t->wan_bw, t->wan_lat + t->hop_lat, TC_LINK_WAN, 0, +1};
                t->links[l + 1] = (tc_link){gb, ga, t->wan_bw, t->wan_lat + t->hop_lat, TC_LINK_WAN, 0, -1};
            }
}

/* The whole topology's sizes, bases and per-endpoint fields from its pods. */
static tc_status layout(tc_topo *t, tc_err *err)
{
    const tc_topo *p0 = t->pod[0];
    uint64_t P = t->n_pods, L = t->wan_links, n = p0->n_endpoints, S = p0->n_switches;
    uint64_t nodes = pod_nodes(p0), nics = pod_nics(p0), F = p0->node_lbase;
    uint64_t A = p0->kind == TC_TOPO_CLOS ? p0->level_count[p0->levels] : n;
    uint64_t N = P * n, wan = L * P * (P - 1) / 2;
    uint64_t V = N + P * S + P * L + P * nodes + P * nics;
    uint64_t links = P * F + 2 * P * L * A + 2 * wan + (nodes ? 2 * N : 0) + (nics ? 2 * N : 0);
    if (V > TC_TOPO_MAX_VERTICES || links > TC_TOPO_MAX_LINKS)
        return tc_fail(err, TC_EINVAL, "multidc too large: %llu vertices and %llu links, at most %u and %u",
                       (unsigned long long)V, (unsigned long long)links, TC_TOPO_MAX_VERTICES, TC_TOPO_MAX_LINKS);
    t->n_endpoints = (uint32_t)N;
    t->pod_endpoints = (uint32_t)n;
    t->n_switches = (uint32_t)(P * S + P * L);
    t->n_vertices = (uint32_t)V;
    t->n_links = (uint32_t)links;
    t->gw_attach = (uint32_t)A;
    t->pod_fabric_links = (uint32_t)F;
    t->gw_vbase = (uint32_t)(N + P * S);
    t->gw_lbase = (uint32_t)(P * F);
    t->wan_lbase = (uint32_t)(P * F + 2 * P * L * A);
    t->node_vbase = (uint32_t)(t->gw_vbase + P * L);
    t->node_lbase = (uint32_t)(t->wan_lbase + 2 * wan);
    t->nic_vbase = (uint32_t)(t->node_vbase + P * nodes);
    t->nic_lbase = (uint32_t)(t->node_lbase + (nodes ? 2 * N : 0));
    /* What every pod shares, over the whole topology. */
    t->node_size = p0->node_size;
    t->node_bw = p0->node_bw, t->node_lat = p0->node_lat, t->node_hop_lat = p0->node_hop_lat;
    t->node_reduce = p0->node_reduce;
    t->sharp = p0->sharp;
    t->rails = p0->rails;
    t->nics = p0->nics;
    t->nic_bw = p0->nic_bw, t->nic_lat = p0->nic_lat, t->nic_bw_given = p0->nic_bw_given;
    t->n_slots = (uint32_t)(P * p0->n_slots);
    t->arch = p0->arch;
    t->transport = p0->transport;
    t->nic_path = p0->nic_path;
    t->net_lat_given = p0->net_lat_given;
    memcpy(t->net_lat, p0->net_lat, sizeof t->net_lat);
    t->net_eff = p0->net_eff;
    t->p2p_bw = p0->p2p_bw, t->p2p_net_bw = p0->p2p_net_bw;
    t->hop_lat = p0->hop_lat;
    t->alpha = p0->alpha;
    t->reduce_bw = p0->reduce_bw;
    t->seed = p0->seed;
    if (t->gw_lat < 0)
        t->gw_lat = p0->kind == TC_TOPO_CLOS ? p0->level_lat[p0->levels] : p0->torus_lat;
    return TC_OK;
}

static tc_status compose(tc_topo *t, tc_err *err)
{
    tc_status st = layout(t, err);
    if (st)
        return st;
    const tc_topo *p0 = t->pod[0];
    t->links = tc_calloc(t->n_links, sizeof *t->links);
    if (!t->links)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %u links", t->n_links);
    if (p0->hslot) {
        uint32_t n = p0->n_endpoints;
        if (!(t->hslot = tc_calloc(t->n_endpoints, sizeof *t->hslot)))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t k = 0; k < t->n_pods; k++)
            for (uint32_t e = 0; e < n; e++)
                t->hslot[k * n + e] = k * p0->n_slots + p0->hslot[e];
    }
    fill(t);
    if (tc_topo_build_csr(t) != TC_OK)
        return tc_fail(err, TC_EINTERNAL, "out of memory for the adjacency of %u vertices", t->n_vertices);
    /* Every route between pods has the same links' latencies: one of them. */
    uint32_t *path = malloc(((size_t)tc_multidc_max_path(t) + 1) * sizeof *path);
    if (!path)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t m = tc_multidc_route(t, TC_ROUTE_DEFAULT, 0, t->pod_endpoints, path, false);
    t->cross_lat = 0;
    for (uint32_t i = 0; i < m && m != TC_NO_ROUTE; i++)
        t->cross_lat += t->links[path[i]].lat;
    free(path);
    tc_multidc_spec(t);
    if (strlen(t->spec) + 1 >= sizeof t->spec)
        return tc_fail(err, TC_EINVAL, "multidc: the spec is too long (at most %zu characters written out): give "
                                       "the pod in fewer keys",
                       sizeof t->spec - 2);
    return TC_OK;
}

tc_status tc_multidc_build(tc_spec *sp, tc_topo **out, tc_err *err)
{
    *out = NULL;
    tc_topo *t = tc_calloc(1, sizeof *t);
    if (!t)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    t->kind = TC_TOPO_MULTIDC;
    const char *kind = NULL;
    char ps[512];
    tc_status st = read_keys(sp, t, &kind, err);
    if (st == TC_OK)
        st = pod_spec(sp, kind, ps, sizeof ps, err);
    if (st == TC_OK && !(t->pod = tc_calloc(t->n_pods, sizeof *t->pod)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t k = 0; st == TC_OK && k < t->n_pods; k++) {
        tc_err e;
        if ((st = tc_topo_build(ps, &t->pod[k], &e)))
            tc_fail(err, st, "multidc pod: %s%s", e.msg,
                    strncmp(e.msg, "unknown key", 11) == 0 ? "; multidc's own keys are " MDC_KEYS : "");
    }
    if (st == TC_OK)
        st = compose(t, err);
    if (st) {
        tc_topo_free(t);
        return st;
    }
    *out = t;
    return TC_OK;
}

void tc_multidc_free(tc_topo *t)
{
    for (uint32_t k = 0; t->pod && k < t->n_pods; k++)
        tc_topo_free(t->pod[k]);
    free(t->pod);
    t->pod = NULL;
}

/* ---- routing ---- */

/* A choice among m: D-mod-k's by the destination, else the hash of (src,
 * dst, seed) salted by what is chosen. */
static uint32_t choose(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t m, uint64_t salt)
{
    if (m <= 1)
        return 0;
    if (r == TC_ROUTE_DMODK)
        return dst % m;
    uint64_t key = tc_mix64(((uint64_t)src << 32 | dst) ^ tc_mix64(t->seed));
    return (uint32_t)(tc_mix64(key + salt) % m);
}

static bool alive(const tc_topo *t, const uint32_t *links, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (tc_topo_link_failed(t, links[i]))
            return false;
    return true;
}

/* Pod k's path from its endpoint e to attachment point a (up) or back
 * (down), in global link IDs, into links; its length. */
static uint32_t pod_leg(const tc_topo *t, uint32_t k, uint32_t e, uint32_t a, bool up, uint32_t *links)
{
    const tc_topo *pd = t->pod[k];
    if (pd->kind != TC_TOPO_CLOS)
        return 0; /* a torus router is its own attachment point */
    uint32_t top = attach_vertex(pd, a);
    uint32_t n = up ? tc_clos_route_vertical(pd, e, top, links) : tc_clos_route_vertical(pd, top, e, links);
    for (uint32_t i = 0; i < n; i++)
        links[i] = map_link(t, k, links[i]);
    return n;
}

/* The half route on one side: endpoint e of pod k up to gateway g (up) or
 * down from it, the first attachment point from the choice a0 on that
 * survives (ft), or a0 alone. */
static uint32_t side(const tc_topo *t, uint32_t k, uint32_t e, uint32_t g, uint32_t a0, bool up, bool ft,
                     uint32_t *links)
{
    const tc_topo *pd = t->pod[k];
    uint32_t A = t->gw_attach;
    bool torus = pd->kind != TC_TOPO_CLOS;
    for (uint32_t i = 0; i < (ft && !torus ? A : 1); i++) {
        uint32_t a = torus ? e : (a0 + i) % A, n = 0;
        if (up) {
            n = pod_leg(t, k, e, a, true, links);
            links[n++] = gw_link(t, k, g, a, true);
        } else {
            links[n++] = gw_link(t, k, g, a, false);
            n += pod_leg(t, k, e, a, false, links + 1);
        }
        if (!ft || alive(t, links, n))
            return n;
    }
    return TC_NO_ROUTE;
}

static uint32_t cross_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links, bool ft)
{
    uint32_t n = t->pod_endpoints, ks = src / n, kd = dst / n, L = t->wan_links, A = t->gw_attach;
    uint32_t g0 = choose(t, r, src, dst, L, 101);
    /* D-mod-k climbs to top switch d mod (top switches) for destination d:
     * the same rule at both ends (a torus pod's attachment is the router). */
    uint32_t a0 = choose(t, r, src, dst, A, 102), b0 = r == TC_ROUTE_DMODK ? dst % n % A : choose(t, r, src, dst, A, 103);
    for (uint32_t i = 0; i < (ft ? L : 1); i++) {
        uint32_t g = (g0 + i) % L, w = wan_link(t, ks, kd, g);
        if (ft && tc_topo_link_failed(t, w))
            continue;
        uint32_t m = side(t, ks, src % n, g, a0, true, ft, links);
        if (m == TC_NO_ROUTE)
            continue;
        links[m++] = w;
        uint32_t d = side(t, kd, dst % n, g, b0, false, ft, links + m);
        if (d != TC_NO_ROUTE)
            return m + d;
    }
    return TC_NO_ROUTE;
}

uint32_t tc_multidc_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links, bool ft)
{
    if (src == dst)
        return 0;
    if (ft && (tc_topo_vertex_failed(t, src) || tc_topo_vertex_failed(t, dst)))
        return TC_NO_ROUTE;
    uint32_t ks, kd, ps, pdv;
    if (!tc_multidc_pod_vertex(t, src, &ks, &ps) || !tc_multidc_pod_vertex(t, dst, &kd, &pdv))
        return 0; /* a gateway is no route's end */
    if (ks == kd) {
        const tc_topo *pd = t->pod[ks];
        uint32_t m = ft ? tc_topo_route(pd, r, ps, pdv, links) : tc_topo_route_healthy(pd, r, ps, pdv, links);
        for (uint32_t i = 0; m != TC_NO_ROUTE && i < m; i++)
            links[i] = map_link(t, ks, links[i]);
        return m;
    }
    if (src >= t->n_endpoints || dst >= t->n_endpoints)
        return 0; /* a switch of one pod and a vertex of another */
    return cross_route(t, r, src, dst, links, ft);
}

/* Links of a route between pods. */
static uint32_t cross_len(const tc_topo *t)
{
    const tc_topo *p0 = t->pod[0];
    if (p0->kind != TC_TOPO_CLOS)
        return 3;
    return 2 * ((uint32_t)p0->levels + (p0->nics ? 1 : 0)) + 3;
}

uint32_t tc_multidc_max_path(const tc_topo *t)
{
    uint32_t m = cross_len(t);
    for (uint32_t k = 0; k < t->n_pods; k++) {
        uint32_t v = tc_topo_max_path(t->pod[k]);
        if (v > m)
            m = v;
    }
    return m;
}

/* ---- figures, names, edits ---- */

void tc_multidc_info(const tc_topo *t, tc_topo_info *info)
{
    const tc_topo *p0 = t->pod[0];
    tc_topo_info pi;
    tc_topo_get_info(p0, &pi);
    uint32_t P = t->n_pods, cl = cross_len(t);
    info->node_switches = P * pi.node_switches;
    info->diameter = pi.diameter > cl ? pi.diameter : cl;
    info->injection_Bps = pi.injection_Bps;
    info->ports_per_endpoint = pi.ports_per_endpoint;
    info->min_latency_s = p0->n_endpoints >= 2 ? fmin(pi.min_latency_s, t->cross_lat) : t->cross_lat;
    info->max_latency_s = fmax(pi.max_latency_s, t->cross_lat);
    double wan = (double)(P / 2) * (double)(P - P / 2) * t->wan_links * t->wan_bw;
    info->bisection_Bps = p0->n_endpoints >= 2 && pi.bisection_Bps > 0 ? fmin(wan, P * pi.bisection_Bps) : wan;
}

static const char *pod_vertex_name(const tc_topo *t, uint32_t v, char *buf, size_t len)
{
    uint32_t k, pv;
    if (!tc_multidc_pod_vertex(t, v, &k, &pv)) {
        uint32_t g = v - t->gw_vbase;
        snprintf(buf, len, "pod %u gw %u", g / t->wan_links, g % t->wan_links);
        return buf;
    }
    char a[96];
    const tc_topo *pd = t->pod[k];
    snprintf(buf, len, "pod %u %s", k,
             pd->kind == TC_TOPO_CLOS ? tc_clos_vertex_name(pd, pv, a, sizeof a) : tc_torus_vertex_name(pd, pv, a, sizeof a));
    return buf;
}

const char *tc_multidc_link_name(const tc_topo *t, uint32_t id, char *buf, size_t len)
{
    const tc_link *l = &t->links[id];
    char a[128], b[128];
    uint32_t k, pl;
    if (l->kind != TC_LINK_GW && l->kind != TC_LINK_WAN && tc_multidc_pod_link(t, id, &k, &pl)) {
        char inner[192];
        tc_topo_link_name(t->pod[k], pl, inner, sizeof inner);
        snprintf(buf, len, "pod %u: %s", k, inner);
        return buf;
    }
    snprintf(buf, len, "%s -> %s%s", pod_vertex_name(t, l->src, a, sizeof a), pod_vertex_name(t, l->dst, b, sizeof b),
             l->kind == TC_LINK_WAN ? " (wan)" : "");
    return buf;
}

tc_status tc_multidc_equalize(tc_topo *t, double rate, tc_err *err)
{
    for (uint32_t k = 0; k < t->n_pods; k++) {
        tc_status st = tc_topo_equalize_injection(t->pod[k], rate, err);
        if (st)
            return st;
        for (uint32_t l = 0; l < t->pod[k]->n_links; l++)
            t->links[map_link(t, k, l)].bw = t->pod[k]->links[l].bw;
    }
    tc_multidc_spec(t);
    return TC_OK;
}

bool tc_multidc_fail_arrays(tc_topo *t)
{
    for (uint32_t k = 0; k < t->n_pods; k++) {
        tc_topo *pd = t->pod[k];
        if (!pd->link_failed)
            pd->link_failed = tc_calloc(pd->n_links, 1);
        if (!pd->vertex_failed)
            pd->vertex_failed = tc_calloc(pd->n_vertices, 1);
        if (!pd->link_failed || !pd->vertex_failed)
            return false;
    }
    return true;
}

void tc_multidc_sync_link(tc_topo *t, uint32_t l)
{
    uint32_t k, pl;
    if (!tc_multidc_pod_link(t, l, &k, &pl))
        return;
    tc_topo *pd = t->pod[k];
    pd->links[pl].bw = t->links[l].bw;
    if (!t->link_failed || !pd->link_failed)
        return;
    uint8_t f = t->link_failed[l];
    if (pd->link_failed[pl] != f) {
        pd->link_failed[pl] = f;
        if (f)
            pd->n_failed++;
        else
            pd->n_failed--;
    }
}

void tc_multidc_sync_vertex(tc_topo *t, uint32_t v)
{
    uint32_t k, pv;
    if (t->vertex_failed && tc_multidc_pod_vertex(t, v, &k, &pv) && t->pod[k]->vertex_failed)
        t->pod[k]->vertex_failed[pv] = t->vertex_failed[v];
}

void tc_multidc_sync_all(tc_topo *t)
{
    for (uint32_t l = 0; l < t->n_links; l++)
        tc_multidc_sync_link(t, l);
    for (uint32_t v = 0; v < t->n_vertices; v++)
        tc_multidc_sync_vertex(t, v);
}
