# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the one configuration both use, so that CI
# builds it once for both (same build directory, same cache: the second script compiles only what
# the first did not need). clang-22 with libFuzzer's coverage instrumentation, ASan and UBSan
# (cmake/MlacheckFuzz.cmake, cmake/MlacheckSanitize.cmake): clang compiles this project's sanitized
# objects in about half g++'s time (measured: ref/case_spec.cpp 6.4 s vs 11 s of CPU), and libFuzzer
# is clang's. Debug build type with its flags replaced: asserts stay on (no -DNDEBUG); -O1 as
# OSS-Fuzz builds; line tables are all a stack needs to name the line. Warnings are not errors
# here: the normal g++ build gates them. Extra arguments go to cmake.
configure_sanitized() {
  local build=$1
  shift
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DMLACHECK_FUZZ=ON -DMLACHECK_GPU=none \
    -DMLACHECK_WERROR=OFF "$@"
}

# Sanitizer settings for everything run from such a build. detect_leaks: a leak is a failure.
# abort_on_error / halt_on_error: the first report ends the process with a signal, which no
# test can mistake for an ordinary exit code. print_stacktrace: UBSan names the caller too.
# The suppressions name leaks inside third-party runtimes only (each with its reason).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
