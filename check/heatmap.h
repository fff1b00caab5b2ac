#pragma once
// Error maps as PNG heatmaps (DESIGN.md: check/ writes the reports, PNG among them): a rows x cols
// matrix of ratios error / tolerance, one cell a block of pixels. Colour: black at 0 through blue
// and green to yellow at 1 (at the bound), red beyond it, so a cell past its bound is seen at once.
// Written with stb_image_write (Debian libstb-dev).
#include <cstdint>
#include <filesystem>
#include <span>

namespace mlacheck::check {

// values: rows x cols, row-major; NaN cells are grey. Throws std::runtime_error naming the file
// when it cannot be written. The image is at most kMaxHeatmapPixels on its longer side.
void write_heatmap_png(const std::filesystem::path& path, std::span<const double> values,
                       int64_t rows, int64_t cols);
inline constexpr int64_t kMaxHeatmapPixels = 2048;

}  // namespace mlacheck::check
