// A strict JSON reader: objects (no duplicate members), arrays, strings (with the usual escapes,
// \u only below 0x80), numbers, true/false/null. Errors are InvalidArgument naming `what`, the byte
// offset and what was expected. Used for TF_CONFIG (distributed/cluster_spec.h) and trace dumps
// (runtime/trace_ring.h).
//
//   Json doc = ParseJson(R"({"a": [1, 2]})", "my file");
//   doc.Member("a")->array[1].number;   // 2
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  bool is_integer = false;
  std::string str;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;  // in document order
  size_t offset = 0;                                   // where the value starts (for errors)

  const char* KindName() const {
    static const char* names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
    return names[static_cast<int>(kind)];
  }
  // The member named `name` of an object; null when absent or not an object.
  const Json* Member(std::string_view name) const {
    for (const auto& [k, v] : object) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

// The whole text must be one JSON value (surrounding white space allowed); nesting is limited to 32.
Json ParseJson(std::string_view text, std::string_view what);
// `s` as the contents of a JSON string (quotes, backslashes and control characters escaped).
std::string JsonEscape(std::string_view s);
// `v` as compact JSON text on one line (members in their order; integers without a fraction,
// other numbers in their shortest exact form).
std::string WriteJson(const Json& v);

}  // namespace weft
