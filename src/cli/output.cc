#include "cli/output.h"

#include "surface/documents.h"

namespace bk::cli {

void JsonOutput::AddTo(ArgSpec& spec, const std::string& json_help, const std::string& compact_help) {
  spec.Flag("--json", &json, json_help);
  spec.Flag("--compact", &compact, compact_help);
}

std::string CallerDoc(client::Ledger& ledger, const service::BookingOutcome& o) {
  return surface::BookingResultDoc(o, ledger.actor().uid, ledger.policy(), ledger.Now());
}

std::string CallerDoc(client::Ledger& ledger, const service::CancelOutcome& o) {
  return surface::CancellationDoc(o, ledger.actor().uid, ledger.policy(), ledger.Now());
}

std::string CallerDoc(client::Ledger& ledger, const service::OperationView& v) {
  return surface::OperationDoc(v, ledger.actor().uid, ledger.policy(), ledger.Now());
}

std::string CallerDoc(client::Ledger& ledger, const service::HistoryView& v) {
  return surface::HistoryDoc(v, ledger.actor().uid, ledger.policy(), ledger.Now());
}

std::string CallerDoc(client::Ledger& ledger, const service::ListResult& r) {
  return surface::ReservationsDoc(r, ledger.actor().uid, ledger.policy(), ledger.Now());
}

}  // namespace bk::cli
