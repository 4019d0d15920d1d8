/*
 * report.c - tables, CSV and JSON for results and topologies.
 * The JSON field names are a stable schema (docs/SCHEMA.md); adding a field
 * is compatible, renaming one bumps TC_SCHEMA_VERSION.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/report.h"
#include "topocc/scenario.h"

tc_status tc_format_parse(const char *s, tc_format *out, tc_err *err)
{
    if (s && strcmp(s, "table") == 0)
        *out = TC_FMT_TABLE;
    else if (s && strcmp(s, "csv") == 0)
        *out = TC_FMT_CSV;
    else if (s && strcmp(s, "json") == 0)
        *out = TC_FMT_JSON;
    else
        return tc_fail(err, TC_EINVAL, "unknown format '%s': accepted are table, csv, json", s ? s : "");
    return TC_OK;
}

double tc_report_bw(const tc_result *r, double bw)
{
    return r->time_s > 0 ? bw : NAN;
}

json_t *tc_report_result_json(const tc_result *r, const tc_topo *t, tc_routing routing)
{
    if (routing == TC_ROUTE_DEFAULT)
        routing = tc_eval_routing(r->mode, t, routing);
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "topology", json_string(t->spec));
    json_object_set_new(o, "op", json_string(tc_op_name(r->op)));
    char buf[64];
    json_object_set_new(o, "algo", json_string(tc_result_algo_name(r, false, buf, sizeof buf)));
    json_object_set_new(o, "algo_requested",
                        json_string(tc_result_algo_name(r, true, buf, sizeof buf)));
    json_object_set_new(o, "chunks", json_integer(r->chunks));
    if (r->proto) {
        json_object_set_new(o, "proto", json_string(tc_proto_name(r->proto)));
        json_object_set_new(o, "channels", json_integer(r->channels));
        json_object_set_new(o, "nccl_algo", json_string(tc_nccl_op_label(r->nccl_impl, r->op)));
    }
    if (r->algo == TC_ALGO_MPICH)
        json_object_set_new(o, "mpich_algo", json_string(tc_algo_name(r->nccl_impl)));
    json_object_set_new(o, "ranks", json_integer(r->ranks));
    json_object_set_new(o, "bytes", json_real(r->bytes));
    json_object_set_new(o, "mode", json_string(tc_mode_name(r->mode)));
    json_object_set_new(o, "routing", json_string(tc_routing_name(routing, t)));
    json_object_set_new(o, "hop_lat_s", json_real(t->hop_lat));
    json_object_set_new(o, "alpha_s", json_real(t->alpha));
    json_object_set_new(o, "time_s", json_real(r->time_s));
    double alg = tc_report_bw(r, r->algbw_Bps), bus = tc_report_bw(r, r->busbw_Bps);
    json_object_set_new(o, "algbw_Bps", isfinite(alg) ? json_real(alg) : json_null());
    json_object_set_new(o, "busbw_Bps", isfinite(bus) ? json_real(bus) : json_null());
    json_object_set_new(o, "lower_bound_s", json_real(r->lower_bound_s));
    if (r->bounds_upper_s > 0) /* flow bounds: time_s is the lower end */
        json_object_set_new(o, "bounds_upper_s", json_real(r->bounds_upper_s));
    json_object_set_new(o, "phases", json_integer(r->phases));
    json_object_set_new(o, "steps", json_integer(r->steps));
    if (r->transfers)
        json_object_set_new(o, "transfers", json_integer((json_int_t)r->transfers));
    if (r->groups) {
        /* Sub-groups: time_s is the slowest group's; flow gives every
         * group's completion, formula and steps the slowest only. */
        bool each = r->mode == TC_MODE_FLOW && !isnan(r->group_fastest_s);
        json_t *g = json_object();
        json_object_set_new(g, "count", json_integer(r->groups));
        json_object_set_new(g, "size", json_integer(r->group_size));
        json_object_set_new(g, "slowest_s", json_real(r->time_s));
        json_object_set_new(g, "fastest_s", each ? json_real(r->group_fastest_s) : json_null());
        json_object_set_new(g, "spread_s", each ? json_real(r->time_s - r->group_fastest_s) : json_null());
        json_object_set_new(g, "slowest_group", each ? json_integer(r->group_slowest) : json_null());
        json_object_set_new(g, "fastest_group", each ? json_integer(r->group_fastest) : json_null());
        json_object_set_new(g, "timing", json_string(each ? "each group simulated as a job of its own"
                                                          : "groups in lock step: the slowest group only"));
        json_object_set_new(o, "groups", g);
    }
    return o;
}

json_t *tc_report_hot_links_json(const tc_topo *t, const tc_flow_result *fr)
{
    json_t *hot = json_array();
    char name[128];
    for (size_t i = 0; i < fr->nhot; i++) {
        json_t *h = json_object();
        json_object_set_new(h, "link", json_integer(fr->hot[i].link));
        json_object_set_new(h, "name", json_string(tc_topo_link_name(t, fr->hot[i].link, name, sizeof name)));
        json_object_set_new(h, "bytes", json_real(fr->hot[i].bytes));
        json_object_set_new(h, "utilisation", json_real(fr->hot[i].utilisation));
        json_array_append_new(hot, h);
    }
    return hot;
}

json_t *tc_report_topo_json(const tc_topo *t, bool links)
{
    tc_topo_info in;
    tc_topo_get_info_as_is(t, &in);
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(o, "topology", json_string(t->spec));
    json_object_set_new(o, "kind", json_string(tc_topo_kind_name(t->kind)));
    json_object_set_new(o, "endpoints", json_integer(in.endpoints));
    json_object_set_new(o, "switches", json_integer(in.switches));
    json_object_set_new(o, "links", json_integer(in.links));
    json_object_set_new(o, "diameter_links", json_integer(in.diameter));
    json_object_set_new(o, "bisection_Bps", json_real(in.bisection_Bps));
    json_object_set_new(o, "injection_Bps", json_real(in.injection_Bps));
    json_object_set_new(o, "ports_per_endpoint", json_integer(in.ports_per_endpoint));
    json_object_set_new(o, "min_latency_s", json_real(in.min_latency_s));
    json_object_set_new(o, "max_latency_s", json_real(in.max_latency_s));
    json_object_set_new(o, "hop_lat_s", json_real(t->hop_lat));
    json_object_set_new(o, "alpha_s", json_real(t->alpha));
    if (t->kind == TC_TOPO_CLOS) {
        json_t *ov = json_array();
        for (int i = 1; i < t->levels; i++)
            json_array_append_new(ov, json_real(in.oversub[i]));
        json_object_set_new(o, "oversubscription", ov);
    }
    if (t->kind == TC_TOPO_MULTIDC) {
        const tc_topo *pd = t->pod[0];
        const char *ps = strchr(pd->spec, ':');
        json_t *m = json_object();
        json_object_set_new(m, "pods", json_integer(t->n_pods));
        json_object_set_new(m, "pod_kind", json_string(tc_topo_kind_name(pd->kind)));
        json_object_set_new(m, "pod_spec", json_string(ps ? ps + 1 : pd->spec));
        json_object_set_new(m, "pod_endpoints", json_integer(t->pod_endpoints));
        json_object_set_new(m, "wan_links", json_integer(t->wan_links));
        json_object_set_new(m, "wan_bw_Bps", json_real(t->wan_bw));
        json_object_set_new(m, "wan_lat_s", json_real(t->wan_lat));
        json_object_set_new(m, "gw_bw_Bps", json_real(t->gw_bw));
        json_object_set_new(m, "gw_lat_s", json_real(t->gw_lat));
        json_object_set_new(m, "cross_pod_latency_s", json_real(t->cross_lat));
        json_object_set_new(o, "multidc", m);
    }
    if (links) {
        json_t *ls = json_array();
        char name[128];
        for (uint32_t i = 0; i < t->n_links; i++) {
            const tc_link *l = &t->links[i];
            json_t *e = json_object();
            json_object_set_new(e, "id", json_integer(i));
            json_object_set_new(e, "src", json_integer(l->src));
            json_object_set_new(e, "dst", json_integer(l->dst));
            json_object_set_new(e, "name", json_string(tc_topo_link_name(t, i, name, sizeof name)));
            json_object_set_new(e, "bw_Bps", json_real(l->bw));
            json_object_set_new(e, "lat_s", json_real(l->lat));
            json_object_set_new(e, "kind", json_string(tc_link_kind_name((tc_link_kind)l->kind)));
            json_array_append_new(ls, e);
        }
        json_object_set_new(o, "link_list", ls);
    }
    return o;
}

tc_status tc_table_init(tc_table *tb, int ncols)
{
    memset(tb, 0, sizeof *tb);
    tb->ncols = ncols;
    tb->right = tc_calloc((size_t)ncols, sizeof *tb->right);
    if (!tb->right)
        tc_oom_note(); /* the text renderers leave the table out */
    return tb->right ? TC_OK : TC_EINTERNAL;
}

void tc_table_free(tc_table *tb)
{
    for (size_t i = 0; i < tb->nrows * (size_t)tb->ncols; i++)
        free(tb->cells[i]);
    free(tb->cells);
    free(tb->right);
    memset(tb, 0, sizeof *tb);
}

tc_status tc_table_row(tc_table *tb, const char *const *cells)
{
    if (tb->nrows == tb->cap) {
        size_t cap = tb->cap ? 2 * tb->cap : 16;
        char **v = realloc(tb->cells, cap * (size_t)tb->ncols * sizeof *v);
        if (!v) {
            tc_oom_note(); /* the text renderers leave the row out */
            return TC_EINTERNAL;
        }
        tb->cells = v;
        tb->cap = cap;
    }
    char **row = tb->cells + tb->nrows * (size_t)tb->ncols;
    for (int c = 0; c < tb->ncols; c++) {
        if (!(row[c] = strdup(cells[c] ? cells[c] : ""))) {
            while (c-- > 0)
                free(row[c]);
            tc_oom_note();
            return TC_EINTERNAL;
        }
    }
    tb->nrows++;
    return TC_OK;
}

void tc_table_print(const tc_table *tb, FILE *f)
{
    size_t w[64] = {0};
    int nc = tb->ncols < 64 ? tb->ncols : 64;
    for (size_t r = 0; r < tb->nrows; r++)
        for (int c = 0; c < nc; c++) {
            size_t l = strlen(tb->cells[r * (size_t)tb->ncols + (size_t)c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < tb->nrows; r++) {
        for (int c = 0; c < nc; c++) {
            const char *s = tb->cells[r * (size_t)tb->ncols + (size_t)c];
            if (tb->right[c])
                fprintf(f, "%s%*s", c ? "  " : "", (int)w[c], s);
            else if (c == nc - 1)
                fprintf(f, "%s%s", c ? "  " : "", s);
            else
                fprintf(f, "%s%-*s", c ? "  " : "", (int)w[c], s);
        }
        fputc('\n', f);
        if (r == 0) {
            size_t tot = 0;
            for (int c = 0; c < nc; c++)
                tot += w[c] + (c ? 2 : 0);
            for (size_t i = 0; i < tot; i++)
                fputc('-', f);
            fputc('\n', f);
        }
    }
}

tc_status tc_write_json(json_t *v, const char *path, tc_err *err)
{
    return tc_json_write(v, path, err);
}

const char *tc_report_mode_name(tc_mode m, const struct tc_scenario *s)
{
    return m == TC_MODE_FLOW && s && s->flow_bounds ? "flow, bounded (--flow-bounds: the lower ends)" : tc_mode_name(m);
}
