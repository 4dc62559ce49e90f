#!/usr/bin/env bash
# Bazel's workspace status command (.bazelrc: build --workspace_status_command).
# Bazel hands BUILD_SCM_REVISION and BUILD_SCM_STATUS to C++ linkstamps
# (//tasks/common:build_info) in binaries built with --stamp. They are volatile
# keys: a new commit alone relinks nothing; a binary picks up the current
# commit whenever it is relinked because its inputs changed, so the commit it
# reports always describes its code. Read-only git calls; --no-optional-locks
# keeps `git status` off the index lock.
cd "$(dirname "$0")/.." || exit 0
echo "BUILD_SCM_REVISION $(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  echo "BUILD_SCM_STATUS dirty"
else
  echo "BUILD_SCM_STATUS clean"
fi
