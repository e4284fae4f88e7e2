#pragma once
// What `bk t` prints where it cannot draw (no terminal, TERM=dumb, a
// terminal curses does not know): the same facts as plain text.

#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "engine/policy.h"
#include "service/types.h"

namespace bk::tui {

std::string FallbackText(const service::StatusView& view, const engine::Policy& policy,
                         const engine::Zone& zone, const std::vector<std::string>& admin_lines,
                         const std::string& why);

}  // namespace bk::tui
