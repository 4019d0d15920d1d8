/*
 * test_jobs.c - concurrent jobs placed by a policy (a jobs file's "ranks"
 * and "place"): placed in file order on the endpoints the jobs before them
 * left free, so they never overlap; packed jobs take whole leaves, slice
 * jobs disjoint boxes; a job that does not fit is refused naming it; a run
 * equals the same run with the endpoints written out; the policy round
 * trips through the scenario's JSON.
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

/* A concurrent scenario on topo with the jobs of a JSON list. */
static tc_scenario *jobs_scn(const char *topo, const char *jobs)
{
    tc_scenario *s = tc_scenario_new(TC_CMD_CONCURRENT);
    assert_non_null(s);
    snprintf(s->topo[0], sizeof s->topo[0], "%s", topo);
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
    if (st != TC_OK)
        fail_msg("read: %s", err.msg);
    if (tc_scenario_resolve(s, &err) != TC_OK)
        fail_msg("resolve: %s", err.msg);
    return s;
}

static tc_concurrent_out *run(const tc_scenario *s)
{
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_concurrent(s, NULL, &o, &err) != TC_OK)
        fail_msg("concurrent: %s", err.msg);
    return o;
}

static tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

/* The maps of the scenario's jobs placed in order, as the run places them. */
static void place_all(const tc_topo *t, const tc_scenario *s, uint32_t **maps, uint32_t *p)
{
    uint8_t *busy = calloc(t->n_endpoints, 1);
    assert_non_null(busy);
    for (size_t i = 0; i < s->njobs; i++) {
        tc_err err = {{0}};
        if (tc_place_map_free(t, &s->jobs[i].place, busy, &maps[i], &p[i], NULL, &err) != TC_OK)
            fail_msg("job %zu: %s", i, err.msg);
    }
    free(busy);
}

static void two_packed_jobs_take_disjoint_whole_leaves(void **state)
{
    (void)state;
    const char *spec = "clos:down=8x8,up=1x4";
    tc_scenario *s = jobs_scn(spec, "[{\"name\": \"A\", \"op\": \"allreduce\", \"size\": \"16MiB\", \"ranks\": 16, "
                                    "\"place\": \"packed\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": "
                                    "\"16MiB\", \"ranks\": 16, \"place\": \"packed\"}]");
    tc_topo *t = topo(s->topo[0]);
    uint32_t *maps[2], p[2];
    place_all(t, s, maps, p);
    /* leaf of endpoint e: e / 8; each job fills its leaves whole, and no
     * leaf holds both jobs */
    int owner[8], count[8] = {0};
    for (int l = 0; l < 8; l++)
        owner[l] = -1;
    for (int j = 0; j < 2; j++) {
        assert_int_equal(p[j], 16);
        for (uint32_t r = 0; r < p[j]; r++) {
            uint32_t l = maps[j][r] / 8;
            if (owner[l] >= 0 && owner[l] != j)
                fail_msg("leaf %u holds jobs %d and %d", l, owner[l], j);
            owner[l] = j;
            count[l]++;
        }
    }
    for (int l = 0; l < 8; l++)
        assert_true(count[l] == 0 || count[l] == 8);
    /* the run reports the same: 2 leaves in 1 pod each */
    tc_concurrent_out *o = run(s);
    for (int j = 0; j < 2; j++) {
        assert_int_equal(o->jobs[j].ranks, 16);
        assert_int_equal(o->jobs[j].shape.policy, TC_PLACE_PACKED);
        assert_int_equal(o->jobs[j].shape.leaves, 2);
        assert_int_equal(o->jobs[j].shape.pods, 1);
    }
    tc_concurrent_out_free(o);
    free(maps[0]);
    free(maps[1]);
    tc_topo_free(t);
    tc_scenario_free(s);
}

/* A packed job after one that took part of a leaf takes a whole free leaf,
 * not the rest of that one. */
static void packed_after_a_partial_leaf_takes_a_whole_leaf(void **state)
{
    (void)state;
    tc_scenario *s = jobs_scn("clos:down=8x8,up=1x4",
                              "[{\"op\": \"allreduce\", \"size\": \"1MiB\", \"ranks\": 12, \"place\": \"packed\"}, "
                              "{\"op\": \"allreduce\", \"size\": \"1MiB\", \"ranks\": 8, \"place\": \"packed\"}]");
    tc_topo *t = topo(s->topo[0]);
    uint32_t *maps[2], p[2];
    place_all(t, s, maps, p);
    uint32_t leaf = maps[1][0] / 8;
    for (uint32_t r = 0; r < 8; r++)
        assert_int_equal(maps[1][r] / 8, leaf);
    for (uint32_t r = 0; r < 12; r++)
        assert_int_not_equal(maps[0][r] / 8, leaf);
    free(maps[0]);
    free(maps[1]);
    tc_topo_free(t);
    tc_scenario_free(s);
}

static void two_slice_jobs_take_disjoint_boxes(void **state)
{
    (void)state;
    tc_scenario *s = jobs_scn("torus:dims=4x4x4", "[{\"name\": \"s1\", \"op\": \"allreduce\", \"size\": \"4MiB\", "
                                                  "\"place\": \"slice:shape=2x2x4\"}, {\"name\": \"s2\", \"op\": "
                                                  "\"allreduce\", \"size\": \"4MiB\", \"ranks\": 16, \"place\": "
                                                  "\"slice\"}]");
    tc_topo *t = topo(s->topo[0]);
    uint32_t *maps[2], p[2];
    place_all(t, s, maps, p);
    uint8_t seen[64] = {0};
    for (int j = 0; j < 2; j++) {
        assert_int_equal(p[j], 16);
        for (uint32_t r = 0; r < p[j]; r++) {
            assert_int_equal(seen[maps[j][r]], 0);
            seen[maps[j][r]] = 1;
        }
    }
    tc_concurrent_out *o = run(s);
    for (int j = 0; j < 2; j++) {
        const tc_place_shape *sh = &o->jobs[j].shape;
        assert_true(sh->slice);
        assert_int_equal(sh->extent[0] * sh->extent[1] * sh->extent[2], 16);
    }
    /* the first is the 2x2x4 asked, at the origin; the second beside it */
    assert_int_equal(o->jobs[0].shape.extent[0], 2);
    assert_int_equal(o->jobs[0].shape.extent[2], 4);
    assert_int_equal(o->jobs[0].shape.origin[0], 0);
    assert_true(o->jobs[1].shape.origin[0] >= 2 || o->jobs[1].shape.origin[1] >= 2);
    tc_concurrent_out_free(o);
    free(maps[0]);
    free(maps[1]);
    tc_topo_free(t);
    tc_scenario_free(s);
}

static void a_job_that_does_not_fit_is_refused_naming_it(void **state)
{
    (void)state;
    /* 16 + 16 leave 32 endpoints: no 4x4x1 box is free any more */
    tc_scenario *s = jobs_scn("torus:dims=4x4x4",
                              "[{\"name\": \"s1\", \"op\": \"allreduce\", \"size\": \"4MiB\", \"place\": "
                              "\"slice:shape=2x2x4\"}, {\"name\": \"s2\", \"op\": \"allreduce\", \"size\": \"4MiB\", "
                              "\"ranks\": 16, \"place\": \"slice\"}, {\"name\": \"late\", \"op\": \"allreduce\", "
                              "\"size\": \"4MiB\", \"place\": \"slice:shape=4x4x1\"}]");
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_concurrent(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    if (!strstr(err.msg, "jobs[2] (late)") || !strstr(err.msg, "free") || strchr(err.msg, '\n'))
        fail_msg("'%s' does not name the job", err.msg);
    tc_scenario_free(s);
    /* more ranks than the free endpoints, on a Clos */
    s = jobs_scn("clos:down=8x8,up=1x4", "[{\"name\": \"A\", \"op\": \"allreduce\", \"size\": \"1MiB\", \"ranks\": 40, "
                                         "\"place\": \"packed\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": "
                                         "\"1MiB\", \"ranks\": 32, \"place\": \"first\"}]");
    assert_int_equal(tc_run_concurrent(s, NULL, &o, &err), TC_EINVAL);
    if (!strstr(err.msg, "jobs[1] (B)") || !strstr(err.msg, "24"))
        fail_msg("'%s' does not name the job and the free endpoints", err.msg);
    tc_scenario_free(s);
}

static void both_endpoints_and_a_policy_is_refused_naming_the_job(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"ranks\": 4, \"endpoints\": \"0-3\"}", "(X)"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"place\": \"packed\", \"endpoints\": \"0-3\"}",
         "(X)"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"place\": \"packed\"}", "missing ranks"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"ranks\": 4, \"place\": \"list\"}", "endpoints"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"ranks\": 4, \"place\": \"packed:seed=2\"}",
         "placement"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024, \"ranks\": 6, \"place\": \"slice:shape=2x2\"}",
         "shape"},
        {"{\"name\": \"X\", \"op\": \"allreduce\", \"size\": 1024}", "missing its endpoints"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        tc_scenario *s = tc_scenario_new(TC_CMD_CONCURRENT);
        char doc[512];
        snprintf(doc, sizeof doc, "{\"concurrent\": {\"jobs\": [%s]}}", bad[k][0]);
        json_t *root = json_loads(doc, 0, NULL);
        assert_non_null(root);
        tc_err err = {{0}};
        assert_int_equal(tc_scenario_read_json(s, root, "test", &err), TC_EINVAL);
        if (!strstr(err.msg, bad[k][1]) || !strstr(err.msg, "jobs[0]") || strchr(err.msg, '\n'))
            fail_msg("%s: '%s' does not say '%s'", bad[k][0], err.msg, bad[k][1]);
        json_decref(root);
        tc_scenario_free(s);
    }
}

/* The endpoints of a map as a ranges string. */
static void ranges(const uint32_t *m, uint32_t n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%u", i ? "," : "", m[i]);
}

static void same_times(const tc_concurrent_out *a, const tc_concurrent_out *b)
{
    assert_int_equal(a->njobs, b->njobs);
    for (size_t i = 0; i < a->njobs; i++) {
        assert_int_equal(a->jobs[i].ranks, b->jobs[i].ranks);
        assert_int_equal(a->jobs[i].algo, b->jobs[i].algo);
        assert_true(a->jobs[i].res.time_s == b->jobs[i].res.time_s);
        assert_true(a->jobs[i].res.finish_s == b->jobs[i].res.finish_s);
        assert_true(a->jobs[i].alone_s == b->jobs[i].alone_s);
        assert_int_equal(a->jobs[i].shape.leaves, b->jobs[i].shape.leaves);
        assert_int_equal(a->jobs[i].shape.slice, b->jobs[i].shape.slice);
        assert_memory_equal(a->jobs[i].shape.origin, b->jobs[i].shape.origin, sizeof a->jobs[i].shape.origin);
    }
    assert_true(a->flow.makespan_s == b->flow.makespan_s);
    assert_int_equal(a->flow.events, b->flow.events);
}

/* The run with policies equals the run with the endpoints written out: by
 * hand where the policy's choice is plain (the first free leaves, the
 * slice at the origin), from the placement itself for random. */
static void placed_jobs_equal_their_endpoints_written_out(void **state)
{
    (void)state;
    struct {
        const char *topo, *placed, *explicit;
    } cases[] = {
        {"clos:down=8x8,up=1x2",
         "[{\"name\": \"A\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"16MiB\", \"ranks\": 16, \"place\": "
         "\"packed\"}, {\"name\": \"B\", \"op\": \"allgather\", \"size\": \"16MiB\", \"ranks\": 16, \"place\": "
         "\"packed\"}, {\"name\": \"C\", \"op\": \"alltoall\", \"size\": \"4MiB\", \"ranks\": 8, \"place\": "
         "\"random:seed=5\"}]",
         NULL},
        {"torus:dims=4x4x4",
         "[{\"name\": \"A\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"16MiB\", \"place\": "
         "\"slice:shape=2x2x4\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": \"16MiB\", \"ranks\": 8, "
         "\"place\": \"first\"}]",
         /* A: x 0-1, y 0-1, z 0-3, first dimension fastest; B: the first 8 free endpoints */
         "[{\"name\": \"A\", \"op\": \"allreduce\", \"algo\": \"ring\", \"size\": \"16MiB\", \"endpoints\": "
         "\"0,1,4,5,16,17,20,21,32,33,36,37,48,49,52,53\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": "
         "\"16MiB\", \"endpoints\": \"2,3,6-11\"}]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tc_scenario *s = jobs_scn(cases[k].topo, cases[k].placed);
        char ex[8192];
        if (cases[k].explicit) {
            snprintf(ex, sizeof ex, "%s", cases[k].explicit);
        } else {
            /* the maps the policies make, each job written with its endpoints */
            tc_topo *t = topo(s->topo[0]);
            uint32_t *maps[3], p[3];
            place_all(t, s, maps, p);
            json_t *arr = tc_scenario_to_json(s);
            json_t *jobs = json_object_get(json_object_get(arr, "concurrent"), "jobs");
            assert_non_null(jobs);
            for (size_t i = 0; i < 3; i++) {
                json_t *e = json_array_get(jobs, i);
                char r[2048];
                ranges(maps[i], p[i], r, sizeof r);
                json_object_del(e, "ranks");
                json_object_del(e, "place");
                json_object_set_new(e, "endpoints", json_string(r));
                free(maps[i]);
            }
            char *d = json_dumps(jobs, 0);
            snprintf(ex, sizeof ex, "%s", d);
            free(d);
            json_decref(arr);
            tc_topo_free(t);
        }
        tc_scenario *e = jobs_scn(cases[k].topo, ex);
        for (size_t i = 0; i < e->njobs; i++)
            assert_int_equal(e->jobs[i].place.policy, TC_PLACE_LIST);
        tc_concurrent_out *a = run(s), *b = run(e);
        same_times(a, b);
        tc_concurrent_out_free(a);
        tc_concurrent_out_free(b);
        tc_scenario_free(s);
        tc_scenario_free(e);
    }
}

/* The scenario records the policy, and reading its JSON back gives the
 * same jobs (a replayed result is the same run). */
static void the_policy_round_trips_through_the_scenario(void **state)
{
    (void)state;
    tc_scenario *s = jobs_scn("torus:dims=4x4x4",
                              "[{\"name\": \"A\", \"op\": \"allreduce\", \"size\": \"4MiB\", \"place\": "
                              "\"slice:ocs=2,shape=2x2x2\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": "
                              "\"4MiB\", \"ranks\": 8, \"place\": \"random:seed=7\"}, {\"name\": \"C\", \"op\": "
                              "\"allreduce\", \"size\": \"4MiB\", \"ranks\": 4}]");
    json_t *j = tc_scenario_to_json(s);
    json_t *jobs = json_object_get(json_object_get(j, "concurrent"), "jobs");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0), "place")),
                        "slice:shape=2x2x2,ocs=2");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, 0), "ranks")), 8);
    assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 1), "place")), "random:seed=7");
    assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 2), "place")), "first");
    assert_null(json_object_get(json_array_get(jobs, 1), "endpoints"));
    tc_scenario *r = tc_scenario_new(TC_CMD_CONCURRENT);
    tc_err err = {{0}};
    if (tc_scenario_read_json(r, j, "round trip", &err) != TC_OK || tc_scenario_resolve(r, &err) != TC_OK)
        fail_msg("round trip: %s", err.msg);
    json_t *j2 = tc_scenario_to_json(r);
    assert_true(json_equal(j, j2));
    tc_concurrent_out *a = run(s), *b = run(r);
    same_times(a, b);
    assert_true(a->jobs[0].shape.ocs_wrap);
    tc_concurrent_out_free(a);
    tc_concurrent_out_free(b);
    json_decref(j);
    json_decref(j2);
    tc_scenario_free(s);
    tc_scenario_free(r);
}

/* The shape printed for each job (text and JSON), and for each topology
 * of compare. */
static void shapes_are_rendered(void **state)
{
    (void)state;
    tc_scenario *s = jobs_scn("clos:down=8x8,up=1x4",
                              "[{\"name\": \"A\", \"op\": \"allreduce\", \"size\": \"1MiB\", \"ranks\": 16, "
                              "\"place\": \"packed\"}, {\"name\": \"B\", \"op\": \"allreduce\", \"size\": \"1MiB\", "
                              "\"endpoints\": \"60-63\"}]");
    tc_concurrent_out *o = run(s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    tc_concurrent_print(o, s, f);
    fclose(f);
    if (!strstr(buf, "  A  packed, 16 ranks: 2 leaves, 1 pod\n") || !strstr(buf, "  B  list, 4 ranks: 1 leaf, 1 pod\n"))
        fail_msg("no placement lines in:\n%s", buf);
    free(buf);
    json_t *j = tc_concurrent_json(o, s);
    json_t *pl = json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "placement");
    assert_string_equal(json_string_value(json_object_get(pl, "policy")), "packed");
    assert_int_equal(json_integer_value(json_object_get(pl, "leaves")), 2);
    json_decref(j);
    tc_concurrent_out_free(o);
    tc_scenario_free(s);

    s = tc_scenario_new(TC_CMD_COMPARE);
    snprintf(s->topo[0], sizeof s->topo[0], "clos:down=8x8,up=1x8");
    snprintf(s->topo[1], sizeof s->topo[1], "torus:dims=4x4x4");
    s->ntopo = 2;
    s->ops[0] = TC_OP_ALLREDUCE;
    s->nops = 1;
    s->sizes = malloc(sizeof *s->sizes);
    s->sizes[0] = 1048576;
    s->nsizes = 1;
    s->job.ranks = 16;
    tc_err err = {{0}};
    if (tc_scenario_resolve(s, &err) != TC_OK)
        fail_msg("resolve: %s", err.msg);
    tc_compare_out *c = NULL;
    if (tc_run_compare(s, NULL, &c, &err) != TC_OK)
        fail_msg("compare: %s", err.msg);
    assert_int_equal(c->shape[0].leaves, 2);
    assert_true(c->shape[1].slice);
    f = open_memstream(&buf, &len);
    tc_compare_print(c, s, f);
    fclose(f);
    if (!strstr(buf, "placement: first, 16 ranks: 2 leaves, 1 pod\n") ||
        !strstr(buf, "placement: first, 16 ranks: slice 4x4x1 at (0,0,0)"))
        fail_msg("no placement lines in:\n%s", buf);
    free(buf);
    j = tc_compare_json(c, s);
    pl = json_object_get(json_array_get(json_object_get(j, "topologies"), 1), "placement");
    assert_true(json_is_true(json_object_get(pl, "slice")));
    json_decref(j);
    tc_compare_out_free(c);
    tc_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_packed_jobs_take_disjoint_whole_leaves),
        cmocka_unit_test(packed_after_a_partial_leaf_takes_a_whole_leaf),
        cmocka_unit_test(two_slice_jobs_take_disjoint_boxes),
        cmocka_unit_test(a_job_that_does_not_fit_is_refused_naming_it),
        cmocka_unit_test(both_endpoints_and_a_policy_is_refused_naming_the_job),
        cmocka_unit_test(placed_jobs_equal_their_endpoints_written_out),
        cmocka_unit_test(the_policy_round_trips_through_the_scenario),
        cmocka_unit_test(shapes_are_rendered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
