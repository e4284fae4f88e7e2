// bk m / bk monitor: the monitor on a private ledger (docs/monitor.md). A
// shared server runs the same Monitor inside `bk server serve`.

#include <fmt/format.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "engine/parse.h"
#include "gpu/open_source.h"
#include "monitor/heartbeat.h"
#include "monitor/lock.h"
#include "monitor/metrics_writer.h"
#include "monitor/monitor.h"
#include "monitor/report.h"
#include "monitor/rollup.h"
#include "monitor/runner.h"
#include "service/booking_service.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

// BK_TEST_CLOCK_STEP=SECONDS (test builds, with BK_TEST_NOW): the monitor's
// clock advances that much per sample and nothing sleeps, so a test can run
// hours of samples in a moment.
Result<int64_t> TestClockStepMs() {
#ifdef BK_TEST_HOOKS
  const char* v = std::getenv("BK_TEST_CLOCK_STEP");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 86400)
    return Invalid("BK_TEST_CLOCK_STEP must be a number of seconds between 0 and 86400");
  return static_cast<int64_t>(std::llround(s * 1000));
#else
  return 0;
#endif
}

// A number of seconds from lo to hi, or `def` when the option is absent.
Result<double> SecondsOption(const std::optional<std::string>& arg, double def, double lo, double hi,
                             const char* message) {
  if (!arg) return def;
  char* end = nullptr;
  std::string text(Trim(*arg));
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) return Invalid(message);
  return v;
}

// Waits up to `ms` for SIGINT/SIGTERM (blocked, so they arrive here). True
// when one arrived.
bool WaitForSignal(const sigset_t& mask, int64_t ms) {
  if (ms <= 0) {
    timespec zero{0, 0};
    return sigtimedwait(&mask, nullptr, &zero) > 0;
  }
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
  while (true) {
    int sig = sigtimedwait(&mask, nullptr, &ts);
    if (sig > 0) return true;
    if (errno == EINTR) continue;
    return false;  // EAGAIN: the time is up
  }
}

}  // namespace

// Long on purpose: the private monitor's whole life (arguments, policy check,
// lock, usage store, signals, the sampling loop, stop) reads top to bottom,
// and each step needs what the previous one opened.
Result<int> RunMonitor(Context& ctx, const std::vector<std::string>& args) {
  bool once = false, json = false, verbose = false;
  std::optional<std::string> samples_arg, interval_arg, rollup_arg;
  ArgSpec spec(
      "bk monitor",
      "Sample the GPUs, record usage history in usage.db, and give back no-show bookings of the private "
      "ledger (a shared server runs this inside `bk server serve`). Never signals a process.");
  spec.Flag("--once", &once, "take exactly one sample");
  spec.Option("--samples", &samples_arg, "stop after N samples", "N");
  spec.Option("--interval", &interval_arg,
              "seconds between samples (0.2-3600; default monitor_interval_seconds)", "S");
  spec.Option("--rollup", &rollup_arg,
              "seconds per usage rollup: 60, the one-minute windows usage.db records; a whole number of "
              "intervals",
              "S");
  spec.Flag("--json", &json, "one gpubk.monitor.v1 JSON document per sample, one per line");
  spec.Flag("-v,--verbose", &verbose, "print every sample and every booking's no-show evidence");
  spec.Excludes("--once", "--samples");
  spec.Footer(
      "Exit: 0 stopped (signal or sample limit), 75 another monitor runs, 78 ledger policy drift, 2 error.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;

  const config::Config& c = ctx.config;
  if (c.deployment != config::Deployment::kPrivate)
    return Invalid(
        fmt::format("this deployment is {}: its monitor runs inside `bk server serve`; `bk m` monitors a "
                    "private ledger (set BK_DATA_DIR)",
                    config::DeploymentName(c.deployment)));
  BK_ASSIGN_OR_RETURN(int64_t limit,
                      WholeNumberOption(samples_arg, 1, 100000000, once ? 1 : -1,
                                        "--samples must be a whole number from 1 to 100000000"));
  BK_ASSIGN_OR_RETURN(double interval_s,
                      SecondsOption(interval_arg, c.monitor_interval_seconds, 0.2, 3600,
                                    "--interval must be a number of seconds from 0.2 to 3600"));
  const int64_t interval_ms = static_cast<int64_t>(std::llround(interval_s * 1000));
  BK_ASSIGN_OR_RETURN(double rollup_s,
                      SecondsOption(rollup_arg, monitor::RollupAggregator::kWindowSeconds, 1, 86400,
                                    "--rollup must be a number of seconds from 1 to 86400"));
  BK_TRY(monitor::CheckRollup(rollup_s, interval_ms));
  BK_ASSIGN_OR_RETURN(int64_t step_ms, TestClockStepMs());
  if (step_ms > 0 && !c.test_now) return Invalid("BK_TEST_CLOCK_STEP needs BK_TEST_NOW");

  // The monitor's clock: the wall clock, or BK_TEST_NOW stepped per sample.
  // The service reads the ledger at the same instant, so bookings are judged
  // at the sample's time.
  const uid_t me = sys::CurrentUid();
  sys::FixedClock service_clock(ctx.clock->Now());
  int64_t sample_index = 0;
  auto now_ms = [&]() -> int64_t { return ctx.clock->NowMs() + sample_index * step_ms; };

  service::BookingService service({&c, &service_clock, nullptr, me, false});
  BK_ASSIGN_OR_RETURN(service::PolicyStatus policy, service.CheckPolicy());
  if (policy.state == service::PolicyState::kMismatch) {
    std::fprintf(ctx.err, "bk: %s\n", Printable(policy.message).c_str());
    return exit_code::kPolicyDrift;
  }

  BK_TRY(sys::EnsurePrivateDir(sys::Dirname(c.ledger_path), 0700, me));
  BK_ASSIGN_OR_RETURN(monitor::UsageLock lock, monitor::UsageLock::Take(monitor::UsageLockPath(c)));
  store::UsageOpenOptions uo{monitor::UsagePath(c), true, me,
                             static_cast<int>(c.lock_timeout_seconds * 1000)};
  BK_ASSIGN_OR_RETURN(auto usage, store::UsageStore::Open(uo));

  monitor::Options o;
  o.config = &c;
  o.service = &service;
  o.actor = {me, sys::UserName(me), true};
  o.usage = usage.get();
  o.interval_ms = interval_ms;
  o.reclaim_after_ms = c.reclaim_after_seconds * 1000;
  o.pause_during_exclusive = c.pause_sampling_during_exclusive;
  o.monitor_id = monitor::NewMonitorId();
  o.pid = getpid();
  o.uid = me;
  monitor::Monitor mon(o);
  std::optional<monitor::MetricsWriter> metrics;
  if (!c.metrics_textfile.empty()) metrics.emplace(c, *o.service, o.actor);
  std::string metrics_error;  // the last failure told, so a lasting one is told once
  gpu::OpenedSource source = gpu::OpenSource(c.gpu_sim_file);

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, nullptr);

  service_clock.Set(now_ms() / 1000);
  BK_TRY(mon.Start(now_ms()));
  if (!json)
    ctx.Print(fmt::format(
        "monitor started: interval={}s reclaim_after={}s rollup={}s pause_during_exclusive={} data={}",
        interval_s, c.reclaim_after_seconds, rollup_s, o.pause_during_exclusive ? "true" : "false",
        sys::Dirname(c.ledger_path)));
  bool was_paused = false;
  Status failure = Ok();
  while (limit < 0 || sample_index < limit) {
    const auto started = std::chrono::steady_clock::now();
    monitor::RawSample s;
    s.at_ms = now_ms();
    service_clock.Set(s.at_ms / 1000);
    auto windows = mon.ExclusiveWindows();
    if (!windows) {
      failure = std::unexpected(windows.error());
      break;
    }
    s.paused = o.pause_during_exclusive && monitor::Inside(*windows, s.at_ms);
    if (s.paused && !was_paused && source.on_pause) source.on_pause();
    was_paused = s.paused;
    if (!s.paused) s.snapshot = source.source->Sample(c.policy.gpu_count);
    auto report = mon.Ingest(std::move(s));
    if (!report) {
      failure = std::unexpected(report.error());
      break;
    }
    ++sample_index;
    if (metrics) {
      Status written = metrics->Write(*report, mon.samples());
      std::string error = written ? "" : written.error().message;
      if (!error.empty() && error != metrics_error) ctx.Warn("metrics: " + error);
      metrics_error = error;
    }
    if (json) {
      auto hb = usage->Heartbeat();
      monitor::Collector collector =
          monitor::ClassifyHeartbeat(hb ? *hb : std::optional<store::HeartbeatRow>(), report->at_ms);
      ctx.Print(monitor::TickJson(*report, collector, usage->path()));
    } else if (once || verbose || !report->events.empty() || !report->warnings.empty() || report->failed) {
      std::fputs(ctx.Local(monitor::TickText(*report, verbose || once)).c_str(), ctx.out);
    }
    std::fflush(ctx.out);
    if (limit >= 0 && sample_index >= limit) break;
    int64_t wait_ms = 0;
    if (step_ms == 0) {
      auto spent =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      wait_ms = interval_ms - spent.count();
    }
    if (WaitForSignal(mask, wait_ms)) break;
  }
  // The last sample's time: a stepped clock has not advanced past it.
  int64_t end_ms = ctx.clock->NowMs() + std::max<int64_t>(0, sample_index - 1) * step_ms;
  Status stopped = mon.Stop(end_ms);
  if (!failure) return std::unexpected(failure.error());
  if (!stopped) return std::unexpected(stopped.error());
  if (!json) ctx.Print(fmt::format("monitor stopped: samples={}", mon.samples()));
  return 0;
}

}  // namespace bk::cli
