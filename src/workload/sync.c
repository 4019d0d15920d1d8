/*
 * sync.c - the synchronisation strategies of a job's replicas: time per
 * step and the loss rule derived from the DiLoCo papers (topocc/sync.h).
 */
#include <math.h>
#include <string.h>
#include "topocc/sync.h"

static const char *const names[] = {"ddp", "local-sgd", "diloco", "diloco-eager", "diloco-delayed",
                                    "streaming-diloco"};

const char *tc_sync_name(tc_sync_kind k)
{
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

bool tc_sync_parse(const char *s, tc_sync_kind *out)
{
    for (size_t i = 0; s && i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (tc_sync_kind)i;
            return true;
        }
    return false;
}

double tc_sync_dtype_bytes(const char *d)
{
    if (!d)
        return 0;
    return strcmp(d, "fp32") == 0   ? 4
           : strcmp(d, "bf16") == 0 ? 2
           : strcmp(d, "int8") == 0 ? 1
           : strcmp(d, "fp4") == 0  ? 0.5
                                    : 0;
}

tc_status tc_sync_step(const tc_sync_in *in, double *step_s, tc_err *err)
{
    if (in->replicas < 1 || in->inner_steps < 1)
        return tc_fail(err, TC_EINVAL, "sync: replicas and inner steps must be at least 1 (got %u and %u)",
                       in->replicas, in->inner_steps);
    if (!(in->inner_s >= 0) || !(in->outer_s >= 0) || !isfinite(in->inner_s) || !isfinite(in->outer_s))
        return tc_fail(err, TC_EINVAL, "sync: the inner and outer times must be finite and non-negative");
    double H = in->inner_steps, ti = in->inner_s, to = in->outer_s;
    switch (in->kind) {
    case TC_SYNC_DDP:
        *step_s = ti;
        break;
    case TC_SYNC_LOCAL_SGD:
    case TC_SYNC_DILOCO:
        *step_s = ti + to / H;
        break;
    case TC_SYNC_DILOCO_EAGER:
    case TC_SYNC_DILOCO_DELAYED:
        *step_s = fmax(ti, to / H);
        break;
    case TC_SYNC_STREAMING: {
        if (in->fragments < 1)
            return tc_fail(err, TC_EINVAL, "sync: streaming DiLoCo needs at least one fragment");
        /* a fragment's next synchronisation starts H steps after its last:
         * the last must be applied by then */
        if (in->overlap_steps > in->inner_steps)
            return tc_fail(err, TC_EINVAL,
                           "--overlap-steps %u: above --inner-steps %u: a fragment's outer all-reduce must be applied "
                           "before its next synchronisation, H steps later: accepted are 0 to %u",
                           in->overlap_steps, in->inner_steps, in->inner_steps);
        double F = in->fragments;
        *step_s = fmax(ti + F * fmax(0, to - in->overlap_steps * ti) / H, F * to / H);
        break;
    }
    default:
        return tc_fail(err, TC_EINVAL, "sync: unknown strategy %d", (int)in->kind);
    }
    return TC_OK;
}

/* Charles et al., "Scaling Laws for DiLoCo", arXiv 2503.09799v1, Table 4:
 * evaluation loss at H = 30 of data parallelism and of DiLoCo with M = 1,
 * 2, 4, 8 replicas, by model size. */
static const double tab_N[] = {35e6, 90e6, 180e6, 335e6, 550e6, 1.3e9, 2.4e9};
static const double tab_M[] = {1, 2, 4, 8};
static const double tab_dp[] = {3.485, 3.167, 2.950, 2.784, 2.653, 2.460, 2.326};
static const double tab_L[4][7] = {
    {3.482, 3.162, 2.943, 2.777, 2.645, 2.451, 2.317}, /* M = 1 */
    {3.508, 3.182, 2.957, 2.788, 2.657, 2.464, 2.323}, /* M = 2 */
    {3.554, 3.213, 2.981, 2.808, 2.673, 2.472, 2.332}, /* M = 4 */
    {3.621, 3.265, 3.019, 2.841, 2.698, 2.493, 2.351}, /* M = 8 */
};
#define NN (sizeof tab_N / sizeof *tab_N)

/* Linear interpolation of y over x (increasing) at v, clamped to the ends. */
static double interp(const double *x, const double *y, size_t n, double v, bool *outside)
{
    if (v < x[0] || v > x[n - 1])
        *outside = true;
    if (v <= x[0])
        return y[0];
    if (v >= x[n - 1])
        return y[n - 1];
    size_t i = 1;
    while (x[i] < v)
        i++;
    double w = (v - x[i - 1]) / (x[i] - x[i - 1]);
    return y[i - 1] + w * (y[i] - y[i - 1]);
}

/* p(N, M): DiLoCo's loss at H = 30 over data parallelism's, minus 1. */
static double penalty_p(double N, double M, bool *outside)
{
    double lx[NN], pm[4];
    for (size_t i = 0; i < NN; i++)
        lx[i] = log(tab_N[i]);
    for (int m = 0; m < 4; m++) {
        double y[NN];
        for (size_t i = 0; i < NN; i++)
            y[i] = tab_L[m][i] / tab_dp[i] - 1;
        pm[m] = interp(lx, y, NN, log(N), outside);
    }
    double lm[4];
    for (int m = 0; m < 4; m++)
        lm[m] = log2(tab_M[m]);
    return interp(lm, pm, 4, log2(M), outside);
}

/* q(M): the exponent of the loss's growth with H, (H / 30)^q, from Douillard et al.,
 * "Streaming DiLoCo", arXiv 2501.18512v1, Table 6 (1B parameters, evaluation
 * loss 2.48 at H = 30 and 2.50 at H = 100 with M = 2; 2.50 and 2.53 with
 * M = 4); M below 2 takes M = 2's, above 4 M = 4's (interpolated in log2 M
 * between). */
static double slope_q(double M)
{
    static const double lm[2] = {1, 2};
    double q[2] = {log(2.50 / 2.48) / log(100.0 / 30), log(2.53 / 2.50) / log(100.0 / 30)};
    bool clamped; /* the rule's own clamp, not outside the tables: M up to 8 is Table 4's */
    return interp(lm, q, 2, log2(M), &clamped);
}

double tc_sync_loss_penalty(tc_sync_kind k, double params, uint32_t M, uint32_t H, uint32_t tau, bool *known,
                            bool *outside)
{
    *known = true;
    *outside = false;
    if (k == TC_SYNC_DDP)
        return 0;
    if (k == TC_SYNC_LOCAL_SGD || M < 1 || H < 1 || !(params > 0)) {
        *known = false;
        return 0;
    }
    double p = penalty_p(params, M, outside);
    /* anchored from H = 30 (the tables' H) to 2,000 (DiLoCo's largest,
     * arXiv 2311.08105v3, Figure 4); H below 30 takes H = 30's (the
     * Scaling Laws paper, Section 5.1: all H above 1 perform comparably,
     * loss growing with H), H = 1 is outside */
    if (H == 1 || H > 2000)
        *outside = true;
    double h = H < 30 ? 30 : H;
    double g = pow(h / 30, slope_q(M)) - 1;
    double v = 0;
    if (k == TC_SYNC_DILOCO_EAGER)
        v = 0.0075; /* 2502.12996v1, Table 2: 2.69 against 2.67 without overlap */
    else if (k == TC_SYNC_DILOCO_DELAYED)
        v = 0.127; /* the same table: naive 1-outer-step delayed, 3.01 against 2.67 */
    else if (k == TC_SYNC_STREAMING && tau > 10)
        *outside = true; /* 2501.18512v1, Section 3.3.2: < 0.2% up to 10 overlapped steps */
    return (1 + p) * (1 + g) * (1 + v) - 1;
}
