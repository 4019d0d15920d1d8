/*
 * test_flow_deps.c - when a transfer may start in the flow evaluator
 * (tc_flow_deps, docs/MODEL.md "Dependencies per rank"): auto sends a
 * message of at most the eager limit as fifo does and a larger one as
 * rendezvous does; the limit is inclusive; a schedule whose phases carry
 * sizes on both sides of the limit differs from both; the scenario keeps
 * the limit through JSON and refuses it where it does not apply.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "topocc/flow.h"
#include "topocc/scenario.h"
#include "scenario/keys.h"

/* 64 endpoints, 8 leaves: a ring crosses the spine once every 8 ranks, so
 * neighbour pairs differ in latency and waiting for the receiver shows. */
#define FAT_TREE "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us,alpha=1us"

#include "build_helpers.h"

static double flow_time(const tc_topo *t, const tc_sched *s, tc_flow_deps deps, double eager_limit)
{
    tc_flow_opts o = {.deps = deps, .eager_limit_bytes = eager_limit};
    double x;
    tc_err err = {{0}};
    if (tc_flow_time(t, s, NULL, &o, &x, &err) != TC_OK)
        fail_msg("flow: %s", err.msg);
    return x;
}

static void assert_same(double a, double b, const char *what)
{
    if (a != b)
        fail_msg("%s: %.17g vs %.17g", what, a, b);
}

static void assert_differ(double a, double b, const char *what)
{
    if (!(fabs(a - b) > 1e-6 * fmax(a, b)))
        fail_msg("%s: %.17g and %.17g should differ", what, a, b);
}

/* The smallest and largest transfer of a schedule, over every step. */
static void transfer_range(const tc_sched *s, double *lo, double *hi)
{
    tc_xfers x;
    tc_xfers_init(&x, false);
    *lo = INFINITY, *hi = 0;
    for (uint32_t k = 0; k < s->nsteps; k++) {
        assert_int_equal(tc_sched_emit(s, k, &x), TC_OK);
        for (size_t i = 0; i < x.n; i++)
            if (x.v[i].src != x.v[i].dst)
                *lo = fmin(*lo, x.v[i].bytes), *hi = fmax(*hi, x.v[i].bytes);
    }
    tc_xfers_free(&x);
}

/* ---- the rule ---- */

/* 1 MiB over 64 ranks: every message is 16 KiB, under the 64 KiB default,
 * so auto is fifo, event for event. Rendezvous makes each step wait for the
 * slower of a rank's two neighbour pairs and is far slower. */
static void small_messages_under_auto_are_fifo(void **state)
{
    (void)state;
    tc_topo *t = topo(FAT_TREE);
    tc_sched *s = sched(t, TC_OP_REDUCESCATTER, TC_ALGO_RING, 64, 1 << 20);
    double lo, hi;
    transfer_range(s, &lo, &hi);
    assert_true(lo == 16384 && hi == 16384);
    double a = flow_time(t, s, TC_DEPS_AUTO, 0), f = flow_time(t, s, TC_DEPS_FIFO, 0),
           r = flow_time(t, s, TC_DEPS_RENDEZVOUS, 0);
    assert_same(a, f, "auto against fifo");
    assert_true(r > 1.2 * f);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* 64 MiB over 64 ranks: 1 MiB messages, above the limit: auto is
 * rendezvous; fifo, which lets senders run ahead, differs. */
static void large_messages_under_auto_are_rendezvous(void **state)
{
    (void)state;
    tc_topo *t = topo(FAT_TREE);
    tc_sched *s = sched(t, TC_OP_REDUCESCATTER, TC_ALGO_RING, 64, 64.0 * 1048576);
    double lo, hi;
    transfer_range(s, &lo, &hi);
    assert_true(lo == 1048576 && hi == 1048576);
    double a = flow_time(t, s, TC_DEPS_AUTO, 0), r = flow_time(t, s, TC_DEPS_RENDEZVOUS, 0);
    assert_same(a, r, "auto against rendezvous");
    assert_differ(a, flow_time(t, s, TC_DEPS_FIFO, 0), "auto against fifo");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* A message exactly at the limit is eager; one byte less of limit and it
 * waits for its receiver. */
static void eager_limit_is_inclusive(void **state)
{
    (void)state;
    tc_topo *t = topo(FAT_TREE);
    tc_sched *s = sched(t, TC_OP_REDUCESCATTER, TC_ALGO_RING, 64, 1 << 20);
    double f = flow_time(t, s, TC_DEPS_FIFO, 0), r = flow_time(t, s, TC_DEPS_RENDEZVOUS, 0);
    assert_differ(f, r, "fifo against rendezvous");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, 16384), f, "limit = message");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, 16385), f, "limit above the message");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, 16383), r, "limit a byte below the message");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, nextafter(16384, 0)), r, "limit just below the message");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Recursive halving and doubling carries 2 MiB down to 64 KiB and back: its
 * phases of at most 64 KiB go eagerly, the larger ones wait for their
 * receivers, and the time is neither fifo's nor rendezvous's. A limit above
 * every message gives fifo back, one below every message rendezvous. */
static void mixed_sizes_under_auto_differ_from_both(void **state)
{
    (void)state;
    tc_topo *t = topo(FAT_TREE);
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RHD, 64, 4.0 * 1048576);
    double lo, hi;
    transfer_range(s, &lo, &hi);
    assert_true(lo <= TC_FLOW_DEFAULT_EAGER_LIMIT && hi > TC_FLOW_DEFAULT_EAGER_LIMIT);
    double a = flow_time(t, s, TC_DEPS_AUTO, 0), f = flow_time(t, s, TC_DEPS_FIFO, 0),
           r = flow_time(t, s, TC_DEPS_RENDEZVOUS, 0);
    assert_differ(a, f, "auto against fifo");
    assert_differ(a, r, "auto against rendezvous");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, hi), f, "limit at the largest message");
    assert_same(flow_time(t, s, TC_DEPS_AUTO, lo / 2), r, "limit below the smallest message");
    tc_sched_free(s);
    tc_topo_free(t);
}

/* A zeroed tc_flow_opts is auto at 64 KiB. */
static void zeroed_options_are_auto_at_the_default_limit(void **state)
{
    (void)state;
    tc_topo *t = topo(FAT_TREE);
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RHD, 64, 4.0 * 1048576);
    tc_flow_opts zero;
    memset(&zero, 0, sizeof zero);
    double z;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_time(t, s, NULL, &zero, &z, &err), TC_OK);
    assert_same(z, flow_time(t, s, TC_DEPS_AUTO, 65536), "zeroed options");
    assert_same(z, flow_time(t, s, TC_DEPS_AUTO, TC_FLOW_DEFAULT_EAGER_LIMIT), "the default");
    tc_sched_free(s);
    tc_topo_free(t);
}

static void negative_eager_limit_is_refused(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, 1 << 20);
    double bad[] = {-1, NAN};
    for (int i = 0; i < 2; i++) {
        tc_flow_opts o = {.eager_limit_bytes = bad[i]};
        double x;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_time(t, s, NULL, &o, &x, &err), TC_EINVAL);
        assert_non_null(strstr(err.msg, "eager limit"));
    }
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- the scenario ---- */

static tc_scenario *from_flags(tc_command c, const char *const *flags, size_t n)
{
    tc_scenario *s = tc_scenario_new(c);
    tc_err err = {{0}};
    for (size_t i = 0; i + 1 < n; i += 2) {
        const char *v[1] = {flags[i + 1]};
        if (tc_scenario_set_flag(s, flags[i], v, 1, &err) != TC_OK)
            fail_msg("%s %s: %s", flags[i], flags[i + 1], err.msg);
    }
    return s;
}

static char *dump(const tc_scenario *s)
{
    json_t *j = tc_scenario_to_json(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(tc_json_dumpf(j, f));
    fclose(f);
    json_decref(j);
    return buf;
}

/* --eager-limit is written canonically (bytes), read back to the same
 * scenario, and reaches the simulator's options. */
static void eager_limit_round_trips_through_the_scenario(void **state)
{
    (void)state;
    const char *f[] = {"--topo", FAT_TREE, "--op", "reducescatter", "--size", "1MiB", "--mode", "flow",
                       "--eager-limit", "8KiB"};
    tc_scenario *s = from_flags(TC_CMD_COLLECTIVE, f, 10);
    tc_err err = {{0}};
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_OK);
    char *a = dump(s);
    assert_non_null(strstr(a, "\"deps\": \"auto\""));
    assert_non_null(strstr(a, "\"eager_limit_bytes\": 8192"));
    json_error_t je;
    json_t *j = json_loads(a, 0, &je);
    assert_non_null(j);
    tc_scenario *t = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_int_equal(tc_scenario_read_json(t, j, "test", &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(t, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(t, &err), TC_OK);
    char *b = dump(t);
    assert_string_equal(a, b);
    tc_eval_opts eo;
    tc_flow_opts fo;
    tc_scenario_eval_opts(t, NULL, 0, &eo, &fo);
    assert_int_equal(fo.deps, TC_DEPS_AUTO);
    assert_true(fo.eager_limit_bytes == 8192);
    free(a), free(b);
    json_decref(j);
    tc_scenario_free(s), tc_scenario_free(t);
}

/* Without the flag: deps auto at 64 KiB, written out; under another deps
 * the limit is not written. */
static void default_is_auto_at_64_kib(void **state)
{
    (void)state;
    const char *f[] = {"--topo", FAT_TREE, "--op", "allreduce", "--size", "1MiB", "--mode", "flow"};
    tc_scenario *s = from_flags(TC_CMD_COLLECTIVE, f, 8);
    tc_err err = {{0}};
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    char *a = dump(s);
    assert_non_null(strstr(a, "\"deps\": \"auto\""));
    assert_non_null(strstr(a, "\"eager_limit_bytes\": 65536"));
    free(a);
    const char *d[1] = {"rendezvous"};
    assert_int_equal(tc_scenario_set_flag(s, "--deps", d, 1, &err), TC_OK);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    a = dump(s);
    assert_non_null(strstr(a, "\"deps\": \"rendezvous\""));
    assert_null(strstr(a, "eager_limit"));
    free(a);
    tc_scenario_free(s);
    /* concurrent always runs the flow simulator: the key applies there. */
    tc_scenario *c = tc_scenario_new(TC_CMD_CONCURRENT);
    const tc_scn_key *k = tc_scn_key_get((size_t)tc_scn_key_index("flow.eager_limit_bytes"));
    assert_non_null(k);
    assert_true(tc_scn_key_applies(k, c));
    tc_scenario_free(c);
}

/* The limit applies only in flow mode with deps auto: a flag is refused
 * naming itself and what would make it apply; so is a file's key. */
static void eager_limit_outside_auto_deps_is_refused(void **state)
{
    (void)state;
    tc_err err = {{0}};
    const char *steps[] = {"--topo", FAT_TREE, "--op", "allreduce", "--size", "1MiB", "--mode", "steps",
                           "--eager-limit", "8KiB"};
    tc_scenario *s = from_flags(TC_CMD_COLLECTIVE, steps, 10);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--eager-limit"));
    assert_non_null(strstr(err.msg, "--mode flow"));
    assert_null(strchr(err.msg, '\n'));
    tc_scenario_free(s);
    const char *rdv[] = {"--topo", FAT_TREE, "--op", "allreduce", "--size", "1MiB", "--mode", "flow",
                         "--deps", "rendezvous", "--eager-limit", "8KiB"};
    s = from_flags(TC_CMD_COLLECTIVE, rdv, 12);
    assert_int_equal(tc_scenario_resolve(s, &err), TC_OK);
    assert_int_equal(tc_scenario_check_given(s, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--deps auto"));
    tc_scenario_free(s);
    /* A file that gives the key under another deps. */
    s = tc_scenario_new(TC_CMD_COLLECTIVE);
    json_error_t je;
    json_t *j = json_loads("{\"eval\": {\"mode\": \"flow\"}, \"flow\": {\"deps\": \"fifo\", "
                           "\"eager_limit_bytes\": \"16KiB\"}}",
                           0, &je);
    assert_int_equal(tc_scenario_read_json(s, j, "f.json", &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "flow.eager_limit_bytes"));
    json_decref(j);
    /* Sizes with units are read; 0 and negative sizes are not. */
    const char *ok[1] = {"16KiB"}, *zero[1] = {"0"}, *neg[1] = {"-4KiB"}, *junk[1] = {"lots"};
    assert_int_equal(tc_scenario_set_flag(s, "--eager-limit", ok, 1, &err), TC_OK);
    assert_true(s->eager_limit_bytes == 16384);
    tc_scenario_free(s);
    const char *const *bad[] = {zero, neg, junk};
    for (int i = 0; i < 3; i++) {
        s = tc_scenario_new(TC_CMD_COLLECTIVE);
        assert_int_equal(tc_scenario_set_flag(s, "--eager-limit", bad[i], 1, &err), TC_EINVAL);
        assert_non_null(strstr(err.msg, "--eager-limit"));
        tc_scenario_free(s);
    }
}

/* Flow drops the barrier between steps, so it is not bounded by steps
 * (docs/MODEL.md, "Against steps"): where flows of two steps come to share
 * a link, the run can end later than in lock-step. With L = 1 us, hop_lat
 * 0, alpha 0, 400 Gb/s, 64 MiB: pairwise reduce-scatter on a 5x4 torus
 * whose y is a line takes 2.223 ms in steps, 2.207 ms in flow by default
 * (its 3.4 MiB messages wait for their receivers), 2.966 ms under fifo
 * (senders run ahead); rhd all-reduce on 3x3x3 takes 5.564 ms in steps,
 * 5.702 ms in flow by default (the ranks the fold leaves out start halving
 * at once), 5.469 ms under fifo. */
static void flow_can_exceed_steps(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        tc_op op;
        tc_algo algo;
        uint32_t p;
        double steps, flow_auto, flow_fifo; /* ms, as docs/MODEL.md gives them */
    } cases[] = {
        {"torus:dims=5x4,wrap=1x0,lat=1us,hop_lat=0,alpha=0", TC_OP_REDUCESCATTER, TC_ALGO_PAIRWISE, 20, 2.223, 2.207,
         2.966},
        {"torus:dims=3x3x3,lat=1us,hop_lat=0,alpha=0", TC_OP_ALLREDUCE, TC_ALGO_RHD, 27, 5.564, 5.702, 5.469},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_topo *t = topo(cases[i].spec);
        tc_sched *s = sched(t, cases[i].op, cases[i].algo, cases[i].p, 64.0 * 1048576);
        tc_eval_opts o = {.mode = TC_MODE_STEPS};
        double st;
        tc_err err = {{0}};
        assert_int_equal(tc_eval_steps(t, s, &o, &st, &err), TC_OK);
        double a = flow_time(t, s, TC_DEPS_AUTO, 0), f = flow_time(t, s, TC_DEPS_FIFO, 0);
        if (fabs(st * 1e3 - cases[i].steps) > 5e-4 || fabs(a * 1e3 - cases[i].flow_auto) > 5e-4 ||
            fabs(f * 1e3 - cases[i].flow_fifo) > 5e-4)
            fail_msg("%s: steps %.6g ms, flow %.6g ms (auto), %.6g ms (fifo); documented %.4g, %.4g, %.4g",
                     cases[i].spec, st * 1e3, a * 1e3, f * 1e3, cases[i].steps, cases[i].flow_auto,
                     cases[i].flow_fifo);
        assert_true(fmax(a, f) > st * 1.02); /* flow above steps, by more than noise */
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_messages_under_auto_are_fifo),
        cmocka_unit_test(large_messages_under_auto_are_rendezvous),
        cmocka_unit_test(eager_limit_is_inclusive),
        cmocka_unit_test(mixed_sizes_under_auto_differ_from_both),
        cmocka_unit_test(zeroed_options_are_auto_at_the_default_limit),
        cmocka_unit_test(negative_eager_limit_is_refused),
        cmocka_unit_test(eager_limit_round_trips_through_the_scenario),
        cmocka_unit_test(default_is_auto_at_64_kib),
        cmocka_unit_test(eager_limit_outside_auto_deps_is_refused),
        cmocka_unit_test(flow_can_exceed_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
