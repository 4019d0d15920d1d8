/*
 * torus_rings.c - dimension-ordered ring algorithms on a torus: torus
 * (unidirectional), torus-bi (bidirectional) and torus-mp (multi-port).
 *
 * Rank r is endpoint r; its coordinates run first dimension fastest. A ring
 * along dimension d links the ranks that differ only in coordinate d; in the
 * positive direction coordinate x sends to x + 1 (mod d_d), in the negative
 * one to x - 1. A mesh dimension (no wraparound) still closes the ring
 * logically: the last-to-first transfer travels back along the line.
 *
 * All-reduce is a reduce-scatter along the dimensions in order, each stage a
 * ring reduce-scatter (k - 1 steps for a dimension of size k) on the block
 * set the previous stages left, then the all-gathers in reverse order. The
 * schedules are topocc's; the idea is that of the bucket algorithms of Jain
 * & Sabharwal, "Optimal bucket algorithms for large MPI collectives on torus
 * interconnects", ICS 2010 (abstract read: all-gather, reduce-scatter and
 * all-reduce as rings per dimension, on bidirectional links), whose exact
 * schedules are not reproduced here. Reduce-scatter and all-gather
 * are the halves. Block b is finally owned by rank b: the set a rank holds
 * after the stages of dimensions F is the blocks whose coordinates in F
 * equal its own, and a stage along d splits that set by coordinate d.
 *
 *   torus:    one part, dimensions 0, 1, ..., positive rings.
 *   torus-bi: the data in two halves, one on the positive and one on the
 *             negative rings, concurrently; halves the bandwidth term.
 *   torus-mp: the data in 2D parts, one per (first dimension j, direction):
 *             part (j, dir) reduce-scatters along j, j+1, ..., j+D-1 (mod D)
 *             in direction dir, then all-gathers in reverse, so all 2D ports
 *             of a node are busy at once (the multiported idea of Sack &
 *             Gropp, "Collective algorithms for multiported torus
 *             networks", ACM TOPC 1(2), 2015, abstract read; their
 *             algorithms are not reproduced). With unequal dimension
 *             sizes parts change stage at different times.
 *
 * Dimensions of size 1 have no ring and are skipped (D above counts the
 * others). In one step, transfers of different parts to the same neighbour
 * with the same kind (reduce or copy) are one message: in a dimension of size
 * 2 the positive and negative neighbour coincide, so both directions share
 * one transfer there. A phase is an interval of steps in which no part
 * changes stage; its pattern is TC_PAT_TORUS with the union of the active
 * rings in dims_mask and a fan-out of the distinct messages a rank sends.
 *
 * Slots: part q's block b, round k (chunks = c rounds of 1/c of the data, run
 * one after another) is slot (b P + q) c + k, so rank r's reduce-scatter
 * result is the contiguous slots [r P c, (r+1) P c).
 *
 * Fault-aware variants (torus-fa, torus-bi-fa, torus-mp-fa): what a
 * fault-aware library could do (docs/MODEL.md, "Failures"), never auto's
 * choice. The same schedules, except that a line (the ranks that differ
 * only in coordinate d) of a wraparound dimension with exactly one failed
 * cable (either direction failed counts) is run as a line cut at that
 * cable: with l = (x - c) mod n, c the coordinate just after the cut, ring
 * position i visits l = 2i for i < ceil(n/2) and l = 2(n-1-i) + 1 after
 * (0, 2, 4, ..., then the odd ones down to 1), the folded ring. Its hops are
 * 1 or 2 line hops, none crosses the cut, and each directed cable carries
 * exactly one hop of the ring (so the bidirectional parts put two flows on
 * every directed cable of the line). The ring schedule runs in position
 * space: position i ends owning subset fold(i), its own coordinate, so
 * ownership, and with it every later stage, is as in the base algorithm.
 * The cuts are decided when the schedule is built, from the topology as it
 * is (rank r on endpoint r). Kept as plain rings, routed as the oblivious
 * algorithm's: lines with no failed cable (a healthy network gives exactly
 * the base schedule), lines with two or more (not connected within the
 * dimension: every order needs the routing's detours), mesh dimensions (a
 * failed cable splits the line) and dimensions of size 4 or less (size 3:
 * the folded hop 0 -> 2 is one hop across the cut the other way round;
 * size 4: the hops 0 <-> 2 and 1 <-> 3 are half way round, and dimension
 * order breaks the tie by the source's parity, so some go across the cut
 * and are detoured; size 2: the two neighbours coincide). A phase that
 * moves data along a folded line is TC_PAT_GENERIC (its transfers are no
 * longer ring-neighbour translations; the evaluators route them on the
 * graph); the others keep TC_PAT_TORUS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"

#define TR_MAX_PARTS (2 * TC_MAX_DIMS)
#define TR_MAX_STAGES (2 * TC_MAX_DIMS)

typedef enum { TR_UNI, TR_BI, TR_MP } tr_kind;

typedef struct tr_part {
    int dir;                           /* +1 or -1 */
    uint32_t norder, nst;
    uint8_t order[TC_MAX_DIMS];        /* the dimensions in reduce-scatter order */
    uint8_t st_oi[TR_MAX_STAGES];      /* stage i works on dimension order[st_oi[i]] */
    uint8_t st_ag[TR_MAX_STAGES];      /* 1: all-gather stage, 0: reduce-scatter */
    uint32_t start[TR_MAX_STAGES + 1]; /* first step of stage i (within a round) */
} tr_part;

/* A line's cut: the coordinate just after its failed cable, or TR_RING. */
#define TR_RING UINT32_MAX
/* Smallest dimension folded (the header says why 2, 3 and 4 are not). */
#define TR_FOLD_MIN 5

typedef struct tr_state {
    uint32_t nparts, rounds, T;        /* T: steps of one round */
    uint32_t stride[TC_MAX_DIMS];
    tr_part part[TR_MAX_PARTS];
    /* Fault-aware: cut[d][line] for a dimension with a folded line (NULL:
     * every line of d is a ring); the arrays live in cuts[] below. */
    uint32_t *cut[TC_MAX_DIMS];
    uint32_t cuts[];
} tr_state;

typedef struct tr_member {
    uint32_t q, oi, tt; /* part, its dimension's order index, step within the stage */
    int dir;
} tr_member;

typedef struct tr_group {
    uint32_t dim;
    int dir;            /* neighbour direction (+1 when both coincide) */
    bool ag;
    uint32_t blocks;    /* per transfer, over all members */
    uint32_t nmem;
    tr_member mem[TR_MAX_PARTS];
} tr_group;

static bool torus_valid_common(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    if (op != TC_OP_ALLREDUCE && op != TC_OP_REDUCESCATTER && op != TC_OP_ALLGATHER) {
        tc_fail(err, TC_EINVAL, "torus rings implement allreduce, reducescatter and allgather");
        return false;
    }
    if (!topo || topo->kind != TC_TOPO_TORUS) {
        tc_fail(err, TC_EINVAL, "needs a torus topology");
        return false;
    }
    if (p != topo->n_endpoints) {
        /* a job on a box of the torus in coordinate order runs on the
         * box's own torus (tc_place_slice_run): one that gets here is not */
        tc_fail(err, TC_EINVAL,
                "needs all %u endpoints of the torus, or the job's ranks on a box of it in coordinate order, "
                "first dimension fastest, as --place slice puts them",
                topo->n_endpoints);
        return false;
    }
    uint64_t n = 1;
    for (int d = 0; d < topo->ndims && d < TC_MAX_DIMS; d++)
        n *= topo->dims[d];
    if (topo->ndims < 1 || topo->ndims > TC_MAX_DIMS || n != p) {
        tc_fail(err, TC_EINVAL, "the torus dimensions do not multiply to its %u endpoints", topo->n_endpoints);
        return false;
    }
    return true;
}

static uint32_t coord(const tc_sched *s, const tr_state *ts, uint32_t r, uint32_t d)
{
    return r / ts->stride[d] % s->dims[d];
}

/* Rank r's line along dimension d: r with coordinate d removed, counted
 * over the other coordinates first fastest (topo.h's line index). */
static uint32_t line_index(const tc_sched *s, const tr_state *ts, uint32_t r, uint32_t d)
{
    uint32_t st = ts->stride[d];
    return r / (st * s->dims[d]) * st + r % st;
}

/* The folded ring on a line of n: position i -> line coordinate l, and back. */
static uint32_t fold_l(uint32_t i, uint32_t n)
{
    return i < (n + 1) / 2 ? 2 * i : 2 * (n - 1 - i) + 1;
}

static uint32_t fold_pos(uint32_t l, uint32_t n)
{
    return l % 2 == 0 ? l / 2 : n - 1 - (l - 1) / 2;
}

/* Ring position <-> coordinate on a line cut before coordinate c (TR_RING:
 * the identity). */
static uint32_t pos_of(uint32_t x, uint32_t c, uint32_t n)
{
    return c == TR_RING ? x : fold_pos((x + n - c) % n, n);
}

static uint32_t coord_of(uint32_t i, uint32_t c, uint32_t n)
{
    return c == TR_RING ? i : (fold_l(i, n) + c) % n;
}

/* Blocks one member sends per transfer: the set left after the stages before
 * it, split by its own dimension. */
static uint32_t member_blocks(const tc_sched *s, const tr_part *pt, uint32_t oi)
{
    uint32_t n = s->req.p;
    for (uint32_t m = 0; m <= oi; m++)
        n /= s->dims[pt->order[m]];
    return n;
}

/* The messages every rank sends in step t of a round, grouped by neighbour and
 * kind; returns their count and the active rings in *mask. */
static uint32_t groups_at(const tc_sched *s, const tr_state *ts, uint32_t t, tr_group *g, uint32_t *mask)
{
    uint32_t ng = 0;
    *mask = 0;
    for (uint32_t q = 0; q < ts->nparts; q++) {
        const tr_part *pt = &ts->part[q];
        uint32_t i = 0;
        while (i < pt->nst && pt->start[i + 1] <= t)
            i++;
        if (i == pt->nst)
            continue;
        uint32_t oi = pt->st_oi[i], d = pt->order[oi];
        bool ag = pt->st_ag[i];
        int ndir = s->dims[d] == 2 ? 1 : pt->dir;
        *mask |= 1u << (2 * d + (pt->dir < 0));
        uint32_t k = 0;
        while (k < ng && !(g[k].dim == d && g[k].dir == ndir && g[k].ag == ag))
            k++;
        if (k == ng) {
            g[ng].dim = d;
            g[ng].dir = ndir;
            g[ng].ag = ag;
            g[ng].blocks = 0;
            g[ng].nmem = 0;
            ng++;
        }
        g[k].blocks += member_blocks(s, pt, oi);
        g[k].mem[g[k].nmem++] = (tr_member){q, oi, t - pt->start[i], pt->dir};
    }
    return ng;
}

/* Emits the blocks of part q whose coordinates equal r's in the dimensions
 * order[0..oi) and equal j in dimension order[oi], in ascending order. */
static void emit_blocks(const tc_sched *s, const tr_state *ts, uint32_t q, uint32_t oi, uint32_t r, uint32_t j,
                        uint32_t round, tc_xfers *x)
{
    const tr_part *pt = &ts->part[q];
    uint32_t fixed = 0, b = 0, fd[TC_MAX_DIMS], cnt[TC_MAX_DIMS], nf = 0;
    for (uint32_t m = 0; m < oi; m++) {
        uint32_t d = pt->order[m];
        fixed |= 1u << d;
        b += coord(s, ts, r, d) * ts->stride[d];
    }
    fixed |= 1u << pt->order[oi];
    b += j * ts->stride[pt->order[oi]];
    for (int d = 0; d < s->ndims; d++)
        if (!(fixed & (1u << d)) && s->dims[d] > 1) {
            cnt[nf] = 0;
            fd[nf++] = (uint32_t)d;
        }
    uint32_t P = ts->nparts, c = ts->rounds;
    for (;;) {
        uint32_t slot = (b * P + q) * c + round;
        tc_xfers_seg(x, slot, slot, 1);
        uint32_t i = 0;
        for (; i < nf; i++) {
            uint32_t d = fd[i];
            b += ts->stride[d];
            if (++cnt[i] < s->dims[d])
                break;
            b -= s->dims[d] * ts->stride[d];
            cnt[i] = 0;
        }
        if (i == nf)
            break;
    }
}

static tc_status emit_torus(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const tr_state *ts = s->state;
    uint32_t p = s->req.p, round = step / ts->T, t = step % ts->T, mask;
    tr_group g[TR_MAX_PARTS];
    uint32_t ng = groups_at(s, ts, t, g, &mask);
    for (uint32_t r = 0; r < p; r++)
        for (uint32_t k = 0; k < ng; k++) {
            uint32_t d = g[k].dim, n = s->dims[d], xd = coord(s, ts, r, d);
            uint32_t c = ts->cut[d] ? ts->cut[d][line_index(s, ts, r, d)] : TR_RING, i = pos_of(xd, c, n);
            uint32_t nx = coord_of((i + (g[k].dir > 0 ? 1 : n - 1)) % n, c, n);
            uint32_t dst = r - xd * ts->stride[d] + nx * ts->stride[d];
            tc_xfers_add(x, r, dst, g[k].blocks * s->blk_bytes, !g[k].ag);
            if (!x->with_data)
                continue;
            for (uint32_t m = 0; m < g[k].nmem; m++) {
                const tr_member *mb = &g[k].mem[m];
                /* Ring reduce-scatter step tt sends the subset i - tt - 1,
                 * all-gather step tt the subset i - tt (mirrored for the
                 * negative direction), i the ring position (the coordinate
                 * unless the line is folded); ring.c's schedule per
                 * dimension, the subset named by its coordinate. */
                uint32_t off = g[k].ag ? mb->tt : mb->tt + 1;
                uint32_t j = coord_of(mb->dir > 0 ? (i + n - off % n) % n : (i + off) % n, c, n);
                emit_blocks(s, ts, mb->q, mb->oi, r, j, round, x);
            }
        }
    return TC_OK;
}

static void add_stage(tr_part *pt, uint32_t oi, bool ag, const uint32_t *dims)
{
    pt->st_oi[pt->nst] = (uint8_t)oi;
    pt->st_ag[pt->nst] = ag;
    pt->start[pt->nst + 1] = pt->start[pt->nst] + dims[pt->order[oi]] - 1;
    pt->nst++;
}

/* Whether the fault-aware variants may fold the lines of dimension d of t:
 * a wraparound ring of at least TR_FOLD_MIN, on a network with failures. */
static bool foldable(const tc_topo *t, int d)
{
    return t && t->n_failed && t->dims[d] >= TR_FOLD_MIN && t->dim_cables[d] == t->dims[d];
}

/* The cuts of dimension d's lines on t (cut[line], line as line_index):
 * the coordinate just after the line's failed cable where exactly one of
 * its n cables has failed (either direction), TR_RING elsewhere. Returns
 * whether some line is cut. */
static bool line_cuts(const tc_topo *t, int d, uint32_t *cut)
{
    uint32_t n = t->dims[d], st = t->stride[d], lines = t->n_endpoints / n;
    bool any = false;
    for (uint32_t line = 0; line < lines; line++) {
        uint32_t v0 = line / st * st * n + line % st, nfail = 0, c = TR_RING;
        for (uint32_t x = 0; x < n && nfail < 2; x++) {
            /* cable x joins x to x + 1: its + link and the - link after it */
            uint32_t l = tc_topo_torus_link(t, v0 + x * st, d, +1);
            if (tc_topo_link_failed(t, l) || tc_topo_link_failed(t, l + 1)) {
                nfail++;
                c = (x + 1) % n;
            }
        }
        cut[line] = nfail == 1 ? c : TR_RING;
        any = any || nfail == 1;
    }
    return any;
}

static tc_status torus_build_kind(tr_kind kind, bool fa, const tc_topo *topo, const tc_coll_req *req, tc_sched *s,
                                  tc_err *err)
{
    uint32_t p = req->p, c = req->chunks ? req->chunks : 1;
    uint32_t eff[TC_MAX_DIMS], ne = 0;
    for (int d = 0; d < s->ndims; d++)
        if (s->dims[d] > 1)
            eff[ne++] = (uint32_t)d;
    uint32_t P = kind == TR_UNI ? 1 : kind == TR_BI ? 2 : (ne ? 2 * ne : 1);
    if ((uint64_t)p * P * c > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "%u ranks x %u parts x %u chunks is too many blocks", p, P, c);
    size_t ncut = 0;
    for (int d = 0; fa && d < s->ndims; d++)
        if (foldable(topo, d))
            ncut += p / s->dims[d];
    tr_state *ts = tc_calloc(1, sizeof *ts + ncut * sizeof ts->cuts[0]);
    if (!ts)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    s->state = ts;
    ncut = 0;
    for (int d = 0; fa && d < s->ndims; d++)
        if (foldable(topo, d)) {
            if (line_cuts(topo, d, ts->cuts + ncut))
                ts->cut[d] = ts->cuts + ncut;
            ncut += p / s->dims[d];
        }
    s->emit = emit_torus;
    ts->nparts = P;
    ts->rounds = c;
    for (int d = 0, st = 1; d < s->ndims; d++) {
        ts->stride[d] = (uint32_t)st;
        st *= (int)s->dims[d];
    }
    s->nblk = s->nslots = p * P * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    bool rs = req->op != TC_OP_ALLGATHER, ag = req->op != TC_OP_REDUCESCATTER;
    for (uint32_t q = 0; q < P; q++) {
        tr_part *pt = &ts->part[q];
        uint32_t first = kind == TR_MP ? q / 2 : 0;
        pt->dir = (kind == TR_UNI || q % 2 == 0) ? 1 : -1;
        pt->norder = ne;
        for (uint32_t m = 0; m < ne; m++)
            pt->order[m] = (uint8_t)eff[(first + m) % ne];
        if (rs)
            for (uint32_t m = 0; m < ne; m++)
                add_stage(pt, m, false, s->dims);
        if (ag)
            for (uint32_t m = ne; m-- > 0;)
                add_stage(pt, m, true, s->dims);
    }
    ts->T = ts->part[0].start[ts->part[0].nst];
    if (ts->T == 0)
        return TC_OK;
    /* Phase boundaries: every step at which some part enters a stage. */
    uint32_t bnd[TR_MAX_PARTS * TR_MAX_STAGES + 1], nb = 0;
    for (uint32_t q = 0; q < P; q++)
        for (uint32_t i = 0; i < ts->part[q].nst; i++)
            bnd[nb++] = ts->part[q].start[i];
    qsort(bnd, nb, sizeof *bnd, tc_cmp_u32);
    uint32_t nu = 0;
    for (uint32_t i = 0; i < nb; i++)
        if (nu == 0 || bnd[nu - 1] != bnd[i])
            bnd[nu++] = bnd[i];
    bnd[nu] = ts->T;
    for (uint32_t k = 0; k < c; k++)
        for (uint32_t i = 0; i < nu; i++) {
            tr_group g[TR_MAX_PARTS];
            uint32_t mask, ng = groups_at(s, ts, bnd[i], g, &mask);
            uint32_t maxb = 0, sumb = 0;
            bool all_ag = true, all_rs = true, one_dim = true, folded = false;
            for (uint32_t j = 0; j < ng; j++) {
                maxb = g[j].blocks > maxb ? g[j].blocks : maxb;
                sumb += g[j].blocks;
                all_ag = all_ag && g[j].ag;
                all_rs = all_rs && !g[j].ag;
                one_dim = one_dim && g[j].dim == g[0].dim;
                folded = folded || ts->cut[g[j].dim];
            }
            char label[32];
            const char *what = all_rs ? "reduce-scatter" : all_ag ? "all-gather" : "rs+ag";
            if (one_dim)
                snprintf(label, sizeof label, "%s dim %u", what, g[0].dim);
            else
                snprintf(label, sizeof label, "%s", what);
            tc_phase *ph = tc_sched_add_phase(s, bnd[i + 1] - bnd[i], folded ? TC_PAT_GENERIC : TC_PAT_TORUS, 0,
                                              maxb * s->blk_bytes, label);
            if (!ph)
                return tc_fail(err, TC_EINTERNAL, "out of memory");
            ph->dims_mask = folded ? 0 : mask;
            /* Each message group is a cyclic shift of the positions of
             * every line along one dimension (a translation along the rings
             * unless a line is folded), so every rank also receives one
             * transfer per group. */
            ph->fanout = ph->fanin = ng;
            ph->rank_bytes = ph->rank_bytes_in = sumb * s->blk_bytes;
        }
    return TC_OK;
}

static bool torus_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    return torus_valid_common(op, p, topo, err);
}

static tc_status torus_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_UNI, false, topo, req, s, err);
}

static tc_status torus_bi_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_BI, false, topo, req, s, err);
}

static tc_status torus_mp_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_MP, false, topo, req, s, err);
}

static tc_status torus_fa_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_UNI, true, topo, req, s, err);
}

static tc_status torus_bi_fa_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_BI, true, topo, req, s, err);
}

static tc_status torus_mp_fa_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    return torus_build_kind(TR_MP, true, topo, req, s, err);
}

const tc_algo_impl tc_impl_torus = {torus_valid, torus_build};
const tc_algo_impl tc_impl_torus_bi = {torus_valid, torus_bi_build};
const tc_algo_impl tc_impl_torus_mp = {torus_valid, torus_mp_build};
/* Fault-aware: valid where the base algorithms are (the header). */
const tc_algo_impl tc_impl_torus_fa = {torus_valid, torus_fa_build};
const tc_algo_impl tc_impl_torus_bi_fa = {torus_valid, torus_bi_fa_build};
const tc_algo_impl tc_impl_torus_mp_fa = {torus_valid, torus_mp_fa_build};
