# MLACHECK_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on every target (scripts/sanitize.sh
# runs the suite in such a build). -fno-sanitize-recover=all: the first report aborts, so it fails
# the test that made it. Off by default: the normal build is unchanged.
option(MLACHECK_SANITIZE "Build with ASan + UBSan (see scripts/sanitize.sh)" OFF)
if(MLACHECK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Called once every target exists. The commands of cli/ compile at -O0 in this build: they are
# plumbing (the numbers are computed in the libraries, which keep the build type's optimization),
# and CLI11's header-only code instrumented and optimized in each of them is most of the build.
# Measured with clang-22: cli/cmd_drift.cpp takes 30 s of CPU at -O1, 15 s at -O0. Going further
# does not pay: io/, problem/, gpu/ and tests/ at -O0 as well took 66 s off the build (2 cores)
# and added 200 s to the suite's run.
function(mlacheck_sanitize_finish)
  if(MLACHECK_SANITIZE)
    target_compile_options(mlacheck PRIVATE -O0)
  endif()
endfunction()
