#include "service/booking_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/parse.h"
#include "gpu/source.h"
#include "service/service_testing.h"
#include "store/fault_vfs.h"
#include "store/ledger_store.h"

namespace bk::service {
namespace {

using json = nlohmann::json;
using engine::Mode, engine::Seconds;
using ::testing::AllOf, ::testing::Contains, ::testing::ElementsAre, ::testing::HasSubstr, ::testing::Not,
    ::testing::SizeIs;

using engine::T;

constexpr Seconds kM = engine::kMinute;
constexpr Seconds kH = engine::kHour;

CreateRequest Req(int count, Seconds duration, Mode mode = Mode::kShared) {
  CreateRequest r;
  r.count = count;
  r.duration = duration;
  r.mode = mode;
  return r;
}

CreateRequest At(CreateRequest r, Seconds start) {
  r.start = start;
  return r;
}

CreateRequest On(CreateRequest r, std::vector<int> gpus) {
  r.count = static_cast<int>(gpus.size());
  r.gpus = std::move(gpus);
  return r;
}

CreateRequest WithOp(CreateRequest r, std::string op) {
  r.op_id = std::move(op);
  return r;
}

class BookingServiceTest : public ServiceTest {
 protected:
  BookingServiceTest() {
    config_.config_file = config_.data_dir + "/config.json";
    config_.gpu_count_detected = false;
  }

  void SetNow(const char* iso) { clock_->Set(T(iso)); }

  engine::Reservation Book(const Actor& who, const CreateRequest& r) {
    auto out = service_->Create(who, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  Error CreateError(const Actor& who, const CreateRequest& r) {
    auto out = service_->Create(who, r);
    EXPECT_FALSE(out.has_value()) << "unexpectedly booked " << (out ? out->reservation.id : "");
    return out ? Error{} : out.error();
  }

  size_t EventCount(const Actor& who) {
    auto log = service_->Log(who, 1000);
    EXPECT_TRUE(log.has_value());
    return log ? log->size() : 0;
  }

  engine::Reservation Fetch(const Actor& who, const std::string& ref) {
    auto h = service_->History(who, ref);
    EXPECT_TRUE(h.has_value()) << (h ? "" : h.error().message);
    return h ? h->reservation : engine::Reservation{};
  }

  // `call` twice: both succeed, and the second, answered from the ledger
  // ("exists"), writes no event.
  void Twice(const std::function<Result<BookingOutcome>()>& call, BookingOutcome* first,
             BookingOutcome* again) {
    auto one = call();
    ASSERT_TRUE(one.has_value()) << one.error().message;
    size_t events = EventCount(me_);
    auto two = call();
    ASSERT_TRUE(two.has_value()) << two.error().message;
    EXPECT_EQ(two->status, "exists");
    EXPECT_EQ(EventCount(me_), events);
    *first = *one;
    *again = *two;
  }

  // `request` refused by `write` alike as it is and as a dry run: the same
  // kind and message, which it returns.
  template <class Request>
  std::string SameRefusal(Request request,
                          Result<BookingOutcome> (BookingService::*write)(const Actor&, const Request&)) {
    auto real = (*service_.*write)(me_, request);
    request.dry_run = true;
    auto dry = (*service_.*write)(me_, request);
    EXPECT_FALSE(real.has_value());
    EXPECT_FALSE(dry.has_value());
    if (real || dry) return "";
    EXPECT_EQ(dry.error().kind, real.error().kind);
    EXPECT_EQ(dry.error().message, real.error().message);
    return dry.error().message;
  }

  bool LedgerExists() const { return std::filesystem::exists(config_.ledger_path); }
  bool DataDirExists() const { return std::filesystem::exists(config_.data_dir); }

  const Actor me_{static_cast<uint32_t>(getuid()), "me", true};
  const Actor other_{static_cast<uint32_t>(getuid()) + 1, "bob", false};
};

// ---- create ---------------------------------------------------------------------

TEST_F(BookingServiceTest, CreateStatusesCreatedThenQueued) {
  auto first = service_->Create(me_, Req(4, 1 * kH, Mode::kExclusive));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(first->status, "created");
  EXPECT_EQ(first->message, "created");
  EXPECT_FALSE(first->replayed);
  EXPECT_EQ(first->allocator_source, "builtin");
  EXPECT_EQ(first->reservation.start, T("2026-11-29T18:50:00Z"));  // the current slot
  EXPECT_EQ(first->reservation.end, T("2026-11-29T19:50:00Z"));
  EXPECT_THAT(first->reservation.gpus, SizeIs(4));
  EXPECT_EQ(first->reservation.mode, Mode::kExclusive);
  EXPECT_EQ(first->reservation.uid, me_.uid);
  EXPECT_EQ(first->reservation.username, "me");
  EXPECT_EQ(first->reservation.status, engine::Status::kActive);
  EXPECT_EQ(first->reservation.created_at, T("2026-11-29T18:52:00Z"));
  EXPECT_THAT(first->selected, SizeIs(4));
  EXPECT_EQ(first->reservation.id.size(), 36u);

  auto second = service_->Create(me_, Req(1, 1 * kH));
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(second->status, "queued");
  EXPECT_EQ(second->reservation.start, T("2026-11-29T19:50:00Z"));
  EXPECT_EQ(second->reservation.end, T("2026-11-29T20:50:00Z"));
  EXPECT_EQ(second->reservation.share_units, 1);

  auto log = service_->Log(me_, 10);
  ASSERT_TRUE(log.has_value());
  ASSERT_THAT(*log, SizeIs(2));
  EXPECT_EQ((*log)[0].action, "add");
  EXPECT_EQ((*log)[0].message, "created");
  EXPECT_EQ((*log)[1].message, "queued");
  EXPECT_FALSE((*log)[1].after.empty());
}

// A simulation file that cannot be read is a failed sample, as a failing
// driver is: admission goes on by slots and the reason reaches the views.
TEST_F(BookingServiceTest, AnUnreadableSimulationFileIsAFailedSampleNotAnError) {
  gpu::SimFileSource missing(Path("missing.json"));
  service_ = std::make_unique<BookingService>(
      BookingService::Deps{&config_, clock_.get(), &missing, static_cast<uid_t>(getuid()), false});
  auto out = service_->Create(me_, {.count = 1, .duration = kH});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_FALSE(out->memory_telemetry);
  auto view = service_->Status(me_, T("2026-11-29T18:50:00Z"), T("2026-11-29T19:00:00Z"), std::nullopt);
  ASSERT_TRUE(view.has_value()) << view.error().message;
  EXPECT_THAT(view->snapshot.error, HasSubstr("cannot read simulation file " + Path("missing.json")));
  EXPECT_EQ(view->snapshot.devices.size(), 4u);
  service_.reset();  // before `missing` goes
}

TEST_F(BookingServiceTest, FirstWriteCreatesPrivateLedger) {
  ASSERT_FALSE(DataDirExists());
  Book(me_, Req(1, 30 * kM));
  ASSERT_TRUE(LedgerExists());
  struct stat st {};
  ASSERT_EQ(::stat(config_.data_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(config_.ledger_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(BookingServiceTest, ExactStartMustBeAlignedAndNotInThePast) {
  Error misaligned = CreateError(me_, At(Req(1, 1 * kH), T("2026-11-29T19:03:00Z")));
  EXPECT_EQ(misaligned.kind, ErrorKind::kInvalid);
  EXPECT_THAT(misaligned.message, HasSubstr("start time must align to a 5-minute boundary"));

  Error past = CreateError(me_, At(Req(1, 1 * kH), T("2026-11-29T18:45:00Z")));
  EXPECT_EQ(past.kind, ErrorKind::kInvalid);
  EXPECT_THAT(past.message, AllOf(HasSubstr("must not be before the current booking slot"),
                                  HasSubstr("2026-11-29T18:50:00Z")));

  // The current slot itself is fine for a create.
  auto now_slot = service_->Create(me_, At(Req(1, 1 * kH), T("2026-11-29T18:50:00Z")));
  ASSERT_TRUE(now_slot.has_value()) << now_slot.error().message;
  EXPECT_EQ(now_slot->status, "created");
  EXPECT_EQ(now_slot->reservation.start, T("2026-11-29T18:50:00Z"));

  Error beyond = CreateError(me_, At(Req(1, 1 * kH), T("2026-12-30T19:00:00Z")));
  EXPECT_EQ(beyond.kind, ErrorKind::kConflict);

  Error bad_duration = CreateError(me_, Req(1, 7 * kM));
  EXPECT_EQ(bad_duration.kind, ErrorKind::kInvalid);
  EXPECT_THAT(bad_duration.message, HasSubstr("positive multiple of 5 minutes"));
  EXPECT_EQ(EventCount(me_), 1u);
}

TEST_F(BookingServiceTest, ExactStartConflictIsNotQueued) {
  Book(other_, At(Req(4, 1 * kH, Mode::kExclusive), T("2026-11-29T20:00:00Z")));
  Error e = CreateError(me_, At(Req(1, 30 * kM), T("2026-11-29T20:30:00Z")));
  EXPECT_EQ(e.kind, ErrorKind::kConflict);
  EXPECT_THAT(e.message, HasSubstr("nearest available"));
  // Touching intervals do not conflict.
  auto after = service_->Create(me_, At(Req(1, 30 * kM), T("2026-11-29T21:00:00Z")));
  ASSERT_TRUE(after.has_value()) << after.error().message;
}

TEST_F(BookingServiceTest, PinnedGpusAreSortedAndFixed) {
  auto out = service_->Create(me_, At(On(Req(2, 1 * kH), {2, 0}), T("2026-11-29T20:00:00Z")));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_THAT(out->reservation.gpus, ElementsAre(0, 2));
  EXPECT_EQ(out->allocator_source, "fixed-gpu");
  Error range = CreateError(me_, On(Req(1, 1 * kH), {4}));
  EXPECT_EQ(range.kind, ErrorKind::kInvalid);
  EXPECT_THAT(range.message, HasSubstr("GPU index 4 is out of range"));
}

// ---- operation IDs and duplicates ----------------------------------------------

TEST_F(BookingServiceTest, OpIdReplayReturnsTheCommittedReservation) {
  BookingOutcome first, again;
  ASSERT_NO_FATAL_FAILURE(
      Twice([&] { return service_->Create(me_, WithOp(Req(1, 1 * kH), "job-1")); }, &first, &again));
  const size_t events = EventCount(me_);
  EXPECT_EQ(first.status, "created");
  EXPECT_EQ(first.reservation.op_id, "job-1");
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.reservation.id, first.reservation.id);
  EXPECT_EQ(again.allocator_source, "idempotent-replay");

  // A queued request still replays after the clock crosses a slot boundary,
  // and from a new process.
  SetNow("2026-11-29T19:07:00Z");
  Restart();
  auto later = service_->Create(me_, WithOp(Req(1, 1 * kH), "job-1"));
  ASSERT_TRUE(later.has_value()) << later.error().message;
  EXPECT_EQ(later->status, "exists");
  EXPECT_EQ(later->reservation.id, first.reservation.id);
  EXPECT_EQ(EventCount(me_), events);

  auto list = service_->List(me_, ListQuery{.history = true});
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->total, 1);

  auto op = service_->Operation(me_, "job-1");
  ASSERT_TRUE(op.has_value());
  EXPECT_TRUE(op->found);
  EXPECT_EQ(op->action, "create");
  ASSERT_TRUE(op->reservation.has_value());
  EXPECT_EQ(op->reservation->id, first.reservation.id);
  auto missing = service_->Operation(me_, "job-2");
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->found);
}

TEST_F(BookingServiceTest, OpIdReusedForADifferentRequestIsRefused) {
  Book(me_, WithOp(Req(1, 1 * kH), "job-1"));
  size_t events = EventCount(me_);
  for (const CreateRequest& different : {WithOp(Req(1, 2 * kH), "job-1"), WithOp(Req(2, 1 * kH), "job-1"),
                                         WithOp(Req(1, 1 * kH, Mode::kExclusive), "job-1"),
                                         WithOp(At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")), "job-1")}) {
    Error e = CreateError(me_, different);
    EXPECT_EQ(e.kind, ErrorKind::kInvalid);
    EXPECT_THAT(e.message, HasSubstr("already used for a different write"));
  }
  EXPECT_EQ(EventCount(me_), events);
  // The same string is a different operation for another user.
  auto theirs = service_->Create(other_, WithOp(Req(1, 2 * kH), "job-1"));
  ASSERT_TRUE(theirs.has_value()) << theirs.error().message;
  EXPECT_EQ(theirs->status, "created");
}

TEST_F(BookingServiceTest, ExactCreateRetriedAfterItsStartStillReplays) {
  auto first = service_->Create(me_, WithOp(At(Req(1, 1 * kH), T("2026-11-29T18:55:00Z")), "exact-1"));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  SetNow("2026-11-29T19:30:00Z");
  auto again = service_->Create(me_, WithOp(At(Req(1, 1 * kH), T("2026-11-29T18:55:00Z")), "exact-1"));
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, "exists");
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->reservation.id, first->reservation.id);
}

TEST_F(BookingServiceTest, InvalidOpIdIsRefused) {
  Error e = CreateError(me_, WithOp(Req(1, 1 * kH), "bad id!"));
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  EXPECT_THAT(e.message, HasSubstr("unsupported characters"));
  EXPECT_FALSE(ValidateOpId(std::string(129, 'a')).has_value());
  EXPECT_TRUE(ValidateOpId(std::string(128, 'a')).has_value());
  EXPECT_TRUE(ValidateOpId("a.b_c:d-1").has_value());
  EXPECT_FALSE(ValidateOpId("").has_value());
}

TEST_F(BookingServiceTest, ExactDuplicateWithoutOpIdIsAnsweredNotDoubled) {
  CreateRequest r = At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z"));
  BookingOutcome first, dup;
  ASSERT_NO_FATAL_FAILURE(Twice([&] { return service_->Create(me_, r); }, &first, &dup));
  EXPECT_FALSE(dup.replayed);
  EXPECT_EQ(dup.reservation.id, first.reservation.id);
  EXPECT_EQ(dup.message, "duplicate request ignored");

  // A different shape is a new booking.
  auto two = service_->Create(me_, At(Req(2, 1 * kH), T("2026-11-29T20:00:00Z")));
  ASSERT_TRUE(two.has_value()) << two.error().message;
  EXPECT_NE(two->reservation.id, first.reservation.id);
  // Someone else's identical request is theirs.
  auto theirs = service_->Create(other_, r);
  ASSERT_TRUE(theirs.has_value()) << theirs.error().message;
  EXPECT_NE(theirs->reservation.id, first.reservation.id);
}

TEST_F(BookingServiceTest, QueuedRequestsNeverDeduplicate) {
  auto a = service_->Create(me_, Req(1, 1 * kH));
  auto b = service_->Create(me_, Req(1, 1 * kH));
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(a->reservation.id, b->reservation.id);
  EXPECT_EQ(b->status, "created");
}

// ---- edit ---------------------------------------------------------------------

TEST_F(BookingServiceTest, EditStartedReservationOnlyChangesTheEnd) {
  engine::Reservation a = Book(me_, At(On(Req(1, 1 * kH, Mode::kExclusive), {0}), T("2026-11-29T18:50:00Z")));
  SetNow("2026-11-29T19:00:00Z");

  auto refused = [&](EditRequest e) {
    e.ref = a.id;
    auto out = service_->Edit(me_, e);
    EXPECT_FALSE(out.has_value());
    if (out) return;
    EXPECT_EQ(out.error().kind, ErrorKind::kInvalid);
    EXPECT_THAT(out.error().message, HasSubstr("a started reservation may only change its end time"));
  };
  refused({.duration = 2 * kH, .start = T("2026-11-29T20:00:00Z")});
  refused({.duration = 2 * kH, .mode = Mode::kShared});
  refused({.duration = 2 * kH, .gpus = {1}});
  refused({.duration = 2 * kH, .exclude = {0}});
  refused({.duration = 2 * kH, .count = 2});
  refused({.duration = 2 * kH, .update_memory = true, .memory_mb = 1024});
  refused({.duration = 2 * kH, .cpus = 2});
  refused({.duration = 2 * kH, .allow_queue = true});

  auto none = service_->Edit(me_, EditRequest{.ref = a.id});
  ASSERT_FALSE(none.has_value());
  EXPECT_THAT(none.error().message, HasSubstr("edit needs at least one change"));

  auto longer = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 2 * kH});
  ASSERT_TRUE(longer.has_value()) << longer.error().message;
  EXPECT_EQ(longer->status, "updated");
  EXPECT_EQ(longer->message, "updated future end of started reservation");
  EXPECT_EQ(longer->reservation.id, a.id);
  EXPECT_EQ(longer->reservation.start, a.start);
  EXPECT_EQ(longer->reservation.end, T("2026-11-29T20:50:00Z"));
  EXPECT_THAT(longer->reservation.gpus, ElementsAre(0));
  EXPECT_EQ(longer->reservation.mode, Mode::kExclusive);
  EXPECT_EQ(longer->reservation.edit_count, 1);

  auto shorter = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 30 * kM});
  ASSERT_TRUE(shorter.has_value()) << shorter.error().message;
  EXPECT_EQ(shorter->reservation.end, T("2026-11-29T19:20:00Z"));
  EXPECT_EQ(shorter->reservation.edit_count, 2);

  auto elapsed = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 5 * kM});
  ASSERT_FALSE(elapsed.has_value());
  EXPECT_THAT(elapsed.error().message, HasSubstr("cannot edit elapsed time"));
  auto misaligned = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 31 * kM});
  ASSERT_FALSE(misaligned.has_value());
  EXPECT_THAT(misaligned.error().message, HasSubstr("positive multiple of 5 minutes"));

  auto history = service_->History(me_, a.id);
  ASSERT_TRUE(history.has_value()) << history.error().message;
  ASSERT_THAT(history->events, SizeIs(3));
  EXPECT_EQ(history->events[0].action, "add");
  const store::Event& edit = history->events[1];
  EXPECT_EQ(edit.action, "edit");
  EXPECT_EQ(edit.message, "updated future end of started reservation");
  EXPECT_EQ(edit.actor_uid, me_.uid);
  json before = json::parse(edit.before);
  json after = json::parse(edit.after);
  EXPECT_EQ(before["end_at"], "2026-11-29T19:50:00Z");
  EXPECT_EQ(after["end_at"], "2026-11-29T20:50:00Z");
  EXPECT_EQ(before["start_at"], "2026-11-29T18:50:00Z");
  EXPECT_EQ(after["start_at"], "2026-11-29T18:50:00Z");
  EXPECT_EQ(after["gpus"], json::array({0}));
  EXPECT_EQ(after["mode"], "exclusive");
  EXPECT_TRUE(after["share_units"].is_null());
}

TEST_F(BookingServiceTest, ExtendingIntoAnotherBookingIsRefused) {
  engine::Reservation a = Book(me_, At(On(Req(1, 1 * kH, Mode::kExclusive), {0}), T("2026-11-29T18:50:00Z")));
  Book(other_, At(On(Req(1, 1 * kH, Mode::kExclusive), {0}), T("2026-11-29T19:50:00Z")));
  SetNow("2026-11-29T19:00:00Z");
  auto out = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 90 * kM});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(out.error().message,
              HasSubstr("cannot extend this reservation because its GPUs are unavailable"));
  EXPECT_EQ(Fetch(me_, a.id).end, T("2026-11-29T19:50:00Z"));
  // Shortening is always fine.
  auto shorter = service_->Edit(me_, EditRequest{.ref = a.id, .duration = 30 * kM});
  ASSERT_TRUE(shorter.has_value()) << shorter.error().message;
}

TEST_F(BookingServiceTest, EditFutureReservationReplacesIt) {
  engine::Reservation f = Book(me_, At(On(Req(1, 1 * kH), {1}), T("2026-11-29T20:00:00Z")));

  auto moved = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T21:00:00Z")});
  ASSERT_TRUE(moved.has_value()) << moved.error().message;
  EXPECT_EQ(moved->status, "updated");
  EXPECT_EQ(moved->reservation.start, T("2026-11-29T21:00:00Z"));
  EXPECT_EQ(moved->reservation.end, T("2026-11-29T22:00:00Z"));
  EXPECT_THAT(moved->reservation.gpus, ElementsAre(1));  // kept

  auto longer = service_->Edit(me_, EditRequest{.ref = f.id, .duration = 2 * kH});
  ASSERT_TRUE(longer.has_value()) << longer.error().message;
  EXPECT_EQ(longer->reservation.start, T("2026-11-29T21:00:00Z"));
  EXPECT_EQ(longer->reservation.end, T("2026-11-29T23:00:00Z"));
  EXPECT_THAT(longer->reservation.gpus, ElementsAre(1));

  auto excluded = service_->Edit(me_, EditRequest{.ref = f.id, .exclude = {1}});
  ASSERT_TRUE(excluded.has_value()) << excluded.error().message;
  EXPECT_THAT(excluded->reservation.gpus, SizeIs(1));
  EXPECT_THAT(excluded->reservation.gpus, Not(Contains(1)));

  auto two = service_->Edit(me_, EditRequest{.ref = f.id, .count = 2});
  ASSERT_TRUE(two.has_value()) << two.error().message;
  EXPECT_THAT(two->reservation.gpus, SizeIs(2));

  auto pinned = service_->Edit(me_, EditRequest{.ref = f.id, .gpus = {3}});
  ASSERT_TRUE(pinned.has_value()) << pinned.error().message;
  EXPECT_THAT(pinned->reservation.gpus, ElementsAre(3));
  EXPECT_EQ(pinned->allocator_source, "fixed-gpu");

  auto exclusive = service_->Edit(me_, EditRequest{.ref = f.id, .mode = Mode::kExclusive});
  ASSERT_TRUE(exclusive.has_value()) << exclusive.error().message;
  EXPECT_EQ(exclusive->reservation.mode, Mode::kExclusive);
  EXPECT_THAT(exclusive->reservation.gpus, ElementsAre(3));
  EXPECT_EQ(exclusive->reservation.edit_count, 6);

  auto history = service_->History(me_, f.id);
  ASSERT_TRUE(history.has_value());
  ASSERT_THAT(history->events, SizeIs(7));
  json before = json::parse(history->events[1].before);
  json after = json::parse(history->events[1].after);
  EXPECT_EQ(before["start_at"], "2026-11-29T20:00:00Z");
  EXPECT_EQ(after["start_at"], "2026-11-29T21:00:00Z");
}

TEST_F(BookingServiceTest, EditFutureStartRules) {
  engine::Reservation f = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  auto past = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T18:45:00Z")});
  ASSERT_FALSE(past.has_value());
  EXPECT_THAT(past.error().message, HasSubstr("edit start must not be in the past"));
  // Unlike a create, an edit cannot move into the running slot.
  auto current = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T18:50:00Z")});
  ASSERT_FALSE(current.has_value());
  EXPECT_THAT(current.error().message, HasSubstr("2026-11-29T18:55:00Z"));
  auto misaligned = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T20:01:00Z")});
  ASSERT_FALSE(misaligned.has_value());
  EXPECT_THAT(misaligned.error().message, HasSubstr("align to a 5-minute boundary"));
  auto both = service_->Edit(me_, EditRequest{.ref = f.id, .gpus = {0}, .exclude = {1}});
  ASSERT_FALSE(both.has_value());
  EXPECT_THAT(both.error().message, HasSubstr("cannot be combined"));
  auto next = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T18:55:00Z")});
  ASSERT_TRUE(next.has_value()) << next.error().message;
  EXPECT_EQ(next->reservation.start, T("2026-11-29T18:55:00Z"));
}

TEST_F(BookingServiceTest, EditAllowQueueMovesToTheNextFreeSlot) {
  engine::Reservation f = Book(me_, At(On(Req(1, 1 * kH), {1}), T("2026-11-29T20:00:00Z")));
  Book(other_, At(Req(4, 1 * kH, Mode::kExclusive), T("2026-11-29T22:00:00Z")));
  auto exact = service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T22:00:00Z")});
  ASSERT_FALSE(exact.has_value());
  EXPECT_EQ(exact.error().kind, ErrorKind::kConflict);
  EXPECT_EQ(Fetch(me_, f.id).start, T("2026-11-29T20:00:00Z"));

  auto queued =
      service_->Edit(me_, EditRequest{.ref = f.id, .start = T("2026-11-29T22:00:00Z"), .allow_queue = true});
  ASSERT_TRUE(queued.has_value()) << queued.error().message;
  EXPECT_EQ(queued->status, "queued");
  EXPECT_EQ(queued->reservation.start, T("2026-11-29T23:00:00Z"));
  EXPECT_EQ(queued->reservation.end, T("2026-11-30T00:00:00Z"));
  EXPECT_THAT(queued->reservation.gpus, ElementsAre(1));
}

TEST_F(BookingServiceTest, EditOpIdReplay) {
  engine::Reservation f = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  EditRequest e{.ref = f.id, .op_id = "edit-1", .duration = 2 * kH};
  BookingOutcome first, again;
  ASSERT_NO_FATAL_FAILURE(Twice([&] { return service_->Edit(me_, e); }, &first, &again));
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.reservation.end, T("2026-11-29T22:00:00Z"));
  e.duration = 3 * kH;
  auto different = service_->Edit(me_, e);
  ASSERT_FALSE(different.has_value());
  EXPECT_THAT(different.error().message, HasSubstr("already used for a different write"));
}

// A dry run is admitted as the edit would be and writes nothing: no change,
// no event, no operation ID, no new generation.
TEST_F(BookingServiceTest, EditDryRunAnswersWithoutWriting) {
  engine::Reservation f = Book(me_, At(On(Req(1, 1 * kH), {1}), T("2026-11-29T20:00:00Z")));
  Book(other_, At(Req(4, 1 * kH, Mode::kExclusive), T("2026-11-29T22:00:00Z")));
  size_t events = EventCount(me_);
  uint64_t generation = service_->Generation();

  EditRequest move{.ref = f.id, .op_id = "edit-dry", .start = T("2026-11-29T21:00:00Z"), .dry_run = true};
  auto preview = service_->Edit(me_, move);
  ASSERT_TRUE(preview.has_value()) << preview.error().message;
  EXPECT_TRUE(preview->dry_run);
  EXPECT_FALSE(preview->replayed);
  EXPECT_EQ(preview->status, "updated");
  EXPECT_EQ(preview->message, "updated");
  EXPECT_EQ(preview->reservation.start, T("2026-11-29T21:00:00Z"));
  EXPECT_EQ(preview->reservation.edit_count, 1);
  EXPECT_THAT(preview->selected, SizeIs(1));
  EXPECT_EQ(Fetch(me_, f.id).start, T("2026-11-29T20:00:00Z"));
  EXPECT_EQ(Fetch(me_, f.id).edit_count, 0);
  EXPECT_EQ(EventCount(me_), events);
  EXPECT_EQ(service_->Generation(), generation);
  EXPECT_FALSE(service_->Operation(me_, "edit-dry")->found);

  // Queued the same way the edit would be.
  auto queued = service_->Edit(
      me_,
      EditRequest{.ref = f.id, .start = T("2026-11-29T22:00:00Z"), .allow_queue = true, .dry_run = true});
  ASSERT_TRUE(queued.has_value()) << queued.error().message;
  EXPECT_EQ(queued->status, "queued");
  EXPECT_EQ(queued->reservation.start, T("2026-11-29T23:00:00Z"));
  EXPECT_EQ(Fetch(me_, f.id).start, T("2026-11-29T20:00:00Z"));

  // Refused for the reason the edit is refused.
  EXPECT_THAT(
      SameRefusal(EditRequest{.ref = f.id, .start = T("2026-11-29T22:00:00Z")}, &BookingService::Edit),
      HasSubstr("conflict"));
  EXPECT_EQ(EventCount(me_), events);

  // The edit itself, with the operation ID the dry run named, is then a first write.
  move.dry_run = false;
  auto done = service_->Edit(me_, move);
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_FALSE(done->replayed);
  EXPECT_FALSE(done->dry_run);
  EXPECT_EQ(done->reservation.start, preview->reservation.start);
  EXPECT_EQ(done->reservation.gpus, preview->reservation.gpus);
  EXPECT_EQ(EventCount(me_), events + 1);
  // A dry run of a committed operation ID replays it and writes nothing.
  move.dry_run = true;
  auto replay = service_->Edit(me_, move);
  ASSERT_TRUE(replay.has_value()) << replay.error().message;
  EXPECT_TRUE(replay->replayed);
  EXPECT_TRUE(replay->dry_run);
  EXPECT_EQ(EventCount(me_), events + 1);
}

// ---- renew --------------------------------------------------------------------

TEST_F(BookingServiceTest, RenewExtendsOnTheSameGpus) {
  engine::Reservation r = Book(me_, At(On(Req(1, 1 * kH), {2}), T("2026-11-29T18:50:00Z")));
  auto out = service_->Renew(me_, RenewRequest{.ref = r.id, .extend_by = 30 * kM});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->status, "updated");
  EXPECT_EQ(out->reservation.start, r.start);
  EXPECT_EQ(out->reservation.end, T("2026-11-29T20:20:00Z"));
  EXPECT_THAT(out->reservation.gpus, ElementsAre(2));
  EXPECT_EQ(out->message, "renewed by 30m");
  EXPECT_EQ(out->allocator_source, "fixed-gpu");
  EXPECT_EQ(Fetch(me_, r.id).end, T("2026-11-29T20:20:00Z"));

  auto bad = service_->Renew(me_, RenewRequest{.ref = r.id, .extend_by = 7 * kM});
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("positive multiple of 5 minutes"));

  Book(other_, At(On(Req(1, 1 * kH, Mode::kExclusive), {2}), T("2026-11-29T20:20:00Z")));
  auto blocked = service_->Renew(me_, RenewRequest{.ref = r.id, .extend_by = 30 * kM});
  ASSERT_FALSE(blocked.has_value());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(blocked.error().message, HasSubstr("cannot renew " + r.ShortId()));
  EXPECT_EQ(Fetch(me_, r.id).end, T("2026-11-29T20:20:00Z"));

  auto history = service_->History(me_, r.id);
  ASSERT_TRUE(history.has_value());
  ASSERT_THAT(history->events, SizeIs(2));
  EXPECT_EQ(history->events[1].action, "renew");
}

TEST_F(BookingServiceTest, RenewOpIdReplay) {
  engine::Reservation r = Book(me_, Req(1, 1 * kH));
  RenewRequest req{.ref = r.id, .extend_by = 1 * kH, .op_id = "renew-1"};
  ASSERT_TRUE(service_->Renew(me_, req).has_value());
  auto again = service_->Renew(me_, req);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->reservation.end, r.end + 1 * kH);  // not extended twice
  EXPECT_EQ(Fetch(me_, r.id).end, r.end + 1 * kH);
}

TEST_F(BookingServiceTest, RenewDryRunAnswersWithoutWriting) {
  engine::Reservation r = Book(me_, At(On(Req(1, 1 * kH), {2}), T("2026-11-29T18:50:00Z")));
  size_t events = EventCount(me_);
  uint64_t generation = service_->Generation();
  RenewRequest renew{.ref = r.id, .extend_by = 30 * kM, .op_id = "renew-dry", .dry_run = true};
  auto preview = service_->Renew(me_, renew);
  ASSERT_TRUE(preview.has_value()) << preview.error().message;
  EXPECT_TRUE(preview->dry_run);
  EXPECT_EQ(preview->status, "updated");
  EXPECT_EQ(preview->message, "renewed by 30m");
  EXPECT_EQ(preview->reservation.end, T("2026-11-29T20:20:00Z"));
  EXPECT_EQ(Fetch(me_, r.id).end, r.end);
  EXPECT_EQ(EventCount(me_), events);
  EXPECT_EQ(service_->Generation(), generation);
  EXPECT_FALSE(service_->Operation(me_, "renew-dry")->found);

  Book(other_, At(On(Req(1, 1 * kH, Mode::kExclusive), {2}), T("2026-11-29T19:50:00Z")));
  EXPECT_THAT(SameRefusal(RenewRequest{.ref = r.id, .extend_by = 30 * kM}, &BookingService::Renew),
              HasSubstr("cannot renew " + r.ShortId()));
}

// The daemon's service: a dry run inside its group commit is undone alone
// and moves no generation, so read caches stay.
TEST_F(BookingServiceTest, DryRunsInTheDaemonMoveNoGeneration) {
  exclusive_store_ = true;
  Restart();
  ASSERT_TRUE(service_->Open().has_value());
  engine::Reservation r = Book(me_, At(On(Req(1, 1 * kH), {2}), T("2026-11-29T20:00:00Z")));
  ASSERT_TRUE(service_->BeginBatch().has_value());
  uint64_t generation = service_->Generation();
  auto renew = service_->Renew(me_, RenewRequest{.ref = r.id, .extend_by = 30 * kM, .dry_run = true});
  ASSERT_TRUE(renew.has_value()) << renew.error().message;
  auto edit = service_->Edit(me_, EditRequest{.ref = r.id, .gpus = {3}, .dry_run = true});
  ASSERT_TRUE(edit.has_value()) << edit.error().message;
  EXPECT_THAT(edit->reservation.gpus, ElementsAre(3));
  EXPECT_EQ(service_->Generation(), generation);
  ASSERT_TRUE(service_->CommitBatch().has_value());
  EXPECT_EQ(Fetch(me_, r.id).end, r.end);
  EXPECT_THAT(Fetch(me_, r.id).gpus, ElementsAre(2));
}

// ---- cancel -------------------------------------------------------------------

TEST_F(BookingServiceTest, OwnerCancelFreesTheTime) {
  engine::Reservation c = Book(me_, At(Req(4, 1 * kH, Mode::kExclusive), T("2026-11-29T20:00:00Z")));
  Error blocked = CreateError(other_, At(Req(1, 1 * kH, Mode::kExclusive), T("2026-11-29T20:00:00Z")));
  EXPECT_EQ(blocked.kind, ErrorKind::kConflict);

  auto out = service_->Cancel(me_, CancelRequest{.ref = c.id});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_FALSE(out->replayed);
  EXPECT_EQ(out->reservation.status, engine::Status::kCancelled);
  ASSERT_TRUE(out->reservation.cancellation.has_value());
  EXPECT_EQ(out->reservation.cancellation->kind, engine::CancelKind::kOwner);
  EXPECT_EQ(out->reservation.cancellation->reason, "cancelled by reservation owner");
  EXPECT_EQ(out->reservation.cancellation->actor_uid, me_.uid);
  EXPECT_EQ(out->reservation.cancellation->at, T("2026-11-29T18:52:00Z"));
  engine::Reservation stored = Fetch(me_, c.id);
  EXPECT_EQ(stored.status, engine::Status::kCancelled);
  ASSERT_TRUE(stored.cancellation.has_value());
  EXPECT_EQ(stored.cancellation->kind, engine::CancelKind::kOwner);

  auto now_free = service_->Create(other_, At(Req(1, 1 * kH, Mode::kExclusive), T("2026-11-29T20:00:00Z")));
  ASSERT_TRUE(now_free.has_value()) << now_free.error().message;
  EXPECT_EQ(now_free->status, "created");

  auto twice = service_->Cancel(me_, CancelRequest{.ref = c.id});
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(twice.error().message, HasSubstr("only active reservations can change"));

  auto history = service_->History(me_, c.id);
  ASSERT_TRUE(history.has_value());
  ASSERT_THAT(history->events, SizeIs(2));
  EXPECT_EQ(history->events[1].action, "cancel");
  EXPECT_TRUE(history->notifications.empty());
}

TEST_F(BookingServiceTest, CancelOpIdReplay) {
  engine::Reservation c = Book(me_, Req(1, 1 * kH));
  auto first = service_->Cancel(me_, CancelRequest{.ref = c.id, .op_id = "cancel-1"});
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(first->reservation.cancellation->op_id, "cancel-1");
  auto again = service_->Cancel(me_, CancelRequest{.ref = c.id, .op_id = "cancel-1"});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->reservation.id, c.id);
  // A create op-id is not a cancel op-id.
  engine::Reservation d = Book(me_, WithOp(Req(1, 1 * kH), "make-1"));
  auto wrong = service_->Cancel(me_, CancelRequest{.ref = d.id, .op_id = "make-1"});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_THAT(wrong.error().message, HasSubstr("already used for a different write"));
}

// BUG (reported): Cancel's replay check compares the stored signature with
// CancelSignature(op->reservation_id), i.e. with itself, so an op-id reused to
// cancel a *different* reservation "replays" the first one instead of being
// refused (an op-id replay of a cancel must name the same reservation, else it
// is a different write).
TEST_F(BookingServiceTest, CancelOpIdReusedForAnotherReservationIsRefused) {
  engine::Reservation a = Book(me_, Req(1, 1 * kH));
  engine::Reservation b = Book(me_, Req(1, 1 * kH));
  ASSERT_TRUE(service_->Cancel(me_, CancelRequest{.ref = a.id, .op_id = "cancel-1"}).has_value());
  auto reused = service_->Cancel(me_, CancelRequest{.ref = b.id, .op_id = "cancel-1"});
  ASSERT_FALSE(reused.has_value());
  EXPECT_THAT(reused.error().message, HasSubstr("already used for a different write"));
}

TEST_F(BookingServiceTest, AnotherUserCannotChangeMyReservation) {
  engine::Reservation mine = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  for (const std::string& ref : {mine.id, mine.ShortId()}) {
    auto cancel = service_->Cancel(other_, CancelRequest{.ref = ref});
    ASSERT_FALSE(cancel.has_value());
    EXPECT_EQ(cancel.error().kind, ErrorKind::kPermission);
    EXPECT_THAT(cancel.error().message, HasSubstr("belongs to me"));
    auto edit = service_->Edit(other_, EditRequest{.ref = ref, .duration = 2 * kH});
    ASSERT_FALSE(edit.has_value());
    EXPECT_EQ(edit.error().kind, ErrorKind::kPermission);
    auto renew = service_->Renew(other_, RenewRequest{.ref = ref, .extend_by = 1 * kH});
    ASSERT_FALSE(renew.has_value());
    EXPECT_EQ(renew.error().kind, ErrorKind::kPermission);
  }
  // Even an administrator may only cancel someone else's reservation.
  engine::Reservation theirs = Book(other_, At(Req(1, 1 * kH), T("2026-11-29T21:00:00Z")));
  auto edit = service_->Edit(me_, EditRequest{.ref = theirs.id, .duration = 2 * kH});
  ASSERT_FALSE(edit.has_value());
  EXPECT_EQ(edit.error().kind, ErrorKind::kPermission);
  auto renew = service_->Renew(me_, RenewRequest{.ref = theirs.id, .extend_by = 1 * kH});
  ASSERT_FALSE(renew.has_value());
  EXPECT_EQ(renew.error().kind, ErrorKind::kPermission);

  engine::Reservation still = Fetch(me_, mine.id);
  EXPECT_EQ(still.status, engine::Status::kActive);
  EXPECT_EQ(still.end, mine.end);
}

// An admin cancel is unread until its owner marks it; the unread line names
// the newest. Someone else's mark, or a second one, changes nothing.
TEST_F(BookingServiceTest, NotificationsStayUnreadUntilTheirOwnerMarksThem) {
  engine::Reservation theirs = Book(other_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  ASSERT_TRUE(
      service_->Cancel(me_, CancelRequest{.ref = theirs.id, .reason = "GPU maintenance"}).has_value());
  auto unread = service_->Unread(other_, 5);
  ASSERT_TRUE(unread.has_value()) << unread.error().message;
  EXPECT_EQ(unread->count, 1);
  ASSERT_THAT(unread->newest, SizeIs(1));
  EXPECT_EQ(unread->newest[0].type, "reservation-admin-cancelled");
  EXPECT_EQ(unread->newest[0].reason, "GPU maintenance");
  EXPECT_EQ(service_->Unread(me_, 5).value_or(UnreadNotifications{.count = -1}).count, 0);
  const std::string id = unread->newest[0].id;
  EXPECT_EQ(service_->MarkNotificationsRead(me_, {id}).value_or(-1), 0);
  EXPECT_EQ(service_->MarkNotificationsRead(other_, {id}).value_or(-1), 1);
  EXPECT_EQ(service_->MarkNotificationsRead(other_, {id}).value_or(-1), 0);
  EXPECT_EQ(service_->Unread(other_, 5).value_or(UnreadNotifications{.count = -1}).count, 0);
  EXPECT_THAT(service_->Notifications(other_, 5).value_or(std::vector<store::Notification>{}), SizeIs(1));
}

TEST_F(BookingServiceTest, AdminCancelNeedsAReasonAndNotifiesTheOwner) {
  engine::Reservation theirs = Book(other_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  auto no_reason = service_->Cancel(me_, CancelRequest{.ref = theirs.id});
  ASSERT_FALSE(no_reason.has_value());
  EXPECT_EQ(no_reason.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(no_reason.error().message, HasSubstr("needs --reason"));
  auto control = service_->Cancel(me_, CancelRequest{.ref = theirs.id, .reason = "a\x01z"});
  ASSERT_FALSE(control.has_value());
  EXPECT_THAT(control.error().message, HasSubstr("control characters"));
  auto blank = service_->Cancel(me_, CancelRequest{.ref = theirs.id, .reason = "   "});
  ASSERT_FALSE(blank.has_value());
  EXPECT_THAT(blank.error().message, HasSubstr("1-512 characters"));

  auto out = service_->Cancel(me_, CancelRequest{.ref = theirs.ShortId(), .reason = "  node maintenance "});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->reservation.status, engine::Status::kCancelled);
  ASSERT_TRUE(out->reservation.cancellation.has_value());
  EXPECT_EQ(out->reservation.cancellation->kind, engine::CancelKind::kAdministrator);
  EXPECT_EQ(out->reservation.cancellation->reason, "node maintenance");
  EXPECT_EQ(out->reservation.cancellation->actor_uid, me_.uid);
  EXPECT_EQ(out->reservation.cancellation->actor_username, "me");

  auto notes = service_->Notifications(other_, 10);
  ASSERT_TRUE(notes.has_value());
  ASSERT_THAT(*notes, SizeIs(1));
  EXPECT_EQ((*notes)[0].uid, other_.uid);
  EXPECT_EQ((*notes)[0].reservation_id, theirs.id);
  EXPECT_EQ((*notes)[0].type, "reservation-admin-cancelled");
  EXPECT_EQ((*notes)[0].reason, "node maintenance");
  EXPECT_EQ((*notes)[0].actor_username, "me");
  EXPECT_THAT((*notes)[0].message, HasSubstr(theirs.ShortId()));
  auto mine = service_->Notifications(me_, 10);
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine->empty());

  auto history = service_->History(other_, theirs.id);
  ASSERT_TRUE(history.has_value()) << history.error().message;
  ASSERT_THAT(history->events, SizeIs(2));
  EXPECT_EQ(history->events[1].action, "admin-cancel");
  EXPECT_EQ(history->events[1].actor_uid, me_.uid);
  EXPECT_THAT(history->notifications, SizeIs(1));
}

// ---- references ----------------------------------------------------------------

TEST_F(BookingServiceTest, ReferencesByNumberPrefixAndId) {
  engine::Reservation x = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  engine::Reservation y = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T19:00:00Z")));
  engine::Reservation z = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T21:00:00Z")));
  Book(other_, At(Req(1, 1 * kH), T("2026-11-29T18:50:00Z")));

  // List numbers follow the start order of the caller's active reservations.
  EXPECT_EQ(Fetch(me_, "1").id, y.id);
  EXPECT_EQ(Fetch(me_, "2").id, x.id);
  EXPECT_EQ(Fetch(me_, " 3 ").id, z.id);
  EXPECT_EQ(Fetch(me_, x.ShortId()).id, x.id);
  EXPECT_EQ(Fetch(me_, z.id).id, z.id);

  auto cancelled = service_->Cancel(me_, CancelRequest{.ref = "1"});
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().message;
  EXPECT_EQ(cancelled->reservation.id, y.id);
  EXPECT_EQ(Fetch(me_, "1").id, x.id);  // renumbered

  auto unknown = service_->Cancel(me_, CancelRequest{.ref = "zzzz"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().kind, ErrorKind::kNotFound);
  EXPECT_THAT(unknown.error().message, HasSubstr("reservation not found"));
  auto empty = service_->Cancel(me_, CancelRequest{.ref = "  "});
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().kind, ErrorKind::kInvalid);
}

TEST_F(BookingServiceTest, AmbiguousPrefixIsRefused) {
  {
    store::OpenOptions o;
    o.path = config_.ledger_path;
    o.create = true;
    o.owner = getuid();
    auto s = store::LedgerStore::Open(o);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    for (const char* id : {"abcd0000-0000-4000-8000-000000000001", "abcd0000-0000-4000-8000-000000000002"}) {
      engine::Reservation r;
      r.id = id;
      r.uid = me_.uid;
      r.username = "me";
      r.gpus = {std::string(id).back() == '1' ? 0 : 1};
      r.start = T("2026-11-29T20:00:00Z");
      r.end = T("2026-11-29T21:00:00Z");
      r.created_at = r.updated_at = T("2026-11-29T18:00:00Z");
      r.op_id = std::string("seed-") + id;
      ASSERT_TRUE((*s)->Insert(r).has_value());
    }
  }
  auto ambiguous = service_->Cancel(me_, CancelRequest{.ref = "abcd"});
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_EQ(ambiguous.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(ambiguous.error().message,
              AllOf(HasSubstr("ambiguous reservation ID abcd"), HasSubstr("abcd0000")));
  auto history = service_->History(me_, "abcd");
  ASSERT_FALSE(history.has_value());
  EXPECT_THAT(history.error().message, HasSubstr("ambiguous"));

  auto exact = service_->Cancel(me_, CancelRequest{.ref = "abcd0000-0000-4000-8000-000000000002"});
  ASSERT_TRUE(exact.has_value()) << exact.error().message;
  EXPECT_EQ(exact->reservation.id, "abcd0000-0000-4000-8000-000000000002");
  // Only one active match is left now.
  auto rest = service_->Cancel(me_, CancelRequest{.ref = "abcd"});
  ASSERT_TRUE(rest.has_value()) << rest.error().message;
  EXPECT_EQ(rest->reservation.id, "abcd0000-0000-4000-8000-000000000001");
}

// ---- host budgets -------------------------------------------------------------

TEST_F(BookingServiceTest, HostCpuBudget) {
  config_.policy.host_cpus = 8;
  auto cpus = [](CreateRequest r, int64_t n) {
    r.cpus = n;
    return r;
  };
  auto a = service_->Create(me_, cpus(Req(1, 1 * kH), 4));
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->status, "created");
  EXPECT_EQ(a->reservation.cpus, 4);
  auto b = service_->Create(me_, cpus(Req(1, 2 * kH), 4));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->status, "created");
  EXPECT_EQ(b->reservation.start, T("2026-11-29T18:50:00Z"));

  auto c = service_->Create(me_, cpus(Req(1, 1 * kH), 4));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->status, "queued");
  EXPECT_EQ(c->reservation.start, a->reservation.end);

  // (Someone else's: the same shape from me would be answered as a duplicate of A.)
  Error exact = CreateError(other_, At(cpus(Req(1, 1 * kH), 4), T("2026-11-29T18:50:00Z")));
  EXPECT_EQ(exact.kind, ErrorKind::kConflict);
  EXPECT_THAT(exact.message, HasSubstr("host CPU budget full"));

  Error too_big = CreateError(me_, cpus(Req(1, 1 * kH), 9));
  EXPECT_EQ(too_big.kind, ErrorKind::kInvalid);
  EXPECT_THAT(too_big.message, HasSubstr("exceeds this host's budget of 8 CPUs"));

  // Without a declaration the policy default (1 CPU) is recorded.
  auto d = service_->Create(me_, At(Req(1, 1 * kH), T("2026-11-30T06:00:00Z")));
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->reservation.cpus, 1);
  EXPECT_EQ(d->reservation.ram_mb, 0);  // no RAM budget configured
}

TEST_F(BookingServiceTest, RenewRespectsTheHostBudget) {
  config_.policy.host_cpus = 8;
  CreateRequest r = On(Req(1, 1 * kH), {0});
  r.cpus = 4;
  engine::Reservation a = Book(me_, r);
  CreateRequest later = At(On(Req(1, 1 * kH), {1}), a.end);
  later.cpus = 8;
  Book(other_, later);
  auto renew = service_->Renew(me_, RenewRequest{.ref = a.id, .extend_by = 30 * kM});
  ASSERT_FALSE(renew.has_value());
  EXPECT_EQ(renew.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(renew.error().message, HasSubstr("host CPU budget full"));
}

// ---- policy binding -----------------------------------------------------------

TEST_F(BookingServiceTest, PolicyIsBoundAtFirstWrite) {
  auto unbound = service_->CheckPolicy();
  ASSERT_TRUE(unbound.has_value());
  EXPECT_EQ(unbound->name(), "unbound");
  EXPECT_FALSE(LedgerExists());

  engine::Reservation r = Book(me_, Req(1, 1 * kH));
  auto match = service_->CheckPolicy();
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name(), "match");

  config_.policy.gpu_count = 8;
  Restart();
  auto mismatch = service_->CheckPolicy();
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->name(), "mismatch");
  EXPECT_THAT(mismatch->message, HasSubstr("gpu_count: ledger=4 local=8"));

  Error create = CreateError(me_, Req(1, 1 * kH));
  EXPECT_EQ(create.kind, ErrorKind::kPolicy);
  EXPECT_THAT(create.message, HasSubstr("gpu_count: ledger=4 local=8"));
  auto cancel = service_->Cancel(me_, CancelRequest{.ref = r.id});
  ASSERT_FALSE(cancel.has_value());
  EXPECT_EQ(cancel.error().kind, ErrorKind::kPolicy);
  auto renew = service_->Renew(me_, RenewRequest{.ref = r.id, .extend_by = 1 * kH});
  ASSERT_FALSE(renew.has_value());
  EXPECT_EQ(renew.error().kind, ErrorKind::kPolicy);
  auto recommend = service_->Recommend(me_, Req(1, 1 * kH));
  ASSERT_FALSE(recommend.has_value());
  EXPECT_EQ(recommend.error().kind, ErrorKind::kPolicy);
  // Plain reads still work.
  auto list = service_->List(me_, {});
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->total, 1);

  // Settings outside the bound policy do not matter.
  config_.policy.gpu_count = 4;
  config_.policy.horizon = 7 * engine::kDay;
  Restart();
  auto again = service_->CheckPolicy();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->name(), "match");
}

// ---- reads --------------------------------------------------------------------

TEST_F(BookingServiceTest, ReadsOnAMissingLedgerCreateNothing) {
  auto list = service_->List(me_, {});
  ASSERT_TRUE(list.has_value()) << list.error().message;
  EXPECT_EQ(list->total, 0);
  auto status = service_->Status(me_, clock_->Now(), clock_->Now() + 2 * kH, std::nullopt);
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_THAT(status->gpus, SizeIs(4));
  EXPECT_TRUE(status->reservations.empty());
  EXPECT_EQ(status->now, T("2026-11-29T18:52:00Z"));
  auto slots = service_->Slots(me_, Req(1, 1 * kH), clock_->Now(), 10);
  ASSERT_TRUE(slots.has_value()) << slots.error().message;
  EXPECT_THAT(slots->options, SizeIs(4));
  for (const auto& o : slots->options) EXPECT_EQ(o.start, T("2026-11-29T18:50:00Z"));
  auto rec = service_->Recommend(me_, Req(2, 1 * kH));
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  EXPECT_TRUE(rec->available);
  ASSERT_TRUE(rec->placement.has_value());
  EXPECT_THAT(rec->placement->gpus, SizeIs(2));
  EXPECT_EQ(rec->placement->start, T("2026-11-29T18:50:00Z"));
  auto log = service_->Log(me_, 10);
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(log->empty());
  auto notes = service_->Notifications(me_, 10);
  ASSERT_TRUE(notes.has_value());
  auto op = service_->Operation(me_, "job-1");
  ASSERT_TRUE(op.has_value());
  EXPECT_FALSE(op->found);
  auto policy = service_->CheckPolicy();
  ASSERT_TRUE(policy.has_value());
  auto history = service_->History(me_, "1");
  ASSERT_FALSE(history.has_value());
  EXPECT_EQ(history.error().kind, ErrorKind::kNotFound);
  // A replayable create whose op-id is unknown only reads before it writes;
  // a failing one writes nothing at all.
  Error bad = CreateError(me_, WithOp(Req(1, 7 * kM), "job-1"));
  EXPECT_EQ(bad.kind, ErrorKind::kInvalid);

  EXPECT_FALSE(DataDirExists());
  EXPECT_FALSE(LedgerExists());
}

// Every write on a ledger that does not exist yet is tried in memory first:
// one that fails or changes nothing leaves no file, and one that commits
// creates the ledger once, with one copy of what it wrote.
TEST_F(BookingServiceTest, OnlyAWriteThatCommitsCreatesTheLedger) {
  EXPECT_FALSE(service_->Cancel(me_, CancelRequest{.ref = "1"}).has_value());
  EXPECT_FALSE(service_->Renew(me_, RenewRequest{.ref = "ffff", .extend_by = 30 * kM}).has_value());
  EXPECT_FALSE(service_->UpdateJob(me_, JobPatch{.reservation_id = "ffff"}).has_value());
  EXPECT_FALSE(service_->RetryJob(me_, JobRetryRequest{.ref = "1"}).has_value());
  EXPECT_FALSE(service_->Reclaim("ffff", "no-show").has_value());
  EXPECT_FALSE(service_->Edit(me_, EditRequest{.ref = "1", .duration = 1 * kH, .dry_run = true}).has_value());
  EXPECT_FALSE(
      service_->Renew(me_, RenewRequest{.ref = "ffff", .extend_by = 30 * kM, .dry_run = true}).has_value());
  EXPECT_FALSE(DataDirExists());

  Book(me_, WithOp(Req(1, 1 * kH), "first"));
  ASSERT_TRUE(LedgerExists());
  EXPECT_EQ(EventCount(me_), 1u);
  Restart();
  auto mine = service_->List(me_, ListQuery{});
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->reservations.size(), 1u);
  // A later failure leaves the ledger, and what it holds, alone.
  EXPECT_FALSE(service_->Cancel(me_, CancelRequest{.ref = "ffff"}).has_value());
  Restart();
  EXPECT_TRUE(LedgerExists());
  EXPECT_EQ(service_->List(me_, ListQuery{})->reservations.size(), 1u);
}

TEST_F(BookingServiceTest, ReadsSeeWrites) {
  Book(me_, At(Req(1, 1 * kH), T("2026-11-29T20:00:00Z")));
  Book(me_, At(Req(1, 1 * kH), T("2026-11-29T19:00:00Z")));
  engine::Reservation gone = Book(me_, At(Req(1, 1 * kH), T("2026-11-29T21:00:00Z")));
  Book(other_, At(Req(4, 10 * kM, Mode::kExclusive), T("2026-11-29T18:50:00Z")));
  ASSERT_TRUE(service_->Cancel(me_, CancelRequest{.ref = gone.id}).has_value());

  auto mine = service_->List(me_, {});
  ASSERT_TRUE(mine.has_value());
  EXPECT_EQ(mine->total, 2);
  ASSERT_THAT(mine->reservations, SizeIs(2));
  EXPECT_LT(mine->reservations[0].start, mine->reservations[1].start);
  EXPECT_FALSE(mine->truncated);

  auto limited = service_->List(me_, ListQuery{.limit = 1});
  ASSERT_TRUE(limited.has_value());
  EXPECT_EQ(limited->total, 2);
  EXPECT_TRUE(limited->truncated);
  EXPECT_THAT(limited->reservations, SizeIs(1));

  auto everyone = service_->List(me_, ListQuery{.everyone = true});
  ASSERT_TRUE(everyone.has_value());
  EXPECT_EQ(everyone->total, 3);

  auto history = service_->List(me_, ListQuery{.history = true});
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->total, 3);
  EXPECT_EQ(history->reservations[0].id, gone.id);  // newest first

  auto status = service_->Status(me_, clock_->Now(), clock_->Now() + 4 * kH, std::nullopt);
  ASSERT_TRUE(status.has_value());
  EXPECT_THAT(status->reservations, SizeIs(3));  // cancelled ones are not drawn

  auto rec = service_->Recommend(me_, Req(1, 1 * kH));
  ASSERT_TRUE(rec.has_value());
  ASSERT_TRUE(rec->available);
  EXPECT_EQ(rec->placement->start, T("2026-11-29T19:00:00Z"));  // after the exclusive block
  EXPECT_TRUE(rec->placement->queued);

  auto exact = service_->Recommend(me_, At(Req(1, 1 * kH), T("2026-11-29T18:50:00Z")));
  ASSERT_TRUE(exact.has_value());
  EXPECT_FALSE(exact->available);
  EXPECT_FALSE(exact->reason.empty());
}

// ---- change counter -----------------------------------------------------------

uint64_t Counter(BookingService& s) {
  auto c = s.ChangeCounter();
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
  return c ? *c : 0;
}

// A private ledger is written by other processes too: their commits (seen
// through SQLite's data_version) move the counter as this process's own do.
TEST_F(BookingServiceTest, ChangeCounterMovesWithEveryCommitOfAnyProcess) {
  const uint64_t c0 = Counter(*service_);
  EXPECT_EQ(Counter(*service_), c0) << "nothing happened";
  EXPECT_FALSE(DataDirExists()) << "asking creates nothing";

  // Another process creates the ledger and books, then this one books.
  BookingService other({&config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()), false});
  ASSERT_TRUE(other.Create(other_, Req(1, 1 * kH)).has_value());
  const uint64_t c1 = Counter(*service_);
  EXPECT_NE(c1, c0);
  EXPECT_EQ(Counter(*service_), c1);
  engine::Reservation mine = Book(me_, Req(1, 1 * kH));
  const uint64_t c2 = Counter(*service_);
  EXPECT_NE(c2, c1);
  EXPECT_EQ(Counter(*service_), c2);

  // Reads, refusals and dry runs write nothing.
  ASSERT_TRUE(service_->List(me_, {}).has_value());
  EXPECT_FALSE(service_->Cancel(me_, CancelRequest{.ref = "ffff"}).has_value());
  ASSERT_TRUE(
      service_->Renew(me_, RenewRequest{.ref = mine.id, .extend_by = 30 * kM, .dry_run = true}).has_value());
  EXPECT_EQ(Counter(*service_), c2);

  // The other process writes while this one's connection stays open.
  ASSERT_TRUE(other.Cancel(other_, CancelRequest{.ref = "1"}).has_value());
  const uint64_t c3 = Counter(*service_);
  EXPECT_NE(c3, c2);
  EXPECT_EQ(Counter(*service_), c3);
}

// The daemon writes alone: its counter is the generation, which the
// monitor's reclaims move as every other commit does.
TEST_F(BookingServiceTest, TheDaemonsChangeCounterIsItsGeneration) {
  exclusive_store_ = true;
  Restart();
  ASSERT_TRUE(service_->Open().has_value());
  EXPECT_EQ(Counter(*service_), service_->Generation());
  engine::Reservation r = Book(other_, Req(1, 1 * kH));
  const uint64_t booked = Counter(*service_);
  EXPECT_EQ(booked, service_->Generation());
  EXPECT_EQ(Counter(*service_), booked);
  ASSERT_TRUE(service_->Reclaim(r.id, "no process on its GPUs").has_value());
  EXPECT_GT(Counter(*service_), booked);
}

// ---- group commit (the daemon) ------------------------------------------------

// The service as the daemon builds it, over a disk that can be made to fail.
class BatchTest : public BookingServiceTest {
 protected:
  void SetUp() override {
    vfs_ = &store::FaultVfs::Install();
    vfs_->Reset();
    BookingService::Deps deps{&config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()), true};
    deps.store_vfs = store::FaultVfs::kName;
    service_ = std::make_unique<BookingService>(deps);
    ASSERT_TRUE(service_->Open().has_value());
  }
  void TearDown() override {
    service_.reset();
    vfs_->Reset();
  }

  // The IDs another process finds in the ledger once the daemon is gone.
  std::vector<std::string> OnDisk() {
    service_.reset();
    BookingService reader({&config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()), false});
    auto list = reader.List(me_, ListQuery{.everyone = true});
    EXPECT_TRUE(list.has_value()) << list.error().message;
    std::vector<std::string> ids;
    for (const auto& r : list ? list->reservations : std::vector<engine::Reservation>{}) ids.push_back(r.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  store::FaultVfs* vfs_ = nullptr;
};

TEST_F(BatchTest, WritesOfABatchSeeEachOtherAndBecomeDurableTogether) {
  const int64_t syncs = vfs_->count(store::FaultPoint::kSync);
  ASSERT_TRUE(service_->BeginBatch().has_value());
  std::vector<std::string> ids;
  std::vector<int> gpus;
  for (int i = 0; i < 4; ++i) {
    engine::Reservation r = Book(me_, Req(1, 1 * kH, Mode::kExclusive));
    ids.push_back(r.id);
    gpus.insert(gpus.end(), r.gpus.begin(), r.gpus.end());
  }
  std::sort(gpus.begin(), gpus.end());
  EXPECT_EQ(gpus, (std::vector<int>{0, 1, 2, 3}));          // each placed around the ones before it
  EXPECT_EQ(vfs_->count(store::FaultPoint::kSync), syncs);  // none durable yet
  ASSERT_TRUE(service_->CommitBatch().has_value());
  EXPECT_GT(vfs_->count(store::FaultPoint::kSync), syncs);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(OnDisk(), ids);
}

TEST_F(BatchTest, AFailedBatchIsForgottenOnDiskAndInMemory) {
  engine::Reservation before = Book(me_, On(Req(1, 1 * kH, Mode::kExclusive), {0}));
  ASSERT_TRUE(service_->BeginBatch().has_value());
  engine::Reservation lost = Book(me_, Req(3, 1 * kH, Mode::kExclusive));
  EXPECT_EQ(lost.gpus, (std::vector<int>{1, 2, 3}));
  const uint64_t generation = service_->Generation();
  vfs_->FailAt(store::FaultPoint::kSync, vfs_->count(store::FaultPoint::kSync) + 1, SQLITE_IOERR_FSYNC);
  auto st = service_->CommitBatch();
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().kind, ErrorKind::kIo);
  EXPECT_NE(service_->Generation(), generation);  // read caches drop their answers
  vfs_->Disarm();
  // The GPUs the lost booking held are free again for the same service.
  auto again = service_->Create(me_, Req(3, 1 * kH, Mode::kExclusive));
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->status, "created");
  EXPECT_EQ(again->reservation.gpus, (std::vector<int>{1, 2, 3}));
  std::vector<std::string> kept{before.id, again->reservation.id};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(OnDisk(), kept);
}

// What `bk admin policy --disabled-gpus 0` proposes, built as the daemon
// would from the file.
config::PolicyProposal DisableGpu0(const config::Config& running) {
  config::PolicyProposal p;
  p.config = running;
  p.config.policy.disabled_gpus = {0};
  p.changes = {{"disabled_gpus", "[]", "[0]"}};
  return p;
}

TEST_F(BatchTest, APolicyChangeRefusedForAConflictWritesNothing) {
  engine::Reservation on0 = Book(me_, On(Req(1, 1 * kH, Mode::kExclusive), {0}));
  const uint64_t generation = service_->Generation();
  auto refused = service_->ChangePolicy(me_, {}, DisableGpu0(config_));
  ASSERT_TRUE(refused.has_value()) << refused.error().message;
  EXPECT_EQ(refused->status, "refused");
  ASSERT_EQ(refused->conflicts.size(), 1u);
  EXPECT_EQ(refused->conflicts[0].reservation.id, on0.id);
  EXPECT_EQ(refused->conflicts[0].why, "GPU 0 is disabled");
  EXPECT_EQ(service_->Generation(), generation);
  EXPECT_TRUE(service_->policy().disabled_gpus.empty());
  // Forced: the booking stays, its owner is told, the policy applies at once.
  PolicyReloadRequest force{.force = true, .reason = "fan failure"};
  auto forced = service_->ChangePolicy(me_, force, DisableGpu0(config_));
  ASSERT_TRUE(forced.has_value()) << forced.error().message;
  EXPECT_EQ(forced->status, "applied");
  EXPECT_EQ(forced->notified, 1);
  EXPECT_EQ(service_->policy().disabled_gpus, (std::vector<int>{0}));
  auto pinned = service_->Create(me_, On(Req(1, 1 * kH), {0}));
  ASSERT_FALSE(pinned.has_value());
  EXPECT_THAT(pinned.error().message, ::testing::HasSubstr("disabled"));
  auto notes = service_->Notifications(me_, 10);
  ASSERT_TRUE(notes.has_value());
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].type, "reservation-policy-conflict");
  // Not an administrator: refused whatever it asks.
  Actor other{me_.uid + 1, "other", false};
  auto denied = service_->ChangePolicy(other, force, DisableGpu0(config_));
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().kind, ErrorKind::kPermission);
}

TEST_F(BatchTest, APolicyChangeInAFailedBatchIsTakenBack) {
  ASSERT_TRUE(service_->BeginBatch().has_value());
  auto applied = service_->ChangePolicy(me_, {}, DisableGpu0(config_));
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
  EXPECT_EQ(applied->status, "applied");
  EXPECT_EQ(service_->policy().disabled_gpus, (std::vector<int>{0}));
  vfs_->FailAt(store::FaultPoint::kSync, vfs_->count(store::FaultPoint::kSync) + 1, SQLITE_IOERR_FSYNC);
  ASSERT_FALSE(service_->CommitBatch().has_value());
  vfs_->Disarm();
  // The ledger never recorded the change, so the service admits as before it.
  EXPECT_TRUE(service_->policy().disabled_gpus.empty());
  auto on0 = service_->Create(me_, On(Req(1, 1 * kH), {0}));
  ASSERT_TRUE(on0.has_value()) << on0.error().message;
  // A change in a batch that commits stays.
  ASSERT_TRUE(service_->BeginBatch().has_value());
  PolicyReloadRequest force{.force = true, .reason = "fan failure"};
  ASSERT_TRUE(service_->ChangePolicy(me_, force, DisableGpu0(config_)).has_value());
  ASSERT_TRUE(service_->CommitBatch().has_value());
  EXPECT_EQ(service_->policy().disabled_gpus, (std::vector<int>{0}));
}

}  // namespace
}  // namespace bk::service

namespace bk::service {
namespace {

// The daemon answers views from its live calendar and a command in private
// mode from the ledger: after the same history, at the same instant, both
// show the same reservations and the same per-GPU use.
class LiveCalendarViewsTest : public BookingServiceTest {
 protected:
  struct Seen {
    std::vector<std::string> window, running, mine;
    int active = 0, mine_total = 0;
    std::vector<int> used;
  };
  Seen Look(Seconds from, Seconds to) {
    Seen s;
    auto v = service_->Status(me_, from, to, 2);
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    if (!v) return s;
    for (const auto& r : v->reservations) s.window.push_back(r.id);
    for (const auto& r : v->mine) s.mine.push_back(r.id);
    for (const auto& u : v->usage) s.used.push_back(u.exclusive ? -1 : u.used_units);
    s.active = v->active_count;
    s.mine_total = v->mine_total;
    auto running = service_->Running(clock_->Now());
    EXPECT_TRUE(running.has_value());
    if (running)
      for (const auto& r : *running) s.running.push_back(r.id);
    return s;
  }
};

TEST_F(LiveCalendarViewsTest, DaemonAndPrivateModeShowTheSame) {
  exclusive_store_ = true;
  Restart();
  std::vector<engine::Reservation> made;
  for (int i = 0; i < 12; ++i) {
    CreateRequest r = Req(1 + i % 2, (1 + i % 3) * kH, i % 4 == 3 ? Mode::kExclusive : Mode::kShared);
    made.push_back(Book(i % 3 == 0 ? other_ : me_, r));
  }
  ASSERT_TRUE(service_->Cancel(me_, CancelRequest{.ref = made[1].id}).has_value());
  SetNow("2026-11-29T20:10:00Z");  // some have ended, some run, some wait
  const Seconds now = clock_->Now();
  std::vector<std::pair<Seconds, Seconds>> windows = {
      {now, now + 1}, {now - 2 * kH, now + 1}, {now - kH, now + 6 * kH}, {now + kH, now + 2 * kH}};
  std::vector<Seen> daemon;
  for (auto [from, to] : windows) daemon.push_back(Look(from, to));

  exclusive_store_ = false;
  Restart();
  for (size_t i = 0; i < windows.size(); ++i) {
    Seen local = Look(windows[i].first, windows[i].second);
    EXPECT_EQ(daemon[i].window, local.window) << i;
    EXPECT_EQ(daemon[i].running, local.running) << i;
    EXPECT_EQ(daemon[i].mine, local.mine) << i;
    EXPECT_EQ(daemon[i].used, local.used) << i;
    EXPECT_EQ(daemon[i].active, local.active) << i;
    EXPECT_EQ(daemon[i].mine_total, local.mine_total) << i;
  }
  EXPECT_FALSE(daemon[0].running.empty());
  EXPECT_GT(daemon[2].window.size(), daemon[0].window.size());
}

}  // namespace
}  // namespace bk::service
