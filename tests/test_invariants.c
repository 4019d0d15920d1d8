/*
 * test_invariants.c - the evaluators' invariant on randomized cases: the
 * formula evaluator equals steps under the same routing to 1e-9 (a phase
 * is either an exact closed form or evaluated on the routed graph), and
 * formula, steps and flow are all at least the lower bound (flow where no
 * step can hold more than FLOW_MAX_INFLIGHT transfers).
 *
 * The cases come from a fixed, recorded seed set: Clos with oversubscription
 * and tapered bandwidths, scale-up nodes, tori and meshes, every operation
 * and valid algorithm, 2 to 300 ranks (first endpoints or a random
 * placement), sizes from 1 KiB to 1 GiB, a degraded link in some; fully
 * connected networks from a seed stream of their own. A failure
 * prints the case and its seed. Cases where flow exceeds steps by more than
 * 1% are counted (docs/VALIDATION.md says why they exist). NCCL's
 * algorithms, and sendrecv (nccl and direct), on random GPU clusters.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/eval.h"
#include "topocc/place.h"

#define SEED0 20261202ull
#define NCASES 520 /* the sanitized build too: 13 s there */
#define NCCL_DRAWS 80

typedef struct rng {
    uint64_t x;
} rng;

static uint64_t next(rng *r)
{
    return r->x = tc_mix64(r->x);
}

static uint32_t pick(rng *r, uint32_t n)
{
    return (uint32_t)(next(r) % n);
}

/* A topology spec drawn from r. */
static void draw_topo(rng *r, char *spec, size_t len)
{
    static const char *node[] = {"", ",node=2,node_bw=200GB/s,node_hop_lat=40ns", ",node=4"};
    /* hop_lat below is a function of sizes already drawn (0 to 300 ns), so
     * the cases stay those of the seed; the others take the default. */
    switch (pick(r, 5)) {
    case 0: { /* two-level Clos, maybe oversubscribed, maybe tapered */
        uint32_t m1 = 2 + pick(r, 7), m2 = 2 + pick(r, 7), w2 = 1 + pick(r, m1);
        snprintf(spec, len, "clos:down=%ux%u,up=1x%u,bw1=400Gbps,bw2=%uGbps,lat=1us%s", m1, m2, w2,
                 100 * (1 + pick(r, 8)), m1 % 2 == 0 ? node[pick(r, 2)] : "");
        break;
    }
    case 1: { /* three levels, several parents at level 1 */
        uint32_t m1 = 2 + pick(r, 4), m2 = 2 + pick(r, 3), m3 = 2 + pick(r, 3);
        snprintf(spec, len, "clos:down=%ux%ux%u,up=%ux%ux%u,lat=500ns,hop_lat=%uns,alpha=%uns", m1, m2, m3,
                 1 + pick(r, 2), 1 + pick(r, m1), 1 + pick(r, m2), 100 * ((m1 + m2 + m3) % 4), 100 * pick(r, 3));
        break;
    }
    case 2: { /* radix form */
        static const char *s[] = {"clos:hosts=96,radix=16,tiers=2,oversub=3", "clos:hosts=128,radix=16,tiers=2",
                                  "clos:hosts=96,radix=16,tiers=3", "clos:down=8x8x6,up=1x4x4,bw3=200Gbps",
                                  "torus:dims=8x8x5,wrap=1x1x0", "clos:down=8x8x6,up=2x4x2,node=8",
                                  "clos:down=8x8,up=1x4,node=8,rail=8", "clos:down=4x8x4,up=1x4x4,node=8,rail=4",
                                  "clos:down=8x4,up=1x4,node=8,nics=4,rail=4,bw=100Gbps",
                                  "clos:down=4x8x2,up=1x2x2,node=8,gpus_per_nic=4,nic_bw=32GB/s,nic_lat=200ns"};
        snprintf(spec, len, "%s", s[pick(r, 10)]);
        break;
    }
    case 3: { /* torus / mesh 2D */
        uint32_t a = 2 + pick(r, 6), b = 2 + pick(r, 6);
        snprintf(spec, len, "torus:dims=%ux%u,wrap=%ux%u,lat=1us,hop_lat=%uns%s", a, b, pick(r, 2), pick(r, 2),
                 150 * ((a * b) % 3), a % 2 == 0 ? node[pick(r, 2)] : "");
        break;
    }
    default: { /* torus 3D */
        uint32_t a = 2 + pick(r, 4), b = 2 + pick(r, 4), c = 2 + pick(r, 3);
        snprintf(spec, len, "torus:dims=%ux%ux%u,lat=2us", a, b, c);
        break;
    }
    }
}

static bool near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-18;
}

/* Flow is not run where a step can hold more than FLOW_MAX_INFLIGHT
 * transfers (p times the smaller of the phase's fan-out and fan-in, a bound
 * on a step's transfers: an all-pairs step of more than 128 ranks):
 * max-min fairness re-solves the step's whole component at each transfer's
 * end, so such a step costs the square of its transfers (a direct
 * all-reduce of 217 ranks on a mesh: 161,165 rate recomputations, 90 s at
 * -O2, minutes under the sanitizer), for the same check (flow at least the
 * lower bound) that the other cases make. test_flow_skip and bench/ run
 * such steps. The cases drawn from the seeds are unchanged. */
#define FLOW_MAX_INFLIGHT 16384u

static bool flow_affordable(const tc_sched *s, uint32_t p)
{
    for (uint32_t i = 0; i < s->nphases; i++)
        if ((uint64_t)p * (s->phases[i].fanout < s->phases[i].fanin ? s->phases[i].fanout : s->phases[i].fanin) >
            FLOW_MAX_INFLIGHT)
            return false;
    return true;
}

/* A fully connected network drawn from r (its own seed stream: the draws
 * of draw_topo stay those of their seeds): 2 to 48 endpoints, a cable's
 * bandwidth, latency and hop latency, an alpha. */
static void draw_full(rng *r, char *spec, size_t len)
{
    snprintf(spec, len, "full:hosts=%u,bw=%uGbps,lat=%uns,hop_lat=%uns,alpha=%uns", 2 + pick(r, 47),
             100 * (1 + pick(r, 8)), 100 * (1 + pick(r, 20)), 50 * pick(r, 5), 200 * pick(r, 4));
}

static void one_case(uint64_t seed, void (*draw)(rng *, char *, size_t), int *flow_over, int *flow_skipped)
{
    rng r = {seed};
    char spec[256], what[512];
    draw(&r, spec, sizeof spec);
    tc_err err = {{0}};
    tc_topo *t = NULL;
    if (tc_topo_build(spec, &t, &err))
        fail_msg("seed %llu: %s: %s", (unsigned long long)seed, spec, err.msg);
    uint32_t n = t->n_endpoints;
    uint32_t p = 2 + pick(&r, (n < 300 ? n : 300) - 1);
    tc_op op = (tc_op)pick(&r, TC_OP_COUNT);
    double bytes = 1024.0 * pow(2, (double)(next(&r) % 1000) / 1000 * 20);
    bool degrade = pick(&r, 4) == 0;
    if (degrade)
        tc_topo_degrade_link(t, pick(&r, t->n_links), 0.1 + 0.8 * (double)(next(&r) % 1000) / 1000, &err);
    tc_job_place jp = {.policy = pick(&r, 5) == 0 ? TC_PLACE_RANDOM : TC_PLACE_FIRST, .ranks = p, .seed = seed};
    uint32_t *map = NULL, pp;
    assert_int_equal(tc_place_map(t, &jp, &map, &pp, &err), TC_OK);
    /* Every valid algorithm of the operation, one drawn. */
    tc_algo valid[TC_ALGO_COUNT];
    int nv = 0;
    for (int a = 0; a < TC_ALGO_AUTO; a++)
        if (tc_coll_valid(op, (tc_algo)a, p, t, NULL))
            valid[nv++] = (tc_algo)a;
    if (nv == 0) {
        free(map);
        tc_topo_free(t);
        return;
    }
    tc_coll_req req = {.op = op, .algo = valid[pick(&r, (uint32_t)nv)], .p = p, .bytes = bytes};
    if (pick(&r, 4) == 0)
        req.chunks = 1 + pick(&r, 8);
    if (op == TC_OP_BROADCAST || op == TC_OP_REDUCE)
        req.root = pick(&r, p);
    snprintf(what, sizeof what, "seed %llu: %s %s/%s p=%u bytes=%.17g chunks=%u root=%u %s%s", (unsigned long long)seed,
             spec, tc_op_name(op), tc_algo_name(req.algo), p, bytes, req.chunks, req.root,
             jp.policy == TC_PLACE_RANDOM ? "random placement" : "first endpoints", degrade ? ", a degraded link" : "");
    tc_sched *s = NULL;
    if (tc_coll_build(&req, t, &s, &err))
        fail_msg("%s: build: %s", what, err.msg);
    tc_routing routing = tc_eval_routing(TC_MODE_FORMULA, t, TC_ROUTE_DEFAULT);
    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = routing, .rank_map = map};
    double f, st, fl;
    if (tc_eval_formula(t, s, &o, &f, &err))
        fail_msg("%s: formula: %s", what, err.msg);
    o.mode = TC_MODE_STEPS;
    if (tc_eval_steps(t, s, &o, &st, &err))
        fail_msg("%s: steps: %s", what, err.msg);
    tc_flow_opts fo = {.routing = routing};
    bool run_flow = flow_affordable(s, p);
    if (!run_flow) {
        (*flow_skipped)++;
        printf("flow not run: %s\n", what);
        fl = st;
    } else if (tc_flow_time(t, s, map, &fo, &fl, &err))
        fail_msg("%s: flow: %s", what, err.msg);
    double lb = tc_lower_bound(t, op, p, bytes, map);
    if (!near(f, st, 1e-9))
        fail_msg("%s: formula %.17g != steps %.17g (routing %s)", what, f, st, tc_routing_name(routing, t));
    if (f < lb * (1 - 1e-9) || st < lb * (1 - 1e-9) || fl < lb * (1 - 1e-9))
        fail_msg("%s: below the lower bound %.17g: formula %.17g steps %.17g flow %.17g", what, lb, f, st, fl);
    if (fl > st * 1.01) {
        (*flow_over)++;
        printf("flow above steps: %s: flow %.6g steps %.6g (x%.3f)\n", what, fl, st, fl / st);
    }
    tc_sched_free(s);
    free(map);
    tc_topo_free(t);
}

static void formula_equals_steps_and_no_evaluator_beats_the_lower_bound(void **state)
{
    (void)state;
    int over = 0, skipped = 0;
    for (uint64_t i = 0; i < NCASES; i++)
        one_case(tc_mix64(SEED0 + i), draw_topo, &over, &skipped);
    printf("%d cases; flow above steps by more than 1%% in %d; flow not run in %d (a step of more than %u "
           "transfers possible)\n",
           NCASES, over, skipped, FLOW_MAX_INFLIGHT);
    assert_true(skipped * 20 <= NCASES);
}

/* The same invariant on fully connected networks, from a seed stream of
 * their own (every operation and valid algorithm, first or random
 * endpoints, a degraded link in some). */
#define SEED_FULL 20261207ull
#define NCASES_FULL 160

static void full_meshes_keep_the_invariant(void **state)
{
    (void)state;
    int over = 0, skipped = 0;
    for (uint64_t i = 0; i < NCASES_FULL; i++)
        one_case(tc_mix64(SEED_FULL + i), draw_full, &over, &skipped);
    printf("%d full-mesh cases; flow above steps by more than 1%% in %d; flow not run in %d\n", NCASES_FULL, over,
           skipped);
    assert_true(skipped * 20 <= NCASES_FULL);
}

/* The complete exchange's closed form (every rank to every other, D-mod-k)
 * against steps on full, oversubscribed, tapered and partly used Clos. */
static void complete_exchange_closed_form_equals_steps(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=8x8,up=1x8", "clos:down=8x8,up=1x2,bw2=100Gbps",
                                  "clos:down=4x4x4,up=1x2x2,lat=300ns", "clos:down=4x4x4,up=2x4x2",
                                  "clos:down=16x16,up=1x4,alpha=1us", "clos:hosts=96,radix=16,tiers=3"};
    /* sendrecv's direct step is no complete exchange but the shift by one,
     * whose closed form is compared here too */
    static const tc_op ops[] = {TC_OP_ALLTOALL, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER, TC_OP_ALLREDUCE,
                                TC_OP_SENDRECV};
    tc_err err = {{0}};
    int closed = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = NULL;
        assert_int_equal(tc_topo_build(specs[i], &t, &err), TC_OK);
        for (uint32_t p = 3; p <= t->n_endpoints; p += 1 + p / 3)
            for (int k = 0; k < 5; k++) {
                tc_coll_req req = {.op = ops[k], .algo = TC_ALGO_DIRECT, .p = p, .bytes = 1e6 + p};
                tc_sched *s = NULL;
                assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
                tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
                double f, st;
                tc_phase_eval pe[4];
                assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &f, &err), TC_OK);
                closed += pe[0].closed_form;
                o.mode = TC_MODE_STEPS;
                assert_int_equal(tc_eval_steps(t, s, &o, &st, &err), TC_OK);
                if (!near(f, st, 1e-9))
                    fail_msg("%s p=%u %s: formula %.17g, steps %.17g", specs[i], p, tc_op_name(ops[k]), f, st);
                tc_sched_free(s);
            }
        tc_topo_free(t);
    }
    assert_true(closed > 0); /* the closed form, not the graph, was compared */
}

/* The same on tori and meshes under both dimension orders: rings of odd and
 * even size (half way round: k/2 odd and even), lines, size 2, mixed
 * wraparound, one to four dimensions, every rank. */
static void torus_complete_exchange_closed_form_equals_steps(void **state)
{
    (void)state;
    static const char *specs[] = {"torus:dims=4", "torus:dims=5", "torus:dims=6", "torus:dims=2x2", "torus:dims=4x4",
                                  "torus:dims=6x10", "torus:dims=3x8,wrap=0x1", "torus:dims=7x4,wrap=1x0,lat=300ns",
                                  "torus:dims=2x7x6,wrap=1x0x1", "torus:dims=8x6x5,alpha=1us", "torus:dims=3x4x2x5",
                                  "torus:dims=12x9,wrap=0x0"};
    static const tc_routing routes[] = {TC_ROUTE_DOR, TC_ROUTE_DOR_POSITIVE};
    /* sendrecv: the shift by one, as above */
    static const tc_op ops[] = {TC_OP_ALLTOALL, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER, TC_OP_ALLREDUCE,
                                TC_OP_SENDRECV};
    tc_err err = {{0}};
    int closed = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = NULL;
        assert_int_equal(tc_topo_build(specs[i], &t, &err), TC_OK);
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 5; k++) {
                tc_coll_req req = {.op = ops[k], .algo = TC_ALGO_DIRECT, .p = t->n_endpoints, .bytes = 1e6 + 7};
                tc_sched *s = NULL;
                assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
                tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = routes[r]};
                double f, st;
                tc_phase_eval pe[4];
                assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &f, &err), TC_OK);
                closed += pe[0].closed_form;
                o.mode = TC_MODE_STEPS;
                assert_int_equal(tc_eval_steps(t, s, &o, &st, &err), TC_OK);
                if (!near(f, st, 1e-9))
                    fail_msg("%s %s %s: formula %.17g, steps %.17g", specs[i], tc_routing_name(routes[r], t),
                             tc_op_name(ops[k]), f, st);
                tc_sched_free(s);
            }
        tc_topo_free(t);
    }
    assert_true(closed > 0);
}

/* Binomial trees on whole subtrees take short cuts in the partial shift's
 * closed form (whole groups moving by whole groups, or a phase inside one
 * group); against steps with aligned and unaligned roots and rank counts. */
static void binomial_closed_form_equals_steps(void **state)
{
    (void)state;
    static const char *specs[] = {"clos:down=16x16x4,up=1x4x4", "clos:down=8x8x8,up=1x8x2,bw2=100Gbps",
                                  "clos:down=4x4x4,up=1x3x4,lat=300ns", "clos:down=8x4,up=1x4,node=4"};
    static const tc_op ops[] = {TC_OP_BROADCAST, TC_OP_REDUCE, TC_OP_ALLREDUCE};
    static const uint32_t ps[] = {16, 32, 48, 64, 96, 128, 256, 512};
    static const uint32_t roots[] = {0, 16, 5};
    tc_err err = {{0}};
    int closed = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        tc_topo *t = NULL;
        assert_int_equal(tc_topo_build(specs[i], &t, &err), TC_OK);
        for (size_t q = 0; q < sizeof ps / sizeof *ps && ps[q] <= t->n_endpoints; q++)
            for (int k = 0; k < 6; k++)
                for (int r = 0; r < 3; r++) {
                    /* The highbit tree's levels are shifts from a range of
                     * senders (closed forms); MPICH's lowbit tree's are
                     * strided (the routed graph): both equal steps. */
                    tc_coll_req req = {.op = ops[k % 3], .algo = TC_ALGO_BINOMIAL, .p = ps[q], .bytes = 3e6 + 1,
                                       .root = roots[r] % ps[q],
                                       .variant = k < 3 ? TC_VARIANT_HIGHBIT : TC_VARIANT_LOWBIT};
                    tc_sched *s = NULL;
                    assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
                    tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
                    double f, st;
                    tc_phase_eval *pe = calloc(s->nphases, sizeof *pe);
                    assert_non_null(pe);
                    assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &f, &err), TC_OK);
                    for (uint32_t j = 0; j < s->nphases; j++)
                        closed += pe[j].closed_form;
                    free(pe);
                    o.mode = TC_MODE_STEPS;
                    assert_int_equal(tc_eval_steps(t, s, &o, &st, &err), TC_OK);
                    if (!near(f, st, 1e-9))
                        fail_msg("%s p=%u root=%u %s %s: formula %.17g, steps %.17g", specs[i], ps[q], req.root,
                                 tc_op_name(ops[k % 3]), tc_variant_name(req.variant), f, st);
                    tc_sched_free(s);
                }
        tc_topo_free(t);
    }
    assert_true(closed > 0);
}

/* Found by review: a XOR sent by part of the ranks (rd's fold) is not an
 * exact closed form; the lower bound with degraded links counts what every
 * rank must move, one direction at a time, and a cut in the direction the
 * operation needs. Each case: formula = steps, and every evaluator >= bound. */
static void review_regressions(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        tc_op op;
        tc_algo algo;
        uint32_t p, root;
        double bytes;
        uint32_t deg[2];
        int ndeg;
    } cases[] = {
        {"clos:down=3x8,up=1x1,bw1=200Gbps,bw2=800Gbps,lat1=500ns,lat2=1700ns,alpha=100ns", TC_OP_ALLREDUCE,
         TC_ALGO_RD, 5, 0, 7131.55, {0, 0}, 0},
        {"clos:down=3x3x2,up=1x1x1", TC_OP_ALLREDUCE, TC_ALGO_RHD, 18, 0, 1 << 26, {0, 0}, 0},
        {"clos:down=8x2,up=1x2,bw=400Gbps,lat=1us", TC_OP_ALLREDUCE, TC_ALGO_RD, 5, 0, 1 << 26, {2, 2}, 1},
        {"clos:down=8x2,up=1x2,bw=400Gbps,lat=1us", TC_OP_BROADCAST, TC_ALGO_RING, 8, 0, 1 << 26, {14, 1}, 2},
        {"clos:down=8x2,up=1x2,bw=400Gbps,lat=1us", TC_OP_REDUCE, TC_ALGO_RING, 8, 0, 1 << 26, {15, 0}, 2},
        {"clos:down=2x2x3,up=1x1x1,bw1=200Gbps,bw2=500Gbps,bw3=500Gbps,lat1=1800ns,lat2=1000ns,lat3=1000ns",
         TC_OP_REDUCE, TC_ALGO_RING, 5, 4, 1 << 28, {37, 37}, 1},
    };
    tc_err err = {{0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo *t = NULL;
        assert_int_equal(tc_topo_build(cases[i].spec, &t, &err), TC_OK);
        for (int k = 0; k < cases[i].ndeg; k++)
            assert_int_equal(tc_topo_degrade_link(t, cases[i].deg[k], 0.01, &err), TC_OK);
        tc_coll_req req = {.op = cases[i].op, .algo = cases[i].algo, .p = cases[i].p, .bytes = cases[i].bytes,
                           .root = cases[i].root};
        tc_sched *s = NULL;
        assert_int_equal(tc_coll_build(&req, t, &s, &err), TC_OK);
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
        double f, st, fl;
        assert_int_equal(tc_eval_formula(t, s, &o, &f, &err), TC_OK);
        o.mode = TC_MODE_STEPS;
        assert_int_equal(tc_eval_steps(t, s, &o, &st, &err), TC_OK);
        tc_flow_opts fo = {.routing = TC_ROUTE_DMODK};
        assert_int_equal(tc_flow_time(t, s, NULL, &fo, &fl, &err), TC_OK);
        double lb = tc_lower_bound(t, req.op, req.p, req.bytes, NULL);
        if (!near(f, st, 1e-9) || lb > fmin(f, fmin(st, fl)) * (1 + 1e-9))
            fail_msg("case %zu (%s): formula %.9g steps %.9g flow %.9g bound %.9g", i, cases[i].spec, f, st, fl, lb);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

/* NCCL's algorithms on random GPU clusters: 1 to 8 nodes of 4 or 8 GPUs,
 * a NIC per GPU or shared, rails or not, NVSwitches that reduce or not;
 * all-reduce, all-gather, reduce-scatter; every NCCL algorithm valid there
 * (nccl-ring, nccl-tree, nccl-nvls, nccl-nvls-tree, nccl) with random
 * channels; sizes from 1 KiB to 16 MiB. Formula equals steps, no evaluator
 * beats the lower bound; flow stays within 15% of steps for NVLS and
 * NVLSTree, within 1.6x for the others (steps' bulk-synchronous steps are
 * slower than flow's pipelines on rings, and the tree's up and down in one
 * lane run up to about 1.5x slower in flow, docs/VALIDATION.md; the worst
 * ratio is printed). */
/* sendrecv (nccl-tests' sendrecv_perf) on random GPU clusters drawn as
 * below: nccl (NCCL's grouped point-to-point, PXN where it applies) and
 * direct through tc_evaluate, formula equal to steps, every mode at least
 * the lower bound, flow within 1.6x of steps (the NCCL cases' bound). */
static void sendrecv_agrees_on_random_gpu_clusters(void **state)
{
    (void)state;
    int cases = 0;
    double worst = 1;
    for (uint64_t i = 0; i < NCCL_DRAWS; i++) {
        rng r = {tc_mix64(SEED0 ^ 0x5e4d ^ i)};
        uint32_t G = pick(&r, 2) ? 8 : 4, nodes = 1 + pick(&r, 8), K = pick(&r, 2) ? G : G / 2;
        char spec[256];
        snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,node=%u%s%s,arch=hopper", nodes, K, nodes, G,
                 K < G ? ",nics=" : "", K < G ? (G == 8 ? "4" : "2") : "");
        if (pick(&r, 2))
            snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ",rail=%u", K);
        tc_err err = {{0}};
        tc_topo *t = NULL;
        if (tc_topo_build(spec, &t, &err))
            fail_msg("%s: %s", spec, err.msg);
        uint32_t p = G * (1 + pick(&r, nodes));
        tc_algo a = pick(&r, 3) ? TC_ALGO_NCCL : TC_ALGO_DIRECT;
        double bytes = 4.0 * pow(2, (double)pick(&r, 29)) + 4 * pick(&r, 1000);
        tc_coll_req req = {.op = TC_OP_SENDRECV, .algo = a, .p = p, .bytes = bytes, .elt = 4,
                           .channels = pick(&r, 3) * 4};
        char what[512];
        snprintf(what, sizeof what, "%s sendrecv/%s p=%u bytes=%.17g channels=%u", spec, tc_algo_name(a), p, bytes,
                 req.channels);
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
        tc_result rf, rs, rl;
        if (tc_evaluate(t, &req, &o, &rf, &err))
            fail_msg("%s: formula: %s", what, err.msg);
        o.mode = TC_MODE_STEPS;
        if (tc_evaluate(t, &req, &o, &rs, &err))
            fail_msg("%s: steps: %s", what, err.msg);
        o.mode = TC_MODE_FLOW;
        if (tc_evaluate(t, &req, &o, &rl, &err))
            fail_msg("%s: flow: %s", what, err.msg);
        if (!near(rf.time_s, rs.time_s, 1e-9))
            fail_msg("%s: formula %.17g != steps %.17g", what, rf.time_s, rs.time_s);
        double lb = rs.lower_bound_s;
        if (rf.time_s < lb * (1 - 1e-9) || rl.time_s < lb * (1 - 1e-9))
            fail_msg("%s: below the lower bound %.17g: formula %.17g flow %.17g", what, lb, rf.time_s, rl.time_s);
        double ratio = fmax(rl.time_s / rs.time_s, rs.time_s / rl.time_s);
        if (ratio > 1.6)
            fail_msg("%s: flow %.6g s against steps %.6g s", what, rl.time_s, rs.time_s);
        worst = fmax(worst, ratio);
        cases++;
        tc_topo_free(t);
    }
    printf("%d sendrecv cases; flow and steps differ by at most x%.3f\n", cases, worst);
    assert_int_equal(cases, NCCL_DRAWS);
}

static void nccl_algorithms_agree_on_random_gpu_clusters(void **state)
{
    (void)state;
    static const tc_algo algos[] = {TC_ALGO_NCCL_RING,         TC_ALGO_NCCL_TREE,
                                    TC_ALGO_NCCL_NVLS,         TC_ALGO_NCCL_NVLS_TREE,
                                    TC_ALGO_NCCL,              TC_ALGO_NCCL_COLLNET_CHAIN,
                                    TC_ALGO_NCCL_COLLNET_DIRECT};
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER};
    int cases = 0, nvls = 0;
    double worst = 1;
    for (uint64_t i = 0; i < NCCL_DRAWS; i++) {
        rng r = {tc_mix64(SEED0 ^ 0x5eed ^ i)};
        uint32_t G = pick(&r, 2) ? 8 : 4, nodes = 1 + pick(&r, 8), K = pick(&r, 2) ? G : G / 2;
        char spec[256];
        snprintf(spec, sizeof spec, "clos:down=%ux%u,up=1x%u,node=%u%s%s%s,arch=hopper", nodes, K, nodes, G,
                 K < G ? ",nics=" : "", K < G ? (G == 8 ? "4" : "2") : "", pick(&r, 3) ? ",node_reduce=1" : "");
        if (pick(&r, 2))
            snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ",rail=%u", K);
        if (pick(&r, 2))
            snprintf(spec + strlen(spec), sizeof spec - strlen(spec), ",sharp=1");
        tc_err err = {{0}};
        tc_topo *t = NULL;
        if (tc_topo_build(spec, &t, &err))
            fail_msg("%s: %s", spec, err.msg);
        uint32_t p = G * (1 + pick(&r, nodes));
        tc_op op = ops[pick(&r, 3)];
        tc_algo a = algos[pick(&r, 7)];
        if (!tc_coll_valid(op, a, p, t, NULL)) {
            tc_topo_free(t);
            continue;
        }
        double bytes = 1024.0 * pow(2, (double)pick(&r, 15)) + 4 * p * pick(&r, 1000);
        tc_coll_req req = {.op = op, .algo = a, .p = p, .bytes = bytes, .elt = 4, .channels = pick(&r, 3) * 4};
        if (tc_coll_round(&req, &err)) {
            tc_topo_free(t);
            continue;
        }
        char what[512];
        snprintf(what, sizeof what, "%s %s/%s p=%u bytes=%.17g channels=%u", spec, tc_op_name(op), tc_algo_name(a), p,
                 req.bytes, req.channels);
        tc_eval_opts o = {.mode = TC_MODE_FORMULA, .routing = TC_ROUTE_DMODK};
        tc_result rf, rs, rl;
        if (tc_evaluate(t, &req, &o, &rf, &err))
            fail_msg("%s: formula: %s", what, err.msg);
        o.mode = TC_MODE_STEPS;
        if (tc_evaluate(t, &req, &o, &rs, &err))
            fail_msg("%s: steps: %s", what, err.msg);
        o.mode = TC_MODE_FLOW;
        if (tc_evaluate(t, &req, &o, &rl, &err))
            fail_msg("%s: flow: %s", what, err.msg);
        if (!near(rf.time_s, rs.time_s, 1e-9))
            fail_msg("%s: formula %.17g != steps %.17g", what, rf.time_s, rs.time_s);
        double lb = rs.lower_bound_s;
        if (rf.time_s < lb * (1 - 1e-9) || rl.time_s < lb * (1 - 1e-9))
            fail_msg("%s: below the lower bound %.17g: formula %.17g flow %.17g", what, lb, rf.time_s, rl.time_s);
        bool in_net = rs.nccl_impl == TC_ALGO_NCCL_NVLS || rs.nccl_impl == TC_ALGO_NCCL_NVLS_TREE ||
                      rs.nccl_impl == TC_ALGO_NCCL_COLLNET_CHAIN || rs.nccl_impl == TC_ALGO_NCCL_COLLNET_DIRECT;
        double tol = in_net ? 1.15 : 1.6, ratio = fmax(rl.time_s / rs.time_s, rs.time_s / rl.time_s);
        if (ratio > tol)
            fail_msg("%s: flow %.6g s against steps %.6g s", what, rl.time_s, rs.time_s);
        worst = fmax(worst, ratio);
        nvls += in_net;
        cases++;
        tc_topo_free(t);
    }
    printf("%d NCCL cases (%d in-network: NVLS, NVLSTree, CollNet); flow and steps differ by at most x%.3f\n", cases,
           nvls, worst);
    assert_true(cases >= NCCL_DRAWS / 3 && nvls >= NCCL_DRAWS / 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(complete_exchange_closed_form_equals_steps),
        cmocka_unit_test(torus_complete_exchange_closed_form_equals_steps),
        cmocka_unit_test(binomial_closed_form_equals_steps),
        cmocka_unit_test(review_regressions),
        cmocka_unit_test(formula_equals_steps_and_no_evaluator_beats_the_lower_bound),
        cmocka_unit_test(full_meshes_keep_the_invariant),
        cmocka_unit_test(nccl_algorithms_agree_on_random_gpu_clusters),
        cmocka_unit_test(sendrecv_agrees_on_random_gpu_clusters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
