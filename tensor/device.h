// Where a tensor's memory lives: the host, or one CUDA device by index.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace ts {

enum class DeviceType : uint8_t { kCPU, kCUDA };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;  // CUDA ordinal; always 0 for the CPU

  static Device cpu() { return {}; }
  static Device cuda(int index = 0) { return {DeviceType::kCUDA, index}; }
  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }
  std::string to_string() const;  // "cpu", "cuda:1"

  friend bool operator==(const Device&, const Device&) = default;
};

// Parses "cpu", "cuda" (device 0) or "cuda:N".
absl::StatusOr<Device> parse_device(absl::string_view text);

}  // namespace ts
