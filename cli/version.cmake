# Writes version.cpp from version.cpp.in with the commit the sources are at when the binary is
# built, "-dirty" when tracked files differ from it. Run at every build (cli/CMakeLists.txt's
# mlacheck_version target), not once at configure time: an incremental build carried its configure
# step's commit, so device logs named a commit the binary was not built from (2026-12-02: every
# bench header of that day's sixth session read 90786a5 across four later commits).
# configure_file rewrites the file only when its text changes, so an unchanged commit costs no
# recompile.
# In: SOURCE_DIR, IN, OUT, PROJECT_VERSION, MLACHECK_GPU_BACKEND.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE MLACHECK_GIT_HASH OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE head_result)
if(NOT head_result EQUAL 0 OR MLACHECK_GIT_HASH STREQUAL "")
  set(MLACHECK_GIT_HASH "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
                  ERROR_QUIET RESULT_VARIABLE diff_result)
  if(NOT diff_result EQUAL 0)
    string(APPEND MLACHECK_GIT_HASH "-dirty")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
