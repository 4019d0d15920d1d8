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

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_PLACE_FIRST = 0,  /* ranks 0..N-1 on endpoints 0..N-1 (generator order) */
    TC_PLACE_RANDOM,     /* N distinct endpoints drawn uniformly, in random order, from the seed */
    TC_PLACE_LIST,       /* the endpoints listed, rank i on the i-th */
    TC_PLACE_PACKED,     /* Clos: the fewest pods, then the fewest leaves (whole scale-up nodes), best fit */
    TC_PLACE_SLICE       /* torus: a cuboid of consecutive coordinates, first dimension fastest */
} tc_place_policy;

#define TC_PLACE_POLICIES 5

/* "first", "random", "list", "packed", "slice" */
const char *tc_place_name(tc_place_policy p);
tc_status tc_place_parse(const char *s, tc_place_policy *out, tc_err *err);

typedef struct tc_job_place {
    tc_place_policy policy;
    uint32_t ranks;          /* FIRST, RANDOM: the job's ranks (0: every endpoint) */
    uint64_t seed;           /* RANDOM */
    uint32_t *endpoints;     /* LIST: rank i on endpoints[i] (owned by whoever holds the struct) */
    uint32_t nendpoints;
    /* Before the job is placed, a seeded history of other jobs (seed) holds
     * this fraction of the cluster (0 <= occupancy < 1; docs/MODEL.md,
     * "Placement"): every policy but LIST then chooses among the free
     * endpoints. */
    double occupancy;
    /* SLICE: the slice's extents (shape_ndims 0: the most compact shape of
     * the ranks' volume), and ocs > 0: a slice whose extents are all
     * multiples of ocs has wraparound in every dimension (optical circuit
     * switches closing its rings, as TPU v4 slices of whole 4x4x4 cubes). */
    uint32_t shape[TC_MAX_DIMS];
    int shape_ndims;
    uint32_t ocs;
} tc_job_place;

/* "shape=AxBxC", "ocs=K", both comma-separated, or "auto" / "": the
 * slice's parameters into jp (shape, shape_ndims, ocs). */
tc_status tc_place_slice_parse(const char *s, tc_job_place *jp, tc_err *err);
/* The canonical form ("shape=2x2x4,ocs=4"; "auto" when neither). */
char *tc_place_slice_format(const tc_job_place *jp, char *buf, size_t len);

/* The rank map of a job on t: *map (malloc'ed, *p entries) holds distinct
 * endpoints of t. Fails (TC_EINVAL, one line) for more ranks than
 * endpoints (free endpoints, with an occupancy), an endpoint beyond the
 * topology or listed twice, an empty job, packed on a torus or slice on a
 * Clos, a slice shape that does not fit the torus or finds no free box,
 * an occupancy outside [0, 1) or with list. */
tc_status tc_place_map(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p, tc_err *err);

/* A placement as --place and a jobs file's "place" give it:
 * "POLICY[:ITEM,...]" with POLICY first, random, list, packed or slice and
 * the items seed=S (random only), shape=AxBx.. and ocs=K (slice only), into
 * jp's policy, seed, shape, shape_ndims and ocs (the other fields are left
 * alone). */
tc_status tc_place_spec_parse(const char *s, tc_job_place *jp, tc_err *err);
/* The canonical form: "packed", "random:seed=3", "slice",
 * "slice:shape=2x2x4,ocs=4". Returns buf. */
char *tc_place_spec_format(const tc_job_place *jp, char *buf, size_t len);

/* The shape of a job's placement. */
typedef struct tc_place_shape {
    tc_place_policy policy;
    uint32_t ranks;
    double occupancy;          /* requested */
    uint32_t occupied;         /* endpoints the history held when the job was placed */
    uint32_t history_jobs;     /* the history's jobs still holding them */
    tc_topo_kind kind;
    /* Clos: distinct leaves (level-1 switches), pods (level-2 subtrees:
     * one for a 2-level Clos, 0 for one switch) and scale-up nodes (0
     * without node=) the job's endpoints sit under. Multidc: pods is the
     * distinct pods (datacenters) and nodes the scale-up nodes; no leaves. */
    uint32_t leaves, pods, nodes;
    /* Torus: whether the endpoints fill a box of consecutive coordinates
     * (a slice); its origin and extents per dimension (the bounding box
     * when not a slice), and the slice's wraparound per dimension: the
     * torus's own where the slice spans the whole dimension; with ocs and
     * every extent a multiple of it, every dimension (ocs_wrap: by the
     * optical switches, not by links the topology has). wrap_out: a
     * slice dimension without wraparound of its own where the topology's
     * ring is routed the shorter way round between some of the slice's
     * endpoints (those out[d] = ceil(dims/2) or more apart, out[d] 0 where
     * none are): through routers outside the slice, on links other jobs
     * may hold. */
    bool slice, ocs_wrap;
    uint32_t ocs;              /* the ocs=K asked (0: none); a slice with an extent not a multiple of it
                                * has no ocs_wrap, which the text says */
    int ndims;
    uint32_t origin[TC_MAX_DIMS], extent[TC_MAX_DIMS];
    uint8_t wrap[TC_MAX_DIMS];
    uint32_t out[TC_MAX_DIMS];
} tc_place_shape;

/* tc_place_map, and the shape of the map it makes (shape may be NULL). */
tc_status tc_place_map_shape(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p,
                             tc_place_shape *shape, tc_err *err);
/* Jobs placed one after another on one cluster (concurrent's jobs file):
 * as tc_place_map_shape, with the endpoints busy flags (t->n_endpoints
 * entries, non-zero: held by a job placed before) taken away from the
 * policy's choice; the job's endpoints are then flagged in busy. LIST
 * takes its endpoints whether flagged or not (jobs given by their
 * endpoints may share them). busy NULL: every endpoint free, as
 * tc_place_map_shape. Fails (TC_EINVAL) as tc_place_map_shape, and for
 * more ranks than free endpoints or no free room of the policy's kind
 * (whole nodes, a box); busy is then left as it was. */
tc_status tc_place_map_free(const tc_topo *t, const tc_job_place *jp, uint8_t *busy, uint32_t **map, uint32_t *p,
                            tc_place_shape *shape, tc_err *err);
/* The shapes a slice of n ranks may take on torus t, in the order the
 * slice policy tries them (most compact first: the smallest surface, then
 * the smallest largest extent, then the lexicographically smallest
 * extents): *ns rows of TC_MAX_DIMS extents (malloc'ed; 0 beyond the
 * torus's dimensions). The slice policy takes the first shape with a free
 * box, at the first free origin in generator order (first dimension
 * fastest), ranks first dimension fastest within it. */
tc_status tc_place_slice_shapes(const tc_topo *t, uint32_t n, uint32_t **extents, size_t *ns, tc_err *err);
/* The shape of any map of p ranks on t (ocs as tc_job_place.ocs). */
tc_status tc_place_shape_of(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_place_shape *out,
                            tc_err *err);
/* One line: "2 leaves, 1 pod" or "slice 2x2x4 at (0,0,0), wraparound x no
 * y no z yes" or "not a slice (bounding box 3x2x1)"; with ocs_wrap that
 * the job runs on the slice's own torus and shares no link with other
 * jobs, with ocs asked but not every extent a multiple of it that the
 * optical switches add no wraparound; then the occupancy when above 0.
 * Returns buf. */
char *tc_place_shape_format(const tc_place_shape *sh, char *buf, size_t len);

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

/* Where a job on part of a torus runs (docs/MODEL.md, "Placement"), for
 * every command that runs a placed job (collective, compare, concurrent,
 * failures):
 *  - on a slice whose wraparound is the optical switches' (ocs_wrap of
 *    tc_place_shape_of with ocs), on the slice's own torus
 *    (tc_topo_torus_box with wrap_all: topo, and rank r on map[r] there),
 *    which shares no link with any other job;
 *  - on another slice (p > 1 ranks filling a box of the torus, not all of
 *    it) whose ranks are in the box's coordinate order (first dimension
 *    fastest), on the torus as one group along the dimensions it spans
 *    (axes, TC_GROUP_AXES: tc_group_make gives the slice's own torus, so
 *    the torus algorithms run on it), reported as the job;
 *  - otherwise as placed (axes.kind TC_GROUP_NONE, topo NULL): a slice in
 *    another rank order keeps its order.
 * A slice of the optical switches that is the whole torus with every
 * dimension wrapped already runs as placed. */
typedef struct tc_slice_run {
    tc_group_spec axes;        /* TC_GROUP_AXES: the implicit group; TC_GROUP_NONE: none */
    tc_topo *topo;             /* the slice's own torus (owned); NULL: the job runs on the topology */
    uint32_t *map;             /* with topo: the rank map on it (owned, p entries) */
    tc_place_shape shape;      /* the shape of the job's placement (ocs as given) */
} tc_slice_run;

/* How the p ranks placed by map on t run (ocs: the slice's ocs=K, 0 for
 * none). Fails (TC_EINVAL, one line) where the slice's own torus cannot be
 * built (tc_topo_torus_box: it cuts the topology's scale-up nodes). */
tc_status tc_place_slice_run(const tc_topo *t, const uint32_t *map, uint32_t p, uint32_t ocs, tc_slice_run *out,
                             tc_err *err);
void tc_slice_run_free(tc_slice_run *sr);

#ifdef __cplusplus
}
#endif

#endif
