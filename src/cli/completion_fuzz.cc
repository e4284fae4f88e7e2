// libFuzzer: whatever words a shell sends on Tab (`bk __complete WORD...`),
// one per line of the input. Completion must answer without crashing, and
// every word it offers must start with the word being completed; the
// commands it asks for their options (through --help) must write nothing.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/completion.h"

namespace {

class Source : public bk::cli::CompletionSource {
 public:
  int GpuCount() override { return 8; }
  std::vector<std::string> OwnRefs() override { return {"1a2b3c4d", "9f8e7d6c"}; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < size && words.size() <= 12; ++i) {
    if (data[i] == '\n')
      words.emplace_back();
    else
      words.back() += static_cast<char>(data[i]);
  }
  Source source;
  bk::cli::Completions c = bk::cli::Complete(words, source);
  if (c.files && !c.words.empty()) abort();
  for (const auto& w : c.words)
    if (!w.starts_with(words.back())) abort();
  return 0;
}
