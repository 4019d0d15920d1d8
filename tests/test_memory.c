/*
 * test_memory.c - memory per device (topocc/memory.h): ZeRO stages by hand,
 * ZeRO's own Figure 1 ratios, the activation formulas of Korthikanti et al.
 * Table 2 by hand for GPT-3 175B, pipeline and tensor division, the verdict
 * against an accelerator profile's capacity, refused configurations, and an
 * accelerator profile's training fields (achievable fraction, copy engines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "topocc/memory.h"

static void rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g", what, a, b);
}

static tc_mem estimate(const char *name, tc_mem_cfg c, double cap)
{
    tc_mem m;
    tc_err err = {{0}};
    if (tc_mem_estimate(tc_zoo_find(name), &c, cap, &m, &err) != TC_OK)
        fail_msg("%s: %s", name, err.msg);
    return m;
}

/*
 * Llama-3 8B, N = 8,030,261,248 parameters, DP = 8, no TP/PP:
 *   ZeRO-0: 16 N              = 128,484,179,968 bytes
 *   ZeRO-1: 2N + 2N + 12N/8   =   5.5 N = 44,166,436,864
 *   ZeRO-2: 2N + 14N/8        =  3.75 N = 30,113,479,680
 *   ZeRO-3: 16N/8             =     2 N = 16,060,522,496
 */
static void zero_stages_llama3_8b(void **state)
{
    (void)state;
    const double N = 8030261248.0;
    const double want[4] = {16 * N, 5.5 * N, 3.75 * N, 2 * N};
    for (int z = 0; z <= 3; z++) {
        tc_mem m = estimate("llama3-8b", (tc_mem_cfg){.dp = 8, .zero = z}, 0);
        assert_true(m.params == N);
        double states = m.weights + m.grads + m.optim;
        if (states != want[z])
            fail_msg("ZeRO-%d: %.0f bytes, expected %.0f", z, states, want[z]);
        assert_false(m.fits); /* no capacity given */
    }
    /* ZeRO's Figure 1 (Psi = 7.5B, N_d = 64, K = 12: 120, 31.4, 16.6, 1.88 GB):
     * the same ratios on any model; the paper prints three digits (16.64 -> 16.6,
     * 1.875 -> 1.88), hence 0.5% */
    double base = 0, got[4];
    for (int z = 0; z <= 3; z++) {
        tc_mem m = estimate("llama3-8b", (tc_mem_cfg){.dp = 64, .zero = z}, 0);
        got[z] = m.weights + m.grads + m.optim;
        if (z == 0)
            base = got[0];
    }
    rel(120 * got[1] / base, 31.4, 5e-3, "figure 1 P_os");
    rel(120 * got[2] / base, 16.6, 5e-3, "figure 1 P_os+g");
    rel(120 * got[3] / base, 1.88, 5e-3, "figure 1 P_os+g+p");
    /* fp32 gradients (grad_bytes 4): 4 N more unsharded (ZeRO 0, 1: 18 N and
     * 7.5 N), sharded with them from ZeRO 2 (2 N + (4 + 12) N / 8 = 4 N,
     * 18 N / 8 = 2.25 N); 2 is the default */
    const double want4[4] = {18 * N, 7.5 * N, 4 * N, 2.25 * N};
    for (int z = 0; z <= 3; z++) {
        tc_mem m4 = estimate("llama3-8b", (tc_mem_cfg){.dp = 8, .zero = z, .grad_bytes = 4}, 0);
        tc_mem m2 = estimate("llama3-8b", (tc_mem_cfg){.dp = 8, .zero = z, .grad_bytes = 2}, 0);
        if (m4.weights + m4.grads + m4.optim != want4[z])
            fail_msg("ZeRO-%d, fp32 gradients: %.0f bytes, expected %.0f", z, m4.weights + m4.grads + m4.optim,
                     want4[z]);
        assert_true(m2.weights + m2.grads + m2.optim == want[z]);
    }
}

/*
 * GPT-3 175B (a = 96, h = 12288), s = 2048, b = 1, per layer
 * (Korthikanti et al. Table 2), sbh = 25,165,824:
 *   no parallelism        sbh (34 + 80)          = 2,868,903,936
 *   TP t = 8              sbh (10 + 3 + 10)      =   578,813,952
 *   TP + SP               sbh / 8 x 114          =   358,612,992
 *   TP, selective         sbh (10 + 3)           =   327,155,712
 *   TP + SP, selective    34 sbh / 8             =   106,954,752
 *   full recomputation    2 sbh                  =    50,331,648
 * The paper's own per-model figures (its Figure 7 / tables) have not been
 * read, so no comparison with them is made here.
 */
static void activations_gpt3(void **state)
{
    (void)state;
    const tc_zoo_model *g = tc_zoo_find("gpt3-175b");
    const double sbh = 2048.0 * 12288;
    assert_true(tc_act_layer_bytes(g, 2048, 1, 1, false, TC_RECOMPUTE_NONE, true) == sbh * 114);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, false, TC_RECOMPUTE_NONE, true) == sbh * 23);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, true, TC_RECOMPUTE_NONE, true) == sbh / 8 * 114);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, false, TC_RECOMPUTE_SELECTIVE, true) == sbh * 13);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, true, TC_RECOMPUTE_SELECTIVE, true) == sbh * 34 / 8);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, true, TC_RECOMPUTE_FULL, true) == sbh * 2);
    assert_true(tc_act_layer_bytes(g, 2048, 4, 1, false, TC_RECOMPUTE_NONE, true) == 4 * sbh * 114);
    /* A fused attention kernel (FlashAttention) stores no scores: the
     * 5as/h term goes, as Megatron-LM's estimator counts a layer
     * (theoretical_memory_usage.py: 18 + 4 ffn/h with SP, 10 + 24/t
     * without): 34 sbh, 10 + 24/8 = 13 sbh, 34 sbh / 8; full
     * recomputation keeps its 2 sbh. */
    assert_true(tc_act_layer_bytes(g, 2048, 1, 1, false, TC_RECOMPUTE_NONE, false) == sbh * 34);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, false, TC_RECOMPUTE_NONE, false) == sbh * 13);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, true, TC_RECOMPUTE_NONE, false) == sbh * 34 / 8);
    assert_true(tc_act_layer_bytes(g, 2048, 1, 8, true, TC_RECOMPUTE_FULL, false) == sbh * 2);

    /* t = 8, p = 8, SP + selective, 1F1B: the first stage holds 12 layers
     * of 8 micro-batches: 12 x 8 x 106,954,752 = 10,267,656,192 bytes,
     * plus the embedding dropout mask 8 sbh / 8 (the output layer sits on
     * the last stage: 4 sbh (1 + V/h) / 8 is larger and is taken as the
     * most loaded stage's other activations) */
    tc_mem m = estimate("gpt3-175b", (tc_mem_cfg){.dp = 1, .tp = 8, .pp = 8, .seq_parallel = true,
                                                  .recompute = TC_RECOMPUTE_SELECTIVE}, 0);
    assert_int_equal(m.stage_layers, 12);
    assert_int_equal(m.inflight, 8);
    assert_true(m.act_layers == 12.0 * 8 * sbh * 34 / 8);
    rel(m.act_other, 4 * sbh * (1 + 50257.0 / 12288) / 8, 1e-15, "output layer");
    /* parameters: the first stage, 12 blocks + embeddings; the last, 12
     * blocks + final norm + the tied head's copy; divided by t */
    double lay = 12 * 12288.0 * 12288 + 13 * 12288.0;
    double first = 12 * lay + (50257.0 + 2048) * 12288, last = 12 * lay + 2 * 12288 + 50257.0 * 12288;
    rel(m.params, fmax(first, last) / 8, 1e-15, "gpt3 stage params");
}

/* Llama-3 70B at TP 8 x PP 4 x DP 8, ZeRO-1: 20 layers a stage */
static void pipeline_and_tensor_division(void **state)
{
    (void)state;
    tc_mem m = estimate("llama3-70b", (tc_mem_cfg){.dp = 8, .tp = 8, .pp = 4, .zero = 1}, 0);
    double lay = 2 * 8192.0 * 8192 + 2 * 8192.0 * 1024 + 3 * 8192.0 * 28672 + 2 * 8192;
    double first = 20 * lay + 128256.0 * 8192, last = 20 * lay + 8192 + 128256.0 * 8192;
    assert_true(m.params == fmax(first, last) / 8);
    assert_true(m.weights == 2 * m.params && m.grads == 2 * m.params && m.optim == 12 * m.params / 8);
    /* uneven split: 126 layers over 4 stages, the first takes 32 */
    m = estimate("llama3-405b", (tc_mem_cfg){.tp = 8, .pp = 4}, 0);
    assert_int_equal(m.stage_layers, 32);
    /* inflight overrides the 1F1B default */
    m = estimate("llama3-405b", (tc_mem_cfg){.tp = 8, .pp = 4, .inflight = 1}, 0);
    assert_int_equal(m.inflight, 1);
}

/* Against the H100 profile (80 GB): Llama-3 8B at DP 8 does not fit under
 * ZeRO-0 (16 N = 128.5 GB of states alone); under ZeRO-3 with full
 * recomputation it does: 16.06 GB of states + 32 x 2 sbh (2.15 GB) +
 * embedding mask (0.03 GB) + output layer 4 sbh (1 + V/h) (4.34 GB). */
static void fits_against_profile(void **state)
{
    (void)state;
    double cap = 0;
    tc_err err = {{0}};
    if (tc_accel_memory_bytes("h100", TOPOCC_SOURCE_DIR "/profiles", &cap, &err) != TC_OK)
        fail_msg("%s", err.msg);
    assert_true(cap == 80e9);
    char buf[1024];
    tc_mem m = estimate("llama3-8b", (tc_mem_cfg){.dp = 8, .zero = 0}, cap);
    assert_false(m.fits);
    assert_true(m.headroom < -48.4e9);
    tc_mem_format(&m, buf, sizeof buf);
    assert_non_null(strstr(buf, "does not fit by"));
    m = estimate("llama3-8b", (tc_mem_cfg){.dp = 8, .zero = 3, .recompute = TC_RECOMPUTE_FULL}, cap);
    const double sbh = 8192.0 * 4096;
    rel(m.total, 2 * 8030261248.0 + 32 * 2 * sbh + sbh + 4 * sbh * (1 + 128256.0 / 4096), 1e-15, "zero3 total");
    assert_true(m.fits);
    tc_mem_format(&m, buf, sizeof buf);
    assert_non_null(strstr(buf, "fits ("));
    /* a CNN: ResNet-50 at batch 256 per device, ZeRO-0 */
    m = estimate("resnet50", (tc_mem_cfg){.micro_batch = 256}, cap);
    assert_true(m.weights == 2 * 25557032.0);
    assert_true(m.activations > 0);
    /* a profile without memory_capacity is refused naming the field */
    assert_int_equal(tc_accel_memory_bytes("test-node", TOPOCC_SOURCE_DIR "/tests/data/profiles", &cap, &err),
                     TC_EINVAL);
    assert_non_null(strstr(err.msg, "memory_capacity"));
}

static void refused(void **state)
{
    (void)state;
    tc_mem m;
    tc_err err = {{0}};
    tc_mem_cfg c = {.zero = 4};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("llama3-8b"), &c, 0, &m, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "ZeRO"));
    c = (tc_mem_cfg){.pp = 33};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("llama3-8b"), &c, 0, &m, &err), TC_EINVAL);
    c = (tc_mem_cfg){.tp = 3};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("llama3-8b"), &c, 0, &m, &err), TC_EINVAL);
    c = (tc_mem_cfg){.tp = 2};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("resnet50"), &c, 0, &m, &err), TC_EINVAL);
    c = (tc_mem_cfg){0};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("llama3-8b"), &c, -1, &m, &err), TC_EINVAL);
    c = (tc_mem_cfg){.grad_bytes = -4};
    assert_int_equal(tc_mem_estimate(tc_zoo_find("llama3-8b"), &c, 0, &m, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "gradient"));
    assert_null(strchr(err.msg, '\n'));
}

/* tc_accel_train_fields on profile NAME of dir: fails the test unless it
 * succeeds; the outputs start as values no profile gives, so a field left
 * unwritten shows. */
static void train_fields(const char *name, const char *dir, double *a, uint32_t *c)
{
    tc_err err = {{0}};
    *a = -1;
    *c = 999;
    if (tc_accel_train_fields(name, dir, a, c, &err) != TC_OK)
        fail_msg("%s: %s", name, err.msg);
}

/* tc_accel_train_fields fails on profile NAME of dir with one line naming
 * want; the outputs are left as they were. */
static void train_fields_refused(const char *name, const char *dir, const char *want)
{
    tc_err err = {{0}};
    double a = -1;
    uint32_t c = 999;
    assert_int_equal(tc_accel_train_fields(name, dir, &a, &c, &err), TC_EINVAL);
    if (!strstr(err.msg, want))
        fail_msg("%s: '%s' does not say '%s'", name, err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    assert_true(a == -1 && c == 999);
}

#define DATA_PROFILES TOPOCC_SOURCE_DIR "/tests/data/profiles"

/* The shipped profiles' figures (profiles/NAME.json, each with its source):
 * H100 80.3% of peak and 3 copy engines; H200 and B200 without a copy engine
 * count; TPU v5p's fraction is assumed. NULL searches the default path. */
static void train_fields_of_shipped_profiles(void **state)
{
    (void)state;
    double a;
    uint32_t c;
    train_fields("h100", TOPOCC_SOURCE_DIR "/profiles", &a, &c);
    assert_true(a == 0.803);
    assert_int_equal(c, 3);
    train_fields("h100", NULL, &a, &c);
    assert_true(a == 0.803);
    assert_int_equal(c, 3);
    train_fields("h200", NULL, &a, &c);
    assert_true(a == 0.803);
    assert_int_equal(c, 0);
    train_fields("b200", NULL, &a, &c);
    assert_true(a == 0.776);
    assert_int_equal(c, 0);
    train_fields("a100", NULL, &a, &c);
    assert_true(a == 0.869);
    assert_int_equal(c, 0);
    train_fields("tpu-v5p", NULL, &a, &c);
    assert_true(a == 0.7);
    assert_int_equal(c, 0);
    /* the TPUs' capacities (95 GB; 32 GiB) */
    double cap = 0;
    tc_err err = {{0}};
    assert_int_equal(tc_accel_memory_bytes("tpu-v5p", NULL, &cap, &err), TC_OK);
    assert_true(cap == 95e9);
    assert_int_equal(tc_accel_memory_bytes("tpu-v4", NULL, &cap, &err), TC_OK);
    assert_true(fabs(cap - 32.0 * 1073741824.0) < 1);
    /* a directory that does not hold the profile still finds it on the default path */
    train_fields("h100", DATA_PROFILES, &a, &c);
    assert_int_equal(c, 3);
}

/* Absent fields read 0; a profile not found or of another kind is refused. */
static void train_fields_absent_or_refused(void **state)
{
    (void)state;
    double a;
    uint32_t c;
    train_fields("test-accel", DATA_PROFILES, &a, &c); /* neither field */
    assert_true(a == 0);
    assert_int_equal(c, 0);
    train_fields_refused("test-accel", NULL, "test-accel"); /* not on the default path */
    train_fields_refused("no-such-chip", DATA_PROFILES, "no-such-chip");
    train_fields_refused("test-node", DATA_PROFILES, "not an accelerator profile");
}

/* Writes an accelerator profile NAME.json into dir with the two fields'
 * JSON values (NULL: the field is left out). */
static void write_profile(const char *dir, const char *name, const char *achievable, const char *copy_engines)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"schema\": \"topocc-profile/1\", \"name\": \"%s\", \"kind\": \"accelerator\", \"title\": \"test\", "
            "\"fields\": {\"dense16_TFLOPS\": {\"value\": 100, \"assumed\": true}, "
            "\"mem_TBps\": {\"value\": 2, \"assumed\": true}",
            name);
    if (achievable)
        fprintf(f, ", \"achievable_fraction\": {\"value\": %s, \"assumed\": true}", achievable);
    if (copy_engines)
        fprintf(f, ", \"copy_engines\": {\"value\": %s, \"assumed\": true}", copy_engines);
    fputs("}}\n", f);
    fclose(f);
}

/* Out of range: the achievable fraction outside (0, 1], copy engines not a
 * whole number from 1 to 64, either not a number; the ends are accepted. */
static void train_fields_out_of_range(void **state)
{
    (void)state;
    train_fields_refused("bad-achievable", DATA_PROFILES, "field 'achievable_fraction': expected a fraction of peak "
                                                          "in (0, 1], not 1.5");
    train_fields_refused("bad-achievable", DATA_PROFILES, "bad-achievable.json");
    train_fields_refused("bad-copy-engines", DATA_PROFILES, "field 'copy_engines': expected a whole number of copy "
                                                            "engines from 1 to 64, not 2.5");

    char dir[] = "/tmp/topocc_memory_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const struct {
        const char *name, *achievable, *copy_engines, *want; /* want NULL: accepted */
        double a;
        uint32_t c;
    } cases[] = {
        {"t-zero", "0", NULL, "achievable_fraction", 0, 0},
        {"t-negative", "-0.5", NULL, "not -0.5", 0, 0},
        {"t-above", "1.0001", NULL, "not 1.0001", 0, 0},
        {"t-one", "1", NULL, NULL, 1, 0},
        {"t-small", "0.001", "1", NULL, 0.001, 1},
        {"t-ce-zero", NULL, "0", "copy_engines", 0, 0},
        {"t-ce-64", "0.5", "64", NULL, 0.5, 64},
        {"t-ce-65", "0.5", "65", "not 65", 0, 0},
        {"t-ce-negative", NULL, "-3", "not -3", 0, 0},
        {"t-ce-string", NULL, "\"three\"", "fields.copy_engines.value' must be a number", 0, 0},
        {"t-a-string", "\"high\"", "2", "fields.achievable_fraction.value' must be a number", 0, 0},
        {"t-a-bool", "true", NULL, "achievable_fraction", 0, 0},
    };
    char path[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_profile(dir, cases[i].name, cases[i].achievable, cases[i].copy_engines);
        if (cases[i].want) {
            train_fields_refused(cases[i].name, dir, cases[i].want);
        } else {
            double a;
            uint32_t c;
            train_fields(cases[i].name, dir, &a, &c);
            if (a != cases[i].a || c != cases[i].c)
                fail_msg("%s: %g, %u; expected %g, %u", cases[i].name, a, c, cases[i].a, cases[i].c);
        }
        snprintf(path, sizeof path, "%s/%s.json", dir, cases[i].name);
        remove(path);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_stages_llama3_8b),
        cmocka_unit_test(activations_gpt3),
        cmocka_unit_test(pipeline_and_tensor_division),
        cmocka_unit_test(fits_against_profile),
        cmocka_unit_test(refused),
        cmocka_unit_test(train_fields_of_shipped_profiles),
        cmocka_unit_test(train_fields_absent_or_refused),
        cmocka_unit_test(train_fields_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
