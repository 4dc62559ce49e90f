#include "base/build_info.h"

#include <string_view>

// Defined by build_info_linkstamp.cc, which Bazel compiles once per linked
// binary with the workspace status values as macros.
extern "C" const char ts_build_scm_revision[];
extern "C" const char ts_build_scm_status[];

namespace ts {

std::string build_commit() {
  const std::string_view status = ts_build_scm_status;
  const std::string_view revision = ts_build_scm_revision;
  // Unstamped builds see the redacted header ("redacted") or, with stamping
  // on but no status command, an empty status and revision "0".
  if (status == "redacted" || status.empty() || revision == "0") return "unstamped";
  return std::string(revision) + (status == "clean" ? "" : "-" + std::string(status));
}

}  // namespace ts
