#include "tasks/common/classification.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "data/loader/loader.h"
#include "data/loader/sampler.h"
#include "nn/checkpoint.h"
#include "nn/losses.h"
#include "optim/sgd.h"
#include "tasks/common/lr_control.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::tasks {
namespace {

absl::StatusOr<std::unique_ptr<data::Sampler>> make_sampler(int64_t n, const Distributed& dist,
                                                            bool shuffle, uint64_t seed) {
  if (dist.world_size() > 1) {
    data::DistributedOptions options;
    options.shuffle = shuffle;
    options.seed = seed;
    return data::DistributedSampler::create(n, dist.world_size(), dist.rank(), options);
  }
  if (shuffle) return std::unique_ptr<data::Sampler>(new data::ShuffledSampler(n, seed));
  return std::unique_ptr<data::Sampler>(new data::SequentialSampler(n));
}

// Everything a training run holds, shared by the runner's hooks.
struct Training {
  Runner* runner = nullptr;
  const ClassificationRecipe* recipe = nullptr;
  Distributed* dist = nullptr;
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<collectives::ddp::DistributedDataParallel> ddp;
  std::unique_ptr<data::DataLoader> train_loader, test_loader;
  std::optional<optim::Sgd> optimizer;
  std::optional<LrControl> lr;
  int64_t position = 0;  // batches taken from train_loader this epoch
  absl::Duration reported_comm_wait;

  absl::StatusOr<autograd::Variable> forward(const autograd::Variable& x) {
    return ddp ? ddp->forward(x) : model->forward(x);
  }

  absl::StatusOr<data::Batch> batch_at(int64_t step) {
    // After a mid-epoch resume the runner asks for a later step first: skip
    // to it (batches depend only on seed, epoch and position).
    while (true) {
      ASSIGN_OR_RETURN(std::optional<data::Batch> batch, train_loader->next());
      if (!batch) {
        return absl::OutOfRangeError(absl::StrCat("train loader: step ", step, " is past the ",
                                                  train_loader->num_batches(), " batches"));
      }
      ++position;
      if (position - 1 == step) return std::move(*batch);
    }
  }

  absl::StatusOr<StepResult> step(int64_t step) {
    ASSIGN_OR_RETURN(data::Batch batch, batch_at(step));
    ASSIGN_OR_RETURN(std::vector<Tensor> fields, fields_on(batch, runner->device()));
    ASSIGN_OR_RETURN(autograd::Variable logits, forward(autograd::Variable(fields[0])));
    ASSIGN_OR_RETURN(autograd::Variable loss, recipe->loss(logits, fields[1]));
    RETURN_IF_ERROR(loss.backward());
    RETURN_IF_ERROR(optimizer->step());
    optimizer->zero_grad();
    // The step is over on the device once its loss is on the host, so the
    // CUDA communication timings below are ready without a further wait.
    ASSIGN_OR_RETURN(Tensor loss_cpu, to(loss.data(), Device::cpu()));
    if (ddp) {
      ASSIGN_OR_RETURN(const absl::Duration wait, ddp->communication_wait_time());
      runner->timers().add("communication", absl::ToDoubleSeconds(wait - reported_comm_wait));
      reported_comm_wait = wait;
    }
    ASSIGN_OR_RETURN(const float value, item<float>(loss_cpu));
    return StepResult{value, fields[0].size(0)};
  }

  absl::StatusOr<StateBlobs> save_state() const {
    StateBlobs blobs;
    ASSIGN_OR_RETURN(blobs["model"], nn::encode_tensors(model->state_dict()));
    ASSIGN_OR_RETURN(optim::NamedTensors opt_state, optimizer->state());
    ASSIGN_OR_RETURN(blobs["optimizer"], nn::encode_tensors(opt_state));
    ASSIGN_OR_RETURN(optim::NamedTensors lr_state, lr->state());
    ASSIGN_OR_RETURN(blobs["lr"], nn::encode_tensors(lr_state));
    return blobs;
  }

  absl::Status restore_state(const StateBlobs& blobs) {
    for (const char* key : {"model", "optimizer", "lr"}) {
      if (!blobs.contains(key)) {
        return absl::DataLossError(absl::StrCat("checkpoint has no \"", key, "\" state"));
      }
    }
    ASSIGN_OR_RETURN(nn::NamedTensors model_state,
                     nn::decode_tensors(blobs.at("model"), "checkpoint model state"));
    RETURN_IF_ERROR(model->load_state_dict(model_state));
    ASSIGN_OR_RETURN(nn::NamedTensors opt_state,
                     nn::decode_tensors(blobs.at("optimizer"), "checkpoint optimizer state"));
    RETURN_IF_ERROR(optimizer->load_state(opt_state));
    ASSIGN_OR_RETURN(nn::NamedTensors lr_state,
                     nn::decode_tensors(blobs.at("lr"), "checkpoint lr state"));
    return lr->load_state(lr_state);
  }
};

}  // namespace

absl::Status train_classifier(Runner& runner, Distributed& dist, std::shared_ptr<nn::Module> model,
                              const ClassificationData& splits, const ClassificationRecipe& recipe) {
  const TaskConfig& config = runner.config();
  Training t;
  t.runner = &runner;
  t.recipe = &recipe;
  t.dist = &dist;
  t.model = std::move(model);
  RETURN_IF_ERROR(t.model->to(runner.device()));
  if (dist.comm != nullptr) {
    ASSIGN_OR_RETURN(t.ddp, collectives::ddp::DistributedDataParallel::create(t.model, dist.comm.get()));
    runner.report().extra("ddp")["backend"] = Json(std::string(dist.comm->backend_name()));
  }

  data::LoaderOptions train_options;
  train_options.batch_size = config.batch_size();
  train_options.num_workers = config.num_workers();
  train_options.seed = config.seed();
  train_options.transform = splits.train_transform;
  ASSIGN_OR_RETURN(std::unique_ptr<data::Sampler> train_sampler,
                   make_sampler(splits.train->size(), dist, /*shuffle=*/true, config.seed()));
  ASSIGN_OR_RETURN(t.train_loader,
                   data::DataLoader::create(splits.train, std::move(train_sampler), train_options));
  data::LoaderOptions test_options = train_options;
  test_options.transform = splits.test_transform;
  ASSIGN_OR_RETURN(std::unique_ptr<data::Sampler> test_sampler,
                   make_sampler(splits.test->size(), dist, /*shuffle=*/false, config.seed()));
  ASSIGN_OR_RETURN(t.test_loader,
                   data::DataLoader::create(splits.test, std::move(test_sampler), test_options));

  optim::SgdOptions sgd;
  sgd.lr = config.lr();
  sgd.momentum = config.momentum();
  sgd.nesterov = config.nesterov();
  sgd.weight_decay = config.weight_decay();
  ASSIGN_OR_RETURN(t.optimizer, optim::Sgd::create(t.model->named_parameters(), sgd));
  ASSIGN_OR_RETURN(t.lr, LrControl::create(config, dist.world_size(), recipe.lr_scaling));

  runner.report().set("data", Json(splits.description));
  runner.report().set("model", Json(absl::StrCat(t.model->type_name(), ", ",
                                                 t.model->num_parameters(), " parameters")));

  TaskHooks hooks;
  hooks.steps_per_epoch = [&t](int) { return t.train_loader->num_batches(); };
  hooks.begin_epoch = [&t](int epoch) {
    t.optimizer->set_lr(t.lr->lr(epoch));
    t.position = 0;
    return t.train_loader->start_epoch(epoch);
  };
  hooks.train_step = [&t](int, int64_t step) { return t.step(step); };
  hooks.evaluate = [&t, &dist, &runner, &recipe](int epoch) -> absl::StatusOr<Metrics> {
    ASSIGN_OR_RETURN(EvalResult r, evaluate(*t.model, *t.test_loader, epoch, runner.device(),
                                            recipe.score, dist.comm.get()));
    t.lr->end_epoch(r.loss);
    return Metrics{{"accuracy", r.accuracy}, {"loss", r.loss}};
  };
  hooks.save_state = [&t]() { return t.save_state(); };
  hooks.restore_state = [&t](const StateBlobs& blobs) { return t.restore_state(blobs); };
  hooks.current_lr = [&t]() { return t.optimizer->lr(0); };
  return runner.run(hooks).status();
}

ClassificationRecipe cross_entropy_recipe() {
  ClassificationRecipe recipe;
  recipe.loss = [](const autograd::Variable& logits, const Tensor& labels) {
    return nn::cross_entropy(logits, labels);
  };
  recipe.score = score_multiclass;
  return recipe;
}

}  // namespace ts::tasks
