#pragma once
#include <string>

namespace bk::cli {
std::string MainHelp();
}
