/*
 * units.c - parsing and printing of sizes, rates and times.
 * Inside topocc everything is bytes, seconds and bytes per second.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topocc/core.h"

typedef struct unit {
    const char *name;
    double mult;
} unit;

/* Splits s into a finite non-negative number and a unit suffix. */
static bool split_number(const char *s, double *num, const char **suffix)
{
    if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return false;
    /* Reject hex floats, "inf" and "nan": only plain decimal numbers. */
    for (const char *c = s; c < end; c++)
        if (!isdigit((unsigned char)*c) && *c != '.' && *c != 'e' && *c != 'E' && *c != '-' && *c != '+')
            return false;
    *num = v;
    *suffix = end;
    return true;
}

static bool lookup(const unit *u, const char *suffix, double *mult)
{
    for (; u->name; u++)
        if (strcmp(u->name, suffix) == 0) {
            *mult = u->mult;
            return true;
        }
    return false;
}

static const unit size_units[] = {
    {"", 1}, {"B", 1},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {NULL, 0}};

static const unit rate_units[] = {
    {"bps", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
    {"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
    {NULL, 0}};

/* Divisors, not multipliers: 500 / 1e9 rounds to the same double as 500e-9. */
static const unit time_units[] = {
    {"ns", 1e9}, {"us", 1e6}, {"ms", 1e3}, {"s", 1},
    {NULL, 0}};

tc_status tc_parse_size(const char *s, double *out, tc_err *err)
{
    double v, m;
    const char *suf;
    if (!split_number(s, &v, &suf) || !lookup(size_units, suf, &m))
        return tc_fail(err, TC_EINVAL,
                       "invalid size '%s': expected a number with B, KiB, MiB, GiB, TiB (powers of 2) or KB, MB, GB, TB (powers of 10), e.g. 64KiB",
                       s ? s : "");
    v *= m;
    /* A whole number of bytes is checked before it becomes a double, which
     * would round 2^60 + 1 down to 2^60 and let it pass. */
    bool digits = true;
    for (const char *c = s; *c && digits; c++)
        digits = *c >= '0' && *c <= '9';
    if (digits && strlen(s) >= 16) {
        errno = 0;
        unsigned long long u = strtoull(s, NULL, 10);
        if (errno == ERANGE || u > (1ull << 60))
            v = INFINITY;
    }
    if (v <= 0 || v > TC_MAX_BYTES)
        return tc_fail(err, TC_EINVAL, "invalid size '%s': must be above 0 and at most 2^60 bytes", s);
    *out = v;
    return TC_OK;
}

tc_status tc_parse_rate(const char *s, double *out, tc_err *err)
{
    double v, m;
    const char *suf;
    /* from 1 bit/s to 1e18 B/s: beyond either, times and rates leave
     * what a double holds in sums and products */
    if (!split_number(s, &v, &suf) || !lookup(rate_units, suf, &m) || !(v * m >= 0.125 && v * m <= 1e18))
        return tc_fail(err, TC_EINVAL,
                       "invalid rate '%s': expected a number from 1bps to 1e18B/s with bps, Kbps, Mbps, Gbps, Tbps (bits) or B/s, KB/s, MB/s, GB/s, TB/s (bytes), e.g. 400Gbps",
                       s ? s : "");
    *out = v * m;
    return TC_OK;
}

tc_status tc_parse_time(const char *s, double *out, tc_err *err)
{
    double v, m;
    const char *suf;
    if (s && strcmp(s, "0") == 0) { /* zero needs no unit */
        *out = 0;
        return TC_OK;
    }
    if (!split_number(s, &v, &suf) || !lookup(time_units, suf, &m) || v / m > 1e6)
        return tc_fail(err, TC_EINVAL,
                       "invalid time '%s': expected 0 or a non-negative number with ns, us, ms or s, e.g. 1us",
                       s ? s : "");
    *out = v / m;
    return TC_OK;
}

tc_status tc_parse_u32(const char *s, uint32_t *out, tc_err *err)
{
    if (!s || !*s)
        return tc_fail(err, TC_EINVAL, "invalid integer '': expected a positive integer");
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            return tc_fail(err, TC_EINVAL, "invalid integer '%s': expected a positive integer", s);
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v == 0 || v > UINT32_MAX)
        return tc_fail(err, TC_EINVAL, "invalid integer '%s': expected 1 to 4294967295", s);
    *out = (uint32_t)v;
    return TC_OK;
}

tc_status tc_parse_dims(const char *s, uint32_t *vals, int max, int *n, tc_err *err)
{
    char buf[256];
    if (!s || !*s || strlen(s) >= sizeof buf)
        return tc_fail(err, TC_EINVAL, "invalid list '%s': expected values joined by 'x', e.g. 16x16x16", s ? s : "");
    strcpy(buf, s);
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        if (k >= max)
            return tc_fail(err, TC_EINVAL, "invalid list '%s': at most %d values", s, max);
        uint32_t v;
        if (tc_parse_u32(tok, &v, NULL) != TC_OK)
            return tc_fail(err, TC_EINVAL, "invalid list '%s': '%s' is not a positive integer (values joined by 'x', e.g. 16x16x16)", s, tok);
        vals[k++] = v;
    }
    if (k == 0 || s[strlen(s) - 1] == 'x' || s[0] == 'x' || strstr(s, "xx"))
        return tc_fail(err, TC_EINVAL, "invalid list '%s': expected values joined by 'x', e.g. 16x16x16", s);
    *n = k;
    return TC_OK;
}

const char *tc_fmt_size(double b, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int i = 0;
    while (b >= 1024.0 && i < 6) {
        b /= 1024.0;
        i++;
    }
    /* Three significant digits, whole numbers from 1000 up (%.3g would
     * write 1.02e+03); what rounds to 1024 of a unit is 1 of the next */
    if (b >= 1023.5 && i < 6) {
        b /= 1024.0;
        i++;
    }
    if (b == floor(b) || b >= 999.5)
        snprintf(buf, len, "%.0f%s", b, names[i]);
    else
        snprintf(buf, len, "%.3g%s", b, names[i]);
    return buf;
}

const char *tc_fmt_time(double s, char *buf, size_t len)
{
    double a = fabs(s); /* a negative time (a slowdown that is a speed-up) takes its magnitude's unit */
    if (a < 1e-6)
        snprintf(buf, len, "%.3gns", s * 1e9);
    else if (a < 1e-3)
        snprintf(buf, len, "%.4gus", s * 1e6);
    else if (a < 1)
        snprintf(buf, len, "%.4gms", s * 1e3);
    else
        snprintf(buf, len, "%.4gs", s);
    return buf;
}

const char *tc_fmt_rate(double Bps, char *buf, size_t len)
{
    if (Bps >= 1e12)
        snprintf(buf, len, "%.4gTB/s", Bps / 1e12);
    else if (Bps >= 1e9)
        snprintf(buf, len, "%.4gGB/s", Bps / 1e9);
    else if (Bps >= 1e6)
        snprintf(buf, len, "%.4gMB/s", Bps / 1e6);
    else
        snprintf(buf, len, "%.4gKB/s", Bps / 1e3);
    return buf;
}
