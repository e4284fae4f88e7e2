#pragma once
// The descriptor a client passed on its connection (SCM_RIGHTS). A
// connection holds at most one, for the request line whose bytes it came
// with; one that arrives while another is held, or several at once, is
// closed at once, and so is one whose line turns out not to want it.

#include <cstddef>
#include <vector>

#include "sys/unique_fd.h"

namespace bk::server {

class PassedFile {
 public:
  // `fds` came with the bytes appended at offset `at` of the connection's input.
  void Arrived(std::vector<sys::UniqueFd> fds, size_t at) {
    if (fds.size() != 1 || fd_.ok()) return;  // `fds` close as they go
    fd_ = std::move(fds.front());
    at_ = at;
  }
  // A line of `consumed` bytes (its newline included) left the front of the
  // input: the descriptor when it came with that line, else none.
  sys::UniqueFd TakeFor(size_t consumed) {
    if (!fd_.ok()) return {};
    if (at_ < consumed) return std::move(fd_);
    at_ -= consumed;
    return {};
  }
  // The input was dropped (an over-long line, a closed connection).
  void Reset() { fd_.Reset(); }
  bool held() const { return fd_.ok(); }

 private:
  sys::UniqueFd fd_;
  size_t at_ = 0;
};

}  // namespace bk::server
