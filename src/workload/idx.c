/*
 * idx.c - the IDX format of MNIST-like data sets, read through zlib (gzipped
 * or plain). A header is a big-endian magic (0x00000803: unsigned bytes,
 * three dimensions; 0x00000801: one dimension) followed by one big-endian
 * uint32 per dimension; the data follow in row-major order. Only what the
 * training needs is read: the first max images and labels.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "workload/train_int.h"

#define IDX_IMAGES_MAGIC 0x00000803u
#define IDX_LABELS_MAGIC 0x00000801u
#define IDX_SIDE 28u
#define IDX_CLASSES 10u

static tc_status idx_open(const char *path, gzFile *out, tc_err *err)
{
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        if (errno == ENOENT)
            return tc_fail(err, TC_EINVAL,
                           "data set file '%s' not found: install the Debian package dataset-fashion-mnist", path);
        return tc_fail(err, TC_EINVAL, "cannot open data set file '%s': %s", path, strerror(errno));
    }
    fclose(probe);
    *out = gzopen(path, "rb");
    if (!*out)
        return tc_fail(err, TC_EINTERNAL, "cannot open data set file '%s' with zlib", path);
    return TC_OK;
}

/* Reads exactly n bytes, the part of a whole of total bytes that starts
 * after the first `before` (for the message); a short read is a truncated
 * (or corrupt) file. */
static tc_status idx_part(gzFile f, const char *path, void *buf, size_t n, size_t before, size_t total,
                          const char *what, tc_err *err)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r <= 0) {
            int zerr = 0;
            const char *zmsg = gzerror(f, &zerr);
            if (zerr != Z_OK && zerr != Z_BUF_ERROR)
                return tc_fail(err, TC_EINVAL, "data set file '%s': %s: %s", path, what, zmsg);
            return tc_fail(err, TC_EINVAL, "data set file '%s' is truncated: %s: expected %zu bytes, got %zu", path,
                           what, total, before + got);
        }
        got += (size_t)r;
    }
    return TC_OK;
}

static tc_status idx_bytes(gzFile f, const char *path, void *buf, size_t n, const char *what, tc_err *err)
{
    return idx_part(f, path, buf, n, 0, n, what, err);
}

/* Reads exactly n bytes into a buffer of its own (*out, malloc'ed), grown
 * block by block as the data arrive: the count a header declares is not
 * allocated before the file shows it holds that much (a corrupt header
 * declaring 2^32 images is a truncated file, not 3 TB asked of malloc). */
#define IDX_BLOCK ((size_t)16 << 20)
static tc_status idx_alloc_bytes(gzFile f, const char *path, size_t n, const char *what, uint8_t **out, tc_err *err)
{
    *out = NULL;
    uint8_t *b = NULL;
    size_t got = 0;
    tc_status st = TC_OK;
    while (st == TC_OK && got < n) {
        size_t step = n - got < IDX_BLOCK ? n - got : IDX_BLOCK;
        uint8_t *nb = realloc(b, got + step);
        if (!nb) {
            st = tc_fail(err, TC_EINTERNAL, "out of memory reading '%s'", path);
            break;
        }
        b = nb;
        if ((st = idx_part(f, path, b + got, step, got, n, what, err)) == TC_OK)
            got += step;
    }
    if (st) {
        free(b);
        return st;
    }
    *out = b;
    return TC_OK;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static tc_status read_images(const char *path, uint32_t max, tc_dataset *d, uint32_t *declared, tc_err *err)
{
    gzFile f;
    tc_status st = idx_open(path, &f, err);
    if (st)
        return st;
    unsigned char h[16];
    if ((st = idx_bytes(f, path, h, sizeof h, "header", err)))
        goto out;
    if (be32(h) != IDX_IMAGES_MAGIC) {
        st = tc_fail(err, TC_EINVAL, "data set file '%s': magic 0x%08x, expected 0x%08x (IDX images of unsigned bytes)",
                     path, be32(h), IDX_IMAGES_MAGIC);
        goto out;
    }
    *declared = be32(h + 4);
    d->rows = be32(h + 8);
    d->cols = be32(h + 12);
    if (d->rows != IDX_SIDE || d->cols != IDX_SIDE) {
        st = tc_fail(err, TC_EINVAL, "data set file '%s': images of %ux%u pixels, expected %ux%u", path, d->rows,
                     d->cols, IDX_SIDE, IDX_SIDE);
        goto out;
    }
    if (*declared == 0) {
        st = tc_fail(err, TC_EINVAL, "data set file '%s': declares 0 images", path);
        goto out;
    }
    d->n = max && max < *declared ? max : *declared;
    d->dim = d->rows * d->cols;
    st = idx_alloc_bytes(f, path, (size_t)d->n * d->dim, "pixels", &d->x, err);
out:
    gzclose(f);
    return st;
}

static tc_status read_labels(const char *path, uint32_t images, tc_dataset *d, tc_err *err)
{
    gzFile f;
    tc_status st = idx_open(path, &f, err);
    if (st)
        return st;
    unsigned char h[8];
    if ((st = idx_bytes(f, path, h, sizeof h, "header", err)))
        goto out;
    if (be32(h) != IDX_LABELS_MAGIC) {
        st = tc_fail(err, TC_EINVAL, "data set file '%s': magic 0x%08x, expected 0x%08x (IDX labels of unsigned bytes)",
                     path, be32(h), IDX_LABELS_MAGIC);
        goto out;
    }
    if (be32(h + 4) != images) {
        st = tc_fail(err, TC_EINVAL, "data set file '%s': %u labels for %u images", path, be32(h + 4), images);
        goto out;
    }
    d->y = malloc(d->n);
    if (!d->y) {
        st = tc_fail(err, TC_EINTERNAL, "out of memory reading '%s'", path);
        goto out;
    }
    if ((st = idx_bytes(f, path, d->y, d->n, "labels", err)))
        goto out;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->y[i] >= IDX_CLASSES) {
            st = tc_fail(err, TC_EINVAL, "data set file '%s': label %u of item %u, expected 0..%u", path, d->y[i], i,
                         IDX_CLASSES - 1);
            goto out;
        }
out:
    gzclose(f);
    return st;
}

tc_status tc_idx_read(const char *images_path, const char *labels_path, uint32_t max, tc_dataset *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    uint32_t declared = 0;
    tc_status st = read_images(images_path, max, out, &declared, err);
    if (!st)
        st = read_labels(labels_path, declared, out, err);
    if (st)
        tc_dataset_free(out);
    return st;
}

tc_status tc_idx_load(const char *dir, const char *split, uint32_t max, tc_dataset *out, tc_err *err)
{
    char img[4096], lab[4096];
    if (snprintf(img, sizeof img, "%s/%s-images-idx3-ubyte.gz", dir, split) >= (int)sizeof img ||
        snprintf(lab, sizeof lab, "%s/%s-labels-idx1-ubyte.gz", dir, split) >= (int)sizeof lab)
        return tc_fail(err, TC_EINVAL, "data set directory path too long: %s", dir);
    return tc_idx_read(img, lab, max, out, err);
}

void tc_dataset_free(tc_dataset *d)
{
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}
