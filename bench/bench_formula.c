/*
 * bench_formula.c - closed-form evaluations per second on one core.
 * usage: bench_formula [evaluations]
 * Two figures: tc_eval_formula on a prebuilt schedule, and the whole
 * tc_evaluate (schedule build + formula + lower bound) as a sweep calls it,
 * cycling over sizes and algorithms on the 4,096-endpoint 3-tier Clos.
 */
#include <string.h>
#include "bench_common.h"
#include "topocc/eval.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    tc_err err = {{0}};
    tc_topo *t = NULL;
    BENCH_CHECK(tc_topo_build("clos:down=16x16x16,up=1x16x16,bw=400Gbps,lat=1us", &t, &err), err);
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 4096, .bytes = 1 << 30};
    tc_sched *s = NULL;
    BENCH_CHECK(tc_coll_build(&req, t, &s, &err), err);
    tc_eval_opts o;
    memset(&o, 0, sizeof o);
    double sink = 0, tt;
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        BENCH_CHECK(tc_eval_formula(t, s, &o, &tt, &err), err);
        sink += tt;
    }
    double t1 = bench_now();
    printf("formula, ring all-reduce schedule prebuilt: %.0f evaluations/s (%ld in %.3fs)\n", n / (t1 - t0), n,
           t1 - t0);

    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DBTREE, TC_ALGO_BIRING};
    long m = n / 4;
    t0 = bench_now();
    for (long i = 0; i < m; i++) {
        tc_coll_req r = req;
        r.algo = algos[i & 3];
        r.bytes = (double)(1024L << (i % 20));
        tc_result res;
        BENCH_CHECK(tc_evaluate(t, &r, &o, &res, &err), err);
        sink += res.time_s;
    }
    t1 = bench_now();
    printf("tc_evaluate (build + formula + bound), 4 algorithms x 20 sizes: %.0f evaluations/s (%ld in %.3fs)\n",
           m / (t1 - t0), m, t1 - t0);

    /* A sweep as `compare` runs it: auto over 20 sizes, every valid algorithm
     * built once per operation and evaluated at every size. */
    double sizes[20];
    for (int i = 0; i < 20; i++)
        sizes[i] = (double)(1024L << i);
    tc_result res[20];
    long evals = 0, rounds = n / 400 > 0 ? n / 400 : 1;
    t0 = bench_now();
    for (long i = 0; i < rounds; i++)
        for (int op = 0; op < TC_OP_COUNT; op++) {
            tc_coll_req r = req;
            r.op = (tc_op)op;
            r.algo = TC_ALGO_AUTO;
            BENCH_CHECK(tc_evaluate_sweep(t, &r, sizes, 20, &o, res, &err), err);
            for (int a = 0; a < TC_ALGO_AUTO; a++)
                evals += tc_coll_valid((tc_op)op, (tc_algo)a, 4096, t, NULL) ? 20 : 0;
            sink += res[19].time_s;
        }
    t1 = bench_now();
    printf("tc_evaluate_sweep, auto over 6 operations x 20 sizes: %.0f algorithm evaluations/s (%ld in %.3fs)\n",
           evals / (t1 - t0), evals, t1 - t0);
    printf("checksum %g\n", sink);
    tc_sched_free(s);
    tc_topo_free(t);
    return 0;
}
