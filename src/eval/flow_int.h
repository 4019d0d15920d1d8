/*
 * flow_int.h - the max-min fair rate solver behind the flow evaluator
 * (maxmin.c), exposed inside the library and to the tests.
 *
 * A tc_mm holds the flows that are transmitting and the links they cross.
 * Every flow has a list of incidences (link, weight): weight 1 for a flow
 * on one routed path; for a flow split over several paths with fixed
 * fractions, the sum of the fractions of its paths that use the link. A
 * flow of rate x puts x * weight on each of its links.
 *
 * Rates are max-min fair with an optional per-flow cap (progressive filling,
 * Bertsekas & Gallager, Data Networks, 2nd ed., section 6.5.2): raise every
 * unfrozen flow's rate together; when a link fills, freeze the flows that
 * cross it; a flow that reaches the cap freezes too. Weighted links fill at
 * cap / sum of the weights of their unfrozen flows.
 *
 * tc_mm_solve recomputes only what changed since the last solve: the
 * connected components (flows joined by shared links) that contain a link
 * where a flow was added or removed. Flows of other components keep their
 * rates, which is exact: max-min rates of a component depend only on the
 * component.
 *
 * A component too large to re-solve whole (more than comp_budget link
 * entries to visit) is re-solved by level instead (maxmin.c): progressive
 * filling run on the changed network is the old run until the lowest level
 * x0 a change can affect (the smallest rate of a departed flow; for an
 * arrival, capacity / total weight on each of its links, a lower bound of
 * the level where that link can fill now; each less 1e-9 relative, as levels
 * equal in exact arithmetic may differ by rounding). Flows frozen below x0
 * keep their rates and only the flows at x0 or above (and the new ones) are
 * filled again, from what the others leave on each link. The solver then
 * keeps per link the load of its flows and, per bottleneck link, the flows
 * it froze and their level, so the flows at or above x0 are found without
 * visiting the others.
 *
 * With tc_mm.local (flow contexts) such a re-solve is local first: the
 * flows a change can reach are filled again on what the others leave, the
 * bottleneck condition is checked wherever they run, and the flows that
 * fail it join the next fill (maxmin.c local_solve); the solve by level
 * takes over where that grows past its own work.
 */
#ifndef TOPOCC_FLOW_INT_H
#define TOPOCC_FLOW_INT_H

#include <stdlib.h>
#include "topocc/core.h"

/* Grows *p (an array of elem-sized items, capacity *cap) by doubling until it
 * holds need items; false (and *p unchanged) when memory runs out. */
static inline bool tc_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *v = realloc(*p, c * elem);
    if (!v)
        return false;
    *p = v;
    *cap = c;
    return true;
}

/* One flow's place in one link's list. */
typedef struct tc_mm_ent {
    uint32_t flow;
    uint32_t k; /* index of the incidence in the flow's list */
} tc_mm_ent;

/* A link's flows; while it has room for one (cap 1) the entry lives in the
 * link itself, so a lightly used link costs no second cache line. */
#define TC_MM_INLINE 1

/* A link: its list of flows, its capacity and its mark, in 32 bytes (two
 * to a cache line: a host's up- and down-link share one). */
typedef struct tc_mm_link {
    union {
        tc_mm_ent *v;   /* cap > 1 */
        tc_mm_ent one;  /* cap 1 */
    } e;
    uint32_t n, cap;
    double bw;          /* capacity (bytes/s), copied at tc_mm_init */
    uint32_t mark;      /* epoch of the last solve that visited the link;
                           epoch + 1: changed since (dirty) */
    uint32_t ucount;    /* solve scratch: unfrozen flows */
} tc_mm_link;

_Static_assert(sizeof(tc_mm_link) == 32, "two links to a cache line");

/* Solve scratch of a link: capacity left, unfrozen weight. */
typedef struct tc_mm_scr {
    double rc, wsum;
} tc_mm_scr;

/* The flows a bottleneck link froze (ent.k unused). */
typedef struct tc_mm_group {
    tc_mm_ent *v;
    uint32_t n, cap;
} tc_mm_group;

/* One incidence of a flow: its link and its place in the link's list. */
typedef struct tc_mm_inc {
    uint32_t link, pos;
} tc_mm_inc;

/* A flow, stored in a record of fixed size (tc_mm.frec bytes) with its
 * incidences after it: a flow on up to 6 links fits one cache line. The
 * weights are kept apart (tc_mm.inc_w) and only for flows given weights;
 * a flow added without is `unit` (every weight 1). */
typedef struct tc_mm_flow {
    double rate;
    uint32_t mark;     /* epoch of the last solve that visited the flow; epoch + 1: frozen */
    uint16_t n;        /* incidences; 0: not in the solver */
    uint8_t unit;      /* every weight is 1 (inc_w not kept) */
    uint8_t held;      /* held outside the solver (tc_mm_hold): its incidences (links only); 0: not held */
    tc_mm_inc inc[];   /* [stride] */
} tc_mm_flow;

/* A link's occupancy: the flows on it, in the solver or held, and the held
 * one (UINT32_MAX: none), apart from the link records so that a flow's
 * check of its path touches 8 bytes a link. */
typedef struct tc_mm_occ {
    uint32_t n, held;
} tc_mm_occ;

typedef struct tc_mm {
    uint32_t nlinks;
    double rate_cap;       /* per-flow cap; 0 or INFINITY: none */
    uint32_t stride;       /* most incidences per flow */

    /* Flows, records indexed by flow id (ids chosen by the caller). */
    uint32_t fcap;         /* ids < fcap have storage */
    size_t frec;           /* bytes of one record */
    unsigned char *flows;  /* fcap records (tc_mm_flow_at) */
    double *inc_w;         /* [id * stride + k]: weights of the flows not unit; NULL until one is added */

    /* Links. */
    tc_mm_link *lists;
    tc_mm_occ *occ;        /* per link */
    tc_mm_scr *scr;        /* per link, used by solves of several flows */
    uint32_t epoch;

    uint32_t *dirty;       /* links whose flow set changed since the last solve */
    uint32_t ndirty, dirty_cap;

    /* Solve scratch and output. */
    uint32_t *comp_links, *comp_flows;
    size_t ncomp_links, ncomp_flows, comp_links_cap, comp_flows_cap;
    double *heap_key;
    uint32_t *heap_link;
    size_t heap_n, heap_cap;
    uint32_t *changed;     /* flows whose rate changed in the last solve */
    size_t nchanged, changed_cap;
    bool oom;

    /* Re-solving by level (maxmin.c), switched on the first time a
     * component exceeds comp_budget link entries. */
    uint32_t comp_budget;  /* 0: TC_MM_COMP_BUDGET; tests lower it */
    bool track;
    double *load;          /* per link: sum of rate * weight of its flows */
    double *wtot;          /* per link: sum of the weights of its flows */
    uint32_t *bneck;       /* per flow: the link that froze it, nlinks: the cap, UINT32_MAX: no rate yet (kept while tracking) */
    uint32_t *gpos;        /* per flow: its place in its bottleneck's group */
    tc_mm_group *groups;   /* nlinks + 1: per bottleneck, the flows it froze */
    double *glevel;        /* nlinks + 1: at least the rate of each of its flows; -INFINITY: none */
    uint64_t *gbits;       /* a bit per group that holds flows: a solve by level visits those only */
    double x0;             /* the lowest level a change since the last solve can affect */
    uint32_t *fresh;       /* flows added since the last solve */
    size_t nfresh, fresh_cap;
    uint64_t level_solves; /* statistics: solves by level, */
    uint64_t level_flows;  /* the flows they filled again */
    /* Local re-solves (maxmin.c local_solve), in place of the solve by
     * level while tracking: only the flows a change can reach are filled
     * again, and the result is checked against the bottleneck condition
     * everywhere they touch; what the check finds is added and the fill
     * repeated. Off: solves by level only. */
    bool local;
    double *trate;         /* per flow: its rate in the local fill under way */
    uint32_t *tbn;         /* per flow: the link that froze it there (nlinks: the cap) */
    struct tc_mm_lstat *lstat; /* per link, scratch of the check */
    uint32_t *cand;        /* the flows of the next local fill */
    size_t ncand, cand_cap;
    uint32_t local_backoff, local_wait; /* solves by level to do before the next local try */
    uint64_t local_solves, local_rounds, local_flows, local_fallbacks; /* statistics */
    /* Blame (tc_mm_blink_on): per flow, the link that set its rate at the
     * last solve (nlinks: the cap); a flow whose bottleneck moves is
     * reported in changed even where its rate stays. NULL: off. */
    uint32_t *blink;
} tc_mm;

/* Records every flow's bottleneck link from now on (tc_mm.blink). */
bool tc_mm_blink_on(tc_mm *m);

static inline tc_mm_flow *tc_mm_flow_at(const tc_mm *m, uint32_t id)
{
    return (tc_mm_flow *)(m->flows + (size_t)id * m->frec);
}

/* Link entries a component may have before it is re-solved by level. */
#define TC_MM_COMP_BUDGET 32768u

/* nlinks links with capacities cap[0..nlinks) (copied; a capacity must be
 * above 0 for any link a flow uses); stride: most links per flow; rate_cap:
 * 0 for none. */
tc_status tc_mm_init(tc_mm *m, uint32_t nlinks, const double *cap, uint32_t stride, double rate_cap);
void tc_mm_free(tc_mm *m);

/* Adds flow id (not already present) over n incidences (1 <= n <= stride;
 * w NULL: every weight 1). Its rate is 0 until the next solve. */
tc_status tc_mm_add(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n);
/* Removes flow id (in the solver or held). */
void tc_mm_remove(tc_mm *m, uint32_t id);

/* Holding. A flow alone on every link of its path keeps the rate it has
 * alone until another flow arrives on one of them, so it need not enter
 * the solver: held, it takes no place in the links' lists, no solve, and
 * leaving it changes nothing for anyone. A flow added on a link where a
 * flow is held brings that flow into the solver first, with the rate it
 * held (the links' loads count it), as if it had been there all along:
 * the solve finds what it would have found then (max-min rates depend on
 * the flows present, not on their history), and lists the flow as changed
 * only where its rate moves. */

/* The most incidences a held flow may have (tc_mm_flow.held). */
#define TC_MM_HOLD_MAX 255u

/* Whether no flow (in the solver or held) is on any of the n links. */
bool tc_mm_path_empty(const tc_mm *m, const uint32_t *links, uint32_t n);
/* The rate of a flow alone on the n incidences (w NULL: weights 1): the
 * least capacity over weight, or the cap, computed as a solve of a lone
 * flow computes it. */
double tc_mm_alone_rate(const tc_mm *m, const uint32_t *links, const double *w, uint32_t n);
/* Holds flow id (not present) on n incidences whose links are all empty
 * (tc_mm_path_empty), at rate r (tc_mm_alone_rate of the same path). */
tc_status tc_mm_hold(tc_mm *m, uint32_t id, const uint32_t *links, const double *w, uint32_t n, double r);
/* Whether flow id is held. */
static inline bool tc_mm_is_held(const tc_mm *m, uint32_t id);

/* Recomputes the rates of the components touched since the last solve.
 * Afterwards m->changed[0..nchanged) lists the flows whose rate changed
 * (new flows included). Fails only when out of memory. */
tc_status tc_mm_solve(tc_mm *m);

static inline double tc_mm_rate(const tc_mm *m, uint32_t id)
{
    return tc_mm_flow_at(m, id)->rate;
}

static inline bool tc_mm_is_held(const tc_mm *m, uint32_t id)
{
    return id < m->fcap && tc_mm_flow_at(m, id)->held != 0;
}

#endif
