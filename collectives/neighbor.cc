#include "collectives/neighbor.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
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

absl::StatusOr<int> machine_index(Communicator& world, const Device& device) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return absl::InternalError("machine_index: gethostname failed");
  const int64_t hash = static_cast<int64_t>(std::hash<std::string>()(host));
  Tensor all, mine;
  RETURN_IF_ERROR(capture([&] {
    all = empty({world.world_size()}, {DType::kI64, device});
    mine = all.narrow(0, world.rank(), 1);
    copy_(mine, from_vector<int64_t>(std::vector<int64_t>{hash}, {1}));
  }));
  RETURN_IF_ERROR(world.allgather(all, mine).synchronize());
  // Machines are numbered in the order of their lowest rank.
  ASSIGN_OR_RETURN(const std::vector<int64_t> hashes, capture([&] { return to_vector<int64_t>(all); }));
  std::vector<int64_t> seen;
  for (int r = 0;; ++r) {
    if (std::find(seen.begin(), seen.end(), hashes[r]) == seen.end()) seen.push_back(hashes[r]);
    if (hashes[r] == hashes[world.rank()]) return static_cast<int>(seen.size()) - 1;
  }
}

absl::StatusOr<Tensor> hierarchical_neighbor_allreduce(MachineComms& comms, const Tensor& x,
                                                       const Topology& machine_topology) {
  // A row-major copy to average in place (a clone keeps x's layout, and the
  // allreduce takes row-major tensors only: channels-last ones were refused).
  const Tensor local = x.is_contiguous() ? clone(x) : contiguous(x);
  RETURN_IF_ERROR(comms.local->allreduce(local, ReduceOp::kAvg).wait());
  return neighbor_allreduce(*comms.cross, local, machine_topology);
}

Combine neighbor_combine(Communicator& comm, const Topology& topology) {
  return [&comm, topology](const Tensor& flat) { return neighbor_allreduce(comm, flat, topology); };
}

Combine hierarchical_combine(MachineComms& comms, const Topology& machine_topology) {
  return [&comms, machine_topology](const Tensor& flat) {
    return hierarchical_neighbor_allreduce(comms, flat, machine_topology);
  };
}

Combine allreduce_combine(Communicator& comm) {
  return [&comm](const Tensor& flat) -> absl::StatusOr<Tensor> {
    const Tensor mean = clone(flat);
    RETURN_IF_ERROR(comm.allreduce(mean, ReduceOp::kAvg).wait());
    return mean;
  };
}

namespace {

absl::Status check_step_arguments(absl::Span<const Tensor> params, absl::Span<const Tensor> grads) {
  if (params.size() != grads.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("decentralized_step: ", params.size(), " parameters but ", grads.size(), " gradients"));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].shape() != grads[i].shape() || params[i].dtype() != grads[i].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("decentralized_step: parameter ", i, " is ", params[i].describe(),
                                                     " but its gradient is ", grads[i].describe()));
    }
  }
  return absl::OkStatus();
}

// Indices of the tensors of each (dtype, device), in order of first
// appearance: the members of one fusion buffer each.
std::vector<std::vector<size_t>> fusion_groups(absl::Span<const Tensor> tensors) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto same_kind = [&](const std::vector<size_t>& group) {
      const Tensor& first = tensors[group.front()];
      return first.dtype() == tensors[i].dtype() && first.device() == tensors[i].device();
    };
    auto group = std::find_if(groups.begin(), groups.end(), same_kind);
    if (group == groups.end()) {
      groups.push_back({i});
    } else {
      group->push_back(i);
    }
  }
  return groups;
}

// The member tensors flattened and laid end to end.
Tensor pack(absl::Span<const Tensor> tensors, absl::Span<const size_t> members) {
  std::vector<Tensor> pieces;
  for (size_t i : members) pieces.push_back(reshape(tensors[i], {tensors[i].numel()}));
  return cat(pieces, 0);
}

// Copies consecutive pieces of `flat` back into the member tensors.
void unpack(const Tensor& flat, absl::Span<const Tensor> tensors, absl::Span<const size_t> members) {
  int64_t offset = 0;
  for (size_t i : members) {
    copy_(tensors[i], flat.narrow(0, offset, tensors[i].numel()).view(Dims(tensors[i].shape())));
    offset += tensors[i].numel();
  }
}

absl::Status fused_step(absl::Span<const Tensor> params, absl::Span<const Tensor> grads,
                        absl::Span<const size_t> members, double lr, DecentralizedStyle style, const Combine& combine) {
  const Tensor x = pack(params, members);
  const Tensor step = pack(grads, members) * lr;
  const bool atc = style == DecentralizedStyle::kAtc;
  ASSIGN_OR_RETURN(const Tensor combined, combine(atc ? x - step : x));
  if (combined.shape() != x.shape() || combined.dtype() != x.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("decentralized_step: the combine returned ", combined.describe(),
                                                   " for the flat buffer ", x.describe()));
  }
  unpack(atc ? combined : combined - step, params, members);
  return absl::OkStatus();
}

}  // namespace

absl::Status decentralized_step(absl::Span<const Tensor> params, absl::Span<const Tensor> grads, double lr,
                                DecentralizedStyle style, const Combine& combine) {
  RETURN_IF_ERROR(check_step_arguments(params, grads));
  for (const std::vector<size_t>& members : fusion_groups(params)) {
    RETURN_IF_ERROR(fused_step(params, grads, members, lr, style, combine));
  }
  return absl::OkStatus();
}

}  // namespace ts::collectives
