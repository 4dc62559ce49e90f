// The machine a task runs on: device selection (CUDA when present, else CPU)
// and the description every report carries (CPU, GPU, CUDA, cuDNN, NCCL,
// host, commit, date).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "tensor/device.h"

namespace ts::tasks {

// "auto" (or empty): the local rank's GPU when CUDA is usable, else the CPU.
// "cpu", "cuda" (the local rank's GPU), "cuda:N": that device, an error
// naming it if unusable.
absl::StatusOr<Device> select_device(absl::string_view requested, int local_rank = 0);

// The local rank's GPU among those this process sees: GPU <local_rank> when
// the process sees the machine's GPUs (mpirun, tools/launch), GPU 0 when it
// sees one (srun --gpus-per-task=1 and other launchers that bind a GPU to
// each process through CUDA_VISIBLE_DEVICES).
int gpu_for_local_rank(int local_rank, int visible_gpus);

struct Environment {
  std::string hostname;
  std::string os;  // kernel name and release
  std::string cpu_model;
  std::string cpu_family_model;  // "family/model/stepping", e.g. "25/17/1"
  std::string cpu_vector_isa;    // widest of avx512f, avx2, avx, sse2
  std::string cpu_l2;            // per core, as sysfs says: "1024K"; "" if unknown
  std::string openblas_core;     // the kernels OpenBLAS runs (tensor/cpu/openblas.h)
  int cpu_logical_cores = 0;
  int cpu_usable_cores = 0;  // in this process's affinity mask
  // The CPU ops' threads (OMP_NUM_THREADS, else the usable cores): oneDNN's
  // and OpenBLAS's sums split by thread, so a CPU run's bits repeat on as
  // many threads only.
  int cpu_threads = 0;
  std::string device;  // the selected one: "cpu", "cuda:0"
  int gpu_count = 0;
  std::string gpu_name;  // of the selected device; "none" on the CPU
  std::string cuda_runtime;
  std::string cuda_driver;
  std::string cudnn;
  std::string nccl;
  std::string commit;  // build_commit()
  std::string date;    // UTC, ISO 8601

  Json to_json() const;
};

Environment describe_environment(const Device& device);

}  // namespace ts::tasks
