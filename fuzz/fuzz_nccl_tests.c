/*
 * fuzz_nccl_tests.c - the reader of saved nccl-tests output
 * (tc_nccl_tests_load, topocc/nccl_tests.h), which topocc nccl-tests
 * --compare reads: the input is written to a temporary file and read as
 * all-reduce's (text or JSON), then its float sum rows kept and their
 * ranks checked. Rows that read are sizes above zero with finite,
 * non-negative times and bus bandwidths.
 */
#include <math.h>
#include "fuzz.h"
#include "topocc/nccl_tests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char path[4200];
    if (!fz_tmpfile(data, size, path, sizeof path))
        return 0;
    tc_nccl_file f;
    tc_err err = {{0}};
    tc_status st = tc_nccl_tests_load(path, "all_reduce_perf", &f, &err);
    unlink(path);
    fz_check(st, &err, "tc_nccl_tests_load");
    if (st == TC_OK) {
        /* the rows of one type, operator and root, then their ranks */
        size_t before = f.n;
        tc_nccl_file_keep(&f, "float", "sum", -1);
        fz_expect(f.n >= 1 && f.n <= before && f.n + f.other_kind_rows >= before, "keep keeps rows and counts the rest");
        tc_err e2 = {{0}};
        tc_status s2 = tc_nccl_file_ranks(&f, path, &e2);
        fz_check(s2, &e2, "tc_nccl_file_ranks");
    }
    tc_nccl_row *rows = f.rows;
    size_t n = f.n;
    uint32_t ranks = f.ranks;
    if (st == TC_OK) {
        fz_expect(n >= 1 && rows != NULL, "a file that reads has rows");
        for (size_t i = 0; i < n; i++) {
            fz_expect(isfinite(rows[i].bytes) && rows[i].bytes > 0, "a row's size is positive and finite");
            fz_expect(isfinite(rows[i].time_s) && rows[i].time_s >= 0, "a row's time is finite, from 0");
            fz_expect(isfinite(rows[i].busbw_Bps) && rows[i].busbw_Bps >= 0, "a row's busbw is finite, from 0");
        }
    } else {
        fz_expect(rows == NULL && n == 0 && ranks == 0, "nothing returned on failure");
    }
    tc_nccl_file_free(&f);
    return 0;
}
