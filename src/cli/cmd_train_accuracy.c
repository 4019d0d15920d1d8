/*
 * cmd_train_accuracy.c - `topocc train-accuracy`: train the real model on
 * Fashion-MNIST once per codec (topocc/train.h) and report test accuracy
 * against steps; --out keeps the curves as an accuracy file for `compress`.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "topocc/train.h"

#define TA_MAX_CODECS 16

static const char *help =
    "usage: topocc train-accuracy [--codec C]... [--model mlp] [--hidden N] [--workers N]\n"
    "                             [--steps N] [--batch N] [--lr X] [--seed N] [--train-subset N]\n"
    "                             [--test-subset N] [--eval-every N] [--bucket SIZE] [--data DIR]\n"
    "                             [--out FILE] [--format table|csv|json]\n"
    "\n"
    "Trains an MLP (784 -> hidden -> 10, ReLU, softmax cross-entropy; SGD with\n"
    "momentum 0.9) on the Fashion-MNIST data set with N simulated data-parallel\n"
    "workers. Each worker computes the gradient of its own mini-batch; the gradient\n"
    "is cut into DDP buckets and every bucket is aggregated through the codec\n"
    "(error feedback, compress, the collective's sums, decompress), as a DDP\n"
    "communication hook would. Every codec gets the same seed and data order; the\n"
    "run is deterministic. Test accuracy is recorded at step 0, every --eval-every\n"
    "steps and at the end.\n"
    "\n"
    "options (defaults in brackets):\n"
    "  --codec C         repeatable [fp32, bf16, int8, topk:ratio=0.01, powersgd:rank=4]\n"
    "  --model M         mlp [mlp]              --hidden N      hidden units [128]\n"
    "  --workers N       [8]                    --batch N       samples per worker per step [32]\n"
    "  --steps N         [2000]                 --eval-every N  [100]\n"
    "  --lr X            SGD learning rate [0.05]\n"
    "  --seed N          initialization and data order, 1 .. 2^63-1 [1]\n"
    "  --train-subset N  first N training images, 0 = all 60000 [0]\n"
    "  --test-subset N   first N test images, 0 = all 10000 [0]\n"
    "  --bucket SIZE     DDP bucket size [25MB]\n"
    "  --data DIR        [/usr/share/datasets/fashion-mnist] (Debian package dataset-fashion-mnist)\n"
    "  --out FILE        write the accuracy file (JSON, read by topocc compress)\n"
    "  --format F        table, csv (codec,step,test_acc,train_loss) or json (the accuracy file)\n"
    "\n"
    "example:\n"
    "  topocc train-accuracy --codec fp32 --codec topk:ratio=0.01 --steps 300 \\\n"
    "      --batch 16 --train-subset 10000 --test-subset 2000 --eval-every 100\n";

static const char *default_codecs[] = {"fp32", "bf16", "int8", "topk:ratio=0.01", "powersgd:rank=4"};

typedef struct ta_args {
    tc_train_opts o;
    tc_codec_spec codec[TA_MAX_CODECS];
    size_t ncodecs;
    const char *out;
    tc_format fmt;
    bool help;
} ta_args;

/* An unsigned integer in [lo, hi]; 0 is accepted where lo is 0. */
static tc_status parse_uint(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out, tc_err *err)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *s == '+' || *end || errno == ERANGE || v < lo || v > hi)
        return tc_fail(err, TC_EINVAL, "%s '%s': expected an integer from %llu to %llu", opt, s,
                       (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return TC_OK;
}

static tc_status parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t *out, tc_err *err)
{
    uint64_t v;
    tc_status st = parse_uint(opt, s, lo, UINT32_MAX, &v, err);
    *out = (uint32_t)v;
    return st;
}

static tc_status set_option(ta_args *a, const char *name, const char *val, tc_err *err)
{
    tc_train_opts *o = &a->o;
    if (strcmp(name, "--codec") == 0) {
        if (a->ncodecs == TA_MAX_CODECS)
            return tc_fail(err, TC_EINVAL, "too many --codec options: at most %d", TA_MAX_CODECS);
        return tc_codec_parse(val, &a->codec[a->ncodecs++], err);
    }
    if (strcmp(name, "--model") == 0) {
        if (strcmp(val, "mlp") != 0)
            return tc_fail(err, TC_EINVAL, "unknown model '%s': accepted is mlp", val);
        o->model = "mlp";
        return TC_OK;
    }
    if (strcmp(name, "--hidden") == 0)
        return parse_u32(name, val, 1, &o->hidden, err);
    if (strcmp(name, "--workers") == 0)
        return parse_u32(name, val, 1, &o->workers, err);
    if (strcmp(name, "--steps") == 0)
        return parse_u32(name, val, 1, &o->steps, err);
    if (strcmp(name, "--batch") == 0)
        return parse_u32(name, val, 1, &o->batch, err);
    if (strcmp(name, "--eval-every") == 0)
        return parse_u32(name, val, 1, &o->eval_every, err);
    if (strcmp(name, "--train-subset") == 0)
        return parse_u32(name, val, 0, &o->train_subset, err);
    if (strcmp(name, "--test-subset") == 0)
        return parse_u32(name, val, 0, &o->test_subset, err);
    if (strcmp(name, "--seed") == 0)
        return parse_uint(name, val, 1, INT64_MAX, &o->seed, err);
    if (strcmp(name, "--lr") == 0) {
        char *end;
        o->lr = strtod(val, &end);
        if (!*val || *end || !(o->lr > 0.0) || !(o->lr <= 100.0))
            return tc_fail(err, TC_EINVAL, "--lr '%s': expected a number in (0, 100], e.g. 0.05", val);
        return TC_OK;
    }
    if (strcmp(name, "--bucket") == 0) {
        double b;
        tc_status st = tc_parse_size(val, &b, err);
        if (st)
            return st;
        if (!(b >= 4.0) || b > 1e18)
            return tc_fail(err, TC_EINVAL, "--bucket '%s': expected a size of at least 4 bytes (one float)", val);
        o->bucket_bytes = (uint64_t)b;
        return TC_OK;
    }
    if (strcmp(name, "--data") == 0) {
        o->data_dir = val;
        return TC_OK;
    }
    if (strcmp(name, "--out") == 0) {
        a->out = val;
        return TC_OK;
    }
    if (strcmp(name, "--format") == 0)
        return tc_format_parse(val, &a->fmt, err);
    return tc_fail(err, TC_EINVAL,
                   "unknown option '%s' for 'topocc train-accuracy': accepted are --codec --model --hidden --workers "
                   "--steps --batch --lr --seed --train-subset --test-subset --eval-every --bucket --data --out "
                   "--format --help",
                   name);
}

/* "--name value" or "--name=value"; every option but --help takes a value. */
static tc_status parse_args(int argc, char **argv, ta_args *a, tc_err *err)
{
    memset(a, 0, sizeof *a);
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return tc_fail(err, TC_EINVAL, "unexpected argument '%s' for 'topocc train-accuracy' (see --help)", arg);
        char name[64];
        const char *eq = strchr(arg, '='), *val;
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), arg);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return tc_fail(err, TC_EINVAL, "option %s needs a value (see topocc train-accuracy --help)", name);
        tc_status st = set_option(a, name, val, err);
        if (st)
            return st;
    }
    if (a->ncodecs > 0)
        return TC_OK;
    for (; a->ncodecs < sizeof default_codecs / sizeof *default_codecs; a->ncodecs++) {
        tc_status st = tc_codec_parse(default_codecs[a->ncodecs], &a->codec[a->ncodecs], err);
        if (st)
            return st;
    }
    return TC_OK;
}

/* Refuses an --out whose directory cannot be written before the minutes of
 * training, not after. */
static tc_status check_out_dir(const char *out, tc_err *err)
{
    char dir[4096];
    const char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash == out ? 1 : slash - out), out);
    if (access(dir, W_OK) != 0)
        return tc_fail(err, TC_EINVAL, "cannot write '%s': check that its directory exists and is writable", out);
    return TC_OK;
}

static void print_table(const tc_train_opts *o, const tc_acc_curve *c, size_t n)
{
    printf("Fashion-MNIST (%u training, %u test images), %s 784-%u-10, %u workers x batch %u, %u steps, lr %g "
           "momentum 0.9, seed %llu, buckets of %llu bytes\n\n",
           o->train_subset ? o->train_subset : 60000, o->test_subset ? o->test_subset : 10000, o->model, o->hidden,
           o->workers, o->batch, o->steps, o->lr, (unsigned long long)o->seed, (unsigned long long)o->bucket_bytes);
    tc_table tb;
    tc_table_init(&tb, (int)n + 1);
    const char *row[TA_MAX_CODECS + 1];
    char cells[TA_MAX_CODECS + 1][32];
    row[0] = "step";
    for (size_t i = 0; i <= n; i++)
        tb.right[i] = true;
    for (size_t i = 0; i < n; i++)
        row[i + 1] = c[i].codec.name;
    tc_table_row(&tb, row);
    for (size_t k = 0; k < c[0].n; k++) {
        snprintf(cells[0], sizeof cells[0], "%u", c[0].pts[k].step);
        row[0] = cells[0];
        for (size_t i = 0; i < n; i++) {
            snprintf(cells[i + 1], sizeof cells[i + 1], "%.4f", k < c[i].n ? c[i].pts[k].test_acc : NAN);
            row[i + 1] = cells[i + 1];
        }
        tc_table_row(&tb, row);
    }
    tc_table_print(&tb, stdout);
    tc_table_free(&tb);

    tc_table_init(&tb, 4);
    tb.right[1] = tb.right[2] = tb.right[3] = true;
    const char *hdr[4] = {"codec", "final test accuracy", "best", "final train loss"};
    tc_table_row(&tb, hdr);
    for (size_t i = 0; i < n; i++) {
        const tc_acc_point *last = &c[i].pts[c[i].n - 1];
        double best = 0.0;
        for (size_t k = 0; k < c[i].n; k++)
            best = c[i].pts[k].test_acc > best ? c[i].pts[k].test_acc : best;
        char f[32], b[32], l[32];
        snprintf(f, sizeof f, "%.4f", last->test_acc);
        snprintf(b, sizeof b, "%.4f", best);
        if (isfinite(last->train_loss))
            snprintf(l, sizeof l, "%.4f", last->train_loss);
        else
            snprintf(l, sizeof l, "diverged");
        const char *r[4] = {c[i].codec.name, f, b, l};
        tc_table_row(&tb, r);
    }
    fputc('\n', stdout);
    tc_table_print(&tb, stdout);
    tc_table_free(&tb);
}

static void print_csv(const tc_acc_curve *c, size_t n)
{
    printf("codec,step,test_acc,train_loss\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c[i].n; k++) {
            printf("%s,%u,%.6f,", c[i].codec.name, c[i].pts[k].step, c[i].pts[k].test_acc);
            if (isfinite(c[i].pts[k].train_loss))
                printf("%.6f", c[i].pts[k].train_loss);
            printf("\n");
        }
}

int cmd_train_accuracy(int argc, char **argv)
{
    ta_args a;
    tc_err err = {{0}};
    tc_status st = parse_args(argc, argv, &a, &err);
    if (st)
        return cli_exit(st, &err);
    if (a.help) {
        fputs(help, stdout);
        return 0;
    }
    tc_train_defaults(&a.o);
    if (a.out && (st = check_out_dir(a.out, &err)))
        return cli_exit(st, &err);
    tc_acc_curve curves[TA_MAX_CODECS];
    if ((st = tc_train_run(&a.o, a.codec, a.ncodecs, curves, &err)))
        return cli_exit(st, &err);
    if (!a.out || !(st = tc_acc_write(a.out, &a.o, curves, a.ncodecs, &err))) {
        if (a.fmt == TC_FMT_JSON)
            st = tc_acc_write(NULL, &a.o, curves, a.ncodecs, &err);
        else if (a.fmt == TC_FMT_CSV)
            print_csv(curves, a.ncodecs);
        else
            print_table(&a.o, curves, a.ncodecs);
    }
    tc_acc_curves_free(curves, a.ncodecs);
    return cli_exit(st, &err);
}
