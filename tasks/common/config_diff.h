// Where two configs differ, for the runs that must share one: every rank of
// a run (each parses its own flags), and a checkpoint and the run that
// resumes it. Either would otherwise go on with settings that differ
// silently: ranks with different learning rates drift apart on the same
// averaged gradients, and a schedule restored from a checkpoint keeps its
// own lr whatever the new flag says.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "collectives/communicator.h"
#include "tasks/common/config.pb.h"
#include "tensor/device.h"

namespace ts::tasks {

// Fields of a task's own settings (its extension of TaskConfig), by name,
// that say where a rank keeps what it builds: they may differ by rank (a
// node-local disk each) and on resume, as output_dir may.
inline constexpr absl::string_view kTaskWhereFields[] = {"cache_dir"};

// The fields `now` differs from `then` in, joined by "; ": "field: then ->
// now", "added: field[i]: v" or "deleted: field[i]: v" for a repeated
// field's elements, "optimizer: sgd -> adam" for a oneof's other member
// (extensions by their full names); left out: the top-level fields named in
// `ignored` and the fields of any task's extension named in
// `ignored_in_tasks`; empty when they agree. A field left unset and one set
// to its default agree, and so do no optimizer and SGD (what a config
// without one trains with).
std::string config_differences(const TaskConfig& then, const TaskConfig& now,
                               absl::Span<const absl::string_view> ignored,
                               absl::Span<const absl::string_view> ignored_in_tasks = {});

// Fails on every rank unless all ranks run rank 0's config (as
// config_differences compares), but for the fields that say where a rank
// runs and writes (device, output, checkpoint and cache paths, loader
// workers, progress interval, baseline report): a rank that differs names
// its fields, the others name the rank. Every rank calls it.
absl::Status check_ranks_share_config(collectives::Communicator& comm, const Device& device, const TaskConfig& config);

}  // namespace ts::tasks
