/*
 * topocc/coll.h - collective operations, algorithms and their schedules.
 *
 * A schedule is the one intermediate representation between algorithms and
 * evaluators. It is a sequence of steps; in each step a set of transfers
 * (src rank -> dst rank, bytes, which data blocks, copy or reduce) happens.
 * Steps are grouped into phases: consecutive steps whose traffic (the set of
 * (src, dst, bytes) triples) is identical form one phase with a repeat count,
 * so an evaluator computes a phase once. Transfers are not stored: the
 * algorithm's emit function generates the transfers of one step on demand,
 * so a 65,536-rank ring (2(N-1) steps of N transfers) costs O(N) memory.
 *
 * Data model (used by the data checker that proves every algorithm): each
 * rank holds nslots integer slots. The operation's logical buffer is nblk
 * blocks of blk_bytes each, in slots [0, nblk); all-to-all and sendrecv
 * write their output to slots [nblk, 2 nblk) (sendrecv: rank r's output
 * block j is rank r - 1's input block j); slots beyond are scratch. A transfer carries
 * segments (src_slot, dst_slot, count); within a step, every transfer reads
 * its source slots as they were at the start of the step, then copies or adds
 * into the destination. Transfers with src == dst are local copies and cost
 * nothing in the evaluators.
 *
 * Sizes follow nccl-tests: bytes is the whole buffer (all-reduce, broadcast,
 * reduce), the gathered output (all-gather), the input (reduce-scatter), what
 * one rank sends in total, its own block included (all-to-all), what one
 * rank sends to its one peer (sendrecv).
 */
#ifndef TOPOCC_COLL_H
#define TOPOCC_COLL_H

#include "topocc/core.h"
#include "topocc/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_OP_ALLREDUCE = 0,
    TC_OP_REDUCESCATTER,
    TC_OP_ALLGATHER,
    TC_OP_ALLTOALL,
    TC_OP_BROADCAST,
    TC_OP_REDUCE,
    TC_OP_SENDRECV,       /* point-to-point: rank r sends to r + 1 and receives from r - 1 (nccl-tests' sendrecv_perf) */
    TC_OP_COUNT
} tc_op;

/* In the order auto breaks ties. */
typedef enum {
    TC_ALGO_RING = 0,
    TC_ALGO_BIRING,
    TC_ALGO_RD,
    TC_ALGO_RHD,
    TC_ALGO_BINOMIAL,
    TC_ALGO_DBTREE,
    TC_ALGO_BRUCK,
    TC_ALGO_PAIRWISE,
    TC_ALGO_DIRECT,
    TC_ALGO_TORUS,
    TC_ALGO_TORUS_BI,
    TC_ALGO_TORUS_MP,
    TC_ALGO_SWING,
    TC_ALGO_HIER,
    TC_ALGO_SHIFT,
    TC_ALGO_SCATTER_RING,
    TC_ALGO_RSG,
    TC_ALGO_NEIGHBOR,
    TC_ALGO_SEGRING,
    TC_ALGO_HIER_DC,      /* hier over the pods of a multidc topology (coll/hier.c) */
    TC_ALGO_SCATTERED,    /* MPICH's throttled all-to-all, a block of isends at a time (coll/direct.c) */
    TC_ALGO_SCATTER_RD,   /* MPICH's broadcast: binomial scatter, recursive-doubling all-gather (coll/scatter_ring.c) */
    TC_ALGO_AUTO,
    /* NCCL's own algorithms: after auto, so that auto and "all" (the
     * MPI-style algorithms, alpha per message) never pick them. */
    TC_ALGO_NCCL_RING,
    TC_ALGO_NCCL,         /* NCCL's choice: its tuning model picks the protocol (coll/nccl.c) */
    TC_ALGO_NCCL_TREE,    /* NCCL's double binary tree across nodes, chains inside them */
    TC_ALGO_NCCL_NVLS,    /* NCCL's NVLS: the node switch reduces and multicasts (one node) */
    TC_ALGO_NCCL_NVLS_TREE, /* NCCL's NVLSTree: NVLS inside the nodes, a double binary tree of nodes */
    TC_ALGO_NCCL_PAT,     /* NCCL's PAT all-gather and reduce-scatter (v2.23.4-1; one GPU per node) */
    TC_ALGO_NCCL_A2A,     /* NCCL's all-to-all: grouped send/recv to every peer, as nccl-tests runs it */
    TC_ALGO_NCCL_COLLNET_CHAIN,  /* NCCL's CollNetChain: chains inside nodes, SHARP in the fabric */
    TC_ALGO_NCCL_COLLNET_DIRECT, /* NCCL's CollNetDirect: scatter to the heads, SHARP in the fabric */
    /* Fault-aware variants (what a fault-aware library could do): named
     * only, never auto's choice. */
    TC_ALGO_RING_FA,      /* a ring re-formed around failures (coll/ring_fa.c) */
    TC_ALGO_TORUS_FA,     /* torus with rings broken by a failure run as lines (coll/torus_rings.c) */
    TC_ALGO_TORUS_BI_FA,  /* torus-bi, the same */
    TC_ALGO_TORUS_MP_FA,  /* torus-mp, the same */
    TC_ALGO_DBTREE_FA,    /* double binary trees re-parented around failures (coll/dbtree_fa.c) */
    /* MPICH's own choice among the MPI-style algorithms above (coll/mpich.c):
     * a selector like nccl, never auto's. */
    TC_ALGO_MPICH,
    TC_ALGO_COUNT
} tc_algo;

/* NCCL's protocols (coll/nccl.c). TC_PROTO_NONE: an MPI-style schedule
 * (the topology's alpha per message). */
typedef enum { TC_PROTO_NONE = 0, TC_PROTO_LL, TC_PROTO_LL128, TC_PROTO_SIMPLE, TC_PROTO_COUNT } tc_proto;
const char *tc_proto_name(tc_proto p);  /* "LL", "LL128", "Simple" */
/* The algorithms of NCCL_ALGO's syntax ("Ring,Tree", "^Tree", '|' or ','
 * between names, case-insensitive) as a mask (bit 0 Ring, bit 1 Tree, bit 2
 * NVLS, bit 3 NVLSTree, bit 4 PAT, bit 5 CollNetDirect, bit 6
 * CollNetChain; "CollNet" both); a list that leaves none is refused. */
tc_status tc_nccl_algo_parse(const char *s, uint8_t *mask, tc_err *err);
/* NCCL's trees over n nodes (src/graph/trees.cc): node r's parent and up to
 * two children (-1: none) in tree t, 0 (ncclGetBtree) or 1 (ncclGetDtree's
 * second: the first mirrored for even n, shifted by one for odd n). */
void tc_nccl_node_tree(int n, int t, int r, int *parent, int *c0, int *c1);
/* nccl-ring, nccl, nccl-tree: NCCL's algorithms (their protocol's costs
 * instead of alpha; one schedule per size). */
bool tc_algo_is_nccl(tc_algo a);
/* Whether a's schedule depends on the size beyond scaling (nccl-*, and
 * mpich, whose choice follows the size): evaluators build one per size. */
bool tc_algo_per_size(tc_algo a);

/* NCCL's name of the algorithm an nccl-* schedule runs: "Ring", "Tree",
 * "NVLS", "NVLSTree", "PAT", "AllToAll", "CollNetChain", "CollNetDirect". */
const char *tc_nccl_algo_label(tc_algo impl);

/* The same for a result of operation op: NCCL's point-to-point run as a
 * sendrecv is "SendRecv" (ncclFuncSendRecv), not "AllToAll". */
const char *tc_nccl_op_label(tc_algo impl, tc_op op);

/* The seconds a network step of NCCL's ring takes with protocol p
 * (LL, LL128, Simple) on t's NICs: net_lat= where given, else the
 * transport's (InfiniBand: NCCL's hwLat[NET]; EFA: the aws-ofi-nccl
 * tuner's); docs/MODEL.md "Network transport". */
double tc_nccl_ring_net_step_s(const tc_topo *t, tc_proto p);
/* NCCL's ring graph (its topology search at v2.21.5-1, as topocc follows
 * it: docs/MODEL.md "Channels") for a communicator of R ranks with G on
 * each node of t: the search's channels and speed (GB/s, bwIntra =
 * bwInter for a ring), and the channels NCCL runs for large messages
 * (before NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS, with CollNet's
 * widening and Hopper's doubling); false where no graph applies (a bare
 * shape, or no speed of NCCL's lists fits). */
bool tc_nccl_ring_graph(const tc_topo *t, uint32_t R, uint32_t G, uint32_t *nch, double *bw, uint32_t *run);
/* Parses a protocol as NCCL_PROTO gives it: names case-insensitive,
 * separated by '|' or ',', a leading '^' for "all but". With one name and
 * !as_mask it sets *proto; otherwise *mask (bit 1 << TC_PROTO_x). */
tc_status tc_proto_parse(const char *s, bool as_mask, tc_proto *proto, uint8_t *mask, tc_err *err);

const char *tc_op_name(tc_op op);
/* Whether op reduces: all-reduce, reduce-scatter, reduce. */
bool tc_op_reduces(tc_op op);
const char *tc_algo_name(tc_algo a);
tc_status tc_op_parse(const char *s, tc_op *out, tc_err *err);
/* nccl-tests bus bandwidth factor for p ranks (sendrecv: 1 for any p). */
double tc_op_busbw_factor(tc_op op, uint32_t p);

/* How a phase's traffic looks, so the formula evaluator can cost it in
 * closed form. */
typedef enum {
    TC_PAT_GENERIC = 0, /* anything; costed by its fan-out and bytes */
    TC_PAT_SHIFT,       /* every rank r sends to (r + arg) mod p (arg may be negative) */
    TC_PAT_XOR,         /* rank r sends to r ^ arg (ranks with partner >= p idle) */
    TC_PAT_TORUS,       /* rings along torus dimensions: see tc_phase.dims_mask */
    TC_PAT_LOCAL,       /* intra-node (scale-up) traffic only */
    TC_PAT_ALL          /* complete exchange: every rank sends one transfer of the phase's bytes to every other rank */
} tc_pattern;

/* A phase's figures are exact, not bounds: fanout, fanin, bytes, rank_bytes
 * and rank_bytes_in are the maxima over its steps' transfers, local copies
 * (src == dst) excluded, and tc_sched_check proves them for every step. */
typedef struct tc_phase {
    uint32_t first_step;  /* global index of the phase's first step */
    uint32_t repeat;      /* steps in the phase, all with identical traffic */
    tc_pattern pat;
    int64_t arg;          /* SHIFT distance or XOR mask */
    uint32_t dims_mask;   /* TORUS: bit 2d = dim d positive ring, bit 2d+1 negative */
    /* SHIFT / XOR: the ranks that may send are (src_first + i) mod p for
     * i in [0, src_count), in absolute rank numbers; src_count == 0 (the
     * default) means every rank. Binomial tree levels and pipelined chain
     * fill and drain send from such a range only. */
    uint32_t src_first, src_count;
    uint32_t fanout;      /* most transfers any rank sends in one step */
    uint32_t fanin;       /* most transfers any rank receives in one step */
    double bytes;         /* largest transfer of the phase, bytes */
    double rank_bytes;    /* most bytes any rank sends in one step */
    double rank_bytes_in; /* most bytes any rank receives in one step */
    uint64_t blk_xfers;   /* where its builder counted them: the transfers of one step, each of the
                             schedule's blk_bytes (tc_sched_count need not emit it); 0 unknown */
    uint32_t xfer_blks;   /* with blk_xfers: the blocks each of them carries (0: one, blk_bytes) */
    /* +1: a step of this phase carries every transfer (src, dst, bytes) of
     * the previous phase's steps and maybe more; -1: a part of them; 0:
     * neither claimed (a chain's fill and drain). tc_sched_check verifies
     * it; the graph evaluators use it to cost a run of such phases by
     * bisection (tc_steps_sum_phases). */
    int8_t nest;
    char label[32];       /* e.g. "reduce-scatter", "all-gather dim 1" */
} tc_phase;

typedef struct tc_seg {
    uint32_t src_slot, dst_slot, count;
} tc_seg;

typedef struct tc_xfer {
    uint32_t src, dst;    /* ranks */
    double bytes;
    uint32_t seg_off, seg_cnt; /* into tc_xfers.segs */
    uint8_t reduce;       /* 1: dst += src data, 0: dst = src data */
    uint16_t lane;        /* the independent lane it belongs to (tc_sched.lanes; 0 otherwise) */
    uint8_t piped;        /* nccl-*: it runs behind an earlier chunk of its lane's pipeline (no step latency) */
} tc_xfer;

/* A growable list of the transfers of one step. */
typedef struct tc_xfers {
    tc_xfer *v;
    size_t n, cap;
    tc_seg *segs;
    size_t nseg, segcap;
    bool with_data;       /* emit segments (data checker) or not (evaluators) */
    bool oom;             /* an allocation failed */
} tc_xfers;

void tc_xfers_init(tc_xfers *x, bool with_data);
void tc_xfers_clear(tc_xfers *x);
void tc_xfers_free(tc_xfers *x);
/* Grows x for one more transfer (false: out of memory, x->oom set). */
bool tc_xfers_grow(tc_xfers *x);
/* Room for n transfers in all, in one allocation (a step whose count is
 * known, emitted without growing x step by step); an empty x's old room
 * is not copied. False: out of memory, x->oom set. */
bool tc_xfers_reserve(tc_xfers *x, size_t n);
/* Appends a transfer; returns its index. Segments follow with tc_xfers_seg.
 * Inline: the schedules emit tens of millions of them. */
static inline size_t tc_xfers_add(tc_xfers *x, uint32_t src, uint32_t dst, double bytes, bool reduce)
{
    if (x->n == x->cap && !tc_xfers_grow(x))
        return x->n ? x->n - 1 : 0;
    tc_xfer *t = &x->v[x->n];
    t->src = src;
    t->dst = dst;
    t->bytes = bytes;
    t->lane = 0;
    t->piped = 0;
    t->seg_off = (uint32_t)x->nseg;
    t->seg_cnt = 0;
    t->reduce = reduce ? 1 : 0;
    return x->n++;
}
/* Appends n copies of t, without segments (t's seg_off and seg_cnt are
 * set); false: out of memory, x->oom set. */
bool tc_xfers_add_copies(tc_xfers *x, tc_xfer t, size_t n);
/* Appends a segment to the last transfer (no-op unless with_data); a
 * segment that continues the previous one extends it. A cyclic range is
 * emitted as two segments. */
void tc_xfers_seg(tc_xfers *x, uint32_t src_slot, uint32_t dst_slot, uint32_t count);

/* An algorithm's variant, tc_coll_req.variant (docs/MODEL.md). Each value
 * belongs to one algorithm; TC_VARIANT_DEFAULT is its default. */
typedef enum {
    TC_VARIANT_DEFAULT = 0,
    TC_VARIANT_NEAR,      /* rhd "order=near": partners 1, 2, 4, ... apart first (MPICH's all-reduce; its default) */
    TC_VARIANT_FAR,       /* rhd "order=far": partners p/2, p/4, ... apart first (MPICH's reduce-scatter; its default) */
    TC_VARIANT_LOWBIT,    /* binomial "tree=lowbit": a rank's parent clears its lowest set bit (MPICH; the default) */
    TC_VARIANT_HIGHBIT,   /* binomial "tree=highbit": the parent clears the highest set bit */
    TC_VARIANT_COUNT
} tc_variant;

typedef struct tc_coll_req {
    tc_op op;
    tc_algo algo;
    uint32_t p;           /* ranks */
    double bytes;         /* nccl-tests convention */
    uint32_t chunks;      /* pipelining chunks (0 = algorithm default) */
    uint32_t root;        /* broadcast/reduce root rank (default 0) */
    tc_variant variant;   /* "rhd:order=", "binomial:tree=" (TC_VARIANT_DEFAULT = the algorithm's default) */
    uint32_t elt;         /* bytes per element: bytes is a whole number of them and blocks are whole
                             elements (tc_coll_round); 0: fluid bytes, blocks of bytes / nblk */
    uint32_t channels;    /* nccl-*: channels (0 = the default, coll/nccl.c) */
    tc_proto proto;       /* nccl-*: the protocol (TC_PROTO_NONE: Simple; nccl: its choice) */
    /* nccl-*, as NCCL's environment sets them (docs/MODEL.md): the
     * protocols nccl may choose (bit 1 << TC_PROTO_x; 0: NCCL's default
     * rule), bounds on the channels (0: none), the Simple buffer (0: 4 MiB). */
    uint8_t proto_mask;
    uint8_t algo_mask;    /* nccl: the algorithms it may choose (bit 0 Ring, bit 1 Tree, bit 2 NVLS, bit 3
                             NVLSTree, bit 4 PAT, bit 5 CollNetDirect, bit 6 CollNetChain; 0: all) */
    uint8_t pxn;          /* nccl-a2a and nccl (all-to-all): PXN, 0 NCCL's default (on), 1 pxn=1, 2 pxn=0 */
    bool nvls_off;        /* nccl: nvls=0 (NCCL_NVLS_ENABLE=0): NVLS and NVLSTree have no bandwidth (nvlsSupport 0),
                             their algo= bits kept for NCCL's enable rules */
    uint32_t min_channels, max_channels;
    /* nccl-*: the communicator's minCTAs and maxCTAs (NCCL_MIN_CTAS,
     * NCCL_MAX_CTAS; mincta=, maxcta=; 0: NCCL's 1 and 32): they bound the
     * rings' and trees' channels with min_channels and max_channels, and
     * alone NVLS's */
    uint32_t min_ctas, max_ctas;
    double buffsize;
    uint32_t throttle;    /* scattered: messages a rank posts at a time, MPIR_CVAR_ALLTOALL_THROTTLE (0: MPICH's
                             default, 32; TC_THROTTLE_ALL: all at once, "throttle=0") */
    uint64_t among;       /* auto: the algorithms it may choose, bit 1 << tc_algo (0: every one) */
    uint8_t redop;        /* tc_redop of a reduction (0: sum): timed alike; NCCL's NVLS runs only some */
    uint8_t dtype;        /* tc_dtype_code of the element type (0: float32) */
    double chunk_bytes;   /* dbtree and dbtree-fa with chunks 0: each tree's half cut into chunks of at most
                             this many bytes (ceil(bytes / 2 / chunk_bytes), at least 1), so the schedule
                             follows the size (tc_req_per_size); 0: the fixed default count. "library"
                             sets NCCL's tree chunk (tc_library_req) */
} tc_coll_req;
#define TC_THROTTLE_ALL UINT32_MAX
/* Whether algorithm a's schedule for req follows the size: tc_algo_per_size,
 * or a tree cut into chunks of a fixed size (tc_coll_req.chunk_bytes). */
bool tc_req_per_size(const tc_coll_req *req, tc_algo a);
/* MPICH's default MPIR_CVAR_ALLTOALL_THROTTLE (src/mpi/coll/cvars.txt, v5.0.1). */
#define TC_THROTTLE_DEFAULT 32u

/* Element types (--dtype): float32 (4 bytes), fp16, bf16 (2), fp8, int8
 * (1), fp64 (8). Returns the element size, or 0 for an unknown name. */
uint32_t tc_dtype_size(const char *name);
/* The type's code for tc_coll_req.dtype (0: float32, also for NULL or an
 * unknown name). */
uint8_t tc_dtype_code(const char *name);
const char *tc_dtype_name(uint8_t code); /* topocc's name of a code ("float32" if unknown) */

/* Reduction operators (--redop, nccl-tests' -o). Every evaluator times
 * them alike (the reduction is not modelled as compute); NCCL's choice
 * leaves NVLS out where the type and operator have no NVLS kernel. */
typedef enum tc_redop { TC_REDOP_SUM = 0, TC_REDOP_PROD, TC_REDOP_MIN, TC_REDOP_MAX, TC_REDOP_AVG } tc_redop;
/* The operator of a name (sum, prod, min, max, avg); false if unknown. */
bool tc_redop_parse(const char *name, tc_redop *out);
const char *tc_redop_name(tc_redop op);
/* nccl-tests' redop column: the operator's name for a reduction
 * (allreduce, reducescatter, reduce) and for sendrecv (nccl-tests prints
 * its -o there, though nothing is reduced), "none" otherwise. */
const char *tc_redop_column(tc_op op, uint8_t redop);
/* Whether NCCL v2.21.5-1 has NVLS kernels for the operator on the type of
 * code dtype (ncclNvlsSupported, src/include/device.h:423-440; min and max
 * are its MinMax, avg its PreMulSum or SumPostDiv, enqueue.cc:1840-1877). */
bool tc_nccl_nvls_redop_ok(uint8_t dtype, uint8_t redop);
/* nccl-tests' name of the type ("float", "half", "bfloat16", "f8e4m3",
 * "int8", "double"); "float" for NULL or an unknown name. */
const char *tc_dtype_nccl_name(const char *name);

/* The size nccl-tests runs for op on p ranks when asked for bytes of
 * elements of elt bytes (its GetCollByteCount functions): count =
 * floor(bytes / elt); all-gather, reduce-scatter and all-to-all move
 * (count / p) & ~(16 / elt - 1) elements per rank, p of them in all; the
 * others count. elt = 0: bytes unchanged. */
double tc_coll_rounded_bytes(tc_op op, uint32_t p, double bytes, uint32_t elt);

/* req->bytes rounded as above; refuses (TC_EINVAL, one line naming the
 * smallest size that works) a size that rounds to zero elements. */
tc_status tc_coll_round(tc_coll_req *req, tc_err *err);

/* The bytes of one block when a buffer of bytes is cut into nblk blocks:
 * bytes / nblk without elements; with elements of elt bytes, MPICH's split
 * (the first count mod nblk blocks one element more) and its largest
 * block, which the evaluators time every block at. */
double tc_block_bytes(double bytes, uint32_t elt, uint32_t nblk);

struct tc_sched;
typedef tc_status (*tc_emit_fn)(const struct tc_sched *s, uint32_t step, tc_xfers *out);
/* The transfers of step sent by ranks lo .. hi - 1, in emit's order (an
 * algorithm that has it emits every step grouped by sender, senders in
 * increasing order). */
typedef tc_status (*tc_emit_part_fn)(const struct tc_sched *s, uint32_t step, uint32_t lo, uint32_t hi,
                                     tc_xfers *out);

typedef struct tc_sched {
    tc_coll_req req;
    tc_algo algo;         /* the algorithm that built it */
    uint32_t nblk;        /* blocks of the logical buffer */
    uint32_t nslots;      /* slots per rank (>= nblk; 2 nblk for all-to-all) */
    double blk_bytes;     /* bytes of one block */
    uint32_t nsteps;
    tc_phase *phases;
    uint32_t nphases, phase_cap;
    tc_emit_fn emit;
    tc_emit_part_fn emit_part; /* NULL: a step is only emitted whole */
    void *state;          /* algorithm-private, freed with free() unless free_state is set */
    void (*free_state)(void *);
    /* An algorithm whose schedule follows the size (tc_algo_per_size): true
     * where schedule b, built for another size of the same request, carries
     * exactly a's transfers in every step with each byte count scaled by one
     * factor (tc_sched_scale), so that one evaluation serves both sizes;
     * NULL: never assumed. */
    bool (*same_shape)(const struct tc_sched *a, const struct tc_sched *b);
    /* Topology facts some algorithms need (torus dims, node size). */
    int ndims;
    uint32_t dims[TC_MAX_DIMS];
    uint8_t wrap[TC_MAX_DIMS];
    uint32_t node_size;
    uint32_t params[8];   /* algorithm-private integers */
    /* nccl-* schedules (proto != TC_PROTO_NONE): what the protocol costs,
     * in place of the topology's alpha (docs/MODEL.md, "NCCL's protocols").
     * Every transfer pays lat_intra_s (both ends in one scale-up node) or
     * lat_inter_s after it may go, not serialized with the sender's other
     * transfers (channels run in parallel); its wire bytes are its bytes
     * times wire; its rate (bytes of payload per second) is at most
     * rate_cap_Bps (0: none); the collective pays base_s once. In flow
     * mode a sender runs at most credit_steps steps ahead of a receiver in
     * its node, credit_steps_inter of one in another node. */
    tc_proto proto;
    double base_s, lat_intra_s, lat_inter_s, wire, rate_cap_Bps;
    uint32_t credit_steps, credit_steps_inter; /* inside a scale-up node; between nodes */
    uint32_t channels;    /* channels the schedule uses */
    /* Lanes (> 1): the transfers of lane k form a schedule of their own
     * that shares only the network with the others (NCCL's channels run
     * independently): the flow simulator gives every rank a step of its
     * own in each lane. 0 or 1: one lane. */
    uint32_t lanes;
    tc_algo nccl_impl;    /* nccl-*: the schedule's own algorithm (nccl-ring or nccl-tree); mpich: its choice */
    /* nccl-tree: the rank pairs of the longest root-to-leaf path of its
     * first channel's tree (its latency is twice theirs: up and down);
     * owned, freed with the schedule. */
    uint32_t *lat_pairs;
    uint32_t nlat_pairs;
    /* lat_pairs are every (child, parent) edge of the tree instead: the
     * latency is twice its longest root-to-leaf path by latency (nccl-tree
     * on a multidc, where the long-haul links may lie off the deepest path). */
    bool lat_tree;
    /* lat_pairs are a chain's hops, its latency their sum once (nccl-ring's
     * broadcast and reduce: channel 0's chain). */
    bool lat_once;
    /* nccl-*: a rank's sends in a lane leave one after another, even under
     * NCCL's credits (flow): a chain's source has no receive to wait for,
     * and NCCL's thread block copies its chunks in order (nccl-ring's
     * broadcast and reduce). */
    bool send_in_order;
    /* Pipelined lanes (pipe_hops > 0): lane k's chunk c (of pipe_chunks)
     * crosses hop h (of pipe_hops) at step c + h, and step t emits each
     * lane's active hops max(0, t + 1 - pipe_chunks) .. min(t, pipe_hops -
     * 1) in order. Formula and steps then time each lane by the
     * pipeline's recurrence instead of lock step (tc_steps_pipeline):
     * nccl-ring's broadcast and reduce, whose channels' chains cross the
     * nodes at other steps. 0: lock step. pipe_lanes: the pipelines a
     * step emits, one after another (the channels; over sub-groups, each
     * group's channels in turn); transfer lane = pipeline mod lanes. */
    uint32_t pipe_hops, pipe_chunks, pipe_lanes;
    /* nccl-*: under NCCL's credits (flow, deps auto) a rank still runs
     * ahead of its receiver by the credits, but its sends in a lane to one
     * receiver (one connection, a FIFO sent in order) go onto the wire one
     * step after another: such a send starts once the sends of earlier
     * steps to that receiver have left, not sharing its link with them;
     * sends to other receivers (other connections) share it; the step
     * latencies of consecutive steps still overlap (nccl-ring's all-reduce,
     * reduce-scatter and all-gather, nccl-tree, nccl-pat). */
    bool wire_in_order;
    /* nccl-pat, with wire_in_order: a rank's sends also start in step
     * order across its connections: one still waiting for its receiver's
     * credit holds the rank's later sends to other receivers (PAT's ops
     * run one after another in one thread block, and patCopy waits for
     * the credit before the block goes on: NVIDIA/nccl v2.23.4-1
     * src/device/all_gather.h:102-108, src/device/prims_simple.h:979-1000);
     * once started, they share the link. */
    bool credit_in_order;
    /* In-network reduction (nccl-nvls, nccl-nvls-tree): participants p ..
     * p + nsw - 1 are switches, which receive transfers, reduce them and
     * send (multicast) like ranks; the data checker keeps a buffer for
     * each. Participant p + i is the node switch of the scale-up node that
     * holds rank sw_rank[i] (owned, freed with the schedule). */
    uint32_t nsw;
    uint32_t *sw_rank;
    /* Switches in the fabric (nccl-collnet-*; NULL: all node switches):
     * switch i is a Clos switch at level sw_level[i] (1 = leaf; 0: the
     * node switch) above the rank sw_rank[i], the one whose index within
     * that rank's level-L ancestors (the up-link choices b_1..b_L as
     * b_1 + w_1 (b_2 + ...)) is sw_pick[i]. Owned, freed with the schedule. */
    uint8_t *sw_level;
    uint32_t *sw_pick;
} tc_sched;

/* The bytes of each transfer a counted phase declares (tc_phase.blk_xfers):
 * xfer_blks of the schedule's blocks, one where 0. */
static inline double tc_phase_xfer_bytes(const tc_sched *s, const tc_phase *ph)
{
    return ph->xfer_blks ? s->blk_bytes * ph->xfer_blks : s->blk_bytes;
}

/* Participants of a schedule: its ranks and its switches. */
static inline uint32_t tc_sched_parts(const tc_sched *s)
{
    return s->req.p + s->nsw;
}

/* The topology vertex of participant id: a rank's endpoint (map NULL:
 * rank r on endpoint r), a switch participant's node switch or Clos
 * switch. */
static inline uint32_t tc_sched_vertex(const tc_sched *s, const tc_topo *t, const uint32_t *map, uint32_t id)
{
    if (id < s->req.p)
        return map ? map[id] : id;
    uint32_t i = id - s->req.p, r = s->sw_rank[i], e = map ? map[r] : r;
    if (s->sw_level && s->sw_level[i]) {
        uint32_t L = s->sw_level[i];
        return t->level_vbase[L] + s->sw_pick[i] + t->wprod[L] * (tc_topo_slot(t, e) / t->span[L]);
    }
    return t->node_vbase + e / t->node_size;
}

/* NCCL v2.21.5-1's choice (its tuning model, src/graph/tuning.cc;
 * bandwidths from the topology): the algorithm (nccl-ring, nccl-tree,
 * nccl-nvls, nccl-nvls-tree, or v2.23.4-1's nccl-pat where NCCL enables it,
 * into *algo) and protocol with the least predicted time among those req
 * allows; *pred_s its time. For all-to-all: nccl-a2a and the protocol NCCL
 * gives its point-to-point work (its tuning model has none: *pred_s is
 * topocc's estimate, coll/nccl_a2a.c). */
tc_proto tc_nccl_choose(const tc_coll_req *req, const tc_topo *topo, tc_algo *algo, double *pred_s);

/* Parses "ring", "ring:chunks=8", "dbtree:chunks=64", "rhd:order=far",
 * "binomial:tree=highbit,root=3" into req->algo/chunks/root/variant. */
/* mpich's choice for req (MPICH v5.0.1's MPIR selection, coll/mpich.c):
 * *out is req with the algorithm MPICH runs (variant MPICH's, chunks 0;
 * throttle kept for scattered). TC_EINVAL, one line, where MPICH runs an
 * algorithm topocc does not have. */
tc_status tc_mpich_choose(const tc_coll_req *req, tc_coll_req *out, tc_err *err);
/* mpich on p ranks placed by map (rank -> endpoint; NULL: the identity) on
 * t: TC_OK when no two share a node of t, else TC_EINVAL with one line (on
 * nodes of several ranks MPICH composes node-aware algorithms). */
tc_status tc_mpich_map_check(uint32_t p, const tc_topo *t, const uint32_t *map, tc_err *err);
/* mpich's run as results name it: "mpich:rhd", "mpich:scattered,throttle=4"
 * (chosen: the algorithm picked; throttle: tc_coll_req.throttle). */
char *tc_mpich_name(tc_algo chosen, uint32_t throttle, char *buf, size_t len);
tc_status tc_algo_parse(const char *s, tc_coll_req *req, tc_err *err);
/* Refuses (TC_EINVAL, one line naming spec) a parsed algorithm's chunks=
 * where it does not pipeline (only ring, biring, dbtree, dbtree-fa, hier,
 * hier-dc, segring and the torus rings take them) and its root= where no
 * operation of ops (n of them) has a root (broadcast, reduce). */
tc_status tc_algo_check_options(const tc_coll_req *req, const char *spec, const tc_op *ops, int n, tc_err *err);

/* The option a variant is written as ("order=far"); "" for the default. */
const char *tc_variant_name(tc_variant v);

/* Writes req's algorithm with the options it sets, in the one order
 * tc_algo_parse reads back: "rhd", "rhd:order=far", "ring:chunks=8,root=2".
 * Returns buf. */
char *tc_algo_format(const tc_coll_req *req, char *buf, size_t len);

/* The algorithm and its variant as results name it: "rhd" (the default),
 * "rhd:order=far", "binomial:tree=highbit". Returns buf. */
char *tc_algo_variant_name(tc_algo a, tc_variant v, char *buf, size_t len);

/* Whether (op, algo) is valid for p ranks on topo (topo may be NULL for
 * topology-independent algorithms). On false, err says why and lists what is
 * accepted. */
bool tc_coll_valid(tc_op op, tc_algo algo, uint32_t p, const tc_topo *topo, tc_err *err);

/* The algorithms a request tries: [*lo, *hi), every MPI-style one for
 * auto, else its own. */
void tc_coll_candidates(const tc_coll_req *req, int *lo, int *hi);
/* Whether auto leaves candidate a out (tc_coll_req.among). */
static inline bool tc_coll_left_out(const tc_coll_req *req, int a)
{
    return req->algo == TC_ALGO_AUTO && req->among && !((req->among >> a) & 1);
}
/* req as candidate algorithm a at bytes: auto's candidates run with their
 * default chunks and variant. */
tc_coll_req tc_coll_candidate(const tc_coll_req *req, tc_algo a, double bytes);

/* Builds the schedule of req on topo (topo may be NULL except for torus*
 * and hier). algo must not be TC_ALGO_AUTO (the evaluators resolve it). */
tc_status tc_coll_build(const tc_coll_req *req, const tc_topo *topo, tc_sched **out, tc_err *err);
void tc_sched_free(tc_sched *s);

/* Emits the transfers of step (0 <= step < nsteps) into out (cleared first). */
tc_status tc_sched_emit(const tc_sched *s, uint32_t step, tc_xfers *out);
/* All-pairs steps (p (p - 1) transfers: 4.3 x 10^9 on 65,536 ranks) are
 * emitted in parts, by ranges of senders, so that evaluators hold about
 * `chunk` transfers at a time: tc_sched_part_senders gives the senders of
 * one part for a step of phase ph (p, the whole step, when the schedule
 * has no emit_part or the step holds no more than chunk transfers), and
 * tc_sched_emit_part emits the transfers of senders lo .. hi - 1 (with
 * emit_part; TC_EINTERNAL without). The parts of a step, in order, are
 * the step as tc_sched_emit gives it (tests/test_coll_parts.c). */
uint32_t tc_sched_part_senders(const tc_sched *s, const tc_phase *ph, size_t chunk);
/* The chunk the library takes: 4 Mi transfers, about 128 MiB. */
#define TC_SCHED_PART_CHUNK ((size_t)1 << 22)
tc_status tc_sched_emit_part(const tc_sched *s, uint32_t step, uint32_t lo, uint32_t hi, tc_xfers *out);
/* The transfers of the whole schedule and their bytes (at its current
 * size), exactly: each phase's first step times its repeat. */
tc_status tc_sched_count(const tc_sched *s, uint64_t *transfers, double *bytes, tc_err *err);

/* Changes the schedule's size to bytes (with elements: already rounded,
 * tc_coll_round). Every transfer carries whole blocks, so a sweep over
 * sizes builds a schedule once and rescales it: blk_bytes and the phases'
 * bytes scale together by tc_sched_scale (the size ratio without elements,
 * the ratio of the largest blocks with them). */
double tc_sched_scale(const tc_sched *s, double bytes);
void tc_sched_set_bytes(tc_sched *s, double bytes);

/* The phase containing step. */
const tc_phase *tc_sched_phase_of(const tc_sched *s, uint32_t step);

/* Executes the schedule on integer buffers and verifies the exact result on
 * every rank, and every phase's declared metadata (pattern, senders, bytes,
 * fanout, fanin, rank_bytes, rank_bytes_in) against every step's transfers.
 * Memory O(p nslots). Returns TC_OK or TC_EINTERNAL with the first mismatch
 * in err. */
tc_status tc_sched_check(const tc_sched *s, tc_err *err);

/* tc_sched_check on a sample, for rank counts whose p x nslots buffers do
 * not fit: the same blocks_per_rank slots of [0, nblk), drawn from seed
 * (the same seed, the same sample), are tracked on every rank, so memory is
 * O(blocks_per_rank p) plus O(nslots) for the slot map; only the segments
 * that write a tracked slot are executed, and the final result is verified
 * for the tracked slots. The traffic and metadata checks are those of
 * tc_sched_check, on every step in full, so run time still grows with the
 * transfers emitted. A segment that writes a tracked slot must read a
 * tracked slot (true of every algorithm whose blocks keep their slot index,
 * i.e. all but all-to-all): otherwise, and for all-to-all, it returns
 * TC_EINVAL. With blocks_per_rank >= nslots it is tc_sched_check. */
tc_status tc_sched_check_sampled(const tc_sched *s, uint32_t blocks_per_rank, uint64_t seed, tc_err *err);

/* For algorithm implementations: append a phase of repeat steps. */
tc_phase *tc_sched_add_phase(tc_sched *s, uint32_t repeat, tc_pattern pat, int64_t arg,
                             double bytes, const char *label);

/* ---- collectives over sub-groups (coll/group.c) ---------------------------
 * A job's p ranks split into ngroups disjoint groups of size ranks each (a
 * tensor-parallel group inside each node, a data-parallel group across
 * nodes, one axis of a torus slice); every group runs the same collective at
 * the same time. A group's inner rank i is job rank members[g size + i]. */
typedef struct tc_groups {
    uint32_t p;                 /* the job's ranks */
    uint32_t ngroups, size;     /* groups, ranks in each (>= 2) */
    const uint32_t *members;    /* ngroups x size job ranks, group by group */
    /* ndims > 0: every group is a torus of these dimensions (groups along
     * torus axes; inner ranks numbered first dimension fastest), which the
     * torus algorithms need. 0: none. */
    int ndims;
    uint32_t dims[TC_MAX_DIMS];
    uint8_t wrap[TC_MAX_DIMS];
} tc_groups;

/* Checks that g partitions 0..p-1 into ngroups groups of size >= 2 ranks
 * (every rank in exactly one group); TC_EINVAL with one line otherwise. */
tc_status tc_groups_check(const tc_groups *g, tc_err *err);

/* mpich over sub-groups: TC_OK when no two ranks of a group share a node
 * of t (map: job rank -> endpoint, NULL the identity), else TC_EINVAL with
 * one line: MPICH composes node-aware algorithms there (coll/mpich.c). */
tc_status tc_groups_mpich_check(const tc_groups *g, const tc_topo *t, const uint32_t *map, tc_err *err);

/* The topology an inner schedule (one group's) is valid for and built on:
 * NULL for plain groups (topology-independent algorithms only), else *buf
 * filled as a torus of g's dims (only the fields algorithms read). */
const tc_topo *tc_groups_inner_topo(const tc_groups *g, tc_topo *buf);

/* Whether (op, algo) is valid for one group of g: tc_coll_valid on the
 * group's size and inner topology; NCCL's algorithms are accepted here and
 * checked on the group's NCCL view (tc_groups_nccl_view) when evaluated. */
bool tc_coll_valid_groups(tc_op op, tc_algo algo, const tc_groups *g, tc_err *err);

/* The topology an NCCL communicator of one group sees, for NCCL's
 * algorithms over sub-groups: the group's ranks as endpoints of one leaf
 * at a rank's fabric injection bandwidth (t's link latencies, alpha,
 * arch), with scale-up nodes of Gv ranks (t's NVLink, node_reduce; rails
 * of one GPU each on a rail-optimized t) where every group holds Gv ranks
 * of each node it touches, consecutively (members in node order). The
 * inner schedule is built on it; every evaluator routes its transfers on
 * t. *out owned by the caller (tc_topo_free). TC_EINVAL, one line, where
 * the groups do not hold whole, equal shares of nodes. */
tc_status tc_groups_nccl_view(const tc_groups *g, const tc_topo *t, const uint32_t *map, tc_topo **out, tc_err *err);

/* The wrapper schedule of inner (one group's schedule, inner->req.p ==
 * g->size) run by every group of g at once: its p is the job's, its steps
 * are inner's, a step's transfers are inner's for each group with the
 * group's ranks mapped to job ranks, its phases inner's with pattern
 * GENERIC (the figures stay exact: groups are disjoint), so the formula
 * evaluator costs every phase on the routed graph, groups contending.
 * Takes ownership of inner (freed with the wrapper, or on failure). */
tc_status tc_sched_group(tc_sched *inner, const tc_groups *g, tc_sched **out, tc_err *err);

/* Builds req (req->p: the group's size) for one group and wraps it. */
tc_status tc_coll_build_groups(const tc_coll_req *req, const tc_groups *g, tc_sched **out, tc_err *err);

/* A wrapper's inner schedule (NULL: s is not a wrapper). It is kept at the
 * wrapper's size (tc_sched_set_bytes on the wrapper reaches it when the
 * wrapper next emits). */
tc_sched *tc_sched_group_inner(const tc_sched *s);
/* A wrapper's groups: *ngroups x *size job ranks, group by group (NULL:
 * not a wrapper). */
const uint32_t *tc_sched_group_members(const tc_sched *s, uint32_t *ngroups, uint32_t *size);

/* Verifies a wrapper: no transfer crosses groups, and each group's
 * transfers, mapped back to its inner ranks, pass tc_sched_check (every
 * group's result is its own collective's, the inner phases' figures
 * exact). */
tc_status tc_sched_check_groups(const tc_sched *s, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
