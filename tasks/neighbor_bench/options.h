// The settings of a neighbor_bench run, with Bluefog's flag vocabulary
// (examples/pytorch_benchmark.py): parsing, validation, the virtual topology
// they name, and the config section of the report.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "collectives/topology.h"
#include "tasks/common/precision.h"

namespace ts::tasks::neighbor_bench {

enum class DistOptimizer { kNeighborAllreduce, kHierarchicalNeighborAllreduce, kAllreduce, kGradientAllreduce };
enum class TopologyKind { kPower2, kRing, kMesh, kStar, kInnerOuterRing, kInnerOuterExp2 };
enum class Style { kAtc, kDgd };

struct BenchOptions {
  std::string model = "resnet50";
  int batch_size = 32;
  int num_warmup_batches = 10;
  int num_batches_per_iter = 10;
  int num_iters = 10;
  int num_classes = 1000;
  int image_size = 224;
  DistOptimizer dist_optimizer = DistOptimizer::kNeighborAllreduce;
  TopologyKind topology = TopologyKind::kPower2;
  bool dynamic_topology = false;
  Style style = Style::kDgd;
  int local_size = -1;  // ranks per machine; -1: the launcher's
  Precision precision;  // f32 row-major, as Bluefog's script
};

// "horovod" is gradient_allreduce, as in Bluefog's script. Errors list the
// accepted names.
absl::StatusOr<DistOptimizer> parse_dist_optimizer(absl::string_view name);
absl::StatusOr<TopologyKind> parse_topology_kind(absl::string_view name);
absl::StatusOr<Style> parse_style(absl::string_view name);
absl::string_view dist_optimizer_name(DistOptimizer d);
absl::string_view topology_kind_name(TopologyKind t);
absl::string_view style_name(Style s);

// Counts positive (warm-up batches may be 0), image_size >= 32, a known model.
absl::Status validate(const BenchOptions& o);

// The graph `kind` names over `size` ranks, `local_size` per machine.
absl::StatusOr<collectives::Topology> make_topology(TopologyKind kind, int size, int local_size);

Json options_json(const BenchOptions& o);

}  // namespace ts::tasks::neighbor_bench
