#include "base/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace ts {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not one (overlong
// forms, surrogates and code points past U+10FFFF are invalid).
size_t utf8_sequence_length(absl::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void write_string(absl::string_view s, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\\ufffd";  // a report must stay valid JSON whatever a name holds
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  out += '"';
}

void write_double(double d, std::string& out) {
  if (!std::isfinite(d)) {
    out += "null";  // JSON has no NaN or infinity
    return;
  }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round trip
  std::string_view text(buf, end - buf);
  out += text;
  // Keep doubles recognizable as such when read back ("2" would parse as int).
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void newline(int indent, int depth, std::string& out) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent) * depth, ' ');
}

void write(const Json& j, int indent, int depth, std::string& out) {
  switch (j.type()) {
    case Json::Type::kNull:
      out += "null";
      return;
    case Json::Type::kBool:
      out += j.as_bool() ? "true" : "false";
      return;
    case Json::Type::kInt:
      out += std::to_string(j.as_int());
      return;
    case Json::Type::kDouble:
      write_double(j.as_double(), out);
      return;
    case Json::Type::kString:
      write_string(j.as_string(), out);
      return;
    case Json::Type::kArray: {
      const auto& a = j.as_array();
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += ',';
        newline(indent, depth + 1, out);
        write(a[i], indent, depth + 1, out);
      }
      if (!a.empty()) newline(indent, depth, out);
      out += ']';
      return;
    }
    case Json::Type::kObject: {
      const auto& o = j.as_object();
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ',';
        newline(indent, depth + 1, out);
        write_string(o[i].first, out);
        out += indent < 0 ? ":" : ": ";
        write(o[i].second, indent, depth + 1, out);
      }
      if (!o.empty()) newline(indent, depth, out);
      out += '}';
      return;
    }
  }
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : s_(text) {}

  absl::StatusOr<Json> document() {
    Json value;
    if (!parse_value(value, 0)) return error();
    skip_space();
    if (pos_ != s_.size()) {
      fail("unexpected text after the JSON value");
      return error();
    }
    return value;
  }

 private:
  static constexpr int kMaxDepth = 512;

  bool fail(std::string message) {
    if (message_.empty()) {
      message_ = std::move(message);
      error_pos_ = pos_;
    }
    return false;
  }

  absl::Status error() const {
    int line = 1, column = 1;
    for (size_t i = 0; i < error_pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("JSON parse error at line ", line, " column ", column, ": ", message_));
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(absl::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool parse_value(Json& out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 512");
    skip_space();
    if (pos_ >= s_.size()) return fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      std::string str;
      if (!parse_string(str)) return false;
      out = Json(std::move(str));
      return true;
    }
    if (consume("true")) return out = Json(true), true;
    if (consume("false")) return out = Json(false), true;
    if (consume("null")) return out = Json(), true;
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
    return fail(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  bool parse_object(Json& out, int depth) {
    ++pos_;  // '{'
    Json::Object members;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      out = Json(std::move(members));
      return true;
    }
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a string key");
      std::string key;
      if (!parse_string(key)) return false;
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      Json value;
      if (!parse_value(value, depth + 1)) return false;
      const auto same_key =
          std::find_if(members.begin(), members.end(), [&key](const auto& member) { return member.first == key; });
      if (same_key != members.end()) {
        same_key->second = std::move(value);
      } else {
        members.emplace_back(std::move(key), std::move(value));
      }
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        out = Json(std::move(members));
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool parse_array(Json& out, int depth) {
    ++pos_;  // '['
    Json::Array items;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      out = Json(std::move(items));
      return true;
    }
    while (true) {
      Json value;
      if (!parse_value(value, depth + 1)) return false;
      items.push_back(std::move(value));
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        out = Json(std::move(items));
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parse_hex4(uint32_t& value) {
    if (pos_ + 4 > s_.size()) return fail("truncated \\u escape");
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      value <<= 4;
      if (h >= '0' && h <= '9')
        value |= h - '0';
      else if (h >= 'a' && h <= 'f')
        value |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        value |= h - 'A' + 10;
      else
        return fail("bad hex digit in \\u escape");
    }
    return true;
  }

  static void append_utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parse_string(std::string& out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= s_.size()) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return fail("control character in string");
      if (c != '\\') {
        const size_t n = utf8_sequence_length(s_, pos_);
        if (n == 0) return fail("invalid UTF-8 in string");
        out.append(s_.data() + pos_, n);
        pos_ += n;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!parse_hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low;
            if (!consume("\\u") || !parse_hex4(low) || low < 0xDC00 || low > 0xDFFF) {
              return fail("high surrogate without a low surrogate in \\u escape");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(cp, out);
          break;
        }
        default:
          return fail(absl::StrCat("bad escape '\\", std::string(1, e), "'"));
      }
    }
  }

  bool parse_number(Json& out) {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    bool integral = true;
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return fail("expected a digit");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (!digits()) return fail("expected a digit after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("expected a digit in the exponent");
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    if (integral) {
      // An integer outside int64 (from_chars reports result_out_of_range,
      // never a wrapped value) falls through to a double, the nearest one, as
      // JavaScript and Python's float() read it: RFC 8259 sets no range, and
      // the accessors keep it safe, since as_double() takes either kind and
      // a caller that needs an exact int checks for kInt first, so it sees a
      // wrong type rather than a wrong number. An error instead would refuse
      // valid JSON (another tool's counter or hash) that we only pass along.
      int64_t i;
      const auto r = std::from_chars(first, last, i);
      if (r.ec == std::errc() && r.ptr == last) {
        out = Json(i);
        return true;
      }
    }
    double d;
    const auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars refuses underflow too; 1e-400 is valid JSON, 0 (or a
      // subnormal) as Python and strtod read it.
      const double v = std::strtod(std::string(first, last).c_str(), nullptr);
      if (!std::isfinite(v)) return fail("number out of range");
      out = Json(v);
      return true;
    }
    if (r.ec != std::errc() || r.ptr != last) return fail("bad number");
    out = Json(d);
    return true;
  }

  absl::string_view s_;
  size_t pos_ = 0;
  std::string message_;
  size_t error_pos_ = 0;
};

}  // namespace

double Json::as_double() const {
  if (type() == Type::kInt) return static_cast<double>(std::get<int64_t>(v_));
  return std::get<double>(v_);
}

Json& Json::operator[](absl::string_view key) {
  if (is_null()) v_ = Object{};
  auto& o = std::get<Object>(v_);
  for (auto& [k, v] : o) {
    if (k == key) return v;
  }
  o.emplace_back(std::string(key), Json());
  return o.back().second;
}

const Json* Json::find(absl::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : std::get<Object>(v_)) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Json::push_back(Json value) {
  if (is_null()) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(value));
}

std::string Json::dump(int indent) const {
  std::string out;
  write(*this, indent, 0, out);
  return out;
}

absl::StatusOr<Json> parse_json(absl::string_view text) { return Parser(text).document(); }

}  // namespace ts
