/*
 * zoo.c - the structured model zoo (topocc/zoo.h): architectures with their
 * sources, every parameter tensor's shape, parameter counts, training FLOPs
 * and activation bytes; user models from JSON.
 *
 * Sources (docs/MODEL.md, "Training: models and memory", lists each figure):
 *  - Llama 3 / 3.1: meta-llama/llama-models models/sku_list.py arch_args
 *    (dim, n_layers, n_heads, n_kv_heads, ffn_dim_multiplier, multiple_of,
 *    LLAMA3_VOCAB_SIZE = 128256) and models/llama3/model.py (the FFN size
 *    rule); context 8k from models/llama3/MODEL_CARD.md.
 *  - Mixtral 8x7B: Hugging Face MixtralForCausalLM printout
 *    (keras-team/keras-hub keras_hub/src/models/mixtral/README.md) and the
 *    config values num_local_experts 8, num_experts_per_tok 2,
 *    max_position_embeddings 32768; 46.7B total / 12.9B active from
 *    Mistral's model description (Azure/azureml-assets copy).
 *  - BERT-large: google-research/bert README (24-layer, 1024-hidden,
 *    16-heads, 340M parameters); vocab 30522, intermediate 4096, 512
 *    positions, 2 token types from bert_config.json (third-party copies).
 *  - GPT-3 175B: Brown et al. 2020 Table 2.1 (n_layers 96, d_model 12288,
 *    n_heads 96, n_ctx 2048), read through secondary copies; d_ff = 4
 *    d_model and the GPT-2 vocabulary (50257) are assumed.
 *  - GPT-2 XL: 48 layers, d_model 1600, 25 heads, 1024 tokens, vocab 50257
 *    (the existing zoo's figures, Radford et al. 2019; heads assumed).
 *  - Llama 7B: Llama 2 MODEL_CARD (7B, 4k context, no GQA), Llama 1 context
 *    2048 (assumed, as the existing zoo); dim 4096, 32 layers, 32 heads,
 *    FFN 11008 by model.py's rule with multiple_of 256, vocab 32000.
 *  - ResNet-18/50, VGG-16: shapes per He et al. 2016 Table 1 and Simonyan &
 *    Zisserman 2015 config D as torchvision builds them; totals checked
 *    against torchvision's num_params (11,689,512; 25,557,032; 138,357,544)
 *    and its GFLOPS (1.81, 4.09, 15.47: multiply-adds, as models.c reads them).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include "topocc/memory.h"
#include "topocc/zoo.h"

#define SRC_LLAMA3                                                                                                     \
    "meta-llama/llama-models models/sku_list.py arch_args (dim, n_layers, n_heads, n_kv_heads, ffn_dim_multiplier, "  \
    "multiple_of, vocab 128256) with the FFN rule of models/llama3/model.py; context 8k: models/llama3/MODEL_CARD.md"

static const tc_zoo_model zoo[] = {
    {
        .name = "gpt3-175b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 96, .hidden = 12288, .ffn = 4 * 12288, .heads = 96, .kv_heads = 96,
        .vocab = 50257, .seq = 2048, .experts = 1, .top_k = 1,
        .bias = true, .norm = TC_NORM_LAYERNORM, .tied_embeddings = true, .pos_embed = 2048,
        .published_params = 175.0e9,
        .source = "Brown et al. 2020 Table 2.1: n_params 175.0B, n_layers 96, d_model 12288, n_heads 96, n_ctx 2048 "
                  "(read in secondary copies of the table); d_ff = 4 d_model and vocabulary 50257 (GPT-2 BPE) assumed",
    },
    {
        .name = "llama3-8b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 32, .hidden = 4096, .ffn = 14336, .heads = 32, .kv_heads = 8,
        .vocab = 128256, .seq = 8192, .experts = 1, .top_k = 1,
        .gated_mlp = true, .norm = TC_NORM_RMSNORM,
        .published_params = 8.03e9,
        .source = SRC_LLAMA3 "; 8.03e9 is the sum of the shapes (the card says 8B)",
    },
    {
        .name = "llama3-70b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 80, .hidden = 8192, .ffn = 28672, .heads = 64, .kv_heads = 8,
        .vocab = 128256, .seq = 8192, .experts = 1, .top_k = 1,
        .gated_mlp = true, .norm = TC_NORM_RMSNORM,
        .published_params = 70.6e9,
        .source = SRC_LLAMA3 "; 70.6e9 is the sum of the shapes (the card says 70B)",
    },
    {
        .name = "llama3-405b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 126, .hidden = 16384, .ffn = 53248, .heads = 128, .kv_heads = 8,
        .vocab = 128256, .seq = 8192, .experts = 1, .top_k = 1,
        .gated_mlp = true, .norm = TC_NORM_RMSNORM,
        .published_params = 405.8e9,
        .source = SRC_LLAMA3 " (Llama 3.1 405B entry; ffn_dim_multiplier 1.2, multiple_of 4096); its card gives 128k "
                  "context after long-context training: the 8192-token pre-training context is assumed",
    },
    {
        .name = "mixtral-8x7b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 32, .hidden = 4096, .ffn = 14336, .heads = 32, .kv_heads = 8,
        .vocab = 32000, .seq = 32768, .experts = 8, .top_k = 2,
        .gated_mlp = true, .norm = TC_NORM_RMSNORM,
        .published_params = 46.7e9, .published_active = 12.9e9,
        .source = "mistralai/Mixtral-8x7B-v0.1 config (hidden_size 4096, intermediate_size 14336, num_hidden_layers 32, "
                  "num_attention_heads 32, num_key_value_heads 8, num_local_experts 8, num_experts_per_tok 2, "
                  "vocab_size 32000, max_position_embeddings 32768; read in copies of config.json and the "
                  "MixtralForCausalLM printout in keras-team/keras-hub); 46.7B total, 12.9B per token: Mistral's "
                  "model description (Azure/azureml-assets copy)",
    },
    {
        .name = "bert-large", .arch = TC_MODEL_TRANSFORMER,
        .layers = 24, .hidden = 1024, .ffn = 4096, .heads = 16, .kv_heads = 16,
        .vocab = 30522, .seq = 512, .experts = 1, .top_k = 1,
        .bias = true, .norm = TC_NORM_LAYERNORM, .tied_embeddings = true, .pos_embed = 512, .type_vocab = 2,
        .pooler = true, .post_norm = true,
        .published_params = 340e6,
        .source = "google-research/bert README: BERT-Large 24-layer, 1024-hidden, 16-heads, 340M parameters; "
                  "bert_config.json (vocab_size 30522, intermediate_size 4096, max_position_embeddings 512, "
                  "type_vocab_size 2; third-party copies); pre-training used 128 tokens for 90% of the steps and "
                  "512 for the rest (HF model card copy): the context is 512",
    },
    {
        .name = "resnet18", .arch = TC_MODEL_CNN, .image = 224, .macs_sample = 1.81e9,
        .published_params = 11689512,
        .source = "He et al. 2016 Table 1 (18-layer: basic blocks [2,2,2,2]); torchvision ResNet18_Weights: "
                  "num_params 11,689,512, GFLOPS 1.81 (multiply-adds) at 224x224",
    },
    {
        .name = "resnet50", .arch = TC_MODEL_CNN, .image = 224, .macs_sample = 4.09e9,
        .published_params = 25557032,
        .source = "He et al. 2016 Table 1 (50-layer: bottlenecks [3,4,6,3]); torchvision ResNet50_Weights: "
                  "num_params 25,557,032, GFLOPS 4.09 (multiply-adds) at 224x224 (v1.5: stride on the 3x3)",
    },
    {
        .name = "vgg16", .arch = TC_MODEL_CNN, .image = 224, .macs_sample = 15.47e9,
        .published_params = 138357544,
        .source = "Simonyan and Zisserman 2015 configuration D; torchvision vgg16: 138,357,544 parameters, 15.47 "
                  "GFLOPS (multiply-adds), the figures of models.c",
    },
    {
        .name = "gpt2-xl", .arch = TC_MODEL_TRANSFORMER,
        .layers = 48, .hidden = 1600, .ffn = 4 * 1600, .heads = 25, .kv_heads = 25,
        .vocab = 50257, .seq = 1024, .experts = 1, .top_k = 1,
        .bias = true, .norm = TC_NORM_LAYERNORM, .tied_embeddings = true, .pos_embed = 1024,
        .published_params = 1.558e9,
        .source = "Radford et al. 2019 (1.56B parameters, 48 layers, d_model 1600, 1024 tokens, vocabulary 50257: "
                  "the figures of models.c); 25 heads and d_ff = 4 d_model assumed",
    },
    {
        .name = "llama-7b", .arch = TC_MODEL_TRANSFORMER,
        .layers = 32, .hidden = 4096, .ffn = 11008, .heads = 32, .kv_heads = 32,
        .vocab = 32000, .seq = 2048, .experts = 1, .top_k = 1,
        .gated_mlp = true, .norm = TC_NORM_RMSNORM,
        .published_params = 6.738e9,
        .source = "Touvron et al. 2023 (6.7B, d_model 4096, 32 layers, 32 heads, 2048 tokens: the figures of "
                  "models.c); FFN 11008 by the rule of meta-llama models/llama3/model.py with multiple_of 256; "
                  "vocabulary 32000 (LLAMA2_VOCAB_SIZE, llama-models sku_list.py); Llama 2 7B has the same shapes "
                  "(MODEL_CARD: 7B, no GQA) and a 4k context",
    },
};

#define NZOO (sizeof zoo / sizeof *zoo)

size_t tc_zoo_count(void)
{
    return NZOO;
}

const tc_zoo_model *tc_zoo_get(size_t i)
{
    return i < NZOO ? &zoo[i] : NULL;
}

const tc_zoo_model *tc_zoo_find(const char *name)
{
    for (size_t i = 0; name && i < NZOO; i++)
        if (strcmp(zoo[i].name, name) == 0)
            return &zoo[i];
    return NULL;
}

/* ---- checks ------------------------------------------------------------- */

#define MAX_DIM 16777216u /* 2^24: any dimension above this is a typo */

static tc_status bad(tc_err *err, const char *origin, const char *field, const char *what)
{
    return tc_fail(err, TC_EINVAL, "%s: field '%s': %s", origin, field, what);
}

tc_status tc_zoo_check(const tc_zoo_model *m, const char *origin, tc_err *err)
{
    if (!origin)
        origin = m->name[0] ? m->name : "model";
    if (!m->name[0])
        return bad(err, origin, "name", "missing or empty");
    if (m->arch == TC_MODEL_CNN) {
        if (strcmp(m->name, "resnet18") && strcmp(m->name, "resnet50") && strcmp(m->name, "vgg16"))
            return bad(err, origin, "arch", "a CNN must be one of the zoo's (resnet18, resnet50, vgg16)");
        return TC_OK;
    }
    if (m->arch != TC_MODEL_TRANSFORMER)
        return bad(err, origin, "arch", "expected \"transformer\"");
    struct { const char *f; uint32_t v; } pos[] = {
        {"layers", m->layers}, {"hidden", m->hidden}, {"ffn", m->ffn}, {"heads", m->heads},
        {"kv_heads", m->kv_heads}, {"vocab", m->vocab}, {"seq", m->seq}, {"experts", m->experts},
        {"top_k", m->top_k},
    };
    for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
        if (pos[i].v == 0 || pos[i].v > MAX_DIM)
            return bad(err, origin, pos[i].f, "expected an integer in [1, 16777216]");
    if (m->hidden % m->heads)
        return bad(err, origin, "heads", "must divide hidden");
    if (m->kv_heads > m->heads || m->heads % m->kv_heads)
        return bad(err, origin, "kv_heads", "must divide heads");
    if (m->top_k > m->experts)
        return bad(err, origin, "top_k", "must not exceed experts");
    if (m->pos_embed > MAX_DIM)
        return bad(err, origin, "pos_embed", "expected an integer in [0, 16777216]");
    if (m->type_vocab > MAX_DIM)
        return bad(err, origin, "type_vocab", "expected an integer in [0, 16777216]");
    if (m->norm != TC_NORM_LAYERNORM && m->norm != TC_NORM_RMSNORM)
        return bad(err, origin, "norm", "expected \"layernorm\" or \"rmsnorm\"");
    if (!(m->published_params >= 0) || !isfinite(m->published_params))
        return bad(err, origin, "params", "expected a number >= 0");
    return TC_OK;
}

/* ---- tensors ------------------------------------------------------------ */

typedef struct builder {
    tc_zoo_derived *d;
    bool overflow;
} builder;

static tc_tensor *add(builder *b, const char *name, uint32_t ndim, uint64_t d0, uint64_t d1, uint64_t d2, uint64_t d3,
                      uint32_t count)
{
    if (b->d->ntensors >= TC_ZOO_MAX_TENSORS) {
        b->overflow = true;
        return NULL;
    }
    tc_tensor *t = &b->d->tensors[b->d->ntensors++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->shape[2] = d2;
    t->shape[3] = d3;
    t->count = count;
    return t;
}

static double tensor_elems(const tc_tensor *t)
{
    double n = 1;
    for (uint32_t i = 0; i < t->ndim; i++)
        n *= (double)t->shape[i];
    return n;
}

static void norm_t(builder *b, const tc_zoo_model *m, const char *name, uint32_t count, bool in_layer)
{
    char nm[40];
    snprintf(nm, sizeof nm, "%s.weight", name);
    tc_tensor *t = add(b, nm, 1, m->hidden, 0, 0, 0, count);
    if (t)
        t->in_layer = in_layer;
    if (m->norm == TC_NORM_LAYERNORM) {
        snprintf(nm, sizeof nm, "%s.bias", name);
        t = add(b, nm, 1, m->hidden, 0, 0, 0, count);
        if (t)
            t->in_layer = in_layer;
    }
}

/* A linear layer [in, out] (+ bias [out]) repeated count times. */
static void linear(builder *b, const char *name, uint64_t in, uint64_t out, uint32_t count, bool bias, bool expert)
{
    char nm[40];
    snprintf(nm, sizeof nm, "%s.weight", name);
    tc_tensor *t = add(b, nm, 2, in, out, 0, 0, count);
    if (t) {
        t->in_layer = true;
        t->matmul = true;
        t->expert = expert;
    }
    if (bias) {
        snprintf(nm, sizeof nm, "%s.bias", name);
        t = add(b, nm, 1, out, 0, 0, 0, count);
        if (t) {
            t->in_layer = true;
            t->expert = expert;
        }
    }
}

static void build_transformer(builder *b, const tc_zoo_model *m)
{
    uint64_t h = m->hidden, hd = m->hidden / m->heads, L = m->layers, E = m->experts;
    tc_tensor *t = add(b, "embed.tokens", 2, m->vocab, h, 0, 0, 1);
    (void)t;
    if (m->pos_embed)
        add(b, "embed.positions", 2, m->pos_embed, h, 0, 0, 1);
    if (m->type_vocab)
        add(b, "embed.segments", 2, m->type_vocab, h, 0, 0, 1);
    if (m->post_norm)
        norm_t(b, m, "embed.norm", 1, false);
    /* one block, repeated L times */
    norm_t(b, m, "layer.attn_norm", (uint32_t)L, true);
    linear(b, "layer.attn.q", h, (uint64_t)m->heads * hd, (uint32_t)L, m->bias, false);
    linear(b, "layer.attn.k", h, (uint64_t)m->kv_heads * hd, (uint32_t)L, m->bias, false);
    linear(b, "layer.attn.v", h, (uint64_t)m->kv_heads * hd, (uint32_t)L, m->bias, false);
    linear(b, "layer.attn.out", (uint64_t)m->heads * hd, h, (uint32_t)L, m->bias, false);
    norm_t(b, m, "layer.mlp_norm", (uint32_t)L, true);
    uint32_t ne = (uint32_t)(L * E);
    bool moe = E > 1;
    if (moe)
        linear(b, "layer.moe.router", h, E, (uint32_t)L, false, false);
    if (m->gated_mlp)
        linear(b, moe ? "layer.expert.gate" : "layer.mlp.gate", h, m->ffn, ne, m->bias, moe);
    linear(b, moe ? "layer.expert.up" : "layer.mlp.up", h, m->ffn, ne, m->bias, moe);
    linear(b, moe ? "layer.expert.down" : "layer.mlp.down", m->ffn, h, ne, m->bias, moe);
    if (!m->post_norm)
        norm_t(b, m, "final.norm", 1, false);
    if (m->pooler) {
        t = add(b, "pooler.weight", 2, h, h, 0, 0, 1);
        add(b, "pooler.bias", 1, h, 0, 0, 0, 1);
    }
    if (!m->tied_embeddings) {
        t = add(b, "lm_head.weight", 2, h, m->vocab, 0, 0, 1);
        if (t)
            t->matmul = true;
    }
}

/* ---- CNNs: conv [out, in, k, k] without bias, batch norm (weight, bias) --- */

static void conv(builder *b, const char *name, uint64_t in, uint64_t out, uint64_t k, uint64_t side, bool bias,
                 bool bn)
{
    char nm[40];
    snprintf(nm, sizeof nm, "%s.weight", name);
    tc_tensor *t = add(b, nm, 4, out, in, k, k, 1);
    if (t) {
        t->matmul = true;
        t->act_elems = (double)out * (double)side * (double)side;
    }
    if (bias) {
        snprintf(nm, sizeof nm, "%s.bias", name);
        add(b, nm, 1, out, 0, 0, 0, 1);
    }
    if (bn) {
        snprintf(nm, sizeof nm, "%s.bn.weight", name);
        add(b, nm, 1, out, 0, 0, 0, 1);
        snprintf(nm, sizeof nm, "%s.bn.bias", name);
        add(b, nm, 1, out, 0, 0, 0, 1);
    }
}

static void fc(builder *b, const char *name, uint64_t in, uint64_t out)
{
    char nm[40];
    snprintf(nm, sizeof nm, "%s.weight", name);
    tc_tensor *t = add(b, nm, 2, out, in, 0, 0, 1);
    if (t) {
        t->matmul = true;
        t->act_elems = (double)out;
    }
    snprintf(nm, sizeof nm, "%s.bias", name);
    add(b, nm, 1, out, 0, 0, 0, 1);
}

static void build_resnet(builder *b, bool bottleneck, const int blocks[4])
{
    conv(b, "conv1", 3, 64, 7, 112, false, true);
    uint64_t in = 64, side = 56;
    const uint64_t width[4] = {64, 128, 256, 512};
    for (int s = 0; s < 4; s++) {
        for (int i = 0; i < blocks[s]; i++) {
            uint64_t w = width[s], out = bottleneck ? 4 * w : w;
            bool down = i == 0 && s > 0;
            uint64_t so = down ? side / 2 : side;
            char nm[40];
            if (bottleneck) {
                snprintf(nm, sizeof nm, "layer%d.%d.conv1", s + 1, i);
                conv(b, nm, in, w, 1, side, false, true);
                snprintf(nm, sizeof nm, "layer%d.%d.conv2", s + 1, i);
                conv(b, nm, w, w, 3, so, false, true);
                snprintf(nm, sizeof nm, "layer%d.%d.conv3", s + 1, i);
                conv(b, nm, w, out, 1, so, false, true);
            } else {
                snprintf(nm, sizeof nm, "layer%d.%d.conv1", s + 1, i);
                conv(b, nm, in, w, 3, so, false, true);
                snprintf(nm, sizeof nm, "layer%d.%d.conv2", s + 1, i);
                conv(b, nm, w, w, 3, so, false, true);
            }
            if (i == 0 && (down || in != out)) {
                snprintf(nm, sizeof nm, "layer%d.%d.downsample", s + 1, i);
                conv(b, nm, in, out, 1, so, false, true);
            }
            in = out;
            side = so;
        }
    }
    fc(b, "fc", in, 1000);
}

static void build_vgg16(builder *b)
{
    /* configuration D: 0 is a 2x2 max pool */
    const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
    uint64_t in = 3, side = 224;
    int n = 0;
    for (size_t i = 0; i < sizeof cfg / sizeof *cfg; i++) {
        if (cfg[i] == 0) {
            side /= 2;
            continue;
        }
        char nm[40];
        snprintf(nm, sizeof nm, "features.conv%d", ++n);
        conv(b, nm, in, (uint64_t)cfg[i], 3, side, true, false);
        in = (uint64_t)cfg[i];
    }
    fc(b, "classifier.fc1", 512 * 7 * 7, 4096);
    fc(b, "classifier.fc2", 4096, 4096);
    fc(b, "classifier.fc3", 4096, 1000);
}

double tc_zoo_flops_token(const tc_zoo_model *m, const tc_zoo_derived *d, double s)
{
    if (m->arch != TC_MODEL_TRANSFORMER)
        return 0;
    double attn_dim = (double)m->heads * (double)(m->hidden / m->heads);
    return 6.0 * d->matmul_active + 12.0 * (double)m->layers * attn_dim * s;
}

tc_status tc_zoo_derive(const tc_zoo_model *m, tc_zoo_derived *out, tc_err *err)
{
    tc_status st = tc_zoo_check(m, NULL, err);
    if (st != TC_OK)
        return st;
    memset(out, 0, sizeof *out);
    builder b = {.d = out};
    if (m->arch == TC_MODEL_CNN) {
        static const int r18[4] = {2, 2, 2, 2}, r50[4] = {3, 4, 6, 3};
        if (strcmp(m->name, "resnet18") == 0)
            build_resnet(&b, false, r18);
        else if (strcmp(m->name, "resnet50") == 0)
            build_resnet(&b, true, r50);
        else
            build_vgg16(&b);
    } else {
        build_transformer(&b, m);
    }
    if (b.overflow)
        return tc_fail(err, TC_EINTERNAL, "%s: more than %d tensors", m->name, TC_ZOO_MAX_TENSORS);

    double expert_all = 0, matmul = 0, act = 0;
    size_t wlayers = 0;
    for (size_t i = 0; i < out->ntensors; i++) {
        const tc_tensor *t = &out->tensors[i];
        double n = tensor_elems(t) * t->count;
        out->params += n;
        if (t->in_layer)
            out->params_layer += n / m->layers;
        else if (strncmp(t->name, "embed.", 6) == 0)
            out->params_embed += n;
        else
            out->params_head += n;
        if (t->expert)
            expert_all += n;
        if (t->matmul)
            matmul += t->expert ? n * m->top_k / m->experts : n;
        if (t->act_elems > 0) {
            act += 2.0 * t->act_elems; /* a 16-bit output kept for the backward pass */
            wlayers++;
        }
    }
    if (m->arch == TC_MODEL_CNN) {
        out->params_layer = 0;
        out->params_active = out->params;
        out->matmul_active = matmul;
        out->flops_sample = 3.0 * 2.0 * m->macs_sample; /* forward + backward (2x), a multiply-add is 2 FLOPs */
        out->act_sample_bytes = act;
        out->act_layer_bytes = wlayers ? act / (double)wlayers : 0;
        return TC_OK;
    }
    out->params_active = out->params - expert_all + expert_all * m->top_k / m->experts;
    /* the LM head multiplies every token even when tied to the embedding */
    out->matmul_active = matmul + (m->tied_embeddings ? (double)m->vocab * m->hidden : 0);
    out->flops_token = tc_zoo_flops_token(m, out, m->seq);
    out->flops_sample = out->flops_token * m->seq;
    out->act_layer_bytes = tc_act_layer_bytes(m, m->seq, 1, 1, false, TC_RECOMPUTE_NONE, true);
    out->act_sample_bytes = out->act_layer_bytes * m->layers;
    return TC_OK;
}

/* ---- user models from JSON ---------------------------------------------- */

static tc_status get_u32(json_t *root, const char *path, const char *key, bool required, uint32_t def, uint32_t *out,
                         tc_err *err)
{
    json_t *v = json_object_get(root, key);
    if (!v) {
        if (required)
            return tc_fail(err, TC_EINVAL, "%s: field '%s': missing", path, key);
        *out = def;
        return TC_OK;
    }
    double x = json_is_integer(v) ? (double)json_integer_value(v) : json_is_real(v) ? json_real_value(v) : -1;
    if (!json_is_number(v) || !(x >= 0) || x != floor(x) || x > MAX_DIM)
        return tc_fail(err, TC_EINVAL, "%s: field '%s': expected a non-negative integer up to 16777216", path, key);
    *out = (uint32_t)x;
    return TC_OK;
}

static tc_status get_bool(json_t *root, const char *path, const char *key, bool *out, tc_err *err)
{
    json_t *v = json_object_get(root, key);
    if (!v) {
        *out = false;
        return TC_OK;
    }
    if (!json_is_boolean(v))
        return tc_fail(err, TC_EINVAL, "%s: field '%s': expected true or false", path, key);
    *out = json_is_true(v);
    return TC_OK;
}

static const char *const json_keys[] = {
    "name", "arch", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq", "experts", "top_k",
    "gated_mlp", "bias", "norm", "tied_embeddings", "pos_embed", "type_vocab", "pooler", "post_norm", "params",
    "source",
};

static tc_status from_json(json_t *root, const char *path, tc_zoo_model *m, char *srcbuf, size_t len, tc_err *err)
{
    if (!json_is_object(root))
        return tc_fail(err, TC_EINVAL, "%s: field '(top level)': expected a JSON object", path);
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        bool known = false;
        for (size_t i = 0; i < sizeof json_keys / sizeof *json_keys; i++)
            known = known || strcmp(key, json_keys[i]) == 0;
        if (!known)
            return tc_fail(err, TC_EINVAL, "%s: field '%.64s': unknown (accepted: name, arch, layers, hidden, ffn, "
                           "heads, kv_heads, vocab, seq, experts, top_k, gated_mlp, bias, norm, ...)", path, key);
    }
    memset(m, 0, sizeof *m);
    json_t *v = json_object_get(root, "name");
    if (!v)
        return tc_fail(err, TC_EINVAL, "%s: field 'name': missing", path);
    if (!json_is_string(v) || !json_string_value(v)[0] || strlen(json_string_value(v)) >= sizeof m->name)
        return tc_fail(err, TC_EINVAL, "%s: field 'name': expected a string of 1 to %zu characters", path,
                       sizeof m->name - 1);
    snprintf(m->name, sizeof m->name, "%s", json_string_value(v));
    v = json_object_get(root, "arch");
    if (v && (!json_is_string(v) || strcmp(json_string_value(v), "transformer") != 0))
        return tc_fail(err, TC_EINVAL, "%s: field 'arch': expected \"transformer\" (CNNs: the zoo's only)", path);
    m->arch = TC_MODEL_TRANSFORMER;
    tc_status st;
    if ((st = get_u32(root, path, "layers", true, 0, &m->layers, err)) != TC_OK ||
        (st = get_u32(root, path, "hidden", true, 0, &m->hidden, err)) != TC_OK ||
        (st = get_u32(root, path, "ffn", true, 0, &m->ffn, err)) != TC_OK ||
        (st = get_u32(root, path, "heads", true, 0, &m->heads, err)) != TC_OK ||
        (st = get_u32(root, path, "kv_heads", false, m->heads, &m->kv_heads, err)) != TC_OK ||
        (st = get_u32(root, path, "vocab", true, 0, &m->vocab, err)) != TC_OK ||
        (st = get_u32(root, path, "seq", true, 0, &m->seq, err)) != TC_OK ||
        (st = get_u32(root, path, "experts", false, 1, &m->experts, err)) != TC_OK ||
        (st = get_u32(root, path, "top_k", false, 1, &m->top_k, err)) != TC_OK ||
        (st = get_u32(root, path, "pos_embed", false, 0, &m->pos_embed, err)) != TC_OK ||
        (st = get_u32(root, path, "type_vocab", false, 0, &m->type_vocab, err)) != TC_OK ||
        (st = get_bool(root, path, "gated_mlp", &m->gated_mlp, err)) != TC_OK ||
        (st = get_bool(root, path, "bias", &m->bias, err)) != TC_OK ||
        (st = get_bool(root, path, "tied_embeddings", &m->tied_embeddings, err)) != TC_OK ||
        (st = get_bool(root, path, "pooler", &m->pooler, err)) != TC_OK ||
        (st = get_bool(root, path, "post_norm", &m->post_norm, err)) != TC_OK)
        return st;
    v = json_object_get(root, "norm");
    if (v) {
        if (json_is_string(v) && strcmp(json_string_value(v), "layernorm") == 0)
            m->norm = TC_NORM_LAYERNORM;
        else if (json_is_string(v) && strcmp(json_string_value(v), "rmsnorm") == 0)
            m->norm = TC_NORM_RMSNORM;
        else
            return tc_fail(err, TC_EINVAL, "%s: field 'norm': expected \"layernorm\" or \"rmsnorm\"", path);
    }
    v = json_object_get(root, "params");
    if (v) {
        if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
            return tc_fail(err, TC_EINVAL, "%s: field 'params': expected a number >= 0", path);
        m->published_params = json_number_value(v);
    }
    v = json_object_get(root, "source");
    if (v && !json_is_string(v))
        return tc_fail(err, TC_EINVAL, "%s: field 'source': expected a string", path);
    if (srcbuf && len) {
        snprintf(srcbuf, len, "%s", v ? json_string_value(v) : "user model (no source given)");
        m->source = srcbuf;
    } else {
        m->source = "user model";
    }
    return tc_zoo_check(m, path, err);
}

tc_status tc_zoo_parse_json(const char *text, const char *origin, tc_zoo_model *m, char *srcbuf, size_t len,
                            tc_err *err)
{
    json_error_t je;
    unsigned long mark = tc_oom_mark();
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) {
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root)
        return tc_fail(err, TC_EINVAL, "%s: field '(JSON)': malformed at line %d: %s", origin, je.line, je.text);
    tc_status st = from_json(root, origin, m, srcbuf, len, err);
    json_decref(root);
    return st;
}

tc_status tc_zoo_load_json(const char *path, tc_zoo_model *m, char *srcbuf, size_t len, tc_err *err)
{
    json_error_t je;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) /* jansson reads one as an empty file */
        return tc_fail(err, TC_EINVAL, "%s: a directory, not a model JSON file", path);
    unsigned long mark = tc_oom_mark();
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (tc_oom_since(mark)) { /* jansson's parser says so as a syntax error, or not at all */
        json_decref(root);
        return tc_fail(err, TC_EINTERNAL, "out of memory");
    }
    if (!root) {
        if (je.line <= 0)
            return tc_fail(err, TC_EINVAL, "%s: field '(file)': cannot read: %s", path, je.text);
        return tc_fail(err, TC_EINVAL, "%s: field '(JSON)': malformed at line %d: %s", path, je.line, je.text);
    }
    tc_status st = from_json(root, path, m, srcbuf, len, err);
    json_decref(root);
    return st;
}
