/*
 * run_codec_bench.c - the codec-bench scenario: single-threaded encode +
 * decode throughput of gradient codecs measured on this machine, with the
 * cost model's calibration kernels (memcpy and in-place bandwidth,
 * floating-point, integer and product arithmetic, random loads) measured in
 * the same run and its prediction from them, and the multi-pass
 * rooflines of the same codecs on an H100 and a TPU v5p.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/outcome.h"

_Static_assert(TC_CODEC_COUNT <= TC_SCN_MAX_CODECS, "every codec kind fits the rows of a codec-bench outcome");

/* The scenario's codecs, or every kind with its defaults. */
static tc_status bench_codecs(const tc_scenario *s, tc_codec_bench_out *o, tc_err *err)
{
    o->n = s->ncodecs > 0 ? (size_t)s->ncodecs : TC_CODEC_COUNT;
    for (size_t i = 0; i < o->n; i++) {
        if (s->ncodecs == 0) {
            tc_codec_defaults((tc_codec_kind)i, &o->rows[i].codec);
            continue;
        }
        tc_status st = tc_codec_parse(s->codecs[i], &o->rows[i].codec, err);
        if (st)
            return st;
    }
    return TC_OK;
}

static tc_status check_inputs(const tc_scenario *s, tc_err *err)
{
    if (!(s->bench_bytes >= 4) || s->bench_bytes > 4.0 * 1073741824.0)
        return tc_fail(err, TC_EINVAL, "invalid --size %g: accepted are 4 bytes to 4GiB (one float32 or more)",
                       s->bench_bytes);
    if (!(s->bench_seconds > 0) || s->bench_seconds > 600)
        return tc_fail(err, TC_EINVAL, "invalid --seconds %g: accepted are above 0 and at most 600, e.g. 0.5",
                       s->bench_seconds);
    return TC_OK;
}

static void report(const tc_run_opts *ro, size_t done, size_t total)
{
    if (!ro || !ro->progress)
        return;
    tc_progress p = {.what = "codec-bench", .fraction = (double)done / (double)total, .done = (double)done,
                     .total = (double)total, .unit = "codecs"};
    ro->progress(ro->progress_ud, &p);
}

static tc_status measure(const tc_run_opts *ro, tc_codec_bench_out *o, tc_err *err)
{
    const tc_accel *h100 = tc_accel_find("h100"), *tpu = tc_accel_find("tpu");
    uint64_t d = o->coordinates;
    /* Every codec is checked against the bucket before any is measured, so
     * a bad one fails at once, not after the others' seconds. */
    for (size_t i = 0; i < o->n; i++) {
        tc_codec *c = NULL;
        tc_status st = tc_codec_create(&o->rows[i].codec, d, 1, &c, err);
        if (st)
            return st;
        tc_codec_free(c);
    }
    for (size_t i = 0; i < o->n; i++) {
        tc_codec_bench_row *r = &o->rows[i];
        tc_status st = tc_codec_measure_full(&r->codec, d, o->seconds, &r->m, err);
        if (st)
            return st;
        r->enc_dec_Bps = r->m.enc_dec_Bps.median;
        r->copy_Bps = r->m.copy_Bps.median;
        r->h100_Bps = tc_codec_accel_throughput(&r->codec, h100, d, o->workers);
        r->tpu_Bps = tc_codec_accel_throughput(&r->codec, tpu, d, o->workers);
        report(ro, i + 1, o->n);
    }
    return TC_OK;
}

tc_status tc_run_codec_bench(const tc_scenario *s, const tc_run_opts *ro, tc_codec_bench_out **out, tc_err *err)
{
    *out = NULL;
    tc_status st = check_inputs(s, err);
    if (st)
        return st;
    tc_codec_bench_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    o->coordinates = (uint64_t)(s->bench_bytes / 4);
    o->bytes = 4.0 * (double)o->coordinates;
    o->seconds = s->bench_seconds;
    o->workers = s->bench_workers ? s->bench_workers : 8;
    if ((st = bench_codecs(s, o, err)) || (st = measure(ro, o, err))) {
        tc_codec_bench_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

void tc_codec_bench_out_free(tc_codec_bench_out *out)
{
    free(out);
}
