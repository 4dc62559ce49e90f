// The error model. Inside the op surface (tensor, autograd, nn, optim) a
// misuse - a shape, dtype or device mismatch, an index out of range, a failed
// device call - throws ts::Error, whose message names the op and the operands
// (PyTorch's TORCH_CHECK), so that model code reads like the math:
//   Tensor y = relu(matmul(x, w) + b);
// absl::Status stays where failure is an expected outcome (files, configs,
// data readers, checkpoints, collectives, rendezvous, flags). Each boundary
// converts once: capture() turns what the op surface throws into a Status,
// throw_if_error()/value_or_throw() turn a Status into an Error.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ts {

class Error : public std::exception {
 public:
  // `code` says what kind of failure it is (kInvalidArgument for a misuse,
  // kOutOfRange for an index, kResourceExhausted for out of memory, ...).
  Error(absl::StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  // From a failed Status, keeping its code and message.
  explicit Error(const absl::Status& status) : Error(status.code(), std::string(status.message())) {}

  absl::StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }
  absl::Status status() const { return absl::Status(code_, message_); }

 private:
  absl::StatusCode code_;
  std::string message_;
};

// Throws Error(code, StrCat(parts...)).
template <typename... Parts>
[[noreturn]] void throw_error(absl::StatusCode code, const Parts&... parts) {
  throw Error(code, absl::StrCat(parts...));
}

// Status-land into the op surface: throws a failed status as an Error.
inline void throw_if_error(const absl::Status& status) {
  if (!status.ok()) [[unlikely]]
    throw Error(status);
}
template <typename T>
T value_or_throw(absl::StatusOr<T> value) {
  throw_if_error(value.status());
  return *std::move(value);
}

namespace error_internal {
template <typename T>
struct IsStatusOr : std::false_type {};
template <typename T>
struct IsStatusOr<absl::StatusOr<T>> : std::true_type {};

// The Status-land type of f's result: void and Status give Status, T and
// StatusOr<T> give StatusOr<T>.
template <typename R>
using Captured = std::conditional_t<std::is_void_v<R> || std::is_same_v<R, absl::Status>, absl::Status,
                                    std::conditional_t<IsStatusOr<R>::value, R, absl::StatusOr<R>>>;
}  // namespace error_internal

// The op surface into Status-land: runs f() and returns its result, or the
// Error it threw as a failed Status. Host out-of-memory becomes
// kResourceExhausted; any other exception (a bug, or user code throwing
// something of its own) kInternal with its text.
template <typename F>
auto capture(F&& f) -> error_internal::Captured<std::invoke_result_t<F>> {
  using R = std::invoke_result_t<F>;
  try {
    if constexpr (std::is_void_v<R>) {
      std::forward<F>(f)();
      return absl::OkStatus();
    } else {
      return std::forward<F>(f)();
    }
  } catch (const Error& e) {
    return e.status();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of host memory");
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  } catch (...) {
    return absl::InternalError("an exception that is not a std::exception");
  }
}

}  // namespace ts

// Throws ts::Error(kInvalidArgument, StrCat(...)) unless `cond` holds:
//   TS_CHECK(a.dim() == 2, "matmul: ", a.describe(), " is not a matrix");
#define TS_CHECK(cond, ...) TS_CHECK_CODE(::absl::StatusCode::kInvalidArgument, cond, __VA_ARGS__)
// The same for an index or position out of range (kOutOfRange).
#define TS_CHECK_INDEX(cond, ...) TS_CHECK_CODE(::absl::StatusCode::kOutOfRange, cond, __VA_ARGS__)
#define TS_CHECK_CODE(code, cond, ...)      \
  do {                                      \
    if (!(cond)) [[unlikely]] {             \
      ::ts::throw_error(code, __VA_ARGS__); \
    }                                       \
  } while (false)
