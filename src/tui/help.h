#pragma once
// The text of the TUI's dialogs: help with the glyph legend, a reservation's
// details and a GPU's. Pure, so that tests read them without a terminal.

#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "tui/model.h"

namespace bk::tui {

std::vector<std::string> HelpLines(const Glyphs& g);
std::vector<std::string> ReservationLines(const engine::Reservation& r, const Data& d,
                                          const engine::Zone& zone);
std::vector<std::string> GpuLines(int gpu, const Data& d, const engine::Zone& zone);

}  // namespace bk::tui
