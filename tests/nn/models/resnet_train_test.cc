// A small CIFAR ResNet (depth 8) learns a synthetic two-class image set with a
// hand-written SGD loop (the loss falls), and a run checkpointed midway and
// resumed in a fresh model ends with the same parameters bit for bit.
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/losses.h"
#include "nn/models/resnet_cifar.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn::models {
namespace {

struct Batch {
  Tensor images;  // [16, 3, 32, 32]
  Tensor labels;  // i64 [16]
};

// Class 1 images are brighter in their top half, class 0 in their bottom
// half, under noise of the same size as the signal.
Batch synthetic_batch(uint64_t seed) {
  Generator gen(seed);
  const int64_t n = 16;
  Tensor images = normal({n, 3, 32, 32}, 0, 1, {}, &gen);
  std::vector<int64_t> labels(n);
  float* px = images.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    labels[i] = i % 2;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t h = 0; h < 32; ++h) {
        const bool top = h < 16;
        const float shift = (top == (labels[i] == 1)) ? 1.0f : -1.0f;
        for (int64_t w = 0; w < 32; ++w) px[((i * 3 + c) * 32 + h) * 32 + w] += shift;
      }
    }
  }
  return {images, from_vector<int64_t>(labels, {n})};
}

// Returns the loss before the update.
double sgd_step(ResNetCifar& model, const Batch& batch, double lr) {
  model.zero_grad();
  const Variable loss = cross_entropy(model.forward(Variable(batch.images)), batch.labels);
  loss.backward();
  autograd::NoGradGuard no_grad;
  for (const Variable& p : model.parameters()) copy_(p.data(), p.data() - p.grad() * lr);
  return item<double>(loss.data());
}

TEST(ResNetTrainTest, LossFalls) {
  manual_seed(1);
  const std::shared_ptr<ResNetCifar> model = resnet_cifar(8, 2);
  const Batch batch = synthetic_batch(2);
  std::vector<double> losses;
  for (int step = 0; step < 12; ++step) losses.push_back(sgd_step(*model, batch, 0.1));
  std::string trace;
  for (double l : losses) trace += std::to_string(l) + " ";
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << trace;
  // Evaluated with the running statistics, the model separates the classes too.
  model->eval();
  const Variable logits = model->forward(Variable(batch.images));
  EXPECT_GE(accuracy(logits.data(), batch.labels), 0.75);
}

TEST(ResNetTrainTest, ResumeFromCheckpointIsExact) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "resnet_resume.ckpt").string();
  const Batch batch = synthetic_batch(3);
  manual_seed(4);
  const std::shared_ptr<ResNetCifar> straight = resnet_cifar(8, 2);
  for (int step = 0; step < 2; ++step) sgd_step(*straight, batch, 0.05);
  ASSERT_OK(save_state_dict(*straight, path));
  for (int step = 0; step < 2; ++step) sgd_step(*straight, batch, 0.05);

  manual_seed(5);  // different initial weights: all of them must come from the file
  const std::shared_ptr<ResNetCifar> resumed = resnet_cifar(8, 2);
  ASSERT_OK(load_state_dict(*resumed, path));
  for (int step = 0; step < 2; ++step) sgd_step(*resumed, batch, 0.05);

  const NamedTensors a = straight->state_dict(), b = resumed->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(std::memcmp(a[i].second.raw_data(), b[i].second.raw_data(), a[i].second.numel() * a[i].second.itemsize()),
              0)
        << a[i].first;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ts::nn::models
