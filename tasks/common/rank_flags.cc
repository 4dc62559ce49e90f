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
#include "tasks/common/rank_vote.h"

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
    // No command line needs a newline or tab in a value; one that had them
    // would read as a difference, never hide one.
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
  return vote_on_differences(comm, device, absl::StrJoin(differences, "; "), "flags");
}

}  // namespace ts::tasks
