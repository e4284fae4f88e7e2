#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "service/booking_service.h"
#include "service/service_testing.h"

namespace bk::service {
namespace {

using engine::T;
using store::AnnouncementLevel;

class AnnouncementsTest : public ServiceTest {
 protected:
  Result<AnnouncementOutcome> Publish(const std::string& message, const std::string& level = "warning") {
    PublishRequest r;
    r.message = message;
    r.level = level;
    return service_->Publish(root_, r);
  }
  std::vector<std::string> Shown(const Actor& actor) {
    std::vector<std::string> out;
    for (const auto& a : service_->Announcements(actor, {}).value_or(std::vector<store::Announcement>{}))
      out.push_back(a.message);
    return out;
  }
  // The refusal of `r`, which must leave the ledger as it was.
  std::string Refused(const Result<AnnouncementOutcome>& r) {
    EXPECT_FALSE(r.has_value());
    return r ? "" : r.error().message;
  }

  const Actor root_{static_cast<uint32_t>(getuid()), "root", true};
  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
};

TEST_F(AnnouncementsTest, PublishedOneIsShownToEveryoneForADayByDefault) {
  auto out = Publish("  GPU 1 fan replacement tonight  ");
  ASSERT_TRUE(out.has_value()) << out.error().message;
  const store::Announcement& a = out->announcement;
  EXPECT_EQ(a.message, "GPU 1 fan replacement tonight");
  EXPECT_EQ(a.level, AnnouncementLevel::kWarning);
  EXPECT_EQ(a.starts_at, T("2026-11-29T18:52:00Z"));
  EXPECT_EQ(a.expires_at, T("2026-11-30T18:52:00Z"));
  EXPECT_EQ(a.actor_username, "root");
  EXPECT_EQ(Shown(alice_), std::vector<std::string>{"GPU 1 fan replacement tonight"});
  clock_->Set(T("2026-11-30T18:52:00Z"));
  EXPECT_TRUE(Shown(alice_).empty());
  // The archive still has it, for administrators.
  auto all = service_->Announcements(root_, {.all = true});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 1u);
  EXPECT_TRUE(service_->Announcements(alice_, {.all = true}).value().empty());
}

TEST_F(AnnouncementsTest, MostUrgentFirstThenOldest) {
  ASSERT_TRUE(Publish("a", "info").has_value());
  clock_->Set(T("2026-11-29T18:53:00Z"));
  ASSERT_TRUE(Publish("b", "critical").has_value());
  ASSERT_TRUE(Publish("c", "WARNING").has_value());
  clock_->Set(T("2026-11-29T18:54:00Z"));
  ASSERT_TRUE(Publish("d", "critical").has_value());
  EXPECT_EQ(Shown(alice_), (std::vector<std::string>{"b", "d", "c", "a"}));
}

TEST_F(AnnouncementsTest, ScheduledOneWaitsForItsStart) {
  PublishRequest r{.message = "later", .starts_at = T("2026-11-29T20:00:00Z"), .lifetime = 3600};
  auto out = service_->Publish(root_, r);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->announcement.expires_at, T("2026-11-29T21:00:00Z"));
  EXPECT_TRUE(Shown(alice_).empty());
  clock_->Set(T("2026-11-29T20:00:00Z"));
  EXPECT_EQ(Shown(alice_), std::vector<std::string>{"later"});
}

TEST_F(AnnouncementsTest, BadInputIsRefusedAndNothingIsWritten) {
  EXPECT_NE(Refused(Publish("   ")).find("empty"), std::string::npos);
  EXPECT_NE(Refused(Publish("x", "loud")).find("--level must be info, warning or critical"),
            std::string::npos);
  EXPECT_NE(Refused(Publish(std::string(1025, 'x'))).find("at most 1024"), std::string::npos);
  EXPECT_NE(Refused(Publish("bell\a")).find("control characters"), std::string::npos);
  EXPECT_NE(Refused(service_->Publish(root_, {.message = "x", .lifetime = 59})).find("1 minute to 365 days"),
            std::string::npos);
  EXPECT_NE(Refused(service_->Publish(root_, {.message = "x", .lifetime = 366 * engine::kDay}))
                .find("1 minute to 365 days"),
            std::string::npos);
  EXPECT_NE(Refused(service_->Publish(root_, {.message = "x", .expires_at = T("2026-11-29T18:00:00Z")}))
                .find("1 minute to 365 days"),
            std::string::npos);
  // 365 days and one line feed in a multi-line message are fine (checked
  // after the refusals: a refusal never creates the ledger).
  EXPECT_FALSE(std::filesystem::exists(config_.ledger_path));
  EXPECT_TRUE(service_->Publish(root_, {.message = "a\n\tb", .lifetime = 365 * engine::kDay}).has_value());
}

TEST_F(AnnouncementsTest, OnlyAdministratorsWrite) {
  auto out = service_->Publish(alice_, {.message = "hello"});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, ErrorKind::kPermission);
  EXPECT_FALSE(std::filesystem::exists(config_.ledger_path));
  auto a = Publish("mine");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(service_->EditAnnouncement(alice_, {.ref = a->announcement.id, .message = "x"}).error().kind,
            ErrorKind::kPermission);
  EXPECT_EQ(service_->ArchiveAnnouncement(alice_, a->announcement.id).error().kind, ErrorKind::kPermission);
  EXPECT_EQ(Shown(alice_), std::vector<std::string>{"mine"});
}

TEST_F(AnnouncementsTest, EditByPrefixIsAuditedBeforeAndAfter) {
  auto a = Publish("first");
  ASSERT_TRUE(a.has_value());
  const std::string id = a->announcement.id;
  clock_->Set(T("2026-11-29T19:00:00Z"));
  auto e = service_->EditAnnouncement(root_, {.ref = id.substr(0, 6), .level = "critical", .lifetime = 7200});
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->announcement.level, AnnouncementLevel::kCritical);
  EXPECT_EQ(e->announcement.message, "first");
  // Started already: the lifetime counts from now.
  EXPECT_EQ(e->announcement.expires_at, T("2026-11-29T21:00:00Z"));
  EXPECT_EQ(e->announcement.updated_at, T("2026-11-29T19:00:00Z"));
  auto log = service_->Log(root_, 10);
  ASSERT_TRUE(log.has_value());
  ASSERT_EQ(log->size(), 2u);
  EXPECT_EQ((*log)[0].action, "announcement-publish");
  EXPECT_EQ((*log)[1].action, "announcement-edit");
  EXPECT_EQ((*log)[1].message, id);
  EXPECT_NE((*log)[1].before.find("\"warning\""), std::string::npos);
  EXPECT_NE((*log)[1].after.find("\"critical\""), std::string::npos);

  EXPECT_EQ(service_->EditAnnouncement(root_, {.ref = id}).error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(service_->EditAnnouncement(root_, {.ref = "ffffffff", .message = "x"}).error().kind,
            ErrorKind::kNotFound);
}

TEST_F(AnnouncementsTest, ArchiveKeepsTheRowAndIsIdempotent) {
  auto a = Publish("going away");
  ASSERT_TRUE(a.has_value());
  const std::string id = a->announcement.id;
  auto gone = service_->ArchiveAnnouncement(root_, id.substr(0, 8));
  ASSERT_TRUE(gone.has_value()) << gone.error().message;
  EXPECT_TRUE(gone->changed);
  EXPECT_EQ(gone->announcement.archived_by_username, "root");
  EXPECT_TRUE(Shown(alice_).empty());
  auto again = service_->ArchiveAnnouncement(root_, id);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(service_->Log(root_, 10).value().size(), 2u);  // publish and one archive
  auto edit = service_->EditAnnouncement(root_, {.ref = id, .message = "back"});
  ASSERT_FALSE(edit.has_value());
  EXPECT_NE(edit.error().message.find("archived"), std::string::npos);
  EXPECT_EQ(service_->Announcements(root_, {.all = true}).value().size(), 1u);
}

TEST_F(AnnouncementsTest, AmbiguousPrefixIsRefused) {
  ASSERT_TRUE(Publish("creates the ledger").has_value());
  service_.reset();
  {
    auto s = store::LedgerStore::Open({.path = config_.ledger_path, .owner = getuid()});
    ASSERT_TRUE(s.has_value()) << s.error().message;
    for (const char* id : {"abc10000-0000-4000-8000-000000000000", "abc20000-0000-4000-8000-000000000000"})
      ASSERT_TRUE((*s)->InsertAnnouncement({.id = id,
                                            .message = id,
                                            .starts_at = T("2026-11-29T18:00:00Z"),
                                            .expires_at = T("2026-11-30T18:00:00Z")})
                      .has_value());
  }
  Restart();
  auto out = service_->ArchiveAnnouncement(root_, "abc");
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message.find("ambiguous"), std::string::npos);
  EXPECT_EQ(Shown(alice_).size(), 3u);
  auto one = service_->ArchiveAnnouncement(root_, "abc2");
  ASSERT_TRUE(one.has_value()) << one.error().message;
  EXPECT_EQ(one->announcement.message, "abc20000-0000-4000-8000-000000000000");
  EXPECT_EQ(service_->ArchiveAnnouncement(root_, " ").error().kind, ErrorKind::kInvalid);
}

}  // namespace
}  // namespace bk::service
