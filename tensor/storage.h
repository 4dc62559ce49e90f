// A tensor's memory: one allocation on one device, shared by every tensor
// viewing it and released when the last of them goes away.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "tensor/device.h"

namespace ts {

class Storage {
 public:
  // CPU memory comes from the CPU allocator (64-byte aligned, large blocks
  // cached); CUDA memory from the device's caching allocator on the current
  // stream. Out of memory throws an Error of code kResourceExhausted.
  static std::shared_ptr<Storage> allocate(int64_t nbytes, Device device);

  // Adopts memory owned elsewhere; `deleter` runs when the storage dies.
  Storage(void* data, int64_t nbytes, Device device, std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  int64_t nbytes_;
  Device device_;
  std::function<void(void*)> deleter_;
};

}  // namespace ts
