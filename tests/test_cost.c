/*
 * test_cost.c - bills of materials and equal cost (topocc/cost.h,
 * docs/MODEL.md "Equal cost"): a 2-tier Clos and a 4x4x4 torus counted by
 * hand, priced with the shipped cost profile; the interpolation in price
 * per Gb/s computed by hand on a made-up profile; the fabric speed of a
 * given cost, and a cost no speed reaches; bad profiles named with file
 * and field; dollars read and written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/cost.h"
#include "build_helpers.h"

#define DATA TOPOCC_SOURCE_DIR "/tests/data/cost"

static tc_cost *cost_named(const char *name)
{
    tc_profile *p = NULL;
    tc_cost *c = NULL;
    tc_err err = {{0}};
    if (tc_profile_load(name, NULL, &p, &err) != TC_OK || tc_cost_from_profile(p, &c, &err) != TC_OK)
        fail_msg("%s: %s", name, err.msg);
    tc_profile_free(p);
    return c;
}

static tc_cost *cost_file(const char *path)
{
    tc_profile *p = NULL;
    tc_cost *c = NULL;
    tc_err err = {{0}};
    if (tc_cost_read_file(path, &p, &err) != TC_OK || tc_cost_from_profile(p, &c, &err) != TC_OK)
        fail_msg("%s: %s", path, err.msg);
    tc_profile_free(p);
    return c;
}

static const tc_bom_line *line(const tc_bom *b, tc_bom_kind k, int level)
{
    for (int i = 0; i < b->n; i++)
        if (b->line[i].kind == k && b->line[i].level == level)
            return &b->line[i];
    fail_msg("no %s line at level %d", tc_bom_kind_name(k), level);
    return NULL;
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fmax(1, fabs(want))))
        fail_msg("got %.12g, want %.12g", got, want);
}

/* clos:hosts=64,radix=16,tiers=2 is clos:down=8x8,up=1x8: 64 hosts under
 * 8 leaves (8 hosts each, 1 leaf per host), 8 spines (every leaf has one
 * cable to each of the 8 spines). By hand:
 *   leaves:  8 switches x (8 host ports + 8 spine ports) = 8 x 16 ports
 *   spines:  8 switches x 8 leaf ports                   = 8 x 8 ports
 *   NIC ports: 64 endpoints x 1 fabric port               = 64
 *   copper (host-leaf, in the rack): 64 cables
 *   optical (leaf-spine): 8 leaves x 8 spines             = 64 cables,
 *     128 transceivers, 64 fibres
 *   switch ports 8x16 + 8x8 = 192 = 64 host ends + 2 x 64 leaf-spine ends.
 * Priced with cost-2026 at 400 Gb/s: a switch port is a 128-port 400G
 * switch's $200,000 / 128 = $1,562.50, so a leaf $25,000 and a spine
 * $12,500; NIC $1,500, DAC $150, transceiver $700, fibre $100:
 *   8 x 25,000 + 8 x 12,500 + 64 x 1,500 + 64 x 150 + 128 x 700 + 64 x 100
 *   = 200,000 + 100,000 + 96,000 + 9,600 + 89,600 + 6,400 = $501,600. */
static void two_tier_clos_counted_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:hosts=64,radix=16,tiers=2");
    tc_topo *u = topo("clos:down=8x8,up=1x8");
    assert_string_equal(t->spec, u->spec);
    tc_topo_free(u);
    tc_cost *c = cost_named("cost-2026");
    tc_bom b;
    tc_err err = {{0}};
    assert_int_equal(tc_bom_build(t, c, &b, &err), TC_OK);
    assert_int_equal(b.n, 6);
    const tc_bom_line *leaf = line(&b, TC_BOM_SWITCH, 1), *spine = line(&b, TC_BOM_SWITCH, 2);
    assert_int_equal(leaf->count, 8);
    assert_int_equal(leaf->ports, 16);
    assert_int_equal(leaf->ports_up, 8);
    assert_int_equal(spine->count, 8);
    assert_int_equal(spine->ports, 8);
    assert_int_equal(spine->ports_up, 0);
    assert_int_equal(line(&b, TC_BOM_NIC, 1)->count, 64);
    assert_int_equal(line(&b, TC_BOM_DAC, 1)->count, 64);
    assert_int_equal(line(&b, TC_BOM_TRANSCEIVER, 2)->count, 128);
    assert_int_equal(line(&b, TC_BOM_FIBER, 2)->count, 64);
    assert_int_equal(b.switches, 16);
    assert_int_equal(b.switch_ports, 192);
    assert_int_equal(b.nic_ports, 64);
    assert_int_equal(b.copper_cables, 64);
    assert_int_equal(b.optical_cables, 64);
    assert_int_equal(b.transceivers, 128);
    /* every cable of the graph is counted once */
    uint32_t *cab = malloc(t->n_links / 2 * sizeof *cab);
    assert_int_equal(tc_topo_fabric_cables(t, true, false, cab), b.copper_cables + b.optical_cables);
    free(cab);
    near(leaf->unit_usd, 25000);
    near(spine->unit_usd, 12500);
    near(line(&b, TC_BOM_NIC, 1)->unit_usd, 1500);
    near(line(&b, TC_BOM_DAC, 1)->unit_usd, 150);
    near(line(&b, TC_BOM_TRANSCEIVER, 2)->unit_usd, 700);
    near(line(&b, TC_BOM_FIBER, 2)->unit_usd, 100);
    near(b.total_usd, 501600);
    assert_string_equal(leaf->fields, "switch_400G_128p");
    /* at 800 Gb/s: a port of the 64-port 800G switch, $3,125 */
    assert_int_equal(tc_bom_at(t, c, 800, &b, &err), TC_OK);
    near(b.total_usd, 8 * 50000 + 8 * 25000 + 64 * 2500 + 64 * 250 + 128 * 1250 + 64 * 100); /* 942,400 */
    tc_cost_free(c);
    tc_topo_free(t);
}

/* torus:dims=4x4x4 (wraparound in every dimension): 64 endpoints, no
 * switches. Each dimension has 64 / 4 = 16 lines of 4 cables (x -> x+1,
 * 3 -> 0): 3 x 16 x 4 = 192 cables. One cube of 4 per dimension is the
 * whole torus, so the 3 cables 0-1, 1-2, 2-3 of a line are copper and the
 * wraparound 3-0 optical: 3 x 16 x 1 = 48 optical (96 transceivers, 48
 * fibres), 192 - 48 = 144 copper. Every endpoint has 2 ports in each of 3
 * dimensions of size 4: 64 x 6 = 384 = 2 x 192 NIC ports.
 * At 400 Gb/s with cost-2026: 384 x 1,500 + 144 x 150 + 96 x 700 + 48 x 100
 * = 576,000 + 21,600 + 67,200 + 4,800 = $669,600. */
static void torus_4x4x4_counted_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("torus:dims=4x4x4");
    tc_cost *c = cost_named("cost-2026");
    tc_bom b;
    tc_err err = {{0}};
    assert_int_equal(tc_bom_build(t, c, &b, &err), TC_OK);
    assert_int_equal(b.switches, 0);
    assert_int_equal(b.nic_ports, 384);
    assert_int_equal(b.copper_cables, 144);
    assert_int_equal(b.optical_cables, 48);
    assert_int_equal(b.transceivers, 96);
    assert_int_equal(b.n, 4);
    near(b.total_usd, 669600);
    /* 4x4x8 with a mesh in y: x as above (32 lines: 96 copper, 32 optical);
     * y (32 lines of 3 cables, no wrap) 96 copper; z (16 lines of 8: 3-4
     * crosses cubes, 7-0 wraps) 16 x 6 = 96 copper, 32 optical. */
    tc_topo *m = topo("torus:dims=4x4x8,wrap=1x0x1");
    assert_int_equal(tc_bom_build(m, c, &b, &err), TC_OK);
    assert_int_equal(b.copper_cables, 288);
    assert_int_equal(b.optical_cables, 64);
    assert_int_equal(b.nic_ports, 704);
    tc_topo_free(m);
    tc_cost_free(c);
    tc_topo_free(t);
}

/* tests/data/cost/cost-test.json (made-up): at 100 Gb/s an 8-port switch
 * $800 ($100 a port), NIC $10, DAC $5, transceiver $20, fibre $5; at 200
 * Gb/s $1,200 ($150 a port), $20, $10, $40, $5. clos:down=2x2,up=1x2: 4
 * hosts, 2 leaves of 2 + 2 ports, 2 spines of 2 ports (12 switch ports), 4
 * NIC ports, 4 DACs, 4 optical cables (8 transceivers, 4 fibres).
 *   at 100: 12 x 100 + 4 x 10 + 4 x 5 + 8 x 20 + 4 x 5 = 1,440 (14.4 $ per Gb/s)
 *   at 200: 12 x 150 + 4 x 20 + 4 x 10 + 8 x 40 + 4 x 5 = 2,260 (11.3 $ per Gb/s)
 * At 150 every price per Gb/s is the mean of its two (t = 0.5): a switch
 * port 150 x (1.0 + 0.75) / 2 = 131.25, a NIC 15, a DAC 7.5, a
 * transceiver 30, a fibre 150 x (0.05 + 0.025) / 2 = 5.625; the total
 * 12 x 131.25 + 4 x 15 + 4 x 7.5 + 8 x 30 + 4 x 5.625 = 1,927.5, which is
 * also 150 x (14.4 + 11.3) / 2. Between 100 and 200 the total is
 * b (14.4 - 0.031 (b - 100)) = 17.5 b - 0.031 b^2: $1,927.5 is reached at
 * b = 150 (the other root, 17.5 / 0.031 - 150 = 414.5, lies outside). */
static void interpolation_by_hand(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=2x2,up=1x2");
    tc_cost *c = cost_file(DATA "/cost-test.json");
    tc_bom b;
    tc_err err = {{0}};
    double u = 0;
    char src[160];
    assert_int_equal(tc_bom_at(t, c, 100, &b, &err), TC_OK);
    near(b.total_usd, 1440);
    assert_int_equal(tc_bom_at(t, c, 200, &b, &err), TC_OK);
    near(b.total_usd, 2260);
    assert_int_equal(tc_cost_unit(c, TC_BOM_SWITCH, 150, 4, &u, src, sizeof src, &err), TC_OK);
    near(u, 131.25);
    assert_string_equal(src, "switch_100G_8p + switch_200G_8p");
    assert_int_equal(tc_cost_unit(c, TC_BOM_FIBER, 150, 0, &u, NULL, 0, &err), TC_OK);
    near(u, 5.625);
    assert_int_equal(tc_bom_at(t, c, 150, &b, &err), TC_OK);
    near(b.total_usd, 1927.5);
    double g = 0;
    assert_int_equal(tc_cost_equal_speed(t, c, 1927.5, "T", &g, &err), TC_OK);
    near(g, 150);
    assert_int_equal(tc_cost_equal_speed(t, c, 1440, "T", &g, &err), TC_OK);
    assert_true(g == 100);
    assert_int_equal(tc_cost_equal_speed(t, c, 2260, "T", &g, &err), TC_OK);
    assert_true(g == 200);
    tc_cost_range r;
    assert_int_equal(tc_cost_range_of(t, c, &r, &err), TC_OK);
    near(r.lo_usd, 1440);
    near(r.hi_usd, 2260);
    /* below the cheapest and above the dearest: the range is named */
    assert_int_equal(tc_cost_equal_speed(t, c, 1000, "topology T", &g, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "topology T"));
    assert_non_null(strstr(err.msg, "$1,440 (at 100 Gb/s)"));
    assert_non_null(strstr(err.msg, "$2,260 (at 200 Gb/s)"));
    assert_int_equal(tc_cost_equal_speed(t, c, 3000, "T", &g, &err), TC_EINVAL);
    /* outside the profile's speeds there is no price */
    assert_int_equal(tc_bom_at(t, c, 50, &b, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "100 to 200 Gb/s"));
    /* a switch larger than any: named with the largest */
    tc_topo *big = topo("clos:down=8x2,up=1x8");
    assert_int_equal(tc_bom_at(big, c, 100, &b, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "16 or more ports"));
    tc_topo_free(big);
    /* a leaf with 100 Gb/s below and 200 Gb/s above prices each port at
     * its own speed: 2 x 100 + 2 x 150 = 500; a spine 2 x 150 = 300;
     * 2 x 500 + 2 x 300 + 4 x 10 + 4 x 5 + 8 x 40 + 4 x 5 = 2,000 */
    tc_topo *mixed = topo("clos:down=2x2,up=1x2,bw1=100Gbps,bw2=200Gbps");
    assert_int_equal(tc_bom_build(mixed, c, &b, &err), TC_OK);
    near(line(&b, TC_BOM_SWITCH, 1)->unit_usd, 500);
    near(b.total_usd, 2000);
    assert_true(tc_cost_fabric_gbps(mixed) < 0);
    tc_topo_free(mixed);
    tc_cost_free(c);
    tc_topo_free(t);
}

/* The shipped profile's equal cost of $700,000 for the Clos above: between
 * 400 and 800 Gb/s its total is b (1254 - 0.19 (b - 400)) (501,600 / 400
 * = 1254, 942,400 / 800 = 1178 $ per Gb/s), so 0.19 b^2 - 1330 b + 700,000
 * = 0: b = (1330 - sqrt(1330^2 - 4 x 0.19 x 700,000)) / 0.38 = 573.26 Gb/s.
 * Set on the topology, every fabric link runs at it and the bill of
 * materials comes to $700,000. */
static void equal_cost_sets_every_fabric_link(void **state)
{
    (void)state;
    tc_topo *t = topo("clos:down=8x8,up=1x8");
    tc_cost *c = cost_named("cost-2026");
    tc_err err = {{0}};
    double g = 0;
    assert_int_equal(tc_cost_equal_speed(t, c, 700000, "A", &g, &err), TC_OK);
    near(g, (1330 - sqrt(1330.0 * 1330 - 4 * 0.19 * 700000)) / 0.38);
    assert_int_equal(tc_cost_set_fabric_speed(t, g, &err), TC_OK);
    for (uint32_t l = 0; l < t->n_links; l++)
        near(t->links[l].bw, g * 1e9 / 8);
    near(tc_cost_fabric_gbps(t), g);
    assert_non_null(strstr(t->spec, "bw=573.26"));
    tc_bom b;
    assert_int_equal(tc_bom_build(t, c, &b, &err), TC_OK);
    near(b.total_usd, 700000);
    /* parallel cables: a level of links=2 carries twice the speed */
    tc_topo *p = topo("clos:down=4x2,up=1x2,links=1x2");
    assert_int_equal(tc_cost_set_fabric_speed(p, 500, &err), TC_OK);
    for (uint32_t l = 0; l < p->n_links; l++)
        near(p->links[l].bw, (p->links[l].level == 2 ? 2 : 1) * 500e9 / 8);
    assert_int_equal(tc_bom_build(p, c, &b, &err), TC_OK);
    assert_int_equal(line(&b, TC_BOM_FIBER, 2)->count, 2 * 2 * 2);
    tc_topo_free(p);
    /* a torus and a mesh (whose corners have fewer ports): every link at it */
    const char *tor[] = {"torus:dims=8x8x8", "torus:dims=8x8x8,wrap=0x0x0", "torus:dims=4x4,wrap=1x0"};
    for (int i = 0; i < 3; i++) {
        tc_topo *m = topo(tor[i]);
        assert_int_equal(tc_cost_set_fabric_speed(m, 400, &err), TC_OK);
        for (uint32_t l = 0; l < m->n_links; l++)
            near(m->links[l].bw, 400e9 / 8);
        near(tc_cost_fabric_gbps(m), 400);
        tc_topo_free(m);
    }
    tc_cost_free(c);
    tc_topo_free(t);
}

static void profile_fails(const char *file, const char *needle)
{
    tc_profile *p = NULL;
    tc_cost *c = NULL;
    tc_err err = {{0}};
    tc_status st = tc_cost_read_file(file, &p, &err);
    if (st == TC_OK)
        st = tc_cost_from_profile(p, &c, &err);
    tc_profile_free(p);
    tc_cost_free(c);
    if (st != TC_EINVAL || !strstr(err.msg, needle))
        fail_msg("%s: got '%s', want '%s'", file, err.msg, needle);
}

static void bad_profiles_are_named(void **state)
{
    (void)state;
    profile_fails(DATA "/cost-bad-item.json", "field 'fields.nic_100G.item' is 'router'");
    profile_fails(DATA "/cost-bad-gbps.json", "field 'fields.nic_100G.gbps' is missing");
    profile_fails(DATA "/cost-incomplete.json", "200 Gb/s has no dac price");
    profile_fails(DATA "/cost-no-source.json", "field 'fields.fiber_200G' has no source");
    profile_fails(DATA "/no-such.json", "cannot read it");
    /* a profile of another kind is no cost profile */
    tc_profile *p = NULL;
    tc_cost *c = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_profile_load("dgx-h100", NULL, &p, &err), TC_OK);
    assert_int_equal(tc_cost_from_profile(p, &c, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "not a cost profile"));
    tc_profile_free(p);
    assert_true(tc_cost_is_path("x/cost.json"));
    assert_true(tc_cost_is_path("cost.json"));
    assert_false(tc_cost_is_path("cost-2026"));
}

/* Every priced field of the shipped profiles has a source or says assumed
 * (the profile reader's rule), and the 2026 profile prices 400 and 800. */
static void shipped_cost_profile(void **state)
{
    (void)state;
    tc_cost *c = cost_named("cost-2026");
    const double *g;
    assert_int_equal(tc_cost_speeds(c, &g), 2);
    assert_true(g[0] == 400 && g[1] == 800);
    assert_int_equal(tc_cost_cube_edge(c), 4);
    assert_non_null(strstr(tc_cost_source(c, "transceiver_800G"), "https://"));
    assert_int_equal(strncmp(tc_cost_source(c, "nic_400G"), "assumed:", 8), 0);
    tc_cost_free(c);
}

static void dollars(void **state)
{
    (void)state;
    double v = 0;
    tc_err err = {{0}};
    char b[48];
    assert_int_equal(tc_parse_usd("5000000", &v, &err), TC_OK);
    assert_true(v == 5e6);
    assert_int_equal(tc_parse_usd("5M", &v, &err), TC_OK);
    assert_true(v == 5e6);
    assert_int_equal(tc_parse_usd("$2.5M", &v, &err), TC_OK);
    assert_true(v == 2.5e6);
    assert_int_equal(tc_parse_usd("750k", &v, &err), TC_OK);
    assert_true(v == 750e3);
    assert_int_equal(tc_parse_usd("1.2G", &v, &err), TC_OK);
    assert_true(v == 1.2e9);
    const char *bad[] = {"", "abc", "0", "-5M", "5m", "5MM", "inf", "nan", "2e16"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (tc_parse_usd(bad[i], &v, &err) != TC_EINVAL)
            fail_msg("'%s' was accepted", bad[i]);
    assert_string_equal(tc_fmt_usd(1234567.4, b, sizeof b), "$1,234,567");
    assert_string_equal(tc_fmt_usd(999.5, b, sizeof b), "$1,000");
    assert_string_equal(tc_fmt_usd(0, b, sizeof b), "$0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_tier_clos_counted_by_hand),
        cmocka_unit_test(torus_4x4x4_counted_by_hand),
        cmocka_unit_test(interpolation_by_hand),
        cmocka_unit_test(equal_cost_sets_every_fabric_link),
        cmocka_unit_test(bad_profiles_are_named),
        cmocka_unit_test(shipped_cost_profile),
        cmocka_unit_test(dollars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
