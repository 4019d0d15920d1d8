/*
 * topocc/profile.h - hardware profiles: one JSON schema and one directory
 * for every hardware description topocc uses (GPU nodes, TPU slices,
 * accelerators), and the presets that turn a profile into a topology spec.
 *
 * A profile is NAME.json (docs/PROFILES.md gives the schema):
 *   {"schema": "topocc-profile/1", "name": NAME, "kind": "gpu-node" | "tpu-slice" | "accelerator" | "cost",
 *    "title": "...", "fields": {FIELD: {"value": NUMBER | STRING | BOOL, "unit": "...",
 *    "source": "URL or document, version", "assumed": false}, ...}}
 * Every field has a value and either a source or "assumed": true.
 *
 * Profiles are searched in, in order: the directory given (--profiles DIR),
 * each directory of $TOPOCC_PROFILE_PATH (colon-separated), the installed
 * share directory, then the source tree's profiles/.
 */
#ifndef TOPOCC_PROFILE_H
#define TOPOCC_PROFILE_H

#include "topocc/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_profile tc_profile;

/* Loads profile NAME (letters, digits, '-', '_', '.'), searching dir first
 * (NULL: none). A missing or mistyped field is named with the file. */
tc_status tc_profile_load(const char *name, const char *dir, tc_profile **out, tc_err *err);
void tc_profile_free(tc_profile *p);
/* A profile from its content (JSON text, e.g. one a scenario embeds in
 * network.profiles), checked as a file is; its "name" must be name. origin
 * names it in messages (e.g. "scenario network.profiles.h100") and is its
 * tc_profile_path. */
tc_status tc_profile_from_json(const char *name, const char *json, const char *origin, tc_profile **out, tc_err *err);
/* Whether NAME.json is on the search path (dir first, NULL: none). */
bool tc_profile_exists(const char *name, const char *dir);

const char *tc_profile_name(const tc_profile *p);
const char *tc_profile_kind(const tc_profile *p);
const char *tc_profile_path(const tc_profile *p);
/* The file's content as canonical JSON (compact, keys sorted); owned by p. */
const char *tc_profile_json(const tc_profile *p);

/* A number field (fails naming the field and the file when absent or not
 * a number), a string field. */
tc_status tc_profile_num(const tc_profile *p, const char *field, double *out, tc_err *err);
tc_status tc_profile_str(const tc_profile *p, const char *field, const char **out, tc_err *err);

/* Every profile name found on the search path, sorted, comma-separated,
 * into buf; with kind, only the profiles of that kind. */
void tc_profile_list_kind(const char *dir, const char *kind, char *buf, size_t len);
/* Every profile name found on the search path, sorted, comma-separated,
 * into buf. */
void tc_profile_list(const char *dir, char *buf, size_t len);

/* Expands a preset, "NAME[:key=value,...]", into a topology spec: a
 * gpu-node profile takes nodes=N (default 1), sharp=0|1,
 * transport=ib|efa|efa-sendrecv, nic_path=pix|pxb|pxn|phb|sys and seed=S (the Clos spec's ECMP hash), a
 * tpu-slice profile dims=AxBxC (default: the profile's slice). *prof receives the profile
 * (the caller frees it). */
tc_status tc_preset_expand(const char *preset, const char *dir, char *spec, size_t len, tc_profile **prof,
                           tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
