// What --help shows for the binaries under tasks/: their usage line, then
// the flags defined under tasks/ (the shared task flags and the binary's
// own) and collectives/ (--collectives_timeout, --collectives_debug).
// absl's default lists only the flags of a source file named after the
// binary, which none of ours is, so --help said "No flags matched".
#pragma once

#include "absl/strings/string_view.h"

namespace ts::tasks {

// Call before absl::ParseCommandLine; the first call in a process counts.
void set_usage(absl::string_view message);

}  // namespace ts::tasks
