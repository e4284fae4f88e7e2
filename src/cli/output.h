#pragma once
// How commands offer their JSON documents: the --json/--compact pair, and the
// documents of the ledger's answers as the caller sees them (their uid, the
// policy and the ledger's now).

#include <string>

#include "cli/args.h"
#include "client/ledger.h"

namespace bk::cli {

// --json and --compact: either one prints the command's JSON document instead of text.
struct JsonOutput {
  bool json = false;
  bool compact = false;

  // Adds --json, then --compact.
  void AddTo(ArgSpec& spec, const std::string& json_help,
             const std::string& compact_help = "JSON on one line");
  bool wanted() const { return json || compact; }
};

// The bk.agent.v1 document of a write's or a lookup's result, for the caller.
std::string CallerDoc(client::Ledger& ledger, const service::BookingOutcome& o);
std::string CallerDoc(client::Ledger& ledger, const service::CancelOutcome& o);
std::string CallerDoc(client::Ledger& ledger, const service::OperationView& v);
std::string CallerDoc(client::Ledger& ledger, const service::HistoryView& v);
std::string CallerDoc(client::Ledger& ledger, const service::ListResult& r);

}  // namespace bk::cli
