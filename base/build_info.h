// The commit a task binary was built from, embedded at link time so reports
// stay traceable on machines without the source tree.
#pragma once

#include <string>

namespace ts {

// "<sha>" or "<sha>-dirty" for a binary built with `bazel build --stamp` (and
// .bazelrc's --workspace_status_command=tools/workspace_status.sh); otherwise
// "unstamped".
std::string build_commit();

}  // namespace ts
