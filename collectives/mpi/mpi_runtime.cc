#include "collectives/mpi/mpi_runtime.h"

#include <atomic>
#include <mutex>
#include <optional>

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
      g_init_status = check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      if (!g_init_status.ok()) return;
      g_we_initialized = true;
    }
    g_init_status = check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                          "MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)");
  });
  return g_init_status;
}

namespace {

// An unsigned size control variable of MPI_T, if the library has it.
std::optional<uint64_t> read_size_cvar(absl::string_view wanted) {
  int count = 0;
  if (MPI_T_cvar_get_num(&count) != MPI_SUCCESS) return std::nullopt;
  for (int i = 0; i < count; ++i) {
    char name[256], description[1024];
    int name_length = sizeof(name), description_length = sizeof(description);
    int verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(i, name, &name_length, &verbosity, &type, &enumtype, description, &description_length,
                            &binding, &scope) != MPI_SUCCESS ||
        wanted != name || binding != MPI_T_BIND_NO_OBJECT) {
      continue;
    }
    MPI_T_cvar_handle handle;
    int elements = 0;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &elements) != MPI_SUCCESS) return std::nullopt;
    std::optional<uint64_t> value;
    if (elements == 1 && type == MPI_UNSIGNED_LONG) {
      unsigned long v = 0;
      if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) value = v;
    } else if (elements == 1 && type == MPI_UNSIGNED_LONG_LONG) {
      unsigned long long v = 0;
      if (MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) value = v;
    }
    MPI_T_cvar_handle_free(&handle);
    return value;
  }
  return std::nullopt;
}

}  // namespace

int64_t shared_memory_eager_bytes() {
  // Open MPI's limit counts its headers (ob1's match header and the
  // transport's own, well under this allowance).
  constexpr int64_t kHeaderAllowance = 64;
  static const int64_t bytes = [] {
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return int64_t{0};
    std::optional<uint64_t> limit = read_size_cvar("btl_vader_eager_limit");
    if (!limit) limit = read_size_cvar("btl_sm_eager_limit");
    MPI_T_finalize();
    return limit && *limit > 2 * kHeaderAllowance ? static_cast<int64_t>(*limit) - kHeaderAllowance : int64_t{0};
  }();
  return bytes;
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
