/*
 * run_train.c - the train-accuracy scenario: the real model trained on
 * Fashion-MNIST once per codec (topocc/train.h), test accuracy against
 * steps. The outcome's JSON is an accuracy file that compress reads back.
 */
#include <stdlib.h>
#include <string.h>
#include "topocc/outcome.h"

tc_status tc_run_train_accuracy(const tc_scenario *s, const tc_run_opts *ro, tc_train_accuracy_out **out,
                                tc_err *err)
{
    *out = NULL;
    if (s->ncodecs < 1)
        return tc_fail(err, TC_EINVAL, "no codec to train with: give at least one --codec C");
    tc_codec_spec specs[TC_SCN_MAX_CODECS];
    for (int i = 0; i < s->ncodecs; i++) {
        tc_status st = tc_codec_parse(s->codecs[i], &specs[i], err);
        if (st)
            return st;
    }
    tc_train_accuracy_out *o = tc_calloc(1, sizeof *o);
    tc_acc_curve *cv = tc_calloc((size_t)s->ncodecs, sizeof *cv);
    if (!o || !cv) {
        free(o);
        free(cv);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    /* The outcome keeps its own copies of the strings the options point
     * to: it may outlive the scenario. */
    o->opts = s->train;
    snprintf(o->model, sizeof o->model, "%s", s->train.model ? s->train.model : "mlp");
    snprintf(o->data_dir, sizeof o->data_dir, "%s", s->train.data_dir ? s->train.data_dir : TC_FASHION_MNIST_DIR);
    o->opts.model = o->model;
    o->opts.data_dir = o->data_dir;
    o->opts.progress = ro ? ro->progress : NULL;
    o->opts.progress_ud = ro ? ro->progress_ud : NULL;
    tc_train_defaults(&o->opts);
    tc_status st = tc_train_run(&o->opts, specs, (size_t)s->ncodecs, cv, err);
    o->opts.progress = NULL;
    o->opts.progress_ud = NULL;
    if (st) {
        free(cv);
        free(o);
        return st;
    }
    o->curves = cv;
    o->n = (size_t)s->ncodecs;
    *out = o;
    return TC_OK;
}

void tc_train_accuracy_out_free(tc_train_accuracy_out *out)
{
    if (!out)
        return;
    tc_acc_curves_free(out->curves, out->n);
    free(out->curves);
    free(out);
}
