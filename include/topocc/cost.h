/*
 * topocc/cost.h - what a topology costs: a cost profile (a hardware profile
 * of kind "cost", docs/PROFILES.md "Cost profiles": prices of switch ports,
 * NIC ports, copper cables, optical transceivers and fibre by port speed,
 * each with its source), a topology's bill of materials, and the fabric
 * link speed at which the bill of materials comes to a given total
 * (compare --equalize cost=C). The model: docs/MODEL.md "Equal cost".
 *
 * Bill of materials (counted from the topology's structure; the scale-up
 * node switches and node links, and the endpoint-NIC links of nics=, are
 * not in it):
 *  - Clos: every switch of every level (the whole tree, populated or not),
 *    with its ports: down[i] x links[i] below, up[i+1] x links[i+1] above;
 *    one NIC port per host-slot fabric port; level-1 cables (host to leaf)
 *    copper, in the rack; cables of level 2 and above optical (two
 *    transceivers and one fibre each).
 *  - Torus: no switches: the router is in the endpoint (TPU-style), and
 *    each cable end is one NIC port (2 per dimension of size > 2, 1 for a
 *    dimension of size 2); a cable between neighbours inside one cube of
 *    torus_cube_edge endpoints per dimension (a rack) copper, a cable
 *    between cubes and every wraparound cable optical.
 * Pricing: a switch of r ports is priced port by port, at the price per
 * port (its price over its radix) of the smallest switch of the profile at
 * that speed with at least r ports. At a speed between two of the
 * profile's speeds, every price per Gb/s is interpolated linearly in the
 * speed between the two neighbours; outside them there is no price.
 * Money is US dollars.
 */
#ifndef TOPOCC_COST_H
#define TOPOCC_COST_H

#include "topocc/profile.h"
#include "topocc/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_cost tc_cost;

/* The items a cost profile prices. */
typedef enum {
    TC_BOM_SWITCH = 0, /* priced per port */
    TC_BOM_NIC,        /* one port */
    TC_BOM_DAC,        /* a copper cable, in the rack */
    TC_BOM_TRANSCEIVER,/* one end of an optical cable */
    TC_BOM_FIBER,      /* the fibre of an optical cable */
    TC_BOM_KINDS
} tc_bom_kind;
const char *tc_bom_kind_name(tc_bom_kind k); /* "switch", "nic", "dac", "transceiver", "fiber" */

/* A cost profile from a loaded profile of kind "cost" (a wrong kind, a
 * field of the wrong shape, a speed without every item are refused naming
 * the profile's file and the field). */
tc_status tc_cost_from_profile(const tc_profile *p, tc_cost **out, tc_err *err);
/* A cost profile file given by its path (NAME.json: the profile's name
 * must be NAME), read as tc_profile_load reads one found on the path. */
tc_status tc_cost_read_file(const char *path, tc_profile **out, tc_err *err);
/* Whether s names a file (holds a '/' or ends in .json), not a profile. */
bool tc_cost_is_path(const char *s);
void tc_cost_free(tc_cost *c);
const char *tc_cost_name(const tc_cost *c);
/* The port speeds the profile prices, Gb/s, ascending; returns the count. */
int tc_cost_speeds(const tc_cost *c, const double **gbps);
/* The torus placement model's cube edge (endpoints per dimension in one rack). */
uint32_t tc_cost_cube_edge(const tc_cost *c);

/* The unit price of one item at gbps (a switch: one port of a switch of
 * ports ports), interpolated between the neighbouring speeds; src receives
 * the fields it came from ("transceiver_400G" or "transceiver_400G +
 * transceiver_800G"). Fails outside the profile's speeds and for a switch
 * larger than any of the profile's at a neighbouring speed. */
tc_status tc_cost_unit(const tc_cost *c, tc_bom_kind k, double gbps, uint32_t ports, double *usd, char *src,
                       size_t len, tc_err *err);
/* The source of field (its "source", or "assumed: " and its note). */
const char *tc_cost_source(const tc_cost *c, const char *field);

/* One line of a bill of materials. */
typedef struct tc_bom_line {
    tc_bom_kind kind;
    char detail[96];         /* "level 1 (leaf), 16 ports", "host to leaf, copper <= 3 m", ... */
    int level;               /* Clos level (1 = leaf), torus dimension + 1; 0: all */
    uint32_t ports;          /* switch: ports per switch (down + up) */
    uint32_t ports_up;       /* switch: of which up ports (at gbps_up) */
    double gbps;             /* the speed of its ports (a switch: of its down ports) */
    double gbps_up;          /* switch: of its up ports */
    uint64_t count;          /* switches, NIC ports, cables, transceivers */
    double unit_usd, total_usd;
    char fields[272];        /* the profile fields the unit price came from */
} tc_bom_line;

#define TC_BOM_MAX_LINES (4 * TC_MAX_LEVELS + 4 * TC_MAX_DIMS + 4)
typedef struct tc_bom {
    int n;
    tc_bom_line line[TC_BOM_MAX_LINES];
    double total_usd;
    /* totals by kind */
    uint64_t switches, switch_ports, nic_ports, copper_cables, optical_cables, transceivers;
} tc_bom;

/* The bill of materials of t, counted and priced at each link's own speed
 * (Clos: each level's cable speed; torus: its link speed). c NULL: counts
 * only (prices 0; a torus then takes cubes of 4). */
tc_status tc_bom_build(const tc_topo *t, const tc_cost *c, tc_bom *out, tc_err *err);
/* The same with every fabric link at gbps. */
tc_status tc_bom_at(const tc_topo *t, const tc_cost *c, double gbps, tc_bom *out, tc_err *err);

/* The one speed of t's fabric links in Gb/s (per cable), or a negative
 * number when its levels differ. */
double tc_cost_fabric_gbps(const tc_topo *t);
/* Sets every fabric link of t to gbps per cable (a Clos level of links=p
 * parallel cables to p x gbps), the NIC links that follow the NIC's
 * fabric bandwidth with them; the spec states the new bandwidth. */
tc_status tc_cost_set_fabric_speed(tc_topo *t, double gbps, tc_err *err);

/* The bill of materials' total over the profile's speeds (all fabric links
 * at one speed): its least and greatest, and where. */
typedef struct tc_cost_range {
    double lo_usd, lo_gbps, hi_usd, hi_gbps;
} tc_cost_range;
tc_status tc_cost_range_of(const tc_topo *t, const tc_cost *c, tc_cost_range *out, tc_err *err);
/* The fabric link speed (Gb/s) at which t's bill of materials comes to
 * usd: the highest such speed when several do. Fails (TC_EINVAL) when no
 * speed the profile prices reaches it, saying the range (what names t). */
tc_status tc_cost_equal_speed(const tc_topo *t, const tc_cost *c, double usd, const char *what, double *gbps,
                              tc_err *err);

/* "$5,000,000" (whole dollars). */
const char *tc_fmt_usd(double usd, char *buf, size_t len);
/* "5000000", "5M", "750k", "$2.5M" into dollars (> 0). */
tc_status tc_parse_usd(const char *s, double *out, tc_err *err);

#ifdef __cplusplus
}
#endif

#endif
