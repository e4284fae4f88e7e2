#pragma once
// Tab completion. The scripts that `bk completion bash|zsh|fish` prints are
// thin: on Tab they run `bk __complete WORD...` and offer what it prints. All
// the knowledge is here, read from the command tree and from each command's
// own ArgSpec, so completion offers exactly what the parser accepts.

#include <string>
#include <string_view>
#include <vector>

namespace bk::cli {

// What completion needs beyond the command line: the policy's GPU count and
// the caller's own bookings. Production reads the configuration and asks the
// ledger (through the daemon when connected); tests give fixed answers.
class CompletionSource {
 public:
  virtual ~CompletionSource() = default;
  virtual int GpuCount() = 0;
  // Short IDs of the caller's active and upcoming reservations; empty when
  // the ledger cannot be reached.
  virtual std::vector<std::string> OwnRefs() = 0;
};

struct Completions {
  std::vector<std::string> words;  // candidates that start with the word being completed
  bool files = false;              // the word is a path: let the shell complete file names
};

// `words` are the words after `bk` up to the cursor; the last one is the
// word being completed (empty after a space).
Completions Complete(const std::vector<std::string>& words, CompletionSource& source);

// The script for `shell` (bash, zsh or fish); empty for any other name.
std::string CompletionScript(std::string_view shell);

}  // namespace bk::cli
