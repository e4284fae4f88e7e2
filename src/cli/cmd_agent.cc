// bk agent|ai, bk mcp, bk skill: thin command-line wrappers over src/agent/.

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "agent/documents.h"
#include "agent/mcp_server.h"
#include "agent/skill_bundle.h"
#include "agent/skill_install.h"
#include "base/strings.h"
#include "base/version.h"
#include "cli/booking_args.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "worker/cleanup.h"

namespace bk::cli {
namespace {

constexpr const char* kAgentHelp = R"(usage: bk agent SUBCOMMAND ...   (alias: bk ai)

Structured bk.agent.v1 JSON for coding agents: pretty by default, one line
with --compact (every field, as GPUBK 0.2.8 printed it). Errors are kind
"error" documents on stdout, exit 2.

  bk agent context [--compact]                      policy, host budgets, live GPUs, reservations
  bk agent recommend N DUR [booking flags] [--compact]
                                                    read-only; exit 3 when nothing fits
  bk agent edit REF --op-id ID [--duration D] [--start T] [--gpu L | --exclude-gpu L]
                   [--count N] [--mode M] [--mem SIZE|-] [--share N] [--cpus N] [--ram SIZE] [--queue]
  bk agent renew REF DUR --op-id ID                 extend the end, same GPUs
  bk agent cancel REF [--op-id ID]                  a retry with the same ID returns the same result
  bk agent operation OP_ID                          did that operation commit, and what did it touch

Booking flags: --gpu LIST --exclude-gpu LIST --mem SIZE --share N --start TIME
--mode s|x --cpus N --ram SIZE (as for `bk N DUR`). See docs/agents.md.
)";

void PrintDoc(Context& ctx, client::Ledger& ledger, const std::string& doc, bool compact) {
  ctx.Print(agent::Render(agent::WithCapabilities(doc, ledger), compact));
}

// --compact, then --json, which changes nothing: an agent's output is always JSON.
void AddAgentFlags(ArgSpec& spec, JsonOutput& out, const std::string& compact_help = "one line",
                   const std::string& json_help = "accepted; output is always JSON") {
  spec.Flag("--compact", &out.compact, compact_help);
  spec.Flag("--json", &out.json, json_help);
}

// Asks the ledger through `call` and prints the caller's document of its answer.
template <typename Call>
Result<int> PrintAnswer(Context& ctx, bool compact, const Call& call) {
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(auto answer, call(*ledger));
  PrintDoc(ctx, *ledger, CallerDoc(*ledger, answer), compact);
  return 0;
}

Result<int> AgentContext(Context& ctx, const std::vector<std::string>& args) {
  JsonOutput out;
  ArgSpec spec("bk agent context",
               "Policy, host CPU/RAM budgets, live GPU state and every active reservation.");
  AddAgentFlags(spec, out, "the same document on one line", "accepted for symmetry; output is always JSON");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(std::string doc, agent::ContextDoc(*ledger, ctx.config));
  ctx.Print(agent::Render(doc, out.compact));
  return 0;
}

Result<int> AgentRecommend(Context& ctx, const std::vector<std::string>& args) {
  BookingArgs a;
  ArgSpec spec("bk agent recommend",
               "Read-only recommendation: where and when `bk N DUR` with these flags would land.");
  AddBookingOptions(spec, a, true, false);
  spec.Option("--mode", &a.mode, "s, shared (default), x or exclusive", "MODE");
  spec.Footer(
      "Exit status 3 when nothing fits (available: false).\nExample:\n  bk agent recommend 1 2h --gpu 1 "
      "--mem 24g --cpus 4 --ram 32g --compact");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(service::CreateRequest req, ToRequest(ctx, a, false));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::Recommendation rec, ledger->Recommend(req));
  PrintDoc(ctx, *ledger, surface::RecommendationDoc(rec, ledger->policy(), ledger->Now()), a.compact);
  return rec.available ? 0 : 3;
}

Result<int> AgentEdit(Context& ctx, const std::vector<std::string>& args) {
  EditArgs e;
  JsonOutput out;
  ArgSpec spec("bk agent edit",
               "Retry-safe edit of one of your reservations (a started one may only change its end).");
  AddEditOptions(spec, e);
  AddAgentFlags(spec, out);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!e.ref)
    return Invalid("which reservation? e.g. `bk agent edit 1a2b3c4d --op-id edit-001 --duration 3h`");
  if (!e.op_id || Trim(*e.op_id).empty())
    return Invalid("operation ID is required for retry-safe Agent edits (--op-id)");
  if (!e.any_change()) return Invalid("edit requires at least one changed field");
  BK_ASSIGN_OR_RETURN(service::EditRequest req, ToEditRequest(ctx, e));
  return PrintAnswer(ctx, out.compact, [&](client::Ledger& l) { return l.Edit(req); });
}

Result<int> AgentRenew(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, duration, op_id;
  JsonOutput out;
  ArgSpec spec("bk agent renew", "Retry-safe extension of a reservation's end on the same GPUs.");
  spec.Positional("reservation", &ref, "short ID, full ID or list number");
  spec.Positional("duration", &duration, "how much longer, e.g. 30m");
  spec.Option("--op-id", &op_id, "operation ID (required)", "ID");
  AddAgentFlags(spec, out);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref || !duration)
    return Invalid(
        "give a reservation and how much longer, e.g. `bk agent renew 1a2b3c4d 30m --op-id renew-001`");
  if (!op_id || Trim(*op_id).empty())
    return Invalid("operation ID is required for retry-safe Agent renewals (--op-id)");
  BK_ASSIGN_OR_RETURN(service::RenewRequest req, ToRenewRequest(*ref, *duration, op_id));
  return PrintAnswer(ctx, out.compact, [&](client::Ledger& l) { return l.Renew(req); });
}

Result<int> AgentCancel(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, op_id;
  JsonOutput out;
  ArgSpec spec("bk agent cancel", "Cancel one of your reservations; idempotent with --op-id.");
  spec.Positional("reservation", &ref, "short ID, full ID or list number");
  spec.Option("--op-id", &op_id, "operation ID: a retry returns the same cancelled reservation", "ID");
  AddAgentFlags(spec, out);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which reservation? e.g. `bk agent cancel 1a2b3c4d --op-id cancel-001`");
  service::CancelRequest req;
  req.ref = *ref;
  if (op_id && !Trim(*op_id).empty()) req.op_id = std::string(Trim(*op_id));
  return PrintAnswer(ctx, out.compact, [&](client::Ledger& l) -> Result<service::CancelOutcome> {
    BK_ASSIGN_OR_RETURN(service::CancelOutcome o, l.Cancel(req));
    for (const auto& w : worker::SweepSpecsAfterCancel(l, ctx.config, config::ProcessEnv(), o.reservation))
      ctx.Warn(w);
    return o;
  });
}

Result<int> AgentOperation(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> op_id;
  JsonOutput out;
  ArgSpec spec("bk agent operation",
               "Whether one of your operation IDs committed, and the reservation it touched.");
  spec.Positional("operation_id", &op_id, "the --op-id of an earlier write");
  AddAgentFlags(spec, out);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!op_id) return Invalid("which operation? e.g. `bk agent operation experiment-001`");
  return PrintAnswer(ctx, out.compact,
                     [&](client::Ledger& l) { return l.Operation(std::string(Trim(*op_id))); });
}

}  // namespace

Result<int> RunAgent(Context& ctx, const std::vector<std::string>& args) {
  // Agents parse stdout: every failure below becomes a kind "error" document.
  ctx.json = true;
  if (args.empty())
    return Invalid("bk agent needs a subcommand: context, recommend, edit, renew, cancel or operation");
  const std::string& sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "-h" || sub == "--help" || sub == "help") {
    std::fputs(kAgentHelp, ctx.out);
    return 0;
  }
  if (sub == "context" || sub == "ctx") return AgentContext(ctx, rest);
  if (sub == "recommend" || sub == "rec") return AgentRecommend(ctx, rest);
  if (sub == "edit" || sub == "e") return AgentEdit(ctx, rest);
  if (sub == "renew" || sub == "extend") return AgentRenew(ctx, rest);
  if (sub == "cancel" || sub == "del") return AgentCancel(ctx, rest);
  if (sub == "operation" || sub == "op") return AgentOperation(ctx, rest);
  return Invalid(
      fmt::format("unknown agent subcommand: {}; try context, recommend, edit, renew, cancel or operation",
                  Printable(sub)));
}

Result<int> RunMcp(Context& ctx, const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      ArgSpec spec("bk mcp",
                   "Model Context Protocol server on stdio (one JSON-RPC message per line; logs on stderr).\n"
                   "Register it with an agent, e.g.\n"
                   "  codex mcp add gpubk -- bk mcp\n"
                   "  claude mcp add --scope user gpubk -- bk mcp");
      spec.Footer(
          "Tools: get_gpu_context, recommend_gpu_booking, create_gpu_booking, list_gpu_reservations,\n"
          "get_my_gpu_usage, edit_my_gpu_booking, renew_my_gpu_booking, cancel_my_gpu_booking,\n"
          "cleanup_my_job_specs, cleanup_my_job_logs, read_my_job_log, get_my_gpu_operation.\n"
          "With a cluster catalog (bk c) also: get_gpu_cluster_context, check_gpu_cluster_readiness,\n"
          "recommend_cluster_gpu_booking, create_cluster_gpu_booking, get_my_cluster_gpu_usage,\n"
          "edit_my_cluster_gpu_booking, cancel_my_cluster_gpu_booking.\n"
          "Resources bk://context, bk://usage/me/recent; prompt plan_gpu_experiment. See docs/agents.md.");
      return *ParseOrHelp(ctx, spec, {"--help"});
    }
    if (a == "--version" || a == "-V") {
      std::fprintf(ctx.out, "gpubk %s\n", kVersion);
      return 0;
    }
    return Invalid(fmt::format("bk mcp takes no arguments (got {}); see `bk mcp --help`", Printable(a)));
  }
  agent::ToolEnv env;
  env.ledger = [&ctx]() { return ctx.Ledger(); };
  env.config = &ctx.config;
  env.zone = ctx.zone.get();
  agent::McpServer server(std::move(env));
  return server.Serve(stdin, ctx.out);
}

namespace {

constexpr const char* kSkillHelp = R"(usage: bk skill install [--agent codex|claude] [--target DIR] [--force]
       bk skill status [--json]
       bk skill show [FILE]
       bk skill path [--agent codex|claude]

Installs the GPUBK Agent Skill bundled in this binary where the agent finds
personal skills, and writes nothing else:
  codex   ~/.agents/skills/gpubk
  claude  ~/.claude/skills/gpubk
--force replaces only a GPUBK skill (staged copy, rolled back on failure);
symlinks and directories that are not a GPUBK skill are refused.
)";

Result<std::string> Destination(const std::optional<std::string>& agent_name,
                                const std::optional<std::string>& target) {
  if (target) {
    if (agent_name) return Invalid("--agent and --target cannot be combined");
    std::string t(Trim(*target));
    if (StartsWith(t, "~/")) t = agent::ProcessSkillEnv().home + t.substr(1);
    if (!StartsWith(t, "/")) {
      char cwd[4096];
      if (getcwd(cwd, sizeof cwd) == nullptr)
        return Fail(ErrorKind::kIo, "cannot resolve the current directory");
      t = std::string(cwd) + "/" + t;
    }
    while (t.size() > 1 && t.back() == '/') t.pop_back();
    return t;
  }
  BK_ASSIGN_OR_RETURN(agent::SkillAgent a, agent::ParseSkillAgent(agent_name.value_or("codex")));
  return agent::SkillDir(a, agent::ProcessSkillEnv());
}

Result<int> SkillInstall(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> agent_name, target;
  bool force = false;
  ArgSpec spec("bk skill install", "Install the bundled GPUBK Skill for an agent.");
  spec.Option("--agent", &agent_name, "codex (default) or claude", "AGENT");
  spec.Option("--target", &target, "install into exactly this skill directory (named gpubk)", "DIR");
  spec.Flag("--force", &force, "replace an existing GPUBK skill");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string dest, Destination(agent_name, target));
  agent::InstallOptions o;
  o.dest = dest;
  o.anchor = agent::ProcessSkillEnv().home;
  o.force = force;
  BK_ASSIGN_OR_RETURN(std::string path, agent::InstallSkill(o));
  ctx.Print("installed skill: " + path);
  return 0;
}

Result<int> SkillStatusCmd(Context& ctx, const std::vector<std::string>& args) {
  bool json = false;
  ArgSpec spec("bk skill status", "Where the GPUBK Skill is installed and whether it matches this binary.");
  spec.Flag("--json", &json, "one JSON document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  agent::SkillEnv env = agent::ProcessSkillEnv();
  struct Row {
    std::string agent;
    agent::SkillStatus status;
  };
  std::vector<Row> rows;
  auto add = [&](const std::string& name, Result<std::string> dir) {
    if (dir) rows.push_back({name, agent::InspectSkill(*dir)});
  };
  add("codex", agent::SkillDir(agent::SkillAgent::kCodex, env));
  add("codex-legacy", agent::LegacyCodexSkillDir(env));
  add("claude", agent::SkillDir(agent::SkillAgent::kClaude, env));
  if (rows.empty()) return Invalid("cannot find your home directory; set HOME");
  if (json) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& r : rows)
      items.push_back({{"agent", r.agent},
                       {"path", r.status.path},
                       {"state", agent::SkillStateName(r.status.state)},
                       {"differing", r.status.differing}});
    nlohmann::json doc = {{"schema_version", "gpubk.skill-status.v1"},
                          {"kind", "skill-status"},
                          {"bundled_version", kVersion},
                          {"installations", items}};
    ctx.Print(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }
  for (const auto& r : rows) {
    std::string state = agent::SkillStateName(r.status.state);
    if (r.status.state == agent::SkillState::kCurrent) state += fmt::format(" (matches bk {})", kVersion);
    if (r.status.state == agent::SkillState::kDiffers)
      state += fmt::format(" (not bk {}'s copy: {}; `bk skill install --force` updates it)", kVersion,
                           Join(r.status.differing, ", "));
    if (r.status.state == agent::SkillState::kForeign) state += " (not a GPUBK skill; left alone)";
    ctx.Print(fmt::format("{:<13} {:<44} {}", r.agent, r.status.path, state));
  }
  return 0;
}

}  // namespace

Result<int> RunSkill(Context& ctx, const std::vector<std::string>& args) {
  if (args.empty()) return Invalid("bk skill needs a subcommand: install, status, show or path");
  const std::string& sub = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "-h" || sub == "--help" || sub == "help") {
    std::fputs(kSkillHelp, ctx.out);
    return 0;
  }
  if (sub == "install") return SkillInstall(ctx, rest);
  if (sub == "status") return SkillStatusCmd(ctx, rest);
  if (sub == "show") {
    std::optional<std::string> file;
    ArgSpec spec("bk skill show", "Print a file of the bundled Skill.");
    spec.Positional("skill_file", &file,
                    "SKILL.md (the default), references/protocol.md or agents/openai.yaml");
    if (auto done = ParseOrHelp(ctx, spec, rest)) return *done;
    std::string want = file.value_or("SKILL.md");
    for (const auto& f : agent::BundledSkill()) {
      if (f.path == want) {
        std::fwrite(f.content.data(), 1, f.content.size(), ctx.out);
        return 0;
      }
    }
    std::vector<std::string> names;
    for (const auto& f : agent::BundledSkill()) names.emplace_back(f.path);
    return Invalid(fmt::format("no bundled skill file {}; files: {}", Printable(want), Join(names, ", ")));
  }
  if (sub == "path") {
    std::optional<std::string> agent_name;
    ArgSpec spec("bk skill path", "Print where `bk skill install` would install.");
    spec.Option("--agent", &agent_name, "codex (default) or claude", "AGENT");
    if (auto done = ParseOrHelp(ctx, spec, rest)) return *done;
    BK_ASSIGN_OR_RETURN(std::string dest, Destination(agent_name, std::nullopt));
    ctx.Print(dest);
    return 0;
  }
  return Invalid(
      fmt::format("unknown skill subcommand: {}; try install, status, show or path", Printable(sub)));
}

}  // namespace bk::cli
