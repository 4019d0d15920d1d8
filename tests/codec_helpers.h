/*
 * codec_helpers.h - the codec tests' parse and create from one spec line;
 * a failure fails the test with the library's message. Include after
 * cmocka.h.
 */
#ifndef TOPOCC_TESTS_CODEC_HELPERS_H
#define TOPOCC_TESTS_CODEC_HELPERS_H

#include "topocc/compress.h"

static inline tc_codec_spec spec_of(const char *s)
{
    tc_codec_spec c;
    tc_err err = {{0}};
    if (tc_codec_parse(s, &c, &err) != TC_OK)
        fail_msg("parse %s: %s", s, err.msg);
    return c;
}

static inline tc_codec *make(const char *s, uint64_t d, uint32_t n)
{
    tc_codec_spec c = spec_of(s);
    tc_codec *k = NULL;
    tc_err err = {{0}};
    if (tc_codec_create(&c, d, n, &k, &err) != TC_OK)
        fail_msg("create %s d=%llu n=%u: %s", s, (unsigned long long)d, n, err.msg);
    return k;
}

#endif
