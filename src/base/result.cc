#include "base/result.h"

#include "base/exit_codes.h"

namespace bk {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalid: return "invalid";
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kConflict: return "conflict";
    case ErrorKind::kNoSlot: return "no-slot";
    case ErrorKind::kNotFound: return "not-found";
    case ErrorKind::kPermission: return "permission";
    case ErrorKind::kPolicy: return "policy";
    case ErrorKind::kCorrupt: return "corrupt";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kBusy: return "busy";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

int ExitCode(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNoSlot: return exit_code::kNoSlot;
    case ErrorKind::kBusy: return exit_code::kBusy;
    default: return exit_code::kUsage;
  }
}

}  // namespace bk
