#!/usr/bin/env bash
# A rank that fails on its own ends the job at once with its error printed
# (tasks/common/exit_code.h), while the other rank waits for it in a
# collective: exit_code_mpi_probe under mpirun -np 2. Before, the failing
# rank printed after MPI_Finalize, a fence where it waited until the other
# rank's collective timed out (10 minutes by default), and mpirun then
# killed it before its line was written.
#   exit_code_mpi_test.sh PROBE
set -uo pipefail
probe=$1

export OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's session directory, one per run (see tests/collectives/mpi_test.sh).
TMPDIR=$(mktemp -d /tmp/ts_exit_code.XXXXXX)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

# Under the probe's 120 s collective timeout: reaching it means rank 1 waited.
limit=100
start=$SECONDS
out=$(timeout "$limit" mpirun --oversubscribe -np 2 "$probe" 2>&1)
rc=$?
echo "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
[ "$rc" -ne 0 ] || fail "mpirun exited 0 although rank 1 failed"
[ "$rc" -ne 124 ] || fail "the job was still running after ${limit}s: rank 1 waited for rank 0's collective timeout"
grep -qF "exit_code_probe: rank 1 stops on its own (the cause)" <<<"$out" || fail "rank 1's error was not printed"
echo "PASS: rank 1's error printed, job ended after $((SECONDS - start))s (mpirun exit code $rc)"
