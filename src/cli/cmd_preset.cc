// bk preset|presets|p: saved booking patterns. The user's own live in their
// presets file, the lab's in the deployment's configuration; a user's preset
// hides the lab's of the same name. Saving goes through the booking grammar
// (`bk COUNT DURATION` and its options), and using one books through
// `bk COUNT DURATION` itself, so a preset can hold nothing a booking cannot.

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

using config::Preset;
using nlohmann::json;

// What `bk p NAME` finds under a name: the user's preset, else the lab's.
struct Found {
  Preset preset;
  bool lab = false;        // from the deployment's configuration
  bool hides_lab = false;  // the user's, with a lab preset of the same name under it
};

std::string PresetsPath() { return config::PresetsFile(config::ProcessEnv()); }

// Every preset a name reaches, sorted by name.
Result<std::vector<Found>> AllPresets(const Context& ctx) {
  BK_ASSIGN_OR_RETURN(std::vector<Preset> own, config::ReadPresets(PresetsPath(), sys::CurrentUid()));
  std::vector<Found> out;
  for (auto& p : own) {
    bool hides = std::any_of(ctx.config.presets.begin(), ctx.config.presets.end(),
                             [&](const Preset& lab) { return lab.name == p.name; });
    out.push_back({std::move(p), false, hides});
  }
  for (const auto& lab : ctx.config.presets)
    if (std::none_of(out.begin(), out.end(),
                     [&](const Found& f) { return !f.lab && f.preset.name == lab.name; }))
      out.push_back({lab, true, false});
  std::sort(out.begin(), out.end(),
            [](const Found& a, const Found& b) { return a.preset.name < b.preset.name; });
  return out;
}

std::unexpected<Error> PresetNotFound(const std::string& name) {
  return Fail(ErrorKind::kNotFound, "preset not found: " + name);
}

Result<Found> Find(const Context& ctx, const std::string& name) {
  BK_ASSIGN_OR_RETURN(std::vector<Found> all, AllPresets(ctx));
  for (auto& f : all)
    if (f.preset.name == name) return std::move(f);
  return PresetNotFound(name);
}

json FoundJson(const Found& f) {
  json j = config::PresetJson(f.preset);
  j["source"] = f.lab ? "lab" : "user";
  if (!f.lab) j["hides_lab_preset"] = f.hides_lab;
  return j;
}

std::string Placement(const Preset& p) {
  if (!p.gpus.empty()) return "GPU " + JoinInts(p.gpus);
  if (!p.exclude.empty()) return "except " + JoinInts(p.exclude);
  return "auto";
}

std::string Row(const std::string& name, const std::string& mode, const std::string& gpus,
                const std::string& duration, const std::string& share, const std::string& vram,
                const std::string& placement, const std::string& from) {
  return fmt::format("{:<32} {:<4} {:>4} {:>8} {:>5} {:>8} {:<12} {}", name, mode, gpus, duration, share,
                     vram, placement, from);
}

Result<int> List(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk preset list", "Your presets and the lab's; yours hide a lab preset of the same name.");
  JsonOutput out;
  out.AddTo(spec, "print the gpubk.presets.v1 document, each preset with its source");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::vector<Found> all, AllPresets(ctx));
  if (out.wanted()) {
    json list = json::array();
    for (const auto& f : all) list.push_back(FoundJson(f));
    json doc = {{"schema_version", config::kPresetsSchema}, {"presets", list}};
    ctx.Print(out.compact ? doc.dump() : surface::Dump(doc.dump(), surface::JsonStyle::kPretty));
    return 0;
  }
  if (all.empty()) {
    ctx.Print("No presets yet. Save one with `bk preset save NAME 1 30m`.");
    return 0;
  }
  ctx.Print(Row("Name", "Mode", "GPUs", "Duration", "Share", "VRAM/GPU", "Placement", "From"));
  for (const auto& [p, lab, hides] : all) {
    bool shared = p.mode == engine::Mode::kShared;
    ctx.Print(Row(p.name, std::string(engine::ModeName(p.mode)).substr(0, 4), std::to_string(p.count),
                  engine::FormatDuration(p.duration),
                  shared ? std::to_string(p.share_units.value_or(1)) : "-",
                  p.memory_mb ? engine::FormatSizeMb(*p.memory_mb) : "auto", Placement(p),
                  lab     ? "lab"
                  : hides ? "you (hides the lab's)"
                          : "you"));
  }
  return 0;
}

Result<int> Show(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name;
  ArgSpec spec("bk preset show", "One preset as JSON (yours, else the lab's).");
  spec.NeededPositional("name", &name, "the preset's name");
  JsonOutput out;
  out.AddTo(spec, "the preset on one line", "the same as --json");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!name) return UsageError("give the preset's name: bk preset show NAME");
  BK_ASSIGN_OR_RETURN(Found f, Find(ctx, *name));
  std::string doc = FoundJson(f).dump();
  ctx.Print(out.wanted() ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
  return 0;
}

Result<int> Remove(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name;
  ArgSpec spec("bk preset rm", "Delete one of your presets.");
  spec.NeededPositional("name", &name, "the preset's name");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!name) return UsageError("give the preset's name: bk preset rm NAME");
  BK_TRY(config::UpdatePresets(PresetsPath(), sys::CurrentUid(), [&](std::vector<Preset>& presets) -> Status {
    auto it = std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == *name; });
    if (it != presets.end()) {
      presets.erase(it);
      return Ok();
    }
    for (const auto& lab : ctx.config.presets)
      if (lab.name == *name)
        return Invalid(fmt::format(
            "preset {} is the lab's; the administrator changes it (configuration key presets)", *name));
    return PresetNotFound(*name);
  }));
  ctx.Print("deleted preset: " + *name);
  return 0;
}

// The preset a booking request describes; `req` comes from the booking grammar.
Preset FromRequest(const std::string& name, const service::CreateRequest& req) {
  Preset p{.name = name, .mode = req.mode, .count = req.count, .duration = req.duration};
  p.memory_mb = req.memory_mb;
  if (req.mode == engine::Mode::kShared) p.share_units = req.share_units;
  p.gpus = req.gpus;
  std::sort(p.gpus.begin(), p.gpus.end());
  p.exclude = req.exclude;
  std::sort(p.exclude.begin(), p.exclude.end());
  p.cpus = req.cpus;
  p.ram_mb = req.ram_mb;
  return p;
}

Result<int> Save(Context& ctx, const std::vector<std::string>& args) {
  BookingArgs a;
  bool exclusive = false;
  ArgSpec spec("bk preset save NAME", "Save a booking pattern under NAME (replacing one of that name).");
  AddBookingOptions(spec, a, false, false);
  spec.Flag("-x,--exclusive", &exclusive, "book whole GPUs (default: shared slots)");
  spec.Footer("Examples:\n  bk preset save train 2 4h 12g\n  bk preset save debug 1 30m -x --gpu 0");
  bool named = !args.empty() && !args[0].starts_with("-");
  if (auto done = ParseOrHelp(ctx, spec, {args.begin() + named, args.end()})) return *done;
  if (!named)
    return UsageError("give the preset's name first: bk preset save NAME COUNT DURATION [MEMORY] [options]");
  const std::string& name = args[0];
  BK_TRY(config::CheckPresetName(name));
  if (exclusive && a.share)
    return Invalid("--share applies to shared presets; an exclusive one takes whole GPUs");
  BK_ASSIGN_OR_RETURN(service::CreateRequest req, ToRequest(ctx, a, exclusive));
  Preset p = FromRequest(name, req);
  // The same checks as the file's, then the deployment's policy, as the ledger reports it.
  BK_TRY(config::PresetFromJson(config::PresetJson(p)));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_TRY(config::CheckPresetPolicy(p, ledger->policy()));
  p.created_at = p.updated_at = FormatIsoUtc(ctx.clock->Now());
  BK_TRY(config::UpdatePresets(PresetsPath(), sys::CurrentUid(), [&](std::vector<Preset>& presets) -> Status {
    auto it = std::find_if(presets.begin(), presets.end(), [&](const Preset& q) { return q.name == name; });
    if (it != presets.end()) {
      p.created_at = it->created_at;
      *it = p;
    } else if (presets.size() >= config::kMaxPresets) {
      return Invalid(
          fmt::format("you have {} presets, the most there may be; delete one first", presets.size()));
    } else {
      presets.push_back(p);
    }
    return Ok();
  }));
  if (a.json || a.compact) {
    ctx.Print(config::PresetJson(p).dump());
    return 0;
  }
  ctx.Print(fmt::format("saved preset: {} (use with `bk p {}`)", name, name));
  for (const auto& lab : ctx.config.presets)
    if (lab.name == name) ctx.Print("note: it hides the lab's preset of the same name");
  return 0;
}

// The preset's options as the booking grammar spells them.
BookingArgs AsOptions(const Preset& p) {
  BookingArgs a;
  if (p.memory_mb) a.mem = fmt::format("{}m", *p.memory_mb);
  if (p.share_units) a.share = std::to_string(*p.share_units);
  if (!p.gpus.empty()) a.gpu = JoinInts(p.gpus);
  if (!p.exclude.empty()) a.exclude = JoinInts(p.exclude);
  if (p.cpus) a.cpus = std::to_string(*p.cpus);
  if (p.ram_mb) a.ram = fmt::format("{}m", *p.ram_mb);
  return a;
}

// bk p NAME [booking options]: books as `bk COUNT DURATION` with the
// preset's options under the ones typed.
Result<int> Use(Context& ctx, const std::vector<std::string>& args) {
  const std::string& name = args[0];
  BK_ASSIGN_OR_RETURN(Found f, Find(ctx, name));
  const Preset& p = f.preset;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  if (auto st = config::CheckPresetPolicy(p, ledger->policy()); !st)
    return Invalid(st.error().message +
                   (f.lab ? "; tell the administrator (`bk info`)"
                          : fmt::format("; save it again (`bk preset save {} ...`)", name)));
  std::vector<std::string> argv = {std::to_string(p.count), engine::FormatDuration(p.duration)};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  BookingArgs options = AsOptions(p);
  return RunBookThen(ctx, argv, "bk p " + name, p.mode == engine::Mode::kExclusive, nullptr, &options);
}

constexpr const char* kHelp = R"(usage: bk preset|p [SUBCOMMAND | NAME [booking options]]

Saved booking patterns: yours in $XDG_CONFIG_HOME/gpubk/presets.json, and the lab's
from the deployment's configuration (yours hide a lab preset of the same name).

  bk p                                    list them (same as `bk p list`)
  bk p list [--json]                      the table, or the gpubk.presets.v1 document
  bk p save NAME COUNT DURATION [MEMORY] [-x] [-g LIST | -e LIST] [-s N] [--mem SIZE]
            [--cpus N] [--ram SIZE]       save (or replace) a pattern; never a start time
  bk p show NAME [--json]                 one preset as JSON
  bk p rm NAME                            delete one of yours (also delete, del)
  bk p NAME [booking options]             book with it; options typed win, e.g.
                                          bk p train -t 20:00, bk p train -g 2 -- CMD
)";

}  // namespace

Result<int> RunPreset(Context& ctx, const std::vector<std::string>& args) {
  if (args.empty()) return List(ctx, args);
  const std::string& w = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (w == "-h" || w == "--help" || w == "help") {
    std::fputs(kHelp, ctx.out);
    return 0;
  }
  if (w == "list" || w == "ls" || w == "l" || w == "--json" || w == "--compact")
    return List(ctx, w.starts_with("-") ? args : rest);
  if (w == "save" || w == "set") return Save(ctx, rest);
  if (w == "show" || w == "get") return Show(ctx, rest);
  if (w == "rm" || w == "delete" || w == "del") return Remove(ctx, rest);
  if (w == "suggest" || w == "learn")
    return Invalid(fmt::format(
        "bk preset {} is not in this version yet; save a pattern you use with `bk preset save NAME COUNT "
        "DURATION ...`",
        w));
  if (w.starts_with("-")) return UsageError(fmt::format("unknown option {}; see `bk preset --help`", w));
  return Use(ctx, args);
}

}  // namespace bk::cli
