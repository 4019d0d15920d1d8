/*
 * fuzz_model.c - the model-file reader of topocc train (tc_zoo_load_json,
 * topocc/zoo.h): the input is written to a temporary file and read. A
 * model that reads passes the architecture's checks, and its tensors and
 * counts derive (tc_zoo_derive) to finite, non-negative figures.
 */
#include <math.h>
#include "fuzz.h"
#include "topocc/zoo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char path[4200];
    if (!fz_tmpfile(data, size, path, sizeof path))
        return 0;
    tc_zoo_model m;
    char src[256];
    tc_err err = {{0}};
    tc_status st = tc_zoo_load_json(path, &m, src, sizeof src, &err);
    unlink(path);
    fz_check(st, &err, "tc_zoo_load_json");
    if (st == TC_OK) {
        fz_expect(tc_zoo_check(&m, "fuzz model", &err) == TC_OK, "a model that reads passes tc_zoo_check");
        static tc_zoo_derived d; /* large: 256 tensors */
        st = tc_zoo_derive(&m, &d, &err);
        fz_check(st, &err, "tc_zoo_derive");
        if (st == TC_OK) {
            fz_expect(isfinite(d.params) && d.params >= 0, "a model's parameters");
            fz_expect(isfinite(d.flops_sample) && d.flops_sample >= 0, "a model's FLOPs per sample");
        }
    }
    return 0;
}
