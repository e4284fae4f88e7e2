// Linked into every executable of a sanitizer build (BK_SANITIZE, see CMakeLists.txt).
//
// The runtime options are compiled in rather than read from ASAN_OPTIONS and friends
// because the end-to-end tests scrub the environment of the bk processes they start
// (and the shared-server tests start them as other Unix users): a report must stop
// the process with a distinctive exit code wherever it runs.
//
// Exit codes are not enough: a daemon's stderr goes to a log file nobody reads, and a
// test that expects bk to fail may accept any non-zero status. So each sanitizer's
// death callback also drops a file naming the process into BK_SANITIZER_REPORT_DIR;
// the `sanitizer.reports` test (run after all the others) fails when any is there.
// The environment variables still win over these defaults for a one-off run.

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

extern "C" {
void __sanitizer_set_death_callback(void (*callback)(void));

// 86: no exit status of bk itself. halt_on_error: the first report ends the process.
const char* __asan_default_options() {
  return "halt_on_error=1:detect_leaks=1:exitcode=86:abort_on_error=0:"
         "check_initialization_order=1:strict_init_order=1";
}
const char* __lsan_default_options() {
  return "exitcode=86:suppressions=" BK_SANITIZER_SUPPRESSIONS "/lsan.supp";
}
const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:exitcode=86:"
         "suppressions=" BK_SANITIZER_SUPPRESSIONS "/ubsan.supp";
}
const char* __tsan_default_options() {
  return "halt_on_error=1:exitcode=86:second_deadlock_stack=1:"
         "suppressions=" BK_SANITIZER_SUPPRESSIONS "/tsan.supp";
}
}

namespace {

// Runs in a dying process, possibly after a heap error: plain system calls only.
void LeaveMark() {
  char path[512];
  int n =
      std::snprintf(path, sizeof path, "%s/report.%d", BK_SANITIZER_REPORT_DIR, static_cast<int>(getpid()));
  if (n <= 0 || n >= static_cast<int>(sizeof path)) return;
  int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return;
  // The command line (NUL-separated), so the check can say which process it was.
  int in = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    char buf[4096];
    ssize_t got;
    while ((got = read(in, buf, sizeof buf)) > 0) {
      for (ssize_t i = 0; i < got; ++i)
        if (buf[i] == '\0') buf[i] = ' ';
      if (write(out, buf, static_cast<size_t>(got)) != got) break;
    }
    close(in);
  }
  close(out);
}

// g++ links each sanitizer as its own shared library, each with its own copy of the
// common runtime: the plain symbol reaches ASan's (or TSan's) copy, and UBSan's copy
// has to be looked up in libubsan itself.
__attribute__((constructor)) void RegisterDeathCallbacks() {
  __sanitizer_set_death_callback(LeaveMark);
  if (void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    using Setter = void (*)(void (*)(void));
    if (auto set = reinterpret_cast<Setter>(dlsym(ubsan, "__sanitizer_set_death_callback"))) set(LeaveMark);
  }
}

}  // namespace
