#include "io/text_file.h"

#include <fmt/format.h>

#include "io/detail/posix_file.h"
#include "io/error.h"

namespace mlacheck::io {

std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                           std::size_t max_bytes) {
  try {
    const detail::ReadOnlyFile file(path);  // refuses non-regular files without blocking
    if (file.size() > max_bytes)
      throw Error(fmt::format("{}: {} bytes, more than the {} bytes a {} may have", path.string(),
                              file.size(), max_bytes, what));
    std::string text(static_cast<std::size_t>(file.size()), '\0');
    file.read_exact(0, std::as_writable_bytes(std::span(text)), std::string(what));
    return text;
  } catch (const Error& e) {
    throw Error(fmt::format("{} {}", what, e.what()));
  }
}

}  // namespace mlacheck::io
