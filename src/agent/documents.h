#pragma once
// The `bk agent` documents (schema bk.agent.v1): the context an agent reads
// before it books, the capability flags, and the two output forms (pretty and
// --compact). The booking, recommendation, cancellation and operation
// documents themselves come from surface/documents.h; this layer only adds to
// them. nlohmann/json stays in the .cc files: documents travel as JSON text.

#include <string>

#include "base/result.h"
#include "client/ledger.h"
#include "config/config.h"

namespace bk::agent {

// kind "context": software, node, actor, deployment, policy (with the host CPU
// and RAM budgets), host_budget (booked now / free now), gpu_advice (live
// state and recent history per GPU), every user's active reservations and the capabilities.
// Reads the ledger and samples GPU telemetry once.
Result<std::string> ContextDoc(client::Ledger& ledger, const config::Config& config);

// What this build and deployment can do, as a JSON object (flag -> value).
std::string CapabilitiesJson(const client::Ledger& ledger);

// Adds "capabilities" to a document (every `bk agent` document carries them).
std::string WithCapabilities(const std::string& doc, const client::Ledger& ledger);

// The printed form, every field either way: indented by 2, or (compact) one
// line with the separators of Python's json.dumps, as GPUBK 0.2.8 printed it.
std::string Render(const std::string& doc, bool compact);

}  // namespace bk::agent
