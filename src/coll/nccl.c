/*
 * nccl.c - NCCL's ring (nccl-ring) and the costs of its protocols, as
 * NVIDIA/nccl v2.21.5-1 (commit ab2b89c4) has them (docs/MODEL.md, "NCCL's
 * ring and protocols"; every constant below names its file and line there).
 *
 * Channels. NCCL runs C channels at once, each a ring over all ranks on its
 * own part of the buffer (src/enqueue.cc:431-489, one contiguous slice per
 * channel since v2.20; topocc cuts the buffer into C equal slices). Ring
 * order (src/graph/connect.cc:39-109): channel k visits node 0's GPUs, then
 * node 1's, ...; a node is entered and left through the NIC of the
 * channel's rail, and with an entry and an exit NIC that differ, odd nodes
 * swap them (connect.cc:383-396), so that every hop between nodes stays on
 * one rail. topocc's channel k enters even nodes at GPU a = k mod G and
 * leaves at b = a + 1 (visiting a, a-1, ..., b), odd nodes the other way
 * (b, b+1, ..., a): node n's exit GPU and node n+1's entry GPU are the same
 * GPU index, hence the same rail of a rail-optimized Clos; with an odd node
 * count the hop from the last node back to node 0 changes rail (NCCL would
 * send it through PXN). Ranks are GPUs node by node (rank r: GPU r mod G of
 * node r / G, G the topology's node size).
 *
 * Chunks. Each channel runs its slice in loops of R chunks (R ranks), a
 * chunk being at most the protocol's chunk size: Simple 2 MiB (the buffer,
 * 4 MiB, over NCCL_STEPS = 8 slots, times 4 steps per chunk), LL 32 KiB,
 * LL128 576,000 B (src/enqueue.cc:1722-1729, src/include/collectives.h:
 * 13-23, src/init.cc:542-544). An all-reduce loop is 2(R-1) steps
 * (src/device/all_reduce.h:12-80), a reduce-scatter or all-gather loop
 * NCCL fills whole loops of full chunks and cuts the last loop's
 * chunks smaller (enqueue.cc:225-245); topocc cuts the slice into the same
 * number of loops of equal chunks (the same steps and bytes, chunks of one
 * size). Small messages use fewer channels: NCCL lowers the count while the
 * bytes are below channels x threads x threshold (enqueue.cc:1589-1593;
 * threads 512 LL and Simple, 640 LL128; thresholds 8 x ranks LL, 8 LL128,
 * 64 Simple, src/include/comm.h:35-37, src/graph/tuning.cc:376-383).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "coll/algos.h"

const char *tc_proto_name(tc_proto p)
{
    switch (p) {
    case TC_PROTO_LL: return "LL";
    case TC_PROTO_LL128: return "LL128";
    case TC_PROTO_SIMPLE: return "Simple";
    default: return "none";
    }
}

tc_status tc_proto_parse(const char *s, bool as_mask, tc_proto *proto, uint8_t *mask, tc_err *err)
{
    bool neg = s[0] == '^';
    const char *p = neg ? s + 1 : s;
    uint8_t m = 0;
    int names = 0;
    while (*p) {
        size_t n = strcspn(p, "|,");
        tc_proto found = TC_PROTO_NONE;
        for (int k = TC_PROTO_LL; k <= TC_PROTO_SIMPLE; k++) {
            const char *nm = tc_proto_name((tc_proto)k);
            if (strlen(nm) == n && strncasecmp(p, nm, n) == 0)
                found = (tc_proto)k;
        }
        if (!found)
            return tc_fail(err, TC_EINVAL, "invalid protocol '%.*s' in '%s': accepted are LL, LL128, Simple (a list "
                                           "with | or ',', ^ for all but)",
                           (int)n, p, s);
        m |= (uint8_t)(1u << found);
        names++;
        *proto = found;
        p += n;
        if (*p)
            p++;
    }
    /* '^' alone excludes nothing: every protocol, forced on, as NCCL's
     * parseList reads it (all elements set, then no token clears one;
     * src/graph/tuning.cc) and as NCCL_ALGO=^ is read here */
    if (!names && !neg)
        return tc_fail(err, TC_EINVAL, "empty protocol '%s': accepted are LL, LL128, Simple", s);
    if (neg)
        m = (uint8_t)(~m & (1u << TC_PROTO_LL | 1u << TC_PROTO_LL128 | 1u << TC_PROTO_SIMPLE));
    if (!as_mask) {
        if (neg || names > 1)
            return tc_fail(err, TC_EINVAL, "'%s': nccl-ring runs one protocol (LL, LL128 or Simple); nccl chooses "
                                           "among several",
                           s);
        return TC_OK;
    }
    *proto = TC_PROTO_NONE;
    *mask = m;
    if (!m)
        return tc_fail(err, TC_EINVAL, "'%s' allows no protocol", s);
    return TC_OK;
}

tc_status tc_nccl_algo_parse(const char *s, uint8_t *mask, tc_err *err)
{
    bool neg = s[0] == '^';
    const char *p = neg ? s + 1 : s;
    uint8_t m = 0;
    while (*p) {
        size_t n = strcspn(p, "|,");
        if (n == 4 && strncasecmp(p, "ring", 4) == 0)
            m |= 1;
        else if (n == 4 && strncasecmp(p, "tree", 4) == 0)
            m |= 2;
        else if (n == 4 && strncasecmp(p, "nvls", 4) == 0)
            m |= 4;
        else if (n == 8 && strncasecmp(p, "nvlstree", 8) == 0)
            m |= 8;
        else if (n == 3 && strncasecmp(p, "pat", 3) == 0)
            m |= 16;
        else if (n == 13 && strncasecmp(p, "collnetdirect", 13) == 0)
            m |= 32;
        else if (n == 12 && strncasecmp(p, "collnetchain", 12) == 0)
            m |= 64;
        else if (n == 7 && strncasecmp(p, "collnet", 7) == 0)
            m |= 32 | 64; /* NCCL's older name for both (src/graph/tuning.cc parseList) */
        else
            return tc_fail(err, TC_EINVAL, "unknown NCCL algorithm '%.*s' in '%s': accepted are Ring, Tree, NVLS, "
                                           "NVLSTree, PAT, CollNetDirect, CollNetChain",
                           (int)n, p, s);
        p += n;
        if (*p)
            p++;
    }
    if (neg)
        m = (uint8_t)(~m & 127);
    if (!m)
        return tc_fail(err, TC_EINVAL, "'%s' allows none of Ring, Tree, NVLS, NVLSTree, PAT, CollNetDirect, "
                                       "CollNetChain",
                       s);
    *mask = m;
    return TC_OK;
}

/* ---- NCCL v2.21.5-1's tuning constants (src/graph/tuning.cc) ---- */

/* baseLat[Ring][proto], us (tuning.cc:56-59): LL, LL128, Simple. */
static const double base_lat_us[3] = {6.6, 14.0, 8.4};
/* hwLat[NVLINK] and hwLat[NET] for Ring, us (tuning.cc:67-77). */
static const double hw_nvlink_us[3] = {.6, 1.9, 3.4};
static const double hw_net_us[3] = {2.7, 4.0, 14.0};
/* AWS EFA's per-step network latency as the aws-ofi-nccl plugin's tuner
 * models it (aws/aws-ofi-nccl v1.14.0, commit 08ad665d,
 * src/tuner/nccl_ofi_model.c:12-27 and :64-66, include/nccl_ofi_param.h:377-383):
 * 20 us a network step on p5/p5e (net_lat), plus 3 us for Simple
 * (TUNER_NET_COMP_OVERHEAD: "~2 usec cost in the device and ~1 usec cost to
 * write that completion up to the host stack"), the same for every
 * algorithm, in place of NCCL's InfiniBand hwLat[NET] (transport=efa). */
#define EFA_NET_LAT_US 20.0
#define EFA_COMP_OVERHEAD_US 3.0

double tc_nccl_ring_net_step_s(const tc_topo *t, tc_proto p)
{
    return p >= TC_PROTO_LL && p <= TC_PROTO_SIMPLE ? tc_nccl_net_lat_us(t, p, hw_net_us[p - TC_PROTO_LL]) * 1e-6 : 0;
}

/* The transport's own network step, us (net_lat= aside): what NCCL's
 * choice sees where it takes the step alone (a broadcast's or reduce's
 * chain) */
static double transport_net_lat_us(const tc_topo *t, tc_proto p, double nccl_us)
{
    if (t && TC_TRANSPORT_IS_EFA(t->transport))
        return EFA_NET_LAT_US + (p == TC_PROTO_SIMPLE ? EFA_COMP_OVERHEAD_US : 0);
    return nccl_us;
}

double tc_nccl_net_lat_us(const tc_topo *t, tc_proto p, double nccl_us)
{
    /* net_lat= (a calibration, docs/MODEL.md "Calibrating a transport")
     * wins over the transport's table */
    if (t && t->net_lat_given && p >= TC_PROTO_LL && p <= TC_PROTO_SIMPLE)
        return t->net_lat[p - TC_PROTO_LL] * 1e6;
    return transport_net_lat_us(t, p, nccl_us);
}

/* The latency the aws-ofi-nccl net plugin reports to NCCL on p4d, p4de and
 * p5 instances (aws/aws-ofi-nccl v1.7.3-aws to v1.9.2-aws,
 * src/platform-aws.c platform_data_map `.latency = 75.0`, handed over as
 * props->latency in src/nccl_ofi_net.c:321 of v1.9.2-aws), us. NCCL's
 * search keeps it as graph->latencyInter (src/graph/search.cc:565 of
 * v2.21.5-1) and its tuning model adds it to every network step, twice
 * with Simple ("flush extra latency", src/graph/tuning.cc:227-229). InfiniBand's
 * own transport reports none. */
#define EFA_PLUGIN_LAT_US 75.0

double tc_nccl_model_net_lat_us(const tc_topo *t, tc_proto p, double nccl_us)
{
    if (t && TC_TRANSPORT_IS_EFA(t->transport))
        return nccl_us + EFA_PLUGIN_LAT_US * (p == TC_PROTO_SIMPLE ? 2 : 1);
    return nccl_us;
}

/* The network overhead a multi-node ring step pays at least, us (1 on
 * Intel and other CPUs, 2 on AMD: tuning.cc:108-118), three times for
 * Simple (tuning.cc:242-247). topocc does not model the host CPU: Intel's
 * (assumed). */
#define NET_OVERHEAD_US 1.0
/* llMaxBws (tuning.cc:86-90), GB/s, by row then 1, 2, >= 4 nodes: one
 * node takes the row of its GPU generation (Volta, Ampere, Hopper), more
 * nodes row 0 (Intel CPUs; row 1 is AMD's). */
static const double ll_max_bw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
/* perChMaxRingLL128Bws (tuning.cc:92-96), GB/s per search channel. */
static const double ll128_per_ch[3] = {20.0, 20.0, 36.7};

/* The least a warp stores at once (WARP_SIZE 32 threads, src/include/
 * device.h:53), in data bytes: LL 32 lines of 8 data bytes (a 16-byte
 * line holds 8 bytes of data and 8 of flags, :38-51), 256 B; LL128 a
 * warp's slice, 32 x 8 words of 8 bytes of which one in 16 is a flag
 * (WireWordPerSlice, DataEltPerSlice: src/device/prims_ll128.h:293-294;
 * NCCL_LL128_SHMEM_ELEMS_PER_THREAD 8, device.h:70-77), 1,920 B. The
 * pieces the tree and the chains are cut into are at least this. */
static double warp_piece(tc_proto p)
{
    return p == TC_PROTO_LL ? 256.0 : 1920.0;
}

/* Chunk payload of one ring step (see the top of the file); Simple's is
 * its buffer (NCCL_BUFFSIZE, default 4 MiB: src/init.cc:544) over the 8
 * slots, times 4 steps per chunk. */
static double chunk_bytes(tc_proto p, double buffsize)
{
    return p == TC_PROTO_LL ? 32768.0 : p == TC_PROTO_LL128 ? 576000.0 : (buffsize > 0 ? buffsize : 4194304.0) / 8 * 4;
}

/* Bytes on the wire per byte of payload: LL lines carry 8 data bytes and 8
 * flag bytes (src/include/device.h:38-51); LL128 lines 120 of 128
 * (device.h:70-72). */
double tc_nccl_wire_factor(tc_proto p)
{
    return p == TC_PROTO_LL ? 2.0 : p == TC_PROTO_LL128 ? 128.0 / 120.0 : 1.0;
}

/* A ring hop inside a node, us: NVLink's step latency, raised on a
 * multi-node ring to the network overhead (x3 for Simple). */
static double ring_intra_us(tc_proto p, uint32_t nodes)
{
    double intra = hw_nvlink_us[p - TC_PROTO_LL];
    return nodes > 1 ? fmax(intra, NET_OVERHEAD_US * (p == TC_PROTO_SIMPLE ? 3 : 1)) : intra;
}

/* The row of the architecture tables: Volta 0, Ampere 1, Hopper and later
 * 2 (v2.21.5-1 has no Blackwell row: a newer GPU takes Hopper's,
 * tuning.cc:139). Unknown: Hopper. */
static int arch_row(const tc_topo *t)
{
    if (!t || t->arch == TC_ARCH_NONE)
        return 2;
    return t->arch == TC_ARCH_VOLTA ? 0 : t->arch == TC_ARCH_AMPERE ? 1 : 2;
}

static double graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G);
static double tree_graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G);

/* Fills the protocol's costs into s (coll.h): nodes is the number of
 * scale-up nodes the ranks span, C the channels used. */
static void proto_costs(tc_sched *s, const tc_topo *t, uint32_t nodes, uint32_t C, uint32_t Cgraph, double share)
{
    tc_proto p = s->proto;
    int i = p - TC_PROTO_LL;
    s->base_s = base_lat_us[i] * 1e-6;
    s->lat_intra_s = ring_intra_us(p, nodes) * 1e-6;
    s->lat_inter_s = tc_nccl_net_lat_us(t, p, hw_net_us[i]) * 1e-6;
    s->wire = tc_nccl_wire_factor(p);
    int col = nodes <= 2 ? (int)nodes - 1 : 2, row = nodes == 1 ? arch_row(t) : 0;
    if (col < 0)
        col = 0;
    /* The whole collective's bus bandwidth at most NCCL's model's, over
     * the C channels run: LL min(llMaxBw, 0.5 x the graph's bandwidth)
     * (tuning.cc:180), LL128 the graph's search channels (half its
     * channels: connect.cc:443) x perChMaxRingLL128Bw (:181), which the
     * channel variables do not change. The terms that count channels take
     * the share of them run (run_share); llMaxBw is the collective's. */
    double search = Cgraph / 2.0 > 1 ? Cgraph / 2.0 : 1;
    if (p == TC_PROTO_LL) {
        uint32_t G = t && t->node_size > 1 ? t->node_size : 1;
        double g = share * 0.5 * graph_bw(t, nodes, G); /* 0: no topology, llMaxBw alone */
        s->rate_cap_Bps = (g > 0 ? fmin(ll_max_bw[row][col], g) : ll_max_bw[row][col]) * 1e9 / C;
    } else if (p == TC_PROTO_LL128)
        s->rate_cap_Bps = search * ll128_per_ch[arch_row(t)] * 1e9 * share / C;
    else
        s->rate_cap_Bps = 0;
    /* NCCL_STEPS = 8 FIFO slots per connection (device.h:22): a Simple
     * ring chunk takes 4 of them, an LL or LL128 chunk 1. A network hop
     * has a second FIFO of 8 slots on the far side, filled by the proxy
     * (src/transport/net.cc:1052-1074, 1232-1285): twice the chunks. */
    s->credit_steps = p == TC_PROTO_SIMPLE ? 2 : 8;
    s->credit_steps_inter = 2 * s->credit_steps;
}

/* The tree's constants (tuning.cc): baseLat[Tree] (:56-59), hwLat NVLink
 * and network for Tree (:67-77), perChMaxTreeBws and perChMaxTreeLL128Bws
 * (:97-106) by architecture row and 1, 2, >= 4 nodes. */
static const double tree_base_us[3] = {6.8, 14.0, 0};
static const double tree_nvlink_us[3] = {.6, 1.25, 28};
static const double tree_net_us[3] = {5.0, 8.5, 28};
static const double tree_per_ch[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
static const double tree_ll128_per_ch[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};

/* The graph's bandwidth NCCL's model starts from (GB/s), from the topology:
 * a GPU's NVLink share on one node; between nodes also the node's NICs. */
double tc_nccl_nic_line_Bps(const tc_topo *t)
{
    tc_topo_info in;
    tc_topo_get_info(t, &in);
    return in.injection_Bps / t->net_eff;
}

/* NCCL's per-link NVLink bandwidth (GB/s): 20.6 from compute capability
 * 9.0 on at v2.21.5-1 (SM90_NVLINK_BW, src/graph/topo.h:17, 226-233),
 * Blackwell's included; 40.1 for compute capability 10.0 and later from
 * v2.25 (SM100_NVLINK_BW, src/graph/topo.h:24 at v2.30.7-1), the figure
 * the Blackwell presets' node_bw is 18 links of. */
#define NVLINK_LINK_SM90 20.6
#define NVLINK_LINK_SM100 40.1

/* The NVLink bandwidth a GPU has in NCCL's topology, GB/s (0 without a
 * scale-up node): its links x NCCL's per-link figure
 * (src/graph/topo.cc:556-567), which NCCL's graph search and model read
 * (the evaluators move data at node_bw). That is node_bw on Volta, Ampere
 * and Hopper (the presets' node_bw is that product); on Blackwell v2.21.5-1
 * counts its links at Hopper's 20.6 GB/s, so the links node_bw holds at
 * 40.1 GB/s (18 on a B200: 370.8 GB/s, not 721.8). */
double tc_nccl_nvlink_GBps(const tc_topo *t)
{
    if (!t || t->node_size < 2 || !(t->node_bw > 0))
        return 0;
    double total = t->node_bw / 1e9;
    return t->arch == TC_ARCH_BLACKWELL ? total / NVLINK_LINK_SM100 * NVLINK_LINK_SM90 : total;
}

/* NCCL's ring graph where the ranks are on one scale-up node of G > 1 GPUs
 * (tc_nccl_ring_graph_one_node: the channels and the speed its search
 * gives, from the NVLink bandwidth NCCL sees a GPU have); false elsewhere,
 * and below 3 GB/s, where no speed of NCCL's fits (the defaults across
 * nodes then). */
static bool one_node_graph(const tc_topo *topo, uint32_t nodes, uint32_t G, uint32_t *nch, double *bw)
{
    /* without a scale-up node the NVLink is 0 GB/s, where no speed fits */
    if (!topo || nodes != 1 || G < 2)
        return false;
    return tc_nccl_ring_graph_one_node(tc_nccl_nvlink_GBps(topo), G, arch_row(topo) == 2, nch, bw);
}

/* The PCIe link of a GPU and of a NIC in NCCL's topology, GB/s: 16 lanes x
 * the generation's figure / 80 (kvDictPciGen, width * speed / 80.0:
 * src/graph/topo.cc:393-395, 459 at v2.21.5-1): Gen3 12, Gen4 24, Gen5 48,
 * as NVIDIA/nccl-tests#256's H200 log prints ("PCI[48.0]" for every GPU
 * and NIC). The generation by architecture: Ampere 4, Hopper and
 * Blackwell 5 (the DGX profiles' pcie_generation: profiles/dgx-a100.json,
 * dgx-h100.json, dgx-b200.json), Volta 3 (assumed); 0 (not limited)
 * without arch=. */
double tc_nccl_pcie_GBps(const tc_topo *t)
{
    if (!t)
        return 0;
    switch ((tc_arch)t->arch) {
    case TC_ARCH_VOLTA: return 16 * 60 / 80.0;
    case TC_ARCH_AMPERE: return 16 * 120 / 80.0;
    case TC_ARCH_HOPPER:
    case TC_ARCH_BLACKWELL: return 16 * 240 / 80.0;
    default: return 0;
    }
}

/* The NICs of a node of G GPUs of the run: t's nics= where the run takes
 * whole nodes, else one a GPU. */
static uint32_t node_nics(const tc_topo *t, uint32_t G)
{
    return t->nics && t->node_size == G ? t->nics : G;
}

/* NCCL's ring graph where the ranks span nodes of G GPUs
 * (tc_nccl_ring_graph_nodes): a GPU's NVLink as NCCL sees it, the node's
 * NICs (node_nics) at their line rate, the architecture's PCIe links;
 * false on one node. */
static bool net_graph(const tc_topo *topo, uint32_t nodes, uint32_t G, uint32_t *nch, double *bw)
{
    if (!topo || nodes < 2 || !topo->n_links) /* no network (a bare shape, as the data checker's) */
        return false;
    uint32_t K = node_nics(topo, G);
    double nic = tc_nccl_nic_line_Bps(topo) / 1e9 * G / K, nvl = G > 1 ? tc_nccl_nvlink_GBps(topo) : 0;
    return tc_nccl_ring_graph_nodes(nvl, nic, tc_nccl_pcie_GBps(topo), K, G, arch_row(topo) == 2, nch, bw);
}

static double graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G)
{
    if (!topo)
        return 0;
    uint32_t n;
    double b;
    /* the model's bandwidth is the graph's channels x speed (tuning.cc:
     * 174-177: "busBw = graphs[a]->nChannels * bw") */
    if (one_node_graph(topo, nodes, G, &n, &b) || net_graph(topo, nodes, G, &n, &b))
        return n * b;
    double inj = tc_nccl_nic_line_Bps(topo);
    double nvl = topo->node_size > 1 ? tc_nccl_nvlink_GBps(topo) * 1e9 : inj;
    return (nodes > 1 ? fmin(nvl, inj * G) : nvl) / 1e9;
}

/* The tree graph's bandwidth NCCL's model takes (GB/s). On one or two
 * nodes the model reads the graph's bwIntra (tuning.cc:175: "nNodes <= 2
 * || collnet ? graphs[a]->bwIntra : graphs[a]->bwInter"), and the search's
 * second pass raises a tree's bwIntra above bwInter while it stays below
 * twice bwInter and the GPUs' NVLink carries it (search.cc:1025-1028,
 * "increase bwIntra for trees (2 nodes or collnet)"); the ring's stays
 * equal to bwInter (:1017-1020). Across two nodes the tree's graph thus
 * carries up to twice the NICs' bandwidth inside the node; from three
 * nodes on the model reads bwInter, the ring's. */
static double tree_graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G)
{
    double bw = graph_bw(topo, nodes, G);
    if (nodes != 2 || !topo)
        return bw;
    /* a node of one GPU has no NVLink to hold bwIntra back (NVIDIA/nccl
     * issue #524's graph file: tree 24/12, ring 12/12) */
    double nvl = topo->node_size > 1 && G > 1 ? tc_nccl_nvlink_GBps(topo) : 0;
    uint32_t n;
    double b;
    if (net_graph(topo, nodes, G, &n, &b))
        return n * tc_nccl_tree_intra_two_nodes(b, n, nvl, G, arch_row(topo) == 2);
    return fmin(nvl > 0 ? nvl : INFINITY, 2 * bw);
}

double tc_nccl_tree_graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G)
{
    return tree_graph_bw(topo, nodes, G);
}

/* NCCL's tree graph has the TREE pattern where a node holds one GPU
 * (src/graph/search.cc:897: "if (ngpus == 1) ... graph->pattern =
 * NCCL_TOPO_PATTERN_TREE"), and across nodes of SM90 and later GPUs each
 * with its own NIC, where the BALANCED_TREE pattern src/init.cc:1057 asks
 * for (a NIC's traffic spread over two GPUs near it) finds no better graph
 * than the simpler tree the search then tries ("Try a simpler tree",
 * search.cc:964-966; what NCCL's own search code gives, compiled and run on
 * such nodes: docs/MODEL.md "NCCL's choice"); the model takes 0.85 of its
 * bus bandwidth then (src/graph/tuning.cc:185: "if (a == NCCL_ALGO_TREE &&
 * graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85"). */
#define TREE_PATTERN_EFF 0.85

static bool tree_pattern_tree(const tc_topo *t, uint32_t nodes, uint32_t G)
{
    if (G == 1)
        return true;
    return t && nodes > 1 && t->n_links && tc_nccl_tree_pattern_tree(G, node_nics(t, G), arch_row(t) == 2);
}

/* A tree's protocol costs (coll.h), in place of the ring's. The caps are
 * NCCL's tree bus bandwidths (tuning.cc:182-184: x 0.92 up to the search
 * channels x perChMaxTreeBw; LL a further / 3.8 up to llMaxBw; LL128 x 7/9
 * on one node, 120/128 on several, up to perChMaxTreeLL128Bw) shared by
 * the channels; a chunk is one FIFO step: 8 in flight, twice that across a
 * network hop. */
/* treeCorrectionFactor (tuning.cc:412-416), by protocol then log2 of
 * bytes / 64 (0..22; none from 512 MiB up). */
static const double tree_corr[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

static int log2i(double x)
{
    int l = 0;
    while (x >= 2) {
        x /= 2;
        l++;
    }
    return l;
}

static void tree_costs(tc_sched *s, const tc_topo *t, uint32_t nodes, uint32_t C, uint32_t Cgraph, double share)
{
    int i = s->proto - TC_PROTO_LL, row = arch_row(t), col = nodes <= 2 ? (int)nodes - 1 : 2;
    if (col < 0)
        col = 0;
    uint32_t G = t && t->node_size > 1 ? t->node_size : 1;
    s->base_s = tree_base_us[i] * 1e-6;
    s->lat_intra_s = tree_nvlink_us[i] * 1e-6;
    s->lat_inter_s = tc_nccl_net_lat_us(t, s->proto, tree_net_us[i]) * 1e-6;
    double search = Cgraph / 2.0 > 1 ? Cgraph / 2.0 : 1;
    /* every term but llMaxBw counts channels: the share run of them */
    double bw = tree_graph_bw(t, nodes, G), bus = share * fmin(bw * .92, search * tree_per_ch[row][col]);
    if (s->proto == TC_PROTO_LL)
        bus = fmin(bus / 3.8, ll_max_bw[nodes == 1 ? row : 0][col]);
    else if (s->proto == TC_PROTO_LL128)
        bus = fmin(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), share * search * tree_ll128_per_ch[row][col]);
    if (tree_pattern_tree(t, nodes, G))
        bus *= TREE_PATTERN_EFF;
    /* the share of that rate NCCL's tree reaches at this size, by NCCL's
     * own measured correction (treeCorrectionFactor, tuning.cc:412-416,
     * which its model applies to the tree's bandwidth by log2 of the bytes
     * over 64: :435) */
    int ls = s->req.bytes >= 64 ? log2i(s->req.bytes / 64) : 0;
    if (ls < 23)
        bus *= tree_corr[i][ls];
    s->rate_cap_Bps = bus > 0 ? bus * 1e9 / C : 0;
    s->credit_steps = 8;
    s->credit_steps_inter = 16;
}

/* Appends a transfer of one chunk (slot) in lane k; piped: it runs behind
 * an earlier chunk of the lane's pipeline. */
static inline void add_chunk(tc_xfers *x, uint32_t src, uint32_t dst, double bytes, bool red, uint32_t k,
                             uint32_t slot, bool piped)
{
    size_t at = tc_xfers_add(x, src, dst, bytes, red);
    if (!x->oom) {
        x->v[at].lane = (uint16_t)k;
        x->v[at].piped = piped;
    }
    if (x->with_data)
        tc_xfers_seg(x, slot, slot, 1);
}

/* ---- the ring ---- */

typedef struct nccl_ring_state {
    uint32_t C, R, L;      /* channels, ranks, loops per channel (broadcast, reduce: chunks per channel) */
    uint32_t *order;       /* C x R: channel k's ring, position -> rank; broadcast and reduce: its
                            * chain, position 0 first (the root, or the rank after it) */
} nccl_ring_state;

static void ring_state_free(void *p)
{
    nccl_ring_state *st = p;
    if (!st)
        return;
    free(st->order);
    free(st);
}

/* The state of C rings (or chains) of R ranks and L loops (chunks), owned
 * by s; NULL: out of memory (what was made is freed with s). */
static nccl_ring_state *ring_state_new(tc_sched *s, uint32_t C, uint32_t R, uint32_t L)
{
    nccl_ring_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    s->state = st;
    s->free_state = ring_state_free;
    st->C = C, st->R = R, st->L = L;
    st->order = malloc((size_t)C * R * sizeof *st->order);
    return st->order ? st : NULL;
}

static tc_status emit_nccl_ring(const tc_sched *s, uint32_t step, tc_xfers *x);

static uint32_t graph_channels(const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G);
static double run_share(const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G, bool tree);

/* What the rings and the chains set alike: nblk blocks (slots), one lane
 * per channel, the protocol's costs for R ranks on nodes of G. */
static void ring_sched_set(tc_sched *s, const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G,
                           uint32_t C, uint32_t nblk)
{
    s->nblk = s->nslots = nblk;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_nccl_ring;
    s->channels = C;
    s->lanes = C;
    s->nccl_impl = TC_ALGO_NCCL_RING;
    proto_costs(s, topo, R > G ? R / G : 1, C, graph_channels(req, topo, R, G), run_share(req, topo, R, G, false));
}

/* Whether NCCL's rings (and trees, and nccl's choice among them) fit p
 * ranks; name is the algorithm asked for, which the message names. */
static bool nccl_whole_nodes(const char *name, uint32_t p, const tc_topo *topo, tc_err *err)
{
    uint32_t G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (p > G && p % G) {
        tc_fail(err, TC_EINVAL, "%s needs whole nodes: p a multiple of the node size %u", name, G);
        return false;
    }
    return true;
}

static bool nccl_ring_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (op == TC_OP_ALLTOALL) {
        tc_fail(err, TC_EINVAL, "nccl-ring implements allreduce, reducescatter, allgather, broadcast and reduce");
        return false;
    }
    return nccl_whole_nodes("nccl-ring", p, topo, err);
}

/* Channel k's ring: node by node, each node entered and left on the same
 * rails as its neighbours (the top of the file). */
static void ring_order(uint32_t k, uint32_t R, uint32_t G, uint32_t *order)
{
    if (G <= 1 || R <= G) {
        /* One node (or none): its GPUs from a = k mod n downwards. */
        uint32_t n = R, a = k % n;
        for (uint32_t i = 0; i < n; i++)
            order[i] = (a + n - i) % n;
        return;
    }
    uint32_t nodes = R / G, a = k % G, b = (a + 1) % G, at = 0;
    for (uint32_t n = 0; n < nodes; n++)
        for (uint32_t i = 0; i < G; i++)
            order[at++] = n * G + (n % 2 == 0 ? (a + G - i) % G : (b + i) % G);
}

/* Broadcast and reduce (src/device/broadcast.h and reduce.h, runRing):
 * each channel's ring as a chain, from the root round to the rank before
 * it (broadcast: root sends, the middle ranks recvCopySend, the last
 * recv), or from the rank after the root round to the root (reduce: the
 * first sends, the middle recvReduceSend, the root recvReduceCopy); the
 * channel's chunks follow each other down the chain, chunk c leaving
 * position i at step c + i. Chunk c > 0 runs behind chunk c - 1 in the
 * protocol's pipeline (piped). Chunk slots: channel k's chunk c is
 * k L + c. */
static void emit_nccl_chain(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const nccl_ring_state *st = s->state;
    uint32_t C = st->C, R = st->R, L = st->L;
    bool red = s->req.op == TC_OP_REDUCE;
    uint32_t lo = step + 1 >= L ? step + 1 - L : 0, hi = step < R - 2 ? step : R - 2;
    for (uint32_t k = 0; k < C; k++) {
        const uint32_t *order = st->order + (size_t)k * R;
        for (uint32_t i = lo; i <= hi; i++) {
            uint32_t c = step - i;
            add_chunk(x, order[i], order[i + 1], s->blk_bytes, red, k, k * L + c, c > 0);
        }
    }
}

/* Step st of the schedule: every channel's ring takes one step of its
 * current loop. */
static tc_status emit_nccl_ring(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const nccl_ring_state *st = s->state;
    uint32_t C = st->C, R = st->R, L = st->L;
    tc_op op = s->req.op;
    if (op == TC_OP_BROADCAST || op == TC_OP_REDUCE) {
        emit_nccl_chain(s, step, x);
        return x->oom ? TC_EINTERNAL : TC_OK;
    }
    uint32_t per = op == TC_OP_ALLREDUCE ? 2 * (R - 1) : R - 1;
    uint32_t l = step / per, t = step % per;
    for (uint32_t k = 0; k < C; k++) {
        const uint32_t *order = st->order + (size_t)k * R;
        for (uint32_t i = 0; i < R; i++) {
            uint32_t src = order[i], dst = order[(i + 1) % R], slot;
            bool red;
            if (op == TC_OP_ALLREDUCE) {
                /* positions own chunks: i sends chunk i-1-t, then i-(t-(R-1)) */
                uint32_t j = t < R - 1 ? (i + 2 * R - 1 - t) % R : (i + 2 * R - (t - (R - 1))) % R;
                red = t < R - 1;
                slot = (k * L + l) * R + j;
            } else {
                /* blocks belong to ranks: the owner at position j */
                uint32_t j = op == TC_OP_REDUCESCATTER ? (i + 2 * R - 1 - t) % R : (i + R - t) % R;
                red = op == TC_OP_REDUCESCATTER;
                slot = order[j] * (C * L) + k * L + l;
            }
            add_chunk(x, src, dst, s->blk_bytes, red, k, slot, l > 0); /* later loops run behind the first */
        }
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

/* minCTAs, lowered to maxCTAs where above it (src/init.cc:1655-1658). */
static uint32_t min_ctas(const tc_coll_req *req)
{
    return req->max_ctas && req->min_ctas > req->max_ctas ? req->max_ctas : req->min_ctas;
}

uint32_t tc_nccl_cta_bounds(const tc_coll_req *req, uint32_t C)
{
    if (req->max_ctas && C > req->max_ctas)
        C = req->max_ctas;
    uint32_t mc = min_ctas(req);
    return C < mc ? mc : C;
}

/* The smaller of NCCL_MAX_NCHANNELS and maxCTAs truncates C, the larger
 * of NCCL_MIN_NCHANNELS and minCTAs duplicates it (src/graph/connect.cc:
 * 461-470); at most MAXCHANNELS = 32. */
uint32_t tc_nccl_channel_bounds(const tc_coll_req *req, uint32_t C)
{
    uint32_t mx = req->max_channels, mn = req->min_channels, mc = min_ctas(req);
    if (req->max_ctas && (!mx || req->max_ctas < mx))
        mx = req->max_ctas;
    if (mc > mn)
        mn = mc;
    if (mx && C > mx)
        C = mx;
    if (mn && C < mn)
        C = mn;
    return C > 32 ? 32 : C;
}

/* Twice the channels of NCCL's ring graph (doubled at run time:
 * connect.cc:443): on one node its search's (one_node_graph), across nodes
 * its search's too (net_graph), *net_speed (if given) that graph's speed
 * across nodes, else 0; on a bare shape without links twice the rails, or
 * twice the NICs of a node (nics=), or twice the node size without
 * either. */
static uint32_t default_channels(const tc_topo *topo, uint32_t R, uint32_t G, double *net_speed)
{
    uint32_t n, nodes = R > G ? R / G : 1;
    double b;
    if (net_speed)
        *net_speed = 0;
    if (one_node_graph(topo, nodes, G, &n, &b))
        return 2 * n;
    if (net_graph(topo, nodes, G, &n, &b)) {
        if (net_speed)
            *net_speed = b;
        return 2 * n;
    }
    return topo && topo->rails ? 2 * topo->rails : topo && topo->nics ? 2 * topo->nics : 2 * (G > 1 ? G : 1);
}

/* Whether NCCL's communicator of R ranks in nodes of G GPUs on t has
 * CollNet (topocc: a Clos whose switches reduce, sharp=1, across at least
 * 2 nodes, NCCL_COLLNET_NODE_THRESHOLD, of at most 8 GPUs, above which
 * NCCL turns CollNet off: src/init.cc:1189-1200) and widens its channels
 * by half for it: where the CollNet graph's per-channel bandwidth inside
 * the node is above the one across it (connect.cc:447-452:
 * "collNetGraph->bwIntra > collNetGraph->bwInter && comm->nRanks >
 * comm->nNodes"; tc_nccl_collnet_graph): the search's second pass raised
 * bwIntra, as on DGX A100 nodes (30 over 24 GB/s), not on DGX H100 nodes
 * (48 and 48). Every algorithm the communicator runs then has those
 * channels (comm->collChannels, connect.cc:472). */
bool tc_nccl_collnet_widens(const tc_coll_req *req, const tc_topo *t, uint32_t R, uint32_t G)
{
    if (!t || !t->sharp || t->kind != TC_TOPO_CLOS || G < 2 || G > 8 || t->node_size < 2 || R <= G || R % G)
        return false;
    double nch, intra, inter;
    tc_nccl_collnet_graph(req, t, &nch, &intra, &inter);
    return intra > inter;
}

/* Channels: the request's, or the communicator's (default_channels, half
 * as many again with CollNet: tc_nccl_collnet_widens); at most 32
 * (MAXCHANNELS, device.h:54); then fewer for small messages as NCCL
 * does. */
static uint32_t channels_for(const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G, bool tree)
{
    uint32_t C = req->channels;
    if (!C) {
        double speed;
        C = default_channels(topo, R, G, &speed);
        if (tc_nccl_collnet_widens(req, topo, R, G))
            C += C / 2;
        /* "Use 4 compute channels per search channel to reach peak BW on
         * <8 PPN": on Hopper (compute capability 9.0 exactly) across nodes,
         * where the ring graph's speed is above 45 GB/s and fewer than 16
         * channels run (connect.cc:456-459) */
        if (topo && topo->arch == TC_ARCH_HOPPER && C < 16 && speed > 45.0)
            C *= 2;
    }
    C = tc_nccl_channel_bounds(req, C);
    tc_proto p = req->proto ? req->proto : TC_PROTO_SIMPLE;
    double nt = p == TC_PROTO_LL128 ? 640 : 512;
    /* threadThresholds: Ring LL 8 x ranks, Tree LL 8, LL128 8, Simple 64 */
    double th = p == TC_PROTO_LL ? (tree ? 8.0 : 8.0 * R) : p == TC_PROTO_LL128 ? 8 : 64;
    while (C >= 2 && req->bytes < C * nt * th)
        C--;
    return C ? C : 1;
}

/* The share of the graph's channels a run uses, at most 1: NCCL's model
 * counts the graph's channels (tuning.cc:178-186), a run may use fewer
 * (small messages: enqueue.cc:1588-1593; NCCL_MAX_NCHANNELS, MAX_CTAS)
 * and a channel is one thread block, whose LL and LL128 lines its own
 * threads store; more channels than the graph's (MIN_CTAS) share the
 * graph's rate. NCCL also halves a block's threads below one channel's
 * threshold (enqueue.cc:1597-1602), where a thread stores a few lines:
 * latency, not a rate, and not modelled. */
static double run_share(const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G, bool tree)
{
    double c = (double)channels_for(req, topo, R, G, tree) / graph_channels(req, topo, R, G);
    return c < 1 ? c : 1;
}

/* Twice the channels of NCCL's graph, which its model's bandwidths count
 * (graphs[a]->nChannels, before connect.cc:443 doubles them for the run):
 * not widened for CollNet, nor changed by NCCL_MIN/MAX_NCHANNELS and
 * minCTAs/maxCTAs, which change the channels run (comm->nChannels,
 * connect.cc:447-452, 465-469), not the graph's. */
static uint32_t graph_channels(const tc_coll_req *req, const tc_topo *topo, uint32_t R, uint32_t G)
{
    uint32_t C = req->channels ? req->channels : default_channels(topo, R, G, NULL);
    return C > 32 ? 32 : C;
}

uint32_t tc_nccl_channels_graph(const tc_coll_req *req, const tc_topo *topo)
{
    uint32_t G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > req->p)
        G = req->p;
    return graph_channels(req, topo, req->p, G);
}

uint32_t tc_nccl_channels_full(const tc_coll_req *req, const tc_topo *topo)
{
    uint32_t G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > req->p)
        G = req->p;
    tc_coll_req full = *req;
    full.bytes = INFINITY;
    return channels_for(&full, topo, req->p, G, false);
}

bool tc_nccl_ring_graph(const tc_topo *t, uint32_t R, uint32_t G, uint32_t *nch, double *bw, uint32_t *run)
{
    if (G < 1 || R < G || R % G)
        return false;
    uint32_t nodes = R / G;
    if (!one_node_graph(t, nodes, G, nch, bw) && !net_graph(t, nodes, G, nch, bw))
        return false;
    if (run) {
        tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_NCCL_RING, .p = R, .bytes = INFINITY, .elt = 4};
        *run = channels_for(&req, t, R, G, false);
    }
    return true;
}

static tc_status nccl_chain_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err);

/* bytes in the largest binary unit it reaches, rounded down (a limit
 * printed so is never above the limit) */
static const char *size_floor(double b, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int i = 0;
    while (b >= 1024.0 && i < 6) {
        b /= 1024.0;
        i++;
    }
    if (b == floor(b))
        snprintf(buf, len, "%.0f%s", b, names[i]);
    else
        snprintf(buf, len, "%.2f%s", floor(b * 100) / 100, names[i]);
    return buf;
}

tc_status tc_nccl_too_large(const tc_coll_req *req, const char *nccl_algo, tc_proto proto, double loops,
                            double loop_bytes, const char *limit, tc_err *err)
{
    double most = loops * loop_bytes;
    char b1[32], b2[32];
    return tc_fail(err, TC_EINVAL,
                   "%s of %.0f B (%s) is more than topocc models with NCCL's %s algorithm and %s protocol: at most "
                   "%.0f B (%s) for %s with it (%s)",
                   tc_op_name(req->op), req->bytes, size_floor(req->bytes, b1, sizeof b1), nccl_algo,
                   tc_proto_name(proto), most, size_floor(most, b2, sizeof b2), tc_op_name(req->op), limit);
}

tc_status tc_nccl_too_many_chunks(const tc_coll_req *req, const char *nccl_algo, tc_proto proto, double u, double q,
                                  tc_err *err)
{
    /* ceil(bytes / (u q)) loops of u chunks: at most floor(lim / u) loops */
    char b[32], limit[64];
    snprintf(limit, sizeof limit, "2^31 chunks of %s", size_floor(q, b, sizeof b));
    return tc_nccl_too_large(req, nccl_algo, proto, floor((UINT32_MAX / 2) / u), u * q, limit, err);
}

static tc_status nccl_ring_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    if (req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE)
        return nccl_chain_build(req, topo, s, err);
    uint32_t R = req->p, G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > R)
        G = R;
    s->proto = req->proto ? req->proto : TC_PROTO_SIMPLE;
    uint32_t C = channels_for(req, topo, R, G, false);
    double Q = chunk_bytes(s->proto, req->buffsize);
    /* Loops per channel: the slice over R chunks of at most Q (all-reduce),
     * or each rank's part of the slice over chunks of at most Q. */
    double per_channel = req->bytes / C;
    double loops = req->op == TC_OP_ALLREDUCE ? ceil(per_channel / (R * Q)) : ceil(per_channel / R / Q);
    if (loops < 1)
        loops = 1;
    uint64_t nblk = (uint64_t)C * (uint64_t)loops * R;
    if (nblk > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, "Ring", s->proto, (double)C * R, Q, err);
    nccl_ring_state *st = ring_state_new(s, C, R, (uint32_t)loops);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t k = 0; k < C; k++)
        ring_order(k, R, G, st->order + (size_t)k * R);
    ring_sched_set(s, req, topo, R, G, C, (uint32_t)nblk);
    /* A rank's chunks leave its connection in order (flow under NCCL's
     * credits: docs/MODEL.md, "NCCL's ring and protocols", Flow). */
    s->wire_in_order = true;
    if (R == 1) {
        s->base_s = 0; /* nothing to communicate: no collective to launch over the network */
        return TC_OK;
    }
    uint32_t per = req->op == TC_OP_ALLREDUCE ? 2 * (R - 1) : R - 1;
    /* The first loop, then the others: the same transfers, but the later
     * loops run behind the first in the protocol's pipeline (no step
     * latency of their own, docs/MODEL.md), so the flow simulator must not
     * take one for a repeat of the other. */
    for (int part = 0; part < 2; part++) {
        uint32_t repeat = part == 0 ? per : (st->L - 1) * per;
        if (!repeat)
            continue;
        tc_phase *ph = tc_sched_add_phase(s, repeat, TC_PAT_GENERIC, 0, s->blk_bytes,
                                          part == 0 ? "ring channels, loop 1" : "ring channels, loops 2..");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        /* Every rank sends one chunk per channel and receives one. */
        ph->fanout = ph->fanin = C;
        ph->rank_bytes = ph->rank_bytes_in = C * s->blk_bytes;
        ph->blk_xfers = (uint64_t)C * R; /* a chunk each */
    }
    return TC_OK;
}

/* Broadcast and reduce: C chains (emit_nccl_chain) of L chunks each, the
 * buffer cut over the channels and each channel's part into chunks of one
 * FIFO step (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1,
 * src/include/collectives.h:19-22: Simple's chunk is NCCL_BUFFSIZE / 8, a
 * quarter of the ring's; LL and LL128 as the ring's), so a Simple
 * connection holds 8 chunks in flight where the ring's holds 2. */
static tc_status nccl_chain_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    uint32_t R = req->p, G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > R)
        G = R;
    if (req->root >= R)
        return tc_fail(err, TC_EINVAL, "nccl-ring: root %u is not a rank (0 .. %u)", req->root, R - 1);
    s->proto = req->proto ? req->proto : TC_PROTO_SIMPLE;
    uint32_t C = channels_for(req, topo, R, G, false);
    double Q = chunk_bytes(s->proto, req->buffsize);
    if (s->proto == TC_PROTO_SIMPLE)
        Q /= 4; /* one step, not the ring's 4 */
    double L = ceil(req->bytes / C / Q);
    if (L < 1)
        L = 1;
    /* LL and LL128 forward each line as it arrives (recvCopySend and
     * recvReduceSend poll each line's flag, src/device/prims_ll.h,
     * prims_ll128.h): a chunk does not wait whole at every rank of the
     * chain. As the tree's (nccl_tree_build), the channel's part is cut
     * into pieces of at least one warp's store (warp_piece), up
     * to 8 a hop, so that the pipeline's fill costs pieces, not chunks;
     * at most about 2^21 transfers in all, which bounds flow's work on
     * long chains (the pieces' count is topocc's, assumed). */
    if (s->proto != TC_PROTO_SIMPLE && R > 1)
        L = fmax(L, fmin(fmin(8.0 * (R - 1), ceil(req->bytes / C / warp_piece(s->proto))),
                         floor(2097152.0 / ((double)C * (R - 1)))));
    if ((double)C * L > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, "Ring", s->proto, C, Q, err);
    nccl_ring_state *st = ring_state_new(s, C, R, (uint32_t)L);
    uint32_t *ring = malloc((size_t)R * sizeof *ring);
    if (!st || !ring) {
        free(ring);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t k = 0; k < C; k++) {
        ring_order(k, R, G, ring);
        uint32_t at = 0;
        while (ring[at] != req->root)
            at++;
        /* broadcast: the root first; reduce: the rank after it first, the root last */
        uint32_t first = req->op == TC_OP_REDUCE ? at + 1 : at;
        for (uint32_t i = 0; i < R; i++)
            st->order[(size_t)k * R + i] = ring[(first + i) % R];
    }
    free(ring);
    /* the latency path: channel 0's chain, once */
    if (!(s->lat_pairs = malloc(2 * (size_t)R * sizeof *s->lat_pairs)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i + 1 < R; i++) {
        s->lat_pairs[2 * i] = st->order[i];
        s->lat_pairs[2 * i + 1] = st->order[i + 1];
    }
    s->nlat_pairs = R - 1;
    s->lat_once = true;
    s->send_in_order = true;
    s->pipe_hops = R - 1;
    s->pipe_chunks = (uint32_t)L;
    s->pipe_lanes = C;
    ring_sched_set(s, req, topo, R, G, C, (uint32_t)(C * L));
    if (s->proto == TC_PROTO_SIMPLE) {
        s->credit_steps = 8;
        s->credit_steps_inter = 16;
    }
    if (R == 1) {
        s->base_s = 0;
        return TC_OK;
    }
    /* Fill, steady state, drain: a step's active positions are lo..hi
     * (emit_nccl_chain); only the steady steps after chunk 0 has left the
     * chain (every position active, every chunk piped) repeat. A rank's
     * chunks in a step are the channels in which it holds an active
     * position: counted as positions join (fill) and leave (drain), with
     * a histogram of the counts for the largest, O(C) a step. */
    uint32_t total = st->L + R - 2;
    uint32_t *cnt = calloc(2 * ((size_t)R + C + 1), sizeof *cnt);
    if (!cnt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t *co = cnt, *ci = cnt + R, *ho = cnt + 2 * (size_t)R, *hi_ = ho + C + 1, mo = 0, mi = 0;
    ho[0] = hi_[0] = R;
    tc_status ret = TC_OK;
    uint32_t plo = 0, phi = 0;
    for (uint32_t t = 0; t < total && ret == TC_OK;) {
        uint32_t lo = t + 1 >= st->L ? t + 1 - st->L : 0, hi = t < R - 2 ? t : R - 2;
        /* position hi joins as a sender (hi + 1 as a receiver) while the
         * chain fills; position lo - 1 leaves (lo as a receiver) as it drains */
        for (int pass = 0; pass < 2; pass++) {
            bool join = pass == 0;
            if (join ? t > R - 2 : lo == 0)
                continue;
            uint32_t ps = join ? hi : lo - 1;
            for (uint32_t k = 0; k < C; k++) {
                const uint32_t *order = st->order + (size_t)k * R;
                uint32_t *c2[2] = {&co[order[ps]], &ci[order[ps + 1]]};
                uint32_t *h2[2] = {ho, hi_}, *m2[2] = {&mo, &mi};
                for (int w = 0; w < 2; w++) {
                    h2[w][*c2[w]]--;
                    *c2[w] = join ? *c2[w] + 1 : *c2[w] - 1;
                    h2[w][*c2[w]]++;
                    if (*c2[w] > *m2[w])
                        *m2[w] = *c2[w];
                    while (*m2[w] > 0 && h2[w][*m2[w]] == 0)
                        --*m2[w];
                }
            }
        }
        uint32_t run = lo == 0 && hi == R - 2 && t > R - 2 ? st->L - t : 1;
        tc_phase *ph = tc_sched_add_phase(s, run, TC_PAT_GENERIC, 0, s->blk_bytes,
                                          req->op == TC_OP_REDUCE ? "chain reduce channels" : "chain broadcast channels");
        if (!ph) {
            ret = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        tc_phase_set_fan(ph, mo, mi, s->blk_bytes);
        ph->blk_xfers = (uint64_t)C * (hi - lo + 1);
        /* a step's transfers are positions lo .. hi, each of blk_bytes: the
         * fill adds positions, the drain takes them away (tc_phase.nest) */
        if (t > 0)
            ph->nest = lo == plo && hi >= phi ? 1 : hi == phi && lo >= plo ? -1 : 0;
        plo = lo, phi = hi;
        t += run;
    }
    free(cnt);
    return ret;
}

const tc_algo_impl tc_impl_nccl_ring = {nccl_ring_valid, nccl_ring_build};

/* ---- nccl: NCCL's choice of protocol ---- */

/* The LL128 enable rule (tuning.cc:305-317): LL128 is on by default for
 * compute capabilities 7.0, 8.0 and 9.0 only (v2.21.5-1 leaves it off on
 * Blackwell), with NVLink inside the node (the nodes here have it) and,
 * across nodes, the graph's GPU-NIC path (typeInter) at most PXB, or PXN
 * from Hopper (:308; nic_path=). On one node NCCL removes the NICs
 * (src/graph/paths.cc:678-680) and the path stays PIX (search.cc:870). An
 * explicit mask (NCCL_PROTO) bypasses the rule, as in NCCL. */
static uint8_t default_mask(const tc_topo *t, uint32_t nodes)
{
    /* EFA through aws-ofi-nccl's SENDRECV protocol without 128-byte
     * in-order delivery (p4d, p4de): the plugin sets NCCL_PROTO=simple
     * unless NCCL_PROTO is set (aws/aws-ofi-nccl v1.9.2-aws,
     * src/platform-aws.c configure_nccl_proto and its caller; p4d and p4de
     * default to SENDRECV in platform_data_map, p5 to RDMA, which keeps
     * LL and LL128: its pull request #280). */
    if (t && t->transport == TC_TRANSPORT_EFA_SENDRECV)
        return 1u << TC_PROTO_SIMPLE;
    uint8_t m = 1u << TC_PROTO_LL | 1u << TC_PROTO_SIMPLE;
    bool path_ok = true;
    if (t && nodes > 1) {
        int level = tc_nic_path_level((tc_nic_path)t->nic_path);
        path_ok = level <= 4 /* PATH_PXB */ || (arch_row(t) == 2 /* Hopper, or unknown */ && level <= 5 /* PATH_PXN */);
    }
    if ((!t || t->arch != TC_ARCH_BLACKWELL) && path_ok)
        m |= 1u << TC_PROTO_LL128;
    return m;
}

tc_proto tc_nccl_choose(const tc_coll_req *req, const tc_topo *topo, tc_algo *algo, double *pred_s)
{
    if (req->op == TC_OP_ALLTOALL || req->op == TC_OP_SENDRECV) {
        /* grouped send/recv: nccl-a2a, the protocol of its pieces */
        tc_proto pr = TC_PROTO_SIMPLE;
        double t_us = tc_nccl_a2a_time_us(req, topo, &pr);
        if (algo)
            *algo = TC_ALGO_NCCL_A2A;
        if (pred_s)
            *pred_s = t_us * 1e-6;
        return pr;
    }
    uint32_t R = req->p, G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > R)
        G = R;
    uint32_t nodes = R > G ? R / G : 1;
    /* ncclTopoTuneModel's steps (tuning.cc:158-163): broadcast and reduce
     * nRanks and nNodes */
    bool chain = req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE;
    double nsteps = req->op == TC_OP_ALLREDUCE ? 2.0 * (R - 1) : chain ? R : R - 1;
    double ninter = nodes > 1 ? (req->op == TC_OP_ALLREDUCE ? 2.0 * nodes : chain ? nodes : nodes - 1.0) : 0;
    double bus = graph_bw(topo, nodes, G);
    tc_coll_req full = *req;
    full.bytes = INFINITY;
    /* the graph's search channels bound the bandwidths; the channels run
     * (comm->nChannels) decide the ring's plateau below */
    double search = graph_channels(req, topo, R, G) / 2.0, run = channels_for(&full, topo, R, G, false);
    if (search < 1)
        search = 1;
    int row = nodes == 1 ? arch_row(topo) : 0, col = nodes <= 2 ? (int)nodes - 1 : 2, arow = arch_row(topo);
    double ppn = (double)R / nodes;
    uint8_t mask = req->proto_mask ? req->proto_mask : default_mask(topo, nodes);
    uint8_t amask = req->algo_mask ? req->algo_mask : 127;
    /* NCCL's enable rules (tuning.cc:284-300): NVLSTree needs several
     * nodes; without CollNet (a fabric that reduces: sharp=1; NCCL also
     * turns it off on nodes of more than 8 GPUs, init.cc:1196-1200) CollNet
     * is off and so is NVLS across nodes, and where that leaves none of
     * Ring, Tree, NVLS and NVLSTree both Ring and Tree are on again. */
    if (nodes == 1)
        amask &= (uint8_t)~8u;
    if (!(topo && topo->sharp) || ppn > 8) {
        amask &= (uint8_t)~(32u | 64u);
        if (nodes > 1)
            amask &= (uint8_t)~4u;
        if (!(amask & 15u))
            amask |= 3u;
    }
    /* what the operation and the protocols leave available (a bandwidth of
     * 0 in NCCL's model, not an algorithm turned off) */
    if (R < 2 || chain)
        amask &= 1; /* broadcast and reduce: Ring only (tuning.cc:165-166) */
    else if (req->op != TC_OP_ALLREDUCE)
        amask &= 1 | 4 | 16 | (req->op == TC_OP_ALLGATHER || req->op == TC_OP_REDUCESCATTER ? 32 : 0);
    /* NCCL's tree, NVLSTree and CollNetChain are all-reduce only; NVLS and
     * CollNetDirect also gather and scatter (tuning.cc:166-169) */
    if ((req->op != TC_OP_ALLGATHER && req->op != TC_OP_REDUCESCATTER) || R < 2)
        amask &= ~16u;   /* PAT is all-gather and reduce-scatter only */
    tc_proto best = TC_PROTO_NONE;
    tc_algo best_a = TC_ALGO_NCCL_RING;
    double best_t = INFINITY;
    /* Tree (algorithm 0) before Ring (1) on a tie, LL before LL128 before
     * Simple (src/enqueue.cc:1484-1539). */
    for (int a = 1; a >= 0; a--) {
        bool tree = a == 1;
        if (!(amask & (tree ? 2 : 1)))
            continue;
        for (int p = TC_PROTO_LL; p <= TC_PROTO_SIMPLE; p++) {
            if (!(mask & 1u << p))
                continue;
            int i = p - TC_PROTO_LL;
            double b, lat;
            if (tree) {
                b = fmin(tree_graph_bw(topo, nodes, G) * .92, search * tree_per_ch[arow][col]); /* :182 */
                if (p == TC_PROTO_LL)
                    b = fmin(b / 3.8, ll_max_bw[row][col]);                        /* :183 */
                else if (p == TC_PROTO_LL128)
                    b = fmin(b * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), search * tree_ll128_per_ch[arow][col]);
                if (tree_pattern_tree(topo, nodes, G))
                    b *= TREE_PATTERN_EFF;
                lat = tree_base_us[i] + 2 * ((floor(ppn) - 1) * tree_nvlink_us[i] + log2i(nodes) * tc_nccl_model_net_lat_us(topo, (tc_proto)p, tree_net_us[i]));
                b *= .5;                                                          /* :213-219 */
                int ls = log2i(req->bytes / 64);
                if (ls < 23)
                    b *= tree_corr[i][ls];                                        /* :435 */
            } else {
                b = bus;
                if (p == TC_PROTO_LL)
                    b = fmin(ll_max_bw[row][col], b * .5);                        /* :180 */
                else if (p == TC_PROTO_LL128)
                    b = fmin(b * (ppn < 2 ? 0.7 : 0.92), search * ll128_per_ch[arow]); /* :181 */
                if (chain) /* one step's hardware latency where the ring graph's channels are the same
                            * (sameChannels, :233-235; assumed: the search's first, perfect, ring) */
                    lat = base_lat_us[i] + (nodes > 1 ? transport_net_lat_us(topo, (tc_proto)p, hw_net_us[i])
                                                      : hw_nvlink_us[i]); /* hwLat alone: no latencyInter */
                else
                    lat = base_lat_us[i] + (nsteps - ninter) * ring_intra_us((tc_proto)p, nodes) +
                          ninter * tc_nccl_model_net_lat_us(topo, (tc_proto)p, hw_net_us[i]); /* :241-248 */
                b *= R / nsteps;                                                  /* :213-219 */
                if (p == TC_PROTO_SIMPLE && nodes > 1 && req->op == TC_OP_ALLREDUCE &&
                    req->bytes / (run * R) >= 64) /* comm->nChannels: all of them */
                    lat *= arow == 0 ? 1.9 : 1.4; /* minCompCap < 80 (Volta): 1.9, :437-440 */
            }
            double t_us = lat + req->bytes / (1000 * b);                          /* :443 */
            if (t_us < best_t) {
                best_t = t_us;
                best = (tc_proto)p;
                best_a = tree ? TC_ALGO_NCCL_TREE : TC_ALGO_NCCL_RING;
            }
        }
    }
    /* CollNetDirect (algorithm 2) and CollNetChain (3), Simple only, where
     * the fabric reduces (sharp=1: NCCL's CollNet plugin present and
     * enabled), after Tree and Ring: they win only strictly faster. */
    for (int a = 0; a < 2 && (mask & 1u << TC_PROTO_SIMPLE); a++) {
        if (!(amask & (a ? 64 : 32)))
            continue;
        double t_us = tc_nccl_collnet_time_us(req, topo, a == 0);
        if (t_us < best_t) {
            best_t = t_us;
            best = TC_PROTO_SIMPLE;
            best_a = a ? TC_ALGO_NCCL_COLLNET_CHAIN : TC_ALGO_NCCL_COLLNET_DIRECT;
        }
    }
    /* NVLS (algorithm 4) and NVLSTree (5), Simple only, after Tree and
     * Ring: they win only strictly faster (enqueue.cc:1484-1539). */
    for (int a = 0; a < 2 && (mask & 1u << TC_PROTO_SIMPLE) && !req->nvls_off; a++) {
        if (!(amask & (a ? 8 : 4)))
            continue;
        double t_us = tc_nccl_nvls_time_us(req, topo, a == 1);
        if (t_us < best_t) {
            best_t = t_us;
            best = TC_PROTO_SIMPLE;
            best_a = a ? TC_ALGO_NCCL_NVLS_TREE : TC_ALGO_NCCL_NVLS;
        }
    }
    /* PAT (algorithm 6 of v2.23.4-1, Simple only), last: it wins only
     * strictly faster (tuning.cc:171-193, 276-281 at v2.23.4-1) */
    if ((amask & 16) && (mask & 1u << TC_PROTO_SIMPLE)) {
        double t_us = tc_nccl_pat_time_us(req, topo);
        if (t_us < best_t) {
            best_t = t_us;
            best = TC_PROTO_SIMPLE;
            best_a = TC_ALGO_NCCL_PAT;
        }
    }
    const uint8_t all_protos = 1u << TC_PROTO_LL | 1u << TC_PROTO_LL128 | 1u << TC_PROTO_SIMPLE;
    if (best == TC_PROTO_NONE && !(req->algo_mask == 1 && req->proto_mask == all_protos)) {
        /* nothing available (NVLS where the node cannot reduce, an
         * operation none of the allowed algorithms runs, NVLS or PAT with
         * Simple excluded): NCCL sets the ring's bandwidths for every
         * protocol (tuning.cc:322-333, comm->ringbdw, set before the
         * protocols' enable rule) */
        tc_coll_req ring = *req;
        ring.algo_mask = 1;
        ring.proto_mask = all_protos;
        return tc_nccl_choose(&ring, topo, algo, pred_s);
    }
    if (algo)
        *algo = best_a;
    if (pred_s)
        *pred_s = best_t * 1e-6;
    return best;
}

static tc_status nccl_tree_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err);

static tc_status nccl_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    tc_coll_req r = *req;
    tc_algo a = TC_ALGO_NCCL_RING;
    tc_coll_req q = *req;
    if (req->proto)
        q.proto_mask = (uint8_t)(1u << req->proto);
    r.proto = tc_nccl_choose(&q, topo, &a, NULL);
    if (!r.proto)
        return tc_fail(err, TC_EINVAL, "nccl: no protocol is allowed (proto= excludes LL, LL128 and Simple)");
    if (a == TC_ALGO_NCCL_NVLS || a == TC_ALGO_NCCL_NVLS_TREE || a == TC_ALGO_NCCL_PAT || a == TC_ALGO_NCCL_A2A ||
        a == TC_ALGO_NCCL_COLLNET_CHAIN || a == TC_ALGO_NCCL_COLLNET_DIRECT) {
        if (a == TC_ALGO_NCCL_A2A)
            r.proto = req->proto; /* its own rule unless proto= says */
        return tc_algo_impl_of(a)->build(&r, topo, s, err);
    }
    return a == TC_ALGO_NCCL_TREE ? nccl_tree_build(&r, topo, s, err) : nccl_ring_build(&r, topo, s, err);
}

/* nccl: the ring's operations, and all-to-all and sendrecv (nccl-a2a). */
static bool nccl_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (op == TC_OP_ALLTOALL || op == TC_OP_SENDRECV)
        return tc_algo_impl_of(TC_ALGO_NCCL_A2A)->valid(op, p, topo, err);
    return nccl_whole_nodes("nccl", p, topo, err);
}

const tc_algo_impl tc_impl_nccl = {nccl_valid, nccl_build};

/* ---- the tree (nccl-tree) ----
 *
 * NCCL's tree all-reduce (src/device/all_reduce.h, runTreeSplit): inside a
 * node the GPUs form a chain from the GPU at the NIC (ncclTopoPreset,
 * src/graph/connect.cc:50-60); across nodes a double binary tree of nodes
 * (src/graph/trees.cc: ncclGetBtree, and ncclGetDtree's second tree, the
 * first mirrored for an even node count and shifted by one for an odd one),
 * channels [0, C/2) on the first tree and [C/2, C) on the second
 * (connect.cc:144-167). A node's top GPU talks to its parent node's top GPU
 * and takes its child nodes' (NCCL's TREE pattern; its BALANCED pattern
 * spreads the children over the first two GPUs). Each chunk is reduced up
 * and broadcast down, the two directions overlapping (runTreeSplit). Chunks
 * are one FIFO step: Simple 512 KiB, LL 32 KiB, LL128 576,000 B
 * (src/enqueue.cc:1722-1729). Channel k's chain starts at GPU k mod G, so
 * the channels spread over the NICs (rails). Pipelined as `dbtree`: a GPU at
 * depth d sends chunk m up at step m + D - d and down at step m + D + d (D
 * the deepest GPU): chunks + 2D - 1 steps. */

/* ncclGetBtree over n nodes: node r's parent and up to two children. */
static void btree(int n, int r, int *parent, int *c0, int *c1)
{
    *c0 = *c1 = -1;
    if (r == 0) {
        *parent = -1;
        int b = 1;
        while (b * 2 < n)
            b *= 2;
        *c1 = n > 1 ? b : -1;
        return;
    }
    int b = r & -r;
    int up = (r & ~b) | (b << 1);
    *parent = up >= n ? r & ~b : up;
    int h = b / 2;
    if (!h)
        return;
    *c0 = r - h;
    for (int hh = h; hh > 0; hh /= 2)
        if (r + hh < n) {
            *c1 = r + hh;
            break;
        }
}

/* Node r's parent and children in tree t (0 or 1) over n nodes. */
void tc_nccl_node_tree(int n, int t, int r, int *parent, int *c0, int *c1)
{
    if (t == 0) {
        btree(n, r, parent, c0, c1);
        return;
    }
    if (n % 2 == 0) {
        btree(n, n - 1 - r, parent, c0, c1);
        int *v[3] = {parent, c0, c1};
        for (int i = 0; i < 3; i++)
            if (*v[i] >= 0)
                *v[i] = n - 1 - *v[i];
    } else {
        btree(n, (r - 1 + n) % n, parent, c0, c1);
        int *v[3] = {parent, c0, c1};
        for (int i = 0; i < 3; i++)
            if (*v[i] >= 0)
                *v[i] = (*v[i] + 1) % n;
    }
}

typedef struct nccl_tree_state {
    uint32_t C, R, nch, D; /* channels, ranks, chunks per channel, deepest depth */
    int32_t *up;           /* C x R: parent rank, -1 at the root */
    int32_t *down;         /* C x R x 3: children, -1 none */
    uint32_t *depth;       /* C x R */
} nccl_tree_state;

static void tree_state_free(void *p)
{
    nccl_tree_state *st = p;
    if (!st)
        return;
    free(st->up);
    free(st->down);
    free(st->depth);
    free(st);
}

static bool nccl_tree_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (op != TC_OP_ALLREDUCE) {
        tc_fail(err, TC_EINVAL, "nccl-tree implements allreduce (NCCL's tree is all-reduce only)");
        return false;
    }
    return nccl_whole_nodes("nccl-tree", p, topo, err);
}

static tc_status emit_nccl_tree(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const nccl_tree_state *st = s->state;
    uint32_t C = st->C, R = st->R, n = st->nch, D = st->D;
    for (uint32_t k = 0; k < C; k++)
        for (uint32_t r = 0; r < R; r++) {
            size_t i = (size_t)k * R + r;
            uint32_t d = st->depth[i];
            /* up: chunk m = step - (D - d) */
            if (st->up[i] >= 0 && step + d >= D && step + d - D < n) {
                uint32_t m = step + d - D;
                add_chunk(x, r, (uint32_t)st->up[i], s->blk_bytes, true, k, k * n + m, m > 0);
            }
            /* down: chunk m = step - (D + d) */
            if (step >= D + d && step - D - d < n)
                for (int c = 0; c < 3; c++) {
                    int32_t ch = st->down[i * 3 + c];
                    if (ch < 0)
                        continue;
                    uint32_t m = step - D - d;
                    add_chunk(x, r, (uint32_t)ch, s->blk_bytes, false, k, k * n + m, m > 0);
                }
        }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status nccl_tree_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    uint32_t R = req->p, G = topo && topo->node_size > 1 ? topo->node_size : 1;
    if (G > R)
        G = R;
    uint32_t M = R / G;
    s->proto = req->proto ? req->proto : TC_PROTO_SIMPLE;
    /* the channels before the small-message cut decide the two halves */
    tc_coll_req full = *req;
    full.bytes = INFINITY;
    uint32_t Cfull = channels_for(&full, topo, R, G, true), C = channels_for(req, topo, R, G, true);
    /* one FIFO step per chunk: Simple's buffer over 8 slots */
    double Q = s->proto == TC_PROTO_SIMPLE ? (req->buffsize > 0 ? req->buffsize : 4194304.0) / 8
                                           : chunk_bytes(s->proto, req->buffsize);
    if (s->proto == TC_PROTO_LL128) {
        /* NCCL halves the LL128 tree chunk for small messages
         * (src/enqueue.cc:1762-1767). */
        double ppn = (double)R / M, steps = 1 + log2i(M) + 0.1 * ppn;
        while (req->bytes / (C * Q) < steps * 64 / ppn && Q > 131072)
            Q /= 2;
        while (req->bytes / (C * Q) < steps * 16 / ppn && Q > 32768)
            Q /= 2;
    }
    double nch = ceil(req->bytes / C / Q);
    if (nch < 1)
        nch = 1;
    /* LL and LL128 forward each line as it arrives: a chunk does not wait
     * whole at every GPU. The model cuts the channel's slice into pieces,
     * up to 8 per level of the tree, so that filling and draining the
     * pipeline costs a few pieces, not whole chunks; a piece is at least
     * what one warp stores at once (warp_piece). The pieces' count is
     * topocc's (assumed); NCCL has none. */
    if (s->proto != TC_PROTO_SIMPLE)
        nch = fmax(nch, fmin(8.0 * (G - 1 + log2i(M) + 1),
                             ceil(req->bytes / C / warp_piece(s->proto))));
    if ((double)C * nch > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, "Tree", s->proto, C, Q, err);
    nccl_tree_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = tree_state_free;
    st->C = C, st->R = R, st->nch = (uint32_t)nch;
    st->up = malloc((size_t)C * R * sizeof *st->up);
    st->down = malloc((size_t)C * R * 3 * sizeof *st->down);
    st->depth = malloc((size_t)C * R * sizeof *st->depth);
    if (!st->up || !st->down || !st->depth)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t D = 0;
    for (uint32_t k = 0; k < C; k++) {
        int t = k >= (Cfull + 1) / 2 && Cfull > 1;
        uint32_t a = k % G;
        int32_t *up = st->up + (size_t)k * R, *down = st->down + (size_t)k * R * 3;
        uint32_t *dep = st->depth + (size_t)k * R;
        for (uint32_t r = 0; r < R; r++)
            down[3 * r] = down[3 * r + 1] = down[3 * r + 2] = -1;
        /* node depths: walk each node up to the root */
        for (uint32_t x = 0; x < M; x++) {
            int par, c0, c1, nd = 0, y = (int)x;
            for (;;) {
                tc_nccl_node_tree((int)M, t, y, &par, &c0, &c1);
                if (par < 0)
                    break;
                y = par;
                nd++;
            }
            tc_nccl_node_tree((int)M, t, (int)x, &par, &c0, &c1);
            for (uint32_t i = 0; i < G; i++) {
                uint32_t g = x * G + (a + i) % G;
                dep[g] = (uint32_t)nd + i;
                if (dep[g] > D)
                    D = dep[g];
                if (i > 0)
                    up[g] = (int32_t)(x * G + (a + i - 1) % G);
                else
                    up[g] = par < 0 ? -1 : (int32_t)((uint32_t)par * G + a);
                int nc = 0;
                if (i + 1 < G)
                    down[3 * g + nc++] = (int32_t)(x * G + (a + i + 1) % G);
                if (i == 0) {
                    if (c0 >= 0)
                        down[3 * g + nc++] = (int32_t)((uint32_t)c0 * G + a);
                    if (c1 >= 0)
                        down[3 * g + nc++] = (int32_t)((uint32_t)c1 * G + a);
                }
            }
        }
    }
    st->D = D;
    s->nblk = s->nslots = C * st->nch;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_nccl_tree;
    s->channels = C;
    s->lanes = C;
    s->nccl_impl = TC_ALGO_NCCL_TREE;
    s->wire_in_order = true;
    uint32_t Cgraph = graph_channels(req, topo, R, G);
    double share = run_share(req, topo, R, G, true);
    proto_costs(s, topo, M, C, Cgraph, share);
    tree_costs(s, topo, M, C, Cgraph, share);
    if (topo && topo->kind == TC_TOPO_MULTIDC) {
        /* Every edge of channel 0's tree: where it crosses a long-haul
         * link the slowest path need not be the deepest (lat_tree). */
        s->lat_pairs = malloc(2 * (size_t)R * sizeof *s->lat_pairs);
        if (!s->lat_pairs)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        s->lat_tree = true;
        for (uint32_t r = 0; r < R; r++)
            if (st->up[r] >= 0) {
                s->lat_pairs[2 * s->nlat_pairs] = r;
                s->lat_pairs[2 * s->nlat_pairs + 1] = (uint32_t)st->up[r];
                s->nlat_pairs++;
            }
    }
    /* The latency path: channel 0's deepest GPU up to the root. */
    uint32_t deep = 0;
    for (uint32_t r = 0; r < R; r++)
        if (st->depth[r] > st->depth[deep])
            deep = r;
    if (!s->lat_tree && !(s->lat_pairs = malloc((2 * (size_t)st->depth[deep] + 2) * sizeof *s->lat_pairs)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (int32_t g = (int32_t)deep; !s->lat_tree && st->up[g] >= 0; g = st->up[g]) {
        s->lat_pairs[2 * s->nlat_pairs] = (uint32_t)g;
        s->lat_pairs[2 * s->nlat_pairs + 1] = (uint32_t)st->up[g];
        s->nlat_pairs++;
    }
    if (R == 1) {
        s->base_s = 0; /* nothing to communicate, as for the ring */
        return TC_OK;
    }
    /* Phases: the steps between the moments some depth's up or down
     * traffic starts, leaves its first chunk (piped from then on) or ends. */
    uint32_t total = st->nch + 2 * D - 1, nb = 0, n = st->nch;
    uint32_t *b = malloc((6 * ((size_t)D + 1) + 2) * sizeof *b);
    if (!b)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    b[nb++] = 0;
    b[nb++] = total;
    for (uint32_t d = 0; d <= D; d++) {
        uint32_t cand[6] = {D - d, D - d + 1, D - d + n, D + d, D + d + 1, D + d + n};
        for (int i = 0; i < 6; i++)
            if (cand[i] < total)
                b[nb++] = cand[i];
    }
    qsort(b, nb, sizeof *b, tc_cmp_u32);
    tc_xfers x;
    tc_xfers_init(&x, false);
    uint32_t *out = calloc(R, sizeof *out), *in = calloc(R, sizeof *in);
    tc_status rc = out && in ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i + 1 < nb && rc == TC_OK; i++) {
        if (b[i] == b[i + 1])
            continue;
        if (emit_nccl_tree(s, b[i], &x) != TC_OK) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        uint32_t fo = 0, fi = 0;
        for (size_t j = 0; j < x.n; j++) {
            if (++out[x.v[j].src] > fo)
                fo = out[x.v[j].src];
            if (++in[x.v[j].dst] > fi)
                fi = in[x.v[j].dst];
        }
        for (size_t j = 0; j < x.n; j++)
            out[x.v[j].src] = in[x.v[j].dst] = 0;
        size_t nx = x.n;
        tc_xfers_clear(&x);
        tc_phase *ph = tc_sched_add_phase(s, b[i + 1] - b[i], TC_PAT_GENERIC, 0, s->blk_bytes, "tree channels");
        if (!ph) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        tc_phase_set_fan(ph, fo ? fo : 1, fi ? fi : 1, s->blk_bytes);
        ph->blk_xfers = nx; /* a chunk each, between ranks (tc_sched_count need not emit it again) */
    }
    tc_xfers_free(&x);
    free(out);
    free(in);
    free(b);
    return rc;
}

const tc_algo_impl tc_impl_nccl_tree = {nccl_tree_valid, nccl_tree_build};
