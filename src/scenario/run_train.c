/*
 * run_train.c - the train-accuracy scenario: the real model trained on
 * Fashion-MNIST once per codec and seed (topocc/train.h), test accuracy
 * against steps, and the statistics over the seeds against bf16 (added as
 * the reference when not asked for). The outcome's JSON is an accuracy file
 * that compress reads back.
 */
#include <stdlib.h>
#include <string.h>
#include "topocc/outcome.h"

/* The scenario's codecs, bf16 first where they lack it. */
static tc_status train_codecs(const tc_scenario *s, tc_codec_spec *specs, size_t *n, bool *added, tc_err *err)
{
    *n = 0;
    *added = true;
    for (int i = 0; i < s->ncodecs; i++) {
        tc_status st = tc_codec_parse(s->codecs[i], &specs[i + 1], err);
        if (st)
            return st;
        *added &= strcmp(specs[i + 1].name, "bf16") != 0;
    }
    *n = (size_t)s->ncodecs + 1;
    if (*added)
        return tc_codec_parse("bf16", &specs[0], err);
    memmove(specs, specs + 1, (size_t)s->ncodecs * sizeof *specs);
    (*n)--;
    return TC_OK;
}

tc_status tc_run_train_accuracy(const tc_scenario *s, const tc_run_opts *ro, tc_train_accuracy_out **out,
                                tc_err *err)
{
    *out = NULL;
    if (s->ncodecs < 1)
        return tc_fail(err, TC_EINVAL, "no codec to train with: give at least one --codec C");
    tc_codec_spec specs[TC_SCN_MAX_CODECS + 1];
    size_t ns = 0;
    bool added = false;
    tc_status st = train_codecs(s, specs, &ns, &added, err);
    if (st)
        return st;
    tc_train_accuracy_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    /* The outcome keeps its own copies of the strings the options point
     * to: it may outlive the scenario. */
    o->opts = s->train;
    o->bf16_added = added;
    snprintf(o->model, sizeof o->model, "%s", s->train.model ? s->train.model : "mlp");
    snprintf(o->data_dir, sizeof o->data_dir, "%s", s->train.data_dir ? s->train.data_dir : TC_FASHION_MNIST_DIR);
    o->opts.model = o->model;
    o->opts.data_dir = o->data_dir;
    o->opts.progress = ro ? ro->progress : NULL;
    o->opts.progress_ud = ro ? ro->progress_ud : NULL;
    tc_train_defaults(&o->opts);
    st = tc_train_seeds(&o->opts, specs, ns, 0, &o->curves, &o->n, err);
    o->opts.progress = NULL;
    o->opts.progress_ud = NULL;
    if (st == TC_OK)
        st = tc_acc_stats_compute(o->curves, o->n, o->opts.target, &o->stats, err);
    if (st) {
        tc_train_accuracy_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

void tc_train_accuracy_out_free(tc_train_accuracy_out *out)
{
    if (!out)
        return;
    tc_acc_curves_free(out->curves, out->n);
    free(out->curves);
    tc_acc_stats_free(&out->stats);
    free(out);
}
