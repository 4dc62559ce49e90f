// The backend singleton and the launch-size helpers every kernel file uses.
#include "tensor/cuda/cuda_backend.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"

namespace ts::cuda {

Backend& backend() {
  static CudaBackend* instance = new CudaBackend;
  return *instance;
}

int64_t resident_threads(int device) {
  throw_if_error(check_device(device));
  // One slot per device, 0 until first asked; the device count is fixed for
  // the process.
  static std::vector<std::atomic<int64_t>>* cache = new std::vector<std::atomic<int64_t>>(device_count());
  std::atomic<int64_t>& slot = (*cache)[device];
  int64_t threads = slot.load(std::memory_order_relaxed);
  if (threads == 0) {
    int sms = 0, per_sm = 0;
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    threads = int64_t{sms} * per_sm;
    slot.store(threads, std::memory_order_relaxed);
  }
  return threads;
}

unsigned grid_size(int device, int64_t items, int threads) {
  const int64_t resident = resident_threads(device);
  const int64_t wave = std::max<int64_t>(1, resident / threads);
  return static_cast<unsigned>(std::clamp<int64_t>(ceil_div(items, threads), 1, wave));
}

}  // namespace ts::cuda
