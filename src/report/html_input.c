/*
 * html_input.c - what `topocc report` reads: a scenario, a result document
 * or a sweep's results file, told apart by their content.
 *
 * A results file is JSON Lines written while a sweep runs, possibly by
 * several processes and merged: its points come in any order, a point may
 * appear twice (the first line is used, a result before an error: a
 * failed point run again) and the last line may be torn by a run still
 * going or killed (it is left out, and said so). Any other bad
 * line is an error naming its number, as is a document that is neither a
 * scenario nor a result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/html.h"
#include "topocc/scenario.h"
#include "topocc/sweep.h"

void tc_html_sweep_free(tc_html_sweep *sw)
{
    json_decref(sw->header);
    for (size_t i = 0; i < sw->npoints; i++)
        json_decref(sw->points[i]);
    free(sw->points);
    memset(sw, 0, sizeof *sw);
}

void tc_html_input_free(tc_html_input *in)
{
    json_decref(in->doc);
    tc_html_sweep_free(&in->sweep);
    memset(in, 0, sizeof *in);
}

/* The whole file (or standard input) in memory, NUL-terminated. */
static tc_status slurp(const char *path, char **buf, size_t *len, tc_err *err)
{
    bool std = strcmp(path, "-") == 0;
    FILE *f = std ? stdin : fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "cannot read '%s': %s", path, strerror(errno));
    /* JSON text holds no NUL byte (and a device such as /dev/zero would
     * never end) */
    int rc = tc_read_stream(f, SIZE_MAX, true, buf, len);
    if (!std)
        fclose(f);
    if (rc == EILSEQ)
        return tc_fail(err, TC_EINVAL, "'%s': holds a NUL byte: expected a topocc scenario, result or sweep results file",
                       path);
    if (rc == ENOMEM || rc == EFBIG)
        return tc_fail(err, TC_EINTERNAL, "out of memory reading '%s'", path);
    if (rc)
        return tc_fail(err, TC_EINVAL, "cannot read '%s': %s", path, strerror(rc));
    return TC_OK;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

static tc_status check_header(const json_t *h, const char *what, tc_err *err)
{
    const json_t *fmt = json_object_get(h, "topocc_sweep"), *axes = json_object_get(h, "axes"),
                 *scn = json_object_get(h, "scenario");
    if (!json_is_integer(fmt) || json_integer_value(fmt) < 1)
        return tc_fail(err, TC_EINVAL, "%s line 1: \"topocc_sweep\" must be 1", what);
    if (json_integer_value(fmt) > 1)
        return tc_fail(err, TC_EINVAL, "%s: a sweep results file of format %lld, written by a newer topocc (this one "
                                       "reads format 1)",
                       what, (long long)json_integer_value(fmt));
    if (!json_is_object(axes))
        return tc_fail(err, TC_EINVAL, "%s line 1: \"axes\" must be an object {\"<key path>\": [values...]}", what);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)axes, k, v) {
        if (!json_is_array(v))
            return tc_fail(err, TC_EINVAL, "%s line 1: axes[\"%.100s\"] must be an array of values", what, k);
    }
    if (!json_is_object(scn) || !json_is_string(json_object_get(scn, "command")))
        return tc_fail(err, TC_EINVAL, "%s line 1: \"scenario\" must be the sweep's scenario, with its \"command\"",
                       what);
    const json_t *n = json_object_get(h, "points");
    if (!json_is_integer(n) || json_integer_value(n) < 0)
        return tc_fail(err, TC_EINVAL, "%s line 1: \"points\" must be the sweep's number of points", what);
    return TC_OK;
}

static tc_status check_point(const json_t *p, const json_t *h, const char *what, size_t line, tc_err *err)
{
    const json_t *i = json_object_get(p, "point");
    if (!json_is_object(p))
        return tc_fail(err, TC_EINVAL, "%s line %zu: expected a point {\"point\", \"values\", ...}", what, line);
    if (!json_is_integer(i) || json_integer_value(i) < 0 ||
        json_integer_value(i) >= json_integer_value(json_object_get(h, "points")))
        return tc_fail(err, TC_EINVAL, "%s line %zu: \"point\" must be a point's number, 0 to %lld", what, line,
                       (long long)json_integer_value(json_object_get(h, "points")) - 1);
    if (!json_is_object(json_object_get(p, "values")))
        return tc_fail(err, TC_EINVAL, "%s line %zu: \"values\" must be an object {\"<key path>\": value}", what,
                       line);
    bool ok = json_is_object(json_object_get(p, "result")), bad = json_is_string(json_object_get(p, "error"));
    if (ok == bad)
        return tc_fail(err, TC_EINVAL, "%s line %zu: a point has either \"result\" (an object) or \"error\" (a "
                                       "string)",
                       what, line);
    /* its values are its point's, as resume, --status and --merge check */
    unsigned long mark = tc_oom_mark();
    json_t *want = tc_sweep_header_values(h, (uint64_t)json_integer_value(i));
    bool oom = tc_oom_since(mark),
         same = !want || oom || json_equal(want, json_object_get(p, "values"));
    json_decref(want);
    if (oom)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (!same)
        return tc_fail(err, TC_EINVAL, "%s line %zu (point %lld): its \"values\" are not those of its point by the "
                                       "header's axes: the file is damaged",
                       what, line, (long long)json_integer_value(i));
    return TC_OK;
}

/* A point line read: its record and its line number. */
typedef struct rec {
    json_t *j;
    size_t line;
} rec;

static int same_point(const rec *u, const rec *v)
{
    json_int_t i = json_integer_value(json_object_get(u->j, "point"));
    json_int_t k = json_integer_value(json_object_get(v->j, "point"));
    return i != k ? (i < k ? -1 : 1) : 0;
}

/* By point; a point's result before its errors (a failed point run again
 * has its result written after the error), then in file order. */
static int by_point(const void *a, const void *b)
{
    const rec *u = a, *v = b;
    int c = same_point(u, v);
    if (c)
        return c;
    bool eu = json_object_get(u->j, "error") != NULL, ev = json_object_get(v->j, "error") != NULL;
    if (eu != ev)
        return eu ? 1 : -1;
    return u->line < v->line ? -1 : u->line > v->line;
}

/* A results file: the header, then the points. */
static tc_status read_sweep(char *buf, size_t len, const char *what, tc_html_sweep *sw, tc_err *err)
{
    memset(sw, 0, sizeof *sw);
    size_t line = 0, nrec = 0, cap = 0;
    rec *recs = NULL;
    char *p = buf, *end = buf + len;
    tc_status st = TC_OK;
    while (p < end && st == TC_OK) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        line++;
        if (blank(p, (size_t)(le - p))) {
            p = le + 1;
            continue;
        }
        json_error_t je;
        json_t *j = json_loadb(p, (size_t)(le - p), JSON_REJECT_DUPLICATES, &je);
        bool last = !nl || blank(le + 1, (size_t)(end - le - 1));
        p = le + 1;
        if (!j && line > 1 && last) {
            /* Torn: a run still going, or killed while writing. */
            sw->torn_line = line;
            break;
        }
        if (!j) {
            st = tc_fail(err, TC_EINVAL, "%s line %zu, column %d: %s", what, line, je.column, je.text);
            break;
        }
        if (!sw->header) {
            sw->header = j;
            st = check_header(j, what, err);
            continue;
        }
        sw->lines++;
        if ((st = check_point(j, sw->header, what, line, err))) {
            json_decref(j);
            break;
        }
        if (nrec == cap) {
            size_t nc = cap ? 2 * cap : 64;
            rec *nr = realloc(recs, nc * sizeof *nr);
            if (!nr) {
                json_decref(j);
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
                break;
            }
            recs = nr;
            cap = nc;
        }
        recs[nrec++] = (rec){j, line};
    }
    if (st == TC_OK && !sw->header)
        st = tc_fail(err, TC_EINVAL, "%s: empty file", what);
    /* By point, each point's first line kept. */
    if (st == TC_OK && nrec) {
        qsort(recs, nrec, sizeof *recs, by_point);
        sw->points = malloc(nrec * sizeof *sw->points);
        if (!sw->points)
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    /* A duplicate is compared with the last line kept (its point number
     * saved): the lines already dropped are freed. */
    json_int_t kept = 0;
    for (size_t i = 0; i < nrec; i++) {
        json_int_t k = json_integer_value(json_object_get(recs[i].j, "point"));
        bool dup = st == TC_OK && sw->npoints > 0 && k == kept;
        if (st || dup) {
            sw->duplicates += dup;
            json_decref(recs[i].j);
            continue;
        }
        sw->points[sw->npoints++] = recs[i].j;
        kept = k;
        sw->failed += json_object_get(recs[i].j, "error") != NULL;
    }
    sw->cap = sw->npoints;
    free(recs);
    if (st)
        tc_html_sweep_free(sw);
    return st;
}

/* What a result of each command holds (docs/SCHEMA.md), as the report
 * reads it: a key and its kind, '[' an array of objects, '#' a number,
 * '$' a string. A command with two forms (collective: several results or
 * one; train: one split or --search's) names both. */
typedef struct body_key {
    const char *key;
    char kind;
} body_key;
static const struct {
    const char *command;
    body_key keys[2];
    const char *says; /* what is accepted, for the message */
} bodies[] = {
    {"collective", {{"results", '['}, {"time_s", '#'}}, "\"results\" (an array of result objects) or one result's \"time_s\" (a number)"},
    {"compare", {{"results", '['}}, "\"results\" (an array of result objects)"},
    {"concurrent", {{"jobs", '['}}, "\"jobs\" (an array of job objects)"},
    {"failures", {{"topologies", '['}}, "\"topologies\" (an array of objects, one per topology)"},
    {"cluster", {{"topologies", '['}}, "\"topologies\" (an array of objects, one per topology)"},
    {"train", {{"iter_s", '#'}, {"splits", '['}}, "\"iter_s\" (a number) or --search's \"splits\" (an array of objects)"},
    {"compress", {{"results", '['}}, "\"results\" (an array of objects, one per codec)"},
    {"codec-bench", {{"codecs", '['}}, "\"codecs\" (an array of objects, one per codec)"},
    {"train-accuracy", {{"curves", '['}}, "\"curves\" (an array of objects, one per codec)"},
    {"topo", {{"topology", '$'}}, "\"topology\" (its spec, a string)"},
};

static bool holds(const json_t *doc, body_key k)
{
    const json_t *v = json_object_get(doc, k.key);
    if (k.kind == '#')
        return json_is_number(v);
    if (k.kind == '$')
        return json_is_string(v);
    if (!json_is_array(v))
        return false;
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!json_is_object(json_array_get(v, i)))
            return false;
    return true;
}

/* A result document of a known command holding what its command writes:
 * else TC_EINVAL naming what is missing or wrong and what is accepted. */
static tc_status check_result(const json_t *doc, const char *command, const char *what, tc_err *err)
{
    tc_command c;
    tc_err e2;
    if (tc_command_parse(command, &c, &e2))
        return tc_fail(err, TC_EINVAL, "%s: a result of an unknown command '%.64s': accepted are topo, collective, "
                                       "compare, concurrent, codec-bench, train-accuracy, compress, failures, "
                                       "cluster, train",
                       what, command);
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        if (strcmp(bodies[i].command, command) != 0)
            continue;
        const body_key *k = bodies[i].keys;
        for (size_t j = 0; j < 2 && k[j].key; j++)
            if (holds(doc, k[j]))
                return TC_OK;
        /* name the first key given (and wrong), else say it is missing */
        for (size_t j = 0; j < 2 && k[j].key; j++)
            if (json_object_get(doc, k[j].key))
                return tc_fail(err, TC_EINVAL, "%s: a result of %s whose \"%s\" is not what %s writes: expected %s",
                               what, command, k[j].key, command, bodies[i].says);
        return tc_fail(err, TC_EINVAL, "%s: a result of %s without its results: expected %s (docs/SCHEMA.md)", what,
                       command, bodies[i].says);
    }
    return TC_OK;
}

/* The first line is a sweep's header. */
static bool is_sweep(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len);
    json_t *j = json_loadb(buf, nl ? (size_t)(nl - buf) : len, 0, NULL);
    bool yes = json_is_object(j) && json_object_get(j, "topocc_sweep");
    json_decref(j);
    return yes;
}

tc_status tc_html_input_read(const char *path, tc_html_input *in, tc_err *err)
{
    memset(in, 0, sizeof *in);
    const char *base = strrchr(path, '/');
    snprintf(in->name, sizeof in->name, "%.256s", strcmp(path, "-") == 0 ? "(standard input)" : base ? base + 1 : path);
    char what[300];
    snprintf(what, sizeof what, "%.256s", strcmp(path, "-") == 0 ? "(standard input)" : path);
    char *buf = NULL;
    size_t len = 0;
    tc_status st = slurp(path, &buf, &len, err);
    if (st)
        return st;
    if (blank(buf, len)) {
        free(buf);
        return tc_fail(err, TC_EINVAL, "%s: empty file: expected a scenario, a result or a sweep's results", what);
    }
    const json_t *cmd = NULL;
    if (is_sweep(buf, len)) {
        in->kind = TC_HTML_SWEEP;
        st = read_sweep(buf, len, what, &in->sweep, err);
        free(buf);
        if (st)
            return st;
        cmd = json_object_get(json_object_get(in->sweep.header, "scenario"), "command");
    } else {
        json_error_t je;
        in->doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        free(buf);
        if (!in->doc)
            return je.line > 0 ? tc_fail(err, TC_EINVAL, "%s line %d, column %d: %s", what, je.line, je.column,
                                         je.text)
                               : tc_fail(err, TC_EINVAL, "%s: %s", what, je.text);
        const json_t *scn = json_object_get(in->doc, "scenario");
        /* one point's line of a sweep's results (as replay takes it): its
         * result with its scenario, as a result file holds them */
        const json_t *point = json_object_get(in->doc, "point"), *pres = json_object_get(in->doc, "result");
        /* a failed point's line: {"point", "values", "seed", "error"}, no
         * scenario (docs/SWEEP.md); said so as replay says it, with the
         * error quoted (cut with "..." when long) */
        long long k;
        char e[160];
        if (tc_sweep_failed_point(in->doc, &k, e, sizeof e)) {
            tc_html_input_free(in);
            return tc_fail(err, TC_EINVAL, "%s: this line records point %lld of a sweep, which failed: it holds no "
                                           "result to report (its error: \"%s\")",
                           what, k, e);
        }
        if (json_is_object(in->doc) && json_is_integer(point) && json_is_object(scn)) {
            if (json_is_object(pres) && json_object_get(pres, "schema_version")) {
                json_t *r = json_deep_copy(pres);
                if (!r || json_object_set(r, "scenario", (json_t *)scn) != 0) {
                    json_decref(r);
                    tc_html_input_free(in);
                    return tc_fail(err, TC_EINTERNAL, "out of memory");
                }
                json_decref(in->doc);
                in->doc = r;
                scn = json_object_get(in->doc, "scenario");
            }
        }
        if (json_is_object(in->doc) && json_object_get(in->doc, "schema_version") && json_is_object(scn)) {
            in->kind = TC_HTML_RESULT;
            cmd = json_object_get(in->doc, "command");
            if (!json_is_string(cmd))
                cmd = json_object_get(scn, "command");
        } else if (json_is_object(in->doc) && !json_object_get(in->doc, "schema_version") &&
                   json_is_string(json_object_get(in->doc, "command"))) {
            in->kind = TC_HTML_SCENARIO;
            cmd = json_object_get(in->doc, "command");
        }
    }
    if (!json_is_string(cmd)) {
        tc_html_input_free(in);
        return tc_fail(err, TC_EINVAL, "%s: not a scenario (\"command\", no \"schema_version\"), a result "
                                       "(\"schema_version\" and \"scenario\"), a sweep's results (JSON Lines "
                                       "headed by \"topocc_sweep\") or one point's line of them (\"point\", "
                                       "\"scenario\" and \"result\")",
                       what);
    }
    if (in->kind == TC_HTML_RESULT && (st = check_result(in->doc, json_string_value(cmd), what, err))) {
        tc_html_input_free(in);
        return st;
    }
    snprintf(in->command, sizeof in->command, "%s", json_string_value(cmd));
    return TC_OK;
}
