/*
 * fuzz_sweep.c - the sweep file reader (tc_sweep_from_json, topocc/sweep.h),
 * as topocc sweep reads a sweep: every key checked, the axes' key paths
 * parsed, the points counted. A sweep that reads has a header, and its
 * first and last points' scenarios are built as a run builds them (each
 * axis's value set at its path, the scenario read, resolved and checked):
 * they resolve or fail with TC_EINVAL.
 */
#include <jansson.h>
#include "fuzz.h"
#include "topocc/sweep.h"

static void point(const tc_sweep *sw, uint64_t i)
{
    tc_scenario *s = NULL;
    tc_err err = {{0}};
    tc_status st = tc_sweep_point(sw, i, &s, &err);
    fz_check(st, &err, "tc_sweep_point");
    fz_expect((st == TC_OK) == (s != NULL), "tc_sweep_point: *out set exactly on success");
    json_t *v = tc_sweep_values(sw, i);
    fz_expect(v != NULL, "tc_sweep_values");
    json_decref(v);
    tc_scenario_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT || fz_names_device(data, size))
        return -1;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return 0;
    tc_sweep *sw = NULL;
    tc_err err = {{0}};
    tc_status st = tc_sweep_from_json(root, "fuzz sweep", &sw, &err);
    fz_check(st, &err, "tc_sweep_from_json");
    fz_expect((st == TC_OK) == (sw != NULL), "tc_sweep_from_json: *out set exactly on success");
    if (st == TC_OK) {
        fz_expect(sw->npoints >= 1 && sw->npoints <= TC_SWEEP_MAX_POINTS, "a sweep's points");
        json_t *h = tc_sweep_header(sw);
        fz_expect(h != NULL, "tc_sweep_header");
        json_decref(h);
        point(sw, 0);
        if (sw->npoints > 1)
            point(sw, sw->npoints - 1);
    }
    tc_sweep_free(sw);
    json_decref(root);
    return 0;
}
