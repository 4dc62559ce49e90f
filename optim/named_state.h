// Optimizer and schedule state as named tensors, the form a checkpoint stores
// (nn/checkpoint.h writes any list of named tensors), and the checks that make
// loading one strict: every expected entry present, with the expected shape
// and dtype, and nothing left over. Errors name the entry. Loading is where
// failure is an expected outcome (the state comes from a file), so the reader
// returns absl::Status rather than throwing like the rest of optim/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::optim {

// Scalar entries (counters, rates) are 0-dim CPU tensors (ts::scalar_tensor).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Reads a NamedTensors in any order; `what` ("Sgd.load_state") prefixes every
// error. take_* remove the entries they read, so finish() can report entries
// nobody asked for (a state from another model or optimizer).
class StateReader {
 public:
  // Fails on duplicate names.
  static absl::StatusOr<StateReader> create(const NamedTensors& state, std::string what);

  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  // The entry, which must have exactly `shape` and `dtype`.
  absl::StatusOr<Tensor> take_tensor(const std::string& name, const Shape& shape, DType dtype);
  // A one-element entry of any numeric dtype, as a double / an integer.
  absl::StatusOr<double> take_f64(const std::string& name);
  absl::StatusOr<int64_t> take_i64(const std::string& name);
  // OK when every entry has been taken; else names the first few left.
  absl::Status finish() const;

 private:
  StateReader(std::map<std::string, Tensor> entries, std::string what)
      : entries_(std::move(entries)), what_(std::move(what)) {}
  absl::StatusOr<Tensor> take(const std::string& name);

  std::map<std::string, Tensor> entries_;
  std::string what_;
};

}  // namespace ts::optim
