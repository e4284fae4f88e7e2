#pragma once
// The bk.agent.v1 JSON documents (and the other gpubk.* schemas) shared by the
// CLI's --json output, `bk agent` and MCP. Field names follow the original.
// nlohmann/json stays out of this header: documents are returned as text.

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "service/types.h"

namespace bk::surface {

// kLine: one line with the separators of Python's json.dumps (", " and ": "),
// as GPUBK 0.2.8 printed its single-line documents; kPretty: indented by 2.
enum class JsonStyle { kLine, kPretty };

std::string Dump(const std::string& compact_json, JsonStyle style);

std::string BookingResultDoc(const service::BookingOutcome& o, uint32_t caller, const engine::Policy& p,
                             engine::Seconds now);
// With a bound job: `worker_doc` is the gpubk.worker.v1 status (JSON text).
std::string BookingResultDoc(const service::BookingOutcome& o, uint32_t caller, const engine::Policy& p,
                             engine::Seconds now, const std::string& worker_doc);
// `bk j --json`; the JSON texts may be "null".
std::string JobsDoc(const std::vector<service::JobView>& jobs, uint32_t caller, const engine::Policy& p,
                    engine::Seconds now, const std::string& worker_doc, const std::string& spec_cleanup,
                    const std::string& log_cleanup);
std::string ReservationsDoc(const service::ListResult& r, uint32_t caller, const engine::Policy& p,
                            engine::Seconds now);
std::string CancellationDoc(const service::CancelOutcome& o, uint32_t caller, const engine::Policy& p,
                            engine::Seconds now);
std::string HistoryDoc(const service::HistoryView& v, uint32_t caller, const engine::Policy& p,
                       engine::Seconds now);
std::string LogDoc(const std::vector<store::Event>& events, uint32_t uid, int limit);
// `bk n --json`: the reservation notices (kind "reservation") and the active
// announcements (kind "announcement"), newest first, at most `limit`.
std::string NotificationsDoc(const std::vector<store::Notification>& items,
                             const std::vector<store::Announcement>& announcements, int limit);
// An announcement as `bk admin notice` prints it (gpubk.admin.v1, kind
// "announcement"); `status` is what the command did: published, updated,
// archived or unchanged.
std::string AnnouncementDoc(const store::Announcement& a, std::string_view status);
// {"announcements": [...]} as stored, in the order given (gpubk.admin.v1).
std::string AnnouncementsDoc(const std::vector<store::Announcement>& list);
// `bk login --json` (gpubk.login-notice.v1): the caller's bookings running
// now and starting within `within` seconds, unread notices, critical announcements.
struct LoginNotice {
  engine::Seconds now = 0;
  engine::Seconds within = 0;
  std::vector<engine::Reservation> active, upcoming;
  std::vector<store::Notification> notifications;  // the newest unread
  int64_t unread = 0;                              // how many are unread
  std::vector<store::Announcement> announcements;
};
std::string LoginDoc(const LoginNotice& n);
std::string OperationDoc(const service::OperationView& v, uint32_t caller, const engine::Policy& p,
                         engine::Seconds now);
std::string RecommendationDoc(const service::Recommendation& r, const engine::Policy& p, engine::Seconds now);
std::string ConfigDoc(const config::Config& c, const service::PolicyStatus& status,
                      const std::string& transport, const std::string& telemetry);
std::string ErrorDoc(const Error& e);
// `bk slots --json`: the options, best first (bk.agent.v1, kind "slots").
std::string SlotsDoc(const service::SlotsResult& r, const service::CreateRequest& request);
std::string ImportDoc(const service::ImportSummary& s);
std::string VerifyDoc(const service::VerifyReport& r);
// transfer_result: the booking as the new owner holds it, and who had it.
std::string TransferDoc(const service::TransferOutcome& o, uint32_t caller, const engine::Policy& p,
                        engine::Seconds now);
// gpubk.restore.v1 / gpubk.clear.v1 (`kind` restore or clear): where the
// ledger as it was is kept, and the verification of what was checked.
std::string LedgerSwapDoc(std::string_view kind, const service::LedgerSwap& s);

}  // namespace bk::surface
