/*
 * dbtree.h - internal: dbtree's trees over positions, for dbtree-fa
 * (coll/dbtree_fa.c), which relabels the ranks of dbtree's trees.
 *
 * The trees are built over positions 1..n (n = p for all-reduce, p - 1
 * below a root for broadcast and reduce). A relabelling perm gives the rank
 * at each index 0..n-1; tree 1 holds index q - 1 at position q, tree 2
 * index q - 2 (cyclically): the shift that makes every index, hence every
 * rank whatever perm is, interior in at most one tree (coll/dbtree.c).
 */
#ifndef TOPOCC_COLL_DBTREE_H
#define TOPOCC_COLL_DBTREE_H

#include "coll/algos.h"

/* The index at position q (1..n) of tree `which` (0 or 1). */
static inline uint32_t tc_dbtree_index(uint32_t n, uint32_t which, uint64_t q)
{
    uint32_t i = (uint32_t)(q - 1);
    return which ? (i + n - 1) % n : i;
}

/* The parent position of position q (1..n) in the in-order tree over 1..n
 * (NCCL's ncclGetBtree): its lowest set bit b gives (q ^ b) | 2b, or q ^ b
 * when that is beyond n; 0 at the tree's root. */
static inline uint64_t tc_dbtree_parent_pos(uint32_t n, uint64_t q)
{
    uint64_t bit = q & (~q + 1);
    uint64_t up = (q ^ bit) | (bit << 1);
    return up > n ? q ^ bit : up;
}

/* dbtree's schedule for req with the rank at index i being perm[i] (n
 * entries, a permutation of the ranks other than the root for broadcast
 * and reduce, of all ranks for all-reduce); perm NULL: dbtree's own
 * labels (index i is rank i, or root + 1 + i mod p below a root). */
tc_status tc_dbtree_build_perm(const tc_coll_req *req, tc_sched *s, const uint32_t *perm, tc_err *err);

/* dbtree's valid(): broadcast, reduce and all-reduce. */
bool tc_dbtree_valid(tc_op op, uint32_t p, const tc_topo *topo, tc_err *err);

#endif
