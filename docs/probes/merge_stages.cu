// A timing probe, not built by CMake and not part of mlacheck (docs/HOPPER.md: "4 x 1024"): which
// stage of the split-K merge costs the 4 x 1024 call its time. The merge kernel
// (gpu/common/merge.hip) takes 4.6-4.7 µs under ncu there where a competition submission's reduce of
// the same shape takes 2.8-3.0 (PERF.md, twenty-ninth session, calls 21-23), and a merge cut as
// that reduce is (one warp a block) was slower. Here each difference between the two is a switch of
// one kernel, timed the way `mlacheck bench --graph` times a call (CUDA events around one graph
// replay, the L2 flushed by a 256 MB read before each repetition, the median):
//   the grid:     a block of 128 threads per (query row, head), the LSEs and weights by its first
//                 warp, one barrier (mlacheck's) | a warp per (query row, head, 128 value dims),
//                 each computing the weights itself, no barrier (the submission's);
//   the weights:  none (w = 1: the partials' loads, sums and stores alone) | float32 exp2f | the
//                 double-precision exp of mlacheck's merge (gpu/common/merge_math.h, whose
//                 arithmetic the gate's emulation fixes bit for bit), and with it the merged LSE's
//                 double-precision logarithm by lane 0 before the barrier, as the merge kernel has;
//   the partials: float32 (mlacheck's, fixed by the emulation) | bf16 (the submission's).
// Every merge runs after a producer kernel of the 4 x 1024 call's grid (64 blocks of 576 threads,
// each reading one 64-key bf16 tile's bytes and writing its split's 16 partial rows and LSEs), as
// the call's second kernel launched programmatically, so each row is producer + merge; the
// producer alone (either partials) and the producer with an empty second kernel are the rows to
// subtract. Each weighted variant's output is checked against a host merge of the same partials
// (float32 and bf16 inputs alike: the bf16 partials are the float ones rounded).
//   nvcc -std=c++17 -O3 --fmad=false -I. -gencode arch=compute_90a,code=sm_90a \
//        docs/probes/merge_stages.cu -o merge_stages          (from the repository's root)
//   ./merge_stages [--reps N] [--no-flush]                     (on the GPU machine; a few seconds)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu/common/merge_math.h"
#include "probe_common.h"

namespace {

namespace merge = mlacheck::gpu::common::merge;

// 4 x 1024 split-K as mlacheck's hopper strategies cut it (docs/HOPPER.md): 16 splits of one 64-key
// tile for each of 4 query rows; 16 heads, 512 value dims (problem/shape.h).
constexpr int kTokens = 4, kSplits = 16, kHeads = 16, kVDim = 512, kTileKeys = 64;
constexpr int64_t kKeyRowBytes = 576 * 2;  // a bf16 cache row
constexpr int kProducerThreads = 576;
constexpr int kBlockThreads = kVDim / 4;  // 4 dims a thread (gpu/common/merge.hip)
constexpr int kWarpDims = 128;            // a warp's value dims in the submission's grid
// The softmax base of the merge's weights: 2, as the MXFP4 recipes' (the bf16 and fp8 recipes' is e;
// exp_d and exp2_d are the same reduction and polynomial, gpu/common/device_math.h).
constexpr bool kBase2 = true;

// kDoubleCall: the double-precision weights in a function of its own (not inlined), which kWarmed
// also calls once before the programmatic launch's wait, so that its instructions and constants are
// fetched while the kernel waits for its predecessor instead of after the wait.
enum class Weights { kNone, kFloat, kDouble, kDoubleCall, kWarmed };
enum class Grid { kBlockPerHead, kWarpPer128Dims };

__host__ __device__ inline float partial_value(int64_t i) {
  return static_cast<float>(static_cast<int>((static_cast<uint32_t>(i) * 2654435761u) >> 22) - 512) * (1.0f / 256.0f);
}
__host__ __device__ inline float lse_value(int row) { return 2.0f + 0.37f * static_cast<float>((row * 7) % 13); }

// 16 bytes of partials from element `first` on: 4 float32 or 8 bf16 values, one store either way,
// so that the producer's stores scale with the bytes, not the element count.
__device__ inline void store16(float* p, int64_t first, float zero) {
  *reinterpret_cast<float4*>(p + first) = make_float4(partial_value(first) + zero, partial_value(first + 1) + zero,
                                                      partial_value(first + 2) + zero, partial_value(first + 3) + zero);
}
__device__ inline void store16(__nv_bfloat16* p, int64_t first, float zero) {
  uint32_t w[4];
  for (int k = 0; k < 4; ++k) {
    const __nv_bfloat162 two = __floats2bfloat162_rn(partial_value(first + 2 * k) + zero, partial_value(first + 2 * k + 1) + zero);
    w[k] = *reinterpret_cast<const uint32_t*>(&two);
  }
  *reinterpret_cast<uint4*>(p + first) = make_uint4(w[0], w[1], w[2], w[3]);
}

// Block (token, split): reads its tile's bytes in one round of 16-byte loads, then writes its 16
// partial rows (values fixed by their index, made dependent on the bytes read so no load is
// dropped) and their LSEs.
// kEarly: the producer lets the merge's blocks start at its own start (griddepcontrol.launch_dependents),
// so that they wait, on SMs it leaves idle, from then on instead of from its end.
template <class Partial, bool kEarly = false>
__global__ void producer(const uint4* kv, Partial* part_o, float* part_lse) {
  if constexpr (kEarly) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int64_t words = kTileKeys * kKeyRowBytes / 16;
  const uint4* tile = kv + blockIdx.x * words;
  uint32_t acc = 0;
  for (int64_t i = threadIdx.x; i < words; i += blockDim.x) acc ^= tile[i].x ^ tile[i].w;
  const float zero = (acc == 0x9E3779B9u) ? 1.0f : 0.0f;  // 0 for the probe's data, not knowable to the compiler
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kHeads * kVDim;
  constexpr int kPerStore = 16 / sizeof(Partial);
  for (int i = threadIdx.x; i < kHeads * kVDim / kPerStore; i += blockDim.x) store16(part_o, first + int64_t{kPerStore} * i, zero);
  if (threadIdx.x < kHeads) part_lse[blockIdx.x * kHeads + threadIdx.x] = lse_value(blockIdx.x * kHeads + threadIdx.x);
}

__device__ inline float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
__device__ inline float4 load4(const __nv_bfloat16* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

__device__ __noinline__ float double_weight_call(float lse, float big) { return merge::weight(kBase2, lse, big); }

template <Weights kWeights>
__device__ inline float weight_of(float lse, float big) {
  if constexpr (kWeights == Weights::kDouble) return merge::weight(kBase2, lse, big);
  else if constexpr (kWeights == Weights::kDoubleCall || kWeights == Weights::kWarmed) return double_weight_call(lse, big);
  else return exp2f(lse - big);
}

__device__ inline void store_out(__nv_bfloat16* out, const float acc[4]) {
  __nv_bfloat162 lo = __floats2bfloat162_rn(acc[0], acc[1]), hi = __floats2bfloat162_rn(acc[2], acc[3]);
  uint2 u;
  u.x = *reinterpret_cast<uint32_t*>(&lo);
  u.y = *reinterpret_cast<uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(out) = u;
}

// A thread's 4 dims: Σ_s w_s · o_s in split order, each product rounded before the sum (merge_math.h),
// over the total, stored as bf16.
template <class WeightOfSplit>
__device__ inline void weigh_and_store(const float4 (&early)[kSplits], WeightOfSplit weight_of_split, float total,
                                       __nv_bfloat16* out) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int s = 0; s < kSplits; ++s) {
    const float w = weight_of_split(s);
    acc[0] = merge::accumulate(acc[0], w, early[s].x);
    acc[1] = merge::accumulate(acc[1], w, early[s].y);
    acc[2] = merge::accumulate(acc[2], w, early[s].z);
    acc[3] = merge::accumulate(acc[3], w, early[s].w);
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) acc[e] = acc[e] / total;
  store_out(out, acc);
}

// mlacheck's grid: block (token, head), thread t dims 4t .. 4t+3, all 16 partial rows loaded before
// the weights are known; the first warp's LSEs, maximum, weights and their sum in split order, one
// barrier (gpu/common/merge.hip's order of steps).
// kLse: the merged LSE too, by lane 0 before the barrier, as the merge kernel writes it.
template <Weights kWeights, bool kLse, class Partial>
__global__ void __launch_bounds__(kBlockThreads) merge_block(const Partial* part_o, const float* part_lse, __nv_bfloat16* out,
                                                             float* lse_out) {
  if constexpr (kWeights == Weights::kWarmed) {
    // The first warp's weight code run once on a value of its own before the wait (stored only if it
    // is NaN, which it is not, so that the call is kept).
    if (threadIdx.x < 32) {
      const float w = double_weight_call(lse_value(threadIdx.x), 4.0f);
      if (w != w) lse_out[0] = w;
    }
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  __shared__ float weight[kSplits];
  __shared__ float total_at;
  const int tid = threadIdx.x, token = blockIdx.x / kHeads, head = blockIdx.x % kHeads;
  const Partial* o = part_o + (static_cast<int64_t>(token) * kSplits * kHeads + head) * kVDim + 4 * tid;
  float4 early[kSplits];
#pragma unroll
  for (int s = 0; s < kSplits; ++s) early[s] = load4(o + static_cast<int64_t>(s) * kHeads * kVDim);
  float total = static_cast<float>(kSplits);
  if constexpr (kWeights != Weights::kNone) {
    if (tid < 32) {
      const float lse = tid < kSplits ? part_lse[(token * kSplits + tid) * kHeads + head] : merge::kNegInf;
      float big = lse;
#pragma unroll
      for (int mask = 16; mask >= 1; mask /= 2) big = fmaxf(big, __shfl_xor_sync(0xffffffffu, big, mask));
      if (tid < kSplits) weight[tid] = weight_of<kWeights>(lse, big);
      __syncwarp();
      float sum = 0.0f;
#pragma unroll
      for (int s = 0; s < kSplits; ++s) sum = sum + weight[s];
      if (tid == 0) {
        total_at = sum;
        if constexpr (kLse) lse_out[token * kHeads + head] = merge::merged_lse(kBase2, big, sum);
      }
    }
    __syncthreads();
    total = total_at;
  }
  weigh_and_store(early, [&](int s) { return kWeights == Weights::kNone ? 1.0f : weight[s]; }, total,
                  out + (static_cast<int64_t>(token) * kHeads + head) * kVDim + 4 * tid);
}

// The submission's grid: one warp per (token, head, 128 value dims), lane l dims 4l .. 4l+3 of
// them; every warp takes the LSEs, maximum, weights and (in split order, by shuffles) their sum
// itself.
template <Weights kWeights, class Partial>
__global__ void __launch_bounds__(32) merge_warp(const Partial* part_o, const float* part_lse, __nv_bfloat16* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  constexpr int kQuarters = kVDim / kWarpDims;
  const int lane = threadIdx.x, quarter = blockIdx.x % kQuarters, head = (blockIdx.x / kQuarters) % kHeads;
  const int token = blockIdx.x / (kQuarters * kHeads);
  const int dim = quarter * kWarpDims + 4 * lane;
  const Partial* o = part_o + (static_cast<int64_t>(token) * kSplits * kHeads + head) * kVDim + dim;
  float4 early[kSplits];
#pragma unroll
  for (int s = 0; s < kSplits; ++s) early[s] = load4(o + static_cast<int64_t>(s) * kHeads * kVDim);
  float w_lane = 1.0f, total = static_cast<float>(kSplits);
  if constexpr (kWeights != Weights::kNone) {
    const float lse = lane < kSplits ? part_lse[(token * kSplits + lane) * kHeads + head] : merge::kNegInf;
    float big = lse;
#pragma unroll
    for (int mask = 16; mask >= 1; mask /= 2) big = fmaxf(big, __shfl_xor_sync(0xffffffffu, big, mask));
    w_lane = lane < kSplits ? weight_of<kWeights>(lse, big) : 0.0f;
    total = 0.0f;
#pragma unroll
    for (int s = 0; s < kSplits; ++s) total = total + __shfl_sync(0xffffffffu, w_lane, s);
  }
  weigh_and_store(early, [&](int s) { return kWeights == Weights::kNone ? 1.0f : __shfl_sync(0xffffffffu, w_lane, s); },
                  total, out + (static_cast<int64_t>(token) * kHeads + head) * kVDim + dim);
}

__global__ void empty_kernel() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

struct Buffers {
  uint4* kv;
  float* part_f32;
  __nv_bfloat16* part_bf16;
  float* part_lse;
  __nv_bfloat16* out;
  float* lse_out;
  uint4* flush;
  uint32_t* sink;
};
constexpr int64_t kKvBytes = int64_t{kTokens} * kSplits * kTileKeys * kKeyRowBytes;
constexpr int64_t kPartials = int64_t{kTokens} * kSplits * kHeads * kVDim;
constexpr int64_t kOutputs = int64_t{kTokens} * kHeads * kVDim;
constexpr int64_t kFlushBytes = int64_t{256} << 20;
constexpr unsigned kProducerBlocks = kTokens * kSplits;

// The host merge of the probe's partials (float32 weights from the double exp, split order), the
// bf16 partials as their rounded values: what a weighted variant must give within bf16's rounding.
std::vector<float> host_merge(bool bf16_partials) {
  std::vector<float> expect(kOutputs);
  for (int t = 0; t < kTokens; ++t)
    for (int h = 0; h < kHeads; ++h) {
      float big = merge::kNegInf, w[kSplits], total = 0.0f;
      for (int s = 0; s < kSplits; ++s) big = std::fmax(big, lse_value((t * kSplits + s) * kHeads + h));
      for (int s = 0; s < kSplits; ++s) total += w[s] = merge::weight(kBase2, lse_value((t * kSplits + s) * kHeads + h), big);
      for (int d = 0; d < kVDim; ++d) {
        float acc = 0.0f;
        for (int s = 0; s < kSplits; ++s) {
          const int64_t i = ((static_cast<int64_t>(t) * kSplits + s) * kHeads + h) * kVDim + d;
          const float o = bf16_partials ? __bfloat162float(__float2bfloat16_rn(partial_value(i))) : partial_value(i);
          acc += w[s] * o;
        }
        expect[(static_cast<int64_t>(t) * kHeads + h) * kVDim + d] = acc / total;
      }
    }
  return expect;
}

// Largest |device - host| over |host| + 2^-8 (bf16's rounding of the output is 2^-9 relative).
// kWrongAbove, 2^-7: four times that rounding, room for exp2f's few ulps and the float32 sums.
constexpr double kWrongAbove = 1.0 / 128.0;
double worst_error(const Buffers& b, const std::vector<float>& expect) {
  std::vector<__nv_bfloat16> got(kOutputs);
  CHECK(cudaMemcpy(got.data(), b.out, kOutputs * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  double worst = 0.0;
  for (int64_t i = 0; i < kOutputs; ++i)
    worst = std::fmax(worst, std::fabs(static_cast<double>(__bfloat162float(got[i])) - expect[i]) /
                                 (std::fabs(static_cast<double>(expect[i])) + 1.0 / 256.0));
  return worst;
}

struct Row {
  const char* name;
  bool bf16_partials;
  bool checked;  // weighted: compared with the host merge
  void (*call)(const Buffers&, cudaStream_t);
};

template <Weights kWeights, Grid kGrid, class Partial, bool kLse = false, bool kEarly = false>
void producer_and_merge(const Buffers& b, cudaStream_t stream) {
  Partial* part = nullptr;
  if constexpr (sizeof(Partial) == 4) part = b.part_f32; else part = b.part_bf16;
  probe::launch(producer<Partial, kEarly>, kProducerBlocks, kProducerThreads, false, stream, static_cast<const uint4*>(b.kv), part, b.part_lse);
  const Partial* in = part;
  if constexpr (kGrid == Grid::kBlockPerHead)
    probe::launch(merge_block<kWeights, kLse, Partial>, kTokens * kHeads, kBlockThreads, true, stream, in,
           static_cast<const float*>(b.part_lse), b.out, b.lse_out);
  else
    probe::launch(merge_warp<kWeights, Partial>, kTokens * kHeads * (kVDim / kWarpDims), 32, true, stream, in,
           static_cast<const float*>(b.part_lse), b.out);
}

void producer_alone(const Buffers& b, cudaStream_t stream) {
  probe::launch(producer<float>, kProducerBlocks, kProducerThreads, false, stream, static_cast<const uint4*>(b.kv), b.part_f32, b.part_lse);
}
void producer_alone_bf16(const Buffers& b, cudaStream_t stream) {
  probe::launch(producer<__nv_bfloat16>, kProducerBlocks, kProducerThreads, false, stream, static_cast<const uint4*>(b.kv), b.part_bf16,
         b.part_lse);
}
void producer_and_empty(const Buffers& b, cudaStream_t stream) {
  producer_alone(b, stream);
  probe::launch(empty_kernel, kTokens * kHeads, kBlockThreads, true, stream);
}

}  // namespace

int main(int argc, char** argv) {
  // --no-flush: the same replays without the 256 MB read before each. The merge's data (partials,
  // LSEs) is in L2 either way, since the producer has just written it; so the difference a flush
  // makes to the merge stage is its code's, fetched from memory after the flush.
  bool flush = true;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-flush") == 0) flush = false;
    else argv[kept++] = argv[i];
  }
  const int reps = probe::reps_from_args(kept, argv);
  if (reps < 0) return 2;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("%s, %u SMs; 4 x 1024: the producer (64 blocks) then a merge of 16 splits; "
              "median of %d graph replays, %s, µs\n\n", prop.name, sms, reps,
              flush ? "L2 flushed before each" : "no flush (--no-flush)");
  Buffers b{};
  CHECK(cudaMalloc(&b.kv, kKvBytes));
  CHECK(cudaMalloc(&b.part_f32, kPartials * sizeof(float)));
  CHECK(cudaMalloc(&b.part_bf16, kPartials * sizeof(__nv_bfloat16)));
  CHECK(cudaMalloc(&b.part_lse, int64_t{kTokens} * kSplits * kHeads * sizeof(float)));
  CHECK(cudaMalloc(&b.out, kOutputs * sizeof(__nv_bfloat16)));
  CHECK(cudaMalloc(&b.lse_out, int64_t{kTokens} * kHeads * sizeof(float)));
  CHECK(cudaMalloc(&b.flush, kFlushBytes));
  CHECK(cudaMalloc(&b.sink, 4));
  CHECK(cudaMemset(b.kv, 0x5A, kKvBytes));  // defined contents, never zeros
  CHECK(cudaMemset(b.flush, 0x5A, kFlushBytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<float> expect_f32 = host_merge(false), expect_bf16 = host_merge(true);

  using W = Weights;
  using G = Grid;
  using B = __nv_bfloat16;
  const Row rows[] = {
      {"producer alone", false, false, producer_alone},
      {"producer alone, bf16 partials", true, false, producer_alone_bf16},
      {"producer + empty kernel", false, false, producer_and_empty},
      {"block/head, no weights, f32", false, false, producer_and_merge<W::kNone, G::kBlockPerHead, float>},
      {"block/head, float exp2f, f32", false, true, producer_and_merge<W::kFloat, G::kBlockPerHead, float>},
      {"block/head, double exp, f32", false, true, producer_and_merge<W::kDouble, G::kBlockPerHead, float>},
      {"block/head, double exp + merged LSE before the barrier (mlacheck's steps), f32", false, true,
       producer_and_merge<W::kDouble, G::kBlockPerHead, float, true>},
      {"block/head, double exp in a call, f32", false, true, producer_and_merge<W::kDoubleCall, G::kBlockPerHead, float>},
      {"block/head, double exp in a call, run once before the wait, f32", false, true,
       producer_and_merge<W::kWarmed, G::kBlockPerHead, float>},
      {"early launch: block/head, no weights, f32", false, false,
       producer_and_merge<W::kNone, G::kBlockPerHead, float, false, true>},
      {"early launch: block/head, double exp in a call, f32", false, true,
       producer_and_merge<W::kDoubleCall, G::kBlockPerHead, float, false, true>},
      {"early launch: block/head, double exp in a call, run once before the wait, f32", false, true,
       producer_and_merge<W::kWarmed, G::kBlockPerHead, float, false, true>},
      {"block/head, no weights, bf16", true, false, producer_and_merge<W::kNone, G::kBlockPerHead, B>},
      {"block/head, double exp, bf16", true, true, producer_and_merge<W::kDouble, G::kBlockPerHead, B>},
      {"warp/128 dims, no weights, f32", false, false, producer_and_merge<W::kNone, G::kWarpPer128Dims, float>},
      {"warp/128 dims, float exp2f, f32", false, true, producer_and_merge<W::kFloat, G::kWarpPer128Dims, float>},
      {"warp/128 dims, double exp, f32", false, true, producer_and_merge<W::kDouble, G::kWarpPer128Dims, float>},
      {"warp/128 dims, float exp2f, bf16 (the submission's)", true, true, producer_and_merge<W::kFloat, G::kWarpPer128Dims, B>},
      {"warp/128 dims, double exp, bf16", true, true, producer_and_merge<W::kDouble, G::kWarpPer128Dims, B>},
  };
  std::printf("| call | median | p10 | p90 | worst error against the host merge |\n|---|---|---|---|---|\n");
  int wrong = 0;
  for (const Row& r : rows) {
    CHECK(cudaMemset(b.out, 0xFF, kOutputs * sizeof(__nv_bfloat16)));  // poisoned: NaN until written
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    r.call(b, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    for (int i = 0; i < 10; ++i) CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    char error[64] = "-";
    if (r.checked) {
      const double worst = worst_error(b, r.bf16_partials ? expect_bf16 : expect_f32);
      std::snprintf(error, sizeof error, "%.2e%s", worst, worst <= kWrongAbove ? "" : " WRONG");
      wrong += worst <= kWrongAbove ? 0 : 1;
    }
    const std::vector<float> us =
        probe::replay_times(exec, stream, reps, flush ? b.flush : nullptr, kFlushBytes / 16, b.sink, 8 * sms);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    std::printf("| %s | %.2f | %.2f | %.2f | %s |\n", r.name, us[reps / 2], us[reps / 10], us[(9 * reps) / 10], error);
  }
  CHECK(cudaGetLastError());
  if (wrong > 0) std::printf("\n%d variant(s) WRONG against the host merge\n", wrong);
  return wrong > 0 ? 1 : 0;
}
