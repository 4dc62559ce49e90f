// The fused cross-entropy kernels: each row's log-sum-exp, the weighted
// negative log-likelihood of its target and the label-smoothing term in one
// pass, and the gradient from the saved log-sum-exp in another. Rows
// accumulate in double (as the CPU's reductions and softmax do), so the f32
// kernels are references too. The loops over a row's classes vectorize:
// exp_lanes for exp, lanes for the row's maximum and sum, compiled for AVX2
// where the CPU has it (tensor/cpu/isa.h).
#include <cmath>
#include <limits>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/isa.h"
#include "tensor/cpu/lanes.h"
#include "tensor/cpu/vector_exp.h"
#include "tensor/functors.h"

namespace ts::cpu {
namespace {

// What both kernels read: the row's target and class weights, as the
// compute type W of the weights (f32 or f64).
template <typename W>
struct Classes {
  int64_t count = 0;
  const int64_t* target = nullptr;
  const W* weight = nullptr;  // null: all ones
  double weight_sum = 0;      // sum of the weights (count when unweighted)
  int64_t ignore_index = 0;
  double smoothing = 0;

  double w(int64_t c) const { return weight != nullptr ? static_cast<double>(weight[c]) : 1.0; }
};

template <typename W>
Classes<W> classes_of(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& weight_sum,
                      int64_t ignore_index, double smoothing) {
  Classes<W> k;
  k.count = logits.size(1);
  k.target = static_cast<const int64_t*>(target.raw_data());
  k.weight = weight.defined() ? static_cast<const W*>(weight.raw_data()) : nullptr;
  k.weight_sum = weight_sum.defined() ? static_cast<double>(*static_cast<const W*>(weight_sum.raw_data()))
                                      : static_cast<double>(k.count);
  k.ignore_index = ignore_index;
  k.smoothing = smoothing;
  return k;
}

// Rows per parallel chunk: about 32K elements.
int64_t row_grain(int64_t classes) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(classes, 1)); }

}  // namespace

void CpuBackend::cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                               const Tensor& weight_sum, int64_t ignore_index, double label_smoothing,
                               const Tensor& loss, const Tensor& row_weight, const Tensor& logsumexp) {
  visit_dtype(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cpu", "cross_entropy", logits.dtype());
    } else {
      using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const Classes<W> k = classes_of<W>(logits, target, weight, weight_sum, ignore_index, label_smoothing);
      const T* x = static_cast<const T*>(logits.raw_data());
      W* out = static_cast<W*>(loss.raw_data());
      W* out_weight = static_cast<W*>(row_weight.raw_data());
      W* out_lse = static_cast<W*>(logsumexp.raw_data());
      const int64_t c = k.count;
      parallel_for_widest(logits.size(0), row_grain(c), [&](int64_t r0, int64_t r1) TS_INLINE_INTO_CLONE {
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = x + r * c;
          const auto logit = [&](int64_t j) TS_INLINE_INTO_CLONE { return static_cast<double>(load(row[j])); };
          const double max_value = lane_max(c, logit);
          const double total =
              lane_sum(c, [&](int64_t j) TS_INLINE_INTO_CLONE { return exp_lanes(logit(j) - max_value); });
          const double lse = max_value + std::log(total);
          out_lse[r] = static_cast<W>(lse);
          const int64_t t = k.target[r];
          if (t == k.ignore_index) {
            out[r] = 0;
            out_weight[r] = 0;
            continue;
          }
          const double wt = k.w(t);
          double value = (1 - k.smoothing) * wt * (lse - static_cast<double>(load(row[t])));
          if (k.smoothing > 0) {
            const double weighted_x = lane_sum(c, [&](int64_t j) TS_INLINE_INTO_CLONE { return k.w(j) * logit(j); });
            value += k.smoothing / static_cast<double>(c) * (k.weight_sum * lse - weighted_x);
          }
          out[r] = static_cast<W>(value);
          out_weight[r] = static_cast<W>(wt);
        }
      });
    }
  });
}

void CpuBackend::cross_entropy_grad(const Tensor& grad, const Tensor& logits, const Tensor& target,
                                    const Tensor& weight, const Tensor& weight_sum, const Tensor& logsumexp,
                                    int64_t ignore_index, double label_smoothing, const Tensor& out) {
  visit_dtype(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cpu", "cross_entropy backward", logits.dtype());
    } else {
      using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const Classes<W> k = classes_of<W>(logits, target, weight, weight_sum, ignore_index, label_smoothing);
      const T* x = static_cast<const T*>(logits.raw_data());
      const W* g = static_cast<const W*>(grad.raw_data());
      const W* lse = static_cast<const W*>(logsumexp.raw_data());
      T* dx = static_cast<T*>(out.raw_data());
      const int64_t c = k.count;
      const double smooth_per_class = k.smoothing / static_cast<double>(c);
      parallel_for_widest(logits.size(0), row_grain(c), [&](int64_t r0, int64_t r1) TS_INLINE_INTO_CLONE {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t t = k.target[r];
          T* row_dx = dx + r * c;
          if (t == k.ignore_index) {
            for (int64_t j = 0; j < c; ++j) row_dx[j] = store<T>(0.0);
            continue;
          }
          const T* row = x + r * c;
          const double gr = static_cast<double>(g[r]);
          const double row_lse = static_cast<double>(lse[r]);
          const double nll_scale = (1 - k.smoothing) * k.w(t);
          // d/dx_j of w_t (lse - x_t) is w_t (p_j - [j == t]); of
          // sum_c w_c (lse - x_c) it is W p_j - w_j. The target's -w_t is
          // written after the loop, which then has no branch per class.
          const auto grad_at = [&](int64_t j, double indicator, bool smoothing) TS_INLINE_INTO_CLONE {
            const double p = exp_lanes(static_cast<double>(load(row[j])) - row_lse);
            double d = nll_scale * (p - indicator);
            if (smoothing) d += smooth_per_class * (k.weight_sum * p - k.w(j));
            return store<T>(gr * d);
          };
          // Branches hoisted out of the loops, which the vectorizer needs.
          const bool smoothing = k.smoothing > 0;
          if (smoothing) {
            for (int64_t j = 0; j < c; ++j) row_dx[j] = grad_at(j, 0.0, true);
          } else {
            for (int64_t j = 0; j < c; ++j) row_dx[j] = grad_at(j, 0.0, false);
          }
          row_dx[t] = grad_at(t, 1.0, smoothing);  // t in [0, c): the forward checked it
        }
      });
    }
  });
}

}  // namespace ts::cpu
