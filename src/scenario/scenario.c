/*
 * scenario.c - the scenario value: defaults, copies, resolution into
 * canonical form, and the networks it describes.
 *
 * Resolution is where a scenario is checked as a whole (a value against the
 * others: the endpoints of a job against the topology, a degraded link ID
 * against the links that exist) and put in the one form that is written
 * back, so that a scenario read from its own JSON resolves to itself.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "scenario/keys.h"
#include <jansson.h>
#include "topocc/compress.h"
#include "topocc/cost.h"
#include "topocc/profile.h"
#include "topocc/workload.h"
#include "topocc/zoo.h"

static const char *cmd_names[TC_CMD_COUNT] = {"topo",        "collective",     "compare",  "concurrent",
                                              "codec-bench", "train-accuracy", "compress", "failures",
                                              "cluster",     "train"};

const char *tc_command_name(tc_command c)
{
    return (unsigned)c < TC_CMD_COUNT ? cmd_names[c] : "?";
}

tc_status tc_command_parse(const char *s, tc_command *out, tc_err *err)
{
    for (int i = 0; i < TC_CMD_COUNT; i++)
        if (s && strcmp(s, cmd_names[i]) == 0) {
            *out = (tc_command)i;
            return TC_OK;
        }
    return tc_fail(err, TC_EINVAL,
                   "unknown command '%s': accepted are topo, collective, compare, concurrent, codec-bench, "
                   "train-accuracy, compress, failures, cluster, train",
                   s ? s : "");
}

/* The defaults of compress's own short training run (topocc train-accuracy
 * has the full options): 1000 steps on 2000 test images keep it near a
 * minute. */
static void compress_train_defaults(tc_train_opts *o)
{
    o->workers = 8;
    o->steps = 1000;
    o->eval_every = 50;
    o->test_subset = 2000;
}

tc_scenario *tc_scenario_new(tc_command c)
{
    if ((int)c < 0 || c >= TC_CMD_COUNT)
        return NULL;
    tc_scenario *s = tc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->command = c;
    snprintf(s->version, sizeof s->version, "%s", tc_version());
    snprintf(s->commit, sizeof s->commit, "%s", tc_commit());
    snprintf(s->routing, sizeof s->routing, "default");
    s->job.policy = TC_PLACE_FIRST;
    snprintf(s->algos[0], sizeof s->algos[0], "auto");
    s->nalgos = 1;
    snprintf(s->dtype, sizeof s->dtype, "float32");
    snprintf(s->redop, sizeof s->redop, "sum");
    s->mode = c == TC_CMD_CONCURRENT ? TC_MODE_FLOW : TC_MODE_FORMULA;
    s->deps = TC_DEPS_AUTO;
    s->eager_limit_bytes = TC_FLOW_DEFAULT_EAGER_LIMIT;
    s->event_budget = TC_FLOW_DEFAULT_EVENT_BUDGET;
    s->skip = true;
    s->trials = 100;
    s->synth_load = 0.9;
    s->dp = s->tp = s->pp = s->ep = s->micro_batches = s->micro_batch = s->vstages = 1;
    snprintf(s->par_order, sizeof s->par_order, "tp-dp-pp");
    snprintf(s->comm_order, sizeof s->comm_order, "backward");
    for (int k = 0; k < 3; k++)
        snprintf(s->it_algo[k], sizeof s->it_algo[k], "library");
    s->it_cosim = true;
    snprintf(s->sync, sizeof s->sync, "ddp");
    snprintf(s->outer_dtype, sizeof s->outer_dtype, "fp32");
    s->inner_steps = 100;
    s->overlap_steps = 1;
    snprintf(s->recompute, sizeof s->recompute, "none");
    snprintf(s->grad_dtype, sizeof s->grad_dtype, "bf16");
    snprintf(s->attention, sizeof s->attention, "flash");
    s->it_overlap = true;
    s->achievable = 0.7;
    s->s_c = 0.19;
    snprintf(s->scheduler, sizeof s->scheduler, "fifo");
    snprintf(s->cluster_format, sizeof s->cluster_format, "auto");
    snprintf(s->accel, sizeof s->accel, "h100");
    s->bucket_bytes = TC_DDP_BUCKET_BYTES;
    if (c == TC_CMD_COMPRESS)
        compress_train_defaults(&s->train);
    if (c == TC_CMD_TRAIN_ACCURACY) {
        static const char *dflt[] = {"fp32", "bf16", "int8", "topk:ratio=0.01", "powersgd:rank=4"};
        for (int i = 0; i < 5; i++)
            snprintf(s->codecs[i], sizeof s->codecs[i], "%s", dflt[i]);
        s->ncodecs = 5;
    }
    /* train.model and train.data_dir: chosen at resolution (resolve_proxy). */
    s->train.model = s->train_model;
    s->train.data_dir = s->data_dir;
    tc_train_defaults(&s->train);
    s->train.lr = 0.0; /* the proxy's, once it is known */
    s->bench_bytes = 25.0 * 1048576;
    s->bench_seconds = 0.5;
    s->bench_workers = 8;
    return s;
}

void tc_scn_clear_accuracy(tc_scenario *s)
{
    if (s->accuracy) {
        tc_acc_curves_free(s->accuracy, s->naccuracy);
        free(s->accuracy);
    }
    s->accuracy = NULL;
    s->naccuracy = 0;
    memset(&s->accuracy_opts, 0, sizeof s->accuracy_opts);
}

void tc_scn_clear_jobs(tc_scenario *s)
{
    for (size_t i = 0; i < s->njobs; i++)
        free(s->jobs[i].place.endpoints);
    free(s->jobs);
    s->jobs = NULL;
    s->njobs = 0;
}

void tc_scenario_free(tc_scenario *s)
{
    if (!s)
        return;
    free(s->sizes);
    free(s->profiles);
    free(s->model_json);
    free(s->job.endpoints);
    tc_scn_clear_jobs(s);
    tc_scn_clear_accuracy(s);
    free(s);
}

static void *dup_mem(const void *p, size_t n, bool *oom)
{
    if (!p || n == 0)
        return NULL;
    void *q = malloc(n);
    if (!q)
        *oom = true;
    else
        memcpy(q, p, n);
    return q;
}

tc_scenario *tc_scenario_clone(const tc_scenario *s)
{
    tc_scenario *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *s;
    bool oom = false;
    c->sizes = dup_mem(s->sizes, s->nsizes * sizeof *s->sizes, &oom);
    c->job.endpoints = dup_mem(s->job.endpoints, (size_t)s->job.nendpoints * sizeof(uint32_t), &oom);
    c->jobs = dup_mem(s->jobs, s->njobs * sizeof *s->jobs, &oom);
    for (size_t i = 0; c->jobs && i < s->njobs; i++)
        c->jobs[i].place.endpoints =
            dup_mem(s->jobs[i].place.endpoints, (size_t)s->jobs[i].place.nendpoints * sizeof(uint32_t), &oom);
    c->profiles = s->profiles ? dup_mem(s->profiles, strlen(s->profiles) + 1, &oom) : NULL;
    c->model_json = s->model_json ? dup_mem(s->model_json, strlen(s->model_json) + 1, &oom) : NULL;
    c->accuracy = dup_mem(s->accuracy, s->naccuracy * sizeof *s->accuracy, &oom);
    for (size_t i = 0; c->accuracy && i < s->naccuracy; i++)
        c->accuracy[i].pts = dup_mem(s->accuracy[i].pts, s->accuracy[i].n * sizeof *s->accuracy[i].pts, &oom);
    c->train.model = c->train_model;
    c->train.data_dir = c->data_dir;
    if (oom) {
        /* Free what was copied without touching the original's pointers. */
        if (!c->jobs)
            c->njobs = 0;
        if (!c->accuracy)
            c->naccuracy = 0;
        tc_scenario_free(c);
        return NULL;
    }
    return c;
}

/* ---- the networks ---- */

tc_status tc_net_build(const tc_scenario *s, tc_net *net, tc_err *err)
{
    memset(net, 0, sizeof *net);
    if (s->ntopo < 1)
        return tc_fail(err, TC_EINVAL, "no topology: give --topo SPEC (scenario key network.topo)");
    tc_status st = TC_OK;
    /* --equalize cost=C: the cost profile that prices every topology */
    tc_cost *cost = NULL;
    if (s->equalize_cost_usd > 0 && (st = tc_scenario_cost(s, &cost, err)) == TC_OK && !cost)
        st = tc_fail(err, TC_EINVAL, "--equalize cost= needs a cost profile: give --cost FILE|NAME (e.g. --cost "
                                     "cost-2026; scenario key network.cost_profile)");
    for (int i = 0; i < s->ntopo && st == TC_OK; i++) {
        tc_topo *t = NULL;
        if ((st = tc_topo_build(s->topo[i], &t, err)))
            break;
        net->topo[net->n++] = t;
        if (s->equalize_Bps > 0 && (st = tc_topo_equalize_injection(t, s->equalize_Bps, err)))
            break;
        if (cost) {
            char what[160];
            double gbps = 0;
            snprintf(what, sizeof what, "--equalize cost: topology %.31s (%.80s%s)",
                     i < s->nnames ? s->names[i] : (char[2]){(char)('A' + i), 0}, s->topo[i],
                     strlen(s->topo[i]) > 80 ? "..." : "");
            if ((st = tc_cost_equal_speed(t, cost, s->equalize_cost_usd, what, &gbps, err)) ||
                (st = tc_cost_set_fabric_speed(t, gbps, err)))
                break;
        }
        for (int k = 0; k < s->ndegrade && st == TC_OK; k++) {
            const tc_scn_degrade *d = &s->degrade[k];
            if (d->link >= t->n_links)
                st = tc_fail(err, TC_EINVAL, "--degrade link:%u=%g: link %u does not exist in %s (links are 0 to %u; "
                                             "see topocc topo SPEC --links)",
                             d->link, d->factor, d->link, s->topo[i], t->n_links - 1);
            else
                st = tc_topo_degrade_link(t, d->link, d->factor, err);
        }
        for (int k = 0; k < s->nfail && st == TC_OK; k++)
            if ((st = tc_topo_fail_item(t, &s->fail[k], err))) {
                char m[TC_ERR_LEN];
                snprintf(m, sizeof m, "%s", err->msg);
                st = tc_fail(err, st, "%s: %s", s->topo[i], m);
            }
        /* failures draws its own, trial by trial */
        if (st == TC_OK && s->fail_random[0] && s->command != TC_CMD_FAILURES) {
            tc_fail_random r;
            if ((st = tc_fail_random_parse(s->fail_random, &r, err)) == TC_OK &&
                (st = tc_topo_fail_random(t, &r, 0, &net->drawn[i], err))) {
                char m[TC_ERR_LEN];
                snprintf(m, sizeof m, "%s", err->msg);
                st = tc_fail(err, st, "%s: %s", s->topo[i], m);
            }
        }
        if (st == TC_OK) {
            uint32_t *cab = malloc(((size_t)t->n_links / 2 + 1) * sizeof *cab);
            if (!cab) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
            } else {
                net->fabric_cables[i] = tc_topo_fabric_cables(t, false, false, cab);
                for (uint32_t c = 0; c < net->fabric_cables[i]; c++)
                    net->failed_cables[i] += tc_topo_link_failed(t, cab[c]) || tc_topo_link_failed(t, cab[c] + 1);
                free(cab);
            }
        }
        if (st == TC_OK && strcmp(s->routing, "default") != 0)
            st = tc_routing_parse(s->routing, t, &net->routing[i], err);
        if (i < s->nnames)
            snprintf(net->name[i], sizeof net->name[i], "%s", s->names[i]);
        else
            snprintf(net->name[i], sizeof net->name[i], "%c", 'A' + i);
    }
    tc_cost_free(cost);
    if (st)
        tc_net_free(net);
    return st;
}

void tc_net_free(tc_net *net)
{
    for (int i = 0; i < net->n; i++) {
        tc_topo_free(net->topo[i]);
        tc_fail_drawn_free(&net->drawn[i]);
    }
    memset(net, 0, sizeof *net);
}

void tc_scenario_eval_opts(const tc_scenario *s, const tc_net *net, int i, tc_eval_opts *o, tc_flow_opts *fo)
{
    memset(o, 0, sizeof *o);
    memset(fo, 0, sizeof *fo);
    o->mode = s->mode;
    o->routing = net && i < net->n ? net->routing[i] : TC_ROUTE_DEFAULT;
    fo->routing = o->routing;
    fo->multipath = s->multipath;
    fo->deps = s->deps;
    fo->eager_limit_bytes = s->eager_limit_bytes;
    fo->rate_cap_Bps = s->rate_cap_Bps;
    fo->event_budget = s->event_budget;
    fo->no_skip = !s->skip;
    fo->bounds = s->flow_bounds;
    fo->trace_path = s->trace[0] ? s->trace : NULL;
    o->flow = fo;
}

/* ---- resolution ---- */

/* "ring:chunks=8,root=2", "rhd:order=far" in the one order the parser
 * accepts it back (tc_algo_format). */
/* NCCL's environment, as NCCL reads it (docs/MODEL.md, "NCCL's choice"),
 * where the algorithm spec does not say: NCCL_PROTO (nccl only: the
 * protocols it may choose), NCCL_ALGO (nccl only: Ring and Tree are
 * modelled), NCCL_NVLS_ENABLE (nccl only), NCCL_MIN_NCHANNELS,
 * NCCL_MAX_NCHANNELS (and their legacy NRINGS names), NCCL_MIN_CTAS,
 * NCCL_MAX_CTAS, NCCL_PXN_DISABLE, NCCL_BUFFSIZE.
 * The values land in the spec, so the scenario records them. */
static tc_status nccl_env(tc_coll_req *req, tc_err *err)
{
    tc_status st = TC_OK;
    const char *v = getenv("NCCL_ALGO");
    if (v && *v && req->algo == TC_ALGO_NCCL && !req->algo_mask && (st = tc_nccl_algo_parse(v, &req->algo_mask, err)))
    {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err->msg);
        return tc_fail(err, st, "NCCL_ALGO=%s: %s", v, m);
    }
    /* NCCL_NVLS_ENABLE (src/transport/nvls.cc:231, 241 at v2.21.5-1;
     * default 2): 0 leaves NVLS and NVLSTree out of NCCL's choice
     * (comm->nvlsSupport = 0), written as nvls=0. */
    v = getenv("NCCL_NVLS_ENABLE");
    if (v && *v && req->algo == TC_ALGO_NCCL) {
        int64_t e;
        char *end;
        errno = 0;
        e = strtoll(v, &end, 10);
        if (end == v || *end || errno)
            return tc_fail(err, TC_EINVAL, "NCCL_NVLS_ENABLE=%s: expected an integer (0 turns NVLS off)", v);
        /* NCCL's nvlsSupport (nvls.cc:241): NVLS and NVLSTree have no
         * bandwidth; NCCL_ALGO's list and NCCL's enable rules stand */
        if (e == 0)
            req->nvls_off = true;
    }
    v = getenv("NCCL_PROTO");
    if (v && *v && req->algo == TC_ALGO_NCCL && !req->proto && !req->proto_mask &&
        (st = tc_proto_parse(v, true, &req->proto, &req->proto_mask, err)))
    {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err->msg);
        return tc_fail(err, st, "NCCL_PROTO=%s: %s", v, m);
    }
    /* Channel counts (src/graph/connect.cc at v2.21.5-1): NCCL_MIN_NCHANNELS
     * and NCCL_MAX_NCHANNELS (their legacy names NCCL_MIN_NRINGS and
     * NCCL_MAX_NRINGS where the new ones are unset, :320-347), and the
     * communicator's minCTAs and maxCTAs, which NCCL_MIN_CTAS and
     * NCCL_MAX_CTAS set (src/init.cc:1432, 1618-1626): kept apart, as NVLS
     * takes only the CTA bounds (src/transport/nvls.cc:259); the channels
     * combine them (coll/nccl.c). 0 for a minimum asks for nothing. NCCL
     * caps values above MAXCHANNELS (32) with a warning: refused here. */
    static const char *const names[] = {"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS",
                                        "NCCL_MAX_NRINGS",    "NCCL_MIN_CTAS",      "NCCL_MAX_CTAS"};
    uint32_t val[6] = {0};
    for (int k = 0; k < 6; k++) {
        v = getenv(names[k]);
        if (!v || !*v)
            continue;
        bool is_min = k % 2 == 0;
        if (!(is_min && strcmp(v, "0") == 0) && (tc_parse_u32(v, &val[k], NULL) != TC_OK || val[k] > 32))
            return tc_fail(err, TC_EINVAL, "%s=%s: expected %s to 32 (NCCL caps a larger value at its 32 channels, "
                           "MAXCHANNELS, with a warning)", names[k], v, is_min ? "0" : "1");
    }
    uint32_t *dst[] = {&req->min_channels, &req->max_channels, &req->min_ctas, &req->max_ctas};
    uint32_t got[] = {getenv(names[0]) && *getenv(names[0]) ? val[0] : val[2],
                      getenv(names[1]) && *getenv(names[1]) ? val[1] : val[3], val[4], val[5]};
    for (int k = 0; k < 4; k++)
        if (!*dst[k] && got[k])
            *dst[k] = got[k];
    /* NCCL_PXN_DISABLE (src/graph/paths.cc:495 at v2.21.5-1): 1 turns PXN off */
    v = getenv("NCCL_PXN_DISABLE");
    if (v && *v && !req->pxn && (req->algo == TC_ALGO_NCCL_A2A || req->algo == TC_ALGO_NCCL)) {
        if (strcmp(v, "0") && strcmp(v, "1"))
            return tc_fail(err, TC_EINVAL, "NCCL_PXN_DISABLE=%s: expected 0 or 1", v);
        req->pxn = v[0] == '1' ? 2 : 1;
    }
    v = getenv("NCCL_BUFFSIZE");
    if (v && *v && !req->buffsize) {
        char *end;
        double b = strtod(v, &end);
        if (*end || !(b >= 65536) || b > 1073741824.0)
            return tc_fail(err, TC_EINVAL, "NCCL_BUFFSIZE=%s: expected bytes from 65536 to 1073741824", v);
        req->buffsize = b;
    }
    return TC_OK;
}

/* MPICH's MPIR_CVAR_ALLTOALL_THROTTLE (src/mpi/coll/cvars.txt, v5.0.1),
 * where the scattered spec does not give throttle=: 0 posts every message
 * at once. The value lands in the spec, so the scenario records it. */
static tc_status mpich_env(tc_coll_req *req, tc_err *err)
{
    const char *v = getenv("MPIR_CVAR_ALLTOALL_THROTTLE");
    if (!v || !*v || req->throttle)
        return TC_OK;
    uint32_t k;
    if (strcmp(v, "0") == 0)
        k = TC_THROTTLE_ALL;
    else if (tc_parse_u32(v, &k, NULL) != TC_OK || k > 1048576)
        return tc_fail(err, TC_EINVAL, "MPIR_CVAR_ALLTOALL_THROTTLE=%s: expected 0 (all at once) or 1 to 1048576", v);
    req->throttle = k;
    return TC_OK;
}

static tc_status canonical_algo(char *a, size_t len, tc_err *err)
{
    if (strcmp(a, "all") == 0)
        return TC_OK;
    tc_coll_req req;
    memset(&req, 0, sizeof req);
    tc_status st = tc_algo_parse(a, &req, err);
    if (st == TC_OK && tc_algo_is_nccl(req.algo))
        st = nccl_env(&req, err);
    if (st == TC_OK && (req.algo == TC_ALGO_SCATTERED || req.algo == TC_ALGO_MPICH))
        st = mpich_env(&req, err);
    if (st)
        return st;
    char buf[512];
    tc_algo_format(&req, buf, sizeof buf);
    if (strlen(buf) >= len || strlen(buf) >= sizeof buf - 1)
        return tc_fail(err, TC_EINVAL, "algorithm '%s' is too long written out ('%.60s...', at most %zu characters)", a,
                       buf, len - 1);
    memcpy(a, buf, strlen(buf) + 1);
    return TC_OK;
}

static tc_status canonical_codec(char *c, size_t len, tc_err *err)
{
    tc_codec_spec sp;
    tc_status st = tc_codec_parse(c, &sp, err);
    if (st == TC_OK)
        snprintf(c, len, "%s", sp.name);
    return st;
}

/* A per-codec value names a codec spec or a codec kind (all of that kind). */
static tc_status canonical_codec_or_kind(char *c, size_t len, const char *what, tc_err *err)
{
    for (int k = 0; k < TC_CODEC_COUNT; k++)
        if (strcmp(c, tc_codec_kind_name((tc_codec_kind)k)) == 0 && strchr(c, ':') == NULL) {
            /* A bare kind that is also a full spec ("topk") stays a kind. */
            return TC_OK;
        }
    tc_err e2;
    if (canonical_codec(c, len, &e2))
        return tc_fail(err, TC_EINVAL, "%s '%s': %s", what, c, e2.msg);
    return TC_OK;
}

/* Keeps profile p by content in s->profiles (network.profiles), under its
 * name, replacing one of that name. */
static tc_status embed_profile(tc_scenario *s, const tc_profile *p, tc_err *err)
{
    unsigned long mark = tc_oom_mark();
    json_t *all = s->profiles ? json_loads(s->profiles, 0, NULL) : json_object();
    if (!all)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = TC_OK;
    json_t *c = json_loads(tc_profile_json(p), 0, NULL);
    if (tc_oom_since(mark)) { /* a profile parsed with a character left out is another */
        json_decref(c);
        c = NULL;
    }
    if (!c || json_object_set_new(all, tc_profile_name(p), c))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    char *txt = st == TC_OK ? tc_json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (st == TC_OK && !txt)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK) {
        free(s->profiles);
        s->profiles = txt;
    }
    json_decref(all);
    return st;
}

/* Where preset i goes: before network.topo's topology at[i] (ntopo:
 * after all of them). The positions the CLI recorded (the command line's
 * order of --topo and --preset) where they are whole and in order; else
 * every preset after network.topo's. */
static void preset_positions(const tc_scenario *s, int *at)
{
    bool ok = s->npreset_at == s->npreset;
    for (int i = 0; ok && i < s->npreset; i++)
        ok = s->preset_at[i] >= (i ? s->preset_at[i - 1] : 0) && s->preset_at[i] <= s->ntopo;
    for (int i = 0; i < s->npreset; i++)
        at[i] = ok ? s->preset_at[i] : s->ntopo;
}

/* Preset NAME[:nodes=N]'s profile: read again from the files when a
 * --profiles flag is given and the file is there (true). */
static bool preset_file(const tc_scenario *s, const char *preset)
{
    char name[64];
    size_t nl = strcspn(preset, ":");
    if (nl == 0 || nl >= sizeof name)
        return false;
    snprintf(name, sizeof name, "%.*s", (int)nl, preset);
    return tc_profile_exists(name, s->profiles_dir[0] ? s->profiles_dir : NULL);
}

/* Presets become topologies after network.topo's (or where preset_at puts
 * them); the profiles they read are kept by content in s->profiles, and
 * the presets are cleared (a resolved scenario has its topologies as
 * specs: resolving is idempotent), each topology's preset recorded in
 * network.topo_preset. With a --profiles flag, the topologies recorded
 * there are expanded again from their profiles' files (as a --preset flag
 * would read them); a profile found in no directory stays the
 * scenario's. */
static tc_status resolve_presets(tc_scenario *s, tc_err *err)
{
    if (s->ntopo_preset && s->ntopo_preset != s->ntopo)
        return tc_fail(err, TC_EINVAL, "network.topo_preset: %d entries for the %d topologies of network.topo: give "
                                       "one per topology (its preset, or null for a spec)",
                       s->ntopo_preset, s->ntopo);
    if (!s->ntopo_preset)
        for (int i = 0; i < s->ntopo; i++)
            s->topo_preset[i][0] = '\0';
    tc_status st = TC_OK;
    bool fresh = tc_keyset_has(&s->flag_mask, tc_scn_key_index("network.profiles_dir"));
    for (int i = 0; fresh && i < s->ntopo_preset && st == TC_OK; i++) {
        if (!s->topo_preset[i][0] || !preset_file(s, s->topo_preset[i]))
            continue;
        tc_profile *p = NULL;
        st = tc_preset_expand(s->topo_preset[i], s->profiles_dir[0] ? s->profiles_dir : NULL, s->topo[i],
                              sizeof s->topo[0], &p, err);
        if (st == TC_OK)
            st = embed_profile(s, p, err);
        tc_profile_free(p);
    }
    if (st || s->npreset == 0)
        return st;
    if (s->ntopo + s->npreset > TC_SCN_MAX_TOPOS)
        return tc_fail(err, TC_EINVAL, "%d topologies and %d presets: at most %d in all", s->ntopo, s->npreset,
                       TC_SCN_MAX_TOPOS);
    int at[TC_SCN_MAX_TOPOS];
    preset_positions(s, at);
    /* the presets' specs, expanded after network.topo's, then merged */
    int base = s->ntopo;
    /* train's and compress's accelerator, where not given: the preset's
     * chip (its profile's accelerator field) */
    bool accel = (s->command == TC_CMD_TRAIN || s->command == TC_CMD_COMPRESS) &&
                 !tc_keyset_has(&s->given_mask, tc_scn_key_index("compress.accel")) &&
                 !tc_keyset_has(&s->given_mask, tc_scn_key_index("iteration.accel"));
    for (int i = 0; i < s->npreset && st == TC_OK; i++) {
        tc_profile *p = NULL;
        st = tc_preset_expand(s->preset[i], s->profiles_dir[0] ? s->profiles_dir : NULL, s->topo[base + i],
                              sizeof s->topo[0], &p, err);
        if (st)
            break;
        const char *chip;
        tc_err e2;
        if (accel && i == 0 && tc_profile_str(p, "accelerator", &chip, &e2) == TC_OK)
            snprintf(s->accel, sizeof s->accel, "%s", chip);
        st = embed_profile(s, p, err);
        tc_profile_free(p);
    }
    if (st)
        return st;
    char merged[TC_SCN_MAX_TOPOS][sizeof s->topo[0]];
    char from[TC_SCN_MAX_TOPOS][sizeof s->topo_preset[0]];
    int n = 0, pi = 0;
    for (int t = 0; t <= base; t++) {
        for (; pi < s->npreset && at[pi] == t; pi++) {
            memcpy(from[n], s->preset[pi], sizeof from[0]);
            memcpy(merged[n++], s->topo[base + pi], sizeof merged[0]);
        }
        if (t < base) {
            memcpy(from[n], s->topo_preset[t], sizeof from[0]);
            memcpy(merged[n++], s->topo[t], sizeof merged[0]);
        }
    }
    memcpy(s->topo, merged, (size_t)n * sizeof merged[0]);
    memcpy(s->topo_preset, from, (size_t)n * sizeof from[0]);
    s->ntopo = s->ntopo_preset = n;
    s->npreset = 0;
    s->npreset_at = 0;
    tc_keyset_del(&s->given_mask, tc_scn_key_index("network.preset"));
    tc_keyset_del(&s->flag_mask, tc_scn_key_index("network.preset"));
    return st;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The accelerator profiles known to s: those embedded in network.profiles
 * and those found in network.profiles_dir and on the default path, sorted,
 * comma-separated. */
static void accel_names(const tc_scenario *s, char *buf, size_t len)
{
    char path[2048];
    tc_accel_names_in(s->profiles_dir[0] ? s->profiles_dir : NULL, path, sizeof path);
    const char *names[256];
    size_t n = 0;
    if (strcmp(path, "(none found)") != 0)
        for (char *save = NULL, *nm = strtok_r(path, ", ", &save); nm && n < 256; nm = strtok_r(NULL, ", ", &save))
            names[n++] = nm;
    json_t *all = s->profiles ? json_loads(s->profiles, 0, NULL) : NULL;
    const char *k;
    json_t *c;
    if (all) {
        json_object_foreach(all, k, c) {
            const char *kind = json_string_value(json_object_get(c, "kind"));
            bool dup = !kind || strcmp(kind, "accelerator") != 0;
            for (size_t i = 0; i < n && !dup; i++)
                dup = strcmp(names[i], k) == 0;
            if (!dup && n < 256)
                names[n++] = k;
        }
    }
    qsort(names, n, sizeof *names, cmp_name);
    size_t at = 0;
    if (len)
        snprintf(buf, len, "%s", n ? "" : "none (no accelerator profile found)");
    for (size_t i = 0; i < n && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", names[i]);
        at += w > 0 ? (size_t)w : 0;
    }
    json_decref(all);
}

/* The accelerator profile of compress.accel: the one embedded in
 * network.profiles under its name, else network.profiles_dir's, else the
 * default path's; fresh (a flag gave --accel or --profiles, as a --preset
 * flag reads its file): the files first, then the embedded one. *prof
 * receives the profile (the caller frees it). */
static tc_status scn_accel_profile(const tc_scenario *s, bool fresh, tc_profile **prof, tc_err *err)
{
    *prof = NULL;
    const char *name = s->accel[0] ? s->accel : "h100";
    const char *pn = tc_accel_profile_name(name);
    const char *dir = s->profiles_dir[0] ? s->profiles_dir : NULL;
    unsigned long mark = tc_oom_mark();
    json_t *all = s->profiles ? json_loads(s->profiles, 0, NULL) : NULL;
    if (tc_oom_since(mark)) {
        json_decref(all);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    json_t *c = all ? json_object_get(all, pn) : NULL;
    bool file = tc_profile_exists(pn, dir);
    tc_status st;
    if (c && !(fresh && file)) {
        char origin[128];
        snprintf(origin, sizeof origin, "scenario network.profiles.%.64s", pn);
        char *txt = tc_json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
        st = txt ? tc_profile_from_json(pn, txt, origin, prof, err) : tc_fail(err, TC_EINTERNAL, "out of memory");
        free(txt);
    } else if (file) {
        st = tc_accel_profile_load(name, dir, prof, err);
    } else {
        char known[1024];
        accel_names(s, known, sizeof known);
        st = tc_fail(err, TC_EINVAL, "unknown accelerator '%s': accepted are %s (tpu: tpu-v5p)", name, known);
    }
    json_decref(all);
    return st;
}

tc_status tc_scenario_accel(const tc_scenario *s, tc_accel *out, char *namebuf, size_t len, tc_err *err)
{
    tc_profile *p = NULL;
    tc_status st = scn_accel_profile(s, false, &p, err);
    if (st == TC_OK)
        st = tc_accel_from_profile(p, out, namebuf, len, err);
    tc_profile_free(p);
    return st;
}

/* compress's accelerator: found (read again from the files when --accel
 * or --profiles is given as a flag, as a --preset flag is), checked, and
 * kept by content in network.profiles beside the presets' profiles. */
static tc_status resolve_accel(tc_scenario *s, tc_err *err)
{
    bool flagged = tc_keyset_has(&s->flag_mask, tc_scn_key_index("compress.accel")) ||
                   tc_keyset_has(&s->flag_mask, tc_scn_key_index("iteration.accel")) ||
                   tc_keyset_has(&s->flag_mask, tc_scn_key_index("network.profiles_dir"));
    tc_profile *p = NULL;
    tc_accel a;
    char name[64];
    tc_status st = scn_accel_profile(s, flagged, &p, err);
    if (st == TC_OK)
        st = tc_accel_from_profile(p, &a, name, sizeof name, err);
    if (st == TC_OK)
        st = embed_profile(s, p, err);
    tc_profile_free(p);
    return st;
}

/* The cost profile of network.cost_profile: the one embedded in
 * network.profiles under its name, else the file (a path) or the name on
 * the search path; fresh (a flag gave --cost or --profiles, as a --preset
 * flag reads its file): the file first, then the embedded one. */
static tc_status scn_cost_profile(const tc_scenario *s, bool fresh, tc_profile **prof, tc_err *err)
{
    *prof = NULL;
    const char *nm = s->cost_profile, *dir = s->profiles_dir[0] ? s->profiles_dir : NULL;
    bool path = tc_cost_is_path(nm);
    char key[64];
    const char *base = path && strrchr(nm, '/') ? strrchr(nm, '/') + 1 : nm;
    size_t bl = strlen(base);
    if (path && bl > 5 && strcmp(base + bl - 5, ".json") == 0)
        bl -= 5;
    snprintf(key, sizeof key, "%.*s", (int)(bl < sizeof key ? bl : sizeof key - 1), base);
    unsigned long mark = tc_oom_mark();
    json_t *all = s->profiles ? json_loads(s->profiles, 0, NULL) : NULL;
    if (tc_oom_since(mark)) {
        json_decref(all);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    json_t *c = all ? json_object_get(all, key) : NULL;
    FILE *fp = path ? fopen(nm, "rb") : NULL;
    bool file = path ? fp != NULL : tc_profile_exists(nm, dir);
    if (fp)
        fclose(fp);
    tc_status st;
    if (c && !(fresh && file)) {
        char origin[128];
        snprintf(origin, sizeof origin, "scenario network.profiles.%.64s", key);
        char *txt = tc_json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
        st = txt ? tc_profile_from_json(key, txt, origin, prof, err) : tc_fail(err, TC_EINTERNAL, "out of memory");
        free(txt);
    } else if (path) {
        st = tc_cost_read_file(nm, prof, err);
    } else if (file) {
        st = tc_profile_load(nm, dir, prof, err);
    } else {
        char known[1024];
        tc_profile_list_kind(dir, "cost", known, sizeof known);
        st = tc_fail(err, TC_EINVAL, "unknown cost profile '%s': accepted are %s (profiles of kind cost found on the "
                                     "profile path), or a file NAME.json",
                     nm, known);
    }
    json_decref(all);
    return st;
}

tc_status tc_scenario_cost(const tc_scenario *s, tc_cost **out, tc_err *err)
{
    *out = NULL;
    if (!s->cost_profile[0])
        return TC_OK;
    tc_profile *p = NULL;
    tc_status st = scn_cost_profile(s, false, &p, err);
    if (st == TC_OK)
        st = tc_cost_from_profile(p, out, err);
    tc_profile_free(p);
    return st;
}

/* network.cost_profile: found (read again when --cost or --profiles is a
 * flag), checked, kept by content in network.profiles and named by its
 * profile's name. */
static tc_status resolve_cost(tc_scenario *s, tc_err *err)
{
    if (!s->cost_profile[0])
        return s->equalize_cost_usd > 0
                   ? tc_fail(err, TC_EINVAL, "--equalize cost= needs a cost profile: give --cost FILE|NAME (e.g. "
                                             "--cost cost-2026; scenario key network.cost_profile)")
                   : TC_OK;
    if (s->equalize_cost_usd > 0 && s->equalize_Bps > 0)
        return tc_fail(err, TC_EINVAL, "network.equalize_injection_Bps and network.equalize_cost_usd are "
                                       "alternatives: give one --equalize, injection=RATE or cost=C");
    bool fresh = tc_keyset_has(&s->flag_mask, tc_scn_key_index("network.cost_profile")) ||
                 tc_keyset_has(&s->flag_mask, tc_scn_key_index("network.profiles_dir"));
    tc_profile *p = NULL;
    tc_cost *c = NULL;
    tc_status st = scn_cost_profile(s, fresh, &p, err);
    if (st == TC_OK)
        st = tc_cost_from_profile(p, &c, err);
    if (st == TC_OK)
        st = embed_profile(s, p, err);
    if (st == TC_OK)
        snprintf(s->cost_profile, sizeof s->cost_profile, "%s", tc_profile_name(p));
    tc_cost_free(c);
    tc_profile_free(p);
    return st;
}

/* Every topology's bill of materials prices (each link speed within the
 * cost profile's, every switch within its largest). */
static tc_status check_costs(const tc_scenario *s, const tc_net *net, tc_err *err)
{
    if (!s->cost_profile[0])
        return TC_OK;
    tc_cost *c = NULL;
    tc_status st = tc_scenario_cost(s, &c, err);
    tc_bom *b = st == TC_OK ? malloc(sizeof *b) : NULL;
    if (st == TC_OK && !b)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    for (int i = 0; st == TC_OK && i < net->n; i++)
        if ((st = tc_bom_build(net->topo[i], c, b, err))) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            tc_fail(err, st, "--cost: topology %s: %s", net->name[i], m);
        }
    free(b);
    tc_cost_free(c);
    return st;
}

static tc_status resolve_topologies(tc_scenario *s, tc_err *err)
{
    if (s->command == TC_CMD_CODEC_BENCH || s->command == TC_CMD_TRAIN_ACCURACY)
        return TC_OK;
    tc_status pst = resolve_presets(s, err);
    if (pst == TC_OK)
        pst = resolve_cost(s, err);
    if (pst)
        return pst;
    if (s->ntopo < 1)
        return tc_fail(err, TC_EINVAL, "%s needs a topology: --topo SPEC or --preset NAME (scenario key network.topo)",
                       tc_command_name(s->command));
    bool several = s->command == TC_CMD_COMPARE || s->command == TC_CMD_FAILURES || s->command == TC_CMD_CLUSTER;
    if (!several && s->ntopo > 1)
        return tc_fail(err, TC_EINVAL, "%s takes one topology, %d given (compare, failures and cluster take several)",
                       tc_command_name(s->command), s->ntopo);
    for (int i = 0; i < s->ntopo; i++) {
        tc_topo *t = NULL;
        tc_status st = tc_topo_build(s->topo[i], &t, err);
        if (st)
            return st;
        snprintf(s->topo[i], sizeof s->topo[i], "%s", t->spec);
        tc_topo_free(t);
    }
    if (several && s->nnames && s->nnames != s->ntopo)
        return tc_fail(err, TC_EINVAL, "--names lists %d names for %d topologies", s->nnames, s->ntopo);
    if (several && !s->nnames) {
        for (int i = 0; i < s->ntopo; i++)
            snprintf(s->names[i], sizeof s->names[i], "%c", 'A' + i);
        s->nnames = s->ntopo;
    }
    for (int i = 0; i < s->nnames; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(s->names[i], s->names[j]) == 0)
                return tc_fail(err, TC_EINVAL, "--names lists '%s' twice: each topology needs its own name",
                               s->names[i]);
    /* Everything that needs the built networks: equalize, degraded link
     * IDs, routing, the job's endpoints on every topology. */
    tc_net net;
    tc_status st = tc_net_build(s, &net, err);
    if (st)
        return st;
    if ((st = check_costs(s, &net, err))) {
        tc_net_free(&net);
        return st;
    }
    bool job = s->command == TC_CMD_COLLECTIVE || s->command == TC_CMD_COMPARE || s->command == TC_CMD_COMPRESS ||
               s->command == TC_CMD_FAILURES;
    for (int i = 0; job && i < net.n && st == TC_OK; i++) {
        uint32_t *map = NULL, p = 0;
        if ((st = tc_place_map(net.topo[i], &s->job, &map, &p, err)) && net.n > 1) {
            char msg[TC_ERR_LEN];
            snprintf(msg, sizeof msg, "%s", err->msg);
            tc_fail(err, st, "on %s: %s", net.name[i], msg);
        }
        free(map);
    }
    for (size_t j = 0; s->command == TC_CMD_CONCURRENT && j < s->njobs && st == TC_OK; j++) {
        uint32_t *map = NULL, p = 0;
        if ((st = tc_place_map(net.topo[0], &s->jobs[j].place, &map, &p, err))) {
            char msg[TC_ERR_LEN];
            snprintf(msg, sizeof msg, "%s", err->msg);
            tc_fail(err, st, "concurrent.jobs[%zu] (%s): %s", j, s->jobs[j].name, msg);
        }
        free(map);
    }
    tc_net_free(&net);
    return st;
}

static tc_status resolve_collective(tc_scenario *s, tc_err *err)
{
    /* failures times one operation at one size (tc_run_failures): refused
     * here, so that no resolved scenario is one it cannot write and read. */
    if (s->command == TC_CMD_FAILURES && (s->nops != 1 || s->nsizes != 1))
        return tc_fail(err, TC_EINVAL, "failures needs one operation (--op) and one size (--size): %d and %zu given",
                       s->nops, s->nsizes);
    for (int i = 0; (s->command == TC_CMD_COLLECTIVE || s->command == TC_CMD_COMPARE || s->command == TC_CMD_FAILURES) &&
                    i < s->nalgos;
         i++) {
        tc_coll_req q;
        memset(&q, 0, sizeof q);
        tc_status st;
        if (strcmp(s->algos[i], "all") && tc_algo_parse(s->algos[i], &q, err) == TC_OK &&
            (st = tc_algo_check_options(&q, s->algos[i], s->ops, s->nops, err)))
            return st;
    }
    if (s->command != TC_CMD_COLLECTIVE && s->command != TC_CMD_COMPARE)
        return TC_OK;
    if (s->nops < 1)
        return tc_fail(err, TC_EINVAL, "%s needs an operation: --op OP (allreduce, reducescatter, allgather, "
                                       "alltoall, broadcast, reduce)",
                       tc_command_name(s->command));
    if (s->command == TC_CMD_COLLECTIVE && s->nops > 1)
        return tc_fail(err, TC_EINVAL, "collective times one operation, %d given (compare takes several)", s->nops);
    if (s->nsizes < 1)
        return tc_fail(err, TC_EINVAL, "%s needs a size: %s", tc_command_name(s->command),
                       s->command == TC_CMD_COMPARE ? "--sizes MIN:MAX[:FACTOR] (one size: --sizes 1MiB)"
                                                    : "--size BYTES or --sizes MIN:MAX[:FACTOR]");
    if (s->command == TC_CMD_COMPARE && (s->nalgos != 1 || strcmp(s->algos[0], "all") == 0))
        return tc_fail(err, TC_EINVAL, "compare runs one algorithm per cell (auto by default); rank several with "
                                       "topocc collective --algo all");
    char given[TC_SCN_MAX_ALGOS][sizeof s->algos[0]];
    for (int i = 0; i < s->nalgos; i++) {
        memcpy(given[i], s->algos[i], sizeof given[i]);
        tc_status st = canonical_algo(s->algos[i], sizeof s->algos[i], err);
        if (st)
            return st;
        if (strcmp(s->algos[i], "all") == 0 && s->nalgos > 1)
            return tc_fail(err, TC_EINVAL, "--algo all ranks every valid algorithm: give it alone");
        /* the same algorithm twice, written out alike (set_algos refuses
         * one given twice as it is) */
        for (int j = 0; j < i; j++)
            if (strcmp(s->algos[j], s->algos[i]) == 0)
                return tc_fail(err, TC_EINVAL, "--algo (collective.algo): '%s' and '%s' are one algorithm, '%s', "
                                               "listed twice: give it once",
                               given[j], given[i], s->algos[i]);
    }
    return TC_OK;
}

/* cluster.trace made absolute: a relative path is joined to the working
 * directory (its leading "./" dropped), so that the scenario names the
 * file the run read wherever it is replayed from; an absolute one is kept
 * as given. The path is joined, not resolved: a link stays the link
 * named. */
static tc_status trace_absolute(tc_scenario *s, tc_err *err)
{
    const char *path = s->cluster_trace;
    if (path[0] == '/')
        return TC_OK;
    while (path[0] == '.' && path[1] == '/') {
        path += 2;
        while (path[0] == '/')
            path++;
    }
    char cwd[sizeof s->cluster_trace];
    if (!getcwd(cwd, sizeof cwd))
        return tc_fail(err, TC_EINVAL, "%.160s: the working directory, against which the trace's relative path is "
                                       "recorded, cannot be read: %s (give the trace's absolute path)",
                       s->cluster_trace, strerror(errno));
    char abs[sizeof s->cluster_trace];
    int n = path[0] ? snprintf(abs, sizeof abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path)
                    : snprintf(abs, sizeof abs, "%s", cwd);
    if (n < 0 || (size_t)n >= sizeof abs)
        return tc_fail(err, TC_EINVAL, "%.160s: the trace's path joined to the working directory is longer than "
                                       "the %zu bytes a scenario records: give a shorter path",
                       s->cluster_trace, sizeof abs - 1);
    snprintf(s->cluster_trace, sizeof s->cluster_trace, "%s", abs);
    return TC_OK;
}

/* cluster.trace_digest: the trace file's CRC-32 and size. A scenario
 * keeps the trace by path (it may be large); the digest makes a replay
 * refuse a file that changed since, instead of replaying other jobs. A
 * pipe cannot be read twice (resolving, then running), so the trace must
 * be a file. */
static tc_status trace_digest(tc_scenario *s, tc_err *err)
{
    const char *path = s->cluster_trace;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tc_fail(err, TC_EINVAL, "%.160s: cannot open the trace: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "%.160s: a directory: give a trace file", path);
    if (!S_ISREG(sb.st_mode))
        return tc_fail(err, TC_EINVAL, "%.160s: not a regular file (a pipe or a device): the trace is read twice and "
                                       "recorded by its digest; save it to a file first",
                       path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return tc_fail(err, TC_EINVAL, "%.160s: cannot open the trace: %s", path, strerror(errno));
    unsigned char buf[65536];
    uLong crc = crc32(0L, Z_NULL, 0);
    unsigned long long bytes = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        crc = crc32(crc, buf, (uInt)n);
        bytes += n;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad)
        return tc_fail(err, TC_EINVAL, "%.160s: cannot read the trace", path);
    char d[sizeof s->cluster_digest];
    snprintf(d, sizeof d, "crc32=%08lx,bytes=%llu", (unsigned long)crc, bytes);
    if (s->cluster_digest[0] && strcmp(s->cluster_digest, d) != 0)
        return tc_fail(err, TC_EINVAL, "%.160s: the trace is not the one the scenario recorded (%s; the file now has "
                                       "%s): replay it with the trace it ran, or drop cluster.trace_digest to run "
                                       "this one",
                       path, s->cluster_digest, d);
    snprintf(s->cluster_digest, sizeof s->cluster_digest, "%s", d);
    return TC_OK;
}

/* The model file's object in s->model_json under its path (NULL: none);
 * a new reference. */
static json_t *embedded_model(const tc_scenario *s)
{
    json_t *all = s->model_json ? json_loads(s->model_json, 0, NULL) : NULL;
    json_t *m = all ? json_object_get(all, s->it_model) : NULL;
    json_incref(m);
    json_decref(all);
    return m;
}

tc_status tc_scenario_model(const tc_scenario *s, tc_zoo_model *m, char *src, size_t len, tc_err *err)
{
    const tc_zoo_model *z = tc_zoo_find(s->it_model);
    if (z) {
        *m = *z;
        return TC_OK;
    }
    json_t *e = embedded_model(s);
    if (!e)
        return tc_zoo_load_json(s->it_model, m, src, len, err);
    char *txt = tc_json_dumps(e, JSON_COMPACT);
    json_decref(e);
    if (!txt)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    char origin[300];
    snprintf(origin, sizeof origin, "scenario iteration.model_json.%s", s->it_model);
    tc_status st = tc_zoo_parse_json(txt, origin, m, src, len, err);
    free(txt);
    return st;
}

/* A model file's content, embedded under its path where it is not yet: a
 * replay reads the model the run read, whatever became of the file. */
static tc_status embed_model(tc_scenario *s, tc_err *err)
{
    json_t *e = embedded_model(s);
    if (e) {
        json_decref(e);
        return TC_OK;
    }
    json_error_t je;
    unsigned long mark = tc_oom_mark();
    json_t *file = json_load_file(s->it_model, JSON_REJECT_DUPLICATES, &je);
    json_t *all = s->model_json ? json_loads(s->model_json, 0, NULL) : json_object();
    char *txt = NULL;
    if (file && all && json_object_set(all, s->it_model, file) == 0)
        txt = tc_json_dumps(all, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(file);
    json_decref(all);
    if (txt && tc_oom_since(mark)) /* read or built with an allocation failing: not whole */
        free(txt), txt = NULL;
    if (!txt && tc_oom_since(mark))
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if (!txt)
        return tc_fail(err, TC_EINTERNAL, "cannot embed the model file '%s'", s->it_model);
    free(s->model_json);
    s->model_json = txt;
    return TC_OK;
}

/* train: the model is known (a zoo name or a readable model file), the
 * accelerator resolves as compress's does, the degrees multiply to the
 * job. */
static tc_status resolve_train(tc_scenario *s, tc_err *err)
{
    if (!s->it_model[0])
        return tc_fail(err, TC_EINVAL, "train needs --model MODEL (e.g. llama3-70b; a model JSON file)");
    tc_zoo_model m;
    char src[256];
    if (!tc_zoo_find(s->it_model)) {
        size_t n = strlen(s->it_model);
        if (n < 5 || strcmp(s->it_model + n - 5, ".json") != 0) {
            char names[512] = "";
            for (size_t i = 0; i < tc_zoo_count(); i++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", tc_zoo_get(i)->name);
            }
            return tc_fail(err, TC_EINVAL, "unknown model '%s': accepted are %s, or a model JSON file", s->it_model,
                           names);
        }
        tc_status st = tc_scenario_model(s, &m, src, sizeof src, err);
        if (st == TC_OK)
            st = embed_model(s, err);
        if (st)
            return st;
    }
    if (strcmp(s->recompute, "none") && strcmp(s->recompute, "selective") && strcmp(s->recompute, "full"))
        return tc_fail(err, TC_EINVAL, "iteration.recompute '%s': accepted are none, selective, full", s->recompute);
    return resolve_accel(s, err);
}

/* The proxy compress trains by default: that of the modelled model's
 * family (a CNN of the zoo: vision; a transformer: language); a custom
 * model has no architecture, so the first proxy, the mlp. */
const char *tc_scn_default_proxy(const tc_scenario *s)
{
    char name[64] = "";
    size_t n = strcspn(s->model, ":");
    if (n < sizeof name) {
        memcpy(name, s->model, n);
        name[n] = '\0';
    }
    const tc_zoo_model *z = s->command == TC_CMD_COMPRESS ? tc_zoo_find(name) : NULL;
    const char *p = z ? tc_train_proxy_of_family(z->arch == TC_MODEL_CNN ? "vision" : "language") : NULL;
    return p ? p : "mlp";
}

/* train.model (default: tc_scn_default_proxy) and its data directory
 * (default: where its package installs it); the learning rate left 0 by
 * tc_scenario_new becomes the proxy's in tc_train_defaults. */
static tc_status resolve_proxy(tc_scenario *s, tc_err *err)
{
    if (!s->train_model[0])
        snprintf(s->train_model, sizeof s->train_model, "%s", tc_scn_default_proxy(s));
    tc_proxy_info pi;
    if (!tc_train_proxy(s->train_model, &pi)) {
        char names[128];
        tc_train_proxy_names(names, sizeof names);
        return tc_fail(err, TC_EINVAL, "unknown proxy model '%s': accepted are %s", s->train_model, names);
    }
    if (!s->data_dir[0])
        snprintf(s->data_dir, sizeof s->data_dir, "%s", pi.dir);
    return TC_OK;
}

static tc_status resolve_codecs(tc_scenario *s, tc_err *err)
{
    tc_status st;
    /* codec-bench without codecs measures every one: say which. */
    if (s->command == TC_CMD_CODEC_BENCH && s->ncodecs == 0)
        for (int k = 0; k < TC_CODEC_COUNT && k < TC_SCN_MAX_CODECS; k++) {
            tc_codec_spec c;
            tc_codec_defaults((tc_codec_kind)k, &c);
            snprintf(s->codecs[s->ncodecs++], sizeof s->codecs[0], "%s", c.name);
        }
    for (int i = 0; i < s->ncodecs; i++)
        if ((st = canonical_codec(s->codecs[i], sizeof s->codecs[i], err)))
            return st;
    if (s->command != TC_CMD_COMPRESS)
        return TC_OK;
    if (s->ncodecs < 1)
        return tc_fail(err, TC_EINVAL, "compress needs at least one --codec C (e.g. --codec topk:ratio=0.01)");
    if (s->naccuracy && s->nsteps_ratio)
        return tc_fail(err, TC_EINVAL, "--accuracy and --steps-ratio are alternatives: give one");
    if (s->target_acc > 0 && s->nsteps_ratio)
        return tc_fail(err, TC_EINVAL, "--target-acc applies to measured accuracy (--accuracy or training), not to "
                                       "--steps-ratio");
    for (int i = 0; i < s->nsteps_ratio; i++)
        if ((st = canonical_codec_or_kind(s->steps_ratio[i].codec, sizeof s->steps_ratio[i].codec, "--steps-ratio",
                                          err)))
            return st;
    for (int i = 0; i < s->nthroughput; i++)
        if ((st = canonical_codec_or_kind(s->throughput[i].codec, sizeof s->throughput[i].codec,
                                          "--codec-throughput", err)))
            return st;
    tc_model m;
    if ((st = tc_model_parse(s->model, &m, err)))
        return st;
    return resolve_accel(s, err);
}

/* The routing. "default" stays in the scenario: each evaluation takes the
 * mode's own (D-mod-k on a Clos in formula mode, whose closed forms are
 * exact for it; ECMP in steps and flow, whose hash collisions need the
 * evaluators that route every flow; dimension order on a torus, detour
 * with failures), and each result records the routing modelled. So a
 * scenario whose mode changes later (a sweep's eval.mode axis, --mode on
 * a saved scenario) routes as that mode does, not as the mode it was
 * first resolved in. A routing given is kept as given. */
static tc_status resolve_routing(tc_scenario *s, tc_err *err)
{
    bool uses = s->command == TC_CMD_COLLECTIVE || s->command == TC_CMD_COMPARE || s->command == TC_CMD_CONCURRENT ||
                s->command == TC_CMD_COMPRESS || s->command == TC_CMD_TRAIN;
    if (uses && s->mode == TC_MODE_FORMULA && strcmp(s->routing, "ecmp") == 0)
        return tc_fail(err, TC_EINVAL, "--routing ecmp needs --mode steps or flow: formula models D-mod-k (dmodk), "
                                       "which has no hash collisions (give --routing default or dmodk)");
    return TC_OK;
}

/* The keys of s's command that do not apply to s take the value they have
 * where nothing sets them, so that what the scenario records (the keys
 * that apply: tc_scenario_to_json) is all that its run depends on: a value
 * a flag or a sweep's axis made moot (--pp 1 over a scenario with
 * iteration.virtual_stages, --sync ddp over one with sync.inner_steps) is
 * not run unrecorded. The values come from a fresh scenario of the
 * command, its proxy chosen as resolve_proxy chooses s's; the keys are
 * set through the table (not tc_scn_set_key: none becomes given), pass
 * after pass, since whether a key applies may depend on another's value. */
static tc_status reset_moot(tc_scenario *s, tc_err *err)
{
    tc_scenario *d = tc_scenario_new(s->command);
    if (!d)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    snprintf(d->model, sizeof d->model, "%s", s->model);
    tc_status st = resolve_proxy(d, err);
    d->train.model = d->train_model;
    d->train.data_dir = d->data_dir;
    tc_train_defaults(&d->train);
    unsigned bit = TC_CMD_BIT(s->command);
    for (size_t pass = 0; st == TC_OK; pass++) {
        bool changed = false;
        for (size_t i = 0; i < tc_scn_key_count() && st == TC_OK; i++) {
            const tc_scn_key *k = tc_scn_key_get(i);
            if (!(k->cmds & bit) || tc_scn_key_applies(k, s))
                continue;
            unsigned long mark = tc_oom_mark();
            json_t *dv = k->get(d), *sv = k->get(s);
            if (!dv || !sv || tc_oom_since(mark)) {
                st = tc_fail(err, TC_EINTERNAL, "out of memory");
            } else if (!json_equal(dv, sv)) {
                changed = true;
                if ((st = k->set(s, dv, k->path, err)) && st != TC_EINTERNAL) {
                    char m[TC_ERR_LEN];
                    snprintf(m, sizeof m, "%s", err->msg);
                    st = tc_fail(err, TC_EINTERNAL, "internal: %s, which does not apply, keeps no default: %s",
                                 k->path, m);
                }
            }
            json_decref(dv);
            json_decref(sv);
        }
        if (!changed)
            break;
        if (st == TC_OK && pass + 1 >= tc_scn_key_count())
            st = tc_fail(err, TC_EINTERNAL, "internal: the keys that do not apply do not settle to their defaults");
    }
    tc_scenario_free(d);
    return st;
}

tc_status tc_scenario_resolve(tc_scenario *s, tc_err *err)
{
    tc_status st;
    if (s->command == TC_CMD_CONCURRENT) {
        s->mode = TC_MODE_FLOW;
        if (s->njobs < 1)
            return tc_fail(err, TC_EINVAL, "concurrent needs jobs: --jobs FILE (scenario key concurrent.jobs)");
    }
    if (s->command == TC_CMD_COMPRESS && !s->model[0])
        return tc_fail(err, TC_EINVAL, "compress needs --model MODEL (e.g. resnet50)");
    if (s->command == TC_CMD_CLUSTER && !s->cluster_trace[0] == !s->synth_jobs)
        return tc_fail(err, TC_EINVAL, "cluster replays one trace: --trace FILE or --synthetic N,seed=S[,load=L] "
                                       "(scenario keys cluster.trace, cluster.synthetic), not %s",
                       s->cluster_trace[0] ? "both" : "neither");
    if (s->command == TC_CMD_CLUSTER && s->cluster_trace[0]) {
        tc_status st = trace_absolute(s, err);
        if (st == TC_OK)
            st = trace_digest(s, err);
        if (st)
            return st;
    }
    /* --endpoints implies the list placement, unless --place says otherwise
     * (then check_given refuses the pair). */
    if (tc_keyset_has(&s->given_mask, tc_scn_key_index("job.endpoints")) &&
        !tc_keyset_has(&s->given_mask, tc_scn_key_index("job.place")))
        s->job.policy = TC_PLACE_LIST;
    if (s->job.policy == TC_PLACE_LIST) {
        if (!s->job.nendpoints)
            return tc_fail(err, TC_EINVAL, "placement 'list' needs its endpoints: --endpoints 0-63,128");
        s->job.ranks = 0;
    }
    if (s->command == TC_CMD_TRAIN && (st = resolve_train(s, err)))
        return st;
    if ((st = resolve_topologies(s, err)) || (st = resolve_collective(s, err)) || (st = resolve_codecs(s, err)) ||
        (st = resolve_routing(s, err)) || (st = resolve_proxy(s, err)))
        return st;
    if (s->command == TC_CMD_COLLECTIVE && s->phases && (s->nsizes > 1 || s->nalgos > 1 ||
                                                          strcmp(s->algos[0], "all") == 0))
        return tc_fail(err, TC_EINVAL, "--phases details one evaluation: give one --size and one algorithm");
    if (s->command == TC_CMD_COLLECTIVE && s->trace[0] && (s->nsizes > 1 || s->nalgos > 1 ||
                                                           strcmp(s->algos[0], "all") == 0))
        return tc_fail(err, TC_EINVAL, "--trace records one simulation: give one --size and one algorithm");
    if ((st = reset_moot(s, err)))
        return st;
    /* the files a run writes (those that apply: reset_moot cleared the
     * others) are not directories and go in one that exists (or that the
     * caller makes: made_dir), refused here rather than when the run ends
     * and writes them */
    if ((s->trace[0] && (st = tc_check_out_path(s->trace, "--trace", s->made_dir, err))) ||
        (s->it_timeline[0] && (st = tc_check_out_path(s->it_timeline, "--timeline", s->made_dir, err))))
        return st;
    s->train.model = s->train_model;
    s->train.data_dir = s->data_dir;
    tc_train_defaults(&s->train);
    return TC_OK;
}

tc_status tc_scenario_check_run(const tc_scenario *s, tc_err *err)
{
    if (s->command == TC_CMD_TRAIN)
        return tc_scn_train_check(s, err);
    if (s->command == TC_CMD_COMPRESS)
        return tc_scn_compress_check(s, err);
    if (s->command == TC_CMD_CLUSTER)
        return tc_scn_cluster_check(s, err);
    if (s->command == TC_CMD_COLLECTIVE || s->command == TC_CMD_COMPARE)
        return tc_scn_collective_check(s, err);
    if (s->command == TC_CMD_FAILURES)
        return tc_scn_failures_check(s, err);
    if (s->command == TC_CMD_CONCURRENT)
        return tc_scn_concurrent_check(s, err);
    return TC_OK;
}

/* ---- seeds derived for one point of a sweep ---- */

void tc_scenario_derive_seeds(tc_scenario *s, uint64_t seed, const tc_keyset *keep)
{
    int kj = tc_scn_key_index("job.seed"), kt = tc_scn_key_index("train.seed"),
        kf = tc_scn_key_index("network.fail_random"), kc = tc_scn_key_index("cluster.synthetic");
    /* Every seed below is drawn from one stream of the point's seed, in a
     * fixed order, so adding a key later does not move the others. */
    uint64_t x = seed;
    uint64_t sj = tc_mix64(x += 0x9e3779b97f4a7c15ull) >> 33, st = tc_mix64(x += 0x9e3779b97f4a7c15ull) >> 33,
             sf = tc_mix64(x += 0x9e3779b97f4a7c15ull) >> 33, sc = tc_mix64(x += 0x9e3779b97f4a7c15ull) >> 33;
    if (!tc_keyset_has(keep, kj) && tc_scn_key_applies(tc_scn_key_get((size_t)kj), s))
        s->job.seed = sj;
    if (!tc_keyset_has(keep, kt) && tc_scn_key_applies(tc_scn_key_get((size_t)kt), s))
        s->train.seed = st + 1; /* train.seed is at least 1 */
    if (!tc_keyset_has(keep, kf) && s->fail_random[0]) {
        tc_fail_random r;
        tc_err e;
        if (tc_fail_random_parse(s->fail_random, &r, &e) == TC_OK) {
            r.seed = sf;
            tc_fail_random_format(&r, s->fail_random, sizeof s->fail_random);
        }
    }
    if (!tc_keyset_has(keep, kc) && s->command == TC_CMD_CLUSTER && s->synth_jobs)
        s->synth_seed = sc;
}
