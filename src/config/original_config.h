#pragma once
// GPUBK 0.2.8's system configuration (/etc/gpubk/config.json, config_version
// 1) read as a server config: a lab that moves to this bk keeps its file. The
// original's broker (broker_socket, broker_uid, data_dir) is this bk's
// daemon; its scheduling keys mean the same here; the rest is named with what
// to do instead, so an administrator sees exactly what no longer applies.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace bk::config {

struct OriginalConfig {
  nlohmann::json server;              // the same settings as a gpubk.server.v1 document
  std::vector<std::string> honoured;  // the original's keys carried over, in file order
  std::vector<DroppedKey> dropped;    // the ones that are not, in file order
};

// A JSON object without schema_version holding the original's keys.
bool IsOriginalConfig(const nlohmann::json& doc);

// Translates the original's document; `path` names it in errors. A file
// without a broker (the original's shared-file mode) cannot be served here
// and is refused with what to add.
Result<OriginalConfig> TranslateOriginalConfig(const nlohmann::json& doc, const std::string& path);

}  // namespace bk::config
