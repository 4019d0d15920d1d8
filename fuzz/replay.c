/*
 * replay.c - the driver of the fuzz targets in the normal builds (no
 * libFuzzer): feeds each file named, or each file of each directory named,
 * to the target's LLVMFuzzerTestOneInput once. CTest runs every target over
 * its seed corpus (fuzz/corpus/<target>/) and its regression inputs
 * (tests/data/fuzz-regressions/<target>/; none for a target where none
 * has failed), so the inputs that once failed are checked by the plain and
 * the sanitized builds, without clang. A failing check aborts (fuzz.h).
 */
#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "fuzz.h"

/* libFuzzer's memory limit (-rss_limit_mb=2048, make fuzz): a reader that
 * asks for more on a small input fails here too. Without a sanitizer the
 * address space is capped (malloc returns NULL, and the reader's
 * TC_EINTERNAL fails fz_check); AddressSanitizer reserves terabytes of
 * address space, so its builds cap the allocation size instead
 * (ASAN_OPTIONS=max_allocation_size_mb=2048, set by the tests). */
#define REPLAY_MEM_LIMIT ((rlim_t)2048 << 20)
#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_ASAN 1
#endif
#endif

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                fprintf(stderr, "replay: out of memory reading %s\n", path);
                free(buf);
                fclose(f);
                return 1;
            }
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    /* A copy of exactly n bytes, so the sanitizers see a read past the input. */
    uint8_t *in = malloc(n ? n : 1);
    if (!in) {
        free(buf);
        return 1;
    }
    memcpy(in, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's files in name order (a missing directory holds none). */
static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : (fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno)), 1);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **v = realloc(names, cap * sizeof *v);
            if (!v) {
                rc = 1;
                break;
            }
            names = v;
        }
        if (!(names[n] = strdup(e->d_name)))
            rc = 1;
        else
            n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = run_file(path);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...: runs the fuzz target once on each input\n", argv[0]);
        return 2;
    }
#ifndef REPLAY_ASAN
    struct rlimit rl = {REPLAY_MEM_LIMIT, REPLAY_MEM_LIMIT};
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        fprintf(stderr, "replay: cannot limit the address space: %s\n", strerror(errno));
#endif
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int rc;
        if (stat(argv[i], &st) != 0 && errno == ENOENT)
            rc = 0; /* a target without regression inputs has no directory of them */
        else if (S_ISDIR(st.st_mode))
            rc = run_dir(argv[i], &count);
        else
            rc = (count++, run_file(argv[i]));
        if (rc)
            return 1;
    }
    printf("%zu inputs\n", count);
    return 0;
}
