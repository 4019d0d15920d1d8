/* scenario_int.h - what the scenario's files share and no one else sees. */
#ifndef TOPOCC_SCENARIO_INT_H
#define TOPOCC_SCENARIO_INT_H

#include <jansson.h>
#include "topocc/scenario.h"

#define TC_CMDS_ALL ((1u << TC_CMD_COUNT) - 1)
#define TC_CMD_BIT(c) (1u << (c))

void tc_scn_clear_accuracy(tc_scenario *s);
void tc_scn_clear_jobs(tc_scenario *s);

/* Sets the value of the scenario key at path (e.g. "collective.sizes")
 * from a JSON value; where names the value in messages. */
tc_status tc_scn_set_key(tc_scenario *s, const char *path, const json_t *v, const char *where, tc_err *err);

/* Edit distance between a and b (for "did you mean"). */
size_t tc_scn_distance(const char *a, const char *b);

#endif
