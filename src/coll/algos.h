/*
 * algos.h - internal interface between the schedule plumbing (sched.c) and
 * the algorithm files (one per algorithm family).
 *
 * Every algorithm provides:
 *   valid(op, p, topo, err): whether it implements op on p ranks on topo
 *     (topo may be NULL: then only topology-independent algorithms are
 *     valid); on false it may write a short reason into err (no list of
 *     alternatives: sched.c adds that).
 *   build(req, topo, s, err): fills nblk, nslots, blk_bytes, the phases
 *     (tc_sched_add_phase; bytes, fanout, fanin, rank_bytes and
 *     rank_bytes_in exact, the defaults being fanout = fanin = 1 and
 *     rank_bytes = rank_bytes_in = bytes), emit and state. req has been
 *     validated by valid().
 */
#ifndef TOPOCC_COLL_ALGOS_H
#define TOPOCC_COLL_ALGOS_H

#include "topocc/coll.h"

typedef struct tc_algo_impl {
    bool (*valid)(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err);
    tc_status (*build)(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err);
} tc_algo_impl;

const tc_algo_impl *tc_algo_impl_of(tc_algo a);

extern const tc_algo_impl tc_impl_ring, tc_impl_biring, tc_impl_rd, tc_impl_rhd,
    tc_impl_binomial, tc_impl_dbtree, tc_impl_bruck, tc_impl_pairwise, tc_impl_direct, tc_impl_scattered, tc_impl_scatter_rd,
    tc_impl_torus, tc_impl_torus_bi, tc_impl_torus_mp, tc_impl_swing, tc_impl_hier, tc_impl_hier_dc, tc_impl_shift,
    tc_impl_scatter_ring, tc_impl_rsg, tc_impl_neighbor, tc_impl_segring, tc_impl_nccl_ring, tc_impl_nccl, tc_impl_nccl_tree,
    tc_impl_nccl_nvls, tc_impl_nccl_nvls_tree, tc_impl_nccl_pat, tc_impl_nccl_a2a, tc_impl_nccl_collnet_chain,
    tc_impl_nccl_collnet_direct, tc_impl_ring_fa,
    tc_impl_torus_fa, tc_impl_torus_bi_fa, tc_impl_torus_mp_fa, tc_impl_dbtree_fa, tc_impl_mpich;

/* NCCL v2.21.5-1's predicted time (us) of NVLS (tree false) or NVLSTree
 * for req on t, by its tuning model; INFINITY where NCCL would not enable
 * it (coll/nccl_nvls.c). */
double tc_nccl_nvls_time_us(const tc_coll_req *req, const tc_topo *t, bool tree);
/* The largest speed (GB/s) of NCCL's graph search list, inter-node or
 * intra-node, SM90's or the one before, at most cap; 0 if none
 * (coll/nccl_nvls.c). */
double tc_nccl_speed_at_most(bool inter, bool sm90, double cap);
/* The channels of NCCL's NVLS for req's communicator on t, 0 where it has
 * none (coll/nccl_nvls.c). */
uint32_t tc_nccl_nvls_comm_channels(const tc_coll_req *req, const tc_topo *t);
/* Whether NCCL's communicator of R ranks in nodes of G GPUs on t widens its
 * channels by half for CollNet (coll/nccl.c). */
bool tc_nccl_collnet_widens(const tc_coll_req *req, const tc_topo *t, uint32_t R, uint32_t G);
/* NCCL's CollNet graph for req on t: search channels, bwIntra and bwInter
 * (GB/s) (coll/nccl_collnet.c). */
void tc_nccl_collnet_graph(const tc_coll_req *req, const tc_topo *t, double *nch, double *intra, double *inter);
/* The NVLink bandwidth a GPU has in NCCL's topology, GB/s; 0 without a
 * scale-up node (coll/nccl.c). */
double tc_nccl_nvlink_GBps(const tc_topo *t);
/* The PCIe link of a GPU and a NIC as NCCL counts it, GB/s, by the
 * architecture's generation; 0 (not limited) without arch= (coll/nccl.c). */
double tc_nccl_pcie_GBps(const tc_topo *t);
/* NCCL's ring graph on one scale-up node whose GPUs each have total GB/s of
 * NVLink: the graph's channels and speed (GB/s); false where no speed of
 * NCCL's lists fits (nccl_nvls.c). */
bool tc_nccl_ring_graph_one_node(double total, uint32_t G, bool sm90, uint32_t *nch, double *bw);
/* NCCL's ring graph across nodes of G GPUs (nvl GB/s of NVLink each, 0
 * for one GPU) with K NICs of nic GB/s on PCIe links of pci GB/s (0: not
 * limited): its channels and speed; a tree's bwIntra raised on two nodes;
 * the channels of c that the GPU busiest on NVLink sends, the chains
 * through G GPUs ending at each GPU in turn (nccl_nvls.c). */
bool tc_nccl_ring_graph_nodes(double nvl, double nic, double pci, uint32_t K, uint32_t G, bool sm90, uint32_t *nch,
                              double *bw);
uint32_t tc_nccl_chain_nvl_channels(uint32_t c, uint32_t G);
double tc_nccl_tree_intra_two_nodes(double inter, uint32_t nch, double nvl, uint32_t G, bool sm90);
bool tc_nccl_tree_pattern_tree(uint32_t G, uint32_t K, bool sm90);
/* CollNetDirect's or CollNetChain's time by NCCL's tuning model, us
 * (INFINITY where it cannot run: coll/nccl_collnet.c). */
double tc_nccl_collnet_time_us(const tc_coll_req *req, const tc_topo *t, bool direct);

/* SHARP reduction trees in the fabric (coll/nccl_collnet.c): tree j joins
 * head j of each of M nodes of G GPUs with H heads (head j of node n is
 * rank n G + j G / H); its switches are schedule participants after those
 * the schedule has (tc_sched.nsw, sw_rank, sw_level, sw_pick, grown here). */
typedef struct tc_sharp {
    uint32_t H, M, G, D;  /* D: the tallest tree's levels */
    uint32_t base;        /* participant of the first tree switch (after the schedule's earlier switches) */
    uint32_t *top;        /* H: tree j's root level */
    uint32_t *leaf;       /* H x M: the participant node n's head j sends to */
    int32_t *parent;      /* per switch: its parent participant, -1 at a root */
    uint32_t *first_child, *next_sib;   /* per switch: its switch children (UINT32_MAX: none) */
    uint32_t *heads_first, *heads_next; /* per leaf, per H x M: a leaf's heads as a list of nodes */
    uint32_t *tree_first; /* H + 1: tree j's switches are tree_first[j] .. tree_first[j + 1] - 1 */
} tc_sharp;
tc_status tc_sharp_build(tc_sched *s, const tc_topo *t, tc_sharp *sh, uint32_t H, uint32_t M, uint32_t G, tc_err *err);
void tc_sharp_free(tc_sharp *sh);
/* Appends one transfer of chunk m of tree j in lane q. */
typedef void (*tc_sharp_add)(tc_xfers *x, const tc_sched *s, uint32_t src, uint32_t dst, bool red, uint32_t q,
                             uint32_t m, uint32_t j);
/* Tree j's transfers at step (nch chunks): the heads send chunk m up at
 * o0 + m, a level-L switch to its parent at o0 + L + m; the root (level
 * T) multicasts at o0 + T + m, a level-L switch down at o0 + 2T - L + m,
 * so the heads hold the result after step o0 + 2T - 1 + m. */
void tc_sharp_emit(const tc_sched *s, const tc_sharp *sh, uint32_t step, uint32_t nch, uint32_t j, uint32_t o0,
                   uint32_t q, tc_sharp_add add, tc_xfers *x);
/* Tree 0's latency path, node 0's head up to the root, as participant
 * pairs into lp; returns the pairs. */
uint32_t tc_sharp_lat_pairs(const tc_sched *s, const tc_sharp *sh, uint32_t *lp);
/* The phases of a pipeline of nch chunks through stages one-step stages
 * (stage o moves chunk m at step o + m): one phase between the steps where
 * a stage starts, pipes its second chunk or ends, its figures counted on
 * its first step through s->emit; every transfer xb bytes. */
tc_status tc_pipeline_phases(tc_sched *s, uint32_t nch, uint32_t stages, double xb, const char *label, tc_err *err);

/* NCCL v2.23.4-1's PAT (coll/nccl_pat.c): its latency by NCCL's model
 * (us, tuning.cc:276-281; model: as NCCL's choice sees it, the net plugin's
 * latency included, else as the evaluators time it) and its predicted time
 * (us; INFINITY where NCCL would not enable it). */
double tc_nccl_pat_latency_us(uint32_t p, const tc_topo *t, bool model);
double tc_nccl_pat_time_us(const tc_coll_req *req, const tc_topo *t);
/* nccl-a2a's time (us, topocc's estimate: NCCL has no model of
 * point-to-point work: the base latency, a hop per work along the longest
 * chain of works a channel runs, the bytes at the injection rate) and
 * protocol (coll/nccl_a2a.c). */
double tc_nccl_a2a_time_us(const tc_coll_req *req, const tc_topo *t, tc_proto *proto);
/* nccl-a2a's PXN (coll/nccl_a2a.c): whether NCCL would relay cross-node
 * sends on t for p ranks (whole nodes of G >= 2 GPUs, more than one node,
 * more than one NIC per node), and the schedule with PXN on (NCCL's
 * default, NCCL_PXN_DISABLE=0: what tc_coll_build builds) or off
 * (NCCL_PXN_DISABLE=1). */
bool tc_nccl_a2a_pxn_applies(const tc_topo *t, uint32_t p);
tc_status tc_nccl_a2a_build(const tc_coll_req *req, const tc_topo *topo, bool pxn, tc_sched **out, tc_err *err);
/* coll/nccl.c: the channels of the communicator (req's, or the default,
 * within minch/maxch; before NCCL's cut for small sizes), and the graph
 * bandwidth NCCL's model starts from (GB/s) for G GPUs per node over
 * nodes nodes. */
uint32_t tc_nccl_channels_full(const tc_coll_req *req, const tc_topo *topo);
/* The channels of NCCL's graph (no channel variable applied), which its
 * model's bandwidths count; and C within the channel variables. */
uint32_t tc_nccl_channels_graph(const tc_coll_req *req, const tc_topo *topo);
uint32_t tc_nccl_channel_bounds(const tc_coll_req *req, uint32_t C);
/* C within minCTAs and maxCTAs alone: max(minCTAs, min(maxCTAs, C)), as
 * NVLS's channels (src/transport/nvls.cc:259). */
uint32_t tc_nccl_cta_bounds(const tc_coll_req *req, uint32_t C);
/* NCCL's model's tree graph bandwidth, GB/s (PAT runs on the tree graph:
 * src/init.cc:736 at v2.23.4-1). */
double tc_nccl_tree_graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G);
/* An endpoint's fabric injection as NCCL's topology search sees it, B/s:
 * the NICs' line rate, before net_eff= (the share the transport reaches,
 * which the links carry and the evaluators time): NCCL reads its NICs'
 * reported speed. */
double tc_nccl_nic_line_Bps(const tc_topo *t);

/* qsort's comparison of uint32_t. */
static inline int tc_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A size NCCL's algorithm nccl_algo (its own name: "Ring", "Tree", ...)
 * would cut into more pieces than its schedule holds, refused in the
 * user's terms: the operation and size, and the largest size accepted,
 * loops loops of loop_bytes (limit: what bounds them, "2^31 chunks of
 * 512KiB") (coll/nccl.c). */
tc_status tc_nccl_too_large(const tc_coll_req *req, const char *nccl_algo, tc_proto proto, double loops,
                            double loop_bytes, const char *limit, tc_err *err);
/* The same where a loop is u chunks of q bytes, at most 2^31 chunks in
 * all (the schedule's block indices): a loop's chunks are channels x
 * ranks for the ring, the channels for a chain or tree, ... */
tc_status tc_nccl_too_many_chunks(const tc_coll_req *req, const char *nccl_algo, tc_proto proto, double u, double q,
                                  tc_err *err);

/* Bytes on the wire per byte of payload of an NCCL protocol (coll/nccl.c). */
double tc_nccl_wire_factor(tc_proto p);
/* NCCL's per-step network latency on t's transport, us: nccl_us (NCCL's own
 * hwLat[NET] for the algorithm and protocol) on InfiniBand, the aws-ofi-nccl
 * tuner's on EFA (transport=efa). */
double tc_nccl_net_lat_us(const tc_topo *t, tc_proto p, double nccl_us);
/* The same step as NCCL's tuning model sees it when choosing: nccl_us plus
 * the latency the net plugin reports (75 us from aws-ofi-nccl on EFA,
 * twice with Simple; none on InfiniBand). Choice only: the evaluators time
 * the chosen schedule with tc_nccl_net_lat_us. */
double tc_nccl_model_net_lat_us(const tc_topo *t, tc_proto p, double nccl_us);

/* A phase's figures where its ranks send at most fanout and receive at
 * most fanin transfers of each bytes a step. */
void tc_phase_set_fan(tc_phase *ph, uint32_t fanout, uint32_t fanin, double each);

/* Appends the one step of a schedule that only copies locally (one rank):
 * no transfer between ranks, so no fan-out, fan-in or bytes. */
tc_status tc_sched_add_copy_phase(tc_sched *s, tc_err *err);

static inline bool tc_is_pow2(uint32_t p) { return p && !(p & (p - 1)); }
static inline uint32_t tc_log2_floor(uint32_t p)
{
    uint32_t l = 0;
    while ((p >> (l + 1)) != 0)
        l++;
    return l;
}
static inline uint32_t tc_log2_ceil(uint32_t p) { return p <= 1 ? 0 : tc_log2_floor(p - 1) + 1; }

/* A parameter server's push and pull over p ranks (coll/ps.c): S servers
 * colocated on ranks floor(s p / S); step 0 every rank pushes its shard s
 * (push / S bytes) to server s, step 1 every server sends its aggregated
 * shard (pull / S bytes) to every other rank: an all-reduce of S blocks
 * (req.op TC_OP_ALLREDUCE; the data checker holds it when push = pull). */
tc_status tc_ps_build(uint32_t p, uint32_t S, double push, double pull, tc_sched **out, tc_err *err);

#endif
