/*
 * trainiter.c - one training iteration of a dp x tp x pp job as a timeline
 * DAG (topocc/trainiter.h; docs/MODEL.md, "Training: one iteration").
 *
 * The model is cut into units: the embedding, each transformer block and
 * the LM head (+ final norm, loss) of a transformer, each weight layer of a
 * CNN. Virtual stage k (k = c p + r, chunk c of rank r) holds a run of
 * blocks: L / (p v) each, the first virtual stages taking the remainder;
 * the embedding sits on the first, the head on the last.
 *
 * The pipeline skeleton is tc_tl_pipeline_1f1b's, built with zero-length
 * forward and backward "markers": each marker is then preceded on its rank's
 * compute stream (by priority) by the chain of per-unit tasks it stands for,
 * whose first task inherits the marker's dependencies (the incoming send)
 * and whose last task the marker waits for (the outgoing send waits for the
 * marker). So the 1F1B order, the interleaving and the sends are exactly the
 * timeline's, and the detail inside a micro-batch (TP collectives, FSDP
 * gathers, DDP buckets ready layer by layer) hangs on it.
 *
 * Compute is a roofline per unit and micro-batch: max(FLOPs / (peak x
 * achievable), bytes / memory bandwidth); the rules and their sources are in
 * docs/MODEL.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/trainiter.h"

#define MIB 1048576.0
/* PyTorch DDP: bucket_cap_mb = 25 (bucket_bytes_cap = int(bucket_cap_mb *
 * 1024 * 1024)) and the first bucket dist._DEFAULT_FIRST_BUCKET_BYTES =
 * c10d kDefaultFirstBucketBytes = 1024 * 1024 (torch/nn/parallel/
 * distributed.py, torch/csrc/distributed/c10d/reducer.hpp). */
#define DDP_BUCKET_BYTES (25.0 * MIB)
#define DDP_FIRST_BUCKET_BYTES (1.0 * MIB)
/* Mixed-precision Adam state per parameter (ZeRO, Figure 1: 2 + 2 + 12,
 * the gradients' 2 being gb bytes), read and written once by the optimizer
 * step. */
#define OPT_BYTES_PER_PARAM(gb) (2.0 * (TC_BYTES_PARAM16 + (gb) + TC_BYTES_ADAM))

/* Communication streams of a rank. */
enum { S_DP = 0, S_TP = 1, S_PP = 2, S_AG = 3, S_EP = 4 };

typedef enum { U_EMB, U_LAYER, U_HEAD, U_CNN } ukind;

typedef struct unit {
    ukind kind;
    double fwd_s, bwd_s;
    double params;        /* on the device (its TP shard, its experts' EP shard) */
    double eparams;       /* of which expert parameters */
    size_t t0, nt;        /* its tensors' element counts: tsz[t0 .. t0 + nt) */
} unit;

typedef struct bucket {
    double elems;         /* parameters (device shard) */
    size_t last_unit;     /* the unit whose backward completes it (the lowest) */
    size_t hi_unit;       /* the highest unit it holds tensors of */
    bool expert;          /* expert parameters: reduced over the EDP group */
    bool shaped;          /* w below: a per-tensor codec's collectives from its tensors */
    tc_codec_wire w;
} bucket;

typedef struct cached {
    tc_op op;
    tc_ti_group g;
    double bytes, t;
} cached;

typedef struct ctx {
    const tc_ti_cfg *c;
    const tc_ti_accel *a;
    tc_ti_comm_fn fn;
    void *ud;
    tc_err *err;
    tc_tl_dag d;
    unit *u;
    size_t nu;
    double *tsz;
    uint8_t *tex;         /* tensor is an expert's (ep > 1) */
    tc_codec_tensor *tshp; /* one copy of it as powerSGD_hook views it (its device shard) */
    uint32_t *tcopies;    /* the copies the entry stands for (a layer's experts) */
    size_t ntsz, captsz;
    size_t *vbeg;         /* virtual stage k: units vbeg[k] .. vbeg[k+1] */
    bucket *bk;           /* buckets of virtual stage k: bk[bbeg[k] .. bbeg[k+1]) */
    size_t *bbeg;
    size_t nbk;
    cached *cache;
    size_t ncache, capcache;
    double *tbytes;       /* bytes of each communication task (nccl-tests size) */
    uint8_t *tops, *tgrps; /* its operation and groups (tc_op, tc_ti_group) */
    size_t captb;
    double gbytes;        /* bytes per gradient element */
    double act_bytes;     /* b s h 2: a TP collective */
    double send_elems;    /* a PP send's 16-bit elements: b s h, or b (s / tp) h with
                             sequence parallelism */
    double a2a_bytes;     /* an EP all-to-all: the rank's tokens x top_k x h x 2 */
    uint32_t ep, edp;     /* expert parallelism (1: none), dp / ep */
    double load;          /* the busiest EP rank's tokens over the even share (moe_load) */
    bool tied;            /* a tied embedding */
    double emb_elems;     /* its elements on a device (V h / tp) */
    double *opt_s;        /* each rank's optimizer step */
    uint32_t *lastbk;     /* each bucket's last task before its update (its collective, or
                             the backward that completed it when there is none) */
    uint32_t *upd;        /* each bucket's last update task (optimizer, parameter all-gather) */
    uint32_t *enc;        /* each bucket's DP codec encode, issued in the backward (dp_encode) */
    uint32_t *opt_task;   /* each rank's optimizer step (backward order) */
    uint32_t *nf_first, *nf_last; /* each rank's look-ahead forward (next_forward) */
    uint32_t *cur_mk;     /* each rank's first forward in this iteration (its marker) */
    uint32_t *fc_lo, *fc_hi; /* the tasks of that forward's chain: [fc_lo, fc_hi) (the
                             look-ahead repeats them) */
    double send_s;        /* one PP send */
    double pp_bytes;      /* one PP send's bytes on the wire (2 send_elems, or its codec's) */
    int32_t unit_prio;    /* the priority of the compute unit being built */
    tc_status st;
} ctx;

const char *tc_ti_group_name(tc_ti_group g)
{
    switch (g) {
    case TC_TI_TP: return "tp";
    case TC_TI_DP: return "dp";
    case TC_TI_PP: return "pp";
    case TC_TI_EP: return "ep";
    case TC_TI_EDP: return "edp";
    case TC_TI_EMB: return "emb";
    case TC_TI_OUTER: return "outer";
    }
    return "?";
}

bool tc_par_order_parse(const char *s, tc_ti_group dim[3])
{
    static const char *names[3] = {"tp", "dp", "pp"};
    static const tc_ti_group gs[3] = {TC_TI_TP, TC_TI_DP, TC_TI_PP};
    bool seen[3] = {false, false, false};
    for (int k = 0; k < 3; k++) {
        int f = -1;
        for (int i = 0; i < 3; i++)
            if (strncmp(s, names[i], 2) == 0)
                f = i;
        if (f < 0 || seen[f] || s[2] != (k < 2 ? '-' : '\0'))
            return false;
        seen[f] = true;
        dim[k] = gs[f];
        s += 3;
    }
    return true;
}

static uint32_t rank_of(const tc_ti_group order[3], const uint32_t deg[3], const uint32_t co[3])
{
    uint32_t r = 0, stride = 1;
    for (int k = 0; k < 3; k++) {
        r += co[order[k]] * stride;
        stride *= deg[order[k]];
    }
    return r;
}

uint32_t tc_ti_rank(const tc_ti_group order[3], uint32_t dp, uint32_t tp, uint32_t pp, uint32_t d, uint32_t t,
                    uint32_t p)
{
    const uint32_t deg[3] = {tp, dp, pp}, co[3] = {t, d, p};
    return rank_of(order, deg, co);
}

tc_status tc_ti_group_members(const tc_ti_group order[3], uint32_t dp, uint32_t tp, uint32_t pp, uint32_t ep,
                              tc_ti_group g, uint32_t *members, uint32_t *size, tc_err *err)
{
    ep = ep > 1 ? ep : 1;
    if (dp == 0 || tp == 0 || pp == 0 || dp % ep)
        return tc_fail(err, TC_EINVAL, "groups of dp %u x tp %u x pp %u with ep %u: degrees must be >= 1 and ep must "
                       "divide dp", dp, tp, pp, ep);
    if ((uint64_t)dp * tp * pp > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "groups of dp %u x tp %u x pp %u: too many ranks", dp, tp, pp);
    bool seen[3] = {false, false, false};
    for (int k = 0; k < 3; k++) {
        if (order[k] > TC_TI_PP || seen[order[k]])
            return tc_fail(err, TC_EINVAL, "parallel order: tp, dp and pp each once");
        seen[order[k]] = true;
    }
    /* deg and co indexed by TC_TI_TP, TC_TI_DP, TC_TI_PP (0, 1, 2) */
    const uint32_t deg[3] = {tp, dp, pp};
    uint32_t edp = dp / ep, n = 0;
    if (g == TC_TI_PP) {
        if (pp < 2)
            return tc_fail(err, TC_EINVAL, "no pipeline send with one stage");
        uint32_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 1};
        members[0] = rank_of(order, deg, c0);
        members[1] = rank_of(order, deg, c1);
        *size = 2;
        return TC_OK;
    }
    if (g == TC_TI_EMB) {
        if (pp < 2)
            return tc_fail(err, TC_EINVAL, "no embedding group with one stage");
        for (uint32_t d = 0; d < dp; d++)
            for (uint32_t t = 0; t < tp; t++) {
                uint32_t c0[3] = {t, d, 0}, c1[3] = {t, d, pp - 1};
                members[n++] = rank_of(order, deg, c0);
                members[n++] = rank_of(order, deg, c1);
            }
        *size = 2;
        return TC_OK;
    }
    uint32_t sz = g == TC_TI_TP ? tp : g == TC_TI_DP ? dp : g == TC_TI_EP ? ep : g == TC_TI_EDP ? edp : 0;
    if (sz == 0)
        return tc_fail(err, TC_EINVAL, "group kind %d: expected tp, dp, pp, ep or edp", (int)g);
    uint32_t nt = g == TC_TI_TP ? 1 : tp;
    uint32_t no = g == TC_TI_DP ? 1 : g == TC_TI_EP ? edp : g == TC_TI_EDP ? ep : dp;
    for (uint32_t p = 0; p < pp; p++)
        for (uint32_t t = 0; t < nt; t++)
            for (uint32_t o = 0; o < no; o++)
                for (uint32_t i = 0; i < sz; i++) {
                    uint32_t co[3];
                    co[TC_TI_TP] = g == TC_TI_TP ? i : t;
                    co[TC_TI_DP] = g == TC_TI_TP ? o : g == TC_TI_DP ? i : g == TC_TI_EP ? i + ep * o : o + ep * i;
                    co[TC_TI_PP] = p;
                    members[n++] = rank_of(order, deg, co);
                }
    *size = sz;
    return TC_OK;
}

const char *tc_ti_stream_name(uint32_t s)
{
    switch (s) {
    case S_DP: return "dp";
    case S_TP: return "tp";
    case S_PP: return "pp";
    case S_AG: return "fsdp all-gather";
    case S_EP: return "ep all-to-all";
    case UINT32_MAX: return "compute";
    }
    return "communication";
}

void tc_ti_cfg_default(tc_ti_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->dp = c->tp = c->pp = 1;
    c->micro_batches = 1;
    c->micro_batch = 1;
    c->recompute = TC_RECOMPUTE_NONE;
    c->overlap = true;
    tc_tl_opts_default(&c->contention);
}

/* ---- inputs -------------------------------------------------------------- */

bool tc_ti_codec_elementwise(const tc_codec_spec *c)
{
    return c && (c->kind == TC_CODEC_FP16 || c->kind == TC_CODEC_BF16 || c->kind == TC_CODEC_INT8 ||
                 c->kind == TC_CODEC_INT4);
}

static tc_status check(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, tc_err *err)
{
    if (c->codec[TC_TI_CODEC_DP] && c->zero != 0)
        return tc_fail(err, TC_EINVAL, "compressing DP gradients (%s) needs ZeRO 0: the codecs replace DDP's "
                       "all-reduce (a communication hook), not ZeRO's reduce-scatter", c->codec[TC_TI_CODEC_DP]->name);
    for (int k = TC_TI_CODEC_PP; k <= TC_TI_CODEC_EP; k++)
        if (c->codec[k] && !tc_ti_codec_elementwise(c->codec[k]))
            return tc_fail(err, TC_EINVAL, "%s compresses %s elementwise only: accepted are fp16, bf16, int8, int4 "
                           "(got %s)", k == TC_TI_CODEC_PP ? "pp" : "ep",
                           k == TC_TI_CODEC_PP ? "activations" : "tokens", c->codec[k]->name);
    if (c->codec[TC_TI_CODEC_DP] && c->dp < 2)
        return tc_fail(err, TC_EINVAL, "compressing DP gradients (%s) needs dp above 1 (a replica's data-parallel "
                       "ranks): with one there is no gradient all-reduce", c->codec[TC_TI_CODEC_DP]->name);
    if (c->codec[TC_TI_CODEC_PP] && c->pp < 2)
        return tc_fail(err, TC_EINVAL, "compressing pipeline sends (%s) needs pp above 1",
                       c->codec[TC_TI_CODEC_PP]->name);
    if (c->codec[TC_TI_CODEC_EP] && c->ep < 2)
        return tc_fail(err, TC_EINVAL, "compressing expert all-to-alls (%s) needs ep above 1",
                       c->codec[TC_TI_CODEC_EP]->name);
    if (c->dp == 0 || c->tp == 0 || c->pp == 0)
        return tc_fail(err, TC_EINVAL, "parallel degrees dp=%u tp=%u pp=%u: each must be at least 1", c->dp, c->tp,
                       c->pp);
    if (c->micro_batches == 0 || c->micro_batch == 0)
        return tc_fail(err, TC_EINVAL, "%u micro-batches of %u: expected at least 1 micro-batch of at least 1",
                       c->micro_batches, c->micro_batch);
    if (c->zero < 0 || c->zero > 3)
        return tc_fail(err, TC_EINVAL, "invalid ZeRO stage %d: expected 0 (DDP), 1, 2 or 3 (FSDP FULL_SHARD)", c->zero);
    if (c->recompute != TC_RECOMPUTE_NONE && c->recompute != TC_RECOMPUTE_SELECTIVE &&
        c->recompute != TC_RECOMPUTE_FULL)
        return tc_fail(err, TC_EINVAL, "invalid recomputation %d: expected none, selective or full", (int)c->recompute);
    if (!(a->flops > 0) || !isfinite(a->flops) || !(a->mem_Bps > 0) || !isfinite(a->mem_Bps))
        return tc_fail(err, TC_EINVAL, "accelerator: peak FLOP/s and memory bandwidth must be finite and > 0");
    if (!(a->achievable > 0 && a->achievable <= 1))
        return tc_fail(err, TC_EINVAL, "accelerator: achievable fraction of peak %g: expected in (0, 1]",
                       a->achievable);
    if (!(a->mem_bytes >= 0) || !isfinite(a->mem_bytes))
        return tc_fail(err, TC_EINVAL, "accelerator: memory capacity must be bytes >= 0 (0: not checked)");
    if (!(c->bucket_bytes >= 0) || !isfinite(c->bucket_bytes) || !(c->grad_bytes >= 0) || !isfinite(c->grad_bytes))
        return tc_fail(err, TC_EINVAL, "bucket and gradient element sizes must be bytes >= 0 (0: the defaults)");
    uint32_t v = c->virtual_stages ? c->virtual_stages : 1;
    if (!(c->capacity_factor >= 0) || !isfinite(c->capacity_factor) || !(c->zipf >= 0) || !isfinite(c->zipf))
        return tc_fail(err, TC_EINVAL, "capacity factor %g and routing skew %g: expected finite numbers >= 0 (0: "
                       "dropless, uniform)", c->capacity_factor, c->zipf);
    if (c->ep > 1) {
        if (m->arch != TC_MODEL_TRANSFORMER || m->experts < 2)
            return tc_fail(err, TC_EINVAL, "%s has no experts: expert parallelism (ep %u) needs a mixture-of-experts "
                           "model (e.g. mixtral-8x7b)", m->name, c->ep);
        if (m->experts % c->ep)
            return tc_fail(err, TC_EINVAL, "%s: expert-parallel degree %u must divide its %u experts", m->name, c->ep,
                           m->experts);
        if (c->dp % c->ep)
            return tc_fail(err, TC_EINVAL, "expert-parallel degree %u must divide the data-parallel degree %u (expert "
                           "groups lie inside the DP groups, as in Megatron-LM)", c->ep, c->dp);
    }
    /* The timeline's size: per unit and micro-batch a forward and a
     * backward, the TP collectives (2 a direction, 4 with sequence
     * parallelism, again with full recomputation), the EP all-to-alls
     * (2 a direction, again with full recomputation), FSDP's two gathers
     * and a reduce-scatter (dense and expert apart); two markers per
     * micro-batch and virtual stage. Measured: about 3.3 us and 270 bytes a
     * task (the run and its bookkeeping), so 3e6 tasks are some 10 s and
     * 0.8 GB. */
    {
        double rec = c->recompute == TC_RECOMPUTE_FULL ? 1.5 : 1;
        double per = 2;
        if (c->tp > 1)
            per += 2 * (c->seq_parallel ? 4 : 2) * rec;
        if (c->ep > 1)
            per += 2 * 2 * rec;
        if (c->zero == 3)
            per += 3 * (c->ep > 1 ? 2 : 1);
        double tasks = (double)c->micro_batches * ((double)(m->layers + 2) * per + 2.0 * c->pp * v);
        if (tasks > 3.0e6)
            return tc_fail(err, TC_EINVAL, "%u micro-batches x %u layers%s is too large a timeline (about %.3g tasks, "
                           "at most 3e6: some 10 s and 0.8 GB): give fewer micro-batches (a larger micro-batch)",
                           c->micro_batches, m->layers, c->pp > 1 ? " over the stages" : "", tasks);
    }
    if (m->arch == TC_MODEL_CNN) {
        if (c->tp > 1 || c->pp > 1 || v > 1)
            return tc_fail(err, TC_EINVAL, "%s: a CNN is trained data-parallel only: expected tp=1 pp=1 (got tp=%u "
                           "pp=%u%s)", m->name, c->tp, c->pp, v > 1 ? ", virtual stages" : "");
        if (c->seq_parallel || c->recompute != TC_RECOMPUTE_NONE)
            return tc_fail(err, TC_EINVAL, "%s: sequence parallelism and recomputation are modelled for transformers "
                           "only", m->name);
        return TC_OK;
    }
    if (m->heads % c->tp)
        return tc_fail(err, TC_EINVAL, "%s: tensor-parallel degree %u must divide its %u heads", m->name, c->tp,
                       m->heads);
    /* Megatron-LM splits the key/value heads (query groups) over TP too:
     * Attention.__init__, num_query_groups_per_partition =
     * divide(num_query_groups, world_size), which asserts divisibility
     * (NVIDIA/Megatron-LM megatron/core/transformer/attention.py at commit
     * 00c2c0ad) */
    if (m->kv_heads && m->kv_heads % c->tp)
        return tc_fail(err, TC_EINVAL, "%s: tensor-parallel degree %u must divide its %u key/value heads (query "
                       "groups), as Megatron-LM splits them", m->name, c->tp, m->kv_heads);
    if (c->pp > m->layers)
        return tc_fail(err, TC_EINVAL, "%s: pipeline degree %u exceeds its %u layers", m->name, c->pp, m->layers);
    if ((uint64_t)c->pp * v > m->layers)
        return tc_fail(err, TC_EINVAL, "%s: %u stages x %u virtual stages exceeds its %u layers", m->name, c->pp, v,
                       m->layers);
    if (v > 1 && c->micro_batches % c->pp)
        return tc_fail(err, TC_EINVAL, "interleaved pipeline: %u micro-batches is not a multiple of the %u stages "
                       "(Megatron-LM's interleaved schedule needs one)", c->micro_batches, c->pp);
    return TC_OK;
}

/* The busiest EP rank's share of the routed tokens over the even share
 * 1/ep. Expert i (from 1) is chosen with probability ~ 1/i^zipf (0:
 * uniform); each token takes top_k distinct experts, so expert i holds
 * the token with probability pi_i = min(1, c p_i), c such that the pi_i
 * add up to top_k (probability-proportional-to-size sampling without
 * replacement, Sampford's design, whose selection probability is n Z_i
 * for relative sizes Z_i at most 1/n: SAS/STAT SURVEYSELECT, "Sampford's
 * PPS Method"; an expert above that is taken with every token, the rest
 * share the remaining picks in proportion: assumed), and receives pi_i /
 * top_k of the routed tokens, never more than one copy of each token.
 * Rank k holds experts k E/ep .. (k+1) E/ep - 1 (Megatron-LM's local
 * experts are contiguous). With a capacity factor C each expert takes at
 * most C/E of the tokens and its buffer is padded to that (Switch
 * Transformer): every rank then sends and computes C x the even share,
 * whatever the skew (tokens above capacity are dropped). Dropless (C = 0):
 * the busiest rank's share, which bounds the all-to-all (its ingress) and
 * its experts' compute. */
static double moe_load(uint32_t E, uint32_t ep, uint32_t top_k, double cap, double zipf)
{
    if (cap > 0)
        return cap;
    double *pi = malloc(E * sizeof *pi);
    if (!pi || E == 0)
        return free(pi), 1;
    uint32_t k = top_k >= 1 && top_k <= E ? top_k : 1;
    /* water-filling: the experts taken with every token (pi = 1) are the
     * first ones (the largest p); the others pi = (k - ncert) p_i / (the
     * sum of their p) */
    double tail = 0;
    for (uint32_t i = 1; i <= E; i++)
        tail += pow(i, -zipf);
    uint32_t cert = 0;
    while (cert < k && (k - cert) * pow(cert + 1, -zipf) / tail > 1) {
        tail -= pow(cert + 1, -zipf);
        cert++;
    }
    for (uint32_t i = 1; i <= E; i++)
        pi[i - 1] = i <= cert ? 1 : (k - cert) * pow(i, -zipf) / tail;
    double best = 0;
    for (uint32_t r = 0; r < ep; r++) {
        double x = 0;
        for (uint32_t i = r * (E / ep); i < (r + 1) * (E / ep); i++)
            x += pi[i] / k;
        if (x > best)
            best = x;
    }
    free(pi);
    return best * ep;
}

/* ---- communication ------------------------------------------------------- */

static double comm_time(ctx *x, tc_op op, tc_ti_group g, double bytes)
{
    for (size_t i = 0; i < x->ncache; i++)
        if (x->cache[i].op == op && x->cache[i].g == g && x->cache[i].bytes == bytes)
            return x->cache[i].t;
    if (x->st)
        return 0;
    double t = 0;
    if (!x->fn) {
        x->st = tc_fail(x->err, TC_EINVAL, "a %s of %.0f bytes over the %s group needs a communication model (none "
                        "given)", tc_op_name(op), bytes, tc_ti_group_name(g));
        return 0;
    }
    tc_status st = x->fn(x->ud, op, g, bytes, &t, x->err);
    if (st) {
        x->st = st;
        return 0;
    }
    if (!(t >= 0) || !isfinite(t)) {
        x->st = tc_fail(x->err, TC_EINVAL, "the communication model gave %g s for a %s of %.0f bytes (%s): expected "
                        "a finite time >= 0", t, tc_op_name(op), bytes, tc_ti_group_name(g));
        return 0;
    }
    if (x->ncache == x->capcache) {
        size_t cap = x->capcache ? 2 * x->capcache : 16;
        cached *p = realloc(x->cache, cap * sizeof *p);
        if (!p) {
            x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (communication cache)");
            return 0;
        }
        x->cache = p;
        x->capcache = cap;
    }
    x->cache[x->ncache++] = (cached){op, g, bytes, t};
    return t;
}

/* A communication task's size, operation and groups (the flow model
 * needs them). */
static void set_meta(ctx *x, uint32_t task, double bytes, tc_op op, tc_ti_group g)
{
    if (task == UINT32_MAX || x->st)
        return;
    if (task >= x->captb) {
        size_t cap = x->captb ? x->captb : 256;
        while (cap <= task)
            cap *= 2;
        double *p = realloc(x->tbytes, cap * sizeof *p);
        if (p)
            x->tbytes = p;
        uint8_t *o = p ? realloc(x->tops, cap) : NULL;
        if (o)
            x->tops = o;
        uint8_t *gg = o ? realloc(x->tgrps, cap) : NULL;
        if (!p || !o || !gg) {
            x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (timeline)");
            return;
        }
        x->tgrps = gg;
        memset(p + x->captb, 0, (cap - x->captb) * sizeof *p);
        memset(x->tops + x->captb, 0, cap - x->captb);
        memset(x->tgrps + x->captb, 0, cap - x->captb);
        x->captb = cap;
    }
    x->tbytes[task] = bytes;
    x->tops[task] = (uint8_t)op;
    x->tgrps[task] = (uint8_t)g;
}

static uint32_t add_comm(ctx *x, uint32_t rank, uint32_t stream, tc_op op, tc_ti_group g, double bytes,
                         const char *name)
{
    double t = comm_time(x, op, g, bytes);
    if (x->st)
        return UINT32_MAX;
    uint32_t i = tc_tl_add(&x->d, TC_TL_COMM, rank, stream, t, name);
    set_meta(x, i, bytes, op, g);
    return i;
}

/* Encode + decode of d 16-bit elements by codec c for n workers on the
 * accelerator's roofline (tc_codec_accel_throughput, bytes of float32
 * input per second). */
static double codec_s(const ctx *x, const tc_codec_spec *c, double d, uint32_t n)
{
    tc_accel a = {.name = "", .mem_Bps = x->a->mem_Bps, .flops = x->a->flops};
    double thr = tc_codec_accel_throughput(c, &a, (uint64_t)d, n);
    return thr > 0 ? 4 * d / thr : 0;
}

/* An encode or decode compute task of rank (half of codec_s each), at
 * priority prio. */
static uint32_t codec_task(ctx *x, uint32_t rank, double dur, int32_t prio, const char *name)
{
    if (x->st)
        return UINT32_MAX;
    uint32_t t = tc_tl_add(&x->d, TC_TL_COMPUTE, rank, 0, dur, name);
    if (t != UINT32_MAX)
        x->d.task[t].prio = prio;
    return t;
}

/* Bucket i's DP codec encode, half the codec's time, on rank's compute
 * stream right after the backward task `after` that completes the bucket
 * (created next, so it is next in the stream's queue). Experts' buckets
 * without expert DP have no collective and no encode. */
static void dp_encode(ctx *x, uint32_t rank, size_t i, uint32_t after)
{
    if (x->bk[i].expert && x->edp < 2)
        return;
    const tc_codec_spec *cs = x->c->codec[TC_TI_CODEC_DP];
    uint32_t n = x->bk[i].expert ? x->edp : x->c->dp;
    uint32_t e = codec_task(x, rank, codec_s(x, cs, x->bk[i].elems, n) / 2, x->d.task[after].prio, "dp.encode");
    if (e == UINT32_MAX)
        return;
    tc_tl_dep(&x->d, e, after);
    x->enc[i] = e;
}

/* Wire bytes of an elementwise codec for d 16-bit elements sent once:
 * nothing is summed, so an integer codec's b bits go packed
 * (tc_codec_send_bytes). */
static double elementwise_bytes(const tc_codec_spec *c, double d)
{
    return tc_codec_send_bytes(c, (uint64_t)d);
}

/* ---- units --------------------------------------------------------------- */

static double roofline(const tc_ti_accel *a, double flops, double bytes)
{
    return fmax(flops / (a->flops * a->achievable), bytes / a->mem_Bps);
}

/* A tensor entry: elems on the device, copies of the rows x cols matrix
 * (shp) that per-tensor PowerSGD sees. */
static size_t push_tensor(ctx *x, double elems, bool expert, tc_codec_tensor shp, uint32_t copies)
{
    if (x->st)
        return 0;
    if (x->ntsz == x->captsz) {
        size_t cap = x->captsz ? 2 * x->captsz : 64;
        double *p = realloc(x->tsz, cap * sizeof *p);
        if (p)
            x->tsz = p;
        uint8_t *e = p ? realloc(x->tex, cap) : NULL;
        if (e)
            x->tex = e;
        tc_codec_tensor *m = e ? realloc(x->tshp, cap * sizeof *m) : NULL;
        if (m)
            x->tshp = m;
        uint32_t *c = m ? realloc(x->tcopies, cap * sizeof *c) : NULL;
        if (!c) {
            x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (tensors)");
            return 0;
        }
        x->tcopies = c;
        x->captsz = cap;
    }
    x->tsz[x->ntsz] = elems;
    x->tex[x->ntsz] = expert;
    x->tshp[x->ntsz] = shp;
    x->tcopies[x->ntsz] = copies ? copies : 1;
    return x->ntsz++;
}

/* A zoo tensor as powerSGD_hook views it (rows = shape[0], cols the
 * product of the others), shard of a TP rank: Megatron-LM's row-parallel
 * linears (attention output, MLP down: [in, out] split along in) and the
 * vocabulary-parallel embedding split their first dimension, its
 * column-parallel linears (Q, K, V, MLP gate and up, the LM head: split
 * along out) their second; a 1-D tensor its length (the iteration divides
 * every tensor by tp, as tc_ti counts a device's parameters). A dimension
 * that tp does not divide is rounded up. */
static tc_codec_tensor tp_matrix(const tc_tensor *k, double t)
{
    tc_codec_tensor m = {k->shape[0], 1};
    for (uint32_t i = 1; i < k->ndim; i++)
        m.cols *= k->shape[i];
    size_t n = strlen(k->name);
    bool row = k->ndim < 2 || strncmp(k->name, "embed.", 6) == 0 ||
               (n > 11 && strcmp(k->name + n - 11, ".out.weight") == 0) ||
               (n > 12 && strcmp(k->name + n - 12, ".down.weight") == 0);
    uint64_t *d = row ? &m.rows : &m.cols;
    *d = (uint64_t)ceil((double)*d / t);
    return m;
}

static double tensor_elems(const tc_tensor *t)
{
    double n = 1;
    for (uint32_t i = 0; i < t->ndim; i++)
        n *= (double)t->shape[i];
    return n;
}

/* Appends the tensors of d matching `which` (0 embedding, 1 block, 2 head) to
 * unit u, divided by t. */
static void unit_tensors(ctx *x, unit *u, const tc_zoo_model *m, const tc_zoo_derived *d, int which, double t)
{
    u->t0 = x->ntsz;
    for (size_t i = 0; i < d->ntensors; i++) {
        const tc_tensor *k = &d->tensors[i];
        int w = k->in_layer ? 1 : strncmp(k->name, "embed.", 6) == 0 ? 0 : 2;
        if (w != which)
            continue;
        bool ex = k->expert && x->ep > 1;
        double n = tensor_elems(k) * k->count / (which == 1 ? m->layers : 1) / t / (ex ? x->ep : 1);
        uint32_t copies = k->count / (which == 1 ? m->layers : 1) / (ex ? x->ep : 1);
        push_tensor(x, n, ex, tp_matrix(k, t), copies);
        u->params += n;
        if (ex)
            u->eparams += n;
    }
    u->nt = x->ntsz - u->t0;
}

/* Transformer units: embedding, L blocks, head. Rules (docs/MODEL.md):
 * a block's forward for b s tokens is b s (2 N_mm + 4 a d s) / t FLOPs
 * (the per-token form of tc_zoo_flops_token, one third of it), bytes its
 * 16-bit weight shard plus the activations it stores (Korthikanti Table 2);
 * the head's 2 b s N_head / t FLOPs, bytes its weights plus Megatron-LM's
 * output-layer and loss activations 4 s b h (1 + V/h) / t; the embedding is
 * a lookup, 4 s b h bytes (rows read, output written). Backward: twice the
 * forward's FLOPs and bytes, plus the forward once more with full
 * recomputation, plus the attention-score matmuls 4 b s^2 a d / t with
 * selective recomputation. */
static void transformer_units(ctx *x, const tc_zoo_model *m, const tc_zoo_derived *d, const tc_ti_accel *a,
                              double b, double s, uint32_t pp, uint32_t v)
{
    const tc_ti_cfg *c = x->c;
    double t = c->tp, h = m->hidden, L = m->layers;
    double ad = (double)m->heads * (double)(m->hidden / m->heads);
    double mm_layer = 0, mm_expert = 0;
    for (size_t i = 0; i < d->ntensors; i++) {
        const tc_tensor *k = &d->tensors[i];
        if (k->in_layer && k->matmul) {
            double n = tensor_elems(k) * k->count * (k->expert ? (double)m->top_k / m->experts : 1.0) / L;
            mm_layer += n;
            if (k->expert)
                mm_expert += n;
        }
    }
    double mm_head = d->matmul_active - L * mm_layer;
    /* the busiest EP rank computes load x its even share of the experts'
     * tokens (moe_load) */
    mm_layer += mm_expert * (x->load - 1);
    double score = 4.0 * b * s * s * ad / t;
    double f_layer = b * s * (2.0 * mm_layer + 4.0 * ad * s) / t;
    double f_head = 2.0 * b * s * mm_head / t;

    x->nu = m->layers + 2;
    x->u = tc_calloc(x->nu, sizeof *x->u);
    if (!x->u) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (units)");
        return;
    }
    unit *e = &x->u[0], *hd = &x->u[x->nu - 1];
    e->kind = U_EMB;
    unit_tensors(x, e, m, d, 0, t);
    double by = 4.0 * s * b * h;
    e->fwd_s = roofline(a, 0, by);
    e->bwd_s = roofline(a, 0, 2 * by);
    for (uint32_t l = 0; l < m->layers; l++) {
        unit *u = &x->u[1 + l];
        u->kind = U_LAYER;
        unit_tensors(x, u, m, d, 1, t);
        by = 2.0 * u->params + tc_act_layer_bytes(m, s, b, c->tp, c->seq_parallel, TC_RECOMPUTE_NONE,
                                                  c->eager_attention);
        double fb = 2 * f_layer, bb = 2 * by;
        if (c->recompute == TC_RECOMPUTE_FULL) {
            fb += f_layer;
            bb += by;
        } else if (c->recompute == TC_RECOMPUTE_SELECTIVE) {
            fb += score;
        }
        u->fwd_s = roofline(a, f_layer, by);
        u->bwd_s = roofline(a, fb, bb);
    }
    hd->kind = U_HEAD;
    unit_tensors(x, hd, m, d, 2, t);
    if (m->tied_embeddings && pp > 1) {
        /* Megatron-LM keeps a second copy of a tied embedding on the last stage */
        double n = (double)m->vocab * m->hidden / t;
        push_tensor(x, n, false, (tc_codec_tensor){(uint64_t)ceil((double)m->vocab / t), m->hidden}, 1);
        hd->nt++;
        hd->params += n;
    }
    by = 2.0 * hd->params + 4.0 * s * b * h * (1.0 + (double)m->vocab / h) / t;
    hd->fwd_s = roofline(a, f_head, by);
    hd->bwd_s = roofline(a, 2 * f_head, 2 * by);

    /* virtual stages: L / V blocks each, the first ones taking the remainder */
    uint32_t V = pp * v;
    x->vbeg = tc_calloc((size_t)V + 1, sizeof *x->vbeg);
    if (!x->vbeg) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (stages)");
        return;
    }
    size_t at = 1;
    for (uint32_t k = 0; k < V; k++) {
        x->vbeg[k] = k == 0 ? 0 : at;
        at += m->layers / V + (k < m->layers % V ? 1 : 0);
    }
    x->vbeg[V] = x->nu;
}

/* CNN units: each weight layer (convolution or fully connected) with its
 * bias and batch norm; its forward FLOPs are its share of the published
 * 2 x multiply-adds per sample in proportion to 2 x weights x output
 * positions (the shapes), bytes its 16-bit weights and outputs. */
static void cnn_units(ctx *x, const tc_zoo_model *m, const tc_zoo_derived *d, const tc_ti_accel *a, double b)
{
    size_t n = 0;
    double total = 0;
    for (size_t i = 0; i < d->ntensors; i++)
        if (d->tensors[i].act_elems > 0) {
            n++;
            total += 2.0 * tensor_elems(&d->tensors[i]) * d->tensors[i].act_elems / (double)d->tensors[i].shape[0];
        }
    x->nu = n;
    x->u = tc_calloc(n ? n : 1, sizeof *x->u);
    x->vbeg = tc_calloc(2, sizeof *x->vbeg);
    if (!x->u || !x->vbeg || n == 0) {
        x->st = tc_fail(x->err, n ? TC_EINTERNAL : TC_EINVAL, n ? "out of memory (units)" : "%s: no weight layers",
                        m->name);
        return;
    }
    x->vbeg[1] = n;
    size_t k = 0;
    unit *u = NULL;
    double out = 0, fl = 0;
    for (size_t i = 0; i <= d->ntensors; i++) {
        bool fresh = i == d->ntensors || d->tensors[i].act_elems > 0;
        if (fresh && u) {
            double flops = fl / total * 2.0 * m->macs_sample * b;
            double by = 2.0 * u->params + 2.0 * out * b;
            u->fwd_s = roofline(a, flops, by);
            u->bwd_s = roofline(a, 2 * flops, 2 * by);
            u->nt = x->ntsz - u->t0;
        }
        if (i == d->ntensors)
            break;
        const tc_tensor *t = &d->tensors[i];
        if (fresh) {
            u = &x->u[k++];
            u->kind = U_CNN;
            u->t0 = x->ntsz;
            out = t->act_elems;
            fl = 2.0 * tensor_elems(t) * t->act_elems / (double)t->shape[0];
        }
        if (u) {
            push_tensor(x, tensor_elems(t) * t->count, false, tp_matrix(t, 1), t->count);
            u->params += tensor_elems(t) * t->count;
        }
    }
}

/* A per-tensor codec's collectives for bucket b of the nti tensor entries
 * ti (PowerSGD: powerSGD_hook's three all-reduces, from each tensor's
 * matrix, tc_codec_wire_cost_shaped). */
static void bucket_shaped(ctx *x, bucket *b, const size_t *ti, size_t nti)
{
    const tc_codec_spec *cs = x->c->codec[TC_TI_CODEC_DP];
    if (!cs || !tc_codec_per_tensor(cs->kind) || x->st || nti == 0)
        return;
    size_t n = 0;
    for (size_t i = 0; i < nti; i++)
        n += x->tcopies[ti[i]];
    tc_codec_tensor *m = malloc(n * sizeof *m);
    if (!m) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (buckets)");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < nti; i++)
        for (uint32_t c = 0; c < x->tcopies[ti[i]]; c++)
            m[k++] = x->tshp[ti[i]];
    tc_codec_wire_cost_shaped(cs, m, n, b->expert ? x->edp : x->c->dp, &b->w);
    b->shaped = true;
    free(m);
}

/* DDP / ZeRO-1/2 buckets of each virtual stage: the stage's tensors in
 * reverse order, a bucket closed as soon as it reaches its cap (the tensor
 * that crosses it included, as PyTorch's compute_bucket_assignment_by_size
 * does); the rank's first bucket is capped at 1 MiB whatever the cap (DDP
 * buckets by [dist._DEFAULT_FIRST_BUCKET_BYTES, bucket_bytes_cap]:
 * pytorch/pytorch torch/nn/parallel/distributed.py, _ddp_init_helper, at
 * commit 0028a164), the others at the cap (25 MiB by default); a bucket
 * never spans two virtual stages. Rank r's
 * chunks are filled from its last (whose backward ends first) to its first. */
static void make_buckets(ctx *x, uint32_t pp, uint32_t v)
{
    uint32_t V = pp * v;
    x->bbeg = tc_calloc((size_t)V + 1, sizeof *x->bbeg);
    x->bk = tc_calloc(x->ntsz + 2 * (size_t)V, sizeof *x->bk);
    if (!x->bbeg || !x->bk) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (buckets)");
        return;
    }
    bool def = !(x->c->bucket_bytes > 0);
    double cap = def ? DDP_BUCKET_BYTES : x->c->bucket_bytes;
    /* buckets of stage k are stored in the order they are filled; bbeg in k order */
    size_t *cnt = tc_calloc(V, sizeof *cnt);
    bucket *tmp = tc_calloc(x->ntsz + 2 * (size_t)V, sizeof *tmp);
    if (!cnt || !tmp) {
        free(cnt);
        free(tmp);
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (buckets)");
        return;
    }
    size_t *start = tc_calloc(V, sizeof *start);
    size_t *list = start ? tc_calloc(x->ntsz + 1, sizeof *list) : NULL, nl = 0;
    if (!list) {
        free(start);
        free(cnt);
        free(tmp);
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (buckets)");
        return;
    }
    size_t nt = 0;
    for (uint32_t r = 0; r < pp; r++) {
        bool first = true;
        for (uint32_t c = v; c-- > 0;) {
            uint32_t k = c * pp + r;
            start[k] = nt;
            /* with expert parallelism the expert tensors have buckets of
             * their own (they are reduced over another group), filled after
             * the others */
            for (int ex = 0; ex < (x->ep > 1 ? 2 : 1); ex++) {
                bucket cur = {0, 0, 0, ex, false, {0}};
                bool open = false;
                nl = 0;
                for (size_t ui = x->vbeg[k + 1]; ui-- > x->vbeg[k];) {
                    const unit *u = &x->u[ui];
                    for (size_t ti = u->t0 + u->nt; ti-- > u->t0;) {
                        if (x->ep > 1 && x->tex[ti] != ex)
                            continue;
                        if (!open)
                            cur.hi_unit = ui;
                        cur.elems += x->tsz[ti];
                        cur.last_unit = ui;
                        list[nl++] = ti;
                        open = true;
                        double lim = !first                           ? cap
                                     : x->c->first_bucket_bytes > 0 ? x->c->first_bucket_bytes
                                                                    : DDP_FIRST_BUCKET_BYTES;
                        if (cur.elems * x->gbytes >= lim) {
                            bucket_shaped(x, &cur, list, nl);
                            tmp[nt++] = cur;
                            cur = (bucket){0, 0, 0, ex, false, {0}};
                            nl = 0;
                            open = false;
                            first = false;
                        }
                    }
                }
                if (open) {
                    bucket_shaped(x, &cur, list, nl);
                    tmp[nt++] = cur;
                    first = false;
                }
            }
            cnt[k] = nt - start[k];
        }
    }
    size_t o = 0;
    for (uint32_t k = 0; k < V; k++) {
        x->bbeg[k] = o;
        memcpy(x->bk + o, tmp + start[k], cnt[k] * sizeof *tmp);
        o += cnt[k];
    }
    x->bbeg[V] = o;
    x->nbk = o;
    free(cnt);
    free(tmp);
    free(start);
    free(list);
}

/* ---- the DAG ------------------------------------------------------------- */

typedef struct rankstate {
    uint32_t prev2[2];    /* ZeRO-3: compute tasks of the last two unit operations */
    uint32_t last_dp;     /* the rank's last gradient communication */
    uint32_t last_cmp;    /* the rank's last compute task */
} rankstate;

static void tp_comms(ctx *x, uint32_t rank, uint32_t *last, int bwd)
{
    const tc_ti_cfg *c = x->c;
    static const tc_op ar[4] = {TC_OP_ALLREDUCE, TC_OP_ALLREDUCE, TC_OP_ALLREDUCE, TC_OP_ALLREDUCE};
    /* sequence parallelism: an all-gather before attention and before the
     * MLP, a reduce-scatter after each, forward and backward alike
     * (Korthikanti et al.); all of one size, b s h 2 */
    static const tc_op sp[4] = {TC_OP_ALLGATHER, TC_OP_REDUCESCATTER, TC_OP_ALLGATHER, TC_OP_REDUCESCATTER};
    const tc_op *ops = c->seq_parallel ? sp : ar;
    int n = c->seq_parallel ? 4 : 2;
    for (int i = 0; i < n; i++) {
        uint32_t k = add_comm(x, rank, S_TP, ops[i], TC_TI_TP, x->act_bytes, bwd ? "tp.b" : "tp.f");
        tc_tl_dep(&x->d, k, *last);
        *last = k;
    }
}

/* A mixture-of-experts layer's token exchange: an all-to-all to dispatch
 * the tokens to their experts and one to combine the results, forward and
 * backward alike (the backward sends the gradients the same way). */
static void ep_comms(ctx *x, uint32_t rank, uint32_t *last, int bwd)
{
    const tc_codec_spec *cs = x->c->codec[TC_TI_CODEC_EP];
    double d = x->a2a_bytes / 2, half = cs ? codec_s(x, cs, d, 1) / 2 : 0;
    double wire = cs ? elementwise_bytes(cs, d) : x->a2a_bytes;
    int32_t prio = x->unit_prio; /* the compute unit's: its codec work runs in its place */
    for (int i = 0; i < 2; i++) {
        if (cs) { /* the tokens are encoded before the exchange, decoded after */
            uint32_t e = codec_task(x, rank, half, prio, "ep.encode");
            if (e == UINT32_MAX)
                return;
            tc_tl_dep(&x->d, e, *last);
            *last = e;
        }
        uint32_t k = add_comm(x, rank, S_EP, TC_OP_ALLTOALL, TC_TI_EP, wire, bwd ? "ep.b" : "ep.f");
        tc_tl_dep(&x->d, k, *last);
        *last = k;
        if (cs) {
            uint32_t e = codec_task(x, rank, half, prio, "ep.decode");
            if (e == UINT32_MAX)
                return;
            tc_tl_dep(&x->d, e, *last);
            *last = e;
        }
    }
}

/* A collective over the parameters of u, split into the dense part over
 * the DP group and the expert part over the EDP group (none when that
 * group is one rank); each waits on `after` and, when `gate` is given,
 * gates it. */
static uint32_t dp_split(ctx *x, uint32_t rank, uint32_t stream, tc_op op, double bytes_per, const unit *u,
                         uint32_t after, const char *name, uint32_t gate)
{
    uint32_t lastc = UINT32_MAX;
    double dense = u->params - u->eparams;
    for (int ex = 0; ex < 2; ex++) {
        double n = ex ? u->eparams : dense;
        if (!(n > 0) || (ex && x->edp < 2) || (!ex && x->c->dp < 2))
            continue;
        uint32_t k = add_comm(x, rank, stream, op, ex ? TC_TI_EDP : TC_TI_DP, bytes_per * n, name);
        if (after != UINT32_MAX)
            tc_tl_dep(&x->d, k, after);
        if (gate != UINT32_MAX)
            tc_tl_dep(&x->d, gate, k);
        lastc = k;
    }
    return lastc;
}

/* Forward order (P3, ByteScheduler): a gradient collective ranks by the
 * lowest unit it carries (the next forward needs it first) on a priority
 * stream, preempting those behind it (partitioned collectives). */
static void forward_first(ctx *x, uint32_t task, size_t unit)
{
    if (task == UINT32_MAX || x->c->comm_order != TC_TI_FORWARD_ORDER)
        return;
    tc_tl_task *t = &x->d.task[task];
    t->stream_policy = 1 + TC_TL_PRIORITY;
    t->prio = (int32_t)unit;
    t->preempt = true;
}

/* The chain of marker `mk` (virtual stage k, micro-batch j, backward b) on
 * its rank, at compute priority prio. */
static void chain(ctx *x, uint32_t mk, uint32_t k, uint32_t j, int b, int32_t prio, rankstate *rs, uint32_t *utask)
{
    const tc_ti_cfg *c = x->c;
    tc_tl_dag *d = &x->d;
    uint32_t rank = d->task[mk].rank, m = c->micro_batches;
    uint32_t nd = d->task[mk].ndeps;
    uint32_t deps[8];
    if (nd > 8) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "pipeline marker with %u dependencies", nd);
        return;
    }
    if (nd)
        memcpy(deps, d->task[mk].deps, nd * sizeof *deps);
    size_t u0 = x->vbeg[k], u1 = x->vbeg[k + 1];
    uint32_t last = UINT32_MAX;
    bool zero3 = c->zero == 3 && c->dp > 1;
    /* the DDP communication hook's encode runs on the compute stream as
     * soon as its bucket's last gradient is computed: PyTorch calls the
     * hook then and launches its kernels in the backward's stream, ahead
     * of the later layers' backward kernels (dp_encode); the buckets of a
     * stage are stored last unit first, the order of the backward */
    bool dp_hook = b && c->dp > 1 && c->zero < 3 && (c->zero == 2 || j == m - 1) && c->codec[TC_TI_CODEC_DP];
    size_t hb = x->bbeg[k], he = x->bbeg[k];
    /* the stage's expert buckets come after its dense ones (make_buckets),
     * each run last unit first: a cursor for each */
    while (he < x->bbeg[k + 1] && !x->bk[he].expert)
        he++;
    for (size_t q = 0; q < u1 - u0 && !x->st; q++) {
        size_t ui = b ? u1 - 1 - q : u0 + q;
        const unit *u = &x->u[ui];
        uint32_t t = tc_tl_add(d, TC_TL_COMPUTE, rank, 0, b ? u->bwd_s : u->fwd_s, b ? "bwd" : "fwd");
        if (t == UINT32_MAX)
            break;
        if (zero3) /* FSDP: gather the unit's parameters; issued once the unit
                    * operation two back has computed (one unit of prefetch) */
            dp_split(x, rank, S_AG, TC_OP_ALLGATHER, TC_BYTES_PARAM16, u, rs->prev2[0], "fsdp.ag", t);
        d->task[t].prio = x->unit_prio = prio;
        if (last == UINT32_MAX)
            for (uint32_t i = 0; i < nd; i++)
                tc_tl_dep(d, t, deps[i]);
        else
            tc_tl_dep(d, t, last);
        rs->prev2[0] = rs->prev2[1];
        rs->prev2[1] = t;
        utask[ui - u0] = t;
        rs->last_cmp = t;
        last = t;
        if (u->kind == U_LAYER && c->tp > 1) {
            /* full recomputation reruns the layer's forward inside its
             * backward task, and with it the forward's TP collectives */
            if (b && c->recompute == TC_RECOMPUTE_FULL)
                tp_comms(x, rank, &last, 0);
            tp_comms(x, rank, &last, b);
        }
        if (u->kind == U_LAYER && x->ep > 1) {
            if (b && c->recompute == TC_RECOMPUTE_FULL)
                ep_comms(x, rank, &last, 0);
            ep_comms(x, rank, &last, b);
        }
        if (dp_hook) {
            for (; hb < x->bbeg[k + 1] && !x->bk[hb].expert && x->bk[hb].last_unit == ui; hb++)
                dp_encode(x, rank, hb, t);
            for (; he < x->bbeg[k + 1] && x->bk[he].last_unit == ui; he++)
                dp_encode(x, rank, he, t);
        }
        if (b && zero3) {
            uint32_t r = dp_split(x, rank, S_DP, TC_OP_REDUCESCATTER, x->gbytes, u, t, "fsdp.rs", UINT32_MAX);
            if (r != UINT32_MAX)
                rs->last_dp = r;
        }
    }
    if (last != UINT32_MAX)
        tc_tl_dep(d, mk, last);
    /* buckets: after the last micro-batch's backward (ZeRO 0/1: gradients
     * accumulate locally), after every micro-batch's (ZeRO 2: the device
     * keeps only its 1/dp share of the gradients) */
    if (b && c->dp > 1 && c->zero < 3 && (c->zero == 2 || j == m - 1))
        for (size_t i = x->bbeg[k]; i < x->bbeg[k + 1]; i++) {
            tc_op op = c->zero == 0 ? TC_OP_ALLREDUCE : TC_OP_REDUCESCATTER;
            x->lastbk[i] = utask[x->bk[i].last_unit - u0];
            if (x->bk[i].expert && x->edp < 2)
                continue;
            uint32_t after = utask[x->bk[i].last_unit - u0];
            const tc_codec_spec *cs = c->codec[TC_TI_CODEC_DP];
            tc_ti_group gk = x->bk[i].expert ? TC_TI_EDP : TC_TI_DP;
            if (cs) {
                /* the DDP communication hook: encode after the bucket's
                 * last gradient, the codec's collectives, decode before
                 * the update (tc_codec_wire_cost) */
                uint32_t n = gk == TC_TI_EDP ? x->edp : c->dp;
                double half = codec_s(x, cs, x->bk[i].elems, n) / 2;
                int32_t prio = d->task[after].prio;
                tc_codec_wire w;
                if (x->bk[i].shaped) {
                    w = x->bk[i].w;
                } else {
                    if (!x->st)
                        x->st = tc_codec_fits(cs, (uint64_t)x->bk[i].elems, x->err);
                    if (x->st)
                        break;
                    tc_codec_wire_cost(cs, (uint64_t)x->bk[i].elems, n, &w);
                }
                uint32_t e = x->enc[i];
                if (e == UINT32_MAX) {
                    if (!x->st)
                        x->st = tc_fail(x->err, TC_EINTERNAL, "bucket %zu's encode was not issued", i);
                    break;
                }
                after = e;
                /* a collective with nothing to carry is not launched
                 * (per-tensor powersgd: a bucket of 1-D tensors only has
                 * no P or Q; one of compressed matrices only, nothing
                 * to send uncompressed) */
                bool first = true;
                for (uint32_t q = 0; q < w.collectives && q < 3; q++) {
                    if (!(w.size[q] > 0))
                        continue;
                    uint32_t r = add_comm(x, rank, S_DP, w.op, gk, w.size[q], "bucket");
                    if (r == UINT32_MAX)
                        break;
                    tc_tl_dep(d, r, after);
                    if (first)
                        forward_first(x, r, x->bk[i].last_unit);
                    first = false;
                    after = r;
                }
                uint32_t dc = codec_task(x, rank, half, prio, "dp.decode");
                if (dc == UINT32_MAX)
                    break;
                tc_tl_dep(d, dc, after);
                x->lastbk[i] = dc;
                rs->last_dp = dc;
                continue;
            }
            uint32_t r = add_comm(x, rank, S_DP, op, gk, x->gbytes * x->bk[i].elems, "bucket");
            tc_tl_dep(d, r, after);
            forward_first(x, r, x->bk[i].last_unit);
            x->lastbk[i] = r;
            rs->last_dp = r;
        }
    /* no gradient communication (dp 1): the update waits on the backward */
    if (b && j == m - 1 && c->dp < 2)
        for (size_t i = x->bbeg[k]; i < x->bbeg[k + 1]; i++)
            x->lastbk[i] = utask[x->bk[i].last_unit - u0];
}

/* A tied embedding with pp > 1 has a copy on the first stage (the input
 * embedding) and one on the last (the LM head); Megatron-LM all-reduces
 * their gradients over the embedding group once the gradients are
 * synchronized (finalize_model_grads, _allreduce_word_embedding_grads): one
 * all-reduce of V h / tp gradient elements on each of the two ranks, after
 * both ranks' gradient collectives; the updates of what it carries wait for
 * it. */
static void emb_allreduce(ctx *x, rankstate *rs, uint32_t pp, uint32_t v)
{
    tc_tl_dag *d = &x->d;
    double bytes = x->gbytes * x->emb_elems;
    uint32_t ends[2] = {0, pp - 1}, task[2];
    for (int e = 0; e < 2; e++) {
        task[e] = add_comm(x, ends[e], S_DP, TC_OP_ALLREDUCE, TC_TI_EMB, bytes, "emb.ar");
        if (task[e] == UINT32_MAX)
            return;
    }
    for (int e = 0; e < 2; e++)
        for (int o = 0; o < 2; o++) {
            uint32_t r = ends[o];
            if (rs[r].last_dp != UINT32_MAX)
                tc_tl_dep(d, task[e], rs[r].last_dp);
            for (uint32_t cc = 0; cc < v; cc++)
                for (size_t i = x->bbeg[cc * pp + r]; i < x->bbeg[cc * pp + r + 1]; i++)
                    if (x->lastbk[i] != UINT32_MAX)
                        tc_tl_dep(d, task[e], x->lastbk[i]);
            if (rs[r].last_cmp != UINT32_MAX)
                tc_tl_dep(d, task[e], rs[r].last_cmp);
        }
    for (int e = 0; e < 2; e++) {
        uint32_t r = ends[e];
        if (x->c->zero < 3) /* ZeRO-3's dp stream keeps FSDP's order */
            forward_first(x, task[e], e == 0 ? 0 : x->nu - 1);
        /* the optimizer (backward order) and the buckets holding the
         * embedding (stage 0's unit 0) or the head (the last unit) */
        rs[r].last_dp = task[e];
        for (uint32_t cc = 0; cc < v; cc++)
            for (size_t i = x->bbeg[cc * pp + r]; i < x->bbeg[cc * pp + r + 1]; i++) {
                size_t u = e == 0 ? 0 : x->nu - 1;
                if (x->bk[i].last_unit <= u && u <= x->bk[i].hi_unit)
                    x->lastbk[i] = task[e];
            }
    }
}

/* Forward order: each bucket of rank r updated after its collective (its
 * share of the optimizer step, by parameters), then (ZeRO 1/2) its
 * parameters all-gathered, in forward order on the priority stream. */
static void bucket_updates(ctx *x, uint32_t r, int32_t prio)
{
    const tc_ti_cfg *c = x->c;
    tc_tl_dag *d = &x->d;
    uint32_t pp = c->pp, v = c->virtual_stages ? c->virtual_stages : 1;
    double total = 0;
    for (uint32_t cc = 0; cc < v && !x->st; cc++) {
        uint32_t k = cc * pp + r;
        /* a stage's buckets are stored last unit first: update them in
         * the order they are reduced, the lowest units first */
        for (size_t n = x->bbeg[k + 1]; n-- > x->bbeg[k];) {
            const bucket *bk = &x->bk[n];
            double share = c->zero >= 1 ? bk->elems / (bk->expert ? x->edp : c->dp) : bk->elems;
            uint32_t opt = tc_tl_add(d, TC_TL_COMPUTE, r, 0, OPT_BYTES_PER_PARAM(x->gbytes) * share / x->a->mem_Bps,
                                     "optimizer");
            if (opt == UINT32_MAX)
                return;
            /* just before the look-ahead forward of its lowest unit
             * (next_forward: prio + 2 unit + 1) on the in-order stream */
            d->task[opt].prio = prio + 2 * (int32_t)bk->last_unit;
            if (x->lastbk[n] != UINT32_MAX)
                tc_tl_dep(d, opt, x->lastbk[n]);
            total += d->task[opt].dur_s;
            x->upd[n] = opt;
            if (c->dp > 1 && (c->zero == 1 || c->zero == 2) && !(bk->expert && x->edp < 2)) {
                uint32_t g = add_comm(x, r, S_DP, TC_OP_ALLGATHER, bk->expert ? TC_TI_EDP : TC_TI_DP,
                                      TC_BYTES_PARAM16 * bk->elems, "params.ag");
                tc_tl_dep(d, g, opt);
                forward_first(x, g, bk->last_unit);
                x->upd[n] = g;
            }
        }
    }
    x->opt_s[r] = total;
}

/* A look-ahead (probe tasks, left out of the figures): rank r's share of
 * the next iteration's first forward, its first virtual stage's units for
 * one micro-batch, each after the update of the buckets holding its
 * parameters (all of them: the optimizer, in backward order; ZeRO-3: the
 * optimizer), and on a later stage after the previous stage's look-ahead
 * and its send. Where it can start without stalling, less where the rank's
 * first forward started in this iteration, is the rank's period; the
 * iteration is the largest (figures). */
static void next_forward(ctx *x, uint32_t r, int32_t prio)
{
    tc_tl_dag *d = &x->d;
    uint32_t last = UINT32_MAX;
    x->nf_first[r] = UINT32_MAX;
    /* The buckets holding unit ui's parameters: only the first virtual
     * stage's (k = r; a bucket never spans two virtual stages), its dense
     * run then its expert run (make_buckets), each stored highest units
     * first, the units of consecutive buckets adjacent: a cursor from the
     * end of each run finds them in time linear in the units and buckets. */
    size_t seg[2][2] = {{x->bbeg[r], x->bbeg[r]}, {0, x->bbeg[r + 1]}};
    while (seg[0][1] < x->bbeg[r + 1] && !x->bk[seg[0][1]].expert)
        seg[0][1]++;
    seg[1][0] = seg[0][1];
    size_t cur[2] = {seg[0][1], seg[1][1]};
    for (size_t ui = x->vbeg[r]; ui < x->vbeg[r + 1] && !x->st; ui++) {
        uint32_t t = tc_tl_add(d, TC_TL_COMPUTE, r, 0, x->u[ui].fwd_s, "next.fwd");
        if (t == UINT32_MAX)
            return;
        d->task[t].prio = x->unit_prio = prio + 2 * (int32_t)ui + 1;
        d->task[t].probe = true;
        if (last != UINT32_MAX) {
            tc_tl_dep(d, t, last);
        } else {
            x->nf_first[r] = t;
            /* a later stage starts once the previous one has sent it the
             * activations (a probe send of the same time) */
            if (r > 0 && x->nf_last[r - 1] != UINT32_MAX) {
                uint32_t sd = x->send_s > 0 ? tc_tl_add(d, TC_TL_COMM, r - 1, S_PP, x->send_s, "next.send")
                                            : x->nf_last[r - 1];
                if (sd != UINT32_MAX && x->send_s > 0) {
                    set_meta(x, sd, x->pp_bytes, TC_OP_BROADCAST, TC_TI_PP);
                    d->task[sd].probe = true;
                    d->task[sd].prio = INT32_MAX;
                    tc_tl_dep(d, sd, x->nf_last[r - 1]);
                }
                if (sd != UINT32_MAX)
                    tc_tl_dep(d, t, sd);
            }
        }
        for (int e = 0; e < 2; e++) {
            size_t lo = seg[e][0];
            while (cur[e] > lo && x->bk[cur[e] - 1].hi_unit < ui)
                cur[e]--;
            size_t n0 = cur[e];
            while (n0 > lo && x->bk[n0 - 1].last_unit <= ui)
                n0--;
            for (size_t n = n0; n < cur[e]; n++)
                if (x->upd[n] != UINT32_MAX)
                    tc_tl_dep(d, t, x->upd[n]);
        }
        if (x->c->zero == 3 && x->c->dp > 1) {
            /* FSDP gathers the unit's parameters again before its forward
             * (probe all-gathers after the optimizer, queued behind the
             * iteration's own) */
            size_t n0 = d->n;
            dp_split(x, r, S_AG, TC_OP_ALLGATHER, TC_BYTES_PARAM16, &x->u[ui], x->opt_task[r], "next.ag", t);
            for (size_t i = n0; i < d->n; i++) {
                d->task[i].probe = true;
                d->task[i].prio = INT32_MAX;
            }
        }
        last = t;
        /* and its collectives, as the iteration's own forward runs them */
        size_t n0 = d->n;
        if (x->u[ui].kind == U_LAYER && x->c->tp > 1)
            tp_comms(x, r, &last, 0);
        if (x->u[ui].kind == U_LAYER && x->ep > 1)
            ep_comms(x, r, &last, 0);
        for (size_t i = n0; i < d->n; i++) {
            d->task[i].probe = true;
            if (d->task[i].kind == TC_TL_COMM) /* a codec task keeps its unit's place */
                d->task[i].prio = INT32_MAX;
        }
    }
    x->nf_last[r] = last;
}

static void build(ctx *x, uint32_t pp, uint32_t v)
{
    const tc_ti_cfg *c = x->c;
    tc_tl_dag *d = &x->d;
    uint32_t m = c->micro_batches, V = pp * v;
    /* a compressed send carries the codec's bytes; its encode and decode
     * run inside the send task (they delay the receiving stage, not the
     * sender's compute) */
    const tc_codec_spec *pc = c->codec[TC_TI_CODEC_PP];
    double send = x->send_s = pp > 1 ? comm_time(x, TC_OP_BROADCAST, TC_TI_PP, x->pp_bytes) +
                                           (pc ? codec_s(x, pc, x->send_elems, 1) : 0)
                                     : 0;
    if (x->st)
        return;
    tc_tl_pipe pipe = {.stages = pp, .micro = m, .chunks = v, .fwd_s = 0, .bwd_s = 0, .send_s = send,
                       .rank0 = 0, .stream = S_PP};
    size_t nix = (size_t)2 * m * V;
    uint32_t *ix = tc_calloc(nix, sizeof *ix);
    size_t maxu = 0;
    for (uint32_t k = 0; k < V; k++)
        if (x->vbeg[k + 1] - x->vbeg[k] > maxu)
            maxu = x->vbeg[k + 1] - x->vbeg[k];
    uint32_t *utask = tc_calloc(maxu ? maxu : 1, sizeof *utask);
    uint32_t *mk_of = NULL, *order = NULL, *cnt = tc_calloc(pp, sizeof *cnt);
    rankstate *rs = tc_calloc(pp, sizeof *rs);
    if (!ix || !utask || !cnt || !rs) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (pipeline)");
        goto out;
    }
    if ((x->st = tc_tl_pipeline_1f1b(d, &pipe, ix, x->err)) != TC_OK)
        goto out;
    size_t n0 = d->n;
    for (size_t i = 0; i < n0; i++)
        if (d->task[i].kind == TC_TL_COMM)
            set_meta(x, (uint32_t)i, x->pp_bytes, TC_OP_BROADCAST, TC_TI_PP);
    /* marker -> (k, j, b); each rank's markers in schedule (= index) order */
    mk_of = tc_calloc(n0, sizeof *mk_of);
    order = tc_calloc(nix, sizeof *order);
    if (!mk_of || !order) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (pipeline)");
        goto out;
    }
    for (size_t e = 0; e < nix; e++)
        mk_of[ix[e]] = (uint32_t)e;
    size_t no = 0;
    for (size_t i = 0; i < n0; i++)
        if (d->task[i].kind == TC_TL_COMPUTE)
            order[no++] = (uint32_t)i;
    for (uint32_t r = 0; r < pp; r++)
        rs[r] = (rankstate){{UINT32_MAX, UINT32_MAX}, UINT32_MAX, UINT32_MAX};
    for (size_t o = 0; o < no && !x->st; o++) {
        uint32_t mk = order[o], r = d->task[mk].rank, e = mk_of[mk];
        int32_t pos = (int32_t)cnt[r]++;
        d->task[mk].prio = 2 * pos + 1;
        uint32_t b = e & 1, kj = e >> 1, k = kj / m, j = kj % m;
        bool first = b == 0 && j == 0 && k == r;
        if (first) {
            x->cur_mk[r] = mk;
            x->fc_lo[r] = (uint32_t)d->n;
        }
        chain(x, mk, k, j, (int)b, 2 * pos, &rs[r], utask);
        if (first)
            x->fc_hi[r] = (uint32_t)d->n;
    }
    if (x->tied && pp > 1 && !x->st)
        emb_allreduce(x, rs, pp, v);
    /* optimizer step (memory-bound), after the rank's last gradient
     * communication; then (ZeRO 1/2) the all-gather of the updated
     * parameters, bucket by bucket. In forward order (ZeRO 0-2), each
     * bucket is updated as soon as it is reduced (P3's per-layer update). */
    bool per_bucket = c->comm_order == TC_TI_FORWARD_ORDER && c->zero < 3;
    for (uint32_t r = 0; r < pp && !x->st; r++) {
        if (per_bucket) {
            bucket_updates(x, r, 2 * (int32_t)cnt[r]);
            continue;
        }
        double params = 0, eparams = 0;
        for (uint32_t cc = 0; cc < v; cc++) {
            uint32_t k = cc * pp + r;
            for (size_t ui = x->vbeg[k]; ui < x->vbeg[k + 1]; ui++) {
                params += x->u[ui].params;
                eparams += x->u[ui].eparams;
            }
        }
        /* ZeRO shards the dense parameters' state over DP, the experts'
         * over EDP */
        double share = c->zero >= 1 ? (params - eparams) / c->dp + eparams / x->edp : params;
        uint32_t opt =
            tc_tl_add(d, TC_TL_COMPUTE, r, 0, OPT_BYTES_PER_PARAM(x->gbytes) * share / x->a->mem_Bps, "optimizer");
        if (opt == UINT32_MAX)
            break;
        d->task[opt].prio = 2 * (int32_t)cnt[r];
        if (rs[r].last_dp != UINT32_MAX)
            tc_tl_dep(d, opt, rs[r].last_dp);
        x->opt_s[r] = d->task[opt].dur_s;
        if (c->dp > 1 && (c->zero == 1 || c->zero == 2))
            for (uint32_t cc = v; cc-- > 0;) {
                uint32_t k = cc * pp + r;
                for (size_t i = x->bbeg[k]; i < x->bbeg[k + 1]; i++) {
                    if (x->bk[i].expert && x->edp < 2)
                        continue;
                    uint32_t g = add_comm(x, r, S_DP, TC_OP_ALLGATHER, x->bk[i].expert ? TC_TI_EDP : TC_TI_DP,
                                          TC_BYTES_PARAM16 * x->bk[i].elems, "params.ag");
                    tc_tl_dep(d, g, opt);
                    x->upd[i] = g;
                }
            }
        for (uint32_t cc = 0; cc < v; cc++)
            for (size_t i = x->bbeg[cc * pp + r]; i < x->bbeg[cc * pp + r + 1]; i++)
                if (x->upd[i] == UINT32_MAX)
                    x->upd[i] = opt;
        x->opt_task[r] = opt;
    }
    for (uint32_t r = 0; r < pp && !x->st; r++)
        next_forward(x, r, 2 * (int32_t)cnt[r]);
out:
    free(ix);
    free(utask);
    free(mk_of);
    free(order);
    free(cnt);
    free(rs);
}

/* ---- flow co-simulation: the timeline's external model ------------------- */

static tc_status ext_begin(void *ud, bool serial, tc_err *err)
{
    ctx *x = ud;
    return x->c->flow->begin(x->c->flow->ud, serial, err);
}

static tc_status ext_start(void *ud, uint32_t task, double t, tc_err *err)
{
    ctx *x = ud;
    const tc_tl_task *k = &x->d.task[task];
    /* a pipeline send goes up (to the next stage) forward: "SF..." and the
     * look-ahead's "next.send"; down backward: "SB..." */
    bool up = !(k->name[0] == 'S' && k->name[1] == 'B');
    return x->c->flow->start(x->c->flow->ud, task, (tc_op)x->tops[task], (tc_ti_group)x->tgrps[task],
                             x->tbytes[task], k->rank, up, t, err);
}

static tc_status ext_run(void *ud, double until, uint32_t *done, size_t cap, size_t *n, double *now, tc_err *err)
{
    ctx *x = ud;
    return x->c->flow->run(x->c->flow->ud, until, done, cap, n, now, err);
}

static bool ext_retry(void *ud)
{
    ctx *x = ud;
    return x->c->flow->retry && x->c->flow->retry(x->c->flow->ud);
}

/* ---- the run ------------------------------------------------------------- */

static void ctx_free(ctx *x)
{
    tc_tl_free(&x->d);
    free(x->u);
    free(x->tsz);
    free(x->tex);
    free(x->tshp);
    free(x->tcopies);
    free(x->vbeg);
    free(x->bk);
    free(x->bbeg);
    free(x->cache);
    free(x->tbytes);
    free(x->tops);
    free(x->tgrps);
    free(x->opt_s);
    free(x->lastbk);
    free(x->enc);
    free(x->upd);
    free(x->opt_task);
    free(x->nf_first);
    free(x->nf_last);
    free(x->cur_mk);
    free(x->fc_lo);
    free(x->fc_hi);
}

/* Where rank r's share of the steady state ends: the end of its look-ahead,
 * or of its last compute task of this iteration where that runs later (an
 * interleaved pipeline in forward order updates the buckets of its later
 * virtual stages after the look-ahead, which needs only the first's: the
 * next iteration's compute waits for them on the in-order stream, so the
 * period holds them). tail[r]: the end of the rank's last compute task
 * that is not a probe (tails()). */
static double rank_end(const ctx *x, uint32_t r, bool serial, const double *tail)
{
    const tc_tl_task *t = &x->d.task[x->nf_last[r]];
    return fmax(serial ? t->serial_end_s : t->end_s, tail[r]);
}

/* tail[r]: the end of rank r's last compute task that is not a probe. */
static void tails(const ctx *x, bool serial, double *tail)
{
    for (uint32_t r = 0; r < x->c->pp; r++)
        tail[r] = 0;
    for (size_t i = 0; i < x->d.n; i++) {
        const tc_tl_task *t = &x->d.task[i];
        if (t->kind == TC_TL_COMPUTE && !t->probe && t->rank < x->c->pp)
            tail[t->rank] = fmax(tail[t->rank], serial ? t->serial_end_s : t->end_s);
    }
}

/* The iteration as a period: for each rank, from the end of its first
 * forward in this iteration (micro-batch 0, its first virtual stage: the
 * marker, after the units and their collectives) to the end of the same
 * forward in the next (the look-ahead, built alike), or to the end of the
 * rank's last compute of this iteration where that is later (rank_end());
 * the largest over ranks. serial: the serial run's. */
static double period(const ctx *x, bool serial, const double *tail)
{
    const tc_tl_dag *d = &x->d;
    double best = 0;
    for (uint32_t r = 0; r < x->c->pp; r++) {
        if (x->nf_last[r] == UINT32_MAX || x->cur_mk[r] == UINT32_MAX)
            continue;
        const tc_tl_task *c = &d->task[x->cur_mk[r]];
        double p = rank_end(x, r, serial, tail) - (serial ? c->serial_end_s : c->end_s);
        if (p > best)
            best = p;
    }
    return best;
}

typedef struct span {
    double a, b;
    bool compute;
} span;

static int span_cmp(const void *p, const void *q)
{
    const span *x = p, *y = q;
    return x->a < y->a ? -1 : x->a > y->a ? 1 : x->b < y->b ? -1 : x->b > y->b;
}

/* Adds [s, e) of a task folded into the window [a, a + p): the pieces
 * outside it shifted by multiples of p (a task as long as the window covers
 * all of it). */
static void fold(span *v, size_t *n, double s, double e, double a, double p, bool compute)
{
    if (!(e > s))
        return;
    if (e - s >= p) {
        v[(*n)++] = (span){a, a + p, compute};
        return;
    }
    double k = floor((s - a) / p), s1 = s - k * p, e1 = e - k * p;
    double hi = a + p;
    if (s1 >= hi) { /* rounding at a multiple of p */
        s1 -= p;
        e1 -= p;
    }
    v[(*n)++] = (span){s1, fmin(e1, hi), compute};
    if (e1 > hi)
        v[(*n)++] = (span){a, a + (e1 - hi), compute};
}

/* Length of the union of the sorted spans that are compute (which = 1),
 * communication (0) or either (which < 0). */
static double covered(const span *v, size_t n, int which)
{
    double len = 0, ca = 0, cb = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (which >= 0 && v[i].compute != (which == 1))
            continue;
        if (v[i].a > cb) {
            if (cb > ca)
                len += cb - ca;
            ca = v[i].a;
            cb = v[i].b;
        } else if (v[i].b > cb) {
            cb = v[i].b;
        }
    }
    if (cb > ca)
        len += cb - ca;
    return len;
}

/* Rank r over its period (the steady state: docs/MODEL.md, "The result"):
 * the window from the end of its first forward to the end of its
 * look-ahead, p long. The look-ahead's tasks count inside the window, the
 * first forward's chain (which it repeats) not at all, and the iteration's
 * other tasks folded into the window by multiples of p (one iteration's
 * tail overlaps the next one's start). Writes the time a compute task runs
 * (busy), the time communication runs and compute does not (exposed), and
 * p; without a window, the run [0, the rank's end]. serial: the serial
 * run's times. */
static void window(ctx *x, uint32_t r, bool serial, const double *tail, double *busy, double *exposed,
                   double *len)
{
    const tc_tl_dag *d = &x->d;
    double a = 0, p = 0;
    bool have = x->cur_mk[r] != UINT32_MAX && x->nf_last[r] != UINT32_MAX;
    if (have) {
        const tc_tl_task *c = &d->task[x->cur_mk[r]];
        a = serial ? c->serial_end_s : c->end_s;
        p = rank_end(x, r, serial, tail) - a;
        have = p > 0;
    }
    if (!have) {
        a = 0;
        p = 0;
        for (size_t i = 0; i < d->n; i++)
            if (d->task[i].rank == r && !d->task[i].probe)
                p = fmax(p, serial ? d->task[i].serial_end_s : d->task[i].end_s);
    }
    *busy = *exposed = 0;
    *len = p;
    if (!(p > 0))
        return;
    span *v = tc_calloc(2 * d->n + 1, sizeof *v);
    if (!v) { /* the figures would be the idle rank's: none */
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (the busiest rank's period)");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++) {
        const tc_tl_task *t = &d->task[i];
        if (t->rank != r)
            continue;
        double s = serial ? t->serial_start_s : t->start_s, e = serial ? t->serial_end_s : t->end_s;
        bool cp = t->kind == TC_TL_COMPUTE;
        if (t->probe) {
            /* the next iteration's: only its part inside the window */
            s = fmax(s, a);
            e = fmin(e, a + p);
            if (e > s)
                v[n++] = (span){s, e, cp};
        } else if (!have || i < x->fc_lo[r] || i >= x->fc_hi[r]) {
            fold(v, &n, s, e, a, p, cp);
        }
    }
    qsort(v, n, sizeof *v, span_cmp);
    double c = covered(v, n, 1), all = covered(v, n, -1);
    free(v);
    *busy = c;
    *exposed = fmax(0, all - c);
}

/* A difference of sums of task times that is rounding noise (within 1e-9
 * of the iteration t) reads as 0. */
static double noise(double v, double t)
{
    return fabs(v) <= 1e-9 * t ? 0 : v;
}

static void figures(ctx *x, const tc_zoo_model *m, const tc_zoo_derived *d, const tc_ti_accel *a, double s,
                    const tc_tl_result *tl, tc_ti_result *out)
{
    const tc_ti_cfg *c = x->c;
    uint32_t busy = 0;
    for (uint32_t r = 1; r < tl->nranks; r++)
        if (tl->rank[r].compute_s > tl->rank[busy].compute_s)
            busy = r;
    const tc_tl_rank *k = &tl->rank[busy];
    out->compute_s = k->compute_s;
    out->optimizer_s = x->opt_s[busy];
    for (size_t i = 0; i < x->d.n; i++) {
        const tc_tl_task *t = &x->d.task[i];
        if (t->kind != TC_TL_COMM || t->rank != busy || t->probe)
            continue;
        if (t->stream == S_PP)
            continue;
        tc_ti_comm *cl = t->stream == S_TP ? &out->tp : t->stream == S_EP ? &out->ep : &out->dp;
        cl->nominal_s += t->dur_s;
        cl->bytes += i < x->captb ? x->tbytes[i] : 0;
        cl->count++;
    }
    /* PP sends of the busiest rank, counted on the schedule (a send of no
     * time is no task): each of its virtual stages sends every micro-batch's
     * activation forward (but the last) and its gradient backward (but the
     * first) */
    uint32_t v = c->virtual_stages ? c->virtual_stages : 1, V = c->pp * v;
    for (uint32_t cc = 0; cc < v && c->pp > 1; cc++) {
        uint32_t vs = cc * c->pp + busy;
        uint32_t n = (vs + 1 < V) + (vs > 0);
        out->pp.count += n * c->micro_batches;
    }
    out->pp.bytes = out->pp.count * x->pp_bytes;
    out->pp.nominal_s = out->pp.count * x->send_s;
    /* the iteration is the period of the steady state (period()); the
     * breakdown is over this iteration's tasks */
    double *tail = tc_calloc(2 * (size_t)c->pp, sizeof *tail);
    if (!tail) {
        x->st = tc_fail(x->err, TC_EINTERNAL, "out of memory (iteration figures)");
        return;
    }
    tails(x, false, tail);
    tails(x, true, tail + c->pp);
    double per = period(x, false, tail), per_serial = period(x, true, tail + c->pp);
    out->serial_s = per_serial;
    double den = per_serial - fmax(tl->compute_s, tl->comm_s);
    bool nothing = !(tl->comm_s > 0) || !(den > 1e-12 * per_serial);
    /* the breakdown is the busiest rank's over its period (window()), so
     * compute + slowdown + exposed + bubble is the iteration: the bubble
     * is the rest, the rank's idle time in its period and the time its
     * period falls short of the iteration (the slowest rank's) */
    double busy_s, exp_s, len_s;
    window(x, busy, !c->overlap, c->overlap ? tail : tail + c->pp, &busy_s, &exp_s, &len_s);
    free(tail);
    (void)len_s;
    if (x->st)
        return;
    if (c->overlap) {
        out->iter_s = per;
        out->exposed_s = exp_s;
        out->slowdown_s = noise(busy_s - k->compute_s, per);
        out->bubble_s = noise(per - busy_s - exp_s, per);
        out->efficiency = nothing ? 1 : (per_serial - per) / den;
        out->slowdown = k->compute_s > 0 ? out->slowdown_s / k->compute_s : 0;
    } else {
        /* the serial run: nothing overlaps on a rank, no contention */
        out->iter_s = per_serial;
        out->exposed_s = exp_s;
        out->bubble_s = noise(per_serial - k->compute_s - exp_s, per_serial);
        out->efficiency = nothing ? 1 : 0;
        out->slowdown = 0;
    }
    double ranks = (double)c->dp * c->tp * c->pp;
    double seqs = (double)c->dp * c->micro_batches * c->micro_batch;
    double model_flops, units;
    if (m->arch == TC_MODEL_CNN) {
        model_flops = d->flops_sample * seqs;
        units = seqs;
    } else {
        model_flops = tc_zoo_flops_token(m, d, s) * seqs * s;
        units = seqs * s;
    }
    out->mfu = out->iter_s > 0 ? model_flops / (out->iter_s * ranks * a->flops) : 0;
    out->tokens_per_s = out->iter_s > 0 ? units / out->iter_s : 0;
}

tc_status tc_ti_check(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, tc_err *err)
{
    if (!m || !a || !c)
        return tc_fail(err, TC_EINVAL, "training iteration: a model, an accelerator and a configuration are needed");
    return check(m, a, c, err);
}

tc_status tc_ti_run(const tc_zoo_model *m, const tc_ti_accel *a, const tc_ti_cfg *c, tc_ti_comm_fn fn, void *ud,
                    tc_ti_result *out, tc_err *err)
{
    memset(out, 0, sizeof *out);
    tc_status st = tc_ti_check(m, a, c, err);
    if (st)
        return st;
    tc_zoo_derived *d = tc_calloc(1, sizeof *d);
    if (!d)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    if ((st = tc_zoo_derive(m, d, err)) != TC_OK) {
        free(d);
        return st;
    }
    uint32_t v = c->virtual_stages ? c->virtual_stages : 1, pp = c->pp;
    double s = m->arch == TC_MODEL_CNN ? 1 : c->seq ? c->seq : m->seq, b = c->micro_batch;
    ctx x = {.c = c, .a = a, .fn = fn, .ud = ud, .err = err};
    tc_tl_init(&x.d);
    x.gbytes = c->grad_bytes > 0 ? c->grad_bytes : 2.0;
    x.act_bytes = b * s * m->hidden * 2.0;
    /* with sequence parallelism a TP rank sends its s / tp of the tokens
     * down the pipeline (Megatron-LM's get_tensor_shapes: seq_length //
     * tp_group.size()) */
    x.send_elems = b * s * m->hidden / (c->seq_parallel ? c->tp : 1);
    x.pp_bytes =
        c->codec[TC_TI_CODEC_PP] ? elementwise_bytes(c->codec[TC_TI_CODEC_PP], x.send_elems) : 2 * x.send_elems;
    x.ep = c->ep > 1 ? c->ep : 1;
    x.tied = m->arch == TC_MODEL_TRANSFORMER && m->tied_embeddings;
    x.emb_elems = (double)m->vocab * m->hidden / c->tp;
    x.edp = c->dp / x.ep;
    /* every token goes to top_k experts; with sequence parallelism a TP rank
     * holds s / tp of the tokens, without it every TP rank dispatches all
     * of them (assumed) */
    x.a2a_bytes = b * s * (m->top_k ? m->top_k : 1) * m->hidden * 2.0 / (c->seq_parallel ? c->tp : 1);
    x.load = x.ep > 1 ? moe_load(m->experts, x.ep, m->top_k, c->capacity_factor, c->zipf) : 1;
    x.a2a_bytes *= x.load;
    x.opt_s = tc_calloc(pp, sizeof *x.opt_s);
    if (!x.opt_s)
        x.st = tc_fail(err, TC_EINTERNAL, "out of memory");
    if (!x.st) {
        if (m->arch == TC_MODEL_CNN)
            cnn_units(&x, m, d, a, b);
        else
            transformer_units(&x, m, d, a, b, s, pp, v);
    }
    if (!x.st)
        make_buckets(&x, pp, v);
    if (!x.st) {
        x.lastbk = malloc((x.nbk ? x.nbk : 1) * sizeof *x.lastbk);
        x.upd = malloc((x.nbk ? x.nbk : 1) * sizeof *x.upd);
        x.enc = malloc((x.nbk ? x.nbk : 1) * sizeof *x.enc);
        x.opt_task = malloc(pp * sizeof *x.opt_task);
        x.nf_first = malloc(pp * sizeof *x.nf_first);
        x.nf_last = malloc(pp * sizeof *x.nf_last);
        x.cur_mk = malloc(pp * sizeof *x.cur_mk);
        x.fc_lo = malloc(pp * sizeof *x.fc_lo);
        x.fc_hi = malloc(pp * sizeof *x.fc_hi);
        if (!x.lastbk || !x.upd || !x.enc || !x.opt_task || !x.nf_first || !x.nf_last || !x.cur_mk || !x.fc_lo ||
            !x.fc_hi)
            x.st = tc_fail(err, TC_EINTERNAL, "out of memory");
        for (size_t i = 0; !x.st && i < x.nbk; i++)
            x.lastbk[i] = x.upd[i] = x.enc[i] = UINT32_MAX;
        for (uint32_t r = 0; !x.st && r < pp; r++)
            x.opt_task[r] = x.nf_first[r] = x.nf_last[r] = x.cur_mk[r] = x.fc_lo[r] = x.fc_hi[r] = UINT32_MAX;
    }
    if (!x.st)
        build(&x, pp, v);
    for (size_t i = 0; c->dma && !x.st && i < x.d.n; i++)
        if (x.d.task[i].kind == TC_TL_COMM)
            x.d.task[i].dma = true;
    tc_tl_opts topt = c->contention;
    tc_tl_ext ext = {.ud = &x, .begin = ext_begin, .start = ext_start, .run = ext_run, .retry = ext_retry};
    if (c->flow && !x.st) {
        /* the network model decides when communication ends; it shares the
         * links, so no preemption of one collective by another */
        for (size_t i = 0; i < x.d.n; i++)
            if (x.d.task[i].kind == TC_TL_COMM && i < x.captb && x.tbytes[i] > 0) {
                x.d.task[i].ext = true;
                x.d.task[i].preempt = false;
            }
        topt.ext = &ext;
    }
    tc_tl_result tl = {0};
    if (!x.st)
        x.st = tc_tl_run(&x.d, &topt, &tl, err);
    if (!x.st) {
        figures(&x, m, d, a, s, &tl, out);
    }
    if (!x.st) {
        tc_mem_cfg mc = {.dp = c->dp, .tp = c->tp, .pp = c->pp, .ep = c->ep, .zero = c->zero, .micro_batch = c->micro_batch,
                         .seq = c->seq, .seq_parallel = c->seq_parallel, .recompute = c->recompute,
                         .eager_attention = c->eager_attention,
                         .grad_bytes = x.gbytes};
        x.st = tc_mem_estimate(m, &mc, a->mem_bytes, &out->mem, err);
        out->fits = a->mem_bytes > 0 ? out->mem.fits : true;
    }
    tc_tl_result_free(&tl);
    if (!x.st && c->keep) {
        *c->keep = x.d;
        tc_tl_init(&x.d);
    }
    ctx_free(&x);
    free(d);
    if (x.st) {
        tc_status r = x.st;
        memset(out, 0, sizeof *out);
        return r;
    }
    return TC_OK;
}
