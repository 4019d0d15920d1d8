/*
 * version.c - what this build is: version, git commit, build type (from
 * topocc_build.h, regenerated at every build by cmake/build_info.cmake) and
 * the optional dependencies it can use.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "topocc/core.h"
#include "topocc_build.h"

const char *tc_version(void)
{
    return TOPOCC_VERSION;
}

const char *tc_commit(void)
{
    return TOPOCC_COMMIT;
}

const char *tc_build_type(void)
{
    return TOPOCC_BUILD_TYPE;
}

/* gnuplot is looked up at run time, as the plots will run it: an
 * executable "gnuplot" in a directory of PATH. */
static bool gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    while (*path) {
        size_t n = strcspn(path, ":");
        char file[4096];
        /* An empty entry is the current directory (POSIX). */
        int w = n ? snprintf(file, sizeof file, "%.*s/gnuplot", (int)n, path) : snprintf(file, sizeof file, "gnuplot");
        if (w > 0 && (size_t)w < sizeof file && access(file, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

#ifdef TOPOCC_HAVE_MPI
#define TC_MPI_STATE "built"
#else
#define TC_MPI_STATE "not built"
#endif
#define TC_LIBS "; Open MPI: " TC_MPI_STATE "; jansson " JANSSON_VERSION "; zlib " ZLIB_VERSION

/* Both lines are constants: which one depends only on the run-time look-up. */
const char *tc_optional_deps(void)
{
    return gnuplot_on_path() ? "gnuplot: found" TC_LIBS : "gnuplot: not found" TC_LIBS;
}
