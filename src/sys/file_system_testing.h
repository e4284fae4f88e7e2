#pragma once
// For tests: a FileSystem that forwards every call to another (the real one
// by default), so that a fake overrides only the steps it fails or records,
// as LevelDB's EnvWrapper does for Env.

#include "sys/file_system.h"

namespace bk::sys {

class ForwardingFileSystem : public FileSystem {
 public:
  explicit ForwardingFileSystem(FileSystem& target = RealFileSystem()) : target_(target) {}

  ErrnoResult<FileInfo> Lstat(const std::string& path) override { return target_.Lstat(path); }
  ErrnoResult<FileInfo> Stat(const std::string& path) override { return target_.Stat(path); }
  ErrnoResult<void> MakeDir(const std::string& path, mode_t mode) override {
    return target_.MakeDir(path, mode);
  }
  ErrnoResult<void> WriteNewFile(const std::string& path, std::string_view content, mode_t mode) override {
    return target_.WriteNewFile(path, content, mode);
  }
  ErrnoResult<void> Rename(const std::string& from, const std::string& to) override {
    return target_.Rename(from, to);
  }
  ErrnoResult<void> SetMode(const std::string& path, mode_t mode) override {
    return target_.SetMode(path, mode);
  }
  ErrnoResult<void> SetGroup(const std::string& path, gid_t gid) override {
    return target_.SetGroup(path, gid);
  }
  ErrnoResult<void> Access(const std::string& path, int how) override { return target_.Access(path, how); }
  ErrnoResult<std::vector<std::string>> ReadDir(const std::string& path) override {
    return target_.ReadDir(path);
  }
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return target_.ReadFile(path, max_bytes);
  }
  ErrnoResult<void> Sync(const std::string& path) override { return target_.Sync(path); }
  ErrnoResult<void> RemoveTree(const std::string& path) override { return target_.RemoveTree(path); }

 private:
  FileSystem& target_;
};

}  // namespace bk::sys
