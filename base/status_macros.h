// Propagation macros for absl::Status / absl::StatusOr (Status-land: files,
// configs, readers, checkpoints, collectives), which this Abseil
// version does not ship. The op surface throws instead (error.h).
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TS_CONCAT_INNER_(a, b) a##b
#define TS_CONCAT_(a, b) TS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::absl::Status ts_status_ = (expr);      \
    if (!ts_status_.ok()) return ts_status_; \
  } while (false)

// `ASSIGN_OR_RETURN(auto x, f());` binds the value of a StatusOr or returns its
// error from the enclosing function.
#define ASSIGN_OR_RETURN(lhs, expr) TS_ASSIGN_OR_RETURN_IMPL_(TS_CONCAT_(ts_statusor_, __LINE__), lhs, expr)

#define TS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)     \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()
