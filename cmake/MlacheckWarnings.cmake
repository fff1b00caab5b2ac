# Warnings for project code only (third-party headers are included as SYSTEM by their targets).
# Not -Wnull-dereference: at -O3 g++ 12 reports it inside libstdc++ (stl_construct.h, streambuf).
add_library(mlacheck_warnings INTERFACE)
target_compile_options(mlacheck_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
                            -Wunused -Woverloaded-virtual -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${MLACHECK_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${MLACHECK_WERROR}>>:-Werror=all-warnings -Xcompiler=-Werror>)
