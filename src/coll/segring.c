/*
 * segring.c - Open MPI's segmented ring all-reduce,
 * ompi_coll_base_allreduce_intra_ring_segmented. Source read: open-mpi/ompi,
 * tag v5.0.10, ompi/mca/coll/base/coll_base_allreduce.c (the algorithm),
 * ompi/mca/coll/base/coll_base_functions.h (COLL_BASE_COMPUTED_SEGCOUNT),
 * ompi/mca/coll/tuned/coll_tuned_decision_fixed.c and
 * coll_tuned_allreduce_decision.c (how the segment size is chosen).
 *
 * The vector is cut into p blocks and every block into c segments (Open
 * MPI's num_phases; slot b c + j holds segment j of block b).
 *
 * Reduction, c rounds of p - 1 steps: in round j, step s (0 <= s < p-1) rank
 * r sends segment j of block r - s to r + 1, which adds it. After the c
 * rounds rank r holds block r + 1 reduced in full.
 *
 * Distribution, p - 1 steps: in step k rank r sends the whole block r + 1 - k
 * (all c segments, one message) to r + 1.
 *
 * (c + 1)(p - 1) steps: c(p-1) of n/(pc), then p - 1 of n/p. Cost:
 * (c + 1)(p - 1) alpha + 2 n (p-1)/p beta + n (p-1)/p gamma. c = 1 is the
 * plain ring all-reduce (ompi_coll_base_allreduce_intra_ring), which Open MPI
 * also runs when count < p x segcount.
 *
 * The segment count is chunks= (default 1). Open MPI derives it from a
 * segment size: segcount = segsize / type size, then num_phases =
 * count / (p segcount), plus one when the remainder is at least p and more
 * than half of p segcount. Its fixed decision passes segsize 0 in v5.0.10
 * (no segmentation: the plain ring) and the MCA parameter
 * coll_tuned_allreduce_algorithm_segmentsize defaults to 0; the v4.0 series
 * (tag v4.0.7) used 1 MiB segments whenever n > p x 1 MiB. A count that
 * depends on the size would break rescaling a schedule across a size sweep
 * (tc_sched_set_bytes), so the count is an option and not derived from n:
 * Open MPI 4.0's choice for n bytes is about chunks = n / (p MiB) (rounded
 * up when the remainder is over half of p MiB).
 */
#include "coll/algos.h"

static bool segring_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op != TC_OP_ALLREDUCE) {
        tc_fail(err, TC_EINVAL, "segring implements only allreduce");
        return false;
    }
    return true;
}

/* params: [0] c, the segments per block. */
static tc_status emit_segring(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    uint32_t p = s->req.p, c = s->params[0], per = p - 1;
    uint64_t red = (uint64_t)c * per;
    if (step < red) {
        uint32_t j = step / per, st = step % per;
        for (uint32_t r = 0; r < p; r++) {
            uint32_t b = (r + p - st) % p;
            tc_xfers_add(x, r, (r + 1) % p, s->blk_bytes, true);
            tc_xfers_seg(x, b * c + j, b * c + j, 1);
        }
        return TC_OK;
    }
    uint32_t k = (uint32_t)(step - red);
    for (uint32_t r = 0; r < p; r++) {
        uint32_t b = (r + 1 + p - k) % p;
        tc_xfers_add(x, r, (r + 1) % p, c * s->blk_bytes, false);
        tc_xfers_seg(x, b * c, b * c, c);
    }
    return TC_OK;
}

static tc_status segring_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    uint32_t p = req->p, c = req->chunks ? req->chunks : 1;
    if ((uint64_t)p * c > UINT32_MAX || (uint64_t)(p - 1) * (c + 1) > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "segring: %u segments on %u ranks is too many", c, p);
    s->params[0] = c;
    s->emit = emit_segring;
    s->nblk = s->nslots = p * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    if (p == 1)
        return TC_OK;
    /* The c rounds have the same traffic: one phase. */
    if (!tc_sched_add_phase(s, c * (p - 1), TC_PAT_SHIFT, 1, s->blk_bytes, "segmented reduce-scatter") ||
        !tc_sched_add_phase(s, p - 1, TC_PAT_SHIFT, 1, c * s->blk_bytes, "all-gather"))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

const tc_algo_impl tc_impl_segring = {segring_valid, segring_build};
