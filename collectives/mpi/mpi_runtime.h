// The process's MPI library: initialization (threads allowed, errors returned
// instead of Open MPI's default abort), error text, and finalization that
// is skipped after a peer failed (MPI_Finalize would wait for it forever).
#pragma once

#include <mpi.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ts::collectives::mpi {

// Initializes MPI once per process (MPI_THREAD_MULTIPLE when the library
// offers it) unless the program already did, and sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD.
absl::Status ensure_initialized();

// OK for MPI_SUCCESS; otherwise an error naming the call and MPI's text.
absl::Status check(int rc, absl::string_view call);

// Records that a collective failed in this process (a peer died or hung).
void mark_failed();
bool has_failed();

// Finalizes MPI if this library initialized it and nothing failed. Returns
// whether it did. Call it at the end of main.
bool finalize();

}  // namespace ts::collectives::mpi
