/*
 * alloc_fail.c - allocation-failure injection, built only with the CMake
 * option TOPOCC_ALLOC_FAIL (docs/VALIDATION.md, "Out of memory").
 *
 * The build links with -Wl,--wrap=SYM for each allocator below, so every
 * call that topocc's own objects make to SYM lands in __wrap_SYM here, which
 * counts it and passes it to the C library (__real_SYM), or fails it as the
 * C library would when memory runs out (NULL, or -1, with errno ENOMEM):
 *
 *   TOPOCC_FAIL_ALLOC=k           the k-th counted call fails (k >= 1; 0 or
 *                                 unset: none does)
 *   TOPOCC_FAIL_ALLOC_PERSIST=1   and every call after it too
 *   TOPOCC_ALLOC_COUNT=FILE       at exit, the number of calls counted is
 *                                 written to FILE
 *   TOPOCC_ALLOC_TRACE=FILE       each counted call's number, a hash of
 *                                 its call stack in this program (return
 *                                 addresses as offsets, so equal from run
 *                                 to run), one line each: the iterations
 *                                 of a loop, or the allocations of one
 *                                 call to jansson, share a hash, so a
 *                                 driver can fail a few of each; and the
 *                                 first four of those addresses
 *
 * Counted: malloc, calloc, realloc, strdup, aligned_alloc, open_memstream
 * and getline (each call one allocation: a getline that fails returns -1
 * with errno ENOMEM, not at end of file), and jansson's allocations, routed
 * here by json_set_alloc_funcs before main; all of them fail but the growth
 * of jansson's token buffer while it parses (jansson_token_buffer). Not counted: the C library's
 * own allocations inside other calls (fopen, a memstream's writes, thread
 * creation, dlopen), and those of other libraries (zlib, OpenBLAS).
 * --wrap redirects only the references of the objects being linked, so the
 * sanitizers' interceptors still see every allocation through __real_SYM.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <jansson.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__real_aligned_alloc(size_t align, size_t n);
FILE *__real_open_memstream(char **buf, size_t *len);
ssize_t __real_getline(char **line, size_t *cap, FILE *f);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void *__wrap_aligned_alloc(size_t align, size_t n);
FILE *__wrap_open_memstream(char **buf, size_t *len);
ssize_t __wrap_getline(char **line, size_t *cap, FILE *f);

static atomic_ullong calls;       /* counted calls so far */
static unsigned long long fail_k; /* the call that fails; 0: none */
static int persist;               /* every call after fail_k fails too */
static const char *count_path;    /* TOPOCC_ALLOC_COUNT */
static FILE *trace;               /* TOPOCC_ALLOC_TRACE */

/* Writes call c's line to the trace: FNV-1a over the return addresses in
 * this program from ra's (the wrapper's caller) on, each as its offset
 * (frames in libraries are left out: an allocation inside jansson is known
 * by the place that called jansson); the first four, each less one (an
 * address inside the call instruction, for addr2line). */
static void trace_call(unsigned long long c, const void *ra)
{
    void *fr[32];
    int n = backtrace(fr, 32);
    Dl_info self, di;
    uint64_t h = 14695981039346656037ull;
    uintptr_t first[4] = {0};
    int nf = 0;
    if (!dladdr((void *)trace_call, &self))
        self.dli_fbase = NULL;
    int i = 0;
    while (i < n && fr[i] != ra)
        i++;
    for (i = i < n ? i : 0; i < n; i++) {
        if (!dladdr(fr[i], &di) || di.dli_fbase != self.dli_fbase)
            continue;
        uintptr_t off = (uintptr_t)fr[i] - (uintptr_t)di.dli_fbase;
        if (nf < 4)
            first[nf++] = off;
        for (int b = 0; b < 8; b++, off >>= 8)
            h = (h ^ (off & 0xff)) * 1099511628211ull;
    }
    char line[160]; /* written at once: threads' lines do not interleave */
    int len = snprintf(line, sizeof line, "%llu %016llx", c, (unsigned long long)h);
    for (i = 0; i < nf; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%c%llx", i ? ',' : ' ',
                        (unsigned long long)first[i] - 1);
    fprintf(trace, "%s\n", line);
}

/* Whether this allocation is jansson's parser growing its token buffer.
 * jansson (2.14; upstream issue 362) drops the byte it could not save
 * there, and a dropped closing quote makes it decode a string past its
 * end: a heap overflow, not an error that topocc could handle. That buffer
 * doubles from 16 bytes, so inside a call to json_load* (the function of
 * jansson's that topocc's code called: the last frame in jansson below the
 * first in this program), with no public function of jansson's between,
 * an allocation of a power of two from 32 bytes on is never failed (it is
 * counted). */
static bool jansson_token_buffer(size_t n)
{
    if (n < 32 || (n & (n - 1)))
        return false;
    void *fr[64];
    int nf = backtrace(fr, 64);
    Dl_info self, di;
    if (!dladdr((void *)jansson_token_buffer, &self))
        return false;
    int i = 0;
    while (i < nf && !(dladdr(fr[i], &di) && di.dli_fbase == self.dli_fbase))
        i++; /* a sanitizer's interceptor of backtrace */
    while (i < nf && dladdr(fr[i], &di) && di.dli_fbase == self.dli_fbase)
        i++; /* this file's frames and the library's hook */
    const char *api = NULL;
    bool named = false; /* a public function of jansson's below it (json_object: its table) */
    for (; i < nf && dladdr(fr[i], &di) && di.dli_fbase != self.dli_fbase; i++) {
        named |= api != NULL && strncmp(api, "json_load", 9) != 0;
        api = di.dli_sname;
    }
    return api && strncmp(api, "json_load", 9) == 0 && !named;
}

/* Counts one call (ra: the wrapper's return address; n: the bytes asked
 * for, 0 when none are); whether it is to fail. */
static int fail_now(const void *ra, size_t n)
{
    unsigned long long c = atomic_fetch_add(&calls, 1) + 1;
    if (trace)
        trace_call(c, ra);
    if (fail_k == 0 || c < fail_k || (c > fail_k && !persist) || jansson_token_buffer(n))
        return 0;
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now(__builtin_return_address(0), n) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now(__builtin_return_address(0), 0) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now(__builtin_return_address(0), 0) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now(__builtin_return_address(0), 0) ? NULL : __real_strdup(s);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fail_now(__builtin_return_address(0), 0) ? NULL : __real_aligned_alloc(align, n);
}

FILE *__wrap_open_memstream(char **buf, size_t *len)
{
    return fail_now(__builtin_return_address(0), 0) ? NULL : __real_open_memstream(buf, len);
}

ssize_t __wrap_getline(char **line, size_t *cap, FILE *f)
{
    return fail_now(__builtin_return_address(0), 0) ? -1 : __real_getline(line, cap, f);
}

static void write_count(void)
{
    if (trace)
        fclose(trace);
    trace = NULL;
    if (!count_path || !*count_path)
        return;
    FILE *f = fopen(count_path, "w");
    if (f) {
        fprintf(f, "%llu\n", (unsigned long long)atomic_load(&calls));
        fclose(f);
    }
}

__attribute__((constructor)) static void alloc_fail_init(void)
{
    const char *k = getenv("TOPOCC_FAIL_ALLOC"), *p = getenv("TOPOCC_FAIL_ALLOC_PERSIST");
    fail_k = k ? strtoull(k, NULL, 10) : 0;
    persist = p && strcmp(p, "1") == 0;
    count_path = getenv("TOPOCC_ALLOC_COUNT");
    const char *t = getenv("TOPOCC_ALLOC_TRACE");
    if (t && *t)
        trace = fopen(t, "w");
    if ((count_path && *count_path) || trace)
        atexit(write_count);
    json_set_alloc_funcs(__wrap_malloc, free);
}
