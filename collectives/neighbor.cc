#include "collectives/neighbor.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::collectives {

absl::StatusOr<Tensor> neighbor_allreduce(Communicator& comm, const Tensor& x, const Topology& topology) {
  if (topology.size() != comm.world_size()) {
    return absl::InvalidArgumentError(absl::StrCat("neighbor_allreduce: topology of ", topology.size(),
                                                   " ranks on a communicator of ", comm.world_size()));
  }
  if (!x.defined() || !is_floating(x.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "neighbor_allreduce: ", x.defined() ? x.describe() : "undefined tensor", " is not floating point"));
  }
  const int rank = comm.rank();
  const Tensor mine = contiguous(x);
  std::vector<PeerTransfer> transfers;
  for (int peer : topology.out_neighbors(rank)) {
    transfers.push_back({PeerTransfer::Kind::kSend, mine, peer});
  }
  std::vector<Tensor> received;
  for (const auto& [peer, weight] : topology.in_neighbors(rank)) {
    Tensor buffer = Tensor::allocate(Dims(x.shape()), x.dtype(), x.device());
    received.push_back(buffer);
    transfers.push_back({PeerTransfer::Kind::kRecv, buffer, peer});
  }
  RETURN_IF_ERROR(comm.exchange(transfers).wait());
  Tensor out = mine * topology.self_weight(rank);
  for (size_t i = 0; i < received.size(); ++i) {
    out = out + received[i] * topology.in_neighbors(rank)[i].second;
  }
  return out;
}

absl::StatusOr<MachineComms> split_by_machine(Communicator& world, int machine) {
  MachineComms comms;
  ASSIGN_OR_RETURN(comms.local, world.split(machine, world.rank()));
  ASSIGN_OR_RETURN(comms.cross, world.split(comms.local->rank(), machine));
  return comms;
}

absl::StatusOr<int> machine_index(Communicator& world) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return absl::InternalError("machine_index: gethostname failed");
  const Tensor all = Tensor::allocate({world.world_size()}, DType::kI64, Device::cpu());
  const Tensor mine = all.narrow(0, world.rank(), 1);
  mine.data<int64_t>()[0] = static_cast<int64_t>(std::hash<std::string>()(host));
  RETURN_IF_ERROR(world.allgather(all, mine).wait());
  // Machines are numbered in the order of their lowest rank.
  const int64_t* hashes = all.data<int64_t>();
  std::vector<int64_t> seen;
  for (int r = 0;; ++r) {
    if (std::find(seen.begin(), seen.end(), hashes[r]) == seen.end()) seen.push_back(hashes[r]);
    if (hashes[r] == hashes[world.rank()]) return static_cast<int>(seen.size()) - 1;
  }
}

absl::StatusOr<Tensor> hierarchical_neighbor_allreduce(MachineComms& comms, const Tensor& x,
                                                       const Topology& machine_topology) {
  const Tensor local = clone(x);
  RETURN_IF_ERROR(comms.local->allreduce(local, ReduceOp::kAvg).wait());
  return neighbor_allreduce(*comms.cross, local, machine_topology);
}

absl::Status decentralized_step(Communicator& comm, const Topology& topology, absl::Span<const Tensor> params,
                                absl::Span<const Tensor> grads, double lr, DecentralizedStyle style) {
  if (params.size() != grads.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("decentralized_step: ", params.size(), " parameters but ", grads.size(), " gradients"));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].shape() != grads[i].shape()) {
      return absl::InvalidArgumentError(absl::StrCat("decentralized_step: parameter ", i, " is ", params[i].describe(),
                                                     " but its gradient is ", grads[i].describe()));
    }
    const Tensor step = grads[i] * lr;
    Tensor next;
    if (style == DecentralizedStyle::kAtc) {
      ASSIGN_OR_RETURN(next, neighbor_allreduce(comm, params[i] - step, topology));
    } else {
      ASSIGN_OR_RETURN(const Tensor combined, neighbor_allreduce(comm, params[i], topology));
      next = combined - step;
    }
    copy_(params[i], next);
  }
  return absl::OkStatus();
}

}  // namespace ts::collectives
