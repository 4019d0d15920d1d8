/*
 * groups.c - one collective run by every group of a partition of the job at
 * once (docs/MODEL.md, "Sub-groups"): the choice of auto for one group, the
 * wrapper schedule (coll/group.c) in formula and steps, one flow job per
 * group in flow, the slowest group's time and the groups' spread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/eval.h"
#include "eval/eval_int.h"

void tc_groups_flow_jobs(const tc_sched *s, const tc_groups *g, const uint32_t *map, uint32_t *maps,
                         char (*names)[24], tc_flow_job *jobs)
{
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        uint32_t *m = maps + (size_t)gi * g->size;
        for (uint32_t i = 0; i < g->size; i++) {
            uint32_t r = g->members[(size_t)gi * g->size + i];
            m[i] = map ? map[r] : r;
        }
        snprintf(names[gi], sizeof names[gi], "group %u", gi);
        jobs[gi] = (tc_flow_job){.sched = s, .rank_map = m, .start_s = 0, .name = names[gi]};
    }
}

/* What the flow runs of a grouped evaluation share. */
typedef struct grp_flow {
    uint32_t *maps;
    char (*names)[24];
    tc_flow_job *jobs;
} grp_flow;

static void grp_flow_free(grp_flow *f)
{
    free(f->maps);
    free(f->names);
    free(f->jobs);
}

/* One flow run of inner at its size, every group a job: the slowest and
 * fastest groups into r (time_s, group_*); detail: the whole result kept. */
static tc_status flow_groups(const tc_topo *t, const tc_sched *inner, const tc_groups *g, const tc_eval_opts *o,
                             grp_flow *f, tc_flow_result *detail, tc_result *r, tc_err *err)
{
    tc_flow_opts fo;
    memset(&fo, 0, sizeof fo);
    if (o->flow)
        fo = *o->flow;
    fo.routing = o->routing;
    if (!detail)
        fo.trace_path = NULL;
    tc_progress_relay named;
    tc_eval_flow_named(&fo, &named, inner, g->ngroups);
    tc_groups_flow_jobs(inner, g, o->rank_map, f->maps, f->names, f->jobs);
    tc_flow_result fr, *res = detail ? detail : &fr;
    memset(res, 0, sizeof *res);
    tc_status st = tc_flow_run(t, f->jobs, g->ngroups, &fo, res, err);
    if (st)
        return st;
    r->time_s = -INFINITY;
    r->group_fastest_s = INFINITY;
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        double x = res->jobs[gi].time_s;
        if (x > r->time_s)
            r->time_s = x, r->group_slowest = gi;
        if (x < r->group_fastest_s)
            r->group_fastest_s = x, r->group_fastest = gi;
    }
    if (!detail)
        tc_flow_result_free(&fr);
    return TC_OK;
}

/* The largest over the groups of one group's lower bound on its endpoints. */
static double groups_bound(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, double bytes,
                           const uint32_t *map, const double *alpha, uint32_t *buf)
{
    double lb = 0;
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        for (uint32_t i = 0; i < g->size; i++) {
            uint32_t r = g->members[(size_t)gi * g->size + i];
            buf[i] = map ? map[r] : r;
        }
        double b = tc_lower_bound_ex(t, req->op, g->size, bytes, buf, alpha ? *alpha : t->alpha,
                                     tc_req_node_reduces(req));
        if (isnan(b))
            return b; /* out of memory */
        lb = fmax(lb, b);
    }
    return lb;
}

static tc_status check_args(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                            size_t n, const tc_eval_opts *o, tc_err *err)
{
    tc_status st = tc_groups_check(g, err);
    if (st)
        return st;
    if (g->p > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", g->p,
                       t->n_endpoints, t->n_endpoints);
    if (req->p != g->size)
        return tc_fail(err, TC_EINTERNAL, "sub-groups: a request for %u ranks for groups of %u", req->p, g->size);
    if ((st = tc_eval_failed_ranks(t, g->p, o->rank_map, err)))
        return st;
    for (size_t i = 0; i < n; i++)
        if (!(sizes[i] > 0) || sizes[i] > TC_MAX_BYTES)
            return tc_fail(err, TC_EINVAL, "invalid size %g bytes: must be above 0 and at most 2^60", sizes[i]);
    if (o->mode == TC_MODE_FORMULA && o->routing == TC_ROUTE_ECMP)
        return tc_fail(err, TC_EINVAL, "routing ecmp needs --mode steps or flow: formula models D-mod-k (dmodk), "
                                       "which has no hash collisions");
    if (o->alphas && o->mode == TC_MODE_FLOW)
        return tc_fail(err, TC_EINTERNAL, "per-size alphas apply to the formula and steps sweeps, not to flow");
    if (!tc_coll_valid_groups(req->op, req->algo, g, err)) {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err ? err->msg : "");
        return tc_fail(err, TC_EINVAL, "groups of %u ranks: %s", g->size, m);
    }
    return TC_OK;
}

tc_status tc_evaluate_groups_check(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                                   size_t n, const tc_eval_opts *o, tc_err *err)
{
    tc_status st = check_args(t, req, g, sizes, n, o, err);
    if (st)
        return st;
    if (req->algo == TC_ALGO_MPICH && (st = tc_groups_mpich_check(g, t, o->rank_map, err)))
        return st;
    if (!tc_algo_is_nccl(req->algo))
        return TC_OK;
    tc_topo *view = NULL;
    if ((st = tc_groups_nccl_view(g, t, o->rank_map, &view, err)))
        return st;
    if (!tc_coll_valid(req->op, req->algo, g->size, view, err)) {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err ? err->msg : "");
        st = tc_fail(err, TC_EINVAL, "groups of %u ranks: %s", g->size, m);
    }
    tc_topo_free(view);
    return st;
}

tc_status tc_evaluate_groups_sweep(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *asked,
                                   size_t n, const tc_eval_opts *o, tc_result *res, tc_err *err)
{
    tc_status st = check_args(t, req, g, asked, n, o, err);
    if (st)
        return st;
    double *sizes = tc_calloc(n, sizeof *sizes), *tt = tc_calloc(n, sizeof *tt);
    uint32_t *buf = tc_calloc(g->size, sizeof *buf);
    grp_flow f = {0};
    tc_topo ibuf, *view = NULL; /* freed at done, which the first failures reach */
    if (o->mode == TC_MODE_FLOW) {
        f.maps = tc_calloc(g->p, sizeof *f.maps);
        f.names = tc_calloc(g->ngroups, sizeof *f.names);
        f.jobs = tc_calloc(g->ngroups, sizeof *f.jobs);
    }
    if (!sizes || !tt || !buf || (o->mode == TC_MODE_FLOW && (!f.maps || !f.names || !f.jobs))) {
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
        goto done;
    }
    /* Whole elements of one group's collective. */
    for (size_t i = 0; i < n && st == TC_OK; i++) {
        tc_coll_req r = *req;
        r.bytes = asked[i];
        st = tc_coll_round(&r, err);
        sizes[i] = r.bytes;
    }
    for (size_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].time_s = INFINITY;
    }
    const tc_topo *it = tc_groups_inner_topo(g, &ibuf);
    if (req->algo == TC_ALGO_MPICH && (st = tc_groups_mpich_check(g, t, o->rank_map, err)))
        goto done;
    if (tc_algo_is_nccl(req->algo)) {
        /* NCCL over sub-groups: built on the communicator's view, routed on t */
        if ((st = tc_groups_nccl_view(g, t, o->rank_map, &view, err)))
            goto done;
        if (!tc_coll_valid(req->op, req->algo, g->size, view, err)) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err ? err->msg : "");
            st = tc_fail(err, TC_EINVAL, "groups of %u ranks: %s", g->size, m);
            goto done;
        }
        it = view;
    }
    int lo, hi;
    tc_coll_candidates(req, &lo, &hi);
    bool one = hi == lo + 1 && n == 1 && o->mode == TC_MODE_FLOW && o->flow_detail;
    bool kept = false;
    for (int a = lo; a < hi && st == TC_OK; a++) {
        if (tc_coll_left_out(req, a) || !tc_coll_valid_groups(req->op, (tc_algo)a, g, NULL))
            continue;
        /* as tc_evaluate: scattered never beats direct in formula and steps */
        if (a == TC_ALGO_SCATTERED && req->algo == TC_ALGO_AUTO && o->mode != TC_MODE_FLOW &&
            tc_coll_valid_groups(req->op, TC_ALGO_DIRECT, g, NULL))
            continue;
        /* NCCL's schedules follow the size (channels, loops, chunks),
         * mpich's choice and library's tree chunks: one per size */
        bool per_size = tc_req_per_size(req, (tc_algo)a);
        for (size_t k = 0; k < (per_size ? n : 1) && st == TC_OK; k++) {
            size_t i0 = per_size ? k : 0, i1 = per_size ? k + 1 : n;
            tc_coll_req r = tc_coll_candidate(req, (tc_algo)a, sizes[i0]);
            tc_sched *inner = NULL, *w = NULL;
            uint64_t cnt = 0;
            bool counted = false;
            if ((st = tc_coll_build(&r, it, &inner, err)))
                break;
            uint32_t nph = inner->nphases, nst = inner->nsteps, ch = inner->channels;
            tc_proto pr = inner->proto;
            tc_algo impl = inner->nccl_impl;
            tc_result cand[1];
            if (o->mode == TC_MODE_FLOW) {
                for (size_t i = i0; i < i1 && st == TC_OK; i++) {
                    tc_sched_set_bytes(inner, sizes[i]);
                    memset(cand, 0, sizeof cand);
                    st = flow_groups(t, inner, g, o, &f, one ? o->flow_detail : NULL, cand, err);
                    kept = kept || (one && st == TC_OK);
                    if (st == TC_OK && cand->time_s < res[i].time_s) {
                        /* every group's transfers: the schedule's, once each */
                        double wb;
                        if (!counted && (st = tc_sched_count(inner, &cnt, &wb, err)) != TC_OK)
                            break;
                        counted = true;
                        res[i].transfers = cnt * g->ngroups;
                        res[i].time_s = cand->time_s;
                        res[i].group_fastest_s = cand->group_fastest_s;
                        res[i].group_slowest = cand->group_slowest;
                        res[i].group_fastest = cand->group_fastest;
                        res[i].algo = (tc_algo)a;
                        res[i].phases = nph;
                        res[i].steps = nst;
                        res[i].proto = pr, res[i].channels = ch, res[i].nccl_impl = impl;
                    }
                }
                tc_sched_free(inner);
                continue;
            }
            if ((st = tc_sched_group(inner, g, &w, err)))
                break; /* inner freed */
            st = o->mode == TC_MODE_STEPS ? tc_eval_steps_sweep(t, w, o, sizes + i0, i1 - i0, tt + i0, err)
                                          : tc_eval_formula_sweep(t, w, o, sizes + i0, i1 - i0, tt + i0, err);
            for (size_t i = i0; i < i1 && st == TC_OK; i++)
                if (tt[i] < res[i].time_s) {
                    double wb;
                    if (!counted && (st = tc_sched_count(w, &cnt, &wb, err)) != TC_OK)
                        break;
                    counted = true;
                    res[i].transfers = cnt; /* the grouped schedule: every group's */
                    res[i].time_s = tt[i];
                    res[i].group_fastest_s = NAN;
                    res[i].algo = (tc_algo)a;
                    res[i].phases = nph;
                    res[i].steps = nst;
                    res[i].proto = pr, res[i].channels = ch, res[i].nccl_impl = impl;
                }
            tc_sched_free(w);
        }
    }
    if (st)
        goto done;
    /* Auto in flow with the details asked for: the winner runs once more. */
    if (o->mode == TC_MODE_FLOW && o->flow_detail && n == 1 && !kept) {
        tc_coll_req r = *req;
        r.algo = res[0].algo;
        r.bytes = sizes[0];
        if (req->algo == TC_ALGO_AUTO) {
            r.chunks = 0;
            r.variant = TC_VARIANT_DEFAULT;
        }
        tc_sched *inner = NULL;
        if ((st = tc_coll_build(&r, it, &inner, err)) == TC_OK) {
            tc_result x = {0};
            st = flow_groups(t, inner, g, o, &f, o->flow_detail, &x, err);
            tc_sched_free(inner);
        }
        if (st)
            goto done;
    }
    for (size_t i = 0; i < n; i++) {
        tc_result *x = &res[i];
        x->op = req->op;
        x->algo_requested = req->algo;
        x->chunks = req->algo == TC_ALGO_AUTO ? 0 : req->chunks;
        x->variant = req->algo == TC_ALGO_AUTO ? TC_VARIANT_DEFAULT : req->variant;
        x->throttle = req->algo == TC_ALGO_SCATTERED || req->algo == TC_ALGO_MPICH ? req->throttle : 0;
        x->ranks = g->p;
        x->groups = g->ngroups;
        x->group_size = g->size;
        x->bytes = sizes[i];
        x->elt = req->elt;
        x->dtype = req->dtype, x->redop = req->redop;
        x->mode = o->mode;
        x->routing = tc_eval_routing(o->mode, t, o->routing);
        x->algbw_Bps = x->time_s > 0 ? sizes[i] / x->time_s : 0;
        x->busbw_Bps = x->algbw_Bps * tc_op_busbw_factor(req->op, g->size);
        x->lower_bound_s = groups_bound(t, req, g, sizes[i], o->rank_map, o->alphas ? &o->alphas[i] : NULL, buf);
        if (isnan(x->lower_bound_s)) {
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
            goto done;
        }
    }
done:
    tc_topo_free(view);
    free(sizes);
    free(tt);
    free(buf);
    grp_flow_free(&f);
    return st;
}
