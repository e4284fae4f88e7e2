// libFuzzer target: the cluster catalog (/etc/gpubk/cluster.json). What
// parses must pass Check, render, and parse back to the same catalog.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cluster/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bk::cluster;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = ParseCatalog(text, "cluster.json");
  if (!c) return 0;
  if (!Check(*c)) abort();
  auto again = ParseCatalog(Render(*c), "cluster.json");
  if (!again || *again != *c) abort();
  return 0;
}
