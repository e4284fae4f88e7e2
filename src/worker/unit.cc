#include "worker/unit.h"

#include <fmt/format.h>

#include <string_view>

namespace bk::worker {

std::string QuoteUnitValue(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '%') out += '%';  // systemd specifier escape
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

namespace {

// What differs between the two units.
struct UnitText {
  std::string_view name;         // bk-<name>.service
  std::string_view description;  // Description=
  std::string_view command;      // ExecStart="bk" <command>
  std::string_view prevent;      // exit codes a restart cannot fix
  std::string_view stop;         // lines on stopping
};

std::string Render(const UnitSpec& spec, const UnitText& t) {
  std::string env;
  for (const auto& [k, v] : spec.environment)
    env += fmt::format("Environment={}\n", QuoteUnitValue(std::string(k).append("=").append(v)));
  return fmt::format(
      "# Written by `bk service install {0}`; review it, then\n"
      "#   systemctl --user daemon-reload && systemctl --user enable --now bk-{0}.service\n"
      "[Unit]\n"
      "Description={1}\n"
      "StartLimitIntervalSec=60\n"
      "StartLimitBurst=3\n"
      "\n"
      "[Service]\n"
      "Type=simple\n"
      "{2}"
      "ExecStart={3} {4}\n"
      "Restart=on-failure\n"
      "RestartSec=5\n"
      "RestartPreventExitStatus={5}\n"
      "{6}"
      "\n"
      "[Install]\n"
      "WantedBy=default.target\n",
      t.name, t.description, env, QuoteUnitValue(spec.bk_path), t.command, t.prevent, t.stop);
}

}  // namespace

std::string RenderWorkerUnit(const UnitSpec& spec) {
  // 75: another worker holds the lease; 78: ledger policy drift. The stop
  // timeout is longer than the longest termination grace (60 s), so jobs are
  // stopped cleanly.
  return Render(spec, {"worker", "GPUBK worker: launches your booked commands on their GPUs", "worker",
                       "75 78", "TimeoutStopSec=75\nKillMode=control-group\n"});
}

std::string RenderMonitorUnit(const UnitSpec& spec) {
  // 75: another monitor writes the usage history; 77: not this ledger's
  // owner; 78: ledger policy drift.
  return Render(spec, {"monitor", "GPUBK monitor: samples your GPUs, records usage, reclaims no-shows", "m",
                       "75 77 78", ""});
}

}  // namespace bk::worker
