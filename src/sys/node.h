#pragma once
// Node identity used in every JSON reply: {"schema":1,"id":...,"hostname":...}.

#include <string>
#include <string_view>
#include <vector>

namespace bk::sys {

struct NodeIdentity {
  std::string id;        // first 20 hex of sha256("machine:" + machine-id) or of "hostname:" + host
  std::string hostname;  // printable ASCII, "unknown" when empty
};

// This host, computed once: /etc/machine-id, else /var/lib/dbus/machine-id
// (first 256 characters, trimmed), else the sanitized hostname.
const NodeIdentity& LocalNode();

// The pieces of LocalNode(), exposed for tests.
// Printable ASCII kept, anything else (one UTF-8 character at a time) becomes
// '?'; trimmed; at most 255 characters; "unknown" when empty.
std::string SanitizeHostname(std::string_view raw);
// `machine_id` already trimmed; "" means none.
NodeIdentity ComputeNodeIdentity(const std::string& machine_id, std::string_view raw_hostname);
// The first readable, non-empty machine-id among `machine_id_paths`.
NodeIdentity ReadNodeIdentity(const std::vector<std::string>& machine_id_paths,
                              std::string_view raw_hostname);

}  // namespace bk::sys
