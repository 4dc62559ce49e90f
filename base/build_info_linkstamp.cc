// Compiled by Bazel at link time (cc_library linkstamp) with the workspace
// status as macros: real values under --stamp, "0"/"redacted" without it.
// Only this file and the final link redo when they change.
extern "C" const char ts_build_scm_revision[] = BUILD_SCM_REVISION;
extern "C" const char ts_build_scm_status[] = BUILD_SCM_STATUS;
