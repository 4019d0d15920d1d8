/*
 * fuzz_accuracy.c - the accuracy-file reader (tc_acc_read, topocc/train.h,
 * workload/train.c), which compress --accuracy reads and which a scenario
 * embeds by content: the input is written to a temporary file and read.
 * Curves that read hold accuracies in [0, 1], and written again
 * (tc_acc_to_json, as a scenario embeds them) they read back to the same
 * JSON.
 */
#include <jansson.h>
#include "fuzz.h"
#include "topocc/train.h"

static void round_trip(const tc_train_opts *o, const tc_acc_curve *c, size_t n)
{
    json_t *j1 = tc_acc_to_json(o, c, n);
    fz_expect(j1 != NULL, "tc_acc_to_json");
    tc_train_opts o2;
    tc_acc_curve *c2 = NULL;
    size_t n2 = 0;
    tc_err err = {{0}};
    tc_status st = tc_acc_from_json(j1, "the curves written back", &o2, &c2, &n2, &err);
    json_t *j2 = st == TC_OK ? tc_acc_to_json(&o2, c2, n2) : NULL;
    if (st != TC_OK || !json_equal(j1, j2)) {
        char *a = json_dumps(j1, JSON_COMPACT), *b = j2 ? json_dumps(j2, JSON_COMPACT) : NULL;
        fprintf(stderr, "written:\n%s\nread back:\n%s\n%s\n", a ? a : "?", b ? b : "-", st ? err.msg : "");
        fz_fail("curves read back to themselves", NULL);
    }
    json_decref(j1);
    json_decref(j2);
    tc_acc_curves_free(c2, n2);
    free(c2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char path[4200];
    if (!fz_tmpfile(data, size, path, sizeof path))
        return 0;
    tc_train_opts o;
    tc_acc_curve *c = NULL;
    size_t n = 0;
    tc_err err = {{0}};
    tc_status st = tc_acc_read(path, &o, &c, &n, &err);
    unlink(path);
    fz_check(st, &err, "tc_acc_read");
    if (st == TC_OK) {
        fz_expect(n >= 1 && c != NULL, "an accuracy file holds curves");
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < c[i].n; k++)
                fz_expect(c[i].pts[k].test_acc >= 0 && c[i].pts[k].test_acc <= 1, "an accuracy is in [0, 1]");
        round_trip(&o, c, n);
        tc_acc_curves_free(c, n);
        free(c);
    } else {
        fz_expect(c == NULL && n == 0, "nothing returned on failure");
    }
    return 0;
}
