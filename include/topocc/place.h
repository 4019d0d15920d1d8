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

/* Collectives over sub-groups (topocc collective --group): how a job's
 * ranks split into groups that each run the collective. */
typedef enum {
    TC_GROUP_NONE = 0,   /* the whole job is one collective */
    TC_GROUP_NODE,       /* "node": the ranks of each scale-up node */
    TC_GROUP_STRIDE,     /* "stride=S": group i = ranks i, i+S, i+2S, ... (one rank per node when S is the node size) */
    TC_GROUP_BLOCK,      /* "block=K": K consecutive ranks per group */
    TC_GROUP_AXES        /* "axes=xy": on a torus, the ranks that differ only along the named dimensions */
} tc_group_kind;

typedef struct tc_group_spec {
    tc_group_kind kind;
    uint32_t k;          /* STRIDE: S; BLOCK: K; AXES: bit d = dimension d (x = 0, y = 1, z = 2; digits 0-7) */
} tc_group_spec;

/* Parses "node", "stride=S", "block=K", "axes=LIST" (LIST: letters x, y, z
 * or digits 0-7, each dimension once); "" or "none": TC_GROUP_NONE. */
tc_status tc_group_parse(const char *s, tc_group_spec *out, tc_err *err);
/* The canonical spec ("stride=8", "axes=xz"; "none"). Returns buf. */
char *tc_group_format(const tc_group_spec *g, char *buf, size_t len);

/* The groups of spec for a job of p ranks placed by map (NULL: rank r on
 * endpoint r) on t, as a partition whose groups all hold the same number
 * (>= 2) of ranks. Members are in increasing rank order, except along torus
 * axes: there by their coordinates along the named dimensions, first
 * dimension fastest, and *ndims, dims, wrap receive the groups' torus (the
 * named dimensions the job spans more than one coordinate of; wrap only
 * where it spans the whole dimension); *ndims = 0 otherwise. Fails
 * (TC_EINVAL, one line saying why) where the spec does not partition the
 * job: a stride or block not dividing p, node without scale-up nodes or
 * with nodes holding unequal numbers of ranks, axes on a topology that is
 * not a torus or with the job not on a slice (a box) of it, a group of one
 * rank. */
tc_status tc_group_make(const tc_group_spec *spec, uint32_t p, const uint32_t *map, const tc_topo *t,
                        tc_partition *out, int *ndims, uint32_t *dims, uint8_t *wrap, tc_err *err);

#endif
