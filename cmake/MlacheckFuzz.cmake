# MLACHECK_FUZZ: the libFuzzer targets of fuzz/ (scripts/fuzz.sh). Off by default, so the normal
# g++ build is unchanged. libFuzzer is clang's, so another compiler is an error, never a silent
# build without fuzzing. It implies MLACHECK_SANITIZE (a memory error or UB becomes a crash) and
# adds coverage instrumentation to every library, for the fuzzer to steer by: such a build still
# builds and runs the whole suite (scripts/sanitize.sh and scripts/fuzz.sh share one in CI).
option(MLACHECK_FUZZ "Build the libFuzzer targets of fuzz/ (clang only; see scripts/fuzz.sh)" OFF)
if(MLACHECK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MLACHECK_FUZZ needs clang (libFuzzer), got ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-22")
  endif()
  set(MLACHECK_SANITIZE ON)  # a plain variable: option() leaves it be (CMP0077), the cache is untouched
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
