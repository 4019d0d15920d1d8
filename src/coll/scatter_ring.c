/*
 * scatter_ring.c - broadcast as a binomial scatter then a ring all-gather:
 * MPICH's MPIR_Bcast_intra_scatter_ring_allgather and the scatter it calls,
 * MPII_Scatter_for_bcast (van de Geijn's long-message broadcast; Thakur,
 * Rabenseifner & Gropp, IJHPCA 2005). Sources read: pmodels/mpich, tag
 * v5.0.1, src/mpi/coll/bcast/bcast_intra_scatter_ring_allgather.c and
 * src/mpi/coll/bcast/bcast_utils.c.
 *
 * The buffer is cut into p pieces; piece v belongs to the rank v places
 * after the root (relative rank v = r - root mod p), and every rank keeps
 * pieces at their offset in the buffer (slot v).
 *
 * Scatter, K = ceil(lg p) steps: step k uses m = 2^(K-1-k) (MPICH's mask,
 * from the top down); every relative rank v that is a multiple of 2m with
 * v + m < p sends pieces [v + m, min(v + 2m, p)) (the subtree of v + m) to
 * v + m. The first step is the root alone sending p - 2^(K-1) pieces.
 *
 * Ring all-gather, p - 1 steps: in step i (1 <= i < p) rank r sends to
 * r + 1 the piece of rank r - i + 1 (its own piece first, then the one it
 * received last) and receives the piece of r - i from r - 1.
 *
 * MPICH cuts nbytes by ceiling division, so with nbytes not a multiple of p
 * the last pieces are shorter or empty; here pieces are the blocks of
 * tc_block_bytes (n/p, or whole elements). Cost: (ceil(lg p) + p - 1) alpha
 * + 2 n (p-1)/p beta. chunks is not used.
 */
#include "coll/algos.h"

static bool scatter_ring_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_BROADCAST) {
        tc_fail(err, TC_EINVAL, "scatter-ring implements only broadcast");
        return false;
    }
    return true;
}

/* params: [0] K = ceil(lg p). */
static tc_status emit_scatter_ring(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, root = s->req.root, K = s->params[0];
    if (step < K) {
        uint32_t m = 1u << (K - 1 - step);
        for (uint64_t v = 0; v + m < p; v += 2 * (uint64_t)m) {
            uint32_t first = (uint32_t)v + m;
            uint32_t cnt = p - first < m ? p - first : m;
            tc_xfers_add(x, (uint32_t)((root + v) % p), (uint32_t)(((uint64_t)root + first) % p),
                         cnt * s->blk_bytes, false);
            tc_xfers_seg(x, first, first, cnt);
        }
        return TC_OK;
    }
    uint32_t i = step - K + 1;
    for (uint32_t r = 0; r < p; r++) {
        /* the piece of rank r - i + 1, relative to the root */
        uint32_t piece = (uint32_t)(((uint64_t)r + 2 * (uint64_t)p + 1 - i - root) % p);
        tc_xfers_add(x, r, (r + 1) % p, s->blk_bytes, false);
        tc_xfers_seg(x, piece, piece, 1);
    }
    return TC_OK;
}

static tc_status scatter_ring_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, K = tc_log2_ceil(p);
    s->params[0] = K;
    s->emit = emit_scatter_ring;
    s->nblk = s->nslots = p;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, p);
    if (p == 1)
        return TC_OK;
    for (uint32_t k = 0; k < K; k++) {
        uint32_t m = 1u << (K - 1 - k);
        uint32_t most = p - m < m ? p - m : m; /* the root's transfer is the largest */
        /* The first step has one sender, the root: the shift root -> root + m.
         * Later ones send from every 2m-th rank after the root: generic. */
        tc_phase *ph = tc_sched_add_phase(s, 1, k == 0 ? TC_PAT_SHIFT : TC_PAT_GENERIC, k == 0 ? m : 0,
                                          most * s->blk_bytes, "binomial scatter");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        if (k == 0) {
            ph->src_first = req->root;
            ph->src_count = 1;
        }
    }
    if (!tc_sched_add_phase(s, p - 1, TC_PAT_SHIFT, 1, s->blk_bytes, "ring all-gather"))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

const tc_algo_impl tc_impl_scatter_ring = {scatter_ring_valid, scatter_ring_build};

/* ---- scatter-rd: the binomial scatter, then a recursive-doubling
 * all-gather ----
 *
 * MPICH's MPIR_Bcast_intra_scatter_recursive_doubling_allgather (pmodels/mpich
 * v5.0.1, src/mpi/coll/bcast/bcast_intra_scatter_recursive_doubling_allgather.c),
 * its default broadcast of 12 KiB to 512 KiB on a power-of-two count of 8
 * ranks or more (maint/tuning/coll/mpir/generic.json). The same scatter as
 * above; then lg p steps, mask = 2^i: relative rank v exchanges with
 * v ^ mask, sending the 2^i pieces from its subtree root (v with its low i
 * bits cleared: my_tree_root) and receiving the partner's 2^i from
 * dst_tree_root. MPICH's code for p not a power of two is marked
 * experimental and "will not currently be executed because we are not
 * using recursive doubling for non power of two"; topocc refuses it.
 * Cost: 2 lg p alpha + 2 n (p-1)/p beta. */

static bool scatter_rd_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)topo;
    if (op != TC_OP_BROADCAST) {
        tc_fail(err, TC_EINVAL, "scatter-rd implements only broadcast");
        return false;
    }
    if (!tc_is_pow2(p)) {
        tc_fail(err, TC_EINVAL, "scatter-rd needs a power-of-two rank count (MPICH runs it on those only)");
        return false;
    }
    return true;
}

static tc_status emit_scatter_rd(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, root = s->req.root, K = s->params[0];
    if (step < K)
        return emit_scatter_ring(s, step, x);
    uint32_t i = step - K, mask = 1u << i;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t v = (r + p - root) % p, w = v ^ mask, mine = v >> i << i;
        tc_xfers_add(x, r, (w + root) % p, (double)mask * s->blk_bytes, false);
        tc_xfers_seg(x, mine, mine, mask);
    }
    return TC_OK;
}

static tc_status scatter_rd_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    tc_status st = scatter_ring_build(req, topo, s, err);
    if (st || req->p == 1)
        return st;
    /* the ring all-gather phase becomes lg p exchanges */
    s->nphases--;
    s->nsteps -= s->phases[s->nphases].repeat;
    s->emit = emit_scatter_rd;
    for (uint32_t i = 0; (1u << i) < req->p; i++) {
        tc_phase *ph = tc_sched_add_phase(s, 1, req->root == 0 ? TC_PAT_XOR : TC_PAT_GENERIC, req->root == 0 ? 1 << i : 0,
                                          (double)(1u << i) * s->blk_bytes, "recursive-doubling all-gather");
        if (!ph)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

const tc_algo_impl tc_impl_scatter_rd = {scatter_rd_valid, scatter_rd_build};
