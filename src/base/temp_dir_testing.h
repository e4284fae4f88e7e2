#pragma once
// For tests: a fresh directory under /tmp that lives as long as the fixture
// holding it and is removed with all it holds. Declared as a fixture's first
// data member, it outlives every service or store opened inside it.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace bk {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix) {
    std::string tmpl = "/tmp/" + std::string(prefix) + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
      ADD_FAILURE() << "cannot create a temporary directory " << tmpl;
    else
      path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace bk
