/*
 * nccl_tests.c - nccl-tests' output written and read (topocc/nccl_tests.h).
 * Formats from NVIDIA/nccl-tests v2.13.10, src/common.cu: rows
 * "%12li  %12li  %8s  %6s  %6i" then twice "  %7s  %6.2f  %6.2f  %5s" (time
 * in us as %7.2f below 100, %7.1f below 10,000, %7.0f above); the footer
 * "# Avg bus bandwidth    : %g", the mean of every busbw printed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/nccl_tests.h"

double tc_nccl_tests_busbw(tc_op op, uint32_t p, double bytes, double time_s)
{
    if (!(time_s > 0))
        return 0;
    return bytes / time_s * tc_op_busbw_factor(op, p);
}

uint32_t tc_nccl_tests_ranks(const tc_result *r)
{
    return r->groups && r->group_size ? r->group_size : r->ranks;
}

/* nccl-tests' count column: elements per rank for all-gather and
 * reduce-scatter, per peer for all-to-all, of the buffer otherwise. */
static long count_of(tc_op op, uint32_t p, double bytes, uint32_t elt)
{
    double count = floor(bytes / (elt ? elt : 4));
    if (p && (op == TC_OP_ALLGATHER || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLTOALL))
        count = floor(count / p);
    return (long)count;
}

static void time_str(double us, char *buf, size_t len)
{
    snprintf(buf, len, us < 100 ? "%7.2f" : us < 10000 ? "%7.1f" : "%7.0f", us);
}

/* The header's values without a command line: those of the sizes run. */
static tc_nccl_tests_header header_of_sizes(const tc_collective_out *o)
{
    size_t n = o->nsizes;
    /* nccl-tests' defaults: -g 1, -i 1M, -f 1 (src/common.cu:63-67) */
    tc_nccl_tests_header h = {.ngpus = 1, .step = 1024 * 1024};
    if (!n)
        return h;
    h.min_bytes = tc_collective_at(o, 0, 0)->bytes;
    h.max_bytes = tc_collective_at(o, 0, n - 1)->bytes;
    if (n >= 2) {
        double a = h.min_bytes, b = tc_collective_at(o, 0, 1)->bytes;
        if (a > 0 && b >= 2 * a && b / a == floor(b / a))
            h.step = b / a, h.step_factor = true;
        else if (b > a)
            h.step = b - a;
    }
    return h;
}

void tc_nccl_tests_write(FILE *f, const tc_collective_out *o, const char *what, const tc_nccl_tests_header *hp)
{
    size_t n = o->nsizes;
    tc_nccl_tests_header h = hp && !hp->from_sizes ? *hp : header_of_sizes(o);
    if (hp && hp->ngpus)
        h.ngpus = hp->ngpus;
    h.nthreads = hp && hp->nthreads ? hp->nthreads : 1;
    fprintf(f, "# nThread %u nGpus %u minBytes %.0f maxBytes %.0f step: %.0f(%s) warmup iters: 0 iters: 0 "
               "agg iters: 1 validation: 0 graph: 0\n",
            h.nthreads, h.ngpus, h.min_bytes, h.max_bytes, h.step, h.step_factor ? "factor" : "bytes");
    fprintf(f, "#\n# topocc prediction: %s\n", what);
    if (hp && hp->note)
        fprintf(f, "# %s\n", hp->note);
    if (hp && hp->graph)
        fprintf(f, "# %s\n", hp->graph);
    fprintf(f, "#\n");
    fprintf(f, "#                                                              out-of-place                       "
               "in-place          \n");
    fprintf(f, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
               "algbw   busbw #wrong\n");
    fprintf(f, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
               "(GB/s)  (GB/s)       \n");
    /* the rows: o's sizes, and the empty ones where h places them */
    size_t rows = n, full = 0;
    if (hp && hp->empty) {
        for (size_t i = 0; i < hp->nrows; i++)
            full += !hp->empty[i];
        if (full == n)
            rows = hp->nrows;
    }
    double sum = 0;
    size_t cnt = 0;
    for (size_t i = 0, k = 0; i < rows; i++) {
        const tc_result *r = tc_collective_at(o, 0, k < n ? k : 0);
        bool empty = rows != n && hp->empty[i];
        if (!empty)
            k++;
        bool rooted = r->op == TC_OP_BROADCAST || r->op == TC_OP_REDUCE;
        uint32_t root = rooted ? o->rows[0].root : 0;
        double time_s = empty ? hp->empty_time_s : r->time_s;
        /* an empty row: count 0, so nccl-tests' GetBw gives 0 whatever the time */
        double algbw = !empty && r->time_s > 0 ? r->bytes / 1e9 / r->time_s : 0;
        uint32_t p = tc_nccl_tests_ranks(r);
        double busbw = empty ? 0 : tc_nccl_tests_busbw(r->op, p, r->bytes, r->time_s) / 1e9;
        char t[32];
        time_str(time_s * 1e6, t, sizeof t);
        fprintf(f, "%12li  %12li  %8s  %6s  %6i", empty ? 0L : (long)r->bytes,
                empty ? 0L : count_of(r->op, p, r->bytes, r->elt), tc_dtype_nccl_name(o->dtype),
                tc_redop_column(r->op, r->redop), rooted ? (int)root : -1);
        for (int j = 0; j < 2; j++)
            fprintf(f, "  %7s  %6.2f  %6.2f  %5s", t, algbw, busbw, "N/A");
        fputc('\n', f);
        /* nccl-tests averages every busbw printed, an empty row's 0 too */
        sum += 2 * busbw;
        cnt += 2;
    }
    fprintf(f, "# Out of bounds values : 0 OK\n");
    fprintf(f, "# Avg bus bandwidth    : %g \n", cnt ? sum / (double)cnt : 0);
    fprintf(f, "#\n");
}

/* ---- reading ---- */

static bool num(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Splits line (modified) at blanks into at most max tokens. */
static int tokens(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && n < max; t = strtok_r(NULL, " \t\r\n", &save))
        tok[n++] = t;
    return n;
}

/* The leading columns of a row, as the column header names them
 * (nccl-tests prints one, a '#' line "size count type [redop] [root] time
 * algbw busbw ..."). Their set follows the version and the operation:
 *  - v1.0.0 (src/all_reduce.cu and the others' print_header): "bytes N
 *    type [op] [root] time algbw busbw res", the op column for the
 *    reductions only, root for broadcast and reduce, the time in ms
 *    (src/common.cu:573, deltaSec x 1e3);
 *  - v2.0.0 to v2.11.0 (each operation's print_header and
 *    print_line_header, e.g. src/all_gather.cu:10-20 at v2.11.0): "size
 *    count type" for all-gather, "size count type root" for broadcast,
 *    "size count type redop [root]" for the reductions and all-to-all,
 *    whose redop field prints blank (its TimeTest passes "" as the op
 *    name, src/alltoall.cu:111 at v2.11.0);
 *  - v2.13.0 and later (one header, src/common.cu:924 at v2.13.0): "size
 *    count type redop root" for every operation, the redop field blank for
 *    all-gather, broadcast and all-to-all up to v2.13.3 (their TimeTest
 *    passes ""), "none" from v2.13.4 (commit d313d20); later versions may
 *    name the time column "cputime" (-C).
 * A blank field leaves no token, so a row's redop is read only where its
 * token is not a number (no operator is named by a number). */
typedef struct nt_layout {
    bool redop, root;
    double time_unit; /* s per unit of the time column: us, ms in v1.0.0 */
} nt_layout;

/* A comment that is a column header: its layout into *lay. */
static bool column_header(const char *comment, nt_layout *lay)
{
    char buf[4096], *tok[64];
    snprintf(buf, sizeof buf, "%s", comment);
    int nt = tokens(buf, tok, 64), s = -1, t = -1;
    bool busbw = false;
    for (int i = 0; i < nt; i++) {
        if (s < 0 && (strcmp(tok[i], "size") == 0 || strcmp(tok[i], "bytes") == 0))
            s = i;
        else if (s >= 0 && t < 0 && (strcmp(tok[i], "time") == 0 || strcmp(tok[i], "cputime") == 0))
            t = i;
        else if (t >= 0 && strcmp(tok[i], "busbw") == 0)
            busbw = true;
    }
    if (s < 0 || t < 0 || !busbw)
        return false;
    *lay = (nt_layout){.time_unit = strcmp(tok[s], "bytes") == 0 ? 1e-3 : 1e-6};
    for (int i = s + 1; i < t; i++) {
        if (strcmp(tok[i], "redop") == 0 || strcmp(tok[i], "op") == 0)
            lay->redop = true;
        else if (strcmp(tok[i], "root") == 0)
            lay->root = true;
    }
    return true;
}

/* A header line "#  Rank  3 Group  0 Pid 1234 on host device  3 [...] NAME"
 * (older versions without Group): nccl-tests prints one per rank. */
static bool rank_line(const char *comment, long *rank)
{
    char buf[4096], *tok[32];
    snprintf(buf, sizeof buf, "%s", comment);
    int nt = tokens(buf, tok, 32);
    if (nt < 3 || strcmp(tok[0], "Rank") != 0)
        return false;
    char *end;
    errno = 0;
    long r = strtol(tok[1], &end, 10);
    if (*end || end == tok[1] || errno || r < 0 || r >= 1L << 24)
        return false;
    for (int i = 2; i < nt; i++)
        if (strcmp(tok[i], "device") == 0) {
            *rank = r;
            return true;
        }
    return false;
}

tc_status tc_nccl_tests_read(const char *path, tc_nccl_row **rows, size_t *n, uint32_t *ranks, tc_err *err)
{
    *rows = NULL;
    *n = 0;
    *ranks = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return tc_fail(err, TC_EINVAL, "nccl-tests file %s: %s", path, strerror(errno));
    tc_nccl_row *v = NULL;
    size_t nv = 0, cap = 0;
    char line[4096];
    long lineno = 0;
    bool table_only = false;
    /* without a column header, the layout of v2.13 and later */
    nt_layout lay = {.redop = true, .root = true, .time_unit = 1e-6};
    bool header = false;
    long max_rank = -1;
    tc_status st = TC_OK;
    while (st == TC_OK && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        /* fgets stops at a newline, a full buffer or the end: a line that
         * ends before any of them holds a NUL byte */
        if (len < sizeof line - 1 && (len == 0 || line[len - 1] != '\n') && !feof(f)) {
            st = tc_fail(err, TC_EINVAL, "nccl-tests file %s line %ld: holds a NUL byte: expected nccl-tests' text output",
                         path, lineno);
            break;
        }
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = tc_fail(err, TC_EINVAL, "nccl-tests file %s line %ld: longer than %zu bytes", path, lineno,
                         sizeof line - 2);
            break;
        }
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '#') {
            if (strncmp(p, "# topocc: table-only", 20) == 0)
                table_only = true;
            else if (strncmp(p, "# topocc:", 9) == 0)
                ; /* a note (tests/data/nccl-tests/), whatever words it uses */
            else if (column_header(p + 1, &lay))
                header = true; /* the rows after it are in its layout */
            else {
                long r;
                if (rank_line(p + 1, &r) && r > max_rank)
                    max_rank = r;
            }
            continue;
        }
        if (!*p)
            continue;
        /* NCCL's own log lines interleaved with the table (NCCL_DEBUG) */
        if (strstr(p, "NCCL INFO") || strstr(p, "NCCL WARN") || strstr(p, "NCCL version"))
            continue;
        char *tok[32];
        int nt = tokens(line, tok, 32);
        tc_nccl_row r = {.line = lineno};
        double x;
        if (table_only) {
            if (nt != 2 || !num(tok[0], &r.bytes) || !num(tok[1], &x) || !(r.bytes > 0) || x < 0 ||
                r.bytes != floor(r.bytes) || r.bytes > 1152921504606846976.0 || x >= 1e6) {
                st = tc_fail(err, TC_EINVAL,
                             "nccl-tests file %s line %ld: expected 'size_bytes busbw_GBps' after '# topocc: table-only' "
                             "(a whole size up to 2^60, a bus bandwidth below 10^6 GB/s)",
                             path, lineno);
                break;
            }
            r.busbw_Bps = x * 1e9;
        } else {
            /* size count type [redop] [root] time algbw busbw #wrong (or
             * error) [in-place ...] */
            double cnt, root = 0, t, alg, bus;
            int k = 3; /* the next column's token */
            const char *redop = NULL;
            double x0;
            if (lay.redop && nt > k && !num(tok[k], &x0))
                redop = tok[k++];
            if (nt < k + (lay.root ? 5 : 4) || !num(tok[0], &r.bytes) || !num(tok[1], &cnt) ||
                (lay.root && !num(tok[k++], &root)) || !num(tok[k], &t) || !num(tok[k + 1], &alg) ||
                !num(tok[k + 2], &bus) || r.bytes < 0 || t < 0 || bus < 0) {
                st = tc_fail(err, TC_EINVAL,
                             "nccl-tests file %s line %ld: expected a row 'size count type %s%stime algbw busbw #wrong "
                             "...'%s (or a comment starting with '#')",
                             path, lineno, lay.redop ? "redop " : "", lay.root ? "root " : "",
                             header ? ", the columns its column header names" : "");
                break;
            }
            /* numbers nccl-tests can print: whole sizes and counts up to
             * 2^60 bytes, a bus bandwidth below 10^6 GB/s */
            const char *bad = r.bytes != floor(r.bytes) || r.bytes > 1152921504606846976.0 ? "size"
                              : cnt < 0 || cnt != floor(cnt) || cnt > 1152921504606846976.0 ? "count"
                              : bus > 1e6 || alg > 1e6 || alg < 0 ? "bandwidth"
                              : t > 1e15 ? "time" : NULL;
            if (bad) {
                st = tc_fail(err, TC_EINVAL,
                             "nccl-tests file %s line %ld: %s %s is not one nccl-tests prints (sizes and counts are "
                             "whole numbers up to 2^60, bandwidths below 10^6 GB/s)",
                             path, lineno, bad, !strcmp(bad, "size") ? tok[0] : !strcmp(bad, "count") ? tok[1]
                                                : !strcmp(bad, "time") ? tok[k] : bus > 1e6 ? tok[k + 2] : tok[k + 1]);
                break;
            }
            r.time_s = t * lay.time_unit;
            r.busbw_Bps = bus * 1e9;
            snprintf(r.type, sizeof r.type, "%s", tok[2]);
            /* no redop printed: an operation without a reduction (nccl-tests
             * names the reductions' operator in every version) */
            if (redop)
                snprintf(r.redop, sizeof r.redop, "%s", redop);
            else
                r.no_redop = true;
        }
        if (!(r.bytes > 0))
            continue; /* nccl-tests prints size 0 rows; nothing to predict */
        if (nv == cap) {
            size_t c = cap ? 2 * cap : 32;
            tc_nccl_row *w = realloc(v, c * sizeof *w);
            if (!w) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
                break;
            }
            v = w;
            cap = c;
        }
        v[nv++] = r;
    }
    if (st == TC_OK && ferror(f))
        st = tc_fail(err, TC_EINVAL, "nccl-tests file %s: read error", path);
    fclose(f);
    if (st == TC_OK && nv == 0)
        st = tc_fail(err, TC_EINVAL, "nccl-tests file %s: no result rows (lines 'size count type redop root time algbw busbw ...')",
                     path);
    if (st) {
        free(v);
        return st;
    }
    *rows = v;
    *n = nv;
    *ranks = (uint32_t)(max_rank + 1);
    return TC_OK;
}
