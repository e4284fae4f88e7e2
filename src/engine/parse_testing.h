#pragma once
// For tests: times written as ISO text, read the way the engine reads them.

#include <gtest/gtest.h>

#include "engine/civil_time.h"
#include "engine/parse.h"

namespace bk::engine {

// An ISO time ("2026-11-29T18:52:00Z") as epoch seconds, in UTC unless the
// text names an offset; a malformed one fails the test and gives 0.
inline Seconds T(const char* iso) {
  auto t = ParseIsoTime(iso, FixedZone(0));
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

}  // namespace bk::engine
