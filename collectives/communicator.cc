#include "collectives/communicator.h"

#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

ABSL_FLAG(absl::Duration, collectives_timeout, absl::Minutes(10),
          "Longest one collective may take before it fails with an error naming the missing "
          "ranks (env TS_COLLECTIVES_TIMEOUT, in seconds, wins)");
ABSL_FLAG(bool, collectives_debug, false,
          "Check before each collective that every rank called the same op on the same shape "
          "and dtype (env TS_COLLECTIVES_DEBUG=1 wins)");

namespace ts::collectives {

namespace {

class ReadyWork final : public Work::Impl {
 public:
  explicit ReadyWork(absl::Status status) : status_(std::move(status)) {}
  absl::Status wait() override { return status_; }
  bool is_completed() override { return true; }

 private:
  absl::Status status_;
};

}  // namespace

absl::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

absl::StatusOr<CommunicatorOptions> CommunicatorOptions::from_flags_and_env() {
  CommunicatorOptions options;
  options.timeout = absl::GetFlag(FLAGS_collectives_timeout);
  options.debug = absl::GetFlag(FLAGS_collectives_debug);
  if (const char* t = std::getenv("TS_COLLECTIVES_TIMEOUT"); t != nullptr && *t != '\0') {
    double seconds = 0;
    if (!absl::SimpleAtod(t, &seconds) || !(seconds > 0)) {  // NaN too
      return absl::InvalidArgumentError(
          absl::StrCat("TS_COLLECTIVES_TIMEOUT='", t, "' is not a positive number of seconds (or inf)"));
    }
    options.timeout = absl::Seconds(seconds);
  }
  if (const char* d = std::getenv("TS_COLLECTIVES_DEBUG"); d != nullptr && *d != '\0') {
    options.debug = std::string(d) != "0";
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--collectives_timeout must be positive");
  }
  return options;
}

Work Work::failed(absl::Status status) { return Work(std::make_shared<ReadyWork>(std::move(status))); }
Work Work::done() { return Work(std::make_shared<ReadyWork>(absl::OkStatus())); }

absl::StatusOr<std::vector<double>> allgather_values(Communicator& comm, const Device& device,
                                                     const std::vector<double>& mine) {
  const int64_t n = static_cast<int64_t>(mine.size());
  ASSIGN_OR_RETURN(const Tensor all, capture([&] { return zeros({comm.world_size(), n}, {DType::kF64, device}); }));
  ASSIGN_OR_RETURN(const Tensor own, capture([&] { return to(from_vector<double>(mine, {n}), device); }));
  RETURN_IF_ERROR(comm.allgather(all, own).synchronize());
  return capture([&] { return to_vector<double>(all); });
}

absl::StatusOr<double> broadcast_value(Communicator& comm, const Device& device, double mine, int root) {
  ASSIGN_OR_RETURN(const Tensor value, capture([&] { return full({1}, mine, {DType::kF64, device}); }));
  RETURN_IF_ERROR(comm.broadcast(value, root).synchronize());
  return capture([&] { return item<double>(value); });
}

absl::StatusOr<std::string> broadcast_bytes(Communicator& comm, const Device& device, const std::string& mine,
                                            int root) {
  ASSIGN_OR_RETURN(const double size, broadcast_value(comm, device, static_cast<double>(mine.size()), root));
  const auto n = static_cast<int64_t>(size);
  if (n == 0) return std::string();
  ASSIGN_OR_RETURN(const Tensor bytes, capture([&]() -> Tensor {
                     if (comm.rank() != root) return empty({n}, {DType::kU8, device});
                     const std::vector<uint8_t> host(mine.begin(), mine.end());
                     return to(from_vector<uint8_t>(host, {n}), device);
                   }));
  RETURN_IF_ERROR(comm.broadcast(bytes, root).synchronize());
  ASSIGN_OR_RETURN(const std::vector<uint8_t> received, capture([&] { return to_vector<uint8_t>(bytes); }));
  return std::string(received.begin(), received.end());
}

Work Communicator::send(const Tensor& tensor, int peer) {
  const PeerTransfer t{PeerTransfer::Kind::kSend, tensor, peer};
  return exchange(absl::MakeConstSpan(&t, 1));
}

Work Communicator::recv(const Tensor& tensor, int peer) {
  const PeerTransfer t{PeerTransfer::Kind::kRecv, tensor, peer};
  return exchange(absl::MakeConstSpan(&t, 1));
}

absl::Status check_split_colors(absl::Span<const int> colors) {
  for (size_t rank = 0; rank < colors.size(); ++rank) {
    if (colors[rank] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("split: rank ", rank, " passed color ", colors[rank],
                                                     "; colors must be >= 0 (every rank must be a member)"));
    }
  }
  return absl::OkStatus();
}

std::string describe_call(absl::string_view op, int64_t sequence, const Tensor& tensor, int rank, int world_size) {
  return absl::StrCat(op, " #", sequence, " of ", tensor.defined() ? tensor.describe() : "no tensor", " on rank ", rank,
                      " of ", world_size);
}

absl::Status check_tensor(absl::string_view op, const Tensor& tensor, Device device) {
  if (!tensor.defined()) return absl::InvalidArgumentError(absl::StrCat(op, ": tensor is undefined"));
  if (tensor.device() != device) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", tensor.describe(),
                                                   " is on the wrong device: this communicator works on ",
                                                   device.to_string(), " tensors only"));
  }
  if (!tensor.is_contiguous()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", tensor.describe(), " is not contiguous (call ts::contiguous first)"));
  }
  return absl::OkStatus();
}

absl::Status check_reduce_dtype(absl::string_view op, const Tensor& tensor, ReduceOp reduce) {
  if (reduce == ReduceOp::kAvg && !is_floating(tensor.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, "(avg): ", tensor.describe(), " is not floating point; use sum and divide"));
  }
  return absl::OkStatus();
}

absl::Status check_peer(absl::string_view op, int peer, int world_size, absl::string_view what) {
  if (peer < 0 || peer >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " ", peer, " is not a rank of a world of ", world_size));
  }
  return absl::OkStatus();
}

absl::Status check_gathered(absl::string_view op, const Tensor& large, const Tensor& small, int world_size) {
  if (large.dtype() != small.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": dtypes differ: ", large.describe(), " and ", small.describe()));
  }
  if (large.numel() != small.numel() * world_size) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", large.describe(), " must hold world size (", world_size,
                                                   ") x ", small.numel(), " elements of ", small.describe()));
  }
  return absl::OkStatus();
}

}  // namespace ts::collectives
