#pragma once
// The words of bk's command line, as a tree: every command with its aliases,
// its place in `bk -h`, one line of what it does, and the subcommand words of
// the commands that dispatch on one before any option parsing. Options are
// not here: each command declares them in its ArgSpec, and Describe() reads
// them from there by asking the command for --help. Shell completion and the
// man pages are both made from this, and a test holds it to the dispatch
// table (every command word of `bk` is here, and nothing else).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"

namespace bk::cli {

struct CommandNode {
  std::string name;                  // the canonical word
  std::vector<std::string> aliases;  // other words for the same command
  std::string group;                 // top level: its section of `bk -h`
  std::string summary;               // one line
  std::vector<CommandNode> subcommands;
  // Where the command reads its first words itself instead of through an
  // ArgSpec (`bk server init ...`): the usage line the man pages show.
  std::string usage;

  bool Named(std::string_view word) const;
};

// Top-level commands in the order of `bk -h`'s sections.
const std::vector<CommandNode>& CommandTree();
// The section titles of `bk -h` in order (BOOK, VIEW, ...).
const std::vector<std::string>& CommandGroups();

// The node `words` name, following aliases; null when a word is not a
// subcommand there. `consumed` tells how many words named commands.
const CommandNode* FindCommand(const std::vector<std::string>& words, size_t* consumed = nullptr);

// Every ArgSpec that `bk WORDS --help` parses on the way (usually one).
// Nothing is run beyond the parse: --help stops each command there. The
// commands write their help to /dev/null meanwhile.
std::vector<SpecInfo> Describe(const std::vector<std::string>& words);

}  // namespace bk::cli
