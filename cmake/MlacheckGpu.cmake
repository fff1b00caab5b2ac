# Resolves the MLACHECK_GPU cache option to MLACHECK_GPU_BACKEND: none, cuda or hip.
set(_mlacheck_gpu_values none cuda hip auto)
if(NOT MLACHECK_GPU IN_LIST _mlacheck_gpu_values)
  message(FATAL_ERROR "MLACHECK_GPU='${MLACHECK_GPU}' is not one of: ${_mlacheck_gpu_values}")
endif()
set(MLACHECK_GPU_BACKEND "${MLACHECK_GPU}")
message(STATUS "mlacheck GPU backend: ${MLACHECK_GPU_BACKEND}")
