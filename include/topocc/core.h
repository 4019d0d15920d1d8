/*
 * topocc/core.h - status codes, error messages, units and spec parsing.
 *
 * Errors travel as values: every fallible function returns a tc_status and,
 * on failure, fills a tc_err with one line that names what was wrong and what
 * is accepted. Only the CLI turns them into text on stderr and exit codes.
 * Units inside the library are bytes, seconds and bytes per second.
 */
#ifndef TOPOCC_CORE_H
#define TOPOCC_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_OK = 0,
    TC_EINVAL = 2,   /* bad input: the caller asked for something invalid */
    TC_EINTERNAL = 1 /* a failure of topocc itself (allocation, invariant) */
} tc_status;

#define TC_ERR_LEN 512
typedef struct tc_err {
    char msg[TC_ERR_LEN];
} tc_err;

/* Formats into err (if non-NULL) and returns code. */
tc_status tc_fail(tc_err *err, tc_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Notes: what a run says that is neither its result nor an error (a
 * sweep's results file ends in a torn line and it is left out, ...). Each
 * goes to the note handler, one line without its newline; the default,
 * tc_note_stderr, writes "topocc: note: TEXT" on stderr. A caller of the
 * library sets its own (NULL: notes are dropped). Process-wide: set it
 * before the runs, not while one is under way. */
typedef void (*tc_note_fn)(void *ud, const char *text);
void tc_set_note_handler(tc_note_fn fn, void *ud);
void tc_note_stderr(void *ud, const char *text);
void tc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that reports failure as TC_EINTERNAL via the caller. */
void *tc_calloc(size_t n, size_t size);

/* Largest accepted size of a collective, 2^60 bytes. */
#define TC_MAX_BYTES 1152921504606846976.0

/* Parse "64KiB", "1GiB", "4MB", "512" (bytes). Powers of 2 for KiB/MiB/GiB/TiB,
 * powers of 10 for KB/MB/GB/TB. Accepts fractional numbers. */
tc_status tc_parse_size(const char *s, double *out, tc_err *err);
/* Parse "400Gbps" (bits/s: bps, Kbps, Mbps, Gbps, Tbps) or "50GB/s" (bytes/s,
 * powers of 10: B/s, KB/s, MB/s, GB/s, TB/s). Result in bytes per second. */
tc_status tc_parse_rate(const char *s, double *out, tc_err *err);
/* Parse "1us", "500ns", "2ms", "1s". Result in seconds. */
tc_status tc_parse_time(const char *s, double *out, tc_err *err);
/* Parse a positive integer that fits in uint32_t. */
tc_status tc_parse_u32(const char *s, uint32_t *out, tc_err *err);
/* Parse "8x8x16" into up to max values, each >= 1; *n receives the count. */
tc_status tc_parse_dims(const char *s, uint32_t *vals, int max, int *n, tc_err *err);

/* Human-readable formatting into buf (returns buf). */
const char *tc_fmt_size(double bytes, char *buf, size_t len);   /* "64KiB" */
const char *tc_fmt_time(double s, char *buf, size_t len);       /* "12.3us" */
const char *tc_fmt_rate(double Bps, char *buf, size_t len);     /* "50.0GB/s" */

/* A parsed "kind:key=val,key=val" spec. Keys and values point into storage. */
#define TC_SPEC_MAX_KV 32
typedef struct tc_spec {
    char storage[512];
    const char *kind;
    int nkv;
    const char *key[TC_SPEC_MAX_KV];
    const char *val[TC_SPEC_MAX_KV];
    bool used[TC_SPEC_MAX_KV];
} tc_spec;

/* Splits s at ':' then ',' and '='. An empty kind is allowed when s has no ':'
 * and allow_bare is set (then the whole string is the kind). */
tc_status tc_spec_parse(const char *s, tc_spec *sp, tc_err *err);
/* Whether a comma-separated list has an empty item (a leading, doubled or
 * trailing comma), which strtok_r would skip; "" has none. */
bool tc_list_has_empty(const char *s);
/* Levenshtein distance of two short strings (64 when either is longer
 * than 63 bytes), for "did you mean". */
size_t tc_edit_distance(const char *a, const char *b);
/* Whether s is valid UTF-8 (no overlong forms, no surrogates, nothing
 * above U+10FFFF), the text JSON holds; when not, *bad (if given) is the
 * offset of the first byte that is not. */
bool tc_utf8_valid(const char *s, size_t *bad);
/* Returns the value of key (marking it used) or NULL. */
const char *tc_spec_get(tc_spec *sp, const char *key);
/* Fails naming the first key not consumed by tc_spec_get; accepted lists the
 * valid keys for the message. */
tc_status tc_spec_check_unused(const tc_spec *sp, const char *what,
                               const char *accepted, tc_err *err);

/* ---- files --------------------------------------------------------------
 * Nothing the user asked to be written is left half-written: a file is
 * written under a temporary name beside its destination and renamed into
 * place only once it is complete. */
typedef struct tc_atomic_file {
    void *f;          /* FILE *, open for writing */
    char path[4096];  /* the destination */
    char tmp[4160];   /* the temporary name, path.tmp.PID */
    bool direct;      /* a device or pipe (/dev/null, a FIFO): written in place */
    int slot;         /* its place among the temporary files a signal removes; -1: none */
} tc_atomic_file;

/* Opens a temporary file beside path; fails (TC_EINVAL) naming path when its
 * directory cannot be written or path is a directory. A symbolic link to a
 * file has its target replaced (the link stays); a device or a pipe is
 * written in place. Where SIGINT, SIGTERM or SIGHUP would end the process
 * (their default action), the temporary files open then are removed before
 * it ends. */
tc_status tc_atomic_open(tc_atomic_file *af, const char *path, tc_err *err);
/* Flushes, closes and renames into place; on any failure removes the
 * temporary file and says why. */
tc_status tc_atomic_commit(tc_atomic_file *af, tc_err *err);
/* Closes and removes the temporary file (nothing is written). */
void tc_atomic_abort(tc_atomic_file *af);
/* Reads f (a file, a pipe) to its end into *buf (malloc'd, NUL-terminated;
 * *len bytes before the terminator). Returns 0, or: EFBIG past max bytes,
 * EILSEQ at a NUL byte where stop_at_nul (a device that never ends stops
 * there), ENOMEM, or the read's errno; *buf is then untouched. */
int tc_read_stream(void *f, size_t max, bool stop_at_nul, char **buf, size_t *len);
/* Whether two paths name one file, compared as files, not as text
 * ("r.json", "./r.json", a link to it and a hard link are one file): the
 * same device and inode where a path exists; where it does not exist yet,
 * its directory's device and inode and its last name; where that directory
 * does not exist either, the path made absolute with ".", ".." and repeated
 * '/' taken out. A device or a pipe (/dev/null) is never "the same file":
 * writing it twice overwrites nothing. */
bool tc_same_file(const char *a, const char *b);
/* The identity tc_same_file compares, as text in buf: two paths name one
 * file when their keys are equal. false when it does not fit in len bytes
 * (TC_FILE_KEY_MAX always does for a path under 4096 bytes). */
#define TC_FILE_KEY_MAX 8300
bool tc_file_key(const char *path, char *buf, size_t len);
/* A file to be written at path is refused where path is a directory (or
 * ends in '/'), and where its directory does not exist or is not one;
 * what names it in the message ("--trace out: a directory: give a file
 * name", "--trace d/t.json: the directory d does not exist: make it
 * first"). made_dir (NULL or "": none) is a directory the caller makes
 * before the file is written (--out-dir): path may be in it though it
 * does not exist yet. Nothing is created. */
tc_status tc_check_out_path(const char *path, const char *what, const char *made_dir, tc_err *err);
/* Makes the directory dir and every directory above it that is missing
 * (as mkdir -p); an existing directory is fine. Refused, naming the
 * component: one that is not a directory, one that cannot be made. */
tc_status tc_make_dirs(const char *dir, tc_err *err);
/* The absolute path that path will name once the directories it names
 * that are not there yet are made as named (tc_make_dirs): its longest
 * leading part that is there resolved by the system (links followed), the
 * rest with "." and ".." taken out by name, into buf. false where it does
 * not fit in len bytes. */
bool tc_future_path(const char *path, char *buf, size_t len);

/* JSON out: 2-space indentation, keys in insertion order, every real in
 * its shortest form that reads back to the same double (so a value written
 * and read back is bit for bit the same). NaN and infinities, which JSON
 * cannot hold, are written as null. */
struct json_t;
/* Writes v to f followed by a newline; false on a write error or when v is
 * NULL (a document that could not be built). */
bool tc_json_dumpf(const struct json_t *v, void *f);
/* v on one line (no spaces), then a newline: one JSON Lines record
 * (malloc'ed; *len its length; NULL when out of memory or v is NULL). */
char *tc_json_line(const struct json_t *v, size_t *len);
/* Writes v to path atomically, or to standard output when path is NULL;
 * a NULL v (a document that could not be built) is "out of memory". */
tc_status tc_json_write(const struct json_t *v, const char *path, tc_err *err);

/* Allocation failures that could not be returned where they happened,
 * counted per thread: jansson's, which it reports in part (a NULL value,
 * json_object_set_new's -1, which builders do not check) and hides in part
 * (its parser drops a character of a long token, or reports a syntax
 * error, when memory runs out), and those of a writer that leaves a row
 * out and carries on (tc_oom_note). A reader, a builder or a writer takes a
 * mark before and asks after: a failure since the mark means that what was
 * read, built or written is not whole. The first mark routes jansson's
 * allocations through the count (json_set_alloc_funcs, chained to the
 * functions set before). */
unsigned long tc_oom_mark(void);
bool tc_oom_since(unsigned long mark);
void tc_oom_note(void);
/* v when no allocation failed since mark; otherwise NULL, v freed. */
struct json_t *tc_json_checked(struct json_t *v, unsigned long mark);
/* json_dumps, NULL when out of memory: jansson's own returns a text with a
 * part left out where an allocation fails in some places. */
char *tc_json_dumps(const struct json_t *v, size_t flags);
/* The shortest "%.Ng" (N = 1..17) of v that strtod reads back to v. */
const char *tc_fmt_shortest(double v, char *buf, size_t len);

/* ---- progress -------------------------------------------------------------
 * Long runs report progress through a callback in their run options; the
 * library never prints. */
typedef struct tc_progress {
    const char *what;       /* "training", "flow simulation", ... */
    double fraction;        /* 0..1, or < 0 when unknown */
    double done, total;     /* units done and in all (total 0: unknown) */
    const char *unit;       /* "steps", "events", "cells", ... */
    double rate;            /* units per second so far (0: unknown) */
    double mem_bytes;       /* memory in use by the run, estimated (0: unknown) */
    const char *detail;     /* the part under way, with its own progress
                             * ("allreduce on B: 42% of flow simulation of ring at 1GiB"); NULL: none */
} tc_progress;
/* Called on the caller's thread, but in the runs that train on threads of
 * their own (train-accuracy, compress's accuracy runs), where it is called
 * from those threads, one call at a time. */
typedef void (*tc_progress_fn)(void *ud, const tc_progress *p);

/* Passes the reports of a part of a run (a simulation inside a compare
 * cell, a failures draw) on to the run's callback, as the run's:
 * - with a unit: under the run's name and count (done of total units,
 *   done counting the parts finished before this one), the part and its
 *   own report in detail ("allreduce on B: 42% of flow simulation");
 * - without (unit NULL): the part's report as it is, renamed what.
 * Set fn, ud, what, unit, total (and t0: tc_progress_relay_start); before
 * each part, done and part (tc_progress_relay_part). fn NULL: nothing. */
typedef struct tc_progress_relay {
    tc_progress_fn fn;
    void *ud;
    const char *what, *unit;
    double done, total;
    double t0;              /* when the run started (monotonic seconds) */
    char part[128];         /* the part under way: "allreduce on B" */
    char buf[320];          /* the detail passed on */
} tc_progress_relay;
void tc_progress_relay_start(tc_progress_relay *r, tc_progress_fn fn, void *ud, const char *what, const char *unit,
                             double total);
/* The part under way (printf-style), done units before it. */
void tc_progress_relay_part(tc_progress_relay *r, double done, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A tc_progress_fn: ud is the relay. */
void tc_progress_relay_cb(void *ud, const tc_progress *p);
/* The run's own report between parts (done units, no part under way). */
void tc_progress_relay_report(tc_progress_relay *r, double done);
/* Monotonic seconds (for rates and report periods). */
double tc_mono_now(void);

/* Fails (TC_EINVAL) when need_bytes exceeds limit_bytes (> 0): the one
 * line gives the estimate, the limit and the flag that raises it
 * (--mem-limit). what names the run ("the flow simulation"). */
tc_status tc_mem_check(double need_bytes, double limit_bytes, const char *what, tc_err *err);
/* Physical memory of this machine in bytes (0: unknown). */
double tc_mem_physical(void);

/* The version of this build ("0.3.0"), its git commit ("unknown" outside a
 * git checkout; "-dirty" appended when the tree had changes), its CMake
 * build type, and the optional dependencies found, one short line. */
const char *tc_version(void);
const char *tc_commit(void);
const char *tc_build_type(void);
const char *tc_optional_deps(void);

/* Deterministic 64-bit mixing (splitmix64), used for hashing and the RNG. */
static inline uint64_t tc_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#ifdef __cplusplus
}
#endif

#endif
