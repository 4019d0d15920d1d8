/*
 * bench_formula.c - closed-form evaluations per second on one core.
 * usage: bench_formula [seconds per case]
 * For every valid (operation, algorithm) on 4,096 endpoints (the 3-tier
 * non-blocking Clos; torus algorithms on the 16x16x16 torus): the rate of
 * tc_eval_formula on a prebuilt schedule, and of a whole tc_evaluate (schedule
 * build + formula + lower bound), each run for a fixed time.
 */
#include <stdlib.h>
#include <string.h>
#include "bench_common.h"
#include "topocc/eval.h"

static double rate_formula(const tc_topo *t, const tc_sched *s, double budget, double *sink)
{
    tc_eval_opts o;
    memset(&o, 0, sizeof o);
    tc_err err = {{0}};
    long n = 0;
    double t0 = bench_now(), t1 = t0, tt;
    while (t1 - t0 < budget) {
        /* Closed-form schedules take microseconds, graph-evaluated ones up
         * to seconds: batches sized by the first evaluation's time. */
        int batch = n == 0 ? 1 : n < 64 && (t1 - t0) / n > 1e-3 ? 1 : 64;
        for (int i = 0; i < batch; i++, n++) {
            BENCH_CHECK(tc_eval_formula(t, s, &o, &tt, &err), err);
            *sink += tt;
        }
        t1 = bench_now();
    }
    return n / (t1 - t0);
}

static double rate_evaluate(const tc_topo *t, tc_coll_req req, double budget, double *sink)
{
    tc_eval_opts o;
    memset(&o, 0, sizeof o);
    tc_err err = {{0}};
    long n = 0;
    double t0 = bench_now(), t1 = t0;
    while (t1 - t0 < budget) {
        int batch = n == 0 || (t1 - t0) / n > 1e-3 ? 1 : 8;
        for (int i = 0; i < batch; i++, n++) {
            tc_result r;
            req.bytes = (double)(1024L << (n % 20));
            BENCH_CHECK(tc_evaluate(t, &req, &o, &r, &err), err);
            *sink += r.time_s;
        }
        t1 = bench_now();
    }
    return n / (t1 - t0);
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 0.2;
    tc_err err = {{0}};
    tc_topo *clos = NULL, *torus = NULL;
    BENCH_CHECK(tc_topo_build("clos:down=16x16x16,up=1x16x16,bw=400Gbps,lat=1us", &clos, &err), err);
    BENCH_CHECK(tc_topo_build("torus:dims=16x16x16,bw=66.67Gbps,lat=1us", &torus, &err), err);
    double sink = 0;
    printf("%-14s %-22s %7s %7s %16s %16s\n", "operation", "algorithm", "phases", "graph", "formula/s", "evaluate/s");
    for (int op = 0; op < TC_OP_COUNT; op++)
        for (int a = 0, hb = 0; a < TC_ALGO_AUTO; a += hb ? 0 : 1) {
            /* binomial twice: MPICH's tree, then the highbit tree (ranges). */
            hb = a == TC_ALGO_BINOMIAL && !hb;
            bool tor = a == TC_ALGO_TORUS || a == TC_ALGO_TORUS_BI || a == TC_ALGO_TORUS_MP;
            const tc_topo *t = tor ? torus : clos;
            if (!tc_coll_valid((tc_op)op, (tc_algo)a, 4096, t, NULL))
                continue;
            tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)a, .p = 4096, .bytes = 1 << 30,
                               .variant = a == TC_ALGO_BINOMIAL && !hb ? TC_VARIANT_HIGHBIT : TC_VARIANT_DEFAULT};
            tc_sched *s = NULL;
            BENCH_CHECK(tc_coll_build(&req, t, &s, &err), err);
            /* How many phases the routed graph costs (the rest: closed forms). */
            tc_phase_eval *pe = calloc(s->nphases, sizeof *pe);
            tc_eval_opts o0 = {.mode = TC_MODE_FORMULA};
            double tt;
            uint32_t graph = 0;
            BENCH_CHECK(tc_eval_formula_phases(t, s, &o0, pe, &tt, &err), err);
            for (uint32_t i = 0; i < s->nphases; i++)
                graph += pe[i].repeat && !pe[i].closed_form;
            free(pe);
            double f = rate_formula(t, s, budget, &sink);
            double e = rate_evaluate(t, req, budget, &sink);
            char name[64];
            tc_algo_format(&req, name, sizeof name);
            printf("%-14s %-22s %7u %7u %16.1f %16.1f\n", tc_op_name((tc_op)op), name, s->nphases, graph, f, e);
            fflush(stdout);
            tc_sched_free(s);
        }
    printf("checksum %g\n", sink);
    tc_topo_free(clos);
    tc_topo_free(torus);
    return 0;
}
