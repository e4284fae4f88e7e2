#pragma once

#include <string>
#include <string_view>

namespace bk::sys {

// Lowercase hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view data);

}  // namespace bk::sys
