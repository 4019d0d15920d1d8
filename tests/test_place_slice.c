/*
 * test_place_slice.c - a job on a slice of a torus (docs/MODEL.md,
 * "Placement"), in every command that runs a placed job. With the optical
 * circuit switches (slice:ocs=K, every extent a multiple of K) the slice is
 * a torus of its own (tc_topo_torus_box): the same graph as a standalone
 * torus of its extents with the parent's link parameters, the parent's
 * failures inside the box carried over, none from outside; it shares no
 * link with another job, so concurrent runs it alone (slowdown exactly 1).
 * Without them it runs on the parent as one group along the dimensions it
 * spans, the ring's way back along the line. collective, compare, failures
 * and concurrent give the same figures for the same job. By hand, on a 4x4x4
 * torus with L = 1 us per hop, alpha 0, B = 50 GB/s, torus-bi all-reduce of
 * S: reduce-scatter then all-gather along x, y, z, 3 steps each, both ring
 * directions at once with half the data each: 18 L + 6 (S/B)(1/8 + 1/32 +
 * 1/128) = 18 L + (63/64) S/B; with the cable (1,0,0)-(2,0,0) down, the x
 * steps' hop over it detours through y = 1 (3 hops) and shares that line's
 * x link (2 flows): 3 (3L + 2 (S/8)/B) for each x sweep, 30 L + (111/64)
 * S/B in all.
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
#include "topocc/render.h"

#include "build_helpers.h"

#define BW 50e9 /* 400 Gb/s */
#define GiB 1073741824.0
#define P8 "torus:dims=8x8x8,lat=1us,hop_lat=0,alpha=0"
#define S4 "torus:dims=4x4x4,lat=1us,hop_lat=0,alpha=0"

static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* The job's slice on t and where it runs. */
static tc_slice_run slice_of(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p)
{
    tc_err err = {{0}};
    if (tc_place_map(t, jp, map, p, &err))
        fail_msg("place: %s", err.msg);
    tc_slice_run sr;
    if (tc_place_slice_run(t, *map, *p, jp->ocs, &sr, &err))
        fail_msg("slice run: %s", err.msg);
    return sr;
}

static double eval_on(const tc_topo *t, const uint32_t *map, uint32_t p, tc_algo a, tc_mode m, double bytes)
{
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = a, .p = p, .bytes = bytes, .elt = 4};
    tc_eval_opts o = {.mode = m, .rank_map = map};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err))
        fail_msg("%s on %s: %s", tc_algo_name(a), t->spec, err.msg);
    return r.time_s;
}

/* The box of a slice is the standalone torus of its extents with the
 * parent's parameters, scale-up nodes included, link by link; its
 * endpoints map to the parent's and back; the x wrap of a box that does
 * not span x is an optical circuit, the parent has no such link. */
static void box_is_the_standalone_torus(void **state)
{
    (void)state;
    const char *par = ",bw=200Gbps,lat=300ns,hop_lat=70ns,alpha=2us,node=4,node_bw=100GB/s";
    char a[256], b[256];
    snprintf(a, sizeof a, "torus:dims=8x8x8%s", par);
    snprintf(b, sizeof b, "torus:dims=4x4x4%s", par);
    tc_topo *pt = topo(a), *st = topo(b), *box = NULL;
    const uint32_t origin[3] = {4, 0, 4}, extent[3] = {4, 4, 4};
    tc_err err = {{0}};
    if (tc_topo_torus_box(pt, origin, extent, true, &box, &err))
        fail_msg("box: %s", err.msg);
    assert_string_equal(box->spec, st->spec);
    assert_int_equal(box->n_links, st->n_links);
    assert_int_equal(box->n_vertices, st->n_vertices);
    assert_int_equal(box->node_size, 4);
    assert_true(box->alpha == st->alpha && box->hop_lat == st->hop_lat);
    for (uint32_t l = 0; l < st->n_links; l++) {
        const tc_link *x = &box->links[l], *y = &st->links[l];
        if (x->src != y->src || x->dst != y->dst || x->bw != y->bw || x->lat != y->lat || x->kind != y->kind ||
            x->level != y->level || x->dir != y->dir)
            fail_msg("link %u differs from the standalone torus's", l);
    }
    assert_int_equal(box->n_failed, 0);
    assert_int_equal(box->n_degraded, 0);
    uint32_t circuits = 0;
    for (uint32_t l = 0; l < box->n_links; l++) {
        uint32_t pl = tc_topo_box_parent_link(box, l);
        if (pl == UINT32_MAX) {
            circuits++;
            continue;
        }
        if (box->links[l].kind == TC_LINK_NODE) { /* endpoint e's node link, each way */
            uint32_t e = (l - box->node_lbase) / 2;
            assert_int_equal(pl, pt->node_lbase + 2 * tc_topo_box_parent_endpoint(box, e) + (l & 1));
            continue;
        }
        assert_int_equal(pt->links[pl].src, tc_topo_box_parent_endpoint(box, box->links[l].src));
        assert_int_equal(pt->links[pl].dst, tc_topo_box_parent_endpoint(box, box->links[l].dst));
    }
    /* every line of 4 in each of 3 dimensions has one circuit, 2 links */
    assert_int_equal(circuits, 3 * 16 * 2);
    for (uint32_t e = 0; e < box->n_endpoints; e++) {
        uint32_t pe = tc_topo_box_parent_endpoint(box, e);
        assert_int_equal(tc_topo_box_endpoint(box, pe), e);
        assert_int_equal(pe % 8 / 4, 1); /* x from 4 */
    }
    assert_int_equal(tc_topo_box_endpoint(box, 0), UINT32_MAX);
    char name[128];
    tc_topo_link_name(box, tc_topo_torus_link(box, 3, 0, +1), name, sizeof name);
    assert_string_equal(name, "(7,0,4) -> (4,0,4) dim 0+ (optical circuit)");
    tc_topo_free(box);
    /* a box cutting the nodes of 4 along x has no torus of its own */
    const uint32_t cut[3] = {2, 0, 0};
    assert_int_equal(tc_topo_torus_box(pt, cut, extent, true, &box, &err), TC_EINVAL);
    assert_null(box);
    assert_non_null(strstr(err.msg, "scale-up nodes"));
    /* a box spanning a whole dimension the parent wraps keeps its links */
    tc_topo *p48 = topo("torus:dims=4x8");
    const uint32_t o2[2] = {0, 4}, e2[2] = {4, 4};
    if (tc_topo_torus_box(p48, o2, e2, true, &box, &err))
        fail_msg("box: %s", err.msg);
    assert_true(tc_topo_box_parent_link(box, tc_topo_torus_link(box, 3, 0, +1)) != UINT32_MAX);
    assert_int_equal(tc_topo_box_parent_link(box, tc_topo_torus_link(box, 12, 1, +1)), UINT32_MAX);
    tc_topo_free(box);
    /* without the switches the box is as it is: its y lines are lines */
    if (tc_topo_torus_box(p48, o2, e2, false, &box, &err))
        fail_msg("box: %s", err.msg);
    assert_true(box->wrap[0] && !box->wrap[1]);
    assert_int_equal(box->dim_cables[1], 3);
    assert_int_equal(tc_topo_torus_link(box, 12, 1, +1), UINT32_MAX);
    for (uint32_t l = 0; l < box->n_links; l++)
        assert_true(tc_topo_box_parent_link(box, l) != UINT32_MAX);
    tc_topo_free(box);
    tc_topo_free(p48);
    tc_topo_free(pt);
    tc_topo_free(st);
}

/* torus-bi on a 4x4x4 slice with ocs=4 of an 8x8x8 torus equals torus-bi
 * on the standalone 4x4x4 torus exactly, in every mode, and the figure by
 * hand; without the optical switches the line doubles it (1 GiB). */
static void ocs_slice_is_the_standalone_torus(void **state)
{
    (void)state;
    tc_topo *pt = topo(P8), *st = topo(S4);
    tc_job_place jp = {.policy = TC_PLACE_SLICE, .ranks = 64, .ocs = 4};
    uint32_t *map = NULL, p = 0;
    tc_slice_run sr = slice_of(pt, &jp, &map, &p);
    assert_non_null(sr.topo);
    assert_int_equal(sr.axes.kind, TC_GROUP_NONE);
    assert_true(sr.shape.ocs_wrap);
    double S = GiB, hand = 18e-6 + 63.0 / 64 * S / BW;
    for (int m = TC_MODE_FORMULA; m <= TC_MODE_FLOW; m++) {
        double a = eval_on(sr.topo, sr.map, p, TC_ALGO_TORUS_BI, (tc_mode)m, S);
        double b = eval_on(st, NULL, 64, TC_ALGO_TORUS_BI, (tc_mode)m, S);
        if (a != b || !close_to(a, hand, 1e-9))
            fail_msg("mode %d: slice %.12g s, standalone %.12g s, by hand %.12g s", m, a, b, hand);
    }
    char buf[512];
    tc_place_shape_format(&sr.shape, buf, sizeof buf);
    if (!strstr(buf, "the job runs on the slice's own torus, torus:dims=4x4x4") || !strstr(buf, "sharing no link"))
        fail_msg("shape: %s", buf);
    tc_slice_run_free(&sr);
    free(map);
    /* without ocs: the implicit group along x, y and z */
    jp.ocs = 0;
    sr = slice_of(pt, &jp, &map, &p);
    assert_null(sr.topo);
    assert_int_equal(sr.axes.kind, TC_GROUP_AXES);
    assert_int_equal(sr.axes.k, 7);
    tc_slice_run_free(&sr);
    free(map);
    /* ocs=4 on a 2x2x4 slice: no wraparound of the switches, and it says so */
    jp = (tc_job_place){.policy = TC_PLACE_SLICE, .ranks = 16, .ocs = 4};
    sr = slice_of(pt, &jp, &map, &p);
    assert_false(sr.shape.ocs_wrap);
    assert_null(sr.topo);
    assert_int_equal(sr.axes.kind, TC_GROUP_AXES);
    tc_place_shape_format(&sr.shape, buf, sizeof buf);
    if (!strstr(buf, "ocs=4: not every extent is a multiple of 4, so the optical switches add no wraparound"))
        fail_msg("shape: %s", buf);
    tc_slice_run_free(&sr);
    free(map);
    tc_topo_free(pt);
    tc_topo_free(st);
}

/* A failed cable inside the box slows the job on its own torus exactly as
 * the same cable slows the standalone torus (and by hand); one outside the
 * box, or on the line beyond it, changes nothing; a failed router inside
 * takes a rank down. */
static void failures_inside_the_box_only(void **state)
{
    (void)state;
    double S = GiB, healthy = 18e-6 + 63.0 / 64 * S / BW, hand = 30e-6 + 111.0 / 64 * S / BW;
    tc_job_place jp = {.policy = TC_PLACE_SLICE, .ranks = 64, .ocs = 4};
    tc_err err = {{0}};
    /* (1,0,0) -> (2,0,0): endpoint 1 on both */
    tc_topo *st = topo(S4);
    assert_int_equal(tc_topo_fail_link(st, tc_topo_torus_link(st, 1, 0, +1), true, &err), TC_OK);
    const struct {
        uint32_t v; /* parent endpoint whose + x cable fails */
        bool inside;
    } cases[] = {{1, true}, {5 + 8 * 5 + 64 * 5, false}, {3, false}, {4, false}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        tc_topo *pt = topo(P8);
        assert_int_equal(tc_topo_fail_link(pt, tc_topo_torus_link(pt, cases[c].v, 0, +1), true, &err), TC_OK);
        uint32_t *map = NULL, p = 0;
        tc_slice_run sr = slice_of(pt, &jp, &map, &p);
        assert_int_equal(sr.topo->n_failed, cases[c].inside ? 2 : 0);
        for (int m = TC_MODE_STEPS; m <= TC_MODE_FLOW; m++) {
            double a = eval_on(sr.topo, sr.map, p, TC_ALGO_TORUS_BI, (tc_mode)m, S);
            double b = cases[c].inside ? eval_on(st, NULL, 64, TC_ALGO_TORUS_BI, (tc_mode)m, S) : healthy;
            if (!(cases[c].inside ? a == b : close_to(a, b, 1e-9)))
                fail_msg("cable at %u, mode %d: %.12g s, expected %.12g s", cases[c].v, m, a, b);
            if (m == TC_MODE_STEPS && !close_to(a, cases[c].inside ? hand : healthy, 1e-9))
                fail_msg("cable at %u: steps %.12g s, by hand %.12g s", cases[c].v, a, hand);
        }
        tc_slice_run_free(&sr);
        free(map);
        tc_topo_free(pt);
    }
    /* a router inside: its rank is down */
    tc_topo *pt = topo(P8);
    assert_int_equal(tc_topo_fail_switch(pt, 2 + 8, &err), TC_OK);
    uint32_t *map = NULL, p = 0;
    tc_slice_run sr = slice_of(pt, &jp, &map, &p);
    assert_true(tc_topo_vertex_failed(sr.topo, 2 + 4));
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_TORUS_BI, .p = p, .bytes = S, .elt = 4};
    tc_eval_opts o = {.mode = TC_MODE_STEPS, .rank_map = sr.map};
    tc_result r;
    assert_int_equal(tc_evaluate(sr.topo, &req, &o, &r, &err), TC_EINVAL);
    tc_slice_run_free(&sr);
    free(map);
    tc_topo_free(pt);
    tc_topo_free(st);
}

/* ---- the commands ---- */

static tc_scenario *scn(tc_command c, const char *t0, const char *t1, const char *place, uint32_t ranks,
                        const char *algo, tc_mode mode, double bytes)
{
    tc_scenario *s = tc_scenario_new(c);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", t0);
    s->ntopo = 1;
    if (t1) {
        snprintf(s->topo[1], sizeof s->topo[1], "%s", t1);
        s->ntopo = 2;
    }
    s->ops[0] = TC_OP_ALLREDUCE;
    s->nops = 1;
    s->sizes = malloc(sizeof *s->sizes);
    s->sizes[0] = bytes;
    s->nsizes = 1;
    snprintf(s->algos[0], sizeof s->algos[0], "%s", algo);
    s->nalgos = 1;
    s->mode = mode;
    s->job.ranks = ranks;
    tc_err err = {{0}};
    if (place && tc_place_spec_parse(place, &s->job, &err))
        fail_msg("place %s: %s", place, err.msg);
    if (tc_scenario_resolve(s, &err))
        fail_msg("resolve: %s", err.msg);
    return s;
}

static double coll_time(const char *topo_spec, const char *place, uint32_t ranks, const char *algo, tc_mode mode,
                        double bytes)
{
    tc_scenario *s = scn(TC_CMD_COLLECTIVE, topo_spec, NULL, place, ranks, algo, mode, bytes);
    tc_collective_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_collective(s, NULL, &o, &err))
        fail_msg("collective: %s", err.msg);
    assert_int_equal(o->group.kind, TC_GROUP_NONE); /* reported as the job */
    assert_int_equal(o->res[0].groups, 0);
    double t = o->res[0].time_s;
    tc_collective_out_free(o);
    tc_scenario_free(s);
    return t;
}

/* collective, compare and failures (healthy) give the same time for the
 * same sliced job; with ocs it is the standalone torus's, without it twice
 * that (the line, 1 GiB, within 1%). */
static void the_commands_agree(void **state)
{
    (void)state;
    const char *P8b = "torus:dims=8x8x8,bw=800Gbps,lat=1us,hop_lat=0,alpha=0";
    double S = GiB, alone = coll_time(S4, NULL, 0, "torus-bi", TC_MODE_STEPS, S);
    const char *places[] = {"slice:ocs=4", "slice"};
    for (int k = 0; k < 2; k++) {
        double c8 = coll_time(P8, places[k], 64, "torus-bi", TC_MODE_STEPS, S);
        double c8b = coll_time(P8b, places[k], 64, "torus-bi", TC_MODE_STEPS, S);
        if (k == 0 ? c8 != alone : !close_to(c8 / alone, 2, 0.01))
            fail_msg("%s: %.12g s against the 4x4x4 torus's %.12g s", places[k], c8, alone);
        tc_scenario *s = scn(TC_CMD_COMPARE, P8, P8b, places[k], 64, "torus-bi", TC_MODE_STEPS, S);
        tc_compare_out *o = NULL;
        tc_err err = {{0}};
        if (tc_run_compare(s, NULL, &o, &err))
            fail_msg("compare: %s", err.msg);
        assert_int_equal(o->group.kind, TC_GROUP_NONE);
        if (tc_compare_at(o, 0, 0, 0)->time_s != c8 || tc_compare_at(o, 0, 0, 1)->time_s != c8b)
            fail_msg("%s: compare %.12g, %.12g s; collective %.12g, %.12g s", places[k],
                     tc_compare_at(o, 0, 0, 0)->time_s, tc_compare_at(o, 0, 0, 1)->time_s, c8, c8b);
        assert_int_equal(tc_compare_at(o, 0, 0, 0)->groups, 0);
        tc_compare_out_free(o);
        tc_scenario_free(s);
        s = scn(TC_CMD_FAILURES, P8, P8b, places[k], 64, "torus-bi", TC_MODE_STEPS, S);
        snprintf(s->fail_random, sizeof s->fail_random, "links=1,seed=1");
        s->trials = 2;
        tc_failures_out *f = NULL;
        if (tc_run_failures(s, NULL, &f, &err))
            fail_msg("failures: %s", err.msg);
        if (f->topo[0].healthy.time_s != c8 || f->topo[1].healthy.time_s != c8b)
            fail_msg("%s: failures %.12g, %.12g s; collective %.12g, %.12g s", places[k], f->topo[0].healthy.time_s,
                     f->topo[1].healthy.time_s, c8, c8b);
        tc_failures_out_free(f);
        tc_scenario_free(s);
    }
}

/* A group named by the topology's axes on a slice of the optical
 * switches runs along the same axes of its own torus: compare with
 * --group axes=x (or stride) on the 4x4x4 slice gives the standalone
 * torus's time, reported as groups. */
static void groups_on_the_slice_torus(void **state)
{
    (void)state;
    double S = 64.0 * 1048576;
    const char *groups[] = {"axes=x", "axes=yz", "stride=4"};
    for (int k = 0; k < 3; k++) {
        double t[2];
        for (int w = 0; w < 2; w++) {
            tc_scenario *s = scn(TC_CMD_COMPARE, w ? S4 : P8, NULL, w ? NULL : "slice:ocs=4", w ? 0 : 64, "auto",
                                 TC_MODE_STEPS, S);
            tc_err err = {{0}};
            if (tc_group_parse(groups[k], &s->group, &err))
                fail_msg("group: %s", err.msg);
            tc_compare_out *o = NULL;
            if (tc_run_compare(s, NULL, &o, &err))
                fail_msg("compare %s: %s", groups[k], err.msg);
            assert_int_equal(o->group.kind, s->group.kind);
            assert_int_equal(o->ngroups[0], k == 0 ? 16 : 4);
            t[w] = tc_compare_at(o, 0, 0, 0)->time_s;
            tc_compare_out_free(o);
            tc_scenario_free(s);
        }
        if (t[0] != t[1])
            fail_msg("group %s: slice %.12g s, standalone %.12g s", groups[k], t[0], t[1]);
    }
}

/* failures draws one cable of the 8x8x8 torus per trial: a draw outside
 * the slice's box leaves the job on its own torus exactly as it was, one
 * inside slows it as the same cable slows the standalone 4x4x4 torus. The
 * sorted slowdowns equal those expected draw by draw. */
static void failures_draws_map_into_the_box(void **state)
{
    (void)state;
    double S = 64.0 * 1048576;
    uint32_t trials = 40;
    tc_scenario *s = scn(TC_CMD_FAILURES, P8, NULL, "slice:ocs=4", 64, "torus-bi", TC_MODE_STEPS, S);
    snprintf(s->fail_random, sizeof s->fail_random, "links=2,seed=3");
    s->trials = trials;
    tc_failures_out *f = NULL;
    tc_err err = {{0}};
    if (tc_run_failures(s, NULL, &f, &err))
        fail_msg("failures: %s", err.msg);
    assert_int_equal(f->topo[0].ran, trials);
    tc_fail_random fr;
    assert_int_equal(tc_fail_random_parse(s->fail_random, &fr, &err), TC_OK);
    tc_topo *st = topo(S4);
    double healthy = eval_on(st, NULL, 64, TC_ALGO_TORUS_BI, TC_MODE_STEPS, S);
    double *want = calloc(trials, sizeof *want);
    uint32_t inside = 0;
    for (uint32_t k = 0; k < trials; k++) {
        tc_topo *pt = topo(P8), *sk = topo(S4);
        tc_fail_drawn d;
        assert_int_equal(tc_topo_fail_random(pt, &fr, k, &d, &err), TC_OK);
        bool any = false;
        for (uint32_t c = 0; c < d.ncables; c++) {
            const tc_link *l = &pt->links[d.cables[c]];
            uint32_t xs = l->src % 8, ys = l->src / 8 % 8, zs = l->src / 64;
            uint32_t xd = l->dst % 8, yd = l->dst / 8 % 8, zd = l->dst / 64;
            if (xs < 4 && ys < 4 && zs < 4 && xd < 4 && yd < 4 && zd < 4) {
                /* the same cable on the standalone torus */
                uint32_t v = xs + 4 * ys + 16 * zs;
                int dim = l->level - 1;
                assert_int_equal(tc_topo_fail_link(sk, tc_topo_torus_link(sk, v, dim, l->dir), true, &err), TC_OK);
                any = true;
            }
        }
        inside += any;
        want[k] = any ? eval_on(sk, NULL, 64, TC_ALGO_TORUS_BI, TC_MODE_STEPS, S) / healthy : 1;
        tc_fail_drawn_free(&d);
        tc_topo_free(pt);
        tc_topo_free(sk);
    }
    assert_true(inside > 0 && inside < trials); /* both kinds drawn */
    for (uint32_t i = 1; i < trials; i++)
        for (uint32_t j = i; j > 0 && want[j - 1] > want[j]; j--) {
            double x = want[j];
            want[j] = want[j - 1];
            want[j - 1] = x;
        }
    for (uint32_t k = 0; k < trials; k++)
        if (!close_to(f->topo[0].slowdown[k], want[k], 1e-12))
            fail_msg("draw %u (sorted): slowdown %.12g, expected %.12g", k, f->topo[0].slowdown[k], want[k]);
    free(want);
    tc_topo_free(st);
    tc_failures_out_free(f);
    tc_scenario_free(s);
}

static tc_scenario *jobs_scn(const char *topo_spec, const char *jobs)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_CONCURRENT);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", topo_spec);
    s->ntopo = 1;
    char doc[4096];
    snprintf(doc, sizeof doc, "{\"concurrent\": {\"jobs\": %s}}", jobs);
    json_error_t je;
    json_t *root = json_loads(doc, 0, &je);
    if (!root)
        fail_msg("test JSON: %s", je.text);
    tc_err err = {{0}};
    tc_status st = tc_scenario_read_json(s, root, "test", &err);
    json_decref(root);
    if (st != TC_OK || tc_scenario_resolve(s, &err) != TC_OK)
        fail_msg("jobs: %s", err.msg);
    return s;
}

/* concurrent: the job on a slice of the optical switches runs alone on its
 * own torus, its time the standalone torus's (flow) and its slowdown
 * exactly 1, whatever else runs; the job on a slice without them runs as
 * its implicit group on the topology, alone in the time collective gives
 * it, and is slowed by a job on its endpoints 0-3 (a ring along x). */
static void concurrent_ocs_job_is_alone(void **state)
{
    (void)state;
    double S = 16.0 * 1048576;
    double own = coll_time(S4, NULL, 0, "torus-bi", TC_MODE_FLOW, S);
    double line = coll_time(P8, "slice:shape=4x4x4", 0, "torus-bi", TC_MODE_FLOW, S);
    for (int k = 0; k < 2; k++) {
        char jobs[1024];
        snprintf(jobs, sizeof jobs,
                 "[{\"name\": \"line\", \"op\": \"allreduce\", \"algo\": \"torus-bi\", \"size\": \"16MiB\", "
                 "\"place\": \"slice:shape=4x4x4\"}, {\"name\": \"ocs\", \"op\": \"allreduce\", \"algo\": "
                 "\"torus-bi\", \"size\": \"16MiB\", \"place\": \"slice:shape=4x4x4,ocs=4\"}%s]",
                 k ? ", {\"name\": \"x\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"64MiB\", "
                     "\"endpoints\": \"0-3\"}"
                   : "");
        tc_scenario *s = jobs_scn(P8, jobs);
        tc_concurrent_out *o = NULL;
        tc_err err = {{0}};
        if (tc_run_concurrent(s, NULL, &o, &err))
            fail_msg("concurrent: %s", err.msg);
        const tc_concurrent_job *l = &o->jobs[0], *c = &o->jobs[1];
        assert_true(c->shape.ocs_wrap);
        assert_int_equal(c->nflow, 0);
        assert_int_equal(l->ngroups, 0);
        assert_int_equal(c->ngroups, 0);
        if (c->slowdown != 1.0 || c->res.time_s != own || c->alone_s != own)
            fail_msg("run %d: ocs job %.12g s alone %.12g s slowdown %.12g; its torus alone %.12g s", k,
                     c->res.time_s, c->alone_s, c->slowdown, own);
        if (!close_to(l->alone_s, line, 1e-12))
            fail_msg("run %d: line job alone %.12g s, collective %.12g s", k, l->alone_s, line);
        if (k == 0 && !close_to(l->slowdown, 1, 1e-9))
            fail_msg("line job alone with the ocs job: slowdown %.12g", l->slowdown);
        if (k == 1 && !(l->slowdown > 1.01))
            fail_msg("line job with an all-to-all over its links: slowdown %.12g", l->slowdown);
        assert_true(o->flow.makespan_s >= c->res.finish_s - c->res.start_s);
        tc_concurrent_out_free(o);
        tc_scenario_free(s);
    }
    /* every job on its own torus: no shared simulation at all */
    tc_scenario *s = jobs_scn(P8, "[{\"name\": \"a\", \"op\": \"allreduce\", \"algo\": \"torus-bi\", \"size\": "
                                  "\"16MiB\", \"start\": \"1ms\", \"place\": \"slice:shape=4x4x4,ocs=4\"}]");
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_concurrent(s, NULL, &o, &err))
        fail_msg("concurrent: %s", err.msg);
    assert_true(o->jobs[0].slowdown == 1.0 && close_to(o->jobs[0].res.time_s, own, 1e-12));
    assert_true(close_to(o->jobs[0].res.start_s, 1e-3, 1e-12));
    assert_true(o->flow.makespan_s == o->jobs[0].res.finish_s - o->jobs[0].res.start_s);
    tc_concurrent_out_free(o);
    tc_scenario_free(s);
}

/* collective on the endpoints listed, in their order (place list). */
static double list_time(const char *topo_spec, const uint32_t *ep, uint32_t n, const char *algo, tc_mode mode,
                        double bytes)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_COLLECTIVE);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", topo_spec);
    s->ntopo = 1;
    s->ops[0] = TC_OP_ALLREDUCE;
    s->nops = 1;
    s->sizes = malloc(sizeof *s->sizes);
    s->sizes[0] = bytes;
    s->nsizes = 1;
    snprintf(s->algos[0], sizeof s->algos[0], "%s", algo);
    s->nalgos = 1;
    s->mode = mode;
    s->job.policy = TC_PLACE_LIST;
    s->job.endpoints = malloc(n * sizeof *ep);
    memcpy(s->job.endpoints, ep, n * sizeof *ep);
    s->job.nendpoints = n;
    tc_err err = {{0}};
    if (tc_scenario_resolve(s, &err))
        fail_msg("resolve: %s", err.msg);
    tc_collective_out *o = NULL;
    if (tc_run_collective(s, NULL, &o, &err))
        fail_msg("collective: %s", err.msg);
    double t = o->res[0].time_s;
    tc_collective_out_free(o);
    tc_scenario_free(s);
    return t;
}

/* A job whose endpoints fill a box but whose ranks are not in the box's
 * coordinate order keeps its order: it runs as placed, not as the
 * implicit group (which numbers ranks by coordinates). On a 16-ring with
 * L = 1 us, B = 50 GB/s, the ring all-reduce over 0,4,1,5,2,6,3,7 sends
 * 0->4, 1->5, 2->6, 3->7 over link 3->4 (4 flows) and 4->1, 5->2, 6->3,
 * 7->0 over link 4->3, 7->0 in 7 hops: 14 (7 L + 4 (S/8)/B) (formula and
 * steps); in order, one flow a link, 14 (7 L + (S/8)/B). On an 8x8 torus
 * a shuffled 4x4 box is slower than the ordered one (ring and rhd), and
 * equals the same ranks placed without the slice path (tc_evaluate with
 * the map). Same in concurrent (flow: ranks not in lock-step, so at most
 * the steps figure). */
static void rank_order_is_kept(void **state)
{
    (void)state;
    double S = 64.0 * 1048576, L = 1e-6;
    const char *R16 = "torus:dims=16,lat=1us,hop_lat=0,alpha=0";
    uint32_t shuf[8] = {0, 4, 1, 5, 2, 6, 3, 7}, ord[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    tc_topo *t = topo(R16);
    tc_slice_run sr;
    tc_err err = {{0}};
    assert_int_equal(tc_place_slice_run(t, ord, 8, 0, &sr, &err), TC_OK);
    assert_int_equal(sr.axes.kind, TC_GROUP_AXES);
    assert_int_equal(tc_place_slice_run(t, shuf, 8, 0, &sr, &err), TC_OK);
    assert_true(sr.shape.slice);
    assert_int_equal(sr.axes.kind, TC_GROUP_NONE);
    assert_null(sr.topo);
    tc_topo_free(t);
    for (tc_mode m = TC_MODE_FORMULA; m <= TC_MODE_STEPS; m++) {
        double want = 14 * (7 * L + 4 * (S / 8) / BW), got = list_time(R16, shuf, 8, "ring", m, S);
        if (!close_to(got, want, 1e-6))
            fail_msg("mode %d: shuffled ring %.12g s, by hand %.12g s", (int)m, got, want);
        want = 14 * (7 * L + (S / 8) / BW), got = list_time(R16, ord, 8, "ring", m, S);
        if (!close_to(got, want, 1e-6))
            fail_msg("mode %d: ordered ring %.12g s, by hand %.12g s", (int)m, got, want);
    }
    const char *T8 = "torus:dims=8x8,lat=1us,hop_lat=0,alpha=0";
    uint32_t box[16] = {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
    uint32_t mix[16] = {27, 0, 9, 18, 3, 24, 1, 10, 16, 11, 2, 26, 19, 8, 25, 17};
    t = topo(T8);
    const tc_algo algos[] = {TC_ALGO_RING, TC_ALGO_RHD};
    for (int a = 0; a < 2; a++) {
        const char *name = tc_algo_name(algos[a]);
        double o = list_time(T8, box, 16, name, TC_MODE_STEPS, S), x = list_time(T8, mix, 16, name, TC_MODE_STEPS, S);
        double placed = eval_on(t, mix, 16, algos[a], TC_MODE_STEPS, S);
        if (!(x > 1.2 * o) || x != placed)
            fail_msg("%s: shuffled box %.12g s, as placed %.12g s, ordered box %.12g s", name, x, placed, o);
    }
    tc_topo_free(t);
    /* concurrent: the same job given by its endpoints, alone */
    tc_scenario *s = jobs_scn(R16, "[{\"name\": \"a\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": "
                                   "\"64MiB\", \"endpoints\": \"0,4,1,5,2,6,3,7\"}]");
    tc_concurrent_out *c = NULL;
    if (tc_run_concurrent(s, NULL, &c, &err))
        fail_msg("concurrent: %s", err.msg);
    double want = 14 * (7 * L + 4 * (S / 8) / BW), flow = list_time(R16, shuf, 8, "ring", TC_MODE_FLOW, S);
    if (!close_to(c->jobs[0].res.time_s, flow, 1e-9) || !(flow <= want && flow > 0.95 * want))
        fail_msg("concurrent: shuffled ring %.12g s, collective (flow) %.12g s, by hand (steps) %.12g s",
                 c->jobs[0].res.time_s, flow, want);
    tc_concurrent_out_free(c);
    tc_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_is_the_standalone_torus),
        cmocka_unit_test(ocs_slice_is_the_standalone_torus),
        cmocka_unit_test(failures_inside_the_box_only),
        cmocka_unit_test(the_commands_agree),
        cmocka_unit_test(groups_on_the_slice_torus),
        cmocka_unit_test(failures_draws_map_into_the_box),
        cmocka_unit_test(concurrent_ocs_job_is_alone),
        cmocka_unit_test(rank_order_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
