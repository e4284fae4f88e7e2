#include "store/table.h"

namespace bk::store {

std::vector<int> ParseGpus(const std::string& text) {
  std::vector<int> out;
  int v = 0;
  bool any = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      any = true;
    } else if (c == ',') {
      if (any) out.push_back(v);
      v = 0;
      any = false;
    }
  }
  if (any) out.push_back(v);
  return out;
}

}  // namespace bk::store
