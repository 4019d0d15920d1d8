/*
 * trace.c - job traces for cluster replay (topocc/cluster.h; docs/MODEL.md,
 * "Cluster replay: traces"): readers of the three public GPU-cluster traces
 * in the formats their owners publish, of topocc's own CSV, and a synthetic
 * trace drawn from published statistics of the Helios traces.
 *
 * The formats, as their repositories document them:
 *
 *  Philly (Microsoft; Jeon et al., USENIX ATC'19): github.com/msr-fiddle/
 *    philly-traces, README.md "Schema: cluster_job_log" (commit 29a1b87,
 *    2019-08-30). One JSON list of jobs {status, vc, jobid, attempts[],
 *    submitted_time, user}; an attempt is {start_time, end_time, detail[]},
 *    a detail {ip, gpus[]}; times "2017-10-07 01:12:09" (no time zone). The
 *    README notes: a job may have no attempt, an attempt may miss its times,
 *    and a null end_time of the last attempt means still running.
 *    Rules here: size = the GPUs of the FIRST attempt (the count the
 *    repository's own analysis/"Philly Trace Analysis.ipynb" uses, class
 *    Job: num_gpus from attempts[0]); duration = the SUM of the attempts'
 *    end - start (the time the job held GPUs; that notebook's run time,
 *    last end - first start, also counts the waits between attempts, which
 *    the replay's scheduler makes itself); attempts without both times add
 *    nothing; submit = submitted_time. Skipped (with a reason): no attempt,
 *    no GPU in the first attempt, a last attempt without end_time, no
 *    positive run time, no submitted_time. Also read: concatenated job
 *    objects (JSON lines). A JSON "record" is a job, numbered from 1.
 *
 *  Helios (SenseTime; Hu et al., SC'21): github.com/S-Lab-System-Group/
 *    HeliosData, README.md "cluster_log.csv" (commit 159f0ca, 2022-09-27,
 *    "Release full dataset"; data.zip holds the four clusters): columns
 *    job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,
 *    end_time,duration,queue with a header line (the artifact reads it with
 *    pandas' header: S-Lab-System-Group/HeliosArtifact analysis/
 *    trace_parser.py, commit bdaae10); duration = end_time - start_time in
 *    seconds. Columns are found by their header names. Rules: size =
 *    gpu_num; duration = the duration column (end_time - start_time when
 *    the file has no such column); submit = submit_time; every state is
 *    kept (a failed or cancelled job held its GPUs too). Skipped: gpu_num 0
 *    (a CPU job), no duration or zero duration, no submit_time.
 *
 *  PAI (Alibaba; Weng et al., NSDI'22): github.com/alibaba/clusterdata,
 *    cluster-trace-gpu-v2020/README.md "pai_task_table" and
 *    data/pai_task_table.header (snapshot 7a6c496; the README last changed
 *    in 82edb29, 2023-03-21): columns
 *    job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,
 *    plan_mem,plan_gpu,gpu_type; the .csv files have NO header (the
 *    repository's analysis/utils.py reads them with header=None and takes
 *    the names from the .header file); times are seconds; plan_gpu is the
 *    percent of one GPU each instance asks for; start_time is the task's
 *    launch (the job's submission is in pai_job_table, not read here).
 *    A header line equal to the .header file is accepted too.
 *    Rules, per job_name (its rows need not be adjacent): size = ceil(sum
 *    over its GPU tasks of inst_num x plan_gpu / 100) (the README's own
 *    example: ps 1 x 0% + worker 2 x 50% = 1 GPU); submit = the earliest
 *    start_time of its GPU tasks, duration = their latest end_time minus
 *    that (the tasks are taken as one gang). A task with plan_gpu empty or
 *    0 adds nothing; a GPU task whose start_time or end_time is empty or 0
 *    (the repository's utils.py treats 0 as missing) or whose end equals
 *    its start did not run and adds nothing. Skipped: a job with no GPU
 *    task that ran. A job's line is that of its first row.
 *
 *  topocc's own CSV: the header "submit,size,duration" then one job a line
 *    (seconds, endpoints, seconds); '#' lines and blank lines are ignored.
 *    Nothing is skipped: every row must be a job.
 *
 * TC_TRACE_AUTO: a file whose first non-blank character is '[' or '{' is
 * Philly JSON; otherwise its first line decides: '#' or the fields
 * submit,size,duration -> topocc CSV; fields naming gpu_num and
 * submit_time -> Helios; first field job_name -> PAI with a header; 10
 * fields -> PAI without one; anything else is refused, naming the choices.
 *
 * Every reader: one line of at most 64 KiB, no NUL byte, numbers finite
 * decimals (no inf, nan or hex; in the public traces an empty field or
 * pandas' NaN is a missing value), times "YYYY-MM-DD HH:MM:SS" read as UTC
 * by calendar arithmetic (no locale, no time zone; Philly's other logs
 * stamp PDT/PST, so its job times are likely US Pacific local time and a
 * span across the 2017-11-05 change may be an hour off), sizes at most
 * 2^24, times at most 1e12 s. A malformed record fails with its file, line
 * (or record) and field; an end before its start is malformed (negative
 * duration). The jobs come out sorted by submit (ties in file order) with
 * the first at 0.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/cluster.h"

#define MAX_LINE 65536
#define MAX_FIELDS 64
#define MAX_SIZE (1u << 24)
#define MAX_TIME 1e12
#define MAX_SYNTH_JOBS 100000000u

static const char *const FORMAT_NAMES[] = {"auto", "csv", "philly", "helios", "pai", "synthetic"};

const char *tc_trace_format_name(tc_trace_format f)
{
    return (unsigned)f < sizeof FORMAT_NAMES / sizeof *FORMAT_NAMES ? FORMAT_NAMES[f] : "?";
}

tc_status tc_trace_format_parse(const char *s, tc_trace_format *out, tc_err *err)
{
    for (unsigned i = 0; i < sizeof FORMAT_NAMES / sizeof *FORMAT_NAMES; i++)
        if (s && strcmp(s, FORMAT_NAMES[i]) == 0) {
            *out = (tc_trace_format)i;
            return TC_OK;
        }
    /* the formats a trace file is read in: "synthetic" is parsed (a
     * scenario's key refuses it, pointing to --synthetic) but is none */
    return tc_fail(err, TC_EINVAL, "unknown trace format '%.40s': accepted are auto, csv, philly, helios, pai", s ? s : "");
}

void tc_trace_free(tc_trace *t)
{
    if (!t)
        return;
    free(t->jobs);
    memset(t, 0, sizeof *t);
}

/* ---- the reading context ---------------------------------------------- */

typedef struct rd {
    const char *path;
    tc_err *err;
    tc_trace *out;
    tc_cjob *v; /* jobs read, submit still absolute */
    size_t n, cap;
} rd;

static tc_status push(rd *r, double submit, double dur, uint32_t size, uint64_t line)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        tc_cjob *v = cap > SIZE_MAX / sizeof *v ? NULL : realloc(r->v, cap * sizeof *v);
        if (!v)
            return tc_fail(r->err, TC_EINTERNAL, "%.160s: out of memory after %zu jobs", r->path, r->n);
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (tc_cjob){.submit_s = submit, .duration_s = dur, .size = size, .line = line};
    return TC_OK;
}

/* Counts a record that is not a job; the first one's reason is kept. */
__attribute__((format(printf, 2, 3))) static void skip(rd *r, const char *fmt, ...)
{
    if (r->out->skipped++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->out->skipped_why, sizeof r->out->skipped_why, fmt, ap);
        va_end(ap);
    }
}

/* s as it may be shown in a one-line message: printable, at most 40
 * characters. */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t k = 0, i = 0;
    for (; s[i] && k + 4 < len && i < 40; i++)
        buf[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (s[i] && k + 4 <= len) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = 0;
    return buf;
}

static tc_status field_err(const rd *r, uint64_t line, const char *field, const char *expected, const char *got)
{
    char g[48];
    return tc_fail(r->err, TC_EINVAL, "%.160s:%llu: field '%s': expected %s, got '%s'", r->path,
                   (unsigned long long)line, field, expected, shown(got, g, sizeof g));
}

/* ---- numbers and times ------------------------------------------------- */

typedef enum { V_EMPTY, V_OK, V_BAD } vres;

/* A finite decimal number: [+-]digits[.digits][(e|E)[+-]digits]. */
static vres parse_num(const char *s, double *v)
{
    if (!*s)
        return V_EMPTY;
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    for (; isdigit((unsigned char)*p); p++)
        digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (!digits)
        return V_BAD;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return V_BAD;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p)
        return V_BAD;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end != p || !isfinite(x))
        return V_BAD;
    *v = x;
    return V_OK;
}

/* In the public traces an empty field, or NaN as pandas writes it, is a
 * missing value. */
static vres parse_num_missing(const char *s, double *v)
{
    if (strcmp(s, "NaN") == 0 || strcmp(s, "nan") == 0)
        return V_EMPTY;
    return parse_num(s, v);
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits_at(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

/* "YYYY-MM-DD HH:MM:SS" ('T' for the space, fractional seconds and a final
 * 'Z' accepted), as seconds since 1970-01-01 UTC. */
static vres parse_datetime(const char *s, double *t)
{
    if (!*s)
        return V_EMPTY;
    int Y, M, D, h, m, sec;
    if (strlen(s) < 19 || !digits_at(s, 4, &Y) || s[4] != '-' || !digits_at(s + 5, 2, &M) || s[7] != '-' ||
        !digits_at(s + 8, 2, &D) || (s[10] != ' ' && s[10] != 'T') || !digits_at(s + 11, 2, &h) || s[13] != ':' ||
        !digits_at(s + 14, 2, &m) || s[16] != ':' || !digits_at(s + 17, 2, &sec))
        return V_BAD;
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
    if (Y < 1900 || M < 1 || M > 12 || D < 1 || D > dim[M - 1] + (M == 2 && leap) || h > 23 || m > 59 || sec > 59)
        return V_BAD;
    const char *p = s + 19;
    double frac = 0;
    if (*p == '.') {
        double scale = 0.1;
        if (!isdigit((unsigned char)p[1]))
            return V_BAD;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    if (*p == 'Z')
        p++;
    if (*p)
        return V_BAD;
    *t = (double)(days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 + h * 3600 + m * 60 + sec) + frac;
    return V_OK;
}

#define DATETIME_EXPECTED "a time \"YYYY-MM-DD HH:MM:SS\""

/* ---- lines and CSV fields ---------------------------------------------- */

typedef struct lreader {
    FILE *f;
    uint64_t line;
    char buf[MAX_LINE + 1];
} lreader;

/* 1: the next line is in r->buf (without its end of line); 0: end of file;
 * -1: failed (err says why). */
static int lr_next(lreader *r, const rd *c)
{
    int ch = getc_unlocked(r->f);
    if (ch == EOF) {
        if (ferror(r->f))
            tc_fail(c->err, TC_EINVAL, "%.160s: cannot read after line %llu", c->path, (unsigned long long)r->line);
        return ferror(r->f) ? -1 : 0;
    }
    r->line++;
    size_t n = 0;
    for (; ch != EOF && ch != '\n'; ch = getc_unlocked(r->f)) {
        if (ch == 0) {
            tc_fail(c->err, TC_EINVAL, "%.160s:%llu: a NUL byte: not a text file", c->path, (unsigned long long)r->line);
            return -1;
        }
        if (n == MAX_LINE) {
            tc_fail(c->err, TC_EINVAL, "%.160s:%llu: line longer than %d bytes", c->path, (unsigned long long)r->line,
                    MAX_LINE);
            return -1;
        }
        r->buf[n++] = (char)ch;
    }
    if (ch == EOF && ferror(r->f)) {
        tc_fail(c->err, TC_EINVAL, "%.160s:%llu: cannot read", c->path, (unsigned long long)r->line);
        return -1;
    }
    if (n && r->buf[n - 1] == '\r')
        n--;
    r->buf[n] = 0;
    if (r->line == 1 && n >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) /* a UTF-8 byte order mark */
        memmove(r->buf, r->buf + 3, n - 2);
    return 1;
}

static bool blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return !*s;
}

/* Splits s in place at commas; a field in double quotes may hold commas
 * and "" for a quote; spaces around a field are dropped. Returns the
 * number of fields, -1 when more than max, -2 for a stray quote. */
static int csv_split(char *s, char **f, int max)
{
    int n = 0;
    char *p = s;
    for (;;) {
        if (n == max)
            return -1;
        while (*p == ' ' || *p == '\t')
            p++;
        char *start = p, *out = p;
        if (*p == '"') {
            for (p++;; p++) {
                if (!*p)
                    return -2;
                if (*p == '"') {
                    if (p[1] != '"')
                        break;
                    p++;
                }
                *out++ = *p;
            }
            for (p++; *p == ' ' || *p == '\t'; p++)
                ;
            if (*p && *p != ',')
                return -2;
        } else {
            while (*p && *p != ',')
                *out++ = *p++;
            while (out > start && (out[-1] == ' ' || out[-1] == '\t'))
                out--;
        }
        char sep = *p;
        *out = 0;
        f[n++] = start;
        if (!sep)
            return n;
        p++;
    }
}

/* Splits the current line; fails naming the line when it cannot. */
static int split_line(lreader *lr, const rd *c, char **f)
{
    int nf = csv_split(lr->buf, f, MAX_FIELDS);
    if (nf == -1)
        tc_fail(c->err, TC_EINVAL, "%.160s:%llu: more than %d fields", c->path, (unsigned long long)lr->line,
                MAX_FIELDS);
    else if (nf == -2)
        tc_fail(c->err, TC_EINVAL, "%.160s:%llu: a field's double quotes are not closed where the field ends",
                c->path, (unsigned long long)lr->line);
    return nf;
}

/* A count of endpoints or GPUs: an integer (written "8" or "8.0") from min
 * to 2^24. */
static tc_status parse_count(const rd *c, uint64_t line, const char *field, const char *s, uint32_t min,
                             uint32_t *out)
{
    double v;
    vres k = parse_num(s, &v);
    if (k != V_OK || v != floor(v) || v < min)
        return field_err(c, line, field, min ? "a positive integer" : "an integer of 0 or more", s);
    if (v > MAX_SIZE)
        return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: field '%s': %.0f is more than the %u (2^24) accepted",
                       c->path, (unsigned long long)line, field, v, MAX_SIZE);
    *out = (uint32_t)v;
    return TC_OK;
}

/* ---- topocc's own CSV -------------------------------------------------- */

static tc_status read_own(lreader *lr, rd *c)
{
    char *f[MAX_FIELDS];
    bool header = false;
    int k;
    while ((k = lr_next(lr, c)) == 1) {
        if (blank(lr->buf) || lr->buf[strspn(lr->buf, " \t")] == '#')
            continue;
        uint64_t line = lr->line;
        char copy[64];
        shown(lr->buf, copy, sizeof copy);
        int nf = split_line(lr, c, f);
        if (nf < 0)
            return TC_EINVAL;
        if (!header) {
            if (nf != 3 || strcmp(f[0], "submit") || strcmp(f[1], "size") || strcmp(f[2], "duration"))
                return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: expected the header 'submit,size,duration', got '%s'",
                               c->path, (unsigned long long)line, copy);
            header = true;
            continue;
        }
        if (nf != 3)
            return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: expected 3 fields (submit,size,duration), got %d",
                           c->path, (unsigned long long)line, nf);
        double submit, dur;
        uint32_t size;
        if (parse_num(f[0], &submit) != V_OK || submit < 0 || submit > MAX_TIME)
            return field_err(c, line, "submit", "seconds from 0 to 1e12", f[0]);
        tc_status st = parse_count(c, line, "size", f[1], 1, &size);
        if (st)
            return st;
        if (parse_num(f[2], &dur) != V_OK || !(dur > 0) || dur > MAX_TIME)
            return field_err(c, line, "duration", "a positive number of seconds up to 1e12", f[2]);
        if ((st = push(c, submit, dur, size, line)))
            return st;
    }
    if (k < 0)
        return TC_EINVAL;
    if (!header)
        return tc_fail(c->err, TC_EINVAL, "%.160s: no header 'submit,size,duration': the file is empty", c->path);
    return TC_OK;
}

/* ---- Helios cluster_log.csv -------------------------------------------- */

static int column(char **f, int nf, const char *name)
{
    for (int i = 0; i < nf; i++)
        if (strcmp(f[i], name) == 0)
            return i;
    return -1;
}

#define HELIOS_COLUMNS "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"

static tc_status helios_time(const rd *c, uint64_t line, const char *field, const char *s, bool *have, double *t)
{
    vres k = strcmp(s, "NaN") == 0 || strcmp(s, "nan") == 0 ? V_EMPTY : parse_datetime(s, t);
    if (k == V_BAD)
        return field_err(c, line, field, DATETIME_EXPECTED, s);
    *have = k == V_OK;
    return TC_OK;
}

static tc_status read_helios(lreader *lr, rd *c)
{
    char *f[MAX_FIELDS];
    int nh = 0, c_gpu = -1, c_submit = -1, c_start = -1, c_end = -1, c_dur = -1, k;
    while ((k = lr_next(lr, c)) == 1) {
        if (blank(lr->buf))
            continue;
        uint64_t line = lr->line;
        int nf = split_line(lr, c, f);
        if (nf < 0)
            return TC_EINVAL;
        if (!nh) {
            nh = nf;
            c_gpu = column(f, nf, "gpu_num");
            c_submit = column(f, nf, "submit_time");
            c_start = column(f, nf, "start_time");
            c_end = column(f, nf, "end_time");
            c_dur = column(f, nf, "duration");
            const char *miss = c_gpu < 0 ? "gpu_num" : c_submit < 0 ? "submit_time" : NULL;
            if (!miss && c_dur < 0 && (c_start < 0 || c_end < 0))
                miss = c_start < 0 ? "duration' (or 'start_time" : "duration' (or 'end_time";
            if (miss)
                return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: no column '%s' in the header (Helios cluster_log.csv "
                               "has " HELIOS_COLUMNS ")", c->path, (unsigned long long)line, miss);
            continue;
        }
        if (nf != nh)
            return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: expected %d fields as the header has, got %d", c->path,
                           (unsigned long long)line, nh, nf);
        uint32_t gpus;
        tc_status st = parse_count(c, line, "gpu_num", f[c_gpu], 0, &gpus);
        if (st)
            return st;
        double submit = 0, start = 0, end = 0, dur = 0;
        bool have_submit, have_start = false, have_end = false, have_dur = false;
        if ((st = helios_time(c, line, "submit_time", f[c_submit], &have_submit, &submit)))
            return st;
        if (c_start >= 0 && (st = helios_time(c, line, "start_time", f[c_start], &have_start, &start)))
            return st;
        if (c_end >= 0 && (st = helios_time(c, line, "end_time", f[c_end], &have_end, &end)))
            return st;
        if (c_dur >= 0) {
            vres v = parse_num_missing(f[c_dur], &dur);
            if (v == V_BAD || (v == V_OK && (dur < 0 || dur > MAX_TIME)))
                return field_err(c, line, "duration", "seconds from 0 to 1e12", f[c_dur]);
            have_dur = v == V_OK;
        } else if (have_start && have_end) {
            if (end < start)
                return field_err(c, line, "end_time", "a time not before start_time (a negative duration)",
                                 f[c_end]);
            dur = end - start;
            have_dur = true;
        }
        if (gpus == 0)
            skip(c, "line %llu: gpu_num 0 (a CPU job)", (unsigned long long)line);
        else if (!have_submit)
            skip(c, "line %llu: no submit_time", (unsigned long long)line);
        else if (!have_dur)
            skip(c, "line %llu: no duration (the job never ran)", (unsigned long long)line);
        else if (dur == 0)
            skip(c, "line %llu: duration 0", (unsigned long long)line);
        else if ((st = push(c, submit, dur, gpus, line)))
            return st;
    }
    if (k < 0)
        return TC_EINVAL;
    if (!nh)
        return tc_fail(c->err, TC_EINVAL, "%.160s: no header (" HELIOS_COLUMNS "): the file is empty", c->path);
    return TC_OK;
}

/* ---- PAI pai_task_table.csv -------------------------------------------- */

#define PAI_COLUMNS "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type"

typedef struct pjob {
    size_t name;       /* offset of its job_name in the arena */
    uint64_t line;     /* its first row */
    double gpu_pct;    /* sum over its GPU tasks that ran of inst_num x plan_gpu */
    double start, end; /* earliest start, latest end of those tasks */
    bool ran;          /* a GPU task ran */
    bool gpu_unrun;    /* a GPU task did not run */
} pjob;

typedef struct pmap {
    pjob *v;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    size_t *slot; /* index + 1; 0: empty */
    size_t nslot; /* a power of 2 */
} pmap;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void pmap_free(pmap *m)
{
    free(m->v);
    free(m->arena);
    free(m->slot);
}

static bool pmap_grow_slots(pmap *m)
{
    size_t ns = m->nslot ? 2 * m->nslot : 4096;
    size_t *slot = ns > SIZE_MAX / sizeof *slot ? NULL : calloc(ns, sizeof *slot);
    if (!slot)
        return false;
    for (size_t i = 0; i < m->n; i++) {
        size_t h = (size_t)fnv1a(m->arena + m->v[i].name) & (ns - 1);
        while (slot[h])
            h = (h + 1) & (ns - 1);
        slot[h] = i + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->nslot = ns;
    return true;
}

/* The job named s (created at line when new); NULL when out of memory. */
static pjob *pmap_get(pmap *m, const char *s, uint64_t line)
{
    if ((m->n + 1) * 2 > m->nslot && !pmap_grow_slots(m))
        return NULL;
    size_t h = (size_t)fnv1a(s) & (m->nslot - 1);
    for (; m->slot[h]; h = (h + 1) & (m->nslot - 1))
        if (strcmp(m->arena + m->v[m->slot[h] - 1].name, s) == 0)
            return &m->v[m->slot[h] - 1];
    size_t len = strlen(s) + 1;
    if (m->alen + len > m->acap) {
        size_t cap = m->acap ? m->acap : 65536;
        while (cap < m->alen + len)
            cap *= 2;
        char *a = realloc(m->arena, cap);
        if (!a)
            return NULL;
        m->arena = a;
        m->acap = cap;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        pjob *v = cap > SIZE_MAX / sizeof *v ? NULL : realloc(m->v, cap * sizeof *v);
        if (!v)
            return NULL;
        m->v = v;
        m->cap = cap;
    }
    memcpy(m->arena + m->alen, s, len);
    m->v[m->n] = (pjob){.name = m->alen, .line = line};
    m->alen += len;
    m->slot[h] = ++m->n;
    return &m->v[m->n - 1];
}

/* A time or count field of the task table: empty, NaN or 0 is missing. */
static tc_status pai_num(const rd *c, uint64_t line, const char *field, const char *s, double max, bool *have,
                         double *v)
{
    vres k = parse_num_missing(s, v);
    if (k == V_BAD || (k == V_OK && (*v < 0 || *v > max)))
        return field_err(c, line, field, max == MAX_TIME ? "seconds from 0 to 1e12" : "a number of 0 or more", s);
    *have = k == V_OK && *v > 0;
    return TC_OK;
}

static tc_status read_pai_rows(lreader *lr, rd *c, pmap *m)
{
    char *f[MAX_FIELDS];
    int col[5] = {0, 2, 4, 5, 8}; /* job_name, inst_num, start_time, end_time, plan_gpu */
    static const char *const names[5] = {"job_name", "inst_num", "start_time", "end_time", "plan_gpu"};
    int nh = 10, k;
    bool first = true;
    while ((k = lr_next(lr, c)) == 1) {
        if (blank(lr->buf))
            continue;
        uint64_t line = lr->line;
        int nf = split_line(lr, c, f);
        if (nf < 0)
            return TC_EINVAL;
        if (first && strcmp(f[0], "job_name") == 0) { /* a header, as data/pai_task_table.header */
            first = false;
            nh = nf;
            for (int i = 0; i < 5; i++)
                if ((col[i] = column(f, nf, names[i])) < 0)
                    return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: no column '%s' in the header (PAI "
                                   "pai_task_table has " PAI_COLUMNS ")", c->path, (unsigned long long)line, names[i]);
            continue;
        }
        first = false;
        if (nf != nh)
            return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: expected %d fields (" PAI_COLUMNS "), got %d", c->path,
                           (unsigned long long)line, nh, nf);
        const char *name = f[col[0]];
        if (!*name)
            return field_err(c, line, "job_name", "a job name", name);
        double inst = 0, start = 0, end = 0, pct = 0;
        bool have_inst, have_start, have_end, have_gpu;
        tc_status st;
        if ((st = pai_num(c, line, "inst_num", f[col[1]], MAX_SIZE, &have_inst, &inst)) ||
            (st = pai_num(c, line, "start_time", f[col[2]], MAX_TIME, &have_start, &start)) ||
            (st = pai_num(c, line, "end_time", f[col[3]], MAX_TIME, &have_end, &end)) ||
            (st = pai_num(c, line, "plan_gpu", f[col[4]], 100.0 * MAX_SIZE, &have_gpu, &pct)))
            return st;
        if (have_inst && inst != floor(inst))
            return field_err(c, line, "inst_num", "a whole number of instances", f[col[1]]);
        if (have_start && have_end && end < start)
            return field_err(c, line, "end_time", "a time not before start_time (a negative duration)", f[col[3]]);
        pjob *j = pmap_get(m, name, line);
        if (!j)
            return tc_fail(c->err, TC_EINTERNAL, "%.160s:%llu: out of memory", c->path, (unsigned long long)line);
        if (!have_inst || !have_gpu)
            continue; /* no GPU asked for */
        if (!have_start || !have_end || end == start) {
            j->gpu_unrun = true;
            continue;
        }
        j->gpu_pct += inst * pct;
        if (j->gpu_pct > 100.0 * MAX_SIZE)
            return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: field 'plan_gpu': job '%.24s' asks for more than the %u "
                           "(2^24) GPUs accepted", c->path, (unsigned long long)line, name, MAX_SIZE);
        j->start = j->ran ? fmin(j->start, start) : start;
        j->end = j->ran ? fmax(j->end, end) : end;
        j->ran = true;
    }
    return k < 0 ? TC_EINVAL : TC_OK;
}

static tc_status read_pai(lreader *lr, rd *c)
{
    pmap m = {0};
    tc_status st = read_pai_rows(lr, c, &m);
    for (size_t i = 0; i < m.n && !st; i++) {
        const pjob *j = &m.v[i];
        const char *name = m.arena + j->name;
        if (!j->ran)
            skip(c, "line %llu: job '%.24s': %s", (unsigned long long)j->line, name,
                 j->gpu_unrun ? "no GPU task ran (start_time/end_time empty or 0)"
                              : "no task asks for a GPU (plan_gpu empty or 0)");
        else
            st = push(c, j->start, j->end - j->start, (uint32_t)fmax(1, ceil(j->gpu_pct / 100 - 1e-9)), j->line);
    }
    pmap_free(&m);
    return st;
}

/* ---- Philly cluster_job_log (JSON) ------------------------------------- */

static const char *json_kind(const json_t *v)
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

static tc_status rec_err(const rd *c, size_t rec, const char *field, const char *expected, const json_t *got)
{
    char g[48];
    if (got && json_is_string(got))
        return tc_fail(c->err, TC_EINVAL, "%.160s: record %zu: field '%s': expected %s, got '%s'", c->path, rec, field,
                       expected, shown(json_string_value(got), g, sizeof g));
    return tc_fail(c->err, TC_EINVAL, "%.160s: record %zu: field '%s': expected %s, got %s", c->path, rec, field,
                   expected, got ? json_kind(got) : "nothing (no such key)");
}

/* A time of the log: null, "" or "None" (as the notebook's parse_date) is
 * missing. */
static tc_status philly_time(const rd *c, size_t rec, const char *field, const json_t *v, bool *have, double *t)
{
    *have = false;
    if (!v || json_is_null(v))
        return TC_OK;
    if (!json_is_string(v))
        return rec_err(c, rec, field, DATETIME_EXPECTED, v);
    const char *s = json_string_value(v);
    if (!*s || strcmp(s, "None") == 0)
        return TC_OK;
    if (parse_datetime(s, t) != V_OK)
        return rec_err(c, rec, field, DATETIME_EXPECTED, v);
    *have = true;
    return TC_OK;
}

/* The GPUs of one attempt: the lengths of its detail[].gpus lists. */
static tc_status philly_gpus(const rd *c, size_t rec, size_t a, const json_t *att, uint32_t *out)
{
    char field[96];
    const json_t *det = json_object_get(att, "detail");
    *out = 0;
    if (!det || json_is_null(det))
        return TC_OK;
    if (!json_is_array(det)) {
        snprintf(field, sizeof field, "attempts[%zu].detail", a);
        return rec_err(c, rec, field, "a list of machines", det);
    }
    size_t total = 0;
    for (size_t d = 0; d < json_array_size(det); d++) {
        const json_t *m = json_array_get(det, d);
        const json_t *g = json_is_object(m) ? json_object_get(m, "gpus") : NULL;
        if (!json_is_object(m) || (g && !json_is_null(g) && !json_is_array(g))) {
            snprintf(field, sizeof field, "attempts[%zu].detail[%zu]%s", a, d, json_is_object(m) ? ".gpus" : "");
            return rec_err(c, rec, field, json_is_object(m) ? "a list of GPUs" : "an object {ip, gpus}",
                           json_is_object(m) ? g : m);
        }
        total += g && json_is_array(g) ? json_array_size(g) : 0;
        if (total > MAX_SIZE) {
            snprintf(field, sizeof field, "attempts[%zu].detail", a);
            return tc_fail(c->err, TC_EINVAL, "%.160s: record %zu: field '%s': more than the %u (2^24) GPUs accepted",
                           c->path, rec, field, MAX_SIZE);
        }
    }
    *out = (uint32_t)total;
    return TC_OK;
}

static tc_status philly_job(rd *c, size_t rec, const json_t *job)
{
    if (!json_is_object(job))
        return tc_fail(c->err, TC_EINVAL, "%.160s: record %zu: expected a job object {jobid, submitted_time, "
                       "attempts, ...}, got %s", c->path, rec, json_kind(job));
    const json_t *sub = json_object_get(job, "submitted_time"), *atts = json_object_get(job, "attempts");
    if (!sub)
        return rec_err(c, rec, "submitted_time", DATETIME_EXPECTED, NULL);
    if (!atts)
        return rec_err(c, rec, "attempts", "a list of attempts", NULL);
    if (!json_is_null(atts) && !json_is_array(atts))
        return rec_err(c, rec, "attempts", "a list of attempts", atts);
    double submit = 0;
    bool have_submit;
    tc_status st = philly_time(c, rec, "submitted_time", sub, &have_submit, &submit);
    if (st)
        return st;
    size_t na = json_is_array(atts) ? json_array_size(atts) : 0;
    double dur = 0;
    uint32_t gpus = 0;
    bool last_end = false;
    char field[96];
    for (size_t a = 0; a < na; a++) {
        const json_t *att = json_array_get(atts, a);
        if (!json_is_object(att)) {
            snprintf(field, sizeof field, "attempts[%zu]", a);
            return rec_err(c, rec, field, "an object {start_time, end_time, detail}", att);
        }
        double t0 = 0, t1 = 0;
        bool h0, h1;
        uint32_t g;
        snprintf(field, sizeof field, "attempts[%zu].start_time", a);
        if ((st = philly_time(c, rec, field, json_object_get(att, "start_time"), &h0, &t0)))
            return st;
        snprintf(field, sizeof field, "attempts[%zu].end_time", a);
        if ((st = philly_time(c, rec, field, json_object_get(att, "end_time"), &h1, &t1)))
            return st;
        if ((st = philly_gpus(c, rec, a, att, &g)))
            return st;
        if (h0 && h1 && t1 < t0)
            return rec_err(c, rec, field, "a time not before start_time (a negative duration)",
                           json_object_get(att, "end_time"));
        if (h0 && h1)
            dur += t1 - t0;
        if (a == 0)
            gpus = g;
        last_end = h1;
    }
    if (!have_submit)
        skip(c, "record %zu: no submitted_time", rec);
    else if (na == 0)
        skip(c, "record %zu: no attempt (never scheduled)", rec);
    else if (gpus == 0)
        skip(c, "record %zu: no GPU in the first attempt", rec);
    else if (!last_end)
        skip(c, "record %zu: the last attempt has no end_time (still running when the log ends)", rec);
    else if (!(dur > 0))
        skip(c, "record %zu: no attempt ran for a positive time", rec);
    else
        return push(c, submit, dur, gpus, rec);
    return TC_OK;
}

static size_t count_lines(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

static tc_status read_philly(FILE *f, rd *c)
{
    size_t cap = 1 << 16, len = 0; /* doubled as the file needs */
    char *buf = malloc(cap);
    tc_status st = TC_OK;
    if (!buf)
        return tc_fail(c->err, TC_EINTERNAL, "%.160s: out of memory", c->path);
    for (size_t k; (k = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += k;
        if (len == cap) {
            char *b = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return tc_fail(c->err, TC_EINTERNAL, "%.160s: out of memory reading %zu bytes", c->path, len);
            }
            buf = b;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        free(buf);
        return tc_fail(c->err, TC_EINVAL, "%.160s: cannot read", c->path);
    }
    size_t off = 0, rec = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        off = 3;
    while (off < len && isspace((unsigned char)buf[off]))
        off++;
    if (off == len) {
        free(buf);
        return tc_fail(c->err, TC_EINVAL, "%.160s: empty file: expected a JSON list of Philly jobs", c->path);
    }
    /* '[': one list of jobs (cluster_job_log); '{': job objects one after
     * another (JSON lines). */
    bool list = buf[off] == '[';
    while (off < len && !st) {
        json_error_t je;
        json_t *v = json_loadb(buf + off, len - off, list ? 0 : JSON_DISABLE_EOF_CHECK, &je);
        if (!v) {
            st = tc_fail(c->err, TC_EINVAL, "%.160s:%zu: invalid JSON: %s", c->path,
                         count_lines(buf, off) + (size_t)(je.line > 0 ? je.line : 1), je.text);
            break;
        }
        if (list) {
            if (!json_is_array(v))
                st = tc_fail(c->err, TC_EINVAL, "%.160s: expected a JSON list of jobs", c->path);
            for (size_t i = 0; !st && i < json_array_size(v); i++)
                st = philly_job(c, ++rec, json_array_get(v, i));
            off = len;
        } else {
            st = philly_job(c, ++rec, v);
            off += (size_t)je.position;
            while (off < len && isspace((unsigned char)buf[off]))
                off++;
        }
        json_decref(v);
    }
    free(buf);
    return st;
}

/* ---- the reader -------------------------------------------------------- */

static int cmp_job(const void *a, const void *b)
{
    const tc_cjob *x = a, *y = b;
    if (x->submit_s != y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Sorts by submit (ties by line), puts the first at 0. */
static void rebase(tc_cjob *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_job);
    double t0 = n ? v[0].submit_s : 0;
    for (size_t i = 0; i < n; i++)
        v[i].submit_s -= t0;
}

/* The format of the file by its content (the rule at the top). */
static tc_status detect(FILE *f, lreader *lr, rd *c, tc_trace_format *out)
{
    int ch;
    size_t lead = 0;
    while ((ch = getc(f)) != EOF && (isspace(ch) || (lead < 3 && (ch == 0xEF || ch == 0xBB || ch == 0xBF))))
        lead++;
    if (ch == '[' || ch == '{') {
        *out = TC_TRACE_PHILLY;
        return TC_OK;
    }
    rewind(f);
    lr->f = f;
    lr->line = 0;
    int k;
    while ((k = lr_next(lr, c)) == 1 && blank(lr->buf))
        ;
    if (k < 0)
        return TC_EINVAL;
    if (k == 0)
        return tc_fail(c->err, TC_EINVAL, "%.160s: empty file: no jobs", c->path);
    char first[64], *fl[MAX_FIELDS];
    shown(lr->buf + strspn(lr->buf, " \t"), first, sizeof first);
    if (lr->buf[strspn(lr->buf, " \t")] == '#') {
        *out = TC_TRACE_CSV;
        return TC_OK;
    }
    int nf = csv_split(lr->buf, fl, MAX_FIELDS);
    if (nf == 3 && !strcmp(fl[0], "submit") && !strcmp(fl[1], "size") && !strcmp(fl[2], "duration"))
        *out = TC_TRACE_CSV;
    else if (nf > 0 && column(fl, nf, "gpu_num") >= 0 && column(fl, nf, "submit_time") >= 0)
        *out = TC_TRACE_HELIOS;
    else if (nf == 10 || (nf > 0 && strcmp(fl[0], "job_name") == 0))
        *out = TC_TRACE_PAI;
    else
        return tc_fail(c->err, TC_EINVAL, "%.160s:%llu: cannot tell the trace format from '%s': expected a JSON list "
                       "(philly), a header with gpu_num and submit_time (helios), 10 fields (pai) or the header "
                       "'submit,size,duration' (csv); name the format", c->path, (unsigned long long)lr->line, first);
    return TC_OK;
}

tc_status tc_trace_read(const char *path, tc_trace_format fmt, tc_trace *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return tc_fail(err, TC_EINVAL, "no trace file named");
    if (fmt == TC_TRACE_SYNTHETIC)
        return tc_fail(err, TC_EINVAL, "%.160s: a synthetic trace is drawn, not read: accepted formats to read are "
                       "auto, csv, philly, helios, pai", path);
    if ((unsigned)fmt > TC_TRACE_SYNTHETIC)
        return tc_fail(err, TC_EINVAL, "unknown trace format %d", (int)fmt);
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "%.160s: cannot open the trace: %s", path, strerror(errno));
    lreader *lr = malloc(sizeof *lr);
    if (!lr) {
        fclose(f);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    rd c = {.path = path, .err = err, .out = out};
    tc_status st = fmt == TC_TRACE_AUTO ? detect(f, lr, &c, &fmt) : TC_OK;
    if (!st) {
        rewind(f);
        lr->f = f;
        lr->line = 0;
        switch (fmt) {
        case TC_TRACE_CSV: st = read_own(lr, &c); break;
        case TC_TRACE_HELIOS: st = read_helios(lr, &c); break;
        case TC_TRACE_PAI: st = read_pai(lr, &c); break;
        default: st = read_philly(f, &c); break;
        }
    }
    free(lr);
    fclose(f);
    if (!st && c.n == 0) {
        if (out->skipped)
            st = tc_fail(err, TC_EINVAL, "%.160s: no jobs in the trace (%zu records skipped, the first: %s)", path,
                         out->skipped, out->skipped_why);
        else
            st = tc_fail(err, TC_EINVAL, "%.160s: no jobs in the trace", path);
    }
    if (st) {
        free(c.v);
        memset(out, 0, sizeof *out);
        return st;
    }
    rebase(c.v, c.n);
    out->jobs = c.v;
    out->n = c.n;
    out->format = fmt;
    return TC_OK;
}

/* ---- synthetic --------------------------------------------------------- */

/*
 * Published statistics of the Helios traces (Hu et al., "Characterization
 * and Prediction of Deep Learning Workloads in Large-Scale GPU
 * Datacenters", SC'21), from the paper's artifact repository
 * github.com/S-Lab-System-Group/HeliosArtifact, commit bdaae10
 * (2022-09-27). The figures there are vector PDFs; the values below are
 * the plotted points, read from the PDF drawing (y = (y_pt - y_0%) /
 * (y_100% - y_0%) at the axis ticks 0 and 100).
 *
 * Sizes: analysis/3_job characterization/job_cdf_gpunum.pdf, panel (a),
 * "Fraction of Jobs (%)" of GPU jobs with at most 1, 2, 4, 8, 12, 16, 24,
 * 32, 40, 48, 56, 64 and any GPUs, per cluster (Venus, Earth, Saturn,
 * Uranus), pooled with the clusters' GPU-job counts from analysis/
 * 1_compare with Philly trace/helios_cluster_summary.csv (gpu_job_num
 * 125303, 427148, 698896, 329117). A step's mass sits at its upper GPU
 * count; the "> 64" step's at 128 (assumed: the figure does not say; with
 * 128 the mean is 3.66 against the 3.716 avg_gpu_num of
 * helios_cluster_summary.csv, whose median 1 it matches too).
 */
static const struct {
    uint32_t size;
    double pct;
} SIZE_PMF[] = {
    {1, 72.189}, {2, 2.557},  {4, 5.725},  {8, 14.219}, {12, 0.012}, {16, 3.019},  {24, 0.355},
    {32, 1.275}, {40, 0.098}, {48, 0.097}, {56, 0.062}, {64, 0.127}, {128, 0.266},
};

/*
 * Durations: analysis/1_compare with Philly trace/compare_philly.pdf,
 * panel (a), the "Helios" line (all four clusters' GPU jobs): percent of
 * GPU jobs with duration <= 2^i s, i = 0..21. Drawn by the inverse of this
 * CDF, log-uniform within each doubling; the 4.0 % of jobs of 1 s or less
 * last 1 s. The mean of this distribution is 6980 s, its median 201 s
 * (helios_cluster_summary.csv: avg_run_time_gpu 6651.7 s, median 206 s).
 * Durations are drawn independently of sizes (a simplification).
 */
static const double DUR_CDF_PCT[22] = {3.997,  4.934,  6.350,  7.699,  10.722, 16.150, 24.881, 37.811,
                                       56.574, 67.579, 75.246, 84.100, 87.534, 90.750, 94.364, 96.265,
                                       97.770, 98.900, 99.550, 99.857, 99.963, 100.0};

typedef struct {
    uint64_t s;
} rng64;

/* splitmix64 (tc_mix64 adds its increment): the same numbers on every
 * platform. */
static uint64_t rng_next(rng64 *r)
{
    uint64_t x = tc_mix64(r->s);
    r->s += 0x9e3779b97f4a7c15ULL;
    return x;
}

static double rng_u01(rng64 *r)
{
    return (double)(rng_next(r) >> 11) * 0x1p-53;
}

static uint32_t draw_size(rng64 *r, uint32_t endpoints)
{
    double total = 0;
    for (size_t i = 0; i < sizeof SIZE_PMF / sizeof *SIZE_PMF; i++)
        total += SIZE_PMF[i].pct;
    for (;;) { /* sizes above endpoints are drawn again; size 1 always fits */
        double u = rng_u01(r) * total, acc = 0;
        uint32_t s = SIZE_PMF[sizeof SIZE_PMF / sizeof *SIZE_PMF - 1].size;
        for (size_t i = 0; i < sizeof SIZE_PMF / sizeof *SIZE_PMF; i++)
            if (u < (acc += SIZE_PMF[i].pct)) {
                s = SIZE_PMF[i].size;
                break;
            }
        if (s <= endpoints)
            return s;
    }
}

static double draw_duration(rng64 *r)
{
    double u = rng_u01(r) * 100;
    if (u < DUR_CDF_PCT[0])
        return 1;
    for (int i = 1; i < 22; i++)
        if (u < DUR_CDF_PCT[i])
            return ldexp(exp2((u - DUR_CDF_PCT[i - 1]) / (DUR_CDF_PCT[i] - DUR_CDF_PCT[i - 1])), i - 1);
    return ldexp(1, 21);
}

static tc_status synth_args(size_t n, uint32_t endpoints, double load, tc_err *err)
{
    if (n < 1 || n > MAX_SYNTH_JOBS)
        return tc_fail(err, TC_EINVAL, "a synthetic trace of %zu jobs: accepted are 1 to %u", n, MAX_SYNTH_JOBS);
    if (endpoints < 1 || endpoints > MAX_SIZE)
        return tc_fail(err, TC_EINVAL, "a synthetic trace for %u endpoints: accepted are 1 to %u (2^24)", endpoints,
                       MAX_SIZE);
    /* from 1e-9: the arrival rate's bisection below starts at 1e-12 */
    if (!isfinite(load) || !(load >= 1e-9) || load > 1e6)
        return tc_fail(err, TC_EINVAL, "a synthetic trace at load %g: accepted is a load from 1e-9 (0.9: 90%% of the "
                       "cluster's endpoint-seconds) to 1e6", load);
    return TC_OK;
}

/* The jobs' sizes at once against the demand the load asks for. */
static tc_status synth_load(size_t n, uint32_t endpoints, double load, double ssum, tc_err *err)
{
    if (load * endpoints >= ssum)
        return tc_fail(err, TC_EINVAL, "a synthetic trace at load %g cannot be: its %zu jobs all at once ask for %.0f "
                       "of the %u endpoints; ask for a lower load or more jobs", load, n, ssum, endpoints);
    return TC_OK;
}

tc_status tc_trace_synthetic_check(size_t n, uint64_t seed, uint32_t endpoints, double load, tc_err *err)
{
    tc_status st = synth_args(n, endpoints, load, err);
    if (st)
        return st;
    rng64 rs = {seed}; /* as tc_trace_synthetic draws them */
    double ssum = 0;
    for (size_t i = 0; i < n; i++) {
        ssum += draw_size(&rs, endpoints);
        (void)draw_duration(&rs);
    }
    return synth_load(n, endpoints, load, ssum, err);
}

tc_status tc_trace_synthetic(size_t n, uint64_t seed, uint32_t endpoints, double load, tc_trace *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    tc_status st = synth_args(n, endpoints, load, err);
    if (st)
        return st;
    tc_cjob *v = tc_calloc(n, sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory for %zu jobs", n);
    rng64 rs = {seed}, rt = {tc_mix64(seed ^ 0x5452414345ULL)}; /* sizes and durations; arrivals */
    for (size_t i = 0; i < n; i++) {
        v[i].size = draw_size(&rs, endpoints);
        v[i].duration_s = draw_duration(&rs);
        v[i].line = i + 1;
    }
    /* Poisson arrivals at the rate lambda whose demand at the end of the
     * arrivals is load x endpoints: jobs arriving uniformly over T = n /
     * lambda, job i still runs at T with probability min(d_i, T) / T
     * (M/G/infinity), so the demand there is lambda x mean(size x min(d,
     * T)). With Helios's heavy tail (run times to 24 days) the plain
     * offered load, lambda x mean(size x duration), would mostly be
     * offered after the last arrival, and a trace of 10^4 jobs at "load
     * 0.9" would never fill a cluster. The demand grows with lambda
     * (lambda min(d, n/lambda) = min(lambda d, n)): bisection in log
     * lambda. */
    double ssum = 0;
    for (size_t i = 0; i < n; i++)
        ssum += v[i].size;
    if ((st = synth_load(n, endpoints, load, ssum, err))) {
        free(v);
        return st;
    }
    double lo = 1e-12, hi = 1e12, want = load * endpoints;
    for (int it = 0; it < 200 && hi / lo > 1 + 1e-12; it++) {
        double mid = sqrt(lo * hi), T = (double)n / mid, dem = 0;
        for (size_t i = 0; i < n; i++)
            dem += v[i].size * (v[i].duration_s < T ? v[i].duration_s : T);
        dem *= mid / (double)n;
        if (dem < want)
            lo = mid;
        else
            hi = mid;
    }
    double lambda = sqrt(lo * hi), t = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            t += -log1p(-rng_u01(&rt)) / lambda;
        v[i].submit_s = t;
    }
    out->jobs = v;
    out->n = n;
    out->format = TC_TRACE_SYNTHETIC;
    return TC_OK;
}
