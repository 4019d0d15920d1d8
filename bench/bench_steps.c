/*
 * bench_steps.c - the steps evaluator at scale: ring all-reduce on a
 * 65,536-endpoint non-blocking 3-tier Clos (32 x 32 x 64 hosts).
 * usage: bench_steps [spec] [ranks]
 */
#include <string.h>
#include "bench_common.h"
#include "topocc/eval.h"

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "clos:down=32x32x64,up=1x32x32,bw=400Gbps,lat=1us";
    tc_err err = {{0}};
    double t0 = bench_now();
    tc_topo *t = NULL;
    BENCH_CHECK(tc_topo_build(spec, &t, &err), err);
    uint32_t p = argc > 2 ? (uint32_t)atol(argv[2]) : t->n_endpoints;
    double t1 = bench_now();
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = p, .bytes = 1 << 30};
    tc_eval_opts o;
    memset(&o, 0, sizeof o);
    o.mode = TC_MODE_STEPS;
    tc_result r;
    BENCH_CHECK(tc_evaluate(t, &req, &o, &r, &err), err);
    double t2 = bench_now();
    printf("topology %s: %u endpoints, %u links, built in %.3fs\n", spec, t->n_endpoints, t->n_links, t1 - t0);
    printf("steps, ring all-reduce 1GiB on %u ranks: %.6g s modelled, evaluated in %.3fs, peak memory %.0f MiB\n", p,
           r.time_s, t2 - t1, bench_peak_mib());
    tc_topo_free(t);
    return 0;
}
