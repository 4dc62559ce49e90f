// CUDA devices: how many there are (zero, not an error, on a machine without a
// GPU or driver), their properties, and a guard that selects one for a scope.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ts::cuda {

// Number of usable devices; 0 when there is no driver or no GPU.
int device_count();
inline bool is_available() { return device_count() > 0; }

// Why no device is usable ("" when one is): the runtime's own words, for the
// skip messages of CUDA tests.
std::string unavailable_reason();

// OK if `index` names a usable device; the error says how many there are.
absl::Status check_device(int index);

struct DeviceProperties {
  std::string name;
  int sm_count = 0;
  int major = 0;
  int minor = 0;
  size_t total_memory = 0;
};
absl::StatusOr<DeviceProperties> device_properties(int index);

// Versions as "13.0"; "none" when absent.
std::string runtime_version();
std::string driver_version();

// Makes `index` the current device for the scope, restoring the previous one
// (in a thread that had not chosen one before, `index` stays current).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ts::cuda
