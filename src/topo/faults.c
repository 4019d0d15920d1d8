/*
 * faults.c - the failures a scenario names (--fail KIND:ID) or draws
 * (--fail-random links=K|F%,switches=K,seed=S[,hostlinks=1][,nvlinks=1]),
 * applied to a built topology (docs/MODEL.md, "Failures").
 *
 * A draw is a seeded partial Fisher-Yates shuffle of the eligible cables
 * (tc_topo_fabric_cables) and switches: the same seed and trial give the
 * same failures on the same topology, whatever else the run does.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topo_int.h"

static const char *const kind_names[] = {"link", "dlink", "switch", "host", "node"};

const char *tc_fail_kind_name(tc_fail_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "?";
}

tc_status tc_fail_item_parse(const char *s, tc_fail_item *out, tc_err *err)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    if (colon) {
        for (unsigned k = 0; k < sizeof kind_names / sizeof *kind_names; k++) {
            size_t n = strlen(kind_names[k]);
            if ((size_t)(colon - s) != n || strncmp(s, kind_names[k], n) != 0)
                continue;
            const char *v = colon + 1;
            char *end;
            unsigned long long id = strtoull(v, &end, 10);
            if (!isdigit((unsigned char)*v) || *end || id > UINT32_MAX)
                break;
            out->kind = (tc_fail_kind)k;
            out->id = (uint32_t)id;
            return TC_OK;
        }
    }
    return tc_fail(err, TC_EINVAL, "failure '%s': expected link:ID (a cable, both directions), dlink:ID (one direction), "
                                   "switch:ID, host:ID or node:ID, IDs as topocc topo SPEC --links prints them (in "
                                   "--fail's list a bare ID takes the kind before it: link:1,2)",
                   s ? s : "");
}

tc_status tc_topo_fail_item(tc_topo *t, const tc_fail_item *f, tc_err *err)
{
    switch (f->kind) {
    case TC_FAIL_LINK: return tc_topo_fail_link(t, f->id, true, err);
    case TC_FAIL_DLINK: return tc_topo_fail_link(t, f->id, false, err);
    case TC_FAIL_SWITCH: return tc_topo_fail_switch(t, f->id, err);
    case TC_FAIL_HOST: return tc_topo_fail_host(t, f->id, err);
    default: return tc_topo_fail_node(t, f->id, err);
    }
}

static tc_status bool_key(tc_spec *sp, const char *key, bool *out, tc_err *err)
{
    const char *v = tc_spec_get(sp, key);
    if (!v)
        return TC_OK;
    if (strcmp(v, "0") && strcmp(v, "1"))
        return tc_fail(err, TC_EINVAL, "--fail-random %s='%s': accepted are 0 and 1", key, v);
    *out = v[0] == '1';
    return TC_OK;
}

tc_status tc_fail_random_parse(const char *s, tc_fail_random *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    char buf[300];
    if (!s || !*s || strlen(s) > 250)
        return tc_fail(err, TC_EINVAL, "--fail-random: expected links=K|F%%,switches=K,seed=S, e.g. links=8,seed=1");
    snprintf(buf, sizeof buf, "r:%s", s);
    tc_spec sp;
    tc_status st = tc_spec_parse(buf, &sp, err);
    if (st)
        return tc_fail(err, TC_EINVAL, "--fail-random '%s': expected links=K|F%%,switches=K,seed=S", s);
    const char *v = tc_spec_get(&sp, "links");
    if (v) {
        char *end;
        double x = strtod(v, &end);
        bool pct = *end == '%' && end[1] == '\0';
        if (end == v || (*end && !pct) || !isfinite(x) || x < 0 || (pct && x > 100) ||
            (!pct && (x != floor(x) || x > 1e9)))
            return tc_fail(err, TC_EINVAL, "--fail-random links='%s': expected a whole count K or a percentage F%% of "
                                           "the fabric cables from 0%% to 100%%",
                           v);
        out->links = x;
        out->links_pct = pct;
    }
    v = tc_spec_get(&sp, "switches");
    if (v) {
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)*v) || *end || x > UINT32_MAX)
            return tc_fail(err, TC_EINVAL, "--fail-random switches='%s': expected a whole count", v);
        out->switches = (uint32_t)x;
    }
    v = tc_spec_get(&sp, "seed");
    if (v) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)*v) || *end || errno == ERANGE)
            return tc_fail(err, TC_EINVAL, "--fail-random seed='%s': expected an integer from 0 to %llu", v,
                           (unsigned long long)UINT64_MAX);
        out->seed = x;
    }
    if ((st = bool_key(&sp, "hostlinks", &out->hostlinks, err)) || (st = bool_key(&sp, "nvlinks", &out->nvlinks, err)))
        return st;
    /* an unknown key first: a misspelt links= would else read as "draws nothing" */
    if ((st = tc_spec_check_unused(&sp, "--fail-random", "links, switches, seed, hostlinks, nvlinks", err)))
        return st;
    if (!(out->links > 0) && out->switches == 0)
        return tc_fail(err, TC_EINVAL, "--fail-random '%s': draws nothing: give links=K (or F%%) and/or switches=K", s);
    return TC_OK;
}

void tc_fail_random_format(const tc_fail_random *r, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    if (r->links > 0)
        n += snprintf(buf + n, len - (size_t)n, "links=%.12g%s", r->links, r->links_pct ? "%" : "");
    if (r->switches && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%sswitches=%u", n ? "," : "", r->switches);
    if ((size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, "%sseed=%llu", n ? "," : "", (unsigned long long)r->seed);
    if (r->hostlinks && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ",hostlinks=1");
    if (r->nvlinks && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ",nvlinks=1");
}

/* Draws k of the n values in v (shuffled in place, the first k drawn). */
static void draw(uint32_t *v, uint32_t n, uint32_t k, uint64_t *state)
{
    for (uint32_t i = 0; i < k && i < n; i++) {
        *state = tc_mix64(*state + 0x9e3779b97f4a7c15ull);
        uint32_t j = i + (uint32_t)(*state % (n - i));
        uint32_t x = v[i];
        v[i] = v[j];
        v[j] = x;
    }
}

tc_status tc_topo_fail_random(tc_topo *t, const tc_fail_random *r, uint64_t trial, tc_fail_drawn *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    if (r->switches && t->kind == TC_TOPO_FULL)
        return tc_fail(err, TC_EINVAL, "--fail-random switches=%u: a full mesh has no switches (every pair of "
                                       "endpoints is joined directly): draw links=K only",
                       r->switches);
    uint32_t *cab = malloc(((size_t)t->n_links / 2 + 1) * sizeof *cab);
    if (!cab)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (r->nvlinks && t->node_size < 2) {
        free(cab);
        return tc_fail(err, TC_EINVAL, "--fail-random nvlinks=1: the topology has no scale-up nodes (node=G) whose "
                                       "links it could draw");
    }
    uint32_t n = tc_topo_fabric_cables(t, r->hostlinks, r->nvlinks, cab);
    out->eligible_cables = n;
    /* the draw takes cables that are up: one that --fail (or a failed
     * switch) took down is no further failure */
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!t->link_failed || (!t->link_failed[cab[i]] && !t->link_failed[cab[i] ^ 1u]))
            cab[live++] = cab[i];
    double want = r->links_pct ? floor(r->links / 100.0 * n + 0.5) : r->links;
    if (r->links_pct && r->links > 0 && n == 0) {
        free(cab);
        return tc_fail(err, TC_EINVAL, "--fail-random links=%.12g%%: the topology has no eligible cables (fabric "
                                       "cables; hostlinks=1 and nvlinks=1 add others)",
                       r->links);
    }
    if (r->links_pct && r->links > 0 && want < 1) {
        /* the least share that rounds to one cable, 50/n %, rounded up
         * to 3 significant digits (it still rounds to one) */
        double m = n ? 50.0 / n : 100.0, scale = pow(10, floor(log10(m)) - 2), least = ceil(m / scale) * scale;
        free(cab);
        return tc_fail(err, TC_EINVAL, "--fail-random links=%.12g%%: of %u eligible cables that rounds to none; give "
                                       "at least %.3g%% (one cable) or a count, links=1",
                       r->links, n, least);
    }
    if (want > n) {
        free(cab);
        return tc_fail(err, TC_EINVAL, "--fail-random links=%.12g%s: the topology has only %u eligible cables%s",
                       r->links, r->links_pct ? "%" : "", n,
                       r->hostlinks || r->nvlinks ? "" : " (fabric cables; hostlinks=1 and nvlinks=1 add others)");
    }
    if (want > live) {
        free(cab);
        return tc_fail(err, TC_EINVAL, "--fail-random links=%.12g%s: only %u of the %u eligible cables are up (the "
                                       "others failed already, by --fail or with a failed switch)",
                       r->links, r->links_pct ? "%" : "", live, n);
    }
    uint64_t state = tc_mix64(r->seed ^ tc_mix64(trial + 1));
    uint32_t k = (uint32_t)want;
    draw(cab, live, k, &state);
    tc_status st = TC_OK;
    for (uint32_t i = 0; i < k && st == TC_OK; i++)
        st = tc_topo_fail_link(t, cab[i], true, err);
    out->cables = cab; /* the first k */
    out->ncables = k;
    if (st == TC_OK && r->switches) {
        /* A multidc's gateways are switches too; its torus pods' routers
         * are the endpoints' vertices, the gateways right after them. */
        bool clos = tc_topo_fabric_kind(t) == TC_TOPO_CLOS, mdc = t->kind == TC_TOPO_MULTIDC;
        uint32_t ns = clos ? t->n_switches : t->n_endpoints + (mdc ? t->n_switches : 0);
        out->eligible_switches = ns;
        uint32_t *sw = r->switches > ns ? NULL : malloc((size_t)ns * sizeof *sw), up = 0;
        uint32_t base = clos ? t->n_endpoints : 0;
        for (uint32_t i = 0; sw && i < ns; i++)
            if (!t->vertex_failed || !t->vertex_failed[base + i])
                sw[up++] = base + i;
        if (r->switches > ns) {
            st = tc_fail(err, TC_EINVAL, "--fail-random switches=%u: the topology has only %u %s%s", r->switches, ns,
                         clos ? "fabric switches" : "routers", mdc ? " and gateways" : "");
        } else if (sw && r->switches > up) {
            st = tc_fail(err, TC_EINVAL, "--fail-random switches=%u: only %u of the %u %s%s are up (--fail took the "
                                         "others)",
                         r->switches, up, ns, clos ? "fabric switches" : "routers", mdc ? " and gateways" : "");
            free(sw);
        } else {
            if (!sw) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
            } else {
                draw(sw, up, r->switches, &state);
                for (uint32_t i = 0; i < r->switches && st == TC_OK; i++)
                    st = tc_topo_fail_switch(t, sw[i], err);
                out->switches = sw;
                out->nswitches = r->switches;
            }
        }
    }
    if (st)
        tc_fail_drawn_free(out);
    return st;
}

void tc_fail_drawn_free(tc_fail_drawn *d)
{
    free(d->cables);
    free(d->switches);
    d->cables = d->switches = NULL;
    d->ncables = d->nswitches = 0;
}
