/*
 * bench_check.c - the data checker at 65,536 ranks (docs/PERFORMANCE.md).
 *
 * The algorithms whose per-rank state is O(1) blocks (binomial, rd
 * all-reduce, dbtree, the ring and biring chains, direct broadcast and
 * reduce) are checked in full (tc_sched_check). Those whose state is O(p)
 * blocks would need p^2 = 4.3 x 10^9 values in full, so they are checked on
 * a seeded sample of 64 slots per rank (tc_sched_check_sampled, O(64 p)
 * values); the default list holds those that emit few transfers in all (rd
 * and Bruck all-gather, rhd). The long list (bench_check P long) holds the
 * rest that a sample can check: the torus algorithms (on a 16x16x16x16
 * torus at 65,536), hier (8 ranks per node), swing, and the ring and biring
 * all-reduce chains; their emission alone is 10^8 to 10^10 transfers or
 * segments at 65,536, whatever is sampled, so they take minutes each (torus-mp
 * more than an hour; docs/PERFORMANCE.md has the times).
 * All-to-all moves blocks between slot indices, which a slot sample cannot
 * follow (tc_sched_check_sampled refuses it).
 *
 * Usage: bench_check [p] [long] (default 65536), or bench_check ring P
 * RUNS: the median of RUNS full checks of ring all-reduce on P ranks (the
 * checker's own cost at moderate size).
 */
#include <string.h>
#include "bench_common.h"
#include "topocc/coll.h"
#include "topocc/topo.h"

typedef struct bench_case {
    tc_op op;
    tc_algo algo;
    bool sampled;
    const char *topo; /* NULL: none needed; "torus": a 4-dimensional torus of p; "node": nodes of 8 */
} bench_case;

static const bench_case cases[] = {
    {TC_OP_BROADCAST, TC_ALGO_BINOMIAL, false, NULL}, {TC_OP_REDUCE, TC_ALGO_BINOMIAL, false, NULL},
    {TC_OP_ALLREDUCE, TC_ALGO_BINOMIAL, false, NULL}, {TC_OP_ALLREDUCE, TC_ALGO_RD, false, NULL},
    {TC_OP_BROADCAST, TC_ALGO_DBTREE, false, NULL},   {TC_OP_REDUCE, TC_ALGO_DBTREE, false, NULL},
    {TC_OP_ALLREDUCE, TC_ALGO_DBTREE, false, NULL},   {TC_OP_BROADCAST, TC_ALGO_RING, false, NULL},
    {TC_OP_REDUCE, TC_ALGO_RING, false, NULL},        {TC_OP_BROADCAST, TC_ALGO_BIRING, false, NULL},
    {TC_OP_REDUCE, TC_ALGO_BIRING, false, NULL},      {TC_OP_BROADCAST, TC_ALGO_DIRECT, false, NULL},
    {TC_OP_REDUCE, TC_ALGO_DIRECT, false, NULL},      {TC_OP_ALLGATHER, TC_ALGO_RD, true, NULL},
    {TC_OP_ALLGATHER, TC_ALGO_BRUCK, true, NULL},     {TC_OP_ALLREDUCE, TC_ALGO_RHD, true, NULL},
    {TC_OP_REDUCESCATTER, TC_ALGO_RHD, true, NULL},
};

static const bench_case long_cases[] = {
    {TC_OP_ALLREDUCE, TC_ALGO_TORUS, true, "torus"},    {TC_OP_ALLREDUCE, TC_ALGO_TORUS_BI, true, "torus"},
    {TC_OP_ALLREDUCE, TC_ALGO_TORUS_MP, true, "torus"}, {TC_OP_ALLREDUCE, TC_ALGO_HIER, true, "node"},
    {TC_OP_ALLREDUCE, TC_ALGO_SWING, true, NULL},       {TC_OP_ALLREDUCE, TC_ALGO_RING, true, NULL},
    {TC_OP_ALLREDUCE, TC_ALGO_BIRING, true, NULL},
};

/* The topology a case needs for p ranks: a torus of four equal-as-possible
 * power-of-two sides, or a Clos of nodes of 8. */
static tc_topo *case_topo(const bench_case *c, uint32_t p)
{
    if (!c->topo)
        return NULL;
    char spec[160];
    tc_err err = {{0}};
    if (strcmp(c->topo, "torus") == 0) {
        uint32_t d[4] = {1, 1, 1, 1};
        for (int i = 0; (uint64_t)d[0] * d[1] * d[2] * d[3] < p; i = (i + 1) % 4)
            d[i] *= 2;
        snprintf(spec, sizeof spec, "torus:dims=%ux%ux%ux%u", d[0], d[1], d[2], d[3]);
    } else {
        snprintf(spec, sizeof spec, "clos:hosts=%u,radix=64,tiers=3,node=8", p);
    }
    tc_topo *t = NULL;
    BENCH_CHECK(tc_topo_build(spec, &t, &err), err);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int ring_median(uint32_t p, int runs)
{
    double t[101];
    runs = runs < 1 ? 1 : runs > 101 ? 101 : runs;
    tc_err err = {{0}};
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = p, .bytes = 1 << 30};
    tc_sched *s = NULL;
    BENCH_CHECK(tc_coll_build(&req, NULL, &s, &err), err);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        BENCH_CHECK(tc_sched_check(s, &err), err);
        t[i] = bench_now() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("allreduce ring p %u: check median %.3f s of %d (min %.3f, max %.3f), peak %.0f MiB\n", p, t[runs / 2],
           runs, t[0], t[runs - 1], bench_peak_mib());
    tc_sched_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "ring") == 0)
        return ring_median((uint32_t)strtoul(argv[2], NULL, 10), argc > 3 ? atoi(argv[3]) : 5);
    uint32_t p = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 65536;
    bool lng = argc > 2 && strcmp(argv[2], "long") == 0;
    const bench_case *list = lng ? long_cases : cases;
    size_t n = lng ? sizeof long_cases / sizeof *long_cases : sizeof cases / sizeof *cases;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const bench_case *c = &list[i];
        tc_err err = {{0}};
        tc_coll_req req = {.op = c->op, .algo = c->algo, .p = p, .bytes = 1 << 30, .root = p / 3};
        tc_topo *t = case_topo(c, p);
        tc_sched *s = NULL;
        BENCH_CHECK(tc_coll_build(&req, t, &s, &err), err);
        double t0 = bench_now();
        BENCH_CHECK(c->sampled ? tc_sched_check_sampled(s, 64, 1, &err) : tc_sched_check(s, &err), err);
        double dt = bench_now() - t0;
        total += dt;
        printf("%-14s %-9s p %6u steps %6u slots %6u %-14s %8.3f s  peak %6.0f MiB\n", tc_op_name(c->op),
               tc_algo_name(c->algo), p, s->nsteps, s->nslots, c->sampled ? "sampled 64" : "full", dt,
               bench_peak_mib());
        fflush(stdout);
        tc_sched_free(s);
        tc_topo_free(t);
    }
    printf("total %.3f s, peak memory %.0f MiB\n", total, bench_peak_mib());
    return 0;
}
