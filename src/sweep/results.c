/*
 * results.c - a sweep's results file read back: its header, which points
 * it holds, where its last whole line ends (a line cut short by a crash is
 * torn, and is redone); and several files of one sweep merged into one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <jansson.h>
#include "sweep/sweep_int.h"

void tc_sweep_results_free(tc_sweep_results *r)
{
    json_decref(r->header);
    free(r->state);
    memset(r, 0, sizeof *r);
}

/* "VERSION (COMMIT)" of a build object {"version", "commit"} ("?" where absent). */
static void build_name(const json_t *b, char *buf, size_t len)
{
    const char *v = json_string_value(json_object_get(b, "version")), *c = json_string_value(json_object_get(b, "commit"));
    snprintf(buf, len, "%s (%s)", v ? v : "?", c ? c : "?");
}

static tc_status read_header(tc_sweep_results *r, const char *line, const char *path, tc_err *err)
{
    json_error_t je;
    json_t *h = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    const json_t *fmt = h ? json_object_get(h, "topocc_sweep") : NULL, *hash = h ? json_object_get(h, "hash") : NULL,
                 *n = h ? json_object_get(h, "points") : NULL;
    if (!json_is_integer(fmt) || !json_is_string(hash) || strlen(json_string_value(hash)) != 16 ||
        !json_is_integer(n) || json_integer_value(n) < 1 || (uint64_t)json_integer_value(n) > TC_SWEEP_MAX_POINTS) {
        json_decref(h);
        return tc_fail(err, TC_EINVAL, "%s: line 1 is not a sweep's header: expected a results file written by "
                                       "topocc sweep",
                       path);
    }
    if (json_integer_value(fmt) > TC_SWEEP_FORMAT) {
        long long v = (long long)json_integer_value(fmt); /* read before h, which holds it, is freed */
        json_decref(h);
        return tc_fail(err, TC_EINVAL, "%s: results format %lld is newer than this topocc reads (%d)", path, v,
                       TC_SWEEP_FORMAT);
    }
    r->header = h;
    snprintf(r->hash, sizeof r->hash, "%s", json_string_value(hash));
    r->npoints = (uint64_t)json_integer_value(n);
    r->state = calloc(r->npoints, 1);
    if (!r->state)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    return TC_OK;
}

json_t *tc_sweep_header_values(const json_t *h, uint64_t i)
{
    const json_t *axes = json_object_get(h, "axes"), *mode = json_object_get(h, "mode");
    size_t na = json_object_size(axes);
    if (!json_is_object(axes) || na > TC_SWEEP_MAX_AXES)
        return NULL;
    bool zip = json_is_string(mode) && strcmp(json_string_value(mode), "zip") == 0;
    const char *key[TC_SWEEP_MAX_AXES];
    const json_t *vals[TC_SWEEP_MAX_AXES];
    size_t a = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)axes, k, v) {
        if (!json_is_array(v) || json_array_size(v) == 0)
            return NULL;
        key[a] = k;
        vals[a++] = v;
    }
    json_t *o = json_object();
    /* row-major over the axes in file order, the last fastest (zip: the
     * i-th value of each) */
    for (size_t b = na; o && b-- > 0;) {
        size_t len = json_array_size(vals[b]);
        if (zip && i >= len) {
            json_decref(o);
            return NULL;
        }
        json_object_set(o, key[b], json_array_get(vals[b], zip ? i : i % len));
        if (!zip)
            i /= len;
    }
    return o;
}

/* Why a point line (JSON, its point in range) is damaged, or NULL. */
static const char *damaged_point(const json_t *p, const json_t *h, uint64_t i)
{
    bool result = json_is_object(json_object_get(p, "result")), error = json_is_string(json_object_get(p, "error"));
    if (result == error)
        return result ? "it has both \"result\" and \"error\" (a point has one)"
                      : "it has neither \"result\" (an object) nor \"error\" (a string)";
    unsigned long mark = tc_oom_mark();
    json_t *want = tc_sweep_header_values(h, i);
    /* a want left short for lack of memory is not the line's fault: the
     * read fails as out of memory */
    bool same = !want || tc_oom_since(mark) || json_equal(want, json_object_get(p, "values"));
    json_decref(want);
    return same ? NULL : "its \"values\" are not those of its point by the header's axes";
}

tc_status tc_sweep_results_read(const char *path, tc_sweep_results *r, tc_sweep_line_fn fn, void *ud, tc_err *err)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "cannot read '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = 0;
    uint64_t off = 0, lineno = 0;
    tc_status st = TC_OK;
    unsigned long mark = tc_oom_mark();
    while (st == TC_OK && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool whole = line[n - 1] == '\n';
        if (lineno == 1) {
            if (!whole) {
                r->torn = true; /* the header itself torn: the file is as good as empty */
                break;
            }
            if ((st = read_header(r, line, path, err)))
                break;
            off += (uint64_t)n;
            r->good_bytes = off;
            continue;
        }
        json_error_t je;
        json_t *p = whole ? json_loadb(line, (size_t)n - 1, JSON_REJECT_DUPLICATES, &je) : NULL;
        const json_t *pt = p ? json_object_get(p, "point") : NULL;
        if (!p) {
            /* A line that is not JSON is torn only when it is the last. */
            int c = fgetc(f);
            if (c == EOF) {
                r->torn = true;
                break;
            }
            st = tc_fail(err, TC_EINVAL, "%s line %llu is not JSON (%s): the file is damaged", path,
                         (unsigned long long)lineno, whole ? je.text : "no newline");
            break;
        }
        if (!json_is_integer(pt) || json_integer_value(pt) < 0 || (uint64_t)json_integer_value(pt) >= r->npoints) {
            json_decref(p);
            st = tc_fail(err, TC_EINVAL, "%s line %llu: no \"point\" from 0 to %llu", path, (unsigned long long)lineno,
                         (unsigned long long)r->npoints - 1);
            break;
        }
        uint64_t i = (uint64_t)json_integer_value(pt);
        const char *why = damaged_point(p, r->header, i);
        if (why) {
            json_decref(p);
            st = tc_fail(err, TC_EINVAL, "%s line %llu (point %llu): %s: the file is damaged", path,
                         (unsigned long long)lineno, (unsigned long long)i, why);
            break;
        }
        r->nlines++;
        /* the build that wrote the line, against the header's: results
         * of two builds may differ, and a file that mixes them says so */
        const json_t *hb = json_object_get(r->header, "topocc"),
                     *lb = json_object_get(json_object_get(p, "scenario"), "topocc");
        if (hb && lb && !json_equal(hb, lb)) {
            if (!r->nother_build)
                build_name(lb, r->other_build, sizeof r->other_build);
            r->nother_build++;
        }
        bool failed = json_object_get(p, "error") != NULL;
        /* A point's first line counts, but a result beats a failure (a
         * point run again with --retry-failed). */
        bool take = !r->state[i] || (r->state[i] == 2 && !failed);
        if (!take) {
            r->nduplicates++;
        } else {
            if (r->state[i] == 2) {
                r->nduplicates++;
                r->nfailed--;
                r->ndone--;
            }
            r->state[i] = failed ? 2 : 1;
            r->ndone++;
            r->nfailed += failed;
            const json_t *e = json_object_get(p, "elapsed_s");
            if (json_is_number(e))
                r->elapsed_s += json_number_value(e);
            if (fn && fn(ud, i, line, (size_t)n - 1))
                st = tc_fail(err, TC_EINTERNAL, "cannot copy the results of '%s'", path);
        }
        json_decref(p);
        off += (uint64_t)n;
        r->good_bytes = off;
    }
    /* Out of memory, jansson's parser reads a whole line as one that is
     * not JSON (torn, to be cut off, or damaged), and getline as the end of
     * the file: neither is. */
    if (tc_oom_since(mark) || (st == TC_OK && n < 0 && !feof(f) && !ferror(f)))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK && ferror(f))
        st = tc_fail(err, TC_EINVAL, "cannot read '%s': %s", path, strerror(errno));
    if (st == TC_OK && lineno == 0)
        st = tc_fail(err, TC_EINVAL, "%s: empty: not a results file", path);
    if (st == TC_OK && !r->header)
        st = tc_fail(err, TC_EINVAL, "%s: its header line is torn: not a results file", path);
    free(line);
    fclose(f);
    if (st)
        tc_sweep_results_free(r);
    return st;
}

/* ---- merge ---- */

typedef struct merge_lines {
    char **line;      /* per point: its first line (without newline), or NULL */
    size_t *len;
    uint64_t npoints; /* the first file's */
    bool oom;
    uint8_t *state;        /* per point, over all the files: 0 none kept, 1 a result, 2 a failure */
} merge_lines;

static int keep_line(void *ud, uint64_t i, const char *line, size_t len)
{
    merge_lines *m = ud;
    /* A file of another sweep may hold more points; it is refused once
     * read, and its lines beyond the first file's are not kept meanwhile. */
    if (i >= m->npoints)
        return 0;
    /* Called for a point's first line in each file, and again when a
     * result replaces a failure there. Over the files as within one: the
     * first line kept wins, but a result beats a failure. */
    json_t *p = json_loadb(line, len, 0, NULL);
    bool failed = !p || json_object_get(p, "error") != NULL;
    json_decref(p);
    if (m->state[i] == 1 || (m->state[i] == 2 && failed))
        return 0;
    m->state[i] = failed ? 2 : 1;
    free(m->line[i]);
    m->line[i] = malloc(len + 1);
    if (!m->line[i])
        return m->oom = true, 1;
    memcpy(m->line[i], line, len);
    m->line[i][len] = '\n';
    m->len[i] = len + 1;
    return 0;
}

/* The locks a merge holds until its file is renamed into place: the
 * output's exclusively, each input's shared, as a sweep writing one holds
 * it exclusively (a merge renaming over a file a sweep writes would lose
 * the sweep's later lines, and one reading it would take a part for the
 * whole). fds: n + 1 descriptors, -1 where none is held; a file that is
 * not there (or cannot be opened: its read says why) is not locked. */
static tc_status merge_locks(const char *const *in, size_t n, const char *out, int *fds, tc_err *err)
{
    struct stat so, si;
    bool have_out = false;
    fds[n] = open(out, O_RDONLY | O_CLOEXEC);
    if (fds[n] >= 0 && fstat(fds[n], &so) == 0 && S_ISREG(so.st_mode)) {
        have_out = true;
        if (flock(fds[n], LOCK_EX | LOCK_NB) != 0)
            return tc_fail(err, TC_EINVAL, "'%s' is being written by a topocc sweep: merge into it once the sweep has "
                                           "ended (or give another -o)",
                           out);
    }
    for (size_t k = 0; k < n; k++) {
        fds[k] = open(in[k], O_RDONLY | O_CLOEXEC);
        if (fds[k] < 0 || fstat(fds[k], &si) != 0 || !S_ISREG(si.st_mode))
            continue;
        if (have_out && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            continue; /* merged in place: held exclusively above */
        if (flock(fds[k], LOCK_SH | LOCK_NB) != 0)
            return tc_fail(err, TC_EINVAL, "'%s' is being written by a topocc sweep: merge it once the sweep has "
                                           "ended",
                           in[k]);
    }
    return TC_OK;
}

static void merge_unlock(int *fds, size_t n)
{
    for (size_t k = 0; k <= n; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    free(fds);
}

tc_status tc_sweep_merge(const char *const *in, size_t n, const char *out, tc_sweep_results *sum, tc_err *err)
{
    memset(sum, 0, sizeof *sum);
    if (n == 0)
        return tc_fail(err, TC_EINVAL, "--merge needs at least one results file");
    int *fds = malloc((n + 1) * sizeof *fds);
    if (!fds)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (size_t k = 0; k <= n; k++)
        fds[k] = -1;
    tc_sweep_results first;
    tc_status st = merge_locks(in, n, out, fds, err);
    if (st == TC_OK)
        st = tc_sweep_results_read(in[0], &first, NULL, NULL, err);
    if (st) {
        merge_unlock(fds, n);
        return st;
    }
    merge_lines m = {calloc(first.npoints, sizeof *m.line), calloc(first.npoints, sizeof *m.len), first.npoints,
                     false, calloc(first.npoints ? first.npoints : 1, 1)};
    if (!m.line || !m.len || !m.state)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    for (size_t k = 0; k < n && st == TC_OK; k++) {
        tc_sweep_results r;
        if ((st = tc_sweep_results_read(in[k], &r, keep_line, &m, err)))
            break;
        if (strcmp(r.hash, first.hash) != 0 || r.npoints != first.npoints)
            st = tc_fail(err, TC_EINVAL, "%s holds another sweep's results (hash %s) than %s (hash %s): only results "
                                         "of one sweep merge",
                         in[k], r.hash, in[0], first.hash);
        if (r.torn)
            tc_note("%s ends in a torn line; it is left out", in[k]);
        const json_t *b0 = json_object_get(first.header, "topocc"), *bk = json_object_get(r.header, "topocc");
        if (st == TC_OK && ((b0 && bk && !json_equal(b0, bk)) || r.nother_build)) {
            char name[sizeof r.other_build];
            build_name(bk, name, sizeof name);
            tc_note("%s holds results of another topocc build, %s, than %s's: they may differ", in[k],
                    r.nother_build ? r.other_build : name, in[0]);
        }
        tc_sweep_results_free(&r);
    }
    tc_atomic_file af;
    if (st == TC_OK && (st = tc_atomic_open(&af, out, err)) == TC_OK) {
        FILE *f = af.f;
        size_t hl;
        char *h = tc_json_line(first.header, &hl);
        bool ok = h && fwrite(h, 1, hl, f) == hl;
        free(h);
        *sum = (tc_sweep_results){.npoints = first.npoints};
        for (uint64_t i = 0; ok && i < first.npoints; i++)
            if (m.line[i]) {
                ok = fwrite(m.line[i], 1, m.len[i], f) == m.len[i];
                sum->ndone++;
                sum->nfailed += m.state[i] == 2;
            }
        if (!ok) {
            tc_atomic_abort(&af);
            st = tc_fail(err, TC_EINVAL, "cannot write '%s'", out);
        } else {
            st = tc_atomic_commit(&af, err);
        }
    }
    for (uint64_t i = 0; m.line && i < first.npoints; i++)
        free(m.line[i]);
    free(m.line);
    free(m.len);
    free(m.state);
    tc_sweep_results_free(&first);
    merge_unlock(fds, n);
    return st;
}

bool tc_sweep_failed_point(const json_t *line, long long *point, char *quote, size_t len)
{
    const json_t *k = json_object_get(line, "point"), *e = json_object_get(line, "error");
    if (!json_is_object(line) || !json_is_integer(k) || !json_is_string(e) || len < 4)
        return false;
    *point = json_integer_value(k);
    snprintf(quote, len, "%s", json_string_value(e));
    for (char *c = quote; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    if (strlen(json_string_value(e)) >= len)
        memcpy(quote + len - 4, "...", 4);
    return true;
}
