#pragma once
// `bk service install worker|monitor`: a systemd user unit that runs
// `bk worker` (or `bk m`) with this configuration. bk writes the file and says how to enable it; it never
// calls systemctl itself.

#include <string>
#include <utility>
#include <vector>

namespace bk::worker {

struct UnitSpec {
  std::string bk_path;                                           // absolute path of this bk
  std::vector<std::pair<std::string, std::string>> environment;  // captured BK_* settings
};

// The unit text (Restart=on-failure, RestartPreventExitStatus=75 78, ...).
std::string RenderWorkerUnit(const UnitSpec& spec);
// `bk service install monitor` (a private ledger): `bk m` under systemd, which
// samples the GPUs, records usage and reclaims no-shows while you are away.
std::string RenderMonitorUnit(const UnitSpec& spec);
// A value quoted for an Environment= line.
std::string QuoteUnitValue(const std::string& value);

}  // namespace bk::worker
