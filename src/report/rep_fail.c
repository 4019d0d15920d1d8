/*
 * rep_fail.c - the renderings of topocc failures (docs/SCHEMA.md): per
 * topology what each draw fails, the healthy time, the share of draws in
 * which the job cannot run, and the slowdown distribution of the others
 * (quantiles and a histogram with fixed bins, tc_fail_bin_edges).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/render.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The draws that ran faster than healthy (slowdown below 1, rounding
 * aside): a routing change, said so in the text and counted in the JSON. */
static uint32_t faster_draws(const tc_failures_topo *ft)
{
    uint32_t k = 0;
    while (k < ft->ran && ft->slowdown && ft->slowdown[k] < 1 - 1e-9)
        k++;
    return k;
}

json_t *tc_failures_json(const tc_failures_out *o, const tc_scenario *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(j, "command", json_string("failures"));
    json_object_set_new(j, "op", json_string(tc_op_name(o->op)));
    json_object_set_new(j, "bytes", json_real(o->bytes));
    json_object_set_new(j, "algo", json_string(o->algo));
    json_object_set_new(j, "mode", json_string(tc_mode_name(o->mode)));
    json_object_set_new(j, "trials", json_integer(o->trials));
    json_object_set_new(j, "fail_random", json_string(o->fail_random));
    json_t *edges = json_array();
    for (int b = 0; b <= TC_FAIL_BINS; b++)
        json_array_append_new(edges, isfinite(tc_fail_bin_edges[b]) ? json_real(tc_fail_bin_edges[b])
                                                                     : json_string("inf"));
    json_object_set_new(j, "histogram_edges", edges);
    json_t *ts = json_array();
    for (int i = 0; i < o->net.n; i++) {
        const tc_failures_topo *ft = &o->topo[i];
        const tc_topo *t = o->net.topo[i];
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(o->net.name[i]));
        json_object_set_new(e, "topology", json_string(t->spec));
        json_object_set_new(e, "endpoints", json_integer(o->info[i].endpoints));
        json_object_set_new(e, "ranks", json_integer(o->ranks[i]));
        json_object_set_new(e, "routing", json_string(tc_routing_name(o->routing[i], t)));
        json_object_set_new(e, "cables_per_draw", json_integer(ft->cables));
        json_object_set_new(e, "eligible_cables", json_integer(ft->eligible_cables));
        json_object_set_new(e, "cable_fraction", ft->eligible_cables ? json_real((double)ft->cables / ft->eligible_cables)
                                                                    : json_null());
        json_object_set_new(e, "switches_per_draw", json_integer(ft->switches));
        json_object_set_new(e, "healthy", tc_report_result_json(&ft->healthy, t, o->routing[i]));
        json_object_set_new(e, "ran", json_integer(ft->ran));
        json_object_set_new(e, "faster_draws", json_integer(faster_draws(ft)));
        json_object_set_new(e, "cut_off", json_integer(ft->cut));
        json_object_set_new(e, "cut_off_share", json_real(o->trials ? (double)ft->cut / o->trials : 0));
        json_object_set_new(e, "first_cut_off",
                            ft->first_cut < 0 ? json_null()
                                              : json_pack("{s:i, s:s}", "draw", ft->first_cut, "reason", ft->cut_reason));
        json_object_set_new(e, "slowdown",
                            json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "min", num(ft->min), "p50", num(ft->p50), "p90",
                                      num(ft->p90), "p99", num(ft->p99), "max", num(ft->max), "mean", num(ft->mean)));
        json_t *h = json_array();
        for (int b = 0; b < TC_FAIL_BINS; b++)
            json_array_append_new(h, json_integer(ft->hist[b]));
        json_object_set_new(e, "histogram", h);
        json_array_append_new(ts, e);
    }
    json_object_set_new(j, "topologies", ts);
    tc_report_add_scenario(j, s);
    return j;
}

/* The cables a draw takes from, as the text names them: the fabric's, and
 * with hostlinks=1 or nvlinks=1 those too (the fraction is of them all). */
static const char *pool_name(const tc_failures_out *o)
{
    return o->hostlinks && o->nvlinks ? "fabric, host and node"
           : o->hostlinks             ? "fabric and host"
           : o->nvlinks               ? "fabric and node"
                                      : "fabric";
}

/* What switches=K draws on network i: a torus's are its routers. */
static bool draws_routers(const tc_failures_out *o, int i)
{
    return tc_topo_fabric_kind(o->net.topo[i]) == TC_TOPO_TORUS;
}

size_t tc_failures_tables(const tc_failures_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    if (max < 1)
        return 0;
    int routers = 0;
    for (int i = 0; i < o->net.n; i++)
        routers += draws_routers(o, i);
    tc_rtable *t = &tabs[0];
    tc_rtable_init(t, "failures");
    int c_name = tc_rtable_col(t, "name", "topology", TC_COL_TEXT, NULL, 0);
    int c_cab = tc_rtable_col(t, "cables_per_draw", "cables", TC_COL_COUNT, NULL, 0);
    /* the fraction is of the cables drawn from: "of fabric" only where
     * those are the fabric's */
    int c_frac = tc_rtable_col(t, "cable_fraction", o->hostlinks || o->nvlinks ? "of eligible" : "of fabric",
                               TC_COL_NUM, "%.3g%%", 100);
    int c_sw = tc_rtable_col(t, "switches_per_draw",
                             routers == o->net.n ? "routers" : routers ? "switches/routers" : "switches", TC_COL_COUNT,
                             NULL, 0);
    int c_h = tc_rtable_col(t, "healthy_s", "healthy", TC_COL_SECONDS, NULL, 0);
    int c_ran = tc_rtable_col(t, "ran", "ran", TC_COL_COUNT, NULL, 0);
    int c_cut = tc_rtable_col(t, "cut_off_share", "cut off", TC_COL_NUM, "%.3g%%", 100);
    int c_q[6];
    static const char *qn[6] = {"slowdown_min", "slowdown_p50", "slowdown_p90", "slowdown_p99", "slowdown_max",
                                "slowdown_mean"};
    static const char *ql[6] = {"min", "p50", "p90", "p99", "max", "mean"};
    for (int k = 0; k < 6; k++)
        c_q[k] = tc_rtable_col(t, qn[k], ql[k], TC_COL_NUM, "%.4gx", 0);
    for (int i = 0; i < o->net.n; i++) {
        const tc_failures_topo *ft = &o->topo[i];
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, c_name, o->net.name[i]);
        tc_rtable_num(t, r, c_cab, ft->cables);
        tc_rtable_num(t, r, c_frac, ft->eligible_cables ? (double)ft->cables / ft->eligible_cables : NAN);
        tc_rtable_num(t, r, c_sw, ft->switches);
        tc_rtable_num(t, r, c_h, ft->healthy.time_s);
        tc_rtable_num(t, r, c_ran, ft->ran);
        tc_rtable_num(t, r, c_cut, o->trials ? (double)ft->cut / o->trials : NAN);
        const double q[6] = {ft->min, ft->p50, ft->p90, ft->p99, ft->max, ft->mean};
        for (int k = 0; k < 6; k++)
            tc_rtable_num(t, r, c_q[k], q[k]);
    }
    if (max < 2)
        return 1;
    tc_rtable *h = &tabs[1];
    tc_rtable_init(h, "histogram");
    int h_name = tc_rtable_col(h, "name", "topology", TC_COL_TEXT, NULL, 0);
    int h_lo = tc_rtable_col(h, "slowdown_from", "slowdown from", TC_COL_NUM, "%.4gx", 0);
    int h_hi = tc_rtable_col(h, "slowdown_below", "below", TC_COL_NUM, "%.4gx", 0);
    int h_n = tc_rtable_col(h, "draws", "draws", TC_COL_COUNT, NULL, 0);
    for (int i = 0; i < o->net.n; i++)
        for (int b = 0; b < TC_FAIL_BINS; b++) {
            size_t r = tc_rtable_row(h);
            tc_rtable_text(h, r, h_name, o->net.name[i]);
            tc_rtable_num(h, r, h_lo, tc_fail_bin_edges[b]);
            tc_rtable_num(h, r, h_hi, tc_fail_bin_edges[b + 1]);
            tc_rtable_num(h, r, h_n, o->topo[i].hist[b]);
        }
    return 2;
}

void tc_failures_print(const tc_failures_out *o, const tc_scenario *s, FILE *f)
{
    static const char *why[] = {"the routes around a failure go another way than the healthy ones, off a link "
                                "those overload",
                                "a failed cable moves pairs off the colliding ECMP hash the healthy routes share",
                                "D-mod-k spreads the destinations of a failed cable over the other up-links, "
                                "moving them off the one the healthy routes overload"};
    char b[32];
    fprintf(f, "failures: %s of %s, algorithm %s, mode %s; %u draws of %s on each topology\n", tc_op_name(o->op),
            tc_fmt_size(o->bytes, b, sizeof b), o->algo, tc_report_mode_name(o->mode, s), o->trials, o->fail_random);
    fprintf(f, "topologies:\n");
    for (int i = 0; i < o->net.n; i++) {
        const tc_failures_topo *ft = &o->topo[i];
        char an[96];
        if (ft->healthy.algo == TC_ALGO_MPICH)
            tc_mpich_name(ft->healthy.nccl_impl, ft->healthy.throttle, an, sizeof an);
        else
            tc_result_algo_name(&ft->healthy, false, an, sizeof an);
        fprintf(f, "  %-10s %s  (%u endpoints, %u ranks, %s, routing %s; a draw fails %u of %u %s cables, %.3g%%",
                o->net.name[i], o->net.topo[i]->spec, o->info[i].endpoints, o->ranks[i], an,
                tc_routing_name(o->routing[i], o->net.topo[i]), ft->cables, ft->eligible_cables, pool_name(o),
                ft->eligible_cables ? 100.0 * ft->cables / ft->eligible_cables : 0.0);
        if (ft->switches)
            fprintf(f, ", and %u %s", ft->switches,
                    draws_routers(o, i) ? (ft->switches == 1 ? "router" : "routers")
                                        : (ft->switches == 1 ? "switch" : "switches"));
        fprintf(f, ")\n");
    }
    fprintf(f, "\nslowdown = time with the draw's failures / time without them, over the draws the job ran in:\n");
    tc_rtable tabs[2];
    size_t n = tc_failures_tables(o, s, tabs, 2);
    if (n >= 1)
        tc_rtable_print(&tabs[0], f);
    for (int i = 0; i < o->net.n; i++) {
        uint32_t k = faster_draws(&o->topo[i]);
        if (k)
            fprintf(f, "%s: %u of %u draws ran faster than healthy (down to %.4gx): not a failure helping, a routing "
                       "change: %s; the healthy time is this routing's, not the best routing's\n",
                    o->net.name[i], k, o->topo[i].ran, o->topo[i].min,
                    why[o->routing[i] == TC_ROUTE_DMODK ? 2 : o->routing[i] == TC_ROUTE_ECMP ? 1 : 0]);
    }
    for (int i = 0; i < o->net.n; i++)
        if (o->topo[i].first_cut >= 0)
            fprintf(f, "%s: cut off in %u of %u draws; the first, draw %d: %s\n", o->net.name[i], o->topo[i].cut,
                    o->trials, o->topo[i].first_cut, o->topo[i].cut_reason);
    if (n >= 2) {
        fprintf(f, "\nslowdown histogram (draws per bin):\n");
        tc_rtable_print(&tabs[1], f);
    }
    for (size_t k = 0; k < n; k++)
        tc_rtable_free(&tabs[k]);
}
