/*
 * iteration.c - one data-parallel training iteration with bucketed,
 * overlapped and possibly compressed gradient communication, and the time
 * to accuracy that follows (docs/MODEL.md, "Gradient compression, end to
 * end").
 *
 * The timeline follows PyTorch DDP (Li et al., "PyTorch Distributed:
 * Experiences on Accelerating Data Parallel Training", VLDB 2020): gradients
 * go into buckets (25 MiB) in reverse layer order, a bucket's collective is
 * launched as soon as its last gradient is computed, collectives run one
 * after the other in bucket order, and the optimizer step waits for all of
 * them. A communication hook (compression) encodes the bucket before its
 * collective and decodes the result after it; those kernels run on the
 * accelerator and so pause the backward pass for their duration (Agarwal et
 * al., MLSys 2022), unless they are offloaded to a separate engine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/workload.h"
#include "topocc/zoo.h"
#include "coll/algos.h"

static tc_status check_timeline_input(double fwd_s, double bwd_s, const tc_iter_bucket *b, size_t n, tc_err *err)
{
    if (!(fwd_s >= 0) || !(bwd_s >= 0) || !isfinite(fwd_s) || !isfinite(bwd_s))
        return tc_fail(err, TC_EINVAL, "forward and backward times must be finite and >= 0");
    double prev = 0;
    for (size_t i = 0; i < n; i++) {
        const tc_iter_bucket *x = &b[i];
        if (!(x->ready_frac > 0) || x->ready_frac > 1 || x->ready_frac < prev)
            return tc_fail(err, TC_EINVAL, "bucket %zu: ready_frac %g must be in (0, 1] and non-decreasing", i,
                           x->ready_frac);
        if (!(x->enc_s >= 0) || !(x->comm_s >= 0) || !(x->dec_s >= 0) || !isfinite(x->enc_s + x->comm_s + x->dec_s))
            return tc_fail(err, TC_EINVAL, "bucket %zu: encode, communication and decode times must be finite and >= 0",
                           i);
        prev = x->ready_frac;
    }
    return TC_OK;
}

/*
 * The iteration as a timeline DAG (topocc/timeline.h), one rank:
 *   - the forward pass, then the backward pass cut where a bucket becomes
 *     ready, its pieces preemptible (prio 1) on the compute stream;
 *   - each bucket's encode and decode at prio 0, so they run before any
 *     backward work and pause the piece that runs when they become ready;
 *     on the compute stream (codec on the accelerator, slowed by s_c while a
 *     collective is in flight) or, offloaded, on a copy-engine stream of
 *     their own (dma: s_c_dma, s_m_dma);
 *   - each bucket's collectives on the network stream, in order.
 * Stream policy TC_TL_PRIORITY: among ready tasks of equal prio, the one
 * ready first; decodes are added before encodes, so a decode and an encode
 * ready at the same instant run decode first. With no contention this is
 * the first-come, first-served codec engine described in workload.h, task
 * for task (tests/test_workload.c checks it against a direct simulation).
 */
enum { IT_NET = 0, IT_CODEC = 1 };

tc_status tc_iter_timeline(double fwd_s, double bwd_s, tc_iter_bucket *b, size_t n, bool offload,
                           const tc_tl_opts *contention, tc_iter_time *out, tc_err *err)
{
    tc_status st = check_timeline_input(fwd_s, bwd_s, b, n, err);
    if (st)
        return st;
    memset(out, 0, sizeof *out);
    tc_tl_opts o;
    if (contention)
        o = *contention;
    else
        memset(&o, 0, sizeof o);
    o.policy = TC_TL_PRIORITY;
    tc_tl_dag d;
    tc_tl_init(&d);
    /* the task after which bucket i is ready; its network task */
    uint32_t *ready = tc_calloc(n ? 2 * n : 1, sizeof *ready), *net = ready + n;
    if (!ready)
        return tc_fail(err, TC_EINTERNAL, "out of memory (timeline)");
    /* the backward pass in pieces of positive length, cut where a bucket
     * becomes ready; a bucket ready with the previous one (or with no
     * backward at all) waits on the same task */
    uint32_t last = tc_tl_add(&d, TC_TL_COMPUTE, 0, 0, fwd_s, "fwd");
    double prev = 0;
    for (size_t i = 0; i <= n; i++) {
        double upto = i < n ? b[i].ready_frac : 1.0;
        if ((upto - prev) * bwd_s > 0) {
            uint32_t k = tc_tl_add(&d, TC_TL_COMPUTE, 0, 0, (upto - prev) * bwd_s, "bwd");
            if (k == UINT32_MAX)
                break;
            d.task[k].prio = 1;
            d.task[k].preempt = true;
            tc_tl_dep(&d, k, last);
            last = k;
            prev = upto;
        }
        if (i < n)
            ready[i] = last;
    }
    uint32_t bwd_last = last, dec0 = (uint32_t)d.n, enc0 = dec0 + (uint32_t)n;
    tc_tl_kind ck = offload ? TC_TL_COMM : TC_TL_COMPUTE;
    uint32_t cs = offload ? IT_CODEC : 0;
    for (size_t i = 0; i < 2 * n; i++) {
        uint32_t k = tc_tl_add(&d, ck, 0, cs, i < n ? b[i].dec_s : b[i - n].enc_s, i < n ? "decode" : "encode");
        if (k != UINT32_MAX)
            d.task[k].dma = offload;
    }
    for (uint32_t i = 0; i < (uint32_t)n; i++)
        net[i] = tc_tl_add(&d, TC_TL_COMM, 0, IT_NET, b[i].comm_s, "bucket");
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        tc_tl_dep(&d, enc0 + i, ready[i]);
        tc_tl_dep(&d, net[i], enc0 + i);
        tc_tl_dep(&d, dec0 + i, net[i]);
    }
    tc_tl_result r = {0};
    st = tc_tl_run(&d, &o, &r, err);
    if (st == TC_OK) {
        const tc_tl_task *t = d.task;
        for (size_t i = 0; i < n; i++) {
            b[i].ready_at = t[ready[i]].end_s;
            b[i].enc_end = t[enc0 + i].end_s;
            b[i].comm_start = t[net[i]].start_s;
            b[i].comm_end = t[net[i]].end_s;
            b[i].done_at = t[dec0 + i].end_s;
            out->codec_s += b[i].enc_s + b[i].dec_s;
            out->comm_s += b[i].comm_s;
        }
        out->fwd_s = fwd_s;
        out->bwd_s = bwd_s;
        out->compute_s = fwd_s + bwd_s;
        out->bwd_end_s = t[bwd_last].end_s;
        out->iter_s = r.iter_s;
        out->exposed_s = out->iter_s - out->compute_s;
        out->serial_s = r.serial_s;
        out->slowdown_s = r.slowdown_s;
    }
    tc_tl_result_free(&r);
    tc_tl_free(&d);
    free(ready);
    return st;
}

tc_status tc_buckets_make(const tc_model *m, double bucket_bytes, tc_iter_bucket **out, size_t *n, tc_err *err)
{
    *out = NULL;
    *n = 0;
    if (!(m->params > 0) || m->layers == 0)
        return tc_fail(err, TC_EINVAL, "the model needs parameters and at least one layer");
    if (!(bucket_bytes > 0) || !isfinite(bucket_bytes))
        return tc_fail(err, TC_EINVAL, "the bucket size must be above 0");
    double layer = 4.0 * m->params / m->layers;
    /* Layers per bucket: the bucket closes once it holds at least bucket_bytes. */
    double per = ceil(bucket_bytes / layer - 1e-9);
    if (per < 1)
        per = 1;
    size_t nb = (size_t)ceil(m->layers / per);
    tc_iter_bucket *b = tc_calloc(nb, sizeof *b);
    if (!b)
        return tc_fail(err, TC_EINTERNAL, "out of memory (%zu buckets)", nb);
    uint32_t done = 0;
    for (size_t i = 0; i < nb; i++) {
        uint32_t k = (uint32_t)fmin(per, (double)(m->layers - done));
        done += k;
        b[i].bytes = layer * k;
        b[i].ready_frac = i + 1 == nb ? 1.0 : (double)done / m->layers;
    }
    *out = b;
    *n = nb;
    return TC_OK;
}

tc_status tc_buckets_ddp(const tc_model *m, double bucket_bytes, double first_bytes, tc_iter_bucket **out, size_t *n,
                         bool *by_tensor, tc_err *err)
{
    *out = NULL;
    *n = 0;
    *by_tensor = false;
    const tc_zoo_model *z = tc_zoo_find(m->name);
    if (!z || z->arch != TC_MODEL_TRANSFORMER)
        return tc_buckets_make(m, bucket_bytes, out, n, err);
    if (!(bucket_bytes > 0) || !isfinite(bucket_bytes) || !(first_bytes > 0))
        return tc_fail(err, TC_EINVAL, "the bucket size must be above 0");
    tc_codec_tensor *t;
    double *work, head;
    size_t nt;
    tc_status st = tc_model_tensor_work(m, &t, &work, &head, &nt, err);
    if (st)
        return st;
    if (nt == 0) {
        free(t);
        free(work);
        return tc_buckets_make(m, bucket_bytes, out, n, err);
    }
    /* the backward pass's matrix products, last layer first: a tied LM
     * head's first, then each tensor's as its gradient completes */
    double total = 0, wtotal = head;
    for (size_t k = 0; k < nt; k++) {
        total += (double)t[k].rows * (double)t[k].cols;
        wtotal += work[k];
    }
    tc_iter_bucket *b = tc_calloc(nt, sizeof *b);
    if (!b) {
        free(t);
        free(work);
        return tc_fail(err, TC_EINTERNAL, "out of memory (%zu buckets)", nt);
    }
    /* the bytes a tensor's elements stand for: the model's 4 x params over
     * its tensors (a zoo's tensors may differ from the cited count by a
     * little: bert-large's by 1.4%) */
    double scale = 4.0 * m->params / total, done = head, cur = 0;
    size_t nb = 0;
    for (size_t k = nt; k-- > 0;) {
        cur += (double)t[k].rows * (double)t[k].cols;
        done += work[k];
        if (cur * scale >= (nb == 0 ? first_bytes : bucket_bytes) || k == 0) {
            b[nb].bytes = cur * scale;
            /* (a bucket of norms alone before any product: at the start) */
            b[nb].ready_frac = k == 0 || !(wtotal > 0) ? 1.0 : fmin(1.0, fmax(done / wtotal, 1e-9));
            nb++;
            cur = 0;
        }
    }
    free(t);
    free(work);
    *out = b;
    *n = nb;
    *by_tensor = true;
    return TC_OK;
}

void tc_workload_compute(const tc_workload *w, double *fwd_s, double *bwd_s)
{
    double mfu = w->mfu > 0 ? w->mfu : w->model.mfu > 0 ? w->model.mfu : TC_DEFAULT_MFU;
    *fwd_s = w->model.flops_iter / 3.0 / (w->accel->flops * mfu);
    *bwd_s = 2 * *fwd_s;
}

/* Phase times by (how, op, size, pull): buckets are mostly of one size. */
typedef struct comm_cache {
    int n;
    tc_wire_how how[8];
    tc_op op[8];
    double bytes[8], pull[8], time[8];
    tc_algo algo[8];
} comm_cache;

/* chunk_bytes: a tree's chunk (tc_coll_req.chunk_bytes; 0: the algorithm's
 * default count) */
static tc_status eval_algo(const tc_topo *t, const tc_workload *w, tc_op op, tc_algo a, double bytes,
                           double chunk_bytes, double *time, tc_err *err)
{
    tc_coll_req req = {.op = op, .algo = a, .p = w->workers, .bytes = bytes, .chunk_bytes = chunk_bytes};
    tc_result r;
    tc_status st = tc_evaluate(t, &req, &w->eval, &r, err);
    if (st == TC_OK)
        *time = r.time_s;
    return st;
}

/* NCCL's ring where it is faster than r on the job's workers, one group of
 * them all (tc_library_nccl_ring: several GPUs on each of several nodes). */
static tc_status nccl_ring_if_faster(const tc_topo *t, const tc_workload *w, const tc_coll_req *req, tc_result *r,
                                     tc_err *err)
{
    uint32_t *all = malloc((size_t)w->workers * sizeof *all);
    if (!all)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    for (uint32_t i = 0; i < w->workers; i++)
        all[i] = i;
    tc_groups g = {.p = w->workers, .ngroups = 1, .size = w->workers, .members = all};
    double bytes = req->bytes;
    tc_status st = tc_library_nccl_ring(t, req, &g, &bytes, 1, &w->eval, r, err);
    free(all);
    return st;
}

/* The allreduce path's collectives under w->dp_algo (docs/MODEL.md,
 * "Gradient compression, end to end"): the policy of train's --dp-algo. */
static tc_status dp_time(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, tc_op op, double bytes,
                         double *time, tc_algo *algo, tc_err *err)
{
    bool lib = strcmp(w->dp_algo, "library") == 0;
    tc_coll_req req = {.algo = TC_ALGO_AUTO};
    tc_status st = TC_OK;
    if (!lib && w->dp_algo[0] && (st = tc_algo_parse(w->dp_algo, &req, err)))
        return st;
    req.op = op;
    req.p = w->workers;
    req.bytes = bytes;
    if (lib)
        tc_library_req(&req, op);
    tc_result r;
    st = tc_evaluate(t, &req, &w->eval, &r, err);
    if (st == TC_OK && lib)
        st = nccl_ring_if_faster(t, w, &req, &r, err);
    if (st && req.algo != TC_ALGO_AUTO) {
        char m[TC_ERR_LEN];
        snprintf(m, sizeof m, "%s", err->msg);
        return tc_fail(err, st, "--dp-algo %s for codec %s's %s of %.0f bytes: %s", w->dp_algo, c->name, tc_op_name(op),
                       bytes, m);
    }
    if (st == TC_OK) {
        *time = r.time_s;
        *algo = r.algo;
    }
    return st;
}

/* The requant ring: the ring the library runs, MPICH's form or, on
 * several GPUs of each of several nodes, NCCL's ring (one per channel, each
 * node left by all its NICs) where faster. */
static tc_status requant_ring_time(const tc_topo *t, const tc_workload *w, tc_op op, double bytes, double *time,
                                   tc_algo *algo, tc_err *err)
{
    tc_coll_req req = {.op = op, .algo = TC_ALGO_RING, .p = w->workers, .bytes = bytes};
    tc_result r;
    tc_status st = tc_evaluate(t, &req, &w->eval, &r, err);
    if (st == TC_OK)
        st = nccl_ring_if_faster(t, w, &req, &r, err);
    if (st == TC_OK) {
        *time = r.time_s;
        *algo = r.algo;
    }
    return st;
}

/* The switch path: the fastest in-network all-reduce valid on t. */
static tc_status switch_time(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, double bytes,
                             double *time, tc_algo *algo, tc_err *err)
{
    static const tc_algo inc[] = {TC_ALGO_NCCL_NVLS, TC_ALGO_NCCL_NVLS_TREE, TC_ALGO_NCCL_COLLNET_DIRECT,
                                  TC_ALGO_NCCL_COLLNET_CHAIN};
    *time = INFINITY;
    for (size_t i = 0; i < sizeof inc / sizeof inc[0]; i++) {
        double tk;
        if (!tc_coll_valid(TC_OP_ALLREDUCE, inc[i], w->workers, t, NULL))
            continue;
        tc_status st = eval_algo(t, w, TC_OP_ALLREDUCE, inc[i], bytes, 0, &tk, err);
        if (st)
            return st;
        if (tk < *time) {
            *time = tk;
            *algo = inc[i];
        }
    }
    if (!isinf(*time))
        return TC_OK;
    char ok[128];
    size_t at = 0;
    ok[0] = '\0';
    for (int p = 0; p < TC_PATH_COUNT && at < sizeof ok; p++)
        if (p != TC_PATH_SWITCH && tc_codec_path_valid(c->kind, (tc_codec_path)p)) {
            int n = snprintf(ok + at, sizeof ok - at, "%s%s", at ? ", " : "", tc_codec_path_name((tc_codec_path)p));
            at += n > 0 ? (size_t)n : 0;
        }
    return tc_fail(err, TC_EINVAL,
                   "codec %s: path=switch needs switches that reduce and multicast: a Clos with sharp=1 "
                   "(nccl-collnet-chain, nccl-collnet-direct) or scale-up nodes with node_reduce=1 (nccl-nvls), "
                   "none of which can run %u workers on this topology; accepted paths for %s here: %s",
                   c->name, w->workers, tc_codec_kind_name(c->kind), ok);
}

static tc_status ps_time(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, double push, double pull,
                         double *time, tc_err *err)
{
    tc_sched *s = NULL;
    tc_status st = tc_ps_build(w->workers, tc_codec_servers(c, w->workers), push, pull, &s, err);
    if (st == TC_OK)
        st = tc_eval_sched(t, s, &w->eval, time, err);
    tc_sched_free(s);
    return st;
}

static tc_status phase_time(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, comm_cache *cc,
                            const tc_wire_phase *ph, double *time, tc_algo *algo, tc_err *err)
{
    for (int i = 0; i < cc->n; i++)
        if (cc->how[i] == ph->how && cc->op[i] == ph->op && cc->bytes[i] == ph->size && cc->pull[i] == ph->pull) {
            *time = cc->time[i];
            *algo = cc->algo[i];
            return TC_OK;
        }
    tc_status st = TC_OK;
    if (ph->how == TC_WIRE_AUTO) {
        st = dp_time(t, w, c, ph->op, ph->size, time, algo, err);
    } else if (ph->how == TC_WIRE_RING) {
        st = requant_ring_time(t, w, ph->op, ph->size, time, algo, err);
    } else if (ph->how == TC_WIRE_TREE) {
        /* cut as the library's tree is (NCCL's chunk), so that it and the
         * plain all-reduce pay their chunks alike */
        *algo = TC_ALGO_DBTREE;
        st = eval_algo(t, w, ph->op, *algo, ph->size, TC_LIBRARY_TREE_CHUNK, time, err);
    } else if (ph->how == TC_WIRE_SWITCH) {
        st = switch_time(t, w, c, ph->size, time, algo, err);
    } else {
        *algo = TC_ALGO_DIRECT;
        st = ps_time(t, w, c, ph->size, ph->pull, time, err);
    }
    if (st)
        return st;
    int k = cc->n < 8 ? cc->n++ : 7;
    cc->how[k] = ph->how;
    cc->op[k] = ph->op;
    cc->bytes[k] = ph->size;
    cc->pull[k] = ph->pull;
    cc->time[k] = *time;
    cc->algo[k] = *algo;
    return TC_OK;
}

/* What one worker sends in a phase, the most any worker does: a collective
 * its size times the nccl-tests bus factor; a switch's all-reduce its
 * vector once (up to the switch); ps, a server's worker its pushes to the
 * S - 1 other servers and its shard's pull to the p - 1 other workers, or a
 * worker without a server all its pushes. */
static double phase_sent(const tc_wire_phase *ph, uint32_t p, uint32_t S)
{
    switch (ph->how) {
    case TC_WIRE_SWITCH: return ph->size;
    case TC_WIRE_PS: {
        double host = ph->size * (S - 1) / S + ph->pull * (p - 1) / S;
        return S < p && ph->size > host ? ph->size : host;
    }
    default: return ph->size * tc_op_busbw_factor(ph->op, p);
    }
}

/*
 * Per-tensor PowerSGD (powerSGD_hook) needs each bucket's tensors. A
 * transformer's buckets are whole tensors (tc_buckets_ddp), a CNN's
 * equal-layer slices of the model, which cut through real tensors; so the
 * model's tensors (tc_model_tensors, in DDP's order: last registered
 * first) are laid end to end over the same bytes, and each
 * bucket carries, pro rata to the share of each tensor it covers, that
 * tensor's floats on the wire: its elements if it is all-reduced
 * uncompressed, else its P (rows r') and Q (cols r'). The model's total is
 * exactly the sum over its tensors. sz[i][0..2]: bucket i's uncompressed,
 * P and Q floats; *have false (sz untouched) for a model without shapes.
 */
static tc_status shaped_floats(const tc_workload *w, const tc_codec_spec *c, const tc_iter_bucket *b, size_t nb,
                               double (*sz)[3], bool *have, tc_err *err)
{
    tc_codec_tensor *t;
    size_t nt;
    *have = false;
    tc_status st = tc_model_tensors(&w->model, &t, &nt, err);
    if (st || nt == 0)
        return st;
    double total_t = 0, total_b = 0;
    for (size_t k = 0; k < nt; k++)
        total_t += (double)t[k].rows * (double)t[k].cols;
    for (size_t i = 0; i < nb; i++)
        total_b += b[i].bytes;
    memset(sz, 0, nb * sizeof *sz);
    double pos = 0, lo = 0, hi = nb ? b[0].bytes / total_b : 1;
    size_t i = 0;
    for (size_t k = nt; k-- > 0;) {
        double e = (double)t[k].rows * (double)t[k].cols, s0 = pos / total_t, s1 = (pos + e) / total_t;
        uint32_t r = tc_codec_powersgd_rank(c, t[k].rows, t[k].cols);
        double f[3] = {r ? 0 : e, (double)t[k].rows * r, (double)t[k].cols * r};
        pos += e;
        for (;;) {
            double share = (fmin(s1, hi) - fmax(s0, lo)) / (s1 - s0);
            if (share > 0)
                for (int q = 0; q < 3; q++)
                    sz[i][q] += share * f[q];
            if (s1 <= hi || i + 1 >= nb)
                break;
            i++;
            lo = hi;
            hi = i + 1 == nb ? 1.0 : hi + b[i].bytes / total_b;
        }
    }
    free(t);
    *have = true;
    return TC_OK;
}

tc_status tc_workload_iteration(const tc_topo *t, const tc_workload *w, const tc_codec_spec *c, double codec_Bps,
                                tc_codec_iter *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    out->codec = *c;
    out->path = c->path;
    if (!w->accel)
        return tc_fail(err, TC_EINVAL, "no accelerator given");
    if (w->workers < 2 || w->workers > t->n_endpoints)
        return tc_fail(err, TC_EINVAL, "%u workers: expected 2 to %u (the topology's endpoints)", w->workers,
                       t->n_endpoints);
    tc_status cst = tc_codec_check_workers(c, w->workers, err);
    if (cst)
        return cst;
    out->servers = tc_codec_servers(c, w->workers);
    for (uint32_t k = 0; k < out->servers && k < TC_ITER_SERVERS_LISTED; k++) {
        uint32_t r = tc_codec_server_worker(k, out->servers, w->workers);
        out->server_ep[k] = w->eval.rank_map ? w->eval.rank_map[r] : r;
    }
    double fwd, bwd;
    tc_workload_compute(w, &fwd, &bwd);
    if (!(fwd >= 0) || !isfinite(fwd))
        return tc_fail(err, TC_EINVAL, "the model's compute time is not finite (FLOPs %g)", w->model.flops_iter);
    tc_iter_bucket *b;
    size_t nb;
    bool by_tensor;
    tc_status st = tc_buckets_ddp(&w->model, w->bucket_bytes > 0 ? w->bucket_bytes : TC_DDP_BUCKET_BYTES,
                                  TC_DDP_FIRST_BUCKET_BYTES, &b, &nb, &by_tensor, err);
    if (st)
        return st;
    double (*sz)[3] = NULL;
    bool shaped = false;
    if (tc_codec_per_tensor(c->kind)) {
        sz = tc_calloc(nb, sizeof *sz);
        st = sz ? shaped_floats(w, c, b, nb, sz, &shaped, err) : tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    comm_cache cc = {0};
    uint64_t thr_d = 0;
    double thr = 0;
    for (size_t i = 0; i < nb && st == TC_OK; i++) {
        uint64_t d = (uint64_t)llround(b[i].bytes / 4);
        if (d == 0)
            d = 1;
        if ((st = tc_codec_fits(c, d, err)) != TC_OK)
            break;
        tc_codec_wire wc;
        memset(&wc, 0, sizeof wc);
        tc_codec_wire_cost(c, d, w->workers, &wc);
        if (shaped) {
            for (int q = 0; q < 3; q++)
                wc.size[q] = wc.phase[q].size = 4 * sz[i][q]; /* the allreduce path: a phase per collective */
            wc.bits_per_coord = 8 * (wc.size[0] + wc.size[1] + wc.size[2]) / (double)d;
        }
        if (wc.nphases < 1 || wc.nphases > 4) {
            st = tc_fail(err, TC_EINTERNAL, "codec %s: %u phases per bucket", c->name, wc.nphases);
            break;
        }
        uint32_t launched = 0;
        for (uint32_t k = 0; k < wc.nphases && st == TC_OK; k++) {
            const tc_wire_phase *ph = &wc.phase[k];
            double tk = 0;
            tc_algo a = TC_ALGO_AUTO;
            if (ph->size > 0) {
                st = phase_time(t, w, c, &cc, ph, &tk, &a, err);
                launched++;
            }
            b[i].comm_s += tk;
            out->coll_bytes += ph->size + ph->pull;
            out->sent_bytes += phase_sent(ph, w->workers, wc.servers);
            if (i == 0 && k == 0) {
                out->op = ph->op;
                out->bits_per_coord = wc.bits_per_coord;
            }
            if (i == 0 && launched == 1 && ph->size > 0)
                out->algo = a; /* the first phase that carries something */
        }
        /* collectives per bucket: those with something to carry, at most */
        if (launched > out->collectives)
            out->collectives = launched;
        /* Encode + decode time: the bucket's float32 bytes at the codec's
         * throughput, split evenly between the two. FP32 does no codec work
         * on its all-reduce (its servers add on ps). */
        if (c->kind != TC_CODEC_FP32 || c->path != TC_PATH_ALLREDUCE) {
            if (codec_Bps > 0) {
                thr = codec_Bps;
            } else if (d != thr_d) {
                thr = tc_codec_accel_throughput(c, w->accel, d, w->workers);
                thr_d = d;
            }
            if (!(thr > 0)) {
                st = tc_fail(err, TC_EINTERNAL, "codec %s: no throughput on %s", c->name, w->accel->name);
                break;
            }
            if (i == 0)
                out->codec_Bps = thr;
            double s = isinf(thr) ? 0 : b[i].bytes / thr;
            b[i].enc_s = b[i].dec_s = s / 2;
        }
    }
    if (st == TC_OK)
        st = tc_iter_timeline(fwd, bwd, b, nb, w->offload, &w->contention, &out->t, err);
    out->nbuckets = nb;
    free(b);
    free(sz);
    /* PowerSGD's first `start` steps: the hooks' plain all-reduce, an fp32
     * iteration */
    if (st == TC_OK && c->start > 0 && tc_codec_plain_step(c, 0)) {
        tc_codec_spec fp32;
        tc_codec_defaults(TC_CODEC_FP32, &fp32);
        tc_codec_iter plain;
        st = tc_workload_iteration(t, w, &fp32, 0, &plain, err);
        out->plain_iter_s = plain.t.iter_s;
        out->plain_steps = c->start;
    }
    return st;
}

void tc_tta_compute_ci(const double *iter_s, const double *ratio, const double *lo, const double *hi, size_t n,
                       double baseline_steps, long i_bf16, long i_fp32, tc_tta *out)
{
    for (size_t i = 0; i < n; i++) {
        tc_tta *x = &out[i];
        bool never = !(ratio[i] >= 0);
        x->steps_ratio = ratio[i];
        x->ratio_lo = never ? NAN : lo ? lo[i] : ratio[i];
        x->ratio_hi = never ? NAN : hi ? hi[i] : ratio[i];
        x->steps = never ? NAN : baseline_steps * ratio[i];
        x->tta_s = never ? NAN : iter_s[i] * x->steps;
        /* the same association as tta_s: a ratio with no interval gives
         * lo = tta = hi exactly */
        x->tta_lo_s = never ? NAN : iter_s[i] * (baseline_steps * x->ratio_lo);
        x->tta_hi_s = never ? NAN : iter_s[i] * (baseline_steps * x->ratio_hi);
    }
    for (size_t i = 0; i < n; i++) {
        tc_tta *x = &out[i];
        double b = i_bf16 >= 0 ? out[i_bf16].tta_s : NAN, f = i_fp32 >= 0 ? out[i_fp32].tta_s : NAN;
        bool ok = isfinite(b) && isfinite(x->tta_s);
        x->speedup_bf16 = ok ? b / x->tta_s : NAN;
        /* bf16's own time is exact: the interval comes from this ratio's
         * (a longer time, a lower speedup; tta_hi_s may be infinite). */
        x->speedup_bf16_lo = ok ? b / x->tta_hi_s : NAN;
        x->speedup_bf16_hi = ok ? (x->tta_lo_s > 0 ? b / x->tta_lo_s : INFINITY) : NAN;
        if ((long)i == i_bf16)
            x->speedup_bf16_lo = x->speedup_bf16_hi = 1.0;
        else if (x->ratio_lo == x->steps_ratio && x->ratio_hi == x->steps_ratio)
            x->speedup_bf16_lo = x->speedup_bf16_hi = x->speedup_bf16; /* no interval: exactly the point */
        x->speedup_fp32 = isfinite(f) && isfinite(x->tta_s) ? f / x->tta_s : NAN;
    }
}

void tc_tta_compute(const double *iter_s, const double *ratio, size_t n, double baseline_steps, long i_bf16,
                    long i_fp32, tc_tta *out)
{
    tc_tta_compute_ci(iter_s, ratio, NULL, NULL, n, baseline_steps, i_bf16, i_fp32, out);
}

double tc_tta_phased_s(double steps, double iter_s, double plain_steps, double plain_iter_s)
{
    if (!(steps > plain_steps))
        return steps * plain_iter_s;
    return plain_steps * plain_iter_s + (steps - plain_steps) * iter_s;
}

tc_verdict tc_verdict_of(double lo, double hi)
{
    if (isnan(lo) || isnan(hi))
        return TC_VERDICT_NEVER;
    if (lo > 1.0)
        return TC_VERDICT_FASTER;
    if (hi < 1.0)
        return TC_VERDICT_SLOWER;
    return TC_VERDICT_SAME;
}

const char *tc_verdict_name(tc_verdict v)
{
    static const char *names[] = {"baseline", "faster", "slower", "indistinguishable", "never"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

double tc_crossover_bw(const double *bw, const double *speedup, size_t n, double threshold)
{
    if (n == 0 || !(speedup[0] > threshold))
        return 0;
    size_t k = 0;
    while (k + 1 < n && speedup[k + 1] > threshold)
        k++;
    if (k + 1 == n)
        return INFINITY;
    /* speedup[k] > threshold >= speedup[k + 1]: where log(speedup / threshold)
     * crosses 0, on log bw. */
    double s1 = log(speedup[k] / threshold);
    double s2 = isfinite(speedup[k + 1]) && speedup[k + 1] > 0 ? log(speedup[k + 1] / threshold) : -INFINITY;
    if (!isfinite(s2))
        return bw[k];
    double f = s1 / (s1 - s2);
    return exp(log(bw[k]) + f * (log(bw[k + 1]) - log(bw[k])));
}

size_t tc_sweep_default_rates(double *rates)
{
    static const double gbps[] = {10, 25, 50, 100, 200, 400, 800, 1600};
    for (size_t i = 0; i < 8; i++)
        rates[i] = gbps[i] * 1e9 / 8;
    return 8;
}
