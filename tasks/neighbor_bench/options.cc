#include "tasks/neighbor_bench/options.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nn/models/resnet.h"

namespace ts::tasks::neighbor_bench {
namespace {

template <typename Enum>
using Names = std::pair<Enum, absl::string_view>;

constexpr Names<DistOptimizer> kDistOptimizers[] = {
    {DistOptimizer::kNeighborAllreduce, "neighbor_allreduce"},
    {DistOptimizer::kHierarchicalNeighborAllreduce, "hierarchical_neighbor_allreduce"},
    {DistOptimizer::kAllreduce, "allreduce"},
    {DistOptimizer::kGradientAllreduce, "gradient_allreduce"},
};
constexpr Names<TopologyKind> kTopologies[] = {
    {TopologyKind::kPower2, "power2"},
    {TopologyKind::kRing, "ring"},
    {TopologyKind::kMesh, "mesh"},
    {TopologyKind::kStar, "star"},
    {TopologyKind::kInnerOuterRing, "inner_outer_ring"},
    {TopologyKind::kInnerOuterExp2, "inner_outer_exp2"},
};
constexpr Names<Style> kStyles[] = {{Style::kAtc, "atc"}, {Style::kDgd, "dgd"}};

template <typename Enum, size_t N>
absl::StatusOr<Enum> parse(absl::string_view flag, absl::string_view name, const Names<Enum> (&names)[N]) {
  for (const auto& [value, n] : names) {
    if (n == name) return value;
  }
  std::vector<absl::string_view> known;
  for (const auto& entry : names) known.push_back(entry.second);
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": unknown value '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
}

template <typename Enum, size_t N>
absl::string_view name_of(Enum value, const Names<Enum> (&names)[N]) {
  for (const auto& [v, n] : names) {
    if (v == value) return n;
  }
  return "?";
}

}  // namespace

absl::StatusOr<DistOptimizer> parse_dist_optimizer(absl::string_view name) {
  if (name == "horovod") return DistOptimizer::kGradientAllreduce;
  return parse("dist_optimizer", name, kDistOptimizers);
}
absl::StatusOr<TopologyKind> parse_topology_kind(absl::string_view name) {
  return parse("virtual_topology", name, kTopologies);
}
absl::StatusOr<Style> parse_style(absl::string_view name) { return parse("style", name, kStyles); }

absl::string_view dist_optimizer_name(DistOptimizer d) { return name_of(d, kDistOptimizers); }
absl::string_view topology_kind_name(TopologyKind t) { return name_of(t, kTopologies); }
absl::string_view style_name(Style s) { return name_of(s, kStyles); }

absl::Status validate(const BenchOptions& o) {
  const std::vector<std::string> models = nn::models::resnet_names();
  if (absl::c_find(models, o.model) == models.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--model: unknown model '", o.model, "' (known: ", absl::StrJoin(models, ", "), ")"));
  }
  for (const auto& [flag, value, least] : {std::tuple<const char*, int, int>{"batch_size", o.batch_size, 1},
                                           {"num_warmup_batches", o.num_warmup_batches, 0},
                                           {"num_batches_per_iter", o.num_batches_per_iter, 1},
                                           {"num_iters", o.num_iters, 1},
                                           {"num_classes", o.num_classes, 1},
                                           {"image_size", o.image_size, 32}}) {
    if (value < least) return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": must be >= ", least));
  }
  if (o.local_size == 0 || o.local_size < -1) {
    return absl::InvalidArgumentError(absl::StrCat("--local_size=", o.local_size, ": must be >= 1 (or -1)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<collectives::Topology> make_topology(TopologyKind kind, int size, int local_size) {
  using collectives::Topology;
  switch (kind) {
    case TopologyKind::kPower2:
      return Topology::exponential_two(size);
    case TopologyKind::kRing:
      return Topology::ring(size);
    case TopologyKind::kMesh:
      return Topology::mesh(size);
    case TopologyKind::kStar:
      return Topology::star(size);
    case TopologyKind::kInnerOuterRing:
      return Topology::inner_outer_ring(size, local_size);
    case TopologyKind::kInnerOuterExp2:
      return Topology::inner_outer_exp2(size, local_size);
  }
  return absl::InternalError("unknown topology kind");
}

Json options_json(const BenchOptions& o) {
  Json j = Json::object();
  j["model"] = o.model;
  j["batch_size"] = o.batch_size;
  j["dist_optimizer"] = dist_optimizer_name(o.dist_optimizer);
  j["virtual_topology"] = topology_kind_name(o.topology);
  j["dynamic_topology"] = o.dynamic_topology;
  j["style"] = style_name(o.style);
  j["num_warmup_batches"] = o.num_warmup_batches;
  j["num_iters"] = o.num_iters;
  j["num_batches_per_iter"] = o.num_batches_per_iter;
  j["num_classes"] = o.num_classes;
  j["image_size"] = o.image_size;
  j["local_size"] = o.local_size;
  const Json precision = o.precision.to_json();
  for (const auto& [key, value] : precision.as_object()) j[key] = value;
  return j;
}

}  // namespace ts::tasks::neighbor_bench
