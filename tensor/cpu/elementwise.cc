// CPU elementwise kernels: copy/convert, fill, ranges, random numbers, the
// unary, binary and where families, and the fused gradients of the unary and
// binary ops.
#include <algorithm>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/f32_blocks.h"
#include "tensor/cpu/half_convert.h"
#include "tensor/cpu/parallel.h"
#include "tensor/cpu/strided_loop.h"
#include "tensor/functors.h"

namespace ts::cpu {
namespace {

template <typename T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

template <typename Rule, typename T>
constexpr bool has_kernel() {
  return kernel_exists<Rule, T, is_float_v<T>>();
}

// A tensor-or-scalar input of element type T, read as Acc<T>. A scalar is
// taken in Acc<T> directly, as PyTorch takes it in its op math type: an f16
// tensor times 1e5 or 1e-5 computes with those in f32, not with inf or a
// subnormal, and only the result is rounded.
template <typename T>
struct Input {
  const T* data = nullptr;
  Acc<T> value{};  // for a scalar
  bool scalar = false;

  static Input of(const Operand& x) {
    Input in;
    in.scalar = x.is_scalar();
    if (in.scalar) {
      in.value = x.scalar.to<Acc<T>>();
    } else {
      in.data = ptr<T>(x.tensor);
    }
    return in;
  }
  Acc<T> at(int64_t offset) const { return scalar ? value : load(data[offset]); }
};

template <typename T, typename R, typename F>
void binary_kernel(const StridedLayout<3>& layout, R* out, Input<T> a, Input<T> b, F f) {
  for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
    R* o = out + off[0];
    constexpr bool blocks = is_16bit_float_v<T> && std::is_same_v<R, T>;
    if (st[0] == 1 && !a.scalar && !b.scalar && st[1] == 1 && st[2] == 1) {
      const T* pa = a.data + off[1];
      const T* pb = b.data + off[2];
      if constexpr (blocks) {
        if (in_f32_blocks(o, n, f, pa, pb)) return;
      }
      for (int64_t i = 0; i < n; ++i) o[i] = store<R>(f(load(pa[i]), load(pb[i])));
    } else if (st[0] == 1 && b.scalar && (st[1] == 1 || a.scalar) && !a.scalar) {
      const T* pa = a.data + off[1];
      const Acc<T> vb = b.value;
      if constexpr (blocks) {
        const auto with_b = [&](float x) { return f(x, vb); };
        if (in_f32_blocks(o, n, with_b, pa)) return;
      }
      for (int64_t i = 0; i < n; ++i) o[i] = store<R>(f(load(pa[i]), vb));
    } else if (st[0] == 1 && a.scalar && st[2] == 1 && !b.scalar) {
      const T* pb = b.data + off[2];
      const Acc<T> va = a.value;
      if constexpr (blocks) {
        const auto with_a = [&](float x) { return f(va, x); };
        if (in_f32_blocks(o, n, with_a, pb)) return;
      }
      for (int64_t i = 0; i < n; ++i) o[i] = store<R>(f(va, load(pb[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        o[i * st[0]] = store<R>(f(a.at(off[1] + i * st[1]), b.at(off[2] + i * st[2])));
      }
    }
  });
}

// out = f(in...) for the gradient kernels, input j being operand K_j of the
// layout (operand 0 is out): a vectorizable loop when every operand is a
// tensor walked with unit stride, else each input read through its stride
// (or as its scalar).
template <int N, typename T, typename F, typename... In, size_t... K>
void map_kernel(const StridedLayout<N>& layout, T* out, const F& f, std::index_sequence<K...>, const In&... in) {
  for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
    T* o = out + off[0];
    if (st[0] == 1 && ((!in.scalar && st[K] == 1) && ...)) {
      const auto bases = std::make_tuple((in.data + off[K])...);
      [&]<size_t... J>(std::index_sequence<J...>) {
        if constexpr (is_16bit_float_v<T>) {
          if (in_f32_blocks(o, n, f, std::get<J>(bases)...)) return;
        }
        for (int64_t i = 0; i < n; ++i) o[i] = store<T>(f(load(std::get<J>(bases)[i])...));
      }
      (std::index_sequence_for<In...>{});
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = store<T>(f(in.at(off[K] + i * st[K])...));
    }
  });
}

template <typename S, typename D>
void convert_kernel(const StridedLayout<2>& layout, D* out, const S* in) {
  for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
    D* o = out + off[0];
    const S* s = in + off[1];
    if constexpr (std::is_same_v<S, D>) {
      if (st[0] == 1 && st[1] == 1) {
        std::memcpy(o, s, n * sizeof(D));
        return;
      }
    }
    if (st[0] == 1 && st[1] == 1) {
      if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>) {
        return f16_to_f32(s, o, n);
      } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Half>) {
        return f32_to_f16(s, o, n);
      } else if constexpr (std::is_same_v<S, BFloat16> && std::is_same_v<D, float>) {
        return bf16_to_f32(s, o, n);
      } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, BFloat16>) {
        return f32_to_bf16(s, o, n);
      }
      for (int64_t i = 0; i < n; ++i) o[i] = store<D>(load(s[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = store<D>(load(s[i * st[1]]));
    }
  });
}

}  // namespace

void CpuBackend::copy(const Tensor& src, const Tensor& out) {
  const auto layout = make_layout<2>({&out, &src});
  visit_dtype(src.dtype(), [&](auto s) {
    using S = typename decltype(s)::type;
    visit_dtype(out.dtype(), [&](auto d) {
      using D = typename decltype(d)::type;
      convert_kernel<S, D>(layout, ptr<D>(out), ptr<S>(src));
    });
  });
}

void CpuBackend::transfer(const Tensor& src, const Tensor& dst) {
  // Host to host: the only transfer this backend sees.
  std::memcpy(dst.raw_data(), src.raw_data(), src.numel() * src.itemsize());
}

void CpuBackend::fill(const Tensor& out, const Scalar& value) {
  const auto layout = make_layout<1>({&out});
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* base = ptr<T>(out);
    for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
      T* o = base + off[0];
      if (st[0] == 1) {
        std::fill(o, o + n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * st[0]] = v;
      }
    });
  });
}

void CpuBackend::arange(const Tensor& out, double start, double step) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = ptr<T>(out);
    parallel_for(out.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = store<T>(start + static_cast<double>(i) * step);
    });
  });
}

void CpuBackend::random(RandomKind kind, const Tensor& out, PhiloxKey key, double a, double b, const Tensor& probs) {
  const int64_t n = out.numel();
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = ptr<T>(out);
    const T* p = probs.defined() ? ptr<T>(probs) : nullptr;
    if constexpr (std::is_same_v<T, double>) {
      parallel_for((n + 1) / 2, kElementwiseGrain / 2, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          double v[2];
          const Philox4 w = philox_group(key, g);
          if (kind == RandomKind::kNormal)
            normal2_f64(w, v);
          else
            uniform2_f64(w, v);
          for (int64_t j = 0; j < 2 && 2 * g + j < n; ++j) {
            const int64_t i = 2 * g + j;
            switch (kind) {
              case RandomKind::kUniform:
                // [a, b): a draw that rounded up to b becomes a, as in
                // PyTorch's CUDA kernel (and the CUDA backend's).
                o[i] = mul_add_unfused(b - a, v[j], a);
                if (o[i] == b) o[i] = a;
                break;
              case RandomKind::kNormal:
                o[i] = mul_add_unfused(b, v[j], a);
                break;
              case RandomKind::kBernoulli:
                o[i] = v[j] < (p ? p[i] : a) ? 1.0 : 0.0;
                break;
            }
          }
        }
      });
    } else {
      const int bits = kind == RandomKind::kBernoulli ? 24
                       : std::is_same_v<T, Half>      ? 11
                       : std::is_same_v<T, BFloat16>  ? 8
                                                      : 24;
      const float lo = static_cast<float>(a), span = static_cast<float>(b - a);
      const float mean = static_cast<float>(a), stddev = static_cast<float>(b);
      const T high = store<T>(static_cast<float>(b)), low = store<T>(lo);
      parallel_for((n + 3) / 4, kElementwiseGrain / 4, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          float v[4];
          const Philox4 w = philox_group(key, g);
          if (kind == RandomKind::kNormal)
            normal4(w, v);
          else
            uniform4(w, bits, v);
          for (int64_t j = 0; j < 4 && 4 * g + j < n; ++j) {
            const int64_t i = 4 * g + j;
            float r = 0;
            switch (kind) {
              case RandomKind::kUniform:
                r = mul_add_unfused(span, v[j], lo);
                break;
              case RandomKind::kNormal:
                r = mul_add_unfused(stddev, v[j], mean);
                break;
              case RandomKind::kBernoulli:
                r = static_cast<double>(v[j]) < (p ? static_cast<double>(load(p[i])) : a) ? 1.0f : 0.0f;
                break;
            }
            o[i] = store<T>(r);
            if (kind == RandomKind::kUniform && load(o[i]) == load(high)) o[i] = low;  // [a, b), as above
          }
        }
      });
    }
  };
  switch (out.dtype()) {
    case DType::kF16:
      return run(TypeTag<Half>{});
    case DType::kBF16:
      return run(TypeTag<BFloat16>{});
    case DType::kF32:
      return run(TypeTag<float>{});
    case DType::kF64:
      return run(TypeTag<double>{});
    default:
      no_kernel("cpu", "random", out.dtype());
  }
}

void CpuBackend::unary(UnaryOp op, const Tensor& a, const Tensor& out) {
  const auto layout = make_layout<2>({&out, &a});
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_unary(op, [&](auto f, auto rule) {
      if constexpr (!has_kernel<decltype(rule), T>()) {
        no_kernel("cpu", op_name(op), a.dtype());
      } else {
        using R = std::conditional_t<decltype(rule)::value == DTypeRule::kPredicate, bool, T>;
        const T* in = ptr<T>(a);
        R* o = ptr<R>(out);
        for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
          if (st[0] == 1 && st[1] == 1) {
            if constexpr (is_16bit_float_v<T> && std::is_same_v<R, T>) {
              if (in_f32_blocks(o + off[0], n, f, in + off[1])) return;
            }
            for (int64_t i = 0; i < n; ++i) o[off[0] + i] = store<R>(f(load(in[off[1] + i])));
          } else {
            for (int64_t i = 0; i < n; ++i) o[off[0] + i * st[0]] = store<R>(f(load(in[off[1] + i * st[1]])));
          }
        });
      }
    });
  });
}

void CpuBackend::binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) {
  const auto layout = make_layout<3>({&out, a.is_scalar() ? nullptr : &a.tensor, b.is_scalar() ? nullptr : &b.tensor});
  const DType dtype = a.is_scalar() ? b.tensor.dtype() : a.tensor.dtype();
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_binary(op, [&](auto f, auto rule) {
      if constexpr (!has_kernel<decltype(rule), T>()) {
        no_kernel("cpu", op_name(op), dtype);
      } else {
        using R = std::conditional_t<decltype(rule)::value == DTypeRule::kPredicate, bool, T>;
        binary_kernel<T, R>(layout, ptr<R>(out), Input<T>::of(a), Input<T>::of(b), f);
      }
    });
  });
}

void CpuBackend::where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) {
  const auto layout =
      make_layout<4>({&out, &cond, a.is_scalar() ? nullptr : &a.tensor, b.is_scalar() ? nullptr : &b.tensor});
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Input<T> ia = Input<T>::of(a), ib = Input<T>::of(b);
    const bool* c = ptr<bool>(cond);
    T* o = ptr<T>(out);
    for_each_run(layout, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t i = 0; i < n; ++i) {
        o[off[0] + i * st[0]] = store<T>(c[off[1] + i * st[1]] ? ia.at(off[2] + i * st[2]) : ib.at(off[3] + i * st[3]));
      }
    });
  });
}

// The gradient functors exist for floating types only; the ops send nothing
// else.
template <typename T>
constexpr bool has_grad_kernel() {
  return std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
}

// Only the saved values the gradient reads are passed (layout operands: 1
// grad, 2 x, 3 y), so that the common gradients, which read one, take the
// vectorized loop.
void CpuBackend::unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& out) {
  const auto layout = make_layout<4>({&out, &grad, x.defined() ? &x : nullptr, y.defined() ? &y : nullptr});
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_unary(op, [&](auto f, auto rule) {
      if constexpr (!has_grad_kernel<T>() || decltype(rule)::value == DTypeRule::kPredicate) {
        no_kernel("cpu", op_name(op), out.dtype());
      } else {
        using A = Acc<T>;
        constexpr GradReads reads = decltype(f)::kGradReads;
        const Input<T> g = Input<T>::of(Operand(grad));
        if constexpr (reads.input && reads.output) {
          map_kernel(
              layout, ptr<T>(out), [f](A gv, A xv, A yv) { return f.grad(gv, xv, yv); }, std::index_sequence<1, 2, 3>{},
              g, Input<T>::of(Operand(x)), Input<T>::of(Operand(y)));
        } else if constexpr (reads.input) {
          map_kernel(
              layout, ptr<T>(out), [f](A gv, A xv) { return f.grad(gv, xv, A(0)); }, std::index_sequence<1, 2>{}, g,
              Input<T>::of(Operand(x)));
        } else if constexpr (reads.output) {
          map_kernel(
              layout, ptr<T>(out), [f](A gv, A yv) { return f.grad(gv, A(0), yv); }, std::index_sequence<1, 3>{}, g,
              Input<T>::of(Operand(y)));
        } else {
          map_kernel(
              layout, ptr<T>(out), [f](A gv) { return f.grad(gv, A(0), A(0)); }, std::index_sequence<1>{}, g);
        }
      }
    });
  });
}

// As unary_grad, only what the gradient reads is passed (layout operands: 1
// grad, 2 a, 3 b, 4 y).
void CpuBackend::binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b,
                             const Tensor& y, const Tensor& out) {
  const auto layout = make_layout<5>({&out, &grad, a.is_scalar() ? nullptr : &a.tensor,
                                      b.is_scalar() ? nullptr : &b.tensor, y.defined() ? &y : nullptr});
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    functors::visit_binary(op, [&](auto f, auto rule) {
      if constexpr (!has_grad_kernel<T>() || decltype(rule)::value == DTypeRule::kPredicate) {
        no_kernel("cpu", op_name(op), out.dtype());
      } else {
        using A = Acc<T>;
        constexpr GradReads reads = decltype(f)::kGradReads;
        const Input<T> g = Input<T>::of(Operand(grad));
        const auto run = [&](auto partial) {
          if constexpr (reads.output) {
            map_kernel(layout, ptr<T>(out), partial, std::index_sequence<1, 2, 3, 4>{}, g, Input<T>::of(a),
                       Input<T>::of(b), Input<T>::of(Operand(y)));
          } else if constexpr (reads.input) {
            map_kernel(
                layout, ptr<T>(out), [partial](A gv, A av, A bv) { return partial(gv, av, bv, A(0)); },
                std::index_sequence<1, 2, 3>{}, g, Input<T>::of(a), Input<T>::of(b));
          } else {
            map_kernel(
                layout, ptr<T>(out), [partial](A gv) { return partial(gv, A(0), A(0), A(0)); },
                std::index_sequence<1>{}, g);
          }
        };
        if (input == 0) {
          run([f](A gv, A av, A bv, A yv) { return f.grad_a(gv, av, bv, yv); });
        } else {
          run([f](A gv, A av, A bv, A yv) { return f.grad_b(gv, av, bv, yv); });
        }
      }
    });
  });
}

}  // namespace ts::cpu
