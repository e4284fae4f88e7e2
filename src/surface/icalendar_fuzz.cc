// libFuzzer: any text a booking's fields could carry (a user name, a cancel
// reason) through the iCalendar encoding. TEXT escaping must leave no raw
// control character; folding must keep every physical line within 75 octets,
// never start a continuation inside a UTF-8 character, and unfold to the input.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "surface/icalendar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string text = bk::surface::IcalText(input);
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) abort();
  // A line as ICalendar builds it: a name, then the escaped value.
  std::string line = "DESCRIPTION:" + text;
  std::string folded = bk::surface::IcalLine(line);
  if (!folded.ends_with("\r\n")) abort();
  std::string unfolded;
  size_t at = 0;
  bool first = true;
  while (at < folded.size()) {
    size_t end = folded.find("\r\n", at);
    if (end == std::string::npos) abort();
    std::string_view physical(folded.data() + at, end - at);
    if (physical.size() > 75) abort();
    if (!first) {
      if (physical.empty() || physical[0] != ' ') abort();
      physical.remove_prefix(1);
      if (!physical.empty() && (static_cast<unsigned char>(physical[0]) & 0xc0) == 0x80 &&
          (static_cast<unsigned char>(unfolded.back()) & 0x80))
        abort();  // a continuation that starts inside a character
    }
    unfolded += physical;
    first = false;
    at = end + 2;
  }
  if (unfolded != line) abort();
  return 0;
}
