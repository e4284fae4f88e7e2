// libFuzzer target: configuration documents. Even first bytes: a private
// ledger's config.json (its text applied over the defaults). Odd first bytes:
// a server's config.json through LoadServer, from a temporary file, as
// `bk server serve --config` and every client read it.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace {

using namespace bk;

// A private scratch file that holds the current input for LoadServer.
const std::string& ScratchFile() {
  static const std::string* path = [] {
    char tmpl[] = "/tmp/bk-config-fuzz-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) abort();
    close(fd);
    auto* p = new std::string(tmpl);
    atexit([] { unlink(ScratchFile().c_str()); });
    return p;
  }();
  return *path;
}

void WriteScratch(std::string_view text) {
  int fd = open(ScratchFile().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) abort();
  for (size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) abort();
    done += static_cast<size_t>(n);
  }
  close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    config::Config c;
    c.policy.gpu_count = 4;
    if (config::ApplyConfigText(text, "/tmp/config.json", c)) {
      (void)c.policy.EnabledGpus();
      (void)config::BoundPolicyJson(c.policy);
    }
    return 0;
  }
  WriteScratch(text);
  // No GPU detection: a simulation file that does not exist counts as one GPU.
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "BK_GPU_SIM_FILE") return "/nonexistent/bk-fuzz-sim.json";
    return std::nullopt;
  };
  if (auto c = config::LoadServer(ScratchFile(), env, /*trusted=*/false))
    (void)config::BoundPolicyJson(c->policy);
  return 0;
}
