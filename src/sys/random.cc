#include "sys/random.h"

// <sys/random.h> would resolve to this project's sys/random.h (src/ is on the
// include path), so getrandom(2) is called through syscall(2).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace bk::sys {

namespace {

// Fills `buf` from the kernel's CSPRNG; falls back to /dev/urandom when
// getrandom(2) is missing. Aborts when neither works: a predictable ID is worse
// than no ID.
void KernelRandom(unsigned char* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    long n = syscall(SYS_getrandom, buf + done, size - done, 0u);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  if (done == size) return;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  while (fd >= 0 && done < size) {
    ssize_t n = read(fd, buf + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (!(n < 0 && errno == EINTR)) {
      break;
    }
  }
  if (fd >= 0) close(fd);
  if (done != size) {
    std::fputs("bk: no kernel randomness available (getrandom and /dev/urandom failed)\n", stderr);
    std::abort();
  }
}

}  // namespace

std::string NewUuid() {
  unsigned char b[16];
  KernelRandom(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0x0f];
  }
  return out;
}

bool IsLowercaseUuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace bk::sys
