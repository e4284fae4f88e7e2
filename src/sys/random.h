#pragma once
// Random identifiers from the kernel (getrandom).

#include <string>

namespace bk::sys {

// Lowercase RFC 4122 version 4 UUID.
std::string NewUuid();

}  // namespace bk::sys
