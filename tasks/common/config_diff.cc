#include "tasks/common/config_diff.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tasks/common/rank_vote.h"

namespace ts::tasks {
namespace {

using google::protobuf::util::MessageDifferencer;

// Where a rank runs and writes, which may differ by rank (a device each,
// node-local output paths). Not data_path: a rank on the task's default
// data takes part in collectives that build it, which one with a path of
// its own would not join.
constexpr absl::string_view kWhereFields[] = {
    "device", "output_dir", "checkpoint_dir", "num_workers", "progress_interval_seconds", "baseline_report"};

}  // namespace

std::string config_differences(const TaskConfig& then_given, const TaskConfig& now_given,
                               absl::Span<const absl::string_view> ignored,
                               absl::Span<const absl::string_view> ignored_in_tasks) {
  // A config that chooses no optimizer trains with SGD's defaults
  // (configured_lr, make_optimizer): it is that config.
  TaskConfig then = then_given, now = now_given;
  for (TaskConfig* c : {&then, &now}) {
    if (c->optimizer_case() == TaskConfig::OPTIMIZER_NOT_SET) c->mutable_sgd();
  }
  MessageDifferencer differencer;
  differencer.set_message_field_comparison(MessageDifferencer::EQUIVALENT);
  const google::protobuf::Descriptor* descriptor = TaskConfig::descriptor();
  for (const absl::string_view name : ignored) {
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(std::string(name));
    TS_CHECK(field != nullptr, "config_differences: TaskConfig has no field ", name);
    differencer.IgnoreField(field);
  }
  const google::protobuf::Reflection* reflection = then.GetReflection();
  for (const TaskConfig* c : {&then, &now}) {
    std::vector<const google::protobuf::FieldDescriptor*> present;
    reflection->ListFields(*c, &present);
    for (const google::protobuf::FieldDescriptor* extension : present) {
      if (!extension->is_extension() || extension->message_type() == nullptr) continue;
      for (const absl::string_view name : ignored_in_tasks) {
        const google::protobuf::FieldDescriptor* field = extension->message_type()->FindFieldByName(std::string(name));
        if (field != nullptr) differencer.IgnoreField(field);
      }
    }
  }
  std::vector<std::string> lines;
  // A oneof that chose another member (sgd -> adam) is that change alone:
  // compared member by member, two members at their defaults are
  // equivalent, and others would read as their fields' changes.
  for (int k = 0; k < descriptor->oneof_decl_count(); ++k) {
    const google::protobuf::OneofDescriptor* oneof = descriptor->oneof_decl(k);
    const google::protobuf::FieldDescriptor* a = reflection->GetOneofFieldDescriptor(then, oneof);
    const google::protobuf::FieldDescriptor* b = reflection->GetOneofFieldDescriptor(now, oneof);
    if (a == b) continue;
    lines.push_back(absl::StrCat(oneof->name(), ": ", a != nullptr ? a->name() : "(none)", " -> ",
                                 b != nullptr ? b->name() : "(none)"));
    for (int f = 0; f < oneof->field_count(); ++f) differencer.IgnoreField(oneof->field(f));
  }
  std::string report;
  {
    google::protobuf::io::StringOutputStream stream(&report);
    MessageDifferencer::StreamReporter reporter(&stream);
    differencer.ReportDifferencesTo(&reporter);
    differencer.Compare(then, now);
  }
  // The reporter's lines: "modified: sgd.lr: 1 -> 2" as "sgd.lr: 1 -> 2";
  // "added: ..." and "deleted: ..." (a repeated field's elements) as they
  // are; the ignored fields, which it names too, left out.
  for (absl::string_view line : absl::StrSplit(report, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "ignored: ")) continue;
    absl::ConsumePrefix(&line, "modified: ");
    lines.emplace_back(line);
  }
  return absl::StrJoin(lines, "; ");
}

absl::Status check_ranks_share_config(collectives::Communicator& comm, const Device& device, const TaskConfig& config) {
  if (comm.world_size() == 1) return absl::OkStatus();
  // Rank 0's config to every rank; each compares its own.
  ASSIGN_OR_RETURN(const std::string theirs, collectives::broadcast_bytes(comm, device, config.SerializeAsString()));
  TaskConfig rank0;
  const bool parsed = rank0.ParseFromString(theirs);
  const std::string differences = parsed ? config_differences(rank0, config, kWhereFields, kTaskWhereFields)
                                         : "rank 0's config does not parse here";
  return vote_on_differences(comm, device, differences, "config");
}

}  // namespace ts::tasks
