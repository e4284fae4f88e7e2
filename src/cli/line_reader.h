#pragma once
// Where the `bk> ` prompt reads its lines: with line editing, history and
// command completion at a terminal, plainly from a pipe or a file (scripts
// see no escape sequences and no history file is touched).

#include <cstdio>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/completion.h"
#include "config/config.h"

namespace bk::cli {

class LineReader {
 public:
  virtual ~LineReader() = default;
  // Shows `prompt` and returns the next line without its newline; nothing at
  // the end of input. `prompt` may hold colour codes.
  virtual std::optional<std::string> Read(const std::string& prompt) = 0;
};

// Lines from `in`, the prompt printed on `out`.
std::unique_ptr<LineReader> PlainLineReader(std::istream& in, FILE* out);

// libedit on the terminal: Emacs-style editing, Up/Down through the last
// kHistoryLines lines (kept in `history_path` when not empty), Tab asking
// `complete` for the words that fit: it gets the line before the word at the
// cursor and that word (file names when it says so). A problem with the history
// file is passed to `warn` once; the prompt goes on without the file.
using Warning = std::function<void(const std::string&)>;
using Completer = std::function<Completions(const std::string& before, const std::string& word)>;
std::unique_ptr<LineReader> EditingLineReader(const std::string& history_path, Completer complete,
                                              Warning warn);

inline constexpr size_t kHistoryLines = 1000;

// $XDG_STATE_HOME/bk/history, else ~/.local/state/bk/history.
std::string HistoryPath(const config::EnvFn& env);

}  // namespace bk::cli
