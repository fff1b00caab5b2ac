#include "ref/random.h"

#include <cmath>
#include <cstddef>

#include "ref/box_muller.h"
#include "ref/kernels.h"

namespace mlacheck::ref {

double random_unit(uint64_t seed, uint32_t stream, uint64_t index) {
  const auto b = philox_block(seed, stream, index);
  const uint64_t a = (static_cast<uint64_t>(b[1]) << 32) | b[0];
  return detmath::detail::u64_to_double<double>(a >> 12) * (1.0 / 4503599627370496.0);
}

std::pair<double, double> normal_pair(uint64_t seed, uint32_t stream, uint64_t pair) {
  const auto b = philox_block(seed, stream, pair);
  double z0, z1;
  box_muller<double, uint64_t>(b[0], b[1], b[2], b[3], [](double x) { return std::sqrt(x); }, z0,
                               z1);
  return {z0, z1};
}

double normal_at(uint64_t seed, uint32_t stream, uint64_t i) {
  const auto [z0, z1] = normal_pair(seed, stream, i / 2);
  return (i % 2 == 0) ? z0 : z1;
}

void fill_normals(uint64_t seed, uint32_t stream, uint64_t first, std::span<double> out) {
  const Kernels& k = kernels();
  std::size_t j = 0;
  uint64_t i = first;
  const uint64_t end = first + out.size();
  if (i % 2 == 1 && i < end) out[j++] = normal_at(seed, stream, i++);  // odd start: second half
  for (; end - i >= 16; i += 16, j += 16) k.normals_x8(seed, stream, i / 2, &out[j]);
  for (; i < end; ++i) out[j++] = normal_at(seed, stream, i);
}

}  // namespace mlacheck::ref
