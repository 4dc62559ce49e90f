#include "tasks/common/rank_flags.h"

#include <map>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "tasks/common/exit_code.h"

namespace ts::tasks {
namespace {

using FlagValues = std::map<std::string, std::string>;

// "name\tvalue\n" lines, in name order.
std::string encode(const FlagValues& flags) {
  std::string text;
  for (const auto& [name, value] : flags) absl::StrAppend(&text, name, "\t", value, "\n");
  return text;
}

FlagValues decode(absl::string_view text) {
  FlagValues flags;
  for (const absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::pair<std::string, std::string> entry = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    flags.insert(entry);
  }
  return flags;
}

}  // namespace

absl::Status check_ranks_share_flags(collectives::Communicator& comm, const Device& device,
                                     absl::Span<const absl::string_view> per_rank) {
  if (comm.world_size() == 1) return absl::OkStatus();
  FlagValues mine;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::c_find(per_rank, name) != per_rank.end()) continue;
    // A value holds no newline or tab that a flag on a command line would
    // need; one that did would only make its rank differ.
    mine.emplace(std::string(name), flag->CurrentValue());
  }
  ASSIGN_OR_RETURN(const std::string theirs, collectives::broadcast_bytes(comm, device, encode(mine)));
  const FlagValues rank0 = decode(theirs);
  std::vector<std::string> differences;
  for (const auto& [name, value] : mine) {
    const auto it = rank0.find(name);
    if (it == rank0.end() || it->second != value) {
      differences.push_back(absl::StrCat("--", name, "=", value, " here, ",
                                         it == rank0.end() ? "none" : absl::StrCat("=", it->second), " on rank 0"));
    }
  }
  ASSIGN_OR_RETURN(const std::vector<double> all,
                   collectives::allgather_values(comm, device, {differences.empty() ? 0.0 : 1.0}));
  std::vector<int> apart;
  for (int r = 0; r < comm.world_size(); ++r) {
    if (all[r] != 0) apart.push_back(r);
  }
  if (apart.empty()) return absl::OkStatus();
  // Every rank ends here, each with its line (see exit_code.h).
  if (!differences.empty()) {
    return shared_by_all_ranks(absl::InvalidArgumentError(
        absl::StrCat("rank ", comm.rank(), " was given other flags than rank 0 (", absl::StrJoin(differences, "; "),
                     "): every rank must be given the same")));
  }
  return shared_by_all_ranks(absl::InvalidArgumentError(
      absl::StrCat("rank(s) ", absl::StrJoin(apart, ", "),
                   " were given other flags than rank 0 (each of them names the flags): every rank must be given "
                   "the same")));
}

}  // namespace ts::tasks
