// MLBench task 0 (communication benchmark): allreduce of 1 to 1e8 elements
// (np.logspace(0, 8, 80)), f32 and f16, on the CPU through the MPI backend
// or on CUDA through NCCL. Per size: median and p95 latency over the
// repeats (slowest rank per repeat), algorithm and bus bandwidth as
// nccl-tests define them, and on the CPU a baseline of MPI_Allreduce called
// directly on the same buffers, timed in alternation with ours. On CUDA each
// rank takes its local rank's GPU, and MPI is not needed: without mpirun the
// NCCL id goes through the TCP rendezvous (collectives/world.h).
//
//   tools/launch -np 2 //tasks/comm_bench -- --device=cpu --output=comm_bench.json
//   comm_bench --device=cuda        (one GPU, no launcher)
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/error.h"
#include "base/files.h"
#include "base/percentile.h"
#include "base/status_macros.h"
#include "collectives/environment.h"
#include "collectives/mpi/mpi_communicator.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/world.h"
#include "tasks/comm_bench/sizes.h"
#include "tasks/common/environment.h"
#include "tasks/common/exit_code.h"
#include "tasks/common/rank_flags.h"
#include "tasks/common/report.h"
#include "tasks/common/report_path.h"
#include "tasks/common/usage.h"
#include "tensor/half.h"
#include "tensor/ops.h"

ABSL_FLAG(int64_t, max_size, 100000000, "Largest allreduce, in elements");
ABSL_FLAG(int64_t, min_size, 1, "Smallest allreduce, in elements (sizes below are skipped)");
ABSL_FLAG(int, repeats, 100, "Timed allreduces per size (after the warm-up)");
ABSL_FLAG(int, warmup, 5, "Untimed allreduces per size first");
ABSL_FLAG(std::string, dtypes, "f32,f16", "Comma-separated dtypes");
ABSL_FLAG(std::string, device, "cpu", "cpu (MPI backend), cuda (NCCL, the local rank's GPU) or cuda:N");
ABSL_FLAG(std::string, output, "comm_bench.json", "JSON report path (written by rank 0)");

namespace ts::tasks::comm_bench {
namespace {

using collectives::Communicator;
using collectives::ReduceOp;

// The f16 sum MPI lacks, for the direct-MPI baseline: pairwise in f32,
// rounded per step, as our backend does.
void half_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const Half* a = static_cast<const Half*>(in);
  Half* b = static_cast<Half*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = Half(float(a[i]) + float(b[i]));
}

// Median and p95 as NumPy's percentile; the mean is nccl-tests' figure (it
// reports the average time and the bandwidths from it), MLBench's too.
struct Stats {
  double median_s = 0;
  double p95_s = 0;
  double mean_s = 0;
};

Stats stats_of(const std::vector<double>& t) {
  return {percentile(t, 50), percentile(t, 95), std::accumulate(t.begin(), t.end(), 0.0) / t.size()};
}

// Per repeat, the slowest rank's time (exchanged on the communicator's device).
absl::StatusOr<std::vector<double>> slowest(Communicator& comm, const Device& device, const std::vector<double>& mine) {
  Tensor t = to(from_vector<double>(mine, {static_cast<int64_t>(mine.size())}), device);
  RETURN_IF_ERROR(comm.allreduce(t, ReduceOp::kMax).synchronize());
  return to_vector<double>(t);
}

double bus_factor(int p) { return 2.0 * (p - 1) / p; }

// The flags, checked before any rank connects: a run that cannot time
// anything fails with the flag's name rather than writing a table of NaN.
struct Options {
  std::vector<DType> dtypes;
  std::vector<int64_t> sizes;  // elements, ascending
  int repeats = 0;
  int warmup = 0;
};

absl::StatusOr<Options> options_from_flags() {
  Options o;
  o.repeats = absl::GetFlag(FLAGS_repeats);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  if (o.repeats < 1) return absl::InvalidArgumentError(absl::StrCat("--repeats=", o.repeats, ": must be >= 1"));
  if (o.warmup < 0) return absl::InvalidArgumentError(absl::StrCat("--warmup=", o.warmup, ": must be >= 0"));
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_dtypes), ',', absl::SkipEmpty())) {
    absl::StatusOr<DType> dtype = parse_dtype(name);
    if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtypes: ", dtype.status().message()));
    o.dtypes.push_back(*dtype);
  }
  if (o.dtypes.empty()) return absl::InvalidArgumentError("--dtypes: names no dtype");
  const int64_t min_size = absl::GetFlag(FLAGS_min_size);
  const int64_t max_size = absl::GetFlag(FLAGS_max_size);
  for (int64_t n : logspace_sizes(max_size)) {
    if (n >= min_size) o.sizes.push_back(n);
  }
  if (o.sizes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--min_size=", min_size, " --max_size=", max_size,
                                                   ": no size of the series (1 to 1e8 elements, "
                                                   "np.logspace(0, 8, 80)) lies between them"));
  }
  return o;
}

absl::Status run() {
  ASSIGN_OR_RETURN(const Options o, options_from_flags());
  ASSIGN_OR_RETURN(collectives::CommunicatorOptions options, collectives::CommunicatorOptions::from_flags_and_env());
  ASSIGN_OR_RETURN(const collectives::LaunchEnvironment env, collectives::discover_environment());
  // "cuda" is the local rank's GPU, as for the tasks.
  ASSIGN_OR_RETURN(Device device, select_device(absl::GetFlag(FLAGS_device), env.local_rank));
  // CPU: our MPI backend, and MPI_Allreduce on its MPI communicator as the
  // baseline. CUDA: NCCL alone.
  std::unique_ptr<collectives::mpi::MpiCommunicator> mpi_comm;
  std::unique_ptr<Communicator> gpu_comm;
  MPI_Op half_op = MPI_OP_NULL;
  if (device.is_cuda()) {
    ASSIGN_OR_RETURN(gpu_comm, collectives::connect_world(env, device, options));
  } else {
    RETURN_IF_ERROR(collectives::mpi::ensure_initialized());
    ASSIGN_OR_RETURN(mpi_comm, collectives::mpi::MpiCommunicator::create(options));
    MPI_Op_create(&half_sum, /*commute=*/1, &half_op);
  }
  Communicator& comm = gpu_comm ? *gpu_comm : *mpi_comm;
  const int p = comm.world_size();
  const bool rank0 = comm.rank() == 0;
  RETURN_IF_ERROR(check_ranks_share_flags(comm, device, {"output"}));
  const std::string report_path = user_path(absl::GetFlag(FLAGS_output));
  RETURN_IF_ERROR(check_report_path(comm, device, report_path, "output"));

  Report report;
  Json config = Json::object();
  config["max_size"] = absl::GetFlag(FLAGS_max_size);
  config["min_size"] = absl::GetFlag(FLAGS_min_size);
  config["repeats"] = o.repeats;
  config["warmup"] = o.warmup;
  config["dtypes"] = absl::GetFlag(FLAGS_dtypes);
  config["device"] = device.to_string();
  config["backend"] = comm.backend_name();
  config["world_size"] = p;
  report.set("config", config);
  report.set("environment", describe_environment(device).to_json());
  Json& results = report.extra("comm_bench")["results"];

  if (rank0) {
    std::printf("allreduce(sum), %d ranks, %s backend on %s; latency of the slowest rank per repeat\n", p,
                std::string(comm.backend_name()).c_str(), device.to_string().c_str());
    std::printf("%5s %10s %12s %11s %11s %10s %10s %11s %10s %7s\n", "dtype", "elements", "bytes", "median_us",
                "p95_us", "algbw_GB/s", "busbw_GB/s", "mpi_med_us", "mpi_busbw", "ratio");
  }
  for (const DType dtype : o.dtypes) {
    for (const int64_t n : o.sizes) {
      Tensor x = ones({n}, {dtype, device});
      MPI_Datatype mpi_type = dtype == DType::kF32 ? MPI_FLOAT : dtype == DType::kF64 ? MPI_DOUBLE : MPI_UINT16_T;
      MPI_Op mpi_op = dtype == DType::kF16 ? half_op : MPI_SUM;
      const bool baseline_ok =
          mpi_comm != nullptr && (dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16);
      // synchronize(): the host waits for the GPU too (on the CPU it is wait()).
      auto ours = [&]() -> absl::Status { return comm.allreduce(x, ReduceOp::kSum).synchronize(); };
      auto direct = [&]() -> absl::Status {
        return collectives::mpi::check(
            MPI_Allreduce(MPI_IN_PLACE, x.raw_data(), static_cast<int>(n), mpi_type, mpi_op, mpi_comm->mpi_comm()),
            "MPI_Allreduce");
      };
      for (int i = 0; i < o.warmup; ++i) {
        RETURN_IF_ERROR(ours());
        if (baseline_ok) RETURN_IF_ERROR(direct());
      }
      std::vector<double> t_ours;
      std::vector<double> t_mpi;
      // Each call starts from ones: summed in place again and again, f16
      // would reach inf after 16 calls on 2 ranks, and f32 after 128.
      auto refill = [&]() -> absl::Status { return capture([&] { fill_(x, 1); }); };
      for (int i = 0; i < o.repeats; ++i) {
        // Alternating keeps both under the same machine noise.
        RETURN_IF_ERROR(refill());
        RETURN_IF_ERROR(comm.barrier().synchronize());
        absl::Time start = absl::Now();
        RETURN_IF_ERROR(ours());
        t_ours.push_back(absl::ToDoubleSeconds(absl::Now() - start));
        if (baseline_ok) {
          RETURN_IF_ERROR(refill());
          RETURN_IF_ERROR(comm.barrier().synchronize());
          start = absl::Now();
          RETURN_IF_ERROR(direct());
          t_mpi.push_back(absl::ToDoubleSeconds(absl::Now() - start));
        }
      }
      ASSIGN_OR_RETURN(t_ours, slowest(comm, device, t_ours));
      const Stats s = stats_of(t_ours);
      const double bytes = static_cast<double>(n) * dtype_size(dtype);
      const double algbw = bytes / s.median_s / 1e9;
      Json row = Json::object();
      row["dtype"] = dtype_name(dtype);
      row["elements"] = n;
      row["bytes"] = static_cast<int64_t>(bytes);
      row["median_us"] = s.median_s * 1e6;
      row["p95_us"] = s.p95_s * 1e6;
      row["algbw_gbps"] = algbw;
      row["busbw_gbps"] = algbw * bus_factor(p);
      row["mean_us"] = s.mean_s * 1e6;
      row["mean_busbw_gbps"] = bytes / s.mean_s / 1e9 * bus_factor(p);
      std::string baseline_text = absl::StrFormat("%11s %10s %7s", "-", "-", "-");
      if (baseline_ok) {
        ASSIGN_OR_RETURN(t_mpi, slowest(comm, device, t_mpi));
        const Stats m = stats_of(t_mpi);
        const double mpi_busbw = bytes / m.median_s / 1e9 * bus_factor(p);
        row["mpi_median_us"] = m.median_s * 1e6;
        row["mpi_p95_us"] = m.p95_s * 1e6;
        row["mpi_mean_us"] = m.mean_s * 1e6;
        row["mpi_busbw_gbps"] = mpi_busbw;
        // Our bandwidth over MPI's: >= 1 means at least as fast.
        row["ratio"] = m.median_s / s.median_s;
        baseline_text = absl::StrFormat("%11.1f %10.3f %7.3f", m.median_s * 1e6, mpi_busbw, m.median_s / s.median_s);
      }
      results.push_back(row);
      if (rank0) {
        std::printf("%5s %10lld %12.0f %11.1f %11.1f %10.3f %10.3f %s\n", std::string(dtype_name(dtype)).c_str(),
                    static_cast<long long>(n), bytes, s.median_s * 1e6, s.p95_s * 1e6, algbw, algbw * bus_factor(p),
                    baseline_text.c_str());
        std::fflush(stdout);
      }
    }
  }
  if (half_op != MPI_OP_NULL) MPI_Op_free(&half_op);
  if (rank0) {
    RETURN_IF_ERROR(report.write(report_path));
    std::printf("report: %s\n", report_path.c_str());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ts::tasks::comm_bench

int main(int argc, char** argv) {
  ts::tasks::set_usage(
      "MLBench's allreduce benchmark: time and bandwidth of allreduce over message sizes, ours against "
      "MPI's (or NCCL's). Run it under tools/launch.");
  absl::ParseCommandLine(argc, argv);
  return ts::tasks::run_to_exit_code("comm_bench", ts::tasks::comm_bench::run);
}
