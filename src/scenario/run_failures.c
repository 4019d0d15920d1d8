/*
 * run_failures.c - topocc failures: Monte Carlo over random failures. On
 * each topology the job runs once on the network as given (network.fail
 * applied) and then once per draw of network.fail_random (draw t from the
 * seed and t, tc_topo_fail_random), with the same schedule on the
 * rerouted paths (auto's choice made once, on the network as given); a
 * draw that cuts the job off or takes down one of its
 * endpoints is counted apart, with the first such draw's reason. The
 * topology is built once; each draw's failures are undone from a copy of
 * the links' bandwidths and flags.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "topocc/outcome.h"
#include "scenario_int.h"

const double tc_fail_bin_edges[TC_FAIL_BINS + 1] = {0, 1, 1.001, 1.01, 1.05, 1.1, 1.25, 1.5, 2, 4, INFINITY};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of n ascending values (nearest rank). */
static double quantile(const double *v, uint32_t n, double q)
{
    if (!n)
        return NAN;
    double r = ceil(q * n);
    uint32_t i = r < 1 ? 0 : (uint32_t)r - 1;
    return v[i < n ? i : n - 1];
}

static tc_status prefixed(tc_err *err, tc_status st, const char *where)
{
    char m[TC_ERR_LEN];
    snprintf(m, sizeof m, "%s", err->msg);
    return tc_fail(err, st, "%s: %s", where, m);
}

/* The job's time on t: alone, or as the implicit group of its slice
 * (g), reported as the job. check: the evaluators' checks only, nothing
 * timed (tc_scn_failures_check). */
static tc_status job_time(const tc_topo *t, const tc_coll_req *req, const tc_groups *g, const tc_eval_opts *eo,
                          bool check, tc_result *r, tc_err *err)
{
    if (check)
        return g ? tc_evaluate_groups_check(t, req, g, &req->bytes, 1, eo, err)
                 : tc_evaluate_check(t, req, &req->bytes, 1, eo, err);
    if (!g)
        return tc_evaluate(t, req, eo, r, err);
    tc_status st = tc_evaluate_groups_sweep(t, req, g, &req->bytes, 1, eo, r, err);
    r->groups = r->group_size = 0;
    r->group_fastest_s = NAN;
    return st;
}

/* Whether the job (req on ranks placed by map on topology i) runs on the
 * network without network.fail: then its failure on the network as given
 * was the failures' (a pair cut off), which the message says; else it is
 * the request's, said as it is. Built and run again only on that error. */
static bool runs_without_fail(const tc_scenario *s, int i, const uint32_t *map, uint32_t ranks,
                              const tc_coll_req *req, const tc_eval_opts *eo, bool check)
{
    tc_scenario *s0 = malloc(sizeof *s0);
    if (!s0)
        return false;
    memcpy(s0, s, sizeof *s0);
    s0->nfail = 0;
    tc_net net;
    memset(&net, 0, sizeof net);
    tc_err e = {{0}};
    bool ok = false;
    if (tc_net_build(s0, &net, &e) == TC_OK) {
        tc_scn_jobnet jn;
        if (tc_scn_jobnet_make(net.topo[i], map, ranks, s->job.ocs, &jn, &e) == TC_OK) {
            tc_scn_groups ng;
            memset(&ng, 0, sizeof ng);
            tc_status st = jn.implicit ? tc_scn_groups_make(&jn.axes, ranks, jn.map, jn.topo, &ng, &e) : TC_OK;
            tc_eval_opts o = *eo;
            o.rank_map = jn.map;
            tc_result r;
            ok = st == TC_OK && job_time(jn.topo, req, jn.implicit ? &ng.g : NULL, &o, check, &r, &e) == TC_OK;
            tc_partition_free(&ng.pt);
            tc_scn_jobnet_free(&jn);
        }
        tc_net_free(&net);
    }
    free(s0);
    return ok;
}

/* One topology: the job where it runs (tc_scn_jobnet_make: a slice of the
 * optical switches on its own torus, rebuilt from each draw's failures
 * inside it; another slice of a torus as its implicit group), healthy and
 * under each draw. check: the checks of the network as given, nothing
 * timed, no draw. */
static tc_status run_topo(const tc_scenario *s, tc_failures_out *o, int i, const tc_fail_random *fr, bool check,
                          tc_progress_relay *fp, tc_err *err)
{
    tc_topo *t = o->net.topo[i];
    tc_failures_topo *ft = &o->topo[i];
    ft->first_cut = -1;
    uint32_t *map = NULL;
    tc_status st = tc_place_map(t, &s->job, &map, &o->ranks[i], err);
    if (st)
        return st;
    tc_scn_jobnet jn;
    tc_scn_groups ng;
    memset(&ng, 0, sizeof ng);
    if ((st = tc_scn_jobnet_make(t, map, o->ranks[i], s->job.ocs, &jn, err))) {
        free(map);
        return st;
    }
    if (jn.implicit)
        st = tc_scn_groups_make(&jn.axes, o->ranks[i], jn.map, jn.topo, &ng, err);
    const tc_groups *g = jn.implicit ? &ng.g : NULL;
    tc_eval_opts eo;
    tc_flow_opts fo;
    tc_scenario_eval_opts(s, &o->net, i, &eo, &fo);
    /* progress: in draws, each simulation's own in the detail */
    fo.progress = fp->fn ? tc_progress_relay_cb : NULL;
    fo.progress_ud = fp;
    eo.rank_map = jn.map;
    eo.flow = &fo;
    o->mode = eo.mode;
    tc_coll_req req = {.elt = tc_dtype_size(s->dtype), .op = o->op, .bytes = o->bytes, .algo = TC_ALGO_AUTO,
                       .dtype = tc_dtype_code(s->dtype)};
    tc_redop rop = TC_REDOP_SUM;
    if (tc_redop_parse(s->redop, &rop))
        req.redop = (uint8_t)rop;
    if (st == TC_OK)
        st = tc_algo_parse(o->algo, &req, err);
    req.p = g ? g->size : o->ranks[i];
    double done0 = fp->done;
    tc_progress_relay_part(fp, done0, "%s, without the drawn failures", o->net.name[i]);
    /* an error of the network as given is said to be its failures' only
     * where it is (the job runs without them): an algorithm that does not
     * fit, a root beyond the ranks are the request's */
    if (st == TC_OK && (st = job_time(jn.topo, &req, g, &eo, check, &ft->healthy, err)) == TC_EINVAL &&
        s->nfail > 0 && runs_without_fail(s, i, map, o->ranks[i], &req, &eo, check))
        st = prefixed(err, st, "the network without the drawn failures");
    if (st || check) {
        tc_partition_free(&ng.pt);
        tc_scn_jobnet_free(&jn);
        free(map);
        return st;
    }
    /* auto chooses once, on the network as given: a library picks its
     * algorithm when the job starts and does not notice a failed link */
    if (req.algo == TC_ALGO_AUTO) {
        req.algo = ft->healthy.algo;
        req.variant = ft->healthy.variant;
        req.chunks = ft->healthy.chunks;
    }
    /* the draws: a trial's failures on top of network.fail, then undone */
    o->routing[i] = (tc_topo_fabric_kind(t) == TC_TOPO_TORUS || t->kind == TC_TOPO_FULL) && eo.routing == TC_ROUTE_DEFAULT
                        ? TC_ROUTE_DETOUR
                                                                              : tc_eval_routing(eo.mode, t, eo.routing);
    tc_fail_state fs = {0};
    ft->slowdown = tc_calloc(o->trials, sizeof *ft->slowdown);
    if (!ft->slowdown)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK)
        st = tc_topo_fail_save(t, &fs, err);
    for (uint32_t k = 0; k < o->trials && st == TC_OK; k++) {
        tc_fail_drawn d;
        if ((st = tc_topo_fail_random(t, fr, k, &d, err)))
            break;
        tc_progress_relay_part(fp, done0 + k, "%s, draw %u", o->net.name[i], k);
        ft->cables = d.ncables, ft->eligible_cables = d.eligible_cables, ft->switches = d.nswitches;
        tc_fail_drawn_free(&d);
        tc_result r;
        tc_err e2 = {{0}};
        /* a slice's own torus: the draw's failures inside the box */
        tc_topo *box = NULL;
        tc_status rs = tc_eval_failed_ranks(t, o->ranks[i], map, &e2); /* named as placed */
        if (rs == TC_OK && jn.own)
            rs = tc_topo_torus_box(t, jn.sr.shape.origin, jn.sr.shape.extent, true, &box, &e2);
        if (rs == TC_OK)
            rs = job_time(box ? box : jn.topo, &req, g, &eo, false, &r, &e2);
        tc_topo_free(box);
        if (rs == TC_OK) {
            /* a job that takes no time (one rank) is not slowed down:
             * 1, as concurrent's slowdown of a job alone in no time */
            double x = ft->healthy.time_s > 0 ? r.time_s / ft->healthy.time_s : 1.0;
            /* within 1e-9 below 1 is the simulation's rounding, not a
             * faster draw (rep_fail.c's faster_draws): 1, so that the
             * histogram's bins and the count of faster draws agree */
            ft->slowdown[ft->ran++] = x < 1 && x >= 1 - 1e-9 ? 1.0 : x;
        } else if (rs == TC_EINVAL) {
            if (ft->first_cut < 0) {
                ft->first_cut = (int32_t)k;
                snprintf(ft->cut_reason, sizeof ft->cut_reason, "%s", e2.msg);
            }
            ft->cut++;
        } else {
            st = tc_fail(err, rs, "draw %u: %s", k, e2.msg);
        }
        tc_topo_fail_restore(t, &fs);
        tc_progress_relay_report(fp, done0 + k + 1);
    }
    tc_fail_state_free(&fs);
    tc_partition_free(&ng.pt);
    tc_scn_jobnet_free(&jn);
    free(map);
    if (st)
        return st;
    qsort(ft->slowdown, ft->ran, sizeof *ft->slowdown, cmp_double);
    double sum = 0;
    for (uint32_t k = 0; k < ft->ran; k++) {
        double x = ft->slowdown[k];
        sum += x;
        for (int b = 0; b < TC_FAIL_BINS; b++)
            if (x >= tc_fail_bin_edges[b] && x < tc_fail_bin_edges[b + 1]) {
                ft->hist[b]++;
                break;
            }
    }
    ft->min = ft->ran ? ft->slowdown[0] : NAN;
    ft->max = ft->ran ? ft->slowdown[ft->ran - 1] : NAN;
    ft->mean = ft->ran ? sum / ft->ran : NAN;
    ft->p50 = quantile(ft->slowdown, ft->ran, 0.5);
    ft->p90 = quantile(ft->slowdown, ft->ran, 0.9);
    ft->p99 = quantile(ft->slowdown, ft->ran, 0.99);
    return TC_OK;
}

/* check: the run's checks of the scenario alone, nothing timed
 * (tc_scn_failures_check) */
static tc_status run_failures(const tc_scenario *s, const tc_run_opts *ro, bool check, tc_failures_out **out,
                              tc_err *err)
{
    *out = NULL;
    if (s->ntopo < 1 || s->nops != 1 || s->nsizes != 1 || !s->sizes)
        return tc_fail(err, TC_EINVAL, "failures needs topologies (--topo), one operation (--op) and one size (--size)");
    if (!s->fail_random[0])
        return tc_fail(err, TC_EINVAL, "failures needs the failures to draw: --fail-random links=K|F%%,switches=K,seed=S");
    if (s->nalgos > 1 || (s->nalgos == 1 && strcmp(s->algos[0], "all") == 0))
        return tc_fail(err, TC_EINVAL, "failures takes one algorithm: 'auto' (the fastest on the network as given, "
                                       "kept in every draw) or one such as ring");
    tc_fail_random fr;
    tc_status st = tc_fail_random_parse(s->fail_random, &fr, err);
    if (st)
        return st;
    tc_failures_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    o->op = s->ops[0];
    o->bytes = s->sizes[0];
    o->trials = s->trials;
    snprintf(o->algo, sizeof o->algo, "%s", s->nalgos ? s->algos[0] : "auto");
    snprintf(o->fail_random, sizeof o->fail_random, "%s", s->fail_random);
    o->hostlinks = fr.hostlinks;
    o->nvlinks = fr.nvlinks;
    st = tc_net_build(s, &o->net, err);
    tc_progress_relay fp;
    tc_progress_relay_start(&fp, ro ? ro->progress : NULL, ro ? ro->progress_ud : NULL, "failures", "draws",
                            (double)o->trials * (double)o->net.n);
    for (int i = 0; i < o->net.n && st == TC_OK; i++) {
        tc_topo_get_info(o->net.topo[i], &o->info[i]);
        if ((st = run_topo(s, o, i, &fr, check, &fp, err)))
            st = prefixed(err, st, o->net.name[i]);
    }
    if (st) {
        tc_failures_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

tc_status tc_run_failures(const tc_scenario *s, const tc_run_opts *ro, tc_failures_out **out, tc_err *err)
{
    return run_failures(s, ro, false, out, err);
}

tc_status tc_scn_failures_check(const tc_scenario *s, tc_err *err)
{
    tc_failures_out *o = NULL;
    tc_status st = run_failures(s, NULL, true, &o, err);
    tc_failures_out_free(o);
    return st;
}

void tc_failures_out_free(tc_failures_out *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->net.n; i++)
        free(o->topo[i].slowdown);
    tc_net_free(&o->net);
    free(o);
}
