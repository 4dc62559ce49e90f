// The progress line: epoch, step/steps, loss, samples/s and ETA. On a terminal
// it redraws in place; otherwise (logs, pipes) it prints whole lines at a
// fixed interval so logs stay readable.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"

namespace ts::tasks {

struct ProgressState {
  int epoch = 0;  // 1-based
  int epochs = 0;
  int64_t step = 0;  // steps done in this epoch
  int64_t steps = 0;
  double loss = 0;
  double samples_per_second = 0;
  std::string unit = "samples";  // what samples_per_second counts
  double eta_seconds = -1;       // < 0: unknown
};

// "epoch 2/10  step 120/390  loss 1.2346  1234.5 samples/s  ETA 0:12:34"
std::string format_progress(const ProgressState& state);
// "1:02:03", "0:00:07"; "?" for negative or non-finite seconds.
std::string format_duration(double seconds);
// Remaining time from the pace so far: elapsed / done * remaining; -1 when
// nothing is done yet.
double eta_seconds(double elapsed_seconds, int64_t done, int64_t remaining);

class ProgressLine {
 public:
  // `tty`: redraw in place (at most 10 times a second); otherwise print a
  // line when `interval_seconds` passed since the last one.
  ProgressLine(std::FILE* out, bool tty, double interval_seconds)
      : out_(out), tty_(tty), interval_(tty ? 0.1 : interval_seconds) {}
  // tty when `out` is a terminal a person watches: isatty(out), TERM is not
  // "dumb", and the process is not a rank under a launcher (mpirun gives each
  // rank a pseudo-terminal of its own and copies it to wherever its own
  // output goes, a log file as often as not). A null `out` prints nothing.
  static ProgressLine for_stream(std::FILE* out, double interval_seconds);

  // Whether an update at `now_seconds` would print (callers skip gathering
  // the state when it would not).
  bool due(double now_seconds) const { return out_ != nullptr && (!shown_ || now_seconds - last_ >= interval_); }
  // `now_seconds`: any monotonic clock. The first update always shows.
  void update(const ProgressState& state, double now_seconds);
  // A whole line (an epoch summary) that does not garble the redrawn one.
  void message(absl::string_view line);
  // Ends the redrawn line on a terminal.
  void finish();

 private:
  std::FILE* out_;
  bool tty_;
  double interval_;
  bool shown_ = false;
  bool line_open_ = false;  // a redrawn line without its newline yet
  double last_ = 0;
};

}  // namespace ts::tasks
