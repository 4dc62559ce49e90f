// The CPU implementation of the kernel interface: plain loops over strided
// memory, split across the thread pool; OpenBLAS for matrix products.
#pragma once

#include "tensor/backend.h"

namespace ts::cpu {

class CpuBackend final : public Backend {
 public:
  absl::Status copy(const Tensor& src, const Tensor& out) override;
  absl::Status transfer(const Tensor& src, const Tensor& dst) override;
  absl::Status fill(const Tensor& out, const Scalar& value) override;
  absl::Status arange(const Tensor& out, double start, double step) override;
  absl::Status random(RandomKind kind, const Tensor& out, PhiloxKey key, double a, double b,
                      const Tensor& probs) override;
  absl::Status unary(UnaryOp op, const Tensor& a, const Tensor& out) override;
  absl::Status binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) override;
  absl::Status where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) override;
  absl::Status reduce(ReduceOp op, const Tensor& in, ReduceGeometry geometry, double param,
                      const Tensor& out) override;
  absl::Status matmul(const Tensor& a, const Tensor& b, const Tensor& out) override;
  absl::Status softmax(const Tensor& in, ReduceGeometry geometry, bool log, const Tensor& out) override;
  absl::Status cat(absl::Span<const Tensor> inputs, int64_t dim, const Tensor& out) override;
  absl::Status index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  absl::Status gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  absl::Status scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) override;
};

Backend& backend();

}  // namespace ts::cpu
