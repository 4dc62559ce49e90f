// The process's MPI library: initialization (threads allowed, errors returned
// instead of Open MPI's default abort), error text, and finalization that
// is skipped after a peer failed (MPI_Finalize would wait for it forever).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ts::collectives::mpi {

// Initializes MPI once per process (MPI_THREAD_MULTIPLE when the library
// offers it) unless the program already did, and sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD.
absl::Status ensure_initialized();

// OK for MPI_SUCCESS; otherwise an error naming the call and MPI's text.
absl::Status check(int rc, absl::string_view call);

// The largest message payload that Open MPI's shared-memory transport (btl
// vader, "sm" from Open MPI 5) sends eagerly, read through MPI_T; 0 when the
// transport is not loaded or says nothing. Larger messages take a
// rendezvous (a handshake, then a single copy), which at a few KiB costs
// more than the copy itself.
int64_t shared_memory_eager_bytes();

// Records that a collective failed in this process (a peer died or hung).
void mark_failed();
bool has_failed();

// Finalizes MPI if this library initialized it and nothing failed. Returns
// whether it did. Call it at the end of main.
bool finalize();

}  // namespace ts::collectives::mpi
