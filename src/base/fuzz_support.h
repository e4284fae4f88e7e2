#pragma once
// Shared by the libFuzzer targets (src/*/*_fuzz.cc) that run real ledgers;
// nothing in bk itself includes it.

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace bk::fuzz {

// The fixed time of every target's clock: 2026-11-18T11:12:00Z.
inline constexpr int64_t kNow = 1'795'000'320;

// A new directory for one target's ledger: on tmpfs where there is one, since
// every ledger write is fsynced and the fuzzer makes millions of them.
inline std::string ScratchDir(std::string_view target) {
  std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/bk-" + std::string(target) + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) abort();
  return tmpl;
}

// Removes what is inside `dir` (a ledger and what lies beside it), keeping `dir`.
inline void Empty(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    std::filesystem::remove_all(entry.path(), ec);
}

// The one fixture of a target, built at the first input and destroyed at exit
// (which removes its directory): libFuzzer never returns from its loop.
template <class F>
F& Fixture() {
  static F* f = new F;
  static const int registered = atexit([] { delete f; });
  (void)registered;
  return *f;
}

// The base of a target's fixture that runs a real ledger in a scratch
// directory, removed at exit. Derived (a struct with Start and Stop, whose
// destructor calls Stop) opens the ledger in Start and closes it in Stop;
// Renew starts it afresh over an emptied directory.
template <class Derived>
class LedgerFixture {
 public:
  explicit LedgerFixture(std::string_view target) : dir(ScratchDir(target)) {}
  ~LedgerFixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  LedgerFixture(const LedgerFixture&) = delete;
  LedgerFixture& operator=(const LedgerFixture&) = delete;

  void Renew() {
    auto& self = static_cast<Derived&>(*this);
    self.Stop();
    Empty(dir);
    self.Start();
  }
  // Renews at every `per_ledger`th input, which keeps the ledger small.
  void CountInput(int per_ledger = 5000) {
    if (++inputs_ % per_ledger == 0) Renew();
  }

  const std::string dir;

 private:
  int inputs_ = 0;
};

}  // namespace bk::fuzz
