/*
 * run.c - the one entry point: a resolved scenario in, a typed outcome out.
 * Sweeps and the CLI call this; each command's runner lives beside it.
 */
#include <stdlib.h>
#include "topocc/outcome.h"

tc_status tc_scenario_run(const tc_scenario *s, const tc_run_opts *ro, tc_outcome *out, tc_err *err)
{
    out->command = s->command;
    out->value = NULL;
    switch (s->command) {
    case TC_CMD_TOPO:
        return tc_run_topo(s, ro, (tc_topo_out **)&out->value, err);
    case TC_CMD_COLLECTIVE:
        return tc_run_collective(s, ro, (tc_collective_out **)&out->value, err);
    case TC_CMD_COMPARE:
        return tc_run_compare(s, ro, (tc_compare_out **)&out->value, err);
    case TC_CMD_CONCURRENT:
        return tc_run_concurrent(s, ro, (tc_concurrent_out **)&out->value, err);
    case TC_CMD_CODEC_BENCH:
        return tc_run_codec_bench(s, ro, (tc_codec_bench_out **)&out->value, err);
    case TC_CMD_TRAIN_ACCURACY:
        return tc_run_train_accuracy(s, ro, (tc_train_accuracy_out **)&out->value, err);
    case TC_CMD_COMPRESS:
        return tc_run_compress(s, ro, (tc_compress_out **)&out->value, err);
    case TC_CMD_FAILURES:
        return tc_run_failures(s, ro, (tc_failures_out **)&out->value, err);
    case TC_CMD_CLUSTER:
        return tc_run_cluster(s, ro, (tc_cluster_run_out **)&out->value, err);
    case TC_CMD_TRAIN:
        return tc_run_trainiter(s, ro, (tc_trainiter_out **)&out->value, err);
    default:
        return tc_fail(err, TC_EINTERNAL, "internal: unknown command %d", (int)s->command);
    }
}

void tc_outcome_free(tc_outcome *o)
{
    if (!o->value)
        return;
    switch (o->command) {
    case TC_CMD_TOPO: tc_topo_out_free(o->value); break;
    case TC_CMD_COLLECTIVE: tc_collective_out_free(o->value); break;
    case TC_CMD_COMPARE: tc_compare_out_free(o->value); break;
    case TC_CMD_CONCURRENT: tc_concurrent_out_free(o->value); break;
    case TC_CMD_CODEC_BENCH: tc_codec_bench_out_free(o->value); break;
    case TC_CMD_TRAIN_ACCURACY: tc_train_accuracy_out_free(o->value); break;
    case TC_CMD_COMPRESS: tc_compress_out_free(o->value); break;
    case TC_CMD_FAILURES: tc_failures_out_free(o->value); break;
    case TC_CMD_CLUSTER: tc_cluster_run_out_free(o->value); break;
    case TC_CMD_TRAIN: tc_trainiter_out_free(o->value); break;
    default: break;
    }
    o->value = NULL;
}
