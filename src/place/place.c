/*
 * place.c - job placement: the rank map of a job (first N endpoints, a
 * seeded random draw, or an explicit list) and partitions of a job's ranks
 * into sub-groups (blocks, strides, scale-up nodes).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/place.h"

static const char *names[] = {"first", "random", "list"};

const char *tc_place_name(tc_place_policy p)
{
    return (unsigned)p < 3 ? names[p] : "first";
}

tc_status tc_place_parse(const char *s, tc_place_policy *out, tc_err *err)
{
    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *out = (tc_place_policy)i;
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL, "unknown placement policy '%s': accepted are first, random, list", s ? s : "");
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

/* Distinct endpoints inside the topology. */
static tc_status check_list(const tc_topo *t, const uint32_t *v, uint32_t n, tc_err *err)
{
    uint8_t *seen = tc_calloc(t->n_endpoints, 1);
    if (!seen)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < n && st == TC_OK; i++) {
        if (v[i] >= t->n_endpoints)
            st = tc_fail(err, TC_EINVAL, "endpoint %u does not exist (the topology has 0 to %u)", v[i],
                         t->n_endpoints - 1);
        else if (seen[v[i]]++)
            st = tc_fail(err, TC_EINVAL, "endpoint %u listed twice", v[i]);
    }
    free(seen);
    return st;
}

tc_status tc_place_map(const tc_topo *t, const tc_job_place *jp, uint32_t **map, uint32_t *p, tc_err *err)
{
    *map = NULL;
    *p = 0;
    uint32_t n = jp->policy == TC_PLACE_LIST ? jp->nendpoints : jp->ranks ? jp->ranks : t->n_endpoints;
    if (n == 0)
        return tc_fail(err, TC_EINVAL, "a job needs at least one rank");
    if (n > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u ranks but the topology has only %u endpoints: expected 1 to %u", n,
                       t->n_endpoints, t->n_endpoints);
    uint32_t *m = malloc((size_t)(jp->policy == TC_PLACE_RANDOM ? t->n_endpoints : n) * sizeof *m);
    if (!m)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (jp->policy == TC_PLACE_LIST) {
        if (!jp->endpoints) {
            free(m);
            return tc_fail(err, TC_EINVAL, "placement 'list' needs its endpoints (--endpoints 0-63)");
        }
        memcpy(m, jp->endpoints, (size_t)n * sizeof *m);
        tc_status st = check_list(t, m, n, err);
        if (st) {
            free(m);
            return st;
        }
    } else if (jp->policy == TC_PLACE_RANDOM) {
        /* The first n draws of a Fisher-Yates shuffle of every endpoint:
         * a uniform choice of n distinct endpoints in uniform order. */
        for (uint32_t i = 0; i < t->n_endpoints; i++)
            m[i] = i;
        uint64_t x = jp->seed;
        for (uint32_t i = 0; i < n; i++) {
            x = tc_mix64(x);
            uint32_t j = i + (uint32_t)(((x >> 11) * (double)(t->n_endpoints - i)) / 9007199254740992.0);
            uint32_t tmp = m[i];
            m[i] = m[j];
            m[j] = tmp;
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            m[i] = i;
    }
    *map = m;
    *p = n;
    return TC_OK;
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
