/*
 * evaluate.c - one collective on one topology: validation, the choice of
 * `auto`, schedule building and the chosen evaluator, into one result shape.
 * A sweep over sizes builds each candidate schedule once and rescales it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/eval.h"
#include "eval/eval_int.h"

const char *tc_mode_name(tc_mode m)
{
    return m == TC_MODE_STEPS ? "steps" : m == TC_MODE_FLOW ? "flow" : "formula";
}

tc_status tc_mode_parse(const char *s, tc_mode *out, tc_err *err)
{
    if (s && strcmp(s, "formula") == 0)
        *out = TC_MODE_FORMULA;
    else if (s && strcmp(s, "steps") == 0)
        *out = TC_MODE_STEPS;
    else if (s && strcmp(s, "flow") == 0)
        *out = TC_MODE_FLOW;
    else
        return tc_fail(err, TC_EINVAL, "unknown mode '%s': accepted are formula, steps, flow", s ? s : "");
    return TC_OK;
}

tc_routing tc_eval_routing(tc_mode m, const tc_topo *t, tc_routing requested)
{
    if (requested != TC_ROUTE_DEFAULT)
        return requested;
    if (tc_topo_fabric_kind(t) != TC_TOPO_CLOS) /* a multidc's pods' kind */
        return t->n_failed ? TC_ROUTE_DETOUR : t->kind == TC_TOPO_FULL ? TC_ROUTE_DIRECT : TC_ROUTE_DOR;
    return m == TC_MODE_FORMULA ? TC_ROUTE_DMODK : TC_ROUTE_ECMP;
}

tc_status tc_eval_cut_off(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, uint32_t src, uint32_t dst,
                          uint32_t vs, uint32_t vd, tc_err *err)
{
    char a[40], b[40];
    uint32_t p = s->req.p;
    if (src < p)
        snprintf(a, sizeof a, "rank %u (endpoint %u)", src, vs);
    else
        snprintf(a, sizeof a, "a switch (vertex %u)", vs);
    if (dst < p)
        snprintf(b, sizeof b, "rank %u (endpoint %u)", dst, vd);
    else
        snprintf(b, sizeof b, "a switch (vertex %u)", vd);
    tc_routing r = o->cut_routing != TC_ROUTE_DEFAULT ? o->cut_routing : tc_eval_routing(o->mode, t, o->routing);
    return tc_fail(err, TC_EINVAL, "the failures cut %s off from %s: no surviving path under routing %s; the job cannot "
                                   "run as placed%s",
                   a, b, tc_routing_name(r, t), tc_eval_cut_hint(t, r, vs, vd));
}

/* Seconds per byte a rank takes to reduce what it receives (gamma):
 * 1 / reduce_bw of the topology, 0 where not given and for an NCCL
 * protocol, whose bandwidths include its reduction (docs/MODEL.md,
 * "Reduction cost"). */
double tc_eval_gamma(const tc_topo *t, const tc_sched *sc)
{
    return t->reduce_bw > 0 && sc->proto == TC_PROTO_NONE ? 1 / t->reduce_bw : 0;
}

const char *tc_eval_cut_hint(const tc_topo *t, tc_routing r, uint32_t vs, uint32_t vd)
{
    if (r == TC_ROUTE_DIRECT && t->kind == TC_TOPO_FULL)
        return " (--routing detour goes through another endpoint)";
    if (r != TC_ROUTE_DETOUR || tc_topo_fabric_kind(t) != TC_TOPO_TORUS)
        return "";
    uint32_t *path = malloc(((size_t)tc_topo_max_path(t) + 1) * sizeof *path);
    bool line = path && tc_topo_route(t, TC_ROUTE_LINE, vs, vd, path) != TC_NO_ROUTE;
    free(path);
    return line ? " (--routing line goes the other way round the ring)" : "";
}

tc_status tc_eval_failed_ranks(const tc_topo *t, uint32_t p, const uint32_t *map, tc_err *err)
{
    if (!t->vertex_failed)
        return TC_OK;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t e = map ? map[r] : r;
        if (t->vertex_failed[e])
            return tc_fail(err, TC_EINVAL, "rank %u's endpoint %u has failed: the job aborts (a collective library does "
                                           "not survive a lost rank); place the job on live endpoints",
                           r, e);
    }
    return TC_OK;
}

static tc_status check_req(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n, tc_err *err)
{
    if (req->p == 0)
        return tc_fail(err, TC_EINVAL, "invalid rank count 0: expected 1 to %u", t->n_endpoints);
    if (req->p > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", req->p,
                       t->n_endpoints, t->n_endpoints);
    for (size_t i = 0; i < n; i++)
        if (!(sizes[i] > 0) || sizes[i] > TC_MAX_BYTES)
            return tc_fail(err, TC_EINVAL, "invalid size %g bytes: must be above 0 and at most 2^60", sizes[i]);
    if (!tc_coll_valid(req->op, req->algo, req->p, t, err))
        return TC_EINVAL;
    return TC_OK;
}

/* Whether ranks r .. r + G - 1 share one scale-up node for every block of
 * G ranks under map: what hier (its rings inside nodes) assumes of the
 * nodes the job got, as a library finds them (MPI's shared-memory split). */
static bool nodes_whole(const tc_topo *t, uint32_t p, const uint32_t *map)
{
    uint32_t G = t->node_size > 1 ? t->node_size : 1;
    for (uint32_t r = 0; map && G > 1 && r < p; r++)
        if (map[r] / G != map[r - r % G] / G)
            return false;
    return true;
}

/* The same for hier-dc's groups, the pods of a multidc. */
static bool pods_whole(const tc_topo *t, uint32_t p, const uint32_t *map)
{
    uint32_t G = tc_topo_pod_size(t);
    for (uint32_t r = 0; map && r < p; r++)
        if (map[r] / G != map[r - r % G] / G)
            return false;
    return true;
}

/* NCCL's algorithms take rank r as GPU r mod G of node r / G (coll/nccl.c):
 * a rank map must keep that, whole nodes in some order; hier takes ranks
 * r .. r + G - 1 as one node's. */
tc_status tc_eval_map_check(const tc_topo *t, const tc_coll_req *req, const uint32_t *map, tc_err *err)
{
    uint32_t G = t->node_size > 1 ? t->node_size : 1;
    if (req->algo == TC_ALGO_HIER_DC && !pods_whole(t, req->p, map))
        return tc_fail(err, TC_EINVAL, "hier-dc takes ranks r .. r+%u as one pod's (%u endpoints per pod), but the "
                                       "placement spreads them over several pods: place whole pods (first) or use "
                                       "another algorithm",
                       tc_topo_pod_size(t) - 1, tc_topo_pod_size(t));
    if (req->algo == TC_ALGO_HIER && !nodes_whole(t, req->p, map))
        return tc_fail(err, TC_EINVAL, "hier takes ranks r .. r+%u as one node's (node=%u), but the placement spreads "
                                       "them over several nodes: place whole nodes (packed) or use another algorithm",
                       G - 1, G);
    if (!tc_algo_is_nccl(req->algo) || !map || G == 1)
        return TC_OK;
    for (uint32_t r = 0; r < req->p; r++) {
        uint32_t first = r - r % G;
        if (map[r] % G != r % G || map[r] / G != map[first] / G)
            return tc_fail(err, TC_EINVAL,
                           "%s takes rank r as GPU r mod %u of a node, node by node; the placement puts rank %u on "
                           "endpoint %u: place whole nodes (or use an MPI-style algorithm)",
                           tc_algo_name(req->algo), G, r, map[r]);
    }
    return TC_OK;
}

/* ECMP's hash collisions are a property of each flow's path: only the
 * evaluators that route every flow model them. */
static tc_status check_routing(const tc_eval_opts *o, tc_err *err)
{
    if (o->mode == TC_MODE_FORMULA && o->routing == TC_ROUTE_ECMP)
        return tc_fail(err, TC_EINVAL, "routing ecmp needs --mode steps or flow: formula models D-mod-k (dmodk), "
                                       "which has no hash collisions");
    return TC_OK;
}

/* Flow bounds time one named schedule of one step; auto would try every
 * algorithm, most of them of many steps. */
static tc_status check_bounds(const tc_coll_req *req, const tc_eval_opts *o, tc_err *err)
{
    if (o->mode == TC_MODE_FLOW && o->flow && o->flow->bounds && req->algo == TC_ALGO_AUTO)
        return tc_fail(err, TC_EINVAL, "--flow-bounds times one named algorithm whose schedule is one step (--algo "
                                       "direct for all-to-all); auto would try every algorithm");
    return TC_OK;
}

void tc_eval_flow_named(tc_flow_opts *fo, tc_progress_relay *r, const tc_sched *s, uint32_t ngroups)
{
    if (!fo->progress)
        return;
    char sz[32];
    tc_progress_relay_start(r, fo->progress, fo->progress_ud, NULL, NULL, 0);
    tc_fmt_size(s->req.bytes, sz, sizeof sz);
    if (ngroups > 1)
        tc_progress_relay_part(r, 0, "flow simulation of %s at %s in %u groups", tc_algo_name(s->algo), sz, ngroups);
    else
        tc_progress_relay_part(r, 0, "flow simulation of %s at %s", tc_algo_name(s->algo), sz);
    r->what = r->part;
    fo->progress = tc_progress_relay_cb;
    fo->progress_ud = r;
}

/* One simulation with its whole result kept (tc_eval_opts.flow_detail);
 * *upper the upper end of flow bounds (0: not bounded). */
static tc_status run_flow_detail(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s,
                                 double *upper, tc_err *err)
{
    tc_flow_opts fo;
    memset(&fo, 0, sizeof fo);
    if (o->flow)
        fo = *o->flow;
    fo.routing = o->routing;
    tc_progress_relay named;
    tc_eval_flow_named(&fo, &named, s, 1);
    tc_flow_job job = {.sched = s, .rank_map = o->rank_map};
    tc_status st = tc_flow_run(t, &job, 1, &fo, o->flow_detail, err);
    if (st == TC_OK) {
        *time_s = o->flow_detail->jobs[0].time_s;
        *upper = o->flow_detail->bounded ? o->flow_detail->upper_s : 0;
    }
    return st;
}

/* tc_eval_sched, with the upper end of flow bounds in *upper (0: not
 * bounded): a bounded run keeps its result for it. */
static tc_status eval_one(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, double *upper,
                          tc_err *err)
{
    *upper = 0;
    if (!(o->mode == TC_MODE_FLOW && o->flow && o->flow->bounds))
        return tc_eval_sched(t, s, o, time_s, err);
    tc_flow_result r;
    tc_eval_opts od = *o;
    od.flow_detail = &r;
    tc_status st = run_flow_detail(t, s, &od, time_s, upper, err);
    if (st == TC_OK)
        tc_flow_result_free(&r);
    return st;
}

tc_status tc_eval_sched(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{
    if (o->mode == TC_MODE_FLOW) {
        tc_flow_opts fo;
        memset(&fo, 0, sizeof fo);
        if (o->flow)
            fo = *o->flow;
        fo.routing = o->routing;
        fo.trace_path = NULL;
        tc_progress_relay named;
        tc_eval_flow_named(&fo, &named, s, 1);
        return tc_flow_time(t, s, o->rank_map, &fo, time_s, err);
    }
    return o->mode == TC_MODE_STEPS ? tc_eval_steps(t, s, o, time_s, err) : tc_eval_formula(t, s, o, time_s, err);
}

static tc_status sweep_rounded(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                               const tc_eval_opts *o, tc_result *res, tc_err *err);

tc_status tc_evaluate_check(const tc_topo *t, const tc_coll_req *req, const double *asked, size_t n,
                            const tc_eval_opts *o, tc_err *err)
{
    tc_status st = check_req(t, req, asked, n, err);
    if (st || (st = check_routing(o, err)) || (st = check_bounds(req, o, err)) ||
        (st = tc_eval_map_check(t, req, o->rank_map, err)) ||
        (st = tc_eval_failed_ranks(t, req->p, o->rank_map, err)) ||
        (req->algo == TC_ALGO_MPICH && (st = tc_mpich_map_check(req->p, t, o->rank_map, err))))
        return st;
    /* a named algorithm's root (tc_coll_build's check) */
    if (req->algo != TC_ALGO_AUTO && (req->op == TC_OP_BROADCAST || req->op == TC_OP_REDUCE) && req->root >= req->p)
        return tc_fail(err, TC_EINVAL, "invalid root %u: expected a rank from 0 to %u", req->root, req->p - 1);
    return TC_OK;
}

tc_status tc_evaluate_sweep(const tc_topo *t, const tc_coll_req *req, const double *asked, size_t n,
                            const tc_eval_opts *o, tc_result *res, tc_err *err)
{
    tc_status st = tc_evaluate_check(t, req, asked, n, o, err);
    if (st)
        return st;
    if (o->alphas && o->mode == TC_MODE_FLOW)
        return tc_fail(err, TC_EINTERNAL, "per-size alphas apply to the formula and steps sweeps, not to flow");
    /* Whole elements: the sizes nccl-tests would run, reported as such. */
    double *sizes = tc_calloc(n, sizeof *sizes);
    if (!sizes)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n && st == TC_OK; i++) {
        tc_coll_req r = *req;
        r.bytes = asked[i];
        st = tc_coll_round(&r, err);
        sizes[i] = r.bytes;
    }
    if (st == TC_OK)
        st = sweep_rounded(t, req, sizes, n, o, res, err);
    free(sizes);
    return st;
}

static tc_status sweep_rounded(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                               const tc_eval_opts *o, tc_result *res, tc_err *err)
{
    tc_status st = TC_OK;
    for (size_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].time_s = INFINITY;
    }
    double *tt = tc_calloc(2 * n, sizeof *tt), *up = tt + n; /* up: flow bounds' upper ends */
    if (!tt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    int lo, hi;
    tc_coll_candidates(req, &lo, &hi);
    for (int a = lo; a < hi; a++) {
        if (tc_coll_left_out(req, a) || !tc_coll_valid(req->op, (tc_algo)a, req->p, t, NULL))
            continue;
        /* auto in formula and steps: scattered's blocks take at least
         * direct's one step (docs/MODEL.md, "MPICH's throttled
         * all-to-all"), and direct comes first on a tie */
        if (a == TC_ALGO_SCATTERED && req->algo == TC_ALGO_AUTO && o->mode != TC_MODE_FLOW &&
            tc_coll_valid(req->op, TC_ALGO_DIRECT, req->p, t, NULL))
            continue;
        if (a == TC_ALGO_HIER && !nodes_whole(t, req->p, o->rank_map))
            continue; /* its rings inside nodes would not be inside the nodes the job got */
        tc_coll_req r = tc_coll_candidate(req, (tc_algo)a, sizes[0]);
        tc_sched *s = NULL;
        if ((st = tc_coll_build(&r, t, &s, err))) {
            free(tt);
            return st;
        }
        if (tc_req_per_size(req, (tc_algo)a)) {
            /* Channels, loops and chunks (nccl), the algorithm (mpich)
             * follow the size: one schedule per size, not one rescaled;
             * but in formula and steps the sizes i0 .. i-1 whose schedules
             * have the shape of sizes[i0]'s (tc_sched.same_shape: the same
             * transfers, bytes scaled) are evaluated as one sweep. */
            size_t i0 = 0;
            for (size_t i = 1; i <= n && st == TC_OK; i++) {
                tc_sched *nx = NULL;
                if (i < n) {
                    r.bytes = sizes[i];
                    if ((st = tc_coll_build(&r, t, &nx, err)))
                        break;
                    if (o->mode != TC_MODE_FLOW && s->same_shape && s->same_shape(s, nx)) {
                        tc_sched_free(nx);
                        continue;
                    }
                }
                /* the per-message overheads of these sizes (compare's alphas) */
                tc_eval_opts oi = *o;
                if (o->alphas)
                    oi.alphas = o->alphas + i0;
                if (i - i0 > 1)
                    st = o->mode == TC_MODE_FORMULA ? tc_eval_formula_sweep(t, s, &oi, sizes + i0, i - i0, tt + i0, err)
                                                    : tc_eval_steps_sweep(t, s, &oi, sizes + i0, i - i0, tt + i0, err);
                else
                    st = o->flow_detail && n == 1 && o->mode == TC_MODE_FLOW
                             ? run_flow_detail(t, s, o, &tt[i0], &up[i0], err)
                             : eval_one(t, s, &oi, &tt[i0], &up[i0], err);
                uint64_t transfers = 0;
                bool counted = false;
                for (size_t k = i0; k < i && st == TC_OK; k++) {
                    double wb;
                    if (!(tt[k] < res[k].time_s) ||
                        (!counted && (st = tc_sched_count(s, &transfers, &wb, err)) != TC_OK))
                        continue;
                    counted = true;
                    res[k].transfers = transfers;
                    res[k].time_s = tt[k];
                    res[k].bounds_upper_s = up[k];
                    res[k].algo = (tc_algo)a;
                    res[k].phases = s->nphases;
                    res[k].steps = s->nsteps;
                    res[k].proto = s->proto;
                    res[k].channels = s->channels;
                    res[k].nccl_impl = s->nccl_impl;
                }
                if (st) {
                    tc_sched_free(nx);
                    break;
                }
                tc_sched_free(s);
                s = nx;
                i0 = i;
            }
        } else if (o->mode == TC_MODE_FORMULA)
            st = tc_eval_formula_sweep(t, s, o, sizes, n, tt, err);
        else if (o->mode == TC_MODE_STEPS)
            st = tc_eval_steps_sweep(t, s, o, sizes, n, tt, err);
        for (size_t i = 0; i < n && st == TC_OK && o->mode == TC_MODE_FLOW && !tc_req_per_size(req, (tc_algo)a); i++) {
            tc_sched_set_bytes(s, sizes[i]);
            st = o->flow_detail && n == 1 && hi == lo + 1 ? run_flow_detail(t, s, o, &tt[i], &up[i], err)
                                                          : eval_one(t, s, o, &tt[i], &up[i], err);
        }
        /* The winner's transfers, counted once per schedule (the count does
         * not depend on the size). */
        uint64_t transfers = 0;
        bool counted = false;
        for (size_t i = 0; i < n && st == TC_OK && !tc_req_per_size(req, (tc_algo)a); i++) {
            /* Strictly faster wins: ties go to the earlier algorithm. */
            if (tt[i] < res[i].time_s) {
                double wb;
                if (!counted && (st = tc_sched_count(s, &transfers, &wb, err)))
                    break;
                counted = true;
                res[i].time_s = tt[i];
                res[i].bounds_upper_s = up[i];
                res[i].algo = (tc_algo)a;
                res[i].phases = s->nphases;
                res[i].steps = s->nsteps;
                res[i].transfers = transfers;
            }
        }
        tc_sched_free(s);
        if (st) {
            free(tt);
            return st;
        }
    }
    free(tt);
    for (size_t i = 0; i < n; i++) {
        tc_result *x = &res[i];
        x->op = req->op;
        x->algo_requested = req->algo;
        x->chunks = req->algo == TC_ALGO_AUTO ? 0 : req->chunks;
        x->variant = req->algo == TC_ALGO_AUTO ? TC_VARIANT_DEFAULT : req->variant;
        x->throttle = req->algo == TC_ALGO_SCATTERED || req->algo == TC_ALGO_MPICH ? req->throttle : 0;
        x->ranks = req->p;
        x->bytes = sizes[i];
        x->elt = req->elt;
        x->dtype = req->dtype, x->redop = req->redop;
        x->mode = o->mode;
        x->routing = tc_eval_routing(o->mode, t, o->routing);
        x->algbw_Bps = x->time_s > 0 ? sizes[i] / x->time_s : 0;
        x->busbw_Bps = x->algbw_Bps * tc_op_busbw_factor(req->op, req->p);
        x->lower_bound_s = tc_lower_bound_ex(t, req->op, req->p, sizes[i], o->rank_map,
                                             o->alphas ? o->alphas[i] : t->alpha, tc_req_node_reduces(req));
        if (isnan(x->lower_bound_s))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    return TC_OK;
}

tc_status tc_evaluate(const tc_topo *t, const tc_coll_req *req, const tc_eval_opts *o, tc_result *res, tc_err *err)
{
    return tc_evaluate_sweep(t, req, &req->bytes, 1, o, res, err);
}

char *tc_result_algo_name(const tc_result *r, bool requested, char *buf, size_t len)
{
    tc_coll_req q = {.algo = requested ? r->algo_requested : r->algo, .variant = r->variant};
    if (q.algo == TC_ALGO_SCATTERED || q.algo == TC_ALGO_MPICH)
        q.throttle = r->throttle;
    return tc_algo_format(&q, buf, len);
}
