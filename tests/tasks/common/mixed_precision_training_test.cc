// Mixed-precision training through the trainer (--dtype=f16 / bf16, apex O2:
// the model in the 16-bit dtype but batch norm, f32 master weights, dynamic
// loss scaling) of a small CNN on Fashion-MNIST on the CPU, where the 16-bit
// dtypes compute in f32 and round on store: from the same seed and data (3
// epochs over 12,800 training images, cosine decay) it reaches the f32 run's
// test accuracy within 0.5 points, the report says what
// the loss scaler did, and a run stopped mid-way resumes to the very same
// parameters, masters and scale as the run that went through. With
// --channels_last the same network trains to the same parameters as
// row-major, to within f32 summation order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/json.h"
#include "base/status_macros.h"
#include "data/sets/image_classification.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/pooling.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "tasks/common/classification.h"
#include "tasks/common/trainer.h"
#include "tensor/random.h"
#include "tests/data/readers/fashion_mnist_testing.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

// The first `n` examples of a dataset.
class FirstN final : public data::Dataset {
 public:
  FirstN(std::shared_ptr<const data::Dataset> all, int64_t n) : all_(std::move(all)), n_(n) {}
  int64_t size() const override { return n_; }
  absl::StatusOr<data::Example> get(int64_t index) const override { return all_->get(index); }

 private:
  std::shared_ptr<const data::Dataset> all_;
  int64_t n_;
};

struct Trained {
  double accuracy = 0;
  std::vector<Tensor> parameters;  // on the CPU, in the model's dtypes
  Json report;
  // The batches that reached the CNN's last layers channels-last, and not.
  int64_t channels_last_batches = 0, row_major_batches = 0;
};

// Passes its input on, counting the batches that reached it channels-last
// and those that did not: placed after the CNN's last pooling, it tells
// whether that layout survived every layer before it.
class LayoutProbe final : public nn::Module {
 public:
  LayoutProbe() : Module("LayoutProbe") {}
  autograd::Variable forward(const autograd::Variable& x) {
    ++(x.data().suggest_memory_format() == MemoryFormat::kChannelsLast ? channels_last : row_major);
    return x;
  }
  int64_t channels_last = 0, row_major = 0;
};

std::shared_ptr<nn::Sequential> small_cnn(std::shared_ptr<LayoutProbe> probe) {
  const nn::functional::ConvOptions<2> same{.padding = {1, 1}};
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(1, 8, std::array<int64_t, 2>{3, 3}, same, false),
      std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(nn::functional::Pool2dOptions{}),
      std::make_shared<nn::Conv2d>(8, 16, std::array<int64_t, 2>{3, 3}, same, false),
      std::make_shared<nn::BatchNorm2d>(16), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(nn::functional::Pool2dOptions{}), std::move(probe),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(16 * 8 * 8, 10));
}

// `epochs` epochs of `steps` steps of batch 64 over the first images of the
// training set (stopped after `max_steps` when positive), each followed by
// the test set.
absl::StatusOr<Trained> train(const std::string& name, TaskConfig::DType dtype, int epochs, int64_t steps,
                              int64_t max_steps = 0, bool resume = false, bool channels_last = false) {
  TaskConfig config;
  config.set_name("small_cnn");
  config.set_seed(7);
  config.set_epochs(epochs);
  // Decayed to 0, so that the last model's accuracy is a converged one's
  // rather than a snapshot of a noisy trajectory.
  config.set_lr_schedule(TaskConfig::COSINE);
  config.set_max_steps(max_steps);
  config.set_batch_size(64);
  config.set_num_workers(0);
  config.mutable_sgd()->set_lr(0.05);
  config.mutable_sgd()->set_momentum(0.9);
  config.set_device("cpu");
  config.set_dtype(dtype);
  config.set_channels_last(channels_last);
  config.set_warmup_steps(1);
  config.set_target_metric("accuracy");
  config.set_target_value(0.99);
  config.set_eval_every_epochs(1);
  const std::string root = join_path(::testing::TempDir(), name);
  config.set_output_dir(join_path(root, "out"));
  config.set_checkpoint_dir(join_path(root, "ckpt"));
  config.set_resume(resume);
  data::ImageClassificationOptions options;  // Fashion-MNIST from Debian's package
  ASSIGN_OR_RETURN(data::ImageClassificationData images, data::open_image_classification(options));
  // Without augmentation, so that the runs differ only in precision.
  TrainingData data{std::make_shared<FirstN>(images.train, steps * 64), images.test, images.test_transform,
                    images.test_transform, images.description};
  manual_seed(config.seed());
  const auto probe = std::make_shared<LayoutProbe>();
  const auto model = small_cnn(probe);
  ClassificationRecipe recipe(std::move(data), nn::Handle(model), cross_entropy_objective());
  TrainerOptions trainer_options;
  trainer_options.progress_out = nullptr;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(config, Device::cpu(), recipe, trainer_options));
  ASSIGN_OR_RETURN(const RunSummary summary, trainer->run());
  (void)summary;
  Trained t;
  for (const autograd::Variable& p : model->parameters()) t.parameters.push_back(clone(p.data()));
  t.channels_last_batches = probe->channels_last;
  t.row_major_batches = probe->row_major;
  ASSIGN_OR_RETURN(const std::string text, read_file(trainer->report_path()));
  ASSIGN_OR_RETURN(t.report, parse_json(text));
  const Json* records = t.report.find("epochs");
  if (records != nullptr && !records->as_array().empty()) {
    t.accuracy = records->as_array().back().find("eval")->find("accuracy")->as_double();
  }
  return t;
}

TEST(MixedPrecisionTrainingTest, F16AndBf16ReachTheF32AccuracyWithinHalfAPoint) {
  TS_SKIP_WITHOUT_FASHION_MNIST();
  ASSERT_OK_AND_ASSIGN(const Trained f32, train("f32", TaskConfig::F32, 3, 200));
  EXPECT_GT(f32.accuracy, 0.8);  // it learned: chance is 0.1
  EXPECT_EQ(f32.report.find("mixed_precision"), nullptr);
  for (const TaskConfig::DType dtype : {TaskConfig::F16, TaskConfig::BF16}) {
    SCOPED_TRACE(TaskConfig::DType_Name(dtype));
    ASSERT_OK_AND_ASSIGN(const Trained mixed, train(TaskConfig::DType_Name(dtype), dtype, 3, 200));
    std::printf("%s: test accuracy %.4f (f32: %.4f)\n", TaskConfig::DType_Name(dtype).c_str(), mixed.accuracy,
                f32.accuracy);
    // Issue 16's test: it reaches the f32 accuracy to within half a point.
    // Rounding makes the runs part ways, and at 3 epochs a run may end a
    // point above as well (f16 86.43% against 85.56% with 2026-11-28's data
    // order), so only falling short counts.
    EXPECT_GE(mixed.accuracy, f32.accuracy - 0.005);
    // The model is in the 16-bit dtype but for batch norm's parameters.
    const DType want = dtype == TaskConfig::F16 ? DType::kF16 : DType::kBF16;
    EXPECT_EQ(mixed.parameters[0].dtype(), want);         // conv
    EXPECT_EQ(mixed.parameters[1].dtype(), DType::kF32);  // batch norm weight
    EXPECT_EQ(mixed.parameters.back().dtype(), want);     // linear bias
    const Json* report = mixed.report.find("extra")->find("mixed_precision");
    ASSERT_NE(report, nullptr);
    EXPECT_EQ(report->find("dtype")->as_string(), dtype_name(want));
    ASSERT_NE(report->find("skipped_steps"), nullptr);
    EXPECT_GT(report->find("loss_scale")->as_double(), 0);
  }
}

TEST(MixedPrecisionTrainingTest, AStoppedRunResumesToTheSameParametersAndScale) {
  TS_SKIP_WITHOUT_FASHION_MNIST();
  ASSERT_OK_AND_ASSIGN(const Trained through, train("through", TaskConfig::F16, 1, 40));
  ASSERT_OK_AND_ASSIGN(const Trained stopped, train("stopped", TaskConfig::F16, 1, 40, /*max_steps=*/15));
  // It stopped mid-epoch, so the resumed run has steps left to take.
  ASSERT_EQ(stopped.report.find("run")->find("global_step")->as_int(), 15);
  ASSERT_OK_AND_ASSIGN(const Trained resumed, train("stopped", TaskConfig::F16, 1, 40, 0, /*resume=*/true));
  EXPECT_TRUE(resumed.report.find("run")->find("resumed")->as_bool());
  ASSERT_EQ(resumed.parameters.size(), through.parameters.size());
  for (size_t i = 0; i < through.parameters.size(); ++i) {
    ::ts::testing::expect_equal(resumed.parameters[i], ::ts::testing::ref_of(through.parameters[i]),
                                "parameter " + std::to_string(i));
  }
  const Json* a = through.report.find("extra")->find("mixed_precision");
  const Json* b = resumed.report.find("extra")->find("mixed_precision");
  EXPECT_EQ(a->find("loss_scale")->as_double(), b->find("loss_scale")->as_double());
  EXPECT_EQ(a->find("skipped_steps")->as_int(), b->find("skipped_steps")->as_int());
}

// Every layer of the CNN runs channels-last, from the one-channel images on
// (convolutions on oneDNN's nhwc, batch norm and pooling on their
// channels-last loops): 40 steps end at the row-major run's parameters but
// for the summation order's rounding, which training amplifies only mildly
// over so few steps. (Here they end bit for bit equal: oneDNN computes both
// layouts in its own blocked one, and batch norm sums in f64 either way.)
TEST(MixedPrecisionTrainingTest, ChannelsLastTrainsToTheRowMajorParameters) {
  TS_SKIP_WITHOUT_FASHION_MNIST();
  ASSERT_OK_AND_ASSIGN(const Trained row_major, train("row_major", TaskConfig::F32, 1, 40));
  ASSERT_OK_AND_ASSIGN(const Trained nhwc, train("nhwc", TaskConfig::F32, 1, 40, 0, false, /*channels_last=*/true));
  EXPECT_TRUE(nhwc.report.find("config")->find("channels_last")->as_bool());
  // Training and evaluation batches alike.
  EXPECT_GT(nhwc.channels_last_batches, 40);
  EXPECT_EQ(nhwc.row_major_batches, 0);
  EXPECT_EQ(row_major.channels_last_batches, 0);
  ASSERT_EQ(nhwc.parameters.size(), row_major.parameters.size());
  for (size_t i = 0; i < row_major.parameters.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    EXPECT_TRUE(nhwc.parameters[i].is_contiguous());
    const std::vector<double> a = to_vector<double>(nhwc.parameters[i]), b = to_vector<double>(row_major.parameters[i]);
    double diff = 0, scale = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      diff = std::max(diff, std::abs(a[k] - b[k]));
      scale = std::max(scale, std::abs(b[k]));
    }
    std::printf("parameter %zu: largest difference %.3g of largest magnitude %.3g\n", i, diff, scale);
    EXPECT_LT(diff, 1e-3 * scale);
  }
  EXPECT_NEAR(nhwc.accuracy, row_major.accuracy, 0.005);
}

}  // namespace
}  // namespace ts::tasks
