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

struct Context;

// What a running bk knows: the policy of the configuration it loaded and the
// ledger it opened (the daemon's when connected), with bk's own clock, so
// "active" means what `bk l` shows. Nothing when the configuration did not
// load; a private ledger that does not exist yet is never created. With a
// deadline, a ledger slower than that ends the process with nothing printed
// (`bk __complete`: a Tab must never hang a shell).
class ContextSource : public CompletionSource {
 public:
  explicit ContextSource(Context& ctx, int deadline_ms = 0) : ctx_(ctx), deadline_ms_(deadline_ms) {}
  int GpuCount() override;
  std::vector<std::string> OwnRefs() override;

 private:
  Context& ctx_;
  int deadline_ms_;
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
