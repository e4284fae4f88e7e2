#pragma once
// `bk login install`: one marked block in a user's shell rc file that runs
// `bk login --hook` in interactive shells. The block is found, replaced and
// removed by its marker lines alone; every other line of the file is kept
// byte for byte.

#include <string>
#include <string_view>

namespace bk::shell {

inline constexpr std::string_view kRcBegin = "# >>> gpubk: bk login >>>";
inline constexpr std::string_view kRcEnd = "# <<< gpubk: bk login <<<";

// The lines a login runs for this bk (`bk_path` absolute): `bk login --hook`
// in interactive shells only, bounded (1 s) and silent on any failure. The
// system-wide hook and the rc block both hold them.
std::string LoginHookLines(const std::string& bk_path);

// The block for this bk (`bk_path` absolute), from kRcBegin to kRcEnd, each line
// ending in a newline, around LoginHookLines.
std::string RcBlock(const std::string& bk_path);
// Whether `text` holds a block (its begin marker line).
bool HasRcBlock(std::string_view text);
// `text` with `block` in place of the one there, else appended (after a
// newline when the text does not end in one).
std::string WithRcBlock(std::string_view text, const std::string& block);
// `text` without its block: the marker lines and everything between them.
// An unterminated block (no end marker) loses only its begin line.
std::string WithoutRcBlock(std::string_view text);
// The rc file an interactive `shell` ($SHELL) reads: ~/.zshrc for zsh, else ~/.bashrc.
std::string DefaultRcFile(const std::string& shell, const std::string& home);

}  // namespace bk::shell
