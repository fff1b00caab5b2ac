#pragma once
// Error maps as PNG heatmaps (DESIGN.md: check/ writes the reports, PNG among them): a rows x cols
// matrix of ratios error / tolerance, one cell a block of pixels. Colour: black at 0 through blue
// and green to yellow at 1 (at the bound), red beyond it, so a cell past its bound is seen at once.
// Written with stb_image_write (Debian libstb-dev).
#include <cstdint>
#include <span>
#include <vector>

namespace mlacheck::check {

// values: rows x cols, row-major; NaN cells are grey. Returns the PNG file's bytes (the caller
// writes them with io::write_file_atomically). The image is at most kMaxHeatmapPixels on its
// longer side. Throws std::invalid_argument on a size mismatch.
std::vector<unsigned char> heatmap_png(std::span<const double> values, int64_t rows, int64_t cols);
inline constexpr int64_t kMaxHeatmapPixels = 2048;

}  // namespace mlacheck::check
