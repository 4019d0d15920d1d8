/* coll_topos.h - the minimal topologies the collective tests build
 * schedules on: a torus shape (the dims the torus algorithms read), a set
 * of scale-up nodes (the node size hier reads) and a multidc's pods (the
 * pod size hier-dc reads). Not built graphs. */
#ifndef TOPOCC_TESTS_COLL_TOPOS_H
#define TOPOCC_TESTS_COLL_TOPOS_H

#include <string.h>
#include "topocc/topo.h"

static inline tc_topo torus_topo(int nd, const uint32_t *dims, bool wrap)
{
    tc_topo t;
    memset(&t, 0, sizeof t);
    t.kind = TC_TOPO_TORUS;
    t.ndims = nd;
    t.n_endpoints = 1;
    for (int d = 0; d < nd; d++) {
        t.dims[d] = dims[d];
        t.wrap[d] = wrap;
        t.n_endpoints *= dims[d];
    }
    return t;
}

static inline tc_topo node_topo(uint32_t p, uint32_t G)
{
    tc_topo t;
    memset(&t, 0, sizeof t);
    t.kind = TC_TOPO_CLOS;
    t.n_endpoints = p;
    t.node_size = G;
    return t;
}

/* p endpoints in pods of n (node: scale-up nodes inside the pods, 0 for
 * none). */
static inline tc_topo pod_topo(uint32_t p, uint32_t n, uint32_t node)
{
    tc_topo t;
    memset(&t, 0, sizeof t);
    t.kind = TC_TOPO_MULTIDC;
    t.n_endpoints = p;
    t.pod_endpoints = n;
    t.n_pods = n ? p / n : 0;
    t.node_size = node;
    return t;
}

#endif
