/*
 * run_trainiter.c - topocc train: one iteration of a dp x tp x pp job
 * (tc_ti_run, docs/MODEL.md "Training: one iteration") with every
 * collective timed on the network: the groups of each kind as the parallel
 * order makes them (tc_ti_group_members), each collective run by
 * every group at once (tc_evaluate_groups_sweep) in the scenario's mode;
 * a pipeline send is a broadcast between the first two stages' first
 * ranks, alone on the network. Rank r runs on endpoint r.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/outcome.h"
#include "scenario_int.h"
#include "scenario/keys.h"
#include "topocc/sync.h"

#define CACHE 4096

/* A collective's time depends on its operation, its size and its groups,
 * which depend on the degrees and the order: each kind's groups carry a
 * signature (a hash of their members, or of the send's two ranks), so the
 * search's splits share what they evaluated. */
typedef struct comm_entry {
    tc_op op;
    tc_ti_group g;
    uint64_t sig;
    double bytes, t;
    tc_algo algo;                /* the algorithm run (auto's choice, or the one named) */
    bool noted;                  /* listed among the algorithms run (comm_ctx.uses) */
} comm_entry;

typedef struct comm_cache {
    comm_entry *e;               /* grows: every split's DP collectives are its own */
    uint32_t n, cap;
} comm_cache;

static bool cache_add(comm_cache *cc, comm_entry x)
{
    if (cc->n == cc->cap) {
        uint32_t cap = cc->cap ? 2 * cc->cap : 256;
        comm_entry *e = realloc(cc->e, (size_t)cap * sizeof *e);
        if (!e)
            return false;
        cc->e = e;
        cc->cap = cap;
    }
    cc->e[cc->n++] = x;
    return true;
}

#define NKINDS 7 /* TC_TI_TP .. TC_TI_OUTER */

typedef struct comm_ctx {
    const tc_topo *t;
    tc_eval_opts eo;
    uint32_t dp, tp, pp, ep, p;  /* dp: one replica's */
    uint32_t M;                  /* model replicas (0 or 1: one), each a block of p / M ranks */
    bool merge;                  /* DDP over replicas: DP and EDP groups span every replica */
    tc_ti_group order[3];        /* innermost first */
    uint32_t *members[NKINDS];   /* each kind's groups, built on first use */
    uint32_t gsize[NKINDS];
    uint64_t sig[NKINDS];
    bool have[NKINDS];
    comm_cache *cache;
    comm_entry rec[CACHE];       /* the recording pass's requests */
    uint32_t nrec;
    bool recording;
    bool cosim;                  /* flow mode: the timed pass co-simulates the network */
    tc_ti_blame *blame;          /* co-simulated: where the links' blame goes (TC_TI_NCLASSES) */
    bool *have_blame;
    tc_trainiter_out *out;       /* co-simulated: the counts of its flow jobs go there */
    uint32_t evaluations;
    tc_coll_req tmpl[NKINDS];    /* each kind's algorithm: --dp-algo (DP, EDP), --tp-algo, --ep-algo; else auto */
    bool lib[NKINDS];            /* the kind's algorithm is "library": auto as tc_library_req(op) sets it */
    tc_ti_algo_use *uses;        /* the algorithms the reported run ran (NULL: not kept) */
    uint32_t *nuses;
    bool named_failed;           /* a named algorithm did not fit a collective of the split */
} comm_ctx;

static void ctx_groups_free(comm_ctx *c)
{
    for (int k = 0; k < NKINDS; k++) {
        free(c->members[k]);
        c->members[k] = NULL;
        c->have[k] = false;
    }
}

/* Replicas of kind g's groups: M (replicated, replica by replica) or 1
 * (one replica's: a pipeline send; or merged across the replicas). */
static uint32_t reps(const comm_ctx *c, tc_ti_group g)
{
    uint32_t M = c->M > 1 ? c->M : 1;
    return g == TC_TI_PP || g == TC_TI_OUTER || (c->merge && (g == TC_TI_DP || g == TC_TI_EDP)) ? 1 : M;
}

/* Builds the groups of kind g (tc_ti_group_members) and their signature.
 * With replicas, replica r holds ranks r p/M .. (r+1) p/M - 1, each laid
 * out by the order: a kind's groups are one replica's, replica by replica
 * (PP: the first send of replica 0), or for DP and EDP under DDP one group
 * per replica's group joining its copies in every replica; TC_TI_OUTER
 * joins the ranks of equal position in every replica. */
static tc_status build_groups(comm_ctx *c, tc_ti_group g, tc_err *err)
{
    uint32_t M = c->M > 1 ? c->M : 1, pin = c->p / M;
    uint32_t *m = tc_calloc(g == TC_TI_PP ? 2 : c->p, sizeof *m), size = 0;
    uint32_t *in = M > 1 && g != TC_TI_OUTER ? tc_calloc(g == TC_TI_PP ? 2 : pin, sizeof *in) : m;
    if (!m || !in) {
        free(m);
        if (in != m)
            free(in);
        return tc_fail(err, TC_EINTERNAL, "out of memory (groups)");
    }
    tc_status st = TC_OK;
    if (g == TC_TI_OUTER) {
        size = M;
        for (uint32_t i = 0; i < pin; i++)
            for (uint32_t r = 0; r < M; r++)
                m[(size_t)i * M + r] = r * pin + i;
    } else {
        st = tc_ti_group_members(c->order, c->dp, c->tp, c->pp, c->ep, g, in, &size, err);
    }
    size_t nin = g == TC_TI_PP ? 2 : g == TC_TI_EMB ? 2 * (size_t)c->dp * c->tp : pin;
    if (st == TC_OK && in != m) {
        if (g == TC_TI_PP) {
            memcpy(m, in, 2 * sizeof *m);
        } else if (reps(c, g) == 1) { /* merged: group j's copies in every replica */
            size_t ng = nin / size, k = 0;
            for (size_t j = 0; j < ng; j++)
                for (uint32_t r = 0; r < M; r++)
                    for (uint32_t i = 0; i < size; i++)
                        m[k++] = r * pin + in[j * size + i];
            size *= M;
        } else {
            for (uint32_t r = 0; r < M; r++)
                for (size_t i = 0; i < nin; i++)
                    m[r * nin + i] = r * pin + in[i];
        }
    }
    if (in != m)
        free(in);
    if (st) {
        free(m);
        return st;
    }
    size_t n = g == TC_TI_PP ? 2 : g == TC_TI_EMB ? nin * M : c->p;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the members */
    for (size_t i = 0; i < n; i++) {
        h ^= m[i];
        h *= 1099511628211ull;
    }
    c->members[g] = m;
    c->gsize[g] = size;
    c->sig[g] = h ^ ((uint64_t)size << 40);
    c->have[g] = true;
    return TC_OK;
}

/* The groups of kind g of the current split. */
static tc_status groups_of(comm_ctx *c, tc_ti_group g, tc_groups *gr, tc_err *err)
{
    if (!c->have[g]) {
        tc_status st = build_groups(c, g, err);
        if (st)
            return st;
    }
    *gr = (tc_groups){.p = c->p, .ngroups = c->p / c->gsize[g], .size = c->gsize[g], .members = c->members[g]};
    return TC_OK;
}

/* Times of one operation on the groups of kind g (or a send) at n sizes,
 * in one sweep: the schedules are built once and rescaled. */
static tc_status sweep_times(comm_ctx *c, tc_op op, tc_ti_group g, const double *sizes, size_t n, double *out,
                             tc_algo *algo, tc_err *err)
{
    tc_result *r = tc_calloc(n, sizeof *r);
    if (!r)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st;
    /* co-simulated, the network is timed by the one flow simulation: the
     * nominal times (and auto's choices) come from the steps evaluator */
    tc_eval_opts eo = c->eo;
    if (c->cosim)
        eo.mode = TC_MODE_STEPS;
    if (g == TC_TI_PP) {
        if (!c->have[g] && (st = build_groups(c, g, err)) != TC_OK) {
            free(r);
            return st;
        }
        uint32_t map[2] = {c->members[g][0], c->members[g][1]};
        tc_eval_opts o = eo;
        o.rank_map = map;
        tc_coll_req req = {.op = TC_OP_BROADCAST, .algo = TC_ALGO_AUTO, .p = 2, .elt = 2};
        st = tc_evaluate_sweep(c->t, &req, sizes, n, &o, r, err);
    } else if (g == TC_TI_EMB) {
        /* pairs of the first and last stage, the middle stages idle: a job
         * of those 2 tp dp ranks, placed where they are */
        uint32_t n2 = 2 * c->dp * c->tp * (c->M > 1 ? c->M : 1), *iota = NULL;
        if (!c->have[g])
            st = build_groups(c, g, err);
        else
            st = TC_OK;
        if (st == TC_OK && !(iota = malloc(n2 * sizeof *iota)))
            st = tc_fail(err, TC_EINTERNAL, "out of memory");
        for (uint32_t i = 0; st == TC_OK && i < n2; i++)
            iota[i] = i;
        tc_groups gr = {.p = n2, .ngroups = n2 / 2, .size = 2, .members = iota};
        tc_eval_opts o = eo;
        o.rank_map = c->members[g];
        tc_coll_req req = {.op = op, .algo = TC_ALGO_AUTO, .p = 2, .elt = 2};
        if (st == TC_OK)
            st = tc_evaluate_groups_sweep(c->t, &req, &gr, sizes, n, &o, r, err);
        free(iota);
    } else {
        tc_groups gr;
        st = groups_of(c, g, &gr, err);
        tc_coll_req req = c->tmpl[g];
        req.op = op;
        req.p = gr.size;
        req.elt = 2;
        if (c->lib[g])
            tc_library_req(&req, op); /* "library": src/eval/library.c */
        bool done = false;
        if (st == TC_OK && c->lib[g] && op == TC_OP_ALLTOALL)
            st = tc_library_nccl_a2a(c->t, &req, &gr, sizes, n, &eo, r, &done, err);
        if (st == TC_OK && !done)
            st = tc_evaluate_groups_sweep(c->t, &req, &gr, sizes, n, &eo, r, err);
        if (st == TC_OK && c->lib[g] && (op == TC_OP_ALLREDUCE || op == TC_OP_REDUCESCATTER || op == TC_OP_ALLGATHER))
            st = tc_library_nccl_ring(c->t, &req, &gr, sizes, n, &eo, r, err);
    }
    for (size_t i = 0; st == TC_OK && i < n; i++) {
        out[i] = r[i].time_s;
        algo[i] = r[i].algo;
    }
    free(r);
    if (st && c->tmpl[g].algo != TC_ALGO_AUTO)
        c->named_failed = true;
    if (st) {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err->msg);
        return tc_fail(err, st, "%s %s: %s", tc_ti_group_name(g), tc_op_name(op), m);
    }
    c->evaluations += (uint32_t)n;
    return TC_OK;
}

/* Notes that kind g's op ran algorithm a at one more size (a pipeline
 * send, a broadcast between two ranks, has no algorithm to list). */
static void use_add(comm_ctx *c, tc_ti_group g, tc_op op, tc_algo a)
{
    if (!c->uses || g == TC_TI_PP)
        return;
    uint32_t i = 0;
    while (i < *c->nuses && !(c->uses[i].g == g && c->uses[i].op == op && c->uses[i].algo == a))
        i++;
    if (i == *c->nuses) {
        if (i == TC_TI_MAX_ALGO_USES)
            return;
        tc_coll_req r = tc_coll_candidate(&c->tmpl[g], a, 0);
        c->uses[i] = (tc_ti_algo_use){
            .g = g, .op = op, .algo = a, .chosen = c->tmpl[g].algo == TC_ALGO_AUTO, .library = c->lib[g]};
        tc_algo_format(&r, c->uses[i].name, sizeof c->uses[i].name);
        ++*c->nuses;
    }
    c->uses[i].sizes++;
}

/* The cache's entry for kind g's op at `bytes` on the current groups
 * (built), or NULL. */
static comm_entry *entry_of(const comm_ctx *c, tc_op op, tc_ti_group g, double bytes)
{
    for (uint32_t i = 0; i < c->cache->n; i++) {
        comm_entry *x = &c->cache->e[i];
        if (x->op == op && x->g == g && x->sig == c->sig[g] && x->bytes == bytes)
            return x;
    }
    return NULL;
}

static bool cached(comm_ctx *c, tc_op op, tc_ti_group g, double bytes, double *t, tc_err *err, tc_status *st)
{
    *st = TC_OK;
    if (!c->have[g] && (*st = build_groups(c, g, err)) != TC_OK)
        return false;
    comm_entry *x = entry_of(c, op, g, bytes);
    if (!x)
        return false;
    *t = x->t;
    if (c->uses && !c->recording && !x->noted) { /* the reported run's timed pass */
        x->noted = true;
        use_add(c, g, op, x->algo);
    }
    return true;
}

/* Recording (the first pass): every request not cached is noted and timed
 * 0 (the iteration's structure does not depend on the times); then
 * resolve() sweeps each (op, group) over its sizes and fills the cache,
 * and the second pass reads it. */
static tc_status comm_fn(void *ud, tc_op op, tc_ti_group g, double bytes, double *time_s, tc_err *err)
{
    comm_ctx *c = ud;
    if (!(bytes > 0)) {
        *time_s = 0;
        return TC_OK;
    }
    tc_status st;
    if (cached(c, op, g, bytes, time_s, err, &st))
        return TC_OK;
    if (st)
        return st;
    if (!c->recording)
        return tc_fail(err, TC_EINTERNAL, "internal: %s %s of %.0f bytes was not evaluated", tc_ti_group_name(g),
                       tc_op_name(op), bytes);
    *time_s = 0;
    for (uint32_t i = 0; i < c->nrec; i++)
        if (c->rec[i].op == op && c->rec[i].g == g && c->rec[i].bytes == bytes)
            return TC_OK;
    if (c->nrec == CACHE)
        return tc_fail(err, TC_EINTERNAL, "internal: more than %d distinct collectives in one iteration", CACHE);
    c->rec[c->nrec++] = (comm_entry){op, g, 0, bytes, 0, TC_ALGO_AUTO, false};
    return TC_OK;
}

static tc_status resolve(comm_ctx *c, tc_err *err)
{
    double *sz = tc_calloc(c->nrec ? c->nrec : 1, sizeof *sz), *tm = tc_calloc(c->nrec ? c->nrec : 1, sizeof *tm);
    uint8_t *done = tc_calloc(c->nrec ? c->nrec : 1, 1);
    tc_algo *al = tc_calloc(c->nrec ? c->nrec : 1, sizeof *al);
    tc_status st = sz && tm && done && al ? TC_OK : tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; st == TC_OK && i < c->nrec; i++) {
        if (done[i])
            continue;
        size_t n = 0;
        for (uint32_t j = i; j < c->nrec; j++)
            if (!done[j] && c->rec[j].op == c->rec[i].op && c->rec[j].g == c->rec[i].g)
                sz[n++] = c->rec[j].bytes;
        if ((st = sweep_times(c, c->rec[i].op, c->rec[i].g, sz, n, tm, al, err)))
            break;
        size_t k = 0;
        uint64_t sig = c->sig[c->rec[i].g];
        for (uint32_t j = i; j < c->nrec; j++)
            if (!done[j] && c->rec[j].op == c->rec[i].op && c->rec[j].g == c->rec[i].g) {
                done[j] = 1;
                if (!cache_add(c->cache, (comm_entry){c->rec[j].op, c->rec[j].g, sig, sz[k], tm[k], al[k], false}))
                    st = tc_fail(err, TC_EINTERNAL, "out of memory");
                k++;
            }
    }
    free(sz);
    free(tm);
    free(done);
    free(al);
    c->nrec = 0;
    return st;
}

/* ---- flow co-simulation (train --mode flow) ------------------------------
 * Every communication task of the timed pass is external (tc_ti_flow): when
 * it starts, one flow job per group of its stage joins a tc_flow_ctx (the
 * collective's schedule as auto chose it for one group); it ends when all
 * of them have. The embedding all-reduce's two tasks (first and last
 * stage) share one set of jobs, the stage pairs'. */

typedef struct fsched {
    tc_op op;
    tc_ti_group g;
    double bytes;
    tc_sched *s;
} fsched;

typedef struct flow_drv {
    comm_ctx *c;
    tc_flow_opts fo;
    tc_flow_ctx *fc;
    uint32_t *job_task;          /* flow job -> timeline task */
    size_t njob, capjob;
    uint32_t *outst;             /* per task: its jobs in flight (UINT32_MAX: not started) */
    size_t capo;
    uint32_t emb_task[2];        /* the embedding all-reduce's tasks; their shared jobs' owner */
    uint32_t instant;            /* a task that ends as it starts (UINT32_MAX: none) */
    double instant_t;
    fsched *sc;
    size_t nsc, capsc;
    tc_topo **views;             /* NCCL views the schedules were built on */
    size_t nviews;
    uint32_t *pairs;             /* PP and embedding pairs: rank maps that live as long as the jobs */
    size_t npairs, cappairs;
    bool blamed;                 /* the first run's blame is taken */
    bool retried;                /* the first (overlapped) run was made again event by event */
} flow_drv;

/* The links that held back each class of communication in the run that
 * ends (tc_flow_ctx_blame; tags are tc_ti_group). */
static void drv_blame(flow_drv *f)
{
    comm_ctx *c = f->c;
    if (!f->fc || f->blamed || !c->blame)
        return;
    f->blamed = true;
    if (c->out) { /* this iteration's (each of compress's trials writes them; the reported run is the last) */
        tc_flow_ctx_solo_count(f->fc, &c->out->cosim_jobs, &c->out->cosim_alone, &c->out->cosim_alone_sims);
        c->out->cosim_retried = f->retried;
    }
    const tc_topo *t = c->t;
    for (uint32_t g = 0; g < TC_TI_NCLASSES; g++) {
        tc_ti_blame *b = &c->blame[g];
        memset(b, 0, sizeof *b);
        b->sent_s = tc_flow_ctx_sent(f->fc, g);
        b->lost_s = tc_flow_ctx_lost(f->fc, g, UINT32_MAX);
        if (!(b->lost_s > 0))
            continue;
        for (uint32_t l = 0; l < t->n_links; l++) {
            double x = tc_flow_ctx_lost(f->fc, g, l);
            if (!(x > 0))
                continue;
            uint32_t k;
            if (b->nlinks < TC_TI_BLAME_TOP)
                k = b->nlinks++;
            else if (x > b->link_lost_s[TC_TI_BLAME_TOP - 1])
                k = TC_TI_BLAME_TOP - 1;
            else
                continue;
            while (k > 0 && b->link_lost_s[k - 1] < x) { /* insertion, most lost first, ties by link */
                b->link[k] = b->link[k - 1];
                b->link_lost_s[k] = b->link_lost_s[k - 1];
                k--;
            }
            b->link[k] = l;
            b->link_lost_s[k] = x;
        }
        for (uint32_t k = 0; k < b->nlinks; k++)
            for (uint32_t h = 0; h < TC_TI_NCLASSES; h++)
                if (h != g && tc_flow_ctx_tag_bytes(f->fc, h, b->link[k]) > 0)
                    b->shared_with[k] |= 1u << h;
    }
    if (c->have_blame)
        *c->have_blame = true;
}

static void drv_reset(flow_drv *f)
{
    drv_blame(f);
    tc_flow_ctx_free(f->fc);
    f->fc = NULL;
    f->njob = 0;
    f->npairs = 0;
    for (size_t i = 0; i < f->capo; i++)
        f->outst[i] = UINT32_MAX;
    f->emb_task[0] = f->emb_task[1] = UINT32_MAX;
    f->instant = UINT32_MAX;
}

static void drv_free(flow_drv *f)
{
    drv_reset(f);
    free(f->job_task);
    free(f->outst);
    for (size_t i = 0; i < f->nsc; i++)
        tc_sched_free(f->sc[i].s);
    free(f->sc);
    for (size_t i = 0; i < f->nviews; i++)
        tc_topo_free(f->views[i]);
    free(f->views);
    free(f->pairs);
}

/* A run that failed because a flow came onto the links of a job timed
 * alone: it is made again with every job simulated event by event (its
 * blame is not taken). */
static bool drv_retry(void *ud)
{
    flow_drv *f = ud;
    if (!f->fc || !f->fo.solo || !tc_flow_ctx_solo_broken(f->fc))
        return false;
    f->fo.solo = false;
    f->retried = f->retried || !f->blamed; /* the overlapped run's (the serial one's is not reported) */
    tc_flow_ctx_free(f->fc);
    f->fc = NULL;
    return true;
}

static tc_status drv_begin(void *ud, bool serial, tc_err *err)
{
    (void)serial;
    flow_drv *f = ud;
    drv_reset(f);
    tc_status st = tc_flow_ctx_new(f->c->t, &f->fo, &f->fc, err);
    /* the blame is the first run's (drv_blame): the serial run keeps the
     * solver's fast path for flows alone on their links, which blame
     * accounting forgoes */
    if (st == TC_OK && f->c->blame && !f->blamed)
        st = tc_flow_ctx_blame(f->fc, TC_TI_NCLASSES, err);
    return st;
}

/* The schedule of one group's op of `bytes`, auto's algorithm as the
 * evaluation chose it (cached with the time). */
static tc_status drv_sched(flow_drv *f, tc_op op, tc_ti_group g, double bytes, tc_sched **out, tc_err *err)
{
    for (size_t i = 0; i < f->nsc; i++)
        if (f->sc[i].op == op && f->sc[i].g == g && f->sc[i].bytes == bytes) {
            *out = f->sc[i].s;
            return TC_OK;
        }
    comm_ctx *c = f->c;
    tc_algo algo = TC_ALGO_AUTO;
    tc_ti_group key = g == TC_TI_EMB ? TC_TI_EMB : g;
    uint64_t sig = c->have[key] ? c->sig[key] : 0;
    for (uint32_t i = 0; i < c->cache->n; i++) {
        const comm_entry *x = &c->cache->e[i];
        if (x->op == op && x->g == g && x->sig == sig && x->bytes == bytes)
            algo = x->algo;
    }
    uint32_t size = g == TC_TI_PP || g == TC_TI_EMB ? 2 : c->gsize[g];
    tc_coll_req req = c->tmpl[g];
    req.op = g == TC_TI_PP ? TC_OP_BROADCAST : op;
    req.p = size;
    req.elt = 2;
    req.bytes = bytes;
    if (g != TC_TI_PP && g != TC_TI_EMB && c->lib[g])
        tc_library_req(&req, req.op); /* the library's tree chunk, as its nominal time (sweep_times) */
    tc_status st = tc_coll_round(&req, err);
    if (st)
        return st;
    if (algo == TC_ALGO_AUTO)
        return tc_fail(err, TC_EINTERNAL, "train flow: %s %s of %.0f bytes was not evaluated", tc_ti_group_name(g),
                       tc_op_name(op), bytes);
    tc_coll_req r = tc_coll_candidate(&req, algo, req.bytes);
    const tc_topo *it = NULL;
    tc_topo ibuf, *view = NULL;
    if (g != TC_TI_PP && g != TC_TI_EMB) {
        tc_groups gr;
        if ((st = groups_of(c, g, &gr, err)))
            return st;
        it = tc_groups_inner_topo(&gr, &ibuf);
        if (tc_algo_is_nccl(algo)) {
            if ((st = tc_groups_nccl_view(&gr, c->t, NULL, &view, err)))
                return st;
            tc_topo **v = realloc(f->views, (f->nviews + 1) * sizeof *v);
            if (!v) {
                tc_topo_free(view);
                return tc_fail(err, TC_EINTERNAL, "out of memory");
            }
            f->views = v;
            f->views[f->nviews++] = view;
            it = view;
        }
    } else if (tc_algo_is_nccl(algo)) {
        return tc_fail(err, TC_EINVAL, "train flow: a pipeline send or embedding all-reduce with NCCL's %s is not "
                                       "co-simulated yet", tc_algo_name(algo));
    }
    tc_sched *sc = NULL;
    if ((st = tc_coll_build(&r, it, &sc, err)))
        return st;
    if (f->nsc == f->capsc) {
        size_t cap = f->capsc ? 2 * f->capsc : 16;
        fsched *v = realloc(f->sc, cap * sizeof *v);
        if (!v) {
            tc_sched_free(sc);
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        }
        f->sc = v;
        f->capsc = cap;
    }
    f->sc[f->nsc++] = (fsched){op, g, bytes, sc};
    *out = sc;
    return TC_OK;
}

static tc_status drv_job(flow_drv *f, tc_sched *s, const uint32_t *map, double t, uint32_t task, tc_ti_group g,
                        tc_err *err)
{
    tc_flow_job jb = {.sched = s, .rank_map = map, .start_s = t, .name = NULL, .tag = g};
    uint32_t id;
    tc_status st = tc_flow_ctx_add(f->fc, &jb, &id, err);
    if (st == TC_EINVAL && s->proto && s->rate_cap_Bps > 0) /* the context refuses a job's own rate cap */
        return tc_fail(err, TC_EINVAL, "%s: NCCL's %s protocol caps each flow's rate, which the co-simulated "
                                       "iteration does not model per job: add --no-cosim (each collective timed "
                                       "alone in flow mode), use --mode steps, or name another algorithm (%s)",
                       tc_ti_group_name(g), tc_proto_name(s->proto),
                       g == TC_TI_TP   ? "--tp-algo"
                       : g == TC_TI_EP ? "--ep-algo"
                                       : "--dp-algo");
    if (st)
        return st;
    if (id >= f->capjob) {
        size_t cap = f->capjob ? 2 * f->capjob : 256;
        while (cap <= id)
            cap *= 2;
        uint32_t *v = realloc(f->job_task, cap * sizeof *v);
        if (!v)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        f->job_task = v;
        f->capjob = cap;
    }
    f->job_task[id] = task;
    f->outst[task] = f->outst[task] == UINT32_MAX ? 1 : f->outst[task] + 1;
    return TC_OK;
}

/* Room for n more pair maps (2 ranks each); the maps already handed out
 * must not move: the array is sized once per run for every pair it can
 * hold (pp stages x 2 directions + the embedding, dp tp pairs each). */
static tc_status drv_pairs(flow_drv *f, size_t n, uint32_t **out, tc_err *err)
{
    if (!f->pairs) {
        comm_ctx *c = f->c;
        f->cappairs = (size_t)c->dp * c->tp * (c->M > 1 ? c->M : 1) * 2 * ((size_t)2 * c->pp * 64 + 2);
        f->pairs = malloc(f->cappairs * sizeof *f->pairs);
        if (!f->pairs)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (f->npairs + 2 * n > f->cappairs)
        return tc_fail(err, TC_EINVAL, "train flow: more pipeline sends in one iteration than the co-simulation "
                                       "holds (%zu pair maps)", f->cappairs / 2);
    *out = f->pairs + f->npairs;
    f->npairs += 2 * n;
    return TC_OK;
}

static tc_status drv_start(void *ud, uint32_t task, tc_op op, tc_ti_group g, double bytes, uint32_t stage, bool up,
                           double t, tc_err *err)
{
    flow_drv *f = ud;
    comm_ctx *c = f->c;
    if (task >= f->capo) {
        size_t cap = f->capo ? 2 * f->capo : 1024;
        while (cap <= task)
            cap *= 2;
        uint32_t *v = realloc(f->outst, cap * sizeof *v);
        if (!v)
            return tc_fail(err, TC_EINTERNAL, "out of memory");
        for (size_t i = f->capo; i < cap; i++)
            v[i] = UINT32_MAX;
        f->outst = v;
        f->capo = cap;
    }
    tc_sched *s = NULL;
    tc_status st = drv_sched(f, op, g, bytes, &s, err);
    if (st)
        return st;
    if (g == TC_TI_PP || g == TC_TI_EMB) {
        if (g == TC_TI_EMB) {
            /* the two ends share one set of jobs: the first to start runs
             * them, the other waits for them */
            int me = stage == 0 ? 0 : 1;
            f->emb_task[me] = task;
            if (f->emb_task[1 - me] != UINT32_MAX) {
                uint32_t other = f->emb_task[1 - me];
                f->outst[task] = f->outst[other];
                if (f->outst[task] == 0) { /* its jobs are done: it ends now */
                    f->instant = task;
                    f->instant_t = t;
                }
                return TC_OK;
            }
        }
        /* with virtual stages (interleaved 1F1B) the last stage's chunk
         * sends on to the first stage's next chunk, and back */
        uint32_t other = g == TC_TI_EMB ? c->pp - 1 : up ? (stage + 1) % c->pp : (stage + c->pp - 1) % c->pp;
        uint32_t from = g == TC_TI_EMB ? 0 : stage;
        if (stage >= c->pp || other == from)
            return tc_fail(err, TC_EINTERNAL, "train flow: a send from stage %u to itself", stage);
        uint32_t *m = NULL, M = c->M > 1 ? c->M : 1, pin = c->p / M;
        if ((st = drv_pairs(f, (size_t)c->dp * c->tp * M, &m, err)))
            return st;
        for (uint32_t r = 0; r < M && st == TC_OK; r++)
            for (uint32_t d = 0; d < c->dp && st == TC_OK; d++)
                for (uint32_t k = 0; k < c->tp && st == TC_OK; k++) {
                    uint32_t *pm = m + 2 * (((size_t)r * c->dp + d) * c->tp + k);
                    pm[0] = r * pin + tc_ti_rank(c->order, c->dp, c->tp, c->pp, d, k, from);
                    pm[1] = r * pin + tc_ti_rank(c->order, c->dp, c->tp, c->pp, d, k, other);
                    st = drv_job(f, s, pm, t, task, g, err);
                }
        return st;
    }
    tc_groups gr;
    if ((st = groups_of(c, g, &gr, err)))
        return st;
    /* groups lie within a stage, stage by stage (in each replica) */
    uint32_t R = reps(c, g), nr = gr.ngroups / R, per = nr / c->pp;
    for (uint32_t r = 0; r < R && st == TC_OK; r++)
        for (uint32_t gi = r * nr + stage * per; gi < r * nr + (stage + 1) * per && st == TC_OK; gi++)
            st = drv_job(f, s, gr.members + (size_t)gi * gr.size, t, task, g, err);
    return st;
}

static tc_status drv_run(void *ud, double until, uint32_t *done, size_t cap, size_t *n, double *now, tc_err *err)
{
    flow_drv *f = ud;
    *n = 0;
    if (f->instant != UINT32_MAX && cap > 0) {
        done[(*n)++] = f->instant;
        *now = f->instant_t;
        f->instant = UINT32_MAX;
        return TC_OK;
    }
    uint32_t jd[64];
    for (;;) {
        size_t nj = 0;
        tc_status st = tc_flow_ctx_run(f->fc, until, jd, 64, &nj, now, err);
        if (st)
            return st;
        for (size_t i = 0; i < nj; i++) {
            uint32_t task = f->job_task[jd[i]];
            if (--f->outst[task] == 0 && *n < cap) {
                done[(*n)++] = task;
                /* the embedding's other end waits for the same jobs */
                for (int e = 0; e < 2; e++)
                    if (f->emb_task[e] == task && f->emb_task[1 - e] != UINT32_MAX && *n < cap) {
                        uint32_t o = f->emb_task[1 - e];
                        if (f->outst[o] != UINT32_MAX && f->outst[o] > 0) {
                            f->outst[o] = 0;
                            done[(*n)++] = o;
                        }
                    }
            }
        }
        if (*n > 0 || nj == 0)
            return TC_OK;
    }
}

/* One iteration: a recording pass, the sweeps, the timed pass. */
static tc_status run_one(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *cfg, comm_ctx *c,
                         tc_ti_result *out, tc_err *err)
{
    c->recording = true;
    tc_ti_result tmp;
    tc_ti_cfg rec = *cfg;
    rec.keep = NULL;
    tc_status st = tc_ti_run(m, a, &rec, comm_fn, c, &tmp, err);
    c->recording = false;
    if (st == TC_OK)
        st = resolve(c, err);
    if (st == TC_OK && c->eo.mode == TC_MODE_FLOW && c->cosim) {
        /* the timed pass with the network co-simulated */
        flow_drv f;
        memset(&f, 0, sizeof f);
        f.c = c;
        if (c->eo.flow)
            f.fo = *c->eo.flow;
        f.fo.routing = c->eo.routing;
        f.fo.solo = !f.fo.no_skip; /* jobs alone on their links timed alone (--no-skip: event by event) */
        f.instant = UINT32_MAX;
        tc_ti_flow fl = {.ud = &f, .begin = drv_begin, .start = drv_start, .run = drv_run, .retry = drv_retry};
        tc_ti_cfg cf = *cfg;
        cf.flow = &fl;
        st = tc_ti_run(m, a, &cf, comm_fn, c, out, err);
        drv_free(&f);
        return st;
    }
    if (st == TC_OK)
        st = tc_ti_run(m, a, cfg, comm_fn, c, out, err);
    return st;
}

static const char *stage_name(void *ud, uint32_t r, char *buf, size_t len)
{
    (void)ud;
    snprintf(buf, len, "pipeline stage %u", r);
    return buf;
}

static const char *stream_name(void *ud, uint32_t r, uint32_t s)
{
    (void)ud;
    (void)r;
    return tc_ti_stream_name(s);
}

static int cmp_split(const void *a, const void *b)
{
    const tc_ti_split *x = a, *y = b;
    if (x->fits != y->fits)
        return x->fits ? -1 : 1;
    if (x->iter_s != y->iter_s)
        return x->iter_s < y->iter_s ? -1 : 1;
    if (x->tp != y->tp)
        return x->tp < y->tp ? -1 : 1;
    if (x->pp != y->pp)
        return x->pp < y->pp ? -1 : 1;
    return x->ep < y->ep ? -1 : x->ep > y->ep;
}

/* Every (tp, pp) dividing the endpoints (tp within a scale-up node unless
 * there are none; tp dividing the heads, pp at most the layers), dp the
 * rest, m = G / (dp b) where whole: one iteration each, with a fresh
 * network cache per split (the groups change). */
static tc_status search(const tc_zoo_model *m, tc_trainiter_out *o, const tc_scenario *s, comm_ctx *proto,
                        tc_err *err)
{
    const tc_topo *t = o->net.topo[0];
    uint32_t N = o->ranks, b = o->cfg.micro_batch;
    uint64_t G = s->global_batch ? s->global_batch : (uint64_t)s->dp * s->micro_batches * s->micro_batch;
    char why[TC_ERR_LEN - 64] = "";
    o->global_batch = G;
    size_t cap = 64, n = 0;
    o->splits = malloc(cap * sizeof *o->splits);
    if (!o->splits)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    uint32_t tpmax = t->node_size > 1 ? t->node_size : N;
    for (uint32_t tp = 1; tp <= tpmax && tp <= N; tp++) {
        if (N % tp || (m->heads && m->heads % tp) || (m->kv_heads && m->kv_heads % tp) ||
            (m->arch == TC_MODEL_CNN && tp > 1) ||
            (t->node_size > 1 && t->node_size % tp))
            continue;
        for (uint32_t pp = 1; pp <= N / tp; pp++) {
            if ((N / tp) % pp || (m->layers && pp > m->layers) || (m->arch == TC_MODEL_CNN && pp > 1))
                continue;
            uint32_t dp = N / tp / pp;
            if (G % ((uint64_t)dp * b))
                continue;
            uint32_t mb = (uint32_t)(G / ((uint64_t)dp * b));
            /* expert parallelism: every degree dividing the experts and dp
             * (a dense model: none) */
            for (uint32_t ep = 1; ep <= dp; ep++) {
            if (ep > 1 && (m->experts < 2 || m->experts % ep || dp % ep))
                continue;
            tc_ti_cfg c = o->cfg;
            c.dp = dp;
            c.tp = tp;
            c.pp = pp;
            c.ep = ep;
            c.micro_batches = mb;
            if (c.virtual_stages > 1 && mb % pp)
                continue;
            comm_ctx cc = *proto;
            cc.dp = dp;
            cc.tp = tp;
            cc.pp = pp;
            cc.ep = ep;
            memset(cc.members, 0, sizeof cc.members);
            memset(cc.have, 0, sizeof cc.have);
            cc.evaluations = 0;
            /* TP inside a node: with the order, not only tp dividing it */
            if (t->node_size > 1 && tp > 1) {
                tc_groups gr;
                tc_status sg = groups_of(&cc, TC_TI_TP, &gr, err);
                bool in = sg == TC_OK;
                for (uint32_t i = 0; in && i < gr.ngroups * gr.size; i++)
                    in = gr.members[i] / t->node_size == gr.members[i - i % gr.size] / t->node_size;
                if (!in) {
                    ctx_groups_free(&cc);
                    if (sg)
                        return sg;
                    continue;
                }
            }
            tc_ti_result r;
            tc_status st = run_one(m, &o->acc, &c, &cc, &r, err);
            o->evaluations += cc.evaluations;
            ctx_groups_free(&cc);
            if (st == TC_EINVAL && cc.named_failed) {
                char m2[TC_ERR_LEN];
                snprintf(m2, sizeof m2, "%s", err->msg);
                return tc_fail(err, TC_EINVAL, "--search: split dp %u x tp %u x pp %u x ep %u: %.300s: name an "
                                               "algorithm every split can run, or leave the default (library)", dp, tp, pp, ep, m2);
            }
            if (st == TC_EINVAL) { /* a split the model cannot take: say why if none can */
                if (!why[0]) {
                    int k = snprintf(why, sizeof why, "dp %u x tp %u x pp %u x ep %u, %u micro-batches: ", dp, tp,
                                     pp, ep, mb);
                    if (k > 0 && (size_t)k < sizeof why)
                        snprintf(why + k, sizeof why - (size_t)k, "%.200s", err->msg);
                }
                continue;
            }
            if (st)
                return st;
            if (n == cap) {
                tc_ti_split *v = realloc(o->splits, 2 * cap * sizeof *v);
                if (!v)
                    return tc_fail(err, TC_EINTERNAL, "out of memory");
                o->splits = v;
                cap *= 2;
            }
            o->splits[n++] = (tc_ti_split){dp, tp, pp, ep, mb, r.iter_s, r.mfu, r.mem.total, r.exposed_s,
                                           r.bubble_s, r.fits};
            }
        }
    }
    qsort(o->splits, n, sizeof *o->splits, cmp_split);
    o->nsplits = n;
    for (size_t i = 0; i < n; i++)
        o->nfit += o->splits[i].fits;
    if (!n && why[0])
        return tc_fail(err, TC_EINVAL, "no split of %u endpoints can run: the first refused was %s", N, why);
    if (!n)
        return tc_fail(err, TC_EINVAL, "no split of %u endpoints runs %llu %s in micro-batches of %u: give "
                                       "--global-batch as a multiple of the data-parallel degrees times --micro-batch",
                       N, (unsigned long long)G, m->arch == TC_MODEL_CNN ? "samples" : "sequences", b);
    return TC_OK;
}

/* Compression per traffic class: every combination of the requested
 * classes' codecs is timed, the fastest kept in c->codec (ties: fewer
 * compressed), so a class is compressed only where that shortens the
 * iteration (its communication on the critical path, its codec's compute
 * paying for itself). */
/* The codecs of a trial (mask: bit k for class k) as flags:
 * "--compress-dp int8, --compress-pp fp16". */
static void codecs_named(uint32_t mask, const tc_codec_spec *const spec[3], char *with, size_t len)
{
    static const char *const flag[3] = {"--compress-dp", "--compress-pp", "--compress-ep"};
    with[0] = '\0';
    for (int k = 0; k < 3; k++)
        if (mask & (1u << k)) {
            size_t l = strlen(with);
            snprintf(with + l, len - l, "%s%s %s", l ? ", " : "", flag[k], spec[k]->name);
        }
}

/* A trial with the codecs of mask failed with st: err's message prefixed
 * with the codecs it ran. */
static tc_status failed_with_codecs(tc_status st, uint32_t mask, const tc_codec_spec *const spec[3], tc_err *err)
{
    char m2[TC_ERR_LEN], with[160];
    snprintf(m2, sizeof m2, "%s", err->msg);
    codecs_named(mask, spec, with, sizeof with);
    return tc_fail(err, st, "with %s: %s", with, m2);
}

static tc_status compress_classes(const tc_zoo_model *m, tc_trainiter_out *o, tc_ti_cfg *c, comm_ctx *cc, tc_err *err)
{
    const tc_codec_spec *spec[3] = {c->codec[0], c->codec[1], c->codec[2]};
    uint32_t want = 0;
    for (int k = 0; k < 3; k++)
        if (spec[k]) {
            want |= 1u << k;
            o->codec[k].requested = true;
            snprintf(o->codec[k].codec, sizeof o->codec[k].codec, "%s", spec[k]->name);
        }
    if (!want)
        return TC_OK;
    double t[8];
    for (uint32_t mask = 0; mask < 8; mask++) {
        t[mask] = INFINITY;
        if (mask & ~want)
            continue;
        for (int k = 0; k < 3; k++)
            c->codec[k] = mask & (1u << k) ? spec[k] : NULL;
        tc_ti_result r;
        tc_status st = run_one(m, &o->acc, c, cc, &r, err);
        if (st && mask) /* a trial with codecs: name them (a ratio that leaves too few bytes fails in a collective) */
            return failed_with_codecs(st, mask, spec, err);
        if (st)
            return st;
        t[mask] = r.iter_s;
    }
    uint32_t best = 0;
    for (uint32_t mask = 1; mask < 8; mask++)
        if (t[mask] < t[best] ||
            (t[mask] == t[best] && __builtin_popcount(mask) < __builtin_popcount(best)))
            best = mask;
    for (int k = 0; k < 3; k++) {
        c->codec[k] = best & (1u << k) ? spec[k] : NULL;
        if (want & (1u << k)) {
            o->codec[k].applied = best & (1u << k);
            o->codec[k].with_s = t[best | (1u << k)];
            o->codec[k].without_s = t[best & ~(1u << k)];
        }
    }
    return TC_OK;
}

/* The replicas' synchronisation (sync.*): the outer all-reduce of the
 * pseudo-gradient across replicas (each of a replica's dp ranks reduces
 * 1/dp of its TP/PP shard, expert parameters 1/(dp/ep)), then, below
 * ZeRO 3, the all-gather of the updated 16-bit parameters inside the
 * replica; the time per step and the loss rule (topocc/sync.h). */
static tc_status sync_outer(const tc_scenario *s, const tc_zoo_model *m, comm_ctx *c, tc_trainiter_out *o,
                            tc_sync_kind k, tc_err *err)
{
    tc_sync_out *y = &o->sync;
    const tc_ti_result *r = &o->res;
    uint32_t M = c->M > 1 ? c->M : 1, dpi = c->dp, ep = c->ep > 1 ? c->ep : 1;
    snprintf(y->strategy, sizeof y->strategy, "%s", tc_sync_name(k));
    snprintf(y->dtype, sizeof y->dtype, "%s", s->outer_dtype);
    y->replicas = M;
    y->inner_steps = s->inner_steps;
    y->overlap_steps = s->overlap_steps;
    y->outer_steps = s->outer_steps;
    y->fragments = 1;
    tc_sync_in in = {.kind = k, .replicas = M, .inner_steps = s->inner_steps, .fragments = 1,
                     .overlap_steps = s->overlap_steps, .inner_s = r->iter_s};
    tc_status st = TC_OK;
    if (k == TC_SYNC_DDP) {
        y->cross_bytes_step = M > 1 ? r->dp.bytes : 0;
    } else {
        uint32_t F = 1;
        if (k == TC_SYNC_STREAMING) {
            uint32_t L = m->layers ? m->layers : 1;
            F = s->fragments ? s->fragments : (L + 2) / 3; /* fragments of 3 layers (2501.18512, Section 3.3.1) */
            if (F > L)
                return tc_fail(err, TC_EINVAL, "--fragments %u: %s has %u layers: give at most one fragment per layer",
                               F, m->name, L);
        }
        y->fragments = in.fragments = F;
        double dense = r->mem.params - r->mem.eparams;
        double elems = dense / dpi + (ep > 1 ? r->mem.eparams / (dpi / ep) : 0);
        y->outer_bytes = elems * tc_sync_dtype_bytes(s->outer_dtype) / F;
        bool cos = c->cosim; /* the outer step is timed alone, in the scenario's mode */
        c->cosim = false;
        tc_algo al;
        st = sweep_times(c, TC_OP_ALLREDUCE, TC_TI_OUTER, &y->outer_bytes, 1, &y->outer_ar_s, &al, err);
        if (st == TC_OK)
            use_add(c, TC_TI_OUTER, TC_OP_ALLREDUCE, al);
        double ag = dense * 2 / F;
        if (st == TC_OK && s->zero < 3 && dpi > 1 && ag > 0) {
            st = sweep_times(c, TC_OP_ALLGATHER, TC_TI_DP, &ag, 1, &y->outer_ag_s, &al, err);
            const comm_entry *x = entry_of(c, TC_OP_ALLGATHER, TC_TI_DP, ag); /* listed already? */
            if (st == TC_OK && !(x && x->noted))
                use_add(c, TC_TI_DP, TC_OP_ALLGATHER, al);
        }
        c->cosim = cos;
        y->outer_s = in.outer_s = y->outer_ar_s + y->outer_ag_s;
        y->cross_bytes_step = y->outer_bytes * F / s->inner_steps;
    }
    if (st == TC_OK)
        st = tc_sync_step(&in, &y->step_s, err);
    y->run_s = (double)s->outer_steps * s->inner_steps * y->step_s;
    tc_zoo_derived *d = tc_calloc(1, sizeof *d);
    if (st == TC_OK && !d)
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (st == TC_OK && (st = tc_zoo_derive(m, d, err)) == TC_OK)
        y->penalty = tc_sync_loss_penalty(k, d->params, M, s->inner_steps, s->overlap_steps, &y->penalty_known,
                                          &y->penalty_outside);
    /* the trade-off over H: 10 .. 2000, and the given H in its place if
     * not among them */
    uint32_t hs[7] = {10, 30, 100, 300, 1000, 2000}, nh = 6;
    bool given = false;
    for (uint32_t i = 0; i < nh; i++)
        given = given || hs[i] == s->inner_steps;
    if (!given) {
        uint32_t at = nh;
        while (at > 0 && hs[at - 1] > s->inner_steps) {
            hs[at] = hs[at - 1];
            at--;
        }
        hs[at] = s->inner_steps;
        nh++;
    }
    y->nh = 0;
    for (uint32_t i = 0; st == TC_OK && k != TC_SYNC_DDP && i < nh; i++) {
        if (k == TC_SYNC_STREAMING && hs[i] < s->overlap_steps)
            continue; /* an overlap beyond H: not a schedule (tc_sync_step) */
        tc_sync_in hin = in;
        hin.inner_steps = hs[i];
        bool known;
        uint32_t j = y->nh;
        y->h[j].H = hs[i];
        if ((st = tc_sync_step(&hin, &y->h[j].step_s, err)) != TC_OK)
            break;
        y->h[j].cross_bytes_step = y->outer_bytes * in.fragments / hs[i];
        y->h[j].penalty = tc_sync_loss_penalty(k, d->params, M, hs[i], s->overlap_steps, &known, &y->h[j].outside);
        y->nh = j + 1;
    }
    free(d);
    return st;
}

/* The refusal of a job that does not fit in the accelerator's memory
 * (without --allow-oom). */
static tc_status oom_refusal(const char *model, const tc_mem *mm, tc_err *err)
{
    return tc_fail(err, TC_EINVAL,
                   "%s does not fit: %.2f GiB per device (weights %.2f, gradients %.2f, optimizer %.2f, "
                   "activations %.2f) on %.2f GiB, short by %.2f GiB (--allow-oom times it anyway)",
                   model, mm->total / 1073741824.0, mm->weights / 1073741824.0, mm->grads / 1073741824.0,
                   mm->optim / 1073741824.0, mm->activations / 1073741824.0, mm->capacity / 1073741824.0,
                   -mm->headroom / 1073741824.0);
}

/* A degree or count the search would ignore: given by a flag (any value,
 * its default 1 included), or not 1 (a file's value). */
static bool split_given(const tc_scenario *s, const char *key, uint32_t v)
{
    return v != 1 || tc_keyset_has(&s->flag_mask, tc_scn_key_index(key));
}

static tc_recompute recompute_of(const tc_scenario *s)
{
    return strcmp(s->recompute, "full") == 0        ? TC_RECOMPUTE_FULL
           : strcmp(s->recompute, "selective") == 0 ? TC_RECOMPUTE_SELECTIVE
                                                    : TC_RECOMPUTE_NONE;
}

/* tc_ti_run's refusals of the configuration as the run meets them: without
 * the codecs first, then each combination of those given, named as
 * compress_classes names them. */
static tc_status cfg_check(const tc_zoo_model *m, const tc_trainiter_out *o, tc_err *err)
{
    const tc_codec_spec *spec[3] = {o->cfg.codec[0], o->cfg.codec[1], o->cfg.codec[2]};
    tc_ti_cfg c = o->cfg;
    uint32_t want = 0;
    for (int k = 0; k < 3; k++)
        want |= spec[k] ? 1u << k : 0;
    for (uint32_t mask = 0; mask < 8; mask++) {
        if (mask & ~want)
            continue;
        for (int k = 0; k < 3; k++)
            c.codec[k] = mask & (1u << k) ? spec[k] : NULL;
        tc_status st = tc_ti_check(m, &o->acc, &c, err);
        if (st && mask)
            return failed_with_codecs(st, mask, spec, err);
        if (st)
            return st;
    }
    return TC_OK;
}

/* What a train scenario gives before any collective is timed: the model,
 * the network, the accelerator, the replicas and their synchronisation. */
typedef struct ti_setup {
    tc_zoo_model m;
    tc_accel a;
    double cap;                  /* the accelerator's memory, 0: unknown */
    uint32_t M;                  /* model replicas */
    tc_sync_kind sk;
    tc_ti_group order[3];
} ti_setup;

/* Whether the TP groups of the split lie within scale-up nodes
 * (o->tp_in_node), and the refusal of one that does not with
 * --tp-in-node. */
static tc_status tp_in_node(const tc_scenario *s, const ti_setup *u, tc_trainiter_out *o, tc_err *err)
{
    const tc_topo *t = o->net.topo[0];
    o->tp_in_node = true;
    if (s->it_search || t->node_size <= 1 || s->tp <= 1)
        return TC_OK;
    comm_ctx *cc = tc_calloc(1, sizeof *cc);
    if (!cc)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    cc->dp = s->dp / u->M;
    cc->tp = s->tp;
    cc->pp = s->pp;
    cc->ep = s->ep;
    cc->p = o->ranks;
    cc->M = u->M;
    cc->merge = u->sk == TC_SYNC_DDP && u->M > 1;
    memcpy(cc->order, u->order, sizeof cc->order);
    tc_groups gr;
    tc_status st = groups_of(cc, TC_TI_TP, &gr, err);
    for (uint32_t i = 0; st == TC_OK && i < gr.ngroups * gr.size; i++)
        if (gr.members[i] / t->node_size != gr.members[i - i % gr.size] / t->node_size)
            o->tp_in_node = false;
    ctx_groups_free(cc);
    free(cc);
    if (st == TC_OK && !o->tp_in_node && s->tp_in_node)
        st = tc_fail(err, TC_EINVAL, "--tp %u spans more than one scale-up node of %u (--tp-in-node): give a TP "
                                     "degree dividing the node, with tp innermost in --order",
                     s->tp, t->node_size);
    return st;
}

/* Every check of a train scenario that depends on the scenario alone, and
 * what they derive (o->net built, o's model, accelerator, ranks, order,
 * codecs, o->acc and the iteration's configuration o->cfg, its memory
 * checked): the run makes them first, and
 * tc_scenario_check_run makes them before any run (tc_scn_train_check),
 * so that --print-scenario and a sweep's validation refuse what the run
 * would. */
static tc_status setup(const tc_scenario *s, tc_trainiter_out *o, ti_setup *u, tc_err *err)
{
    tc_zoo_model *m = &u->m;
    char src[256];
    tc_status st = tc_scenario_model(s, m, src, sizeof src, err);
    /* a CNN has no sequence and no attention: the flags changed nothing */
    if (st == TC_OK && m->arch == TC_MODEL_CNN && (s->it_seq || strcmp(s->attention, "eager") == 0))
        st = tc_fail(err, TC_EINVAL, "%s: --seq and --attention eager apply to transformers only (a CNN has no "
                                     "sequence and no attention)", m->name);
    if (st == TC_OK)
        st = tc_net_build(s, &o->net, err);
    if (st == TC_OK)
        st = tc_scenario_accel(s, &u->a, o->accel, sizeof o->accel, err);
    u->cap = 0;
    if (st == TC_OK) {
        st = tc_accel_memory_bytes(tc_accel_profile_name(s->accel), s->profiles_dir[0] ? s->profiles_dir : NULL,
                                   &u->cap, err);
        if (st == TC_EINVAL && strstr(err->msg, "memory_capacity")) {
            /* a profile without a capacity: memory is reported, not checked */
            st = TC_OK;
            u->cap = 0;
            o->mem_unknown = true;
        }
    }
    if (st == TC_OK)
        st = tc_accel_train_fields(tc_accel_profile_name(s->accel), s->profiles_dir[0] ? s->profiles_dir : NULL,
                                   &o->profile_achievable, &o->copy_engines, err);
    if (st == TC_OK && s->achievable < 0 && !(o->profile_achievable > 0))
        st = tc_fail(err, TC_EINVAL, "--achievable profile: the %s profile gives no achievable_fraction: give a "
                                     "fraction", tc_accel_profile_name(s->accel));
    if (st)
        return st;
    o->achievable = s->achievable < 0 ? o->profile_achievable : s->achievable;
    snprintf(o->model, sizeof o->model, "%s", m->name);
    o->cnn = m->arch == TC_MODEL_CNN;
    const tc_topo *t = o->net.topo[0];
    uint64_t ranks = (uint64_t)s->dp * s->tp * s->pp;
    /* --search chooses the split: degrees given beside a global batch (or an
     * ep beside either) would be ignored. Given: by a flag, whatever its
     * value (--ep 1 too), or another value than 1 from a file (a saved
     * scenario holds 1 for each) */
    if (s->it_search && (split_given(s, "parallel.ep", s->ep) ||
                         (s->global_batch && (split_given(s, "parallel.dp", s->dp) ||
                                              split_given(s, "parallel.tp", s->tp) ||
                                              split_given(s, "parallel.pp", s->pp) ||
                                              split_given(s, "iteration.micro_batches", s->micro_batches)))))
        return tc_fail(err, TC_EINVAL, "--search chooses the split (dp x tp x pp = the %u endpoints, every ep, m = G / "
                                       "(dp b)): with --global-batch give no --dp, --tp, --pp, --ep or --micro-batches "
                                       "(given: dp %u, tp %u, pp %u, ep %u, micro-batches %u); without it only --dp, "
                                       "--tp, --pp and --micro-batches, which give the global batch",
                       t->n_endpoints, s->dp, s->tp, s->pp, s->ep, s->micro_batches);
    if (s->it_search && !s->global_batch && ranks != t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "--search needs the global batch: --global-batch G (sequences per iteration), "
                                       "or degrees whose product is the %u endpoints to take it from",
                       t->n_endpoints);
    if (s->it_search)
        ranks = t->n_endpoints;
    if (ranks != t->n_endpoints)
        return tc_fail(err, TC_EINVAL,
                       "--dp %u x --tp %u x --pp %u = %llu ranks, but the topology has %u endpoints: the degrees' "
                       "product must equal them",
                       s->dp, s->tp, s->pp, (unsigned long long)ranks, t->n_endpoints);
    o->ranks = (uint32_t)ranks;
    u->sk = TC_SYNC_DDP;
    /* replicas: as given, else one per pod of a multidc */
    uint32_t M = s->replicas ? s->replicas : o->net.topo[0]->n_pods ? o->net.topo[0]->n_pods : 1;
    u->M = M;
    if (s->it_search && (M > 1 || strcmp(s->sync, "ddp")))
        return tc_fail(err, TC_EINVAL, "--search ranks the splits of one replica's job: not with --replicas or --sync "
                                       "(search without them, then time the split with them)");
    if (!tc_sync_parse(s->sync, &u->sk))
        return tc_fail(err, TC_EINVAL, "sync.strategy '%s': accepted are ddp, local-sgd, diloco, diloco-eager, "
                                       "diloco-delayed, streaming-diloco", s->sync);
    if (u->sk != TC_SYNC_DDP && M < 2)
        return tc_fail(err, TC_EINVAL, "--sync %s synchronises model replicas: give --replicas M of at least 2",
                       s->sync);
    if (s->dp % M)
        return tc_fail(err, TC_EINVAL, "--dp %u is not a multiple of --replicas %u: each replica holds dp / M of the "
                                       "data-parallel ranks", s->dp, M);
    if (M > 1 && s->ep > 1 && (s->dp / M) % s->ep)
        return tc_fail(err, TC_EINVAL, "--ep %u does not divide a replica's %u data-parallel ranks (--dp %u / "
                                       "--replicas %u)", s->ep, s->dp / M, s->dp, M);
    if (u->sk == TC_SYNC_STREAMING) {
        uint32_t L = m->layers ? m->layers : 1;
        if (s->fragments > L) /* sync_outer's fragments */
            return tc_fail(err, TC_EINVAL, "--fragments %u: %s has %u layers: give at most one fragment per layer",
                           s->fragments, m->name, L);
    }
    bool codec = false;
    for (int k = 0; k < 3; k++) {
        if (!s->it_codec[k][0])
            continue;
        if ((st = tc_codec_parse(s->it_codec[k], &o->codec_spec[k], err)))
            return st;
        /* The iteration times a codec's own collectives; the aggregation
         * paths are compress's (docs/MODEL.md, "Aggregation paths"). */
        if (o->codec_spec[k].path != TC_PATH_ALLREDUCE)
            return tc_fail(err, TC_EINVAL, "codec '%s': train --compress-* times the codec's own all-reduce or "
                                           "all-gather; path=%s is evaluated by topocc compress",
                           o->codec_spec[k].name, tc_codec_path_name(o->codec_spec[k].path));
        codec = true;
    }
    if (s->it_search && codec)
        return tc_fail(err, TC_EINVAL, "--search with --compress-*: time the split you want with compression, "
                                       "without --search");
    if (s->it_codec[TC_TI_CODEC_PP][0] && s->mode == TC_MODE_FLOW && s->it_cosim)
        return tc_fail(err, TC_EINVAL, "--compress-pp is not co-simulated in flow mode (its codec runs inside the "
                                       "send): add --no-cosim, or use steps or formula mode");
    if (!tc_par_order_parse(s->par_order, u->order))
        return tc_fail(err, TC_EINVAL, "parallel order '%s': expected tp, dp and pp each once, innermost first",
                       s->par_order);
    snprintf(o->order, sizeof o->order, "%s", s->par_order);
    if (!s->it_search && s->global_batch && (uint64_t)s->dp * s->micro_batches * s->micro_batch != s->global_batch)
        return tc_fail(err, TC_EINVAL,
                       "--global-batch %u is not --dp %u x --micro-batches %u x --micro-batch %u = %llu: give "
                       "micro-batches that divide the batch",
                       s->global_batch, s->dp, s->micro_batches, s->micro_batch,
                       (unsigned long long)s->dp * s->micro_batches * s->micro_batch);
    if (s->it_search && s->it_timeline[0])
        return tc_fail(err, TC_EINVAL, "--timeline writes one iteration: not with --search (run the split you want "
                                       "without --search)");
    if (!s->it_search && (s->capacity_factor > 0 || s->zipf > 0) && s->ep <= 1)
        return tc_fail(err, TC_EINVAL, "--capacity-factor and --zipf shape expert parallelism's all-to-alls: give --ep "
                                       "above 1 (a mixture of experts)");
    /* the iteration's configuration (the run's, o->cfg) and its checks */
    o->acc = (tc_ti_accel){.flops = u->a.flops, .mem_Bps = u->a.mem_Bps, .mem_bytes = u->cap,
                           .achievable = o->achievable};
    tc_ti_cfg *c = &o->cfg;
    tc_ti_cfg_default(c);
    c->dp = u->sk == TC_SYNC_DDP ? s->dp : s->dp / M;
    c->tp = s->tp;
    c->pp = s->pp;
    c->micro_batches = s->micro_batches;
    c->micro_batch = s->micro_batch;
    c->seq = s->it_seq;
    c->zero = (int)s->zero;
    c->seq_parallel = s->seq_parallel;
    c->recompute = recompute_of(s);
    c->grad_bytes = strcmp(s->grad_dtype, "fp32") == 0 ? 4 : 2;
    c->eager_attention = strcmp(s->attention, "eager") == 0;
    c->virtual_stages = s->vstages;
    c->overlap = s->it_overlap;
    c->contention.s_c = s->s_c;
    c->contention.s_m = s->s_m;
    c->dma = s->it_dma;
    c->comm_order = strcmp(s->comm_order, "forward") == 0 ? TC_TI_FORWARD_ORDER : TC_TI_BACKWARD_ORDER;
    c->ep = s->ep;
    for (int k = 0; k < 3; k++)
        c->codec[k] = s->it_codec[k][0] ? &o->codec_spec[k] : NULL;
    c->capacity_factor = s->capacity_factor;
    c->zipf = s->zipf;
    if ((st = tp_in_node(s, u, o, err)) || (!s->it_search && (st = cfg_check(m, o, err))))
        return st;
    /* the memory per device as the iteration estimates it (tc_ti_run's
     * tc_mem_estimate on the configuration the run times): a job that
     * does not fit is refused here too; a configuration the estimate
     * refuses is the run's to refuse, with the run's message */
    if (!s->it_search && !s->allow_oom && u->cap > 0) {
        tc_mem_cfg mc = {.dp = c->dp, .tp = c->tp, .pp = c->pp, .ep = c->ep, .zero = c->zero,
                         .micro_batch = c->micro_batch, .seq = c->seq, .seq_parallel = c->seq_parallel,
                         .recompute = c->recompute, .eager_attention = c->eager_attention,
                         .grad_bytes = c->grad_bytes > 0 ? c->grad_bytes : 2.0};
        tc_mem mem;
        tc_err e2;
        if (tc_mem_estimate(m, &mc, u->cap, &mem, &e2) == TC_OK && !mem.fits)
            return oom_refusal(o->model, &mem, err);
    }
    return TC_OK;
}

tc_status tc_scn_train_check(const tc_scenario *s, tc_err *err)
{
    tc_trainiter_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    ti_setup u;
    tc_status st = setup(s, o, &u, err);
    tc_trainiter_out_free(o);
    return st;
}

tc_status tc_run_trainiter(const tc_scenario *s, const tc_run_opts *ro, tc_trainiter_out **out, tc_err *err)
{
    (void)ro;
    *out = NULL;
    tc_trainiter_out *o = tc_calloc(1, sizeof *o);
    if (!o)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    ti_setup u;
    tc_status st = setup(s, o, &u, err);
    if (st) {
        tc_trainiter_out_free(o);
        return st;
    }
    tc_zoo_model m = u.m;
    uint32_t M = u.M;
    tc_sync_kind sk = u.sk;
    const tc_topo *t = o->net.topo[0];
    tc_ti_cfg *c = &o->cfg; /* made by setup */
    comm_ctx *cc = tc_calloc(1, sizeof *cc);
    if (!cc) {
        tc_trainiter_out_free(o);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    cc->cache = tc_calloc(1, sizeof *cc->cache);
    if (!cc->cache) {
        free(cc);
        tc_trainiter_out_free(o);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    cc->t = t;
    cc->dp = s->dp / M;
    cc->blame = o->blame;
    cc->have_blame = &o->have_blame;
    cc->out = o;
    cc->M = M;
    cc->merge = sk == TC_SYNC_DDP && M > 1;
    cc->tp = s->tp;
    cc->pp = s->pp;
    cc->ep = s->ep;
    cc->p = o->ranks;
    static const tc_ti_group algo_kind[3] = {TC_TI_DP, TC_TI_TP, TC_TI_EP};
    for (int k = 0; k < NKINDS; k++)
        cc->tmpl[k] = (tc_coll_req){.algo = TC_ALGO_AUTO};
    for (int k = 0; k < 3 && st == TC_OK; k++)
        if (!(cc->lib[algo_kind[k]] = strcmp(s->it_algo[k], "library") == 0))
            st = tc_algo_parse(s->it_algo[k], &cc->tmpl[algo_kind[k]], err);
    cc->tmpl[TC_TI_EDP] = cc->tmpl[TC_TI_DP];
    cc->lib[TC_TI_EDP] = cc->lib[TC_TI_DP];
    memcpy(cc->order, u.order, sizeof cc->order);
    if (st) {
        ctx_groups_free(cc);
        free(cc->cache);
        free(cc);
        tc_trainiter_out_free(o);
        return st;
    }
    tc_flow_opts fo;
    memset(&fo, 0, sizeof fo);
    tc_scenario_eval_opts(s, &o->net, 0, &cc->eo, &fo);
    cc->eo.flow = &fo;
    /* flow mode: one iteration co-simulates its network (a search times
     * each collective on its own, every group of its kind at once) */
    cc->cosim = cc->eo.mode == TC_MODE_FLOW && !s->it_search && s->it_cosim;
    o->cosim = cc->cosim;
    o->search = s->it_search;
    tc_tl_dag dag;
    tc_tl_init(&dag);
    if (o->search) {
        st = search(&m, o, s, cc, err);
    } else {
        st = compress_classes(&m, o, c, cc, err);
        c->keep = s->it_timeline[0] ? &dag : NULL;
        /* the algorithms listed are the reported run's (not compress's trials) */
        cc->uses = o->algos;
        cc->nuses = &o->nalgos;
        if (st == TC_OK)
            st = run_one(&m, &o->acc, c, cc, &o->res, err);
        c->keep = NULL;
        if (st == TC_OK && !cc->merge && M > 1) /* every replica's tokens */
            o->res.tokens_per_s *= M;
        if (st == TC_OK)
            st = sync_outer(s, &m, cc, o, sk, err);
    }
    o->evaluations += cc->evaluations;
    ctx_groups_free(cc);
    free(cc->cache->e);
    free(cc->cache);
    free(cc);
    if (st == TC_OK && !o->search && !o->res.fits && !s->allow_oom)
        st = oom_refusal(o->model, &o->res.mem, err);
    /* the trace only of a run that succeeds */
    if (st == TC_OK && !o->search && s->it_timeline[0])
        st = tc_tl_write_chrome(&dag, !c->overlap, s->it_timeline, stage_name, stream_name, NULL, err);
    tc_tl_free(&dag);
    if (st) {
        tc_trainiter_out_free(o);
        return st;
    }
    *out = o;
    return TC_OK;
}

void tc_trainiter_out_free(tc_trainiter_out *o)
{
    if (!o)
        return;
    tc_net_free(&o->net);
    free(o->splits);
    free(o);
}
