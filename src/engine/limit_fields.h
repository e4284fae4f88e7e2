#pragma once
// The fair-share limits by name, in one table: what config.json, the
// protocol and `bk admin policy` call each limit, the unit a person gives it
// in and the range accepted. A limit is `user_NAME` for everyone and `NAME`
// in a `user_limits` or `group_limits` entry.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "engine/limits.h"

namespace bk::engine {

struct LimitField {
  LimitKind kind;
  std::string_view name;                   // max_gpus, max_booking_hours, ...
  std::optional<int64_t> Limits::*member;  // where the value is kept
  int64_t unit;                            // seconds per unit for hours and days, else 1
  int64_t lo, hi;                          // accepted, in that unit
  std::string_view what;                   // for one user: "GPUs held at once"
};

// In LimitKind order.
std::span<const LimitField> LimitFields();
const LimitField& FieldOf(LimitKind kind);

}  // namespace bk::engine
