// The end every binary under tasks/ shares: a run that fails, by a Status or
// by an Error (or other exception) thrown from model code, ends with one line
// "<name>: <message>" on stderr, printed at once, and exit status 1. An error
// every rank shares is printed by rank 0 alone (said_by_rank_0).
//
// MPI is finalized when the run succeeded or every rank ends with the error
// (said_by_rank_0, shared_by_all_ranks). An error of this rank alone (its
// data, its model code, a peer that timed out) leaves without MPI_Finalize:
// the other ranks may be waiting for this one in a collective, and Open MPI's
// MPI_Finalize is a fence, so the rank would wait there until their
// collective timeout (10 minutes by default) ended them. mpirun takes an exit
// without it for a failure and stops the job at once. An error every rank
// meets alike outside a vote (a wrong --data_path while the recipe is made)
// leaves the same way, each rank with its line: no vote there, since a
// recipe may run collectives of its own (logreg's rank 0 writes the default
// data while the others wait), which a rank that failed before them would
// not join.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ts::tasks {

// Runs `body` and returns main's exit code: 0 or 1.
int run_to_exit_code(absl::string_view name, const std::function<absl::Status()>& body);

// `status`, marked (on every rank but rank 0, `leader` false) as an error
// that all ranks share and rank 0 prints: run_to_exit_code exits 1 for it
// without a line, so that N ranks do not print the same one N times.
absl::Status said_by_rank_0(bool leader, absl::Status status);

// `status`, marked as an error every rank ends with at this point (each
// prints its own line: the rank at fault its cause, the others whose it
// was), so that MPI is finalized.
absl::Status shared_by_all_ranks(absl::Status status);

}  // namespace ts::tasks
