/*
 * rep_cluster.c - the renderings of topocc cluster (docs/SCHEMA.md): per
 * topology the replay's utilisation, queueing delays, jobs that never
 * fit, and fragmentation; the utilisation over time as a second table.
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

json_t *tc_cluster_json(const tc_cluster_run_out *o, const tc_scenario *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(j, "command", json_string("cluster"));
    json_object_set_new(j, "trace", json_pack("{s:s, s:s, s:I, s:I, s:s}", "source", o->source, "format",
                                               tc_trace_format_name(o->trace.format), "jobs", (json_int_t)o->trace.n,
                                               "skipped_records", (json_int_t)o->trace.skipped, "skipped_why",
                                               o->trace.skipped_why));
    json_object_set_new(j, "scheduler", json_string(tc_cluster_sched_name(o->sched)));
    json_object_set_new(j, "ocs", json_integer(o->ocs));
    json_t *ts = json_array();
    for (int i = 0; i < o->net.n; i++) {
        const tc_cluster_out *r = &o->run[i];
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(o->net.name[i]));
        json_object_set_new(e, "topology", json_string(o->net.topo[i]->spec));
        json_object_set_new(e, "endpoints", json_integer(o->net.topo[i]->n_endpoints));
        json_object_set_new(e, "jobs", json_integer((json_int_t)r->jobs));
        json_object_set_new(e, "started", json_integer((json_int_t)r->started));
        json_object_set_new(e, "never_fit", json_integer((json_int_t)r->never_fit));
        json_object_set_new(e, "makespan_s", num(r->makespan_s));
        json_object_set_new(e, "utilisation", num(r->util_mean));
        json_object_set_new(e, "utilisation_arrivals", num(r->util_arrivals));
        json_object_set_new(e, "allocated_unasked_share", num(r->waste_share));
        json_object_set_new(e, "wait_s", json_pack("{s:o, s:o, s:o, s:o}", "mean", num(r->wait_mean_s), "p50",
                                                   num(r->wait_p50_s), "p99", num(r->wait_p99_s), "max",
                                                   num(r->wait_max_s)));
        json_object_set_new(e, "fragmentation",
                            json_pack("{s:o, s:o, s:o, s:o}", "mean_idle_share", num(r->frag_mean), "time_share",
                                      num(r->frag_time_share), "mean_idle_share_arrivals", num(r->frag_arrivals),
                                      "time_share_arrivals", num(r->frag_time_arrivals)));
        json_t *ser = json_array();
        for (uint32_t b = 0; b < r->samples; b++)
            json_array_append_new(ser, json_pack("[o, o]", num(r->t_s[b]), num(r->util[b])));
        json_object_set_new(e, "utilisation_series", ser);
        json_array_append_new(ts, e);
    }
    json_object_set_new(j, "topologies", ts);
    tc_report_add_scenario(j, s);
    return j;
}

size_t tc_cluster_tables(const tc_cluster_run_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    if (max < 1)
        return 0;
    tc_rtable *t = &tabs[0];
    tc_rtable_init(t, "cluster");
    int c_name = tc_rtable_col(t, "name", "topology", TC_COL_TEXT, NULL, 0);
    int c_run = tc_rtable_col(t, "started", "started", TC_COL_COUNT, NULL, 0);
    int c_nf = tc_rtable_col(t, "never_fit", "never fit", TC_COL_COUNT, NULL, 0);
    int c_ua = tc_rtable_col(t, "utilisation_arrivals", "util arrivals", TC_COL_NUM, "%.3g%%", 100);
    int c_u = tc_rtable_col(t, "utilisation", "util all", TC_COL_NUM, "%.3g%%", 100);
    int c_w = tc_rtable_col(t, "unasked_share", "unasked", TC_COL_NUM, "%.3g%%", 100);
    int c_wm = tc_rtable_col(t, "wait_mean_s", "wait mean", TC_COL_SECONDS, NULL, 0);
    int c_w50 = tc_rtable_col(t, "wait_p50_s", "p50", TC_COL_SECONDS, NULL, 0);
    int c_w99 = tc_rtable_col(t, "wait_p99_s", "p99", TC_COL_SECONDS, NULL, 0);
    int c_fr = tc_rtable_col(t, "frag_idle_share_arrivals", "frag idle", TC_COL_NUM, "%.3g%%", 100);
    int c_ft = tc_rtable_col(t, "frag_time_share_arrivals", "frag time", TC_COL_NUM, "%.3g%%", 100);
    int c_ms = tc_rtable_col(t, "makespan_s", "makespan", TC_COL_SECONDS, NULL, 0);
    for (int i = 0; i < o->net.n; i++) {
        const tc_cluster_out *r = &o->run[i];
        size_t row = tc_rtable_row(t);
        tc_rtable_text(t, row, c_name, o->net.name[i]);
        tc_rtable_num(t, row, c_run, (double)r->started);
        tc_rtable_num(t, row, c_nf, (double)r->never_fit);
        tc_rtable_num(t, row, c_ua, r->util_arrivals);
        tc_rtable_num(t, row, c_u, r->util_mean);
        tc_rtable_num(t, row, c_w, r->waste_share);
        tc_rtable_num(t, row, c_wm, r->wait_mean_s);
        tc_rtable_num(t, row, c_w50, r->wait_p50_s);
        tc_rtable_num(t, row, c_w99, r->wait_p99_s);
        tc_rtable_num(t, row, c_fr, r->frag_arrivals);
        tc_rtable_num(t, row, c_ft, r->frag_time_arrivals);
        tc_rtable_num(t, row, c_ms, r->makespan_s);
    }
    if (max < 2)
        return 1;
    tc_rtable *u = &tabs[1];
    tc_rtable_init(u, "utilisation");
    int u_name = tc_rtable_col(u, "name", "topology", TC_COL_TEXT, NULL, 0);
    int u_t = tc_rtable_col(u, "from_s", "from", TC_COL_SECONDS, NULL, 0);
    int u_v = tc_rtable_col(u, "utilisation", "utilisation", TC_COL_NUM, "%.3g%%", 100);
    for (int i = 0; i < o->net.n; i++)
        for (uint32_t b = 0; b < o->run[i].samples; b++) {
            size_t row = tc_rtable_row(u);
            tc_rtable_text(u, row, u_name, o->net.name[i]);
            tc_rtable_num(u, row, u_t, o->run[i].t_s[b]);
            tc_rtable_num(u, row, u_v, o->run[i].util[b]);
        }
    return 2;
}

void tc_cluster_print(const tc_cluster_run_out *o, const tc_scenario *s, FILE *f)
{
    fprintf(f, "cluster: %zu jobs from %s (%s", o->trace.n, o->source, tc_trace_format_name(o->trace.format));
    if (o->trace.skipped)
        fprintf(f, "; %zu records skipped, the first: %s", o->trace.skipped, o->trace.skipped_why);
    fprintf(f, "), scheduler %s%s\n", o->sched == TC_SCHED_BACKFILL ? "backfill (EASY)" : "fifo",
            o->ocs ? "" : "");
    fprintf(f, "topologies:\n");
    for (int i = 0; i < o->net.n; i++) {
        const tc_topo *t = o->net.topo[i];
        const char *rule = t->kind == TC_TOPO_CLOS ? "any free endpoints, packed (fewest pods, then leaves)"
                           : t->kind == TC_TOPO_TORUS && o->ocs
                               ? "whole cubes joined by optical switches, smaller jobs a cuboid in one cube"
                           : t->kind == TC_TOPO_TORUS ? "a free cuboid slice (the smallest volume that has one)"
                                                      : "the first free endpoints";
        fprintf(f, "  %-10s %s  (%u endpoints; %s", o->net.name[i], t->spec, t->n_endpoints, rule);
        if (t->kind == TC_TOPO_TORUS && o->ocs)
            fprintf(f, ", cubes of %u per dimension", o->ocs);
        if (o->too_large[i])
            fprintf(f, "; %zu jobs larger than it never run", o->too_large[i]);
        fprintf(f, ")\n");
    }
    fprintf(f, "\nutil arrivals: the allocated share of the cluster from the first to the last arrival; util all: the\n"
               "same to the last end; unasked: allocated endpoint-time no job asked for (cuboids, cubes); wait:\n"
               "start - arrival of the jobs that ran; frag idle: the cluster's free share while the queue's head\n"
               "waits with enough endpoints free for it, averaged over the arrivals; frag time: the share of the\n"
               "arrivals' span in which it waits so:\n");
    tc_rtable tabs[2];
    size_t n = tc_cluster_tables(o, s, tabs, 2);
    if (n >= 1)
        tc_rtable_print(&tabs[0], f);
    /* over time: the series in tenths of the arrivals' span */
    fprintf(f, "\nallocated share over the arrivals' span, by tenths:\n");
    for (int i = 0; i < o->net.n; i++) {
        const tc_cluster_out *r = &o->run[i];
        fprintf(f, "  %-10s", o->net.name[i]);
        for (uint32_t k = 0; k < 10; k++) {
            uint32_t lo = r->samples * k / 10, hi = r->samples * (k + 1) / 10;
            double sum = 0;
            for (uint32_t b = lo; b < hi; b++)
                sum += r->util[b];
            fprintf(f, " %5.1f%%", hi > lo ? 100 * sum / (hi - lo) : 0.0);
        }
        fprintf(f, "\n");
    }
    for (size_t k = 0; k < n; k++)
        tc_rtable_free(&tabs[k]);
}
