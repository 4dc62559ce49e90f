// A JSON value, a writer that always emits valid JSON (escaped strings,
// replacement of invalid UTF-8, null for NaN/Inf) and a strict RFC 8259 parser.
// Task reports and benchmark results are written with it; there is no JSON
// library offline.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts {

class Json {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // keeps insertion order

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Json(T i) : v_(static_cast<int64_t>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(absl::string_view s) : v_(std::string(s)) {}
  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }
  // A number, or null for NaN and the infinities, which JSON cannot hold
  // (a rate or percentile without data).
  static Json finite_or_null(double d) { return std::isfinite(d) ? Json(d) : Json(); }
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_string() const { return type() == Type::kString; }
  bool is_object() const { return type() == Type::kObject; }
  bool is_array() const { return type() == Type::kArray; }

  // Accessors abort on the wrong type: callers check type() first.
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_double() const;  // either number type
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Object member by key, inserted as null when missing (a null value becomes
  // an empty object first).
  Json& operator[](absl::string_view key);
  // Object member by key, or nullptr (also for non-objects).
  const Json* find(absl::string_view key) const;
  // Appends to an array (a null value becomes an empty array first).
  void push_back(Json value);

  // indent < 0: one line; otherwise pretty-printed with that many spaces.
  std::string dump(int indent = 2) const;

  friend bool operator==(const Json&, const Json&) = default;

 private:
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

// Parses one JSON document (surrounding whitespace allowed). Errors give the
// line and column. Integers that fit int64 parse as kInt, other numbers
// (integers past int64's range too, as the nearest double) as kDouble; a
// repeated key keeps its last value.
absl::StatusOr<Json> parse_json(absl::string_view text);

}  // namespace ts
