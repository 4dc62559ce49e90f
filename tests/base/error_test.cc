// The error model: ts::Error carries a code and a message; the check macros
// throw with their code and the joined parts; capture() turns whatever a
// call throws into a Status of the right code, and throw_if_error() /
// value_or_throw() turn a failed Status back into an Error.
#include "base/error.h"

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;

TEST(ErrorTest, CarriesCodeAndMessage) {
  const Error e(absl::StatusCode::kOutOfRange, "index 7 is outside [0, 3)");
  EXPECT_EQ(e.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(e.message(), "index 7 is outside [0, 3)");
  EXPECT_STREQ(e.what(), "index 7 is outside [0, 3)");
  EXPECT_EQ(e.status(), absl::OutOfRangeError("index 7 is outside [0, 3)"));
  const Error from_status(absl::NotFoundError("no such file"));
  EXPECT_EQ(from_status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(from_status.message(), "no such file");
}

TEST(ErrorTest, ThrowErrorJoinsItsParts) {
  expect_throws(absl::StatusCode::kUnimplemented, {"conv3d: f16 on cpu (2 of 3)"},
                [] { throw_error(absl::StatusCode::kUnimplemented, "conv3d: ", "f16 on cpu (", 2, " of ", 3, ")"); });
}

TEST(ErrorTest, ChecksThrowWithTheirCodeAndMessage) {
  const int rows = 2;
  expect_throws(absl::StatusCode::kInvalidArgument, {"matmul: [2, 3] is not [3, k]"},
                [&] { TS_CHECK(rows == 3, "matmul: [", rows, ", 3] is not [3, k]"); });
  expect_throws(absl::StatusCode::kOutOfRange, {"select: index 5 of dim 0 (size 2)"},
                [&] { TS_CHECK_INDEX(5 < rows, "select: index ", 5, " of dim 0 (size ", rows, ")"); });
  expect_throws(absl::StatusCode::kResourceExhausted, {"out of device memory"},
                [] { TS_CHECK_CODE(absl::StatusCode::kResourceExhausted, false, "out of device memory"); });
  TS_CHECK(rows == 2, "not thrown");
  TS_CHECK_INDEX(1 < rows, "not thrown");
}

TEST(ErrorTest, ChecksBuildTheMessageOnlyWhenTheyFail) {
  int built = 0;
  const auto part = [&] {
    ++built;
    return std::string("expensive");
  };
  TS_CHECK(true, part());
  TS_CHECK_INDEX(true, part());
  EXPECT_EQ(built, 0);
  EXPECT_THROW(TS_CHECK(false, part()), Error);
  EXPECT_EQ(built, 1);
}

TEST(ErrorTest, ThrowIfErrorAndValueOrThrow) {
  throw_if_error(absl::OkStatus());
  expect_throws(absl::StatusCode::kDataLoss, {"checksum mismatch"},
                [] { throw_if_error(absl::DataLossError("checksum mismatch")); });
  EXPECT_EQ(value_or_throw(absl::StatusOr<int>(7)), 7);
  const std::unique_ptr<int> moved = value_or_throw(absl::StatusOr<std::unique_ptr<int>>(std::make_unique<int>(3)));
  EXPECT_EQ(*moved, 3);
  expect_throws(absl::StatusCode::kNotFound, {"missing.ckpt"},
                [] { value_or_throw(absl::StatusOr<int>(absl::NotFoundError("missing.ckpt"))); });
}

TEST(ErrorTest, CaptureResultTypes) {
  static_assert(std::is_same_v<decltype(capture([] {})), absl::Status>);
  static_assert(std::is_same_v<decltype(capture([] { return absl::OkStatus(); })), absl::Status>);
  static_assert(std::is_same_v<decltype(capture([] { return 1; })), absl::StatusOr<int>>);
  static_assert(std::is_same_v<decltype(capture([] { return absl::StatusOr<int>(1); })), absl::StatusOr<int>>);
}

TEST(ErrorTest, CaptureReturnsResults) {
  int calls = 0;
  EXPECT_OK(capture([&] { ++calls; }));
  EXPECT_EQ(calls, 1);
  ASSERT_OK_AND_ASSIGN(const int value, capture([] { return 42; }));
  EXPECT_EQ(value, 42);
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<int> owned, capture([] { return std::make_unique<int>(5); }));
  EXPECT_EQ(*owned, 5);
  // A Status or StatusOr result passes through as is, failed or not.
  EXPECT_OK(capture([] { return absl::OkStatus(); }));
  expect_error(capture([] { return absl::UnavailableError("rank 3 left"); }), absl::StatusCode::kUnavailable,
               {"rank 3 left"});
  ASSERT_OK_AND_ASSIGN(const int wrapped, capture([] { return absl::StatusOr<int>(9); }));
  EXPECT_EQ(wrapped, 9);
  expect_error(capture([] { return absl::StatusOr<int>(absl::AbortedError("stopped")); }).status(),
               absl::StatusCode::kAborted, {"stopped"});
}

TEST(ErrorTest, CaptureTurnsAThrownErrorIntoItsStatus) {
  expect_error(capture([] { TS_CHECK(false, "add: f32[2] and f32[3] do not broadcast"); }),
               absl::StatusCode::kInvalidArgument, {"add: f32[2] and f32[3] do not broadcast"});
  expect_error(capture([]() -> int {
                 TS_CHECK_INDEX(false, "index 4");
                 return 0;
               }).status(),
               absl::StatusCode::kOutOfRange, {"index 4"});
  expect_error(capture([]() -> absl::Status { throw_error(absl::StatusCode::kDataLoss, "torn"); }),
               absl::StatusCode::kDataLoss, {"torn"});
  expect_error(capture([]() -> absl::StatusOr<int> { throw_error(absl::StatusCode::kNotFound, "gone"); }).status(),
               absl::StatusCode::kNotFound, {"gone"});
}

TEST(ErrorTest, CaptureTurnsOtherExceptionsIntoStatuses) {
  expect_error(capture([] { throw std::bad_alloc(); }), absl::StatusCode::kResourceExhausted, {"out of host memory"});
  expect_error(capture([]() -> int { throw std::runtime_error("recipe: no labels"); }).status(),
               absl::StatusCode::kInternal, {"recipe: no labels"});
  expect_error(capture([] { throw 42; }), absl::StatusCode::kInternal, {"not a std::exception"});
}

}  // namespace
}  // namespace ts
