/*
 * test_maxmin.c - the max-min solver's incremental re-solves (whole
 * components and by level, flow_int.h) against progressive filling from
 * scratch, where levels tie up to rounding.
 *
 * Integer capacities rarely give two bottleneck levels that are equal in
 * exact arithmetic but a few ulps apart as computed; real ones do (a sum of
 * 125 terms 0.1 is not 12.5, 0.1 + 0.2 is not 0.3), and there a re-solve by
 * level that compares levels exactly keeps stale rates. So capacities here
 * are real-valued and drawn to tie: tenths summed, multiplied or divided,
 * values a few ulps or 1e-13 apart; weights are spray fractions such as 1/3.
 * After every solve every flow's rate must equal the from-scratch rate to
 * 1e-9 relative, for component budgets 1 and 4 (everything by level), 40
 * (both ways in one solve) and the default (whole components), budgets 1,
 * 4 and 40 again with local re-solves (tc_mm.local), each without and with
 * flows alone on their links held outside the solver (tc_mm_hold), as the
 * flow simulator holds them. Seeds are
 * fixed (1..N per case); a failure names the case, budget, seed, round and
 * flow. bench/mutate_maxmin.sh checks that these tests notice a tolerance
 * removed from the solver.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "eval/flow_int.h"

#define REL_TOL 1e-9
#define MAX_LINKS 16
#define MAX_IDS 160
#define MAX_HOPS 4

/* Under the sanitizers every check runs, on fewer seeds. */
#if defined(__SANITIZE_ADDRESS__)
#define SEED_DIV 8
#else
#define SEED_DIV 1
#endif

static uint64_t next(uint64_t *x)
{
    *x = tc_mix64(*x + 0x9e3779b97f4a7c15ull);
    return *x;
}

static double nudge(double v, int ulps)
{
    for (int i = 0; i < abs(ulps); i++)
        v = nextafter(v, ulps < 0 ? 0 : INFINITY);
    return v;
}

typedef enum { CAPS_POOL, CAPS_TENTHS, CAPS_NEAR, CAPS_REAL } cap_style;
typedef enum { W_UNIT, W_SPRAY } weight_style;

/* k tenths three ways, which agree only up to rounding. */
static double tenths(uint32_t k, uint32_t how)
{
    if (how == 0) {
        double s = 0;
        for (uint32_t i = 0; i < k; i++)
            s += 0.1;
        return s;
    }
    return how == 1 ? k * 0.1 : k / 10.0;
}

/* One link's capacity. CAPS_POOL: k tenths for every link of a network
 * (k drawn per network), as a sum, a product or a quotient, a ulp off or
 * 1e-13 off: equal shares on different links are the rule. CAPS_TENTHS: k
 * drawn per link. CAPS_NEAR: 2.5, 12.5, 7.5, 10 or 0.3, up to 2 ulps or
 * 2e-13 off. CAPS_REAL: any value in [1, 100). */
static double draw_cap(uint64_t *x, cap_style st, uint32_t k)
{
    uint64_t r = next(x);
    if (st == CAPS_POOL) {
        double c = tenths(k, 0);
        switch (r % 4) {
        case 0:
            return c;
        case 1:
            return tenths(k, 1 + (uint32_t)(r >> 8) % 2);
        case 2:
            return nudge(c, (r >> 8) & 1 ? 1 : -1);
        default:
            return c * (1 + 1e-13);
        }
    }
    if (st == CAPS_TENTHS)
        return tenths(1 + (uint32_t)(r % 150), (uint32_t)(r >> 8) % 3);
    if (st == CAPS_NEAR) {
        static const double base[] = {2.5, 12.5, 7.5, 10, 0.3};
        double c = base[(r >> 8) % 5];
        int j = (int)((r >> 16) % 5) - 2;
        return (r >> 24) & 1 ? c * (1 + j * 1e-13) : nudge(c, j);
    }
    return 1 + (double)(r % 99000) / 1000.0;
}

/* The fraction of a flow's `paths` equal-cost paths that use a link, as
 * spraying gives: one or two of them (1/3, 2/7, ...). */
static double draw_weight(uint64_t *x, uint32_t paths)
{
    return (double)(1 + next(x) % 2) / paths;
}

typedef struct mm_case {
    const char *name;
    cap_style caps;
    weight_style weights;
    bool rate_cap;     /* a cap tied to a link's share */
    uint32_t nlinks;   /* 0: 2 to 5, drawn per seed */
    uint32_t ids;      /* flow ids in use */
    int rounds;
    uint64_t seeds;    /* seeds 1..seeds (divided under the sanitizers) */
} mm_case;

/* The flows alive and their paths, mirrored outside the solver so that the
 * reference can be built from scratch. */
typedef struct mm_world {
    const mm_case *c;
    uint32_t budget;
    uint64_t seed;
    uint32_t nlinks;
    double cap[MAX_LINKS], rate_cap;
    uint32_t paths; /* equal-cost paths a flow sprays over */
    uint32_t links[MAX_IDS][MAX_HOPS], nl[MAX_IDS];
    double w[MAX_IDS][MAX_HOPS];
    bool alive[MAX_IDS];
    double worst;
    uint64_t solves, level_solves;
    bool hold;          /* a flow alone on its links is held (tc_mm_hold) */
    bool local;         /* re-solves are local (tc_mm.local) */
    uint64_t local_solves, local_fallbacks;
    uint64_t holds, joins;
} mm_world;

static const double *weights_of(const mm_world *W, uint32_t f)
{
    return W->c->weights == W_SPRAY ? W->w[f] : NULL;
}

/* Adds flow f; with W->hold, holds it where it is alone on its links, as
 * the flow simulator does. */
static void add_flow(tc_mm *m, mm_world *W, uint32_t f)
{
    const uint32_t *links = W->links[f];
    const double *w = weights_of(W, f);
    if (W->hold && tc_mm_path_empty(m, links, W->nl[f])) {
        double r = tc_mm_alone_rate(m, links, w, W->nl[f]);
        assert_int_equal(tc_mm_hold(m, f, links, w, W->nl[f], r), TC_OK);
        assert_true(tc_mm_is_held(m, f));
        W->holds++;
        return;
    }
    for (uint32_t k = 0; W->hold && k < W->nl[f]; k++)
        if (m->occ[links[k]].held != UINT32_MAX) {
            W->joins++;
            break;
        }
    assert_int_equal(tc_mm_add(m, f, links, w, W->nl[f]), TC_OK);
}

/* A path of 1 to MAX_HOPS distinct links. */
static void draw_path(mm_world *W, uint32_t f, uint64_t *x)
{
    uint64_t r = next(x);
    uint32_t n = 1 + (uint32_t)(r % MAX_HOPS), start = (uint32_t)(r >> 8) % W->nlinks;
    uint32_t step = 1 + (uint32_t)(r >> 16) % 5;
    W->nl[f] = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t l = (start + j * step) % W->nlinks;
        bool dup = false;
        for (uint32_t i = 0; i < W->nl[f]; i++)
            dup |= W->links[f][i] == l;
        if (dup)
            continue;
        W->links[f][W->nl[f]] = l;
        W->w[f][W->nl[f]] = draw_weight(x, W->paths);
        W->nl[f]++;
    }
}

/* The fastest flow (lowest id among ties): in a simulation the fastest
 * finish first, and a departure at the top level is where ties bite. */
static uint32_t fastest(const tc_mm *m, const mm_world *W)
{
    double best = -1;
    uint32_t bf = UINT32_MAX;
    for (uint32_t f = 0; f < W->c->ids; f++)
        if (W->alive[f] && tc_mm_rate(m, f) > best) {
            best = tc_mm_rate(m, f);
            bf = f;
        }
    return bf;
}

enum { OP_FASTEST, OP_LEAVE, OP_ARRIVE, OP_MIXED, OP_FASTEST_ARRIVE, OP_KINDS };

/* One batch of kind `kind`: departures, arrivals or both. */
static void batch(tc_mm *m, mm_world *W, int kind, uint64_t *x)
{
    int nops = 1 + (int)(next(x) % 6);
    for (int k = 0; k < nops; k++) {
        uint32_t f = (uint32_t)(next(x) % W->c->ids);
        if (kind == OP_FASTEST || (kind == OP_FASTEST_ARRIVE && k % 2 == 0)) {
            uint32_t g = fastest(m, W);
            if (g != UINT32_MAX) {
                tc_mm_remove(m, g);
                W->alive[g] = false;
            }
        } else if (W->alive[f]) {
            if (kind != OP_ARRIVE) {
                tc_mm_remove(m, f);
                W->alive[f] = false;
            }
        } else if (kind != OP_LEAVE) {
            draw_path(W, f, x);
            add_flow(m, W, f);
            W->alive[f] = true;
        }
    }
}

/* Every alive flow's rate against a solve from scratch. */
static void compare(const tc_mm *m, mm_world *W, int round, int kind)
{
    tc_mm ref;
    assert_int_equal(tc_mm_init(&ref, W->nlinks, W->cap, MAX_HOPS, W->rate_cap), TC_OK);
    for (uint32_t f = 0; f < W->c->ids; f++)
        if (W->alive[f])
            assert_int_equal(tc_mm_add(&ref, f, W->links[f], weights_of(W, f), W->nl[f]), TC_OK);
    assert_int_equal(tc_mm_solve(&ref), TC_OK);
    assert_int_equal(ref.level_solves, 0);
    for (uint32_t f = 0; f < W->c->ids; f++) {
        if (!W->alive[f])
            continue;
        double a = tc_mm_rate(m, f), b = tc_mm_rate(&ref, f);
        double d = fabs(a - b) / fmax(a, b);
        if (!(d <= REL_TOL))
            fail_msg("%s budget %u%s seed %llu round %d batch kind %d flow %u: incremental %.17g, from scratch "
                     "%.17g (rel %.3g)",
                     W->c->name, W->budget, W->local ? " local" : "", (unsigned long long)W->seed, round, kind, f, a,
                     b, d);
        W->worst = fmax(W->worst, d);
    }
    tc_mm_free(&ref);
}

static void run_seed(mm_world *W)
{
    uint64_t x = W->seed * 0x100000001b3ull ^ (uint64_t)W->c->caps << 8 ^ W->budget;
    W->nlinks = W->c->nlinks ? W->c->nlinks : 2 + (uint32_t)(next(&x) % 4);
    uint32_t k = 1 + (uint32_t)(next(&x) % 150);
    static const uint32_t paths[] = {3, 5, 6, 7};
    W->paths = paths[next(&x) % 4];
    for (uint32_t l = 0; l < W->nlinks; l++)
        W->cap[l] = draw_cap(&x, W->c->caps, k);
    /* A cap that ties with a link's fair share among four. */
    W->rate_cap = W->c->rate_cap ? W->cap[next(&x) % W->nlinks] / 4 : 0;
    memset(W->alive, 0, sizeof W->alive);
    tc_mm m;
    assert_int_equal(tc_mm_init(&m, W->nlinks, W->cap, MAX_HOPS, W->rate_cap), TC_OK);
    m.comp_budget = W->budget;
    m.local = W->local;
    for (int round = 0; round < W->c->rounds; round++) {
        int kind = round == 0 ? OP_ARRIVE : (int)(next(&x) % OP_KINDS);
        batch(&m, W, kind, &x);
        /* What the flow simulator relies on to bring bytes left up to
         * date: a flow in the solver whose rate the solve changes (a flow
         * added has 0 until then, a joined one its rate held) is among the
         * changed. */
        double before[MAX_IDS];
        for (uint32_t f = 0; f < W->c->ids; f++)
            before[f] = W->alive[f] ? tc_mm_rate(&m, f) : 0;
        assert_int_equal(tc_mm_solve(&m), TC_OK);
        W->solves++;
        bool in_changed[MAX_IDS] = {false};
        for (size_t i = 0; i < m.nchanged; i++)
            in_changed[m.changed[i]] = true;
        for (uint32_t f = 0; f < W->c->ids; f++)
            if (W->alive[f] && !tc_mm_is_held(&m, f) && tc_mm_rate(&m, f) != before[f] && !in_changed[f])
                fail_msg("%s budget %u seed %llu round %d: flow %u's rate moved from %.17g to %.17g but it is "
                         "not among the changed",
                         W->c->name, W->budget, (unsigned long long)W->seed, round, f, before[f], tc_mm_rate(&m, f));
        compare(&m, W, round, kind);
    }
    W->level_solves += m.level_solves;
    W->local_solves += m.local_solves;
    W->local_fallbacks += m.local_fallbacks;
    tc_mm_free(&m);
}

/* Each budget without and with holding, and the budgets that re-solve
 * big components also with local re-solves: with either, the rates must
 * still be those of a solve from scratch after every batch (held flows'
 * included), and holds and joins must have happened. */
static void run_case(const mm_case *c)
{
    static const struct {
        uint32_t budget;
        bool local;
    } modes[] = {{1, false}, {4, false}, {40, false}, {0, false}, {1, true}, {4, true}, {40, true}};
    for (size_t b = 0; b < 2 * sizeof modes / sizeof *modes; b++) {
        mm_world *W = calloc(1, sizeof *W);
        assert_non_null(W);
        W->c = c;
        W->budget = modes[b / 2].budget;
        W->local = modes[b / 2].local;
        W->hold = b % 2;
        uint64_t seeds = c->seeds / SEED_DIV ? c->seeds / SEED_DIV : 1;
        for (W->seed = 1; W->seed <= seeds; W->seed++)
            run_seed(W);
        /* The budgets below the default did re-solve by level (or locally);
         * the default never needs to at these sizes. */
        if (W->budget == 1 && !W->local)
            assert_true(W->level_solves > W->solves / 2);
        if (W->budget == 1 && W->local)
            assert_true(W->local_solves > W->solves / 2);
        if (W->budget == 0)
            assert_int_equal(W->level_solves, 0);
        /* on 16 links some local re-solves grow past the work of a solve by
         * level, which then takes over: that hand-over is tested too (on
         * all the seeds: under the sanitizers one may not need it) */
        if (SEED_DIV == 1 && W->local && W->budget == 4 && c->nlinks == MAX_LINKS)
            assert_true(W->local_fallbacks > 0);
        if (W->hold) {
            assert_true(W->holds > 0);
            assert_true(W->joins > 0);
        }
        print_message("%-22s budget %-2u%s%s: %llu solves, %llu by level, %llu local (%llu given up), %llu held, "
                      "%llu joined, worst rel. difference %.2g\n",
                      c->name, W->budget, W->hold ? " hold" : "", W->local ? " local" : "",
                      (unsigned long long)W->solves, (unsigned long long)W->level_solves,
                      (unsigned long long)W->local_solves, (unsigned long long)W->local_fallbacks,
                      (unsigned long long)W->holds, (unsigned long long)W->joins, W->worst);
        free(W);
    }
}

/* Small networks (2 to 5 links, 20 flow ids) tie most often. With the
 * departure tolerance removed, 40 and 33 of the 1,200 seeds of the first
 * case fail at budgets 1 and 4, 45 and 27 of the second's (and a few of the
 * others'). */
static void maxmin_small_networks_with_equal_capacities(void **state)
{
    (void)state;
    static const mm_case c = {"small, pool", CAPS_POOL, W_UNIT, false, 0, 20, 25, 1200};
    run_case(&c);
}

static void maxmin_small_networks_with_equal_capacities_and_spray_weights(void **state)
{
    (void)state;
    static const mm_case c = {"small, pool, spray", CAPS_POOL, W_SPRAY, false, 0, 20, 25, 1200};
    run_case(&c);
}

static void maxmin_small_networks_with_a_tied_rate_cap(void **state)
{
    (void)state;
    static const mm_case c = {"small, pool, rate cap", CAPS_POOL, W_SPRAY, true, 0, 20, 25, 600};
    run_case(&c);
}

static void maxmin_small_networks_with_tenths_and_near_equal_capacities(void **state)
{
    (void)state;
    static const mm_case cs[] = {
        {"small, tenths", CAPS_TENTHS, W_UNIT, false, 0, 20, 25, 600},
        {"small, near-equal", CAPS_NEAR, W_UNIT, false, 0, 20, 25, 600},
        {"small, near, spray", CAPS_NEAR, W_SPRAY, false, 0, 20, 25, 600},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
        run_case(&cs[i]);
}

/* Larger components: many levels, long runs of re-solves by level. */
static void maxmin_larger_networks_with_tied_and_real_capacities(void **state)
{
    (void)state;
    static const mm_case cs[] = {
        {"16 links, pool", CAPS_POOL, W_UNIT, false, MAX_LINKS, MAX_IDS, 120, 6},
        {"16 links, tenths", CAPS_TENTHS, W_UNIT, false, MAX_LINKS, MAX_IDS, 120, 6},
        {"16 links, near, spray", CAPS_NEAR, W_SPRAY, true, MAX_LINKS, MAX_IDS, 120, 6},
        {"16 links, real, spray", CAPS_REAL, W_SPRAY, false, MAX_LINKS, MAX_IDS, 120, 6},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
        run_case(&cs[i]);
}

/* The symptom the tolerance on departures fixes: two links of 12.5 GB/s,
 * each capacity summed from 125 terms of 0.1 (12.499999999999972), five
 * flows on each, four of them on both. Link 0 fills first, at
 * 2.4999999999999942; freezing the four shared flows there leaves link 1's
 * share at 2.4999999999999933, two ulps lower, the level recorded for link
 * 1's own flow. When a shared flow leaves, each link holds four flows:
 * 3.125 each. With x0 the departed flow's exact rate, link 1's group was not
 * filled again and its flow kept 2.5. */
static void maxmin_departure_at_a_tied_level_frees_the_other_link(void **state)
{
    (void)state;
    double c = 0;
    for (int i = 0; i < 125; i++)
        c += 0.1;
    const double cap[] = {c, c};
    static const uint32_t both[] = {0, 1}, only0[] = {0}, only1[] = {1};
    static const uint32_t budgets[] = {1, 0};
    for (size_t b = 0; b < 2; b++) {
        tc_mm m;
        assert_int_equal(tc_mm_init(&m, 2, cap, 2, 0), TC_OK);
        m.comp_budget = budgets[b];
        for (uint32_t f = 0; f < 4; f++)
            assert_int_equal(tc_mm_add(&m, f, both, NULL, 2), TC_OK);
        assert_int_equal(tc_mm_add(&m, 4, only0, NULL, 1), TC_OK);
        assert_int_equal(tc_mm_add(&m, 5, only1, NULL, 1), TC_OK);
        assert_int_equal(tc_mm_solve(&m), TC_OK);
        for (uint32_t f = 0; f < 6; f++)
            assert_true(fabs(tc_mm_rate(&m, f) - 2.5) < 1e-9 * 2.5);
        tc_mm_remove(&m, 0);
        assert_int_equal(tc_mm_solve(&m), TC_OK);
        for (uint32_t f = 1; f < 6; f++) {
            double r = tc_mm_rate(&m, f);
            if (!(fabs(r - 3.125) < 1e-9 * 3.125))
                fail_msg("budget %u: flow %u has %.17g after the departure, not 3.125", budgets[b], f, r);
        }
        tc_mm_free(&m);
    }
}

/* By hand: a flow held on links 0 and 1 (capacities 2 and 6) has 2 alone;
 * leaving, it marks nothing to solve. Held again, a flow arriving on link
 * 1 brings it into the solver at the rate it held: the solve keeps it at 2
 * (link 0 fills first) and so does not list it as changed, and gives the
 * arrival what is left of link 1, 4. A flow held on link 2 stays held at
 * 5. A third flow on link 0 then halves it: 1 and 1 on link 0, 5 for the
 * flow alone on link 1, all three changed. */
static bool changed_has(const tc_mm *m, uint32_t f)
{
    for (size_t i = 0; i < m->nchanged; i++)
        if (m->changed[i] == f)
            return true;
    return false;
}

static void maxmin_held_flow_joins_when_another_arrives(void **state)
{
    (void)state;
    const double cap[] = {2, 6, 5};
    static const uint32_t p01[] = {0, 1}, p0[] = {0}, p1[] = {1}, p2[] = {2};
    tc_mm m;
    assert_int_equal(tc_mm_init(&m, 3, cap, 2, 0), TC_OK);
    assert_true(tc_mm_path_empty(&m, p01, 2));
    assert_true(tc_mm_alone_rate(&m, p01, NULL, 2) == 2);
    assert_int_equal(tc_mm_hold(&m, 0, p01, NULL, 2, 2), TC_OK);
    assert_false(tc_mm_path_empty(&m, p1, 1));
    assert_true(tc_mm_rate(&m, 0) == 2);
    tc_mm_remove(&m, 0);
    assert_false(tc_mm_is_held(&m, 0));
    assert_int_equal(m.ndirty, 0);
    assert_true(tc_mm_path_empty(&m, p01, 2));
    assert_int_equal(tc_mm_hold(&m, 0, p01, NULL, 2, 2), TC_OK);
    assert_int_equal(tc_mm_hold(&m, 2, p2, NULL, 1, 5), TC_OK);
    assert_int_equal(tc_mm_add(&m, 1, p1, NULL, 1), TC_OK);
    assert_false(tc_mm_is_held(&m, 0));
    assert_true(tc_mm_is_held(&m, 2));
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_false(changed_has(&m, 0));
    assert_true(changed_has(&m, 1));
    assert_false(changed_has(&m, 2));
    assert_true(fabs(tc_mm_rate(&m, 0) - 2) < 1e-12);
    assert_true(fabs(tc_mm_rate(&m, 1) - 4) < 1e-12);
    assert_true(tc_mm_rate(&m, 2) == 5);
    assert_int_equal(tc_mm_add(&m, 3, p0, NULL, 1), TC_OK);
    assert_int_equal(tc_mm_solve(&m), TC_OK);
    assert_true(changed_has(&m, 0) && changed_has(&m, 1) && changed_has(&m, 3));
    assert_true(fabs(tc_mm_rate(&m, 0) - 1) < 1e-12);
    assert_true(fabs(tc_mm_rate(&m, 3) - 1) < 1e-12);
    assert_true(fabs(tc_mm_rate(&m, 1) - 5) < 1e-12);
    /* occupancy follows: link 0 and link 1 hold two flows, link 2 one */
    assert_int_equal(m.occ[0].n, 2);
    assert_int_equal(m.occ[1].n, 2);
    assert_int_equal(m.occ[2].n, 1);
    for (uint32_t f = 0; f < 4; f++)
        tc_mm_remove(&m, f);
    for (uint32_t l = 0; l < 3; l++) {
        assert_int_equal(m.occ[l].n, 0);
        assert_int_equal(m.occ[l].held, UINT32_MAX);
    }
    tc_mm_free(&m);
}

/* A local re-solve judges a kept bottleneck full per flow. Link 0 (capacity
 * 1) carries flow 0 alone and flows 1..n-1, each also on its own link of
 * a hair less than 1/n; link n has capacity d = 0.9e-12. Flow n arrives
 * on links 1 and n: flow 1 drops by d, and flow 0, frozen on link 0 with
 * about 1/n, must rise by d. A tolerance of 1e-12 of link 0's capacity
 * kept it (1.8e-9 off at n = 2,000, 1.8e-8 at 20,000); one of 1e-12 of
 * flow 0's rate does not. */
static void maxmin_local_re_solve_judges_a_full_link_per_flow(void **state)
{
    (void)state;
    static const uint32_t ns[] = {2, 2000, 20000};
    for (size_t c = 0; c < sizeof ns / sizeof *ns; c++) {
        uint32_t n = ns[c];
        double *cap = malloc((n + 1) * sizeof *cap);
        assert_non_null(cap);
        cap[0] = 1;
        for (uint32_t i = 1; i < n; i++)
            cap[i] = 1.0 / n * (1 - 1e-6);
        cap[n] = 0.9e-12;
        tc_mm m, ref;
        assert_int_equal(tc_mm_init(&m, n + 1, cap, 2, 0), TC_OK);
        assert_int_equal(tc_mm_init(&ref, n + 1, cap, 2, 0), TC_OK);
        m.comp_budget = 1;
        m.local = true;
        for (uint32_t f = 0; f < n; f++) {
            const uint32_t path[2] = {0, f};
            assert_int_equal(tc_mm_add(&m, f, path, NULL, f ? 2 : 1), TC_OK);
            assert_int_equal(tc_mm_add(&ref, f, path, NULL, f ? 2 : 1), TC_OK);
        }
        assert_int_equal(tc_mm_solve(&m), TC_OK);
        const uint32_t arrival[2] = {1, n};
        assert_int_equal(tc_mm_add(&m, n, arrival, NULL, 2), TC_OK);
        assert_int_equal(tc_mm_add(&ref, n, arrival, NULL, 2), TC_OK);
        assert_int_equal(tc_mm_solve(&m), TC_OK);
        assert_int_equal(tc_mm_solve(&ref), TC_OK);
        assert_true(m.local_solves > 0);
        double a = tc_mm_rate(&m, 0), b = tc_mm_rate(&ref, 0);
        if (!(fabs(a - b) <= 1e-11 * b))
            fail_msg("n %u: flow 0 has %.17g after the arrival, from scratch %.17g", n, a, b);
        tc_mm_free(&m);
        tc_mm_free(&ref);
        free(cap);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maxmin_held_flow_joins_when_another_arrives),
        cmocka_unit_test(maxmin_departure_at_a_tied_level_frees_the_other_link),
        cmocka_unit_test(maxmin_small_networks_with_equal_capacities),
        cmocka_unit_test(maxmin_small_networks_with_equal_capacities_and_spray_weights),
        cmocka_unit_test(maxmin_small_networks_with_a_tied_rate_cap),
        cmocka_unit_test(maxmin_small_networks_with_tenths_and_near_equal_capacities),
        cmocka_unit_test(maxmin_larger_networks_with_tied_and_real_capacities),
        cmocka_unit_test(maxmin_local_re_solve_judges_a_full_link_per_flow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
