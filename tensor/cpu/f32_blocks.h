// Elementwise functions over 16-bit floats, computed in f32 blocks: a block
// of each input widened into f32 lanes, the function applied to floats (a
// loop the compiler vectorizes for AVX2), the result narrowed back. The bits
// are those of the element-by-element loop (load, f, store), which converts
// one element at a time through tensor/half.h; that conversion was most of
// what 16-bit dtypes cost on the CPU.
//
// A block is small and runs in one function compiled for AVX2, so that for
// simple functions it never leaves the registers. ReLU of 1M elements on one
// core of the AMD EPYC VM: 0.071 ms (f16) and 0.175 ms (bf16) so; 0.206 and
// 0.599 ms with 512-element blocks converted by separate functions and the
// function applied in SSE; 0.19 ms (f16) with 256-element blocks, which go
// through the stack. Likewise an f16 multiply, 0.248 -> 0.076 ms, the bf16
// tanh gradient, 0.666 -> 0.211 ms, and f16 exp (libm's, one call per
// element), 2.82 -> 2.38 ms.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/half_convert.h"

namespace ts::cpu {

template <typename T>
inline constexpr bool is_16bit_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Elements per block: eight AVX registers of f32 per operand.
inline constexpr int64_t kF32Block = 64;

// out[i] = f(in[i]...) for i < m <= kF32Block; the last m % 8 elements
// convert one at a time. Inlined, so that a whole block's loops have a
// constant length.
template <typename T, typename F, typename... In, size_t... J>
[[gnu::always_inline]] TS_AVX2_F16C inline void f32_block(T* out, int64_t m, const F& f, std::index_sequence<J...>,
                                                          const In*... in) {
  alignas(32) float inputs[sizeof...(In)][kF32Block];
  alignas(32) float result[kF32Block];
  const int64_t whole = m / 8 * 8;
  for (int64_t i = 0; i < whole; i += 8) (_mm256_store_ps(inputs[J] + i, widen8(in + i)), ...);
  for (int64_t i = whole; i < m; ++i) ((inputs[J][i] = load(in[i])), ...);
  // The analyzer cannot see that the two loops above fill [0, m) of each input.
  // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage)
  for (int64_t i = 0; i < m; ++i) result[i] = static_cast<float>(f(inputs[J][i]...));
  for (int64_t i = 0; i < whole; i += 8) narrow8(_mm256_load_ps(result + i), out + i);
  for (int64_t i = whole; i < m; ++i) out[i] = store<T>(result[i]);
}

template <typename T, typename F, typename... In>
TS_AVX2_F16C void f32_blocks(T* out, int64_t n, const F& f, const In*... in) {
  constexpr auto operands = std::index_sequence_for<In...>{};
  int64_t begin = 0;
  for (; begin + kF32Block <= n; begin += kF32Block) f32_block(out + begin, kF32Block, f, operands, (in + begin)...);
  if (begin < n) f32_block(out + begin, n - begin, f, operands, (in + begin)...);
}

// out[i] = f(in[i]...) for a run of n elements that every operand walks with
// unit stride, all of one 16-bit float type T. False (nothing done) on a CPU
// without AVX2 and F16C, where the caller's element loop runs instead.
template <typename T, typename F, typename... In>
bool in_f32_blocks(T* out, int64_t n, const F& f, const In*... in) {
  static_assert(is_16bit_float_v<T> && (std::is_same_v<In, T> && ...));
  if (!has_avx2_f16c()) return false;
  f32_blocks(out, n, f, in...);
  return true;
}

}  // namespace ts::cpu
