/*
 * json.c - a scenario in and out of JSON through the key table. Reading is
 * strict (an unknown key is an error naming the nearest valid one, since a
 * misspelt key silently ignored is a silently wrong answer); writing is
 * canonical (the table's order, only the keys that apply, shortest
 * round-trip numbers), so what is written reads back to itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "scenario/keys.h"

static const char *top_scalars[] = {"scenario_version", "command", "topocc", NULL};

static bool is_section(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const char *p = tc_scn_key_get(i)->path;
        if (strncmp(p, name, n) == 0 && p[n] == '.')
            return true;
    }
    return false;
}

/* The valid path nearest to path, never path itself (a name refused
 * where it is given is refused for another reason than a misspelling). */
static const char *nearest_path(const char *path)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        size_t d = tc_edit_distance(path, tc_scn_key_get(i)->path);
        if (d < bd && d > 0)
            bd = d, best = tc_scn_key_get(i)->path;
    }
    for (int i = 0; top_scalars[i]; i++) {
        size_t d = tc_edit_distance(path, top_scalars[i]);
        if (d < bd && d > 0)
            bd = d, best = top_scalars[i];
    }
    return best;
}

static tc_status unknown(const char *what, const char *path, tc_err *err)
{
    return tc_fail(err, TC_EINVAL, "%s: unknown key '%s' (did you mean '%s'? docs/SCENARIO.md lists every key)", what,
                   path, nearest_path(path));
}

/* Every key of root must be in the table (or a top-level scalar). */
static tc_status check_known(const json_t *root, const char *what, tc_err *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)root, k, v) {
        bool top = false;
        for (int i = 0; top_scalars[i]; i++)
            top = top || strcmp(k, top_scalars[i]) == 0;
        if (top || tc_scn_key_index(k) >= 0)
            continue;
        if (!is_section(k))
            return unknown(what, k, err);
        if (!json_is_object(v))
            return tc_fail(err, TC_EINVAL, "%s: %s: expected an object (a section of keys)", what, k);
        const char *k2;
        json_t *v2;
        json_object_foreach(v, k2, v2) {
            char path[256];
            snprintf(path, sizeof path, "%s.%s", k, k2);
            if (tc_scn_key_index(path) < 0)
                return unknown(what, path, err);
        }
    }
    return TC_OK;
}

static const json_t *lookup(const json_t *root, const char *path)
{
    const char *dot = strchr(path, '.');
    if (!dot)
        return json_object_get(root, path);
    char sec[64];
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - path), path);
    const json_t *o = json_object_get(root, sec);
    return json_is_object(o) ? json_object_get(o, dot + 1) : NULL;
}

static tc_status read_header(tc_scenario *s, const json_t *root, const char *what, tc_err *err)
{
    const json_t *v = json_object_get(root, "scenario_version");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1))
        return tc_fail(err, TC_EINVAL, "%s: scenario_version: expected an integer (1)", what);
    if (v && json_integer_value(v) > TC_SCENARIO_VERSION)
        return tc_fail(err, TC_EINVAL, "%s: scenario_version %lld is newer than this topocc reads (%d): upgrade topocc",
                       what, (long long)json_integer_value(v), TC_SCENARIO_VERSION);
    v = json_object_get(root, "command");
    if (v) {
        tc_command c;
        tc_err e2;
        if (!json_is_string(v) || tc_command_parse(json_string_value(v), &c, &e2))
            return tc_fail(err, TC_EINVAL, "%s: command: %s", what,
                           json_is_string(v) ? e2.msg : "expected a string such as \"collective\"");
        if (c != s->command)
            return tc_fail(err, TC_EINVAL, "%s: the scenario is for 'topocc %s', not 'topocc %s'", what,
                           tc_command_name(c), tc_command_name(s->command));
    }
    v = json_object_get(root, "topocc");
    if (v) {
        const json_t *ver = json_object_get(v, "version"), *com = json_object_get(v, "commit");
        if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_string(ver) || !json_is_string(com))
            return tc_fail(err, TC_EINVAL, "%s: topocc: expected {\"version\": \"...\", \"commit\": \"...\"}", what);
        snprintf(s->version, sizeof s->version, "%s", json_string_value(ver));
        snprintf(s->commit, sizeof s->commit, "%s", json_string_value(com));
    }
    return TC_OK;
}

/* Keys that earlier versions wrote where they changed nothing (the
 * contention factors with --dma or --no-overlap, --dma with --no-overlap,
 * the communication order with ZeRO 3 or DP 1, the DP and TP algorithms
 * with DP or TP 1, a proxy's shape keys for another
 * proxy: train.width for mlp, train.hidden for cnn and chartf, ...; the
 * weight decay of the SGD proxies, mlp and cnn), before
 * their condition was added:
 * a saved scenario holding one where it is moot is read, the key dropped,
 * so it replays as it ran; a flag setting one there is refused. */
static bool written_moot(const char *path)
{
    static const char *const keys[] = {"iteration.s_c",   "iteration.s_m",     "iteration.dma", "iteration.comm_order",
                                       "iteration.dp_algo", "iteration.tp_algo", "train.hidden",  "train.width",
                                       "train.layers",    "train.heads",       "train.context", "train.weight_decay"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(path, keys[i]) == 0)
            return true;
    return false;
}

void tc_scenario_allow_moot(tc_scenario *s, const char *const *strict, size_t n)
{
    for (size_t i = 0; i < tc_scn_key_count(); i++)
        tc_keyset_add(&s->moot_ok, (int)i);
    for (size_t a = 0; a < n; a++) {
        int ki = tc_scn_key_index(strict[a]);
        if (ki >= 0)
            tc_keyset_del(&s->moot_ok, ki);
    }
}

tc_status tc_scenario_read_json(tc_scenario *s, const json_t *root, const char *what, tc_err *err)
{
    if (!json_is_object(root))
        return tc_fail(err, TC_EINVAL, "%s: expected a JSON object (a scenario, or a result with a \"scenario\")",
                       what);
    tc_status st;
    if ((st = check_known(root, what, err)) || (st = read_header(s, root, what, err)))
        return st;
    tc_keyset before = s->given_mask;
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const tc_scn_key *k = tc_scn_key_get(i);
        const json_t *v = lookup(root, k->path);
        if (!v)
            continue;
        char where[300];
        snprintf(where, sizeof where, "%s: %s", what, k->path);
        if (!(k->cmds & TC_CMD_BIT(s->command)))
            return tc_fail(err, TC_EINVAL, "%s does not apply to 'topocc %s'", where, tc_command_name(s->command));
        if ((st = tc_scn_set_key(s, k->path, v, where, err)))
            return st;
    }
    /* The file's keys must apply to the file's own scenario; a flag given
     * later may change what applies (--mode formula over a flow scenario),
     * and then the keys it made moot are dropped, not refused. */
    tc_keyset file;
    for (int w = 0; w < TC_KEYSET_MAX / 64; w++)
        file.w[w] = s->given_mask.w[w] & ~before.w[w];
    int ip = tc_scn_key_index("job.place"), ie = tc_scn_key_index("job.endpoints");
    if (tc_keyset_has(&file, ie) && !tc_keyset_has(&file, ip) && s->job.nendpoints)
        s->job.policy = TC_PLACE_LIST;
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const tc_scn_key *k = tc_scn_key_get(i);
        if (tc_keyset_has(&file, (int)i) && !tc_scn_key_applies(k, s) && !tc_keyset_has(&s->moot_ok, (int)i) &&
            !written_moot(k->path))
            return tc_fail(err, TC_EINVAL, "%s: %s applies only with %s", what, k->path, k->needs);
    }
    s->given_mask = before;
    return TC_OK;
}

/* The JSON of path ("-": standard input) into *root; what names it in
 * messages ("scenario FILE"). */
static tc_status load_root(const char *path, json_t **root, char *what, size_t len, tc_err *err)
{
    json_error_t je;
    bool in = strcmp(path, "-") == 0;
    struct stat sb;
    *root = NULL;
    if (!in && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "scenario %.256s: a directory: give a scenario file (SCENARIO.json)", path);
    unsigned long mark = tc_oom_mark();
    json_t *r = in ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je) : json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(r);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    snprintf(what, len, "scenario %.256s", in ? "(standard input)" : path);
    if (!r) {
        if (je.line <= 0)
            return tc_fail(err, TC_EINVAL, "%s: %s", what, je.text);
        return tc_fail(err, TC_EINVAL, "%s line %d, column %d: %s", what, je.line, je.column, je.text);
    }
    *root = r;
    return TC_OK;
}

tc_status tc_scenario_load(tc_scenario *s, const char *path, tc_err *err)
{
    char what[300];
    json_t *root;
    tc_status st = load_root(path, &root, what, sizeof what, err);
    if (st)
        return st;
    /* A saved result holds its scenario. */
    const json_t *scn = json_object_get(root, "scenario");
    bool result = json_is_object(scn) && json_object_get(root, "schema_version");
    if (result)
        snprintf(what, sizeof what, "result %.256s: scenario", strcmp(path, "-") == 0 ? "(standard input)" : path);
    st = tc_scenario_read_json(s, result ? scn : root, what, err);
    json_decref(root);
    return st;
}

const json_t *tc_scenario_of_document(const json_t *root)
{
    const json_t *scn = json_object_get(root, "scenario");
    if (json_is_object(scn) &&
        (json_object_get(root, "schema_version") || json_is_integer(json_object_get(root, "point"))))
        return scn;
    return root;
}

tc_status tc_scenario_from_json(const json_t *root, const char *what, tc_scenario **out, tc_err *err)
{
    *out = NULL;
    const json_t *scn = tc_scenario_of_document(root);
    const json_t *cmd = json_is_object(scn) ? json_object_get(scn, "command") : NULL;
    if (!json_is_string(cmd))
        return tc_fail(err, TC_EINVAL, "%s: no \"command\": expected a scenario or a result written by topocc", what);
    tc_command c;
    tc_status st = tc_command_parse(json_string_value(cmd), &c, err);
    if (st)
        return st;
    tc_scenario *s = tc_scenario_new(c);
    if (!s)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if ((st = tc_scenario_read_json(s, scn, what, err)) != TC_OK) {
        tc_scenario_free(s);
        return st;
    }
    *out = s;
    return TC_OK;
}

tc_status tc_scenario_open(const char *path, tc_scenario **out, tc_err *err)
{
    char what[300];
    json_t *root;
    *out = NULL;
    tc_status st = load_root(path, &root, what, sizeof what, err);
    if (st == TC_OK)
        st = tc_scenario_from_json(root, what, out, err);
    json_decref(root);
    return st;
}

static json_t *section(json_t *root, const char *path, const char **leaf)
{
    const char *dot = strchr(path, '.');
    if (!dot) {
        *leaf = path;
        return root;
    }
    char sec[64];
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - path), path);
    json_t *o = json_object_get(root, sec);
    if (!o) {
        o = json_object();
        json_object_set_new(root, sec, o);
    }
    *leaf = dot + 1;
    return o;
}

json_t *tc_scenario_to_json(const tc_scenario *s)
{
    unsigned long mark = tc_oom_mark();
    json_t *root = json_object();
    json_object_set_new(root, "scenario_version", json_integer(TC_SCENARIO_VERSION));
    json_object_set_new(root, "command", json_string(tc_command_name(s->command)));
    json_object_set_new(root, "topocc", json_pack("{s:s, s:s}", "version", s->version, "commit", s->commit));
    for (size_t i = 0; i < tc_scn_key_count(); i++) {
        const tc_scn_key *k = tc_scn_key_get(i);
        if (!tc_scn_key_applies(k, s))
            continue;
        const char *leaf;
        json_t *o = section(root, k->path, &leaf);
        json_object_set_new(o, leaf, k->get(s));
    }
    return tc_json_checked(root, mark); /* NULL: a key left out */
}

/* ---- key paths: one value of a scenario set by its path (sweeps) ---- */

tc_status tc_scenario_path_parse(const char *path, tc_command c, char *key, size_t keylen, long *index, tc_err *err)
{
    *index = -1;
    const char *br = strchr(path, '[');
    size_t n = br ? (size_t)(br - path) : strlen(path);
    if (n == 0 || n >= keylen || n >= 200)
        return tc_fail(err, TC_EINVAL, "key path '%.200s': expected a key such as network.topo or network.topo[0]",
                       path);
    memcpy(key, path, n);
    key[n] = '\0';
    if (br) {
        char *end;
        long i = strtol(br + 1, &end, 10);
        if (end == br + 1 || *end != ']' || end[1] || i < 0 || i > 1000000 || br[1] == '-' || br[1] == '+')
            return tc_fail(err, TC_EINVAL, "key path '%.200s': a list element is written path[i], i from 0", path);
        *index = i;
    }
    /* the top-level scalars are the scenario's own, not values to set */
    if (strcmp(key, "command") == 0)
        return tc_fail(err, TC_EINVAL, "key path 'command': the command comes from the base scenario and cannot be "
                                       "an axis (one sweep file per command)");
    if (strcmp(key, "scenario_version") == 0)
        return tc_fail(err, TC_EINVAL, "key path 'scenario_version': the scenario format's version comes from the "
                                       "base scenario and cannot be an axis");
    if (strcmp(key, "topocc") == 0)
        return tc_fail(err, TC_EINVAL, "key path 'topocc': the topocc build that wrote a scenario is recorded, not "
                                       "set, and cannot be an axis");
    int k = tc_scn_key_index(key);
    if (k < 0)
        return tc_fail(err, TC_EINVAL, "unknown key path '%s' (did you mean '%s'? docs/SCENARIO.md lists every key)",
                       key, nearest_path(key));
    if (!(tc_scn_key_get((size_t)k)->cmds & TC_CMD_BIT(c)))
        return tc_fail(err, TC_EINVAL, "key path '%s' does not apply to 'topocc %s'", key, tc_command_name(c));
    return TC_OK;
}

tc_status tc_scenario_json_set(json_t *root, const char *path, tc_command c, json_t *v, tc_err *err)
{
    char key[256];
    long index;
    tc_status st = tc_scenario_path_parse(path, c, key, sizeof key, &index, err);
    if (st)
        return st;
    const char *leaf;
    json_t *o = section(root, key, &leaf);
    if (!json_is_object(o))
        return tc_fail(err, TC_EINVAL, "%s: the scenario's section is not an object", key);
    if (index < 0)
        return json_object_set(o, leaf, v) ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
    json_t *list = json_object_get(o, leaf);
    if (!json_is_array(list)) {
        /* A single value stands for a list of one. */
        if (list && !json_is_null(list) && index == 0)
            return json_object_set(o, leaf, v) ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
        return tc_fail(err, TC_EINVAL, "%s: the scenario has no list %s to set element %ld of (give %s in the "
                                       "scenario)", path, key, index, key);
    }
    if ((size_t)index >= json_array_size(list))
        return tc_fail(err, TC_EINVAL, "%s: the scenario's %s has %zu entries (elements 0 to %zu)", path, key,
                       json_array_size(list), json_array_size(list) - 1);
    return json_array_set(list, (size_t)index, v) ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
}
