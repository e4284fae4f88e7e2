#include "cli/booking_args.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::cli {

namespace {

// --start is the machine interface: a naive ISO time there is UTC, as scripts
// and agents written for the original mean it; -t/--at is what a person types,
// so a naive time there is local. The friendly forms are local in both.
Result<engine::Seconds> StartOption(const Context& ctx, const std::optional<std::string>& start,
                                    const std::optional<std::string>& at, engine::Seconds now) {
  if (start)
    return engine::ParseStart(*start, now, ctx.config.policy.grid(), *ctx.zone, engine::NaiveIso::kUtc);
  return engine::ParseStart(at.value_or(""), now, ctx.config.policy.grid(), *ctx.zone);
}

// --start and -t/--at, which exclude each other; only the help differs.
void AddStartOptions(ArgSpec& spec, std::optional<std::string>& start, std::optional<std::string>& at,
                     const std::string& start_help, const std::string& at_help) {
  spec.Option("--start", &start, start_help, "TIME");
  spec.Option("-t,--at", &at, at_help, "TIME");
  spec.Excludes("--start", "-t,--at");
}

// -g/--gpu and -e/--exclude-gpu, which exclude each other; only the help differs.
void AddGpuOptions(ArgSpec& spec, std::optional<std::string>& gpu, std::optional<std::string>& exclude,
                   const std::string& gpu_help, const std::string& exclude_help) {
  spec.Option("-g,--gpu", &gpu, gpu_help, "LIST");
  spec.Option("-e,--exclude-gpu,--exclude", &exclude, exclude_help, "LIST");
  spec.Excludes("-g,--gpu", "-e,--exclude-gpu,--exclude");
}

// The help of --mem, --share, --cpus and --ram, as each grammar words it.
struct ResourceHelp {
  const char* mem;
  const char* share;
  const char* cpus;
  const char* ram;
};

constexpr const char* kLimitReasonHelp =
    "administrators: go beyond the fair-share limits, for this reason (kept in the audit log)";

// -m/--mem, -s/--share, --cpus and --ram, in that order.
template <class Args>
void AddResourceOptions(ArgSpec& spec, Args& a, const ResourceHelp& help) {
  spec.Option("-m,--mem", &a.mem, help.mem, "SIZE");
  spec.Option("-s,--share", &a.share, help.share, "SLOTS");
  spec.Option("--cpus", &a.cpus, help.cpus, "N");
  spec.Option("--ram", &a.ram, help.ram, "SIZE");
}

}  // namespace

void AddBookingOptions(ArgSpec& spec, BookingArgs& a, bool with_start, bool with_op_id) {
  spec.NeededPositional("count", &a.count, "number of GPUs (a count, not a GPU index)");
  spec.NeededPositional("duration", &a.duration, "30m, 1h30m, 2d (multiples of the booking slot)");
  spec.Positional("memory", &a.memory, "expected VRAM per GPU, e.g. 12g (same as --mem)");
  if (with_start)
    AddStartOptions(spec, a.start, a.at, "exact start: now, ISO 8601 (naive = UTC) or the -t grammar",
                    "exact friendly start: now, +30m, 20:00, \"tomorrow 09:00\", 12-24 09:00");
  AddGpuOptions(spec, a.gpu, a.exclude, "book exactly these GPU indexes, e.g. --gpu 1 or --gpu 0,3",
                "never use these GPU indexes");
  AddResourceOptions(spec, a,
                     {"expected VRAM per GPU, e.g. 24g or 4096m", "integer shared slots per GPU (default 1)",
                      "host CPUs this booking declares (default 1 when the host has a budget)",
                      "host RAM this booking declares, e.g. 32g (default 1g with a budget)"});
  if (with_op_id) {
    spec.Option("--op-id", &a.op_id, "operation ID: a retry with the same ID never books twice", "ID");
    spec.Option("--reason", &a.reason, kLimitReasonHelp, "TEXT");
  }
  spec.Flag("--json", &a.json, "print the bk.agent.v1 JSON document");
  spec.Flag("--compact", &a.compact, "JSON on one line (implies --json)");
}

void FillFromPreset(BookingArgs& a, const BookingArgs& preset) {
  if (!a.mem && !a.memory) a.mem = preset.mem;
  if (!a.gpu && !a.exclude) a.gpu = preset.gpu, a.exclude = preset.exclude;
  if (!a.share) a.share = preset.share;
  if (!a.cpus) a.cpus = preset.cpus;
  if (!a.ram) a.ram = preset.ram;
}

std::string BookCommand(const BookingArgs& a, const service::CreateRequest& req, const std::vector<int>& gpus,
                        engine::Seconds start, const engine::Zone& zone) {
  std::string cmd = fmt::format(
      "bk {}{} {} --gpu {} --at \"{}\"", req.mode == engine::Mode::kExclusive ? "x " : "", req.count,
      engine::FormatDuration(req.duration), JoinInts(gpus), engine::FormatLocalShort(start, zone));
  if (a.mem || a.memory) cmd += " --mem " + (a.mem ? *a.mem : *a.memory);
  if (a.share) cmd += " --share " + *a.share;
  if (a.cpus) cmd += " --cpus " + *a.cpus;
  if (a.ram) cmd += " --ram " + *a.ram;
  return cmd;
}

Result<service::CreateRequest> ToRequest(const Context& ctx, const BookingArgs& a, bool exclusive) {
  service::CreateRequest r;
  if (!a.count || !a.duration)
    return Invalid("give a GPU count and a duration, e.g. `bk 1 30m` (see `bk book --help`)");
  auto count = ParseUint(Trim(*a.count));
  if (!count || *count > 100000)
    return Invalid(fmt::format("GPU count must be a whole number such as 1, not '{}'", *a.count));
  r.count = static_cast<int>(*count);
  BK_ASSIGN_OR_RETURN(r.duration, engine::ParseDuration(*a.duration));
  r.mode = exclusive ? engine::Mode::kExclusive : engine::Mode::kShared;
  if (a.mode) {
    auto m = engine::ParseMode(*a.mode);
    if (!m) return Invalid("--mode must be s, shared, x or exclusive");
    r.mode = *m;
  }
  if (a.memory && a.mem) return Invalid("memory may be given either positionally or with --mem, not both");
  if (a.memory || a.mem) {
    BK_ASSIGN_OR_RETURN(int64_t mb, engine::ParseSizeMb(a.memory ? *a.memory : *a.mem, "memory"));
    r.memory_mb = mb;
  }
  if (a.share) {
    auto s = ParseUint(Trim(*a.share));
    if (!s || *s > 1000000)
      return Invalid(fmt::format("--share must be a whole number of slots such as 1, not '{}'", *a.share));
    r.share_units = static_cast<int>(*s);
  }
  if (a.gpu) {
    BK_ASSIGN_OR_RETURN(r.gpus, engine::ParseGpuList(*a.gpu, "--gpu"));
  }
  if (a.exclude) {
    BK_ASSIGN_OR_RETURN(r.exclude, engine::ParseGpuList(*a.exclude, "--exclude-gpu"));
  }
  if (a.cpus) {
    BK_ASSIGN_OR_RETURN(r.cpus, engine::ParseCpus(*a.cpus));
  }
  if (a.ram) {
    BK_ASSIGN_OR_RETURN(r.ram_mb, engine::ParseSizeMb(*a.ram, "--ram"));
  }
  if (a.start || a.at) {
    engine::Seconds now = ctx.clock->Now();
    auto t = StartOption(ctx, a.start, a.at, now);
    if (!t) return std::unexpected(t.error());
    r.start = *t;
  }
  if (a.op_id) r.op_id = std::string(Trim(*a.op_id));
  r.override_reason = a.reason;
  return r;
}

void AddEditOptions(ArgSpec& spec, EditArgs& a) {
  spec.Positional("reservation", &a.ref, "list number from `bk l`, short ID or full ID");
  spec.Option("-d,--duration", &a.duration, "new total duration, e.g. 2h", "DUR");
  spec.Option("--end", &a.end, "new end: 20:00, +1h, \"tomorrow 09:00\" or ISO 8601", "TIME");
  spec.Excludes("-d,--duration", "--end");
  AddStartOptions(spec, a.start, a.at, "new exact start (ISO 8601, naive = UTC, or the -t grammar)",
                  "new friendly start: +30m, 20:00, \"tomorrow 09:00\"");
  AddGpuOptions(spec, a.gpu, a.exclude, "pin these GPU indexes (sets the count)",
                "re-pick GPUs avoiding these");
  spec.Option("-c,--count", &a.count, "re-pick this many GPUs automatically", "N");
  spec.Option("--mode", &a.mode, "s, shared, x or exclusive", "MODE");
  AddResourceOptions(spec, a,
                     {"expected VRAM per GPU, or - to clear", "shared slots per GPU", "host CPUs declared",
                      "host RAM declared, e.g. 32g"});
  spec.Option("--op-id", &a.op_id, "operation ID for a retry-safe edit", "ID");
  spec.Option("--reason", &a.reason, kLimitReasonHelp, "TEXT");
  spec.Flag("-q,--queue", &a.queue, "move to the next legal slot if the change conflicts");
}

Result<service::EditRequest> ToEditRequest(const Context& ctx, const EditArgs& a) {
  service::EditRequest req;
  req.ref = a.ref.value_or("");
  if (a.duration) {
    BK_ASSIGN_OR_RETURN(req.duration, engine::ParseDuration(*a.duration));
  }
  if (a.start || a.at) {
    BK_ASSIGN_OR_RETURN(req.start, StartOption(ctx, a.start, a.at, ctx.clock->Now()));
  }
  if (a.end) {
    // An end obeys the start grammar (aligned, not in the past), relative to now.
    BK_ASSIGN_OR_RETURN(req.end,
                        engine::ParseStart(*a.end, ctx.clock->Now(), ctx.config.policy.grid(), *ctx.zone));
  }
  if (a.gpu) {
    BK_ASSIGN_OR_RETURN(req.gpus, engine::ParseGpuList(*a.gpu, "--gpu"));
  }
  if (a.exclude) {
    BK_ASSIGN_OR_RETURN(req.exclude, engine::ParseGpuList(*a.exclude, "--exclude-gpu"));
  }
  if (a.count) {
    auto n = ParseUint(Trim(*a.count));
    if (!n || *n < 1 || *n > 100000) return Invalid("--count must be a whole number of GPUs >= 1");
    req.count = static_cast<int>(*n);
  }
  if (a.mode) {
    auto m = engine::ParseMode(*a.mode);
    if (!m) return Invalid("--mode must be s, shared, x or exclusive");
    req.mode = *m;
  }
  if (a.mem) {
    req.update_memory = true;
    if (Trim(*a.mem) != "-") {
      BK_ASSIGN_OR_RETURN(req.memory_mb, engine::ParseSizeMb(*a.mem, "memory"));
    }
  }
  if (a.share) {
    auto s = ParseUint(Trim(*a.share));
    if (!s || *s > 1000000) return Invalid("--share must be a whole number of slots such as 1");
    req.share_units = static_cast<int>(*s);
  }
  if (a.cpus) {
    BK_ASSIGN_OR_RETURN(req.cpus, engine::ParseCpus(*a.cpus));
  }
  if (a.ram) {
    BK_ASSIGN_OR_RETURN(req.ram_mb, engine::ParseSizeMb(*a.ram, "--ram"));
  }
  if (a.op_id) req.op_id = std::string(Trim(*a.op_id));
  req.override_reason = a.reason;
  req.allow_queue = a.queue;
  return req;
}

Result<service::RenewRequest> ToRenewRequest(const std::string& ref, const std::string& duration,
                                             const std::optional<std::string>& op_id) {
  service::RenewRequest req;
  req.ref = ref;
  BK_ASSIGN_OR_RETURN(req.extend_by, engine::ParseDuration(duration));
  if (op_id) req.op_id = std::string(Trim(*op_id));
  return req;
}

std::vector<std::string> BeforeCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>* command) {
  auto it = std::find(args.begin(), args.end(), std::string("--"));
  if (command && it != args.end()) command->assign(it + 1, args.end());
  return std::vector<std::string>(args.begin(), it);
}

}  // namespace bk::cli
