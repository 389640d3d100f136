#include "core/json.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "core/status.h"

namespace weft {
namespace {

class JsonParser {
 public:
  JsonParser(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  Json ParseDocument() {
    Json v = Value(0);
    SkipSpace();
    if (pos_ != s_.size()) Fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void Fail(std::string_view why) const {
    throw Error(errors::InvalidArgument("{}: bad JSON at offset {}: {}", what_, pos_, why));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void Expect(char c) {
    SkipSpace();
    if (pos_ >= s_.size()) Fail(fmt::format("expected '{}' but the text ended", c));
    if (s_[pos_] != c) Fail(fmt::format("expected '{}' but found '{}'", c, s_[pos_]));
    ++pos_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Json Value(int depth) {
    if (depth > 32) Fail("nested more than 32 levels deep");
    SkipSpace();
    if (pos_ >= s_.size()) Fail("expected a value but the text ended");
    Json v;
    v.offset = pos_;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::Kind::kObject;
      ++pos_;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      for (;;) {
        SkipSpace();
        if (pos_ >= s_.size() || s_[pos_] != '"') Fail("expected a member name in double quotes");
        const size_t name_at = pos_;
        std::string name = String();
        for (const auto& [k, unused] : v.object) {
          if (k == name) {
            pos_ = name_at;
            Fail(fmt::format("member \"{}\" appears twice", name));
          }
        }
        Expect(':');
        Json member = Value(depth + 1);
        v.object.emplace_back(std::move(name), std::move(member));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        Expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::kArray;
      ++pos_;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return v;
      }
      for (;;) {
        v.array.push_back(Value(depth + 1));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        Expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::kString;
      v.str = String();
      return v;
    }
    if (Literal("true") || Literal("false")) {
      v.kind = Json::Kind::kBool;
      v.boolean = c == 't';
      return v;
    }
    if (Literal("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t start = pos_;
      if (s_[pos_] == '-') ++pos_;
      bool integer = true;
      while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                  s_[pos_] == 'e' || s_[pos_] == 'E' || s_[pos_] == '+' || s_[pos_] == '-')) {
        if (!std::isdigit(static_cast<unsigned char>(s_[pos_]))) integer = false;
        ++pos_;
      }
      const std::string num(s_.substr(start, pos_ - start));
      char* end = nullptr;
      v.number = std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size() || num == "-") {
        pos_ = start;
        Fail(fmt::format("'{}' is not a number", num));
      }
      v.kind = Json::Kind::kNumber;
      v.is_integer = integer;
      return v;
    }
    Fail(fmt::format("unexpected character '{}'", c));
  }

  std::string String() {
    ++pos_;  // the opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) Fail("a string is not closed");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) Fail("a string is not closed");
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) Fail("a \\u escape needs 4 hex digits");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = s_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= h - '0';
            else if (h >= 'a' && h <= 'f') code |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F') code |= h - 'A' + 10;
            else Fail("a \\u escape needs 4 hex digits");
          }
          if (code >= 0x80) Fail("only ASCII \\u escapes are supported");
          out += static_cast<char>(code);
          break;
        }
        default: --pos_; Fail(fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  std::string_view s_;
  std::string_view what_;
  size_t pos_ = 0;
};

}  // namespace

Json ParseJson(std::string_view text, std::string_view what) { return JsonParser(text, what).ParseDocument(); }

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

void WriteString(const std::string& s, std::string& out) {
  out += '"';
  out += JsonEscape(s);
  out += '"';
}

void WriteValue(const Json& v, std::string& out) {
  switch (v.kind) {
    case Json::Kind::kNull: out += "null"; break;
    case Json::Kind::kBool: out += v.boolean ? "true" : "false"; break;
    case Json::Kind::kNumber:
      if (v.is_integer && std::abs(v.number) < 9.0e15) {
        out += fmt::format("{}", static_cast<int64_t>(v.number));
      } else {
        out += fmt::format("{}", v.number);
      }
      break;
    case Json::Kind::kString: WriteString(v.str, out); break;
    case Json::Kind::kArray:
      out += '[';
      for (size_t i = 0; i < v.array.size(); ++i) {
        if (i > 0) out += ", ";
        WriteValue(v.array[i], out);
      }
      out += ']';
      break;
    case Json::Kind::kObject:
      out += '{';
      for (size_t i = 0; i < v.object.size(); ++i) {
        if (i > 0) out += ", ";
        WriteString(v.object[i].first, out);
        out += ": ";
        WriteValue(v.object[i].second, out);
      }
      out += '}';
      break;
  }
}

}  // namespace

std::string WriteJson(const Json& v) {
  std::string out;
  WriteValue(v, out);
  return out;
}

}  // namespace weft
