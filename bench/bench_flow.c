/*
 * bench_flow.c - the flow evaluator at scale (not a timed test).
 *
 *   bench_flow ring2     ring all-reduce 1GiB, 1,024 endpoints, clos:down=32x32,up=1x32
 *   bench_flow ring3     ring all-reduce 1GiB, 4,096 endpoints, clos:down=16x16x16,up=1x16x16
 *   bench_flow a2a       direct all-to-all 1GiB, 1,024 endpoints, clos:down=32x32,up=1x32
 *   bench_flow scale     ring all-reduce at several N and the fitted growth exponent
 *   bench_flow a2ascale  direct all-to-all at several N and the fitted growth exponent
 *   bench_flow SPEC OP ALGO [RANKS] [spray] [deps=fifo|recv] [size=SIZE] [progress]
 *                                    any case (OP: allreduce, alltoall, ...);
 *                                    progress: with a progress callback (that
 *                                    only counts its calls)
 *
 * Prints wall time, events, events per second, batches, and the peak memory
 * (resident) of the process after the flow run against the memory before it
 * and tc_flow_mem_estimate.
 */
#include <math.h>
#include <string.h>
#include "bench_common.h"
#include "topocc/eval.h"
#include "topocc/flow.h"

typedef struct bench_opts {
    tc_multipath mp;
    tc_flow_deps deps;
    double bytes;
    bool progress;
} bench_opts;

static void count_calls(void *ud, const tc_progress *p)
{
    (void)p;
    (*(uint64_t *)ud)++;
}

typedef struct run {
    double wall, modelled, steps;
    uint64_t events, batches;
} run;

static run bench_run(const char *spec, tc_op op, tc_algo algo, uint32_t p, const bench_opts *bo, bool quiet)
{
    tc_multipath mp = bo->mp;
    double bytes = bo->bytes;
    tc_err err = {{0}};
    tc_topo *t = NULL;
    BENCH_CHECK(tc_topo_build(spec, &t, &err), err);
    if (p == 0 || p > t->n_endpoints)
        p = t->n_endpoints;
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_sched *s = NULL;
    BENCH_CHECK(tc_coll_build(&req, t, &s, &err), err);
    tc_flow_opts o;
    memset(&o, 0, sizeof o);
    o.multipath = mp;
    o.deps = bo->deps;
    uint64_t calls = 0;
    if (bo->progress) {
        o.progress = count_calls;
        o.progress_ud = &calls;
    }
    tc_flow_job job = {.sched = s};
    tc_flow_result res;
    double before = bench_peak_mib(), est = tc_flow_mem_estimate(t, &job, 1, &o) / (1 << 20);
    double t0 = bench_now();
    BENCH_CHECK(tc_flow_run(t, &job, 1, &o, &res, &err), err);
    run r = {bench_now() - t0, res.jobs[0].time_s, 0, res.events, res.batches};
    double peak = bench_peak_mib();
    tc_eval_opts eo = {.mode = TC_MODE_STEPS};
    BENCH_CHECK(tc_eval_steps(t, s, &eo, &r.steps, &err), err);
    if (!quiet)
        printf("%s %s/%s p=%u %s: flow %.6g s (steps %.6g s) modelled; wall %.3f s, %llu events (%.3g/s), "
               "%llu batches, peak %.1f MiB (%.1f MiB before the run; estimate %.1f MiB)\n",
               spec, tc_op_name(op), tc_algo_name(algo), p, mp == TC_MULTIPATH_SPRAY ? "spray" : "route",
               r.modelled, r.steps, r.wall, (unsigned long long)r.events, r.events / r.wall,
               (unsigned long long)r.batches, peak, before, est);
    if (!quiet && bo->progress)
        printf("progress: %llu calls\n", (unsigned long long)calls);
    tc_flow_result_free(&res);
    tc_sched_free(s);
    tc_topo_free(t);
    return r;
}

static run bench_one(const char *spec, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_multipath mp,
                     bool quiet)
{
    bench_opts bo = {mp, TC_DEPS_RENDEZVOUS, bytes, false};
    return bench_run(spec, op, algo, p, &bo, quiet);
}

/* Least-squares slope of log(wall) against log(N). */
static void scale(tc_op op, tc_algo algo, const char *const *specs, const uint32_t *ns, int k)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < k; i++) {
        run r = bench_one(specs[i], op, algo, ns[i], 1 << 30, TC_MULTIPATH_ROUTE, true);
        printf("N=%5u  wall %.3f s  events %llu  %.3g events/s\n", ns[i], r.wall, (unsigned long long)r.events,
               r.events / r.wall);
        double x = log(ns[i]), y = log(r.wall);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    printf("growth exponent (wall ~ N^b): b = %.2f\n", (k * sxy - sx * sy) / (k * sxx - sx * sx));
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "ring2";
    if (strcmp(what, "ring2") == 0)
        bench_one("clos:down=32x32,up=1x32", TC_OP_ALLREDUCE, TC_ALGO_RING, 0, 1 << 30, TC_MULTIPATH_ROUTE, false);
    else if (strcmp(what, "ring3") == 0)
        bench_one("clos:down=16x16x16,up=1x16x16", TC_OP_ALLREDUCE, TC_ALGO_RING, 0, 1 << 30, TC_MULTIPATH_ROUTE,
                  false);
    else if (strcmp(what, "a2a") == 0)
        bench_one("clos:down=32x32,up=1x32", TC_OP_ALLTOALL, TC_ALGO_DIRECT, 0, 1 << 30, TC_MULTIPATH_ROUTE, false);
    else if (strcmp(what, "scale") == 0) {
        static const char *const specs[] = {"clos:down=16x16,up=1x16", "clos:down=32x16,up=1x16",
                                            "clos:down=32x32,up=1x32", "clos:down=16x16x8,up=1x16x16",
                                            "clos:down=16x16x16,up=1x16x16"};
        static const uint32_t ns[] = {256, 512, 1024, 2048, 4096};
        scale(TC_OP_ALLREDUCE, TC_ALGO_RING, specs, ns, 5);
    } else if (strcmp(what, "a2ascale") == 0) {
        static const char *const specs[] = {"clos:down=16x16,up=1x16", "clos:down=32x16,up=1x16",
                                            "clos:down=32x32,up=1x32"};
        static const uint32_t ns[] = {256, 512, 1024};
        scale(TC_OP_ALLTOALL, TC_ALGO_DIRECT, specs, ns, 3);
    } else if (argc >= 4) {
        tc_err err = {{0}};
        tc_coll_req req;
        memset(&req, 0, sizeof req);
        BENCH_CHECK(tc_op_parse(argv[2], &req.op, &err), err);
        BENCH_CHECK(tc_algo_parse(argv[3], &req, &err), err);
        uint32_t p = argc > 4 ? (uint32_t)atol(argv[4]) : 0;
        bench_opts bo = {TC_MULTIPATH_ROUTE, TC_DEPS_RENDEZVOUS, 1 << 30, false};
        for (int i = 5; i < argc; i++) {
            if (strcmp(argv[i], "spray") == 0)
                bo.mp = TC_MULTIPATH_SPRAY;
            else if (strcmp(argv[i], "progress") == 0)
                bo.progress = true;
            else if (strcmp(argv[i], "deps=fifo") == 0)
                bo.deps = TC_DEPS_FIFO;
            else if (strcmp(argv[i], "deps=recv") == 0)
                bo.deps = TC_DEPS_RECV;
            else if (strncmp(argv[i], "size=", 5) == 0)
                BENCH_CHECK(tc_parse_size(argv[i] + 5, &bo.bytes, &err), err);
            else {
                fprintf(stderr, "bench_flow: unknown option '%s'\n", argv[i]);
                return 2;
            }
        }
        bench_run(argv[1], req.op, req.algo, p, &bo, false);
    } else {
        fprintf(stderr, "usage: bench_flow ring2|ring3|a2a|scale|a2ascale | SPEC OP ALGO [RANKS] [spray] [deps=fifo|recv] "
                        "[size=SIZE] [progress]\n");
        return 2;
    }
    return 0;
}
