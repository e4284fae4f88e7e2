#include "rpc/codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "base/members_testing.h"
#include "engine/reservation_testing.h"

namespace bk::rpc {
namespace {

using engine::Mode, engine::Seconds;
using store::JobStatus;
using ::testing::ElementsAre, ::testing::HasSubstr, ::testing::IsEmpty, ::testing::Not, ::testing::SizeIs;

constexpr Seconds kT0 = 1'795'000'200;  // on a 5-minute boundary

// ---- fixtures of every type -----------------------------------------------------

engine::Reservation FullReservation() {
  engine::Reservation r;
  r.id = "0a1b2c3d-0000-4000-8000-000000000001";
  r.uid = 1001;
  r.username = "alice";
  r.gpus = {2, 0};
  r.mode = Mode::kExclusive;
  r.share_units = 3;
  r.memory_mb = 24576;
  r.cpus = 8;
  r.ram_mb = 65536;
  r.start = kT0;
  r.end = kT0 + 7200;
  r.status = engine::Status::kCancelled;
  r.created_at = kT0 - 60;
  r.updated_at = kT0 - 30;
  r.op_id = "op-create.1";
  r.op_signature = "sig-abc";
  r.edit_count = 4;
  r.cancellation = engine::Cancellation{
      kT0 + 10, engine::CancelKind::kAdministrator, "maintenance", 0, "root", "op-cancel:7"};
  return r;
}

engine::Reservation PlainReservation() {
  engine::Reservation r;
  r.id = "0a1b2c3d-0000-4000-8000-000000000002";
  r.uid = 1002;
  r.username = "bob";
  r.gpus = {1};
  r.mode = Mode::kShared;
  r.share_units = 1;
  r.start = kT0 + 3600;
  r.end = kT0 + 5400;
  r.status = engine::Status::kExpired;
  r.created_at = kT0;
  r.updated_at = kT0;
  r.op_id = "op-2";
  return r;
}

store::JobRecord FullJob() {
  store::JobRecord j;
  j.reservation_id = "0a1b2c3d-0000-4000-8000-000000000001";
  j.uid = 1001;
  j.spec_id = "6f1d2c3b-1111-4222-8333-444455556666";
  j.digest = std::string(64, 'a');
  j.summary = "python train.py (+2 args)";
  j.status = JobStatus::kRunning;
  j.submitted_at = kT0 - 100;
  j.updated_at = kT0 + 5;
  j.claimed_at = kT0;
  j.started_at = kT0 + 1;
  j.waiting_since = kT0 + 2;
  j.recovered_at = kT0 + 3;
  j.exit_code = -9;
  j.runner_pid = 4242;
  j.runner_host = "node1";
  j.worker_id = "w-1";
  j.claim_token = "tok";
  j.message = "started";
  j.launch_guard_state = "waiting";
  j.launch_guard_key = "k";
  j.recovery_state = "terminated";
  j.recovery_worker_id = "w-0";
  j.log_warning = "log truncated";
  j.log_rotated = true;
  return j;
}

void ExpectSameJob(const store::JobRecord& a, const store::JobRecord& b) {
  using J = store::JobRecord;
  ExpectSameMembers(a, b, &J::reservation_id, &J::uid, &J::spec_id, &J::digest, &J::summary, &J::status,
                    &J::submitted_at, &J::updated_at, &J::claimed_at, &J::started_at, &J::finished_at,
                    &J::waiting_since, &J::cancel_requested_at, &J::recovered_at, &J::exit_code,
                    &J::runner_pid, &J::runner_host, &J::worker_id, &J::claim_token, &J::message,
                    &J::launch_guard_state, &J::launch_guard_key, &J::recovery_state, &J::recovery_worker_id,
                    &J::log_warning, &J::log_rotated);
}

service::GpuView FullView(int gpu) {
  service::GpuView v;
  v.gpu = gpu;
  v.live_status = gpu::LiveStatus::kBusy;
  v.live_reason = "user=alice pid=4242";
  v.load_score = 87.5;
  v.memory_total_mb = 81920;
  v.memory_free_mb = 1024;
  v.utilization_percent = 93;
  v.priority = 2;
  v.pressure = 50.0;
  v.budget_after_mb = 40000;
  return v;
}

void ExpectSameView(const service::GpuView& a, const service::GpuView& b) {
  using V = service::GpuView;
  ExpectSameMembers(a, b, &V::gpu, &V::live_status, &V::live_reason, &V::load_score, &V::memory_total_mb,
                    &V::memory_free_mb, &V::utilization_percent, &V::priority, &V::pressure,
                    &V::budget_after_mb);
}

store::Event FullEvent(int64_t seq) {
  store::Event e;
  e.seq = seq;
  e.event_id = "ev-" + std::to_string(seq);
  e.transaction_id = "tx-1";
  e.ts = kT0 + seq;
  e.uid = 1001;
  e.username = "alice";
  e.actor_uid = 0;
  e.actor_username = "root";
  e.action = "admin-cancel";
  e.reservation_id = "r-1";
  e.op_id = "op-9";
  e.gpus = {3, 1};
  e.mode = "shared";
  e.share_units = 2;
  e.start = kT0;
  e.end = kT0 + 600;
  e.result = "ok";
  e.message = "cancelled by root";
  e.before = R"({"gpus":[3,1]})";
  e.after = "";
  e.signature = "sig";
  return e;
}

void ExpectSameEvent(const store::Event& a, const store::Event& b) {
  using E = store::Event;
  ExpectSameMembers(a, b, &E::seq, &E::event_id, &E::transaction_id, &E::ts, &E::uid, &E::username,
                    &E::actor_uid, &E::actor_username, &E::action, &E::reservation_id, &E::op_id, &E::gpus,
                    &E::mode, &E::share_units, &E::start, &E::end, &E::result, &E::message, &E::before,
                    &E::after, &E::signature);
}

store::Notification FullNotification() {
  return store::Notification{"n-1", 1001,   "r-1",         "reservation-admin-cancelled", kT0,
                             0,     "root", "maintenance", "your booking was cancelled"};
}

void ExpectSameNotification(const store::Notification& a, const store::Notification& b) {
  using N = store::Notification;
  ExpectSameMembers(a, b, &N::id, &N::uid, &N::reservation_id, &N::type, &N::created_at, &N::actor_uid,
                    &N::actor_username, &N::reason, &N::message);
}

engine::Placement FullPlacement(Seconds start) {
  return engine::Placement{start, start + 3600, {3, 1}, true, {25.0, 75.5}};
}

void ExpectSamePlacement(const engine::Placement& a, const engine::Placement& b) {
  using P = engine::Placement;
  ExpectSameMembers(a, b, &P::start, &P::end, &P::gpus, &P::queued, &P::pressure);
}

service::CreateRequest FullCreate() {
  return service::CreateRequest{.count = 2,
                                .duration = 5400,
                                .mode = Mode::kExclusive,
                                .share_units = 3,
                                .memory_mb = 12288,
                                .cpus = 4,
                                .ram_mb = 32768,
                                .start = kT0,
                                .gpus = {3, 1},
                                .exclude = {0},
                                .op_id = "op-1",
                                .job = service::JobBinding{"6f1d2c3b-1111-4222-8333-444455556666",
                                                           std::string(64, 'b'), "python x.py"}};
}

void ExpectSameCreate(const service::CreateRequest& a, const service::CreateRequest& b) {
  using C = service::CreateRequest;
  ExpectSameMembers(a, b, &C::count, &C::duration, &C::mode, &C::share_units, &C::memory_mb, &C::cpus,
                    &C::ram_mb, &C::start, &C::gpus, &C::exclude, &C::op_id);
  ASSERT_EQ(a.job.has_value(), b.job.has_value());
  using B = service::JobBinding;
  if (a.job) ExpectSameMembers(*a.job, *b.job, &B::spec_id, &B::digest, &B::summary);
}

// A JSON document survives Encode -> Decode -> Encode unchanged (over the wire as text).
template <class T, class D>
void ExpectStableEncoding(const T& value, D decode) {
  json first = Encode(value);
  auto back = decode(json::parse(first.dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(Encode(*back), first);
}

// ---- requests: round trips ----------------------------------------------------------

TEST(CodecRequestTest, CreateFullRoundTrip) {
  service::CreateRequest in = FullCreate();
  json wire = json::parse(Encode(in).dump());
  EXPECT_EQ(wire["mode"], "exclusive");
  EXPECT_EQ(wire["duration_seconds"], 5400);
  auto out = DecodeCreate(wire);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameCreate(in, *out);
}

TEST(CodecRequestTest, CreateMinimalRoundTripKeepsDefaults) {
  service::CreateRequest in;
  in.count = 1;
  in.duration = 1800;
  json wire = Encode(in);
  EXPECT_TRUE(wire["share_units"].is_null());
  EXPECT_TRUE(wire["job"].is_null());
  auto out = DecodeCreate(wire);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameCreate(in, *out);
  EXPECT_EQ(out->mode, Mode::kShared);
  EXPECT_FALSE(out->share_units.has_value());
  EXPECT_FALSE(out->memory_mb.has_value());
  EXPECT_FALSE(out->start.has_value());
  EXPECT_THAT(out->gpus, IsEmpty());
  EXPECT_FALSE(out->job.has_value());
}

TEST(CodecRequestTest, CreateWithOnlyRequiredFieldsDecodes) {
  auto out = DecodeCreate(json{{"count", 3}, {"duration_seconds", 600}});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->count, 3);
  EXPECT_EQ(out->duration, 600);
  EXPECT_EQ(out->mode, Mode::kShared);
}

TEST(CodecRequestTest, EditFullRoundTrip) {
  service::EditRequest in;
  in.ref = "2";
  in.op_id = "op-e";
  in.duration = 7200;
  in.start = kT0 + 300;
  in.mode = Mode::kShared;
  in.gpus = {1, 2};
  in.exclude = {3};
  in.count = 2;
  in.update_memory = true;
  in.memory_mb = 4096;
  in.share_units = 2;
  in.cpus = 16;
  in.ram_mb = 1024;
  in.allow_queue = true;
  auto out = DecodeEdit(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->ref, "2");
  EXPECT_EQ(out->op_id, "op-e");
  EXPECT_EQ(out->duration, 7200);
  EXPECT_EQ(out->start, kT0 + 300);
  EXPECT_EQ(out->mode, Mode::kShared);
  EXPECT_EQ(out->gpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(out->exclude, (std::vector<int>{3}));
  EXPECT_EQ(out->count, 2);
  EXPECT_TRUE(out->update_memory);
  EXPECT_EQ(out->memory_mb, 4096);
  EXPECT_EQ(out->share_units, 2);
  EXPECT_EQ(out->cpus, 16);
  EXPECT_EQ(out->ram_mb, 1024);
  EXPECT_TRUE(out->allow_queue);
}

TEST(CodecRequestTest, EditMinimalRoundTripClearsMemory) {
  service::EditRequest in;
  in.ref = "abcd1234";
  in.update_memory = true;  // memory_mb nullopt: clear
  json wire = Encode(in);
  EXPECT_TRUE(wire["mode"].is_null());
  auto out = DecodeEdit(wire);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->ref, "abcd1234");
  EXPECT_TRUE(out->update_memory);
  EXPECT_FALSE(out->memory_mb.has_value());
  EXPECT_FALSE(out->mode.has_value());
  EXPECT_FALSE(out->duration.has_value());
  EXPECT_FALSE(out->count.has_value());
  EXPECT_FALSE(out->allow_queue);
  EXPECT_THAT(out->gpus, IsEmpty());
}

TEST(CodecRequestTest, EditModeExclusiveRoundTrip) {
  service::EditRequest in;
  in.ref = "1";
  in.mode = Mode::kExclusive;
  auto out = DecodeEdit(Encode(in));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->mode, Mode::kExclusive);
}

TEST(CodecRequestTest, RenewRoundTrip) {
  service::RenewRequest in{"3", 1800, "op-r"};
  json wire = Encode(in);
  EXPECT_EQ(wire["extend_seconds"], 1800);
  auto out = DecodeRenew(json::parse(wire.dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->ref, "3");
  EXPECT_EQ(out->extend_by, 1800);
  EXPECT_EQ(out->op_id, "op-r");

  auto bare = DecodeRenew(Encode(service::RenewRequest{"x", 60, std::nullopt}));
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  EXPECT_FALSE(bare->op_id.has_value());
}

// dry_run travels only when set: other requests are what they were, and a
// client that never sends it gets a real write.
TEST(CodecRequestTest, DryRunRoundTrip) {
  service::EditRequest edit{.ref = "1", .duration = 3600};
  EXPECT_FALSE(Encode(edit).contains("dry_run"));
  EXPECT_FALSE(DecodeEdit(Encode(edit))->dry_run);
  edit.dry_run = true;
  EXPECT_EQ(Encode(edit)["dry_run"], true);
  auto e = DecodeEdit(json::parse(Encode(edit).dump()));
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_TRUE(e->dry_run);
  EXPECT_EQ(e->duration, 3600);

  service::RenewRequest renew{.ref = "2", .extend_by = 1800};
  EXPECT_FALSE(Encode(renew).contains("dry_run"));
  EXPECT_FALSE(DecodeRenew(json{{"ref", "2"}, {"extend_seconds", 1800}})->dry_run);
  renew.dry_run = true;
  auto r = DecodeRenew(json::parse(Encode(renew).dump()));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->dry_run);
  EXPECT_EQ(r->extend_by, 1800);

  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"dry_run", "yes"}}).has_value());
  EXPECT_FALSE(DecodeRenew(json{{"ref", "1"}, {"extend_seconds", 60}, {"dry_run", 1}}).has_value());
}

TEST(CodecRequestTest, CancelRoundTrip) {
  service::CancelRequest in{"0a1b2c3d", "op-c", "maintenance window"};
  auto out = DecodeCancel(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->ref, "0a1b2c3d");
  EXPECT_EQ(out->op_id, "op-c");
  EXPECT_EQ(out->reason, "maintenance window");

  auto bare = DecodeCancel(Encode(service::CancelRequest{"1", std::nullopt, std::nullopt}));
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  EXPECT_FALSE(bare->op_id.has_value());
  EXPECT_FALSE(bare->reason.has_value());
}

TEST(CodecRequestTest, PolicyReloadRoundTrip) {
  service::PolicyReloadRequest in{"{\"schema_version\":\"gpubk.server.v1\"}", "ab12", true, false,
                                  "fan failure"};
  auto out = DecodePolicyReload(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->config_text, in.config_text);
  EXPECT_EQ(out->expect_sha256, "ab12");
  EXPECT_TRUE(out->force);
  EXPECT_FALSE(out->cancel_conflicting);
  EXPECT_EQ(out->reason, "fan failure");
  auto bare = DecodePolicyReload(json::object());
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  EXPECT_FALSE(bare->config_text.has_value());
  EXPECT_EQ(bare->expect_sha256, "");
  auto stray = DecodePolicyReload(json{{"force", "yes"}});
  ASSERT_FALSE(stray.has_value());
  EXPECT_THAT(stray.error().message, HasSubstr("force"));
  EXPECT_FALSE(DecodePolicyReload(json{{"uid", 0}}).has_value());
}

TEST(CodecResultTest, PolicyChangeRoundTrip) {
  service::PolicyChange in;
  in.status = "applied";
  in.changes = {{"disabled_gpus", "[]", "[3]"}};
  in.restart = {"reclaim_after_seconds"};
  in.conflicts = {{FullReservation(), "GPU 3 is disabled"}};
  in.notified = 1;
  auto out = DecodePolicyChange(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->status, "applied");
  ASSERT_EQ(out->changes.size(), 1u);
  EXPECT_EQ(out->changes[0].after, "[3]");
  EXPECT_EQ(out->restart, in.restart);
  ASSERT_EQ(out->conflicts.size(), 1u);
  EXPECT_EQ(out->conflicts[0].reservation.id, FullReservation().id);
  EXPECT_EQ(out->conflicts[0].why, "GPU 3 is disabled");
  EXPECT_EQ(out->notified, 1);
  for (const json& junk : {json(), json::object(), json{{"status", 1}}})
    EXPECT_FALSE(DecodePolicyChange(junk).has_value()) << junk.dump();
}

TEST(CodecRequestTest, AnnouncementRequestsRoundTrip) {
  service::PublishRequest in{
      .message = "GPU 1 down", .level = "critical", .starts_at = 1000, .lifetime = 3600};
  auto out = DecodePublishRequest(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->message, "GPU 1 down");
  EXPECT_EQ(out->level, "critical");
  EXPECT_EQ(out->starts_at, 1000);
  EXPECT_FALSE(out->expires_at.has_value());
  EXPECT_EQ(out->lifetime, 3600);
  // Defaults survive a request that gives only the message.
  auto bare = DecodePublishRequest(json{{"message", "hi"}});
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  EXPECT_EQ(bare->level, "warning");
  EXPECT_FALSE(bare->starts_at.has_value());

  service::AnnouncementEdit edit{.ref = "65b1", .message = "", .expires_at = 5000};
  auto e = DecodeAnnouncementEdit(json::parse(Encode(edit).dump()));
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->ref, "65b1");
  EXPECT_EQ(e->message, "");  // sent, for the service to refuse in its own words
  EXPECT_FALSE(e->level.has_value());
  EXPECT_EQ(e->expires_at, 5000);

  EXPECT_FALSE(DecodePublishRequest(json{{"message", "x"}, {"color", "red"}}).has_value());
  EXPECT_FALSE(DecodePublishRequest(json{{"message", "x"}, {"lifetime_seconds", -1}}).has_value());
  EXPECT_FALSE(DecodeAnnouncementEdit(json{{"message", "x"}}).has_value());  // no ref
  EXPECT_FALSE(DecodeAnnouncementRef(json{{"ref", ""}}).has_value());
  EXPECT_TRUE(DecodeAnnouncementsQuery(json{{"all", true}}).value().all);
}

TEST(CodecReplyTest, AnnouncementOutcomeRoundTrip) {
  store::Announcement a{.id = "65b14769-0000-4000-8000-000000000000",
                        .level = store::AnnouncementLevel::kInfo,
                        .message = "fyi",
                        .created_at = 10,
                        .starts_at = 20,
                        .expires_at = 30,
                        .actor_uid = 1000,
                        .actor_username = "ops",
                        .archived_at = 25,
                        .archived_by_uid = 0,
                        .archived_by_username = "root"};
  auto out = DecodeAnnouncementOutcome(json::parse(Encode(service::AnnouncementOutcome{a, false}).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_FALSE(out->changed);
  EXPECT_EQ(out->announcement.level, store::AnnouncementLevel::kInfo);
  EXPECT_EQ(out->announcement.archived_by_username, "root");
  EXPECT_EQ(out->announcement.archived_at, 25);
  EXPECT_FALSE(out->announcement.updated_at.has_value());
  auto list = DecodeAnnouncements(Encode(std::vector<store::Announcement>{a, a}));
  ASSERT_TRUE(list.has_value()) << list.error().message;
  EXPECT_EQ(list->size(), 2u);
  EXPECT_FALSE(DecodeAnnouncements(json::array({json{{"id", "x"}}})).has_value());
}

TEST(CodecRequestTest, TransferAndClearRoundTrip) {
  auto t =
      DecodeTransfer(json::parse(Encode(service::TransferRequest{"0a1b2c3d", "bob", "handover"}).dump()));
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->ref, "0a1b2c3d");
  EXPECT_EQ(t->to, "bob");
  EXPECT_EQ(t->reason, "handover");
  EXPECT_FALSE(DecodeTransfer(json{{"ref", "1"}, {"to", "bob"}}).has_value());  // no reason
  EXPECT_FALSE(DecodeTransfer(json{{"ref", "1"}, {"to", "bob"}, {"reason", "x"}, {"uid", 0}}).has_value());

  auto c = DecodeClearRequest(Encode(ClearRequest{"/srv/b.db"}));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->backup_path, "/srv/b.db");
  EXPECT_EQ(Encode(ClearRequest{}), json::object());
  EXPECT_EQ(DecodeClearRequest(json::object())->backup_path, "");
}

TEST(CodecRequestTest, ListRoundTrip) {
  service::ListQuery in;
  in.history = true;
  in.limit = 50;
  in.everyone = true;
  auto out = DecodeList(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->history);
  EXPECT_EQ(out->limit, 50);
  EXPECT_TRUE(out->everyone);

  auto def = DecodeList(Encode(service::ListQuery{}));
  ASSERT_TRUE(def.has_value()) << def.error().message;
  EXPECT_FALSE(def->history);
  EXPECT_FALSE(def->limit.has_value());
  EXPECT_FALSE(def->everyone);

  auto empty = DecodeList(json::object());
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_FALSE(empty->history);
}

TEST(CodecRequestTest, JobRequestsRoundTrip) {
  auto q = DecodeJobsQuery(Encode(service::JobsQuery{true}));
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(q->open_only);

  service::JobPatch p;
  p.reservation_id = "r-1";
  p.if_status = {JobStatus::kPending, JobStatus::kClaimed};
  p.if_claim_token = "";
  p.status = JobStatus::kRunning;
  p.claim_token = "t";
  p.runner_pid = 77;
  p.exit_code = 0;
  p.log_rotated = false;
  p.expire_reservation = true;
  p.audit_action = "job-start";
  p.audit_message = "started";
  auto pd = DecodeJobPatch(json::parse(Encode(p).dump()));
  ASSERT_TRUE(pd.has_value()) << pd.error().message;
  EXPECT_EQ(pd->reservation_id, "r-1");
  EXPECT_THAT(pd->if_status, ElementsAre(JobStatus::kPending, JobStatus::kClaimed));
  EXPECT_EQ(pd->if_claim_token, std::optional<std::string>(""));
  EXPECT_EQ(pd->status, JobStatus::kRunning);
  EXPECT_EQ(pd->runner_pid, 77);
  EXPECT_EQ(pd->exit_code, 0);
  EXPECT_EQ(pd->log_rotated, std::optional<bool>(false));
  EXPECT_FALSE(pd->worker_id.has_value());
  EXPECT_TRUE(pd->expire_reservation);
  EXPECT_EQ(pd->audit_action, "job-start");
  EXPECT_EQ(pd->audit_message, "started");

  auto rr = DecodeJobRetry(Encode(service::JobRetryRequest{"2", true}));
  ASSERT_TRUE(rr.has_value());
  EXPECT_EQ(rr->ref, "2");
  EXPECT_TRUE(rr->accept_duplicate_risk);
}

// ---- requests: strict decoding ---------------------------------------------------

json CreateParams() { return json{{"count", 1}, {"duration_seconds", 3600}}; }

Error CreateError(json params) {
  auto r = DecodeCreate(params);
  EXPECT_FALSE(r.has_value()) << "accepted " << params.dump();
  return r ? Error{ErrorKind::kInternal, "accepted"} : r.error();
}

TEST(CodecStrictTest, UnknownFieldUidRefusedByEveryRequestDecoder) {
  json create = CreateParams();
  create["uid"] = 0;
  Error e = CreateError(create);
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  EXPECT_THAT(e.message, HasSubstr("unknown field"));
  EXPECT_THAT(e.message, HasSubstr("uid"));

  json edit = Encode(service::EditRequest{.ref = "1"});
  edit["uid"] = 0;
  auto ed = DecodeEdit(edit);
  ASSERT_FALSE(ed.has_value());
  EXPECT_THAT(ed.error().message, HasSubstr("uid"));

  auto rn = DecodeRenew(json{{"ref", "1"}, {"extend_seconds", 60}, {"uid", 0}});
  ASSERT_FALSE(rn.has_value());
  EXPECT_EQ(rn.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(rn.error().message, HasSubstr("uid"));

  auto cn = DecodeCancel(json{{"ref", "1"}, {"uid", 0}});
  ASSERT_FALSE(cn.has_value());
  EXPECT_THAT(cn.error().message, HasSubstr("uid"));

  auto ls = DecodeList(json{{"uid", 0}});
  ASSERT_FALSE(ls.has_value());
  EXPECT_THAT(ls.error().message, HasSubstr("uid"));

  auto jq = DecodeJobsQuery(json{{"uid", 0}});
  ASSERT_FALSE(jq.has_value());
  EXPECT_THAT(jq.error().message, HasSubstr("uid"));

  auto jp = DecodeJobPatch(json{{"reservation_id", "r"}, {"uid", 0}});
  ASSERT_FALSE(jp.has_value());
  EXPECT_THAT(jp.error().message, HasSubstr("uid"));

  auto jr = DecodeJobRetry(json{{"ref", "r"}, {"username", "root"}});
  ASSERT_FALSE(jr.has_value());
  EXPECT_THAT(jr.error().message, HasSubstr("username"));
}

TEST(CodecStrictTest, EveryUnknownFieldIsNamed) {
  json p = CreateParams();
  p["actor"] = "root";
  p["admin"] = true;
  Error e = CreateError(p);
  EXPECT_THAT(e.message, HasSubstr("actor"));
  EXPECT_THAT(e.message, HasSubstr("admin"));
}

TEST(CodecStrictTest, UnknownFieldInsideJobRefused) {
  json p = CreateParams();
  p["job"] = {{"spec_id", "s"}, {"digest", "d"}, {"summary", "x"}, {"command", "rm -rf /"}};
  Error e = CreateError(p);
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  EXPECT_THAT(e.message, HasSubstr("command"));
}

TEST(CodecStrictTest, JobMustBeCompleteObject) {
  json p = CreateParams();
  p["job"] = "spec";
  EXPECT_THAT(CreateError(p).message, HasSubstr("job must be an object"));
  p["job"] = {{"spec_id", "s"}, {"summary", "x"}};
  EXPECT_THAT(CreateError(p).message, HasSubstr("digest is required"));
  p["job"] = {{"spec_id", "s"}, {"digest", ""}, {"summary", "x"}};
  EXPECT_THAT(CreateError(p).message, HasSubstr("digest"));
}

TEST(CodecStrictTest, WrongTypesRefused) {
  struct Case {
    const char* key;
    json value;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"count", "1", "count must be an integer"},
      {"count", 1.5, "count must be an integer"},
      {"count", 1.0, "count must be an integer"},
      {"count", true, "count must be an integer"},
      {"count", json::array({1}), "count must be an integer"},
      {"duration_seconds", "3600", "duration_seconds must be an integer"},
      {"duration_seconds", false, "duration_seconds must be an integer"},
      {"share_units", true, "share_units must be an integer"},
      {"memory_mb", "12g", "memory_mb must be an integer"},
      {"cpus", 2.5, "cpus must be an integer"},
      {"ram_mb", json::object(), "ram_mb must be an integer"},
      {"start", "2026-11-30T09:00", "start must be an integer"},
      {"gpus", "0", "gpus must be an array"},
      {"gpus", 0, "gpus must be an array"},
      {"gpus", json::array({1.5}), "gpus must be an array"},
      {"gpus", json::array({"1"}), "gpus must be an array"},
      {"gpus", json::array({true}), "gpus must be an array"},
      {"gpus", json::array({-1}), "gpus must be an array"},
      {"gpus", json::array({1024}), "gpus must be an array"},
      {"exclude", json::array({0, nullptr}), "exclude must be an array"},
      {"mode", "x", "mode must be"},
      {"mode", "", "mode must be"},
      {"mode", 1, "mode must be"},
      {"op_id", "", "op_id must be a non-empty string"},
      {"op_id", 7, "op_id must be a non-empty string"},
  };
  for (const auto& c : cases) {
    json p = CreateParams();
    p[c.key] = c.value;
    Error e = CreateError(p);
    EXPECT_EQ(e.kind, ErrorKind::kInvalid) << c.key << "=" << c.value.dump();
    EXPECT_THAT(e.message, HasSubstr(c.expect)) << c.key << "=" << c.value.dump();
  }
}

TEST(CodecStrictTest, WrongTypesRefusedInOtherRequests) {
  EXPECT_FALSE(DecodeEdit(json{{"ref", 1}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", ""}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"update_memory", 1}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"allow_queue", "yes"}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"gpus", json::array({0.5})}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"count", "2"}}).has_value());
  EXPECT_FALSE(DecodeRenew(json{{"ref", "1"}, {"extend_seconds", "60"}}).has_value());
  EXPECT_FALSE(DecodeRenew(json{{"ref", "1"}, {"extend_seconds", 60.0}}).has_value());
  EXPECT_FALSE(DecodeCancel(json{{"ref", "1"}, {"reason", ""}}).has_value());
  EXPECT_FALSE(DecodeCancel(json{{"ref", "1"}, {"reason", false}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"history", "true"}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"history", 1}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"everyone", 0}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"limit", "5"}}).has_value());
  EXPECT_FALSE(DecodeJobsQuery(json{{"open_only", "true"}}).has_value());
  EXPECT_FALSE(DecodeJobPatch(json{{"reservation_id", "r"}, {"if_status", "pending"}}).has_value());
  EXPECT_FALSE(DecodeJobPatch(json{{"reservation_id", "r"}, {"if_status", json::array({1})}}).has_value());
  EXPECT_FALSE(DecodeJobPatch(json{{"reservation_id", "r"}, {"status", ""}}).has_value());
  // A job status the name table does not know is refused here, before the service sees it.
  auto bogus = DecodeJobPatch(json{{"reservation_id", "r"}, {"status", "bogus"}});
  ASSERT_FALSE(bogus.has_value());
  EXPECT_EQ(bogus.error().message, "unknown job status bogus");
  EXPECT_FALSE(
      DecodeJobPatch(json{{"reservation_id", "r"}, {"if_status", {"pending", "Running"}}}).has_value());
  EXPECT_FALSE(DecodeJobPatch(json{{"reservation_id", "r"}, {"log_rotated", 0}}).has_value());
}

TEST(CodecStrictTest, NullMeansAbsent) {
  json p = CreateParams();
  p["share_units"] = nullptr;
  p["gpus"] = nullptr;
  p["op_id"] = nullptr;
  p["mode"] = nullptr;
  auto r = DecodeCreate(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE(r->share_units.has_value());
  EXPECT_THAT(r->gpus, IsEmpty());
}

TEST(CodecStrictTest, MissingRequiredFieldsRefused) {
  EXPECT_THAT(CreateError(json{{"duration_seconds", 60}}).message, HasSubstr("count is required"));
  EXPECT_THAT(CreateError(json{{"count", 1}}).message, HasSubstr("duration_seconds is required"));
  EXPECT_THAT(CreateError(json{{"count", nullptr}, {"duration_seconds", 60}}).message,
              HasSubstr("count is required"));
  auto edit = DecodeEdit(json::object());
  ASSERT_FALSE(edit.has_value());
  EXPECT_THAT(edit.error().message, HasSubstr("ref is required"));
  auto renew = DecodeRenew(json{{"ref", "1"}});
  ASSERT_FALSE(renew.has_value());
  EXPECT_THAT(renew.error().message, HasSubstr("extend_seconds is required"));
  auto renew2 = DecodeRenew(json{{"extend_seconds", 60}});
  ASSERT_FALSE(renew2.has_value());
  EXPECT_THAT(renew2.error().message, HasSubstr("ref is required"));
  auto cancel = DecodeCancel(json::object());
  ASSERT_FALSE(cancel.has_value());
  EXPECT_THAT(cancel.error().message, HasSubstr("ref is required"));
  auto patch = DecodeJobPatch(json::object());
  ASSERT_FALSE(patch.has_value());
  EXPECT_THAT(patch.error().message, HasSubstr("reservation_id is required"));
  auto retry = DecodeJobRetry(json::object());
  ASSERT_FALSE(retry.has_value());
  EXPECT_THAT(retry.error().message, HasSubstr("ref is required"));
}

TEST(CodecStrictTest, OutOfRangeCountsAndSharesRefused) {
  for (json count : {json(0), json(-1), json(1025), json(int64_t{1} << 40)}) {
    json p = CreateParams();
    p["count"] = count;
    EXPECT_THAT(CreateError(p).message, HasSubstr("count must be between 1 and 1024")) << count;
  }
  for (json share : {json(0), json(-5), json(1000001)}) {
    json p = CreateParams();
    p["share_units"] = share;
    EXPECT_THAT(CreateError(p).message, HasSubstr("share_units must be between 1 and 1000000")) << share;
  }
  // The edges are accepted.
  json edge = CreateParams();
  edge["count"] = 1024;
  edge["share_units"] = 1000000;
  edge["gpus"] = json::array({0, 1023});
  auto ok = DecodeCreate(edge);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->count, 1024);
  EXPECT_EQ(ok->share_units, 1000000);

  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"count", 0}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"count", 1025}}).has_value());
  EXPECT_FALSE(DecodeEdit(json{{"ref", "1"}, {"share_units", 0}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"limit", 0}}).has_value());
  EXPECT_FALSE(DecodeList(json{{"limit", 100001}}).has_value());
  EXPECT_TRUE(DecodeList(json{{"limit", 100000}}).has_value());
}

TEST(CodecStrictTest, UnsignedOverflowingCountRefused) {
  // 2^64-1 is an unsigned JSON integer; it must not wrap into range.
  json p = CreateParams();
  p["count"] = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(CreateError(p).kind, ErrorKind::kInvalid);
  p = CreateParams();
  p["gpus"] = json::array({std::numeric_limits<uint64_t>::max()});
  EXPECT_EQ(CreateError(p).kind, ErrorKind::kInvalid);
}

TEST(CodecStrictTest, ParamsMustBeAnObject) {
  for (json bad : {json(), json::array(), json(1), json("count")}) {
    EXPECT_FALSE(DecodeCreate(bad).has_value()) << bad.dump();
    EXPECT_FALSE(DecodeEdit(bad).has_value()) << bad.dump();
    EXPECT_FALSE(DecodeRenew(bad).has_value()) << bad.dump();
    EXPECT_FALSE(DecodeCancel(bad).has_value()) << bad.dump();
    auto l = DecodeList(bad);
    ASSERT_FALSE(l.has_value()) << bad.dump();
    EXPECT_THAT(l.error().message, HasSubstr("params must be a JSON object"));
  }
}

// ---- results: round trips ------------------------------------------------------------

TEST(CodecResultTest, ReservationWithCancellationAndMemory) {
  engine::Reservation in = FullReservation();
  json wire = json::parse(Encode(in).dump());
  EXPECT_EQ(wire["mode"], "exclusive");
  EXPECT_EQ(wire["status"], "cancelled");
  EXPECT_EQ(wire["cancellation"]["kind"], "administrator");
  auto out = DecodeReservation(wire);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameReservation(in, *out);
}

TEST(CodecResultTest, ReservationWithoutCancellationOrMemory) {
  engine::Reservation in = PlainReservation();
  json wire = Encode(in);
  EXPECT_TRUE(wire["cancellation"].is_null());
  EXPECT_TRUE(wire["memory_mb"].is_null());
  auto out = DecodeReservation(json::parse(wire.dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameReservation(in, *out);
  EXPECT_FALSE(out->memory_mb.has_value());
  EXPECT_FALSE(out->cancellation.has_value());

  // Every status survives.
  for (auto st : {engine::Status::kActive, engine::Status::kCancelled, engine::Status::kExpired}) {
    in.status = st;
    auto back = DecodeReservation(Encode(in));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->status, st);
  }
}

TEST(CodecResultTest, BookingOutcomeRoundTrip) {
  service::BookingOutcome in;
  in.status = "queued";
  in.reservation = FullReservation();
  in.replayed = true;
  in.allocator_source = "fixed-gpu";
  in.selected = {FullView(2), service::GpuView{}};
  in.memory_telemetry = true;
  in.assumed_memory_mb = 8192;
  in.avoided_busy = {"GPU 1 (user=alice pid=4242)"};
  in.selected_busy = {"GPU 2 (util=87%)"};
  in.warnings = {"w1", "w2"};
  in.message = "queued";
  in.queued_reason = "host CPU budget full";
  in.job = FullJob();
  auto out = DecodeBookingOutcome(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->status, "queued");
  ExpectSameReservation(in.reservation, out->reservation);
  EXPECT_TRUE(out->replayed);
  EXPECT_EQ(out->allocator_source, "fixed-gpu");
  ASSERT_THAT(out->selected, SizeIs(2));
  ExpectSameView(in.selected[0], out->selected[0]);
  ExpectSameView(in.selected[1], out->selected[1]);
  EXPECT_FALSE(out->selected[1].memory_total_mb.has_value());
  EXPECT_TRUE(out->memory_telemetry);
  EXPECT_EQ(out->assumed_memory_mb, 8192);
  EXPECT_EQ(out->avoided_busy, in.avoided_busy);
  EXPECT_EQ(out->selected_busy, in.selected_busy);
  EXPECT_EQ(out->warnings, in.warnings);
  EXPECT_EQ(out->message, "queued");
  EXPECT_EQ(out->queued_reason, "host CPU budget full");
  ASSERT_TRUE(out->job.has_value());
  ExpectSameJob(*in.job, *out->job);

  service::BookingOutcome bare;
  bare.status = "created";
  bare.reservation = PlainReservation();
  auto b = DecodeBookingOutcome(Encode(bare));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_FALSE(b->job.has_value());
  EXPECT_FALSE(b->assumed_memory_mb.has_value());
  ExpectStableEncoding(bare, DecodeBookingOutcome);
  ExpectStableEncoding(in, DecodeBookingOutcome);
  // The written text is canonical: the bytes nlohmann writes, keys sorted.
  EXPECT_EQ(Write(in), Encode(in).dump());
  EXPECT_EQ(Write(bare), Encode(bare).dump());
}

TEST(CodecResultTest, GenerationReply) {
  const uint64_t big = uint64_t{1} << 63;
  EXPECT_EQ(Encode(GenerationReply{7}), json({{"generation", 7}}));
  auto out = DecodeGenerationReply(json::parse(Encode(GenerationReply{big}).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->generation, big);
  for (const json& bad : {json(), json::object(), json{{"generation", -1}}, json{{"generation", "7"}},
                          json{{"generation", 1.5}}}) {
    auto refused = DecodeGenerationReply(bad);
    ASSERT_FALSE(refused.has_value()) << bad.dump();
    EXPECT_EQ(refused.error().kind, ErrorKind::kCorrupt);
  }
}

// A dry run's outcome says so; any other's carries no dry_run member at all.
TEST(CodecResultTest, BookingOutcomeDryRun) {
  service::BookingOutcome in{.status = "updated", .reservation = PlainReservation()};
  EXPECT_FALSE(Encode(in).contains("dry_run"));
  EXPECT_FALSE(DecodeBookingOutcome(Encode(in))->dry_run);
  in.dry_run = true;
  EXPECT_EQ(Encode(in)["dry_run"], true);
  EXPECT_EQ(Write(in), Encode(in).dump());
  auto out = DecodeBookingOutcome(json::parse(Write(in)));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->dry_run);
  ExpectStableEncoding(in, DecodeBookingOutcome);
}

TEST(CodecResultTest, CancelOutcomeRoundTrip) {
  service::CancelOutcome in{FullReservation(), true};
  auto out = DecodeCancelOutcome(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->replayed);
  ExpectSameReservation(in.reservation, out->reservation);
  auto f = DecodeCancelOutcome(Encode(service::CancelOutcome{PlainReservation(), false}));
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->replayed);
}

TEST(CodecResultTest, TransferOutcomeAndLedgerSwapRoundTrip) {
  service::TransferOutcome in{FullReservation(), 1001, "alice"};
  auto out = DecodeTransferOutcome(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameReservation(in.reservation, out->reservation);
  EXPECT_EQ(out->from_uid, 1001u);
  EXPECT_EQ(out->from_username, "alice");

  service::LedgerSwap swap{"/srv/data/ledger.db.replaced-20261202T031500Z", {"b.db", "ok", {"x"}, 3, 2}};
  auto back = DecodeLedgerSwap(json::parse(Encode(swap).dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->kept, swap.kept);
  EXPECT_EQ(back->checked.path, "b.db");
  EXPECT_EQ(back->checked.violations, std::vector<std::string>{"x"});
  EXPECT_EQ(back->checked.reservations, 3);
  EXPECT_EQ(back->checked.active, 2);
}

TEST(CodecResultTest, RecommendationWithPlacementAndNearest) {
  service::Recommendation in;
  in.available = true;
  in.placement = FullPlacement(kT0);
  in.nearest = FullPlacement(kT0 + 3600);
  in.reason = "";
  in.selected = {FullView(3), FullView(1)};
  in.warnings = {"careful"};
  in.confidence = "high";
  in.request = FullCreate();
  in.start = kT0;
  in.allow_queue = false;
  auto out = DecodeRecommendation(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->available);
  ASSERT_TRUE(out->placement.has_value());
  ExpectSamePlacement(*in.placement, *out->placement);
  ASSERT_TRUE(out->nearest.has_value());
  ExpectSamePlacement(*in.nearest, *out->nearest);
  ASSERT_THAT(out->selected, SizeIs(2));
  ExpectSameView(in.selected[1], out->selected[1]);
  EXPECT_EQ(out->warnings, in.warnings);
  EXPECT_EQ(out->confidence, "high");
  ExpectSameCreate(in.request, out->request);
  EXPECT_EQ(out->start, kT0);
  EXPECT_FALSE(out->allow_queue);
}

TEST(CodecResultTest, RecommendationWithoutPlacementOrNearest) {
  service::Recommendation in;
  in.available = false;
  in.reason = "no GPU is free at the requested start";
  in.request.count = 1;
  in.request.duration = 600;
  in.start = kT0;
  json wire = Encode(in);
  EXPECT_TRUE(wire["placement"].is_null());
  EXPECT_TRUE(wire["nearest"].is_null());
  auto out = DecodeRecommendation(json::parse(wire.dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_FALSE(out->available);
  EXPECT_FALSE(out->placement.has_value());
  EXPECT_FALSE(out->nearest.has_value());
  EXPECT_EQ(out->reason, in.reason);
  EXPECT_EQ(out->confidence, "low");
  EXPECT_TRUE(out->allow_queue);

  // Nearest only (the unavailable case that still suggests a slot).
  in.nearest = FullPlacement(kT0 + 600);
  auto n = DecodeRecommendation(Encode(in));
  ASSERT_TRUE(n.has_value());
  EXPECT_FALSE(n->placement.has_value());
  ASSERT_TRUE(n->nearest.has_value());
  EXPECT_EQ(n->nearest->start, kT0 + 600);
}

TEST(CodecResultTest, SlotsRoundTrip) {
  service::SlotsResult in;
  in.options.push_back({{0, 1}, kT0, kT0 + 600, gpu::LiveStatus::kIdle, 81920});
  in.options.push_back({{3}, kT0 + 600, kT0 + 1200, gpu::LiveStatus::kUnknown, std::nullopt});
  in.truncated_combinations = true;
  auto out = DecodeSlots(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_THAT(out->options, SizeIs(2));
  EXPECT_EQ(out->options[0].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(out->options[0].start, kT0);
  EXPECT_EQ(out->options[0].end, kT0 + 600);
  EXPECT_EQ(out->options[0].live, gpu::LiveStatus::kIdle);
  EXPECT_EQ(out->options[0].free_now_mb, 81920);
  EXPECT_EQ(out->options[1].live, gpu::LiveStatus::kUnknown);
  EXPECT_FALSE(out->options[1].free_now_mb.has_value());
  EXPECT_TRUE(out->truncated_combinations);
  // On the wire the live status is its name; a name no table knows is a malformed reply.
  json wire = Encode(in);
  EXPECT_EQ(wire["options"][0]["live"], "idle");
  wire["options"][1]["live"] = "asleep";
  EXPECT_FALSE(DecodeSlots(wire).has_value());

  auto empty = DecodeSlots(Encode(service::SlotsResult{}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_THAT(empty->options, IsEmpty());
  EXPECT_FALSE(empty->truncated_combinations);
}

TEST(CodecResultTest, ListResultRoundTrip) {
  service::ListResult in;
  in.reservations = {FullReservation(), PlainReservation()};
  in.total = 7;
  in.truncated = true;
  in.jobs = {FullJob()};
  auto out = DecodeListResult(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_THAT(out->reservations, SizeIs(2));
  ExpectSameReservation(in.reservations[0], out->reservations[0]);
  ExpectSameReservation(in.reservations[1], out->reservations[1]);
  EXPECT_EQ(out->total, 7);
  EXPECT_TRUE(out->truncated);
  ASSERT_THAT(out->jobs, SizeIs(1));
  ExpectSameJob(in.jobs[0], out->jobs[0]);

  // An older daemon without "jobs" still decodes.
  json old = Encode(in);
  old.erase("jobs");
  auto o = DecodeListResult(old);
  ASSERT_TRUE(o.has_value()) << o.error().message;
  EXPECT_THAT(o->jobs, IsEmpty());
  EXPECT_EQ(Write(in), Encode(in).dump());  // canonical text: keys sorted, as nlohmann writes
}

TEST(CodecResultTest, HistoryRoundTrip) {
  service::HistoryView in;
  in.reservation = FullReservation();
  in.events = {FullEvent(1), FullEvent(2)};
  in.events[1].share_units.reset();
  in.notifications = {FullNotification()};
  auto out = DecodeHistory(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ExpectSameReservation(in.reservation, out->reservation);
  ASSERT_THAT(out->events, SizeIs(2));
  ExpectSameEvent(in.events[0], out->events[0]);
  ExpectSameEvent(in.events[1], out->events[1]);
  EXPECT_FALSE(out->events[1].share_units.has_value());
  ASSERT_THAT(out->notifications, SizeIs(1));
  ExpectSameNotification(in.notifications[0], out->notifications[0]);
}

TEST(CodecResultTest, EventsRoundTrip) {
  std::vector<store::Event> in = {FullEvent(5), FullEvent(6), FullEvent(7)};
  json wire = Encode(in);
  ASSERT_TRUE(wire.is_array());
  auto out = DecodeEvents(json::parse(wire.dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_THAT(*out, SizeIs(3));
  for (size_t i = 0; i < in.size(); ++i) ExpectSameEvent(in[i], (*out)[i]);

  auto none = DecodeEvents(Encode(std::vector<store::Event>{}));
  ASSERT_TRUE(none.has_value());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(CodecResultTest, NotificationsRoundTrip) {
  store::Notification second = FullNotification();
  second.id = "n-2";
  second.type = "reservation-reclaimed";
  second.reason = "";
  std::vector<store::Notification> in = {FullNotification(), second};
  auto out = DecodeNotifications(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_THAT(*out, SizeIs(2));
  ExpectSameNotification(in[0], (*out)[0]);
  ExpectSameNotification(in[1], (*out)[1]);
}

TEST(CodecResultTest, OperationRoundTrip) {
  service::OperationView found{true, "create", FullReservation()};
  auto out = DecodeOperation(json::parse(Encode(found).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_TRUE(out->found);
  EXPECT_EQ(out->action, "create");
  ASSERT_TRUE(out->reservation.has_value());
  ExpectSameReservation(*found.reservation, *out->reservation);

  service::OperationView missing{false, "", std::nullopt};
  json wire = Encode(missing);
  EXPECT_TRUE(wire["reservation"].is_null());
  auto m = DecodeOperation(wire);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_FALSE(m->found);
  EXPECT_FALSE(m->reservation.has_value());
}

TEST(CodecResultTest, StatusViewRoundTrip) {
  service::StatusView in;
  in.now = kT0 + 42;
  gpu::DeviceSample d0;
  d0.index = 0;
  d0.uuid = "GPU-0000";
  d0.name = "NVIDIA H200";
  d0.memory_used_mb = 1000;
  d0.memory_total_mb = 141000;
  d0.utilization_percent = 55;
  d0.temperature_c = 61;
  d0.source = gpu::Source::kNvml;
  d0.process_telemetry = true;
  gpu::ProcessSample p1;
  p1.pid = 4242;
  p1.uid = 1001;
  p1.username = "alice";
  p1.command = "python train.py";
  p1.gpu_memory_mb = 900;
  p1.sm_utilization_percent = 40;
  p1.kind = "C";
  p1.identity_source = "container-reservation";
  gpu::ProcessSample p2;
  p2.pid = 77;
  p2.gpu_memory_mb = 100;
  p2.kind = "G";
  d0.processes = {p1, p2};
  gpu::DeviceSample d1;  // nothing known
  d1.index = 1;
  d1.source = gpu::Source::kSimulation;
  gpu::DeviceSample d2;
  d2.index = 2;
  in.snapshot.devices = {d0, d1, d2};
  in.snapshot.error = "partial";
  in.gpus = {FullView(0), FullView(1)};
  in.usage = {{2, false, kT0 + 600, {1001, 1002}}, {0, true, kT0 + 1200, {}}};
  in.active_count = 3;
  in.mine = {PlainReservation()};
  in.reservations = {FullReservation(), PlainReservation()};

  auto out = DecodeStatus(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->now, kT0 + 42);
  EXPECT_EQ(out->snapshot.error, "partial");
  ASSERT_THAT(out->snapshot.devices, SizeIs(3));
  const auto& o0 = out->snapshot.devices[0];
  using S = gpu::DeviceSample;
  ExpectSameMembers(d0, o0, &S::index, &S::uuid, &S::name, &S::memory_used_mb, &S::memory_total_mb,
                    &S::utilization_percent, &S::temperature_c, &S::source, &S::process_telemetry);
  ASSERT_THAT(o0.processes, SizeIs(2));
  using Q = gpu::ProcessSample;
  ExpectSameMembers(p1, o0.processes[0], &Q::pid, &Q::uid, &Q::username, &Q::command, &Q::gpu_memory_mb,
                    &Q::sm_utilization_percent, &Q::kind, &Q::identity_source);
  EXPECT_FALSE(o0.processes[1].uid.has_value());
  EXPECT_EQ(o0.processes[1].username, "?");
  EXPECT_FALSE(o0.processes[1].sm_utilization_percent.has_value());
  EXPECT_EQ(o0.processes[1].kind, "G");
  const auto& o1 = out->snapshot.devices[1];
  EXPECT_EQ(o1.source, gpu::Source::kSimulation);
  EXPECT_FALSE(o1.memory_used_mb.has_value());
  EXPECT_FALSE(o1.memory_total_mb.has_value());
  EXPECT_FALSE(o1.utilization_percent.has_value());
  EXPECT_FALSE(o1.temperature_c.has_value());
  EXPECT_FALSE(o1.process_telemetry);
  EXPECT_THAT(o1.processes, IsEmpty());
  EXPECT_EQ(out->snapshot.devices[2].source, gpu::Source::kNone);
  ASSERT_THAT(out->gpus, SizeIs(2));
  ExpectSameView(in.gpus[1], out->gpus[1]);
  ASSERT_THAT(out->usage, SizeIs(2));
  EXPECT_EQ(out->usage[0].used_units, 2);
  EXPECT_FALSE(out->usage[0].exclusive);
  EXPECT_EQ(out->usage[0].next_free, kT0 + 600);
  EXPECT_EQ(out->usage[0].owners_now, (std::vector<uint32_t>{1001, 1002}));
  EXPECT_TRUE(out->usage[1].exclusive);
  EXPECT_THAT(out->usage[1].owners_now, IsEmpty());
  EXPECT_EQ(out->active_count, 3);
  ASSERT_THAT(out->mine, SizeIs(1));
  ExpectSameReservation(in.mine[0], out->mine[0]);
  ASSERT_THAT(out->reservations, SizeIs(2));
  ExpectSameReservation(in.reservations[0], out->reservations[0]);
  ExpectSameReservation(in.reservations[1], out->reservations[1]);
  ExpectStableEncoding(in, DecodeStatus);
  EXPECT_EQ(Write(in), Encode(in).dump());  // canonical text: keys sorted, as nlohmann writes
}

TEST(CodecResultTest, PolicyStatusAndImportSummaryRoundTrip) {
  auto ps = DecodePolicyStatus(
      json::parse(Encode(service::PolicyStatus{service::PolicyState::kMismatch, "gpu_count 4 != 8"}).dump()));
  ASSERT_TRUE(ps.has_value()) << ps.error().message;
  EXPECT_EQ(ps->name(), "mismatch");
  EXPECT_EQ(json::parse(Encode(*ps).dump())["status"], "mismatch");
  EXPECT_FALSE(DecodePolicyStatus(json{{"status", "matched"}, {"message", ""}}).has_value());
  EXPECT_EQ(ps->message, "gpu_count 4 != 8");

  service::ImportSummary in{10, 4, 3, 3, 2, 1, 9};
  auto is = DecodeImportSummary(json::parse(Encode(in).dump()));
  ASSERT_TRUE(is.has_value()) << is.error().message;
  using I = service::ImportSummary;
  ExpectSameMembers(in, *is, &I::reservations, &I::active, &I::cancelled, &I::expired, &I::edits,
                    &I::notifications, &I::operations);
}

TEST(CodecResultTest, JobResultsRoundTrip) {
  service::JobView v{FullReservation(), FullJob()};
  auto jv = DecodeJobView(json::parse(Encode(v).dump()));
  ASSERT_TRUE(jv.has_value()) << jv.error().message;
  ExpectSameReservation(v.reservation, jv->reservation);
  ExpectSameJob(v.job, jv->job);

  store::JobRecord bare;
  bare.reservation_id = "r";
  auto jr = DecodeJobRecord(Encode(bare));
  ASSERT_TRUE(jr.has_value()) << jr.error().message;
  ExpectSameJob(bare, *jr);

  auto list = DecodeJobViews(Encode(std::vector<service::JobView>{v, v}));
  ASSERT_TRUE(list.has_value()) << list.error().message;
  EXPECT_THAT(*list, SizeIs(2));

  service::JobPatchResult pr{false, "status is running", v};
  auto p = DecodeJobPatchResult(json::parse(Encode(pr).dump()));
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_FALSE(p->applied);
  EXPECT_EQ(p->reason, "status is running");
  ExpectSameJob(v.job, p->current.job);
}

TEST(CodecResultTest, PolicyRoundTrip) {
  engine::Policy in;
  in.gpu_count = 8;
  in.slot = 10 * engine::kMinute;
  in.share_capacity = 4;
  in.queue_search = 24 * engine::kHour;
  in.horizon = 7 * engine::kDay;
  in.max_duration = 48 * engine::kHour;
  in.blackouts = {{kT0, kT0 + 3600, "maintenance", {}}, {kT0 + 7200, kT0 + 9000, "", {1, 3}}};
  in.disabled_gpus = {5, 7};
  in.gpu_priority = {{0, 3}, {6, -1}, {10, 2}};
  in.require_shared_memory = true;
  in.shared_memory_reserve_mb = 2048;
  in.host_cpus = 64;
  in.host_ram_mb = 512000;
  in.default_booking_cpus = 2;
  in.default_booking_ram_mb = 4096;
  auto out = DecodePolicy(json::parse(Encode(in).dump()));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->gpu_count, 8);
  EXPECT_EQ(out->slot, 600);
  EXPECT_EQ(out->share_capacity, 4);
  EXPECT_EQ(out->queue_search, in.queue_search);
  EXPECT_EQ(out->horizon, in.horizon);
  EXPECT_EQ(out->max_duration, in.max_duration);
  ASSERT_THAT(out->blackouts, SizeIs(2));
  EXPECT_EQ(out->blackouts[0].start, kT0);
  EXPECT_EQ(out->blackouts[0].end, kT0 + 3600);
  EXPECT_EQ(out->blackouts[0].reason, "maintenance");
  EXPECT_EQ(out->blackouts[1].reason, "");
  EXPECT_EQ(out->blackouts, in.blackouts);
  EXPECT_EQ(out->disabled_gpus, in.disabled_gpus);
  EXPECT_EQ(out->gpu_priority, in.gpu_priority);
  EXPECT_TRUE(out->require_shared_memory);
  EXPECT_EQ(out->shared_memory_reserve_mb, 2048);
  EXPECT_EQ(out->host_cpus, 64);
  EXPECT_EQ(out->host_ram_mb, 512000);
  EXPECT_EQ(out->default_booking_cpus, 2);
  EXPECT_EQ(out->default_booking_ram_mb, 4096);

  engine::Policy def;  // budgets off
  auto d = DecodePolicy(Encode(def));
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_FALSE(d->host_cpus.has_value());
  EXPECT_FALSE(d->host_ram_mb.has_value());
  EXPECT_FALSE(d->BudgetsOn());
  EXPECT_THAT(d->gpu_priority, IsEmpty());
}

TEST(CodecResultTest, PolicyWithImpossibleValuesRefused) {
  engine::Policy p;
  json wire = Encode(p);
  wire["gpu_count"] = 0;
  auto a = DecodePolicy(wire);
  ASSERT_FALSE(a.has_value());
  EXPECT_THAT(a.error().message, HasSubstr("invalid policy"));
  wire = Encode(p);
  wire["slot_seconds"] = 59;
  EXPECT_FALSE(DecodePolicy(wire).has_value());
}

// ---- malformed replies --------------------------------------------------------

template <class D>
void ExpectCorrupt(D decode, const json& j, const std::string& what) {
  decltype(decode(j)) r = Fail(ErrorKind::kInternal, "not run");
  EXPECT_NO_THROW(r = decode(j)) << what;
  ASSERT_FALSE(r.has_value()) << what;
  EXPECT_EQ(r.error().kind, ErrorKind::kCorrupt) << what << ": " << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("malformed reply")) << what;
}

TEST(CodecMalformedTest, EveryReplyDecoderGivesCorruptNotExceptions) {
  std::vector<json> junk = {
      json(), json(42), json("text"), json::object(), json::array({1, 2}), json{{"reservation", 1}}};
  for (const auto& j : junk) {
    std::string what = j.dump();
    ExpectCorrupt(DecodeReservation, j, "reservation " + what);
    ExpectCorrupt(DecodeBookingOutcome, j, "outcome " + what);
    ExpectCorrupt(DecodeCancelOutcome, j, "cancel " + what);
    ExpectCorrupt(DecodeRecommendation, j, "recommendation " + what);
    ExpectCorrupt(DecodeSlots, j, "slots " + what);
    ExpectCorrupt(DecodeListResult, j, "list " + what);
    ExpectCorrupt(DecodeHistory, j, "history " + what);
    ExpectCorrupt(DecodeOperation, j, "operation " + what);
    ExpectCorrupt(DecodeStatus, j, "status " + what);
    ExpectCorrupt(DecodePolicyStatus, j, "policy status " + what);
    ExpectCorrupt(DecodeImportSummary, j, "import " + what);
    ExpectCorrupt(DecodePolicy, j, "policy " + what);
    ExpectCorrupt(DecodeJobRecord, j, "job " + what);
    ExpectCorrupt(DecodeJobView, j, "job view " + what);
    ExpectCorrupt(DecodeJobPatchResult, j, "job patch " + what);
    ExpectCorrupt(DecodeTransferOutcome, j, "transfer " + what);
    ExpectCorrupt(DecodeLedgerSwap, j, "ledger swap " + what);
  }
  // Arrays of things: elements that are not objects.
  ExpectCorrupt(DecodeEvents, json::array({1}), "events [1]");
  ExpectCorrupt(DecodeEvents, json::array({json::object()}), "events [{}]");
  ExpectCorrupt(DecodeNotifications, json::array({"n"}), "notifications [\"n\"]");
  ExpectCorrupt(DecodeJobViews, json::array({json::object()}), "job views [{}]");
}

TEST(CodecMalformedTest, WrongFieldTypesGiveCorrupt) {
  json r = Encode(FullReservation());
  r["gpus"] = "0,1";
  ExpectCorrupt(DecodeReservation, r, "gpus as text");
  r = Encode(FullReservation());
  r["start"] = "2026-11-30";
  ExpectCorrupt(DecodeReservation, r, "start as text");
  r = Encode(FullReservation());
  r["cancellation"] = {{"at", 1}};
  ExpectCorrupt(DecodeReservation, r, "incomplete cancellation");
  r = Encode(FullReservation());
  r.erase("op_signature");
  ExpectCorrupt(DecodeReservation, r, "missing op_signature");

  json o = Encode(service::BookingOutcome{.status = "created", .reservation = PlainReservation()});
  o["selected"] = json::array({json{{"gpu", 0}}});
  ExpectCorrupt(DecodeBookingOutcome, o, "incomplete GPU view");
  o = Encode(service::BookingOutcome{.status = "created", .reservation = PlainReservation()});
  o["job"] = json{{"reservation_id", "r"}};
  ExpectCorrupt(DecodeBookingOutcome, o, "incomplete job");

  service::Recommendation rec;
  rec.placement = FullPlacement(kT0);
  json rj = Encode(rec);
  rj["placement"]["pressure"] = "high";
  ExpectCorrupt(DecodeRecommendation, rj, "pressure as text");

  service::StatusView sv;
  sv.snapshot.devices.resize(1);
  sv.snapshot.devices[0].processes.resize(1);
  json sj = Encode(sv);
  sj["devices"][0]["processes"][0]["pid"] = "4242";
  ExpectCorrupt(DecodeStatus, sj, "pid as text");

  json pj = Encode(engine::Policy{});
  pj["blackouts"] = json::array({json{{"start", 1}}});
  ExpectCorrupt(DecodePolicy, pj, "incomplete blackout");
}

// BUG: DecodePolicy parses gpu_priority keys with std::stoi, whose
// std::invalid_argument / std::out_of_range is not a json::exception, so it
// escapes Guard() and reaches the client as an uncaught exception.
TEST(CodecMalformedTest, PolicyWithNonNumericPriorityKeyIsCorruptNotAnException) {
  json pj = Encode(engine::Policy{});
  pj["gpu_priority"] = json{{"zero", 1}};
  Result<engine::Policy> r = engine::Policy{};
  // std::stoi throws std::invalid_argument, which is not a json::exception.
  EXPECT_NO_THROW(r = DecodePolicy(pj));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::kCorrupt);
}

TEST(CodecMalformedTest, PolicyWithHugePriorityKeyIsCorruptNotAnException) {
  json pj = Encode(engine::Policy{});
  pj["gpu_priority"] = json{{"99999999999", 1}};
  Result<engine::Policy> r = engine::Policy{};
  EXPECT_NO_THROW(r = DecodePolicy(pj));  // std::out_of_range today
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::kCorrupt);
}

// BUG (low): reply decoding maps an unknown mode to "shared", an unknown
// status to "active" and wraps a negative uid to 4294967295 instead of
// reporting a malformed reply.
TEST(CodecMalformedTest, ReservationWithUnknownModeStatusOrUidIsCorrupt) {
  for (auto [key, value] :
       std::vector<std::pair<const char*, json>>{{"mode", "bogus"}, {"status", "weird"}, {"uid", -1}}) {
    json r = Encode(PlainReservation());
    r[key] = value;
    auto d = DecodeReservation(r);
    EXPECT_FALSE(d.has_value()) << key;
    if (!d) {
      EXPECT_EQ(d.error().kind, ErrorKind::kCorrupt) << key;
    }
  }
}

// BUG (low): a recommendation whose echoed request is malformed is reported
// as kInvalid with a request-validation message ("count must be between 1
// and 1024"), as if the user's input were wrong, not as a malformed reply.
TEST(CodecMalformedTest, RecommendationWithBadRequestIsCorrupt) {
  service::Recommendation rec;
  json j = Encode(rec);
  j["request"]["count"] = 0;
  auto d = DecodeRecommendation(j);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().kind, ErrorKind::kCorrupt);
}

// BUG (low): integers above INT64_MAX (unsigned JSON numbers) wrap into
// negative int64 values instead of being refused as out of range.
TEST(CodecStrictTest, IntegersBeyondInt64AreRefusedNotWrapped) {
  json p = CreateParams();
  p["duration_seconds"] = std::numeric_limits<uint64_t>::max();  // decodes as -1 today
  EXPECT_FALSE(DecodeCreate(p).has_value());
  p = CreateParams();
  p["start"] = uint64_t{1} << 63;  // decodes as INT64_MIN today
  EXPECT_FALSE(DecodeCreate(p).has_value());
}

// ---- error objects ------------------------------------------------------------

TEST(CodecErrorTest, EveryErrorKindRoundTrips) {
  const std::vector<ErrorKind> kinds = {ErrorKind::kInvalid,     ErrorKind::kConflict,   ErrorKind::kNoSlot,
                                        ErrorKind::kNotFound,    ErrorKind::kPermission, ErrorKind::kPolicy,
                                        ErrorKind::kCorrupt,     ErrorKind::kIo,         ErrorKind::kBusy,
                                        ErrorKind::kUnavailable, ErrorKind::kInternal};
  for (ErrorKind k : kinds) {
    std::string msg = "message for " + std::string(ErrorKindName(k));
    json obj = ErrorObject(kApplicationError, msg, k);
    EXPECT_EQ(obj["code"], kApplicationError);
    EXPECT_EQ(obj["message"], msg);
    EXPECT_EQ(obj["data"]["kind"], ErrorKindName(k));
    Error e = ErrorFromObject(json::parse(obj.dump()));
    EXPECT_EQ(e.kind, k) << ErrorKindName(k);
    EXPECT_EQ(e.message, msg);
  }
}

TEST(CodecErrorTest, ErrorCodesAreJsonRpcValues) {
  EXPECT_EQ(kParseError, -32700);
  EXPECT_EQ(kInvalidRequest, -32600);
  EXPECT_EQ(kMethodNotFound, -32601);
  EXPECT_EQ(kInvalidParams, -32602);
  EXPECT_EQ(kApplicationError, -32000);
}

TEST(CodecErrorTest, ErrorObjectWithoutKindAndOddErrors) {
  json obj = ErrorObject(kMethodNotFound, "unknown method x");
  EXPECT_FALSE(obj.contains("data"));
  Error e = ErrorFromObject(obj);
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  EXPECT_EQ(e.message, "unknown method x");

  for (json odd : {json(), json(5), json("boom"), json::array(), json::object(), json{{"message", 3}},
                   json{{"data", "x"}}, json{{"data", {{"kind", 7}}}}}) {
    Error o;
    EXPECT_NO_THROW(o = ErrorFromObject(odd)) << odd.dump();
    EXPECT_EQ(o.kind, ErrorKind::kInvalid) << odd.dump();
    EXPECT_EQ(o.message, "the daemon reported an error") << odd.dump();
  }
  Error unknown = ErrorFromObject(json{{"message", "m"}, {"data", {{"kind", "from-the-future"}}}});
  EXPECT_EQ(unknown.kind, ErrorKind::kInvalid);
  EXPECT_EQ(unknown.message, "m");
}

TEST(CodecNotificationsTest, UnreadAndMarkReadRoundTrip) {
  service::UnreadNotifications u;
  u.count = 3;
  u.newest.push_back(
      store::Notification{"n1", 7, "r1", "reservation-reclaimed", 100, 0, "root", "why", "msg"});
  auto back = DecodeUnreadNotifications(json::parse(Encode(u).dump()));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->count, 3);
  ASSERT_EQ(back->newest.size(), 1u);
  EXPECT_EQ(back->newest[0].id, "n1");
  EXPECT_EQ(back->newest[0].reason, "why");
  EXPECT_FALSE(DecodeUnreadNotifications(json{{"count", "x"}}).has_value());

  auto ids = DecodeMarkReadRequest(Encode(MarkReadRequest{{"a", "b"}}));
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(DecodeMarkReadRequest(json::object()).has_value());
  EXPECT_FALSE(DecodeMarkReadRequest(json{{"ids", {1}}}).has_value());
  EXPECT_FALSE(DecodeMarkReadRequest(json{{"ids", json::array()}, {"uid", 0}}).has_value());
  EXPECT_EQ(DecodeMarkReadReply(Encode(MarkReadReply{2})).value_or(MarkReadReply{}).marked, 2);
  EXPECT_FALSE(DecodeMarkReadReply(json::object()).has_value());
}

}  // namespace
}  // namespace bk::rpc
