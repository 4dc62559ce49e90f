#include "data/loader/io_mode.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace ts::data {

absl::StatusOr<int64_t> resident_set_bytes() {
  std::ifstream status("/proc/self/status");
  if (!status) return absl::UnavailableError("resident_set_bytes: cannot read /proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  }
  return absl::UnavailableError("resident_set_bytes: no VmRSS line in /proc/self/status");
}

absl::StatusOr<IoReport> run_io_only(DataLoader& loader, int64_t epochs, int64_t first_epoch) {
  IoReport report;
  ASSIGN_OR_RETURN(report.rss_start_bytes, resident_set_bytes());
  report.rss_peak_bytes = report.rss_start_bytes;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t e = first_epoch; e < first_epoch + epochs; ++e) {
    RETURN_IF_ERROR(loader.start_epoch(e));
    while (true) {
      ASSIGN_OR_RETURN(std::optional<Batch> batch, loader.next());
      if (!batch.has_value()) break;
      ++report.batches;
      report.samples += static_cast<int64_t>(batch->sample_indices.size());
      ASSIGN_OR_RETURN(const int64_t rss, resident_set_bytes());
      report.rss_peak_bytes = std::max(report.rss_peak_bytes, rss);
    }
    ++report.epochs;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.samples_per_second = report.seconds > 0 ? report.samples / report.seconds : 0;
  ASSIGN_OR_RETURN(report.rss_end_bytes, resident_set_bytes());
  return report;
}

std::string IoReport::to_string() const {
  constexpr double kMiB = 1 << 20;
  return absl::StrFormat(
      "%d epochs, %d batches, %d samples in %.3f s: %.0f samples/s; RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB",
      epochs, batches, samples, seconds, samples_per_second, rss_start_bytes / kMiB, rss_peak_bytes / kMiB,
      rss_end_bytes / kMiB);
}

}  // namespace ts::data
