/*
 * bench_skip.c - repetition skipping against the full simulation on many
 * random small runs (docs/VALIDATION.md, "The flow simulator"): the
 * generator of test_flow_skip's random cases, widened (ranks on nodes of
 * two, links degraded to 5-99%), run N times from a seed. Every run is
 * simulated with skipping and with --no-skip; the time, the rank finishes
 * and the transfers must be the same bit for bit where no rank is folded,
 * and within 1e-9 relative where ranks are. Prints each run that breaks
 * that and a summary; exits 1 if any did. Not part of the test suite
 * (200,000 runs take about 8 minutes on one core).
 *
 * Usage: bench_skip [RUNS [SEED]]   (default 20000 runs, seed 7)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "topocc/coll.h"
#include "topocc/flow.h"
#include "topocc/topo.h"

static uint64_t rng(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct tally {
    long runs, skipped, folded, inexact, folded_off, bad;
    double worst; /* the largest relative difference of a folded run */
} tally;

/* One run with and without skipping; its context for the report. */
static void compare(const tc_topo *t, const tc_sched *s, const uint32_t *map, tc_flow_opts o, const char *ctx,
                    tally *ty)
{
    tc_flow_job job = {.sched = s, .rank_map = map};
    tc_flow_result a, b;
    tc_err err = {{0}};
    o.no_skip = false;
    if (tc_flow_run(t, &job, 1, &o, &a, &err) != TC_OK)
        return;
    o.no_skip = true;
    if (tc_flow_run(t, &job, 1, &o, &b, &err) != TC_OK) {
        tc_flow_result_free(&a);
        return;
    }
    ty->runs++;
    ty->skipped += a.steps_skipped > 0;
    ty->folded += a.fold_ranks > 0;
    const tc_flow_job_result *x = &a.jobs[0], *y = &b.jobs[0];
    bool same = a.makespan_s == b.makespan_s && x->time_s == y->time_s &&
                x->rank_finish_min_s == y->rank_finish_min_s && x->rank_finish_median_s == y->rank_finish_median_s &&
                x->rank_finish_max_s == y->rank_finish_max_s && x->transfers == y->transfers;
    double rel = fabs(x->time_s - y->time_s) / fmax(fabs(y->time_s), 1e-300);
    if (!same && a.fold_ranks) {
        ty->folded_off++;
        ty->worst = fmax(ty->worst, rel);
    }
    if (!same && (!a.fold_ranks || rel > 1e-9 || x->transfers != y->transfers)) {
        ty->bad++;
        printf("differs: %s: %.17g s skipping, %.17g s not (rel %.3g), %llu steps skipped, %u ranks folded\n", ctx,
               x->time_s, y->time_s, rel, (unsigned long long)a.steps_skipped, a.fold_ranks);
    }
    tc_flow_result_free(&a);
    tc_flow_result_free(&b);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    uint64_t x = argc > 2 ? strtoull(argv[2], NULL, 10) : 7;
    if (n <= 0) {
        fprintf(stderr, "bench_skip: RUNS must be a positive integer, got '%s'\n", argv[1]);
        return 2;
    }
    tally ty = {0};
    for (long c = 0; c < n; c++) {
        char spec[200];
        if (rng(&x) % 2) {
            unsigned a = 2 + (unsigned)(rng(&x) % 7), b = 2 + (unsigned)(rng(&x) % 5);
            unsigned u = 1 + (unsigned)(rng(&x) % b), lat = (unsigned)(rng(&x) % 2000);
            unsigned al = (unsigned)(rng(&x) % 3000);
            snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,lat=%uns,alpha=%uns%s", a, b, u, lat, al,
                     rng(&x) % 3 == 0 ? ",node=2" : "");
        } else {
            unsigned a = 2 + (unsigned)(rng(&x) % 6), b = 2 + (unsigned)(rng(&x) % 6);
            unsigned lat = (unsigned)(rng(&x) % 2000), al = (unsigned)(rng(&x) % 3000);
            snprintf(spec, sizeof spec, "torus:dims=%ux%u,lat=%uns,alpha=%uns", a, b, lat, al);
        }
        tc_topo *t = NULL;
        tc_err err = {{0}};
        if (tc_topo_build(spec, &t, &err) != TC_OK)
            continue;
        char deg[64] = "";
        if (rng(&x) % 3 == 0) {
            double f = 0.05 + (double)(rng(&x) % 95) / 100;
            uint32_t l = (uint32_t)(rng(&x) % t->n_links);
            if (tc_topo_degrade_link(t, l, f, &err) == TC_OK)
                snprintf(deg, sizeof deg, " --degrade link:%u=%g", l, f);
        }
        uint32_t ne = t->n_endpoints, p = 2 + (uint32_t)(rng(&x) % (ne - 1));
        uint32_t *map = malloc(ne * sizeof *map);
        if (!map) {
            fprintf(stderr, "bench_skip: out of memory\n");
            return 1;
        }
        for (uint32_t i = 0; i < ne; i++)
            map[i] = i;
        for (uint32_t i = ne - 1; i > 0; i--) {
            uint32_t k = (uint32_t)(rng(&x) % (i + 1)), v = map[i];
            map[i] = map[k];
            map[k] = v;
        }
        bool use_map = rng(&x) % 2;
        tc_op op = (tc_op)(rng(&x) % TC_OP_COUNT);
        double bytes = (double)(1 + rng(&x) % (1u << 24));
        tc_sched *s = NULL;
        tc_coll_req req = {0};
        for (int tries = 0; tries < 32 && !s; tries++) {
            tc_algo al = (tc_algo)(rng(&x) % TC_ALGO_COUNT);
            if (al == TC_ALGO_AUTO)
                continue;
            req = (tc_coll_req){.op = op, .algo = al, .p = p, .bytes = bytes};
            if (al > TC_ALGO_AUTO) {
                req.proto = (tc_proto)(rng(&x) % TC_PROTO_COUNT);
                req.channels = 1 + (uint32_t)(rng(&x) % 4);
            }
            if (tc_coll_build(&req, t, &s, &err) != TC_OK)
                s = NULL;
        }
        if (s) {
            tc_flow_opts o = {0};
            o.deps = (tc_flow_deps)(rng(&x) % 4);
            o.eager_limit_bytes = (double)(1 + rng(&x) % (1u << 20));
            if (rng(&x) % 4 == 0 && !s->proto)
                o.rate_cap_Bps = 1e9 * (double)(1 + rng(&x) % 50);
            if (rng(&x) % 5 == 0)
                o.multipath = TC_MULTIPATH_SPRAY;
            if (t->kind == TC_TOPO_CLOS && rng(&x) % 3 == 0)
                o.routing = TC_ROUTE_DMODK;
            char ctx[512];
            snprintf(ctx, sizeof ctx, "run %ld: --topo %s%s --op %s --algo %s (proto %d, %u channels) p=%u%s --size %.0f "
                     "deps=%d eager=%.0f rate_cap=%g multipath=%d routing=%d",
                     c, spec, deg, tc_op_name(op), tc_algo_name(req.algo), (int)req.proto, req.channels, p,
                     use_map ? " (rank map)" : "", bytes, (int)o.deps, o.eager_limit_bytes, o.rate_cap_Bps,
                     (int)o.multipath, (int)o.routing);
            compare(t, s, use_map ? map : NULL, o, ctx, &ty);
            tc_sched_free(s);
        }
        free(map);
        tc_topo_free(t);
    }
    printf("%ld runs: %ld skipped steps, %ld folded ranks; %ld folded runs differ from the full simulation "
           "(largest %.3g relative); %ld break the rule\n",
           ty.runs, ty.skipped, ty.folded, ty.folded_off, ty.worst, ty.bad);
    return ty.bad ? 1 : 0;
}
