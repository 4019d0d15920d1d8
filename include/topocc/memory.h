/*
 * topocc/memory.h - memory per device of a training job: parameters,
 * gradients and optimizer state of mixed-precision Adam (16 bytes per
 * parameter, Rajbhandari et al., "ZeRO", SC'20, Figure 1) divided as
 * ZeRO stage 0..3 divides them over the data-parallel degree, and by the
 * tensor- and pipeline-parallel degrees; activations per Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models" (MLSys
 * 2023, arXiv 2205.05198, Table 2); against an accelerator's capacity.
 * docs/MODEL.md, "Training: models and memory", gives every formula.
 */
#ifndef TOPOCC_MEMORY_H
#define TOPOCC_MEMORY_H

#include "topocc/zoo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mixed-precision Adam (ZeRO, Figure 1, K = 12): 16-bit parameters and gradients
 * (2 + 2 bytes) and K = 12 bytes of fp32 optimizer state (parameters,
 * momentum, variance). */
#define TC_BYTES_PARAM16 2.0
#define TC_BYTES_GRAD16 2.0
#define TC_BYTES_ADAM 12.0

typedef enum {
    TC_RECOMPUTE_NONE = 0,
    TC_RECOMPUTE_SELECTIVE = 1, /* attention scores recomputed: the 5as/h term goes */
    TC_RECOMPUTE_FULL = 2       /* only each layer's input is kept: 2sbh */
} tc_recompute;

typedef struct tc_mem_cfg {
    uint32_t dp, tp, pp;     /* parallel degrees (0 is read as 1) */
    uint32_t ep;             /* expert parallelism inside DP (0 or 1: none): each rank holds
                                1/ep of a layer's experts, whose state ZeRO shards over dp/ep */
    int zero;                /* ZeRO stage 0, 1, 2 or 3 */
    uint32_t micro_batch;    /* b, sequences (or samples) per micro-batch (0: 1) */
    uint32_t seq;            /* s (0: the model's) */
    bool seq_parallel;       /* Megatron sequence parallelism (needs tp > 1 to matter) */
    tc_recompute recompute;
    bool eager_attention;    /* the attention's softmax, dropout mask and scores stored (Korthikanti's
                                5as/h term); false: a fused kernel (FlashAttention) that stores none */
    uint32_t inflight;       /* micro-batches whose activations the device holds;
                                0: pp (1F1B, first stage) */
    double grad_bytes;       /* bytes per gradient element (0: TC_BYTES_GRAD16; 4: fp32
                                gradients, Megatron-LM's default for bf16 training) */
} tc_mem_cfg;

typedef struct tc_mem {
    uint32_t stage_layers;   /* transformer blocks on the most loaded stage */
    double params;           /* parameters the device holds before ZeRO (its TP/PP/EP shard) */
    double eparams;          /* of which expert parameters (ep > 1; sharded over dp/ep) */
    double weights;          /* bytes: 16-bit parameters */
    double grads;            /* bytes: gradients (grad_bytes each, 16-bit by default) */
    double optim;            /* bytes: fp32 parameters, momentum, variance */
    double act_layer;        /* bytes: one layer, one micro-batch */
    double act_layers;       /* bytes: the stage's layers x in-flight micro-batches */
    double act_other;        /* bytes: embedding dropout and output layer / loss */
    double activations;      /* act_layers + act_other */
    double total;
    uint32_t inflight;
    double capacity;         /* bytes (0: not compared) */
    double headroom;         /* capacity - total (negative: short by that much) */
    bool fits;
} tc_mem;

/* Activation bytes of one transformer layer (Korthikanti et al. Table 2),
 * s tokens, b sequences, TP degree t. The linear coefficient is the paper's
 * 34 = 10 (replicated under TP without sequence parallelism) + 24, written
 * 18 + 4 f/h for an FFN of size f as Megatron-LM's theoretical memory does
 * (34 at f = 4h; an MoE layer counts top_k experts): */
double tc_act_layer_bytes(const tc_zoo_model *m, double s, double b, uint32_t t, bool sp, tc_recompute r, bool eager);

/* The memory of one device (the most loaded pipeline stage). */
tc_status tc_mem_estimate(const tc_zoo_model *m, const tc_mem_cfg *c, double capacity_bytes, tc_mem *out,
                          tc_err *err);

/* An accelerator profile's memory_capacity (profiles/NAME.json, "GB":
 * 1e9 bytes), searched as tc_profile_load searches (dir first, NULL: none). */
tc_status tc_accel_memory_bytes(const char *name, const char *dir, double *bytes, tc_err *err);

/* An accelerator profile's training figures, found as tc_accel_memory_bytes
 * finds it: achievable_fraction (the fraction of peak dense 16-bit FLOP/s a
 * large matmul reaches, "fraction") and copy_engines (DMA copy engines,
 * "count"). A field the profile does not have reads 0. A present
 * achievable_fraction outside (0, 1], a copy_engines that is not a whole
 * number from 1 to 64, either not a number, or a profile of another kind
 * than "accelerator" fails with TC_EINVAL naming the file (and the field),
 * and nothing is written. */
tc_status tc_accel_train_fields(const char *name, const char *dir, double *achievable, uint32_t *copy_engines,
                                tc_err *err);

/* The breakdown in GiB, several lines, ending "fits (X GiB free)" or "does
 * not fit by X GiB" when a capacity was given. Returns snprintf's count. */
int tc_mem_format(const tc_mem *mem, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
