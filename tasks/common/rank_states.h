// A checkpoint of a run on several ranks: what a resuming run must share with
// the one that wrote it, and the recipe state each rank carries for itself
// (AWD-LSTM's LSTM states, say), gathered into the one checkpoint rank 0
// writes as "rank<r>/<name>" and split again when every rank resumes.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "nn/module.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

// OK when a run of shape `now` can resume a checkpoint written by a run of
// shape `saved` (same world size, batch size, gradient accumulation and
// seed); otherwise kFailedPrecondition naming the first field that differs.
absl::Status check_resumable(const RunShape& saved, const RunShape& now);

// Every rank's `mine` as "rank<r>/<name>", gathered on every rank (in
// `mine`'s order, each name once per rank). All ranks call it, with the same
// names, shapes and dtypes, as they run in step. Without a communicator:
// `mine` as rank 0's.
absl::StatusOr<nn::NamedTensors> gather_ranks_state(collectives::Communicator* comm, const nn::NamedTensors& mine);

// Rank `rank`'s part of `saved` (gather_ranks_state's layout), its names
// without the prefix. A checkpoint of another number of ranks is
// kFailedPrecondition. Checkpoints written before the layout (2026-11-28)
// hold one rank's names unprefixed; they resume on one rank.
absl::StatusOr<nn::NamedTensors> ranks_part(const nn::NamedTensors& saved, int rank, int world_size);

}  // namespace ts::tasks
