// bk t / bk tui: the terminal UI (src/tui/), or its plain-text fallback
// where there is no terminal to draw on.

#include <langinfo.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/context.h"
#include "surface/administrator.h"
#include "sys/users.h"
#include "tui/app.h"
#include "tui/fallback.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::cli {

namespace {

std::vector<std::string> AdminLines(const Context& ctx) {
  uid_t uid = surface::AdministratorUid(ctx.config, sys::CurrentUid());
  return surface::AdministratorLines(surface::ReadAdministrator(uid, sys::LookupAccount(uid)),
                                     ctx.config.deployment != config::Deployment::kPrivate);
}

monitor::UsageQuery LastDay(Context& ctx) {
  monitor::UsageQuery q;
  q.kind = monitor::UsageKind::kMe;
  q.to = ctx.clock->Now() + 1;
  q.from = q.to - 24 * 3600;
  q.uid = sys::CurrentUid();
  return q;
}

// Why the UI cannot be drawn here, or "" when it can.
std::string NoTerminal() {
  const char* term = std::getenv("TERM");
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return "no terminal";
  if (!term || !*term || std::strcmp(term, "dumb") == 0) return "TERM=dumb";
  return "";
}

}  // namespace

Result<int> RunTui(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec(
      "bk t",
      "The terminal UI: every GPU's calendar, live load and bookings; book, edit and cancel with a few "
      "keys (? lists them). Without a terminal it prints the same facts as plain text.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  std::string why = NoTerminal();
  std::unique_ptr<tui::Terminal> terminal;
  if (why.empty()) {
    // Wide characters need the user's locale; without UTF-8 the glyphs are ASCII.
    std::setlocale(LC_CTYPE, "");
    auto opened = tui::OpenCurses({.color = ctx.color.out});
    if (opened)
      terminal = std::move(*opened);
    else
      why = opened.error().message;
  }
  if (!terminal) {
    engine::Seconds now = ledger->Now();
    BK_ASSIGN_OR_RETURN(service::StatusView view, ledger->Status(now, now + 1, 0));
    std::fputs(tui::FallbackText(view, ledger->policy(), *ctx.zone, AdminLines(ctx), why).c_str(), ctx.out);
    return 0;
  }
  bool utf8 = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  tui::Deps deps{
      .ledger = *ledger,
      .zone = *ctx.zone,
      .deployment = ctx.config.deployment == config::Deployment::kPrivate ? "private" : "server",
      .usage_text = [&ctx]() { return UsageDocument(ctx, LastDay(ctx), true); },
      .monitor_state = [&ctx]() -> std::string {
        // Every 10 s: the heartbeat only, not a day of usage.
        auto doc = UsageDocument(ctx, CollectorQuery(ctx.clock->Now(), sys::CurrentUid()), false);
        if (!doc) return "unavailable";
        auto j = nlohmann::json::parse(*doc, nullptr, false);
        return j.is_object() && j.contains("collector") ? j["collector"].value("state", "unknown")
                                                        : "unknown";
      },
      .worker_state = [&ctx]() -> std::string {
        auto settings = worker::LoadSettings(ctx.config, config::ProcessEnv());
        if (!settings) return "error";
        return worker::Inspect(settings->job_dir, worker::InstanceIdentity(ctx.config), getuid(),
                               ctx.clock->Now())
            .state;
      },
      .admin_lines = [&ctx]() { return AdminLines(ctx); },
  };
  tui::App app(std::move(deps), *terminal, utf8 ? tui::UnicodeGlyphs() : tui::AsciiGlyphs());
  return app.Run();
}

}  // namespace bk::cli
