// Which cuDNN convolution algorithms a call may use, from hand-made perf
// results (host logic; no GPU needed): failed and oversized candidates are
// dropped, cuDNN's order is kept, and deterministic mode keeps only the
// results cuDNN marks deterministic, or says that none is.
#include "nn/functional/cuda/conv_algorithms.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional::cudnn {
namespace {

cudnnConvolutionBwdFilterAlgoPerf_t perf(cudnnConvolutionBwdFilterAlgo_t algo, size_t memory, bool deterministic,
                                         cudnnStatus_t status = CUDNN_STATUS_SUCCESS) {
  cudnnConvolutionBwdFilterAlgoPerf_t p{};
  p.algo = algo;
  p.status = status;
  p.memory = memory;
  p.determinism = deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
  p.mathType = CUDNN_TENSOR_OP_MATH;
  return p;
}

// As a Find call returns them, fastest first.
std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> results() {
  return {
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 0, /*deterministic=*/false),
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 4096, /*deterministic=*/false),
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, 1 << 20, true, CUDNN_STATUS_NOT_SUPPORTED),
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, 1 << 20, true),
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 2048, true),
      // Past what the Find call said it returned.
      perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, 0, true),
  };
}

std::vector<int> algos(const std::vector<ConvAlgorithm>& chosen) {
  std::vector<int> out;
  for (const ConvAlgorithm& a : chosen) out.push_back(a.algo);
  return out;
}

TEST(ConvAlgorithmsTest, AnyWorkingAlgorithmInCudnnsOrderByDefault) {
  const std::vector<ConvAlgorithm> chosen = usable_algorithms(results(), 5, 1 << 20, false, "backward-filter");
  EXPECT_EQ(algos(chosen), (std::vector<int>{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3,
                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED,
                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1}));
  EXPECT_EQ(chosen[1].workspace, 4096u);
  EXPECT_EQ(chosen[1].math, CUDNN_TENSOR_OP_MATH);
  // A smaller workspace leaves out what needs more.
  EXPECT_EQ(algos(usable_algorithms(results(), 5, 4096, false, "backward-filter")),
            (std::vector<int>{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3,
                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1}));
}

TEST(ConvAlgorithmsTest, DeterministicModeKeepsOnlyDeterministicOnes) {
  EXPECT_EQ(
      algos(usable_algorithms(results(), 5, 1 << 20, true, "backward-filter")),
      (std::vector<int>{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1}));
  EXPECT_EQ(algos(usable_algorithms(results(), 5, 2048, true, "backward-filter")),
            (std::vector<int>{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1}));
}

TEST(ConvAlgorithmsTest, NoneLeftIsAnErrorThatSaysWhy) {
  ts::testing::expect_throws(absl::StatusCode::kInternal,
                             {"no working deterministic backward-filter algorithm", "set_deterministic_algorithms"},
                             [] { usable_algorithms(results(), 2, 1 << 20, true, "backward-filter"); });
  ts::testing::expect_throws(absl::StatusCode::kInternal, {"no working forward algorithm"}, [] {
    const std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> none_fit = {
        perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, 0, true, CUDNN_STATUS_NOT_SUPPORTED),
        perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, 4096, false)};
    usable_algorithms(none_fit, 2, 0, false, "forward");
  });
}

TEST(ConvAlgorithmsTest, SearchWorkspacesAreTheAdmissibleCandidatesLargestFirst) {
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> candidates = results();
  // Over the cap, and a second one asking for a size already listed.
  candidates.insert(candidates.begin() + 5, {perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, kMaxConvWorkspace + 1, true),
                                             perf(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 2048, true)});
  EXPECT_EQ(candidate_workspaces(candidates, 7, false), (std::vector<size_t>{1 << 20, 4096, 2048, 0}));
  EXPECT_EQ(candidate_workspaces(candidates, 7, true), (std::vector<size_t>{1 << 20, 2048}));
}

}  // namespace
}  // namespace ts::nn::functional::cudnn
