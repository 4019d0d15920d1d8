/*
 * cost.c - cost profiles, bills of materials and the fabric speed of a
 * given cost (topocc/cost.h; the model: docs/MODEL.md "Equal cost"; the
 * profile format: docs/PROFILES.md "Cost profiles").
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/cost.h"

#define COST_MAX_SPEEDS 32

static const char *kind_names[TC_BOM_KINDS] = {"switch", "nic", "dac", "transceiver", "fiber"};

const char *tc_bom_kind_name(tc_bom_kind k)
{
    return (unsigned)k < TC_BOM_KINDS ? kind_names[k] : "?";
}

typedef struct cost_item {
    tc_bom_kind kind;
    double gbps;
    uint32_t radix;  /* switch */
    double usd;      /* a switch: the whole switch */
    char field[64];
} cost_item;

typedef struct cost_field {
    char name[64];
    char *source;    /* "URL ..." or "assumed: note" */
} cost_field;

struct tc_cost {
    char name[64];
    char path[4200];
    cost_item *items;
    int nitems;
    cost_field *fields;
    int nfields;
    double speeds[COST_MAX_SPEEDS];
    int nspeeds;
    uint32_t cube_edge;
};

/* ---- reading a profile ---- */

bool tc_cost_is_path(const char *s)
{
    size_t l = strlen(s);
    return strchr(s, '/') != NULL || (l > 5 && strcmp(s + l - 5, ".json") == 0);
}

tc_status tc_cost_read_file(const char *path, tc_profile **out, tc_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "cost profile '%s': cannot read it (%s): give a readable NAME.json or a "
                                       "profile name (e.g. cost-2026)",
                       path, strerror(errno));
    char *txt = NULL;
    size_t n = 0, cap = 0;
    tc_status st = TC_OK;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            size_t nc = cap ? 2 * cap : 65536;
            char *t = nc <= (64u << 20) ? realloc(txt, nc) : NULL;
            if (!t) {
                st = tc_fail(err, TC_EINVAL, "cost profile '%s': too large or out of memory (at most 64 MiB)", path);
                break;
            }
            txt = t, cap = nc;
        }
        size_t r = fread(txt + n, 1, 4096, f);
        n += r;
        if (r < 4096)
            break;
    }
    fclose(f);
    if (st) {
        free(txt);
        return st;
    }
    txt[n] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[64];
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".json") == 0)
        bl -= 5;
    if (bl == 0 || bl >= sizeof name) {
        free(txt);
        return tc_fail(err, TC_EINVAL, "cost profile '%s': the file must be NAME.json, its profile's name NAME "
                                       "(at most 63 characters)",
                       path);
    }
    snprintf(name, sizeof name, "%.*s", (int)bl, base);
    st = tc_profile_from_json(name, txt, path, out, err);
    free(txt);
    return st;
}

static tc_status field_num(const char *path, const char *fname, json_t *f, const char *key, double lo, double hi,
                           double *out, tc_err *err)
{
    json_t *v = json_object_get(f, key);
    if (!v || !json_is_number(v))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.%s' is missing or not a number", path, fname, key);
    *out = json_number_value(v);
    if (!(*out >= lo && *out <= hi))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.%s' is %g: expected %g to %g", path, fname, key,
                       *out, lo, hi);
    return TC_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bool same_speed(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static tc_status add_speed(tc_cost *c, double g, const char *fname, tc_err *err)
{
    for (int i = 0; i < c->nspeeds; i++)
        if (same_speed(c->speeds[i], g))
            return TC_OK;
    if (c->nspeeds == COST_MAX_SPEEDS)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s': more than %d port speeds", c->path, fname,
                       COST_MAX_SPEEDS);
    c->speeds[c->nspeeds++] = g;
    return TC_OK;
}

/* One field: its source kept; an item ("item" key) read and checked. */
static tc_status read_field(tc_cost *c, const char *fname, json_t *f, tc_err *err)
{
    cost_field *cf = &c->fields[c->nfields++];
    snprintf(cf->name, sizeof cf->name, "%s", fname);
    json_t *src = json_object_get(f, "source"), *note = json_object_get(f, "note");
    char buf[2048];
    if (json_is_string(src) && json_string_length(src) > 0)
        snprintf(buf, sizeof buf, "%s", json_string_value(src));
    else
        snprintf(buf, sizeof buf, "assumed: %s", json_is_string(note) ? json_string_value(note) : "(no note)");
    if (!(cf->source = strdup(buf)))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    json_t *item = json_object_get(f, "item");
    if (!item) {
        if (strcmp(fname, "torus_cube_edge") == 0) {
            double v;
            tc_status st = field_num(c->path, fname, f, "value", 1, 65536, &v, err);
            if (st == TC_OK && v != floor(v))
                st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be a whole number, not %g",
                             c->path, fname, v);
            if (st == TC_OK) /* v is out of range, or unset, otherwise */
                c->cube_edge = (uint32_t)v;
            return st;
        }
        return TC_OK; /* a field the model does not read (a reach, a note): kept with the profile */
    }
    cost_item *it = &c->items[c->nitems];
    int k = -1;
    for (int i = 0; i < TC_BOM_KINDS && json_is_string(item); i++)
        if (strcmp(json_string_value(item), kind_names[i]) == 0)
            k = i;
    if (k < 0)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.item' is %s%s%s: accepted are switch, nic, dac, "
                                       "transceiver, fiber",
                       c->path, fname, json_is_string(item) ? "'" : "", json_is_string(item) ? json_string_value(item)
                                                                                                : "not a string",
                       json_is_string(item) ? "'" : "");
    it->kind = (tc_bom_kind)k;
    snprintf(it->field, sizeof it->field, "%s", fname);
    tc_status st = field_num(c->path, fname, f, "gbps", 1e-3, 1e6, &it->gbps, err);
    if (st == TC_OK)
        st = field_num(c->path, fname, f, "value", 1e-6, 1e12, &it->usd, err);
    if (st == TC_OK && it->kind == TC_BOM_SWITCH) {
        double r = 0;
        st = field_num(c->path, fname, f, "radix", 2, 1e6, &r, err);
        if (st == TC_OK && r != floor(r))
            st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.radix' must be a whole number of ports, not %g",
                         c->path, fname, r);
        if (st == TC_OK) /* a radix out of range (-8) is refused above, not converted */
            it->radix = (uint32_t)r;
    } else if (st == TC_OK && json_object_get(f, "radix")) {
        st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.radix': only a switch has a radix", c->path,
                     fname);
    }
    for (int i = 0; st == TC_OK && i < c->nitems; i++) {
        const cost_item *o = &c->items[i];
        if (o->kind == it->kind && same_speed(o->gbps, it->gbps) && (o->kind != TC_BOM_SWITCH || o->radix == it->radix))
            st = tc_fail(err, TC_EINVAL, "profile %s: fields '%s' and '%s' both price a %s at %g Gb/s%s: give one",
                         c->path, o->field, fname, kind_names[k], it->gbps,
                         it->kind == TC_BOM_SWITCH ? " of that radix" : "");
    }
    if (st == TC_OK)
        st = add_speed(c, it->gbps, fname, err);
    if (st == TC_OK)
        c->nitems++;
    return st;
}

tc_status tc_cost_from_profile(const tc_profile *p, tc_cost **out, tc_err *err)
{
    *out = NULL;
    if (strcmp(tc_profile_kind(p), "cost") != 0)
        return tc_fail(err, TC_EINVAL, "profile %s is a %s profile, not a cost profile (kind \"cost\", e.g. cost-2026)",
                       tc_profile_path(p), tc_profile_kind(p));
    unsigned long mark = tc_oom_mark();
    json_t *root = json_loads(tc_profile_json(p), 0, NULL);
    if (tc_oom_since(mark)) { /* parsed with a character left out: another profile */
        json_decref(root);
        root = NULL;
    }
    json_t *fields = root ? json_object_get(root, "fields") : NULL;
    tc_cost *c = tc_calloc(1, sizeof *c);
    size_t nf = fields ? json_object_size(fields) : 0;
    if (c) {
        c->items = tc_calloc(nf + 1, sizeof *c->items);
        c->fields = tc_calloc(nf + 1, sizeof *c->fields);
    }
    if (!root || !fields || !c || !c->items || !c->fields) {
        json_decref(root);
        tc_cost_free(c);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    snprintf(c->name, sizeof c->name, "%s", tc_profile_name(p));
    snprintf(c->path, sizeof c->path, "%s", tc_profile_path(p));
    tc_status st = TC_OK;
    const char *k;
    json_t *f;
    json_object_foreach(fields, k, f) {
        if (st == TC_OK)
            st = read_field(c, k, f, err);
    }
    json_decref(root);
    if (st == TC_OK && c->nitems == 0)
        st = tc_fail(err, TC_EINVAL, "profile %s: no priced items: give fields with \"item\" (switch, nic, dac, "
                                     "transceiver, fiber), \"gbps\" and \"value\" (dollars)",
                     c->path);
    if (st == TC_OK && c->cube_edge == 0)
        st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.torus_cube_edge' is missing (the endpoints per "
                                     "dimension of a torus's rack, e.g. 4)",
                     c->path);
    if (st == TC_OK)
        qsort(c->speeds, (size_t)c->nspeeds, sizeof *c->speeds, cmp_double);
    /* every speed prices every item */
    for (int s = 0; st == TC_OK && s < c->nspeeds; s++)
        for (int kk = 0; st == TC_OK && kk < TC_BOM_KINDS; kk++) {
            bool have = false;
            for (int i = 0; i < c->nitems && !have; i++)
                have = c->items[i].kind == (tc_bom_kind)kk && same_speed(c->items[i].gbps, c->speeds[s]);
            if (!have)
                st = tc_fail(err, TC_EINVAL, "profile %s: %g Gb/s has no %s price: every port speed needs a switch, "
                                             "nic, dac, transceiver and fiber field (e.g. fields.%s_%gG)",
                             c->path, c->speeds[s], kind_names[kk], kind_names[kk], c->speeds[s]);
        }
    if (st) {
        tc_cost_free(c);
        return st;
    }
    *out = c;
    return TC_OK;
}

void tc_cost_free(tc_cost *c)
{
    if (!c)
        return;
    for (int i = 0; c->fields && i < c->nfields; i++)
        free(c->fields[i].source);
    free(c->fields);
    free(c->items);
    free(c);
}

const char *tc_cost_name(const tc_cost *c)
{
    return c->name;
}

int tc_cost_speeds(const tc_cost *c, const double **gbps)
{
    *gbps = c->speeds;
    return c->nspeeds;
}

uint32_t tc_cost_cube_edge(const tc_cost *c)
{
    return c->cube_edge;
}

const char *tc_cost_source(const tc_cost *c, const char *field)
{
    for (int i = 0; i < c->nfields; i++)
        if (strcmp(c->fields[i].name, field) == 0)
            return c->fields[i].source;
    return "";
}

/* ---- prices ---- */

/* The unit price at the profile's speed index s (a switch: per port, of
 * the smallest switch with at least ports ports). */
static tc_status unit_at(const tc_cost *c, tc_bom_kind k, int s, uint32_t ports, double *usd, const char **field,
                         tc_err *err)
{
    const cost_item *best = NULL;
    uint32_t largest = 0;
    for (int i = 0; i < c->nitems; i++) {
        const cost_item *it = &c->items[i];
        if (it->kind != k || !same_speed(it->gbps, c->speeds[s]))
            continue;
        if (k != TC_BOM_SWITCH) {
            best = it;
            break;
        }
        largest = it->radix > largest ? it->radix : largest;
        if (it->radix >= ports && (!best || it->radix < best->radix))
            best = it;
    }
    if (!best)
        return tc_fail(err, TC_EINVAL, "cost profile %s has no switch of %u or more ports at %g Gb/s (its largest "
                                       "there has %u): add one (fields.switch_%gG_%up)",
                       c->name, ports, c->speeds[s], largest, c->speeds[s], ports);
    *usd = k == TC_BOM_SWITCH ? best->usd / best->radix : best->usd;
    *field = best->field;
    return TC_OK;
}

tc_status tc_cost_unit(const tc_cost *c, tc_bom_kind k, double gbps, uint32_t ports, double *usd, char *src,
                       size_t len, tc_err *err)
{
    int n = c->nspeeds, lo = -1;
    for (int i = 0; i < n; i++)
        if (same_speed(gbps, c->speeds[i])) {
            const char *f;
            tc_status st = unit_at(c, k, i, ports, usd, &f, err);
            if (st == TC_OK && src)
                snprintf(src, len, "%s", f);
            return st;
        }
    for (int i = 0; i + 1 < n; i++)
        if (gbps > c->speeds[i] && gbps < c->speeds[i + 1])
            lo = i;
    if (lo < 0)
        return tc_fail(err, TC_EINVAL, "cost profile %s prices ports of %g to %g Gb/s, not %.6g Gb/s: give links in "
                                       "that range, or a profile that prices this speed",
                       c->name, c->speeds[0], c->speeds[n - 1], gbps);
    double ulo, uhi;
    const char *flo, *fhi;
    tc_status st = unit_at(c, k, lo, ports, &ulo, &flo, err);
    if (st == TC_OK)
        st = unit_at(c, k, lo + 1, ports, &uhi, &fhi, err);
    if (st)
        return st;
    double slo = c->speeds[lo], shi = c->speeds[lo + 1], t = (gbps - slo) / (shi - slo);
    *usd = gbps * ((1 - t) * ulo / slo + t * uhi / shi);
    if (src)
        snprintf(src, len, "%s + %s", flo, fhi);
    return TC_OK;
}

/* ---- counting ---- */

/* A level's cable speed: its line rate (bw=), what a port is bought at,
 * not the net_eff= share of it the transport reaches */
static double clos_gbps(const tc_topo *t, int i)
{
    return t->level_bw[i] / t->par[i] / t->net_eff * 8 / 1e9;
}

double tc_cost_fabric_gbps(const tc_topo *t)
{
    if (t->kind == TC_TOPO_MULTIDC)
        return -1;
    if (t->kind == TC_TOPO_TORUS)
        return t->torus_bw * 8 / 1e9;
    double g = clos_gbps(t, 1);
    for (int i = 2; i <= t->levels; i++)
        if (!same_speed(clos_gbps(t, i), g))
            return -1;
    return g;
}

static tc_bom_line *add_line(tc_bom *b, tc_bom_kind k, int level, double gbps, uint64_t count)
{
    if (count == 0 || b->n >= TC_BOM_MAX_LINES)
        return NULL;
    tc_bom_line *l = &b->line[b->n++];
    memset(l, 0, sizeof *l);
    l->kind = k;
    l->level = level;
    l->gbps = gbps;
    l->count = count;
    return l;
}

/* force > 0: every fabric link at force Gb/s. */
static void count_clos(const tc_topo *t, double force, tc_bom *b)
{
    int h = t->levels;
    for (int i = 1; i <= h; i++) {
        double g = force > 0 ? force : clos_gbps(t, i);
        tc_bom_line *l = add_line(b, TC_BOM_SWITCH, i, g, t->level_count[i]);
        if (!l)
            continue;
        l->ports_up = i < h ? t->up[i + 1] * t->par[i + 1] : 0;
        l->ports = t->down[i] * t->par[i] + l->ports_up;
        l->gbps_up = i < h ? (force > 0 ? force : clos_gbps(t, i + 1)) : 0;
        snprintf(l->detail, sizeof l->detail, "level %d%s, %u ports", i, i == 1 ? " (leaf)" : i == h ? " (top)" : "",
                 l->ports);
    }
    double g1 = force > 0 ? force : clos_gbps(t, 1);
    uint64_t hostports = (uint64_t)t->n_slots * t->up[1] * t->par[1];
    tc_bom_line *l = add_line(b, TC_BOM_NIC, 1, g1, hostports);
    if (l)
        snprintf(l->detail, sizeof l->detail, "one per fabric port of %s", t->nics ? "a NIC (nics=)" : "an endpoint");
    if ((l = add_line(b, TC_BOM_DAC, 1, g1, hostports)))
        snprintf(l->detail, sizeof l->detail, "level 1: %s to leaf, copper in the rack",
                 t->nics ? "NIC" : "endpoint");
    for (int i = 2; i <= h; i++) {
        double g = force > 0 ? force : clos_gbps(t, i);
        uint64_t cables = (uint64_t)t->level_count[i - 1] * t->up[i] * t->par[i];
        if ((l = add_line(b, TC_BOM_TRANSCEIVER, i, g, 2 * cables)))
            snprintf(l->detail, sizeof l->detail, "level %d cables, optical: 2 per cable", i);
        if ((l = add_line(b, TC_BOM_FIBER, i, g, cables)))
            snprintf(l->detail, sizeof l->detail, "level %d cables, optical", i);
    }
}

static void count_torus(const tc_topo *t, uint32_t cube, double force, tc_bom *b)
{
    uint64_t copper = 0, optical = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t size = t->dims[d], cables = t->dim_cables[d];
        uint64_t lines = t->n_endpoints / size, cu = 0, op = 0;
        for (uint32_t x = 0; x < cables; x++) {
            bool wrap = x + 1 == size && size > 2;         /* the cable from size-1 back to 0 */
            bool cross = !wrap && (x + 1) % cube == 0;     /* from a cube's last coordinate to the next cube */
            if (wrap || cross)
                op++;
            else
                cu++;
        }
        copper += lines * cu;
        optical += lines * op;
    }
    double g = force > 0 ? force : t->torus_bw * 8 / 1e9;
    tc_bom_line *l = add_line(b, TC_BOM_NIC, 0, g, 2 * (copper + optical));
    if (l)
        snprintf(l->detail, sizeof l->detail, "router ports in the endpoints: one per cable end");
    if ((l = add_line(b, TC_BOM_DAC, 0, g, copper)))
        snprintf(l->detail, sizeof l->detail, "neighbours in a cube of %u per dimension, copper", cube);
    if ((l = add_line(b, TC_BOM_TRANSCEIVER, 0, g, 2 * optical)))
        snprintf(l->detail, sizeof l->detail, "between cubes and wraparound, optical: 2 per cable");
    if ((l = add_line(b, TC_BOM_FIBER, 0, g, optical)))
        snprintf(l->detail, sizeof l->detail, "between cubes and wraparound, optical");
}

static tc_status price(const tc_cost *c, tc_bom *b, tc_err *err)
{
    b->total_usd = 0;
    for (int i = 0; i < b->n; i++) {
        tc_bom_line *l = &b->line[i];
        tc_status st;
        if (l->kind == TC_BOM_SWITCH) {
            double down, up = 0;
            char s1[132], s2[132] = "";
            st = tc_cost_unit(c, TC_BOM_SWITCH, l->gbps, l->ports, &down, s1, sizeof s1, err);
            if (st == TC_OK && l->ports_up && !same_speed(l->gbps_up, l->gbps))
                st = tc_cost_unit(c, TC_BOM_SWITCH, l->gbps_up, l->ports, &up, s2, sizeof s2, err);
            else
                up = down;
            if (st)
                return st;
            l->unit_usd = (l->ports - l->ports_up) * down + l->ports_up * up;
            snprintf(l->fields, sizeof l->fields, "%s%s%s", s1, s2[0] ? "; " : "", s2);
        } else {
            st = tc_cost_unit(c, l->kind, l->gbps, 0, &l->unit_usd, l->fields, sizeof l->fields, err);
            if (st)
                return st;
        }
        l->total_usd = l->unit_usd * (double)l->count;
        b->total_usd += l->total_usd;
    }
    return TC_OK;
}

static tc_status bom(const tc_topo *t, const tc_cost *c, double force, tc_bom *b, tc_err *err)
{
    memset(b, 0, sizeof *b);
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_fail(err, TC_EINVAL, "a bill of materials covers a clos or a torus: a multidc topology's long-haul "
                                       "links and gateways have no prices in the cost profiles (cost one pod's spec "
                                       "instead)");
    if (t->kind == TC_TOPO_FULL)
        return tc_fail(err, TC_EINVAL, "a bill of materials covers a clos or a torus: a full mesh's direct links "
                                       "(board links such as xGMI or NVLink between GPUs) have no prices in the "
                                       "cost profiles");
    if (t->kind == TC_TOPO_CLOS)
        count_clos(t, force, b);
    else
        count_torus(t, c ? c->cube_edge : 4, force, b);
    for (int i = 0; i < b->n; i++) {
        const tc_bom_line *l = &b->line[i];
        switch (l->kind) {
        case TC_BOM_SWITCH:
            b->switches += l->count;
            b->switch_ports += l->count * l->ports;
            break;
        case TC_BOM_NIC: b->nic_ports += l->count; break;
        case TC_BOM_DAC: b->copper_cables += l->count; break;
        case TC_BOM_TRANSCEIVER: b->transceivers += l->count; break;
        case TC_BOM_FIBER: b->optical_cables += l->count; break;
        default: break;
        }
    }
    return c ? price(c, b, err) : TC_OK;
}

tc_status tc_bom_build(const tc_topo *t, const tc_cost *c, tc_bom *out, tc_err *err)
{
    return bom(t, c, 0, out, err);
}

tc_status tc_bom_at(const tc_topo *t, const tc_cost *c, double gbps, tc_bom *out, tc_err *err)
{
    if (!(gbps > 0) || !isfinite(gbps))
        return tc_fail(err, TC_EINVAL, "bill of materials: a link speed must be positive, not %g Gb/s", gbps);
    return bom(t, c, gbps, out, err);
}

/* ---- a given cost ---- */

tc_status tc_cost_set_fabric_speed(tc_topo *t, double gbps, tc_err *err)
{
    if (!(gbps > 0) || !isfinite(gbps))
        return tc_fail(err, TC_EINVAL, "fabric link speed must be positive, not %g Gb/s", gbps);
    if (t->kind == TC_TOPO_MULTIDC)
        return tc_fail(err, TC_EINVAL, "equal cost covers a clos or a torus, not a multidc topology");
    double Bps = gbps * 1e9 / 8;
    for (int i = 1; t->kind == TC_TOPO_CLOS && i <= t->levels; i++)
        t->level_bw[i] = t->par[i] * Bps * t->net_eff; /* the line rate; net_eff= of it is reached */
    if (t->kind == TC_TOPO_TORUS)
        t->torus_bw = Bps;
    for (uint32_t l = 0; l < t->n_links; l++) {
        tc_link *k = &t->links[l];
        if (k->kind == TC_LINK_FABRIC)
            k->bw = t->kind == TC_TOPO_CLOS ? t->level_bw[k->level] : Bps;
        else if (k->kind == TC_LINK_NIC && !t->nic_bw_given)
            k->bw = t->up[1] * t->level_bw[1];
    }
    /* The spec is rewritten where the bandwidths are equalized: at the
     * injection it has now (a factor of exactly 1). */
    return tc_topo_equalize_injection(t, tc_topo_equalize_base(t), err);
}

/* The totals at each of the profile's speeds. */
static tc_status totals(const tc_topo *t, const tc_cost *c, double *tot, tc_err *err)
{
    tc_bom *b = malloc(sizeof *b);
    if (!b)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (int s = 0; s < c->nspeeds && st == TC_OK; s++) {
        st = bom(t, c, c->speeds[s], b, err);
        tot[s] = b->total_usd;
    }
    free(b);
    return st;
}

/* Segment s (speeds s..s+1): total(b) = q b^2 + l b. */
static void segment(const tc_cost *c, const double *tot, int s, double *q, double *l)
{
    double slo = c->speeds[s], shi = c->speeds[s + 1];
    double a = tot[s] / slo, e = tot[s + 1] / shi;
    *q = (e - a) / (shi - slo);
    *l = a - *q * slo;
}

tc_status tc_cost_range_of(const tc_topo *t, const tc_cost *c, tc_cost_range *out, tc_err *err)
{
    double tot[COST_MAX_SPEEDS];
    tc_status st = totals(t, c, tot, err);
    if (st)
        return st;
    out->lo_usd = out->hi_usd = tot[0];
    out->lo_gbps = out->hi_gbps = c->speeds[0];
    for (int s = 0; s < c->nspeeds; s++) {
        double cand[2] = {c->speeds[s], NAN}, val[2] = {tot[s], NAN};
        if (s + 1 < c->nspeeds) {
            double q, l;
            segment(c, tot, s, &q, &l);
            double v = q != 0 ? -l / (2 * q) : NAN; /* the vertex, where inside */
            if (v > c->speeds[s] && v < c->speeds[s + 1])
                cand[1] = v, val[1] = q * v * v + l * v;
        }
        for (int k = 0; k < 2; k++) {
            if (isnan(val[k]))
                continue;
            if (val[k] < out->lo_usd)
                out->lo_usd = val[k], out->lo_gbps = cand[k];
            if (val[k] > out->hi_usd)
                out->hi_usd = val[k], out->hi_gbps = cand[k];
        }
    }
    return TC_OK;
}

tc_status tc_cost_equal_speed(const tc_topo *t, const tc_cost *c, double usd, const char *what, double *gbps,
                              tc_err *err)
{
    double tot[COST_MAX_SPEEDS];
    tc_status st = totals(t, c, tot, err);
    if (st)
        return st;
    double best = -1;
    int n = c->nspeeds;
    for (int s = 0; s < n; s++)
        if (fabs(tot[s] - usd) <= 1e-9 * usd)
            best = c->speeds[s]; /* a listed speed, exactly */
    for (int s = 0; s + 1 < n; s++) {
        double q, l, slo = c->speeds[s], shi = c->speeds[s + 1];
        segment(c, tot, s, &q, &l);
        double r[2] = {NAN, NAN};
        if (fabs(q) * shi <= 1e-12 * fabs(l)) {
            r[0] = usd / l;
        } else {
            double disc = l * l + 4 * q * usd;
            if (disc >= 0) {
                /* q b^2 + l b - usd = 0, without cancellation */
                double qq = -0.5 * (l + copysign(sqrt(disc), l));
                r[0] = qq / q;
                r[1] = qq != 0 ? -usd / qq : NAN;
            }
        }
        for (int k = 0; k < 2; k++)
            if (r[k] >= slo * (1 - 1e-12) && r[k] <= shi * (1 + 1e-12)) {
                double b = fmin(fmax(r[k], slo), shi);
                if (b > best)
                    best = b;
            }
    }
    if (best > 0) {
        for (int s = 0; s < n; s++)
            if (fabs(best - c->speeds[s]) <= 1e-12 * c->speeds[s])
                best = c->speeds[s];
        *gbps = best;
        return TC_OK;
    }
    tc_cost_range r;
    if ((st = tc_cost_range_of(t, c, &r, err)))
        return st;
    char u[48], lo[48], hi[48];
    return tc_fail(err, TC_EINVAL, "%s: no fabric link speed makes it cost %s under cost profile %s: its bill of "
                                   "materials runs from %s (at %.4g Gb/s) to %s (at %.4g Gb/s)",
                   what, tc_fmt_usd(usd, u, sizeof u), c->name, tc_fmt_usd(r.lo_usd, lo, sizeof lo), r.lo_gbps,
                   tc_fmt_usd(r.hi_usd, hi, sizeof hi), r.hi_gbps);
}

/* ---- money ---- */

const char *tc_fmt_usd(double usd, char *buf, size_t len)
{
    if (!isfinite(usd) || fabs(usd) >= 1e18) {
        snprintf(buf, len, "$%g", usd);
        return buf;
    }
    unsigned long long v = (unsigned long long)llround(fabs(usd));
    char digits[32], out[48];
    int nd = snprintf(digits, sizeof digits, "%llu", v), o = 0;
    if (usd < 0 && v)
        out[o++] = '-';
    out[o++] = '$';
    for (int i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    if (len) {
        size_t n = (size_t)o < len ? (size_t)o : len - 1;
        memcpy(buf, out, n);
        buf[n] = '\0';
    }
    return buf;
}

tc_status tc_parse_usd(const char *s, double *out, tc_err *err)
{
    const char *p = s && *s == '$' ? s + 1 : s;
    char *end = NULL;
    double v = p ? strtod(p, &end) : 0;
    double mult = 1;
    if (p && end != p && *end) {
        if (*end == 'k' || *end == 'K')
            mult = 1e3, end++;
        else if (*end == 'M')
            mult = 1e6, end++;
        else if (*end == 'G' || *end == 'B')
            mult = 1e9, end++;
    }
    v *= mult;
    if (!p || end == p || *end || !isfinite(v) || !(v > 0) || v > 1e15)
        return tc_fail(err, TC_EINVAL, "cost '%s': expected dollars above 0, e.g. 5000000, 5M, 750k or $2.5M (k, M, "
                                       "G: thousands, millions, billions)",
                       s ? s : "");
    *out = v;
    return TC_OK;
}
