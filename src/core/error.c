/* error.c - errors as values: tc_fail formats the one-line message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "topocc/core.h"

tc_status tc_fail(tc_err *err, tc_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void *tc_calloc(size_t n, size_t size)
{
    if (n == 0 || size == 0)
        n = size = 1;
    return calloc(n, size);
}
