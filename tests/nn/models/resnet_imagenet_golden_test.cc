// The ImageNet ResNets against torchvision from the same weights: the fixture
// written by tools/golden/resnet_imagenet_golden.py holds, for resnet50,
// resnext50_32x4d and resnet_tiny (10 classes, a batch of 2 images of
// 3x64x64), in train and in eval mode, the logits and the gradients of the
// input and of every parameter for the loss sum(logits * W), and in train
// mode the batch norms' running statistics after that forward.
//
// No weights travel: both sides fill every floating state dict entry by one
// counter-based rule keyed by the entry's name (fill() here and in the
// script), so a name that is not torchvision's gets other values and fails.
// Gradients come as signatures (sum, sum |g|, sum g^2, max |g|, a projection
// on pseudo-random weights, six entries at fixed indices), which any error
// above the tolerance moves. A fixture from torchvision's "v1" bottleneck
// (the stride on the first 1x1 conv instead of the 3x3) fails every model
// test here: the logits move by 21-65% of their scale, the median gradient's
// sum of squares by 3-24%, and every gradient's signature but fc.bias's (the
// loss weights' sum either way) by over 1e-10.
//
// In f64 the two frameworks differ by their summation orders only: measured
// within 7e-13 of each quantity's scale, checked to 1e-10. In f32, eval mode
// holds the 1e-5 standard (measured 2e-6), gradients included; training mode
// does not, for PyTorch against its own f64 either (see below), so its
// gradients are the f64 test's business.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/models/resnet.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn::models {
namespace {

using ::ts::testing::value_or_die;

constexpr char kFixture[] = "tests/nn/models/testdata/resnet_imagenet_golden.tsckpt";
constexpr int64_t kClasses = 10;
constexpr int64_t kBatch = 2;
constexpr int64_t kSize = 64;
constexpr double kF64Tolerance = 1e-10;
constexpr double kF32Tolerance = 1e-5;

// ---- The fill rule of resnet_imagenet_golden.py.

uint32_t key_of(const std::string& name) {  // FNV-1a
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

// A value in [-1, 1), a multiple of 2^-23: lowbias32 of (i * golden ratio + key).
double unit(uint32_t key, int64_t i) {
  uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u + key;
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return (static_cast<double>(x >> 8) - 8388608.0) / 8388608.0;
}

// Conv and linear weights u * sqrt(6 / fan_in); batch-norm weights and
// running variances 1 + u / 4; biases and running means u / 4.
Tensor fill(const std::string& name, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const uint32_t key = key_of(name);
  const bool one_centred = absl::EndsWith(name, "running_var") || absl::EndsWith(name, ".weight");
  const double bound = shape.size() >= 2 ? std::sqrt(6.0 / static_cast<double>(n / shape[0])) : 0;
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) {
    const double u = unit(key, i);
    values[i] = shape.size() >= 2 ? u * bound : one_centred ? 1.0 + u / 4 : u / 4;
  }
  return from_vector<double>(values, shape);
}

void fill_model(const Module& model) {
  for (const auto& [name, t] : model.state_dict()) {
    if (t.dtype() == DType::kF64 || t.dtype() == DType::kF32) {
      copy_(t, fill(name, t.shape()));
    } else {
      fill_(t, 0);  // num_batches_tracked
    }
  }
}

// ---- Comparison, each error relative to its quantity's scale; the worst
// one is kept for the log.

struct Worst {
  double error = 0;
  std::string what;
  void add(double e, const std::string& where) {
    if (e > error || std::isnan(e)) {
      error = e;
      what = where;
    }
  }
};

// The script's signature(): sum, sum |g|, sum g^2, max |g|, the projection on
// unit("signature", i), and the entries at (j * (n - 1)) / 5 for j in 0..5.
std::vector<double> signature(const Tensor& t) {
  const std::vector<double> g = to_vector<double>(t);
  const int64_t n = static_cast<int64_t>(g.size());
  const uint32_t key = key_of("signature");
  double sum = 0, l1 = 0, l2 = 0, max = 0, projection = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += g[i];
    l1 += std::abs(g[i]);
    l2 += g[i] * g[i];
    max = std::max(max, std::abs(g[i]));
    projection += unit(key, i) * g[i];
  }
  std::vector<double> s = {sum, l1, l2, max, projection};
  for (int64_t j = 0; j < 6; ++j) s.push_back(g[(j * (n - 1)) / 5]);
  return s;
}

// Sums and the projection against sum |g| (what bounds their rounding
// error), sum g^2 and max |g| against themselves, entries against max |g|.
void expect_signature(const Tensor& actual, const Tensor& expected_signature, double tol, const std::string& what,
                      Worst& worst) {
  const std::vector<double> a = signature(actual);
  const std::vector<double> e = to_vector<double>(expected_signature);
  ASSERT_EQ(a.size(), e.size()) << what;
  static constexpr const char* kParts[] = {"sum", "sum |g|", "sum g^2", "max |g|", "projection"};
  for (size_t k = 0; k < a.size(); ++k) {
    const double scale = k == 2 ? e[2] : k == 0 || k == 1 || k == 4 ? e[1] : e[3];
    const double error = std::abs(a[k] - e[k]) / scale;
    const std::string part = k < 5 ? kParts[k] : absl::StrCat("entry ", k - 5);
    worst.add(error, absl::StrCat(what, " ", part));
    EXPECT_LE(error, tol) << what << " " << part << ": " << a[k] << " vs torchvision's " << e[k] << " (scale " << scale
                          << ")";
  }
}

void expect_logits(const Tensor& actual, const Tensor& expected, double tol, const std::string& what, Worst& worst) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const std::vector<double> a = to_vector<double>(actual);
  const std::vector<double> e = to_vector<double>(expected);
  double scale = 0;
  for (double v : e) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    const double error = std::abs(a[i] - e[i]) / scale;
    worst.add(error, what);
    EXPECT_LE(error, tol) << what << " element " << i << ": " << a[i] << " vs torchvision's " << e[i] << " (scale "
                          << scale << ")";
  }
}

class ResNetImageNetGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (auto& [name, t] : value_or_die(load_tensors(kFixture))) fixture_[name] = t;
  }

  const Tensor& expected(const std::string& name) const {
    const auto it = fixture_.find(name);
    if (it == fixture_.end()) {
      ADD_FAILURE() << "no fixture entry " << name << " (a name torchvision does not have?)";
      static const Tensor kNone = zeros({11}, {.dtype = DType::kF64});
      return kNone;
    }
    return it->second;
  }

  // The model in `dtype` from the shared weights, one forward and backward
  // of sum(logits * W) in train or eval mode, checked against the fixture.
  void check(DType dtype, bool train, bool gradients, double tol) {
    const std::string& name = GetParam();
    const std::string prefix = absl::StrCat(name, train ? ".train." : ".eval.");
    const std::shared_ptr<ResNet> model = resnet(name, kClasses);
    model->to(dtype);
    fill_model(*model);
    model->train(train);
    const Variable input(to(fill("input", {kBatch, 3, kSize, kSize}), dtype), /*requires_grad=*/true);
    const Variable logits = model->forward(input);
    Worst worst;
    expect_logits(logits.data(), expected(prefix + "logits"), tol, prefix + "logits", worst);
    if (gradients) {
      autograd::sum(logits * Variable(to(fill("loss_weight", {kBatch, kClasses}), dtype))).backward();
      expect_signature(input.grad(), expected(prefix + "grad.input"), tol, prefix + "grad.input", worst);
      int64_t checked = 0;
      for (const auto& [parameter, p] : model->named_parameters()) {
        ASSERT_TRUE(p.grad().defined()) << parameter;
        expect_signature(p.grad(), expected(prefix + "grad." + parameter), tol, prefix + "grad." + parameter, worst);
        ++checked;
      }
      // Every gradient torchvision has is one of ours.
      int64_t in_fixture = 0;
      for (const auto& [entry, t] : fixture_) in_fixture += absl::StartsWith(entry, prefix + "grad.");
      EXPECT_EQ(checked + 1, in_fixture);
    }
    if (train) {
      for (const auto& [buffer, t] : model->named_buffers()) {
        if (absl::EndsWith(buffer, "num_batches_tracked")) {
          EXPECT_EQ(item<int64_t>(t), 1) << buffer;
        } else {
          expect_signature(t, expected(prefix + buffer), tol, prefix + buffer, worst);
        }
      }
    }
    std::printf("%s %s %s: worst error %.3g of scale (%s)\n", name.c_str(), std::string(dtype_name(dtype)).c_str(),
                train ? "train" : "eval", worst.error, worst.what.c_str());
  }

  std::map<std::string, Tensor> fixture_;
};

TEST_P(ResNetImageNetGoldenTest, TrainingForwardAndBackwardInFloat64MatchTorchvision) {
  check(DType::kF64, /*train=*/true, /*gradients=*/true, kF64Tolerance);
}

TEST_P(ResNetImageNetGoldenTest, EvalForwardAndBackwardInFloat64MatchTorchvision) {
  check(DType::kF64, /*train=*/false, /*gradients=*/true, kF64Tolerance);
}

TEST_P(ResNetImageNetGoldenTest, EvalForwardAndBackwardInFloat32MatchTorchvision) {
  check(DType::kF32, /*train=*/false, /*gradients=*/true, kF32Tolerance);
}

// Batch statistics of 8 values per channel (layer4 at 2x2, batch 2) through
// 16 blocks amplify f32 rounding: PyTorch's own f32 training logits are
// 4.5e-5 (resnet50) and 6.5e-5 (resnext50_32x4d) of scale from its f64 ones,
// its gradients 1-2%. Ours measured 5.8e-5 and 8.3e-5 from torchvision's f64
// logits; a wrong layer moves them by tens of percents.
TEST_P(ResNetImageNetGoldenTest, TrainingLogitsInFloat32StayCloseToTorchvision) {
  check(DType::kF32, /*train=*/true, /*gradients=*/false, 3e-4);
}

INSTANTIATE_TEST_SUITE_P(Models, ResNetImageNetGoldenTest,
                         ::testing::Values("resnet50", "resnext50_32x4d", "resnet_tiny"));

// The rule itself, bit for bit: its first values as the script computed them.
TEST(ResNetImageNetGoldenFillTest, FillRuleMatchesTheScript) {
  std::map<std::string, Tensor> fixture;
  for (auto& [name, t] : value_or_die(load_tensors(kFixture))) fixture[name] = t;
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{{"input", {kBatch, 3, kSize, kSize}},
                                                                              {"loss_weight", {kBatch, kClasses}},
                                                                              {"conv1.weight", {64, 3, 7, 7}},
                                                                              {"layer1.0.bn1.weight", {64}},
                                                                              {"layer1.0.bn1.running_var", {64}},
                                                                              {"fc.bias", {kClasses}}}) {
    const std::vector<double> ours = to_vector<double>(fill(name, shape));
    const std::vector<double> theirs = to_vector<double>(fixture.at("fill." + name));
    ASSERT_EQ(theirs.size(), 8u) << name;
    for (size_t i = 0; i < theirs.size(); ++i) EXPECT_EQ(ours[i], theirs[i]) << name << " element " << i;
  }
}

}  // namespace
}  // namespace ts::nn::models
