// The dtype dispatch both backends share: visit_dtype_as calls a generic
// lambda with a TypeTag of the element type of a dtype, the 16-bit floats
// mapped to the backend's own types (ts::Half on the host, __half in CUDA
// code); kernel_exists says which (op, element type) pairs a kernel is
// instantiated for; no_kernel is the error for any other pair (the op
// frontends never send one).
#pragma once

#include <cstdint>

#include "tensor/dtype.h"
#include "tensor/functors.h"

namespace ts {

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename F16, typename BF16, typename F>
decltype(auto) visit_dtype_as(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kU8:
      return f(TypeTag<uint8_t>{});
    case DType::kI32:
      return f(TypeTag<int32_t>{});
    case DType::kI64:
      return f(TypeTag<int64_t>{});
    case DType::kF16:
      return f(TypeTag<F16>{});
    case DType::kBF16:
      return f(TypeTag<BF16>{});
    case DType::kF32:
      return f(TypeTag<float>{});
    case DType::kF64:
      return f(TypeTag<double>{});
  }
  return f(TypeTag<float>{});  // unreachable: every enumerator is handled
}

// Whether an elementwise op with dtype rule R has a kernel for element type
// T (kIsFloat: T is a floating type of the backend).
template <typename R, typename T, bool kIsFloat>
constexpr bool kernel_exists() {
  return functors::rule_supports<R, kIsFloat, std::is_same_v<T, bool>>();
}

// Throws: "<backend> <op>: no kernel for <dtype>".
[[noreturn]] void no_kernel(const char* backend, const char* op, DType dtype);

}  // namespace ts
