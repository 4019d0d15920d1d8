/*
 * flow_sim.h - the flow simulator's state (flow.c), shared with its
 * repetition skipping (flow_skip.c).
 */
#ifndef TOPOCC_FLOW_SIM_H
#define TOPOCC_FLOW_SIM_H

#include <math.h>
#include <stdio.h>
#include "eval/flow_int.h"
#include "topocc/flow.h"

#define NONE UINT32_MAX

/* A flow's state; ST_FREE: its id is on the free list; ST_WIRE: it may
 * go, but waits for its sender's sends of earlier steps to leave
 * (fl_wire); ST_RED: arrived, its receiver reducing it (reduce_bw=). */
enum { ST_ALPHA = 0, ST_XMIT = 1, ST_PROP = 2, ST_FREE = 3, ST_WIRE = 4, ST_RED = 5 };

/* A step's transfers, for one rank: its sends are xv[first, end), recv
 * its receives. */
typedef struct fl_trank {
    uint32_t first, end;
    uint32_t recv;
} fl_trank;

typedef struct fl_sxfer {
    uint32_t dst;
    uint16_t piped;       /* tc_xfer.piped */
    uint16_t reduce;      /* tc_xfer.reduce, into a rank (not a switch participant) */
    double bytes;
} fl_sxfer;

/* The transfers of a step, by sender: immutable once emitted, and shared
 * (refs) by consecutive steps that carry the same ones (the steps of a
 * ring's phases), so that a window of thousands of live steps holds one. */
typedef struct fl_tab {
    fl_trank *rk;         /* p */
    fl_sxfer *xv;
    size_t n, cap;
    uint32_t refs;        /* steps (and the job's last) using it; 0: spare */
} fl_tab;

/* A live step: its transfers and what is left of it. What it holds for
 * one rank (receives delivered before the rank reached it, transfers
 * parked until it does) is the rank's (fl_job.ah). */
typedef struct fl_step {
    fl_tab *tab;
    uint64_t incomplete;  /* transfers not yet delivered */
    uint32_t unissued;    /* ranks that have not passed the step */
} fl_step;

/* A rank's entry for a step it has not passed yet: receives of the step
 * already delivered, and (rendezvous) the first flow parked until the rank
 * reaches the step (f_next links). */
typedef struct fl_ahead {
    uint32_t got;
    uint32_t wait;
} fl_ahead;

/* A rank's state, together (flow.h's rule): issue is the next step whose
 * sends it has not issued, pend its undelivered receives of steps before
 * issue, outst its sends still being sent. Its entries for steps s from
 * issue on are fl_job.ah[r][s & (acap - 1)] (acap a power of two, 0: none
 * yet): only a rank that receives or has transfers parked ahead of its own
 * step has any, so the memory follows the ranks in flight, not ranks times
 * steps. */
typedef struct fl_rank {
    uint32_t issue, pend, outst;
    uint32_t acap;
    double fin;           /* last delivery it took part in */
    double oclk;          /* when its last message started (the overhead clock) */
} fl_rank;
_Static_assert(sizeof(fl_rank) == 32, "two ranks per cache line");

/* A sender whose sends leave each connection in order (tc_sched.
 * wire_in_order under NCCL's credits): its flows issued and not yet
 * sending, in issue order (head to tail), and its flows sending (shead),
 * both linked by fl_sim.f_wnext (NONE: none). A connection is a sender
 * and a receiver: a flow starts once it may go (ST_WIRE), no earlier flow
 * of the sender to the same receiver waits, and none of an earlier step to
 * it is sending; flows to other receivers share the sender's links. */
typedef struct fl_wire {
    uint32_t head, tail;
    uint32_t shead, unused;
} fl_wire;

/* A sender's last route, after folding (flow_start): to endpoint dst, n
 * incidences (0: none yet), its latency, the bytes started on it not yet
 * added to its links' counters (tc_fl_flush_bytes), and a flow's rate alone
 * on it. */
typedef struct fl_rcache {
    uint32_t dst, n;
    double lat;
    double bytes;
    double alone;         /* the rate alone on it (tc_mm_alone_rate) */
} fl_rcache;

typedef struct fl_job {
    const tc_sched *s;
    const uint32_t *map;
    const tc_topo *topo;  /* where switch participants are (tc_sched_vertex) */
    uint32_t p, nsteps;   /* p: the ranks simulated (folded: T) */
    uint32_t pfull;       /* the schedule's participants: its ranks, then its switches */
    uint32_t lanes;       /* the schedule's lanes (>= 1): rank r of lane k is simulated rank k pfull + r */
    double start;
    fl_rank *rk;          /* p */
    fl_ahead **ah;        /* p: each rank's entries ahead (fl_rank) */
    fl_wire *wire;        /* p, or NULL: its sends are not kept in order on the wire */
    fl_rcache *rc;        /* p, or NULL: each sender's last route, */
    uint32_t *rc_path;    /* its links (stride per sender) */
    double *rc_pw;        /* and their weights */
    fl_step *win;
    uint32_t wcap, lo, hi; /* wcap a power of two; step s lives in win[s & (wcap - 1)] */
    fl_tab **tabs;        /* every table allocated (in use or spare) */
    fl_tab **spare;       /* those with no reference */
    uint32_t ntabs, nspare;
    size_t tabs_cap;
    fl_tab *last;         /* the table of the step emitted last (a reference) */
    double finish;
    uint64_t transfers;
    const char *name;     /* in the trace; NULL: "job N" */
    uint32_t tag;         /* tc_flow_job.tag */
    uint8_t *seen;        /* tracing: ranks with a track (a slice as sender) */
    double gamma;         /* seconds per byte a rank reduces (tc_eval_gamma); 0: none */
    double *rclk;         /* p, with gamma: when each rank's last reduction ends (its reduction clock) */
} fl_job;

typedef struct fl_ready {
    uint32_t job, rank;
} fl_ready;

/* A flow (fl_sim.fl): its transfer, where it is and its rate. */
typedef struct fl_flow {
    double rem;           /* bytes left at tlast */
    double tlast;         /* when rem was last brought up to date */
    double rate;
    double bytes;         /* the transfer's bytes on the wire */
    double lat;           /* its path's latency */
    uint32_t job, step, src, dst;
    uint32_t hpos;        /* its pending event's place (below) */
    uint8_t state;
    uint8_t piped;        /* nccl-*: no step latency, no propagation (tc_xfer.piped) */
    uint8_t red;          /* its receiver reduces it after delivery (ST_RED), gamma per byte */
} fl_flow;
_Static_assert(sizeof(fl_flow) <= 64, "a flow is one cache line");

typedef struct fl_hent {
    double key;
    uint32_t f;
} fl_hent;
_Static_assert(sizeof(fl_hent) == 16, "four heap entries per cache line");

/* The max-min solver's component budget in the flow simulator
 * (tc_mm.comp_budget): a component above this many link entries is
 * re-solved locally, or by level, not whole (flow.c sim_init). */
#define TC_FLOW_COMP_BUDGET 16

/* The event queue's lanes (flow.c): FIFOs of nondecreasing times, rings
 * of cap entries (a power of two) from head. A flow in lane k at ring
 * index i has fl[f].hpos FL_LANE_POS(k, i); an entry no flow points at is
 * stale. */
#define FL_LANES 8
#define FL_LANE_MAX (1u << 27)
#define FL_LANE_POS(k, i) (0x80000000u | ((uint32_t)(k) << 27) | (uint32_t)(i))
#define FL_IN_LANE(h) (((h) & 0x80000000u) != 0)
#define FL_LANE_OF(h) (((h) >> 27) & 0xFu)
#define FL_LANE_AT(h) ((h) & (FL_LANE_MAX - 1))
_Static_assert(FL_LANES <= 8, "lane positions stay below NONE");

typedef struct fl_lane {
    fl_hent *v;
    uint32_t head, n, cap;
} fl_lane;

typedef struct fl_sim {
    const tc_topo *t;
    tc_flow_opts o;
    fl_job *jobs;
    size_t njobs;
    tc_mm mm;
    double *cap;          /* link capacities for the solver (bw, down links 0) */
    double *link_bytes;
    tc_xfers xf;

    /* Flows by id: what every event of a flow reads or writes is one
     * record of one cache line (fl_flow); the issue time and the parked
     * chain, which fewer events touch, are arrays apart. */
    uint32_t fcap, fhigh;
    fl_flow *fl;
    uint32_t *f_next;
    uint32_t *f_wnext;    /* the next in its sender's fl_wire list */
    double *f_issue;
    uint32_t *free_ids;
    uint32_t nfree;

    /* Event queue (flow.c): lanes, and a heap for the times no lane takes.
     * fl[flow].hpos: its place (NONE: no pending event; FL_IN_LANE: a
     * lane's; else its position in the heap). heap = heap_mem + 3,
     * heap_mem 64-byte aligned, so that the children 4i + 1 .. 4i + 4 of
     * node i fill one cache line. */
    fl_hent *heap, *heap_mem;
    uint32_t hn;
    fl_lane lanes[FL_LANES];
    double qhead[FL_LANES]; /* each lane's head time (INFINITY: empty) */
    double qtail[FL_LANES]; /* each lane's tail time (-INFINITY: empty) */
    uint64_t q_stale;     /* stale lane entries */

    fl_ready *ready;
    size_t nready, ready_cap;

    /* Flows started alone on their links in this batch and held outside
     * the solver (tc_mm_hold): their rates are applied with the solver's
     * at the batch's end (apply_rates). */
    uint32_t *held;
    size_t nheld, held_cap;

    uint32_t *path;       /* scratch: one transfer's incidences */
    double *pw;
    uint32_t stride;

    double now;
    /* The time grid (docs/MODEL.md, "Time on a grid"): in a simulation of
     * one job every time is a multiple of tq (a power of two), durations
     * are rounded onto it, and while times stay below FL_GRID_SPAN tq
     * every sum and difference of two of them is exact, so the simulation
     * moved by a multiple of tq computes the same thing moved. Once now
     * reaches FL_GRID_SPAN tq the grid is made coarser (tc_fl_regrid; regrids
     * counts it). 0: no grid (several jobs, a context). */
    double tq, itq;       /* itq = 1 / tq, exact: a power of two */
    uint32_t regrids;
    /* While a repeat is recorded (rec): the batch's first event time, and
     * the latest start of a flow held in the last batch (-INFINITY: none),
     * which say whether batching could have moved a held flow's end. */
    double bt0, ht;
    uint64_t events, budget, batches;
    bool job_ended;       /* a job may have passed its last step since the flag was cleared */
    FILE *trace;
    char *trace_tmp;
    uint64_t slices, max_slices;
    bool truncated;

    /* count_event's slow path (event budget, progress) runs when events
     * reach tick_at, so the hot path is one comparison. */
    uint64_t tick_at;
    double prog_t0, prog_last; /* wall clock: start, last report */
    /* With progress on, the batches' work since the clock was last read
     * (count_batch): where each event costs a large solve, the events
     * alone would read it too seldom. prog_mm: the solver's flows filled
     * again by level and locally, at the last batch. */
    uint64_t prog_work, prog_mm;
    double prog_total;         /* transfers of all jobs (0: unknown) */

    tc_err *err;
    tc_status st;

    struct fl_blame *blame; /* tc_flow_ctx_blame (flow.c); NULL: off */
    /* Flow contexts (tc_flow_opts.solo): per link, 1 + the job timed alone
     * that holds it (0: none); NULL: off. A flow started on a held link
     * fails the run and sets solo_broken. */
    uint32_t *resv;
    bool solo_broken;
    struct fl_skip *skip; /* repetition skipping (flow_skip.c); NULL: off */
    uint32_t skip_seen;   /* job 0's rank 0's next step when skipping last looked (fl_skip_look) */
    const char *skip_off; /* why it is off (NULL: on) */
    uint64_t steps_skipped;
    uint32_t repeat_from;
    /* Recording one repeat (flow_skip.c, "to the end"): while rec is on,
     * job 0's deliveries and flow starts go into recs; a flow given to the
     * solver (not held) stops it and drops them (fl_rec_stop), so records
     * at the repeat's end mean no flow shared a link. ended: the rest of
     * the run was extrapolated, the loop stops. */
    bool rec, ended;
    struct fl_rec *recs;
    size_t nrecs, recs_cap;
    uint64_t tail_steps;  /* steps of the reference rank extrapolated to the end */

    /* Rank symmetry (flow_fold.c): ranks 0..fold_T-1 stand for all, each
     * for fold_n; 0: off (fold_off says why). */
    uint32_t fold_T, fold_n;
    uint32_t *lrep;       /* link -> its orbit's representative */
    double *lw;           /* fold_n / the size of the link's orbit */
    const char *fold_off;
} fl_sim;

/* The vertex of simulated rank v: its lane's rank's endpoint, through the
 * map, or a switch participant's node switch. */
static inline uint32_t fl_ep(const fl_job *J, uint32_t v)
{
    uint32_t r = v >= J->pfull ? v % J->pfull : v;
    return r < J->s->req.p ? (J->map ? J->map[r] : r) : tc_sched_vertex(J->s, J->topo, J->map, r);
}

/* Whether two vertices (endpoints or node switches) share a scale-up node. */
static inline bool fl_same_node(const tc_topo *t, uint32_t a, uint32_t b)
{
    return t->node_size > 1 && tc_topo_same_node(t, a, b);
}

/* The simulated rank of a transfer's end r in lane k. */
static inline uint32_t fl_vrank(const fl_job *J, uint32_t lane, uint32_t r)
{
    return lane && J->lanes > 1 ? lane * J->pfull + r : r;
}

/* The simulated rank that receives for rank d (its class). */
static inline uint32_t fold_rank(const fl_sim *S, uint32_t d)
{
    return S->fold_T && d >= S->fold_T ? d % S->fold_T : d;
}

/* Times below FL_GRID_SPAN grid units (and their offsets) are exact sums;
 * 2^52 leaves a sum of two such times below 2^53, the double's exact
 * integers. */
#define FL_GRID_SPAN 0x1p52

/* Duration or time d onto the grid (unchanged without one). Multiplying
 * by a power of two is exact. An infinite d, or one of more units than a
 * double holds (some 10^293 s on a grid of 2^-52 of a second), stays as it
 * is: it ends far past the grid's span, where tc_fl_regrid coarsens the grid. */
static inline double fl_q(const fl_sim *S, double d)
{
    if (!(S->tq > 0))
        return d;
    double u = d * S->itq;
    return isfinite(u) ? rint(u) * S->tq : d;
}

/* The time of flow f's pending event (fl[f].hpos != NONE). */
static inline double fl_qkey(const fl_sim *S, uint32_t f)
{
    uint32_t h = S->fl[f].hpos;
    if (FL_IN_LANE(h)) {
        const fl_lane *L = &S->lanes[FL_LANE_OF(h)];
        return L->v[FL_LANE_AT(h)].key;
    }
    return S->heap[h].key;
}

static inline fl_step *slot(fl_job *J, uint32_t s)
{
    return &J->win[s & (J->wcap - 1)];
}

/* The incidences of a transfer from endpoint a to b into S->path / S->pw
 * (flow.c); 0 when every path crosses a down link. */
uint32_t tc_fl_route(fl_sim *S, uint32_t a, uint32_t b);
/* The most incidences (path links) one transfer can have under mp: the
 * stride of S->path and S->pw (flow.c). */
uint32_t tc_fl_max_incidences(const tc_topo *t, tc_multipath mp);
/* The utilisation of the links that carried traffic (bytes[l] over
 * cap[l] x makespan) into res: the mean, and the hottest links in order
 * (flow.c). */
void tc_fl_hot_links(const tc_topo *t, const double *bytes, const double *cap, double makespan, tc_flow_result *res);

/* ---- bounds instead of a simulation (flow_bounds.c) ---- */

/* tc_flow_run with tc_flow_opts.bounds: one job, one step. */
tc_status tc_fl_bounds_run(const tc_topo *t, const tc_flow_job *job, size_t njobs, const tc_flow_opts *o,
                        tc_flow_result *res, tc_err *err);
/* Its memory, bytes (tc_flow_mem_estimate). */
double tc_fl_bounds_mem(const tc_topo *t, const tc_flow_job *job, const tc_flow_opts *o);

/* ---- rank symmetry (flow_fold.c) ---- */

/* Looks for a translation of job 0's ranks that is a symmetry of the run;
 * sets fold_T, fold_n, lrep, lw and job 0's p (or fold_off). */
tc_status tc_fl_fold_init(fl_sim *S);
/* Maps the n incidences in S->path / S->pw to orbit representatives with
 * their weights; returns their number. */
uint32_t tc_fl_fold_path(fl_sim *S, uint32_t n);

/* ---- repetition skipping (flow_skip.c) ---- */

/* Sets S->skip (or S->skip_off with the reason it stays off). */
tc_status tc_fl_skip_init(fl_sim *S);
/* After a batch (rates applied, nothing ready): looks for a repeating
 * state and advances over the repeats. */
void tc_fl_skip_batch(fl_sim *S);
/* Whether tc_fl_skip_batch has anything to do: it looks each time the
 * reference rank (job 0's rank 0) passes a step, and returns at once
 * otherwise; this test, inlined, spares the call. */
static inline bool fl_skip_look(const fl_sim *S)
{
    const fl_job *J = &S->jobs[0];
    return S->skip && (J->p ? J->rk[0].issue : 0) != S->skip_seen;
}
void tc_fl_skip_free(fl_sim *S);
/* Re-emits the transfers of step s into its slot, keeping what the ranks
 * did with it (flow.c). */
tc_status tc_fl_reemit(fl_sim *S, size_t j, uint32_t s);
/* Brings the link byte counters up to date (flow.c). */
void tc_fl_flush_bytes(fl_sim *S);
/* Adds D to every pending event's time (flow.c). */
void tc_fl_queue_shift(fl_sim *S, double D);
/* Every time of the simulation onto a grid twice as coarse, until now is
 * below FL_GRID_SPAN units (flow.c). */
void tc_fl_regrid(fl_sim *S);
/* One event of a recorded repeat (fl_sim.rec): a delivery of step's
 * transfer src -> dst at time v, or (start) the start of its flow of v
 * bytes. */
typedef struct fl_rec {
    uint32_t step, src, dst;
    bool start;
    double v;
} fl_rec;
/* The most records a repeat may hold (ranks simulated, flow ids in use):
 * a repeat of d steps holds about two a transfer, so this keeps repeats of
 * a few steps; a longer one is not carried to the end. */
static inline size_t fl_rec_max(uint32_t ranks, uint32_t flows)
{
    return (size_t)8 * ((size_t)ranks + flows) + 4096;
}
/* Stops recording a repeat and drops its records: it is not carried to
 * the end. */
static inline void fl_rec_stop(fl_sim *S)
{
    S->rec = false;
    S->nrecs = 0;
}
/* Appends a record (flow.c) while there is room (fl_rec_max; else the
 * recording stops and its records go); out of memory: the run fails. */
void tc_fl_rec_add(fl_sim *S, bool start, uint32_t step, uint32_t src, uint32_t dst, double v);

/* Rank r's entry for step s (s >= its issue); NULL when out of memory. */
fl_ahead *tc_fl_ahead_at(fl_job *J, uint32_t r, uint32_t s);

#endif
