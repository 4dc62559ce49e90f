#include "tasks/common/config_diff.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tasks/common/exit_code.h"
#include "tensor/ops.h"

namespace ts::tasks {
namespace {

using google::protobuf::util::MessageDifferencer;

// Where a rank runs and reads, which may differ by rank (node-local paths,
// one device each).
constexpr absl::string_view kWhereFields[] = {"device",         "data_path",   "output_dir",
                                              "checkpoint_dir", "num_workers", "progress_interval_seconds",
                                              "baseline_report"};

uint64_t fnv1a(absl::string_view bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace

std::string config_differences(const TaskConfig& then, const TaskConfig& now,
                               absl::Span<const absl::string_view> ignored) {
  MessageDifferencer differencer;
  differencer.set_message_field_comparison(MessageDifferencer::EQUIVALENT);
  for (const absl::string_view name : ignored) {
    const google::protobuf::FieldDescriptor* field = TaskConfig::descriptor()->FindFieldByName(std::string(name));
    TS_CHECK(field != nullptr, "config_differences: TaskConfig has no field ", name);
    differencer.IgnoreField(field);
  }
  std::string report;
  {
    google::protobuf::io::StringOutputStream stream(&report);
    MessageDifferencer::StreamReporter reporter(&stream);
    differencer.ReportDifferencesTo(&reporter);
    differencer.Compare(then, now);
  }
  // The reporter's lines, "modified: sgd.lr: 1 -> 2", as "sgd.lr: 1 -> 2";
  // it names the ignored fields too.
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(report, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "ignored: ")) continue;
    for (const absl::string_view kind : {"modified: ", "added: ", "deleted: "}) {
      if (absl::ConsumePrefix(&line, kind)) break;
    }
    lines.emplace_back(line);
  }
  return absl::StrJoin(lines, "; ");
}

std::string deterministic_bytes(const TaskConfig& config) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    TS_CHECK(config.SerializeToCodedStream(&coded), "the config does not serialize");
  }
  return bytes;
}

absl::Status check_ranks_share_config(collectives::Communicator& comm, const Device& device, const TaskConfig& config) {
  if (comm.world_size() == 1) return absl::OkStatus();
  TaskConfig compared = config;
  for (const absl::string_view name : kWhereFields) {
    compared.GetReflection()->ClearField(&compared, TaskConfig::descriptor()->FindFieldByName(std::string(name)));
  }
  ASSIGN_OR_RETURN(const std::string mine, capture([&] { return deterministic_bytes(compared); }));
  // The hash in two halves and the size: f64 carries each exactly.
  const uint64_t hash = fnv1a(mine);
  ASSIGN_OR_RETURN(
      const std::vector<double> all,
      collectives::allgather_values(comm, device,
                                    {static_cast<double>(hash >> 32), static_cast<double>(hash & 0xffffffffu),
                                     static_cast<double>(mine.size())}));
  std::vector<int> apart;
  for (int r = 1; r < comm.world_size(); ++r) {
    if (all[3 * r] != all[0] || all[3 * r + 1] != all[1] || all[3 * r + 2] != all[2]) apart.push_back(r);
  }
  if (apart.empty()) return absl::OkStatus();
  // Rank 0's config to every rank, so that a rank that differs names its
  // fields.
  const int64_t size = static_cast<int64_t>(all[2]);
  ASSIGN_OR_RETURN(Tensor bytes, capture([&]() -> Tensor {
                     if (comm.rank() != 0) return empty({size}, {DType::kU8, device});
                     const std::vector<uint8_t> host(mine.begin(), mine.end());
                     return to(from_vector<uint8_t>(host, {size}), device);
                   }));
  if (size > 0) RETURN_IF_ERROR(comm.broadcast(bytes, /*root=*/0).synchronize());
  ASSIGN_OR_RETURN(const std::vector<uint8_t> theirs, capture([&] { return to_vector<uint8_t>(bytes); }));
  TaskConfig rank0;
  if (!rank0.ParseFromArray(theirs.data(), static_cast<int>(theirs.size()))) {
    return shared_by_all_ranks(
        absl::InternalError(absl::StrCat("rank ", comm.rank(), " cannot parse rank 0's config")));
  }
  const std::string differences = config_differences(rank0, compared, {});
  if (!differences.empty()) {
    return shared_by_all_ranks(absl::FailedPreconditionError(
        absl::StrCat("rank ", comm.rank(), " runs another config than rank 0 (", differences,
                     "): every rank must be given the same flags and config")));
  }
  // Every rank ends here, each with its line (see exit_code.h).
  return shared_by_all_ranks(absl::FailedPreconditionError(
      absl::StrCat("rank(s) ", absl::StrJoin(apart, ", "),
                   " run another config than rank 0 (each of them names the fields): every rank must be given the "
                   "same flags and config")));
}

}  // namespace ts::tasks
