/*
 * dbtree.c - double binary trees, after NCCL's ncclGetBtree and
 * ncclGetDtree (NVIDIA/nccl v2.30.7-1, src/graph/trees.cc) and the two-tree
 * idea of Sanders, Speck & Träff, "Two-tree algorithms for full bandwidth
 * broadcast, reduction and scan", Parallel Computing 2009 (abstract read).
 *
 * Against NCCL: for p a power of two the all-reduce trees are
 * ncclGetDtree's for p ranks with NCCL rank k as rank k - 1 mod p (tree 2,
 * NCCL's mirror for even p, coincides with the shift below; the 8-rank
 * trees are tests/test_coll_order.c's table). For other p they differ: NCCL
 * puts rank 0 above the in-order tree of ranks 1..p-1 and mirrors tree 1
 * (p even) or shifts it (p odd); topocc builds the in-order tree over
 * positions 1..p and always shifts. NCCL builds its trees over nodes, with
 * chains inside a node; topocc over ranks. Broadcast and reduce over two
 * trees hung below the root are topocc's (the shape of NCCL's trees for p
 * ranks with the root as NCCL's rank 0).
 *
 * Tree 1 is NCCL's in-order binary tree over positions 1..n: a node's lowest
 * set bit b gives its parent (q ^ b) | 2b (or q ^ b when that is beyond n)
 * and its children q - b/2 and q + b/2 (the largest power of two <= b/2 that
 * stays within n); the root is the largest power of two <= n. Odd positions
 * are its leaves. Tree 2 is tree 1 with every rank moved one position on
 * (cyclically), so the nodes that are interior in tree 2 are leaves in tree 1
 * and vice versa: every rank is interior in at most one tree, and sends and
 * receives about one half of the data in the bandwidth-bound steady state.
 * (NCCL mirrors tree 1 for even n and shifts it for odd n; the shift alone
 * keeps the interior sets disjoint for every n.) Positions hold indices
 * (tree 1 index q - 1 at q, tree 2 index q - 2), and indices ranks: index i
 * is rank i (root + 1 + i below a root); dbtree-fa (coll/dbtree_fa.c)
 * relabels them through tc_dbtree_build_perm (coll/dbtree.h), which keeps
 * the disjoint interiors whatever the relabelling.
 *
 * Each tree carries one half of the data cut into c chunks (default 64,
 * "dbtree:chunks=N"; with tc_coll_req.chunk_bytes, ceil(half / chunk_bytes)): slots [0, c) travel on tree 1, [c, 2c) on tree 2.
 * With D the larger tree depth, a node at depth d sends chunk k up at step
 * k + D - d (reduce) and down to its children at step k + d (broadcast) or
 * k + D + d (all-reduce, right behind the reduction): c + D - 1 steps for
 * broadcast and reduce, c + 2D - 1 for all-reduce.
 *
 * all-reduce uses trees over all p ranks. Broadcast and reduce use trees over
 * the p - 1 other ranks, hung below the root, which sends one half to each
 * tree's root (or receives from them).
 *
 * Traffic in a step is fixed by the windows of active depths, so steps with
 * equal windows (the steady state) form one phase; fill and drain steps are
 * phases of their own. Fan-out and fan-in are exact: ranks fall in classes by
 * (depth, children) in both trees, and each phase takes the largest class.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "coll/algos.h"
#include "coll/dbtree.h"

#define DBT_DEFAULT_CHUNKS 64
#define DBT_MAX_CHUNKS 65536u
#define DBT_MAXDEPTH 64

typedef struct dbt_tree {
    int32_t *parent;  /* per rank; -1 at the top */
    int32_t *child;   /* two per rank; -1 none */
    uint8_t *depth;   /* per rank */
    uint32_t *order;  /* ranks by non-decreasing depth */
    uint32_t off[DBT_MAXDEPTH + 2]; /* order[off[d] .. off[d+1]) have depth d */
    uint32_t maxd;
} dbt_tree;

typedef struct dbt_state {
    uint32_t c, D;
    dbt_tree t[2];
} dbt_state;

/* The chunks of each tree's half: chunks=, else one per chunk_bytes
 * (library: NCCL's tree chunk; at most the 65,536 chunks= accepts), else
 * the default count. */
static uint32_t dbt_chunks(const tc_coll_req *req)
{
    if (req->chunks)
        return req->chunks;
    if (!(req->chunk_bytes > 0))
        return DBT_DEFAULT_CHUNKS;
    double c = ceil(req->bytes / 2 / req->chunk_bytes);
    return c >= DBT_MAX_CHUNKS ? DBT_MAX_CHUNKS : c > 1 ? (uint32_t)c : 1;
}

/* Two sizes of one request cut into the same number of chunks carry the
 * same transfers, each block scaled (the trees follow p, op and root). */
static bool dbt_same_shape(const tc_sched *a, const tc_sched *b)
{
    const dbt_state *x = a->state, *y = b->state;
    return a->same_shape == b->same_shape && a->algo == b->algo && a->req.op == b->req.op &&
           a->req.p == b->req.p && a->req.root == b->req.root && a->req.elt == b->req.elt && a->nblk == b->nblk &&
           a->nsteps == b->nsteps && a->nphases == b->nphases && (!x) == (!y) && (!x || (x->c == y->c && x->D == y->D));
}

static bool dbtree_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    (void)p, (void)topo;
    if (op == TC_OP_BROADCAST || op == TC_OP_REDUCE || op == TC_OP_ALLREDUCE)
        return true;
    tc_fail(err, TC_EINVAL, "double binary tree has no %s", tc_op_name(op));
    return false;
}

/* Rank at position q (1..n) of tree `which`: the rank at index
 * tc_dbtree_index(n, which, q) of the relabelling perm (index -> rank), or
 * without one index i itself, or with a top (broadcast and reduce) rank
 * root + 1 + i: positions hold the ranks root+1 .. root+n. */
static uint32_t pos_rank(uint32_t n, uint32_t which, bool top, uint32_t root, uint32_t p, const uint32_t *perm,
                         uint64_t q)
{
    uint32_t i = tc_dbtree_index(n, which, q);
    if (perm)
        return perm[i];
    return top ? (root + 1 + i) % p : i;
}

static void build_tree(dbt_tree *T, uint32_t p, uint32_t which, bool top, uint32_t root, const uint32_t *perm)
{
    uint32_t n = top ? p - 1 : p;
    uint64_t R = (uint64_t)1 << tc_log2_floor(n);
    for (uint32_t r = 0; r < p; r++) {
        T->parent[r] = -1;
        T->child[2 * r] = T->child[2 * r + 1] = -1;
    }
    for (uint64_t q = 1; q <= n; q++) {
        uint32_t r = pos_rank(n, which, top, root, p, perm, q);
        uint64_t bit = q & (~q + 1), up = tc_dbtree_parent_pos(n, q);
        T->parent[r] = up ? (int32_t)pos_rank(n, which, top, root, p, perm, up) : (top ? (int32_t)root : -1);
        uint64_t low = bit >> 1;
        if (low) {
            T->child[2 * r] = (int32_t)pos_rank(n, which, top, root, p, perm, q - low);
            for (uint64_t l = low; l; l >>= 1)
                if (q + l <= n) {
                    T->child[2 * r + 1] = (int32_t)pos_rank(n, which, top, root, p, perm, q + l);
                    break;
                }
        }
    }
    uint32_t start = pos_rank(n, which, top, root, p, perm, R);
    if (top) {
        T->child[2 * root] = (int32_t)start;
        start = root;
    }
    /* Breadth-first from the top: the queue is the by-depth order. */
    uint32_t head = 0, tail = 1;
    uint32_t cnt[DBT_MAXDEPTH + 1] = {0};
    T->order[0] = start;
    T->depth[start] = 0;
    T->maxd = 0;
    while (head < tail) {
        uint32_t r = T->order[head++];
        cnt[T->depth[r]]++;
        if (T->depth[r] > T->maxd)
            T->maxd = T->depth[r];
        for (int j = 0; j < 2; j++) {
            int32_t ch = T->child[2 * r + j];
            if (ch >= 0) {
                T->depth[ch] = (uint8_t)(T->depth[r] + 1);
                T->order[tail++] = (uint32_t)ch;
            }
        }
    }
    T->off[0] = 0;
    for (uint32_t d = 0; d <= DBT_MAXDEPTH; d++)
        T->off[d + 1] = T->off[d] + cnt[d];
}

/* Depth windows active at step t: senders up at depths [ul, uh], down at
 * [dl, dh]; an empty window is (1, 0). */
typedef struct dbt_win {
    int64_t ul, uh, dl, dh;
} dbt_win;

static dbt_win windows(tc_op op, uint32_t c, uint32_t D, uint32_t step)
{
    int64_t t = step, C = c, d = D;
    dbt_win w = {1, 0, 1, 0};
    if (op != TC_OP_BROADCAST) {
        w.ul = d - t > 1 ? d - t : 1;
        w.uh = d - t + C - 1 < d ? d - t + C - 1 : d;
    }
    if (op != TC_OP_REDUCE) {
        int64_t base = op == TC_OP_ALLREDUCE ? d : 0;
        w.dl = t - base - C + 1 > 0 ? t - base - C + 1 : 0;
        w.dh = t - base < d - 1 ? t - base : d - 1;
    }
    if (w.ul > w.uh)
        w.ul = 1, w.uh = 0;
    if (w.dl > w.dh)
        w.dl = 1, w.dh = 0;
    return w;
}

static tc_status emit_dbtree(const tc_sched *s, uint32_t step, tc_xfers *x)
{
    const dbt_state *st = s->state;
    uint32_t c = st->c, D = st->D;
    tc_op op = s->req.op;
    dbt_win w = windows(op, c, D, step);
    int64_t base = op == TC_OP_ALLREDUCE ? D : 0;
    for (uint32_t which = 0; which < 2; which++) {
        const dbt_tree *T = &st->t[which];
        for (int64_t d = w.ul; d <= w.uh && d <= T->maxd; d++) {
            uint32_t k = (uint32_t)(step - D + d), sl = which * c + k;
            for (uint32_t i = T->off[d]; i < T->off[d + 1]; i++) {
                uint32_t r = T->order[i];
                tc_xfers_add(x, r, (uint32_t)T->parent[r], s->blk_bytes, true);
                tc_xfers_seg(x, sl, sl, 1);
            }
        }
        for (int64_t d = w.dl; d <= w.dh && d <= T->maxd; d++) {
            uint32_t k = (uint32_t)(step - base - d), sl = which * c + k;
            for (uint32_t i = T->off[d]; i < T->off[d + 1]; i++) {
                uint32_t r = T->order[i];
                for (int j = 0; j < 2; j++)
                    if (T->child[2 * r + j] >= 0) {
                        tc_xfers_add(x, r, (uint32_t)T->child[2 * r + j], s->blk_bytes, false);
                        tc_xfers_seg(x, sl, sl, 1);
                    }
            }
        }
    }
    return TC_OK;
}

/* A rank class: its depth and child count in both trees. */
#define DBT_KEY(d0, n0, d1, n1) ((((d0) * 3u + (n0)) * DBT_MAXDEPTH + (d1)) * 3u + (n1))

static void class_decode(uint32_t key, uint32_t d[2], uint32_t nc[2])
{
    nc[1] = key % 3, d[1] = key / 3 % DBT_MAXDEPTH, nc[0] = key / 3 / DBT_MAXDEPTH % 3;
    d[0] = key / 3 / DBT_MAXDEPTH / 3;
}

/* Transfers a rank of the class sends: to its parent while its depth sends
 * up, to each child while its depth sends down. */
static uint32_t class_fanout(uint32_t key, const dbt_win *w)
{
    uint32_t d[2], nc[2], f = 0;
    class_decode(key, d, nc);
    for (int i = 0; i < 2; i++) {
        if (d[i] >= 1 && d[i] >= w->ul && d[i] <= w->uh)
            f++;
        if (d[i] >= w->dl && d[i] <= w->dh)
            f += nc[i];
    }
    return f;
}

/* Transfers a rank of the class receives: from each child while the depth
 * below sends up (the reduction into an interior node: 2 per tree), from its
 * parent while the depth above sends down. */
static uint32_t class_fanin(uint32_t key, const dbt_win *w)
{
    uint32_t d[2], nc[2], f = 0;
    class_decode(key, d, nc);
    for (int i = 0; i < 2; i++) {
        if (d[i] + 1 >= w->ul && d[i] + 1 <= w->uh)
            f += nc[i];
        if (d[i] >= 1 && d[i] - 1 >= w->dl && d[i] - 1 <= w->dh)
            f++;
    }
    return f;
}

tc_status tc_dbtree_build_perm(const tc_coll_req *req, tc_sched *s, const uint32_t *perm, tc_err *err)
{
    uint32_t p = req->p, c = dbt_chunks(req);
    s->emit = emit_dbtree;
    if (!perm)
        s->same_shape = dbt_same_shape;
    s->nblk = s->nslots = 2 * c;
    s->blk_bytes = tc_block_bytes(req->bytes, req->elt, s->nblk);
    if (p == 1)
        return TC_OK;
    size_t head = (sizeof(dbt_state) + 7) & ~(size_t)7;
    size_t per = (size_t)p * (4 + 8 + 4 + 1);
    char *mem = tc_calloc(1, head + 2 * per);
    uint8_t *seen = tc_calloc(DBT_KEY(DBT_MAXDEPTH - 1, 2, DBT_MAXDEPTH - 1, 2) + 1, 1);
    uint32_t *keys = NULL;
    if (!mem || !seen) {
        free(mem), free(seen);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    dbt_state *st = (dbt_state *)mem;
    s->state = st;
    st->c = c;
    bool top = req->op != TC_OP_ALLREDUCE;
    char *q = mem + head;
    /* The 4-byte arrays of both trees first, the depth bytes last. */
    for (uint32_t which = 0; which < 2; which++) {
        dbt_tree *T = &st->t[which];
        T->parent = (int32_t *)q, q += (size_t)p * 4;
        T->child = (int32_t *)q, q += (size_t)p * 8;
        T->order = (uint32_t *)q, q += (size_t)p * 4;
    }
    for (uint32_t which = 0; which < 2; which++) {
        st->t[which].depth = (uint8_t *)q, q += p;
        build_tree(&st->t[which], p, which, top, req->root, perm);
    }
    st->D = st->t[0].maxd > st->t[1].maxd ? st->t[0].maxd : st->t[1].maxd;

    /* Distinct rank classes, for the exact fan-out of each phase. */
    uint32_t nkeys = 0, kcap = 64;
    keys = malloc(kcap * sizeof *keys);
    tc_status rc = keys ? TC_OK : TC_EINTERNAL;
    for (uint32_t r = 0; r < p && rc == TC_OK; r++) {
        uint32_t nc[2];
        for (int i = 0; i < 2; i++)
            nc[i] = (st->t[i].child[2 * r] >= 0) + (st->t[i].child[2 * r + 1] >= 0);
        uint32_t key = DBT_KEY(st->t[0].depth[r], nc[0], st->t[1].depth[r], nc[1]);
        if (seen[key])
            continue;
        seen[key] = 1;
        if (nkeys == kcap) {
            uint32_t *v = realloc(keys, 2 * kcap * sizeof *v);
            if (!v) {
                rc = TC_EINTERNAL;
                break;
            }
            keys = v, kcap *= 2;
        }
        keys[nkeys++] = key;
    }

    tc_op op = req->op;
    uint32_t total = c + st->D - 1 + (op == TC_OP_ALLREDUCE ? st->D : 0);
    for (uint32_t t = 0; t < total && rc == TC_OK;) {
        dbt_win w = windows(op, c, st->D, t);
        uint32_t run = 1;
        while (t + run < total) {
            dbt_win v = windows(op, c, st->D, t + run);
            if (memcmp(&v, &w, sizeof v) != 0)
                break;
            run++;
        }
        uint32_t fan = 0, fin = 0;
        for (uint32_t i = 0; i < nkeys; i++) {
            uint32_t f = class_fanout(keys[i], &w), g = class_fanin(keys[i], &w);
            fan = f > fan ? f : fan;
            fin = g > fin ? g : fin;
        }
        bool up = w.ul <= w.uh, down = w.dl <= w.dh;
        tc_phase *ph = tc_sched_add_phase(s, run, TC_PAT_GENERIC, 0, s->blk_bytes,
                                          up && down ? "dbtree reduce+broadcast"
                                          : up       ? "dbtree reduce"
                                                     : "dbtree broadcast");
        if (!ph) {
            rc = TC_EINTERNAL;
            break;
        }
        tc_phase_set_fan(ph, fan, fin, s->blk_bytes);
        t += run;
    }
    free(keys);
    free(seen);
    return rc == TC_OK ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
}

static tc_status dbtree_build(const tc_coll_req *req, const tc_topo *topo, tc_sched *s, tc_err *err)
{
    (void)topo;
    return tc_dbtree_build_perm(req, s, NULL, err);
}

bool tc_dbtree_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err)
{
    return dbtree_valid(op, p, topo, err);
}

const tc_algo_impl tc_impl_dbtree = {dbtree_valid, dbtree_build};
