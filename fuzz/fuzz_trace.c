/*
 * fuzz_trace.c - the job trace readers of topocc cluster (tc_trace_read,
 * topocc/cluster.h, place/trace.c): the input is written to a temporary
 * file and read in every format (auto, csv, philly, helios, pai). A trace
 * that reads holds what the header promises: at least one job, sorted by
 * arrival from 0, each asking for at least one endpoint for a positive,
 * finite time.
 */
#include <math.h>
#include "fuzz.h"
#include "topocc/cluster.h"

static void check_trace(const tc_trace *t, tc_trace_format asked)
{
    fz_expect(t->n >= 1 && t->jobs != NULL, "a trace holds jobs");
    fz_expect(asked == TC_TRACE_AUTO ? t->format != TC_TRACE_AUTO && t->format != TC_TRACE_SYNTHETIC
                                     : t->format == asked,
              "a trace's format");
    for (size_t i = 0; i < t->n; i++) {
        const tc_cjob *j = &t->jobs[i];
        fz_expect(isfinite(j->submit_s) && j->submit_s >= 0, "a job's arrival is finite, from 0");
        fz_expect(i == 0 || j->submit_s >= t->jobs[i - 1].submit_s, "jobs sorted by arrival");
        fz_expect(isfinite(j->duration_s) && j->duration_s > 0, "a job's duration is positive and finite");
        fz_expect(j->size >= 1, "a job asks for an endpoint");
    }
    fz_expect(t->jobs[0].submit_s == 0, "the first job arrives at 0");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char path[4200];
    if (!fz_tmpfile(data, size, path, sizeof path))
        return 0;
    static const tc_trace_format formats[] = {TC_TRACE_AUTO, TC_TRACE_CSV, TC_TRACE_PHILLY, TC_TRACE_HELIOS,
                                              TC_TRACE_PAI};
    for (size_t k = 0; k < sizeof formats / sizeof *formats; k++) {
        tc_trace t;
        tc_err err = {{0}};
        tc_status st = tc_trace_read(path, formats[k], &t, &err);
        fz_check(st, &err, "tc_trace_read");
        if (st == TC_OK) {
            check_trace(&t, formats[k]);
            tc_trace_free(&t);
        }
    }
    unlink(path);
    return 0;
}
