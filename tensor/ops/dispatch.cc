// The one place ops choose a backend by device.
#include "tensor/backend.h"
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cuda/cuda_backend.h"

namespace ts {

Backend& backend_for(Device device) { return device.is_cuda() ? cuda::backend() : cpu::backend(); }

}  // namespace ts
