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
// state per GPU), every user's active reservations and the capabilities.
// Reads the ledger and samples GPU telemetry once.
Result<std::string> ContextDoc(client::Ledger& ledger, const config::Config& config);

// What this build and deployment can do, as a JSON object (flag -> value).
std::string CapabilitiesJson(const client::Ledger& ledger);

// Adds "capabilities" to a document (every `bk agent` document carries them).
std::string WithCapabilities(const std::string& doc, const client::Ledger& ledger);

// The printed form. Pretty: indented by 2, every field. Compact: one line, no
// spaces, without null-valued fields, "capabilities" objects and the objects
// this leaves empty (docs/agents.md, "The compact form"). A missing key in the
// compact form means null.
std::string Render(const std::string& doc, bool compact);

// The compact transformation alone (exposed for tests).
std::string Compact(const std::string& doc);

}  // namespace bk::agent
