/*
 * test_zoo.c - the structured model zoo (topocc/zoo.h): parameter totals
 * summed from the tensor shapes against the published totals, tensor
 * shapes, training FLOPs per token by hand, and user models from JSON
 * (a good one by hand, malformed and invalid ones refused naming the file
 * and the field).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "topocc/zoo.h"

#define DATA TOPOCC_SOURCE_DIR "/tests/data/models/"

static tc_zoo_derived *derive(const char *name)
{
    const tc_zoo_model *m = tc_zoo_find(name);
    if (!m)
        fail_msg("no zoo model %s", name);
    tc_zoo_derived *d = calloc(1, sizeof *d);
    assert_non_null(d);
    tc_err err = {{0}};
    if (tc_zoo_derive(m, d, &err) != TC_OK)
        fail_msg("%s: %s", name, err.msg);
    return d;
}

static void rel(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol * fmax(fabs(a), fabs(b))))
        fail_msg("%s: %.12g vs %.12g (tolerance %g)", what, a, b, tol);
}

static const tc_tensor *tensor(const tc_zoo_derived *d, const char *name)
{
    for (size_t i = 0; i < d->ntensors; i++)
        if (strcmp(d->tensors[i].name, name) == 0)
            return &d->tensors[i];
    fail_msg("no tensor %s", name);
    return NULL;
}

/*
 * Totals summed from the shapes, checked exactly against the sums done by
 * hand below, and against the published totals within a tolerance:
 *  - CNNs: exact (0): the shapes are torchvision's, whose num_params is the
 *    published figure (batch-norm weight and bias counted, running
 *    statistics are buffers, not parameters).
 *  - Llama 3 8B / 70B / 405B: the published "8.03e9 / 70.6e9 / 405.8e9"
 *    are themselves rounded sums of these shapes: 0.1%.
 *  - GPT-3: 174.6e9 from the shapes against the paper's 175.0B: the table
 *    rounds (and the vocabulary is assumed): 0.5%.
 *  - BERT-large: 335.1e6 (the encoder + pooler, as bert_config builds it)
 *    against the README's "340M": the MLM and NSP heads are not counted
 *    and 340M is rounded: 2%.
 *  - Mixtral: 46.70e9 total and 12.88e9 per token against 46.7B / 12.9B:
 *    0.5%.
 */
static void totals_match_published(void **state)
{
    (void)state;
    struct {
        const char *name;
        double by_hand, tol;
    } c[] = {
        /* 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096) + 2 x 128256 x 4096 + 4096 */
        {"llama3-8b", 8030261248.0, 1e-3},
        /* 80 x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672 + 2 x 8192) + 2 x 128256 x 8192 + 8192 */
        {"llama3-70b", 70553706496.0, 1e-3},
        /* 126 x (2 x 16384^2 + 2 x 16384 x 1024 + 3 x 16384 x 53248 + 2 x 16384) + 2 x 128256 x 16384 + 16384 */
        {"llama3-405b", 405853388800.0, 1e-3},
        /* 96 x (12 h^2 + 13 h) + 50257 h + 2048 h + 2 h, h = 12288 */
        {"gpt3-175b", 174604259328.0, 5e-3},
        /* 24 x 12,596,224 + 31,782,912 (embeddings + LN) + 1,049,600 (pooler) */
        {"bert-large", 335141888.0, 2e-2},
        /* 32 x (41,943,040 + 8 x 176,160,768 + 4096 x 8 + 8192) + 2 x 32000 x 4096 + 4096 */
        {"mixtral-8x7b", 46702792704.0, 5e-3},
        /* 48 x (12 h^2 + 13 h) + 50257 h + 1024 h + 2 h, h = 1600 */
        {"gpt2-xl", 1557611200.0, 1e-3},
        /* 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096 */
        {"llama-7b", 6738415616.0, 1e-3},
        {"resnet18", 11689512.0, 0},
        {"resnet50", 25557032.0, 0},
        {"vgg16", 138357544.0, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        tc_zoo_derived *d = derive(c[i].name);
        if (d->params != c[i].by_hand)
            fail_msg("%s: %.0f parameters from the shapes, %.0f by hand", c[i].name, d->params, c[i].by_hand);
        rel(d->params, tc_zoo_find(c[i].name)->published_params, c[i].tol, c[i].name);
        free(d);
    }
    /* Mixtral: 2 of 8 experts per token: 32 x 394,305,536 + 2 x 131,072,000 + 4096 */
    tc_zoo_derived *d = derive("mixtral-8x7b");
    assert_true(d->params_active == 12879925248.0);
    rel(d->params_active, 12.9e9, 5e-3, "mixtral active");
    free(d);
    /* every zoo model derives and has a source */
    for (size_t i = 0; i < tc_zoo_count(); i++) {
        const tc_zoo_model *m = tc_zoo_get(i);
        assert_non_null(m->source);
        assert_true(strlen(m->source) > 20);
        free(derive(m->name));
    }
    assert_null(tc_zoo_get(tc_zoo_count()));
    assert_null(tc_zoo_find("nope"));
}

static void shape_is(const tc_zoo_derived *d, const char *name, uint64_t d0, uint64_t d1, uint32_t count)
{
    const tc_tensor *t = tensor(d, name);
    if (t->shape[0] != d0 || t->shape[1] != d1 || t->count != count)
        fail_msg("%s: [%llu, %llu] x %u, expected [%llu, %llu] x %u", name, (unsigned long long)t->shape[0],
                 (unsigned long long)t->shape[1], t->count, (unsigned long long)d0, (unsigned long long)d1, count);
}

/* The block's tensors: GQA's K and V are kv_heads x head_dim wide. */
static void tensor_shapes(void **state)
{
    (void)state;
    tc_zoo_derived *d = derive("llama3-8b");
    shape_is(d, "embed.tokens", 128256, 4096, 1);
    shape_is(d, "layer.attn.q.weight", 4096, 4096, 32);
    shape_is(d, "layer.attn.k.weight", 4096, 1024, 32);
    shape_is(d, "layer.attn.v.weight", 4096, 1024, 32);
    shape_is(d, "layer.attn.out.weight", 4096, 4096, 32);
    shape_is(d, "layer.mlp.gate.weight", 4096, 14336, 32);
    shape_is(d, "layer.mlp.up.weight", 4096, 14336, 32);
    shape_is(d, "layer.mlp.down.weight", 14336, 4096, 32);
    shape_is(d, "lm_head.weight", 4096, 128256, 1);
    assert_true(d->params_layer == 218112000.0);
    free(d);
    d = derive("mixtral-8x7b");
    shape_is(d, "layer.expert.up.weight", 4096, 14336, 32 * 8);
    shape_is(d, "layer.moe.router.weight", 4096, 8, 32);
    free(d);
    d = derive("resnet50");
    const tc_tensor *t = tensor(d, "conv1.weight");
    assert_true(t->shape[0] == 64 && t->shape[1] == 3 && t->shape[2] == 7 && t->shape[3] == 7);
    assert_true(t->act_elems == 64.0 * 112 * 112);
    shape_is(d, "fc.weight", 1000, 2048, 1);
    tensor(d, "layer4.0.downsample.weight");
    free(d);
}

/*
 * Training FLOPs per token (Narayanan et al. SC'21, as Megatron-LM's
 * num_floating_point_operations computes it): 6 x the parameters in matrix
 * multiplies per token (the LM head included, the embedding lookup not) +
 * 12 L h s for the attention scores.
 */
static void flops_per_token(void **state)
{
    (void)state;
    /* Llama-3 8B at s = 8192, by hand:
     * block matmuls 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6,979,321,856
     * LM head 4096 x 128256 = 525,336,576
     * 6 x 7,504,658,432 = 45,027,950,592; 12 x 32 x 4096 x 8192 = 12,884,901,888
     * total 57,912,852,480 (Megatron's form: 12 L h^2 (1 + 1.5 f/h + g/a + s/h + V/(2 L h)) gives the same). */
    tc_zoo_derived *d = derive("llama3-8b");
    assert_true(d->flops_token == 57912852480.0);
    double h = 4096, L = 32, f = 14336, V = 128256, s = 8192;
    rel(d->flops_token, 12 * L * h * h * (1 + 1.5 * f / h + 8.0 / 32 + s / h + V / (2 * L * h)), 1e-15, "megatron");
    assert_true(d->flops_sample == d->flops_token * 8192);
    free(d);
    /* GPT-3 175B: Narayanan's 72 l h^2 (1 + s/(6h) + V/(12 l h)) per token, no recomputation */
    d = derive("gpt3-175b");
    h = 12288, L = 96, s = 2048, V = 50257;
    rel(d->flops_token, 72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)), 1e-12, "gpt3 narayanan");
    free(d);
    /* Mixtral: 2 experts of 8 per token */
    d = derive("mixtral-8x7b");
    double moe = 32 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 4096 * 8 + 2 * 3 * 4096.0 * 14336) + 32000 * 4096.0;
    rel(d->flops_token, 6 * moe + 12 * 32 * 4096.0 * 32768, 1e-15, "mixtral");
    free(d);
    /* CNN: 3 passes x 2 FLOPs per multiply-add x torchvision's 4.09 G */
    d = derive("resnet50");
    rel(d->flops_sample, 6 * 4.09e9, 1e-15, "resnet50");
    assert_true(d->flops_token == 0);
    free(d);
}

/* Activation bytes per layer, no parallelism (Korthikanti et al. eq. 1):
 * GPT-3 at s = 2048: s h (34 + 5 a s / h) = 2048 x 12288 x (34 + 80). */
static void activation_per_layer(void **state)
{
    (void)state;
    tc_zoo_derived *d = derive("gpt3-175b");
    assert_true(d->act_layer_bytes == 2048.0 * 12288 * 114);
    assert_true(d->act_sample_bytes == 96 * d->act_layer_bytes);
    free(d);
    /* VGG-16's first convolution: 64 x 224 x 224 16-bit outputs */
    d = derive("vgg16");
    assert_true(tensor(d, "features.conv1.weight")->act_elems == 64.0 * 224 * 224);
    assert_true(d->act_sample_bytes > 2 * 64.0 * 224 * 224);
    free(d);
}

/* A small GQA model by hand: h 64, 4 heads of 16, 2 KV heads, FFN 256,
 * vocab 1000, 2 layers, untied, RMSNorm.
 * per layer: norms 2 x 64, q 64x64, k 64x32, v 64x32, o 64x64, 3 x 64x256 = 61,568
 * total 2 x 64,000 + 2 x 61,568 + 64 = 251,200
 * FLOPs/token at 128: 6 x (2 x 61,440 + 64,000) + 12 x 2 x 64 x 128 = 1,317,888 */
static void user_model_json(void **state)
{
    (void)state;
    tc_zoo_model m;
    char src[128];
    tc_err err = {{0}};
    if (tc_zoo_load_json(DATA "tiny.json", &m, src, sizeof src, &err) != TC_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(m.name, "tiny-gqa");
    assert_int_equal(m.kv_heads, 2);
    assert_int_equal(m.experts, 1);
    assert_true(m.gated_mlp && m.norm == TC_NORM_RMSNORM && !m.tied_embeddings);
    assert_ptr_equal(m.source, src);
    tc_zoo_derived *d = calloc(1, sizeof *d);
    assert_int_equal(tc_zoo_derive(&m, d, &err), TC_OK);
    assert_true(d->params == 251200.0);
    assert_true(d->flops_token == 1317888.0);
    free(d);
}

static void json_fails(const char *file, const char *field)
{
    tc_zoo_model m;
    char src[64];
    tc_err err = {{0}};
    char path[512];
    snprintf(path, sizeof path, DATA "%s", file);
    assert_int_equal(tc_zoo_load_json(path, &m, src, sizeof src, &err), TC_EINVAL);
    if (!strstr(err.msg, file))
        fail_msg("%s: message '%s' does not name the file", file, err.msg);
    char want[64];
    snprintf(want, sizeof want, "'%s'", field);
    if (!strstr(err.msg, want))
        fail_msg("%s: message '%s' does not name field %s", file, err.msg, field);
    assert_null(strchr(err.msg, '\n'));
}

static void user_model_json_refused(void **state)
{
    (void)state;
    json_fails("malformed.json", "(JSON)");
    json_fails("missing_hidden.json", "hidden");
    json_fails("bad_heads.json", "heads");
    json_fails("kv_not_dividing.json", "kv_heads");
    json_fails("unknown_key.json", "hiden");
    json_fails("negative_layers.json", "layers");
    json_fails("bad_norm.json", "norm");
    json_fails("does-not-exist.json", "(file)");
    /* a zoo entry edited into nonsense is refused too */
    tc_zoo_model m = *tc_zoo_find("llama3-8b");
    m.heads = 3;
    tc_err err = {{0}};
    tc_zoo_derived *d = calloc(1, sizeof *d);
    assert_int_equal(tc_zoo_derive(&m, d, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "'heads'"));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(totals_match_published),
        cmocka_unit_test(tensor_shapes),
        cmocka_unit_test(flops_per_token),
        cmocka_unit_test(activation_per_layer),
        cmocka_unit_test(user_model_json),
        cmocka_unit_test(user_model_json_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
