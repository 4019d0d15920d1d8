/*
 * test_flow_ctx.c - the flow simulation that jobs join while it runs
 * (tc_flow_ctx_*, include/topocc/flow.h): with the same jobs at the same
 * start times it gives tc_flow_run's times; a job added when another
 * completes starts then; running to a time stops there and resumes; two
 * rings sharing an up-link take the time max-min predicts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/eval.h"
#include "topocc/flow.h"
#include "build_helpers.h"

#define B400 (400e9 / 8)

static void assert_rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-15))
        fail_msg("%s: %.15g vs %.15g", what, a, b);
}

static tc_flow_ctx *ctx_new(const tc_topo *t, const tc_flow_opts *o)
{
    tc_flow_ctx *c = NULL;
    tc_err err = {{0}};
    if (tc_flow_ctx_new(t, o, &c, &err) != TC_OK)
        fail_msg("ctx: %s", err.msg);
    return c;
}

static uint32_t ctx_add(tc_flow_ctx *c, const tc_flow_job *j)
{
    uint32_t id = 0;
    tc_err err = {{0}};
    if (tc_flow_ctx_add(c, j, &id, &err) != TC_OK)
        fail_msg("add: %s", err.msg);
    return id;
}

/* Runs until every job is done; returns how many completions were seen. */
static size_t ctx_drain(tc_flow_ctx *c)
{
    size_t seen = 0;
    for (;;) {
        uint32_t done[8];
        size_t n = 0;
        double now = 0;
        tc_err err = {{0}};
        if (tc_flow_ctx_run(c, INFINITY, done, 8, &n, &now, &err) != TC_OK)
            fail_msg("run: %s", err.msg);
        if (n == 0)
            return seen;
        for (size_t i = 0; i < n; i++)
            assert_rel(tc_flow_ctx_finish(c, done[i]), now, 1e-12, "reported at its finish");
        seen += n;
    }
}

/* The same jobs at the same start times as tc_flow_run (without skipping):
 * the same finish times, over algorithms, sizes, starts and placements. */
static void same_jobs_same_times(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2,lat=1us,hop_lat=100ns");
    const tc_algo al[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DBTREE};
    unsigned seed = 3;
    for (int trial = 0; trial < 12; trial++) {
        tc_sched *s[3];
        uint32_t map[3][16];
        tc_flow_job jobs[3];
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            double bytes = (double)(1u << (10 + (seed >> 8) % 16));
            s[k] = sched(t, TC_OP_ALLREDUCE, al[(k + trial) % 3], 4 + 4 * (k % 2), bytes);
            for (uint32_t r = 0; r < 16; r++)
                map[k][r] = (r * 5 + (uint32_t)k + (uint32_t)trial) % 16;
            jobs[k] = (tc_flow_job){s[k], map[k], 1e-6 * ((seed >> 4) % 50) * k, NULL, 0};
        }
        tc_flow_opts o = {.no_skip = true};
        tc_flow_result res;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_run(t, jobs, 3, &o, &res, &err), TC_OK);
        tc_flow_ctx *c = ctx_new(t, &o);
        uint32_t id[3];
        for (int k = 0; k < 3; k++)
            id[k] = ctx_add(c, &jobs[k]);
        assert_int_equal(ctx_drain(c), 3);
        for (int k = 0; k < 3; k++) {
            char what[48];
            snprintf(what, sizeof what, "trial %d job %d", trial, k);
            assert_rel(tc_flow_ctx_finish(c, id[k]), res.jobs[k].finish_s, 1e-12, what);
        }
        tc_flow_ctx_free(c);
        tc_flow_result_free(&res);
        for (int k = 0; k < 3; k++)
            tc_sched_free(s[k]);
    }
    tc_topo_free(t);
}

/* Two leaves of 4 hosts, one spine, one up-link per leaf; 2-rank rings on
 * hosts {0, 4} and {1, 5} cross both up-links: alone a ring all-reduce of S
 * takes 2 (S/(2B) + 4 us), together 2 (S/B + 4 us) (max-min: each half
 * the up-link). Started together in the context, both take the shared
 * time; B added when A completes takes the time alone, from then. */
static void rings_sharing_an_uplink(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S);
    uint32_t ma[] = {0, 4}, mb[] = {1, 5};
    double together = 2 * (S / B400 + 4e-6), alone = 2 * (S / 2 / B400 + 4e-6);
    tc_flow_job a = {s, ma, 0, NULL, 0}, b = {s, mb, 0, NULL, 0};
    tc_flow_ctx *c = ctx_new(t, NULL);
    uint32_t ia = ctx_add(c, &a), ib = ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    assert_rel(tc_flow_ctx_finish(c, ia), together, 1e-9, "A with B");
    assert_rel(tc_flow_ctx_finish(c, ib), together, 1e-9, "B with A");
    tc_flow_ctx_free(c);

    /* B joins when A completes */
    c = ctx_new(t, NULL);
    ia = ctx_add(c, &a);
    uint32_t done[4];
    size_t n = 0;
    double now = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_flow_ctx_run(c, INFINITY, done, 4, &n, &now, &err), TC_OK);
    assert_int_equal(n, 1);
    assert_int_equal(done[0], ia);
    assert_rel(now, alone, 1e-9, "A alone");
    b.start_s = 0; /* before the time reached: starts now */
    ib = ctx_add(c, &b);
    assert_rel(tc_flow_ctx_start(c, ib), alone, 1e-12, "B starts when added");
    assert_int_equal(ctx_drain(c), 1);
    assert_rel(tc_flow_ctx_finish(c, ib), 2 * alone, 1e-9, "B alone after A");

    /* running to a time stops there with nothing done, and resumes */
    tc_flow_ctx_free(c);
    c = ctx_new(t, NULL);
    ia = ctx_add(c, &a);
    assert_int_equal(tc_flow_ctx_run(c, alone / 3, done, 4, &n, &now, &err), TC_OK);
    assert_int_equal(n, 0);
    assert_rel(now, alone / 3, 1e-15, "stopped at the time asked");
    b.start_s = now;
    ib = ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    /* B overlapped A for part of its run: A slower than alone, B ends later */
    assert_true(tc_flow_ctx_finish(c, ia) > alone * (1 + 1e-9));
    assert_true(tc_flow_ctx_finish(c, ib) > tc_flow_ctx_finish(c, ia));
    /* bad calls */
    assert_int_equal(tc_flow_ctx_run(c, 0, done, 4, &n, &now, &err), TC_EINVAL);
    uint32_t bad[] = {0, 99};
    tc_flow_job jb = {s, bad, 0, NULL, 0};
    uint32_t id;
    assert_int_equal(tc_flow_ctx_add(c, &jb, &id, &err), TC_EINVAL);
    assert_true(isnan(tc_flow_ctx_finish(c, 77)));
    tc_flow_ctx_free(c);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Blame on the two rings: together each flow runs at half its rate alone
 * (B400 / 2 against B400), so half of every flow's sending time is lost,
 * all of it to the shared leaf-spine links, none to the host links; each
 * ring sends S over each of its up-links (two steps of S/2). Alone, a ring
 * loses nothing. */
static void blame_on_shared_uplinks(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x2,up=1x1,lat=1us,hop_lat=0,alpha=0");
    double S = 1 << 26;
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, S);
    uint32_t ma[] = {0, 4}, mb[] = {1, 5};
    tc_flow_job a = {s, ma, 0, NULL, 0}, b = {s, mb, 0, NULL, 1};
    tc_err err = {{0}};
    tc_flow_ctx *c = ctx_new(t, NULL);
    assert_int_equal(tc_flow_ctx_blame(c, 2, &err), TC_OK);
    assert_int_equal(tc_flow_ctx_blame(c, 2, &err), TC_EINVAL); /* once */
    ctx_add(c, &a);
    ctx_add(c, &b);
    assert_int_equal(ctx_drain(c), 2);
    for (uint32_t tag = 0; tag < 2; tag++) {
        double sent = tc_flow_ctx_sent(c, tag), lost = tc_flow_ctx_lost(c, tag, UINT32_MAX);
        assert_rel(sent, 4 * S / B400, 1e-9, "flow-seconds sending: 2 flows x 2 steps x S/B");
        assert_rel(lost, sent / 2, 1e-9, "half lost to sharing");
        double sum = 0;
        for (uint32_t l = 0; l < t->n_links; l++) {
            double x = tc_flow_ctx_lost(c, tag, l);
            sum += x;
            if (t->links[l].level == 1)
                assert_true(x == 0); /* host links are not shared */
        }
        assert_rel(sum, lost, 1e-12, "by link, summed");
    }
    /* tag 0's bytes on host 0's way up: S (two steps of S/2) */
    uint32_t links[16], n = tc_topo_route(t, TC_ROUTE_DEFAULT, 0, 4, links);
    assert_true(n >= 2);
    for (uint32_t k = 0; k < n; k++) {
        assert_rel(tc_flow_ctx_tag_bytes(c, 0, links[k]), S, 1e-12, "tag 0 bytes on its path");
        assert_true(tc_flow_ctx_tag_bytes(c, 1, links[k]) == (t->links[links[k]].level == 1 ? 0 : S));
    }
    assert_true(tc_flow_ctx_lost(c, 2, UINT32_MAX) == 0 && tc_flow_ctx_sent(c, 7) == 0);
    tc_flow_ctx_free(c);
    /* one ring alone loses nothing */
    c = ctx_new(t, NULL);
    assert_int_equal(tc_flow_ctx_blame(c, 1, &err), TC_OK);
    ctx_add(c, &a);
    assert_int_equal(ctx_drain(c), 1);
    assert_true(tc_flow_ctx_sent(c, 0) > 0 && tc_flow_ctx_lost(c, 0, UINT32_MAX) == 0);
    tc_flow_ctx_free(c);
    tc_sched_free(s);
    tc_topo_free(t);
}

/* ---- jobs timed alone (tc_flow_opts.solo) ---- */

#define NODES 4
#define PER_NODE 5  /* jobs inside each node, one after another */
#define CROSS 4     /* jobs across the nodes, at random starts */
#define NJOBS (NODES * PER_NODE + CROSS)

typedef struct solo_run {
    double finish[NJOBS];
    double sent[3], lost[3];
    double *link_lost, *link_bytes; /* [tag * links + link] */
    uint64_t alone, sims;
    bool broken;
} solo_run;

/* One trial's jobs, driven as the training timeline drives them: each
 * node's jobs one after another (the next joins when the last completes,
 * after a gap that is sometimes none), jobs across nodes (one rank a node)
 * at random starts; blame on; jobs inside a node sometimes overlap one
 * another (two at once on the node's links: none of them alone). */
static void solo_trial(const tc_topo *t, unsigned seed, bool solo, tc_sched **s, uint32_t (*map)[4], solo_run *out)
{
    tc_flow_opts o = {.solo = solo};
    tc_flow_ctx *c = ctx_new(t, &o);
    tc_err err = {{0}};
    assert_int_equal(tc_flow_ctx_blame(c, 3, &err), TC_OK);
    unsigned x = seed;
#define RND() (x = x * 1103515245u + 12345u, (x >> 8) & 0xffff)
    uint32_t job_of[NJOBS], next[NODES];
    for (uint32_t n = 0; n < NODES; n++) {
        tc_flow_job j = {s[n * PER_NODE], map[n * PER_NODE], 1e-6 * (RND() % 20), NULL, 0};
        job_of[ctx_add(c, &j)] = n * PER_NODE;
        next[n] = 1;
        if (RND() % 3 == 0) { /* a second job at once on the same node */
            tc_flow_job k = {s[n * PER_NODE + 1], map[n * PER_NODE + 1], j.start_s, NULL, 2};
            job_of[ctx_add(c, &k)] = n * PER_NODE + 1;
            next[n] = 2;
        }
    }
    for (uint32_t k = 0; k < CROSS; k++) {
        uint32_t i = NODES * PER_NODE + k;
        tc_flow_job j = {s[i], map[i], 1e-6 * (RND() % 200), NULL, 1};
        job_of[ctx_add(c, &j)] = i;
    }
    size_t seen = 0;
    while (seen < NJOBS) {
        uint32_t done[8];
        size_t n = 0;
        double now = 0;
        if (tc_flow_ctx_run(c, INFINITY, done, 8, &n, &now, &err) != TC_OK) {
            assert_true(solo && tc_flow_ctx_solo_broken(c));
            out->broken = true;
            break;
        }
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
            uint32_t id = job_of[done[i]];
            out->finish[id] = tc_flow_ctx_finish(c, done[i]);
            seen++;
            if (id >= NODES * PER_NODE)
                continue;
            uint32_t nd = id / PER_NODE;
            if (next[nd] < PER_NODE) {
                uint32_t q = nd * PER_NODE + next[nd]++;
                double gap = RND() % 2 ? 0 : 1e-6 * (RND() % 10);
                tc_flow_job j = {s[q], map[q], now + gap, NULL, q % 3 == 1 ? 2 : 0};
                job_of[ctx_add(c, &j)] = q;
            }
        }
    }
#undef RND
    for (uint32_t g = 0; g < 3; g++) {
        out->sent[g] = tc_flow_ctx_sent(c, g);
        out->lost[g] = tc_flow_ctx_lost(c, g, UINT32_MAX);
        for (uint32_t l = 0; l < t->n_links; l++) {
            out->link_lost[g * t->n_links + l] = tc_flow_ctx_lost(c, g, l);
            out->link_bytes[g * t->n_links + l] = tc_flow_ctx_tag_bytes(c, g, l);
        }
    }
    uint64_t added;
    tc_flow_ctx_solo_count(c, &added, &out->alone, &out->sims);
    assert_true(out->broken || added == NJOBS);
    tc_flow_ctx_free(c);
}

/* Timed alone or event by event, the same finish times and blame (to
 * rounding), over random algorithms, sizes, group shapes and starts, on
 * two topologies with scale-up nodes; jobs are timed alone at all (the
 * test would pass vacuously otherwise), and a job that comes onto the
 * links of one timed alone fails the run with solo_broken set. */
static void solo_same_as_event_by_event(void **state)
{
    (void)state;
    const char *specs[] = {"clos:down=4x4,up=1x2,lat=1us,hop_lat=100ns,node=4,node_bw=200GB/s,node_lat=300ns",
                           "torus:dims=4x4,lat=500ns,node=4,node_bw=100GB/s,alpha=2us"};
    const tc_algo al[] = {TC_ALGO_RING, TC_ALGO_RHD, TC_ALGO_DBTREE, TC_ALGO_RD};
    uint64_t alone = 0, whole = 0, broken = 0;
    for (int ti = 0; ti < 2; ti++) {
        tc_topo *t = topo(specs[ti]);
        size_t nl = t->n_links;
        for (unsigned trial = 0; trial < 16; trial++) {
            unsigned x = 77 + trial * 131 + (unsigned)ti;
#define RND() (x = x * 1103515245u + 12345u, (x >> 8) & 0xffff)
            tc_sched *s[NJOBS];
            uint32_t map[NJOBS][4];
            for (uint32_t i = 0; i < NJOBS; i++) {
                bool cross = i >= NODES * PER_NODE;
                uint32_t p = cross ? 4 : 2 + RND() % 3, nd = i / PER_NODE;
                double bytes = (double)(1u << (8 + RND() % 18));
                tc_algo a = al[RND() % 4];
                if (a == TC_ALGO_RD && (p & (p - 1)))
                    a = TC_ALGO_RING;
                tc_op op = RND() % 2 ? TC_OP_ALLREDUCE : TC_OP_BROADCAST;
                if (a == TC_ALGO_RHD || a == TC_ALGO_RD)
                    op = TC_OP_ALLREDUCE;
                s[i] = sched(t, op, a, p, bytes);
                uint32_t off = RND() % 4;
                for (uint32_t r = 0; r < p; r++)
                    map[i][r] = cross ? r * 4 + (uint32_t)(i % 4) : nd * 4 + (r + off) % 4;
            }
#undef RND
            solo_run a = {0}, b = {0};
            a.link_lost = calloc(3 * nl, sizeof(double));
            a.link_bytes = calloc(3 * nl, sizeof(double));
            b.link_lost = calloc(3 * nl, sizeof(double));
            b.link_bytes = calloc(3 * nl, sizeof(double));
            assert_non_null(a.link_lost && a.link_bytes && b.link_lost && b.link_bytes);
            unsigned seed = 5 + trial;
            solo_trial(t, seed, false, s, map, &a);
            solo_trial(t, seed, true, s, map, &b);
            assert_false(a.broken);
            if (b.broken) {
                broken++;
            } else {
                whole++;
                alone += b.alone;
                assert_true(b.sims <= b.alone);
                assert_int_equal(a.alone, 0);
                for (uint32_t i = 0; i < NJOBS; i++) {
                    char what[64];
                    snprintf(what, sizeof what, "topology %d trial %u job %u", ti, trial, i);
                    assert_rel(b.finish[i], a.finish[i], 1e-9, what);
                }
                for (uint32_t g = 0; g < 3; g++) {
                    assert_rel(b.sent[g], a.sent[g], 1e-9, "sent");
                    assert_rel(b.lost[g], a.lost[g], 1e-9, "lost");
                    for (size_t l = 0; l < nl; l++) {
                        assert_rel(b.link_lost[g * nl + l], a.link_lost[g * nl + l], 1e-9, "lost by link");
                        assert_rel(b.link_bytes[g * nl + l], a.link_bytes[g * nl + l], 1e-9, "bytes by link");
                    }
                }
            }
            free(a.link_lost);
            free(a.link_bytes);
            free(b.link_lost);
            free(b.link_bytes);
            for (uint32_t i = 0; i < NJOBS; i++)
                tc_sched_free(s[i]);
        }
        tc_topo_free(t);
    }
    print_message("solo: %llu trials whole, %llu broken, %llu jobs timed alone\n", (unsigned long long)whole,
                  (unsigned long long)broken, (unsigned long long)alone);
    assert_true(whole >= 16 && alone >= 100);
}

/* A job on the links of one timed alone, joining while it runs: the run
 * fails and says so; without timing alone, it runs. */
static void solo_broken_by_a_later_job(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2,lat=1us,node=4");
    tc_sched *s = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 4, 1 << 24);
    uint32_t m[] = {0, 1, 2, 3};
    for (int solo = 0; solo < 2; solo++) {
        tc_flow_opts o = {.solo = solo};
        tc_flow_ctx *c = ctx_new(t, &o);
        tc_flow_job a = {s, m, 0, NULL, 0};
        ctx_add(c, &a);
        uint32_t done[4];
        size_t n = 0;
        double now = 0;
        tc_err err = {{0}};
        assert_int_equal(tc_flow_ctx_run(c, 1e-6, done, 4, &n, &now, &err), TC_OK);
        tc_flow_job b = {s, m, now, NULL, 0};
        ctx_add(c, &b);
        tc_status st = TC_OK;
        while (st == TC_OK && (st = tc_flow_ctx_run(c, INFINITY, done, 4, &n, &now, &err)) == TC_OK && n > 0)
            ;
        uint64_t added, alone, sims;
        tc_flow_ctx_solo_count(c, &added, &alone, &sims);
        assert_int_equal(added, 2);
        if (solo) {
            assert_int_equal(st, TC_EINTERNAL);
            assert_true(tc_flow_ctx_solo_broken(c));
            assert_non_null(strstr(err.msg, "timed alone"));
            assert_true(alone == 1 && sims == 1);
        } else {
            assert_int_equal(st, TC_OK);
            assert_false(tc_flow_ctx_solo_broken(c));
        }
        tc_flow_ctx_free(c);
    }
    tc_sched_free(s);
    tc_topo_free(t);
}

/* Runs jobs (all added at once) to the end; their finishes into fin; the
 * run's status, and the counts. */
static tc_status ctx_jobs(const tc_topo *t, bool solo, const tc_flow_job *jobs, size_t n, double *fin,
                          uint64_t *alone)
{
    tc_flow_opts o = {.solo = solo};
    tc_flow_ctx *c = ctx_new(t, &o);
    uint32_t id[8];
    for (size_t k = 0; k < n; k++)
        id[k] = ctx_add(c, &jobs[k]);
    tc_status st = TC_OK;
    uint32_t done[8];
    size_t nd = 0;
    double now = 0;
    tc_err err = {{0}};
    while ((st = tc_flow_ctx_run(c, INFINITY, done, 8, &nd, &now, &err)) == TC_OK && nd > 0)
        ;
    for (size_t k = 0; k < n; k++)
        fin[k] = tc_flow_ctx_finish(c, id[k]);
    uint64_t added, sims;
    tc_flow_ctx_solo_count(c, &added, alone, &sims);
    tc_flow_ctx_free(c);
    return st;
}

/* A job that starts on the links of one timed alone just as it ends (no
 * per-message overhead, so its first flow starts in that batch) takes
 * them: the one timed alone frees them first. A job of more than 64 ranks
 * (never timed alone) holds the links of its ranks that share a node while
 * it runs, so a job inside one of those nodes that starts meanwhile is not
 * timed alone (it would be broken by the large job's next flow there). */
static void solo_ends_and_large_jobs(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=4x4,up=1x2,lat=1us,node=4,alpha=0");
    tc_sched *a = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 4, 1 << 20);
    tc_sched *b = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 2, 1 << 20);
    uint32_t ma[] = {0, 1, 2, 3}, mb[] = {0, 1};
    double fa[2], fb[2];
    uint64_t alone;
    tc_flow_job ja = {a, ma, 0, NULL, 0};
    assert_int_equal(ctx_jobs(t, false, &ja, 1, fa, &alone), TC_OK);
    tc_flow_job jobs[2] = {ja, {b, mb, fa[0], NULL, 0}};
    assert_int_equal(ctx_jobs(t, false, jobs, 2, fa, &alone), TC_OK);
    assert_int_equal(ctx_jobs(t, true, jobs, 2, fb, &alone), TC_OK);
    assert_int_equal(alone, 2);
    assert_rel(fb[0], fa[0], 1e-12, "the first, timed alone");
    assert_rel(fb[1], fa[1], 1e-12, "the second, from the first's end");
    tc_sched_free(a);
    tc_sched_free(b);
    tc_topo_free(t);

    t = topo("clos:down=8x16,up=1x8,lat=1us,node=8");
    /* halving-doubling: its first steps pair ranks 64, 32, ... apart (other
     * nodes), its last ones neighbours (the node's links) */
    tc_sched *big = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RHD, 128, 1 << 26);
    tc_sched *small = sched(t, TC_OP_ALLREDUCE, TC_ALGO_RING, 8, 1 << 26);
    uint32_t mbig[128], msmall[8];
    for (uint32_t r = 0; r < 128; r++)
        mbig[r] = r;
    for (uint32_t r = 0; r < 8; r++)
        msmall[r] = r;
    tc_flow_job two[2] = {{big, mbig, 0, NULL, 0}, {small, msmall, 1e-6, NULL, 1}};
    assert_int_equal(ctx_jobs(t, false, two, 2, fa, &alone), TC_OK);
    assert_int_equal(ctx_jobs(t, true, two, 2, fb, &alone), TC_OK);
    assert_int_equal(alone, 0);
    assert_rel(fb[0], fa[0], 1e-12, "the large job");
    assert_rel(fb[1], fa[1], 1e-12, "the small one, event by event beside it");
    /* the small one alone later, after the large one: timed alone */
    two[1].start_s = fa[0] * 2;
    assert_int_equal(ctx_jobs(t, true, two, 2, fb, &alone), TC_OK);
    assert_int_equal(alone, 1);
    tc_sched_free(big);
    tc_sched_free(small);
    tc_topo_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_jobs_same_times),
        cmocka_unit_test(rings_sharing_an_uplink),
        cmocka_unit_test(blame_on_shared_uplinks),
        cmocka_unit_test(solo_same_as_event_by_event),
        cmocka_unit_test(solo_broken_by_a_later_job),
        cmocka_unit_test(solo_ends_and_large_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
