#include "worker/unit.h"

#include <fmt/format.h>

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

std::string RenderWorkerUnit(const UnitSpec& spec) {
  std::string env;
  for (const auto& [k, v] : spec.environment)
    env += fmt::format("Environment={}\n", QuoteUnitValue(std::string(k).append("=").append(v)));
  return fmt::format(
      "# Written by `bk service install worker`; review it, then\n"
      "#   systemctl --user daemon-reload && systemctl --user enable --now bk-worker.service\n"
      "[Unit]\n"
      "Description=GPUBK worker: launches your booked commands on their GPUs\n"
      "StartLimitIntervalSec=60\n"
      "StartLimitBurst=3\n"
      "\n"
      "[Service]\n"
      "Type=simple\n"
      "{}"
      "ExecStart={} worker\n"
      "Restart=on-failure\n"
      "RestartSec=5\n"
      // 75: another worker holds the lease; 78: ledger policy drift. Restarting fixes neither.
      "RestartPreventExitStatus=75 78\n"
      // Longer than the longest termination grace (60 s), so jobs are stopped cleanly.
      "TimeoutStopSec=75\n"
      "KillMode=control-group\n"
      "\n"
      "[Install]\n"
      "WantedBy=default.target\n",
      env, QuoteUnitValue(spec.bk_path));
}

}  // namespace bk::worker
