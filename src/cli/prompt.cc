// Plain `bk` at a terminal: status, then a `bk> ` prompt that runs one command
// per line until quit, exit, q, EOF or Ctrl-C (the original's interactive mode).

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/completion.h"
#include "cli/context.h"
#include "cli/line_reader.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

constexpr const char* kPromptHelp = R"(Commands (the same as `bk COMMAND ...`):
  1 30m [--gpu 1]            book (shared)     x 1 2h        book exclusively
  st | r                     status            l             your reservations
  tl [8h]                    timeline          slots 2 1h    earliest options
  e N --duration 2h          edit              renew N 30m   extend
  d N | cancel N             cancel            history N     one reservation
  g [COUNT]                  your GPU now      n             notifications
  help                       this list         quit          leave (also Ctrl-D)
At a terminal: Up and Down recall earlier lines, Tab completes commands, options and IDs.
)";

// Splits like a POSIX shell would for plain words: spaces separate, '...' and
// "..." quote, backslash escapes. Returns false on an unclosed quote.
bool SplitWords(const std::string& line, std::vector<std::string>* out) {
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < line.size())
        word += line[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) out->push_back(word), word.clear(), in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return false;
  if (in_word) out->push_back(word);
  return true;
}

// libedit at a terminal; a script piped in is read as it is. Tab completes
// as the shells' completion does, plus the prompt's own words.
std::unique_ptr<LineReader> Reader(Context& ctx) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return PlainLineReader(std::cin, ctx.out);
  // The words before the cursor's are split as the prompt will split them.
  auto complete = [&ctx](const std::string& before, const std::string& word) -> Completions {
    std::vector<std::string> words;
    if (!SplitWords(before, &words)) return {};  // inside a quote
    words.push_back(word);
    ContextSource source(ctx);
    Completions c = Complete(words, source);
    if (words.size() == 1)
      for (const char* w : {"help", "quit", "exit", "refresh"})
        if (std::string_view(w).starts_with(words[0])) c.words.emplace_back(w);
    return c;
  };
  return EditingLineReader(HistoryPath(config::ProcessEnv()), complete,
                           [&ctx](const std::string& text) { ctx.Warn(text); });
}

}  // namespace

int RunPrompt(Context& ctx) {
  std::fputs("Type a command such as `1 30m` or `l`; `help` lists them, `quit` leaves.\n", ctx.out);
  std::unique_ptr<LineReader> reader = Reader(ctx);
  const std::string prompt = surface::Paint("bk>", surface::Style::kPrompt, ctx.color.out) + " ";
  const std::string error = surface::Paint("bk:", surface::Style::kError, ctx.color.out) + " ";
  while (true) {
    std::optional<std::string> line = reader->Read(prompt);
    if (!line) {
      std::fputc('\n', ctx.out);
      return 0;
    }
    std::vector<std::string> words;
    if (!SplitWords(*line, &words)) {
      std::fprintf(ctx.out, "%sno closing quotation\n", error.c_str());
      continue;
    }
    if (words.empty()) continue;
    const std::string& w = words[0];
    if (w == "quit" || w == "exit" || w == "q") return 0;
    if (w == "help" || w == "h" || w == "?") {
      std::fputs(kPromptHelp, ctx.out);
      continue;
    }
    if (w == "r" || w == "refresh") words = {"st"};
    // Each command sees the ledger and GPUs as they are now.
    ctx.ledger.reset();
    Result<int> rc = Dispatch(ctx, words);
    std::fflush(stdout);
    if (!rc) std::fprintf(ctx.out, "%s%s\n", error.c_str(), rc.error().message.c_str());
  }
}

}  // namespace bk::cli
