// Copies: between layouts and dtypes on one device (copy), and between the
// host and a device (transfer).
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/stream.h"

namespace ts::cuda {
namespace {

// Host memory that cudaHostAlloc or cudaHostRegister page-locked; plain
// allocations are "unregistered" (not an error since CUDA 11).
bool is_page_locked(const void* host) {
  cudaPointerAttributes attributes{};
  TS_CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace

void CudaBackend::copy(const Tensor& src, const Tensor& out) {
  const auto layout = make_layout<2>({&out, &src});
  // Empty tensors have no memory to point at.
  if (layout.numel == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(src.dtype(), [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    visit_dtype(out.dtype(), [&](auto out_tag) {
      using D = typename decltype(out_tag)::type;
      if constexpr (std::is_same_v<S, D>) {
        // One dtype: the bits move unchanged (NaN payloads too), by element
        // size, and a flat pair is a single memcpy.
        if (layout.all_flat()) {
          TS_CUDA_CHECK(cudaMemcpyAsync(out.raw_data(), src.raw_data(), layout.numel * sizeof(D),
                                        cudaMemcpyDeviceToDevice, stream));
          return;
        }
        using B = Bits<sizeof(D)>;
        launch_elementwise(device, stream, layout, static_cast<B*>(out.raw_data()), Identity{}, Input<B>::of(src));
      } else {
        launch_elementwise(device, stream, layout, static_cast<D*>(out.raw_data()), Identity{}, Input<S>::of(src));
      }
    });
  });
}

void CudaBackend::transfer(const Tensor& src, const Tensor& dst) {
  const bool to_host = dst.device().is_cpu();
  const bool between_gpus = src.device().is_cuda() && dst.device().is_cuda();
  const int device = to_host ? src.device().index : dst.device().index;
  const int64_t bytes = src.numel() * src.itemsize();
  // Empty tensors have no memory to point at.
  if (bytes == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  // Between two GPUs unified addressing tells the direction.
  const cudaMemcpyKind kind = between_gpus ? cudaMemcpyDefault
                              : to_host    ? cudaMemcpyDeviceToHost
                                           : cudaMemcpyHostToDevice;
  // A host-to-device copy from pageable memory has consumed its source when
  // the call returns. One from page-locked memory (the loader's pinned batch
  // buffers) runs later, on the stream: the caller may free or refill the
  // buffer as soon as this returns (the pool hands it to the next batch), so
  // that copy is waited for, with the work queued before it; the
  // asynchronous path for pinned batches is DevicePrefetcher, which keeps
  // the buffers until its own copies are done. A device-to-host copy is
  // complete only once the stream has caught up, which the caller relies on.
  // So is one between GPUs: the source GPU's streams know nothing of the destination's. For
  // the same reason the copy runs only once the source GPU's stream has
  // written `src` (the caller has just filled it there); under the source's
  // device, since the legacy default stream is each device's own.
  if (between_gpus) {
    DeviceGuard source(src.device().index);
    TS_CUDA_CHECK(cudaStreamSynchronize(current_stream(src.device().index)));
  }
  TS_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), bytes, kind, stream));
  if (to_host || between_gpus || is_page_locked(src.raw_data())) TS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace ts::cuda
