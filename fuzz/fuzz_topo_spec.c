/*
 * fuzz_topo_spec.c - the topology spec parser and builder (tc_topo_build,
 * topocc/topo.h): any string either builds or fails with TC_EINVAL. A spec
 * that builds must build again from its canonical form (t->spec) to the same
 * canonical form and shape: every result records that form, and replay
 * builds from it. Fuzz builds cap topologies far below the library's limit
 * (TOPOCC_FUZZ in topo/topo_int.h), so the time goes to parsing, not to
 * building large valid networks.
 */
#include "fuzz.h"
#include "topocc/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024) /* a spec is one line; tc_topo_build refuses long ones */
        return -1;
    char *spec = fz_string(data, size);
    if (!spec)
        return 0;
    tc_topo *t = NULL;
    tc_err err = {{0}};
    tc_status st = tc_topo_build(spec, &t, &err);
    fz_check(st, &err, "tc_topo_build");
    fz_expect((st == TC_OK) == (t != NULL), "tc_topo_build: *out set exactly on success");
    if (st == TC_OK) {
        fz_expect(t->n_endpoints >= 1 && t->n_vertices >= t->n_endpoints, "a topology has endpoints");
        tc_topo *u = NULL;
        tc_err e2 = {{0}};
        st = tc_topo_build(t->spec, &u, &e2);
        if (st != TC_OK) {
            fprintf(stderr, "spec '%s' -> '%s': %s\n", spec, t->spec, e2.msg);
            fz_fail("the canonical spec builds", NULL);
        }
        if (strcmp(u->spec, t->spec) != 0 || u->n_endpoints != t->n_endpoints || u->n_vertices != t->n_vertices ||
            u->n_links != t->n_links) {
            fprintf(stderr, "spec '%s' -> '%s' -> '%s'\n", spec, t->spec, u->spec);
            fz_fail("the canonical spec builds the same topology", NULL);
        }
        tc_topo_free(u);
    }
    tc_topo_free(t);
    free(spec);
    return 0;
}
