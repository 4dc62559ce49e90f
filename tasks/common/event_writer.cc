#include "tasks/common/event_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "tasks/common/event.pb.h"
#include "tasks/common/tfrecord.h"

namespace ts::tasks {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EventWriter>> EventWriter::create(const std::string& dir) {
  if (absl::Status s = make_dirs(dir); !s.ok()) return s;
  const double now = now_seconds();
  const std::string base =
      join_path(dir, absl::StrCat("events.out.tfevents.", static_cast<int64_t>(now), ".", hostname()));
  // O_EXCL: two writers started in the same second (a resumed run) must not
  // share a file.
  std::string path = base;
  int fd = -1;
  for (int n = 1; fd < 0; ++n) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) break;
    if (errno != EEXIST || n > 1000) {
      return absl::InternalError(absl::StrCat("cannot create event file ", path, ": ", std::strerror(errno)));
    }
    path = absl::StrCat(base, ".", n);
  }
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot open event file ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<EventWriter> writer(new EventWriter(file, path));
  tensorboard::Event event;
  event.set_wall_time(now);
  event.set_file_version("brain.Event:2");
  if (absl::Status s = writer->write_event(event.SerializeAsString()); !s.ok()) return s;
  if (absl::Status s = writer->flush(); !s.ok()) return s;
  return writer;
}

EventWriter::~EventWriter() { std::fclose(file_); }

absl::Status EventWriter::add_scalar(absl::string_view tag, double value, int64_t step) {
  return add_scalar(tag, value, step, now_seconds());
}

absl::Status EventWriter::add_scalar(absl::string_view tag, double value, int64_t step, double wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  auto* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(static_cast<float>(value));
  return write_event(event.SerializeAsString());
}

absl::Status EventWriter::add_session_start(int64_t step) {
  tensorboard::Event event;
  event.set_wall_time(now_seconds());
  event.set_step(step);
  event.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  return write_event(event.SerializeAsString());
}

absl::Status EventWriter::write_event(const std::string& serialized) {
  std::string record;
  append_tfrecord(serialized, record);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    return absl::InternalError(absl::StrCat("cannot write event file ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status EventWriter::flush() {
  if (std::fflush(file_) != 0) {
    return absl::InternalError(absl::StrCat("cannot flush event file ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ts::tasks
