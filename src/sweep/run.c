/*
 * run.c - a sweep's pending points run into its results file.
 *
 * The results file is opened by rank 0 alone, locked (one writer per
 * file), checked against the sweep's hash, cut back to its last whole
 * line, and appended to with one write() per line, synced at most once a
 * second and at the end. Points are handed out by a shared counter (self
 * scheduling: a rank takes the next pending point when it finishes one,
 * so points of very different cost balance), rank 0 included; workers send
 * their lines to rank 0, which writes them between its own points.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <jansson.h>
#include "sweep/sweep_int.h"

#define SYNC_PERIOD_S 1.0
#define PROGRESS_PERIOD_S 0.25

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct writer {
    int fd;
    const char *path;
    double last_sync;
    bool dirty;
} writer;

static tc_status write_all(writer *w, const char *buf, size_t len, tc_err *err)
{
    /* One write() per line; a short write (a full disk, a signal) is
     * continued, never left as a torn line that a later line follows. */
    while (len > 0) {
        ssize_t n = write(w->fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tc_fail(err, TC_EINVAL, "cannot write '%s': %s", w->path, n < 0 ? strerror(errno) : "short write");
        buf += n;
        len -= (size_t)n;
    }
    w->dirty = true;
    double t = now_s();
    if (t - w->last_sync >= SYNC_PERIOD_S) {
        fdatasync(w->fd);
        w->last_sync = t;
        w->dirty = false;
    }
    return TC_OK;
}

static tc_status close_writer(writer *w, tc_err *err)
{
    if (w->fd < 0)
        return TC_OK;
    tc_status st = TC_OK;
    if (w->dirty && fdatasync(w->fd) != 0 && errno != EINVAL)
        st = tc_fail(err, TC_EINVAL, "cannot sync '%s': %s", w->path, strerror(errno));
    if (close(w->fd) != 0 && st == TC_OK)
        st = tc_fail(err, TC_EINVAL, "cannot write '%s': %s", w->path, strerror(errno));
    w->fd = -1;
    return st;
}

/* The file's first line (malloc'ed in *line, *len bytes, its newline
 * included when it has one): 1 whole, 0 cut short (no newline: a header
 * torn by a crash, or a file that is not a results file), -1 out of
 * memory (getline fails as at the end of the file; a whole header is not
 * torn for that), -2 unreadable (errno says why). */
static int first_line(const char *path, char **line, size_t *len)
{
    *line = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -2;
    size_t cap = 0;
    ssize_t n = getline(line, &cap, f);
    int whole = n > 0 && (*line)[n - 1] == '\n' ? 1 : n < 0 && !feof(f) && !ferror(f) ? -1 : 0;
    *len = n > 0 ? (size_t)n : 0;
    fclose(f);
    return whole;
}

/* What a file of one line without a newline is to a sweep: 1 its own
 * header torn by a crash (the file holds nothing and is started again),
 * 0 the torn header of another sweep (its hash is whole and differs), -1
 * no header at all (a file of the user's, never overwritten). A header
 * line starts {"topocc_sweep":N,"hash":"<16 hex digits>" (tc_sweep_header,
 * written on one line with its keys in that order). */
static int torn_header(const tc_sweep *sw, const char *line, size_t len, char *hash)
{
    static const char lead[] = "{\"topocc_sweep\":";
    size_t nl = sizeof lead - 1;
    if (len == 0 || memcmp(line, lead, len < nl ? len : nl) != 0)
        return -1;
    hash[0] = '\0';
    size_t i = nl;
    while (i < len && line[i] >= '0' && line[i] <= '9')
        i++;
    static const char key[] = ",\"hash\":\"";
    size_t nk = sizeof key - 1;
    if (i >= len)
        return 1;
    if (i == nl)
        return -1;
    if (memcmp(line + i, key, len - i < nk ? len - i : nk) != 0)
        return -1;
    if (len - i < nk + 17 || line[i + nk + 16] != '"')
        return 1;
    snprintf(hash, 17, "%.16s", line + i + nk);
    return strcmp(hash, sw->hash) == 0 ? 1 : 0;
}

/* Opens (or creates) the results file of sw at path for appending: held
 * receives the points it holds. */
static tc_status open_results(const tc_sweep *sw, const char *path, writer *w, tc_sweep_results *held, bool *torn,
                              tc_err *err)
{
    memset(held, 0, sizeof *held);
    *torn = false;
    w->path = path;
    struct stat sb;
    /* a point's trace over the results file or the sweep file */
    tc_status cst = tc_sweep_check_files(sw, path, err);
    if (cst)
        return cst;
    /* -o naming the sweep file would start it again as a results file */
    if (sw->has_file && stat(path, &sb) == 0 && (uint64_t)sb.st_dev == sw->file_dev &&
        (uint64_t)sb.st_ino == sw->file_ino)
        return tc_fail(err, TC_EINVAL, "'%s' is the sweep file itself: give the results file another name (-o "
                                       "RESULTS.jsonl)",
                       path);
    /* Locked, and still the file at path: a --merge that renamed its
     * output over path between the open and the lock leaves this one
     * unlinked, and the file at path is opened again. */
    for (int tries = 0;; tries++) {
        w->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (w->fd < 0)
            return tc_fail(err, TC_EINVAL, "cannot write the results file '%s': %s", path, strerror(errno));
        if (fstat(w->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            close(w->fd);
            w->fd = -1;
            return tc_fail(err, TC_EINVAL, "the results file '%s' must be a regular file", path);
        }
        if (flock(w->fd, LOCK_EX | LOCK_NB) != 0) {
            close(w->fd);
            w->fd = -1;
            return tc_fail(err, TC_EINVAL, "'%s' is being written by another topocc sweep (a run, or a --merge into "
                                           "it): one run per results file (give each its own -o, then topocc sweep "
                                           "--merge)",
                           path);
        }
        struct stat now;
        if (stat(path, &now) == 0 && now.st_dev == sb.st_dev && now.st_ino == sb.st_ino)
            break;
        close(w->fd);
        w->fd = -1;
        if (tries == 10)
            return tc_fail(err, TC_EINVAL, "the results file '%s' keeps being replaced while it is opened", path);
    }
    tc_status st = TC_OK;
    bool fresh = sb.st_size == 0;
    char *line = NULL;
    size_t len = 0;
    int whole = fresh ? 1 : first_line(path, &line, &len);
    if (whole == -2 && errno != ENOMEM)
        st = tc_fail(err, TC_EINVAL, "cannot read '%s': %s", path, strerror(errno));
    else if (whole < 0)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (whole == 0) {
        /* Only a header cut short by a crash is started again: a file of
         * one line without a newline is anything else too (a note, a
         * sweep file written on one line). */
        char hash[17];
        int torn = torn_header(sw, line, len, hash);
        if (torn < 0)
            st = tc_fail(err, TC_EINVAL, "'%s' is not a results file (its one line, with no newline, does not start "
                                         "as a sweep's header {\"topocc_sweep\":...): it is left as it is; give "
                                         "another -o",
                         path);
        else if (torn == 0)
            st = tc_fail(err, TC_EINVAL, "'%s' holds the torn header of another sweep (hash %s; this sweep: %s): "
                                         "give another -o, or the sweep file that wrote it",
                         path, hash, sw->hash);
        else {
            tc_note("%s holds only a torn header: it is started again", path);
            fresh = true;
            if (ftruncate(w->fd, 0) != 0)
                st = tc_fail(err, TC_EINVAL, "cannot truncate '%s': %s", path, strerror(errno));
        }
    }
    free(line);
    if (st == TC_OK && !fresh) {
        st = tc_sweep_results_read(path, held, NULL, NULL, err);
        if (st == TC_OK && (strcmp(held->hash, sw->hash) != 0 || held->npoints != sw->npoints))
            st = tc_fail(err, TC_EINVAL, "'%s' holds the results of another sweep (hash %s, %llu points; this sweep: "
                                         "%s, %llu points): give another -o, or the sweep file that wrote it",
                         path, held->hash, (unsigned long long)held->npoints, sw->hash,
                         (unsigned long long)sw->npoints);
        /* a resume by another build: its points say so, line by line */
        const json_t *hb = st == TC_OK ? json_object_get(held->header, "topocc") : NULL;
        const char *hv = json_string_value(json_object_get(hb, "version")),
                   *hc = json_string_value(json_object_get(hb, "commit"));
        if (hv && hc && (strcmp(hv, tc_version()) || strcmp(hc, tc_commit())))
            tc_note("'%s' was started by topocc %s (%s), this is %s (%s): the points run now are this build's (each "
                    "line records its build; sweep --status counts the others)",
                    path, hv, hc, tc_version(), tc_commit());
        if (st == TC_OK && held->torn) {
            *torn = true;
            if (ftruncate(w->fd, (off_t)held->good_bytes) != 0)
                st = tc_fail(err, TC_EINVAL, "cannot cut the torn last line of '%s': %s", path, strerror(errno));
        }
    }
    if (st == TC_OK && lseek(w->fd, 0, SEEK_END) < 0)
        st = tc_fail(err, TC_EINVAL, "cannot seek in '%s': %s", path, strerror(errno));
    if (st == TC_OK && fresh) {
        json_t *h = tc_sweep_header(sw);
        size_t n;
        char *line = h ? tc_json_line(h, &n) : NULL;
        json_decref(h);
        st = line ? write_all(w, line, n, err) : tc_fail(err, TC_EINTERNAL, "out of memory");
        free(line);
        if (st == TC_OK) {
            fdatasync(w->fd);
            held->npoints = sw->npoints;
            held->state = calloc(sw->npoints, 1);
            if (!held->state)
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
        }
    }
    if (st) {
        tc_sweep_results_free(held);
        close(w->fd);
        w->fd = -1;
    }
    return st;
}

/* Rank 0's side of the run: the file, the tally, the progress. */
typedef struct tally {
    writer w;
    tc_sweep_summary *sum;
    uint64_t total;              /* points this run runs */
    double start, last_prog;
    const tc_sweep_opts *o;
} tally;

static void progress(tally *t, bool force)
{
    if (!t->o->progress)
        return;
    double n = now_s();
    if (!force && n - t->last_prog < PROGRESS_PERIOD_S)
        return;
    t->last_prog = n;
    double el = n - t->start;
    tc_progress p = {.what = "sweep",
                     .fraction = t->total ? (double)t->sum->run / (double)t->total : 1,
                     .done = (double)t->sum->run,
                     .total = (double)t->total,
                     .unit = "points",
                     .rate = el > 0 ? (double)t->sum->run / el : 0};
    t->o->progress(t->o->progress_ud, &p);
}

/* Writes one finished line and counts it. */
static tc_status take_line(tally *t, const char *line, size_t len, tc_status point_st, const char *point_err,
                           bool parse, tc_err *err)
{
    tc_status st = write_all(&t->w, line, len, err);
    if (st)
        return st;
    tc_sweep_summary *s = t->sum;
    if (parse) {
        /* A worker's line: whether it failed is in the line. */
        json_t *j = json_loadb(line, len, 0, NULL);
        const json_t *e = j ? json_object_get(j, "error") : NULL;
        point_st = e ? TC_EINVAL : TC_OK;
        point_err = e && json_is_string(e) ? json_string_value(e) : "";
        if (e && !s->failed) {
            const json_t *p = json_object_get(j, "point");
            s->first_failed = json_is_integer(p) ? (uint64_t)json_integer_value(p) : 0;
            snprintf(s->first_error, sizeof s->first_error, "%s", point_err);
            s->first_status = point_st;
        }
        s->failed += e != NULL;
        json_decref(j);
    } else if (point_st) {
        if (!s->failed) {
            json_t *j = json_loadb(line, len, 0, NULL);
            const json_t *p = j ? json_object_get(j, "point") : NULL;
            s->first_failed = json_is_integer(p) ? (uint64_t)json_integer_value(p) : 0;
            json_decref(j);
            snprintf(s->first_error, sizeof s->first_error, "%s", point_err);
            s->first_status = point_st;
        }
        s->failed++;
    }
    s->run++;
    progress(t, false);
    return TC_OK;
}

/* Rank 0: every line waiting from the workers (or, with wait, until all
 * of them are done). */
static tc_status drain(tally *t, tc_sweep_transport *T, bool wait, int *workers_done, tc_err *err)
{
    for (;;) {
        if (wait && *workers_done >= T->size - 1)
            return TC_OK;
        char *line = NULL;
        size_t len = 0;
        bool done = false;
        if (T->recv(T->ctx, wait, &line, &len, &done))
            return tc_fail(err, TC_EINTERNAL, "the sweep lost contact with its MPI ranks");
        if (done) {
            (*workers_done)++;
            continue;
        }
        if (!line)
            return TC_OK;
        tc_status st = take_line(t, line, len, TC_OK, NULL, true, err);
        free(line);
        if (st)
            return st;
    }
}

/* The pending points of this run, rank 0's verdict on the file, sent to
 * every rank: status, message, count and list. */
typedef struct plan {
    int32_t status;
    char msg[512];
    uint64_t held, npending;
    uint64_t *pending;
} plan;

/* The error of one failed point's line (the one the read keeps). */
typedef struct held_error {
    uint64_t point;
    char *msg;
    size_t len;
} held_error;

static int keep_error(void *ud, uint64_t i, const char *line, size_t len)
{
    held_error *h = ud;
    if (i != h->point)
        return 0;
    json_t *j = json_loadb(line, len, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    if (e)
        snprintf(h->msg, h->len, "%s", e);
    json_decref(j);
    return 0;
}

static tc_status make_plan(const tc_sweep *sw, const char *out, const tc_sweep_opts *o, tally *t, plan *p,
                           tc_err *err)
{
    tc_sweep_results held = {0};
    bool torn = false;
    tc_status st = open_results(sw, out, &t->w, &held, &torn, err);
    if (st)
        return st;
    t->sum->torn = torn;
    p->pending = malloc((size_t)sw->npoints * sizeof *p->pending);
    if (!p->pending) {
        tc_sweep_results_free(&held);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint64_t i = 0; i < sw->npoints; i++) {
        if (o->nshards && i % o->nshards != o->shard)
            continue;
        if (held.state[i] == 1 || (held.state[i] == 2 && !o->retry_failed))
            p->held++;
        else
            p->pending[p->npending++] = i;
        if (held.state[i] == 2 && o->retry_failed)
            t->sum->retried++;
        /* held failures count as this run's: its exit status says so */
        if (held.state[i] == 2 && !o->retry_failed && !t->sum->held_failed++)
            t->sum->first_held_failed = i;
    }
    tc_sweep_results_free(&held);
    if (t->sum->held_failed) {
        held_error h = {t->sum->first_held_failed, t->sum->first_held_error, sizeof t->sum->first_held_error};
        tc_err e2;
        snprintf(h.msg, h.len, "(its error could not be read again)");
        if (tc_sweep_results_read(out, &held, keep_error, &h, &e2) == TC_OK)
            tc_sweep_results_free(&held);
    }
    return TC_OK;
}

/* Every point's scenario built before the first runs, the points split
 * over the ranks; *st: the first point that fails, on rank 0 (the others
 * learn it from the plan). -1 when the ranks cannot be reached. */
static int validate(const tc_sweep *sw, tc_sweep_transport *T, const tc_sweep_opts *o, tc_status *st, tc_err *err)
{
    uint64_t bad, least;
    tc_err mine = {{0}};
    /* every rank reports its share (the CLI shows rank 0's) */
    tc_status vst = tc_sweep_validate(sw, T ? (uint64_t)T->rank : 0, T ? (uint64_t)T->size : 1, o->progress,
                                      o->progress_ud, &bad, &mine);
    least = bad;
    if (T && T->min_u64(T->ctx, &least))
        return -1;
    if (least == UINT64_MAX || (T && T->rank != 0))
        return 0;
    if (least == bad) {
        *st = vst;
        *err = mine;
        return 0;
    }
    /* Another rank's point: validated again here for its message. */
    *st = tc_sweep_point_validate(sw, least, err);
    if (*st == TC_OK) {
        *st = tc_fail(err, TC_EINTERNAL, "point %llu failed to build on another MPI rank only",
                      (unsigned long long)least);
    }
    return 0;
}

static int bcast_plan(tc_sweep_transport *T, plan *p)
{
    uint64_t head[2] = {p->held, p->npending};
    if (T->bcast(T->ctx, &p->status, sizeof p->status) || T->bcast(T->ctx, p->msg, sizeof p->msg))
        return -1;
    if (p->status)
        return 0;
    if (T->bcast(T->ctx, head, sizeof head))
        return -1;
    if (T->rank != 0) {
        p->held = head[0];
        p->npending = head[1];
        p->pending = malloc((size_t)(p->npending ? p->npending : 1) * sizeof *p->pending);
        if (!p->pending)
            return -1;
    }
    return T->bcast(T->ctx, p->pending, (size_t)p->npending * sizeof *p->pending);
}

tc_status tc_sweep_run(const tc_sweep *sw, const char *out, const tc_sweep_opts *o, tc_sweep_summary *sum,
                       tc_err *err)
{
    memset(sum, 0, sizeof *sum);
    sum->points = sw->npoints;
    tc_sweep_transport *T = o->transport && o->transport->size > 1 ? o->transport : NULL;
    int rank = T ? T->rank : 0;
    tally t = {.w = {.fd = -1}, .sum = sum, .o = o};
    plan p = {0};
    tc_status st = TC_OK;
    if (o->nshards && o->shard >= o->nshards)
        st = tc_fail(err, TC_EINVAL, "--shard %llu/%llu: the shard is from 0 to %llu", (unsigned long long)o->shard,
                     (unsigned long long)o->nshards, (unsigned long long)o->nshards - 1);
    if (st == TC_OK && o->validate && validate(sw, T, o, &st, err)) {
        T->abort(T->ctx, 1);
        return tc_fail(err, TC_EINTERNAL, "the sweep could not reach its MPI ranks");
    }
    if (st == TC_OK && rank == 0)
        st = make_plan(sw, out, o, &t, &p, err);
    if (rank == 0 && st) {
        p.status = (int32_t)st;
        snprintf(p.msg, sizeof p.msg, "%s", err->msg);
    }
    if (T && bcast_plan(T, &p)) {
        T->abort(T->ctx, 1);
        return tc_fail(err, TC_EINTERNAL, "the sweep could not reach its MPI ranks");
    }
    if (p.status) {
        free(p.pending);
        close_writer(&t.w, err);
        if (T) {
            /* Rank 0 says why before the ranks part: once one rank has
             * exited with an error, mpirun may end the others before they
             * have printed anything. The message is then said (empty err). */
            if (rank == 0) {
                fprintf(stderr, "topocc: %s\n", p.msg);
                fflush(stderr);
            }
            T->finish(T->ctx);
            err->msg[0] = '\0';
            return (tc_status)p.status;
        }
        return tc_fail(err, (tc_status)p.status, "%s", p.msg);
    }
    sum->held = p.held;
    t.total = p.npending;
    t.start = t.last_prog = now_s();
    if (rank == 0)
        progress(&t, true);
    tc_run_opts ro = {.mem_limit_bytes = o->mem_limit_bytes};
    int workers_done = 0;
    uint64_t mine = 0, next_local = 0;
    for (;;) {
        int64_t k = T ? T->next(T->ctx) : (int64_t)next_local++;
        if (k < 0) {
            st = tc_fail(err, TC_EINTERNAL, "the sweep's shared counter failed");
            break;
        }
        if ((uint64_t)k >= p.npending)
            break;
        mine++;
        size_t len;
        tc_status pst;
        char perr[512];
        char *line = tc_sweep_eval(sw, p.pending[k], &ro, &len, &pst, perr, sizeof perr);
        if (!line) {
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
            break;
        }
        if (rank == 0) {
            st = take_line(&t, line, len, pst, perr, false, err);
            free(line);
            if (st == TC_OK && T)
                st = drain(&t, T, false, &workers_done, err);
            if (st)
                break;
        } else if (T->send(T->ctx, line, len)) {
            st = tc_fail(err, TC_EINTERNAL, "cannot send a result to rank 0");
            break;
        }
    }
    sum->idle = mine == 0;
    if (T && rank != 0 && st == TC_OK && T->done(T->ctx))
        st = tc_fail(err, TC_EINTERNAL, "cannot reach rank 0");
    if (T && rank == 0 && st == TC_OK)
        st = drain(&t, T, true, &workers_done, err);
    if (st && T) {
        /* A rank that cannot go on stops them all: the file holds every
         * line written so far, and a rerun resumes. */
        close_writer(&t.w, err);
        free(p.pending);
        fprintf(stderr, "topocc: %s\n", err->msg);
        T->abort(T->ctx, st == TC_EINVAL ? 2 : 1);
        return st;
    }
    if (rank == 0) {
        progress(&t, true);
        tc_status cst = close_writer(&t.w, err);
        if (st == TC_OK)
            st = cst;
    }
    free(p.pending);
    if (T)
        T->finish(T->ctx);
    return st;
}
