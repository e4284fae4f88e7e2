#include "surface/administrator.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace bk::surface {
namespace {

using nlohmann::json;

constexpr size_t kMaxField = 256;

// Control characters become spaces, runs of spaces one, both ends trimmed;
// at most 256 bytes (cut on a character boundary); nullopt when nothing is left.
std::optional<std::string> Clean(std::string_view field) {
  std::string out;
  for (char ch : field) {
    auto c = static_cast<unsigned char>(ch);
    bool space = c < 0x20 || c == 0x7f || c == ' ';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += ch;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMaxField) {
    size_t cut = kMaxField;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

json Opt(const std::optional<std::string>& v) { return v ? json(*v) : json(); }

}  // namespace

uid_t AdministratorUid(const config::Config& config, uid_t caller) {
  return config.deployment == config::Deployment::kPrivate ? caller : config.owner_uid;
}

Administrator ReadAdministrator(uid_t uid, const sys::Account& account) {
  Administrator a;
  a.uid = uid;
  a.resolved = account.found;
  a.username = account.username;
  // full name, room, work phone, home phone, then everything else.
  std::vector<std::string_view> fields;
  std::string_view rest = account.gecos;
  while (fields.size() < 4) {
    size_t comma = rest.find(',');
    fields.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) {
      rest = {};
      break;
    }
    rest.remove_prefix(comma + 1);
  }
  if (fields.size() == 4) fields.push_back(rest);
  fields.resize(5);
  a.full_name = Clean(fields[0]);
  a.room = Clean(fields[1]);
  a.work_phone = Clean(fields[2]);
  a.home_phone = Clean(fields[3]);
  a.other = Clean(fields[4]);
  return a;
}

std::string AdministratorDoc(const Administrator& a) {
  json d = {
      {"schema_version", "gpubk.administrator.v1"},
      {"kind", "administrator"},
      {"source", "linux-account-gecos"},
      {"account_resolved", a.resolved},
      {"account", {{"uid", a.uid}, {"username", a.username}}},
      {"full_name", Opt(a.full_name)},
      {"room", Opt(a.room)},
      {"contact",
       {{"work_phone", Opt(a.work_phone)}, {"home_phone", Opt(a.home_phone)}, {"other", Opt(a.other)}}}};
  return d.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<std::string> AdministratorLines(const Administrator& a, bool server) {
  std::vector<std::string> lines = {server ? "GPUBK server" : "GPUBK private ledger"};
  lines.push_back("Administrator: " +
                  (a.full_name ? fmt::format("{} ({})", *a.full_name, a.username) : a.username));
  lines.push_back(fmt::format("Linux UID: {}", a.uid));
  if (!a.resolved) {
    lines.push_back("Account lookup is currently unavailable");
    return lines;
  }
  if (a.room) lines.push_back("Room: " + *a.room);
  std::vector<std::string> contact;
  if (a.work_phone) contact.push_back("work " + *a.work_phone);
  if (a.home_phone) contact.push_back("home " + *a.home_phone);
  if (a.other) contact.push_back("other " + *a.other);
  std::string joined;
  for (const auto& c : contact) joined += (joined.empty() ? "" : "; ") + c;
  lines.push_back("Contact: " + (joined.empty() ? "not provided in the Linux account" : joined));
  lines.push_back("The administrator can update these fields with `chfn`.");
  return lines;
}

}  // namespace bk::surface
