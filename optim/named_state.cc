#include "optim/named_state.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::optim {

absl::StatusOr<StateReader> StateReader::create(const NamedTensors& state, std::string what) {
  std::map<std::string, Tensor> entries;
  for (const auto& [name, tensor] : state) {
    if (!entries.emplace(name, tensor).second) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": entry \"", name, "\" appears twice"));
    }
  }
  return StateReader(std::move(entries), std::move(what));
}

absl::StatusOr<Tensor> StateReader::take(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(what_, ": missing entry \"", name, "\""));
  }
  Tensor t = std::move(it->second);
  entries_.erase(it);
  if (!t.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(what_, ": entry \"", name, "\" is an undefined tensor"));
  }
  return t;
}

absl::StatusOr<Tensor> StateReader::take_tensor(const std::string& name, const Shape& shape, DType dtype) {
  ASSIGN_OR_RETURN(Tensor t, take(name));
  if (t.shape() != shape || t.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(what_, ": entry \"", name, "\" is ", t.describe(), ", expected ",
                                                   dtype_name(dtype), shape_str(shape)));
  }
  return t;
}

absl::StatusOr<double> StateReader::take_f64(const std::string& name) {
  ASSIGN_OR_RETURN(Tensor t, take(name));
  if (t.numel() != 1 || t.dtype() == DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": entry \"", name, "\" is ", t.describe(), ", expected one number"));
  }
  return item<double>(t);
}

absl::StatusOr<int64_t> StateReader::take_i64(const std::string& name) {
  ASSIGN_OR_RETURN(Tensor t, take(name));
  if (t.numel() != 1 || !is_integral(t.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": entry \"", name, "\" is ", t.describe(), ", expected one integer"));
  }
  return item<int64_t>(t);
}

absl::Status StateReader::finish() const {
  if (entries_.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (const auto& [name, tensor] : entries_) {
    if (names.size() == 5) {
      names.push_back("...");
      break;
    }
    names.push_back(absl::StrCat("\"", name, "\""));
  }
  return absl::InvalidArgumentError(absl::StrCat(what_, ": unexpected entries ", absl::StrJoin(names, ", ")));
}

}  // namespace ts::optim
