#include "sys/node.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/strings.h"
#include "sys/sha256.h"

namespace bk::sys {

namespace {

constexpr size_t kMachineIdChars = 256;
constexpr size_t kMaxHostname = 255;

// The first 256 bytes of a machine-id file, trimmed; "" when unreadable.
std::string ReadMachineId(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  std::string buf(kMachineIdChars, '\0');
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  buf.resize(got);
  return std::string(Trim(buf));
}

std::string RawHostname() {
  char buf[1024] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

std::string SanitizeHostname(std::string_view raw) {
  std::string out;
  bool in_multibyte = false;
  for (unsigned char c : raw) {
    if (c >= 0x20 && c <= 0x7e) {
      out += static_cast<char>(c);
      in_multibyte = false;
    } else if ((c & 0xc0) == 0x80 && in_multibyte) {
      // UTF-8 continuation byte: the whole character already became one '?'.
    } else {
      out += '?';
      in_multibyte = c >= 0xc0;
    }
  }
  std::string trimmed(Trim(out));
  if (trimmed.size() > kMaxHostname) trimmed = std::string(Trim(trimmed.substr(0, kMaxHostname)));
  return trimmed.empty() ? "unknown" : trimmed;
}

NodeIdentity ComputeNodeIdentity(const std::string& machine_id, std::string_view raw_hostname) {
  NodeIdentity node;
  node.hostname = SanitizeHostname(raw_hostname);
  std::string seed = machine_id.empty() ? "hostname:" + node.hostname : "machine:" + machine_id;
  node.id = Sha256Hex(seed).substr(0, 20);
  return node;
}

NodeIdentity ReadNodeIdentity(const std::vector<std::string>& machine_id_paths,
                              std::string_view raw_hostname) {
  std::string machine_id;
  for (const std::string& path : machine_id_paths) {
    machine_id = ReadMachineId(path);
    if (!machine_id.empty()) break;
  }
  return ComputeNodeIdentity(machine_id, raw_hostname);
}

const NodeIdentity& LocalNode() {
  static const NodeIdentity node =
      ReadNodeIdentity({"/etc/machine-id", "/var/lib/dbus/machine-id"}, RawHostname());
  return node;
}

}  // namespace bk::sys
