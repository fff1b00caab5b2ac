# Resolves the MLACHECK_GPU cache option to MLACHECK_GPU_BACKEND (none, cuda or hip) and sets that
# backend up. gpu/CMakeLists.txt hands its device sources to mlacheck_gpu_device_sources(), which
# does the backend's part:
#   cuda  the .hip files are compiled as CUDA by nvcc into the library; cudart is linked statically
#         and MLACHECK_HAVE_GPU_RUNTIME=1 is defined for the library and its users.
#   hip   CMake 3.25's HIP language cannot find Debian's hip-lang package, and no HIP runtime or
#         device library for CDNA can be linked here, so clang++ compiles each .hip device-only for
#         every MLACHECK_HIP_ARCHS entry to assembly, and `hip_device_check` (in ALL) prints each
#         kernel's resources and fails on scratch or on a missing required instruction. The host
#         code is built without a GPU runtime.
#   none  no device code at all.
include_guard(GLOBAL)
include(CheckLanguage)

set(_mlacheck_gpu_values none cuda hip auto)
if(NOT MLACHECK_GPU IN_LIST _mlacheck_gpu_values)
  message(FATAL_ERROR "MLACHECK_GPU='${MLACHECK_GPU}' is not one of: ${_mlacheck_gpu_values}")
endif()

set(MLACHECK_HIP_CLANG "" CACHE FILEPATH
    "clang++ that compile-checks the HIP device code (empty: clang++-22 on the PATH)")
set(MLACHECK_HIP_ARCHS "gfx90a;gfx942;gfx950" CACHE STRING
    "AMD targets whose device code MLACHECK_GPU=hip compiles and inspects (MI250X, MI300X, MI355X)")

# Finds the HIP compile-check toolchain: sets MLACHECK_HIP_CLANG_EXE and MLACHECK_HIP_USABLE, and
# MLACHECK_HIP_PROBLEM to why not. "Found" means a device-only compile of a kernel that includes
# <hip/hip_runtime.h> succeeds for the first architecture, so a clang that lacks the target or
# cannot see the headers is caught here and not half-way through the build.
function(_mlacheck_find_hip_toolchain)
  set(usable FALSE)
  set(problem "")
  if(MLACHECK_HIP_CLANG)
    set(clang "${MLACHECK_HIP_CLANG}")
    if(NOT EXISTS "${clang}")
      set(problem "MLACHECK_HIP_CLANG='${clang}' does not exist")
    endif()
  else()
    find_program(MLACHECK_HIP_CLANG_FOUND NAMES clang++-22 DOC "clang++ for the HIP device check")
    set(clang "${MLACHECK_HIP_CLANG_FOUND}")
    if(NOT clang)
      set(problem "clang++-22 not found on the PATH (or set MLACHECK_HIP_CLANG)")
    endif()
  endif()
  if(problem STREQUAL "")
    list(GET MLACHECK_HIP_ARCHS 0 arch)
    set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/mlacheck_hip_probe")
    file(WRITE "${dir}/probe.hip"
         "#include <hip/hip_runtime.h>\n__global__ void mlacheck_probe(int* p) { *p = 1; }\n")
    execute_process(
      COMMAND "${clang}" -x hip -std=c++20 --offload-arch=${arch} --offload-device-only
              -D__AMDGCN_WAVEFRONT_SIZE=64 -nogpulib -O3 -S "${dir}/probe.hip" -o "${dir}/probe.s"
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc EQUAL 0)
      set(usable TRUE)
    else()
      set(problem "'${clang}' cannot compile <hip/hip_runtime.h> device code for ${arch}:\n${out}")
    endif()
  endif()
  set(MLACHECK_HIP_CLANG_EXE "${clang}" PARENT_SCOPE)
  set(MLACHECK_HIP_USABLE ${usable} PARENT_SCOPE)
  set(MLACHECK_HIP_PROBLEM "${problem}" PARENT_SCOPE)
endfunction()

# --- resolve auto -------------------------------------------------------------------------------
set(MLACHECK_GPU_BACKEND "${MLACHECK_GPU}")
if(MLACHECK_GPU STREQUAL "auto")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(MLACHECK_GPU_BACKEND cuda)
    set(_why "CUDA compiler ${CMAKE_CUDA_COMPILER}")
  else()
    _mlacheck_find_hip_toolchain()
    if(MLACHECK_HIP_USABLE)
      set(MLACHECK_GPU_BACKEND hip)
      set(_why "no CUDA compiler; HIP device check with ${MLACHECK_HIP_CLANG_EXE}")
    else()
      set(MLACHECK_GPU_BACKEND none)
      set(_why "no CUDA compiler; no HIP toolchain: ${MLACHECK_HIP_PROBLEM}")
    endif()
  endif()
  message(STATUS "mlacheck GPU backend: auto -> ${MLACHECK_GPU_BACKEND} (${_why})")
else()
  message(STATUS "mlacheck GPU backend: ${MLACHECK_GPU_BACKEND}")
endif()

# --- cuda ---------------------------------------------------------------------------------------
if(MLACHECK_GPU_BACKEND STREQUAL "cuda")
  # The standard variable decides; only its default changes, from CMake's old one to Hopper
  # (H100/H200, the lent machines). CUDAARCHS in the environment counts as the user's choice.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES 90a CACHE STRING
        "CUDA architectures (mlacheck's default: 90a, the H100/H200 with its warpgroup MMA)")
  endif()
  # nvcc's host compiler is the project's C++ compiler, so host code agrees on the standard library.
  if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER)
    set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}" CACHE FILEPATH "nvcc host compiler")
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc's C++20 flag (3.26 does); nvcc has had it since CUDA 12.0.
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION
     AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  # Static cudart: the binary built here then needs only the driver on the GPU machine.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "mlacheck CUDA: nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}, cudart static")
endif()

# --- hip ----------------------------------------------------------------------------------------
if(MLACHECK_GPU_BACKEND STREQUAL "hip")
  if(NOT DEFINED MLACHECK_HIP_USABLE)
    _mlacheck_find_hip_toolchain()
  endif()
  if(NOT MLACHECK_HIP_USABLE)
    message(FATAL_ERROR "MLACHECK_GPU=hip: ${MLACHECK_HIP_PROBLEM}")
  endif()
  if(MLACHECK_HIP_ARCHS STREQUAL "")
    message(FATAL_ERROR "MLACHECK_GPU=hip needs at least one MLACHECK_HIP_ARCHS entry")
  endif()
  find_program(MLACHECK_CXXFILT NAMES c++filt llvm-cxxfilt-22 llvm-cxxfilt
               DOC "demangler for the HIP resource report (optional)")
  message(STATUS "mlacheck HIP: device-only check with ${MLACHECK_HIP_CLANG_EXE} "
                 "for ${MLACHECK_HIP_ARCHS}; host code built without a GPU runtime")
endif()

set(_mlacheck_hip_report_script "${CMAKE_CURRENT_LIST_DIR}/../scripts/hip-resource-report.cmake")
get_filename_component(_mlacheck_hip_report_script "${_mlacheck_hip_report_script}" ABSOLUTE)

# Compiles `sources` (.hip, relative to the calling directory) device-only for every
# MLACHECK_HIP_ARCHS entry and adds `hip_device_check` (in ALL), which prints the resource report
# and fails on scratch. `force_include` is included first by every compile. `require` lists
# "<arch> <source> <instruction regex>" entries: the report also fails unless that source's
# assembly for that arch has a matching instruction (entries for archs not built are dropped).
# Assembly files are named after the source's path, '/' -> '-' (portable/attention.hip ->
# portable-attention.s), so sources of the same name in different folders do not collide.
# -D__AMDGCN_WAVEFRONT_SIZE=64: ROCm 5.2's headers define warpSize from it and clang >= 20 no longer
# predefines it; 64 is every gfx9 target's wave size (gpu/platform.h checks kWarpSize against it).
function(_mlacheck_hip_asm_name out src)
  get_filename_component(abs "${src}" ABSOLUTE)
  file(RELATIVE_PATH rel "${CMAKE_CURRENT_SOURCE_DIR}" "${abs}")
  string(REGEX REPLACE "\\.hip$" "" rel "${rel}")
  string(REPLACE "/" "-" rel "${rel}")
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()

function(_mlacheck_hip_device_check force_include require)
  set(flags -x hip -std=c++20 --offload-device-only -D__AMDGCN_WAVEFRONT_SIZE=64 -nogpulib -O3 -S
            -Rpass-analysis=kernel-resource-usage -Wall -Wextra -I${PROJECT_SOURCE_DIR}
            -include ${force_include})
  if(MLACHECK_WERROR)
    list(APPEND flags -Werror)
  endif()
  set(out_root "${CMAKE_BINARY_DIR}/hip-device-check")
  set(asm_files "")
  foreach(arch IN LISTS MLACHECK_HIP_ARCHS)
    foreach(src IN LISTS ARGN)
      get_filename_component(abs "${src}" ABSOLUTE)
      _mlacheck_hip_asm_name(name "${src}")
      set(asm "${out_root}/${arch}/${name}.s")
      add_custom_command(
        OUTPUT "${asm}"
        COMMAND ${CMAKE_COMMAND} -DMODE=compile "-DCLANG=${MLACHECK_HIP_CLANG_EXE}"
                "-DFLAGS=${flags};--offload-arch=${arch}" "-DSOURCE=${abs}" "-DASM=${asm}"
                -P "${_mlacheck_hip_report_script}"
        DEPENDS "${abs}" "${_mlacheck_hip_report_script}"
        DEPFILE "${asm}.d"
        COMMENT "HIP device code ${arch}: ${src}"
        VERBATIM)
      list(APPEND asm_files "${asm}")
    endforeach()
  endforeach()
  # Requirements as "<arch> <asm name> <regex>" for the report.
  set(required "")
  foreach(entry IN LISTS require)
    if(NOT entry MATCHES "^([^ ]+) ([^ ]+) ([^ ]+)$")
      message(FATAL_ERROR
              "HIP_REQUIRE_INSTRUCTIONS entry '${entry}' is not '<arch> <source> <regex>'")
    endif()
    set(arch "${CMAKE_MATCH_1}")
    set(src "${CMAKE_MATCH_2}")
    set(regex "${CMAKE_MATCH_3}")
    if(NOT src IN_LIST ARGN)
      message(FATAL_ERROR
              "HIP_REQUIRE_INSTRUCTIONS entry '${entry}': ${src} is not a device source")
    endif()
    if(arch IN_LIST MLACHECK_HIP_ARCHS)
      _mlacheck_hip_asm_name(name "${src}")
      list(APPEND required "${arch} ${name} ${regex}")
    endif()
  endforeach()
  set(report "${out_root}/hip-resource-report.txt")
  add_custom_command(
    OUTPUT "${report}"
    COMMAND ${CMAKE_COMMAND} -DMODE=report "-DASM_FILES=${asm_files}" "-DREQUIRE=${required}"
            "-DREPORT=${report}" "-DCXXFILT=${MLACHECK_CXXFILT}" -P "${_mlacheck_hip_report_script}"
    DEPENDS ${asm_files} "${_mlacheck_hip_report_script}"
    COMMENT "HIP resource report (${MLACHECK_HIP_ARCHS})"
    VERBATIM)
  add_custom_target(hip_device_check ALL DEPENDS "${report}")
endfunction()

# The one entry point for gpu/CMakeLists.txt: the backend's treatment of `target`'s device sources.
# SOURCES are every vendor's; NVIDIA_SOURCES are compiled only by the cuda backend and AMD_SOURCES
# only by the hip one (a kernel family, or a check, that exists for one vendor only). The cuda
# backend defines MLACHECK_GPU_RUNTIME_NVIDIA beside MLACHECK_HAVE_GPU_RUNTIME, so that host code
# knows which vendor's kernels it links (gpu/families.cpp).
function(mlacheck_gpu_device_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "HIP_FORCE_INCLUDE"
                        "SOURCES;NVIDIA_SOURCES;AMD_SOURCES;HIP_REQUIRE_INSTRUCTIONS")
  if(MLACHECK_GPU_BACKEND STREQUAL "cuda")
    # One source for both vendors: nvcc reads the .hip files as CUDA through gpu/platform.h.
    set(sources ${arg_SOURCES} ${arg_NVIDIA_SOURCES})
    set_source_files_properties(${sources} PROPERTIES LANGUAGE CUDA)
    target_sources(${target} PRIVATE ${sources})
    target_compile_definitions(${target} PUBLIC MLACHECK_HAVE_GPU_RUNTIME=1 MLACHECK_GPU_RUNTIME_NVIDIA=1)
    target_link_libraries(${target} PUBLIC CUDA::cudart_static)
  elseif(MLACHECK_GPU_BACKEND STREQUAL "hip")
    _mlacheck_hip_device_check("${arg_HIP_FORCE_INCLUDE}" "${arg_HIP_REQUIRE_INSTRUCTIONS}"
                               ${arg_SOURCES} ${arg_AMD_SOURCES})
  endif()
endfunction()
