/*
 * fuzz.h - what the fuzz targets share (docs/VALIDATION.md, "Fuzzing"): the
 * input as a C string, as a temporary file for the readers that take a
 * path, and the checks every reader's answer must pass. A reader given
 * anything must return TC_OK or TC_EINVAL with a message (TC_EINTERNAL is
 * for topocc's own failures, and under the sanitizers an allocation that
 * fails aborts before it could be returned); a check that fails aborts, so
 * libFuzzer, and the replay driver of the normal builds, report it.
 *
 * Each target is one file of fuzz/ defining LLVMFuzzerTestOneInput. Under
 * TOPOCC_FUZZ (clang) it links with libFuzzer; in the normal builds it links
 * with replay.c, which feeds it every file of its seed corpus and its
 * regression inputs (the fuzz_* tests of CTest).
 */
#ifndef TOPOCC_FUZZ_FUZZ_H
#define TOPOCC_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "topocc/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The largest input a target reads: readers of files a person wrote, whose
 * bugs show in small inputs; larger ones only slow the search. */
#define FZ_MAX_INPUT (64 * 1024)

static inline void fz_fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz check failed: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* A reader's answer: TC_OK, or TC_EINVAL with its one-line message. With
 * TOPOCC_FUZZ_VERBOSE set, every answer is printed (to see what a seed
 * reaches). */
static inline void fz_check(tc_status st, const tc_err *err, const char *reader)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("TOPOCC_FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "%s: %s\n", reader, st == TC_OK ? "ok" : err->msg);
    if (st == TC_OK)
        return;
    if (st != TC_EINVAL)
        fz_fail(reader, st == TC_EINTERNAL ? "TC_EINTERNAL on bad input" : "a status that is no tc_status");
    if (!err->msg[0])
        fz_fail(reader, "TC_EINVAL without a message");
}

static inline void fz_expect(bool ok, const char *what)
{
    if (!ok)
        fz_fail(what, NULL);
}

/* data as a NUL-terminated string (malloc'ed; NULL when out of memory). An
 * input holding a NUL byte ends there, as it would read from a file by a
 * string API. */
static inline char *fz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

static inline const char *fz_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* Writes data to a new temporary file; path receives its name (the caller
 * unlinks it). False when it cannot be written. */
static inline bool fz_tmpfile(const uint8_t *data, size_t size, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/topocc-fuzz-XXXXXX", fz_tmpdir()) >= len)
        return false;
    int fd = mkstemp(path);
    if (fd < 0)
        return false;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return false;
        }
        off += (size_t)w;
    }
    close(fd);
    return true;
}

/* Whether the input may name a device or a process file as a path
 * ("/dev/stdin", "../dev/stdin", \/dev in JSON; "/proc" likewise): the
 * scenario readers open the files a scenario names (profiles, models, cost
 * profiles), and some devices never end. Such inputs are skipped and kept
 * out of the corpus. */
static inline bool fz_names_device(const uint8_t *data, size_t size)
{
    static const char *const bad[] = {"\"/dev", "/dev/", "\\/dev", "\"/proc", "/proc/", "\\/proc"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        size_t n = strlen(bad[b]);
        for (size_t i = 0; i + n <= size; i++)
            if (memcmp(data + i, bad[b], n) == 0)
                return true;
    }
    return false;
}

#endif
