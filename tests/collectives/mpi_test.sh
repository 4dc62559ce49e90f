#!/usr/bin/env bash
# Runs a gtest binary as N ranks under mpirun on this machine and passes when
# every expected rank reported success (see mpi_test_main.cc).
#   mpi_test.sh NP BINARY [EXPECTED_RANKS] [-- extra mpirun args]
# EXPECTED_RANKS defaults to all of 0..NP-1 ("0-2" for a test that kills the
# last of 4 ranks on purpose).
set -uo pipefail
np=$1 binary=$2
expected=${3:-0-$((np - 1))}
shift 3 2>/dev/null || shift $#
[ "${1:-}" = "--" ] && shift

# Shared memory only (no network in the sandbox), root allowed (containers),
# more ranks than cores.
export OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
status_dir=$(mktemp -d /tmp/ts_mpi_test.XXXXXX)
trap 'rm -rf "$status_dir"' EXIT
# Open MPI's session directory goes under TMPDIR, named by mpirun's pid; in
# Bazel's sandbox every test has the same pid, so each run gets a directory
# of its own (short: PMIx's socket paths must stay under 108 bytes).
export TMPDIR=$status_dir

# Local ranks inherit this environment (TS_TEST_SEED, TS_COLLECTIVES_*).
export TS_MPI_TEST_STATUS_DIR=$status_dir
mpirun --oversubscribe -np "$np" "$@" "$binary"
rc=$?
echo "mpirun exit code: $rc"

first=${expected%-*} last=${expected#*-}
failed=0
for ((r = first; r <= last; r++)); do
  if [ ! -f "$status_dir/rank$r" ]; then
    echo "FAIL: rank $r reported no result"
    failed=1
  elif [ "$(cat "$status_dir/rank$r")" != 0 ]; then
    echo "FAIL: rank $r's tests failed"
    failed=1
  fi
done
# Without ranks killed on purpose, mpirun itself must succeed too.
if [ "$expected" = "0-$((np - 1))" ] && [ "$rc" -ne 0 ]; then failed=1; fi
[ "$failed" = 0 ] && echo "PASS: ranks $expected"
exit "$failed"
