#pragma once
// Why a running job's process group is being stopped.

#include <string_view>
#include <utility>

#include "base/enum_names.h"

namespace bk::worker {

// The booking was cancelled, its window ended, or the worker itself (or a
// foreground `bk run`) was asked to stop.
enum class StopReason { kCancelled, kDeadline, kStopRequested };
// The names recorded as the job's message.
inline constexpr auto kStopReasonNames =
    MakeEnumNames<StopReason>(std::pair{StopReason::kCancelled, std::string_view("cancelled")},
                              std::pair{StopReason::kDeadline, std::string_view("deadline")},
                              std::pair{StopReason::kStopRequested, std::string_view("worker-stop")});
constexpr const auto& EnumNamesOf(StopReason) { return kStopReasonNames; }

}  // namespace bk::worker
