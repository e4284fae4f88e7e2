#pragma once
// Requests and replies of the protocol methods whose params or result are not
// already a service type (rpc/methods.h names them). Plain structs: the JSON
// forms are in rpc/codec.h.

#include <functional>
#include <optional>
#include <string>

#include "engine/policy.h"
#include "monitor/usage_view.h"
#include "service/types.h"

namespace bk::rpc {

// A method that takes no params: any field sent is refused.
struct NoParams {};

// server.ping: who the daemon is, who it believes the caller is, its clock and policy.
struct ServerInfo {
  std::string version;
  std::string deployment;
  uint32_t owner_uid = 0;
  std::string owner;
  service::Actor actor;
  engine::Seconds now = 0;
  engine::Policy policy;
  std::string telemetry;  // what the daemon's monitor samples, for `bk config`
};

// placement.slots: `from` defaults to the daemon's now.
struct SlotsRequest {
  service::CreateRequest request;
  std::optional<engine::Seconds> from;
  int limit = 5;
};

struct HistoryRequest {
  std::string ref;
};

struct LogRequest {
  int limit = 100;
};

struct NotificationsRequest {
  int limit = 20;
};

// notifications.mark_read: the notifications `bk n` showed.
struct MarkReadRequest {
  std::vector<std::string> ids;
};

struct MarkReadReply {
  int64_t marked = 0;
};

// ledger.generation: BookingService::ChangeCounter, which moves whenever the
// ledger committed a write.
struct GenerationReply {
  uint64_t generation = 0;
};

// announcement.archive: the announcement's ID or a unique prefix.
struct AnnouncementRef {
  std::string ref;
};

struct OperationRequest {
  std::string op_id;
};

// status.get: [from, to) defaults to the next day from the daemon's now.
struct StatusRequest {
  std::optional<engine::Seconds> from;
  std::optional<engine::Seconds> to;
  std::optional<int> mine_limit;  // at most this many of the caller's reservations (absent: all)
};

// admin.verify: an empty path means the live ledger.
struct VerifyRequest {
  std::string path;
};

struct BackupRequest {
  std::string path;
};

// admin.backup: where the copy was written.
struct BackupReply {
  std::string path;
};

// admin.restore: the backup is the descriptor passed with the request line;
// the request's `path`, as admin.backup's, only names it in messages (the
// daemon never opens a path for it).
using RestoreRequest = BackupRequest;

// admin.clear: where the verified backup of what is cleared goes.
struct ClearRequest {
  std::string backup_path;
};

// admin.import: the ledger.json inline, or (`descriptor`) as the descriptor
// passed with the request line over the daemon's socket.
struct ImportRequest {
  std::string ledger_json;
  bool descriptor = false;
};

// usage.query. `to` defaults to just after the daemon's now; view "me" is
// always the caller.
struct UsageRequest {
  monitor::UsageQuery query;
  bool to_given = false;
  bool text = false;
};

// Usage history as the daemon's monitor renders it (document or text table).
using UsageFn = std::function<Result<std::string>(const monitor::UsageQuery&, bool text)>;

// usage.query: the rendered gpubk.usage.v1 document or text table.
struct UsageReply {
  std::string document;
};

}  // namespace bk::rpc
