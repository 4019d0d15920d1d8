/*
 * topocc/outcome.h - what each command's scenario produces (the value in
 * tc_outcome). Its renderings are the report layer's (topocc/render.h).
 *
 * tc_outcome.value points to the command's own outcome type:
 *   TC_CMD_TOPO            tc_topo_out            (topocc/outcome_net.h)
 *   TC_CMD_COLLECTIVE      tc_collective_out      (topocc/outcome_net.h)
 *   TC_CMD_COMPARE         tc_compare_out         (topocc/outcome_net.h)
 *   TC_CMD_CONCURRENT      tc_concurrent_out      (topocc/outcome_net.h)
 *   TC_CMD_FAILURES        tc_failures_out        (topocc/outcome_net.h)
 *   TC_CMD_CLUSTER         tc_cluster_run_out     (topocc/outcome_net.h; not cluster.h's tc_cluster_out, one
 *                                                  topology's replay inside it)
 *   TC_CMD_CODEC_BENCH     tc_codec_bench_out     (topocc/outcome_train.h)
 *   TC_CMD_TRAIN_ACCURACY  tc_train_accuracy_out  (topocc/outcome_train.h)
 *   TC_CMD_COMPRESS        tc_compress_out        (topocc/outcome_train.h)
 *   TC_CMD_TRAIN           tc_trainiter_out       (topocc/outcome_train.h)
 * tc_outcome_free releases any of them. Per type tc_NAME_out (NAME:
 * topo, collective, ..., trainiter; cluster for tc_cluster_run_out) there
 * are also
 *   tc_run_NAME(s, ro, &out, err)   runs a resolved scenario (what tc_scenario_run calls)
 *   tc_NAME_out_free(out)           (tc_cluster_run_out_free)
 * and, declared in topocc/render.h, its renderings (what tc_outcome_json,
 * tc_outcome_tables and tc_outcome_write call):
 *   json_t *tc_NAME_json(out, s)        the whole JSON document, "scenario" included
 *   size_t tc_NAME_tables(out, s, tabs, max)  its typed tables, the primary first
 *   void tc_NAME_print(out, s, f)       the text rendering for people
 */
#ifndef TOPOCC_OUTCOME_H
#define TOPOCC_OUTCOME_H

#include "topocc/outcome_net.h"
#include "topocc/outcome_train.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif
