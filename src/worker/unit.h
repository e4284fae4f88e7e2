#pragma once
// `bk service install worker`: a systemd user unit that runs `bk worker` with
// this configuration. bk writes the file and says how to enable it; it never
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
// A value quoted for an Environment= line.
std::string QuoteUnitValue(const std::string& value);

}  // namespace bk::worker
