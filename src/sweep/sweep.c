/*
 * sweep.c - a sweep file read and checked, its points numbered, each
 * point's scenario built through the scenario layer's own reader (so a
 * point is exactly what the same scenario file would be), and one point
 * run into its line of the results file (topocc/sweep.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <jansson.h>
#include "topocc/render.h"
#include "topocc/sweep.h"
#include "sweep/sweep_int.h"

/* Fails with err's own message behind a prefix (err->msg is copied first:
 * it cannot be both the format's argument and its destination). */
static tc_status prefixed(tc_err *err, tc_status st, const char *prefix)
{
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err->msg);
    return tc_fail(err, st, "%s: %s", prefix, m);
}

static tc_status check_keys(const json_t *o, const char *const *valid, const char *what, tc_err *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        const char *best = valid[0];
        size_t bd = (size_t)-1;
        bool ok = false;
        for (int i = 0; valid[i]; i++) {
            ok = ok || strcmp(k, valid[i]) == 0;
            size_t d = tc_edit_distance(k, valid[i]);
            if (d < bd)
                bd = d, best = valid[i];
        }
        if (!ok)
            return tc_fail(err, TC_EINVAL, "%s: unknown key '%s' (did you mean '%s'? docs/SWEEP.md)", what, k, best);
    }
    return TC_OK;
}

/* FNV-1a, 64 bits (a checksum of the sweep's canonical text, not a
 * cryptographic hash: it tells one sweep's results from another's). */
static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static tc_status read_sweep(tc_sweep *sw, const json_t *spec, tc_err *err)
{
    static const char *const keys[] = {"mode", "axes", "seed", "seeds", NULL};
    char w[340];
    snprintf(w, sizeof w, "%s: sweep", sw->what);
    tc_status st = check_keys(spec, keys, w, err);
    if (st)
        return st;
    const json_t *mode = json_object_get(spec, "mode"), *axes = json_object_get(spec, "axes"),
                 *seed = json_object_get(spec, "seed"), *seeds = json_object_get(spec, "seeds");
    if (mode && (!json_is_string(mode) || (strcmp(json_string_value(mode), "product") != 0 &&
                                           strcmp(json_string_value(mode), "zip") != 0)))
        return tc_fail(err, TC_EINVAL, "%s.mode: expected \"product\" or \"zip\"", w);
    sw->zip = mode && strcmp(json_string_value(mode), "zip") == 0;
    if (seed && (!json_is_integer(seed) || json_integer_value(seed) < 0))
        return tc_fail(err, TC_EINVAL, "%s.seed: expected an integer from 0", w);
    sw->seed = seed ? (uint64_t)json_integer_value(seed) : 1;
    if (seeds && (!json_is_string(seeds) || (strcmp(json_string_value(seeds), "per-point") != 0 &&
                                             strcmp(json_string_value(seeds), "shared") != 0)))
        return tc_fail(err, TC_EINVAL, "%s.seeds: expected \"per-point\" or \"shared\"", w);
    sw->shared_seeds = seeds && strcmp(json_string_value(seeds), "shared") == 0;
    if (!axes)
        return tc_fail(err, TC_EINVAL, "%s: no \"axes\": expected {\"<key path>\": [values...], ...}", w);
    if (!json_is_object(axes))
        return tc_fail(err, TC_EINVAL, "%s.axes: expected an object {\"<key path>\": [values...], ...}", w);
    if (json_object_size(axes) == 0)
        return tc_fail(err, TC_EINVAL, "%s.axes: the sweep has zero points: give at least one axis", w);
    if (json_object_size(axes) > TC_SWEEP_MAX_AXES)
        return tc_fail(err, TC_EINVAL, "%s.axes: %zu axes, at most %d", w, json_object_size(axes),
                       TC_SWEEP_MAX_AXES);
    const char *k;
    json_t *v;
    sw->npoints = 1;
    json_object_foreach((json_t *)axes, k, v) {
        size_t a = sw->naxes;
        char key[256];
        long index;
        if (strlen(k) >= sizeof sw->path[0])
            return tc_fail(err, TC_EINVAL, "%s.axes: a key path of %zu bytes (at most 255)", w, strlen(k));
        if ((st = tc_scenario_path_parse(k, sw->command, key, sizeof key, &index, err))) {
            char pre[400];
            snprintf(pre, sizeof pre, "%s.axes", w);
            return prefixed(err, st, pre);
        }
        for (size_t b = 0; b < a; b++) {
            char kb[256];
            long ib;
            tc_scenario_path_parse(sw->path[b], sw->command, kb, sizeof kb, &ib, err);
            if (strcmp(kb, key) == 0 && (ib < 0 || index < 0 || ib == index))
                return tc_fail(err, TC_EINVAL, "%s.axes: '%s' and '%s' set the same value", w, sw->path[b], k);
        }
        if (!json_is_array(v))
            return tc_fail(err, TC_EINVAL, "%s.axes.%s: expected a list of values", w, k);
        if (json_array_size(v) == 0)
            return tc_fail(err, TC_EINVAL, "%s.axes.%s: no values: the sweep has zero points", w, k);
        snprintf(sw->path[a], sizeof sw->path[a], "%s", k);
        sw->values[a] = v;
        sw->len[a] = json_array_size(v);
        tc_keyset_add(&sw->keep, tc_scenario_key_index(key));
        if (sw->zip) {
            if (a > 0 && sw->len[a] != sw->len[0])
                return tc_fail(err, TC_EINVAL, "%s.axes: zip needs axes of one length: '%s' has %llu values, '%s' "
                                               "%llu",
                               w, sw->path[0], (unsigned long long)sw->len[0], k, (unsigned long long)sw->len[a]);
            sw->npoints = sw->len[0];
        } else {
            if (sw->npoints > TC_SWEEP_MAX_POINTS / sw->len[a])
                return tc_fail(err, TC_EINVAL, "%s.axes: more than %llu points", w,
                               (unsigned long long)TC_SWEEP_MAX_POINTS);
            sw->npoints *= sw->len[a];
        }
        sw->naxes++;
    }
    return TC_OK;
}

static void point_what(const tc_sweep *sw, uint64_t i, char *what, size_t len);

/* Keys that name a file the run writes. */
static const char *const out_files[] = {"flow.trace", "iteration.timeline", NULL};

/* The axis that sets out_files[f] (naxes: none). */
static size_t out_axis(const tc_sweep *sw, int f)
{
    size_t axis = sw->naxes;
    for (size_t a = 0; a < sw->naxes; a++) {
        char key[256];
        long index;
        tc_err e2;
        if (tc_scenario_path_parse(sw->path[a], sw->command, key, sizeof key, &index, &e2) == TC_OK &&
            strcmp(key, out_files[f]) == 0)
            axis = a;
    }
    return axis;
}

/* The first point whose value of axis a is its i-th. */
static uint64_t first_point_of(const tc_sweep *sw, size_t a, uint64_t i)
{
    if (sw->zip)
        return i;
    uint64_t stride = 1;
    for (size_t b = a + 1; b < sw->naxes; b++)
        stride *= sw->len[b];
    return i * stride;
}

/* An axis's file value: its file's identity (malloc'ed) and where it is. */
typedef struct file_val {
    char *key;
    size_t i;
} file_val;

static int by_key(const void *a, const void *b)
{
    const file_val *u = a, *v = b;
    int c = strcmp(u->key, v->key);
    return c ? c : (u->i > v->i) - (u->i < v->i);
}

/* Two values of a file axis that name one file as files ("t.json" and
 * "./t.json", a link and its target): refused, naming both points. */
static tc_status check_same_files(const tc_sweep *sw, size_t axis, tc_err *err)
{
    const json_t *vals = sw->values[axis];
    file_val *fv = malloc((json_array_size(vals) ? json_array_size(vals) : 1) * sizeof *fv);
    if (!fv)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    size_t n = 0;
    tc_status st = TC_OK;
    char key[TC_FILE_KEY_MAX];
    for (size_t i = 0; i < json_array_size(vals) && st == TC_OK; i++) {
        const json_t *v = json_array_get(vals, i);
        if (!json_is_string(v) || !json_string_value(v)[0])
            continue;
        const char *p = json_string_value(v);
        fv[n].key = tc_file_key(p, key, sizeof key) ? strdup(key) : NULL;
        if (!fv[n].key) {
            /* too long a name to compare as a file: compared as text */
            size_t l = strlen(p);
            fv[n].key = malloc(l + 2);
            if (fv[n].key) {
                fv[n].key[0] = 't';
                memcpy(fv[n].key + 1, p, l + 1);
            }
        }
        if (!fv[n].key)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        else
            fv[n++].i = i;
    }
    if (st == TC_OK && n > 1)
        qsort(fv, n, sizeof *fv, by_key);
    for (size_t k = 1; k < n && st == TC_OK; k++) {
        if (strcmp(fv[k].key, fv[k - 1].key) != 0)
            continue;
        char w1[600], w2[600];
        point_what(sw, first_point_of(sw, axis, fv[k - 1].i), w1, sizeof w1);
        point_what(sw, first_point_of(sw, axis, fv[k].i), w2, sizeof w2);
        st = tc_fail(err, TC_EINVAL, "%s and %s: %s '%.100s' and '%.100s' are one file, which each would write over "
                                     "the other's: give each point its own file",
                     w1, w2 + strlen(sw->what) + 2, sw->path[axis],
                     json_string_value(json_array_get(vals, fv[k - 1].i)),
                     json_string_value(json_array_get(vals, fv[k].i)));
    }
    for (size_t k = 0; k < n; k++)
        free(fv[k].key);
    free(fv);
    return st;
}

/* A sweep whose points would write one file twice is refused (each
 * point's file over the last one's, and MPI ranks writing it at once). An
 * axis may give every point its own. */
static tc_status check_outputs(const tc_sweep *sw, tc_err *err)
{
    const char *const *files = out_files;
    for (int f = 0; files[f]; f++) {
        size_t axis = out_axis(sw, f);
        if (axis == sw->naxes) {
            char sec[32];
            const char *dot = strchr(files[f], '.');
            snprintf(sec, sizeof sec, "%.*s", (int)(dot - files[f]), files[f]);
            const json_t *v = json_object_get(json_object_get(sw->scenario, sec), dot + 1);
            if (sw->npoints > 1 && json_is_string(v) && json_string_value(v)[0])
                return tc_fail(err, TC_EINVAL, "%s: scenario.%s: each of the sweep's %llu points would write '%.100s' "
                                               "over the last one's: leave %s out of a sweep, or give it as an "
                                               "axis with one file a point",
                               sw->what, files[f], (unsigned long long)sw->npoints, json_string_value(v), files[f]);
            continue;
        }
        /* points per value: the other axes' combinations (product), or 1 (zip) */
        uint64_t per = sw->zip ? 1 : sw->npoints / sw->len[axis];
        for (size_t i = 0; i < json_array_size(sw->values[axis]); i++) {
            const json_t *v = json_array_get(sw->values[axis], i);
            if (!json_is_string(v) || !json_string_value(v)[0])
                continue;
            uint64_t n = 0;
            for (size_t j = 0; j < json_array_size(sw->values[axis]); j++)
                n += json_equal(v, json_array_get(sw->values[axis], j)) ? per : 0;
            if (n > 1)
                return tc_fail(err, TC_EINVAL, "%s: sweep.axes.%s: %llu points would write '%.100s', each over the "
                                               "last one's: give each point its own file (the axis alone, or zip)",
                               sw->what, sw->path[axis], (unsigned long long)n, json_string_value(v));
        }
        tc_status st = check_same_files(sw, axis, err);
        if (st)
            return st;
    }
    return TC_OK;
}

tc_status tc_sweep_check_files(const tc_sweep *sw, const char *results, tc_err *err)
{
    for (int f = 0; out_files[f]; f++) {
        size_t axis = out_axis(sw, f);
        const json_t *base = NULL;
        if (axis == sw->naxes) {
            char sec[32];
            const char *dot = strchr(out_files[f], '.');
            snprintf(sec, sizeof sec, "%.*s", (int)(dot - out_files[f]), out_files[f]);
            base = json_object_get(json_object_get(sw->scenario, sec), dot + 1);
        }
        size_t nv = base ? 1 : axis < sw->naxes ? json_array_size(sw->values[axis]) : 0;
        for (size_t i = 0; i < nv; i++) {
            const json_t *v = base ? base : json_array_get(sw->values[axis], i);
            if (!json_is_string(v) || !json_string_value(v)[0])
                continue;
            const char *p = json_string_value(v);
            struct stat sb;
            bool sweep_file = sw->has_file && stat(p, &sb) == 0 && (uint64_t)sb.st_dev == sw->file_dev &&
                              (uint64_t)sb.st_ino == sw->file_ino;
            if (!sweep_file && !tc_same_file(p, results))
                continue;
            char w[600];
            point_what(sw, base ? 0 : first_point_of(sw, axis, i), w, sizeof w);
            return tc_fail(err, TC_EINVAL, "%s: %s '%.100s' is %s: give the point's %s another file", w,
                           out_files[f], p, sweep_file ? "the sweep file itself" : "the results file (-o)",
                           strcmp(out_files[f], "flow.trace") == 0 ? "trace" : "timeline");
        }
    }
    return TC_OK;
}

tc_status tc_sweep_from_json(json_t *root, const char *what, tc_sweep **out, tc_err *err)
{
    *out = NULL;
    tc_sweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    sw->root = json_incref(root);
    snprintf(sw->what, sizeof sw->what, "%.256s", what);
    static const char *const keys[] = {"scenario", "sweep", NULL};
    tc_status st = TC_OK;
    if (!json_is_object(root))
        st = tc_fail(err, TC_EINVAL, "%s: expected a JSON object {\"scenario\": {...}, \"sweep\": {...}}", what);
    else if (json_object_get(root, "topocc_sweep"))
        st = tc_fail(err, TC_EINVAL, "%s: this is a results file; the sweep is the file that made it (topocc sweep "
                                     "--status reads a results file)",
                     what);
    else
        st = check_keys(root, keys, what, err);
    const json_t *scn = st ? NULL : json_object_get(root, "scenario"), *spec = st ? NULL : json_object_get(root, "sweep");
    if (st == TC_OK && !json_is_object(scn))
        st = tc_fail(err, TC_EINVAL, "%s: \"scenario\": expected a scenario object (with its \"command\")", what);
    if (st == TC_OK && !json_is_object(spec))
        st = tc_fail(err, TC_EINVAL, "%s: \"sweep\": expected {\"mode\": ..., \"axes\": {...}}", what);
    const json_t *cmd = st ? NULL : json_object_get(scn, "command");
    if (st == TC_OK && !json_is_string(cmd))
        st = tc_fail(err, TC_EINVAL, "%s: scenario: no \"command\": expected e.g. \"command\": \"collective\"", what);
    if (st == TC_OK && (st = tc_command_parse(json_string_value(cmd), &sw->command, err))) {
        char pre[400];
        snprintf(pre, sizeof pre, "%s: scenario.command", what);
        st = prefixed(err, st, pre);
    }
    if (st == TC_OK) {
        sw->scenario = scn;
        st = read_sweep(sw, spec, err);
    }
    if (st == TC_OK)
        st = check_outputs(sw, err);
    if (st == TC_OK) {
        size_t n;
        char *text = tc_json_line(root, &n);
        if (!text)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        else
            snprintf(sw->hash, sizeof sw->hash, "%016llx", (unsigned long long)fnv1a(text, n));
        free(text);
    }
    if (st) {
        tc_sweep_free(sw);
        return st;
    }
    *out = sw;
    return TC_OK;
}

tc_status tc_sweep_load(const char *path, tc_sweep **out, tc_err *err)
{
    json_error_t je;
    bool in = strcmp(path, "-") == 0;
    char what[300];
    snprintf(what, sizeof what, "sweep %.256s", in ? "(standard input)" : path);
    struct stat sb;
    if (!in && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "%s: a directory: give a sweep file (SWEEP.json)", what);
    unsigned long mark = tc_oom_mark();
    if (!in) {
        /* A results file (JSON Lines) given for its sweep: say so. */
        json_t *first = json_load_file(path, JSON_DISABLE_EOF_CHECK, &je);
        bool results = json_is_object(first) && json_object_get(first, "topocc_sweep");
        json_decref(first);
        if (results)
            return tc_fail(err, TC_EINVAL, "%s: this is a results file; the sweep is the file that made it (topocc "
                                           "sweep --status reads a results file)",
                           what);
    }
    json_t *root = in ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je) : json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root)
        return je.line > 0 ? tc_fail(err, TC_EINVAL, "%s line %d, column %d: %s", what, je.line, je.column, je.text)
                           : tc_fail(err, TC_EINVAL, "%s: %s", what, je.text);
    tc_status st = tc_sweep_from_json(root, what, out, err);
    json_decref(root);
    if (st == TC_OK && !in && stat(path, &sb) == 0) {
        (*out)->has_file = true;
        (*out)->file_dev = (uint64_t)sb.st_dev;
        (*out)->file_ino = (uint64_t)sb.st_ino;
    }
    return st;
}

void tc_sweep_free(tc_sweep *sw)
{
    if (!sw)
        return;
    json_decref(sw->root);
    free(sw);
}

/* The value index of each axis at point i. */
static void point_index(const tc_sweep *sw, uint64_t i, uint64_t *idx)
{
    if (sw->zip) {
        for (size_t a = 0; a < sw->naxes; a++)
            idx[a] = i;
        return;
    }
    for (size_t a = sw->naxes; a-- > 0;) {
        idx[a] = i % sw->len[a];
        i /= sw->len[a];
    }
}

json_t *tc_sweep_values(const tc_sweep *sw, uint64_t i)
{
    uint64_t idx[TC_SWEEP_MAX_AXES];
    point_index(sw, i, idx);
    unsigned long mark = tc_oom_mark();
    json_t *o = json_object();
    for (size_t a = 0; o && a < sw->naxes; a++)
        json_object_set(o, sw->path[a], json_array_get(sw->values[a], idx[a]));
    return tc_json_checked(o, mark);
}

uint64_t tc_sweep_point_seed(const tc_sweep *sw, uint64_t i)
{
    if (sw->shared_seeds)
        return 0;
    /* Positive and below 2^53: exact in every JSON reader. */
    return tc_mix64(sw->seed + (i + 1) * 0x9e3779b97f4a7c15ull) >> 11;
}

/* A value as a short text for messages. */
static void value_text(const json_t *v, char *buf, size_t len)
{
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(buf, len, "%s", t ? t : "?");
    if (strlen(buf) > 60)
        snprintf(buf + 57, len - 57, "...");
    free(t);
}

/* "SWEEP: point I (AXIS=VALUE, ...)", for messages. */
static void point_what(const tc_sweep *sw, uint64_t i, char *what, size_t len)
{
    uint64_t idx[TC_SWEEP_MAX_AXES];
    point_index(sw, i, idx);
    int n = snprintf(what, len, "%s: point %llu (", sw->what, (unsigned long long)i);
    for (size_t a = 0; a < sw->naxes && n > 0 && (size_t)n < len; a++) {
        char v[80];
        value_text(json_array_get(sw->values[a], idx[a]), v, sizeof v);
        n += snprintf(what + n, len - (size_t)n, "%s%s=%s", a ? ", " : "", sw->path[a], v);
    }
    if (n > 0 && (size_t)n < len)
        snprintf(what + n, len - (size_t)n, ")");
}

tc_status tc_sweep_point(const tc_sweep *sw, uint64_t i, tc_scenario **out, tc_err *err)
{
    *out = NULL;
    uint64_t idx[TC_SWEEP_MAX_AXES];
    point_index(sw, i, idx);
    char what[600];
    point_what(sw, i, what, sizeof what);
    /* A value left out of the point's scenario for want of memory would
     * run another point. */
    unsigned long mark = tc_oom_mark();
    json_t *root = json_deep_copy(sw->scenario);
    if (!root)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (size_t a = 0; a < sw->naxes && st == TC_OK; a++)
        if ((st = tc_scenario_json_set(root, sw->path[a], sw->command, json_array_get(sw->values[a], idx[a]), err)))
            st = prefixed(err, st, what);
    tc_scenario *s = st ? NULL : tc_scenario_new(sw->command);
    if (st == TC_OK && !s)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    /* the base's keys an axis makes moot at this point are left out of it
     * (a DDP point of a sweep over sync.strategy whose base sets
     * sync.inner_steps); an axis's own key must apply */
    if (st == TC_OK) {
        const char *strict[TC_SWEEP_MAX_AXES];
        for (size_t a = 0; a < sw->naxes; a++)
            strict[a] = sw->path[a];
        tc_scenario_allow_moot(s, strict, sw->naxes);
        st = tc_scenario_read_json(s, root, what, err);
    }
    json_decref(root);
    if (tc_oom_since(mark))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK) {
        snprintf(s->version, sizeof s->version, "%s", tc_version());
        snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
        st = tc_scenario_resolve(s, err);
        if (st == TC_OK && !sw->shared_seeds) {
            tc_scenario_derive_seeds(s, tc_sweep_point_seed(sw, i), &sw->keep);
            st = tc_scenario_resolve(s, err);
        }
        if (st == TC_OK)
            st = tc_scenario_check_given(s, err);
        if (st && strncmp(err->msg, what, strlen(what)) != 0)
            prefixed(err, st, what);
    }
    if (st) {
        tc_scenario_free(s);
        return st;
    }
    *out = s;
    return TC_OK;
}

tc_status tc_sweep_point_validate(const tc_sweep *sw, uint64_t i, tc_err *err)
{
    tc_scenario *s;
    tc_status st = tc_sweep_point(sw, i, &s, err);
    if (st)
        return st;
    if ((st = tc_scenario_check_run(s, err))) {
        char what[600];
        point_what(sw, i, what, sizeof what);
        st = prefixed(err, st, what);
    }
    tc_scenario_free(s);
    return st;
}

/* Points validated between two looks at the clock (each takes tens of
 * microseconds), and seconds between two progress reports, at least. */
#define VALIDATE_CLOCK_POINTS 64
#define VALIDATE_PROGRESS_S 0.25

static void validate_report(tc_progress_fn fn, void *ud, uint64_t done, uint64_t total, double t0, double now)
{
    double el = now - t0;
    tc_progress p = {.what = "validating the sweep's points (--no-validate skips this)",
                     .fraction = total ? (double)done / (double)total : 1,
                     .done = (double)done,
                     .total = (double)total,
                     .unit = "points",
                     .rate = el > 0 ? (double)done / el : 0};
    fn(ud, &p);
}

tc_status tc_sweep_validate(const tc_sweep *sw, uint64_t first, uint64_t stride, tc_progress_fn progress,
                            void *progress_ud, uint64_t *bad, tc_err *err)
{
    *bad = UINT64_MAX;
    uint64_t step = stride ? stride : 1, done = 0;
    uint64_t total = first < sw->npoints ? (sw->npoints - first - 1) / step + 1 : 0;
    double t0 = progress ? tc_mono_now() : 0, last = t0;
    if (progress)
        validate_report(progress, progress_ud, 0, total, t0, t0);
    for (uint64_t i = first; i < sw->npoints; i += step) {
        tc_status st = tc_sweep_point_validate(sw, i, err);
        if (st) {
            *bad = i;
            return st;
        }
        if (progress && ++done % VALIDATE_CLOCK_POINTS == 0) {
            double now = tc_mono_now();
            if (now - last >= VALIDATE_PROGRESS_S) {
                validate_report(progress, progress_ud, done, total, t0, now);
                last = now;
            }
        }
    }
    if (progress)
        validate_report(progress, progress_ud, total, total, t0, tc_mono_now());
    return TC_OK;
}

json_t *tc_sweep_header(const tc_sweep *sw)
{
    unsigned long mark = tc_oom_mark();
    json_t *axes = json_object();
    for (size_t a = 0; a < sw->naxes; a++)
        json_object_set(axes, sw->path[a], (json_t *)sw->values[a]);
    json_t *h = json_pack("{s:i, s:s, s:I, s:s, s:o, s:O, s:s, s:I, s:{s:s, s:s}}", "topocc_sweep", TC_SWEEP_FORMAT, "hash",
                     sw->hash, "points", (json_int_t)sw->npoints, "mode", sw->zip ? "zip" : "product", "axes", axes,
                     "scenario", sw->scenario, "seeds", sw->shared_seeds ? "shared" : "per-point", "seed",
                     (json_int_t)sw->seed, "topocc", "version", tc_version(), "commit", tc_commit());
    return tc_json_checked(h, mark);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char *tc_sweep_eval(const tc_sweep *sw, uint64_t i, const tc_run_opts *ro, size_t *len, tc_status *point_st,
                    char *point_err, size_t errlen)
{
    tc_err err = {{0}};
    double t0 = now_s();
    tc_scenario *s = NULL;
    tc_outcome o = {0};
    bool ran = false;
    tc_status st = tc_sweep_point(sw, i, &s, &err);
    if (st == TC_OK) {
        st = tc_scenario_run(s, ro, &o, &err);
        ran = st == TC_OK;
    }
    double dt = now_s() - t0;
    /* The line, whole or none (a key left out for want of memory). */
    unsigned long mark = tc_oom_mark();
    json_t *line = json_pack("{s:I, s:o}", "point", (json_int_t)i, "values", tc_sweep_values(sw, i));
    if (line)
        json_object_set_new(line, "seed",
                            sw->shared_seeds ? json_null() : json_integer((json_int_t)tc_sweep_point_seed(sw, i)));
    if (line && ran) {
        json_t *doc = tc_outcome_json(&o, s);
        if (doc)
            json_object_del(doc, "scenario");
        json_object_set_new(line, "elapsed_s", json_real(dt));
        json_object_set_new(line, "scenario", tc_scenario_to_json(s));
        json_object_set_new(line, "result", doc ? doc : json_null());
    } else if (line) {
        json_object_set_new(line, "error", json_string(err.msg[0] ? err.msg : "internal error"));
    }
    *point_st = st;
    if (point_err && errlen)
        snprintf(point_err, errlen, "%s", st ? err.msg : "");
    if (ran)
        tc_outcome_free(&o);
    tc_scenario_free(s);
    line = tc_json_checked(line, mark);
    char *text = line ? tc_json_line(line, len) : NULL;
    json_decref(line);
    return text;
}
