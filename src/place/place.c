/*
 * place.c - job placement: policy names, endpoint lists, and partitions of
 * a job's ranks into sub-groups (blocks, strides, scale-up nodes). The
 * rank maps themselves (first, random, list, packed, slice, occupancy) are
 * in alloc.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/place.h"

static const char *names[TC_PLACE_POLICIES] = {"first", "random", "list", "packed", "slice"};

const char *tc_place_name(tc_place_policy p)
{
    return (unsigned)p < TC_PLACE_POLICIES ? names[p] : "first";
}

tc_status tc_place_parse(const char *s, tc_place_policy *out, tc_err *err)
{
    for (int i = 0; i < TC_PLACE_POLICIES; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = (tc_place_policy)i;
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL, "unknown placement policy '%s': accepted are first, random, list, packed, slice", s ? s : "");
}

tc_status tc_place_spec_parse(const char *s, tc_job_place *jp, tc_err *err)
{
    char pol[32];
    const char *colon = strchr(s, ':');
    size_t plen = colon ? (size_t)(colon - s) : strlen(s);
    if (plen >= sizeof pol)
        return tc_fail(err, TC_EINVAL, "unknown placement policy '%.40s': accepted are first, random, list, packed, "
                                       "slice", s);
    snprintf(pol, sizeof pol, "%.*s", (int)plen, s);
    tc_place_policy policy = TC_PLACE_FIRST;
    tc_status st = tc_place_parse(pol, &policy, err);
    if (st)
        return st;
    char items[256], slice[256] = "";
    if (colon && strlen(colon + 1) >= sizeof items)
        return tc_fail(err, TC_EINVAL, "placement '%.40s...' is too long", s);
    snprintf(items, sizeof items, "%s", colon ? colon + 1 : "");
    /* an empty item (strtok_r would skip it), as a topology spec refuses */
    if (tc_list_has_empty(items))
        return tc_fail(err, TC_EINVAL,
                       "placement '%s': empty item between commas (expected first, packed, random[:seed=S] or "
                       "slice[:shape=AxBxC][,ocs=K])",
                       s);
    uint64_t seed = 0;
    bool seen_seed = false;
    for (char *save = NULL, *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (strncmp(it, "seed=", 5) == 0 && policy == TC_PLACE_RANDOM && !seen_seed) {
            seen_seed = true;
            char *end;
            errno = 0;
            unsigned long long v = strtoull(it + 5, &end, 10);
            if (!isdigit((unsigned char)it[5]) || *end || errno || v > INT64_MAX)
                return tc_fail(err, TC_EINVAL, "placement '%s': seed=S takes an integer of 0 or more", s);
            seed = v;
        } else if ((strncmp(it, "shape=", 6) == 0 || strncmp(it, "ocs=", 4) == 0) && policy == TC_PLACE_SLICE) {
            size_t n = strlen(slice);
            snprintf(slice + n, sizeof slice - n, "%s%s", n ? "," : "", it);
        } else {
            return tc_fail(err, TC_EINVAL,
                           "placement '%s': expected first, packed, random[:seed=S] or slice[:shape=AxBxC][,ocs=K]", s);
        }
    }
    tc_job_place tmp = *jp;
    if ((st = tc_place_slice_parse(slice, &tmp, err)))
        return st;
    tmp.policy = policy;
    tmp.seed = seed;
    *jp = tmp;
    return TC_OK;
}

char *tc_place_spec_format(const tc_job_place *jp, char *buf, size_t len)
{
    if (!len)
        return buf;
    if (jp->policy == TC_PLACE_RANDOM) {
        snprintf(buf, len, "random:seed=%llu", (unsigned long long)jp->seed);
    } else if (jp->policy == TC_PLACE_SLICE && (jp->shape_ndims || jp->ocs)) {
        char b[160];
        snprintf(buf, len, "slice:%s", tc_place_slice_format(jp, b, sizeof b));
    } else {
        snprintf(buf, len, "%s", tc_place_name(jp->policy));
    }
    return buf;
}

tc_status tc_place_parse_ranges(const char *s, uint32_t **list, uint32_t *n, tc_err *err)
{
    size_t cap = 64, k = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    const char *p = s;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            goto bad;
        unsigned long a = strtoul(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            if (!isdigit((unsigned char)p[1]))
                goto bad;
            b = strtoul(p + 1, &end, 10);
            p = end;
        }
        if (b < a || b >= UINT32_MAX)
            goto bad;
        if (b - a + 1 > TC_PLACE_MAX_ENDPOINTS - k) {
            free(v);
            return tc_fail(err, TC_EINVAL, "'%.40s': more than %u endpoints", s, TC_PLACE_MAX_ENDPOINTS);
        }
        for (unsigned long x = a; x <= b; x++) {
            if (k == cap) {
                uint32_t *w = realloc(v, 2 * cap * sizeof *w);
                if (!w) {
                    free(v);
                    return tc_fail(err, TC_EINTERNAL, "out of memory");
                }
                v = w, cap *= 2;
            }
            v[k++] = (uint32_t)x;
        }
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            goto bad;
    }
    if (k == 0)
        goto bad;
    *list = v;
    *n = (uint32_t)k;
    return TC_OK;
bad:
    free(v);
    return tc_fail(err, TC_EINVAL, "'%s' is not a list of endpoint ranges such as \"0-63,128\"", s);
}

/* ---- partitions ---- */

static uint32_t group_key(tc_partition_kind kind, uint32_t k, uint32_t r, const uint32_t *map, const tc_topo *t)
{
    if (kind == TC_PART_BLOCK)
        return r / k;
    if (kind == TC_PART_STRIDE)
        return r % k;
    return (map ? map[r] : r) / t->node_size;
}

tc_status tc_partition_make(tc_partition_kind kind, uint32_t k, uint32_t p, const uint32_t *map, const tc_topo *t,
                            tc_partition *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (p == 0)
        return tc_fail(err, TC_EINVAL, "a partition needs at least one rank");
    if (kind == TC_PART_NODE) {
        if (!t || t->node_size < 2)
            return tc_fail(err, TC_EINVAL, "a partition by node needs a topology with scale-up nodes (node=G)");
    } else if (k == 0 || p % k != 0) {
        return tc_fail(err, TC_EINVAL, "a partition into groups of %u needs a group size that divides the %u ranks", k,
                       p);
    }
    /* Number the groups in order of their smallest rank. */
    uint32_t nkeys = kind == TC_PART_BLOCK ? p / k : kind == TC_PART_STRIDE ? k : t->n_endpoints / t->node_size + 1;
    uint32_t *id = malloc((size_t)nkeys * sizeof *id);
    out->group_of = malloc((size_t)p * sizeof *out->group_of);
    out->members = malloc((size_t)p * sizeof *out->members);
    if (!id || !out->group_of || !out->members) {
        free(id);
        tc_partition_free(out);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t i = 0; i < nkeys; i++)
        id[i] = UINT32_MAX;
    uint32_t ng = 0;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t key = group_key(kind, k, r, map, t);
        if (id[key] == UINT32_MAX)
            id[key] = ng++;
        out->group_of[r] = id[key];
    }
    free(id);
    out->ngroups = ng;
    out->first = tc_calloc((size_t)ng + 1, sizeof *out->first);
    if (!out->first) {
        tc_partition_free(out);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t r = 0; r < p; r++)
        out->first[out->group_of[r] + 1]++;
    for (uint32_t g = 0; g < ng; g++)
        out->first[g + 1] += out->first[g];
    uint32_t *fill = tc_calloc(ng ? ng : 1, sizeof *fill);
    if (!fill) {
        tc_partition_free(out);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t r = 0; r < p; r++) {
        uint32_t g = out->group_of[r];
        out->members[out->first[g] + fill[g]++] = r;
    }
    free(fill);
    return TC_OK;
}

void tc_partition_free(tc_partition *pt)
{
    free(pt->group_of);
    free(pt->first);
    free(pt->members);
    memset(pt, 0, sizeof *pt);
}

/* ---- sub-groups of a collective ---- */

tc_status tc_group_parse(const char *s, tc_group_spec *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s || strcmp(s, "none") == 0)
        return TC_OK;
    if (strcmp(s, "node") == 0) {
        out->kind = TC_GROUP_NODE;
        return TC_OK;
    }
    const char *v = NULL;
    if (strncmp(s, "stride=", 7) == 0)
        out->kind = TC_GROUP_STRIDE, v = s + 7;
    else if (strncmp(s, "block=", 6) == 0)
        out->kind = TC_GROUP_BLOCK, v = s + 6;
    else if (strncmp(s, "axes=", 5) == 0)
        out->kind = TC_GROUP_AXES, v = s + 5;
    if (out->kind == TC_GROUP_STRIDE || out->kind == TC_GROUP_BLOCK) {
        uint32_t k;
        if (tc_parse_u32(v, &k, NULL) != TC_OK || k < 1)
            return tc_fail(err, TC_EINVAL, "invalid group '%s': expected %s with a positive integer", s,
                           out->kind == TC_GROUP_STRIDE ? "stride=S" : "block=K");
        out->k = k;
        return TC_OK;
    }
    if (out->kind == TC_GROUP_AXES) {
        for (const char *c = v; *c; c++) {
            int d = *c == 'x' ? 0 : *c == 'y' ? 1 : *c == 'z' ? 2 : *c >= '0' && *c <= '7' ? *c - '0' : -1;
            if (d < 0 || d >= TC_MAX_DIMS)
                return tc_fail(err, TC_EINVAL,
                               "invalid group '%s': axes are named x, y, z (dimensions 0, 1, 2) or by digits 0-7", s);
            if (out->k & 1u << d)
                return tc_fail(err, TC_EINVAL, "invalid group '%s': dimension %c named twice", s, *c);
            out->k |= 1u << d;
        }
        if (!out->k)
            return tc_fail(err, TC_EINVAL, "invalid group '%s': name at least one axis (axes=x, axes=xy, ...)", s);
        return TC_OK;
    }
    out->kind = TC_GROUP_NONE;
    return tc_fail(err, TC_EINVAL,
                   "invalid group '%s': accepted are node, stride=S, block=K, axes=LIST (e.g. axes=x, axes=yz)", s);
}

char *tc_group_format(const tc_group_spec *g, char *buf, size_t len)
{
    if (!len)
        return buf;
    switch (g->kind) {
    case TC_GROUP_NODE: snprintf(buf, len, "node"); break;
    case TC_GROUP_STRIDE: snprintf(buf, len, "stride=%u", g->k); break;
    case TC_GROUP_BLOCK: snprintf(buf, len, "block=%u", g->k); break;
    case TC_GROUP_AXES: {
        size_t n = (size_t)snprintf(buf, len, "axes=");
        for (int d = 0; d < TC_MAX_DIMS && n + 1 < len; d++)
            if (g->k & 1u << d) {
                buf[n++] = d < 3 ? "xyz"[d] : (char)('0' + d);
                buf[n] = '\0';
            }
        break;
    }
    default: snprintf(buf, len, "none"); break;
    }
    return buf;
}

/* Groups along torus axes: every group the ranks sharing their coordinates
 * outside the named dimensions, members by their coordinates inside them. */
static tc_status axes_make(const tc_group_spec *spec, char *name, uint32_t p, const uint32_t *map, const tc_topo *t,
                           tc_partition *out, int *ndims, uint32_t *dims, uint8_t *wrap, tc_err *err)
{
    if (t->kind != TC_TOPO_TORUS)
        return tc_fail(err, TC_EINVAL, "group %s needs a torus: this topology is a Clos (use node, stride=S or block=K)",
                       name);
    for (int d = 0; d < TC_MAX_DIMS; d++)
        if ((spec->k & 1u << d) && d >= t->ndims)
            return tc_fail(err, TC_EINVAL, "group %s: the torus has %d dimension%s (x is the first)", name, t->ndims,
                           t->ndims == 1 ? "" : "s");
    uint32_t lo[TC_MAX_DIMS], hi[TC_MAX_DIMS];
    for (int d = 0; d < t->ndims; d++)
        lo[d] = UINT32_MAX, hi[d] = 0;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t e = map ? map[r] : r;
        for (int d = 0; d < t->ndims; d++) {
            uint32_t c = e / t->stride[d] % t->dims[d];
            lo[d] = c < lo[d] ? c : lo[d];
            hi[d] = c > hi[d] ? c : hi[d];
        }
    }
    /* p distinct endpoints inside a box of p cells fill it: a slice. */
    uint64_t cells = 1, q = 1;
    uint32_t mul_in[TC_MAX_DIMS], mul_out[TC_MAX_DIMS], nout = 1;
    *ndims = 0;
    for (int d = 0; d < t->ndims; d++) {
        uint32_t ext = hi[d] - lo[d] + 1;
        cells *= ext;
        if (spec->k & 1u << d) {
            mul_in[d] = (uint32_t)q;
            q *= ext;
            if (ext > 1) {
                dims[*ndims] = ext;
                wrap[*ndims] = ext == t->dims[d] ? t->wrap[d] : 0;
                (*ndims)++;
            }
        } else {
            mul_out[d] = nout;
            nout *= ext;
        }
    }
    if (cells != p)
        return tc_fail(err, TC_EINVAL,
                       "group %s needs the job on the whole torus or a slice of it (a box of consecutive coordinates in "
                       "every dimension): its %u ranks span a box of %llu endpoints",
                       name, p, (unsigned long long)cells);
    if (q < 2)
        return tc_fail(err, TC_EINVAL, "group %s: the job spans one coordinate along those axes, so every group would "
                                       "hold 1 rank: a group needs at least 2",
                       name);
    memset(out, 0, sizeof *out);
    uint32_t ng = nout;
    uint32_t *id = malloc((size_t)ng * sizeof *id);
    out->group_of = malloc((size_t)p * sizeof *out->group_of);
    out->members = malloc((size_t)p * sizeof *out->members);
    out->first = malloc(((size_t)ng + 1) * sizeof *out->first);
    if (!id || !out->group_of || !out->members || !out->first) {
        free(id);
        tc_partition_free(out);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    for (uint32_t i = 0; i < ng; i++)
        id[i] = UINT32_MAX;
    uint32_t next = 0;
    for (uint32_t r = 0; r < p; r++) {
        uint32_t e = map ? map[r] : r, key = 0, in = 0;
        for (int d = 0; d < t->ndims; d++) {
            uint32_t c = e / t->stride[d] % t->dims[d] - lo[d];
            if (spec->k & 1u << d)
                in += c * mul_in[d];
            else
                key += c * mul_out[d];
        }
        if (id[key] == UINT32_MAX)
            id[key] = next++;
        out->group_of[r] = id[key];
        out->members[(size_t)id[key] * q + in] = r;
    }
    free(id);
    out->ngroups = ng;
    for (uint32_t g = 0; g <= ng; g++)
        out->first[g] = (uint32_t)(g * q);
    return TC_OK;
}

tc_status tc_group_make(const tc_group_spec *spec, uint32_t p, const uint32_t *map, const tc_topo *t,
                        tc_partition *out, int *ndims, uint32_t *dims, uint8_t *wrap, tc_err *err)
{
    char name[48];
    tc_group_format(spec, name, sizeof name);
    memset(out, 0, sizeof *out);
    *ndims = 0;
    if (p == 0)
        return tc_fail(err, TC_EINVAL, "a job needs at least one rank");
    switch (spec->kind) {
    case TC_GROUP_STRIDE:
    case TC_GROUP_BLOCK: {
        bool stride = spec->kind == TC_GROUP_STRIDE;
        if (p % spec->k != 0)
            return tc_fail(err, TC_EINVAL, "group %s: %s %u does not divide the job's %u ranks", name,
                           stride ? "the stride" : "the block size", spec->k, p);
        uint32_t q = stride ? p / spec->k : spec->k;
        if (q < 2)
            return tc_fail(err, TC_EINVAL, "group %s: groups of %u rank%s (%u ranks, %s %u): a group needs at least 2",
                           name, q, q == 1 ? "" : "s", p, stride ? "stride" : "block", spec->k);
        return tc_partition_make(stride ? TC_PART_STRIDE : TC_PART_BLOCK, spec->k, p, map, t, out, err);
    }
    case TC_GROUP_NODE: {
        if (!t || t->node_size < 2)
            return tc_fail(err, TC_EINVAL,
                           "group node needs a topology with scale-up nodes (node=G): use stride=S or block=K");
        tc_status st = tc_partition_make(TC_PART_NODE, 0, p, map, t, out, err);
        if (st)
            return st;
        uint32_t q = out->first[1] - out->first[0];
        for (uint32_t g = 0; g < out->ngroups; g++) {
            uint32_t n = out->first[g + 1] - out->first[g];
            if (n == q)
                continue;
            uint32_t e0 = map ? map[out->members[0]] : out->members[0];
            uint32_t eg = map ? map[out->members[out->first[g]]] : out->members[out->first[g]];
            st = tc_fail(err, TC_EINVAL,
                         "group node: the job's nodes hold unequal numbers of its ranks (node %u holds %u, node %u "
                         "holds %u): every group needs the same size",
                         e0 / t->node_size, q, eg / t->node_size, n);
            tc_partition_free(out);
            return st;
        }
        if (q < 2) {
            tc_partition_free(out);
            return tc_fail(err, TC_EINVAL, "group node: every node holds 1 rank of the job: a group needs at least 2");
        }
        return TC_OK;
    }
    case TC_GROUP_AXES:
        if (!t)
            return tc_fail(err, TC_EINVAL, "group %s needs a torus", name);
        return axes_make(spec, name, p, map, t, out, ndims, dims, wrap, err);
    default:
        return tc_fail(err, TC_EINVAL, "no group given");
    }
}
