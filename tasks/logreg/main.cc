// MLBench task 2: logistic regression (the epsilon recipe: SGD lr 4 per
// worker scaled by the world size, no momentum, binary cross-entropy plus an
// L2 term of 2.5e-6, reduce-on-plateau). Reads any LIBSVM file pair with
// --data_path=DIR (train.libsvm, test.libsvm; the epsilon set on a cluster);
// by default Fashion-MNIST as the binary problem of fashion_libsvm.h,
// written as LIBSVM into the cache directory on first use; with
// --synthetic a learnable set of epsilon's shapes.
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "data/readers/idx.h"
#include "data/readers/libsvm.h"
#include "data/synthetic/images.h"
#include "nn/losses.h"
#include "nn/models/logistic_regression.h"
#include "tasks/common/classification.h"
#include "tasks/common/task_main.h"
#include "tasks/logreg/default_config.h"
#include "tasks/logreg/fashion_libsvm.h"
#include "tasks/logreg/logreg.pb.h"
#include "tensor/ops.h"

namespace ts::tasks {
namespace {

// Writes the default LIBSVM files that `dir` lacks, from Fashion-MNIST.
// Each write is atomic, so a run that finds a file finds all of it.
absl::Status write_missing_libsvm(const std::string& dir) {
  for (const bool train : {true, false}) {
    const std::string path = join_path(dir, train ? "train.libsvm" : "test.libsvm");
    if (std::filesystem::exists(path)) continue;
    RETURN_IF_ERROR(make_dirs(dir));
    ASSIGN_OR_RETURN(std::unique_ptr<data::IdxImageDataset> images, data::open_mnist(data::kFashionMnistDir, train));
    RETURN_IF_ERROR(write_upper_body_libsvm(*images, path));
  }
  return absl::OkStatus();
}

// The default LIBSVM files, made from Fashion-MNIST once per cache (not per
// output_dir: 380 MB a run). Rank 0 writes them while the others wait; a
// rank that still lacks them then, its cache being another machine's own
// disk, writes its own. The folder's version changes with what
// write_upper_body_libsvm writes, so that no run reads an older form.
absl::StatusOr<std::string> default_libsvm_dir(const TaskContext& task) {
  const std::string& cache_dir = task.config.GetExtension(logreg).cache_dir();
  const std::string dir =
      join_path(cache_dir.empty() ? default_cache_dir() : user_path(cache_dir), "fashion_upper_body_v1");
  const auto write = [&] {
    absl::Status s = write_missing_libsvm(dir);
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat("writing the default data into the cache (--set=cache_dir=DIR, or ",
                                               "XDG_CACHE_HOME, to choose another): ", s.message()));
  };
  if (task.rank == 0) RETURN_IF_ERROR(write());
  // synchronize(): NCCL's wait() only orders streams; the files must exist.
  if (task.comm != nullptr) RETURN_IF_ERROR(task.comm->barrier().synchronize());
  if (task.rank != 0) RETURN_IF_ERROR(write());
  return dir;
}

absl::StatusOr<TrainingData> open_libsvm_data(const TaskContext& task, int64_t& features) {
  std::string dir = task.config.data_path();
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, default_libsvm_dir(task));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<data::LibsvmDataset> train,
                   data::LibsvmDataset::open(absl::StrCat(dir, "/train.libsvm")));
  data::LibsvmOptions test_options;
  test_options.num_features = train->matrix().num_features;
  ASSIGN_OR_RETURN(std::unique_ptr<data::LibsvmDataset> test,
                   data::LibsvmDataset::open(absl::StrCat(dir, "/test.libsvm"), test_options));
  features = train->matrix().num_features;
  TrainingData data;
  data.description = absl::StrCat("libsvm (", dir, "): ", train->size(), " train and ", test->size(), " test rows of ",
                                  features, " features");
  data.train = std::move(train);
  data.eval = std::move(test);
  return data;
}

// --synthetic: epsilon's shapes (2000 features; 400,000 train and 100,000
// test rows), each row scaled to unit L2 norm as epsilon's are (MLBench's lr
// of 4 assumes it). The rows are synthetic images of one pixel's height and
// two classes, each class a coarse template plus noise of 20 times its
// amplitude, so that the classes overlap as real ones do: the default recipe
// reaches about 81% test accuracy in its first epoch and stays there while
// the loss goes on falling (README); with noise 1 the training loss was 0.04
// after 25 steps and the first epoch ended at 100% test accuracy.
absl::StatusOr<TrainingData> synthetic_data(const TaskContext& task, int64_t& features) {
  constexpr int64_t kFeatures = 2000, kTrainRows = 400'000, kTestRows = 100'000;
  data::SyntheticImageOptions options;
  options.height = 1;
  options.width = kFeatures;
  options.num_classes = 2;
  options.noise = 20;
  options.dtype = DType::kF32;
  options.seed = task.config.seed();
  options.size = kTrainRows;
  TrainingData data;
  ASSIGN_OR_RETURN(data.train, data::SyntheticImages::create(options));
  options.first_sample = kTrainRows;  // the same templates, unseen rows
  options.size = kTestRows;
  ASSIGN_OR_RETURN(data.eval, data::SyntheticImages::create(options));
  // [1, 1, features] images into unit-norm feature rows.
  data.train_transform = data.eval_transform = [](data::Example example, data::RandomStream&) {
    const Tensor row = flatten(example.fields[0]);
    example.fields[0] = row / norm(row);
    return absl::StatusOr<data::Example>(std::move(example));
  };
  data.description = absl::StrCat("synthetic: ", kTrainRows, " train and ", kTestRows, " test rows of ", kFeatures,
                                  " features (seed ", options.seed, ")");
  features = kFeatures;
  return data;
}

// Binary cross-entropy of the logit against the {0, 1} label, plus the L2
// term over the model's parameters; accuracy is the logit's sign.
ClassificationObjective logistic_objective(std::shared_ptr<nn::Module> model, double l2) {
  ClassificationObjective objective;
  objective.loss = [model, l2](const autograd::Variable& logits, const Tensor& labels) {
    return nn::binary_cross_entropy_with_logits(logits, to(labels, logits.dtype())) +
           nn::l2_regularization(model->parameters(), l2);
  };
  objective.score = [](const Tensor& logits, const Tensor& labels) {
    const Tensor targets = to(labels, logits.dtype());
    const Tensor loss_sum =
        nn::binary_cross_entropy_with_logits(autograd::Variable(logits), targets, nn::Reduction::kSum).data();
    return std::pair{loss_sum, nn::binary_correct(logits, targets)};
  };
  return objective;
}

absl::StatusOr<std::unique_ptr<Recipe>> make_recipe(const TaskContext& task) {
  if (const double l2 = task.config.GetExtension(logreg).l2(); !(l2 >= 0 && std::isfinite(l2))) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid config: logreg.l2 = ", l2, " (must be a finite number >= 0)"));
  }
  int64_t features = 0;
  ASSIGN_OR_RETURN(TrainingData data,
                   task.config.synthetic() ? synthetic_data(task, features) : open_libsvm_data(task, features));
  const double l2 = task.config.GetExtension(logreg).l2();
  return capture([&]() -> std::unique_ptr<Recipe> {
    const auto model = nn::Handle(std::make_shared<nn::models::LogisticRegression>(features));
    return std::make_unique<ClassificationRecipe>(std::move(data), model, logistic_objective(model.ptr(), l2));
  });
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::run_task(argc, argv, {"logreg", kLogRegDefaultConfig}, ts::tasks::make_recipe);
}
