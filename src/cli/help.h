#pragma once
#include <string>

namespace bk::cli {
// `cluster`: show the SEVERAL HOSTS section (a catalog of hosts exists).
std::string MainHelp(bool cluster);
}  // namespace bk::cli
