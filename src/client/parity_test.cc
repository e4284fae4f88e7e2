// The two Ledgers answer alike: one scripted sequence of calls through
// OpenDirect on a private ledger and through OpenRemote against the real
// daemon (server::Serve in a child process, on a real Unix socket, with its
// own ledger) gives the same replies and the same errors. Replies are
// compared as the protocol encodes them, so a field that one side's codec
// drops or a method wired to another service call shows up here.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "base/temp_dir_testing.h"
#include "client/ledger.h"
#include "config/config.h"
#include "rpc/codec.h"
#include "server/daemon.h"
#include "sys/clock.h"
#include "sys/users.h"

namespace bk::client {
namespace {

using rpc::json;

constexpr engine::Seconds kNow = 1'795'000'200;  // on the 5-minute grid
constexpr engine::Seconds kHour = 3600;

// One step of the script: its label and the reply (or error) as text.
using Transcript = std::vector<std::pair<std::string, std::string>>;

template <class T>
std::string Text(const Result<T>& r) {
  if (!r) return fmt::format("error {}: {}", ErrorKindName(r.error().kind), r.error().message);
  if constexpr (std::is_same_v<T, std::string>)
    return json(*r).dump();  // Backup's path
  else
    return rpc::Encode(*r).dump();
}

// The same script for either ledger. Random identifiers (reservation, event
// and transaction IDs) differ between the two ledgers; Normalize maps them.
// Paths under the ledger's own directory read as <data_dir>.
Transcript Script(Ledger& l, const std::string& data_dir) {
  Transcript t;
  auto step = [&](const std::string& label, std::string text) {
    for (size_t at = text.find(data_dir); at != std::string::npos; at = text.find(data_dir, at))
      text.replace(at, data_dir.size(), "<data_dir>");
    t.emplace_back(label, text);
  };
  service::CreateRequest shared{.count = 1, .duration = 2 * kHour, .op_id = "parity-create-a"};
  service::CreateRequest exclusive{.count = 2,
                                   .duration = kHour,
                                   .mode = engine::Mode::kExclusive,
                                   .start = kNow + 6 * kHour,
                                   .op_id = "parity-create-b"};
  step("policy", Text(l.CheckPolicy()));
  step("recommend", Text(l.Recommend(shared)));
  step("slots", Text(l.Slots(exclusive, kNow, 3)));
  auto a = l.Create(shared);
  step("create a", Text(a));
  step("create a again", Text(l.Create(shared)));
  auto b = l.Create(exclusive);
  step("create b", Text(b));
  std::string a_id = a ? a->reservation.id : "missing";
  std::string b_id = b ? b->reservation.id : "missing";
  step("edit a", Text(l.Edit({.ref = a_id, .op_id = "parity-edit-a", .duration = 3 * kHour})));
  step("edit a replayed", Text(l.Edit({.ref = a_id, .op_id = "parity-edit-a", .duration = 3 * kHour})));
  step("edit a, same op, other change",
       Text(l.Edit({.ref = a_id, .op_id = "parity-edit-a", .duration = 4 * kHour})));
  step("renew a", Text(l.Renew({.ref = a_id, .extend_by = kHour, .op_id = "parity-renew-a"})));
  step("edit a, dry run", Text(l.Edit({.ref = a_id, .duration = 6 * kHour, .dry_run = true})));
  step("renew a, dry run", Text(l.Renew({.ref = a_id, .extend_by = kHour, .dry_run = true})));
  step("renew a too far, dry run", Text(l.Renew({.ref = a_id, .extend_by = 400 * kHour, .dry_run = true})));
  // The counters differ (a daemon's generation, a process's count); whether they move does not.
  auto moved = [](const Result<uint64_t>& before, const Result<uint64_t>& after) -> std::string {
    if (!before || !after) return "error";
    return *before == *after ? "still" : "moved";
  };
  Result<uint64_t> counted = l.ChangeCounter();
  step("change counter, nothing written", moved(counted, l.ChangeCounter()));
  step("cancel b", Text(l.Cancel({.ref = b_id, .op_id = "parity-cancel-b", .reason = "done"})));
  step("change counter, after a cancel", moved(counted, l.ChangeCounter()));
  step("list", Text(l.List({})));
  step("list history", Text(l.List({.history = true, .limit = 10, .everyone = true})));
  step("history a", Text(l.History(a_id)));
  step("history b by prefix", Text(l.History(b_id.substr(0, 8))));
  step("log", Text(l.Log(50)));
  step("log, the last 2", Text(l.Log(2)));
  step("notifications", Text(l.Notifications(20)));
  step("notifications, the last 1", Text(l.Notifications(1)));
  step("operation create a", Text(l.Operation("parity-create-a")));
  step("operation cancel b", Text(l.Operation("parity-cancel-b")));
  step("operation unknown", Text(l.Operation("parity-none")));
  step("status", Text(l.Status(kNow, kNow + 24 * kHour, std::nullopt)));
  service::CreateRequest with_job{.count = 1,
                                  .duration = kHour,
                                  .start = kNow + 10 * kHour,
                                  .op_id = "parity-create-c",
                                  .job = service::JobBinding{"11111111-2222-4333-8444-555555555555",
                                                             std::string(64, 'd'), "echo parity"}};
  auto c = l.Create(with_job);
  step("create c with a job", Text(c));
  std::string c_id = c ? c->reservation.id : "missing";
  step("jobs", Text(l.Jobs({})));
  step("update job, precondition unmet", Text(l.UpdateJob({.reservation_id = c_id,
                                                           .if_status = {store::JobStatus::kRunning},
                                                           .status = store::JobStatus::kSucceeded})));
  step("retry a pending job", Text(l.RetryJob({.ref = c_id})));
  step("open jobs", Text(l.Jobs({.open_only = true})));
  // Administration: the caller owns both ledgers.
  step("verify", Text(l.Verify("")));
  step("backup", Text(l.Backup(data_dir + "/backup.db")));
  step("verify the backup", Text(l.Verify(data_dir + "/backup.db")));
  step("import into a used ledger", Text(l.ImportUpstream(R"({"version":1,"reservations":[]})")));
  // Refused as invalid, and refused by the ledger's state and policy.
  step("invalid op id", Text(l.Create({.count = 1, .duration = kHour, .op_id = "not an op id"})));
  step("invalid duration", Text(l.Create({.count = 1, .duration = 0})));
  step("renew cancelled b", Text(l.Renew({.ref = b_id, .extend_by = kHour})));
  step("too many gpus", Text(l.Create({.count = 5, .duration = kHour, .mode = engine::Mode::kExclusive})));
  step("unknown ref", Text(l.History("ffffffff")));
  step("log after refusals", Text(l.Log(50)));
  return t;
}

// Replaces each 64-hex signature and each UUID (and its 8-character short
// form) with a placeholder numbered by first appearance across the
// transcript, so equal structure compares equal and a mixed-up ID does not.
Transcript Normalize(Transcript t) {
  static const std::regex hash("[0-9a-f]{64}");
  static const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::map<std::string, std::string> names;
  auto rename = [&](std::string& text, const std::regex& re, const char* kind) {
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), re);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      std::string found = it->str();
      auto [pos, fresh] = names.try_emplace(found, fmt::format("<{}{}>", kind, names.size()));
      out += text.substr(last, static_cast<size_t>(it->position()) - last) + pos->second;
      last = static_cast<size_t>(it->position() + it->length());
    }
    text = out + text.substr(last);
  };
  for (auto& [label, text] : t) {
    rename(text, hash, "hash");
    rename(text, uuid, "id");
  }
  std::map<std::string, std::string> shorts;
  for (const auto& [full, name] : names)
    if (full.size() == 36) shorts[full.substr(0, 8)] = name + "short";
  static const std::regex word("[0-9a-f]{8}");
  for (auto& [label, text] : t) {
    std::string out;
    size_t last = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
      size_t at = static_cast<size_t>(it->position());
      bool alone = (at == 0 || !std::isxdigit(static_cast<unsigned char>(text[at - 1]))) &&
                   (at + 8 == text.size() || !std::isxdigit(static_cast<unsigned char>(text[at + 8])));
      auto name = shorts.find(it->str());
      if (!alone || name == shorts.end()) continue;
      out += text.substr(last, at - last) + name->second;
      last = at + 8;
    }
    text = out + text.substr(last);
  }
  return t;
}

class ParityTest : public TempDirTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(chmod(root().c_str(), 0755), 0);
    std::string dir = Path("server");
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir + "/run").c_str(), 0711), 0);
    Write(sim_,
          R"({"gpus":[{"index":0,"memory_total_mb":81920,"memory_used_mb":1024,"utilization_percent":3},)"
          R"({"index":1,"memory_total_mb":81920,"memory_used_mb":0,"utilization_percent":0},)"
          R"({"index":2,"memory_total_mb":81920,"memory_used_mb":40000,"utilization_percent":90},)"
          R"({"index":3,"memory_total_mb":81920,"memory_used_mb":0,"utilization_percent":0}]})");
    config::ServerSpec spec;
    spec.directory = dir;
    spec.owner_uid = sys::CurrentUid();
    spec.owner = sys::UserName(spec.owner_uid);
    spec.gpu_count = 4;
    json server = json::parse(config::RenderServerConfig(spec));
    server["test_now"] = std::to_string(kNow);
    config_path_ = dir + "/config.json";
    Write(config_path_, server.dump(2));
    StartDaemon();
  }

  void TearDown() override {
    if (daemon_ > 0) {
      kill(daemon_, SIGTERM);
      int status = 0;
      waitpid(daemon_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the daemon did not stop cleanly";
    }
  }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  }

  config::EnvFn Env() const {
    return [sim = sim_](const std::string& name) -> std::optional<std::string> {
      if (name == "BK_GPU_SIM_FILE") return sim;
      return std::nullopt;
    };
  }

  // `bk server serve` as its own process: Serve blocks SIGTERM and waits on
  // a signalfd, which would steal the test's signals in-process.
  void StartDaemon() {
    daemon_ = fork();
    ASSERT_GE(daemon_, 0);
    if (daemon_ == 0) {
      setenv("BK_GPU_SIM_FILE", sim_.c_str(), 1);
      _exit(server::Serve({.config_path = config_path_}));
    }
  }

  // The daemon's ledger over its socket, once it answers.
  std::unique_ptr<Ledger> Remote() {
    auto cfg = config::LoadServer(config_path_, Env(), false);
    EXPECT_TRUE(cfg.has_value()) << cfg.error().message;
    if (!cfg) return nullptr;
    remote_config_ = *cfg;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (true) {
      auto ledger = OpenRemote(remote_config_, clock_);
      if (ledger) return std::move(*ledger);
      int status = 0;
      if (waitpid(daemon_, &status, WNOHANG) == daemon_) {
        daemon_ = 0;
        ADD_FAILURE() << "the daemon exited with " << WEXITSTATUS(status);
        return nullptr;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the daemon never answered: " << ledger.error().message;
        return nullptr;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for readiness
    }
  }

  // A private ledger of its own under the same policy, GPUs and clock.
  std::unique_ptr<Ledger> Direct() {
    direct_config_ = remote_config_;
    direct_config_.deployment = config::Deployment::kPrivate;
    direct_config_.data_dir = Path("private");
    direct_config_.ledger_path = direct_config_.data_dir + "/ledger.db";
    direct_config_.config_file = direct_config_.data_dir + "/config.json";
    direct_config_.config_file_present = false;
    auto ledger = OpenDirect(direct_config_, clock_);
    EXPECT_TRUE(ledger.has_value());
    return ledger ? std::move(*ledger) : nullptr;
  }

  std::string sim_ = Path("gpus.json");
  std::string config_path_;
  pid_t daemon_ = 0;
  sys::FixedClock clock_{kNow};
  config::Config remote_config_;
  config::Config direct_config_;
};

TEST_F(ParityTest, DirectAndRemoteAnswerTheSameScriptAlike) {
  auto remote = Remote();
  ASSERT_NE(remote, nullptr);
  auto direct = Direct();
  ASSERT_NE(direct, nullptr);
  EXPECT_EQ(direct->actor().uid, remote->actor().uid);
  EXPECT_EQ(direct->actor().admin, remote->actor().admin);
  EXPECT_EQ(direct->Now(), remote->Now());
  EXPECT_EQ(rpc::Encode(direct->policy()), rpc::Encode(remote->policy()));

  Transcript d = Normalize(Script(*direct, direct_config_.data_dir));
  Transcript r = Normalize(Script(*remote, remote_config_.data_dir));
  ASSERT_EQ(d.size(), r.size());
  for (size_t i = 0; i < d.size(); ++i) {
    ASSERT_EQ(d[i].first, r[i].first);
    EXPECT_EQ(d[i].second, r[i].second) << "step " << d[i].first;
  }
  // The script did what it says: bookings made and changed, refusals refused.
  auto text = [&](const std::string& label) {
    for (const auto& [l, t] : d)
      if (l == label) return t;
    return std::string("no such step");
  };
  for (const char* done : {"create a", "create b", "edit a", "renew a", "cancel b", "history a",
                           "create c with a job", "update job, precondition unmet", "verify", "backup"})
    EXPECT_FALSE(text(done).starts_with("error")) << done << ": " << text(done);
  EXPECT_NE(text("create a again").find("\"replayed\":true"), std::string::npos);
  EXPECT_TRUE(text("invalid op id").starts_with("error invalid")) << text("invalid op id");
  for (const char* refused : {"edit a, same op, other change", "invalid duration", "renew cancelled b",
                              "too many gpus", "unknown ref", "import into a used ledger"})
    EXPECT_TRUE(text(refused).starts_with("error")) << refused << ": " << text(refused);
}

}  // namespace
}  // namespace bk::client
