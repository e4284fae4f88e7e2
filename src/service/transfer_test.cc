#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "service/booking_service.h"
#include "service/service_testing.h"

namespace bk::service {
namespace {

// The new owner must be a real account: `nobody` is on every test machine.
// The ledger is a server's: its administrators' log shows what they did.
class TransferTest : public ServiceTest {
 protected:
  TransferTest() { config_.deployment = config::Deployment::kServer; }
  void SetUp() override {
    ServiceTest::SetUp();
    passwd* pw = getpwnam("nobody");
    if (!pw) GTEST_SKIP() << "no nobody account";
    nobody_ = {static_cast<uint32_t>(pw->pw_uid), "nobody", false};
  }

  engine::Reservation Book(const Actor& who) {
    CreateRequest r;
    r.count = 1;
    r.gpus = {1};
    r.duration = 2 * engine::kHour;
    r.mode = engine::Mode::kExclusive;
    auto out = service_->Create(who, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
  const Actor admin_{static_cast<uint32_t>(getuid()) + 1003, "root", true};
  Actor nobody_;
};

TEST_F(TransferTest, AnAdministratorGivesABookingToAnotherAccount) {
  auto r = Book(alice_);
  auto out = service_->Transfer(admin_, {r.ShortId(), "nobody", "alice left the lab"});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->reservation.uid, nobody_.uid);
  EXPECT_EQ(out->reservation.username, "nobody");
  EXPECT_EQ(out->from_uid, alice_.uid);
  EXPECT_EQ(out->from_username, "alice");
  EXPECT_EQ(out->reservation.gpus, r.gpus);
  EXPECT_EQ(out->reservation.start, r.start);
  EXPECT_EQ(out->reservation.end, r.end);

  // The new owner holds it; the old one no longer does.
  auto theirs = service_->List(nobody_, {});
  ASSERT_TRUE(theirs.has_value());
  ASSERT_EQ(theirs->reservations.size(), 1u);
  EXPECT_EQ(theirs->reservations[0].id, r.id);
  EXPECT_TRUE(service_->List(alice_, {})->reservations.empty());

  // Both owners hear of it, with the reason.
  for (const Actor& who : {alice_, nobody_}) {
    auto notes = service_->Notifications(who, 10);
    ASSERT_TRUE(notes.has_value());
    ASSERT_EQ(notes->size(), 1u) << who.username;
    EXPECT_EQ((*notes)[0].type, "reservation-transferred");
    EXPECT_EQ((*notes)[0].reason, "alice left the lab");
    EXPECT_EQ((*notes)[0].actor_username, "root");
  }

  // The administrator's log shows it, with the owner before and after.
  auto log = service_->Log(admin_, 10);
  ASSERT_TRUE(log.has_value());
  auto e = std::find_if(log->begin(), log->end(), [](const auto& x) { return x.action == "admin-transfer"; });
  ASSERT_NE(e, log->end());
  EXPECT_EQ(e->actor_username, "root");
  EXPECT_EQ(e->uid, nobody_.uid);
  EXPECT_NE(e->before.find("\"username\":\"alice\""), std::string::npos) << e->before;
  EXPECT_NE(e->after.find("\"username\":\"nobody\""), std::string::npos) << e->after;
  EXPECT_EQ(e->message, "from alice to nobody: alice left the lab");
}

TEST_F(TransferTest, RefusalsChangeNothing) {
  auto r = Book(alice_);
  auto denied = service_->Transfer(alice_, {r.ShortId(), "nobody", "mine"});
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().kind, ErrorKind::kPermission);

  auto unknown = service_->Transfer(admin_, {r.ShortId(), "no-such-user-gpubk", "x"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message,
            "no local account named no-such-user-gpubk; give an existing user's login name");

  EXPECT_EQ(service_->Transfer(admin_, {r.ShortId(), "nobody", "  "}).error().message,
            "--reason must be 1-512 characters");

  auto first = service_->Transfer(admin_, {r.ShortId(), "nobody", "handover"});
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto again = service_->Transfer(admin_, {r.ShortId(), "nobody", "handover"});
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().message, "reservation " + r.ShortId() + " already belongs to nobody");
  EXPECT_EQ(service_->Notifications(alice_, 10)->size(), 1u);
}

// The daemon's calendar counts the booking as the new owner's at once.
class DaemonTransferTest : public TransferTest {
 protected:
  DaemonTransferTest() { exclusive_store_ = true; }
};

TEST_F(DaemonTransferTest, TheLiveCalendarFollowsTheNewOwner) {
  auto r = Book(alice_);
  ASSERT_TRUE(service_->Transfer(admin_, {r.ShortId(), "nobody", "handover"}).has_value());
  // A limit of one asks the calendar for the total.
  auto status = service_->Status(nobody_, clock_->Now(), clock_->Now() + engine::kDay, 1);
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ(status->mine_total, 1);
  EXPECT_EQ(service_->Status(alice_, clock_->Now(), clock_->Now() + engine::kDay, 1)->mine_total, 0);
}

}  // namespace
}  // namespace bk::service
