/* args.c - option parsing and the pieces every subcommand shares. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

typedef struct opt_def {
    const char *name;
    bool flag;
    size_t off; /* offset of the const char * field in cli_args, or of the bool */
} opt_def;

static const opt_def defs[] = {
    {"--topo", false, 0},
    {"--names", false, offsetof(cli_args, names)},
    {"--op", false, offsetof(cli_args, op)},
    {"--algo", false, offsetof(cli_args, algo)},
    {"--size", false, offsetof(cli_args, size)},
    {"--sizes", false, offsetof(cli_args, sizes)},
    {"--ranks", false, offsetof(cli_args, ranks)},
    {"--mode", false, offsetof(cli_args, mode)},
    {"--routing", false, offsetof(cli_args, routing)},
    {"--format", false, offsetof(cli_args, format)},
    {"--equalize", false, offsetof(cli_args, equalize)},
    {"--out", false, offsetof(cli_args, out)},
    {"--rate-cap", false, offsetof(cli_args, rate_cap)},
    {"--multipath", false, offsetof(cli_args, multipath)},
    {"--deps", false, offsetof(cli_args, deps)},
    {"--event-budget", false, offsetof(cli_args, event_budget)},
    {"--trace", false, offsetof(cli_args, trace)},
    {"--jobs", false, offsetof(cli_args, jobs)},
    {"--degrade", false, 0},
    {"--links", true, offsetof(cli_args, links)},
    {"--help", true, offsetof(cli_args, help)},
    {"--default", true, offsetof(cli_args, dflt)},
};

static bool accepts(const char *accepted, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(accepted, name); p; p = strstr(p + 1, name))
        if ((p == accepted || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

tc_status cli_parse(int argc, char **argv, int first, const char *cmd, const char *accepted, cli_args *a,
                    tc_err *err)
{
    memset(a, 0, sizeof *a);
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        if (strncmp(arg, "--", 2) != 0) {
            if (a->npositional >= 4)
                return tc_fail(err, TC_EINVAL, "unexpected argument '%s' for 'topocc %s'", arg, cmd);
            a->positional[a->npositional++] = arg;
            continue;
        }
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nl >= sizeof name)
            nl = sizeof name - 1;
        memcpy(name, arg, nl);
        name[nl] = '\0';
        const opt_def *d = NULL;
        for (size_t k = 0; k < sizeof defs / sizeof *defs; k++)
            if (strcmp(defs[k].name, name) == 0)
                d = &defs[k];
        if (!d || !accepts(accepted, name))
            return tc_fail(err, TC_EINVAL, "unknown option '%s' for 'topocc %s': accepted are %s", name, cmd, accepted);
        if (d->flag) {
            if (eq)
                return tc_fail(err, TC_EINVAL, "option %s takes no value", name);
            *(bool *)((char *)a + d->off) = true;
            continue;
        }
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        if (!val || !*val)
            return tc_fail(err, TC_EINVAL, "option %s needs a value (see 'topocc %s --help')", name, cmd);
        if (strcmp(name, "--topo") == 0) {
            if (a->ntopo >= CLI_MAX_TOPOS)
                return tc_fail(err, TC_EINVAL, "at most %d --topo options", CLI_MAX_TOPOS);
            a->topo[a->ntopo++] = val;
            continue;
        }
        if (strcmp(name, "--degrade") == 0) {
            if (a->ndegrade >= CLI_MAX_DEGRADE)
                return tc_fail(err, TC_EINVAL, "at most %d --degrade options", CLI_MAX_DEGRADE);
            a->degrade[a->ndegrade++] = val;
            continue;
        }
        const char **field = (const char **)((char *)a + d->off);
        if (*field)
            return tc_fail(err, TC_EINVAL, "option %s given twice", name);
        *field = val;
    }
    return TC_OK;
}

/* "link:ID=FACTOR" */
static tc_status degrade_one(tc_topo *t, const char *s, tc_err *err)
{
    unsigned long id;
    double f;
    int used = 0;
    if (sscanf(s, "link:%lu=%lf%n", &id, &f, &used) != 2 || s[used] != '\0' || strncmp(s, "link:", 5) != 0 ||
        !(s[5] >= '0' && s[5] <= '9'))
        return tc_fail(err, TC_EINVAL,
                       "invalid --degrade '%s': expected link:ID=FACTOR, e.g. link:17=0.5 (IDs from topocc topo SPEC --links)",
                       s);
    if (id >= t->n_links)
        return tc_fail(err, TC_EINVAL, "invalid --degrade '%s': link %lu does not exist (links are 0 to %u)", s, id,
                       t->n_links - 1);
    if (!(f > 0) || f > 1e6)
        return tc_fail(err, TC_EINVAL, "invalid --degrade '%s': the factor must be above 0 (0.5 halves the bandwidth)", s);
    return tc_topo_degrade_link(t, (uint32_t)id, f, err);
}

tc_status cli_topo(const char *spec, const cli_args *a, tc_topo **out, tc_err *err)
{
    tc_status st = tc_topo_build(spec, out, err);
    if (st)
        return st;
    const char *equalize = a->equalize;
    if (equalize) {
        double rate;
        if (strncmp(equalize, "injection=", 10) != 0)
            st = tc_fail(err, TC_EINVAL, "invalid --equalize '%s': expected injection=RATE, e.g. injection=400Gbps",
                         equalize);
        else if ((st = tc_parse_rate(equalize + 10, &rate, err)) == TC_OK)
            st = tc_topo_equalize_injection(*out, rate, err);
    }
    for (int i = 0; i < a->ndegrade && st == TC_OK; i++)
        st = degrade_one(*out, a->degrade[i], err);
    if (st) {
        tc_topo_free(*out);
        *out = NULL;
    }
    return st;
}

tc_status cli_flow_opts(const cli_args *a, tc_mode mode, tc_flow_opts *fo, tc_err *err)
{
    memset(fo, 0, sizeof *fo);
    const char *given = a->rate_cap ? "--rate-cap" : a->multipath ? "--multipath" : a->deps ? "--deps"
                      : a->event_budget ? "--event-budget" : a->trace ? "--trace" : NULL;
    if (given && mode != TC_MODE_FLOW)
        return tc_fail(err, TC_EINVAL, "%s applies to the flow simulator: add --mode flow", given);
    tc_status st;
    if (a->rate_cap && (st = tc_parse_rate(a->rate_cap, &fo->rate_cap_Bps, err)))
        return st;
    if (a->multipath) {
        if (strcmp(a->multipath, "route") == 0)
            fo->multipath = TC_MULTIPATH_ROUTE;
        else if (strcmp(a->multipath, "spray") == 0)
            fo->multipath = TC_MULTIPATH_SPRAY;
        else
            return tc_fail(err, TC_EINVAL, "unknown --multipath '%s': accepted are route, spray", a->multipath);
    }
    if (a->deps) {
        if (strcmp(a->deps, "rendezvous") == 0)
            fo->deps = TC_DEPS_RENDEZVOUS;
        else if (strcmp(a->deps, "fifo") == 0)
            fo->deps = TC_DEPS_FIFO;
        else if (strcmp(a->deps, "recv") == 0)
            fo->deps = TC_DEPS_RECV;
        else
            return tc_fail(err, TC_EINVAL, "unknown --deps '%s': accepted are rendezvous, fifo, recv", a->deps);
    }
    if (a->event_budget) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(a->event_budget, &end, 10);
        if (*end || errno || v == 0 || a->event_budget[0] == '-')
            return tc_fail(err, TC_EINVAL, "invalid --event-budget '%s': expected a positive integer", a->event_budget);
        fo->event_budget = v;
    }
    fo->trace_path = a->trace;
    return TC_OK;
}

tc_status cli_sizes(const char *s, double **out, int *n, tc_err *err)
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': expected MIN:MAX[:FACTOR], e.g. 1KiB:4GiB:4", s);
    strcpy(buf, s);
    char *parts[3] = {buf, NULL, NULL};
    int np = 1;
    for (char *c = buf; *c; c++)
        if (*c == ':') {
            if (np == 3)
                return tc_fail(err, TC_EINVAL, "invalid sizes '%s': expected MIN:MAX[:FACTOR], e.g. 1KiB:4GiB:4", s);
            *c = '\0';
            parts[np++] = c + 1;
        }
    double lo, hi, factor = 4;
    tc_status st = tc_parse_size(parts[0], &lo, err);
    if (st)
        return st;
    hi = lo;
    if (np >= 2 && (st = tc_parse_size(parts[1], &hi, err)))
        return st;
    if (np == 3) {
        char *end;
        factor = strtod(parts[2], &end);
        if (*end || !(factor > 1.0001) || factor > 1e6)
            return tc_fail(err, TC_EINVAL, "invalid size factor '%s': expected a number above 1, e.g. 4", parts[2]);
    }
    if (hi < lo)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': the maximum is below the minimum", s);
    int cnt = 0;
    for (double v = lo; v <= hi * (1 + 1e-12); v *= factor)
        cnt++;
    if (cnt > 10000)
        return tc_fail(err, TC_EINVAL, "invalid sizes '%s': %d sizes, at most 10000", s, cnt);
    double *v = tc_calloc((size_t)cnt, sizeof *v);
    if (!v)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    double x = lo;
    for (int i = 0; i < cnt; i++, x *= factor)
        v[i] = x;
    *out = v;
    *n = cnt;
    return TC_OK;
}

int cli_exit(tc_status st, const tc_err *err)
{
    if (st == TC_OK)
        return 0;
    fprintf(stderr, "topocc: %s\n", err && err->msg[0] ? err->msg : "internal error");
    return st == TC_EINVAL ? 2 : 1;
}
