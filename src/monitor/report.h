#pragma once
// How `bk m` shows a sample: the gpubk.monitor.v1 JSON document (--json) and
// the console lines. nlohmann/json stays in report.cc.

#include <string>

#include "monitor/heartbeat.h"
#include "monitor/monitor.h"

namespace bk::monitor {

// One compact JSON document: the attributed snapshot with each process's UID,
// username, identity source and status, the heartbeat, the events and every
// booking's reclaim decision.
std::string TickJson(const TickReport& r, const Collector& collector, const std::string& usage_path);

// "sample 2026-11-29T18:49:00Z: gpus=4 processes=3 unbooked=1 events=2" and
// one indented line per event and reclaim; warnings as "  warning: ...".
std::string TickText(const TickReport& r, bool verbose);

}  // namespace bk::monitor
