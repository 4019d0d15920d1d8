# build_info.cmake - writes OUT (topocc_build.h): the version, the git commit
# of SRC ("-dirty" when tracked files have uncommitted changes; "unknown"
# outside a git checkout), the build type. Run at every build (cmake -P) so
# the commit is never stale; the file is rewritten only when its content
# changes, so an unchanged tree recompiles nothing.
# usage: cmake -DSRC=dir -DOUT=file -DVERSION=x.y.z -DBUILD_TYPE=t -DSANITIZE=ON|OFF -P build_info.cmake
set(commit "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --short HEAD
    OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND head)
    set(commit "${head}")
    execute_process(COMMAND ${GIT} -C ${SRC} status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0 OR changes)
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(type "${BUILD_TYPE}")
if(SANITIZE)
  string(APPEND type "+asan+ubsan")
endif()
set(text "/* Generated at build time by cmake/build_info.cmake: do not edit. */
#define TOPOCC_VERSION \"${VERSION}\"
#define TOPOCC_COMMIT \"${commit}\"
#define TOPOCC_BUILD_TYPE \"${type}\"
")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
