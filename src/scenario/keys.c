/*
 * keys.c - the scenario's key table: every key by its path, the commands it
 * applies to, how its value is read from JSON and written back canonically.
 * Flags (options.c) set keys through the same readers, so a flag and a key
 * can never disagree on what a value means.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "scenario/scenario_int.h"
#include "scenario/keys.h"
#include "topocc/cluster.h"
#include "topocc/compress.h"
#include "topocc/cost.h"
#include "topocc/trainiter.h"

/* ---- readers of one value ---- */

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static tc_status wrong(const json_t *v, const char *where, const char *expected, tc_err *err)
{
    return tc_fail(err, TC_EINVAL, "%s: expected %s, got %s", where, expected, type_name(v));
}

typedef enum { U_PLAIN, U_SIZE, U_RATE, U_TIME } unit_kind;

/* A number, or a string with its unit ("64MiB", "400Gbps", "1us"). */
static tc_status num_of(const json_t *v, unit_kind u, const char *where, double *out, tc_err *err)
{
    static const char *what[] = {"a number", "a size (bytes, or a string such as \"64MiB\")",
                                 "a rate (bytes/s, or a string such as \"400Gbps\")",
                                 "a time (seconds, or a string such as \"1us\")"};
    if (json_is_number(v)) {
        *out = json_number_value(v);
        if (!isfinite(*out))
            return tc_fail(err, TC_EINVAL, "%s: expected a finite number", where);
        return TC_OK;
    }
    if (!json_is_string(v))
        return wrong(v, where, what[u], err);
    const char *s = json_string_value(v);
    tc_err e2;
    tc_status st = TC_OK;
    if (u == U_SIZE)
        st = tc_parse_size(s, out, &e2);
    else if (u == U_RATE)
        st = tc_parse_rate(s, out, &e2);
    else if (u == U_TIME)
        st = tc_parse_time(s, out, &e2);
    else {
        char *end;
        *out = strtod(s, &end);
        if (end == s || *end || !isfinite(*out))
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not a number", where, s);
    }
    if (st)
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    return TC_OK;
}

static tc_status num_in(const json_t *v, unit_kind u, double lo, double hi, bool lo_open, const char *where,
                        double *out, tc_err *err)
{
    tc_status st = num_of(v, u, where, out, err);
    if (st)
        return st;
    if ((lo_open ? !(*out > lo) : !(*out >= lo)) || *out > hi)
        return tc_fail(err, TC_EINVAL, "%s: %g is out of range: expected %s %g and at most %g", where, *out,
                       lo_open ? "above" : "at least", lo, hi);
    return TC_OK;
}

/* An integer (a JSON integer, or a string of digits) in [lo, hi]. */
static tc_status int_in(const json_t *v, uint64_t lo, uint64_t hi, const char *where, uint64_t *out, tc_err *err)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v) && isdigit((unsigned char)json_string_value(v)[0])) {
        char *end;
        errno = 0;
        *out = strtoull(json_string_value(v), &end, 10);
        if (*end)
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not an integer", where, json_string_value(v));
        if (errno == ERANGE)
            return tc_fail(err, TC_EINVAL, "%s: '%.30s' is out of range: expected %llu to %llu", where,
                           json_string_value(v), (unsigned long long)lo, (unsigned long long)hi);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) && json_real_value(v) >= 0 &&
               json_real_value(v) < 1.8e19) {
        *out = (uint64_t)json_real_value(v);
    } else if (json_is_number(v) && json_number_value(v) < 0) {
        return tc_fail(err, TC_EINVAL, "%s: %g is negative: expected an integer of at least %llu", where,
                       json_number_value(v), (unsigned long long)lo);
    } else if (json_is_string(v)) {
        /* as the command line gives it: say what is wrong with the text */
        const char *t = json_string_value(v);
        char *end;
        double x = strtod(t, &end);
        if (end != t && !*end && x < 0)
            return tc_fail(err, TC_EINVAL, "%s: '%.30s' is negative: expected an integer of at least %llu", where, t,
                           (unsigned long long)lo);
        return tc_fail(err, TC_EINVAL, "%s: '%.30s' is not an integer", where, t);
    } else {
        return wrong(v, where, "a non-negative integer", err);
    }
    if (*out < lo || *out > hi)
        return tc_fail(err, TC_EINVAL, "%s: %llu is out of range: expected %llu to %llu", where,
                       (unsigned long long)*out, (unsigned long long)lo, (unsigned long long)hi);
    return TC_OK;
}

static tc_status str_of(const json_t *v, const char *where, char *dst, size_t cap, tc_err *err)
{
    if (!json_is_string(v))
        return wrong(v, where, "a string", err);
    const char *s = json_string_value(v);
    if (strlen(s) >= cap)
        return tc_fail(err, TC_EINVAL, "%s: '%.40s...' is too long (at most %zu characters)", where, s, cap - 1);
    if (!*s)
        return tc_fail(err, TC_EINVAL, "%s: expected a non-empty string", where);
    snprintf(dst, cap, "%s", s);
    return TC_OK;
}

static tc_status bool_of(const json_t *v, const char *where, bool *out, tc_err *err)
{
    if (!json_is_boolean(v))
        return wrong(v, where, "true or false", err);
    *out = json_is_true(v);
    return TC_OK;
}

static tc_status enum_of(const json_t *v, const char *where, const char *const *names, int n, int *out, tc_err *err)
{
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        if (json_is_string(v) && strcmp(json_string_value(v), names[i]) == 0) {
            *out = i;
            return TC_OK;
        }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    if (!json_is_string(v))
        return wrong(v, where, "a string", err);
    return tc_fail(err, TC_EINVAL, "%s: unknown value '%s': accepted are %s", where, json_string_value(v), list);
}

/* A list key accepts a list, or one value standing for a list of one. */
static size_t list_len(const json_t *v)
{
    return json_is_array(v) ? json_array_size(v) : 1;
}

static const json_t *list_get(const json_t *v, size_t i)
{
    return json_is_array(v) ? json_array_get(v, i) : v;
}

static tc_status list_cap(const json_t *v, size_t min, size_t max, const char *where, tc_err *err)
{
    if (json_is_array(v) && json_array_size(v) < min)
        return tc_fail(err, TC_EINVAL, "%s: expected at least one entry", where);
    if (json_is_array(v) && json_array_size(v) > max)
        return tc_fail(err, TC_EINVAL, "%s: %zu entries, at most %zu", where, json_array_size(v), max);
    return TC_OK;
}

#define WHERE_I(buf, where, i) snprintf(buf, sizeof buf, "%s[%zu]", where, i)

static tc_status strings_of(const json_t *v, const char *where, char *dst, size_t cap, size_t max, int *n,
                            tc_err *err)
{
    tc_status st = list_cap(v, 1, max, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        st = str_of(list_get(v, i), w, dst + i * cap, cap, err);
    }
    if (st == TC_OK)
        *n = (int)list_len(v);
    return st;
}

/* ---- the keys ---- */

static const char *routing_names[] = {"default", "ecmp", "dmodk", "dor", "dor-positive", "detour", "line", "direct"};
static const char *mode_names[] = {"formula", "steps", "flow"};
static const char *multipath_names[] = {"route", "spray"};
/* In tc_flow_deps order. */
static const char *deps_names[] = {"auto", "rendezvous", "fifo", "recv"};

#define SET(name) static tc_status name(tc_scenario *s, const json_t *v, const char *where, tc_err *err)
#define GET(name) static json_t *name(const tc_scenario *s)

SET(set_topo)
{
    return strings_of(v, where, s->topo[0], sizeof s->topo[0], TC_SCN_MAX_TOPOS, &s->ntopo, err);
}
GET(get_topo)
{
    json_t *a = json_array();
    for (int i = 0; i < s->ntopo; i++)
        json_array_append_new(a, json_string(s->topo[i]));
    return a;
}

SET(set_preset)
{
    /* [] is a resolved scenario's: its presets are in network.topo. */
    s->npreset_at = 0;
    if (json_is_array(v) && json_array_size(v) == 0) {
        s->npreset = 0;
        return TC_OK;
    }
    return strings_of(v, where, s->preset[0], sizeof s->preset[0], TC_SCN_MAX_TOPOS, &s->npreset, err);
}
GET(get_preset)
{
    json_t *a = json_array();
    for (int i = 0; i < s->npreset; i++)
        json_array_append_new(a, json_string(s->preset[i]));
    return a;
}

/* For each topology of network.topo, the preset it came from, or null
 * (a spec): written by resolving, so that a --profiles flag can expand
 * the presets again. */
SET(set_topo_preset)
{
    if (json_is_null(v)) {
        s->ntopo_preset = 0;
        return TC_OK;
    }
    tc_status st = list_cap(v, 1, TC_SCN_MAX_TOPOS, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        const json_t *x = list_get(v, i);
        if (json_is_null(x))
            s->topo_preset[i][0] = '\0';
        else if (!json_is_string(x))
            st = wrong(x, w, "a preset NAME[:nodes=N] or null (a topology given as a spec)", err);
        else
            st = str_of(x, w, s->topo_preset[i], sizeof s->topo_preset[i], err);
    }
    if (st == TC_OK)
        s->ntopo_preset = (int)list_len(v);
    return st;
}
GET(get_topo_preset)
{
    json_t *a = json_array();
    for (int i = 0; i < s->ntopo_preset; i++)
        json_array_append_new(a, s->topo_preset[i][0] ? json_string(s->topo_preset[i]) : json_null());
    return a;
}

SET(set_profiles_dir)
{
    if (json_is_null(v)) {
        s->profiles_dir[0] = '\0';
        return TC_OK;
    }
    return str_of(v, where, s->profiles_dir, sizeof s->profiles_dir, err);
}
GET(get_profiles_dir)
{
    return s->profiles_dir[0] ? json_string(s->profiles_dir) : json_null();
}

/* A key whose value is a JSON object kept as compact text in *slot (owned;
 * NULL: none, null in the scenario); what names the object in messages. */
static tc_status set_object_text(const json_t *v, const char *where, const char *what, char **slot, tc_err *err)
{
    if (json_is_null(v)) {
        free(*slot);
        *slot = NULL;
        return TC_OK;
    }
    if (!json_is_object(v))
        return tc_fail(err, TC_EINVAL, "%s: expected an object of %s", where, what);
    char *txt = tc_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!txt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    free(*slot);
    *slot = txt;
    return TC_OK;
}
static json_t *get_object_text(const char *text)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    return o ? o : json_null();
}

/* The profiles used, by content: kept as they are (the presets that read
 * them were expanded into network.topo). */
SET(set_profiles)
{
    return set_object_text(v, where, "profiles by name", &s->profiles, err);
}
GET(get_profiles)
{
    return get_object_text(s->profiles);
}
/* Presets are expanded and cleared by resolving (which forgets that the
 * key was given): a resolved scenario has its topologies in network.topo. */
static bool has_presets(const tc_scenario *s)
{
    return s->npreset > 0;
}
static bool has_topo_preset(const tc_scenario *s)
{
    return s->ntopo_preset > 0;
}
/* compress reads an accelerator profile (compress.accel) too. */
static bool has_profiles(const tc_scenario *s)
{
    return s->profiles != NULL || s->npreset > 0 || s->command == TC_CMD_COMPRESS;
}

SET(set_names)
{
    tc_status st = strings_of(v, where, s->names[0], sizeof s->names[0], TC_SCN_MAX_TOPOS, &s->nnames, err);
    for (int i = 0; st == TC_OK && i < s->nnames; i++)
        if (strchr(s->names[i], ','))
            st = tc_fail(err, TC_EINVAL, "%s[%d]: a name cannot hold a comma", where, i);
    return st;
}
GET(get_names)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nnames; i++)
        json_array_append_new(a, json_string(s->names[i]));
    return a;
}

SET(set_dtype)
{
    char d[sizeof s->dtype];
    tc_status st = str_of(v, where, d, sizeof d, err);
    if (st == TC_OK && !tc_dtype_size(d))
        st = tc_fail(err, TC_EINVAL,
                     "%s: unknown element type '%s': accepted are float32, fp16, bf16, fp8, fp8e5m2, int8, uint8, "
                     "int32, uint32, int64, uint64, fp64",
                     where, d);
    if (st == TC_OK)
        snprintf(s->dtype, sizeof s->dtype, "%s", d);
    return st;
}
GET(get_dtype)
{
    return json_string(s->dtype[0] ? s->dtype : "float32");
}

SET(set_redop)
{
    char d[sizeof s->redop];
    tc_redop op;
    tc_status st = str_of(v, where, d, sizeof d, err);
    if (st == TC_OK && !tc_redop_parse(d, &op))
        st = tc_fail(err, TC_EINVAL, "%s: unknown reduction operator '%s': accepted are sum, prod, min, max, avg",
                     where, d);
    if (st == TC_OK)
        snprintf(s->redop, sizeof s->redop, "%s", d);
    return st;
}
GET(get_redop)
{
    return json_string(s->redop[0] ? s->redop : "sum");
}

SET(set_alphas)
{
    tc_status st = list_cap(v, 0, TC_SCN_MAX_ALPHAS, where, err);
    size_t n = st ? 0 : list_len(v);
    double a[TC_SCN_MAX_ALPHAS];
    char w[256];
    for (size_t i = 0; i < n && st == TC_OK; i++) {
        WHERE_I(w, where, i);
        st = num_in(list_get(v, i), U_TIME, 0, 1, false, w, &a[i], err);
        for (size_t j = 0; st == TC_OK && j < i; j++)
            if (a[j] == a[i]) {
                char b[32];
                st = tc_fail(err, TC_EINVAL, "%s: alpha %s listed twice", w, tc_fmt_time(a[i], b, sizeof b));
            }
    }
    if (st)
        return st;
    memcpy(s->alphas, a, n * sizeof *a);
    s->nalphas = (int)n;
    return TC_OK;
}
GET(get_alphas)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nalphas; i++)
        json_array_append_new(a, json_real(s->alphas[i]));
    return a;
}

SET(set_equalize)
{
    if (json_is_null(v)) {
        s->equalize_Bps = 0;
        return TC_OK;
    }
    return num_in(v, U_RATE, 0.125, 1e18, false, where, &s->equalize_Bps, err); /* 1 bit/s to 1e18 B/s, as rates parse */
}
GET(get_equalize)
{
    return s->equalize_Bps > 0 ? json_real(s->equalize_Bps) : json_null();
}

/* A cost profile's name (or a file's path, before resolving). */
SET(set_cost_profile)
{
    if (json_is_null(v)) {
        s->cost_profile[0] = '\0';
        return TC_OK;
    }
    return str_of(v, where, s->cost_profile, sizeof s->cost_profile, err);
}
GET(get_cost_profile)
{
    return s->cost_profile[0] ? json_string(s->cost_profile) : json_null();
}
/* Dollars: a number, or a string such as "5M" (tc_parse_usd). */
SET(set_equalize_cost)
{
    if (json_is_null(v)) {
        s->equalize_cost_usd = 0;
        return TC_OK;
    }
    if (json_is_string(v)) {
        tc_err e2;
        if (tc_parse_usd(json_string_value(v), &s->equalize_cost_usd, &e2))
            return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
        return TC_OK;
    }
    return num_in(v, U_PLAIN, 0, 1e15, true, where, &s->equalize_cost_usd, err);
}
GET(get_equalize_cost)
{
    return s->equalize_cost_usd > 0 ? json_real(s->equalize_cost_usd) : json_null();
}
static bool has_cost(const tc_scenario *s)
{
    return s->cost_profile[0] != '\0';
}

/* "link:ID=FACTOR" or {"link": ID, "factor": F}. */
static tc_status degrade_of(const json_t *v, const char *where, tc_scn_degrade *d, tc_err *err)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        unsigned long id;
        double f;
        int used = 0;
        if (strncmp(s, "link:", 5) != 0 || !isdigit((unsigned char)s[5]) ||
            sscanf(s, "link:%lu=%lf%n", &id, &f, &used) != 2 || s[used] != '\0' || id > UINT32_MAX)
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not link:ID=FACTOR, e.g. link:17=0.5 (IDs from topocc topo "
                                           "SPEC --links)",
                           where, s);
        d->link = (uint32_t)id;
        d->factor = f;
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) if (strcmp(k, "link") && strcmp(k, "factor")) return tc_fail(
            err, TC_EINVAL, "%s: unknown key '%s': accepted are link, factor", where, k);
        uint64_t id;
        char w[300];
        snprintf(w, sizeof w, "%s.link", where);
        tc_status st = int_in(json_object_get(v, "link") ? json_object_get(v, "link") : json_null(), 0, UINT32_MAX,
                              w, &id, err);
        if (st)
            return st;
        d->link = (uint32_t)id;
        snprintf(w, sizeof w, "%s.factor", where);
        if ((st = num_of(json_object_get(v, "factor") ? json_object_get(v, "factor") : json_null(), U_PLAIN, w,
                         &d->factor, err)))
            return st;
    } else {
        return wrong(v, where, "link:ID=FACTOR or {\"link\": ID, \"factor\": F}", err);
    }
    if (!(d->factor >= 1e-9) || d->factor > 1e6)
        return tc_fail(err, TC_EINVAL, "%s: the factor must be from 1e-9 to 1e6 (0.5 halves the bandwidth; "
                                       "for a failed link give --fail link:ID, which routes around it)",
                       where);
    return TC_OK;
}
SET(set_degrade)
{
    tc_status st = list_cap(v, 0, TC_SCN_MAX_DEGRADE, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        st = degrade_of(list_get(v, i), w, &s->degrade[i], err);
        /* one factor a link: repeated factors would multiply, past the
         * range one factor is held to */
        for (size_t j = 0; st == TC_OK && j < i; j++)
            if (s->degrade[j].link == s->degrade[i].link)
                st = tc_fail(err, TC_EINVAL, "%s: link %u is degraded twice (entries %zu and %zu): give one factor a "
                                             "link, the product of the two",
                             where, s->degrade[i].link, j, i);
    }
    if (st == TC_OK)
        s->ndegrade = (int)list_len(v);
    return st;
}
GET(get_degrade)
{
    json_t *a = json_array();
    for (int i = 0; i < s->ndegrade; i++)
        json_array_append_new(a, json_pack("{s:I, s:f}", "link", (json_int_t)s->degrade[i].link, "factor",
                                           s->degrade[i].factor));
    return a;
}

SET(set_routing)
{
    int k;
    tc_status st = enum_of(v, where, routing_names, 8, &k, err);
    if (st == TC_OK)
        snprintf(s->routing, sizeof s->routing, "%s", routing_names[k]);
    return st;
}
GET(get_routing)
{
    return json_string(s->routing);
}

SET(set_fail)
{
    tc_status st = list_cap(v, 0, TC_SCN_MAX_FAIL, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        const json_t *x = list_get(v, i);
        if (!json_is_string(x))
            return wrong(x, w, "KIND:ID (link, dlink, switch, host, node), e.g. link:17", err);
        if ((st = tc_fail_item_parse(json_string_value(x), &s->fail[i], err))) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            return tc_fail(err, st, "%s: %s", w, m);
        }
    }
    if (st == TC_OK)
        s->nfail = (int)list_len(v);
    return st;
}
GET(get_fail)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nfail; i++) {
        char b[48];
        snprintf(b, sizeof b, "%s:%u", tc_fail_kind_name(s->fail[i].kind), s->fail[i].id);
        json_array_append_new(a, json_string(b));
    }
    return a;
}

SET(set_fail_random)
{
    if (json_is_null(v)) {
        s->fail_random[0] = '\0';
        return TC_OK;
    }
    if (!json_is_string(v))
        return wrong(v, where, "links=K|F%,switches=K,seed=S", err);
    tc_fail_random r;
    tc_err e2;
    tc_status st = tc_fail_random_parse(json_string_value(v), &r, &e2);
    if (st) {
        /* The parser names the flag; a scenario key (a file's, a sweep
         * point's) is named by where instead, as every key is. */
        static const char flag[] = "--fail-random";
        const char *m = e2.msg;
        if (strcmp(where, flag) == 0)
            return tc_fail(err, st, "%s", m);
        if (strncmp(m, flag, sizeof flag - 1) == 0) {
            m += sizeof flag - 1;
            m += *m == ':';
            m += strspn(m, " ");
        }
        return tc_fail(err, st, "%s: %s", where, m);
    }
    tc_fail_random_format(&r, s->fail_random, sizeof s->fail_random);
    return TC_OK;
}
GET(get_fail_random)
{
    return s->fail_random[0] ? json_string(s->fail_random) : json_null();
}

SET(set_links)
{
    return bool_of(v, where, &s->links, err);
}
GET(get_links)
{
    return json_boolean(s->links);
}

SET(set_ranks)
{
    uint64_t r = 0;
    tc_status st = json_is_null(v) ? TC_OK : int_in(v, 1, UINT32_MAX, where, &r, err);
    if (st == TC_OK)
        s->job.ranks = (uint32_t)r;
    return st;
}
GET(get_ranks)
{
    return s->job.ranks ? json_integer(s->job.ranks) : json_null();
}

SET(set_place)
{
    static const char *names[TC_PLACE_POLICIES] = {"first", "random", "list", "packed", "slice"};
    int k;
    tc_status st = enum_of(v, where, names, TC_PLACE_POLICIES, &k, err);
    if (st == TC_OK)
        s->job.policy = (tc_place_policy)k;
    return st;
}
GET(get_place)
{
    return json_string(tc_place_name(s->job.policy));
}

SET(set_seed)
{
    return int_in(v, 0, INT64_MAX, where, &s->job.seed, err);
}
GET(get_seed)
{
    return json_integer((json_int_t)s->job.seed);
}

/* A list of endpoints, or a string of ranges "0-63,128". */
static tc_status endpoints_of(const json_t *v, const char *where, uint32_t **out, uint32_t *n, tc_err *err)
{
    if (json_is_string(v)) {
        tc_err e2;
        tc_status st = tc_place_parse_ranges(json_string_value(v), out, n, &e2);
        return st ? tc_fail(err, st, "%s: %s", where, e2.msg) : TC_OK;
    }
    if (!json_is_array(v) || json_array_size(v) == 0)
        return wrong(v, where, "a non-empty list of endpoints or a string of ranges such as \"0-63\"", err);
    size_t k = json_array_size(v);
    if (k > TC_PLACE_MAX_ENDPOINTS)
        return tc_fail(err, TC_EINVAL, "%s: more than %u endpoints", where, TC_PLACE_MAX_ENDPOINTS);
    uint32_t *m = malloc(k * sizeof *m);
    if (!m)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    char w[256];
    for (size_t i = 0; i < k; i++) {
        uint64_t x;
        WHERE_I(w, where, i);
        tc_status st = int_in(json_array_get(v, i), 0, UINT32_MAX - 1, w, &x, err);
        if (st) {
            free(m);
            return st;
        }
        m[i] = (uint32_t)x;
    }
    *out = m;
    *n = (uint32_t)k;
    return TC_OK;
}
static json_t *endpoints_json(const uint32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}
SET(set_endpoints)
{
    uint32_t *m = NULL, n = 0;
    tc_status st = json_is_null(v) ? TC_OK : endpoints_of(v, where, &m, &n, err);
    if (st)
        return st;
    free(s->job.endpoints);
    s->job.endpoints = m;
    s->job.nendpoints = n;
    return TC_OK;
}
GET(get_endpoints)
{
    return s->job.nendpoints ? endpoints_json(s->job.endpoints, s->job.nendpoints) : json_null();
}
SET(set_occupancy)
{
    double f;
    tc_status st = num_of(v, U_PLAIN, where, &f, err);
    if (st == TC_OK && !(f >= 0 && f < 1))
        return tc_fail(err, TC_EINVAL, "%s: %g is out of range: expected 0 <= F < 1 (the fraction of the cluster "
                                       "other jobs hold)",
                       where, f);
    if (st == TC_OK)
        s->job.occupancy = f;
    return st;
}
GET(get_occupancy)
{
    return json_real(s->job.occupancy);
}
SET(set_slice)
{
    char buf[256];
    tc_err e2;
    tc_status st = str_of(v, where, buf, sizeof buf, err);
    if (st == TC_OK && tc_place_slice_parse(buf, &s->job, &e2))
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    return st;
}
GET(get_slice)
{
    char buf[256];
    return json_string(tc_place_slice_format(&s->job, buf, sizeof buf));
}

SET(set_group)
{
    if (json_is_null(v)) {
        memset(&s->group, 0, sizeof s->group);
        return TC_OK;
    }
    if (!json_is_string(v))
        return wrong(v, where, "a string (node, stride=S, block=K, axes=LIST)", err);
    tc_err e2;
    if (tc_group_parse(json_string_value(v), &s->group, &e2))
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    return TC_OK;
}
GET(get_group)
{
    char b[48];
    return s->group.kind == TC_GROUP_NONE ? json_null() : json_string(tc_group_format(&s->group, b, sizeof b));
}

SET(set_ops)
{
    tc_status st = list_cap(v, 1, TC_OP_COUNT, where, err);
    char w[256];
    int n = 0;
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        const json_t *x = list_get(v, i);
        tc_err e2;
        if (!json_is_string(x))
            st = wrong(x, w, "an operation name such as \"allreduce\"", err);
        else if (tc_op_parse(json_string_value(x), &s->ops[n], &e2))
            st = tc_fail(err, TC_EINVAL, "%s: %s", w, e2.msg);
        for (int j = 0; st == TC_OK && j < n; j++)
            if (s->ops[j] == s->ops[n])
                st = tc_fail(err, TC_EINVAL, "%s: operation '%s' listed twice", w, tc_op_name(s->ops[n]));
        n++;
    }
    if (st == TC_OK)
        s->nops = n;
    return st;
}
GET(get_ops)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nops; i++)
        json_array_append_new(a, json_string(tc_op_name(s->ops[i])));
    return a;
}

SET(set_algos)
{
    char a[TC_SCN_MAX_ALGOS][sizeof s->algos[0]];
    int n = 0;
    tc_status st = strings_of(v, where, a[0], sizeof a[0], TC_SCN_MAX_ALGOS, &n, err);
    for (int i = 0; st == TC_OK && i < n; i++)
        for (int j = 0; st == TC_OK && j < i; j++)
            if (strcmp(a[j], a[i]) == 0)
                st = tc_fail(err, TC_EINVAL, "%s[%d]: algorithm '%s' listed twice", where, i, a[i]);
    if (st == TC_OK) {
        memcpy(s->algos, a, (size_t)n * sizeof a[0]);
        s->nalgos = n;
    }
    return st;
}
GET(get_algos)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nalgos; i++)
        json_array_append_new(a, json_string(s->algos[i]));
    return a;
}

/* "MIN:MAX[:FACTOR]": MIN, MIN * FACTOR, ... up to MAX (factor 4 by default),
 * each rounded down to whole bytes: as recorded in the scenario, which
 * takes whole bytes only, so that it replays. The run rounds a size down to
 * whole elements, so it runs the same sizes as from the unrounded ones. */
tc_status tc_scn_size_range(const char *s, double **out, size_t *n, tc_err *err)
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%.40s': expected MIN:MAX[:FACTOR], e.g. 1KiB:4GiB:4", s);
    snprintf(buf, sizeof buf, "%s", s);
    char *parts[3] = {buf, NULL, NULL};
    int np = 1;
    for (char *c = buf; *c; c++)
        if (*c == ':') {
            if (np == 3)
                return tc_fail(err, TC_EINVAL, "invalid sizes '%s': expected MIN:MAX[:FACTOR], e.g. 1KiB:4GiB:4", s);
            *c = '\0';
            parts[np++] = c + 1;
        }
    double lo, hi, factor = 4;
    tc_status st = tc_parse_size(parts[0], &lo, err);
    if (st)
        return st;
    hi = lo;
    if (np >= 2 && (st = tc_parse_size(parts[1], &hi, err)))
        return st;
    if (np == 3) {
        char *end;
        factor = strtod(parts[2], &end);
        if (end == parts[2] || *end || !(factor > 1.0001) || factor > 1e6)
            return tc_fail(err, TC_EINVAL, "invalid size factor '%s': expected a number above 1.0001 and at most 1e6, e.g. 4",
                           parts[2]);
    }
    if (hi < lo)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': the maximum is below the minimum", s);
    if (lo < 1)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': the minimum is below one byte (sizes are whole bytes)", s);
    size_t cnt = 0;
    for (double x = lo; x <= hi * (1 + 1e-12) && cnt <= TC_SCN_MAX_SIZES; x *= factor)
        cnt++;
    if (cnt > TC_SCN_MAX_SIZES)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': more than %d sizes", s, TC_SCN_MAX_SIZES);
    double *v = malloc(cnt * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    double x = lo;
    for (size_t i = 0; i < cnt; i++, x *= factor)
        v[i] = floor(x);
    *out = v;
    *n = cnt;
    return TC_OK;
}

SET(set_sizes)
{
    double *vals = NULL;
    size_t n = 0;
    tc_status st;
    if (json_is_string(v) && strchr(json_string_value(v), ':')) {
        tc_err e2;
        if ((st = tc_scn_size_range(json_string_value(v), &vals, &n, &e2)))
            return tc_fail(err, st, "%s: %s", where, e2.msg);
    } else {
        if ((st = list_cap(v, 1, TC_SCN_MAX_SIZES, where, err)))
            return st;
        n = list_len(v);
        if (n == 0)
            return tc_fail(err, TC_EINVAL, "%s: expected at least one size", where);
        vals = malloc(n * sizeof *vals);
        if (!vals)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        char w[256];
        for (size_t i = 0; i < n && st == TC_OK; i++) {
            WHERE_I(w, where, i);
            /* a range is the whole value, never one size of a list */
            const json_t *e = list_get(v, i);
            if (json_is_string(e) && strchr(json_string_value(e), ':')) {
                const char *r = json_string_value(e);
                bool ranges = s->command == TC_CMD_COLLECTIVE || s->command == TC_CMD_COMPARE; /* --sizes */
                if (strncmp(where, "--", 2) != 0)
                    st = tc_fail(err, TC_EINVAL, "%s: '%.60s' is a range of sizes, which is the whole value "
                                                 "(\"sizes\": \"%.60s\"), not an element of a list",
                                 w, r, r);
                else if (ranges)
                    st = tc_fail(err, TC_EINVAL, "%s: '%.60s' is a range of sizes: give it as --sizes %.60s (--size "
                                                 "takes one size)",
                                 where, r, r);
                else
                    st = tc_fail(err, TC_EINVAL, "%s: '%.60s' is a range of sizes: --size takes one size", where, r);
                break;
            }
            st = num_in(e, U_SIZE, 0, TC_MAX_BYTES, true, w, &vals[i], err);
            if (st == TC_OK && vals[i] != floor(vals[i]))
                st = tc_fail(err, TC_EINVAL, "%s: %.17g is not a whole number of bytes", w, vals[i]);
            /* as an operation, algorithm or alpha listed twice: one row each */
            for (size_t j = 0; j < i && st == TC_OK; j++)
                if (vals[j] == vals[i]) {
                    char b[32];
                    st = tc_fail(err, TC_EINVAL, "%s: size %s listed twice (also [%zu]): give each size once", w,
                                 tc_fmt_size(vals[i], b, sizeof b), j);
                }
        }
        if (st) {
            free(vals);
            return st;
        }
    }
    free(s->sizes);
    s->sizes = vals;
    s->nsizes = n;
    return TC_OK;
}
GET(get_sizes)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nsizes; i++)
        json_array_append_new(a, json_real(s->sizes[i]));
    return a;
}

SET(set_phases)
{
    return bool_of(v, where, &s->phases, err);
}
GET(get_phases)
{
    return json_boolean(s->phases);
}

SET(set_mode)
{
    int k;
    tc_status st = enum_of(v, where, mode_names, 3, &k, err);
    if (st == TC_OK)
        s->mode = (tc_mode)k;
    return st;
}
GET(get_mode)
{
    return json_string(mode_names[s->mode]);
}

SET(set_rate_cap)
{
    if (json_is_null(v)) {
        s->rate_cap_Bps = 0;
        return TC_OK;
    }
    return num_in(v, U_RATE, 0.125, 1e18, false, where, &s->rate_cap_Bps, err); /* as rates parse */
}
GET(get_rate_cap)
{
    return s->rate_cap_Bps > 0 ? json_real(s->rate_cap_Bps) : json_null();
}

SET(set_multipath)
{
    int k;
    tc_status st = enum_of(v, where, multipath_names, 2, &k, err);
    if (st == TC_OK)
        s->multipath = (tc_multipath)k;
    return st;
}
GET(get_multipath)
{
    return json_string(multipath_names[s->multipath]);
}

SET(set_deps)
{
    int k;
    tc_status st = enum_of(v, where, deps_names, 4, &k, err);
    if (st == TC_OK)
        s->deps = (tc_flow_deps)k;
    return st;
}
GET(get_deps)
{
    return json_string(deps_names[s->deps]);
}

/* Above 0: the library reads 0 as its default, and a limit of 0 would be
 * rendezvous for every message that carries data (--deps rendezvous). */
SET(set_eager_limit)
{
    return num_in(v, U_SIZE, 0, TC_MAX_BYTES, true, where, &s->eager_limit_bytes, err);
}
GET(get_eager_limit)
{
    return json_real(s->eager_limit_bytes);
}

SET(set_budget)
{
    return int_in(v, 1, UINT64_MAX / 2, where, &s->event_budget, err);
}
GET(get_budget)
{
    return json_integer((json_int_t)s->event_budget);
}

SET(set_skip)
{
    return bool_of(v, where, &s->skip, err);
}
GET(get_skip)
{
    return json_boolean(s->skip);
}

SET(set_bounds)
{
    return bool_of(v, where, &s->flow_bounds, err);
}
GET(get_bounds)
{
    return json_boolean(s->flow_bounds);
}

SET(set_trace)
{
    if (json_is_null(v)) {
        s->trace[0] = '\0';
        return TC_OK;
    }
    return str_of(v, where, s->trace, sizeof s->trace, err);
}
GET(get_trace)
{
    return s->trace[0] ? json_string(s->trace) : json_null();
}

SET(set_codecs)
{
    return strings_of(v, where, s->codecs[0], sizeof s->codecs[0], TC_SCN_MAX_CODECS, &s->ncodecs, err);
}
GET(get_codecs)
{
    json_t *a = json_array();
    for (int i = 0; i < s->ncodecs; i++)
        json_array_append_new(a, json_string(s->codecs[i]));
    return a;
}

SET(set_model)
{
    return str_of(v, where, s->model, sizeof s->model, err);
}
GET(get_model)
{
    return json_string(s->model);
}

SET(set_accel)
{
    return str_of(v, where, s->accel, sizeof s->accel, err);
}
GET(get_accel)
{
    return json_string(s->accel);
}

SET(set_mfu)
{
    if (json_is_null(v)) {
        s->mfu = 0;
        return TC_OK;
    }
    return num_in(v, U_PLAIN, 0, 1, true, where, &s->mfu, err);
}
GET(get_mfu)
{
    return s->mfu > 0 ? json_real(s->mfu) : json_null();
}

SET(set_bucket)
{
    return num_in(v, U_SIZE, 1, TC_MAX_BYTES, false, where, &s->bucket_bytes, err);
}
GET(get_bucket)
{
    return json_real(s->bucket_bytes);
}

SET(set_offload)
{
    return bool_of(v, where, &s->offload, err);
}
GET(get_offload)
{
    return json_boolean(s->offload);
}

SET(set_sweep)
{
    return bool_of(v, where, &s->sweep_bw, err);
}
GET(get_sweep)
{
    return json_boolean(s->sweep_bw);
}

/* A fraction, or a percentage "85%"; null: 0 (the default rule). */
static tc_status accuracy_of(const json_t *v, const char *where, double *out, tc_err *err)
{
    if (json_is_null(v)) {
        *out = 0;
        return TC_OK;
    }
    double x;
    if (json_is_string(v)) {
        const char *t = json_string_value(v);
        char *end;
        x = strtod(t, &end);
        bool pct = *end == '%' && end[1] == '\0';
        if (end == t || (*end && !pct))
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not an accuracy: expected a fraction like 0.85 or a "
                                           "percentage like 85%%",
                           where, t);
        if (pct)
            x /= 100;
    } else {
        tc_status st = num_of(v, U_PLAIN, where, &x, err);
        if (st)
            return st;
    }
    if (!(x > 0) || x > 1)
        return tc_fail(err, TC_EINVAL, "%s: the accuracy must be in (0, 1] (or (0%%, 100%%])", where);
    *out = x;
    return TC_OK;
}
SET(set_target)
{
    return accuracy_of(v, where, &s->target_acc, err);
}
GET(get_target)
{
    return s->target_acc > 0 ? json_real(s->target_acc) : json_null();
}

/* "CODEC=VALUE" splits at the last '=' (the codec may hold '='). */
static bool split_last_eq(const char *s, char *name, size_t len, const char **val)
{
    const char *eq = strrchr(s, '=');
    if (!eq || eq == s || !eq[1] || (size_t)(eq - s) >= len)
        return false;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = '\0';
    *val = eq + 1;
    return true;
}

/* steps_ratio entries: "C=R" / "C=never" or {"codec": C, "ratio": R|null}.
 * An object is read key by key, so that what is wrong in it (a bad ratio
 * above all) is named as the flag's "C=R" names it. */
static tc_status ratio_of(const json_t *v, const char *where, tc_scn_codec_value *out, tc_err *err)
{
    static const char *const range = "the ratio must be a number above 0 and at most 1e6 (at least one step to the "
                                     "target: 1 / the baseline's steps), or 'never'";
    const char *val = NULL;
    const json_t *num = NULL;
    if (json_is_string(v)) {
        if (!split_last_eq(json_string_value(v), out->codec, sizeof out->codec, &val))
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not CODEC=RATIO, e.g. topk:ratio=0.01=1.3", where,
                           json_string_value(v));
    } else if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            if (strcmp(k, "codec") != 0 && strcmp(k, "ratio") != 0)
                return tc_fail(err, TC_EINVAL, "%s: unknown key '%.64s': accepted are codec and ratio "
                                               "({\"codec\": C, \"ratio\": R or null (never)})",
                               where, k);
        }
        const json_t *codec = json_object_get(v, "codec");
        if (!codec)
            return tc_fail(err, TC_EINVAL, "%s: no \"codec\": expected {\"codec\": C, \"ratio\": R or null (never)}",
                           where);
        if (!json_is_string(codec))
            return wrong(codec, where, "\"codec\" to be a codec's spec (a string, e.g. \"topk:ratio=0.01\")", err);
        num = json_object_get(v, "ratio");
        if (!num)
            return tc_fail(err, TC_EINVAL, "%s: no \"ratio\" for %.64s: expected a number above 0 and at most 1e6, or "
                                           "null (never)",
                           where, json_string_value(codec));
        snprintf(out->codec, sizeof out->codec, "%s", json_string_value(codec));
        if (json_is_null(num))
            val = "never";
        else if (json_is_string(num))
            val = json_string_value(num);
    } else {
        return wrong(v, where, "CODEC=RATIO or {\"codec\": C, \"ratio\": R or null (never)}", err);
    }
    if (val && strcmp(val, "never") == 0) {
        out->value = -1;
        return TC_OK;
    }
    double r = 0;
    char *end = NULL;
    if (val)
        r = strtod(val, &end);
    else if (json_is_number(num))
        r = json_number_value(num);
    /* the lower end is one step to the target, 1 / the baseline's steps:
     * compress checks it once it knows them */
    if ((val && (end == val || *end)) || (!val && !json_is_number(num)) || !(r > 0) || !isfinite(r) || r > 1e6) {
        if (val)
            return tc_fail(err, TC_EINVAL, "%s: %s; got '%.64s'", where, range, val);
        if (json_is_number(num))
            return tc_fail(err, TC_EINVAL, "%s: %s; got %.17g", where, range, r);
        return tc_fail(err, TC_EINVAL, "%s: %s; got %s", where, range, type_name(num));
    }
    out->value = r;
    return TC_OK;
}
SET(set_ratios)
{
    tc_status st = list_cap(v, 0, TC_SCN_MAX_CODECS, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        st = ratio_of(list_get(v, i), w, &s->steps_ratio[i], err);
    }
    if (st == TC_OK)
        s->nsteps_ratio = (int)list_len(v);
    return st;
}
GET(get_ratios)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nsteps_ratio; i++)
        json_array_append_new(a, json_pack("{s:s, s:o}", "codec", s->steps_ratio[i].codec, "ratio",
                                           s->steps_ratio[i].value < 0 ? json_null()
                                                                       : json_real(s->steps_ratio[i].value)));
    return a;
}

/* codec_throughput entries: "C=GB/s" (a bare number is GB/s) or {"codec": C, "Bps": B}. */
static tc_status thr_of(const json_t *v, const char *where, tc_scn_codec_value *out, tc_err *err)
{
    const char *val;
    if (json_is_string(v)) {
        if (!split_last_eq(json_string_value(v), out->codec, sizeof out->codec, &val))
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not CODEC=GB/s, e.g. topk=5 or powersgd:rank=4=20GB/s", where,
                           json_string_value(v));
        char *end;
        double b = strtod(val, &end);
        tc_err e2;
        if (end != val && *end == '\0')
            b *= 1e9;
        else if (tc_parse_rate(val, &b, &e2))
            return tc_fail(err, TC_EINVAL, "%s: '%s' is not a rate from 1bps to 1e18B/s, e.g. 20 (GB/s) or 20GB/s",
                           where, val);
        out->value = b;
    } else if (json_is_object(v) && json_is_string(json_object_get(v, "codec")) &&
               json_is_number(json_object_get(v, "Bps")) && json_object_size(v) == 2) {
        snprintf(out->codec, sizeof out->codec, "%s", json_string_value(json_object_get(v, "codec")));
        out->value = json_number_value(json_object_get(v, "Bps"));
    } else {
        return wrong(v, where, "CODEC=GB/s or {\"codec\": C, \"Bps\": B}", err);
    }
    /* tc_parse_rate's range: beyond it times and rates leave what a double
     * holds in sums and products */
    if (!(out->value >= 0.125 && out->value <= 1e18))
        return tc_fail(err, TC_EINVAL, "%s: the rate must be from 1bps to 1e18B/s (a bare number is GB/s: 1.25e-10 "
                                       "to 1e9)", where);
    return TC_OK;
}
SET(set_thr)
{
    tc_status st = list_cap(v, 0, TC_SCN_MAX_CODECS, where, err);
    char w[256];
    for (size_t i = 0; st == TC_OK && i < list_len(v); i++) {
        WHERE_I(w, where, i);
        st = thr_of(list_get(v, i), w, &s->throughput[i], err);
    }
    if (st == TC_OK)
        s->nthroughput = (int)list_len(v);
    return st;
}
GET(get_thr)
{
    json_t *a = json_array();
    for (int i = 0; i < s->nthroughput; i++)
        json_array_append_new(a, json_pack("{s:s, s:f}", "codec", s->throughput[i].codec, "Bps",
                                           s->throughput[i].value));
    return a;
}

SET(set_accuracy)
{
    tc_scn_clear_accuracy(s);
    if (json_is_null(v))
        return TC_OK;
    if (!json_is_object(v))
        return wrong(v, where, "an accuracy file's content (an object with curves) or null", err);
    return tc_acc_from_json(v, where, &s->accuracy_opts, &s->accuracy, &s->naccuracy, err);
}
GET(get_accuracy)
{
    if (!s->naccuracy)
        return json_null();
    return tc_acc_to_json(&s->accuracy_opts, s->accuracy, s->naccuracy);
}

/* ---- concurrent jobs (the jobs file, by content) ---- */

/* A job's endpoints: listed ("endpoints"), or N ranks ("ranks") placed by
 * a policy ("place", the grammar of --place without list; first when
 * absent) on the endpoints the jobs before it leave free, which the run
 * does (the scenario records the policy, deterministic given its seed). */
static tc_status job_place_of(const json_t *o, const char *where, tc_scn_job *j, tc_err *err)
{
    char w[320];
    tc_err e2;
    tc_status st;
    const json_t *eps = json_object_get(o, "endpoints"), *ranks = json_object_get(o, "ranks"),
                 *place = json_object_get(o, "place");
    memset(&j->place, 0, sizeof j->place);
    if (eps && (ranks || place))
        return tc_fail(err, TC_EINVAL, "%s (%s): give its endpoints, or ranks and place, not both", where, j->name);
    if (eps) {
        snprintf(w, sizeof w, "%s.endpoints", where);
        j->place.policy = TC_PLACE_LIST;
        return endpoints_of(eps, w, &j->place.endpoints, &j->place.nendpoints, err);
    }
    if (!ranks && !place)
        return tc_fail(err, TC_EINVAL,
                       "%s (%s): missing its endpoints (a list or ranges such as \"0-63\"), or ranks N and place "
                       "(packed, slice[:shape=AxBxC], random[:seed=S], first)",
                       where, j->name);
    j->place.policy = TC_PLACE_FIRST;
    if (place) {
        if (!json_is_string(place))
            return tc_fail(err, TC_EINVAL, "%s.place: expected a string such as \"packed\" or \"slice:shape=2x2x2\"",
                           where);
        if (tc_place_spec_parse(json_string_value(place), &j->place, &e2))
            return tc_fail(err, TC_EINVAL, "%s.place (%s): %s", where, j->name, e2.msg);
        if (j->place.policy == TC_PLACE_LIST)
            return tc_fail(err, TC_EINVAL, "%s.place (%s): list takes no ranks: give the job's \"endpoints\" instead",
                           where, j->name);
    }
    uint64_t slice_vol = 0;
    if (j->place.shape_ndims) {
        slice_vol = 1;
        for (int d = 0; d < j->place.shape_ndims; d++)
            slice_vol *= j->place.shape[d];
    }
    if (ranks) {
        uint64_t n;
        snprintf(w, sizeof w, "%s.ranks", where);
        if ((st = int_in(ranks, 1, TC_PLACE_MAX_ENDPOINTS, w, &n, err)))
            return st;
        if (slice_vol && slice_vol != n)
            return tc_fail(err, TC_EINVAL, "%s (%s): ranks %llu but the slice shape holds %llu endpoints", where,
                           j->name, (unsigned long long)n, (unsigned long long)slice_vol);
        j->place.ranks = (uint32_t)n;
    } else if (slice_vol && slice_vol <= TC_PLACE_MAX_ENDPOINTS) {
        j->place.ranks = (uint32_t)slice_vol;
    } else {
        return tc_fail(err, TC_EINVAL, "%s (%s): missing ranks (the job's rank count; a slice with shape= gives it)",
                       where, j->name);
    }
    return TC_OK;
}

static tc_status job_of(const json_t *o, const char *where, size_t i, tc_scn_job *j, tc_err *err)
{
    static const char *keys[] = {"name",  "op",    "algo",   "size", "endpoints", "ranks",
                                 "place", "start", "chunks", "root", "group",     NULL};
    if (!json_is_object(o))
        return tc_fail(err, TC_EINVAL, "%s: expected an object with op, size, and endpoints or ranks and place",
                       where);
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) {
        bool known = false;
        for (int k = 0; keys[k]; k++)
            known = known || strcmp(key, keys[k]) == 0;
        if (!known)
            return tc_fail(err, TC_EINVAL, "%s: unknown key '%s': accepted are name, op, algo, size, endpoints, ranks, "
                                           "place, start, chunks, root, group",
                           where, key);
    }
    char w[320];
    tc_err e2;
    tc_status st;
    json_t *x = json_object_get(o, "name");
    if (x && (st = (snprintf(w, sizeof w, "%s.name", where), str_of(x, w, j->name, sizeof j->name, err))))
        return st;
    if (!x)
        snprintf(j->name, sizeof j->name, "job%zu", i);
    x = json_object_get(o, "op");
    if (!json_is_string(x))
        return tc_fail(err, TC_EINVAL, "%s.op: missing (a string such as \"allreduce\")", where);
    if (tc_op_parse(json_string_value(x), &j->op, &e2))
        return tc_fail(err, TC_EINVAL, "%s.op: %s", where, e2.msg);
    snprintf(w, sizeof w, "%s.size", where);
    if (!(x = json_object_get(o, "size")))
        return tc_fail(err, TC_EINVAL, "%s: missing (bytes, or a string such as \"64MiB\")", w);
    if ((st = num_in(x, U_SIZE, 0, TC_MAX_BYTES, true, w, &j->bytes, err)))
        return st;
    /* The algorithm with chunks= and root= folded in, canonical. */
    tc_coll_req req;
    memset(&req, 0, sizeof req);
    req.algo = TC_ALGO_AUTO;
    x = json_object_get(o, "algo");
    if (x && !json_is_string(x))
        return tc_fail(err, TC_EINVAL, "%s.algo: expected a string such as \"ring\"", where);
    if (x && tc_algo_parse(json_string_value(x), &req, &e2))
        return tc_fail(err, TC_EINVAL, "%s.algo: %s", where, e2.msg);
    uint64_t c;
    snprintf(w, sizeof w, "%s.chunks", where);
    if ((x = json_object_get(o, "chunks")) && (st = int_in(x, 1, 65536, w, &c, err)))
        return st;
    if (x)
        req.chunks = (uint32_t)c;
    snprintf(w, sizeof w, "%s.root", where);
    if ((x = json_object_get(o, "root")) && (st = int_in(x, 0, UINT32_MAX - 1, w, &c, err)))
        return st;
    if (x)
        req.root = (uint32_t)c;
    tc_algo_format(&req, j->algo, sizeof j->algo);
    /* What chunks and root fold in must be an algorithm its parser takes
     * (NCCL chunks as its protocol does), since the scenario records it so. */
    tc_coll_req back;
    memset(&back, 0, sizeof back);
    if (tc_algo_parse(j->algo, &back, &e2))
        return tc_fail(err, TC_EINVAL, "%s: algo with chunks and root: %s", where, e2.msg);
    if (tc_algo_check_options(&back, j->algo, &j->op, 1, &e2))
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    snprintf(w, sizeof w, "%s.start", where);
    j->start_s = 0;
    if ((x = json_object_get(o, "start")) && (st = num_in(x, U_TIME, 0, 1e9, false, w, &j->start_s, err)))
        return st;
    if ((st = job_place_of(o, where, j, err)))
        return st;
    uint32_t p = j->place.policy == TC_PLACE_LIST ? j->place.nendpoints : j->place.ranks;
    /* A group: the collective runs in every group of the job's ranks, so
     * the root and the algorithm are one group's; the groups need the
     * topology (node, axes), so the run checks them. */
    memset(&j->group, 0, sizeof j->group);
    if ((x = json_object_get(o, "group")) && !json_is_null(x)) {
        if (!json_is_string(x))
            return tc_fail(err, TC_EINVAL, "%s.group: expected a string (node, stride=S, block=K, axes=LIST)", where);
        if (tc_group_parse(json_string_value(x), &j->group, &e2))
            return tc_fail(err, TC_EINVAL, "%s.group: %s", where, e2.msg);
    }
    if (j->group.kind != TC_GROUP_NONE)
        return TC_OK;
    if (req.root >= p && (j->op == TC_OP_BROADCAST || j->op == TC_OP_REDUCE))
        return tc_fail(err, TC_EINVAL, "%s.root: rank %u but the job has %u ranks", where, req.root, p);
    /* Whether the algorithm fits depends on the topology for many (a
     * torus's, hier's nodes, NVLink SHARP's switches, SHARP's fabric): the
     * run checks it there and names the job. */
    return TC_OK;
}

tc_status tc_scn_jobs_from_json(tc_scenario *s, const json_t *v, const char *where, tc_err *err)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return tc_fail(err, TC_EINVAL, "%s: expected a list of at least one job", where);
    if (json_array_size(v) > TC_SCN_MAX_JOBS)
        return tc_fail(err, TC_EINVAL, "%s: %zu jobs, at most %d", where, json_array_size(v), TC_SCN_MAX_JOBS);
    size_t n = json_array_size(v);
    tc_scn_job *jobs = tc_calloc(n, sizeof *jobs);
    if (!jobs)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    char w[300];
    for (size_t i = 0; i < n && st == TC_OK; i++) {
        WHERE_I(w, where, i);
        st = job_of(json_array_get(v, i), w, i, &jobs[i], err);
    }
    /* the output tells jobs apart by name */
    for (size_t i = 1; i < n && st == TC_OK; i++)
        for (size_t k = 0; k < i && st == TC_OK; k++)
            if (strcmp(jobs[i].name, jobs[k].name) == 0) {
                WHERE_I(w, where, i);
                st = tc_fail(err, TC_EINVAL, "%s (%s): the name is also jobs[%zu]'s: give every job its own name (a "
                                             "job without one is jobN, N its index)",
                             w, jobs[i].name, k);
            }
    if (st) {
        for (size_t i = 0; i < n; i++)
            free(jobs[i].place.endpoints);
        free(jobs);
        return st;
    }
    tc_scn_clear_jobs(s);
    s->jobs = jobs;
    s->njobs = n;
    return TC_OK;
}
SET(set_jobs)
{
    return tc_scn_jobs_from_json(s, v, where, err);
}
GET(get_jobs)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->njobs; i++) {
        const tc_scn_job *j = &s->jobs[i];
        json_t *e = json_pack("{s:s, s:s, s:s, s:f}", "name", j->name, "op", tc_op_name(j->op), "algo", j->algo,
                              "size", j->bytes);
        if (e && j->place.policy == TC_PLACE_LIST) {
            json_object_set_new(e, "endpoints", endpoints_json(j->place.endpoints, j->place.nendpoints));
        } else if (e) {
            char b[192];
            json_object_set_new(e, "ranks", json_integer(j->place.ranks));
            json_object_set_new(e, "place", json_string(tc_place_spec_format(&j->place, b, sizeof b)));
        }
        if (e)
            json_object_set_new(e, "start", json_real(j->start_s));
        if (e && j->group.kind != TC_GROUP_NONE) {
            char b[48];
            json_object_set_new(e, "group", json_string(tc_group_format(&j->group, b, sizeof b)));
        }
        json_array_append_new(a, e);
    }
    return a;
}

/* ---- training and codec-bench ---- */

/* An integer key in [lo, hi] stored as uint32_t; U32_KEY: up to UINT32_MAX. */
#define U32_RANGE_KEY(fn, field, lo, hi)                                                                             \
    SET(set_##fn)                                                                                                    \
    {                                                                                                                \
        uint64_t x;                                                                                                  \
        tc_status st = int_in(v, lo, hi, where, &x, err);                                                            \
        if (st == TC_OK)                                                                                             \
            s->field = (uint32_t)x;                                                                                  \
        return st;                                                                                                   \
    }                                                                                                                \
    GET(get_##fn)                                                                                                    \
    {                                                                                                                \
        return json_integer(s->field);                                                                               \
    }
#define U32_KEY(fn, field, lo) U32_RANGE_KEY(fn, field, lo, UINT32_MAX)
/* A boolean key. */
#define BOOL_KEY(fn, field)                                                                                          \
    SET(set_##fn)                                                                                                    \
    {                                                                                                                \
        return bool_of(v, where, &s->field, err);                                                                    \
    }                                                                                                                \
    GET(get_##fn)                                                                                                    \
    {                                                                                                                \
        return json_boolean(s->field);                                                                               \
    }

U32_KEY(t_hidden, train.hidden, 1)
U32_KEY(t_workers, train.workers, 1)
U32_KEY(t_batch, train.batch, 1)
U32_KEY(t_steps, train.steps, 1)
U32_KEY(t_eval, train.eval_every, 1)
U32_KEY(t_trsub, train.train_subset, 0)
U32_KEY(t_tesub, train.test_subset, 0)
U32_RANGE_KEY(t_seeds, train.seeds, 1, TC_TRAIN_MAX_SEEDS)
U32_KEY(b_workers, bench_workers, 1)

SET(set_t_model)
{
    tc_proxy_info pi;
    if (!json_is_string(v) || !tc_train_proxy(json_string_value(v), &pi)) {
        char names[128];
        tc_train_proxy_names(names, sizeof names);
        return tc_fail(err, TC_EINVAL, "%s: expected one of %s", where, names);
    }
    snprintf(s->train_model, sizeof s->train_model, "%s", pi.name);
    return TC_OK;
}
GET(get_t_model)
{
    return json_string(s->train_model);
}

U32_RANGE_KEY(t_width, train.width, 0, 1024)
U32_RANGE_KEY(t_layers, train.layers, 0, 64)
U32_RANGE_KEY(t_heads, train.heads, 0, 256)
U32_RANGE_KEY(t_context, train.context, 0, 4096)
BOOL_KEY(t_shuffled, train.shuffled_labels)

SET(set_t_wd)
{
    return num_in(v, U_PLAIN, 0, 1, true, where, &s->train.weight_decay, err);
}
GET(get_t_wd)
{
    return json_real(s->train.weight_decay);
}

SET(set_t_lr)
{
    return num_in(v, U_PLAIN, 0, 100, true, where, &s->train.lr, err);
}
GET(get_t_lr)
{
    return json_real(s->train.lr);
}

SET(set_t_seed)
{
    return int_in(v, 1, INT64_MAX, where, &s->train.seed, err);
}
GET(get_t_seed)
{
    return json_integer((json_int_t)s->train.seed);
}

SET(set_t_target)
{
    return accuracy_of(v, where, &s->train.target, err);
}
GET(get_t_target)
{
    return s->train.target > 0 ? json_real(s->train.target) : json_null();
}

SET(set_t_bucket)
{
    double b;
    tc_status st = num_in(v, U_SIZE, 4, 1e18, false, where, &b, err);
    if (st == TC_OK)
        s->train.bucket_bytes = (uint64_t)b;
    return st;
}
GET(get_t_bucket)
{
    return json_integer((json_int_t)s->train.bucket_bytes);
}

SET(set_t_data)
{
    return str_of(v, where, s->data_dir, sizeof s->data_dir, err);
}
GET(get_t_data)
{
    return json_string(s->data_dir);
}

SET(set_b_size)
{
    return num_in(v, U_SIZE, 4, 4.0 * 1073741824.0, false, where, &s->bench_bytes, err);
}
GET(get_b_size)
{
    return json_real(s->bench_bytes);
}

SET(set_b_seconds)
{
    return num_in(v, U_PLAIN, 0, 600, true, where, &s->bench_seconds, err);
}
GET(get_b_seconds)
{
    return json_real(s->bench_seconds);
}

SET(set_trials)
{
    uint64_t n = 0;
    tc_status st = int_in(v, 1, 1000000, where, &n, err);
    if (st == TC_OK)
        s->trials = (uint32_t)n;
    return st;
}
GET(get_trials)
{
    return json_integer(s->trials);
}

/* ---- cluster ---- */

SET(set_ctrace)
{
    if (json_is_null(v)) {
        s->cluster_trace[0] = '\0';
        return TC_OK;
    }
    return str_of(v, where, s->cluster_trace, sizeof s->cluster_trace, err);
}
GET(get_ctrace)
{
    return s->cluster_trace[0] ? json_string(s->cluster_trace) : json_null();
}
SET(set_cdigest)
{
    if (json_is_null(v)) {
        s->cluster_digest[0] = '\0';
        return TC_OK;
    }
    char b[sizeof s->cluster_digest];
    tc_status st = str_of(v, where, b, sizeof b, err);
    unsigned crc;
    unsigned long long bytes;
    int used = 0;
    if (st == TC_OK && (sscanf(b, "crc32=%8x,bytes=%llu%n", &crc, &bytes, &used) != 2 || b[used] || strlen(b) < 21 ||
                        b[6 + strspn(b + 6, "0123456789abcdef")] != ','))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not crc32=XXXXXXXX,bytes=N (the trace file's CRC-32 in 8 lowercase "
                                     "hex digits and its size, as a run records them)",
                     where, b);
    if (st == TC_OK)
        snprintf(s->cluster_digest, sizeof s->cluster_digest, "%s", b);
    return st;
}
GET(get_cdigest)
{
    return s->cluster_digest[0] ? json_string(s->cluster_digest) : json_null();
}
SET(set_cformat)
{
    char b[16];
    tc_trace_format f;
    tc_status st = str_of(v, where, b, sizeof b, err);
    if (st == TC_OK && (st = tc_trace_format_parse(b, &f, err)) == TC_OK && f == TC_TRACE_SYNTHETIC)
        st = tc_fail(err, TC_EINVAL, "%s: 'synthetic' is not a file format: use --synthetic N,seed=S", where);
    if (st == TC_OK)
        snprintf(s->cluster_format, sizeof s->cluster_format, "%s", tc_trace_format_name(f));
    return st;
}
GET(get_cformat)
{
    return json_string(s->cluster_format);
}
/* {"jobs": N, "seed": S, "load": L}, or the flag's "N,seed=S[,load=L]" */
SET(set_synth)
{
    if (json_is_null(v)) {
        s->synth_jobs = 0;
        return TC_OK;
    }
    json_t *o = NULL;
    if (json_is_string(v)) {
        char b[256], *save = NULL;
        snprintf(b, sizeof b, "%s", json_string_value(v));
        o = json_object();
        for (char *it = strtok_r(b, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(it, '=');
            const char *k = eq ? it : "jobs", *val = eq ? eq + 1 : it;
            if (eq)
                *eq = '\0';
            bool is_load = strcmp(k, "load") == 0;
            if (!is_load && strcmp(k, "jobs") != 0 && strcmp(k, "seed") != 0) {
                json_decref(o);
                return tc_fail(err, TC_EINVAL, "%s: unknown key '%s': accepted are jobs, seed, load", where, k);
            }
            char *end;
            double x = strtod(val, &end);
            /* json_real refuses NaN and the infinities (the key would be
             * dropped, leaving the default); a count or a seed is a whole
             * number that must fit json_int_t (-2^63 to 2^63) before the cast */
            if (*val && !*end && is_load && !isfinite(x)) {
                json_decref(o);
                return tc_fail(err, TC_EINVAL, "%s: load=%s is not a finite number: expected L from 1e-9 to 100",
                               where, val);
            }
            if (*val && !*end && !is_load && !(isfinite(x) && x == floor(x))) {
                json_decref(o);
                return tc_fail(err, TC_EINVAL, "%s: %s=%s is not a whole number: expected N from 1 to 10000000, "
                                               "seed=S from 0 to 2^63-1",
                               where, k, val);
            }
            bool fits = is_load || (x >= -9223372036854775808.0 && x < 9223372036854775808.0);
            if (*val && !*end && !fits) {
                json_decref(o);
                return tc_fail(err, TC_EINVAL, "%s: %s=%s is out of range: expected N from 1 to 10000000, seed=S from "
                                               "0 to 2^63-1",
                               where, k, val);
            }
            if (!*val || *end || json_object_get(o, k)) {
                json_decref(o);
                return tc_fail(err, TC_EINVAL, "%s: invalid '%s': expected N,seed=S[,load=L] (e.g. 10000,seed=1)", where,
                               json_string_value(v));
            }
            json_object_set_new(o, k, is_load ? json_real(x) : json_integer((json_int_t)x));
        }
        v = o;
    }
    tc_status st = TC_OK;
    if (!json_is_object(v))
        st = tc_fail(err, TC_EINVAL, "%s: expected {\"jobs\": N, \"seed\": S, \"load\": L}", where);
    const char *k;
    json_t *x;
    uint64_t jobs = 0, seed = 0;
    double load = 0.9;
    json_object_foreach((json_t *)v, k, x)
    {
        char w[96];
        snprintf(w, sizeof w, "%s.%s", where, k);
        if (st)
            break;
        if (strcmp(k, "jobs") == 0)
            st = int_in(x, 1, 10000000, w, &jobs, err);
        else if (strcmp(k, "seed") == 0)
            st = int_in(x, 0, INT64_MAX, w, &seed, err);
        else if (strcmp(k, "load") == 0)
            st = num_in(x, U_PLAIN, 1e-9, 100, false, w, &load, err); /* as tc_trace_synthetic */
        else
            st = tc_fail(err, TC_EINVAL, "%s: unknown key '%s': accepted are jobs, seed, load", where, k);
    }
    if (st == TC_OK && !jobs)
        st = tc_fail(err, TC_EINVAL, "%s: the number of jobs is missing: expected N,seed=S[,load=L]", where);
    if (st == TC_OK) {
        s->synth_jobs = jobs;
        s->synth_seed = seed;
        s->synth_load = load;
    }
    json_decref(o);
    return st;
}
GET(get_synth)
{
    if (!s->synth_jobs)
        return json_null();
    char b[128], l[32];
    snprintf(b, sizeof b, "%llu,seed=%llu,load=%s", (unsigned long long)s->synth_jobs,
             (unsigned long long)s->synth_seed, tc_fmt_shortest(s->synth_load, l, sizeof l));
    return json_string(b);
}
SET(set_csched)
{
    char b[16];
    tc_cluster_sched x;
    tc_status st = str_of(v, where, b, sizeof b, err);
    if (st == TC_OK && (st = tc_cluster_sched_parse(b, &x, err)) == TC_OK)
        snprintf(s->scheduler, sizeof s->scheduler, "%s", tc_cluster_sched_name(x));
    return st;
}
GET(get_csched)
{
    return json_string(s->scheduler);
}
U32_RANGE_KEY(cocs, cluster_ocs, 0, 64)
BOOL_KEY(cstrict, cluster_strict)

/* ---- train (one iteration) ---- */

SET(set_it_model)
{
    return str_of(v, where, s->it_model, sizeof s->it_model, err);
}
GET(get_it_model)
{
    return json_string(s->it_model);
}
/* Model files by content, under their paths (written by resolving). */
SET(set_model_json)
{
    return set_object_text(v, where, "model files' contents by path", &s->model_json, err);
}
GET(get_model_json)
{
    return get_object_text(s->model_json);
}
static bool has_model_json(const tc_scenario *s)
{
    return s->model_json != NULL;
}
U32_RANGE_KEY(dp, dp, 1, 16777216)
U32_RANGE_KEY(tp, tp, 1, 16777216)
U32_RANGE_KEY(pp, pp, 1, 16777216)
U32_RANGE_KEY(ep, ep, 1, 16777216)
SET(set_capf)
{
    tc_status st = num_in(v, U_PLAIN, 0, 64, false, where, &s->capacity_factor, err);
    if (st == TC_OK && s->capacity_factor > 0 && s->capacity_factor < 0.01)
        st = tc_fail(err, TC_EINVAL, "%s: %g is below 0.01: expected 0 (dropless) or a capacity factor from 0.01 to 64",
                     where, s->capacity_factor);
    return st;
}
GET(get_capf)
{
    return json_real(s->capacity_factor);
}
SET(set_zipf)
{
    return num_in(v, U_PLAIN, 0, 10, false, where, &s->zipf, err);
}
GET(get_zipf)
{
    return json_real(s->zipf);
}
SET(set_par_order)
{
    tc_status st = str_of(v, where, s->par_order, sizeof s->par_order, err);
    tc_ti_group dim[3];
    if (st == TC_OK && !tc_par_order_parse(s->par_order, dim))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not an order of the parallel dimensions: accepted are tp, dp and "
                     "pp each once, innermost first, joined by '-' (e.g. tp-dp-pp)", where, s->par_order);
    return st;
}
GET(get_par_order)
{
    return json_string(s->par_order);
}
U32_RANGE_KEY(mbs, micro_batches, 1, 1000000)
U32_RANGE_KEY(mb, micro_batch, 1, 1000000)
U32_RANGE_KEY(it_seq, it_seq, 0, 16777216)
U32_RANGE_KEY(vstages, vstages, 1, 64)
U32_RANGE_KEY(zero, zero, 0, 3)
BOOL_KEY(sp, seq_parallel)
BOOL_KEY(overlap, it_overlap)
BOOL_KEY(dma, it_dma)
BOOL_KEY(cosim, it_cosim)
SET(set_recompute)
{
    tc_status st = str_of(v, where, s->recompute, sizeof s->recompute, err);
    if (st == TC_OK && strcmp(s->recompute, "none") && strcmp(s->recompute, "selective") &&
        strcmp(s->recompute, "full"))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not a recomputation: accepted are none, selective, full", where,
                     s->recompute);
    return st;
}
GET(get_recompute)
{
    return json_string(s->recompute);
}
SET(set_grad_dtype)
{
    tc_status st = str_of(v, where, s->grad_dtype, sizeof s->grad_dtype, err);
    if (st == TC_OK && strcmp(s->grad_dtype, "bf16") && strcmp(s->grad_dtype, "fp16") &&
        strcmp(s->grad_dtype, "fp32"))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not a gradient type: accepted are bf16, fp16 (2 bytes) and fp32 "
                     "(4 bytes)", where, s->grad_dtype);
    return st;
}
SET(set_attention)
{
    tc_status st = str_of(v, where, s->attention, sizeof s->attention, err);
    if (st == TC_OK && strcmp(s->attention, "flash") && strcmp(s->attention, "eager"))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not an attention kernel: accepted are flash (fused: the scores "
                     "are not stored), eager (softmax and scores stored)", where, s->attention);
    return st;
}
GET(get_attention)
{
    return json_string(s->attention);
}
GET(get_grad_dtype)
{
    return json_string(s->grad_dtype);
}
SET(set_it_timeline)
{
    if (json_is_null(v)) {
        s->it_timeline[0] = '\0';
        return TC_OK;
    }
    return str_of(v, where, s->it_timeline, sizeof s->it_timeline, err);
}
GET(get_it_timeline)
{
    return s->it_timeline[0] ? json_string(s->it_timeline) : json_null();
}
SET(set_comm_order)
{
    tc_status st = str_of(v, where, s->comm_order, sizeof s->comm_order, err);
    if (st == TC_OK && strcmp(s->comm_order, "backward") && strcmp(s->comm_order, "forward"))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not a communication order: accepted are backward (PyTorch DDP) and "
                     "forward (P3, ByteScheduler)", where, s->comm_order);
    return st;
}
GET(get_comm_order)
{
    return json_string(s->comm_order);
}
/* iteration.dp_algo, .tp_algo, .ep_algo: "library", "auto" or what --algo takes. */
static tc_status it_algo_of(const json_t *v, const char *where, char *dst, size_t cap, tc_err *err)
{
    tc_status st = str_of(v, where, dst, cap, err);
    if (st || strcmp(dst, "library") == 0)
        return st;
    tc_coll_req req = {.algo = TC_ALGO_AUTO};
    tc_err e2 = {0};
    if (tc_algo_parse(dst, &req, &e2))
        return tc_fail(err, TC_EINVAL, "%s (library, the default, or an algorithm): %s", where, e2.msg);
    /* data, tensor and expert parallelism's collectives have no root */
    const tc_op none = TC_OP_ALLREDUCE;
    if (tc_algo_check_options(&req, dst, &none, 1, &e2))
        return tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    return TC_OK;
}
SET(set_dp_algo)
{
    return it_algo_of(v, where, s->it_algo[0], sizeof s->it_algo[0], err);
}
GET(get_dp_algo)
{
    return json_string(s->it_algo[0]);
}
SET(set_tp_algo)
{
    return it_algo_of(v, where, s->it_algo[1], sizeof s->it_algo[1], err);
}
GET(get_tp_algo)
{
    return json_string(s->it_algo[1]);
}
SET(set_ep_algo)
{
    return it_algo_of(v, where, s->it_algo[2], sizeof s->it_algo[2], err);
}
GET(get_ep_algo)
{
    return json_string(s->it_algo[2]);
}
SET(set_sync)
{
    tc_status st = str_of(v, where, s->sync, sizeof s->sync, err);
    static const char *ok[] = {"ddp", "local-sgd", "diloco", "diloco-eager", "diloco-delayed", "streaming-diloco"};
    bool found = false;
    for (size_t i = 0; st == TC_OK && i < sizeof ok / sizeof *ok; i++)
        found = found || strcmp(s->sync, ok[i]) == 0;
    if (st == TC_OK && !found)
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not a synchronisation strategy: accepted are ddp, local-sgd, diloco, "
                     "diloco-eager, diloco-delayed, streaming-diloco", where, s->sync);
    return st;
}
GET(get_sync)
{
    return json_string(s->sync);
}
SET(set_outer_dtype)
{
    tc_status st = str_of(v, where, s->outer_dtype, sizeof s->outer_dtype, err);
    if (st == TC_OK && strcmp(s->outer_dtype, "fp32") && strcmp(s->outer_dtype, "bf16") &&
        strcmp(s->outer_dtype, "int8") && strcmp(s->outer_dtype, "fp4"))
        st = tc_fail(err, TC_EINVAL, "%s: '%s' is not an outer-gradient type: accepted are fp32, bf16, int8, fp4", where,
                     s->outer_dtype);
    return st;
}
GET(get_outer_dtype)
{
    return json_string(s->outer_dtype);
}
/* iteration.compress_dp, _pp, _ep: a codec spec, checked by tc_codec_parse */
static tc_status set_codec_k(const json_t *v, const char *where, char *dst, size_t len, tc_err *err)
{
    if (json_is_null(v)) {
        dst[0] = '\0';
        return TC_OK;
    }
    tc_status st = str_of(v, where, dst, len, err);
    tc_codec_spec cs;
    if (st == TC_OK && dst[0]) {
        tc_err e2;
        if (tc_codec_parse(dst, &cs, &e2) != TC_OK)
            st = tc_fail(err, TC_EINVAL, "%s: %s", where, e2.msg);
    }
    return st;
}
#define CODEC_KEY(fn, k)                                                                                             \
    SET(set_##fn)                                                                                                    \
    {                                                                                                                \
        return set_codec_k(v, where, s->it_codec[k], sizeof s->it_codec[k], err);                                    \
    }                                                                                                                \
    GET(get_##fn)                                                                                                    \
    {                                                                                                                \
        return s->it_codec[k][0] ? json_string(s->it_codec[k]) : json_null();                                       \
    }
CODEC_KEY(cdp, 0)
CODEC_KEY(cpp, 1)
CODEC_KEY(cep, 2)
U32_RANGE_KEY(replicas, replicas, 0, 65536)
U32_RANGE_KEY(inner_steps, inner_steps, 1, 1000000)
U32_RANGE_KEY(outer_steps, outer_steps, 0, 1000000000)
U32_RANGE_KEY(fragments, fragments, 0, 100000)
U32_RANGE_KEY(overlap_steps, overlap_steps, 0, 1000000)
SET(set_achievable)
{
    /* "profile": the accelerator profile's measured matmul ceiling (-1) */
    if (json_is_string(v) && strcmp(json_string_value(v), "profile") == 0) {
        s->achievable = -1;
        return TC_OK;
    }
    /* from 1e-6: below it the compute times leave what a double holds */
    return num_in(v, U_PLAIN, 1e-6, 1, false, where, &s->achievable, err);
}
GET(get_achievable)
{
    return s->achievable < 0 ? json_string("profile") : json_real(s->achievable);
}
SET(set_s_c)
{
    return num_in(v, U_PLAIN, 0, 100, false, where, &s->s_c, err);
}
GET(get_s_c)
{
    return json_real(s->s_c);
}
BOOL_KEY(search, it_search)
BOOL_KEY(tp_in_node, tp_in_node)
U32_RANGE_KEY(gbatch, global_batch, 0, 100000000)
BOOL_KEY(allow_oom, allow_oom)
SET(set_s_m)
{
    return num_in(v, U_PLAIN, 0, 100, false, where, &s->s_m, err);
}
GET(get_s_m)
{
    return json_real(s->s_m);
}

/* ---- applicability ---- */

static bool flow_mode(const tc_scenario *s)
{
    return s->mode == TC_MODE_FLOW;
}
/* train keys that matter only with what they shape */
static bool sync_not_ddp(const tc_scenario *s)
{
    return strcmp(s->sync, "ddp") != 0;
}
static bool sync_streaming(const tc_scenario *s)
{
    return strcmp(s->sync, "streaming-diloco") == 0;
}
static bool has_ep(const tc_scenario *s)
{
    return s->ep > 1;
}
/* Contention needs overlap (--no-overlap runs compute and communication
 * one at a time); --dma puts every collective and send on the copy
 * engines, whose factors (s_c_dma, s_m_dma) apply instead of s_c and s_m. */
static bool overlaps(const tc_scenario *s)
{
    return s->it_overlap;
}
static bool sm_collectives(const tc_scenario *s)
{
    return s->it_overlap && !s->it_dma;
}
/* DP collectives: a DP degree above 1 (or --search, which tries them);
 * compress's data-parallel job always has them. */
static bool has_dp(const tc_scenario *s)
{
    return s->command != TC_CMD_TRAIN || s->dp > 1 || s->it_search;
}
static bool has_tp(const tc_scenario *s)
{
    return s->tp > 1 || s->it_search;
}
/* ZeRO 3 keeps FSDP's order: the communication order is DDP's and
 * ZeRO-1/2's, of the DP gradient buckets. */
static bool below_zero3(const tc_scenario *s)
{
    return s->zero < 3 && has_dp(s);
}
static bool may_pipeline(const tc_scenario *s)
{
    return s->pp > 1 || s->it_search;
}
/* The eager limit matters only where it decides: flow mode, deps auto. */
static bool flow_auto_deps(const tc_scenario *s)
{
    return s->mode == TC_MODE_FLOW && s->deps == TC_DEPS_AUTO;
}
static bool formula_mode(const tc_scenario *s)
{
    return s->mode == TC_MODE_FORMULA;
}
/* The seed draws a random placement and the history of an occupancy. */
/* Written when above 0 or given (a default 0 stays out of every scenario). */
static bool occupancy_place(const tc_scenario *s)
{
    return s->job.policy != TC_PLACE_LIST &&
           (s->job.occupancy > 0 || tc_keyset_has(&s->given_mask, tc_scn_key_index("job.occupancy")));
}
/* A seed with an occupancy given, 0 included (a sweep over occupancies
 * keeps one seed; at 0 there is no history to seed). */
static bool random_place(const tc_scenario *s)
{
    return s->job.policy == TC_PLACE_RANDOM || occupancy_place(s);
}
static bool slice_place(const tc_scenario *s)
{
    return s->job.policy == TC_PLACE_SLICE;
}
static bool list_place(const tc_scenario *s)
{
    return s->job.policy == TC_PLACE_LIST;
}
/* The operator of a reduction: some operation reduces. */
/* The operations with a redop: the reductions, and sendrecv, whose redop
 * nccl-tests prints in its column (it reduces nothing: timed alike). */
static bool reduction_op(const tc_scenario *s)
{
    for (int i = 0; i < s->nops; i++)
        if (s->ops[i] == TC_OP_ALLREDUCE || s->ops[i] == TC_OP_REDUCESCATTER || s->ops[i] == TC_OP_REDUCE ||
            s->ops[i] == TC_OP_SENDRECV)
            return true;
    return false;
}
static bool has_group(const tc_scenario *s)
{
    return s->group.kind != TC_GROUP_NONE;
}
static bool ranks_place(const tc_scenario *s)
{
    return s->job.policy != TC_PLACE_LIST;
}
/* compress trains now only when neither ratios nor an accuracy file are given. */
static bool trains_now(const tc_scenario *s)
{
    return s->command == TC_CMD_TRAIN_ACCURACY || (!s->nsteps_ratio && !s->naccuracy);
}
/* The proxy trained now is p (train.model, else the model family's). */
static bool proxy_is(const tc_scenario *s, const char *p)
{
    return trains_now(s) && strcmp(s->train_model[0] ? s->train_model : tc_scn_default_proxy(s), p) == 0;
}
static bool proxy_mlp(const tc_scenario *s)
{
    return proxy_is(s, "mlp");
}
static bool proxy_shaped(const tc_scenario *s)
{
    return proxy_is(s, "cnn") || proxy_is(s, "chartf");
}
static bool proxy_chartf(const tc_scenario *s)
{
    return proxy_is(s, "chartf");
}
static bool measured_acc(const tc_scenario *s)
{
    return !s->nsteps_ratio;
}

#define B(c) TC_CMD_BIT(TC_CMD_##c)
#define NETC (B(COLLECTIVE) | B(COMPARE) | B(CONCURRENT) | B(COMPRESS) | B(FAILURES))
#define JOBC (B(COLLECTIVE) | B(COMPARE) | B(COMPRESS) | B(FAILURES))
#define TRAINC (B(TRAIN_ACCURACY) | B(COMPRESS))

/* In canonical order: the JSON is written in this order. */
static const tc_scn_key keys[] = {
    {"network.topo", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), NULL, set_topo, get_topo, ""},
    {"network.preset", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), has_presets, set_preset, get_preset, "a preset"},
    {"network.topo_preset", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), has_topo_preset, set_topo_preset, get_topo_preset,
     "a preset"},
    {"network.profiles_dir", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), has_profiles, set_profiles_dir, get_profiles_dir,
     "--preset"},
    {"network.profiles", NETC | B(TOPO) | B(CLUSTER) | B(TRAIN), has_profiles, set_profiles, get_profiles, "--preset"},
    {"network.names", B(COMPARE) | B(FAILURES) | B(CLUSTER), NULL, set_names, get_names, ""},
    {"network.alphas_s", B(COMPARE), NULL, set_alphas, get_alphas, ""},
    {"network.equalize_injection_Bps", NETC | B(TOPO) | B(TRAIN), NULL, set_equalize, get_equalize, ""},
    {"network.cost_profile", B(TOPO) | B(COMPARE), has_cost, set_cost_profile, get_cost_profile, "--cost FILE|NAME"},
    {"network.equalize_cost_usd", B(TOPO) | B(COMPARE), has_cost, set_equalize_cost, get_equalize_cost,
     "--cost FILE|NAME (a cost profile)"},
    {"network.degrade", NETC | B(TOPO), NULL, set_degrade, get_degrade, ""},
    {"network.routing", NETC | B(TRAIN), NULL, set_routing, get_routing, ""},
    {"network.fail", NETC | B(TOPO), NULL, set_fail, get_fail, ""},
    {"network.fail_random", NETC | B(TOPO), NULL, set_fail_random, get_fail_random, ""},
    {"network.links", B(TOPO), NULL, set_links, get_links, ""},
    {"job.ranks", JOBC, ranks_place, set_ranks, get_ranks, "a placement of N ranks (not --endpoints)"},
    {"job.place", JOBC, NULL, set_place, get_place, ""},
    {"job.seed", JOBC, random_place, set_seed, get_seed, "--place random or an --occupancy (0 included)"},
    {"job.endpoints", JOBC, list_place, set_endpoints, get_endpoints, "--place list"},
    {"job.occupancy", JOBC, occupancy_place, set_occupancy, get_occupancy,
     "a placement policy that chooses the endpoints (not list)"},
    {"job.slice", JOBC, slice_place, set_slice, get_slice, "--place slice"},
    {"job.group", B(COLLECTIVE) | B(COMPARE), has_group, set_group, get_group,
     "a group (--group node, stride=S, block=K, axes=LIST)"},
    {"collective.op", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), NULL, set_ops, get_ops, ""},
    {"collective.algo", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), NULL, set_algos, get_algos, ""},
    {"collective.sizes", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), NULL, set_sizes, get_sizes, ""},
    {"collective.dtype", B(COLLECTIVE) | B(COMPARE) | B(CONCURRENT) | B(FAILURES), NULL, set_dtype, get_dtype, ""},
    {"collective.redop", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), reduction_op, set_redop, get_redop,
     "an operation that reduces (allreduce, reducescatter, reduce), or sendrecv (nccl-tests' redop column)"},
    {"eval.mode", JOBC | B(TRAIN), NULL, set_mode, get_mode, ""},
    {"eval.phases", B(COLLECTIVE), formula_mode, set_phases, get_phases, "--mode formula"},
    {"flow.rate_cap_Bps", NETC, flow_mode, set_rate_cap, get_rate_cap, "--mode flow"},
    {"flow.multipath", NETC, flow_mode, set_multipath, get_multipath, "--mode flow"},
    {"flow.deps", NETC, flow_mode, set_deps, get_deps, "--mode flow"},
    {"flow.eager_limit_bytes", NETC, flow_auto_deps, set_eager_limit, get_eager_limit, "--mode flow and --deps auto"},
    {"flow.event_budget", NETC, flow_mode, set_budget, get_budget, "--mode flow"},
    {"flow.skip", NETC | B(TRAIN), flow_mode, set_skip, get_skip, "--mode flow"},
    {"flow.bounds", B(COLLECTIVE) | B(COMPARE) | B(FAILURES), flow_mode, set_bounds, get_bounds, "--mode flow"},
    {"flow.trace", B(COLLECTIVE) | B(CONCURRENT), flow_mode, set_trace, get_trace, "--mode flow"},
    {"concurrent.jobs", B(CONCURRENT), NULL, set_jobs, get_jobs, ""},
    {"failures.trials", B(FAILURES), NULL, set_trials, get_trials, ""},
    {"cluster.trace", B(CLUSTER), NULL, set_ctrace, get_ctrace, ""},
    {"cluster.trace_format", B(CLUSTER), NULL, set_cformat, get_cformat, ""},
    {"cluster.trace_digest", B(CLUSTER), NULL, set_cdigest, get_cdigest, ""},
    {"cluster.synthetic", B(CLUSTER), NULL, set_synth, get_synth, ""},
    {"cluster.scheduler", B(CLUSTER), NULL, set_csched, get_csched, ""},
    {"cluster.ocs", B(CLUSTER), NULL, set_cocs, get_cocs, ""},
    {"cluster.strict", B(CLUSTER), NULL, set_cstrict, get_cstrict, ""},
    {"iteration.model", B(TRAIN), NULL, set_it_model, get_it_model, ""},
    {"iteration.model_json", B(TRAIN), has_model_json, set_model_json, get_model_json, ""},
    {"iteration.accel", B(TRAIN), NULL, set_accel, get_accel, ""},
    {"parallel.dp", B(TRAIN), NULL, set_dp, get_dp, ""},
    {"parallel.tp", B(TRAIN), NULL, set_tp, get_tp, ""},
    {"parallel.pp", B(TRAIN), NULL, set_pp, get_pp, ""},
    {"parallel.ep", B(TRAIN), NULL, set_ep, get_ep, ""},
    {"parallel.order", B(TRAIN), NULL, set_par_order, get_par_order, ""},
    {"iteration.micro_batches", B(TRAIN), NULL, set_mbs, get_mbs, ""},
    {"iteration.micro_batch", B(TRAIN), NULL, set_mb, get_mb, ""},
    {"iteration.seq", B(TRAIN), NULL, set_it_seq, get_it_seq, ""},
    {"iteration.virtual_stages", B(TRAIN), may_pipeline, set_vstages, get_vstages, "--pp above 1 (or --search)"},
    {"iteration.zero", B(TRAIN), NULL, set_zero, get_zero, ""},
    {"iteration.seq_parallel", B(TRAIN), NULL, set_sp, get_sp, ""},
    {"iteration.recompute", B(TRAIN), NULL, set_recompute, get_recompute, ""},
    {"iteration.grad_dtype", B(TRAIN), NULL, set_grad_dtype, get_grad_dtype, ""},
    {"iteration.attention", B(TRAIN), NULL, set_attention, get_attention, ""},
    {"iteration.overlap", B(TRAIN), NULL, set_overlap, get_overlap, ""},
    {"iteration.achievable", B(TRAIN), NULL, set_achievable, get_achievable, ""},
    {"iteration.s_c", B(TRAIN) | B(COMPRESS), sm_collectives, set_s_c, get_s_c,
     "overlap on the compute units (not --no-overlap, nothing contends; nor --dma, whose copy-engine factors apply)"},
    {"iteration.s_m", B(TRAIN) | B(COMPRESS), sm_collectives, set_s_m, get_s_m,
     "overlap on the compute units (not --no-overlap, nothing contends; nor --dma, whose copy-engine factors apply)"},
    {"iteration.dma", B(TRAIN), overlaps, set_dma, get_dma, "overlap (not --no-overlap: nothing contends)"},
    {"iteration.comm_order", B(TRAIN), below_zero3, set_comm_order, get_comm_order,
     "--zero 0, 1 or 2 (ZeRO 3 keeps FSDP's order) and --dp above 1 (gradient buckets to send)"},
    {"iteration.dp_algo", B(TRAIN) | B(COMPRESS), has_dp, set_dp_algo, get_dp_algo,
     "--dp above 1 (or --search): DP collectives to run"},
    {"iteration.tp_algo", B(TRAIN), has_tp, set_tp_algo, get_tp_algo, "--tp above 1 (or --search): TP collectives to run"},
    {"iteration.ep_algo", B(TRAIN), has_ep, set_ep_algo, get_ep_algo, "--ep above 1"},
    {"iteration.timeline", B(TRAIN), NULL, set_it_timeline, get_it_timeline, ""},
    {"iteration.cosim", B(TRAIN), flow_mode, set_cosim, get_cosim, "--mode flow"},
    {"iteration.capacity_factor", B(TRAIN), NULL, set_capf, get_capf, ""},
    {"iteration.zipf", B(TRAIN), NULL, set_zipf, get_zipf, ""},
    {"iteration.search", B(TRAIN), NULL, set_search, get_search, ""},
    {"iteration.global_batch", B(TRAIN), NULL, set_gbatch, get_gbatch, ""},
    {"iteration.tp_in_node", B(TRAIN), NULL, set_tp_in_node, get_tp_in_node, ""},
    {"iteration.allow_oom", B(TRAIN), NULL, set_allow_oom, get_allow_oom, ""},
    {"iteration.compress_dp", B(TRAIN), NULL, set_cdp, get_cdp, ""},
    {"iteration.compress_pp", B(TRAIN), NULL, set_cpp, get_cpp, ""},
    {"iteration.compress_ep", B(TRAIN), NULL, set_cep, get_cep, ""},
    {"sync.strategy", B(TRAIN), NULL, set_sync, get_sync, ""},
    {"sync.replicas", B(TRAIN), NULL, set_replicas, get_replicas, ""},
    {"sync.inner_steps", B(TRAIN), sync_not_ddp, set_inner_steps, get_inner_steps, "--sync other than ddp"},
    {"sync.outer_steps", B(TRAIN), sync_not_ddp, set_outer_steps, get_outer_steps, "--sync other than ddp"},
    {"sync.fragments", B(TRAIN), sync_streaming, set_fragments, get_fragments, "--sync streaming-diloco"},
    {"sync.overlap_steps", B(TRAIN), sync_streaming, set_overlap_steps, get_overlap_steps, "--sync streaming-diloco"},
    {"sync.outer_dtype", B(TRAIN), sync_not_ddp, set_outer_dtype, get_outer_dtype, "--sync other than ddp"},
    {"codecs", B(CODEC_BENCH) | TRAINC, NULL, set_codecs, get_codecs, ""},
    {"compress.model", B(COMPRESS), NULL, set_model, get_model, ""},
    {"compress.accel", B(COMPRESS), NULL, set_accel, get_accel, ""},
    {"compress.mfu", B(COMPRESS), NULL, set_mfu, get_mfu, ""},
    {"compress.bucket_bytes", B(COMPRESS), NULL, set_bucket, get_bucket, ""},
    {"compress.offload", B(COMPRESS), NULL, set_offload, get_offload, ""},
    {"compress.sweep_bw", B(COMPRESS), NULL, set_sweep, get_sweep, ""},
    {"compress.target_acc", B(COMPRESS), measured_acc, set_target, get_target,
     "measured accuracy (--accuracy or training now), not --steps-ratio"},
    {"compress.steps_ratio", B(COMPRESS), NULL, set_ratios, get_ratios, ""},
    {"compress.codec_throughput", B(COMPRESS), NULL, set_thr, get_thr, ""},
    {"compress.accuracy", B(COMPRESS), NULL, set_accuracy, get_accuracy, ""},
    {"train.model", TRAINC, trains_now, set_t_model, get_t_model, "training now (not --steps-ratio or --accuracy)"},
    {"train.hidden", TRAINC, proxy_mlp, set_t_hidden, get_t_hidden,
     "training the mlp proxy now (not --steps-ratio or --accuracy)"},
    {"train.width", TRAINC, proxy_shaped, set_t_width, get_t_width,
     "training the cnn or chartf proxy now (not --steps-ratio or --accuracy)"},
    {"train.layers", TRAINC, proxy_chartf, set_t_layers, get_t_layers,
     "training the chartf proxy now (not --steps-ratio or --accuracy)"},
    {"train.heads", TRAINC, proxy_chartf, set_t_heads, get_t_heads,
     "training the chartf proxy now (not --steps-ratio or --accuracy)"},
    {"train.context", TRAINC, proxy_chartf, set_t_context, get_t_context,
     "training the chartf proxy now (not --steps-ratio or --accuracy)"},
    {"train.weight_decay", TRAINC, proxy_chartf, set_t_wd, get_t_wd,
     "training the chartf proxy now, whose AdamW decays (not --steps-ratio or --accuracy)"},
    {"train.shuffled_labels", TRAINC, trains_now, set_t_shuffled, get_t_shuffled,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.workers", TRAINC, trains_now, set_t_workers, get_t_workers,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.batch", TRAINC, trains_now, set_t_batch, get_t_batch, "training now (not --steps-ratio or --accuracy)"},
    {"train.steps", TRAINC, trains_now, set_t_steps, get_t_steps, "training now (not --steps-ratio or --accuracy)"},
    {"train.eval_every", TRAINC, trains_now, set_t_eval, get_t_eval,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.lr", TRAINC, trains_now, set_t_lr, get_t_lr, "training now (not --steps-ratio or --accuracy)"},
    {"train.seed", TRAINC, trains_now, set_t_seed, get_t_seed, "training now (not --steps-ratio or --accuracy)"},
    {"train.seeds", TRAINC, trains_now, set_t_seeds, get_t_seeds, "training now (not --steps-ratio or --accuracy)"},
    {"train.target_acc", B(TRAIN_ACCURACY), NULL, set_t_target, get_t_target, ""},
    {"train.train_subset", TRAINC, trains_now, set_t_trsub, get_t_trsub,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.test_subset", TRAINC, trains_now, set_t_tesub, get_t_tesub,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.bucket_bytes", TRAINC, trains_now, set_t_bucket, get_t_bucket,
     "training now (not --steps-ratio or --accuracy)"},
    {"train.data_dir", TRAINC, trains_now, set_t_data, get_t_data, "training now (not --steps-ratio or --accuracy)"},
    {"codec_bench.size_bytes", B(CODEC_BENCH), NULL, set_b_size, get_b_size, ""},
    {"codec_bench.seconds", B(CODEC_BENCH), NULL, set_b_seconds, get_b_seconds, ""},
    {"codec_bench.workers", B(CODEC_BENCH), NULL, set_b_workers, get_b_workers, ""},
};

_Static_assert(sizeof keys / sizeof *keys <= TC_KEYSET_MAX, "more scenario keys than a tc_keyset holds");

size_t tc_scn_key_count(void)
{
    return sizeof keys / sizeof *keys;
}

const tc_scn_key *tc_scn_key_get(size_t i)
{
    return i < tc_scn_key_count() ? &keys[i] : NULL;
}

int tc_scn_key_index(const char *path)
{
    for (size_t i = 0; i < tc_scn_key_count(); i++)
        if (strcmp(keys[i].path, path) == 0)
            return (int)i;
    return -1;
}

int tc_scenario_key_index(const char *key)
{
    return tc_scn_key_index(key);
}

bool tc_scn_key_applies(const tc_scn_key *k, const tc_scenario *s)
{
    return (k->cmds & TC_CMD_BIT(s->command)) && (!k->cond || k->cond(s));
}

tc_status tc_scn_set_key(tc_scenario *s, const char *path, const json_t *v, const char *where, tc_err *err)
{
    int i = tc_scn_key_index(path);
    if (i < 0)
        return tc_fail(err, TC_EINTERNAL, "internal: no scenario key %s", path);
    if (!v) /* a value its maker could not allocate */
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = keys[i].set(s, v, where, err);
    if (st == TC_OK)
        tc_keyset_add(&s->given_mask, (int)i);
    return st;
}

