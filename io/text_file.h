#pragma once
// Small text inputs (case lists, manifests, schedule tables) read whole, with the same refusals as
// the safetensors reader: only a regular file (a FIFO, a device such as /dev/zero or a directory is
// an error, never a blocked open or an endless read), and at most max_bytes of it.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace mlacheck::io {

// A case list of the full tier is ~20 KB and a manifest ~600 bytes a case: 8 MiB is thousands of
// cases, and small enough that a wrong path (a log, a tensor file) fails at once.
inline constexpr std::size_t kMaxTextInputBytes = 8u << 20;

// Throws Error naming the file and `what` ("case list", "manifest", ...).
std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                           std::size_t max_bytes = kMaxTextInputBytes);

}  // namespace mlacheck::io
