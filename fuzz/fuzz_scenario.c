/*
 * fuzz_scenario.c - the scenario JSON reader (tc_scenario_read_json) and
 * resolution (tc_scenario_resolve, tc_scenario_check_given), as topocc
 * replay and --scenario use them: the input is a scenario, or a result that
 * holds one, read for each command in turn. A scenario that resolves must
 * come back from its own canonical JSON unchanged (docs/ARCHITECTURE.md:
 * "a scenario written and read back is byte for byte the same"), since every
 * result records it and replay runs it again.
 */
#include <jansson.h>
#include "fuzz.h"
#include "topocc/scenario.h"

static void round_trip(const tc_scenario *s, tc_command c)
{
    json_t *j1 = tc_scenario_to_json(s);
    fz_expect(j1 != NULL, "tc_scenario_to_json");
    tc_scenario *s2 = tc_scenario_new(c);
    tc_err err = {{0}};
    tc_status st = tc_scenario_read_json(s2, j1, "the scenario written back", &err);
    if (st == TC_OK)
        st = tc_scenario_resolve(s2, &err);
    json_t *j2 = st == TC_OK ? tc_scenario_to_json(s2) : NULL;
    if (st != TC_OK || !json_equal(j1, j2)) {
        char *a = json_dumps(j1, JSON_COMPACT), *b = j2 ? json_dumps(j2, JSON_COMPACT) : NULL;
        fprintf(stderr, "%s: written:\n%s\nread back:\n%s\n%s\n", tc_command_name(c), a ? a : "?", b ? b : "-",
                st ? err.msg : "");
        fz_fail("a resolved scenario reads back to itself", NULL);
    }
    json_decref(j1);
    json_decref(j2);
    tc_scenario_free(s2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT || fz_names_device(data, size))
        return -1;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return 0;
    /* A saved result holds its scenario (tc_scenario_load). */
    const json_t *scn = json_object_get(root, "scenario");
    if (!(json_is_object(scn) && json_object_get(root, "schema_version")))
        scn = root;
    for (int c = 0; c < TC_CMD_COUNT; c++) {
        tc_scenario *s = tc_scenario_new((tc_command)c);
        fz_expect(s != NULL, "tc_scenario_new");
        tc_err err = {{0}};
        tc_status st = tc_scenario_read_json(s, scn, "fuzz scenario", &err);
        fz_check(st, &err, "tc_scenario_read_json");
        if (st == TC_OK) {
            st = tc_scenario_resolve(s, &err);
            fz_check(st, &err, "tc_scenario_resolve");
        }
        if (st == TC_OK) {
            st = tc_scenario_check_given(s, &err);
            fz_check(st, &err, "tc_scenario_check_given");
        }
        if (st == TC_OK)
            round_trip(s, (tc_command)c);
        tc_scenario_free(s);
    }
    json_decref(root);
    return 0;
}
