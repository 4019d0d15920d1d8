/*
 * test_full.c - the fully connected topology (full:hosts=N): its links and
 * routes, its figures, bad specs, failures (direct and detour), hand values
 * in the three evaluators, and randomized agreement between them.
 *
 * Hand values use bw=100GB/s links and lat=1us unless said.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/cost.h"
#include "topocc/eval.h"
#include "build_helpers.h"

static void assert_rel(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%s: got %.12g, expected %.12g (rel %.3g)", what, got, want, fabs(got - want) / fabs(want));
}

static double eval_mode(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes, tc_mode mode,
                        tc_routing r)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_eval_opts o = {.mode = mode, .routing = r};
    tc_result res;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &res, &err) != TC_OK)
        fail_msg("%s/%s p=%u mode %d: %s", tc_op_name(op), tc_algo_name(algo), p, (int)mode, err.msg);
    return res.time_s;
}

static void bad_spec(const char *spec, const char *needle)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_EINVAL)
        fail_msg("%s: expected TC_EINVAL", spec);
    assert_null(t);
    if (!strstr(err.msg, needle))
        fail_msg("%s: message '%s' lacks '%s'", spec, err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
}

/* Every ordered pair has one link of its own, from a to b, the reverse its
 * ^ 1; the route is that link; the figures follow from the pairs. */
static void links_routes_and_figures(void **state)
{
    (void)state;
    for (uint32_t n = 2; n <= 9; n++) {
        char spec[96];
        snprintf(spec, sizeof spec, "full:hosts=%u,bw=100GB/s,lat=1us,alpha=0", n);
        tc_topo *t = topo(spec);
        assert_int_equal(t->kind, TC_TOPO_FULL);
        assert_int_equal(t->n_endpoints, n);
        assert_int_equal(t->n_switches, 0);
        assert_int_equal(t->n_links, n * (n - 1));
        uint8_t *seen = calloc(t->n_links, 1);
        assert_non_null(seen);
        uint32_t path[4];
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = 0; b < n; b++) {
                uint32_t l = tc_topo_full_link(t, a, b);
                if (a == b) {
                    assert_int_equal(l, UINT32_MAX);
                    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, a, b, path), 0);
                    continue;
                }
                assert_true(l < t->n_links);
                assert_int_equal(t->links[l].src, a);
                assert_int_equal(t->links[l].dst, b);
                assert_int_equal(l ^ 1u, tc_topo_full_link(t, b, a));
                assert_int_equal(seen[l], 0);
                seen[l] = 1;
                assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, a, b, path), 1);
                assert_int_equal(path[0], l);
                assert_rel(t->links[l].bw, 100e9, 1e-15, "link bw");
                assert_rel(t->links[l].lat, 1e-6, 1e-15, "link lat (hop_lat 0 by default)");
            }
        free(seen);
        tc_topo_info in;
        tc_topo_get_info(t, &in);
        assert_int_equal(in.diameter, 1);
        assert_int_equal(in.ports_per_endpoint, n - 1);
        assert_rel(in.injection_Bps, (n - 1) * 100e9, 1e-15, "injection");
        assert_rel(in.bisection_Bps, (double)(n / 2) * (n - n / 2) * 100e9, 1e-15, "bisection");
        assert_rel(in.min_latency_s, 1e-6, 1e-15, "min latency");
        assert_rel(in.max_latency_s, 1e-6, 1e-15, "max latency");
        assert_int_equal(tc_topo_max_path(t), 1);
        /* the canonical spec builds the same network */
        tc_topo *u = topo(t->spec);
        assert_string_equal(u->spec, t->spec);
        assert_int_equal(u->n_links, t->n_links);
        tc_topo_free(u);
        tc_topo_free(t);
    }
    /* hop_lat= is the endpoint a link enters; node= puts node switches in */
    tc_topo *t = topo("full:hosts=8,lat=1us,hop_lat=200ns,node=4");
    assert_rel(t->links[0].lat, 1.2e-6, 1e-12, "lat + hop_lat");
    uint32_t path[4];
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 3, path), 2); /* one node: through its switch */
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 5, path), 1);
    assert_int_equal(path[0], tc_topo_full_link(t, 0, 5));
    assert_int_equal(tc_topo_max_path(t), 2);
    assert_string_equal(tc_topo_kind_name(t->kind), "full");
    tc_topo_free(t);
}

static void bad_specs_and_refusals(void **state)
{
    (void)state;
    bad_spec("full:hosts=1", "at least 2");
    bad_spec("full:hosts=0", "hosts");
    bad_spec("full:hosts=1025", "at most 1024");
    bad_spec("full:hosts=100000", "at most 1024");
    bad_spec("full:bw=100GB/s", "needs hosts=N");
    bad_spec("full:hosts=8,dims=2x4", "unknown key 'dims'");
    bad_spec("full:hosts=8,rail=2,node=4", "unknown key 'rail'");
    bad_spec("full:hosts=8,bw=fast", "bw");
    bad_spec("full:hosts=8,node=3", "does not divide");
    bad_spec("mesh:hosts=8", "full:hosts=8");
    tc_topo *t = topo("full:hosts=1024");
    assert_int_equal(t->n_links, 1024u * 1023u);
    tc_topo_free(t);

    t = topo("full:hosts=8");
    tc_err err = {{0}};
    tc_routing r;
    assert_int_equal(tc_routing_parse("direct", t, &r, &err), TC_OK);
    assert_int_equal(r, TC_ROUTE_DIRECT);
    assert_int_equal(tc_routing_parse("detour", t, &r, &err), TC_OK);
    assert_int_equal(tc_routing_parse("dor", t, &r, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "direct or detour"));
    assert_int_equal(tc_routing_parse("ecmp", t, &r, &err), TC_EINVAL);
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, t), "direct");
    assert_int_equal(tc_topo_fail_switch(t, 3, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "no switches"));
    tc_fail_random fr = {.switches = 1, .seed = 1};
    tc_fail_drawn d;
    assert_int_equal(tc_topo_fail_random(t, &fr, 0, &d, &err), TC_EINVAL);
    assert_int_equal(t->n_failed, 0);
    tc_bom b;
    assert_int_equal(tc_bom_build(t, NULL, &b, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "full mesh"));
    /* NCCL's model needs NICs between nodes: refused; the MPI-style ones run */
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL, 8, t, &err));
    assert_non_null(strstr(err.msg, "no NICs"));
    assert_false(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_NCCL_RING, 8, t, &err));
    assert_true(tc_coll_valid(TC_OP_ALLREDUCE, TC_ALGO_RING, 8, t, &err));
    tc_topo *other = topo("clos:down=4x2,up=1x2");
    assert_int_equal(tc_routing_parse("direct", other, &r, &err), TC_EINVAL);
    tc_topo_free(other);
    tc_topo_free(t);
    bad_spec("multidc:pods=2,pod=full,hosts=8,wan_bw=400Gbps,wan_lat=1ms", "pod=clos or pod=torus");
}

/* A failed cable: direct cuts its pair off, detour goes through the first
 * endpoint after the destination whose two links survive; a failed
 * endpoint is passed over; where nothing survives, no route. */
static void failures_detour_or_cut_off(void **state)
{
    (void)state;
    tc_topo *t = topo("full:hosts=6,bw=100GB/s,lat=1us");
    tc_err err = {{0}};
    uint32_t path[4], l01 = tc_topo_full_link(t, 0, 1);
    assert_int_equal(tc_topo_fail_link(t, l01 & ~1u, true, &err), TC_OK);
    assert_int_equal(t->n_failed, 2);
    assert_int_equal(tc_topo_max_path(t), 2);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DIRECT, 0, 1, path), TC_NO_ROUTE);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DIRECT, 1, 0, path), TC_NO_ROUTE);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DIRECT, 0, 2, path), 1);
    assert_string_equal(tc_routing_name(TC_ROUTE_DEFAULT, t), "detour");
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 1, path), 2);
    assert_int_equal(path[0], tc_topo_full_link(t, 0, 2));
    assert_int_equal(path[1], tc_topo_full_link(t, 2, 1));
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 1, 0, path), 2);
    assert_int_equal(path[0], tc_topo_full_link(t, 1, 2)); /* after 0 comes 1 (the source), then 2 */
    /* endpoint 2 fails: the detour moves to 3 */
    assert_int_equal(tc_topo_fail_host(t, 2, &err), TC_OK);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 0, 1, path), 2);
    assert_int_equal(path[0], tc_topo_full_link(t, 0, 3));
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 0, 2, path), TC_NO_ROUTE);
    /* 0's cables to 3, 4 and 5 fail too: 0 reaches 1 no way */
    for (uint32_t k = 3; k < 6; k++)
        assert_int_equal(tc_topo_fail_link(t, tc_topo_full_link(t, 0, k) & ~1u, true, &err), TC_OK);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 0, 1, path), TC_NO_ROUTE);
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DETOUR, 3, 4, path), 1);
    /* the bisection as is: halves {0,1,2} and {3,4,5}, 9 cables across,
     * of which 0's three and 2's three failed: 1's three are left */
    tc_topo_info in;
    tc_topo_get_info_as_is(t, &in);
    assert_rel(in.bisection_Bps, 3 * 100e9, 1e-12, "bisection as is");
    tc_topo_free(t);

    /* Direct all-to-all on 8 with cable 0-1 failed, detour: 0 -> 1 goes
     * 0 -> 2 -> 1 and 1 -> 0 goes 1 -> 2 -> 0, so links 0->2, 2->1, 1->2
     * and 2->0 carry two flows each: 2 lat + 2 (S/8) / bw in steps and
     * flow (flow: the detoured flow's second link has its share too). */
    t = topo("full:hosts=8,bw=100GB/s,lat=1us,alpha=0");
    assert_int_equal(tc_topo_fail_link(t, tc_topo_full_link(t, 0, 1) & ~1u, true, &err), TC_OK);
    double S = 64.0 * 1048576;
    double want = 2e-6 + 2 * (S / 8) / 100e9;
    assert_rel(eval_mode(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT), want, 1e-12,
               "detoured all-to-all, steps");
    assert_rel(eval_mode(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT), want, 1e-12,
               "detoured all-to-all, formula (the routed graph)");
    assert_rel(eval_mode(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, TC_MODE_FLOW, TC_ROUTE_DEFAULT), want, 1e-9,
               "detoured all-to-all, flow");
    tc_coll_req req = {.op = TC_OP_ALLTOALL, .algo = TC_ALGO_DIRECT, .p = 8, .bytes = S};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .routing = TC_ROUTE_DIRECT};
    tc_result res;
    assert_int_equal(tc_evaluate(t, &req, &o, &res, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--routing detour"));
    tc_topo_free(t);
}

/* Hand values: ring all-reduce on 8 is 2 (p - 1) steps of S / p, each on
 * its own link; direct all-to-all sends every pair at once, each on its
 * own link: (p - 1) alpha (the sender's messages, one after another) +
 * lat + (S / p) / bw; the same in the three evaluators, in closed form. */
static void hand_values_in_every_evaluator(void **state)
{
    (void)state;
    const tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS, TC_MODE_FLOW};
    double S = 64.0 * 1048576, B = 100e9, lat = 1e-6, a = 0.5e-6;
    tc_topo *t = topo("full:hosts=8,bw=100GB/s,lat=1us,alpha=500ns");
    char what[96];
    for (int m = 0; m < 3; m++) {
        snprintf(what, sizeof what, "ring all-reduce, mode %d", m);
        assert_rel(eval_mode(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, S, modes[m], TC_ROUTE_DEFAULT),
                   14 * (a + lat + S / 8 / B), 1e-9, what);
        snprintf(what, sizeof what, "direct all-to-all, mode %d", m);
        assert_rel(eval_mode(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 8, S, modes[m], TC_ROUTE_DEFAULT),
                   7 * a + lat + S / 8 / B, 1e-9, what);
        snprintf(what, sizeof what, "pairwise all-to-all, mode %d", m);
        assert_rel(eval_mode(t, TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 8, S, modes[m], TC_ROUTE_DEFAULT),
                   7 * (a + lat + S / 8 / B), 1e-9, what);
        /* a direct all-reduce (reduce-scatter and all-gather by complete
         * exchange): two steps of every pair at once, S / p each */
        snprintf(what, sizeof what, "direct all-reduce, mode %d", m);
        assert_rel(eval_mode(t, TC_OP_ALLREDUCE, TC_ALGO_DIRECT, 8, S, modes[m], TC_ROUTE_DEFAULT),
                   2 * (7 * a + lat + S / 8 / B), 1e-9, what);
    }
    /* the closed form is taken for every phase of these */
    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_DIRECT, TC_ALGO_PAIRWISE, TC_ALGO_RHD};
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        tc_op op = algos[i] == TC_ALGO_PAIRWISE ? TC_OP_ALLTOALL : TC_OP_ALLREDUCE;
        tc_sched *s = sched(t, op, algos[i], 8, S);
        tc_phase_eval *pe = calloc(s->nphases, sizeof *pe);
        assert_non_null(pe);
        tc_eval_opts o = {.mode = TC_MODE_FORMULA};
        double v;
        tc_err err = {{0}};
        assert_int_equal(tc_eval_formula_phases(t, s, &o, pe, &v, &err), TC_OK);
        for (uint32_t k = 0; k < s->nphases; k++)
            if (!pe[k].closed_form)
                fail_msg("%s phase %u: not in closed form", tc_algo_name(algos[i]), k);
        free(pe);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random N, ranks, sizes, link parameters, operations and algorithms:
 * formula equals steps (its closed forms are exact, the rest is the steps
 * path); flow never exceeds steps (no barrier between steps, max-min
 * shares) and equals it where every step of every rank is one round of
 * equal transfers on links of their own (ring reduce-scatter, all-gather
 * and all-reduce, direct and pairwise all-to-all); the lower bound is
 * below all three. */
static void randomized_agreement(void **state)
{
    (void)state;
    static const tc_op ops[] = {TC_OP_ALLREDUCE, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER, TC_OP_ALLTOALL,
                                TC_OP_BROADCAST, TC_OP_REDUCE};
    static const tc_algo algos[] = {TC_ALGO_RING,  TC_ALGO_BIRING,   TC_ALGO_RD,       TC_ALGO_RHD,
                                    TC_ALGO_BINOMIAL, TC_ALGO_DBTREE, TC_ALGO_BRUCK, TC_ALGO_PAIRWISE,
                                    TC_ALGO_DIRECT, TC_ALGO_SWING,  TC_ALGO_SCATTER_RING, TC_ALGO_SEGRING};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int checked = 0, equal = 0;
    for (int trial = 0; trial < 60; trial++) {
        uint32_t n = 2 + (uint32_t)(rng_next(&seed) % 15);
        uint32_t p = 2 + (uint32_t)(rng_next(&seed) % (n - 1));
        double bw = 10e9 * (1 + rng_next(&seed) % 40), lat = 1e-7 * (1 + rng_next(&seed) % 30);
        double alpha = 1e-7 * (rng_next(&seed) % 20), hop = rng_next(&seed) % 2 ? 0 : 3e-8;
        double bytes = (double)(1024 + rng_next(&seed) % (64u << 20));
        char spec[160];
        snprintf(spec, sizeof spec, "full:hosts=%u,bw=%.17gGB/s,lat=%.17gns,hop_lat=%.17gns,alpha=%.17gns", n, bw / 1e9,
                 lat * 1e9, hop * 1e9, alpha * 1e9);
        tc_topo *t = topo(spec);
        for (int k = 0; k < 4; k++) {
            tc_op op = ops[rng_next(&seed) % (sizeof ops / sizeof *ops)];
            tc_algo algo = algos[rng_next(&seed) % (sizeof algos / sizeof *algos)];
            tc_err err = {{0}};
            if (!tc_coll_valid(op, algo, p, t, &err))
                continue;
            double f = eval_mode(t, op, algo, p, bytes, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
            double s = eval_mode(t, op, algo, p, bytes, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
            double fl = eval_mode(t, op, algo, p, bytes, TC_MODE_FLOW, TC_ROUTE_DEFAULT);
            char what[256];
            snprintf(what, sizeof what, "%s %s/%s p=%u %.0f B", spec, tc_op_name(op), tc_algo_name(algo), p, bytes);
            assert_rel(f, s, 1e-9, what);
            if (fl > s * (1 + 1e-9))
                fail_msg("%s: flow %.12g above steps %.12g", what, fl, s);
            bool same = (algo == TC_ALGO_RING && (op == TC_OP_ALLREDUCE || op == TC_OP_REDUCESCATTER ||
                                                  op == TC_OP_ALLGATHER)) ||
                        (op == TC_OP_ALLTOALL && (algo == TC_ALGO_DIRECT || algo == TC_ALGO_PAIRWISE));
            if (same) {
                assert_rel(fl, s, 1e-9, what);
                equal++;
            }
            double lb = tc_lower_bound(t, op, p, bytes, NULL);
            if (lb > fl * (1 + 1e-9))
                fail_msg("%s: lower bound %.12g above flow %.12g", what, lb, fl);
            checked++;
        }
        tc_topo_free(t);
    }
    /* the draw covers enough of both kinds of check */
    assert_true(checked >= 100);
    assert_true(equal >= 10);
}

/* With scale-up nodes the closed form steps aside (a node's pairs go
 * through its switch): formula still equals steps, on the routed graph. */
static void nodes_fall_back_to_the_routed_graph(void **state)
{
    (void)state;
    tc_topo *t = topo("full:hosts=8,bw=100GB/s,lat=1us,alpha=0,node=4,node_bw=200GB/s,node_lat=300ns");
    double S = 8.0 * 1048576;
    static const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_DIRECT, TC_ALGO_RHD};
    for (size_t i = 0; i < 3; i++) {
        double f = eval_mode(t, TC_OP_ALLREDUCE, algos[i], 8, S, TC_MODE_FORMULA, TC_ROUTE_DEFAULT);
        double s = eval_mode(t, TC_OP_ALLREDUCE, algos[i], 8, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT);
        assert_rel(f, s, 1e-12, tc_algo_name(algos[i]));
    }
    /* ring all-reduce: the slowest step of the ring crosses a direct link
     * (3 -> 4 and 7 -> 0), the others a node's: 1us + S/8 / 100GB/s binds */
    assert_rel(eval_mode(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, S, TC_MODE_STEPS, TC_ROUTE_DEFAULT),
               14 * (1e-6 + S / 8 / 100e9), 1e-12, "ring with nodes");
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(links_routes_and_figures),
        cmocka_unit_test(bad_specs_and_refusals),
        cmocka_unit_test(failures_detour_or_cut_off),
        cmocka_unit_test(hand_values_in_every_evaluator),
        cmocka_unit_test(randomized_agreement),
        cmocka_unit_test(nodes_fall_back_to_the_routed_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
