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
    tc_impl_binomial, tc_impl_dbtree, tc_impl_bruck, tc_impl_pairwise, tc_impl_direct,
    tc_impl_torus, tc_impl_torus_bi, tc_impl_torus_mp, tc_impl_swing, tc_impl_hier, tc_impl_shift,
    tc_impl_scatter_ring, tc_impl_rsg, tc_impl_neighbor, tc_impl_segring, tc_impl_nccl_ring, tc_impl_nccl, tc_impl_nccl_tree,
    tc_impl_nccl_nvls, tc_impl_nccl_nvls_tree, tc_impl_nccl_pat, tc_impl_nccl_a2a;

/* NCCL v2.21.5-1's predicted time (us) of NVLS (tree false) or NVLSTree
 * for req on t, by its tuning model; INFINITY where NCCL would not enable
 * it (coll/nccl_nvls.c). */
double tc_nccl_nvls_time_us(const tc_coll_req *req, const tc_topo *t, bool tree);

/* NCCL v2.23.4-1's PAT (coll/nccl_pat.c): its latency by NCCL's model
 * (us, tuning.cc:276-281) and its predicted time (us; INFINITY where NCCL
 * would not enable it). */
double tc_nccl_pat_latency_us(uint32_t p);
double tc_nccl_pat_time_us(const tc_coll_req *req, const tc_topo *t);
/* nccl-a2a's time (us, topocc's estimate: NCCL has no model of
 * point-to-point work) and protocol (coll/nccl_a2a.c). */
double tc_nccl_a2a_time_us(const tc_coll_req *req, const tc_topo *t, tc_proto *proto);
/* coll/nccl.c: the channels of the communicator (req's, or the default,
 * within minch/maxch; before NCCL's cut for small sizes), and the graph
 * bandwidth NCCL's model starts from (GB/s) for G GPUs per node over
 * nodes nodes. */
uint32_t tc_nccl_channels_full(const tc_coll_req *req, const tc_topo *topo);
double tc_nccl_graph_bw(const tc_topo *topo, uint32_t nodes, uint32_t G);

/* qsort's comparison of uint32_t. */
static inline int tc_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Bytes on the wire per byte of payload of an NCCL protocol (coll/nccl.c). */
double tc_nccl_wire_factor(tc_proto p);

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

#endif
