#include "cli/booking_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "engine/parse.h"
#include "sys/clock.h"

namespace bk::cli {
namespace {

using engine::Mode, engine::Seconds;
using ::testing::ElementsAre, ::testing::HasSubstr, ::testing::IsEmpty;

// 2026-11-18T11:12:00Z: two minutes into the 11:10 slot.
constexpr Seconds kSlot = 1'795'000'200;
constexpr Seconds kNow = kSlot + 120;

Seconds Utc(const char* iso) {
  auto t = engine::ParseIsoTime(iso, engine::FixedZone(0));
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

class BookingArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.config.policy.gpu_count = 4;
    ctx_.clock = std::make_unique<sys::FixedClock>(kNow);
    ctx_.zone = std::make_unique<engine::FixedZone>(0);
  }

  // Parses argv the way `bk N DUR` does, then builds the request.
  Result<service::CreateRequest> Build(const std::vector<std::string>& argv, bool exclusive = false,
                                       bool with_start = true, bool with_op_id = true) {
    ArgSpec spec("bk book", "book GPUs");
    args_ = BookingArgs{};
    AddBookingOptions(spec, args_, with_start, with_op_id);
    BK_TRY(spec.Parse(argv));
    return ToRequest(ctx_, args_, exclusive);
  }
  service::CreateRequest MustBuild(const std::vector<std::string>& argv, bool exclusive = false) {
    auto r = Build(argv, exclusive);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r.value_or(service::CreateRequest{});
  }
  std::string BuildError(const std::vector<std::string>& argv, bool exclusive = false) {
    auto r = Build(argv, exclusive);
    EXPECT_FALSE(r.has_value()) << "accepted";
    if (r) return "";
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalid) << r.error().message;
    return r.error().message;
  }

  Context ctx_;
  BookingArgs args_;
};

TEST_F(BookingArgsTest, CountAndDuration) {
  auto r = MustBuild({"2", "1h30m"});
  EXPECT_EQ(r.count, 2);
  EXPECT_EQ(r.duration, 5400);
  EXPECT_EQ(r.mode, Mode::kShared);
  EXPECT_FALSE(r.memory_mb.has_value());
  EXPECT_FALSE(r.share_units.has_value());
  EXPECT_FALSE(r.start.has_value());
  EXPECT_FALSE(r.cpus.has_value());
  EXPECT_FALSE(r.ram_mb.has_value());
  EXPECT_FALSE(r.op_id.has_value());
  EXPECT_THAT(r.gpus, IsEmpty());
  EXPECT_THAT(r.exclude, IsEmpty());
  EXPECT_FALSE(r.job.has_value());
}

TEST_F(BookingArgsTest, CountAndDurationAreRequired) {
  EXPECT_THAT(BuildError({}), HasSubstr("give a GPU count and a duration"));
  EXPECT_THAT(BuildError({"1"}), HasSubstr("give a GPU count and a duration"));
  EXPECT_THAT(BuildError({"--mem", "4g"}), HasSubstr("bk book --help"));
}

TEST_F(BookingArgsTest, BadCountsRefused) {
  for (const char* bad : {"abc", "-1", "1.5", "100001", "0x2", "2 gpus"}) {
    auto r = Build({"--", bad, "30m"});  // `--` so "-1" reaches the positional
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("GPU count must be a whole number")) << bad;
    EXPECT_THAT(r.error().message, HasSubstr(bad));
  }
  // Blanks around the number are tolerated.
  EXPECT_EQ(MustBuild({" 3 ", "30m"}).count, 3);
}

TEST_F(BookingArgsTest, BadDurationRefused) {
  EXPECT_THAT(BuildError({"1", "90"}), HasSubstr("duration"));
  EXPECT_THAT(BuildError({"1", "1h1h"}), HasSubstr("once"));
  EXPECT_THAT(BuildError({"1", "0m"}), HasSubstr("positive"));
}

TEST_F(BookingArgsTest, ExclusiveFromCommandOrMode) {
  EXPECT_EQ(MustBuild({"1", "30m"}, /*exclusive=*/true).mode, Mode::kExclusive);
  BookingArgs a;
  a.count = "1";
  a.duration = "30m";
  a.mode = "x";
  auto r = ToRequest(ctx_, a, false);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->mode, Mode::kExclusive);
  a.mode = "shared";
  r = ToRequest(ctx_, a, true);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->mode, Mode::kShared) << "--mode overrides the command";
  a.mode = "bogus";
  r = ToRequest(ctx_, a, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("--mode"));
}

TEST_F(BookingArgsTest, PositionalMemoryAndMemOption) {
  EXPECT_EQ(MustBuild({"1", "30m", "12g"}).memory_mb, 12288);
  EXPECT_EQ(MustBuild({"1", "30m", "--mem", "4096m"}).memory_mb, 4096);
  EXPECT_EQ(MustBuild({"1", "30m", "-m", "1.5g"}).memory_mb, 1536);
  EXPECT_EQ(MustBuild({"1", "30m", "--mem=24g"}).memory_mb, 24576);
  EXPECT_THAT(BuildError({"1", "30m", "12"}), HasSubstr("memory"));
  EXPECT_THAT(BuildError({"1", "30m", "--mem", "lots"}), HasSubstr("memory"));
}

TEST_F(BookingArgsTest, PositionalMemoryAndMemTogetherRefused) {
  std::string e = BuildError({"1", "30m", "12g", "--mem", "4g"});
  EXPECT_THAT(e, HasSubstr("either positionally or with --mem, not both"));
  // Even when they agree.
  EXPECT_THAT(BuildError({"1", "30m", "--mem", "12g", "12g"}), HasSubstr("not both"));
}

TEST_F(BookingArgsTest, ShareUnits) {
  EXPECT_EQ(MustBuild({"1", "30m", "--share", "2"}).share_units, 2);
  EXPECT_EQ(MustBuild({"1", "30m", "-s", " 3 "}).share_units, 3);
  EXPECT_EQ(MustBuild({"1", "30m", "-s2"}).share_units, 2);
  for (const char* bad : {"two", "1.5", "1000001", ""}) {
    auto r = Build({"1", "30m", "--share", bad});
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("--share must be a whole number")) << bad;
  }
}

TEST_F(BookingArgsTest, GpuAndExcludeLists) {
  auto g = MustBuild({"2", "1h", "--gpu", "3,1"});
  EXPECT_THAT(g.gpus, ElementsAre(3, 1));
  EXPECT_THAT(g.exclude, IsEmpty());
  EXPECT_THAT(MustBuild({"1", "1h", "-g2"}).gpus, ElementsAre(2));
  EXPECT_THAT(MustBuild({"2", "1h", "-g0,3"}).gpus, ElementsAre(0, 3));
  EXPECT_THAT(MustBuild({"2", "1h", "--gpu=0, 2"}).gpus, ElementsAre(0, 2));
  EXPECT_THAT(MustBuild({"1", "1h", "--exclude", "0"}).exclude, ElementsAre(0));
  EXPECT_THAT(MustBuild({"1", "1h", "--exclude-gpu", "0,1"}).exclude, ElementsAre(0, 1));
  EXPECT_THAT(MustBuild({"1", "1h", "-e3"}).exclude, ElementsAre(3));
  // The last occurrence wins.
  EXPECT_THAT(MustBuild({"1", "1h", "--gpu", "1", "--gpu", "2"}).gpus, ElementsAre(2));
  EXPECT_THAT(BuildError({"1", "1h", "--gpu", "1,1"}), HasSubstr("--gpu"));
  EXPECT_THAT(BuildError({"1", "1h", "--gpu", "x"}), HasSubstr("--gpu"));
  EXPECT_THAT(BuildError({"1", "1h", "--exclude", "-1"}), HasSubstr("--exclude"));
}

TEST_F(BookingArgsTest, GpuAndExcludeTogetherRefusedByTheParser) {
  auto r = Build({"1", "1h", "--gpu", "1", "--exclude", "2"});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("--gpu"));
  EXPECT_THAT(r.error().message, HasSubstr("see `bk book --help`"));
}

TEST_F(BookingArgsTest, HostBudgets) {
  auto r = MustBuild({"1", "1h", "--cpus", "8", "--ram", "32g"});
  EXPECT_EQ(r.cpus, 8);
  EXPECT_EQ(r.ram_mb, 32768);
  EXPECT_THAT(BuildError({"1", "1h", "--cpus", "0"}), HasSubstr("--cpus"));
  EXPECT_THAT(BuildError({"1", "1h", "--cpus", "two"}), HasSubstr("--cpus"));
  EXPECT_THAT(BuildError({"1", "1h", "--ram", "lots"}), HasSubstr("--ram"));
}

TEST_F(BookingArgsTest, StartNowFloorsToTheCurrentSlot) {
  EXPECT_EQ(MustBuild({"1", "1h", "--start", "now"}).start, kSlot);
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "now"}).start, kSlot);
}

TEST_F(BookingArgsTest, StartRelativeAndIsoUseTheContextClock) {
  // +30m from 11:12 rounds up to the grid: 11:45.
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "+30m"}).start, Utc("2026-11-18T11:45:00Z"));
  EXPECT_EQ(MustBuild({"1", "1h", "--at", "+30m"}).start, Utc("2026-11-18T11:45:00Z"));
  EXPECT_EQ(MustBuild({"1", "1h", "--start", "2026-11-18T13:00:00Z"}).start, Utc("2026-11-18T13:00:00Z"));
  EXPECT_EQ(MustBuild({"1", "1h", "--start=2026-11-19T09:00"}).start, Utc("2026-11-19T09:00:00Z"));

  // Another clock: the same text means another time.
  static_cast<sys::FixedClock*>(ctx_.clock.get())->Set(kNow + engine::kDay);
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "now"}).start, kSlot + engine::kDay);
}

TEST_F(BookingArgsTest, StartUsesTheContextZone) {
  ctx_.zone = std::make_unique<engine::FixedZone>(8 * engine::kHour);  // 19:12 local
  // A friendly or naive -t time is local: 20:00 +08:00 is 12:00Z.
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "20:00"}).start, Utc("2026-11-18T12:00:00Z"));
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "2026-11-18T20:00"}).start, Utc("2026-11-18T12:00:00Z"));
  // --start is the machine interface: a naive ISO time there is UTC; its friendly forms stay local.
  EXPECT_EQ(MustBuild({"1", "1h", "--start", "2026-11-18T20:00"}).start, Utc("2026-11-18T20:00:00Z"));
  EXPECT_EQ(MustBuild({"1", "1h", "--start", "20:00"}).start, Utc("2026-11-18T12:00:00Z"));
  // 18:00 local has passed today: tomorrow.
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "18:00"}).start, Utc("2026-11-19T10:00:00Z"));
  ctx_.zone = std::make_unique<engine::FixedZone>(0);
  EXPECT_EQ(MustBuild({"1", "1h", "-t", "20:00"}).start, Utc("2026-11-18T20:00:00Z"));
}

TEST_F(BookingArgsTest, BadOrPastStartsRefused) {
  EXPECT_FALSE(Build({"1", "1h", "--start", "2026-11-18T11:03:00Z"}).has_value()) << "off the grid";
  EXPECT_FALSE(Build({"1", "1h", "--start", "2026-11-18T10:00:00Z"}).has_value()) << "in the past";
  EXPECT_FALSE(Build({"1", "1h", "-t", "someday"}).has_value());
}

TEST_F(BookingArgsTest, StartAndAtAreExclusive) {
  auto r = Build({"1", "1h", "--start", "now", "-t", "+1h"});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("--start"));
}

TEST_F(BookingArgsTest, StartOptionsOnlyWhenAsked) {
  auto r = Build({"1", "1h", "--start", "now"}, false, /*with_start=*/false, true);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("--start"));
  auto o = Build({"1", "1h", "--op-id", "x"}, false, true, /*with_op_id=*/false);
  ASSERT_FALSE(o.has_value());
  EXPECT_THAT(o.error().message, HasSubstr("--op-id"));
}

TEST_F(BookingArgsTest, OpIdIsTrimmed) {
  EXPECT_EQ(MustBuild({"1", "1h", "--op-id", "  retry-1 "}).op_id, "retry-1");
}

TEST_F(BookingArgsTest, JsonFlags) {
  MustBuild({"1", "1h", "--json"});
  EXPECT_TRUE(args_.json);
  EXPECT_FALSE(args_.compact);
  MustBuild({"1", "1h", "--compact"});
  EXPECT_TRUE(args_.compact);
}

TEST_F(BookingArgsTest, UnknownOptionNamesTheHelp) {
  auto r = Build({"1", "1h", "--memory", "4g"});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("see `bk book --help`"));
}

// ---- `--` and the command tail ---------------------------------------------------

TEST(BeforeCommandTest, SplitsAtTheFirstDoubleDashKeepingTheTailVerbatim) {
  std::vector<std::string> command;
  auto before = BeforeCommand(
      {"1", "30m", "--gpu", "0", "--", "python", "train.py", "--", "--lr=1", "-h", "", "a b"}, &command);
  EXPECT_THAT(before, ElementsAre("1", "30m", "--gpu", "0"));
  EXPECT_THAT(command, ElementsAre("python", "train.py", "--", "--lr=1", "-h", "", "a b"));
}

TEST(BeforeCommandTest, NoDoubleDashMeansNoCommand) {
  std::vector<std::string> command;
  auto before = BeforeCommand({"1", "30m", "--json"}, &command);
  EXPECT_THAT(before, ElementsAre("1", "30m", "--json"));
  EXPECT_THAT(command, IsEmpty());
}

TEST(BeforeCommandTest, TrailingDoubleDashGivesAnEmptyCommand) {
  std::vector<std::string> command = {"stale"};
  auto before = BeforeCommand({"1", "30m", "--"}, &command);
  EXPECT_THAT(before, ElementsAre("1", "30m"));
  EXPECT_THAT(command, IsEmpty());
}

TEST(BeforeCommandTest, LeadingDoubleDashAndNullCommand) {
  std::vector<std::string> command;
  EXPECT_THAT(BeforeCommand({"--", "ls"}, &command), IsEmpty());
  EXPECT_THAT(command, ElementsAre("ls"));
  EXPECT_THAT(BeforeCommand({"1", "--", "ls"}, nullptr), ElementsAre("1"));
  EXPECT_THAT(BeforeCommand({}, &command), IsEmpty());
}

TEST(BeforeCommandTest, OptionLikeWordsAreNotSplitPoints) {
  std::vector<std::string> command;
  auto before = BeforeCommand({"1", "30m", "---", "--=", "-- "}, &command);
  EXPECT_THAT(before, ElementsAre("1", "30m", "---", "--=", "-- "));
  EXPECT_THAT(command, IsEmpty());
}

TEST_F(BookingArgsTest, TheHeadParsesAndTheTailIsUntouched) {
  std::vector<std::string> command;
  auto head = BeforeCommand({"2", "1h", "-g0,1", "--", "bk", "--gpu", "3", "--bogus"}, &command);
  auto r = MustBuild(head);
  EXPECT_EQ(r.count, 2);
  EXPECT_THAT(r.gpus, ElementsAre(0, 1));
  EXPECT_THAT(command, ElementsAre("bk", "--gpu", "3", "--bogus"));
}

}  // namespace
}  // namespace bk::cli
