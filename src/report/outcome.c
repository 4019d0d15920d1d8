/*
 * outcome.c - every command's outcome through one set of writers: the
 * text table headed by its scenario, the primary table as CSV, the JSON
 * document, a file chosen by its extension, a directory of tables.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "topocc/render.h"

void tc_report_add_scenario(json_t *o, const tc_scenario *s)
{
    json_t *j = s ? tc_scenario_to_json(s) : NULL;
    if (j)
        json_object_set_new(o, "scenario", j);
}

static json_t *outcome_json(const tc_outcome *o, const tc_scenario *s)
{
    switch (o->command) {
    case TC_CMD_TOPO: return tc_topo_json(o->value, s);
    case TC_CMD_COLLECTIVE: return tc_collective_json(o->value, s);
    case TC_CMD_COMPARE: return tc_compare_json(o->value, s);
    case TC_CMD_CONCURRENT: return tc_concurrent_json(o->value, s);
    case TC_CMD_CODEC_BENCH: return tc_codec_bench_json(o->value, s);
    case TC_CMD_TRAIN_ACCURACY: return tc_train_accuracy_json(o->value, s);
    case TC_CMD_COMPRESS: return tc_compress_json(o->value, s);
    case TC_CMD_FAILURES: return tc_failures_json(o->value, s);
    case TC_CMD_CLUSTER: return tc_cluster_json(o->value, s);
    case TC_CMD_TRAIN: return tc_trainiter_json(o->value, s);
    default: return json_object();
    }
}

/* NULL when an allocation failed: a document with a key left out is none. */
json_t *tc_outcome_json(const tc_outcome *o, const tc_scenario *s)
{
    unsigned long mark = tc_oom_mark();
    return tc_json_checked(outcome_json(o, s), mark);
}

size_t tc_outcome_tables(const tc_outcome *o, const tc_scenario *s, tc_rtable *tabs, size_t max)
{
    switch (o->command) {
    case TC_CMD_TOPO: return tc_topo_tables(o->value, s, tabs, max);
    case TC_CMD_COLLECTIVE: return tc_collective_tables(o->value, s, tabs, max);
    case TC_CMD_COMPARE: return tc_compare_tables(o->value, s, tabs, max);
    case TC_CMD_CONCURRENT: return tc_concurrent_tables(o->value, s, tabs, max);
    case TC_CMD_CODEC_BENCH: return tc_codec_bench_tables(o->value, s, tabs, max);
    case TC_CMD_TRAIN_ACCURACY: return tc_train_accuracy_tables(o->value, s, tabs, max);
    case TC_CMD_COMPRESS: return tc_compress_tables(o->value, s, tabs, max);
    case TC_CMD_FAILURES: return tc_failures_tables(o->value, s, tabs, max);
    case TC_CMD_CLUSTER: return tc_cluster_tables(o->value, s, tabs, max);
    case TC_CMD_TRAIN: return tc_trainiter_tables(o->value, s, tabs, max);
    default: return 0;
    }
}

static void print_text(const tc_outcome *o, const tc_scenario *s, FILE *f)
{
    switch (o->command) {
    case TC_CMD_TOPO: tc_topo_print(o->value, s, f); break;
    case TC_CMD_COLLECTIVE: tc_collective_print(o->value, s, f); break;
    case TC_CMD_COMPARE: tc_compare_print(o->value, s, f); break;
    case TC_CMD_CONCURRENT: tc_concurrent_print(o->value, s, f); break;
    case TC_CMD_CODEC_BENCH: tc_codec_bench_print(o->value, s, f); break;
    case TC_CMD_TRAIN_ACCURACY: tc_train_accuracy_print(o->value, s, f); break;
    case TC_CMD_COMPRESS: tc_compress_print(o->value, s, f); break;
    case TC_CMD_FAILURES: tc_failures_print(o->value, s, f); break;
    case TC_CMD_CLUSTER: tc_cluster_print(o->value, s, f); break;
    case TC_CMD_TRAIN: tc_trainiter_print(o->value, s, f); break;
    default: break;
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* One value for people: units where the key's name carries one. */
static void header_value(const char *key, const json_t *v, FILE *f)
{
    char b[64];
    if (json_is_string(v)) {
        fputs(json_string_value(v), f);
    } else if (json_is_number(v)) {
        double x = json_number_value(v);
        if (ends_with(key, "sizes") || ends_with(key, "_bytes"))
            fputs(tc_fmt_size(x, b, sizeof b), f);
        else if (ends_with(key, "_Bps"))
            fputs(tc_fmt_rate(x, b, sizeof b), f);
        else if (ends_with(key, "_s") || ends_with(key, "seconds"))
            fputs(tc_fmt_time(x, b, sizeof b), f);
        else
            fputs(tc_fmt_shortest(x, b, sizeof b), f);
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "yes" : "no", f);
    } else if (json_is_null(v)) {
        fputs(strcmp(key, "ranks") == 0 ? "all" : "-", f);
    } else if (json_is_array(v)) {
        if (json_array_size(v) == 0)
            fputs("-", f);
        /* Elements that hold commas themselves (topology specs) are set apart. */
        bool commas = false;
        for (size_t i = 0; i < json_array_size(v); i++)
            commas |= json_is_string(json_array_get(v, i)) && strchr(json_string_value(json_array_get(v, i)), ',');
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *x = json_array_get(v, i);
            if (i)
                fputs(commas ? " | " : ",", f);
            if (json_is_object(x) && json_is_integer(json_object_get(x, "link")))
                fprintf(f, "link:%lld=%s", (long long)json_integer_value(json_object_get(x, "link")),
                        tc_fmt_shortest(json_number_value(json_object_get(x, "factor")), b, sizeof b));
            else if (json_is_object(x)) {
                fprintf(f, "(%zu entries)", json_array_size(v));
                break;
            } else
                header_value(key, x, f);
        }
    } else {
        fputs("(embedded)", f);
    }
}

void tc_scenario_header(const tc_scenario *s, FILE *f)
{
    json_t *j = tc_scenario_to_json(s);
    fprintf(f, "scenario %s\n", tc_command_name(s->command));
    const char *sec;
    json_t *v;
    json_object_foreach(j, sec, v) {
        if (strcmp(sec, "scenario_version") == 0 || strcmp(sec, "command") == 0 || strcmp(sec, "topocc") == 0)
            continue;
        fprintf(f, "  %-11s", sec);
        if (!json_is_object(v)) {
            fputc(' ', f);
            header_value(sec, v, f);
            fputc('\n', f);
            continue;
        }
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            fprintf(f, " %s=", k);
            header_value(k, x, f);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
    json_decref(j);
}

static tc_status write_primary_csv(const tc_outcome *o, const tc_scenario *s, FILE *f, tc_err *err)
{
    tc_rtable tabs[TC_MAX_TABLES];
    size_t n = tc_outcome_tables(o, s, tabs, TC_MAX_TABLES);
    if (n == 0)
        return tc_fail(err, TC_EINTERNAL, "internal: %s has no table", tc_command_name(s->command));
    tc_rtable_print_csv(&tabs[0], f);
    bool oom = false;
    for (size_t i = 0; i < n; i++) {
        oom |= tabs[i].oom;
        tc_rtable_free(&tabs[i]);
    }
    return oom ? tc_fail(err, TC_EINTERNAL, "out of memory") : TC_OK;
}

/* Every format is rendered whole before a byte of it is written: an
 * allocation that fails while rendering leaves a key or a row out (counted:
 * tc_oom_mark), and then nothing is written. */
tc_status tc_outcome_write(const tc_outcome *o, const tc_scenario *s, tc_format fmt, FILE *f, tc_err *err)
{
    unsigned long mark = tc_oom_mark();
    if (fmt == TC_FMT_JSON) {
        json_t *j = tc_json_checked(tc_outcome_json(o, s), mark);
        if (!j)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        bool ok = tc_json_dumpf(j, f);
        json_decref(j);
        return ok ? TC_OK : tc_fail(err, TC_EINTERNAL, "cannot write the JSON result");
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    if (fmt == TC_FMT_CSV) {
        st = write_primary_csv(o, s, m, err);
    } else {
        tc_scenario_header(s, m);
        print_text(o, s, m);
    }
    bool bad = ferror(m) != 0;
    bad |= fclose(m) != 0;
    if (st == TC_OK && (bad || tc_oom_since(mark)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK && (fwrite(buf, 1, len, f) != len || ferror(f)))
        st = tc_fail(err, TC_EINTERNAL, "cannot write the result");
    free(buf);
    return st;
}

tc_status tc_outcome_write_file(const tc_outcome *o, const tc_scenario *s, const char *path, tc_format fmt,
                                tc_err *err)
{
    /* The file's kind follows its name: *.csv the primary table, *.txt the
     * text, anything else the whole result as JSON. */
    (void)fmt;
    fmt = ends_with(path, ".csv") ? TC_FMT_CSV : ends_with(path, ".txt") ? TC_FMT_TABLE : TC_FMT_JSON;
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st)
        return st;
    if ((st = tc_outcome_write(o, s, fmt, af.f, err))) {
        tc_atomic_abort(&af);
        return st;
    }
    if (fmt != TC_FMT_CSV)
        return tc_atomic_commit(&af, err);
    /* CSV holds data only: the scenario goes beside it, both written in
     * full before either is renamed into place, so that neither is left
     * without the other */
    char side[4200];
    tc_outcome_csv_sidecar(path, side, sizeof side);
    tc_atomic_file sf;
    if ((st = tc_atomic_open(&sf, side, err))) {
        tc_atomic_abort(&af);
        return st;
    }
    unsigned long mark = tc_oom_mark();
    json_t *j = tc_scenario_to_json(s);
    /* a scenario built or written with an allocation failing is not whole */
    bool ok = j && !tc_oom_since(mark) && tc_json_dumpf(j, sf.f) && !tc_oom_since(mark);
    json_decref(j);
    if (!ok) {
        tc_atomic_abort(&sf);
        tc_atomic_abort(&af);
        if (!j || tc_oom_since(mark))
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        return tc_fail(err, TC_EINTERNAL, "cannot write the scenario beside '%s'", path);
    }
    if ((st = tc_atomic_commit(&sf, err))) {
        tc_atomic_abort(&af);
        return st;
    }
    if ((st = tc_atomic_commit(&af, err)))
        remove(side);
    return st;
}

void tc_outcome_csv_sidecar(const char *path, char *buf, size_t len)
{
    size_t n = strlen(path);
    snprintf(buf, len, "%.*s.scenario.json", (int)(ends_with(path, ".csv") ? n - 4 : n), path);
}

tc_status tc_outcome_write_dir(const tc_outcome *o, const tc_scenario *s, const char *dir, tc_err *err)
{
    if (strlen(dir) > 4000)
        return tc_fail(err, TC_EINVAL, "output directory name too long (at most 4000 bytes)");
    tc_status made = tc_make_dirs(dir, err);
    if (made)
        return made;
    tc_rtable tabs[TC_MAX_TABLES];
    size_t n = tc_outcome_tables(o, s, tabs, TC_MAX_TABLES);
    tc_status st = TC_OK;
    char path[4200];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%.4000s/%.48s.csv", dir, tabs[i].name);
        if (st == TC_OK)
            st = tabs[i].oom ? tc_fail(err, TC_EINTERNAL, "out of memory") : tc_rtable_write_csv(&tabs[i], path, err);
        tc_rtable_free(&tabs[i]);
    }
    if (st)
        return st;
    snprintf(path, sizeof path, "%.4000s/scenario.json", dir);
    json_t *j = tc_scenario_to_json(s);
    st = tc_json_write(j, path, err);
    json_decref(j);
    return st;
}
