#include "nn/functional/cpu/onednn_runtime.h"

#include <cstring>

namespace ts::nn::functional {

using dnnl::memory;

// Leaked on purpose: primitives cached in static caches may outlive a
// destroyed engine at exit.
OnednnRuntime& onednn_runtime() {
  static OnednnRuntime* instance = new OnednnRuntime;
  return *instance;
}

OperandPlan plan_operand(int arg, const memory::desc& plain, const memory::desc& chosen, bool output, bool zero_first) {
  OperandPlan operand{arg, plain, chosen, output, zero_first, std::nullopt};
  if (chosen != plain) {
    const dnnl::engine& engine = onednn_runtime().engine;
    operand.reorder = output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, chosen, engine, plain))
                             : dnnl::reorder(dnnl::reorder::primitive_desc(engine, plain, engine, chosen));
  }
  return operand;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void onednn_execute(const OnednnPrimitive& p, const std::unordered_map<int, const Tensor*>& tensors) {
  OnednnRuntime& rt = onednn_runtime();
  std::lock_guard<std::mutex> lock(rt.mu);
  std::vector<OnednnBuffer> buffers;
  buffers.reserve(p.operands.size() + 1);
  std::unordered_map<int, memory> args;
  std::vector<std::pair<const OperandPlan*, memory>> outputs;  // reordered out after the run
  for (const OperandPlan& op : p.operands) {
    const memory plain(op.plain, rt.engine, tensors.at(op.arg)->raw_data());
    memory used = plain;
    if (op.reorder) {
      used = onednn_memory_in(op.chosen, rt.engine, buffers);
      if (op.output) {
        outputs.emplace_back(&op, plain);
      } else {
        op.reorder->execute(rt.stream, {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, used}});
      }
    }
    // All-zero bytes are 0.0f in any layout, its padding included.
    if (op.zero_first) std::memset(used.get_data_handle(), 0, op.chosen.get_size());
    args.emplace(op.arg, used);
  }
  if (p.scratchpad.get_size() > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, onednn_memory_in(p.scratchpad, rt.engine, buffers));
  }
  p.primitive.execute(rt.stream, args);
  for (auto& [op, plain] : outputs)
    op->reorder->execute(rt.stream, {{DNNL_ARG_FROM, args.at(op->arg)}, {DNNL_ARG_TO, plain}});
  rt.stream.wait();
}

}  // namespace ts::nn::functional
