#include "surface/documents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "engine/civil_time.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::surface {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

engine::Seconds T(const char* iso) {
  auto t = engine::ParseIsoTime(iso, engine::FixedZone(0));
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

constexpr uint32_t kMe = 1000;
constexpr uint32_t kOther = 1001;

engine::Policy Policy() {
  engine::Policy p;
  p.gpu_count = 4;
  p.share_capacity = 2;
  return p;
}

engine::Reservation Shared() {
  engine::Reservation r;
  r.id = "0123abcd-1111-4222-8333-444455556666";
  r.uid = kMe;
  r.username = "me";
  r.gpus = {2, 0};
  r.mode = engine::Mode::kShared;
  r.share_units = 1;
  r.memory_mb = 12288;
  r.start = T("2026-11-29T18:50:00Z");
  r.end = T("2026-11-29T19:50:00Z");
  r.created_at = r.updated_at = T("2026-11-29T18:49:00Z");
  r.op_id = "job-1";
  r.edit_count = 2;
  return r;
}

engine::Reservation Exclusive() {
  engine::Reservation r = Shared();
  r.mode = engine::Mode::kExclusive;
  r.share_units = 2;
  r.memory_mb.reset();
  return r;
}

const engine::Seconds kNow = T("2026-11-29T18:52:00Z");

json BookingDoc(const service::BookingOutcome& o, uint32_t caller = kMe, engine::Seconds now = kNow) {
  return json::parse(BookingResultDoc(o, caller, Policy(), now));
}

TEST(BookingResultDocTest, EnvelopeAndReservation) {
  service::BookingOutcome o;
  o.status = "created";
  o.reservation = Shared();
  o.allocator_source = "builtin";
  o.warnings = {"watch out"};
  service::GpuView v;
  v.gpu = 2;
  v.live_status = gpu::LiveStatus::kIdle;
  v.memory_total_mb = 24576;
  v.memory_free_mb = 20000;
  v.budget_after_mb = 10000;
  o.selected = {v};
  json d = BookingDoc(o);

  EXPECT_EQ(d["schema_version"], "bk.agent.v1");
  EXPECT_EQ(d["kind"], "booking_result");
  ASSERT_TRUE(d["node"].is_object());
  EXPECT_EQ(d["node"]["schema"], 1);
  EXPECT_TRUE(d["node"]["id"].is_string());
  EXPECT_EQ(d["status"], "created");
  EXPECT_EQ(d["warnings"], json::array({"watch out"}));
  EXPECT_TRUE(d["worker"].is_null());
  EXPECT_EQ(d["allocator"]["source"], "builtin");
  EXPECT_EQ(d["allocator"]["reason"], "");

  const json& r = d["reservation"];
  EXPECT_EQ(r["id"], "0123abcd-1111-4222-8333-444455556666");
  EXPECT_EQ(r["short_id"], "0123abcd");
  EXPECT_EQ(r["uid"], kMe);
  EXPECT_EQ(r["username"], "me");
  EXPECT_EQ(r["mine"], true);
  EXPECT_EQ(r["gpus"], json::array({2, 0}));
  EXPECT_EQ(r["mode"], "shared");
  EXPECT_EQ(r["start_at"], "2026-11-29T18:50:00Z");
  EXPECT_EQ(r["end_at"], "2026-11-29T19:50:00Z");
  EXPECT_EQ(r["status"], "active");
  EXPECT_EQ(r["expected_memory_mb_per_gpu"], 12288);
  EXPECT_EQ(r["share_units_per_gpu"], 1);
  EXPECT_EQ(r["share_capacity_units_per_gpu"], 2);
  EXPECT_TRUE(r["cpus"].is_null());
  EXPECT_TRUE(r["ram_mb"].is_null());
  EXPECT_EQ(r["edit_count"], 2);
  EXPECT_TRUE(r["cancellation"].is_null());
  EXPECT_TRUE(r.contains("job"));

  const json& sel = d["allocation"]["selected"];
  ASSERT_EQ(sel.size(), 1u);
  EXPECT_EQ(sel[0]["gpu"], 2);
  EXPECT_EQ(sel[0]["live_status"], "idle");
  EXPECT_EQ(sel[0]["memory_total_mb"], 24576);
  EXPECT_EQ(sel[0]["memory_free_now_mb"], 20000);
  EXPECT_EQ(sel[0]["projected_memory_headroom_mb"], 10000);
}

TEST(BookingResultDocTest, ExclusiveHasNoShareFields) {
  service::BookingOutcome o;
  o.status = "created";
  o.reservation = Exclusive();
  json r = BookingDoc(o)["reservation"];
  EXPECT_EQ(r["mode"], "exclusive");
  EXPECT_TRUE(r["share_units_per_gpu"].is_null());
  EXPECT_TRUE(r["share_capacity_units_per_gpu"].is_null());
  EXPECT_TRUE(r["expected_memory_mb_per_gpu"].is_null());
  EXPECT_EQ(BookingDoc(o)["allocation"]["selected"], json::array());
}

TEST(BookingResultDocTest, HostBudgetFieldsWhenDeclared) {
  service::BookingOutcome o;
  o.reservation = Shared();
  o.reservation.cpus = 4;
  o.reservation.ram_mb = 8192;
  json r = BookingDoc(o)["reservation"];
  EXPECT_EQ(r["cpus"], 4);
  EXPECT_EQ(r["ram_mb"], 8192);
}

TEST(BookingResultDocTest, ReplayAndDerivedStatus) {
  service::BookingOutcome o;
  o.status = "exists";
  o.replayed = true;
  o.allocator_source = "idempotent-replay";
  o.reservation = Shared();
  json d = BookingDoc(o, kMe, T("2026-11-29T19:50:00Z"));  // at the end: expired
  EXPECT_EQ(d["status"], "exists");
  EXPECT_EQ(d["allocator"]["source"], "idempotent-replay");
  EXPECT_THAT(d["allocator"]["reason"].get<std::string>(), HasSubstr("without rerunning allocation"));
  EXPECT_EQ(d["reservation"]["status"], "expired");
  EXPECT_EQ(BookingDoc(o, kMe, T("2026-11-29T19:49:59Z"))["reservation"]["status"], "active");
}

TEST(BookingResultDocTest, OthersSeeLess) {
  service::BookingOutcome o;
  o.reservation = Shared();
  o.reservation.status = engine::Status::kCancelled;
  o.reservation.cancellation =
      engine::Cancellation{kNow, engine::CancelKind::kAdministrator, "maintenance", 0, "root", "op"};
  json theirs = BookingDoc(o, kOther)["reservation"];
  EXPECT_EQ(theirs["mine"], false);
  EXPECT_TRUE(theirs["edit_count"].is_null());
  EXPECT_TRUE(theirs["cancellation"].is_null());
  EXPECT_EQ(theirs["status"], "cancelled");
  json mine = BookingDoc(o, kMe)["reservation"];
  ASSERT_TRUE(mine["cancellation"].is_object());
  EXPECT_EQ(mine["cancellation"]["kind"], "administrator");
  EXPECT_EQ(mine["cancellation"]["reason"], "maintenance");
  EXPECT_EQ(mine["cancellation"]["actor_username"], "root");
  EXPECT_EQ(mine["cancellation"]["at"], "2026-11-29T18:52:00Z");
}

TEST(ErrorDocTest, KindTypeAndCode) {
  json d = json::parse(ErrorDoc(Error{ErrorKind::kInvalid, "duration must look like 30m"}));
  EXPECT_EQ(d["schema_version"], "bk.agent.v1");
  EXPECT_EQ(d["kind"], "error");
  EXPECT_EQ(d["error"]["message"], "duration must look like 30m");
  EXPECT_EQ(d["error"]["type"], "BookingError");
  EXPECT_EQ(d["error"]["code"], "invalid");

  struct Case {
    ErrorKind kind;
    const char* type;
    const char* code;
  };
  for (const Case& c : {Case{ErrorKind::kConflict, "BookingError", "conflict"},
                        Case{ErrorKind::kPermission, "BookingError", "permission"},
                        Case{ErrorKind::kNotFound, "BookingError", "not-found"},
                        Case{ErrorKind::kCorrupt, "LedgerCorruptionError", "corrupt"},
                        Case{ErrorKind::kBusy, "TimeoutError", "busy"}, Case{ErrorKind::kIo, "OSError", "io"},
                        Case{ErrorKind::kPolicy, "DaemonPolicyError", "policy"}}) {
    json e = json::parse(ErrorDoc(Error{c.kind, "m"}));
    EXPECT_EQ(e["error"]["type"], c.type) << c.code;
    EXPECT_EQ(e["error"]["code"], c.code);
  }
  // Messages with quotes and control characters stay valid JSON.
  json odd = json::parse(ErrorDoc(Error{ErrorKind::kInvalid, "bad \"x\"\n\ty"}));
  EXPECT_EQ(odd["error"]["message"], "bad \"x\"\n\ty");
}

TEST(ReservationsDocTest, TotalAndTruncated) {
  service::ListResult list;
  list.reservations = {Shared(), Exclusive()};
  list.reservations[1].id = "ffff0000-1111-4222-8333-444455556666";
  list.reservations[1].uid = kOther;
  list.total = 5;
  list.truncated = true;
  json d = json::parse(ReservationsDoc(list, kMe, Policy(), kNow));
  EXPECT_EQ(d["kind"], "reservations");
  EXPECT_EQ(d["schema_version"], "bk.agent.v1");
  EXPECT_FALSE(d.contains("node"));
  EXPECT_EQ(d["total"], 5);
  EXPECT_EQ(d["truncated"], true);
  ASSERT_EQ(d["reservations"].size(), 2u);
  EXPECT_EQ(d["reservations"][0]["short_id"], "0123abcd");
  EXPECT_EQ(d["reservations"][0]["mine"], true);
  EXPECT_EQ(d["reservations"][1]["short_id"], "ffff0000");
  EXPECT_EQ(d["reservations"][1]["mine"], false);

  json empty = json::parse(ReservationsDoc(service::ListResult{}, kMe, Policy(), kNow));
  EXPECT_EQ(empty["reservations"], json::array());
  EXPECT_EQ(empty["total"], 0);
  EXPECT_EQ(empty["truncated"], false);
}

TEST(CancellationDocTest, CarriesTheCancelledReservation) {
  service::CancelOutcome o;
  o.reservation = Shared();
  o.reservation.status = engine::Status::kCancelled;
  o.reservation.cancellation = engine::Cancellation{
      kNow, engine::CancelKind::kOwner, "cancelled by reservation owner", kMe, "me", "c"};
  o.replayed = true;
  json d = json::parse(CancellationDoc(o, kMe, Policy(), kNow));
  EXPECT_EQ(d["kind"], "cancellation_result");
  EXPECT_EQ(d["schema_version"], "bk.agent.v1");
  EXPECT_EQ(d["replayed"], true);
  EXPECT_EQ(d["reservation"]["status"], "cancelled");
  EXPECT_EQ(d["reservation"]["cancellation"]["kind"], "owner");
}

TEST(DumpTest, LineAndPretty) {
  std::string compact = ErrorDoc(Error{ErrorKind::kInvalid, "x"});
  std::string line = Dump(compact, JsonStyle::kLine);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(
      line.rfind(
          R"({"error": {"code": "invalid", "message": "x", "type": "BookingError"}, "kind": "error", )", 0),
      0u)
      << line;
  EXPECT_EQ(json::parse(line), json::parse(compact));
  // Python's separators never enter strings, and nothing is escaped that JSON does not need.
  EXPECT_EQ(Dump(R"({"a":"x:y, z","b":[],"c":{},"d":"é\n"})", JsonStyle::kLine),
            R"({"a": "x:y, z", "b": [], "c": {}, "d": "é\n"})");
  std::string pretty = Dump(compact, JsonStyle::kPretty);
  EXPECT_NE(pretty.find("\n  "), std::string::npos);
  EXPECT_EQ(json::parse(pretty), json::parse(compact));
}

TEST(TextTest, ShareSlotsAndDurations) {
  engine::Policy p = Policy();
  EXPECT_EQ(ShareText(Shared(), p), "share=1 slot (max 2) ");
  engine::Reservation two = Shared();
  two.share_units = 2;
  EXPECT_EQ(ShareText(two, p), "share=2 slots (max 2) ");
  EXPECT_EQ(ShareText(Exclusive(), p), "");
  EXPECT_EQ(SlotsText(Shared(), p), "1/2");
  EXPECT_EQ(SlotsText(Exclusive(), p), "all");
  EXPECT_EQ(ListDuration(30 * 60), "30m");
  EXPECT_EQ(ListDuration(2 * 3600), "2h");
  EXPECT_EQ(ListDuration(90 * 60), "1h30m");
  EXPECT_EQ(ListDuration(124 * 3600 + 20 * 60), "124h20m (5d4h20m)");
  EXPECT_EQ(RangeText(T("2026-11-29T18:50:00Z"), T("2026-11-29T19:20:00Z"), engine::FixedZone(0)),
            "2026-11-29 18:50 +0000 -> 2026-11-29 19:20 +0000");
}

}  // namespace
}  // namespace bk::surface
