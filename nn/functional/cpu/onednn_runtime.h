// What every oneDNN op on the CPU shares: the process's engine and stream,
// the cache of built primitives, a primitive with the plans of its operands
// and how it runs on our plain tensors, and the translation of dnnl::error
// into ts::Error.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "dnnl.hpp"
#include "tensor/cpu_allocator.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// One engine and stream for the process. The CPU stream runs each primitive
// to completion on the calling thread (with oneDNN's OpenMP workers). oneDNN
// does not promise that one stream may be driven from several threads at
// once; a primitive already keeps every core busy, so callers on several
// threads take turns (`mu`).
struct OnednnRuntime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::mutex mu;
};

OnednnRuntime& onednn_runtime();

// Host memory for what oneDNN needs beside our tensors (an operand in the
// layout a primitive chose, its scratchpad), from our caching allocator:
// memory oneDNN allocates itself is fresh pages on every call, and faulting
// them in cost more than the reorders that fill them.
class OnednnBuffer {
 public:
  explicit OnednnBuffer(size_t bytes) : bytes_(bytes), data_(value_or_throw(cpu_allocator::allocate(bytes))) {}
  OnednnBuffer(OnednnBuffer&& other) noexcept : bytes_(other.bytes_), data_(other.data_) { other.data_ = nullptr; }
  OnednnBuffer(const OnednnBuffer&) = delete;
  OnednnBuffer& operator=(const OnednnBuffer&) = delete;
  OnednnBuffer& operator=(OnednnBuffer&&) = delete;
  ~OnednnBuffer() { cpu_allocator::deallocate(data_, bytes_); }

  void* data() const { return data_; }

 private:
  size_t bytes_;
  void* data_;
};

// A oneDNN memory over `desc` in a buffer of ours, which `buffers` keeps
// alive for the call.
inline dnnl::memory onednn_memory_in(const dnnl::memory::desc& desc, const dnnl::engine& engine,
                                     std::vector<OnednnBuffer>& buffers) {
  buffers.emplace_back(desc.get_size());
  return dnnl::memory(desc, engine, buffers.back().data());
}

// Primitives built once per key: building one (dispatch over implementations,
// JIT code generation) costs more than running a small op.
template <typename Key, typename Value>
class OnednnCache {
 public:
  // Built under the lock: a key is built once even when threads race to it.
  template <typename Build>
  std::shared_ptr<const Value> get(const Key& key, Build build) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, std::make_shared<const Value>(build())).first;
    return it->second;
  }

 private:
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Value>> cache_;
};

// An operand of a primitive: the plain layout our tensor has and, when the
// primitive chose another, the reorder between the two (into the chosen
// layout for an input, out of it for an output). zero_first: an output the
// primitive adds into (an RNN's weight gradients), zeroed before the run.
struct OperandPlan {
  int arg;
  dnnl::memory::desc plain, chosen;
  bool output;
  bool zero_first;
  std::optional<dnnl::reorder> reorder;
};
OperandPlan plan_operand(int arg, const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen, bool output,
                         bool zero_first = false);

// A primitive with its operands' plans and its scratchpad (user-managed, so
// it comes from our cached buffers rather than fresh pages per call).
struct OnednnPrimitive {
  dnnl::primitive primitive;
  std::vector<OperandPlan> operands;
  dnnl::memory::desc scratchpad;
};
dnnl::primitive_attr user_scratchpad();

// Runs `p` on our plain tensors (keyed by DNNL_ARG_*, each contiguous in its
// operand's plain layout): each operand in a layout of oneDNN's choice goes
// through a buffer of ours, reordered in before the run or out after it.
// Takes the runtime's lock; may throw dnnl::error.
void onednn_execute(const OnednnPrimitive& p, const std::unordered_map<int, const Tensor*>& tensors);

// Throws ts::Error (internal) for a oneDNN failure: `context` (op, direction,
// shapes), then oneDNN's message and status.
template <typename... Parts>
[[noreturn]] void throw_onednn_error(const dnnl::error& e, const Parts&... context) {
  throw_error(absl::StatusCode::kInternal, context..., ": ", e.what(), " (status ", static_cast<int>(e.status), ")");
}

}  // namespace ts::nn::functional
