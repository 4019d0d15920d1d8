/* cmd_codec_bench.c - `topocc codec-bench`: measured single-threaded encode +
 * decode throughput of gradient codecs next to memcpy bandwidth measured in
 * the same run, and the roofline estimates for accelerators. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "topocc/compress.h"

static const char *help =
    "usage: topocc codec-bench [--codec C]... [--size BYTES] [--seconds S] [--workers N]\n"
    "                          [--format table|csv|json]\n"
    "\n"
    "Measures, on one core of this machine, the encode + decode throughput of\n"
    "each codec (GB/s of float32 input: encode, the local sum of the single\n"
    "contribution, decode into the bucket) and memcpy bandwidth, alternately in\n"
    "the same run, and prints their ratio with the roofline estimates of the\n"
    "codec on an H100 and a TPU v5p (memory traffic per coordinate, capped by\n"
    "compute for thc and powersgd; docs/MODEL.md, \"Compression codecs\").\n"
    "\n"
    "  --codec C     a codec spec, repeatable (default: every codec with its\n"
    "                defaults): fp32, fp16, bf16, int8, int4, thc[:bits=B],\n"
    "                topk[:ratio=R], topk-shared[:ratio=R], randk[:ratio=R],\n"
    "                powersgd[:rank=R], signsgd; keys seed= and ef=0|1\n"
    "  --size BYTES  bucket size (default 25MiB, DDP's bucket)\n"
    "  --seconds S   measuring time per codec (default 0.5)\n"
    "  --workers N   workers for the roofline (integer sum widths, gathered\n"
    "                sets; default 8); the measurement is one worker's\n"
    "\n"
    "example:\n"
    "  topocc codec-bench --codec bf16 --codec topk:ratio=0.01 --size 4MiB --seconds 0.2\n";

#define MAX_CODECS 32

typedef struct bench_opts {
    const char *codec[MAX_CODECS];
    int ncodec;
    const char *size, *seconds, *workers, *format;
    bool help;
} bench_opts;

static tc_status parse_args(int argc, char **argv, bench_opts *o, tc_err *err)
{
    static const char *accepted = "--codec --size --seconds --workers --format --help";
    memset(o, 0, sizeof *o);
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return tc_fail(err, TC_EINVAL, "unexpected argument '%s' for 'topocc codec-bench'", arg);
        char name[32];
        const char *eq = strchr(arg, '='), *val = NULL;
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nl >= sizeof name)
            nl = sizeof name - 1;
        memcpy(name, arg, nl);
        name[nl] = '\0';
        const char **field = strcmp(name, "--size") == 0      ? &o->size
                             : strcmp(name, "--seconds") == 0 ? &o->seconds
                             : strcmp(name, "--workers") == 0 ? &o->workers
                             : strcmp(name, "--format") == 0  ? &o->format
                                                              : NULL;
        bool is_codec = strcmp(name, "--codec") == 0;
        if (!field && !is_codec)
            return tc_fail(err, TC_EINVAL, "unknown option '%s' for 'topocc codec-bench': accepted are %s", name,
                           accepted);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        if (!val || !*val)
            return tc_fail(err, TC_EINVAL, "option %s needs a value (see 'topocc codec-bench --help')", name);
        if (is_codec) {
            if (o->ncodec >= MAX_CODECS)
                return tc_fail(err, TC_EINVAL, "at most %d --codec options", MAX_CODECS);
            o->codec[o->ncodec++] = val;
        } else if (*field) {
            return tc_fail(err, TC_EINVAL, "option %s given twice", name);
        } else {
            *field = val;
        }
    }
    return TC_OK;
}

typedef struct bench_row {
    tc_codec_spec spec;
    double enc_Bps, copy_Bps, h100_Bps, tpu_Bps;
} bench_row;

static const char *gbps(double Bps, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f", Bps / 1e9);
    return buf;
}

static void print_rows(const bench_row *rows, int n, double bytes, uint32_t workers, bool csv)
{
    tc_table tb;
    tc_table_init(&tb, 6);
    for (int c = 1; c < 6; c++)
        tb.right[c] = true;
    const char *hdr[6] = {"codec", "enc+dec GB/s", "copy GB/s", "ratio", "h100 GB/s", "tpu-v5p GB/s"};
    tc_table_row(&tb, hdr);
    for (int i = 0; i < n; i++) {
        char b[5][32];
        snprintf(b[2], sizeof b[2], "%.1f%%", 100 * rows[i].enc_Bps / rows[i].copy_Bps);
        const char *row[6] = {rows[i].spec.name,
                              gbps(rows[i].enc_Bps, b[0], sizeof b[0]),
                              gbps(rows[i].copy_Bps, b[1], sizeof b[1]),
                              b[2],
                              gbps(rows[i].h100_Bps, b[3], sizeof b[3]),
                              gbps(rows[i].tpu_Bps, b[4], sizeof b[4])};
        tc_table_row(&tb, row);
    }
    if (csv) {
        tc_table_print_csv(&tb, stdout);
    } else {
        char sz[32];
        printf("bucket %s (%.0f float32), one core; roofline for %u workers\n", tc_fmt_size(bytes, sz, sizeof sz),
               bytes / 4, workers);
        tc_table_print(&tb, stdout);
    }
    tc_table_free(&tb);
}

static json_t *rows_json(const bench_row *rows, int n, double bytes, double secs, uint32_t workers)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s, s:f, s:f, s:f, s:{s:f, s:f}}", "codec", rows[i].spec.name,
                                             "enc_dec_Bps", rows[i].enc_Bps, "copy_Bps", rows[i].copy_Bps, "ratio",
                                             rows[i].enc_Bps / rows[i].copy_Bps, "roofline_Bps", "h100",
                                             rows[i].h100_Bps, "tpu-v5p", rows[i].tpu_Bps));
    return json_pack("{s:i, s:s, s:I, s:I, s:f, s:i, s:o}", "schema_version", TC_SCHEMA_VERSION, "command",
                     "codec-bench", "size_bytes", (json_int_t)bytes, "coordinates", (json_int_t)(bytes / 4), "seconds", secs,
                     "workers", (int)workers, "codecs", arr);
}

int cmd_codec_bench(int argc, char **argv)
{
    bench_opts o;
    tc_err err = {{0}};
    tc_status st = parse_args(argc, argv, &o, &err);
    if (st)
        return cli_exit(st, &err);
    if (o.help) {
        fputs(help, stdout);
        return 0;
    }
    tc_format fmt = TC_FMT_TABLE;
    if (o.format && (st = tc_format_parse(o.format, &fmt, &err)))
        return cli_exit(st, &err);
    double bytes = 25.0 * 1048576, secs = 0.5;
    uint32_t workers = 8;
    if (o.size && (st = tc_parse_size(o.size, &bytes, &err)))
        return cli_exit(st, &err);
    if (bytes < 4 || bytes > 4.0 * 1073741824.0)
        return cli_exit(tc_fail(&err, TC_EINVAL, "invalid --size '%s': accepted are 4 bytes to 4GiB (one float32 or more)",
                                o.size),
                        &err);
    if (o.seconds) {
        char *end;
        errno = 0;
        secs = strtod(o.seconds, &end);
        if (*end || errno || !(secs > 0) || secs > 600)
            return cli_exit(tc_fail(&err, TC_EINVAL, "invalid --seconds '%s': accepted are above 0 and at most 600, e.g. 0.5",
                                    o.seconds),
                            &err);
    }
    if (o.workers && (st = tc_parse_u32(o.workers, &workers, &err)))
        return cli_exit(st, &err);
    int n = o.ncodec ? o.ncodec : TC_CODEC_COUNT;
    bench_row rows[MAX_CODECS];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < n; i++) {
        if (o.ncodec) {
            if ((st = tc_codec_parse(o.codec[i], &rows[i].spec, &err)))
                return cli_exit(st, &err);
        } else {
            tc_codec_defaults((tc_codec_kind)i, &rows[i].spec);
        }
    }
    uint64_t d = (uint64_t)(bytes / 4);
    const tc_accel *h100 = tc_accel_find("h100"), *tpu = tc_accel_find("tpu");
    for (int i = 0; i < n; i++) {
        /* validate against the bucket before measuring anything */
        tc_codec *c = NULL;
        if ((st = tc_codec_create(&rows[i].spec, d, 1, &c, &err)))
            return cli_exit(st, &err);
        tc_codec_free(c);
    }
    for (int i = 0; i < n; i++) {
        if ((st = tc_codec_measure(&rows[i].spec, d, secs, &rows[i].enc_Bps, &rows[i].copy_Bps, &err)))
            return cli_exit(st, &err);
        rows[i].h100_Bps = tc_codec_accel_throughput(&rows[i].spec, h100, d, workers);
        rows[i].tpu_Bps = tc_codec_accel_throughput(&rows[i].spec, tpu, d, workers);
    }
    if (fmt == TC_FMT_JSON) {
        json_t *j = rows_json(rows, n, 4.0 * (double)d, secs, workers);
        st = tc_write_json(j, NULL, &err);
        json_decref(j);
        return cli_exit(st, &err);
    }
    print_rows(rows, n, 4.0 * (double)d, workers, fmt == TC_FMT_CSV);
    return 0;
}
