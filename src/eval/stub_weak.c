/* stub_weak.c - weak placeholders, overridden by the real evaluators. */
#include "topocc/eval.h"
__attribute__((weak)) tc_status tc_eval_formula(const tc_topo *t, const tc_sched *s, const tc_eval_opts *o, double *time_s, tc_err *err)
{ (void)t, (void)s, (void)o, (void)time_s; return tc_fail(err, TC_EINTERNAL, "formula evaluator not available"); }
__attribute__((weak)) double tc_lower_bound(const tc_topo *t, tc_op op, uint32_t p, double bytes, const uint32_t *m)
{ (void)t, (void)op, (void)p, (void)bytes, (void)m; return 0; }
