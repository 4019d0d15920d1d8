/*
 * topocc/place.h - job placement: which endpoints a job's ranks run on, in
 * which order (the rank map), and sub-groups of a job's ranks.
 *
 * A job is an ordered list of endpoints: rank r runs on map[r]. The list is
 * given explicitly or produced by a named policy from the topology and a
 * seed, so a scenario that names the policy and the seed names the map.
 */
#ifndef TOPOCC_PLACE_H
#define TOPOCC_PLACE_H

#include "topocc/topo.h"

typedef enum {
    TC_PLACE_FIRST = 0,  /* ranks 0..N-1 on endpoints 0..N-1 (generator order) */
    TC_PLACE_RANDOM,     /* N distinct endpoints drawn uniformly, in random order, from the seed */
    TC_PLACE_LIST        /* the endpoints listed, rank i on the i-th */
} tc_place_policy;

const char *tc_place_name(tc_place_policy p);   /* "first", "random", "list" */
tc_status tc_place_parse(const char *s, tc_place_policy *out, tc_err *err);

typedef struct tc_job_place {
    tc_place_policy policy;
    uint32_t ranks;          /* FIRST, RANDOM: the job's ranks (0: every endpoint) */
    uint64_t seed;           /* RANDOM */
    uint32_t *endpoints;     /* LIST: rank i on endpoints[i] (owned by whoever holds the struct) */
    uint32_t nendpoints;
} tc_job_place;

/* The rank map of a job on t: *map (malloc'ed, *p entries) holds distinct
 * endpoints of t. Fails (TC_EINVAL) for more ranks than endpoints, an
 * endpoint beyond the topology or listed twice, or an empty job. */
tc_status tc_place_map(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p, tc_err *err);

/* The most endpoints a list may hold (2^24: beyond any topology built). */
#define TC_PLACE_MAX_ENDPOINTS 16777216u

/* Parses endpoint ranges "0-63,128,130-131" into a malloc'ed list of at
 * most TC_PLACE_MAX_ENDPOINTS. */
tc_status tc_place_parse_ranges(const char *s, uint32_t **list, uint32_t *n, tc_err *err);

/* Sub-groups: a partition of a job's p ranks into groups, each group's
 * ranks in increasing order. */
typedef enum {
    TC_PART_BLOCK = 0,   /* k consecutive ranks per group: {0..k-1}, {k..2k-1}, ... (tensor-parallel groups) */
    TC_PART_STRIDE,      /* ranks with equal r mod k: {0, k, 2k, ..}, {1, k+1, ..} (data-parallel groups) */
    TC_PART_NODE         /* ranks whose endpoints share a scale-up node (t->node_size) */
} tc_partition_kind;

typedef struct tc_partition {
    uint32_t ngroups;
    uint32_t *group_of;      /* p entries: the group of rank r */
    uint32_t *first;         /* ngroups + 1 offsets into members */
    uint32_t *members;       /* p ranks, group by group, increasing within a group */
} tc_partition;

/* Partitions p ranks (placed by map, which TC_PART_NODE needs; the others
 * ignore it). k must divide p for BLOCK and STRIDE. */
tc_status tc_partition_make(tc_partition_kind kind, uint32_t k, uint32_t p, const uint32_t *map, const tc_topo *t,
                            tc_partition *out, tc_err *err);
void tc_partition_free(tc_partition *pt);

#endif
