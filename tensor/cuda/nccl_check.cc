#include "tensor/cuda/nccl_check.h"

#include "absl/strings/str_cat.h"

namespace ts::cuda {

namespace {
const char* nccl_result_name(ncclResult_t e) {
  switch (e) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult";
  }
}
}  // namespace

std::string describe_error(ncclResult_t e) {
  return absl::StrCat(nccl_result_name(e), " (", ncclGetErrorString(e), ")");
}

}  // namespace ts::cuda
