/*
 * test_flow_skip.c - repetition skipping in the flow simulator
 * (flow_skip.c): with it, every algorithm's result equals the full
 * simulation on symmetric and asymmetric networks, with degraded links,
 * under every dependency rule, at random rank counts and sizes and at
 * 1,024 ranks: bit for bit where no rank is folded (the time grid makes a
 * repeat exact), to 1e-9 relative where ranks are folded (the folded
 * simulation's rates are its own sums); and it does skip where the state
 * repeats.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "build_helpers.h"
#include "topocc/flow.h"

#define REL 1e-9

static double max_rel; /* the largest difference seen, printed */

/* Bit for bit. */
static void same(double a, double b, const char *what, const char *ctx)
{
    if (a != b)
        fail_msg("%s: %s with skipping %.17g, without %.17g: not the same", ctx, what, a, b);
}

static void near(double a, double b, const char *what, const char *ctx)
{
    if (fmax(fabs(a), fabs(b)) > 0)
        max_rel = fmax(max_rel, fabs(a - b) / fmax(fabs(a), fabs(b)));
    if (!(fabs(a - b) <= REL * fmax(fabs(a), fabs(b)) + 1e-18))
        fail_msg("%s: %s with skipping %.17g, without %.17g (rel %.3g)", ctx, what, a, b,
                 fabs(a - b) / fmax(fabs(a), fabs(b)));
}

typedef struct tally {
    uint64_t runs, skipped_runs, steps, skipped, folded, to_end;
    uint64_t exact;        /* runs that skipped steps without folding: compared bit for bit */
} tally;

/* Runs the jobs with and without skipping and compares everything the
 * result reports. */
static void compare_jobs(const tc_topo *t, const tc_flow_job *jobs, size_t nj, tc_flow_opts o, const char *ctx,
                         tally *ty)
{
    tc_flow_result a, b;
    tc_err err = {{0}};
    o.no_skip = false;
    tc_status sa = tc_flow_run(t, jobs, nj, &o, &a, &err);
    if (sa != TC_OK)
        fail_msg("%s: %s", ctx, err.msg);
    o.no_skip = true;
    if (tc_flow_run(t, jobs, nj, &o, &b, &err) != TC_OK)
        fail_msg("%s (no skip): %s", ctx, err.msg);
    assert_non_null(b.skip_off);
    assert_string_equal(b.skip_off, "--no-skip");
    assert_int_equal(b.steps_skipped, 0);
    void (*eq)(double, double, const char *, const char *) = a.fold_ranks ? near : same;
    eq(a.makespan_s, b.makespan_s, "makespan", ctx);
    for (size_t j = 0; j < nj; j++) {
        eq(a.jobs[j].time_s, b.jobs[j].time_s, "time", ctx);
        eq(a.jobs[j].rank_finish_min_s, b.jobs[j].rank_finish_min_s, "first rank finish", ctx);
        eq(a.jobs[j].rank_finish_median_s, b.jobs[j].rank_finish_median_s, "median rank finish", ctx);
        eq(a.jobs[j].rank_finish_max_s, b.jobs[j].rank_finish_max_s, "last rank finish", ctx);
        if (a.jobs[j].transfers != b.jobs[j].transfers)
            fail_msg("%s: %llu transfers with skipping, %llu without", ctx, (unsigned long long)a.jobs[j].transfers,
                     (unsigned long long)b.jobs[j].transfers);
    }
    near(a.mean_utilisation, b.mean_utilisation, "mean utilisation", ctx);
    assert_int_equal(a.nhot, b.nhot);
    for (size_t i = 0; i < a.nhot; i++) {
        near(a.hot[i].bytes, b.hot[i].bytes, "bytes of a hot link", ctx);
        if (a.hot[i].link != b.hot[i].link)
            fail_msg("%s: hot link %zu is link %u with skipping, %u without", ctx, i, a.hot[i].link, b.hot[i].link);
    }
    uint64_t steps = 0;
    for (size_t j = 0; j < nj; j++)
        steps += jobs[j].sched->nsteps;
    assert_int_equal(a.steps_simulated + a.steps_skipped, steps);
    assert_int_equal(b.steps_simulated, steps);
    assert_true(a.steps_to_end <= a.steps_skipped);
    assert_int_equal(b.steps_to_end, 0);
    if (a.steps_skipped) {
        assert_true(a.repeat_from_step < steps);
        assert_null(a.skip_off);
    } else {
        assert_int_equal(a.repeat_from_step, UINT32_MAX);
    }
    ty->runs++;
    ty->exact += !a.fold_ranks && a.steps_skipped > 0;
    ty->skipped_runs += a.steps_skipped > 0;
    ty->steps += steps;
    ty->skipped += a.steps_skipped;
    ty->folded += a.fold_ranks > 0;
    ty->to_end += a.steps_to_end > 0;
    if (a.fold_ranks)
        assert_int_equal(a.steps_to_end, 0);
    assert_int_equal(b.fold_ranks, 0);
    if (a.fold_ranks) {
        assert_null(a.fold_off);
        assert_true(a.fold_copies >= 2);
    } else {
        assert_non_null(a.fold_off);
    }
    tc_flow_result_free(&a);
    tc_flow_result_free(&b);
}

static void tally_print(const char *label, const tally *ty)
{
    print_message("%s: %llu runs, %llu skipped (%llu of them compared bit for bit), %llu folded, %llu to the end at "
                  "once, %llu of %llu steps skipped\n",
                  label, (unsigned long long)ty->runs, (unsigned long long)ty->skipped_runs, (unsigned long long)ty->exact,
                  (unsigned long long)ty->folded, (unsigned long long)ty->to_end, (unsigned long long)ty->skipped,
                  (unsigned long long)ty->steps);
}

static void compare_one(const tc_topo *t, const tc_sched *s, const uint32_t *map, tc_flow_opts o, const char *ctx,
                        tally *ty)
{
    tc_flow_job job = {.sched = s, .rank_map = map};
    compare_jobs(t, &job, 1, o, ctx, ty);
}

static uint64_t rng_next(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return tc_mix64(*x);
}

/* Every algorithm of every operation that builds at p ranks, at two sizes
 * (per-step messages below and above the eager limit) under a dependency
 * rule drawn at random. */
static void every_algorithm(const char *spec, uint32_t p, uint64_t seed, int degrade, tally *ty)
{
    tc_topo *t = topo(spec);
    uint64_t x = seed;
    char ctx[256];
    if (degrade) {
        for (int i = 0; i < degrade; i++) {
            uint32_t l = (uint32_t)(rng_next(&x) % t->n_links);
            tc_err err = {{0}};
            if (tc_topo_degrade_link(t, l, 0.25, &err) != TC_OK)
                fail_msg("%s: %s", spec, err.msg);
        }
    }
    const double sizes[] = {64.0 * 1024 * p / 16, 4.0 * 1024 * 1024 * p / 8};
    int ring_runs = 0, ring_skipped = 0;
    for (int op = 0; op < TC_OP_COUNT; op++)
        for (int al = 0; al < TC_ALGO_AUTO; al++)
            for (size_t z = 0; z < 2; z++) {
                tc_coll_req req = {.op = (tc_op)op, .algo = (tc_algo)al, .p = p, .bytes = sizes[z]};
                tc_sched *s = NULL;
                tc_err err = {{0}};
                if (tc_coll_build(&req, t, &s, &err) != TC_OK)
                    continue;
                tc_flow_opts o = {0};
                o.deps = (tc_flow_deps)(rng_next(&x) % 4);
                if (t->kind == TC_TOPO_CLOS && rng_next(&x) % 3 == 0)
                    o.routing = TC_ROUTE_DMODK;
                if (rng_next(&x) % 5 == 0)
                    o.multipath = TC_MULTIPATH_SPRAY;
                snprintf(ctx, sizeof ctx, "%s degrade=%d: %s/%s p=%u bytes=%g deps=%d routing=%d multipath=%d", spec,
                         degrade, tc_op_name(req.op), tc_algo_name(req.algo), p, sizes[z], (int)o.deps,
                         (int)o.routing, (int)o.multipath);
                uint64_t before = ty->skipped;
                compare_one(t, s, NULL, o, ctx, ty);
                if (req.op == TC_OP_ALLREDUCE && req.algo == TC_ALGO_RING) {
                    ring_runs++;
                    ring_skipped += ty->skipped > before;
                }
                if (getenv("SKIP_VERBOSE"))
                    print_message("%s: %llu of %u skipped\n", ctx, (unsigned long long)(ty->skipped - before), s->nsteps);
                tc_sched_free(s);
            }
    /* A ring all-reduce on a network without degraded links repeats (at
     * one size at least: under rendezvous a transient can outlast a short
     * ring): the test means something only if it skips. */
    if (!degrade && ring_runs && !ring_skipped)
        fail_msg("%s: no ring all-reduce skipped a step", spec);
    tc_topo_free(t);
}

static void every_algorithm_on_symmetric_networks(void **state)
{
    (void)state;
    tally ty = {0};
    every_algorithm("clos:down=8x8,up=1x8,bw=12.5GB/s,lat=1us", 64, 1, 0, &ty);
    every_algorithm("clos:down=4x4x4,up=1x4x4,alpha=0", 64, 2, 0, &ty);
    every_algorithm("torus:dims=4x4x4,lat=1us", 64, 3, 0, &ty);
    every_algorithm("torus:dims=8x4,wrap=0x1", 32, 4, 0, &ty);
    tally_print("symmetric", &ty);
    assert_true(ty.skipped_runs * 8 > ty.runs);
    assert_true(ty.folded * 8 > ty.runs);
}

static void every_algorithm_on_asymmetric_and_degraded_networks(void **state)
{
    (void)state;
    tally ty = {0};
    every_algorithm("clos:down=8x8,up=1x2,lat=1us", 64, 5, 0, &ty);
    every_algorithm("clos:down=6x5,up=1x3,lat=1us", 30, 6, 0, &ty);
    every_algorithm("clos:down=8x8,up=1x8,bw=12.5GB/s,lat=1us", 64, 7, 1, &ty);
    every_algorithm("clos:down=8x8,up=1x8,bw=12.5GB/s,lat=1us", 48, 8, 3, &ty);
    every_algorithm("torus:dims=4x4x4,lat=1us", 64, 9, 2, &ty);
    every_algorithm("torus:dims=5x3,lat=1us", 15, 10, 1, &ty);
    tally_print("asymmetric", &ty);
    /* the degraded networks' repeats carried to the end (flow_skip.c, to_end) */
    assert_true(ty.to_end > 0);
}

/* Random shapes, rank counts (not all endpoints: a rank map), sizes,
 * latencies, alpha, rate caps and degraded links; every algorithm, NCCL's
 * with a random protocol and channel count. */
static void random_cases(void **state)
{
    (void)state;
    uint64_t x = 12345;
    tally ty = {0};
    for (int c = 0; c < 240; c++) {
        char spec[160];
        if (rng_next(&x) % 2) {
            uint32_t a = 2 + (uint32_t)(rng_next(&x) % 7), b = 2 + (uint32_t)(rng_next(&x) % 5);
            uint32_t u = 1 + (uint32_t)(rng_next(&x) % b);
            snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,lat=%uns,alpha=%uns", a, b, u,
                     (unsigned)(rng_next(&x) % 2000), (unsigned)(rng_next(&x) % 3000));
        } else {
            uint32_t a = 2 + (uint32_t)(rng_next(&x) % 6), b = 2 + (uint32_t)(rng_next(&x) % 6);
            snprintf(spec, sizeof spec, "torus:dims=%ux%u,lat=%uns,alpha=%uns", a, b, (unsigned)(rng_next(&x) % 2000),
                     (unsigned)(rng_next(&x) % 3000));
        }
        tc_topo *t = topo(spec);
        if (rng_next(&x) % 3 == 0) {
            tc_err err = {{0}};
            double f = 0.05 + (double)(rng_next(&x) % 95) / 100;
            if (tc_topo_degrade_link(t, (uint32_t)(rng_next(&x) % t->n_links), f, &err) != TC_OK)
                fail_msg("%s", err.msg);
        }
        uint32_t n = t->n_endpoints;
        uint32_t p = 2 + (uint32_t)(rng_next(&x) % (n - 1));
        /* p distinct endpoints in random order */
        uint32_t *map = malloc(n * sizeof *map);
        for (uint32_t i = 0; i < n; i++)
            map[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t k = (uint32_t)(rng_next(&x) % (i + 1)), v = map[i];
            map[i] = map[k];
            map[k] = v;
        }
        bool use_map = rng_next(&x) % 2;
        tc_op op = (tc_op)(rng_next(&x) % TC_OP_COUNT);
        tc_algo al = TC_ALGO_RING;
        double bytes = (double)(1 + rng_next(&x) % (1u << 24));
        tc_sched *s = NULL;
        tc_err err = {{0}};
        /* an algorithm drawn among those that build for this operation at
         * p ranks (many need a power of two or a torus) */
        for (int tries = 0; tries < 32 && !s; tries++) {
            al = (tc_algo)(rng_next(&x) % TC_ALGO_COUNT);
            if (al == TC_ALGO_AUTO)
                continue;
            tc_coll_req req = {.op = op, .algo = al, .p = p, .bytes = bytes};
            if (al > TC_ALGO_AUTO) {
                req.proto = (tc_proto)(rng_next(&x) % TC_PROTO_COUNT);
                req.channels = 1 + (uint32_t)(rng_next(&x) % 4);
            }
            if (tc_coll_build(&req, t, &s, &err) != TC_OK)
                s = NULL;
        }
        if (s) {
            tc_flow_opts o = {0};
            o.deps = (tc_flow_deps)(rng_next(&x) % 4);
            o.eager_limit_bytes = (double)(1 + rng_next(&x) % (1u << 20));
            if (rng_next(&x) % 4 == 0 && !s->proto)
                o.rate_cap_Bps = 1e9 * (double)(1 + rng_next(&x) % 50);
            if (rng_next(&x) % 5 == 0)
                o.multipath = TC_MULTIPATH_SPRAY;
            char ctx[320];
            snprintf(ctx, sizeof ctx, "case %d %s: %s/%s p=%u bytes=%g map=%d deps=%d", c, spec, tc_op_name(op),
                     tc_algo_name(al), p, bytes, use_map, (int)o.deps);
            compare_one(t, s, use_map ? map : NULL, o, ctx, &ty);
            tc_sched_free(s);
        }
        free(map);
        tc_topo_free(t);
    }
    tally_print("random", &ty);
    /* the test means something only where runs skip unfolded */
    assert_true(ty.exact > 0);
}

/* A repeat carried to the end where a held flow's rate applied later than
 * its start: NCCL's ring with LL on a torus with a degraded link put a
 * later step's events into the batches of the flows it carried, and came
 * out 5 grid units a repeat off at the last steps, where those events
 * were gone (flow.c, apply_rates; docs/MODEL.md, "To the end"). Found by
 * bench_skip; the answer must be the full simulation's, bit for bit. */
static void a_batch_shaped_by_a_later_step_is_not_carried_to_the_end(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=7x5,lat=1523ns,alpha=764ns");
    tc_err err = {{0}};
    if (tc_topo_degrade_link(t, 47, 0.17, &err) != TC_OK)
        fail_msg("%s", err.msg);
    tc_coll_req req = {.op = TC_OP_ALLGATHER, .algo = TC_ALGO_NCCL, .p = 34, .bytes = 7415074,
                       .proto = TC_PROTO_LL, .channels = 1};
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s", err.msg);
    tc_flow_opts o = {0};
    o.deps = TC_DEPS_FIFO;
    tally ty = {0};
    compare_one(t, s, NULL, o, "nccl LL all-gather, 7x5 torus, link 47 at 0.17", &ty);
    assert_int_equal(ty.exact, 1); /* it skipped, unfolded: compared bit for bit */
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Job 0's time on spec (link `degrade`, when not UINT32_MAX, at `factor`)
 * with skipping; compared with the full simulation as well. */
static double grid_time(const char *spec, uint32_t degrade, double factor, const tc_coll_req *req, const char *ctx)
{
    tc_topo *t = topo(spec);
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (degrade != UINT32_MAX && tc_topo_degrade_link(t, degrade, factor, &err) != TC_OK)
        fail_msg("%s: %s", ctx, err.msg);
    if (tc_coll_build(req, t, &s, &err) != TC_OK)
        fail_msg("%s: %s", ctx, err.msg);
    tc_flow_job job = {.sched = s};
    tc_flow_opts o = {0};
    tc_flow_result r;
    if (tc_flow_run(t, &job, 1, &o, &r, &err) != TC_OK)
        fail_msg("%s: %s", ctx, err.msg);
    double time = r.jobs[0].time_s;
    tally ty = {0};
    compare_one(t, s, NULL, o, ctx, &ty);
    tc_flow_result_free(&r);
    tc_sched_free(s);
    tc_topo_free(t);
    return time;
}

/* The grid is sized by the routes the job takes, not by every link: a job
 * inside one pod of two joined by a long-haul link takes what it takes on
 * that pod alone. Sized by the slowest link anywhere, its grid was as many
 * times coarser as the long-haul latency is longer, and the rounding of
 * 15,000 steps moved the answer by 2e-5 at 20 ms and 16% at 10 s. */
static void a_job_in_one_pod_is_not_timed_on_the_long_haul_grid(void **state)
{
    (void)state;
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 16, .bytes = 16 << 20, .chunks = 512};
    double alone = grid_time("clos:down=4x4,up=1x4", UINT32_MAX, 1, &req, "one pod");
    const char *lat[] = {"20ms", "10s", "100000s"};
    for (int i = 0; i < 3; i++) {
        char spec[200];
        snprintf(spec, sizeof spec, "multidc:pods=2,pod=clos,down=4x4,up=1x4,wan_bw=400Gbps,wan_lat=%s", lat[i]);
        double t = grid_time(spec, UINT32_MAX, 1, &req, spec);
        if (!(fabs(t - alone) <= 1e-12 * alone))
            fail_msg("%s: %.17g s, %.17g s on the pod alone", spec, t, alone);
    }
}

/* A duration of more grid units than a double holds is not rounded to
 * infinity (which left the transfer undelivered: "job 0 deadlocks"). */
static void an_astronomical_duration_ends(void **state)
{
    (void)state;
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 4, .bytes = 1 << 30};
    double t = grid_time("clos:down=2x2,up=1x2,bw=400Gbps", 0, 1e-300, &req, "link 0 at 1e-300");
    /* six steps of a quarter GiB through the link at 50 GB/s x 1e-300 */
    double want = 6.0 * (1 << 28) / (50e9 * 1e-300);
    if (!(fabs(t - want) <= 1e-9 * want))
        fail_msg("%.17g s, expected %.17g s", t, want);
}

/* 1,024 ranks: the algorithms whose phases repeat many steps, symmetric and
 * with a degraded link. */
static void at_1024_ranks(void **state)
{
    (void)state;
    tally ty = {0};
    const char *specs[] = {"clos:hosts=1024,radix=64,tiers=2", "torus:dims=8x8x16"};
    /* biring and dbtree take seconds each in full simulation on the Clos
     * (bench/ runs them there) */
    const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_TORUS, TC_ALGO_BIRING, TC_ALGO_DBTREE};
    for (int sp = 0; sp < 2; sp++)
        for (int deg = 0; deg < 2; deg++) {
            tc_topo *t = topo(specs[sp]);
            if (deg) {
                tc_err err = {{0}};
                if (tc_topo_degrade_link(t, t->n_links / 3, 0.5, &err) != TC_OK)
                    fail_msg("%s", err.msg);
            }
            for (size_t a = 0; a < (sp ? 5u : 3u); a++) {
                tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = algos[a], .p = 1024, .bytes = 1 << 30};
                tc_sched *s = NULL;
                tc_err err = {{0}};
                if (tc_coll_build(&req, t, &s, &err) != TC_OK)
                    continue;
                char ctx[200];
                snprintf(ctx, sizeof ctx, "%s degraded=%d %s", specs[sp], deg, tc_algo_name(algos[a]));
                tc_flow_opts o = {0};
                compare_one(t, s, NULL, o, ctx, &ty);
                tc_sched_free(s);
            }
            tc_topo_free(t);
        }
    tally_print("1024", &ty);
}

/* To the end at once: a ring on a D-mod-k Clos with one up-link halved
 * sends every flow alone on its links; its lag spreads over the ring, and
 * the repeat, once found, is carried to the schedule's last step without
 * simulating the steps the lag spans, with the full simulation's answer.
 * With the ring's ranks spread over the leaves, several flows share each
 * leaf's up-links: the repeat is no longer carried to the end (the leading
 * ranks' last flows leave the links to the others), and the answer is the
 * full simulation's again. */
static void a_repeat_goes_to_the_end_only_where_no_link_is_shared(void **state)
{
    (void)state;
    tally ty = {0};
    tc_flow_opts o = {0};
    o.routing = TC_ROUTE_DMODK;
    tc_err err = {{0}};
    for (int deps = 0; deps < 4; deps++) {
        tc_topo *t = topo("clos:hosts=512,radix=32,tiers=2");
        assert_int_equal(tc_topo_degrade_link(t, 0, 0.5, &err), TC_OK);
        tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 512, 512 * 65536.0);
        o.deps = (tc_flow_deps)deps;
        tc_flow_job job = {.sched = s};
        tc_flow_result r;
        assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
        if (getenv("SKIP_VERBOSE"))
            print_message("deps %d: %llu to the end of %llu skipped\n", deps, (unsigned long long)r.steps_to_end,
                          (unsigned long long)r.steps_skipped);
        if (deps != TC_DEPS_RECV)
            assert_true(r.steps_to_end > 0);
        tc_flow_result_free(&r);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "degraded ring, deps %d", deps);
        compare_one(t, s, NULL, o, ctx, &ty);
        tc_sched_free(s);
        tc_topo_free(t);
    }
    /* rank r on leaf r % 16: every flow crosses the leaves' up-links */
    tc_topo *t = topo("clos:down=16x16,up=1x4,lat=1us");
    assert_int_equal(tc_topo_degrade_link(t, 0, 0.5, &err), TC_OK);
    uint32_t map[256];
    for (uint32_t r = 0; r < 256; r++)
        map[r] = (r % 16) * 16 + r / 16;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 256, 256 * 65536.0);
    tc_flow_job job = {.sched = s, .rank_map = map};
    tc_flow_result r;
    o.deps = TC_DEPS_AUTO;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
    if (getenv("SKIP_VERBOSE"))
        print_message("shared links: %llu to the end of %llu skipped\n", (unsigned long long)r.steps_to_end,
                      (unsigned long long)r.steps_skipped);
    assert_int_equal(r.steps_to_end, 0);
    tc_flow_result_free(&r);
    compare_one(t, s, map, o, "degraded ring over shared up-links", &ty);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* A ring on a symmetric Clos repeats after a few steps: most steps are
 * skipped, and the report says where the repetition began. */
static void a_ring_on_a_symmetric_clos_skips_most_steps(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:hosts=1024,radix=64,tiers=2");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 1024, 1 << 30);
    tc_flow_job job = {.sched = s};
    tc_flow_opts o = {0};
    tc_flow_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
    assert_null(r.skip_off);
    assert_true(r.steps_skipped > 9 * s->nsteps / 10);
    assert_true(r.repeat_from_step < 100);
    tc_flow_result_free(&r);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Rank symmetry: an eager ring on a three-level Clos under D-mod-k is
 * the same in every pod, so one pod's ranks are simulated (with a rank map
 * that translates, too); it then repeats with the period of a pod's ring.
 * A degraded link on the ring's path breaks the symmetry: no fold, the
 * reason said, the same answer. */
static void a_ring_folds_by_pod(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4x4,up=1x4x4");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 64, 64 * 32768.0);
    uint32_t map[64];
    for (uint32_t r = 0; r < 64; r++)
        map[r] = (r + 16) % 64;
    tc_flow_opts o = {0};
    o.routing = TC_ROUTE_DMODK;
    tally ty = {0};
    for (int m = 0; m < 2; m++) {
        tc_flow_job job = {.sched = s, .rank_map = m ? map : NULL};
        tc_flow_result r;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
        assert_int_equal(r.fold_ranks, 16);
        assert_int_equal(r.fold_copies, 4);
        assert_true(r.steps_skipped > 0);
        tc_flow_result_free(&r);
        compare_one(t, s, m ? map : NULL, o, m ? "pod fold, translated map" : "pod fold", &ty);
    }
    tc_err err = {{0}};
    assert_int_equal(tc_topo_degrade_link(t, 0, 0.5, &err), TC_OK);
    tc_flow_job job = {.sched = s};
    tc_flow_result r;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
    assert_int_equal(r.fold_ranks, 0);
    assert_non_null(r.fold_off);
    assert_non_null(strstr(r.fold_off, "no translation"));
    tc_flow_result_free(&r);
    compare_one(t, s, NULL, o, "pod fold, degraded", &ty);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* A rank that posts several messages in a step, some parked for their
 * receivers (rendezvous, alpha > 0), pays its overhead slots in the
 * schedule's order as it posts them (flow.c, flow_post): the run folds,
 * equals the full simulation, and starts the flows of a direct all-to-all
 * at p - 1 instants (all ranks' k-th message at k alpha), so the rates are
 * re-solved a few hundred times, not once per flow. */
static void parked_messages_post_in_the_schedules_order(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,lat=1us,alpha=1.1us");
    tally ty = {0};
    /* (direct all-gather's senders go in rank order: no translation maps
     * them onto themselves, so it does not fold) */
    tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 64, 64.0 * 1024 * 1024);
    tc_flow_opts o = {.routing = TC_ROUTE_DMODK, .deps = TC_DEPS_RENDEZVOUS};
    tc_flow_job job = {.sched = s};
    tc_flow_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
    if (r.fold_ranks != 8)
        fail_msg("direct all-to-all: folded to %u ranks (%s), not a leaf's 8", r.fold_ranks,
                 r.fold_off ? r.fold_off : "-");
    tc_flow_result_free(&r);
    o.no_skip = true;
    assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
    if (r.batches > 4 * 64)
        fail_msg("direct all-to-all: %llu batches of events for 63 start instants", (unsigned long long)r.batches);
    tc_flow_result_free(&r);
    compare_one(t, s, NULL, (tc_flow_opts){.routing = TC_ROUTE_DMODK, .deps = TC_DEPS_RENDEZVOUS}, "alltoall", &ty);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Two ranks on one endpoint (a map that is not one-to-one): a parked
 * transfer released by its folded receiver is a local copy only where its
 * own two ends share an endpoint, not where its sender shares the
 * receiver class's endpoint (a transfer over the network was delivered at
 * once before: 709.9 us where the full simulation gives 945.8 us). */
static void ranks_sharing_an_endpoint_fold_as_simulated(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x4,bw=10Gbps,lat=1us,alpha=0");
    tally ty = {0};
    static const uint32_t m4[] = {2, 2, 0, 0}, m8[] = {5, 5, 6, 6, 5, 5, 6, 6};
    const struct {
        const uint32_t *map;
        uint32_t p;
    } cases[] = {{m4, 4}, {m8, 8}};
    for (size_t c = 0; c < 2; c++)
        for (int d = 0; d < 4; d++) {
            tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, cases[c].p, 294912.0 * cases[c].p);
            char ctx[96];
            snprintf(ctx, sizeof ctx, "direct all-to-all, %u ranks on %u endpoints, deps %d", cases[c].p,
                     cases[c].p / 2, d);
            for (int rt = 0; rt < 2; rt++)
                compare_one(t, s, cases[c].map,
                            (tc_flow_opts){.routing = rt ? TC_ROUTE_DMODK : TC_ROUTE_ECMP, .deps = (tc_flow_deps)d},
                            ctx, &ty);
            tc_sched_free(s);
        }
    tally_print("ranks sharing an endpoint", &ty);
    tc_topo_free(t);
}

/* A ring all-reduce's reduce-scatter and all-gather carry the same
 * transfers: a repetition found in the first goes on in the second, so the
 * all-reduce simulates no more steps than the reduce-scatter alone (on a
 * degraded link, where the lag spreads over hundreds of steps and a new
 * search in the all-gather would simulate them again); the answer stays
 * that of the full simulation. */
static void a_repetition_crosses_identical_phases(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:hosts=512,radix=64,tiers=2");
    tc_err err = {{0}};
    assert_int_equal(tc_topo_degrade_link(t, 0, 0.5, &err), TC_OK);
    tc_flow_opts o = {0};
    o.routing = TC_ROUTE_DMODK;
    uint32_t sim[2];
    for (int i = 0; i < 2; i++) {
        tc_op op = i ? TC_OP_REDUCESCATTER : TC_OP_ALLREDUCE;
        tc_sched *s = sched(t, op, TC_ALGO_RING, 512, 512.0 * 1024 * 1024);
        tc_flow_job job = {.sched = s};
        tc_flow_result r;
        assert_int_equal(tc_flow_run(t, &job, 1, &o, &r, &err), TC_OK);
        sim[i] = r.steps_simulated;
        assert_true(r.steps_skipped > 0);
        tc_flow_result_free(&r);
        tally ty = {0};
        compare_one(t, s, NULL, o, i ? "degraded ring reduce-scatter" : "degraded ring all-reduce", &ty);
        tc_sched_free(s);
    }
    assert_true(sim[0] <= sim[1] + 4);
    tc_topo_free(t);
}

/* Several jobs and tracing simulate every step and say so; the results
 * are those of the full simulation. */
static void several_jobs_and_traces_are_not_skipped(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8,bw=12.5GB/s,lat=1us");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 32, 1 << 24);
    uint32_t m1[32], m2[32];
    for (uint32_t r = 0; r < 32; r++) {
        m1[r] = r;
        m2[r] = 32 + r;
    }
    tc_flow_job jobs[2] = {{.sched = s, .rank_map = m1}, {.sched = s, .rank_map = m2, .start_s = 1e-6}};
    tc_flow_opts o = {0};
    tc_flow_result r;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_run(t, jobs, 2, &o, &r, &err), TC_OK);
    assert_string_equal(r.skip_off, "several jobs");
    assert_int_equal(r.steps_skipped, 0);
    tc_flow_result_free(&r);
    tally ty = {0};
    compare_jobs(t, jobs, 2, o, "two jobs", &ty);
    char path[] = "/tmp/topocc_skip_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    o.trace_path = path;
    assert_int_equal(tc_flow_run(t, jobs, 1, &o, &r, &err), TC_OK);
    assert_string_equal(r.skip_off, "tracing");
    assert_int_equal(r.steps_skipped, 0);
    tc_flow_result_free(&r);
    remove(path);
    tc_sched_free(s);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_ring_on_a_symmetric_clos_skips_most_steps),
        cmocka_unit_test(several_jobs_and_traces_are_not_skipped),
        cmocka_unit_test(a_ring_folds_by_pod),
        cmocka_unit_test(parked_messages_post_in_the_schedules_order),
        cmocka_unit_test(ranks_sharing_an_endpoint_fold_as_simulated),
        cmocka_unit_test(a_repetition_crosses_identical_phases),
        cmocka_unit_test(a_repeat_goes_to_the_end_only_where_no_link_is_shared),
        cmocka_unit_test(every_algorithm_on_symmetric_networks),
        cmocka_unit_test(every_algorithm_on_asymmetric_and_degraded_networks),
        cmocka_unit_test(random_cases),
        cmocka_unit_test(a_batch_shaped_by_a_later_step_is_not_carried_to_the_end),
        cmocka_unit_test(a_job_in_one_pod_is_not_timed_on_the_long_haul_grid),
        cmocka_unit_test(an_astronomical_duration_ends),
        cmocka_unit_test(at_1024_ranks),
    };
    if (getenv("TEST_FILTER"))
        cmocka_set_test_filter(getenv("TEST_FILTER"));
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    print_message("largest relative difference, skipping against not: %.3g\n", max_rel);
    return rc;
}
