#include "service/fingerprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "engine/parse.h"

namespace bk::service {
namespace {

using engine::Mode;
using ::testing::MatchesRegex;

engine::Seconds T(const char* iso) {
  auto t = engine::ParseIsoTime(iso, engine::FixedZone(0));
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

CreateRequest Base() {
  CreateRequest r;
  r.count = 2;
  r.duration = 3600;
  r.mode = Mode::kShared;
  r.share_units = 1;
  r.memory_mb = 12288;
  return r;
}

std::string Sig(const CreateRequest& r) { return CreateSignature(r, r.mode, r.share_units.value_or(1)); }

constexpr const char* kHex64 = "[0-9a-f]{64}";

TEST(CreateSignatureTest, IsLowercaseSha256Hex) {
  EXPECT_THAT(Sig(Base()), MatchesRegex(kHex64));
  CreateRequest exact = Base();
  exact.start = T("2026-11-30T09:00:00Z");
  exact.gpus = {0, 1};
  EXPECT_THAT(Sig(exact), MatchesRegex(kHex64));
}

TEST(CreateSignatureTest, IsStable) {
  CreateRequest a = Base();
  CreateRequest b = Base();
  EXPECT_EQ(Sig(a), Sig(a));
  EXPECT_EQ(Sig(a), Sig(b));
  // The operation ID is the key, not part of the fingerprint.
  b.op_id = "job-1";
  EXPECT_EQ(Sig(a), Sig(b));
}

TEST(CreateSignatureTest, DiffersWhenAnyFieldDiffers) {
  std::vector<std::pair<std::string, std::string>> sigs;
  auto add = [&](const std::string& what, const CreateRequest& r, Mode mode, int units) {
    sigs.emplace_back(what, CreateSignature(r, mode, units));
  };
  CreateRequest r = Base();
  add("base", r, Mode::kShared, 1);
  add("share units", r, Mode::kShared, 2);
  add("mode", r, Mode::kExclusive, 1);
  r = Base(), r.count = 3;
  add("count", r, Mode::kShared, 1);
  r = Base(), r.duration = 7200;
  add("duration", r, Mode::kShared, 1);
  r = Base(), r.start = T("2026-11-30T09:00:00Z");
  add("start", r, Mode::kShared, 1);
  r = Base(), r.start = T("2026-11-30T09:05:00Z");
  add("other start", r, Mode::kShared, 1);
  r = Base(), r.memory_mb.reset();
  add("no memory", r, Mode::kShared, 1);
  r = Base(), r.memory_mb = 4096;
  add("memory", r, Mode::kShared, 1);
  r = Base(), r.gpus = {0, 1};
  add("gpus", r, Mode::kShared, 1);
  r = Base(), r.gpus = {0, 2};
  add("other gpus", r, Mode::kShared, 1);
  r = Base(), r.exclude = {3};
  add("exclude", r, Mode::kShared, 1);
  r = Base(), r.cpus = 4;
  add("cpus", r, Mode::kShared, 1);
  r = Base(), r.ram_mb = 8192;
  add("ram", r, Mode::kShared, 1);
  std::set<std::string> distinct;
  for (const auto& [what, sig] : sigs) EXPECT_TRUE(distinct.insert(sig).second) << what << " collides";
}

TEST(CreateSignatureTest, GpuListsAreSetsNotSequences) {
  CreateRequest a = Base();
  a.gpus = {2, 0};
  CreateRequest b = Base();
  b.gpus = {0, 2};
  EXPECT_EQ(Sig(a), Sig(b));
  CreateRequest c = Base();
  c.gpus = {0, 2, 2};
  EXPECT_EQ(Sig(a), Sig(c));
  CreateRequest x = Base();
  x.exclude = {3, 1};
  CreateRequest y = Base();
  y.exclude = {1, 3};
  EXPECT_EQ(Sig(x), Sig(y));
  // No preferred GPUs (null) differs from any list.
  EXPECT_NE(Sig(Base()), Sig(a));
}

TEST(CreateSignatureTest, ExclusiveIgnoresShareUnits) {
  CreateRequest r = Base();
  r.mode = Mode::kExclusive;
  EXPECT_EQ(CreateSignature(r, Mode::kExclusive, 1), CreateSignature(r, Mode::kExclusive, 4));
  EXPECT_NE(CreateSignature(r, Mode::kShared, 1), CreateSignature(r, Mode::kShared, 2));
}

TEST(CreateSignatureTest, QueuedRequestsDoNotDependOnTime) {
  // A queued request carries no start: its fingerprint is the same whenever it
  // is retried, while an exact one names its start.
  CreateRequest queued = Base();
  std::string at_first = Sig(queued);
  CreateRequest exact_now = Base();
  exact_now.start = T("2026-11-29T18:50:00Z");
  CreateRequest exact_later = Base();
  exact_later.start = T("2026-11-29T18:55:00Z");
  EXPECT_NE(at_first, Sig(exact_now));
  EXPECT_NE(Sig(exact_now), Sig(exact_later));
  EXPECT_EQ(at_first, Sig(Base()));
}

// BUG (reported): the original computes this request's fingerprint as
// 1195ee74...1e87 (also the op_signature stored in the captured ledger), but
// CreateSignature always adds "cpus":null and "ram_mb":null, so an imported
// create retried with its op-id is refused as "a different write".
TEST(CreateSignatureTest, MatchesTheUpstreamCapture) {
  EXPECT_EQ(Sig(Base()), "1195ee741351f01dc7c3170e253404c9406b68c962090d594125ffcecffc1e87");
}

// ---- edit, renew, cancel ---------------------------------------------------------

constexpr const char* kId = "fff976bd-932f-4042-9c82-a925fbd25ec7";

EditRequest BaseEdit() {
  EditRequest e;
  e.ref = "1";
  e.duration = 7200;
  return e;
}

TEST(EditSignatureTest, StableHexAndIndependentOfTheReference) {
  EditRequest a = BaseEdit();
  EXPECT_THAT(EditSignature(a, kId), MatchesRegex(kHex64));
  EXPECT_EQ(EditSignature(a, kId), EditSignature(BaseEdit(), kId));
  // The list number may change between retries; the reservation ID is what counts.
  EditRequest b = BaseEdit();
  b.ref = "fff976bd";
  b.op_id = "edit-1";
  EXPECT_EQ(EditSignature(a, kId), EditSignature(b, kId));
  EXPECT_NE(EditSignature(a, kId), EditSignature(a, "another-id"));
}

TEST(EditSignatureTest, DiffersWhenAnyFieldDiffers) {
  std::vector<std::pair<std::string, EditRequest>> variants;
  variants.emplace_back("base", BaseEdit());
  auto variant = [&](const std::string& what, auto change) {
    EditRequest e = BaseEdit();
    change(e);
    variants.emplace_back(what, e);
  };
  variant("duration", [](EditRequest& e) { e.duration = 3600; });
  variant("no duration", [](EditRequest& e) { e.duration.reset(); });
  variant("start", [](EditRequest& e) { e.start = T("2026-11-30T09:00:00Z"); });
  variant("mode", [](EditRequest& e) { e.mode = Mode::kExclusive; });
  variant("gpus", [](EditRequest& e) { e.gpus = {1}; });
  variant("exclude", [](EditRequest& e) { e.exclude = {1}; });
  variant("count", [](EditRequest& e) { e.count = 2; });
  variant("allow queue", [](EditRequest& e) { e.allow_queue = true; });
  variant("clear memory", [](EditRequest& e) { e.update_memory = true; });
  variant("set memory", [](EditRequest& e) {
    e.update_memory = true;
    e.memory_mb = 1024;
  });
  variant("share", [](EditRequest& e) { e.share_units = 2; });
  variant("cpus", [](EditRequest& e) { e.cpus = 2; });
  variant("ram", [](EditRequest& e) { e.ram_mb = 2048; });
  std::set<std::string> distinct;
  for (const auto& [what, e] : variants)
    EXPECT_TRUE(distinct.insert(EditSignature(e, kId)).second) << what << " collides";
}

TEST(EditSignatureTest, GpuListsAreSets) {
  EditRequest a = BaseEdit();
  a.gpus = {3, 1};
  EditRequest b = BaseEdit();
  b.gpus = {1, 3};
  EXPECT_EQ(EditSignature(a, kId), EditSignature(b, kId));
  EditRequest x = BaseEdit();
  x.exclude = {2, 0};
  EditRequest y = BaseEdit();
  y.exclude = {0, 2};
  EXPECT_EQ(EditSignature(x, kId), EditSignature(y, kId));
}

// BUG (reported): the captured ledger's edit "demo-edit-1" (--duration 2h on
// fff976bd...) was signed 9e9afe12...edac upstream; EditSignature adds
// "cpus"/"ram_mb" keys and no longer matches, so replaying an imported edit
// by its op-id is refused.
TEST(EditSignatureTest, MatchesTheUpstreamCapture) {
  EXPECT_EQ(EditSignature(BaseEdit(), kId),
            "9e9afe12881e825c34c1e23fc369336ecf975478793cb0f985068eb14600edac");
}

TEST(RenewCancelSignatureTest, StableAndDistinct) {
  RenewRequest r{.ref = "1", .extend_by = 1800};
  std::string renew = RenewSignature(r, kId);
  EXPECT_THAT(renew, MatchesRegex(kHex64));
  EXPECT_EQ(renew, RenewSignature(RenewRequest{.ref = "fff9", .extend_by = 1800, .op_id = "x"}, kId));
  EXPECT_NE(renew, RenewSignature(RenewRequest{.ref = "1", .extend_by = 3600}, kId));
  EXPECT_NE(renew, RenewSignature(r, "other"));
  std::string cancel = CancelSignature(kId);
  EXPECT_THAT(cancel, MatchesRegex(kHex64));
  EXPECT_EQ(cancel, CancelSignature(kId));
  EXPECT_NE(cancel, CancelSignature("other"));
  EXPECT_NE(cancel, renew);
  EXPECT_NE(cancel, EditSignature(BaseEdit(), kId));
}

}  // namespace
}  // namespace bk::service
