// libFuzzer target: a private job spec as the worker reads it back before
// launching the command. The file is the user's own, but a spec that was
// edited, truncated or written by a different version must be refused as
// corrupt, never crash the worker.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "worker/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // The ledger's digest is the one the text claims, so that inputs whose
  // digest is right get past the last check, as a real spec does.
  std::string digest(64, '0');
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("digest") && j["digest"].is_string()) digest = j["digest"];
  static constexpr const char* kSpecId = "6f1c2e4a-9b3d-4c5e-8f70-1a2b3c4d5e6f";  // as in the seeds
  if (auto spec = bk::worker::ParseSpec(text, kSpecId, 1000, digest)) {
    (void)bk::worker::Summary(spec->argv);
    (void)bk::worker::ValidateCommand(spec->argv, "/", spec->path);
  }
  return 0;
}
