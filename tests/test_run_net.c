/*
 * test_run_net.c - the network commands run from a scenario (topo,
 * collective, compare, concurrent): the outcomes agree with the library
 * calls they stand for, and their renderings carry plain numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/render.h"

#define MiB 1048576.0

static tc_scenario *scn(tc_command c, const char *topo)
{
    tc_scenario *s = tc_scenario_new(c);
    assert_non_null(s);
    if (topo) {
        snprintf(s->topo[0], sizeof s->topo[0], "%s", topo);
        s->ntopo = 1;
    }
    return s;
}

static void set_sizes(tc_scenario *s, const double *sizes, size_t n)
{
    free(s->sizes);
    s->sizes = malloc(n * sizeof *s->sizes);
    assert_non_null(s->sizes);
    memcpy(s->sizes, sizes, n * sizeof *sizes);
    s->nsizes = n;
}

static tc_scenario *coll_scn(const char *topo, tc_op op, const double *sizes, size_t n, const char *algo, tc_mode mode)
{
    tc_scenario *s = scn(TC_CMD_COLLECTIVE, topo);
    s->ops[0] = op;
    s->nops = 1;
    set_sizes(s, sizes, n);
    snprintf(s->algos[0], sizeof s->algos[0], "%s", algo);
    s->nalgos = 1;
    s->mode = mode;
    return s;
}

static void resolve(tc_scenario *s)
{
    tc_err err = {{0}};
    if (tc_scenario_resolve(s, &err) != TC_OK)
        fail_msg("resolve: %s", err.msg);
}

static tc_collective_out *run_coll(tc_scenario *s)
{
    resolve(s);
    tc_collective_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_collective(s, NULL, &o, &err) != TC_OK)
        fail_msg("collective: %s", err.msg);
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

static tc_result direct(const tc_topo *t, tc_op op, tc_algo algo, double bytes, tc_mode mode)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = t->n_endpoints, .bytes = bytes};
    tc_eval_opts o = {.mode = mode};
    tc_result r;
    tc_err err = {{0}};
    if (tc_evaluate(t, &req, &o, &r, &err) != TC_OK)
        fail_msg("tc_evaluate: %s", err.msg);
    return r;
}

static void assert_same_result(const tc_result *a, const tc_result *b)
{
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->algo, b->algo);
    assert_int_equal(a->algo_requested, b->algo_requested);
    assert_int_equal(a->ranks, b->ranks);
    assert_int_equal(a->phases, b->phases);
    assert_int_equal(a->steps, b->steps);
    assert_true(a->bytes == b->bytes);
    assert_true(a->time_s == b->time_s);
    assert_true(a->algbw_Bps == b->algbw_Bps);
    assert_true(a->busbw_Bps == b->busbw_Bps);
    assert_true(a->lower_bound_s == b->lower_bound_s);
}

static void collective_outcome_equals_tc_evaluate_on_the_same_inputs(void **state)
{
    (void)state;
    const char *spec = "clos:down=8x8,up=1x8,bw=400Gbps,lat=1us";
    const char *algos[] = {"auto", "ring", "rhd"};
    tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS};
    tc_topo *t = topo(spec);
    double size = 64 * MiB;
    for (int a = 0; a < 3; a++)
        for (int m = 0; m < 2; m++) {
            tc_scenario *s = coll_scn(spec, TC_OP_ALLREDUCE, &size, 1, algos[a], modes[m]);
            tc_collective_out *o = run_coll(s);
            assert_int_equal(o->nalgos, 1);
            assert_int_equal(o->nsizes, 1);
            tc_coll_req q = {0};
            assert_int_equal(tc_algo_parse(algos[a], &q, NULL), TC_OK);
            tc_result want = direct(t, TC_OP_ALLREDUCE, q.algo, size, modes[m]);
            assert_same_result(tc_collective_at(o, 0, 0), &want);
            assert_true(o->info.injection_Bps > 0);
            tc_collective_out_free(o);
            tc_scenario_free(s);
        }
    tc_topo_free(t);
}

static void algo_all_ranks_only_valid_algorithms_sorted_by_time(void **state)
{
    (void)state;
    const char *spec = "clos:down=8x8,up=1x8";
    double size = 16 * MiB;
    tc_scenario *s = coll_scn(spec, TC_OP_ALLREDUCE, &size, 1, "all", TC_MODE_FORMULA);
    s->job.ranks = 48; /* not a power of two: some algorithms refuse it */
    tc_collective_out *o = run_coll(s);
    tc_topo *t = topo(o->net.topo[0]->spec);
    size_t nvalid = 0;
    for (int a = 0; a < TC_ALGO_AUTO; a++)
        nvalid += tc_coll_valid(TC_OP_ALLREDUCE, (tc_algo)a, 48, t, NULL);
    assert_true(nvalid < TC_ALGO_AUTO);
    assert_int_equal(o->nalgos, nvalid);
    for (size_t i = 0; i < o->nalgos; i++) {
        assert_true(tc_coll_valid(TC_OP_ALLREDUCE, o->rows[i].algo, 48, t, NULL));
        assert_int_not_equal(o->rows[i].algo, TC_ALGO_AUTO);
        assert_int_equal(tc_collective_at(o, i, 0)->algo, o->rows[i].algo);
    }
    size_t order[TC_ALGO_COUNT];
    tc_collective_ranking(o, 0, order);
    for (size_t k = 1; k < o->nalgos; k++)
        assert_true(tc_collective_at(o, order[k - 1], 0)->time_s <= tc_collective_at(o, order[k], 0)->time_s);
    /* The primary table is the ranking, fastest first. */
    tc_rtable tabs[4];
    size_t n = tc_collective_tables(o, s, tabs, 4);
    assert_true(n >= 1);
    assert_string_equal(tabs[0].name, "algorithms");
    assert_int_equal(tabs[0].nrows, o->nalgos);
    int ct = -1, cr = -1;
    for (int c = 0; c < tabs[0].ncols; c++) {
        if (strcmp(tabs[0].cols[c].csv, "time_s") == 0)
            ct = c;
        if (strcmp(tabs[0].cols[c].csv, "rank") == 0)
            cr = c;
    }
    assert_true(ct >= 0 && cr >= 0);
    for (size_t r = 0; r < tabs[0].nrows; r++) {
        assert_true(tabs[0].cells[r * (size_t)tabs[0].ncols + (size_t)cr].v == (double)(r + 1));
        if (r)
            assert_true(tabs[0].cells[(r - 1) * (size_t)tabs[0].ncols + (size_t)ct].v <=
                        tabs[0].cells[r * (size_t)tabs[0].ncols + (size_t)ct].v);
    }
    for (size_t i = 0; i < n; i++)
        tc_rtable_free(&tabs[i]);
    tc_topo_free(t);
    tc_collective_out_free(o);
    tc_scenario_free(s);
}

static void size_sweep_gives_the_numbers_of_single_size_runs(void **state)
{
    (void)state;
    const char *spec = "torus:dims=4x4,lat=1us";
    const double sizes[] = {1024, 65536, 1 * MiB, 64 * MiB, 3e8};
    tc_mode modes[] = {TC_MODE_FORMULA, TC_MODE_STEPS};
    for (int m = 0; m < 2; m++) {
        tc_scenario *s = coll_scn(spec, TC_OP_ALLREDUCE, sizes, 5, "auto", modes[m]);
        tc_collective_out *o = run_coll(s);
        assert_int_equal(o->nsizes, 5);
        for (size_t i = 0; i < 5; i++) {
            tc_scenario *s1 = coll_scn(spec, TC_OP_ALLREDUCE, &sizes[i], 1, "auto", modes[m]);
            tc_collective_out *o1 = run_coll(s1);
            const tc_result *a = tc_collective_at(o, 0, i), *b = tc_collective_at(o1, 0, 0);
            assert_int_equal(a->algo, b->algo);
            /* A sweep routes each phase once and rescales its transfers;
             * a single run builds the schedule at its size: the same
             * numbers up to the rounding of the rescaling. */
            assert_true(fabs(a->time_s - b->time_s) <= 1e-12 * b->time_s);
            assert_true(a->lower_bound_s == b->lower_bound_s);
            tc_collective_out_free(o1);
            tc_scenario_free(s1);
        }
        tc_rtable tabs[2];
        size_t n = tc_collective_tables(o, s, tabs, 2);
        assert_int_equal(n, 1);
        assert_string_equal(tabs[0].name, "sizes");
        assert_int_equal(tabs[0].nrows, 5);
        assert_string_equal(tabs[0].cols[0].csv, "bytes");
        assert_string_equal(tabs[0].cols[1].csv, "count");
        assert_true(tabs[0].cells[1 * (size_t)tabs[0].ncols + 1].v == 65536 / 4);
        tc_rtable_free(&tabs[0]);
        tc_collective_out_free(o);
        tc_scenario_free(s);
    }
}

static tc_scenario *cmp_scn(const char *a, const char *b)
{
    tc_scenario *s = scn(TC_CMD_COMPARE, a);
    snprintf(s->topo[1], sizeof s->topo[1], "%s", b);
    s->ntopo = 2;
    s->ops[0] = TC_OP_ALLREDUCE;
    s->ops[1] = TC_OP_ALLTOALL;
    s->nops = 2;
    const double sizes[] = {4096, 1 * MiB, 64 * MiB};
    set_sizes(s, sizes, 3);
    return s;
}

static void compare_refuses_unequal_endpoint_counts_unless_ranks_fix_the_job(void **state)
{
    (void)state;
    tc_scenario *s = cmp_scn("clos:down=8x8,up=1x8", "torus:dims=4x4");
    resolve(s);
    tc_compare_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    assert_non_null(strstr(err.msg, "equal endpoint counts (A has 64, B has 16)"));
    assert_non_null(strstr(err.msg, "--ranks"));
    s->job.ranks = 16;
    resolve(s);
    assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_OK);
    assert_int_equal(o->ranks[0], 16);
    assert_int_equal(o->ranks[1], 16);
    /* The cells are the collective on each topology. */
    tc_result want = direct(o->net.topo[1], TC_OP_ALLTOALL, TC_ALGO_AUTO, 64 * MiB, TC_MODE_FORMULA);
    const tc_result *got = tc_compare_at(o, 1, 2, 1);
    assert_true(got->time_s == want.time_s);
    assert_true(tc_compare_at(o, 0, 0, 0)->ranks == 16);
    tc_compare_out_free(o);
    tc_scenario_free(s);
}

static void compare_winners_tie_within_a_tenth_of_a_percent(void **state)
{
    (void)state;
    /* The same topology twice: every cell is a tie of both. */
    tc_scenario *s = cmp_scn("clos:down=4x4,up=1x4", "clos:down=4x4,up=1x4");
    resolve(s);
    tc_compare_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_OK);
    double best, second;
    assert_int_equal(tc_compare_winners(o, 0, 1, &best, &second), 3u);
    assert_true(isinf(second));
    tc_compare_out_free(o);
    tc_scenario_free(s);
}

typedef struct progress_log {
    int calls;
    double last_done, last_total;
    const char *what, *unit;
} progress_log;

static void log_progress(void *ud, const tc_progress *p)
{
    progress_log *l = ud;
    l->calls++;
    l->last_done = p->done;
    l->last_total = p->total;
    l->what = p->what;
    l->unit = p->unit;
}

static void compare_in_steps_mode_reports_progress_in_cells(void **state)
{
    (void)state;
    tc_scenario *s = cmp_scn("clos:down=4x4,up=1x4", "torus:dims=4x4");
    s->mode = TC_MODE_STEPS;
    resolve(s);
    progress_log l = {0};
    tc_run_opts ro = {.progress = log_progress, .progress_ud = &l};
    tc_compare_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_compare(s, &ro, &o, &err), TC_OK);
    assert_true(l.calls >= 2);
    assert_true(l.last_total == 2 * 3 * 2);
    assert_true(l.last_done == l.last_total);
    assert_string_equal(l.what, "compare");
    assert_string_equal(l.unit, "cells");
    tc_compare_out_free(o);
    tc_scenario_free(s);
}

/* One size and one named algorithm in flow mode: one simulation gives the
 * time and the details; both equal a separate simulation of the schedule. */
static void flow_details_come_from_the_one_simulation(void **state)
{
    (void)state;
    const double size = 4 * MiB;
    tc_scenario *s = coll_scn("clos:down=4x4,up=1x2,lat=1us", TC_OP_ALLREDUCE, &size, 1, "ring", TC_MODE_FLOW);
    resolve(s);
    tc_collective_out *o = run_coll(s);
    assert_true(o->has_flow);
    assert_true(o->flow.events > 0);
    assert_true(o->res[0].time_s == o->flow.jobs[0].time_s);
    tc_topo *t = topo("clos:down=4x4,up=1x2,lat=1us");
    tc_coll_req req = {.op = TC_OP_ALLREDUCE, .algo = TC_ALGO_RING, .p = 16, .bytes = size, .elt = 4};
    tc_sched *sc = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_coll_build(&req, t, &sc, &err), TC_OK);
    tc_flow_opts fo = {.routing = TC_ROUTE_ECMP};
    double alone;
    assert_int_equal(tc_flow_time(t, sc, NULL, &fo, &alone, &err), TC_OK);
    assert_true(alone == o->res[0].time_s);
    tc_sched_free(sc);
    tc_topo_free(t);
    tc_collective_out_free(o);
    tc_scenario_free(s);
    /* auto runs its pick again for the details: the same schedule, whole
     * elements included (13 ranks, a size that does not split evenly). */
    const double odd = 1000004;
    s = coll_scn("clos:down=4x4,up=1x2,lat=1us", TC_OP_ALLREDUCE, &odd, 1, "auto", TC_MODE_FLOW);
    s->job.ranks = 13;
    resolve(s);
    o = run_coll(s);
    assert_true(o->has_flow);
    assert_true(o->res[0].time_s == o->flow.jobs[0].time_s);
    tc_collective_out_free(o);
    tc_scenario_free(s);
}

static void degraded_link_changes_the_steps_time_like_tc_topo_degrade_link(void **state)
{
    (void)state;
    const char *spec = "clos:down=4x2,up=1x1";
    double size = 64 * MiB;
    tc_scenario *s = coll_scn(spec, TC_OP_ALLREDUCE, &size, 1, "ring", TC_MODE_STEPS);
    s->degrade[0] = (tc_scn_degrade){.link = 16, .factor = 0.25};
    s->ndegrade = 1;
    tc_collective_out *o = run_coll(s);
    tc_topo *t = topo(spec);
    tc_result plain = direct(t, TC_OP_ALLREDUCE, TC_ALGO_RING, size, TC_MODE_STEPS);
    assert_int_equal(tc_topo_degrade_link(t, 16, 0.25, NULL), TC_OK);
    tc_result slow = direct(t, TC_OP_ALLREDUCE, TC_ALGO_RING, size, TC_MODE_STEPS);
    assert_true(slow.time_s > plain.time_s);
    assert_same_result(tc_collective_at(o, 0, 0), &slow);
    tc_topo_free(t);
    tc_collective_out_free(o);
    tc_scenario_free(s);
}

static void add_job(tc_scenario *s, const char *name, const uint32_t *eps, uint32_t n)
{
    tc_scn_job *v = realloc(s->jobs, (s->njobs + 1) * sizeof *v);
    assert_non_null(v);
    s->jobs = v;
    tc_scn_job *j = &s->jobs[s->njobs++];
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    j->op = TC_OP_ALLREDUCE;
    snprintf(j->algo, sizeof j->algo, "ring");
    j->bytes = 64 * MiB;
    j->place.policy = TC_PLACE_LIST;
    j->place.endpoints = malloc(n * sizeof *eps);
    assert_non_null(j->place.endpoints);
    memcpy(j->place.endpoints, eps, n * sizeof *eps);
    j->place.nendpoints = n;
}

static tc_scenario *readme_jobs(void)
{
    tc_scenario *s = scn(TC_CMD_CONCURRENT, "clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    const uint32_t a[] = {0, 4}, b[] = {1, 5};
    add_job(s, "A", a, 2);
    add_job(s, "B", b, 2);
    return s;
}

static void two_jobs_sharing_a_leaf_uplink_each_run_about_twice_as_long(void **state)
{
    (void)state;
    tc_scenario *s = readme_jobs();
    resolve(s);
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_concurrent(s, NULL, &o, &err) != TC_OK)
        fail_msg("concurrent: %s", err.msg);
    assert_int_equal(o->njobs, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(o->jobs[i].algo, TC_ALGO_RING);
        assert_int_equal(o->jobs[i].ranks, 2);
        assert_true(fabs(o->jobs[i].slowdown - 1.994) < 0.002);
        assert_true(o->jobs[i].slowdown == o->flow.jobs[i].time_s / o->jobs[i].alone_s);
    }
    assert_string_equal(o->jobs[1].name, "B");
    assert_true(o->flow.nhot > 0);
    tc_concurrent_out_free(o);
    tc_scenario_free(s);
}

static void concurrent_errors_name_the_job(void **state)
{
    (void)state;
    tc_scenario *s = readme_jobs();
    resolve(s);
    s->jobs[1].place.endpoints[1] = 99; /* after resolve: the runner checks too */
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_concurrent(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    assert_non_null(strstr(err.msg, "jobs[1] (B): "));
    assert_non_null(strstr(err.msg, "99"));
    s->jobs[1].place.endpoints[1] = 5;
    s->jobs[0].op = TC_OP_BROADCAST;
    snprintf(s->jobs[0].algo, sizeof s->jobs[0].algo, "auto:root=7");
    assert_int_equal(tc_run_concurrent(s, NULL, &o, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "jobs[0] (A): root rank 7"));
    tc_scenario_free(s);
}

/* ---- renderings ---- */

/* A CSV cell of a numeric column must read back whole as a number; a text
 * cell must not be a number with a unit glued on ("45.93ms", "1.994x"). */
static void check_csv(const tc_rtable *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    tc_rtable_print_csv(t, f);
    fclose(f);
    char *save = NULL;
    int line = 0;
    for (char *ln = strtok_r(buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save), line++) {
        if (line == 0)
            continue;
        int c = 0;
        bool quoted = false;
        char cell[1024];
        size_t k = 0;
        for (char *p = ln;; p++) {
            if (*p == '"') {
                quoted = !quoted;
                continue;
            }
            if (*p && (quoted || *p != ',')) {
                if (k + 1 < sizeof cell)
                    cell[k++] = *p;
                continue;
            }
            cell[k] = '\0';
            assert_true(c < t->ncols);
            char *end;
            double v = strtod(cell, &end);
            if (t->cols[c].kind != TC_COL_TEXT) {
                if (k && *end != '\0')
                    fail_msg("table %s column %s: '%s' is not a plain number", t->name, t->cols[c].csv, cell);
                (void)v;
            } else if (end != cell && *end != '\0' && strchr("0123456789", cell[0]) && strchr(cell, ':') == NULL) {
                fail_msg("table %s column %s: '%s' looks like a formatted number", t->name, t->cols[c].csv, cell);
            }
            c++;
            k = 0;
            if (!*p)
                break;
        }
        assert_int_equal(c, t->ncols);
    }
    assert_true(line >= 2);
    free(buf);
}

static void check_json(json_t *j)
{
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "schema_version")), 2);
    assert_non_null(json_object_get(j, "scenario"));
    json_decref(j);
}

/* The text rendering: print into mem_open's stream, then text_has. */
typedef struct memtext {
    char *buf;
    size_t len;
    FILE *f;
} memtext;

static FILE *mem_open(memtext *m)
{
    memset(m, 0, sizeof *m);
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
    return m->f;
}

static void text_has(memtext *m, const char *needle)
{
    fclose(m->f);
    if (!strstr(m->buf, needle))
        fail_msg("text lacks '%s':\n%s", needle, m->buf);
    free(m->buf);
}

/* Winners of one cell re-derived from the raw results (not through
 * tc_compare_winners): every topology within 0.1% of the fastest. */
static unsigned winners_of(const tc_compare_out *o, int k, int oi, size_t si)
{
    double best = INFINITY;
    for (int t = 0; t < o->net.n; t++)
        best = fmin(best, tc_compare_at_set(o, k, oi, si, t)->time_s);
    unsigned m = 0;
    for (int t = 0; t < o->net.n; t++)
        if (tc_compare_at_set(o, k, oi, si, t)->time_s <= best * 1.001)
            m |= 1u << t;
    return m;
}

/* With network.alphas_s, compare evaluates every alpha; each conclusion is
 * re-derived at each alpha from the raw times: the runs tile the sizes, the
 * masks are those of every size in the run at every alpha, a run "holds"
 * exactly when the winners are the same at every alpha, neighbouring runs
 * differ, and the text states each. The cells at alpha k equal a direct
 * evaluation of a topology with alpha=k. */
static void compare_conclusions_hold_at_every_alpha_or_say_where_they_flip(void **state)
{
    (void)state;
    tc_scenario *s = cmp_scn("clos:down=4x4,up=1x4,lat=1us", "torus:dims=4x4,lat=1us");
    const double sizes[] = {256, 1024, 16384, 262144, 4 * MiB, 64 * MiB};
    set_sizes(s, sizes, 6);
    const double alphas[] = {0, 500e-9, 2e-6, 5e-6};
    memcpy(s->alphas, alphas, sizeof alphas);
    s->nalphas = 4;
    resolve(s);
    tc_compare_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_OK);
    assert_int_equal(o->nset, 5);
    /* Each alpha is really evaluated: the cells equal a topology built with it. */
    tc_topo *t5 = topo("torus:dims=4x4,lat=1us,alpha=5us");
    tc_result want = direct(t5, TC_OP_ALLREDUCE, TC_ALGO_AUTO, 1024, TC_MODE_FORMULA);
    assert_true(fabs(tc_compare_at_set(o, 4, 0, 1, 1)->time_s - want.time_s) <= 1e-12 * want.time_s);
    tc_topo_free(t5);
    assert_true(tc_compare_at_set(o, 4, 0, 0, 0)->time_s > tc_compare_at_set(o, 1, 0, 0, 0)->time_s);
    int held = 0, flipped = 0;
    memtext m;
    tc_compare_print(o, s, mem_open(&m));
    fflush(m.f);
    for (int oi = 0; oi < o->nops; oi++) {
        tc_compare_run runs[6];
        size_t n = tc_compare_conclusions(o, oi, runs);
        size_t next = 0;
        for (size_t i = 0; i < n; i++) {
            const tc_compare_run *r = &runs[i];
            assert_int_equal(r->from, next);
            next = r->to + 1;
            bool same = true;
            for (int k = 0; k < o->nset; k++) {
                for (size_t si = r->from; si <= r->to; si++)
                    if (winners_of(o, k, oi, si) != r->mask[k])
                        fail_msg("%s run %zu: alpha setting %d size %zu: mask %u, re-derived %u",
                                 tc_op_name(o->ops[oi]), i, k, si, r->mask[k], winners_of(o, k, oi, si));
                same = same && r->mask[k] == r->mask[0];
            }
            assert_int_equal(r->holds, same);
            if (i > 0)
                assert_true(memcmp(runs[i - 1].mask, r->mask, (size_t)o->nset * sizeof *r->mask) != 0);
            held += same;
            flipped += !same;
        }
        assert_int_equal(next, o->nsizes);
    }
    /* Both kinds occur on this pair, and the text says each. */
    assert_true(held > 0 && flipped > 0);
    assert_non_null(strstr(m.buf, "at every alpha"));
    assert_non_null(strstr(m.buf, "it depends on alpha"));
    text_has(&m, "checked at alpha as specified, 0, 500ns, 2us, 5us");
    tc_compare_out_free(o);
    /* Steps mode costs every alpha in one routed sweep: each cell equals a
     * topology built with that alpha, lower bound included. */
    s->mode = TC_MODE_STEPS;
    resolve(s);
    assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_OK);
    tc_topo *t2 = topo("clos:down=4x4,up=1x4,lat=1us,alpha=500ns");
    for (size_t si = 0; si < o->nsizes; si++) {
        tc_result w = direct(t2, TC_OP_ALLTOALL, TC_ALGO_AUTO, sizes[si], TC_MODE_STEPS);
        const tc_result *g = tc_compare_at_set(o, 2, 1, si, 0);
        assert_true(fabs(g->time_s - w.time_s) <= 1e-12 * w.time_s);
        assert_true(fabs(g->lower_bound_s - w.lower_bound_s) <= 1e-12 * w.lower_bound_s);
        assert_int_equal(g->algo, w.algo);
    }
    tc_topo_free(t2);
    tc_compare_out_free(o);
    tc_scenario_free(s);
}

static void check_tables(const tc_rtable *tabs, size_t n, const char *primary)
{
    assert_true(n >= 1);
    assert_string_equal(tabs[0].name, primary);
    for (size_t i = 0; i < n; i++) {
        assert_false(tabs[i].oom);
        if (tabs[i].nrows)
            check_csv(&tabs[i]);
    }
}

static void free_tables(tc_rtable *tabs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tc_rtable_free(&tabs[i]);
}

static void collective_renderings(tc_scenario *s, const char *primary, const char *needle)
{
    tc_collective_out *o = run_coll(s);
    tc_rtable tabs[4];
    size_t n = tc_collective_tables(o, s, tabs, 4);
    check_tables(tabs, n, primary);
    assert_int_equal(tabs[0].nrows, primary[0] == 'r' ? 1 : tabs[0].nrows);
    free_tables(tabs, n);
    check_json(tc_collective_json(o, s));
    memtext m;
    tc_collective_print(o, s, mem_open(&m));
    text_has(&m, needle);
    tc_collective_out_free(o);
    tc_scenario_free(s);
}

static void primary_csv_tables_hold_plain_numbers_and_json_records_the_scenario(void **state)
{
    (void)state;
    const char *spec = "clos:down=4x2,up=1x2";
    double one = 8 * MiB;
    const double sizes[] = {1024, 1 * MiB, 8 * MiB};
    collective_renderings(coll_scn(spec, TC_OP_ALLREDUCE, &one, 1, "auto", TC_MODE_FORMULA), "result",
                          "(chosen by auto)");
    collective_renderings(coll_scn(spec, TC_OP_ALLGATHER, &one, 1, "ring", TC_MODE_FLOW), "result", "hottest links");
    collective_renderings(coll_scn(spec, TC_OP_BROADCAST, sizes, 3, "auto", TC_MODE_FORMULA), "sizes",
                          "per endpoint");
    collective_renderings(coll_scn(spec, TC_OP_ALLTOALL, sizes, 3, "all", TC_MODE_STEPS), "algorithms",
                          "per endpoint");

    tc_scenario *s = scn(TC_CMD_TOPO, spec);
    s->links = true;
    resolve(s);
    tc_topo_out *to = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_topo(s, NULL, &to, &err), TC_OK);
    tc_rtable tabs[4];
    size_t n = tc_topo_tables(to, s, tabs, 4);
    assert_int_equal(n, 2);
    check_tables(tabs, n, "topology");
    assert_int_equal(tabs[1].nrows, to->net.topo[0]->n_links);
    free_tables(tabs, n);
    check_json(tc_topo_json(to, s));
    memtext m;
    tc_topo_print(to, s, mem_open(&m));
    text_has(&m, "per endpoint");
    tc_topo_out_free(to);
    tc_scenario_free(s);

    s = cmp_scn(spec, "torus:dims=2x4");
    resolve(s);
    tc_compare_out *co = NULL;
    assert_int_equal(tc_run_compare(s, NULL, &co, &err), TC_OK);
    n = tc_compare_tables(co, s, tabs, 4);
    check_tables(tabs, n, "results");
    assert_int_equal(tabs[0].nrows, 2 * 3 * 2);
    free_tables(tabs, n);
    check_json(tc_compare_json(co, s));
    tc_compare_print(co, s, mem_open(&m));
    text_has(&m, "where each topology wins");
    tc_compare_out_free(co);
    tc_scenario_free(s);

    s = readme_jobs();
    resolve(s);
    tc_concurrent_out *cc = NULL;
    assert_int_equal(tc_run_concurrent(s, NULL, &cc, &err), TC_OK);
    n = tc_concurrent_tables(cc, s, tabs, 4);
    assert_int_equal(n, 2);
    check_tables(tabs, n, "jobs");
    assert_string_equal(tabs[1].name, "hot_links");
    free_tables(tabs, n);
    check_json(tc_concurrent_json(cc, s));
    tc_concurrent_print(cc, s, mem_open(&m));
    text_has(&m, "1.994x");
    tc_concurrent_out_free(cc);
    tc_scenario_free(s);
}

/* ---- sub-groups in compare and concurrent ---- */

static void set_group(tc_scenario *s, const char *spec)
{
    tc_err err = {{0}};
    if (tc_group_parse(spec, &s->group, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
}

static bool same_or_both_nan(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* Every cell of a compare with --group is collective --group on that
 * topology, exactly, in every mode. */
static void compare_with_groups_gives_collective_group_on_each_topology(void **state)
{
    (void)state;
    const char *topos[2] = {"torus:dims=4x4x4", "clos:down=8x8,up=1x8"};
    const double sizes[] = {1 * MiB, 4 * MiB};
    const struct {
        tc_mode mode;
        const char *algo;
    } runs[] = {{TC_MODE_FORMULA, "ring"}, {TC_MODE_FORMULA, "auto"}, {TC_MODE_STEPS, "ring"},
                {TC_MODE_STEPS, "auto"},   {TC_MODE_FLOW, "ring"}};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        tc_scenario *s = scn(TC_CMD_COMPARE, topos[0]);
        snprintf(s->topo[1], sizeof s->topo[1], "%s", topos[1]);
        s->ntopo = 2;
        s->ops[0] = TC_OP_ALLREDUCE;
        s->nops = 1;
        set_sizes(s, sizes, 2);
        snprintf(s->algos[0], sizeof s->algos[0], "%s", runs[k].algo);
        s->nalgos = 1;
        s->mode = runs[k].mode;
        set_group(s, "stride=8");
        resolve(s);
        tc_compare_out *o = NULL;
        tc_err err = {{0}};
        if (tc_run_compare(s, NULL, &o, &err) != TC_OK)
            fail_msg("compare: %s", err.msg);
        assert_int_equal(o->group.kind, TC_GROUP_STRIDE);
        for (int t = 0; t < 2; t++) {
            assert_int_equal(o->ngroups[t], 8);
            assert_int_equal(o->group_size[t], 8);
            tc_scenario *c = coll_scn(topos[t], TC_OP_ALLREDUCE, sizes, 2, runs[k].algo, runs[k].mode);
            set_group(c, "stride=8");
            tc_collective_out *co = run_coll(c);
            for (size_t i = 0; i < 2; i++) {
                const tc_result *a = tc_compare_at(o, 0, i, t), *b = tc_collective_at(co, 0, i);
                assert_true(a->time_s == b->time_s);
                assert_true(a->busbw_Bps == b->busbw_Bps);
                assert_true(a->lower_bound_s == b->lower_bound_s);
                assert_true(a->bytes == b->bytes);
                assert_int_equal(a->algo, b->algo);
                assert_int_equal(a->groups, 8);
                assert_int_equal(a->group_size, 8);
                assert_int_equal(a->ranks, 64);
                assert_true(same_or_both_nan(a->group_fastest_s, b->group_fastest_s));
                assert_true(runs[k].mode == TC_MODE_FLOW ? !isnan(a->group_fastest_s) : isnan(a->group_fastest_s));
            }
            tc_collective_out_free(co);
            tc_scenario_free(c);
        }
        /* The renderings say it is per group. */
        tc_rtable tab;
        assert_int_equal(tc_compare_tables(o, s, &tab, 1), 1);
        bool col = false;
        for (int c = 0; c < tab.ncols; c++)
            col = col || strcmp(tab.cols[c].csv, "group_size") == 0;
        assert_true(col);
        tc_rtable_free(&tab);
        json_t *j = tc_compare_json(o, s);
        assert_string_equal(json_string_value(json_object_get(j, "group")), "stride=8");
        assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "topologies"), 1),
                                                            "group_size")),
                         8);
        json_decref(j);
        tc_compare_out_free(o);
        tc_scenario_free(s);
    }
}

static void compare_refuses_a_group_that_does_not_fit_a_topology_naming_it(void **state)
{
    (void)state;
    const double size = 1 * MiB;
    const struct {
        const char *group, *algo, *needle;
    } bad[] = {{"node", "auto", "topology A (torus:dims=4x4x4"},
               {"axes=x", "auto", "topology B (clos:down=8x8,up=1x8"},
               {"stride=5", "auto", "topology A (torus:dims=4x4x4"},
               {"stride=8", "nccl-collnet-chain", "sharp=1"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        tc_scenario *s = scn(TC_CMD_COMPARE, "torus:dims=4x4x4");
        snprintf(s->topo[1], sizeof s->topo[1], "clos:down=8x8,up=1x8,node=8");
        s->ntopo = 2;
        s->ops[0] = TC_OP_ALLREDUCE;
        s->nops = 1;
        set_sizes(s, &size, 1);
        snprintf(s->algos[0], sizeof s->algos[0], "%s", bad[k].algo);
        s->nalgos = 1;
        set_group(s, bad[k].group);
        if (strcmp(bad[k].group, "node") == 0 && strcmp(bad[k].algo, "auto") != 0)
            snprintf(s->topo[0], sizeof s->topo[0], "torus:dims=4x4x4,node=8"); /* only the algorithm is wrong */
        resolve(s);
        tc_compare_out *o = NULL;
        tc_err err = {{0}};
        assert_int_equal(tc_run_compare(s, NULL, &o, &err), TC_EINVAL);
        assert_null(o);
        if (!strstr(err.msg, bad[k].needle) || !strstr(err.msg, "group") || strchr(err.msg, '\n'))
            fail_msg("group %s: '%s' does not name '%s'", bad[k].group, err.msg, bad[k].needle);
        tc_scenario_free(s);
    }
}

static void add_group_job(tc_scenario *s, const char *name, uint32_t first, uint32_t n, const char *algo,
                          const char *group)
{
    uint32_t *eps = malloc(n * sizeof *eps);
    assert_non_null(eps);
    for (uint32_t i = 0; i < n; i++)
        eps[i] = first + i;
    add_job(s, name, eps, n);
    free(eps);
    tc_scn_job *j = &s->jobs[s->njobs - 1];
    j->bytes = 16 * MiB;
    snprintf(j->algo, sizeof j->algo, "%s", algo);
    tc_err err = {{0}};
    if (group && tc_group_parse(group, &j->group, &err) != TC_OK)
        fail_msg("%s: %s", group, err.msg);
}

/* A grouped job runs each group as a flow job of its own, as collective
 * --group --mode flow does: alone, the same simulation, the same times;
 * auto chooses as collective --group chooses. */
static void concurrent_grouped_job_is_collective_group_in_flow(void **state)
{
    (void)state;
    const char *topo = "clos:down=8x8,up=1x8,node=8";
    const char *algos[] = {"ring", "auto"};
    for (int a = 0; a < 2; a++) {
        tc_scenario *s = scn(TC_CMD_CONCURRENT, topo);
        add_group_job(s, "dp", 0, 64, algos[a], "stride=8");
        resolve(s);
        tc_concurrent_out *o = NULL;
        tc_err err = {{0}};
        if (tc_run_concurrent(s, NULL, &o, &err) != TC_OK)
            fail_msg("concurrent: %s", err.msg);
        const tc_concurrent_job *j = &o->jobs[0];
        assert_int_equal(o->flow.njobs, 8);
        assert_int_equal(j->nflow, 8);
        assert_int_equal(j->ngroups, 8);
        assert_int_equal(j->group_size, 8);
        assert_int_equal(j->ranks, 64);

        const double size = 16 * MiB;
        tc_scenario *c = coll_scn(topo, TC_OP_ALLREDUCE, &size, 1, algos[a], TC_MODE_FLOW);
        set_group(c, "stride=8");
        tc_collective_out *co = run_coll(c);
        const tc_result *r = tc_collective_at(co, 0, 0);
        if (a == 1) {
            /* auto: collective --group's formula choice; then the same run */
            tc_scenario *cf = coll_scn(topo, TC_OP_ALLREDUCE, &size, 1, "auto", TC_MODE_FORMULA);
            set_group(cf, "stride=8");
            tc_collective_out *cfo = run_coll(cf);
            assert_int_equal(j->algo, tc_collective_at(cfo, 0, 0)->algo);
            assert_true(j->auto_chosen);
            tc_collective_out_free(cfo);
            tc_scenario_free(cf);
            tc_collective_out_free(co);
            tc_scenario_free(c);
            char named[32];
            snprintf(named, sizeof named, "%s", tc_algo_name(j->algo));
            c = coll_scn(topo, TC_OP_ALLREDUCE, &size, 1, named, TC_MODE_FLOW);
            set_group(c, "stride=8");
            co = run_coll(c);
            r = tc_collective_at(co, 0, 0);
        }
        assert_int_equal(j->algo, r->algo);
        assert_true(j->res.time_s == r->time_s);
        assert_true(j->group_fastest_s == r->group_fastest_s);
        assert_int_equal(j->group_slowest, r->group_slowest);
        assert_int_equal(j->group_fastest, r->group_fastest);
        assert_true(j->alone_s == r->time_s);
        assert_true(j->slowdown == 1.0);
        assert_true(j->bytes == r->bytes);
        tc_collective_out_free(co);
        tc_scenario_free(c);
        tc_concurrent_out_free(o);
        tc_scenario_free(s);
    }

    /* Beside another job: its flow jobs follow the groups', and the
     * grouped job's figures are its slowest group's. */
    tc_scenario *s = scn(TC_CMD_CONCURRENT, "clos:down=8x8,up=1x2,node=8");
    add_group_job(s, "dp", 0, 32, "ring", "stride=8");
    add_group_job(s, "other", 32, 32, "ring", NULL);
    resolve(s);
    tc_concurrent_out *o = NULL;
    tc_err err = {{0}};
    if (tc_run_concurrent(s, NULL, &o, &err) != TC_OK)
        fail_msg("concurrent: %s", err.msg);
    assert_int_equal(o->flow.njobs, 9);
    assert_int_equal(o->jobs[0].nflow, 8);
    assert_int_equal(o->jobs[1].flow_first, 8);
    assert_int_equal(o->jobs[1].nflow, 1);
    assert_true(isnan(o->jobs[1].group_fastest_s));
    assert_true(o->jobs[1].res.time_s == o->flow.jobs[8].time_s);
    double slowest = 0;
    for (size_t k = 0; k < 8; k++)
        slowest = fmax(slowest, o->flow.jobs[k].time_s);
    assert_true(o->jobs[0].res.time_s == slowest);
    assert_true(o->jobs[0].res.time_s == o->flow.jobs[o->jobs[0].group_slowest].time_s);
    assert_true(o->jobs[0].slowdown == o->jobs[0].res.time_s / o->jobs[0].alone_s);
    json_t *jj = tc_concurrent_json(o, s);
    json_t *j0 = json_array_get(json_object_get(jj, "jobs"), 0);
    assert_string_equal(json_string_value(json_object_get(j0, "group")), "stride=8");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j0, "groups"), "size")), 4);
    assert_null(json_object_get(json_array_get(json_object_get(jj, "jobs"), 1), "groups"));
    json_decref(jj);
    tc_concurrent_out_free(o);

    /* A group that does not fit names the job. */
    set_group(s, "none");
    tc_err e2;
    assert_int_equal(tc_group_parse("axes=x", &s->jobs[0].group, &e2), TC_OK);
    assert_int_equal(tc_run_concurrent(s, NULL, &o, &err), TC_EINVAL);
    assert_null(o);
    assert_non_null(strstr(err.msg, "jobs[0] (dp): group axes=x"));
    tc_scenario_free(s);
}

static void flow_run_over_the_memory_limit_is_refused_before_it_starts(void **state)
{
    (void)state;
    double size = 1 * MiB;
    tc_scenario *s = coll_scn("clos:down=4x2,up=1x2", TC_OP_ALLREDUCE, &size, 1, "ring", TC_MODE_FLOW);
    resolve(s);
    tc_run_opts ro = {.mem_limit_bytes = 1};
    tc_collective_out *o = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_run_collective(s, &ro, &o, &err), TC_EINVAL);
    assert_null(o);
    assert_non_null(strstr(err.msg, "--mem-limit"));
    tc_scenario_free(s);

    s = readme_jobs();
    resolve(s);
    tc_concurrent_out *c = NULL;
    assert_int_equal(tc_run_concurrent(s, &ro, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "--mem-limit"));
    tc_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(collective_outcome_equals_tc_evaluate_on_the_same_inputs),
        cmocka_unit_test(algo_all_ranks_only_valid_algorithms_sorted_by_time),
        cmocka_unit_test(size_sweep_gives_the_numbers_of_single_size_runs),
        cmocka_unit_test(compare_refuses_unequal_endpoint_counts_unless_ranks_fix_the_job),
        cmocka_unit_test(compare_winners_tie_within_a_tenth_of_a_percent),
        cmocka_unit_test(flow_details_come_from_the_one_simulation),
        cmocka_unit_test(compare_conclusions_hold_at_every_alpha_or_say_where_they_flip),
        cmocka_unit_test(compare_in_steps_mode_reports_progress_in_cells),
        cmocka_unit_test(degraded_link_changes_the_steps_time_like_tc_topo_degrade_link),
        cmocka_unit_test(two_jobs_sharing_a_leaf_uplink_each_run_about_twice_as_long),
        cmocka_unit_test(concurrent_errors_name_the_job),
        cmocka_unit_test(primary_csv_tables_hold_plain_numbers_and_json_records_the_scenario),
        cmocka_unit_test(flow_run_over_the_memory_limit_is_refused_before_it_starts),
        cmocka_unit_test(compare_with_groups_gives_collective_group_on_each_topology),
        cmocka_unit_test(compare_refuses_a_group_that_does_not_fit_a_topology_naming_it),
        cmocka_unit_test(concurrent_grouped_job_is_collective_group_in_flow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
