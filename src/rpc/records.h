#pragma once
// The JSON forms of the stored records that travel on the socket (history
// events, notifications, jobs, announcements), derived from their tables
// (store/record_tables.h): one key per field. Decoders throw nlohmann's
// exceptions on a missing or mistyped key, reading the keys in column order,
// so the first bad one is named; callers turn that into one error.

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace bk::rpc {

nlohmann::json EncodeEvent(const store::Event& e);
store::Event DecodeEvent(const nlohmann::json& j);
nlohmann::json EncodeNotification(const store::Notification& n);
store::Notification DecodeNotification(const nlohmann::json& j);
nlohmann::json EncodeAnnouncement(const store::Announcement& a);
store::Announcement DecodeAnnouncement(const nlohmann::json& j);
nlohmann::json EncodeJob(const store::JobRecord& job);
store::JobRecord DecodeJob(const nlohmann::json& j);

}  // namespace bk::rpc
