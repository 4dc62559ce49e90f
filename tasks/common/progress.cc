#include "tasks/common/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "absl/strings/str_format.h"

namespace ts::tasks {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
}

double eta_seconds(double elapsed_seconds, int64_t done, int64_t remaining) {
  if (done <= 0) return -1;
  return elapsed_seconds / static_cast<double>(done) * static_cast<double>(remaining);
}

std::string format_progress(const ProgressState& s) {
  return absl::StrFormat("epoch %d/%d  step %d/%d  loss %.4f  %.1f %s/s  ETA %s", s.epoch, s.epochs, s.step, s.steps,
                         s.loss, s.samples_per_second, s.unit, format_duration(s.eta_seconds));
}

namespace {

bool under_launcher() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

bool is_terminal(std::FILE* out) {
  if (out == nullptr || ::isatty(::fileno(out)) != 1) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return !under_launcher();
}

}  // namespace

ProgressLine ProgressLine::for_stream(std::FILE* out, double interval_seconds) {
  return ProgressLine(out, is_terminal(out), interval_seconds);
}

void ProgressLine::update(const ProgressState& state, double now_seconds) {
  if (!due(now_seconds)) return;
  shown_ = true;
  last_ = now_seconds;
  if (tty_) {
    // Carriage return, the line, then erase what a longer old line left.
    std::fprintf(out_, "\r%s\033[K", format_progress(state).c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", format_progress(state).c_str());
  }
  std::fflush(out_);
}

void ProgressLine::message(absl::string_view line) {
  if (out_ == nullptr) return;
  if (line_open_) {
    std::fputs("\r\033[K", out_);
    line_open_ = false;
  }
  std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
  std::fflush(out_);
}

void ProgressLine::finish() {
  if (out_ == nullptr) return;
  if (line_open_) {
    std::fputc('\n', out_);
    line_open_ = false;
  }
  std::fflush(out_);
}

}  // namespace ts::tasks
