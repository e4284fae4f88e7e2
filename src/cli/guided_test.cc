#include "cli/guided.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "engine/civil_time.h"
#include "sys/clock.h"

namespace bk::cli {
namespace {

using ::testing::ElementsAre, ::testing::HasSubstr, ::testing::Not;

// 2026-11-18T11:12:00Z.
constexpr engine::Seconds kNow = 1'795'000'320;

// Answers typed one a line into the questions; what was printed.
class GuidedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    policy_.gpu_count = 4;
    ctx_.config.policy = policy_;
    ctx_.clock = std::make_unique<sys::FixedClock>(kNow);
    ctx_.zone = std::make_unique<engine::FixedZone>(0);
  }

  // The real option checks of `bk COUNT DURATION ...`, and the service's
  // count range, which needs the policy.
  Status Check(const GuidedBooking& b) {
    seen_.push_back(b);
    BK_ASSIGN_OR_RETURN(service::CreateRequest req, ToRequest(ctx_, ToBookingArgs(b), false));
    if (req.count > policy_.gpu_count) return Invalid("GPU count must be between 1 and 4");
    return Ok();
  }

  Result<bool> Ask(const std::string& typed, GuidedBooking* b, GuidedCheck check = nullptr) {
    std::istringstream in(typed);
    char* printed = nullptr;
    size_t size = 0;
    FILE* out = open_memstream(&printed, &size);
    auto reader = PlainLineReader(in, out);
    if (!check) check = [this](const GuidedBooking& g) { return Check(g); };
    Result<bool> r = AskBooking(*reader, out, policy_, check, b);
    std::fclose(out);
    printed_.assign(printed, size);
    free(printed);
    return r;
  }

  engine::Policy policy_;
  Context ctx_;
  std::vector<GuidedBooking> seen_;
  std::string printed_;
};

TEST_F(GuidedTest, AWrongAnswerIsAskedAgainWithWhatWasWrongAndWhatIsAccepted) {
  GuidedBooking b = GuidedDefaults(policy_);
  auto r = Ask("two\n9\n2\n1h\nx\n\n\n+30m\n", &b);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(*r);
  EXPECT_THAT(printed_,
              HasSubstr("how many GPUs (1-4) [1]: "
                        "  not accepted: GPU count must be a whole number such as 1, not 'two'; "
                        "answer a number of GPUs, 1-4\n"
                        "how many GPUs (1-4) [1]: "
                        "  not accepted: GPU count must be between 1 and 4; answer a number of GPUs, 1-4\n"
                        "how many GPUs (1-4) [1]: how long"));
  EXPECT_EQ(b.count, "2");
  EXPECT_EQ(b.duration, "1h");
  EXPECT_EQ(b.mode, "x");
  EXPECT_EQ(b.gpus, "auto");
  EXPECT_EQ(b.memory, "auto");
  EXPECT_EQ(b.start, "+30m");
  EXPECT_THAT(BookingWords(b), ElementsAre("x", "2", "1h", "--at", "+30m"));
}

TEST_F(GuidedTest, EveryParserRefusalIsTheCommandLinesOwn) {
  GuidedBooking b = GuidedDefaults(policy_);
  auto r = Ask("\n90x\n\nmaybe\n\n1,1\n\nlots\n\nyesterday\n\n", &b);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(*r);
  EXPECT_THAT(printed_,
              HasSubstr("not accepted: duration must look like 30m, 1h30m, or 1d; answer a duration "
                        "in steps of 5m"));
  EXPECT_THAT(printed_,
              HasSubstr("not accepted: --mode must be s, shared, x or exclusive; answer shared (s) or "
                        "exclusive (x)\n"));
  EXPECT_THAT(printed_, HasSubstr("answer auto, or as many GPU indexes as GPUs, e.g. 0,1\n"));
  EXPECT_THAT(printed_,
              HasSubstr("not accepted: memory must look like 12g or 4096m; answer auto, or a size"));
  EXPECT_THAT(printed_, HasSubstr("answer now, +30m, 14:00, \"tomorrow 9\" or 12-24 09:00\n"));
  // Each refused answer left the default in place.
  EXPECT_THAT(BookingWords(b), ElementsAre("1", "30m"));
}

TEST_F(GuidedTest, EnterKeepsEarlierAnswersAndLaterQuestionsAreCheckedWithThem) {
  GuidedBooking b = GuidedDefaults(policy_);
  b.count = "2";
  b.gpus = "0,1";
  auto r = Ask("\n\n\n\n\n\n", &b);
  ASSERT_TRUE(r.has_value());
  EXPECT_THAT(printed_, HasSubstr("how many GPUs (1-4) [2]: "));
  EXPECT_THAT(printed_, HasSubstr("which GPUs (auto, or indexes such as 0,1) [0,1]: "));
  ASSERT_EQ(seen_.size(), 6u);
  // The count is checked with the GPUs at their default: an earlier answer
  // never waits on a later one.
  EXPECT_EQ(seen_[0].count, "2");
  EXPECT_EQ(seen_[0].gpus, "auto");
  EXPECT_EQ(seen_[3].gpus, "0,1");
  EXPECT_THAT(BookingWords(b), ElementsAre("2", "30m", "--gpu", "0,1"));
}

TEST_F(GuidedTest, TheEndOfInputStopsWithNothingDecided) {
  GuidedBooking b = GuidedDefaults(policy_);
  auto r = Ask("3\n", &b);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(*r);
}

TEST_F(GuidedTest, AnErrorThatIsNotTheAnswersEndsTheQuestions) {
  GuidedBooking b = GuidedDefaults(policy_);
  auto r = Ask("1\n1\n", &b, [](const GuidedBooking&) -> Status {
    return Fail(ErrorKind::kPolicy, "the ledger's policy differs");
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "the ledger's policy differs");
  EXPECT_THAT(printed_, Not(HasSubstr("not accepted")));
}

TEST_F(GuidedTest, HostCpusAndRamAreAskedOnlyWithBudgets) {
  GuidedBooking b = GuidedDefaults(policy_);
  ASSERT_TRUE(Ask("\n\n\n\n\n\n", &b).has_value());
  EXPECT_THAT(printed_, Not(HasSubstr("host CPUs")));

  policy_.host_cpus = 16;
  policy_.default_booking_ram_mb = 2048;
  b = GuidedDefaults(policy_);
  ASSERT_TRUE(Ask("\n\n\n\n\n\n0\n4\n\n", &b).has_value());
  EXPECT_THAT(printed_, HasSubstr("host CPUs [1]: "));
  EXPECT_THAT(printed_, HasSubstr("not accepted: --cpus must be a whole number of CPUs such as 4"));
  EXPECT_THAT(printed_, HasSubstr("host RAM (e.g. 32g) [2g]: "));
  EXPECT_THAT(BookingWords(b), ElementsAre("1", "30m", "--cpus", "4", "--ram", "2g"));
}

TEST(GuidedDefaultsTest, TheDurationIsAWholeSlot) {
  engine::Policy p;
  EXPECT_EQ(GuidedDefaults(p).duration, "30m");
  p.slot = 60 * 60;
  EXPECT_EQ(GuidedDefaults(p).duration, "1h");
  p.slot = 20 * 60;
  EXPECT_EQ(GuidedDefaults(p).duration, "20m");
}

TEST(BookingWordsTest, AutoAndNowAreLeftOutAsTheCommandLineWouldLeaveThem) {
  GuidedBooking b{.count = "2",
                  .duration = "1h",
                  .mode = "exclusive",
                  .gpus = "AUTO",
                  .memory = "12g",
                  .start = "now",
                  .cpus = "",
                  .ram = ""};
  EXPECT_THAT(BookingWords(b), ElementsAre("x", "2", "1h", "--mem", "12g"));
  BookingArgs a = ToBookingArgs(b);
  EXPECT_FALSE(a.gpu.has_value());
  EXPECT_FALSE(a.at.has_value());
  EXPECT_EQ(a.mode, "exclusive");
  b.mode = "s";
  b.start = "tomorrow 9";
  EXPECT_THAT(BookingWords(b), ElementsAre("2", "1h", "--mem", "12g", "--at", "tomorrow 9"));
}

TEST(CommandLineTest, QuotesOnlyWhatAShellWouldSplit) {
  EXPECT_EQ(CommandLine({"2", "1h", "--mem", "12g", "--at", "14:00"}), "bk 2 1h --mem 12g --at 14:00");
  EXPECT_EQ(CommandLine({"1", "30m", "--at", "tomorrow 9", "--gpu", "0,1"}),
            "bk 1 30m --at 'tomorrow 9' --gpu 0,1");
  EXPECT_EQ(CommandLine({"1", "30m", "--at", "it's"}), "bk 1 30m --at 'it'\\''s'");
}

}  // namespace
}  // namespace bk::cli
