/*
 * topocc/sync.h - how the replicas of a training job synchronise (docs/MODEL.md,
 * "Training across datacenters"): DDP every step, local SGD and DiLoCo (H
 * inner steps, then an outer all-reduce of the pseudo-gradient), the
 * variants that overlap the outer all-reduce with the next inner phase, and
 * streaming DiLoCo's fragments. Time per step from the inner step's time and
 * the outer all-reduce's; the loss against DDP by a rule derived from the
 * DiLoCo papers' tables (marked as derived wherever it is shown).
 */
#ifndef TOPOCC_SYNC_H
#define TOPOCC_SYNC_H

#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TC_SYNC_DDP = 0,        /* gradients all-reduced over every replica each step */
    TC_SYNC_LOCAL_SGD,      /* parameters averaged every H steps, blocking */
    TC_SYNC_DILOCO,         /* pseudo-gradient all-reduced every H steps, blocking (outer Nesterov) */
    TC_SYNC_DILOCO_EAGER,   /* the outer all-reduce overlaps the next H inner steps; eager updates */
    TC_SYNC_DILOCO_DELAYED, /* the same, the outer update applied one outer step late */
    TC_SYNC_STREAMING       /* streaming DiLoCo: F fragments in turn, each overlapping tau inner steps */
} tc_sync_kind;

/* "ddp", "local-sgd", "diloco", "diloco-eager", "diloco-delayed",
 * "streaming-diloco"; parse returns false for anything else. */
const char *tc_sync_name(tc_sync_kind k);
bool tc_sync_parse(const char *s, tc_sync_kind *out);

/* Bytes per element of the outer pseudo-gradient: "fp32" 4, "bf16" 2,
 * "int8" 1, "fp4" 0.5; 0 for anything else. */
double tc_sync_dtype_bytes(const char *dtype);

typedef struct tc_sync_in {
    tc_sync_kind kind;
    uint32_t replicas;        /* M >= 1 */
    uint32_t inner_steps;     /* H >= 1 */
    uint32_t fragments;       /* streaming: F >= 1 */
    uint32_t overlap_steps;   /* streaming: tau */
    double inner_s;           /* one inner step (an iteration) */
    double outer_s;           /* one outer synchronisation (streaming: one fragment's) */
} tc_sync_in;

/*
 * Time per step, averaged over an outer step of H inner steps:
 *  ddp: inner_s (the iteration already all-reduces over every replica);
 *  local-sgd, diloco: inner_s + outer_s / H (the outer step blocks);
 *  diloco-eager, diloco-delayed: max(inner_s, outer_s / H) (the outer
 *    all-reduce runs behind the next H inner steps; it can only fall
 *    behind if it takes longer than they do);
 *  streaming: max(inner_s + F max(0, outer_s - tau inner_s) / H,
 *    F outer_s / H) (F fragment syncs per H steps, each hidden behind tau
 *    inner steps; the long-haul links carry at most one at a time).
 * Fails (TC_EINVAL) on M, H, F of 0 or negative times.
 */
tc_status tc_sync_step(const tc_sync_in *in, double *step_s, tc_err *err);

/*
 * The loss against DDP at equal steps and tokens, as a fraction (0.01: 1%
 * higher), by a rule DERIVED from the DiLoCo papers' tables, not one they
 * state: (1 + p(N, M)) (H / 30)^q(M) (1 + v) - 1, with p the loss
 * of DiLoCo at H = 30 against data parallelism (Charles et al., "Scaling
 * Laws for DiLoCo", arXiv 2503.09799v1, Table 4; interpolated in log N and
 * log2 M), q the exponent of the loss's growth with H (Douillard et al.,
 * "Streaming DiLoCo", arXiv 2501.18512v1, Table 6, 1B: H 30 -> 100 at M = 2
 * and 4) and v the overlap variant's (Kale et al., "Eager Updates ...",
 * arXiv 2502.12996v1, Table 2: 1-outer-step eager +0.75%, naive delayed
 * +12.7%; streaming with tau <= 10: < 0.2%, 2501.18512 Section 3.3.2,
 * taken as 0). *outside is set where N, M, H or tau lie outside the
 * tables (the nearest value is used); local SGD and DDP: 0 with
 * *known false for local SGD (no cited rule).
 */
double tc_sync_loss_penalty(tc_sync_kind k, double params, uint32_t M, uint32_t H, uint32_t tau, bool *known,
                            bool *outside);

#ifdef __cplusplus
}
#endif

#endif
