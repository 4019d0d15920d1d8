/* stub.c - placeholder until the topology layer lands. */
#include "topocc/topo.h"
tc_status tc_topo_build(const char *spec, tc_topo **out, tc_err *err) { (void)spec; *out = NULL; return tc_fail(err, TC_EINVAL, "topologies not available"); }
void tc_topo_free(tc_topo *t) { (void)t; }
