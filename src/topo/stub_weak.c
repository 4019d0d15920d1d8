/* stub_weak.c - weak placeholders, overridden by the topology layer. */
#include "topocc/topo.h"
__attribute__((weak)) tc_status tc_topo_equalize_injection(tc_topo *t, double r, tc_err *e) { (void)t, (void)r; return tc_fail(e, TC_EINTERNAL, "n/a"); }
__attribute__((weak)) tc_status tc_routing_parse(const char *s, const tc_topo *t, tc_routing *o, tc_err *e) { (void)s, (void)t, (void)o; return tc_fail(e, TC_EINTERNAL, "n/a"); }
__attribute__((weak)) const char *tc_routing_name(tc_routing r, const tc_topo *t) { (void)r, (void)t; return "?"; }
__attribute__((weak)) void tc_topo_get_info(const tc_topo *t, tc_topo_info *i) { (void)t, (void)i; }
__attribute__((weak)) const char *tc_topo_link_name(const tc_topo *t, uint32_t id, char *b, size_t l) { (void)t, (void)id, (void)l; return b; }
__attribute__((weak)) uint32_t tc_topo_max_path(const tc_topo *t) { (void)t; return 0; }
__attribute__((weak)) uint32_t tc_topo_route(const tc_topo *t, tc_routing r, uint32_t s, uint32_t d, uint32_t *l) { (void)t, (void)r, (void)s, (void)d, (void)l; return 0; }
