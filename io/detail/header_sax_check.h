#pragma once
// A first, streaming pass over the header JSON that the DOM parser cannot do for us: it rejects
// duplicate keys (nlohmann keeps the last one silently) and nesting deeper than a valid header
// has (which also keeps a hostile header from building a deep DOM). Syntax errors surface here.
#include <string>
#include <string_view>

namespace mlacheck::io::detail {

// Empty when the text passes; else a message without the file prefix.
std::string check_header_json(std::string_view json_text);

}  // namespace mlacheck::io::detail
