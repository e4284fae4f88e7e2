#include "rpc/records.h"

#include <stdexcept>
#include <string>

#include "store/record_tables.h"

namespace bk::rpc {
namespace {

using nlohmann::json;

// An unset optional is null; every other member is its plain JSON value.
template <class T>
json ToJson(const T& v) {
  return json(v);
}
template <NamedEnum E>
json ToJson(const E& v) {
  return EnumNamesOf(v).Name(v);
}
template <class T>
json ToJson(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

// A required key must be present; an optional one may be absent or null.
template <class T>
struct FromJson {
  static T Get(const json& j, const std::string& key) { return j.at(key).get<T>(); }
};
template <NamedEnum E>
struct FromJson<E> {
  static E Get(const json& j, const std::string& key) {
    auto v = EnumNamesOf(E{}).Parse(j.at(key).get<std::string>());
    if (!v) throw std::invalid_argument("unknown " + key);
    return *v;
  }
};
template <class T>
struct FromJson<std::optional<T>> {
  static std::optional<T> Get(const json& j, const std::string& key) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    return j[key].get<T>();
  }
};

template <class T>
json Encode(const T& table, const typename T::Record& r) {
  json out = json::object();
  store::ForEachField(table, [&](const auto& f) { out[std::string(f.JsonKey())] = ToJson(r.*f.kMember); });
  return out;
}

template <class T>
typename T::Record Decode(const T& table, const json& j) {
  typename T::Record r;
  store::ForEachField(table, [&](const auto& f) {
    using Type = typename std::remove_cvref_t<decltype(f)>::Type;
    r.*f.kMember = FromJson<Type>::Get(j, std::string(f.JsonKey()));
  });
  return r;
}

}  // namespace

json EncodeEvent(const store::Event& e) { return Encode(store::kEventTable, e); }
store::Event DecodeEvent(const json& j) { return Decode(store::kEventTable, j); }
json EncodeNotification(const store::Notification& n) { return Encode(store::kNotificationTable, n); }
store::Notification DecodeNotification(const json& j) { return Decode(store::kNotificationTable, j); }
json EncodeAnnouncement(const store::Announcement& a) { return Encode(store::kAnnouncementTable, a); }
store::Announcement DecodeAnnouncement(const json& j) { return Decode(store::kAnnouncementTable, j); }
json EncodeJob(const store::JobRecord& job) { return Encode(store::kJobTable, job); }
store::JobRecord DecodeJob(const json& j) { return Decode(store::kJobTable, j); }

}  // namespace bk::rpc
