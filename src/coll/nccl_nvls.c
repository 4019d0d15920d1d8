/*
 * nccl_nvls.c - NCCL's in-network all-reduce over NVLink SHARP: NVLS on one
 * node (nccl-nvls) and NVLSTree across nodes (nccl-nvls-tree), as NVIDIA/nccl
 * v2.21.5-1 (commit ab2b89c4) runs them (docs/MODEL.md, "NCCL's NVLS").
 *
 * The node switch is a participant of the schedule (tc_sched.nsw): it
 * receives the GPUs' chunks, reduces them and multicasts the result, as the
 * NVSwitch does for multimem.ld_reduce and multimem.st
 * (src/device/all_reduce.h:361-429, runNvls; :497-597 NVLSTree). The buffer
 * is cut over C channels (NCCL_NVLS_NCHANNELS, default 16:
 * src/transport/nvls.cc:232) and H heads (one per GPU on one node, one per
 * NIC across nodes: src/graph/search.cc:574-580, 899-902); each (channel,
 * head) runs a pipeline of chunks. For chunk m of head h in channel k:
 *  - every GPU of a node sends it to its node switch, which reduces (the
 *    head's ld_reduce pulls the shard from all GPUs);
 *  - the switch gives the node's sum to the head (ld_reduce's result);
 *  - across nodes the heads h of all nodes reduce up NCCL's double binary
 *    tree of nodes (channel k on tree k mod 2: src/graph/connect.cc:263-309)
 *    and broadcast the result down it;
 *  - each head stores the result to its node switch (multimem.st), which
 *    multicasts it to every GPU of the node.
 * A participant at depth d (root head 0, a head at node depth n at n, its
 * node's switch n + 1 going up and down, the node's GPUs n + 2) moves chunk
 * m up at step m + D - d and down at step m + D + d (D = deepest node + 2):
 * chunks + D + deepest node + 1 steps. Blocks: (k nch + m) H + h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

/* NCCL v2.21.5-1's NVLS constants (src/graph/tuning.cc, src/graph/search.cc,
 * src/enqueue.cc, src/transport/nvls.cc). */
#define NVLS_CHANNELS 16           /* NCCL_NVLS_NCHANNELS (nvls.cc:232) */
#define NVLS_CHUNK 131072.0        /* NCCL_NVLS_CHUNKSIZE (nvls.cc:233) */
#define NVLS_HW_LAT_US 25.0        /* hwLat[NVLINK][NVLS][Simple] = [NVLINK][NVLSTree] (tuning.cc:65-78) */
#define NVLSTREE_NET_LAT_US 14.0   /* hwLat[NET][NVLSTree][Simple] (tuning.cc:65-78) */
#define NVLS_NET_LAT_US 18.0       /* hwLat[NET][NVLS][Simple] (tuning.cc:65-78): NVLS across nodes over CollNet */
#define NVLS_ALG_RATIO (5.0 / 6.0) /* bus to algorithm bandwidth for NVLS and NVLSTree (tuning.cc:213-219) */
/* The speeds NCCL's graph search tries, GB/s: on SM90 and later
 * (search.cc:855-856), and before it (search.cc:850-851); the search takes
 * one or the other by ccMin >= 90 (search.cc:911-917). */
static const double speed_intra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double speed_inter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
static const double speed_intra_pre90[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double speed_inter_pre90[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};

/* The largest speed of the list at most cap (0 if none). */
static double speed_at_most(const double *v, size_t n, double cap)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] <= cap * (1 + 1e-12))
            return v[i];
    return 0;
}

double tc_nccl_speed_at_most(bool inter, bool sm90, double cap)
{
    if (!sm90)
        return inter ? speed_at_most(speed_inter_pre90, sizeof speed_inter_pre90 / sizeof *speed_inter_pre90, cap)
                     : speed_at_most(speed_intra_pre90, sizeof speed_intra_pre90 / sizeof *speed_intra_pre90, cap);
    return inter ? speed_at_most(speed_inter, sizeof speed_inter / sizeof *speed_inter, cap)
                 : speed_at_most(speed_intra, sizeof speed_intra / sizeof *speed_intra, cap);
}

/* What bounds a ring graph's channels at speed s (GB/s): a GPU's NVLink
 * (nvl, its total; 0: none), and across nodes the NICs (K of them, each
 * min(nic, pci): the NIC's speed and its PCIe link; K 0: none); at most
 * max_ch. SUB_ROUND keeps a link's bandwidth to 1e-3 GB/s (search.cc:67). */
typedef struct ring_limits {
    double nvl, nic, pci;
    uint32_t K, G, max_ch;
    uint32_t steps; /* the search's steps a channel, for its time budget (0: not modelled) */
} ring_limits;

/* The search's time budget, in steps (search.cc:301-304): a search for the
 * same channels on every node, and one for any. */
#define SEARCH_TIMEOUT_SAMECHANNELS 256u
#define SEARCH_TIMEOUT 16384u

/* The most a GPU sends over NVLink for c channels of a chain through G
 * GPUs whose last GPU sends nothing over NVLink (a ring with crossNic 1
 * sends it to its own NIC over PCIe; a tree's or CollNet's chain ends
 * there, its first GPU feeding the NIC), the last GPU rotating over the
 * GPUs as evenly as c allows: a GPU that is last in no channel carries
 * all c (c < G), and at best each is last floor(c / G) times, a bound
 * NCCL's search reaches (its chains go to the next or previous GPU
 * behind an NVSwitch, search.cc:276-293). A balanced tree's second GPU
 * reaching the NIC over NVLink (PXN, where it is not under the NIC's PCIe
 * switch) is not counted: topocc's nodes pair GPUs and NICs under a
 * switch, as a DGX A100 does. */
uint32_t tc_nccl_chain_nvl_channels(uint32_t c, uint32_t G)
{
    return G > 1 ? c - c / G : c;
}

/* Channels at speed s; cross: a ring that leaves through another NIC than
 * it came in (crossNic 1), whose entry and exit GPUs are each at their own
 * NIC, so a channel crosses the NVLink G - 1 times, the exit GPU's send
 * going to its NIC (tc_nccl_chain_nvl_channels); else the exit goes back
 * to the entry's NIC over NVLink (PXN; over PCIe where the exit GPU is
 * under that NIC's switch, which gives no more channels than crossNic 1,
 * tried too) and every GPU carries each channel both ways. On 16 H100
 * with a 400 Gb/s NIC each: at 48, 7 channels either way (8 would put 384
 * on the GPUs that end none); at 24, 16 through the next GPU's NIC (15 x
 * 24 a GPU): 16 x 24, what NCCL's compiled search gives, not 8 x 48. */
static uint32_t ring_fits_x(const ring_limits *L, double s, bool cross)
{
    uint32_t c = L->max_ch;
    if (L->K > 0) {
        double k = L->K * floor(fmin(L->nic, L->pci) / s + 1e-6);
        if (k < c)
            c = k > 0 ? (uint32_t)k : 0;
    }
    if (L->nvl > 0)
        while (c > 0 && (cross ? tc_nccl_chain_nvl_channels(c, L->G) : c) * s > L->nvl + 1e-6 * s)
            c--;
    return c;
}

/* ncclTopoCompute's ring search (src/graph/search.cc:860-1044 at
 * v2.21.5-1) where every channel takes its speed s from the limits alone:
 * pass 1 from the first speed of the list at most maxbw (:919-920),
 * keeping a graph only for a larger channels x speed (:379-383), stopping
 * once that reaches total (:945-946) or all max_ch channels are found (the
 * search's optimum, :465), lowering the speed while the next is above 0.49
 * of the best graph's (:991-994); the best graph's channels doubled where
 * its speed is at least 25 GB/s, except on SM90 and later where it is
 * below 50 with more than 4 channels, the speed divided accordingly
 * (ncclTopoDupChannels, :835-847); pass 2 raises the speed again, keeping
 * at least that many channels (:1009-1020). False where no speed fits. */
static bool ring_search(const double *v, size_t n, const ring_limits *L, double total, double maxbw, bool sm90,
                        uint32_t *nch, double *bw)
{
    size_t i = 0;
    while (v[i] > maxbw && i < n - 1)
        i++;
    uint32_t bn = 0, cap1 = UINT32_MAX, cap0 = UINT32_MAX;
    if (L->steps)
        cap1 = SEARCH_TIMEOUT_SAMECHANNELS / L->steps, cap0 = SEARCH_TIMEOUT / L->steps;
    bool same = false;
    double bb = 0;
    for (;;) {
        /* crossNic 0 first, then 1 where NCCL_CROSS_NIC=2 (its default,
         * search.cc:14) allows it and there are NICs to cross to
         * (search.cc:983-986): it replaces only a strictly better graph.
         * Each tries the same channels on every node first, as many as
         * its budget reaches (cap1), then any (cap0), unless the first
         * was already enough (:945-955) */
        for (int x = 0; x < (L->K >= 2 && L->G >= 2 ? 2 : 1); x++) {
            uint32_t c = ring_fits_x(L, v[i], x == 1), c1 = c < cap1 ? c : cap1, c0 = c < cap0 ? c : cap0;
            if (c1 >= 1 && c1 * v[i] > bn * bb) {
                bn = c1;
                bb = v[i];
                same = true;
            }
            if (c0 > c1 && bn < L->max_ch && bn * bb < total && c0 * v[i] > bn * bb) {
                bn = c0;
                bb = v[i];
                same = false;
            }
        }
        if (bn == L->max_ch)
            break;
        if (bn * bb >= total)
            break;
        if (i < n - 1 && (bn == 0 || v[i + 1] / bb > .49))
            i++;
        else
            break;
    }
    if (bn == 0)
        return false;
    if (bb >= 25.0 && !(sm90 && bb < 50.0 && bn > 4)) {
        uint32_t d = 2 * bn < L->max_ch ? 2 * bn : L->max_ch;
        bb /= (d + bn - 1) / bn;
        bn = d;
    }
    uint32_t min_ch = bn;
    i = 0;
    while (v[i] > bb && i < n - 1)
        i++;
    /* pass 2 searches as the graph it starts from (same channels or not,
     * :1003-1010): where its budget cannot find min_ch channels it times
     * out and raises no further (:1016) */
    if (min_ch > (same ? cap1 : cap0))
        i = 0;
    while (i > 0) {
        double sp = v[--i];
        uint32_t c = ring_fits_x(L, sp, false);
        if (c >= min_ch && c * sp > bn * bb) {
            bn = c;
            bb = sp;
        }
    }
    *nch = bn;
    *bw = bb;
    return true;
}

/* NCCL's ring graph on one scale-up node, as ncclTopoCompute builds it
 * (ring_search) for GPUs that each reach one NVSwitch over links of total
 * GB/s (getTotalBw, :28-36; the path from GPU to GPU through the switch
 * carries as much, so maxBw is the same, :17-26). On one node NCCL drops
 * the NICs (src/graph/paths.cc:678-681), so the search takes the
 * intra-node speeds. A ring channel at speed s takes s from every GPU's
 * link to the switch and from the switch's link back: the links fit
 * floor(total / s) channels, at most maxChannels = 16 (MAXCHANNELS / 2,
 * src/init.cc:1051). nch and bw are the graph's channels and speed
 * (GB/s); NCCL runs twice the channels (src/graph/connect.cc:443). The
 * search's time budget: a channel through the node's G GPUs takes G + 1
 * steps (one a GPU and one to close it, :452-455), so the search for the
 * same channels on every node finds at most 256 / (G + 1) of them, the
 * one for any 16384 / (G + 1) (:301-304, :927-928); on 72 GPUs the first
 * stops at 3, the second finds the rest; on 16 GPUs of 721 GB/s the
 * second pass, from 12 x 60 doubled to 16 x 30 with the same channels,
 * needs 16 x 17 steps at 40 and times out: 16 x 30, what NCCL's compiled
 * search gives (tests/test_nccl.c). False where no speed fits (total
 * below the lists' last, 3 GB/s), where NCCL falls back to one channel of
 * 0.1 GB/s in rank order (:1035-1042) and runs 2. */
bool tc_nccl_ring_graph_one_node(double total, uint32_t G, bool sm90, uint32_t *nch, double *bw)
{
    const double *v = sm90 ? speed_intra : speed_intra_pre90;
    size_t n = sm90 ? sizeof speed_intra / sizeof *speed_intra : sizeof speed_intra_pre90 / sizeof *speed_intra_pre90;
    ring_limits L = {.nvl = total, .max_ch = 16, .steps = G + 1};
    return ring_search(v, n, &L, total, total, sm90, nch, bw);
}

/* NCCL's ring graph across nodes (ring_search with the inter-node speeds,
 * search.cc:911-917) for nodes of GPUs with nvl GB/s of NVLink each (0: a
 * node of one GPU) and K NICs of nic GB/s (the speed the NIC reports, its
 * line rate: src/graph/topo.cc:356-358), each NIC and GPU on a PCIe link
 * of pci GB/s (0: not limited). A channel enters the node at one NIC, goes
 * through every GPU over NVLink and leaves through a NIC (ring_fits_x:
 * the one it came in, or crossNic 1, the exit GPU's own): s from the
 * GPUs' NVLink, from its NIC's PCIe link and the NIC itself each way.
 * maxBw is a GPU's path to its NIC, min(pci, nic) (getMaxBw, :17-26);
 * totalBw a GPU's NVLink or, without it, its PCIe link (getTotalBw,
 * :28-36). On a DGX H100 (370.8 GB/s of NVLink, 8 NICs of 50 GB/s on
 * PCIe Gen5 links of 48): at 48, 7 channels back to their NIC, 8 through
 * the next GPU's (384 GB/s, at least the total: the search stops), not
 * doubled (SM90, below 50, more than 4): 8 x 48, run as 16, what NCCL's
 * search code itself gives (tests/test_nccl.c). */
bool tc_nccl_ring_graph_nodes(double nvl, double nic, double pci, uint32_t K, uint32_t G, bool sm90, uint32_t *nch,
                              double *bw)
{
    const double *v = sm90 ? speed_inter : speed_inter_pre90;
    size_t n = sm90 ? sizeof speed_inter / sizeof *speed_inter : sizeof speed_inter_pre90 / sizeof *speed_inter_pre90;
    if (!(pci > 0))
        pci = INFINITY;
    ring_limits L = {.nvl = nvl, .nic = nic, .pci = pci, .K = K ? K : 1, .G = G ? G : 1, .max_ch = 16};
    double total = fmax(nvl, isfinite(pci) ? pci : nic), maxbw = fmin(nic, pci);
    return ring_search(v, n, &L, total, maxbw, sm90, nch, bw);
}

/* Whether NCCL's tree graph across nodes of G GPUs and K NICs has the TREE
 * pattern (3) rather than BALANCED_TREE (1): a node of one GPU
 * (search.cc:897), or, from SM90 on, a NIC for every GPU, where the search
 * falls back to the simpler tree (search.cc:964-966). */
bool tc_nccl_tree_pattern_tree(uint32_t G, uint32_t K, bool sm90)
{
    return G <= 1 || (sm90 && K == G);
}

/* A tree graph's bwIntra on two nodes: the search's second pass raises it
 * through the inter-node speeds above bwInter (inter) while it is below
 * twice bwInter and the nch channels fit the GPUs' NVLink, nvl GB/s each
 * (search.cc:1025-1028: "increase bwIntra for trees (2 nodes or
 * collnet)"); a tree's chain through the node's G GPUs crosses the NVLink
 * G - 1 times (tc_nccl_chain_nvl_channels: a GPU that ends no chain
 * carries every channel); a node of one GPU has no NVLink to hold it (nvl
 * 0). */
double tc_nccl_tree_intra_two_nodes(double inter, uint32_t nch, double nvl, uint32_t G, bool sm90)
{
    const double *v = sm90 ? speed_inter : speed_inter_pre90;
    size_t n = sm90 ? sizeof speed_inter / sizeof *speed_inter : sizeof speed_inter_pre90 / sizeof *speed_inter_pre90;
    size_t i = 0;
    while (v[i] > inter && i < n - 1)
        i++;
    double intra = inter;
    while (i > 0 && intra < 2 * inter) {
        double sp = v[--i];
        if (nvl > 0 && G > 1 && tc_nccl_chain_nvl_channels(nch, G) * sp > nvl * (1 + 1e-9))
            break;
        intra = sp;
    }
    return intra;
}

/* The channels of NCCL's NVLS for req's communicator on t, 0 where NCCL
 * has no NVLS (nvlsSupport 0): NCCL_NVLS_ENABLE=0 (nvls=0), a node switch
 * that does not reduce, GPUs before Hopper, or 2 or fewer GPUs a node
 * (src/transport/nvls.cc:241); else NCCL_NVLS_NCHANNELS, 16, within
 * minCTAs and maxCTAs (:259). A communicator with fewer channels is raised
 * to these (src/graph/connect.cc:478-480), which its point-to-point work
 * takes (src/graph/paths.cc:745-749). */
uint32_t tc_nccl_nvls_comm_channels(const tc_coll_req *req, const tc_topo *t)
{
    if (req->nvls_off || !t || t->node_size < 2 || !t->node_reduce || t->arch == TC_ARCH_VOLTA ||
        t->arch == TC_ARCH_AMPERE)
        return 0;
    if ((t->node_size < req->p ? t->node_size : req->p) <= 2)
        return 0;
    uint32_t C = tc_nccl_cta_bounds(req, NVLS_CHANNELS);
    return C > 32 ? 32 : C;
}

/* Scale-up node size G (ranks per node, p on one node) and heads H: the GPUs
 * on one node, the NICs of a node across nodes. */
static void nvls_shape(uint32_t p, const tc_topo *t, uint32_t *G, uint32_t *M, uint32_t *H)
{
    uint32_t g = t && t->node_size > 1 ? t->node_size : 1;
    if (g > p)
        g = p;
    *G = g;
    *M = p / g;
    *H = *M == 1 ? g : t->nics ? t->nics : g;
}

/* Why NVLS cannot run (NULL if it can): NVLink SHARP needs a node switch
 * that reduces (node_reduce=1), more than 2 GPUs of the job on a node
 * (nvls.cc:241), a GPU of compute capability 9.0 or later
 * (search.cc:893). */
static const char *nvls_refusal(tc_op op, uint32_t p, const tc_topo *t, bool tree)
{
    if (op != TC_OP_ALLREDUCE && (tree || (op != TC_OP_ALLGATHER && op != TC_OP_REDUCESCATTER)))
        return tree ? "implements allreduce only (as NVLSTree: src/device/generate.py:76-82)"
                    : "implements allreduce, allgather and reducescatter (as NVLS: src/device/generate.py:76-82)";
    if (tree && t && t->kind == TC_TOPO_MULTIDC)
        return "is not modelled on a multidc topology: its latency path is the deepest node's, which may leave out "
               "the long-haul links";
    if (!t || t->node_size < 2 || !t->node_reduce)
        return "needs scale-up node switches that reduce and multicast (node=G with node_reduce=1, NVLink SHARP of "
               "NVSwitch 3 and later): the topology's node switches do not";
    if (t->arch == TC_ARCH_VOLTA || t->arch == TC_ARCH_AMPERE)
        return "needs Hopper or later GPUs (arch=hopper or blackwell): NCCL enables NVLS from compute capability 9.0";
    uint32_t G = t->node_size;
    if (!tree && p > G && op != TC_OP_ALLREDUCE)
        return "runs allgather and reducescatter inside one node only (\"now we only support single-node NVLS "
               "allgather and reducescatter\": src/enqueue.cc:1503-1504)";
    if (!tree && p > G && (p % G || !t->sharp || t->kind != TC_TOPO_CLOS))
        return "runs inside one node, or across whole nodes only over CollNet, where the fabric switches reduce "
               "(sharp=1, InfiniBand SHARP; tuning.cc:286-290); across nodes without it: nccl-nvls-tree";
    if (!tree && p > G && G > 8)
        return "runs across nodes only over CollNet, which NCCL turns off on nodes of more than 8 GPUs "
               "(src/init.cc:1196-1200, tuning.cc:286-290); across nodes there: nccl-nvls-tree";
    if (tree && (p <= G || p % G))
        return "runs across nodes: p a multiple of the node size and at least two nodes (nccl-nvls on one node)";
    if ((p < G ? p : G) <= 2)
        return "needs more than 2 GPUs per node (NCCL disables NVLS at 2 or fewer: src/transport/nvls.cc:241)";
    return NULL;
}

static bool valid_common(tc_op op, uint32_t p, const tc_topo *t, bool tree, tc_err *err)
{
    const char *why = nvls_refusal(op, p, t, tree);
    if (why)
        tc_fail(err, TC_EINVAL, "%s %s", tree ? "nccl-nvls-tree" : "nccl-nvls", why);
    return !why;
}

static bool nvls_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    return valid_common(op, p, t, false, err);
}

static bool nvls_tree_valid(tc_op op, uint32_t p, const tc_topo *t, tc_err *err)
{
    return valid_common(op, p, t, true, err);
}

/* NCCL's NVLS graph bandwidths (GB/s per channel, one channel per head):
 * the search charges every GPU's NVLink (H + 1) bwIntra (each head's
 * channel once, its own twice: search.cc:337-368); across nodes one speed
 * must also fit a head's NIC, and a second pass raises bwInter alone
 * (search.cc:1021-1024). */
static void nvls_graph_bw(const tc_topo *t, uint32_t M, uint32_t H, double *bw_intra, double *bw_inter)
{
    double nvl = tc_nccl_nvlink_GBps(t);
    double nic = tc_nccl_nic_line_Bps(t) * t->node_size / H / 1e9;
    size_t ni = sizeof speed_intra / sizeof *speed_intra, ne = sizeof speed_inter / sizeof *speed_inter;
    if (M == 1) {
        *bw_intra = speed_at_most(speed_intra, ni, nvl / (H + 1));
        *bw_inter = *bw_intra;
        return;
    }
    *bw_intra = speed_at_most(speed_inter, ne, fmin(nvl / (H + 1), nic));
    *bw_inter = fmax(*bw_intra, speed_at_most(speed_inter, ne, nic));
}

/* NCCL's latency of NVLS (across nodes: over CollNet), or of NVLSTree over
 * M nodes, us (tuning.cc:225-229, 258-262; latencyInter 0, assumed as in
 * nccl_collnet.c). */
static double nvls_lat_us(bool tree, uint32_t M, const tc_topo *t, bool model)
{
    /* model: as NCCL's choice sees a network step (the net plugin's
     * latency included); else as the evaluators time it */
    double net = model ? tc_nccl_model_net_lat_us(t, TC_PROTO_SIMPLE, NVLSTREE_NET_LAT_US)
                       : tc_nccl_net_lat_us(t, TC_PROTO_SIMPLE, NVLSTREE_NET_LAT_US);
    if (tree)
        return NVLS_HW_LAT_US + 2 * (int)tc_log2_floor(M) * net;
    return NVLS_HW_LAT_US + (M > 1 ? NVLS_NET_LAT_US : 0);
}

/* Whether NCCL has an NVLS kernel for req's type and operator (all-gather
 * runs as ncclSum: src/collectives.cc:23-25); no 8-bit type has one. */
static bool nvls_kernel(const tc_coll_req *req)
{
    uint8_t op = req->op == TC_OP_ALLGATHER ? TC_REDOP_SUM : req->redop;
    return req->elt != 1 && tc_nccl_nvls_redop_ok(req->dtype, op);
}

double tc_nccl_nvls_time_us(const tc_coll_req *req, const tc_topo *t, bool tree)
{
    if (nvls_refusal(req->op, req->p, t, tree) || !nvls_kernel(req))
        return INFINITY;
    uint32_t G, M, H;
    nvls_shape(req->p, t, &G, &M, &H);
    double bi, be;
    nvls_graph_bw(t, M, H, &bi, &be);
    /* tuning.cc:174-177, 213-219, 258-262 */
    double bw = tree ? fmin(bi, M <= 2 ? be : be / 2) : fmin(bi, be); /* across nodes, NVLS: over CollNet */
    double alg = H * bw * NVLS_ALG_RATIO;
    double lat = nvls_lat_us(tree, M, t, true);
    return alg > 0 ? lat + req->bytes / (1000 * alg) : INFINITY;
}

/* ---- the schedule ---- */

/* Lanes: channels that move the same transfers at the same steps (all of
 * them on one node; those of one tree across nodes, when both trees have
 * as many) are one lane, whose transfers carry one block of each: the
 * same link shares in steps and formula, a few times fewer transfers.
 * Lane q holds channels q, q + L, q + 2L, ... (L lanes) on tree q mod 2. */
typedef struct nvls_state {
    tc_op op;               /* all-reduce; on one node also all-gather, reduce-scatter */
    bool sharp;             /* NVLS across nodes: the heads' sums through SHARP trees (sh) */
    tc_sharp sh;
    uint32_t C, H, G, M, nch, D, maxnd;
    uint32_t L, per_lane;   /* lanes, channels per lane */
    uint32_t *nd;        /* 2 x M: node depth in tree 0 and tree 1 */
    int32_t *parent;     /* 2 x M */
    int32_t *child;      /* 2 x M x 2 */
} nvls_state;

static void nvls_state_free(void *p)
{
    nvls_state *st = p;
    if (!st)
        return;
    free(st->nd), free(st->parent), free(st->child);
    tc_sharp_free(&st->sh);
    free(st);
}

/* A transfer of block h of chunk m in each channel of lane q; h = H: one
 * for each of the H blocks (a GPU's shards to its switch, the switch's
 * multicast to a GPU), so that every transfer is one block per channel and
 * the shares of a link follow its bytes. */
static void add_blocks(tc_xfers *x, const tc_sched *s, uint32_t src, uint32_t dst, bool red, uint32_t q, uint32_t m,
                       uint32_t h)
{
    const nvls_state *st = s->state;
    uint32_t b0 = h < st->H ? h : 0, b1 = h < st->H ? h + 1 : st->H;
    if (!x->with_data) {
        /* for the evaluators: the transfers alone, all alike */
        tc_xfer t = {.src = src, .dst = dst, .bytes = s->blk_bytes * st->per_lane, .reduce = red,
                     .lane = (uint16_t)q, .piped = m > 0};
        tc_xfers_add_copies(x, t, b1 - b0);
        return;
    }
    for (uint32_t b = b0; b < b1; b++) {
        size_t at = tc_xfers_add(x, src, dst, s->blk_bytes * st->per_lane, red);
        if (!x->oom) {
            x->v[at].lane = (uint16_t)q;
            x->v[at].piped = m > 0;
        }
        for (uint32_t k = q; k < st->C; k += st->L) {
            uint32_t blk = (k * st->nch + m) * st->H + b;
            tc_xfers_seg(x, blk, blk, 1);
        }
    }
}

/* The chunk a stage at offset o moves at step, or false. */
static bool chunk_at(uint32_t step, uint32_t o, uint32_t nch, uint32_t *m)
{
    if (step < o || step - o >= nch)
        return false;
    *m = step - o;
    return true;
}

/* NVLS reduce-scatter and all-gather on one node (src/device/
 * reduce_scatter.h:78-155, all_gather.h:88-161): rank r's part is blocks
 * (r C + k) nch + m. Reduce-scatter: every GPU sends each rank's chunk to
 * the switch, which adds them up (ld_reduce), then the sum to its owner;
 * all-gather: the owner stores its chunk to the switch (multimem.st),
 * which multicasts it to every GPU. Chunk m at steps m and m + 1. */
static void add_part(tc_xfers *x, const tc_sched *s, uint32_t src, uint32_t dst, bool red, uint32_t r, uint32_t m)
{
    const nvls_state *st = s->state;
    size_t at = tc_xfers_add(x, src, dst, s->blk_bytes * st->per_lane, red);
    if (!x->oom) {
        x->v[at].lane = 0;
        x->v[at].piped = m > 0;
    }
    for (uint32_t k = 0; x->with_data && k < st->C; k++) {
        uint32_t blk = (r * st->C + k) * st->nch + m;
        tc_xfers_seg(x, blk, blk, 1);
    }
}

static void emit_nvls_rsag(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const nvls_state *st = s->state;
    uint32_t p = s->req.p, sw = p, m;
    bool rs = st->op == TC_OP_REDUCESCATTER;
    if (chunk_at(step, 0, st->nch, &m)) {
        if (rs) {
            for (uint32_t g = 0; g < p; g++)
                for (uint32_t r = 0; r < p; r++)
                    add_part(x, s, g, sw, g > 0, r, m);
        } else {
            for (uint32_t r = 0; r < p; r++)
                add_part(x, s, r, sw, false, r, m);
        }
    }
    if (chunk_at(step, 1, st->nch, &m)) {
        for (uint32_t r = 0; r < p; r++) {
            if (rs)
                add_part(x, s, sw, r, false, r, m);
            else
                for (uint32_t g = 0; g < p; g++)
                    add_part(x, s, sw, g, false, r, m);
        }
    }
}

/* NVLS across nodes over CollNet (all_reduce.h:431-494, the !oneNode
 * branch; nvls->out is the CollNet connection): every GPU's chunks to its
 * switch (stage 0), the node's sum of head h's shard to head h (1), head h
 * through SHARP tree h (from 2: the heads hold the result after 1 + 2T),
 * every head to its switch at 2 + 2D (D the tallest tree; a shorter tree's
 * heads wait), the switch's multicast to the GPUs at 3 + 2D. One lane:
 * every channel moves the same transfers. */
static tc_status emit_nvls_sharp(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const nvls_state *st = s->state;
    uint32_t H = st->H, G = st->G, M = st->M, D = st->sh.D, n = st->nch, p = s->req.p, per = G / H, m;
    for (uint32_t node = 0; node < M; node++) {
        uint32_t sw = p + node, base = node * G;
        if (chunk_at(step, 0, n, &m))
            for (uint32_t g = 0; g < G; g++)
                add_blocks(x, s, base + g, sw, g > 0, 0, m, H);
        if (chunk_at(step, 1, n, &m))
            for (uint32_t h = 0; h < H; h++)
                add_blocks(x, s, sw, base + h * per, false, 0, m, h);
        if (chunk_at(step, 2 + 2 * D, n, &m))
            for (uint32_t h = 0; h < H; h++)
                add_blocks(x, s, base + h * per, sw, false, 0, m, h);
        if (chunk_at(step, 3 + 2 * D, n, &m))
            for (uint32_t g = 0; g < G; g++)
                add_blocks(x, s, sw, base + g, false, 0, m, H);
    }
    for (uint32_t h = 0; h < H; h++)
        tc_sharp_emit(s, &st->sh, step, n, h, 2, 0, add_blocks, x);
    return x->oom ? TC_EINTERNAL : TC_OK;
}

static tc_status emit_nvls(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    if (((const nvls_state *)s->state)->op != TC_OP_ALLREDUCE) {
        emit_nvls_rsag(s, step, x);
        return x->oom ? TC_EINTERNAL : TC_OK;
    }
    const nvls_state *st = s->state;
    uint32_t H = st->H, G = st->G, M = st->M, D = st->D, n = st->nch, p = s->req.p;
    uint32_t per = G / H; /* GPUs per head (NIC) */
    for (uint32_t k = 0; k < st->L; k++) {
        uint32_t tr = k % 2, m;
        for (uint32_t node = 0; node < M; node++) {
            uint32_t nd = st->nd[tr * M + node], sw = p + node, base = node * G;
            /* up: the GPUs to their switch (the first copies, the others add) */
            if (chunk_at(step, D - nd - 2, n, &m))
                for (uint32_t g = 0; g < G; g++)
                    add_blocks(x, s, base + g, sw, g > 0, k, m, H);
            /* the switch's sum to each head */
            if (chunk_at(step, D - nd - 1, n, &m))
                for (uint32_t h = 0; h < H; h++)
                    add_blocks(x, s, sw, base + h * per, false, k, m, h);
        }
        for (uint32_t node = 0; node < M; node++) {
            uint32_t nd = st->nd[tr * M + node], base = node * G;
            int32_t par = st->parent[tr * M + node];
            /* heads up the tree of nodes (after the switches' copies) */
            if (par >= 0 && chunk_at(step, D - nd, n, &m))
                for (uint32_t h = 0; h < H; h++)
                    add_blocks(x, s, base + h * per, (uint32_t)par * G + h * per, true, k, m, h);
        }
        for (uint32_t node = 0; node < M; node++) {
            uint32_t nd = st->nd[tr * M + node], sw = p + node, base = node * G;
            /* down: each head to its child nodes' heads and to its switch */
            if (chunk_at(step, D + nd, n, &m))
                for (uint32_t h = 0; h < H; h++) {
                    for (int c = 0; c < 2; c++) {
                        int32_t ch = st->child[(tr * M + node) * 2 + c];
                        if (ch >= 0)
                            add_blocks(x, s, base + h * per, (uint32_t)ch * G + h * per, false, k, m, h);
                    }
                    add_blocks(x, s, base + h * per, sw, false, k, m, h);
                }
            /* the switch multicasts the result to the node's GPUs */
            if (chunk_at(step, D + nd + 1, n, &m))
                for (uint32_t g = 0; g < G; g++)
                    add_blocks(x, s, sw, base + g, false, k, m, H);
        }
    }
    return x->oom ? TC_EINTERNAL : TC_OK;
}

/* Whether the stage at offset o moves a chunk at step. */
static bool on(uint32_t step, uint32_t o, uint32_t nch)
{
    return step >= o && step - o < nch;
}

/* One step's figures, counted from the structure (as emit_nvls sends),
 * without emitting: per node, its switch, a head GPU and a GPU that is no
 * head (all GPUs of a node but the heads send and receive alike), summed
 * over the channels. Every transfer is one block. */
static void step_figures(const tc_sched *s, uint32_t step, uint32_t *fanout, uint32_t *fanin)
{
    const nvls_state *st = s->state;
    uint32_t H = st->H, G = st->G, M = st->M, D = st->D, n = st->nch;
    uint32_t fo = 0, fi = 0;
    if (st->op != TC_OP_ALLREDUCE) {
        /* one node of G ranks: the first stage at step m, the second at m + 1 */
        uint32_t a = on(step, 0, n), b = on(step, 1, n), rs = st->op == TC_OP_REDUCESCATTER;
        uint32_t gpu_out = a * (rs ? G : 1), gpu_in = b * (rs ? 1 : G);
        uint32_t sw_in = a * (rs ? G * G : G), sw_out = b * (rs ? G : G * G);
        *fanout = gpu_out > sw_out ? gpu_out : sw_out;
        *fanin = gpu_in > sw_in ? gpu_in : sw_in;
        return;
    }
    for (uint32_t x = 0; x < M; x++) {
        uint32_t so = 0, si = 0, ho = 0, hi = 0, go = 0, gi = 0;
        for (uint32_t k = 0; k < st->L; k++) {
            uint32_t tr = k % 2, nd = st->nd[tr * M + x], nc = 0;
            int32_t par = st->parent[tr * M + x];
            uint32_t A = on(step, D - nd - 2, n), B = on(step, D - nd - 1, n);
            uint32_t U = par >= 0 && on(step, D - nd, n), Dn = on(step, D + nd, n), Mc = on(step, D + nd + 1, n);
            uint32_t from_children = 0, from_parent = par >= 0 && on(step, D + nd - 1, n);
            for (int c = 0; c < 2; c++) {
                int32_t ch = st->child[(tr * M + x) * 2 + c];
                if (ch >= 0) {
                    nc++;
                    from_children += on(step, D - nd - 1, n); /* a child head (depth nd + 1) sends up */
                }
            }
            so += B * H + Mc * G * H;
            si += A * G * H + Dn * H;
            go += A * H, gi += Mc * H;
            ho += A * H + U + Dn * (nc + 1);
            hi += Mc * H + B + from_children + from_parent;
        }
        uint32_t o3[3] = {so, ho, G > H ? go : ho}, i3[3] = {si, hi, G > H ? gi : hi};
        for (int i = 0; i < 3; i++) {
            fo = o3[i] > fo ? o3[i] : fo;
            fi = i3[i] > fi ? i3[i] : fi;
        }
    }
    *fanout = fo, *fanin = fi;
}

/* One step's transfers, counted from the structure as emit_nvls and
 * emit_nvls_rsag send them (tc_sched_count need not emit it). */
static uint64_t step_xfers(const tc_sched *s, uint32_t step)
{
    const nvls_state *st = s->state;
    uint64_t H = st->H, G = st->G, M = st->M, p = s->req.p, n = 0;
    uint32_t D = st->D, nch = st->nch;
    if (st->op != TC_OP_ALLREDUCE) {
        /* reduce-scatter: every GPU's part of each rank, then each sum to its
         * owner; all-gather: each owner's part, then every part to every GPU */
        bool rs = st->op == TC_OP_REDUCESCATTER;
        return on(step, 0, nch) * (rs ? p * p : p) + on(step, 1, nch) * (rs ? p : p * p);
    }
    for (uint32_t k = 0; k < st->L; k++) {
        uint32_t tr = k % 2;
        for (uint32_t x = 0; x < M; x++) {
            uint32_t nd = st->nd[tr * M + x];
            uint64_t below = 0; /* child nodes */
            for (int c = 0; c < 2; c++)
                below += st->child[(tr * M + x) * 2 + c] >= 0;
            n += on(step, D - nd - 2, nch) * G * H + on(step, D - nd - 1, nch) * H;
            n += (st->parent[tr * M + x] >= 0 && on(step, D - nd, nch)) * H;
            n += on(step, D + nd, nch) * H * (below + 1) + on(step, D + nd + 1, nch) * G * H;
        }
    }
    return n;
}

/* Phases: the steps between the moments a stage starts, leaves its first
 * chunk (piped from then on) or ends; each phase's figures from its first
 * step. */
static tc_status nvls_phases(tc_sched *s, tc_err *err)
{
    const nvls_state *st = s->state;
    bool ar = st->op == TC_OP_ALLREDUCE;
    uint32_t D = st->D, n = st->nch, total = ar ? n + D + st->maxnd + 1 : n + 1;
    size_t cap = 15 * ((size_t)st->maxnd + 1) + 2, nb = 0;
    uint32_t *b = malloc(cap * sizeof *b);
    if (!b)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    b[nb++] = 0;
    b[nb++] = total;
    if (!ar) {
        uint32_t c3[3] = {1, n, n + 1};
        for (int j = 0; j < 3; j++)
            if (c3[j] < total)
                b[nb++] = c3[j];
    }
    for (uint32_t nd = 0; ar && nd <= st->maxnd; nd++) {
        uint32_t o[5] = {D - nd - 2, D - nd - 1, D - nd, D + nd, D + nd + 1};
        for (int i = 0; i < 5; i++) {
            uint32_t c3[3] = {o[i], o[i] + 1, o[i] + n};
            for (int j = 0; j < 3; j++)
                if (c3[j] < total)
                    b[nb++] = c3[j];
        }
    }
    qsort(b, nb, sizeof *b, tc_cmp_u32);
    tc_status rc = TC_OK;
    for (size_t i = 0; i + 1 < nb && rc == TC_OK; i++) {
        if (b[i] == b[i + 1])
            continue;
        uint32_t fo, fi;
        step_figures(s, b[i], &fo, &fi);
        double xb = s->blk_bytes * st->per_lane; /* every transfer's bytes */
        tc_phase *ph = tc_sched_add_phase(s, b[i + 1] - b[i], TC_PAT_GENERIC, 0, xb, st->M > 1 ? "nvls tree" : "nvls");
        if (!ph) {
            rc = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        tc_phase_set_fan(ph, fo ? fo : 1, fi ? fi : 1, xb);
        ph->blk_xfers = step_xfers(s, b[i]); /* each of per_lane blocks */
        ph->xfer_blks = st->per_lane;
    }
    free(b);
    return rc;
}

static tc_status nvls_build_common(const tc_coll_req *req, const tc_topo *t, tc_sched *s, bool tree, tc_err *err)
{
    if (!nvls_kernel(req))
        return tc_fail(err, TC_EINVAL,
                       "%s: NCCL has no NVLS kernel for %s on %s (ncclNvlsSupported: sum on float32 and fp64; sum, "
                       "min and max on fp16, bf16 and 32/64-bit integers; no 8-bit type): give the ring or the tree",
                       tree ? "nccl-nvls-tree" : "nccl-nvls",
                       req->op == TC_OP_ALLGATHER ? "sum" : tc_redop_name((tc_redop)req->redop),
                       req->elt == 1 && !req->dtype ? "an 8-bit type" : tc_dtype_name(req->dtype));
    uint32_t G, M, H;
    nvls_shape(req->p, t, &G, &M, &H);
    /* NCCL_NVLS_NCHANNELS (channels=) within the communicator's minCTAs
     * and maxCTAs (src/transport/nvls.cc:259) */
    uint32_t C = tc_nccl_cta_bounds(req, req->channels ? req->channels : NVLS_CHANNELS);
    if (C > 32)
        C = 32; /* MAXCHANNELS (src/include/device.h:54) */
    /* The chunk (src/enqueue.cc:1742-1761): NVLS 128 KiB, smaller for
     * small messages; NVLSTree at most 64 KiB from 4 nodes on. */
    double Q = NVLS_CHUNK, ops = (double)C * H, B = req->bytes;
    if (!tree && M > 1 && tc_nccl_nvls_time_us(&(tc_coll_req){.op = TC_OP_ALLREDUCE, .p = req->p, .bytes = 1e12, .elt = 4},
                                               t, false) > 1e12 / (1000 * 150.0))
        Q = 32768; /* across nodes, NVLS's model bandwidth under 150 GB/s (enqueue.cc:1745) */
    if (!tree) {
        if (B < 64 * ops * Q && Q > 65536)
            Q = 65536;
        if (B < 8 * ops * Q && Q > 32768)
            Q = 32768;
        if (B < 2 * ops * Q && Q > 16384)
            Q = 16384;
    } else {
        if (M >= 4)
            Q = 65536;
        if (B < 4 * ops * Q && Q > 65536)
            Q = 65536;
        if (B < ops * Q && Q > 32768)
            Q = 32768;
    }
    double nch = ceil(B / (ops * Q));
    if (nch < 1)
        nch = 1;
    if (ops * nch > UINT32_MAX / 2)
        return tc_nccl_too_many_chunks(req, tree ? "NVLSTree" : "NVLS", TC_PROTO_SIMPLE, ops, Q, err);
    nvls_state *st = calloc(1, sizeof *st);
    if (!st)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = st;
    s->free_state = nvls_state_free;
    st->op = req->op;
    st->sharp = !tree && M > 1;
    st->C = C, st->H = H, st->G = G, st->M = M, st->nch = (uint32_t)nch;
    st->L = M == 1 || st->sharp ? 1 : C % 2 == 0 ? (C >= 2 ? 2 : 1) : C;
    st->per_lane = C / st->L;
    st->nd = calloc(2 * (size_t)M, sizeof *st->nd);
    st->parent = malloc(2 * (size_t)M * sizeof *st->parent);
    st->child = malloc(4 * (size_t)M * sizeof *st->child);
    s->sw_rank = malloc((size_t)M * sizeof *s->sw_rank);
    if (!st->nd || !st->parent || !st->child || !s->sw_rank)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t tr = 0; tr < 2; tr++)
        for (uint32_t x = 0; x < M; x++) {
            int par, c0, c1, y = (int)x, d = 0;
            tc_nccl_node_tree((int)M, (int)tr, (int)x, &par, &c0, &c1);
            st->parent[tr * M + x] = par;
            st->child[(tr * M + x) * 2] = c0;
            st->child[(tr * M + x) * 2 + 1] = c1;
            for (int q = par; q >= 0; d++) {
                y = q;
                int a, b2;
                tc_nccl_node_tree((int)M, (int)tr, y, &q, &a, &b2);
            }
            st->nd[tr * M + x] = (uint32_t)d;
            if ((uint32_t)d > st->maxnd)
                st->maxnd = (uint32_t)d;
        }
    st->D = st->maxnd + 2;
    s->nsw = M;
    for (uint32_t x = 0; x < M; x++)
        s->sw_rank[x] = x * G;
    s->nblk = s->nslots = (uint32_t)(ops * nch);
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    s->emit = emit_nvls;
    s->channels = C;
    s->lanes = st->L;
    s->nccl_impl = tree ? TC_ALGO_NCCL_NVLS_TREE : TC_ALGO_NCCL_NVLS;
    /* Costs: Simple only (tuning.cc:172); the latency is NCCL's
     * (tuning.cc:258-262) once, with no step latency of its own; each byte
     * costs 6/5 on the wire (NCCL's 5/6 from bus to algorithm bandwidth,
     * docs/MODEL.md); one chunk in flight per connection in flow mode:
     * NCCL's FIFO (8 slots) sends its chunks in order, where the flow
     * simulator would share a link among a connection's chunks in flight
     * and so hold every chunk of a burst to its end, idling the stages
     * that wait on each chunk's round trip through the switch. */
    s->proto = TC_PROTO_SIMPLE;
    s->base_s = nvls_lat_us(tree, M, t, false) * 1e-6;
    s->lat_intra_s = s->lat_inter_s = 0;
    s->wire = 1 / NVLS_ALG_RATIO;
    /* A channel is one thread block, and NCCL runs NCCL_NVLS_NCHANNELS =
     * 16 of them to fill a GPU's NVLink (nvls.cc:232); assumed: a block
     * moves at most 1/16 of it, so fewer channels move less, as the ring's
     * protocols take the share of their channels run (nccl.c, run_share).
     * A transfer carries per_lane channels' blocks of one head, a GPU
     * sends H of them at once. From 16 channels the cap is the NVLink
     * itself: none. */
    s->rate_cap_Bps = C < NVLS_CHANNELS && t->node_size > 1
                          ? t->node_bw / s->wire * st->per_lane / ((double)NVLS_CHANNELS * H)
                          : 0;
    s->credit_steps = 1;
    s->credit_steps_inter = 1;
    if (st->sharp) {
        /* across nodes over CollNet: the heads' SHARP trees */
        tc_status rc = tc_sharp_build(s, t, &st->sh, H, M, G, err);
        if (rc != TC_OK)
            return rc;
        s->emit = emit_nvls_sharp;
        s->lat_pairs = malloc((2 * (size_t)st->sh.D + 6) * sizeof *s->lat_pairs);
        if (!s->lat_pairs)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        uint32_t *lp = s->lat_pairs;
        lp[0] = G > 1 ? 1 : 0, lp[1] = req->p, lp[2] = req->p, lp[3] = 0; /* a GPU, the switch, head 0 */
        s->nlat_pairs = 2 + tc_sharp_lat_pairs(s, &st->sh, lp + 4);
        return tc_pipeline_phases(s, st->nch, 4 + 2 * st->sh.D, s->blk_bytes * st->per_lane, "nvls sharp", err);
    }
    /* The latency path: a GPU of the deepest node of channel 0's tree up
     * to the root head (the evaluators count it up and down). */
    uint32_t deep = 0;
    for (uint32_t x = 0; x < M; x++)
        if (st->nd[x] > st->nd[deep])
            deep = x;
    s->lat_pairs = malloc((2 * (size_t)st->maxnd + 4) * sizeof *s->lat_pairs);
    if (!s->lat_pairs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t gpu = deep * G + (G > 1 ? 1 : 0), sw = req->p + deep, head = deep * G;
    uint32_t *lp = s->lat_pairs;
    lp[0] = gpu, lp[1] = sw, lp[2] = sw, lp[3] = head;
    s->nlat_pairs = req->op == TC_OP_ALLREDUCE ? 2 : 1; /* counted there and back */
    for (int32_t x = (int32_t)deep; st->parent[x] >= 0; x = st->parent[x]) {
        lp[2 * s->nlat_pairs] = (uint32_t)x * G;
        lp[2 * s->nlat_pairs + 1] = (uint32_t)st->parent[x] * G;
        s->nlat_pairs++;
    }
    return nvls_phases(s, err);
}

static tc_status nvls_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    return nvls_build_common(req, t, s, false, err);
}

static tc_status nvls_tree_build(const tc_coll_req *req, const tc_topo *t, tc_sched *s, tc_err *err)
{
    return nvls_build_common(req, t, s, true, err);
}

const tc_algo_impl tc_impl_nccl_nvls = {nvls_valid, nvls_build};
const tc_algo_impl tc_impl_nccl_nvls_tree = {nvls_tree_valid, nvls_tree_build};
