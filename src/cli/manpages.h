#pragma once
// bk's manual pages in roff, made at build time (`bk __generate DIR`) from
// the same sources the program runs on: `bk -h`'s sections, the command
// tree and each command's ArgSpec, the configuration key table and the
// protocol's method table. A new option, key or method is in the manual
// the next time it is built.

#include <string>
#include <string_view>
#include <vector>

namespace bk::cli {

struct ManPage {
  std::string file;  // "bk.1", "gpubk-config.5", ...
  std::string text;  // roff (man macros)
};

// `date` heads each page (YYYY-MM-DD; the build passes the source's date so
// that two builds of one source give the same pages).
std::vector<ManPage> ManPages(std::string_view date);

}  // namespace bk::cli
