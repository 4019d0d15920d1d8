/*
 * topo_int.h - what the topology generators share inside src/topo: the
 * per-kind configure / fill / route / info entry points and spec helpers.
 */
#ifndef TOPOCC_TOPO_INT_H
#define TOPOCC_TOPO_INT_H

#include <stdio.h>
#include "topocc/topo.h"

/* Bounds that keep every vertex and link ID in uint32 and the graph within a
 * few GiB (a tc_link is 32 bytes). Fuzz builds (TOPOCC_FUZZ, fuzz/) cap them
 * at 2^16 vertices and 2^18 links, so that a fuzz target spends its time
 * parsing specs rather than building large valid networks. */
#ifdef TOPOCC_FUZZ
#define TC_TOPO_MAX_VERTICES (1u << 16)
#define TC_TOPO_MAX_LINKS (1u << 18)
#else
#define TC_TOPO_MAX_VERTICES (1u << 26)
#define TC_TOPO_MAX_LINKS (1u << 27)
#endif

#define TC_TOPO_DEFAULT_BW (400e9 / 8)   /* 400Gbps */
/* Latency defaults (docs/MODEL.md, "Latency and overhead defaults", with
 * their sources): a cable is its propagation delay over an assumed length,
 * a switch or router traversal a vendor's port-to-port figure, alpha a
 * measured MPI send overhead over InfiniBand (LogGP o_s). */
#define TC_TOPO_CABLE_M 10.0             /* assumed cable length, metres */
#define TC_TOPO_PROP_S_PER_M 5e-9        /* propagation delay in fibre, s per metre */
#define TC_TOPO_DEFAULT_LAT (TC_TOPO_CABLE_M * TC_TOPO_PROP_S_PER_M) /* 50ns per cable */
#define TC_TOPO_DEFAULT_HOP_LAT 100e-9   /* per switch or router traversed */
#define TC_TOPO_DEFAULT_ALPHA 1.1e-6     /* per message, paid by the sender */
#define TC_TOPO_DEFAULT_NODE_BW 450e9    /* one NVLink-4 endpoint, per direction */
#define TC_TOPO_DEFAULT_NODE_LAT 250e-9
#define TC_TOPO_DEFAULT_NODE_HOP_LAT 0   /* node_lat's default stands for the whole link */

/* Spec values under a key: absent leaves *out and *given untouched (given may
 * be NULL); a bad value fails naming the key. */
tc_status tc_topo_get_rate(tc_spec *sp, const char *kind, const char *key, double *out, bool *given, tc_err *err);
tc_status tc_topo_get_time(tc_spec *sp, const char *kind, const char *key, double *out, bool *given, tc_err *err);
tc_status tc_topo_get_u32(tc_spec *sp, const char *kind, const char *key, uint32_t *out, bool *given, tc_err *err);
tc_status tc_topo_get_list(tc_spec *sp, const char *kind, const char *key, uint32_t *vals, int max, int *n,
                           tc_err *err);

/* Canonical spellings that the parsers read back exactly enough. */
void tc_topo_put(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *tc_topo_rate_str(double Bps, char *buf, size_t len);
const char *tc_topo_time_str(double s, char *buf, size_t len);
const char *tc_topo_list_str(const uint32_t *v, int n, char *buf, size_t len);

/* Each kind: configure reads its keys and fills the structural fields,
 * n_endpoints, n_switches and *fabric_links (directed); fill writes links
 * 0..fabric_links-1; route writes a fabric route between distinct endpoints. */
tc_status tc_clos_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err);
void tc_clos_fill(tc_topo *t);
uint32_t tc_clos_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);
/* The same around failed links (TC_NO_ROUTE if none survives). */
uint32_t tc_clos_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);
/* A route between an endpoint or fabric switch and one of its ancestor
 * switches (either way): the unique path of up-links (down-links) between
 * them, with the endpoint's NIC link; 0 if neither is the other's
 * ancestor. */
uint32_t tc_clos_route_vertical(const tc_topo *t, uint32_t src, uint32_t dst, uint32_t *links);
void tc_clos_info(const tc_topo *t, tc_topo_info *info);
/* The bisection and oversubscription with the links as they are (failed
 * 0, degraded scaled): docs/MODEL.md, "Topology figures under faults". */
void tc_clos_info_as_is(const tc_topo *t, tc_topo_info *info);
void tc_clos_spec(const tc_topo *t, char *buf, size_t len);
const char *tc_clos_vertex_name(const tc_topo *t, uint32_t v, char *buf, size_t len);

tc_status tc_torus_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err);
/* From dims, wrap and ndims: n_endpoints, the strides, the cables per line
 * and the link bases; *fabric_links receives the directed fabric links. */
tc_status tc_torus_layout(tc_topo *t, uint64_t *fabric_links, tc_err *err);
void tc_torus_fill(tc_topo *t);
uint32_t tc_torus_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);
/* Around failed links: detour or line (TC_NO_ROUTE if the scheme finds
 * no surviving path). */
uint32_t tc_torus_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);
void tc_torus_info(const tc_topo *t, tc_topo_info *info);
double tc_torus_bisection_as_is(const tc_topo *t);
void tc_torus_spec(const tc_topo *t, char *buf, size_t len);
const char *tc_torus_vertex_name(const tc_topo *t, uint32_t v, char *buf, size_t len);

/* Fully connected (full.c): at most TC_FULL_MAX_HOSTS endpoints, whose
 * N (N - 1) directed links (1,047,552 at the bound, 32 MiB) stay well within
 * the link bound. */
#ifdef TOPOCC_FUZZ
#define TC_FULL_MAX_HOSTS 256u
#else
#define TC_FULL_MAX_HOSTS 1024u
#endif
tc_status tc_full_configure(tc_spec *sp, tc_topo *t, uint64_t *fabric_links, tc_err *err);
void tc_full_fill(tc_topo *t);
uint32_t tc_full_route(const tc_topo *t, uint32_t src, uint32_t dst, uint32_t *links);
/* Around failed links: direct (no detour) or detour (through one other
 * endpoint); TC_NO_ROUTE where neither survives. */
uint32_t tc_full_route_ft(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);
void tc_full_info(const tc_topo *t, tc_topo_info *info);
double tc_full_bisection_as_is(const tc_topo *t);
void tc_full_spec(const tc_topo *t, char *buf, size_t len);

/* The CSR index of t's links (out_off, out_link); TC_EINTERNAL when out
 * of memory. */
tc_status tc_topo_build_csr(tc_topo *t);

/* Multidc (multidc.c): the build from a parsed spec (its own keys read,
 * every other key the pod's), routing (ft: around failures), figures,
 * names, the spec, and the mirror of this topology's failure state and
 * bandwidths into its pods. */
tc_status tc_multidc_build(tc_spec *sp, tc_topo **out, tc_err *err);
uint32_t tc_multidc_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links, bool ft);
uint32_t tc_multidc_max_path(const tc_topo *t);
void tc_multidc_info(const tc_topo *t, tc_topo_info *info);
const char *tc_multidc_link_name(const tc_topo *t, uint32_t id, char *buf, size_t len);
void tc_multidc_spec(tc_topo *t);
tc_status tc_multidc_equalize(tc_topo *t, double rate, tc_err *err);
/* The pod and pod link of link l (false: a gateway or long-haul link), and
 * the same for vertex v (false: a gateway). */
bool tc_multidc_pod_link(const tc_topo *t, uint32_t l, uint32_t *k, uint32_t *pl);
bool tc_multidc_pod_vertex(const tc_topo *t, uint32_t v, uint32_t *k, uint32_t *pv);
/* Allocates the pods' failure flags (with t's); false when out of memory. */
bool tc_multidc_fail_arrays(tc_topo *t);
void tc_multidc_sync_link(tc_topo *t, uint32_t l);
void tc_multidc_sync_vertex(tc_topo *t, uint32_t v);
void tc_multidc_sync_all(tc_topo *t);
void tc_multidc_free(tc_topo *t);

#endif
