#include "sys/random.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace bk::sys {
namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST(NewUuid, Version4LowercaseLayout) {
  for (int i = 0; i < 200; ++i) {
    std::string u = NewUuid();
    ASSERT_EQ(u.size(), 36u) << u;
    for (int p = 0; p < 36; ++p) {
      if (p == 8 || p == 13 || p == 18 || p == 23) {
        EXPECT_EQ(u[p], '-') << u;
      } else {
        EXPECT_TRUE(IsLowerHex(u[p])) << u;
      }
    }
    EXPECT_EQ(u[14], '4') << u;                                          // version
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos) << u;  // RFC 4122 variant
  }
}

TEST(NewUuid, Unique) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.insert(NewUuid()).second);
}

TEST(NewUuid, RandomBitsVary) {
  // Each of the 122 random bits should take both values over many draws.
  std::string first = NewUuid();
  bool differs_per_position[36] = {};
  for (int i = 0; i < 500; ++i) {
    std::string u = NewUuid();
    for (int p = 0; p < 36; ++p) differs_per_position[p] |= u[p] != first[p];
  }
  for (int p = 0; p < 36; ++p) {
    if (p == 8 || p == 13 || p == 14 || p == 18 || p == 23) continue;
    EXPECT_TRUE(differs_per_position[p]) << "position " << p;
  }
}

TEST(IsLowercaseUuid, AcceptsWhatNewUuidWrites) {
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(IsLowercaseUuid(NewUuid()));
  EXPECT_TRUE(IsLowercaseUuid("00000000-0000-0000-0000-000000000000"));
}

TEST(IsLowercaseUuid, RefusesOtherShapes) {
  EXPECT_FALSE(IsLowercaseUuid(""));
  EXPECT_FALSE(IsLowercaseUuid("3DEE5B08-0000-4000-8000-000000000000"));   // upper case
  EXPECT_FALSE(IsLowercaseUuid("3dee5b08-0000-4000-8000-00000000000"));    // short
  EXPECT_FALSE(IsLowercaseUuid("3dee5b08-0000-4000-8000-0000000000000"));  // long
  EXPECT_FALSE(IsLowercaseUuid("3dee5b08_0000-4000-8000-000000000000"));   // no dash
  EXPECT_FALSE(IsLowercaseUuid("3dee5b08-0000-4000-8000-00000000000g"));   // not hex
  EXPECT_FALSE(IsLowercaseUuid("../../etc/passwd-0000-4000-8000-0000000"));
}

}  // namespace
}  // namespace bk::sys
