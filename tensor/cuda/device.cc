#include "tensor/cuda/device.h"

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tensor/cuda/check.h"

namespace ts::cuda {
namespace {

struct Probe {
  int count = 0;
  std::string reason;
};

// Probed once: the answer cannot change within a process, and a failed probe
// leaves a sticky error that must not leak into later calls.
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    const cudaError_t e = cudaGetDeviceCount(&r.count);
    if (e != cudaSuccess) {
      r.count = 0;
      r.reason = describe_error(e);
      cudaGetLastError();
    } else if (r.count == 0) {
      r.reason = "the CUDA runtime reports no devices";
    }
    return r;
  }();
  return p;
}

std::string version_string(int v) {
  return v == 0 ? std::string("none") : absl::StrCat(v / 1000, ".", (v % 1000) / 10);
}

}  // namespace

int device_count() { return probe().count; }

std::string unavailable_reason() { return probe().reason; }

absl::Status check_device(int index) {
  if (index >= 0 && index < device_count()) return absl::OkStatus();
  if (device_count() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", index, " requested but no CUDA device is usable: ", unavailable_reason()));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cuda:", index, " requested but only ", device_count(), " CUDA device(s) exist"));
}

absl::StatusOr<DeviceProperties> device_properties(int index) {
  if (auto s = check_device(index); !s.ok()) return s;
  cudaDeviceProp prop;
  RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, index));
  return DeviceProperties{prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem};
}

std::string runtime_version() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? version_string(v) : "none";
}

std::string driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? version_string(v) : "none";
}

namespace {
// Whether this thread has chosen a device through a guard yet.
thread_local bool t_device_chosen = false;
}  // namespace

DeviceGuard::DeviceGuard(int index) {
  int current = 0;
  CHECK_CUDA(cudaGetDevice(&current));
  // A thread that never chose a device reports device 0 without holding a
  // context there. Restoring it would create one (cudaSetDevice initializes
  // the primary context since CUDA 12): on a node where rank k uses GPU k,
  // every rank would take memory on GPU 0. Such a thread stays on `index`.
  previous_ = t_device_chosen ? current : -1;
  t_device_chosen = true;
  if (current != index) CHECK_CUDA(cudaSetDevice(index));
}

DeviceGuard::~DeviceGuard() {
  if (previous_ < 0) return;
  int current = -1;
  CHECK_CUDA(cudaGetDevice(&current));
  if (current != previous_) CHECK_CUDA(cudaSetDevice(previous_));
}

}  // namespace ts::cuda
