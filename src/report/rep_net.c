/*
 * rep_net.c - the renderings of the network commands' outcomes (topo,
 * collective, compare, concurrent): the JSON document (docs/SCHEMA.md), the
 * typed tables (text and SI-unit CSV) and the text for people.
 *
 * JSON and CSV carry numbers in SI base units only; formatting such as
 * "45.93ms" or "1.994x" happens in the text rendering alone.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/cost.h"
#include "topocc/render.h"

/* The algorithm a concurrent job ran, its variant and throttle included;
 * mpich's choice as results name it (mpich:scattered,throttle=4). */
static const char *job_algo_name(const tc_concurrent_job *jb, char *buf, size_t len)
{
    if (jb->algo == TC_ALGO_MPICH)
        return tc_mpich_name(jb->chosen, jb->throttle, buf, len);
    tc_coll_req q = {.algo = jb->algo, .variant = jb->variant, .throttle = jb->throttle};
    return tc_algo_format(&q, buf, len);
}

/* The algorithm a result ran, its variant included ("rhd:order=far"). */
#define RESULT_ALGO(r) result_algo((r), (char[96]){0}, 96)

/* The algorithm a result ran: with its variant, or an NCCL protocol and
 * channel count ("nccl:Simple,24ch"), or mpich's choice ("mpich:rhd"). */
static const char *result_algo(const tc_result *r, char *buf, size_t len)
{
    tc_result_algo_name(r, false, buf, len);
    if (r->algo == TC_ALGO_MPICH)
        tc_mpich_name(r->nccl_impl, r->throttle, buf, len);
    if (r->proto) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%s%s%s,%uch", strchr(buf, ':') ? "," : ":",
                 r->algo == TC_ALGO_NCCL ? tc_nccl_op_label(r->nccl_impl, r->op) : "", r->algo == TC_ALGO_NCCL ? "," : "",
                 tc_proto_name(r->proto), r->channels);
    }
    return buf;
}

static const char *multipath_name(tc_multipath m)
{
    return m == TC_MULTIPATH_SPRAY ? "spray" : "route";
}

static const char *deps_name(tc_flow_deps d)
{
    return d == TC_DEPS_AUTO ? "auto" : d == TC_DEPS_FIFO ? "fifo" : d == TC_DEPS_RECV ? "recv" : "rendezvous";
}

/* The scenario that produced a result, so it can be reproduced from its
 * own record. */
/* One line naming the topology with what bounds every collective on it:
 * its endpoints and the injection bandwidth of each. */
static void net_header(FILE *f, const tc_topo *t, const tc_topo_info *in)
{
    char b[32];
    fprintf(f, "topology %s (%u endpoints, injection %s per endpoint)\n", t->spec, in->endpoints,
            tc_fmt_rate(in->injection_Bps, b, sizeof b));
}

/* What has failed in network i (empty when nothing): the fabric cables
 * down, as a count and a fraction of that topology's own, the vertices
 * down, and the cables and switches a random draw chose (so that a run
 * says what it ran on). */
static void failures_line(const tc_net *net, int i, char *buf, size_t len)
{
    const tc_topo *t = net->topo[i];
    buf[0] = '\0';
    if (!t->n_failed)
        return;
    uint32_t down = 0, hosts = 0;
    for (uint32_t v = 0; t->vertex_failed && v < t->n_vertices; v++) {
        down += t->vertex_failed[v] != 0;
        hosts += t->vertex_failed[v] && v < t->n_endpoints;
    }
    size_t n = (size_t)snprintf(buf, len, "%u of %u fabric cables down (%.3g%%)", net->failed_cables[i],
                                net->fabric_cables[i],
                                net->fabric_cables[i] ? 100.0 * net->failed_cables[i] / net->fabric_cables[i] : 0.0);
    if (down && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", %u switches and %u endpoints down", down - hosts, hosts);
    const tc_fail_drawn *d = &net->drawn[i];
    if (d->ncables && n < len) {
        n += (size_t)snprintf(buf + n, len - n, "; drawn: cables");
        for (uint32_t k = 0; k < d->ncables && n + 16 < len; k++)
            n += (size_t)snprintf(buf + n, len - n, " %u", d->cables[k]);
    }
    if (d->nswitches && n < len) {
        n += (size_t)snprintf(buf + n, len - n, "%s switches", d->ncables ? "," : "; drawn:");
        for (uint32_t k = 0; k < d->nswitches && n + 16 < len; k++)
            n += (size_t)snprintf(buf + n, len - n, " %u", d->switches[k]);
    }
}

static json_t *failures_json(const tc_net *net, int i)
{
    const tc_topo *t = net->topo[i];
    if (!t->n_failed)
        return json_null();
    json_t *j = json_object();
    json_object_set_new(j, "fabric_cables", json_integer(net->fabric_cables[i]));
    json_object_set_new(j, "fabric_cables_down", json_integer(net->failed_cables[i]));
    json_object_set_new(j, "fraction_down",
                        json_real(net->fabric_cables[i] ? (double)net->failed_cables[i] / net->fabric_cables[i] : 0));
    json_object_set_new(j, "directed_links_down", json_integer(t->n_failed));
    json_t *v = json_array();
    for (uint32_t x = 0; t->vertex_failed && x < t->n_vertices; x++)
        if (t->vertex_failed[x])
            json_array_append_new(v, json_integer(x));
    json_object_set_new(j, "vertices_down", v);
    json_t *c = json_array(), *sw = json_array();
    for (uint32_t k = 0; k < net->drawn[i].ncables; k++)
        json_array_append_new(c, json_integer(net->drawn[i].cables[k]));
    for (uint32_t k = 0; k < net->drawn[i].nswitches; k++)
        json_array_append_new(sw, json_integer(net->drawn[i].switches[k]));
    json_object_set_new(j, "drawn_cables", c);
    json_object_set_new(j, "drawn_switches", sw);
    return j;
}

/* Field/value rows of the text renderings. */
static void kv(tc_table *tb, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(tc_table *tb, const char *k, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char *row[2] = {k, line};
    tc_table_row(tb, row);
}

/* The table builders write into tabs[n] while there is room: a caller
 * that wants the primary table only passes max 1. */
#define ADD_TABLE(build)         \
    do {                         \
        if (n < max) {           \
            build(o, &tabs[n]);  \
            n++;                 \
        }                        \
    } while (0)

void tc_hot_links_table(tc_rtable *t, const tc_topo *topo, const tc_flow_result *fr)
{
    tc_rtable_init(t, "hot_links");
    int c_link = tc_rtable_col(t, "link", "link", TC_COL_COUNT, NULL, 0);
    int c_name = tc_rtable_col(t, "name", "name", TC_COL_TEXT, NULL, 0);
    int c_bytes = tc_rtable_col(t, "bytes", "bytes", TC_COL_BYTES, NULL, 0);
    int c_util = tc_rtable_col(t, "utilisation", "busy", TC_COL_NUM, "%.1f%%", 100);
    char name[128];
    for (size_t i = 0; i < fr->nhot; i++) {
        size_t r = tc_rtable_row(t);
        tc_rtable_num(t, r, c_link, fr->hot[i].link);
        tc_rtable_text(t, r, c_name, tc_topo_link_name(topo, fr->hot[i].link, name, sizeof name));
        tc_rtable_num(t, r, c_bytes, fr->hot[i].bytes);
        tc_rtable_num(t, r, c_util, fr->hot[i].utilisation);
    }
}

static void print_hot_links(FILE *f, const tc_topo *t, const tc_flow_result *fr, const char *indent, size_t max)
{
    char b[32], name[128];
    for (size_t i = 0; i < fr->nhot && i < max; i++)
        fprintf(f, "%s%s (link %u): %s, %.1f%% busy\n", indent, tc_topo_link_name(t, fr->hot[i].link, name, sizeof name),
                fr->hot[i].link, tc_fmt_size(fr->hot[i].bytes, b, sizeof b), 100 * fr->hot[i].utilisation);
}

/* ---- bills of materials (--cost; topocc/cost.h) ------------------------------ */

/* The scenario's cost profile, NULL when it has none (or, which resolving
 * has ruled out, when it cannot be read). */
static tc_cost *scn_cost(const tc_scenario *s)
{
    tc_cost *c = NULL;
    tc_err e;
    if (!s || !s->cost_profile[0] || tc_scenario_cost(s, &c, &e) != TC_OK)
        return NULL;
    return c;
}

/* Each profile field a line's price came from: "a + b; c" -> a, b, c. */
static int line_fields(const tc_bom_line *l, char names[][64], int max)
{
    int n = 0;
    const char *p = l->fields;
    while (*p && n < max) {
        size_t k = strcspn(p, " +;");
        if (k) {
            snprintf(names[n], 64, "%.*s", (int)(k < 63 ? k : 63), p);
            bool dup = false;
            for (int i = 0; i < n && !dup; i++)
                dup = strcmp(names[i], names[n]) == 0;
            n += !dup;
        }
        p += k;
        p += strspn(p, " +;");
    }
    return n;
}

static bool field_assumed(const tc_cost *c, const char *f)
{
    return strncmp(tc_cost_source(c, f), "assumed:", 8) == 0;
}

static json_t *bom_json(const tc_bom *b, const tc_cost *c, const tc_topo *t, const tc_scenario *s)
{
    json_t *j = json_object(), *items = json_array();
    json_object_set_new(j, "profile", json_string(tc_cost_name(c)));
    json_object_set_new(j, "currency", json_string("USD"));
    json_object_set_new(j, "total_usd", json_real(b->total_usd));
    double g = tc_cost_fabric_gbps(t);
    json_object_set_new(j, "fabric_link_gbps", g > 0 ? json_real(g) : json_null());
    json_object_set_new(j, "equalized_to_usd",
                        s->equalize_cost_usd > 0 ? json_real(s->equalize_cost_usd) : json_null());
    json_object_set_new(j, "counts",
                        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "switches", (json_int_t)b->switches, "switch_ports",
                                  (json_int_t)b->switch_ports, "nic_ports", (json_int_t)b->nic_ports, "copper_cables",
                                  (json_int_t)b->copper_cables, "optical_cables", (json_int_t)b->optical_cables,
                                  "transceivers", (json_int_t)b->transceivers));
    for (int i = 0; i < b->n; i++) {
        const tc_bom_line *l = &b->line[i];
        json_t *e = json_object(), *fs = json_array(), *ss = json_array();
        char names[8][64];
        int nf = line_fields(l, names, 8);
        bool assumed = false;
        for (int k = 0; k < nf; k++) {
            json_array_append_new(fs, json_string(names[k]));
            json_array_append_new(ss, json_string(tc_cost_source(c, names[k])));
            assumed |= field_assumed(c, names[k]);
        }
        json_object_set_new(e, "item", json_string(tc_bom_kind_name(l->kind)));
        json_object_set_new(e, "detail", json_string(l->detail));
        json_object_set_new(e, "level", json_integer(l->level));
        if (l->kind == TC_BOM_SWITCH) {
            json_object_set_new(e, "ports", json_integer(l->ports));
            json_object_set_new(e, "ports_up", json_integer(l->ports_up));
        }
        json_object_set_new(e, "gbps", json_real(l->gbps));
        json_object_set_new(e, "count", json_integer((json_int_t)l->count));
        json_object_set_new(e, "unit_usd", json_real(l->unit_usd));
        json_object_set_new(e, "total_usd", json_real(l->total_usd));
        json_object_set_new(e, "fields", fs);
        json_object_set_new(e, "sources", ss);
        json_object_set_new(e, "assumed", json_boolean(assumed));
        json_array_append_new(items, e);
    }
    json_object_set_new(j, "items", items);
    return j;
}

/* "cost": the bill of materials of t, or null without a cost profile. */
static json_t *cost_json(const tc_topo *t, const tc_cost *c, const tc_scenario *s)
{
    tc_bom *b = c ? malloc(sizeof *b) : NULL;
    tc_err e;
    json_t *j = b && tc_bom_build(t, c, b, &e) == TC_OK ? bom_json(b, c, t, s) : json_null();
    free(b);
    return j;
}

/* The table "bill_of_materials": one row per line, each topology's. */
static void bom_rows(tc_rtable *t, const char *name, const tc_bom *b, const tc_cost *c)
{
    if (t->ncols == 0) {
        tc_rtable_init(t, "bill_of_materials");
        tc_rtable_col(t, "name", "name", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "item", "item", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "detail", "detail", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "gbps", "speed (Gb/s)", TC_COL_NUM, "%.4g", 0);
        tc_rtable_col(t, "count", "count", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "unit_usd", "unit price ($)", TC_COL_NUM, "%.2f", 0);
        tc_rtable_col(t, "total_usd", "total ($)", TC_COL_NUM, "%.2f", 0);
        tc_rtable_col(t, "fields", "fields", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "assumed", "assumed", TC_COL_TEXT, NULL, 0);
    }
    for (int i = 0; i <= b->n; i++) {
        size_t r = tc_rtable_row(t);
        tc_rtable_text(t, r, 0, name);
        if (i == b->n) { /* the total */
            tc_rtable_text(t, r, 1, "total");
            tc_rtable_num(t, r, 6, b->total_usd);
            continue;
        }
        const tc_bom_line *l = &b->line[i];
        char names[8][64];
        int nf = line_fields(l, names, 8);
        bool assumed = false;
        for (int k = 0; k < nf; k++)
            assumed |= field_assumed(c, names[k]);
        tc_rtable_text(t, r, 1, tc_bom_kind_name(l->kind));
        tc_rtable_text(t, r, 2, l->detail);
        tc_rtable_num(t, r, 3, l->gbps);
        tc_rtable_num(t, r, 4, (double)l->count);
        tc_rtable_num(t, r, 5, l->unit_usd);
        tc_rtable_num(t, r, 6, l->total_usd);
        tc_rtable_text(t, r, 7, l->fields);
        tc_rtable_text(t, r, 8, assumed ? "yes" : "no");
    }
}

/* The bill_of_materials table of every network (none without a cost profile). */
static bool bom_table(const tc_net *net, const tc_scenario *s, tc_rtable *t)
{
    tc_cost *c = scn_cost(s);
    tc_bom *b = c ? malloc(sizeof *b) : NULL;
    bool any = false;
    memset(t, 0, sizeof *t);
    for (int i = 0; b && i < net->n; i++) {
        tc_err e;
        if (tc_bom_build(net->topo[i], c, b, &e) == TC_OK) {
            bom_rows(t, net->name[i][0] ? net->name[i] : "A", b, c);
            any = true;
        }
    }
    free(b);
    tc_cost_free(c);
    return any;
}

/* A source of a bill of materials' text: the source (or, for an assumed
 * price, its field), and the fields that cite it. */
typedef struct bom_ref {
    char key[1024];
    char fields[256];
    bool assumed;
} bom_ref;

/* The reference number (1-based) of field f's source, added to refs. */
static int bom_ref_of(const tc_cost *c, const char *f, bom_ref *refs, int *nrefs, int max)
{
    const char *sv = tc_cost_source(c, f);
    bool assumed = strncmp(sv, "assumed:", 8) == 0;
    char key[1024];
    snprintf(key, sizeof key, "%s", assumed ? f : sv);
    int r = 0;
    while (r < *nrefs && !(refs[r].assumed == assumed && strcmp(refs[r].key, key) == 0))
        r++;
    if (r == *nrefs) {
        if (*nrefs == max)
            return 0;
        memset(&refs[r], 0, sizeof refs[r]);
        snprintf(refs[r].key, sizeof refs[r].key, "%s", key);
        refs[r].assumed = assumed;
        (*nrefs)++;
    }
    if (!strstr(refs[r].fields, f)) {
        size_t n = strlen(refs[r].fields);
        snprintf(refs[r].fields + n, sizeof refs[r].fields - n, "%s%s", n ? ", " : "", f);
    }
    return r + 1;
}

/* One topology's bill of materials as text: item, detail, speed, count,
 * unit price, total, source (a reference to the list of sources below). */
static void bom_print(const tc_topo *t, const char *title, const tc_cost *c, FILE *f)
{
    tc_bom *b = malloc(sizeof *b);
    bom_ref *refs = calloc(32, sizeof *refs);
    tc_err e;
    if (!b || !refs || tc_bom_build(t, c, b, &e) != TC_OK) {
        fprintf(f, "%s: %s\n", title, b && refs ? e.msg : "out of memory");
        free(b);
        free(refs);
        return;
    }
    tc_table tb;
    if (tc_table_init(&tb, 7)) {
        free(b);
        free(refs);
        return;
    }
    for (int k = 2; k < 6; k++)
        tb.right[k] = true;
    static const char *head[] = {"item", "detail", "speed", "count", "unit price", "total", "source"};
    tc_table_row(&tb, head);
    int nrefs = 0;
    for (int i = 0; i < b->n; i++) {
        const tc_bom_line *l = &b->line[i];
        char speed[32], count[32], unit[48], total[48], src[64] = "", names[8][64];
        int nf = line_fields(l, names, 8), seen[8], ns = 0;
        bool assumed = false;
        for (int k = 0; k < nf; k++) {
            int r = bom_ref_of(c, names[k], refs, &nrefs, 32);
            bool dup = false;
            for (int q = 0; q < ns && !dup; q++)
                dup = seen[q] == r;
            if (!dup && r > 0) {
                seen[ns++] = r;
                size_t n = strlen(src);
                snprintf(src + n, sizeof src - n, "%s%d", ns > 1 ? "," : "[", r);
            }
            assumed |= field_assumed(c, names[k]);
        }
        size_t n = strlen(src);
        snprintf(src + n, sizeof src - n, "]%s", assumed ? " assumed" : "");
        if (l->kind == TC_BOM_SWITCH && l->ports_up && fabs(l->gbps_up - l->gbps) > 1e-9 * l->gbps)
            snprintf(speed, sizeof speed, "%.4g/%.4g Gb/s", l->gbps, l->gbps_up);
        else
            snprintf(speed, sizeof speed, "%.4g Gb/s", l->gbps);
        snprintf(count, sizeof count, "%llu", (unsigned long long)l->count);
        const char *row[] = {tc_bom_kind_name(l->kind), l->detail, speed, count,
                             tc_fmt_usd(l->unit_usd, unit, sizeof unit), tc_fmt_usd(l->total_usd, total, sizeof total),
                             src};
        tc_table_row(&tb, row);
    }
    char tot[48];
    const char *last[] = {"total", "", "", "", "", tc_fmt_usd(b->total_usd, tot, sizeof tot), ""};
    tc_table_row(&tb, last);
    fprintf(f, "%s\n", title);
    tc_table_print(&tb, f);
    tc_table_free(&tb);
    fprintf(f, "sources (cost profile %s; prices in US dollars):\n", tc_cost_name(c));
    for (int r = 0; r < nrefs; r++) {
        if (refs[r].assumed)
            fprintf(f, "  [%d] %s: assumed (the profile's note says why)\n", r + 1, refs[r].fields);
        else
            fprintf(f, "  [%d] %s: %s\n", r + 1, refs[r].fields, refs[r].key);
    }
    free(refs);
    free(b);
}

/* ---- topo ------------------------------------------------------------------ */

json_t *tc_topo_json(const tc_topo_out *o, const tc_scenario *s)
{
    json_t *j = tc_report_topo_json(o->net.topo[0], o->links);
    json_object_set_new(j, "failures", failures_json(&o->net, 0));
    tc_cost *c = scn_cost(s);
    if (c)
        json_object_set_new(j, "cost", cost_json(o->net.topo[0], c, s));
    tc_cost_free(c);
    tc_report_add_scenario(j, s);
    return j;
}

static void topo_summary_table(const tc_topo_out *o, tc_rtable *t)
{
    static const char *oversub[TC_MAX_LEVELS + 1] = {"", "oversub_level1", "oversub_level2", "oversub_level3",
                                                     "oversub_level4", "oversub_level5", "oversub_level6"};
    const tc_topo *tp = o->net.topo[0];
    const tc_topo_info *in = &o->info;
    tc_rtable_init(t, "topology");
    int c[16];
    c[0] = tc_rtable_col(t, "topology", "topology", TC_COL_TEXT, NULL, 0);
    c[1] = tc_rtable_col(t, "kind", "kind", TC_COL_TEXT, NULL, 0);
    c[2] = tc_rtable_col(t, "endpoints", "endpoints", TC_COL_COUNT, NULL, 0);
    c[3] = tc_rtable_col(t, "switches", "switches", TC_COL_COUNT, NULL, 0);
    c[4] = tc_rtable_col(t, "links", "links", TC_COL_COUNT, NULL, 0);
    c[5] = tc_rtable_col(t, "diameter_links", "diameter", TC_COL_COUNT, NULL, 0);
    c[6] = tc_rtable_col(t, "bisection_Bps", "bisection", TC_COL_BPS, NULL, 0);
    c[7] = tc_rtable_col(t, "injection_Bps", "injection", TC_COL_BPS, NULL, 0);
    c[8] = tc_rtable_col(t, "ports_per_endpoint", "ports", TC_COL_COUNT, NULL, 0);
    c[9] = tc_rtable_col(t, "min_latency_s", "min latency", TC_COL_SECONDS, NULL, 0);
    c[10] = tc_rtable_col(t, "max_latency_s", "max latency", TC_COL_SECONDS, NULL, 0);
    int c_ov = t->ncols;
    for (int i = 1; tp->kind == TC_TOPO_CLOS && i < tp->levels && i <= TC_MAX_LEVELS; i++)
        tc_rtable_col(t, oversub[i], oversub[i], TC_COL_NUM, "%.3g:1", 0);
    size_t r = tc_rtable_row(t);
    tc_rtable_text(t, r, c[0], tp->spec);
    tc_rtable_text(t, r, c[1], tc_topo_kind_name(tp->kind));
    const double v[] = {in->endpoints, in->switches, in->links, in->diameter, in->bisection_Bps, in->injection_Bps,
                        in->ports_per_endpoint, in->min_latency_s, in->max_latency_s};
    for (int i = 0; i < 9; i++)
        tc_rtable_num(t, r, c[2 + i], v[i]);
    for (int i = c_ov; i < t->ncols; i++)
        tc_rtable_num(t, r, i, in->oversub[1 + i - c_ov]);
}

static void topo_links_table(const tc_topo *tp, tc_rtable *t)
{
    tc_rtable_init(t, "links");
    int c_id = tc_rtable_col(t, "id", "id", TC_COL_COUNT, NULL, 0);
    int c_name = tc_rtable_col(t, "name", "link", TC_COL_TEXT, NULL, 0);
    int c_bw = tc_rtable_col(t, "bw_Bps", "bandwidth", TC_COL_BPS, NULL, 0);
    int c_lat = tc_rtable_col(t, "lat_s", "latency", TC_COL_SECONDS, NULL, 0);
    int c_kind = tc_rtable_col(t, "kind", "kind", TC_COL_TEXT, NULL, 0);
    int c_src = tc_rtable_col(t, "src", "src", TC_COL_COUNT, NULL, 0);
    int c_dst = tc_rtable_col(t, "dst", "dst", TC_COL_COUNT, NULL, 0);
    char name[128];
    for (uint32_t i = 0; i < tp->n_links; i++) {
        const tc_link *l = &tp->links[i];
        size_t r = tc_rtable_row(t);
        tc_rtable_num(t, r, c_id, i);
        tc_rtable_text(t, r, c_name, tc_topo_link_name(tp, i, name, sizeof name));
        tc_rtable_num(t, r, c_bw, l->bw);
        tc_rtable_num(t, r, c_lat, l->lat);
        tc_rtable_text(t, r, c_kind, tc_link_kind_name((tc_link_kind)l->kind));
        tc_rtable_num(t, r, c_src, l->src);
        tc_rtable_num(t, r, c_dst, l->dst);
    }
}

size_t tc_topo_tables(const tc_topo_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    size_t n = 0;
    ADD_TABLE(topo_summary_table);
    if (o->links && n < max)
        topo_links_table(o->net.topo[0], &tabs[n++]);
    if (n < max && bom_table(&o->net, s, &tabs[n]))
        n++;
    return n;
}

static void topo_kv(const tc_topo_out *o, tc_table *tb)
{
    const tc_topo *t = o->net.topo[0];
    const tc_topo_info *in = &o->info;
    char b1[64], b2[64], line[512];
    kv(tb, "topology", "%s", t->spec);
    const tc_topo *f = t->kind == TC_TOPO_MULTIDC ? t->pod[0] : t; /* a multidc's pods */
    if (t->kind == TC_TOPO_MULTIDC)
        kv(tb, "kind", "multidc (%u pods of %u endpoints, each a %s of %d %s)", t->n_pods, t->pod_endpoints,
           tc_topo_kind_name(f->kind), f->kind == TC_TOPO_CLOS ? f->levels : f->ndims,
           f->kind == TC_TOPO_CLOS ? "switch levels" : "dimensions");
    else if (t->kind == TC_TOPO_CLOS)
        kv(tb, "kind", "clos (%d switch levels)", t->levels);
    else if (t->kind == TC_TOPO_FULL)
        kv(tb, "kind", "full (fully connected: every pair of the %u endpoints joined directly)", t->n_endpoints);
    else
        kv(tb, "kind", "torus (%d dimensions)", t->ndims);
    kv(tb, "endpoints", "%u", in->endpoints);
    kv(tb, "switches", "%u", in->switches);
    kv(tb, "links", "%u directed (%u cables)", in->links, in->links / 2);
    kv(tb, "diameter", "%u links", in->diameter);
    tc_topo_info design;
    tc_topo_get_info(t, &design);
    bool faults = (t->n_failed || t->n_degraded) && t->kind != TC_TOPO_MULTIDC;
    if (faults)
        kv(tb, "bisection", "%s per direction with the faults (%s healthy)", tc_fmt_rate(in->bisection_Bps, b1, sizeof b1),
           tc_fmt_rate(design.bisection_Bps, b2, sizeof b2));
    else
        kv(tb, "bisection", "%s per direction", tc_fmt_rate(in->bisection_Bps, b1, sizeof b1));
    if (t->nics)
        kv(tb, "injection", "%s per endpoint (its share of a NIC of %u fabric port%s, %u endpoints per NIC)",
           tc_fmt_rate(in->injection_Bps, b1, sizeof b1), in->ports_per_endpoint, in->ports_per_endpoint == 1 ? "" : "s",
           t->node_size / t->nics);
    else
        kv(tb, "injection", "%s per endpoint (%u fabric port%s)", tc_fmt_rate(in->injection_Bps, b1, sizeof b1),
           in->ports_per_endpoint, in->ports_per_endpoint == 1 ? "" : "s");
    kv(tb, "path latency", "%s min, %s max", tc_fmt_time(in->min_latency_s, b1, sizeof b1),
       tc_fmt_time(in->max_latency_s, b2, sizeof b2));
    kv(tb, "hop latency", "%s per %s traversed", tc_fmt_time(t->hop_lat, b1, sizeof b1),
       f->kind == TC_TOPO_CLOS ? "switch" : f->kind == TC_TOPO_FULL ? "endpoint entered" : "router");
    if (t->kind == TC_TOPO_MULTIDC) {
        kv(tb, "long-haul", "%u link%s per pair of pods, %s per direction, %s each (%u gateway%s per pod)", t->wan_links,
           t->wan_links == 1 ? "" : "s", tc_fmt_rate(t->wan_bw, b1, sizeof b1), tc_fmt_time(t->wan_lat, b2, sizeof b2),
           t->wan_links, t->wan_links == 1 ? "" : "s");
        kv(tb, "gateways", "a cable of %s, %s to each of %u %s of its pod; %s between pods", tc_fmt_rate(t->gw_bw, b1, sizeof b1),
           tc_fmt_time(t->gw_lat, b2, sizeof b2), t->gw_attach, f->kind == TC_TOPO_CLOS ? "top-level switches" : "routers",
           tc_fmt_time(t->cross_lat, line, sizeof line));
    }
    kv(tb, "alpha", "%s per message (sender overhead)", tc_fmt_time(t->alpha, b1, sizeof b1));
    if (f->kind == TC_TOPO_CLOS) {
        tc_topo_info pin;
        tc_topo_get_info(f, &pin);
        if (f != t)
            in = &pin; /* a pod's oversubscription */
        size_t n = 0;
        line[0] = '\0';
        for (int i = 1; i < f->levels && n < sizeof line; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%slevel %d %.3g:1", i > 1 ? ", " : "", i, in->oversub[i]);
        kv(tb, "oversubscription", "%s%s%s", f->levels > 1 ? line : "none (one level)", f != t ? " (in a pod)" : "",
           faults && f->levels > 1 ? " at the worst switch with the faults" : "");
        in = &o->info;
    }
    if (t->node_size > 1)
        kv(tb, "scale-up node", "%u endpoints per node, %s, %s per link, %s per node switch", t->node_size,
           tc_fmt_rate(t->node_bw, b1, sizeof b1), tc_fmt_time(t->node_lat, b2, sizeof b2),
           tc_fmt_time(t->node_hop_lat, line, sizeof line));
    if (t->nics)
        kv(tb, "NICs", "%u per node (%u endpoints each), %s and %s per endpoint link to its NIC%s", t->nics,
           t->node_size / t->nics, tc_fmt_rate(t->links[t->nic_lbase].bw, b1, sizeof b1),
           tc_fmt_time(t->nic_lat, b2, sizeof b2), t->nic_bw_given ? "" : " (the NIC's own bandwidth)");
    if (t->n_failed) {
        char fl[1024];
        failures_line(&o->net, 0, fl, sizeof fl);
        kv(tb, "failures", "%s", fl);
    }
}

void tc_topo_print(const tc_topo_out *o, const tc_scenario *s, FILE *f)
{
    tc_table tb;
    if (tc_table_init(&tb, 2))
        return;
    kv(&tb, "field", "value");
    topo_kv(o, &tb);
    tc_table_print(&tb, f);
    tc_table_free(&tb);
    tc_cost *c = scn_cost(s);
    if (c) {
        char title[256], u[48];
        double g = tc_cost_fabric_gbps(o->net.topo[0]);
        if (s->equalize_cost_usd > 0)
            snprintf(title, sizeof title, "\nbill of materials (equal cost %s: every fabric link at %.4g Gb/s)",
                     tc_fmt_usd(s->equalize_cost_usd, u, sizeof u), g);
        else
            snprintf(title, sizeof title, "\nbill of materials");
        bom_print(o->net.topo[0], title, c, f);
        tc_cost_free(c);
    }
    if (!o->links)
        return;
    tc_rtable t;
    topo_links_table(o->net.topo[0], &t);
    fputc('\n', f);
    tc_rtable_print(&t, f);
    tc_rtable_free(&t);
}

/* ---- collective -------------------------------------------------------------- */

static bool coll_single(const tc_collective_out *o)
{
    return o->nalgos == 1 && o->nsizes == 1 && !o->sizes_doc;
}

/* Repetition skipping (tc_flow_result): steps simulated and skipped, the
 * step the repetition was found at (null: none) and why skipping was off
 * (null: it was on). */
static void repetition_json(json_t *f, const tc_flow_result *fr)
{
    json_object_set_new(f, "steps_simulated", json_integer((json_int_t)fr->steps_simulated));
    json_object_set_new(f, "steps_skipped", json_integer((json_int_t)fr->steps_skipped));
    json_object_set_new(f, "repeat_from_step",
                        fr->repeat_from_step == UINT32_MAX || fr->steps_simulated == 0
                            ? json_null()
                            : json_integer(fr->repeat_from_step));
    json_object_set_new(f, "steps_to_end", json_integer((json_int_t)fr->steps_to_end));
    json_object_set_new(f, "skip_off", fr->skip_off ? json_string(fr->skip_off) : json_null());
    json_object_set_new(f, "symmetry_ranks", fr->fold_ranks ? json_integer(fr->fold_ranks) : json_null());
    json_object_set_new(f, "symmetry_off", fr->fold_off ? json_string(fr->fold_off) : json_null());
}

/* The text of the symmetry line (rank symmetry), or false when there is
 * nothing to say. */
static bool symmetry_text(const tc_flow_result *fr, char *buf, size_t len)
{
    if (fr->fold_ranks)
        snprintf(buf, len, "ranks translated by %u: %u of %llu ranks simulated", fr->fold_ranks, fr->fold_ranks,
                 (unsigned long long)fr->fold_ranks * fr->fold_copies);
    else if (fr->fold_off)
        snprintf(buf, len, "none (%s)", fr->fold_off);
    else
        return false;
    return true;
}

/* The text of the repetition line, or false when there is nothing to say
 * (a result from a simulator that does not report it: nothing simulated
 * and skipping not said to be off). */
static bool repetition_text(const tc_flow_result *fr, char *buf, size_t len)
{
    if (fr->skip_off)
        snprintf(buf, len, "off (%s)", fr->skip_off);
    else if (fr->steps_simulated == 0)
        return false;
    else if (fr->steps_skipped > 0 && fr->repeat_from_step != UINT32_MAX && fr->steps_to_end > 0)
        snprintf(buf, len, "%llu steps simulated, %llu skipped (repeating from step %u; the last %llu to the end at once)",
                 (unsigned long long)fr->steps_simulated, (unsigned long long)fr->steps_skipped,
                 fr->repeat_from_step, (unsigned long long)fr->steps_to_end);
    else if (fr->steps_skipped > 0 && fr->repeat_from_step != UINT32_MAX)
        snprintf(buf, len, "%llu steps simulated, %llu skipped (repeating from step %u)",
                 (unsigned long long)fr->steps_simulated, (unsigned long long)fr->steps_skipped,
                 fr->repeat_from_step);
    else if (fr->steps_skipped > 0)
        snprintf(buf, len, "%llu steps simulated, %llu skipped", (unsigned long long)fr->steps_simulated,
                 (unsigned long long)fr->steps_skipped);
    else if (fr->repeat_from_step != UINT32_MAX)
        snprintf(buf, len, "%llu steps simulated, none skipped (repeating from step %u)",
                 (unsigned long long)fr->steps_simulated, fr->repeat_from_step);
    else
        snprintf(buf, len, "%llu steps simulated, none skipped (no repeating state found)",
                 (unsigned long long)fr->steps_simulated);
    return true;
}

/* The flow job whose rank finishes a collective reports: the slowest
 * group's with groups, else the one job. */
static size_t flow_job_of(const tc_collective_out *o)
{
    const tc_result *r = &o->res[0];
    return o->ngroups && r->groups && r->group_slowest < o->flow.njobs ? r->group_slowest : 0;
}

static json_t *flow_json(const tc_topo *t, const tc_flow_result *fr, const tc_flow_setup *fs, size_t job)
{
    json_t *f = json_object();
    json_object_set_new(f, "events", json_integer((json_int_t)fr->events));
    json_object_set_new(f, "events_simulated", json_integer((json_int_t)fr->events_simulated));
    json_object_set_new(f, "batches", json_integer((json_int_t)fr->batches));
    repetition_json(f, fr);
    json_object_set_new(f, "multipath", json_string(multipath_name(fs->multipath)));
    json_object_set_new(f, "deps", json_string(deps_name(fs->deps)));
    json_object_set_new(f, "eager_limit_bytes",
                        fs->deps == TC_DEPS_AUTO ? json_real(fs->eager_limit_bytes) : json_null());
    json_object_set_new(f, "rate_cap_Bps", fs->rate_cap_Bps > 0 ? json_real(fs->rate_cap_Bps) : json_null());
    /* bounded: nothing simulated, no rank's finish known */
    json_object_set_new(f, "rank_finish_min_s", fr->bounded ? json_null() : json_real(fr->jobs[job].rank_finish_min_s));
    json_object_set_new(f, "rank_finish_median_s",
                        fr->bounded ? json_null() : json_real(fr->jobs[job].rank_finish_median_s));
    json_object_set_new(f, "rank_finish_max_s", fr->bounded ? json_null() : json_real(fr->jobs[job].rank_finish_max_s));
    json_object_set_new(f, "bounds", fr->bounded ? json_pack("{s:f, s:f}", "lower_s", fr->jobs[job].time_s, "upper_s",
                                                             fr->upper_s)
                                                 : json_null());
    json_object_set_new(f, "mean_link_utilisation", json_real(fr->mean_utilisation));
    json_object_set_new(f, "hot_links", tc_report_hot_links_json(t, fr));
    json_object_set_new(f, "trace_slices", json_integer((json_int_t)fr->trace_slices));
    json_object_set_new(f, "trace_truncated", json_boolean(fr->trace_truncated));
    return f;
}

/* The place of row a in a ranking (1: fastest). */
static size_t coll_place(const tc_collective_out *o, size_t a, const size_t *order)
{
    for (size_t k = 0; k < o->nalgos; k++)
        if (order[k] == a)
            return k + 1;
    return 0;
}

static json_t *coll_results_json(const tc_collective_out *o)
{
    const tc_topo *t = o->net.topo[0];
    json_t *rs = json_array();
    size_t *order = tc_calloc(o->nalgos, sizeof *order);
    for (size_t si = 0; order && si < o->nsizes; si++) {
        tc_collective_ranking(o, si, order);
        for (size_t a = 0; a < o->nalgos; a++) {
            json_t *e = tc_report_result_json(tc_collective_at(o, a, si), t, o->routing);
            json_object_del(e, "schema_version");
            json_object_set_new(e, "requested", json_string(o->rows[a].requested));
            json_object_set_new(e, "root", json_integer(o->rows[a].root));
            if (o->nalgos > 1)
                json_object_set_new(e, "rank", json_integer((json_int_t)coll_place(o, a, order)));
            json_array_append_new(rs, e);
        }
    }
    free(order);
    return rs;
}

/* The shape of the job's placement (leaves and pods, or the slice), for
 * the policies that choose by the structure or at random and for any
 * occupancy; the map is made again from the scenario (deterministic). */
static bool placement_of(const tc_collective_out *o, const tc_scenario *s, tc_place_shape *sh)
{
    const tc_job_place *jp = &s->job;
    if (jp->policy != TC_PLACE_PACKED && jp->policy != TC_PLACE_SLICE && jp->policy != TC_PLACE_RANDOM &&
        !(jp->occupancy > 0))
        return false;
    uint32_t *map = NULL, p = 0;
    tc_err e;
    if (tc_place_map_shape(o->net.topo[0], jp, &map, &p, sh, &e) != TC_OK) {
        tc_oom_note(); /* it was made once already: the failure is memory */
        return false;
    }
    free(map);
    return true;
}

/* The "placement" object of a shape (docs/SCHEMA.md). */
static json_t *shape_json(const tc_place_shape *shp)
{
    const tc_place_shape sh = *shp;
    char b[1024];
    json_t *pl = json_pack("{s:s, s:I, s:s}", "policy", tc_place_name(sh.policy), "ranks", (json_int_t)sh.ranks,
                           "text", tc_place_shape_format(&sh, b, sizeof b));
    if (sh.kind == TC_TOPO_MULTIDC) {
        json_object_set_new(pl, "pods", json_integer(sh.pods));
        if (sh.nodes)
            json_object_set_new(pl, "nodes", json_integer(sh.nodes));
    } else if (sh.kind == TC_TOPO_CLOS) {
        json_object_set_new(pl, "leaves", json_integer(sh.leaves));
        json_object_set_new(pl, "pods", json_integer(sh.pods));
        if (sh.nodes)
            json_object_set_new(pl, "nodes", json_integer(sh.nodes));
    } else if (sh.kind != TC_TOPO_FULL) {
        json_t *ext = json_array(), *org = json_array(), *wr = json_array(), *wo = json_array();
        for (int d = 0; d < sh.ndims; d++) {
            json_array_append_new(ext, json_integer(sh.extent[d]));
            json_array_append_new(org, json_integer(sh.origin[d]));
            json_array_append_new(wr, json_boolean(sh.wrap[d]));
            json_array_append_new(wo, json_boolean(sh.out[d] > 0));
        }
        json_object_set_new(pl, "slice", json_boolean(sh.slice));
        json_object_set_new(pl, "extent", ext);
        json_object_set_new(pl, "origin", org);
        json_object_set_new(pl, "wraparound", wr);
        json_object_set_new(pl, "wraparound_outside", wo);
        json_object_set_new(pl, "ocs_wraparound", json_boolean(sh.ocs_wrap));
    }
    if (sh.occupancy > 0) {
        json_object_set_new(pl, "occupancy", json_real(sh.occupancy));
        json_object_set_new(pl, "occupied_endpoints", json_integer(sh.occupied));
        json_object_set_new(pl, "history_jobs", json_integer(sh.history_jobs));
    }
    return pl;
}

static void placement_add_json(json_t *j, const tc_collective_out *o, const tc_scenario *s)
{
    tc_place_shape sh;
    if (placement_of(o, s, &sh))
        json_object_set_new(j, "placement", shape_json(&sh));
}

static void placement_print(const tc_collective_out *o, const tc_scenario *s, FILE *f)
{
    tc_place_shape sh;
    char b[1024];
    if (placement_of(o, s, &sh))
        fprintf(f, "placement: %s\n", tc_place_shape_format(&sh, b, sizeof b));
}

json_t *tc_collective_json(const tc_collective_out *o, const tc_scenario *s)
{
    const tc_topo *t = o->net.topo[0];
    json_t *j;
    if (coll_single(o)) {
        j = tc_report_result_json(&o->res[0], t, o->routing);
        if (o->has_flow)
            json_object_set_new(j, "flow", flow_json(t, &o->flow, &o->flow_setup, flow_job_of(o)));
        if (o->nphases) {
            json_t *ps = json_array();
            for (size_t i = 0; i < o->nphases; i++) {
                const tc_phase_eval *pe = &o->phases[i];
                json_array_append_new(ps, json_pack("{s:s, s:I, s:f, s:f, s:b, s:s}", "label", o->phase_labels[i],
                                                    "steps", (json_int_t)pe->repeat, "step_time_s", pe->time_s,
                                                    "time_s", pe->time_s * pe->repeat, "closed_form",
                                                    pe->closed_form, "binds", pe->binds));
            }
            json_object_set_new(j, "phase_detail", ps);
            json_object_set_new(j, "phase_detail_pipelined", json_boolean(o->phases_pipelined));
        }
    } else {
        j = json_object();
        json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
        json_object_set_new(j, "command", json_string("collective"));
        json_object_set_new(j, "topology", json_string(t->spec));
        json_object_set_new(j, "injection_Bps", json_real(o->info.injection_Bps));
        json_object_set_new(j, "op", json_string(tc_op_name(o->op)));
        json_object_set_new(j, "ranks", json_integer(o->ranks));
        json_object_set_new(j, "mode", json_string(tc_mode_name(o->mode)));
        json_object_set_new(j, "routing", json_string(tc_routing_name(o->routing, t)));
        json_object_set_new(j, "results", coll_results_json(o));
    }
    if (o->ngroups) {
        char b[48];
        json_object_set_new(j, "group", json_string(tc_group_format(&o->group, b, sizeof b)));
    }
    if (t->n_failed)
        json_object_set_new(j, "failures", failures_json(&o->net, 0));
    placement_add_json(j, o, s);
    tc_report_add_scenario(j, s);
    return j;
}

/* The one-row table of a single result: every number in its own column,
 * the flow run's figures too when there was one. */
static void coll_result_table(const tc_collective_out *o, tc_rtable *t)
{
    const tc_result *r = &o->res[0];
    const tc_topo *tp = o->net.topo[0];
    tc_rtable_init(t, "result");
    int c_op = tc_rtable_col(t, "op", "op", TC_COL_TEXT, NULL, 0);
    int c_algo = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    int c0 = t->ncols;
    tc_rtable_col(t, "ranks", "ranks", TC_COL_COUNT, NULL, 0);
    tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
    tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    tc_rtable_col(t, "algbw_Bps", "algbw", TC_COL_BPS, NULL, 0);
    tc_rtable_col(t, "busbw_Bps", "busbw", TC_COL_BPS, NULL, 0);
    tc_rtable_col(t, "lower_bound_s", "lower bound", TC_COL_SECONDS, NULL, 0);
    tc_rtable_col(t, "phases", "phases", TC_COL_COUNT, NULL, 0);
    tc_rtable_col(t, "steps", "steps", TC_COL_COUNT, NULL, 0);
    tc_rtable_col(t, "chunks", "chunks", TC_COL_COUNT, NULL, 0);
    tc_rtable_col(t, "injection_Bps", "injection", TC_COL_BPS, NULL, 0);
    int c1 = t->ncols;
    int c_req = tc_rtable_col(t, "algo_requested", "requested", TC_COL_TEXT, NULL, 0);
    int c_mode = tc_rtable_col(t, "mode", "mode", TC_COL_TEXT, NULL, 0);
    int c_routing = tc_rtable_col(t, "routing", "routing", TC_COL_TEXT, NULL, 0);
    int c_topo = tc_rtable_col(t, "topology", "topology", TC_COL_TEXT, NULL, 0);
    int c_groups = -1;
    if (o->ngroups) {
        c_groups = tc_rtable_col(t, "group", "group", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "groups", "groups", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_size", "group size", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_fastest_s", "fastest group", TC_COL_SECONDS, NULL, 0);
        tc_rtable_col(t, "group_spread_s", "group spread", TC_COL_SECONDS, NULL, 0);
    }
    int c2 = t->ncols;
    if (o->has_flow) {
        tc_rtable_col(t, "events", "events", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "batches", "batches", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "rank_finish_min_s", "finish min", TC_COL_SECONDS, NULL, 0);
        tc_rtable_col(t, "rank_finish_median_s", "finish median", TC_COL_SECONDS, NULL, 0);
        tc_rtable_col(t, "rank_finish_max_s", "finish max", TC_COL_SECONDS, NULL, 0);
        tc_rtable_col(t, "mean_link_utilisation", "mean link use", TC_COL_NUM, "%.1f%%", 100);
        if (o->flow.bounded) /* time_s is the lower end */
            tc_rtable_col(t, "bounds_upper_s", "upper end", TC_COL_SECONDS, NULL, 0);
    }
    size_t row = tc_rtable_row(t);
    tc_rtable_text(t, row, c_op, tc_op_name(r->op));
    tc_rtable_text(t, row, c_algo, RESULT_ALGO(r));
    double alg = tc_report_bw(r, r->algbw_Bps), bus = tc_report_bw(r, r->busbw_Bps);
    const double v[] = {r->ranks,         r->bytes,  r->time_s, alg,       bus,
                        r->lower_bound_s, r->phases, r->steps,  r->chunks, o->info.injection_Bps};
    for (int i = 0; i < c1 - c0; i++)
        tc_rtable_num(t, row, c0 + i, v[i]);
    tc_rtable_text(t, row, c_req, tc_result_algo_name(r, true, (char[64]){0}, 64));
    tc_rtable_text(t, row, c_mode, tc_mode_name(r->mode));
    tc_rtable_text(t, row, c_routing, tc_routing_name(o->routing, tp));
    tc_rtable_text(t, row, c_topo, tp->spec);
    if (c_groups >= 0) {
        char b[48];
        tc_rtable_text(t, row, c_groups, tc_group_format(&o->group, b, sizeof b));
        tc_rtable_num(t, row, c_groups + 1, r->groups);
        tc_rtable_num(t, row, c_groups + 2, r->group_size);
        tc_rtable_num(t, row, c_groups + 3, r->group_fastest_s); /* NAN (empty): formula and steps */
        tc_rtable_num(t, row, c_groups + 4, r->time_s - r->group_fastest_s);
    }
    if (!o->has_flow)
        return;
    const tc_flow_result *fr = &o->flow;
    size_t jb = flow_job_of(o);
    const double w[] = {(double)fr->events,
                        (double)fr->batches,
                        fr->bounded ? NAN : fr->jobs[jb].rank_finish_min_s,
                        fr->bounded ? NAN : fr->jobs[jb].rank_finish_median_s,
                        fr->bounded ? NAN : fr->jobs[jb].rank_finish_max_s,
                        fr->mean_utilisation};
    for (int i = 0; i < 6; i++)
        tc_rtable_num(t, row, c2 + i, w[i]);
    if (fr->bounded)
        tc_rtable_num(t, row, c2 + 6, fr->upper_s);
}

/* A result's upper end of flow bounds; NAN (a missing cell) where it was
 * not bounded. */
static double upper_or_nan(const tc_result *r)
{
    return r->bounds_upper_s > 0 ? r->bounds_upper_s : NAN;
}

/* The index of the column named csv, or -1. */
static int col_named(const tc_rtable *t, const char *csv)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].csv, csv) == 0)
            return c;
    return -1;
}

void tc_sizes_table(tc_rtable *t, const tc_result *res, size_t n, uint32_t root, const char *dtype)
{
    bool bounded = false; /* flow bounds: time is the lower end, the upper beside */
    for (size_t i = 0; i < n; i++)
        bounded = bounded || res[i].bounds_upper_s > 0;
    if (t->ncols == 0) {
        /* nccl-tests' columns first, in its order, so the two line up. */
        tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
        tc_rtable_col(t, "count", "count", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "type", "type", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "redop", "redop", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "root", "root", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
        tc_rtable_col(t, "algbw_Bps", "algbw", TC_COL_BPS, NULL, 0);
        tc_rtable_col(t, "busbw_Bps", "busbw", TC_COL_BPS, NULL, 0);
        tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "lower_bound_s", "lower bound", TC_COL_SECONDS, NULL, 0);
        if (bounded)
            tc_rtable_col(t, "bounds_upper_s", "upper end", TC_COL_SECONDS, NULL, 0);
    }
    for (size_t i = 0; i < n; i++) {
        const tc_result *r = &res[i];
        bool rooted = r->op == TC_OP_BROADCAST || r->op == TC_OP_REDUCE;
        size_t row = tc_rtable_row(t);
        tc_rtable_num(t, row, 0, r->bytes);
        tc_rtable_num(t, row, 1, floor(r->bytes / (r->elt ? r->elt : 4)));
        tc_rtable_text(t, row, 2, tc_dtype_nccl_name(dtype));
        tc_rtable_text(t, row, 3, tc_redop_column(r->op, r->redop));
        tc_rtable_num(t, row, 4, rooted ? (double)root : -1);
        tc_rtable_num(t, row, 5, r->time_s);
        tc_rtable_num(t, row, 6, tc_report_bw(r, r->algbw_Bps));
        tc_rtable_num(t, row, 7, tc_report_bw(r, r->busbw_Bps));
        tc_rtable_text(t, row, 8, RESULT_ALGO(r));
        tc_rtable_num(t, row, 9, r->lower_bound_s);
        int c_up = col_named(t, "bounds_upper_s");
        if (c_up >= 0)
            tc_rtable_num(t, row, c_up, upper_or_nan(r));
    }
}

/* Every algorithm row ranked by time, size by size. */
static void coll_algorithms_table(const tc_collective_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "algorithms");
    int c_size = tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
    int c_rank = tc_rtable_col(t, "rank", "rank", TC_COL_COUNT, NULL, 0);
    int c_req = tc_rtable_col(t, "requested", "requested", TC_COL_TEXT, NULL, 0);
    int c_algo = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    int c_time = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    int c_bus = tc_rtable_col(t, "busbw_Bps", "busbw", TC_COL_BPS, NULL, 0);
    int c_lb = tc_rtable_col(t, "lower_bound_s", "lower bound", TC_COL_SECONDS, NULL, 0);
    int c_ratio = tc_rtable_col(t, "ratio_to_bound", "x bound", TC_COL_NUM, "%.3gx", 0);
    int c_gf = o->ngroups ? tc_rtable_col(t, "group_fastest_s", "fastest group", TC_COL_SECONDS, NULL, 0) : -1;
    bool bounded = false; /* flow bounds: time is the lower end, the upper beside */
    for (size_t a = 0; a < o->nalgos; a++)
        for (size_t si = 0; si < o->nsizes; si++)
            bounded = bounded || tc_collective_at(o, a, si)->bounds_upper_s > 0;
    int c_up = bounded ? tc_rtable_col(t, "bounds_upper_s", "upper end", TC_COL_SECONDS, NULL, 0) : -1;
    size_t *order = tc_calloc(o->nalgos, sizeof *order);
    if (!order) {
        t->oom = true;
        return;
    }
    for (size_t si = 0; si < o->nsizes; si++) {
        tc_collective_ranking(o, si, order);
        for (size_t k = 0; k < o->nalgos; k++) {
            const tc_result *r = tc_collective_at(o, order[k], si);
            size_t row = tc_rtable_row(t);
            tc_rtable_num(t, row, c_size, r->bytes);
            tc_rtable_num(t, row, c_rank, (double)(k + 1));
            tc_rtable_text(t, row, c_req, o->rows[order[k]].requested);
            tc_rtable_text(t, row, c_algo, RESULT_ALGO(r));
            tc_rtable_num(t, row, c_time, r->time_s);
            tc_rtable_num(t, row, c_bus, tc_report_bw(r, r->busbw_Bps));
            tc_rtable_num(t, row, c_lb, r->lower_bound_s);
            tc_rtable_num(t, row, c_ratio, r->lower_bound_s > 0 ? r->time_s / r->lower_bound_s : NAN);
            if (c_gf >= 0)
                tc_rtable_num(t, row, c_gf, r->group_fastest_s);
            if (c_up >= 0)
                tc_rtable_num(t, row, c_up, upper_or_nan(r));
        }
    }
    free(order);
}

/* Every row's size sweep, algorithm after algorithm. */
void tc_collective_sizes_table(const tc_collective_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "sizes");
    int c_gf = -1;
    if (o->ngroups) {
        /* nccl-tests' columns first (no rows yet), then the groups' */
        tc_sizes_table(t, NULL, 0, 0, o->dtype);
        c_gf = tc_rtable_col(t, "group_fastest_s", "fastest group", TC_COL_SECONDS, NULL, 0);
    }
    for (size_t a = 0; a < o->nalgos; a++) {
        size_t row0 = t->nrows;
        tc_sizes_table(t, tc_collective_at(o, a, 0), o->nsizes, o->rows[a].root, o->dtype);
        for (size_t i = 0; c_gf >= 0 && i < o->nsizes; i++)
            tc_rtable_num(t, row0 + i, c_gf, tc_collective_at(o, a, i)->group_fastest_s);
    }
}

static void coll_phases_table(const tc_collective_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "phases");
    int c_i = tc_rtable_col(t, "phase", "phase", TC_COL_COUNT, NULL, 0);
    int c_l = tc_rtable_col(t, "label", "label", TC_COL_TEXT, NULL, 0);
    int c_r = tc_rtable_col(t, "steps", "steps", TC_COL_COUNT, NULL, 0);
    int c_s = tc_rtable_col(t, "step_time_s", "per step", TC_COL_SECONDS, NULL, 0);
    int c_t = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    int c_h = tc_rtable_col(t, "evaluated", "evaluated", TC_COL_TEXT, NULL, 0);
    int c_b = tc_rtable_col(t, "binds", "binds", TC_COL_TEXT, NULL, 0);
    for (size_t i = 0; i < o->nphases; i++) {
        const tc_phase_eval *pe = &o->phases[i];
        size_t r = tc_rtable_row(t);
        tc_rtable_num(t, r, c_i, (double)i);
        tc_rtable_text(t, r, c_l, o->phase_labels[i]);
        tc_rtable_num(t, r, c_r, pe->repeat);
        tc_rtable_num(t, r, c_s, pe->time_s);
        tc_rtable_num(t, r, c_t, pe->time_s * pe->repeat);
        tc_rtable_text(t, r, c_h, pe->closed_form ? "closed form" : "routed graph");
        tc_rtable_text(t, r, c_b, pe->binds);
    }
}

size_t tc_collective_tables(const tc_collective_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    size_t n = 0;
    if (coll_single(o)) {
        ADD_TABLE(coll_result_table);
        if (o->has_flow && n < max)
            tc_hot_links_table(&tabs[n++], o->net.topo[0], &o->flow);
        if (o->nphases && n < max)
            coll_phases_table(o, &tabs[n++]);
        return n;
    }
    if (o->nalgos > 1)
        ADD_TABLE(coll_algorithms_table);
    if (o->nsizes > 1 || o->sizes_doc)
        ADD_TABLE(tc_collective_sizes_table);
    return n;
}

static void coll_flow_kv(const tc_collective_out *o, tc_table *tb)
{
    const tc_flow_result *fr = &o->flow;
    const tc_flow_setup *fs = &o->flow_setup;
    const tc_topo *t = o->net.topo[0];
    char b[64], b2[64], b3[64], name[128], eager[96] = "";
    const tc_result *r0 = tc_collective_at(o, 0, 0);
    if (fs->deps == TC_DEPS_AUTO && r0->proto)
        snprintf(eager, sizeof eager, " (NCCL's FIFO credits; the protocol's rate cap applies)");
    else if (fs->deps == TC_DEPS_AUTO)
        snprintf(eager, sizeof eager, " (eager up to %s)", tc_fmt_size(fs->eager_limit_bytes, b2, sizeof b2));
    kv(tb, "flow", "multipath %s, deps %s%s, rate cap %s", multipath_name(fs->multipath), deps_name(fs->deps), eager,
       fs->rate_cap_Bps > 0 ? tc_fmt_rate(fs->rate_cap_Bps, b, sizeof b) : "none");
    if (fr->bounded) {
        kv(tb, "bounds", "not simulated (--flow-bounds): the simulation's time lies in [%s, %s] (%.3fx); time is the "
           "lower end",
           tc_fmt_time(r0->time_s, b, sizeof b), tc_fmt_time(fr->upper_s, b2, sizeof b2),
           r0->time_s > 0 ? fr->upper_s / r0->time_s : 1.0);
    } else if (fr->events_simulated != fr->events)
        kv(tb, "events", "%llu for all ranks, %llu simulated (what --event-budget bounds; %llu rate recomputations)",
           (unsigned long long)fr->events, (unsigned long long)fr->events_simulated,
           (unsigned long long)fr->batches);
    else
        kv(tb, "events", "%llu (%llu rate recomputations)", (unsigned long long)fr->events,
           (unsigned long long)fr->batches);
    char rep[160];
    if (repetition_text(fr, rep, sizeof rep))
        kv(tb, "repetition", "%s", rep);
    if (symmetry_text(fr, rep, sizeof rep))
        kv(tb, "symmetry", "%s", rep);
    size_t jb = flow_job_of(o);
    if (!fr->bounded)
        kv(tb, o->ngroups ? "rank finish" : "rank finish", "%smin %s, median %s, max %s",
       o->ngroups ? "slowest group: " : "", tc_fmt_time(fr->jobs[jb].rank_finish_min_s, b, sizeof b),
       tc_fmt_time(fr->jobs[jb].rank_finish_median_s, b2, sizeof b2),
       tc_fmt_time(fr->jobs[jb].rank_finish_max_s, b3, sizeof b3));
    kv(tb, "links", "mean utilisation %.1f%% over the links that carried traffic", 100 * fr->mean_utilisation);
    for (size_t i = 0; i < fr->nhot && i < 5; i++)
        kv(tb, i ? "" : "hottest links", "%s (link %u): %s, %.1f%% busy",
           tc_topo_link_name(t, fr->hot[i].link, name, sizeof name), fr->hot[i].link,
           tc_fmt_size(fr->hot[i].bytes, b, sizeof b), 100 * fr->hot[i].utilisation);
    if (fs->trace[0])
        kv(tb, "trace", "%s: %llu slices%s", fs->trace, (unsigned long long)fr->trace_slices,
           fr->trace_truncated ? " (cut at the cap; raise it in the library's trace_max_slices)" : "");
}

static void coll_print_single(const tc_collective_out *o, FILE *f)
{
    const tc_result *r = &o->res[0];
    const tc_topo *t = o->net.topo[0];
    char b[64];
    tc_table tb;
    if (tc_table_init(&tb, 2))
        return;
    kv(&tb, "field", "value");
    kv(&tb, "topology", "%s", t->spec);
    if (t->n_failed) {
        char fl[1024];
        failures_line(&o->net, 0, fl, sizeof fl);
        kv(&tb, "failures", "%s", fl);
    }
    kv(&tb, "injection", "%s per endpoint (%u endpoints)", tc_fmt_rate(o->info.injection_Bps, b, sizeof b),
       o->info.endpoints);
    kv(&tb, "op", "%s", tc_op_name(r->op));
    if (r->algo_requested == TC_ALGO_AUTO)
        kv(&tb, "algorithm", "%s (chosen by auto)", RESULT_ALGO(r));
    else
        kv(&tb, "algorithm", "%s", RESULT_ALGO(r));
    kv(&tb, "ranks", "%u", r->ranks);
    if (o->ngroups) {
        char g[48], b2[64], b3[64];
        kv(&tb, "groups", "%s: %u groups of %u ranks, all at once; size, algbw, busbw and bound per group",
           tc_group_format(&o->group, g, sizeof g), r->groups, r->group_size);
        if (!isnan(r->group_fastest_s))
            kv(&tb, "group finish", "slowest %s (group %u), fastest %s (group %u), spread %s",
               tc_fmt_time(r->time_s, b, sizeof b), r->group_slowest, tc_fmt_time(r->group_fastest_s, b2, sizeof b2),
               r->group_fastest, tc_fmt_time(r->time_s - r->group_fastest_s, b3, sizeof b3));
        else
            kv(&tb, "group finish", "the slowest group only (%s runs the groups in lock step)", tc_mode_name(r->mode));
    }
    kv(&tb, "size", "%s", tc_fmt_size(r->bytes, b, sizeof b));
    kv(&tb, "mode", "%s (routing %s%s)", tc_mode_name(r->mode), tc_routing_name(o->routing, t),
       !o->routing_by_mode ? ""
       : r->mode == TC_MODE_FORMULA
           ? ": formula's default; steps and flow default to ecmp, one hash of the flows (--routing sets one for all)"
           : ": steps' and flow's default, one hash of the flows (seed= in the spec or preset draws another); formula's is "
             "dmodk (--routing sets one for all)");
    kv(&tb, "time", "%s%s", tc_fmt_time(r->time_s, b, sizeof b), o->ngroups ? " (the slowest group)" : "");
    /* one rank: nothing moved, no bandwidth (the tables' "-") */
    kv(&tb, "algbw", "%s", r->time_s > 0 ? tc_fmt_rate(r->algbw_Bps, b, sizeof b) : "-");
    kv(&tb, "busbw", "%s", r->time_s > 0 ? tc_fmt_rate(r->busbw_Bps, b, sizeof b) : "-");
    if (r->lower_bound_s > 0)
        kv(&tb, "lower bound", "%s (time is %.3gx the bound)", tc_fmt_time(r->lower_bound_s, b, sizeof b),
           r->time_s / r->lower_bound_s);
    else /* one rank: nothing to move, no ratio (the tables' "-") */
        kv(&tb, "lower bound", "%s", tc_fmt_time(r->lower_bound_s, b, sizeof b));
    kv(&tb, "phases", "%u (%u step%s)", r->phases, r->steps, r->steps == 1 ? "" : "s");
    if (o->has_flow)
        coll_flow_kv(o, &tb);
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

void tc_collective_print(const tc_collective_out *o, const tc_scenario *s, FILE *f)
{
    if (coll_single(o)) {
        coll_print_single(o, f);
        placement_print(o, s, f);
        if (o->nphases) {
            tc_rtable tab;
            coll_phases_table(o, &tab);
            fprintf(f, "\nphases (formula: a closed form where it is exact, else the routed graph):\n");
            tc_rtable_print(&tab, f);
            if (o->phases_pipelined)
                fprintf(f, "the phases are lock step's; the time takes each channel's chain as a pipeline (its steps "
                           "overlap), so it is not their sum\n");
            tc_rtable_free(&tab);
        }
        return;
    }
    const tc_topo *t = o->net.topo[0];
    net_header(f, t, &o->info);
    if (t->n_failed) {
        char fl[1024];
        failures_line(&o->net, 0, fl, sizeof fl);
        fprintf(f, "failures: %s\n", fl);
    }
    fprintf(f, "%s on %u ranks, mode %s (routing %s)\n", tc_op_name(o->op), o->ranks, tc_report_mode_name(o->mode, s),
            tc_routing_name(o->routing, t));
    placement_print(o, s, f);
    if (o->ngroups) {
        char g[48];
        fprintf(f, "groups %s: %u groups of %u ranks, all at once; times are the slowest group's%s\n",
                tc_group_format(&o->group, g, sizeof g), o->ngroups, o->group_size,
                o->mode == TC_MODE_FLOW ? " (fastest group beside)" : " (groups in lock step)");
    }
    /* The primary table only: with several algorithms the size table
     * repeats the ranking's numbers in another order. */
    tc_rtable tab;
    if (tc_collective_tables(o, s, &tab, 1) != 1)
        return;
    fprintf(f, "\n%s\n", o->nalgos > 1 ? "algorithms, fastest first at each size:" : "by size:");
    tc_rtable_print(&tab, f);
    tc_rtable_free(&tab);
}

/* ---- compare ------------------------------------------------------------------ */

/* NAN where the first topology takes no time (one rank: a collective of
 * one rank moves nothing): there is no ratio (JSON null, CSV empty, "-"). */
static double cmp_ratio(const tc_compare_out *o, int oi, size_t si, int t)
{
    double first = tc_compare_at(o, oi, si, 0)->time_s;
    return first > 0 ? tc_compare_at(o, oi, si, t)->time_s / first : NAN;
}

static json_t *mask_json(const tc_compare_out *o, unsigned m)
{
    json_t *a = json_array();
    for (int t = 0; t < o->net.n; t++)
        if (m & (1u << t))
            json_array_append_new(a, json_string(o->net.name[t]));
    return a;
}

/* With network.alphas_s: the results at each alpha, and the conclusions. */
static void cmp_alpha_json(const tc_compare_out *o, json_t *j)
{
    json_t *sets = json_array();
    for (int k = 1; k < o->nset; k++) {
        json_t *e = json_object(), *rs = json_array();
        json_object_set_new(e, "alpha_s", json_real(o->alpha[k]));
        for (int oi = 0; oi < o->nops; oi++)
            for (size_t si = 0; si < o->nsizes; si++)
                for (int t = 0; t < o->net.n; t++) {
                    const tc_result *r = tc_compare_at_set(o, k, oi, si, t);
                    json_array_append_new(rs, json_pack("{s:s, s:s, s:f, s:s, s:f}", "op", tc_op_name(r->op),
                                                        "name", o->net.name[t], "bytes", r->bytes, "algo",
                                                        RESULT_ALGO(r), "time_s", r->time_s));
                }
        json_object_set_new(e, "results", rs);
        json_array_append_new(sets, e);
    }
    json_object_set_new(j, "alpha_results", sets);
    json_t *cs = json_array();
    tc_compare_run *runs = tc_calloc(o->nsizes, sizeof *runs);
    for (int oi = 0; runs && oi < o->nops; oi++) {
        size_t n = tc_compare_conclusions(o, oi, runs);
        for (size_t i = 0; i < n; i++) {
            const tc_compare_run *r = &runs[i];
            json_t *e = json_object(), *by = json_array();
            json_object_set_new(e, "op", json_string(tc_op_name(o->ops[oi])));
            json_object_set_new(e, "from_bytes", json_real(o->sizes[r->from]));
            json_object_set_new(e, "to_bytes", json_real(o->sizes[r->to]));
            json_object_set_new(e, "holds_at_every_alpha", json_boolean(r->holds));
            for (int k = 0; k < o->nset; k++) {
                json_t *b = json_object();
                json_object_set_new(b, "alpha_s", k ? json_real(o->alpha[k]) : json_string("as specified"));
                json_object_set_new(b, "winners", mask_json(o, r->mask[k]));
                json_array_append_new(by, b);
            }
            json_object_set_new(e, "by_alpha", by);
            json_array_append_new(cs, e);
        }
    }
    free(runs);
    json_object_set_new(j, "conclusions", cs);
}

json_t *tc_compare_json(const tc_compare_out *o, const tc_scenario *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(j, "command", json_string("compare"));
    tc_cost *cost = scn_cost(s);
    json_t *ts = json_array();
    for (int t = 0; t < o->net.n; t++) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(o->net.name[t]));
        json_object_set_new(e, "topology", json_string(o->net.topo[t]->spec));
        json_object_set_new(e, "failures", failures_json(&o->net, t));
        json_object_set_new(e, "endpoints", json_integer(o->info[t].endpoints));
        json_object_set_new(e, "injection_Bps", json_real(o->info[t].injection_Bps));
        if (o->group.kind != TC_GROUP_NONE) {
            json_object_set_new(e, "groups", json_integer(o->ngroups[t]));
            json_object_set_new(e, "group_size", json_integer(o->group_size[t]));
        }
        json_object_set_new(e, "placement", shape_json(&o->shape[t]));
        if (cost)
            json_object_set_new(e, "cost", cost_json(o->net.topo[t], cost, s));
        json_array_append_new(ts, e);
    }
    tc_cost_free(cost);
    json_object_set_new(j, "topologies", ts);
    if (s && s->equalize_cost_usd > 0)
        json_object_set_new(j, "equalize_cost_usd", json_real(s->equalize_cost_usd));
    if (o->group.kind != TC_GROUP_NONE) {
        char b[48];
        json_object_set_new(j, "group", json_string(tc_group_format(&o->group, b, sizeof b)));
    }
    json_t *rs = json_array();
    for (int oi = 0; oi < o->nops; oi++)
        for (size_t si = 0; si < o->nsizes; si++)
            for (int t = 0; t < o->net.n; t++) {
                json_t *e = tc_report_result_json(tc_compare_at(o, oi, si, t), o->net.topo[t], o->net.routing[t]);
                json_object_del(e, "schema_version");
                json_object_set_new(e, "name", json_string(o->net.name[t]));
                double q = cmp_ratio(o, oi, si, t);
                json_object_set_new(e, "ratio_to_first", isfinite(q) ? json_real(q) : json_null());
                json_array_append_new(rs, e);
            }
    json_object_set_new(j, "results", rs);
    if (o->nset > 1)
        cmp_alpha_json(o, j);
    tc_report_add_scenario(j, s);
    return j;
}

static void cmp_results_table(const tc_compare_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "results");
    int c_op = tc_rtable_col(t, "op", "op", TC_COL_TEXT, NULL, 0);
    int c_bytes = tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
    int c_name = tc_rtable_col(t, "name", "name", TC_COL_TEXT, NULL, 0);
    int c_topo = tc_rtable_col(t, "topology", "topology", TC_COL_TEXT, NULL, 0);
    int c_algo = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    int c_time = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    int c_alg = tc_rtable_col(t, "algbw_Bps", "algbw", TC_COL_BPS, NULL, 0);
    int c_bus = tc_rtable_col(t, "busbw_Bps", "busbw", TC_COL_BPS, NULL, 0);
    int c_lb = tc_rtable_col(t, "lower_bound_s", "lower bound", TC_COL_SECONDS, NULL, 0);
    int c_ratio = tc_rtable_col(t, "ratio_to_first", "ratio", TC_COL_NUM, "%.3g", 0);
    bool bounded = false; /* flow bounds: time is the lower end, the upper beside */
    for (int oi = 0; oi < o->nops; oi++)
        for (size_t si = 0; si < o->nsizes; si++)
            for (int k = 0; k < o->net.n; k++)
                bounded = bounded || tc_compare_at(o, oi, si, k)->bounds_upper_s > 0;
    int c_up = bounded ? tc_rtable_col(t, "bounds_upper_s", "upper end", TC_COL_SECONDS, NULL, 0) : -1;
    int c_groups = -1;
    char gspec[48];
    if (o->group.kind != TC_GROUP_NONE) {
        tc_group_format(&o->group, gspec, sizeof gspec);
        c_groups = tc_rtable_col(t, "group", "group", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "groups", "groups", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_size", "group size", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_fastest_s", "fastest group", TC_COL_SECONDS, NULL, 0);
    }
    for (int oi = 0; oi < o->nops; oi++)
        for (size_t si = 0; si < o->nsizes; si++)
            for (int k = 0; k < o->net.n; k++) {
                const tc_result *r = tc_compare_at(o, oi, si, k);
                size_t row = tc_rtable_row(t);
                tc_rtable_text(t, row, c_op, tc_op_name(r->op));
                tc_rtable_num(t, row, c_bytes, r->bytes);
                tc_rtable_text(t, row, c_name, o->net.name[k]);
                tc_rtable_text(t, row, c_topo, o->net.topo[k]->spec);
                tc_rtable_text(t, row, c_algo, RESULT_ALGO(r));
                tc_rtable_num(t, row, c_time, r->time_s);
                tc_rtable_num(t, row, c_alg, tc_report_bw(r, r->algbw_Bps));
                tc_rtable_num(t, row, c_bus, tc_report_bw(r, r->busbw_Bps));
                tc_rtable_num(t, row, c_lb, r->lower_bound_s);
                tc_rtable_num(t, row, c_ratio, cmp_ratio(o, oi, si, k));
                if (c_up >= 0)
                    tc_rtable_num(t, row, c_up, upper_or_nan(r));
                if (c_groups >= 0) {
                    tc_rtable_text(t, row, c_groups, gspec);
                    tc_rtable_num(t, row, c_groups + 1, r->groups);
                    tc_rtable_num(t, row, c_groups + 2, r->group_size);
                    tc_rtable_num(t, row, c_groups + 3, r->group_fastest_s); /* NAN (empty): formula and steps */
                }
            }
}

/* With network.alphas_s: every cell at every alpha. */
static void cmp_alpha_table(const tc_compare_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "alpha_results");
    int c_alpha = tc_rtable_col(t, "alpha_s", "alpha", TC_COL_SECONDS, NULL, 0);
    int c_op = tc_rtable_col(t, "op", "op", TC_COL_TEXT, NULL, 0);
    int c_bytes = tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
    int c_name = tc_rtable_col(t, "name", "name", TC_COL_TEXT, NULL, 0);
    int c_algo = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    int c_time = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    for (int k = 1; k < o->nset; k++)
        for (int oi = 0; oi < o->nops; oi++)
            for (size_t si = 0; si < o->nsizes; si++)
                for (int q = 0; q < o->net.n; q++) {
                    const tc_result *r = tc_compare_at_set(o, k, oi, si, q);
                    size_t row = tc_rtable_row(t);
                    tc_rtable_num(t, row, c_alpha, o->alpha[k]);
                    tc_rtable_text(t, row, c_op, tc_op_name(r->op));
                    tc_rtable_num(t, row, c_bytes, r->bytes);
                    tc_rtable_text(t, row, c_name, o->net.name[q]);
                    tc_rtable_text(t, row, c_algo, RESULT_ALGO(r));
                    tc_rtable_num(t, row, c_time, r->time_s);
                }
}

size_t tc_compare_tables(const tc_compare_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    size_t n = 0;
    ADD_TABLE(cmp_results_table);
    if (o->nset > 1)
        ADD_TABLE(cmp_alpha_table);
    if (n < max && bom_table(&o->net, s, &tabs[n]))
        n++;
    return n;
}

/* One operation as a wide table: size, then time and algorithm per
 * topology, then each topology's ratio to the first. */
static void cmp_print_op(const tc_compare_out *o, int oi, FILE *f)
{
    int nt = o->net.n, nc = 1 + 2 * nt + (nt - 1);
    tc_table tb;
    if (tc_table_init(&tb, nc))
        return;
    for (int i = 0; i < nc; i++)
        tb.right[i] = true;
    char cell[3 * TC_SCN_MAX_TOPOS + 1][80];
    const char *row[3 * TC_SCN_MAX_TOPOS + 1];
    for (int i = 0; i < nc; i++)
        row[i] = cell[i];
    snprintf(cell[0], sizeof cell[0], "size");
    for (int t = 0; t < nt; t++) {
        snprintf(cell[1 + 2 * t], sizeof cell[0], "%s", o->net.name[t]);
        snprintf(cell[2 + 2 * t], sizeof cell[0], "algo");
        tb.right[2 + 2 * t] = false;
    }
    for (int t = 1; t < nt; t++)
        snprintf(cell[2 * nt + t], sizeof cell[0], "%s/%s", o->net.name[t], o->net.name[0]);
    tc_table_row(&tb, row);
    for (size_t si = 0; si < o->nsizes; si++) {
        tc_fmt_size(o->sizes[si], cell[0], sizeof cell[0]);
        for (int t = 0; t < nt; t++) {
            const tc_result *r = tc_compare_at(o, oi, si, t);
            tc_fmt_time(r->time_s, cell[1 + 2 * t], sizeof cell[0]);
            snprintf(cell[2 + 2 * t], sizeof cell[0], "%s", RESULT_ALGO(r));
        }
        for (int t = 1; t < nt; t++) {
            double q = cmp_ratio(o, oi, si, t);
            if (isfinite(q))
                snprintf(cell[2 * nt + t], sizeof cell[0], "%.3g", q);
            else
                snprintf(cell[2 * nt + t], sizeof cell[0], "-");
        }
        tc_table_row(&tb, row);
    }
    fprintf(f, "%s%s (time per operation%s; ratio > 1: slower than %s)\n", oi ? "\n" : "", tc_op_name(o->ops[oi]),
            o->group.kind != TC_GROUP_NONE ? " per group, the slowest group" : "", o->net.name[0]);
    tc_table_print(&tb, f);
    tc_table_free(&tb);
}

/* "clos = torus" for a mask of winners. */
static void print_mask(const tc_compare_out *o, unsigned m, FILE *f)
{
    int k = 0;
    for (int t = 0; t < o->net.n; t++)
        if (m & (1u << t))
            fprintf(f, "%s%s", k++ ? " = " : "", o->net.name[t]);
    fprintf(f, " %s", k > 1 ? "tie" : "fastest");
}

static const char *set_label(const tc_compare_out *o, int k, char *buf, size_t len)
{
    if (k == 0)
        return "as specified";
    return o->alpha[k] > 0 ? tc_fmt_time(o->alpha[k], buf, len) : "0";
}

/* One line per conclusion when alpha is varied; the sizes, then either
 * the winners at every alpha, or the winners at each group of alphas. */
static void cmp_print_run(const tc_compare_out *o, const tc_compare_run *r, FILE *f)
{
    char b1[32], b2[32];
    fprintf(f, "%s", o->nset > 1 ? "\n    " : "");
    if (r->holds)
        print_mask(o, r->mask[0], f);
    fprintf(f, "%s%s %s", r->holds ? " " : "", r->from == r->to ? "at" : "from",
            tc_fmt_size(o->sizes[r->from], b1, sizeof b1));
    if (r->to > r->from)
        fprintf(f, " to %s", tc_fmt_size(o->sizes[r->to], b2, sizeof b2));
    if (r->holds) {
        if (o->nset > 1)
            fprintf(f, " at every alpha");
        if (isfinite(r->gain))
            fprintf(f, " (up to %.2fx faster than the next)", r->gain);
        return;
    }
    /* Where it flips: the settings grouped by their winners. */
    fprintf(f, " it depends on alpha:");
    bool done[TC_SCN_MAX_ALPHAS + 1] = {false};
    for (int k = 0, g = 0; k < o->nset; k++) {
        if (done[k])
            continue;
        fprintf(f, "%s ", g++ ? ";" : "");
        print_mask(o, r->mask[k], f);
        fprintf(f, " at alpha");
        for (int j = k, c = 0; j < o->nset; j++)
            if (!done[j] && r->mask[j] == r->mask[k]) {
                done[j] = true;
                fprintf(f, "%s %s", c++ ? "," : "", set_label(o, j, b1, sizeof b1));
            }
    }
}

static void cmp_print_wins(const tc_compare_out *o, int oi, FILE *f)
{
    char b1[32], b2[32];
    tc_compare_run *runs = tc_calloc(o->nsizes, sizeof *runs);
    if (!runs)
        return;
    size_t n = tc_compare_conclusions(o, oi, runs);
    fprintf(f, "  %s:", tc_op_name(o->ops[oi]));
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s", i && o->nset == 1 ? "; " : o->nset == 1 ? " " : "");
        cmp_print_run(o, &runs[i], f);
    }
    fputc('\n', f);
    free(runs);
    /* How each other topology compares with the first, over all sizes. */
    for (int t = 1; t < o->net.n; t++) {
        double lo = INFINITY, hi = 0;
        size_t at_lo = 0, at_hi = 0;
        for (size_t k = 0; k < o->nsizes; k++) {
            double r = cmp_ratio(o, oi, k, t);
            if (!isfinite(r)) /* no ratio at this size */
                continue;
            if (r < lo)
                lo = r, at_lo = k;
            if (r > hi)
                hi = r, at_hi = k;
        }
        if (!isfinite(lo)) /* no size has a ratio */
            continue;
        fprintf(f, "    %s takes %.2fx (at %s) to %.2fx (at %s) the time of %s%s\n", o->net.name[t], lo,
                tc_fmt_size(o->sizes[at_lo], b1, sizeof b1), hi, tc_fmt_size(o->sizes[at_hi], b2, sizeof b2),
                o->net.name[0], o->nset > 1 ? " (alpha as specified)" : "");
    }
    /* Flow bounds: the times above are lower ends; where the fastest's
     * interval reaches another's lower end, the order is not settled. */
    size_t bounded = 0, open = 0;
    for (size_t k = 0; k < o->nsizes; k++) {
        double best = INFINITY, best_hi = 0;
        bool all = o->net.n > 0;
        for (int t = 0; t < o->net.n; t++) {
            const tc_result *r = tc_compare_at(o, oi, k, t);
            all = all && r->bounds_upper_s > 0;
            if (r->time_s < best)
                best = r->time_s, best_hi = r->bounds_upper_s;
        }
        if (!all)
            continue;
        bounded++;
        for (int t = 0; t < o->net.n; t++) {
            const tc_result *r = tc_compare_at(o, oi, k, t);
            if (r->time_s > best && r->time_s <= best_hi) {
                open++;
                break;
            }
        }
    }
    if (bounded)
        fprintf(f, "    flow bounds: the times are lower ends; at %zu of %zu sizes the fastest's interval reaches "
                   "another's lower end, so the order there is not settled (bounds_upper_s)\n",
                open, bounded);
}

/* With a cost profile: each topology's bill of materials, after an
 * equal-cost line that says each one's fabric link speed. */
static void cmp_print_costs(const tc_compare_out *o, const tc_scenario *s, FILE *f)
{
    tc_cost *c = scn_cost(s);
    if (!c)
        return;
    char u[48];
    if (s->equalize_cost_usd > 0) {
        fprintf(f, "\nequal cost %s under cost profile %s: every fabric link of a topology at one speed, the speed "
                   "whose bill of materials costs that:\n",
                tc_fmt_usd(s->equalize_cost_usd, u, sizeof u), tc_cost_name(c));
        for (int t = 0; t < o->net.n; t++)
            fprintf(f, "  %-10s %.4g Gb/s per fabric link, injection %s per endpoint\n", o->net.name[t],
                    tc_cost_fabric_gbps(o->net.topo[t]), tc_fmt_rate(o->info[t].injection_Bps, u, sizeof u));
    }
    for (int t = 0; t < o->net.n; t++) {
        char title[700];
        snprintf(title, sizeof title, "\nbill of materials of %s (%s)", o->net.name[t], o->net.topo[t]->spec);
        bom_print(o->net.topo[t], title, c, f);
    }
    tc_cost_free(c);
}

void tc_compare_print(const tc_compare_out *o, const tc_scenario *s, FILE *f)
{
    char b[32];
    fprintf(f, "topologies:\n");
    bool grouped = o->group.kind != TC_GROUP_NONE;
    for (int t = 0; t < o->net.n; t++) {
        fprintf(f, "  %-10s %s  (%u endpoints, injection %s", o->net.name[t], o->net.topo[t]->spec,
                o->info[t].endpoints, tc_fmt_rate(o->info[t].injection_Bps, b, sizeof b));
        /* a mesh: its interior endpoints have more ports than its corners
         * (--equalize injection= gives the interior the rate) */
        double interior = tc_topo_equalize_base(o->net.topo[t]);
        if (interior > o->info[t].injection_Bps * (1 + 1e-12))
            fprintf(f, " at a corner, %s inside", tc_fmt_rate(interior, b, sizeof b));
        if (grouped)
            fprintf(f, "; %u groups of %u ranks", o->ngroups[t], o->group_size[t]);
        fprintf(f, ")\n");
        if (o->net.topo[t]->n_failed) {
            char fl[1024];
            failures_line(&o->net, t, fl, sizeof fl);
            fprintf(f, "  %-10s failures: %s\n", "", fl);
        }
        char pl[1024];
        if (o->ranks[t] < o->info[t].endpoints) /* a job on the whole topology has its shape */
            fprintf(f, "  %-10s placement: %s\n", "", tc_place_shape_format(&o->shape[t], pl, sizeof pl));
    }
    bool is_auto = strncmp(o->algo, "auto", 4) == 0 && (o->algo[4] == '\0' || o->algo[4] == ':');
    fprintf(f, "mode %s, algorithm %s%s", tc_report_mode_name(o->mode, s), o->algo,
            is_auto ? " (fastest valid per cell)" : "");
    bool same = true;
    for (int t = 1; t < o->net.n; t++)
        same = same && o->ranks[t] == o->ranks[0];
    if (same && o->net.n > 0 && o->ranks[0] != o->info[0].endpoints)
        fprintf(f, ", %u ranks", o->ranks[0]);
    if (grouped) {
        char g[48];
        fprintf(f, "\ngroups %s: every cell runs the collective in every group at once; times are the slowest "
                   "group's, sizes one group's%s",
                tc_group_format(&o->group, g, sizeof g),
                o->mode == TC_MODE_FLOW ? "" : " (groups in lock step)");
    }
    fprintf(f, "\n\n");
    for (int oi = 0; oi < o->nops; oi++)
        cmp_print_op(o, oi, f);
    if (o->net.n < 2) {
        cmp_print_costs(o, s, f);
        return;
    }
    fprintf(f, "\nwhere each topology wins");
    if (o->nset > 1) {
        char b2[32];
        fprintf(f, " (checked at alpha as specified");
        for (int k = 1; k < o->nset; k++)
            fprintf(f, ", %s", o->alpha[k] > 0 ? tc_fmt_time(o->alpha[k], b2, sizeof b2) : "0");
        fprintf(f, ")");
    }
    fprintf(f, ":\n");
    for (int oi = 0; oi < o->nops; oi++)
        cmp_print_wins(o, oi, f);
    cmp_print_costs(o, s, f);
}

/* ---- concurrent --------------------------------------------------------------- */

json_t *tc_concurrent_json(const tc_concurrent_out *o, const tc_scenario *s)
{
    const tc_topo *t = o->net.topo[0];
    const tc_flow_result *fr = &o->flow;
    json_t *j = json_object();
    json_object_set_new(j, "schema_version", json_integer(TC_SCHEMA_VERSION));
    json_object_set_new(j, "command", json_string("concurrent"));
    json_object_set_new(j, "topology", json_string(t->spec));
    json_object_set_new(j, "routing", json_string(tc_routing_name(o->routing, t)));
    json_object_set_new(j, "events", json_integer((json_int_t)fr->events));
    json_object_set_new(j, "events_simulated", json_integer((json_int_t)fr->events_simulated));
    repetition_json(j, fr);
    json_object_set_new(j, "makespan_s", json_real(fr->makespan_s));
    json_t *arr = json_array();
    for (size_t i = 0; i < o->njobs; i++) {
        const tc_concurrent_job *jb = &o->jobs[i];
        const tc_flow_job_result *r = &jb->res;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(jb->name));
        json_object_set_new(e, "op", json_string(tc_op_name(jb->op)));
        json_object_set_new(e, "algo", json_string(job_algo_name(jb, (char[64]){0}, 64)));
        json_object_set_new(e, "ranks", json_integer(jb->ranks));
        json_object_set_new(e, "bytes", json_real(jb->bytes));
        json_object_set_new(e, "start_s", json_real(r->start_s));
        json_object_set_new(e, "finish_s", json_real(r->finish_s));
        json_object_set_new(e, "time_s", json_real(r->time_s));
        json_object_set_new(e, "alone_s", json_real(jb->alone_s));
        json_object_set_new(e, "slowdown", json_real(jb->slowdown));
        json_object_set_new(e, "rank_finish_min_s", json_real(r->rank_finish_min_s));
        json_object_set_new(e, "rank_finish_median_s", json_real(r->rank_finish_median_s));
        json_object_set_new(e, "rank_finish_max_s", json_real(r->rank_finish_max_s));
        if (jb->ngroups) {
            /* Every group a flow job of its own: the job's figures above
             * are its slowest group's (rank_finish_* that group's ranks). */
            char b[48];
            json_t *g = json_object();
            json_object_set_new(e, "group", json_string(tc_group_format(&jb->group, b, sizeof b)));
            json_object_set_new(g, "count", json_integer(jb->ngroups));
            json_object_set_new(g, "size", json_integer(jb->group_size));
            json_object_set_new(g, "slowest_s", json_real(r->time_s));
            json_object_set_new(g, "fastest_s", json_real(jb->group_fastest_s));
            json_object_set_new(g, "spread_s", json_real(r->time_s - jb->group_fastest_s));
            json_object_set_new(g, "slowest_group", json_integer(jb->group_slowest));
            json_object_set_new(g, "fastest_group", json_integer(jb->group_fastest));
            json_object_set_new(g, "timing", json_string("each group simulated as a job of its own"));
            json_object_set_new(e, "groups", g);
        }
        json_object_set_new(e, "placement", shape_json(&jb->shape));
        json_array_append_new(arr, e);
    }
    json_object_set_new(j, "jobs", arr);
    json_object_set_new(j, "hot_links", tc_report_hot_links_json(t, fr));
    tc_report_add_scenario(j, s);
    return j;
}

static void conc_jobs_table(const tc_concurrent_out *o, tc_rtable *t)
{
    tc_rtable_init(t, "jobs");
    int c[12];
    c[0] = tc_rtable_col(t, "job", "job", TC_COL_TEXT, NULL, 0);
    c[1] = tc_rtable_col(t, "op", "op", TC_COL_TEXT, NULL, 0);
    c[2] = tc_rtable_col(t, "algo", "algo", TC_COL_TEXT, NULL, 0);
    c[3] = tc_rtable_col(t, "ranks", "ranks", TC_COL_COUNT, NULL, 0);
    c[4] = tc_rtable_col(t, "bytes", "size", TC_COL_BYTES, NULL, 0);
    c[5] = tc_rtable_col(t, "start_s", "start", TC_COL_SECONDS, NULL, 0);
    c[6] = tc_rtable_col(t, "time_s", "time", TC_COL_SECONDS, NULL, 0);
    c[7] = tc_rtable_col(t, "alone_s", "alone", TC_COL_SECONDS, NULL, 0);
    c[8] = tc_rtable_col(t, "slowdown", "slowdown", TC_COL_NUM, "%.3fx", 0);
    c[9] = tc_rtable_col(t, "rank_finish_min_s", "finish min", TC_COL_SECONDS, NULL, 0);
    c[10] = tc_rtable_col(t, "rank_finish_median_s", "median", TC_COL_SECONDS, NULL, 0);
    c[11] = tc_rtable_col(t, "rank_finish_max_s", "max", TC_COL_SECONDS, NULL, 0);
    bool grouped = false;
    for (size_t i = 0; i < o->njobs; i++)
        grouped = grouped || o->jobs[i].ngroups;
    int c_groups = -1;
    if (grouped) {
        c_groups = tc_rtable_col(t, "group", "group", TC_COL_TEXT, NULL, 0);
        tc_rtable_col(t, "groups", "groups", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_size", "group size", TC_COL_COUNT, NULL, 0);
        tc_rtable_col(t, "group_fastest_s", "fastest group", TC_COL_SECONDS, NULL, 0);
    }
    for (size_t i = 0; i < o->njobs; i++) {
        const tc_concurrent_job *jb = &o->jobs[i];
        const tc_flow_job_result *r = &jb->res;
        size_t row = tc_rtable_row(t);
        tc_rtable_text(t, row, c[0], jb->name);
        tc_rtable_text(t, row, c[1], tc_op_name(jb->op));
        tc_rtable_text(t, row, c[2], job_algo_name(jb, (char[64]){0}, 64));
        const double v[] = {jb->ranks, jb->bytes, r->start_s, r->time_s, jb->alone_s, jb->slowdown,
                            r->rank_finish_min_s, r->rank_finish_median_s, r->rank_finish_max_s};
        for (int k = 0; k < 9; k++)
            tc_rtable_num(t, row, c[3 + k], v[k]);
        if (c_groups >= 0 && jb->ngroups) { /* a job without groups: empty */
            char b[48];
            tc_rtable_text(t, row, c_groups, tc_group_format(&jb->group, b, sizeof b));
            tc_rtable_num(t, row, c_groups + 1, jb->ngroups);
            tc_rtable_num(t, row, c_groups + 2, jb->group_size);
            tc_rtable_num(t, row, c_groups + 3, jb->group_fastest_s);
        }
    }
}

size_t tc_concurrent_tables(const tc_concurrent_out *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    (void)s;
    size_t n = 0;
    ADD_TABLE(conc_jobs_table);
    if (n < max)
        tc_hot_links_table(&tabs[n++], o->net.topo[0], &o->flow);
    return n;
}

void tc_concurrent_print(const tc_concurrent_out *o, const tc_scenario *s, FILE *f)
{
    (void)s;
    const tc_topo *t = o->net.topo[0];
    const tc_flow_result *fr = &o->flow;
    char b[32];
    net_header(f, t, &o->info);
    fprintf(f, "flow simulation (routing %s)\n", tc_routing_name(o->routing, t));
    int w = 0;
    for (size_t i = 0; i < o->njobs; i++)
        w = (int)strlen(o->jobs[i].name) > w ? (int)strlen(o->jobs[i].name) : w;
    fprintf(f, "placement:\n");
    for (size_t i = 0; i < o->njobs; i++) {
        char pl[1024];
        fprintf(f, "  %-*s  %s\n", w, o->jobs[i].name, tc_place_shape_format(&o->jobs[i].shape, pl, sizeof pl));
    }
    for (size_t i = 0; i < o->njobs; i++) {
        const tc_concurrent_job *jb = &o->jobs[i];
        char g[48];
        if (jb->ngroups)
            fprintf(f, "%s: groups %s, %u groups of %u ranks at once, each a flow job; its times are the slowest "
                       "group's (group %u), size one group's\n",
                    jb->name, tc_group_format(&jb->group, g, sizeof g), jb->ngroups, jb->group_size,
                    jb->group_slowest);
    }
    fputc('\n', f);
    tc_rtable tb;
    conc_jobs_table(o, &tb);
    tc_rtable_print(&tb, f);
    tc_rtable_free(&tb);
    char sim[80] = "";
    if (fr->events_simulated != fr->events)
        snprintf(sim, sizeof sim, " (%llu simulated, what --event-budget bounds)",
                 (unsigned long long)fr->events_simulated);
    fprintf(f, "\nmakespan %s, %llu events%s; hottest links:\n", tc_fmt_time(fr->makespan_s, b, sizeof b),
            (unsigned long long)fr->events, sim);
    print_hot_links(f, t, fr, "  ", 5);
    char rep[160];
    if (repetition_text(fr, rep, sizeof rep))
        fprintf(f, "repetition %s\n", rep);
    if (symmetry_text(fr, rep, sizeof rep))
        fprintf(f, "symmetry   %s\n", rep);
    if (o->flow_setup.trace[0])
        fprintf(f, "trace %s: %llu slices%s\n", o->flow_setup.trace, (unsigned long long)fr->trace_slices,
                fr->trace_truncated ? " (cut at the cap)" : "");
}
