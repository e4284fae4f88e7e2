#pragma once
// `eval "$(bk shell init [bash|zsh])"`: defines bk_gpu_refresh and a prompt
// hook that keeps CUDA_VISIBLE_DEVICES equal to the GPUs of the user's
// bookings active now. Between booking boundaries the hook only compares two
// integers: it spawns no process. It asks `bk shell env` again when the cached
// boundary has passed, after a `bk` command typed in this shell, or when the
// user calls bk_gpu_refresh. BK_SHELL_TEST_EPOCH, when set, replaces the
// shell's clock (tests step time with it).

#include <string>

#include "base/result.h"
#include "base/strings.h"

namespace bk::shell {

// "bash" or "zsh"; `bk_path` is the absolute path of this bk.
Result<std::string> InitScript(const std::string& shell, const std::string& bk_path);
using bk::ShellQuote;

}  // namespace bk::shell
