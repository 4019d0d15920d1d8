/*
 * profile.c - hardware profiles (topocc/profile.h, docs/PROFILES.md): JSON
 * files found on a search path, read with their sources, and presets that
 * expand a profile into a topology spec.
 */
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/profile.h"
#include "topocc/topo.h"

#ifndef TOPOCC_SHARE_DIR
#define TOPOCC_SHARE_DIR ""
#endif
#ifndef TOPOCC_PROFILES_SRC
#define TOPOCC_PROFILES_SRC ""
#endif

#define PROFILE_SCHEMA "topocc-profile/1"
#define MAX_DIRS 16

struct tc_profile {
    char name[64];
    char kind[16];
    char path[4200];
    json_t *root;
    char *canon;
};

/* The search path: dir, $TOPOCC_PROFILE_PATH's entries, the share
 * directory, the source tree. Empty entries are skipped. */
static int search_dirs(const char *dir, char dirs[][4096], int max)
{
    int n = 0;
    if (dir && *dir && n < max)
        snprintf(dirs[n++], 4096, "%s", dir);
    const char *env = getenv("TOPOCC_PROFILE_PATH");
    while (env && *env && n < max) {
        const char *colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        if (len > 0 && len < 4096)
            snprintf(dirs[n++], 4096, "%.*s", (int)len, env);
        env = colon ? colon + 1 : NULL;
    }
    if (*TOPOCC_SHARE_DIR && n < max)
        snprintf(dirs[n++], 4096, "%s", TOPOCC_SHARE_DIR);
    if (*TOPOCC_PROFILES_SRC && n < max)
        snprintf(dirs[n++], 4096, "%s", TOPOCC_PROFILES_SRC);
    return n;
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= 64 || s[0] == '.')
        return false;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tc_profile_list(const char *dir, char *buf, size_t len)
{
    tc_profile_list_kind(dir, NULL, buf, len);
}

/* Whether profile name (found first on the path) is of this kind. */
static bool of_kind(const char *name, const char *dir, const char *kind)
{
    tc_profile *p = NULL;
    tc_err err;
    if (tc_profile_load(name, dir, &p, &err) != TC_OK)
        return false;
    bool ok = strcmp(p->kind, kind) == 0;
    tc_profile_free(p);
    return ok;
}

void tc_profile_list_kind(const char *dir, const char *kind, char *buf, size_t len)
{
    char dirs[MAX_DIRS][4096];
    int nd = search_dirs(dir, dirs, MAX_DIRS);
    char *names[256];
    size_t n = 0;
    for (int i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) && n < sizeof names / sizeof *names) {
            size_t l = strlen(e->d_name);
            if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0)
                continue;
            char nm[64];
            if (l - 5 >= sizeof nm)
                continue;
            snprintf(nm, sizeof nm, "%.*s", (int)(l - 5), e->d_name);
            bool dup = !valid_name(nm);
            for (size_t k = 0; k < n && !dup; k++)
                dup = strcmp(names[k], nm) == 0;
            if (!dup && kind && !of_kind(nm, dir, kind))
                dup = true;
            if (!dup && (names[n] = strdup(nm)))
                n++;
        }
        closedir(d);
    }
    qsort(names, n, sizeof *names, cmp_str);
    if (len)
        buf[0] = '\0';
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        if (len && at < len) {
            int w = snprintf(buf + at, len - at, "%s%s", k ? ", " : "", names[k]);
            at += w > 0 ? (size_t)w : 0;
        }
        free(names[k]);
    }
    if (n == 0 && len)
        snprintf(buf, len, "(none found)");
}

/* Every field: an object with "value" (a number, a string, true or false) and a
 * "source" string or "assumed": true. */
static tc_status check_fields(const char *path, json_t *fields, tc_err *err)
{
    const char *k;
    json_t *f;
    json_object_foreach(fields, k, f) {
        if (!json_is_object(f))
            return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s' must be an object with value and source", path,
                           k);
        json_t *v = json_object_get(f, "value");
        if (!v || !(json_is_number(v) || json_is_string(v) || json_is_boolean(v)))
            return tc_fail(err, TC_EINVAL,
                           "profile %s: field 'fields.%s.value' is missing or not a number, string, true or false", path,
                           k);
        json_t *src = json_object_get(f, "source"), *as = json_object_get(f, "assumed");
        if (src && !json_is_string(src))
            return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.source' must be a string", path, k);
        if (as && !json_is_boolean(as))
            return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.assumed' must be true or false", path, k);
        if (!(src && json_string_length(src) > 0) && !json_is_true(as))
            return tc_fail(err, TC_EINVAL,
                           "profile %s: field 'fields.%s' has no source: give \"source\" (URL or document) or "
                           "\"assumed\": true",
                           path, k);
    }
    return TC_OK;
}

/* A field within two edits of one topocc reads, but not it, is a typo of
 * it (a mistyped optional field, "transprt", would otherwise be ignored
 * and the profile read without it); a profile's other fields, which
 * describe the hardware for the reader, stay free. */
static tc_status check_near_misses(const char *path, const char *kind, json_t *fields, tc_err *err)
{
    static const char *const gpu[] = {"gpus_per_node",     "gpu_arch",         "nics_per_node",  "nvlink_GBps_per_direction",
                                      "nvlink_efficiency", "nvlink_lat_ns",    "nic_Gbps",       "leaf_radix",
                                      "switch_lat_ns",     "cable_lat_ns",     "nvlink_sharp",   "transport",
                                      "nic_path",          "accelerator",      "net_lat_ll_us",  "net_lat_ll128_us",
                                      "net_lat_simple_us", "net_eff",          "p2p_channel_GBps",
                                      "p2p_channel_net_GBps", NULL};
    static const char *const tpu[] = {"ici_GBps_per_link_per_direction", "ici_lat_ns", "router_lat_ns", "slice_dims",
                                      "accelerator", NULL};
    const char *const *read = strcmp(kind, "gpu-node") == 0 ? gpu : strcmp(kind, "tpu-slice") == 0 ? tpu : NULL;
    if (!read)
        return TC_OK;
    const char *k;
    json_t *f;
    json_object_foreach(fields, k, f) {
        bool known = false;
        for (size_t i = 0; read[i] && !known; i++)
            known = strcmp(k, read[i]) == 0;
        for (size_t i = 0; read[i] && !known; i++)
            if (strlen(k) >= 4 && tc_edit_distance(k, read[i]) <= 2)
                return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s' is not one topocc reads: did you mean "
                                               "'%s'?",
                               path, k, read[i]);
    }
    (void)f;
    return TC_OK;
}

/* Checks a profile's content (root, owned by p from here) and keeps it;
 * path names it in messages (a file, or where in a scenario it was). */
static tc_status check_profile(tc_profile *p, json_t *root, const char *path, tc_err *err)
{
    p->root = root;
    if (strlen(path) >= sizeof p->path)
        return tc_fail(err, TC_EINVAL, "profile path too long (at most %zu bytes)", sizeof p->path - 1);
    memcpy(p->path, path, strlen(path) + 1);
    if (!json_is_object(root))
        return tc_fail(err, TC_EINVAL, "profile %s: expected a JSON object", path);
    const char *need[] = {"schema", "name", "kind", "title"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (!json_is_string(json_object_get(root, need[i])))
            return tc_fail(err, TC_EINVAL, "profile %s: field '%s' is missing or not a string", path, need[i]);
    if (strcmp(json_string_value(json_object_get(root, "schema")), PROFILE_SCHEMA) != 0)
        return tc_fail(err, TC_EINVAL, "profile %s: schema '%s' is not %s", path,
                       json_string_value(json_object_get(root, "schema")), PROFILE_SCHEMA);
    const char *kind = json_string_value(json_object_get(root, "kind"));
    if (strcmp(kind, "gpu-node") != 0 && strcmp(kind, "tpu-slice") != 0 && strcmp(kind, "accelerator") != 0 &&
        strcmp(kind, "cost") != 0)
        return tc_fail(err, TC_EINVAL, "profile %s: kind '%s': expected gpu-node, tpu-slice, accelerator or cost", path,
                       kind);
    snprintf(p->kind, sizeof p->kind, "%s", kind);
    json_t *fields = json_object_get(root, "fields");
    if (!json_is_object(fields))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields' is missing or not an object", path);
    tc_status st = check_fields(path, fields, err);
    if (st == TC_OK)
        st = check_near_misses(path, kind, fields, err);
    if (st)
        return st;
    p->canon = tc_json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    if (!p->canon)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

static tc_status read_profile(tc_profile *p, const char *path, tc_err *err)
{
    json_error_t je;
    unsigned long mark = tc_oom_mark();
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root)
        return tc_fail(err, TC_EINVAL, "profile %s: line %d column %d: %s", path, je.line, je.column, je.text);
    return check_profile(p, root, path, err);
}

/* Whether the name in p's content is name (what: the file's name, or the
 * key it is embedded under). */
static tc_status check_name(tc_profile *p, const char *name, const char *what, tc_err *err)
{
    const char *in = json_string_value(json_object_get(p->root, "name"));
    if (strcmp(in, name) != 0)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'name' is '%s', not %s '%s'", p->path, in, what, name);
    snprintf(p->name, sizeof p->name, "%s", name);
    return TC_OK;
}

tc_status tc_profile_from_json(const char *name, const char *json, const char *origin, tc_profile **out, tc_err *err)
{
    *out = NULL;
    if (!valid_name(name))
        return tc_fail(err, TC_EINVAL, "profile %s: '%s' is not a profile name (letters, digits, '-', '_', '.')",
                       origin, name);
    json_error_t je;
    unsigned long mark = tc_oom_mark();
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root)
        return tc_fail(err, TC_EINVAL, "profile %s: line %d column %d: %s", origin, je.line, je.column, je.text);
    tc_profile *p = calloc(1, sizeof *p);
    if (!p) {
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    tc_status st = check_profile(p, root, origin, err);
    if (st == TC_OK)
        st = check_name(p, name, "the name it is kept under", err);
    if (st) {
        tc_profile_free(p);
        return st;
    }
    *out = p;
    return TC_OK;
}

/* The first NAME.json on the search path into path; false if none. */
static bool find_file(const char *name, const char *dir, char *path, size_t len)
{
    char dirs[MAX_DIRS][4096];
    int nd = search_dirs(dir, dirs, MAX_DIRS);
    for (int i = 0; i < nd; i++) {
        int w = snprintf(path, len, "%s/%s.json", dirs[i], name);
        if (w < 0 || (size_t)w >= len)
            continue;
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            return true;
        }
    }
    return false;
}

bool tc_profile_exists(const char *name, const char *dir)
{
    char path[4200];
    return valid_name(name) && find_file(name, dir, path, sizeof path);
}

tc_status tc_profile_load(const char *name, const char *dir, tc_profile **out, tc_err *err)
{
    *out = NULL;
    char known[2048], path[4200];
    if (!valid_name(name) || !find_file(name, dir, path, sizeof path)) {
        tc_profile_list(dir, known, sizeof known);
        return tc_fail(err, TC_EINVAL, "unknown preset '%s': known are %s", name, known);
    }
    tc_profile *p = calloc(1, sizeof *p);
    if (!p)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = read_profile(p, path, err);
    if (st == TC_OK)
        st = check_name(p, name, "the file's name", err);
    if (st) {
        tc_profile_free(p);
        return st;
    }
    *out = p;
    return TC_OK;
}

void tc_profile_free(tc_profile *p)
{
    if (!p)
        return;
    json_decref(p->root);
    free(p->canon);
    free(p);
}

const char *tc_profile_name(const tc_profile *p)
{
    return p->name;
}
const char *tc_profile_kind(const tc_profile *p)
{
    return p->kind;
}
const char *tc_profile_path(const tc_profile *p)
{
    return p->path;
}
const char *tc_profile_json(const tc_profile *p)
{
    return p->canon;
}

static json_t *field(const tc_profile *p, const char *name)
{
    json_t *f = json_object_get(json_object_get(p->root, "fields"), name);
    return f ? json_object_get(f, "value") : NULL;
}

tc_status tc_profile_num(const tc_profile *p, const char *name, double *out, tc_err *err)
{
    json_t *v = field(p, name);
    if (!v)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s' is missing", p->path, name);
    if (!json_is_number(v))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be a number", p->path, name);
    *out = json_number_value(v);
    return TC_OK;
}

tc_status tc_profile_str(const tc_profile *p, const char *name, const char **out, tc_err *err)
{
    json_t *v = field(p, name);
    if (!v)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s' is missing", p->path, name);
    if (!json_is_string(v))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be a string", p->path, name);
    *out = json_string_value(v);
    return TC_OK;
}

/* ---- presets ---- */

/* A positive whole number field. */
static tc_status count_field(const tc_profile *p, const char *name, uint32_t *out, tc_err *err)
{
    double v = 0;
    tc_status st = tc_profile_num(p, name, &v, err);
    if (st)
        return st;
    if (!(v >= 1 && v <= 1e6 && v == (double)(uint32_t)v))
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be a whole number from 1, not %g",
                       p->path, name, v);
    *out = (uint32_t)v;
    return TC_OK;
}

static tc_status pos_field(const tc_profile *p, const char *name, double *out, tc_err *err)
{
    tc_status st = tc_profile_num(p, name, out, err);
    if (st == TC_OK && !(*out > 0 && *out < 1e30))
        st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be above 0 and below 1e30, not %g", p->path,
                     name, *out);
    return st;
}

/* A latency (the spec keys they set, lat=, hop_lat=, node_lat=, net_lat=,
 * take 0): from 0, below 1e30. */
static tc_status lat_field(const tc_profile *p, const char *name, double *out, tc_err *err)
{
    tc_status st = tc_profile_num(p, name, out, err);
    if (st == TC_OK && !(*out >= 0 && *out < 1e30))
        st = tc_fail(err, TC_EINVAL, "profile %s: field 'fields.%s.value' must be from 0 (a latency) and below 1e30, not %g",
                     p->path, name, *out);
    return st;
}

/* A GPU node profile, nodes=N: N nodes of G GPUs behind an NVSwitch
 * (node=G, node_bw = NVLink bandwidth x efficiency), R NICs per node on R
 * rails of a two-tier rail-optimized Clos of the profile's leaf radix
 * (rail=R; with fewer NICs than GPUs, nics=R: G/R GPUs share each NIC). A
 * rail's N ports take one leaf when they fit in half its ports (the other
 * half go up), else whole leaves of half its ports. */
#define NIC_PATHS "pix, pxb, pxn, phb and sys (NCCL's PCIe path types from a GPU to its NIC)"

static bool valid_nic_path(const char *s)
{
    static const char *names[] = {"pix", "pxb", "pxn", "phb", "sys"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i]) == 0)
            return true;
    return false;
}

/* The optional calibration of the NICs' transport (docs/MODEL.md,
 * "Calibrating a transport"): net_lat_ll_us, net_lat_ll128_us and
 * net_lat_simple_us (the three together) and net_eff, and the rate of
 * NCCL's point-to-point channels (p2p_channel_GBps inside a node,
 * p2p_channel_net_GBps across nodes: docs/MODEL.md "sendrecv"), as spec
 * keys in out; the preset's own net_lat=, net_eff=, p2p_bw= or
 * p2p_net_bw= (in given) override them. */
static tc_status calib_fields(const tc_profile *p, const char *given, char *out, size_t len, tc_err *err)
{
    static const char *const lat[3] = {"net_lat_ll_us", "net_lat_ll128_us", "net_lat_simple_us"};
    double v[3] = {0};
    int n = 0;
    tc_status st = TC_OK;
    out[0] = '\0';
    for (int i = 0; i < 3 && st == TC_OK; i++)
        if (field(p, lat[i]) && (st = lat_field(p, lat[i], &v[i], err)) == TC_OK)
            n++;
    if (st)
        return st;
    if (n != 0 && n != 3)
        return tc_fail(err, TC_EINVAL, "profile %s: net_lat_ll_us, net_lat_ll128_us and net_lat_simple_us go together "
                                       "(a network step's time with each protocol, as nccl-tests --fit gives it): give "
                                       "all three or none",
                       p->path);
    if (n == 3 && !strstr(given, ",net_lat="))
        snprintf(out, len, ",net_lat=%.12gus/%.12gus/%.12gus", v[0], v[1], v[2]);
    double eff = 0;
    if (field(p, "net_eff") && (st = pos_field(p, "net_eff", &eff, err)) != TC_OK)
        return st;
    if (eff > 1)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.net_eff.value' must be at most 1 (the share of the "
                                       "line rate reached), not %g",
                       p->path, eff);
    size_t used = strlen(out);
    if (eff > 0 && !strstr(given, ",net_eff="))
        snprintf(out + used, len - used, ",net_eff=%.12g", eff);
    static const char *const p2p[2][2] = {{"p2p_channel_GBps", "p2p_bw"}, {"p2p_channel_net_GBps", "p2p_net_bw"}};
    for (int i = 0; i < 2; i++) {
        double r = 0;
        char key[24];
        snprintf(key, sizeof key, ",%s=", p2p[i][1]);
        if (field(p, p2p[i][0]) && (st = pos_field(p, p2p[i][0], &r, err)) != TC_OK)
            return st;
        used = strlen(out);
        if (r > 0 && !strstr(given, key))
            snprintf(out + used, len - used, "%s%.12gGB/s", key, r);
    }
    used = strlen(out);
    snprintf(out + used, len - used, "%s", given);
    return TC_OK;
}

static tc_status expand_gpu_node(const tc_profile *p, uint32_t nodes, bool ib_sharp, const char *transport,
                                 const char *nic_path, const char *seed, const char *calib_given, char *spec,
                                 size_t len, tc_err *err)
{
    uint32_t G = 0, R = 0, radix = 0;
    double nv = 0, eff = 0, nvlat = 0, nic = 0, swlat = 0, cable = 0;
    const char *arch = NULL;
    tc_status st = count_field(p, "gpus_per_node", &G, err);
    if (!st)
        st = tc_profile_str(p, "gpu_arch", &arch, err);
    if (!st) {
        /* one of the spec's arch= names, pasted into the spec as it is */
        bool known = false;
        for (tc_arch a = TC_ARCH_VOLTA; a <= TC_ARCH_BLACKWELL; a++)
            known = known || strcmp(arch, tc_arch_name(a)) == 0;
        if (!known)
            st = tc_fail(err, TC_EINVAL,
                         "profile %s: field 'fields.gpu_arch.value' is '%s': accepted are volta, ampere, hopper, "
                         "blackwell",
                         p->path, arch);
    }
    if (!st)
        st = count_field(p, "nics_per_node", &R, err);
    if (!st)
        st = pos_field(p, "nvlink_GBps_per_direction", &nv, err);
    if (!st)
        st = pos_field(p, "nvlink_efficiency", &eff, err);
    if (!st)
        st = lat_field(p, "nvlink_lat_ns", &nvlat, err);
    if (!st)
        st = pos_field(p, "nic_Gbps", &nic, err);
    if (!st)
        st = count_field(p, "leaf_radix", &radix, err);
    if (!st)
        st = lat_field(p, "switch_lat_ns", &swlat, err);
    if (!st)
        st = lat_field(p, "cable_lat_ns", &cable, err);
    if (st)
        return st;
    if (eff > 1)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.nvlink_efficiency.value' must be at most 1, not %g",
                       p->path, eff);
    if (G % R != 0)
        return tc_fail(err, TC_EINVAL,
                       "profile %s: %u NICs per node do not fit %u GPUs per node: the NICs must divide the GPUs", p->path,
                       R, G);
    if (radix < 2 || radix % 2)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.leaf_radix.value' must be even, not %u", p->path,
                       radix);
    /* nvlink_sharp (optional, 0 or 1): the NVSwitch reduces and multicasts */
    double sharp = 0;
    if (field(p, "nvlink_sharp") && (st = tc_profile_num(p, "nvlink_sharp", &sharp, err)) != TC_OK)
        return st;
    if (sharp != 0 && sharp != 1)
        return tc_fail(err, TC_EINVAL, "profile %s: field 'fields.nvlink_sharp.value' must be 0 or 1, not %g", p->path,
                       sharp);
    /* transport (optional, ib, efa or efa-sendrecv): the NICs' transport (transport=);
     * the preset's transport= key overrides it */
    if (!transport && field(p, "transport") && (st = tc_profile_str(p, "transport", &transport, err)) != TC_OK)
        return st;
    if (transport && strcmp(transport, "ib") && strcmp(transport, "efa") && strcmp(transport, "efa-sendrecv"))
        return tc_fail(err, TC_EINVAL, "profile %s: transport '%s': accepted are ib, efa and efa-sendrecv", p->path,
                       transport);
    bool efa = transport && strcmp(transport, "ib") != 0;
    /* nic_path (optional, pix, pxb, pxn, phb or sys): the PCIe path from a
     * GPU to its NIC (nic_path=); the preset's nic_path= key overrides it */
    if (!nic_path && field(p, "nic_path") && (st = tc_profile_str(p, "nic_path", &nic_path, err)) != TC_OK)
        return st;
    if (nic_path && !valid_nic_path(nic_path))
        return tc_fail(err, TC_EINVAL, "profile %s: nic_path '%s': accepted are %s", p->path, nic_path, NIC_PATHS);
    char node[600], nics[32] = "", path[24] = "", calib[300];
    if ((st = calib_fields(p, calib_given, calib, sizeof calib, err)) != TC_OK)
        return st;
    if (nic_path && strcmp(nic_path, "pxb") != 0)
        snprintf(path, sizeof path, ",nic_path=%s", nic_path);
    if (R < G)
        snprintf(nics, sizeof nics, ",nics=%u", R);
    snprintf(node, sizeof node,
             "bw=%.12gGbps,lat=%.12gns,hop_lat=%.12gns,node=%u,node_bw=%.12gGB/s,node_lat=%.12gns%s%s,arch=%.16s%s%s%s%s%s%."
             "24s%s",
             nic, cable, swlat, G, nv * eff, nvlat, sharp == 1 ? ",node_reduce=1" : "", nics, arch,
             ib_sharp ? ",sharp=1" : "", efa ? ",transport=" : "", efa ? transport : "", path, seed ? ",seed=" : "",
             seed ? seed : "", calib);
    if (nodes == 1 && R <= radix) { /* one leaf (an NVL72's 72 NICs on 64-port leaves take the rails' way) */
        snprintf(spec, len, "clos:down=%u,up=1,%s", R, node);
        return TC_OK;
    }
    /* Two tiers of radix-port switches, rail-optimized. A leaf has D = radix/2
     * host ports and D up-links; rail j of every node (one NIC a node) is
     * cabled to the leaves of rail j. Where a rail fits a leaf (K <= D
     * nodes), a leaf takes g whole rails (g dividing R, g K <= D) and the
     * fabric has R / g leaves, each with g K up-links to as many spines of
     * R / g ports; where it does not, each rail spans K / D leaves and the
     * D spines have R K / D ports. g is the smallest that fits: every rail
     * its own leaf where the spines' ports allow it (a DGX H100 SuperPOD's
     * 8 rails), fewer leaves otherwise (72 rails of an NVL72 rack on
     * 64-port spines need g = 2). */
    uint64_t K = nodes, D = radix / 2, g = (R + radix - 1) / radix;
    while (R % g) /* the fewest whole rails a leaf that keep the spines within the radix */
        g++;
    if (g > 1 && g * K > D) {
        if (D / g == 0)
            return tc_fail(err, TC_EINVAL,
                           "preset %s:nodes=%u: two tiers of radix-%u switches cannot connect %u rails; give a --topo "
                           "spec",
                           p->name, nodes, radix, R);
        return tc_fail(err, TC_EINVAL,
                       "preset %s:nodes=%u: a two-tier rail-optimized fabric of radix-%u switches cannot connect "
                       "%u rails of %u nodes (the spines' %u ports take at most %u leaves; %llu rails a leaf fit up "
                       "to %llu nodes); give fewer nodes or a --topo spec",
                       p->name, nodes, radix, R, nodes, radix, radix, (unsigned long long)g,
                       (unsigned long long)(D / g));
    }
    if (g * K <= D) {
        snprintf(spec, len, "clos:down=%llux%llu,up=1x%llu,%s,rail=%u", (unsigned long long)(g * K),
                 (unsigned long long)(R / g), (unsigned long long)(g * K), node, R);
        return TC_OK;
    }
    uint64_t L = R * (K / D);
    if (K % D != 0 || L > radix)
        return tc_fail(err, TC_EINVAL,
                       "preset %s:nodes=%u: a two-tier rail-optimized fabric of radix-%u switches takes up to %llu nodes "
                       "per rail leaf, or multiples of %llu up to %llu nodes; give such a node count or a --topo spec",
                       p->name, nodes, radix, (unsigned long long)D, (unsigned long long)D,
                       (unsigned long long)((uint64_t)radix / R * D));
    snprintf(spec, len, "clos:down=%llux%llu,up=1x%llu,%s,rail=%u", (unsigned long long)D, (unsigned long long)L,
             (unsigned long long)D, node, R);
    return TC_OK;
}

/* A TPU slice profile, dims=AxBxC (default its own): a 3D torus of chips,
 * one link of the ICI bandwidth per direction between neighbours. */
static tc_status expand_tpu(const tc_profile *p, const char *dims, char *spec, size_t len, tc_err *err)
{
    double ici = 0, lat = 0, hop = 0;
    const char *def = NULL;
    tc_status st = pos_field(p, "ici_GBps_per_link_per_direction", &ici, err);
    if (!st)
        st = lat_field(p, "ici_lat_ns", &lat, err);
    if (!st)
        st = lat_field(p, "router_lat_ns", &hop, err);
    if (!st)
        st = tc_profile_str(p, "slice_dims", &def, err);
    if (st)
        return st;
    snprintf(spec, len, "torus:dims=%s,bw=%.12gGB/s,lat=%.12gns,hop_lat=%.12gns", dims ? dims : def, ici, lat, hop);
    return TC_OK;
}

tc_status tc_preset_expand(const char *preset, const char *dir, char *spec, size_t len, tc_profile **prof, tc_err *err)
{
    *prof = NULL;
    char name[64];
    const char *colon = strchr(preset, ':');
    size_t nl = colon ? (size_t)(colon - preset) : strlen(preset);
    if (nl == 0 || nl >= sizeof name)
        return tc_fail(err, TC_EINVAL, "preset '%s': expected NAME[:nodes=N], e.g. dgx-h100:nodes=4", preset);
    snprintf(name, sizeof name, "%.*s", (int)nl, preset);
    tc_profile *p = NULL;
    if (!tc_profile_exists(name, dir)) {
        /* the presets alone: the network profiles (gpu-node, tpu-slice) */
        char gpu[1024], tpu[1024];
        tc_profile_list_kind(dir, "gpu-node", gpu, sizeof gpu);
        tc_profile_list_kind(dir, "tpu-slice", tpu, sizeof tpu);
        return tc_fail(err, TC_EINVAL, "unknown preset '%s': known are %s%s%s", name, gpu, *gpu && *tpu ? ", " : "",
                       tpu);
    }
    tc_status st = tc_profile_load(name, dir, &p, err);
    if (st)
        return st;
    if (strcmp(p->kind, "accelerator") == 0 || strcmp(p->kind, "cost") == 0) {
        st = tc_fail(err, TC_EINVAL, "preset %s: %s, not a network: give a gpu-node or tpu-slice profile (e.g. "
                                     "dgx-h100, tpu-v5p-slice)%s",
                     name, p->kind[0] == 'a' ? "an accelerator profile describes a chip" : "a cost profile prices hardware",
                     p->kind[0] == 'a' ? "" : "; a cost profile goes with --cost");
        tc_profile_free(p);
        return st;
    }
    uint32_t nodes = 1;
    bool ib_sharp = false;
    char transport[16] = "", nic_path[8] = "", seed[24] = "";
    char calib[200] = ""; /* net_lat= and net_eff= as given, for the Clos spec to check */
    const char *dims = NULL;
    char dimbuf[64];
    if (colon) {
        tc_spec sp;
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s:%s", name, colon + 1);
        st = tc_spec_parse(tmp, &sp, err);
        bool gpu = strcmp(p->kind, "gpu-node") == 0;
        for (int i = 0; st == TC_OK && i < sp.nkv; i++) {
            if (gpu && strcmp(sp.key[i], "nodes") == 0) {
                char *end;
                unsigned long v = strtoul(sp.val[i], &end, 10);
                if (*end || !isdigit((unsigned char)sp.val[i][0]) || v < 1 || v > (1u << 20))
                    st = tc_fail(err, TC_EINVAL, "preset %s: nodes='%s': expected a whole number from 1 to %u", name,
                                 sp.val[i], 1u << 20);
                nodes = (uint32_t)v;
            } else if (gpu && strcmp(sp.key[i], "sharp") == 0) {
                if (strcmp(sp.val[i], "0") && strcmp(sp.val[i], "1"))
                    st = tc_fail(err, TC_EINVAL, "preset %s: sharp='%s': accepted are 0 and 1 (1: the fabric switches "
                                                 "reduce, InfiniBand SHARP with NCCL's CollNet plugin enabled)",
                                 name, sp.val[i]);
                ib_sharp = strcmp(sp.val[i], "1") == 0;
            } else if (gpu && strcmp(sp.key[i], "transport") == 0) {
                if (strcmp(sp.val[i], "ib") && strcmp(sp.val[i], "efa") && strcmp(sp.val[i], "efa-sendrecv"))
                    st = tc_fail(err, TC_EINVAL, "preset %s: transport='%s': accepted are ib (InfiniBand, NCCL's "
                                                 "latencies), efa (AWS EFA as on p5, the aws-ofi-nccl plugin's) and "
                                                 "efa-sendrecv (as on p4d and p4de: Simple only)",
                                 name, sp.val[i]);
                snprintf(transport, sizeof transport, "%s", sp.val[i]);
            } else if (gpu && strcmp(sp.key[i], "nic_path") == 0) {
                if (!valid_nic_path(sp.val[i]))
                    st = tc_fail(err, TC_EINVAL, "preset %s: nic_path='%s': accepted are %s", name, sp.val[i], NIC_PATHS);
                else
                    snprintf(nic_path, sizeof nic_path, "%s", sp.val[i]);
            } else if (gpu && strcmp(sp.key[i], "seed") == 0) {
                /* the ECMP hash of the Clos (its spec's seed=) */
                size_t n = strlen(sp.val[i]);
                if (n == 0 || n >= sizeof seed || strspn(sp.val[i], "0123456789") != n)
                    st = tc_fail(err, TC_EINVAL, "preset %s: seed='%s': expected a non-negative integer below 2^64, "
                                                 "e.g. seed=7 (the Clos's ECMP hash, as the spec's seed=)",
                                 name, sp.val[i]);
                else
                    snprintf(seed, sizeof seed, "%s", sp.val[i]);
            } else if (gpu && (strcmp(sp.key[i], "net_lat") == 0 || strcmp(sp.key[i], "net_eff") == 0 ||
                               strcmp(sp.key[i], "p2p_bw") == 0 || strcmp(sp.key[i], "p2p_net_bw") == 0)) {
                /* a calibration of the NICs' transport or of the
                 * point-to-point channels (nccl-tests --fit) */
                size_t used = strlen(calib);
                int w = snprintf(calib + used, sizeof calib - used, ",%s=%s", sp.key[i], sp.val[i]);
                if (w < 0 || (size_t)w >= sizeof calib - used)
                    st = tc_fail(err, TC_EINVAL, "preset %s: %s='%s': too long", name, sp.key[i], sp.val[i]);
            } else if (!gpu && strcmp(sp.key[i], "dims") == 0) {
                snprintf(dimbuf, sizeof dimbuf, "%s", sp.val[i]);
                dims = dimbuf;
            } else {
                st = tc_fail(err, TC_EINVAL, "preset %s: unknown key '%s': a %s preset takes %s", name, sp.key[i], p->kind,
                             gpu ? "nodes=N, sharp=0|1, transport=ib|efa|efa-sendrecv, nic_path=pix|pxb|pxn|phb|sys, "
                                   "seed=S, net_lat=LL/LL128/SIMPLE, net_eff=F, p2p_bw=RATE, p2p_net_bw=RATE"
                                 : "dims=AxBxC");
            }
        }
    }
    if (st == TC_OK)
        st = strcmp(p->kind, "gpu-node") == 0 ? expand_gpu_node(p, nodes, ib_sharp, transport[0] ? transport : NULL,
                                                              nic_path[0] ? nic_path : NULL, seed[0] ? seed : NULL,
                                                              calib, spec, len, err)
                                              : expand_tpu(p, dims, spec, len, err);
    if (st == TC_OK) {
        /* The spec must build: a bad profile value is named here, not later. */
        tc_topo *t = NULL;
        st = tc_topo_build(spec, &t, err);
        tc_topo_free(t);
    }
    if (st) {
        tc_profile_free(p);
        return st;
    }
    *prof = p;
    return TC_OK;
}
