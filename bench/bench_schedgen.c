/*
 * bench_schedgen.c - schedule generation for 65,536 ranks, every algorithm.
 * "build" is tc_coll_build (the phases); "emit" additionally generates the
 * transfers of the first step of every phase, which is what an evaluator
 * walks. The direct all-pairs steps (all-to-all, all-gather, reduce-scatter,
 * all-reduce) have p(p-1) = 4.3e9 transfers, and so do scattered's 2,048
 * blocks together, so their emission is skipped.
 */
#include <string.h>
#include "bench_common.h"
#include "topocc/eval.h"

static void run(const tc_topo *t, tc_op op, tc_algo a, uint32_t p)
{
    tc_err err = {{0}};
    if (!tc_coll_valid(op, a, p, t, NULL))
        return;
    tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = 1 << 30};
    double t0 = bench_now();
    tc_sched *s = NULL;
    BENCH_CHECK(tc_coll_build(&req, t, &s, &err), err);
    double t1 = bench_now();
    tc_xfers x;
    tc_xfers_init(&x, false);
    size_t total = 0;
    bool skipped = false;
    for (uint32_t i = 0; i < s->nphases; i++) {
        bool all_pairs = (a == TC_ALGO_DIRECT && op != TC_OP_BROADCAST && op != TC_OP_REDUCE) || a == TC_ALGO_SCATTERED;
        if (all_pairs) {
            skipped = true;
            continue;
        }
        BENCH_CHECK(tc_sched_emit(s, s->phases[i].first_step, &x), err);
        total += x.n;
    }
    double t2 = bench_now();
    printf("%-14s %-9s phases %6u steps %7u  build %8.4fs  build+emit %8.4fs  transfers %10zu%s\n", tc_op_name(op),
           tc_algo_name(a), s->nphases, s->nsteps, t1 - t0, t2 - t0, total, skipped ? "  (p(p-1) step skipped)" : "");
    tc_xfers_free(&x);
    tc_sched_free(s);
}

int main(void)
{
    tc_err err = {{0}};
    tc_topo *clos = NULL, *torus = NULL;
    BENCH_CHECK(tc_topo_build("clos:down=32x32x64,up=1x32x32,node=8,node_bw=450GB/s,node_lat=100ns", &clos, &err),
                err);
    BENCH_CHECK(tc_topo_build("torus:dims=64x32x32", &torus, &err), err);
    const uint32_t p = 65536;
    for (int op = 0; op < TC_OP_COUNT; op++)
        for (int a = 0; a < TC_ALGO_AUTO; a++) {
            bool torus_algo = a == TC_ALGO_TORUS || a == TC_ALGO_TORUS_BI || a == TC_ALGO_TORUS_MP;
            run(torus_algo ? torus : clos, (tc_op)op, (tc_algo)a, p);
        }
    printf("peak memory %.0f MiB\n", bench_peak_mib());
    tc_topo_free(clos);
    tc_topo_free(torus);
    return 0;
}
