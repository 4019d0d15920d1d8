/*
 * run_net.c - the network commands of a scenario: topo, collective, compare
 * and concurrent. Each runner builds the scenario's networks, evaluates and
 * returns an outcome that owns everything its renderings need (the networks
 * included); nothing here prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "topocc/outcome_net.h"
#include "scenario_int.h"

/* The scenario's reduction operator (collective.redop; sum if unset). */
static uint8_t scn_redop(const tc_scenario *s)
{
    tc_redop op = TC_REDOP_SUM;
    return tc_redop_parse(s->redop, &op) ? (uint8_t)op : TC_REDOP_SUM;
}

static tc_status oom(tc_err *err)
{
    return tc_fail(err, TC_EINTERNAL, "out of memory");
}

/* Puts "prefix: " before the message already in err, so an error deep in
 * the evaluator names the cell or job it came from. */
static tc_status prefixed(tc_err *err, tc_status st, const char *prefix)
{
    if (!err)
        return st;
    char msg[TC_ERR_LEN];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return tc_fail(err, st, "%s: %s", prefix, msg);
}

/* A job's error, named as every job's is: jobs[i] (name). */
static tc_status job_prefixed(tc_err *err, tc_status st, size_t i, const char *name)
{
    char where[96];
    snprintf(where, sizeof where, "jobs[%zu] (%.64s)", i, name);
    return prefixed(err, st, where);
}

static void flow_setup_of(const tc_flow_opts *fo, tc_flow_setup *fs)
{
    fs->multipath = fo->multipath;
    fs->deps = fo->deps;
    fs->eager_limit_bytes = fo->eager_limit_bytes > 0 ? fo->eager_limit_bytes : TC_FLOW_DEFAULT_EAGER_LIMIT;
    fs->rate_cap_Bps = fo->rate_cap_Bps;
    snprintf(fs->trace, sizeof fs->trace, "%s", fo->trace_path ? fo->trace_path : "");
}

/* The flow options of network i, with the caller's progress callback. */
static void eval_opts(const tc_scenario *s, const tc_net *net, int i, const tc_run_opts *ro, tc_eval_opts *o,
                      tc_flow_opts *fo)
{
    memset(o, 0, sizeof *o);
    memset(fo, 0, sizeof *fo);
    tc_scenario_eval_opts(s, net, i, o, fo);
    fo->progress = ro ? ro->progress : NULL;
    fo->progress_ud = ro ? ro->progress_ud : NULL;
    o->flow = fo;
}

static double mem_limit(const tc_run_opts *ro)
{
    return ro ? ro->mem_limit_bytes : 0;
}

static double max_of(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, v[i]);
    return m;
}

/* The sizes at which a sweep's memory is estimated for algorithm a: the
 * largest, or every one where the schedule follows the size (nccl's
 * channels, mpich's choice: a smaller size may take a larger schedule). */
static size_t est_count(tc_algo a, size_t n)
{
    return tc_algo_per_size(a) ? n : 1;
}

static double est_size(tc_algo a, const double *sizes, size_t n, size_t k)
{
    return tc_algo_per_size(a) ? sizes[k] : max_of(sizes, n);
}

/* The memory the largest flow simulation of a sweep of req (every valid
 * algorithm for auto) would need, raised into *need (and *one_step: that
 * largest is of one step, which flow bounds would time). */
static void sweep_mem_need(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                           const uint32_t *map, const tc_flow_opts *fo, double *need, bool *one_step)
{
    int lo, hi;
    tc_coll_candidates(req, &lo, &hi);
    for (int a = lo; a < hi; a++) {
        if (!tc_coll_valid(req->op, (tc_algo)a, req->p, t, NULL))
            continue;
        for (size_t k = 0; k < est_count((tc_algo)a, n); k++) {
            tc_coll_req r = tc_coll_candidate(req, (tc_algo)a, est_size((tc_algo)a, sizes, n, k));
            tc_sched *sc = NULL;
            if (tc_coll_build(&r, t, &sc, NULL) != TC_OK)
                continue; /* the evaluation reports why */
            tc_flow_job job = {.sched = sc, .rank_map = map, .start_s = 0};
            double e = tc_flow_mem_estimate(t, &job, 1, fo);
            if (e > *need) {
                *need = e;
                /* flow bounds refuse a step with a reduction to charge
                 * (reduce_bw=): no hint of them there */
                *one_step = sc->nsteps == 1 && !sc->proto && !fo->bounds && !(tc_op_reduces(r.op) && t->reduce_bw > 0);
            }
            tc_sched_free(sc);
        }
    }
}

static tc_status sweep_mem_refuse(double need, bool one_step, const tc_flow_opts *fo, const tc_run_opts *ro,
                                  tc_err *err)
{
    return tc_mem_check(need, mem_limit(ro),
                        fo->bounds ? "the flow bounds"
                        : one_step ? "the flow simulation (--flow-bounds bounds this one-step schedule instead, in "
                                     "memory per link)"
                                   : "the flow simulation",
                        err);
}

/* Refuses a flow sweep of req whose largest simulation would need more
 * memory than the limit. Without a limit nothing can be refused, so no
 * schedule is built for the estimate. */
static tc_status sweep_mem_check(const tc_topo *t, const tc_coll_req *req, const double *sizes, size_t n,
                                 const uint32_t *map, const tc_flow_opts *fo, const tc_run_opts *ro, tc_err *err)
{
    if (!(mem_limit(ro) > 0))
        return TC_OK;
    double need = 0;
    bool one_step = false;
    sweep_mem_need(t, req, sizes, n, map, fo, &need, &one_step);
    return sweep_mem_refuse(need, one_step, fo, ro, err);
}

/* ---- topo ---------------------------------------------------------------- */

tc_status tc_run_topo(const tc_scenario *s, const tc_run_opts *ro, tc_topo_out **out, tc_err *err)
{
    (void)ro;
    *out = NULL;
    tc_topo_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return oom(err);
    tc_status st = tc_net_build(s, &o->net, err);
    if (st) {
        tc_topo_out_free(o);
        return st;
    }
    tc_topo_get_info_as_is(o->net.topo[0], &o->info);
    o->links = s->links;
    *out = o;
    return TC_OK;
}

void tc_topo_out_free(tc_topo_out *o)
{
    if (!o)
        return;
    tc_net_free(&o->net);
    free(o);
}

/* ---- collective ---------------------------------------------------------- */

/* The algorithm rows: the scenario's algorithms in order, "all" expanded
 * into every valid algorithm (auto excluded: it would repeat one of them). */
static tc_status coll_rows(const tc_scenario *s, const tc_topo *t, const tc_groups *g, tc_collective_out *o,
                           tc_err *err)
{
    int nalgos = s->nalgos > 0 ? s->nalgos : 1;
    o->rows = tc_calloc((size_t)nalgos * TC_ALGO_COUNT, sizeof *o->rows);
    if (!o->rows)
        return oom(err);
    for (int i = 0; i < nalgos; i++) {
        const char *spec = s->nalgos > 0 ? s->algos[i] : "auto";
        if (strcmp(spec, "all") == 0 && s->mode == TC_MODE_FLOW && s->flow_bounds)
            return tc_fail(err, TC_EINVAL, "--flow-bounds times algorithms whose schedule is one step (--algo direct "
                                           "for all-to-all); --algo all takes every algorithm, most of many steps");
        if (strcmp(spec, "all") == 0) {
            for (int a = 0; a < TC_ALGO_AUTO; a++) {
                if (g ? !tc_coll_valid_groups(o->op, (tc_algo)a, g, NULL)
                      : !tc_coll_valid(o->op, (tc_algo)a, o->ranks, t, NULL))
                    continue;
                tc_coll_row *r = &o->rows[o->nalgos++];
                snprintf(r->requested, sizeof r->requested, "%s", tc_algo_name((tc_algo)a));
                r->algo = (tc_algo)a;
            }
            continue;
        }
        tc_coll_req q = {.algo = TC_ALGO_AUTO};
        tc_status st = tc_algo_parse(spec, &q, err);
        if (st)
            return st;
        tc_coll_row *r = &o->rows[o->nalgos++];
        snprintf(r->requested, sizeof r->requested, "%s", spec);
        r->algo = q.algo;
        r->chunks = q.chunks;
        r->root = q.root;
        r->variant = q.variant;
        r->spec = q;
    }
    if (o->nalgos == 0 && g)
        return tc_fail(err, TC_EINVAL, "no algorithm is valid for %s on groups of %u ranks", tc_op_name(o->op),
                       g->size);
    if (o->nalgos == 0)
        return tc_fail(err, TC_EINVAL, "no algorithm is valid for %s on %u ranks of this topology",
                       tc_op_name(o->op), o->ranks);
    return TC_OK;
}

/* Runs auto's pick once more through tc_flow_run for the details (events,
 * rank finish spread, hottest links, trace); a named algorithm gets them
 * from its one run (tc_eval_opts.flow_detail). */
/* The nccl-* options of row into q, and scattered's throttle. */
static void nccl_options(tc_coll_req *q, const tc_coll_row *row)
{
    const tc_coll_req *p = &row->spec;
    q->throttle = p->throttle;
    q->channels = p->channels;
    q->proto = p->proto;
    q->proto_mask = p->proto_mask;
    q->algo_mask = p->algo_mask;
    q->min_channels = p->min_channels;
    q->max_channels = p->max_channels;
    q->min_ctas = p->min_ctas;
    q->max_ctas = p->max_ctas;
    q->buffsize = p->buffsize;
    q->pxn = p->pxn;
    q->nvls_off = p->nvls_off;
}

/* The schedule the result r ran: its algorithm (auto resolved), size
 * (already whole elements) and element size. */
static tc_status chosen_sched(const tc_topo *t, const tc_coll_row *row, const tc_result *r, tc_sched **sc,
                              tc_err *err)
{
    tc_coll_req q = {.op = r->op, .algo = r->algo, .p = r->ranks, .bytes = r->bytes, .root = row->root,
                     .elt = r->elt, .dtype = r->dtype, .redop = r->redop};
    q.chunks = row->algo == TC_ALGO_AUTO ? 0 : row->chunks;
    q.variant = row->algo == TC_ALGO_AUTO ? TC_VARIANT_DEFAULT : row->variant;
    nccl_options(&q, row);
    return tc_coll_build(&q, t, sc, err);
}

static tc_status flow_detail(const tc_topo *t, const tc_coll_row *row, const tc_result *r, const uint32_t *map,
                             const tc_flow_opts *fo, tc_collective_out *o, tc_err *err)
{
    tc_sched *sc = NULL;
    tc_status st = chosen_sched(t, row, r, &sc, err);
    if (st)
        return st;
    tc_flow_job job = {.sched = sc, .rank_map = map, .start_s = 0};
    /* auto's pick, run again: said so in its progress reports */
    tc_flow_opts named = *fo;
    tc_progress_relay rl;
    if (fo->progress) {
        char sz[32];
        tc_progress_relay_start(&rl, fo->progress, fo->progress_ud, NULL, NULL, 0);
        tc_progress_relay_part(&rl, 0, "flow simulation of %s at %s (the pick, again for its details)",
                               tc_algo_name(sc->algo), tc_fmt_size(sc->req.bytes, sz, sizeof sz));
        rl.what = rl.part;
        named.progress = tc_progress_relay_cb;
        named.progress_ud = &rl;
    }
    st = tc_flow_run(t, &job, 1, &named, &o->flow, err);
    o->has_flow = st == TC_OK;
    tc_sched_free(sc);
    return st;
}

/* Fills o's phases as the formula evaluator costs sc's; frees sc. */
static tc_status formula_phases(const tc_topo *t, tc_sched *sc, const tc_eval_opts *eo, tc_collective_out *o,
                                tc_err *err)
{
    tc_status st = TC_OK;
    o->phases = tc_calloc(sc->nphases, sizeof *o->phases);
    o->phase_labels = tc_calloc(sc->nphases, sizeof *o->phase_labels);
    double total;
    if (!o->phases || !o->phase_labels)
        st = oom(err);
    else if ((st = tc_eval_formula_phases(t, sc, eo, o->phases, &total, err)) == TC_OK) {
        o->nphases = sc->nphases;
        o->phases_pipelined = sc->pipe_hops > 0;
        for (uint32_t i = 0; i < sc->nphases; i++)
            snprintf(o->phase_labels[i], sizeof o->phase_labels[i], "%s", sc->phases[i].label);
    }
    tc_sched_free(sc);
    return st;
}

/* The chosen algorithm's phases as the formula evaluator costs them. */
static tc_status phase_detail(const tc_topo *t, const tc_coll_row *row, const tc_result *r, const tc_eval_opts *eo,
                              tc_collective_out *o, tc_err *err)
{
    tc_sched *sc = NULL;
    tc_status st = chosen_sched(t, row, r, &sc, err);
    return st ? st : formula_phases(t, sc, eo, o, err);
}

/* ---- collective over sub-groups ---- */

/* Refuses a grouped flow sweep whose largest simulation (every group a
 * job) would need more memory than the limit. */
static tc_status groups_mem_check(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const double *sizes,
                                  size_t n, const uint32_t *map, const tc_flow_opts *fo, const tc_run_opts *ro,
                                  tc_err *err)
{
    if (!(mem_limit(ro) > 0))
        return TC_OK;
    tc_topo ibuf, *view = NULL;
    const tc_topo *it = tc_groups_inner_topo(g, &ibuf);
    /* NCCL's schedules are built on the groups' communicator view */
    if (tc_algo_is_nccl(req->algo) && tc_groups_nccl_view(g, t, map, &view, NULL) == TC_OK)
        it = view;
    uint32_t *maps = tc_calloc(g->p, sizeof *maps);
    char(*names)[24] = tc_calloc(g->ngroups, sizeof *names);
    tc_flow_job *jobs = tc_calloc(g->ngroups, sizeof *jobs);
    double need = 0;
    int lo, hi;
    tc_coll_candidates(req, &lo, &hi);
    for (int a = lo; a < hi && maps && names && jobs; a++) {
        if (!tc_coll_valid_groups(req->op, (tc_algo)a, g, NULL))
            continue;
        for (size_t k = 0; k < est_count((tc_algo)a, n); k++) {
            tc_coll_req r = tc_coll_candidate(req, (tc_algo)a, est_size((tc_algo)a, sizes, n, k));
            tc_sched *sc = NULL;
            if (tc_coll_build(&r, it, &sc, NULL) != TC_OK)
                continue; /* the evaluation reports why */
            tc_groups_flow_jobs(sc, g, map, maps, names, jobs);
            need = fmax(need, tc_flow_mem_estimate(t, jobs, g->ngroups, fo));
            tc_sched_free(sc);
        }
    }
    tc_status st = maps && names && jobs ? tc_mem_check(need, mem_limit(ro), "the flow simulation", err) : oom(err);
    free(maps);
    free(names);
    free(jobs);
    tc_topo_free(view);
    return st;
}

/* The chosen algorithm's wrapper schedule, its phases as formula costs them;
 * NCCL's built on the communicator's view, as the groups were evaluated
 * (eval/groups.c). */
static tc_status groups_phase_detail(const tc_topo *t, const tc_coll_row *row, const tc_result *r,
                                     const tc_groups *g, const tc_eval_opts *eo, tc_collective_out *o, tc_err *err)
{
    tc_coll_req q = {.op = r->op, .algo = r->algo, .p = g->size, .bytes = r->bytes, .root = row->root,
                     .elt = r->elt, .dtype = r->dtype, .redop = r->redop};
    q.chunks = row->algo == TC_ALGO_AUTO ? 0 : row->chunks;
    q.variant = row->algo == TC_ALGO_AUTO ? TC_VARIANT_DEFAULT : row->variant;
    nccl_options(&q, row);
    tc_sched *sc = NULL, *inner = NULL;
    tc_topo *view = NULL;
    tc_status st = TC_OK;
    if (tc_algo_is_nccl(q.algo))
        st = tc_groups_nccl_view(g, t, eo->rank_map, &view, err);
    if (st == TC_OK)
        st = view ? tc_coll_build(&q, view, &inner, err) : tc_coll_build_groups(&q, g, &sc, err);
    if (st == TC_OK && view)
        st = tc_sched_group(inner, g, &sc, err);
    tc_topo_free(view);
    return st ? st : formula_phases(t, sc, eo, o, err);
}

tc_status tc_scn_groups_make(const tc_group_spec *spec, uint32_t p, const uint32_t *map, const tc_topo *t,
                             tc_scn_groups *ng, tc_err *err)
{
    memset(ng, 0, sizeof *ng);
    ng->g.p = p;
    tc_status st = tc_group_make(spec, p, map, t, &ng->pt, &ng->g.ndims, ng->g.dims, ng->g.wrap, err);
    if (st)
        return st;
    ng->g.ngroups = ng->pt.ngroups;
    ng->g.size = ng->pt.ngroups ? ng->pt.first[1] - ng->pt.first[0] : 0;
    ng->g.members = ng->pt.members;
    return tc_groups_check(&ng->g, err);
}

/* ---- where a placed job runs: the slice's own torus, or an implicit group ---- */

tc_status tc_scn_jobnet_make(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_scn_jobnet *jn,
                             tc_err *err)
{
    memset(jn, 0, sizeof *jn);
    jn->topo = t;
    jn->map = map;
    jn->axes.kind = TC_GROUP_NONE;
    /* a failed endpoint, named as placed (on the slice's own torus its
     * endpoints are numbered anew) */
    tc_status st = tc_eval_failed_ranks(t, p, map, err);
    if (st)
        return st;
    st = tc_place_slice_run(t, map, p, ocs, &jn->sr, err);
    if (st)
        return st;
    if (jn->sr.topo) {
        jn->own = jn->sr.topo;
        jn->topo = jn->sr.topo;
        jn->map = jn->sr.map;
        return TC_OK;
    }
    if (jn->sr.axes.kind != TC_GROUP_AXES)
        return TC_OK;
    /* the slice as one group: used where the group can be made (it can
     * wherever the ranks fill a box) */
    tc_scn_groups probe;
    tc_err e2 = {{0}};
    if (tc_scn_groups_make(&jn->sr.axes, p, map, t, &probe, &e2) == TC_OK) {
        jn->implicit = true;
        jn->axes = jn->sr.axes;
    }
    tc_partition_free(&probe.pt);
    return TC_OK;
}

void tc_scn_jobnet_free(tc_scn_jobnet *jn)
{
    tc_slice_run_free(&jn->sr);
    jn->own = NULL;
}

tc_group_spec tc_scn_jobnet_group(const tc_scn_jobnet *jn, const tc_group_spec *spec)
{
    tc_group_spec g = *spec;
    if (!jn->own || spec->kind != TC_GROUP_AXES)
        return g;
    g.k = 0;
    for (int k = 0; k < jn->own->ndims; k++)
        if (spec->k & (1u << jn->own->box_pdim[k]))
            g.k |= 1u << k;
    return g;
}

void tc_scn_hot_to_parent(const tc_topo *t, tc_flow_result *fr)
{
    if (!t->box_link)
        return;
    size_t n = 0;
    for (size_t i = 0; i < fr->nhot; i++) {
        uint32_t l = tc_topo_box_parent_link(t, fr->hot[i].link);
        if (l == UINT32_MAX)
            continue; /* an optical circuit */
        fr->hot[n] = fr->hot[i];
        fr->hot[n++].link = l;
    }
    fr->nhot = n;
}

/* Names the group spec in err's message where the message does not. */
static tc_status group_named(const tc_group_spec *spec, tc_status st, tc_err *err)
{
    char b[48], m[TC_ERR_LEN];
    snprintf(m, sizeof m, "%s", err ? err->msg : "");
    if (strncmp(m, "group ", 6) == 0 || strncmp(m, "sub-groups", 10) == 0)
        return st;
    return tc_fail(err, st, "group %s: %s", tc_group_format(spec, b, sizeof b), m);
}

/* spec: the scenario's group, or (implicit) the job's slice of a torus as
 * one group along every axis, so that the torus algorithms run on the
 * slice's own torus; an implicit group is not reported as groups. */
static tc_status coll_groups_eval(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_collective_out *o,
                                  const tc_topo *t, tc_eval_opts *eo, const tc_flow_opts *fo, const uint32_t *map,
                                  const tc_group_spec *spec, bool implicit, tc_err *err)
{
    tc_scn_groups ng;
    tc_status st = tc_scn_groups_make(spec, o->ranks, map, t, &ng, err);
    tc_groups g = ng.g;
    o->group = *spec;
    o->ngroups = g.ngroups;
    o->group_size = g.size;
    if (st || (st = coll_rows(s, t, &g, o, err)))
        goto done;
    for (size_t i = 0; check && i < o->nalgos && st == TC_OK; i++) {
        const tc_coll_row *row = &o->rows[i];
        tc_coll_req req = {.op = o->op, .algo = row->algo, .p = g.size, .chunks = row->chunks, .root = row->root,
                           .variant = row->variant, .elt = tc_dtype_size(s->dtype), .throttle = row->spec.throttle,
                           .dtype = tc_dtype_code(s->dtype), .redop = scn_redop(s)};
        nccl_options(&req, row);
        if ((st = tc_evaluate_groups_check(t, &req, &g, s->sizes, o->nsizes, eo, err)) && o->nalgos > 1)
            st = prefixed(err, st, row->requested);
    }
    if (check)
        goto done;
    o->res = tc_calloc(o->nalgos * o->nsizes, sizeof *o->res);
    if (!o->res) {
        st = oom(err);
        goto done;
    }
    bool one = o->nalgos == 1 && o->nsizes == 1 && eo->mode == TC_MODE_FLOW;
    for (size_t i = 0; i < o->nalgos && st == TC_OK; i++) {
        const tc_coll_row *row = &o->rows[i];
        tc_coll_req req = {.op = o->op, .algo = row->algo, .p = g.size, .chunks = row->chunks, .root = row->root,
                           .variant = row->variant, .elt = tc_dtype_size(s->dtype), .throttle = row->spec.throttle,
                           .dtype = tc_dtype_code(s->dtype), .redop = scn_redop(s)};
        nccl_options(&req, row); /* proto=, algo=, nvls=, channels, ... as without groups */
        if (eo->mode == TC_MODE_FLOW &&
            (st = groups_mem_check(t, &req, &g, s->sizes, o->nsizes, map, fo, ro, err)))
            break;
        eo->flow_detail = one ? &o->flow : NULL;
        st = tc_evaluate_groups_sweep(t, &req, &g, s->sizes, o->nsizes, eo, &o->res[i * o->nsizes], err);
        o->has_flow = one && st == TC_OK;
        if (st && o->nalgos > 1)
            st = prefixed(err, st, row->requested);
    }
    eo->flow_detail = NULL;
    if (st == TC_OK && s->phases && o->nalgos == 1 && o->nsizes == 1 && eo->mode == TC_MODE_FORMULA)
        st = groups_phase_detail(t, &o->rows[0], &o->res[0], &g, eo, o, err);
    if (st == TC_OK && implicit) {
        /* the job itself: one group, reported as the job */
        o->group.kind = TC_GROUP_NONE;
        o->ngroups = o->group_size = 0;
        for (size_t i = 0; i < o->nalgos * o->nsizes; i++) {
            o->res[i].groups = o->res[i].group_size = 0;
            o->res[i].group_fastest_s = NAN;
        }
    }
done:
    if (st && !implicit) /* the implicit group is the job: not named */
        st = group_named(spec, st, err);
    tc_partition_free(&ng.pt);
    return st;
}


/* The request of collective row r: its algorithm and options on the run's
 * operation, ranks and element type. */
static tc_coll_req coll_row_req(const tc_scenario *s, const tc_collective_out *o, const tc_coll_row *row)
{
    tc_coll_req req = {.op = o->op, .algo = row->algo, .p = o->ranks, .chunks = row->chunks, .root = row->root,
                       .variant = row->variant, .elt = tc_dtype_size(s->dtype),
                       .dtype = tc_dtype_code(s->dtype), .redop = scn_redop(s)};
    nccl_options(&req, row);
    return req;
}
/* check: make the run's checks of the scenario and time nothing
 * (tc_scn_collective_check) */
static tc_status coll_eval(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_collective_out *o,
                           tc_err *err)
{
    tc_eval_opts eo;
    tc_flow_opts fo;
    eval_opts(s, &o->net, 0, ro, &eo, &fo);
    o->mode = eo.mode;
    flow_setup_of(&fo, &o->flow_setup);
    uint32_t *pmap = NULL;
    tc_status st = tc_place_map(o->net.topo[0], &s->job, &pmap, &o->ranks, err);
    if (st)
        return st;
    /* where the job runs: a slice of the optical switches on its own
     * torus; another slice of a torus as one group along the dimensions it
     * spans (the slice's torus: torus algorithms included), reported as the
     * job */
    tc_scn_jobnet jn;
    if ((st = tc_scn_jobnet_make(o->net.topo[0], pmap, o->ranks, s->job.ocs, &jn, err))) {
        free(pmap);
        return st;
    }
    const tc_topo *t = jn.topo;
    const uint32_t *map = jn.map;
    o->routing = tc_eval_routing(eo.mode, t, eo.routing); /* the routing modelled */
    o->routing_by_mode = strcmp(s->routing, "default") == 0 && tc_topo_fabric_kind(t) == TC_TOPO_CLOS;
    eo.rank_map = map;
    if (s->group.kind != TC_GROUP_NONE) {
        tc_group_spec g = tc_scn_jobnet_group(&jn, &s->group);
        st = coll_groups_eval(s, ro, check, o, t, &eo, &fo, map, &g, false, err);
        o->group = s->group;
        goto done;
    }
    if (jn.implicit) {
        st = coll_groups_eval(s, ro, check, o, t, &eo, &fo, map, &jn.axes, true, err);
        goto done;
    }
    if ((st = coll_rows(s, t, NULL, o, err)))
        goto done;
    for (size_t i = 0; check && i < o->nalgos && st == TC_OK; i++) {
        tc_coll_req req = coll_row_req(s, o, &o->rows[i]);
        if ((st = tc_evaluate_check(t, &req, s->sizes, o->nsizes, &eo, err)) && o->nalgos > 1)
            st = prefixed(err, st, o->rows[i].requested);
    }
    if (check)
        goto done;
    o->res = tc_calloc(o->nalgos * o->nsizes, sizeof *o->res);
    if (!o->res) {
        st = oom(err);
        goto done;
    }
    /* flow: the largest simulation of every row, refused before any runs
     * (the advice then covers them all) */
    if (eo.mode == TC_MODE_FLOW && mem_limit(ro) > 0) {
        double need = 0;
        bool one_step = false;
        for (size_t i = 0; i < o->nalgos; i++) {
            tc_coll_req req = coll_row_req(s, o, &o->rows[i]);
            sweep_mem_need(t, &req, s->sizes, o->nsizes, map, &fo, &need, &one_step);
        }
        if ((st = sweep_mem_refuse(need, one_step, &fo, ro, err)))
            goto done;
    }
    for (size_t i = 0; i < o->nalgos && st == TC_OK; i++) {
        const tc_coll_row *row = &o->rows[i];
        tc_coll_req req = coll_row_req(s, o, row);
        /* One size and one named algorithm in flow mode: the run itself
         * gives the details (auto: the winner runs again below). */
        bool one = o->nalgos == 1 && o->nsizes == 1 && eo.mode == TC_MODE_FLOW && row->algo != TC_ALGO_AUTO;
        eo.flow_detail = one ? &o->flow : NULL;
        st = tc_evaluate_sweep(t, &req, s->sizes, o->nsizes, &eo, &o->res[i * o->nsizes], err);
        o->has_flow = one && st == TC_OK;
        if (st && o->nalgos > 1)
            st = prefixed(err, st, row->requested);
    }
    if (st == TC_OK && o->nalgos == 1 && o->nsizes == 1 && eo.mode == TC_MODE_FLOW && !o->has_flow)
        st = flow_detail(t, &o->rows[0], &o->res[0], map, &fo, o, err);
    if (st == TC_OK && s->phases && o->nalgos == 1 && o->nsizes == 1 && eo.mode == TC_MODE_FORMULA)
        st = phase_detail(t, &o->rows[0], &o->res[0], &eo, o, err);
done:
    if (st == TC_OK && o->has_flow)
        tc_scn_hot_to_parent(t, &o->flow); /* the outcome names links of its own topology */
    tc_scn_jobnet_free(&jn);
    free(pmap);
    return st;
}

static tc_status run_collective(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_collective_out **out,
                                tc_err *err)
{
    *out = NULL;
    if (s->nops < 1 || s->nsizes < 1 || !s->sizes)
        return tc_fail(err, TC_EINVAL, "collective needs an operation (collective.ops) and at least one size (collective.sizes)");
    tc_collective_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return oom(err);
    o->op = s->ops[0];
    snprintf(o->dtype, sizeof o->dtype, "%s", s->dtype);
    o->nsizes = s->nsizes;
    tc_status st = tc_net_build(s, &o->net, err);
    if (st == TC_OK) {
        tc_topo_get_info(o->net.topo[0], &o->info);
        st = coll_eval(s, ro, check, o, err);
    }
    if (st) {
        tc_collective_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

tc_status tc_run_collective(const tc_scenario *s, const tc_run_opts *ro, tc_collective_out **out, tc_err *err)
{
    return run_collective(s, ro, false, out, err);
}

void tc_collective_out_free(tc_collective_out *o)
{
    if (!o)
        return;
    tc_flow_result_free(&o->flow); /* has_flow or not: a run that failed after it kept it */
    free(o->phases);
    free(o->phase_labels);
    free(o->rows);
    free(o->res);
    tc_net_free(&o->net);
    free(o);
}

void tc_collective_ranking(const tc_collective_out *o, size_t size, size_t *order)
{
    /* Insertion sort: stable, and a handful of algorithms. */
    for (size_t i = 0; i < o->nalgos; i++) {
        size_t j = i;
        double ti = tc_collective_at(o, i, size)->time_s;
        while (j > 0 && tc_collective_at(o, order[j - 1], size)->time_s > ti) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

/* ---- compare --------------------------------------------------------------- */

/* A job of the same size on every topology: the endpoint counts are equal,
 * or the job's ranks (or endpoint list) fix its size. */
static tc_status cmp_check_sizes(const tc_scenario *s, const tc_compare_out *o, tc_err *err)
{
    if (s->job.ranks > 0 || s->job.policy == TC_PLACE_LIST)
        return TC_OK;
    for (int t = 1; t < o->net.n; t++)
        if (o->info[t].endpoints != o->info[0].endpoints)
            return tc_fail(err, TC_EINVAL,
                           "compare needs topologies with equal endpoint counts (%s has %u, %s has %u): give --ranks N "
                           "to run the same job size on each",
                           o->net.name[0], o->info[0].endpoints, o->net.name[t], o->info[t].endpoints);
    return TC_OK;
}

static tc_status cmp_algo(const tc_scenario *s, tc_compare_out *o, tc_coll_req *req, tc_err *err)
{
    if (s->nalgos > 1 || (s->nalgos == 1 && strcmp(s->algos[0], "all") == 0))
        return tc_fail(err, TC_EINVAL, "compare takes one algorithm for every cell: 'auto' (the fastest per cell) or "
                                       "an algorithm such as ring");
    snprintf(o->algo, sizeof o->algo, "%s", s->nalgos ? s->algos[0] : "auto");
    req->algo = TC_ALGO_AUTO;
    return tc_algo_parse(o->algo, req, err);
}

/* The job on each topology of compare: where it runs (its slice's own
 * torus, or the topology as placed) and its groups there (the scenario's,
 * or the implicit one of a slice, reported as the job). */
typedef struct cmp_job {
    tc_scn_jobnet jn;
    tc_scn_groups ng;
    bool grouped;              /* it runs as the groups ng */
    bool implicit;             /* ng is the slice's implicit group */
} cmp_job;

/* One operation on topology t over n (size, alpha) points (alphas NULL:
 * the topology's own), into tmp. */
static tc_status cmp_sweep(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_compare_out *o,
                           const tc_coll_req *base, int oi, int t, const cmp_job *cj, const double *sizes,
                           const double *alphas, size_t n, tc_progress_relay *cp, tc_result *tmp, tc_err *err)
{
    const tc_topo *et = cj->jn.topo;
    const uint32_t *map = cj->jn.map;
    const tc_groups *g = cj->grouped ? &cj->ng.g : NULL;
    tc_eval_opts eo;
    tc_flow_opts fo;
    eval_opts(s, &o->net, t, NULL, &eo, &fo);
    /* progress: in cells, each simulation's own in the detail */
    if (cp->fn && eo.mode == TC_MODE_FLOW) {
        fo.progress = tc_progress_relay_cb;
        fo.progress_ud = cp;
    }
    eo.rank_map = map;
    eo.alphas = alphas;
    o->mode = eo.mode;
    tc_coll_req req = *base;
    req.op = o->ops[oi];
    req.p = g ? g->size : o->ranks[t];
    tc_status st = TC_OK;
    if (check)
        st = g ? tc_evaluate_groups_check(et, &req, g, sizes, n, &eo, err)
               : tc_evaluate_check(et, &req, sizes, n, &eo, err);
    else if (eo.mode == TC_MODE_FLOW)
        st = g ? groups_mem_check(et, &req, g, sizes, n, map, &fo, ro, err)
               : sweep_mem_check(et, &req, sizes, n, map, &fo, ro, err);
    if (st == TC_OK && !check)
        st = g ? tc_evaluate_groups_sweep(et, &req, g, sizes, n, &eo, tmp, err)
               : tc_evaluate_sweep(et, &req, sizes, n, &eo, tmp, err);
    if (st && g && !cj->implicit)
        st = group_named(&s->group, st, err);
    if (st) {
        char where[96];
        snprintf(where, sizeof where, "%s on %s", tc_op_name(req.op), o->net.name[t]);
        return prefixed(err, st, where);
    }
    for (size_t i = 0; i < n && cj->implicit; i++) {
        /* the job itself: one group, reported as the job */
        tmp[i].groups = tmp[i].group_size = 0;
        tmp[i].group_fastest_s = NAN;
    }
    return TC_OK;
}

/* Every setting (the topologies' own alpha, then each of network.alphas_s).
 * Formula and steps cost all of them in one sweep per (operation,
 * topology): the routing does not depend on alpha. Flow runs each setting
 * with the topologies' alpha edited in place (they are this run's own, and
 * so are the slices' own tori) and restored after. */
static tc_status cmp_grid(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_compare_out *o,
                          const tc_coll_req *req, const cmp_job *cj, tc_err *err)
{
    o->nset = 1 + s->nalphas;
    o->alpha[0] = NAN;
    for (int k = 0; k < s->nalphas; k++)
        o->alpha[k + 1] = s->alphas[k];
    size_t cells = (size_t)o->nops * o->nsizes * (size_t)o->net.n, npt = (size_t)o->nset * o->nsizes;
    tc_result *tmp = tc_calloc(npt, sizeof *tmp);
    double *sz = tc_calloc(npt, sizeof *sz), *al = tc_calloc(npt, sizeof *al);
    o->res = tc_calloc((size_t)o->nset * cells, sizeof *o->res);
    if (!tmp || !sz || !al || !o->res) {
        free(tmp), free(sz), free(al);
        return oom(err);
    }
    bool flow = s->mode == TC_MODE_FLOW;
    tc_progress_relay cp;
    tc_progress_relay_start(&cp, s->mode != TC_MODE_FORMULA && ro ? ro->progress : NULL, ro ? ro->progress_ud : NULL,
                            "compare", "cells", (double)o->nset * (double)cells);
    double done = 0;
    tc_progress_relay_report(&cp, done);
    tc_status st = TC_OK;
    double own[TC_SCN_MAX_TOPOS];
    for (int t = 0; t < o->net.n; t++)
        own[t] = o->net.topo[t]->alpha;
    for (int k = 0; k < (flow ? o->nset : 1) && st == TC_OK; k++) {
        for (int t = 0; flow && t < o->net.n; t++) {
            o->net.topo[t]->alpha = k ? o->alpha[k] : own[t];
            if (cj[t].jn.own)
                cj[t].jn.own->alpha = o->net.topo[t]->alpha;
        }
        for (int oi = 0; oi < o->nops && st == TC_OK; oi++)
            for (int t = 0; t < o->net.n && st == TC_OK; t++) {
                size_t n = flow ? o->nsizes : npt;
                for (size_t i = 0; i < n; i++) {
                    int kk = (int)(i / o->nsizes);
                    sz[i] = o->sizes[i % o->nsizes];
                    al[i] = kk ? o->alpha[kk] : own[t];
                }
                char at[32];
                if (flow && k > 0)
                    tc_progress_relay_part(&cp, done, "%s on %s at alpha %s", tc_op_name(o->ops[oi]),
                                           o->net.name[t], tc_fmt_time(o->alpha[k], at, sizeof at));
                else
                    tc_progress_relay_part(&cp, done, "%s on %s", tc_op_name(o->ops[oi]), o->net.name[t]);
                st = cmp_sweep(s, ro, check, o, req, oi, t, &cj[t], sz, flow ? NULL : al, n, &cp, tmp, err);
                for (size_t i = 0; i < n && st == TC_OK; i++)
                    o->res[tc_compare_index(o, flow ? k : (int)(i / o->nsizes), oi, i % o->nsizes, t)] = tmp[i];
                done += (double)n;
                if (st == TC_OK)
                    tc_progress_relay_report(&cp, done);
            }
    }
    for (int t = 0; t < o->net.n; t++) {
        o->net.topo[t]->alpha = own[t];
        if (cj[t].jn.own)
            cj[t].jn.own->alpha = own[t];
    }
    free(tmp), free(sz), free(al);
    return st;
}

/* check: as coll_eval's */
static tc_status cmp_eval(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_compare_out *o, tc_err *err)
{
    tc_coll_req req = {.elt = tc_dtype_size(s->dtype), .dtype = tc_dtype_code(s->dtype), .redop = scn_redop(s)};
    tc_status st = cmp_algo(s, o, &req, err);
    if (st)
        return st;
    for (int t = 0; t < o->net.n; t++)
        tc_topo_get_info(o->net.topo[t], &o->info[t]);
    if ((st = cmp_check_sizes(s, o, err)))
        return st;
    uint32_t *maps[TC_SCN_MAX_TOPOS] = {0};
    cmp_job *cj = tc_calloc(TC_SCN_MAX_TOPOS, sizeof *cj);
    if (!cj)
        return oom(err);
    for (int t = 0; t < o->net.n && st == TC_OK; t++) {
        const tc_topo *pt = o->net.topo[t];
        if ((st = tc_place_map_shape(pt, &s->job, &maps[t], &o->ranks[t], &o->shape[t], err)) == TC_OK)
            st = tc_scn_jobnet_make(pt, maps[t], o->ranks[t], s->job.ocs, &cj[t].jn, err);
        if (st)
            st = prefixed(err, st, o->net.name[t]);
    }
    /* Sub-groups: made on each topology before anything runs, so a spec
     * that does not fit one of them fails naming it; a slice of a torus
     * runs as its implicit group, reported as the job. */
    bool grouped = s->group.kind != TC_GROUP_NONE;
    o->group = s->group;
    for (int t = 0; t < o->net.n && st == TC_OK; t++) {
        cmp_job *c = &cj[t];
        if (grouped) {
            tc_group_spec g = tc_scn_jobnet_group(&c->jn, &s->group);
            if ((st = tc_scn_groups_make(&g, o->ranks[t], c->jn.map, c->jn.topo, &c->ng, err))) {
                char where[640];
                snprintf(where, sizeof where, "topology %s (%s)", o->net.name[t], o->net.topo[t]->spec);
                st = prefixed(err, group_named(&s->group, st, err), where);
            }
            o->ngroups[t] = c->ng.g.ngroups;
            o->group_size[t] = c->ng.g.size;
            c->grouped = true;
        } else if (c->jn.implicit) {
            if ((st = tc_scn_groups_make(&c->jn.axes, o->ranks[t], c->jn.map, c->jn.topo, &c->ng, err)))
                st = prefixed(err, st, o->net.name[t]);
            c->grouped = c->implicit = true;
        }
    }
    if (st == TC_OK)
        st = cmp_grid(s, ro, check, o, &req, cj, err);
    for (int t = 0; t < o->net.n; t++) {
        free(maps[t]);
        tc_partition_free(&cj[t].ng.pt);
        tc_scn_jobnet_free(&cj[t].jn);
    }
    free(cj);
    return st;
}

static tc_status run_compare(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_compare_out **out,
                             tc_err *err)
{
    *out = NULL;
    if (s->nops < 1 || s->nsizes < 1 || !s->sizes || s->ntopo < 1)
        return tc_fail(err, TC_EINVAL, "compare needs topologies (network.topo), operations (collective.ops) and "
                                       "sizes (collective.sizes)");
    tc_compare_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return oom(err);
    o->nops = s->nops;
    memcpy(o->ops, s->ops, (size_t)s->nops * sizeof *o->ops);
    o->nsizes = s->nsizes;
    o->sizes = tc_calloc(s->nsizes, sizeof *o->sizes);
    tc_status st = o->sizes ? TC_OK : oom(err);
    if (st == TC_OK) {
        memcpy(o->sizes, s->sizes, s->nsizes * sizeof *o->sizes);
        st = tc_net_build(s, &o->net, err);
    }
    if (st == TC_OK)
        st = cmp_eval(s, ro, check, o, err);
    if (st) {
        tc_compare_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

tc_status tc_run_compare(const tc_scenario *s, const tc_run_opts *ro, tc_compare_out **out, tc_err *err)
{
    return run_compare(s, ro, false, out, err);
}

tc_status tc_scn_collective_check(const tc_scenario *s, tc_err *err)
{
    tc_status st;
    if (s->command == TC_CMD_COMPARE) {
        tc_compare_out *o = NULL;
        st = run_compare(s, NULL, true, &o, err);
        tc_compare_out_free(o);
    } else {
        tc_collective_out *o = NULL;
        st = run_collective(s, NULL, true, &o, err);
        tc_collective_out_free(o);
    }
    return st;
}

void tc_compare_out_free(tc_compare_out *o)
{
    if (!o)
        return;
    free(o->sizes);
    free(o->res);
    tc_net_free(&o->net);
    free(o);
}

unsigned tc_compare_winners(const tc_compare_out *o, int op, size_t size, double *best, double *second)
{
    return tc_compare_winners_set(o, 0, op, size, best, second);
}

/* The winners' masks at every setting, for one size. */
static bool masks_at(const tc_compare_out *o, int op, size_t size, unsigned *mask, double *gain)
{
    bool same = true;
    *gain = 0;
    for (int k = 0; k < o->nset; k++) {
        double best, second;
        mask[k] = tc_compare_winners_set(o, k, op, size, &best, &second);
        same = same && mask[k] == mask[0];
        *gain = fmax(*gain, second / best);
    }
    return same;
}

size_t tc_compare_conclusions(const tc_compare_out *o, int op, tc_compare_run *runs)
{
    size_t n = 0;
    for (size_t si = 0; si < o->nsizes;) {
        tc_compare_run *r = &runs[n++];
        r->from = r->to = si;
        r->holds = masks_at(o, op, si, r->mask, &r->gain);
        unsigned m[TC_SCN_MAX_ALPHAS + 1];
        double g;
        while (r->to + 1 < o->nsizes) {
            masks_at(o, op, r->to + 1, m, &g);
            if (memcmp(m, r->mask, (size_t)o->nset * sizeof *m) != 0)
                break;
            r->to++;
            r->gain = fmax(r->gain, g);
        }
        si = r->to + 1;
    }
    return n;
}

unsigned tc_compare_winners_set(const tc_compare_out *o, int set, int op, size_t size, double *best,
                                double *second)
{
    *best = INFINITY;
    for (int t = 0; t < o->net.n; t++)
        *best = fmin(*best, tc_compare_at_set(o, set, op, size, t)->time_s);
    unsigned m = 0;
    *second = INFINITY;
    for (int t = 0; t < o->net.n; t++) {
        double v = tc_compare_at_set(o, set, op, size, t)->time_s;
        if (v <= *best * 1.001) /* within 0.1%: a tie, not a win */
            m |= 1u << t;
        else
            *second = fmin(*second, v);
    }
    return m;
}

/* ---- concurrent ------------------------------------------------------------ */

/* What one job runs: its rank map and schedule, built once. A grouped
 * job's schedule is one group's, run by every group as a flow job of its
 * own (as collective --group --mode flow runs it): maps holds the groups'
 * endpoints, group by group, names the flow jobs' names. A job on a slice
 * of a torus runs where tc_scn_jobnet_make says (jn): on the slice's own
 * torus (a slice of the optical switches: alone, simulated apart from the
 * jobs sharing the topology), or as the slice's implicit group. */
typedef struct job_run {
    uint32_t *map;             /* the placement on the topology */
    tc_scn_jobnet jn;          /* where it runs: jn.topo, rank r on jn.map[r] */
    bool alone;                /* on its own torus: shares no link with another job */
    size_t nown;               /* its flow jobs: one, or one per group */
    tc_sched *sched;
    tc_scn_groups ng;
    uint32_t *maps;
    char (*gnames)[24];
    char (*names)[96];
} job_run;

static void job_run_free(job_run *jr)
{
    free(jr->map);
    tc_scn_jobnet_free(&jr->jn);
    tc_sched_free(jr->sched);
    tc_partition_free(&jr->ng.pt);
    free(jr->maps);
    free(jr->gnames);
    free(jr->names);
}

static bool rooted(tc_op op)
{
    return op == TC_OP_BROADCAST || op == TC_OP_REDUCE;
}

/* The request as run into the job's record. */
static void job_record(const tc_coll_req *req, tc_concurrent_job *j)
{
    j->op = req->op;
    j->algo = req->algo;
    j->chunks = req->chunks;
    j->variant = req->variant;
    j->throttle = req->algo == TC_ALGO_SCATTERED || req->algo == TC_ALGO_MPICH ? req->throttle : 0;
    j->root = req->root;
    j->bytes = req->bytes;
}

/* A grouped job (req->p: the job's ranks, placed by jr->jn.map on t): its
 * groups of spec, one group's schedule (auto: the fastest valid for the
 * groups running together, by formula, as collective --group chooses), the
 * groups' maps. implicit: the slice's one group, reported as the job. */
/* The options auto chooses by (formula, on the job's endpoints) on t, for
 * a run routed by flow under routing (as requested): the run's routing
 * where formula models it (all but ECMP, for which D-mod-k, formula's
 * model of a Clos), and a pair the failures cut off named under the run's. */
static tc_eval_opts choice_opts(const tc_topo *t, const job_run *jr, tc_routing routing)
{
    tc_routing run = tc_eval_routing(TC_MODE_FLOW, t, routing);
    return (tc_eval_opts){.mode = TC_MODE_FORMULA,
                          .rank_map = jr->jn.map,
                          .routing = run == TC_ROUTE_ECMP ? TC_ROUTE_DEFAULT : run,
                          .cut_routing = run};
}

static tc_status job_build_groups(const tc_scn_job *sj, const tc_group_spec *spec, bool implicit, const tc_topo *t,
                                  tc_routing routing, tc_coll_req *req, tc_concurrent_job *j, job_run *jr, tc_err *err)
{
    tc_status st = tc_scn_groups_make(spec, req->p, jr->jn.map, t, &jr->ng, err);
    const tc_groups *g = &jr->ng.g;
    if (!implicit) {
        j->group = sj->group;
        j->ngroups = g->ngroups;
        j->group_size = g->size;
    }
    j->ranks = req->p;
    req->p = g->size;
    if (st == TC_OK && req->root >= g->size && rooted(req->op))
        st = implicit ? tc_fail(err, TC_EINVAL, "root rank %u but the job has %u ranks", req->root, g->size)
                      : tc_fail(err, TC_EINVAL, "root rank %u but the groups have %u ranks (root= is a rank of each "
                                                "group)",
                                req->root, g->size);
    if (st == TC_OK && !tc_coll_valid_groups(req->op, req->algo, g, err))
        st = TC_EINVAL;
    if (st == TC_OK && req->algo == TC_ALGO_MPICH)
        st = tc_groups_mpich_check(g, t, jr->jn.map, err);
    if (st == TC_OK)
        st = tc_coll_round(req, err);
    j->auto_chosen = req->algo == TC_ALGO_AUTO;
    if (st == TC_OK && j->auto_chosen) {
        tc_eval_opts o2 = choice_opts(t, jr, routing);
        tc_result res;
        if ((st = tc_evaluate_groups_sweep(t, req, g, &req->bytes, 1, &o2, &res, err)) == TC_OK) {
            req->algo = res.algo;
            req->chunks = 0;
        }
    }
    if (st)
        return implicit ? st : group_named(&sj->group, st, err);
    job_record(req, j);
    tc_topo ibuf, *view = NULL;
    const tc_topo *it = tc_groups_inner_topo(g, &ibuf);
    /* NCCL over sub-groups: built on the communicator's view, as collective
     * --group builds it (eval/groups.c) */
    if (tc_algo_is_nccl(req->algo)) {
        if ((st = tc_groups_nccl_view(g, t, jr->jn.map, &view, err)))
            return implicit ? st : group_named(&sj->group, st, err);
        if (!tc_coll_valid(req->op, req->algo, g->size, view, err)) {
            tc_topo_free(view);
            return implicit ? TC_EINVAL : group_named(&sj->group, TC_EINVAL, err);
        }
        it = view;
    }
    st = tc_coll_build(req, it, &jr->sched, err);
    tc_topo_free(view);
    if (st)
        return st;
    jr->nown = g->ngroups;
    jr->maps = tc_calloc(g->p, sizeof *jr->maps);
    jr->gnames = tc_calloc(g->ngroups, sizeof *jr->gnames);
    jr->names = tc_calloc(g->ngroups, sizeof *jr->names);
    return jr->maps && jr->gnames && jr->names ? TC_OK : oom(err);
}

/* Validates job i and builds its schedule; every message names the job. */
static tc_status job_build(const tc_scn_job *sj, const char *dtype, const tc_topo *t, tc_routing routing, uint8_t *busy,
                           tc_concurrent_job *j, job_run *jr, tc_err *err)
{
    tc_coll_req req = {.op = sj->op, .algo = TC_ALGO_AUTO, .bytes = sj->bytes, .elt = tc_dtype_size(dtype),
                       .dtype = tc_dtype_code(dtype)};
    tc_status st = tc_algo_parse(sj->algo[0] ? sj->algo : "auto", &req, err);
    if (st)
        return st;
    if (!(sj->bytes > 0) || sj->bytes > TC_MAX_BYTES)
        return tc_fail(err, TC_EINVAL, "size %g bytes: must be above 0 and at most 2^60", sj->bytes);
    if (!(sj->start_s >= 0) || !isfinite(sj->start_s))
        return tc_fail(err, TC_EINVAL, "start %g s: must be 0 or later", sj->start_s);
    if ((st = tc_place_map_free(t, &sj->place, busy, &jr->map, &req.p, &j->shape, err)))
        return st;
    /* where it runs: the slice's own torus, or t (as its implicit group on
     * a slice without the optical switches) */
    if ((st = tc_scn_jobnet_make(t, jr->map, req.p, sj->place.ocs, &jr->jn, err)))
        return st;
    const tc_topo *et = jr->jn.topo;
    jr->alone = jr->jn.own != NULL;
    jr->nown = 1;
    j->group_fastest_s = NAN;
    if (sj->group.kind != TC_GROUP_NONE) {
        tc_group_spec g = tc_scn_jobnet_group(&jr->jn, &sj->group);
        return job_build_groups(sj, &g, false, et, routing, &req, j, jr, err);
    }
    if (jr->jn.implicit)
        return job_build_groups(sj, &jr->jn.axes, true, et, routing, &req, j, jr, err);
    if (req.root >= req.p && rooted(req.op))
        return tc_fail(err, TC_EINVAL, "root rank %u but the job has %u ranks", req.root, req.p);
    if (!tc_coll_valid(req.op, req.algo, req.p, et, err))
        return TC_EINVAL;
    if ((st = tc_eval_map_check(et, &req, jr->jn.map, err)) || (st = tc_coll_round(&req, err)))
        return st;
    j->auto_chosen = req.algo == TC_ALGO_AUTO;
    if (j->auto_chosen) {
        /* The fastest valid algorithm for the job alone, by the formula
         * evaluator on its endpoints: cheap, and the same choice as a
         * collective run of the job would make. */
        tc_eval_opts o2 = choice_opts(et, jr, routing);
        tc_result res;
        if ((st = tc_evaluate(et, &req, &o2, &res, err)))
            return st;
        req.algo = res.algo;
        req.chunks = 0;
    }
    job_record(&req, j);
    j->ranks = req.p;
    if (req.algo == TC_ALGO_MPICH && (st = tc_mpich_map_check(req.p, et, jr->jn.map, err)))
        return st;
    return tc_coll_build(&req, et, &jr->sched, err);
}

/* Builds every job; *nflow receives the flow jobs they make on the
 * topology (a grouped job one per group; a job on its own torus none: it
 * is simulated apart). Jobs are placed in order, a job with a policy on the
 * endpoints the jobs before it (of either kind) left free. */
static tc_status jobs_build(const tc_scenario *s, const tc_topo *t, tc_concurrent_out *o, job_run *jr, size_t *nflow,
                            tc_err *err)
{
    *nflow = 0;
    uint8_t *busy = tc_calloc(t->n_endpoints, 1);
    if (!busy)
        return oom(err);
    tc_eval_opts eo; /* the routing requested, which the run takes */
    tc_flow_opts fo;
    eval_opts(s, &o->net, 0, NULL, &eo, &fo);
    for (size_t i = 0; i < s->njobs; i++) {
        const tc_scn_job *sj = &s->jobs[i];
        tc_concurrent_job *j = &o->jobs[i];
        if (sj->name[0])
            snprintf(j->name, sizeof j->name, "%s", sj->name);
        else
            snprintf(j->name, sizeof j->name, "job%zu", i);
        tc_status st = job_build(sj, s->dtype, t, eo.routing, busy, j, &jr[i], err);
        if (st == TC_OK && j->algo == TC_ALGO_MPICH && jr[i].sched)
            j->chosen = jr[i].sched->nccl_impl;
        if (st) {
            free(busy);
            return job_prefixed(err, st, i, j->name);
        }
        j->flow_first = *nflow;
        j->nflow = jr[i].alone ? 0 : jr[i].nown;
        *nflow += j->nflow;
    }
    free(busy);
    return TC_OK;
}

/* Job i's flow jobs (jr->nown of them) into f: its one flow job, or one per
 * group (the implicit group of a slice named as the job). */
static void job_flow_jobs(const tc_scenario *s, size_t i, const tc_concurrent_job *j, job_run *jr, tc_flow_job *f)
{
    if (!jr->ng.g.ngroups) {
        *f = (tc_flow_job){.sched = jr->sched, .rank_map = jr->jn.map, .start_s = s->jobs[i].start_s, .name = j->name};
        return;
    }
    tc_groups_flow_jobs(jr->sched, &jr->ng.g, jr->jn.map, jr->maps, jr->gnames, f);
    for (uint32_t g = 0; g < jr->ng.g.ngroups; g++) {
        if (j->ngroups)
            snprintf(jr->names[g], sizeof jr->names[g], "%.60s %s", j->name, jr->gnames[g]);
        else
            snprintf(jr->names[g], sizeof jr->names[g], "%s", j->name);
        f[g].name = jr->names[g];
        f[g].start_s = s->jobs[i].start_s;
    }
}

/* The flow jobs of every job sharing the topology, in job order. */
static void jobs_flow(const tc_scenario *s, const tc_concurrent_out *o, job_run *jr, tc_flow_job *fj)
{
    for (size_t i = 0; i < s->njobs; i++)
        if (!jr[i].alone)
            job_flow_jobs(s, i, &o->jobs[i], &jr[i], fj + o->jobs[i].flow_first);
}

/* fo's progress reports passed on through r, named (printf-style) after
 * the simulation: concurrent runs several. */
static void named_flow(tc_flow_opts *fo, tc_progress_relay *r, const char *fmt, const char *name)
{
    if (!fo->progress)
        return;
    tc_progress_relay_start(r, fo->progress, fo->progress_ud, NULL, NULL, 0);
    tc_progress_relay_part(r, 0, fmt, name);
    r->what = r->part;
    fo->progress = tc_progress_relay_cb;
    fo->progress_ud = r;
}

/* A job's time alone on the network: its one flow job, or all its groups
 * together (start 0, no trace, as tc_flow_alone). */
static tc_status job_alone(const tc_topo *t, const tc_flow_job *fj, size_t n, const tc_flow_opts *fo, const char *name,
                           double *alone, tc_err *err)
{
    tc_flow_opts oo = *fo;
    oo.trace_path = NULL;
    tc_progress_relay rl;
    named_flow(&oo, &rl, "flow simulation of job %s alone", name);
    if (n == 1)
        return tc_flow_alone(t, fj, 1, &oo, alone, err);
    tc_flow_job *v = tc_calloc(n, sizeof *v);
    if (!v)
        return oom(err);
    for (size_t k = 0; k < n; k++) {
        v[k] = fj[k];
        v[k].start_s = 0;
    }
    tc_flow_result res;
    memset(&res, 0, sizeof res);
    tc_status st = tc_flow_run(t, v, n, &oo, &res, err);
    *alone = 0;
    for (size_t k = 0; st == TC_OK && k < n; k++)
        *alone = fmax(*alone, res.jobs[k].time_s);
    if (st == TC_OK)
        tc_flow_result_free(&res);
    free(v);
    return st;
}

/* Job j's figures from its n flow jobs' results r: its one flow job's, or
 * its slowest group's with the fastest beside (ties: the lowest group). */
static void job_figures(const tc_flow_job_result *r, size_t n, tc_concurrent_job *j)
{
    size_t slow = 0, fast = 0;
    for (size_t k = 1; k < n; k++) {
        if (r[k].time_s > r[slow].time_s)
            slow = k;
        if (r[k].time_s < r[fast].time_s)
            fast = k;
    }
    j->res = r[slow];
    if (j->ngroups) {
        j->group_slowest = (uint32_t)slow;
        j->group_fastest = (uint32_t)fast;
        j->group_fastest_s = r[fast].time_s;
    }
    j->slowdown = j->alone_s > 0 ? j->res.time_s / j->alone_s : 1.0;
}

/* A job on its own torus (a slice of the optical switches): it shares no
 * link with another job, so it runs alone there, from its start; its time
 * alone is its time and its slowdown exactly 1. Its events count with the
 * run's; its links are not the topology's, so not among the hottest. */
static tc_status job_run_alone(const tc_scenario *s, size_t i, const tc_flow_opts *fo, tc_routing routing,
                               const tc_run_opts *ro, tc_concurrent_out *o, job_run *jr, tc_err *err)
{
    tc_concurrent_job *j = &o->jobs[i];
    const tc_topo *t = jr->jn.topo;
    tc_flow_job *f = tc_calloc(jr->nown, sizeof *f);
    if (!f)
        return oom(err);
    job_flow_jobs(s, i, j, jr, f);
    tc_flow_opts oo = *fo;
    oo.trace_path = NULL; /* the trace holds the jobs sharing the topology */
    oo.routing = tc_eval_routing(TC_MODE_FLOW, t, routing);
    tc_progress_relay rl;
    named_flow(&oo, &rl, "flow simulation of job %s on its own torus", j->name);
    tc_flow_result fr;
    memset(&fr, 0, sizeof fr);
    tc_status st = tc_mem_check(tc_flow_mem_estimate(t, f, jr->nown, &oo), mem_limit(ro), "the flow simulation", err);
    if (st == TC_OK && (st = tc_flow_run(t, f, jr->nown, &oo, &fr, err)) == TC_OK) {
        size_t slow = 0;
        for (size_t k = 1; k < jr->nown; k++)
            if (fr.jobs[k].time_s > fr.jobs[slow].time_s)
                slow = k;
        j->alone_s = fr.jobs[slow].time_s;
        job_figures(fr.jobs, jr->nown, j);
        j->slowdown = 1.0;
        o->flow.events += fr.events;
        o->flow.events_simulated += fr.events_simulated;
        o->flow.batches += fr.batches;
        tc_flow_result_free(&fr);
    }
    free(f);
    return st;
}

static tc_status jobs_run(const tc_scenario *s, const tc_run_opts *ro, tc_concurrent_out *o, job_run *jr,
                          const tc_flow_job *fj, size_t nflow, tc_err *err)
{
    const tc_topo *t = o->net.topo[0];
    tc_eval_opts eo;
    tc_flow_opts fo;
    eval_opts(s, &o->net, 0, ro, &eo, &fo);
    o->routing = fo.routing = tc_eval_routing(TC_MODE_FLOW, t, eo.routing);
    flow_setup_of(&fo, &o->flow_setup);
    tc_status st = TC_OK;
    if (nflow) {
        st = tc_mem_check(tc_flow_mem_estimate(t, fj, nflow, &fo), mem_limit(ro), "the flow simulation", err);
        for (size_t i = 0; i < o->njobs && st == TC_OK; i++)
            if (!jr[i].alone &&
                (st = job_alone(t, fj + o->jobs[i].flow_first, o->jobs[i].nflow, &fo, o->jobs[i].name,
                                &o->jobs[i].alone_s, err)))
                st = job_prefixed(err, st, i, o->jobs[i].name);
        tc_flow_opts shared = fo;
        tc_progress_relay rl;
        named_flow(&shared, &rl, "flow simulation of the jobs %s", "sharing the network");
        if (st == TC_OK && (st = tc_flow_run(t, fj, nflow, &shared, &o->flow, err)) == TC_OK)
            for (size_t i = 0; i < o->njobs; i++)
                if (!jr[i].alone)
                    job_figures(o->flow.jobs + o->jobs[i].flow_first, o->jobs[i].nflow, &o->jobs[i]);
    }
    if (!nflow)
        o->flow_setup.trace[0] = '\0'; /* no job shares the topology: no trace written */
    bool any = false;
    for (size_t i = 0; i < o->njobs && st == TC_OK; i++)
        if (jr[i].alone) {
            any = true;
            if ((st = job_run_alone(s, i, &fo, eo.routing, ro, o, &jr[i], err)))
                st = job_prefixed(err, st, i, o->jobs[i].name);
        }
    if (st == TC_OK && any) {
        /* the makespan over every job, those on their own tori too */
        double first = INFINITY, last = -INFINITY;
        for (size_t i = 0; i < o->njobs; i++) {
            first = fmin(first, o->jobs[i].res.start_s);
            last = fmax(last, o->jobs[i].res.finish_s);
        }
        o->flow.makespan_s = last - first;
    }
    return st;
}

/* check: the jobs built (placed, checked, auto's choices made by the
 * formula), not simulated (tc_scn_collective_check) */
static tc_status conc_eval(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_concurrent_out *o,
                           tc_err *err)
{
    const tc_topo *t = o->net.topo[0];
    job_run *jr = tc_calloc(s->njobs, sizeof *jr);
    tc_flow_job *fj = NULL;
    o->jobs = tc_calloc(s->njobs, sizeof *o->jobs);
    size_t nflow = 0;
    tc_status st = jr && o->jobs ? TC_OK : oom(err);
    if (st == TC_OK)
        st = jobs_build(s, t, o, jr, &nflow, err);
    o->njobs = s->njobs;
    if (st == TC_OK && !check && !(fj = tc_calloc(nflow ? nflow : 1, sizeof *fj)))
        st = oom(err);
    if (st == TC_OK && !check) {
        jobs_flow(s, o, jr, fj);
        st = jobs_run(s, ro, o, jr, fj, nflow, err);
    }
    for (size_t i = 0; jr && i < s->njobs; i++)
        job_run_free(&jr[i]);
    free(jr);
    free(fj);
    return st;
}

static tc_status run_concurrent(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_concurrent_out **out,
                                tc_err *err)
{
    *out = NULL;
    if (s->njobs < 1 || !s->jobs)
        return tc_fail(err, TC_EINVAL, "concurrent needs at least one job (concurrent.jobs, or --jobs FILE)");
    if (s->njobs > TC_SCN_MAX_JOBS)
        return tc_fail(err, TC_EINVAL, "%zu jobs: at most %d", s->njobs, TC_SCN_MAX_JOBS);
    tc_concurrent_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return oom(err);
    tc_status st = tc_net_build(s, &o->net, err);
    if (st == TC_OK) {
        tc_topo_get_info(o->net.topo[0], &o->info);
        st = conc_eval(s, ro, check, o, err);
    }
    if (st) {
        tc_concurrent_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

tc_status tc_run_concurrent(const tc_scenario *s, const tc_run_opts *ro, tc_concurrent_out **out, tc_err *err)
{
    return run_concurrent(s, ro, false, out, err);
}

tc_status tc_scn_concurrent_check(const tc_scenario *s, tc_err *err)
{
    tc_concurrent_out *o = NULL;
    tc_status st = run_concurrent(s, NULL, true, &o, err);
    tc_concurrent_out_free(o);
    return st;
}

void tc_concurrent_out_free(tc_concurrent_out *o)
{
    if (!o)
        return;
    if (o->flow.jobs) /* tc_flow_run leaves it zeroed when it fails */
        tc_flow_result_free(&o->flow);
    free(o->jobs);
    tc_net_free(&o->net);
    free(o);
}
