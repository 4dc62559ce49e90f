#include "tasks/common/rank_states.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::tasks {
namespace {

// r of a name "rank<r>/...", or -1 for a name without that prefix (a recipe
// tensor may itself be called "ranking").
int rank_of(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "rank")) return -1;
  const size_t slash = name.find('/');
  if (slash == absl::string_view::npos || slash == 0) return -1;
  const absl::string_view digits = name.substr(0, slash);
  int rank = -1;
  const bool all_digits = std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c) != 0; });
  if (!all_digits || !absl::SimpleAtoi(digits, &rank)) return -1;
  return rank;
}

}  // namespace

absl::Status check_resumable(const RunShape& saved, const RunShape& now) {
  const auto same = [](absl::string_view field, auto then, auto here) {
    if (then == here) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("the checkpoint was written with ", field, " ", then,
                                                      " and this run has ", here, "; a run resumes with the ", field,
                                                      " it was written with"));
  };
  RETURN_IF_ERROR(same("world size", saved.world_size(), now.world_size()));
  RETURN_IF_ERROR(same("batch_size", saved.batch_size(), now.batch_size()));
  RETURN_IF_ERROR(
      same("gradient_accumulation_steps", saved.gradient_accumulation_steps(), now.gradient_accumulation_steps()));
  RETURN_IF_ERROR(same("seed", saved.seed(), now.seed()));
  if (saved.train_examples() != 0 && saved.train_examples() != now.train_examples()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the checkpoint was written by a run on ", saved.train_examples(), " training examples and this run has ",
        now.train_examples(), ": another training set, whose epochs the checkpoint's position does not count; a run ",
        "resumes on the data it was written with"));
  }
  return absl::OkStatus();
}

absl::StatusOr<nn::NamedTensors> gather_ranks_state(collectives::Communicator* comm, const nn::NamedTensors& mine) {
  const int world = comm != nullptr ? comm->world_size() : 1;
  nn::NamedTensors all;
  for (const auto& entry : mine) {
    // Not a structured binding: clang before 16 cannot capture one.
    const std::string& name = entry.first;
    const Tensor& tensor = entry.second;
    ASSIGN_OR_RETURN(const Tensor flat, capture([&] { return reshape(contiguous(tensor), {-1}); }));
    Tensor gathered = flat;
    if (world > 1) {
      ASSIGN_OR_RETURN(gathered, capture([&] { return empty({world * flat.numel()}, {flat.dtype(), flat.device()}); }));
      RETURN_IF_ERROR(comm->allgather(gathered, flat).synchronize());
    }
    RETURN_IF_ERROR(capture([&] {
      for (int r = 0; r < world; ++r) {
        all.emplace_back(absl::StrCat("rank", r, "/", name),
                         reshape(gathered.slice(0, r * flat.numel(), (r + 1) * flat.numel()), tensor.shape()));
      }
    }));
  }
  return all;
}

absl::StatusOr<nn::NamedTensors> ranks_part(const nn::NamedTensors& saved, int rank, int world_size) {
  if (saved.empty()) return saved;
  std::map<int, int64_t> per_rank;  // tensors saved per rank
  int64_t unprefixed = 0;
  for (const auto& [name, tensor] : saved) {
    const int r = rank_of(name);
    if (r < 0) {
      ++unprefixed;
    } else {
      ++per_rank[r];
    }
  }
  if (unprefixed > 0 && !per_rank.empty()) {
    return absl::DataLossError(
        "the checkpoint's recipe state mixes names with a rank<r>/ prefix and names without one");
  }
  if (unprefixed == 0) {
    const int64_t each = per_rank.begin()->second;
    const bool whole = per_rank.rbegin()->first + 1 == static_cast<int>(per_rank.size()) &&
                       std::all_of(per_rank.begin(), per_rank.end(), [&](const auto& r) { return r.second == each; });
    if (!whole) {
      return absl::DataLossError(absl::StrCat("the checkpoint's recipe state is not ", per_rank.size(),
                                              " ranks' parts of equal size, rank<r>/ from rank0/ on"));
    }
  }
  const int64_t ranks_saved = unprefixed > 0 ? 1 : static_cast<int64_t>(per_rank.size());
  if (ranks_saved != world_size) {
    return absl::FailedPreconditionError(absl::StrCat("the checkpoint holds the recipe state of ", ranks_saved,
                                                      " ranks (", static_cast<int64_t>(saved.size()) / ranks_saved,
                                                      " tensors each), this run has ", world_size,
                                                      ": resume with the number of ranks that saved it"));
  }
  if (unprefixed > 0) return saved;
  const std::string prefix = absl::StrCat("rank", rank, "/");
  nn::NamedTensors mine;
  for (const auto& [name, tensor] : saved) {
    if (absl::StartsWith(name, prefix)) mine.emplace_back(name.substr(prefix.size()), tensor);
  }
  return mine;
}

}  // namespace ts::tasks
