#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "service/booking_service.h"
#include "service/service_testing.h"

namespace bk::service {
namespace {

using json = nlohmann::json;
using ::testing::AllOf, ::testing::EndsWith, ::testing::HasSubstr, ::testing::StartsWith;

using engine::T;

std::string FixturePath() {
  std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path().parent_path() / "tests/fixtures/upstream-ledger.json").string();
}

std::string ReadFixture() {
  std::ifstream in(FixturePath());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const Actor kRoot{0, "root", true};
const Actor kNobody{65534, "nobody", false};

constexpr const char* kEdited = "fff976bd-932f-4042-9c82-a925fbd25ec7";
constexpr const char* kExclusive = "ed0212da-a0eb-436d-a6ae-9eacf78ad698";
constexpr const char* kOwnerCancelled = "cefcb116-a813-4a8c-a671-7ea1deb852df";
constexpr const char* kAdminCancelled = "eef5b71e-1b14-4e3a-b847-84dd425b1611";

class ImportTest : public ServiceTest {
 protected:
  ImportTest() {
    config_.data_dir = root();
    config_.ledger_path = Path("ledger.db");
    clock_->Set(T("2026-11-29T18:50:00Z"));
  }
  void SetUp() override {
    ServiceTest::SetUp();
    fixture_ = ReadFixture();
    ASSERT_FALSE(fixture_.empty()) << FixturePath();
  }

  json Doc() const { return json::parse(fixture_); }

  bool LedgerExists() const { return std::filesystem::exists(config_.ledger_path); }

  int TotalReservations() {
    auto all = service_->List(kRoot, ListQuery{true, std::nullopt, true});
    EXPECT_TRUE(all.has_value()) << all.error().message;
    return all ? all->total : -1;
  }

  std::string fixture_;
};

TEST_F(ImportTest, ImportsTheCapturedLedger) {
  auto summary = service_->ImportUpstream(kRoot, fixture_);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->reservations, 5);
  EXPECT_EQ(summary->active, 2);
  EXPECT_EQ(summary->cancelled, 2);
  EXPECT_EQ(summary->expired, 1);
  EXPECT_EQ(summary->edits, 1);
  EXPECT_EQ(summary->notifications, 1);
  EXPECT_EQ(summary->operations, 8);  // 5 creates, 1 edit, 2 cancels
  EXPECT_TRUE(LedgerExists());

  Restart();  // everything below reads what was committed
  auto active = service_->List(kRoot, ListQuery{});
  ASSERT_TRUE(active.has_value()) << active.error().message;
  ASSERT_EQ(active->total, 2);
  EXPECT_EQ(active->reservations[0].id, kExclusive);  // same start and end; ordered by id
  EXPECT_EQ(active->reservations[1].id, kEdited);

  const engine::Reservation& edited = active->reservations[1];
  EXPECT_EQ(edited.uid, 0u);
  EXPECT_EQ(edited.username, "root");
  EXPECT_EQ(edited.gpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(edited.mode, engine::Mode::kShared);
  EXPECT_EQ(edited.share_units, 1);
  EXPECT_EQ(edited.memory_mb, 12288);
  EXPECT_EQ(edited.start, T("2026-11-29T18:45:00Z"));
  EXPECT_EQ(edited.end, T("2026-11-29T20:45:00Z"));
  EXPECT_EQ(edited.created_at, T("2026-11-29T18:48:58Z"));
  EXPECT_EQ(edited.updated_at, T("2026-11-29T18:49:05Z"));
  EXPECT_EQ(edited.op_id, "demo-op-1");
  EXPECT_EQ(edited.op_signature, "1195ee741351f01dc7c3170e253404c9406b68c962090d594125ffcecffc1e87");
  EXPECT_EQ(edited.edit_count, 1);
  EXPECT_FALSE(edited.cancellation.has_value());
  EXPECT_EQ(active->reservations[0].mode, engine::Mode::kExclusive);
  EXPECT_EQ(active->reservations[0].gpus, (std::vector<int>{3}));
  EXPECT_TRUE(active->reservations[0].op_signature.empty());

  auto everything = service_->List(kRoot, ListQuery{true, std::nullopt, true});
  ASSERT_TRUE(everything.has_value());
  EXPECT_EQ(everything->total, 5);
  auto mine = service_->List(kRoot, ListQuery{true, std::nullopt, false});
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->total, 4);
  auto expired = std::find_if(mine->reservations.begin(), mine->reservations.end(),
                              [](const engine::Reservation& r) { return r.ShortId() == "eea87b44"; });
  ASSERT_NE(expired, mine->reservations.end());
  EXPECT_EQ(expired->status, engine::Status::kExpired);

  EXPECT_EQ(service_->CheckPolicy()->name(), "match");
}

TEST_F(ImportTest, HistoryShowsImportEditAndCancellations) {
  ASSERT_TRUE(service_->ImportUpstream(kRoot, fixture_).has_value());
  Restart();

  auto edited = service_->History(kRoot, "fff976bd");
  ASSERT_TRUE(edited.has_value()) << edited.error().message;
  ASSERT_EQ(edited->events.size(), 2u);
  const store::Event& imported = edited->events[0];
  EXPECT_EQ(imported.action, "import");
  EXPECT_EQ(imported.message, "imported from ledger.json");
  EXPECT_EQ(imported.op_id, "demo-op-1");
  EXPECT_EQ(imported.ts, T("2026-11-29T18:48:58Z"));
  EXPECT_EQ(imported.end, T("2026-11-29T19:45:00Z"));  // as booked, before the edit
  EXPECT_EQ(imported.actor_uid, 0u);
  const store::Event& edit = edited->events[1];
  EXPECT_EQ(edit.action, "edit");
  EXPECT_EQ(edit.op_id, "demo-edit-1");
  EXPECT_EQ(edit.signature, "9e9afe12881e825c34c1e23fc369336ecf975478793cb0f985068eb14600edac");
  EXPECT_EQ(edit.ts, T("2026-11-29T18:49:05Z"));
  EXPECT_EQ(edit.actor_username, "root");
  EXPECT_EQ(edit.end, T("2026-11-29T20:45:00Z"));
  EXPECT_EQ(edit.transaction_id, imported.transaction_id);
  json before = json::parse(edit.before);
  json after = json::parse(edit.after);
  EXPECT_EQ(before["end_at"], "2026-11-29T19:45:00Z");
  EXPECT_EQ(after["end_at"], "2026-11-29T20:45:00Z");
  EXPECT_EQ(after["gpus"], json::array({1, 2}));
  EXPECT_EQ(after["expected_memory_mb"], 12288);
  EXPECT_EQ(after["share_units"], 1);
  EXPECT_EQ(after["mode"], "shared");

  auto cancelled = service_->History(kRoot, "cefcb116");
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().message;
  EXPECT_EQ(cancelled->reservation.status, engine::Status::kCancelled);
  EXPECT_EQ(cancelled->reservation.share_units, 2);
  ASSERT_TRUE(cancelled->reservation.cancellation.has_value());
  EXPECT_EQ(cancelled->reservation.cancellation->kind, engine::CancelKind::kOwner);
  EXPECT_EQ(cancelled->reservation.cancellation->reason, "cancelled by reservation owner");
  EXPECT_EQ(cancelled->reservation.cancellation->op_id, "demo-cancel-1");
  EXPECT_EQ(cancelled->reservation.cancellation->at, T("2026-11-29T18:49:07Z"));
  ASSERT_EQ(cancelled->events.size(), 2u);
  EXPECT_EQ(cancelled->events[1].action, "cancel");
  EXPECT_EQ(cancelled->events[1].message, "cancelled");
  EXPECT_EQ(cancelled->events[1].op_id, "demo-cancel-1");

  // The administrator's cancellation is in the owner's history, with the notice.
  auto admin = service_->History(kNobody, "eef5");
  ASSERT_TRUE(admin.has_value()) << admin.error().message;
  EXPECT_EQ(admin->reservation.gpus, (std::vector<int>{2, 1}));  // placement order kept
  EXPECT_EQ(admin->reservation.memory_mb, 8192);
  ASSERT_TRUE(admin->reservation.cancellation.has_value());
  EXPECT_EQ(admin->reservation.cancellation->kind, engine::CancelKind::kAdministrator);
  EXPECT_EQ(admin->reservation.cancellation->actor_username, "root");
  EXPECT_EQ(admin->reservation.cancellation->reason, "maintenance on GPUs 1-2");
  ASSERT_EQ(admin->events.size(), 2u);
  EXPECT_EQ(admin->events[1].action, "admin-cancel");
  EXPECT_EQ(admin->events[1].uid, 65534u);
  EXPECT_EQ(admin->events[1].actor_uid, 0u);
  EXPECT_EQ(admin->events[1].message, "maintenance on GPUs 1-2");
  ASSERT_EQ(admin->notifications.size(), 1u);
  EXPECT_EQ(admin->notifications[0].id, "5d0c8a4e-2f6b-4f1e-9b3a-7c1d2e4f6a80");
  EXPECT_EQ(admin->notifications[0].type, "reservation-admin-cancelled");
  EXPECT_EQ(admin->notifications[0].uid, 65534u);
  EXPECT_EQ(admin->notifications[0].created_at, T("2026-11-29T18:52:41Z"));
  EXPECT_THAT(admin->notifications[0].message, HasSubstr("cancelled by administrator root"));
  auto notices = service_->Notifications(kNobody, 10);
  ASSERT_TRUE(notices.has_value());
  EXPECT_EQ(notices->size(), 1u);

  // The owner's log reads in time order across records.
  auto log = service_->Log(kRoot, 100);
  ASSERT_TRUE(log.has_value());
  ASSERT_EQ(log->size(), 6u);  // 4 imports, 1 edit, 1 cancel
  EXPECT_TRUE(std::is_sorted(log->begin(), log->end(),
                             [](const store::Event& a, const store::Event& b) { return a.ts < b.ts; }));
}

TEST_F(ImportTest, ImportedOperationIdsReplayAndStayTaken) {
  ASSERT_TRUE(service_->ImportUpstream(kRoot, fixture_).has_value());
  Restart();

  auto create = service_->Operation(kRoot, "demo-op-1");
  ASSERT_TRUE(create.has_value()) << create.error().message;
  EXPECT_TRUE(create->found);
  EXPECT_EQ(create->action, "create");
  ASSERT_TRUE(create->reservation.has_value());
  EXPECT_EQ(create->reservation->id, kEdited);

  auto edit = service_->Operation(kRoot, "demo-edit-1");
  ASSERT_TRUE(edit.has_value());
  EXPECT_TRUE(edit->found);
  EXPECT_EQ(edit->action, "edit");

  auto cancel = service_->Operation(kRoot, "demo-cancel-1");
  ASSERT_TRUE(cancel.has_value());
  EXPECT_TRUE(cancel->found);
  EXPECT_EQ(cancel->action, "cancel");
  EXPECT_EQ(cancel->reservation->id, kOwnerCancelled);

  // Automatic create op-ids were imported too, scoped to their owner.
  auto auto_id = service_->Operation(kNobody, "6e7990f6-ac46-4b2c-9cd6-1655f4f36fb5");
  ASSERT_TRUE(auto_id.has_value());
  EXPECT_TRUE(auto_id->found);
  EXPECT_EQ(auto_id->reservation->id, kAdminCancelled);
  auto elsewhere = service_->Operation(kNobody, "demo-op-1");
  ASSERT_TRUE(elsewhere.has_value());
  EXPECT_FALSE(elsewhere->found);

  // An edit's op-id cannot be reused for a new booking.
  CreateRequest req;
  req.count = 1;
  req.duration = 30 * engine::kMinute;
  req.op_id = "demo-edit-1";
  auto reused = service_->Create(kRoot, req);
  ASSERT_FALSE(reused.has_value());
  EXPECT_THAT(reused.error().message, HasSubstr("already used for a different write"));
}

TEST_F(ImportTest, ImportedBookingsHoldTheirGpus) {
  ASSERT_TRUE(service_->ImportUpstream(kRoot, fixture_).has_value());
  CreateRequest req;
  req.count = 1;
  req.duration = 30 * engine::kMinute;
  req.gpus = {3};
  req.start = T("2026-11-29T18:50:00Z");
  auto blocked = service_->Create(kRoot, req);
  ASSERT_FALSE(blocked.has_value());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kConflict);

  req.gpus = {0};  // eea87b44 expired; cefcb116 was cancelled
  auto free = service_->Create(kRoot, req);
  ASSERT_TRUE(free.has_value()) << free.error().message;
  EXPECT_EQ(free->status, "created");
}

TEST_F(ImportTest, LegacyRecordsGetDefaults) {
  json doc = {{"version", 1},
              {"future_top_level", {{"anything", true}}},
              {"reservations", json::array({{{"id", "legacy-1"},
                                             {"uid", "1000"},
                                             {"gpus", {2}},
                                             {"mode", "shared"},
                                             {"start_at", "2026-11-29T21:00:00+02:00"},
                                             {"end_at", "2026-11-29T20:00:00Z"},
                                             {"status", "active"},
                                             {"some_future_field", {1, 2, 3}}}})}};
  auto summary = service_->ImportUpstream(kRoot, doc.dump());
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->reservations, 1);
  EXPECT_EQ(summary->operations, 1);

  const Actor owner{1000, "alice", false};
  auto list = service_->List(owner, ListQuery{});
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->total, 1);
  const engine::Reservation& r = list->reservations[0];
  EXPECT_EQ(r.username, "1000");
  EXPECT_EQ(r.share_units, 1);
  EXPECT_EQ(r.start, T("2026-11-29T19:00:00Z"));
  EXPECT_EQ(r.created_at, r.start);
  EXPECT_EQ(r.updated_at, r.start);
  EXPECT_EQ(r.op_id.size(), 36u);  // a fresh UUID
  EXPECT_TRUE(r.op_signature.empty());
  auto op = service_->Operation(owner, r.op_id);
  ASSERT_TRUE(op.has_value());
  EXPECT_TRUE(op->found);
}

TEST_F(ImportTest, SameOpIdUnderAnotherUidIsAllowed) {
  json doc = Doc();
  doc["reservations"][4]["op_id"] = "demo-op-1";  // uid 65534, not root
  auto summary = service_->ImportUpstream(kRoot, doc.dump());
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  auto op = service_->Operation(kNobody, "demo-op-1");
  ASSERT_TRUE(op.has_value());
  EXPECT_TRUE(op->found);
  EXPECT_EQ(op->reservation->id, kAdminCancelled);
}

struct BadCase {
  const char* name;
  std::function<void(json&)> mutate;
  const char* expected;  // part of the message, with the record path
};

class ImportRefusalTest : public ImportTest, public ::testing::WithParamInterface<BadCase> {};

TEST_P(ImportRefusalTest, RefusesAndWritesNothing) {
  json doc = Doc();
  GetParam().mutate(doc);
  auto result = service_->ImportUpstream(kRoot, doc.dump());
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(result.error().message,
              AllOf(StartsWith("ledger import refused: "), HasSubstr(GetParam().expected),
                    EndsWith("; nothing was imported")));
  EXPECT_FALSE(LedgerExists()) << "a refused import must not create the ledger";
  EXPECT_EQ(TotalReservations(), 0);
}

const BadCase kBadCases[] = {
    {"GpuNotInteger",
     [](json& d) {
       d["reservations"][3]["gpus"] = {0, "1"};
     },
     "reservations[3].gpus[1] must be an integer"},
    {"GpuBoolean", [](json& d) { d["reservations"][0]["gpus"] = {true}; },
     "reservations[0].gpus[0] must be an integer"},
    {"GpuFloat", [](json& d) { d["reservations"][0]["gpus"] = {1.0}; },
     "reservations[0].gpus[0] must be an integer"},
    {"GpuRepeated",
     [](json& d) {
       d["reservations"][1]["gpus"] = {1, 1};
     },
     "reservations[1].gpus[1] repeats GPU 1"},
    {"GpusEmpty", [](json& d) { d["reservations"][1]["gpus"] = json::array(); },
     "reservations[1].gpus must be a non-empty list"},
    {"GpuBeyondCount", [](json& d) { d["reservations"][2]["gpus"] = {7}; },
     "reservations[2].gpus[0] is GPU 7 but this ledger has 4 GPUs; import with BK_GPU_COUNT=8 or edit the "
     "file"},
    {"GpuBeyondBound", [](json& d) { d["reservations"][2]["gpus"] = {1024}; },
     "reservations[2].gpus[0] must be between 0 and 1023"},
    {"DuplicateId", [](json& d) { d["reservations"][2]["id"] = d["reservations"][0]["id"]; },
     "reservations[2].id repeats reservation ID eea87b44-fa5e-4262-9b70-068d6760b840 of reservations[0]"},
    {"MissingId", [](json& d) { d["reservations"][2].erase("id"); }, "reservations[2].id is required"},
    {"IdWithControlCharacter", [](json& d) { d["reservations"][2]["id"] = "a\tb"; },
     "reservations[2].id must be 1-128 characters without control characters"},
    {"DuplicateCreateOpId", [](json& d) { d["reservations"][2]["op_id"] = "demo-op-1"; },
     "reservations[2].op_id reuses operation ID demo-op-1 of UID 0 already used by reservations[1].op_id"},
    {"CancelReusesEditOpId",
     [](json& d) { d["reservations"][3]["cancel_operation"]["op_id"] = "demo-edit-1"; },
     "reservations[3].cancel_operation.op_id reuses operation ID demo-edit-1 of UID 0 already used by "
     "reservations[1].edit_operations[0].op_id"},
    {"EditReusesCreateOpId",
     [](json& d) { d["reservations"][1]["edit_operations"][0]["op_id"] = "demo-op-1"; },
     "reservations[1].edit_operations[0].op_id reuses operation ID demo-op-1"},
    {"OpIdTooLong", [](json& d) { d["reservations"][0]["op_id"] = std::string(129, 'a'); },
     "reservations[0].op_id must be 1-128 characters"},
    {"BadStartTime", [](json& d) { d["reservations"][2]["start_at"] = "tomorrow"; },
     "reservations[2].start_at must be a timestamp"},
    {"TimeNotString", [](json& d) { d["reservations"][2]["end_at"] = 1764442800; },
     "reservations[2].end_at must be a timestamp"},
    {"EndBeforeStart", [](json& d) { d["reservations"][0]["end_at"] = "2026-11-29T18:45:00Z"; },
     "reservations[0].end_at must be after reservations[0].start_at"},
    {"BadCreatedAt", [](json& d) { d["reservations"][0]["created_at"] = "2026-13-01T00:00:00Z"; },
     "reservations[0].created_at must be a timestamp"},
    {"BadEditTime", [](json& d) { d["reservations"][1]["edit_operations"][0]["at"] = "yesterday"; },
     "reservations[1].edit_operations[0].at must be a timestamp"},
    {"BadEditState", [](json& d) { d["reservations"][1]["edit_operations"][0]["after"]["mode"] = "auto"; },
     "reservations[1].edit_operations[0].after.mode must be \"shared\" or \"exclusive\""},
    {"EditWithoutSignature", [](json& d) { d["reservations"][1]["edit_operations"][0].erase("signature"); },
     "reservations[1].edit_operations[0].signature is required"},
    {"BadStatus", [](json& d) { d["reservations"][2]["status"] = "pending"; },
     "reservations[2].status must be one of active, cancelled, expired"},
    {"BadMode", [](json& d) { d["reservations"][0]["mode"] = "x"; },
     "reservations[0].mode must be \"shared\" or \"exclusive\""},
    {"NegativeUid", [](json& d) { d["reservations"][4]["uid"] = -1; },
     "reservations[4].uid must be a UID between 0 and 4294967294"},
    {"UidTooLarge", [](json& d) { d["reservations"][4]["uid"] = 4294967295; },
     "reservations[4].uid must be a UID"},
    {"UidBoolean", [](json& d) { d["reservations"][4]["uid"] = false; }, "reservations[4].uid must be a UID"},
    {"UsernameTooLong", [](json& d) { d["reservations"][4]["username"] = std::string(257, 'u'); },
     "reservations[4].username must be 1-256 characters"},
    {"MemoryZero", [](json& d) { d["reservations"][1]["expected_memory_mb"] = 0; },
     "reservations[1].expected_memory_mb must be a positive integer"},
    {"ShareUnitsZero", [](json& d) { d["reservations"][0]["share_units"] = 0; },
     "reservations[0].share_units must be a positive integer"},
    {"ShareUnitsBeyondCapacity", [](json& d) { d["reservations"][0]["share_units"] = 3; },
     "reservations[0].share_units is 3 but this ledger allows 2 share slots per GPU"},
    {"CancelKind", [](json& d) { d["reservations"][3]["cancel_operation"]["kind"] = "moderator"; },
     "reservations[3].cancel_operation.kind must be \"owner\" or \"administrator\""},
    {"CancelOnActiveRecord", [](json& d) { d["reservations"][3]["status"] = "active"; },
     "reservations[3].cancel_operation is present but reservations[3].status is active"},
    {"DuplicateNotificationId",
     [](json& d) {
       d["reservations"][4]["notifications"].push_back(d["reservations"][4]["notifications"][0]);
     },
     "reservations[4].notifications[1].id repeats notification ID"},
    {"NotificationWithoutType", [](json& d) { d["reservations"][4]["notifications"][0].erase("type"); },
     "reservations[4].notifications[0].type is required"},
    {"JobNotObject", [](json& d) { d["reservations"][2]["job"] = "run.sh"; },
     "reservations[2].job must be an object or null"},
    {"RecordNotObject", [](json& d) { d["reservations"][1] = "fff976bd"; },
     "reservations[1] must be an object"},
    {"VersionTwo", [](json& d) { d["version"] = 2; }, "unsupported ledger version 2"},
    {"VersionBoolean", [](json& d) { d["version"] = true; }, "unsupported ledger version true"},
    {"VersionMissing", [](json& d) { d.erase("version"); }, "unsupported ledger version"},
    {"BadLastTransactionId", [](json& d) { d["last_transaction_id"] = ""; },
     "last_transaction_id must be 1-128 characters"},
    {"ReservationsNotList", [](json& d) { d["reservations"] = json::object(); },
     "reservations must be a list"},
    {"PolicyGpuCount", [](json& d) { d["policy"]["gpu_count"] = 8; },
     "policy.gpu_count is 8 in ledger.json but 4 here"},
    {"PolicyGranularity", [](json& d) { d["policy"]["granularity_seconds"] = 600; },
     "policy.granularity_seconds is 600 in ledger.json but 300 here; the imported calendar would be "
     "inconsistent; "
     "import with BK_SLOT_MINUTES=10"},
    {"PolicyBoth",
     [](json& d) {
       d["policy"]["gpu_count"] = 8;
       d["policy"]["granularity_seconds"] = 900;
     },
     "import with BK_GPU_COUNT=8 BK_SLOT_MINUTES=15"},
};

INSTANTIATE_TEST_SUITE_P(Malformed, ImportRefusalTest, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return std::string(info.param.name);
                         });

TEST_F(ImportTest, RefusesTextThatIsNotJson) {
  auto result = service_->ImportUpstream(kRoot, "{\"version\": 1, \"reservations\": [");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(result.error().message, AllOf(StartsWith("ledger import refused: the file is not valid JSON ("),
                                            EndsWith("; nothing was imported")));
  EXPECT_FALSE(LedgerExists());
}

TEST_F(ImportTest, RefusalLeavesAnExistingEmptyLedgerEmpty) {
  // A ledger file that exists but holds nothing (a failed first booking leaves one).
  CreateRequest req;
  req.count = 9;  // refused: only 4 GPUs
  req.duration = 30 * engine::kMinute;
  EXPECT_FALSE(service_->Create(kRoot, req).has_value());
  json doc = Doc();
  doc["reservations"][4]["gpus"] = {1, "2"};
  ASSERT_FALSE(service_->ImportUpstream(kRoot, doc.dump()).has_value());
  EXPECT_EQ(TotalReservations(), 0);
  auto log = service_->Log(kRoot, 10);
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(log->empty());
}

TEST_F(ImportTest, RefusesANonEmptyLedger) {
  CreateRequest req;
  req.count = 1;
  req.duration = 30 * engine::kMinute;
  ASSERT_TRUE(service_->Create(kRoot, req).has_value());
  auto result = service_->ImportUpstream(kRoot, fixture_);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(result.error().message,
            "ledger import needs an empty ledger; " + config_.ledger_path + " already holds 1 reservation");
  EXPECT_EQ(TotalReservations(), 1);
}

TEST_F(ImportTest, RefusesASecondImport) {
  ASSERT_TRUE(service_->ImportUpstream(kRoot, fixture_).has_value());
  Restart();
  auto again = service_->ImportUpstream(kRoot, fixture_);
  ASSERT_FALSE(again.has_value());
  EXPECT_THAT(again.error().message, HasSubstr("already holds 5 reservations"));
  EXPECT_EQ(TotalReservations(), 5);
}

TEST_F(ImportTest, OnlyAdministratorsImport) {
  auto result = service_->ImportUpstream(kNobody, fixture_);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(result.error().message, "only the ledger owner or root can import data");
  EXPECT_FALSE(LedgerExists());
}

}  // namespace
}  // namespace bk::service
