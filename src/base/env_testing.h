#pragma once
// For tests that change a process environment variable: SavedEnv remembers its
// value (or that it was unset) and puts it back when destroyed or restored.

#include <stdlib.h>

#include <optional>
#include <string>

namespace bk {

class SavedEnv {
 public:
  explicit SavedEnv(std::string name) : name_(std::move(name)) {
    if (const char* value = ::getenv(name_.c_str())) saved_ = value;
  }
  ~SavedEnv() { Restore(); }
  SavedEnv(const SavedEnv&) = delete;
  SavedEnv& operator=(const SavedEnv&) = delete;

  void Restore() const {
    if (saved_)
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace bk
