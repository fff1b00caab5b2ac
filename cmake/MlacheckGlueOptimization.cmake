# CI's 30 minutes: the CLI and the test suite are glue whose run time is spent in the libraries
# (quant/, ref/, check/, io/ at the build type's -O3), while their compile time was over half of a
# build (CLI11, fmt, nlohmann-json, GoogleTest templates). Measured with g++ 12 on cli/cmd_verify.cpp:
# 32 s at -O3, 22 s at -O1, 17 s at -Og. mlacheck_glue_optimization(target) compiles a target's C++
# at -Og in optimized builds; mlacheck_compute_sources(target files...) keeps the build type's level
# for the sources of such a target that loop over whole tensors (the tests' independent references,
# the CLI's passes over caches and outputs).
function(mlacheck_glue_optimization target)
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-Og>)
endfunction()

function(mlacheck_compute_sources target)
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
    $<$<CONFIG:Release>:-O3> $<$<CONFIG:RelWithDebInfo>:-O2>)
endfunction()
