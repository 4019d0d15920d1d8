/*
 * fuzz_profile.c - the hardware-profile reader (topocc/profile.h,
 * topo/profile.c) and what reads a profile's fields: presets expanded into
 * topology specs (gpu-node, tpu-slice), accelerators (compress) and cost
 * profiles (cost.h). The input is a profile's text, read twice as topocc
 * reads profiles: embedded in a scenario (tc_profile_from_json) and as the
 * file NAME.json in a profile directory (tc_profile_load through
 * tc_preset_expand, and tc_cost_read_file), NAME being the input's own
 * "name" when it is a valid profile name.
 */
#include <ctype.h>
#include <jansson.h>
#include "fuzz.h"
#include "topocc/compress.h"
#include "topocc/cost.h"
#include "topocc/profile.h"

static char dir[4200];

static void remove_dir(void)
{
    rmdir(dir);
}

/* A directory of this process's own, made once. */
static bool profile_dir(void)
{
    if (dir[0])
        return true;
    if ((size_t)snprintf(dir, sizeof dir, "%s/topocc-fuzz-XXXXXX", fz_tmpdir()) >= sizeof dir || !mkdtemp(dir)) {
        dir[0] = '\0';
        return false;
    }
    atexit(remove_dir);
    return true;
}

/* The profile's own name when it is one a file can have (profile.h), else
 * "fuzz". */
static void profile_name(const char *text, char *name, size_t len)
{
    snprintf(name, len, "fuzz");
    json_t *root = json_loads(text, 0, NULL);
    const char *n = json_string_value(json_object_get(root, "name"));
    bool ok = n && *n && n[0] != '.' && strlen(n) < 64 && strlen(n) < len;
    for (const char *c = n; ok && *c; c++)
        ok = isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.';
    if (ok)
        snprintf(name, len, "%s", n);
    json_decref(root);
}

static void values(const tc_profile *p)
{
    tc_err err = {{0}};
    if (strcmp(tc_profile_kind(p), "accelerator") == 0) {
        tc_accel a;
        char name[64];
        fz_check(tc_accel_from_profile(p, &a, name, sizeof name, &err), &err, "tc_accel_from_profile");
    } else if (strcmp(tc_profile_kind(p), "cost") == 0) {
        tc_cost *c = NULL;
        tc_status st = tc_cost_from_profile(p, &c, &err);
        fz_check(st, &err, "tc_cost_from_profile");
        tc_cost_free(c);
    }
}

static void preset(const char *name, const char *args)
{
    char p[128], spec[512];
    snprintf(p, sizeof p, "%s%s", name, args);
    tc_profile *prof = NULL;
    tc_err err = {{0}};
    tc_status st = tc_preset_expand(p, dir, spec, sizeof spec, &prof, &err);
    fz_check(st, &err, "tc_preset_expand");
    fz_expect((st == TC_OK) == (prof != NULL), "tc_preset_expand: *prof set exactly on success");
    tc_profile_free(prof);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return -1;
    char *text = fz_string(data, size);
    if (!text || !profile_dir()) {
        free(text);
        return 0;
    }
    char name[64];
    profile_name(text, name, sizeof name);
    /* Embedded in a scenario. */
    tc_profile *p = NULL;
    tc_err err = {{0}};
    tc_status st = tc_profile_from_json(name, text, "fuzz profile", &p, &err);
    fz_check(st, &err, "tc_profile_from_json");
    if (st == TC_OK) {
        fz_expect(tc_profile_json(p) != NULL, "a profile's canonical JSON");
        values(p);
    }
    tc_profile_free(p);
    /* A file in a profile directory. */
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "wb");
    if (f && fwrite(data, 1, size, f) == size && fclose(f) == 0) {
        static const char *const args[] = {"", ":nodes=4", ":nodes=64,sharp=1", ":dims=4x4x2"};
        for (size_t i = 0; i < sizeof args / sizeof *args; i++)
            preset(name, args[i]);
        p = NULL;
        st = tc_cost_read_file(path, &p, &err);
        fz_check(st, &err, "tc_cost_read_file");
        tc_profile_free(p);
    } else if (f) {
        fclose(f);
    }
    unlink(path);
    free(text);
    return 0;
}
