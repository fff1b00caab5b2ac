// mlacheck_ref_bench: times the reference's stages on generated cases.
//
//   mlacheck_ref_bench case B L SEED [STAGE...]   one harness case; stages: gen (always),
//                                                 quant, exact, all, or recipe names
//   mlacheck_ref_bench list FILE                  every case of a case list, all stages
//
// Prints one line per stage with its wall and CPU time and an FNV-1a checksum of every bit of its
// result (out, lse), so runs on two machines can be compared; /usr/bin/time -v gives the memory.
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "problem/recipe.h"
#include "ref/case_list.h"
#include "ref/decode_emulated.h"
#include "ref/decode_exact.h"
#include "ref/generate.h"
#include "ref/kernels.h"
#include "ref/kv_caches.h"

namespace {

using namespace mlacheck;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds of the whole process (all threads): on a shared machine this, not the wall time,
// shows the work a stage does.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Stopwatch {
  Clock::time_point wall = Clock::now();
  double cpu = cpu_seconds();
  std::string report() const {
    return fmt::format("{:7.3f} s wall {:7.3f} s cpu", seconds_since(wall), cpu_seconds() - cpu);
  }
};

// FNV-1a over every bit of a result, taken 64 bits at a time (the tail zero-padded): equal
// checksums on two machines mean equal bits. Computed outside the timed stages.
template <class T>
uint64_t checksum(const std::vector<T>& v) {
  uint64_t h = 0xcbf29ce484222325ull;
  const std::size_t bytes = v.size() * sizeof(T);
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < bytes; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, std::min<std::size_t>(8, bytes - i));
    h = (h ^ w) * 0x100000001b3ull;
  }
  return h;
}

void run_case(const ref::CaseSpec& spec, const std::vector<std::string>& stages) {
  const auto want = [&](const std::string& s) {
    for (const std::string& x : stages)
      if (x == s || x == "all") return true;
    return false;
  };
  Stopwatch sw;
  const ref::Inputs in = ref::generate(spec);
  std::string time = sw.report();
  fmt::print("{:<14} {:<11} {}  [{:016x} {:016x}] {:.0f} MB bf16 kv\n", spec.name, "gen", time,
             checksum(in.q), checksum(in.kv), static_cast<double>(in.kv.size()) * 2 / 1e6);
  ref::KvCaches caches(in.kv, in.batch.cache_rows());
  if (want("quant")) {
    sw = Stopwatch();
    caches.fp8(quant::Fp8Format::e4m3fn);
    caches.mxfp4(quant::E2M1Rounding::rne);
    fmt::print("{:<14} {:<11} {}\n", spec.name, "quant", sw.report());
  }
  if (want("exact")) {
    sw = Stopwatch();
    const ref::ExactResult r = ref::decode_exact(in.batch, in.q, in.kv);
    time = sw.report();
    fmt::print("{:<14} {:<11} {}  [{:016x} {:016x}]\n", spec.name, "exact", time, checksum(r.out),
               checksum(r.lse));
  }
  for (const problem::Recipe& recipe : problem::recipes()) {
    if (!want(std::string(recipe.name))) continue;
    const problem::KvCache cache = caches.for_recipe(recipe);
    sw = Stopwatch();
    const ref::EmulatedResult r =
        ref::decode_emulated(in.batch, in.q, cache, recipe, recipe.num_splits);
    time = sw.report();
    fmt::print("{:<14} {:<11} {}  [{:016x} {:016x}]\n", spec.name, recipe.name, time,
               checksum(r.out), checksum(r.lse));
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    fmt::print("kernels: {}\n", ref::to_string(ref::kernels().isa));
    const Stopwatch total;
    if (args.size() >= 4 && args[0] == "case") {
      ref::CaseSpec spec;
      spec.batch = std::stoi(args[1]);
      spec.kv_len = std::stoi(args[2]);
      spec.seed = std::stoull(args[3]);
      spec.name = ref::default_name(spec);
      run_case(spec, std::vector<std::string>(args.begin() + 4, args.end()));
    } else if (args.size() == 2 && args[0] == "list") {
      for (const ref::CaseSpec& spec : ref::read_case_list(args[1])) run_case(spec, {"all"});
    } else {
      std::fprintf(stderr, "usage: mlacheck_ref_bench case B L SEED [STAGE...] | list FILE\n");
      return 2;
    }
    fmt::print("{:<26} {}\n", "total", total.report());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlacheck_ref_bench: %s\n", e.what());
    return 2;
  }
}
