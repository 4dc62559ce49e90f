#include "optim/mixed_precision.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "optim/scaled_copy.h"
#include "tensor/ops.h"

namespace ts::optim {

MixedPrecision::MixedPrecision(std::vector<NamedParameter> params, LossScalerOptions scaler) : scaler_(scaler) {
  std::set<std::string> names;
  std::set<const void*> ids;  // a parameter listed twice would get two masters
  for (auto& [name, param] : params) {
    TS_CHECK(param.defined() && is_floating(param.dtype()), "MixedPrecision: parameter \"", name, "\" is ",
             param.defined() ? param.data().describe() : "undefined", ", not floating-point");
    TS_CHECK(names.insert(name).second, "MixedPrecision: parameter name \"", name, "\" is used twice");
    TS_CHECK(ids.insert(param.id()).second, "MixedPrecision: parameter \"", name,
             "\" is a parameter listed before under another name");
    Pair pair{param, param, Tensor()};
    if (is_reduced_float(param.dtype())) {
      // copy_masters writes the f32 masters back with one flat pass.
      TS_CHECK(param.data().is_contiguous(), "MixedPrecision: parameter \"", name, "\" is ", param.data().describe(),
               " in a layout that is not row-major contiguous; its f32 master is copied back into it as one flat "
               "array");
      pair.master = autograd::Variable(to(param.data(), DType::kF32), /*requires_grad=*/true);
      pair.master_grad = empty(param.shape(), {DType::kF32, param.device()});
    }
    masters_.emplace_back(name, pair.master);
    pairs_.push_back(std::move(pair));
  }
}

autograd::Variable MixedPrecision::scale_loss(const autograd::Variable& loss) const { return loss * scaler_.scale(); }

absl::StatusOr<bool> MixedPrecision::unscale_gradients(int64_t step, const OverflowVote& vote) {
  std::vector<ScaledCopy> work;
  std::vector<Tensor> grads;       // the model's, for naming one that overflowed
  std::vector<size_t> grad_owner;  // their pairs
  for (size_t i = 0; i < pairs_.size(); ++i) {
    Pair& p = pairs_[i];
    const Tensor& grad = p.param.grad();
    if (!grad.defined()) {
      if (separate(p)) p.master.clear_grad();
      continue;
    }
    const Tensor from = contiguous(grad);
    if (separate(p)) {
      work.push_back({from, p.master_grad});
      p.master.set_grad(p.master_grad);
    } else {
      work.push_back({from, from});
      p.param.set_grad(from);
    }
    grads.push_back(from);
    grad_owner.push_back(i);
  }
  bool found = optim::unscale_gradients(work, scaler_.inverse_scale());
  if (vote != nullptr) {
    ASSIGN_OR_RETURN(found, vote(found));
  }
  absl::StatusOr<bool> take = scaler_.update(found);
  if (!take.ok()) {
    // Only now, at the end of the run, is each gradient read to name one.
    // Backward meets the parameters about in reverse registration order, and
    // a non-finite value spreads from where it starts to every layer before
    // it: the last registered parameter with one is the nearest to its start.
    const std::vector<Tensor> in_backward_order(grads.rbegin(), grads.rend());
    const int64_t found = first_non_finite(in_backward_order);
    const int64_t bad = found < 0 ? -1 : static_cast<int64_t>(grads.size()) - 1 - found;
    const std::string culprit =
        bad >= 0          ? absl::StrCat("the gradient of \"", masters_[grad_owner[bad]].first, "\" is not finite")
        : vote != nullptr ? std::string("a gradient of another rank is not finite")
                          : std::string("a gradient is not finite");
    return absl::Status(take.status().code(),
                        absl::StrCat("step ", step, ": ", culprit, ", and ", take.status().message()));
  }
  if (!*take) {
    for (Pair& p : pairs_) p.master.clear_grad();
  }
  return *take;
}

void MixedPrecision::copy_masters_to_model() {
  std::vector<ScaledCopy> copies;
  for (const Pair& p : pairs_) {
    if (separate(p)) copies.push_back({p.master.data(), p.param.data()});
  }
  copy_masters(copies);
}

NamedTensors MixedPrecision::state() const {
  NamedTensors out = scaler_.state();
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (separate(pairs_[i]))
      out.emplace_back(absl::StrCat("master.", masters_[i].first), clone(pairs_[i].master.data()));
  }
  return out;
}

absl::Status MixedPrecision::load_state(const NamedTensors& state) {
  NamedTensors scaler_state, master_state;
  for (const auto& entry : state) {
    (entry.first.rfind("master.", 0) == 0 ? master_state : scaler_state).push_back(entry);
  }
  ASSIGN_OR_RETURN(StateReader reader, StateReader::create(master_state, "MixedPrecision.load_state"));
  std::vector<std::pair<const Pair*, Tensor>> loaded;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (!separate(pairs_[i])) continue;
    const Tensor& master = pairs_[i].master.data();
    ASSIGN_OR_RETURN(Tensor saved,
                     reader.take_tensor(absl::StrCat("master.", masters_[i].first), master.shape(), DType::kF32));
    loaded.emplace_back(&pairs_[i], std::move(saved));
  }
  RETURN_IF_ERROR(reader.finish());
  DynamicLossScaler scaler = scaler_;
  RETURN_IF_ERROR(scaler.load_state(scaler_state));
  RETURN_IF_ERROR(capture([&] {
    for (const auto& [pair, saved] : loaded) copy_(pair->master.data(), saved);
  }));
  scaler_ = scaler;
  return absl::OkStatus();
}

}  // namespace ts::optim
