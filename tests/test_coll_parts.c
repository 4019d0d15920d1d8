/*
 * test_coll_parts.c - all-pairs steps emitted in parts of senders
 * (tc_sched_emit_part, tc_sched_part_senders): the parts of a step, in
 * order, are the step as tc_sched_emit gives it, transfer for transfer and
 * segment for segment; the steps evaluator, which routes a step part by
 * part when it holds more than its chunk, gives the whole step's times and
 * bottleneck bit for bit; transfer counts are the same. Random rank counts,
 * random part sizes, every operation of the direct algorithm, on Clos and
 * torus topologies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "build_helpers.h"
#include "eval/eval_int.h"
#include "topocc/eval.h"
#include "topocc/flow.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t draw(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static const tc_op OPS[] = {TC_OP_ALLTOALL, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER, TC_OP_ALLREDUCE};

static void same_xfer(const tc_xfer *a, const tc_xfer *b, size_t i)
{
    if (a->src != b->src || a->dst != b->dst || a->bytes != b->bytes || a->reduce != b->reduce)
        fail_msg("transfer %zu: %u -> %u (%g) in parts, %u -> %u (%g) whole", i, a->src, a->dst, a->bytes, b->src,
                 b->dst, b->bytes);
}

static void parts_are_the_whole_step(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    for (int trial = 0; trial < 60; trial++) {
        tc_op op = OPS[draw(4)];
        uint32_t p = 2 + draw(63);
        tc_sched *s = sched(t, op, TC_ALGO_DIRECT, p, 1 << 20);
        assert_non_null(s->emit_part);
        tc_xfers whole, part;
        tc_xfers_init(&whole, true);
        tc_xfers_init(&part, true);
        for (uint32_t step = 0; step < s->nsteps; step++) {
            assert_int_equal(tc_sched_emit(s, step, &whole), TC_OK);
            size_t at = 0, seg = 0;
            for (uint32_t lo = 0; lo < p;) {
                uint32_t hi = lo + 1 + draw(p - lo);
                assert_int_equal(tc_sched_emit_part(s, step, lo, hi, &part), TC_OK);
                for (size_t i = 0; i < part.n; i++, at++) {
                    assert_true(at < whole.n);
                    assert_true(part.v[i].src >= lo && part.v[i].src < hi);
                    same_xfer(&part.v[i], &whole.v[at], at);
                }
                for (size_t i = 0; i < part.nseg; i++, seg++) {
                    assert_true(seg < whole.nseg);
                    assert_memory_equal(&part.segs[i], &whole.segs[seg], sizeof part.segs[i]);
                }
                lo = hi;
            }
            assert_int_equal(at, whole.n);
            assert_int_equal(seg, whole.nseg);
        }
        /* a range beyond the ranks, or reversed, is refused */
        assert_int_equal(tc_sched_emit_part(s, 0, 0, p + 1, &part), TC_EINTERNAL);
        assert_int_equal(tc_sched_emit_part(s, 0, 2, 1, &part), TC_EINTERNAL);
        tc_xfers_free(&whole);
        tc_xfers_free(&part);
        tc_sched_free(s);
    }
    tc_topo_free(t);
}

static void part_senders_fit_the_chunk(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    tc_sched *s = sched(t, TC_OP_ALLTOALL, TC_ALGO_DIRECT, 64, 1 << 20);
    /* 64 senders of 64 transfers (63 and its own block) */
    assert_int_equal(tc_sched_part_senders(s, &s->phases[0], 4096), 64);
    assert_int_equal(tc_sched_part_senders(s, &s->phases[0], 4095), 63);
    assert_int_equal(tc_sched_part_senders(s, &s->phases[0], 640), 10);
    assert_int_equal(tc_sched_part_senders(s, &s->phases[0], 1), 1);
    tc_sched_free(s);
    /* a schedule without parts is emitted whole */
    s = sched(t, TC_OP_ALLTOALL, TC_ALGO_PAIRWISE, 64, 1 << 20);
    assert_null(s->emit_part);
    assert_int_equal(tc_sched_part_senders(s, &s->phases[0], 1), 64);
    tc_sched_free(s);
    tc_topo_free(t);
}

static void steps_in_parts_are_the_whole_steps(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=8x8,up=1x8", "clos:down=4x4x4,up=1x2x2,bw=100Gbps,lat=1us",
                           "clos:hosts=128,radix=16,tiers=2,oversub=3", "torus:dims=4x4x4", "torus:dims=8x6"};
    for (int trial = 0; trial < 40; trial++) {
        tc_topo *t = topo(specs[draw(5)]);
        tc_op op = OPS[draw(4)];
        uint32_t p = 2 + draw(t->n_endpoints - 1);
        tc_sched *s = sched(t, op, TC_ALGO_DIRECT, p, (double)(1 + draw(1 << 24)));
        tc_eval_opts o = {0};
        o.routing = tc_eval_routing(TC_MODE_STEPS, t, o.routing);
        tc_steps_ws *whole = tc_steps_ws_new(t, tc_sched_parts(s)), *parts = tc_steps_ws_new(t, tc_sched_parts(s));
        assert_non_null(whole);
        assert_non_null(parts);
        tc_steps_ws_set_chunk(parts, 1 + draw(4 * p));
        double scale[3] = {1, 0.5, 7};
        for (uint32_t i = 0; i < s->nphases; i++) {
            double a[3], b[3];
            uint32_t ba, bb;
            tc_err err = {{0}};
            assert_int_equal(tc_steps_phase_sweep(whole, t, s, &o, i, scale, 3, a, &ba, &err), TC_OK);
            assert_int_equal(tc_steps_phase_sweep(parts, t, s, &o, i, scale, 3, b, &bb, &err), TC_OK);
            assert_memory_equal(a, b, sizeof a);
            assert_int_equal(ba, bb);
            /* the workspaces are clean for the next phase: again, the same */
            assert_int_equal(tc_steps_phase_sweep(parts, t, s, &o, i, scale, 3, b, &bb, &err), TC_OK);
            assert_memory_equal(a, b, sizeof a);
        }
        tc_steps_ws_free(whole);
        tc_steps_ws_free(parts);
        tc_sched_free(s);
        tc_topo_free(t);
    }
}

static void counts_are_exact_in_parts(void **state)
{
    (void)state;
    /* 1,100 ranks: an all-pairs step of 1,208,900 transfers, counted
     * exactly whatever the parts (the chunk is 4 Mi transfers: one part
     * here; the evaluator's parts are checked above) */
    tc_topo *t = topo("clos:hosts=1100,radix=64,tiers=2");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_DIRECT, 1100, 1 << 30);
    uint64_t n;
    double bytes;
    tc_err err = {{0}};
    assert_int_equal(tc_sched_count(s, &n, &bytes, &err), TC_OK);
    assert_true(n == 2ull * 1100 * 1099);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* The flow simulator with all-pairs steps in parts (its fold's check of
 * the translation and its joining of alike phases, sender by sender; its
 * folded steps, the simulated senders only): the same run, bit for bit,
 * as with every step whole. */
static void flow_in_parts_is_the_whole_run(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=8x8,up=1x8", "clos:hosts=128,radix=16,tiers=2", "torus:dims=8x8"};
    const tc_op ops[] = {TC_OP_ALLTOALL, TC_OP_ALLREDUCE, TC_OP_ALLGATHER};
    int folded = 0;
    for (int k = 0; k < 18; k++) {
        tc_topo *t = topo(specs[k % 3]);
        uint32_t p = t->n_endpoints;
        tc_sched *s = sched(t, ops[k / 3 % 3], TC_ALGO_DIRECT, p, 1 << 18);
        tc_flow_job job = {.sched = s};
        tc_flow_opts o = {0};
        /* D-mod-k routes translate by a leaf or a pod (ECMP's hashes do not) */
        if (k >= 9 && k % 3 < 2)
            o.routing = TC_ROUTE_DMODK;
        tc_flow_result a, b;
        tc_err err = {{0}};
        tc_eval_set_chunk(0);
        if (tc_flow_run(t, &job, 1, &o, &a, &err) != TC_OK)
            fail_msg("%s: %s", specs[k % 3], err.msg);
        tc_eval_set_chunk(1 + draw(3 * p));
        if (tc_flow_run(t, &job, 1, &o, &b, &err) != TC_OK)
            fail_msg("%s (parts): %s", specs[k % 3], err.msg);
        tc_eval_set_chunk(0);
        if (a.makespan_s != b.makespan_s || a.jobs[0].time_s != b.jobs[0].time_s ||
            a.fold_ranks != b.fold_ranks || a.steps_simulated != b.steps_simulated)
            fail_msg("%s %s: whole %.17g (fold %u), in parts %.17g (fold %u)", specs[k % 3], tc_op_name(ops[k / 3 % 3]),
                     a.makespan_s, a.fold_ranks, b.makespan_s, b.fold_ranks);
        folded += a.fold_ranks > 0;
        tc_flow_result_free(&a);
        tc_flow_result_free(&b);
        tc_sched_free(s);
        tc_topo_free(t);
    }
    /* the fold's check in parts found the translations the whole check finds */
    print_message("%d of 18 runs folded\n", folded);
    assert_true(folded > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parts_are_the_whole_step),
        cmocka_unit_test(part_senders_fit_the_chunk),
        cmocka_unit_test(steps_in_parts_are_the_whole_steps),
        cmocka_unit_test(counts_are_exact_in_parts),
        cmocka_unit_test(flow_in_parts_is_the_whole_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
