// TensorBoard event files: `tensorboard --logdir <dir>` plots the scalars a
// task adds here (loss, metrics, learning rate, throughput).
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::tasks {

class EventWriter {
 public:
  // Creates dir (and parents) and a new file events.out.tfevents.<seconds>.<host>
  // in it (".N" appended if that name exists), whose first record is the
  // file_version "brain.Event:2" event.
  static absl::StatusOr<std::unique_ptr<EventWriter>> create(const std::string& dir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // One scalar at `step`, stamped with the current wall time (TensorBoard's
  // relative-time axis) or with `wall_time` seconds since the epoch.
  absl::Status add_scalar(absl::string_view tag, double value, int64_t step);
  absl::Status add_scalar(absl::string_view tag, double value, int64_t step, double wall_time);

  // A resumed run's session start at `step`, its first step: TensorBoard
  // then drops what earlier files hold at `step` and after (what the
  // stopped session wrote past its checkpoint), as PyTorch's
  // SummaryWriter(purge_step=step) has it do.
  absl::Status add_session_start(int64_t step);

  // Pushes buffered events to the OS (TensorBoard reads files as they grow).
  absl::Status flush();
  const std::string& path() const { return path_; }

 private:
  EventWriter(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  absl::Status write_event(const std::string& serialized);

  std::FILE* file_;
  std::string path_;
};

}  // namespace ts::tasks
