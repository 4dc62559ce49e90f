#include "tasks/common/environment.h"

#include <cudnn.h>
#include <nccl.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/build_info.h"
#include "tensor/cpu/openblas.h"
#include "tensor/cpu/parallel.h"
#include "tensor/cuda/device.h"

namespace ts::tasks {
namespace {

// The first processor's "key : value" fields of /proc/cpuinfo that `keys`
// name, in that order ("" where missing).
std::vector<std::string> cpuinfo_fields(const std::vector<std::string>& keys) {
  std::vector<std::string> values(keys.size());
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line) && !line.empty()) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const absl::string_view key = absl::StripAsciiWhitespace(absl::string_view(line).substr(0, colon));
    for (size_t i = 0; i < keys.size(); ++i) {
      if (key == keys[i]) values[i] = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return values;
}

// Hypervisors often show only "AMD EPYC" as the model name; family, model
// and stepping, the widest vector ISA (which decides, e.g., OpenBLAS's
// kernels) and the L2 per core tell two such machines apart.
void describe_cpu(Environment& e) {
  const std::vector<std::string> f = cpuinfo_fields({"model name", "cpu family", "model", "stepping", "flags"});
  e.cpu_model = f[0].empty() ? "unknown" : f[0];
  e.cpu_family_model = absl::StrCat(f[1], "/", f[2], "/", f[3]);
  const std::vector<absl::string_view> flags = absl::StrSplit(f[4], ' ', absl::SkipEmpty());
  const auto has = [&](absl::string_view flag) { return absl::c_linear_search(flags, flag); };
  e.cpu_vector_isa = has("avx512f") ? "avx512f" : has("avx2") ? "avx2" : has("avx") ? "avx" : "sse2";
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::ifstream level(dir + "level"), size(dir + "size");
    int l = 0;
    std::string text;
    if (!(level >> l) || !(size >> text)) break;
    if (l == 2) e.cpu_l2 = text;
  }
}

// cuDNN 9 encodes major*10000 + minor*100 + patch.
std::string cudnn_version() {
  const size_t v = cudnnGetVersion();
  return absl::StrCat(v / 10000, ".", v % 10000 / 100, ".", v % 100);
}

// NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return absl::StrCat(v / 10000, ".", v % 10000 / 100, ".", v % 100);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int gpu_for_local_rank(int local_rank, int visible_gpus) { return visible_gpus == 1 ? 0 : local_rank; }

absl::StatusOr<Device> select_device(absl::string_view requested, int local_rank) {
  if (requested.empty() || requested == "auto") {
    if (!cuda::is_available()) return Device::cpu();
    requested = "cuda";
  }
  absl::StatusOr<Device> device = parse_device(requested);
  if (!device.ok()) return absl::InvalidArgumentError(absl::StrCat("--device: ", device.status().message()));
  // An explicit index is taken as given.
  if (requested == "cuda") device = Device::cuda(gpu_for_local_rank(local_rank, cuda::device_count()));
  if (device->is_cuda()) {
    if (absl::Status s = cuda::check_device(device->index); !s.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("--device=", requested, " (", device->to_string(), "): ", s.message()));
    }
  }
  return *device;
}

Environment describe_environment(const Device& device) {
  Environment e;
  char host[256] = {};
  e.hostname = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  struct utsname u;
  e.os = ::uname(&u) == 0 ? absl::StrCat(u.sysname, " ", u.release) : "unknown";
  describe_cpu(e);
  e.openblas_core = cpu::openblas_core();
  e.cpu_logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  e.cpu_usable_cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : e.cpu_logical_cores;
  e.cpu_threads = cpu::num_threads();
  e.device = device.to_string();
  e.gpu_count = cuda::device_count();
  e.gpu_name = "none";
  if (device.is_cuda()) {
    absl::StatusOr<cuda::DeviceProperties> p = cuda::device_properties(device.index);
    e.gpu_name = p.ok() ? absl::StrCat(p->name, " (sm_", p->major, p->minor, ", ", p->total_memory >> 20, " MiB)")
                        : absl::StrCat("unknown: ", p.status().message());
  }
  e.cuda_runtime = cuda::runtime_version();
  e.cuda_driver = cuda::driver_version();
  e.cudnn = cudnn_version();
  e.nccl = nccl_version();
  e.commit = build_commit();
  e.date = utc_now();
  return e;
}

Json Environment::to_json() const {
  Json j = Json::object();
  j["hostname"] = hostname;
  j["os"] = os;
  j["cpu_model"] = cpu_model;
  j["cpu_family_model"] = cpu_family_model;
  j["cpu_vector_isa"] = cpu_vector_isa;
  j["cpu_l2"] = cpu_l2;
  j["openblas_core"] = openblas_core;
  j["cpu_logical_cores"] = cpu_logical_cores;
  j["cpu_usable_cores"] = cpu_usable_cores;
  j["cpu_threads"] = cpu_threads;
  j["device"] = device;
  j["gpu_count"] = gpu_count;
  j["gpu_name"] = gpu_name;
  j["cuda_runtime"] = cuda_runtime;
  j["cuda_driver"] = cuda_driver;
  j["cudnn"] = cudnn;
  j["nccl"] = nccl;
  j["commit"] = commit;
  j["date"] = date;
  return j;
}

}  // namespace ts::tasks
