#include "shell/init_script.h"

#include <fmt/format.h>

namespace bk::shell {
namespace {

// Shared by both shells: parse `bk shell env` without eval, export, cache the
// next boundary. $__bk_gpu_next: 0 = refresh at the next prompt, -1 = no
// boundary known (only a bk command or bk_gpu_refresh refreshes).
constexpr const char* kCommon = R"sh(
bk_gpu_refresh() {
  local __out __line __key __val __state= __cvd= __gpus= __ids= __next= __notice= __unread=
  __out=$("$__bk_gpu_bin" shell env 2>/dev/null)
  while IFS= read -r __line; do
    __key=${__line%%=*}
    __val=${__line#*=}
    case $__key in
      BK_SHELL_STATE) __state=$__val ;;
      CUDA_VISIBLE_DEVICES) __cvd=$__val ;;
      BK_RESERVED_GPUS) __gpus=$__val ;;
      BK_RESERVATION_IDS) __ids=$__val ;;
      BK_NEXT_BOUNDARY) __next=$__val ;;
      BK_SHELL_NOTICE) __notice=$__val ;;
      BK_UNREAD_NOTICE) __unread=$__val ;;
    esac
  done <<< "$__out"
  if [[ -z $__state ]]; then
    __state=unreachable
    __cvd= __gpus= __ids= __next=
    __notice='bk: GPU booking service unreachable; CUDA_VISIBLE_DEVICES is empty (bk_gpu_refresh retries)'
  fi
  export CUDA_VISIBLE_DEVICES="$__cvd"
  export CUDA_DEVICE_ORDER=PCI_BUS_ID
  export BK_RESERVED_GPUS="$__gpus"
  export GPUBK_RESERVATION_IDS="$__ids"
  __bk_gpu_clock
  if [[ $__next =~ ^[0-9]+$ ]]; then
    __bk_gpu_next=$__next
  elif [[ $__state == unreachable ]]; then
    __bk_gpu_next=$(( __bk_gpu_t + 60 ))
  else
    __bk_gpu_next=-1
  fi
  __bk_gpu_state=$__state
  if [[ -n $__notice && $__notice != "$__bk_gpu_notice" ]]; then
    printf '%s\n' "$__notice" >&2
  fi
  __bk_gpu_notice=$__notice
  # Unread notifications: said once, again only when the line changes.
  if [[ -n $__unread && $__unread != "$__bk_gpu_unread" ]]; then
    printf '%s\n' "$__unread" >&2
  fi
  __bk_gpu_unread=$__unread
  return 0
}
__bk_gpu_hook() {
  local __rc=$?
  if (( __bk_gpu_next == 0 )); then
    bk_gpu_refresh
  elif (( __bk_gpu_next > 0 )); then
    __bk_gpu_clock
    if (( __bk_gpu_t >= __bk_gpu_next )); then bk_gpu_refresh; fi
  fi
  return $__rc
}
function bk {
  command bk "$@"
  local __rc=$?
  __bk_gpu_next=0
  return $__rc
}
)sh";

}  // namespace

Result<std::string> InitScript(const std::string& shell, const std::string& bk_path) {
  std::string head = fmt::format(
      "# GPUBK shell integration ({}): eval \"$(bk shell init {})\"\n"
      "# CUDA_VISIBLE_DEVICES follows the GPUs you have booked now; bk_gpu_refresh re-reads them.\n"
      "__bk_gpu_bin={}\n"
      "__bk_gpu_next=0\n"
      "__bk_gpu_notice=\n"
      "__bk_gpu_unread=\n"
      "__bk_gpu_state=\n"
      "__bk_gpu_t=0\n",
      shell, shell, ShellQuote(bk_path));
  if (shell == "bash") {
    return head + R"sh(__bk_gpu_clock() {
  if [[ -n ${BK_SHELL_TEST_EPOCH-} ]]; then
    __bk_gpu_t=$BK_SHELL_TEST_EPOCH
  elif [[ -n ${EPOCHSECONDS-} ]]; then
    __bk_gpu_t=$EPOCHSECONDS
  else
    printf -v __bk_gpu_t '%(%s)T' -1
  fi
})sh" + kCommon +
           R"sh(if [[ ${PROMPT_COMMAND-} != *__bk_gpu_hook* ]]; then
  PROMPT_COMMAND="__bk_gpu_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
fi
bk_gpu_refresh
)sh";
  }
  if (shell == "zsh") {
    return head + R"sh(zmodload zsh/datetime 2>/dev/null
__bk_gpu_clock() {
  if [[ -n ${BK_SHELL_TEST_EPOCH-} ]]; then
    __bk_gpu_t=$BK_SHELL_TEST_EPOCH
  elif [[ -n ${EPOCHSECONDS-} ]]; then
    __bk_gpu_t=$EPOCHSECONDS
  else
    __bk_gpu_t=$(date +%s)
  fi
})sh" + kCommon +
           R"sh(if [[ " ${precmd_functions[*]-} " != *" __bk_gpu_hook "* ]]; then
  precmd_functions+=(__bk_gpu_hook)
fi
bk_gpu_refresh
)sh";
  }
  return Invalid(fmt::format("unsupported shell {}; choose bash or zsh", shell));
}

}  // namespace bk::shell
