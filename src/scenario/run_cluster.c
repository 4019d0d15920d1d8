/*
 * run_cluster.c - topocc cluster: one job trace (read from a file, or
 * drawn from published statistics) replayed on each topology through its
 * allocation rule, with the same scheduler (docs/MODEL.md, "Cluster
 * replay"). The synthetic trace is drawn once, for the first topology's
 * endpoints, so that every topology sees the same jobs.
 */
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include "topocc/outcome.h"
#include "scenario_int.h"

typedef struct cprog {
    const tc_run_opts *ro;
    struct timespec t0;
    double base, total;
} cprog;

static void on_progress(void *ctx, size_t done, size_t total)
{
    cprog *cp = ctx;
    (void)total;
    if (!cp->ro || !cp->ro->progress)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double el = (double)(now.tv_sec - cp->t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - cp->t0.tv_nsec);
    double d = cp->base + (double)done;
    tc_progress p = {.what = "cluster replay", .fraction = cp->total > 0 ? d / cp->total : -1, .done = d,
                     .total = cp->total, .unit = "jobs", .rate = el > 0 ? d / el : 0};
    cp->ro->progress(cp->ro->progress_ud, &p);
}

/* --ocs on the topologies: a torus among them, each torus cubes of K
 * (tc_cluster_ocs_check), named as the replay names them. */
static tc_status check_ocs(const tc_scenario *s, const tc_net *net, tc_err *err)
{
    uint32_t K = s->cluster_ocs;
    bool torus = false;
    for (int i = 0; i < net->n; i++)
        torus = torus || net->topo[i]->kind == TC_TOPO_TORUS;
    if (K && !torus)
        return tc_fail(err, TC_EINVAL, "--ocs %u joins a torus's cubes: none of the topologies is a torus", K);
    for (int i = 0; K && i < net->n; i++) {
        tc_status st;
        if (net->topo[i]->kind != TC_TOPO_TORUS || (st = tc_cluster_ocs_check(net->topo[i], K, err)) == TC_OK)
            continue;
        if (net->n > 1) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            st = tc_fail(err, st, "%s: %s", net->name[i], m);
        }
        return st;
    }
    return TC_OK;
}

/* ---- the trace a check read, kept for the run ----
 * tc_scenario_check_run reads a trace file as the run does, so that
 * --print-scenario, replay and a sweep's validation refuse its content;
 * the CLI then runs the scenario it checked. Parsing is most of a
 * replay's time (about 1 us a line of CSV, 40 us a job of Philly's JSON),
 * so the check keeps the trace it read, in one slot, by the file's path,
 * its digest (resolving records it) and the format, and the run takes it
 * from there instead of reading the file again; a check of the same trace
 * (a sweep's next point) takes it and puts it back. Anything else reads
 * the file. */
static once_flag kept_once = ONCE_FLAG_INIT;
static mtx_t kept_mu;
static bool kept_ok;
static char kept_key[sizeof((tc_scenario *)0)->cluster_trace + 96];
static tc_trace kept;

static void kept_init(void)
{
    kept_ok = mtx_init(&kept_mu, mtx_plain) == thrd_success;
}

/* The key of s's trace file; false where there is none (not resolved: no
 * digest). */
static bool key_of(const tc_scenario *s, char *key, size_t len)
{
    int n = snprintf(key, len, "%s %s %s", s->cluster_format, s->cluster_digest, s->cluster_trace);
    call_once(&kept_once, kept_init);
    return kept_ok && s->cluster_trace[0] && s->cluster_digest[0] && n > 0 && (size_t)n < len;
}

/* Moves the kept trace into tr where it is s's; false where it is not. */
static bool kept_take(const tc_scenario *s, tc_trace *tr)
{
    char key[sizeof kept_key];
    if (!key_of(s, key, sizeof key))
        return false;
    mtx_lock(&kept_mu);
    bool hit = kept.jobs && strcmp(kept_key, key) == 0;
    if (hit) {
        *tr = kept;
        memset(&kept, 0, sizeof kept);
        kept_key[0] = '\0';
    }
    mtx_unlock(&kept_mu);
    return hit;
}

/* Moves tr, s's trace, into the slot (what was there is freed); tr is
 * left empty either way. */
static void kept_put(const tc_scenario *s, tc_trace *tr)
{
    char key[sizeof kept_key];
    if (!key_of(s, key, sizeof key)) {
        tc_trace_free(tr);
        return;
    }
    mtx_lock(&kept_mu);
    tc_trace old = kept;
    kept = *tr;
    memcpy(kept_key, key, strlen(key) + 1);
    mtx_unlock(&kept_mu);
    tc_trace_free(&old);
    memset(tr, 0, sizeof *tr);
}

/* What the replay needs, made and checked before any topology is
 * replayed, in this order: the scheduler, the networks, the trace (the
 * file read, or drawn), --ocs against the topologies, the jobs larger than
 * each topology (counted; under --strict the first is refused). The run
 * makes them first, and tc_scenario_check_run makes them before any run
 * (tc_scn_cluster_check, check true: a synthetic trace drawn as the run
 * draws it, its jobs kept only under --strict with several topologies,
 * where one may not fit a later topology), so that --print-scenario,
 * replay and a sweep's validation refuse what the run would, with its
 * message. */
static tc_status prepare(const tc_scenario *s, bool check, tc_cluster_run_out *o, tc_err *err)
{
    tc_status st = tc_cluster_sched_parse(s->scheduler, &o->sched, err);
    o->ocs = s->cluster_ocs;
    if (st == TC_OK)
        st = tc_net_build(s, &o->net, err);
    if (st == TC_OK && s->cluster_trace[0]) {
        tc_trace_format f;
        if ((st = tc_trace_format_parse(s->cluster_format, &f, err)) == TC_OK && !kept_take(s, &o->trace))
            st = tc_trace_read(s->cluster_trace, f, &o->trace, err);
        snprintf(o->source, sizeof o->source, "%s", s->cluster_trace);
    } else if (st == TC_OK && check && !(s->cluster_strict && o->net.n > 1)) {
        /* drawn as the run draws it, for the first topology, the jobs not
         * kept (up to 10^8 of them); every drawn size fits the first */
        st = tc_trace_synthetic_check(s->synth_jobs, s->synth_seed, o->net.topo[0]->n_endpoints, s->synth_load, err);
    } else if (st == TC_OK) { /* the run; the check under --strict with several topologies, for the counts below */
        st = tc_trace_synthetic(s->synth_jobs, s->synth_seed, o->net.topo[0]->n_endpoints, s->synth_load, &o->trace,
                                err);
        snprintf(o->source, sizeof o->source, "synthetic %llu,seed=%llu,load=%g", (unsigned long long)s->synth_jobs,
                 (unsigned long long)s->synth_seed, s->synth_load);
    }
    if (st == TC_OK)
        st = check_ocs(s, &o->net, err);
    for (int i = 0; i < o->net.n && st == TC_OK; i++) {
        const tc_topo *t = o->net.topo[i];
        for (size_t j = 0; j < o->trace.n; j++)
            if (o->trace.jobs[j].size > t->n_endpoints) {
                if (s->cluster_strict && !o->too_large[i])
                    st = tc_fail(err, TC_EINVAL,
                                 "%s: the job of line %llu asks for %u endpoints but %s has %u (--strict; without it "
                                 "such jobs are counted and skipped)",
                                 o->source, (unsigned long long)o->trace.jobs[j].line, o->trace.jobs[j].size,
                                 o->net.name[i], t->n_endpoints);
                o->too_large[i]++;
            }
    }
    return st;
}

/* The checks of a cluster scenario that the run makes before it replays
 * anything (prepare), for tc_scenario_check_run: a trace file is read,
 * and kept for the run. */
tc_status tc_scn_cluster_check(const tc_scenario *s, tc_err *err)
{
    tc_cluster_run_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = prepare(s, true, o, err);
    if (st == TC_OK && s->cluster_trace[0])
        kept_put(s, &o->trace);
    tc_cluster_run_out_free(o);
    return st;
}

tc_status tc_run_cluster(const tc_scenario *s, const tc_run_opts *ro, tc_cluster_run_out **out, tc_err *err)
{
    *out = NULL;
    tc_cluster_run_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = prepare(s, false, o, err);
    cprog cp = {.ro = ro, .total = (double)o->trace.n * (double)o->net.n};
    clock_gettime(CLOCK_MONOTONIC, &cp.t0);
    for (int i = 0; i < o->net.n && st == TC_OK; i++) {
        const tc_topo *t = o->net.topo[i];
        tc_cluster_opts co = {.sched = o->sched, .ocs = t->kind == TC_TOPO_TORUS ? o->ocs : 0, .progress = on_progress,
                              .progress_ctx = &cp};
        cp.base = (double)o->trace.n * i;
        if ((st = tc_cluster_replay(t, &o->trace, &co, &o->run[i], err)) && o->net.n > 1) {
            char m[TC_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            st = tc_fail(err, st, "%s: %s", o->net.name[i], m);
        }
    }
    if (st) {
        tc_cluster_run_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

void tc_cluster_run_out_free(tc_cluster_run_out *o)
{
    if (!o)
        return;
    for (int i = 0; i < TC_SCN_MAX_TOPOS; i++)
        tc_cluster_out_free(&o->run[i]);
    tc_trace_free(&o->trace);
    tc_net_free(&o->net);
    free(o);
}
