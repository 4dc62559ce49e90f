#include "tasks/common/flags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "tasks/common/config.h"
#include "tasks/common/usage.h"

ABSL_FLAG(std::string, config, "",
          "Text-proto TaskConfig file (default: the task's own config.textproto, compiled into the binary).");
ABSL_FLAG(std::string, set, "",
          "Overrides of any config field: field=value,... (text-format values; lists as [a, b]; "
          "task fields by extension name, e.g. resnet20.depth=56).");

// Typed shortcuts, one per common TaskConfig field of the same name. They
// are valueless unless given, so only flags on the command line override the
// file; a bool flag sets its field either way when it is on the command line
// (--synthetic, --synthetic=false, --nosynthetic).
ABSL_FLAG(std::optional<uint64_t>, seed, std::nullopt, "Random seed.");
ABSL_FLAG(std::optional<int32_t>, epochs, std::nullopt, "Training epochs.");
ABSL_FLAG(std::optional<int64_t>, max_steps, std::nullopt, "Stop after this many steps in total; 0: no limit.");
ABSL_FLAG(std::optional<int32_t>, batch_size, std::nullopt, "Batch size per worker.");
ABSL_FLAG(std::optional<double>, lr, std::nullopt, "Per-worker learning rate (of the chosen optimizer).");
ABSL_FLAG(std::optional<double>, momentum, std::nullopt, "Momentum (of the chosen optimizer).");
ABSL_FLAG(std::optional<double>, weight_decay, std::nullopt, "Weight decay (of the chosen optimizer).");
ABSL_FLAG(std::optional<double>, warmup_epochs, std::nullopt, "Linear learning-rate warm-up, in epochs.");
ABSL_FLAG(std::optional<std::string>, lr_schedule, std::nullopt, "CONSTANT, STEP, MULTISTEP, COSINE or PLATEAU.");
ABSL_FLAG(std::optional<double>, target_value, std::nullopt, "Target value of target_metric (time to accuracy).");
ABSL_FLAG(std::optional<int32_t>, eval_every_epochs, std::nullopt, "Evaluate every N epochs.");
ABSL_FLAG(std::optional<std::string>, data_path, std::nullopt, "Dataset file or folder.");
ABSL_FLAG(std::optional<std::string>, dataset, std::nullopt,
          "Dataset, for tasks with a choice (a value of the task's dataset enum, any case).");
ABSL_FLAG(bool, synthetic, false, "Train on deterministic synthetic data of the same shapes.");
ABSL_FLAG(std::optional<int32_t>, num_workers, std::nullopt, "Data loader threads.");
ABSL_FLAG(std::optional<std::string>, device, std::nullopt, "auto, cpu, cuda or cuda:N.");
ABSL_FLAG(std::optional<std::string>, dtype, std::nullopt,
          "f32, f16 or bf16 (any case); f16 and bf16 are mixed precision (apex O2 with dynamic loss scaling).");
ABSL_FLAG(bool, tf32, false, "TF32 tensor cores for f32 matrix products and convolutions on CUDA.");
ABSL_FLAG(bool, channels_last, false,
          "Images and volumes channels-last ([N, H, W, C] in memory), the layout cuDNN's tensor cores read.");
ABSL_FLAG(bool, deterministic, false,
          "Only cuDNN convolution algorithms that repeat bit for bit run to run (may cost speed).");
ABSL_FLAG(std::optional<std::string>, output_dir, std::nullopt, "Folder for report.json and tensorboard/.");
ABSL_FLAG(std::optional<std::string>, checkpoint_dir, std::nullopt,
          "Folder for checkpoints; given empty (--checkpoint_dir=), none, also where the config names one.");
ABSL_FLAG(std::optional<double>, checkpoint_interval_minutes, std::nullopt,
          "Minutes between checkpoints (also taken at epoch ends); 0: epoch ends only.");
ABSL_FLAG(bool, resume, false, "Continue from the checkpoint in checkpoint_dir.");
ABSL_FLAG(std::optional<std::string>, baseline_report, std::nullopt,
          "report.json of a one-rank run of the same task: the report gets its scaling efficiency (empty: none).");
ABSL_FLAG(std::optional<double>, price_per_hour, std::nullopt,
          "Price of one node per hour (any currency): the report gets MLBench's price figures; 0: none.");

namespace ts::tasks {
namespace {

// The arguments of the last command line parse_task_command_line read:
// absl says what a bool flag's value is but not whether it was given, and
// false given must override a config file's true; nor whether a string flag
// was given empty.
std::vector<std::string>& command_line() {
  static auto* const args = new std::vector<std::string>();  // never destroyed
  return *args;
}

// Whether the flag `name` is on the command line, in absl's forms (--name,
// --name=v, and for a bool --noname; each also with one dash), up to a "--".
bool flag_given(absl::string_view name) {
  for (absl::string_view arg : command_line()) {
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (!absl::ConsumePrefix(&arg, name) && !(absl::ConsumePrefix(&arg, "no") && absl::ConsumePrefix(&arg, name))) {
      continue;
    }
    if (arg.empty() || arg[0] == '=') return true;
  }
  return false;
}

// absl already checked the flag's type; the field's own rules (enum names)
// are checked by the same path as --set. absl reads an empty value as no
// value, but a string flag given empty (--checkpoint_dir=) sets its field
// empty: it is how a command line turns off a config's checkpoints or
// baseline report.
template <typename T>
absl::Status apply(TaskConfig& config, absl::string_view name, const absl::Flag<std::optional<T>>& flag) {
  std::optional<T> value = absl::GetFlag(flag);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!value && flag_given(name)) value = "";
  }
  if (!value) return absl::OkStatus();
  absl::Status s = set_config_field(config, name, absl::UnparseFlag(*value));
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", s.message()));
  return absl::OkStatus();
}

// An enum flag whose values are upper-case enum names, given in any case.
absl::Status apply_upper_case(TaskConfig& config, absl::string_view name,
                              const absl::Flag<std::optional<std::string>>& flag) {
  const std::optional<std::string> value = absl::GetFlag(flag);
  if (!value) return absl::OkStatus();
  absl::Status s = set_config_field(config, name, absl::AsciiStrToUpper(*value));
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("--", name, ": ", s.message()));
  return absl::OkStatus();
}

absl::Status apply(TaskConfig& config, absl::string_view name, const absl::Flag<bool>& flag) {
  if (!flag_given(name)) return absl::OkStatus();
  return set_config_field(config, name, absl::GetFlag(flag) ? "true" : "false");
}

absl::Status apply_typed_flags(TaskConfig& c) {
  for (const absl::Status& s : {
           apply(c, "seed", FLAGS_seed),
           apply(c, "epochs", FLAGS_epochs),
           apply(c, "max_steps", FLAGS_max_steps),
           apply(c, "batch_size", FLAGS_batch_size),
           apply(c, "lr", FLAGS_lr),
           apply(c, "momentum", FLAGS_momentum),
           apply(c, "weight_decay", FLAGS_weight_decay),
           apply(c, "warmup_epochs", FLAGS_warmup_epochs),
           apply(c, "lr_schedule", FLAGS_lr_schedule),
           apply(c, "target_value", FLAGS_target_value),
           apply(c, "eval_every_epochs", FLAGS_eval_every_epochs),
           apply(c, "data_path", FLAGS_data_path),
           apply_upper_case(c, "dataset", FLAGS_dataset),
           apply(c, "synthetic", FLAGS_synthetic),
           apply(c, "num_workers", FLAGS_num_workers),
           apply(c, "device", FLAGS_device),
           apply_upper_case(c, "dtype", FLAGS_dtype),
           apply(c, "tf32", FLAGS_tf32),
           apply(c, "channels_last", FLAGS_channels_last),
           apply(c, "deterministic", FLAGS_deterministic),
           apply(c, "output_dir", FLAGS_output_dir),
           apply(c, "checkpoint_dir", FLAGS_checkpoint_dir),
           apply(c, "checkpoint_interval_minutes", FLAGS_checkpoint_interval_minutes),
           apply(c, "resume", FLAGS_resume),
           apply(c, "baseline_report", FLAGS_baseline_report),
           apply(c, "price_per_hour", FLAGS_price_per_hour),
       }) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// Every value given to --`name` on the command line, in order, in absl's
// forms (--name=v, --name v, -name=v, -name v), up to a "--".
std::vector<std::string> values_of_flag(int argc, char** argv, absl::string_view name) {
  std::vector<std::string> values;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (!absl::ConsumePrefix(&arg, name)) continue;
    if (absl::ConsumePrefix(&arg, "=")) {
      values.emplace_back(arg);
    } else if (arg.empty() && i + 1 < argc) {
      values.emplace_back(argv[++i]);
    }
  }
  return values;
}

}  // namespace

void parse_task_command_line(int argc, char** argv) {
  // absl puts the program's name before it.
  set_usage(
      "trains with its default config (compiled in) or --config=FILE. The flags below override config fields (an "
      "empty default: the config's value); --set=field=value,... sets any field (tasks/common/config.proto and the "
      "task's own .proto; README.md).");
  absl::ParseCommandLine(argc, argv);
  command_line().assign(argv + 1, argv + argc);
  const std::vector<std::string> sets = values_of_flag(argc, argv, "set");
  if (sets.size() > 1) absl::SetFlag(&FLAGS_set, absl::StrJoin(sets, ","));
}

absl::StatusOr<TaskConfig> config_from_flags(absl::string_view default_config, absl::string_view task) {
  // absl reads these itself, so the bool flags and the repeated --set found
  // by scanning the command line would miss what they hold.
  for (const char* name : {"flagfile", "fromenv", "tryfromenv"}) {
    for (absl::string_view arg : command_line()) {
      if (arg == "--") break;
      if ((absl::ConsumePrefix(&arg, "--") || absl::ConsumePrefix(&arg, "-")) && absl::ConsumePrefix(&arg, name) &&
          (arg.empty() || arg[0] == '=')) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name,
                         " is not supported: flags read from it would be lost; give them on the command line, or "
                         "the config fields in a --config file"));
      }
    }
  }
  const std::string flag_path = absl::GetFlag(FLAGS_config);
  absl::StatusOr<TaskConfig> config = flag_path.empty()
                                          ? parse_config(default_config, absl::StrCat(task, " default config"))
                                          : load_config(user_path(flag_path));
  if (!config.ok()) return config.status();
  if (absl::Status s = apply_typed_flags(*config); !s.ok()) return s;
  const TaskConfig::OptimizerCase flagged_optimizer = config->optimizer_case();
  if (absl::Status s = apply_overrides(*config, absl::GetFlag(FLAGS_set)); !s.ok()) return s;
  // The optimizer flags went into the optimizer chosen before --set; one
  // that --set puts another in place of would take them away unsaid.
  if (config->optimizer_case() != flagged_optimizer) {
    for (const auto& [name, given] : {std::pair<const char*, bool>{"lr", absl::GetFlag(FLAGS_lr).has_value()},
                                      {"momentum", absl::GetFlag(FLAGS_momentum).has_value()},
                                      {"weight_decay", absl::GetFlag(FLAGS_weight_decay).has_value()}}) {
      if (given) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, " set a field of the config's optimizer, and --set chose another in its place (",
            config->optimizer_case() == TaskConfig::kAdam ? "adam" : "sgd", "), which drops it; give it in --set (",
            config->optimizer_case() == TaskConfig::kAdam ? "adam" : "sgd", ".", name, "=...) instead"));
      }
    }
  }
  config->set_output_dir(user_path(config->output_dir()));
  config->set_checkpoint_dir(user_path(config->checkpoint_dir()));
  config->set_data_path(user_path(config->data_path()));
  config->set_baseline_report(user_path(config->baseline_report()));
  if (absl::Status s = validate_config(*config); !s.ok()) return s;
  return config;
}

}  // namespace ts::tasks
