#pragma once
// MLACHECK_HD marks functions that CUDA and HIP compile for both host and device. The scalar codecs
// use it so that the CPU reference and the GPU kernels decode and encode the same bits the same
// way.
#if defined(__CUDACC__) || defined(__HIP__)
#define MLACHECK_HD __host__ __device__
#else
#define MLACHECK_HD
#endif
