#pragma once
// Node identity used in every JSON reply: {"schema":1,"id":...,"hostname":...}.

#include <string>

namespace bk::sys {

struct NodeIdentity {
  std::string id;        // first 20 hex of sha256("machine:" + machine-id) or of "hostname:" + host
  std::string hostname;  // printable ASCII, "unknown" when empty
};

const NodeIdentity& LocalNode();

}  // namespace bk::sys
