/*
 * test_profile.c - hardware profiles and presets: the search path, the
 * checks on every field, the expansion of a GPU node and a TPU slice into
 * topologies (checked by hand), and every profile shipped in profiles/
 * loads, has a source or says assumed for every field, and builds;
 * accelerator profiles are found in a given directory as presets are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include "topocc/compress.h"
#include "topocc/profile.h"
#include "topocc/topo.h"

#define DATA TOPOCC_SOURCE_DIR "/tests/data/profiles"

static void expand_ok(const char *preset, const char *want)
{
    char spec[512];
    tc_profile *p = NULL;
    tc_err err = {{0}};
    if (tc_preset_expand(preset, DATA, spec, sizeof spec, &p, &err) != TC_OK)
        fail_msg("%s: %s", preset, err.msg);
    if (strcmp(spec, want) != 0)
        fail_msg("%s: got %s, want %s", preset, spec, want);
    tc_profile_free(p);
}

static void expand_fails(const char *preset, const char *needle)
{
    char spec[512];
    tc_profile *p = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_preset_expand(preset, DATA, spec, sizeof spec, &p, &err), TC_EINVAL);
    assert_null(p);
    if (!strstr(err.msg, needle))
        fail_msg("%s: message '%s' lacks '%s'", preset, err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
}

/* A GPU node: node=G with the NVLink bandwidth times its efficiency, one
 * rail per NIC, leaves of half the radix; one node is its NVSwitch alone. */
static void gpu_node_presets_expand_to_rail_optimized_clos(void **state)
{
    (void)state;
    const char *node = "bw=400Gbps,lat=25ns,hop_lat=200ns,node=8,node_bw=300GB/s,node_lat=300ns,arch=hopper";
    char want[512];
    snprintf(want, sizeof want, "clos:down=8,up=1,%s", node);
    expand_ok("test-node", want);
    expand_ok("test-node:nodes=1", want);
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,rail=8", node);
    expand_ok("test-node:nodes=4", want);
    snprintf(want, sizeof want, "clos:down=8x16,up=1x8,%s,rail=8", node);
    expand_ok("test-node:nodes=16", want);
    /* two GPUs share each of 4 NICs (nics=4), one rail per NIC */
    expand_ok("test-half:nodes=4", "clos:down=4x4,up=1x4,bw=400Gbps,lat=25ns,hop_lat=200ns,node=8,node_bw=300GB/s,"
                                   "node_lat=300ns,nics=4,arch=hopper,rail=4");
    expand_ok("test-half", "clos:down=4,up=1,bw=400Gbps,lat=25ns,hop_lat=200ns,node=8,node_bw=300GB/s,"
                           "node_lat=300ns,nics=4,arch=hopper");
    /* seed=S: the Clos's ECMP hash, passed on as the spec's seed= */
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,seed=7,rail=8", node);
    expand_ok("test-node:nodes=4,seed=7", want);
    /* nic_path: the profile's (test-vm: phb), which the preset's key
     * overrides; pxb, the default, is not written */
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,nic_path=phb,rail=8", node);
    expand_ok("test-vm:nodes=4", want);
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,nic_path=sys,rail=8", node);
    expand_ok("test-vm:nodes=4,nic_path=sys", want);
    expand_ok("test-node:nodes=4,nic_path=sys", want);
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,rail=8", node);
    expand_ok("test-vm:nodes=4,nic_path=pxb", want);
    /* a calibrated transport (net_lat_*_us, net_eff) and point-to-point
     * channels (p2p_channel_GBps, p2p_channel_net_GBps): the profile's,
     * which the preset's keys override, each alone */
    const char *p2p = "p2p_bw=21GB/s,p2p_net_bw=23GB/s";
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,net_lat=30us/40us/50us,net_eff=0.8,%s,rail=8", node, p2p);
    expand_ok("test-calib:nodes=4", want);
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,net_lat=30us/40us/50us,%s,net_eff=0.5,rail=8", node, p2p);
    expand_ok("test-calib:nodes=4,net_eff=0.5", want);
    snprintf(want, sizeof want, "clos:down=4x8,up=1x4,%s,net_eff=0.8,%s,net_lat=1us,rail=8", node, p2p);
    expand_ok("test-calib:nodes=4,net_lat=1us", want);
    snprintf(want, sizeof want,
             "clos:down=4x8,up=1x4,%s,net_lat=30us/40us/50us,net_eff=0.8,p2p_net_bw=23GB/s,p2p_bw=5GB/s,rail=8", node);
    expand_ok("test-calib:nodes=4,p2p_bw=5GB/s", want);
    snprintf(want, sizeof want,
             "clos:down=4x8,up=1x4,%s,net_lat=30us/40us/50us,net_eff=0.8,p2p_bw=21GB/s,p2p_net_bw=9GB/s,rail=8", node);
    expand_ok("test-calib:nodes=4,p2p_net_bw=9GB/s", want);

    /* The topology: 4 nodes of 8, GPU g of every node on rail g's leaf. */
    char spec[512];
    tc_profile *p = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_preset_expand("test-node:nodes=4", DATA, spec, sizeof spec, &p, &err), TC_OK);
    assert_string_equal(tc_profile_name(p), "test-node");
    assert_string_equal(tc_profile_kind(p), "gpu-node");
    assert_non_null(strstr(tc_profile_json(p), "\"nvlink_efficiency\""));
    tc_profile_free(p);
    tc_topo *t = NULL;
    assert_int_equal(tc_topo_build(spec, &t, &err), TC_OK);
    assert_int_equal(t->n_endpoints, 32);
    assert_int_equal(t->rails, 8);
    uint32_t path[16];
    for (uint32_t g = 0; g < 8; g++)
        for (uint32_t n = 1; n < 4; n++)
            assert_int_equal(tc_topo_route(t, TC_ROUTE_DMODK, g, 8 * n + g, path), 2); /* one rail leaf */
    assert_int_equal(tc_topo_route(t, TC_ROUTE_DMODK, 0, 9, path), 4);                /* across rails */
    assert_true(t->node_bw == 300e9);
    tc_topo_free(t);
}

/* Every preset of a GPU node on the default profile path, at 1 to 80
 * nodes: either it is refused saying so, or every fabric switch of the
 * topology it names has at most its profile's leaf_radix ports (the NVL72's
 * 72 rails on 64-port spines took 72 ports a spine before leaves took two
 * rails each). */
static void presets_fit_their_switch_radix(void **state)
{
    (void)state;
    const char *names[] = {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "aws-p5",
                           "aws-p4d",  "gcp-a3-mega", "gcp-a3-ultra", "gcp-a4"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        uint32_t built = 0;
        for (uint32_t n = 1; n <= 80; n++) {
            char preset[64], spec[512];
            snprintf(preset, sizeof preset, "%s:nodes=%u", names[i], n);
            tc_profile *p = NULL;
            tc_err err = {{0}};
            if (tc_preset_expand(preset, NULL, spec, sizeof spec, &p, &err) != TC_OK) {
                if (!strstr(err.msg, "two-tier rail-optimized fabric"))
                    fail_msg("%s: %s", preset, err.msg);
                continue;
            }
            double radix = 0;
            assert_int_equal(tc_profile_num(p, "leaf_radix", &radix, &err), TC_OK);
            tc_profile_free(p);
            tc_topo *t = NULL;
            if (tc_topo_build(spec, &t, &err) != TC_OK)
                fail_msg("%s: %s: %s", preset, spec, err.msg);
            uint32_t *deg = calloc(t->n_vertices, sizeof *deg);
            assert_non_null(deg);
            for (uint32_t l = 0; l < t->n_links; l++)
                if (t->links[l].kind == TC_LINK_FABRIC)
                    deg[t->links[l].src]++;
            for (int lv = 1; lv <= t->levels; lv++)
                for (uint32_t v = t->level_vbase[lv]; v < t->level_vbase[lv] + t->level_count[lv]; v++)
                    if (deg[v] > radix)
                        fail_msg("%s: %s: a level-%d switch has %u ports, above the radix %g", preset, spec, lv,
                                 deg[v], radix);
            free(deg);
            assert_int_equal(t->n_endpoints % n, 0);
            tc_topo_free(t);
            built++;
        }
        if (built < 16)
            fail_msg("%s: only %u of 80 node counts build", names[i], built);
    }
    /* the NVL72 rack: two racks on 36 leaves of two rails each; 17 racks need a third tier */
    char spec[512];
    tc_profile *p = NULL;
    tc_err err = {{0}};
    assert_int_equal(tc_preset_expand("gb200-nvl72:nodes=2", NULL, spec, sizeof spec, &p, &err), TC_OK);
    tc_profile_free(p);
    assert_non_null(strstr(spec, "clos:down=4x36,up=1x4,"));
    assert_int_equal(tc_preset_expand("gb200-nvl72", NULL, spec, sizeof spec, &p, &err), TC_OK);
    tc_profile_free(p);
    assert_non_null(strstr(spec, "clos:down=2x36,up=1x2,")); /* one rack: the same shape */
    assert_int_equal(tc_preset_expand("gb200-nvl72:nodes=17", NULL, spec, sizeof spec, &p, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "2 rails a leaf fit up to 16 nodes"));
}

static void tpu_presets_expand_to_a_torus(void **state)
{
    (void)state;
    expand_ok("test-tpu", "torus:dims=4x4x4,bw=50GB/s,lat=500ns,hop_lat=100ns");
    expand_ok("test-tpu:dims=8x8x16", "torus:dims=8x8x16,bw=50GB/s,lat=500ns,hop_lat=100ns");
    expand_fails("test-tpu:nodes=4", "a tpu-slice preset takes dims=AxBxC");
}

/* A latency field may be 0, as the spec key it sets (lat=, hop_lat=,
 * node_lat=, net_lat=) may; below 0 it is refused. */
static void latency_fields_take_zero(void **state)
{
    (void)state;
    expand_ok("test-zero-tpu", "torus:dims=4x4x4,bw=50GB/s,lat=0ns,hop_lat=0ns");
    char spec[512];
    tc_profile *p = NULL;
    tc_err err = {{0}};
    if (tc_preset_expand("test-zero-lat:nodes=4", DATA, spec, sizeof spec, &p, &err) != TC_OK)
        fail_msg("test-zero-lat: %s", err.msg);
    tc_profile_free(p);
    assert_non_null(strstr(spec, ",lat=0ns,hop_lat=0ns,"));
    assert_non_null(strstr(spec, ",node_lat=0ns,"));
    assert_non_null(strstr(spec, ",net_lat=0us/0us/0us,"));
    tc_topo *t = NULL;
    if (tc_topo_build(spec, &t, &err) != TC_OK)
        fail_msg("%s: %s", spec, err.msg);
    tc_topo_free(t);
    expand_fails("bad-lat", "bad-lat.json: field 'fields.cable_lat_ns.value' must be from 0 (a latency) and below 1e30, "
                            "not -1");
}

static void bad_presets_and_profiles_are_named(void **state)
{
    (void)state;
    expand_fails("no-such-node:nodes=2", "unknown preset 'no-such-node': known are ");
    expand_fails("no-such-node", "test-node");    /* the list names the known ones */
    expand_fails("../etc/passwd", "unknown preset");
    expand_fails("bad-missing:nodes=2", "field 'fields.nic_Gbps' is missing");
    expand_fails("bad-missing", "bad-missing.json");
    expand_fails("bad-type", "'fields.gpus_per_node.value' must be a number");
    expand_fails("bad-nics", "3 NICs per node do not fit 8 GPUs per node");
    expand_fails("bad-typo", "bad-typo.json: field 'fields.transprt' is not one topocc reads: did you mean 'transport'?");
    expand_fails("bad-calib", "bad-calib.json: net_lat_ll_us, net_lat_ll128_us and net_lat_simple_us go together");
    expand_fails("test-node:net_eff=0", "expected a fraction above 0 and at most 1");
    expand_fails("test-node:p2p_bw=0", "clos key 'p2p_bw': invalid rate '0'");
    expand_fails("test-node:p2p_net_bw=fast", "'p2p_net_bw'");
    expand_fails("bad-path", "bad-path.json: nic_path 'pcie': accepted are pix, pxb, pxn, phb and sys");
    expand_fails("test-node:nodes=2,nic_path=PHB", "nic_path='PHB'");
    expand_fails("bad-source", "field 'fields.nic_Gbps' has no source");
    expand_fails("bad-syntax", "bad-syntax.json: line");
    expand_fails("test-node:nodes=0", "nodes='0'");
    expand_fails("test-node:nodes=x", "nodes='x'");
    expand_fails("test-node:gpus=4", "unknown key 'gpus'");
    expand_fails("test-node:gpus=4", "seed=S");
    expand_fails("test-node:nodes=2,seed=x", "seed='x'");
    expand_fails("test-node:nodes=2,seed=-1", "seed='-1'");
    expand_fails("test-node:nodes=12", "two-tier rail-optimized fabric");
    expand_fails("test-node:nodes=24", "two-tier rail-optimized fabric");
    expand_fails(":nodes=2", "expected NAME[:nodes=N]");
}

/* An accelerator profile is looked up in the directory given first, then on
 * the default path (tests/data/profiles/test-accel.json: made-up figures,
 * on no default path); an unknown name lists the known ones of both. */
static void accelerators_are_found_in_the_directory_given(void **state)
{
    (void)state;
    tc_accel a;
    char name[64];
    tc_err err = {{0}};
    if (tc_accel_lookup("test-accel", DATA, &a, name, sizeof name, &err) != TC_OK)
        fail_msg("test-accel: %s", err.msg);
    assert_string_equal(a.name, "test-accel");
    assert_ptr_equal(a.name, name);
    assert_true(a.flops == 100e12 && a.mem_Bps == 2e12);
    /* the default path still serves with a directory given */
    assert_int_equal(tc_accel_lookup("h100", DATA, &a, name, sizeof name, &err), TC_OK);
    assert_true(a.flops == 989e12 && a.mem_Bps == 3.35e12);
    assert_int_equal(tc_accel_lookup("tpu", DATA, &a, name, sizeof name, &err), TC_OK);
    assert_string_equal(a.name, "tpu-v5p");

    /* not without the directory: the default path does not hold it */
    assert_null(tc_accel_find("test-accel"));
    assert_int_equal(tc_accel_lookup("test-accel", NULL, &a, name, sizeof name, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown accelerator 'test-accel': accepted are "));
    assert_non_null(strstr(err.msg, "h100"));
    assert_null(strstr(err.msg, "test-accel,"));
    assert_null(strchr(err.msg, '\n'));
    /* an unknown name lists the accelerators of the directory and of the path, no others */
    assert_int_equal(tc_accel_lookup("no-such-chip", DATA, &a, name, sizeof name, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "unknown accelerator 'no-such-chip'"));
    assert_non_null(strstr(err.msg, "test-accel"));
    assert_non_null(strstr(err.msg, "h100"));
    assert_null(strstr(err.msg, "test-node"));
    assert_null(strchr(err.msg, '\n'));
    /* a profile of another kind is no accelerator */
    assert_int_equal(tc_accel_lookup("test-node", DATA, &a, name, sizeof name, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "needs an accelerator profile"));

    /* A profile's content (as a scenario embeds it) reads back as the file did. */
    tc_profile *p = NULL, *q = NULL;
    assert_int_equal(tc_accel_profile_load("test-accel", DATA, &p, &err), TC_OK);
    if (tc_profile_from_json("test-accel", tc_profile_json(p), "scenario network.profiles.test-accel", &q, &err))
        fail_msg("from json: %s", err.msg);
    assert_string_equal(tc_profile_json(p), tc_profile_json(q));
    assert_string_equal(tc_profile_kind(q), "accelerator");
    assert_int_equal(tc_accel_from_profile(q, &a, name, sizeof name, &err), TC_OK);
    assert_true(a.flops == 100e12 && a.mem_Bps == 2e12);
    tc_profile_free(q);
    /* kept under another name, or without a field, it is refused */
    assert_int_equal(tc_profile_from_json("h100", tc_profile_json(p), "x", &q, &err), TC_EINVAL);
    assert_null(q);
    assert_non_null(strstr(err.msg, "field 'name' is 'test-accel'"));
    json_t *j = json_loads(tc_profile_json(p), 0, NULL);
    json_object_del(json_object_get(j, "fields"), "mem_TBps");
    char *txt = json_dumps(j, JSON_COMPACT);
    assert_int_equal(tc_profile_from_json("test-accel", txt, "x", &q, &err), TC_OK);
    assert_int_equal(tc_accel_from_profile(q, &a, name, sizeof name, &err), TC_EINVAL);
    assert_non_null(strstr(err.msg, "fields.mem_TBps"));
    tc_profile_free(q);
    free(txt);
    json_decref(j);
    assert_int_equal(tc_profile_from_json("test-accel", "{\"schema\": 1}", "x", &q, &err), TC_EINVAL);
    assert_null(q);
    tc_profile_free(p);
}

/* The profiles shipped: each loads from the default path, every field has
 * a value and a source or says assumed, and its preset builds at 1 and 2
 * nodes (GPU nodes) or its own slice (TPU). */
static void shipped_profiles_load_with_sources_and_build(void **state)
{
    (void)state;
    DIR *d = opendir(TOPOCC_SOURCE_DIR "/profiles");
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(l - 5), e->d_name);
        tc_profile *p = NULL;
        tc_err err = {{0}};
        if (tc_profile_load(name, NULL, &p, &err) != TC_OK)
            fail_msg("%s: %s", name, err.msg);
        char spec[512], preset[96];
        bool gpu = strcmp(tc_profile_kind(p), "gpu-node") == 0;
        bool accel = strcmp(tc_profile_kind(p), "accelerator") == 0;
        bool cost = strcmp(tc_profile_kind(p), "cost") == 0;
        tc_profile_free(p);
        n++;
        if (cost) {
            /* prices, not a network (tests/test_cost.c reads it) */
            assert_int_equal(tc_preset_expand(name, NULL, spec, sizeof spec, &p, &err), TC_EINVAL);
            continue;
        }
        if (accel) {
            /* a chip: its two figures are there, and it is no preset */
            double v = 0;
            assert_int_equal(tc_profile_load(name, NULL, &p, &err), TC_OK);
            assert_int_equal(tc_profile_num(p, "dense16_TFLOPS", &v, &err), TC_OK);
            assert_true(v > 0);
            assert_int_equal(tc_profile_num(p, "mem_TBps", &v, &err), TC_OK);
            assert_true(v > 0);
            tc_profile_free(p);
            assert_int_equal(tc_preset_expand(name, NULL, spec, sizeof spec, &p, &err), TC_EINVAL);
            continue;
        }
        for (int k = 0; k < (gpu ? 2 : 1); k++) {
            snprintf(preset, sizeof preset, "%s%s", name, gpu && k ? ":nodes=2" : "");
            if (tc_preset_expand(preset, NULL, spec, sizeof spec, &p, &err) != TC_OK)
                fail_msg("%s: %s", preset, err.msg);
            tc_profile_free(p);
        }
    }
    closedir(d);
    assert_true(n >= 14);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_node_presets_expand_to_rail_optimized_clos),
        cmocka_unit_test(presets_fit_their_switch_radix),
        cmocka_unit_test(tpu_presets_expand_to_a_torus),
        cmocka_unit_test(latency_fields_take_zero),
        cmocka_unit_test(bad_presets_and_profiles_are_named),
        cmocka_unit_test(accelerators_are_found_in_the_directory_given),
        cmocka_unit_test(shipped_profiles_load_with_sources_and_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
