#pragma once
// Writes compact JSON straight into a string, for replies too large to build
// as a tree first (a list of thousands of reservations costs more as
// nlohmann nodes than as text). Strings are escaped as nlohmann's dump()
// escapes them (ensure_ascii off): quote, backslash and control characters,
// with invalid UTF-8 replaced by U+FFFD, so either writer's output reads the
// same. The caller keeps the structure well formed: Key only inside an
// object, one value after each key.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // An already serialised JSON value, written as it is.
  JsonWriter& Raw(std::string_view json);

 private:
  JsonWriter& Open(char c);
  JsonWriter& Close(char c);
  // The comma before a value that is not its container's first.
  void BeforeValue();

  std::string& out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// Appends `s` as a JSON string literal, quotes included.
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace bk
