#include "check/heatmap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/core.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace mlacheck::check {
namespace {

using Rgb = std::array<uint8_t, 3>;

// Within the bound: a black-blue-green-yellow ramp over [0, 1]; beyond it: red, brighter with the
// ratio up to 10x the bound.
Rgb colour(double ratio) {
  if (std::isnan(ratio)) return {128, 128, 128};
  if (ratio > 1) {
    const double t = std::min(1.0, std::log10(ratio));  // 1x .. 10x
    return {static_cast<uint8_t>(180 + 75 * t), static_cast<uint8_t>(40 * (1 - t)), 0};
  }
  const double t = std::max(0.0, ratio);
  constexpr std::array<Rgb, 4> stops{{{0, 0, 0}, {20, 60, 200}, {20, 170, 80}, {250, 230, 40}}};
  const double x = t * (stops.size() - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(x), stops.size() - 2);
  const double f = x - static_cast<double>(i);
  Rgb c{};
  for (int k = 0; k < 3; ++k)
    c[k] = static_cast<uint8_t>(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
  return c;
}

}  // namespace

std::vector<unsigned char> heatmap_png(std::span<const double> values, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0 || values.size() != static_cast<std::size_t>(rows * cols))
    throw std::invalid_argument(fmt::format("heatmap: {} values for {} x {}", values.size(), rows, cols));
  // Cells at least 1 pixel, at most 32, the image at most kMaxHeatmapPixels: large matrices are
  // downsampled by taking each pixel's largest ratio, so a bad cell never disappears.
  const int64_t cell = std::clamp<int64_t>(kMaxHeatmapPixels / std::max(rows, cols), 1, 32);
  const int64_t w = std::min(cols * cell, kMaxHeatmapPixels), h = std::min(rows * cell, kMaxHeatmapPixels);
  std::vector<uint8_t> pixels(static_cast<std::size_t>(w * h * 3));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t r0 = y * rows / h, r1 = std::max(r0 + 1, (y + 1) * rows / h);
      const int64_t c0 = x * cols / w, c1 = std::max(c0 + 1, (x + 1) * cols / w);
      double worst = std::nan("");
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) {
          const double v = values[static_cast<std::size_t>(r * cols + c)];
          if (!std::isnan(v) && (std::isnan(worst) || v > worst)) worst = v;
        }
      const Rgb px = colour(worst);
      std::copy(px.begin(), px.end(), pixels.begin() + (y * w + x) * 3);
    }
  std::vector<unsigned char> png;
  const auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<unsigned char>*>(context);
    const auto* bytes = static_cast<const unsigned char*>(data);
    out->insert(out->end(), bytes, bytes + size);
  };
  if (stbi_write_png_to_func(append, &png, static_cast<int>(w), static_cast<int>(h), 3,
                             pixels.data(), static_cast<int>(w * 3)) == 0)
    throw std::runtime_error("heatmap: the PNG encoder failed");
  return png;
}

}  // namespace mlacheck::check
