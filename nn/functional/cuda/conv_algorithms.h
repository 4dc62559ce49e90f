// Which of cuDNN's convolution algorithms a call may use, from the perf
// results of its Get (heuristic) and Find (timed) calls. Host logic only,
// apart from conv.cc's device calls, so that it is tested without a GPU.
//
// Under deterministic algorithms (tensor/precision.h) only the results cuDNN
// marks CUDNN_DETERMINISTIC count, as with PyTorch's
// torch.backends.cudnn.deterministic: some fast algorithms (among them
// backward-filter ones that split the reduction over the batch) add their
// partial sums with atomics, so their low bits vary run to run; and they
// come in the heuristic's order, not timed (conv.cc).
#pragma once

#include <cudnn.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

#include "base/error.h"

namespace ts::nn::functional::cudnn {

// Candidates needing more workspace than this are not considered.
inline constexpr size_t kMaxConvWorkspace = size_t{1} << 30;

struct ConvAlgorithm {
  int algo;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  cudnnMathType_t math;
  size_t workspace;
};

// Whether a perf result may be used at all: it ran (or would run), and it is
// deterministic when that is required.
template <typename Perf>
bool admissible(const Perf& perf, bool deterministic) {
  return perf.status == CUDNN_STATUS_SUCCESS && (!deterministic || perf.determinism == CUDNN_DETERMINISTIC);
}

// Each workspace size an admissible heuristic candidate asks for, within the
// cap, largest first: the sizes the Find call may time them in.
template <typename Perf>
std::vector<size_t> candidate_workspaces(const std::vector<Perf>& candidates, int returned, bool deterministic) {
  std::vector<size_t> sizes;
  for (int i = 0; i < returned; ++i) {
    if (admissible(candidates[i], deterministic) && candidates[i].memory <= kMaxConvWorkspace) {
      sizes.push_back(candidates[i].memory);
    }
  }
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// The admissible results of a Get or Find call whose workspace fits
// `workspace`, in cuDNN's order (the heuristic's, or fastest first). None is an error naming the direction
// (`what`) and, when it narrowed the choice, the determinism requirement.
template <typename Perf>
std::vector<ConvAlgorithm> usable_algorithms(const std::vector<Perf>& results, int returned, size_t workspace,
                                             bool deterministic, const char* what) {
  std::vector<ConvAlgorithm> out;
  for (int i = 0; i < returned; ++i) {
    if (admissible(results[i], deterministic) && results[i].memory <= workspace) {
      out.push_back(ConvAlgorithm{static_cast<int>(results[i].algo), results[i].mathType, results[i].memory});
    }
  }
  if (out.empty()) {
    throw_error(
        absl::StatusCode::kInternal, "convolution: cuDNN found no working ", deterministic ? "deterministic " : "",
        what, " algorithm",
        deterministic ? " for this shape; allow nondeterministic algorithms (set_deterministic_algorithms)" : "");
  }
  return out;
}

}  // namespace ts::nn::functional::cudnn
