#pragma once
// Small string helpers shared by every layer.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

std::string_view Trim(std::string_view s);
std::string ToLower(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
std::vector<std::string> Split(std::string_view s, char sep);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string JoinInts(const std::vector<int>& values, std::string_view sep = ",");
// Parses a non-negative decimal integer with no sign, spaces or other characters.
std::optional<int64_t> ParseUint(std::string_view s);
// True when every byte is an ASCII digit and there is at least one.
bool AllDigits(std::string_view s);
// Replaces control and non-printable bytes so a value is safe on one terminal line.
std::string Printable(std::string_view s);
// A value single-quoted for a POSIX shell (bash, zsh, dash, the remote side of
// ssh): one word whatever it holds.
std::string ShellQuote(std::string_view value);

}  // namespace bk
