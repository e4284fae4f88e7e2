#include "server/calendar_feed.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "service/service_testing.h"

namespace bk::server {
namespace {

using engine::kHour;

// The feeds over a ledger held as the daemon holds it, rendered as
// "name @host: ID ID..." so the test reads what each file holds without an
// iCalendar parser.
class CalendarFeedTest : public service::ServiceTest {
 protected:
  CalendarFeedTest() { exclusive_store_ = true; }
  CalendarFeed Feed(int64_t interval_ms = 5000) {
    return CalendarFeed(
        dir_, "gpu-a",
        [](std::vector<engine::Reservation> rs, const std::string& who, const std::string& host,
           engine::Seconds since) {
          std::string text = who + " @" + host + ":";
          std::erase_if(rs, [&](const engine::Reservation& r) { return r.end < since; });
          for (const auto& r : rs)
            text += " " + r.ShortId() + (r.status == engine::Status::kCancelled ? "(cancelled)" : "");
          return text;
        },
        *service_, {static_cast<uint32_t>(getuid()), "owner", true}, interval_ms);
  }
  std::string Book(const service::Actor& who) {
    service::CreateRequest r;
    r.count = 1;
    r.duration = kHour;
    auto out = service_->Create(who, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation.ShortId() : "";
  }
  std::string Read(const std::string& user) {
    std::ifstream f(dir_ + "/" + user + ".ics");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  std::string dir_ = Path("feeds");
  const service::Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
  const service::Actor bob_{static_cast<uint32_t>(getuid()) + 1002, "bob", false};
};

TEST_F(CalendarFeedTest, EachUserGetsTheirOwnBookingsAndOnlyChangesAreWritten) {
  std::string a = Book(alice_), b = Book(bob_);
  CalendarFeed feed = Feed();
  ASSERT_TRUE(feed.Refresh(0).has_value());
  EXPECT_EQ(Read("alice"), "alice @gpu-a: " + a);
  EXPECT_EQ(Read("bob"), "bob @gpu-a: " + b);
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/alice.ics").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(feed.files_written(), 2u);

  // Nothing changed in the ledger: no pass at all, even after the interval.
  ASSERT_TRUE(feed.Refresh(60000).has_value());
  EXPECT_EQ(feed.files_written(), 2u);
  // alice cancels: her file alone is written again, at once.
  ASSERT_TRUE(service_->Cancel(alice_, {a}).has_value());
  ASSERT_TRUE(feed.Refresh(61000).has_value());
  EXPECT_EQ(feed.files_written(), 3u);
  EXPECT_EQ(Read("alice"), "alice @gpu-a: " + a + "(cancelled)");
  // bob cancels within the interval of that pass: his file waits for its end.
  ASSERT_TRUE(service_->Cancel(bob_, {b}).has_value());
  ASSERT_TRUE(feed.Refresh(62000).has_value());
  EXPECT_EQ(feed.files_written(), 3u);
  ASSERT_TRUE(feed.Refresh(66000).has_value());
  EXPECT_EQ(feed.files_written(), 4u);
  EXPECT_EQ(Read("bob"), "bob @gpu-a: " + b + "(cancelled)");
}

TEST_F(CalendarFeedTest, ADirectoryThatIsALinkIsRefused) {
  ASSERT_EQ(mkdir(Path("real").c_str(), 0755), 0);
  ASSERT_EQ(symlink(Path("real").c_str(), dir_.c_str()), 0);
  Book(alice_);
  auto st = Feed().Refresh(0);
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().message.find("is not a directory (a link is never followed)"), std::string::npos);
  EXPECT_EQ(access(Path("real/alice.ics").c_str(), F_OK), -1);
}

TEST_F(CalendarFeedTest, OnlyLoginNamesBecomeFileNames) {
  EXPECT_TRUE(FeedName("alice"));
  EXPECT_TRUE(FeedName("a.b-c_1"));
  EXPECT_FALSE(FeedName(""));
  EXPECT_FALSE(FeedName(".."));
  EXPECT_FALSE(FeedName("-x"));
  EXPECT_FALSE(FeedName("a/b"));
  EXPECT_FALSE(FeedName(std::string(65, 'a')));
}

}  // namespace
}  // namespace bk::server
