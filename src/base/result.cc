#include "base/result.h"

namespace bk {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalid: return "invalid";
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
    case ErrorKind::kNoSlot: return 3;
    case ErrorKind::kBusy: return 75;
    default: return 2;
  }
}

}  // namespace bk
