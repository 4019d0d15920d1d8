/* keys.h - the scenario's key table (keys.c), shared with the JSON reader
 * and writer and the option table. */
#ifndef TOPOCC_SCENARIO_KEYS_H
#define TOPOCC_SCENARIO_KEYS_H

#include "scenario/scenario_int.h"

typedef struct tc_scn_key {
    const char *path;        /* "network.topo" */
    unsigned cmds;           /* bit c: the key belongs to command c */
    bool (*cond)(const tc_scenario *s); /* NULL: always applies; else only when true */
    tc_status (*set)(tc_scenario *s, const json_t *v, const char *where, tc_err *err);
    json_t *(*get)(const tc_scenario *s);
    const char *needs;       /* what makes cond true, for messages ("--mode flow") */
} tc_scn_key;

size_t tc_scn_key_count(void);
const tc_scn_key *tc_scn_key_get(size_t i);
int tc_scn_key_index(const char *path);
bool tc_scn_key_applies(const tc_scn_key *k, const tc_scenario *s);

/* Jobs of a concurrent run from the jobs file's list. */
tc_status tc_scn_jobs_from_json(tc_scenario *s, const json_t *v, const char *where, tc_err *err);
/* "MIN:MAX[:FACTOR]" into a malloc'ed list of sizes. */
tc_status tc_scn_size_range(const char *s, double **out, size_t *n, tc_err *err);

#endif
