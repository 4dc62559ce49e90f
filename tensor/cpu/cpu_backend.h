// The CPU implementation of the kernel interface: plain loops over strided
// memory, split across the thread pool; OpenBLAS for matrix products.
#pragma once

#include "tensor/backend.h"

namespace ts::cpu {

class CpuBackend final : public Backend {
 public:
  void copy(const Tensor& src, const Tensor& out) override;
  void transfer(const Tensor& src, const Tensor& dst) override;
  void fill(const Tensor& out, const Scalar& value) override;
  void arange(const Tensor& out, double start, double step) override;
  void random(RandomKind kind, const Tensor& out, PhiloxKey key, double a, double b, const Tensor& probs) override;
  void unary(UnaryOp op, const Tensor& a, const Tensor& out) override;
  void binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) override;
  void where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) override;
  void unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& out) override;
  void binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b, const Tensor& y,
                   const Tensor& out) override;
  void reduce(ReduceOp op, const Tensor& in, ReduceGeometry geometry, double param, const Tensor& out) override;
  void matmul(const Tensor& a, const Tensor& b, const Tensor& out) override;
  void softmax(const Tensor& in, ReduceGeometry geometry, bool log, const Tensor& out) override;
  void cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& weight_sum,
                     int64_t ignore_index, double label_smoothing, const Tensor& loss, const Tensor& row_weight,
                     const Tensor& logsumexp) override;
  void cross_entropy_grad(const Tensor& grad, const Tensor& logits, const Tensor& target, const Tensor& weight,
                          const Tensor& weight_sum, const Tensor& logsumexp, int64_t ignore_index,
                          double label_smoothing, const Tensor& out) override;
  void cat(absl::Span<const Tensor> inputs, int64_t dim, const Tensor& out) override;
  void index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) override;
  void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) override;
};

Backend& backend();

}  // namespace ts::cpu
