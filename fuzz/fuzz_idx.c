/*
 * fuzz_idx.c - the IDX reader of the accuracy proxy's data set (tc_idx_read,
 * workload/train_int.h, workload/idx.c): gzipped or plain images and labels
 * files as Fashion-MNIST ships them. The input holds both files: its first
 * two bytes (little-endian) are the images file's length, the images file
 * follows, then the labels file; its third byte picks how many images are
 * kept (all, or the first 1, 7 or 100, as --train-subset does). What reads
 * holds 28x28 images and labels 0..9, no more than were asked for.
 */
#include "fuzz.h"
#include "workload/train_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > FZ_MAX_INPUT)
        return -1;
    static const uint32_t keep[] = {0, 1, 7, 100};
    size_t ni = (size_t)data[0] | (size_t)data[1] << 8;
    uint32_t max = keep[data[2] & 3];
    data += 3, size -= 3;
    if (ni > size)
        ni = size;
    char img[4200], lab[4200];
    if (!fz_tmpfile(data, ni, img, sizeof img))
        return 0;
    if (!fz_tmpfile(data + ni, size - ni, lab, sizeof lab)) {
        unlink(img);
        return 0;
    }
    tc_dataset d;
    tc_err err = {{0}};
    tc_status st = tc_idx_read(img, lab, max, &d, &err);
    unlink(img);
    unlink(lab);
    fz_check(st, &err, "tc_idx_read");
    if (st == TC_OK) {
        fz_expect(d.n >= 1 && (!max || d.n <= max), "the images asked for");
        fz_expect(d.rows == 28 && d.cols == 28 && d.dim == 784 && d.x && d.y, "28x28 images");
        for (uint32_t i = 0; i < d.n; i++)
            fz_expect(d.y[i] <= 9, "labels 0..9");
        tc_dataset_free(&d);
    }
    return 0;
}
