/*
 * sys.c - what the machine offers: physical memory, and the check that
 * refuses a run whose estimated memory exceeds the limit before it starts
 * (a run the kernel kills half way tells the user nothing).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "topocc/core.h"

double tc_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || size <= 0)
        return 0;
    return (double)pages * (double)size;
}

/* Decimal units, as --mem-limit reads them (tc_parse_size: GB = 1e9). */
static double mem_unit(double bytes, const char **name)
{
    if (bytes >= 1e9) {
        *name = "GB";
        return 1e9;
    }
    if (bytes >= 1e6) {
        *name = "MB";
        return 1e6;
    }
    if (bytes >= 1e3) {
        *name = "KB";
        return 1e3;
    }
    *name = "B";
    return 1;
}

static void mem_fmt(double bytes, int decimals, char *buf, size_t len)
{
    const char *name;
    double u = mem_unit(bytes, &name);
    snprintf(buf, len, "%.*f %s", u == 1e9 ? decimals + 1 : decimals, bytes / u, name);
}

tc_status tc_mem_check(double need_bytes, double limit_bytes, const char *what, tc_err *err)
{
    if (!(limit_bytes > 0) || !(need_bytes > limit_bytes))
        return TC_OK;
    char need[32], limit[32];
    /* More decimals when the rounded figures would read the same. */
    for (int d = 0; d < 4; d++) {
        mem_fmt(need_bytes, d, need, sizeof need);
        mem_fmt(limit_bytes, d, limit, sizeof limit);
        if (strcmp(need, limit) != 0)
            break;
    }
    const char *name;
    /* The suggestion is the estimate rounded up to a whole unit, so it is
     * enough and reads as a value one would type. */
    double u = mem_unit(need_bytes, &name);
    return tc_fail(err, TC_EINVAL,
                   "%s needs about %s, above the memory limit of %s: raise it with --mem-limit %.0f%s (or simplify "
                   "the run)",
                   what ? what : "the run", need, limit, ceil(need_bytes / u), name);
}
