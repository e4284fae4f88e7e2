#pragma once
// Random identifiers from the kernel (getrandom).

#include <string>

namespace bk::sys {

// Lowercase RFC 4122 version 4 UUID.
std::string NewUuid();
// Whether `s` has the form NewUuid writes: 8-4-4-4-12 lowercase hex digits
// (any version).
bool IsLowercaseUuid(const std::string& s);

}  // namespace bk::sys
