#include "data/loader/loader.h"

#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/cpu/parallel.h"

namespace ts::data {
namespace {

absl::Status annotate(const absl::Status& status, int64_t position, int64_t sample) {
  return absl::Status(status.code(),
                      absl::StrCat("loader: batch ", position, ", sample ", sample, ": ", status.message()));
}

// Runs user code (Dataset::get, the transform), or collate on what it made,
// that may throw as well as return an error: a ts::Error from a tensor op
// keeps its code, any other exception becomes kInternal (ts::capture), and
// the message says that `what` threw rather than returned it.
template <typename F>
std::invoke_result_t<F> call_user_code(const char* what, F&& f) {
  bool returned = false;
  std::invoke_result_t<F> result = capture([&] {
    std::invoke_result_t<F> value = f();
    returned = true;
    return value;
  });
  if (returned) return result;
  return absl::Status(result.status().code(), absl::StrCat(what, " threw: ", result.status().message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataLoader>> DataLoader::create(std::shared_ptr<const Dataset> dataset,
                                                               std::unique_ptr<Sampler> sampler,
                                                               LoaderOptions options) {
  if (dataset == nullptr) return absl::InvalidArgumentError("DataLoader: no dataset given");
  if (options.num_workers < 0) {
    return absl::InvalidArgumentError(absl::StrCat("DataLoader: negative num_workers ", options.num_workers));
  }
  if (options.prefetch_depth < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("DataLoader: prefetch_depth must be at least 1, got ", options.prefetch_depth));
  }
  ASSIGN_OR_RETURN(BatchSampler batch_sampler,
                   BatchSampler::create(std::move(sampler), options.batch_size, options.drop_last));
  std::unique_ptr<DataLoader> loader(new DataLoader(std::move(dataset), std::move(batch_sampler), std::move(options)));
  for (int w = 0; w < loader->options_.num_workers; ++w) {
    loader->workers_.emplace_back([raw = loader.get()] {
      // The workers share the cores among themselves and with training.
      cpu::run_serially_on_this_thread();
      raw->worker_loop();
    });
  }
  return loader;
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, BatchSampler batch_sampler, LoaderOptions options)
    : dataset_(std::move(dataset)),
      options_(std::move(options)),
      pool_(HostBufferPool::create(options_.pin_memory, options_.pin_device)),
      batch_sampler_(std::move(batch_sampler)) {}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    ++generation_;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int64_t DataLoader::epoch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return epoch_;
}

absl::Status DataLoader::start_epoch(int64_t epoch, int64_t first_batch) {
  if (first_batch < 0 || first_batch > num_batches()) {
    return absl::OutOfRangeError(absl::StrCat("DataLoader::start_epoch: first batch ", first_batch, " of an epoch of ",
                                              num_batches(), " batches"));
  }
  std::unique_lock<std::mutex> lock(mu_);
  ++generation_;
  // No worker claims more of the old epoch while the batches in flight
  // drain: it would make a whole batch only to see it dropped.
  started_ = false;
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
  ready_.clear();
  batch_sampler_.set_epoch(epoch);
  batches_ = batch_sampler_.batches();
  epoch_ = epoch;
  next_claim_ = first_batch;
  delivered_ = first_batch;
  started_ = true;
  lock.unlock();
  work_cv_.notify_all();
  return absl::OkStatus();
}

bool DataLoader::can_claim() const {
  return started_ && next_claim_ < static_cast<int64_t>(batches_.size()) &&
         next_claim_ < delivered_ + options_.prefetch_depth;
}

void DataLoader::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || can_claim(); });
    if (stop_) return;
    const int64_t position = next_claim_++;
    const uint64_t generation = generation_;
    const std::vector<int64_t> indices = batches_[position];
    const int64_t epoch = epoch_;
    ++in_flight_;
    lock.unlock();
    // No exception may end a worker (std::terminate): what make_batch throws
    // becomes this batch's error, which next() returns.
    absl::StatusOr<Batch> batch = capture([&] { return make_batch(position, indices, epoch, generation); });
    lock.lock();
    --in_flight_;
    if (generation == generation_) {
      ready_.emplace(position, std::move(batch));
      ready_cv_.notify_all();
    }
    if (in_flight_ == 0) idle_cv_.notify_all();
  }
}

absl::StatusOr<Batch> DataLoader::make_batch(int64_t position, const std::vector<int64_t>& indices, int64_t epoch,
                                             uint64_t generation) const {
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (const int64_t index : indices) {
    if (generation_.load(std::memory_order_relaxed) != generation) {
      return absl::CancelledError("loader: batch abandoned");
    }
    RandomStream rng = RandomStream::for_sample(options_.seed, static_cast<uint64_t>(epoch), index);
    absl::StatusOr<Example> example =
        call_user_code("Dataset::get", [&] { return dataset_->get_augmented(index, rng); });
    if (!example.ok()) return annotate(example.status(), position, index);
    if (options_.transform) {
      example = call_user_code("transform", [&] { return options_.transform(*std::move(example), rng); });
      if (!example.ok()) return annotate(example.status(), position, index);
    }
    examples.push_back(*std::move(example));
  }
  absl::StatusOr<std::vector<Tensor>> fields =
      call_user_code("collate", [&] { return collate(examples, options_.collate, pool_.get()); });
  if (!fields.ok()) {
    return absl::Status(fields.status().code(),
                        absl::StrCat("loader: batch ", position, ": ", fields.status().message()));
  }
  return Batch{position, indices, *std::move(fields)};
}

absl::StatusOr<std::optional<Batch>> DataLoader::next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_) return absl::FailedPreconditionError("DataLoader::next: call start_epoch first");
  if (delivered_ >= static_cast<int64_t>(batches_.size())) return std::nullopt;
  const int64_t position = delivered_;
  if (workers_.empty()) {
    ++delivered_;
    const std::vector<int64_t> indices = batches_[position];
    const int64_t epoch = epoch_;
    const uint64_t generation = generation_;
    lock.unlock();
    ASSIGN_OR_RETURN(Batch batch, capture([&] { return make_batch(position, indices, epoch, generation); }));
    return batch;
  }
  ready_cv_.wait(lock, [&] { return ready_.count(position) > 0; });
  auto node = ready_.extract(position);
  ++delivered_;
  lock.unlock();
  work_cv_.notify_one();
  if (!node.mapped().ok()) return node.mapped().status();
  return std::optional<Batch>(*std::move(node.mapped()));
}

}  // namespace ts::data
