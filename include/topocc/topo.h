/*
 * topocc/topo.h - network topologies as explicit graphs with their structure.
 *
 * A topology is a directed graph in CSR form: vertices are endpoints
 * (0..n_endpoints-1, in generator order), then switches, then the scale-up
 * node switches. Every physical cable is two directed links with their own
 * bandwidth (bytes/s, per direction) and latency (s). Link IDs are stable:
 * they are the indices of the links array, in generator order.
 *
 * Generators keep their structural coordinates (Clos levels, torus
 * dimensions) so that routing is arithmetic, not a graph search.
 *
 * Link layout. Every cable is the pair (2c, 2c + 1) of one block, so the
 * reverse of link id is id ^ 1 within the block (blocks start at even IDs):
 *  - Clos, level i (1..h): the cable from level-(i-1) node c (a host when
 *    i = 1) to its parent b (0 <= b < w_i) is cable c * w_i + b of the block;
 *    its up link is up_lbase[i] + 2 * (c * w_i + b), its down link
 *    down_lbase[i] + 2 * (c * w_i + b) (= up link + 1).
 *  - Torus, dimension d: a line is the set of vertices that differ only in
 *    coordinate d (line index: the vertex with coordinate d set to 0, counted
 *    over the other coordinates, first fastest); cable x of a line joins
 *    coordinate x to x + 1 (mod the size); a line has dim_cables[d] cables:
 *    the size with wraparound, the size - 1 without, 1 for a size of 2.
 *    The + link of cable x is plus_lbase[d] + 2 * (line * dim_cables[d] + x),
 *    the - link (x + 1 -> x) minus_lbase[d] + 2 * (...) = the + link + 1.
 *    tc_topo_torus_link does this arithmetic.
 *  - Full (fully connected, N endpoints): cable c joins endpoints i < j,
 *    c = i (2N - i - 1) / 2 + (j - i - 1) (pairs in lexicographic order);
 *    link 2c goes i -> j (dir +1), 2c + 1 j -> i (dir -1), level 1.
 *    tc_topo_full_link does this arithmetic.
 *  - Node links follow: node_lbase + 2e is endpoint e -> its node switch,
 *    node_lbase + 2e + 1 the reverse.
 *  - NIC links (nics=) come last: nic_lbase + 2e is endpoint e -> its NIC,
 *    nic_lbase + 2e + 1 the reverse. The level-1 cables of a Clos with
 *    NICs start at the NIC (host slot c is NIC vertex nic_vbase + c).
 *
 * Latency. A route's latency is the sum of its links' lat: each cable's
 * latency (lat=, latI=, node_lat=) plus one traversal latency for every
 * switch or router the route passes through, carried by the link that
 * enters it: on a Clos every up link and every down link into a switch
 * (level >= 2) carries hop_lat, the down link into a host none, so a route
 * that climbs to level L crosses 2L cables and 2L - 1 switches; on a torus
 * every link enters a router and carries hop_lat, so a route of h links
 * passes through h routers (every one but the source's own); a node link
 * into its node switch carries node_hop_lat, the way out none, so two
 * endpoints of one node are 2 node_lat + node_hop_lat apart; an endpoint's
 * link to its NIC carries nic_lat each way (a route between NICs adds 2
 * nic_lat).
 * Vertices: endpoints, then Clos switches level by level (level-i node index
 * B + wprod[i] * A, see tc_topo below), then node switches, then NICs.
 */
#ifndef TOPOCC_TOPO_H
#define TOPOCC_TOPO_H

#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_MAX_LEVELS 6
#define TC_MAX_DIMS 8

typedef enum { TC_TOPO_CLOS = 1, TC_TOPO_TORUS = 2, TC_TOPO_MULTIDC = 3, TC_TOPO_FULL = 4 } tc_topo_kind;

/* "clos", "torus", "multidc", "full". */
const char *tc_topo_kind_name(tc_topo_kind k);

typedef enum {
    TC_LINK_FABRIC = 0, /* a link of the fabric (Clos level or torus dim) */
    TC_LINK_NODE = 1,   /* endpoint <-> scale-up node switch */
    TC_LINK_NIC = 2,    /* endpoint <-> its NIC (nics= or gpus_per_nic=: the PCIe path) */
    TC_LINK_GW = 3,     /* multidc: a pod's top switch (Clos) or router (torus) <-> one of its gateways */
    TC_LINK_WAN = 4     /* multidc: a long-haul cable between gateways of two pods */
} tc_link_kind;

/* "fabric", "node", "nic", "gw", "wan". */
const char *tc_link_kind_name(tc_link_kind k);

typedef struct tc_link {
    uint32_t src, dst;  /* vertices */
    double bw;          /* bytes per second, this direction */
    double lat;         /* seconds: the cable's latency, plus the traversal latency of the switch or
                         * router the link enters (hop_lat; node_hop_lat into a node switch) */
    uint8_t kind;       /* tc_link_kind */
    uint8_t level;      /* Clos: 1 = host-leaf, 2 = leaf-level2, ...; torus: dimension index + 1; multidc: a
                         * pod's link keeps its pod's level, a gateway link of a Clos pod is level h + 1 (one
                         * above the top switches), of a torus pod 0, a WAN link 0 */
    int8_t dir;         /* Clos: +1 up, -1 down; torus: +1 / -1 along the dimension; node: +1 to switch, -1 from
                         * it; gateway link: +1 to the gateway, -1 from it; WAN: +1 from the lower pod, -1 back */
} tc_link;

/* The GPU generation of the endpoints (arch=), for NCCL's per-generation
 * constants (coll/nccl.c). */
typedef enum { TC_ARCH_NONE = 0, TC_ARCH_VOLTA, TC_ARCH_AMPERE, TC_ARCH_HOPPER, TC_ARCH_BLACKWELL } tc_arch;
const char *tc_arch_name(tc_arch a);
/* The transport of the fabric's NICs (transport=), for NCCL's per-step network
 * latency: InfiniBand or RoCE as NCCL's own tables have it (the default),
 * or AWS EFA as the aws-ofi-nccl plugin's tuner has it (docs/MODEL.md,
 * "Network transport"): efa on p5 (the plugin's RDMA protocol, every NCCL
 * protocol), efa-sendrecv on p4d and p4de (its SENDRECV protocol without
 * 128-byte ordering, where the plugin sets NCCL_PROTO=simple). */
typedef enum { TC_TRANSPORT_IB = 0, TC_TRANSPORT_EFA, TC_TRANSPORT_EFA_SENDRECV } tc_transport;
const char *tc_transport_name(tc_transport n);
/* Whether t's NICs are AWS EFA (either kind). */
#define TC_TRANSPORT_IS_EFA(x) ((x) == TC_TRANSPORT_EFA || (x) == TC_TRANSPORT_EFA_SENDRECV)
/* The PCIe path from a GPU to its NIC (nic_path=), in NCCL's path types
 * (src/graph/topo.h:55-82 at v2.21.5-1): pix (one PCIe switch), pxb
 * (several), pxn (through another GPU over NVLink), phb (through the CPU's
 * host bridge), sys (across CPU sockets). NCCL runs its network traffic
 * over that path only with GPU Direct RDMA, which it enables up to pxb;
 * further, it goes through host memory and the path is phb. The default,
 * pxb, is taken for an HGX/DGX board (assumed: a GPU and its NIC share a
 * PCIe switch tree);
 * phb is typical of virtual machines without a topology file. NCCL's
 * protocol choice reads it (docs/MODEL.md, "Protocols"). */
typedef enum { TC_NIC_PATH_PXB = 0, TC_NIC_PATH_PIX, TC_NIC_PATH_PXN, TC_NIC_PATH_PHB, TC_NIC_PATH_SYS } tc_nic_path;
const char *tc_nic_path_name(tc_nic_path p);
/* NCCL's PATH_ value of p (PATH_PIX 3 .. PATH_SYS 7). */
int tc_nic_path_level(tc_nic_path p);

typedef enum {
    TC_ROUTE_DEFAULT = 0,  /* ecmp on a Clos; dor on a torus, direct on a full mesh (detour with failures) */
    TC_ROUTE_ECMP,         /* Clos: hash(src, dst, seed) over equal-cost up-links */
    TC_ROUTE_DMODK,        /* Clos: destination mod k (Zahavi) */
    TC_ROUTE_DOR,          /* torus: dimension order, shortest way, ties split by source parity */
    TC_ROUTE_DOR_POSITIVE, /* torus: dimension order, ties always positive */
    TC_ROUTE_DETOUR,       /* torus with failures: dor, a failed hop detoured through the next dimension */
    TC_ROUTE_LINE,         /* torus with failures: dor, a ring broken at a failure run as a line (the other way) */
    TC_ROUTE_DIRECT        /* full: the pair's own link only (a failed one cuts the pair off); detour on a full
                            * mesh (the default with failures) goes through one other endpoint */
} tc_routing;

/* tc_topo_route's answer where failures leave no path. */
#define TC_NO_ROUTE UINT32_MAX

typedef struct tc_topo {
    tc_topo_kind kind;
    char spec[512];            /* the canonical spec it was built from */

    uint32_t n_endpoints;
    uint32_t n_switches;       /* fabric switches (0 for a torus) */
    uint32_t n_vertices;       /* endpoints + switches + node switches */
    uint32_t n_links;          /* directed links */
    tc_link *links;
    uint32_t *out_off;         /* CSR: links leaving vertex v are out_link[out_off[v]..out_off[v+1]) */
    uint32_t *out_link;

    /* Clos: XGFT(h; m_1..m_h; w_1..w_h), p_i parallel links per level
     * (aggregated into one link of p_i times the bandwidth). */
    int levels;                           /* h */
    uint32_t down[TC_MAX_LEVELS + 1];     /* m_i, index 1..h */
    uint32_t up[TC_MAX_LEVELS + 1];       /* w_i, index 1..h */
    uint32_t par[TC_MAX_LEVELS + 1];      /* p_i, index 1..h */
    uint32_t level_count[TC_MAX_LEVELS + 1]; /* nodes at level i (0 = host slots, full tree) */
    uint32_t level_vbase[TC_MAX_LEVELS + 1]; /* first vertex of level i (i >= 1) */
    uint32_t up_lbase[TC_MAX_LEVELS + 1];    /* first up-link from level i-1 to level i */
    uint32_t down_lbase[TC_MAX_LEVELS + 1];  /* first down-link from level i to level i-1 */
    double level_bw[TC_MAX_LEVELS + 1];      /* per link (after parallel aggregation) */
    double level_lat[TC_MAX_LEVELS + 1];     /* per cable, without hop_lat */
    /* XGFT labels: a level-i node (a_h..a_{i+1}, b_i..b_1) has index
     * B + wprod[i] * A with A = a_{i+1} + m_{i+1} * (a_{i+2} + ...) and
     * B = b_1 + w_1 * (b_2 + w_2 * ...); host e has A = e. */
    uint32_t span[TC_MAX_LEVELS + 1];        /* m_1 * .. * m_i: host slots under a level-i switch (span[0] = 1) */
    uint32_t wprod[TC_MAX_LEVELS + 1];       /* w_1 * .. * w_i (wprod[0] = 1) */
    int top_level;                           /* highest level a route between populated hosts climbs to */

    /* Torus */
    int ndims;
    uint32_t dims[TC_MAX_DIMS];
    uint8_t wrap[TC_MAX_DIMS];
    uint32_t stride[TC_MAX_DIMS];            /* coordinate strides, first dim fastest */
    uint32_t plus_lbase[TC_MAX_DIMS];        /* first + link of dimension d (layout above; tc_topo_torus_link) */
    uint32_t minus_lbase[TC_MAX_DIMS];       /* plus_lbase[d] + 1 */
    uint32_t dim_cables[TC_MAX_DIMS];        /* cables per line of dimension d */
    double torus_bw, torus_lat;              /* per cable (torus, and full's bw= and lat=); a link's lat
                                              * adds hop_lat */

    /* Scale-up node: every node_size consecutive endpoints share a node switch. */
    uint32_t node_size;        /* 0 or 1: none */
    double node_bw, node_lat;
    double node_hop_lat;       /* traversal of a node switch (on the link into it) */
    bool node_reduce;          /* node_reduce=1: the node switch reduces and multicasts (NVLink SHARP) */
    bool sharp;                /* Clos sharp=1: the fabric switches reduce and multicast (InfiniBand SHARP) */
    uint32_t node_vbase;       /* vertex of node switch 0 */
    uint32_t node_lbase;       /* link (e -> switch) is node_lbase + 2e, (switch -> e) node_lbase + 2e + 1 */
    /* Rail-optimized Clos (rail=R with node=G): a node's G endpoints are on
     * R rails, G/R consecutive endpoints each; rail j of every node is on
     * the leaves of rail j. Endpoints stay numbered node by node; the Clos
     * host slot of endpoint e is hslot[e] (slots rail by rail, node by node
     * within a rail), and the Clos arithmetic (links, routing) is on slots. */
    uint32_t rails;            /* 0: not rail-optimized */
    /* Shared NICs (Clos, nics=K or gpus_per_nic=k with node=G): a node's G
     * endpoints share K NICs, G/K consecutive endpoints each. A NIC is a
     * vertex (nic_vbase + its host slot) with the node's fabric ports; an
     * endpoint reaches it over its own link (nic_lbase + 2e: e -> NIC,
     * + 1 the reverse) of nic_bw (default: the NIC's fabric bandwidth) and
     * nic_lat. Host slots are then NICs: node by node, or with rail=R (R
     * dividing K) rail by rail. */
    uint32_t nics;             /* NICs per node; 0: one fabric port set per endpoint, no NIC vertex */
    double nic_bw, nic_lat;
    bool nic_bw_given;         /* nic_bw= given; otherwise it follows the NIC's fabric bandwidth */
    uint32_t nic_vbase, nic_lbase;
    uint32_t n_slots;          /* Clos host slots populated: n_endpoints / (G/K) with NICs, else n_endpoints */
    uint8_t arch;              /* tc_arch of the endpoints (arch=); TC_ARCH_NONE: not given */
    uint8_t transport;         /* tc_transport of the NICs (transport=); TC_TRANSPORT_IB by default */
    uint8_t nic_path;          /* tc_nic_path from a GPU to its NIC (nic_path=); TC_NIC_PATH_PXB by default */
    /* Calibration of the NICs' transport (Clos net_lat= and net_eff=;
     * docs/MODEL.md "Calibrating a transport"): net_lat[] the seconds an
     * NCCL algorithm's network step takes with LL, LL128 and Simple, in
     * place of the transport's table (net_lat_given); net_eff the fraction
     * of the fabric links' line rate the transport's data reaches (1: all;
     * level_bw holds the rate reached, the spec prints the line rate). */
    bool net_lat_given;
    double net_lat[3];
    double net_eff;
    /* The rate one NCCL point-to-point channel (a send and a receive in one
     * work) reaches, B/s, inside a scale-up node (p2p_bw=) and across
     * nodes (p2p_net_bw=); 0: not limited (docs/MODEL.md "sendrecv"). */
    double p2p_bw, p2p_net_bw;
    uint32_t *hslot;           /* n_endpoints (NULL: slot = endpoint) */

    uint32_t n_degraded;       /* links whose bandwidth tc_topo_degrade_link changed */
    /* Failures (tc_topo_fail_*): a failed link has bandwidth 0 and its flag
     * set, a failed vertex (endpoint, switch, node switch) its flag set and
     * every link at it failed. Routing avoids failed links and answers
     * TC_NO_ROUTE where nothing survives. NULL / 0: none. */
    uint32_t n_failed;         /* directed links failed */
    uint8_t *link_failed;      /* n_links flags */
    uint8_t *vertex_failed;    /* n_vertices flags */
    /* A box of another torus as a torus of its own (tc_topo_torus_box):
     * dimension k is the parent's dimension box_pdim[k]; box_origin is the
     * box's first vertex in the parent's coordinates (all box_pndims of
     * them, the parent's sizes box_pdims); box_link[l] is the parent's link
     * that link l stands for, UINT32_MAX for a wrap link the parent does
     * not have (an optical circuit). box_link NULL: not a box. */
    uint32_t *box_link;        /* n_links entries */
    int box_pndims;
    uint32_t box_pdims[TC_MAX_DIMS], box_origin[TC_MAX_DIMS];
    uint8_t box_pdim[TC_MAX_DIMS];
    /* Multi-datacenter (multidc, topo/multidc.c): n_pods identical pods,
     * each a Clos or a torus of its own (pod[k], built from the pod's
     * spec), joined by long-haul cables between gateways. Pod k's endpoint
     * e is endpoint k * pod_endpoints + e, so each pod is a contiguous block
     * of endpoints (and of ranks, rank r on endpoint r). Every pod has
     * wan_links gateways; gateway g of every pod has one long-haul cable to
     * gateway g of every other pod (wan_bw per direction, wan_lat plus the
     * remote gateway's hop_lat), and a cable of gw_bw, gw_lat (plus the
     * hop_lat of the switch it enters) to each of the pod's gw_attach
     * attachment points: the top-level switches of a Clos pod, every
     * router of a torus pod. Vertices: every pod's endpoints, every pod's
     * fabric switches (pod by pod), the gateways (gw_vbase + k L + g), then
     * every pod's node switches and NICs (so node_vbase, node_lbase,
     * nic_vbase, nic_lbase and hslot keep their meaning over the whole
     * topology). Links: pod k's fabric links (k * pod_fabric_links + its
     * pod link), the gateway cables (gw_lbase + 2 ((k L + g) A + a): the
     * link to the gateway, + 1 the link back), the WAN cables (cable
     * c = pair(k, m) L + g for pods k < m, pair(k, m) counting the pairs
     * in order (0,1), (0,2), .., (1,2), ..: wan_lbase + 2c from k to m,
     * + 1 back), then the node links and NIC links. Failures and degraded
     * links of this topology are mirrored into pod[] (which routes within
     * a pod). n_pods 0: not a multidc. */
    uint32_t n_pods;
    uint32_t pod_endpoints;
    struct tc_topo **pod;
    uint32_t wan_links;        /* L */
    uint32_t gw_attach;        /* A */
    double wan_bw, wan_lat;    /* per long-haul cable: bytes/s per direction, the cable's latency */
    double gw_bw, gw_lat;      /* per gateway cable (default: (P - 1) wan_bw; the pod's top-level cable latency) */
    uint32_t pod_fabric_links; /* one pod's fabric links */
    uint32_t gw_vbase, gw_lbase, wan_lbase;
    double cross_lat;          /* the latency of every route between two pods (they are all alike) */
    double hop_lat;            /* traversal of a fabric switch (Clos) or router (torus), seconds */
    double alpha;              /* per-message overhead paid by the sender (LogGP o), once per transfer */
    double reduce_bw;          /* bytes an endpoint reduces per second (gamma = 1 / reduce_bw); 0: not charged */
    uint64_t seed;             /* ECMP hash seed */
} tc_topo;

/* Builds a topology from a spec string (see docs/MODEL.md for the grammar):
 *   clos:down=m1x..xmH,up=w1x..xwH[,links=p1x..xpH][,hosts=N]
 *   clos:hosts=N,radix=K[,tiers=2|3][,oversub=S]   (expands to the form above)
 *   torus:dims=AxBx..[,wrap=1x0x..]
 *   full:hosts=N   (2 <= N <= 1024 endpoints, every pair joined by a cable of
 *     its own; hop_lat defaults to 0 there: a link ends at its endpoint)
 *   multidc:pods=P,pod=clos|torus,wan_bw=RATE,wan_lat=TIME[,wan_links=L]
 *           [,gw_bw=RATE][,gw_lat=TIME],<the pod's own keys>
 *     P >= 2 identical pods, each the clos or torus the other keys describe
 *     (every key of that kind), joined by long-haul links: wan_bw and
 *     wan_lat are required (no default), L (default 1) gateways per pod,
 *     gateway g of each pod cabled to gateway g of every other; gw_bw
 *     (default (P - 1) wan_bw, so that a gateway cable never binds before
 *     the long-haul ones) and gw_lat (default the pod's top-level cable
 *     latency) the gateways' cables into the pod (tc_topo's multidc fields);
 * with, for any kind: bw= (default 400Gbps), lat= (per cable, default 50ns),
 * on a Clos also bw1=.. bwH=, lat1=.. latH= per level (1 = host-leaf);
 * hop_lat= (per switch or router traversed, default 100ns), alpha= (per
 * message, default 1.1us), reduce_bw= (bytes an endpoint reduces per second,
 * the MPI cost models' 1/gamma; default none: a reduction costs nothing), seed= (0), node=G[,node_bw=RATE (450GB/s)]
 * [,node_lat=TIME (250ns)][,node_hop_lat=TIME (0)][,node_reduce=0|1 (default 0; 1: the
 * node switch reduces and multicasts, NVLink SHARP)], on a Clos with node=
 * also rail=R (R divides G; each rail's ports fill whole leaves or a leaf
 * holds whole rails), nics=K or gpus_per_nic=k (K NICs per node, K = G/k,
 * shared by G/K endpoints each; R then divides K) with nic_bw=RATE (the
 * endpoint-NIC link, default the NIC's fabric bandwidth) and nic_lat=TIME
 * (0); on a Clos sharp=0|1 (1: the fabric switches reduce and multicast,
 * InfiniBand SHARP); and arch=volta|ampere|hopper|blackwell (the GPUs'
 * generation, for NCCL's constants) and transport=ib|efa|efa-sendrecv (the NICs'
 * transport, for NCCL's per-step network latency and protocols; default ib) and nic_path=pix|pxb|pxn|phb|sys
 * (the PCIe path from a GPU to its NIC, for NCCL's protocols; default pxb). Sources of the defaults:
 * docs/MODEL.md, "Latency and overhead defaults".
 * On success *out owns everything (tc_topo_free); on failure *out is NULL and
 * err holds one line. */
tc_status tc_topo_build(const char *spec, tc_topo **out, tc_err *err);
void tc_topo_free(tc_topo *t);

/* A box of a torus as a torus of its own: a slice whose rings the optical
 * circuit switches close (wrap_all: wraparound in every dimension, TPU v4
 * and v5p; docs/MODEL.md, "Placement"), or the box as it is (wraparound
 * only where it spans a whole dimension the parent wraps). origin and
 * extent are per dimension of parent; the dimensions of extent 1 are left
 * out, the others kept in order (the box's dimension k is the parent's
 * box_pdim[k]). Everything per link is the parent's: the torus's bandwidth
 * and latency, hop_lat, alpha, seed, arch and its scale-up nodes (node=G:
 * the box must hold whole nodes, each G consecutive endpoints of the box);
 * a link of the box that joins the same two vertices in the parent takes
 * that link's bandwidth (degraded or not), latency and failure flag; a
 * failed vertex of the parent inside the box fails in it, with every link
 * at it; the wrap links the parent does not have (with wrap_all) are new
 * links of the torus's parameters, healthy. Endpoint b of the box is the
 * parent's tc_topo_box_parent_endpoint(box, b). Fails (TC_EINVAL, one line)
 * for a parent that is not a torus, a box reaching beyond it, one of a
 * single endpoint, or one cutting the parent's scale-up nodes. */
tc_status tc_topo_torus_box(const tc_topo *parent, const uint32_t *origin, const uint32_t *extent, bool wrap_all,
                            tc_topo **out, tc_err *err);
/* A box's endpoint b in its parent, and the parent's endpoint e in the box
 * (UINT32_MAX outside it); the parent's link that the box's link l stands
 * for (UINT32_MAX: a wrap link the parent does not have). Not a box: the
 * identity. */
uint32_t tc_topo_box_parent_endpoint(const tc_topo *box, uint32_t b);
uint32_t tc_topo_box_endpoint(const tc_topo *box, uint32_t e);
uint32_t tc_topo_box_parent_link(const tc_topo *box, uint32_t l);

/* Scales every fabric link so that each endpoint's total fabric injection
 * bandwidth equals rate (bytes/s). */
tc_status tc_topo_equalize_injection(tc_topo *t, double rate, tc_err *err);
/* The injection tc_topo_equalize_injection sets to its rate: an endpoint's
 * fabric injection, a mesh's interior endpoint's (its corners have less). */
double tc_topo_equalize_base(const tc_topo *t);

/* Scales one directed link's bandwidth by factor (0 < factor). */
tc_status tc_topo_degrade_link(tc_topo *t, uint32_t link, double factor, tc_err *err);

/* Failures. link: the directed link, with both = true its cable (the
 * reverse direction too, link ^ 1); switch: a fabric switch by vertex (on
 * a torus the router, which is the endpoint's vertex); host: an endpoint
 * (its fabric ports, node link and NIC link); node: scale-up node n (its
 * endpoints and its node switch). Every link at a failed vertex fails.
 * Failing what has failed already is no error. Bad IDs: TC_EINVAL naming
 * the range. */
tc_status tc_topo_fail_link(tc_topo *t, uint32_t link, bool both, tc_err *err);
tc_status tc_topo_fail_switch(tc_topo *t, uint32_t vertex, tc_err *err);
tc_status tc_topo_fail_host(tc_topo *t, uint32_t endpoint, tc_err *err);
tc_status tc_topo_fail_node(tc_topo *t, uint32_t node, tc_err *err);
/* A topology's failure state (its links' bandwidths and the flags), saved
 * so that failures added after it can be undone: tc_topo_fail_restore puts
 * back what was failed at the save, nothing more. */
typedef struct tc_fail_state {
    double *bw;
    uint8_t *lf, *vf;
    uint32_t nf;
} tc_fail_state;
tc_status tc_topo_fail_save(tc_topo *t, tc_fail_state *fs, tc_err *err);
void tc_topo_fail_restore(tc_topo *t, const tc_fail_state *fs);
void tc_fail_state_free(tc_fail_state *fs);
static inline bool tc_topo_link_failed(const tc_topo *t, uint32_t l)
{
    return t->link_failed && t->link_failed[l];
}
static inline bool tc_topo_vertex_failed(const tc_topo *t, uint32_t v)
{
    return t->vertex_failed && t->vertex_failed[v];
}
/* One failure as --fail names it: link:ID (the cable), dlink:ID (one
 * direction), switch:ID (a vertex), host:ID (an endpoint), node:ID (a
 * scale-up node) (topo/faults.c). */
typedef enum { TC_FAIL_LINK = 0, TC_FAIL_DLINK, TC_FAIL_SWITCH, TC_FAIL_HOST, TC_FAIL_NODE } tc_fail_kind;
typedef struct tc_fail_item {
    tc_fail_kind kind;
    uint32_t id;
} tc_fail_item;
const char *tc_fail_kind_name(tc_fail_kind k);
tc_status tc_fail_item_parse(const char *s, tc_fail_item *out, tc_err *err);
tc_status tc_topo_fail_item(tc_topo *t, const tc_fail_item *f, tc_err *err);
/* --fail-random links=K|F%,switches=K,seed=S[,hostlinks=1][,nvlinks=1]:
 * K cables (or F% of the eligible ones: fabric cables, with hostlinks=1
 * also host-leaf and NIC cables, with nvlinks=1 also node links) and K
 * fabric switches (torus: routers), drawn from the seed. */
typedef struct tc_fail_random {
    double links;          /* a count, or a percentage with links_pct */
    bool links_pct;
    uint32_t switches;
    uint64_t seed;
    bool hostlinks, nvlinks;
} tc_fail_random;
tc_status tc_fail_random_parse(const char *s, tc_fail_random *out, tc_err *err);
void tc_fail_random_format(const tc_fail_random *r, char *buf, size_t len);
/* What a draw failed: cable IDs (the even link of each) and switch
 * vertices, out of how many eligible. Owned; tc_fail_drawn_free. */
typedef struct tc_fail_drawn {
    uint32_t *cables, ncables, eligible_cables;
    uint32_t *switches, nswitches, eligible_switches;
} tc_fail_drawn;
/* Draw number trial (0, 1, ...) of r on t, applied. */
tc_status tc_topo_fail_random(tc_topo *t, const tc_fail_random *r, uint64_t trial, tc_fail_drawn *out, tc_err *err);
void tc_fail_drawn_free(tc_fail_drawn *d);

/* The cables (a link and its reverse) of the fabric: Clos switch-switch,
 * torus router-router; with host = true also endpoint (NIC) to leaf; with
 * scaleup = true also the node links. Writes the even link ID of each into
 * out (capacity n_links / 2) and returns their count. */
uint32_t tc_topo_fabric_cables(const tc_topo *t, bool host, bool scaleup, uint32_t *out);

/* Parses "ecmp", "dmodk", "dor", "dor-positive", "detour", "line", "direct" (or "default") and checks that it
 * fits the topology (t NULL: any). */
tc_status tc_routing_parse(const char *s, const tc_topo *t, tc_routing *out, tc_err *err);
const char *tc_routing_name(tc_routing r, const tc_topo *t);

/* Torus: the link leaving vertex v along dimension dim in direction dir
 * (+1 or -1), or UINT32_MAX where there is none (the end of a mesh line, the
 * second direction of a dimension of size 2, or not a torus). */
uint32_t tc_topo_torus_link(const tc_topo *t, uint32_t v, int dim, int dir);

/* Full: the link from endpoint a to endpoint b (a != b), or UINT32_MAX (not
 * a full mesh, a == b, or beyond the endpoints). */
uint32_t tc_topo_full_link(const tc_topo *t, uint32_t a, uint32_t b);

/* Clos: the latency of a route that climbs to level L (1..levels) and comes
 * back down: 2 (lat_1 + .. + lat_L) for its 2L cables plus (2L - 1) hop_lat
 * for the switches it passes through; 0 for L <= 0. Equal, to rounding, to
 * the sum of the lat of the route's links. */
double tc_topo_clos_path_lat(const tc_topo *t, int L);

/* Upper bound on the number of links of any routed path. */
uint32_t tc_topo_max_path(const tc_topo *t);

/* The kind whose routings apply: a multidc's pod kind, else t's own. */
static inline tc_topo_kind tc_topo_fabric_kind(const tc_topo *t)
{
    return t->kind == TC_TOPO_MULTIDC ? t->pod[0]->kind : t->kind;
}
/* Endpoints per pod (a multidc's pod_endpoints; every endpoint otherwise),
 * and the pod of endpoint e (0 outside a multidc). */
static inline uint32_t tc_topo_pod_size(const tc_topo *t)
{
    return t->n_pods ? t->pod_endpoints : t->n_endpoints;
}
static inline uint32_t tc_topo_pod_of(const tc_topo *t, uint32_t e)
{
    return t->n_pods ? e / t->pod_endpoints : 0;
}

/* The scale-up node of vertex v: an endpoint's, or a node switch's own;
 * UINT32_MAX for any other vertex or without nodes. */
uint32_t tc_topo_node_of(const tc_topo *t, uint32_t v);

/* Whether vertices a and b (endpoints or node switches) are in one
 * scale-up node. */
bool tc_topo_same_node(const tc_topo *t, uint32_t a, uint32_t b);

/* Routes src -> dst (endpoints, both < n_endpoints, or one of them the node
 * switch of the other's node: then the one node link between them, an
 * in-network reduction's hop; on a Clos, a fabric switch and an endpoint or
 * switch below it: the unique tree path between them, a hop of a reduction
 * in the fabric; any other pair: 0 links, no route); writes
 * link IDs into links (capacity
 * tc_topo_max_path) and returns their count (0 when src == dst). Two
 * endpoints of one scale-up node always go through their node switch.
 * Clos: climb to the lowest common ancestor level (the parent at each up hop
 * chosen by ecmp or dmodk), then descend, which is unique. Torus: dimension
 * order, shortest way. Full: the pair's own link. A routing that does not fit the kind (dmodk on a
 * torus) is taken as TC_ROUTE_DEFAULT. O(path length), no allocation.
 * With failed links: a Clos route takes the first surviving up-link
 * choices level by level (from the ECMP hash's or D-mod-k's choice on, in
 * increasing order modulo the up-links, backtracking), a torus route
 * detours (detour, the default) or goes the other way round (line); no
 * surviving path, or a failed end: TC_NO_ROUTE; a full mesh's route
 * whose link failed goes through the first endpoint after the
 * destination (cyclically) whose two links survive (detour, the default
 * with failures) or is cut off (direct).
 * Multidc: within a pod, the pod's own route (the routing applied to the
 * pod's kind); between pods, the source's pod from the endpoint up to a
 * gateway (Clos: the unique path to a top-level switch, then its gateway
 * cable; torus: the router's own gateway cable), the long-haul cable, and
 * the destination's pod from its gateway down. The gateway (one of L) and
 * the top-level switches at either end are chosen by a hash of (src, dst,
 * seed), or under dmodk by the destination (d mod L, d mod the top
 * switches); with failures the first surviving choices from there, in
 * increasing order (another gateway, another top switch), TC_NO_ROUTE where
 * none survives. A route between pods crosses exactly one long-haul link;
 * a route within a pod none. */
uint32_t tc_topo_route(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst,
                       uint32_t *links);

/* tc_topo_route as if nothing had failed (the failure overlay set aside):
 * the route a failure-free network takes, for what failures add to it. */
uint32_t tc_topo_route_healthy(const tc_topo *t, tc_routing r, uint32_t src, uint32_t dst, uint32_t *links);

/* The Clos host slot of endpoint e (e itself unless rail-optimized or
 * behind a shared NIC). */
static inline uint32_t tc_topo_slot(const tc_topo *t, uint32_t e)
{
    return t->hslot ? t->hslot[e] : e;
}

/* Summary figures, computed from the structure. */
typedef struct tc_topo_info {
    uint32_t endpoints, switches, links, diameter;   /* diameter in links, endpoint to endpoint */
    uint32_t node_switches;  /* scale-up node switches (not counted in switches) */
    double bisection_Bps;    /* one direction, across the worst balanced cut of the fabric's host slots
                              * (scale-up node links not counted) */
    double injection_Bps;    /* fabric injection bandwidth of one endpoint (all its ports) */
    uint32_t ports_per_endpoint;
    double min_latency_s;    /* smallest endpoint-to-endpoint path latency (distinct endpoints) */
    double max_latency_s;    /* largest routed path latency (both: cables and switch or router
                              * traversals, the sum of the links' lat; alpha not included) */
    double oversub[TC_MAX_LEVELS + 1]; /* Clos: level i (1..h-1) down capacity / up capacity */
} tc_topo_info;
/* Multidc figures (docs/MODEL.md, "Multi-datacenter"): endpoints, switches
 * (the pods' fabric switches and the gateways), links, diameter and
 * latencies of the whole topology; injection and ports those of a pod's
 * endpoint in its pod (a torus router's gateway cables not counted);
 * bisection the smaller of the long-haul cables between the first
 * floor(P/2) pods and the others (floor(P/2) ceil(P/2) L wan_bw) and P
 * times a pod's own bisection (a cut through every pod). */

void tc_topo_get_info(const tc_topo *t, tc_topo_info *info);
/* The same, with the bisection and a Clos's oversubscription of the links
 * as they are where links failed or were degraded (the design's figures
 * otherwise; a multidc's stay the design's). tc_topo_get_info's are the
 * design's, which the models take. */
void tc_topo_get_info_as_is(const tc_topo *t, tc_topo_info *info);

/* Writes a short description of link id into buf ("leaf 3 -> spine 1"). */
const char *tc_topo_link_name(const tc_topo *t, uint32_t id, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
