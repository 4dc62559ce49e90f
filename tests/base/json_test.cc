// The JSON writer always emits valid JSON and the parser reads it back; parse
// errors give the line and column.
#include "base/json.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using ::ts::testing::expect_error;

TEST(JsonTest, EscapesStringsAndReplacesInvalidUtf8) {
  const std::string raw = std::string("q\"b\\n\n\t\x01\x1f ") + "\xC3\xA9" + "\xF0\x9F\x98\x80" + "\xFF" + "\xC0\xAF";
  EXPECT_EQ(Json(raw).dump(), "\"q\\\"b\\\\n\\n\\t\\u0001\\u001f \xC3\xA9\xF0\x9F\x98\x80\\ufffd\\ufffd\\ufffd\"");
}

// Three-byte sequences: the euro sign passes; an overlong form and an encoded
// surrogate are replaced. \u escapes of three-byte code points, hex digits
// in either case, come back as UTF-8.
TEST(JsonTest, ThreeByteUtf8BothWays) {
  const std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(Json(euro + "\xE0\x80\xAF" + "\xED\xA0\x80").dump(),
            "\"" + euro + "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
  ASSERT_OK_AND_ASSIGN(const Json parsed, parse_json(R"(["\u20AC", "\u20ac\u0800\uFFFF"])"));
  EXPECT_EQ(parsed.as_array()[0].as_string(), euro);
  EXPECT_EQ(parsed.as_array()[1].as_string(), euro + "\xE0\xA0\x80" + "\xEF\xBF\xBF");
}

TEST(JsonTest, NumbersAndSpecialValues) {
  EXPECT_EQ(Json(42).dump(), "42");
  EXPECT_EQ(Json(int64_t{-9007199254740993}).dump(), "-9007199254740993");
  EXPECT_EQ(Json(2.0).dump(), "2.0");
  EXPECT_EQ(Json(0.1).dump(), "0.1");
  EXPECT_EQ(Json(std::nan("")).dump(), "null");
  EXPECT_EQ(Json(std::numeric_limits<double>::infinity()).dump(), "null");
  EXPECT_EQ(Json(true).dump(), "true");
  EXPECT_EQ(Json().dump(), "null");
}

TEST(JsonTest, PrettyAndCompactLayouts) {
  Json j = Json::object();
  j["b"] = 1;
  j["a"].push_back("x");
  j["a"].push_back(Json::object());
  j["e"] = Json::array();
  EXPECT_EQ(j.dump(-1), "{\"b\":1,\"a\":[\"x\",{}],\"e\":[]}");
  EXPECT_EQ(j.dump(2), "{\n  \"b\": 1,\n  \"a\": [\n    \"x\",\n    {}\n  ],\n  \"e\": []\n}");
}

TEST(JsonTest, ParsesEveryKind) {
  ASSERT_OK_AND_ASSIGN(Json j, parse_json(R"( {"a": [1, -2.5e3, true, false, null], "s": "\u00e9\ud83d\ude00\/\n",
      "big": 123456789012345678901234, "a": 7} )"));
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.find("a")->as_int(), 7);  // a repeated key keeps its last value
  EXPECT_EQ(j.find("s")->as_string(), "\xC3\xA9\xF0\x9F\x98\x80/\n");
  EXPECT_EQ(j.find("big")->type(), Json::Type::kDouble);
  EXPECT_DOUBLE_EQ(j.find("big")->as_double(), 1.2345678901234568e23);
  ASSERT_OK_AND_ASSIGN(Json a, parse_json("[1, -2.5e3, true, false, null]"));
  EXPECT_EQ(a.as_array().size(), 5u);
  EXPECT_EQ(a.as_array()[1].as_double(), -2500);
  EXPECT_TRUE(a.as_array()[4].is_null());
}

// int64's ends stay exact ints; one past either end is a double (the value
// Python's float() and JavaScript give), never a wrapped int.
TEST(JsonTest, IntegersPastInt64AreDoubles) {
  ASSERT_OK_AND_ASSIGN(const Json j, parse_json("[9223372036854775807, -9223372036854775808, 9223372036854775808, "
                                                "-9223372036854775809, 18446744073709551615, -0]"));
  const Json::Array& a = j.as_array();
  ASSERT_EQ(a[0].type(), Json::Type::kInt);
  EXPECT_EQ(a[0].as_int(), std::numeric_limits<int64_t>::max());
  ASSERT_EQ(a[1].type(), Json::Type::kInt);
  EXPECT_EQ(a[1].as_int(), std::numeric_limits<int64_t>::min());
  ASSERT_EQ(a[2].type(), Json::Type::kDouble);
  EXPECT_EQ(a[2].as_double(), 9223372036854775808.0);
  ASSERT_EQ(a[3].type(), Json::Type::kDouble);
  EXPECT_EQ(a[3].as_double(), -9223372036854775808.0);  // the nearest double
  ASSERT_EQ(a[4].type(), Json::Type::kDouble);
  EXPECT_EQ(a[4].as_double(), 18446744073709551616.0);
  ASSERT_EQ(a[5].type(), Json::Type::kInt);
  EXPECT_EQ(a[5].as_int(), 0);
  // Written back, the doubles stay doubles.
  ASSERT_OK_AND_ASSIGN(const Json back, parse_json(j.dump(-1)));
  EXPECT_EQ(back, j) << j.dump(-1);
}

TEST(JsonTest, RoundTripsRandomDocuments) {
  const uint64_t seed = ts::testing::test_seed();
  SCOPED_TRACE("TS_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(-300, 300);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int trial = 0; trial < 200; ++trial) {
    Json j = Json::object();
    const double d = std::pow(10.0, mag(rng)) * (trial % 2 ? -1 : 1);
    j["d"] = d;
    j["i"] = static_cast<int64_t>(rng());
    std::string s;
    for (int k = 0; k < 16; ++k) s += static_cast<char>(byte(rng) % 128);  // valid UTF-8, controls included
    j["s"] = s;
    ASSERT_OK_AND_ASSIGN(Json back, parse_json(j.dump(trial % 2 ? 2 : -1)));
    EXPECT_EQ(back, j) << j.dump(-1);
  }
}

TEST(JsonTest, ParseErrorsNameLineAndColumn) {
  expect_error(parse_json("{\n  \"a\": 1,\n  \"b\" 2\n}").status(), absl::StatusCode::kInvalidArgument,
               {"line 3 column 7", "expected ':'"});
  expect_error(parse_json("[1, 2").status(), absl::StatusCode::kInvalidArgument, {"line 1 column 6"});
  expect_error(parse_json("\"\\ud800\"").status(), absl::StatusCode::kInvalidArgument, {"surrogate"});
  expect_error(parse_json("01").status(), absl::StatusCode::kInvalidArgument, {"after the JSON value"});
  expect_error(parse_json("\"a\tb\"").status(), absl::StatusCode::kInvalidArgument, {"control character"});
  expect_error(parse_json("1e999").status(), absl::StatusCode::kInvalidArgument, {"out of range"});
  // Underflow is no error: 0, as Python reads it.
  ASSERT_OK_AND_ASSIGN(const Json tiny, parse_json("[1e-400, -1e-400]"));
  EXPECT_EQ(tiny.as_array()[0].as_double(), 0.0);
  EXPECT_TRUE(std::signbit(tiny.as_array()[1].as_double()));
  expect_error(parse_json(std::string(600, '[')).status(), absl::StatusCode::kInvalidArgument, {"nesting"});
  expect_error(parse_json("").status(), absl::StatusCode::kInvalidArgument, {"end of input"});
  expect_error(parse_json(R"("\u12G4")").status(), absl::StatusCode::kInvalidArgument, {"bad hex digit"});
  expect_error(parse_json(R"("\q")").status(), absl::StatusCode::kInvalidArgument, {"bad escape '\\q'"});
  expect_error(parse_json(R"({"a": 1 "b": 2})").status(), absl::StatusCode::kInvalidArgument,
               {"line 1 column 9", "expected ',' or '}'"});
  expect_error(parse_json("-x").status(), absl::StatusCode::kInvalidArgument, {"expected a digit"});
}

}  // namespace
}  // namespace ts
