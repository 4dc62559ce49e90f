// The start and end every task binary shares: parse the flags, join the
// ranks of the launch, build the runner from the task's config; print a
// failed run's error and give the exit code.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tasks/common/distributed.h"
#include "tasks/common/runner.h"

namespace ts::tasks {

struct TaskStart {
  Distributed dist;
  std::unique_ptr<Runner> runner;
};

absl::StatusOr<TaskStart> start_task(int argc, char** argv, absl::string_view default_config);

// Call after the run's objects are gone: finalizes MPI when the task
// initialized it; returns 0 for OK, else prints "<task>: <error>" to stderr
// and returns 1.
int finish_task(absl::string_view task, const absl::Status& status);

}  // namespace ts::tasks
