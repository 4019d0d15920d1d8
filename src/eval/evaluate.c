/*
 * evaluate.c - one collective on one topology: validation, the choice of
 * `auto`, schedule building and the chosen evaluator, into one result shape.
 */
#include <math.h>
#include <string.h>
#include "topocc/eval.h"

const char *tc_mode_name(tc_mode m)
{
    return m == TC_MODE_STEPS ? "steps" : "formula";
}

tc_status tc_mode_parse(const char *s, tc_mode *out, tc_err *err)
{
    if (s && strcmp(s, "formula") == 0)
        *out = TC_MODE_FORMULA;
    else if (s && strcmp(s, "steps") == 0)
        *out = TC_MODE_STEPS;
    else
        return tc_fail(err, TC_EINVAL, "unknown mode '%s': accepted are formula, steps", s ? s : "");
    return TC_OK;
}

static tc_status eval_one(const tc_topo *t, const tc_coll_req *req, const tc_eval_opts *o, double *time_s,
                          uint32_t *phases, uint32_t *steps, tc_err *err)
{
    tc_sched *s = NULL;
    tc_status st = tc_coll_build(req, t, &s, err);
    if (st)
        return st;
    if (o->mode == TC_MODE_STEPS)
        st = tc_eval_steps(t, s, o, time_s, err);
    else
        st = tc_eval_formula(t, s, o, time_s, err);
    if (st == TC_OK) {
        *phases = s->nphases;
        *steps = s->nsteps;
    }
    tc_sched_free(s);
    return st;
}

tc_status tc_evaluate(const tc_topo *t, const tc_coll_req *req, const tc_eval_opts *o, tc_result *res, tc_err *err)
{
    memset(res, 0, sizeof *res);
    if (req->p == 0)
        return tc_fail(err, TC_EINVAL, "invalid rank count 0: expected 1 to %u", t->n_endpoints);
    if (req->p > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", req->p,
                       t->n_endpoints, t->n_endpoints);
    if (!(req->bytes > 0) || req->bytes > TC_MAX_BYTES)
        return tc_fail(err, TC_EINVAL, "invalid size %g bytes: must be above 0 and at most 2^60", req->bytes);
    if (!tc_coll_valid(req->op, req->algo, req->p, t, err))
        return TC_EINVAL;
    tc_coll_req r = *req;
    double best = INFINITY;
    uint32_t phases = 0, steps = 0;
    tc_algo chosen = req->algo;
    if (req->algo == TC_ALGO_AUTO) {
        r.chunks = 0;
        for (int a = 0; a < TC_ALGO_AUTO; a++) {
            if (!tc_coll_valid(req->op, (tc_algo)a, req->p, t, NULL))
                continue;
            r.algo = (tc_algo)a;
            double tt;
            uint32_t ph, stp;
            tc_status st = eval_one(t, &r, o, &tt, &ph, &stp, err);
            if (st)
                return st;
            if (tt < best) {
                best = tt;
                chosen = (tc_algo)a;
                phases = ph;
                steps = stp;
            }
        }
    } else {
        tc_status st = eval_one(t, &r, o, &best, &phases, &steps, err);
        if (st)
            return st;
    }
    res->op = req->op;
    res->algo = chosen;
    res->algo_requested = req->algo;
    res->chunks = req->algo == TC_ALGO_AUTO ? 0 : req->chunks;
    res->ranks = req->p;
    res->bytes = req->bytes;
    res->mode = o->mode;
    res->time_s = best;
    res->algbw_Bps = best > 0 ? req->bytes / best : 0;
    res->busbw_Bps = res->algbw_Bps * tc_op_busbw_factor(req->op, req->p);
    res->lower_bound_s = tc_lower_bound(t, req->op, req->p, req->bytes, o->rank_map);
    res->phases = phases;
    res->steps = steps;
    return TC_OK;
}
