// Bluefog's throughput benchmark (examples/pytorch_benchmark.py) on our
// stack: synthetic ImageNet batches through a ResNet, plain SGD (lr 0.01), and
// one of Bluefog's distributed optimizers between the ranks:
//   neighbor_allreduce               parameters averaged with the in-neighbors
//                                    of a virtual topology (ATC or DGD style)
//   hierarchical_neighbor_allreduce  averaged inside each machine, then with
//                                    neighbouring machines
//   allreduce                        parameters averaged over every rank
//   gradient_allreduce (horovod)     gradients averaged (DDP), then the step
// After --num_warmup_batches, --num_iters timings of --num_batches_per_iter
// batches each; the output is Bluefog's: "Iter #k: X img/sec per CPU", each
// rank's mean +-1.96 sigma, and the total over ranks per iteration, plus the
// scaling efficiency against a one-rank report (--baseline) and a JSON report.
//
//   tools/launch -np 4 //tasks/neighbor_bench -- --virtual_topology=ring --json=nb.json
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "autograd/variable.h"
#include "base/error.h"
#include "base/files.h"
#include "base/json.h"
#include "base/status_macros.h"
#include "collectives/communicator.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "collectives/environment.h"
#include "collectives/neighbor.h"
#include "collectives/topology.h"
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
#include "tasks/neighbor_bench/options.h"
#include "tensor/ops.h"
#include "tensor/random.h"

ABSL_FLAG(std::string, model, "resnet50", "resnet50, resnet101, resnext50_32x4d, resnext101_32x8d or resnet_tiny");
ABSL_FLAG(int, batch_size, 32, "Images per rank per batch");
ABSL_FLAG(int, num_warmup_batches, 10, "Untimed batches first");
ABSL_FLAG(int, num_batches_per_iter, 10, "Batches per timed iteration");
ABSL_FLAG(int, num_iters, 10, "Timed iterations");
ABSL_FLAG(int, num_classes, 1000, "Classes of the model's classifier");
ABSL_FLAG(int, image_size, 224, "Height and width of the synthetic images (at least 32)");
ABSL_FLAG(std::string, dist_optimizer, "neighbor_allreduce",
          "neighbor_allreduce, hierarchical_neighbor_allreduce, allreduce, gradient_allreduce (or horovod)");
ABSL_FLAG(std::string, virtual_topology, "power2", "power2, ring, mesh, star, inner_outer_ring or inner_outer_exp2");
ABSL_FLAG(bool, enable_dynamic_topology, false, "Send to one neighbour per batch, rotating");
ABSL_FLAG(std::string, style, "dgd", "Decentralized step: atc (adapt then combine) or dgd (combine while adapting)");
ABSL_FLAG(int, local_size, -1,
          "Machines as blocks of this many consecutive ranks, for the inner-outer and hierarchical forms (-1: the "
          "launcher's machines)");
ABSL_FLAG(std::string, device, "auto", "auto, cpu, cuda (the local rank's GPU) or cuda:N");
ABSL_FLAG(std::string, dtype, "f32",
          "f32, f16 or bf16; f16 and bf16 are mixed precision as the training tasks run it (apex O2, f32 master "
          "weights, dynamic loss scaling), the f32 masters being what neighbours average");
ABSL_FLAG(bool, tf32, false, "TF32 tensor cores for f32 matrix products and convolutions on CUDA");
ABSL_FLAG(bool, channels_last, false, "Images channels-last ([N, H, W, C] in memory) through the model");
ABSL_FLAG(std::string, baseline, "", "A one-rank neighbor_bench report: the scaling efficiency is measured against it");
ABSL_FLAG(std::string, json, "", "Write the report here (rank 0)");

namespace ts::tasks::neighbor_bench {
namespace {

using collectives::Communicator;
using collectives::Topology;
using collectives::TopologySchedule;

constexpr double kLearningRate = 0.01;  // Bluefog's optim.SGD(lr=0.01)

absl::StatusOr<BenchOptions> options_from_flags() {
  BenchOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  o.num_warmup_batches = absl::GetFlag(FLAGS_num_warmup_batches);
  o.num_batches_per_iter = absl::GetFlag(FLAGS_num_batches_per_iter);
  o.num_iters = absl::GetFlag(FLAGS_num_iters);
  o.num_classes = absl::GetFlag(FLAGS_num_classes);
  o.image_size = absl::GetFlag(FLAGS_image_size);
  ASSIGN_OR_RETURN(o.dist_optimizer, parse_dist_optimizer(absl::GetFlag(FLAGS_dist_optimizer)));
  ASSIGN_OR_RETURN(o.topology, parse_topology_kind(absl::GetFlag(FLAGS_virtual_topology)));
  o.dynamic_topology = absl::GetFlag(FLAGS_enable_dynamic_topology);
  ASSIGN_OR_RETURN(o.style, parse_style(absl::GetFlag(FLAGS_style)));
  o.local_size = absl::GetFlag(FLAGS_local_size);
  ASSIGN_OR_RETURN(o.precision, Precision::parse(absl::GetFlag(FLAGS_dtype), absl::GetFlag(FLAGS_tf32),
                                                 absl::GetFlag(FLAGS_channels_last)));
  RETURN_IF_ERROR(validate(o));
  return o;
}

// The graph of each batch: the same one, or a rotating one-peer graph.
absl::StatusOr<TopologySchedule> topology_schedule(TopologyKind kind, bool dynamic, int size, int local_size) {
  if (dynamic && kind == TopologyKind::kInnerOuterRing) {
    return collectives::inner_outer_ring_schedule(size, local_size);
  }
  if (dynamic && kind == TopologyKind::kInnerOuterExp2) {
    return collectives::inner_outer_exp2_schedule(size, local_size);
  }
  ASSIGN_OR_RETURN(const Topology base, make_topology(kind, size, local_size));
  if (dynamic) return collectives::one_peer_schedule(base);
  return TopologySchedule([base](int64_t) { return base; });
}

// Ranks per machine for the inner-outer graphs: --local_size's blocks of
// consecutive ranks when given (to try a layout on one host), else the
// launcher's, which must be the same on every machine, the ranks of each
// consecutive (Bluefog asserts is_homogeneous() for these graphs; a rank
// with another count would build another graph and its sends would not pair).
absl::StatusOr<int> inner_outer_local_size(const BenchOptions& o, Communicator& world, const Device& device) {
  if (o.local_size > 0) return o.local_size;
  ASSIGN_OR_RETURN(
      const std::vector<double> all,
      collectives::allgather_values(
          world, device, {static_cast<double>(world.local_size()), static_cast<double>(world.local_rank())}));
  std::vector<int> sizes, ranks;
  for (size_t r = 0; r < all.size(); r += 2) {
    sizes.push_back(static_cast<int>(all[r]));
    ranks.push_back(static_cast<int>(all[r + 1]));
  }
  return collectives::uniform_machine_size(sizes, ranks);
}

// The machine of this rank for the hierarchical form: its block of
// --local_size consecutive ranks when given, else the host it runs on.
absl::StatusOr<int> machine_of_rank(const BenchOptions& o, Communicator& world, const Device& device) {
  if (o.local_size > 0) return world.rank() / o.local_size;
  return collectives::machine_index(world, device);
}

// Everything one rank trains with. The communication of a batch depends on
// the distributed optimizer; `step(batch)` runs forward, backward and the
// update.
class Bench {
 public:
  static absl::StatusOr<std::unique_ptr<Bench>> create(const BenchOptions& o, Communicator& world,
                                                       const Device& device) {
    auto b = std::unique_ptr<Bench>(new Bench(o, world));
    RETURN_IF_ERROR(capture([&] { b->build_model(device); }));
    switch (o.dist_optimizer) {
      case DistOptimizer::kGradientAllreduce: {
        collectives::ddp::DdpOptions ddp;
        ddp.broadcast_buffers = false;
        ASSIGN_OR_RETURN(b->ddp_, collectives::ddp::DistributedDataParallel::create(b->model_, &world, ddp));
        break;
      }
      case DistOptimizer::kAllreduce:
        b->combine_ = [&world](int64_t) { return collectives::allreduce_combine(world); };
        break;
      case DistOptimizer::kNeighborAllreduce: {
        const bool inner_outer =
            o.topology == TopologyKind::kInnerOuterRing || o.topology == TopologyKind::kInnerOuterExp2;
        int local_size = 1;  // the other graphs ignore it
        if (inner_outer) {
          ASSIGN_OR_RETURN(local_size, inner_outer_local_size(o, world, device));
        }
        ASSIGN_OR_RETURN(TopologySchedule schedule,
                         topology_schedule(o.topology, o.dynamic_topology, world.world_size(), local_size));
        b->combine_ = [&world, schedule](int64_t batch) {
          return collectives::neighbor_combine(world, schedule(batch));
        };
        break;
      }
      case DistOptimizer::kHierarchicalNeighborAllreduce: {
        ASSIGN_OR_RETURN(const int machine, machine_of_rank(o, world, device));
        ASSIGN_OR_RETURN(b->machines_, collectives::split_by_machine(world, machine));
        // The virtual topology joins machines here, one rank of each.
        const int machines = b->machines_.cross->world_size();
        ASSIGN_OR_RETURN(TopologySchedule schedule, topology_schedule(o.topology, o.dynamic_topology, machines, 1));
        collectives::MachineComms& comms = b->machines_;
        b->combine_ = [&comms, schedule](int64_t batch) {
          return collectives::hierarchical_combine(comms, schedule(batch));
        };
        break;
      }
    }
    // Bluefog broadcasts rank 0's parameters first (DDP does it itself).
    if (b->ddp_ == nullptr) RETURN_IF_ERROR(b->broadcast_parameters());
    // The masters (under mixed precision) start from rank 0's weights.
    RETURN_IF_ERROR(capture([&] { b->make_optimizer(device); }));
    return b;
  }

  // Batches the loss scaler skipped so far (mixed precision); the ranks
  // agree on them (DDP's averaged gradients, or their vote).
  int64_t skipped_steps() const { return precision_->skipped_steps(); }

  // One batch: forward, cross-entropy, backward, and the distributed update
  // (of the f32 masters under mixed precision). Returns the loss (on the
  // device: reading it waits for the batch).
  Tensor step(int64_t batch) {
    if (ddp_ != nullptr) throw_if_error(ddp_->begin_step());
    sgd_->zero_grad();
    const autograd::Variable loss = nn::cross_entropy(model_->forward(autograd::Variable(images_)), targets_);
    precision_->backward(loss);
    if (!value_or_throw(precision_->unscale(batch + 1))) return loss.data();
    if (ddp_ != nullptr) {
      sgd_->step();
    } else {
      std::vector<Tensor> weights, grads;
      for (const auto& [name, p] : precision_->optimized()) {
        weights.push_back(p.data());
        grads.push_back(p.grad());
      }
      throw_if_error(collectives::decentralized_step(weights, grads, kLearningRate, style(), combine_(batch)));
    }
    precision_->after_step();
    return loss.data();
  }

 private:
  Bench(const BenchOptions& o, Communicator& world) : options_(o), world_(world) {}

  // The model in its dtype and the batch it trains on.
  void build_model(const Device& device) {
    model_ = nn::models::resnet(options_.model, options_.num_classes);
    model_->to(device);
    model_->train();
    options_.precision.cast(*model_);
    const int64_t n = options_.batch_size;
    images_ = options_.precision.input(rand({n, 3, options_.image_size, options_.image_size}, {DType::kF32, device}));
    // Random classes, as Bluefog's LongTensor.random_() % 1000.
    const Tensor uniform = rand({n}, {DType::kF64, Device::cpu()});
    std::vector<int64_t> classes;
    for (double u : to_vector<double>(uniform)) classes.push_back(static_cast<int64_t>(u * options_.num_classes));
    targets_ = to(from_vector<int64_t>(classes, {n}), device);
  }

  // Without DDP each rank's gradients are its own: under mixed precision the
  // ranks vote on skipping a step (any overflow skips it on all), so that no
  // rank skips a combine its neighbours run.
  void make_optimizer(const Device& device) {
    optim::MixedPrecision::OverflowVote vote;
    if (ddp_ == nullptr) {
      vote = [this, device](bool found_here) -> absl::StatusOr<bool> {
        ASSIGN_OR_RETURN(const Tensor flag, capture([&] {
                           return full({1}, found_here ? 1.0 : 0.0, {DType::kF32, device});
                         }));
        RETURN_IF_ERROR(world_.allreduce(flag, collectives::ReduceOp::kMax).synchronize());
        return capture([&] { return item<float>(flag) > 0; });
      };
    }
    precision_ = std::make_unique<PrecisionStep>(model_, options_.precision,
                                                 optim::LossScalerOptions::pytorch_grad_scaler(), std::move(vote));
    optim::SgdOptions sgd;
    sgd.lr = kLearningRate;
    sgd_ = std::make_unique<optim::Sgd>(precision_->optimized(), sgd);
  }

  absl::Status broadcast_parameters() {
    for (const autograd::Variable& p : model_->parameters()) RETURN_IF_ERROR(world_.broadcast(p.data(), 0).wait());
    return absl::OkStatus();
  }

  collectives::DecentralizedStyle style() const {
    return options_.style == Style::kAtc ? collectives::DecentralizedStyle::kAtc
                                         : collectives::DecentralizedStyle::kDgd;
  }

  BenchOptions options_;
  Communicator& world_;
  std::shared_ptr<nn::models::ResNet> model_;
  std::unique_ptr<PrecisionStep> precision_;
  std::unique_ptr<optim::Sgd> sgd_;
  std::unique_ptr<collectives::ddp::DistributedDataParallel> ddp_;
  collectives::MachineComms machines_;
  std::function<collectives::Combine(int64_t batch)> combine_;
  Tensor images_;
  Tensor targets_;
};

// Mean and 1.96 standard deviations (NumPy's np.std: the population form).
struct Spread {
  double mean = 0;
  double conf = 0;
};

Spread spread(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, 1.96 * std::sqrt(squares / static_cast<double>(v.size()))};
}

Json spread_json(const Spread& s) {
  Json j = Json::object();
  j["mean"] = s.mean;
  j["conf"] = s.conf;
  return j;
}

Json numbers_json(const std::vector<double>& v) {
  Json j = Json::array();
  for (double x : v) j.push_back(x);
  return j;
}

// The settings a one-rank baseline must share with the run it scales: those
// that change the work of one batch on one device.
constexpr const char* kBaselineSettings[] = {"model", "batch_size", "image_size",   "num_classes",
                                             "dtype", "tf32",       "channels_last"};

// The device kind of a config's "device" ("cuda:3" -> "cuda"): the index is
// the rank's own GPU and may differ.
std::string device_kind(const Json* device) {
  if (device == nullptr || !device->is_string()) return "";
  const std::string& name = device->as_string();
  return name.substr(0, name.find(':'));
}

// The total img/s of a one-rank neighbor_bench report run with this run's
// settings (`config`, as this run's report will hold it).
absl::StatusOr<double> baseline_throughput(const std::string& path, const Json& config) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--baseline=", path, ": ", why));
  };
  ASSIGN_OR_RETURN(const std::string text, read_file(path));
  absl::StatusOr<Json> parsed = parse_json(text);
  if (!parsed.ok()) return bad(parsed.status().message());
  Json& report = *parsed;
  const Json* format = report.find("format");
  if (format == nullptr || !format->is_string() || format->as_string() != "trainstack.neighbor_bench.v1") {
    return bad("not a neighbor_bench report");
  }
  const Json* world = report["config"].find("world_size");
  if (world == nullptr || world->type() != Json::Type::kInt || world->as_int() != 1) {
    return bad("not a one-rank report (its config.world_size is not 1)");
  }
  for (const char* key : kBaselineSettings) {
    const Json* theirs = report["config"].find(key);
    const Json& ours = *config.find(key);
    if (theirs == nullptr || *theirs != ours) {
      return bad(absl::StrCat("its config.", key, " is ", theirs == nullptr ? "missing" : theirs->dump(-1),
                              ", this run's is ", ours.dump(-1),
                              "; scaling efficiency needs a baseline of the same work"));
    }
  }
  if (device_kind(report["config"].find("device")) != device_kind(config.find("device"))) {
    return bad(absl::StrCat("it ran on ", report["config"]["device"].dump(-1), ", this run on ",
                            config.find("device")->dump(-1)));
  }
  const Json* total = report["total"].find("mean");
  if (total == nullptr || (total->type() != Json::Type::kDouble && total->type() != Json::Type::kInt) ||
      !(total->as_double() > 0)) {
    return bad("has no positive total.mean");
  }
  return total->as_double();
}

absl::Status run() {
  ASSIGN_OR_RETURN(const BenchOptions o, options_from_flags());
  ASSIGN_OR_RETURN(const collectives::LaunchEnvironment launch, collectives::discover_environment());
  ASSIGN_OR_RETURN(const Device device, select_device(absl::GetFlag(FLAGS_device), launch.local_rank));
  ASSIGN_OR_RETURN(const collectives::CommunicatorOptions comm_options,
                   collectives::CommunicatorOptions::from_flags_and_env());
  ASSIGN_OR_RETURN(const std::unique_ptr<Communicator> world, collectives::connect_world(launch, device, comm_options));
  const bool leader = world->rank() == 0;
  Json config = options_json(o);
  config["world_size"] = world->world_size();
  config["device"] = device.to_string();
  RETURN_IF_ERROR(check_ranks_share_flags(*world, device, {"json", "baseline"}));
  const std::string report_path = user_path(absl::GetFlag(FLAGS_json));
  RETURN_IF_ERROR(check_report_path(*world, device, report_path, "json"));
  // Only rank 0 reports, so only it reads the baseline (the file may exist on
  // the launching machine alone), and it sends every rank, whatever that
  // rank's own flag, the baseline's throughput: 0 for none, -1 for a
  // refused one, on which every rank stops together.
  std::optional<double> baseline;
  const std::string baseline_path = user_path(absl::GetFlag(FLAGS_baseline));
  const absl::StatusOr<double> read =
      leader && !baseline_path.empty() ? baseline_throughput(baseline_path, config) : absl::StatusOr<double>(0.0);
  ASSIGN_OR_RETURN(const double shared, collectives::broadcast_value(*world, device, read.ok() ? *read : -1));
  if (shared < 0) {
    return said_by_rank_0(leader, leader ? read.status()
                                         : absl::InvalidArgumentError(
                                               "--baseline: rank 0 refused its baseline report (its line says why)"));
  }
  if (shared > 0) baseline = shared;
  const char* unit = device.is_cuda() ? "GPU" : "CPU";
  const auto log = [&](const std::string& line) {
    if (!leader) return;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  ASSIGN_OR_RETURN(const std::unique_ptr<Bench> bench, Bench::create(o, *world, device));

  log(absl::StrCat("Model: ", o.model));
  log(absl::StrCat("Batch size: ", o.batch_size));
  log(absl::StrFormat("Number of %ss: %d", unit, world->world_size()));
  log(absl::StrCat("Distributed optimizer: ", dist_optimizer_name(o.dist_optimizer),
                   ", virtual topology: ", topology_kind_name(o.topology), o.dynamic_topology ? " (dynamic)" : "",
                   ", style: ", style_name(o.style)));
  log(absl::StrCat("Precision: ", o.precision.label()));
  log("Running warmup...");
  int64_t batch = 0;
  const auto run_batches = [&](int count) {
    return capture([&] {
      Tensor loss;
      for (int i = 0; i < count; ++i) loss = bench->step(batch++);
      if (count > 0) to(loss, Device::cpu());  // waits for the device
    });
  };
  RETURN_IF_ERROR(run_batches(o.num_warmup_batches));
  log("Running benchmark...");
  const int64_t skipped_in_warmup = bench->skipped_steps();
  std::vector<double> img_secs;
  for (int k = 0; k < o.num_iters; ++k) {
    const absl::Time start = absl::Now();
    RETURN_IF_ERROR(run_batches(o.num_batches_per_iter));
    img_secs.push_back(o.batch_size * o.num_batches_per_iter / absl::ToDoubleSeconds(absl::Now() - start));
    log(absl::StrFormat("Iter #%d: %.1f img/sec per %s", k, img_secs.back(), unit));
  }

  ASSIGN_OR_RETURN(const std::vector<double> gathered, collectives::allgather_values(*world, device, img_secs));
  std::vector<std::vector<double>> per_rank;  // [rank][iteration]
  for (auto row = gathered.begin(); row != gathered.end(); row += o.num_iters)
    per_rank.emplace_back(row, row + o.num_iters);
  std::vector<double> totals(o.num_iters, 0.0);
  Json per_rank_json = Json::array();
  for (int r = 0; r < world->world_size(); ++r) {
    const Spread s = spread(per_rank[r]);
    log(absl::StrFormat("[%d] Img/sec per %s: %.1f +-%.1f", r, unit, s.mean, s.conf));
    for (int k = 0; k < o.num_iters; ++k) totals[k] += per_rank[r][k];
    Json j = spread_json(s);
    j["rank"] = r;
    per_rank_json.push_back(std::move(j));
  }
  const Spread total = spread(totals);
  log(absl::StrFormat("Total img/sec on %d %s(s): %.1f +-%.1f", world->world_size(), unit, total.mean, total.conf));
  // A skipped step skips the update too, so a mixed-precision run says how
  // many of its timed batches were such.
  const int64_t skipped = bench->skipped_steps() - skipped_in_warmup;
  if (o.precision.mixed()) {
    log(absl::StrFormat("Loss scaler: %d of %d timed batches skipped", skipped, o.num_iters * o.num_batches_per_iter));
  }
  Json scaling;
  if (baseline.has_value()) {
    const double efficiency = total.mean / (world->world_size() * *baseline);
    log(absl::StrFormat("Scaling efficiency against %s: %.1f%% (%d x %.1f img/sec)", absl::GetFlag(FLAGS_baseline),
                        100 * efficiency, world->world_size(), *baseline));
    scaling = Json::object();
    scaling["baseline_report"] = absl::GetFlag(FLAGS_baseline);
    scaling["baseline_img_per_s"] = *baseline;
    scaling["efficiency"] = efficiency;
  }

  if (!leader || report_path.empty()) return absl::OkStatus();
  Json report = Json::object();
  report["format"] = "trainstack.neighbor_bench.v1";
  Json env = describe_environment(device).to_json();
  env["backend"] = world->backend_name();
  report["environment"] = std::move(env);
  report["config"] = std::move(config);
  Json iterations = Json::object();
  Json rows = Json::array();
  for (const std::vector<double>& r : per_rank) rows.push_back(numbers_json(r));
  iterations["per_rank"] = std::move(rows);
  iterations["total"] = numbers_json(totals);
  report["iterations"] = std::move(iterations);
  report["per_rank"] = std::move(per_rank_json);
  report["total"] = spread_json(total);
  report["skipped_steps"] = skipped;
  report["scaling"] = std::move(scaling);
  RETURN_IF_ERROR(write_file_atomically(report_path, report.dump(2) + "\n"));
  log(absl::StrCat("report: ", report_path));
  return absl::OkStatus();
}

}  // namespace
}  // namespace ts::tasks::neighbor_bench

int main(int argc, char** argv) {
  ts::tasks::set_usage(
      "Bluefog's throughput benchmark: img/sec of synthetic ImageNet training under a "
      "distributed optimizer. Run it under tools/launch.");
  absl::ParseCommandLine(argc, argv);
  return ts::tasks::run_to_exit_code("neighbor_bench", ts::tasks::neighbor_bench::run);
}
