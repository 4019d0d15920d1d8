/* scenario_int.h - what the scenario's files share and no one else sees. */
#ifndef TOPOCC_SCENARIO_INT_H
#define TOPOCC_SCENARIO_INT_H

#include <jansson.h>
#include "topocc/coll.h"
#include "topocc/place.h"
#include "topocc/scenario.h"

#define TC_CMDS_ALL ((1u << TC_CMD_COUNT) - 1)
#define TC_CMD_BIT(c) (1u << (c))

void tc_scn_clear_accuracy(tc_scenario *s);
/* The proxy compress trains with by default: that of its model's family. */
const char *tc_scn_default_proxy(const tc_scenario *s);
void tc_scn_clear_jobs(tc_scenario *s);

/* The checks of a command's scenario that depend on it alone and that its
 * runner makes (run_trainiter.c, run_compress.c, run_cluster.c, run_net.c,
 * run_failures.c), for tc_scenario_check_run: --print-scenario and a
 * sweep's validation refuse what the run would, with the run's message. */
tc_status tc_scn_train_check(const tc_scenario *s, tc_err *err);
tc_status tc_scn_compress_check(const tc_scenario *s, tc_err *err);
tc_status tc_scn_cluster_check(const tc_scenario *s, tc_err *err);
/* collective and compare: their runners' checks, nothing timed; concurrent:
 * its jobs built, not simulated (run_net.c) */
tc_status tc_scn_collective_check(const tc_scenario *s, tc_err *err);
tc_status tc_scn_concurrent_check(const tc_scenario *s, tc_err *err);
/* failures: its runner's checks of the network as given, no draw
 * (run_failures.c) */
tc_status tc_scn_failures_check(const tc_scenario *s, tc_err *err);

/* Sets the value of the scenario key at path (e.g. "collective.sizes")
 * from a JSON value; where names the value in messages. */
tc_status tc_scn_set_key(tc_scenario *s, const char *path, const json_t *v, const char *where, tc_err *err);

/* Edit distance between a and b (for "did you mean"). */

/* The groups of a spec for a job of p ranks placed by map on t: the
 * partition, and the tc_groups pointing into it (run_net.c). */
typedef struct tc_scn_groups {
    tc_partition pt;
    tc_groups g;
} tc_scn_groups;
tc_status tc_scn_groups_make(const tc_group_spec *spec, uint32_t p, const uint32_t *map, const tc_topo *t,
                             tc_scn_groups *ng, tc_err *err);

/* Where a job of p ranks placed by map on t runs (tc_place_slice_run;
 * docs/MODEL.md, "Placement"), the one answer collective, compare,
 * concurrent and failures share: topo and map are the slice's own torus
 * and the ranks on it (a slice closed by the optical switches), or t and
 * map as placed; implicit: a slice of t without them, run as one group
 * along axes (the slice's torus) and reported as the job. */
typedef struct tc_scn_jobnet {
    tc_slice_run sr;           /* owns the slice's torus and map */
    tc_topo *own;              /* sr.topo: the slice's own torus, NULL: none */
    const tc_topo *topo;
    const uint32_t *map;
    bool implicit;
    tc_group_spec axes;
} tc_scn_jobnet;
tc_status tc_scn_jobnet_make(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_scn_jobnet *jn,
                             tc_err *err);
void tc_scn_jobnet_free(tc_scn_jobnet *jn);
/* The scenario's group spec on the topology the job runs on: on the
 * slice's own torus, axes named by the topology's dimensions become its
 * dimensions (a dimension the slice does not span is dropped). */
tc_group_spec tc_scn_jobnet_group(const tc_scn_jobnet *jn, const tc_group_spec *spec);
/* A flow result's hottest links as links of the topology the slice's own
 * torus t came from (a box: tc_topo_box_parent_link); the optical
 * circuits, links of no topology the outcome holds, are left out. */
void tc_scn_hot_to_parent(const tc_topo *t, tc_flow_result *fr);

#endif
