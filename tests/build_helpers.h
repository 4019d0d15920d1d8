/*
 * build_helpers.h - the flow tests' builders of a topology and a schedule
 * from one line; a failure fails the test with the library's message.
 * Include after cmocka.h.
 */
#ifndef TOPOCC_TESTS_BUILD_HELPERS_H
#define TOPOCC_TESTS_BUILD_HELPERS_H

#include "topocc/coll.h"
#include "topocc/topo.h"

static inline tc_topo *topo(const char *spec)
{
    tc_topo *t = NULL;
    tc_err err = {{0}};
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    return t;
}

/* Builds req on t; a failure fails the test with the library's message. */
static inline tc_sched *sched_req(const tc_topo *t, tc_coll_req req)
{
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u %.0f B: %s", tc_op_name(req.op), tc_algo_name(req.algo), req.p, req.bytes, err.msg);
    return s;
}

static inline tc_sched *sched(const tc_topo *t, tc_op op, tc_algo algo, uint32_t p, double bytes)
{
    tc_coll_req req = {.op = op, .algo = algo, .p = p, .bytes = bytes};
    tc_sched *s = NULL;
    tc_err err = {{0}};
    if (tc_coll_build(&req, t, &s, &err) != TC_OK)
        fail_msg("%s/%s p=%u: %s", tc_op_name(op), tc_algo_name(algo), p, err.msg);
    return s;
}

#endif
