// The PyTorch distributed data-parallel benchmark (benchmarks/distributed/ddp/benchmark.py)
// on our stack: for each model, sec/iter and examples/s at p50/p75/p90/p95 of
// a training step (forward, cross-entropy, backward, SGD) on one synthetic
// ImageNet-shaped batch, without DDP on one rank and then with DDP over the
// first 1, 2, 4, ... ranks of the launch (sub-communicators of the world; the
// other ranks wait). Measurements of every rank of a row are pooled for the
// percentiles, as PyTorch's script does. Rank 0 prints the table and writes
// the JSON report that `tools/report diff` compares.
//
//   tools/launch -np 2 //tasks/ddp_bench -- --model=resnet50 --batch_size=4 --json=ddp.json
//   tools/launch //tasks/ddp_bench -- --json=ddp.json      (one rank per GPU, NCCL)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "autograd/variable.h"
#include "base/error.h"
#include "base/files.h"
#include "base/json.h"
#include "base/percentile.h"
#include "base/status_macros.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "collectives/environment.h"
#include "collectives/world.h"
#include "nn/losses.h"
#include "nn/models/resnet.h"
#include "optim/sgd.h"
#include "tasks/common/environment.h"
#include "tasks/common/exit_code.h"
#include "tasks/common/precision.h"
#include "tasks/common/rank_flags.h"
#include "tasks/common/report_path.h"
#include "tasks/common/usage.h"
#include "tasks/ddp_bench/sweep.h"
#include "tensor/ops.h"
#include "tensor/random.h"

ABSL_FLAG(std::vector<std::string>, model,
          std::vector<std::string>({"resnet50", "resnet101", "resnext50_32x4d", "resnext101_32x8d"}),
          "Models to benchmark, in order (repeatable or comma-separated; resnet_tiny for smoke runs)");
ABSL_FLAG(int, batch_size, 32, "Examples per rank per iteration");
ABSL_FLAG(int, iterations, 10, "Timed iterations per rank and row");
ABSL_FLAG(int, warmup_iterations, 5, "Untimed iterations before them");
ABSL_FLAG(double, bucket_cap_mb, 25, "DDP's gradient bucket size in MB");
ABSL_FLAG(bool, use_ddp_for_single_rank, true, "Wrap the one-rank row in DDP (else it trains as \"no ddp\" does)");
ABSL_FLAG(int, image_size, 224, "Height and width of the synthetic images (at least 32)");
ABSL_FLAG(int, num_classes, 1000, "Classes of the model's classifier (at least 2)");
ABSL_FLAG(std::string, device, "auto", "auto, cpu, cuda (the local rank's GPU) or cuda:N");
ABSL_FLAG(std::string, dtype, "f32",
          "f32, f16 or bf16; f16 and bf16 are mixed precision as the training tasks run it (apex O2, f32 master "
          "weights, dynamic loss scaling)");
ABSL_FLAG(bool, tf32, false,
          "TF32 tensor cores for f32 matrix products and convolutions on CUDA (PyTorch's script leaves cuDNN's on)");
ABSL_FLAG(bool, channels_last, false, "Images channels-last ([N, H, W, C] in memory) through the model");
ABSL_FLAG(std::string, json, "", "Write the report here (rank 0)");

namespace ts::tasks::ddp_bench {
namespace {

using collectives::Communicator;

constexpr int kPercentiles[] = {50, 75, 90, 95};

struct Settings {
  std::vector<std::string> models;
  int batch_size;
  int iterations;
  int warmup_iterations;
  double bucket_cap_mb;
  bool use_ddp_for_single_rank;
  int image_size;
  int num_classes;
  Precision precision;
};

absl::StatusOr<Settings> settings_from_flags() {
  Settings s{absl::GetFlag(FLAGS_model),         absl::GetFlag(FLAGS_batch_size),
             absl::GetFlag(FLAGS_iterations),    absl::GetFlag(FLAGS_warmup_iterations),
             absl::GetFlag(FLAGS_bucket_cap_mb), absl::GetFlag(FLAGS_use_ddp_for_single_rank),
             absl::GetFlag(FLAGS_image_size),    absl::GetFlag(FLAGS_num_classes)};
  ASSIGN_OR_RETURN(s.precision, Precision::parse(absl::GetFlag(FLAGS_dtype), absl::GetFlag(FLAGS_tf32),
                                                 absl::GetFlag(FLAGS_channels_last)));
  const auto invalid = [](absl::string_view flag, auto value, absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": must be ", rule));
  };
  if (s.models.empty()) return absl::InvalidArgumentError("--model: no model given");
  const std::vector<std::string> known = nn::models::resnet_names();
  for (const std::string& m : s.models) {
    if (absl::c_find(known, m) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model: unknown model '", m, "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  if (s.batch_size < 1) return invalid("batch_size", s.batch_size, ">= 1");
  if (s.iterations < 1) return invalid("iterations", s.iterations, ">= 1");
  if (s.warmup_iterations < 0) return invalid("warmup_iterations", s.warmup_iterations, ">= 0");
  if (!(s.bucket_cap_mb > 0 && s.bucket_cap_mb <= static_cast<double>(collectives::ddp::kMaxBucketCapMb))) {
    return invalid("bucket_cap_mb", s.bucket_cap_mb, absl::StrCat("in (0, ", collectives::ddp::kMaxBucketCapMb, "]"));
  }
  if (s.image_size < 32) return invalid("image_size", s.image_size, ">= 32");
  // Every target is class 1, as in PyTorch's script.
  if (s.num_classes < 2) return invalid("num_classes", s.num_classes, ">= 2");
  return s;
}

// One row's timed iterations on a rank.
struct Timing {
  std::vector<double> seconds;  // of the timed iterations
  int64_t skipped_steps = 0;    // of those, the loss scaler's skipped ones (mixed precision)
};

// PyTorch's benchmark_process_group: a fresh model seeded by the rank in its
// group, SGD(lr 0.001, momentum 0.9, weight decay 1e-4), DDP without buffer
// broadcasts when `ddp_comm` is given, and the same batch every iteration;
// in s.precision (f32 in PyTorch's script). An iteration ends when its loss
// is on the host (the device has finished).
Timing time_training(const Settings& s, const std::string& model_name, const Device& device, Communicator* ddp_comm,
                     int seed) {
  manual_seed(static_cast<uint64_t>(seed));
  const std::shared_ptr<nn::models::ResNet> model = nn::models::resnet(model_name, s.num_classes);
  model->to(device);
  model->train();
  s.precision.cast(*model);
  std::unique_ptr<collectives::ddp::DistributedDataParallel> ddp;
  if (ddp_comm != nullptr) {
    collectives::ddp::DdpOptions ddp_options;
    ddp_options.reducer.bucket_cap_mb = s.bucket_cap_mb;
    ddp_options.broadcast_buffers = false;
    ddp = value_or_throw(collectives::ddp::DistributedDataParallel::create(model, ddp_comm, ddp_options));
  }
  PrecisionStep precision(model, s.precision);  // masters from rank 0's weights
  optim::SgdOptions options;
  options.lr = 0.001;
  options.momentum = 0.9;
  options.weight_decay = 1e-4;
  optim::Sgd sgd(precision.optimized(), options);
  const Tensor images = precision.input(rand({s.batch_size, 3, s.image_size, s.image_size}, {DType::kF32, device}));
  const Tensor targets = ones({s.batch_size}, {DType::kI64, device});
  Timing timing;
  int64_t skipped_in_warmup = 0;
  for (int i = 0; i < s.warmup_iterations + s.iterations; ++i) {
    if (i == s.warmup_iterations) skipped_in_warmup = precision.skipped_steps();
    const absl::Time start = absl::Now();
    if (ddp != nullptr) throw_if_error(ddp->begin_step());
    sgd.zero_grad();
    const autograd::Variable loss = nn::cross_entropy(model->forward(autograd::Variable(images)), targets);
    precision.backward(loss);
    if (value_or_throw(precision.unscale(i + 1))) {
      sgd.step();
      precision.after_step();
    }
    to(loss.data(), Device::cpu());
    if (i >= s.warmup_iterations) timing.seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
  }
  timing.skipped_steps = precision.skipped_steps() - skipped_in_warmup;
  return timing;
}

// Runs one row on the ranks it names while the others wait, and returns the
// pooled measurements of every rank that trained, and the most timed
// iterations any of them skipped (on every rank).
absl::StatusOr<Timing> run_row(Communicator& world, const Device& device, const Settings& s,
                               const std::string& model_name, const SweepRow& row) {
  const int rank = world.rank();
  const bool trains = row.every_rank_alone || rank < row.world_size;
  std::unique_ptr<Communicator> group;
  if (row.ddp) {
    ASSIGN_OR_RETURN(group, world.split(trains ? 0 : 1, rank));
  }
  Timing mine{std::vector<double>(s.iterations, 0.0), 0};
  if (trains) {
    const int seed = group != nullptr ? group->rank() : 0;
    ASSIGN_OR_RETURN(mine, capture([&] { return time_training(s, model_name, device, group.get(), seed); }));
  }
  group.reset();
  // The ranks that waited contribute zeros.
  ASSIGN_OR_RETURN(const std::vector<double> all, collectives::allgather_values(world, device, mine.seconds));
  ASSIGN_OR_RETURN(const std::vector<double> skipped,
                   collectives::allgather_values(world, device, {static_cast<double>(mine.skipped_steps)}));
  const int trained = row.every_rank_alone ? world.world_size() : row.world_size;
  return Timing{std::vector<double>(all.begin(), all.begin() + static_cast<ptrdiff_t>(trained) * s.iterations),
                static_cast<int64_t>(*std::max_element(skipped.begin(), skipped.end()))};
}

std::string unit_name(const Device& device) { return device.is_cuda() ? "GPUs" : "CPUs"; }

// `nvidia-smi topo -m` as PyTorch's script prints it; empty without one.
std::string gpu_topology() {
  std::FILE* pipe = popen("nvidia-smi topo -m 2>/dev/null", "r");
  if (pipe == nullptr) return "";
  std::string text;
  char buffer[4096];
  while (const size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) text.append(buffer, n);
  return pclose(pipe) == 0 ? text : "";
}

std::string mpi_library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, length);
  return std::string(absl::StripAsciiWhitespace(v.substr(0, v.find(','))));
}

// What the header and the report say about where the benchmark ran.
struct Setup {
  Environment machine;
  std::string backend;      // "mpi", "nccl"
  std::string mpi_library;  // "Open MPI v4.1.4"; empty with NCCL
  int world_size = 1;
  int ranks_per_machine = 1;
  std::string topology;  // `nvidia-smi topo -m`; empty on the CPU
};

// Rank 0's ranks per machine, on every rank. Machines may hold different
// numbers of ranks (8 + 2); every rank must plan the same sweep, or their
// sub-communicators and collectives would not match.
absl::StatusOr<int> ranks_per_machine_of_rank0(Communicator& world, const Device& device) {
  ASSIGN_OR_RETURN(const double n, collectives::broadcast_value(world, device, world.local_size()));
  return static_cast<int>(n);
}

absl::StatusOr<Setup> describe_setup(const Device& device, Communicator& world) {
  Setup setup;
  setup.machine = describe_environment(device);
  setup.backend = std::string(world.backend_name());
  if (setup.backend == "mpi") setup.mpi_library = mpi_library_version();
  setup.world_size = world.world_size();
  ASSIGN_OR_RETURN(setup.ranks_per_machine, ranks_per_machine_of_rank0(world, device));
  if (world.rank() == 0 && device.is_cuda()) setup.topology = gpu_topology();
  return setup;
}

Json setup_json(const Setup& setup) {
  Json env = setup.machine.to_json();
  env["backend"] = setup.backend;
  env["mpi"] = setup.mpi_library.empty() ? Json() : Json(setup.mpi_library);
  env["world_size"] = setup.world_size;
  env["ranks_per_machine"] = setup.ranks_per_machine;
  env["topology"] = setup.topology;
  return env;
}

void print_header(const Setup& setup, const Device& device, const Settings& s) {
  const Environment& m = setup.machine;
  std::printf("-----------------------------------\n");
  std::printf("trainstack distributed benchmark suite\n");
  std::printf("-----------------------------------\n\n");
  std::printf("* Commit: %s\n", m.commit.c_str());
  if (device.is_cuda()) {
    std::printf("* CUDA version: %s (cuDNN %s, NCCL %s)\n", m.cuda_runtime.c_str(), m.cudnn.c_str(), m.nccl.c_str());
  }
  std::printf("* Distributed backend: %s%s\n", setup.backend.c_str(),
              setup.mpi_library.empty() ? "" : absl::StrCat(" (", setup.mpi_library, ")").c_str());
  std::printf("* Maximum bucket size: %gMB\n", s.bucket_cap_mb);
  std::printf("* Precision: %s\n", s.precision.label().c_str());
  std::printf("* Device: %s (%s)\n", m.device.c_str(), device.is_cuda() ? m.gpu_name.c_str() : m.cpu_model.c_str());
  std::printf("* Ranks: %d, %d per machine\n", setup.world_size, setup.ranks_per_machine);
  if (!setup.topology.empty()) {
    std::printf("\n--- nvidia-smi topo -m ---\n\n%s\n--------------------------\n", setup.topology.c_str());
  }
  std::fflush(stdout);
}

// sec/iter and examples/s (per rank) at each of kPercentiles.
struct RowStats {
  std::vector<double> sec_per_iter;
  std::vector<double> examples_per_s;
};

RowStats row_stats(const std::vector<double>& measurements, int batch_size) {
  RowStats stats;
  for (const int p : kPercentiles) {
    stats.sec_per_iter.push_back(percentile(measurements, p));
    stats.examples_per_s.push_back(batch_size / stats.sec_per_iter.back());
  }
  return stats;
}

Json row_json(const SweepRow& row, const std::vector<double>& measurements, const RowStats& stats) {
  Json j = Json::object();
  j["label"] = row.label;
  j["ddp"] = row.ddp;
  j["world_size"] = row.world_size;
  Json ranks = Json::array();
  for (int r = 0; r < row.world_size; ++r) ranks.push_back(r);
  j["ranks"] = std::move(ranks);
  Json times = Json::array();
  for (double t : measurements) times.push_back(t);
  j["measurements"] = std::move(times);
  Json sec = Json::object();
  Json examples = Json::object();
  for (size_t i = 0; i < std::size(kPercentiles); ++i) {
    sec[absl::StrCat("p", kPercentiles[i])] = stats.sec_per_iter[i];
    examples[absl::StrCat("p", kPercentiles[i])] = stats.examples_per_s[i];
  }
  j["sec_per_iter"] = std::move(sec);
  j["examples_per_s"] = std::move(examples);
  return j;
}

// PyTorch's table line: "   2 GPUs --    1M/2G:  p50:  0.104s   307.0/s  p75: ...".
void print_row(const Device& device, const SweepRow& row, const RowStats& stats) {
  std::string line = absl::StrFormat("%4d %s -- %8s:", row.world_size, unit_name(device), row.label);
  for (size_t i = 0; i < std::size(kPercentiles); ++i) {
    absl::StrAppendFormat(&line, "  p%02d:  %1.3fs  %6.1f/s", kPercentiles[i], stats.sec_per_iter[i],
                          stats.examples_per_s[i]);
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

absl::StatusOr<Json> benchmark_model(Communicator& world, const Device& device, const Settings& s, const Setup& setup,
                                     const std::string& model_name) {
  const bool leader = world.rank() == 0;
  if (leader) {
    std::printf("\nBenchmark: %s with batch size %d\n\n%22s", model_name.c_str(), s.batch_size, "");
    for (int i = 0; i < 4; ++i) std::printf("%14s%10s", "sec/iter", "ex/sec");
    std::printf("\n");
  }
  Json rows = Json::array();
  double no_ddp_p50 = 0;
  std::string overheads, skipped;
  for (const SweepRow& row : plan_sweep(world.world_size(), setup.ranks_per_machine, s.use_ddp_for_single_rank)) {
    ASSIGN_OR_RETURN(const Timing timing, run_row(world, device, s, model_name, row));
    if (!row.reported) continue;
    const std::vector<double>& measurements = timing.seconds;
    const RowStats stats = row_stats(measurements, s.batch_size);
    Json j = row_json(row, measurements, stats);
    // A skipped step skips the optimizer too: a mixed-precision row's times
    // say how many of its iterations were such.
    j["skipped_steps"] = timing.skipped_steps;
    absl::StrAppendFormat(&skipped, "%s%s %d", skipped.empty() ? "" : ", ", row.label, timing.skipped_steps);
    const double p50 = stats.sec_per_iter[0];
    if (!row.ddp && row.label == "no ddp") no_ddp_p50 = p50;
    if (row.ddp) {
      j["overhead_p50"] = p50 / no_ddp_p50 - 1;
      absl::StrAppendFormat(&overheads, "%s%s %+.1f%%", overheads.empty() ? "" : ", ", row.label,
                            100 * (p50 / no_ddp_p50 - 1));
    }
    if (leader) print_row(device, row, stats);
    rows.push_back(std::move(j));
  }
  if (leader && !overheads.empty()) std::printf("\nDDP against no ddp, p50 sec/iter: %s\n", overheads.c_str());
  if (leader && s.precision.mixed()) {
    std::printf("Loss scaler, timed iterations skipped of %d: %s\n", s.iterations, skipped.c_str());
  }
  Json result = Json::object();
  result["model"] = model_name;
  result["batch_size"] = s.batch_size;
  result["rows"] = std::move(rows);
  return result;
}

Json config_json(const Settings& s, const Device& device, const Communicator& world) {
  Json c = Json::object();
  Json models = Json::array();
  for (const std::string& m : s.models) models.push_back(m);
  c["models"] = std::move(models);
  c["batch_size"] = s.batch_size;
  c["iterations"] = s.iterations;
  c["warmup_iterations"] = s.warmup_iterations;
  c["bucket_cap_mb"] = s.bucket_cap_mb;
  c["use_ddp_for_single_rank"] = s.use_ddp_for_single_rank;
  c["image_size"] = s.image_size;
  c["num_classes"] = s.num_classes;
  const Json precision = s.precision.to_json();
  for (const auto& [key, value] : precision.as_object()) c[key] = value;
  c["world_size"] = world.world_size();
  c["device"] = device.to_string();
  c["backend"] = world.backend_name();
  return c;
}

absl::Status run() {
  ASSIGN_OR_RETURN(const Settings s, settings_from_flags());
  ASSIGN_OR_RETURN(const collectives::LaunchEnvironment launch, collectives::discover_environment());
  ASSIGN_OR_RETURN(const Device device, select_device(absl::GetFlag(FLAGS_device), launch.local_rank));
  ASSIGN_OR_RETURN(const collectives::CommunicatorOptions options,
                   collectives::CommunicatorOptions::from_flags_and_env());
  ASSIGN_OR_RETURN(const std::unique_ptr<Communicator> world, collectives::connect_world(launch, device, options));
  const bool leader = world->rank() == 0;
  RETURN_IF_ERROR(check_ranks_share_flags(*world, device, {"json"}));
  const std::string report_path = user_path(absl::GetFlag(FLAGS_json));
  RETURN_IF_ERROR(check_report_path(*world, device, report_path, "json"));

  Json report = Json::object();
  report["format"] = "trainstack.ddp_bench.v1";
  ASSIGN_OR_RETURN(const Setup setup, describe_setup(device, *world));
  report["environment"] = setup_json(setup);
  report["config"] = config_json(s, device, *world);
  if (leader) print_header(setup, device, s);
  Json benchmarks = Json::array();
  for (const std::string& model_name : s.models) {
    ASSIGN_OR_RETURN(Json result, benchmark_model(*world, device, s, setup, model_name));
    benchmarks.push_back(std::move(result));
  }
  report["benchmarks"] = std::move(benchmarks);
  if (leader && !report_path.empty()) {
    RETURN_IF_ERROR(write_file_atomically(report_path, report.dump(2) + "\n"));
    std::printf("\nreport: %s\n", report_path.c_str());
  }
  return absl::OkStatus();
}

// absl keeps only the last of a repeated flag; PyTorch's script takes one
// --model and ours several, so every --model=X (or --model X) is folded into
// one comma-separated --model before parsing.
std::vector<char*> fold_model_flags(int argc, char** argv, std::string& folded) {
  std::vector<char*> args = {argv[0]};
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (absl::StartsWith(arg, "--model=")) {
      models.emplace_back(absl::StripPrefix(arg, "--model="));
    } else if (arg == "--model" && i + 1 < argc) {
      models.emplace_back(argv[++i]);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (!models.empty()) {
    folded = absl::StrCat("--model=", absl::StrJoin(models, ","));
    args.push_back(folded.data());
  }
  return args;
}

}  // namespace
}  // namespace ts::tasks::ddp_bench

int main(int argc, char** argv) {
  ts::tasks::set_usage(
      "The PyTorch DDP benchmark: sec/iter percentiles without DDP and with it over 1, 2, "
      "4, ... ranks. Run it under tools/launch.");
  std::string folded;
  std::vector<char*> args = ts::tasks::ddp_bench::fold_model_flags(argc, argv, folded);
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  return ts::tasks::run_to_exit_code("ddp_bench", ts::tasks::ddp_bench::run);
}
