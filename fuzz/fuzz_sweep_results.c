/*
 * fuzz_sweep_results.c - the sweep results-file reader
 * (tc_sweep_results_read, topocc/sweep.h), which a resumed run, --status and
 * --merge use on a file a crash may have cut anywhere: the input is written
 * to a temporary file and read. Each point line handed over is a whole line
 * naming a point of the header; the counts add up; the whole lines end
 * within the file.
 */
#include "fuzz.h"
#include "topocc/sweep.h"

typedef struct lines {
    const tc_sweep_results *r; /* filled as the file is read: the header comes first */
    size_t size;
    uint64_t calls;
} lines;

static int on_line(void *ud, uint64_t i, const char *line, size_t len)
{
    lines *l = ud;
    l->calls++;
    fz_expect(line != NULL && len < l->size, "a point line is shorter than the file");
    fz_expect(line[len] == '\n', "a point line is a whole line");
    fz_expect(i < l->r->npoints, "a point line names a point of the header");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char path[4200];
    if (!fz_tmpfile(data, size, path, sizeof path))
        return 0;
    tc_sweep_results r;
    lines l = {&r, size, 0};
    tc_err err = {{0}};
    tc_status st = tc_sweep_results_read(path, &r, on_line, &l, &err);
    unlink(path);
    fz_check(st, &err, "tc_sweep_results_read");
    if (st == TC_OK) {
        fz_expect(r.header != NULL && r.npoints >= 1 && r.state != NULL, "a results file's header");
        fz_expect(r.ndone <= r.npoints && r.nfailed <= r.ndone, "the points counted");
        fz_expect(r.nlines == r.ndone + r.nduplicates, "every point line counted once");
        fz_expect(l.calls >= r.ndone, "every point held handed over");
        fz_expect(r.good_bytes <= size, "the whole lines end within the file");
        /* The states agree with the counts (a header may declare 10^8
         * points: counted only up to 2^20). */
        if (r.npoints <= (1u << 20)) {
            uint64_t done = 0, failed = 0;
            for (uint64_t i = 0; i < r.npoints; i++) {
                fz_expect(r.state[i] <= 2, "a point's state is 0, 1 or 2");
                done += r.state[i] != 0;
                failed += r.state[i] == 2;
            }
            fz_expect(done == r.ndone && failed == r.nfailed, "the states agree with the counts");
        }
        tc_sweep_results_free(&r);
    }
    return 0;
}
