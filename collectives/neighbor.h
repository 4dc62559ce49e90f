// Bluefog's decentralized operations on any Communicator: neighbor_allreduce
// (a weighted average with the in-neighbors of a topology, through send/recv),
// its hierarchical form (average inside each machine, then neighbor exchange
// between machines), and the decentralized optimizer steps in the ATC and DGD
// styles over plain (parameter, gradient) tensors, with the communication
// pluggable.
#pragma once

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collectives/communicator.h"
#include "collectives/topology.h"
#include "tensor/tensor.h"

namespace ts::collectives {

// self_weight * x + sum over in-neighbors j of w_j * x_j, as a new tensor of
// x's dtype and device. topology.size() must be the world size; x must be
// floating.
absl::StatusOr<Tensor> neighbor_allreduce(Communicator& comm, const Tensor& x, const Topology& topology);

// The two communicators of the hierarchical form: the ranks of this machine,
// and the ranks with this local rank across machines (one per machine).
struct MachineComms {
  std::unique_ptr<Communicator> local;
  std::unique_ptr<Communicator> cross;
};
// `machine` numbers this rank's machine (0, 1, ...); machine_index() finds it
// from host names, gathered through `device` (the one `world`'s backend
// moves: the CPU for MPI, the rank's GPU for NCCL).
absl::StatusOr<MachineComms> split_by_machine(Communicator& world, int machine);
absl::StatusOr<int> machine_index(Communicator& world, const Device& device);

// Averages x over the machine (comms.local), then neighbor-averages between
// machines along `machine_topology` (of comms.cross's size).
absl::StatusOr<Tensor> hierarchical_neighbor_allreduce(MachineComms& comms, const Tensor& x,
                                                       const Topology& machine_topology);

// x -> W x for one flat buffer: the communication of a decentralized step.
using Combine = std::function<absl::StatusOr<Tensor>(const Tensor& flat)>;

// neighbor_allreduce along `topology` (copied, so a schedule's graph of one
// iteration may be passed as a temporary); `comm` must outlive the Combine.
Combine neighbor_combine(Communicator& comm, const Topology& topology);
// hierarchical_neighbor_allreduce; `comms` must outlive the Combine.
Combine hierarchical_combine(MachineComms& comms, const Topology& machine_topology);
// The average over every rank of `comm` (W = 11^T / n).
Combine allreduce_combine(Communicator& comm);

// ATC (adapt then combine): x <- W (x - lr g). DGD (combine while adapting,
// Bluefog's default): x <- W x - lr g, where the gradient was taken at x.
enum class DecentralizedStyle { kAtc, kDgd };

// One step on every (params[i], grads[i]) pair; params are updated in place.
// As Bluefog's fusion buffer does, the parameters of each dtype and device
// are packed into one flat buffer and combined once. Every rank passes the
// same number of tensors with matching shapes and dtypes.
absl::Status decentralized_step(absl::Span<const Tensor> params, absl::Span<const Tensor> grads, double lr,
                                DecentralizedStyle style, const Combine& combine);

}  // namespace ts::collectives
