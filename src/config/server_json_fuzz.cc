// libFuzzer target: the user's server.json ($XDG_CONFIG_HOME/gpubk/server.json,
// written by `bk server connect`), which names the server config every command
// then loads.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)bk::config::ParseConnection(text, "/home/u/.config/gpubk/server.json");
  return 0;
}
