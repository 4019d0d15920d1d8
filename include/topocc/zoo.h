/*
 * topocc/zoo.h - a model zoo with structure: the architecture of each model
 * (layers, hidden size, FFN size, heads and KV heads, vocabulary, training
 * context, experts), the shape of every parameter tensor, and what follows
 * from them: parameter counts, training FLOPs per token (or per sample),
 * activation bytes per layer. Every figure carries its source
 * (docs/MODEL.md, "Training: models and memory").
 *
 * This is the building block of the training iteration; the older tc_model
 * of topocc/workload.h (used by `topocc compress`) is separate and unchanged.
 */
#ifndef TOPOCC_ZOO_H
#define TOPOCC_ZOO_H

#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_MODEL_TRANSFORMER = 0,
    TC_MODEL_CNN = 1
} tc_model_arch;

typedef enum {
    TC_NORM_LAYERNORM = 0, /* weight and bias */
    TC_NORM_RMSNORM = 1    /* weight only */
} tc_norm;

/* The architecture of one model. Transformer fields are 0 for a CNN. */
typedef struct tc_zoo_model {
    char name[48];
    tc_model_arch arch;
    /* transformer */
    uint32_t layers;      /* transformer blocks */
    uint32_t hidden;      /* h, d_model */
    uint32_t ffn;         /* MLP inner size (per expert) */
    uint32_t heads;       /* a, query heads */
    uint32_t kv_heads;    /* key/value heads (== heads without GQA) */
    uint32_t vocab;       /* V */
    uint32_t seq;         /* s, training context in tokens */
    uint32_t experts;     /* MoE experts per layer (1: dense) */
    uint32_t top_k;       /* experts per token (1: dense) */
    bool gated_mlp;       /* SwiGLU: gate, up, down (else up, down) */
    bool bias;            /* linear layers have biases */
    tc_norm norm;
    bool tied_embeddings; /* the LM head reuses the input embedding */
    uint32_t pos_embed;   /* learned position embeddings (0: rotary) */
    uint32_t type_vocab;  /* segment embeddings (BERT: 2) */
    bool pooler;          /* BERT's pooler (h x h + h) */
    bool post_norm;       /* BERT-style: a norm after the embeddings, no final norm */
    /* CNN */
    uint32_t image;       /* input side in pixels (224) */
    double macs_sample;   /* forward multiply-adds per sample, published */
    /* published figures, to check the shapes against */
    double published_params;
    double published_active; /* MoE: parameters per token, published (0: none) */
    const char *source;      /* where every figure above comes from */
} tc_zoo_model;

/* One parameter tensor (or a group of identical ones: count of them). */
typedef struct tc_tensor {
    char name[40];
    uint32_t ndim;
    uint64_t shape[4];
    uint32_t count;       /* repeats: layers, experts x layers */
    bool in_layer;        /* part of a transformer block (split by PP with the layers) */
    bool matmul;          /* takes part in a matrix multiply per token (FLOPs) */
    bool expert;          /* an MoE expert tensor (top_k of experts active per token) */
    double act_elems;     /* CNN: elements of the layer's output per sample (0 otherwise) */
} tc_tensor;

#define TC_ZOO_MAX_TENSORS 256

/* What follows from the architecture. */
typedef struct tc_zoo_derived {
    size_t ntensors;
    tc_tensor tensors[TC_ZOO_MAX_TENSORS];
    double params;          /* all parameters */
    double params_layer;    /* one transformer block (all experts) */
    double params_embed;    /* input embeddings: tokens, positions, segments, embedding norm */
    double params_head;     /* LM head (0 when tied) + final norm + pooler */
    double params_active;   /* per token: top_k of the experts (== params when dense) */
    double matmul_active;   /* parameters in matrix multiplies per token (incl. the LM head, excl. lookups) */
    double flops_token;     /* transformer: training FLOPs per token at the model's seq (fwd + bwd) */
    double flops_sample;    /* training FLOPs per sample (transformer: flops_token * seq) */
    double act_layer_bytes; /* transformer: one layer, one sequence, no parallelism (Korthikanti eq. 1);
                               CNN: mean over weight layers of 16-bit outputs, one sample */
    double act_sample_bytes;/* all layers, one sample/sequence, no parallelism or recomputation */
} tc_zoo_derived;

/* The zoo: gpt3-175b, llama3-8b, llama3-70b, llama3-405b, mixtral-8x7b,
 * bert-large, resnet18, resnet50, vgg16, gpt2-xl, llama-7b. */
size_t tc_zoo_count(void);
const tc_zoo_model *tc_zoo_get(size_t i);
const tc_zoo_model *tc_zoo_find(const char *name);

/* Derives the tensors, counts and FLOPs of m (checks m first). */
tc_status tc_zoo_derive(const tc_zoo_model *m, tc_zoo_derived *out, tc_err *err);

/* Checks an architecture: a one-line error naming the first bad field. */
tc_status tc_zoo_check(const tc_zoo_model *m, const char *origin, tc_err *err);

/*
 * A user model from a JSON file with the zoo's fields:
 *   {"name": "my-model", "arch": "transformer", "layers": 32, "hidden": 4096,
 *    "ffn": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256, "seq": 8192,
 *    "experts": 1, "top_k": 1, "gated_mlp": true, "bias": false,
 *    "norm": "rmsnorm", "tied_embeddings": false, "pos_embed": 0,
 *    "type_vocab": 0, "pooler": false, "post_norm": false, "params": 8.03e9, "source": "..."}
 * Required: name, layers, hidden, ffn, heads, vocab, seq. Optional: arch
 * ("transformer" only), kv_heads (default heads), experts and top_k
 * (default 1), gated_mlp, bias, tied_embeddings, pooler, post_norm (false), norm
 * ("layernorm"), pos_embed, type_vocab (0), params (published, 0), source.
 * Unknown keys are refused. Malformed JSON or a missing or invalid field:
 * TC_EINVAL with one line naming the file and the field. The source string
 * is kept in srcbuf (len bytes) and m->source points to it.
 */
tc_status tc_zoo_load_json(const char *path, tc_zoo_model *m, char *srcbuf, size_t len, tc_err *err);
/* The same from the file's content (text), named origin in messages. */
tc_status tc_zoo_parse_json(const char *text, const char *origin, tc_zoo_model *m, char *srcbuf, size_t len,
                            tc_err *err);

/* Training FLOPs per token of a transformer at sequence length s
 * (Narayanan et al. SC'21, as Megatron-LM's num_floating_point_operations
 * computes it, without recomputation): 6 * matmul_active + 12 * layers *
 * heads * head_dim * s. */
double tc_zoo_flops_token(const tc_zoo_model *m, const tc_zoo_derived *d, double s);

#ifdef __cplusplus
}
#endif

#endif
