#include "client/server_discovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace bk::client {
namespace {

// A process's argv from /proc/PID/cmdline; empty when it cannot be read. The
// process may exit while it is read (ESRCH): read(2), not a stream, whose
// buffer throws on a read error.
std::vector<std::string> Argv(const std::string& cmdline_path) {
  std::string all;
  int fd = open(cmdline_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0 && all.size() < (1 << 20);)
      all.append(buf, static_cast<size_t>(n));
    close(fd);
  }
  std::vector<std::string> argv;
  size_t from = 0;
  for (size_t nul; (nul = all.find('\0', from)) != std::string::npos; from = nul + 1)
    argv.push_back(all.substr(from, nul - from));
  return argv;
}

// The --config of a `bk server serve` command line, made absolute against
// the process's working directory; empty for any other process.
std::string ServeConfig(const std::vector<std::string>& argv, const std::string& cwd) {
  auto serve = std::ranges::find(argv, "serve");
  if (argv.empty() || serve == argv.end() || serve == argv.begin() || *(serve - 1) != "server") return {};
  std::string config;
  for (auto it = serve + 1; it != argv.end(); ++it) {
    if (*it == "--config" && it + 1 != argv.end()) config = *(it + 1);
    if (it->starts_with("--config=")) config = it->substr(9);
  }
  if (config.empty() || config.front() == '/' || cwd.empty()) return config;
  return cwd + "/" + config;
}

std::string LinkTarget(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::vector<std::string> RunningServerConfigs(const std::string& proc_root) {
  std::vector<std::pair<long, std::string>> found;
  DIR* d = opendir(proc_root.c_str());
  if (d == nullptr) return {};
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string dir = proc_root + "/" + e->d_name;
    std::string config = ServeConfig(Argv(dir + "/cmdline"), LinkTarget(dir + "/cwd"));
    if (!config.empty()) found.emplace_back(pid, config);
  }
  closedir(d);
  std::ranges::sort(found);
  std::vector<std::string> out;
  for (auto& [pid, config] : found)
    if (std::ranges::find(out, config) == out.end()) out.push_back(config);
  return out;
}

std::string PrivateLedgerHint(const std::string& data_dir, const std::vector<std::string>& servers) {
  if (servers.empty())
    return fmt::format(
        " (looked in your private ledger {}; for a server's bookings, run "
        "`bk server connect DIR/config.json` first)",
        data_dir);
  return fmt::format(
      " (looked in your private ledger {}; a server runs here: `bk server connect {}`, then retry)", data_dir,
      servers.front());
}

}  // namespace bk::client
