#include "collectives/mpi/mpi_runtime.h"

#include <atomic>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace ts::collectives::mpi {

namespace {
std::atomic<bool> g_failed{false};
bool g_we_initialized = false;
std::once_flag g_init_once;
absl::Status g_init_status;
}  // namespace

absl::Status check(int rc, absl::string_view call) {
  if (rc == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  return absl::InternalError(
      absl::StrCat(call, " failed: ", length > 0 ? absl::string_view(text, length) : "unknown MPI error"));
}

absl::Status ensure_initialized() {
  std::call_once(g_init_once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      g_init_status = check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
                            "MPI_Init_thread");
      if (!g_init_status.ok()) return;
      g_we_initialized = true;
    }
    g_init_status = check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                          "MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)");
  });
  return g_init_status;
}

void mark_failed() { g_failed = true; }
bool has_failed() { return g_failed; }

bool finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!g_we_initialized || finalized || g_failed) return false;
  return MPI_Finalize() == MPI_SUCCESS;
}

}  // namespace ts::collectives::mpi
