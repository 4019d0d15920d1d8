/*
 * eval_int.h - what the evaluators share inside the eval layer.
 */
#ifndef TOPOCC_EVAL_INT_H
#define TOPOCC_EVAL_INT_H

#include "topocc/eval.h"

/* The largest cut bound of docs/MODEL.md ("Lower bound", 2) for op on p ranks
 * of bytes, rank r on endpoint map[r] (NULL: r); identity says rank r sits
 * on host slot r (what a multidc's pod cuts need). 0 when no cut applies. */
double tc_eval_cut_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *map,
                         bool identity);

/* The steps evaluator one phase at a time (the formula evaluator's graph
 * path): a workspace for topology t and p ranks, and the time of one step
 * of phase `phase` on the routed graph, with the link that limits the
 * slowest transfer (UINT32_MAX: latency alone). o->routing is used as
 * given (resolve it with tc_eval_routing first). */
typedef struct tc_steps_ws tc_steps_ws;
tc_steps_ws *tc_steps_ws_new(const tc_topo *t, uint32_t p);
/* Seconds per byte a rank takes to reduce a transfer it receives (every
 * evaluator's gamma): 1 / t->reduce_bw, 0 where it is not given and for
 * an NCCL protocol (its bandwidths include the reduction). */
double tc_eval_gamma(const tc_topo *t, const tc_sched *sc);
/* Transfers a step is emitted in at most where it can be emitted in parts
 * (tc_sched_part_senders): TC_SCHED_PART_CHUNK unless a test sets another. */
void tc_steps_ws_set_chunk(tc_steps_ws *w, size_t transfers);
/* The chunk new workspaces and the flow simulator's checks take
 * (TC_SCHED_PART_CHUNK; a test sets a smaller one to exercise the parts; not
 * thread-safe: tests only). */
size_t tc_eval_chunk(void);
void tc_eval_set_chunk(size_t transfers);
void tc_steps_ws_free(tc_steps_ws *w);
/* The same at n sizes: out[k] is the phase's step time with every
 * transfer's bytes times scale[k] (a sweep routes each phase once). */
/* The bottleneck step_times reports when an NCCL protocol's rate cap, not
 * a link, limits the slowest transfer. */
#define TC_BOTTLENECK_CAP (UINT32_MAX - 1)

/* The failures leave participants src and dst (at vertices vs, vd) no
 * route: TC_EINVAL naming them, the routing and why (evaluate.c). */
tc_status tc_eval_cut_off(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t src, uint32_t dst,
                          uint32_t vs, uint32_t vd, tc_err *err);
/* What to try where routing r finds no route from vs to vd, for the end
 * of the message: under detour on a torus where line finds one the other
 * way round (a ring, whose one dimension offers no detour), " (--routing
 * line goes the other way round the ring)"; "" otherwise. */
const char *tc_eval_cut_hint(const tc_topo *t, tc_routing r, uint32_t vs, uint32_t vd);

/* fo's progress reports (where it has a callback) passed on through r,
 * named "flow simulation of ALGO at SIZE" (" in N groups" where ngroups
 * is above 1): a run of several simulations (auto, a size sweep) says
 * which one is under way (evaluate.c). */
void tc_eval_flow_named(tc_flow_opts *fo, tc_progress_relay *r, const tc_sched *s, uint32_t ngroups);

/* An nccl-* schedule's latency, base included (steps.c). */
tc_status tc_steps_nccl_latency(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                                double *lat_s, tc_err *err);
tc_status tc_steps_phase_sweep(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                               uint32_t phase, const double *scale, size_t n, double *out, uint32_t *bottleneck,
                               tc_err *err);
/* The time of phase i of s at n sizes into out (one step's). */
typedef tc_status (*tc_phase_time_fn)(void *ctx, uint32_t i, double *out, tc_err *err);

/* Adds to times[k] the sum over s's phases of repeat x time (fn), in
 * phase order; where nested, a run of phases declared nested (tc_phase.nest,
 * all of one sign, none repeated 0) costs O(log) phases per change of the
 * time, by bisection, bit for bit the phase-by-phase sum (steps.c). */
tc_status tc_steps_sum_phases(const tc_sched *s, bool nested, tc_phase_time_fn fn, void *ctx, size_t n,
                              double *times, tc_err *err);
/* In place of tc_steps_sum_phases for a schedule of pipelined lanes
 * (tc_sched.pipe_hops): adds each size's slowest lane to times. */
tc_status tc_steps_pipeline(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o,
                            const double *scale, size_t n, double *times, tc_err *err);
tc_status tc_steps_phase(tc_steps_ws *w, const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t phase,
                         double *time_s, uint32_t *bottleneck, tc_err *err);

#endif
