#include "base/json_strict.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

namespace bk {

namespace {

// Thrown from the parser callback to stop at the first problem.
struct Stop {
  JsonError error;
};

}  // namespace

std::string JsonError::Phrase() const {
  switch (problem) {
    case JsonProblem::kSyntax: return fmt::format("is not valid JSON ({})", detail);
    case JsonProblem::kTooDeep: return fmt::format("nests deeper than {}", detail);
    case JsonProblem::kDuplicate: return fmt::format("names {} twice; keep one", detail);
  }
  return "is not valid JSON";
}

namespace {

// Builds the document with nlohmann's own DOM builder, checking depth and
// keys on the way. A SAX handler rather than a parser callback: with a
// callback, nlohmann 3.11 rescans the parent array at the end of every object,
// which makes an array of N objects cost N^2.
class StrictSax {
 public:
  using json = nlohmann::json;
  StrictSax(json& root, int max_depth) : dom_(root, /*allow_exceptions=*/true), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    Deeper();
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    if (!keys_.empty() && !keys_.back().insert(k).second)
      throw Stop{{JsonProblem::kDuplicate, fmt::format("key {}", json(k).dump())}};
    return dom_.key(k);
  }
  bool end_object() {
    --depth_;
    if (!keys_.empty()) keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    Deeper();
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t pos, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(pos, token, e);  // throws the parser's own exception
  }

 private:
  void Deeper() {
    if (++depth_ > max_depth_) throw Stop{{JsonProblem::kTooDeep, fmt::format("{} levels", max_depth_)}};
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int max_depth_;
  int depth_ = 0;
  // The keys seen so far in each object still open, innermost last.
  std::vector<std::unordered_set<std::string>> keys_;
};

}  // namespace

std::expected<nlohmann::json, JsonError> ParseStrictJson(std::string_view text, int max_depth) {
  using json = nlohmann::json;
  json root;
  StrictSax sax(root, max_depth);
  try {
    json::sax_parse(text, &sax);
    return root;
  } catch (const Stop& s) {
    return std::unexpected(s.error);
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for numbers such as 1e400. The text starts
    // "[json.exception.parse_error.101] ", which says nothing to a user.
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0) {
      if (auto close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
    }
    return std::unexpected(JsonError{JsonProblem::kSyntax, what});
  }
}

}  // namespace bk
