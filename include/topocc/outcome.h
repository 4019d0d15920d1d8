/*
 * topocc/outcome.h - what each command's scenario produces (the value in
 * tc_outcome). Its renderings are the report layer's (topocc/render.h).
 *
 * Per command NAME (topo, collective, compare, concurrent, codec_bench,
 * train_accuracy, compress) there is:
 *   tc_NAME_out                 the typed outcome (library data, no text)
 *   tc_run_NAME(s, ro, &out, err)   in src/scenario/: runs a resolved scenario
 *   tc_NAME_out_free(out)
 * and in src/report/ (declared in topocc/render.h):
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
