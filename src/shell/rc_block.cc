#include "shell/rc_block.h"

#include <fmt/format.h>

#include "shell/init_script.h"

namespace bk::shell {
namespace {

constexpr size_t kNone = std::string_view::npos;

// The offset of the line equal to `marker` at or after `from`, else kNone.
size_t FindLine(std::string_view text, std::string_view marker, size_t from) {
  for (size_t at = from; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (text.substr(at, (nl == kNone ? text.size() : nl) - at) == marker) return at;
    if (nl == kNone) break;
    at = nl + 1;
  }
  return kNone;
}

// Past the end of the line starting at `at`, its newline included.
size_t LineEnd(std::string_view text, size_t at) {
  size_t nl = text.find('\n', at);
  return nl == kNone ? text.size() : nl + 1;
}

// The block's bytes [first, second) in `text`; kNone when there is none.
std::pair<size_t, size_t> Find(std::string_view text) {
  size_t begin = FindLine(text, kRcBegin, 0);
  if (begin == kNone) return {kNone, kNone};
  size_t end = FindLine(text, kRcEnd, begin);
  return {begin, LineEnd(text, end == kNone ? begin : end)};
}

}  // namespace

std::string LoginHookLines(const std::string& bk_path) {
  return fmt::format(
      "case $- in\n"
      "  *i*) timeout -k 0.2s 1s {} login --hook 2>/dev/null || : ;;\n"
      "esac\n",
      ShellQuote(bk_path));
}

std::string RcBlock(const std::string& bk_path) {
  return fmt::format(
      "{}\n"
      "# Added by `bk login install` (`bk login uninstall` removes it): your bookings and notices\n"
      "# when an interactive shell starts.\n"
      "{}{}\n",
      kRcBegin, LoginHookLines(bk_path), kRcEnd);
}

bool HasRcBlock(std::string_view text) { return Find(text).first != kNone; }

std::string WithRcBlock(std::string_view text, const std::string& block) {
  auto [begin, end] = Find(text);
  if (begin != kNone) return std::string(text.substr(0, begin)) + block + std::string(text.substr(end));
  std::string out(text);
  if (!out.empty() && !out.ends_with('\n')) out += '\n';
  return out + block;
}

std::string WithoutRcBlock(std::string_view text) {
  auto [begin, end] = Find(text);
  if (begin == kNone) return std::string(text);
  return std::string(text.substr(0, begin)) + std::string(text.substr(end));
}

std::string DefaultRcFile(const std::string& shell, const std::string& home) {
  std::string_view name(shell);
  name = name.substr(name.rfind('/') == kNone ? 0 : name.rfind('/') + 1);
  return home + (name == "zsh" ? "/.zshrc" : "/.bashrc");
}

}  // namespace bk::shell
