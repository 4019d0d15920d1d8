/* stub_binomial.c - placeholder until the binomial algorithm lands; valid for nothing. */
#include "coll/algos.h"
static bool v(tc_op op, uint32_t p, const tc_topo *t, tc_err *e) { (void)op, (void)p, (void)t; tc_fail(e, TC_EINVAL, "not available"); return false; }
static tc_status b(const tc_coll_req *r, const tc_topo *t, tc_sched *s, tc_err *e) { (void)r, (void)t, (void)s; return tc_fail(e, TC_EINTERNAL, "not available"); }
const tc_algo_impl tc_impl_binomial = {v, b};
