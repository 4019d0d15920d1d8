/*
 * eval_int.h - what the evaluators share inside the eval layer.
 */
#ifndef TOPOCC_EVAL_INT_H
#define TOPOCC_EVAL_INT_H

#include "topocc/eval.h"

/* The largest cut bound of docs/MODEL.md ("Lower bound", 2) for op on p ranks
 * of bytes; identity says rank r sits on endpoint r. 0 when no cut applies.
 * The formula evaluator's GENERIC phases use it for all-to-all-like traffic. */
double tc_eval_cut_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, bool identity);

#endif
