#pragma once
// For tests: a fresh directory under /tmp that lives as long as the fixture
// holding it and is removed with all it holds. Declared as a fixture's first
// data member (or held by TempDirTest, a base class), it outlives every
// service or store opened inside it.

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

// A fixture whose tests work in one fresh directory: root() is that directory
// and Path("name") a name inside it. Being a base class, the directory exists
// before the derived fixture's members are built, so they may be initialised
// from Path() directly.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string_view prefix = "bk-test") : tmp_(prefix) {}

  const std::string& root() const { return tmp_.path(); }
  std::string Path(std::string_view name) const { return root() + "/" + std::string(name); }

 private:
  TempDir tmp_;
};

}  // namespace bk
