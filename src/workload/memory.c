/*
 * memory.c - memory per device: model states under ZeRO, TP and PP;
 * activations per Korthikanti et al. (docs/MODEL.md, "Training: models and
 * memory"; topocc/memory.h).
 *
 * Model states (Rajbhandari et al., ZeRO, SC'20: Figure 1 and Table 1 as
 * quoted by secondary sources; the paper itself was not read here),
 * Psi parameters on the device, N_d the data-parallel degree, K = 12:
 *   stage 0:  (2 + 2 + K) Psi
 *   stage 1:  2 Psi + 2 Psi + K Psi / N_d         (optimizer states partitioned)
 *   stage 2:  2 Psi + (2 + K) Psi / N_d           (+ gradients)
 *   stage 3:  (2 + 2 + K) Psi / N_d               (+ parameters)
 * (the gradients' 2 is tc_mem_cfg.grad_bytes: 4 with fp32 gradients).
 * Psi is the device's TP x PP shard: the most loaded stage's blocks (layers
 * split as evenly as they go, the first stages taking the extra one) plus
 * the embedding on the first stage and the final norm and LM head on the
 * last (both on one stage when pp = 1; a tied head is a second copy on the
 * last stage when pp > 1, as Megatron-LM keeps it), all divided by tp.
 *
 * Activations (Korthikanti et al., Table 2, per layer; s, b, h, a, t):
 *   no parallelism            s b h (34 + 5 a s / h)
 *   tensor parallel           s b h (10 + 24 / t + 5 a s / (h t))
 *   tensor + sequence par.    s b h / t (34 + 5 a s / h)
 *   selective recomputation   drops the 5 a s / h term (34 s b h / t with SP)
 *   full recomputation        2 s b h
 * The 5 a s / h term (softmax, its dropout mask, the scores) is stored by
 * an eager attention only: a fused kernel (FlashAttention) stores none, as
 * Megatron-LM's theoretical_memory_usage.py counts a layer (no such term);
 * tc_mem_cfg.eager_attention keeps it.
 * times the stage's layers times the micro-batches in flight: p on the first
 * stage under 1F1B (the paper's pipeline discussion, as Megatron-LM's
 * theoretical_memory_usage.py computes it: "all calculations ... are for the
 * first pipeline stage", p micro-batches in flight). Plus the embedding dropout mask
 * (s b h per micro-batch in flight) and, on the last stage, the output
 * layer and cross-entropy loss 4 s b h (1 + V / h) (Megatron-LM's
 * theoretical_memory_usage.py), divided by t.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "topocc/memory.h"
#include "topocc/profile.h"

#define GIB 1073741824.0

double tc_act_layer_bytes(const tc_zoo_model *m, double s, double b, uint32_t t, bool sp, tc_recompute r,
                          bool eager)
{
    if (t == 0)
        t = 1;
    double h = m->hidden, a = m->heads;
    double f = (double)m->ffn * (m->experts > 1 ? m->top_k : 1);
    double lin = 18.0 + 4.0 * f / h; /* 34 at f = 4h */
    double rep = 10.0;               /* layer-norm inputs 4, dropout masks 2, QKV and fc1 inputs 4 */
    double att = r == TC_RECOMPUTE_SELECTIVE || !eager ? 0 : 5.0 * a * s / h;
    double sbh = s * b * h;
    if (r == TC_RECOMPUTE_FULL)
        return 2.0 * sbh;
    if (t == 1 || sp)
        return sbh / t * (lin + att);
    return sbh * (rep + (lin - rep) / t + att / t);
}

static uint32_t or1(uint32_t x)
{
    return x ? x : 1;
}

static double model_states(double psi, int zero, double nd, double gb, double *w, double *g, double *o)
{
    *w = TC_BYTES_PARAM16 * psi;
    *g = gb * psi;
    *o = TC_BYTES_ADAM * psi;
    if (zero >= 1)
        *o /= nd;
    if (zero >= 2)
        *g /= nd;
    if (zero >= 3)
        *w /= nd;
    return *w + *g + *o;
}

tc_status tc_mem_estimate(const tc_zoo_model *m, const tc_mem_cfg *c, double capacity_bytes, tc_mem *out,
                          tc_err *err)
{
    tc_zoo_derived *d = tc_calloc(1, sizeof *d);
    if (!d)
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    tc_status st = tc_zoo_derive(m, d, err);
    if (st != TC_OK) {
        free(d);
        return st;
    }
    uint32_t dp = or1(c->dp), tp = or1(c->tp), pp = or1(c->pp), b = or1(c->micro_batch), ep = or1(c->ep);
    double s = c->seq ? c->seq : m->seq;
    st = TC_OK;
    if (c->zero < 0 || c->zero > 3)
        st = tc_fail(err, TC_EINVAL, "invalid ZeRO stage %d: expected 0, 1, 2 or 3", c->zero);
    else if (!(c->grad_bytes >= 0) || !isfinite(c->grad_bytes))
        st = tc_fail(err, TC_EINVAL, "invalid gradient element size %g: expected bytes >= 0", c->grad_bytes);
    else if (!(capacity_bytes >= 0) || !isfinite(capacity_bytes))
        st = tc_fail(err, TC_EINVAL, "invalid memory capacity: expected bytes >= 0");
    else if (m->arch == TC_MODEL_TRANSFORMER && pp > m->layers)
        st = tc_fail(err, TC_EINVAL, "%s: pipeline degree %u exceeds its %u layers", m->name, pp, m->layers);
    else if (m->arch == TC_MODEL_TRANSFORMER && m->heads % tp)
        st = tc_fail(err, TC_EINVAL, "%s: tensor-parallel degree %u must divide its %u heads", m->name, tp,
                     m->heads);
    else if (m->arch == TC_MODEL_TRANSFORMER && m->kv_heads && m->kv_heads % tp)
        st = tc_fail(err, TC_EINVAL, "%s: tensor-parallel degree %u must divide its %u key/value heads (query "
                     "groups), as Megatron-LM splits them", m->name, tp, m->kv_heads);
    else if (m->arch == TC_MODEL_CNN && (tp > 1 || c->seq_parallel || c->recompute != TC_RECOMPUTE_NONE))
        st = tc_fail(err, TC_EINVAL, "%s: tensor parallelism, sequence parallelism and recomputation are "
                     "modelled for transformers only", m->name);
    else if (ep > 1 && (m->experts % ep || dp % ep))
        st = tc_fail(err, TC_EINVAL, "%s: expert-parallel degree %u must divide its %u experts and the data-parallel "
                     "degree %u", m->name, ep, m->experts, dp);
    if (st != TC_OK) {
        free(d);
        return st;
    }
    memset(out, 0, sizeof *out);
    out->inflight = c->inflight ? c->inflight : pp;

    if (m->arch == TC_MODEL_CNN) {
        /* layers as they come, split in equal parameter shares over the stages (assumed) */
        out->stage_layers = 0;
        out->params = d->params / pp;
        out->act_layers = d->act_sample_bytes * b / pp * out->inflight;
        out->act_layer = d->act_layer_bytes * b;
    } else {
        uint32_t L = m->layers, first = (L + pp - 1) / pp, last = L / pp;
        /* a block's expert tensors, of which the device holds 1/ep */
        double ex = 0;
        for (size_t i = 0; ep > 1 && i < d->ntensors; i++)
            if (d->tensors[i].expert && d->tensors[i].in_layer) {
                double n = d->tensors[i].count;
                for (uint32_t k = 0; k < d->tensors[i].ndim; k++)
                    n *= (double)d->tensors[i].shape[k];
                ex += n / L;
            }
        double lay = d->params_layer - ex + ex / ep;
        double embed = d->params_embed, head = d->params_head;
        double tied = m->tied_embeddings ? (double)m->vocab * m->hidden : 0;
        double p_first, p_last;
        if (pp == 1) {
            p_first = p_last = L * lay + embed + head;
        } else {
            p_first = first * lay + embed;
            p_last = last * lay + head + tied;
        }
        out->params = fmax(p_first, p_last) / tp;
        out->eparams = (p_first >= p_last ? first : last) * ex / ep / tp;
        out->stage_layers = first;
        out->act_layer = tc_act_layer_bytes(m, s, b, tp, c->seq_parallel, c->recompute, c->eager_attention);
        out->act_layers = out->act_layer * first * out->inflight;
        /* embedding dropout mask on the first stage, output layer + loss on the last */
        double sbh = s * b * m->hidden;
        double emb = sbh * out->inflight;
        double outl = 4.0 * sbh * (1.0 + (double)m->vocab / m->hidden);
        out->act_other = (pp == 1 ? emb + outl : fmax(emb, outl)) / tp;
    }
    double gb = c->grad_bytes > 0 ? c->grad_bytes : TC_BYTES_GRAD16;
    model_states(out->params - out->eparams, c->zero, dp, gb, &out->weights, &out->grads, &out->optim);
    if (out->eparams > 0) {
        double w, g, o;
        model_states(out->eparams, c->zero, dp / ep, gb, &w, &g, &o);
        out->weights += w;
        out->grads += g;
        out->optim += o;
    }
    out->activations = out->act_layers + out->act_other;
    out->total = out->weights + out->grads + out->optim + out->activations;
    out->capacity = capacity_bytes;
    out->headroom = capacity_bytes - out->total;
    out->fits = capacity_bytes > 0 && out->headroom >= 0;
    free(d);
    return TC_OK;
}

/* A number field of an accelerator profile and the values it accepts:
 * lo < v <= hi, a whole number if whole. An optional field the profile does
 * not have reads 0; a required one fails naming the field (tc_profile_num's
 * message). */
typedef struct field_spec {
    const char *name;
    bool optional;
    double lo, hi;
    bool whole;
    const char *expect; /* for the message: "expected ..." */
} field_spec;

/* The n fields of profile NAME, found as tc_profile_load finds it (dir
 * first, NULL: the default path), into v. With accel, a profile of another
 * kind is refused. */
static tc_status read_fields(const char *name, const char *dir, bool accel, const field_spec *f, size_t n, double *v,
                             tc_err *err)
{
    tc_profile *p = NULL;
    tc_status st = tc_profile_load(name, dir, &p, err);
    if (st != TC_OK)
        return st;
    const char *path = tc_profile_path(p);
    if (accel && strcmp(tc_profile_kind(p), "accelerator") != 0)
        st = tc_fail(err, TC_EINVAL, "%s: kind '%s' is not an accelerator profile", path, tc_profile_kind(p));
    /* tc_profile_num tells a missing field only by its message; the
     * profile's canonical JSON tells it by structure */
    unsigned long mark = tc_oom_mark();
    json_t *root = st == TC_OK ? json_loads(tc_profile_json(p), 0, NULL) : NULL;
    if (st == TC_OK && tc_oom_since(mark))
        st = tc_fail(err, TC_EINTERNAL, "out of memory");
    json_t *fields = json_object_get(root, "fields");
    for (size_t i = 0; i < n && st == TC_OK; i++) {
        v[i] = 0;
        if (f[i].optional && !json_object_get(fields, f[i].name))
            continue;
        st = tc_profile_num(p, f[i].name, &v[i], err);
        if (st == TC_OK && !(v[i] > f[i].lo && v[i] <= f[i].hi && (!f[i].whole || v[i] == floor(v[i]))))
            st = tc_fail(err, TC_EINVAL, "%s: field '%s': expected %s, not %g", path, f[i].name, f[i].expect, v[i]);
    }
    json_decref(root);
    tc_profile_free(p);
    return st;
}

tc_status tc_accel_memory_bytes(const char *name, const char *dir, double *bytes, tc_err *err)
{
    static const field_spec f = {"memory_capacity", false, 0, INFINITY, false, "a positive number of GB"};
    double gb;
    tc_status st = read_fields(name, dir, false, &f, 1, &gb, err);
    if (st == TC_OK)
        *bytes = gb * 1e9; /* profiles state "GB" */
    return st;
}

tc_status tc_accel_train_fields(const char *name, const char *dir, double *achievable, uint32_t *copy_engines,
                                tc_err *err)
{
    static const field_spec f[] = {
        {"achievable_fraction", true, 0, 1, false, "a fraction of peak in (0, 1]"},
        {"copy_engines", true, 0, 64, true, "a whole number of copy engines from 1 to 64"},
    };
    double v[2];
    tc_status st = read_fields(name, dir, true, f, 2, v, err);
    if (st == TC_OK) {
        *achievable = v[0];
        *copy_engines = (uint32_t)v[1];
    }
    return st;
}

int tc_mem_format(const tc_mem *mem, char *buf, size_t len)
{
    char verdict[96] = "";
    if (mem->capacity > 0) {
        if (mem->fits)
            snprintf(verdict, sizeof verdict, "fits (%.2f GiB free of %.2f GiB)\n", mem->headroom / GIB,
                     mem->capacity / GIB);
        else
            snprintf(verdict, sizeof verdict, "does not fit by %.2f GiB (capacity %.2f GiB)\n", -mem->headroom / GIB,
                     mem->capacity / GIB);
    }
    return snprintf(buf, len,
                    "parameters on device  %.4g\n"
                    "weights (16-bit)      %10.2f GiB\n"
                    "gradients (16-bit)    %10.2f GiB\n"
                    "optimizer (fp32 x3)   %10.2f GiB\n"
                    "activations           %10.2f GiB  (%u layers x %u micro-batches x %.3f GiB, + %.2f GiB)\n"
                    "total                 %10.2f GiB\n%s",
                    mem->params, mem->weights / GIB, mem->grads / GIB, mem->optim / GIB, mem->activations / GIB,
                    mem->stage_layers, mem->inflight, mem->act_layer / GIB, mem->act_other / GIB, mem->total / GIB,
                    verdict);
}
