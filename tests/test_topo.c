/*
 * test_topo.c - the topology layer: counts and figures worked out by hand,
 * every route on small Clos and torus instances checked against a
 * breadth-first search of the graph, the routing rules (D-mod-k on shifts,
 * dimension-order ties, mesh lines, scale-up nodes), link edits, one
 * test per kind of bad spec, and multi-datacenter topologies (pods joined
 * by long-haul links: counts, routes, failures, names, edits, bad specs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/topo.h"

#define GBPS(x) ((x) * 1e9 / 8)

static tc_topo *build(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

static void assert_near(double a, double b)
{
    if (fabs(a - b) > 1e-9 * fabs(b) + 1e-18)
        fail_msg("expected %.12g, got %.12g", b, a);
}

/* Hop distances from src over fabric and NIC links; on a Clos a route may
 * not pass through another host (hosts do not forward). */
static void bfs(const tc_topo *t, uint32_t src, uint32_t *dist, uint32_t *queue)
{
    for (uint32_t v = 0; v < t->n_vertices; v++)
        dist[v] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        uint32_t v = queue[head++];
        if (t->kind == TC_TOPO_CLOS && v != src && v < t->n_endpoints)
            continue;
        for (uint32_t k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
            const tc_link *l = &t->links[t->out_link[k]];
            if (l->kind == TC_LINK_NODE || dist[l->dst] != UINT32_MAX)
                continue;
            dist[l->dst] = dist[v] + 1;
            queue[tail++] = l->dst;
        }
    }
}

static void check_csr(const tc_topo *t)
{
    assert_int_equal(t->out_off[t->n_vertices], t->n_links);
    for (uint32_t v = 0; v < t->n_vertices; v++)
        for (uint32_t k = t->out_off[v]; k < t->out_off[v + 1]; k++)
            assert_int_equal(t->links[t->out_link[k]].src, v);
    for (uint32_t l = 0; l < t->n_links; l += 2) {
        assert_int_equal(t->links[l].src, t->links[l + 1].dst);
        assert_int_equal(t->links[l].dst, t->links[l + 1].src);
    }
}

/* Every ordered pair: the route is a chain of links from src to dst, of the
 * length of a shortest path, within tc_topo_max_path. */
static void check_all_routes(const char *spec, tc_routing r)
{
    tc_topo *t = build(spec);
    check_csr(t);
    uint32_t maxp = tc_topo_max_path(t);
    uint32_t *dist = calloc(t->n_vertices, sizeof *dist), *queue = calloc(t->n_vertices, sizeof *queue);
    uint32_t *path = calloc(maxp + 1, sizeof *path);
    uint32_t longest = 0;
    for (uint32_t s = 0; s < t->n_endpoints; s++) {
        bfs(t, s, dist, queue);
        for (uint32_t d = 0; d < t->n_endpoints; d++) {
            uint32_t n = tc_topo_route(t, r, s, d, path);
            if (s == d) {
                assert_int_equal(n, 0);
                continue;
            }
            bool same_node = t->node_size > 1 && s / t->node_size == d / t->node_size;
            uint32_t want = same_node ? 2 : dist[d];
            if (n != want || n > maxp)
                fail_msg("%s %s: %u -> %u has %u links, shortest is %u (bound %u)", spec, tc_routing_name(r, t), s, d, n,
                         want, maxp);
            uint32_t at = s;
            for (uint32_t k = 0; k < n; k++) {
                assert_true(path[k] < t->n_links);
                const tc_link *l = &t->links[path[k]];
                if (l->src != at)
                    fail_msg("%s: %u -> %u: link %u starts at %u, not %u", spec, s, d, k, l->src, at);
                /* across nodes: fabric links, with a NIC link at both ends where there are NICs */
                bool nic_end = t->nics && (k == 0 || k == n - 1);
                assert_int_equal(l->kind, same_node ? TC_LINK_NODE : nic_end ? TC_LINK_NIC : TC_LINK_FABRIC);
                at = l->dst;
            }
            assert_int_equal(at, d);
            if (n > longest)
                longest = n;
        }
    }
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    if (t->node_size < 2)
        assert_int_equal(longest, info.diameter);
    free(dist), free(queue), free(path);
    tc_topo_free(t);
}

static const char *small_clos[] = {
    "clos:down=8x8,up=1x8",
    "clos:down=4x4,up=2x4",
    "clos:down=2x3x2,up=2x2x3",
    "clos:down=4x4x4,up=1x4x4",
    "clos:down=4x4x4,up=1x2x4,hosts=37",
    "clos:down=3x5,up=1x2,links=2x3,hosts=11",
    "clos:down=6,up=3",
    "clos:hosts=50,radix=8,tiers=3,oversub=3",
    "clos:down=4x4,up=1x4,node=2",
    "clos:down=4x4,up=1x4,node=4,rail=4",
    "clos:down=4x4x2,up=1x2x2,node=8,rail=2",
    "clos:down=2x4x2,up=2x2x2,node=4,rail=4",
    "clos:down=4x4,up=1x4,node=4,nics=2",
    "clos:down=4x4x2,up=1x2x2,node=8,nics=4,rail=2",
    "clos:down=2x4x2,up=2x2x2,node=4,gpus_per_nic=2,rail=2",
    "clos:hosts=24,radix=8,node=4,nics=2",
};

static void every_clos_route_is_a_shortest_chain_for_every_routing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_clos / sizeof *small_clos; i++) {
        check_all_routes(small_clos[i], TC_ROUTE_DEFAULT);
        check_all_routes(small_clos[i], TC_ROUTE_ECMP);
        check_all_routes(small_clos[i], TC_ROUTE_DMODK);
    }
    check_all_routes("clos:down=4x4,up=2x4,seed=12345", TC_ROUTE_ECMP);
}

static const char *small_torus[] = {
    "torus:dims=4",      "torus:dims=5x4",     "torus:dims=4x4,wrap=1x0", "torus:dims=2x3x4",
    "torus:dims=6x2,wrap=0x1", "torus:dims=3x3x3,wrap=0x1x0", "torus:dims=2x2", "torus:dims=4x4,node=4",
};

static void every_torus_route_is_a_shortest_chain_for_every_routing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_torus / sizeof *small_torus; i++) {
        check_all_routes(small_torus[i], TC_ROUTE_DEFAULT);
        check_all_routes(small_torus[i], TC_ROUTE_DOR);
        check_all_routes(small_torus[i], TC_ROUTE_DOR_POSITIVE);
    }
}

static void clos_8x8_has_64_hosts_8_leaves_8_spines_and_256_links(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(info.endpoints, 64);
    assert_int_equal(info.switches, 16);
    assert_int_equal(t->level_count[1], 8);
    assert_int_equal(t->level_count[2], 8);
    assert_int_equal(info.links, 2 * (64 + 64));
    assert_int_equal(t->n_vertices, 80);
    assert_int_equal(info.diameter, 4);
    assert_string_equal(t->spec, "clos:down=8x8,up=1x8,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    /* Every leaf reaches every spine once. */
    for (uint32_t leaf = 0; leaf < 8; leaf++) {
        uint32_t v = t->level_vbase[1] + leaf, ups = 0;
        for (uint32_t k = t->out_off[v]; k < t->out_off[v + 1]; k++)
            ups += t->links[t->out_link[k]].dir > 0;
        assert_int_equal(ups, 8);
    }
    tc_topo_free(t);
}

static void kary_fat_tree_shortcut_has_k3_over_4_hosts_and_5k2_over_4_switches(void **state)
{
    (void)state;
    for (uint32_t k = 4; k <= 16; k += 4) {
        char spec[96];
        snprintf(spec, sizeof spec, "clos:hosts=%u,radix=%u,tiers=3", k * k * k / 4, k);
        tc_topo *t = build(spec);
        tc_topo_info info;
        tc_topo_get_info(t, &info);
        assert_int_equal(info.endpoints, k * k * k / 4);
        assert_int_equal(info.switches, 5 * k * k / 4);
        assert_int_equal(t->levels, 3);
        assert_near(info.oversub[1], 1.0);
        assert_near(info.oversub[2], 1.0);
        assert_near(info.bisection_Bps, k * k * k / 8 * GBPS(400));
        tc_topo_free(t);
    }
    tc_topo *t = build("clos:hosts=1024,radix=16,tiers=3");
    assert_string_equal(t->spec, "clos:down=8x8x16,up=1x8x8,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    tc_topo_free(t);
}

static void two_tier_shortcut_uses_as_many_leaves_as_the_hosts_need(void **state)
{
    (void)state;
    tc_topo *t = build("clos:hosts=100,radix=16");
    /* 8 down and 8 up ports per leaf: 13 leaves, the last one partly used. */
    assert_int_equal(t->levels, 2);
    assert_int_equal(t->down[1], 8);
    assert_int_equal(t->down[2], 13);
    assert_int_equal(t->up[2], 8);
    assert_int_equal(t->n_endpoints, 100);
    assert_string_equal(t->spec, "clos:down=8x13,up=1x8,hosts=100,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    tc_topo_free(t);
}

/* Shift by k on a full non-blocking two-tier Clos: D-mod-k sends the
 * traffic of one leaf to distinct spines and each down-link carries one
 * destination, so no link carries two flows. */
static void count_shift_contention(const char *spec, uint32_t *worst)
{
    tc_topo *t = build(spec);
    uint32_t n = t->n_endpoints, path[16];
    uint32_t *flows = calloc(t->n_links, sizeof *flows);
    *worst = 0;
    for (uint32_t k = 1; k < n; k++) {
        memset(flows, 0, t->n_links * sizeof *flows);
        for (uint32_t s = 0; s < n; s++) {
            uint32_t len = tc_topo_route(t, TC_ROUTE_DMODK, s, (s + k) % n, path);
            for (uint32_t i = 0; i < len; i++)
                if (++flows[path[i]] > *worst)
                    *worst = flows[path[i]];
        }
    }
    free(flows);
    tc_topo_free(t);
}

static void dmodk_routes_every_shift_without_contention_on_nonblocking_clos(void **state)
{
    (void)state;
    uint32_t worst;
    count_shift_contention("clos:down=8x8,up=1x8", &worst);
    assert_int_equal(worst, 1);
    count_shift_contention("clos:down=4x16,up=1x4", &worst);
    assert_int_equal(worst, 1);
    count_shift_contention("clos:down=4x4x4,up=1x4x4", &worst);
    assert_int_equal(worst, 1);
}

static void ecmp_depends_on_the_seed_and_only_on_it(void **state)
{
    (void)state;
    tc_topo *a = build("clos:down=8x8,up=1x8,seed=1"), *b = build("clos:down=8x8,up=1x8,seed=1");
    tc_topo *c = build("clos:down=8x8,up=1x8,seed=2");
    uint32_t pa[4], pb[4], pc[4], differ = 0;
    for (uint32_t d = 8; d < 64; d++) {
        tc_topo_route(a, TC_ROUTE_ECMP, 0, d, pa);
        tc_topo_route(b, TC_ROUTE_ECMP, 0, d, pb);
        tc_topo_route(c, TC_ROUTE_ECMP, 0, d, pc);
        assert_memory_equal(pa, pb, sizeof pa);
        differ += pa[1] != pc[1];
    }
    assert_true(differ > 0);
    tc_topo_free(a), tc_topo_free(b), tc_topo_free(c);
}

static int route_dir(const tc_topo *t, tc_routing r, uint32_t s, uint32_t d, int dim, uint32_t *hops)
{
    uint32_t path[32], n = tc_topo_route(t, r, s, d, path);
    int dir = 0;
    *hops = 0;
    for (uint32_t i = 0; i < n; i++)
        if (t->links[path[i]].level == dim + 1) {
            dir = t->links[path[i]].dir;
            (*hops)++;
        }
    return dir;
}

static void dor_splits_ties_by_source_parity_and_dor_positive_always_goes_plus(void **state)
{
    (void)state;
    tc_topo *t = build("torus:dims=4x6");
    uint32_t hops;
    /* Half way round dimension 0 from x = 0 (even) and x = 1 (odd). */
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 0, 2, 0, &hops), +1);
    assert_int_equal(hops, 2);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 1, 3, 0, &hops), -1);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 3, 1, 0, &hops), -1);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 2, 0, 0, &hops), +1);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 1, 3, 0, &hops), +1);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 3, 1, 0, &hops), +1);
    /* Dimension 1 (size 6): y = 1 -> 4 is a tie from an odd coordinate. */
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 1 * 4, 4 * 4, 1, &hops), -1);
    assert_int_equal(hops, 3);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 1 * 4, 4 * 4, 1, &hops), +1);
    /* Not a tie: the shorter way, whatever the parity. */
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 1 * 4, 5 * 4, 1, &hops), -1);
    assert_int_equal(hops, 2);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 0, 5 * 4, 1, &hops), -1);
    assert_int_equal(hops, 1);
    /* Dimension order: dimension 0 first. */
    uint32_t path[16], n = tc_topo_route(t, TC_ROUTE_DOR, 0, 1 + 4 * 1, path);
    assert_int_equal(n, 2);
    assert_int_equal(t->links[path[0]].level, 1);
    assert_int_equal(t->links[path[1]].level, 2);
    tc_topo_free(t);
}

static void mesh_dimensions_and_size_two_dimensions_route_the_only_way(void **state)
{
    (void)state;
    tc_topo *t = build("torus:dims=4x8,wrap=1x0");
    uint32_t hops;
    /* y = 0 -> 7: one hop round a ring, seven along the mesh line. */
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 0, 7 * 4, 1, &hops), +1);
    assert_int_equal(hops, 7);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 7 * 4, 0, 1, &hops), -1);
    assert_int_equal(hops, 7);
    assert_int_equal(tc_topo_torus_link(t, 7 * 4, 1, +1), UINT32_MAX);
    assert_int_equal(tc_topo_torus_link(t, 0, 1, -1), UINT32_MAX);
    assert_int_not_equal(tc_topo_torus_link(t, 0, 0, -1), UINT32_MAX);
    tc_topo_free(t);

    t = build("torus:dims=2x4");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(info.ports_per_endpoint, 1 + 2);
    assert_int_equal(info.links, 2 * (4 * 1 + 2 * 4));
    assert_int_equal(route_dir(t, TC_ROUTE_DOR_POSITIVE, 1, 0, 0, &hops), -1);
    assert_int_equal(hops, 1);
    assert_int_equal(route_dir(t, TC_ROUTE_DOR, 0, 1, 0, &hops), +1);
    tc_topo_free(t);
}

static void torus_link_arithmetic_matches_the_graph(void **state)
{
    (void)state;
    tc_topo *t = build("torus:dims=3x4x2,wrap=1x0x1");
    for (uint32_t v = 0; v < t->n_endpoints; v++)
        for (int d = 0; d < t->ndims; d++)
            for (int dir = -1; dir <= 1; dir += 2) {
                uint32_t id = tc_topo_torus_link(t, v, d, dir);
                if (id == UINT32_MAX)
                    continue;
                const tc_link *l = &t->links[id];
                assert_int_equal(l->src, v);
                assert_int_equal(l->level, d + 1);
                assert_int_equal(l->dir, dir);
                uint32_t x = v / t->stride[d] % t->dims[d];
                uint32_t y = (x + t->dims[d] + (uint32_t)dir) % t->dims[d];
                assert_int_equal(l->dst, v - x * t->stride[d] + y * t->stride[d]);
            }
    tc_topo_free(t);
}

static void same_node_pairs_route_through_the_node_switch(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=8x8,up=1x8,node=8,node_bw=450GB/s,node_lat=100ns", "torus:dims=4x4,node=4"};
    for (int i = 0; i < 2; i++) {
        tc_topo *t = build(specs[i]);
        uint32_t g = t->node_size, path[16];
        assert_int_equal(t->n_vertices, t->n_endpoints + t->n_switches + t->n_endpoints / g);
        for (tc_routing r = TC_ROUTE_DEFAULT; r <= TC_ROUTE_DOR_POSITIVE; r++) {
            uint32_t n = tc_topo_route(t, r, 1, g - 1, path);
            assert_int_equal(n, 2);
            assert_int_equal(t->links[path[0]].src, 1);
            assert_int_equal(t->links[path[0]].dst, t->node_vbase);
            assert_int_equal(t->links[path[1]].dst, g - 1);
            assert_int_equal(t->links[path[0]].kind, TC_LINK_NODE);
            n = tc_topo_route(t, r, 1, g + 1, path);
            for (uint32_t k = 0; k < n; k++)
                assert_int_equal(t->links[path[k]].kind, TC_LINK_FABRIC);
        }
        tc_topo_info info;
        tc_topo_get_info(t, &info);
        assert_int_equal(info.node_switches, t->n_endpoints / g);
        tc_topo_free(t);
    }
    tc_topo *t = build("clos:down=8x8,up=1x8,node=8,node_bw=450GB/s,node_lat=100ns");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_near(info.min_latency_s, 200e-9);
    assert_near(t->node_bw, 450e9);
    tc_topo_free(t);
}

/* A path's latency is its cables' lat plus hop_lat per switch or router it
 * passes through (topo.h, "Latency"), and the link lats carry exactly that. */
static double route_lat(const tc_topo *t, uint32_t a, uint32_t b, uint32_t *hops)
{
    uint32_t path[32];
    uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, a, b, path);
    double lat = 0;
    for (uint32_t k = 0; k < n; k++)
        lat += t->links[path[k]].lat;
    if (hops)
        *hops = n;
    return lat;
}

static void path_latency_is_cables_plus_switches_traversed(void **state)
{
    (void)state;
    uint32_t n;
    /* A 3-level Clos with a different cable latency per level: hosts 0 and
     * 1 share a leaf (2 level-1 cables, the leaf); 0 and 4 meet at level 2
     * (2 cables of levels 1 and 2, leaf, L2, leaf); 0 and 63 at the top
     * (6 cables, 5 switches). */
    tc_topo *t = build("clos:down=4x4x4,up=1x4x4,lat1=10ns,lat2=20ns,lat3=40ns,hop_lat=100ns");
    assert_near(route_lat(t, 0, 1, &n), 2 * 10e-9 + 100e-9);
    assert_int_equal(n, 2);
    assert_near(route_lat(t, 0, 4, &n), 2 * (10e-9 + 20e-9) + 3 * 100e-9);
    assert_int_equal(n, 4);
    assert_near(route_lat(t, 0, 63, &n), 2 * (10e-9 + 20e-9 + 40e-9) + 5 * 100e-9);
    assert_int_equal(n, 6);
    assert_near(route_lat(t, 63, 0, NULL), 640e-9);
    assert_near(tc_topo_clos_path_lat(t, 3), 640e-9);
    assert_near(tc_topo_clos_path_lat(t, 0), 0);
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_near(info.min_latency_s, 120e-9);
    assert_near(info.max_latency_s, 640e-9);
    /* The link into a host carries no traversal, every other link one. */
    assert_near(t->links[t->up_lbase[1]].lat, 110e-9);
    assert_near(t->links[t->down_lbase[1]].lat, 10e-9);
    assert_near(t->links[t->down_lbase[2]].lat, 120e-9);
    tc_topo_free(t);

    /* A torus: a route of h links passes through h routers (every one but
     * the source's own): (2,2) is 4 hops from (0,0) on a 4x4 torus. */
    t = build("torus:dims=4x4,lat=50ns,hop_lat=100ns");
    assert_near(route_lat(t, 0, 1, &n), 150e-9);
    assert_int_equal(n, 1);
    assert_near(route_lat(t, 0, 10, &n), 4 * 150e-9);
    assert_int_equal(n, 4);
    tc_topo_get_info(t, &info);
    assert_near(info.min_latency_s, 150e-9);
    assert_near(info.max_latency_s, 600e-9);
    tc_topo_free(t);

    /* A scale-up node: 2 node links and the node switch between them. */
    t = build("clos:down=8x8,up=1x8,lat=50ns,hop_lat=100ns,node=8,node_lat=20ns,node_hop_lat=30ns");
    assert_near(route_lat(t, 1, 7, &n), 2 * 20e-9 + 30e-9);
    assert_int_equal(n, 2);
    assert_near(route_lat(t, 1, 9, NULL), 4 * 50e-9 + 3 * 100e-9); /* nodes and leaves coincide */
    tc_topo_get_info(t, &info);
    assert_near(info.min_latency_s, 70e-9);
    assert_near(info.max_latency_s, 4 * 50e-9 + 3 * 100e-9);
    assert_string_equal(t->spec, "clos:down=8x8,up=1x8,bw=400Gbps,lat=50ns,hop_lat=100ns,node=8,node_bw=450GB/s,"
                                 "node_lat=20ns,node_hop_lat=30ns,alpha=1.1us");
    tc_topo_free(t);
}

static double fabric_out_bw(const tc_topo *t, uint32_t e)
{
    double sum = 0;
    for (uint32_t k = t->out_off[e]; k < t->out_off[e + 1]; k++)
        if (t->links[t->out_link[k]].kind == TC_LINK_FABRIC)
            sum += t->links[t->out_link[k]].bw;
    return sum;
}

static void equalize_injection_gives_every_endpoint_the_requested_rate(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=4x4,up=2x4,links=2x1,bw2=100Gbps,node=2", "torus:dims=8x8x8", "torus:dims=4x2x3"};
    for (int i = 0; i < 3; i++) {
        tc_topo *t = build(specs[i]);
        tc_err err = {{0}};
        double node_bw = t->node_bw;
        assert_int_equal(tc_topo_equalize_injection(t, GBPS(800), &err), TC_OK);
        tc_topo_info info;
        tc_topo_get_info(t, &info);
        assert_near(info.injection_Bps, GBPS(800));
        assert_near(fabric_out_bw(t, 0), GBPS(800));
        for (uint32_t l = 0; l < t->n_links; l++)
            if (t->links[l].kind == TC_LINK_NODE)
                assert_near(t->links[l].bw, node_bw);
        assert_int_equal(tc_topo_equalize_injection(t, 0, &err), TC_EINVAL);
        tc_topo_free(t);
    }
    /* A mesh: its interior endpoints (2 ports a dimension) inject the rate,
     * a corner (1 a dimension) half of it; its links as the torus's. */
    tc_topo *m = build("torus:dims=8x8x8,wrap=0x0x0"), *w = build("torus:dims=8x8x8");
    tc_err e2 = {{0}};
    assert_int_equal(tc_topo_equalize_injection(m, GBPS(400), &e2), TC_OK);
    assert_int_equal(tc_topo_equalize_injection(w, GBPS(400), &e2), TC_OK);
    assert_near(fabric_out_bw(m, 1 + 8 + 64), GBPS(400)); /* (1,1,1) */
    assert_near(fabric_out_bw(m, 0), GBPS(200));
    assert_near(m->links[0].bw, w->links[0].bw);
    tc_topo_free(m);
    tc_topo_free(w);
    /* A multi-rail Clos keeps its level ratio: bw2 was a quarter of bw1 x 2. */
    tc_topo *t = build("clos:down=4x4,up=2x4,links=2x1,bw2=100Gbps");
    tc_err err = {{0}};
    assert_int_equal(tc_topo_equalize_injection(t, GBPS(400), &err), TC_OK);
    assert_near(t->level_bw[1], GBPS(200));
    assert_near(t->level_bw[2], GBPS(25));
    tc_topo_free(t);
}

static void nonblocking_three_tier_clos_figures_match_hand_computation(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=16x16x16,up=1x16x16");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    /* 4096 hosts; 256 leaves, 16 pods x 16 aggregation, 256 spines. */
    assert_int_equal(info.endpoints, 4096);
    assert_int_equal(info.switches, 256 + 256 + 256);
    assert_int_equal(info.links, 2 * (4096 + 256 * 16 + 256 * 16));
    assert_int_equal(info.diameter, 6);
    assert_int_equal(info.ports_per_endpoint, 1);
    assert_near(info.injection_Bps, GBPS(400));
    assert_near(info.bisection_Bps, 2048 * GBPS(400));
    /* Default latencies: 50 ns per cable, 100 ns per switch. Two hosts of
     * one leaf: 2 cables, 1 switch; across the core: 6 cables, 5 switches. */
    assert_near(info.min_latency_s, 2 * 50e-9 + 100e-9);
    assert_near(info.max_latency_s, 6 * 50e-9 + 5 * 100e-9);
    assert_near(info.oversub[1], 1.0);
    assert_near(info.oversub[2], 1.0);
    assert_int_equal(tc_topo_max_path(t), 6);
    tc_topo_free(t);
}

static void torus_16x16x16_figures_match_hand_computation(void **state)
{
    (void)state;
    tc_topo *t = build("torus:dims=16x16x16,bw=100Gbps,lat=500ns,hop_lat=250ns");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(info.endpoints, 4096);
    assert_int_equal(info.switches, 0);
    assert_int_equal(info.links, 3 * 4096 * 2);
    assert_int_equal(info.diameter, 24);
    assert_int_equal(info.ports_per_endpoint, 6);
    assert_near(info.injection_Bps, 6 * GBPS(100));
    /* 256 lines cross the cut plane, each ring twice. */
    assert_near(info.bisection_Bps, 512 * GBPS(100));
    /* Every link enters a router: 750 ns per hop. */
    assert_near(info.min_latency_s, 750e-9);
    assert_near(info.max_latency_s, 24 * 750e-9);
    assert_int_equal(tc_topo_max_path(t), 24);
    tc_topo_free(t);

    t = build("torus:dims=16x16x16,wrap=1x1x0");
    tc_topo_get_info(t, &info);
    assert_int_equal(info.diameter, 8 + 8 + 15);
    assert_near(info.bisection_Bps, 256 * GBPS(400));
    tc_topo_free(t);
}

static void tapered_clos_reports_oversubscription_two_at_the_leaves(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=16x16x16,up=1x8x16");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_near(info.oversub[1], 2.0);
    assert_near(info.oversub[2], 16.0 / 16.0);
    assert_near(info.bisection_Bps, 1024 * GBPS(400));
    tc_topo_free(t);
}

static void partially_populated_clos_builds_only_its_hosts(void **state)
{
    (void)state;
    tc_topo *t = build("clos:down=8x8,up=1x8,hosts=20");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(info.endpoints, 20);
    assert_int_equal(info.switches, 16);
    assert_int_equal(info.links, 2 * (20 + 64));
    assert_int_equal(info.diameter, 4);
    assert_near(info.bisection_Bps, 10 * GBPS(400));
    tc_topo_free(t);
    t = build("clos:down=8x8,up=1x8,hosts=8");
    tc_topo_get_info(t, &info);
    assert_int_equal(info.diameter, 2);
    assert_int_equal(tc_topo_max_path(t), 2);
    tc_topo_free(t);
}

static void oversub_three_with_radix_32_is_valid_and_two_names_the_nearest(void **state)
{
    (void)state;
    tc_topo *t = build("clos:hosts=768,radix=32,tiers=2,oversub=3");
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(t->down[1], 24);
    assert_int_equal(t->up[2], 8);
    assert_near(info.oversub[1], 3.0);
    tc_topo_free(t);
    t = build("clos:hosts=4096,radix=32,tiers=3,oversub=3");
    tc_topo_get_info(t, &info);
    assert_near(info.oversub[1], 3.0);
    assert_near(info.oversub[2], 1.0);
    tc_topo_free(t);

    tc_err err = {{0}};
    t = (tc_topo *)&err;
    assert_int_equal(tc_topo_build("clos:hosts=768,radix=32,oversub=2", &t, &err), TC_EINVAL);
    assert_null(t);
    assert_non_null(strstr(err.msg, "1 and 3"));
}

static void canonical_spec_builds_the_same_topology(void **state)
{
    (void)state;
    const char *specs[] = {"clos:hosts=1000,radix=16,tiers=3,oversub=3,bw1=200Gbps,lat=500ns,seed=9",
                           "clos:down=4x4,up=2x4,links=2x1,hosts=13,node=13,alpha=2us",
                           "torus:dims=8x4x2,wrap=1x0x1,bw=50GB/s,node=4,node_bw=900GB/s,node_lat=300ns",
                           "clos:down=4x4x4,up=1x4x4,lat1=10ns,lat3=2us,hop_lat=0,node=2,node_hop_lat=35ns,alpha=0",
                           "torus:dims=4x4,hop_lat=1.5us,alpha=250ns"};
    for (int i = 0; i < 5; i++) {
        tc_topo *a = build(specs[i]);
        tc_topo *b = build(a->spec);
        assert_string_equal(a->spec, b->spec);
        assert_int_equal(a->n_links, b->n_links);
        for (uint32_t l = 0; l < a->n_links; l++) {
            assert_near(a->links[l].bw, b->links[l].bw);
            assert_near(a->links[l].lat, b->links[l].lat);
        }
        assert_near(a->alpha, b->alpha);
        assert_near(a->hop_lat, b->hop_lat);
        assert_near(a->node_hop_lat, b->node_hop_lat);
        assert_true(a->seed == b->seed);
        tc_topo_free(a), tc_topo_free(b);
    }
}

static void links_have_readable_names(void **state)
{
    (void)state;
    char buf[96];
    tc_topo *t = build("clos:down=8x8,up=1x8,node=4");
    /* Host 5 has one up-link, cable 5 of level 1. */
    assert_string_equal(tc_topo_link_name(t, t->up_lbase[1] + 2 * 5, buf, sizeof buf), "host 5 -> leaf 0");
    assert_string_equal(tc_topo_link_name(t, t->up_lbase[2] + 2 * (3 * 8 + 1), buf, sizeof buf), "leaf 3 -> L2 1");
    assert_string_equal(tc_topo_link_name(t, t->down_lbase[2] + 2 * (3 * 8 + 1), buf, sizeof buf), "L2 1 -> leaf 3");
    assert_string_equal(tc_topo_link_name(t, t->node_lbase + 2 * 3, buf, sizeof buf), "ep 3 -> node 0");
    assert_string_equal(tc_topo_link_name(t, t->node_lbase + 2 * 5 + 1, buf, sizeof buf), "node 1 -> ep 5");
    assert_string_equal(tc_topo_link_name(t, t->n_links, buf, sizeof buf), "no link 384");
    tc_topo_free(t);
    t = build("torus:dims=4x4x4");
    uint32_t v = 1 + 2 * 4;
    assert_string_equal(tc_topo_link_name(t, tc_topo_torus_link(t, v, 0, +1), buf, sizeof buf), "(1,2,0) -> (2,2,0) dim 0+");
    assert_string_equal(tc_topo_link_name(t, tc_topo_torus_link(t, v, 2, -1), buf, sizeof buf), "(1,2,0) -> (1,2,3) dim 2-");
    tc_topo_free(t);
}

static void routing_names_parse_only_for_their_kind(void **state)
{
    (void)state;
    tc_topo *clos = build("clos:down=4x4,up=1x4"), *torus = build("torus:dims=4x4");
    tc_routing r;
    tc_err err = {{0}};
    assert_int_equal(tc_routing_parse("dmodk", clos, &r, &err), TC_OK);
    assert_int_equal(r, TC_ROUTE_DMODK);
    assert_int_equal(tc_routing_parse("dor-positive", torus, &r, &err), TC_OK);
    assert_int_equal(r, TC_ROUTE_DOR_POSITIVE);
    assert_int_equal(tc_routing_parse("dor", clos, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "ecmp or dmodk"));
    assert_int_equal(tc_routing_parse("ecmp", torus, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "dor, dor-positive, detour or line"));
    assert_int_equal(tc_routing_parse("minimal", NULL, &r, &err), TC_EINVAL);
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, clos), "ecmp");
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, torus), "dor");
    assert_string_equal(tc_routing_name(TC_ROUTE_DMODK, NULL), "dmodk");
    tc_topo_free(clos), tc_topo_free(torus);
}

static void degrade_link_scales_one_direction_and_rejects_bad_input(void **state)
{
    (void)state;
    tc_topo *t = build("torus:dims=4x4");
    tc_err err = {{0}};
    double bw = t->links[6].bw;
    assert_int_equal(tc_topo_degrade_link(t, 6, 0.25, &err), TC_OK);
    assert_near(t->links[6].bw, bw / 4);
    assert_near(t->links[7].bw, bw);
    err.msg[0] = '\0';
    assert_int_equal(tc_topo_degrade_link(t, t->n_links, 0.5, &err), TC_EINVAL);
    assert_true(err.msg[0] != '\0');
    err.msg[0] = '\0';
    assert_int_equal(tc_topo_degrade_link(t, 0, 0, &err), TC_EINVAL);
    assert_true(err.msg[0] != '\0');
    assert_int_equal(tc_topo_degrade_link(t, 0, -1, &err), TC_EINVAL);
    tc_topo_free(t);
}

static void large_clos_and_torus_build_and_route(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=32x32x64,up=1x32x32", "clos:down=16x64x64,up=1x64x64",
                           "clos:hosts=65536,radix=64,tiers=3", "torus:dims=64x32x32"};
    for (int i = 0; i < 4; i++) {
        tc_topo *t = build(specs[i]);
        assert_int_equal(t->n_endpoints, 65536);
        uint32_t path[64], n = tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 65535, path);
        assert_true(n > 0 && n <= tc_topo_max_path(t));
        assert_int_equal(t->links[path[0]].src, 0);
        assert_int_equal(t->links[path[n - 1]].dst, 65535);
        tc_topo_free(t);
    }
}

/* ---- bad input: TC_EINVAL, one non-empty line, nothing built ---- */

static void expect_einval(const char *spec, const char *needle)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    tc_status st = tc_topo_build(spec, &t, &err);
    if (st != TC_EINVAL)
        fail_msg("%s: expected TC_EINVAL, got %d", spec, st);
    assert_null(t);
    assert_true(err.msg[0] != '\0');
    assert_null(strchr(err.msg, '\n'));
    if (needle && !strstr(err.msg, needle))
        fail_msg("%s: message '%s' does not mention '%s'", spec, err.msg, needle);
}

static void malformed_spec_is_rejected(void **state)
{
    (void)state;
    expect_einval("clos:down=8x8,,up=1x8", NULL);
    expect_einval("clos:down", "key=value");
    expect_einval("", NULL);
    expect_einval("clos:down=8x,up=1x8", "down");
    expect_einval("clos:down=8x8,up=1x8x1", "levels");
    expect_einval("clos:down=8x8", "up=");
    expect_einval("clos:up=1x8,radix=8,hosts=8", "mixes");
    expect_einval("torus", "dims=");
    expect_einval("clos:down=8x8,up=1x8,hosts=65", "host slots");
    expect_einval("clos:down=8x8,up=1x8,seed=-1", "seed");
}

static void unknown_key_is_rejected_listing_accepted_keys(void **state)
{
    (void)state;
    expect_einval("clos:down=8x8,up=1x8,speed=1", "accepted keys are down, up");
    expect_einval("torus:dims=4x4,bw1=100Gbps", "accepted keys are dims");
    expect_einval("clos:down=8x8,up=1x8,bw3=100Gbps", "bw3");
}

static void unknown_kind_is_rejected_naming_clos_and_torus(void **state)
{
    (void)state;
    expect_einval("dragonfly:groups=9", "clos or torus");
}

static void radix_too_small_for_the_hosts_is_rejected_with_the_maximum(void **state)
{
    (void)state;
    expect_einval("clos:hosts=2000,radix=16,tiers=3", "at most 1024 hosts");
    expect_einval("clos:hosts=200,radix=16,tiers=2", "at most 128 hosts");
    expect_einval("clos:hosts=100,radix=15,tiers=3,oversub=2", "even radix");
    expect_einval("clos:hosts=100,tiers=3", "radix=");
    expect_einval("clos:hosts=100,radix=16,tiers=4", "tiers=2 or tiers=3");
}

static void torus_dimension_of_size_zero_or_one_is_rejected(void **state)
{
    (void)state;
    expect_einval("torus:dims=4x0", "dims");
    expect_einval("torus:dims=4x1", "at least 2");
    expect_einval("torus:dims=1", "at least 2");
}

static void wrap_list_of_the_wrong_length_is_rejected(void **state)
{
    (void)state;
    expect_einval("torus:dims=4x4,wrap=1x1x1", "3 values for 2 dimensions");
    expect_einval("torus:dims=4x4,wrap=1", "1 values for 2 dimensions");
    expect_einval("torus:dims=4x4,wrap=1x2", "0 or 1");
}

static void bad_units_are_rejected_naming_the_key(void **state)
{
    (void)state;
    expect_einval("clos:down=8x8,up=1x8,bw=400Gb", "'bw'");
    expect_einval("torus:dims=4x4,lat=1sec", "'lat'");
    expect_einval("torus:dims=4x4,node=2,node_bw=fast", "'node_bw'");
    expect_einval("clos:down=8x8,up=1x8,alpha=3", "'alpha'");
    expect_einval("clos:down=8x8,up=1x8,hop_lat=100", "'hop_lat'");
    expect_einval("torus:dims=4x4,hop_lat=-1us", "'hop_lat'");
    expect_einval("clos:down=8x8,up=1x8,hop_lat=fast", "'hop_lat'");
    expect_einval("torus:dims=4x4,node=2,node_hop_lat=1parsec", "'node_hop_lat'");
}

/* Rail-optimized: endpoint i of every node is on the leaves of its rail
 * (G / R consecutive endpoints per rail), endpoints stay numbered node by
 * node, every leaf holds one rail's ports only, and two endpoints of one
 * rail on one leaf meet at the leaf while endpoints of two rails climb to
 * the spines. */
static void rail_optimized_clos_puts_endpoint_i_of_every_node_on_its_rail(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t G, R;
    } cases[] = {{"clos:down=8x8,up=1x8,node=8,rail=8", 8, 8},
                 {"clos:down=4x8,up=1x8,node=8,rail=4", 8, 4},
                 {"clos:down=16x4,up=1x4,node=8,rail=8", 8, 8},
                 {"clos:down=4x4x4,up=1x4x4,node=4,rail=2", 4, 2}};
    uint32_t path[16];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_topo *t = build(cases[c].spec);
        uint32_t G = t->node_size, R = t->rails, n = t->n_endpoints;
        assert_int_equal(G, cases[c].G);
        assert_int_equal(R, cases[c].R);
        uint32_t D = t->down[1], nleaves = t->level_count[1];
        uint32_t *leaf_rail = malloc(nleaves * sizeof *leaf_rail);
        uint8_t *seen = calloc(n, 1);
        for (uint32_t l = 0; l < nleaves; l++)
            leaf_rail[l] = UINT32_MAX;
        for (uint32_t e = 0; e < n; e++) {
            uint32_t s = tc_topo_slot(t, e);
            assert_true(s < n);
            assert_false(seen[s]); /* a bijection */
            seen[s] = 1;
            /* the endpoint's own up-link leaves the endpoint's vertex for leaf s / D */
            const tc_link *up = &t->links[t->up_lbase[1] + 2 * (s * t->up[1])];
            assert_int_equal(up->src, e);
            assert_int_equal(up->dst, t->level_vbase[1] + s / D);
            uint32_t rail = e % G / (G / R);
            if (leaf_rail[s / D] == UINT32_MAX)
                leaf_rail[s / D] = rail;
            if (D <= n / R)
                assert_int_equal(leaf_rail[s / D], rail); /* a leaf of one rail */
        }
        /* GPU 0 of nodes 0 and 1 share a leaf; GPU 0 and the first GPU of
         * the next rail in one node (different leaves unless a leaf holds
         * several rails) route over the node switch; across nodes, two
         * rails climb above the leaves when they are on different leaves. */
        assert_int_equal(tc_topo_route(t, TC_ROUTE_DMODK, 0, G, path), 2);
        uint32_t other = G + G / R; /* node 1, rail 1 */
        uint32_t hops = tc_topo_route(t, TC_ROUTE_DMODK, 0, other, path);
        uint32_t s0 = tc_topo_slot(t, 0), s1 = tc_topo_slot(t, other);
        int top = 1;
        while (s0 / t->span[top] != s1 / t->span[top])
            top++;
        if (t->levels == 2)
            assert_int_equal(hops, s0 / D == s1 / D ? 2 : 4);
        assert_int_equal(hops, 2 * top);
        free(leaf_rail);
        free(seen);
        tc_topo_free(t);
    }
    expect_einval("clos:down=8x8,up=1x8,node=8,rail=3", "does not divide the node of 8");
    expect_einval("clos:down=8x8,up=1x8,rail=8", "needs node=G");
    expect_einval("clos:down=16x6,up=1x6,node=8,rail=8", "neither fill whole leaves");
    expect_einval("torus:dims=4x4,node=4,rail=4", "unknown key 'rail'");
}

/* Shared NICs: G / K consecutive endpoints of a node behind one NIC vertex
 * that owns the node's fabric port; an endpoint reaches it over its own
 * NIC link; endpoints sharing a NIC share its up-link, with rails a NIC is
 * on its rail's leaf; the figures count NICs as host slots. */
static void shared_nics_own_the_fabric_ports_of_their_endpoints(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t G, K, R, endpoints;
    } cases[] = {{"clos:down=4x2,up=1x2,node=8,nics=4,bw=100Gbps", 8, 4, 0, 16},
                 {"clos:down=4x2,up=1x2,node=8,gpus_per_nic=2,bw=100Gbps", 8, 4, 0, 16},
                 {"clos:down=8x4,up=1x4,node=8,nics=4,rail=4", 8, 4, 4, 64},
                 {"clos:down=4x4x2,up=1x2x2,node=8,nics=2,rail=2", 8, 2, 2, 128},
                 {"clos:hosts=96,radix=8,node=8,nics=2", 8, 2, 0, 96}};
    uint32_t path[16];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_topo *t = build(cases[c].spec);
        uint32_t G = cases[c].G, K = cases[c].K, k = G / K, n = t->n_endpoints;
        assert_int_equal(n, cases[c].endpoints);
        assert_int_equal(t->nics, K);
        assert_int_equal(t->rails, cases[c].R);
        assert_int_equal(t->n_slots, n / k);
        assert_int_equal(t->n_vertices, n + t->n_switches + n / G + n / k);
        for (uint32_t e = 0; e < n; e++) {
            uint32_t s = tc_topo_slot(t, e), nic = t->nic_vbase + s;
            assert_true(s < t->n_slots);
            assert_int_equal(s, tc_topo_slot(t, e / k * k)); /* the NIC of its group */
            const tc_link *l = &t->links[t->nic_lbase + 2 * e];
            assert_int_equal(l->kind, TC_LINK_NIC);
            assert_int_equal(l->src, e);
            assert_int_equal(l->dst, nic);
            assert_int_equal(t->links[t->nic_lbase + 2 * e + 1].dst, e);
            /* the NIC's up-link: from the NIC vertex to a leaf */
            const tc_link *up = &t->links[t->up_lbase[1] + 2 * (s * t->up[1])];
            assert_int_equal(up->src, nic);
            if (cases[c].R) {
                uint32_t rail = e % G / k / (K / cases[c].R), per_rail = n / G * (K / cases[c].R);
                assert_int_equal(s / per_rail, rail);
            }
        }
        /* 0 and 1 (one NIC when k > 1) to the same GPUs of node 1 share the
         * NIC's up-link; the route has the NIC links at both ends. */
        uint32_t n0 = tc_topo_route(t, TC_ROUTE_DMODK, 0, G, path);
        assert_int_equal(path[0], t->nic_lbase);
        assert_int_equal(path[n0 - 1], t->nic_lbase + 2 * G + 1);
        uint32_t first = path[1];
        tc_topo_route(t, TC_ROUTE_DMODK, 1, G + 1, path);
        assert_int_equal(path[1] == first, k > 1);
        tc_topo_info info;
        tc_topo_get_info(t, &info);
        assert_true(fabs(info.injection_Bps - t->up[1] * t->level_bw[1] / k) <= 1e-9 * info.injection_Bps);
        /* the spec reads back to the same network */
        tc_topo *u = build(t->spec);
        assert_string_equal(u->spec, t->spec);
        assert_int_equal(u->n_links, t->n_links);
        tc_topo_free(u);
        tc_topo_free(t);
    }
    expect_einval("clos:down=4x2,up=1x2,node=8,nics=3", "nics=3 does not fit a node of 8 GPUs");
    expect_einval("clos:down=4x2,up=1x2,node=8,gpus_per_nic=3", "gpus_per_nic=3 does not fit a node of 8");
    expect_einval("clos:down=4x2,up=1x2,nics=4", "needs node=G");
    expect_einval("clos:down=4x2,up=1x2,node=8,nics=4,gpus_per_nic=2", "both nics= and gpus_per_nic=");
    expect_einval("clos:down=8x4,up=1x4,node=8,nics=4,rail=8", "does not divide the 4 NICs");
    expect_einval("clos:down=4x2,up=1x2,node=8,nic_bw=64GB/s", "need nics=K");
    expect_einval("clos:down=4x2,up=1x2,node=8,nics=4,hosts=15", "not a whole number of NICs");
    expect_einval("torus:dims=4x4,node=4,nics=2", "unknown key 'nics'");
}

static void node_size_not_dividing_the_endpoints_is_rejected(void **state)
{
    (void)state;
    expect_einval("torus:dims=4x4,node=3", "does not divide the 16 endpoints");
    expect_einval("clos:down=8x8,up=1x8,node_bw=450GB/s", "node=");
    expect_einval("clos:down=8x8,up=1x8,node_hop_lat=50ns", "node=");
}

/* ---- multi-datacenter: pods joined by long-haul links ---- */

#define MDC2 "multidc:pods=2,pod=clos,hosts=4,radix=4,wan_bw=10Gbps,wan_lat=20ms"

static uint32_t count_kind(const tc_topo *t, tc_link_kind k)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < t->n_links; l++)
        n += t->links[l].kind == k;
    return n;
}

/* Two pods of clos:down=2x2,up=1x2 (4 hosts, 2 leaves, 2 spines, 8 cables):
 * 8 endpoints, 8 switches and 2 gateways, 2 x 8 pod cables, each gateway
 * cabled to its pod's 2 spines, one long-haul cable: 21 cables. */
static void multidc_of_two_clos_pods_counts_endpoints_switches_and_links(void **state)
{
    (void)state;
    tc_topo *t = build(MDC2);
    check_csr(t);
    assert_int_equal(t->kind, TC_TOPO_MULTIDC);
    assert_int_equal(t->n_pods, 2);
    assert_int_equal(t->pod_endpoints, 4);
    assert_int_equal(tc_topo_pod_size(t), 4);
    assert_int_equal(tc_topo_pod_of(t, 3), 0);
    assert_int_equal(tc_topo_pod_of(t, 5), 1);
    assert_int_equal(tc_topo_fabric_kind(t), TC_TOPO_CLOS);
    assert_string_equal(tc_topo_kind_name(t->kind), "multidc");
    assert_int_equal(t->n_endpoints, 8);
    assert_int_equal(t->n_switches, 10);
    assert_int_equal(t->n_links, 42);
    assert_int_equal(count_kind(t, TC_LINK_GW), 8);
    assert_int_equal(count_kind(t, TC_LINK_WAN), 2);
    assert_int_equal(t->gw_attach, 2);
    assert_near(t->wan_bw, GBPS(10));
    assert_near(t->gw_bw, GBPS(10)); /* (P - 1) wan_bw */
    assert_near(t->wan_lat, 20e-3);
    assert_near(t->gw_lat, 50e-9);   /* the pod's top-level cable */
    const tc_link *w = &t->links[t->wan_lbase];
    assert_int_equal(w->src, t->gw_vbase);
    assert_int_equal(w->dst, t->gw_vbase + 1);
    assert_near(w->lat, 20e-3 + 100e-9); /* the cable and the gateway it enters */
    tc_topo_info in;
    tc_topo_get_info(t, &in);
    assert_int_equal(in.endpoints, 8);
    assert_int_equal(in.diameter, 7); /* 2 up, gateway cable, long-haul, gateway cable, 2 down */
    assert_near(in.min_latency_s, 2 * 50e-9 + 100e-9);
    /* Between pods: 4 pod cables and 2 gateway cables of 50 ns, the
     * long-haul 20 ms, and 6 switches (leaf, spine, gateway, gateway,
     * spine, leaf). */
    double cross = 6 * 50e-9 + 20e-3 + 6 * 100e-9;
    assert_near(t->cross_lat, cross);
    assert_near(in.max_latency_s, cross);
    assert_near(in.bisection_Bps, GBPS(10));
    assert_near(in.injection_Bps, GBPS(400));
    uint32_t path[32], n = tc_topo_route(t, TC_ROUTE_DEFAULT, 1, 6, path);
    double lat = 0;
    for (uint32_t k = 0; k < n; k++)
        lat += t->links[path[k]].lat;
    assert_int_equal(n, 7);
    assert_near(lat, cross);
    tc_topo_free(t);
}

static const char *small_mdc[] = {
    MDC2,
    "multidc:pods=3,pod=clos,down=4x4,up=1x2,wan_bw=100Gbps,wan_lat=5ms,wan_links=2",
    "multidc:pods=2,pod=clos,down=4x4,up=1x4,node=4,wan_bw=400Gbps,wan_lat=1ms,wan_links=3,gw_bw=1Tbps",
    "multidc:pods=2,pod=clos,down=4x4x2,up=1x2x2,node=8,nics=4,rail=2,wan_bw=100Gbps,wan_lat=2ms,wan_links=2",
    "multidc:pods=4,pod=torus,dims=4x3,wan_bw=50Gbps,wan_lat=30ms,gw_lat=1us",
    "multidc:pods=2,pod=torus,dims=4x4,wrap=1x0,node=2,wan_bw=200Gbps,wan_lat=10ms,wan_links=2",
    "multidc:pods=3,pod=clos,down=3,up=1,wan_bw=1Gbps,wan_lat=0",
};

/* Every ordered pair, every routing of the pods' kind: a chain of links from
 * src to dst within tc_topo_max_path; between pods exactly one long-haul
 * link, up to a gateway of the source's pod and down from the same
 * gateway of the destination's; within a pod none, and the pod's own
 * route. The longest route is the diameter. */
static void check_mdc_routes(const char *spec, tc_routing r)
{
    tc_topo *t = build(spec);
    check_csr(t);
    uint32_t maxp = tc_topo_max_path(t), n = t->pod_endpoints, longest = 0;
    uint32_t *path = calloc(maxp + 1, sizeof *path), *pp = calloc(maxp + 1, sizeof *pp);
    for (uint32_t s = 0; s < t->n_endpoints; s++)
        for (uint32_t d = 0; d < t->n_endpoints; d++) {
            uint32_t m = tc_topo_route(t, r, s, d, path);
            assert_int_equal(m, tc_topo_route_healthy(t, r, s, d, pp));
            if (s == d) {
                assert_int_equal(m, 0);
                continue;
            }
            if (m == 0 || m > maxp)
                fail_msg("%s %s: %u -> %u: %u links (bound %u)", spec, tc_routing_name(r, t), s, d, m, maxp);
            uint32_t at = s, wan = 0, gw = 0;
            for (uint32_t k = 0; k < m; k++) {
                const tc_link *l = &t->links[path[k]];
                if (l->src != at)
                    fail_msg("%s: %u -> %u: link %u starts at %u, not %u", spec, s, d, k, l->src, at);
                wan += l->kind == TC_LINK_WAN;
                gw += l->kind == TC_LINK_GW;
                if (l->kind == TC_LINK_WAN) /* gateway g to gateway g */
                    assert_int_equal((l->src - t->gw_vbase) % t->wan_links, (l->dst - t->gw_vbase) % t->wan_links);
                at = l->dst;
            }
            assert_int_equal(at, d);
            bool same = s / n == d / n;
            assert_int_equal(wan, same ? 0 : 1);
            assert_int_equal(gw, same ? 0 : 2);
            if (same) { /* the pod's own route, its links renumbered */
                uint32_t k = s / n, q = tc_topo_route(t->pod[k], r, s % n, d % n, pp);
                assert_int_equal(q, m);
                for (uint32_t i = 0; i < q; i++) {
                    assert_int_equal(t->links[path[i]].kind, t->pod[k]->links[pp[i]].kind);
                    assert_near(t->links[path[i]].lat, t->pod[k]->links[pp[i]].lat);
                }
            } else {
                double lat = 0;
                for (uint32_t k = 0; k < m; k++)
                    lat += t->links[path[k]].lat;
                assert_near(lat, t->cross_lat);
            }
            if (m > longest)
                longest = m;
        }
    tc_topo_info info;
    tc_topo_get_info(t, &info);
    assert_int_equal(longest, info.diameter);
    free(path), free(pp);
    tc_topo_free(t);
}

static void multidc_routes_cross_one_long_haul_link_between_pods_and_none_within(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_mdc / sizeof *small_mdc; i++) {
        bool clos = strstr(small_mdc[i], "pod=clos") != NULL;
        tc_routing rs[] = {TC_ROUTE_DEFAULT, clos ? TC_ROUTE_ECMP : TC_ROUTE_DOR,
                           clos ? TC_ROUTE_DMODK : TC_ROUTE_DOR_POSITIVE};
        for (int k = 0; k < 3; k++)
            check_mdc_routes(small_mdc[i], rs[k]);
    }
}

static void multidc_spec_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_mdc / sizeof *small_mdc; i++) {
        tc_topo *a = build(small_mdc[i]);
        tc_topo *b = build(a->spec);
        assert_string_equal(a->spec, b->spec);
        assert_int_equal(a->n_links, b->n_links);
        assert_int_equal(a->n_vertices, b->n_vertices);
        for (uint32_t l = 0; l < a->n_links; l++) {
            assert_int_equal(a->links[l].src, b->links[l].src);
            assert_int_equal(a->links[l].dst, b->links[l].dst);
            assert_near(a->links[l].bw, b->links[l].bw);
            assert_near(a->links[l].lat, b->links[l].lat);
        }
        tc_topo_free(a), tc_topo_free(b);
    }
    tc_topo *t = build(MDC2);
    assert_string_equal(t->spec, "multidc:pods=2,pod=clos,wan_bw=10Gbps,wan_lat=20ms,wan_links=1,gw_bw=10Gbps,"
                                 "gw_lat=50ns,down=2x2,up=1x2,bw=400Gbps,lat=50ns,hop_lat=100ns,alpha=1.1us");
    tc_topo_free(t);
}

/* A failed long-haul cable sends the routes through another gateway; with
 * none left between two pods they have no route; a failed top switch or
 * gateway cable is gone around; restoring puts the first routes back. */
static void multidc_failures_reroute_or_leave_no_route(void **state)
{
    (void)state;
    tc_topo *t = build("multidc:pods=3,pod=clos,down=4x4,up=1x2,wan_bw=100Gbps,wan_lat=5ms,wan_links=2");
    tc_err err = {{0}};
    tc_fail_state fs;
    assert_int_equal(tc_topo_fail_save(t, &fs, &err), TC_OK);
    uint32_t before[32], path[32], n0 = tc_topo_route(t, TC_ROUTE_ECMP, 1, 17, before), wan = UINT32_MAX;
    for (uint32_t k = 0; k < n0; k++)
        if (t->links[before[k]].kind == TC_LINK_WAN)
            wan = before[k];
    assert_true(wan != UINT32_MAX);
    assert_int_equal(tc_topo_fail_link(t, wan, true, &err), TC_OK);
    for (uint32_t s = 0; s < 16; s++)
        for (uint32_t d = 16; d < 32; d++) {
            uint32_t n = tc_topo_route(t, TC_ROUTE_ECMP, s, d, path), at = s;
            assert_true(n != TC_NO_ROUTE && n <= tc_topo_max_path(t));
            for (uint32_t k = 0; k < n; k++) {
                assert_false(tc_topo_link_failed(t, path[k]));
                assert_int_equal(t->links[path[k]].src, at);
                at = t->links[path[k]].dst;
            }
            assert_int_equal(at, d);
        }
    /* the other cable between pods 0 and 1: nothing left between them */
    uint32_t g = (t->links[wan].src - t->gw_vbase) % 2;
    assert_int_equal(tc_topo_fail_link(t, wan + (g == 0 ? 2 : -2), true, &err), TC_OK);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_ECMP, 1, 17, path), TC_NO_ROUTE);
    assert_true(tc_topo_route(t, TC_ROUTE_ECMP, 1, 33, path) != TC_NO_ROUTE);
    assert_true(tc_topo_route_healthy(t, TC_ROUTE_ECMP, 1, 17, path) == n0);
    tc_topo_fail_restore(t, &fs);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_ECMP, 1, 17, path), n0);
    assert_memory_equal(path, before, n0 * sizeof *path);
    /* a spine of pod 0 (both its links to the gateways with it): routes
     * from pod 0 climb to the other spine */
    uint32_t spine = t->links[before[1]].dst;
    assert_int_equal(tc_topo_fail_switch(t, spine, &err), TC_OK);
    assert_int_equal(t->pod[0]->n_failed > 0, 1);
    for (uint32_t s = 0; s < 16; s++)
        for (uint32_t d = 0; d < 48; d++) {
            uint32_t n = tc_topo_route(t, TC_ROUTE_ECMP, s, d, path);
            assert_true(n != TC_NO_ROUTE);
            for (uint32_t k = 0; k < n; k++)
                assert_true(t->links[path[k]].src != spine && t->links[path[k]].dst != spine);
        }
    tc_topo_fail_restore(t, &fs);
    assert_int_equal(t->pod[0]->n_failed, 0);
    /* a gateway: the other one of its pod */
    assert_int_equal(tc_topo_fail_switch(t, t->gw_vbase, &err), TC_OK);
    for (uint32_t d = 16; d < 48; d++) {
        uint32_t n = tc_topo_route(t, TC_ROUTE_DMODK, 0, d, path);
        assert_true(n != TC_NO_ROUTE);
        for (uint32_t k = 0; k < n; k++)
            assert_true(t->links[path[k]].dst != t->gw_vbase);
    }
    assert_int_equal(tc_topo_fail_switch(t, 3, &err), TC_EINVAL); /* an endpoint of a Clos pod */
    assert_non_null(strstr(err.msg, "gateways"));
    tc_fail_state_free(&fs);
    tc_topo_free(t);
    /* A torus pod's router: its own gateway cables, then another gateway. */
    t = build("multidc:pods=2,pod=torus,dims=4x4,wrap=1x0,node=2,wan_bw=200Gbps,wan_lat=10ms,wan_links=2");
    uint32_t n = tc_topo_route(t, TC_ROUTE_DEFAULT, 5, 21, path);
    assert_int_equal(n, 3);
    assert_int_equal(t->links[path[0]].kind, TC_LINK_GW);
    assert_int_equal(tc_topo_fail_link(t, path[0], true, &err), TC_OK);
    uint32_t m = tc_topo_route(t, TC_ROUTE_DEFAULT, 5, 21, before);
    assert_int_equal(m, 3);
    assert_true(before[0] != path[0] && before[1] != path[1]);
    assert_int_equal(tc_topo_fail_link(t, before[0], true, &err), TC_OK);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, 5, 21, path), TC_NO_ROUTE);
    assert_int_equal(tc_topo_fail_switch(t, 3, &err), TC_OK); /* a router */
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, 2, 3, path), TC_NO_ROUTE);
    tc_topo_free(t);
}

static void multidc_links_are_named_by_pod_gateway_and_wan(void **state)
{
    (void)state;
    char buf[128];
    tc_topo *t = build(MDC2);
    assert_string_equal(tc_topo_link_name(t, t->wan_lbase, buf, sizeof buf), "pod 0 gw 0 -> pod 1 gw 0 (wan)");
    assert_string_equal(tc_topo_link_name(t, t->wan_lbase + 1, buf, sizeof buf), "pod 1 gw 0 -> pod 0 gw 0 (wan)");
    assert_string_equal(tc_topo_link_name(t, t->gw_lbase + 2, buf, sizeof buf), "pod 0 L2 1 -> pod 0 gw 0");
    assert_string_equal(tc_topo_link_name(t, t->gw_lbase + 7, buf, sizeof buf), "pod 1 gw 0 -> pod 1 L2 1");
    assert_string_equal(tc_topo_link_name(t, 16, buf, sizeof buf), "pod 1: host 0 -> leaf 0");
    assert_string_equal(tc_link_kind_name(TC_LINK_WAN), "wan");
    assert_string_equal(tc_link_kind_name(TC_LINK_GW), "gw");
    tc_topo_free(t);
    t = build("multidc:pods=2,pod=torus,dims=2x2,node=2,wan_bw=1Gbps,wan_lat=1ms");
    assert_string_equal(tc_topo_link_name(t, t->gw_lbase + 2 * 3, buf, sizeof buf), "pod 0 (1,1) -> pod 0 gw 0");
    assert_string_equal(tc_topo_link_name(t, t->node_lbase + 2 * 5, buf, sizeof buf), "ep 5 -> node 2");
    tc_topo_free(t);
}

static void multidc_routings_are_those_of_the_pods_kind(void **state)
{
    (void)state;
    tc_topo *c = build(MDC2), *u = build("multidc:pods=2,pod=torus,dims=4x4,wan_bw=1Gbps,wan_lat=1ms");
    tc_routing r;
    tc_err err = {{0}};
    assert_int_equal(tc_routing_parse("dmodk", c, &r, &err), TC_OK);
    assert_int_equal(tc_routing_parse("dor", c, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "clos pod"));
    assert_int_equal(tc_routing_parse("line", u, &r, &err), TC_OK);
    assert_int_equal(tc_routing_parse("ecmp", u, &r, &err), TC_EINVAL);
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, c), "ecmp");
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, u), "dor");
    tc_topo_free(c), tc_topo_free(u);
}

/* Equalizing sets the pods' fabric; the gateway and long-haul links keep
 * their bandwidths, and the spec says so. Degrading a pod's link reaches the
 * pod. The fabric cables include the gateway and long-haul ones. */
static void multidc_edits_reach_the_pods_and_spare_the_long_haul_links(void **state)
{
    (void)state;
    tc_topo *t = build(MDC2);
    tc_err err = {{0}};
    assert_int_equal(tc_topo_equalize_injection(t, GBPS(100), &err), TC_OK);
    tc_topo_info in;
    tc_topo_get_info(t, &in);
    assert_near(in.injection_Bps, GBPS(100));
    assert_near(t->links[0].bw, GBPS(100));
    assert_near(t->links[t->wan_lbase].bw, GBPS(10));
    assert_near(t->links[t->gw_lbase].bw, GBPS(10));
    assert_non_null(strstr(t->spec, "bw=100Gbps"));
    tc_topo *b = build(t->spec);
    assert_near(b->links[0].bw, GBPS(100));
    tc_topo_free(b);
    assert_int_equal(tc_topo_degrade_link(t, 17, 0.5, &err), TC_OK); /* pod 1's link 1 */
    assert_near(t->pod[1]->links[1].bw, GBPS(50));
    assert_int_equal(t->pod[1]->n_degraded, 1);
    uint32_t cab[32];
    assert_int_equal(tc_topo_fabric_cables(t, false, false, cab), 2 * 4 + 4 + 1);
    assert_int_equal(tc_topo_fabric_cables(t, true, false, cab), 21);
    tc_topo_free(t);
}

static void multidc_bad_specs_fail_with_one_line(void **state)
{
    (void)state;
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps", "wan_lat= is required");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_lat=20ms", "wan_bw= is required");
    expect_einval("multidc:pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms", "pods= is required");
    expect_einval("multidc:pods=2,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms", "pod= is required");
    expect_einval("multidc:pods=1,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms", "pods=1");
    expect_einval("multidc:pods=0,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms", "pods");
    expect_einval("multidc:pods=2,pod=dragonfly,hosts=8,wan_bw=10Gbps,wan_lat=20ms", "pod=clos or pod=torus");
    expect_einval("multidc:pods=2,pod=multidc,hosts=8,wan_bw=10Gbps,wan_lat=20ms", "pod=clos or pod=torus");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=fast,wan_lat=20ms", "wan_bw");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=0Gbps,wan_lat=20ms", "wan_bw");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20", "wan_lat");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms,wan_links=0", "wan_links");
    expect_einval("multidc:pods=2,pod=clos,hosts=8,radix=4,wan_bw=10Gbps,wan_lat=20ms,wan_links=65", "wan_links");
    expect_einval("multidc:pods=2,pod=clos,wan_bw=10Gbps,wan_lat=20ms", "pod's own keys");
    expect_einval("multidc:pods=2,pod=clos,dims=4x4,wan_bw=10Gbps,wan_lat=20ms", "multidc's own keys are pods");
    expect_einval("multidc:pods=2,pod=torus,dims=4x1,wan_bw=10Gbps,wan_lat=20ms", "multidc pod: torus dimension");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clos_8x8_has_64_hosts_8_leaves_8_spines_and_256_links),
        cmocka_unit_test(kary_fat_tree_shortcut_has_k3_over_4_hosts_and_5k2_over_4_switches),
        cmocka_unit_test(two_tier_shortcut_uses_as_many_leaves_as_the_hosts_need),
        cmocka_unit_test(every_clos_route_is_a_shortest_chain_for_every_routing),
        cmocka_unit_test(every_torus_route_is_a_shortest_chain_for_every_routing),
        cmocka_unit_test(dmodk_routes_every_shift_without_contention_on_nonblocking_clos),
        cmocka_unit_test(ecmp_depends_on_the_seed_and_only_on_it),
        cmocka_unit_test(dor_splits_ties_by_source_parity_and_dor_positive_always_goes_plus),
        cmocka_unit_test(mesh_dimensions_and_size_two_dimensions_route_the_only_way),
        cmocka_unit_test(torus_link_arithmetic_matches_the_graph),
        cmocka_unit_test(same_node_pairs_route_through_the_node_switch),
        cmocka_unit_test(path_latency_is_cables_plus_switches_traversed),
        cmocka_unit_test(equalize_injection_gives_every_endpoint_the_requested_rate),
        cmocka_unit_test(nonblocking_three_tier_clos_figures_match_hand_computation),
        cmocka_unit_test(torus_16x16x16_figures_match_hand_computation),
        cmocka_unit_test(tapered_clos_reports_oversubscription_two_at_the_leaves),
        cmocka_unit_test(partially_populated_clos_builds_only_its_hosts),
        cmocka_unit_test(oversub_three_with_radix_32_is_valid_and_two_names_the_nearest),
        cmocka_unit_test(canonical_spec_builds_the_same_topology),
        cmocka_unit_test(links_have_readable_names),
        cmocka_unit_test(routing_names_parse_only_for_their_kind),
        cmocka_unit_test(degrade_link_scales_one_direction_and_rejects_bad_input),
        cmocka_unit_test(large_clos_and_torus_build_and_route),
        cmocka_unit_test(malformed_spec_is_rejected),
        cmocka_unit_test(unknown_key_is_rejected_listing_accepted_keys),
        cmocka_unit_test(unknown_kind_is_rejected_naming_clos_and_torus),
        cmocka_unit_test(radix_too_small_for_the_hosts_is_rejected_with_the_maximum),
        cmocka_unit_test(torus_dimension_of_size_zero_or_one_is_rejected),
        cmocka_unit_test(wrap_list_of_the_wrong_length_is_rejected),
        cmocka_unit_test(bad_units_are_rejected_naming_the_key),
        cmocka_unit_test(node_size_not_dividing_the_endpoints_is_rejected),
        cmocka_unit_test(rail_optimized_clos_puts_endpoint_i_of_every_node_on_its_rail),
        cmocka_unit_test(shared_nics_own_the_fabric_ports_of_their_endpoints),
        cmocka_unit_test(multidc_of_two_clos_pods_counts_endpoints_switches_and_links),
        cmocka_unit_test(multidc_routes_cross_one_long_haul_link_between_pods_and_none_within),
        cmocka_unit_test(multidc_spec_round_trips),
        cmocka_unit_test(multidc_failures_reroute_or_leave_no_route),
        cmocka_unit_test(multidc_links_are_named_by_pod_gateway_and_wan),
        cmocka_unit_test(multidc_routings_are_those_of_the_pods_kind),
        cmocka_unit_test(multidc_edits_reach_the_pods_and_spare_the_long_haul_links),
        cmocka_unit_test(multidc_bad_specs_fail_with_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
