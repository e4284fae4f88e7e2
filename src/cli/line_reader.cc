#include "cli/line_reader.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

class Plain : public LineReader {
 public:
  Plain(std::istream& in, FILE* out) : in_(in), out_(out) {}

  std::optional<std::string> Read(const std::string& prompt) override {
    std::fputs(prompt.c_str(), out_);
    std::fflush(out_);
    std::string line;
    if (!std::getline(in_, line)) return std::nullopt;
    return line;
  }

 private:
  std::istream& in_;
  FILE* out_;
};

// libedit's completion callbacks carry no user data: the one editing
// reader's completer lives here while it exists, and the candidates of the
// Tab being answered beside it.
const Completer* completer = nullptr;
std::vector<std::string> candidates;

char* NextCompletion(const char*, int state) {
  static size_t next;
  if (state == 0) next = 0;
  return next < candidates.size() ? strdup(candidates[next++].c_str()) : nullptr;
}

char** Complete(const char* text, int start, int) {
  Completions c =
      completer ? (*completer)(std::string(rl_line_buffer, static_cast<size_t>(start)), text) : Completions{};
  // File names: libedit's own completion, as a shell would.
  rl_attempted_completion_over = c.files ? 0 : 1;
  if (c.files) return nullptr;
  candidates = std::move(c.words);
  return candidates.empty() ? nullptr : rl_completion_matches(text, NextCompletion);
}

class Editing : public LineReader {
 public:
  Editing(std::string path, Completer complete, Warning warn)
      : path_(std::move(path)), complete_(std::move(complete)), warn_(std::move(warn)) {
    completer = &complete_;
    rl_readline_name = "bk";
    rl_attempted_completion_function = Complete;
    rl_initialize();
    using_history();
    stifle_history(static_cast<int>(kHistoryLines));
    Load();
  }
  ~Editing() override { completer = nullptr; }

  std::optional<std::string> Read(const std::string& prompt) override {
    char* raw = readline(EscapedPrompt(prompt).c_str());
    if (!raw) return std::nullopt;
    std::string line = raw;
    std::free(raw);
    Remember(line);
    return line;
  }

 private:
  // Colour codes take no columns: libedit skips what lies between \1 marks
  // when it places the cursor.
  static std::string EscapedPrompt(const std::string& prompt) {
    std::string out;
    for (size_t i = 0; i < prompt.size(); ++i) {
      if (prompt[i] != '\033') {
        out += prompt[i];
        continue;
      }
      size_t end = prompt.find('m', i);
      if (end == std::string::npos) end = prompt.size() - 1;
      out += RL_PROMPT_START_IGNORE + prompt.substr(i, end + 1 - i) + RL_PROMPT_START_IGNORE;
      i = end;
    }
    return out;
  }

  void Load() {
    if (path_.empty() || !sys::Exists(path_)) return;
    auto text = sys::ReadSmallFile(path_, 1 << 20);
    if (!text) return Disable(text.error().message);
    for (const auto& line : Split(*text, '\n'))
      if (!line.empty()) Append(line);
  }

  void Remember(const std::string& line) {
    if (Trim(line).empty() || (!lines_.empty() && lines_.back() == line)) return;
    Append(line);
    if (path_.empty()) return;
    std::string text;
    for (const auto& l : lines_) text += l + "\n";
    Status s = sys::EnsurePrivateDir(sys::Dirname(path_), 0700, getuid());
    if (s) s = sys::WriteFileAtomic(path_, text, 0600);
    if (!s) Disable(s.error().message);
  }

  void Append(const std::string& line) {
    add_history(line.c_str());
    lines_.push_back(line);
    if (lines_.size() > kHistoryLines) lines_.pop_front();
  }

  // The history stays in memory: a file that is a symlink, someone else's or
  // unwritable is left alone.
  void Disable(const std::string& why) {
    warn_("history is not saved: " + why);
    path_.clear();
  }

  std::string path_;
  Completer complete_;
  Warning warn_;
  std::deque<std::string> lines_;
};

}  // namespace

std::unique_ptr<LineReader> PlainLineReader(std::istream& in, FILE* out) {
  return std::make_unique<Plain>(in, out);
}

std::unique_ptr<LineReader> EditingLineReader(const std::string& history_path, Completer complete,
                                              Warning warn) {
  return std::make_unique<Editing>(history_path, std::move(complete), std::move(warn));
}

std::string HistoryPath(const config::EnvFn& env) {
  auto xdg = env("XDG_STATE_HOME");
  std::string base = (xdg && xdg->starts_with("/")) ? *xdg : sys::HomeDir() + "/.local/state";
  return base + "/bk/history";
}

}  // namespace bk::cli
