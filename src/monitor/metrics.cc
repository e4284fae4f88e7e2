#include "monitor/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <set>
#include <tuple>

namespace bk::monitor {

void RequestStats::Record(std::string_view method, double seconds, bool ok) {
  auto it = methods.find(method);
  if (it == methods.end()) {
    if (methods.size() >= kMaxMethods) method = kOtherMethod;
    it = methods.try_emplace(std::string(method)).first;
  }
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  MethodStats& m = it->second;
  // le semantics: a bucket counts durations <= its bound; past the last bound is +Inf.
  const auto bucket = std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), seconds);
  ++m.buckets[static_cast<size_t>(bucket - kLatencyBuckets.begin())];
  m.sum_seconds += seconds;
  ++(ok ? m.ok : m.error);
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s`, 0 when invalid
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t Utf8Length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i < s.size() && byte(i) >= lo && byte(i) <= hi;
  };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const bool second = c == 0xE0 ? cont(1, 0xA0) : c == 0xED ? cont(1, 0x80, 0x9F) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const bool second = c == 0xF0 ? cont(1, 0x90) : c == 0xF4 ? cont(1, 0x80, 0x8F) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

void AppendLabelValue(std::string& out, std::string_view value) {
  size_t i = 0;
  while (i < value.size()) {
    const char c = value[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x80) {
      out += c;
    } else if (const size_t n = Utf8Length(value.substr(i)); n > 0) {
      out.append(value.substr(i, n));
      i += n;
      continue;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for one invalid byte
    }
    ++i;
  }
}

namespace {

struct Family {
  std::string_view name;
  std::string_view type;  // gauge | counter | histogram
  std::string_view help;
};

// Every family, in the order written. HELP text is plain ASCII without
// backslashes or newlines, so it needs no escaping.
constexpr Family kGpus{"gpubk_gpus", "gauge", "GPUs this host books (gpu_count)."};
constexpr Family kGpuInfo{"gpubk_gpu_info", "gauge", "Identity of each sampled GPU; always 1."};
constexpr Family kUtilization{"gpubk_gpu_utilization_ratio", "gauge",
                              "GPU utilisation in the last sample, 0 to 1."};
constexpr Family kMemoryUsed{"gpubk_gpu_memory_used_bytes", "gauge", "GPU memory in use."};
constexpr Family kMemoryTotal{"gpubk_gpu_memory_total_bytes", "gauge", "GPU memory in total."};
constexpr Family kTemperature{"gpubk_gpu_temperature_celsius", "gauge", "GPU temperature."};
constexpr Family kBooked{"gpubk_gpu_booked", "gauge",
                         "1 when a running booking holds the GPU (mode says which kind), else 0."};
constexpr Family kOwner{"gpubk_gpu_booking_owner_info", "gauge",
                        "One series per running booking and GPU it holds; always 1."};
constexpr Family kBookings{"gpubk_bookings", "gauge", "Active bookings per user: running now or queued."};
constexpr Family kBookedGpus{"gpubk_booked_gpus", "gauge",
                             "Distinct GPUs each user's running bookings hold."};
constexpr Family kStreak{"gpubk_noshow_streak_seconds", "gauge",
                         "How long a started booking has gone unused (verdict no-use)."};
constexpr Family kThreshold{"gpubk_noshow_threshold_seconds", "gauge",
                            "No-show streak after which a booking is reclaimed; 0 when reclaiming is off."};
constexpr Family kReclaims{"gpubk_reclaims_total", "counter",
                           "Bookings reclaimed as no-shows since the monitor started."};
constexpr Family kSamples{"gpubk_monitor_samples_total", "counter",
                          "Monitor samples since the monitor started."};
constexpr Family kSampleOk{"gpubk_monitor_sample_ok", "gauge", "1 when the last sample succeeded, else 0."};
constexpr Family kPaused{"gpubk_monitor_paused", "gauge",
                         "1 when the last sample was skipped for an exclusive booking, else 0."};
constexpr Family kLastSample{"gpubk_monitor_last_sample_timestamp_seconds", "gauge",
                             "Unix time of the last sample."};
constexpr Family kRequests{"gpubk_requests_total", "counter",
                           "Daemon requests since it started, per method and outcome."};
constexpr Family kDuration{"gpubk_request_duration_seconds", "histogram", "Daemon request handling time."};
constexpr Family kLedgerSize{"gpubk_ledger_size_bytes", "gauge", "Size of the ledger database."};
constexpr Family kLedgerRows{"gpubk_ledger_reservations", "gauge", "Reservations stored in the ledger."};

constexpr int64_t kMiB = int64_t{1024} * 1024;

struct Label {
  std::string_view name;
  std::string_view value;
};

// Writes one family at a time; its HELP and TYPE lines go out with its first
// sample, so a family without samples leaves no trace.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Begin(const Family& family) {
    family_ = &family;
    started_ = false;
  }
  void Sample(std::initializer_list<Label> labels, int64_t value) { Sample("", labels, value); }
  void Sample(std::initializer_list<Label> labels, double value) { Sample("", labels, value); }

  void Sample(std::string_view suffix, std::initializer_list<Label> labels, int64_t value) {
    Series(suffix, labels);
    fmt::format_to(std::back_inserter(out_), " {}\n", value);
  }
  void Sample(std::string_view suffix, std::initializer_list<Label> labels, double value) {
    Series(suffix, labels);
    out_ += ' ';
    // The format spells the special values the way Go parses them.
    if (std::isnan(value)) {
      out_ += "NaN";
    } else if (std::isinf(value)) {
      out_ += value > 0 ? "+Inf" : "-Inf";
    } else {
      fmt::format_to(std::back_inserter(out_), "{}", value);
    }
    out_ += '\n';
  }

 private:
  void Series(std::string_view suffix, std::initializer_list<Label> labels) {
    if (!started_) {
      fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", family_->name, family_->help,
                     family_->name, family_->type);
      started_ = true;
    }
    out_.append(family_->name).append(suffix);
    if (labels.size() == 0) return;
    char sep = '{';
    for (const Label& l : labels) {
      out_ += sep;
      out_.append(l.name).append("=\"");
      AppendLabelValue(out_, l.value);
      out_ += '"';
      sep = ',';
    }
    out_ += '}';
  }

  std::string& out_;
  const Family* family_ = nullptr;
  bool started_ = false;
};

double MsToSeconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

std::string UserLabel(const engine::Reservation& r) {
  return r.username.empty() ? std::to_string(r.uid) : r.username;
}

// Index labels, formatted once per render (most families are per GPU).
class GpuNames {
 public:
  std::string_view operator()(int gpu) {
    auto [it, added] = names_.try_emplace(gpu);
    if (added) it->second = std::to_string(gpu);
    return it->second;
  }

 private:
  std::map<int, std::string> names_;
};

void RenderTelemetry(Writer& w, GpuNames& names, const gpu::Snapshot& snapshot) {
  const auto& devices = snapshot.devices;
  w.Begin(kGpuInfo);
  for (const auto& d : devices)
    w.Sample({{"gpu", names(d.index)}, {"name", d.name}, {"uuid", d.uuid}}, int64_t{1});
  w.Begin(kUtilization);
  for (const auto& d : devices) {
    if (d.utilization_percent) w.Sample({{"gpu", names(d.index)}}, *d.utilization_percent / 100.0);
  }
  w.Begin(kMemoryUsed);
  for (const auto& d : devices) {
    if (d.memory_used_mb) w.Sample({{"gpu", names(d.index)}}, *d.memory_used_mb * kMiB);
  }
  w.Begin(kMemoryTotal);
  for (const auto& d : devices) {
    if (d.memory_total_mb) w.Sample({{"gpu", names(d.index)}}, *d.memory_total_mb * kMiB);
  }
  w.Begin(kTemperature);
  for (const auto& d : devices) {
    if (d.temperature_c) w.Sample({{"gpu", names(d.index)}}, int64_t{*d.temperature_c});
  }
}

struct UserCounts {
  int64_t running = 0;
  int64_t queued = 0;
  std::set<int> gpus;  // held by running bookings
};

void RenderBookings(Writer& w, GpuNames& names, const MetricsInput& in) {
  std::vector<const engine::Reservation*> running;
  std::map<std::string, UserCounts> users;
  for (const auto& r : in.bookings) {
    if (!r.ActiveAt(in.now)) continue;  // cancelled or ended since it was read
    UserCounts& u = users[UserLabel(r)];
    if (r.Started(in.now)) {
      ++u.running;
      u.gpus.insert(r.gpus.begin(), r.gpus.end());
      running.push_back(&r);
    } else {
      ++u.queued;
    }
  }

  // Exclusive wins should a shared booking ever overlap it: the GPU is not shareable then.
  std::vector<std::string_view> mode(static_cast<size_t>(std::max(in.gpu_count, 0)), "none");
  for (const auto* r : running) {
    for (int g : r->gpus) {
      if (g < 0 || g >= in.gpu_count) continue;
      auto& m = mode[static_cast<size_t>(g)];
      if (m != "exclusive") m = engine::ModeName(r->mode);
    }
  }
  w.Begin(kBooked);
  for (int g = 0; g < in.gpu_count; ++g) {
    const auto m = mode[static_cast<size_t>(g)];
    w.Sample({{"gpu", names(g)}, {"mode", m}}, int64_t{m == "none" ? 0 : 1});
  }

  struct Owner {
    int gpu;
    const engine::Reservation* r;
    std::string user;
  };
  std::vector<Owner> owners;
  for (const auto* r : running) {
    for (int g : r->gpus) owners.push_back({g, r, UserLabel(*r)});
  }
  std::sort(owners.begin(), owners.end(), [](const Owner& a, const Owner& b) {
    return std::tie(a.gpu, a.r->id, a.user) < std::tie(b.gpu, b.r->id, b.user);
  });
  w.Begin(kOwner);
  for (const auto& o : owners) {
    w.Sample({{"gpu", names(o.gpu)},
              {"mode", engine::ModeName(o.r->mode)},
              {"reservation", o.r->ShortId()},
              {"user", o.user}},
             int64_t{1});
  }

  // Both states for every user with a booking, so a panel shows 0 rather than a gap.
  w.Begin(kBookings);
  for (const auto& [user, c] : users) {
    w.Sample({{"state", "queued"}, {"user", user}}, c.queued);
    w.Sample({{"state", "running"}, {"user", user}}, c.running);
  }
  w.Begin(kBookedGpus);
  for (const auto& [user, c] : users) w.Sample({{"user", user}}, static_cast<int64_t>(c.gpus.size()));
}

void RenderNoShows(Writer& w, const MetricsInput& in) {
  std::vector<const ReclaimDecision*> streaks;
  for (const auto& d : in.decisions) {
    // A booking reclaimed in this sample is gone: its streak ended with it.
    if (d.verdict == "no-use" && !d.reclaimed) streaks.push_back(&d);
  }
  std::sort(streaks.begin(), streaks.end(), [](const ReclaimDecision* a, const ReclaimDecision* b) {
    return std::tie(a->reservation_id, a->username) < std::tie(b->reservation_id, b->username);
  });
  w.Begin(kStreak);
  for (const auto* d : streaks) {
    const std::string user = d->username.empty() ? std::to_string(d->uid) : d->username;
    w.Sample({{"reservation", std::string_view(d->reservation_id).substr(0, 8)}, {"user", user}},
             MsToSeconds(d->streak_ms));
  }

  std::optional<int64_t> threshold = in.reclaim_after_ms;
  for (const auto& d : in.decisions) {
    if (!threshold && d.threshold_ms > 0) threshold = d.threshold_ms;
  }
  w.Begin(kThreshold);
  if (threshold) w.Sample({}, MsToSeconds(*threshold));
  w.Begin(kReclaims);
  w.Sample({}, in.reclaims_total);
}

void RenderMonitor(Writer& w, const MetricsInput& in) {
  w.Begin(kSamples);
  w.Sample({}, in.samples_total);
  w.Begin(kSampleOk);
  w.Sample({}, int64_t{in.sample_ok ? 1 : 0});
  w.Begin(kPaused);
  w.Sample({}, int64_t{in.paused ? 1 : 0});
  w.Begin(kLastSample);
  w.Sample({}, MsToSeconds(in.at_ms));
}

// The histogram's `le` values, spelled once.
const std::array<std::string, kLatencyBuckets.size() + 1>& BucketLabels() {
  static const auto labels = [] {
    std::array<std::string, kLatencyBuckets.size() + 1> out;
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i) out[i] = fmt::format("{}", kLatencyBuckets[i]);
    out.back() = "+Inf";
    return out;
  }();
  return labels;
}

void RenderRequests(Writer& w, const RequestStats& stats) {
  w.Begin(kRequests);
  for (const auto& [method, m] : stats.methods) {
    w.Sample({{"method", method}, {"outcome", "error"}}, m.error);
    w.Sample({{"method", method}, {"outcome", "ok"}}, m.ok);
  }
  const auto& le = BucketLabels();
  w.Begin(kDuration);
  for (const auto& [method, m] : stats.methods) {
    int64_t cumulative = 0;
    for (size_t i = 0; i < m.buckets.size(); ++i) {
      cumulative += m.buckets[i];
      w.Sample("_bucket", {{"method", method}, {"le", le[i]}}, cumulative);
    }
    w.Sample("_sum", {{"method", method}}, m.sum_seconds);
    w.Sample("_count", {{"method", method}}, cumulative);
  }
}

}  // namespace

std::string RenderMetrics(const MetricsInput& in) {
  std::string out;
  const size_t methods = in.requests ? in.requests->methods.size() : 0;
  out.reserve(4096 + 256 * static_cast<size_t>(std::max(in.gpu_count, 0)) + 160 * in.bookings.size() +
              1400 * methods);
  Writer w(out);
  GpuNames names;

  w.Begin(kGpus);
  w.Sample({}, int64_t{in.gpu_count});
  if (in.snapshot) RenderTelemetry(w, names, *in.snapshot);
  RenderBookings(w, names, in);
  RenderNoShows(w, in);
  RenderMonitor(w, in);
  if (in.requests) RenderRequests(w, *in.requests);
  w.Begin(kLedgerSize);
  if (in.ledger_bytes) w.Sample({}, *in.ledger_bytes);
  w.Begin(kLedgerRows);
  if (in.ledger_reservations) w.Sample({}, *in.ledger_reservations);
  return out;
}

}  // namespace bk::monitor
