// The start and end every task binary shares. A task's main is
//
//   int main(int argc, char** argv) {
//     return ts::tasks::run_task(argc, argv, {"resnet20", kDefaultConfig}, make_recipe);
//   }
//
// run_task parses the flags into the config (the task's default config,
// compiled into the binary, unless --config names a file), joins the ranks of
// the launch, selects the device, asks the task for its Recipe, trains it
// with the Trainer, and returns the exit code: 0, or 1 after one line
// "<task>: <error>" on stderr for any failure - a Status, or an Error or
// other exception from model code.
#pragma once

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collectives/communicator.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/recipe.h"
#include "tensor/device.h"

namespace ts::tasks {

struct TaskInfo {
  absl::string_view name;            // for errors: "resnet20"
  absl::string_view default_config;  // text proto (the task's config.textproto)
};

// What a recipe is built from.
struct TaskContext {
  const TaskConfig& config;
  Device device;
  int rank = 0;
  int world_size = 1;
  // The run's communicator (null for a single process without DDP), e.g. to
  // let rank 0 prepare files the other ranks then read.
  collectives::Communicator* comm = nullptr;
};

using RecipeFactory = std::function<absl::StatusOr<std::unique_ptr<Recipe>>(const TaskContext&)>;

int run_task(int argc, char** argv, const TaskInfo& task, const RecipeFactory& make_recipe);

}  // namespace ts::tasks
