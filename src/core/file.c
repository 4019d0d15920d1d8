/*
 * file.c - output that is never half-written (temporary file + rename) and
 * JSON written with every number in its shortest round-trip form, so a
 * result or scenario read back is bit for bit what was written.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <threads.h>
#include <sys/stat.h>
#include <jansson.h>
#include "topocc/core.h"

/* The temporary files open now, removed when a signal whose default
 * action ends the process (SIGINT, SIGTERM, SIGHUP) ends it, so an
 * interrupted run leaves no *.tmp.PID beside the files it was writing. A
 * slot's name is written before it is marked used and unmarked before it
 * is reused; the handler calls only unlink, signal and raise. */
enum { TMP_SLOTS = 64 };
static char tmp_name[TMP_SLOTS][sizeof ((tc_atomic_file *)0)->tmp];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
static mtx_t tmp_lock;
static once_flag tmp_once = ONCE_FLAG_INIT;
static const int tmp_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void tmp_on_signal(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_used[i])
            unlink(tmp_name[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void tmp_init(void)
{
    mtx_init(&tmp_lock, mtx_plain);
    /* only where the signal would end the process: a caller's own handler
     * (or an ignored signal) is left as it is */
    for (size_t i = 0; i < sizeof tmp_signals / sizeof tmp_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(tmp_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL) {
            struct sigaction sa = {.sa_handler = tmp_on_signal};
            sigemptyset(&sa.sa_mask);
            sigaction(tmp_signals[i], &sa, NULL);
        }
    }
}

static void tmp_track(tc_atomic_file *af)
{
    call_once(&tmp_once, tmp_init);
    af->slot = -1;
    mtx_lock(&tmp_lock);
    for (int i = 0; i < TMP_SLOTS; i++)
        if (!tmp_used[i]) {
            memcpy(tmp_name[i], af->tmp, sizeof af->tmp);
            tmp_used[i] = 1;
            af->slot = i;
            break;
        }
    mtx_unlock(&tmp_lock);
}

static void tmp_untrack(tc_atomic_file *af)
{
    if (af->slot < 0)
        return;
    mtx_lock(&tmp_lock);
    tmp_used[af->slot] = 0;
    mtx_unlock(&tmp_lock);
    af->slot = -1;
}

tc_status tc_atomic_open(tc_atomic_file *af, const char *path, tc_err *err)
{
    memset(af, 0, sizeof *af);
    af->slot = -1;
    if (!path || !*path)
        return tc_fail(err, TC_EINVAL, "empty output path");
    if (strlen(path) >= sizeof af->path)
        return tc_fail(err, TC_EINVAL, "output path too long (at most %zu bytes): %.64s...", sizeof af->path - 1, path);
    snprintf(af->path, sizeof af->path, "%s", path);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return tc_fail(err, TC_EINVAL, "cannot write '%s': it is a directory (give a file name)", path);
        if (!S_ISREG(sb.st_mode)) {
            /* A device or a pipe (/dev/null, a FIFO) is written in place:
             * renaming over it would replace it with a file. */
            af->direct = true;
            af->f = fopen(path, "w");
            if (!af->f)
                return tc_fail(err, TC_EINVAL, "cannot write '%s': %s", path, strerror(errno));
            return TC_OK;
        }
        /* A link to a file: the file is replaced, the link stays. */
        char real[PATH_MAX];
        if (realpath(path, real) && strlen(real) < sizeof af->path)
            snprintf(af->path, sizeof af->path, "%s", real);
    }
    snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", af->path, (long)getpid());
    tmp_track(af); /* before it exists: a signal between the two removes nothing there */
    af->f = fopen(af->tmp, "w");
    if (!af->f)
        tmp_untrack(af);
    if (!af->f)
        return tc_fail(err, TC_EINVAL, "cannot write '%s': %s (check that its directory exists and is writable)", path,
                       strerror(errno));
    return TC_OK;
}

tc_status tc_atomic_commit(tc_atomic_file *af, tc_err *err)
{
    FILE *f = af->f;
    af->f = NULL;
    if (!f)
        return tc_fail(err, TC_EINTERNAL, "internal: commit of a file that is not open");
    bool bad = ferror(f) != 0;
    bad |= fflush(f) != 0;
    if (af->direct) {
        bad |= fclose(f) != 0;
        return bad ? tc_fail(err, TC_EINVAL, "cannot write '%s': %s", af->path, strerror(errno)) : TC_OK;
    }
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
    bad |= fclose(f) != 0;
    if (bad) {
        int e = errno;
        remove(af->tmp);
        tmp_untrack(af);
        return tc_fail(err, TC_EINVAL, "cannot write '%s': %s", af->path, strerror(e));
    }
    if (rename(af->tmp, af->path) != 0) {
        int e = errno;
        remove(af->tmp);
        tmp_untrack(af);
        return tc_fail(err, TC_EINVAL, "cannot rename the output into '%s': %s", af->path, strerror(e));
    }
    tmp_untrack(af);
    return TC_OK;
}

void tc_atomic_abort(tc_atomic_file *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
        if (!af->direct)
            remove(af->tmp);
        tmp_untrack(af);
    }
}

/* path with its "." components taken out and its '/' single, into buf
 * ("." for a relative path with nothing left, "/" for an absolute one);
 * with up, a ".." takes out the name before it (never the root), else it
 * is kept (what it names depends on the directory before it). False where
 * it does not fit. */
static bool normal_path(const char *path, bool up, char *buf, size_t len)
{
    size_t n = 0, root = path[0] == '/';
    if (len < 2)
        return false;
    if (root)
        buf[n++] = '/';
    for (const char *c = path; *c;) {
        while (*c == '/')
            c++;
        size_t m = strcspn(c, "/");
        if (m == 0)
            break;
        if (m == 1 && c[0] == '.') {
            /* nothing */
        } else if (up && m == 2 && c[0] == '.' && c[1] == '.') {
            while (n > root && buf[n - 1] != '/')
                n--;
            if (n > root)
                n--; /* the '/' before the name taken out */
        } else {
            bool sep = n > 0 && buf[n - 1] != '/';
            if (n + sep + m + 1 > len)
                return false;
            if (sep)
                buf[n++] = '/';
            memcpy(buf + n, c, m);
            n += m;
        }
        c += m;
    }
    if (n == 0)
        buf[n++] = '.';
    buf[n] = '\0';
    return true;
}

/* path made absolute (the working directory before it), its "." and ".."
 * taken out and its '/' single, into buf. */
static bool lexical_path(const char *path, char *buf, size_t len)
{
    char whole[8200], cwd[4096];
    size_t cl = 0, pl = strlen(path);
    if (path[0] != '/') {
        if (!getcwd(cwd, sizeof cwd))
            return false;
        cl = strlen(cwd);
    }
    if (cl + 1 + pl + 1 > sizeof whole)
        return false;
    memcpy(whole, cwd, cl);
    whole[cl] = '/';
    memcpy(whole + cl + 1, path, pl + 1);
    return normal_path(whole, true, buf, len);
}

bool tc_file_key(const char *path0, char *buf, size_t len)
{
    struct stat sb;
    char cur[4096];
    if (strlen(path0) >= sizeof cur)
        return false;
    memcpy(cur, path0, strlen(path0) + 1);
    /* "d/" is d */
    for (size_t n = strlen(cur); n > 1 && cur[n - 1] == '/'; n--)
        cur[n - 1] = '\0';
    const char *path = cur;
    /* A link to a file not there yet names that file (writing through the
     * link creates it): followed, as the system would. */
    for (int hops = 0; hops < 40; hops++) {
        if (stat(path, &sb) == 0) {
            int n = snprintf(buf, len, "i%llu:%llu", (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
            return n > 0 && (size_t)n < len;
        }
        char to[4096];
        ssize_t tl;
        if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode) || (tl = readlink(path, to, sizeof to - 1)) <= 0)
            break;
        to[tl] = '\0';
        const char *sl = strrchr(cur, '/');
        size_t keep = to[0] == '/' || !sl ? 0 : (size_t)(sl - cur) + 1; /* the link's directory, with its '/' */
        if (keep + (size_t)tl + 1 > sizeof cur)
            return false;
        memcpy(cur + keep, to, (size_t)tl + 1);
    }
    /* Not there yet: its directory, and its name in it. */
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char dir[4096];
    size_t dl = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 0;
    if (dl < sizeof dir && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
        if (slash)
            memcpy(dir, path, dl);
        else
            dir[dl++] = '.';
        dir[dl] = '\0';
        if (stat(dir, &sb) == 0) {
            int n = snprintf(buf, len, "d%llu:%llu/%s", (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
                             name);
            return n > 0 && (size_t)n < len;
        }
    }
    if (len < 2)
        return false;
    buf[0] = 'p';
    return lexical_path(path, buf + 1, len - 1);
}

tc_status tc_check_out_path(const char *path, const char *what, const char *made_dir, tc_err *err)
{
    struct stat sb;
    size_t pl = strlen(path);
    if ((stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) || (pl && path[pl - 1] == '/'))
        return tc_fail(err, TC_EINVAL, "%s %.200s: a directory: give a file name", what, path);
    /* its directory: what precedes the last '/' ("/" for "/x"), else "." */
    const char *slash = strrchr(path, '/');
    char dir[4096];
    size_t dl = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
    if (dl >= sizeof dir)
        return TC_OK; /* the write says what is wrong with such a name */
    memcpy(dir, slash ? path : ".", dl);
    dir[dl] = '\0';
    while (dl > 1 && dir[dl - 1] == '/')
        dir[--dl] = '\0';
    /* the directory --out-dir names, which the run makes first: compared
     * without "." components, which a path not made yet keeps in its key */
    char d1[4096], d2[4096];
    if (made_dir && made_dir[0] && normal_path(dir, false, d1, sizeof d1) &&
        normal_path(made_dir, false, d2, sizeof d2) && tc_same_file(d1, d2))
        return TC_OK;
    if (stat(dir, &sb) != 0)
        return errno == ENOENT
                   ? tc_fail(err, TC_EINVAL, "%s %.200s: the directory %.200s does not exist: make it first", what,
                             path, dir)
                   : tc_fail(err, TC_EINVAL, "%s %.200s: the directory %.200s: %s", what, path, dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "%s %.200s: %.200s is not a directory", what, path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return tc_fail(err, TC_EINVAL, "%s %.200s: the directory %.200s is not writable: %s", what, path, dir,
                       strerror(errno));
    return TC_OK;
}

bool tc_future_path(const char *path, char *buf, size_t len)
{
    char cur[4096], real[PATH_MAX];
    size_t pl = strlen(path);
    if (pl == 0 || pl >= sizeof cur)
        return false;
    memcpy(cur, path, pl + 1);
    /* the longest prefix (ending before a '/') the system resolves */
    size_t cut = pl;
    for (;;) {
        char keep = cur[cut];
        cur[cut] = '\0';
        bool ok = cut > 0 && realpath(cur, real);
        cur[cut] = keep;
        if (ok)
            break;
        while (cut > 0 && cur[cut - 1] != '/')
            cut--;
        while (cut > 0 && cur[cut - 1] == '/')
            cut--;
        if (cut == 0) {
            if (path[0] == '/')
                snprintf(real, sizeof real, "/");
            else if (!getcwd(real, sizeof real))
                return false;
            break;
        }
    }
    /* the rest starts with a name not there yet: its "..", once the
     * directories are made as named, are lexical */
    char whole[PATH_MAX + 4096 + 2];
    snprintf(whole, sizeof whole, "%s/%s", real, cur + cut);
    return normal_path(whole, true, buf, len);
}

tc_status tc_make_dirs(const char *dir, tc_err *err)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0)
        return tc_fail(err, TC_EINVAL, "an empty directory name");
    if (n >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "the directory name is too long (at most %zu bytes): %.64s...", sizeof buf - 1,
                       dir);
    memcpy(buf, dir, n + 1);
    /* each prefix ending before a '/', then the whole name */
    for (size_t i = 1; i <= n; i++) {
        if (i < n && buf[i] != '/')
            continue;
        if (i < n && buf[i - 1] == '/')
            continue; /* "a//b": the empty name between */
        char keep = buf[i];
        buf[i] = '\0';
        struct stat sb;
        if (mkdir(buf, 0777) != 0) {
            int e = errno;
            if (stat(buf, &sb) != 0)
                return tc_fail(err, TC_EINVAL, "cannot create the directory '%s': %s", buf, strerror(e));
            if (!S_ISDIR(sb.st_mode))
                return tc_fail(err, TC_EINVAL, "cannot create the directory '%s': '%s' is not a directory", dir, buf);
        }
        buf[i] = keep;
    }
    return TC_OK;
}

bool tc_same_file(const char *a, const char *b)
{
    /* a device or a pipe (/dev/null, /dev/stdout) is never "the same
     * file": writing it twice overwrites nothing */
    struct stat sa, sb;
    if ((a && stat(a, &sa) == 0 && (S_ISCHR(sa.st_mode) || S_ISFIFO(sa.st_mode))) ||
        (b && stat(b, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode))))
        return false;
    char ka[TC_FILE_KEY_MAX], kb[TC_FILE_KEY_MAX];
    if (!tc_file_key(a, ka, sizeof ka) || !tc_file_key(b, kb, sizeof kb))
        return strcmp(a, b) == 0;
    return strcmp(ka, kb) == 0;
}

const char *tc_fmt_shortest(double v, char *buf, size_t len)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "null");
        return buf;
    }
    /* Whole numbers as integers ("1000", not "1e+03"): exact below 2^53. */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, len, "%.0f", v);
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static void put_string(const char *s, size_t n, FILE *f)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f); /* UTF-8 passes through: jansson holds valid UTF-8 only */
        }
    }
    fputc('"', f);
}

static void indent(int depth, FILE *f)
{
    fputc('\n', f);
    for (int i = 0; i < depth; i++)
        fputs("  ", f);
}

/* Scalars and empty containers on one line; arrays of scalars on one line
 * too (a list of sizes or endpoints stays readable); objects one key a line. */
static bool is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void dump(const json_t *v, int depth, bool line, FILE *f)
{
    char b[40];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            fputs("{}", f);
            return;
        }
        fputc('{', f);
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, k, x) {
            if (!first)
                fputc(',', f);
            first = false;
            if (!line)
                indent(depth + 1, f);
            put_string(k, strlen(k), f);
            fputs(line ? ":" : ": ", f);
            dump(x, depth + 1, line, f);
        }
        if (!line)
            indent(depth, f);
        fputc('}', f);
        return;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (n == 0) {
            fputs("[]", f);
            return;
        }
        bool flat = true;
        for (size_t i = 0; i < n && flat; i++)
            flat = is_scalar(json_array_get(v, i));
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
            if (i)
                fputs(flat && !line ? ", " : ",", f);
            if (!flat && !line)
                indent(depth + 1, f);
            dump(json_array_get(v, i), depth + 1, line, f);
        }
        if (!flat && !line)
            indent(depth, f);
        fputc(']', f);
        return;
    }
    case JSON_STRING:
        put_string(json_string_value(v), json_string_length(v), f);
        return;
    case JSON_INTEGER:
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    case JSON_REAL: {
        double d = json_real_value(v);
        tc_fmt_shortest(d, b, sizeof b);
        /* A real that prints as an integer keeps a mark of being real only
         * where it matters to a reader: JSON numbers have no type, so none. */
        fputs(b, f);
        return;
    }
    case JSON_TRUE:
        fputs("true", f);
        return;
    case JSON_FALSE:
        fputs("false", f);
        return;
    case JSON_NULL:
        fputs("null", f);
        return;
    }
}

/* ---- allocation failures not returned (core.h) ---- */

static _Thread_local unsigned long oom_count;
static json_malloc_t json_malloc_next;

static void *json_malloc_counted(size_t n)
{
    void *p = json_malloc_next(n);
    if (!p)
        oom_count++;
    return p;
}

static once_flag oom_once = ONCE_FLAG_INIT;

static void oom_install(void)
{
    json_free_t f;
    json_get_alloc_funcs(&json_malloc_next, &f);
    json_set_alloc_funcs(json_malloc_counted, f);
}

unsigned long tc_oom_mark(void)
{
    call_once(&oom_once, oom_install);
    return oom_count;
}

bool tc_oom_since(unsigned long mark)
{
    return oom_count != mark;
}

void tc_oom_note(void)
{
    oom_count++;
}

struct json_t *tc_json_checked(struct json_t *v, unsigned long mark)
{
    if (!tc_oom_since(mark))
        return v;
    json_decref(v);
    return NULL;
}

char *tc_json_dumps(const struct json_t *v, size_t flags)
{
    unsigned long mark = tc_oom_mark();
    char *s = json_dumps(v, flags);
    if (tc_oom_since(mark)) {
        free(s);
        return NULL;
    }
    return s;
}

bool tc_json_dumpf(const struct json_t *v, void *fp)
{
    FILE *f = fp;
    if (!v)
        return false;
    dump(v, 0, false, f);
    fputc('\n', f);
    return ferror(f) == 0;
}

char *tc_json_line(const struct json_t *v, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = v ? open_memstream(&buf, &n) : NULL;
    if (!f)
        return NULL;
    dump(v, 0, true, f);
    fputc('\n', f);
    bool ok = ferror(f) == 0;
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    if (len)
        *len = n;
    return buf;
}

int tc_read_stream(void *fp, size_t max, bool stop_at_nul, char **buf, size_t *len)
{
    FILE *f = fp;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b)
        return ENOMEM;
    for (;;) {
        if (n + 1 >= cap) {
            char *w = cap < ((size_t)1 << 40) ? realloc(b, 2 * cap) : NULL;
            if (!w) {
                free(b);
                return ENOMEM;
            }
            b = w;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - 1 - n, f);
        if (stop_at_nul && memchr(b + n, '\0', got)) {
            free(b);
            return EILSEQ;
        }
        n += got;
        if (n > max) {
            free(b);
            return EFBIG;
        }
        if (got == 0) {
            if (ferror(f)) {
                int e = errno ? errno : EIO;
                free(b);
                return e;
            }
            break;
        }
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

tc_status tc_json_write(const struct json_t *v, const char *path, tc_err *err)
{
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (!path) {
        if (!tc_json_dumpf(v, stdout) || fflush(stdout) != 0)
            return tc_fail(err, TC_EINTERNAL, "cannot write JSON to standard output");
        return TC_OK;
    }
    tc_atomic_file af;
    tc_status st = tc_atomic_open(&af, path, err);
    if (st)
        return st;
    if (!tc_json_dumpf(v, af.f)) {
        tc_atomic_abort(&af);
        return tc_fail(err, TC_EINVAL, "cannot write '%s'", path);
    }
    return tc_atomic_commit(&af, err);
}
