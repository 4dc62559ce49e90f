// The IO-only mode (SC21's "benchy IO" figure): iterate a loader for whole
// epochs with no model, and report samples/s and the process's resident
// memory over the run (which the loader's bounded queue keeps flat).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "data/loader/loader.h"

namespace ts::data {

struct IoReport {
  int64_t epochs = 0;
  int64_t batches = 0;
  int64_t samples = 0;
  double seconds = 0;
  double samples_per_second = 0;
  int64_t rss_start_bytes = 0;  // before the first epoch
  int64_t rss_peak_bytes = 0;   // largest sampled after any batch
  int64_t rss_end_bytes = 0;
  std::string to_string() const;
};

// Runs epochs [first_epoch, first_epoch + epochs) to the end, sampling the
// resident memory after every batch. A batch's error ends the run with it.
absl::StatusOr<IoReport> run_io_only(DataLoader& loader, int64_t epochs, int64_t first_epoch = 0);

// VmRSS of this process, from /proc/self/status.
absl::StatusOr<int64_t> resident_set_bytes();

}  // namespace ts::data
